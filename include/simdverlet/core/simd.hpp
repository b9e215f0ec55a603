// The thin layer between simdverlet and xsimd: batch types, masks, and the scalar-or-batch names
// that let one template serve as the vector and the scalar twin. The differences between xsimd 8.1
// (Debian 12) and xsimd 9..14 are handled here and in simd_lanes.hpp (how lanes meet memory), and
// nowhere else: the horizontal sum, the index type a gather needs, the alignment of the allocator.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include <xsimd/xsimd.hpp>

// Forces inlining of the small SIMD helpers a hot loop calls per lane group: GCC otherwise keeps
// some out of line, and a call passes its batches through memory and ends in a vzeroupper.
// SIMDVERLET_LAMBDA_INLINE does the same for a lambda, written after its parameter list.
#if defined(__GNUC__) || defined(__clang__)
#    define SIMDVERLET_INLINE [[gnu::always_inline]] inline
#    define SIMDVERLET_LAMBDA_INLINE __attribute__((always_inline))
#elif defined(_MSC_VER)
#    define SIMDVERLET_INLINE __forceinline
#    define SIMDVERLET_LAMBDA_INLINE
#else
#    define SIMDVERLET_INLINE inline
#    define SIMDVERLET_LAMBDA_INLINE
#endif

namespace simdverlet::simd
{

/// Every array is aligned for, and padded to, the widest register xsimd knows (AVX-512, 64 bytes).
/// Written out because the default alignment of xsimd::aligned_allocator changed in xsimd 13.2.
inline constexpr std::size_t kAlignment = 64;

/// A standard allocator with kAlignment-byte alignment. Our own rather than xsimd's, whose
/// allocate() contains a throw expression and so cannot compile under -fno-exceptions; C++17's
/// aligned operator new reports failure the way the project's build mode does.
template <class T>
struct AlignedAllocator
{
    using value_type = T;

    AlignedAllocator() noexcept = default;
    template <class U>
    AlignedAllocator(const AlignedAllocator<U>&) noexcept
    {
    }

    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kAlignment))); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(kAlignment)); }

    template <class U>
    bool operator==(const AlignedAllocator<U>&) const noexcept
    {
        return true;
    }
};

template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

template <class T, class Arch = xsimd::default_arch>
using Batch = xsimd::batch<T, Arch>;

template <class T, class Arch = xsimd::default_arch>
using Mask = xsimd::batch_bool<T, Arch>;

/// The integer batch a gather of T needs: as many lanes as Batch<T>, so int32 for float and int64
/// for double. Neighbour indices are stored as int32 either way and widened on load.
template <class T, class Arch = xsimd::default_arch>
using IndexBatch = xsimd::batch<std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>, Arch>;

/// Lanes in one register of T for Arch.
template <class T, class Arch = xsimd::default_arch>
inline constexpr std::size_t kLanes = Batch<T, Arch>::size;

/// Particles per padding unit: a whole number of batches for every supported architecture.
template <class T>
inline constexpr std::size_t kPadLanes = kAlignment / sizeof(T);

/// Rounds n up to a whole number of padding units.
template <class T>
constexpr std::size_t padded_count(std::size_t n) noexcept
{
    return (n + kPadLanes<T> - 1) / kPadLanes<T> * kPadLanes<T>;
}

/// Name of the architecture the kernels are compiled for, for benchmark labels and logs.
template <class Arch = xsimd::default_arch>
constexpr const char* arch_name() noexcept
{
    return Arch::name();
}

template <class T, class Arch>
Batch<T, Arch> load(const T* p)
{
    return Batch<T, Arch>::load_aligned(p);
}

template <class T, class Arch>
Batch<T, Arch> load_unaligned(const T* p)
{
    return Batch<T, Arch>::load_unaligned(p);
}

template <class T, class Arch>
void store(T* p, const Batch<T, Arch>& b)
{
    b.store_aligned(p);
}

/// `index` with the unused-slot marker -1 replaced by 0, so a gather never reads before the
/// arrays; the value read there is discarded by the caller. Written as j & ~(j >> 31) (an
/// arithmetic shift smears the sign bit) because integer max is emulated lane by lane on some
/// architectures of xsimd 8.
template <class T, class Arch>
IndexBatch<T, Arch> safe_indices(const IndexBatch<T, Arch>& index)
{
    constexpr int sign_shift = int(sizeof(typename IndexBatch<T, Arch>::value_type) * 8 - 1);
    return index & ~(index >> sign_shift);
}

/// A comparison of gather indices as a mask over the T lanes (the same count). AVX-512 keeps both
/// in mask registers of the same bits; narrower sets convert (xsimd 8 has no batch_bool_cast).
template <class T, class Arch>
Mask<T, Arch> index_mask(const xsimd::batch_bool<typename IndexBatch<T, Arch>::value_type, Arch>& m)
{
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>)
        return Mask<T, Arch>(m.data);
    else
    {
        using I = IndexBatch<T, Arch>;
        return xsimd::to_float(xsimd::select(m, I(1), I(0))) != Batch<T, Arch>(T(0));
    }
}

/// Mask of the first `n` lanes, for the last, partly filled batch of a range.
template <class T, class Arch>
Mask<T, Arch> first_lanes(std::size_t n)
{
    alignas(kAlignment) T lane[Batch<T, Arch>::size];
    for (std::size_t k = 0; k < Batch<T, Arch>::size; ++k)
        lane[k] = T(k);
    return Batch<T, Arch>::load_aligned(lane) < Batch<T, Arch>(T(n));
}

/// True when any lane of the mask is set.
template <class T, class Arch>
bool any(const Mask<T, Arch>& m)
{
    return xsimd::any(m);
}

/// The mask as an integer, lane k in bit k. AVX-512 keeps masks in mask registers, which are
/// those bits already; narrower sets spell them out through a store (xsimd 8 has no movemask).
template <class T, class Arch>
std::uint64_t lane_bits(const Mask<T, Arch>& m)
{
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>)
        return std::uint64_t(m.data);
    else
    {
        constexpr std::size_t L = Batch<T, Arch>::size;
        alignas(kAlignment) T lanes[L];
        xsimd::select(m, Batch<T, Arch>(T(1)), Batch<T, Arch>(T(0))).store_aligned(lanes);
        std::uint64_t bits = 0;
        for (std::size_t k = 0; k < L; ++k)
            bits |= std::uint64_t(lanes[k] != T(0)) << k;
        return bits;
    }
}

/// Writes first + k for every set bit k of `bits` (k < 16), lowest first, to out; returns how many.
/// AVX-512 compresses the lanes in a register and stores all sixteen, so `out` needs room for
/// sixteen past the last written; elsewhere it walks the bits. Either way no branch depends on
/// which bits are set, where the AVX-512 form avoids one per set bit.
inline std::uint32_t write_set_lanes(std::uint64_t bits, std::uint32_t first, std::uint32_t* out)
{
#if XSIMD_WITH_AVX512F
    const __m512i lanes = _mm512_add_epi32(_mm512_set1_epi32(std::int32_t(first)),
                                           _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    _mm512_storeu_si512(out, _mm512_maskz_compress_epi32(__mmask16(bits), lanes));
    return std::uint32_t(std::popcount(bits));
#else
    std::uint32_t found = 0;
    for (; bits != 0; bits &= bits - 1)
        out[found++] = first + std::uint32_t(std::countr_zero(bits));
    return found;
#endif
}

/// Horizontal sum: `hadd` in xsimd 8, `reduce_add` from 9 on.
template <class T, class Arch>
T reduce_add(const Batch<T, Arch>& b)
{
#if XSIMD_VERSION_MAJOR >= 9
    return xsimd::reduce_add(b);
#else
    return xsimd::hadd(b);
#endif
}

// ---- one spelling for scalars and batches ------------------------------------------------------
// Geometry written once as a template over V (T or Batch<T>) and M (bool or Mask<T>) runs as the
// scalar twin and the vector twin of the same arithmetic. These overloads give the scalar side
// the names xsimd gives the vector side.

/// The lane type of V: T itself for a scalar, T for Batch<T>; for constants in generic code.
template <class V>
struct ScalarOf
{
    using type = V;
};

template <class T, class Arch>
struct ScalarOf<xsimd::batch<T, Arch>>
{
    using type = T;
};

template <class V>
using Scalar = typename ScalarOf<V>::type;

/// Lanes in V: 1 for a scalar, the batch's width for a batch; a generic loop's step.
template <class V>
inline constexpr std::size_t kLanesOf = 1;

template <class T, class Arch>
inline constexpr std::size_t kLanesOf<xsimd::batch<T, Arch>> = xsimd::batch<T, Arch>::size;

template <std::floating_point T>
T select(bool condition, T if_true, T if_false)
{
    return condition ? if_true : if_false;
}

template <class T, class Arch>
Batch<T, Arch> select(const Mask<T, Arch>& condition, const Batch<T, Arch>& if_true, const Batch<T, Arch>& if_false)
{
    return xsimd::select(condition, if_true, if_false);
}

template <std::floating_point T>
T sqrt(T v)
{
    return std::sqrt(v);
}

// GCC 12 reports the _mm512_undefined_ps() pass-through inside its own AVX-512 square-root
// intrinsic as used uninitialized wherever the call is inlined into a large enough function (the
// wind's triangle share): a false positive in the compiler's header, silenced here, not in users'
// builds.
#if defined(__GNUC__) && !defined(__clang__)
#    pragma GCC diagnostic push
#    pragma GCC diagnostic ignored "-Wuninitialized"
#endif
template <class T, class Arch>
Batch<T, Arch> sqrt(const Batch<T, Arch>& v)
{
    return xsimd::sqrt(v);
}
#if defined(__GNUC__) && !defined(__clang__)
#    pragma GCC diagnostic pop
#endif

/// min and max with the operand order of the x86 instructions: the second operand wins a tie or a
/// NaN, in both twins, so they cannot disagree on a corner case.
template <std::floating_point T>
T min(T a, T b)
{
    return a < b ? a : b;
}

template <class T, class Arch>
Batch<T, Arch> min(const Batch<T, Arch>& a, const Batch<T, Arch>& b)
{
    return xsimd::select(a < b, a, b);
}

template <std::floating_point T>
T max(T a, T b)
{
    return a > b ? a : b;
}

template <class T, class Arch>
Batch<T, Arch> max(const Batch<T, Arch>& a, const Batch<T, Arch>& b)
{
    return xsimd::select(a > b, a, b);
}

/// |v|, for the twins: a sign cleared, NaN kept.
template <std::floating_point T>
T abs(T v)
{
    return std::abs(v);
}

template <class T, class Arch>
Batch<T, Arch> abs(const Batch<T, Arch>& v)
{
    return xsimd::abs(v);
}

/// A scalar twin's mask as lane bits: 1 when set.
inline std::uint64_t lane_bits(bool m)
{
    return m ? 1 : 0;
}

inline bool any(bool m)
{
    return m;
}

/// Number of set lanes. xsimd 8 has no popcount of a mask, so count through a select and a sum.
template <class T, class Arch>
int count(const Mask<T, Arch>& m)
{
    // AVX-512's mask register is the lanes' bits: one popcount, where a horizontal add of ones
    // takes five shuffles and adds.
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>)
        return std::popcount(lane_bits<T, Arch>(m));
    else
        return int(simd::reduce_add<T, Arch>(xsimd::select(m, Batch<T, Arch>(T(1)), Batch<T, Arch>(T(0)))));
}

inline int count(bool m)
{
    return m ? 1 : 0;
}

/// Loads a value (V = T) or a batch (V's lanes, unaligned) from p: the twin of store_at.
template <class V>
V load_at(const Scalar<V>* p)
{
    if constexpr (std::is_floating_point_v<V>)
        return *p;
    else
        return V::load_unaligned(p);
}

/// Stores a value (one lane) or a batch (its lanes, unaligned) at p.
template <std::floating_point T>
void store_at(T* p, T v)
{
    *p = v;
}

template <class T, class Arch>
void store_at(T* p, const Batch<T, Arch>& v)
{
    v.store_unaligned(p);
}

/// Asks for the cache line holding p, ahead of a load the hardware cannot foresee (a gather's, or
/// one of more streams than its prefetcher follows). Never faults and changes no value.
SIMDVERLET_INLINE void prefetch(const void* p) noexcept
{
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/// The value itself, or the sum of a batch's lanes.
template <std::floating_point T>
T sum_lanes(T v)
{
    return v;
}

template <class T, class Arch>
T sum_lanes(const Batch<T, Arch>& v)
{
    return simd::reduce_add<T, Arch>(v);
}

/// Lanes of a per-particle array: V = T reads p[0], a batch reads V::size aligned values from p.
/// For stages whose per-particle data sits beside the state in arrays aligned like it.
template <class V>
V load_lanes(const Scalar<V>* p)
{
    if constexpr (std::is_floating_point_v<V>)
        return *p;
    else
        return V::load_aligned(p);
}

} // namespace simdverlet::simd
