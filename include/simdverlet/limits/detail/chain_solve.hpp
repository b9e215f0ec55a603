// The chain solve: a batch of chains (spring_chains.hpp), a vector lane a chain, each chain's
// springs held at their bounds by one exact solve of its tridiagonal system (Thomas' algorithm),
// and the read that finds a batch already within its bounds. The strain limit solves its families
// with it; the column limit shares its two expressions (bound_length, eliminate_spring).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simd_lanes.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/limits/detail/spring_chains.hpp"

namespace simdverlet::detail
{

/// Scratch of one batch's solve, a value per node and lane: the positions and inverse masses read,
/// the eliminated super-diagonal and right-hand side, and the reciprocal spring length.
template <class T>
struct ChainScratch
{
    simd::AlignedVector<T> x, y, z, w, cp, dp, inv;

    void reserve(std::size_t values)
    {
        for (auto* a : {&x, &y, &z, &w, &cp, &dp, &inv})
            if (a->size() < values)
                a->resize(values);
    }
};

/// The length a chain solve holds a spring at: its own, clamped to [rest shortest, rest longest]
/// (shortest = 1 - compression, longest = 1 + stretch). One expression for the strain limit, the
/// column limit and the read that decides whether a batch needs solving, so all three judge a
/// spring alike to the bit.
template <class V>
SIMDVERLET_INLINE V bound_length(const V& length, const V& rest, const V& shortest, const V& longest)
{
    return simd::min(simd::max(length, rest * shortest), rest * longest);
}

/// The forward elimination of one spring's row of a chain's tridiagonal system (Thomas' algorithm),
/// shared by the strain limit and the column limit. `alignment` is n_{t-1} . n_t, the dot product of
/// the spring above's direction and this one's; `change` the length change the row asks for. The
/// row's sub-diagonal -w_up alignment is the row above's super-diagonal, so its eliminated value
/// is formed here and returned; `pivot` and `dp` carry the row above's pivot and eliminated
/// right-hand side in and this row's out. A spring that is not live is an identity row. So is one
/// whose pivot vanishes (kPivotFloor): a free particle between two pinned ones on a straight line
/// cannot shorten either spring, the system is singular there, and the spring is dropped from
/// `live` rather than dividing by nothing. The caller then drops its direction too.
template <class V>
inline constexpr simd::Scalar<V> kPivotFloor = simd::Scalar<V>(1e-4);

template <class V, class M>
SIMDVERLET_INLINE V eliminate_spring(const V& w_up, const V& w, const V& alignment, M& live, const V& change, V& pivot,
                                     V& dp)
{
    const V zero(simd::Scalar<V>(0)), one(simd::Scalar<V>(1));
    const V a = zero - w_up * alignment;
    const V cp_above = a / pivot;
    const V eliminated = (w_up + w) - a * cp_above;
    live = live && (eliminated > V(kPivotFloor<V>) * (w_up + w));
    pivot = simd::select(live, eliminated, one);
    dp = simd::select(live, (change - a * dp) / pivot, zero);
    return simd::select(live, cp_above, zero);
}

/// Where a batch's lanes read and write their particles: the vector solve picks by the batch's
/// shape, the scalar twin always indexes (the same values either way). A rows batch moves its
/// positions through the scratch a tile of lanes x lanes nodes at a time: `load_rows` fills the
/// scratch from the particle arrays before the forward pass, `store_rows` writes the new positions
/// the backward pass left in the scratch.
template <class V, class T>
struct ChainAccess
{
    const StateArrays<T>& s;
    const std::int32_t* nodes; ///< the batch's, from the lane
    std::size_t lanes;
    ChainShape shape;

    static constexpr std::size_t W = sizeof(V) / sizeof(T); ///< values a node takes in scratch: 1, or the lanes

    /// Reads node t's positions and inverse mass (0 past a chain's end).
    void read(std::size_t t, V& x, V& y, V& z, V& w) const
    {
        const std::int32_t* const at = nodes + t * lanes;
        if constexpr (W > 1)
            if (shape == ChainShape::runs)
            {
                const std::size_t first = std::size_t(at[0]);
                x = V::load_unaligned(s.x + first), y = V::load_unaligned(s.y + first),
                z = V::load_unaligned(s.z + first);
                w = s.inv_mass ? V::load_unaligned(s.inv_mass + first) : V(T(1));
                return;
            }
        const auto index = simd::lane_index<V>(at, s.padded, false);
        x = simd::read_lanes<V>(s.x, index), y = simd::read_lanes<V>(s.y, index), z = simd::read_lanes<V>(s.z, index);
        w = s.inv_mass ? simd::read_lanes<V>(s.inv_mass, index) : V(T(1));
        w = simd::select(simd::present_lanes<V>(at), w, V(T(0)));
    }

    void write(std::size_t t, const V& x, const V& y, const V& z) const
    {
        const std::int32_t* const at = nodes + t * lanes;
        if constexpr (W > 1)
            if (shape == ChainShape::runs)
            {
                const std::size_t first = std::size_t(at[0]);
                x.store_unaligned(s.x + first), y.store_unaligned(s.y + first), z.store_unaligned(s.z + first);
                return;
            }
        const auto index = simd::lane_index<V>(at, s.padded, false);
        const auto present = simd::present_lanes<V>(at);
        simd::write_lanes<V>(s.x, index, present, x);
        simd::write_lanes<V>(s.y, index, present, y);
        simd::write_lanes<V>(s.z, index, present, z);
    }

    /// Nodes [0, tiled) of a rows batch go through tiles; 0 for any other batch and the scalar twin.
    std::size_t tiled(std::size_t length) const { return W > 1 && shape == ChainShape::rows ? length / W * W : 0; }

    /// Moves `tiles` tiles between the particle array `a` and the scratch `out` (node t's lanes at
    /// out + t W): each lane's W consecutive particles are one load, turned into W nodes' batches.
    void load_rows(const T* a, T* out, std::size_t tiled) const
    {
        if constexpr (W > 1)
            for (std::size_t t0 = 0; t0 < tiled; t0 += W)
            {
                std::array<V, W> tile;
                for (std::size_t l = 0; l < W; ++l)
                    tile[l] = V::load_unaligned(a + std::size_t(nodes[l]) + t0);
                simd::transpose(tile);
                for (std::size_t k = 0; k < W; ++k)
                    tile[k].store_aligned(out + (t0 + k) * W);
            }
    }

    void store_rows(const T* in, T* a, std::size_t tiled) const
    {
        if constexpr (W > 1)
            for (std::size_t t0 = 0; t0 < tiled; t0 += W)
            {
                std::array<V, W> tile;
                for (std::size_t k = 0; k < W; ++k)
                    tile[k] = V::load_aligned(in + (t0 + k) * W);
                simd::transpose(tile);
                for (std::size_t l = 0; l < W; ++l)
                    tile[l].store_unaligned(a + std::size_t(nodes[l]) + t0);
            }
    }
};

/// Whether a spring whose ends lie `dx, dy, dz` apart is one a chain solve would change: live
/// (with rest and length, as solve_chain_batch reads them) and off its bound_length. The solve's
/// own operations, so it decides as the solve does, spring by spring.
template <class V>
SIMDVERLET_INLINE auto spring_past_bounds(const V& dx, const V& dy, const V& dz, const V& rest, const V& shortest,
                                          const V& longest)
{
    const V zero(simd::Scalar<V>(0));
    const V length = simd::sqrt(dx * dx + dy * dy + dz * dz);
    return (rest > zero) && (length > zero) && !(bound_length(length, rest, shortest, longest) == length);
}

/// Whether every spring of a runs or rows batch lies within its bounds, so that its solve would
/// move nothing (every row of its system asks for no change: lambda is 0 throughout, each move a
/// zero, which could only turn a coordinate of exactly -0 into +0). A family
/// that carries no load, such as the rows of a sheet hung along its top row, then costs a read of
/// its springs instead of a solve. Decides spring by spring as the solve does. A runs batch is read
/// node by node, a rows batch lane by lane, W springs of a row at a time (the last block
/// overlapping the one before), both with contiguous loads; stops at the first spring past a bound.
/// False for any other batch: a scattered batch's gathers would cost most of what its solve does.
/// Springs between two pinned particles count as past a bound here, where the solve would leave
/// them; the answer errs towards solving.
template <class V, class T>
bool chain_batch_within_bounds(const StateArrays<T>& s, const ChainFamily<T>& family, std::size_t batch,
                               std::size_t lanes, T stretch, T compression)
{
    constexpr std::size_t W = sizeof(V) / sizeof(T);
    static_assert(W > 1, "the scalar twin solves every batch");
    if (lanes != W)
        return false;
    const std::size_t n = std::size_t(family.length[batch]);
    const std::int32_t* const nodes = family.nodes.data() + family.offset[batch];
    const T* const rest = family.rest.data() + family.offset[batch];
    const V longest(T(1) + stretch), shortest(T(1) - compression);
    const auto past = [&](std::size_t lo, std::size_t hi, const V& r) {
        const V dx = V::load_unaligned(s.x + hi) - V::load_unaligned(s.x + lo),
                dy = V::load_unaligned(s.y + hi) - V::load_unaligned(s.y + lo),
                dz = V::load_unaligned(s.z + hi) - V::load_unaligned(s.z + lo);
        return simd::any(spring_past_bounds(dx, dy, dz, r, shortest, longest));
    };
    if (family.shape[batch] == ChainShape::runs)
    {
        for (std::size_t t = 1; t < n; ++t)
            if (past(std::size_t(nodes[(t - 1) * W]), std::size_t(nodes[t * W]), V::load_unaligned(rest + t * W)))
                return false;
        return true;
    }
    if (family.shape[batch] != ChainShape::rows || n < W + 1)
        return false;
    for (std::size_t t1 = 1; t1 < n; t1 = t1 + W < n && t1 + 2 * W > n ? n - W : t1 + W)
    {
        std::array<V, W> rests; // springs t1 .. t1 + W - 1, turned: rests[l] is lane l's
        for (std::size_t k = 0; k < W; ++k)
            rests[k] = V::load_unaligned(rest + (t1 + k) * W);
        simd::transpose(rests);
        for (std::size_t l = 0; l < W; ++l)
        {
            const std::size_t hi = std::size_t(nodes[l]) + t1;
            if (past(hi - 1, hi, rests[l]))
                return false;
        }
    }
    return true;
}

/// One solve of a batch's chains, written once for a scalar (lane `lane` alone) and a batch (every
/// lane, lane = 0). Spring t joins nodes t - 1 and t and is held at its length clamped to
/// [rest (1 - compression), rest (1 + stretch)]: the rows of J W J^T are w_{t-1} + w_t on the
/// diagonal and -w_{t-1} n_{t-1} . n_t between springs t - 1 and t. The forward pass forms each
/// spring's direction and row and eliminates; the backward pass finds lambda and moves each node by
/// w (lambda_t n_t - lambda_{t+1} n_{t+1}). A spring past a chain's end, without length or between
/// two pinned particles is an identity row: the chain parts there. With kCount, returns the springs
/// that were past a bound when the solve began (only a step's last pass reports them).
template <class V, bool kCount, class T>
int solve_chain_batch(const StateArrays<T>& s, const ChainFamily<T>& family, std::size_t batch, std::size_t lane,
                      std::size_t lanes, T stretch, T compression, ChainScratch<T>& scratch)
{
    using Access = ChainAccess<V, T>;
    constexpr std::size_t W = Access::W;
    const V zero(T(0)), one(T(1));
    const V longest(T(1) + stretch), shortest(T(1) - compression);
    const std::size_t n = std::size_t(family.length[batch]);
    const Access access{s, family.nodes.data() + family.offset[batch] + lane, lanes, family.shape[batch]};
    const T* const rest = family.rest.data() + family.offset[batch] + lane;
    T *const sx = scratch.x.data(), *const sy = scratch.y.data(), *const sz = scratch.z.data(),
             *const sw = scratch.w.data(), *const cps = scratch.cp.data(), *const dps = scratch.dp.data(),
             *const invs = scratch.inv.data();
    // A rows batch's first `tiled` nodes come in through tiles; the others are read one by one.
    const std::size_t tiled = access.tiled(n);
    access.load_rows(s.x, sx, tiled), access.load_rows(s.y, sy, tiled), access.load_rows(s.z, sz, tiled);
    if (s.inv_mass)
        access.load_rows(s.inv_mass, sw, tiled);
    else
        std::fill(sw, sw + tiled * W, T(1));
    const auto node = [&](std::size_t t, V& x, V& y, V& z, V& w) {
        if (t < tiled)
        {
            x = simd::load_at<V>(sx + t * W), y = simd::load_at<V>(sy + t * W), z = simd::load_at<V>(sz + t * W);
            w = simd::load_at<V>(sw + t * W);
            return;
        }
        access.read(t, x, y, z, w);
        simd::store_at(sx + t * W, x), simd::store_at(sy + t * W, y), simd::store_at(sz + t * W, z);
        simd::store_at(sw + t * W, w);
    };
    V ux, uy, uz, w_up;
    node(0, ux, uy, uz, w_up);
    V pnx = zero, pny = zero, pnz = zero; // the spring above's direction: none above node 1
    V pivot = one, dp = zero;             // the row above's pivot and eliminated right-hand side
    int past = 0;
    for (std::size_t t = 1; t < n; ++t)
    {
        V x, y, z, w;
        node(t, x, y, z, w);
        const V dx = x - ux, dy = y - uy, dz = z - uz;
        const V length = simd::sqrt(dx * dx + dy * dy + dz * dz);
        const V r = simd::load_at<V>(rest + t * lanes);
        auto live = (r > zero) && (length > zero) && (w_up + w > zero);
        const V target = bound_length(length, r, shortest, longest);
        if constexpr (kCount)
            past += simd::count(live && !(target == length)); // != is ordered on AVX in xsimd 8
        const V inv = simd::select(live, one / simd::select(live, length, one), zero);
        const V nx = dx * inv, ny = dy * inv, nz = dz * inv;
        const V cp_above = eliminate_spring(w_up, w, pnx * nx + pny * ny + pnz * nz, live, target - length, pivot, dp);
        simd::store_at(cps + (t - 1) * W, cp_above);
        simd::store_at(dps + t * W, dp);
        simd::store_at(invs + t * W, simd::select(live, inv, zero)); // 0 where the row was dropped
        ux = x, uy = y, uz = z, w_up = w;
        pnx = simd::select(live, nx, zero), pny = simd::select(live, ny, zero), pnz = simd::select(live, nz, zero);
    }
    V lambda_below = zero, bx = zero, by = zero, bz = zero; // the spring below: lambda, direction
    for (std::size_t t = n; t-- > 0;)
    {
        const V x = simd::load_at<V>(sx + t * W), y = simd::load_at<V>(sy + t * W), z = simd::load_at<V>(sz + t * W);
        V lambda = zero, nx = zero, ny = zero, nz = zero; // node 0 has no spring above
        if (t > 0)
        {
            const V inv = simd::load_at<V>(invs + t * W);
            nx = (x - simd::load_at<V>(sx + (t - 1) * W)) * inv;
            ny = (y - simd::load_at<V>(sy + (t - 1) * W)) * inv;
            nz = (z - simd::load_at<V>(sz + (t - 1) * W)) * inv;
            const V cp = t + 1 < n ? simd::load_at<V>(cps + t * W) : zero;
            lambda = simd::load_at<V>(dps + t * W) - cp * lambda_below;
        }
        const V w = simd::load_at<V>(sw + t * W);
        // A pinned particle keeps its bits whatever its neighbours' corrections are (even NaN).
        const auto moves = w > zero;
        const V new_x = simd::select(moves, x + w * (lambda * nx - lambda_below * bx), x),
                new_y = simd::select(moves, y + w * (lambda * ny - lambda_below * by), y),
                new_z = simd::select(moves, z + w * (lambda * nz - lambda_below * bz), z);
        if (t < tiled) // node t's old position is read no more: its new one waits there for the tiles
            simd::store_at(sx + t * W, new_x), simd::store_at(sy + t * W, new_y), simd::store_at(sz + t * W, new_z);
        else
            access.write(t, new_x, new_y, new_z);
        lambda_below = lambda, bx = nx, by = ny, bz = nz;
    }
    access.store_rows(sx, s.x, tiled), access.store_rows(sy, s.y, tiled), access.store_rows(sz, s.z, tiled);
    return past;
}

} // namespace simdverlet::detail
