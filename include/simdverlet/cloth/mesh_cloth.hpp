// Cloth from any triangle mesh: a garment exported from a modelling tool, a cape with a hood, a
// skirt. add_mesh_cloth appends one particle per mesh vertex, a stretch spring per edge and a bend
// spring across each edge two triangles share, in constraint layers (a vertex has about six edge
// neighbours and as many bend partners, more than one layer's slots), and returns the same Cloth
// handle add_cloth does, without grid coordinates. docs/decisions.md derives the stiffness rule.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simdverlet/cloth/cloth.hpp"
#include "simdverlet/cloth/detail/cloth_solve.hpp"
#include "simdverlet/cloth/detail/mesh_springs.hpp"
#include "simdverlet/cloth/material.hpp"
#include "simdverlet/cloth/triangle_mesh.hpp"
#include "simdverlet/core/controllers.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/log.hpp"
#include "simdverlet/core/reorder.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// What add_mesh_cloth appends.
template <class T>
struct MeshClothOptions
{
    TriangleMesh<T> mesh = {}; ///< the rest shape: positions, triangles, optional uvs. Sanitized on a copy
                               ///< (see `repair`); a curved rest shape is kept, not flattened
    std::optional<ClothMaterial<T>> material = std::nullopt; ///< the fabric in SI units (material.hpp). When
        ///< given it decides the masses, the stretch and the bending, held by the implicit cloth solve
        ///< (cloth_solve.hpp) instead of explicit springs, stable at any scale; stiffness, bend_stiffness and
        ///< mass_per_area must then be left at their defaults. A cloth given neither a material nor any of
        ///< those three gets the default ClothMaterial (a shirt cotton): a garment loaded from a file is in
        ///< metres and kilograms, where the springs' defaults would be a unit-mass rubber sheet
    T stiffness = T(15); ///< >= 0: the sheet's stretch stiffness, as the stiffness of a grid cloth's
                         ///< spring of the same material (a grid's springs give it k per unit of
                         ///< strain across a unit width, whatever its spacing). Each spring gets its
                         ///< share from its length and the areas around it (docs/decisions.md).
                         ///< 15 over mass_per_area 1 is the grid cloth's default material (60 and
                         ///< mass 1 at spacing 0.5: 60 over 4), which the default step holds for
                         ///< edges of 0.5 and longer (stability_ratio 0.6)
    std::optional<T> bend_stiffness = std::nullopt; ///< >= 0, on the same scale: bend springs join the two
        ///< vertices across each edge two triangles share, so the cloth resists folding and a curved rest
        ///< shape keeps its curve. Default stiffness / 5; 0 adds none
    T mass_per_area = T(1); ///< > 0, mass per unit of rest area, lumped onto the vertices (a third of each
                            ///< triangle's mass to each corner). Needs a state with per-particle masses
    std::function<bool(std::size_t vertex)> pinned = {}; ///< which vertices (of the sanitized mesh's
                                                         ///< numbering) get inverse mass 0; none by default
    MeshRepair repair = MeshRepair::drop; ///< zero-area and repeated triangles and unused vertices: dropped
        ///< and reported (repairs(), the log hook), or refused with a std::invalid_argument naming the first
    bool reorder = true; ///< number the particles along a Z-order curve of the rest shape, so springs join
                         ///< particles near each other in memory (an exported mesh's order is often no
                         ///< better than random); index(vertex) maps either way
    PidGains<T> grab_gains = {.kp = T(150), .ki = T(50), .kd = T(20)}; ///< the controller grab_nearest
        ///< installs, per unit of the grabbed vertex's mass: the grid cloth's default hand on a unit mass
    std::string name = {}; ///< the cloth's name in messages; default "cloth@<base>"
};

namespace detail
{
/// The Z-order of the vertices' rest positions: order[k] is the vertex particle k stands for.
template <class T>
std::vector<std::uint32_t> locality_order(const std::vector<Vec3<T>>& vertices)
{
    Vec3<double> lo = Vec3<double>::Constant(HUGE_VAL), hi = Vec3<double>::Constant(-HUGE_VAL);
    for (const auto& p : vertices)
    {
        lo = lo.cwiseMin(p.template cast<double>());
        hi = hi.cwiseMax(p.template cast<double>());
    }
    std::vector<std::uint64_t> code(vertices.size());
    for (std::size_t v = 0; v < vertices.size(); ++v)
        code[v] = morton_code(vertices[v], lo, hi - lo);
    std::vector<std::uint32_t> order(vertices.size());
    std::iota(order.begin(), order.end(), std::uint32_t(0));
    // Ties keep the mesh's order, so the numbering is deterministic.
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return code[a] < code[b]; });
    return order;
}

template <class T>
void check_mesh_cloth_options(const Simulation<T>& sim, const MeshClothOptions<T>& o)
{
    const auto check = [](T value, const char* what, bool positive) {
        if (!std::isfinite(value) || value < T(0) || (positive && !(value > T(0))))
            detail::raise<std::invalid_argument>(std::string("simdverlet: mesh cloth ") + what +
                                                 " must be finite and " + (positive ? "> 0" : ">= 0") + ", got " +
                                                 number(value));
    };
    check(o.stiffness, "stiffness", false);
    check(o.bend_stiffness.value_or(o.stiffness / T(5)), "bend_stiffness", false);
    check(o.mass_per_area, "mass_per_area", true);
    if (o.material)
    {
        const MeshClothOptions<T> defaults;
        check_material_cloth(sim, *o.material, "mesh cloth",
                             {{o.stiffness != defaults.stiffness, "stiffness"},
                              {bool(o.bend_stiffness), "bend_stiffness"},
                              {o.mass_per_area != defaults.mass_per_area, "mass_per_area"}},
                             o.name);
    }
    check_gains(o.grab_gains);
    if (!sim.state().has_masses())
        detail::raise<std::logic_error>("simdverlet: a mesh cloth lumps a mass onto each vertex from the areas "
                                        "around it: it needs a state with per-particle masses (Masses::per_particle)");
    if (sim.pending_removals() > 0)
        detail::raise<std::logic_error>("simdverlet: cannot append a mesh cloth while particle removals are queued: "
                                        "the next step would renumber it. Step once first.");
}
} // namespace detail

/// Appends a cloth made from `options.mesh` to `sim` and returns its handle (the Cloth handle of
/// add_cloth, speaking of vertices). The mesh is sanitized first (options.repair; what was dropped
/// is in cloth.repairs() and logged), and every option and vertex is checked before anything is
/// appended, so a failed call leaves sim as it was.
///
/// One particle per vertex (welded by position index), with a mass lumped from the triangles'
/// areas; one stretch spring per edge; across each edge two triangles share, a bend spring between
/// the two vertices opposite it, which goes when that edge is torn or cut. An edge of three or more
/// triangles gets its stretch spring and no bend spring (counted in non_manifold_edges() and
/// logged). The springs go into constraint layers over the cloth's range. The cloth registers no
/// stage of its own: it bends through its springs.
///
/// Stability: the explicit step holds while stability_ratio(sim, params) stays below 1
/// (measure.hpp). A mesh's stiffest particle is its lightest for its springs: a fine mesh, or one
/// vertex with many short edges, needs more substeps than a coarse one at the same stiffness.
template <class T>
Cloth<T> add_mesh_cloth(Simulation<T>& sim, MeshClothOptions<T> options)
{
    if (const MeshClothOptions<T> defaults; !options.material && options.stiffness == defaults.stiffness &&
                                            !options.bend_stiffness && options.mass_per_area == defaults.mass_per_area)
        options.material = ClothMaterial<T>{};
    detail::check_mesh_cloth_options(sim, options);
    TriangleMesh<T> mesh = std::move(options.mesh);
    const std::string what = options.name.empty() ? "mesh cloth" : "mesh cloth '" + options.name + "'";
    const MeshRepairs repairs = sanitize_mesh(mesh, options.repair, what);
    const std::size_t n = mesh.vertices.size();
    if (n > std::size_t(std::numeric_limits<std::int32_t>::max()) - sim.size())
        detail::raise<std::length_error>("simdverlet: " + what + " has " + std::to_string(n) +
                                         " vertices, more than a simulation's indices reach");
    std::vector<bool> pinned(n, false);
    for (std::size_t v = 0; v < n; ++v)
        pinned[v] = options.pinned && options.pinned(v);
    const auto& material = options.material;
    const T bend = material ? T(0) : options.bend_stiffness.value_or(options.stiffness / T(5));
    const auto plan = material ? detail::plan_material_cloth(mesh, *material)
                               : detail::plan_mesh_cloth(mesh, options.stiffness, bend, options.mass_per_area);
    for (std::size_t v = 0; v < n; ++v)
        if (!(plan.mass[v] > T(0)) || !std::isfinite(plan.mass[v]))
            detail::raise<std::invalid_argument>("simdverlet: " + what + " vertex " + std::to_string(v) + " has mass " +
                                                 detail::number(plan.mass[v]) + " from the areas around it");

    // Particle k stands for vertex order[k].
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), std::uint32_t(0));
    if (options.reorder)
        order = detail::locality_order(mesh.vertices);
    std::vector<std::uint32_t> particle_of(n);
    for (std::size_t k = 0; k < n; ++k)
        particle_of[order[k]] = std::uint32_t(k);

    auto& world = *detail::world_of(sim);
    const std::size_t base = sim.size();
    sim.state().reserve(base + n);
    for (std::size_t k = 0; k < n; ++k)
        sim.add_particle(mesh.vertices[order[k]], pinned[order[k]] ? T(0) : T(1) / plan.mass[order[k]]);

    // Enough layers over the cloth for its busiest particle, added before any spring so that each
    // particle's springs fill layer 0 first and the layers cover the cloth in one piece each.
    auto& layers = world.constraint_layers();
    std::vector<int> springs(n, 0);
    const std::vector<detail::MeshSpring<T>> none;
    for (const auto* list : {material ? &none : &plan.stretch, &plan.bend})
        for (const auto& s : *list)
            if (s.stiffness > T(0))
            {
                ++springs[std::size_t(s.a)];
                ++springs[std::size_t(s.b)];
            }
    const int busiest = n == 0 ? 0 : *std::max_element(springs.begin(), springs.end());
    const std::size_t have = [&] {
        std::size_t covering = 0;
        for (std::size_t k = 0; k < layers.count(); ++k)
            covering += layers[k].covers(base) && layers[k].covers(base + n - 1) ? 1 : 0;
        return covering;
    }();
    for (std::size_t depth = have; depth * std::size_t(kSlots) < std::size_t(busiest); ++depth)
        layers.add_layer(base, base + n);
    const auto particle = [&](std::int32_t v) { return base + particle_of[std::size_t(v)]; };
    for (const auto& s : material ? none : plan.stretch)
        if (s.stiffness > T(0))
            layers.connect(particle(s.a), particle(s.b), s.rest, s.stiffness);
    for (std::size_t k = 0; k < plan.bend.size(); ++k)
    {
        const auto& s = plan.bend[k];
        if (!(s.stiffness > T(0)))
            continue;
        layers.connect(particle(s.a), particle(s.b), s.rest, s.stiffness);
        // The bend spring spans its edge: a tear or cut of the edge takes it too.
        layers.link(particle(plan.bent_edge[k].first), particle(plan.bent_edge[k].second), particle(s.a),
                    particle(s.b));
    }

    const auto solve = material ? detail::material_solve(mesh, plan, *material, particle_of, base) : nullptr;

    auto data = std::make_shared<detail::ClothData<T>>();
    data->world = detail::world_of(sim);
    data->base = base;
    data->count = n;
    data->inv_mass.resize(n);
    for (std::size_t k = 0; k < n; ++k)
        data->inv_mass[k] = T(1) / plan.mass[order[k]];
    data->triangles = std::move(mesh.triangles);
    data->uvs = std::move(mesh.uvs);
    data->uv_triangles = std::move(mesh.uv_triangles);
    if (options.reorder)
    {
        data->particle_of = std::move(particle_of);
        data->vertex_of = std::move(order);
    }
    data->repairs = repairs;
    data->non_manifold_edges = plan.non_manifold_edges;
    data->grab_gains = options.grab_gains;
    data->name = options.name.empty() ? "cloth@" + std::to_string(base) : options.name;
    data->protection = world.protect_range(base, base + n, "cloth '" + data->name + "'");
    if (solve)
        data->solve = detail::add_cloth_solve(sim, solve, "cloth_solve@" + data->name);
    if (plan.non_manifold_edges > 0)
        log(LogLevel::warning, "simdverlet: " + what + " has " + std::to_string(plan.non_manifold_edges) +
                                   " non-manifold edges (three or more triangles; the first at vertex " +
                                   std::to_string(*plan.first_non_manifold) +
                                   "): each keeps its stretch spring and gets no bend spring");
    return detail::make_cloth(std::move(data));
}

} // namespace simdverlet
