// Wind: a bulk force. Particles in a range feel linear drag toward the wind velocity; cloths feel
// an aerodynamic force per triangle (a grid's two per cell, a mesh cloth's own) from the air's
// velocity relative to the triangle, its normal and its area. The pressure force acts along the
// triangle's normal with magnitude ~ (u . n) |u|, so on an inclined triangle it has a component
// along the flow (drag) and one across it (lift): that is what makes a sheet held by its top edge
// sail and a flag flutter, and why a sheet edge-on to the wind feels (almost) nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "simdverlet/cloth/cloth.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/wind.hpp"

namespace simdverlet
{

/// What add_wind registers.
template <class T>
struct WindOptions
{
    Vec3<T> velocity = Vec3<T>::Zero();                                ///< steady wind, world units per second
    std::function<Vec3<T>(const Vec3<T>& position, T time)> gust = {}; ///< when set, the wind at a point and a
        ///< time (seconds since add_wind), replacing `velocity`: gusts, shear
    T drag = T(0.5);              ///< >= 0, linear drag of the particles in `range`: force = drag x (wind - velocity),
                                  ///< velocity in world units per second. 0.5 brings a unit mass to the wind's speed
                                  ///< in a few seconds
    ParticleRange range = {0, 0}; ///< particles that feel linear drag; none by default, so a cloth's
                                  ///< particles are not dragged twice
    std::vector<Cloth<T>> cloths = {}; ///< cloths that feel the per-triangle aerodynamic force
    T pressure = T(1);                 ///< >= 0, coefficient of the normal pressure force per unit area
    T skin_friction = T(0.02);         ///< >= 0, coefficient of the tangential force per unit area; small, so a
                                       ///< sheet edge-on to the wind feels ~1/50 of what it feels face-on
    /// Key in the bulk-force registry; default "wind", followed by "@<cloth name>" for each cloth
    /// listed, or "@[begin, end)" for a drag range short of every particle when no cloth is. A name
    /// registered already is an error.
    std::string name = {};
};

namespace detail
{
/// A cloth that is not a grid as the wind kernels see it: its triangles in the order the wind visits
/// them (by their lowest corner's particle, so the pass over triangles walks the particles in
/// memory order, whatever order the mesh file had), padded to whole padding blocks with inert
/// triangles, and per particle the triangles it is a corner of. Built once per cloth; the intact
/// flags follow the constraints' edit stamp.
template <class T>
struct WindMesh
{
    const void* cloth = nullptr;               ///< the cloth (ClothAccess::key) the tables were built for
    std::size_t triangles = 0;                 ///< the cloth's triangles; the arrays hold padded_count of them
    std::vector<std::uint32_t> order;          ///< per visited triangle, its index in cloth.triangles()
    std::vector<std::int32_t> corners[3];      ///< per visited triangle, its corner k's particle
    std::vector<std::uint32_t> offsets;        ///< particle p's triangles are incident[offsets[p - base] ..
                                               ///< offsets[p - base + 1]), count + 1 entries
    std::vector<std::uint32_t> incident;       ///< visited-triangle indices, ascending per particle
    IntactTriangles edges;                     ///< which of the cloth's triangles have all three edges live
    std::optional<std::uint64_t> intact_stamp; ///< the edit stamp `intact` was copied at; none: not yet
    std::vector<T> intact;                     ///< per visited triangle 1 while intact, else 0 (padding: 0)
    std::vector<T> air[3];                     ///< under a gust field, the air at each visited triangle's centroid
    std::vector<T> shares[3];                  ///< per visited triangle, the force each corner gets
};

/// (Re)builds `mesh`'s tables for `cloth` when they were built for another.
template <class T>
void build_wind_mesh(WindMesh<T>& mesh, const Cloth<T>& cloth)
{
    const void* key = ClothAccess::key(cloth);
    const auto& triangles = cloth.triangles();
    if (key == mesh.cloth && mesh.triangles == triangles.size())
        return;
    const std::size_t n = triangles.size(), padded = simd::padded_count<T>(n), base = cloth.base();
    std::vector<std::array<std::int32_t, 3>> particles(n);
    for (std::size_t t = 0; t < n; ++t)
        for (std::size_t k = 0; k < 3; ++k)
            particles[t][k] = std::int32_t(cloth.index(std::size_t(triangles[t][k])));
    const auto lowest = [&](std::uint32_t t) { return std::min({particles[t][0], particles[t][1], particles[t][2]}); };
    mesh.order.resize(n);
    std::iota(mesh.order.begin(), mesh.order.end(), std::uint32_t(0));
    // Ties keep the mesh's order, so the visiting order, and with it every sum, is fixed.
    std::stable_sort(mesh.order.begin(), mesh.order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return lowest(a) < lowest(b); });
    for (std::size_t k = 0; k < 3; ++k)
    {
        mesh.corners[k].assign(padded, std::int32_t(base));
        for (std::size_t t = 0; t < n; ++t)
            mesh.corners[k][t] = particles[mesh.order[t]][k];
        mesh.shares[k].assign(padded, T(0));
    }
    // Counted, then filled in visiting order: each particle's list comes out ascending.
    const auto offset = [&](std::size_t k, std::size_t t) { return std::size_t(mesh.corners[k][t]) - base; };
    mesh.offsets.assign(cloth.count() + 1, 0);
    for (std::size_t t = 0; t < n; ++t)
        for (std::size_t k = 0; k < 3; ++k)
            ++mesh.offsets[offset(k, t) + 1];
    for (std::size_t p = 0; p < cloth.count(); ++p)
        mesh.offsets[p + 1] += mesh.offsets[p];
    mesh.incident.resize(3 * n);
    std::vector<std::uint32_t> next(mesh.offsets.begin(), mesh.offsets.end() - 1);
    for (std::size_t t = 0; t < n; ++t)
        for (std::size_t k = 0; k < 3; ++k)
            mesh.incident[next[offset(k, t)]++] = std::uint32_t(t);
    mesh.intact.assign(padded, T(0));
    mesh.intact_stamp.reset();
    mesh.triangles = n;
    mesh.cloth = key;
}

/// `mesh`'s intact flags in visiting order, copied again only when the edges were recomputed.
template <class T>
void refresh_wind_mesh(WindMesh<T>& mesh, const ConstraintLayers<T>& layers, const Cloth<T>& cloth)
{
    const auto& flags = mesh.edges.refresh(layers, cloth);
    if (mesh.intact_stamp == mesh.edges.stamp)
        return;
    for (std::size_t t = 0; t < mesh.triangles; ++t)
        mesh.intact[t] = flags[mesh.order[t]] ? T(1) : T(0);
    mesh.intact_stamp = mesh.edges.stamp;
}

/// One cloth's scratch for the wind kernels. A grid's: two rows of triangle shares per executor
/// chunk (kernels::ShareRows), and the air at the triangles' centroids, by cell, when a gust field
/// sets it. Any other cloth's: its WindMesh.
template <class T>
struct WindScratch
{
    std::vector<std::vector<T>> rows;
    std::vector<T> lower_wind[3], upper_wind[3];
    WindMesh<T> mesh;
};

template <class T>
struct WindData
{
    WindOptions<T> options;
    T time = T(0);
    std::weak_ptr<World<T>> world = {};
    StageLink<T> link = {};
    std::vector<WindScratch<T>> scratch = {}; ///< one per cloth in options.cloths
};

template <class T>
void check_wind(const WindOptions<T>& o)
{
    if (!o.velocity.allFinite())
        detail::raise<std::invalid_argument>("simdverlet: wind velocity (" + number(o.velocity.x()) + ", " +
                                             number(o.velocity.y()) + ", " + number(o.velocity.z()) +
                                             ") is not finite");
    for (auto [what, v] :
         {std::pair{"drag", o.drag}, std::pair{"pressure", o.pressure}, std::pair{"skin_friction", o.skin_friction}})
        if (!std::isfinite(v) || v < T(0))
            detail::raise<std::invalid_argument>(std::string("simdverlet: wind ") + what +
                                                 " must be finite and >= 0, got " + number(v));
    o.range.check();
}

template <class T>
Vec3<T> wind_at(const WindData<T>& w, const Vec3<T>& p)
{
    return w.options.gust ? w.options.gust(p, w.time) : w.options.velocity;
}

/// The grid of `cloth` for the wind kernels and, under a gust field, the air sampled at every
/// triangle's centroid into its scratch.
template <class T>
kernels::WindGrid<T> wind_grid(const WindData<T>& w, const Cloth<T>& cloth, const StateArrays<T>& s,
                               WindScratch<T>& scratch, T inv_dt)
{
    const auto width = std::size_t(cloth.width()), height = std::size_t(cloth.height());
    kernels::WindGrid<T> g{s,
                           detail::ClothAccess::world(cloth).constraints().arrays_view(),
                           cloth.base(),
                           width,
                           height,
                           {nullptr, nullptr, nullptr},
                           {nullptr, nullptr, nullptr},
                           {w.options.velocity.x(), w.options.velocity.y(), w.options.velocity.z()},
                           (w.options.pressure - w.options.skin_friction) / T(6),
                           w.options.skin_friction / T(6),
                           inv_dt / T(3)};
    if (!w.options.gust)
        return g;
    const std::size_t size = width * height + simd::kPadLanes<T>;
    for (int k = 0; k < 3; ++k)
    {
        scratch.lower_wind[k].resize(size);
        scratch.upper_wind[k].resize(size);
    }
    const auto at = [&](std::size_t i) { return Vec3<T>(s.x[i], s.y[i], s.z[i]); };
    for (std::size_t r = 0; r + 1 < height; ++r)
        for (std::size_t c = 0; c + 1 < width; ++c)
        {
            const std::size_t cell = r * width + c, p00 = cloth.base() + cell, p11 = p00 + width + 1;
            const Vec3<T> lower = w.options.gust((at(p00) + at(p00 + 1) + at(p11)) / T(3), w.time);
            const Vec3<T> upper = w.options.gust((at(p00) + at(p11) + at(p00 + width)) / T(3), w.time);
            for (int k = 0; k < 3; ++k)
            {
                scratch.lower_wind[k][cell] = lower[k];
                scratch.upper_wind[k][cell] = upper[k];
            }
        }
    for (int k = 0; k < 3; ++k)
    {
        g.lower_wind[k] = scratch.lower_wind[k].data();
        g.upper_wind[k] = scratch.upper_wind[k].data();
    }
    return g;
}

/// The wind on a cloth that is not a grid: every triangle's share into `mesh.shares`, one pass
/// over the triangles, then every particle sums its triangles' shares in the fixed order of its
/// list. Both passes split over the executor, the first by triangles, the second by particles, and
/// nothing is scattered, so neither the split nor the path changes a bit.
template <class T>
void blow_on_mesh(const WindData<T>& w, const World<T>& world, const Cloth<T>& cloth, const StateArrays<T>& s,
                  WindMesh<T>& mesh, T inv_dt)
{
    build_wind_mesh(mesh, cloth);
    if (mesh.triangles == 0)
        return;
    refresh_wind_mesh(mesh, world.constraint_layers(), cloth);
    const std::size_t padded = mesh.intact.size();
    kernels::WindTriangles<T> m{s,
                                {mesh.corners[0].data(), mesh.corners[1].data(), mesh.corners[2].data()},
                                mesh.intact.data(),
                                {nullptr, nullptr, nullptr},
                                {mesh.shares[0].data(), mesh.shares[1].data(), mesh.shares[2].data()},
                                {w.options.velocity.x(), w.options.velocity.y(), w.options.velocity.z()},
                                (w.options.pressure - w.options.skin_friction) / T(6),
                                w.options.skin_friction / T(6),
                                inv_dt / T(3)};
    if (w.options.gust)
    {
        // Called here, one triangle after another, not inside the passes: a gust field is the
        // user's function, not promised safe to call from several threads.
        for (int k = 0; k < 3; ++k)
            mesh.air[k].resize(padded);
        const auto at = [&](std::int32_t i) {
            const auto p = std::size_t(i);
            return Vec3<T>(s.x[p], s.y[p], s.z[p]);
        };
        for (std::size_t t = 0; t < padded; ++t)
        {
            const Vec3<T> air = t < mesh.triangles ? w.options.gust((at(mesh.corners[0][t]) + at(mesh.corners[1][t]) +
                                                                     at(mesh.corners[2][t])) /
                                                                        T(3),
                                                                    w.time)
                                                   : Vec3<T>::Zero();
            for (int k = 0; k < 3; ++k)
                mesh.air[k][t] = air[k];
        }
        for (int k = 0; k < 3; ++k)
            m.air[k] = mesh.air[k].data();
    }
    const bool vectorized = world.vectorized();
    // Chunks of a sweep end on whole padding blocks, and so does the padded count: every chunk is
    // whole batches of triangles.
    world.for_each_chunk(padded, [&](std::size_t b, std::size_t e) {
        kernels::blow_on_triangles<xsimd::default_arch>(m, b, e, vectorized);
    });
    const T* const shares[3] = {mesh.shares[0].data(), mesh.shares[1].data(), mesh.shares[2].data()};
    world.for_each_chunk_within(cloth.base(), cloth.end(), [&](std::size_t b, std::size_t e) {
        kernels::gather_triangle_shares(s, cloth.base(), mesh.offsets.data(), mesh.incident.data(), shares, b, e);
    });
}

template <class T>
void blow(WindData<T>& w, State3<T>& state, T dt)
{
    const auto s = state.arrays_view();
    const T inv_dt = T(1) / dt;
    const auto [begin, end] = w.options.range.resolve(state.size());
    for (std::size_t i = begin; i < end; ++i)
    {
        const Vec3<T> v((s.x[i] - s.px[i]) * inv_dt, (s.y[i] - s.py[i]) * inv_dt, (s.z[i] - s.pz[i]) * inv_dt);
        const Vec3<T> f = w.options.drag * (wind_at(w, Vec3<T>(s.x[i], s.y[i], s.z[i])) - v);
        s.ax[i] += f.x();
        s.ay[i] += f.y();
        s.az[i] += f.z();
    }
    // A grid on its grid, row by row: every triangle's share computed once into two rows of
    // scratch, then gathered by its three corners, so the work vectorises with no scatter, the
    // shares are read back from L1, and the vector and scalar paths agree. The rows split over the
    // executor, each chunk with its own scratch; neither the split nor the path changes a bit. Any
    // other cloth through its triangle lists (blow_on_mesh). The world is alive: it owns this stage.
    const auto world = w.world.lock();
    const bool vectorized = world->vectorized();
    w.scratch.resize(w.options.cloths.size());
    for (std::size_t n = 0; n < w.options.cloths.size(); ++n)
    {
        const auto& cloth = w.options.cloths[n];
        if (cloth.removed())
            continue;
        auto& scratch = w.scratch[n];
        if (!cloth.is_grid())
        {
            blow_on_mesh(w, *world, cloth, s, scratch.mesh, inv_dt);
            continue;
        }
        const auto g = wind_grid(w, cloth, s, scratch, inv_dt);
        const std::size_t particles = g.height * g.width, size = kernels::ShareRows<T>::size(g.width);
        scratch.rows.resize(std::max(scratch.rows.size(), world->chunk_count(particles)));
        for (auto& rows : scratch.rows)
            if (rows.size() != size)
                rows.assign(size, T(0)); // once: what no cell writes stays zero
        world->for_each_indexed_chunk(0, particles, [&](std::size_t chunk, std::size_t b, std::size_t e) {
            // The rows that start in the chunk, as the render mesh splits them.
            const kernels::ShareRows<T> rows{scratch.rows[chunk].data(), kernels::ShareRows<T>::stride_for(g.width)};
            kernels::blow_on_rows<xsimd::default_arch>(g, rows, (b + g.width - 1) / g.width,
                                                       (e + g.width - 1) / g.width, vectorized);
        });
    }
    w.time += dt;
}
} // namespace detail

/// Handle of a registered wind, with the shape of every stage handle (handle.hpp).
template <class T>
class Wind : public detail::StageHandle<T, detail::WindData<T>>
{
    using Base = detail::StageHandle<T, detail::WindData<T>>;

  public:
    /// A handle of no stage yet: it reports an empty stage that was removed, and acting on it throws
    /// std::logic_error.
    Wind() = default;
    /// Seconds of simulated time the wind has blown, the clock `gust` is called with.
    T time() const noexcept { return this->data().time; }
    const WindOptions<T>& options() const noexcept { return this->data().options; }

    /// Throws std::invalid_argument, changing nothing, unless finite.
    void set_velocity(const Vec3<T>& v)
    {
        auto& d = this->live();
        WindOptions<T> o = d.options;
        o.velocity = v;
        detail::check_wind(o);
        d.options.velocity = v;
    }

  private:
    template <class U>
    friend Wind<U> add_wind(Simulation<U>& sim, WindOptions<U> options);
    explicit Wind(std::shared_ptr<detail::WindData<T>> data) : Base(std::move(data)) {}
};

/// Registers wind as a bulk force (it runs before the constraint solve, adding into the same
/// accumulators as the springs) and returns its handle. Throws, registering nothing, on a bad
/// option, a cloth of another simulation or a name registered already.
template <class T>
Wind<T> add_wind(Simulation<T>& sim, WindOptions<T> options)
{
    detail::check_wind(options);
    for (const auto& cloth : options.cloths)
        if (!cloth.belongs_to(sim))
            detail::raise<std::invalid_argument>("simdverlet: wind was given cloth '" + cloth.name() +
                                                 "' of another simulation");
    std::string derived = "wind";
    for (const auto& cloth : options.cloths)
        derived += "@" + cloth.name();
    if (options.cloths.empty() && options.range.end != options.range.begin)
        derived += detail::range_suffix(options.range);
    options.name = detail::stage_name(sim.bulk_forces(), options.name, derived);
    auto data = std::make_shared<detail::WindData<T>>(
        detail::WindData<T>{.options = std::move(options), .world = detail::world_of(sim)});
    const auto registration = detail::tie_link(sim, *data, data->options.name, "wind",
                                               &detail::World<T>::remove_bulk_force);
    sim.add_bulk_force(data->options.name, [data, registration](State3<T>& s, T dt) {
        static_cast<void>(registration); // owned here: see detail::Registration
        detail::blow(*data, s, dt);
    });
    // Its clock is state: a gust restored from a snapshot blows as it did at that moment.
    sim.add_stage_state(data->options.name,
                        detail::field_state(data, [](detail::WindData<T>& d) { return std::tie(d.time); }));
    return Wind<T>(std::move(data));
}

} // namespace simdverlet
