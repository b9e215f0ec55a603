// The garment the garment example and the viewer's garment scene share: a skirt made as a triangle
// mesh (no grid), and the fitting of a user's OBJ garment onto the same body.
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>
#include <vector>

#include <simdverlet/cloth/triangle_mesh.hpp>

namespace garment
{
namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

/// A skirt: a cone from the waistband (radius `top`, at y = 0) to the hem (radius `bottom`, at
/// y = length), in rings whose vertex counts follow their circumference, zipped together by always
/// advancing the ring whose next vertex comes first around: rows of triangles of varying shape,
/// valences 5 to 7. Each ring starts at a different angle, so no seam of aligned vertices runs down.
inline sv::TriangleMesh<float> skirt(float top, float bottom, float length, int rings, int waist_vertices)
{
    sv::TriangleMesh<float> mesh;
    std::vector<std::pair<int, int>> ring; // first vertex, count
    for (int k = 0; k <= rings; ++k)
    {
        const float t = float(k) / float(rings), radius = top + (bottom - top) * t;
        const int count = std::max(3, int(std::lround(float(waist_vertices) * radius / top)));
        const float twist = 0.37f * float(k); // radians: the rings' starts spiral round
        ring.emplace_back(int(mesh.vertices.size()), count);
        for (int v = 0; v < count; ++v)
        {
            const float a = twist + 2.0f * std::numbers::pi_v<float> * float(v) / float(count);
            mesh.vertices.emplace_back(radius * std::cos(a), length * t, radius * std::sin(a));
        }
    }
    for (int k = 0; k < rings; ++k)
    {
        const auto [a0, na] = ring[std::size_t(k)];
        const auto [b0, nb] = ring[std::size_t(k + 1)];
        const float ta = 0.37f * float(k), tb = 0.37f * float(k + 1);
        const auto angle = [](float twist, int i, int n) {
            return twist + 2.0f * std::numbers::pi_v<float> * float(i) / float(n);
        };
        int i = 0, j = 0;
        // Start the lower ring at its vertex nearest the upper ring's first.
        while (angle(tb, j, nb) < ta)
            ++j;
        const int j0 = j;
        while (i < na || j < j0 + nb)
        {
            const int a = a0 + i % na, b = b0 + j % nb;
            const bool advance_a = j >= j0 + nb || (i < na && angle(ta, i + 1, na) < angle(tb, j + 1, nb));
            if (advance_a)
                mesh.triangles.push_back({a, a0 + (i + 1) % na, b});
            else
                mesh.triangles.push_back({a, b0 + (j + 1) % nb, b});
            (advance_a ? i : j) += 1;
        }
    }
    return mesh;
}

/// A garment modelled y-up (as most tools write them) turned to this library's y down, its top at
/// y = 0, centred on the y axis and scaled so its widest extent across x and z is `width`.
inline void fit_to_waist(sv::TriangleMesh<float>& mesh, float width)
{
    Vec3 lo = Vec3::Constant(1e30f), hi = Vec3::Constant(-1e30f);
    for (auto& v : mesh.vertices)
    {
        v.y() = -v.y();
        lo = lo.cwiseMin(v);
        hi = hi.cwiseMax(v);
    }
    const float scale = width / std::max(hi.x() - lo.x(), hi.z() - lo.z());
    const Vec3 middle = 0.5f * (lo + hi);
    for (auto& v : mesh.vertices)
        v = Vec3((v.x() - middle.x()) * scale, (v.y() - lo.y()) * scale, (v.z() - middle.z()) * scale);
}

/// Where a held vertex at `offset` from the body's axis (at the waist's height) is glued: where it
/// is, or pushed straight out to `radius` from the axis when the garment's top lies inside the
/// body, which would otherwise push the vertex off its target every step.
inline Vec3 outside_body(const Vec3& offset, float radius)
{
    const float across = std::hypot(offset.x(), offset.z());
    if (across >= radius)
        return offset;
    if (across == 0.0f)
        return Vec3(radius, offset.y(), 0.0f);
    return Vec3(offset.x() * radius / across, offset.y(), offset.z() * radius / across);
}

} // namespace garment
