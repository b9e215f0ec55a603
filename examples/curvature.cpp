// curvature: the pull of each interior particle toward the mean of its four neighbours, at four
// strengths on the guide's sheet (stiffness 60 x 16): off, 0.05, the default 20 (stiffness / 3)
// and 100, each captioned with how far it moved from the sheet with none. Writes curvature.svg.
#include <cstdio>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    const std::vector<float> strengths = {0.0f, 0.05f, 20.0f, 100.0f};
    std::vector<sv::Simulation<float>> sheets(strengths.size());
    for (std::size_t n = 0; n < strengths.size(); ++n)
        sv::add_cloth(sheets[n], {.stiffness = 60.0f, .curvature_strength = strengths[n], .pinned = [](int c, int r) {
                                      return r == 0 && c % 4 == 0;
                                  }});
    for (int frame = 0; frame < 300; ++frame)
        for (auto& sheet : sheets)
            sheet.step({.gravity = {0, 2, 0}, .iterations = 16});
    sv::svg::Figure figure({.columns = 2, .title = "Curvature strength on the guide's sheet, after 300 frames"});
    for (std::size_t n = 0; n < strengths.size(); ++n)
    {
        char head[64], caption[160];
        if (n == 0)
            std::snprintf(head, sizeof head, "curvature off");
        else
            std::snprintf(head, sizeof head, "curvature_strength = %g", double(strengths[n]));
        std::snprintf(caption, sizeof caption, "%s\nfurthest particle from the sheet with none: %.3g world units", head,
                      sv::furthest_apart(sheets[n], sheets[0]));
        figure.add_panel(caption).add(sv::debug_lines(sheets[n]));
        std::printf("%s\n", caption);
    }
    figure.save(out + "/curvature.svg");
    return 0;
}
