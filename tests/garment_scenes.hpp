// The garment scenes of DESIGN section 7, built in C++ the way ../shared/scenes/make_scenes.py
// builds its assets, in the library's y-down world: a 2 m x 2 m sheet of 100 x 100 vertices,
// irregularly triangulated, and a 0.5 m icosphere resting on the floor y = 0. The benchmarks
// (bench/garment.cpp) and the tests read the same figures from them.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <unordered_map>
#include <vector>

#include <simdverlet/simdverlet.hpp>

#include "meshes.hpp"

namespace simdverlet::testing
{

/// The garment sheet: `side` vertices a row, `size` metres across, lying flat at height `y` (y is
/// down) in the x-z plane centred on the y axis; vertex 0 and vertex side - 1 are the corners of the
/// edge z = -size / 2.
template <class T>
TriangleMesh<T> garment_sheet(int side = 100, T size = T(2), T y = T(-1.3), unsigned seed = 12345)
{
    auto mesh = sheet_mesh<T>(side - 1, size, true, seed);
    for (auto& v : mesh.vertices)
        v = Vec3<T>(v.x() - size / T(2), y, v.y() - size / T(2));
    return mesh;
}

/// Every edge of a cloth's triangles once, as particle pairs, with its rest length.
template <class T>
struct EdgeRuler
{
    std::vector<std::array<std::int32_t, 2>> edges;
    std::vector<T> rest;

    explicit EdgeRuler(const Cloth<T>& cloth, const std::vector<Vec3<T>>& rest_positions)
    {
        for (const auto& t : cloth.triangles())
            for (int k = 0; k < 3; ++k)
            {
                const auto a = t[std::size_t(k)], b = t[std::size_t((k + 1) % 3)];
                edges.push_back({std::min(a, b), std::max(a, b)});
            }
        std::sort(edges.begin(), edges.end());
        edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
        for (auto& e : edges)
        {
            rest.push_back((rest_positions[std::size_t(e[0])] - rest_positions[std::size_t(e[1])]).norm());
            e = {std::int32_t(cloth.index(std::size_t(e[0]))), std::int32_t(cloth.index(std::size_t(e[1])))};
        }
    }

    /// The largest |length / rest - 1| over the edges now.
    T worst_strain(const State3<T>& s) const
    {
        T worst = T(0);
        for (std::size_t k = 0; k < edges.size(); ++k)
        {
            const auto a = std::size_t(edges[k][0]), b = std::size_t(edges[k][1]);
            const T dx = s.x()[a] - s.x()[b], dy = s.y()[a] - s.y()[b], dz = s.z()[a] - s.z()[b];
            worst = std::max(worst, std::abs(std::sqrt(dx * dx + dy * dy + dz * dz) / rest[k] - T(1)));
        }
        return worst;
    }

    /// How many edges are strained past `bound` now.
    std::size_t count_strained(const State3<T>& s, T bound) const
    {
        std::size_t strained = 0;
        for (std::size_t k = 0; k < edges.size(); ++k)
        {
            const auto a = std::size_t(edges[k][0]), b = std::size_t(edges[k][1]);
            const T dx = s.x()[a] - s.x()[b], dy = s.y()[a] - s.y()[b], dz = s.z()[a] - s.z()[b];
            strained += std::abs(std::sqrt(dx * dx + dy * dy + dz * dz) / rest[k] - T(1)) > bound ? 1 : 0;
        }
        return strained;
    }
};

/// Edge-triangle crossings within a cloth now: pairs of one of its edges and one of its triangles
/// that share no vertex, where the segment passes through the triangle. A cloth that has gone
/// through itself has them; one that only touches itself has none.
template <class T>
int edge_triangle_crossings(const Cloth<T>& cloth, const EdgeRuler<T>& ruler, const State3<T>& s)
{
    const auto at = [&](std::int32_t particle) -> Eigen::Vector3d {
        return s.position(std::size_t(particle)).template cast<double>();
    };
    std::vector<std::array<std::int32_t, 3>> triangles;
    for (const auto& t : cloth.triangles())
        triangles.push_back({std::int32_t(cloth.index(std::size_t(t[0]))), std::int32_t(cloth.index(std::size_t(t[1]))),
                             std::int32_t(cloth.index(std::size_t(t[2])))});
    double mean = 0;
    for (const T r : ruler.rest)
        mean += double(r);
    const double cell = 2.5 * mean / double(ruler.rest.size());
    const auto key = [](std::int64_t x, std::int64_t y, std::int64_t z) {
        return (x * 73856093) ^ (y * 19349663) ^ (z * 83492791);
    };
    const auto floor_cell = [&](double v) { return std::int64_t(std::floor(v / cell)); };
    // A triangle stretched across more than a few cells (a cloth torn apart by a blow-up) is kept
    // aside and tried against every edge, so a wild pose costs time, not memory.
    const auto cells = [&](const Eigen::Vector3d& lo, const Eigen::Vector3d& hi) {
        double count = 1;
        for (int k = 0; k < 3; ++k)
            count *= double(floor_cell(hi[k]) - floor_cell(lo[k]) + 1);
        return count;
    };
    std::unordered_map<std::int64_t, std::vector<std::int32_t>> grid;
    std::vector<std::int32_t> wide;
    for (std::size_t t = 0; t < triangles.size(); ++t)
    {
        const Eigen::Vector3d a = at(triangles[t][0]), b = at(triangles[t][1]), c = at(triangles[t][2]);
        const Eigen::Vector3d lo = a.cwiseMin(b).cwiseMin(c), hi = a.cwiseMax(b).cwiseMax(c);
        if (!(cells(lo, hi) <= 64))
        {
            wide.push_back(std::int32_t(t));
            continue;
        }
        for (auto x = floor_cell(lo.x()); x <= floor_cell(hi.x()); ++x)
            for (auto y = floor_cell(lo.y()); y <= floor_cell(hi.y()); ++y)
                for (auto z = floor_cell(lo.z()); z <= floor_cell(hi.z()); ++z)
                    grid[key(x, y, z)].push_back(std::int32_t(t));
    }
    int crossings = 0;
    std::vector<std::int32_t> seen;
    for (const auto& e : ruler.edges)
    {
        const Eigen::Vector3d p = at(e[0]), q = at(e[1]);
        const Eigen::Vector3d lo = p.cwiseMin(q), hi = p.cwiseMax(q);
        seen.assign(wide.begin(), wide.end());
        if (!(cells(lo, hi) <= 64))
        {
            seen.resize(triangles.size());
            std::iota(seen.begin(), seen.end(), 0);
        }
        else
            for (auto x = floor_cell(lo.x()); x <= floor_cell(hi.x()); ++x)
                for (auto y = floor_cell(lo.y()); y <= floor_cell(hi.y()); ++y)
                    for (auto z = floor_cell(lo.z()); z <= floor_cell(hi.z()); ++z)
                        if (const auto it = grid.find(key(x, y, z)); it != grid.end())
                            seen.insert(seen.end(), it->second.begin(), it->second.end());
        std::sort(seen.begin(), seen.end());
        seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
        for (const auto t : seen)
        {
            const auto& tri = triangles[std::size_t(t)];
            if (std::find(tri.begin(), tri.end(), e[0]) != tri.end() ||
                std::find(tri.begin(), tri.end(), e[1]) != tri.end())
                continue;
            // Moller-Trumbore, the segment as p + s (q - p), s in [0, 1].
            const Eigen::Vector3d a = at(tri[0]), e1 = at(tri[1]) - a, e2 = at(tri[2]) - a, d = q - p;
            const Eigen::Vector3d h = d.cross(e2);
            const double det = e1.dot(h);
            if (std::abs(det) < 1e-18)
                continue;
            const Eigen::Vector3d from = p - a;
            const double u = from.dot(h) / det;
            const Eigen::Vector3d k = from.cross(e1);
            const double v = d.dot(k) / det, along = e2.dot(k) / det;
            crossings += u >= 0 && v >= 0 && u + v <= 1 && along >= 0 && along <= 1 ? 1 : 0;
        }
    }
    return crossings;
}

/// A capsule as a closed triangle mesh wound outward: an icosphere of `subdivisions` whose upper
/// half (y < 0, y being down) is moved to the top end of the segment and its lower half to the
/// bottom end, the triangles across its equator stretched into the cylinder.
template <class T>
TriangleMesh<T> capsule_mesh(T top, T bottom, T radius, int subdivisions)
{
    auto mesh = icosphere<T>(Vec3<T>::Zero(), T(1), subdivisions);
    for (auto& v : mesh.vertices)
        v = Vec3<T>(radius * v.x(), (v.y() < T(0) ? top : bottom) + radius * v.y(), radius * v.z());
    return mesh;
}

/// Particles of [begin, end) more than `depth` inside a sphere.
template <class T>
int inside_sphere(const State3<T>& s, std::size_t begin, std::size_t end, const Vec3<T>& centre, T radius, T depth)
{
    int inside = 0;
    for (std::size_t i = begin; i < end; ++i)
        inside += (s.position(i) - centre).norm() < radius - depth ? 1 : 0;
    return inside;
}

} // namespace simdverlet::testing
