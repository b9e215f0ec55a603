// Tearing and cutting: springs cleared past a strain, pairs together, along the line the load
// draws; and a knife stroke that splits a sheet in two.
#include <cstdio>

#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
struct Tear
{
    std::size_t i;
    int slot;
    std::size_t j;
};

/// The guide's sheet, free of curvature, its two top corner blocks (2 x 2) pinned and carried
/// apart 0.01 per frame each, with a notch cut in the middle of its top edge.
struct PulledSheet
{
    Simulation<float> sim;
    Cloth<float> cloth;
    Tearing<float> tearing;
    std::vector<Tear> tears;

    explicit PulledSheet(std::size_t max_per_frame = std::numeric_limits<std::size_t>::max())
        : cloth(add_cloth(sim, {.curvature_strength = 0.0f,
                                .pinned = [](int c, int r) { return (c <= 1 || c >= 18) && r <= 1; }})),
          tearing(add_tearing(sim, {.max_strain = 0.6f,
                                    .max_tears_per_frame = max_per_frame,
                                    .on_tear = [this](std::size_t i, int s, std::size_t j) { tears.push_back({i, s, j}); }}))
    {
    }

    void pull(int frames)
    {
        for (int f = 0; f < frames; ++f)
        {
            for (int c : {0, 1, 18, 19})
                for (int r : {0, 1})
                    cloth.teleport(c, r, cloth.position(c, r) + Vec3<float>(c < 10 ? -0.01f : 0.01f, 0, 0));
            sim.step(guide_step<float>(16));
        }
    }
};
} // namespace

TEST_CASE("a sheet pulled apart at two corners tears along a line, pairs together", "[tearing]")
{
    PulledSheet sheet;
    const std::size_t segments_before = debug_lines(sheet.sim).segments.size();
    const std::size_t notch = cut(sheet.sim, Vec3<float>(4.75f, -0.1f, 0), Vec3<float>(4.75f, 0.7f, 0));
    CHECK(notch == 2); // the horizontal springs of rows 0 and 1 between columns 9 and 10
    sheet.pull(400);
    std::printf("pulled sheet: %zu tears, %zu components\n", std::size_t(sheet.tearing.torn()),
                connected_components(sheet.sim));
    // The rip runs from the notch straight down between columns 9 and 10, one row per tear.
    REQUIRE(sheet.tears.size() == 8);
    for (std::size_t n = 0; n < sheet.tears.size(); ++n)
    {
        const Tear& t = sheet.tears[n];
        CHECK(t.i == sheet.cloth.index(9, int(n) + 2));
        CHECK(t.j == sheet.cloth.index(10, int(n) + 2));
        CHECK(t.slot == kClothRight);
    }
    CHECK(connected_components(sheet.sim) == 2);
    // Every tear is one segment fewer in the debug view, and no half of a pair is left behind.
    CHECK(sheet.tearing.torn() == 8);
    CHECK(segments_before - debug_lines(sheet.sim).segments.size() == sheet.tearing.torn() + notch);
    CHECK(all_pairs_whole(sheet.sim));
}

TEST_CASE("max_tears_per_frame makes the rip grow over frames", "[tearing]")
{
    PulledSheet sheet(1);
    cut(sheet.sim, Vec3<float>(4.75f, -0.1f, 0), Vec3<float>(4.75f, 0.7f, 0));
    std::size_t most_in_one_frame = 0;
    for (int f = 0; f < 400; ++f)
    {
        sheet.pull(1);
        most_in_one_frame = std::max(most_in_one_frame, sheet.tearing.torn_last_frame());
    }
    CHECK(most_in_one_frame == 1);
    CHECK(sheet.tearing.torn() >= 8);
    CHECK(all_pairs_whole(sheet.sim));
}

TEST_CASE("with a high max_strain the guide's sheet never tears in 600 frames", "[tearing]")
{
    auto sim = guide_sheet<float>(60.0f);
    auto tearing = add_tearing(sim, {.max_strain = 1.0f});
    const std::size_t segments = debug_lines(sim).segments.size();
    double peak = 0;
    for (int frame = 0; frame < 600; ++frame)
    {
        sim.step(guide_step<float>(16));
        peak = std::max(peak, peak_strain(sim));
    }
    CHECK(peak > 0.1); // loaded, just not past the limit
    CHECK(tearing.torn() == 0);
    CHECK(debug_lines(sim).segments.size() == segments);
}

TEST_CASE("a rope tied to a cloth corner and loaded tears at the knot first", "[tearing]")
{
    Simulation<float> sim;
    auto cloth = add_cloth(sim, {.width = 10, .height = 6, .pinned = [](int, int r) { return r == 0; }});
    const Vec3<float> corner = cloth.position(9, 5);
    auto rope = add_strand(sim, {.count = 12, .spacing = 0.25f, .position = [&](int n) -> Vec3<float> {
                                     return corner + Vec3<float>(0, 0.25f * float(n + 1), 0);
                                 }});
    rope.attach_to(cloth.index(9, 5), 0);
    std::vector<Tear> tears;
    add_tearing(sim, {.max_strain = 0.5f,
                      .on_tear = [&](std::size_t i, int s, std::size_t j) { tears.push_back({i, s, j}); }});
    int frame = 0;
    for (; frame < 2000 && tears.empty(); ++frame)
    {
        // The load grows: the rope's last node gets heavier every frame.
        sim.state().set_inverse_mass(rope.node(11), 1.0f / (1.0f + 0.2f * float(frame)));
        sim.step({.gravity = {0, 2, 0}, .iterations = 16});
    }
    REQUIRE_FALSE(tears.empty());
    const std::pair<std::size_t, std::size_t> knot = std::minmax(cloth.index(9, 5), rope.node(0));
    const std::pair<std::size_t, std::size_t> first = std::minmax(tears[0].i, tears[0].j);
    CHECK(first == knot);
    CHECK(sim.constraints().live_count(cloth.index(9, 5)) == 2); // back to a corner's two springs
}

TEST_CASE("a cut across the middle splits a sheet into two pieces", "[tearing]")
{
    Simulation<float> sim, uncut;
    auto cloth = add_cloth(sim, {.pinned = [](int c, int r) { return r == 0 && c % 4 == 0; }});
    auto whole = add_cloth(uncut, {.pinned = [](int c, int r) { return r == 0 && c % 4 == 0; }});
    const std::size_t before = debug_lines(sim).segments.size();
    // A horizontal stroke between rows 4 and 5 (y 2.0 and 2.5), wider than the sheet.
    const std::size_t cuts = cut(sim, Vec3<float>(-1, 2.25f, 0), Vec3<float>(11, 2.25f, 0));
    CHECK(cuts == 20); // one vertical spring per column
    CHECK(debug_lines(sim).segments.size() == before - cuts);
    CHECK(connected_components(sim) == 2);
    CHECK(all_pairs_whole(sim));
    for (int frame = 0; frame < 120; ++frame)
    {
        sim.step(guide_step<float>(16));
        uncut.step(guide_step<float>(16));
    }
    CHECK(cloth.position(10, 9).y() > whole.position(10, 9).y() + 1.0f); // the lower half fell away
    // A stroke drawn in another view plane sees other crossings: in x-z this sheet is a line.
    CHECK(cut(sim, Vec3<float>(4.9f, 0, -1), Vec3<float>(4.9f, 0, 1), ViewPlane::xz) > 0);
}

TEST_CASE("bad tearing and cut input throws and changes nothing", "[tearing][errors]")
{
    auto sim = guide_sheet<float>(60.0f);
    const auto constraints = sim.constraints();
    CHECK_THROWS_WITH(add_tearing(sim, {.max_strain = -0.5f}), ContainsSubstring("-0.5"));
    CHECK_THROWS_WITH(add_tearing(sim, {.max_strain = 0.0f}), ContainsSubstring("max_strain"));
    CHECK(sim.constraint_edits().empty());
    CHECK_THROWS_WITH(cut(sim, Vec3<float>(1, 2, 0), Vec3<float>(1, 2, 5)), ContainsSubstring("zero length"));
    CHECK_THROWS_AS(cut(sim, Vec3<float>(NAN, 2, 0), Vec3<float>(1, 2, 0)), std::invalid_argument);
    CHECK(sim.constraints() == constraints);
    auto tearing = add_tearing(sim, {});
    CHECK_THROWS_AS(tearing.set_max_strain(NAN), std::invalid_argument);
    CHECK(tearing.max_strain() == 1.0f);
    CHECK(tearing.remove());
    CHECK_FALSE(tearing.remove());
}
