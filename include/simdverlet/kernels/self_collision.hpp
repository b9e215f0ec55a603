// Self-collision's kernels: the neighbour search within a reach, the loop over candidate pairs
// (runs of consecutive particles loaded whole, the rest gathered), the settling of accumulated
// pushes, and the survey of moves that decides whether a candidate list is still current.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "simdverlet/kernels/core.hpp"

namespace simdverlet::kernels
{

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
// move survey

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
