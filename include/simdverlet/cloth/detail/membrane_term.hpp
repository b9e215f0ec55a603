// The stretch of a material cloth as a continuum membrane on its triangles, a term of the implicit
// solve (newton_solve.hpp). Each triangle's deformation gradient F (3 x 2, from its rest shape in
// its own plane) has two principal stretches s1 >= s2, and the triangle stores
//   area x stretch / 2 x (phi(s1 - 1) + phi(s2 - 1)),  phi(e) = e^2 (e >= 0), kCompressionShare e^2,
// so a strip pulled one way feels `stretch` per unit width and narrows freely: a material's
// stretch is exactly its strip's, on any triangulation. In tension it is as-rigid-as-possible
// (|F - R|^2, R the rotation nearest F); in compression it gives way, along whichever direction
// the triangle shortens. A fabric carries almost no compressive force in its plane: it buckles, and
// on linear triangles a fold along a line that crosses them must shorten them, so a membrane that
// resisted compression as hard as tension would lock every fold that does not run along the mesh.
// docs/decisions.md measures this against edge springs and the alternatives.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "simdverlet/cloth/detail/fixed_order.hpp"

namespace simdverlet::detail
{

/// The share of the tension stiffness that resists compression (docs/decisions.md, "Buckling"):
/// enough that a sheet cannot crumple to nothing in its plane, little enough that it folds.
inline constexpr double kCompressionShare = 0.01;

/// A triangle of the membrane, over particles counted from the cloth's base.
struct MembraneTriangle
{
    std::array<std::int32_t, 3> corner;
    /// The gradient of each corner's hat function in the rest triangle's plane: F = sum_j x_j g_j^T.
    std::array<Eigen::Vector2d, 3> gradient;
    double area; ///< m^2 at rest
};

/// The triangles' membrane at a stiffness `stretch` (N/m).
class MembraneTerm
{
  public:
    std::vector<MembraneTriangle> triangles;
    double stretch = 0.0;

    /// A triangle from its rest corners.
    static MembraneTriangle triangle(const std::array<std::int32_t, 3>& corner, const Eigen::Vector3d& p0,
                                     const Eigen::Vector3d& p1, const Eigen::Vector3d& p2)
    {
        const Eigen::Vector3d e1 = p1 - p0, e2 = p2 - p0, normal = e1.cross(e2);
        const Eigen::Vector3d t1 = e1.normalized(), t2 = normal.normalized().cross(t1);
        Eigen::Matrix2d rest;
        rest << e1.dot(t1), e2.dot(t1), e1.dot(t2), e2.dot(t2);
        const Eigen::Matrix2d inv = rest.inverse();
        MembraneTriangle t{corner, {}, 0.5 * normal.norm()};
        t.gradient[1] = inv.row(0).transpose();
        t.gradient[2] = inv.row(1).transpose();
        t.gradient[0] = -(t.gradient[1] + t.gradient[2]);
        return t;
    }

    double value(const std::vector<Eigen::Vector3d>& x) const
    {
        double energy = 0.0;
        for (const auto& t : triangles)
        {
            const Principal p = principal(deformation(t, x));
            energy += 0.5 * stretch * t.area * (phi(p.s[0] - 1.0) + phi(p.s[1] - 1.0));
        }
        return energy;
    }

    /// Prepares the Hessian at x in the eigenbasis of each triangle's deformation (Smith et al.,
    /// "Analytic eigensystems for isotropic distortion energies"), adds the gradient at x to g and
    /// returns the energy at x: one decomposition of each triangle for all three. The two
    /// stretches are held at the tension stiffness whether they shorten or not, so a Newton step
    /// never overshoots a slack triangle that snaps taut within it (the compression branch of the
    /// energy still decides where the step ends); the in-plane turn at (phi'_1 + phi'_2) /
    /// (s1 + s2), the in-plane shear at (phi'_1 - phi'_2) / (s1 - s2), and each way out of the
    /// plane at phi'_i / s_i, each clamped at zero, so the matrix is positive semidefinite.
    double prepare(const std::vector<Eigen::Vector3d>& x, std::vector<Eigen::Vector3d>& g)
    {
        m_modes.resize(triangles.size());
        double energy = 0.0;
        for (std::size_t k = 0; k < triangles.size(); ++k)
        {
            const auto& t = triangles[k];
            const Principal p = principal(deformation(t, x));
            const double f0 = half_slope(p.s[0] - 1.0), f1 = half_slope(p.s[1] - 1.0);
            const double scale = stretch * t.area;
            energy += 0.5 * scale * (phi(p.s[0] - 1.0) + phi(p.s[1] - 1.0));
            Modes& m = m_modes[k];
            m.u = p.u;
            for (std::size_t j = 0; j < 3; ++j)
            {
                m.gv[j] = {t.gradient[j].dot(p.v[0]), t.gradient[j].dot(p.v[1])};
                // dE/dF = area stretch sum_i phi'(s_i - 1) / 2 u_i v_i^T, and dF/dx_j = (.) g_j^T.
                g[std::size_t(t.corner[j])] += scale * (f0 * m.gv[j][0] * p.u[0] + f1 * m.gv[j][1] * p.u[1]);
            }
            m.along = scale;
            m.turn = scale * std::max(0.0, (f0 + f1) / std::max(p.s[0] + p.s[1], kTiny));
            m.shear = scale * (p.s[0] - p.s[1] > 1e-9 ? std::max(0.0, (f0 - f1) / (p.s[0] - p.s[1]))
                                                      : (p.s[1] >= 1.0 ? 1.0 : kCompressionShare));
            m.out = {scale * std::max(0.0, f0 / std::max(p.s[0], kTiny)),
                     scale * std::max(0.0, f1 / std::max(p.s[1], kTiny))};
        }
        return energy;
    }

    void add_product(const std::vector<Eigen::Vector3d>& w, std::vector<Eigen::Vector3d>& out) const
    {
        for (std::size_t k = 0; k < triangles.size(); ++k)
        {
            const auto& t = triangles[k];
            const Modes& m = m_modes[k];
            // c_ab = u_a^T dF v_b for dF = sum_j w_j g_j^T.
            const auto& gv = m.gv;
            std::array<std::array<double, 2>, 3> c{};
            for (int j = 0; j < 3; ++j)
            {
                const Eigen::Vector3d& wj = w[std::size_t(t.corner[std::size_t(j)])];
                for (int a = 0; a < 3; ++a)
                {
                    const double ua = m.u[std::size_t(a)].dot(wj);
                    c[std::size_t(a)][0] += ua * gv[std::size_t(j)][0];
                    c[std::size_t(a)][1] += ua * gv[std::size_t(j)][1];
                }
            }
            const std::array<std::array<double, 2>, 3> r = scaled(m, c);
            for (int j = 0; j < 3; ++j)
            {
                Eigen::Vector3d f = Eigen::Vector3d::Zero();
                for (int a = 0; a < 3; ++a)
                    f += (r[std::size_t(a)][0] * gv[std::size_t(j)][0] + r[std::size_t(a)][1] * gv[std::size_t(j)][1]) *
                         m.u[std::size_t(a)];
                out[std::size_t(t.corner[std::size_t(j)])] += f;
            }
        }
    }

    void add_diagonal(std::vector<Eigen::Matrix3d>& blocks) const
    {
        for (std::size_t k = 0; k < triangles.size(); ++k)
        {
            const auto& t = triangles[k];
            const Modes& m = m_modes[k];
            for (int j = 0; j < 3; ++j)
            {
                const double g0 = m.gv[std::size_t(j)][0], g1 = m.gv[std::size_t(j)][1];
                // The corner's block is U S U^T with U = (u1 u2 n) and S the modes' weights on
                // dF = w g^T: the stretches on (u_a . w)(g . v_a), the turn and shear on the
                // off-diagonal pair, the out-of-plane on the normal.
                const double turn = 0.5 * m.turn, shear = 0.5 * m.shear;
                Eigen::Matrix3d s = Eigen::Matrix3d::Zero();
                s(0, 0) = m.along * g0 * g0 + (turn + shear) * g1 * g1;
                s(1, 1) = m.along * g1 * g1 + (turn + shear) * g0 * g0;
                s(0, 1) = s(1, 0) = (shear - turn) * g0 * g1;
                s(2, 2) = m.out[0] * g0 * g0 + m.out[1] * g1 * g1;
                Eigen::Matrix3d U;
                U << m.u[0], m.u[1], m.u[2];
                blocks[std::size_t(t.corner[std::size_t(j)])] += sandwich(U, s);
            }
        }
    }

  private:
    static constexpr double kTiny = 1e-12;

    /// A triangle's principal stretches s (largest first) with their directions v in its rest
    /// plane and u in space (F v_i = s_i u_i), and u[2] the deformed triangle's normal.
    struct Principal
    {
        std::array<double, 2> s;
        std::array<Eigen::Vector2d, 2> v;
        std::array<Eigen::Vector3d, 3> u;
    };

    /// Of the Hessian prepared last, per triangle: its bases and each mode's weight.
    struct Modes
    {
        std::array<Eigen::Vector3d, 3> u;
        std::array<std::array<double, 2>, 3> gv; ///< each corner's hat gradient . v_1, . v_2
        double along, turn, shear;
        std::array<double, 2> out;
    };

    static double phi(double e) { return e >= 0.0 ? e * e : kCompressionShare * e * e; }
    static double half_slope(double e) { return e >= 0.0 ? e : kCompressionShare * e; } ///< phi'(e) / 2

    static Eigen::Matrix<double, 3, 2> deformation(const MembraneTriangle& t, const std::vector<Eigen::Vector3d>& x)
    {
        Eigen::Matrix<double, 3, 2> F = Eigen::Matrix<double, 3, 2>::Zero();
        for (int j = 0; j < 3; ++j)
            F += x[std::size_t(t.corner[std::size_t(j)])] * t.gradient[std::size_t(j)].transpose();
        return F;
    }

    static Principal principal(const Eigen::Matrix<double, 3, 2>& F)
    {
        // The eigenvalues of C = F^T F are the squared stretches; its eigenvectors are v.
        const double a = F.col(0).squaredNorm(), b = F.col(0).dot(F.col(1)), d = F.col(1).squaredNorm();
        const double mean = 0.5 * (a + d), spread = std::sqrt(0.25 * (a - d) * (a - d) + b * b);
        Principal p;
        p.s = {std::sqrt(mean + spread), std::sqrt(std::max(0.0, mean - spread))};
        if (spread > kTiny * (1.0 + mean))
        {
            // The larger eigenvalue's eigenvector, from whichever row of C - l I is better conditioned.
            const double l = mean + spread;
            const Eigen::Vector2d r0(b, l - a), r1(l - d, b);
            p.v[0] = (r0.squaredNorm() > r1.squaredNorm() ? r0 : r1).normalized();
        }
        else
            p.v[0] = Eigen::Vector2d::UnitX(); // stretched alike every way: any pair will do
        p.v[1] = Eigen::Vector2d(-p.v[0].y(), p.v[0].x());
        const Eigen::Vector3d f0 = times(F, p.v[0]), f1 = times(F, p.v[1]);
        p.u[0] = p.s[0] > kTiny ? Eigen::Vector3d(f0 / p.s[0]) : Eigen::Vector3d::UnitX();
        Eigen::Vector3d u1 = f1 - p.u[0].dot(f1) * p.u[0];
        if (!(u1.norm() > kTiny))
        {
            // Collapsed onto a line: any direction across it.
            const Eigen::Vector3d any = std::abs(p.u[0].x()) < 0.9 ? Eigen::Vector3d::UnitX()
                                                                   : Eigen::Vector3d::UnitY();
            u1 = any - p.u[0].dot(any) * p.u[0];
        }
        p.u[1] = u1.normalized();
        p.u[2] = p.u[0].cross(p.u[1]);
        return p;
    }

    /// The Hessian's action on dF's coefficients c_ab = u_a^T dF v_b in the eigenbasis.
    static std::array<std::array<double, 2>, 3> scaled(const Modes& m, const std::array<std::array<double, 2>, 3>& c)
    {
        std::array<std::array<double, 2>, 3> r{};
        r[0][0] = m.along * c[0][0];
        r[1][1] = m.along * c[1][1];
        // The turn (c01 - c10) / sqrt 2 and the shear (c01 + c10) / sqrt 2.
        const double turn = 0.5 * m.turn * (c[0][1] - c[1][0]), shear = 0.5 * m.shear * (c[0][1] + c[1][0]);
        r[0][1] = turn + shear;
        r[1][0] = shear - turn;
        r[2][0] = m.out[0] * c[2][0];
        r[2][1] = m.out[1] * c[2][1];
        return r;
    }

    std::vector<Modes> m_modes;
};

} // namespace simdverlet::detail
