// reorder: renumbers particles along a space-filling curve so that particles near each other in
// space sit near each other in memory. A cloth built from a mesh file arrives in the file's order,
// often no better than random: every spring's neighbour is then a cache miss, and the gather path
// at 1000 x 1000 ran slower than the scalar twins on an ordered cloth. After reorder a lane group's
// neighbours share cache lines again (docs/performance.md, "Locality", measures it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

namespace detail
{
/// The bits of v (< 2^21) spread to every third bit, for interleaving three axes.
inline std::uint64_t spread_bits(std::uint64_t v)
{
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffff;
    v = (v | v << 16) & 0x1f0000ff0000ff;
    v = (v | v << 8) & 0x100f00f00f00f00f;
    v = (v | v << 4) & 0x10c30c30c30c30c3;
    v = (v | v << 2) & 0x1249249249249249;
    return v;
}

/// The Z-order (Morton) code of p in the box [lo, lo + extent): 21 bits an axis, interleaved.
template <class T>
std::uint64_t morton_code(const Vec3<T>& p, const Vec3<double>& lo, const Vec3<double>& extent)
{
    constexpr double cells = double((1u << 21) - 1);
    std::uint64_t code = 0;
    for (int axis = 0; axis < 3; ++axis)
    {
        const double t = extent[axis] > 0 ? (double(p[axis]) - lo[axis]) / extent[axis] : 0.0;
        code |= spread_bits(std::uint64_t(std::clamp(t, 0.0, 1.0) * cells)) << axis;
    }
    return code;
}
} // namespace detail

/// Renumbers the particles of `range` (default: all) in Z-order of their current positions. The
/// constraints (every slot, wherever it points from), the force generators (a grab) and every
/// stage that derives data from the constraints follow; nothing moves in space, and stepping on
/// gives the same motion up to the order of floating-point work. Returns where each particle went:
/// new_index[old], over the whole simulation.
///
/// Throws, changing nothing: std::invalid_argument for a range outside the simulation or a
/// non-finite position (naming the particle); std::logic_error where the range overlaps a cloth or
/// strand (their handles speak grid coordinates: a grid is its own numbering) or while removals are
/// queued. Stages registered with explicit particle ranges keep their ranges: reorder whole ranges.
template <class T>
std::vector<std::size_t> reorder(Simulation<T>& sim, ParticleRange range = {})
{
    range.check_inside(sim.size(), "reorder");
    const auto bounds = range.resolve(sim.size());
    const std::size_t begin = bounds.first, end = bounds.second; // named, not bound: a lambda reads begin
    const auto& state = sim.state();
    Vec3<double> lo = Vec3<double>::Constant(HUGE_VAL), hi = Vec3<double>::Constant(-HUGE_VAL);
    for (std::size_t i = begin; i < end; ++i)
    {
        const Vec3<T> p = state.position(i);
        if (!p.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: cannot reorder particle " + std::to_string(i) +
                                                 ": its position is not finite");
        lo = lo.cwiseMin(p.template cast<double>());
        hi = hi.cwiseMax(p.template cast<double>());
    }
    std::vector<std::size_t> order(end - begin);
    std::iota(order.begin(), order.end(), begin);
    std::vector<std::uint64_t> code(end - begin);
    for (std::size_t i = begin; i < end; ++i)
        code[i - begin] = detail::morton_code(state.position(i), lo, hi - lo);
    // Ties (coincident particles) keep their old order, so the result is deterministic.
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return code[a - begin] < code[b - begin]; });
    detail::world_of(sim)->renumber(begin, order);
    std::vector<std::size_t> new_index(sim.size());
    std::iota(new_index.begin(), new_index.end(), std::size_t(0));
    for (std::size_t k = 0; k < order.size(); ++k)
        new_index[order[k]] = begin + k;
    return new_index;
}

} // namespace simdverlet
