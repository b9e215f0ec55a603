// The implicit cloth solve: what holds a cloth made with a ClothMaterial. The step's Verlet
// prediction y (inertia and gravity) is moved toward the minimum of
//   E(x) = sum_i m_i / (2 h^2) |x_i - y_i|^2 + sum_edges k_e / 2 |x_a - x_b - p_e|^2,
// p_e the edge brought to its rest length along itself: one local-global (projective dynamics)
// iteration of implicit Euler on the cloth's springs. Its matrix M / h^2 + sum_e k_e G_e^T G_e is
// symmetric positive definite for every h and k and stays the same from step to step, so it is
// factored once and each step costs two triangular solves; and since every step lowers E, the
// springs cannot feed energy into the cloth however stiff they are or however short its edges:
// stable by construction, where the explicit solve of simulation.hpp needs h < 2 sqrt(m / k).
// The solve spreads each step's load across the whole cloth at once, so a sheet hung from two
// corners holds its length far from the pins. docs/decisions.md compares it with the local
// methods measured against it. Registered as a position projection named after its cloth.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>

#include "cloth_bending.hpp"
#include "simulation.hpp"
#include "state.hpp"

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
    std::vector<double> work, normals;
    bool newton = false; ///< PROTOTYPE: the Newton step instead (namespace newton)
    std::vector<double> residual, start, move, trial;
    std::array<std::vector<double>, 3> scratch;
    std::uint64_t solves = 0, iterations = 0;
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

/// Each particle's unit normal at (x, y, z), its triangles' normals summed by area.
template <class T>
void vertex_normals(ClothSolveData<T>& d, const T* x, const T* y, const T* z)
{
    d.normals.assign(3 * d.count, 0.0);
    for (const auto& t : d.bending.triangles)
    {
        const auto a = std::size_t(t[0]), b = std::size_t(t[1]), c = std::size_t(t[2]);
        const double u[3] = {double(x[b]) - double(x[a]), double(y[b]) - double(y[a]), double(z[b]) - double(z[a])};
        const double v[3] = {double(x[c]) - double(x[a]), double(y[c]) - double(y[a]), double(z[c]) - double(z[a])};
        const double twice_area[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        for (const std::int32_t k : t)
            for (std::size_t i = 0; i < 3; ++i)
                d.normals[3 * std::size_t(k) + i] += twice_area[i];
    }
    for (std::size_t v = 0; v < d.count; ++v)
    {
        double* n = &d.normals[3 * v];
        const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (std::size_t i = 0; i < 3; ++i)
            n[i] = length > 0.0 ? n[i] / length : 0.0;
    }
}

/// The bending's share of the right-hand side at the prediction: each stencil's pull toward its
/// rest curvature along its vertex's normal, -W L^T n (n . L y - rest).
template <class T>
void add_bending_pull(ClothSolveData<T>& d, const T* x, const T* y, const T* z, std::vector<double>& u)
{
    const BendStencils& bend = d.bending;
    if (bend.size() == 0)
        return;
    vertex_normals(d, x, y, z);
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
        const double* n = &d.normals[3 * std::size_t(bend.centre[s])];
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

namespace newton
{
// PROTOTYPE, measured against the projective-dynamics step (bench/garment.cpp, method 2): one
// Newton step of implicit Euler from the gravity-free prediction, solved by conjugate gradients
// preconditioned with the projective-dynamics factor, and a line search.
/// The cloth's positions in double, 3 per particle of the cloth (x, y, z interleaved).
using Positions = std::vector<double>;

/// Where the Newton step starts: the prediction without the step's gravity, x_n + damped v h
/// (a pinned particle where it is). Gravity then enters as the force M g, so a cloth at rest in
/// balance starts at its answer and the step moves nothing. From the prediction itself every edge
/// from a pinned particle to a free one would start turned by g h^2 / length, and a stiff cloth
/// would settle a hinge short of its balance (docs/decisions.md).
template <class T>
void newton_start(const ClothSolveData<T>& d, const State3<T>& state, const Vec3<T>& gravity, T h, Positions& start)
{
    const T* w = state.inv_mass().data() + d.base;
    const double h2 = double(h) * double(h);
    start.resize(3 * d.count);
    for (std::size_t v = 0; v < d.count; ++v)
    {
        const Vec3<T> p = state.position(d.base + v);
        const double fall = w[v] != T(0) ? h2 : 0.0;
        for (int c = 0; c < 3; ++c)
            start[3 * v + std::size_t(c)] = double(p[c]) - fall * double(gravity[c]);
    }
}

/// The unit normal of each particle of the cloth at `at`, its triangles' normals summed by area: the
/// direction the bending measures curvature along, held through the step (cloth_bending.hpp).
template <class T>
void vertex_normals(ClothSolveData<T>& d, const Positions& at)
{
    d.normals.assign(3 * d.count, 0.0);
    for (const auto& t : d.bending.triangles)
    {
        const double* a = &at[3 * std::size_t(t[0])];
        const double* b = &at[3 * std::size_t(t[1])];
        const double* c = &at[3 * std::size_t(t[2])];
        const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        const double twice_area[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        for (const std::int32_t k : t)
            for (std::size_t i = 0; i < 3; ++i)
                d.normals[3 * std::size_t(k) + i] += twice_area[i];
    }
    for (std::size_t v = 0; v < d.count; ++v)
    {
        double* n = &d.normals[3 * v];
        const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (std::size_t i = 0; i < 3; ++i)
            n[i] = length > 0.0 ? n[i] / length : 0.0;
    }
}

/// Adds sign x f (3 doubles) to particle v's row of u, when v is free.
template <class T>
void add_to_row(const ClothSolveData<T>& d, std::size_t v, const double* f, double sign, std::vector<double>& u)
{
    if (const auto r = d.row_of[v]; r >= 0)
        for (std::size_t c = 0; c < 3; ++c)
            u[3 * std::size_t(r) + c] += sign * f[c];
}

/// Stencil s's Laplacian (L x)_s of the positions `at` (3 per particle) along the normal held for
/// the step, n . (L x)_s: twice the mean curvature times the vertex's area.
template <class T>
double normal_curvature(const ClothSolveData<T>& d, std::size_t s, const double* at, const std::int32_t* row_of)
{
    const BendStencils& bend = d.bending;
    double l[3] = {0.0, 0.0, 0.0};
    for (auto a = bend.first[s]; a < bend.first[s + 1]; ++a)
    {
        const auto v = std::size_t(bend.particle[a]);
        const std::ptrdiff_t at_row = row_of ? row_of[v] : std::ptrdiff_t(v);
        if (at_row < 0)
            continue;
        for (std::size_t c = 0; c < 3; ++c)
            l[c] += bend.coefficient[a] * at[3 * std::size_t(at_row) + c];
    }
    const double* n = &d.normals[3 * std::size_t(bend.centre[s])];
    return n[0] * l[0] + n[1] * l[1] + n[2] * l[2];
}

/// Adds scale x L_s^T n to u: a bending stencil's force or Hessian column along its normal.
template <class T>
void add_along_normal(const ClothSolveData<T>& d, std::size_t s, double scale, std::vector<double>& u)
{
    const BendStencils& bend = d.bending;
    const double* n = &d.normals[3 * std::size_t(bend.centre[s])];
    for (auto a = bend.first[s]; a < bend.first[s + 1]; ++a)
    {
        const double c = bend.coefficient[a] * scale;
        const double f[3] = {c * n[0], c * n[1], c * n[2]};
        add_to_row(d, std::size_t(bend.particle[a]), f, 1.0, u);
    }
}

/// Adds -grad g at `at` to u (over the free rows): the inertia's M / h^2 (y - at), each spring's
/// pull toward its rest length, each bending stencil's toward its rest curvature along its normal.
template <class T>
void add_forces(const ClothSolveData<T>& d, const State3<T>& state, const Positions& at, T h, std::vector<double>& u)
{
    const double inv_h2 = 1.0 / (double(h) * double(h));
    for (std::size_t v = 0; v < d.count; ++v)
    {
        const Vec3<T> y = state.position(d.base + v);
        const double m = double(d.mass[v]) * inv_h2;
        const double f[3] = {m * (double(y.x()) - at[3 * v]), m * (double(y.y()) - at[3 * v + 1]),
                             m * (double(y.z()) - at[3 * v + 2])};
        add_to_row(d, v, f, 1.0, u);
    }
    for (const auto& e : d.edges)
    {
        const std::size_t a = std::size_t(e.a), b = std::size_t(e.b);
        const double dx = at[3 * a] - at[3 * b], dy = at[3 * a + 1] - at[3 * b + 1], dz = at[3 * a + 2] - at[3 * b + 2];
        const double length = std::sqrt(dx * dx + dy * dy + dz * dz);
        // A spring of zero length has no direction to restore along.
        const double s = length > 0.0 ? double(e.stiffness) * (double(e.rest) / length - 1.0) : 0.0;
        const double f[3] = {s * dx, s * dy, s * dz};
        add_to_row(d, a, f, 1.0, u);
        add_to_row(d, b, f, -1.0, u);
    }
    for (std::size_t s = 0; s < d.bending.size(); ++s)
        add_along_normal(d, s, -d.bending.weight[s] * (normal_curvature(d, s, at.data(), nullptr) - d.bending.rest[s]),
                         u);
}

/// The Newton step's matrix times p, over the free rows: M / h^2; each spring at `at` stiff along
/// itself (k) and across itself only as far as it is stretched (k (1 - rest / length), none when
/// slack), the Hessian made positive where a spring is compressed; each bending stencil
/// W L^T n n^T L.
template <class T>
void apply_newton_matrix(const ClothSolveData<T>& d, const Positions& at, T h, const std::vector<double>& p,
                         std::vector<double>& q)
{
    const double inv_h2 = 1.0 / (double(h) * double(h));
    std::fill(q.begin(), q.end(), 0.0);
    const auto value = [&](std::size_t v, std::size_t c) {
        const auto r = d.row_of[v];
        return r >= 0 ? p[3 * std::size_t(r) + c] : 0.0;
    };
    for (std::size_t v = 0; v < d.count; ++v)
        if (const auto r = d.row_of[v]; r >= 0)
            for (std::size_t c = 0; c < 3; ++c)
                q[3 * std::size_t(r) + c] = double(d.mass[v]) * inv_h2 * p[3 * std::size_t(r) + c];
    for (const auto& e : d.edges)
    {
        const std::size_t a = std::size_t(e.a), b = std::size_t(e.b);
        double n[3] = {at[3 * a] - at[3 * b], at[3 * a + 1] - at[3 * b + 1], at[3 * a + 2] - at[3 * b + 2]};
        const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(length > 0.0))
            continue;
        for (double& c : n)
            c /= length;
        const double dp[3] = {value(a, 0) - value(b, 0), value(a, 1) - value(b, 1), value(a, 2) - value(b, 2)};
        const double k = double(e.stiffness), across = k * std::max(0.0, 1.0 - double(e.rest) / length);
        const double along = (k - across) * (n[0] * dp[0] + n[1] * dp[1] + n[2] * dp[2]);
        const double f[3] = {across * dp[0] + along * n[0], across * dp[1] + along * n[1],
                             across * dp[2] + along * n[2]};
        add_to_row(d, a, f, 1.0, q);
        add_to_row(d, b, f, -1.0, q);
    }
    for (std::size_t s = 0; s < d.bending.size(); ++s)
        add_along_normal(d, s, d.bending.weight[s] * normal_curvature(d, s, p.data(), d.row_of.data()), q);
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b)
{
    double sum = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i)
        sum += a[i] * b[i];
    return sum;
}

/// At most this many conjugate-gradient iterations a Newton step; they stop once the residual
/// force is down to this share of the first.
inline constexpr int kMaxSolveIterations = 64;
inline constexpr double kSolveTolerance = 0.01;

/// Solves the Newton system for `move` (free rows) from the right-hand side r (overwritten with
/// the residual) by preconditioned conjugate gradients from zero. The first iteration is the
/// projective-dynamics step at its best length; the next find how far the cloth turns.
template <class T>
void conjugate_gradients(ClothSolveData<T>& d, const Positions& at, T h, std::vector<double>& r,
                         std::vector<double>& move)
{
    auto& [z, p, q] = d.scratch;
    z = r;
    d.factor.solve(z);
    p = z;
    q.resize(r.size());
    move.assign(r.size(), 0.0);
    double rz = dot(r, z);
    const double first = dot(r, r);
    for (int it = 0; it < kMaxSolveIterations && rz > 0.0; ++it)
    {
        apply_newton_matrix(d, at, h, p, q);
        ++d.iterations;
        const double pq = dot(p, q);
        if (!(pq > 0.0))
            break;
        const double alpha = rz / pq;
        for (std::size_t i = 0; i < r.size(); ++i)
        {
            move[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        if (dot(r, r) < kSolveTolerance * kSolveTolerance * first)
            break;
        z = r;
        d.factor.solve(z);
        const double next = dot(r, z);
        const double beta = next / rz;
        rz = next;
        for (std::size_t i = 0; i < r.size(); ++i)
            p[i] = z[i] + beta * p[i];
    }
}

/// g at `at` + alpha `move` (move over the free rows), the normals held; `trial` is scratch.
template <class T>
double objective(const ClothSolveData<T>& d, const State3<T>& state, const Positions& at,
                 const std::vector<double>& move, double alpha, T h, Positions& trial)
{
    trial = at;
    for (std::size_t v = 0; v < d.count; ++v)
        if (const auto r = d.row_of[v]; r >= 0)
            for (std::size_t c = 0; c < 3; ++c)
                trial[3 * v + c] += alpha * move[3 * std::size_t(r) + c];
    const double inv_h2 = 1.0 / (double(h) * double(h));
    double g = 0.0;
    for (std::size_t v = 0; v < d.count; ++v)
    {
        const Vec3<T> y = state.position(d.base + v);
        double distance2 = 0.0;
        for (std::size_t c = 0; c < 3; ++c)
            distance2 += (trial[3 * v + c] - double(y[int(c)])) * (trial[3 * v + c] - double(y[int(c)]));
        g += 0.5 * double(d.mass[v]) * inv_h2 * distance2;
    }
    for (const auto& e : d.edges)
    {
        const std::size_t a = std::size_t(e.a), b = std::size_t(e.b);
        const double dx = trial[3 * a] - trial[3 * b], dy = trial[3 * a + 1] - trial[3 * b + 1],
                     dz = trial[3 * a + 2] - trial[3 * b + 2];
        const double stretch = std::sqrt(dx * dx + dy * dy + dz * dz) - double(e.rest);
        g += 0.5 * double(e.stiffness) * stretch * stretch;
    }
    for (std::size_t s = 0; s < d.bending.size(); ++s)
    {
        const double off = normal_curvature(d, s, trial.data(), nullptr) - d.bending.rest[s];
        g += 0.5 * d.bending.weight[s] * off * off;
    }
    return g;
}

/// How far along `move` the step goes: the whole of it unless that fails to lower g (Armijo), then
/// halved until it does, down to 1/64. A full Newton step of a stiff cloth that turns far in one
/// substep can overshoot; this keeps every step downhill.
template <class T>
double step_length(ClothSolveData<T>& d, const State3<T>& state, const std::vector<double>& rhs, T h)
{
    const double start = objective(d, state, d.start, d.move, 0.0, h, d.trial);
    const double slope = -dot(rhs, d.move);
    double alpha = 1.0;
    while (alpha > 1.0 / 64 && objective(d, state, d.start, d.move, alpha, h, d.trial) > start + 1e-4 * alpha * slope)
        alpha /= 2;
    return alpha;
}

/// The projection: the cloth's positions are the Verlet prediction y on entry and the implicit
/// Euler step's on exit.
template <class T>
void run_newton_solve(ClothSolveData<T>& d, State3<T>& state, T h, const Vec3<T>& gravity)
{
    const T* w = state.inv_mass().data() + d.base;
    if (!factor_fits(d, w, h))
        factor_cloth(d, w, h);
    if (d.factor.rows() == 0)
        return;
    newton_start(d, state, gravity, h, d.start);
    vertex_normals(d, d.start);
    ++d.solves;
    std::vector<double>& rhs = d.work;
    std::fill(rhs.begin(), rhs.end(), 0.0);
    add_forces(d, state, d.start, h, rhs);
    d.residual = rhs;
    conjugate_gradients(d, d.start, h, d.residual, d.move);
    const double alpha = step_length(d, state, rhs, h);
    T* x = state.x().data() + d.base;
    T* y = state.y().data() + d.base;
    T* z = state.z().data() + d.base;
    for (std::size_t v = 0; v < d.count; ++v)
        if (const auto row = d.row_of[v]; row >= 0)
        {
            x[v] = T(d.start[3 * v] + alpha * d.move[3 * std::size_t(row)]);
            y[v] = T(d.start[3 * v + 1] + alpha * d.move[3 * std::size_t(row) + 1]);
            z[v] = T(d.start[3 * v + 2] + alpha * d.move[3 * std::size_t(row) + 2]);
        }
}

} // namespace newton

template <class T>
std::shared_ptr<ClothSolveData<T>> add_cloth_solve(Simulation<T>& sim, std::shared_ptr<ClothSolveData<T>> data,
                                                   const std::string& name)
{
    sim.add_position_projection(name, [data, world = world_of(sim).get()](State3<T>& state, T dt) {
        if (data->newton)
        {
            run_damping(*data, state, dt);
            newton::run_newton_solve(*data, state, dt, world->call_progress().gravity);
        }
        else
            run_cloth_solve(*data, state, dt);
    });
    return data;
}

} // namespace simdverlet::detail
