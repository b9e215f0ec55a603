// Colliders: things for particles to hit, applied as position projections after integration.
//
// Why a projection and not a penalty force: the solve adds every spring `iterations` times over
// unchanged positions, so a cloth spring of stiffness k acts at k x iterations. A penalty spring
// registered as a bulk force runs once, so it is `iterations` times softer than the fabric it must
// hold up and the sheet sinks; scale it up to compensate and it crosses the explicit stability
// limit and launches fast particles. The stiffness a penalty needs grows with the square of the
// impact speed; the stable one does not grow at all. A projection has no stiffness to get wrong:
// it moves a penetrating particle onto the surface and rewrites its previous position so the
// implied Verlet velocity is the post-contact one. tests/colliders.cpp measures both.
//
// Every shape is written once, as geometry over V (a scalar or an xsimd batch), and runs through
// the one contact response below, so each shape's vector and scalar paths are the same arithmetic.
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

#include "error.hpp"
#include "kernels.hpp"
#include "simd.hpp"
#include "simulation.hpp"
#include "state.hpp"

namespace simdverlet
{

/// How a surface answers a contact. Shared by every collider.
template <class T>
struct ContactMaterial
{
    T friction = T(0.5);         ///< Coulomb coefficient, >= 0. The tangential correction per contact is
                                 ///< bounded by friction x depth: for a particle resting on a surface the
                                 ///< per-frame depth is the displacement the normal force would produce, so
                                 ///< this is the Coulomb limit in displacement units, static friction
                                 ///< included: on an incline with tan(theta) <= friction a particle does
                                 ///< not move at all. 0 is ice; 0.5 holds anything up to 26.6 degrees.
    T tangential_damping = T(0); ///< in [0, 1]: fraction of the remaining tangential velocity removed on
                                 ///< every contact, unconditionally. A sticky surface; off by default so
                                 ///< Coulomb friction is the only tangential effect.
    T restitution = T(0);        ///< in [0, 1]: fraction of an approaching normal velocity returned. 0 is a
                                 ///< dead surface, 1 lossless. A separating velocity is never touched, so a
                                 ///< contact can only remove energy.
    T margin = T(0);             ///< >= 0, world units of clearance between a particle and the surface:
                                 ///< half a cloth's thickness, or a particle radius. Keeps a drawn sheet off
                                 ///< the shape it lies on.
};

namespace detail
{
template <class T>
void check_material(const ContactMaterial<T>& m)
{
    const auto fail = [](const char* what, T v, const char* range) {
        detail::raise<std::invalid_argument>(std::string("simdverlet: collider ") + what + " must be " + range +
                                             ", got " + number(v));
    };
    if (!std::isfinite(m.friction) || m.friction < T(0))
        fail("friction", m.friction, "finite and >= 0");
    if (!(m.tangential_damping >= T(0) && m.tangential_damping <= T(1)))
        fail("tangential_damping", m.tangential_damping, "in [0, 1]");
    if (!(m.restitution >= T(0) && m.restitution <= T(1)))
        fail("restitution", m.restitution, "in [0, 1]");
    if (!std::isfinite(m.margin) || m.margin < T(0))
        fail("margin", m.margin, "finite and >= 0");
}

template <class T>
void check_point(const char* what, const Vec3<T>& p)
{
    if (!p.allFinite())
        detail::raise<std::invalid_argument>(std::string("simdverlet: collider ") + what + " (" + number(p.x()) + ", " +
                                             number(p.y()) + ", " + number(p.z()) + ") is not finite");
}

template <class T>
void check_radius(T radius)
{
    if (!std::isfinite(radius) || radius < T(0))
        detail::raise<std::invalid_argument>("simdverlet: collider radius must be finite and >= 0, got " +
                                             number(radius));
}

/// Below this length a tangential velocity has no direction and friction leaves it alone; below
/// this distance a particle at a sphere's centre is pushed along +y (times the inside sign).
template <class T>
inline constexpr T kTinyLength = T(1e-12);

/// The contact response, for the lanes in `active`: push out along the unit normal n by depth, then
/// rewrite the previous position so the implied velocity is the post-contact one. Other lanes keep
/// their values exactly. Returns `active`.
template <class T, class V, class M>
M respond(kernels::ParticleLanes<V>& p, const V& nx, const V& ny, const V& nz, const V& depth, const M& active,
          const ContactMaterial<T>& m)
{
    if (!simd::any(active))
        return active;
    // The velocity is read before the push-out: read after, the frame's penetration would already
    // have been cut from the approach speed, and restitution 1 would not return a dropped
    // particle to its height.
    const V vx = p.x - p.px;
    const V vy = p.y - p.py;
    const V vz = p.z - p.pz;
    const V x = p.x + nx * depth;
    const V y = p.y + ny * depth;
    const V z = p.z + nz * depth;
    const V zero(T(0));
    const V vn = vx * nx + vy * ny + vz * nz;
    // Only an approaching normal component is reflected; turning round one that already leaves
    // the surface is how a projection would add energy.
    const V vn_new = simd::select(vn < zero, V(-m.restitution) * vn, vn);
    const V tx0 = vx - vn * nx;
    const V ty0 = vy - vn * ny;
    const V tz0 = vz - vn * nz;
    const V t_len = simd::sqrt(tx0 * tx0 + ty0 * ty0 + tz0 * tz0);
    const V coulomb = simd::max(zero, V(T(1)) - (V(m.friction) * depth) / simd::max(t_len, V(kTinyLength<T>)));
    const V scale = simd::select(t_len > V(kTinyLength<T>), coulomb * V(T(1) - m.tangential_damping), V(T(1)));
    const V tx = tx0 * scale;
    const V ty = ty0 * scale;
    const V tz = tz0 * scale;
    // What friction took off this frame's tangential displacement comes out of the position too.
    // Shortening only the velocity would leave the frame's slide in x: a particle held by static
    // friction on an incline would still creep g sin(theta) dt^2 every step, for ever.
    const V fx = x - (tx0 - tx);
    const V fy = y - (ty0 - ty);
    const V fz = z - (tz0 - tz);
    p.px = simd::select(active, fx - (tx + vn_new * nx), p.px);
    p.py = simd::select(active, fy - (ty + vn_new * ny), p.py);
    p.pz = simd::select(active, fz - (tz + vn_new * nz), p.pz);
    p.x = simd::select(active, fx, p.x);
    p.y = simd::select(active, fy, p.y);
    p.z = simd::select(active, fz, p.z);
    return active;
}

/// Push-out from a point q (a sphere's centre, a capsule's nearest axis point): outward normal
/// along p - q, or along it reversed when keeping particles inside (sign -1).
template <class T, class V, class M>
M respond_radial(kernels::ParticleLanes<V>& p, const V& qx, const V& qy, const V& qz, T target, T sign,
                 const M& movable, const ContactMaterial<T>& m)
{
    const V dx = p.x - qx;
    const V dy = p.y - qy;
    const V dz = p.z - qz;
    const V dist = simd::sqrt(dx * dx + dy * dy + dz * dz);
    const V depth = (dist - V(target)) * V(-sign);
    const M active = movable && (depth > V(T(0)));
    if (!simd::any(active))
        return active;
    // A particle exactly at the centre has no direction: push it along +y (times sign).
    const auto degenerate = dist < V(kTinyLength<T>);
    const V inv = V(sign) / simd::max(dist, V(kTinyLength<T>));
    const V nx = simd::select(degenerate, V(T(0)), dx * inv);
    const V ny = simd::select(degenerate, V(sign), dy * inv);
    const V nz = simd::select(degenerate, V(T(0)), dz * inv);
    return respond(p, nx, ny, nz, depth, active, m);
}
} // namespace detail

template <class T>
class ColliderSet;

/// Which shape a collider is, for code that draws or serialises shapes without RTTI (game engines
/// often build with -fno-rtti, so no dynamic_cast).
enum class ColliderKind
{
    plane,
    sphere,
    capsule,
    box,
    sdf,
    triangle_mesh,
};

/// A shape particles collide with. Material and shape are changed through setters that validate,
/// so a bad value throws at the call and never in the middle of a step.
template <class T>
class Collider
{
  public:
    virtual ~Collider() = default;

    bool enabled = true;    ///< skipped entirely while false, without being unregistered
    bool vectorized = true; ///< use the xsimd path where the shape has one; false forces the scalar twin

    const ContactMaterial<T>& material() const noexcept { return m_material; }
    void set_material(const ContactMaterial<T>& m)
    {
        detail::check_material(m);
        m_material = m;
    }
    void set_friction(T v) { set_material(with(&ContactMaterial<T>::friction, v)); }
    void set_tangential_damping(T v) { set_material(with(&ContactMaterial<T>::tangential_damping, v)); }
    void set_restitution(T v) { set_material(with(&ContactMaterial<T>::restitution, v)); }
    void set_margin(T v) { set_material(with(&ContactMaterial<T>::margin, v)); }

    /// Particles found penetrating by the last project call, or, inside a ColliderSet, by every
    /// relaxation of its last pass together. The "is this collider doing anything" readout tests
    /// put a floor on, so a silently missing contact fails instead of passing.
    int contacts() const noexcept { return m_contacts; }

    /// Whether the shape has a vector path (all but SdfCollider, whose field is an opaque callable).
    virtual bool has_vector_path() const noexcept { return true; }

    virtual ColliderKind kind() const noexcept = 0;

    /// Projects particles [begin, end) out of the shape; returns how many were penetrating.
    int project(State3<T>& state, std::size_t begin, std::size_t end)
    {
        if (begin > end || end > state.size())
            detail::raise<std::out_of_range>("simdverlet: collider range [" + std::to_string(begin) + ", " +
                                             std::to_string(end) + ") is not inside the " +
                                             std::to_string(state.size()) + " particles");
        m_simulation_vectorized = true; // driven directly, by no simulation: a set's last switch no longer applies
        m_call = {.call = detail::next_call_id()}; // and each pass is a call of its own
        begin_pass(state.size());
        m_contacts = enabled ? project_range(state.arrays_view(), begin, end) : 0;
        end_pass();
        return m_contacts;
    }

    int project(State3<T>& state) { return project(state, 0, state.size()); }

  protected:
    explicit Collider(const ContactMaterial<T>& m) { set_material(m); }
    Collider(const Collider&) = default;
    Collider(Collider&&) noexcept = default;
    Collider& operator=(const Collider&) = default;
    Collider& operator=(Collider&&) noexcept = default;

    virtual int project_range(const StateArrays<T>& s, std::size_t begin, std::size_t end) = 0;

    /// Called once before a pass over a state of `particles` particles, before any
    /// project_range, on one thread: where a shape sizes caches the concurrent chunks then share.
    virtual void begin_pass(std::size_t particles) { (void)particles; }
    /// Called once after a pass, on one thread (an animated mesh forgets the motion it swept).
    virtual void end_pass() {}

    /// Where this pass stands in its simulation's call of step(); a pass driven directly, or by a
    /// set without a simulation, is a call of one substep of its own.
    const CallProgress<T>& call() const noexcept { return m_call; }

    /// Whether this pass takes the vector path: the collider's own switch, its simulation's
    /// (Simulation::set_vectorized, inside a ColliderSet), and a shape that has one.
    bool vector_path() const noexcept { return vectorized && m_simulation_vectorized && has_vector_path(); }

    /// Runs geometry written over V on the vector path or the scalar twin.
    template <class Geometry>
    int run(const StateArrays<T>& s, std::size_t begin, std::size_t end, Geometry&& geometry) const
    {
        if (vector_path())
            return kernels::project_lanes_vector<xsimd::default_arch>(s, begin, end, geometry);
        return kernels::project_lanes_scalar(s, begin, end, geometry);
    }

  private:
    friend class ColliderSet<T>;

    bool m_simulation_vectorized = true; // set by a ColliderSet for each pass
    CallProgress<T> m_call;              // likewise

    ContactMaterial<T> with(T ContactMaterial<T>::*field, T v) const
    {
        ContactMaterial<T> m = m_material;
        m.*field = v;
        return m;
    }

    ContactMaterial<T> m_material;
    int m_contacts = 0;
};

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

  protected:
    int project_range(const StateArrays<T>& s, std::size_t begin, std::size_t end) override
    {
        const auto& m = this->material();
        const T e = m_shape.epsilon;
        const Field& f = m_shape.field;
        return kernels::project_lanes_scalar(s, begin, end, [&](kernels::ParticleLanes<T>& p, bool) {
            bool touched = false;
            for (int step = 0; step < m_shape.max_steps; ++step)
            {
                const Vec3<T> x(p.x, p.y, p.z);
                const T depth = m.margin - f(x);
                if (!(depth > T(0)))
                    break;
                Vec3<T> g(f(x + Vec3<T>(e, 0, 0)) - f(x - Vec3<T>(e, 0, 0)),
                          f(x + Vec3<T>(0, e, 0)) - f(x - Vec3<T>(0, e, 0)),
                          f(x + Vec3<T>(0, 0, e)) - f(x - Vec3<T>(0, 0, e)));
                const T g_len = g.norm();
                // A flat spot of the field has no gradient: push along +y, as spheres do.
                g = g_len < T(1e-20) ? Vec3<T>(0, 1, 0) : Vec3<T>(g / g_len);
                touched = detail::respond(p, g.x(), g.y(), g.z(), depth, true, m) || touched;
            }
            return touched;
        });
    }

  private:
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

/// Options of add_colliders.
struct ColliderSetOptions
{
    std::string name = "colliders"; ///< key in the position-projection registry; reusing it replaces that pass
    ParticleRange range = {};       ///< particles to collide; default all, re-read every frame
    int relaxations = 1;            ///< >= 1 runs of the whole list per frame. 2 settles a particle in a
                                    ///< crease between two shapes to ~1e-4; most scenes have none
};

/// Several colliders run as one position-projection pass, in list order and in series: a particle
/// in the crease between a sphere and a floor is pushed off the sphere, then off the floor, and
/// the floor must see the sphere's result. Live: add, remove, move and retune between frames.
template <class T>
class ColliderSet
{
  public:
    ColliderSet(std::weak_ptr<detail::World<T>> world, ColliderSetOptions options)
        : m_world(std::move(world)), m_attached(true), m_name(std::move(options.name))
    {
        set_range(options.range);
        set_relaxations(options.relaxations);
    }

    /// Appends a collider and returns a reference to it that stays valid until it is removed.
    template <std::derived_from<Collider<T>> C>
    C& add(C collider)
    {
        auto owned = std::make_unique<C>(std::move(collider));
        C& ref = *owned;
        m_colliders.push_back(std::move(owned));
        return ref;
    }

    /// Drops a collider; returns whether it was in the set.
    bool remove(const Collider<T>& collider)
    {
        const auto it = std::find_if(m_colliders.begin(), m_colliders.end(),
                                     [&](const auto& c) { return c.get() == &collider; });
        if (it == m_colliders.end())
            return false;
        m_colliders.erase(it);
        return true;
    }

    std::size_t size() const noexcept { return m_colliders.size(); }
    Collider<T>& operator[](std::size_t i) { return *m_colliders.at(i); }

    int relaxations() const noexcept { return m_relaxations; }
    void set_relaxations(int n)
    {
        if (n < 1)
            detail::raise<std::invalid_argument>("simdverlet: collider relaxations must be >= 1, got " +
                                                 std::to_string(n));
        m_relaxations = n;
    }

    const ParticleRange& range() const noexcept { return m_range; }
    void set_range(const ParticleRange& range)
    {
        range.check();
        m_range = range;
    }

    /// Contacts across every collider and relaxation of the last pass.
    int contacts() const noexcept { return m_contacts; }
    const std::string& name() const noexcept { return m_name; }

    /// The pass itself, for callers who drive it rather than leave it registered. With an attached
    /// simulation that has an executor, the range is split into its chunks and the chunks run
    /// concurrently, each applying every collider in order to its own particles (a particle's
    /// colliders stay in series, and an SdfCollider's field must then be safe to call from
    /// several threads).
    void project(State3<T>& state)
    {
        m_contacts = 0;
        const auto bounds = m_range.resolve(state.size());
        const std::size_t begin = bounds.first, end = bounds.second; // named, not bound: lambdas capture them
        const auto view = state.arrays_view();
        const std::size_t n = m_colliders.size();
        if (n == 0 || begin >= end)
        {
            for (auto& c : m_colliders)
            {
                c->m_contacts = 0;
                c->end_pass(); // an empty pass still ends: a mesh's motion is not swept later
            }
            return;
        }
        // Chunks are cut on absolute particle indices from 0, so their bounds are whole padding
        // blocks and two chunks never share a lane group.
        const auto world = m_world.lock();
        CallProgress<T> call = world ? world->call_progress() : CallProgress<T>{};
        if (call.call == 0) // driven outside any call of step()
            call.call = detail::next_call_id();
        for (auto& c : m_colliders)
            if (c->enabled)
            {
                c->m_simulation_vectorized = !world || world->vectorized();
                c->m_call = call;
                c->begin_pass(state.size());
            }
        const auto run_range = [&](std::size_t b, std::size_t e, std::vector<int>& count) {
            for (int r = 0; r < m_relaxations; ++r)
                for (std::size_t k = 0; k < n; ++k)
                    if (m_colliders[k]->enabled)
                        count[k] += m_colliders[k]->project_range(view, b, e);
        };
        std::vector<std::vector<int>> counts(world ? world->chunk_count(end) : 1, std::vector<int>(n, 0));
        if (world)
            world->for_each_indexed_chunk(
                begin, end, [&](std::size_t c, std::size_t b, std::size_t e) { run_range(b, e, counts[c]); });
        else
            run_range(begin, end, counts[0]);
        for (auto& c : m_colliders)
            c->end_pass();
        for (std::size_t k = 0; k < n; ++k)
        {
            int total = 0;
            for (const auto& count : counts)
                total += count[k];
            m_colliders[k]->m_contacts = total;
            m_contacts += total;
        }
    }

    /// Unregisters the pass from its simulation; the colliders are kept. Returns whether it was
    /// registered. Registering another set under the same name replaces this one: detach only a
    /// set that is still the registered one.
    /// Reports a logic_error when its simulation is gone.
    bool detach()
    {
        if (!m_attached)
            return false;
        const auto world = detail::lock_world(m_world, "collider set '" + m_name + "'");
        m_attached = false;
        return world->remove_position_projection(m_name);
    }

    bool attached() const noexcept { return m_attached && !m_world.expired(); }

  private:
    std::weak_ptr<detail::World<T>> m_world;
    bool m_attached = false;
    std::string m_name;
    ParticleRange m_range;
    int m_relaxations = 1;
    int m_contacts = 0;
    std::vector<std::unique_ptr<Collider<T>>> m_colliders;
};

/// Registers a ColliderSet as one position projection and returns it, live. The colliders given
/// here are added in order; more can be added through the returned set.
///     auto world = add_colliders(sim, {}, SphereCollider<float>({.center = {2.5f, 3, 0}, .radius = 1.2f}),
///                                PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -6}));
template <class T, std::derived_from<Collider<T>>... Colliders>
std::shared_ptr<ColliderSet<T>> add_colliders(Simulation<T>& sim, ColliderSetOptions options = {},
                                              Colliders... colliders)
{
    auto set = std::make_shared<ColliderSet<T>>(detail::world_of(sim), options);
    (set->add(std::move(colliders)), ...);
    sim.add_position_projection(set->name(), [set](State3<T>& state, T) { set->project(state); });
    return set;
}

} // namespace simdverlet
