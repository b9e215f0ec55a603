// The minimiser of the implicit cloth solve: each step of a material cloth is the minimum of
// its inertia, stretch and bending (inertia_term.hpp, membrane_term.hpp, cloth_bending.hpp) with
// its contacts as constraints (plane_constraints.hpp), found by Newton iterations whose linear
// systems conjugate gradients solve in the subspace the constraints leave free. The preconditioner
// adds two parts that each see what the other cannot: the stretch factor (stretch_factor.hpp),
// which carries a load across the whole cloth at once but holds every triangle as stiff to turning
// as to stretching, and the Newton matrix's own 3x3 diagonal blocks, which know which way each
// triangle stretches and so let a particle turn, bend and fold freely. docs/decisions.md measures it against
// quasi-Newton on the factor and accelerated local-global iterations.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Dense>

#include "simdverlet/cloth/detail/cloth_bending.hpp"
#include "simdverlet/cloth/detail/fixed_order.hpp"
#include "simdverlet/cloth/detail/inertia_term.hpp"
#include "simdverlet/cloth/detail/membrane_term.hpp"
#include "simdverlet/cloth/detail/plane_constraints.hpp"
#include "simdverlet/cloth/detail/self_contact_term.hpp"
#include "simdverlet/cloth/detail/stretch_factor.hpp"

namespace simdverlet::detail
{

/// The terms of a material cloth's step, summed.
struct ClothEnergy
{
    InertiaTerm inertia;
    MembraneTerm stretch;
    BendingTerm bending;
    SelfContactTerm contact; ///< empty unless a self-collision stage lists the cloth

    double value(const std::vector<Eigen::Vector3d>& x) const
    {
        return inertia.value(x) + stretch.value(x) + bending.value(x) + contact.value(x);
    }
    /// Prepares the Hessian at x, sets g to the gradient there and returns the energy there.
    double prepare(const std::vector<Eigen::Vector3d>& x, std::vector<Eigen::Vector3d>& g)
    {
        g.assign(x.size(), Eigen::Vector3d::Zero());
        inertia.add_gradient(x, g);
        const double membrane = stretch.prepare(x, g);
        bending.prepare(x);
        bending.add_gradient(x, g);
        contact.prepare(x, g);
        return inertia.value(x) + membrane + bending.value(x) + contact.value(x);
    }
    void product(const std::vector<Eigen::Vector3d>& v, std::vector<Eigen::Vector3d>& out) const
    {
        out.assign(v.size(), Eigen::Vector3d::Zero());
        inertia.add_product(v, out);
        stretch.add_product(v, out);
        bending.add_product(v, out);
        contact.add_product(v, out);
    }
    void diagonal(std::vector<Eigen::Matrix3d>& blocks) const
    {
        blocks.assign(inertia.mass.size(), Eigen::Matrix3d::Zero());
        inertia.add_diagonal(blocks);
        stretch.add_diagonal(blocks);
        bending.add_diagonal(blocks);
        contact.add_diagonal(blocks);
    }
};

/// How hard the minimiser works on one step.
struct NewtonBudget
{
    int iterations = 2;             ///< Newton iterations
    int linear_iterations = 8;      ///< conjugate-gradient iterations in each, at most
    double linear_tolerance = 1e-3; ///< stop them once the preconditioned residual has fallen this far
};

/// The weight of the diagonal part of the preconditioner. Its blocks alone would overshoot the
/// bending's two-ring coupling (a Jacobi sweep of a biharmonic operator reaches 3.2 times its
/// diagonal), and half of that keeps the sum safely positive definite and the stretch's part whole.
inline constexpr double kDiagonalWeight = 0.5;

class NewtonSolve
{
  public:
    /// Moves x (the step's start on entry) to the step's minimum, particles with !free[i] held
    /// where they are. `factor` is the stretch factor for `free`.
    void run(ClothEnergy& energy, PlaneConstraints& planes, StretchFactor& factor, const std::vector<bool>& free,
             const NewtonBudget& budget, std::vector<Eigen::Vector3d>& x)
    {
        const std::size_t n = x.size();
        m_filter.assign(n, kFree);
        for (std::size_t i = 0; i < n; ++i)
            if (!free[i])
                m_filter[i] = kPinned;
        planes.start(x, energy.inertia.predict);
        for (int iteration = 0; iteration < budget.iterations; ++iteration)
        {
            const double value = energy.prepare(x, m_gradient) + planes.friction_potential(x);
            planes.add_friction(m_gradient);
            prepare_filters(planes, x);
            prepare_diagonal(energy);
            // The step: set where the constraints set it, the rest from the filtered system
            // S H S w = S (-g - H set), started from the translation that balances the gradient.
            m_step = m_set;
            add_translation(energy);
            // m_force is the unfiltered residual -g - H step, which the constraints' reactions
            // balance; conjugate gradients keep it up to date with the filtered one.
            energy.product(m_step, m_product);
            for (std::size_t i = 0; i < n; ++i)
                m_force[i] = -m_gradient[i] - m_product[i];
            m_residual = m_force;
            filter(m_residual);
            conjugate_gradients(energy, factor, budget);
            line_search(energy, planes, value, x);
            planes.react(x, m_force);
            planes.activate(x);
        }
    }

  private:
    static constexpr std::int32_t kFree = -1, kPinned = -2;

    /// x += a m_step for the first a of 1, 1/2, 1/4, ... that lowers the energy, kinetic friction
    /// included (Armijo's rule against the step's slope): the Newton matrix is exact only near x,
    /// and a step that turns the cloth far (a sheet swinging a quarter turn in one frame) can
    /// overshoot where its curvature grows faster than the matrix knew. After kBacktracks
    /// halvings without descent the step is not taken.
    void line_search(const ClothEnergy& energy, const PlaneConstraints& planes, double start,
                     std::vector<Eigen::Vector3d>& x)
    {
        const std::size_t n = x.size();
        const double slope = dot(m_gradient, m_step);
        if (!(slope < 0.0))
            return;
        m_trial.resize(n);
        double a = 1.0;
        for (int k = 0; k <= kBacktracks; ++k, a *= 0.5)
        {
            for (std::size_t i = 0; i < n; ++i)
                m_trial[i] = x[i] + a * m_step[i];
            if (energy.value(m_trial) + planes.friction_potential(m_trial) <= start + kArmijo * a * slope)
            {
                x.swap(m_trial);
                return;
            }
        }
    }

    static constexpr int kBacktracks = 8;
    static constexpr double kArmijo = 1e-4;

    void prepare_filters(const PlaneConstraints& planes, const std::vector<Eigen::Vector3d>& x)
    {
        const std::size_t n = x.size();
        m_set.assign(n, Eigen::Vector3d::Zero());
        m_force.assign(n, Eigen::Vector3d::Zero());
        m_blocks.clear();
        for (std::size_t i = 0; i < n; ++i)
            if (m_filter[i] >= 0)
                m_filter[i] = kFree;
        for (const auto& h : planes.held())
        {
            if (h.hold == PlaneConstraints::Hold::none || m_filter[h.particle] == kPinned)
                continue;
            Eigen::Matrix3d S;
            planes.filter(h, x[h.particle], S, m_set[h.particle]);
            m_filter[h.particle] = std::int32_t(m_blocks.size());
            m_blocks.push_back(S);
        }
    }

    /// Starts the free particles' step along the translation that balances the sum of the
    /// gradient with the inertia as its matrix, t = -sum g / sum m / h^2, as far along it as the
    /// Newton matrix puts the minimum (pins and contacts hold it back): a cloth in free fall then
    /// lands exactly where its prediction is, and one at rest (whose internal forces balance its
    /// weight and its pins, so that sum g = 0) exactly where it is, however early the iterations
    /// stop after.
    void add_translation(const ClothEnergy& energy)
    {
        Eigen::Vector3d sum = Eigen::Vector3d::Zero();
        double mass = 0.0;
        for (std::size_t i = 0; i < m_step.size(); ++i)
            if (m_filter[i] == kFree)
            {
                sum += m_gradient[i];
                mass += energy.inertia.mass[i] * energy.inertia.inv_h2;
            }
        if (!(mass > 0.0) || sum.isZero(0.0))
            return;
        const Eigen::Vector3d t = -sum / mass;
        m_direction.assign(m_step.size(), Eigen::Vector3d::Zero());
        for (std::size_t i = 0; i < m_step.size(); ++i)
            if (m_filter[i] == kFree)
                m_direction[i] = t;
        energy.product(m_direction, m_product);
        const double curvature = dot(m_direction, m_product);
        if (!(curvature > 0.0))
            return;
        const double along = -dot(m_gradient, m_direction) / curvature;
        for (std::size_t i = 0; i < m_step.size(); ++i)
            m_step[i] += along * m_direction[i];
    }

    /// v = S v, particle by particle.
    void filter(std::vector<Eigen::Vector3d>& v) const
    {
        for (std::size_t i = 0; i < v.size(); ++i)
            if (m_filter[i] == kPinned)
                v[i].setZero();
            else if (m_filter[i] >= 0)
                v[i] = times(m_blocks[std::size_t(m_filter[i])], v[i]);
    }

    void prepare_diagonal(const ClothEnergy& energy)
    {
        energy.diagonal(m_diagonal);
        for (std::size_t i = 0; i < m_diagonal.size(); ++i)
            m_diagonal[i] = m_filter[i] == kPinned ? Eigen::Matrix3d::Zero() : Eigen::Matrix3d(m_diagonal[i].inverse());
    }

    /// z = S (A^-1 + w D^-1) S r, for r already filtered.
    void precondition(StretchFactor& factor, const std::vector<Eigen::Vector3d>& r, std::vector<Eigen::Vector3d>& z)
    {
        factor.solve(r, z);
        for (std::size_t i = 0; i < r.size(); ++i)
            z[i] += kDiagonalWeight * times(m_diagonal[i], r[i]);
        filter(z);
    }

    void conjugate_gradients(const ClothEnergy& energy, StretchFactor& factor, const NewtonBudget& budget)
    {
        const std::size_t n = m_step.size();
        precondition(factor, m_residual, m_z);
        m_direction = m_z;
        double rz = dot(m_residual, m_z);
        const double start = rz;
        if (!(start > 0.0))
            return;
        for (int k = 0; k < budget.linear_iterations; ++k)
        {
            energy.product(m_direction, m_product);
            const double curvature = dot(m_direction, m_product); // the direction is filtered already
            if (!(curvature > 0.0))
                return;
            const double alpha = rz / curvature;
            for (std::size_t i = 0; i < n; ++i)
            {
                m_step[i] += alpha * m_direction[i];
                m_force[i] -= alpha * m_product[i];
            }
            filter(m_product);
            for (std::size_t i = 0; i < n; ++i)
                m_residual[i] -= alpha * m_product[i];
            if (k + 1 == budget.linear_iterations)
                return;
            precondition(factor, m_residual, m_z);
            const double next = dot(m_residual, m_z);
            if (!(next > budget.linear_tolerance * budget.linear_tolerance * start))
                return;
            const double beta = next / rz;
            rz = next;
            for (std::size_t i = 0; i < n; ++i)
                m_direction[i] = m_z[i] + beta * m_direction[i];
        }
    }

    static double dot(const std::vector<Eigen::Vector3d>& a, const std::vector<Eigen::Vector3d>& b)
    {
        double sum = 0.0;
        for (std::size_t i = 0; i < a.size(); ++i)
            sum += a[i].dot(b[i]);
        return sum;
    }

    std::vector<std::int32_t> m_filter;      ///< per particle: kFree, kPinned, or its block in m_blocks
    std::vector<Eigen::Matrix3d> m_blocks;   ///< the filters of the held particles
    std::vector<Eigen::Matrix3d> m_diagonal; ///< the inverted 3x3 diagonal blocks of H
    std::vector<Eigen::Vector3d> m_gradient, m_set, m_step, m_product, m_residual, m_z, m_direction, m_force, m_trial;
};

} // namespace simdverlet::detail
