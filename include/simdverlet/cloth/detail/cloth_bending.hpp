// Bending rigidity as a material: the energy a plate of flexural rigidity G (Poisson's ratio 0, as
// a woven's threads bend nearly independently) stores when it curves,
//   E = G / 2 * integral of (k1^2 + k2^2) dA = G / 2 * integral of |S|^2 dA,
// k1, k2 the principal curvatures and S the shape operator (a cylinder of radius R stores
// G / (2 R^2) per unit area, a saddle of the same radius twice that). It is discretised per vertex:
// the normal displacements u_j = n_i . (x_j - x_i) of the one-ring are fitted by least squares
// with the quadratic g . d + d^T S d / 2 of their rest positions d in the vertex's tangent frame,
// which is exact for any quadratic surface on any ring of five or more, so
//   E = G / 2 * sum_i A_i |S_i - S_i^rest|^2
// over the interior vertices, A_i the mixed Voronoi area (grown by its share of the boundary's).
// The fit's weights are fixed at the rest shape, so with the normal held through a step the energy
// is quadratic in the positions, and gentle curvature is resisted from the first degree, where
// springs across an edge feel only the square of the fold. It sees no in-plane strain, is
// invariant under rigid motion, keeps a curved rest shape (a sleeve, a hood) as its zero, and
// prices a saddle as a plate does: the mean curvature alone (the cotangent Laplacian) leaves a
// saddle free, and a sheet whose compression gives way (membrane_term.hpp) then trades bending
// for an anticlastic curl, so that a cantilever droops 20 degrees too far (docs/decisions.md).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "simdverlet/cloth/triangle_mesh.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet::detail
{

/// Each interior vertex's three rows of its shape operator's fit (xx, xy, yy), over particles
/// counted from the cloth's base (its own entry last, the negative sum of the others), the weight
/// each carries in the energy (G A_i, twice that for xy; N m^3) and its rest value (0 on a flat
/// sheet).
struct BendStencils
{
    std::vector<std::uint32_t> first = {0}; ///< stencil s's entries: [first[s], first[s + 1])
    std::vector<std::int32_t> particle;
    std::vector<double> coefficient;
    std::vector<double> weight;
    std::vector<double> rest;                           ///< n . (S x_rest) at rest: 0 on a flat sheet
    std::vector<std::array<std::int32_t, 3>> triangles; ///< the cloth's, as particle offsets: the normals

    std::size_t size() const noexcept { return weight.size(); }
    /// Stencil s's own particle: its last entry.
    std::size_t centre(std::size_t s) const noexcept { return std::size_t(particle[first[s + 1] - 1]); }
};

/// The unit normal at each of `count` points: the normals of the triangles around it summed by
/// area. `at(k)` gives point k as an Eigen::Vector3d; a point on no triangle gets zero.
template <class At>
void vertex_normals(const std::vector<std::array<std::int32_t, 3>>& triangles, std::size_t count, const At& at,
                    std::vector<Eigen::Vector3d>& out)
{
    out.assign(count, Eigen::Vector3d::Zero());
    for (const auto& t : triangles)
    {
        const Eigen::Vector3d a = at(std::size_t(t[0]));
        const Eigen::Vector3d twice_area = (at(std::size_t(t[1])) - a).cross(at(std::size_t(t[2])) - a);
        for (const std::int32_t k : t)
            out[std::size_t(k)] += twice_area;
    }
    for (auto& normal : out)
        if (const double length = normal.norm(); length > 0.0)
            normal /= length;
}

/// The vertex areas of Meyer et al. (2003): a triangle with no obtuse angle gives each corner its
/// Voronoi region, an obtuse one half its area to the obtuse corner and a quarter to each other,
/// so the areas tile the mesh whatever its triangles' shapes.
template <class T>
void add_mixed_areas(const Vec3<T>& p0, const Vec3<T>& p1, const Vec3<T>& p2, std::array<double, 3>& out)
{
    const std::array<Eigen::Vector3d, 3> p = {p0.template cast<double>(), p1.template cast<double>(),
                                              p2.template cast<double>()};
    const double area = 0.5 * (p[1] - p[0]).cross(p[2] - p[0]).norm();
    out = {0.0, 0.0, 0.0};
    for (std::size_t k = 0; k < 3; ++k)
    {
        const Eigen::Vector3d u = p[(k + 1) % 3] - p[k], v = p[(k + 2) % 3] - p[k];
        if (u.dot(v) < 0.0) // obtuse at corner k
        {
            out[k] += area / 2;
            out[(k + 1) % 3] += area / 4;
            out[(k + 2) % 3] += area / 4;
            return;
        }
    }
    for (std::size_t k = 0; k < 3; ++k)
    {
        // Corner k's Voronoi region: |e|^2 cot(opposite) / 8 over its two edges.
        const std::size_t a = (k + 1) % 3, b = (k + 2) % 3;
        const auto cot_at = [&](std::size_t at, std::size_t x, std::size_t y) {
            const Eigen::Vector3d u = p[x] - p[at], v = p[y] - p[at];
            return u.dot(v) / u.cross(v).norm();
        };
        out[k] += ((p[a] - p[k]).squaredNorm() * cot_at(b, k, a) + (p[b] - p[k]).squaredNorm() * cot_at(a, k, b)) / 8;
    }
}

/// A Cholesky pivot of the fit's normal equations below this share of their largest diagonal
/// entry: a ring too close to a line or a conic to fix a quadratic.
inline constexpr double kSingularPivot = 1e-12;

/// The shape operator's least-squares fit at a vertex: the normal displacement u of each
/// neighbour, at d_k in the vertex's tangent frame, is g . d_k + d_k^T S d_k / 2 for a quadratic
/// surface, so the fit of (g, S) to the ring is exact for any quadratic surface on any ring of five
/// or more neighbours in general position. Returns the rows of S (xx, xy, yy) as maps of the
/// neighbours' u minus the centre's, or nothing where the fit is singular.
inline bool shape_operator_rows(const std::vector<Eigen::Vector2d>& ring, std::array<std::vector<double>, 3>& rows)
{
    const std::size_t k = ring.size();
    double scale = 0.0;
    for (const auto& d : ring)
        scale += d.norm() / double(k);
    if (k < 5 || !(scale > 0.0))
        return false;
    // In units of the ring's size, so that the rank test compares like with like. The normal
    // equations N (g, S) = A^T u with N = A^T A are summed and solved by Cholesky in one written
    // order (fixed_order.hpp says why Eigen's products are not used).
    std::vector<std::array<double, 5>> a(k);
    Eigen::Matrix<double, 5, 5> normal = Eigen::Matrix<double, 5, 5>::Zero();
    for (std::size_t j = 0; j < k; ++j)
    {
        const Eigen::Vector2d d = ring[j] / scale;
        a[j] = {d.x(), d.y(), d.x() * d.x() / 2, d.x() * d.y(), d.y() * d.y() / 2};
        for (int r = 0; r < 5; ++r)
            for (int c = 0; c < 5; ++c)
                normal(r, c) += a[j][std::size_t(r)] * a[j][std::size_t(c)];
    }
    Eigen::Matrix<double, 5, 5> L = Eigen::Matrix<double, 5, 5>::Zero();
    const double largest = normal.diagonal().maxCoeff();
    for (int c = 0; c < 5; ++c)
    {
        double pivot = normal(c, c);
        for (int m = 0; m < c; ++m)
            pivot -= L(c, m) * L(c, m);
        if (!(pivot > kSingularPivot * largest)) // the ring cannot tell all five apart
            return false;
        L(c, c) = std::sqrt(pivot);
        for (int r = c + 1; r < 5; ++r)
        {
            double sum = normal(r, c);
            for (int m = 0; m < c; ++m)
                sum -= L(r, m) * L(c, m);
            L(r, c) = sum / L(c, c);
        }
    }
    for (std::size_t c = 0; c < 3; ++c)
        rows[c].resize(k);
    for (std::size_t j = 0; j < k; ++j)
    {
        // Column j of N^-1 A^T: what neighbour j's u adds to (g, S).
        std::array<double, 5> y = a[j];
        for (int r = 0; r < 5; ++r)
        {
            for (int m = 0; m < r; ++m)
                y[std::size_t(r)] -= L(r, m) * y[std::size_t(m)];
            y[std::size_t(r)] /= L(r, r);
        }
        for (int r = 4; r >= 0; --r)
        {
            for (int m = r + 1; m < 5; ++m)
                y[std::size_t(r)] -= L(m, r) * y[std::size_t(m)];
            y[std::size_t(r)] /= L(r, r);
        }
        for (std::size_t c = 0; c < 3; ++c)
            rows[c][j] = y[2 + c] / (scale * scale);
    }
    return true;
}

/// The bending stencils of a sanitized mesh (no degenerate triangles) at rigidity G (N·m): three
/// per vertex, the shape operator's components xx, xy and yy in the vertex's tangent frame, fitted
/// over its one-ring or, on the boundary, its two-ring. `particle_of` maps a vertex to its
/// particle's offset from the cloth's base.
template <class T>
BendStencils bend_stencils(const TriangleMesh<T>& mesh, const std::vector<std::uint32_t>& particle_of, double rigidity)
{
    const std::size_t n = mesh.vertices.size();
    const auto at = [&](std::int32_t v) { return mesh.vertices[std::size_t(v)].template cast<double>().eval(); };
    std::vector<std::vector<std::size_t>> faces_of(n);
    std::map<std::pair<std::int32_t, std::int32_t>, int> faces_of_edge;
    std::vector<double> area(n, 0.0);
    for (std::size_t f = 0; f < mesh.triangles.size(); ++f)
    {
        const auto& t = mesh.triangles[f];
        std::array<double, 3> corner;
        add_mixed_areas(mesh.vertices[std::size_t(t[0])], mesh.vertices[std::size_t(t[1])],
                        mesh.vertices[std::size_t(t[2])], corner);
        for (std::size_t k = 0; k < 3; ++k)
        {
            area[std::size_t(t[k])] += corner[k];
            faces_of[std::size_t(t[k])].push_back(f);
            const std::int32_t i = t[k], j = t[(k + 1) % 3];
            ++faces_of_edge[{std::min(i, j), std::max(i, j)}];
        }
    }
    std::vector<bool> interior(n, true); // its one-ring surrounds it
    for (std::size_t v = 0; v < n; ++v)
        interior[v] = faces_of[v].size() >= 3;
    for (const auto& [edge, faces] : faces_of_edge)
        if (faces != 2)
        {
            interior[std::size_t(edge.first)] = false;
            interior[std::size_t(edge.second)] = false;
        }
    std::vector<Eigen::Vector3d> normals;
    vertex_normals(
        mesh.triangles, n, [&](std::size_t k) { return at(std::int32_t(k)); }, normals);

    // Each vertex's fit over its one-ring, or over its two-ring where the one-ring does not
    // surround it (on the boundary, beside a non-manifold edge) or is too small for a fit (fewer
    // than five neighbours): a boundary's curvature is measured where it is, so that an edge of
    // the sheet cannot fold in ways its neighbours' fits are blind to. A vertex whose fit is
    // singular even so has no stencils.
    const auto ring_of = [&](std::size_t v, std::vector<std::int32_t>& ring) {
        for (const std::size_t f : faces_of[v])
            for (const std::int32_t k : mesh.triangles[f])
                if (k != std::int32_t(v) && std::find(ring.begin(), ring.end(), k) == ring.end())
                    ring.push_back(k);
    };
    std::vector<std::vector<std::int32_t>> rings(n);
    std::vector<std::array<std::vector<double>, 3>> rows(n);
    std::vector<bool> fitted(n, false);
    for (std::size_t v = 0; v < n; ++v)
    {
        if (faces_of[v].empty())
            continue;
        std::vector<std::int32_t>& ring = rings[v];
        ring_of(v, ring);
        if (!interior[v] || ring.size() < 5)
        {
            const std::size_t one_ring = ring.size();
            for (std::size_t j = 0; j < one_ring; ++j)
                ring_of(std::size_t(ring[j]), ring);
            ring.erase(std::remove(ring.begin(), ring.end(), std::int32_t(v)), ring.end());
        }
        const Eigen::Vector3d t1 = normals[v].unitOrthogonal(), t2 = normals[v].cross(t1);
        std::vector<Eigen::Vector2d> plane;
        for (const std::int32_t k : ring)
        {
            const Eigen::Vector3d d = at(k) - at(std::int32_t(v));
            plane.emplace_back(d.dot(t1), d.dot(t2));
        }
        fitted[v] = shape_operator_rows(plane, rows[v]);
    }
    interior = fitted;

    // A vertex without stencils gives its area in equal shares to its neighbours that have them,
    // whose curvature stands for its own.
    std::vector<double> covered(area);
    for (std::size_t v = 0; v < n; ++v)
    {
        if (interior[v])
            continue;
        std::vector<std::int32_t> inner;
        for (const std::size_t f : faces_of[v])
            for (const std::int32_t k : mesh.triangles[f])
                if (interior[std::size_t(k)] && std::find(inner.begin(), inner.end(), k) == inner.end())
                    inner.push_back(k);
        for (const std::int32_t k : inner)
            covered[std::size_t(k)] += area[v] / double(inner.size());
    }

    BendStencils out;
    for (const auto& t : mesh.triangles)
        out.triangles.push_back({std::int32_t(particle_of[std::size_t(t[0])]),
                                 std::int32_t(particle_of[std::size_t(t[1])]),
                                 std::int32_t(particle_of[std::size_t(t[2])])});
    for (std::size_t v = 0; v < n; ++v)
    {
        if (!interior[v] || !(area[v] > 0.0))
            continue;
        for (std::size_t c = 0; c < 3; ++c)
        {
            double curvature = 0.0, reach = 0.0, centre = 0.0;
            for (std::size_t j = 0; j < rings[v].size(); ++j)
            {
                const double w = rows[v][c][j];
                const Eigen::Vector3d d = at(rings[v][j]) - at(std::int32_t(v));
                out.particle.push_back(std::int32_t(particle_of[std::size_t(rings[v][j])]));
                out.coefficient.push_back(w);
                centre -= w;
                curvature += w * normals[v].dot(d);
                reach += std::abs(w) * d.norm();
            }
            out.particle.push_back(std::int32_t(particle_of[v]));
            out.coefficient.push_back(centre);
            out.first.push_back(std::uint32_t(out.particle.size()));
            // |S|^2 = S_xx^2 + 2 S_xy^2 + S_yy^2 = k1^2 + k2^2 over the area the vertex covers.
            out.weight.push_back(rigidity * covered[v] * (c == 1 ? 2.0 : 1.0));
            // A flat ring's fit vanishes to rounding (it reproduces linear functions); anything
            // above that is a curved rest shape to keep.
            out.rest.push_back(std::abs(curvature) > 1e-9 * reach ? curvature : 0.0);
        }
    }
    return out;
}

/// The bending as a term of the implicit solve (newton_solve.hpp). Each stencil's normal is held
/// at the point the term was prepared at, so within a Newton iteration the energy is quadratic
/// and its Hessian sum_s W_s (S_s^T n_s)(n_s^T S_s) is positive semidefinite. What the held
/// normal leaves out of the gradient, (dn/dx)^T (S x) (n . S x - r), vanishes where S x lies along
/// the normal, as it does on a smooth surface, and each iteration moves the normals on.
class BendingTerm
{
  public:
    BendStencils stencils;

    bool empty() const noexcept { return stencils.size() == 0; }

    /// Holds the normals at x for the value, gradient and Hessian until the next prepare.
    void prepare(const std::vector<Eigen::Vector3d>& x)
    {
        if (!empty())
            vertex_normals(
                stencils.triangles, x.size(), [&](std::size_t k) { return x[k]; }, m_normals);
    }

    double value(const std::vector<Eigen::Vector3d>& x) const
    {
        double energy = 0.0;
        for (std::size_t s = 0; s < stencils.size(); ++s)
        {
            const double off = offset(s, x);
            energy += 0.5 * stencils.weight[s] * off * off;
        }
        return energy;
    }

    void add_gradient(const std::vector<Eigen::Vector3d>& x, std::vector<Eigen::Vector3d>& g) const
    {
        for (std::size_t s = 0; s < stencils.size(); ++s)
        {
            const Eigen::Vector3d pull = (stencils.weight[s] * offset(s, x)) * m_normals[stencils.centre(s)];
            for (auto a = stencils.first[s]; a < stencils.first[s + 1]; ++a)
                g[std::size_t(stencils.particle[a])] += stencils.coefficient[a] * pull;
        }
    }

    void add_product(const std::vector<Eigen::Vector3d>& v, std::vector<Eigen::Vector3d>& out) const
    {
        for (std::size_t s = 0; s < stencils.size(); ++s)
        {
            const Eigen::Vector3d& n = m_normals[stencils.centre(s)];
            double along = 0.0;
            for (auto a = stencils.first[s]; a < stencils.first[s + 1]; ++a)
                along += stencils.coefficient[a] * n.dot(v[std::size_t(stencils.particle[a])]);
            const Eigen::Vector3d push = (stencils.weight[s] * along) * n;
            for (auto a = stencils.first[s]; a < stencils.first[s + 1]; ++a)
                out[std::size_t(stencils.particle[a])] += stencils.coefficient[a] * push;
        }
    }

    void add_diagonal(std::vector<Eigen::Matrix3d>& blocks) const
    {
        for (std::size_t s = 0; s < stencils.size(); ++s)
        {
            const Eigen::Matrix3d nn = m_normals[stencils.centre(s)] * m_normals[stencils.centre(s)].transpose();
            for (auto a = stencils.first[s]; a < stencils.first[s + 1]; ++a)
                blocks[std::size_t(stencils.particle[a])] += (stencils.weight[s] * stencils.coefficient[a] *
                                                              stencils.coefficient[a]) *
                                                             nn;
        }
    }

    /// The normals held now, one per particle (zero on a particle in no triangle).
    const std::vector<Eigen::Vector3d>& normals() const noexcept { return m_normals; }

  private:
    /// n_s . (S x)_s - rest_s, the stencil's curvature away from its rest.
    double offset(std::size_t s, const std::vector<Eigen::Vector3d>& x) const
    {
        Eigen::Vector3d l = Eigen::Vector3d::Zero();
        for (auto a = stencils.first[s]; a < stencils.first[s + 1]; ++a)
            l += stencils.coefficient[a] * x[std::size_t(stencils.particle[a])];
        return m_normals[stencils.centre(s)].dot(l) - stencils.rest[s];
    }

    std::vector<Eigen::Vector3d> m_normals;
};

/// The bending energy of positions `at` (one per particle of the cloth, from its base), in J:
/// G / 2 sum_s A_s (n . (S x)_s - rest_s)^2 (xy counted twice) with each stencil's normal at `at`.
inline double bending_energy(const BendStencils& bend, const std::vector<Eigen::Vector3d>& at)
{
    std::vector<Eigen::Vector3d> normals;
    vertex_normals(
        bend.triangles, at.size(), [&](std::size_t k) { return at[k]; }, normals);
    double energy = 0.0;
    for (std::size_t s = 0; s < bend.size(); ++s)
    {
        Eigen::Vector3d l = Eigen::Vector3d::Zero();
        for (auto a = bend.first[s]; a < bend.first[s + 1]; ++a)
            l += bend.coefficient[a] * at[std::size_t(bend.particle[a])];
        const double off = normals[bend.centre(s)].dot(l) - bend.rest[s];
        energy += 0.5 * bend.weight[s] * off * off;
    }
    return energy;
}

} // namespace simdverlet::detail
