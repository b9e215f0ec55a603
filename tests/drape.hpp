// The textile tests a material cloth is held to, as scenes for the tests and the benchmarks.
//   Cusick's drape test (BS 5058, ISO 9073-9): a disc of fabric 30 cm across clamped on a
//   support 18 cm across; the drape coefficient is the share of the overhanging ring that its
//   shadow still covers (1 for card, near 0 for a fabric that hangs straight down).
//   The pushed curtain: a 1 m curtain of 5 cm edges hung from a rail, pushed aside by a 30 cm box
//   running through its lower middle, the box then taken away.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <utility>
#include <vector>

#include <simdverlet/simdverlet.hpp>

#include "meshes.hpp"

namespace simdverlet::testing
{

/// A flat disc in the x-z plane at height y, of rings `spacing` apart: ring k has 6 k vertices,
/// turned half a step from the ring inside it, so the triangles are near equilateral.
template <class T>
TriangleMesh<T> disc_mesh(T radius, T spacing, T y = T(0))
{
    TriangleMesh<T> mesh;
    const int rings = int(std::lround(radius / spacing));
    mesh.vertices.push_back(Vec3<T>(0, y, 0));
    std::vector<std::size_t> first = {0};
    for (int k = 1; k <= rings; ++k)
    {
        first.push_back(mesh.vertices.size());
        for (int j = 0; j < 6 * k; ++j)
        {
            const double a = 2 * std::numbers::pi * (j + 0.5 * (k % 2)) / (6 * k);
            mesh.vertices.push_back(Vec3<T>(T(k * spacing * std::cos(a)), y, T(k * spacing * std::sin(a))));
        }
    }
    const auto angle = [&](std::size_t v) {
        return std::atan2(double(mesh.vertices[v].z()), double(mesh.vertices[v].x()));
    };
    for (int k = 1; k <= rings; ++k)
    {
        // Walk the inner and the outer ring together by angle from the outer ring's first vertex,
        // one triangle per step along either, round to where the walk began.
        const double from = angle(first[std::size_t(k)]);
        const auto ring = [&](int r) {
            std::vector<std::pair<double, std::size_t>> around;
            const std::size_t count = r == 0 ? 1 : std::size_t(6 * r);
            for (std::size_t q = 0; q < count; ++q)
            {
                const std::size_t v = first[std::size_t(r)] + q;
                const double turn = std::fmod(angle(v) - from + 4 * std::numbers::pi, 2 * std::numbers::pi);
                around.emplace_back(turn, v);
            }
            std::sort(around.begin(), around.end());
            around.emplace_back(around.front().first + 2 * std::numbers::pi, around.front().second);
            return around;
        };
        const auto inner = ring(k - 1), outer = ring(k);
        std::size_t i = 0, o = 0;
        const std::size_t inner_steps = k == 1 ? 0 : inner.size() - 1; // the centre is one vertex
        while (o + 1 < outer.size() || i < inner_steps)
        {
            const bool step_out = i >= inner_steps ||
                                  (o + 1 < outer.size() && outer[o + 1].first <= inner[i + 1].first);
            if (step_out)
            {
                mesh.triangles.push_back({int(outer[o].second), int(inner[i].second), int(outer[o + 1].second)});
                ++o;
            }
            else
            {
                mesh.triangles.push_back({int(outer[o].second), int(inner[i].second), int(inner[i + 1].second)});
                ++i;
            }
        }
    }
    return mesh;
}

/// Cusick's drape coefficient of `fabric` after `seconds`: the disc is clamped (pinned) within
/// 9 cm of its centre and let fall; its triangles' shadow is rasterised on a 2 mm grid, and the
/// coefficient is the covered share of the ring from 9 to 15 cm.
inline double cusick_drape_coefficient(const ClothMaterial<double>& fabric, double seconds = 3.0, double spacing = 0.01)
{
    constexpr double support = 0.09, radius = 0.15;
    const auto mesh = disc_mesh<double>(radius, spacing);
    Simulation<double> sim;
    ClothMaterial<double> damped = fabric;
    damped.damping = 4.0; // settles within the seconds; the equilibrium does not depend on it
    const auto disc = add_mesh_cloth(sim, {.mesh = mesh, .material = damped, .pinned = [&](std::size_t v) {
                                               return mesh.vertices[v].norm() < support + 1e-9;
                                           }});
    for (int frame = 0; frame < int(seconds * 60); ++frame)
        sim.step({.dt = 1.0 / 60, .damping = 1.0, .gravity = {0, 9.81, 0}, .substeps = 4});
    constexpr double cell = 0.002;
    const int cells = int(std::lround(2 * radius / cell));
    std::vector<char> covered(std::size_t(cells * cells), 0);
    const auto column = [&](double x) { return (x + radius) / cell; };
    for (const auto& t : mesh.triangles)
    {
        Eigen::Vector2d p[3];
        for (int j = 0; j < 3; ++j)
        {
            const auto q = disc.position(std::size_t(t[std::size_t(j)]));
            p[j] = Eigen::Vector2d(column(q.x()), column(q.z()));
        }
        const double lo_x = std::min({p[0].x(), p[1].x(), p[2].x()}), hi_x = std::max({p[0].x(), p[1].x(), p[2].x()});
        const double lo_z = std::min({p[0].y(), p[1].y(), p[2].y()}), hi_z = std::max({p[0].y(), p[1].y(), p[2].y()});
        const auto cross = [](const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c) {
            return (b.x() - a.x()) * (c.y() - a.y()) - (b.y() - a.y()) * (c.x() - a.x());
        };
        const double area = cross(p[0], p[1], p[2]);
        for (int a = std::max(0, int(lo_x)); a <= std::min(cells - 1, int(hi_x)); ++a)
            for (int b = std::max(0, int(lo_z)); b <= std::min(cells - 1, int(hi_z)); ++b)
            {
                const Eigen::Vector2d c(a + 0.5, b + 0.5);
                const double w0 = cross(p[1], p[2], c), w1 = cross(p[2], p[0], c), w2 = cross(p[0], p[1], c);
                if (area != 0 && (area > 0 ? w0 >= 0 && w1 >= 0 && w2 >= 0 : w0 <= 0 && w1 <= 0 && w2 <= 0))
                    covered[std::size_t(a * cells + b)] = 1;
            }
    }
    int ring = 0, shadow = 0;
    for (int a = 0; a < cells; ++a)
        for (int b = 0; b < cells; ++b)
        {
            const double r = std::hypot((a + 0.5) * cell - radius, (b + 0.5) * cell - radius);
            if (r > support && r <= radius)
            {
                ++ring;
                shadow += covered[std::size_t(a * cells + b)];
            }
        }
    return double(shadow) / ring;
}

/// The pushed curtain: a cotton curtain 1 m square of 5 cm edges, hung from a rail (its top row
/// pinned) in the x-y plane, y down; a 30 cm box centred 0.6 m below the rail runs along z
/// through its middle from z = -0.5 to 0.15 between frames 8 and 32, and is taken away after
/// frame 32. Returns the bottom row's mean depth below the rail, in metres, after each frame.
inline std::vector<double> pushed_curtain(int frames)
{
    auto mesh = grid_mesh<double>(20, 20, 0.05, false);
    for (auto& v : mesh.vertices)
        v = Vec3<double>(v.x() - 0.5, v.y(), 0.0);
    Simulation<double> sim;
    const auto curtain = add_mesh_cloth(sim, {.mesh = mesh,
                                              .material = ClothMaterial<double>::cotton(),
                                              .pinned = [&](std::size_t v) { return mesh.vertices[v].y() < 1e-9; }});
    auto colliders = add_colliders(sim, {});
    auto& box = colliders.add(BoxCollider<double>({.inside = false}, {.friction = 0.3}));
    const auto place = [&](double z) {
        box.set_bounds(Vec3<double>(-0.15, 0.45, z - 0.15), Vec3<double>(0.15, 0.75, z + 0.15));
    };
    place(-0.5);
    std::vector<double> depth;
    for (int frame = 1; frame <= frames; ++frame)
    {
        const double t = std::clamp((frame - 8) / 24.0, 0.0, 1.0);
        place(-0.5 + 0.65 * t);
        box.enabled = frame <= 32;
        sim.step({.dt = 1.0 / 60, .damping = 1.0, .gravity = {0, 9.81, 0}, .substeps = 4});
        double sum = 0;
        int bottom = 0;
        for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
            if (mesh.vertices[v].y() > 1.0 - 1e-9)
            {
                sum += curtain.position(v).y();
                ++bottom;
            }
        depth.push_back(sum / bottom);
    }
    return depth;
}

} // namespace simdverlet::testing
