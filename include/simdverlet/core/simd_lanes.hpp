// How a lane group reads and writes particles: tiles of a grid, gathers of neighbours, the
// packed layout a float gather reads four coordinates from at once, runs and masked scatters,
// transposes and interleaved stores. The kernels move particles between memory and registers
// only through these; the arithmetic on the registers is simd.hpp's.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "simdverlet/core/simd.hpp"

namespace simdverlet::simd
{

/// Columns of a tile: a batch read as rows of four consecutive values (fewer where the batch is
/// narrower), one row a stride below the other. A cloth's particles batched this way (four rows
/// of four on AVX-512) span a square of the sheet instead of a strip, which is what a shape that
/// tests a batch against one thing at a time wants (the mesh collider: docs/performance.md,
/// "Triangle-mesh colliders").
template <class T, class Arch>
inline constexpr std::size_t kTileColumns = std::min<std::size_t>(4, Batch<T, Arch>::size);

/// Rows of a tile: 1 where the batch is no wider than a row (SSE2, or double on AVX2), and there a
/// tile is a run, and tiling gains nothing.
template <class T, class Arch>
inline constexpr std::size_t kTileRows = Batch<T, Arch>::size / kTileColumns<T, Arch>;

/// Loads a tile: lane r * kTileColumns + c holds p[r * stride + c] for c < columns, and 0 for the
/// columns past them (never read, so a tile at a grid's right edge reads nothing beyond it).
/// Full rows go into the register with 128- or 256-bit loads, not through memory: a vector load
/// of lanes just written one by one stalls on the store buffer.
template <class T, class Arch>
Batch<T, Arch> load_tile(const T* p, std::size_t stride, std::size_t columns = kTileColumns<T, Arch>)
{
    using B = Batch<T, Arch>;
    if (columns == kTileColumns<T, Arch>)
    {
#if defined(__AVX512F__)
        if constexpr (std::is_same_v<T, float> && B::size == 16)
        {
            __m512 v = _mm512_castps128_ps512(_mm_loadu_ps(p));
            v = _mm512_insertf32x4(v, _mm_loadu_ps(p + stride), 1);
            v = _mm512_insertf32x4(v, _mm_loadu_ps(p + 2 * stride), 2);
            return B(_mm512_insertf32x4(v, _mm_loadu_ps(p + 3 * stride), 3));
        }
        if constexpr (std::is_same_v<T, double> && B::size == 8)
            return B(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd(p)), _mm256_loadu_pd(p + stride), 1));
#endif
#if defined(__AVX__)
        if constexpr (std::is_same_v<T, float> && B::size == 8)
            return B(_mm256_set_m128(_mm_loadu_ps(p + stride), _mm_loadu_ps(p)));
#endif
    }
    alignas(kAlignment) T lanes[B::size] = {};
    for (std::size_t r = 0; r < kTileRows<T, Arch>; ++r)
        for (std::size_t c = 0; c < columns && c < kTileColumns<T, Arch>; ++c)
            lanes[r * kTileColumns<T, Arch> + c] = p[r * stride + c];
    return load<T, Arch>(lanes);
}

/// Stores the first `columns` columns of a tile load_tile read; the others are left as they were.
template <class T, class Arch>
void store_tile(T* p, std::size_t stride, const Batch<T, Arch>& b, std::size_t columns = kTileColumns<T, Arch>)
{
    using B = Batch<T, Arch>;
    if (columns == kTileColumns<T, Arch>)
    {
#if defined(__AVX512F__)
        if constexpr (std::is_same_v<T, float> && B::size == 16)
        {
            const __m512 v = b;
            _mm_storeu_ps(p, _mm512_castps512_ps128(v));
            _mm_storeu_ps(p + stride, _mm512_extractf32x4_ps(v, 1));
            _mm_storeu_ps(p + 2 * stride, _mm512_extractf32x4_ps(v, 2));
            _mm_storeu_ps(p + 3 * stride, _mm512_extractf32x4_ps(v, 3));
            return;
        }
        if constexpr (std::is_same_v<T, double> && B::size == 8)
        {
            const __m512d v = b;
            _mm256_storeu_pd(p, _mm512_castpd512_pd256(v));
            _mm256_storeu_pd(p + stride, _mm512_extractf64x4_pd(v, 1));
            return;
        }
#endif
#if defined(__AVX__)
        if constexpr (std::is_same_v<T, float> && B::size == 8)
        {
            const __m256 v = b;
            _mm_storeu_ps(p, _mm256_castps256_ps128(v));
            _mm_storeu_ps(p + stride, _mm256_extractf128_ps(v, 1));
            return;
        }
#endif
    }
    // Through memory: a 16-byte load from a 64-byte store forwards, so this does not stall.
    alignas(kAlignment) T lanes[B::size];
    b.store_aligned(lanes);
    for (std::size_t r = 0; r < kTileRows<T, Arch>; ++r)
        std::memcpy(p + r * stride, lanes + r * kTileColumns<T, Arch>,
                    std::min(columns, kTileColumns<T, Arch>) * sizeof(T));
}

/// Loads Batch<T>::size neighbour indices (int32 in memory) widened to the gather index type.
/// Unaligned on purpose: for double, eight int32 indices are only 32-byte aligned, and newer
/// xsimd asserts on an aligned load that is not aligned to the full register.
template <class T, class Arch>
IndexBatch<T, Arch> load_indices(const std::int32_t* p)
{
    return IndexBatch<T, Arch>::load_unaligned(p);
}

/// Gathers src[index[k]] into lane k. On AVX2 and AVX-512 this issues the hardware gather
/// directly: xsimd 8 dispatches batch::gather with explicit template arguments that never match
/// its own AVX2/AVX-512 overloads, so it silently falls back to a lane-by-lane copy five times
/// slower than the instruction.
template <class T, class Arch>
Batch<T, Arch> gather(const T* src, const IndexBatch<T, Arch>& index)
{
#if XSIMD_WITH_AVX512F
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>)
    {
        if constexpr (std::is_same_v<T, float>)
            return _mm512_i32gather_ps(index, src, sizeof(float));
        else
            return _mm512_i64gather_pd(index, src, sizeof(double));
    }
    else
#endif
#if XSIMD_WITH_AVX2
        if constexpr (std::is_base_of_v<xsimd::avx2, Arch>)
    {
        if constexpr (std::is_same_v<T, float>)
            return _mm256_i32gather_ps(src, index, sizeof(float));
        else
            return _mm256_i64gather_pd(src, index, sizeof(double));
    }
    else
#endif
        return Batch<T, Arch>::gather(src, index);
}

/// Whether a solve reads neighbours through gather_packed on Arch: float on x86 (SSE2, AVX and
/// AVX-512 have a shuffle form). Elsewhere, and for double, it gathers from the coordinate arrays.
template <class T, class Arch>
inline constexpr bool kPackedGather = (XSIMD_WITH_SSE2 != 0) && std::is_same_v<T, float> && (Batch<T, Arch>::size >= 4);

namespace packed_detail
{
#if XSIMD_WITH_SSE2
// Within each 128-bit chunk of a register: pairs_lo(a, b) = a0 b0 a1 b1, pairs_hi(a, b) = a2 b2 a3 b3
// (floats); halves_lo(a, b) = a0 a1 b0 b1, halves_hi(a, b) = a2 a3 b2 b3 (pairs of floats). One
// overload per register width, so the transposes below are written once for all three.
inline __m128 pairs_lo(__m128 a, __m128 b)
{
    return _mm_unpacklo_ps(a, b);
}
inline __m128 pairs_hi(__m128 a, __m128 b)
{
    return _mm_unpackhi_ps(a, b);
}
inline __m128 halves_lo(__m128 a, __m128 b)
{
    return _mm_castpd_ps(_mm_unpacklo_pd(_mm_castps_pd(a), _mm_castps_pd(b)));
}
inline __m128 halves_hi(__m128 a, __m128 b)
{
    return _mm_castpd_ps(_mm_unpackhi_pd(_mm_castps_pd(a), _mm_castps_pd(b)));
}
#endif
#if defined(__AVX__)
inline __m256 pairs_lo(__m256 a, __m256 b)
{
    return _mm256_unpacklo_ps(a, b);
}
inline __m256 pairs_hi(__m256 a, __m256 b)
{
    return _mm256_unpackhi_ps(a, b);
}
inline __m256 halves_lo(__m256 a, __m256 b)
{
    return _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(a), _mm256_castps_pd(b)));
}
inline __m256 halves_hi(__m256 a, __m256 b)
{
    return _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(a), _mm256_castps_pd(b)));
}
#endif
#if defined(__AVX512F__)
inline __m512 pairs_lo(__m512 a, __m512 b)
{
    return _mm512_unpacklo_ps(a, b);
}
inline __m512 pairs_hi(__m512 a, __m512 b)
{
    return _mm512_unpackhi_ps(a, b);
}
inline __m512 halves_lo(__m512 a, __m512 b)
{
    return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
inline __m512 halves_hi(__m512 a, __m512 b)
{
    return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
#endif

/// r[b] holds particle 4 c + b as x y z w in chunk c: x, y and z of particles 4 c .. 4 c + 3 in
/// chunk c, that is, in particle order.
template <class R>
SIMDVERLET_INLINE void quads_to_coordinates(const R (&r)[4], R& x, R& y, R& z)
{
    const R xy01 = pairs_lo(r[0], r[1]), zw01 = pairs_hi(r[0], r[1]);
    const R xy23 = pairs_lo(r[2], r[3]), zw23 = pairs_hi(r[2], r[3]);
    x = halves_lo(xy01, xy23), y = halves_hi(xy01, xy23), z = halves_lo(zw01, zw23);
}

/// The reverse, with w = 0: particle 4 c + b as x y z 0 into chunk c of q[b].
template <class R>
SIMDVERLET_INLINE void coordinates_to_quads(const R& x, const R& y, const R& z, const R& zero, R (&q)[4])
{
    const R xy_lo = pairs_lo(x, y), xy_hi = pairs_hi(x, y), z0_lo = pairs_lo(z, zero), z0_hi = pairs_hi(z, zero);
    q[0] = halves_lo(xy_lo, z0_lo), q[1] = halves_hi(xy_lo, z0_lo);
    q[2] = halves_lo(xy_hi, z0_hi), q[3] = halves_hi(xy_hi, z0_hi);
}
} // namespace packed_detail

/// Reads x, y and z of the particles at[0 .. L) from `packed`, which holds particle i's coordinates
/// at packed[4 i .. 4 i + 3) and is 16-byte aligned: one 16-byte load a lane, where three gathers
/// read three scattered floats. Every index names a particle (simd::safe_indices). Register r[b]
/// takes particle at[4 c + b] into its 128-bit chunk c, and a transpose within each chunk leaves
/// lane 4 c + b of x holding that particle's x.
template <class T, class Arch>
SIMDVERLET_INLINE void gather_packed(const T* packed, const std::int32_t* at, Batch<T, Arch>& x, Batch<T, Arch>& y,
                                     Batch<T, Arch>& z)
{
    static_assert(kPackedGather<T, Arch>);
    constexpr std::size_t L = Batch<T, Arch>::size;
#if XSIMD_WITH_SSE2
    using packed_detail::quads_to_coordinates;
    const auto quad = [&](std::size_t k) { return _mm_load_ps(packed + 4 * std::size_t(at[k])); };
#    if defined(__AVX512F__)
    if constexpr (L == 16)
    {
        __m512 r[4], rx, ry, rz;
        for (std::size_t b = 0; b < 4; ++b)
        {
            r[b] = _mm512_castps128_ps512(quad(b));
            r[b] = _mm512_insertf32x4(r[b], quad(4 + b), 1);
            r[b] = _mm512_insertf32x4(r[b], quad(8 + b), 2);
            r[b] = _mm512_insertf32x4(r[b], quad(12 + b), 3);
        }
        quads_to_coordinates(r, rx, ry, rz);
        x = rx, y = ry, z = rz;
        return;
    }
#    endif
#    if defined(__AVX__)
    if constexpr (L == 8)
    {
        __m256 r[4], rx, ry, rz;
        for (std::size_t b = 0; b < 4; ++b)
            r[b] = _mm256_insertf128_ps(_mm256_castps128_ps256(quad(b)), quad(4 + b), 1);
        quads_to_coordinates(r, rx, ry, rz);
        x = rx, y = ry, z = rz;
        return;
    }
#    endif
    if constexpr (L == 4)
    {
        const __m128 r[4] = {quad(0), quad(1), quad(2), quad(3)};
        __m128 rx, ry, rz;
        quads_to_coordinates(r, rx, ry, rz);
        x = rx, y = ry, z = rz;
        return;
    }
#endif
    // Any other width: lane by lane, the same values.
    alignas(kAlignment) T lanes[3][L];
    for (std::size_t k = 0; k < L; ++k)
        for (std::size_t axis = 0; axis < 3; ++axis)
            lanes[axis][k] = packed[4 * std::size_t(at[k]) + axis];
    x = Batch<T, Arch>::load_aligned(lanes[0]), y = Batch<T, Arch>::load_aligned(lanes[1]),
    z = Batch<T, Arch>::load_aligned(lanes[2]);
}

/// Writes L consecutive particles' x, y, z and a zero pad to packed[0 .. 4 L) (aligned to the
/// register), the layout gather_packed reads: the transpose within each 128-bit chunk leaves particle
/// 4 c + b in chunk c of q[b], and on AVX and AVX-512 chunk shuffles put the chunks in particle order.
template <class T, class Arch>
SIMDVERLET_INLINE void store_packed(T* packed, const Batch<T, Arch>& x, const Batch<T, Arch>& y,
                                    const Batch<T, Arch>& z)
{
    static_assert(kPackedGather<T, Arch>);
    constexpr std::size_t L = Batch<T, Arch>::size;
    static_assert(L == 4 || L == 8 || L == 16, "store_packed: a register of 4, 8 or 16 floats");
#if defined(__AVX512F__)
    if constexpr (L == 16)
    {
        __m512 q[4];
        packed_detail::coordinates_to_quads<__m512>(x, y, z, _mm512_setzero_ps(), q);
        const __m512 q01_lo = _mm512_shuffle_f32x4(q[0], q[1], 0x44), q23_lo = _mm512_shuffle_f32x4(q[2], q[3], 0x44);
        const __m512 q01_hi = _mm512_shuffle_f32x4(q[0], q[1], 0xEE), q23_hi = _mm512_shuffle_f32x4(q[2], q[3], 0xEE);
        _mm512_store_ps(packed, _mm512_shuffle_f32x4(q01_lo, q23_lo, 0x88));
        _mm512_store_ps(packed + 16, _mm512_shuffle_f32x4(q01_lo, q23_lo, 0xDD));
        _mm512_store_ps(packed + 32, _mm512_shuffle_f32x4(q01_hi, q23_hi, 0x88));
        _mm512_store_ps(packed + 48, _mm512_shuffle_f32x4(q01_hi, q23_hi, 0xDD));
        return;
    }
#endif
#if defined(__AVX__)
    if constexpr (L == 8)
    {
        // Particle 4 c + b is in chunk c of q[b]: pairs of low chunks, then of high ones.
        __m256 q[4];
        packed_detail::coordinates_to_quads<__m256>(x, y, z, _mm256_setzero_ps(), q);
        _mm256_store_ps(packed, _mm256_permute2f128_ps(q[0], q[1], 0x20));
        _mm256_store_ps(packed + 8, _mm256_permute2f128_ps(q[2], q[3], 0x20));
        _mm256_store_ps(packed + 16, _mm256_permute2f128_ps(q[0], q[1], 0x31));
        _mm256_store_ps(packed + 24, _mm256_permute2f128_ps(q[2], q[3], 0x31));
        return;
    }
#endif
#if XSIMD_WITH_SSE2
    if constexpr (L == 4)
    {
        __m128 q[4];
        packed_detail::coordinates_to_quads<__m128>(x, y, z, _mm_setzero_ps(), q);
        for (std::size_t b = 0; b < 4; ++b)
            _mm_store_ps(packed + 4 * b, q[b]);
        return;
    }
#endif
}

/// Where a lane group reads another particle's values: for V = T the index, for a batch the
/// indices, and whether they run on from the first, one per lane (a grid's neighbours, a pinned
/// row's anchors), so that one contiguous load replaces a gather.
template <class V>
struct LaneIndex
{
    std::int32_t index;
};

template <class T, class Arch>
struct LaneIndex<xsimd::batch<T, Arch>>
{
    IndexBatch<T, Arch> safe; ///< -1 replaced by 0
    std::int64_t first;       ///< the first lane's index
    bool run;                 ///< every lane's index is first + lane, or -1
};

/// The indices first, first + 1, ..., one a lane: a run of particles, for comparing a lane group's
/// neighbour indices against. The lane offsets come from constant memory: stored lane by lane and
/// loaded whole, they would stall the load.
template <class T, class Arch>
IndexBatch<T, Arch> run_from(std::int64_t first)
{
    using I = IndexBatch<T, Arch>;
    using E = typename I::value_type;
    alignas(kAlignment) static constexpr E iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    static_assert(I::size <= 16);
    return I::load_aligned(iota) + I(E(first));
}

/// The lanes' indices index[0 .. lanes) into arrays of `length` values (-1: no particle, the lane
/// reads something and must be masked). Runs are used only when `runs` is true and the run fits.
template <class V>
LaneIndex<V> lane_index(const std::int32_t* index, std::size_t length, bool runs)
{
    if constexpr (std::is_floating_point_v<V>)
    {
        (void)length;
        (void)runs;
        return {*index};
    }
    else
    {
        using T = Scalar<V>;
        using Arch = typename V::arch_type;
        using I = IndexBatch<T, Arch>;
        using E = typename I::value_type;
        const I idx = load_indices<T, Arch>(index);
        const std::int64_t first = index[0];
        bool run = runs && first >= 0 && std::size_t(first) + V::size <= length;
        if (run)
            run = xsimd::all((idx == run_from<T, Arch>(first)) || (idx == I(E(-1))));
        return {safe_indices<T, Arch>(idx), first, run};
    }
}

/// src at the lanes' indices: one value, a contiguous load for a run, else a gather. The same
/// values either way.
template <class V>
V read_lanes(const Scalar<V>* src, const LaneIndex<V>& at)
{
    if constexpr (std::is_floating_point_v<V>)
        return src[at.index < 0 ? 0 : at.index];
    else
    {
        using T = Scalar<V>;
        using Arch = typename V::arch_type;
        return at.run ? V::load_unaligned(src + at.first) : gather<T, Arch>(src, at.safe);
    }
}

/// Stores each lane of `value` whose `present` bit is set (present_lanes of the indices) at its
/// index, `at` being lane_index of the same indices: a contiguous store for a run in which every
/// lane is present, else a masked scatter (AVX-512) or lane by lane. The lanes must name distinct
/// elements.
template <class V, class P>
void write_lanes(Scalar<V>* dst, const LaneIndex<V>& at, const P& present, const V& value)
{
    if constexpr (std::is_floating_point_v<V>)
    {
        if (present)
            dst[at.index] = value;
    }
    else
    {
        using T = Scalar<V>;
        using Arch = typename V::arch_type;
        if (at.run && xsimd::all(present))
        {
            value.store_unaligned(dst + at.first);
            return;
        }
#if XSIMD_WITH_AVX512F
        if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>)
        {
            if constexpr (std::is_same_v<T, float>)
                _mm512_mask_i32scatter_ps(dst, __mmask16(present.data), at.safe, value, sizeof(float));
            else
                _mm512_mask_i64scatter_pd(dst, __mmask8(present.data), at.safe, value, sizeof(double));
            return;
        }
#endif
        alignas(kAlignment) T lanes[V::size];
        alignas(kAlignment) typename IndexBatch<T, Arch>::value_type index[V::size];
        value.store_aligned(lanes);
        at.safe.store_aligned(index);
        const std::uint64_t bits = lane_bits<T, Arch>(present);
        for (std::size_t k = 0; k < V::size; ++k)
            if ((bits >> k) & 1)
                dst[index[k]] = lanes[k];
    }
}

/// Transposes a square of batches: afterwards lane l of rows[k] holds what lane k of rows[l] held.
/// On AVX-512 (float) four rounds of in-register shuffles; elsewhere through memory. The values are
/// moved, never computed.
template <class T, class Arch>
SIMDVERLET_INLINE void transpose(std::array<Batch<T, Arch>, Batch<T, Arch>::size>& rows)
{
    constexpr std::size_t L = Batch<T, Arch>::size;
#if XSIMD_WITH_AVX512F
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch> && std::is_same_v<T, float>)
    {
        // Pairs of rows interleave their floats, then their float pairs, then their 128-bit
        // quarters, twice: each round doubles the width of the blocks that are in place.
        __m512 a[16], b[16];
        for (std::size_t i = 0; i < 16; i += 2)
        {
            a[i] = _mm512_unpacklo_ps(rows[i], rows[i + 1]);
            a[i + 1] = _mm512_unpackhi_ps(rows[i], rows[i + 1]);
        }
        for (std::size_t i = 0; i < 16; i += 4)
            for (std::size_t j = 0; j < 2; ++j)
            {
                const __m512d p = _mm512_castps_pd(a[i + j]), q = _mm512_castps_pd(a[i + j + 2]);
                b[i + 2 * j] = _mm512_castpd_ps(_mm512_unpacklo_pd(p, q));
                b[i + 2 * j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(p, q));
            }
        for (std::size_t i = 0; i < 16; i += 8)
            for (std::size_t j = 0; j < 4; ++j)
            {
                a[i + j] = _mm512_shuffle_f32x4(b[i + j], b[i + j + 4], 0x88);
                a[i + j + 4] = _mm512_shuffle_f32x4(b[i + j], b[i + j + 4], 0xdd);
            }
        for (std::size_t j = 0; j < 8; ++j)
        {
            rows[j] = _mm512_shuffle_f32x4(a[j], a[j + 8], 0x88);
            rows[j + 8] = _mm512_shuffle_f32x4(a[j], a[j + 8], 0xdd);
        }
        return;
    }
#endif
    alignas(kAlignment) T lanes[L][L];
    for (std::size_t r = 0; r < L; ++r)
        rows[r].store_aligned(lanes[r]);
    alignas(kAlignment) T column[L];
    for (std::size_t c = 0; c < L; ++c)
    {
        for (std::size_t r = 0; r < L; ++r)
            column[r] = lanes[r][c];
        rows[c] = Batch<T, Arch>::load_aligned(column);
    }
}

/// Whether index[k] >= 0, as a mask over V's lanes (a bool for V = T).
template <class V>
auto present_lanes(const std::int32_t* index)
{
    if constexpr (std::is_floating_point_v<V>)
        return *index >= 0;
    else
    {
        using T = Scalar<V>;
        using Arch = typename V::arch_type;
        using I = IndexBatch<T, Arch>;
        return index_mask<T, Arch>(load_indices<T, Arch>(index) >= I(0));
    }
}

/// Whether index[k] == first + k, as a mask over V's lanes (a bool for V = T): whether a lane
/// group's slots still point at the run of particles a grid wired them to.
template <class V>
auto lanes_point_at(const std::int32_t* index, std::int64_t first)
{
    if constexpr (std::is_floating_point_v<V>)
        return std::int64_t(*index) == first;
    else
    {
        using T = Scalar<V>;
        using Arch = typename V::arch_type;
        return index_mask<T, Arch>(load_indices<T, Arch>(index) == run_from<T, Arch>(first));
    }
}

/// Stores three batches interleaved at out (unaligned): x0 y0 z0 x1 y1 z1 ..., a batch of
/// particles' coordinates into an array of 3-vectors. On AVX-512 two two-source permutes make each
/// of the three output registers; elsewhere the lanes go through the stack and the compiler
/// shuffles them. Either way the values are copied, not computed: the bits are the same.
template <class T, class Arch>
SIMDVERLET_INLINE void store_interleaved3(T* out, const Batch<T, Arch>& x, const Batch<T, Arch>& y,
                                          const Batch<T, Arch>& z)
{
    constexpr std::size_t L = Batch<T, Arch>::size;
#if XSIMD_WITH_AVX512F
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>)
    {
        // Output register k holds elements 16k .. 16k + 15 (8k .. for double) of the interleaved
        // run: element g is coordinate g % 3 of particle g / 3. The first permute picks x or y,
        // the second puts z in the slots the first left.
        using Index = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
        constexpr auto indices = [] {
            std::array<std::array<Index, L>, 6> idx{};
            for (std::size_t k = 0; k < 3; ++k)
                for (std::size_t e = 0; e < L; ++e)
                {
                    const std::size_t g = k * L + e, p = g / 3, c = g % 3;
                    idx[k][e] = Index(c == 0 ? p : c == 1 ? L + p : 0);
                    idx[3 + k][e] = Index(c == 2 ? L + p : e);
                }
            return idx;
        }();
        for (std::size_t k = 0; k < 3; ++k)
        {
            const __m512i first = _mm512_loadu_si512(indices[k].data());
            const __m512i second = _mm512_loadu_si512(indices[3 + k].data());
            if constexpr (sizeof(T) == 4)
                _mm512_storeu_ps(out + k * L, _mm512_permutex2var_ps(_mm512_permutex2var_ps(x, first, y), second, z));
            else
                _mm512_storeu_pd(out + k * L, _mm512_permutex2var_pd(_mm512_permutex2var_pd(x, first, y), second, z));
        }
        return;
    }
#endif
    alignas(kAlignment) T lanes[3][L];
    x.store_aligned(lanes[0]);
    y.store_aligned(lanes[1]);
    z.store_aligned(lanes[2]);
    for (std::size_t l = 0; l < L; ++l)
        for (std::size_t k = 0; k < 3; ++k)
            out[3 * l + k] = lanes[k][l];
}

/// The scalar twin: one particle's (x, y, z).
template <std::floating_point T>
SIMDVERLET_INLINE void store_interleaved3(T* out, T x, T y, T z)
{
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

} // namespace simdverlet::simd
