// The column limit: each column of a cloth solved as one chain, every spring held at its length
// clamped to the bounds.
#include <simdverlet/simdverlet.hpp>

#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

#include "catch.hpp"
#include "same_bits.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// The worst strain |length - rest| / rest of a column spring of `cloth`.
template <class T>
double worst_column_strain(const Simulation<T>& sim, const Cloth<T>& cloth)
{
    double worst = 0;
    for (int r = 1; r < cloth.height(); ++r)
        for (int c = 0; c < cloth.width(); ++c)
        {
            const double length = (cloth.position(c, r) - cloth.position(c, r - 1)).template cast<double>().norm();
            const double rest = double(sim.constraints().rest_length(cloth.index(c, r - 1), kClothDown));
            worst = std::max(worst, std::abs(length - rest) / rest);
        }
    return worst;
}

/// A soft 32 x 32 sheet at spacing 0.1 laid out horizontally, pinned along its row 0 and let go
/// to swing down under g = 9.81: one iteration, stiffness 2000, one substep at 60 Hz, tethers.
/// The fall whips the free edge and stretches the columns far past any bound.
template <class T>
struct SwingingSheet
{
    static constexpr int kSide = 32;
    Simulation<T> sim;
    Cloth<T> cloth;

    SwingingSheet()
        : cloth(add_cloth(sim, {.width = kSide,
                                .height = kSide,
                                .spacing = T(0.1),
                                .stiffness = T(2000),
                                .curvature_strength = T(0),
                                .pinned = [](int, int r) { return r == 0; },
                                .position = [](int c, int r) { return Vec3<T>(T(0.1) * T(c), T(0), T(0.1) * T(r)); }}))
    {
        add_tethers(sim, cloth, TetherOptions<T>{});
    }

    static StepParams<T> step() { return {.dt = T(1) / T(60), .gravity = {T(0), T(9.81), T(0)}, .iterations = 1}; }

    /// Steps `frames` frames; returns the worst column strain after any of them.
    double swing(int frames)
    {
        double worst = 0;
        for (int frame = 0; frame < frames; ++frame)
        {
            sim.step(step());
            worst = std::max(worst, worst_column_strain(sim, cloth));
        }
        return worst;
    }
};

/// A `width` x 20 strip hanging straight down (+y) from its pinned top row, each column spring at
/// `factor` times its rest length 0.1, at rest, no gravity, nearly no stiffness: one step moves
/// nothing but what the column limit moves.
Simulation<float> straight_strip(float factor, std::optional<Cloth<float>>& strip, int width = 2)
{
    Simulation<float> sim;
    strip = add_cloth(
        sim,
        {.width = width,
         .height = 20,
         .spacing = 0.1f,
         .stiffness = 1e-6f,
         .curvature_strength = 0.0f,
         .pinned = [](int, int r) { return r == 0; },
         .position = [factor](int c, int r) { return Vec3<float>(0.1f * float(c), 0.1f * factor * float(r), 0.0f); }});
    return sim;
}
} // namespace

TEST_CASE("one solve puts every spring of a straight column exactly on its bound, stretched or compressed",
          "[column_limit]")
{
    // The physical truth: a straight chain's linearised system is exact (every spring moves along
    // its own direction), so one solve leaves each spring at (1 + max_stretch) or
    // (1 - max_compression) times its rest length, to rounding.
    for (const float factor : {1.2f, 0.9f})
    {
        std::optional<Cloth<float>> strip;
        auto sim = straight_strip(factor, strip);
        const auto limit = add_column_limit(sim, *strip,
                                            ColumnLimitOptions<float>{.max_stretch = 0.01f, .max_compression = 0.02f});
        sim.step({.dt = 1.0f / 60.0f, .damping = 1.0f, .iterations = 1});
        const float expected = factor > 1 ? 1.01f : 0.98f;
        INFO("springs at " << factor << " x rest");
        CHECK(limit.limited() == 2 * 19);
        for (int c = 0; c < 2; ++c)
            for (int r = 1; r < 20; ++r)
            {
                const float length = (strip->position(c, r) - strip->position(c, r - 1)).norm();
                CHECK(std::abs(length / 0.1f - expected) < 2e-5f);
                CHECK(strip->position(c, r).x() == 0.1f * float(c)); // moved along the column only
            }
        CHECK(strip->position(1, 0) == Vec3<float>(0.1f, 0.0f, 0.0f)); // pinned: never moved
    }
    // Within its bounds a column is held where it is: no spring past a bound, not a bit moved.
    std::optional<Cloth<float>> strip;
    auto sim = straight_strip(1.005f, strip);
    const State3<float> before = sim.state();
    const auto limit = add_column_limit(sim, *strip, ColumnLimitOptions<float>{});
    sim.step({.dt = 1.0f / 60.0f, .damping = 1.0f, .iterations = 1});
    CHECK(limit.limited() == 0);
    for (std::size_t i = 0; i < sim.size(); ++i)
        CHECK(sim.state().position(i) == before.position(i));
}

TEST_CASE("a column parts where its spring is torn or rewired away from the cell below, on every path",
          "[column_limit]")
{
    // Column 3's spring between rows 9 and 10 is rewired to the diagonal neighbour (4, 10), and
    // column 6's is torn: both columns part there, their lower pieces no longer pulled up, while
    // every other column lands on its bound. 32 columns fill whole batches, so the vector path
    // reads the rewired slot among live ones; the scalar path must agree bit for bit.
    const auto run = [](bool vectorized) {
        std::optional<Cloth<float>> strip;
        auto sim = straight_strip(1.2f, strip, 32);
        sim.set_vectorized(vectorized);
        sim.constraints().set_slot(strip->index(3, 9), kClothDown, std::int32_t(strip->index(4, 10)), 0.1f, 1e-6f);
        sim.constraints().set_stiffness(strip->index(6, 9), kClothDown, 0.0f);
        add_column_limit(sim, *strip, ColumnLimitOptions<float>{});
        sim.step({.dt = 1.0f / 60.0f, .damping = 1.0f, .iterations = 1});
        return std::pair{std::move(sim), *strip};
    };
    const auto vector = run(true), scalar = run(false);
    CHECK(same_positions(vector.first, scalar.first));
    const auto& strip = vector.second;
    const auto spring = [&](int c, int r) { return (strip.position(c, r) - strip.position(c, r - 1)).norm() / 0.1f; };
    for (int c = 0; c < 32; ++c)
    {
        INFO("column " << c);
        if (c == 3 || c == 6)
            CHECK(spring(c, 10) > 1.1f); // parted: the gap is left as it was, or wider
        else
            CHECK(std::abs(spring(c, 10) - 1.01f) < 2e-5f);
        CHECK(std::abs(spring(c, 5) - 1.01f) < 2e-5f);  // above the break: held
        CHECK(std::abs(spring(c, 15) - 1.01f) < 2e-5f); // below it too, as its own chain
    }
}

TEST_CASE("a soft sheet swinging down from horizontal keeps its column springs within the bound, and with tethers "
          "alone they stretch tens of percent",
          "[column_limit]")
{
    SwingingSheet<float> tethered;
    const double free_peak = tethered.swing(120);

    SwingingSheet<float> limited;
    const auto limit = add_column_limit(
        limited.sim, limited.cloth,
        ColumnLimitOptions<float>{.max_stretch = 0.01f, .max_compression = 0.01f, .solves = 2});
    const Vec3<float> pin = limited.cloth.position(5, 0);
    const double held_peak = limited.swing(120);
    SwingingSheet<float> one_solve;
    add_column_limit(one_solve.sim, one_solve.cloth, ColumnLimitOptions<float>{.solves = 1});
    const double one_solve_peak = one_solve.swing(120);
    std::printf("swinging 32 x 32 sheet, worst column strain over 2 s: tethers alone %.4f, with the column limit "
                "(1 %%) %.4f at 2 solves a step, %.4f at 1\n",
                free_peak, held_peak, one_solve_peak);
    CHECK(free_peak > 0.3);
    CHECK(held_peak < 0.011); // the bound, and under a tenth of it in linearisation error
    CHECK(held_peak < one_solve_peak);
    CHECK(one_solve_peak < 0.1);
    CHECK(limit.solves() == 2);
    CHECK(limited.cloth.position(5, 0) == pin);
    // It swung: the free edge is far below the pinned one after a second.
    CHECK(limited.cloth.position(16, SwingingSheet<float>::kSide - 1).y() > 2.0f);
}

TEST_CASE("a cut across a sheet under a column limit lets the lower half fall", "[column_limit]")
{
    // The sheet laid out hanging (row r at y = 0.1 r), tethered and column-limited: it settles
    // within the bound, and then a cut between rows 15 and 16 parts every column.
    Simulation<float> sim;
    const auto sheet = add_cloth(sim, {.width = 32,
                                       .height = 32,
                                       .spacing = 0.1f,
                                       .stiffness = 2000.0f,
                                       .curvature_strength = 0.0f,
                                       .pinned = [](int, int r) { return r == 0; }});
    add_tethers(sim, sheet, TetherOptions<float>{});
    add_column_limit(sim, sheet, ColumnLimitOptions<float>{});
    const StepParams<float> step{.dt = 1.0f / 60.0f, .gravity = {0, 9.81f, 0}, .iterations = 1};
    for (int frame = 0; frame < 60; ++frame)
        sim.step(step);
    CHECK(worst_column_strain(sim, sheet) < 0.0101);
    const float y = 0.5f * (sheet.position(16, 15).y() + sheet.position(16, 16).y());
    CHECK(cut(sim, Vec3<float>(-1, y, 0), Vec3<float>(4, y, 0)) == std::size_t(32));
    const float upper = sheet.position(16, 15).y(), lower = sheet.position(16, 16).y();
    for (int frame = 0; frame < 30; ++frame)
        sim.step(step);
    // Half a second of free fall at g = 9.81 drops the lower half about 1.2 units (the default
    // damping takes a little); the upper half hangs where it was.
    CHECK(sheet.position(16, 16).y() - lower > 1.0f);
    CHECK(std::abs(sheet.position(16, 15).y() - upper) < 0.01f);
}

TEMPLATE_TEST_CASE("a column limit gives the same bits vector or scalar, and for any executor and grain",
                   "[column_limit][parallel]", float, double)
{
    REQUIRE(simd::kLanes<TestType> > 1);
    const auto run = [](auto configure) {
        SwingingSheet<TestType> scene;
        // 32 columns: two batches of float lanes, four of double; an odd width would add a scalar
        // tail, which the 33-wide check below covers.
        const auto limit = add_column_limit(scene.sim, scene.cloth, ColumnLimitOptions<TestType>{.solves = 2});
        configure(scene.sim);
        int limited = 0;
        for (int frame = 0; frame < 40; ++frame)
        {
            scene.sim.step(SwingingSheet<TestType>::step());
            limited += limit.limited();
        }
        return std::pair<Simulation<TestType>, int>(std::move(scene.sim), limited);
    };
    CHECK(check_same_bits_on_every_path(run) > 100); // springs still past a bound at the second solve
    const auto odd = [](auto configure) {
        Simulation<TestType> sim;
        const auto cloth = add_cloth(sim, {.width = 33,
                                           .height = 12,
                                           .spacing = TestType(0.1),
                                           .stiffness = TestType(2000),
                                           .pinned = [](int c, int r) { return r == 0 && c % 4 == 0; }});
        const auto limit = add_column_limit(sim, cloth, ColumnLimitOptions<TestType>{});
        configure(sim);
        int limited = 0;
        for (int frame = 0; frame < 30; ++frame)
        {
            sim.step({.dt = TestType(1) / TestType(60),
                      .gravity = {TestType(0), TestType(9.81), TestType(0)},
                      .iterations = 1});
            limited += limit.limited();
        }
        return std::pair<Simulation<TestType>, int>(std::move(sim), limited);
    };
    CHECK(check_same_bits_on_every_path(odd) > 10);
}

TEST_CASE("a restored sheet under a column limit steps on to the same bits, its settings restored with it",
          "[column_limit][snapshot]")
{
    SwingingSheet<float> straight;
    add_column_limit(straight.sim, straight.cloth, ColumnLimitOptions<float>{.solves = 2});
    straight.swing(60);

    SwingingSheet<float> interrupted;
    auto limit = add_column_limit(interrupted.sim, interrupted.cloth, ColumnLimitOptions<float>{.solves = 2});
    interrupted.swing(30);
    const auto at_30 = snapshot(interrupted.sim);
    limit.set_solves(1);
    limit.set_bounds(0.2f, 0.1f);
    interrupted.swing(15);
    restore(interrupted.sim, at_30);
    CHECK(limit.solves() == 2);
    CHECK(limit.max_stretch() == 0.01f);
    CHECK(limit.max_compression() == 0.01f);
    interrupted.swing(30);
    CHECK(interrupted.sim.state() == straight.sim.state());
}

TEST_CASE("a column limit refuses bad settings, naming the value, and leaves the simulation as it was",
          "[column_limit][errors]")
{
    using Catch::Matchers::ContainsSubstring;
    SwingingSheet<float> held;
    Simulation<float> other;
    const auto elsewhere = add_cloth(other, {.width = 3, .height = 3, .name = "elsewhere"});
    held.sim.add_position_projection("taken", [](State3<float>&, float) {}); // a name in use
    const auto stages = held.sim.position_projections().names();
    const auto refused = [&](const Cloth<float>& cloth, ColumnLimitOptions<float> options, const std::string& text) {
        CHECK_THROWS_WITH(add_column_limit(held.sim, cloth, options), ContainsSubstring(text));
        CHECK(held.sim.position_projections().names() == stages);
    };
    refused(held.cloth, {.max_stretch = -0.01f}, "max_stretch must be finite and >= 0, got -0.01");
    refused(held.cloth, {.max_stretch = std::numeric_limits<float>::quiet_NaN()}, "got NaN");
    refused(held.cloth, {.max_compression = 1.0f}, "max_compression must be finite and in [0, 1), got 1");
    refused(held.cloth, {.max_compression = std::numeric_limits<float>::infinity()}, "got inf");
    refused(held.cloth, {.solves = 0}, "solves must be >= 1, got 0");
    refused(held.cloth, {.name = "taken"}, "'taken' is registered already");
    refused(elsewhere, {}, "is not in this simulation");

    auto limit = add_column_limit(held.sim, held.cloth, ColumnLimitOptions<float>{});
    CHECK_THROWS_WITH(limit.set_bounds(0.01f, -1.0f), ContainsSubstring("got -1"));
    CHECK_THROWS_WITH(limit.set_solves(-2), ContainsSubstring("got -2"));
    CHECK(limit.max_compression() == 0.01f);
    CHECK(limit.solves() == 1);
    CHECK(limit.remove());
    CHECK_FALSE(limit.remove());

    std::optional<ColumnLimit<float>> orphan;
    {
        SwingingSheet<float> gone;
        orphan = add_column_limit(gone.sim, gone.cloth, ColumnLimitOptions<float>{});
    }
    CHECK_THROWS_AS(orphan->remove(), std::logic_error);
}
