// hello_cloth: the guide's sheet, 20 x 10 particles at spacing 0.5, dropped flat onto a ball that
// sits on a floor. Every 50 frames it prints how far the sheet has sagged and the worst strain any
// spring holds; at the end it writes hello_cloth.svg (three moments of the fall, seen from the
// side, x right and y down) into the folder given as its argument, or the current one.
#include <cstdio>
#include <string>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";

    sv::Simulation<float> sim;
    auto sheet = sv::add_cloth(sim, {.width = 20,
                                     .height = 10,
                                     .spacing = 0.5f,
                                     .stiffness = 60.0f, // x 16 iterations: the guide's product of 960
                                     .position = [](int c, int r) { return Vec3(0.5f * c, 0.0f, 0.5f * r); }});
    auto world = sv::add_colliders(
        sim, {.relaxations = 2},
        sv::SphereCollider<float>({.center = {4.75f, 2.6f, 2.25f}, .radius = 1.6f},
                                  {.friction = 0.6f, .margin = 0.05f}),
        sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -4.2f}, {.friction = 0.6f}));

    sv::svg::Figure figure(
        {.columns = 3, .cell_width = 330, .title = "hello_cloth: the guide's sheet dropped on a ball"});
    const auto snapshot = [&](int frame) {
        figure.add_panel("frame " + std::to_string(frame) + ", " + std::to_string(world.contacts()) + " contacts")
            .add(sv::debug_lines(sim))
            .add(sv::outline(world));
    };

    const sv::StepParams<float> params{.gravity = {0.0f, 2.0f, 0.0f}, .iterations = 16}; // +y is down
    std::printf("frame   sag (lowest particle below its start)   peak strain   contacts\n");
    snapshot(0);
    for (int frame = 1; frame <= 400; ++frame)
    {
        sheet.step(params);
        if (frame == 90)
            snapshot(frame);
        if (frame % 50 != 0)
            continue;
        float lowest = 0;
        for (float y : sim.state().y())
            lowest = std::max(lowest, y);
        std::printf("%5d   %8.4f world units                      %6.2f %%     %4d\n", frame, lowest,
                    100.0 * sv::peak_strain(sim), world.contacts());
    }
    snapshot(400);
    figure.save(out + "/hello_cloth.svg");
    std::printf("diverged: %s; wrote %s/hello_cloth.svg\n", sim.diverged() ? "yes" : "no", out.c_str());
    return sim.diverged() ? 1 : 0;
}
