// rope_bridge: a rope slung between two posts carries a cloth banner tied to it at every other
// column of the banner's top edge (an edge particle has one free slot, which is what a tie
// spends). The bridge settles; then a knife stroke cuts the rope near the left post and the banner
// swings down on what is left. Prints the sag and what the cut did; writes rope_bridge.svg.
#include <cstdio>
#include <string>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::Simulation<float> sim;
    // 45 nodes of 0.2 between posts 8 apart: 8.8 units of rope for 8 of span, so it sags.
    auto rope = sv::add_strand(sim, {.count = 45,
                                     .spacing = 0.2f,
                                     .stiffness = 150.0f,
                                     .bend_stiffness = 0.2f,
                                     .position = [](int n) { return Vec3(8.0f * n / 44.0f, 0.0f, 0.0f); },
                                     .pinned = [](int n) { return n == 0 || n == 44; }});
    // A 13 x 6 banner hanging just below the middle of the rope.
    auto banner = sv::add_cloth(sim, {.width = 13, .height = 6, .spacing = 0.4f, .position = [](int c, int r) {
                                          return Vec3(1.6f + 0.4f * c, 0.3f + 0.4f * r, 0.0f);
                                      }});
    int ties = 0;
    for (int c = 0; c < 13; c += 2)
    {
        const Vec3 top = banner.position(c, 0);
        int nearest = 0;
        for (int n = 1; n < 45; ++n)
            if ((rope.position(n) - top).norm() < (rope.position(nearest) - top).norm())
                nearest = n;
        rope.attach_to(banner.index(c, 0), nearest);
        ++ties;
    }
    const sv::StepParams<float> params{.gravity = {0, 4, 0}, .iterations = 16};
    for (int frame = 0; frame < 300; ++frame)
        sim.step(params);

    sv::svg::Figure figure({.columns = 2, .cell_width = 420, .title = "A rope bridge carrying a banner"});
    char caption[128];
    std::snprintf(caption, sizeof caption, "settled: rope sags %.2f, banner on %d ties, peak strain %.0f %%",
                  double(rope.position(22).y()), ties, 100 * sv::peak_strain(sim));
    figure.add_panel(caption).add(sv::debug_lines(sim));
    std::printf("%s\n", caption);

    // A short vertical stroke through the rope near the left post.
    const float x = 0.5f * (rope.position(4).x() + rope.position(5).x());
    const std::size_t cuts = sv::cut(sim, Vec3(x, -5, 0), Vec3(x, 5, 0));
    for (int frame = 0; frame < 45; ++frame)
        sim.step(params);
    std::snprintf(caption, sizeof caption, "0.75 s after a cut through %zu spring%s near the left post", cuts,
                  cuts == 1 ? "" : "s");
    figure.add_panel(caption).add(sv::debug_lines(sim, {.velocity_scale = 3}));
    std::printf("%s; banner corner now at (%.2f, %.2f)\n", caption, double(banner.position(0, 5).x()),
                double(banner.position(0, 5).y()));
    figure.set_window({-1, -1.5, 10, 9});
    figure.save(out + "/rope_bridge.svg");
    return sim.diverged() ? 1 : 0;
}
