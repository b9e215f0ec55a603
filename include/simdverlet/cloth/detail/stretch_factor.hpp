// The preconditioner's global part for the implicit cloth solve (newton_solve.hpp): a Cholesky
// factor of M / h^2 + stretch x L over the free particles, L the cotangent Laplacian of the rest
// mesh (the as-rigid-as-possible membrane's matrix, which holds every triangle as stiff to turning
// and bending as to stretching), and, where the bending outweighs the inertia, the bending's
// W L^T L too. It is wrong exactly where the Newton matrix is soft (turning, bending, folding), so
// it cannot be the solve; but it carries a load across the whole cloth in one application, which
// no local sweep does, and it depends on nothing that moves, so it is factored once and reused
// until the pinned set or the step changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>

#include "simdverlet/cloth/detail/cloth_bending.hpp"
#include "simdverlet/cloth/detail/membrane_term.hpp"

namespace simdverlet::detail
{

/// The lower Cholesky factor of P A P^T, column by column (compressed sparse columns), and P.
/// The three coordinates are solved together, interleaved, so each entry is read once for all
/// three: half the time of three separate solves. The solve is memory-bound, so the off-diagonal
/// entries are kept in float (factored in double, then rounded): any L with a positive diagonal
/// makes L L^T positive definite, so the rounded factor is still a preconditioner, at 0.6 of the
/// reads.
struct CholeskyFactor
{
    std::vector<int> outer, inner, permutation;
    std::vector<float> values;
    std::vector<double> inv_diagonal;

    std::size_t rows() const noexcept { return permutation.size(); }

    /// Solves L L^T u = u in place for three interleaved right-hand sides in the factor's order.
    void solve(std::vector<double>& u) const
    {
        const std::size_t n = rows();
        for (std::size_t j = 0; j < n; ++j)
        {
            const double inv = inv_diagonal[j];
            const double a = u[3 * j] * inv, b = u[3 * j + 1] * inv, c = u[3 * j + 2] * inv;
            u[3 * j] = a;
            u[3 * j + 1] = b;
            u[3 * j + 2] = c;
            for (auto q = std::size_t(outer[j]) + 1; q < std::size_t(outer[j + 1]); ++q)
            {
                const std::size_t i = 3 * std::size_t(inner[q]);
                const double l = values[q];
                u[i] -= l * a;
                u[i + 1] -= l * b;
                u[i + 2] -= l * c;
            }
        }
        for (std::size_t j = n; j-- > 0;)
        {
            double a = u[3 * j], b = u[3 * j + 1], c = u[3 * j + 2];
            for (auto q = std::size_t(outer[j]) + 1; q < std::size_t(outer[j + 1]); ++q)
            {
                const std::size_t i = 3 * std::size_t(inner[q]);
                const double l = values[q];
                a -= l * u[i];
                b -= l * u[i + 1];
                c -= l * u[i + 2];
            }
            const double inv = inv_diagonal[j];
            u[3 * j] = a * inv;
            u[3 * j + 1] = b * inv;
            u[3 * j + 2] = c * inv;
        }
    }
};

/// The factor with the particle order it was made for.
class StretchFactor
{
  public:
    /// Factors M / h^2 + the membrane's area x stretch x g_a . g_b over each triangle's corners
    /// (+ the bending's W L^T L when `with_bending`) over the particles with free[i]. In double:
    /// M / h^2 is about 10^-3 of the membrane's stiffness on 2 cm triangles at 60 Hz, within a
    /// float's rounding of its null space (a rigid translation).
    void factor(const MembraneTerm& membrane, const BendStencils* bending, const std::vector<double>& mass,
                const std::vector<bool>& free, double h)
    {
        const std::size_t count = mass.size();
        std::vector<std::int32_t> row(count, -1);
        int rows = 0;
        for (std::size_t v = 0; v < count; ++v)
            if (free[v])
                row[v] = rows++;
        std::vector<Eigen::Triplet<double>> entries;
        entries.reserve(count + 9 * membrane.triangles.size() + (bending ? 49 * bending->size() : 0));
        const double inv_h2 = 1.0 / (h * h);
        for (std::size_t v = 0; v < count; ++v)
            if (row[v] >= 0)
                entries.emplace_back(row[v], row[v], mass[v] * inv_h2);
        for (const auto& t : membrane.triangles)
            for (std::size_t a = 0; a < 3; ++a)
                if (const auto ra = row[std::size_t(t.corner[a])]; ra >= 0)
                    for (std::size_t b = 0; b < 3; ++b)
                        if (const auto rb = row[std::size_t(t.corner[b])]; rb >= 0)
                            entries.emplace_back(ra, rb, membrane.stretch * t.area * t.gradient[a].dot(t.gradient[b]));
        if (bending)
            for (std::size_t s = 0; s < bending->size(); ++s)
                for (auto a = bending->first[s]; a < bending->first[s + 1]; ++a)
                    if (const auto ra = row[std::size_t(bending->particle[a])]; ra >= 0)
                        for (auto b = bending->first[s]; b < bending->first[s + 1]; ++b)
                            if (const auto rb = row[std::size_t(bending->particle[b])]; rb >= 0)
                                entries.emplace_back(
                                    ra, rb, bending->weight[s] * bending->coefficient[a] * bending->coefficient[b]);
        Eigen::SparseMatrix<double> matrix(rows, rows);
        matrix.setFromTriplets(entries.begin(), entries.end());
        const Eigen::SimplicialLLT<Eigen::SparseMatrix<double>> cholesky(matrix);
        const auto& lower = cholesky.matrixL().nestedExpression();
        const int* permutation = cholesky.permutationP().indices().data();
        m_factor.outer.assign(lower.outerIndexPtr(), lower.outerIndexPtr() + rows + 1);
        m_factor.inner.assign(lower.innerIndexPtr(), lower.innerIndexPtr() + lower.nonZeros());
        m_factor.values.assign(lower.valuePtr(), lower.valuePtr() + lower.nonZeros());
        m_factor.inv_diagonal.resize(std::size_t(rows));
        for (int j = 0; j < rows; ++j)
            m_factor.inv_diagonal[std::size_t(j)] = 1.0 / lower.valuePtr()[lower.outerIndexPtr()[j]];
        m_factor.permutation.assign(permutation, permutation + rows);
        // Rows straight in the factor's order: the solve then reads and writes them in place.
        for (auto& r : row)
            if (r >= 0)
                r = permutation[r];
        m_row = std::move(row);
        m_free = free;
        m_h = h;
        m_with_bending = bending != nullptr;
        m_work.assign(3 * std::size_t(rows), 0.0);
    }

    /// Whether this factor was made for these free particles, this step and this bending choice.
    bool fits(const std::vector<bool>& free, double h, bool with_bending) const
    {
        return m_h == h && m_with_bending == with_bending && m_free == free;
    }

    /// z = A^-1 r on the free particles; z is 0 on the others.
    void solve(const std::vector<Eigen::Vector3d>& r, std::vector<Eigen::Vector3d>& z)
    {
        z.resize(r.size());
        for (std::size_t v = 0; v < r.size(); ++v)
            if (const auto row = m_row[v]; row >= 0)
                for (int c = 0; c < 3; ++c)
                    m_work[3 * std::size_t(row) + std::size_t(c)] = r[v][c];
        m_factor.solve(m_work);
        for (std::size_t v = 0; v < r.size(); ++v)
            if (const auto row = m_row[v]; row >= 0)
                z[v] = Eigen::Vector3d(m_work[3 * std::size_t(row)], m_work[3 * std::size_t(row) + 1],
                                       m_work[3 * std::size_t(row) + 2]);
            else
                z[v].setZero();
    }

    std::size_t entries() const noexcept { return m_factor.values.size(); }

  private:
    CholeskyFactor m_factor;
    std::vector<std::int32_t> m_row; ///< particle -> row of the factor in its order, -1 not free
    std::vector<bool> m_free;
    double m_h = 0.0;
    bool m_with_bending = false;
    std::vector<double> m_work;
};

} // namespace simdverlet::detail
