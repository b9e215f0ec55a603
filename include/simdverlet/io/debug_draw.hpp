// Debug geometry of what the solver holds: one segment per live constraint, a dot per particle,
// optional velocity whiskers, and collider outlines for the same picture. It draws the constraint
// set, not the grid a cloth was built as: the two differ exactly when something is mis-wired, which
// is why the dedup rule below never hides a one-way constraint.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

#include <Eigen/Geometry>

#include "simdverlet/collision/colliders.hpp"
#include "simdverlet/collision/mesh_collider.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

enum class SegmentKind
{
    spring,   ///< a symmetric pair i -> j and j -> i, drawn once
    one_way,  ///< a constraint whose neighbour has no live slot pointing back, drawn by its owner
    velocity, ///< a whisker: one frame's travel, scaled by velocity_scale
};

template <class T>
struct DebugSegment
{
    Vec3<T> a, b;
    SegmentKind kind;
};

template <class T>
struct DebugDot
{
    Vec3<T> position;
    bool pinned;
};

/// What debug_lines and outline return, ready for svg.hpp or any line renderer.
template <class T>
struct DebugGeometry
{
    std::vector<DebugSegment<T>> segments;
    std::vector<DebugDot<T>> dots;
    std::vector<std::vector<Vec3<T>>> outlines; ///< collider outlines as polylines

    std::size_t count(SegmentKind kind) const
    {
        std::size_t n = 0;
        for (const auto& s : segments)
            n += s.kind == kind ? 1 : 0;
        return n;
    }

    DebugGeometry& operator+=(const DebugGeometry& other)
    {
        segments.insert(segments.end(), other.segments.begin(), other.segments.end());
        dots.insert(dots.end(), other.dots.begin(), other.dots.end());
        outlines.insert(outlines.end(), other.outlines.begin(), other.outlines.end());
        return *this;
    }
};

struct DebugOptions
{
    ParticleRange particles = {}; ///< whose slots and dots to draw; default every particle
    double velocity_scale = 0;    ///< > 0 adds a whisker per particle of velocity_scale x one frame's travel:
                                  ///< the quickest way to see a sheet start to vibrate before it shows as motion
    bool dots = true;             ///< a dot per particle, pinned ones flagged
};

/// The constraint set and particles of `sim` as debug geometry. A symmetric pair (i -> j and
/// j -> i, both live) is one spring segment; a one-way constraint is a one_way segment drawn by its
/// owner. Deduplicating on j < i alone would hide exactly that asymmetry.
template <class T>
DebugGeometry<T> debug_lines(const Simulation<T>& sim, const DebugOptions& options = {})
{
    options.particles.check();
    DebugGeometry<T> g;
    const auto& s = sim.state();
    const auto& k = sim.constraint_layers();
    const auto bounds = options.particles.resolve(sim.size());
    const std::size_t begin = bounds.first, end = bounds.second; // named, not bound: lambdas capture them
    const auto inside = [&](std::size_t j) { return j >= begin && j < end; };
    for (std::size_t i = begin; i < end; ++i)
    {
        // Every layer's slots: a mesh cloth's springs past the first four are in further layers.
        k.for_each_wired(i, [&](SlotRef, std::int32_t neighbour, T, T stiffness) {
            if (stiffness == T(0))
                return;
            const auto j = std::size_t(neighbour);
            const auto back = k.slot_to(j, std::int32_t(i));
            const bool paired = back && k.live(j, *back);
            // A pair is drawn by its lower owner, or by i when the other owner is outside the range.
            if (paired && i > j && inside(j))
                return;
            g.segments.push_back({s.position(i), s.position(j), paired ? SegmentKind::spring : SegmentKind::one_way});
        });
        if (options.dots)
            g.dots.push_back({s.position(i), s.is_pinned(i)});
        if (options.velocity_scale > 0)
            g.segments.push_back(
                {s.position(i), s.position(i) + T(options.velocity_scale) * s.velocity(i), SegmentKind::velocity});
    }
    return g;
}

namespace detail
{
/// A circle in the x-y plane at z, 64 segments: the silhouette of a sphere in the view the
/// pictures draw (x right, y down), which is the outline that reads as "what the cloth lies on".
template <class T>
std::vector<Vec3<T>> circle_xy(const Vec3<T>& centre, T radius)
{
    std::vector<Vec3<T>> line;
    for (int k = 0; k <= 64; ++k)
    {
        const double a = 2.0 * std::numbers::pi * k / 64;
        line.push_back(centre + Vec3<T>(T(radius * std::cos(a)), T(radius * std::sin(a)), T(0)));
    }
    return line;
}
} // namespace detail

/// The outline of one collider, in the x-y view: a plane as a cross of two in-plane tangents
/// (one tangent alone can lie edge-on to the view and vanish), a sphere's great circle, a capsule's
/// two end circles and side lines, a box's x-y rectangle, a mesh's triangles. An SDF has no silhouette to derive and
/// draws nothing; a disabled collider draws nothing.
template <class T>
DebugGeometry<T> outline(const Collider<T>& collider)
{
    DebugGeometry<T> g;
    if (!collider.enabled)
        return g;
    switch (collider.kind())
    {
    case ColliderKind::plane:
    {
        const auto* plane = static_cast<const PlaneCollider<T>*>(&collider);
        const Vec3<T> n = plane->normal();
        // Cross with the axis the normal is least aligned with, so the tangent is never degenerate.
        const Vec3<T> helper = std::abs(n.y()) < T(0.9) ? Vec3<T>(0, 1, 0) : Vec3<T>(1, 0, 0);
        const Vec3<T> t = n.cross(helper).normalized();
        const Vec3<T> u = n.cross(t);
        const Vec3<T> c = n * plane->offset();
        g.outlines.push_back({c - T(20) * t, c + T(20) * t});
        g.outlines.push_back({c - T(20) * u, c + T(20) * u});
        break;
    }
    case ColliderKind::sphere:
    {
        const auto& sphere = static_cast<const SphereCollider<T>&>(collider).shape();
        g.outlines.push_back(detail::circle_xy(sphere.center, sphere.radius));
        break;
    }
    case ColliderKind::capsule:
    {
        const auto& c = static_cast<const CapsuleCollider<T>&>(collider).shape();
        g.outlines.push_back(detail::circle_xy(c.a, c.radius));
        g.outlines.push_back(detail::circle_xy(c.b, c.radius));
        const Vec3<T> d(c.b.x() - c.a.x(), c.b.y() - c.a.y(), T(0));
        if (d.norm() > T(1e-9))
        {
            const Vec3<T> side = Vec3<T>(-d.y(), d.x(), T(0)).normalized() * c.radius;
            g.outlines.push_back({c.a + side, c.b + side});
            g.outlines.push_back({c.a - side, c.b - side});
        }
        break;
    }
    case ColliderKind::box:
    {
        const auto& b = static_cast<const BoxCollider<T>&>(collider).shape();
        const T z = b.min.z();
        g.outlines.push_back({{b.min.x(), b.min.y(), z},
                              {b.max.x(), b.min.y(), z},
                              {b.max.x(), b.max.y(), z},
                              {b.min.x(), b.max.y(), z},
                              {b.min.x(), b.min.y(), z}});
        break;
    }
    case ColliderKind::sdf:
        break;
    case ColliderKind::triangle_mesh:
    {
        const auto& mesh = static_cast<const TriangleMeshCollider<T>&>(collider);
        for (const auto& tri : mesh.triangles())
        {
            const auto& v = mesh.vertices();
            const Vec3<T>& a = v[std::size_t(tri[0])];
            g.outlines.push_back({a, v[std::size_t(tri[1])], v[std::size_t(tri[2])], a});
        }
        break;
    }
    }
    return g;
}

/// Every collider of a set, outlined.
template <class T>
DebugGeometry<T> outline(const ColliderSet<T>& set)
{
    DebugGeometry<T> g;
    for (std::size_t k = 0; k < set.size(); ++k)
        g += outline(set[k]);
    return g;
}

} // namespace simdverlet
