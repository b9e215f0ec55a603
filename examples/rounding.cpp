// rounding: where floating point catches up with the one-knob equivalence. Splits of 960 for 400
// frames, with the gap to the 960 x 1 sheet measured every frame and plotted on a log scale
// (floored at 1e-12 so bit-identical frames stay on the axis): 60 x 16, whose power-of-two count
// scales the force sum exactly, and three counts that are not powers of two. Writes rounding.svg.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    const std::vector<std::pair<float, int>> splits = {{60, 16}, {320, 3}, {192, 5}, {64, 15}, {960, 1}};
    std::vector<sv::Simulation<float>> sheets(splits.size());
    for (std::size_t n = 0; n < splits.size(); ++n)
        sv::add_cloth(sheets[n], {.stiffness = splits[n].first, .curvature_strength = 0.0f, .pinned = [](int c, int r) {
                                      return r == 0 && c % 4 == 0;
                                  }});
    std::vector<sv::svg::Series> traces;
    for (std::size_t n = 0; n + 1 < splits.size(); ++n)
        traces.push_back(
            {std::to_string(int(splits[n].first)) + " x " + std::to_string(splits[n].second) + " vs 960 x 1", {}});
    for (int frame = 0; frame < 400; ++frame)
    {
        for (std::size_t n = 0; n < splits.size(); ++n)
            sheets[n].step({.gravity = {0, 2, 0}, .iterations = splits[n].second});
        for (std::size_t n = 0; n + 1 < splits.size(); ++n)
            traces[n].values.push_back(std::max(sv::furthest_apart(sheets[n], sheets.back()), 1e-12));
    }
    for (const auto& t : traces)
        std::printf("%-18s gap at frame 1: %.3g, 100: %.3g, 400: %.3g world units\n", t.label.c_str(), t.values[0],
                    t.values[99], t.values[399]);
    sv::svg::save(out + "/rounding.svg",
                  sv::svg::plot(traces, {.title = "Same product, different rounding: gap to the 960 x 1 sheet",
                                         .y_title = "furthest particle, world units (log)",
                                         .log_y = true}));
    return 0;
}
