// What a step is: its parameters (StepParams), its stages in order (StepStage, the one place the
// order is written), the name-keyed registries of stages each of a simulation's three registries
// (bulk forces, position projections, constraint edits) is, and where a step in progress stands
// (CallProgress).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// What one call to Simulation::step does.
template <class T>
struct StepParams
{
    T dt = T(1) / T(60);               ///< seconds per step, > 0. One display frame at 60 Hz.
    T damping = T(0.99);               ///< fraction of the velocity kept per call (per dt), in [0, 1]. 0.99
                                       ///< bleeds 1 % per frame: enough to settle a sheet, too little to look
                                       ///< viscous. With n substeps each keeps damping^(1/n), so substeps
                                       ///< change accuracy, not the air.
    Vec3<T> gravity = Vec3<T>::Zero(); ///< acceleration of every free particle, world units / s^2. Off by
                                       ///< default; the guide's pages use +y as down.
    int iterations = 8;                ///< solve passes, >= 0. Multiplies every stiffness: the sheet feels only
                                       ///< stiffness x iterations, and more cost nothing (one multiply).
                                       ///< 8 is a middle rung; 0 switches springs off.
    int substeps = 1;                  ///< >= 1. n runs exactly n steps of dt / n with damping^(1/n),
                                       ///< bit-identical to n calls with those values.
};

/// The stages of one substep, in the order World::step_once runs them. Each registry runs its
/// stages in registration order within its place here. docs/architecture.md, "Step order", says
/// what each does in detail.
enum class StepStage
{
    removals,             ///< particles queued with queue_remove leave; slots naming them clear, the rest renumber
    zero_forces,          ///< the force accumulators are zeroed, when anything will write them
    force_generators,     ///< per-particle forces, the PID controllers among them
    bulk_forces,          ///< add_bulk_force stages: grid curvature, wind, a user's
    callback,             ///< the step's accumulate_forces
    solve_and_integrate,  ///< iterations x the springs' forces from unchanged positions, then Verlet with
                          ///< gravity as an acceleration; one fused sweep by default (set_fused)
    position_projections, ///< add_position_projection stages: cloth solves, colliders, limits, a user's
    constraint_edits,     ///< add_constraint_edit stages: tearing, a user's
    divergence_check,     ///< a non-finite coordinate sets diverged() and logs once
};

/// What registering a stage under a name its registry holds does.
enum class OnExistingName
{
    refuse,  ///< std::invalid_argument naming it, the default: a second stage never silently replaces a first
    replace, ///< the new function takes the old one's place, and its position in the pipeline
};

/// Name-keyed, ordered list of stages.
template <class Fn>
class StageRegistry
{
  public:
    void add(const std::string& name, Fn fn, OnExistingName on_existing = OnExistingName::refuse)
    {
        if (name.empty())
            detail::raise<std::invalid_argument>("simdverlet: a stage needs a non-empty name");
        if (!fn)
            detail::raise<std::invalid_argument>("simdverlet: stage '" + name + "' has no function");
        for (auto& [n, f] : m_stages)
            if (n == name)
            {
                if (on_existing == OnExistingName::refuse)
                    detail::raise<std::invalid_argument>("simdverlet: a stage named '" + name +
                                                         "' is registered already: name the new one apart, remove "
                                                         "the old one first, or ask to replace it");
                f = std::move(fn);
                return;
            }
        m_stages.emplace_back(name, std::move(fn));
    }

    /// Returns whether the stage was registered.
    bool remove(const std::string& name)
    {
        const auto it = std::find_if(m_stages.begin(), m_stages.end(), [&](const auto& s) { return s.first == name; });
        if (it == m_stages.end())
            return false;
        m_stages.erase(it);
        return true;
    }

    bool contains(const std::string& name) const
    {
        return std::any_of(m_stages.begin(), m_stages.end(), [&](const auto& s) { return s.first == name; });
    }

    std::vector<std::string> names() const
    {
        std::vector<std::string> out;
        for (const auto& s : m_stages)
            out.push_back(s.first);
        return out;
    }

    std::size_t size() const noexcept { return m_stages.size(); }
    bool empty() const noexcept { return m_stages.empty(); }
    /// The stages with their names, in pipeline order.
    const std::vector<std::pair<std::string, Fn>>& entries() const noexcept { return m_stages; }

    template <class... Args>
    void run(Args&... args) const
    {
        for (const auto& s : m_stages)
            s.second(args...);
    }

  private:
    std::vector<std::pair<std::string, Fn>> m_stages;
};

/// Where the step in progress stands within its call of step(), for stages that plan over a whole
/// call and then check the plan every substep (the mesh collider's contact planes). A call's id
/// is unique in the process, so a plan made for one call is never taken for another's, whatever
/// simulation made it; a restored snapshot steps into a new call and so plans afresh.
template <class T>
struct CallProgress
{
    std::uint64_t call = 0; ///< the call's id: 0 before the first call
    int substep = 0;        ///< the running substep, from 0
    int substeps = 1;       ///< in the call
    T dt = T(0);            ///< of one substep
    Vec3<T> gravity = Vec3<T>::Zero();

    /// Substeps of the call after the running one.
    int remaining() const noexcept { return substeps - 1 - substep; }
};

} // namespace simdverlet
