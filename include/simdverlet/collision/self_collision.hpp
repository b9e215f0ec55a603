// Self-collision: a position projection that keeps the particles of a range at least `thickness`
// apart, so a sheet's folds do not pass through each other, and two cloths, a rope and a cloth, or
// a rope and itself do not either. Pairs joined by a live spring are left to that spring.
//
// Neighbours come from a candidate list, a Verlet list in the molecular-dynamics sense: every
// pair closer than thickness + margin (the reach) when it was built, found once through a dense
// grid (cells the size of the reach, counting sort by cell, O(n)). It is rebuilt only once the two
// particles that moved most since have moved a margin between them (no pair can have closed by
// more) and a few that moved far touch a particle they are not listed with, so a list serves
// many substeps. Each particle's candidates are kept in index order and every contact is
// evaluated from the current positions, so the list changes nothing but speed: a step gives the
// same bits whether the list is fresh or old, which is why snapshots need not carry it. A pass
// evaluates each listed pair once from the unchanged positions into a push for each of its two
// particles, then each particle sums its pushes in its list's order and moves itself: the same
// bits for any thread count and split.
//
// Cloths listed in the options add point-triangle contacts (triangle_contacts.hpp), found with
// the pairs, so that thin cloth cannot slip through itself. With them, particles a later stage (a
// collider) moved last substep look heavier to the contacts this one (mark_held): the only state
// the stage keeps between substeps, and what its snapshot state carries.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "simdverlet/cloth/cloth.hpp"
#include "simdverlet/cloth/detail/cloth_solve.hpp"
#include "simdverlet/collision/detail/self_collision_candidates.hpp"
#include "simdverlet/collision/detail/self_collision_drift.hpp"
#include "simdverlet/collision/detail/triangle_contacts.hpp"
#include "simdverlet/core/constraint_layers.hpp"
#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/log.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/stage_state.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/self_collision.hpp"

namespace simdverlet
{

/// What add_self_collision registers.
template <class T>
struct SelfCollisionOptions
{
    /// Finite and > 0, world units: the closest two particles of the range may come (twice a
    /// particle's radius), and, for the cloths listed in `cloths`, the closest a particle may come
    /// to their triangles. Only pairs joined by a spring (or, for a listed cloth made with a
    /// material, by one of its edges) are exempt, so above ~1.4 x spacing a
    /// cloth's diagonal neighbours (two springs apart, sqrt(2) x spacing at rest) collide and the
    /// sheet pushes itself apart; a rope allows up to 2 x its spacing. Without `cloths`, keep it
    /// above ~0.7 x spacing: below that a particle fits through the middle of a grid square, so a
    /// fold can slip through the sheet. With them it may go down to ~0.1 x spacing, as long as it
    /// exceeds how far a particle moves against the cloth in one substep.
    T thickness = T(0.5);
    /// The particles that collide with each other; default every particle, re-read each step.
    /// Cloths and strands in one range collide alike: cloth on cloth, rope on cloth, rope on rope.
    ParticleRange range = {};
    /// Cloths whose triangles the range's particles may not approach nor cross (point-triangle
    /// contacts beside the particle pairs); default none. Needed for a thickness under ~0.7 x
    /// spacing, and what lets stacked layers rest a whole thickness apart instead of nesting in
    /// each other's grid squares. Triangles with a corner outside the range are left out. With
    /// cloths listed, particles a collider registered after this stage moved last substep count
    /// 16 times heavier in the contacts (a layer the collider holds stays, the one above moves).
    /// Costly where the thickness reaches across many triangles: see docs/performance.md.
    /// A cloth made with a material is held off itself inside its own solve instead
    /// (cloth/detail/self_contact_term.hpp), and never passes through itself: list it alone, over
    /// its own range. `passes` does not act on it; `friction` does, inside that solve, as a
    /// smoothed Coulomb law under which layers held by static friction creep at most 1 mm/s.
    std::vector<Cloth<T>> cloths = {};
    /// Finite and >= 0, Coulomb coefficient between layers: a contact's relative sliding this step
    /// is cut by at most friction x depth, in position as in velocity, so layers that should stick
    /// do not creep.
    T friction = T(0.3);
    /// Jacobi passes per step, >= 1. Each pass resolves every contact once from the positions the
    /// previous pass left; a pile of many layers separates faster with more.
    int passes = 1;
    /// Key in the position-projection registry; default "self_collision", followed by
    /// "@[begin, end)" for a range short of every particle. A name registered already is an error.
    std::string name = {};
};

namespace detail
{
template <class T>
struct SelfCollisionData
{
    T thickness;
    T friction;
    int passes;
    ParticleRange range;
    std::string name;
    std::weak_ptr<World<T>> world;
    StageLink<T> link;
    bool enabled = true;
    int contacts = 0;
    CandidateList<T> candidates;
    std::vector<Cloth<T>> cloths;
    TriangleContacts<T> faces;
    std::size_t bonded_edges = 0; ///< the listed material cloths' edges when the bonds were collected
    // One pass's pushes, by record (see PassLayout::record), padded by a batch.
    std::vector<T> push_x, push_y, push_z, push_touching;
    // Where the stage left the range's particles when it last ran, at the world's step count
    // `left_step`: the next substep tells from them which particles a later stage moved since
    // (mark_held). State, not acceleration: a snapshot carries it.
    std::vector<T> left_x, left_y, left_z;
    std::uint64_t left_step = ~std::uint64_t(0);
    std::uint64_t left_begin = 0;
    // The inverse masses the contacts see this substep, a held particle's scaled by
    // kHeldInverseMass; used only when `holds`.
    std::vector<T> seen_mass;
    bool holds = false;
    /// The material cloth whose solve holds this stage's contacts (self_contact_term.hpp), or
    /// null: then the stage projects itself.
    std::shared_ptr<ClothSolveData<T>> solve;
};

template <class T>
void check_self_collision(T thickness, T friction, int passes)
{
    if (!std::isfinite(thickness) || !(thickness > T(0)))
        detail::raise<std::invalid_argument>("simdverlet: self-collision thickness must be finite and > 0, got " +
                                             number(thickness));
    if (!std::isfinite(friction) || friction < T(0))
        detail::raise<std::invalid_argument>("simdverlet: self-collision friction must be finite and >= 0, got " +
                                             number(friction));
    if (passes < 1)
        detail::raise<std::invalid_argument>("simdverlet: self-collision passes must be >= 1, got " +
                                             std::to_string(passes));
}

/// What one contact does to its two particles, written once for a scalar (V = T, M = bool) and a
/// batch of pairs: each particle's push and whether they touch (1, else 0 with both pushes 0).
template <class V>
struct PairPush
{
    V ax, ay, az, bx, by, bz, touching;
};

/// The contact of a and b (a of lower index). If they are closer than the thickness (and the
/// pair can move), each is pushed out along the line between them by its inverse-mass share of
/// the depth, and the pair's relative sliding this step is cut Coulomb-style by at most friction
/// x depth. Only x will move, px stays: the velocity a step implies is then where the particle
/// ended minus where it started, so a layer resting on another, pushed back by exactly what it
/// sank, keeps no velocity, and what friction removes from the position it removes from the
/// velocity too. Seen from b the direction and the sliding change sign, so b's push is a's
/// correction reversed with b's share: bit for bit what b would compute for itself.
template <class T, class V, class M>
SIMDVERLET_INLINE PairPush<V> pair_push(const kernels::BodyLanes<V>& a, const kernels::BodyLanes<V>& b, const M& live,
                                        T thickness, T friction)
{
    const V zero(T(0)), one(T(1));
    const V rx = a.x - b.x, ry = a.y - b.y, rz = a.z - b.z;
    const V dist2 = rx * rx + ry * ry + rz * rz;
    const V weights = a.w + b.w;
    const M touching = live && (dist2 < V(thickness * thickness)) && (weights > zero);
    if (!simd::any(touching))
        return {zero, zero, zero, zero, zero, zero, zero};
    const V dist = simd::sqrt(dist2);
    // Coincident particles have no direction between them: part them along y, the lower index down.
    const M spread = dist > V(T(1e-6) * thickness);
    const V nx = simd::select(spread, rx / dist, zero);
    const V ny = simd::select(spread, ry / dist, V(T(-1)));
    const V nz = simd::select(spread, rz / dist, zero);
    const V depth = V(thickness) - dist;
    const V vx = (a.x - a.px) - (b.x - b.px), vy = (a.y - a.py) - (b.y - b.py), vz = (a.z - a.pz) - (b.z - b.pz);
    const V vn = vx * nx + vy * ny + vz * nz;
    const V tx = vx - vn * nx, ty = vy - vn * ny, tz = vz - vn * nz;
    const V slide = simd::sqrt(tx * tx + ty * ty + tz * tz);
    const V slip = simd::select(slide > zero, simd::min(one, V(friction) * depth / slide), zero);
    const V cx = depth * nx - slip * tx, cy = depth * ny - slip * ty, cz = depth * nz - slip * tz;
    const V share_a = a.w / weights, share_b = b.w / weights;
    return {simd::select(touching, share_a * cx, zero),
            simd::select(touching, share_a * cy, zero),
            simd::select(touching, share_a * cz, zero),
            simd::select(touching, -(share_b * cx), zero),
            simd::select(touching, -(share_b * cy), zero),
            simd::select(touching, -(share_b * cz), zero),
            simd::select(touching, one, zero)};
}

/// Sizes the push records for the layout, the record of zeros included.
template <class T>
void prepare_pushes(SelfCollisionData<T>& d)
{
    const std::size_t stride = d.candidates.layout.pair_stride;
    for (auto* push : {&d.push_x, &d.push_y, &d.push_z, &d.push_touching})
    {
        push->resize(2 * stride + simd::kPadLanes<T>);
        std::fill(push->begin() + std::ptrdiff_t(2 * stride), push->end(), T(0)); // the record of zeros
    }
}

/// Evaluates the pairs [p_begin, p_end) (p_begin a whole number of batches) from the unchanged
/// positions into their two push records (pair_push); returns how many touch.
template <class T>
T evaluate_pair_range(SelfCollisionData<T>& d, const World<T>& world, const StateArrays<T>& s, std::size_t p_begin,
                      std::size_t p_end)
{
    const auto& list = d.candidates;
    const std::size_t stride = list.layout.pair_stride;
    const T h = d.thickness, friction = d.friction;
    // Summed in T: exact for any realistic count.
    T found = 0;
    // Addresses in locals: the records' stores may alias anything else, d included.
    T *const push_x = d.push_x.data(), *const push_y = d.push_y.data(), *const push_z = d.push_z.data(),
             *const push_touching = d.push_touching.data();
    const auto evaluate = [&](const auto& a, const auto& b, const auto& live, std::size_t p) SIMDVERLET_LAMBDA_INLINE {
        const auto push = pair_push(a, b, live, h, friction);
        simd::store_at(push_x + p, push.ax);
        simd::store_at(push_y + p, push.ay);
        simd::store_at(push_z + p, push.az);
        simd::store_at(push_touching + p, push.touching);
        simd::store_at(push_x + stride + p, push.bx);
        simd::store_at(push_y + stride + p, push.by);
        simd::store_at(push_z + stride + p, push.bz);
        simd::store_at(push_touching + stride + p, push.touching);
        found += simd::sum_lanes(push.touching);
    };
    if (world.vectorized())
        kernels::for_each_pair_vector<xsimd::default_arch>(s, list.layout.pair_a.data(), list.layout.pair_b.data(),
                                                           list.layout.pair_runs.data(), p_begin, p_end, evaluate);
    else
        kernels::for_each_pair_scalar(s, list.layout.pair_a.data(), list.layout.pair_b.data(), p_begin, p_end,
                                      evaluate);
    return found;
}

/// Moves a particle by the average of its pushes, unless it has none or is pinned (then it keeps
/// its exact bits); for V = T or a batch.
inline constexpr auto settle_average = [](const auto& p) SIMDVERLET_LAMBDA_INLINE {
    using V = std::decay_t<decltype(p.x)>;
    const V zero(simd::Scalar<V>(0));
    const auto moves = (p.count > zero) && (p.w > zero);
    return std::array<V, 3>{simd::select(moves, p.x + p.dx / p.count, p.x),
                            simd::select(moves, p.y + p.dy / p.count, p.y),
                            simd::select(moves, p.z + p.dz / p.count, p.z)};
};

/// Moves the active particles [a_begin, a_end) (a_begin a whole number of batches) by the average
/// of their push records, summed in their lists' order: Jacobi style, so a particle squeezed from
/// many sides does not overshoot. A particle without contacts, or pinned, keeps its exact bits.
template <class T>
void settle_range(const SelfCollisionData<T>& d, const World<T>& world, const StateArrays<T>& s, std::size_t a_begin,
                  std::size_t a_end)
{
    constexpr std::size_t lanes = simd::kLanes<T>;
    const auto& list = d.candidates;
    const kernels::PushArrays<T> pushes{d.push_x.data(), d.push_y.data(), d.push_z.data(), d.push_touching.data()};
    const auto settle = settle_average;
    if (world.vectorized())
        kernels::settle_pushes_vector<xsimd::default_arch>(
            s, pushes, list.layout.lane_table.data(), list.layout.row_runs.data(), list.layout.group_row.data(),
            a_begin / lanes, (a_end + lanes - 1) / lanes, list.active.size(), settle);
    else
        kernels::settle_pushes_scalar(s, pushes, list.active.data(), a_begin, a_end, list.begin, list.first.data(),
                                      list.count.data(), list.layout.record.data(), settle);
}

/// How much lighter than its mass a held particle looks to the contacts (mark_held): 16 times
/// heavier, so the free side of a contact takes 16/17 of a pair's push. Not infinitely: a
/// triangle corner carrying a contact alone, at a small barycentric weight, would have to move
/// the push over that weight.
template <class T>
inline constexpr T kHeldInverseMass = T(1) / T(16);

/// Shock propagation, with triangle contacts: the particles a later stage moved after this stage
/// last ran, the substep before (a collider pushing them back out: the previous position, where that substep ended,
/// differs from where this stage left them), are held this substep: the contacts see them 16
/// times heavier. A layer pressed onto a collider by another then rests on the one the collider
/// holds, instead of the collider undoing the held layer's share of every push, which left
/// stacked layers resting sunk into each other.
template <class T>
void mark_held(SelfCollisionData<T>& d, const World<T>& world, const StateArrays<T>& s, std::size_t begin,
               std::size_t end)
{
    d.holds = false;
    if (d.left_step + 1 != world.step_count() || d.left_begin != begin || d.left_x.size() != end - begin)
        return;
    d.seen_mass.resize(s.padded);
    std::atomic<bool> any{false};
    world.for_each_chunk_within(begin, end, [&](std::size_t chunk_begin, std::size_t chunk_end) {
        bool found = false;
        for (std::size_t i = chunk_begin; i < chunk_end; ++i)
        {
            const std::size_t k = i - begin;
            const T w = s.inv_mass ? s.inv_mass[i] : T(1);
            const bool held = s.px[i] != d.left_x[k] || s.py[i] != d.left_y[k] || s.pz[i] != d.left_z[k];
            d.seen_mass[i] = held ? w * kHeldInverseMass<T> : w;
            found = found || held;
        }
        if (found)
            any.store(true, std::memory_order_relaxed);
    });
    d.holds = any.load();
}

/// Keeps where the stage leaves the range's particles, for the next substep's mark_held.
template <class T>
void remember_left(SelfCollisionData<T>& d, const World<T>& world, const StateArrays<T>& s, std::size_t begin,
                   std::size_t end)
{
    d.left_x.assign(s.x + begin, s.x + end);
    d.left_y.assign(s.y + begin, s.y + end);
    d.left_z.assign(s.z + begin, s.z + end);
    d.left_step = world.step_count();
    d.left_begin = begin;
}

/// The state as the contacts see it: the inverse masses of mark_held while a particle is held.
template <class T>
StateArrays<T> as_contacts_see(const SelfCollisionData<T>& d, StateArrays<T> s)
{
    if (d.holds)
        s.inv_mass = d.seen_mass.data();
    return s;
}

/// One pass: the list laid out if it is new, every listed pair evaluated once from the unchanged
/// positions, then every particle with candidates settled. On the executor's threads these are
/// two sweeps, each writing only its own records or particles. Serially, block by block: a
/// block's pairs, then its particles, while its records and state are still in cache. That keeps
/// Jacobi's unchanged positions, because a block's pairs read only particles of that block and
/// later ones, and a block's particles read only records of that block and earlier ones
/// (order_pairs). Both ways give the same bits, in lanes or one at a time. Returns the pairs in
/// contact.
template <class T>
int resolve_pass(SelfCollisionData<T>& d, const World<T>& world, const StateArrays<T>& s)
{
    auto& list = d.candidates;
    if (!list.layout.ready)
        lay_out_pairs(list, simd::kLanes<T>);
    prepare_pushes(d);
    const StateArrays<T> seen = as_contacts_see(d, s);
    const std::size_t active = list.active.size();
    if (world.chunk_count(list.layout.pair_stride) == 1 && world.chunk_count(active) == 1)
    {
        T found = 0;
        for (std::size_t j = 0; j + 1 < list.layout.pair_block.size(); ++j)
        {
            found += evaluate_pair_range(d, world, seen, list.layout.pair_block[j], list.layout.pair_block[j + 1]);
            settle_range(d, world, s, std::min(active, j * list.layout.settle_block),
                         std::min(active, (j + 1) * list.layout.settle_block));
        }
        return int(found);
    }
    std::atomic<int> contacts{0};
    world.for_each_chunk(list.layout.pair_stride, [&](std::size_t chunk_begin, std::size_t chunk_end) {
        contacts.fetch_add(int(evaluate_pair_range(d, world, seen, chunk_begin, chunk_end)), std::memory_order_relaxed);
    });
    world.for_each_chunk(active, [&](std::size_t chunk_begin, std::size_t chunk_end) {
        settle_range(d, world, s, chunk_begin, chunk_end);
    });
    return contacts.load();
}

/// Snapshots carry where the stage left the particles, which mark_held reads the substep after.
template <class T>
StageState self_collision_state(std::shared_ptr<SelfCollisionData<T>> data)
{
    constexpr std::size_t header = 3 * sizeof(std::uint64_t);
    const auto count_in = [](std::string_view in) {
        std::uint64_t n = 0;
        std::memcpy(&n, in.data() + 2 * sizeof(std::uint64_t), sizeof n);
        return n;
    };
    return {
        [data] {
            std::string out;
            const std::uint64_t n = data->left_x.size();
            for (const std::uint64_t v : {data->left_step, data->left_begin, n})
                out.append(reinterpret_cast<const char*>(&v), sizeof v);
            for (const auto* a : {&data->left_x, &data->left_y, &data->left_z})
                out.append(reinterpret_cast<const char*>(a->data()), a->size() * sizeof(T));
            return out;
        },
        [count_in](std::string_view in) {
            return in.size() >= header && (in.size() - header) % (3 * sizeof(T)) == 0 &&
                   count_in(in) == (in.size() - header) / (3 * sizeof(T));
        },
        [data, count_in](std::string_view in) {
            std::memcpy(&data->left_step, in.data(), sizeof(std::uint64_t));
            std::memcpy(&data->left_begin, in.data() + sizeof(std::uint64_t), sizeof(std::uint64_t));
            const auto n = std::size_t(count_in(in));
            std::size_t at = header;
            for (auto* a : {&data->left_x, &data->left_y, &data->left_z})
            {
                a->resize(n);
                if (n > 0)
                    std::memcpy(a->data(), in.data() + at, n * sizeof(T));
                at += n * sizeof(T);
            }
        },
    };
}

/// The edges of the listed cloths that a material holds (cloth_solve.hpp), counted to tell when one
/// was removed.
template <class T>
std::size_t live_solve_edges(const SelfCollisionData<T>& d)
{
    std::size_t edges = 0;
    for (const Cloth<T>& cloth : d.cloths)
        if (const auto* solve = ClothAccess::solve(cloth); solve && !cloth.removed())
            edges += solve->edges.size();
    return edges;
}

/// The listed material cloths' edges as the candidate list's bonds, left out of the contacts as
/// springs are. Remade only when a listed cloth was removed or the range changed.
template <class T>
void collect_bonds(SelfCollisionData<T>& d, std::size_t begin, std::size_t end)
{
    std::vector<std::array<std::int32_t, 2>> pairs;
    for (const Cloth<T>& cloth : d.cloths)
        if (const auto* solve = ClothAccess::solve(cloth); solve && !cloth.removed())
            for (const auto& e : solve->edges)
                pairs.push_back({std::int32_t(solve->base) + e[0], std::int32_t(solve->base) + e[1]});
    d.candidates.bonds.assign(begin, end, pairs);
    d.bonded_edges = pairs.size();
}

template <class T>
bool bonds_changed(const SelfCollisionData<T>& d, std::size_t begin, std::size_t end)
{
    return live_solve_edges(d) != d.bonded_edges ||
           (d.bonded_edges > 0 &&
            (d.candidates.bonds.begin != begin || d.candidates.bonds.first.size() != end - begin + 1));
}

/// The registered stage: refresh the candidate list when stale, then resolve, each pass the
/// particle pairs and then the point-triangle contacts. With triangles the list must be current
/// by the moves alone: the search around the few that moved far looks for particles, not for
/// triangles, so it cannot vouch for the triangle contacts.
template <class T>
void collide_self(SelfCollisionData<T>& d, const World<T>& world, State3<T>& state)
{
    d.contacts = 0;
    if (d.solve)
    {
        d.contacts = d.enabled ? int(d.solve->self_contacts) : 0;
        return;
    }
    const auto bounds = d.range.resolve(state.size());
    const std::size_t begin = bounds.first, end = bounds.second;
    if (!d.enabled || end - begin < 2)
        return;
    const auto s = state.arrays_view();
    const bool faces = !d.cloths.empty();
    d.holds = false;
    if (faces)
        mark_held(d, world, s, begin, end);
    if (bonds_changed(d, begin, end))
    {
        collect_bonds(d, begin, end);
        d.candidates.valid = false;
    }
    for (int pass = 0; pass < d.passes; ++pass)
    {
        if (!list_is_current(d.candidates, world, s, begin, end, d.thickness, world.vectorized(), !faces))
        {
            const T margin = list_margin(d.thickness);
            build_candidates(d.candidates, world, s, begin, end, d.thickness, margin);
            if (faces)
            {
                collect_triangles(d.faces, std::span<const Cloth<T>>(d.cloths), world.constraint_layers(),
                                  d.candidates.bonds, begin, end);
                build_triangle_contacts(d.faces, d.candidates, world, begin, end, d.thickness + margin);
            }
        }
        d.contacts = resolve_pass(d, world, s);
        if (faces)
            d.contacts += resolve_triangle_pass(d.faces, world, as_contacts_see(d, s), begin, end - begin, d.thickness,
                                                d.candidates.margin, d.friction, settle_average);
    }
    if (faces)
        remember_left(d, world, s, begin, end);
}
} // namespace detail

template <class T>
class SelfCollision;

namespace detail
{
/// The data behind a handle: for benchmarks and tests that time or inspect the stage's parts.
template <class T>
std::shared_ptr<SelfCollisionData<T>> self_collision_data(const SelfCollision<T>& handle);
} // namespace detail

/// Handle of a registered self-collision pass, with the shape of every stage handle (handle.hpp).
template <class T>
class SelfCollision : public detail::StageHandle<T, detail::SelfCollisionData<T>>
{
    using Base = detail::StageHandle<T, detail::SelfCollisionData<T>>;

  public:
    /// A handle of no stage yet: it reports an empty stage that was removed, and acting on it throws
    /// std::logic_error.
    SelfCollision() = default;
    /// Contacts found by the last pass of the last step: pairs of particles closer than the
    /// thickness (a pair counts once), and particles within it of a listed cloth's triangle.
    int contacts() const noexcept { return this->data().contacts; }

    T thickness() const noexcept { return this->data().thickness; }
    /// Throws std::invalid_argument, changing nothing, unless finite and > 0.
    void set_thickness(T thickness)
    {
        auto& d = this->live();
        detail::check_self_collision(thickness, d.friction, d.passes);
        d.thickness = thickness;
    }

    T friction() const noexcept { return this->data().friction; }
    /// Throws std::invalid_argument, changing nothing, unless finite and >= 0.
    void set_friction(T friction)
    {
        auto& d = this->live();
        detail::check_self_collision(d.thickness, friction, d.passes);
        d.friction = friction;
    }

    /// Off skips the pass without unregistering it.
    bool enabled() const noexcept { return this->data().enabled; }
    void set_enabled(bool on) { this->live().enabled = on; }

    /// How many times the candidate list has been rebuilt: a measure of how well it is reused.
    std::uint64_t rebuilds() const noexcept { return this->data().candidates.builds; }
    /// Entries in the current candidate list (a pair appears once from each side): what a pass
    /// tests. Grows with the square of thickness + margin on a sheet, with its cube in a heap.
    std::size_t candidates() const noexcept { return this->data().candidates.partners.size(); }

  private:
    template <class U>
    friend SelfCollision<U> add_self_collision(Simulation<U>& sim, SelfCollisionOptions<U> options);
    template <class U>
    friend std::shared_ptr<detail::SelfCollisionData<U>> detail::self_collision_data(const SelfCollision<U>& handle);
    explicit SelfCollision(std::shared_ptr<detail::SelfCollisionData<T>> data) : Base(std::move(data)) {}
};

template <class T>
std::shared_ptr<detail::SelfCollisionData<T>> detail::self_collision_data(const SelfCollision<T>& handle)
{
    return handle.shared();
}

namespace detail
{
/// The springs' spacing across a range: over its particles with a live spring to another particle
/// of the range, the median of each one's shortest rest length (a grid's spacing, a mesh's typical
/// edge). 0 when none has one.
template <class T>
T typical_spacing(const Simulation<T>& sim, const ParticleRange& range)
{
    const auto bounds = range.resolve(sim.size());
    const std::size_t begin = bounds.first, end = bounds.second;
    const auto& layers = sim.constraint_layers();
    std::vector<T> shortest;
    for (std::size_t i = begin; i < end; ++i)
    {
        T nearest = std::numeric_limits<T>::infinity();
        layers.for_each_wired(i, [&](SlotRef, std::int32_t j, T rest, T k) {
            if (k != T(0) && std::size_t(j) >= begin && std::size_t(j) < end)
                nearest = std::min(nearest, rest);
        });
        if (std::isfinite(nearest))
            shortest.push_back(nearest);
    }
    if (shortest.empty())
        return T(0);
    const auto middle = shortest.begin() + std::ptrdiff_t(shortest.size() / 2);
    std::nth_element(shortest.begin(), middle, shortest.end());
    return *middle;
}

/// Warns through the log hook when particle pairs alone are asked to keep a sheet from crossing
/// itself at a thickness a particle fits through: under ~0.7 x spacing a particle passes through
/// the middle of a grid square, and only triangle contacts (`cloths`) stop it.
template <class T>
void warn_if_thin_without_triangles(const Simulation<T>& sim, const SelfCollisionOptions<T>& o)
{
    if (!o.cloths.empty())
        return;
    const T spacing = typical_spacing(sim, o.range);
    if (!(o.thickness < T(0.7) * spacing))
        return;
    log(LogLevel::warning, "simdverlet: self-collision '" + o.name + "' has thickness " + number(o.thickness) +
                               " under 0.7 x its springs' spacing " + number(spacing) +
                               " and no cloths listed: a particle fits through a grid square there, so a fold can "
                               "slip through the sheet. List the cloths in .cloths for triangle contacts, or raise "
                               "the thickness");
}
} // namespace detail

namespace detail
{
/// A material cloth listed in `o` collides with itself inside its own solve (self_contact_term.hpp):
/// returns that solve, ready for the stage's contacts, or null when no listed cloth has a material.
/// Throws, changing nothing, when the stage asks for more than the solve holds (another listed
/// cloth, or a range beyond the cloth: contact between a material cloth and other particles is not
/// built), when another live stage holds the cloth already, or when the cloth passes through itself
/// where it is now (std::invalid_argument naming the first edge and triangle that cross).
template <class T>
std::shared_ptr<ClothSolveData<T>> solve_for_self_contact(const Simulation<T>& sim, const SelfCollisionOptions<T>& o)
{
    const auto material = std::find_if(o.cloths.begin(), o.cloths.end(),
                                       [](const Cloth<T>& c) { return ClothAccess::solve(c) != nullptr; });
    if (material == o.cloths.end())
        return nullptr;
    const Cloth<T>& cloth = *material;
    const auto bounds = o.range.resolve(sim.size());
    if (o.cloths.size() != 1 || bounds.first != cloth.base() || bounds.second != cloth.end())
        raise<std::invalid_argument>("simdverlet: self-collision of material cloth '" + cloth.name() +
                                     "' must list that cloth alone over its own range [" +
                                     std::to_string(cloth.base()) + ", " + std::to_string(cloth.end()) +
                                     "): contact between a material cloth and other particles is not supported");
    auto solve = ClothAccess::shared_solve(cloth);
    if (solve->self_registered && solve->self_registered())
        raise<std::invalid_argument>("simdverlet: material cloth '" + cloth.name() +
                                     "' is listed by another self-collision stage already");
    std::vector<std::array<std::int32_t, 3>> triangles;
    for (const auto& t : solve->energy.stretch.triangles)
        triangles.push_back(t.corner);
    SelfContactTerm term;
    term.set_mesh(std::move(triangles), solve->edges, solve->count);
    std::vector<Eigen::Vector3d> x(solve->count);
    for (std::size_t k = 0; k < solve->count; ++k)
        x[k] = sim.state().position(solve->base + k).template cast<double>();
    std::optional<SelfCrossing> first;
    if (const std::size_t crossings = term.crossings(x, first); crossings > 0)
    {
        const auto particle = [&](std::int32_t k) { return std::to_string(solve->base + std::size_t(k)); };
        raise<std::invalid_argument>(
            "simdverlet: material cloth '" + cloth.name() + "' passes through itself already (" +
            std::to_string(crossings) + " edge-triangle crossings; the first: edge of particles " +
            particle(first->edge[0]) + " and " + particle(first->edge[1]) + " through the triangle of " +
            particle(first->triangle[0]) + ", " + particle(first->triangle[1]) + " and " +
            particle(first->triangle[2]) + "): self-collision keeps a cloth from crossing, it cannot undo a " +
            "crossing; move the parts apart before adding it");
    }
    solve->energy.contact = std::move(term);
    return solve;
}

/// Hands the stage's contacts to the cloth's solve, which asks for the stage's settings each step.
template <class T>
void hand_to_solve(const std::shared_ptr<SelfCollisionData<T>>& data)
{
    const std::weak_ptr<SelfCollisionData<T>> weak = data;
    data->solve->self = [weak]() -> std::optional<SelfContactSettings> {
        const auto d = weak.lock();
        if (!d || d->link.removed() || !d->enabled)
            return std::nullopt;
        return SelfContactSettings{double(d->thickness), double(d->friction)};
    };
    data->solve->self_registered = [weak] {
        const auto d = weak.lock();
        return d && !d->link.removed();
    };
}
} // namespace detail

/// Registers self-collision as a position projection, after the stages registered before it
/// (colliders registered after it get the last word), and returns its handle. Throws, registering
/// nothing, on a thickness that is not finite and > 0, a negative or non-finite friction, passes
/// < 1, a name registered already, a range that is not inside the simulation, or a listed cloth of another
/// simulation (std::invalid_argument) or one removed (std::logic_error). Warns through the log
/// hook for a thickness under 0.7 x the springs' spacing with no cloths listed.
template <class T>
SelfCollision<T> add_self_collision(Simulation<T>& sim, SelfCollisionOptions<T> options)
{
    detail::check_self_collision(options.thickness, options.friction, options.passes);
    options.range.check_inside(sim.size(), "self-collision");
    for (const Cloth<T>& cloth : options.cloths)
    {
        if (!cloth.belongs_to(sim))
            detail::raise<std::invalid_argument>("simdverlet: self-collision cloth '" + cloth.name() +
                                                 "' is not in this simulation");
        if (cloth.removed())
            detail::raise<std::logic_error>("simdverlet: self-collision cloth '" + cloth.name() + "' was removed");
    }
    options.name = detail::stage_name(sim.position_projections(), options.name,
                                      "self_collision" + detail::range_suffix(options.range));
    detail::warn_if_thin_without_triangles(sim, options);
    auto solve = detail::solve_for_self_contact(sim, options);
    const auto world = detail::world_of(sim);
    auto data = std::make_shared<detail::SelfCollisionData<T>>();
    data->thickness = options.thickness;
    data->friction = options.friction;
    data->passes = options.passes;
    data->range = options.range;
    data->cloths = std::move(options.cloths);
    data->name = options.name;
    data->world = world;
    data->solve = std::move(solve);
    sim.add_stage_state(options.name, detail::self_collision_state(data));
    detail::register_projection(sim, data, options.name, "self-collision",
                                [](auto& d, auto& world, State3<T>& state) { detail::collide_self(d, world, state); });
    if (data->solve)
        detail::hand_to_solve(data);
    return SelfCollision<T>(std::move(data));
}

} // namespace simdverlet
