// Handles: every stage handle has one shape (handle.hpp). Removed by its handle, by name or by a
// stage registered under its name, it says so through removed(), a second remove() is false, and
// a member that would act throws std::logic_error naming the handle and changes nothing.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// One stage on a fresh 8 x 8 cloth: how to add it, what its handle says, how to remove it by
/// name (empty where a stage has no registry name), and one member that acts.
struct StageUnderTest
{
    std::string what; ///< how its messages name it
    std::function<std::string(Simulation<float>&, Cloth<float>&)> by_name;
    std::function<void(Simulation<float>&, Cloth<float>&, std::function<void()>&, std::function<bool()>&,
                       std::function<bool()>&)>
        add; ///< sets act, removed and remove
};

std::vector<StageUnderTest> every_stage()
{
    using Act = std::function<void()>;
    using Ask = std::function<bool()>;
    const auto projection = [](const std::string& name) {
        return [name](Simulation<float>& sim, Cloth<float>&) {
            sim.remove_position_projection(name);
            return name;
        };
    };
    return {
        {"collider set 'colliders'", projection("colliders"),
         [](Simulation<float>& sim, Cloth<float>&, Act& act, Ask& removed, Ask& remove) {
             auto h = add_colliders(sim, {});
             act = [h]() mutable { h.add(PlaneCollider<float>({})); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
        {"tearing 'tearing'",
         [](Simulation<float>& sim, Cloth<float>&) {
             sim.remove_constraint_edit("tearing");
             return std::string("tearing");
         },
         [](Simulation<float>& sim, Cloth<float>&, Act& act, Ask& removed, Ask& remove) {
             auto h = add_tearing(sim, {});
             act = [h]() mutable { h.set_max_strain(0.5f); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
        {"wind 'wind'",
         [](Simulation<float>& sim, Cloth<float>&) {
             sim.remove_bulk_force("wind");
             return std::string("wind");
         },
         [](Simulation<float>& sim, Cloth<float>& cloth, Act& act, Ask& removed, Ask& remove) {
             auto h = add_wind(sim, {.cloths = {cloth}});
             act = [h]() mutable { h.set_velocity({1, 0, 0}); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
        {"self-collision 'self_collision'", projection("self_collision"),
         [](Simulation<float>& sim, Cloth<float>&, Act& act, Ask& removed, Ask& remove) {
             auto h = add_self_collision(sim, SelfCollisionOptions<float>{.thickness = 0.1f});
             act = [h]() mutable { h.set_thickness(0.2f); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
        {"tethers 'tethers'", projection("tethers"),
         [](Simulation<float>& sim, Cloth<float>& cloth, Act& act, Ask& removed, Ask& remove) {
             auto h = add_tethers(sim, cloth, TetherOptions<float>{});
             act = [h]() mutable { h.set_slack(1.1f); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
        {"strain limit 'strain_limit'", projection("strain_limit"),
         [](Simulation<float>& sim, Cloth<float>& cloth, Act& act, Ask& removed, Ask& remove) {
             auto h = add_strain_limit(sim, cloth);
             act = [h]() mutable { h.set_passes(3); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
        {"column limit 'column_limit'", projection("column_limit"),
         [](Simulation<float>& sim, Cloth<float>& cloth, Act& act, Ask& removed, Ask& remove) {
             auto h = add_column_limit(sim, cloth);
             act = [h]() mutable { h.set_solves(2); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
        {"motion constraints 'motion'", projection("motion"),
         [](Simulation<float>& sim, Cloth<float>&, Act& act, Ask& removed, Ask& remove) {
             auto h = add_motion_constraints(sim, MotionOptions<float>{.max_distance = 0.1f});
             act = [h]() mutable { h.set_max_distance(0.2f); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
    };
}

} // namespace

TEST_CASE("a stage handle removed by its handle or by name says so and refuses to act, naming itself", "[handles]")
{
    for (const auto& stage : every_stage())
        for (const bool by_name : {false, true})
        {
            INFO(stage.what << (by_name ? ", removed by name" : ", removed by its handle"));
            Simulation<float> sim;
            auto cloth = add_cloth(
                sim, {.width = 8, .height = 8, .spacing = 0.1f, .pinned = [](int, int r) { return r == 0; }});
            std::function<void()> act;
            std::function<bool()> removed, remove;
            stage.add(sim, cloth, act, removed, remove);
            CHECK_FALSE(removed());
            CHECK_NOTHROW(act());
            if (by_name)
                stage.by_name(sim, cloth);
            else
                CHECK(remove());
            CHECK(removed());
            CHECK_FALSE(remove()); // nothing left to remove
            CHECK_THROWS_AS(act(), std::logic_error);
            CHECK_THROWS_WITH(act(), "simdverlet: " + stage.what + " was removed");
            sim.step(guide_step<float>(8)); // the simulation steps on without it
            CHECK_FALSE(sim.diverged());
        }
}

TEST_CASE("a stage replaced by one registered under its name leaves the first handle removed", "[handles]")
{
    Simulation<float> sim;
    auto first = add_tearing(sim, {.max_strain = 0.2f});
    auto second = add_tearing(sim, {.max_strain = 0.3f});
    CHECK(first.removed());
    CHECK_FALSE(second.removed());
    CHECK_THROWS_WITH(first.set_max_strain(0.5f), "simdverlet: tearing 'tearing' was removed");
    CHECK_FALSE(first.remove()); // and removing it leaves the second registered
    CHECK(sim.constraint_edits().contains("tearing"));
    CHECK(second.max_strain() == 0.3f);
}

TEST_CASE("a removed cloth or strand refuses to act, naming itself, and still reports its particles", "[handles]")
{
    Simulation<float> sim;
    auto cloth = add_cloth(sim, {.width = 4, .height = 4});
    auto rope = add_strand(sim, {.count = 5});
    CHECK(cloth.remove());
    CHECK(rope.remove());
    CHECK(cloth.removed());
    CHECK(rope.removed());
    CHECK_FALSE(cloth.remove());
    CHECK_FALSE(rope.remove());
    CHECK_THROWS_WITH(cloth.pin(0, 0), "simdverlet: cloth 'cloth@0' was removed");
    CHECK_THROWS_WITH(rope.attach_to(0, 0), "simdverlet: strand 'strand@16' was removed");
    CHECK(cloth.index(3, 3) == 15); // the particles stay, and the handle still says where
    CHECK(rope.end() == 21);
    CHECK_FALSE(sim.state().is_pinned(0));
}

TEST_CASE("a removed PID controller says so and refuses to act, naming itself", "[handles]")
{
    Simulation<float> sim;
    sim.add_particle({0, 0, 0});
    auto pid = sim.add_pid_position_controller(0, {1, 0, 0});
    CHECK_FALSE(pid.removed());
    CHECK(pid.remove());
    CHECK(pid.removed());
    CHECK_FALSE(pid.remove());
    CHECK_THROWS_WITH(pid.set_target({2, 0, 0}), Catch::Matchers::ContainsSubstring("PID controller #") &&
                                                     Catch::Matchers::ContainsSubstring("was removed"));
}
