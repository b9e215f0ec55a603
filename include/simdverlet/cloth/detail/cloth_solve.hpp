// The implicit cloth solve: what holds a cloth made with a ClothMaterial. The step's Verlet
// prediction y (inertia and gravity) is moved toward the minimum of
//   E(x) = sum_i m_i / (2 h^2) |x_i - y_i|^2 + sum_edges k_e / 2 |x_a - x_b - p_e|^2 + E_bend(x),
// p_e the edge brought to its rest length along itself and E_bend the bending (cloth_bending.hpp):
// one local-global (projective dynamics) iteration of implicit Euler. Its matrix
// M / h^2 + sum_e k_e G_e^T G_e + sum_i W_i L_i^T L_i is
// symmetric positive definite for every h and k and stays the same from step to step, so it is
// factored once and each step costs two triangular solves; and since every step lowers E, the
// springs cannot feed energy into the cloth however stiff they are or however short its edges:
// stable by construction, where the explicit solve of simulation.hpp needs h < 2 sqrt(m / k).
// The solve spreads each step's load across the whole cloth at once, so a sheet hung from two
// corners holds its length far from the pins. docs/decisions.md compares it with the local
// methods measured against it. Registered as a position projection named after its cloth.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>

#include "simdverlet/cloth/detail/cloth_bending.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet::detail
{

/// One spring of the solve, between two particles counted from the cloth's base.
template <class T>
struct SolveEdge
{
    std::int32_t a, b;
    T rest;      ///< world units
    T stiffness; ///< N/m
};

/// The lower Cholesky factor of P A P^T, column by column (compressed sparse columns), and P.
/// The three coordinates are solved together, interleaved, so each entry is read once for all
/// three: half the time of three separate solves.
struct CholeskyFactor
{
    std::vector<int> outer, inner, permutation;
    std::vector<double> values;

    std::size_t rows() const noexcept { return permutation.size(); }

    /// Solves L L^T u = u in place for three interleaved right-hand sides in the factor's order.
    void solve(std::vector<double>& u) const
    {
        const std::size_t n = rows();
        for (std::size_t j = 0; j < n; ++j)
        {
            const double inv = 1.0 / values[std::size_t(outer[j])];
            const double a = u[3 * j] * inv, b = u[3 * j + 1] * inv, c = u[3 * j + 2] * inv;
            u[3 * j] = a;
            u[3 * j + 1] = b;
            u[3 * j + 2] = c;
            for (auto q = std::size_t(outer[j]) + 1; q < std::size_t(outer[j + 1]); ++q)
            {
                const std::size_t i = 3 * std::size_t(inner[q]);
                u[i] -= values[q] * a;
                u[i + 1] -= values[q] * b;
                u[i + 2] -= values[q] * c;
            }
        }
        for (std::size_t j = n; j-- > 0;)
        {
            double a = u[3 * j], b = u[3 * j + 1], c = u[3 * j + 2];
            for (auto q = std::size_t(outer[j]) + 1; q < std::size_t(outer[j + 1]); ++q)
            {
                const std::size_t i = 3 * std::size_t(inner[q]);
                a -= values[q] * u[i];
                b -= values[q] * u[i + 1];
                c -= values[q] * u[i + 2];
            }
            const double inv = 1.0 / values[std::size_t(outer[j])];
            u[3 * j] = a * inv;
            u[3 * j + 1] = b * inv;
            u[3 * j + 2] = c * inv;
        }
    }
};

template <class T>
struct ClothSolveData
{
    std::size_t base = 0, count = 0;
    std::vector<SolveEdge<T>> edges;
    BendStencils bending; ///< the material's bending rigidity (cloth_bending.hpp)
    std::vector<T> mass;  ///< per particle of the cloth, kg
    T damping = T(0);     ///< 1/s

    /// Which particles are free, and the h, the factor was made for: pinning or a new dt refactors.
    std::vector<std::int32_t> row_of; ///< particle -> row of the factor in its order, -1 pinned
    T factored_h = T(0);
    CholeskyFactor factor;
    std::vector<double> work;
    std::vector<Eigen::Vector3d> normals; ///< each particle's at the prediction, for the bending
};

/// Factors M / h^2 + sum_e k_e G_e^T G_e over the free particles. In double whatever T: M / h^2
/// is about 10^-3 of a 2 cm edge's stiffness at 60 Hz, so in float the matrix would sit within
/// rounding of the springs' null space (rigid translation) and the cloth would drift.
template <class T>
void factor_cloth(ClothSolveData<T>& d, const T* w, T h)
{
    std::vector<std::int32_t> row(d.count, -1);
    int rows = 0;
    for (std::size_t v = 0; v < d.count; ++v)
        if (w[v] != T(0))
            row[v] = rows++;
    std::vector<Eigen::Triplet<double>> entries;
    entries.reserve(d.count + 4 * d.edges.size() + 49 * d.bending.size());
    const double inv_h2 = 1.0 / (double(h) * double(h));
    for (std::size_t v = 0; v < d.count; ++v)
        if (row[v] >= 0)
            entries.emplace_back(row[v], row[v], double(d.mass[v]) * inv_h2);
    for (const auto& e : d.edges)
    {
        const auto ra = row[std::size_t(e.a)], rb = row[std::size_t(e.b)];
        const double k = double(e.stiffness);
        if (ra >= 0)
            entries.emplace_back(ra, ra, k);
        if (rb >= 0)
            entries.emplace_back(rb, rb, k);
        if (ra >= 0 && rb >= 0)
        {
            entries.emplace_back(ra, rb, -k);
            entries.emplace_back(rb, ra, -k);
        }
    }
    // The bending's W L^T L (cloth_bending.hpp): its energy is quadratic with the normal held, so
    // the whole of it goes into the matrix and the step holds it as it holds the stretch. Its
    // stencil reaches two rings, which makes the factor about three times larger.
    for (std::size_t s = 0; s < d.bending.size(); ++s)
        for (auto a = d.bending.first[s]; a < d.bending.first[s + 1]; ++a)
            if (const auto ra = row[std::size_t(d.bending.particle[a])]; ra >= 0)
                for (auto b = d.bending.first[s]; b < d.bending.first[s + 1]; ++b)
                    if (const auto rb = row[std::size_t(d.bending.particle[b])]; rb >= 0)
                        entries.emplace_back(ra, rb,
                                             d.bending.weight[s] * d.bending.coefficient[a] * d.bending.coefficient[b]);
    Eigen::SparseMatrix<double> matrix(rows, rows);
    matrix.setFromTriplets(entries.begin(), entries.end());
    const Eigen::SimplicialLLT<Eigen::SparseMatrix<double>> cholesky(matrix);
    const auto& lower = cholesky.matrixL().nestedExpression();
    const int* permutation = cholesky.permutationP().indices().data();
    d.factor.outer.assign(lower.outerIndexPtr(), lower.outerIndexPtr() + rows + 1);
    d.factor.inner.assign(lower.innerIndexPtr(), lower.innerIndexPtr() + lower.nonZeros());
    d.factor.values.assign(lower.valuePtr(), lower.valuePtr() + lower.nonZeros());
    d.factor.permutation.assign(permutation, permutation + rows);
    // Rows straight in the factor's order: the solve then reads and writes them in place.
    for (auto& r : row)
        if (r >= 0)
            r = permutation[r];
    d.row_of = std::move(row);
    d.factored_h = h;
    d.work.assign(3 * std::size_t(rows), 0.0);
}

template <class T>
bool factor_fits(const ClothSolveData<T>& d, const T* w, T h)
{
    if (d.factored_h != h || d.row_of.size() != d.count)
        return false;
    for (std::size_t v = 0; v < d.count; ++v)
        if ((d.row_of[v] < 0) != (w[v] == T(0)))
            return false;
    return true;
}

/// The bending's share of the right-hand side at the prediction: each stencil's pull toward its
/// rest curvature along its vertex's normal, -W L^T n (n . L y - rest).
template <class T>
void add_bending_pull(ClothSolveData<T>& d, const T* x, const T* y, const T* z, std::vector<double>& u)
{
    const BendStencils& bend = d.bending;
    if (bend.size() == 0)
        return;
    vertex_normals(
        bend.triangles, d.count,
        [&](std::size_t k) { return Eigen::Vector3d(double(x[k]), double(y[k]), double(z[k])); }, d.normals);
    for (std::size_t s = 0; s < bend.size(); ++s)
    {
        double l[3] = {0.0, 0.0, 0.0};
        for (auto a = bend.first[s]; a < bend.first[s + 1]; ++a)
        {
            const auto v = std::size_t(bend.particle[a]);
            l[0] += bend.coefficient[a] * double(x[v]);
            l[1] += bend.coefficient[a] * double(y[v]);
            l[2] += bend.coefficient[a] * double(z[v]);
        }
        const Eigen::Vector3d& n = d.normals[bend.centre(s)];
        const double scale = -bend.weight[s] * (n[0] * l[0] + n[1] * l[1] + n[2] * l[2] - bend.rest[s]);
        for (auto a = bend.first[s]; a < bend.first[s + 1]; ++a)
            if (const auto r = d.row_of[std::size_t(bend.particle[a])]; r >= 0)
                for (std::size_t c = 0; c < 3; ++c)
                    u[3 * std::size_t(r) + c] += bend.coefficient[a] * scale * n[c];
    }
}

/// Damping as a rate: the step's displacement keeps exp(-damping h) of itself.
template <class T>
void run_damping(const ClothSolveData<T>& d, State3<T>& state, T h)
{
    if (!(d.damping > T(0)))
        return;
    const T keep = std::exp(-d.damping * h);
    const T* w = state.inv_mass().data() + d.base;
    T* x = state.x().data() + d.base;
    T* y = state.y().data() + d.base;
    T* z = state.z().data() + d.base;
    const T* px = state.px().data() + d.base;
    const T* py = state.py().data() + d.base;
    const T* pz = state.pz().data() + d.base;
    for (std::size_t v = 0; v < d.count; ++v)
        if (w[v] != T(0))
        {
            x[v] = px[v] + keep * (x[v] - px[v]);
            y[v] = py[v] + keep * (y[v] - py[v]);
            z[v] = pz[v] + keep * (z[v] - pz[v]);
        }
}

/// The projection: the cloth's positions are the prediction y on entry and the implicit step's
/// on exit. From x = y the inertia term's gradient is zero, so the right-hand side is the pull of
/// every spring toward its rest length, sum_e k_e G_e^T (p_e - G_e y); the solve gives the move.
template <class T>
void run_cloth_solve(ClothSolveData<T>& d, State3<T>& state, T h)
{
    T* x = state.x().data() + d.base;
    T* y = state.y().data() + d.base;
    T* z = state.z().data() + d.base;
    const T* w = state.inv_mass().data() + d.base;
    run_damping(d, state, h);
    if (!factor_fits(d, w, h))
        factor_cloth(d, w, h);
    if (d.factor.rows() == 0)
        return;
    std::vector<double>& u = d.work;
    std::fill(u.begin(), u.end(), 0.0);
    for (const auto& e : d.edges)
    {
        const std::size_t a = std::size_t(e.a), b = std::size_t(e.b);
        const double dx = double(x[a]) - double(x[b]), dy = double(y[a]) - double(y[b]),
                     dz = double(z[a]) - double(z[b]);
        const double length = std::sqrt(dx * dx + dy * dy + dz * dz);
        // k (p_e - (y_a - y_b)); a spring of zero length has no direction to restore along
        const double s = length > 0.0 ? double(e.rest) / length - 1.0 : 0.0;
        const double k = double(e.stiffness);
        const double f[3] = {k * s * dx, k * s * dy, k * s * dz};
        if (const auto r = d.row_of[a]; r >= 0)
            for (std::size_t c = 0; c < 3; ++c)
                u[3 * std::size_t(r) + c] += f[c];
        if (const auto r = d.row_of[b]; r >= 0)
            for (std::size_t c = 0; c < 3; ++c)
                u[3 * std::size_t(r) + c] -= f[c];
    }
    add_bending_pull(d, x, y, z, u);
    d.factor.solve(u);
    for (std::size_t v = 0; v < d.count; ++v)
        if (const auto r = d.row_of[v]; r >= 0)
        {
            x[v] += T(u[3 * std::size_t(r)]);
            y[v] += T(u[3 * std::size_t(r) + 1]);
            z[v] += T(u[3 * std::size_t(r) + 2]);
        }
}

template <class T>
std::shared_ptr<ClothSolveData<T>> add_cloth_solve(Simulation<T>& sim, std::shared_ptr<ClothSolveData<T>> data,
                                                   const std::string& name)
{
    sim.add_position_projection(name, [data](State3<T>& state, T dt) { run_cloth_solve(*data, state, dt); });
    return data;
}

} // namespace simdverlet::detail
