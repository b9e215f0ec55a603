// The core's two hot loops, each as a vector twin (xsimd, templated on the architecture) and a
// scalar twin with the same arithmetic in the same order, so the two agree lane for lane:
//   accumulate: add iterations x (every live slot's spring force, every layer) into the accumulators;
//   integrate:  one Verlet step of every free particle from the accumulated forces;
// the fused sweep that does both in one pass, and the finiteness and bounds checks after a step.
// The arithmetic a pair of twins shares is written once over V, a scalar T or a batch (slot_force,
// verlet_position), so the twins cannot drift apart. Kernels work on particle ranges [begin, end)
// whose begin is a whole number of batches, so a range split never changes which code path a
// particle takes (docs/architecture.md, "Bitwise rules"). Nothing here knows what a slot means:
// stages' kernels live beside this file.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>

#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simd_lanes.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet::kernels
{

/// Below this squared length a spring has no direction and contributes nothing. The force itself
/// stays bounded as the length goes to zero (its magnitude is k * |len - rest|), so the only
/// hazard is 0/0: the smallest normal number is threshold enough.
template <class T>
inline constexpr T kMinLengthSquared = std::numeric_limits<T>::min();

/// What integrate needs of StepParams, precomputed once per step.
template <class T>
struct IntegrateParams
{
    T dt2;     ///< dt squared
    T damping; ///< velocity kept per step
    T gx, gy, gz;
};

/// Force of slot s on particle i: k (|d| - r) d / |d| with d = x_j - x_i. Written once over V (T
/// with M = bool for the scalar twins, a batch with its mask for the vector twins), so both share
/// the exact operation order that bit-equality between them relies on.
template <class V>
struct SlotForce
{
    V x, y, z;
};

template <class V, class M>
SlotForce<V> slot_force(const V& dx, const V& dy, const V& dz, const V& rest, const V& stiffness, const M& live)
{
    using T = simd::Scalar<V>;
    const V zero(T(0));
    const V len2 = dx * dx + dy * dy + dz * dz;
    const M ok = live && (len2 > V(kMinLengthSquared<T>));
    // The scalar twin leaves here for every dead slot (two of a rope particle's four) instead of
    // paying for a square root and a division it would throw away. The vector twin has already
    // skipped slots dead in every lane (slot_forces_vector), so a second test would only cost it.
    if constexpr (std::is_floating_point_v<V>)
        if (!ok)
            return {zero, zero, zero};
    const V len = simd::sqrt(len2);
    const V c = stiffness * (len - rest) / len;
    return {simd::select(ok, c * dx, zero), simd::select(ok, c * dy, zero), simd::select(ok, c * dz, zero)};
}

/// The sum of one layer's slot forces, pairwise, written once over V.
template <class V>
SIMDVERLET_INLINE SlotForce<V> slot_sum(const SlotForce<V> (&f)[kSlots])
{
    static_assert(kSlots == 4, "slot_sum adds the slots pairwise: write the tree for the new count");
    return {(f[0].x + f[1].x) + (f[2].x + f[3].x), (f[0].y + f[1].y) + (f[2].y + f[3].y),
            (f[0].z + f[1].z) + (f[2].z + f[3].z)};
}

/// A further layer's slot sum added after the layers before it: layer order is the sum's order.
template <class V>
SIMDVERLET_INLINE void add_layer_sum(SlotForce<V>& sum, const SlotForce<V> (&f)[kSlots])
{
    const SlotForce<V> more = slot_sum(f);
    sum = {sum.x + more.x, sum.y + more.y, sum.z + more.z};
}

/// The solve's contribution to one particle's accumulators, written once over V: `iterations`
/// passes over unchanged positions add the same slot forces each time, so they are added once as
/// iterations x (their sum) (docs/architecture.md, "Step order"). One multiply replaces slots x iterations dependent
/// additions, which made 16 iterations cost 2.3 times one; it matches the literal passes to
/// rounding, not bitwise (tests/kernels.cpp states the tolerance). Zero iterations add nothing.
template <class V>
SIMDVERLET_INLINE void add_solve(V (&a)[3], const SlotForce<V>& sum, const V& iterations)
{
    a[0] = a[0] + iterations * sum.x;
    a[1] = a[1] + iterations * sum.y;
    a[2] = a[2] + iterations * sum.z;
}

// ---------------------------------------------------------------------------------------------
// accumulate

/// Lanes 0, 1, ..., L-1 of the gather index type, for recognising a contiguous neighbour run.
template <class T, class Arch>
simd::IndexBatch<T, Arch> lane_iota()
{
    using I = typename simd::IndexBatch<T, Arch>::value_type;
    alignas(simd::kAlignment) I lanes[simd::IndexBatch<T, Arch>::size];
    for (std::size_t k = 0; k < simd::IndexBatch<T, Arch>::size; ++k)
        lanes[k] = I(k);
    return simd::IndexBatch<T, Arch>::load_aligned(lanes);
}

/// The slot forces of one layer for the lane group starting at particle i (a whole number of
/// batches from 0, inside the layer), whose slots are the layer's rows from `row` (i - c.first;
/// layer 0 passes i itself, so its addressing is the plain i of a single layer). The grid fast
/// path: when every lane's neighbour in a slot sits at one offset d from the lane (j = i + lane +
/// d, as for every slot of a cloth) or names no neighbour, the neighbours' positions are one
/// contiguous load at i + d instead of a gather. Otherwise, given packed positions (s.packed), they
/// are one load a lane from there, else gathers; `scattered` counts these slots. The values loaded
/// are the same, so the result is bit-identical; `contiguous` = false forces the scattered reads
/// everywhere.
template <class Arch, class T>
SIMDVERLET_INLINE void slot_forces_vector(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t i,
                                          std::size_t row, bool contiguous, const simd::IndexBatch<T, Arch>& iota,
                                          SlotForce<simd::Batch<T, Arch>> (&f)[kSlots], std::size_t& scattered)
{
    using B = simd::Batch<T, Arch>;
    using M = simd::Mask<T, Arch>;
    using IB = simd::IndexBatch<T, Arch>;
    using I = typename IB::value_type;
    constexpr std::size_t L = B::size;
    const B zero(T(0));
    const B xi = simd::load<T, Arch>(s.x + i);
    const B yi = simd::load<T, Arch>(s.y + i);
    const B zi = simd::load<T, Arch>(s.z + i);
    for (int k = 0; k < kSlots; ++k)
    {
        // Liveness from stiffness alone: DirectedConstraints4 keeps stiffness 0 wherever the
        // neighbour is -1, and stiffness is never negative, so k > 0 <=> live. A float compare is
        // native on every architecture; an integer-to-mask cast is not.
        const B stiffness = simd::load<T, Arch>(c.stiffness[k] + row);
        const M live = stiffness > zero;
        if (!simd::any<T, Arch>(live))
        {
            f[k] = {zero, zero, zero};
            continue;
        }
        const IB idx = simd::load_indices<T, Arch>(c.neighbour[k] + row);
        const std::int64_t first = c.neighbour[k][row];
        const std::int64_t d = first - std::int64_t(i);
        // In bounds for every lane, dead ones included: they read a real particle and are masked.
        const bool in_bounds = first >= 0 && std::int64_t(first) + std::int64_t(L) <= std::int64_t(s.padded);
        B xj, yj, zj;
        if (contiguous && in_bounds && xsimd::all((idx == iota + IB(I(first))) || (idx == IB(I(-1)))))
        {
            xj = simd::load_unaligned<T, Arch>(s.x + i + d);
            yj = simd::load_unaligned<T, Arch>(s.y + i + d);
            zj = simd::load_unaligned<T, Arch>(s.z + i + d);
        }
        else
        {
            ++scattered;
            const IB safe = simd::safe_indices<T, Arch>(idx);
            if constexpr (simd::kPackedGather<T, Arch>)
                if (s.packed)
                {
                    // Through memory: lane extracts from a register cost two shuffles each, and
                    // reading the neighbour array again compiles to just those.
                    alignas(simd::kAlignment) I at[L];
                    safe.store_aligned(at);
                    simd::gather_packed<T, Arch>(s.packed, at, xj, yj, zj);
                }
            if (!simd::kPackedGather<T, Arch> || !s.packed)
            {
                xj = simd::gather<T, Arch>(s.x, safe);
                yj = simd::gather<T, Arch>(s.y, safe);
                zj = simd::gather<T, Arch>(s.z, safe);
            }
        }
        f[k] = slot_force(B(xj - xi), B(yj - yi), B(zj - zi), simd::load<T, Arch>(c.rest[k] + row), stiffness, live);
    }
}

/// Writes particles [begin, end)'s x, y, z and a zero pad to packed[4 i ...], the layout
/// simd::gather_packed reads. Whole batches: begin and end are whole padding blocks.
template <class Arch, class T>
void pack_positions(const StateArrays<T>& s, T* packed, std::size_t begin, std::size_t end)
{
    using B = simd::Batch<T, Arch>;
    for (std::size_t i = begin; i < end; i += B::size)
        simd::store_packed<T, Arch>(packed + 4 * i, simd::load<T, Arch>(s.x + i), simd::load<T, Arch>(s.y + i),
                                    simd::load<T, Arch>(s.z + i));
}

/// How far ahead, in rows, the layered solve prefetches each layer's slot arrays. A mesh cloth's
/// four layers stream 48 arrays at once, more than the hardware prefetcher follows: out of cache,
/// a 65 536-vertex mesh cloth ran 2.2 times slower without (docs/performance.md). A
/// single layer's twelve arrays are followed by the hardware, so the single-layer sweep issues
/// none.
inline constexpr std::size_t kPrefetchRows = 256;

/// Prefetches the slots of the rows kPrefetchRows past `row` in layer `c`, where it has them.
template <class T>
SIMDVERLET_INLINE void prefetch_slots(const ConstraintArrays<T>& c, std::size_t row)
{
    if (row + kPrefetchRows >= c.end - c.first)
        return;
    for (int k = 0; k < kSlots; ++k)
    {
        simd::prefetch(c.neighbour[k] + row + kPrefetchRows);
        simd::prefetch(c.rest[k] + row + kPrefetchRows);
        simd::prefetch(c.stiffness[k] + row + kPrefetchRows);
    }
}

/// The summed slot forces of the lane group at i over layer 0 (`c`) and every further layer that
/// covers it, in layer order. `Layered` = false compiles the single-layer sweep of grids and
/// strands with no trace of the further layers, so they cost such a simulation nothing.
template <bool Layered, class Arch, class T>
SIMDVERLET_INLINE SlotForce<simd::Batch<T, Arch>>
solve_sum_vector(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::span<const ConstraintArrays<T>> extra,
                 std::size_t i, bool contiguous, const simd::IndexBatch<T, Arch>& iota, std::size_t& scattered)
{
    SlotForce<simd::Batch<T, Arch>> f[kSlots];
    if constexpr (Layered)
        prefetch_slots(c, i);
    slot_forces_vector<Arch>(s, c, i, i, contiguous, iota, f, scattered);
    auto sum = slot_sum(f);
    if constexpr (Layered)
        for (const auto& layer : extra)
            if (layer.covers(i))
            {
                prefetch_slots(layer, i - layer.first);
                slot_forces_vector<Arch>(s, layer, i, i - layer.first, contiguous, iota, f, scattered);
                add_layer_sum(sum, f);
            }
    return sum;
}

/// accumulate_vector for a simulation with (`Layered`) or without further constraint layers.
template <bool Layered, class Arch, class T>
std::size_t accumulate_lanes(const StateArrays<T>& s, const ConstraintArrays<T>& c,
                             std::span<const ConstraintArrays<T>> extra, std::size_t begin, std::size_t end,
                             int iterations, bool contiguous)
{
    std::size_t scattered = 0;
    using B = simd::Batch<T, Arch>;
    constexpr std::size_t L = B::size;
    const auto iota = lane_iota<T, Arch>();
    const auto n = B(T(iterations));
    for (std::size_t i = begin; i < end; i += L)
    {
        const auto sum = solve_sum_vector<Layered, Arch>(s, c, extra, i, contiguous, iota, scattered);
        B a[3] = {simd::load<T, Arch>(s.ax + i), simd::load<T, Arch>(s.ay + i), simd::load<T, Arch>(s.az + i)};
        add_solve(a, sum, n);
        simd::store<T, Arch>(s.ax + i, a[0]);
        simd::store<T, Arch>(s.ay + i, a[1]);
        simd::store<T, Arch>(s.az + i, a[2]);
    }
    return scattered;
}

/// Adds `iterations` passes of spring forces into ax/ay/az for particles [begin, end), vector twin.
/// Each slot's force is computed once and the passes are added as one multiple (add_solve): literal
/// passes over unchanged positions (accumulate_reference_passes) to rounding, at a fraction of the
/// gathers, square roots and additions. Returns the slots (of a lane group) whose neighbours were
/// read scattered, not as one contiguous run.
template <class Arch, class T>
std::size_t accumulate_vector(const StateArrays<T>& s, const ConstraintArrays<T>& c,
                              std::span<const ConstraintArrays<T>> extra, std::size_t begin, std::size_t end,
                              int iterations, bool contiguous = true)
{
    if (iterations == 0)
        return 0;
    if (extra.empty())
        return accumulate_lanes<false, Arch>(s, c, extra, begin, end, iterations, contiguous);
    return accumulate_lanes<true, Arch>(s, c, extra, begin, end, iterations, contiguous);
}

/// One layer's slot forces of particle i (inside the layer), scalar twin of slot_forces_vector.
template <class T>
void slot_forces_scalar(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t i, SlotForce<T> (&f)[kSlots])
{
    const std::size_t row = i - c.first;
    for (int k = 0; k < kSlots; ++k)
    {
        const std::int32_t j = c.neighbour[k][row];
        const T stiffness = c.stiffness[k][row];
        const bool live = j >= 0 && stiffness != T(0);
        const std::size_t jj = live ? std::size_t(j) : i;
        f[k] = slot_force(s.x[jj] - s.x[i], s.y[jj] - s.y[i], s.z[jj] - s.z[i], c.rest[k][row], stiffness, live);
    }
}

/// Scalar twin of solve_sum_vector.
template <class T>
SlotForce<T> solve_sum_scalar(const StateArrays<T>& s, const ConstraintArrays<T>& c,
                              std::span<const ConstraintArrays<T>> extra, std::size_t i)
{
    SlotForce<T> f[kSlots];
    slot_forces_scalar(s, c, i, f);
    auto sum = slot_sum(f);
    for (const auto& layer : extra)
        if (layer.covers(i))
        {
            slot_forces_scalar(s, layer, i, f);
            add_layer_sum(sum, f);
        }
    return sum;
}

/// Scalar twin of accumulate_vector: the same per-particle float sequence, one particle at a time.
template <class T>
void accumulate_scalar(const StateArrays<T>& s, const ConstraintArrays<T>& c,
                       std::span<const ConstraintArrays<T>> extra, std::size_t begin, std::size_t end, int iterations)
{
    if (iterations == 0)
        return;
    const T n = T(iterations);
    for (std::size_t i = begin; i < end; ++i)
    {
        const auto sum = solve_sum_scalar(s, c, extra, i);
        T a[3] = {s.ax[i], s.ay[i], s.az[i]};
        add_solve(a, sum, n);
        s.ax[i] = a[0];
        s.ay[i] = a[1];
        s.az[i] = a[2];
    }
}

/// The specification the solve is tested against: `iterations` literal passes, each recomputing
/// every slot's force from the unchanged positions and adding it, one slot at a time. Slow on
/// purpose.
template <class T>
void accumulate_reference_passes(const StateArrays<T>& s, const ConstraintArrays<T>& c,
                                 std::span<const ConstraintArrays<T>> extra, std::size_t begin, std::size_t end,
                                 int iterations)
{
    const auto add_layer = [&](const ConstraintArrays<T>& layer, std::size_t i) {
        SlotForce<T> f[kSlots];
        slot_forces_scalar(s, layer, i, f);
        for (int k = 0; k < kSlots; ++k)
        {
            s.ax[i] = s.ax[i] + f[k].x;
            s.ay[i] = s.ay[i] + f[k].y;
            s.az[i] = s.az[i] + f[k].z;
        }
    };
    for (int n = 0; n < iterations; ++n)
        for (std::size_t i = begin; i < end; ++i)
        {
            add_layer(c, i);
            for (const auto& layer : extra)
                if (layer.covers(i))
                    add_layer(layer, i);
        }
}

// ---------------------------------------------------------------------------------------------
// integrate

/// One coordinate of the Verlet update, written once over V (T with M = bool, or a batch with its
/// mask) for the integrate and sweep twins: v = damping (x - px), and the new position
/// x + v + (g + w a) dt^2 where `free`, x itself elsewhere.
template <class V, class M>
V verlet_position(const V& x, const V& px, const V& a, const V& g, const V& w, const V& damping, const V& dt2,
                  const M& free)
{
    const V v = damping * (x - px);
    return simd::select(free, x + v + (g + w * a) * dt2, x);
}

/// One Verlet step for particles [begin, end), vector twin. Free particles:
///   v = damping (x - px);  px = x;  x = x + v + (g + w a) dt^2
/// Pinned particles (w == 0) keep x and get px = x. Lanes past the last particle are left alone.
/// Returns false when any new coordinate is not finite.
template <class Arch, class T>
bool integrate_vector(const StateArrays<T>& s, const IntegrateParams<T>& p, std::size_t begin, std::size_t end)
{
    using B = simd::Batch<T, Arch>;
    using M = simd::Mask<T, Arch>;
    constexpr std::size_t L = B::size;
    const B dt2(p.dt2), damping(p.damping), gx(p.gx), gy(p.gy), gz(p.gz), zero(T(0)), one(T(1));
    M finite = zero == zero;
    for (std::size_t i = begin; i < end; i += L)
    {
        const B w = s.inv_mass ? simd::load<T, Arch>(s.inv_mass + i) : one;
        // With masses the padding lanes are pinned (w == 0); without, they must be masked here.
        const M in_range = i + L <= end ? (zero == zero) : simd::first_lanes<T, Arch>(end - i);
        const M free = (w > zero) && in_range;
        const auto advance = [&](T* x, T* px, const T* a, const B& g) {
            const B xo = simd::load<T, Arch>(x + i);
            const B xn = verlet_position(xo, simd::load<T, Arch>(px + i), simd::load<T, Arch>(a + i), g, w, damping,
                                         dt2, free);
            simd::store<T, Arch>(px + i, xsimd::select(in_range, xo, simd::load<T, Arch>(px + i)));
            simd::store<T, Arch>(x + i, xn);
            finite = finite && xsimd::isfinite(xn);
        };
        advance(s.x, s.px, s.ax, gx);
        advance(s.y, s.py, s.ay, gy);
        advance(s.z, s.pz, s.az, gz);
    }
    return xsimd::all(finite);
}

/// Scalar twin of integrate_vector.
template <class T>
bool integrate_scalar(const StateArrays<T>& s, const IntegrateParams<T>& p, std::size_t begin, std::size_t end)
{
    bool finite = true;
    for (std::size_t i = begin; i < end; ++i)
    {
        const T w = s.inv_mass ? s.inv_mass[i] : T(1);
        const bool free = w > T(0);
        const auto advance = [&](T* x, T* px, const T* a, T g) {
            const T xo = x[i];
            const T xn = verlet_position(xo, px[i], a[i], g, w, p.damping, p.dt2, free);
            px[i] = xo;
            x[i] = xn;
            finite = finite && std::isfinite(xn);
        };
        advance(s.x, s.px, s.ax, p.gx);
        advance(s.y, s.py, s.ay, p.gy);
        advance(s.z, s.pz, s.az, p.gz);
    }
    return finite;
}

// ---------------------------------------------------------------------------------------------
// the fused step sweep

/// sweep_vector for a simulation with (`Layered`) or without further constraint layers.
template <bool Layered, class Arch, class T>
bool sweep_lanes(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::span<const ConstraintArrays<T>> extra,
                 const IntegrateParams<T>& p, std::size_t begin, std::size_t end, int iterations,
                 bool read_accumulators, bool contiguous, std::size_t& scattered)
{
    using B = simd::Batch<T, Arch>;
    using M = simd::Mask<T, Arch>;
    constexpr std::size_t L = B::size;
    const auto iota = lane_iota<T, Arch>();
    const B dt2(p.dt2), damping(p.damping), zero(T(0)), one(T(1));
    const auto n = B(T(iterations));
    const B g[3] = {B(p.gx), B(p.gy), B(p.gz)};
    T* const xs[3] = {s.x, s.y, s.z};
    T* const pxs[3] = {s.px, s.py, s.pz};
    T* const as[3] = {s.ax, s.ay, s.az};
    M finite = zero == zero;
    for (std::size_t i = begin; i < end; i += L)
    {
        SlotForce<B> sum{};
        if (iterations > 0)
            sum = solve_sum_vector<Layered, Arch>(s, c, extra, i, contiguous, iota, scattered);
        B a[3] = {zero, zero, zero};
        if (read_accumulators)
            for (int axis = 0; axis < 3; ++axis)
                a[axis] = simd::load<T, Arch>(as[axis] + i);
        if (iterations > 0)
            add_solve(a, sum, n);
        const B w = s.inv_mass ? simd::load<T, Arch>(s.inv_mass + i) : one;
        const M in_range = i + L <= end ? (zero == zero) : simd::first_lanes<T, Arch>(end - i);
        const M free = (w > zero) && in_range;
        for (int axis = 0; axis < 3; ++axis)
        {
            const B xn = verlet_position(simd::load<T, Arch>(xs[axis] + i), simd::load<T, Arch>(pxs[axis] + i), a[axis],
                                         g[axis], w, damping, dt2, free);
            simd::store<T, Arch>(pxs[axis] + i, xn);
            finite = finite && xsimd::isfinite(xn);
        }
    }
    return xsimd::all(finite);
}

/// Solve and integrate in one sweep over particles [begin, end), vector twin. For each lane group:
/// the slot forces from the unchanged positions, added as `iterations` passes onto the accumulators
/// (read only when a force stage wrote them, else zero in registers), then the Verlet update, whose
/// new position goes into the *previous*-position array. The position array is never written, so
/// every neighbour read in the sweep sees the old positions, as literal passes do; the caller swaps
/// the two arrays afterwards. Per particle this is the operation sequence of the unfused
/// accumulate + integrate, so the result is bit-identical to it. Returns false when any new
/// coordinate is not finite; adds to `*scattered` (when given) the slots whose neighbours were read
/// scattered (accumulate_vector).
template <class Arch, class T>
bool sweep_vector(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::span<const ConstraintArrays<T>> extra,
                  const IntegrateParams<T>& p, std::size_t begin, std::size_t end, int iterations,
                  bool read_accumulators, bool contiguous = true, std::size_t* scattered = nullptr)
{
    std::size_t count = 0;
    const bool finite = extra.empty() ? sweep_lanes<false, Arch>(s, c, extra, p, begin, end, iterations,
                                                                 read_accumulators, contiguous, count)
                                      : sweep_lanes<true, Arch>(s, c, extra, p, begin, end, iterations,
                                                                read_accumulators, contiguous, count);
    if (scattered)
        *scattered += count;
    return finite;
}

/// Scalar twin of sweep_vector.
template <class T>
bool sweep_scalar(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::span<const ConstraintArrays<T>> extra,
                  const IntegrateParams<T>& p, std::size_t begin, std::size_t end, int iterations,
                  bool read_accumulators)
{
    bool finite = true;
    T* const xs[3] = {s.x, s.y, s.z};
    T* const pxs[3] = {s.px, s.py, s.pz};
    T* const as[3] = {s.ax, s.ay, s.az};
    const T g[3] = {p.gx, p.gy, p.gz};
    const T n = T(iterations);
    for (std::size_t i = begin; i < end; ++i)
    {
        SlotForce<T> sum{};
        if (iterations > 0)
            sum = solve_sum_scalar(s, c, extra, i);
        T a[3] = {T(0), T(0), T(0)};
        if (read_accumulators)
            for (int axis = 0; axis < 3; ++axis)
                a[axis] = as[axis][i];
        if (iterations > 0)
            add_solve(a, sum, n);
        const T w = s.inv_mass ? s.inv_mass[i] : T(1);
        const bool free = w > T(0);
        for (int axis = 0; axis < 3; ++axis)
        {
            const T xn = verlet_position(xs[axis][i], pxs[axis][i], a[axis], g[axis], w, p.damping, p.dt2, free);
            pxs[axis][i] = xn;
            finite = finite && std::isfinite(xn);
        }
    }
    return finite;
}

/// True when every coordinate of particles [0, size) is finite, vector twin: x - x is 0 for a
/// finite x and NaN otherwise, and a NaN stays in the running sum, so whole batches are checked
/// with no branch per particle. Used after position projections, which may move particles the
/// integrator already checked; scalar, the check cost as much as a tether pass on a 256 x 256 sheet.
template <class Arch, class T>
bool all_finite_vector(const StateArrays<T>& s)
{
    using B = simd::Batch<T, Arch>;
    constexpr std::size_t L = B::size;
    const std::size_t whole = s.size / L * L;
    B sum(T(0));
    for (std::size_t i = 0; i < whole; i += L)
    {
        const B x = simd::load<T, Arch>(s.x + i), y = simd::load<T, Arch>(s.y + i), z = simd::load<T, Arch>(s.z + i);
        sum = sum + (x - x) + (y - y) + (z - z);
    }
    if (!xsimd::all(sum == B(T(0)))) // a lane test, not a horizontal sum: NaN == 0 is false
        return false;
    for (std::size_t i = whole; i < s.size; ++i)
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || !std::isfinite(s.z[i]))
            return false;
    return true;
}

/// Scalar twin of all_finite_vector.
template <class T>
bool all_finite(const StateArrays<T>& s)
{
    for (std::size_t i = 0; i < s.size; ++i)
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || !std::isfinite(s.z[i]))
            return false;
    return true;
}

/// True when every particle of [begin, end) has both its position and its previous position
/// inside the box [lo, hi] (bounds included), vector twin. Reads whole batches from begin rounded
/// down to a batch (the arrays are padded), masking the lanes outside the range. For caches keyed
/// on where particles are: a mesh collider keeps a block's candidate triangles while this holds.
template <class Arch, class T>
bool all_inside_vector(const StateArrays<T>& s, std::size_t begin, std::size_t end, const std::array<T, 3>& lo,
                       const std::array<T, 3>& hi)
{
    using B = simd::Batch<T, Arch>;
    using M = simd::Mask<T, Arch>;
    constexpr std::size_t L = B::size;
    const B lx(lo[0]), ly(lo[1]), lz(lo[2]), hx(hi[0]), hy(hi[1]), hz(hi[2]);
    // Written as "not inside", so a NaN coordinate counts as outside, as in the scalar twin.
    const auto inside = [&](const T* x, const T* y, const T* z, std::size_t i) {
        const B px = simd::load<T, Arch>(x + i), py = simd::load<T, Arch>(y + i), pz = simd::load<T, Arch>(z + i);
        return (px >= lx) && (px <= hx) && (py >= ly) && (py <= hy) && (pz >= lz) && (pz <= hz);
    };
    alignas(simd::kAlignment) T iota_lanes[L];
    for (std::size_t k = 0; k < L; ++k)
        iota_lanes[k] = T(k);
    const B iota = simd::load<T, Arch>(iota_lanes);
    for (std::size_t i = begin / L * L; i < end; i += L)
    {
        // Lane bounds relative to i are below L, so they are exact in T however large i is.
        const M lanes = (iota >= B(T(begin > i ? begin - i : 0))) && (iota < B(T(std::min(end - i, L))));
        if (simd::any<T, Arch>(lanes && !(inside(s.x, s.y, s.z, i) && inside(s.px, s.py, s.pz, i))))
            return false;
    }
    return true;
}

/// Scalar twin of all_inside_vector.
template <class T>
bool all_inside(const StateArrays<T>& s, std::size_t begin, std::size_t end, const std::array<T, 3>& lo,
                const std::array<T, 3>& hi)
{
    const auto inside = [&](T x, T y, T z) {
        return x >= lo[0] && x <= hi[0] && y >= lo[1] && y <= hi[1] && z >= lo[2] && z <= hi[2];
    };
    for (std::size_t i = begin; i < end; ++i)
        if (!inside(s.x[i], s.y[i], s.z[i]) || !inside(s.px[i], s.py[i], s.pz[i]))
            return false;
    return true;
}

} // namespace simdverlet::kernels
