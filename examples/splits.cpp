// splits: stiffness x iterations is one knob. The guide's sheet stepped 200 frames four times over,
// with the product 960 split as 60 x 16, 120 x 8, 240 x 4 and 960 x 1; each caption gives how far
// its furthest particle is from the 960 x 1 sheet. Writes splits.svg.
#include <cstdio>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    struct Split
    {
        float stiffness;
        int iterations;
    };
    const std::vector<Split> splits = {{60, 16}, {120, 8}, {240, 4}, {960, 1}};
    std::vector<sv::Simulation<float>> sheets(splits.size());
    for (std::size_t n = 0; n < splits.size(); ++n)
        sv::add_cloth(sheets[n], {.stiffness = splits[n].stiffness,
                                  .curvature_strength = 0.0f, // springs only: nothing else in the picture
                                  .pinned = [](int c, int r) { return r == 0 && c % 4 == 0; }});
    for (int frame = 0; frame < 200; ++frame)
        for (std::size_t n = 0; n < splits.size(); ++n)
            sheets[n].step({.gravity = {0, 2, 0}, .iterations = splits[n].iterations});

    sv::svg::Figure figure({.columns = 2, .title = "Four splits of stiffness x iterations = 960, after 200 frames"});
    char gap[160];
    for (std::size_t n = 0; n < splits.size(); ++n)
    {
        const double apart = sv::furthest_apart(sheets[n], sheets.back());
        if (n + 1 == splits.size())
            std::snprintf(gap, sizeof gap, "the reference");
        else
            std::snprintf(gap, sizeof gap, "furthest particle from the 960 x 1 sheet: %.3g world units", apart);
        figure
            .add_panel("stiffness " + std::to_string(int(splits[n].stiffness)) + " x " +
                       std::to_string(splits[n].iterations) + " iterations\n" + gap)
            .add(sv::debug_lines(sheets[n]));
        std::printf("%4d x %-2d  %s\n", int(splits[n].stiffness), splits[n].iterations, gap);
    }
    figure.save(out + "/splits.svg");
    return 0;
}
