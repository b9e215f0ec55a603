// Peirce's cantilever, the textile standard for bending rigidity: a strip clamped level and
// overhanging l droops so that the chord from the ledge to its tip falls below level by the angle
// of the heavy elastica at l / c, c = (G / (density g))^(1/3) its bending length. The elastica
// solved numerically, and the strip as a material cloth, for the tests and the benchmarks.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <numbers>
#include <vector>

#include <simdverlet/simdverlet.hpp>

#include "meshes.hpp"

namespace simdverlet::testing
{

/// The heavy elastica: the chord angle below level, in degrees, from the ledge to the tip of an
/// inextensible strip clamped level and overhanging l bending lengths. theta'' = -(l - s) cos theta
/// (s in bending lengths) with theta(0) = 0 and a free tip, theta'(l) = 0, by shooting on theta'(0)
/// with fourth-order Runge-Kutta.
inline double elastica_chord_degrees(double l)
{
    const auto tip = [l](double start_rate) {
        const int steps = 4000;
        const double h = l / steps;
        double s = 0, theta = 0, rate = start_rate, x = 0, y = 0;
        const auto slope = [l](double at, double angle, double turn) {
            return std::array<double, 4>{turn, -(l - at) * std::cos(angle), std::cos(angle), std::sin(angle)};
        };
        for (int k = 0; k < steps; ++k)
        {
            const auto a = slope(s, theta, rate);
            const auto b = slope(s + h / 2, theta + h / 2 * a[0], rate + h / 2 * a[1]);
            const auto c = slope(s + h / 2, theta + h / 2 * b[0], rate + h / 2 * b[1]);
            const auto d = slope(s + h, theta + h * c[0], rate + h * c[1]);
            theta += h / 6 * (a[0] + 2 * b[0] + 2 * c[0] + d[0]);
            rate += h / 6 * (a[1] + 2 * b[1] + 2 * c[1] + d[1]);
            x += h / 6 * (a[2] + 2 * b[2] + 2 * c[2] + d[2]);
            y += h / 6 * (a[3] + 2 * b[3] + 2 * c[3] + d[3]);
            s += h;
        }
        return std::array<double, 3>{rate, x, y};
    };
    double low = 0, high = l * l; // the tip's curvature rises with the clamp's
    for (int k = 0; k < 60; ++k)
    {
        const double mid = (low + high) / 2;
        (tip(mid)[0] > 0 ? high : low) = mid;
    }
    const auto end = tip(low);
    return std::atan2(end[2], end[1]) * 180 / std::numbers::pi;
}

struct Cantilever
{
    double overhang = 2;  ///< bending lengths
    int cells_along = 16; ///< columns of triangles over the overhang; the strip is a quarter as wide
    bool irregular = false;
    double turn = 0;      ///< radians about the vertical: the strip's direction in the x-z plane
    double stretch = 1e4; ///< N/m
    double seconds = 3;
    int substeps = 4;
    double bending = 0; ///< N m; 0: the rigidity of a 2 cm bending length at 0.2 kg/m^2
};

/// What a settled cantilever shows: its chord angle below level at the end, and a second before.
struct CantileverHang
{
    double degrees = 0, second_before = 0;
};

/// The bending length of a cantilever's strip, in metres.
inline double bending_length(const Cantilever& c)
{
    constexpr double gravity = 9.81, density = 0.2;
    return c.bending > 0 ? std::cbrt(c.bending / (density * gravity)) : 0.02;
}

/// A strip of 0.2 kg/m^2 (a bending length of 2 cm unless c.bending says otherwise), clamped level
/// along its first two columns of vertices and overhanging `overhang` bending lengths, settled for
/// `seconds`: the chord angle from the ledge to the middle of its tip, in degrees below level, at
/// the end and a second before. `setup` sees the cloth first.
inline CantileverHang cantilever_hang(const Cantilever& c, const std::function<void(Cloth<double>&)>& setup = {})
{
    constexpr double gravity = 9.81, density = 0.2;
    const double length_scale = bending_length(c);
    const double rigidity = density * gravity * std::pow(length_scale, 3);
    const double length = c.overhang * length_scale, spacing = length / c.cells_along;
    const int rows = c.cells_along / 4;
    auto mesh = grid_mesh<double>(c.cells_along + 1, rows, spacing, c.irregular);
    const Eigen::Vector3d along(std::cos(c.turn), 0, std::sin(c.turn)), across(-std::sin(c.turn), 0, std::cos(c.turn));
    std::vector<double> reach; // how far along the strip each vertex lies at rest
    for (auto& v : mesh.vertices)
    {
        reach.push_back(v.x());
        v = v.x() * along + v.y() * across;
    }
    Simulation<double> sim;
    auto strip = add_mesh_cloth(
        sim, {.mesh = mesh,
              .material =
                  ClothMaterial<double>{.density = density, .stretch = c.stretch, .bending = rigidity, .damping = 20},
              .pinned = [&](std::size_t v) { return reach[v] < 1.5 * spacing; }});
    if (setup)
        setup(strip);
    const std::size_t columns = std::size_t(c.cells_along) + 2;
    const auto chord_degrees = [&] {
        const Eigen::Vector3d tip = strip.position(std::size_t(rows / 2) * columns + columns - 1);
        const Eigen::Vector3d ledge = spacing * along + (rows / 2) * spacing * across;
        const Eigen::Vector3d chord = tip - ledge;
        return std::atan2(chord.y(), chord.dot(along)) * 180 / std::numbers::pi;
    };
    const int frames = int(c.seconds * 60);
    CantileverHang hang;
    for (int frame = 0; frame < frames; ++frame)
    {
        if (frame == frames - 60)
            hang.second_before = chord_degrees();
        sim.step({.dt = 1.0 / 60, .damping = 1.0, .gravity = {0, gravity, 0}, .substeps = c.substeps});
    }
    hang.degrees = chord_degrees();
    return hang;
}

/// The chord angle of cantilever_hang at the end.
inline double cantilever_chord_degrees(const Cantilever& c, const std::function<void(Cloth<double>&)>& setup = {})
{
    return cantilever_hang(c, setup).degrees;
}

} // namespace simdverlet::testing
