// Tearing and cutting: constraint edits. Tearing clears every spring strained past a limit after
// each step; cut clears every spring crossed by a knife stroke drawn in a view plane. Both clear
// the two halves of a symmetric pair together, so a tear never leaves a one-way spring behind.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "simdverlet/core/constraint_layers.hpp"
#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/tearing.hpp"

namespace simdverlet
{

/// Called once per tear: the owner particle, its slot counted across layers (layer x kSlots + slot,
/// so layer 0's slots are 0..kSlots-1), and the neighbour it pointed at.
using TearCallback = std::function<void(std::size_t particle, int slot, std::size_t neighbour)>;

/// What add_tearing registers.
template <class T>
struct TearingOptions
{
    T max_strain = T(1);      ///< > 0: a spring tears when |length - rest| / rest exceeds it. 1 (twice its
                              ///< rest length) is where the guide's strain traces show a sheet past saving
    ParticleRange range = {}; ///< owners whose slots may tear; default every particle, re-read each frame
    std::size_t max_tears_per_frame = std::numeric_limits<std::size_t>::max(); ///< the most strained tear
        ///< first; a small number makes a rip run across a sheet over frames
    TearCallback on_tear = {}; ///< optional, called for each tear in the order they happen
    /// Key in the constraint-edit registry; default "tearing", followed by "@[begin, end)" for a
    /// range short of every particle. A name registered already is an error.
    std::string name = {};
};

namespace detail
{
/// A spring strained past the limit, found by the scan and waiting for the sort.
template <class T>
struct TearCandidate
{
    T strain;
    std::size_t i;
    SlotRef at;
};

template <class T>
struct TearingData
{
    T max_strain;
    ParticleRange range;
    std::size_t max_per_frame;
    TearCallback on_tear;
    std::string name;
    std::weak_ptr<World<T>> world;
    StageLink<T> link = {};
    std::uint64_t total = 0;
    std::size_t last_frame = 0;
    std::vector<std::vector<TearCandidate<T>>> found = {}; ///< per executor chunk; scratch kept so a frame
                                                           ///< allocates nothing
    std::vector<TearCandidate<T>> over = {};               ///< every chunk's candidates, sorted
};

template <class T>
void check_max_strain(T max_strain)
{
    if (!std::isfinite(max_strain) || !(max_strain > T(0)))
        detail::raise<std::invalid_argument>("simdverlet: max_strain must be finite and > 0, got " +
                                             number(max_strain));
}

template <class T>
void tear(TearingData<T>& t, const State3<T>& state, ConstraintLayers<T>& k)
{
    using Candidate = TearCandidate<T>;
    // The scan splits over the executor, each chunk into its own list; the order below is total, so
    // the lists' order does not matter. The world is alive: it owns this stage.
    const auto bounds = t.range.resolve(state.size());
    const std::size_t begin = bounds.first, end = bounds.second; // named, not bound: lambdas capture them
    const auto world = t.world.lock();
    const auto a = const_cast<State3<T>&>(state).arrays_view();
    const bool vectorized = world->vectorized();
    t.found.resize(std::max(t.found.size(), world->chunk_count(end)));
    for (auto& list : t.found)
        list.clear();
    for (std::size_t layer = 0; layer < k.count(); ++layer)
    {
        const auto c = k[layer].arrays_view();
        const std::size_t lo = std::max(begin, c.first), hi = std::min(end, c.end);
        if (lo >= hi)
            continue;
        world->for_each_indexed_chunk(lo, hi, [&](std::size_t chunk, std::size_t b, std::size_t e) {
            auto& list = t.found[chunk];
            kernels::find_strained<xsimd::default_arch>(a, c, b, e, t.max_strain, vectorized,
                                                        [&](T strain, std::size_t i, int s) {
                                                            list.push_back({strain, i, SlotRef{layer, s}});
                                                        });
        });
    }
    auto& over = t.over;
    over.clear();
    for (const auto& list : t.found)
        over.insert(over.end(), list.begin(), list.end());
    // Most strained first (NaN before all), ties by particle, then slot: a total order, so the
    // result is deterministic, and with a per-frame cap the rip grows from where the sheet is
    // pulled hardest.
    std::sort(over.begin(), over.end(), [](const Candidate& p, const Candidate& q) {
        const bool p_nan = std::isnan(p.strain), q_nan = std::isnan(q.strain);
        if (p_nan != q_nan)
            return p_nan;
        if (!p_nan && p.strain != q.strain)
            return p.strain > q.strain;
        if (p.i != q.i)
            return p.i < q.i;
        return p.at.layer != q.at.layer ? p.at.layer < q.at.layer : p.at.slot < q.at.slot;
    });
    t.last_frame = 0;
    for (const Candidate& c : over)
    {
        if (t.last_frame >= t.max_per_frame)
            break;
        if (!k.live(c.i, c.at)) // its twin tore earlier in this edit
            continue;
        const auto j = std::size_t(k[c.at.layer].neighbour(c.i, c.at.slot));
        k.clear_spring(c.i, j);
        ++t.last_frame;
        if (t.on_tear)
            t.on_tear(c.i, int(c.at.layer) * kSlots + c.at.slot, j);
    }
    t.total += t.last_frame;
}
} // namespace detail

/// Handle of a registered tearing edit, with the shape of every stage handle (handle.hpp).
template <class T>
class Tearing : public detail::StageHandle<T, detail::TearingData<T>>
{
    using Base = detail::StageHandle<T, detail::TearingData<T>>;

  public:
    /// A handle of no stage yet: it reports an empty stage that was removed, and acting on it throws
    /// std::logic_error.
    Tearing() = default;
    /// Tears since registration, and in the last frame. A symmetric pair counts once.
    std::uint64_t torn() const noexcept { return this->data().total; }
    int torn_last_frame() const noexcept { return int(this->data().last_frame); }

    T max_strain() const noexcept { return this->data().max_strain; }
    /// Throws std::invalid_argument, changing nothing, unless finite and > 0.
    void set_max_strain(T max_strain)
    {
        auto& d = this->live();
        detail::check_max_strain(max_strain);
        d.max_strain = max_strain;
    }
    std::size_t max_tears_per_frame() const noexcept { return this->data().max_per_frame; }
    void set_max_tears_per_frame(std::size_t n) { this->live().max_per_frame = n; }

  private:
    template <class U>
    friend Tearing<U> add_tearing(Simulation<U>& sim, TearingOptions<U> options);
    explicit Tearing(std::shared_ptr<detail::TearingData<T>> data) : Base(std::move(data)) {}
};

/// Registers tearing as a constraint edit (it runs after integration and projections, on the
/// positions the frame ends with) and returns its handle.
template <class T>
Tearing<T> add_tearing(Simulation<T>& sim, TearingOptions<T> options)
{
    detail::check_max_strain(options.max_strain);
    options.range.check();
    options.name = detail::stage_name(sim.constraint_edits(), options.name,
                                      "tearing" + detail::range_suffix(options.range));
    auto data = std::make_shared<detail::TearingData<T>>(
        detail::TearingData<T>{.max_strain = options.max_strain,
                               .range = options.range,
                               .max_per_frame = options.max_tears_per_frame,
                               .on_tear = std::move(options.on_tear),
                               .name = options.name,
                               .world = detail::world_of(sim)});
    const auto registration = detail::tie_link(sim, *data, options.name, "tearing",
                                               &detail::World<T>::remove_constraint_edit);
    sim.add_constraint_edit(options.name, [data, registration](State3<T>& state, ConstraintLayers<T>& k, T) {
        static_cast<void>(registration); // owned here: see detail::Registration
        detail::tear(*data, state, k);
    });
    // Its counters are state: a restored run reports the tears of the run it copies.
    sim.add_stage_state(options.name, detail::field_state(data, [](detail::TearingData<T>& t) {
                            return std::tie(t.total, t.last_frame);
                        }));
    return Tearing<T>(std::move(data));
}

/// The plane a cut is drawn in: the two world axes of the view the user drew the stroke on.
enum class ViewPlane
{
    xy, ///< x right, y down: the plane the debug pictures draw
    xz,
    yz,
};

namespace detail
{
template <class T>
struct Point2
{
    T u, v;
};

template <class T>
Point2<T> in_view(const Vec3<T>& p, ViewPlane view)
{
    switch (view)
    {
    case ViewPlane::xy:
        return {p.x(), p.y()};
    case ViewPlane::xz:
        return {p.x(), p.z()};
    case ViewPlane::yz:
        return {p.y(), p.z()};
    }
    return {p.x(), p.y()};
}

/// Signed area of (a, b, c), in double so nearly parallel strokes are decided consistently.
template <class T>
double orient(const Point2<T>& a, const Point2<T>& b, const Point2<T>& c)
{
    return (double(b.u) - double(a.u)) * (double(c.v) - double(a.v)) -
           (double(b.v) - double(a.v)) * (double(c.u) - double(a.u));
}

/// Whether c lies to the left of the line a-b, a point on the line counting as left: every point
/// gets a side, so a stroke through particles parts the sheet there instead of passing between
/// the springs that meet at them.
template <class T>
bool left_of(const Point2<T>& a, const Point2<T>& b, const Point2<T>& c)
{
    return orient(a, b, c) >= 0;
}

/// Crossing of segments p-q and a-b: p and q on different sides of the stroke, a and b on
/// different sides of the spring, with left_of's rule for a point on a line. A spring with an end
/// on the stroke is cut when its other end lies to the stroke's right; one lying along the stroke
/// is not.
template <class T>
bool crosses(const Point2<T>& p, const Point2<T>& q, const Point2<T>& a, const Point2<T>& b)
{
    return left_of(a, b, p) != left_of(a, b, q) && left_of(p, q, a) != left_of(p, q, b);
}

/// Clears every live spring whose two ends satisfy crossed(position i, position j), both halves
/// of a pair together; returns how many springs it cut (a pair counts once).
template <class T, class Crossed>
std::size_t cut_where(Simulation<T>& sim, Crossed&& crossed)
{
    auto& k = sim.constraint_layers();
    const auto& s = sim.state();
    std::size_t cuts = 0;
    for (std::size_t layer = 0; layer < k.count(); ++layer)
        for (std::size_t i = k[layer].first(); i < k[layer].end(); ++i)
            for (int slot = 0; slot < kSlots; ++slot)
            {
                if (!k[layer].live(i, slot))
                    continue;
                const auto j = std::size_t(k[layer].neighbour(i, slot));
                if (!crossed(s.position(i), s.position(j)))
                    continue;
                k.clear_spring(i, j);
                ++cuts;
            }
    return cuts;
}
} // namespace detail

/// Clears every live spring whose segment, seen in `view`, crosses the stroke a-b; both halves of
/// a symmetric pair go together. A particle exactly on the stroke's line counts as lying to its
/// left (seen in `view` with its first axis right and its second up), so a stroke drawn along a
/// row of particles parts the sheet there and the row stays with one side. Returns the number of springs cut (a pair counts once). Throws
/// std::invalid_argument, changing nothing, for a stroke of zero length in that view.
template <class T>
std::size_t cut(Simulation<T>& sim, const Vec3<T>& a, const Vec3<T>& b, ViewPlane view = ViewPlane::xy)
{
    if (!a.allFinite() || !b.allFinite())
        detail::raise<std::invalid_argument>("simdverlet: cut stroke end is not finite");
    const auto pa = detail::in_view(a, view);
    const auto pb = detail::in_view(b, view);
    if (pa.u == pb.u && pa.v == pb.v)
        detail::raise<std::invalid_argument>("simdverlet: cut stroke from (" + detail::number(pa.u) + ", " +
                                             detail::number(pa.v) + ") has zero length in its view plane");
    return detail::cut_where(sim, [&](const Vec3<T>& p, const Vec3<T>& q) {
        return detail::crosses(detail::in_view(p, view), detail::in_view(q, view), pa, pb);
    });
}

/// The knife of a perspective view: clears every live spring that crosses the wedge swept by the
/// rays from `eye` through the stroke a-b, which is what a stroke drawn on the screen of a camera
/// at `eye` covers at every depth. Springs with an end behind the eye (on the far side of the
/// plane through the eye facing the stroke) are left alone. Both halves of a symmetric pair go
/// together; returns the number of springs cut. Throws std::invalid_argument, changing nothing,
/// for a non-finite point, a stroke end at the eye or behind it, or a stroke of zero length.
template <class T>
std::size_t cut_from_eye(Simulation<T>& sim, const Vec3<T>& eye, const Vec3<T>& a, const Vec3<T>& b)
{
    if (!eye.allFinite() || !a.allFinite() || !b.allFinite())
        detail::raise<std::invalid_argument>("simdverlet: cut_from_eye: a point is not finite");
    // Work in double: the wedge test divides by depths that can be small.
    const Vec3<double> e = eye.template cast<double>(), da = a.template cast<double>() - e,
                       db = b.template cast<double>() - e;
    const Vec3<double> forward = da.normalized() + db.normalized();
    if (!(da.norm() > 0) || !(db.norm() > 0) || !(forward.norm() > 1e-12))
        detail::raise<std::invalid_argument>("simdverlet: cut_from_eye: a stroke end is at the eye or the stroke "
                                             "runs through it");
    const Vec3<double> n = forward.normalized();
    const Vec3<double> across = db - da - n * n.dot(db - da);
    if (!(da.dot(n) > 0) || !(db.dot(n) > 0) || !(across.norm() > 0))
        detail::raise<std::invalid_argument>("simdverlet: cut_from_eye: the stroke has zero length as seen from "
                                             "the eye");
    // Central projection onto the plane at unit depth along n: a straight segment in front of the
    // eye stays straight, so the wedge test becomes the 2-D crossing test of `cut`.
    const Vec3<double> u = across.normalized(), v = n.cross(u);
    const auto project = [&](const Vec3<double>& d) {
        const double depth = d.dot(n);
        return detail::Point2<double>{d.dot(u) / depth, d.dot(v) / depth};
    };
    const auto pa = project(da), pb = project(db);
    return detail::cut_where(sim, [&](const Vec3<T>& p, const Vec3<T>& q) {
        const Vec3<double> dp = p.template cast<double>() - e, dq = q.template cast<double>() - e;
        return dp.dot(n) > 0 && dq.dot(n) > 0 && detail::crosses(project(dp), project(dq), pa, pb);
    });
}

} // namespace simdverlet
