// detail::World<T>: everything a simulation is (the state, its constraint layers, the stage
// registries, force generators and controllers, the executor) and the step that runs the stages of
// StepStage over them. It lives at a fixed address for its whole life: Simulation (simulation.hpp)
// owns it through a pointer, and stages and handles refer to it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simdverlet/core/constraint_layers.hpp"
#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/contact_planes.hpp"
#include "simdverlet/core/controllers.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/log.hpp"
#include "simdverlet/core/parallel.hpp"
#include "simdverlet/core/stage_state.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/core/step.hpp"
#include "simdverlet/kernels/core.hpp"

namespace simdverlet
{

template <class T>
class Simulation;

namespace detail
{
template <class T>
class World;
template <class T>
const std::shared_ptr<World<T>>& world_of(const Simulation<T>& sim);
} // namespace detail

namespace detail
{
/// Call ids come from one counter for every simulation, so they never repeat.
inline std::uint64_t next_call_id() noexcept
{
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

/// Everything a simulation is: the state, its constraints, the stage registries and the step.
/// Lives at a fixed address for its whole life (Simulation holds it by pointer), which is what
/// lets stages and handles refer to it. Internal: users talk to Simulation, and the members
/// Simulation forwards to are documented there, once.
template <class T>
class World
{
  public:
    using Scalar = T;
    /// A force on one particle, added to its accumulator in step 4.
    using ForceGenerator = std::function<Vec3<T>(const State3<T>&, std::size_t particle, T dt)>;
    /// Bulk forces and position projections see the whole state.
    using StateStage = std::function<void(State3<T>&, T dt)>;
    /// A constraint edit sees every layer; one written for a single DirectedConstraints4& still
    /// registers and is handed layer 0.
    using ConstraintEdit = std::function<void(State3<T>&, ConstraintLayers<T>&, T dt)>;

    explicit World(Masses masses) : m_state(masses) {}
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    State3<T>& state() noexcept { return m_state; }
    const State3<T>& state() const noexcept { return m_state; }
    DirectedConstraints4<T>& constraints() noexcept { return m_layers.base(); }
    const DirectedConstraints4<T>& constraints() const noexcept { return m_layers.base(); }
    ConstraintLayers<T>& constraint_layers() noexcept { return m_layers; }
    const ConstraintLayers<T>& constraint_layers() const noexcept { return m_layers; }
    std::size_t size() const noexcept { return m_state.size(); }

    std::size_t add_particle(const Vec3<T>& position, T inv_mass)
    {
        const std::size_t i = m_state.add(position, inv_mass);
        m_layers.resize(m_state.size());
        return i;
    }

    std::pair<SlotRef, SlotRef> connect(std::size_t i, std::size_t j, T rest, T stiffness)
    {
        return m_layers.connect(i, j, rest, stiffness);
    }

    // ---- stage registries -------------------------------------------------------------------

    void add_bulk_force(const std::string& name, StateStage fn, OnExistingName on = OnExistingName::refuse)
    {
        m_bulk_forces.add(name, std::move(fn), on);
    }
    bool remove_bulk_force(const std::string& name) { return drop_state(name, m_bulk_forces.remove(name)); }
    void add_position_projection(const std::string& name, StateStage fn, OnExistingName on = OnExistingName::refuse)
    {
        m_projections.add(name, std::move(fn), on);
    }
    bool remove_position_projection(const std::string& name) { return drop_state(name, m_projections.remove(name)); }
    void add_constraint_edit(const std::string& name, ConstraintEdit fn, OnExistingName on = OnExistingName::refuse)
    {
        m_edits.add(name, std::move(fn), on);
    }
    bool remove_constraint_edit(const std::string& name) { return drop_state(name, m_edits.remove(name)); }

    // ---- contact planes (an implicit solve reads them) ----------------------------------------

    /// Adds a source of contact planes that lives as long as `alive` (a stage's registration
    /// token): removing the stage removes its planes, in registration order among the others.
    void add_plane_source(std::weak_ptr<const void> alive, PlaneSource source)
    {
        m_plane_sources.push_back({std::move(alive), std::move(source)});
    }

    /// Asks every live source for the planes of `query`, in registration order.
    void collect_planes(const PlaneQuery& query, std::vector<ContactPlane>& out)
    {
        std::erase_if(m_plane_sources, [](const auto& s) { return s.first.expired(); });
        for (const auto& [alive, source] : m_plane_sources)
            source(query, out);
    }

    // ---- stage state (snapshots) --------------------------------------------------------------

    void add_stage_state(const std::string& name, StageState state)
    {
        if (!name.empty() && !state)
            detail::raise<std::invalid_argument>("simdverlet: stage state '" + name + "' lacks save, accepts or load");
        m_stage_states.add(name, std::move(state));
    }

    bool remove_stage_state(const std::string& name) { return m_stage_states.remove(name); }

    const std::vector<std::pair<std::string, StageState>>& stage_states() const noexcept
    {
        return m_stage_states.entries();
    }

    const StageRegistry<StateStage>& bulk_forces() const noexcept { return m_bulk_forces; }
    const StageRegistry<StateStage>& position_projections() const noexcept { return m_projections; }
    const StageRegistry<ConstraintEdit>& constraint_edits() const noexcept { return m_edits; }

    // ---- force generators and controllers ---------------------------------------------------

    std::uint64_t add_force_generator(std::size_t i, ForceGenerator fn)
    {
        m_state.check_index(i);
        if (!fn)
            detail::raise<std::invalid_argument>("simdverlet: force generator for particle " + std::to_string(i) +
                                                 " has no function");
        m_generators.push_back({m_next_id, i, std::move(fn)});
        return m_next_id++;
    }

    bool remove_force_generator(std::uint64_t id)
    {
        const auto it = find_generator(id);
        if (it == m_generators.end())
            return false;
        m_generators.erase(it);
        remove_stage_state(controller_state_name(id));
        return true;
    }

    std::optional<std::size_t> force_generator_particle(std::uint64_t id) const
    {
        const auto it = std::find_if(m_generators.begin(), m_generators.end(),
                                     [&](const auto& g) { return g.id == id; });
        return it == m_generators.end() ? std::nullopt : std::optional<std::size_t>(it->particle);
    }

    std::size_t force_generator_count() const noexcept { return m_generators.size(); }

    /// `owner` names the handle that installed the controller, for its error messages.
    PidController<T> add_pid_position_controller(std::size_t i, const Vec3<T>& target, PidGains<T> gains,
                                                 std::weak_ptr<World> self, std::string owner = {})
    {
        detail::check_gains(gains);
        if (!target.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: PID target for particle " + std::to_string(i) +
                                                 " is not finite");
        auto state = std::make_shared<detail::PidState<T>>();
        state->target = target;
        state->gains = gains;
        const std::uint64_t id = add_force_generator(
            i, [state](const State3<T>& s, std::size_t p, T dt) { return state->force(s.position(p), dt); });
        add_stage_state(controller_state_name(id), detail::pid_stage_state(state));
        return PidController<T>(std::move(self), id, std::move(state), std::move(owner));
    }

    // ---- removals -----------------------------------------------------------------------------

    /// Marks particles [begin, end) as an owned block (a cloth, a strand) that must never be
    /// renumbered: removals inside or below it are refused. Returns an id for release_range.
    std::uint64_t protect_range(std::size_t begin, std::size_t end, std::string owner)
    {
        if (begin > end || end > m_state.size())
            detail::raise<std::out_of_range>("simdverlet: range [" + std::to_string(begin) + ", " +
                                             std::to_string(end) + ") is not inside the simulation's " +
                                             std::to_string(m_state.size()) + " particles");
        for (std::int32_t r : m_pending_removals)
            if (std::size_t(r) < end)
                detail::raise<std::logic_error>("simdverlet: cannot protect " + owner + " [" + std::to_string(begin) +
                                                ", " + std::to_string(end) + "): particle " + std::to_string(r) +
                                                " below its end is queued for removal");
        m_protected.push_back({m_next_id, begin, end, std::move(owner)});
        return m_next_id++;
    }

    /// Undoes what a cloth or strand set up for particles [begin, end): clears their slots and
    /// lifts the block's removal protection. The particles stay. Returns whether it was protected.
    bool detach_block(std::size_t begin, std::size_t end, std::uint64_t protection)
    {
        for (std::size_t i = begin; i < end && i < m_state.size(); ++i)
            m_layers.clear_slots(i);
        m_layers.drop_empty_layers();
        return release_range(protection);
    }

    bool release_range(std::uint64_t id)
    {
        const auto it = std::find_if(m_protected.begin(), m_protected.end(), [&](const auto& r) { return r.id == id; });
        if (it == m_protected.end())
            return false;
        m_protected.erase(it);
        return true;
    }

    void queue_remove(std::size_t i)
    {
        m_state.check_index(i);
        check_removable(i);
        if (std::find(m_pending_removals.begin(), m_pending_removals.end(), std::int32_t(i)) ==
            m_pending_removals.end())
            m_pending_removals.push_back(std::int32_t(i));
    }

    /// Throws unless removing particle i would renumber no protected block.
    void check_removable(std::size_t i) const
    {
        for (const auto& r : m_protected)
            if (i < r.end)
                detail::raise<std::logic_error>("simdverlet: cannot remove particle " + std::to_string(i) + ": it is " +
                                                (i >= r.begin ? "inside " : "below ") + r.owner + " [" +
                                                std::to_string(r.begin) + ", " + std::to_string(r.end) +
                                                "), which removing it would renumber");
    }

    std::size_t pending_removals() const noexcept { return m_pending_removals.size(); }

    /// Renumbers particles [first, first + order.size()): the particle at order[k] becomes
    /// first + k. State, constraints and force generators follow. Refused (std::logic_error,
    /// nothing changed) where the block overlaps a protected one (a cloth's or strand's grid is its
    /// numbering) or while removals are queued, whose indices it would invalidate. `order` must be
    /// a permutation of the block (reorder builds it).
    void renumber(std::size_t first, const std::vector<std::size_t>& order)
    {
        const std::size_t last = first + order.size();
        for (const auto& r : m_protected)
            if (first < r.end && r.begin < last)
                detail::raise<std::logic_error>("simdverlet: cannot renumber particles [" + std::to_string(first) +
                                                ", " + std::to_string(last) + "): they overlap " + r.owner + " [" +
                                                std::to_string(r.begin) + ", " + std::to_string(r.end) +
                                                "), whose numbering is its layout");
        if (!m_pending_removals.empty())
            detail::raise<std::logic_error>("simdverlet: cannot renumber particles while removals are queued: the "
                                            "next step would renumber them again. Step once first.");
        std::vector<std::int32_t> where(m_state.size());
        for (std::size_t i = 0; i < where.size(); ++i)
            where[i] = std::int32_t(i);
        for (std::size_t k = 0; k < order.size(); ++k)
            where[order[k]] = std::int32_t(first + k);
        m_state.permute(first, order);
        m_layers.permute(first, order, where);
        for (auto& g : m_generators)
            g.particle = std::size_t(where[g.particle]);
    }
    /// Whether a protected block (a cloth, a strand) or a force generator refers to particle
    /// indices: restoring a snapshot of another size would leave them pointing at nothing.
    bool has_index_references() const noexcept { return !m_protected.empty() || !m_generators.empty(); }

    // ---- stepping ---------------------------------------------------------------------------

    void step(const StepParams<T>& params, const StateStage& accumulate_forces)
    {
        check(params);
        StepParams<T> sub = params;
        sub.dt = params.dt / T(params.substeps);
        // damping is per call: each of n substeps keeps its n-th root, so a second of simulated
        // time bleeds the same velocity at any substep count.
        if (params.substeps > 1)
            sub.damping = std::pow(params.damping, T(1) / T(params.substeps));
        m_call = {.call = detail::next_call_id(), .substeps = params.substeps, .dt = sub.dt, .gravity = params.gravity};
        for (int n = 0; n < params.substeps; ++n)
        {
            m_call.substep = n;
            step_once(sub, accumulate_forces);
        }
    }

    /// The call in progress (between calls: the last one, at its last substep).
    const CallProgress<T>& call_progress() const noexcept { return m_call; }

    void set_vectorized(bool on) noexcept { m_vectorized = on; }
    bool vectorized() const noexcept { return m_vectorized; }

    void set_fused(bool on) noexcept { m_fused = on; }
    bool fused() const noexcept { return m_fused; }

    void set_grid_path(bool on) noexcept { m_grid_path = on; }
    bool grid_path() const noexcept { return m_grid_path; }

    void set_executor(std::shared_ptr<Executor> executor, std::size_t grain = 8192)
    {
        if (grain == 0)
            detail::raise<std::invalid_argument>("simdverlet: executor grain must be > 0");
        m_executor = std::move(executor);
        m_grain = grain;
    }
    Executor* executor() const noexcept { return m_executor.get(); }

    /// How many executor chunks a sweep over [0, n) is cut into: about n / grain, rounded up to a
    /// multiple of the executor's threads so that they share the sweep evenly (seven chunks of the
    /// grain on two threads left one thread idle for a seventh of it). 1 when serial or when n is
    /// at most the grain; never more than the padding blocks in [0, n).
    std::size_t chunk_count(std::size_t n) const noexcept
    {
        const std::size_t block = simd::kPadLanes<T>, grain = std::max(m_grain, block);
        if (!m_executor || n <= grain)
            return 1;
        const auto threads = std::size_t(std::max(1, m_executor->threads()));
        const std::size_t chunks = ((n + grain - 1) / grain + threads - 1) / threads * threads;
        return std::min(chunks, (n + block - 1) / block);
    }

    /// Where chunk k of a sweep over [0, n) begins (k = chunk_count(n) gives n). The padding blocks
    /// of [0, n) are dealt out as evenly as whole blocks allow, so every bound but n is a whole
    /// block and a vector kernel never shares a lane group between two chunks.
    std::size_t chunk_begin(std::size_t n, std::size_t k) const noexcept { return chunk_bound(n, k, chunk_count(n)); }

    /// Calls fn(k, b, e) for every chunk k of the sweep over [0, end) that overlaps [begin, end),
    /// with [b, e) the overlap, through the executor (one call fn(0, begin, end) when serial or
    /// when the range is at most a grain). Chunks are cut on absolute indices, so two calls never
    /// share a lane group even when `begin` is not aligned.
    template <class Fn>
    void for_each_indexed_chunk(std::size_t begin, std::size_t end, Fn&& fn) const
    {
        const std::size_t count = chunk_count(end);
        if (count == 1 || end - begin <= m_grain)
        {
            fn(std::size_t(0), begin, end);
            return;
        }
        m_executor->run(count, [&](std::size_t k) {
            const std::size_t b = std::max(chunk_bound(end, k, count), begin), e = chunk_bound(end, k + 1, count);
            if (b < e)
                fn(k, b, e);
        });
    }

    /// Calls fn(b, e) over [0, n) split into the executor's chunks (one call when serial).
    template <class Fn>
    void for_each_chunk(std::size_t n, Fn&& fn) const
    {
        for_each_indexed_chunk(0, n, [&](std::size_t, std::size_t b, std::size_t e) { fn(b, e); });
    }

    /// Calls fn(b, e) over [begin, end) cut where the executor's chunks of [0, end) fall.
    template <class Fn>
    void for_each_chunk_within(std::size_t begin, std::size_t end, Fn&& fn) const
    {
        for_each_indexed_chunk(begin, end, [&](std::size_t, std::size_t b, std::size_t e) { fn(b, e); });
    }

    /// Calls fn(k) for every k in [0, count): through the executor when there is one (the calls
    /// may then run concurrently), else in order. For work cut into pieces of a fixed size, whose
    /// results are combined in order: the same result for any thread count.
    template <class Fn>
    void run_tasks(std::size_t count, Fn&& fn) const
    {
        if (!m_executor || count < 2)
        {
            for (std::size_t k = 0; k < count; ++k)
                fn(k);
            return;
        }
        m_executor->run(count, [&](std::size_t k) { fn(k); });
    }

    bool diverged() const noexcept { return m_diverged; }
    std::uint64_t step_count() const noexcept { return m_steps; }

  private:
    /// chunk_begin with the count already known: the padding blocks of [0, n) dealt out evenly.
    static std::size_t chunk_bound(std::size_t n, std::size_t k, std::size_t count) noexcept
    {
        const std::size_t block = simd::kPadLanes<T>, blocks = (n + block - 1) / block;
        return std::min(n, k * blocks / count * block);
    }

    template <class U>
    friend struct detail::SnapshotAccess;

    struct Generator
    {
        std::uint64_t id;
        std::size_t particle;
        ForceGenerator fn;
    };

    struct ProtectedRange
    {
        std::uint64_t id;
        std::size_t begin, end;
        std::string owner;
    };

    /// A stage's saved state goes with the stage: removing the stage by name drops it.
    bool drop_state(const std::string& name, bool removed)
    {
        if (removed)
            remove_stage_state(name);
        return removed;
    }

    static std::string controller_state_name(std::uint64_t id) { return "pid#" + std::to_string(id); }

    typename std::vector<Generator>::iterator find_generator(std::uint64_t id)
    {
        return std::find_if(m_generators.begin(), m_generators.end(), [&](const auto& g) { return g.id == id; });
    }

    static void check(const StepParams<T>& p)
    {
        if (!std::isfinite(p.dt) || !(p.dt > T(0)))
            detail::raise<std::invalid_argument>("simdverlet: dt must be finite and > 0, got " + detail::number(p.dt));
        if (!std::isfinite(p.damping) || p.damping < T(0) || p.damping > T(1))
            detail::raise<std::invalid_argument>("simdverlet: damping must be in [0, 1], got " +
                                                 detail::number(p.damping));
        if (!p.gravity.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: gravity (" + detail::number(p.gravity.x()) + ", " +
                                                 detail::number(p.gravity.y()) + ", " + detail::number(p.gravity.z()) +
                                                 ") is not finite");
        if (p.iterations < 0)
            detail::raise<std::invalid_argument>("simdverlet: iterations must be >= 0, got " +
                                                 std::to_string(p.iterations));
        if (p.substeps < 1)
            detail::raise<std::invalid_argument>("simdverlet: substeps must be >= 1, got " +
                                                 std::to_string(p.substeps));
    }

    /// One step of params.dt: a whole call's step, or one of its substeps.
    void step_once(const StepParams<T>& params, const StateStage& accumulate_forces)
    {
        // The stages of StepStage, in its order.
        const T dt = params.dt;
        apply_removals(); // removals
        const bool stages_write_forces = !m_generators.empty() || !m_bulk_forces.empty() || bool(accumulate_forces);
        if (stages_write_forces || !m_fused || m_accumulators_dirty) // zero_forces
            zero_accumulators();
        apply_force_generators(dt);     // force_generators
        m_bulk_forces.run(m_state, dt); // bulk_forces
        if (accumulate_forces)          // callback
            accumulate_forces(m_state, dt);
        m_accumulators_dirty = stages_write_forces || !m_fused;
        bool finite = m_fused ? solve_and_integrate(dt, params, stages_write_forces) // solve_and_integrate
                              : (solve_constraints(params.iterations), integrate(dt, params));
        m_projections.run(m_state, dt);       // position_projections
        m_edits.run(m_state, m_layers, dt);   // constraint_edits
        if (!m_projections.empty() && finite) // divergence_check
            finite = m_vectorized ? kernels::all_finite_vector<xsimd::default_arch>(m_state.arrays_view())
                                  : kernels::all_finite(m_state.arrays_view());
        ++m_steps;
        if (!finite && !m_diverged)
            report_divergence(dt, params.iterations);
    }

    kernels::IntegrateParams<T> integrate_params(T dt, const StepParams<T>& params) const
    {
        return {dt * dt, params.damping, params.gravity.x(), params.gravity.y(), params.gravity.z()};
    }

    /// Steps 7 and 8 as one sweep per chunk; the new positions land in the previous-position
    /// arrays, which then become the position arrays.
    bool solve_and_integrate(T dt, const StepParams<T>& params, bool read_accumulators)
    {
        const auto s = solve_view(params.iterations);
        const auto c = m_layers.base().arrays_view();
        const auto extra = m_layers.extra_views();
        const std::span<const ConstraintArrays<T>> layers(extra);
        const auto p = integrate_params(dt, params);
        std::atomic<bool> finite{true};
        std::atomic<std::size_t> scattered{0};
        for_each_chunk(s.size, [&](std::size_t begin, std::size_t end) {
            std::size_t chunk_scattered = 0;
            const bool ok = m_vectorized
                                ? kernels::sweep_vector<xsimd::default_arch>(s, c, layers, p, begin, end,
                                                                             params.iterations, read_accumulators,
                                                                             m_grid_path, &chunk_scattered)
                                : kernels::sweep_scalar(s, c, layers, p, begin, end, params.iterations,
                                                        read_accumulators);
            scattered.fetch_add(chunk_scattered, std::memory_order_relaxed);
            if (!ok)
                finite.store(false, std::memory_order_relaxed);
        });
        note_scattered_slots(scattered.load(), s.size, params.iterations);
        m_state.swap_positions_with_previous();
        return finite.load();
    }

    /// Whether the next solve reads scattered neighbours from packed positions: a quarter or more
    /// of this solve's lane groups, on average, read a slot's neighbours scattered (a mesh cloth's
    /// layers, a grid after `reorder`, a net wired by `connect`). A grid or a strand, whose
    /// neighbours lie at constant offsets, packs nothing. Only the speed depends on it.
    void note_scattered_slots(std::size_t scattered, std::size_t particles, int iterations)
    {
        if (m_vectorized && iterations > 0)
            m_pack_positions = 4 * scattered * simd::kLanes<T, xsimd::default_arch> >= particles;
    }

    /// The state as the solve reads it. Where the neighbours are scattered (note_scattered_slots; a
    /// simulation with further constraint layers, a mesh cloth, from its first solve) the vector
    /// solve reads them from a copy of the positions packed x, y, z and a pad per particle: one
    /// 16-byte load a neighbour where three gathers read three scattered floats. The values are the
    /// same, so the bits are too.
    StateArrays<T> solve_view(int iterations)
    {
        StateArrays<T> s = m_state.arrays_view();
        if constexpr (simd::kPackedGather<T, xsimd::default_arch>)
            if (m_vectorized && iterations > 0 && (m_pack_positions || m_layers.count() > 1))
            {
                m_packed.resize(4 * s.padded);
                T* const packed = m_packed.data();
                for_each_chunk(s.padded, [&](std::size_t begin, std::size_t end) {
                    kernels::pack_positions<xsimd::default_arch>(s, packed, begin, end);
                });
                s.packed = packed;
            }
        return s;
    }

    void apply_removals()
    {
        if (m_pending_removals.empty())
            return;
        const std::size_t n = m_state.size();
        std::vector<bool> keep(n, true);
        for (std::int32_t r : m_pending_removals)
            keep[std::size_t(r)] = false;
        std::vector<std::int32_t> remap(n, -1);
        std::int32_t next = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (keep[i])
                remap[i] = next++;
        m_state.compact(keep);
        m_layers.compact(remap, std::size_t(next));
        for (const auto& g : m_generators)
            if (remap[g.particle] < 0)
                remove_stage_state(controller_state_name(g.id));
        std::erase_if(m_generators, [&](const Generator& g) { return remap[g.particle] < 0; });
        for (auto& g : m_generators)
            g.particle = std::size_t(remap[g.particle]);
        m_pending_removals.clear();
    }

    void zero_accumulators()
    {
        const auto a = m_state.arrays_view();
        std::fill(a.ax, a.ax + a.padded, T(0));
        std::fill(a.ay, a.ay + a.padded, T(0));
        std::fill(a.az, a.az + a.padded, T(0));
    }

    void apply_force_generators(T dt)
    {
        const auto a = m_state.arrays_view();
        for (const auto& g : m_generators)
        {
            const Vec3<T> f = g.fn(m_state, g.particle, dt);
            a.ax[g.particle] += f.x();
            a.ay[g.particle] += f.y();
            a.az[g.particle] += f.z();
        }
    }

    void solve_constraints(int iterations)
    {
        if (iterations == 0)
            return;
        const auto s = solve_view(iterations);
        const auto c = m_layers.base().arrays_view();
        const auto extra = m_layers.extra_views();
        const std::span<const ConstraintArrays<T>> layers(extra);
        std::atomic<std::size_t> scattered{0};
        for_each_chunk(s.size, [&](std::size_t begin, std::size_t end) {
            if (m_vectorized)
                scattered.fetch_add(
                    kernels::accumulate_vector<xsimd::default_arch>(s, c, layers, begin, end, iterations, m_grid_path),
                    std::memory_order_relaxed);
            else
                kernels::accumulate_scalar(s, c, layers, begin, end, iterations);
        });
        note_scattered_slots(scattered.load(), s.size, iterations);
    }

    bool integrate(T dt, const StepParams<T>& params)
    {
        const auto s = m_state.arrays_view();
        const auto p = integrate_params(dt, params);
        std::atomic<bool> finite{true};
        for_each_chunk(s.size, [&](std::size_t begin, std::size_t end) {
            const bool ok = m_vectorized ? kernels::integrate_vector<xsimd::default_arch>(s, p, begin, end)
                                         : kernels::integrate_scalar(s, p, begin, end);
            if (!ok)
                finite.store(false, std::memory_order_relaxed);
        });
        return finite.load();
    }

    void report_divergence(T dt, int iterations)
    {
        m_diverged = true;
        std::ostringstream msg;
        msg.precision(std::numeric_limits<T>::max_digits10);
        msg << "step " << m_steps << " left a coordinate non-finite (dt = " << dt << ", iterations = " << iterations
            << "). The explicit solve overshoots when stiffness x iterations is too high for dt: lower the "
               "product, or split the step with substeps. Nothing was clamped.";
        log(LogLevel::warning, msg.str());
    }

    State3<T> m_state;
    ConstraintLayers<T> m_layers;
    StageRegistry<StateStage> m_bulk_forces;
    StageRegistry<StateStage> m_projections;
    StageRegistry<ConstraintEdit> m_edits;
    std::vector<Generator> m_generators;
    StageRegistry<StageState> m_stage_states;
    std::vector<ProtectedRange> m_protected;
    std::vector<std::int32_t> m_pending_removals;
    std::uint64_t m_next_id = 1;
    std::uint64_t m_steps = 0;
    CallProgress<T> m_call;
    std::vector<std::pair<std::weak_ptr<const void>, PlaneSource>> m_plane_sources;
    simd::AlignedVector<T> m_packed; ///< the solve's packed positions (solve_view); scratch, not state
    bool m_pack_positions = false;   ///< the last solve read scattered neighbours (note_scattered_slots)
    bool m_vectorized = true;
    bool m_fused = true;
    bool m_grid_path = true;
    bool m_accumulators_dirty = false; ///< a stage or an unfused solve wrote them since they were zeroed
    bool m_diverged = false;
    std::shared_ptr<Executor> m_executor;
    std::size_t m_grain = 8192;
};

/// What a handle calls before it touches its simulation: the world, or a logic_error naming the
/// handle when the simulation is gone.
template <class T>
std::shared_ptr<World<T>> lock_world(const std::weak_ptr<World<T>>& world, const std::string& handle)
{
    auto live = world.lock();
    if (!live)
        detail::raise<std::logic_error>("simdverlet: " + handle + " was used after its simulation was destroyed");
    return live;
}
} // namespace detail

// ---- PidController members that need the World ----------------------------------------------

template <class T>
std::optional<std::size_t> PidController<T>::particle() const
{
    return detail::lock_world(m_world, describe())->force_generator_particle(m_id);
}

template <class T>
bool PidController<T>::remove()
{
    return detail::lock_world(m_world, describe())->remove_force_generator(m_id);
}

template <class T>
bool PidController<T>::removed() const
{
    const auto world = m_world.lock();
    return !world || !world->force_generator_particle(m_id).has_value();
}

} // namespace simdverlet
