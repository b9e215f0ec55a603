// Wind: the aerodynamic share of each cloth triangle, on a grid cloth by rows (vector and
// scalar) and on a mesh cloth by triangles, gathered back to the particles in a fixed order.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "simdverlet/kernels/grid_triangles.hpp"

namespace simdverlet::kernels
{

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

} // namespace simdverlet::kernels
