// The slot roles of a grid cloth's particles: the one place that says which of a particle's four
// layer-0 slots points where. The core never reads them; the grid stages' kernels (curvature,
// wind, render normals) and cloth.hpp do.
#pragma once

namespace simdverlet
{

/// Slot roles of a grid cloth particle. The grid wires them symmetrically: slot kClothDown of
/// (c, r) and slot kClothUp of (c, r + 1) are the two halves of one spring.
enum ClothSlot : int
{
    kClothDown = 0,  ///< (c, r + 1): index + width
    kClothUp = 1,    ///< (c, r - 1): index - width
    kClothRight = 2, ///< (c + 1, r): index + 1
    kClothLeft = 3,  ///< (c - 1, r): index - 1
};

} // namespace simdverlet
