// Procedural triangle meshes for the mesh-collider tests and benchmarks, wound counter-clockwise
// seen from outside.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <random>
#include <utility>
#include <vector>

#include <simdverlet/collision/mesh_collider.hpp>

namespace simdverlet::testing
{

/// A sphere of 20 x 4^subdivisions triangles with every vertex on the sphere: an icosahedron
/// whose faces are split in four, the new vertices pushed out to the radius, `subdivisions` times.
template <class T>
TriangleMesh<T> icosphere(const Vec3<T>& centre, T radius, int subdivisions)
{
    const double g = (1.0 + std::sqrt(5.0)) / 2.0;
    std::vector<Eigen::Vector3d> v = {{-1, g, 0},  {1, g, 0},  {-1, -g, 0}, {1, -g, 0}, {0, -1, g},  {0, 1, g},
                                      {0, -1, -g}, {0, 1, -g}, {g, 0, -1},  {g, 0, 1},  {-g, 0, -1}, {-g, 0, 1}};
    for (auto& p : v)
        p.normalize();
    std::vector<std::array<std::int32_t, 3>> f = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                                  {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                                  {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                                  {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    for (int s = 0; s < subdivisions; ++s)
    {
        std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> middle;
        const auto mid = [&](std::int32_t a, std::int32_t b) {
            const auto key = std::minmax(a, b);
            const auto it = middle.find(key);
            if (it != middle.end())
                return it->second;
            v.push_back((v[std::size_t(a)] + v[std::size_t(b)]).normalized());
            const auto index = std::int32_t(v.size() - 1);
            middle.emplace(key, index);
            return index;
        };
        std::vector<std::array<std::int32_t, 3>> next;
        for (const auto& t : f)
        {
            const std::int32_t ab = mid(t[0], t[1]), bc = mid(t[1], t[2]), ca = mid(t[2], t[0]);
            next.push_back({t[0], ab, ca});
            next.push_back({t[1], bc, ab});
            next.push_back({t[2], ca, bc});
            next.push_back({ab, bc, ca});
        }
        f = std::move(next);
    }
    TriangleMesh<T> mesh;
    for (const auto& p : v)
        mesh.vertices.push_back(centre + radius * p.cast<T>());
    mesh.triangles = std::move(f);
    return mesh;
}

/// Each triangle's bounding box, in the mesh's order.
template <class T>
std::vector<detail::Bounds<T>> triangle_bounds(const TriangleMesh<T>& mesh)
{
    std::vector<detail::Bounds<T>> boxes;
    for (const auto& t : mesh.triangles)
    {
        detail::Bounds<T> b;
        for (const auto v : t)
            b.add(mesh.vertices[std::size_t(v)].x(), mesh.vertices[std::size_t(v)].y(),
                  mesh.vertices[std::size_t(v)].z());
        boxes.push_back(b);
    }
    return boxes;
}

/// A torus around the y axis: `around` segments along the ring, `across` around the tube, two
/// triangles each (2 x around x across triangles).
template <class T>
TriangleMesh<T> torus(const Vec3<T>& centre, T ring_radius, T tube_radius, int around, int across)
{
    TriangleMesh<T> mesh;
    for (int i = 0; i < around; ++i)
        for (int j = 0; j < across; ++j)
        {
            const double u = 2 * std::numbers::pi * i / around, w = 2 * std::numbers::pi * j / across;
            const double r = double(ring_radius) + double(tube_radius) * std::cos(w);
            mesh.vertices.push_back(
                centre + Vec3<T>(T(r * std::cos(u)), T(double(tube_radius) * std::sin(w)), T(r * std::sin(u))));
        }
    const auto at = [&](int i, int j) { return std::int32_t((i % around) * across + j % across); };
    for (int i = 0; i < around; ++i)
        for (int j = 0; j < across; ++j)
        {
            mesh.triangles.push_back({at(i, j), at(i, j + 1), at(i + 1, j)});
            mesh.triangles.push_back({at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)});
        }
    return mesh;
}

/// An axis-aligned box as 12 triangles facing out.
template <class T>
TriangleMesh<T> box_mesh(const Vec3<T>& lo, const Vec3<T>& hi)
{
    TriangleMesh<T> mesh;
    for (int k = 0; k < 8; ++k)
        mesh.vertices.push_back({k & 1 ? hi.x() : lo.x(), k & 2 ? hi.y() : lo.y(), k & 4 ? hi.z() : lo.z()});
    // Each face as a quad (a, b, c, d), counter-clockwise from outside.
    const std::array<std::array<std::int32_t, 4>, 6> quads = {
        {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}}};
    for (const auto& q : quads)
    {
        mesh.triangles.push_back({q[0], q[1], q[2]});
        mesh.triangles.push_back({q[0], q[2], q[3]});
    }
    return mesh;
}

/// The square [-half, half]^2 in the plane x = 0 as two triangles sharing the diagonal y = z.
/// A height field: n x n squares over [-side / 2, side / 2] in x and z, two triangles each, the
/// vertices at y = height(x, z), wound to face +y.
template <class T, class Height>
TriangleMesh<T> height_field(int n, T side, Height height)
{
    TriangleMesh<T> mesh;
    for (int j = 0; j <= n; ++j)
        for (int i = 0; i <= n; ++i)
        {
            const T x = side * T(i) / T(n) - side / 2, z = side * T(j) / T(n) - side / 2;
            mesh.vertices.emplace_back(x, height(x, z), z);
        }
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
        {
            const int a = j * (n + 1) + i;
            mesh.triangles.push_back({a, a + n + 1, a + 1});
            mesh.triangles.push_back({a + 1, a + n + 1, a + n + 2});
        }
    return mesh;
}

template <class T>
TriangleMesh<T> square_wall(T half)
{
    TriangleMesh<T> mesh;
    mesh.vertices = {{0, -half, -half}, {0, half, -half}, {0, half, half}, {0, -half, half}};
    mesh.triangles = {{0, 1, 2}, {0, 2, 3}};
    return mesh;
}

/// A grid of `columns` x `rows` cells of `spacing` in the x-y plane (x right, y down, as a grid
/// cloth hangs), each cell split into two triangles. Regular: every cell split along the same
/// diagonal. Irregular: each cell's diagonal flipped at random and every interior vertex moved by up
/// to `jitter` x the spacing in x and y, so valences run from 4 to 8 and no two triangles are alike.
/// Vertex 0 is the top-left corner; vertices (columns + 1) at a time are rows.
template <class T>
TriangleMesh<T> grid_mesh(int columns, int rows, T spacing, bool irregular, unsigned seed = 3, T jitter = T(0.3))
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    TriangleMesh<T> mesh;
    for (int r = 0; r <= rows; ++r)
        for (int c = 0; c <= columns; ++c)
        {
            const bool inside = r > 0 && r < rows && c > 0 && c < columns;
            const T dx = irregular && inside ? T(u(rng)) * jitter * spacing : T(0);
            const T dy = irregular && inside ? T(u(rng)) * jitter * spacing : T(0);
            mesh.vertices.emplace_back(T(c) * spacing + dx, T(r) * spacing + dy, T(0));
        }
    std::bernoulli_distribution flip(0.5);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < columns; ++c)
        {
            const std::int32_t a = r * (columns + 1) + c, b = a + 1, d = a + columns + 1, e = d + 1;
            // Counter-clockwise seen from -z, the side a hanging sheet's normal faces.
            if (irregular && flip(rng))
            {
                mesh.triangles.push_back({a, b, d});
                mesh.triangles.push_back({b, e, d});
            }
            else
            {
                mesh.triangles.push_back({a, b, e});
                mesh.triangles.push_back({a, e, d});
            }
        }
    return mesh;
}

/// A side x side square of `cells` squares a side (grid_mesh), with uvs (x, y) / side.
template <class T>
TriangleMesh<T> sheet_mesh(int cells, T side, bool irregular, unsigned seed = 3, T jitter = T(0.3))
{
    TriangleMesh<T> mesh = grid_mesh(cells, cells, side / T(cells), irregular, seed, jitter);
    for (const auto& v : mesh.vertices)
        mesh.uvs.emplace_back(v.x() / side, v.y() / side);
    mesh.uv_triangles = mesh.triangles;
    return mesh;
}

/// A skirt: a cone from a waist of radius `top` at y = 0 down to a hem of radius `bottom` at
/// y = length (+y down), in `rings` rings whose vertex counts follow their circumference, so the
/// rows of triangles between two rings zip together irregularly (valences 5 to 7) rather than
/// as a grid. Every ring starts at angle 0; vertex 0 is on the waist.
template <class T>
TriangleMesh<T> skirt_mesh(T top, T bottom, T length, int rings, int waist_vertices)
{
    TriangleMesh<T> mesh;
    std::vector<std::pair<std::int32_t, int>> ring; // first vertex, count
    for (int k = 0; k <= rings; ++k)
    {
        const T t = T(k) / T(rings), radius = top + (bottom - top) * t;
        const int count = std::max(3, int(std::lround(double(waist_vertices) * double(radius / top))));
        ring.emplace_back(std::int32_t(mesh.vertices.size()), count);
        for (int v = 0; v < count; ++v)
        {
            const double angle = 2 * std::numbers::pi * double(v) / double(count);
            mesh.vertices.emplace_back(radius * T(std::cos(angle)), length * t, radius * T(std::sin(angle)));
        }
    }
    for (int k = 0; k < rings; ++k)
    {
        // Walk both rings at once, always advancing the one whose next vertex is at the smaller angle.
        const auto [a0, na] = ring[std::size_t(k)];
        const auto [b0, nb] = ring[std::size_t(k + 1)];
        int i = 0, j = 0;
        while (i < na || j < nb)
        {
            const std::int32_t a = a0 + i % na, b = b0 + j % nb;
            const bool advance_a = j >= nb || (i < na && double(i + 1) / na < double(j + 1) / nb);
            if (advance_a)
            {
                mesh.triangles.push_back({a, b, a0 + (i + 1) % na});
                ++i;
            }
            else
            {
                mesh.triangles.push_back({a, b, b0 + (j + 1) % nb});
                ++j;
            }
        }
    }
    return mesh;
}

} // namespace simdverlet::testing
