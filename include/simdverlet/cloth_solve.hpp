// The implicit cloth solve: what holds a cloth made with a ClothMaterial. After the step's Verlet
// prediction y (inertia and gravity), it moves the cloth's particles toward the minimum of
//   E(x) = sum_i m_i / (2 h^2) |x_i - y_i|^2 + sum_edges k_e / 2 (|x_a - x_b| - L_e)^2,
// one implicit Euler step of the cloth's springs. That minimum exists for every h and every k, so
// the step cannot gain energy from the springs however stiff they are or however short the edges:
// stable by construction, where the explicit solve of simulation.hpp needs h < 2 sqrt(m / k).
// Registered as a position projection before the colliders, named after its cloth.
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

#include "simulation.hpp"
#include "state.hpp"

namespace simdverlet::detail
{

/// One spring of the solve, between two particles counted from the cloth's base.
template <class T>
struct SolveEdge
{
    std::int32_t a, b;
    T rest, stiffness; ///< world units; N/m
};

enum class ClothSolveMethod
{
    block_descent, ///< vertex block descent: a Newton step per vertex, Gauss-Seidel over vertex colours
    xpbd,          ///< compliant constraints, Gauss-Seidel over edge colours
    projective,    ///< local-global projective dynamics on a prefactored sparse Cholesky
};

/// Greedy colouring: items sharing a vertex get different colours. Returns the items sorted by
/// colour and where each colour starts.
inline void colour_items(std::size_t vertices, const std::vector<std::vector<std::int32_t>>& touches,
                         std::vector<std::int32_t>& order, std::vector<std::int32_t>& starts)
{
    std::vector<std::uint64_t> used(vertices, 0); // per vertex, a bit per colour it already touches
    std::vector<int> colour(touches.size());
    int colours = 0;
    for (std::size_t k = 0; k < touches.size(); ++k)
    {
        std::uint64_t busy = 0;
        for (const auto v : touches[k])
            busy |= used[std::size_t(v)];
        int c = 0;
        while (c < 63 && (busy >> c & 1u))
            ++c;
        colour[k] = c;
        colours = std::max(colours, c + 1);
        for (const auto v : touches[k])
            used[std::size_t(v)] |= std::uint64_t(1) << c;
    }
    starts.assign(std::size_t(colours) + 1, 0);
    for (const int c : colour)
        ++starts[std::size_t(c) + 1];
    for (int c = 0; c < colours; ++c)
        starts[std::size_t(c) + 1] += starts[std::size_t(c)];
    order.assign(touches.size(), 0);
    std::vector<std::int32_t> at(starts.begin(), starts.end() - 1);
    for (std::size_t k = 0; k < touches.size(); ++k)
        order[std::size_t(at[std::size_t(colour[k])]++)] = std::int32_t(k);
}

template <class T>
struct ClothSolveData
{
    std::size_t base = 0, count = 0;
    std::vector<SolveEdge<T>> edges;
    std::vector<T> mass; ///< per particle of the cloth, kg
    T damping = T(0);    ///< 1/s
    int iterations = 4;
    ClothSolveMethod method = ClothSolveMethod::block_descent;

    // vertex -> its edges (CSR), and vertices / edges grouped by colour
    std::vector<std::int32_t> edge_start, edge_of;
    std::vector<std::int32_t> vertex_order, vertex_colours;
    std::vector<std::int32_t> edge_order, edge_colours;

    std::vector<T> yx, yy, yz, lambda; // scratch

    // projective dynamics: the factor of M / h^2 + L for the free particles, for one h and pin set
    // In double whatever T: M / h^2 is 10^-4 of a 2 cm edge's stiffness, so the matrix is within
    // float's rounding of the Laplacian's null space (rigid translation).
    using Matrix = Eigen::SparseMatrix<double>;
    // L of P A P^T = L L^T, column by column, and P; the three coordinates are solved together,
    // interleaved, so each entry of L is read once for all three.
    std::vector<int> outer, inner, permutation;
    std::vector<double> values, work;
    bool factored = false;
    std::vector<std::int32_t> row_of; ///< particle -> row, -1 pinned
    T factored_h = T(0);

    void build_tables()
    {
        std::vector<std::int32_t> degree(count + 1, 0);
        for (const auto& e : edges)
        {
            ++degree[std::size_t(e.a) + 1];
            ++degree[std::size_t(e.b) + 1];
        }
        edge_start.assign(count + 1, 0);
        for (std::size_t v = 0; v < count; ++v)
            edge_start[v + 1] = edge_start[v] + degree[v + 1];
        edge_of.assign(std::size_t(edge_start[count]), 0);
        std::vector<std::int32_t> at(edge_start.begin(), edge_start.end() - 1);
        for (std::size_t k = 0; k < edges.size(); ++k)
        {
            edge_of[std::size_t(at[std::size_t(edges[k].a)]++)] = std::int32_t(k);
            edge_of[std::size_t(at[std::size_t(edges[k].b)]++)] = std::int32_t(k);
        }
        std::vector<std::vector<std::int32_t>> touches(edges.size());
        for (std::size_t k = 0; k < edges.size(); ++k)
            touches[k] = {edges[k].a, edges[k].b};
        colour_items(count, touches, edge_order, edge_colours);
        // A vertex's block step reads its neighbours: vertices joined by an edge differ in colour.
        std::vector<std::vector<std::int32_t>> neighbourhood(count);
        for (std::size_t v = 0; v < count; ++v)
        {
            neighbourhood[v].push_back(std::int32_t(v));
            for (auto k = edge_start[v]; k < edge_start[v + 1]; ++k)
            {
                const auto& e = edges[std::size_t(edge_of[std::size_t(k)])];
                neighbourhood[v].push_back(e.a == std::int32_t(v) ? e.b : e.a);
            }
        }
        // Colouring by the closed neighbourhood would make neighbours of neighbours differ too;
        // only the vertex and its direct neighbours must, so colour each vertex against the
        // colours its neighbours already took.
        std::vector<int> colour(count, -1);
        int colours = 0;
        for (std::size_t v = 0; v < count; ++v)
        {
            std::uint64_t busy = 0;
            for (std::size_t k = 1; k < neighbourhood[v].size(); ++k)
            {
                const int c = colour[std::size_t(neighbourhood[v][k])];
                if (c >= 0)
                    busy |= std::uint64_t(1) << c;
            }
            int c = 0;
            while (c < 63 && (busy >> c & 1u))
                ++c;
            colour[v] = c;
            colours = std::max(colours, c + 1);
        }
        vertex_colours.assign(std::size_t(colours) + 1, 0);
        for (const int c : colour)
            ++vertex_colours[std::size_t(c) + 1];
        for (int c = 0; c < colours; ++c)
            vertex_colours[std::size_t(c) + 1] += vertex_colours[std::size_t(c)];
        vertex_order.assign(count, 0);
        std::vector<std::int32_t> vat(vertex_colours.begin(), vertex_colours.end() - 1);
        for (std::size_t v = 0; v < count; ++v)
            vertex_order[std::size_t(vat[std::size_t(colour[v])]++)] = std::int32_t(v);
        yx.resize(count);
        yy.resize(count);
        yz.resize(count);
        lambda.resize(edges.size());
    }
};

/// One Newton step on vertex v's block of E with its neighbours held.
template <class T>
void block_step(ClothSolveData<T>& d, T* x, T* y, T* z, const T* w, std::size_t v, T inv_h2)
{
    if (w[v] == T(0))
        return;
    const T m = d.mass[v] * inv_h2;
    T gx = m * (x[v] - d.yx[v]), gy = m * (y[v] - d.yy[v]), gz = m * (z[v] - d.yz[v]);
    T hxx = m, hyy = m, hzz = m, hxy = 0, hxz = 0, hyz = 0;
    for (auto k = d.edge_start[v]; k < d.edge_start[v + 1]; ++k)
    {
        const auto& e = d.edges[std::size_t(d.edge_of[std::size_t(k)])];
        const std::size_t j = std::size_t(e.a) == v ? std::size_t(e.b) : std::size_t(e.a);
        const T dx = x[v] - x[j], dy = y[v] - y[j], dz = z[v] - z[j];
        const T l = std::sqrt(dx * dx + dy * dy + dz * dz);
        if (!(l > T(0)))
            continue;
        const T ux = dx / l, uy = dy / l, uz = dz / l;
        const T f = e.stiffness * (l - e.rest);
        gx += f * ux;
        gy += f * uy;
        gz += f * uz;
        // k (u u^T + (1 - L / l)(I - u u^T)), its transverse part clamped at 0 when compressed so
        // the block stays positive definite.
        const T c = std::max(T(0), T(1) - e.rest / l);
        const T along = e.stiffness * (T(1) - c), across = e.stiffness * c;
        hxx += along * ux * ux + across;
        hyy += along * uy * uy + across;
        hzz += along * uz * uz + across;
        hxy += along * ux * uy;
        hxz += along * ux * uz;
        hyz += along * uy * uz;
    }
    // Symmetric 3 x 3 inverse by cofactors.
    const T c00 = hyy * hzz - hyz * hyz, c01 = hxz * hyz - hxy * hzz, c02 = hxy * hyz - hxz * hyy;
    const T det = hxx * c00 + hxy * c01 + hxz * c02;
    if (!(det > T(0)))
        return;
    const T c11 = hxx * hzz - hxz * hxz, c12 = hxy * hxz - hxx * hyz, c22 = hxx * hyy - hxy * hxy;
    const T inv = T(1) / det;
    x[v] -= (c00 * gx + c01 * gy + c02 * gz) * inv;
    y[v] -= (c01 * gx + c11 * gy + c12 * gz) * inv;
    z[v] -= (c02 * gx + c12 * gy + c22 * gz) * inv;
}

template <class T>
void solve_block_descent(ClothSolveData<T>& d, T* x, T* y, T* z, const T* w, T h)
{
    const T inv_h2 = T(1) / (h * h);
    const std::size_t colours = d.vertex_colours.size() - 1;
    for (int it = 0; it < d.iterations; ++it)
        for (std::size_t c = 0; c < colours; ++c)
            for (auto k = d.vertex_colours[c]; k < d.vertex_colours[c + 1]; ++k)
                block_step(d, x, y, z, w, std::size_t(d.vertex_order[std::size_t(k)]), inv_h2);
}

template <class T>
void solve_xpbd(ClothSolveData<T>& d, T* x, T* y, T* z, const T* w, T h)
{
    std::fill(d.lambda.begin(), d.lambda.end(), T(0));
    const T inv_h2 = T(1) / (h * h);
    const std::size_t colours = d.edge_colours.size() - 1;
    for (int it = 0; it < d.iterations; ++it)
        for (std::size_t c = 0; c < colours; ++c)
            for (auto k = d.edge_colours[c]; k < d.edge_colours[c + 1]; ++k)
            {
                const std::size_t n = std::size_t(d.edge_order[std::size_t(k)]);
                const auto& e = d.edges[n];
                const std::size_t a = std::size_t(e.a), b = std::size_t(e.b);
                const T wa = w[a], wb = w[b];
                const T dx = x[a] - x[b], dy = y[a] - y[b], dz = z[a] - z[b];
                const T l = std::sqrt(dx * dx + dy * dy + dz * dz);
                if (!(l > T(0)) || wa + wb == T(0))
                    continue;
                const T alpha = inv_h2 / e.stiffness;
                const T dl = (e.rest - l - alpha * d.lambda[n]) / (wa + wb + alpha);
                d.lambda[n] += dl;
                const T s = dl / l;
                x[a] += wa * s * dx;
                y[a] += wa * s * dy;
                z[a] += wa * s * dz;
                x[b] -= wb * s * dx;
                y[b] -= wb * s * dy;
                z[b] -= wb * s * dz;
            }
}

template <class T>
void factor_projective(ClothSolveData<T>& d, const T* w, T h)
{
    d.row_of.assign(d.count, -1);
    std::int32_t rows = 0;
    for (std::size_t v = 0; v < d.count; ++v)
        if (w[v] != T(0))
            d.row_of[v] = rows++;
    std::vector<Eigen::Triplet<double>> entries;
    const double inv_h2 = 1.0 / (double(h) * double(h));
    for (std::size_t v = 0; v < d.count; ++v)
        if (d.row_of[v] >= 0)
            entries.emplace_back(d.row_of[v], d.row_of[v], double(d.mass[v]) * inv_h2);
    for (const auto& e : d.edges)
    {
        const auto ra = d.row_of[std::size_t(e.a)], rb = d.row_of[std::size_t(e.b)];
        if (ra >= 0)
            entries.emplace_back(ra, ra, double(e.stiffness));
        if (rb >= 0)
            entries.emplace_back(rb, rb, double(e.stiffness));
        if (ra >= 0 && rb >= 0)
        {
            entries.emplace_back(ra, rb, -double(e.stiffness));
            entries.emplace_back(rb, ra, -double(e.stiffness));
        }
    }
    typename ClothSolveData<T>::Matrix matrix(rows, rows);
    matrix.setFromTriplets(entries.begin(), entries.end());
    const Eigen::SimplicialLLT<typename ClothSolveData<T>::Matrix> factor(matrix);
    const auto& lower = factor.matrixL().nestedExpression();
    d.outer.assign(lower.outerIndexPtr(), lower.outerIndexPtr() + rows + 1);
    d.inner.assign(lower.innerIndexPtr(), lower.innerIndexPtr() + lower.nonZeros());
    d.values.assign(lower.valuePtr(), lower.valuePtr() + lower.nonZeros());
    d.permutation.assign(factor.permutationP().indices().data(), factor.permutationP().indices().data() + rows);
    d.factored = true;
    d.factored_h = h;
    d.work.assign(3 * std::size_t(rows), 0.0);
}

/// Solves L L^T u = work in place, three interleaved right-hand sides (the permuted rows).
inline void solve_factored(const std::vector<int>& outer, const std::vector<int>& inner,
                           const std::vector<double>& values, std::vector<double>& u)
{
    const std::size_t rows = outer.size() - 1;
    for (std::size_t j = 0; j < rows; ++j)
    {
        const double inv = 1.0 / values[std::size_t(outer[j])];
        const double a = u[3 * j] * inv, b = u[3 * j + 1] * inv, c = u[3 * j + 2] * inv;
        u[3 * j] = a;
        u[3 * j + 1] = b;
        u[3 * j + 2] = c;
        for (auto q = std::size_t(outer[j]) + 1; q < std::size_t(outer[j + 1]); ++q)
        {
            const std::size_t i = std::size_t(inner[q]);
            u[3 * i] -= values[q] * a;
            u[3 * i + 1] -= values[q] * b;
            u[3 * i + 2] -= values[q] * c;
        }
    }
    for (std::size_t j = rows; j-- > 0;)
    {
        double a = u[3 * j], b = u[3 * j + 1], c = u[3 * j + 2];
        for (auto q = std::size_t(outer[j]) + 1; q < std::size_t(outer[j + 1]); ++q)
        {
            const std::size_t i = std::size_t(inner[q]);
            a -= values[q] * u[3 * i];
            b -= values[q] * u[3 * i + 1];
            c -= values[q] * u[3 * i + 2];
        }
        const double inv = 1.0 / values[std::size_t(outer[j])];
        u[3 * j] = a * inv;
        u[3 * j + 1] = b * inv;
        u[3 * j + 2] = c * inv;
    }
}

template <class T>
void solve_projective(ClothSolveData<T>& d, T* x, T* y, T* z, const T* w, T h)
{
    bool same_pins = d.factored && d.factored_h == h;
    for (std::size_t v = 0; same_pins && v < d.count; ++v)
        same_pins = (d.row_of[v] < 0) == (w[v] == T(0));
    if (!same_pins)
        factor_projective(d, w, h);
    // Solved for the move from the iterate, A u = -grad E(x): the move is small beside the
    // positions, so the solve's rounding scales with the move, not with where the cloth is.
    const double inv_h2 = 1.0 / (double(h) * double(h));
    std::vector<double>& u = d.work;
    const auto row = [&](std::size_t v) { return 3 * std::size_t(d.permutation[std::size_t(d.row_of[v])]); };
    for (int it = 0; it < d.iterations; ++it)
    {
        for (std::size_t v = 0; v < d.count; ++v)
            if (d.row_of[v] >= 0)
            {
                const double m = double(d.mass[v]) * inv_h2;
                const std::size_t r = row(v);
                u[r] = m * double(d.yx[v] - x[v]);
                u[r + 1] = m * double(d.yy[v] - y[v]);
                u[r + 2] = m * double(d.yz[v] - z[v]);
            }
        for (const auto& e : d.edges)
        {
            const std::size_t a = std::size_t(e.a), b = std::size_t(e.b);
            const double dx = double(x[a]) - double(x[b]), dy = double(y[a]) - double(y[b]),
                         dz = double(z[a]) - double(z[b]);
            const double l = std::sqrt(dx * dx + dy * dy + dz * dz);
            // k (p_e - (x_a - x_b)), p_e the edge at its rest length along itself
            const double s = l > 0.0 ? double(e.stiffness) * (double(e.rest) / l - 1.0) : 0.0;
            if (d.row_of[a] >= 0)
            {
                const std::size_t r = row(a);
                u[r] += s * dx;
                u[r + 1] += s * dy;
                u[r + 2] += s * dz;
            }
            if (d.row_of[b] >= 0)
            {
                const std::size_t r = row(b);
                u[r] -= s * dx;
                u[r + 1] -= s * dy;
                u[r + 2] -= s * dz;
            }
        }
        solve_factored(d.outer, d.inner, d.values, u);
        for (std::size_t v = 0; v < d.count; ++v)
            if (d.row_of[v] >= 0)
            {
                const std::size_t r = row(v);
                x[v] += T(u[r]);
                y[v] += T(u[r + 1]);
                z[v] += T(u[r + 2]);
            }
    }
}

/// The projection: the state's positions are the prediction y on entry, the implicit step's on exit.
template <class T>
void run_cloth_solve(ClothSolveData<T>& d, State3<T>& state, T h)
{
    T* x = state.x().data() + d.base;
    T* y = state.y().data() + d.base;
    T* z = state.z().data() + d.base;
    const T* px = state.px().data() + d.base;
    const T* py = state.py().data() + d.base;
    const T* pz = state.pz().data() + d.base;
    const T* w = state.inv_mass().data() + d.base;
    // Damping as a rate: the step's displacement keeps exp(-damping h) of itself.
    const T keep = std::exp(-d.damping * h);
    for (std::size_t v = 0; v < d.count; ++v)
    {
        if (w[v] == T(0))
            continue;
        x[v] = px[v] + keep * (x[v] - px[v]);
        y[v] = py[v] + keep * (y[v] - py[v]);
        z[v] = pz[v] + keep * (z[v] - pz[v]);
    }
    std::copy(x, x + d.count, d.yx.begin());
    std::copy(y, y + d.count, d.yy.begin());
    std::copy(z, z + d.count, d.yz.begin());
    switch (d.method)
    {
    case ClothSolveMethod::block_descent:
        solve_block_descent(d, x, y, z, w, h);
        break;
    case ClothSolveMethod::xpbd:
        solve_xpbd(d, x, y, z, w, h);
        break;
    case ClothSolveMethod::projective:
        solve_projective(d, x, y, z, w, h);
        break;
    }
}

template <class T>
std::shared_ptr<ClothSolveData<T>> add_cloth_solve(Simulation<T>& sim, std::shared_ptr<ClothSolveData<T>> data,
                                                   const std::string& name)
{
    data->build_tables();
    sim.add_position_projection(name, [data](State3<T>& state, T dt) { run_cloth_solve(*data, state, dt); });
    return data;
}

} // namespace simdverlet::detail
