// Tethers (long-range attachments): each particle of a cloth stays within `slack` x its rest
// distance of its nearest anchor. A hanging sheet then cannot stretch out under its own weight
// however soft its springs, which a stiffness-only cure pays for with stiffness and substeps.
// Anchors joined by springs form an island (a pinned row is one, each pinned corner its own), and
// a particle is tethered to the nearest anchor of each of its nearest islands: a sheet hung from
// two corners is held from both, so its top edge, as long as the distance between them, stays
// straight instead of sagging towards whichever corner each particle happens to be nearer.
//
// The projection is one-sided (a particle closer than its limit is never pulled), and anchors are
// their own nearest anchor at distance 0, so the pass never moves one: every particle reads only
// unmoving anchors and writes only itself, and the result is the same for any thread count and
// split. Which anchors a particle hangs from, and how far, is recomputed whenever the constraint
// set changes (a tear or a cut can disconnect a particle from every anchor, which releases it).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "simdverlet/cloth/cloth.hpp"
#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simd_lanes.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/stage_state.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/projection.hpp"
#include "simdverlet/limits/detail/tether_paths.hpp"

namespace simdverlet
{

/// How a tether's rest distance is measured.
enum class TetherKind
{
    /// Along the cloth: the shortest path through live springs (a mesh cloth's edges and bend
    /// springs) and, on a grid, intact cells (a cell's diagonal crosses it when two of its sides
    /// around that corner are live), with the springs' rest lengths. A sheet hanging over a bar keeps the length that runs over the bar, and a
    /// cut that a path must go around lengthens it. Diagonal steps make the path at most 8.3 %
    /// longer than the straight line across a flat, uncut sheet (exact along rows, columns and
    /// diagonals).
    geodesic,
    /// The straight line between the particle and its anchor in the cloth's pose when the tethers
    /// were added, to the nearest anchor still connected to it by springs. Cheaper to set up; it
    /// cuts corners (over a bar, straight through it).
    euclidean,
};

/// What add_tethers registers.
template <class T>
struct TethersOptions
{
    /// The cloth whose particles are tethered; required.
    Cloth<T> cloth = {};
    /// Particle indices of the simulation, inside the cloth: the points particles hang from. Empty
    /// (the default): the cloth's pinned particles when the tethers are added. An anchor moved by
    /// hand (a teleported pin, a grab) takes its tethers with it: limits are measured from where
    /// the anchor is at each step.
    std::vector<std::size_t> anchors = {};
    TetherKind kind = TetherKind::geodesic;
    /// Finite and >= 1: how far past its rest distance a particle may go, as a factor of it. 1 holds
    /// the rest distance exactly; 1.05 allows 5 %.
    T slack = T(1);
    /// >= 1: how many islands of anchors (anchors joined to one another by the cloth's springs) each
    /// particle is tethered to, the nearest anchor of each of its nearest islands. 1 keeps only the
    /// nearest anchor; a cloth pinned in one piece (a row, a waistband) has one island whatever this
    /// says. Four, as PhysX's geodesic tether cooker does: a sheet hung from two or four corners is
    /// held from all of them (docs/performance.md measures two).
    int islands = 4;
    /// Key in the position-projection registry and in snapshots; default "tethers@<cloth name>".
    /// A name registered already is an error.
    std::string name = {};
};

namespace detail
{
/// A cloth's tethers: the settings, and the anchor and rest distance of each particle, recomputed
/// when the constraints' edit stamp moves.
template <class T>
struct TetherData
{
    TetherData() = default;
    TetherData(Cloth<T> of, std::weak_ptr<World<T>> in) : cloth(std::move(of)), world(std::move(in)) {}

    Cloth<T> cloth;
    std::weak_ptr<World<T>> world;
    StageLink<T> link;
    std::vector<std::size_t> anchors;
    TetherKind kind = TetherKind::geodesic;
    T slack = T(1);
    std::string name;
    int islands = 4;           ///< the most islands a particle is tethered to
    std::vector<Vec3<T>> pose; ///< the cloth's positions when the tethers were added (euclidean)
    // Per tether rank (0: the nearest island) and particle of the cloth, rank-major, each rank
    // `span` long from `first` (the cloth's base rounded down to a whole padding block, so lane
    // groups read them aligned): the anchor's index, -1 when there is none, and the rest distance.
    bool computed = false;
    std::uint64_t stamp = 0; ///< the constraints' edit stamp they were computed for
    std::size_t first = 0;
    std::size_t span = 0;
    int ranks = 0;        ///< tethers a particle can have now: the lesser of `islands` and the islands
    int island_count = 0; ///< islands of anchors, as of the constraints now
    simd::AlignedVector<std::int32_t> anchor_of;
    simd::AlignedVector<T> rest;
    int tethered = 0; ///< particles with an anchor (anchors included)
    int pulled = 0;   ///< particles the last step pulled in
};

template <class T>
void check_slack(T slack)
{
    if (!std::isfinite(slack) || slack < T(1))
        detail::raise<std::invalid_argument>("simdverlet: tether slack must be finite and >= 1, got " + number(slack));
}

inline void check_islands(int islands)
{
    if (islands < 1)
        detail::raise<std::invalid_argument>("simdverlet: tethers need islands >= 1, got " + std::to_string(islands));
}

/// Each particle's tethers, nearest island first: rank r of particle k at r x count + k.
template <class T>
struct RankedTethers
{
    RankedTethers(int ranks, std::size_t count)
        : count(count),
          anchor(std::size_t(ranks) * count, -1),
          dist(std::size_t(ranks) * count, std::numeric_limits<T>::infinity())
    {
    }

    /// Keeps island's anchor `a` at `d` if it is nearer than one of particle k's kept islands
    /// (strictly: of equally near islands the one found first stays).
    void offer(std::size_t k, std::int32_t a, T d)
    {
        const std::size_t ranks = anchor.size() / count;
        for (std::size_t r = 0; r < ranks; ++r)
        {
            if (!(d < dist[r * count + k]))
                continue;
            for (std::size_t later = ranks - 1; later > r; --later)
            {
                anchor[later * count + k] = anchor[(later - 1) * count + k];
                dist[later * count + k] = dist[(later - 1) * count + k];
            }
            anchor[r * count + k] = a;
            dist[r * count + k] = d;
            return;
        }
    }
    /// Each particle's last kept island's distance (infinity while it keeps fewer): an island
    /// farther than that is kept by none of the particles reached through it.
    std::span<const T> farthest() const { return std::span<const T>(dist).subspan(dist.size() - count); }

    std::size_t count;
    std::vector<std::int32_t> anchor;
    std::vector<T> dist;
};

/// Recomputes each particle's anchors and rest distances from the constraints as they are now: one
/// search per island of anchors, each particle keeping its `islands` nearest.
template <class T>
void compute_tethers(TetherData<T>& d, const World<T>& world)
{
    const auto views = world.constraint_layers().views();
    const Layers<T> c(views);
    const std::size_t n = d.cloth.count(), base = d.cloth.base();
    const StepGraph<T> graph = step_graph(d.cloth, c);
    const auto islands = anchor_islands(d, graph);
    const int ranks = std::min(d.islands, int(islands.size()));
    RankedTethers<T> kept(ranks, n);
    const bool geodesic = d.kind == TetherKind::geodesic;
    const NodeTriangles around = geodesic && !d.cloth.is_grid() ? node_triangles(d.cloth, c) : NodeTriangles{};
    const std::vector<std::int32_t> piece = geodesic ? std::vector<std::int32_t>{} : cloth_pieces(d, graph);
    std::vector<std::int32_t> anchor(n);
    std::vector<T> dist(n);
    for (const auto& island : islands)
    {
        std::fill(anchor.begin(), anchor.end(), -1);
        std::fill(dist.begin(), dist.end(), std::numeric_limits<T>::infinity());
        if (geodesic)
            nearest_along_cloth(d, c, graph, around, std::span<const std::size_t>(island), kept.farthest(), anchor,
                                dist);
        else
            nearest_in_pose(d, std::span<const std::size_t>(island), std::span<const std::int32_t>(piece), anchor,
                            dist);
        for (std::size_t k = 0; k < n; ++k)
            if (anchor[k] >= 0)
                kept.offer(k, anchor[k], dist[k]);
    }
    // An anchor hangs from itself alone. Tethered to another island, one that is not pinned would
    // move within the pass while other particles read it as their anchor.
    for (const std::size_t a : d.anchors)
        for (std::size_t r = 1; r < std::size_t(ranks); ++r)
        {
            kept.anchor[r * n + a - base] = -1;
            kept.dist[r * n + a - base] = std::numeric_limits<T>::infinity();
        }
    d.first = base / simd::kPadLanes<T> * simd::kPadLanes<T>;
    d.span = simd::padded_count<T>(base + n - d.first);
    d.ranks = ranks;
    d.island_count = int(islands.size());
    d.anchor_of.assign(std::size_t(ranks) * d.span, -1);
    d.rest.assign(std::size_t(ranks) * d.span, T(0));
    for (std::size_t r = 0; r < std::size_t(ranks); ++r)
        for (std::size_t k = 0; k < n; ++k)
            if (kept.anchor[r * n + k] >= 0)
            {
                d.anchor_of[r * d.span + base + k - d.first] = kept.anchor[r * n + k];
                d.rest[r * d.span + base + k - d.first] = kept.dist[r * n + k];
            }
    d.tethered = int(std::count_if(kept.anchor.begin(), kept.anchor.begin() + std::ptrdiff_t(n),
                                   [](std::int32_t a) { return a >= 0; }));
    d.stamp = world.constraint_layers().edit_stamp();
    d.computed = true;
}

template <class T>
void refresh_tethers(TetherData<T>& d, const World<T>& world)
{
    if (!d.computed || d.stamp != world.constraint_layers().edit_stamp())
        compute_tethers(d, world);
}

/// One tether, written once for a scalar (V = T, M = bool) and a batch of lanes: a movable particle
/// farther than slack x rest from its anchor goes back onto that sphere, along the line to it.
/// Only x moves: the pull also takes the outward velocity it cancels.
template <class T, class V, class M>
M pull_toward_anchor(kernels::ParticleLanes<V>& p, const M& movable, const M& has_anchor, const V& ax, const V& ay,
                     const V& az, const V& rest, T slack)
{
    const V dx = p.x - ax, dy = p.y - ay, dz = p.z - az;
    const V dist2 = dx * dx + dy * dy + dz * dz;
    const V limit = rest * V(slack);
    const M over = movable && has_anchor && (dist2 > limit * limit);
    if (!simd::any(over))
        return over;
    const V scale = limit / simd::sqrt(dist2);
    p.x = simd::select(over, ax + dx * scale, p.x);
    p.y = simd::select(over, ay + dy * scale, p.y);
    p.z = simd::select(over, az + dz * scale, p.z);
    return over;
}

/// A point of lanes, for the lens below.
template <class V>
struct Point3
{
    V x, y, z;
};

/// Two tethers at once, written once for a scalar and a batch of lanes: a movable particle goes to
/// the nearest point within reach of both anchors a and b (slack x rest from each), so both hold
/// exactly, where one projection after the other would leave the first broken. The nearest point
/// of the lens the two balls share is the particle itself, its projection onto one ball when that
/// lies inside the other, or else on the circle where the two spheres meet. Balls that only touch
/// (a top edge exactly as long as its two pinned corners are apart: every particle of it has a
/// one-point lens, which rounding can make an empty one) or do not meet at all (anchors carried
/// farther apart than both reaches) give the point of a's sphere on the line to b. A particle on
/// that line, where the circle has no nearest point, goes onto a's sphere alone. Lanes without b
/// take a's projection alone. `a` is the nearer island's anchor: its tether always holds.
template <class T, class V, class M>
M pull_into_lens(kernels::ParticleLanes<V>& p, const M& movable, const M& has_a, const Point3<V>& a, const V& rest_a,
                 const M& has_b, const Point3<V>& b, const V& rest_b, T slack)
{
    const V zero(T(0));
    const V reach_a = rest_a * V(slack), reach_b = rest_b * V(slack);
    const V pax = p.x - a.x, pay = p.y - a.y, paz = p.z - a.z;
    const V pbx = p.x - b.x, pby = p.y - b.y, pbz = p.z - b.z;
    const V da2 = pax * pax + pay * pay + paz * paz, db2 = pbx * pbx + pby * pby + pbz * pbz;
    const M out_a = has_a && (da2 > reach_a * reach_a);
    const M out_b = has_b && (db2 > reach_b * reach_b);
    const M moved = movable && (out_a || out_b);
    if (!simd::any(moved))
        return moved;
    const auto within = [](const Point3<V>& q, const Point3<V>& c, const V& reach) {
        const V dx = q.x - c.x, dy = q.y - c.y, dz = q.z - c.z;
        return dx * dx + dy * dy + dz * dz <= reach * reach;
    };
    // Onto a's sphere alone (the particle itself where it is inside): where that lies within b's
    // reach, as it does for most of a hanging sheet, it is the answer, and the rest is not needed.
    const V scale_a = simd::select(out_a, reach_a / simd::sqrt(simd::select(out_a, da2, V(T(1)))), V(T(1)));
    const Point3<V> qa{a.x + pax * scale_a, a.y + pay * scale_a, a.z + paz * scale_a};
    const M qa_in_b = !has_b || within(qa, b, reach_b);
    if (!simd::any(moved && !qa_in_b))
    {
        p.x = simd::select(moved, qa.x, p.x);
        p.y = simd::select(moved, qa.y, p.y);
        p.z = simd::select(moved, qa.z, p.z);
        return moved;
    }
    const V scale_b = simd::select(out_b, reach_b / simd::sqrt(simd::select(out_b, db2, V(T(1)))), V(T(1)));
    const Point3<V> qb{b.x + pbx * scale_b, b.y + pby * scale_b, b.z + pbz * scale_b};
    const M qb_in_a = has_b && within(qb, a, reach_a);
    // The circle where the spheres meet: its centre on the line a -> b, `along` from a, radius h.
    const V abx = b.x - a.x, aby = b.y - a.y, abz = b.z - a.z;
    const V d2 = abx * abx + aby * aby + abz * abz;
    const V d = simd::sqrt(d2);
    const V inv_d = V(T(1)) / simd::select(d > zero, d, V(T(1)));
    const V along = (d2 + reach_a * reach_a - reach_b * reach_b) * (V(T(0.5)) * inv_d);
    const V h2 = reach_a * reach_a - along * along;
    const V ux = abx * inv_d, uy = aby * inv_d, uz = abz * inv_d;
    const V cx = a.x + ux * along, cy = a.y + uy * along, cz = a.z + uz * along;
    const V off = (p.x - cx) * ux + (p.y - cy) * uy + (p.z - cz) * uz;
    const V wx = p.x - cx - ux * off, wy = p.y - cy - uy * off, wz = p.z - cz - uz * off;
    const V w2 = wx * wx + wy * wy + wz * wz;
    // Balls that only touch, or do not meet (h2 <= 0 with the circle's plane past a's sphere towards
    // b): the point of a's sphere on the line to b, the one point of both or the nearest to b.
    const M apart = has_b && (d > zero) && !(h2 > zero) && (along >= zero);
    const M circle = has_b && (d > zero) && (h2 > zero) && (w2 > zero);
    const V w_scale = simd::select(circle, simd::sqrt(simd::select(circle, h2 / w2, V(T(1)))), zero);
    const V axis = simd::select(apart, reach_a, along);
    const Point3<V> on_circle{cx + wx * w_scale, cy + wy * w_scale, cz + wz * w_scale};
    const Point3<V> on_axis{a.x + ux * axis, a.y + uy * axis, a.z + uz * axis};
    // In order of preference; a lane that fits none of them takes qa.
    const M take_b = !qa_in_b && qb_in_a;
    const M take_circle = !qa_in_b && !qb_in_a && (circle || apart);
    const auto pick = [&](const V& on_a, const V& on_b, const V& on_c, const V& on_line, const V& old) {
        const V meet = simd::select(apart, on_line, on_c);
        return simd::select(moved, simd::select(take_b, on_b, simd::select(take_circle, meet, on_a)), old);
    };
    p.x = pick(qa.x, qb.x, on_circle.x, on_axis.x, p.x);
    p.y = pick(qa.y, qb.y, on_circle.y, on_axis.y, p.y);
    p.z = pick(qa.z, qb.z, on_circle.z, on_axis.z, p.z);
    return moved;
}

/// The registered stage.
template <class T>
void pull_tethers(TetherData<T>& d, const World<T>& world, State3<T>& state)
{
    d.pulled = 0;
    if (d.cloth.removed())
        return;
    refresh_tethers(d, world);
    const auto s = state.arrays_view();
    const T slack = d.slack;
    const std::size_t begin = d.cloth.base(), end = d.cloth.end(), first = d.first;
    const auto anchor_of = d.anchor_of.data();
    const auto rest = d.rest.data();
    const std::size_t span = d.span;
    const int ranks = d.ranks;
    const bool runs = world.grid_path();
    const auto tether = [&](auto& p, const auto& movable, std::size_t i) {
        using V = std::decay_t<decltype(p.x)>;
        using Present = std::decay_t<decltype(movable)>;
        struct Rank
        {
            Present present;
            Point3<V> at;
            V rest;
        };
        const auto rank = [&](int r) {
            const std::size_t k = std::size_t(r) * span + (i - first);
            // A row of a sheet pinned along its top hangs from a row of anchors: one load, no gather.
            const auto at = simd::lane_index<V>(anchor_of + k, s.padded, runs);
            const Point3<V> where{simd::read_lanes<V>(s.x, at), simd::read_lanes<V>(s.y, at),
                                  simd::read_lanes<V>(s.z, at)};
            return Rank{simd::present_lanes<V>(anchor_of + k), where, simd::load_lanes<V>(rest + k)};
        };
        const auto single = [&](const Rank& t) {
            return pull_toward_anchor(p, movable, t.present, t.at.x, t.at.y, t.at.z, t.rest, slack);
        };
        if (ranks == 1)
            return single(rank(0));
        auto pulled = movable && !movable;
        // The farther islands one projection each, then the two nearest together, exactly.
        for (int r = ranks - 1; r >= 2; --r)
            pulled = single(rank(r)) || pulled;
        const Rank a = rank(0), b = rank(1);
        return pull_into_lens(p, movable, a.present, a.at, a.rest, b.present, b.at, b.rest, slack) || pulled;
    };
    std::atomic<int> pulled{0};
    world.for_each_chunk_within(begin, end, [&](std::size_t b, std::size_t e) {
        const int n = world.vectorized() ? kernels::project_lanes_vector<xsimd::default_arch, false>(s, b, e, tether)
                                         : kernels::project_lanes_scalar(s, b, e, tether);
        pulled.fetch_add(n, std::memory_order_relaxed);
    });
    d.pulled = pulled.load();
}
} // namespace detail

/// Handle of a cloth's tethers, with the shape of every stage handle (handle.hpp).
template <class T>
class Tethers : public detail::StageHandle<T, detail::TetherData<T>>
{
    using Base = detail::StageHandle<T, detail::TetherData<T>>;

  public:
    /// A handle of no stage yet: it reports an empty stage that was removed, and acting on it throws
    /// std::logic_error.
    Tethers() = default;
    /// Particles that hang from an anchor (the anchors included); those a cut has disconnected from
    /// every anchor are free. As of the constraints now.
    int tethered() const
    {
        refresh();
        return this->data().tethered;
    }
    /// Particles the last step pulled back to their limit.
    int pulled() const noexcept { return this->data().pulled; }

    /// The anchor particle i hangs from in its `rank`-th nearest island (0: its nearest anchor),
    /// none when it is free or has fewer tethers. Throws std::out_of_range for a particle outside
    /// the cloth or a rank outside [0, the islands option).
    std::optional<std::size_t> anchor_of(std::size_t particle, int rank = 0) const
    {
        const auto k = slot(particle, rank);
        if (rank >= this->data().ranks)
            return std::nullopt;
        const std::int32_t a = this->data().anchor_of[std::size_t(rank) * this->data().span + k];
        return a < 0 ? std::nullopt : std::optional<std::size_t>(std::size_t(a));
    }
    /// Particle i's rest distance to that anchor (0 for an anchor, infinity when there is none).
    T rest_distance(std::size_t particle, int rank = 0) const
    {
        const auto k = slot(particle, rank);
        if (rank >= this->data().ranks)
            return std::numeric_limits<T>::infinity();
        const std::size_t at = std::size_t(rank) * this->data().span + k;
        return this->data().anchor_of[at] < 0 ? std::numeric_limits<T>::infinity() : this->data().rest[at];
    }
    /// Islands of anchors (anchors joined by springs), as of the constraints now.
    int islands() const
    {
        refresh();
        return this->data().island_count;
    }

    const std::vector<std::size_t>& anchors() const noexcept { return this->data().anchors; }
    TetherKind kind() const noexcept { return this->data().kind; }
    T slack() const noexcept { return this->data().slack; }
    /// Throws std::invalid_argument, changing nothing, unless finite and >= 1.
    void set_slack(T slack)
    {
        auto& d = this->live();
        detail::check_slack(slack);
        d.slack = slack;
    }

  private:
    template <class U>
    friend Tethers<U> add_tethers(Simulation<U>& sim, TethersOptions<U> options);
    explicit Tethers(std::shared_ptr<detail::TetherData<T>> data) : Base(std::move(data)) {}

    void refresh() const { detail::refresh_tethers(this->live(), this->world()); }
    std::size_t slot(std::size_t particle, int rank) const
    {
        if (!this->data().cloth.contains(particle))
            detail::raise<std::out_of_range>("simdverlet: particle " + std::to_string(particle) + " is not in cloth '" +
                                             this->data().cloth.name() + "'");
        if (rank < 0 || rank >= this->data().islands)
            detail::raise<std::out_of_range>("simdverlet: tether rank " + std::to_string(rank) + " is outside [0, " +
                                             std::to_string(this->data().islands) + ")");
        refresh();
        return particle - this->data().first;
    }
};

/// Registers tethers on `options.cloth` as a position projection (after the stages registered
/// before it) and returns their handle. Throws, registering nothing, on a slack that is not finite
/// and >= 1, islands < 1, an anchor outside the cloth (naming it), no anchor at all (none given and
/// none pinned), a name registered already, or a cloth not set, removed (std::logic_error) or of
/// another simulation.
template <class T>
Tethers<T> add_tethers(Simulation<T>& sim, TethersOptions<T> options)
{
    detail::check_slack(options.slack);
    detail::check_islands(options.islands);
    detail::check_stage_cloth(sim, options.cloth, "tethers");
    const Cloth<T>& cloth = options.cloth;
    options.name = detail::stage_name(sim.position_projections(), options.name, "tethers@" + cloth.name());
    for (const std::size_t a : options.anchors)
        if (!cloth.contains(a))
            detail::raise<std::out_of_range>("simdverlet: tether anchor " + std::to_string(a) + " is not in cloth '" +
                                             cloth.name() + "' (particles " + std::to_string(cloth.base()) + " to " +
                                             std::to_string(cloth.end() - 1) + ")");
    if (options.anchors.empty())
        for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
            if (sim.state().is_pinned(i))
                options.anchors.push_back(i);
    if (options.anchors.empty())
        detail::raise<std::invalid_argument>("simdverlet: tethers on cloth '" + cloth.name() +
                                             "' need anchors: none given and none of its particles is pinned");
    std::sort(options.anchors.begin(), options.anchors.end());
    options.anchors.erase(std::unique(options.anchors.begin(), options.anchors.end()), options.anchors.end());

    const auto world = detail::world_of(sim);
    auto data = std::make_shared<detail::TetherData<T>>(cloth, world);
    data->anchors = std::move(options.anchors);
    data->kind = options.kind;
    data->slack = options.slack;
    data->islands = options.islands;
    data->name = options.name;
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
        data->pose.push_back(sim.state().position(i));
    detail::compute_tethers(*data, *world);
    detail::register_projection(sim, data, options.name, "tethers",
                                [](auto& d, auto& world, State3<T>& state) { detail::pull_tethers(d, world, state); });
    sim.add_stage_state(options.name,
                        detail::field_state(data, [](detail::TetherData<T>& t) { return std::tie(t.slack); }));
    return Tethers<T>(std::move(data));
}

} // namespace simdverlet
