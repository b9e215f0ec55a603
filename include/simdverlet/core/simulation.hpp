// Simulation<T>: one State3, the constraint layers over it (ConstraintLayers: layer 0 covers every
// particle, further layers the ranges that need more slots), and the step pipeline. The
// world layer (cloth, strands, colliders, tearing, wind) plugs in only through the three stage
// registries (step.hpp); the core knows nothing of any of them.
//
// A substep runs the stages of StepStage (step.hpp) in its order, the one place the order is written.
//
// Ownership: a Simulation owns its World (world.hpp, in detail) through a pointer, so moving the
// Simulation moves only that pointer. Stages registered on the world and the handles the world
// layer returns refer to the World, which never moves; handles hold it weakly and follow one
// liveness rule (handle.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simdverlet/core/constraint_layers.hpp"
#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/controllers.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/parallel.hpp"
#include "simdverlet/core/stage_state.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/core/step.hpp"
#include "simdverlet/core/world.hpp"

namespace simdverlet
{

/// A simulation: particles, their constraints and the stages registered on them, stepped by
/// step(). Movable, not copyable: moving it (a growing std::vector of simulations, a return by
/// value) keeps every handle and stage working, since they refer to its world, which stays put.
/// A second simulation is built, or restored from a snapshot, never copied. A moved-from
/// simulation may only be assigned to or destroyed; anything else reports a logic_error.
template <class T>
class Simulation
{
  public:
    using Scalar = T;
    /// A force on one particle, added to its accumulator in step 4.
    using ForceGenerator = typename detail::World<T>::ForceGenerator;
    /// Bulk forces and position projections see the whole state.
    using StateStage = typename detail::World<T>::StateStage;
    using ConstraintEdit = typename detail::World<T>::ConstraintEdit;

    explicit Simulation(Masses masses = Masses::per_particle) : m_world(std::make_shared<detail::World<T>>(masses)) {}
    Simulation(Simulation&&) noexcept = default;
    Simulation& operator=(Simulation&&) noexcept = default;
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

    State3<T>& state() { return world().state(); }
    const State3<T>& state() const { return world().state(); }
    /// Constraint layer 0, which covers every particle: all a simulation of grids and strands has.
    DirectedConstraints4<T>& constraints() { return world().constraints(); }
    const DirectedConstraints4<T>& constraints() const { return world().constraints(); }
    /// Every constraint layer, layer 0 first (docs/architecture.md, "Layers").
    ConstraintLayers<T>& constraint_layers() { return world().constraint_layers(); }
    const ConstraintLayers<T>& constraint_layers() const { return world().constraint_layers(); }
    std::size_t size() const { return world().size(); }

    /// Appends a particle at rest with empty constraint slots and returns its index, the one
    /// index type every accessor takes. inv_mass 0 pins it. The only way to add a particle.
    std::size_t add_particle(const Vec3<T>& position, T inv_mass = T(1))
    {
        return world().add_particle(position, inv_mass);
    }

    /// A symmetric spring between particles i and j: each side spends a free slot in its lowest
    /// layer that has one, and a layer is extended or added over a side's padding block where none
    /// has. Returns where the two halves went. Throws, changing nothing, on an index out of range,
    /// i == j, or a rest length or stiffness that is negative or not finite.
    std::pair<SlotRef, SlotRef> connect(std::size_t i, std::size_t j, T rest, T stiffness)
    {
        return world().connect(i, j, rest, stiffness);
    }

    // ---- stage registries (docs/architecture.md, "Adding a stage"): a name registered again is an
    // error, unless the call asks to replace that stage, which keeps its place in the pipeline ----

    void add_bulk_force(const std::string& name, StateStage fn, OnExistingName on = OnExistingName::refuse)
    {
        world().add_bulk_force(name, std::move(fn), on);
    }
    /// Removing a stage also drops the state it saved for snapshots under the same name.
    bool remove_bulk_force(const std::string& name) { return world().remove_bulk_force(name); }
    void add_position_projection(const std::string& name, StateStage fn, OnExistingName on = OnExistingName::refuse)
    {
        world().add_position_projection(name, std::move(fn), on);
    }
    bool remove_position_projection(const std::string& name) { return world().remove_position_projection(name); }
    void add_constraint_edit(const std::string& name, ConstraintEdit fn, OnExistingName on = OnExistingName::refuse)
    {
        world().add_constraint_edit(name, std::move(fn), on);
    }
    bool remove_constraint_edit(const std::string& name) { return world().remove_constraint_edit(name); }

    const StageRegistry<StateStage>& bulk_forces() const { return world().bulk_forces(); }
    const StageRegistry<StateStage>& position_projections() const { return world().position_projections(); }
    const StageRegistry<ConstraintEdit>& constraint_edits() const { return world().constraint_edits(); }

    /// Registers the state a stage keeps between steps under the stage's name, so snapshots save
    /// and restore it (a user stage with a clock or a cache registers one too). Replaces one of
    /// the same name; removing the stage by name drops it.
    void add_stage_state(const std::string& name, StageState state) { world().add_stage_state(name, std::move(state)); }
    bool remove_stage_state(const std::string& name) { return world().remove_stage_state(name); }

    // ---- force generators and controllers ---------------------------------------------------

    /// Registers a force on particle i, evaluated every step; returns an id for removal.
    std::uint64_t add_force_generator(std::size_t i, ForceGenerator fn)
    {
        return world().add_force_generator(i, std::move(fn));
    }
    bool remove_force_generator(std::uint64_t id) { return world().remove_force_generator(id); }
    /// The particle a generator acts on now (removals below it renumber it); empty once it is gone.
    std::optional<std::size_t> force_generator_particle(std::uint64_t id) const
    {
        return world().force_generator_particle(id);
    }
    std::size_t force_generator_count() const { return world().force_generator_count(); }

    // ---- removals -----------------------------------------------------------------------------

    /// Queues particle i for removal at the start of the next step. Particles above it shift down
    /// by one; slots that pointed at it are cleared, all others renumbered. Refused for a particle
    /// inside or below a cloth or strand, since removing it would renumber that block.
    void queue_remove(std::size_t i) { world().queue_remove(i); }
    std::size_t pending_removals() const { return world().pending_removals(); }

    // ---- stepping ---------------------------------------------------------------------------

    /// Advances the simulation by params.dt, in params.substeps equal steps, each keeping
    /// damping^(1/substeps) of its velocity. The callback runs in step 6 of every substep. Throws
    /// std::invalid_argument, before changing anything, on a non-positive or non-finite dt,
    /// damping outside [0, 1], non-finite gravity, negative iterations or substeps < 1.
    void step(const StepParams<T>& params, const StateStage& accumulate_forces = {})
    {
        world().step(params, accumulate_forces);
    }

    /// Selects the xsimd kernels (default) or their scalar twins, for the core and for every stage
    /// registered on the simulation; the bits are the same (tested).
    void set_vectorized(bool on) { world().set_vectorized(on); }
    bool vectorized() const { return world().vectorized(); }

    /// Fused (default): solve and integrate in one sweep that reads the positions once, writes the
    /// new ones into the previous-position array and swaps the two, and reads the accumulators only
    /// when a force stage wrote them. Unfused: the reference order of steps 7 and 8 as two passes,
    /// the solve adding into the accumulators. Both give the same bits (tested). After a fused
    /// step the accumulators hold only what the force stages added (zero without any); after an
    /// unfused one they include the springs.
    void set_fused(bool on) { world().set_fused(on); }
    bool fused() const { return world().fused(); }

    /// The grid fast path (default on): a lane group whose neighbours in a slot sit at one constant
    /// index offset is read with contiguous loads instead of a gather. Bit-identical either way.
    void set_grid_path(bool on) { world().set_grid_path(on); }
    bool grid_path() const { return world().grid_path(); }

    /// Spreads the particle sweeps (solve, integrate, collider passes) over an executor, in chunks
    /// of about `grain` particles in whole 64-byte blocks, as many as a multiple of the executor's
    /// threads. nullptr runs serially. Results do not depend on the executor, its thread count or
    /// the grain.
    void set_executor(std::shared_ptr<Executor> executor, std::size_t grain = 8192)
    {
        world().set_executor(std::move(executor), grain);
    }
    Executor* executor() const { return world().executor(); }

    /// True from the first step that left a coordinate non-finite. Nothing is clamped.
    bool diverged() const { return world().diverged(); }
    std::uint64_t step_count() const { return world().step_count(); }

  private:
    template <class U>
    friend const std::shared_ptr<detail::World<U>>& detail::world_of(const Simulation<U>& sim);

    detail::World<T>& world() const
    {
        if (!m_world)
            detail::raise<std::logic_error>("simdverlet: this Simulation was moved from; assign a simulation to it "
                                            "before using it again");
        return *m_world;
    }

    std::shared_ptr<detail::World<T>> m_world;
};

namespace detail
{
/// The world behind a simulation, for the world layer's free functions (add_cloth, add_colliders,
/// ...), which register stages on it and hand out handles that refer to it.
template <class T>
const std::shared_ptr<World<T>>& world_of(const Simulation<T>& sim)
{
    sim.world(); // reports a moved-from simulation
    return sim.m_world;
}
} // namespace detail

/// Pulls `options.particle` toward `options.target` with a PID controller acting through the force
/// accumulators (controllers.hpp). The handle moves the target and removes the controller; the
/// controller's integral and previous error are saved with snapshots. Throws, adding nothing, on a
/// particle out of range (std::out_of_range), a target that is not finite or a negative gain.
template <class T>
PidController<T> add_pid_controller(Simulation<T>& sim, const PidControllerOptions<T>& options)
{
    const auto& world = detail::world_of(sim);
    return world->add_pid_position_controller(options.particle, options.target, options.gains, world);
}

} // namespace simdverlet
