// Bad input: one row per documented misuse (the simulation's and each stage's). Each must throw the
// stated standard exception, name the offending value in its message, and leave the simulation,
// its constraints, its stages (and the state they save) and its colliders as they were.
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

/// The scene every row runs against: the guide's sheet as a cloth, a rope, a collider set holding
/// a plane and an SDF, and a wind named "breeze" that blows on nothing but keeps a clock (a stage
/// with state, for snapshots to carry), stepped a few frames.
struct Scene
{
    Simulation<float> sim;
    std::optional<Cloth<float>> cloth;
    std::optional<Strand<float>> rope;
    ColliderSet<float> world;
    PlaneCollider<float>* floor = nullptr;
    SdfCollider<float>* ball = nullptr;
    std::optional<Wind<float>> breeze;

    explicit Scene(int frames = 10)
    {
        cloth = add_cloth(sim, {.pinned = [](int c, int r) { return r == 0 && c % 4 == 0; }}); // 0..199
        rope = add_strand(sim, {.count = 5});                                                  // 200..204
        world = add_colliders(sim, {});
        floor = &world.add(PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -8}));
        ball = &world.add(SdfCollider<float>({.field = [](const Vec3<float>& p) { return p.norm() - 1.0f; }}));
        sim.add_particle({0, 0, 5}); // 205, a free particle above every block
        breeze = add_wind(sim, {.name = "breeze"});
        for (int frame = 0; frame < frames; ++frame)
            sim.step(guide_step<float>(8));
    }
};

/// Takes a scene's simulation for the length of a row, leaving the scene's moved from, and puts it
/// back on the way out, thrown or not: so a row can misuse a moved-from simulation and the table
/// can still check that the world behind it was left alone.
struct Borrowed
{
    Simulation<float>& home;
    Simulation<float> held;

    explicit Borrowed(Simulation<float>& sim) : home(sim), held(std::move(sim)) {}
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;
    ~Borrowed() { home = std::move(held); }
};

/// Handles of every kind whose simulation is gone: the full world's, and a PID controller (#1) on
/// a simulation of one particle, both destroyed before this returns.
struct Orphans
{
    std::optional<FullWorld<float>> world;
    std::optional<PidController<float>> pid;
};

Orphans orphans()
{
    Orphans o;
    Simulation<float> sim;
    o.world.emplace(sim);
    Simulation<float> bare;
    bare.add_particle({0, 0, 0});
    o.pid = add_pid_controller(bare, {.particle = 0, .target = {0, 0, 0}});
    return o;
}

/// A stage state with all three functions, or with the one named left out.
StageState stage_state_without(std::string_view missing = {})
{
    StageState s{[] { return std::string("saved"); }, [](std::string_view) { return true; }, [](std::string_view) {}};
    if (missing == "save")
        s.save = {};
    if (missing == "accepts")
        s.accepts = {};
    if (missing == "load")
        s.load = {};
    return s;
}

/// A snapshot of another scene, one frame further on (so restoring it would change the state, the
/// step count and the breeze's clock), after `edit` changed which stages keep state there.
Snapshot<float> snapshot_of_another(const std::function<void(Scene&)>& edit)
{
    Scene other(11);
    edit(other);
    return snapshot(other.sim);
}

const std::string kDestroyed = " was used after its simulation was destroyed";

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
        {"slot out of 0..3", [](Scene& x) { x.sim.constraints().set_slot(3, 4, 5, 0.5f, 1.0f); }, Kind::out_of_range,
         "slot 4"},
        {"negative slot", [](Scene& x) { x.sim.constraints().clear_slot(3, -1); }, Kind::out_of_range, "slot -1"},
        {"neighbour out of range", [](Scene& x) { x.sim.constraints().set_slot(3, 0, 999, 0.5f, 1.0f); },
         Kind::out_of_range, "neighbour 999"},
        {"particle out of range", [](Scene& x) { x.sim.constraints().set_slot(500, 0, 1, 0.5f, 1.0f); },
         Kind::out_of_range, "particle 500"},
        {"self constraint", [](Scene& x) { x.sim.constraints().set_slot(7, 0, 7, 0.5f, 1.0f); }, Kind::invalid_argument,
         "particle 7"},
        {"NaN stiffness", [](Scene& x) { x.sim.constraints().set_slot(3, 0, 4, 0.5f, kNaN); }, Kind::invalid_argument,
         "NaN"},
        {"negative stiffness", [](Scene& x) { x.sim.connect(2, 90, 0.5f, -3.0f); }, Kind::invalid_argument, "-3"},
        {"NaN rest length", [](Scene& x) { x.sim.connect(2, 90, kNaN, 1.0f); }, Kind::invalid_argument, "NaN"},
        {"connect_within_layer with no free slot",
         [](Scene& x) { x.sim.constraints().connect_within_layer(25, 205, 0.5f, 1.0f); }, Kind::logic_error,
         "particle 25"},
        {"self-collision with a NaN thickness",
         [](Scene& x) { add_self_collision(x.sim, SelfCollisionOptions<float>{.thickness = kNaN}); },
         Kind::invalid_argument, "thickness must be finite and > 0, got NaN"},
        {"self-collision with negative friction",
         [](Scene& x) { add_self_collision(x.sim, SelfCollisionOptions<float>{.friction = -0.25f}); },
         Kind::invalid_argument, "got -0.25"},
        {"self-collision over a range past the simulation",
         [](Scene& x) { add_self_collision(x.sim, SelfCollisionOptions<float>{.range = {.begin = 200, .end = 300}}); },
         Kind::out_of_range, "[200, 300) is not inside the 206 particles"},
        {"zero dt", [](Scene& x) { x.sim.step({.dt = 0.0f}); }, Kind::invalid_argument, "dt"},
        {"negative dt", [](Scene& x) { x.sim.step({.dt = -0.01f}); }, Kind::invalid_argument, "-0.01"},
        {"NaN dt", [](Scene& x) { x.sim.step({.dt = kNaN}); }, Kind::invalid_argument, "NaN"},
        {"damping above 1", [](Scene& x) { x.sim.step({.damping = 1.5f}); }, Kind::invalid_argument, "1.5"},
        {"NaN gravity",
         [](Scene& x) {
             x.sim.step({.gravity = {0, kNaN, 0}});
         },
         Kind::invalid_argument, "NaN"},
        {"negative iterations", [](Scene& x) { x.sim.step({.iterations = -2}); }, Kind::invalid_argument, "-2"},
        {"zero substeps", [](Scene& x) { x.sim.step({.substeps = 0}); }, Kind::invalid_argument, "substeps"},
        {"pin out of range", [](Scene& x) { x.sim.state().pin(1000); }, Kind::out_of_range, "particle 1000"},
        {"negative inverse mass", [](Scene& x) { x.sim.state().set_inverse_mass(4, -1.0f); }, Kind::invalid_argument,
         "-1"},
        {"NaN position",
         [](Scene& x) {
             x.sim.add_particle({kNaN, 0, 0});
         },
         Kind::invalid_argument, "NaN"},
        {"teleport to infinity",
         [](Scene& x) {
             x.sim.state().set_position(3, {0, std::numeric_limits<float>::infinity(), 0});
         },
         Kind::invalid_argument, "inf"},
        {"remove out of range", [](Scene& x) { x.sim.queue_remove(300); }, Kind::out_of_range, "particle 300"},
        {"a removal that would renumber a cloth", [](Scene& x) { x.sim.queue_remove(10); }, Kind::logic_error,
         "particle 10"},
        {"a removal below a rope", [](Scene& x) { x.sim.queue_remove(199); }, Kind::logic_error, "particle 199"},
        {"a degenerate plane normal",
         [](Scene& x) {
             x.floor->set_normal({0, 0, 0});
         },
         Kind::invalid_argument, "(0, 0, 0)"},
        {"max_steps < 1", [](Scene& x) { x.ball->set_max_steps(0); }, Kind::invalid_argument, "got 0"},
        {"an attach with no free slot", [](Scene& x) { x.rope->attach_to(x.cloth->index(5, 5), 0); }, Kind::logic_error,
         "particle 105"},
        {"a negative collider friction", [](Scene& x) { x.floor->set_friction(-0.1f); }, Kind::invalid_argument,
         "-0.1"},
        {"force generator on a missing particle",
         [](Scene& x) {
             x.sim.add_force_generator(300, [](const State3<float>&, std::int32_t, float) { return Vec3<float>(); });
         },
         Kind::out_of_range, "particle 300"},
        {"PID on a missing particle",
         [](Scene& x) {
             add_pid_controller(x.sim, {.particle = 250, .target = {0, 0, 0}});
         },
         Kind::out_of_range, "particle 250"},
        {"PID with a negative gain",
         [](Scene& x) {
             add_pid_controller(x.sim, {.particle = 5, .target = {0, 0, 0}, .gains = {.kp = -1.0f}});
         },
         Kind::invalid_argument, "-1"},

        // A moved-from simulation: every use but assignment and destruction is refused.
        {"a moved-from simulation stepped",
         [](Scene& x) {
             Borrowed b(x.sim);
             x.sim.step(guide_step<float>(8));
         },
         Kind::logic_error, "moved from"},
        {"a particle added to a moved-from simulation",
         [](Scene& x) {
             Borrowed b(x.sim);
             x.sim.add_particle({0, 0, 0});
         },
         Kind::logic_error, "moved from"},
        {"a moved-from simulation's state read",
         [](Scene& x) {
             Borrowed b(x.sim);
             (void)x.sim.state();
         },
         Kind::logic_error, "moved from"},
        {"a cloth added to a moved-from simulation",
         [](Scene& x) {
             Borrowed b(x.sim);
             add_cloth(x.sim, {});
         },
         Kind::logic_error, "moved from"},
        {"a snapshot restored into a moved-from simulation",
         [](Scene& x) {
             Borrowed b(x.sim);
             restore(x.sim, snapshot(b.held));
         },
         Kind::logic_error, "moved from"},

        // A handle whose simulation was destroyed names itself; the scene's live simulation is
        // never touched in its place.
        {"a cloth pinned after its simulation was destroyed",
         [](Scene&) {
             orphans().world->cloth.pin({0, 0});
         },
         Kind::logic_error, "cloth 'cloth@0'" + kDestroyed},
        {"a cloth grabbed after its simulation was destroyed",
         [](Scene&) {
             orphans().world->cloth.grab_nearest({0, 0, 0});
         },
         Kind::logic_error, "cloth 'cloth@0'" + kDestroyed},
        {"a cloth stepped after its simulation was destroyed",
         [](Scene&) { orphans().world->cloth.step(guide_step<float>(8)); }, Kind::logic_error,
         "cloth 'cloth@0'" + kDestroyed},
        // A cloth holding a grab reports its own simulation gone before it lets go.
        {"a grabbing cloth removed after its simulation was destroyed", [](Scene&) { orphans().world->cloth.remove(); },
         Kind::logic_error, "cloth 'cloth@0'" + kDestroyed},
        {"a self-collision removed after its simulation was destroyed", [](Scene&) { orphans().world->self.remove(); },
         Kind::logic_error, "self-collision 'self_collision'" + kDestroyed},
        {"a strand tied after its simulation was destroyed", [](Scene&) { orphans().world->rope.attach_to(0, 3); },
         Kind::logic_error, "strand 'strand@200'" + kDestroyed},
        {"a strand's node read after its simulation was destroyed", [](Scene&) { orphans().world->rope.position(0); },
         Kind::logic_error, "strand 'strand@200'" + kDestroyed},
        {"tearing removed after its simulation was destroyed", [](Scene&) { orphans().world->tearing.remove(); },
         Kind::logic_error, "tearing 'tearing'" + kDestroyed},
        {"wind removed after its simulation was destroyed", [](Scene&) { orphans().world->wind.remove(); },
         Kind::logic_error, "wind 'wind@cloth@0'" + kDestroyed},
        {"a collider set removed after its simulation was destroyed",
         [](Scene&) { orphans().world->colliders.remove(); }, Kind::logic_error,
         "collider set 'colliders'" + kDestroyed},
        {"a PID target moved after its simulation was destroyed",
         [](Scene&) {
             orphans().pid->set_target({1, 1, 1});
         },
         Kind::logic_error, "PID controller #1" + kDestroyed},
        {"a PID's particle read after its simulation was destroyed", [](Scene&) { (void)orphans().pid->particle(); },
         Kind::logic_error, "PID controller #1" + kDestroyed},
        {"a PID removed after its simulation was destroyed", [](Scene&) { orphans().pid->remove(); }, Kind::logic_error,
         "PID controller #1" + kDestroyed},

        // A snapshot restores only into a simulation with the same stateful stages; the check
        // comes before anything loads, so the breeze's clock does not move either.
        {"a snapshot with state for a stage this simulation lacks",
         [](Scene& x) { restore(x.sim, snapshot_of_another([](Scene& o) { add_tearing(o.sim, {}); })); },
         Kind::logic_error, "stage 'tearing', which this simulation does not have registered"},
        {"a snapshot without state for a stage this simulation has",
         [](Scene& x) { restore(x.sim, snapshot_of_another([](Scene& o) { o.breeze->remove(); })); }, Kind::logic_error,
         "no state for stage 'breeze'"},
        {"a snapshot holding state its stage does not accept",
         [](Scene& x) {
             auto snap = snapshot_of_another([](Scene&) {});
             REQUIRE(snap.stages.size() == 1);
             snap.stages[0].second += "?";
             restore(x.sim, snap);
         },
         Kind::invalid_argument, "stage 'breeze' does not accept"},

        // Stage state needs a name and all three functions; a bad one replaces nothing.
        {"stage state with an empty name", [](Scene& x) { x.sim.add_stage_state("", stage_state_without()); },
         Kind::invalid_argument, "non-empty name"},
        {"stage state without save", [](Scene& x) { x.sim.add_stage_state("mine", stage_state_without("save")); },
         Kind::invalid_argument, "stage state 'mine' lacks"},
        {"stage state without accepts", [](Scene& x) { x.sim.add_stage_state("mine", stage_state_without("accepts")); },
         Kind::invalid_argument, "stage state 'mine' lacks"},
        {"stage state without load", [](Scene& x) { x.sim.add_stage_state("mine", stage_state_without("load")); },
         Kind::invalid_argument, "stage state 'mine' lacks"},
        {"stage state without load replacing the breeze's",
         [](Scene& x) { x.sim.add_stage_state("breeze", stage_state_without("load")); }, Kind::invalid_argument,
         "stage state 'breeze' lacks"},
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
            const auto stage_states_before = snapshot(sim).stages; // names and saved bytes
            const auto bulk_forces_before = sim.bulk_forces().names();
            const auto projections_before = sim.position_projections().names();
            const auto edits_before = sim.constraint_edits().names();
            const float breeze_clock_before = scene.breeze->time();
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
            CHECK(snapshot(sim).stages == stage_states_before);
            CHECK(sim.bulk_forces().names() == bulk_forces_before);
            CHECK(sim.position_projections().names() == projections_before);
            CHECK(sim.constraint_edits().names() == edits_before);
            CHECK(scene.breeze->time() == breeze_clock_before);
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
