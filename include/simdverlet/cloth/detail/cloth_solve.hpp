// The implicit cloth solve: what holds a cloth made with a ClothMaterial. Registered as a
// position projection named after its cloth (cloth_solve@<name>), it takes each step's Verlet
// prediction and moves the cloth to the minimum of implicit Euler's energy,
//   m / (2 h^2) |x - y|^2 + E_stretch(x) + E_bend(x),
// with the planes of the colliders and motion constraints registered on the simulation held as
// constraints inside its iterations (newton_solve.hpp). Every iteration lowers that energy
// within the step, so no stiffness, scale or mass ratio can make it diverge; the colliders still
// project after it and have the last word on penetration. A self-collision stage that lists the
// cloth adds its contacts with itself to the energy and bounds the step so that it cannot pass
// through itself (self_contact_term.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "simdverlet/cloth/detail/newton_solve.hpp"
#include "simdverlet/cloth/detail/plane_constraints.hpp"
#include "simdverlet/cloth/detail/stretch_factor.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/core/world.hpp"

namespace simdverlet::detail
{

template <class T>
struct ClothSolveData
{
    std::size_t base = 0, count = 0;
    ClothEnergy energy; ///< the masses, membrane and bending stencils; the prediction each step
    std::vector<std::array<std::int32_t, 2>>
        edges;            ///< the mesh's edges, which the solve holds (self-collision exempts them)
    double damping = 0.0; ///< 1/s
    NewtonBudget budget;

    StretchFactor factor;
    PlaneConstraints planes;
    NewtonSolve newton;
    std::vector<Eigen::Vector3d> x, start;
    std::vector<bool> free;
    std::vector<ContactPlane> found;

    /// Set by the self-collision stage that lists the cloth: its settings this step, or none
    /// while it is off or gone.
    std::function<std::optional<SelfContactSettings>()> self;
    std::function<bool()> self_registered; ///< whether that stage is still registered
    std::size_t self_contacts = 0;         ///< pairs closer than the thickness after the last step
    std::size_t self_cut = 0;              ///< particles the last step cut back to their bound
};

/// Whether the bending goes into the stretch factor: where it outweighs the inertia (a fine mesh
/// of a stiff fabric: 2 mm edges of cotton at 240 Hz hold bending 3 500 times their mass term),
/// the diagonal part of the preconditioner alone would pass its two-ring coupling around a stencil
/// at a time; below that it costs a factor three times larger for little.
inline bool bending_in_factor(const ClothEnergy& energy, double h)
{
    const BendStencils& bend = energy.bending.stencils;
    double bending = 0.0, inertia = 0.0;
    for (std::size_t s = 0; s < bend.size(); ++s)
        for (auto a = bend.first[s]; a < bend.first[s + 1]; ++a)
            bending += bend.weight[s] * bend.coefficient[a] * bend.coefficient[a];
    for (const double m : energy.inertia.mass)
        inertia += m / (h * h);
    return bending > inertia;
}

/// The projection: the cloth's positions are the step's prediction on entry, the implicit step's
/// on exit. The minimiser starts from where inertia alone takes each particle, without the step's
/// accelerations: at rest that is where the particle is, so whatever iterations the solve stops
/// after, a cloth at rest stays exactly in the equilibrium of its energy (starting from the
/// prediction, a pinned particle's neighbours would begin a whole step's fall away from it, and a
/// solve stopped early would hold that hinge in place).
template <class T>
void run_cloth_solve(ClothSolveData<T>& d, World<T>& world, State3<T>& state, T dt)
{
    const std::size_t n = d.count, base = d.base;
    const double h = double(dt);
    const Vec3<double> gravity = world.call_progress().gravity.template cast<double>();
    const double keep = d.damping > 0.0 ? std::exp(-d.damping * h) : 1.0;
    d.x.resize(n);
    d.start.resize(n);
    d.free.resize(n);
    auto& predict = d.energy.inertia.predict;
    predict.resize(n);
    double pulled = 0.0; // the farthest the step's accelerations take a particle beyond inertia
    for (std::size_t k = 0; k < n; ++k)
    {
        const std::size_t i = base + k;
        const Vec3<double> y = state.position(i).template cast<double>();
        const Vec3<double> from(double(state.px()[i]), double(state.py()[i]), double(state.pz()[i]));
        const double w = double(state.inv_mass()[i]);
        d.free[k] = w != 0.0;
        d.start[k] = from;
        if (!d.free[k])
        {
            d.x[k] = predict[k] = y;
            continue;
        }
        const Vec3<double> pull = gravity +
                                  w * Vec3<double>(double(state.ax()[i]), double(state.ay()[i]), double(state.az()[i]));
        // Damping as a rate: the displacement of inertia keeps exp(-damping h) of itself.
        d.x[k] = from + keep * (y - from - h * h * pull);
        predict[k] = d.x[k] + h * h * pull;
        pulled = std::max(pulled, h * h * pull.norm());
    }
    d.energy.inertia.inv_h2 = 1.0 / (h * h);
    const bool with_bending = bending_in_factor(d.energy, h);
    if (!d.factor.fits(d.free, h, with_bending))
        d.factor.factor(d.energy.stretch, with_bending ? &d.energy.bending.stencils : nullptr, d.energy.inertia.mass,
                        d.free, h);
    // Every plane a particle could reach this step: twice as far as its inertia and the step's
    // accelerations take it.
    d.found.clear();
    world.collect_planes({.begin = base,
                          .end = base + n,
                          .at = &d.x,
                          .from = &d.start,
                          .reach = 2.0 * pulled,
                          .call = world.call_progress().call,
                          .substeps = world.call_progress().substeps},
                         d.found);
    for (auto& p : d.found)
        p.particle -= base;
    d.planes.reset(std::move(d.found), d.start);
    const std::optional<SelfContactSettings> self = d.self ? d.self() : std::nullopt;
    if (self)
        d.energy.contact.find(d.start, predict, d.energy.inertia.mass, d.free, d.energy.inertia.inv_h2, *self);
    else
        d.energy.contact.clear();
    d.newton.run(d.energy, d.planes, d.factor, d.free, d.budget, d.x);
    d.self_cut = self ? d.energy.contact.keep_apart(d.start, d.free, d.energy.inertia.mass, d.planes.planes(), d.x) : 0;
    d.self_contacts = self ? d.energy.contact.touching(d.x) : 0;
    T* x = state.x().data() + base;
    T* y = state.y().data() + base;
    T* z = state.z().data() + base;
    for (std::size_t k = 0; k < n; ++k)
        if (d.free[k])
        {
            x[k] = T(d.x[k].x());
            y[k] = T(d.x[k].y());
            z[k] = T(d.x[k].z());
        }
}

template <class T>
std::shared_ptr<ClothSolveData<T>> add_cloth_solve(Simulation<T>& sim, std::shared_ptr<ClothSolveData<T>> data,
                                                   const std::string& name)
{
    sim.add_position_projection(
        name, [data, w = world_of(sim).get()](State3<T>& state, T dt) { run_cloth_solve(*data, *w, state, dt); });
    return data;
}

} // namespace simdverlet::detail
