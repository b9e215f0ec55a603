// Triangle meshes as assets arrive: positions, triangles and optional per-corner uvs, and the
// repairs that make a real asset usable. Exported meshes often carry a few zero-area or repeated
// triangles and stray vertices; sanitize_mesh drops them and reports what went (as Jolt's
// MeshShapeSettings::Sanitize does), or refuses them, and throws on what no repair can fix (a NaN,
// an index out of range). The mesh collider and the OBJ loader both go through it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/log.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// What sanitize_mesh does with the defects a mesh can lose without losing any surface: triangles
/// of zero area, triangles naming the same three vertices as another, vertices no triangle names.
enum class MeshRepair
{
    drop,   ///< remove them, report them (MeshRepairs) and log one warning: real assets carry a few
    refuse, ///< throw std::invalid_argument naming the first: for a pipeline that wants clean input
};

/// What sanitize_mesh, or the OBJ loader through it, dropped. Indices are those of the mesh it was
/// given (for a loaded OBJ: its vertices, and its triangles once polygons are fanned).
struct MeshRepairs
{
    std::size_t degenerate_triangles = 0; ///< twice the area <= 1e-6 x the longest edge squared: no normal
    std::size_t repeated_triangles = 0;   ///< the same three vertices as an earlier triangle, in any order
    std::size_t unused_vertices = 0;      ///< named by no kept triangle; the others are renumbered in order
    std::optional<std::size_t> first_degenerate_triangle = {}; ///< the lowest index dropped; empty when none
    std::optional<std::size_t> first_repeated_triangle = {};   ///< the lowest index dropped; empty when none
    std::optional<std::size_t> first_unused_vertex = {};       ///< the lowest index dropped; empty when none
    bool uvs_dropped = false; ///< the OBJ loader dropped every uv: some face corners had one and others not

    /// Whether anything was dropped.
    bool any() const noexcept
    {
        return degenerate_triangles > 0 || repeated_triangles > 0 || unused_vertices > 0 || uvs_dropped;
    }

    /// One line for a log: "<what>: dropped 2 degenerate triangles (the first is triangle 4) and
    /// 1 unused vertex (vertex 7)".
    std::string describe(const std::string& what) const
    {
        std::vector<std::string> parts;
        const auto add = [&](std::size_t count, const std::optional<std::size_t>& first, const char* one,
                             const char* many, const char* element) {
            if (count > 0)
                parts.push_back(std::to_string(count) + " " + (count == 1 ? one : many) + " (" +
                                (count == 1 ? "" : "the first is ") + element + " " +
                                std::to_string(first.value_or(0)) + ")");
        };
        add(degenerate_triangles, first_degenerate_triangle, "degenerate triangle", "degenerate triangles", "triangle");
        add(repeated_triangles, first_repeated_triangle, "repeated triangle", "repeated triangles", "triangle");
        add(unused_vertices, first_unused_vertex, "unused vertex", "unused vertices", "vertex");
        if (uvs_dropped)
            parts.push_back("its uvs, which some face corners lacked");
        if (parts.empty())
            return what + ": nothing to repair";
        std::string text = what + ": dropped ";
        for (std::size_t k = 0; k < parts.size(); ++k)
            text += (k == 0 ? "" : k + 1 == parts.size() ? " and " : ", ") + parts[k];
        return text;
    }
};

/// A triangle mesh, as the OBJ loader returns it and the mesh collider takes it. The uvs have
/// triangles of their own because a mesh is welded by position: along a texture seam one vertex
/// has two uvs, one for the triangles on each side.
template <class T>
struct TriangleMesh
{
    std::vector<Vec3<T>> vertices = {};                         ///< positions, all finite
    std::vector<std::array<std::int32_t, 3>> triangles = {};    ///< vertex indices, counter-clockwise seen from outside
    std::vector<Vec2<T>> uvs = {};                              ///< texture coordinates, optional
    std::vector<std::array<std::int32_t, 3>> uv_triangles = {}; ///< empty, or per triangle its corners' indices
                                                                ///< into uvs (an OBJ's f v/vt), in the same order
    MeshRepairs repairs = {}; ///< what the last sanitize_mesh over it (the OBJ loader runs one) dropped
};

namespace detail
{
/// Throws naming the first point (a vertex, a uv) with a coordinate that is not finite.
template <class P>
void check_finite(const std::vector<P>& points, const std::string& what, const char* element)
{
    for (std::size_t i = 0; i < points.size(); ++i)
        if (!points[i].allFinite())
        {
            std::string coordinates;
            for (int k = 0; k < P::RowsAtCompileTime; ++k)
                coordinates += (k == 0 ? "" : ", ") + number(points[i][k]);
            raise<std::invalid_argument>("simdverlet: " + what + " " + element + " " + std::to_string(i) + " (" +
                                         coordinates + ") is not finite");
        }
}

/// Throws naming the first triangle with a corner outside [0, count): a vertex index, or a uv
/// index (`triangle` "uv triangle", `one` "uv", `many` "uvs").
inline void check_indices(const std::vector<std::array<std::int32_t, 3>>& triangles, std::size_t count,
                          const std::string& what, const char* triangle, const char* one, const char* many)
{
    for (std::size_t t = 0; t < triangles.size(); ++t)
        for (const std::int32_t v : triangles[t])
            if (v < 0 || std::size_t(v) >= count)
                raise<std::invalid_argument>("simdverlet: " + what + " " + triangle + " " + std::to_string(t) +
                                             " refers to " + one + " " + std::to_string(v) + ", but there are " +
                                             std::to_string(count) + " " + many);
}

/// A triangle's size, as the degeneracy test reads it.
template <class T>
struct TriangleArea
{
    T twice = T(0);          ///< twice the area, |ab x ac|
    bool degenerate = false; ///< twice the area <= 1e-6 x the longest edge squared
};

/// Below 1e-6 of its longest edge squared a triangle is a sliver or a point, and its normal is
/// rounding noise: no contact can be answered against it. Written "not greater", so an area that
/// overflowed to inf or NaN counts as degenerate too.
template <class T>
TriangleArea<T> triangle_area(const std::vector<Vec3<T>>& vertices, const std::array<std::int32_t, 3>& tri)
{
    const Vec3<T>& a = vertices[std::size_t(tri[0])];
    const Vec3<T> ab = vertices[std::size_t(tri[1])] - a;
    const Vec3<T> ac = vertices[std::size_t(tri[2])] - a;
    const Vec3<T> bc = ac - ab;
    const T longest2 = std::max({ab.squaredNorm(), ac.squaredNorm(), bc.squaredNorm()});
    const T twice = ab.cross(ac).norm();
    return {.twice = twice, .degenerate = !(twice > T(1e-6) * longest2)};
}

inline std::string corners(const std::array<std::int32_t, 3>& tri)
{
    return std::to_string(tri[0]) + ", " + std::to_string(tri[1]) + ", " + std::to_string(tri[2]);
}

template <class T>
[[noreturn]] void raise_degenerate(const std::string& what, std::size_t t, const std::array<std::int32_t, 3>& tri,
                                   T twice_area)
{
    raise<std::invalid_argument>("simdverlet: " + what + " triangle " + std::to_string(t) + " (vertices " +
                                 corners(tri) + ") is degenerate: its area is " + number(twice_area / T(2)));
}

/// Throws naming the first non-finite vertex, out-of-range index or degenerate triangle: for a mesh
/// whose topology is fixed (a collider's set_vertices), where a triangle that collapses cannot be
/// dropped. `what` names the mesh in the message ("mesh collider", or a file's path).
template <class T>
void check_mesh(const std::vector<Vec3<T>>& vertices, const std::vector<std::array<std::int32_t, 3>>& triangles,
                const std::string& what)
{
    if (triangles.empty())
        raise<std::invalid_argument>("simdverlet: " + what + " has no triangles");
    check_finite(vertices, what, "vertex");
    check_indices(triangles, vertices.size(), what, "triangle", "vertex", "vertices");
    for (std::size_t t = 0; t < triangles.size(); ++t)
        if (const TriangleArea<T> area = triangle_area(vertices, triangles[t]); area.degenerate)
            raise_degenerate(what, t, triangles[t], area.twice);
}

/// Whether sanitizing drops the vertices no kept triangle names. The mesh collider keeps them, so
/// that an animated mesh's set_vertices takes the caller's vertex buffer, numbered as it was.
enum class UnusedVertices
{
    drop,
    keep,
};

/// sanitize_mesh without its warning: the OBJ loader adds what it dropped itself (uvs) and logs
/// once. Everything is found before anything is written, so an error leaves the mesh as it was.
template <class T>
MeshRepairs repair_mesh(TriangleMesh<T>& mesh, MeshRepair repair, const std::string& what, UnusedVertices unused)
{
    const auto& triangles = mesh.triangles;
    if (triangles.empty())
        raise<std::invalid_argument>("simdverlet: " + what + " has no triangles");
    check_finite(mesh.vertices, what, "vertex");
    check_indices(triangles, mesh.vertices.size(), what, "triangle", "vertex", "vertices");
    if (!mesh.uv_triangles.empty() && mesh.uv_triangles.size() != triangles.size())
        raise<std::invalid_argument>("simdverlet: " + what + " has " + std::to_string(mesh.uv_triangles.size()) +
                                     " uv triangles for " + std::to_string(triangles.size()) +
                                     " triangles; it needs one per triangle, or none");
    check_finite(mesh.uvs, what, "uv");
    check_indices(mesh.uv_triangles, mesh.uvs.size(), what, "uv triangle", "uv", "uvs");

    MeshRepairs repairs;
    std::vector<bool> dropped(triangles.size(), false);
    T first_twice_area = T(0); // the first degenerate triangle's, for refuse's message
    for (std::size_t t = 0; t < triangles.size(); ++t)
        if (const TriangleArea<T> area = triangle_area(mesh.vertices, triangles[t]); area.degenerate)
        {
            if (repairs.degenerate_triangles++ == 0)
            {
                repairs.first_degenerate_triangle = t;
                first_twice_area = area.twice;
            }
            dropped[t] = true;
        }

    // A triangle's vertices sorted are the same key in any order or orientation; sorting the keys
    // with their indices puts each group's earliest triangle first, and that one is kept. (A
    // repeated corner makes zero area, so every key left has three distinct vertices.)
    std::vector<std::pair<std::array<std::int32_t, 3>, std::size_t>> keys;
    keys.reserve(triangles.size() - repairs.degenerate_triangles);
    for (std::size_t t = 0; t < triangles.size(); ++t)
        if (!dropped[t])
        {
            std::array<std::int32_t, 3> key = triangles[t];
            std::sort(key.begin(), key.end());
            keys.emplace_back(key, t);
        }
    std::sort(keys.begin(), keys.end());
    std::size_t repeats = 0; // the triangle the first repeated one repeats
    for (std::size_t k = 1, group = 0; k < keys.size(); ++k)
    {
        if (keys[k].first != keys[group].first)
        {
            group = k;
            continue;
        }
        const std::size_t t = keys[k].second;
        dropped[t] = true;
        ++repairs.repeated_triangles;
        if (!repairs.first_repeated_triangle || t < *repairs.first_repeated_triangle)
        {
            repairs.first_repeated_triangle = t;
            repeats = keys[group].second;
        }
    }

    std::vector<bool> used(mesh.vertices.size(), unused == UnusedVertices::keep);
    for (std::size_t t = 0; t < triangles.size(); ++t)
        if (!dropped[t])
            for (const std::int32_t v : triangles[t])
                used[std::size_t(v)] = true;
    for (std::size_t v = 0; v < used.size(); ++v)
        if (!used[v] && repairs.unused_vertices++ == 0)
            repairs.first_unused_vertex = v;

    if (repair == MeshRepair::refuse)
    {
        const auto& degenerate = repairs.first_degenerate_triangle;
        const auto& repeated = repairs.first_repeated_triangle;
        if (degenerate && !(repeated && *repeated < *degenerate))
            raise_degenerate(what, *degenerate, triangles[*degenerate], first_twice_area);
        if (repeated)
            raise<std::invalid_argument>("simdverlet: " + what + " triangle " + std::to_string(*repeated) +
                                         " (vertices " + corners(triangles[*repeated]) + ") repeats triangle " +
                                         std::to_string(repeats) + " (vertices " + corners(triangles[repeats]) + ")");
        if (const auto& v = repairs.first_unused_vertex)
            raise<std::invalid_argument>("simdverlet: " + what + " vertex " + std::to_string(*v) +
                                         " is used by no triangle");
    }
    // Every group of repeats keeps one, so only degenerate triangles can leave none.
    if (repairs.degenerate_triangles == triangles.size())
        raise<std::invalid_argument>("simdverlet: " + what + " has no triangles left: " +
                                     (triangles.size() == 1 ? std::string("its one triangle is")
                                                            : "all " + std::to_string(triangles.size()) + " are") +
                                     " degenerate");
    if (!repairs.any())
    {
        mesh.repairs = repairs;
        return repairs;
    }

    std::vector<std::int32_t> renumbered(mesh.vertices.size(), -1);
    std::vector<Vec3<T>> vertices;
    vertices.reserve(mesh.vertices.size() - repairs.unused_vertices);
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
        if (used[v])
        {
            renumbered[v] = std::int32_t(vertices.size());
            vertices.push_back(mesh.vertices[v]);
        }
    std::vector<std::array<std::int32_t, 3>> kept, kept_uvs;
    kept.reserve(triangles.size() - repairs.degenerate_triangles - repairs.repeated_triangles);
    for (std::size_t t = 0; t < triangles.size(); ++t)
        if (!dropped[t])
        {
            const auto& tri = triangles[t];
            kept.push_back(
                {renumbered[std::size_t(tri[0])], renumbered[std::size_t(tri[1])], renumbered[std::size_t(tri[2])]});
            if (!mesh.uv_triangles.empty())
                kept_uvs.push_back(mesh.uv_triangles[t]);
        }
    mesh.vertices = std::move(vertices);
    mesh.triangles = std::move(kept);
    mesh.uv_triangles = std::move(kept_uvs);
    mesh.repairs = repairs;
    return repairs;
}

/// The one warning a repair logs, naming the mesh and each count; nothing when nothing was dropped.
inline void log_repairs(const MeshRepairs& repairs, const std::string& what)
{
    if (repairs.any())
        simdverlet::log(LogLevel::warning, repairs.describe(what));
}
} // namespace detail

/// Makes `mesh` usable as it is: a mesh with no triangles, a vertex or uv that is not finite, or an
/// index (vertex or uv) out of range throws std::invalid_argument naming the element and `what`
/// (a mesh's name in the message, such as "OBJ file 'body.obj'"). Then zero-area and repeated
/// triangles (the first of each group of repeats is kept) and vertices no kept triangle names are
/// dropped, the remaining vertices renumbered in order (uvs are not: uv_triangles keep their
/// indices), one warning names what went, and the report is returned and stored in mesh.repairs;
/// with MeshRepair::refuse the first of them throws instead. A mesh left without triangles is an
/// error. Nothing is changed when it throws.
template <class T>
MeshRepairs sanitize_mesh(TriangleMesh<T>& mesh, MeshRepair repair = MeshRepair::drop,
                          const std::string& what = "triangle mesh")
{
    const MeshRepairs repairs = detail::repair_mesh(mesh, repair, what, detail::UnusedVertices::drop);
    detail::log_repairs(repairs, what);
    return repairs;
}

} // namespace simdverlet
