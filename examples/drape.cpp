// drape: a cloth hung by two corners settles over a sphere, and a rope tied to one of its free
// corners pulls that corner down past the ball. Prints, every 60 frames, how many particles touch
// the sphere, where the tied corner is and how far the rope's tie is stretched.
// Writes drape.svg, the scene from the front at the end. The +y axis points down, as in the
// pictures this library draws.
#include <cstdio>
#include <string>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::Simulation<float> sim;
    // 24 x 16 cloth lying flat at y = 0, hung by the two corners of its first row.
    auto cloth = sv::add_cloth(sim, {.width = 24,
                                     .height = 16,
                                     .spacing = 0.25f,
                                     .pinned = [](int c, int r) { return r == 0 && (c == 0 || c == 23); },
                                     .position = [](int c, int r) { return Vec3(0.25f * c, 0.0f, 0.25f * r); }});
    auto world = sv::add_colliders(
        sim, {}, sv::SphereCollider<float>({.center = {2.9f, 2.2f, 2.2f}, .radius = 1.5f}, {.friction = 0.6f}));

    // A 15-node rope hanging from the free corner (23, 15), tied with an ordinary spring, weighted
    // at its end by a node three times heavier than the others.
    const Vec3 corner = cloth.position(23, 15);
    auto rope = sv::add_strand(sim,
                               {.count = 15, .spacing = 0.2f, .bend_stiffness = 0.3f, .position = [&](int n) -> Vec3 {
                                    return corner + Vec3(0, 0.2f * (n + 1), 0);
                                }});
    const float rest = rope.attach_to(cloth.index(23, 15), 0);
    sim.state().set_inverse_mass(rope.node(14), 1.0f / 3.0f);

    const sv::StepParams<float> params{.gravity = {0, 4.0f, 0}, .iterations = 16};
    std::printf("frame  on sphere  tied corner (x, y, z)        tie stretch\n");
    for (int frame = 1; frame <= 480; ++frame)
    {
        cloth.step(params); // steps the whole simulation: cloth, rope and sphere together
        if (frame % 60 != 0)
            continue;
        const Vec3 c = cloth.position(23, 15);
        const float tie = (rope.position(0) - c).norm();
        std::printf("%5d  %9d  (%6.3f, %6.3f, %6.3f)   %6.2f %%\n", frame, world.contacts(), c.x(), c.y(), c.z(),
                    100.0f * (tie - rest) / rest);
    }
    char caption[128];
    std::snprintf(
        caption, sizeof caption,
        "hung by two corners, draped on a ball, a weighted rope tied to a corner\n%d particles on the ball after 8 s",
        world.contacts());
    sv::svg::Figure figure({.columns = 1, .cell_width = 480});
    figure.add_panel(caption).add(sv::debug_lines(sim)).add(sv::outline(world));
    figure.save(out + "/drape.svg");
    std::printf("rope mean kink %.1f degrees; diverged: %s\n", rope.mean_kink_degrees(), sim.diverged() ? "yes" : "no");
    return sim.diverged() ? 1 : 0;
}
