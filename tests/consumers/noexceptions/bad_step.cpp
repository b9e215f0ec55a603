// Built with -fno-exceptions -fno-rtti: a full world (cloth, every collider kind and its outline,
// a rope, tearing, wind, a snapshot round trip) steps, then a step with dt = -1 must report the
// library's message through the default log hook (stderr) and abort. Reaching the end means the
// error went unnoticed.
#include <cstdio>
#include <sstream>

#include <simdverlet/simdverlet.hpp>

static_assert(SIMDVERLET_EXCEPTIONS == 0, "this program checks the build without exceptions");

int main()
{
    namespace sv = simdverlet;
    sv::Simulation<float> sim;
    auto cloth = sv::add_cloth(sim, {.pinned = [](int, int r) { return r == 0; }});
    auto world = sv::add_colliders(sim, {}, sv::SphereCollider<float>({.center = {5, 6, 0}, .radius = 1}),
                                   sv::PlaneCollider<float>({.offset = -9}));
    world.add(sv::CapsuleCollider<float>({.a = {0, 8, 0}, .b = {2, 8, 0}, .radius = 0.5f}));
    world.add(sv::BoxCollider<float>({.min = {-20, -20, -20}, .max = {20, 20, 20}}));
    world.add(sv::SdfCollider<float>({.field = [](const sv::Vec3<float>& p) { return p.norm() + 30.0f; }}));
    auto rope = sv::add_strand(sim, {.count = 5});
    sv::add_tearing(sim, {});
    sv::add_wind(sim, {.velocity = {1, 0, 0}, .cloths = {cloth}});
    for (int frame = 0; frame < 10; ++frame)
        sim.step({.gravity = {0, 2, 0}});
    const auto picture = sv::debug_lines(sim) += sv::outline(world);
    std::stringstream bytes;
    sv::save(sim, bytes);
    sv::load(sim, bytes);
    std::printf("bad_step: %zu segments, %zu outlines, %d rope nodes\n", picture.segments.size(),
                picture.outlines.size(), rope.count());
    sim.step({.dt = -1.0f});
    std::printf("bad_step: the step returned\n");
    return 0;
}
