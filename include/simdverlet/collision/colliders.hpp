// Colliders: things for particles to hit, applied as position projections after integration. The
// analytic shapes (plane, sphere, capsule, box, signed distance field), each written once as
// geometry over V through the contact response of collider.hpp; collider_set.hpp runs a list of
// them as one pass (add_colliders), and is included here so that one include gives both.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "simdverlet/collision/collider.hpp"
#include "simdverlet/collision/collider_set.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/projection.hpp"

namespace simdverlet
{

/// A half-space: everything with n . x >= offset + margin is legal; particles below are pushed up
/// onto the plane. The ground, a wall, a slope.
template <class T>
class PlaneCollider : public Collider<T>
{
  public:
    ColliderKind kind() const noexcept override { return ColliderKind::plane; }

    struct Shape
    {
        Vec3<T> normal = Vec3<T>(T(0), T(-1), T(0)); ///< into the legal side; any length > 0. Default: up
                                                     ///< in the +y-down pictures this library draws
        T offset = T(0); ///< signed distance of the plane from the origin along the normal: a floor at
                         ///< y = 6 with normal (0, -1, 0) has offset -6
    };

    explicit PlaneCollider(const Shape& shape, const ContactMaterial<T>& material = {}) : Collider<T>(material)
    {
        set_normal(shape.normal);
        set_offset(shape.offset);
    }

    /// Re-aims the plane; the normal is normalised here so the projection can assume unit length.
    void set_normal(const Vec3<T>& n)
    {
        detail::check_point("normal", n);
        const T len = n.norm();
        if (!(len > detail::kTinyLength<T>))
            detail::raise<std::invalid_argument>("simdverlet: plane normal (" + detail::number(n.x()) + ", " +
                                                 detail::number(n.y()) + ", " + detail::number(n.z()) +
                                                 ") is degenerate: it has no direction");
        m_normal = n / len;
    }
    void set_offset(T offset)
    {
        if (!std::isfinite(offset))
            detail::raise<std::invalid_argument>("simdverlet: plane offset must be finite, got " +
                                                 detail::number(offset));
        m_offset = offset;
    }
    const Vec3<T>& normal() const noexcept { return m_normal; }
    T offset() const noexcept { return m_offset; }

    void add_planes(const PlaneQuery& query, std::vector<ContactPlane>& out) const override
    {
        const Vec3<double> n = m_normal.template cast<double>();
        const double offset = double(m_offset) + double(this->material().margin);
        for (std::size_t i = query.begin; i < query.end; ++i)
            if (n.dot((*query.at)[i - query.begin]) - offset <= query.reach_of(i))
                out.push_back({i, n, offset, double(this->material().friction)});
    }

  protected:
    int project_range(const StateArrays<T>& s, std::size_t begin, std::size_t end) override
    {
        const Vec3<T> n = m_normal;
        const T limit = m_offset + this->material().margin;
        const auto& m = this->material();
        return this->run(s, begin, end, [&](auto& p, const auto& movable) {
            using V = std::decay_t<decltype(p.x)>;
            const V nx(n.x()), ny(n.y()), nz(n.z());
            const V depth = V(limit) - (p.x * nx + p.y * ny + p.z * nz);
            return detail::respond(p, nx, ny, nz, depth, movable && (depth > V(T(0))), m);
        });
    }

  private:
    Vec3<T> m_normal;
    T m_offset = T(0);
};

/// A sphere. Outside-keeping by default (a ball for a cloth to drape over); inside = true keeps
/// particles within it: a bowl.
template <class T>
class SphereCollider : public Collider<T>
{
  public:
    ColliderKind kind() const noexcept override { return ColliderKind::sphere; }

    struct Shape
    {
        Vec3<T> center = Vec3<T>::Zero(); ///< world position
        T radius = T(1);                  ///< world units, >= 0
        bool inside = false;              ///< true: keep particles inside (a bowl)
    };

    explicit SphereCollider(const Shape& shape, const ContactMaterial<T>& material = {}) : Collider<T>(material)
    {
        detail::check_point("center", shape.center);
        detail::check_radius(shape.radius);
        m_shape = shape;
    }

    /// Moves the sphere. Nothing is cached, so this is live between frames.
    void move_to(const Vec3<T>& center)
    {
        detail::check_point("center", center);
        m_shape.center = center;
    }
    void set_radius(T radius)
    {
        detail::check_radius(radius);
        m_shape.radius = radius;
    }
    void set_inside(bool inside) noexcept { m_shape.inside = inside; }
    const Shape& shape() const noexcept { return m_shape; }

    void add_planes(const PlaneQuery& query, std::vector<ContactPlane>& out) const override
    {
        const auto& m = this->material();
        const double sign = m_shape.inside ? -1.0 : 1.0;
        const Vec3<double> c = m_shape.center.template cast<double>();
        for (std::size_t i = query.begin; i < query.end; ++i)
            detail::add_radial_plane(i, (*query.at)[i - query.begin], c,
                                     double(m_shape.radius) + sign * double(m.margin), sign, query.reach_of(i),
                                     double(m.friction), out);
    }

  protected:
    int project_range(const StateArrays<T>& s, std::size_t begin, std::size_t end) override
    {
        const auto& m = this->material();
        const T sign = m_shape.inside ? T(-1) : T(1);
        const T target = m_shape.radius + sign * m.margin;
        const Vec3<T> c = m_shape.center;
        return this->run(s, begin, end, [&](auto& p, const auto& movable) {
            using V = std::decay_t<decltype(p.x)>;
            return detail::respond_radial(p, V(c.x()), V(c.y()), V(c.z()), target, sign, movable, m);
        });
    }

  private:
    Shape m_shape;
};

/// Everything within `radius` of the segment a-b: a limb, a branch, a rail. inside = true makes it
/// a tube to stay within.
template <class T>
class CapsuleCollider : public Collider<T>
{
  public:
    ColliderKind kind() const noexcept override { return ColliderKind::capsule; }

    struct Shape
    {
        Vec3<T> a = Vec3<T>::Zero();           ///< one end of the axis
        Vec3<T> b = Vec3<T>(T(1), T(0), T(0)); ///< the other end; a == b is a sphere
        T radius = T(0.5);                     ///< world units, >= 0
        bool inside = false;                   ///< true: keep particles inside (a tube)
    };

    explicit CapsuleCollider(const Shape& shape, const ContactMaterial<T>& material = {}) : Collider<T>(material)
    {
        detail::check_point("end a", shape.a);
        detail::check_point("end b", shape.b);
        detail::check_radius(shape.radius);
        m_shape = shape;
    }

    void set_segment(const Vec3<T>& a, const Vec3<T>& b)
    {
        detail::check_point("end a", a);
        detail::check_point("end b", b);
        m_shape.a = a;
        m_shape.b = b;
    }
    void set_radius(T radius)
    {
        detail::check_radius(radius);
        m_shape.radius = radius;
    }
    void set_inside(bool inside) noexcept { m_shape.inside = inside; }
    const Shape& shape() const noexcept { return m_shape; }

    void add_planes(const PlaneQuery& query, std::vector<ContactPlane>& out) const override
    {
        const auto& m = this->material();
        const double sign = m_shape.inside ? -1.0 : 1.0;
        const Vec3<double> a = m_shape.a.template cast<double>(), e = (m_shape.b - m_shape.a).template cast<double>();
        const double e_len2 = e.squaredNorm();
        for (std::size_t i = query.begin; i < query.end; ++i)
        {
            const Vec3<double>& at = (*query.at)[i - query.begin];
            const double t = e_len2 < 1e-20 ? 0.0 : std::clamp((at - a).dot(e) / e_len2, 0.0, 1.0);
            detail::add_radial_plane(i, at, a + t * e, double(m_shape.radius) + sign * double(m.margin), sign,
                                     query.reach_of(i), double(m.friction), out);
        }
    }

  protected:
    int project_range(const StateArrays<T>& s, std::size_t begin, std::size_t end) override
    {
        const auto& m = this->material();
        const T sign = m_shape.inside ? T(-1) : T(1);
        const T target = m_shape.radius + sign * m.margin;
        const Vec3<T> a = m_shape.a;
        const Vec3<T> e = m_shape.b - m_shape.a;
        const T e_len2 = e.squaredNorm();
        // A zero-length axis has no direction to project on: it is a sphere at a.
        const T inv_e_len2 = e_len2 < T(1e-20) ? T(0) : T(1) / e_len2;
        return this->run(s, begin, end, [&](auto& p, const auto& movable) {
            using V = std::decay_t<decltype(p.x)>;
            const V ex(e.x()), ey(e.y()), ez(e.z());
            const V ax(a.x()), ay(a.y()), az(a.z());
            // Nearest axis point: the projection clamped to the segment, a min and a max per lane.
            const V raw = ((p.x - ax) * ex + (p.y - ay) * ey + (p.z - az) * ez) * V(inv_e_len2);
            const V t = simd::min(V(T(1)), simd::max(V(T(0)), raw));
            return detail::respond_radial(p, ax + ex * t, ay + ey * t, az + ez * t, target, sign, movable, m);
        });
    }

  private:
    Shape m_shape;
};

/// An axis-aligned box. inside = true (the default) is a room to stay within, the cheapest way to
/// keep a simulation from wandering off; inside = false is a crate to stay out of, pushed out
/// through the face of least penetration so it behaves like six planes, not a point attractor.
/// A fast particle can cross a thin crate in one frame: projections see only where it ended up.
template <class T>
class BoxCollider : public Collider<T>
{
  public:
    ColliderKind kind() const noexcept override { return ColliderKind::box; }

    struct Shape
    {
        Vec3<T> min = Vec3<T>(T(-1), T(-1), T(-1)); ///< lower corner
        Vec3<T> max = Vec3<T>(T(1), T(1), T(1));    ///< upper corner, >= min on every axis
        bool inside = true;                         ///< true: a room; false: a crate
    };

    explicit BoxCollider(const Shape& shape, const ContactMaterial<T>& material = {}) : Collider<T>(material)
    {
        set_bounds(shape.min, shape.max);
        m_shape.inside = shape.inside;
    }

    void set_bounds(const Vec3<T>& lo, const Vec3<T>& hi)
    {
        detail::check_point("min corner", lo);
        detail::check_point("max corner", hi);
        for (int k = 0; k < 3; ++k)
            if (lo[k] > hi[k])
                detail::raise<std::invalid_argument>("simdverlet: box is inverted on axis " + std::string(1, "xyz"[k]) +
                                                     ": min " + detail::number(lo[k]) + " > max " +
                                                     detail::number(hi[k]));
        m_shape.min = lo;
        m_shape.max = hi;
    }
    void set_inside(bool inside) noexcept { m_shape.inside = inside; }
    const Shape& shape() const noexcept { return m_shape; }

    /// A room gives a plane for each wall within reach; a crate the plane of the face a particle
    /// inside would leave by (its least penetration, as the projection pushes), or outside the
    /// face it is farthest beyond, which supports the whole box.
    void add_planes(const PlaneQuery& query, std::vector<ContactPlane>& out) const override
    {
        const double margin = double(this->material().margin), friction = double(this->material().friction);
        const Vec3<double> lo = m_shape.min.template cast<double>(), hi = m_shape.max.template cast<double>();
        for (std::size_t i = query.begin; i < query.end; ++i)
        {
            const Vec3<double>& at = (*query.at)[i - query.begin];
            const double reach = query.reach_of(i);
            if (m_shape.inside)
            {
                for (int k = 0; k < 3; ++k)
                {
                    if (at[k] - (lo[k] + margin) <= reach)
                        out.push_back({i, Vec3<double>::Unit(k), lo[k] + margin, friction});
                    if ((hi[k] - margin) - at[k] <= reach)
                        out.push_back({i, -Vec3<double>::Unit(k), -(hi[k] - margin), friction});
                }
                continue;
            }
            // Signed distance beyond each face (negative inside); the face of the largest is the
            // one a particle inside is nearest to leaving by, or an outside one is beyond.
            int face = 0;
            double beyond = -HUGE_VAL;
            for (int k = 0; k < 6; ++k)
            {
                const int axis = k / 2;
                const double d = k % 2 == 0 ? (lo[axis] - margin) - at[axis] : at[axis] - (hi[axis] + margin);
                if (d > beyond)
                {
                    beyond = d;
                    face = k;
                }
            }
            if (beyond > reach)
                continue;
            const int axis = face / 2;
            if (face % 2 == 0)
                out.push_back({i, -Vec3<double>::Unit(axis), -(lo[axis] - margin), friction});
            else
                out.push_back({i, Vec3<double>::Unit(axis), hi[axis] + margin, friction});
        }
    }

  protected:
    int project_range(const StateArrays<T>& s, std::size_t begin, std::size_t end) override
    {
        return m_shape.inside ? project_room(s, begin, end) : project_crate(s, begin, end);
    }

  private:
    /// Each wall on its own: a particle in a corner takes two or three contacts, counted once.
    int project_room(const StateArrays<T>& s, std::size_t begin, std::size_t end)
    {
        const auto& m = this->material();
        const Vec3<T> lo = m_shape.min + Vec3<T>::Constant(m.margin);
        const Vec3<T> hi = m_shape.max - Vec3<T>::Constant(m.margin);
        return this->run(s, begin, end, [&](auto& p, const auto& movable) {
            using V = std::decay_t<decltype(p.x)>;
            const V zero(T(0)), one(T(1));
            auto touched = movable && !movable;
            const auto wall = [&](int axis, const V& nx, const V& ny, const V& nz) {
                const V& coord = axis == 0 ? p.x : axis == 1 ? p.y : p.z;
                const V below = V(lo[axis]) - coord;
                const V above = coord - V(hi[axis]);
                const auto low_hit = movable && (below > zero);
                touched = detail::respond(p, nx, ny, nz, below, low_hit, m) || touched;
                const auto high_hit = movable && !low_hit && (above > zero);
                touched = detail::respond(p, V(-nx), V(-ny), V(-nz), above, high_hit, m) || touched;
            };
            wall(0, one, zero, zero);
            wall(1, zero, one, zero);
            wall(2, zero, zero, one);
            return touched;
        });
    }

    /// Out through the face of least penetration; ties go to the earlier face (-x, +x, -y, +y, -z, +z).
    int project_crate(const StateArrays<T>& s, std::size_t begin, std::size_t end)
    {
        const auto& m = this->material();
        const Vec3<T> lo = m_shape.min - Vec3<T>::Constant(m.margin);
        const Vec3<T> hi = m_shape.max + Vec3<T>::Constant(m.margin);
        return this->run(s, begin, end, [&](auto& p, const auto& movable) {
            using V = std::decay_t<decltype(p.x)>;
            const V zero(T(0)), one(T(1));
            const auto inside = movable && (p.x > V(lo.x())) && (p.x < V(hi.x())) && (p.y > V(lo.y())) &&
                                (p.y < V(hi.y())) && (p.z > V(lo.z())) && (p.z < V(hi.z()));
            if (!simd::any(inside))
                return inside;
            V depth = p.x - V(lo.x());
            V nx = V(-one), ny = zero, nz = zero;
            const auto consider = [&](const V& d, const V& ax, const V& ay, const V& az) {
                const auto better = d < depth;
                depth = simd::select(better, d, depth);
                nx = simd::select(better, ax, nx);
                ny = simd::select(better, ay, ny);
                nz = simd::select(better, az, nz);
            };
            consider(V(hi.x()) - p.x, one, zero, zero);
            consider(p.y - V(lo.y()), zero, V(-one), zero);
            consider(V(hi.y()) - p.y, zero, one, zero);
            consider(p.z - V(lo.z()), zero, zero, V(-one));
            consider(V(hi.z()) - p.z, zero, zero, one);
            return detail::respond(p, nx, ny, nz, depth, inside, m);
        });
    }

    Shape m_shape;
};

/// Anything written as a signed distance: negative inside, zero on the surface, positive outside,
/// roughly unit gradient. A torus, a heightfield, an implicit surface. The normal is the gradient
/// by central differences at `epsilon`, so the field must be smooth at that scale. Scalar only:
/// the field is an opaque callable, evaluated 3 x max_steps + 1 times per penetrating particle.
template <class T>
class SdfCollider : public Collider<T>
{
  public:
    ColliderKind kind() const noexcept override { return ColliderKind::sdf; }

    using Field = std::function<T(const Vec3<T>&)>;

    struct Shape
    {
        Field field = {};    ///< signed distance, world units
        T epsilon = T(1e-3); ///< central-difference step, world units, > 0: well below the
                             ///< field's feature size, well above float noise at its scale
        int max_steps = 2;   ///< >= 1. Re-evaluations after each correction: more than one
                             ///< lets a field whose gradient is not unit length converge
                             ///< onto the surface instead of stopping short
    };

    explicit SdfCollider(Shape shape, const ContactMaterial<T>& material = {}) : Collider<T>(material)
    {
        if (!shape.field)
            detail::raise<std::invalid_argument>("simdverlet: SDF collider needs a field");
        check_epsilon(shape.epsilon);
        check_max_steps(shape.max_steps);
        m_shape = std::move(shape);
    }

    bool has_vector_path() const noexcept override { return false; }

    void set_epsilon(T epsilon)
    {
        check_epsilon(epsilon);
        m_shape.epsilon = epsilon;
    }
    void set_max_steps(int steps)
    {
        check_max_steps(steps);
        m_shape.max_steps = steps;
    }
    const Shape& shape() const noexcept { return m_shape; }

    /// The field's tangent plane at each particle within reach: linear in the step, as the
    /// projection's push along the gradient is.
    void add_planes(const PlaneQuery& query, std::vector<ContactPlane>& out) const override
    {
        const auto& m = this->material();
        for (std::size_t i = query.begin; i < query.end; ++i)
        {
            const Vec3<T> x = (*query.at)[i - query.begin].template cast<T>();
            const T distance = m_shape.field(x);
            if (!(distance - m.margin <= T(query.reach_of(i))))
                continue;
            const Vec3<double> g = gradient(x).template cast<double>();
            out.push_back(
                {i, g, g.dot(x.template cast<double>()) + double(m.margin) - double(distance), double(m.friction)});
        }
    }

  protected:
    int project_range(const StateArrays<T>& s, std::size_t begin, std::size_t end) override
    {
        const auto& m = this->material();
        const Field& f = m_shape.field;
        return kernels::project_lanes_scalar(s, begin, end, [&](kernels::ParticleLanes<T>& p, bool) {
            bool touched = false;
            for (int step = 0; step < m_shape.max_steps; ++step)
            {
                const Vec3<T> x(p.x, p.y, p.z);
                const T depth = m.margin - f(x);
                if (!(depth > T(0)))
                    break;
                const Vec3<T> g = gradient(x);
                touched = detail::respond(p, g.x(), g.y(), g.z(), depth, true, m) || touched;
            }
            return touched;
        });
    }

  private:
    /// The field's unit gradient by central differences; a flat spot has none, and pushes along
    /// +y, as spheres do.
    Vec3<T> gradient(const Vec3<T>& x) const
    {
        const Field& f = m_shape.field;
        const T e = m_shape.epsilon;
        const Vec3<T> g(f(x + Vec3<T>(e, 0, 0)) - f(x - Vec3<T>(e, 0, 0)),
                        f(x + Vec3<T>(0, e, 0)) - f(x - Vec3<T>(0, e, 0)),
                        f(x + Vec3<T>(0, 0, e)) - f(x - Vec3<T>(0, 0, e)));
        const T length = g.norm();
        return length < T(1e-20) ? Vec3<T>(0, 1, 0) : Vec3<T>(g / length);
    }

    static void check_epsilon(T epsilon)
    {
        if (!std::isfinite(epsilon) || !(epsilon > T(0)))
            detail::raise<std::invalid_argument>("simdverlet: SDF epsilon must be finite and > 0, got " +
                                                 detail::number(epsilon));
    }
    static void check_max_steps(int steps)
    {
        if (steps < 1)
            detail::raise<std::invalid_argument>("simdverlet: SDF max_steps must be >= 1, got " +
                                                 std::to_string(steps));
    }

    Shape m_shape;
};

} // namespace simdverlet
