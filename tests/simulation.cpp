// Simulation: the step pipeline (docs/architecture.md, "Step order") measured end to end on the guide's sheet.
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "same_bits.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// Splits of stiffness x iterations = 960 (the guide's four, and 320 x 3), stepped 200 frames;
/// returns the furthest particle of each but the last from the 960 x 1 sheet.
template <class T>
std::vector<double> split_gaps()
{
    const std::vector<std::pair<T, int>> splits = {{60, 16}, {120, 8}, {240, 4}, {320, 3}, {960, 1}};
    std::vector<Simulation<T>> sheets;
    for (const auto& [k, n] : splits)
        sheets.push_back(guide_sheet<T>(k));
    for (int frame = 0; frame < 200; ++frame)
        for (std::size_t s = 0; s < splits.size(); ++s)
            sheets[s].step(guide_step<T>(splits[s].second));
    std::vector<double> gaps;
    for (std::size_t s = 0; s + 1 < splits.size(); ++s)
        gaps.push_back(furthest_apart(sheets[s], sheets.back()));
    return gaps;
}
} // namespace

TEST_CASE("N passes at k equal one pass at N*k: the splits of 960 give one sheet", "[simulation][equivalence]")
{
    // The solve multiplies the force sum by N. For N a power of two that scaling is exact in binary
    // floating point, and k x N is then the same float as N x k, so the power-of-two splits give the
    // same bits as 960 x 1. 320 x 3 rounds the stiffness product and the force differently: its gap
    // must be rounding, a tiny fraction of the spacing in float and far smaller again in double.
    const auto gf = split_gaps<float>();
    const auto gd = split_gaps<double>();
    const double spacing = 0.5;
    for (std::size_t s = 0; s < gf.size(); ++s)
    {
        if (s < 3)
        {
            CHECK(gf[s] == 0.0);
            CHECK(gd[s] == 0.0);
            continue;
        }
        CHECK(gf[s] > 0.0); // 3 is not a power of two: the test can tell rounding from exactness
        CHECK(gf[s] < 1e-3 * spacing);
        CHECK(gd[s] < 1e-9 * spacing);
        CHECK(gd[s] < gf[s] * 1e-4);
    }
}

TEST_CASE("the solve tracks literal passes to rounding over 200 frames", "[simulation]")
{
    // The solve adds iterations x (sum of forces) where literal passes add each force every pass:
    // the same exact sum, rounded differently. A hanging sheet amplifies rounding over 200 frames,
    // so the gap is stated as for the splits of 960 above: a tiny fraction of the spacing in float
    // and far smaller again in double, where a physics difference would be the same in both.
    const double spacing = 0.5;
    for (int iterations : {2, 4, 16})
    {
        double gap[2] = {0, 0};
        auto run = [&](auto zero, double& out) {
            using T = decltype(zero);
            auto fast = guide_sheet<T>(T(60));
            auto literal = guide_sheet<T>(T(60));
            const auto params = guide_step<T>(iterations);
            auto literal_params = params;
            literal_params.iterations = 0; // the solve is done by the callback instead
            const auto passes = [&](State3<T>& s, T) {
                kernels::accumulate_reference_passes(s.arrays_view(), literal.constraints().arrays_view(), {}, 0,
                                                     s.size(), iterations);
            };
            for (int frame = 0; frame < 200; ++frame)
            {
                fast.step(params);
                literal.step(literal_params, passes);
            }
            out = furthest_apart(fast, literal);
            CHECK(furthest_apart(fast, guide_sheet<T>(T(60))) > 0.1); // it did move
        };
        run(float(0), gap[0]);
        run(double(0), gap[1]);
        INFO("iterations " << iterations);
        CHECK(gap[0] < 1e-3 * spacing);
        CHECK(gap[1] < 1e-9 * spacing);
        CHECK(gap[1] <= gap[0] * 1e-4);
    }
}

TEMPLATE_TEST_CASE("vector and scalar paths agree over 200 frames", "[simulation]", float, double)
{
    // The batch must have more than one lane, or this would compare the scalar path with itself.
    REQUIRE(simd::kLanes<TestType> > 1);
    auto vec = guide_sheet<TestType>(TestType(60));
    auto sca = guide_sheet<TestType>(TestType(60));
    sca.set_vectorized(false);
    REQUIRE(vec.vectorized());
    for (int frame = 0; frame < 200; ++frame)
    {
        vec.step(guide_step<TestType>(16));
        sca.step(guide_step<TestType>(16));
    }
    // Both twins perform the same IEEE operations in the same order, and the library target turns
    // floating-point contraction off (SIMDVERLET_STRICT_FP), so they agree to the bit.
    CHECK(same_positions(vec, sca));
}

TEST_CASE("free fall follows the closed form of damped Verlet under constant acceleration", "[simulation]")
{
    for (double damping : {1.0, 0.99, 0.5})
    {
        Simulation<double> sim;
        sim.add_particle({1, -2, 3});
        const StepParams<double> p{.dt = 0.01, .damping = damping, .gravity = {0.5, 9.81, -2}, .iterations = 4};
        for (int n = 1; n <= 300; ++n)
        {
            sim.step(p);
            // v_k = g dt^2 (1 + d + ... + d^(k-1)); x_n = x_0 + sum of v_1..v_n.
            double sum = 0;
            double geometric = 0;
            for (int k = 0; k < n; ++k)
            {
                geometric = geometric * damping + 1.0;
                sum += geometric;
            }
            const Vec3<double> expected = Vec3<double>(1, -2, 3) + p.gravity * p.dt * p.dt * sum;
            INFO("damping " << damping << " step " << n);
            REQUIRE((sim.state().position(0) - expected).norm() <= 1e-12 * (1.0 + expected.norm()));
        }
    }
}

TEST_CASE("pinned particles never move, however hard the sheet pulls", "[simulation]")
{
    auto sim = guide_sheet<float>(60.0f);
    std::vector<Vec3<float>> pins;
    for (std::size_t i = 0; i < sim.size(); ++i)
        if (sim.state().is_pinned(i))
            pins.push_back(sim.state().position(i));
    REQUIRE(pins.size() == 5);
    for (int frame = 0; frame < 300; ++frame)
        sim.step({.gravity = {0.3f, 9.0f, -1.0f}, .iterations = 16}, [](State3<float>& s, float) {
            for (auto& a : s.ax())
                a += 50.0f; // a push on everything, pins included
        });
    std::size_t k = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
        if (sim.state().is_pinned(i))
        {
            CHECK(sim.state().position(i) == pins[k++]); // bit for bit
            CHECK(sim.state().velocity(i) == Vec3<float>::Zero());
        }
}

TEST_CASE("gravity accelerates every free particle alike, whatever its mass", "[simulation]")
{
    Simulation<float> sim;
    sim.add_particle({0, 0, 0}, 1.0f);
    sim.add_particle({1, 0, 0}, 0.1f);   // ten times heavier
    sim.add_particle({2, 0, 0}, 100.0f); // a hundred times lighter
    for (int frame = 0; frame < 100; ++frame)
        sim.step({.gravity = {0, 2, 0}});
    const auto& y = sim.state().y();
    // Damped Verlet from rest: g dt^2 (sum over n = 1..100 of (1 - 0.99^n) / 0.01) = 2.0687.
    CHECK(y[0] == Approx(2.0687).epsilon(1e-4));
    CHECK(y[1] == y[0]);
    CHECK(y[2] == y[0]);
}

TEST_CASE("a state without masses steps exactly like one with every inverse mass 1", "[simulation]")
{
    Simulation<float> unit(Masses::unit);
    Simulation<float> ones(Masses::per_particle);
    for (auto* sim : {&unit, &ones})
    {
        add_grid<float>(*sim, 7, 5, 0.5f, 60.0f, {});
        jitter(*sim, 0.1f);
    }
    CHECK_THROWS_AS(unit.state().pin(0), std::logic_error);
    for (int frame = 0; frame < 100; ++frame)
    {
        unit.step(guide_step<float>(8));
        ones.step(guide_step<float>(8));
    }
    CHECK(same_positions(unit, ones));
    // Unit-mass padding lanes are masked in the integrator: they stay at the origin.
    const auto a = unit.state().arrays_view();
    for (std::size_t i = a.size; i < a.padded; ++i)
        CHECK(a.y[i] == 0.0f);
}

TEST_CASE("forces written into the accumulators before step are thrown away", "[simulation]")
{
    auto clean = guide_sheet<float>(60.0f);
    auto dirty = guide_sheet<float>(60.0f);
    for (int frame = 0; frame < 50; ++frame)
    {
        for (auto& a : dirty.state().ax())
            a = 1e6f;
        clean.step(guide_step<float>(16));
        dirty.step(guide_step<float>(16));
    }
    CHECK(same_positions(clean, dirty));
}

TEST_CASE("the stages of a step run in the documented order", "[simulation]")
{
    Simulation<float> sim;
    sim.add_particle({0, 0, 0});
    sim.add_particle({1, 0, 0});
    sim.connect(0, 1, 0.5f, 10.0f);
    std::vector<std::string> order;
    float seen_by_callback = 0;
    sim.add_force_generator(0, [&](const State3<float>& s, std::int32_t, float) {
        order.push_back("generator");
        CHECK(s.ax()[0] == 0.0f); // accumulators were zeroed first
        return Vec3<float>(1, 0, 0);
    });
    sim.add_bulk_force("bulk", [&](State3<float>& s, float) {
        order.push_back("bulk");
        s.ax()[0] += 2.0f;
    });
    sim.add_position_projection("projection", [&](State3<float>& s, float) {
        order.push_back("projection");
        if (order.size() == 4)
            CHECK(s.px()[1] == 1.0f); // first step: integration has run, px holds the old position
    });
    sim.add_constraint_edit("edit",
                            [&](State3<float>&, DirectedConstraints4<float>&, float) { order.push_back("edit"); });
    sim.step({.iterations = 1}, [&](State3<float>& s, float) {
        order.push_back("callback");
        seen_by_callback = s.ax()[0];
    });
    CHECK(order == std::vector<std::string>{"generator", "bulk", "callback", "projection", "edit"});
    CHECK(seen_by_callback == 3.0f); // generator + bulk, before the solve adds the spring
    // The fused sweep sums the springs in registers: the accumulators keep the stages' forces.
    CHECK(sim.state().ax()[0] == 3.0f);
    // The unfused reference order adds the spring into them: k (|d| - r) = 5.
    sim.set_fused(false);
    const float gap = sim.state().x()[1] - sim.state().x()[0];
    sim.step({.iterations = 1});
    CHECK(sim.state().ax()[0] == Approx(3.0f + 10.0f * (gap - 0.5f)));
}

TEST_CASE("registries replace a stage in place when asked, keep registration order and report removal", "[simulation]")
{
    Simulation<double> sim;
    sim.add_particle({0, 0, 0});
    std::string trace;
    sim.add_bulk_force("a", [&](State3<double>&, double) { trace += "a"; });
    sim.add_bulk_force("b", [&](State3<double>&, double) { trace += "b"; });
    sim.add_bulk_force("c", [&](State3<double>&, double) { trace += "c"; });
    CHECK_THROWS_WITH(sim.add_bulk_force("a", [&](State3<double>&, double) { trace += "?"; }),
                      Catch::Matchers::ContainsSubstring("'a' is registered already"));
    sim.add_bulk_force(
        "a", [&](State3<double>&, double) { trace += "A"; }, OnExistingName::replace); // stays first
    CHECK(sim.bulk_forces().names() == std::vector<std::string>{"a", "b", "c"});
    sim.step({});
    CHECK(trace == "Abc");
    CHECK(sim.remove_bulk_force("b"));
    CHECK_FALSE(sim.remove_bulk_force("b"));
    trace.clear();
    sim.step({});
    CHECK(trace == "Ac");

    sim.add_position_projection("p", [&](State3<double>&, double) { trace += "p"; });
    sim.add_constraint_edit("e", [&](State3<double>&, DirectedConstraints4<double>&, double) { trace += "e"; });
    CHECK(sim.remove_position_projection("p"));
    CHECK_FALSE(sim.remove_position_projection("p"));
    CHECK(sim.remove_constraint_edit("e"));
    CHECK_FALSE(sim.remove_constraint_edit("zzz"));
    CHECK_THROWS_AS(sim.add_bulk_force("", [](State3<double>&, double) {}), std::invalid_argument);
}

TEST_CASE("queued removals shift later particles down and remap or clear their slots", "[simulation]")
{
    Simulation<float> sim;
    for (int i = 0; i < 6; ++i)
        sim.add_particle({float(i), 0, 0});
    auto& k = sim.constraints();
    for (std::size_t i = 0; i + 1 < 6; ++i)
        k.connect_within_layer(i, i + 1, 1.0f, float(i + 1)); // stiffness tells the springs apart
    k.set_slot(5, 2, 0, 5.0f, 7.0f);                          // one-way 5 -> 0
    const auto gen = sim.add_force_generator(
        4, [](const State3<float>&, std::int32_t, float) { return Vec3<float>::Zero(); });
    const auto doomed = sim.add_force_generator(
        2, [](const State3<float>&, std::int32_t, float) { return Vec3<float>::Zero(); });
    sim.queue_remove(2);
    sim.queue_remove(2); // queued once
    CHECK(sim.pending_removals() == 1);
    CHECK(sim.size() == 6); // nothing happens before the step
    sim.step({.iterations = 0});
    REQUIRE(sim.size() == 5);
    CHECK(sim.state().x()[2] == 3.0f);
    // old 1: link to old 2 cleared, link to 0 kept
    CHECK(k.live_count(1) == 1);
    CHECK(k.neighbour(1, 0) == 0);
    // old 3 (now 2): link to old 2 cleared, link to old 4 (now 3) renumbered with its stiffness
    CHECK(k.live_count(2) == 1);
    CHECK(k.neighbour(2, 1) == 3);
    CHECK(k.stiffness(2, 1) == 4.0f);
    // old 5 (now 4): back link to old 4 renumbered, one-way slot to 0 untouched
    CHECK(k.neighbour(4, 0) == 3);
    CHECK(k.neighbour(4, 2) == 0);
    CHECK(k.stiffness(4, 2) == 7.0f);
    CHECK(sim.force_generator_particle(gen) == 3u);
    CHECK_FALSE(sim.force_generator_particle(doomed).has_value());
}

TEST_CASE("removals inside or below a protected block are refused when queued", "[simulation]")
{
    Simulation<float> sim;
    for (int i = 0; i < 10; ++i)
        sim.add_particle({float(i), 0, 0});
    auto& world = *detail::world_of(sim); // what add_cloth and add_strand call
    world.protect_range(3, 6, "cloth 'flag'");
    const auto before = sim.state();
    for (std::size_t i : {0u, 3u, 5u})
    {
        try
        {
            sim.queue_remove(i);
            FAIL("queue_remove should have thrown");
        }
        catch (const std::logic_error& e)
        {
            CHECK(std::string(e.what()).find("particle " + std::to_string(i)) != std::string::npos);
            CHECK(std::string(e.what()).find("cloth 'flag'") != std::string::npos);
        }
    }
    CHECK(sim.pending_removals() == 0);
    sim.queue_remove(7);                                                   // above it: fine
    CHECK_THROWS_AS(world.protect_range(8, 10, "rope"), std::logic_error); // 7 is queued below its end
    sim.step({});
    CHECK(sim.size() == 9);
    CHECK(sim.state().x()[7] == 8.0f);
}

TEST_CASE("a PID controller pulls a particle to its target and lets go when removed", "[simulation]")
{
    Simulation<float> sim;
    sim.add_particle({0, 0, 0});
    const auto p = sim.add_particle({0, 0, 0});
    auto pid = add_pid_controller(sim, {.particle = std::size_t(p), .target = {2, 1, 0}});
    for (int frame = 0; frame < 120; ++frame)
        sim.step({});
    CHECK((sim.state().position(1) - Vec3<float>(2, 1, 0)).norm() < 1e-3f);
    pid.set_target({2, 3, 0});
    for (int frame = 0; frame < 120; ++frame)
        sim.step({});
    CHECK((sim.state().position(1) - Vec3<float>(2, 3, 0)).norm() < 1e-3f);
    // Particle 0 below it is removed: the controller follows its particle's new index.
    sim.queue_remove(0);
    sim.step({});
    CHECK(pid.particle() == 0);
    CHECK(pid.remove());
    CHECK(pid.removed());
    CHECK_FALSE(pid.remove());
    CHECK_THROWS_AS(pid.set_target({0, 0, 0}), std::logic_error);
    sim.state().set_velocity(0, {0.01f, 0, 0});
    const float x0 = sim.state().x()[0];
    sim.step({.damping = 1.0f});
    CHECK(sim.state().x()[0] == Approx(x0 + 0.01f)); // no pull any more: it coasts
}

TEST_CASE("the PID holds a particle against gravity with the steady offset load / kp", "[simulation]")
{
    Simulation<double> sim;
    sim.add_particle({0, 0, 0});
    const PidGains<double> gains{.kp = 500, .ki = 0, .kd = 30};
    add_pid_controller(sim, {.particle = 0, .target = {0, 0, 0}, .gains = gains});
    for (int frame = 0; frame < 600; ++frame)
        sim.step({.gravity = {0, 2, 0}});
    CHECK(sim.state().y()[0] == Approx(2.0 / 500.0).epsilon(1e-3));
}

TEMPLATE_TEST_CASE("n substeps are bit-identical to n steps of dt / n keeping damping^(1/n)", "[simulation]", float,
                   double)
{
    auto split = guide_sheet<TestType>(TestType(60));
    auto calls = guide_sheet<TestType>(TestType(60));
    auto params = guide_step<TestType>(16);
    params.substeps = 4;
    auto quarter = guide_step<TestType>(16);
    quarter.dt = params.dt / TestType(4);
    quarter.damping = std::pow(params.damping, TestType(1) / TestType(4));
    for (int frame = 0; frame < 100; ++frame)
    {
        split.step(params);
        for (int n = 0; n < 4; ++n)
            calls.step(quarter);
    }
    CHECK(same_positions(split, calls));
    CHECK(split.step_count() == 400);
}

TEST_CASE("damping is per call: a coasting particle keeps damping of its speed per frame at any substep count",
          "[simulation][damping]")
{
    // A free particle coasting at 1 unit/s with nothing acting on it: after one second (60 calls) its
    // speed is 0.99^60 of the start whatever the substeps. Per-step damping would keep 0.99^(60 n).
    for (int n : {1, 2, 4, 8})
    {
        Simulation<double> sim;
        sim.add_particle({0, 0, 0});
        const double h = (1.0 / 60.0) / n; // one substep
        sim.state().set_velocity(0, {h, 0, 0});
        for (int frame = 0; frame < 60; ++frame)
            sim.step({.damping = 0.99, .iterations = 0, .substeps = n});
        const double speed = sim.state().velocity(0).x() / h;
        CAPTURE(n);
        CHECK(speed == Approx(std::pow(0.99, 60)).epsilon(1e-9));
    }
}

namespace
{
/// Kinetic plus spring energy of a sheet stepped with `substeps` per 1/60 s frame. Speeds are per
/// second (displacement over the substep's dt); a symmetric pair of slots is one spring of
/// stiffness k x iterations.
double sheet_energy(const Simulation<double>& sim, int substeps, int iterations)
{
    const double h = (1.0 / 60.0) / substeps;
    const auto& s = sim.state();
    const auto& k = sim.constraints();
    double energy = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
    {
        if (!s.is_pinned(i))
            energy += 0.5 / s.inverse_mass(i) * (s.velocity(i) / h).squaredNorm();
        for (int slot = 0; slot < 4; ++slot)
            if (k.live(i, slot))
            {
                const double stretch = (s.position(std::size_t(k.neighbour(i, slot))) - s.position(i)).norm() -
                                       k.rest_length(i, slot);
                energy += 0.5 * 0.5 * k.stiffness(i, slot) * iterations * stretch * stretch; // half per slot
            }
    }
    return energy;
}

/// The guide's sheet (hanging from every fourth particle of its top row), thrown out of its plane at
/// 1 unit/s and left to
/// swing for one second with no gravity; returns the fraction of its energy left.
double swing_energy_kept(int substeps, double damping)
{
    auto sim = guide_sheet<double>(60.0);
    const double h = (1.0 / 60.0) / substeps;
    for (std::size_t i = 0; i < sim.size(); ++i)
        if (!sim.state().is_pinned(i))
            sim.state().set_velocity(i, {0, 0, h});
    const double start = sheet_energy(sim, substeps, 8);
    for (int frame = 0; frame < 60; ++frame)
        sim.step({.damping = damping, .iterations = 8, .substeps = substeps});
    return sheet_energy(sim, substeps, 8) / start;
}
} // namespace

TEST_CASE("a swinging sheet loses the same share of its energy in a second at 1, 2, 4 and 8 substeps",
          "[simulation][damping]")
{
    // Substeps change accuracy, not the air: with damping per call the sheet keeps about 0.99^120 of
    // its energy in one second at every substep count. The old per-step rule, reproduced by
    // passing damping^n, thickens the air n-fold.
    std::vector<double> kept, old_rule;
    for (int n : {1, 2, 4, 8})
    {
        kept.push_back(swing_energy_kept(n, 0.99));
        old_rule.push_back(swing_energy_kept(n, std::pow(0.99, n)));
    }
    for (double k : kept)
        CHECK(k == Approx(kept[0]).epsilon(0.005));
    CHECK(old_rule[3] < 0.5 * old_rule[0]); // what the test would see with the old rule
}

TEST_CASE("divergence: 100 x 16 stays finite for 400 frames, 150 x 16 does not, warned once", "[simulation]")
{
    LogCapture log;
    auto settles = guide_sheet<float>(100.0f);
    auto explodes = guide_sheet<float>(150.0f);
    int nan_frame = -1;
    int past_100_percent = -1;
    for (int frame = 1; frame <= 400; ++frame)
    {
        settles.step(guide_step<float>(16));
        explodes.step(guide_step<float>(16));
        const double strain = peak_strain(explodes);
        if (past_100_percent < 0 && strain > 1.0)
            past_100_percent = frame;
        if (nan_frame < 0 && explodes.diverged())
            nan_frame = frame;
    }
    CHECK_FALSE(settles.diverged());
    CHECK(peak_strain(settles) < 0.1);
    CHECK(explodes.diverged());
    CHECK(past_100_percent > 0);
    CHECK(nan_frame > past_100_percent); // the strain trace warns well before the NaN
    REQUIRE(log.warnings.size() == 1);   // once, not every frame after
    CHECK(log.warnings[0].find("dt = 0.0166666") != std::string::npos);
    CHECK(log.warnings[0].find("iterations = 16") != std::string::npos);
    // stability_ratio tells the two apart before a single step: 0.94 and 1.15.
    const double stable = stability_ratio(guide_sheet<float>(100.0f), guide_step<float>(16));
    const double unstable = stability_ratio(guide_sheet<float>(150.0f), guide_step<float>(16));
    CHECK(stable < 1.0);
    CHECK(unstable > 1.0);
    auto split = guide_step<float>(16);
    split.substeps = 2;
    CHECK(stability_ratio(guide_sheet<float>(150.0f), split) == Approx(unstable / 2).epsilon(1e-12));
}

TEST_CASE("a full world moved through a growing vector of simulations steps bit-identically to one that never moved",
          "[simulation][ownership]")
{
    // Stages and handles refer to the simulation's world, never to the Simulation object: a vector
    // that reallocates, or a move into a new variable, must change nothing (under ASan a stage
    // still pointing at the old object is a heap-use-after-free on the next step).
    Simulation<float> reference;
    FullWorld<float> ref_world(reference);
    for (int frame = 0; frame < 240; ++frame)
        ref_world.frame(reference, frame);

    std::vector<Simulation<float>> sims;
    sims.emplace_back();
    FullWorld<float> world(sims[0]);
    for (int frame = 0; frame < 80; ++frame)
        world.frame(sims[0], frame);
    for (int k = 0; k < 20; ++k) // several reallocations, each moving sims[0]
        sims.emplace_back();
    for (int frame = 80; frame < 160; ++frame)
        world.frame(sims[0], frame);
    Simulation<float> moved = std::move(sims[0]);
    sims.clear();
    for (int frame = 160; frame < 240; ++frame)
        world.frame(moved, frame);

    CHECK(moved.state() == reference.state());
    CHECK(moved.constraints() == reference.constraints());
    CHECK(world.tearing.torn() == ref_world.tearing.torn());
    CHECK(world.tearing.torn() > 0); // the run exercised tearing
    CHECK(world.wind.time() == ref_world.wind.time());
    CHECK(world.colliders.contacts() == ref_world.colliders.contacts());
}

TEST_CASE("a handle used after its simulation is destroyed throws a logic_error naming it", "[simulation][ownership]")
{
    std::optional<FullWorld<float>> world;
    std::optional<PidController<float>> pid;
    {
        Simulation<float> sim;
        world.emplace(sim);
        pid = add_pid_controller(sim, {.particle = 3, .target = {0, 0, 0}});
        REQUIRE_FALSE(pid->removed());
    }
    const auto message = [](auto&& use) {
        try
        {
            use();
        }
        catch (const std::logic_error& e)
        {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string destroyed = "used after its simulation was destroyed";
    CHECK(message([&] { world->cloth.pin({0, 0}); }).find("cloth 'cloth@0' was " + destroyed) != std::string::npos);
    CHECK(message([&] { world->cloth.grab_nearest({0, 0, 0}); }).find("cloth 'cloth@0'") != std::string::npos);
    CHECK(message([&] { world->rope.attach_to(0, 3); }).find("strand 'strand@200' was " + destroyed) !=
          std::string::npos);
    CHECK(message([&] { world->tearing.remove(); }).find("tearing 'tearing' was " + destroyed) != std::string::npos);
    CHECK(message([&] { world->wind.remove(); }).find("wind 'wind@cloth@0' was " + destroyed) != std::string::npos);
    CHECK(message([&] { world->colliders.remove(); }).find("collider set 'colliders' was " + destroyed) !=
          std::string::npos);
    CHECK(message([&] { pid->set_target({1, 1, 1}); }).find("PID controller #") != std::string::npos);
    CHECK(message([&] { pid->set_target({1, 1, 1}); }).find(destroyed) != std::string::npos);
    CHECK(pid->removed());
    CHECK(world->colliders.removed());
}

TEST_CASE("a moved-from simulation reports its misuse instead of crashing", "[simulation][ownership]")
{
    Simulation<float> a;
    a.add_particle({0, 0, 0});
    Simulation<float> b = std::move(a);
    CHECK(b.size() == 1);
    CHECK_THROWS_WITH(a.size(), Catch::Matchers::ContainsSubstring("moved from"));
    a = Simulation<float>();
    CHECK(a.size() == 0); // assigning a simulation makes it usable again
    static_assert(!std::is_copy_constructible_v<Simulation<float>>);
    static_assert(std::is_nothrow_move_constructible_v<Simulation<float>>);
}

TEST_CASE("the solve sums every constraint layer's slots: a hub with seven springs feels all seven",
          "[simulation][layers]")
{
    // Particle 0 joined to seven others placed off its axes with rests and stiffnesses all
    // different: four springs in layer 0, three in layer 1. After one unfused solve its accumulator
    // holds iterations x the sum of the seven forces k (|d| - r) d / |d|, computed here in double.
    const std::vector<Vec3<double>> ends = {{1.5, 0.2, 0},   {-0.3, 2, 0.1}, {-1.2, -0.7, 0.4}, {0.4, -1.9, -0.3},
                                            {0.9, 0.9, 0.9}, {-2, 0.5, -1},  {0.1, 0.3, -2.2}};
    const auto rest = [](std::size_t n) { return 0.5 + 0.25 * double(n); };
    const auto stiffness = [](std::size_t n) { return 10.0 + 3.0 * double(n); };
    Vec3<double> expected = Vec3<double>::Zero();
    for (std::size_t n = 0; n < ends.size(); ++n)
    {
        const double len = ends[n].norm();
        expected += stiffness(n) * (len - rest(n)) / len * ends[n];
    }
    REQUIRE(expected.norm() > 10.0);
    for (const bool vectorized : {true, false})
    {
        INFO("vectorized " << vectorized);
        Simulation<double> sim;
        sim.add_particle({0, 0, 0});
        for (std::size_t n = 0; n < ends.size(); ++n)
        {
            sim.add_particle(ends[n], 0.0);
            sim.connect(0, n + 1, rest(n), stiffness(n));
        }
        REQUIRE(sim.constraint_layers().count() == 2);
        sim.set_fused(false);
        sim.set_vectorized(vectorized);
        sim.step({.iterations = 3});
        const auto& s = sim.state();
        const Vec3<double> a(s.ax()[0], s.ay()[0], s.az()[0]);
        CHECK((a - 3.0 * expected).norm() < 1e-12 * expected.norm());
    }
}

TEMPLATE_TEST_CASE("a net of layered springs steps with the same bits on every path and tracks literal passes",
                   "[simulation][layers]", float, double)
{
    using T = TestType;
    REQUIRE(simd::kLanes<T> > 1);
    const auto build = [] {
        Simulation<T> sim;
        testing::add_net(sim, 150, 9, 6);
        return sim;
    };
    const StepParams<T> params{.dt = T(1) / T(60), .damping = T(0.99), .gravity = {0, 9.8, 0}, .iterations = 4};
    {
        const auto probe = build();
        std::size_t most = 0;
        for (std::size_t i = 0; i < probe.size(); ++i)
            most = std::max(most, std::size_t(probe.constraint_layers().live_count(i)));
        INFO("most springs on one particle " << most);
        REQUIRE(probe.constraint_layers().count() >= 3);
        REQUIRE(most > 2 * kSlots);
    }
    const auto run = [&](auto&& configure) {
        auto sim = build();
        configure(sim);
        for (int frame = 0; frame < 120; ++frame)
            sim.step(params);
        return std::pair{std::move(sim), 0};
    };
    testing::check_same_bits_on_every_path(run, 64);
    const auto reference = run([](auto&) {});
    CHECK(furthest_apart(reference.first, build()) > 0.5); // it fell and swung
    const auto unfused = run([](auto& s) { s.set_fused(false); });
    CHECK(same_positions(unfused.first, reference.first));
    const auto gathered = run([](auto& s) { s.set_grid_path(false); });
    CHECK(same_positions(gathered.first, reference.first));
    // Literal passes over every layer, one slot at a time.
    auto literal = build();
    auto literal_params = params;
    literal_params.iterations = 0;
    const auto passes = [&](State3<T>& s, T) {
        const auto extra = literal.constraint_layers().extra_views();
        kernels::accumulate_reference_passes(s.arrays_view(), literal.constraints().arrays_view(),
                                             std::span<const ConstraintArrays<T>>(extra), 0, s.size(),
                                             params.iterations);
    };
    for (int frame = 0; frame < 120; ++frame)
        literal.step(literal_params, passes);
    const double gap = furthest_apart(literal, reference.first);
    CHECK(gap < (sizeof(T) == 4 ? 1e-3 : 1e-9));
}

TEST_CASE("a simulation of grids and strands keeps one constraint layer", "[simulation][layers]")
{
    Simulation<float> sim;
    auto cloth = add_cloth(sim, {.width = 12, .height = 9});
    auto rope = add_strand(sim, {.count = 10});
    rope.attach_to(cloth.index(11, 8), 0);
    CHECK(sim.constraint_layers().count() == 1);
    sim.step({});
    CHECK(sim.constraint_layers().count() == 1);
}
