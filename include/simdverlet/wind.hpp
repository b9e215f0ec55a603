// Wind: a bulk force. Particles in a range feel linear drag toward the wind velocity; cloths feel
// an aerodynamic force per grid triangle from the air's velocity relative to the triangle, its
// normal and its area. The pressure force acts along the triangle's normal with magnitude
// ~ (u . n) |u|, so on an inclined triangle it has a component along the flow (drag) and one
// across it (lift): that is what makes a sheet held by its top edge sail and a flag flutter, and
// why a sheet edge-on to the wind feels (almost) nothing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "cloth.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "simulation.hpp"
#include "state.hpp"

namespace simdverlet
{

/// What add_wind registers.
template <class T>
struct WindOptions
{
    Vec3<T> velocity = Vec3<T>::Zero();                                ///< steady wind, world units per second
    std::function<Vec3<T>(const Vec3<T>& position, T time)> gust = {}; ///< when set, the wind at a point and a
        ///< time (seconds since add_wind), replacing `velocity`: gusts, shear
    T drag = T(0.5); ///< >= 0, linear drag of the particles in `particles`: force = drag x (wind - velocity),
                     ///< velocity in world units per second. 0.5 brings a unit mass to the wind's speed
                     ///< in a few seconds
    ParticleRange particles = {0, 0};  ///< particles that feel linear drag; none by default, so a cloth's
                                       ///< particles are not dragged twice
    std::vector<Cloth<T>> cloths = {}; ///< cloths that feel the per-triangle aerodynamic force
    T pressure = T(1);                 ///< >= 0, coefficient of the normal pressure force per unit area
    T skin_friction = T(0.02);         ///< >= 0, coefficient of the tangential force per unit area; small, so a
                                       ///< sheet edge-on to the wind feels ~1/50 of what it feels face-on
    std::string name = "wind";         ///< key in the bulk-force registry
};

namespace detail
{
/// One cloth's scratch for the wind kernels: two rows of triangle shares per executor chunk
/// (kernels::ShareRows), and the air at the triangles' centroids, by cell, when a gust field sets it.
template <class T>
struct WindScratch
{
    std::vector<std::vector<T>> rows;
    std::vector<T> lower_wind[3], upper_wind[3];
};

template <class T>
struct WindData
{
    WindOptions<T> options;
    T time = T(0);
    std::weak_ptr<World<T>> world = {};
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
    o.particles.check();
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

template <class T>
void blow(WindData<T>& w, State3<T>& state, T dt)
{
    const auto s = state.arrays_view();
    const T inv_dt = T(1) / dt;
    const auto [begin, end] = w.options.particles.resolve(state.size());
    for (std::size_t i = begin; i < end; ++i)
    {
        const Vec3<T> v((s.x[i] - s.px[i]) * inv_dt, (s.y[i] - s.py[i]) * inv_dt, (s.z[i] - s.pz[i]) * inv_dt);
        const Vec3<T> f = w.options.drag * (wind_at(w, Vec3<T>(s.x[i], s.y[i], s.z[i])) - v);
        s.ax[i] += f.x();
        s.ay[i] += f.y();
        s.az[i] += f.z();
    }
    // Each cloth on its grid, row by row: every triangle's share computed once into two rows of
    // scratch, then gathered by its three corners, so the work vectorises with no scatter, the
    // shares are read back from L1, and the vector and scalar paths agree. The rows split over the
    // executor, each chunk with its own scratch; neither the split nor the path changes a bit. The
    // world is alive: it owns this stage.
    const auto world = w.world.lock();
    const bool vectorized = world->vectorized();
    w.scratch.resize(w.options.cloths.size());
    for (std::size_t n = 0; n < w.options.cloths.size(); ++n)
    {
        const auto& cloth = w.options.cloths[n];
        if (cloth.removed() || cloth.width() < 2 || cloth.height() < 2)
            continue;
        auto& scratch = w.scratch[n];
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

/// Live handle of a registered wind.
template <class T>
class Wind
{
  public:
    /// Seconds of simulated time the wind has blown, the clock `gust` is called with.
    T time() const noexcept { return m_data->time; }
    const WindOptions<T>& options() const noexcept { return m_data->options; }

    void set_velocity(const Vec3<T>& v)
    {
        WindOptions<T> o = m_data->options;
        o.velocity = v;
        detail::check_wind(o);
        m_data->options.velocity = v;
    }

    /// Unregisters the wind (and its saved clock); returns whether it was registered.
    bool remove()
    {
        return detail::lock_world(m_world, "wind '" + m_data->options.name + "'")
            ->remove_bulk_force(m_data->options.name);
    }

  private:
    template <class U>
    friend Wind<U> add_wind(Simulation<U>& sim, WindOptions<U> options);
    Wind(std::weak_ptr<detail::World<T>> world, std::shared_ptr<detail::WindData<T>> data)
        : m_world(std::move(world)), m_data(std::move(data))
    {
    }
    std::weak_ptr<detail::World<T>> m_world;
    std::shared_ptr<detail::WindData<T>> m_data;
};

/// Registers wind as a bulk force (it runs before the constraint solve, adding into the same
/// accumulators as the springs) and returns its handle.
template <class T>
Wind<T> add_wind(Simulation<T>& sim, WindOptions<T> options)
{
    detail::check_wind(options);
    for (const auto& cloth : options.cloths)
        if (!cloth.belongs_to(sim))
            detail::raise<std::invalid_argument>("simdverlet: wind was given cloth '" + cloth.name() +
                                                 "' of another simulation");
    auto data = std::make_shared<detail::WindData<T>>(
        detail::WindData<T>{.options = std::move(options), .world = detail::world_of(sim)});
    sim.add_bulk_force(data->options.name, [data](State3<T>& s, T dt) { detail::blow(*data, s, dt); });
    // Its clock is state: a gust restored from a snapshot blows as it did at that moment.
    sim.add_stage_state(data->options.name,
                        detail::field_state(data, [](detail::WindData<T>& d) { return std::tie(d.time); }));
    return Wind<T>(detail::world_of(sim), std::move(data));
}

} // namespace simdverlet
