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
        {"wind 'wind@cloth@0'",
         [](Simulation<float>& sim, Cloth<float>&) {
             sim.remove_bulk_force("wind@cloth@0");
             return std::string("wind@cloth@0");
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
        {"tethers 'tethers@cloth@0'", projection("tethers@cloth@0"),
         [](Simulation<float>& sim, Cloth<float>& cloth, Act& act, Ask& removed, Ask& remove) {
             auto h = add_tethers(sim, TethersOptions<float>{.cloth = cloth});
             act = [h]() mutable { h.set_slack(1.1f); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
        {"strain limit 'strain_limit@cloth@0'", projection("strain_limit@cloth@0"),
         [](Simulation<float>& sim, Cloth<float>& cloth, Act& act, Ask& removed, Ask& remove) {
             auto h = add_strain_limit(sim, {.cloth = cloth});
             act = [h]() mutable { h.set_passes(3); };
             removed = [h] { return h.removed(); };
             remove = [h]() mutable { return h.remove(); };
         }},
        {"motion constraints 'motion'", projection("motion"),
         [](Simulation<float>& sim, Cloth<float>&, Act& act, Ask& removed, Ask& remove) {
             auto h = add_motion_constraints(sim, MotionConstraintsOptions<float>{.max_distance = 0.1f});
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

TEST_CASE("a second stage under a name that exists is refused naming it, and the first stays", "[handles]")
{
    // Tethers on two garments without names: each is named after its cloth, so both stay.
    Simulation<float> sim;
    auto shirt = add_cloth(sim,
                           {.width = 6, .height = 6, .pinned = [](int, int r) { return r == 0; }, .name = "shirt"});
    auto skirt = add_cloth(sim,
                           {.width = 6, .height = 6, .pinned = [](int, int r) { return r == 0; }, .name = "skirt"});
    const auto first = add_tethers(sim, {.cloth = shirt});
    const auto second = add_tethers(sim, {.cloth = skirt});
    CHECK(first.name() == "tethers@shirt");
    CHECK(second.name() == "tethers@skirt");
    CHECK_FALSE(first.removed());

    // The same cloth twice: refused, naming the stage, with nothing registered or replaced.
    const auto stages = sim.position_projections().names();
    CHECK_THROWS_WITH(add_tethers(sim, {.cloth = shirt, .slack = 1.1f}),
                      Catch::Matchers::ContainsSubstring("'tethers@shirt' is registered already"));
    CHECK(sim.position_projections().names() == stages);
    CHECK(first.slack() == 1.0f);
    const auto tearing = add_tearing(sim, {.max_strain = 0.2f});
    CHECK_THROWS_WITH(add_tearing(sim, {.max_strain = 0.3f}), Catch::Matchers::ContainsSubstring("'tearing'"));
    CHECK(tearing.max_strain() == 0.2f);

    // A user's stage is replaced only when the call asks, keeping its place in the pipeline.
    int ran = 0;
    sim.add_position_projection("mine", [&](State3<float>&, float) { ran = 1; });
    CHECK_THROWS_AS(sim.add_position_projection("mine", [&](State3<float>&, float) { ran = 2; }),
                    std::invalid_argument);
    sim.add_position_projection(
        "mine", [&](State3<float>&, float) { ran = 3; }, OnExistingName::replace);
    CHECK(sim.position_projections().names().back() == "mine");
    sim.step(guide_step<float>(1));
    CHECK(ran == 3);
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
    CHECK_THROWS_WITH(cloth.pin({0, 0}), "simdverlet: cloth 'cloth@0' was removed");
    CHECK_THROWS_WITH(rope.attach_to(0, 0), "simdverlet: strand 'strand@16' was removed");
    CHECK(cloth.index(3, 3) == 15); // the particles stay, and the handle still says where
    CHECK(rope.end() == 21);
    CHECK_FALSE(sim.state().is_pinned(0));
}

namespace
{
/// A default-constructed stage handle reports an empty stage that was removed and refuses to act.
template <class Handle>
void check_unset_stage(Handle handle)
{
    CHECK(handle.removed());
    CHECK(handle.name().empty());
    CHECK_FALSE(handle.remove());
}
} // namespace

TEST_CASE("a default-constructed handle reads as removed, reports nothing and refuses to act", "[handles]")
{
    check_unset_stage(Tethers<float>{});
    check_unset_stage(StrainLimit<float>{});
    check_unset_stage(MotionConstraints<float>{});
    check_unset_stage(SelfCollision<float>{});
    check_unset_stage(Tearing<float>{});
    check_unset_stage(Wind<float>{});

    ColliderSet<float> colliders;
    check_unset_stage(colliders);
    CHECK(colliders.size() == 0);
    CHECK(colliders.contacts() == 0);
    CHECK_THROWS_WITH(colliders.set_relaxations(2), "simdverlet: this handle was never given a stage");
    CHECK_THROWS_AS(colliders.add(PlaneCollider<float>({.normal = {0, -1, 0}, .offset = 0})), std::logic_error);
    CHECK_THROWS_AS(colliders[0], std::out_of_range);

    Cloth<float> cloth;
    CHECK(cloth.removed());
    CHECK(cloth.count() == 0);
    CHECK_FALSE(cloth.is_grid());
    CHECK_THROWS_WITH(cloth.pin(std::size_t(0)), "simdverlet: this cloth handle was never given a cloth");
    CHECK_THROWS_WITH(cloth.pin({0, 0}), "simdverlet: this cloth handle was never given a cloth");
    CHECK_FALSE(cloth.remove());
    CHECK_FALSE(cloth.release());
    // A stage given it refuses it as not its simulation's.
    Simulation<float> sim;
    add_cloth(sim, {});
    CHECK_THROWS_AS(add_tethers(sim, {.cloth = cloth}), std::invalid_argument);
    CHECK(sim.position_projections().empty());

    Strand<float> rope;
    CHECK(rope.removed());
    CHECK(rope.count() == 0);
    CHECK_THROWS_WITH(rope.node(0), "simdverlet: this strand handle was never given a strand");
    CHECK_FALSE(rope.remove());
}

TEST_CASE("a removed PID controller says so and refuses to act, naming itself", "[handles]")
{
    Simulation<float> sim;
    sim.add_particle({0, 0, 0});
    auto pid = add_pid_controller(sim, {.particle = 0, .target = {1, 0, 0}});
    CHECK_FALSE(pid.removed());
    CHECK(pid.remove());
    CHECK(pid.removed());
    CHECK_FALSE(pid.remove());
    CHECK_THROWS_WITH(pid.set_target({2, 0, 0}), Catch::Matchers::ContainsSubstring("PID controller #") &&
                                                     Catch::Matchers::ContainsSubstring("was removed"));
}
