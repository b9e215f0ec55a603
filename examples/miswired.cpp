// miswired: the debug view draws what the solver holds. One interior particle of the guide's sheet
// has its downward slot re-pointed at a particle most of a sheet away, rest length measured from
// the layout so it starts satisfied and never announces itself. cloth.lines() draws the grid as
// built and hides the bug; debug_lines draws the constraint set, where it is the long diagonal.
// Writes miswired.svg.
#include <cstdio>
#include <string>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::Simulation<float> good_sim, bad_sim;
    const auto pins = [](int c, int r) { return r == 0 && c % 4 == 0; };
    auto good = sv::add_cloth(good_sim, {.curvature_strength = 0.0f, .pinned = pins});
    auto bad = sv::add_cloth(bad_sim, {.curvature_strength = 0.0f, .pinned = pins});

    // The bug: (4, 7)'s downward slot now points at (16, 2).
    const std::size_t from = bad.index(4, 7), to = bad.index(16, 2);
    const float rest = (bad_sim.state().position(from) - bad_sim.state().position(to)).norm();
    bad_sim.constraints().set_slot(from, sv::kClothDown, std::int32_t(to), rest, 60.0f);

    for (int frame = 0; frame < 200; ++frame)
    {
        good.step({.gravity = {0, 2, 0}, .iterations = 16});
        bad.step({.gravity = {0, 2, 0}, .iterations = 16});
    }
    const auto view_good = sv::debug_lines(good_sim);
    const auto view_bad = sv::debug_lines(bad_sim);
    char apart[160];
    std::snprintf(apart, sizeof apart,
                  "cloth.lines() - one slot mis-wired\nfurthest particle from the correct sheet: %.3g",
                  sv::furthest_apart(good_sim, bad_sim));
    sv::svg::Figure figure({.columns = 2});
    figure.add_panel("cloth.lines() - correctly wired\nthe grid, row by row and column by column")
        .add_polylines(good.lines(), sv::svg::palette::grid);
    figure.add_panel(apart).add_polylines(bad.lines(), sv::svg::palette::grid);
    figure
        .add_panel("debug_lines() - correctly wired\n" + std::to_string(view_good.count(sv::SegmentKind::spring)) +
                   " springs, one segment each; pins in red")
        .add(view_good);
    figure
        .add_panel("debug_lines() - one slot mis-wired\n" + std::to_string(view_bad.count(sv::SegmentKind::spring)) +
                   " springs + " + std::to_string(view_bad.count(sv::SegmentKind::one_way)) +
                   " one-way: the long diagonal")
        .add(view_bad);
    figure.save(out + "/miswired.svg");
    std::printf("%s\ncorrect sheet: %zu springs; mis-wired: %zu springs and %zu one-way constraints\n", apart,
                view_good.count(sv::SegmentKind::spring), view_bad.count(sv::SegmentKind::spring),
                view_bad.count(sv::SegmentKind::one_way));
    return 0;
}
