// Strand: chain wiring, ties to other particles, the bending projection's ladder and its stability.
#include <cstdio>

#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// A 50-node rope (9.8 units) between two anchors 2 apart, laid out as a zigzag at rest length and
/// dropped onto a floor with friction 0.3, so most of it heaps there. Returns its mean kink angle
/// over frames 800..900, averaged over six drops (two zigzag phases, three heights): one heap is
/// chaotic enough that a single drop can rank two close bend stiffnesses either way.
double heaped_kink(float bend)
{
    double mean = 0;
    for (int drop = 0; drop < 6; ++drop)
    {
        Simulation<float> sim;
        add_colliders(sim, {}, PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -1}, {.friction = 0.3f}));
        const float dx = 2.0f / 49.0f;
        const float zig = 0.5f * std::sqrt(0.2f * 0.2f - dx * dx);
        const float height = -0.25f * float(drop / 2);
        auto rope = add_strand(
            sim, {.count = 50,
                  .spacing = 0.2f,
                  .bend_stiffness = bend,
                  .position = [&](int n) { return Vec3<float>(dx * float(n), height, (n + drop) % 2 ? zig : -zig); },
                  .pinned = [](int n) { return n == 0 || n == 49; }});
        for (int frame = 0; frame < 900; ++frame)
        {
            sim.step({.gravity = {0, 9.81f, 0}, .iterations = 16});
            if (frame >= 800)
                mean += rope.mean_kink_degrees() / 600.0;
        }
        REQUIRE_FALSE(sim.diverged());
    }
    return mean;
}
} // namespace

TEST_CASE("a strand chains slot 0 forward and slot 1 back and leaves 2 and 3 free", "[strand]")
{
    Simulation<float> sim;
    sim.add_particle({0, 0, 0});
    auto rope = add_strand(sim, {.count = 5, .spacing = 0.25f});
    REQUIRE(rope.base() == 1);
    const auto& k = sim.constraints();
    for (int n = 0; n < 5; ++n)
    {
        const std::size_t i = rope.node(n);
        CHECK(k.live(i, 0) == (n < 4));
        CHECK(k.live(i, 1) == (n > 0));
        if (n < 4)
            CHECK(k.neighbour(i, 0) == std::int32_t(i + 1));
        if (n > 0)
            CHECK(k.neighbour(i, 1) == std::int32_t(i - 1));
        for (int slot : {0, 1})
            if (k.live(i, slot))
            {
                CHECK(k.rest_length(i, slot) == 0.25f); // the spacing
                CHECK(k.stiffness(i, slot) == 60.0f);   // the default
            }
        CHECK(k.neighbour(i, 2) == -1);
        CHECK(k.neighbour(i, 3) == -1);
        CHECK(rope.position(n) == Vec3<float>(0.25f * float(n), 0, 0));
    }
    CHECK(rope.mean_kink_degrees() == 0.0);
    const auto lines = rope.lines();
    REQUIRE(lines.size() == 5);
    for (int n = 0; n < 5; ++n)
        CHECK(lines[std::size_t(n)] == rope.position(n));
    CHECK_FALSE(sim.position_projections().contains(rope.name() + ".bend")); // limp: nothing registered
}

TEST_CASE("bending: every increase of bend_stiffness lowers the kink, 1.0 below a third of limp", "[strand]")
{
    std::vector<double> kinks;
    for (float bend : {0.0f, 0.25f, 0.5f, 0.75f, 1.0f})
        kinks.push_back(heaped_kink(bend));
    for (std::size_t n = 1; n < kinks.size(); ++n)
        CHECK(kinks[n] < kinks[n - 1]);
    CHECK(kinks[4] < kinks[0] / 3);
}

TEST_CASE("bend 1.0 stays finite on a 20-node cantilever", "[strand]")
{
    Simulation<float> sim;
    auto rope = add_strand(sim, {.count = 20, .bend_stiffness = 1.0f, .pinned = [](int n) { return n < 2; }});
    for (int frame = 0; frame < 600; ++frame)
        sim.step({.gravity = {0, 9.81f, 0}, .iterations = 16});
    CHECK_FALSE(sim.diverged());
    CHECK(rope.position(19).allFinite());
    CHECK(rope.position(19).y() > 3.0f); // hanging down from the pinned base, as a rope does
}

TEST_CASE("the bending projection moves x and px together, so it adds no velocity", "[strand]")
{
    Simulation<double> sim;
    auto rope = add_strand(sim, {.count = 7, .bend_stiffness = 1.0, .position = [](int n) {
                                     return Vec3<double>(0.2 * n, n % 2 ? 0.1 : 0.0, 0);
                                 }});
    std::vector<Vec3<double>> before;
    for (int n = 0; n < 7; ++n)
        before.push_back(sim.state().velocity(rope.node(n)));
    const double kinked = rope.mean_kink_degrees();
    CHECK(kinked == Approx(53.13).epsilon(1e-3));
    detail::project_bend(sim.state(), rope.base(), rope.count(), kMaxBendCorrection);
    for (int n = 0; n < 7; ++n)
        CHECK((sim.state().velocity(rope.node(n)) - before[std::size_t(n)]).norm() < 1e-15);
    // One full-strength pass takes most of the kink out: 53.1 -> 6.9 degrees.
    CHECK(rope.mean_kink_degrees() < kinked / 6);
}

TEST_CASE("a rope tied to a cloth corner pulls the corner", "[strand]")
{
    const auto corner_after = [](bool tied) {
        Simulation<float> sim;
        auto cloth = add_cloth(sim, {.width = 8, .height = 6, .pinned = [](int c, int r) { return r == 0 && c < 2; }});
        // The explicit return type matters: without it the lambda would return an Eigen expression
        // that refers to temporaries gone by the time std::function converts it.
        auto rope = add_strand(sim, {.count = 10, .position = [&](int n) -> Vec3<float> {
                                         return cloth.position(7, 5) + Vec3<float>(0.2f * float(n + 1), 0, 0);
                                     }});
        rope.pin(9);
        if (tied)
        {
            const float rest = rope.attach_to(cloth.index(7, 5), 0);
            CHECK(rest == Approx(0.2f));
            rope.teleport(9, rope.position(9) + Vec3<float>(3, 0, 0)); // haul on the rope
        }
        for (int frame = 0; frame < 200; ++frame)
            sim.step({.gravity = {0, 2, 0}, .iterations = 16});
        return cloth.position(7, 5);
    };
    const Vec3<float> free = corner_after(false);
    const Vec3<float> pulled = corner_after(true);
    CHECK(pulled.x() > free.x() + 4.0f); // hauled 3 units on a 2-unit rope: the corner follows (5.1 measured)
}

TEST_CASE("tying to a cloth's interior throws, names the particle and changes nothing", "[strand][errors]")
{
    Simulation<float> sim;
    auto cloth = add_cloth(sim, {.width = 5, .height = 5});
    auto rope = add_strand(sim, {.count = 4});
    const auto constraints_before = sim.constraints();
    const std::size_t interior = cloth.index(2, 2);
    try
    {
        rope.attach_to(interior, 3);
        FAIL("attach_to should have thrown");
    }
    catch (const std::logic_error& e)
    {
        const std::string what = e.what();
        CHECK(what.find("particle " + std::to_string(interior)) != std::string::npos);
        CHECK(what.find("no free slot") != std::string::npos);
    }
    CHECK(sim.constraints() == constraints_before);
    // An edge has one free slot, a corner two.
    rope.attach_to(cloth.index(2, 0), 3);
    CHECK_THROWS_AS(rope.attach_to(cloth.index(2, 0), 0), std::logic_error);
    rope.attach_to(cloth.index(0, 0), 0);
    auto second = add_strand(sim, {.count = 2});
    second.attach_to(cloth.index(0, 0), 0);
    CHECK_THROWS_AS(second.attach_to(cloth.index(0, 0), 1), std::logic_error);
    CHECK_THROWS_AS(rope.attach_to(rope.node(1), 0), std::invalid_argument); // itself
    CHECK_THROWS_AS(rope.attach_to(9999, 0), std::out_of_range);
    CHECK_THROWS_AS(rope.attach_to(cloth.index(4, 4), 7), std::out_of_range); // no node 7
}

TEST_CASE("removing a strand clears its slots and bending and keeps its particles", "[strand]")
{
    Simulation<float> sim;
    auto rope = add_strand(sim, {.count = 6, .bend_stiffness = 0.5f});
    auto other = add_strand(sim, {.count = 3});
    other.attach_to(rope.node(5), 0);
    CHECK(sim.position_projections().contains(rope.name() + ".bend"));
    rope.remove();
    CHECK(sim.size() == 9);
    for (int n = 0; n < 6; ++n)
        CHECK(sim.constraints().live_count(rope.node(n)) == 0);
    CHECK_FALSE(sim.position_projections().contains(rope.name() + ".bend"));
    CHECK(sim.constraints().live_count(other.node(0)) == 2); // keeps its half of the tie
}

TEST_CASE("bend_stiffness is live and refuses values outside [0, 1]", "[strand][errors]")
{
    // Three ropes laid out kinked: one made limp and stiffened later, one made stiff, one limp.
    const auto kinked = [](int n) { return Vec3<float>(0.2f * float(n), n % 2 ? 0.1f : 0.0f, 0); };
    const StrandOptions<float> limp{.count = 6, .position = kinked, .pinned = [](int n) { return n == 0; }};
    StrandOptions<float> stiff = limp;
    stiff.bend_stiffness = 0.3f;
    Simulation<float> sim, made_stiff, limp_sim;
    auto rope = add_strand(sim, limp);
    add_strand(made_stiff, stiff);
    add_strand(limp_sim, limp);
    rope.set_bend_stiffness(0.3f);
    CHECK(sim.position_projections().contains(rope.name() + ".bend"));
    CHECK_THROWS_WITH(rope.set_bend_stiffness(1.5f), ContainsSubstring("1.5"));
    CHECK(rope.bend_stiffness() == 0.3f);
    const auto step_all = [&] {
        for (auto* s : {&sim, &made_stiff, &limp_sim})
            for (int frame = 0; frame < 30; ++frame)
                s->step({.gravity = {0, 2, 0}, .iterations = 8});
    };
    // Stiffened later steps bit for bit like stiff from the start, and not like limp.
    step_all();
    CHECK(same_positions(sim, made_stiff));
    CHECK_FALSE(same_positions(sim, limp_sim));
    // Back to 0 it steps bit for bit like a limp rope from the same state.
    rope.set_bend_stiffness(0.0f);
    CHECK_FALSE(sim.position_projections().contains(rope.name() + ".bend"));
    restore(limp_sim, snapshot(sim));
    restore(made_stiff, snapshot(sim));
    step_all();
    CHECK(same_positions(sim, limp_sim));
    CHECK_FALSE(same_positions(sim, made_stiff));
    const auto size = sim.size();
    CHECK_THROWS_WITH(add_strand(sim, {.count = 1}), ContainsSubstring("got 1"));
    CHECK_THROWS_WITH(add_strand(sim, {.bend_stiffness = -0.1f}), ContainsSubstring("-0.1"));
    CHECK(sim.size() == size);
}
