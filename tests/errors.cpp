// Bad input: one row per documented misuse the core owns (DESIGN §5). Each must throw the stated
// standard exception, name the offending value in its message, and leave the simulation as it was.
#include <functional>
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

struct Row
{
    std::string what;
    std::function<void(Simulation<float>&)> action;
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

TEST_CASE("every bad input the core owns throws, names the value and changes nothing", "[errors]")
{
    const std::vector<Row> rows = {
        {"slot out of 0..3", [](auto& s) { s.constraints().set_slot(3, 4, 5, 0.5f, 1.0f); }, Kind::out_of_range, "slot 4"},
        {"negative slot", [](auto& s) { s.constraints().clear_slot(3, -1); }, Kind::out_of_range, "slot -1"},
        {"neighbour out of range", [](auto& s) { s.constraints().set_slot(3, 0, 999, 0.5f, 1.0f); }, Kind::out_of_range,
         "neighbour 999"},
        {"particle out of range", [](auto& s) { s.constraints().set_slot(500, 0, 1, 0.5f, 1.0f); }, Kind::out_of_range,
         "particle 500"},
        {"self constraint", [](auto& s) { s.constraints().set_slot(7, 0, 7, 0.5f, 1.0f); }, Kind::invalid_argument,
         "particle 7"},
        {"NaN stiffness", [](auto& s) { s.constraints().set_slot(3, 0, 4, 0.5f, kNaN); }, Kind::invalid_argument, "NaN"},
        {"negative stiffness", [](auto& s) { s.constraints().connect(2, 90, 0.5f, -3.0f); }, Kind::invalid_argument,
         "-3"},
        {"NaN rest length", [](auto& s) { s.constraints().connect(2, 90, kNaN, 1.0f); }, Kind::invalid_argument, "NaN"},
        {"connect with no free slot", [](auto& s) { s.constraints().connect(25, 90, 0.5f, 1.0f); }, Kind::logic_error,
         "particle 25"},
        {"zero dt", [](auto& s) { s.step({.dt = 0.0f}); }, Kind::invalid_argument, "dt"},
        {"negative dt", [](auto& s) { s.step({.dt = -0.01f}); }, Kind::invalid_argument, "-0.01"},
        {"NaN dt", [](auto& s) { s.step({.dt = kNaN}); }, Kind::invalid_argument, "NaN"},
        {"damping above 1", [](auto& s) { s.step({.damping = 1.5f}); }, Kind::invalid_argument, "1.5"},
        {"NaN gravity", [](auto& s) { s.step({.gravity = {0, kNaN, 0}}); }, Kind::invalid_argument, "NaN"},
        {"negative iterations", [](auto& s) { s.step({.iterations = -2}); }, Kind::invalid_argument, "-2"},
        {"zero substeps", [](auto& s) { s.step({.substeps = 0}); }, Kind::invalid_argument, "substeps"},
        {"pin out of range", [](auto& s) { s.state().pin(1000); }, Kind::out_of_range, "particle 1000"},
        {"negative inverse mass", [](auto& s) { s.state().set_inverse_mass(4, -1.0f); }, Kind::invalid_argument, "-1"},
        {"NaN position", [](auto& s) { s.add_particle({kNaN, 0, 0}); }, Kind::invalid_argument, "NaN"},
        {"teleport to infinity",
         [](auto& s) { s.state().set_position(3, {0, std::numeric_limits<float>::infinity(), 0}); },
         Kind::invalid_argument, "inf"},
        {"remove out of range", [](auto& s) { s.queue_remove(300); }, Kind::out_of_range, "particle 300"},
        {"remove inside a protected block", [](auto& s) { s.queue_remove(10); }, Kind::logic_error, "particle 10"},
        {"remove below a protected block", [](auto& s) { s.queue_remove(1); }, Kind::logic_error, "particle 1"},
        {"force generator on a missing particle",
         [](auto& s) { s.add_force_generator(300, [](const State3<float>&, std::int32_t, float) { return Vec3<float>(); }); },
         Kind::out_of_range, "particle 300"},
        {"PID on a missing particle", [](auto& s) { s.add_pid_position_controller(250, {0, 0, 0}); }, Kind::out_of_range,
         "particle 250"},
        {"PID with a negative gain",
         [](auto& s) { s.add_pid_position_controller(5, {0, 0, 0}, {.kp = -1.0f}); }, Kind::invalid_argument, "-1"},
    };

    for (const auto& row : rows)
    {
        DYNAMIC_SECTION(row.what)
        {
            auto sim = guide_sheet<float>(60.0f); // 200 particles
            sim.add_particle({0, 0, 5});           // a spare one, above the protected block
            sim.protect_range(5, 200, "cloth 'sheet'");
            for (int frame = 0; frame < 10; ++frame)
                sim.step(guide_step<float>(8));
            const State3<float> state_before = sim.state();
            const DirectedConstraints4<float> constraints_before = sim.constraints();
            const auto steps_before = sim.step_count();
            const auto generators_before = sim.force_generator_count();
            bool threw = false;
            try
            {
                row.action(sim);
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
        }
    }
}
