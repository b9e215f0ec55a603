// Bad input: one row per documented misuse (DESIGN §5 and the stages' own). Each must throw the
// stated standard exception, name the offending value in its message, and leave the simulation,
// its constraints, its stages and its colliders as they were.
#include <functional>
#include <memory>
#include <optional>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
enum class Kind
{
    invalid_argument,
    out_of_range,
    logic_error,
};

/// The scene every row runs against: the guide's sheet as a cloth, a rope, and a collider set
/// holding a plane and an SDF, stepped a few frames.
struct Scene
{
    Simulation<float> sim;
    std::optional<Cloth<float>> cloth;
    std::optional<Strand<float>> rope;
    std::shared_ptr<ColliderSet<float>> world;
    PlaneCollider<float>* floor = nullptr;
    SdfCollider<float>* ball = nullptr;

    Scene()
    {
        cloth = add_cloth(sim, {.pinned = [](int c, int r) { return r == 0 && c % 4 == 0; }}); // 0..199
        rope = add_strand(sim, {.count = 5});                                                   // 200..204
        world = add_colliders(sim, {});
        floor = &world->add(PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -8}));
        ball = &world->add(SdfCollider<float>({.field = [](const Vec3<float>& p) { return p.norm() - 1.0f; }}));
        sim.add_particle({0, 0, 5}); // 205, a free particle above every block
        for (int frame = 0; frame < 10; ++frame)
            sim.step(guide_step<float>(8));
    }
};

struct Row
{
    std::string what;
    std::function<void(Scene&)> action;
    Kind kind;
    std::string names; ///< a piece of the message that identifies the bad value
};

bool thrown_as(Kind kind, const std::exception& e)
{
    switch (kind)
    {
    case Kind::invalid_argument:
        return dynamic_cast<const std::invalid_argument*>(&e) != nullptr;
    case Kind::out_of_range:
        return dynamic_cast<const std::out_of_range*>(&e) != nullptr;
    case Kind::logic_error:
        return dynamic_cast<const std::logic_error*>(&e) != nullptr &&
               dynamic_cast<const std::invalid_argument*>(&e) == nullptr &&
               dynamic_cast<const std::out_of_range*>(&e) == nullptr;
    }
    return false;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
} // namespace

TEST_CASE("every documented bad input throws, names the value and changes nothing", "[errors]")
{
    const std::vector<Row> rows = {
        {"slot out of 0..3", [](Scene& x) { x.sim.constraints().set_slot(3, 4, 5, 0.5f, 1.0f); }, Kind::out_of_range, "slot 4"},
        {"negative slot", [](Scene& x) { x.sim.constraints().clear_slot(3, -1); }, Kind::out_of_range, "slot -1"},
        {"neighbour out of range", [](Scene& x) { x.sim.constraints().set_slot(3, 0, 999, 0.5f, 1.0f); }, Kind::out_of_range,
         "neighbour 999"},
        {"particle out of range", [](Scene& x) { x.sim.constraints().set_slot(500, 0, 1, 0.5f, 1.0f); }, Kind::out_of_range,
         "particle 500"},
        {"self constraint", [](Scene& x) { x.sim.constraints().set_slot(7, 0, 7, 0.5f, 1.0f); }, Kind::invalid_argument,
         "particle 7"},
        {"NaN stiffness", [](Scene& x) { x.sim.constraints().set_slot(3, 0, 4, 0.5f, kNaN); }, Kind::invalid_argument, "NaN"},
        {"negative stiffness", [](Scene& x) { x.sim.constraints().connect(2, 90, 0.5f, -3.0f); }, Kind::invalid_argument,
         "-3"},
        {"NaN rest length", [](Scene& x) { x.sim.constraints().connect(2, 90, kNaN, 1.0f); }, Kind::invalid_argument, "NaN"},
        {"connect with no free slot", [](Scene& x) { x.sim.constraints().connect(25, 205, 0.5f, 1.0f); }, Kind::logic_error,
         "particle 25"},
        {"zero dt", [](Scene& x) { x.sim.step({.dt = 0.0f}); }, Kind::invalid_argument, "dt"},
        {"negative dt", [](Scene& x) { x.sim.step({.dt = -0.01f}); }, Kind::invalid_argument, "-0.01"},
        {"NaN dt", [](Scene& x) { x.sim.step({.dt = kNaN}); }, Kind::invalid_argument, "NaN"},
        {"damping above 1", [](Scene& x) { x.sim.step({.damping = 1.5f}); }, Kind::invalid_argument, "1.5"},
        {"NaN gravity", [](Scene& x) { x.sim.step({.gravity = {0, kNaN, 0}}); }, Kind::invalid_argument, "NaN"},
        {"negative iterations", [](Scene& x) { x.sim.step({.iterations = -2}); }, Kind::invalid_argument, "-2"},
        {"zero substeps", [](Scene& x) { x.sim.step({.substeps = 0}); }, Kind::invalid_argument, "substeps"},
        {"pin out of range", [](Scene& x) { x.sim.state().pin(1000); }, Kind::out_of_range, "particle 1000"},
        {"negative inverse mass", [](Scene& x) { x.sim.state().set_inverse_mass(4, -1.0f); }, Kind::invalid_argument, "-1"},
        {"NaN position", [](Scene& x) { x.sim.add_particle({kNaN, 0, 0}); }, Kind::invalid_argument, "NaN"},
        {"teleport to infinity",
         [](Scene& x) { x.sim.state().set_position(3, {0, std::numeric_limits<float>::infinity(), 0}); },
         Kind::invalid_argument, "inf"},
        {"remove out of range", [](Scene& x) { x.sim.queue_remove(300); }, Kind::out_of_range, "particle 300"},
        {"a removal that would renumber a cloth", [](Scene& x) { x.sim.queue_remove(10); }, Kind::logic_error, "particle 10"},
        {"a removal below a rope", [](Scene& x) { x.sim.queue_remove(199); }, Kind::logic_error, "particle 199"},
        {"a degenerate plane normal", [](Scene& x) { x.floor->set_normal({0, 0, 0}); }, Kind::invalid_argument,
         "(0, 0, 0)"},
        {"max_steps < 1", [](Scene& x) { x.ball->set_max_steps(0); }, Kind::invalid_argument, "got 0"},
        {"an attach with no free slot", [](Scene& x) { x.rope->attach_to(x.cloth->index(5, 5), 0); },
         Kind::logic_error, "particle 105"},
        {"a negative collider friction", [](Scene& x) { x.floor->set_friction(-0.1f); }, Kind::invalid_argument,
         "-0.1"},
        {"force generator on a missing particle",
         [](Scene& x) { x.sim.add_force_generator(300, [](const State3<float>&, std::int32_t, float) { return Vec3<float>(); }); },
         Kind::out_of_range, "particle 300"},
        {"PID on a missing particle", [](Scene& x) { x.sim.add_pid_position_controller(250, {0, 0, 0}); }, Kind::out_of_range,
         "particle 250"},
        {"PID with a negative gain",
         [](Scene& x) { x.sim.add_pid_position_controller(5, {0, 0, 0}, {.kp = -1.0f}); }, Kind::invalid_argument, "-1"},
    };

    for (const auto& row : rows)
    {
        DYNAMIC_SECTION(row.what)
        {
            Scene scene;
            auto& sim = scene.sim;
            const auto floor_before = scene.floor->normal();
            const auto steps_limit_before = scene.ball->shape().max_steps;
            const auto friction_before = scene.floor->material().friction;
            const State3<float> state_before = sim.state();
            const DirectedConstraints4<float> constraints_before = sim.constraints();
            const auto steps_before = sim.step_count();
            const auto generators_before = sim.force_generator_count();
            bool threw = false;
            try
            {
                row.action(scene);
            }
            catch (const std::exception& e)
            {
                threw = true;
                INFO("message: " << e.what());
                CHECK(thrown_as(row.kind, e));
                CHECK(std::string(e.what()).find(row.names) != std::string::npos);
            }
            CHECK(threw);
            CHECK(sim.state() == state_before);
            CHECK(sim.constraints() == constraints_before);
            CHECK(sim.step_count() == steps_before);
            CHECK(sim.force_generator_count() == generators_before);
            CHECK(sim.pending_removals() == 0);
            CHECK(scene.floor->normal() == floor_before);
            CHECK(scene.ball->shape().max_steps == steps_limit_before);
            CHECK(scene.floor->material().friction == friction_before);
        }
    }
}

TEST_CASE("pinning in a state without masses throws, names the particle and changes nothing", "[errors]")
{
    Simulation<float> sim(Masses::unit);
    add_cloth(sim, {.width = 4, .height = 3});
    sim.step(guide_step<float>(8));
    const State3<float> before = sim.state();
    try
    {
        sim.state().pin(7);
        FAIL("pin should have thrown");
    }
    catch (const std::logic_error& e)
    {
        CHECK(std::string(e.what()).find("particle 7") != std::string::npos);
        CHECK(std::string(e.what()).find("Masses::unit") != std::string::npos);
    }
    CHECK(sim.state() == before);
}
