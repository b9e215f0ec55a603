// Motion constraints: a sheet follows targets that move every frame within its max distance, 0
// glues it to them, a backstop keeps it out of the body under its targets, and the stage is
// deterministic and snapshotted like every other.
#include <cmath>
#include <numbers>
#include <sstream>
#include <vector>

#include "catch.hpp"
#include "same_bits.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// A free 16 x 16 sheet at spacing 0.1 lying flat in x-z, its targets its layout carried around a
/// circle of radius 2 once every two seconds; gravity 9.8 pulls it away from them.
template <class T>
struct CirclingTargets
{
    Simulation<T> sim;
    std::vector<Vec3<T>> layout;

    CirclingTargets()
    {
        const auto sheet = add_cloth(sim, {.width = 16, .height = 16, .spacing = T(0.1), .position = [](int c, int r) {
                                               return Vec3<T>(T(0.1) * T(c), T(0), T(0.1) * T(r));
                                           }});
        for (std::size_t i = sheet.base(); i < sheet.end(); ++i)
            layout.push_back(sim.state().position(i));
    }

    static StepParams<T> step() { return {.dt = T(1) / T(60), .gravity = {T(0), T(9.8), T(0)}, .iterations = 8}; }

    /// The targets at frame f: the layout moved around the circle.
    std::vector<Vec3<T>> targets(int f) const
    {
        const T angle = T(2) * std::numbers::pi_v<T> * T(f) / T(120);
        const Vec3<T> offset(T(2) * std::cos(angle), T(0), T(2) * std::sin(angle));
        std::vector<Vec3<T>> out;
        for (const auto& p : layout)
            out.push_back(p + offset);
        return out;
    }
    std::vector<Vec3<T>> up() const { return std::vector<Vec3<T>>(layout.size(), Vec3<T>(T(0), T(-1), T(0))); }

    /// Worst distance of a particle from its target.
    T worst_from(const std::vector<Vec3<T>>& targets) const
    {
        T worst = 0;
        for (std::size_t k = 0; k < targets.size(); ++k)
            worst = std::max(worst, T((sim.state().position(k) - targets[k]).norm()));
        return worst;
    }
};
} // namespace

TEST_CASE("a free sheet whose targets circle every frame stays within max_distance of them after "
          "every step, and without the constraints it falls away",
          "[motion]")
{
    CirclingTargets<float> held, free;
    auto motion = add_motion_constraints(held.sim, MotionConstraintsOptions<float>{.max_distance = 0.1f});
    float worst = 0, worst_free = 0;
    for (int f = 1; f <= 240; ++f)
    {
        const auto targets = held.targets(f);
        motion.set_targets(targets, held.up());
        held.sim.step(CirclingTargets<float>::step());
        free.sim.step(CirclingTargets<float>::step());
        worst = std::max(worst, held.worst_from(targets));
        worst_free = std::max(worst_free, free.worst_from(targets));
    }
    CHECK(worst <= 0.1f + 1e-5f); // float rounding of coordinates near 3 units
    CHECK(worst > 0.09f);         // gravity and the circling pull particles to the limit
    CHECK(worst_free > 1.0f);
    CHECK(motion.moved() > 0);
}

TEST_CASE("max_distance 0 glues particles to their targets", "[motion]")
{
    CirclingTargets<float> held;
    auto motion = add_motion_constraints(held.sim, MotionConstraintsOptions<float>{.range = {.begin = 0, .end = 16}});
    const auto targets = held.targets(7), up = held.up();
    motion.set_targets(std::span(targets).first(16), std::span(up).first(16));
    held.sim.step(CirclingTargets<float>::step());
    for (std::size_t k = 0; k < 16; ++k)
        CHECK(held.sim.state().position(k) == targets[k]);
    CHECK(held.sim.state().position(16) != targets[16]); // outside the range: not held
}

TEST_CASE("a backstop keeps the cloth outside a sphere behind its targets, where it would sink in "
          "without",
          "[motion]")
{
    // Targets on the top of a body: the layout itself, normals up (-y). The sheet may stray 0.3
    // from them, and gravity pulls it 0.3 down, into the body; a backstop of radius 1 placed 0.05
    // behind the targets' surface stops it there.
    const auto run = [](float backstop_radius) {
        CirclingTargets<float> scene;
        auto motion = add_motion_constraints(
            scene.sim, MotionConstraintsOptions<float>{
                           .max_distance = 0.3f, .backstop_radius = backstop_radius, .backstop_distance = 0.05f});
        motion.set_targets(scene.layout, scene.up());
        float deepest = 0; // how far below the targets' surface (y = 0) any particle went
        for (int f = 0; f < 120; ++f)
        {
            scene.sim.step(CirclingTargets<float>::step());
            for (std::size_t i = 0; i < scene.sim.size(); ++i)
                deepest = std::max(deepest, scene.sim.state().position(i).y());
        }
        return deepest;
    };
    const float without = run(0.0f), with = run(1.0f);
    // Each backstop sphere's top is 0.05 below its target: no particle goes deeper.
    CHECK(with <= 0.05f + 1e-5f);
    CHECK(without > 0.25f);
}

TEMPLATE_TEST_CASE("motion constraints give the same bits vector or scalar, and for any executor and grain",
                   "[motion][parallel]", float, double)
{
    REQUIRE(simd::kLanes<TestType> > 1);
    const auto run = [](auto configure) {
        CirclingTargets<TestType> scene;
        auto motion = add_motion_constraints(scene.sim,
                                             MotionConstraintsOptions<TestType>{.range = {.begin = 3, .end = 250},
                                                                                .max_distance = TestType(0.05),
                                                                                .backstop_radius = TestType(0.5)});
        configure(scene.sim);
        int moved = 0;
        for (int f = 1; f <= 30; ++f)
        {
            const auto targets = scene.targets(f), up = scene.up();
            motion.set_targets(std::span(targets).subspan(3, 247), std::span(up).subspan(3, 247));
            scene.sim.step(CirclingTargets<TestType>::step());
            moved += motion.moved();
        }
        return std::pair<Simulation<TestType>, int>(std::move(scene.sim), moved);
    };
    CHECK(check_same_bits_on_every_path(run) > 1000);
}

TEST_CASE("a restored sheet under motion constraints steps on to the same bits, its targets restored",
          "[motion][snapshot]")
{
    const auto frames = [](CirclingTargets<float>& s, int from, int to) {
        for (int f = from; f < to; ++f)
            s.sim.step(CirclingTargets<float>::step());
    };
    CirclingTargets<float> straight;
    auto a = add_motion_constraints(straight.sim, MotionConstraintsOptions<float>{.max_distance = 0.1f});
    a.set_targets(straight.targets(10), straight.up());
    frames(straight, 0, 40);

    CirclingTargets<float> interrupted;
    auto b = add_motion_constraints(interrupted.sim, MotionConstraintsOptions<float>{.max_distance = 0.1f});
    b.set_targets(interrupted.targets(10), interrupted.up());
    frames(interrupted, 0, 20);
    const auto at_20 = snapshot(interrupted.sim);
    std::ostringstream out(std::ios::binary);
    save(interrupted.sim, out);
    b.set_targets(interrupted.targets(50), interrupted.up());
    b.set_max_distance(0.0f);
    frames(interrupted, 20, 30);
    restore(interrupted.sim, at_20);
    CHECK(b.max_distance(0) == 0.1f);
    frames(interrupted, 20, 40);
    CHECK(interrupted.sim.state() == straight.sim.state());

    CirclingTargets<float> fresh;
    add_motion_constraints(fresh.sim, MotionConstraintsOptions<float>{});
    std::istringstream in(out.str(), std::ios::binary);
    load(fresh.sim, in);
    frames(fresh, 20, 40);
    CHECK(fresh.sim.state() == straight.sim.state());
}

TEST_CASE("motion constraints refuse bad input, naming it, and leave the simulation as it was", "[motion][errors]")
{
    using Catch::Matchers::ContainsSubstring;
    CirclingTargets<float> scene;
    scene.sim.add_position_projection("taken", [](State3<float>&, float) {}); // a name in use
    const auto stages = scene.sim.position_projections().names();
    const auto refused = [&](ParticleRange range, MotionConstraintsOptions<float> options, const std::string& text) {
        options.range = range;
        CHECK_THROWS_WITH(add_motion_constraints(scene.sim, options), ContainsSubstring(text));
        CHECK(scene.sim.position_projections().names() == stages);
    };
    const float nan = std::numeric_limits<float>::quiet_NaN();
    refused({}, {.max_distance = -1}, "max_distance must be finite and >= 0, got -1");
    refused({}, {.max_distance = nan}, "got NaN");
    refused({}, {.backstop_radius = -0.5f}, "backstop_radius must be finite and >= 0, got -0.5");
    refused({}, {.backstop_distance = std::numeric_limits<float>::infinity()}, "backstop_distance");
    refused({.begin = 0, .end = 300}, {}, "[0, 300) is not inside the 256 particles");
    refused({.begin = 5, .end = 5}, {}, "non-empty range");
    refused({}, {.name = "taken"}, "'taken' is registered already");

    auto motion = add_motion_constraints(
        scene.sim, MotionConstraintsOptions<float>{.range = {.begin = 0, .end = 4}, .max_distance = 0.2f});
    const std::vector<Vec3<float>> four(4, Vec3<float>(1, 2, 3)), three(3, Vec3<float>(1, 2, 3));
    std::vector<Vec3<float>> bad = four;
    bad[2].y() = nan;
    CHECK_THROWS_WITH(motion.set_targets(three, four), ContainsSubstring("need 4 targets and normals, got 3 and 4"));
    CHECK_THROWS_WITH(motion.set_targets(bad, four), ContainsSubstring("motion target 2 is not finite"));
    CHECK_THROWS_WITH(motion.set_targets(four, bad), ContainsSubstring("motion normal 2 is not finite"));
    CHECK_THROWS_WITH(motion.set_max_distance(-0.1f), ContainsSubstring("got -0.1"));
    const std::vector<float> distances = {0.1f, 0.2f, -3.0f, 0.4f};
    CHECK_THROWS_WITH(motion.set_max_distance(distances),
                      ContainsSubstring("max distance 2 must be finite and >= 0, got -3"));
    CHECK_THROWS_WITH(motion.set_max_distance(std::vector<float>(2, 0.1f)),
                      ContainsSubstring("need 4 max distances, got 2"));
    CHECK(motion.max_distance(2) == 0.2f);
    // Nothing changed: the targets are still the layout, so one step leaves particle 0 within 0.2
    // of where it was laid.
    scene.sim.step(CirclingTargets<float>::step());
    CHECK((scene.sim.state().position(0) - scene.layout[0]).norm() <= 0.2f * (1.0f + 1e-6f));
    CHECK(motion.remove());
    CHECK_FALSE(motion.remove());
}

TEST_CASE("motion constraints protect their range from renumbering until they are removed", "[motion][errors]")
{
    using Catch::Matchers::ContainsSubstring;
    Simulation<float> sim;
    for (int i = 0; i < 6; ++i)
        sim.add_particle({float(i), 0, 0});
    auto motion = add_motion_constraints(
        sim, MotionConstraintsOptions<float>{.range = {.begin = 3, .end = 5}, .name = "hands"});
    CHECK_THROWS_WITH(sim.queue_remove(1), ContainsSubstring("below motion constraints 'hands' [3, 5)"));
    CHECK_THROWS_WITH(sim.queue_remove(4), ContainsSubstring("inside motion constraints 'hands'"));
    sim.queue_remove(5); // above the range: nothing in it is renumbered
    CHECK_THROWS_WITH(
        add_motion_constraints(sim, MotionConstraintsOptions<float>{.range = {.begin = 0, .end = 2}, .name = "feet"}),
        ContainsSubstring("removals are queued"));
    CHECK(motion.remove());
    sim.queue_remove(1);
    CHECK(sim.pending_removals() == 2u);
}
