// Rulers for a simulation: the worst strain any spring holds, read from the solver's own rest
// lengths, and the furthest a particle of one run is from its twin in another. Cheap, and the
// strain goes wrong long before a picture does: watch it rather than the drawing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// Worst |length - rest| / rest over every live slot owned by a particle in `range` (rest > 0),
/// in double. NaN as soon as a measured spring has a NaN end, so a blown-up sheet never reads as
/// relaxed. 1 means a spring at twice its rest length.
template <class T>
double peak_strain(const Simulation<T>& sim, const ParticleRange& range = {})
{
    const auto& s = sim.state();
    const auto& k = sim.constraint_layers();
    const auto [begin, end] = range.resolve(sim.size());
    double worst = 0;
    bool nan = false;
    for (std::size_t i = begin; i < end && !nan; ++i)
        k.for_each_wired(i, [&](SlotRef, std::int32_t neighbour, T rest_length, T stiffness) {
            if (stiffness == T(0) || !(rest_length > T(0)))
                return;
            const auto j = std::size_t(neighbour);
            const double dx = double(s.x()[i]) - double(s.x()[j]);
            const double dy = double(s.y()[i]) - double(s.y()[j]);
            const double dz = double(s.z()[i]) - double(s.z()[j]);
            const double rest = double(rest_length);
            const double strain = std::abs(std::sqrt(dx * dx + dy * dy + dz * dz) - rest) / rest;
            nan = nan || std::isnan(strain);
            worst = std::max(worst, strain);
        });
    return nan ? std::numeric_limits<double>::quiet_NaN() : worst;
}

/// How near the explicit step is to overshooting, at its stiffest particle in `range`: omega dt / 2
/// with omega^2 = 2 x iterations x (the stiffness of the particle's live slots, every layer) x its
/// inverse mass, and dt the substep's. Verlet integrates an oscillator of frequency omega only while
/// omega dt < 2, and a particle whose neighbours swing against it (the fastest mode of a sheet) feels
/// twice its own springs, hence the 2. Below 1 the step holds; above it the sheet blows up within a
/// few hundred frames. The largest stable stiffness of a cloth is its stiffness / ratio^2 (or split
/// the step: n substeps divide the ratio by n). Pinned particles do not count.
template <class T>
double stability_ratio(const Simulation<T>& sim, const StepParams<T>& params, const ParticleRange& range = {})
{
    const auto& s = sim.state();
    const auto& k = sim.constraint_layers();
    const auto [begin, end] = range.resolve(sim.size());
    const double dt = double(params.dt) / double(std::max(params.substeps, 1));
    double worst = 0;
    for (std::size_t i = begin; i < end; ++i)
    {
        const double w = double(s.inverse_mass(i));
        if (!(w > 0))
            continue;
        double stiffness = 0;
        k.for_each_wired(i, [&](SlotRef, std::int32_t, T, T spring) { stiffness += double(spring); });
        worst = std::max(worst, std::sqrt(2.0 * double(params.iterations) * stiffness * w) * dt / 2.0);
    }
    return worst;
}

/// The largest distance between particle i of `a` and particle i of `b`, over `range`, in double:
/// how far two runs of the same scene have drifted apart.
template <class T>
double furthest_apart(const Simulation<T>& a, const Simulation<T>& b, const ParticleRange& range = {})
{
    if (a.size() != b.size())
        detail::raise<std::invalid_argument>("simdverlet: furthest_apart compares simulations of " +
                                             std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                             " particles");
    const auto [begin, end] = range.resolve(a.size());
    double worst = 0;
    for (std::size_t i = begin; i < end; ++i)
    {
        const double dx = double(a.state().x()[i]) - double(b.state().x()[i]);
        const double dy = double(a.state().y()[i]) - double(b.state().y()[i]);
        const double dz = double(a.state().z()[i]) - double(b.state().z()[i]);
        worst = std::max(worst, std::sqrt(dx * dx + dy * dy + dz * dz));
    }
    return worst;
}

} // namespace simdverlet
