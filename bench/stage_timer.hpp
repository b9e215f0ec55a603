// Per-stage timing for the benchmarks, by instrumentation: every registered stage (bulk forces,
// position projections, constraint edits) is re-registered under its own name wrapped in a wall
// clock, which keeps its place in the pipeline, and the whole step is timed around it. What the
// stages do not account for is the core's own work: zeroing, force generators (a grab), the fused
// solve and integration, the divergence check.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <simdverlet/core/simulation.hpp>

namespace simdverlet::benchmarking
{

/// Seconds spent in each stage since the last reset, by stage name.
struct StageTimes
{
    std::map<std::string, double> seconds;
    void reset()
    {
        for (auto& entry : seconds)
            entry.second = 0;
    }
};

/// Wraps every stage of `sim` registered so far in a timer that adds into the returned times.
template <class T>
std::shared_ptr<StageTimes> time_stages(Simulation<T>& sim)
{
    using Clock = std::chrono::steady_clock;
    auto times = std::make_shared<StageTimes>();
    auto& world = *detail::world_of(sim);
    // Each wrapper shares ownership of the times: its slot (a map node, which never moves) stays
    // valid for as long as the stage can run, whatever the caller keeps.
    const auto timed = [&times](const std::string& name, auto fn) {
        double* slot = &(times->seconds[name] = 0);
        return [fn, times, slot](auto&&... args) {
            const auto start = Clock::now();
            fn(std::forward<decltype(args)>(args)...);
            *slot += std::chrono::duration<double>(Clock::now() - start).count();
        };
    };
    for (const auto& [name, fn] : std::vector(world.bulk_forces().entries()))
        world.add_bulk_force(name, timed(name, fn));
    for (const auto& [name, fn] : std::vector(world.position_projections().entries()))
        world.add_position_projection(name, timed(name, fn));
    for (const auto& [name, fn] : std::vector(world.constraint_edits().entries()))
        world.add_constraint_edit(name, timed(name, fn));
    return times;
}

} // namespace simdverlet::benchmarking
