// Contacts inside the implicit cloth solve (newton_solve.hpp): each contact plane that colliders
// and motion constraints report (contact_planes.hpp) is a constraint of the Newton iterations, not
// a penalty. A particle on a plane has its motion along the plane's normal taken out of the linear
// solve and set, so it lands on the plane (Baraff and Witkin's filtered conjugate gradients); the
// force the constraint then needs is the contact's normal force, and Coulomb's law decides from
// it, iteration by iteration, whether the particle sticks (its tangential motion is set too, to
// none) or slides against a kinetic force of friction x normal force. No stiffness is chosen, so
// none can be too soft to hold a cloth up or too stiff for the solve, and static friction holds
// exactly: a stuck particle does not move along the surface at all.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Dense>

#include "simdverlet/cloth/detail/fixed_order.hpp"
#include "simdverlet/core/contact_planes.hpp"

namespace simdverlet::detail
{

/// Normals closer than this (the sine of the angle between them) to those already held add no
/// direction of their own: a crease's second plane, not a duplicate of its first.
inline constexpr double kIndependentNormal = 0.05;

/// The contacts of one step of a cloth, grouped by particle (counted from the cloth's base).
class PlaneConstraints
{
  public:
    enum class Hold : std::uint8_t
    {
        none,  ///< on no plane: free
        slide, ///< on its planes, moving along them against kinetic friction
        stick, ///< on its planes and not moving along them
    };

    /// One particle's contacts.
    struct Held
    {
        std::uint32_t particle;
        std::uint32_t first, count; ///< its planes: [first, first + count)
        Hold hold = Hold::none;
        Eigen::Vector3d anchor;       ///< where it sticks: where the step found it, carried with the surface
        Eigen::Vector3d kinetic;      ///< the kinetic friction force while it slides, N
        Eigen::Vector3d moving;       ///< which way inertia carried it along its planes (sliding in)
        std::array<bool, 3> active{}; ///< which of its (first three) planes hold it
        double normal_force = 0.0;    ///< the planes' push on it, N (the last reaction)
    };

    /// Takes the planes (particles counted from the cloth's base) and where each particle started
    /// the step, which (moved as far as the surface under it moves: its first plane's motion) is
    /// where it sticks.
    void reset(std::vector<ContactPlane> planes, const std::vector<Eigen::Vector3d>& start)
    {
        std::stable_sort(planes.begin(), planes.end(),
                         [](const ContactPlane& a, const ContactPlane& b) { return a.particle < b.particle; });
        m_planes = std::move(planes);
        m_held.clear();
        for (std::size_t k = 0; k < m_planes.size(); ++k)
        {
            const auto particle = std::uint32_t(m_planes[k].particle);
            if (m_held.empty() || m_held.back().particle != particle)
                m_held.push_back({particle,
                                  std::uint32_t(k),
                                  0,
                                  Hold::none,
                                  Eigen::Vector3d(start[particle] + m_planes[k].motion),
                                  Eigen::Vector3d::Zero(),
                                  Eigen::Vector3d::Zero(),
                                  {},
                                  0.0});
            ++m_held.back().count;
        }
    }

    bool empty() const noexcept { return m_held.empty(); }
    const std::vector<Held>& held() const noexcept { return m_held; }
    const std::vector<ContactPlane>& planes() const noexcept { return m_planes; }

    /// Starts the step: every particle that inertia (x) or the step's prediction (its pull
    /// included) puts behind one of its planes is on it. One that inertia carries along its
    /// planes arrives sliding (against Coulomb's kinetic friction from the first iteration's
    /// normal force on), the others stick where the step found them.
    void start(const std::vector<Eigen::Vector3d>& x, const std::vector<Eigen::Vector3d>& predicted)
    {
        for (Held& h : m_held)
        {
            const bool inertia = touch(h, x[h.particle]); // both: each activates its own planes
            const bool prediction = touch(h, predicted[h.particle]);
            if (!inertia && !prediction)
                continue;
            h.hold = Hold::stick;
            h.moving = times(along_planes(h), Eigen::Vector3d(x[h.particle] - h.anchor));
            if (h.moving.norm() > kMoving * (1.0 + h.anchor.norm()))
                h.hold = Hold::slide;
        }
    }

    /// Within the iterations: a free particle that x puts behind one of its planes sticks where
    /// it touched.
    void activate(const std::vector<Eigen::Vector3d>& x)
    {
        for (Held& h : m_held)
            if (touch(h, x[h.particle]) && h.hold == Hold::none)
            {
                h.hold = Hold::stick;
                h.anchor = x[h.particle];
            }
    }

    /// The filter of a held particle at x: the directions the linear solve may still move it in
    /// (S, a projection), and the move it is set to make in the others (`set`): onto its active
    /// planes, and, stuck, back to its anchor along them.
    void filter(const Held& h, const Eigen::Vector3d& x, Eigen::Matrix3d& S, Eigen::Vector3d& set) const
    {
        const Basis b = basis(h);
        S = Eigen::Matrix3d::Identity();
        set.setZero();
        if (b.count == 0)
            return;
        // set = sum_k c_k e_k with n_j . set = offset_j - n_j . x for each plane in the basis; the
        // basis is Gram-Schmidt of those normals, so the system is lower triangular.
        std::array<double, 3> c{};
        for (int j = 0; j < b.count; ++j)
        {
            const ContactPlane& p = m_planes[h.first + std::uint32_t(b.plane[j])];
            double rhs = p.offset - p.normal.dot(x);
            for (int k = 0; k < j; ++k)
                rhs -= c[std::size_t(k)] * p.normal.dot(b.e[k]);
            c[std::size_t(j)] = rhs / p.normal.dot(b.e[j]);
            set += c[std::size_t(j)] * b.e[j];
            S -= b.e[j] * b.e[j].transpose();
        }
        if (h.hold == Hold::stick)
        {
            set += times(S, Eigen::Vector3d(h.anchor - x));
            S.setZero();
        }
    }

    /// The kinetic friction forces of the sliding particles, subtracted from the gradient g.
    void add_friction(std::vector<Eigen::Vector3d>& g) const
    {
        for (const Held& h : m_held)
            if (h.hold == Hold::slide)
                g[h.particle] -= h.kinetic;
    }

    /// The potential of the kinetic friction forces at x (constant within an iteration, they are
    /// conservative there), so that the line search weighs what friction does against the energy.
    double friction_potential(const std::vector<Eigen::Vector3d>& x) const
    {
        double potential = 0.0;
        for (const Held& h : m_held)
            if (h.hold == Hold::slide)
                potential -= h.kinetic.dot(x[h.particle]);
        return potential;
    }

    /// After an iteration moved the particles to x, with `force` the force each held particle's
    /// constraints had to supply (what the linear solve's equation lacks there): the normal force
    /// of each active plane, a plane that would have to pull let go, and Coulomb's law for the rest.
    void react(const std::vector<Eigen::Vector3d>& x, const std::vector<Eigen::Vector3d>& force)
    {
        for (Held& h : m_held)
        {
            if (h.hold == Hold::none)
                continue;
            const Basis b = basis(h);
            // The constraints supply what balances the particle's residual force.
            const Eigen::Vector3d f = -force[h.particle];
            // Each plane's share of the push: f's part along the basis, by back substitution on
            // the same triangular system as the filter's.
            std::array<double, 3> push{};
            for (int j = b.count; j-- > 0;)
            {
                double v = f.dot(b.e[std::size_t(j)]);
                for (int k = j + 1; k < b.count; ++k)
                    v -= push[std::size_t(k)] * normal(h, b, k).dot(b.e[std::size_t(j)]);
                push[std::size_t(j)] = v / normal(h, b, j).dot(b.e[std::size_t(j)]);
            }
            double normal_force = 0.0, bound = 0.0;
            Eigen::Vector3d tangential = f;
            bool let_go = false;
            for (int j = 0; j < b.count; ++j)
            {
                if (push[std::size_t(j)] < 0.0)
                {
                    h.active[std::size_t(b.plane[std::size_t(j)])] = false;
                    let_go = true;
                    continue;
                }
                const ContactPlane& p = m_planes[h.first + std::uint32_t(b.plane[std::size_t(j)])];
                normal_force += push[std::size_t(j)];
                bound += p.friction * push[std::size_t(j)];
                tangential -= push[std::size_t(j)] * p.normal;
            }
            h.normal_force = normal_force;
            if (std::none_of(h.active.begin(), h.active.end(), [](bool a) { return a; }))
            {
                h.hold = Hold::none;
                h.kinetic.setZero();
                continue;
            }
            if (let_go)
                continue; // the remaining planes' forces are read on the next iteration
            // Stuck, the constraint also held it along the planes; beyond friction x normal force
            // it slides from the next iteration on, against kinetic friction the way the
            // constraint held it.
            if (h.hold == Hold::stick && tangential.norm() > bound)
            {
                h.hold = Hold::slide;
                h.moving = -tangential;
            }
            if (h.hold != Hold::slide)
                continue;
            // Sliding, friction opposes the motion it came in with; where that friction has
            // turned the motion back within the step, the particle has stopped, and sticks.
            const Eigen::Vector3d slid = times(along_planes(h), Eigen::Vector3d(x[h.particle] - h.anchor));
            if (slid.dot(h.moving) < 0.0)
            {
                h.hold = Hold::stick;
                h.kinetic.setZero();
                continue;
            }
            h.kinetic = -bound * h.moving.normalized();
        }
    }

  private:
    /// Activates the planes that x is behind; whether any was newly activated.
    bool touch(Held& h, const Eigen::Vector3d& x) const
    {
        bool touched = false;
        for (std::uint32_t k = 0; k < std::min<std::uint32_t>(h.count, 3); ++k)
        {
            const ContactPlane& p = m_planes[h.first + k];
            if (!h.active[k] && p.normal.dot(x) < p.offset)
            {
                h.active[k] = true;
                touched = true;
            }
        }
        return touched;
    }

    /// Motion along the planes shorter than this, relative to the particle's distance from the
    /// origin, is rounding, not sliding.
    static constexpr double kMoving = 1e-12;

    /// The projection onto the active planes of a held particle.
    Eigen::Matrix3d along_planes(const Held& h) const
    {
        const Basis b = basis(h);
        Eigen::Matrix3d along = Eigen::Matrix3d::Identity();
        for (int j = 0; j < b.count; ++j)
            along -= b.e[std::size_t(j)] * b.e[std::size_t(j)].transpose();
        return along;
    }

    /// The active planes' normals made orthonormal (Gram-Schmidt, a normal within
    /// kIndependentNormal of the others skipped), with the plane each came from.
    struct Basis
    {
        std::array<Eigen::Vector3d, 3> e;
        std::array<int, 3> plane{};
        int count = 0;
    };
    const Eigen::Vector3d& normal(const Held& h, const Basis& b, int j) const
    {
        return m_planes[h.first + std::uint32_t(b.plane[std::size_t(j)])].normal;
    }

    Basis basis(const Held& h) const
    {
        Basis b;
        for (std::uint32_t k = 0; k < std::min<std::uint32_t>(h.count, 3); ++k)
        {
            if (!h.active[k])
                continue;
            Eigen::Vector3d e = m_planes[h.first + k].normal;
            for (int j = 0; j < b.count; ++j)
                e -= e.dot(b.e[std::size_t(j)]) * b.e[std::size_t(j)];
            if (e.norm() < kIndependentNormal)
                continue;
            b.e[std::size_t(b.count)] = e.normalized();
            b.plane[std::size_t(b.count)] = int(k);
            ++b.count;
        }
        return b;
    }

    std::vector<ContactPlane> m_planes;
    std::vector<Held> m_held;
};

} // namespace simdverlet::detail
