// What a triangle mesh gives a cloth: its edges, a lumped mass per vertex from the triangles'
// areas, and a spring per edge (and across each edge two triangles share) whose stiffness comes
// from the material's and the area around it, so the sheet, not its triangulation, decides how
// stiff it is. add_mesh_cloth uses it for any mesh, add_cloth for a grid given a ClothMaterial.
// docs/decisions.md derives the stiffness rule.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "simdverlet/cloth/detail/cloth_bending.hpp"
#include "simdverlet/cloth/detail/cloth_solve.hpp"
#include "simdverlet/cloth/material.hpp"
#include "simdverlet/cloth/triangle_mesh.hpp"
#include "simdverlet/core/simulation.hpp"

namespace simdverlet::detail
{
/// kappa in k_e = kappa E A_e / L_e^2 (docs/decisions.md): a sheet of equilateral triangles under a
/// uniform stretch stores 3/8 of the energy per unit area that E = 1 springs on every edge with
/// k L^2 = A_e would, so 8/3 makes its stiffness along any direction E, a grid's along its axes.
template <class T>
inline constexpr T kMeshStiffnessScale = T(8) / T(3);

/// The largest A_e / L_e^2 a spring is given. An interior edge of a good mesh sits near 0.3 (0.29
/// equilateral, 0.33 and 0.17 for a grid cell's sides and diagonal); a very short edge (a needle
/// sliver's) would get a stiffness without bound and outrun the explicit step, and it carries almost
/// none of the sheet's load, so it is held at this bound.
template <class T>
inline constexpr T kMaxAreaOverLength2 = T(1);

/// An edge of the mesh: its two vertices (lower first) and the vertices opposite it in the
/// triangles that share it, with those triangles' area.
template <class T>
struct MeshEdge
{
    std::int32_t a, b;
    std::int32_t opposite[2] = {-1, -1};
    int triangles = 0; ///< triangles sharing the edge: 1 on a border, 2 inside, 3 or more non-manifold
    T area = T(0);     ///< of every triangle sharing it
};

/// Every edge once, sorted by (a, b), from the triangles.
template <class T>
std::vector<MeshEdge<T>> mesh_edges(const TriangleMesh<T>& mesh)
{
    struct Half
    {
        std::int32_t a, b, opposite;
        T area;
    };
    std::vector<Half> halves;
    halves.reserve(3 * mesh.triangles.size());
    for (const auto& tri : mesh.triangles)
    {
        const T area = triangle_area(mesh.vertices, tri).twice / T(2);
        for (int k = 0; k < 3; ++k)
        {
            const std::int32_t u = tri[std::size_t(k)], v = tri[std::size_t((k + 1) % 3)];
            halves.push_back({std::min(u, v), std::max(u, v), tri[std::size_t((k + 2) % 3)], area});
        }
    }
    std::sort(halves.begin(), halves.end(), [](const Half& l, const Half& r) {
        return l.a != r.a ? l.a < r.a : l.b != r.b ? l.b < r.b : l.opposite < r.opposite;
    });
    std::vector<MeshEdge<T>> edges;
    for (const Half& h : halves)
    {
        if (edges.empty() || edges.back().a != h.a || edges.back().b != h.b)
            edges.push_back({h.a, h.b});
        MeshEdge<T>& e = edges.back();
        if (e.triangles < 2)
            e.opposite[e.triangles] = h.opposite;
        ++e.triangles;
        e.area += h.area;
    }
    return edges;
}

/// One spring of a mesh cloth, between vertices.
template <class T>
struct MeshSpring
{
    std::int32_t a, b;
    T rest, stiffness;
};

/// A spring's stiffness from the material's: kappa E A / L^2, with A its share of the area around
/// it (a third of each triangle it belongs to) and A / L^2 held at kMaxAreaOverLength2.
template <class T>
T spring_stiffness(T material, T area, T rest)
{
    if (material == T(0) || !(rest > T(0)))
        return T(0);
    return kMeshStiffnessScale<T> * material * std::min(area / T(3) / (rest * rest), kMaxAreaOverLength2<T>);
}

/// What a mesh becomes: the stretch springs, then the bend springs (each with the edge it spans),
/// and each vertex's lumped mass.
template <class T>
struct MeshClothPlan
{
    std::vector<MeshSpring<T>> stretch;
    std::vector<MeshSpring<T>> bend;
    std::vector<std::pair<std::int32_t, std::int32_t>> bent_edge; ///< per bend spring, the edge it spans
    std::vector<T> mass;
    std::size_t non_manifold_edges = 0;
    std::optional<std::size_t> first_non_manifold = {}; ///< its lower vertex
};

template <class T>
MeshClothPlan<T> plan_mesh_cloth(const TriangleMesh<T>& mesh, T stiffness, T bend_stiffness, T mass_per_area)
{
    MeshClothPlan<T> plan;
    plan.mass.assign(mesh.vertices.size(), T(0));
    for (const auto& tri : mesh.triangles)
    {
        const T share = triangle_area(mesh.vertices, tri).twice / T(2) * mass_per_area / T(3);
        for (const std::int32_t v : tri)
            plan.mass[std::size_t(v)] += share;
    }
    const auto edges = mesh_edges(mesh);
    const auto length = [&](std::int32_t u, std::int32_t v) {
        return (mesh.vertices[std::size_t(u)] - mesh.vertices[std::size_t(v)]).norm();
    };
    const auto is_edge = [&](std::int32_t u, std::int32_t v) {
        const auto key = std::pair{std::min(u, v), std::max(u, v)};
        const auto it = std::lower_bound(edges.begin(), edges.end(), key, [](const MeshEdge<T>& e, const auto& k) {
            return std::pair{e.a, e.b} < k;
        });
        return it != edges.end() && it->a == key.first && it->b == key.second;
    };
    for (const auto& e : edges)
    {
        const T rest = length(e.a, e.b);
        plan.stretch.push_back({e.a, e.b, rest, spring_stiffness(stiffness, e.area, rest)});
        if (e.triangles > 2)
        {
            // Three or more triangles on one edge (a fin, a pocket sewn on): no pair of them is the
            // edge's two sides, so it bends freely there; its stretch spring still holds it.
            if (plan.non_manifold_edges++ == 0)
                plan.first_non_manifold = std::size_t(e.a);
            continue;
        }
        if (e.triangles < 2 || bend_stiffness == T(0))
            continue;
        const std::int32_t c = e.opposite[0], d = e.opposite[1];
        // Two triangles folded onto each other share their opposite vertex, and a stretch spring
        // already joins two opposite vertices that are an edge themselves.
        if (c == d || is_edge(c, d))
            continue;
        const T bend_rest = length(c, d);
        plan.bend.push_back(
            {std::min(c, d), std::max(c, d), bend_rest, spring_stiffness(bend_stiffness, e.area, bend_rest)});
        plan.bent_edge.emplace_back(e.a, e.b);
    }
    return plan;
}

/// The implicit solve (cloth_solve.hpp) of a cloth made with `material` from `mesh` (its rest
/// shape), vertex v being particle base + particle_of[v]: the plan's stretch springs as its edges,
/// the plan's masses, and bending stencils where the material bends.
template <class T>
std::shared_ptr<ClothSolveData<T>> material_solve(const TriangleMesh<T>& mesh, const MeshClothPlan<T>& plan,
                                                  const ClothMaterial<T>& material,
                                                  const std::vector<std::uint32_t>& particle_of, std::size_t base)
{
    auto solve = std::make_shared<ClothSolveData<T>>();
    const std::size_t n = mesh.vertices.size();
    solve->base = base;
    solve->count = n;
    solve->damping = double(material.damping);
    for (const auto& s : plan.stretch)
        solve->edges.push_back(
            {std::int32_t(particle_of[std::size_t(s.a)]), std::int32_t(particle_of[std::size_t(s.b)])});
    solve->energy.stretch.stretch = double(material.stretch);
    for (const auto& t : mesh.triangles)
    {
        const std::array<std::int32_t, 3> corner = {std::int32_t(particle_of[std::size_t(t[0])]),
                                                    std::int32_t(particle_of[std::size_t(t[1])]),
                                                    std::int32_t(particle_of[std::size_t(t[2])])};
        solve->energy.stretch.triangles.push_back(
            MembraneTerm::triangle(corner, mesh.vertices[std::size_t(t[0])].template cast<double>(),
                                   mesh.vertices[std::size_t(t[1])].template cast<double>(),
                                   mesh.vertices[std::size_t(t[2])].template cast<double>()));
    }
    if (material.bending > T(0))
        solve->energy.bending.stencils = bend_stencils(mesh, particle_of, double(material.bending));
    solve->energy.inertia.mass.resize(n);
    for (std::size_t v = 0; v < n; ++v)
        solve->energy.inertia.mass[particle_of[v]] = double(plan.mass[v]);
    return solve;
}

/// What a material cloth takes of a mesh's plan: its edges and its masses (the membrane and the
/// bending are the solve's, from the triangles).
template <class T>
MeshClothPlan<T> plan_material_cloth(const TriangleMesh<T>& mesh, const ClothMaterial<T>& material)
{
    return plan_mesh_cloth(mesh, material.stretch, T(0), material.density);
}

/// What a cloth given a material must pass, grid or mesh (`what` names it): a sound material, no
/// solver-unit knob beside it (each of `knobs` that is set is an error naming it), and a free name
/// for its solve stage, cloth_solve@<name>.
template <class T>
void check_material_cloth(const Simulation<T>& sim, const ClothMaterial<T>& material, const std::string& what,
                          std::initializer_list<std::pair<bool, const char*>> knobs, const std::string& name)
{
    check_material(material, what);
    for (const auto& [set, knob] : knobs)
        if (set)
            raise<std::invalid_argument>("simdverlet: " + what + " has both a material and " + knob +
                                         ": the material decides the cloth's masses, stretch and bending; give one");
    const std::string stage = "cloth_solve@" + (name.empty() ? "cloth@" + std::to_string(sim.size()) : name);
    if (sim.position_projections().contains(stage))
        raise<std::invalid_argument>("simdverlet: a position projection named '" + stage + "' exists: name the " +
                                     what + " apart from the others");
}

} // namespace simdverlet::detail
