// A cloth's material in physical units: what a fabric's data sheet gives (weight per area, tensile
// stiffness), in SI. A cloth made with a material is held by the implicit cloth solve
// (cloth_solve.hpp) instead of the explicit springs, so it stays stable at any scale and stiffness.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include "error.hpp"
#include "log.hpp"
#include "state.hpp"

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
                         ///< to a radius of 1 m. With the density it sets the bending length
                         ///< c = (bending / (density g))^(1/3) of Peirce's cantilever: 1e-5 over 0.2 kg/m^2
                         ///< is 1.7 cm, a shirt cotton. 0 leaves the cloth free to fold
    T damping = T(0);    ///< 1/s, >= 0: the rate at which the cloth's motion decays on its own,
                         ///< v' = -damping v, whatever dt and substeps; 0 leaves it to the step's damping
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
