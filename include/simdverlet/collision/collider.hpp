// What a collider is: the contact material every shape shares, the one contact response (written
// once over V, a scalar or an xsimd batch, so every shape's vector and scalar paths are the same
// arithmetic), and the Collider base a shape derives from to join a ColliderSet.
//
// Why a projection and not a penalty force: the solve adds every spring `iterations` times over
// unchanged positions, so a cloth spring of stiffness k acts at k x iterations. A penalty spring
// registered as a bulk force runs once, so it is `iterations` times softer than the fabric it must
// hold up and the sheet sinks; scale it up to compensate and it crosses the explicit stability
// limit and launches fast particles. The stiffness a penalty needs grows with the square of the
// impact speed; the stable one does not grow at all. A projection has no stiffness to get wrong:
// it moves a penetrating particle onto the surface and rewrites its previous position so the
// implied Verlet velocity is the post-contact one. tests/colliders.cpp measures both.
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

#include "simdverlet/core/contact_planes.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/projection.hpp"

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

namespace detail
{

template <class T>
struct ColliderSetData;
} // namespace detail

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

    /// The contact planes of the particles `query` asks for (contact_planes.hpp): each particle
    /// within query.reach_of(i) of being pushed out gets the plane this shape would push it out along,
    /// the material's margin included, with the material's friction. An implicit cloth solve holds
    /// its particles behind them during its iterations; the projection after it still has the
    /// last word. Reads the shape only. A shape without planes (a collider written outside the
    /// library) leaves its contacts to the projection alone.
    virtual void add_planes(const PlaneQuery& query, std::vector<ContactPlane>& out) const
    {
        static_cast<void>(query);
        static_cast<void>(out);
    }

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
    friend struct detail::ColliderSetData<T>;

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

} // namespace simdverlet
