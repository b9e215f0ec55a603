// The tearing scan: every live slot's strain against the tearing bounds, reporting the springs
// over them in particle order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "simdverlet/kernels/core.hpp"

namespace simdverlet::kernels
{

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

} // namespace simdverlet::kernels
