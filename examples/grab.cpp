// grab: two copies of a hanging sheet have their bottom-centre particle carried 4 units to the
// right over 30 steps (the orange line is the hand's path). One is teleported each step; the other
// is held by grab_nearest, a PID controller that pulls through the solve. Each caption gives the
// peak strain of its sheet during the carry. Writes grab.svg.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::Simulation<float> a, b;
    const auto pins = [](int c, int r) { return r == 0 && c % 4 == 0; };
    auto snapped = sv::add_cloth(a, {.height = 12, .pinned = pins});
    auto followed = sv::add_cloth(b, {.height = 12, .pinned = pins});
    const sv::StepParams<float> params{.gravity = {0, 2, 0}, .iterations = 16};
    for (int frame = 0; frame < 120; ++frame)
    {
        snapped.step(params);
        followed.step(params);
    }
    const Vec3 start = followed.position(10, 11);
    followed.grab_nearest(start);
    std::vector<Vec3> hand;
    double teleported = 0, grabbed = 0;
    for (int k = 1; k <= 30; ++k)
    {
        const Vec3 target = start + Vec3(4.0f * k / 30.0f, 0, 0);
        hand.push_back(target);
        snapped.teleport(10, 11, target);
        followed.move_grabbed(target);
        snapped.step(params);
        followed.step(params);
        teleported = std::max(teleported, sv::peak_strain(a));
        grabbed = std::max(grabbed, sv::peak_strain(b));
    }
    char first[128], second[128];
    std::snprintf(first, sizeof first, "teleport: the corner is moved out of the sheet\npeak strain %.0f %%",
                  100 * teleported);
    std::snprintf(second, sizeof second, "grab_nearest: a PID controller pulls through the solve\npeak strain %.0f %%",
                  100 * grabbed);
    sv::svg::Figure figure({.columns = 2, .cell_width = 480});
    figure.add_panel(first)
        .add_polylines(snapped.lines(), sv::svg::palette::grid)
        .add_polyline(hand, sv::svg::palette::hand);
    figure.add_panel(second)
        .add_polylines(followed.lines(), sv::svg::palette::grid)
        .add_polyline(hand, sv::svg::palette::hand);
    figure.save(out + "/grab.svg");
    std::printf("peak strain while carried: teleported %.1f %%, grabbed %.1f %%\n", 100 * teleported, 100 * grabbed);
    return 0;
}
