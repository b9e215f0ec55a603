// colliders: every collider shape in one scene. A sheet falls inside a room (a box kept from the
// inside) onto a ball, a rail (capsule), a crate (a box kept from the outside) and a torus given as
// a signed distance field, all above a floor. Prints each collider's contacts as the sheet settles.
// Writes colliders.svg: the scene seen from the front (x right, y down) at the end. The +y axis
// points down, as in the pictures this library draws.
#include <cmath>
#include <cstdio>
#include <string>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::Simulation<float> sim;
    // A 30 x 30 sheet, flat at height y = 0, spacing 0.25: 7.25 units on a side, a little wider than
    // the room, whose walls fold its edges in on the first frame.
    constexpr int n = 30;
    constexpr float spacing = 0.25f;
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            sim.add_particle({-3.6f + c * spacing, 0.0f, -3.6f + r * spacing});
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
        {
            const std::size_t i = std::size_t(r * n + c);
            if (c + 1 < n)
                sim.connect(i, i + 1, spacing, 60.0f);
            if (r + 1 < n)
                sim.connect(i, i + n, spacing, 60.0f);
        }

    const sv::ContactMaterial<float> cloth_on_wood{.friction = 0.6f, .margin = 0.02f};
    auto world = sv::add_colliders(sim, {.relaxations = 2});
    auto& floor = world.add(sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -4}, cloth_on_wood));
    auto& room = world.add(sv::BoxCollider<float>({.min = {-3.5f, -2, -3.5f}, .max = {3.5f, 5, 3.5f}}, cloth_on_wood));
    auto& ball = world.add(sv::SphereCollider<float>({.center = {-1.5f, 2.5f, 0}, .radius = 1.2f}, cloth_on_wood));
    auto& rail = world.add(
        sv::CapsuleCollider<float>({.a = {0.5f, 2, -3}, .b = {0.5f, 2, 3}, .radius = 0.25f}, cloth_on_wood));
    auto& crate = world.add(
        sv::BoxCollider<float>({.min = {1.5f, 3, -1}, .max = {3, 4, 1}, .inside = false}, cloth_on_wood));
    // A torus lying on the floor around the ball: major radius 2.2, minor 0.3.
    auto& torus = world.add(sv::SdfCollider<float>({.field =
                                                        [](const Vec3& p) {
                                                            const float q = std::hypot(p.x() + 1.5f, p.z()) - 2.2f;
                                                            return std::hypot(q, p.y() - 3.7f) - 0.3f;
                                                        }},
                                                   cloth_on_wood));

    const sv::StepParams<float> params{.gravity = {0, 4, 0}, .iterations = 16};
    std::printf("frame  floor  room  ball  rail  crate  torus   lowest y\n");
    for (int frame = 1; frame <= 480; ++frame)
    {
        sim.step(params);
        if (frame != 1 && frame % 60 != 0)
            continue;
        float lowest = -1e9f;
        for (float y : sim.state().y())
            lowest = std::max(lowest, y);
        std::printf("%5d  %5d  %4d  %4d  %4d  %5d  %5d   %.3f\n", frame, floor.contacts(), room.contacts(),
                    ball.contacts(), rail.contacts(), crate.contacts(), torus.contacts(), lowest);
    }
    sv::svg::Figure figure({.columns = 1, .cell_width = 520});
    figure
        .add_panel("every collider at once, after 8 s: floor, room, ball, rail, crate\n(the torus is an SDF: it has no "
                   "outline)")
        .add(sv::debug_lines(sim))
        .add(sv::outline(world));
    figure.set_window({-4.5, -2.5, 9, 7});
    figure.save(out + "/colliders.svg");
    std::printf("diverged: %s\n", sim.diverged() ? "yes" : "no");
    return sim.diverged() ? 1 : 0;
}
