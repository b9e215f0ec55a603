// The garment scenes of DESIGN section 7, built in C++ the way ../shared/scenes/make_scenes.py
// builds its assets, in the library's y-down world: a 2 m x 2 m sheet of 100 x 100 vertices,
// irregularly triangulated, and a 0.5 m icosphere resting on the floor y = 0. The benchmarks
// (bench/garment.cpp) and the tests read the same figures from them.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
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
