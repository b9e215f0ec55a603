// A cloth's material in physical units: what a fabric's data sheet gives (weight per area, tensile
// stiffness), in SI. A cloth made with a material is held by the implicit cloth solve
// (cloth_solve.hpp) instead of the explicit springs, so it stays stable at any scale and stiffness.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/log.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// A fabric, in metres, kilograms and seconds.
template <class T>
struct ClothMaterial
{
    T density = T(0.2);  ///< kg/m^2, > 0: weight per area. 0.2 is a shirt cotton (0.1 silk, 0.4 denim)
    T stretch = T(1e4);  ///< N/m, > 0: tensile stiffness, force per unit width per unit of strain of a strip
                         ///< free to narrow (Young's modulus x thickness). A woven extends a few percent
                         ///< under the 490 N/m of the Kawabata tensile test, so about 10^4 N/m; a knit
                         ///< ten times less
    T bending = T(1e-5); ///< N·m, >= 0: flexural rigidity, the moment per unit width that curves the cloth
                         ///< to a radius of 1 m (cloth_bending.hpp). With the density it sets the bending
                         ///< length c = (bending / (density g))^(1/3) of Peirce's cantilever: 10^-5, the
                         ///< default, is a shirt cotton (c = 1.7 cm at 0.2 kg/m^2); 0 adds no bending
    T damping = T(0);    ///< 1/s, >= 0: the rate at which the cloth's motion decays on its own,
                         ///< v' = -damping v, whatever dt and substeps; 0 leaves it to the step's damping

    // Fabrics by name, from published measurements where there are any (docs/decisions.md,
    // "Fabric presets", names each value's source). Bending rises silk < cotton < denim < leather.

    /// A light silk (crepe de chine): 60 g/m^2, bending length about 1.5 cm.
    static ClothMaterial silk() { return {.density = T(0.06), .stretch = T(5e3), .bending = T(2e-6)}; }
    /// A cotton shirting: 150 g/m^2, bending length about 1.9 cm.
    static ClothMaterial cotton() { return {.density = T(0.15), .stretch = T(1e4), .bending = T(1e-5)}; }
    /// An 11 oz denim: 324 g/m^2, bending length about 3.0 cm.
    static ClothMaterial denim() { return {.density = T(0.324), .stretch = T(1.5e4), .bending = T(8e-5)}; }
    /// A T-shirt knit: 187 g/m^2, ten times softer in stretch than a woven, bending length about 2.2 cm.
    static ClothMaterial jersey() { return {.density = T(0.187), .stretch = T(1e3), .bending = T(1.9e-5)}; }
    /// A garment leather about 1 mm thick: 500 g/m^2, bending length about 4.7 cm.
    static ClothMaterial leather() { return {.density = T(0.5), .stretch = T(5e4), .bending = T(5e-4)}; }
};

namespace detail
{
template <class T>
void check_material(const ClothMaterial<T>& m, const std::string& what)
{
    const auto check = [&](T value, const char* field, bool positive) {
        if (!std::isfinite(value) || value < T(0) || (positive && !(value > T(0))))
            raise<std::invalid_argument>("simdverlet: " + what + " material ." + field + " must be finite and " +
                                         (positive ? "> 0" : ">= 0") + ", got " + number(value));
    };
    check(m.density, "density", true);
    check(m.stretch, "stretch", true);
    check(m.bending, "bending", false);
    check(m.damping, "damping", false);
}
} // namespace detail

} // namespace simdverlet
