// Render normals of a grid cloth: each vertex's normal from the fan of intact triangles around
// it, vector twin over interior columns and scalar twin on the border.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>

#include "simdverlet/kernels/grid_triangles.hpp"

namespace simdverlet::kernels
{

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

} // namespace simdverlet::kernels
