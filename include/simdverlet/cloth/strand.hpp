// Strand: a rope appended to a simulation, the one-dimensional sibling of Cloth. Node n is particle
// base + n; slot 0 points forward, slot 1 back, and slots 2 and 3 stay free on every node for
// attach_to, so a rope can be tied to a cloth corner, another rope or any particle with a free
// slot by an ordinary symmetric spring that the solver, colliders and tearing already understand.
//
// Bending is a position projection, not a force: a bending force would sit on the solver's
// stiffness x iterations scale, whose divergence ceiling lies below the strength that holds a rope
// straight. A projection has no stiffness, so it has no ceiling.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// What bend_stiffness = 1 maps onto: the largest per-step bending correction this integrator
/// holds. A full correction (1.0) fights the distance springs and diverges on a 20-node cantilever;
/// 0.6 settles on both the heaped rope and the cantilever, so the 0..1 knob is scaled onto the band
/// that works rather than documenting a range with a cliff in it.
inline constexpr double kMaxBendCorrection = 0.6;

/// What add_strand appends.
template <class T>
struct StrandOptions
{
    int count = 20;          ///< nodes, >= 2
    T spacing = T(0.2);      ///< world units between nodes in the default layout (a line along +x) and the
                             ///< rest length of every segment unless rest_length_from_layout; > 0
    T stiffness = T(60);     ///< per slot, >= 0; as everywhere, the rope feels stiffness x iterations
    T mass = T(1);           ///< per node, > 0; needs per-particle masses unless 1
    T bend_stiffness = T(0); ///< in [0, 1]: how far toward straight each interior node moves per
                             ///< step, 1 meaning kMaxBendCorrection. 0 (limp) registers nothing
    std::function<Vec3<T>(int node)> position = {}; ///< layout; default (node x spacing, 0, 0)
    bool rest_length_from_layout = false;           ///< rest lengths measured from `position`
    std::function<bool(int node)> pinned = {};      ///< nodes with inverse mass 0; none by default
    std::string name = {};                          ///< prefix of its stages; default "strand@<base>"
};

namespace detail
{
template <class T>
struct StrandData
{
    static constexpr const char* kind = "strand"; ///< how messages name it (BlockHandle)
    std::weak_ptr<World<T>> world;
    std::size_t base = 0;
    int count = 0;
    T stiffness = T(0);
    T mass = T(1);
    T bend = T(0);
    std::string name;
    std::uint64_t protection = 0;
    bool removed = false;
};

/// The bending projection over nodes [base, base + count): each interior node b moves toward the
/// midpoint of its neighbours a and c, C = b - (a + c) / 2, mass-weighted (db = w_b d / S,
/// da = dc = -w d / 2S, S = w_b + (w_a + w_c) / 4), x and px moved together so no velocity is
/// injected. Three colours: stencils three apart are disjoint, so within a colour the corrections
/// cannot stack (a plain sweep over-relaxes and diverges by alpha 0.9).
template <class T>
void project_bend(State3<T>& state, std::size_t base, int count, T alpha)
{
    if (alpha == T(0) || count < 3)
        return;
    const auto s = state.arrays_view();
    const auto w = [&](std::size_t i) { return s.inv_mass ? s.inv_mass[i] : T(1); };
    const std::size_t end = base + std::size_t(count);
    const auto shift = [&](std::size_t i, T weight, const Vec3<T>& d) {
        if (weight == T(0))
            return;
        for (int k = 0; k < 3; ++k)
        {
            T* x = k == 0 ? s.x : k == 1 ? s.y : s.z;
            T* px = k == 0 ? s.px : k == 1 ? s.py : s.pz;
            x[i] += weight * d[k];
            px[i] += weight * d[k];
        }
    };
    for (std::size_t colour = 0; colour < 3; ++colour)
        for (std::size_t i = base + 1 + colour; i + 1 < end; i += 3)
        {
            const T wa = w(i - 1), wb = w(i), wc = w(i + 1);
            const T denom = wb + T(0.25) * (wa + wc);
            if (denom <= T(0))
                continue;
            const Vec3<T> mid_gap((s.x[i - 1] + s.x[i + 1]) * T(0.5) - s.x[i],
                                  (s.y[i - 1] + s.y[i + 1]) * T(0.5) - s.y[i],
                                  (s.z[i - 1] + s.z[i + 1]) * T(0.5) - s.z[i]);
            const Vec3<T> step = alpha * mid_gap / denom;
            shift(i, wb, step);
            shift(i - 1, T(-0.5) * wa, step);
            shift(i + 1, T(-0.5) * wc, step);
        }
}
} // namespace detail

/// Live handle of a rope. Copies address the same rope. It refers to its simulation's world, so
/// the simulation may move; once it is destroyed, calls that need it report a logic_error.
template <class T>
class Strand : public detail::BlockHandle<T, detail::StrandData<T>>
{
    using Base = detail::BlockHandle<T, detail::StrandData<T>>;
    using Base::any_world;
    using Base::d;
    using Base::data;
    using Base::require_block;
    using Base::state;
    using Base::world;

  public:
    /// A handle of no strand yet: it reads as an empty strand that was removed, and a member that
    /// acts throws std::logic_error.
    Strand() = default;

    /// Particle index of node n.
    std::size_t node(int n) const
    {
        require_block();
        if (n < 0 || n >= d().count)
            detail::raise<std::out_of_range>("simdverlet: node " + std::to_string(n) + " is outside the " +
                                             std::to_string(d().count) + "-node strand '" + d().name + "'");
        return d().base + std::size_t(n);
    }

    std::size_t base() const noexcept { return d().base; }
    std::size_t end() const noexcept { return d().base + std::size_t(d().count); }
    int count() const noexcept { return d().count; }
    const std::string& name() const noexcept { return d().name; }
    ParticleRange range() const noexcept { return {base(), end()}; }
    bool contains(std::size_t particle) const noexcept { return particle >= base() && particle < end(); }

    Vec3<T> position(int n) const { return state().position(node(n)); }

    void pin(int n, bool pinned = true) { state().set_inverse_mass(node(n), pinned ? T(0) : T(1) / d().mass); }
    bool is_pinned(int n) const { return state().is_pinned(node(n)); }

    /// Moves node n; it arrives at rest unless keep_velocity.
    void teleport(int n, const Vec3<T>& to, bool keep_velocity = false)
    {
        state().set_position(node(n), to, keep_velocity);
    }

    /// Ties node n to `particle` with a symmetric spring, one free slot on each side, and returns
    /// the rest length used (by default the current distance, so tying does not yank). Throws,
    /// changing nothing, when either side has no free slot: a cloth's interior particle spends all
    /// four on its neighbours, an edge has one free, a corner two.
    T attach_to(std::size_t particle, int n, std::optional<T> rest = std::nullopt,
                std::optional<T> stiffness = std::nullopt)
    {
        const std::size_t i = node(n);
        auto& k = world().constraints();
        state().check_index(particle);
        if (contains(particle))
            detail::raise<std::invalid_argument>("simdverlet: cannot tie strand '" + d().name +
                                                 "' to its own particle " + std::to_string(particle) +
                                                 "; pin it or use a second strand");
        if (!k.free_slot(i))
            detail::raise<std::logic_error>("simdverlet: strand '" + d().name + "' node " + std::to_string(n) +
                                            " (particle " + std::to_string(i) + ") has no free slot to tie with");
        if (!k.free_slot(particle))
            detail::raise<std::logic_error>(
                "simdverlet: particle " + std::to_string(particle) +
                " has no free slot to tie to: all four name a neighbour (a cloth's interior "
                "particle does; tie to an edge, which has one free, or a corner, which has two)");
        const T length = rest.value_or((state().position(particle) - state().position(i)).norm());
        // connect_within_layer validates rest and stiffness before it writes anything.
        k.connect_within_layer(i, particle, length, stiffness.value_or(d().stiffness));
        return length;
    }

    T bend_stiffness() const noexcept { return d().bend; }

    /// In [0, 1]; registers the bending projection when non-zero, unregisters it at 0. Outside the
    /// range throws: an over-correcting projection is a force with extra steps.
    void set_bend_stiffness(T bend)
    {
        check_bend(bend);
        data().bend = bend;
        if (bend == T(0))
            world().remove_position_projection(bend_stage());
        else if (!world().position_projections().contains(bend_stage()))
            world().add_position_projection(bend_stage(), [strand = this->shared()](State3<T>& s, T) {
                detail::project_bend(s, strand->base, strand->count, strand->bend * T(kMaxBendCorrection));
            });
    }

    /// Mean angle between successive segments, in degrees: 0 for a straight rope, the readout
    /// bend_stiffness is measured in.
    double mean_kink_degrees() const
    {
        double total = 0;
        int counted = 0;
        for (int n = 1; n + 1 < count(); ++n)
        {
            const Vec3<double> u = (position(n) - position(n - 1)).template cast<double>();
            const Vec3<double> v = (position(n + 1) - position(n)).template cast<double>();
            const double lu = u.norm(), lv = v.norm();
            if (lu < 1e-9 || lv < 1e-9)
                continue;
            total += std::acos(std::clamp(u.dot(v) / (lu * lv), -1.0, 1.0)) * 180.0 / std::numbers::pi;
            ++counted;
        }
        return counted == 0 ? 0.0 : total / counted;
    }

    /// The rope as one polyline.
    std::vector<Vec3<T>> lines() const
    {
        std::vector<Vec3<T>> out;
        for (int n = 0; n < count(); ++n)
            out.push_back(position(n));
        return out;
    }

    /// Steps the whole simulation.
    void step(const StepParams<T>& params, const typename Simulation<T>::StateStage& accumulate_forces = {})
    {
        world().step(params, accumulate_forces);
    }

    /// Detaches the rope: clears its nodes' slots, drops its bending pass and its removal
    /// protection; the particles stay. Particles it was tied to keep their half of each tie.
    /// Returns whether the rope was still attached; throws std::logic_error naming the strand when
    /// its simulation was destroyed.
    bool remove()
    {
        if (!this->has_block())
            return false;
        auto& world = any_world();
        if (d().removed)
            return false;
        world.remove_position_projection(bend_stage());
        world.detach_block(base(), end(), d().protection);
        data().removed = true;
        return true;
    }

  private:
    template <class U>
    friend Strand<U> add_strand(Simulation<U>& sim, StrandOptions<U> options);

    explicit Strand(std::shared_ptr<detail::StrandData<T>> data) : Base(std::move(data)) {}

    std::string bend_stage() const { return d().name + ".bend"; }

    static void check_bend(T bend)
    {
        if (!(bend >= T(0) && bend <= T(1)))
            detail::raise<std::invalid_argument>("simdverlet: bend_stiffness must be in [0, 1], got " +
                                                 detail::number(bend));
    }
};

/// Appends a rope to `sim` and returns its handle. Everything is validated before anything is
/// appended, so a failed call leaves sim unchanged.
template <class T>
Strand<T> add_strand(Simulation<T>& sim, StrandOptions<T> o)
{
    if (o.count < 2)
        detail::raise<std::invalid_argument>("simdverlet: a strand needs at least 2 nodes, got " +
                                             std::to_string(o.count));
    if (!std::isfinite(o.spacing) || !(o.spacing > T(0)))
        detail::raise<std::invalid_argument>("simdverlet: strand spacing must be finite and > 0, got " +
                                             detail::number(o.spacing));
    if (!std::isfinite(o.stiffness) || o.stiffness < T(0))
        detail::raise<std::invalid_argument>("simdverlet: strand stiffness must be finite and >= 0, got " +
                                             detail::number(o.stiffness));
    if (!std::isfinite(o.mass) || !(o.mass > T(0)))
        detail::raise<std::invalid_argument>("simdverlet: strand mass must be finite and > 0, got " +
                                             detail::number(o.mass));
    if (!(o.bend_stiffness >= T(0) && o.bend_stiffness <= T(1)))
        detail::raise<std::invalid_argument>("simdverlet: bend_stiffness must be in [0, 1], got " +
                                             detail::number(o.bend_stiffness));
    if (!sim.state().has_masses() && o.mass != T(1))
        detail::raise<std::logic_error>("simdverlet: strand mass " + detail::number(o.mass) +
                                        " needs a state with per-particle masses (Masses::per_particle)");
    if (!o.name.empty() && sim.position_projections().contains(o.name + ".bend"))
        detail::raise<std::invalid_argument>("simdverlet: a strand named '" + o.name + "' is already registered");
    if (sim.pending_removals() > 0)
        detail::raise<std::logic_error>(
            "simdverlet: cannot append a strand while particle removals are queued: the next "
            "step would renumber it. Step once first.");
    std::vector<Vec3<T>> layout;
    std::vector<bool> pinned;
    for (int n = 0; n < o.count; ++n)
    {
        const Vec3<T> p = o.position ? o.position(n) : Vec3<T>(T(n) * o.spacing, T(0), T(0));
        if (!p.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: strand layout position of node " + std::to_string(n) +
                                                 " is not finite");
        layout.push_back(p);
        pinned.push_back(o.pinned && o.pinned(n));
        if (pinned.back() && !sim.state().has_masses())
            detail::raise<std::logic_error>("simdverlet: cannot pin strand node " + std::to_string(n) +
                                            ": the simulation's state has unit masses (Masses::unit)");
    }

    const std::size_t base = sim.size();
    for (int n = 0; n < o.count; ++n)
        sim.add_particle(layout[std::size_t(n)], pinned[std::size_t(n)] ? T(0) : T(1) / o.mass);
    auto& k = sim.constraints();
    for (int n = 0; n + 1 < o.count; ++n)
    {
        const std::size_t i = base + std::size_t(n);
        const T rest = o.rest_length_from_layout ? (layout[std::size_t(n + 1)] - layout[std::size_t(n)]).norm()
                                                 : o.spacing;
        k.set_slot(i, 0, std::int32_t(i + 1), rest, o.stiffness); // forward
        k.set_slot(i + 1, 1, std::int32_t(i), rest, o.stiffness); // back
    }

    auto data = std::make_shared<detail::StrandData<T>>();
    data->world = detail::world_of(sim);
    data->base = base;
    data->count = o.count;
    data->stiffness = o.stiffness;
    data->mass = o.mass;
    data->name = o.name.empty() ? "strand@" + std::to_string(base) : o.name;
    data->protection = detail::world_of(sim)->protect_range(base, base + std::size_t(o.count),
                                                            "strand '" + data->name + "'");
    Strand<T> strand(std::move(data));
    strand.set_bend_stiffness(o.bend_stiffness);
    return strand;
}

} // namespace simdverlet
