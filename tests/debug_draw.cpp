// Debug geometry: the dedup rule that keeps a one-way constraint visible, ranges, whiskers and
// collider outlines.
#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

TEST_CASE("a symmetric pair is drawn once and a one-way constraint by its owner", "[debug_draw]")
{
    Simulation<float> sim;
    for (int i = 0; i < 4; ++i)
        sim.add_particle({float(i), 0, 0});
    auto& k = sim.constraints();
    k.connect_within_layer(0, 1, 1.0f, 1.0f); // a pair: one segment
    k.set_slot(3, 0, 2, 1.0f, 1.0f);          // one-way 3 -> 2, owner above its neighbour: still drawn
    k.set_slot(1, 3, 2, 1.0f, 0.0f);          // not live: nothing
    const auto g = debug_lines(sim);
    CHECK(g.count(SegmentKind::spring) == 1);
    CHECK(g.count(SegmentKind::one_way) == 1);
    CHECK(g.segments.size() == 2);
    CHECK(g.dots.size() == 4);
    // Deduplicating on j < i alone would have dropped 3 -> 2; here it is drawn by 3.
    bool found = false;
    for (const auto& s : g.segments)
        found = found || (s.kind == SegmentKind::one_way && s.a == sim.state().position(3));
    CHECK(found);
}

TEST_CASE("a mis-wired slot shows as one extra segment that lines() does not draw", "[debug_draw]")
{
    Simulation<float> good_sim, bad_sim;
    const auto pins = [](int c, int r) { return r == 0 && c % 4 == 0; };
    auto good = add_cloth(good_sim, {.pinned = pins});
    auto bad = add_cloth(bad_sim, {.pinned = pins});
    const std::size_t from = bad.index(4, 7), to = bad.index(16, 2);
    bad_sim.constraints().set_slot(from, kClothDown, std::int32_t(to), 5.0f, 60.0f);
    const auto view_good = debug_lines(good_sim);
    const auto view_bad = debug_lines(bad_sim);
    CHECK(view_good.segments.size() == 370); // 19 x 10 + 20 x 9 springs
    CHECK(view_good.count(SegmentKind::one_way) == 0);
    // (4, 7) -> (16, 2) is one-way, and so is (4, 8) -> (4, 7), whose twin was the re-pointed slot:
    // one pair became two one-way constraints, one segment more than before.
    CHECK(view_bad.segments.size() == view_good.segments.size() + 1);
    CHECK(view_bad.count(SegmentKind::one_way) == 2);
    CHECK(bad.lines() == good.lines()); // the grid drawing cannot see it
    CHECK(count_segments(bad_sim) == view_bad.segments.size());
}

TEST_CASE("the debug view follows a particle range, pinned flags and velocity whiskers", "[debug_draw]")
{
    Simulation<float> sim;
    auto first = add_cloth(sim, {.width = 4, .height = 3, .pinned = [](int c, int r) { return r == 0 && c == 0; }});
    auto second = add_cloth(sim, {.width = 3, .height = 3});
    sim.state().set_velocity(second.index(1, 1), {0.1f, 0, 0});
    const auto only_second = debug_lines(sim, {.particles = second.range(), .velocity_scale = 10});
    CHECK(only_second.dots.size() == 9);
    CHECK(only_second.count(SegmentKind::spring) == 12);
    CHECK(only_second.count(SegmentKind::one_way) == 0);
    CHECK(only_second.count(SegmentKind::velocity) == 9);
    // One whisker per particle: the moving one 10 x its frame's travel (0.1, 0, 0) long, from
    // where it is; the resting ones of zero length.
    int moving = 0;
    for (const auto& s : only_second.segments)
    {
        if (s.kind != SegmentKind::velocity)
            continue;
        if (s.a == second.position(1, 1))
        {
            ++moving;
            CHECK((s.b - s.a - Vec3<float>(1, 0, 0)).norm() < 1e-5f);
        }
        else
            CHECK(s.b == s.a);
    }
    CHECK(moving == 1);
    CHECK(only_second.dots.front().position == second.position(0, 0));
    CHECK(only_second.dots.back().position == second.position(2, 2));
    const auto only_first = debug_lines(sim, {.particles = first.range()});
    CHECK(only_first.dots.size() == 12);
    CHECK(only_first.count(SegmentKind::spring) == 17);  // 3 x 3 + 4 x 2
    CHECK(only_first.count(SegmentKind::velocity) == 0); // whiskers only when asked for
    int pinned = 0;
    for (const auto& d : only_first.dots)
        pinned += d.pinned ? 1 : 0;
    CHECK(pinned == 1);
    CHECK(only_first.dots.front().pinned); // and it is (0, 0)
    CHECK(debug_lines(sim, {.dots = false}).dots.empty());
    CHECK_THROWS_AS(debug_lines(sim, {.particles = {.begin = 5, .end = 2}}), std::invalid_argument);
}

TEST_CASE("collider outlines: a plane's cross, circles, a capsule's sides, a box's rectangle", "[debug_draw]")
{
    // A plane: two 40-long lines through n x offset, perpendicular, both in the plane.
    for (const Vec3<float>& normal : {Vec3<float>(0, -1, 0), Vec3<float>(1, 1, 0).normalized()})
    {
        const PlaneCollider<float> collider({.normal = normal, .offset = -3});
        const auto plane = outline(collider);
        REQUIRE(plane.outlines.size() == 2);
        const Vec3<float> n = collider.normal();
        for (const auto& line : plane.outlines)
        {
            REQUIRE(line.size() == 2);
            CHECK((line[1] - line[0]).norm() == Approx(40.0f));
            CHECK(((line[0] + line[1]) * 0.5f - n * -3.0f).norm() < 1e-5f);
            for (const auto& p : line)
                CHECK(n.dot(p) == Approx(-3.0f));
        }
        const Vec3<float> first = plane.outlines[0][1] - plane.outlines[0][0];
        const Vec3<float> second = plane.outlines[1][1] - plane.outlines[1][0];
        CHECK(std::abs(first.dot(second)) < 1e-3f);
    }
    // A sphere: its great circle in the x-y plane, closed.
    const auto sphere = outline(SphereCollider<float>({.center = {1, 2, 0.5f}, .radius = 2}));
    REQUIRE(sphere.outlines.size() == 1);
    REQUIRE(sphere.outlines[0].size() == 65);
    CHECK((sphere.outlines[0].front() - sphere.outlines[0].back()).norm() < 1e-5f);
    for (const auto& p : sphere.outlines[0])
    {
        CHECK((p - Vec3<float>(1, 2, 0.5f)).norm() == Approx(2.0f));
        CHECK(p.z() == 0.5f);
    }
    // A capsule along x from 0 to 3, radius 1: a circle at each end and the sides y = +-1.
    const auto capsule = outline(CapsuleCollider<float>({.a = {0, 0, 0}, .b = {3, 0, 0}, .radius = 1}));
    REQUIRE(capsule.outlines.size() == 4);
    for (const auto& p : capsule.outlines[0])
        CHECK(p.norm() == Approx(1.0f));
    for (const auto& p : capsule.outlines[1])
        CHECK((p - Vec3<float>(3, 0, 0)).norm() == Approx(1.0f));
    std::vector<float> side_y;
    for (std::size_t k : {std::size_t(2), std::size_t(3)})
    {
        REQUIRE(capsule.outlines[k].size() == 2);
        CHECK(capsule.outlines[k][0].x() == 0.0f);
        CHECK(capsule.outlines[k][1].x() == 3.0f);
        CHECK(capsule.outlines[k][0].y() == capsule.outlines[k][1].y());
        side_y.push_back(capsule.outlines[k][0].y());
    }
    CHECK(std::max(side_y[0], side_y[1]) == Approx(1.0f));
    CHECK(std::min(side_y[0], side_y[1]) == Approx(-1.0f));
    // A box: its x-y rectangle at min z, closed.
    const auto box = outline(BoxCollider<float>({.min = {0, 0, 0.25f}, .max = {2, 1, 1}}));
    REQUIRE(box.outlines.size() == 1);
    const std::vector<Vec3<float>> rectangle = {
        {0, 0, 0.25f}, {2, 0, 0.25f}, {2, 1, 0.25f}, {0, 1, 0.25f}, {0, 0, 0.25f}};
    CHECK(box.outlines[0] == rectangle);
    CHECK(outline(SdfCollider<float>({.field = [](const Vec3<float>& p) { return p.norm() - 1; }})).outlines.empty());
    SphereCollider<float> hidden({});
    hidden.enabled = false;
    CHECK(outline(hidden).outlines.empty());
}

TEST_CASE("the debug view and peak_strain read every constraint layer", "[debug_draw][layers]")
{
    Simulation<float> net;
    const std::size_t springs = testing::add_net(net, 80, 9);
    REQUIRE(net.constraint_layers().count() >= 3);
    std::size_t drawn = 0;
    for (const auto& segment : debug_lines(net).segments)
        drawn += segment.kind == SegmentKind::spring ? 1 : 0;
    CHECK(drawn == springs);
    CHECK(testing::count_segments(net) == springs);
    // Stretch one spring that lives past layer 0 by 30 %: the peak strain is that spring's.
    std::size_t owner = 0;
    SlotRef where{};
    for (std::size_t i = 0; i < net.size() && where.layer == 0; ++i)
        net.constraint_layers().for_each_wired(i, [&](SlotRef at, std::int32_t, float, float) {
            if (at.layer >= 2 && where.layer == 0)
            {
                owner = i;
                where = at;
            }
        });
    REQUIRE(where.layer >= 2);
    const auto& layer = net.constraint_layers()[where.layer];
    const auto j = std::size_t(layer.neighbour(owner, where.slot));
    const Vec3<float> from = net.state().position(j), to = net.state().position(owner);
    net.state().set_position(owner, from + (to - from) * 1.3f);
    // Its other springs change length too; the peak is at least the stretched one's 30 %.
    CHECK(peak_strain(net) >= 0.3 - 1e-4);
    CHECK(peak_strain(net, {owner, owner + 1}) >= 0.3 - 1e-4);
}
