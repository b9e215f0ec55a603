// A grid cloth's triangles as the wind, the render normals and the render triangles see them:
// the cross product over V and the one rule for whether a grid triangle is intact.
#pragma once

#include <array>
#include <cstddef>

#include "simdverlet/cloth/detail/grid_slots.hpp"
#include "simdverlet/kernels/core.hpp"

namespace simdverlet::kernels
{

// ---------------------------------------------------------------------------------------------
// triangles on a grid cloth

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
    return simd::load_at<V>(c.stiffness[kClothRight] + right_of) > zero &&
           simd::load_at<V>(c.stiffness[kClothDown] + down_of) > zero;
}

} // namespace simdverlet::kernels
