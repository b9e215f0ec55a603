// Grid curvature: each interior particle of a grid cloth pulled toward the mean of its four
// neighbours, vector and scalar twins over one formula.
#pragma once

#include <cstddef>

#include "simdverlet/cloth/detail/grid_slots.hpp"
#include "simdverlet/kernels/core.hpp"

namespace simdverlet::kernels
{

// ---------------------------------------------------------------------------------------------
// grid curvature

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
    const GridLinks<bool> links{live(kClothDown), live(kClothUp), live(kClothRight), live(kClothLeft)};
    for (auto [a, x] : {std::pair{s.ax, s.x}, std::pair{s.ay, s.y}, std::pair{s.az, s.z}})
        a[i] = pulled_toward_mean(a[i], x[i], x[i + width], x[i - width], x[i + 1], x[i - 1], links, strength);
}

/// For a width x height grid stored row by row from `base` and wired as a cloth (kClothDown ...),
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
            const GridLinks<M> links{live(kClothDown), live(kClothUp), live(kClothRight), live(kClothLeft)};
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

} // namespace simdverlet::kernels
