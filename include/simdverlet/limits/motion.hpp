// Motion constraints: cloth that follows an animation. Each frame the caller hands over a target
// position and normal per particle (skinned from a character's mesh); after each step a particle
// farther than its max distance from its target goes back onto that sphere, and, with a backstop,
// out of a sphere behind the target's surface, so the cloth cannot sink into the body under it.
// Each particle reads only its own target and writes only itself: the same bits for any thread
// count and split.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simdverlet/core/contact_planes.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/stage_state.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/projection.hpp"

namespace simdverlet
{

/// What add_motion_constraints registers.
template <class T>
struct MotionConstraintsOptions
{
    /// The particles to constrain, resolved when the stage is added (its size is the number of
    /// targets); default every particle.
    ParticleRange range = {};
    /// Finite and >= 0, world units: how far a particle may stray from its target, for every
    /// particle until set_max_distance changes it. 0 glues particles to their targets.
    T max_distance = T(0);
    /// Finite and >= 0: radius of the backstop sphere, 0 for none. It sits behind each target,
    /// centred at target - normal x (backstop_radius + backstop_distance), and particles are kept
    /// outside it: a large radius is a flat floor under the target, a small one a bump.
    T backstop_radius = T(0);
    /// Finite and >= 0: how far behind the target's surface the backstop starts.
    T backstop_distance = T(0);
    /// Key in the position-projection registry and in snapshots; default "motion", followed by
    /// "@[begin, end)" for a range short of every particle. A name registered already is an error.
    std::string name = {};
};

namespace detail
{
template <class T>
struct MotionData
{
    std::size_t begin = 0, count = 0;
    std::size_t first = 0; ///< begin rounded down to a padding block: arrays start there
    T backstop_radius = 0, backstop_distance = 0;
    std::string name;
    std::weak_ptr<World<T>> world;
    StageLink<T> link = {};
    std::uint64_t protection = 0; ///< the range's removal protection, released by remove()
    bool protected_range = true;  ///< until remove() releases it
    int moved = 0;
    // Per particle from `first`: target, normal, max distance.
    simd::AlignedVector<T> tx, ty, tz, nx, ny, nz, max_distance;

    std::vector<simd::AlignedVector<T>*> arrays() { return {&tx, &ty, &tz, &nx, &ny, &nz, &max_distance}; }
};

template <class T>
void check_distance(const char* what, T value)
{
    if (!std::isfinite(value) || value < T(0))
        detail::raise<std::invalid_argument>(std::string("simdverlet: motion constraint ") + what +
                                             " must be finite and >= 0, got " + number(value));
}

/// One particle, written once for a scalar (V = T, M = bool) and a batch: back onto the sphere of
/// its max distance around the target, then out of the backstop sphere. Only x moves.
template <class T, class V, class M>
M follow_target(kernels::ParticleLanes<V>& p, const M& movable, const V& tx, const V& ty, const V& tz, const V& nx,
                const V& ny, const V& nz, const V& max_distance, T backstop_radius, T backstop_distance)
{
    const V dx = p.x - tx, dy = p.y - ty, dz = p.z - tz;
    const V dist2 = dx * dx + dy * dy + dz * dz;
    const M far = movable && (dist2 > max_distance * max_distance);
    M moved = far;
    if (simd::any(far))
    {
        const V scale = max_distance / simd::sqrt(dist2);
        p.x = simd::select(far, tx + dx * scale, p.x);
        p.y = simd::select(far, ty + dy * scale, p.y);
        p.z = simd::select(far, tz + dz * scale, p.z);
    }
    if (backstop_radius > T(0))
    {
        const V radius(backstop_radius), back(backstop_radius + backstop_distance);
        const V cx = tx - nx * back, cy = ty - ny * back, cz = tz - nz * back;
        const V ex = p.x - cx, ey = p.y - cy, ez = p.z - cz;
        const V e2 = ex * ex + ey * ey + ez * ez;
        const M inside = movable && (e2 < radius * radius);
        if (simd::any(inside))
        {
            // At the very centre there is no direction to leave by: out along the normal.
            const V zero(T(0));
            const M centre = e2 == zero;
            const V scale = radius / simd::sqrt(simd::select(centre, V(T(1)), e2));
            p.x = simd::select(inside, cx + simd::select(centre, nx * radius, ex * scale), p.x);
            p.y = simd::select(inside, cy + simd::select(centre, ny * radius, ey * scale), p.y);
            p.z = simd::select(inside, cz + simd::select(centre, nz * radius, ez * scale), p.z);
            moved = moved || inside;
        }
    }
    return moved;
}

/// The planes an implicit solve holds the queried particles behind: for one within reach of its
/// max distance, the tangent plane of that sphere where the line from its target runs through it;
/// for one within reach of its backstop, the backstop sphere's tangent plane. Frictionless.
template <class T>
void add_motion_planes(const MotionData<T>& d, const PlaneQuery& query, std::vector<ContactPlane>& out)
{
    const std::size_t begin = std::max(query.begin, d.begin), end = std::min(query.end, d.begin + d.count);
    for (std::size_t i = begin; i < end; ++i)
    {
        const std::size_t k = i - d.first;
        const Vec3<double>& at = (*query.at)[i - query.begin];
        const Vec3<double> target(double(d.tx[k]), double(d.ty[k]), double(d.tz[k]));
        add_radial_plane(i, at, target, double(d.max_distance[k]), -1.0, query.reach_of(i), 0.0, out);
        if (d.backstop_radius > T(0))
        {
            const Vec3<double> normal(double(d.nx[k]), double(d.ny[k]), double(d.nz[k]));
            const Vec3<double> centre = target - normal * double(d.backstop_radius + d.backstop_distance);
            add_radial_plane(i, at, centre, double(d.backstop_radius), 1.0, query.reach_of(i), 0.0, out);
        }
    }
}

template <class T>
void follow_targets(MotionData<T>& d, const World<T>& world, State3<T>& state)
{
    d.moved = 0;
    if (d.begin + d.count > state.size()) // particles removed under the range: nothing to follow
        return;
    const auto s = state.arrays_view();
    const std::size_t first = d.first;
    const T radius = d.backstop_radius, distance = d.backstop_distance;
    const auto follow = [&](auto& p, const auto& movable, std::size_t i) {
        using V = std::decay_t<decltype(p.x)>;
        const std::size_t k = i - first;
        return follow_target(p, movable, simd::load_lanes<V>(d.tx.data() + k), simd::load_lanes<V>(d.ty.data() + k),
                             simd::load_lanes<V>(d.tz.data() + k), simd::load_lanes<V>(d.nx.data() + k),
                             simd::load_lanes<V>(d.ny.data() + k), simd::load_lanes<V>(d.nz.data() + k),
                             simd::load_lanes<V>(d.max_distance.data() + k), radius, distance);
    };
    std::atomic<int> moved{0};
    world.for_each_chunk_within(d.begin, d.begin + d.count, [&](std::size_t b, std::size_t e) {
        const int n = world.vectorized() ? kernels::project_lanes_vector<xsimd::default_arch, false>(s, b, e, follow)
                                         : kernels::project_lanes_scalar(s, b, e, follow);
        moved.fetch_add(n, std::memory_order_relaxed);
    });
    d.moved = moved.load();
}

/// Snapshots carry the targets, normals, distances and backstop: what the animation set.
template <class T>
StageState motion_state(std::shared_ptr<MotionData<T>> data)
{
    const auto bytes = [](MotionData<T>& d) { return 7 * d.max_distance.size() * sizeof(T) + 2 * sizeof(T); };
    return {
        [data] {
            std::string out;
            for (auto* a : data->arrays())
                out.append(reinterpret_cast<const char*>(a->data()), a->size() * sizeof(T));
            out.append(reinterpret_cast<const char*>(&data->backstop_radius), sizeof(T));
            out.append(reinterpret_cast<const char*>(&data->backstop_distance), sizeof(T));
            return out;
        },
        [data, bytes](std::string_view in) { return in.size() == bytes(*data); },
        [data](std::string_view in) {
            std::size_t at = 0;
            for (auto* a : data->arrays())
            {
                std::memcpy(a->data(), in.data() + at, a->size() * sizeof(T));
                at += a->size() * sizeof(T);
            }
            std::memcpy(&data->backstop_radius, in.data() + at, sizeof(T));
            std::memcpy(&data->backstop_distance, in.data() + at + sizeof(T), sizeof(T));
        },
    };
}
} // namespace detail

/// Handle of a range's motion constraints, with the shape of every stage handle (handle.hpp).
template <class T>
class MotionConstraints : public detail::StageHandle<T, detail::MotionData<T>>
{
    using Base = detail::StageHandle<T, detail::MotionData<T>>;

  public:
    /// A handle of no stage yet: it reports an empty stage that was removed, and acting on it throws
    /// std::logic_error.
    MotionConstraints() = default;
    /// Particles the last step moved (onto their max-distance sphere or out of a backstop).
    int moved() const noexcept { return this->data().moved; }
    std::size_t size() const noexcept { return this->data().count; }
    std::size_t begin() const noexcept { return this->data().begin; }

    /// This frame's targets and normals, one of each per particle of the range, in order (unit
    /// normals pointing out of the body; they place the backstop). Throws, changing nothing, when
    /// a count differs from the range's or a value is not finite, naming it.
    void set_targets(std::span<const Vec3<T>> positions, std::span<const Vec3<T>> normals)
    {
        auto& d = this->live();
        if (positions.size() != d.count || normals.size() != d.count)
            detail::raise<std::invalid_argument>("simdverlet: motion constraints '" + d.name + "' need " +
                                                 std::to_string(d.count) + " targets and normals, got " +
                                                 std::to_string(positions.size()) + " and " +
                                                 std::to_string(normals.size()));
        for (std::size_t k = 0; k < d.count; ++k)
        {
            if (!positions[k].allFinite())
                detail::raise<std::invalid_argument>("simdverlet: motion target " + std::to_string(k) +
                                                     " is not finite");
            if (!normals[k].allFinite())
                detail::raise<std::invalid_argument>("simdverlet: motion normal " + std::to_string(k) +
                                                     " is not finite");
        }
        const std::size_t at = d.begin - d.first;
        for (std::size_t k = 0; k < d.count; ++k)
        {
            d.tx[at + k] = positions[k].x();
            d.ty[at + k] = positions[k].y();
            d.tz[at + k] = positions[k].z();
            d.nx[at + k] = normals[k].x();
            d.ny[at + k] = normals[k].y();
            d.nz[at + k] = normals[k].z();
        }
    }

    /// The same max distance for every particle. Throws, changing nothing, unless finite and >= 0.
    void set_max_distance(T distance)
    {
        auto& d = this->live();
        detail::check_distance("max_distance", distance);
        std::fill_n(d.max_distance.begin() + std::ptrdiff_t(d.begin - d.first), d.count, distance);
    }
    /// One max distance per particle of the range. Throws, changing nothing, on a count that
    /// differs from the range's or a value that is not finite and >= 0, naming it.
    void set_max_distance(std::span<const T> distances)
    {
        auto& d = this->live();
        if (distances.size() != d.count)
            detail::raise<std::invalid_argument>("simdverlet: motion constraints '" + d.name + "' need " +
                                                 std::to_string(d.count) + " max distances, got " +
                                                 std::to_string(distances.size()));
        for (std::size_t k = 0; k < d.count; ++k)
            if (!std::isfinite(distances[k]) || distances[k] < T(0))
                detail::raise<std::invalid_argument>("simdverlet: motion max distance " + std::to_string(k) +
                                                     " must be finite and >= 0, got " + detail::number(distances[k]));
        std::copy(distances.begin(), distances.end(), d.max_distance.begin() + std::ptrdiff_t(d.begin - d.first));
    }
    /// Particle begin() + k's max distance.
    T max_distance(std::size_t k) const
    {
        const auto& d = this->data();
        if (k >= d.count)
            detail::raise<std::out_of_range>("simdverlet: motion constraint " + std::to_string(k) + " of " +
                                             std::to_string(d.count));
        return d.max_distance[d.begin - d.first + k];
    }

    /// Unregisters the stage and lifts its range's removal protection (also after a removal by
    /// name, which leaves the protection in place); returns whether the stage was still registered.
    bool remove()
    {
        if (!this->shared())
            return false;
        auto& d = *this->shared();
        auto world = detail::lock_world(d.world, d.link.what());
        if (d.protected_range)
        {
            d.protected_range = false;
            world->release_range(d.protection);
        }
        return d.link.remove();
    }

  private:
    template <class U>
    friend MotionConstraints<U> add_motion_constraints(Simulation<U>& sim, MotionConstraintsOptions<U> options);
    explicit MotionConstraints(std::shared_ptr<detail::MotionData<T>> data) : Base(std::move(data)) {}
};

/// Registers motion constraints on the particles of `options.range` (resolved now: the range's size is
/// the number of targets, and it is protected like a cloth's: removing a particle inside or below
/// it is refused until remove()) as a position projection, with every target at its particle's current
/// position and every normal zero until set_targets, and returns the handle. Throws, registering
/// nothing, on a distance that is not finite and >= 0 (naming it), an empty range, a range not
/// inside the simulation, or a name registered already.
template <class T>
MotionConstraints<T> add_motion_constraints(Simulation<T>& sim, MotionConstraintsOptions<T> options)
{
    const ParticleRange range = options.range;
    detail::check_distance("max_distance", options.max_distance);
    detail::check_distance("backstop_radius", options.backstop_radius);
    detail::check_distance("backstop_distance", options.backstop_distance);
    range.check_inside(sim.size(), "motion constraint");
    const auto bounds = range.resolve(sim.size());
    if (bounds.second <= bounds.first)
        detail::raise<std::invalid_argument>("simdverlet: motion constraints need a non-empty range");
    options.name = detail::stage_name(sim.position_projections(), options.name, "motion" + detail::range_suffix(range));
    if (sim.pending_removals() > 0)
        detail::raise<std::logic_error>("simdverlet: cannot add motion constraints while particle removals are "
                                        "queued: the next step would renumber their range. Step once first.");
    const auto world = detail::world_of(sim);
    auto data = std::make_shared<detail::MotionData<T>>();
    data->begin = bounds.first;
    data->count = bounds.second - bounds.first;
    data->first = bounds.first / simd::kPadLanes<T> * simd::kPadLanes<T>;
    data->backstop_radius = options.backstop_radius;
    data->backstop_distance = options.backstop_distance;
    data->name = options.name;
    data->world = world;
    const std::size_t span = simd::padded_count<T>(bounds.second - data->first);
    for (auto* a : data->arrays())
        a->assign(span, T(0));
    for (std::size_t k = 0; k < data->count; ++k)
    {
        const auto p = sim.state().position(data->begin + k);
        const std::size_t at = data->begin - data->first + k;
        data->tx[at] = p.x();
        data->ty[at] = p.y();
        data->tz[at] = p.z();
        data->max_distance[at] = options.max_distance;
    }
    const auto registration = detail::register_projection(
        sim, data, options.name, "motion constraints",
        [](auto& d, auto& world, State3<T>& state) { detail::follow_targets(d, world, state); });
    world->add_plane_source(registration, [d = data.get()](const PlaneQuery& query, std::vector<ContactPlane>& out) {
        detail::add_motion_planes(*d, query, out);
    });
    sim.add_stage_state(options.name, detail::motion_state(data));
    data->protection = world->protect_range(data->begin, data->begin + data->count,
                                            "motion constraints '" + options.name + "'");
    return MotionConstraints<T>(std::move(data));
}

} // namespace simdverlet
