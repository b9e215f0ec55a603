// The two hot loops of a step, each as a vector twin (xsimd, templated on the architecture) and a
// scalar twin with the same arithmetic in the same order, so the two agree lane for lane:
//   accumulate: add iterations x (every live slot's spring force) into the accumulators;
//   integrate:  one Verlet step of every free particle from the accumulated forces.
// The arithmetic a pair of twins shares is written once over V, a scalar T or a batch (slot_force,
// verlet_position, pulled_toward_mean, wind_share), so the twins cannot drift apart.
// Kernels work on particle ranges [begin, end) whose begin is a whole number of batches, so a range
// split never changes which code path a particle takes.
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

#include "constraints.hpp"
#include "simd.hpp"
#include "state.hpp"

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
/// iterations x (their sum) (DESIGN section 3). One multiply replaces slots x iterations dependent
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
/// layer 0 passes i itself, so its addressing is the plain i of a single layer). The grid fast path: when every lane's neighbour in a slot sits at one offset d from the
/// lane (j = i + lane + d, as for every slot of a cloth) or names no neighbour, the neighbours'
/// positions are one contiguous load at i + d instead of a gather. The values loaded are the same,
/// so the result is bit-identical; `contiguous` = false forces gathers everywhere.
template <class Arch, class T>
SIMDVERLET_INLINE void slot_forces_vector(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t i,
                                          std::size_t row, bool contiguous, const simd::IndexBatch<T, Arch>& iota,
                                          SlotForce<simd::Batch<T, Arch>> (&f)[kSlots])
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
            const IB safe = simd::safe_indices<T, Arch>(idx);
            xj = simd::gather<T, Arch>(s.x, safe);
            yj = simd::gather<T, Arch>(s.y, safe);
            zj = simd::gather<T, Arch>(s.z, safe);
        }
        f[k] = slot_force(B(xj - xi), B(yj - yi), B(zj - zi), simd::load<T, Arch>(c.rest[k] + row), stiffness, live);
    }
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
                 std::size_t i, bool contiguous, const simd::IndexBatch<T, Arch>& iota)
{
    SlotForce<simd::Batch<T, Arch>> f[kSlots];
    if constexpr (Layered)
        prefetch_slots(c, i);
    slot_forces_vector<Arch>(s, c, i, i, contiguous, iota, f);
    auto sum = slot_sum(f);
    if constexpr (Layered)
        for (const auto& layer : extra)
            if (layer.covers(i))
            {
                prefetch_slots(layer, i - layer.first);
                slot_forces_vector<Arch>(s, layer, i, i - layer.first, contiguous, iota, f);
                add_layer_sum(sum, f);
            }
    return sum;
}

/// accumulate_vector for a simulation with (`Layered`) or without further constraint layers.
template <bool Layered, class Arch, class T>
void accumulate_lanes(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::span<const ConstraintArrays<T>> extra,
                      std::size_t begin, std::size_t end, int iterations, bool contiguous)
{
    using B = simd::Batch<T, Arch>;
    constexpr std::size_t L = B::size;
    const auto iota = lane_iota<T, Arch>();
    const auto n = B(T(iterations));
    for (std::size_t i = begin; i < end; i += L)
    {
        const auto sum = solve_sum_vector<Layered, Arch>(s, c, extra, i, contiguous, iota);
        B a[3] = {simd::load<T, Arch>(s.ax + i), simd::load<T, Arch>(s.ay + i), simd::load<T, Arch>(s.az + i)};
        add_solve(a, sum, n);
        simd::store<T, Arch>(s.ax + i, a[0]);
        simd::store<T, Arch>(s.ay + i, a[1]);
        simd::store<T, Arch>(s.az + i, a[2]);
    }
}

/// Adds `iterations` passes of spring forces into ax/ay/az for particles [begin, end), vector twin.
/// Each slot's force is computed once and the passes are added as one multiple (add_solve): literal
/// passes over unchanged positions (accumulate_reference_passes) to rounding, at a fraction of the
/// gathers, square roots and additions.
template <class Arch, class T>
void accumulate_vector(const StateArrays<T>& s, const ConstraintArrays<T>& c,
                       std::span<const ConstraintArrays<T>> extra, std::size_t begin, std::size_t end, int iterations,
                       bool contiguous = true)
{
    if (iterations == 0)
        return;
    if (extra.empty())
        accumulate_lanes<false, Arch>(s, c, extra, begin, end, iterations, contiguous);
    else
        accumulate_lanes<true, Arch>(s, c, extra, begin, end, iterations, contiguous);
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
// grid curvature

/// The slots the curvature reads, in the roles cloth.hpp's ClothSlot gives a grid particle's
/// slots: the neighbour at +width (down), -width (up), +1 (right) and -1 (left).
inline constexpr int kGridDown = 0, kGridUp = 1, kGridRight = 2, kGridLeft = 3;

/// Which of a grid particle's four slots are live (bool, or a mask over a batch of particles).
template <class M>
struct GridLinks
{
    M down, up, right, left;
};

/// a + strength (mean of the four axis neighbours - x), written once over V for both twins. The
/// mean is two bends, one per axis ((left + right) / 2 - x and (up + down) / 2 - x, halved), and
/// an axis bends only while both of its slots are live: a cut or torn spring switches off the bend
/// across it, and a cut edge is then a free edge, as the sheet's own border is (a lone live
/// neighbour would pull the edge into its piece). A switched-off axis counts both neighbours as x
/// itself, so with all four live this is the plain four-neighbour mean, bit for bit.
template <class V, class M>
V pulled_toward_mean(const V& a, const V& x, const V& down, const V& up, const V& right, const V& left,
                     const GridLinks<M>& live, const V& strength)
{
    using T = simd::Scalar<V>;
    const M across = live.left && live.right;
    const M along = live.up && live.down;
    const V sum = (simd::select(across, left, x) + simd::select(across, right, x)) +
                  (simd::select(along, up, x) + simd::select(along, down, x));
    return a + strength * (sum * V(T(0.25)) - x);
}

/// One particle of the grid curvature pull, scalar.
template <class T>
void pull_to_neighbour_mean_one(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t i, std::size_t width,
                                T strength)
{
    // Live <=> stiffness > 0: the DirectedConstraints4 invariant.
    const auto live = [&](int slot) { return c.stiffness[slot][i] > T(0); };
    const GridLinks<bool> links{live(kGridDown), live(kGridUp), live(kGridRight), live(kGridLeft)};
    for (auto [a, x] : {std::pair{s.ax, s.x}, std::pair{s.ay, s.y}, std::pair{s.az, s.z}})
        a[i] = pulled_toward_mean(a[i], x[i], x[i + width], x[i - width], x[i + 1], x[i - 1], links, strength);
}

/// For a width x height grid stored row by row from `base` and wired as a cloth (kGridDown ...),
/// adds to every interior particle the force strength * (mean of its four axis neighbours - x),
/// where only neighbours behind a live slot of the particle pull. Vector twin: a row's neighbours
/// sit at -1, +1, -width and +width and its slots' stiffnesses side by side, so every operand is a
/// contiguous (unaligned) load, no gather. The columns left over after whole batches run through
/// the scalar twin. Rows [first_row, last_row) only, clamped to the interior: an executor's chunks
/// take whole rows, and a row's arithmetic does not depend on which chunk runs it.
template <class Arch, class T>
void pull_to_neighbour_mean_vector(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t base,
                                   std::size_t width, std::size_t height, T strength, std::size_t first_row = 1,
                                   std::size_t last_row = std::size_t(-1))
{
    using B = simd::Batch<T, Arch>;
    using M = simd::Mask<T, Arch>;
    constexpr std::size_t L = B::size;
    const B k(strength), zero(T(0));
    const auto load = [](const T* p) { return simd::load_unaligned<T, Arch>(p); };
    const auto pull = [&](T* a, const T* x, std::size_t i, const GridLinks<M>& live) {
        pulled_toward_mean(load(a + i), load(x + i), load(x + i + width), load(x + i - width), load(x + i + 1),
                           load(x + i - 1), live, k)
            .store_unaligned(a + i);
    };
    for (std::size_t r = std::max<std::size_t>(first_row, 1); r + 1 < height && r < last_row; ++r)
    {
        const std::size_t row = base + r * width;
        std::size_t col = 1;
        for (; col + L <= width - 1; col += L)
        {
            const std::size_t i = row + col;
            const auto live = [&](int slot) { return load(c.stiffness[slot] + i) > zero; };
            const GridLinks<M> links{live(kGridDown), live(kGridUp), live(kGridRight), live(kGridLeft)};
            pull(s.ax, s.x, i, links);
            pull(s.ay, s.y, i, links);
            pull(s.az, s.z, i, links);
        }
        for (; col + 1 < width; ++col)
            pull_to_neighbour_mean_one(s, c, row + col, width, strength);
    }
}

/// Scalar twin of pull_to_neighbour_mean_vector.
template <class T>
void pull_to_neighbour_mean_scalar(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t base,
                                   std::size_t width, std::size_t height, T strength, std::size_t first_row = 1,
                                   std::size_t last_row = std::size_t(-1))
{
    for (std::size_t r = std::max<std::size_t>(first_row, 1); r + 1 < height && r < last_row; ++r)
        for (std::size_t col = 1; col + 1 < width; ++col)
            pull_to_neighbour_mean_one(s, c, base + r * width + col, width, strength);
}

// ---------------------------------------------------------------------------------------------
// position projections

/// One lane group of particles (V = T: one particle; V = Batch<T>: a batch of them), positions and
/// previous positions, as a projection reads and rewrites them.
template <class V>
struct ParticleLanes
{
    V x, y, z, px, py, pz;
};

/// Runs `fn(ParticleLanes<Batch>&, movable) -> touched` over particles [begin, end) in lane groups,
/// vector twin. `movable` marks lanes inside the range whose particle is not pinned; fn must leave
/// other lanes' values as it found them. Lane groups fn touched are stored back. Returns the number
/// of touched particles. Any begin works: lanes before it are masked out, not read as a scalar head.
/// A stage with per-particle data of its own takes a third argument, the particle in lane 0 (a
/// multiple of the batch size), and reads its arrays there (simd::load_lanes). kPrevious = false
/// leaves the previous positions unread and unwritten (zero in fn's lanes): half the memory traffic
/// for a projection that moves x alone.
template <class Arch, bool kPrevious = true, class T, class Fn>
int project_lanes_vector(const StateArrays<T>& s, std::size_t begin, std::size_t end, Fn&& fn)
{
    using B = simd::Batch<T, Arch>;
    using M = simd::Mask<T, Arch>;
    constexpr std::size_t L = B::size;
    alignas(simd::kAlignment) T iota_lanes[L];
    for (std::size_t k = 0; k < L; ++k)
        iota_lanes[k] = T(k);
    const B iota = simd::load<T, Arch>(iota_lanes);
    const B zero(T(0));
    int touched_count = 0;
    for (std::size_t i = begin / L * L; i < end; i += L)
    {
        // Lane bounds relative to i are below L, so they are exact in T however large i is.
        const T lo = T(begin > i ? begin - i : 0);
        const T hi = T(end - i < L ? end - i : L);
        M movable = (iota >= B(lo)) && (iota < B(hi));
        if (s.inv_mass)
            movable = movable && (simd::load<T, Arch>(s.inv_mass + i) != zero);
        ParticleLanes<B> p{
            simd::load<T, Arch>(s.x + i), simd::load<T, Arch>(s.y + i), simd::load<T, Arch>(s.z + i), zero, zero, zero};
        if constexpr (kPrevious)
        {
            p.px = simd::load<T, Arch>(s.px + i);
            p.py = simd::load<T, Arch>(s.py + i);
            p.pz = simd::load<T, Arch>(s.pz + i);
        }
        M touched;
        if constexpr (std::is_invocable_v<Fn&, ParticleLanes<B>&, const M&>)
            touched = fn(p, movable);
        else
            touched = fn(p, movable, i);
        if (!simd::any<T, Arch>(touched))
            continue;
        touched_count += simd::count<T, Arch>(touched);
        simd::store<T, Arch>(s.x + i, p.x);
        simd::store<T, Arch>(s.y + i, p.y);
        simd::store<T, Arch>(s.z + i, p.z);
        if constexpr (kPrevious)
        {
            simd::store<T, Arch>(s.px + i, p.px);
            simd::store<T, Arch>(s.py + i, p.py);
            simd::store<T, Arch>(s.pz + i, p.pz);
        }
    }
    return touched_count;
}

/// project_lanes_vector over one tile of a grid of particles instead of a run of them: rows of
/// simd::kTileColumns particles, the first at `first`, each `stride` after the one above, of which
/// the first `columns` are particles (the rest masked out, neither read nor written). Lane
/// r * kTileColumns + c is particle first + r * stride + c. Returns the touched particles.
template <class Arch, bool kPrevious = true, class T, class Fn>
int project_tile_vector(const StateArrays<T>& s, std::size_t first, std::size_t stride, std::size_t columns, Fn&& fn)
{
    using B = simd::Batch<T, Arch>;
    using M = simd::Mask<T, Arch>;
    constexpr std::size_t L = B::size;
    const B zero(T(0));
    const auto load = [&](const T* a) { return simd::load_tile<T, Arch>(a + first, stride, columns); };
    const auto store = [&](T* a, const B& v) { simd::store_tile<T, Arch>(a + first, stride, v, columns); };
    M movable = zero == zero;
    if (columns < simd::kTileColumns<T, Arch>) // a grid's right edge: only there are lanes not particles
    {
        alignas(simd::kAlignment) T column_lanes[L];
        for (std::size_t k = 0; k < L; ++k)
            column_lanes[k] = T(k % simd::kTileColumns<T, Arch>);
        movable = simd::load<T, Arch>(column_lanes) < B(T(columns));
    }
    if (s.inv_mass)
        movable = movable && (load(s.inv_mass) != zero);
    ParticleLanes<B> p{load(s.x), load(s.y), load(s.z), zero, zero, zero};
    if constexpr (kPrevious)
    {
        p.px = load(s.px);
        p.py = load(s.py);
        p.pz = load(s.pz);
    }
    const M touched = fn(p, movable);
    if (!simd::any<T, Arch>(touched))
        return 0;
    store(s.x, p.x);
    store(s.y, p.y);
    store(s.z, p.z);
    if constexpr (kPrevious)
    {
        store(s.px, p.px);
        store(s.py, p.py);
        store(s.pz, p.pz);
    }
    return simd::count<T, Arch>(touched);
}

/// Scalar twin of project_lanes_vector: fn receives ParticleLanes<T>, a bool and, if it takes one,
/// the particle's index.
template <class T, class Fn>
int project_lanes_scalar(const StateArrays<T>& s, std::size_t begin, std::size_t end, Fn&& fn)
{
    int touched_count = 0;
    for (std::size_t i = begin; i < end; ++i)
    {
        if (s.inv_mass && s.inv_mass[i] == T(0))
            continue;
        ParticleLanes<T> p{s.x[i], s.y[i], s.z[i], s.px[i], s.py[i], s.pz[i]};
        bool touched;
        if constexpr (std::is_invocable_v<Fn&, ParticleLanes<T>&, bool>)
            touched = fn(p, true);
        else
            touched = fn(p, true, i);
        if (!touched)
            continue;
        ++touched_count;
        s.x[i] = p.x;
        s.y[i] = p.y;
        s.z[i] = p.z;
        s.px[i] = p.px;
        s.py[i] = p.py;
        s.pz[i] = p.pz;
    }
    return touched_count;
}

// ---------------------------------------------------------------------------------------------
// neighbour search

/// Writes to `out`, in increasing order, every e in [begin, end) whose point (x[e], y[e], z[e])
/// lies closer to p than sqrt(reach2), and returns how many; vector twin. `out` needs room for
/// end - begin + 16. Reads up to a batch past `end` (the arrays must be padded by one
/// batch); those lanes are masked out. The hits of a batch are read off its mask's bits, so the
/// few points within reach cost a step each and the many beyond cost nothing.
template <class Arch, class T>
std::uint32_t within_reach_vector(const T* x, const T* y, const T* z, std::uint32_t begin, std::uint32_t end,
                                  const Vec3<T>& p, T reach2, std::uint32_t* out)
{
    using B = simd::Batch<T, Arch>;
    constexpr std::uint32_t L = std::uint32_t(B::size);
    const B px(p.x()), py(p.y()), pz(p.z()), r2(reach2);
    std::uint32_t found = 0;
    for (std::uint32_t e = begin; e < end; e += L)
    {
        const B dx = simd::load_unaligned<T, Arch>(x + e) - px;
        const B dy = simd::load_unaligned<T, Arch>(y + e) - py;
        const B dz = simd::load_unaligned<T, Arch>(z + e) - pz;
        const B d2 = dx * dx + dy * dy + dz * dz;
        std::uint64_t near = simd::lane_bits<T, Arch>(d2 < r2);
        if (end - e < L)
            near &= (std::uint64_t(1) << (end - e)) - 1;
        found += simd::write_set_lanes(near, e, out + found); // lowest lane first: increasing e
    }
    return found;
}

/// Scalar twin of within_reach_vector: the same points, in the same order.
template <class T>
std::uint32_t within_reach_scalar(const T* x, const T* y, const T* z, std::uint32_t begin, std::uint32_t end,
                                  const Vec3<T>& p, T reach2, std::uint32_t* out)
{
    std::uint32_t found = 0;
    for (std::uint32_t e = begin; e < end; ++e)
    {
        const T dx = x[e] - p.x(), dy = y[e] - p.y(), dz = z[e] - p.z();
        out[found] = e; // branch-free: whether a point is within reach is a coin toss
        found += dx * dx + dy * dy + dz * dz < reach2 ? 1u : 0u;
    }
    return found;
}

/// A particle's state in lanes: position, previous position and inverse mass (1 without masses).
template <class V>
struct BodyLanes
{
    V x, y, z, px, py, pz, w;
};

/// The state of the particles [i, i + batch) in lanes: the load a run of consecutive indices takes
/// instead of the gathers.
template <class Arch, class T>
SIMDVERLET_INLINE BodyLanes<simd::Batch<T, Arch>> load_run(const StateArrays<T>& s, std::size_t i)
{
    using B = simd::Batch<T, Arch>;
    return {simd::load_unaligned<T, Arch>(s.x + i),
            simd::load_unaligned<T, Arch>(s.y + i),
            simd::load_unaligned<T, Arch>(s.z + i),
            simd::load_unaligned<T, Arch>(s.px + i),
            simd::load_unaligned<T, Arch>(s.py + i),
            simd::load_unaligned<T, Arch>(s.pz + i),
            s.inv_mass ? simd::load_unaligned<T, Arch>(s.inv_mass + i) : B(T(1))};
}

/// Calls visit(a, b, live, p) for the pairs p in [p_begin, p_end) of (pair_a[p], pair_b[p]),
/// vector twin: a batch of pairs at a time from p_begin (a multiple of the batch width), both
/// bodies loaded, `live` the lanes before p_end whose two ends differ (a pair of a particle with
/// itself pads a batch). A batch that runs[p / width] marks has both ends consecutive and is
/// loaded whole; the others are gathered. pair_a and pair_b hold valid indices up to the batch
/// after p_end.
template <class Arch, class T, class Visit>
void for_each_pair_vector(const StateArrays<T>& state, const std::int32_t* pair_a, const std::int32_t* pair_b,
                          const std::uint8_t* runs, std::size_t p_begin, std::size_t p_end, Visit&& visit)
{
    using B = simd::Batch<T, Arch>;
    // A copy the visit's stores cannot alias (the intrinsics' stores may alias anything), so the
    // array addresses stay in registers instead of being read again after every store.
    const StateArrays<T> s = state;
    constexpr std::size_t L = B::size;
    const auto load = [&](const simd::IndexBatch<T, Arch>& index) {
        return BodyLanes<B>{simd::gather<T, Arch>(s.x, index),
                            simd::gather<T, Arch>(s.y, index),
                            simd::gather<T, Arch>(s.z, index),
                            simd::gather<T, Arch>(s.px, index),
                            simd::gather<T, Arch>(s.py, index),
                            simd::gather<T, Arch>(s.pz, index),
                            s.inv_mass ? simd::gather<T, Arch>(s.inv_mass, index) : B(T(1))};
    };
    const auto all = simd::first_lanes<T, Arch>(L);
    for (std::size_t p = p_begin; p < p_end; p += L)
    {
        if (runs[p / L])
        {
            visit(load_run<Arch>(s, std::size_t(pair_a[p])), load_run<Arch>(s, std::size_t(pair_b[p])), all, p);
            continue;
        }
        const auto a = simd::load_indices<T, Arch>(pair_a + p), b = simd::load_indices<T, Arch>(pair_b + p);
        visit(load(a), load(b),
              simd::index_mask<T, Arch>(a != b) && (p + L <= p_end ? all : simd::first_lanes<T, Arch>(p_end - p)), p);
    }
}

/// Scalar twin of for_each_pair_vector: one pair at a time, the same calls with T and bool.
template <class T, class Visit>
void for_each_pair_scalar(const StateArrays<T>& s, const std::int32_t* pair_a, const std::int32_t* pair_b,
                          std::size_t p_begin, std::size_t p_end, Visit&& visit)
{
    const auto load = [&](std::size_t i) {
        return BodyLanes<T>{s.x[i], s.y[i], s.z[i], s.px[i], s.py[i], s.pz[i], s.inv_mass ? s.inv_mass[i] : T(1)};
    };
    for (std::size_t p = p_begin; p < p_end; ++p)
        visit(load(std::size_t(pair_a[p])), load(std::size_t(pair_b[p])), pair_a[p] != pair_b[p], p);
}

/// Per-contact pushes, one record r per side of a pair: push (x[r], y[r], z[r]), and touching[r]
/// 1 where the pair touched, else 0.
template <class T>
struct PushArrays
{
    const T *x, *y, *z, *touching;
};

/// A particle's position and inverse mass (1 without masses), and what its contacts add up to.
template <class V>
struct PushedLanes
{
    V x, y, z, w;
    V dx, dy, dz, count;
};

/// Sums each particle's pushes and moves it where settle(pushed) says (it returns the new x, y,
/// z), vector twin, over groups [g_begin, g_end) of a lane table: group g's rows start at row
/// group_row[g] of `table` (one index per lane); its first row holds each lane's own particle,
/// the next rows the records of its pushes in order, a record of zeros once its list has ended.
/// A row that runs[row] marks holds consecutive indices and is loaded whole (a group of
/// consecutive particles is also stored whole); the others are gathered. Only the first `active`
/// lanes of the whole table are written back (the others repeat a group's first particle). Plain
/// adds: a record of zeros leaves a sum exactly as it was.
template <class Arch, class T, class Settle>
void settle_pushes_vector(const StateArrays<T>& state, const PushArrays<T>& pushes, const std::int32_t* table,
                          const std::uint8_t* runs, const std::uint32_t* group_row, std::size_t g_begin,
                          std::size_t g_end, std::size_t active, Settle&& settle)
{
    using B = simd::Batch<T, Arch>;
    // Copies the stores cannot alias (as in for_each_pair_vector).
    const StateArrays<T> s = state;
    const PushArrays<T> push = pushes;
    constexpr std::size_t L = B::size;
    for (std::size_t g = g_begin; g < g_end; ++g)
    {
        const std::size_t first_row = group_row[g], end_row = group_row[g + 1];
        const std::int32_t* const own = table + first_row * L;
        const bool run = runs[first_row] != 0;
        const auto own_index = simd::load_indices<T, Arch>(own);
        const auto load = [&](const T* src, bool whole, const std::int32_t* row, const auto& index) {
            return whole ? simd::load_unaligned<T, Arch>(src + row[0]) : simd::gather<T, Arch>(src, index);
        };
        const B zero(T(0));
        PushedLanes<B> p{load(s.x, run, own, own_index),
                         load(s.y, run, own, own_index),
                         load(s.z, run, own, own_index),
                         s.inv_mass ? load(s.inv_mass, run, own, own_index) : B(T(1)),
                         zero,
                         zero,
                         zero,
                         zero};
        for (std::size_t r = first_row + 1; r < end_row; ++r)
        {
            const std::int32_t* const row = table + r * L;
            const bool whole = runs[r] != 0;
            const auto record = simd::load_indices<T, Arch>(row);
            p.dx += load(push.x, whole, row, record);
            p.dy += load(push.y, whole, row, record);
            p.dz += load(push.z, whole, row, record);
            p.count += load(push.touching, whole, row, record);
        }
        const auto [x, y, z] = settle(p);
        if (run)
        {
            x.store_unaligned(s.x + own[0]);
            y.store_unaligned(s.y + own[0]);
            z.store_unaligned(s.z + own[0]);
            continue;
        }
        alignas(simd::kAlignment) T lanes[3][L];
        simd::store<T, Arch>(lanes[0], x);
        simd::store<T, Arch>(lanes[1], y);
        simd::store<T, Arch>(lanes[2], z);
        for (std::size_t l = 0; l < L && g * L + l < active; ++l)
        {
            const auto i = std::size_t(own[l]);
            s.x[i] = lanes[0][l];
            s.y[i] = lanes[1][l];
            s.z[i] = lanes[2][l];
        }
    }
}

/// Scalar twin of settle_pushes_vector: the particles who[a] (from `base`) for a in [a_begin,
/// a_end), particle k's records record[first[k] .. first[k] + count[k]).
template <class T, class Settle>
void settle_pushes_scalar(const StateArrays<T>& s, const PushArrays<T>& push, const std::uint32_t* who,
                          std::size_t a_begin, std::size_t a_end, std::size_t base, const std::uint32_t* first,
                          const std::uint32_t* count, const std::uint32_t* record, Settle&& settle)
{
    for (std::size_t a = a_begin; a < a_end; ++a)
    {
        const std::uint32_t k = who[a];
        const std::size_t i = base + k;
        PushedLanes<T> p{s.x[i], s.y[i], s.z[i], s.inv_mass ? s.inv_mass[i] : T(1), T(0), T(0), T(0), T(0)};
        for (std::uint32_t m = 0; m < count[k]; ++m)
        {
            const std::uint32_t r = record[first[k] + m];
            p.dx += push.x[r];
            p.dy += push.y[r];
            p.dz += push.z[r];
            p.count += push.touching[r];
        }
        const auto [x, y, z] = settle(p);
        s.x[i] = x;
        s.y[i] = y;
        s.z[i] = z;
    }
}

// ---------------------------------------------------------------------------------------------
// triangles on a grid cloth (wind, render normals)

/// a x b, written once over V.
template <class V>
SIMDVERLET_INLINE std::array<V, 3> cross(const std::array<V, 3>& a, const std::array<V, 3>& b)
{
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// Whether the grid triangle(s) whose two grid edges are the right slot of `right_of` and the down
/// slot of `down_of` are intact: both springs live (stiffness > 0). A cell's lower triangle
/// p00 p10 p11 is (p00, p10), its upper one p00 p11 p01 is (p01, p00). The one rule the wind, the
/// render normals and the render triangles share: a torn or cut edge drops the two triangles
/// beside it. Written once over V (a bool for V = T).
template <class V, class T>
SIMDVERLET_INLINE auto grid_triangle_intact(const ConstraintArrays<T>& c, std::size_t right_of, std::size_t down_of)
{
    const V zero(T(0));
    return simd::load_at<V>(c.stiffness[kGridRight] + right_of) > zero &&
           simd::load_at<V>(c.stiffness[kGridDown] + down_of) > zero;
}

// ---------------------------------------------------------------------------------------------
// wind on a grid cloth

/// A cloth's grid as the wind kernels see it: `height` rows of `width` particles from `base`, two
/// triangles per cell (lower: p00 p10 p11; upper: p00 p11 p01), cell = row x width + column. A
/// triangle feels the wind while both of its grid edges are live springs (the right slot of the
/// edge's left end, the down slot of its upper end), as the render mesh draws it: across a tear or
/// a cut the two sides part, and a triangle spanning the gap would catch the wind on an area that
/// grows as they separate.
template <class T>
struct WindGrid
{
    StateArrays<T> s;
    ConstraintArrays<T> c; ///< the springs, read for the triangles' edges
    std::size_t base, width, height;
    const T* lower_wind[3]; ///< the air at each lower triangle's centroid, by cell; nullptr: `wind`
    const T* upper_wind[3]; ///< likewise for the upper triangles
    T wind[3];              ///< the steady wind
    T normal_share;         ///< (pressure - skin_friction) / 6, from WindOptions (see wind_share)
    T tangent_share;        ///< skin_friction / 6
    T third_per_dt;         ///< 1 / (3 dt): the mean of three corners' motions as a velocity
};

/// Two rows of cells' triangle shares, the lower and upper triangle's per axis, and a row of
/// zeros. A row holds a zero before column 0 and at column width - 1, where no cell is, and the
/// zero row stands for the cells beyond the grid's first and last rows: every particle reads its
/// six triangles at fixed offsets with no test for the border. The rows take turns as the pass
/// moves down the grid, so the shares are read back from L1, not from a grid-sized array.
template <class T>
struct ShareRows
{
    T* data;            ///< size(width) values, zero where no cell is ever written
    std::size_t stride; ///< stride_for(width)

    static std::size_t stride_for(std::size_t width) noexcept { return width + 1 + simd::kPadLanes<T>; }
    static std::size_t size(std::size_t width) noexcept { return 13 * stride_for(width); }

    /// Row `turn` (0 or 1) of the lower (side 0) or upper (side 1) shares along axis k, at column 0.
    T* row(std::size_t turn, int side, int k) const noexcept
    {
        return data + ((turn * 2 + std::size_t(side)) * 3 + std::size_t(k)) * stride + 1;
    }
    const T* zeros() const noexcept { return data + 12 * stride + 1; }
};

/// The force on triangle (a, b, c) shared by each of its corners, written once over V: the
/// pressure along the normal, ~ (u . n) |u|, and skin friction along the rest of u, the air's
/// velocity relative to the triangle's mean motion; times the area, a third to each corner. A
/// collapsed triangle has no normal and feels nothing, nor does one that is not `intact`.
///
/// With N = (b - a) x (c - a), |N| twice the area and n = N / |N|, the share
/// |N| |u| / 6 (pressure (u . n) n + skin (u - (u . n) n)) is
/// normal_share (|N| |u| / |N|^2) (u . N) N + tangent_share |N| |u| u, with normal_share =
/// (pressure - skin) / 6 and tangent_share = skin / 6: one square root, of |N|^2 |u|^2, and one
/// division, where the direct form takes two of each kind.
template <class V, class M>
SIMDVERLET_INLINE std::array<V, 3> wind_share(const std::array<V, 3> (&x)[3], const std::array<V, 3> (&moved)[3],
                                              const std::array<V, 3>& air, const M& intact, const V& normal_share,
                                              const V& tangent_share, const V& third_per_dt)
{
    using T = simd::Scalar<V>;
    const V zero(T(0));
    const std::array<V, 3> e1 = {x[1][0] - x[0][0], x[1][1] - x[0][1], x[1][2] - x[0][2]};
    const std::array<V, 3> e2 = {x[2][0] - x[0][0], x[2][1] - x[0][1], x[2][2] - x[0][2]};
    const std::array<V, 3> normal = cross(e1, e2);
    const V area2 = normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]; // |N|^2
    const auto feels = intact && (area2 > zero);
    const auto relative = [&](int k) SIMDVERLET_LAMBDA_INLINE {
        return air[k] - (moved[0][k] + moved[1][k] + moved[2][k]) * third_per_dt;
    };
    const std::array<V, 3> u = {relative(0), relative(1), relative(2)};
    const V area_speed = simd::sqrt(area2 * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2])); // |N| |u|
    const V along = simd::select(feels, area_speed / area2, zero) *
                    (u[0] * normal[0] + u[1] * normal[1] + u[2] * normal[2]); // |u| (u . N) / |N|
    const V normal_part = normal_share * along, tangent_part = tangent_share * area_speed;
    const auto share = [&](int k) SIMDVERLET_LAMBDA_INLINE {
        return simd::select(feels, normal_part * normal[k] + tangent_part * u[k], zero);
    };
    return {share(0), share(1), share(2)};
}

/// The shares of the two triangles of cells [q, q + lanes of V) (q = row x width + column),
/// written at that column of `lower` and `upper`, one row per axis.
template <class V, class T>
SIMDVERLET_INLINE void wind_cells(const WindGrid<T>& g, std::size_t q, std::size_t column, T* const (&lower_out)[3],
                                  T* const (&upper_out)[3])
{
    const std::size_t p00 = g.base + q, corners[4] = {p00, p00 + 1, p00 + g.width + 1, p00 + g.width};
    T* const xs[3] = {g.s.x, g.s.y, g.s.z};
    T* const pxs[3] = {g.s.px, g.s.py, g.s.pz};
    std::array<V, 3> x[4], moved[4]; // p00, p10, p11, p01
    for (int c = 0; c < 4; ++c)
        for (int k = 0; k < 3; ++k)
        {
            x[c][k] = simd::load_at<V>(xs[k] + corners[c]);
            moved[c][k] = x[c][k] - simd::load_at<V>(pxs[k] + corners[c]);
        }
    const V normal_share(g.normal_share), tangent_share(g.tangent_share), third_per_dt(g.third_per_dt);
    const auto air = [&](const T* const(&field)[3]) SIMDVERLET_LAMBDA_INLINE {
        std::array<V, 3> a;
        for (int k = 0; k < 3; ++k)
            a[k] = field[0] ? simd::load_at<V>(field[k] + q) : V(g.wind[k]);
        return a;
    };
    const std::array<V, 3> lower_x[3] = {x[0], x[1], x[2]}, lower_moved[3] = {moved[0], moved[1], moved[2]};
    const std::array<V, 3> upper_x[3] = {x[0], x[2], x[3]}, upper_moved[3] = {moved[0], moved[2], moved[3]};
    const auto lower = wind_share(lower_x, lower_moved, air(g.lower_wind),
                                  grid_triangle_intact<V>(g.c, corners[0], corners[1]), normal_share, tangent_share,
                                  third_per_dt);
    const auto upper = wind_share(upper_x, upper_moved, air(g.upper_wind),
                                  grid_triangle_intact<V>(g.c, corners[3], corners[0]), normal_share, tangent_share,
                                  third_per_dt);
    for (int k = 0; k < 3; ++k)
    {
        simd::store_at(lower_out[k] + column, lower[k]);
        simd::store_at(upper_out[k] + column, upper[k]);
    }
}

/// Adds to particles [p, p + lanes of V) of the grid, at `column` of their row, the shares of
/// their six triangles: the two of their own cell (as p00) and the lower one of the cell to the
/// left (as p10), from their row's shares; the upper one of the cell above (as p01) and both of
/// the cell up and left (as p11), from the row above's. One fixed order.
template <class V, class T>
SIMDVERLET_INLINE void wind_gather(const WindGrid<T>& g, std::size_t p, std::size_t column, const T* const (&lower)[3],
                                   const T* const (&upper)[3], const T* const (&lower_above)[3],
                                   const T* const (&upper_above)[3])
{
    T* const as[3] = {g.s.ax, g.s.ay, g.s.az};
    const std::size_t c = column;
    for (int k = 0; k < 3; ++k)
    {
        const V own = simd::load_at<V>(lower[k] + c) + simd::load_at<V>(upper[k] + c);
        const V left_above = simd::load_at<V>(lower[k] + c - 1) + simd::load_at<V>(upper_above[k] + c);
        const V diagonal = simd::load_at<V>(lower_above[k] + c - 1) + simd::load_at<V>(upper_above[k] + c - 1);
        simd::store_at(as[k] + g.base + p, simd::load_at<V>(as[k] + g.base + p) + ((own + left_above) + diagonal));
    }
}

/// The wind on particle rows [first_row, last_row) of a grid: row by row, the shares of the cells
/// whose top-left corner is in the row go into one of `rows`' two turns, and the row gathers from
/// them and from the row above's, computed just before (by this call: a call that starts below the
/// first row computes the row above its first again, with the same bits). Vectorised, whole
/// batches of columns run through the vector twin (the cells' last batch moved back to end at the
/// last cell: it rewrites a few with the same bits) and the rest through the scalar one, the same
/// arithmetic, so neither the path nor the row split changes a bit.
template <class Arch, class T>
void blow_on_rows(const WindGrid<T> g, const ShareRows<T> rows, std::size_t first_row, std::size_t last_row,
                  bool vectorized)
{
    // g and rows by value: copies no store through their pointers can alias, so their fields stay
    // in registers instead of being read again after every store.
    using B = simd::Batch<T, Arch>;
    constexpr std::size_t L = B::size;
    const std::size_t w = g.width, cells = w - 1;
    const bool batches = vectorized && cells >= L;
    const auto fill = [&](std::size_t r) SIMDVERLET_LAMBDA_INLINE {
        T* const lower[3] = {rows.row(r % 2, 0, 0), rows.row(r % 2, 0, 1), rows.row(r % 2, 0, 2)};
        T* const upper[3] = {rows.row(r % 2, 1, 0), rows.row(r % 2, 1, 1), rows.row(r % 2, 1, 2)};
        std::size_t c = 0;
        if (batches)
        {
            for (; c + L <= cells; c += L)
                wind_cells<B>(g, r * w + c, c, lower, upper);
            if (c < cells)
                wind_cells<B>(g, r * w + cells - L, cells - L, lower, upper);
            c = cells;
        }
        for (; c < cells; ++c)
            wind_cells<T>(g, r * w + c, c, lower, upper);
    };
    const std::size_t end = std::min(last_row, g.height);
    if (first_row >= end)
        return;
    if (first_row > 0)
        fill(first_row - 1);
    const T* const zero = rows.zeros();
    for (std::size_t r = first_row; r < end; ++r)
    {
        const bool below = r + 1 < g.height; // the row has cells of its own
        if (below)
            fill(r);
        const auto own = [&](int side, int k) { return below ? rows.row(r % 2, side, k) : zero; };
        const auto above = [&](int side, int k) { return r > 0 ? rows.row((r + 1) % 2, side, k) : zero; };
        const T* const lower[3] = {own(0, 0), own(0, 1), own(0, 2)};
        const T* const upper[3] = {own(1, 0), own(1, 1), own(1, 2)};
        const T* const lower_above[3] = {above(0, 0), above(0, 1), above(0, 2)};
        const T* const upper_above[3] = {above(1, 0), above(1, 1), above(1, 2)};
        std::size_t c = 0;
        if (vectorized)
            for (; c + L <= w; c += L)
                wind_gather<B>(g, r * w + c, c, lower, upper, lower_above, upper_above);
        for (; c < w; ++c)
            wind_gather<T>(g, r * w + c, c, lower, upper, lower_above, upper_above);
    }
}

// ---------------------------------------------------------------------------------------------
// wind on a cloth's triangles (a cloth made from a mesh)

/// A cloth's triangles as the wind kernels see them where no grid tells the kernels where a
/// triangle's corners are: per triangle its corners' particles, whether it is intact, the air at
/// its centroid when a gust field sets it, and where its share goes. The arrays run to a whole
/// number of padding blocks, the padding triangles inert (all three corners one particle: no area,
/// no force), so the vector twin has no scalar tail.
template <class T>
struct WindTriangles
{
    StateArrays<T> s;
    const std::int32_t* corners[3]; ///< per triangle, the particle at its corner k
    const T* intact;                ///< per triangle 1 while its three edges are live springs, else 0
    const T* air[3];                ///< the air at each triangle's centroid; nullptr: `wind`
    T* shares[3];                   ///< out: per triangle the force each of its corners gets, per axis
    T wind[3];                      ///< the steady wind
    T normal_share;                 ///< (pressure - skin_friction) / 6, as WindGrid's
    T tangent_share;                ///< skin_friction / 6
    T third_per_dt;                 ///< 1 / (3 dt)
};

/// The shares of triangles [t, t + lanes of V), gathered from their corners: wind_share, the
/// arithmetic of a grid's cells, on other loads.
template <class V, class T>
SIMDVERLET_INLINE void wind_triangles(const WindTriangles<T>& m, std::size_t t)
{
    T* const xs[3] = {m.s.x, m.s.y, m.s.z};
    T* const pxs[3] = {m.s.px, m.s.py, m.s.pz};
    std::array<V, 3> x[3], moved[3];
    for (int c = 0; c < 3; ++c)
    {
        const auto at = simd::lane_index<V>(m.corners[c] + t, 0, false);
        for (int k = 0; k < 3; ++k)
        {
            x[c][k] = simd::read_lanes<V>(xs[k], at);
            moved[c][k] = x[c][k] - simd::read_lanes<V>(pxs[k], at);
        }
    }
    std::array<V, 3> air;
    for (int k = 0; k < 3; ++k)
        air[k] = m.air[0] ? simd::load_at<V>(m.air[k] + t) : V(m.wind[k]);
    const auto share = wind_share(x, moved, air, simd::load_at<V>(m.intact + t) > V(T(0)), V(m.normal_share),
                                  V(m.tangent_share), V(m.third_per_dt));
    for (int k = 0; k < 3; ++k)
        simd::store_at(m.shares[k] + t, share[k]);
}

/// The shares of triangles [first, last): whole batches through the vector twin when vectorised,
/// the rest through the scalar one, the same arithmetic on the same values (a gather reads what a
/// scalar load does), so neither the path nor the split changes a bit.
template <class Arch, class T>
void blow_on_triangles(const WindTriangles<T> m, std::size_t first, std::size_t last, bool vectorized)
{
    // m by value, as blow_on_rows takes its grid: the share stores cannot alias the copy.
    using B = simd::Batch<T, Arch>;
    constexpr std::size_t L = B::size;
    std::size_t t = first;
    if (vectorized)
        for (; t + L <= last; t += L)
            wind_triangles<B>(m, t);
    for (; t < last; ++t)
        wind_triangles<T>(m, t);
}

/// Adds to particles [first, last) of a cloth from `base` the shares of their triangles, which
/// triangles[offsets[p - base] .. offsets[p - base + 1]) lists in ascending order: one fixed order,
/// so each particle's sum has the same bits however the particles are split. Scalar on purpose: the
/// pass is bound by loading the shares (three to nine a particle, from wherever its triangles sit),
/// not by adding them, so a batch of particles gathering them gains nothing, and it would have to
/// run to its busiest lane's count. One walk of the list sums all three axes.
template <class T>
void gather_triangle_shares(const StateArrays<T>& s, std::size_t base, const std::uint32_t* offsets,
                            const std::uint32_t* triangles, const T* const (&shares)[3], std::size_t first,
                            std::size_t last)
{
    for (std::size_t p = first; p < last; ++p)
    {
        T x = T(0), y = T(0), z = T(0);
        for (std::uint32_t n = offsets[p - base], end = offsets[p - base + 1]; n < end; ++n)
        {
            const std::uint32_t t = triangles[n];
            x += shares[0][t];
            y += shares[1][t];
            z += shares[2][t];
        }
        s.ax[p] += x;
        s.ay[p] += y;
        s.az[p] += z;
    }
}

// ---------------------------------------------------------------------------------------------
// render normals on a grid cloth

/// Which sides of a grid particle have neighbours: false on the sheet's border. Uniform over a
/// lane group (the vector twin runs interior columns only), so a missing side is a branch, and
/// nothing outside the grid is ever read.
struct GridSides
{
    bool left, right, up, down;
};

/// n += a x b where `intact`, written once over V; `intact` = true (a bool) adds unmasked.
template <class V, class M>
SIMDVERLET_INLINE void add_cross_if(std::array<V, 3>& n, const std::array<V, 3>& a, const std::array<V, 3>& b,
                                    const M& intact)
{
    using T = simd::Scalar<V>;
    const std::array<V, 3> c = cross(a, b);
    for (std::size_t k = 0; k < 3; ++k)
        if constexpr (std::is_same_v<M, bool>)
            n[k] = n[k] + (intact ? c[k] : V(T(0)));
        else
            n[k] = n[k] + simd::select(intact, c[k], V(T(0)));
}

/// The area-weighted normal (not yet unit) of grid particle(s) p: the sum of the cross products of
/// its six triangles (the cells split along p00-p11, as the wind splits them), taken as a fan
/// around p through R, DR, D, L, UL, U. A triangle counts while both of its grid edges are live
/// (the right slot of the edge's left end, the down slot of its upper end); a torn or cut edge
/// drops the two triangles beside it. `Whole` promises every spring of the grid live, so no
/// spring is read and nothing is masked. Written once over V; one fixed order, so the twins agree.
/// Forced inline: the sides are branches on values the caller's loop holds fixed.
template <bool Whole, class V, class T>
SIMDVERLET_INLINE std::array<V, 3> fan_normal(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t p,
                                              std::size_t width, const GridSides& sides)
{
    const V zero(T(0));
    const std::ptrdiff_t w = std::ptrdiff_t(width);
    const T* const xs[3] = {s.x, s.y, s.z};
    std::array<V, 3> x;
    for (int k = 0; k < 3; ++k)
        x[k] = simd::load_at<V>(xs[k] + p);
    const auto edge = [&](std::ptrdiff_t offset) SIMDVERLET_LAMBDA_INLINE {
        std::array<V, 3> e;
        for (int k = 0; k < 3; ++k)
            e[k] = simd::load_at<V>(xs[k] + std::ptrdiff_t(p) + offset) - x[k];
        return e;
    };
    std::array<V, 3> n = {zero, zero, zero};
    if constexpr (Whole)
        if (sides.left && sides.right && sides.up && sides.down)
        {
            // All six triangles there: the six cross products of the ring R, DR, D, L, UL, U
            // regroup into four, R x DR + DR x D = DR x (D - R) and L x UL + UL x U = UL x (U - L).
            const auto r = edge(1), dr = edge(w + 1), d = edge(w), l = edge(-1), ul = edge(-w - 1), u = edge(-w);
            const std::array<V, 3> d_r = {d[0] - r[0], d[1] - r[1], d[2] - r[2]};
            const std::array<V, 3> u_l = {u[0] - l[0], u[1] - l[1], u[2] - l[2]};
            add_cross_if(n, dr, d_r, true);
            add_cross_if(n, ul, u_l, true);
            add_cross_if(n, d, l, true);
            add_cross_if(n, u, r, true);
            return n;
        }
    // Whether the triangle on the edges (right slot of p + a, down slot of p + b) is intact: a
    // constant true on a whole sheet, which add_cross_if adds unmasked.
    const auto intact = [&](std::ptrdiff_t a, std::ptrdiff_t b) SIMDVERLET_LAMBDA_INLINE {
        if constexpr (Whole)
            return true;
        else
            return grid_triangle_intact<V>(c, std::size_t(std::ptrdiff_t(p) + a), std::size_t(std::ptrdiff_t(p) + b));
    };
    if (sides.right && sides.down)
    {
        const auto r = edge(1), dr = edge(w + 1), d = edge(w);
        add_cross_if(n, r, dr, intact(0, 1));
        add_cross_if(n, dr, d, intact(w, 0));
    }
    if (sides.down && sides.left)
        add_cross_if(n, edge(w), edge(-1), intact(-1, 0));
    if (sides.left && sides.up)
    {
        const auto l = edge(-1), ul = edge(-w - 1), u = edge(-w);
        add_cross_if(n, l, ul, intact(-1, -w - 1));
        add_cross_if(n, ul, u, intact(-w - 1, -w));
    }
    if (sides.up && sides.right)
        add_cross_if(n, edge(-w), edge(1), intact(0, -w));
    return n;
}

/// n scaled to unit length; (0, 0, 1) where it has none (a particle in no intact triangle, or in
/// collapsed ones only), so a renderer never meets a zero or NaN normal.
template <class V>
SIMDVERLET_INLINE std::array<V, 3> unit_or_up(const std::array<V, 3>& n)
{
    using T = simd::Scalar<V>;
    const V zero(T(0)), one(T(1));
    const V length = simd::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    const auto usable = (length > zero) && (length < V(std::numeric_limits<T>::infinity()));
    const V inv = one / simd::select(usable, length, one);
    return {simd::select(usable, n[0] * inv, zero), simd::select(usable, n[1] * inv, zero),
            simd::select(usable, n[2] * inv, one)};
}

/// Render vertices of rows [first_row, last_row) of a width x height grid stored row by row from
/// `base`: positions and unit normals into positions[particle - base] and normals[particle - base]
/// as (x, y, z) triples of T; fan_normal's `Whole` as there. The vector twin takes batches of
/// interior columns, the last one overlapping its neighbour; the two border columns take the
/// scalar twin, the same arithmetic, so neither the path nor the row split changes a bit.
template <bool Whole, class Arch, class T>
void grid_vertex_rows(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t base, std::size_t width,
                      std::size_t height, std::size_t first_row, std::size_t last_row, bool vectorized, T* positions,
                      T* normals)
{
    using B = simd::Batch<T, Arch>;
    constexpr std::size_t L = B::size;
    const auto vertex = [&](auto lanes, std::size_t local, const GridSides& sides) SIMDVERLET_LAMBDA_INLINE {
        using V = typename decltype(lanes)::type;
        const std::size_t p = base + local;
        simd::store_interleaved3(positions + 3 * local, simd::load_at<V>(s.x + p), simd::load_at<V>(s.y + p),
                                 simd::load_at<V>(s.z + p));
        const std::array<V, 3> n = unit_or_up(fan_normal<Whole, V>(s, c, p, width, sides));
        simd::store_interleaved3(normals + 3 * local, n[0], n[1], n[2]);
    };
    for (std::size_t r = first_row; r < std::min(last_row, height); ++r)
    {
        const bool up = r > 0, down = r + 1 < height;
        const std::size_t row = r * width;
        const std::size_t last = width - 1;
        vertex(std::type_identity<T>{}, row, {.left = false, .right = width > 1, .up = up, .down = down});
        std::size_t col = 1;
        if (vectorized && width >= L + 2)
        {
            // Whole batches of interior columns, the last one moved back to end at column
            // width - 2: it recomputes a few columns, with the same bits, instead of leaving up to
            // a batch of them to the scalar twin.
            const GridSides interior{.left = true, .right = true, .up = up, .down = down};
            for (; col + L < width; col += L)
                vertex(std::type_identity<B>{}, row + col, interior);
            if (col < last)
                vertex(std::type_identity<B>{}, row + last - L, interior);
            col = last;
        }
        for (; col < last; ++col)
            vertex(std::type_identity<T>{}, row + col, {.left = true, .right = true, .up = up, .down = down});
        if (last > 0)
            vertex(std::type_identity<T>{}, row + last, {.left = true, .right = false, .up = up, .down = down});
    }
}

/// grid_vertex_rows with `all_intact` as its `Whole`, chosen once for the rows.
template <class Arch, class T>
void grid_vertices(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t base, std::size_t width,
                   std::size_t height, std::size_t first_row, std::size_t last_row, bool vectorized, bool all_intact,
                   T* positions, T* normals)
{
    if (all_intact)
        grid_vertex_rows<true, Arch>(s, c, base, width, height, first_row, last_row, vectorized, positions, normals);
    else
        grid_vertex_rows<false, Arch>(s, c, base, width, height, first_row, last_row, vectorized, positions, normals);
}

// ---------------------------------------------------------------------------------------------
// tearing scan

/// |length - rest| / rest for a spring along d with rest length `rest`, written once over V.
template <class V>
V spring_strain(const V& dx, const V& dy, const V& dz, const V& rest)
{
    return simd::abs(simd::sqrt(dx * dx + dy * dy + dz * dz) - rest) / rest;
}

/// A loose test on squared lengths that every spring strained past the limit passes: strain > m
/// means length > (1 + m) rest or length < (1 - m) rest, so squared lengths outside those bounds,
/// loosened by 1e-4 (far beyond any rounding), are the only ones worth a square root and a
/// division. Nearly every lane group of a sheet fails it and skips both.
template <class T>
struct StrainBounds
{
    T longer, shorter; ///< times rest^2: the squared lengths past which the exact strain is computed

    explicit StrainBounds(T max_strain)
        : longer((T(1) + max_strain) * (T(1) + max_strain) * T(1 - 1e-4)),
          shorter(std::max(T(1) - max_strain, T(0)) * std::max(T(1) - max_strain, T(0)) * T(1 + 1e-4))
    {
    }
};

/// Calls emit(strain, particle, slot) for each lane of the group at i whose spring in a slot is live
/// with a positive rest length and strained past max_strain (or NaN: a diverged sheet has nothing
/// left to hold), slot by slot, lowest lane first. `in_range` masks the lanes as bits, lane l in
/// bit l. The four slots in one visit: the group's own positions are loaded once, and its slot
/// arrays and neighbours are read while they are in cache. The scan is bound by what it reads, so
/// the stiffness (live <=> stiffness > 0) is read only for the few springs past the limit: a slot
/// with no neighbour has rest 0, or reads a real particle and is dropped there.
template <class V, class T, class Emit>
SIMDVERLET_INLINE void strained_lanes(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t i,
                                      std::uint64_t in_range, T max_strain, const StrainBounds<T>& bounds, Emit& emit)
{
    const V zero(T(0));
    const V x = simd::load_lanes<V>(s.x + i), y = simd::load_lanes<V>(s.y + i), z = simd::load_lanes<V>(s.z + i);
    const std::size_t row = i - c.first;
    for (int k = 0; k < kSlots; ++k)
    {
        const V rest = simd::load_lanes<V>(c.rest[k] + row);
        const auto spring = rest > zero;
        if (!simd::any(spring))
            continue;
        const auto at = simd::lane_index<V>(c.neighbour[k] + row, s.padded, true);
        const V dx = simd::read_lanes<V>(s.x, at) - x;
        const V dy = simd::read_lanes<V>(s.y, at) - y;
        const V dz = simd::read_lanes<V>(s.z, at) - z;
        const V length2 = dx * dx + dy * dy + dz * dz, rest2 = rest * rest;
        // Outside the bounds, or NaN: the complement of an ordered test that NaN fails.
        const auto maybe = !((length2 <= rest2 * V(bounds.longer)) && (length2 >= rest2 * V(bounds.shorter)));
        if (!simd::any(spring && maybe))
            continue;
        const V strain = spring_strain(dx, dy, dz, rest);
        // NaN as !(v == v): xsimd 8's AVX and AVX-512 != is ordered (false for NaN), unlike SSE2's and C++'s.
        std::uint64_t over = simd::lane_bits(spring && ((strain > V(max_strain)) || !(strain == strain))) & in_range;
        if (over == 0)
            continue;
        alignas(simd::kAlignment) T values[simd::kPadLanes<T>];
        simd::store_at(values, strain);
        for (; over != 0; over &= over - 1)
        {
            const int lane = std::countr_zero(over);
            if (c.stiffness[k][row + std::size_t(lane)] > T(0))
                emit(values[lane], i + std::size_t(lane), k);
        }
    }
}

/// Every spring of one layer's particles [begin, end) (inside the layer) strained past max_strain,
/// reported through emit(strain, particle, slot), lane group by lane group and slot by slot within a group (a
/// group is one particle on the scalar path, so the two paths report the same springs with the
/// same bits, in different orders: callers sort). Vectorised, the whole batches go through the
/// vector twin and the ends through the scalar one. Only the few over-strained springs leave the
/// registers.
template <class Arch, class T, class Emit>
void find_strained(const StateArrays<T> s, const ConstraintArrays<T> c, std::size_t begin, std::size_t end,
                   T max_strain, bool vectorized, Emit&& emit)
{
    // s and c by value, as blow_on_rows takes its grid: emit's stores cannot alias the copies.
    using B = simd::Batch<T, Arch>;
    constexpr std::size_t L = B::size;
    constexpr std::uint64_t all = L == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << L) - 1;
    const StrainBounds<T> bounds(max_strain);
    std::size_t i = begin;
    if (vectorized)
    {
        for (const std::size_t aligned = std::min(end, (begin + L - 1) / L * L); i < aligned; ++i)
            strained_lanes<T>(s, c, i, 1, max_strain, bounds, emit);
        for (; i + L <= end; i += L)
            strained_lanes<B>(s, c, i, all, max_strain, bounds, emit);
    }
    for (; i < end; ++i)
        strained_lanes<T>(s, c, i, 1, max_strain, bounds, emit);
}

// ---------------------------------------------------------------------------------------------
// the fused step sweep

/// sweep_vector for a simulation with (`Layered`) or without further constraint layers.
template <bool Layered, class Arch, class T>
bool sweep_lanes(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::span<const ConstraintArrays<T>> extra,
                 const IntegrateParams<T>& p, std::size_t begin, std::size_t end, int iterations,
                 bool read_accumulators, bool contiguous)
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
            sum = solve_sum_vector<Layered, Arch>(s, c, extra, i, contiguous, iota);
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
/// coordinate is not finite.
template <class Arch, class T>
bool sweep_vector(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::span<const ConstraintArrays<T>> extra,
                  const IntegrateParams<T>& p, std::size_t begin, std::size_t end, int iterations,
                  bool read_accumulators, bool contiguous = true)
{
    if (extra.empty())
        return sweep_lanes<false, Arch>(s, c, extra, p, begin, end, iterations, read_accumulators, contiguous);
    return sweep_lanes<true, Arch>(s, c, extra, p, begin, end, iterations, read_accumulators, contiguous);
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

/// What survey_moves found among the moves a - b of particles [0, n), measured from a centre.
template <class T>
struct MoveSurvey
{
    T first, second;      ///< the two largest squared distances from the centre, first >= second
    std::array<T, 3> sum; ///< the moves' sums, axis by axis: not finite when a move is not (then
                          ///< first and second mean nothing)
    std::uint32_t beyond; ///< how many moved farther than the limit from the centre, listed in `out`
};

/// Squared distance of a move from the centre c.
template <class V>
SIMDVERLET_INLINE V squared_from(const V& x, const V& y, const V& z, const std::array<simd::Scalar<V>, 3>& c)
{
    const V dx = x - V(c[0]), dy = y - V(c[1]), dz = z - V(c[2]);
    return dx * dx + dy * dy + dz * dz;
}

/// Keeps the two largest of the squared distances seen, as a multiset (a tie fills both).
template <class V>
SIMDVERLET_INLINE void rank_move(V& first, V& second, const V& d2)
{
    second = simd::max(simd::min(d2, first), second);
    first = simd::max(d2, first);
}

/// The moves a - b of the batch of particles from k (unaligned: k need not be a batch multiple).
template <class Arch, class T>
SIMDVERLET_INLINE simd::Batch<T, Arch> batch_move(const T* a, const T* b, std::size_t k)
{
    return simd::load_unaligned<T, Arch>(a + k) - simd::load_unaligned<T, Arch>(b + k);
}

/// Adds particle k's move (mx, my, mz) to a survey, one at a time.
template <class T>
SIMDVERLET_INLINE void survey_one(MoveSurvey<T>& survey, T mx, T my, T mz, const std::array<T, 3>& centre, T limit2,
                                  std::uint32_t k, std::uint32_t* out)
{
    survey.sum[0] += mx;
    survey.sum[1] += my;
    survey.sum[2] += mz;
    const T d2 = squared_from(mx, my, mz, centre);
    rank_move(survey.first, survey.second, d2);
    out[survey.beyond] = k; // branch-free: written always, kept when past the limit
    survey.beyond += d2 > limit2 ? 1u : 0u;
}

/// One read of every particle's move a - b since self-collision's candidate list was built: the
/// two largest distances of a move from `centre` (squared), the moves' sums, and (written to
/// `out`, in increasing order) every k < n that moved farther than sqrt(limit2) from the centre.
/// Vector twin: whole batches, then the rest one by one; the arrays need no alignment; `out`
/// needs room for n + 16. The two largest and the list are the scalar twin's bits (max, min and
/// a comparison round nothing); the sums are added lane by lane and then across, so they differ
/// from the scalar twin's by rounding (callers use them for a centre any value would do for).
template <class Arch, class T>
MoveSurvey<T> survey_moves_vector(const T* ax, const T* ay, const T* az, const T* bx, const T* by, const T* bz,
                                  std::size_t n, const std::array<T, 3>& centre, T limit2, std::uint32_t* out)
{
    using B = simd::Batch<T, Arch>;
    constexpr std::size_t L = B::size;
    const std::size_t whole = n / L * L;
    const B limit(limit2);
    B first(T(0)), second(T(0)), sx(T(0)), sy(T(0)), sz(T(0));
    std::uint32_t beyond = 0;
    for (std::size_t k = 0; k < whole; k += L)
    {
        const B mx = batch_move<Arch>(ax, bx, k), my = batch_move<Arch>(ay, by, k), mz = batch_move<Arch>(az, bz, k);
        sx += mx;
        sy += my;
        sz += mz;
        const B d2 = squared_from(mx, my, mz, centre);
        rank_move(first, second, d2);
        beyond += simd::write_set_lanes(simd::lane_bits<T, Arch>(d2 > limit), std::uint32_t(k), out + beyond);
    }
    alignas(simd::kAlignment) T lanes[2][L];
    first.store_aligned(lanes[0]);
    second.store_aligned(lanes[1]);
    MoveSurvey<T> survey{T(0),
                         T(0),
                         {simd::reduce_add<T, Arch>(sx), simd::reduce_add<T, Arch>(sy), simd::reduce_add<T, Arch>(sz)},
                         beyond};
    for (std::size_t l = 0; l < L; ++l)
    {
        rank_move(survey.first, survey.second, lanes[0][l]);
        rank_move(survey.first, survey.second, lanes[1][l]);
    }
    for (std::size_t k = whole; k < n; ++k)
    {
        survey_one(survey, ax[k] - bx[k], ay[k] - by[k], az[k] - bz[k], centre, limit2, std::uint32_t(k), out);
    }
    return survey;
}

/// Scalar twin of survey_moves_vector (its sums in order).
template <class T>
MoveSurvey<T> survey_moves(const T* ax, const T* ay, const T* az, const T* bx, const T* by, const T* bz, std::size_t n,
                           const std::array<T, 3>& centre, T limit2, std::uint32_t* out)
{
    MoveSurvey<T> survey{T(0), T(0), {T(0), T(0), T(0)}, 0};
    for (std::size_t k = 0; k < n; ++k)
    {
        survey_one(survey, ax[k] - bx[k], ay[k] - by[k], az[k] - bz[k], centre, limit2, std::uint32_t(k), out);
    }
    return survey;
}

} // namespace simdverlet::kernels
