// Tethers (long-range attachments): each particle of a cloth stays within `slack` x its rest
// distance of its nearest anchor. A hanging sheet then cannot stretch out under its own weight
// however soft its springs, which a stiffness-only cure pays for with stiffness and substeps.
//
// The projection is one-sided (a particle closer than its limit is never pulled), and anchors are
// their own nearest anchor at distance 0, so the pass never moves one: every particle reads only
// unmoving anchors and writes only itself, and the result is the same for any thread count and
// split. Which anchor a particle hangs from, and how far, is recomputed whenever the constraint
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

#include "cloth.hpp"
#include "constraints.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "kernels/projection.hpp"
#include "simd.hpp"
#include "simulation.hpp"
#include "stage_state.hpp"
#include "state.hpp"

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
struct TetherOptions
{
    /// Particle indices of the simulation, inside the cloth: the points particles hang from. Empty
    /// (the default): the cloth's pinned particles when the tethers are added. An anchor moved by
    /// hand (a teleported pin, a grab) takes its tethers with it: limits are measured from where
    /// the anchor is at each step.
    std::vector<std::size_t> anchors = {};
    TetherKind kind = TetherKind::geodesic;
    /// Finite and >= 1: how far past its rest distance a particle may go, as a factor of it. 1 holds
    /// the rest distance exactly; 1.05 allows 5 %.
    T slack = T(1);
    std::string name = "tethers"; ///< key in the position-projection registry and in snapshots
};

namespace detail
{
/// A cloth's tethers: the settings, and the anchor and rest distance of each particle, recomputed
/// when the constraints' edit stamp moves.
template <class T>
struct TetherData
{
    TetherData(Cloth<T> of, std::weak_ptr<World<T>> in) : cloth(std::move(of)), world(std::move(in)) {}

    Cloth<T> cloth;
    std::weak_ptr<World<T>> world;
    StageLink<T> link;
    std::vector<std::size_t> anchors;
    TetherKind kind = TetherKind::geodesic;
    T slack = T(1);
    std::string name;
    std::vector<Vec3<T>> pose; ///< the cloth's positions when the tethers were added (euclidean)
    // Per particle of the cloth, from `first` (the cloth's base rounded down to a whole padding
    // block, so lane groups read them aligned): the anchor's index, -1 when released, and the
    // rest distance to it.
    bool computed = false;
    std::uint64_t stamp = 0; ///< the constraints' edit stamp they were computed for
    std::size_t first = 0;
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

/// The constraint layers as the tether search reads them: layer 0 first.
template <class T>
using Layers = std::span<const ConstraintArrays<T>>;

/// The rest length of a live spring from particle i to j in any layer, if i has one.
template <class T>
std::optional<T> live_spring(Layers<T> layers, std::size_t i, std::size_t j)
{
    for (const auto& c : layers)
        for (int a = 0; a < kSlots && c.covers(i); ++a)
            if (c.neighbour[a][i - c.first] == std::int32_t(j) && c.stiffness[a][i - c.first] > T(0))
                return c.rest[a][i - c.first];
    return std::nullopt;
}

/// A cloth as a graph for the tether search: node k is the cloth's particle base + k. Calls
/// visit(neighbour node, length) for every step from node k: the live springs out of it (every
/// layer: a mesh cloth's edges and bend springs), and on a grid (width > 0) each cell diagonal whose
/// two sides around one of its corners are live springs (length the hypotenuse of those two).
template <class T, class Visit>
void cloth_steps(Layers<T> layers, std::size_t base, std::size_t count, int width, int height, std::size_t k,
                 Visit&& visit)
{
    const std::size_t i = base + k;
    for (const auto& c : layers)
        for (int a = 0; a < kSlots && c.covers(i); ++a)
        {
            const std::int32_t j = c.neighbour[a][i - c.first];
            if (c.stiffness[a][i - c.first] > T(0) && j >= std::int32_t(base) && std::size_t(j) < base + count)
                visit(std::size_t(j) - base, c.rest[a][i - c.first]);
        }
    if (width == 0)
        return;
    const int col = int(k % std::size_t(width)), row = int(k / std::size_t(width));
    const auto node = [&](int cc, int rr) { return base + std::size_t(rr) * std::size_t(width) + std::size_t(cc); };
    for (const int dc : {-1, 1})
        for (const int dr : {-1, 1})
        {
            const int cc = col + dc, rr = row + dr;
            if (cc < 0 || cc >= width || rr < 0 || rr >= height)
                continue;
            // Around either corner of the cell: along the row then the column, or the other way.
            T best = std::numeric_limits<T>::infinity();
            for (const auto& corner : {node(cc, row), node(col, rr)})
            {
                const auto first = live_spring(layers, i, corner);
                const auto second = live_spring(layers, corner, node(cc, rr));
                if (first && second)
                    best = std::min(best, std::sqrt(*first * *first + *second * *second));
            }
            if (best < std::numeric_limits<T>::infinity())
                visit(node(cc, rr) - base, best);
        }
}

/// A grid cloth's width and height for cloth_steps' diagonals; 0 for a mesh cloth, which has none.
template <class T>
int grid_width(const Cloth<T>& cloth)
{
    return cloth.is_grid() ? cloth.width() : 0;
}
template <class T>
int grid_height(const Cloth<T>& cloth)
{
    return cloth.is_grid() ? cloth.height() : 0;
}

/// The distance to corner C of a triangle from one point source whose front reached A at `a` and B
/// at `b`: the source unfolded into the triangle's plane, on the far side of AB from C, and its
/// straight line to C, when that line crosses AB (otherwise the path bends at A or B, and the edges
/// give it). Side lengths ab, ac, bc. On a flat mesh this is the exact distance; paths along edges
/// alone zig-zag, and on an irregular mesh run several percent long.
template <class T>
std::optional<T> across_triangle(T a, T b, T ab, T ac, T bc)
{
    const double l = double(ab), da = double(a), db = double(b);
    const double cx = (double(ac) * double(ac) - double(bc) * double(bc) + l * l) / (2 * l);
    const double cy2 = double(ac) * double(ac) - cx * cx;
    const double sx = (da * da - db * db + l * l) / (2 * l);
    const double sy2 = da * da - sx * sx;
    if (!(l > 0) || !(cy2 > 0) || !(sy2 >= 0))
        return std::nullopt;
    const double cy = std::sqrt(cy2), sy = -std::sqrt(sy2);
    const double crossing = sx + (cx - sx) * (-sy) / (cy - sy);
    if (crossing < 0 || crossing > l)
        return std::nullopt;
    return T(std::sqrt((cx - sx) * (cx - sx) + (cy - sy) * (cy - sy)));
}

/// A mesh cloth's intact triangles (their three springs live) as node triples, and per node the
/// triangles around it, for the geodesic search's triangle steps.
struct NodeTriangles
{
    std::vector<std::array<std::uint32_t, 3>> triangles;
    std::vector<std::uint32_t> first; ///< node k's triangles are around[first[k], first[k + 1])
    std::vector<std::uint32_t> around;
};

template <class T>
NodeTriangles node_triangles(const Cloth<T>& cloth, Layers<T> c)
{
    NodeTriangles out;
    const std::size_t base = cloth.base();
    const auto joined = [&](std::size_t i, std::size_t j) {
        return live_spring(c, i, j).has_value() || live_spring(c, j, i).has_value();
    };
    for (const auto& tri : cloth.triangles())
    {
        const std::size_t p = cloth.index(std::size_t(tri[0])), q = cloth.index(std::size_t(tri[1])),
                          r = cloth.index(std::size_t(tri[2]));
        if (joined(p, q) && joined(q, r) && joined(r, p))
            out.triangles.push_back({std::uint32_t(p - base), std::uint32_t(q - base), std::uint32_t(r - base)});
    }
    out.first.assign(cloth.count() + 1, 0);
    for (const auto& t : out.triangles)
        for (const std::uint32_t k : t)
            ++out.first[k + 1];
    for (std::size_t k = 0; k < cloth.count(); ++k)
        out.first[k + 1] += out.first[k];
    out.around.resize(out.first.back());
    std::vector<std::uint32_t> at(out.first.begin(), out.first.end() - 1);
    for (std::size_t t = 0; t < out.triangles.size(); ++t)
        for (const std::uint32_t k : out.triangles[t])
            out.around[at[k]++] = std::uint32_t(t);
    return out;
}

/// Geodesic: Dijkstra from every anchor at once over cloth_steps; each node takes the anchor whose
/// wave reaches it first (ties to the lower node index, so the result is deterministic).
///
/// On a mesh cloth, paths along edges alone zig-zag and run several percent long (4 % on the
/// irregular test sheet), so the wave also crosses triangles: once two corners of an intact
/// triangle are settled, the third is reached along the unfolded straight line (across_triangle,
/// the fast-marching update), which measures the distance to the anchors as a set. A particle's
/// rest distance is then the larger of that and its straight-line distance to its own anchor in
/// the pose at creation: on a flat, whole sheet the straight line is the geodesic, and where the
/// cloth curves or a cut makes the path go round, the distance along the cloth is the longer.
template <class T>
void nearest_along_cloth(TetherData<T>& d, Layers<T> c, std::vector<std::int32_t>& anchor, std::vector<T>& dist)
{
    const std::size_t base = d.cloth.base();
    const bool mesh = !d.cloth.is_grid();
    const NodeTriangles around = mesh ? node_triangles(d.cloth, c) : NodeTriangles{};
    std::vector<bool> settled(d.cloth.count(), false);
    const auto side = [&](std::uint32_t p, std::uint32_t q) {
        return live_spring(c, base + p, base + q).value_or(T(0));
    };
    using Entry = std::pair<T, std::size_t>; // (distance, node)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> frontier;
    for (const std::size_t a : d.anchors)
    {
        dist[a - base] = T(0);
        anchor[a - base] = std::int32_t(a);
        frontier.push({T(0), a - base});
    }
    const auto offer = [&](std::size_t next, T through, std::int32_t from) {
        if (through < dist[next])
        {
            dist[next] = through;
            anchor[next] = from;
            frontier.push({through, next});
        }
    };
    while (!frontier.empty())
    {
        // Not a structured binding: the lambda below reads both, and clang 14 cannot capture one.
        const T at = frontier.top().first;
        const std::size_t k = frontier.top().second;
        frontier.pop();
        if (at > dist[k] || settled[k])
            continue;
        settled[k] = true;
        cloth_steps(c, base, d.cloth.count(), grid_width(d.cloth), grid_height(d.cloth), k,
                    [&](std::size_t next, T length) { offer(next, at + length, anchor[k]); });
        if (!mesh)
            continue;
        for (std::uint32_t n = around.first[k]; n < around.first[k + 1]; ++n)
        {
            const auto& t = around.triangles[around.around[n]];
            for (int e = 0; e < 3; ++e)
            {
                // k, another settled corner from the same anchor, and the third still open.
                const std::uint32_t p = t[std::size_t(e)], q = t[std::size_t((e + 1) % 3)],
                                    r = t[std::size_t((e + 2) % 3)];
                const std::uint32_t other = p == k ? q : q == k ? p : std::uint32_t(-1);
                if (other == std::uint32_t(-1) || r == k || !settled[other] || settled[r])
                    continue;
                if (const auto through = across_triangle(dist[k], dist[other], side(std::uint32_t(k), other),
                                                         side(std::uint32_t(k), r), side(other, r)))
                    offer(r, *through, anchor[k]);
            }
        }
    }
    if (!mesh)
        return;
    for (std::size_t k = 0; k < dist.size(); ++k)
        if (anchor[k] >= 0)
            dist[k] = std::max(dist[k], (d.pose[k] - d.pose[std::size_t(anchor[k]) - base]).norm());
}

/// Euclidean: the nearest anchor in the pose at creation among those connected to the particle.
template <class T>
void nearest_in_pose(TetherData<T>& d, Layers<T> c, std::vector<std::int32_t>& anchor, std::vector<T>& dist)
{
    const std::size_t base = d.cloth.base(), n = d.cloth.count();
    // Connected components over the same steps the geodesic search takes.
    std::vector<std::int32_t> component(n, -1);
    std::vector<std::size_t> stack;
    std::int32_t components = 0;
    for (std::size_t start = 0; start < n; ++start)
    {
        if (component[start] >= 0)
            continue;
        component[start] = components;
        stack.push_back(start);
        while (!stack.empty())
        {
            const std::size_t k = stack.back();
            stack.pop_back();
            cloth_steps(c, base, d.cloth.count(), grid_width(d.cloth), grid_height(d.cloth), k,
                        [&](std::size_t next, T) {
                            if (component[next] < 0)
                            {
                                component[next] = components;
                                stack.push_back(next);
                            }
                        });
        }
        ++components;
    }
    for (std::size_t k = 0; k < n; ++k)
        for (const std::size_t a : d.anchors)
        {
            if (component[a - base] != component[k])
                continue;
            const T length = (d.pose[k] - d.pose[a - base]).norm();
            if (length < dist[k]) // strict: the first of equally near anchors in the list wins
            {
                dist[k] = length;
                anchor[k] = std::int32_t(a);
            }
        }
}

/// Recomputes each particle's anchor and rest distance from the constraints as they are now.
template <class T>
void compute_tethers(TetherData<T>& d, const World<T>& world)
{
    const auto views = world.constraint_layers().views();
    const Layers<T> c(views);
    const std::size_t n = d.cloth.count();
    std::vector<std::int32_t> anchor(n, -1);
    std::vector<T> dist(n, std::numeric_limits<T>::infinity());
    if (d.kind == TetherKind::geodesic)
        nearest_along_cloth(d, c, anchor, dist);
    else
        nearest_in_pose(d, c, anchor, dist);
    const std::size_t base = d.cloth.base();
    d.first = base / simd::kPadLanes<T> * simd::kPadLanes<T>;
    const std::size_t span = simd::padded_count<T>(base + n - d.first);
    d.anchor_of.assign(span, -1);
    d.rest.assign(span, T(0));
    d.tethered = 0;
    for (std::size_t k = 0; k < n; ++k)
        if (anchor[k] >= 0)
        {
            d.anchor_of[base + k - d.first] = anchor[k];
            d.rest[base + k - d.first] = dist[k];
            ++d.tethered;
        }
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
    const bool runs = world.grid_path();
    const auto tether = [&](auto& p, const auto& movable, std::size_t i) {
        using V = std::decay_t<decltype(p.x)>;
        const std::int32_t* anchor = anchor_of + (i - first);
        // A row of a sheet pinned along its top hangs from a row of anchors: one load, no gather.
        const auto at = simd::lane_index<V>(anchor, s.padded, runs);
        return pull_toward_anchor(p, movable, simd::present_lanes<V>(anchor), simd::read_lanes<V>(s.x, at),
                                  simd::read_lanes<V>(s.y, at), simd::read_lanes<V>(s.z, at),
                                  simd::load_lanes<V>(rest + (i - first)), slack);
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
    /// Particles that hang from an anchor (the anchors included); those a cut has disconnected from
    /// every anchor are free. As of the constraints now.
    int tethered() const
    {
        refresh();
        return this->data().tethered;
    }
    /// Particles the last step pulled back to their limit.
    int pulled() const noexcept { return this->data().pulled; }

    /// The anchor particle i hangs from, none when it is free. Throws std::out_of_range for a
    /// particle outside the cloth.
    std::optional<std::size_t> anchor_of(std::size_t particle) const
    {
        const auto k = slot(particle);
        const std::int32_t a = this->data().anchor_of[k];
        return a < 0 ? std::nullopt : std::optional<std::size_t>(std::size_t(a));
    }
    /// Particle i's rest distance to its anchor (0 for an anchor, infinity when free).
    T rest_distance(std::size_t particle) const
    {
        const auto k = slot(particle);
        return this->data().anchor_of[k] < 0 ? std::numeric_limits<T>::infinity() : this->data().rest[k];
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
    friend Tethers<U> add_tethers(Simulation<U>& sim, const Cloth<U>& cloth, TetherOptions<U> options);
    explicit Tethers(std::shared_ptr<detail::TetherData<T>> data) : Base(std::move(data)) {}

    void refresh() const { detail::refresh_tethers(this->live(), this->world()); }
    std::size_t slot(std::size_t particle) const
    {
        if (!this->data().cloth.contains(particle))
            detail::raise<std::out_of_range>("simdverlet: particle " + std::to_string(particle) + " is not in cloth '" +
                                             this->data().cloth.name() + "'");
        refresh();
        return particle - this->data().first;
    }
};

/// Registers tethers on `cloth` as a position projection (after the stages registered before it)
/// and returns their handle. Throws, registering nothing, on a slack that is not finite and >= 1,
/// an anchor outside the cloth (naming it), no anchor at all (none given and none pinned), an
/// empty name, or a cloth that was removed or belongs to another simulation.
template <class T>
Tethers<T> add_tethers(Simulation<T>& sim, const Cloth<T>& cloth, TetherOptions<T> options)
{
    detail::check_slack(options.slack);
    if (options.name.empty())
        detail::raise<std::invalid_argument>("simdverlet: tethers need a non-empty name");
    if (!cloth.belongs_to(sim))
        detail::raise<std::invalid_argument>("simdverlet: cloth '" + cloth.name() + "' is not in this simulation");
    if (cloth.removed())
        detail::raise<std::logic_error>("simdverlet: cloth '" + cloth.name() + "' was removed");
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
