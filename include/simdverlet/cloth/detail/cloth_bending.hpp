// Bending rigidity as a material: the energy a plate of flexural rigidity G stores when it curves,
//   E = G / 2 * integral of (2 H)^2 dA,
// H the mean curvature (a cylinder of radius R stores G / (2 R^2) per unit area), discretised per
// vertex with the cotangent Laplacian of its one-ring,
//   (L x)_i = sum_j (cot a_ij + cot b_ij) / 2 (x_j - x_i)  ~  -2 H n A_i,
// so E = G / 2 * sum_i (n_i . (L x)_i - r_i)^2 / A_i over the interior vertices, n_i the vertex's
// normal, A_i its mixed Voronoi area (grown by its share of the boundary's) and r_i its rest value.
// Only the Laplacian's normal part is curvature: its part in the plane is the triangulation's
// irregularity and the sheet's in-plane strain, which the stretch already prices. The weights are
// fixed at the rest shape, so with the normal held through a step the energy is quadratic in the
// positions and gentle curvature is resisted from the first degree, where springs across an edge
// feel only the square of the fold. It is invariant under rigid motion, a curved rest shape (a
// sleeve, a hood) is its zero, and a sheet rolled onto a cylinder stores G / (2 R^2) per unit area
// whatever its triangulation to 8 % (tests/cloth_bending.cpp; docs/decisions.md measures
// the per-edge alternatives against it).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "simdverlet/cloth/triangle_mesh.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet::detail
{

/// Each interior vertex's row of the cotangent Laplacian, over particles counted from the cloth's
/// base (its own entry included, the negative sum of the others), the weight G / A_i it carries in
/// the energy (N/m) and its rest curvature |(L x_rest)_i| (0 on a flat sheet).
struct BendStencils
{
    std::vector<std::uint32_t> first = {0}; ///< stencil s's entries: [first[s], first[s + 1])
    std::vector<std::int32_t> particle;
    std::vector<double> coefficient;
    std::vector<double> weight;
    std::vector<double> rest;                           ///< n . (L x_rest) at rest: 0 on a flat sheet
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

/// The bending stencils of a sanitized mesh (no degenerate triangles) at rigidity G (N·m): one per
/// vertex whose every edge two triangles share. A vertex on the boundary or on a non-manifold edge
/// has none (its Laplacian is not its curvature there); its interior neighbours still feel it
/// move. `particle_of` maps a vertex to its particle's offset from the cloth's base.
template <class T>
BendStencils bend_stencils(const TriangleMesh<T>& mesh, const std::vector<std::uint32_t>& particle_of, double rigidity)
{
    const std::size_t n = mesh.vertices.size();
    std::vector<std::map<std::int32_t, double>> ring(n); // vertex -> neighbour -> sum of cot / 2
    std::map<std::pair<std::int32_t, std::int32_t>, int> faces_of_edge;
    std::vector<double> area(n, 0.0);
    for (const auto& t : mesh.triangles)
    {
        std::array<double, 3> corner;
        add_mixed_areas(mesh.vertices[std::size_t(t[0])], mesh.vertices[std::size_t(t[1])],
                        mesh.vertices[std::size_t(t[2])], corner);
        for (std::size_t k = 0; k < 3; ++k)
        {
            const std::int32_t i = t[k], j = t[(k + 1) % 3], o = t[(k + 2) % 3];
            area[std::size_t(t[k])] += corner[k];
            const Eigen::Vector3d u =
                (mesh.vertices[std::size_t(i)] - mesh.vertices[std::size_t(o)]).template cast<double>();
            const Eigen::Vector3d v =
                (mesh.vertices[std::size_t(j)] - mesh.vertices[std::size_t(o)]).template cast<double>();
            const double half_cot = u.dot(v) / u.cross(v).norm() / 2;
            ring[std::size_t(i)][j] += half_cot;
            ring[std::size_t(j)][i] += half_cot;
            ++faces_of_edge[{std::min(i, j), std::max(i, j)}];
        }
    }
    std::vector<bool> interior(n, true);
    for (std::size_t v = 0; v < n; ++v)
        interior[v] = !ring[v].empty();
    for (const auto& [edge, faces] : faces_of_edge)
        if (faces != 2)
        {
            interior[std::size_t(edge.first)] = false;
            interior[std::size_t(edge.second)] = false;
        }

    // A boundary vertex's area goes in equal shares to its interior neighbours, whose curvature
    // stands for its own: without it a strip four triangles wide would lose a quarter of its
    // rigidity to its two edges.
    std::vector<double> covered(area);
    for (std::size_t v = 0; v < n; ++v)
    {
        if (interior[v])
            continue;
        int inner = 0;
        for (const auto& [j, w] : ring[v])
            inner += interior[std::size_t(j)] ? 1 : 0;
        for (const auto& [j, w] : ring[v])
            if (interior[std::size_t(j)])
                covered[std::size_t(j)] += area[v] / inner;
    }

    BendStencils out;
    std::vector<Eigen::Vector3d> normals;
    vertex_normals(
        mesh.triangles, n, [&](std::size_t k) { return mesh.vertices[k].template cast<double>().eval(); }, normals);
    for (const auto& t : mesh.triangles)
        out.triangles.push_back({std::int32_t(particle_of[std::size_t(t[0])]),
                                 std::int32_t(particle_of[std::size_t(t[1])]),
                                 std::int32_t(particle_of[std::size_t(t[2])])});
    for (std::size_t v = 0; v < n; ++v)
    {
        if (!interior[v] || !(area[v] > 0.0))
            continue;
        double centre = 0.0, reach = 0.0;
        Eigen::Vector3d curvature = Eigen::Vector3d::Zero();
        const Eigen::Vector3d at = mesh.vertices[v].template cast<double>();
        for (const auto& [j, w] : ring[v])
        {
            const Eigen::Vector3d edge = mesh.vertices[std::size_t(j)].template cast<double>() - at;
            out.particle.push_back(std::int32_t(particle_of[std::size_t(j)]));
            out.coefficient.push_back(w);
            centre -= w;
            curvature += w * edge;
            reach += std::abs(w) * edge.norm();
        }
        out.particle.push_back(std::int32_t(particle_of[v]));
        out.coefficient.push_back(centre);
        out.first.push_back(std::uint32_t(out.particle.size()));
        // |(L x)_i|^2 / A_i is (2 H)^2 over A_i; over the area it covers, that much more.
        out.weight.push_back(rigidity * covered[v] / (area[v] * area[v]));
        // A flat one-ring's Laplacian vanishes to rounding (the cotangent weights reproduce linear
        // functions); anything above that is a curved rest shape to keep.
        const double rest = curvature.dot(normals[v]);
        out.rest.push_back(std::abs(rest) > 1e-9 * reach ? rest : 0.0);
    }
    return out;
}

/// The bending energy of positions `at` (one per particle of the cloth, from its base), in J:
/// G / 2 sum_s (n . (L x)_s - rest_s)^2 / A_s with each stencil's normal at `at`.
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
