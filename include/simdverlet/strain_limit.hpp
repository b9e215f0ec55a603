// Strain limiting (Provot's deformation constraints): after the solve, the two ends of every live
// spring stretched or compressed past a bound are moved back toward it. Explicit springs stiff
// enough not to stretch need a stiffness, and so a substep count, that the frame cannot afford; a
// limiter lets soft springs carry the motion and caps what they cannot hold.
//
// The springs are cut into chains (spring_chains.hpp) and each pass solves every chain exactly,
// family after family: a grid's rows, then its columns; a mesh's edges along each of their
// directions. A spring-by-spring (Jacobi) pass moves a correction one spring, where a hanging
// sheet needs it carried across the whole sheet; a chain solve carries it along the chain in one
// pass, whichever way the weight runs (docs/performance.md, "Strain limiting", measures the
// residual per pass of both). Each chain's particles are written by its solve alone, so the
// result is the same for any thread count and split; pinned particles never move.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cloth.hpp"
#include "constraints.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "kernels/projection.hpp"
#include "simd.hpp"
#include "simulation.hpp"
#include "spring_chains.hpp"
#include "stage_state.hpp"
#include "state.hpp"

namespace simdverlet
{

/// What add_strain_limit registers.
template <class T>
struct StrainLimitOptions
{
    /// Finite and >= 0: how far past its rest length a spring may stretch, as a fraction (0.1: 10 %).
    T max_stretch = T(0.1);
    /// Finite, in [0, 1): how far below its rest length a spring may shrink, as a fraction.
    T max_compression = T(0.1);
    /// Passes per step, >= 1, each one solve of every chain. A straight chain lands on its bounds in
    /// one; the chains of a bent or branching sheet pull on each other, and each further pass cuts
    /// what the last left (docs/performance.md measures the residual per pass count).
    int passes = 4;
    /// The particles whose springs are limited (those with both ends inside); default every
    /// particle, re-read each step. The cloth form of add_strain_limit takes the cloth's range and
    /// refuses another.
    ParticleRange range = {};
    std::string name = "strain_limit"; ///< key in the position-projection registry and in snapshots
};

namespace detail
{
/// How a pass limits: by chain solves (the stage), or, kept to measure against them, by Jacobi
/// passes combining a particle's slot corrections (BM_strain_limit_schemes; docs/performance.md,
/// "Strain limiting"). The Jacobi default moves each particle by the mean of its acting slots'
/// corrections, the form that never did worse than no limiter: summing them diverges at one pass,
/// and two colours cost 1.7 x the time.
template <class T>
struct LimitScheme
{
    bool chains = true;    ///< exact chain solves (the stage); false: the Jacobi passes below, for comparison
    bool coloured = false; ///< two half-sweeps, the second reading the first's results
    bool averaged = true;  ///< divide the summed corrections by the number of acting slots
    /// Factor on the (mean or summed) correction; with chains, on each solve's moves (over-relaxed
    /// passes: BM_strain_limit_relaxed, docs/performance.md)
    T relaxation = T(1);
    /// Chains: above 0, Chebyshev semi-iteration across a step's passes (Wang 2015) for this
    /// estimate of the passes' spectral radius, from pass `chebyshev_from` (>= 2) on: each pass's
    /// result is blended with the positions two passes back by a weight that rises toward
    /// 2 / (1 + sqrt(1 - rho^2)). Kept to measure against the plain passes.
    T spectral_radius = T(0);
    int chebyshev_from = 2;
    /// Chains, vector path: a grid batch whose springs all lie within their bounds is read, not
    /// solved (chain_batch_within_bounds); false solves every batch, to measure against.
    bool skip_within_bounds = true;
};

template <class T>
struct StrainLimitData
{
    LimitScheme<T> scheme;
    T max_stretch;
    T max_compression;
    int passes;
    ParticleRange range;
    std::string name;
    std::weak_ptr<World<T>> world;
    StageLink<T> link = {};
    int limited = 0; ///< chains: springs past a bound as the last pass reached them; Jacobi: particles moved
    int skipped = 0; ///< chains: batches found within their bounds, not solved, over the last step
    // The chains of the limited springs, rebuilt when the range changes or a spring comes. A spring
    // that goes (a cut, a tear) parts its chain in place: its rest becomes 0, an identity row.
    SpringChains<T> chains;
    std::vector<ChainSpring<T>> built; ///< the springs the chains were built from, sorted by ends
    std::vector<ChainPlace> places;    ///< where each of `built` sits in the chains, in the same order
    std::vector<ChainSpring<T>> added; ///< the limited springs when the stage was added, sorted by ends
    std::size_t added_begin = 0, added_end = 0;
    bool part_in_place = true;     ///< false: rebuild on every change of the springs, kept to measure against
    std::vector<Vec3<T>> layout;   ///< every particle's position when the stage was added: how the chains run
    std::optional<Cloth<T>> cloth; ///< the cloth form's: only its triangles' edges are limited
    bool chains_valid = false;
    std::uint64_t chains_stamp = 0;
    std::size_t chains_begin = 0, chains_end = 0;
    std::size_t chains_regions = 1; ///< the executor's threads when the chains were built
    // One pass's new positions, from the first particle's padding block on (so lane groups store
    // them aligned).
    simd::AlignedVector<T> next_x, next_y, next_z;
    // Two colours such that (as far as the springs allow) no spring joins two particles of one
    // colour, from `colour_first` on; recomputed when the range or the constraints change.
    bool colours_valid = false;
    bool colours_proper = false; ///< no live spring joins two particles of one colour
    std::uint64_t colour_stamp = 0;
    std::size_t colour_begin = 0, colour_end = 0, colour_first = 0;
    simd::AlignedVector<T> colour;
};

/// Colours [begin, end) 0 and 1 by a breadth-first walk over the live springs, alternating: a
/// grid cloth or a strand's neighbours get the other colour. A spring closing an odd loop joins
/// two particles of one colour, which then read each other's old positions: still deterministic.
template <class T>
void colour_particles(StrainLimitData<T>& d, const World<T>& world, std::size_t begin, std::size_t end)
{
    const auto layers = world.constraint_layers().views();
    d.colour_first = begin / simd::kPadLanes<T> * simd::kPadLanes<T>;
    d.colour.assign(simd::padded_count<T>(end - d.colour_first), T(-1));
    T* const colour = d.colour.data();
    std::vector<std::size_t> queue;
    for (std::size_t start = begin; start < end; ++start)
    {
        if (colour[start - d.colour_first] >= T(0))
            continue;
        colour[start - d.colour_first] = T(0);
        queue.assign(1, start);
        for (std::size_t at = 0; at < queue.size(); ++at)
        {
            const std::size_t i = queue[at];
            for (const auto& c : layers)
                for (int a = 0; a < kSlots && c.covers(i); ++a)
                {
                    const std::int32_t j = c.neighbour[a][i - c.first];
                    if (!(c.stiffness[a][i - c.first] > T(0)) || j < std::int32_t(begin) || std::size_t(j) >= end)
                        continue;
                    T& cj = colour[std::size_t(j) - d.colour_first];
                    if (cj < T(0))
                    {
                        cj = T(1) - colour[i - d.colour_first];
                        queue.push_back(std::size_t(j));
                    }
                }
        }
    }
    d.colours_proper = true;
    for (std::size_t i = begin; i < end && d.colours_proper; ++i)
        for (const auto& c : layers)
            for (int a = 0; a < kSlots && c.covers(i); ++a)
            {
                const std::int32_t j = c.neighbour[a][i - c.first];
                if (c.stiffness[a][i - c.first] > T(0) && j >= std::int32_t(begin) && std::size_t(j) < end &&
                    colour[std::size_t(j) - d.colour_first] == colour[i - d.colour_first])
                    d.colours_proper = false;
            }
    d.colours_valid = true;
    d.colour_stamp = world.constraint_layers().edit_stamp();
    d.colour_begin = begin;
    d.colour_end = end;
}

/// Throws std::invalid_argument naming `stage` ("strain limit", "column limit") and the value, on
/// a negative or non-finite stretch bound, a compression bound outside [0, 1), or a `count_name`
/// (its passes or solves) below 1. Shared by the limiters, so they refuse alike.
template <class T>
void check_strain_bounds(const std::string& stage, T max_stretch, T max_compression, const std::string& count_name,
                         int count)
{
    if (!std::isfinite(max_stretch) || max_stretch < T(0))
        detail::raise<std::invalid_argument>("simdverlet: " + stage + " max_stretch must be finite and >= 0, got " +
                                             number(max_stretch));
    if (!std::isfinite(max_compression) || max_compression < T(0) || max_compression >= T(1))
        detail::raise<std::invalid_argument>(
            "simdverlet: " + stage + " max_compression must be finite and in [0, 1), got " + number(max_compression));
    if (count < 1)
        detail::raise<std::invalid_argument>("simdverlet: " + stage + " " + count_name + " must be >= 1, got " +
                                             std::to_string(count));
}

template <class T>
void check_strain_limit(T max_stretch, T max_compression, int passes)
{
    check_strain_bounds("strain limit", max_stretch, max_compression, "passes", passes);
}

/// Particle i's new position from its slots in every layer (layer order, then slot order), written
/// once for a scalar (V = T, M = bool) and a batch of lanes. Each live slot whose spring lies
/// outside [rest (1 - compression), rest (1 + stretch)] moves i along the spring by its
/// inverse-mass share of the excess; the corrections of the slots are summed, as the solve sums
/// their forces.
template <class T, class V, class M>
M limit_slots(kernels::ParticleLanes<V>& p, const M& movable, const StateArrays<T>& s,
              std::span<const ConstraintArrays<T>> layers, std::size_t i, T stretch, T compression,
              const LimitScheme<T>& scheme, bool runs)
{
    const V zero(T(0)), one(T(1));
    const V w = s.inv_mass ? simd::load_lanes<V>(s.inv_mass + i) : one;
    V cx = zero, cy = zero, cz = zero, count = zero;
    M moved(false);
    for (const auto& c : layers)
        for (int a = 0; a < kSlots && c.covers(i); ++a)
        {
            const std::size_t row = i - c.first;
            const M live = simd::load_lanes<V>(c.stiffness[a] + row) > zero;
            if (!simd::any(live && movable))
                continue;
            // A grid's neighbours in one slot sit at one offset: contiguous loads, no gather.
            const auto j = simd::lane_index<V>(c.neighbour[a] + row, s.padded, runs);
            const V rest = simd::load_lanes<V>(c.rest[a] + row);
            const V dx = simd::read_lanes<V>(s.x, j) - p.x, dy = simd::read_lanes<V>(s.y, j) - p.y,
                    dz = simd::read_lanes<V>(s.z, j) - p.z;
            const V wj = s.inv_mass ? simd::read_lanes<V>(s.inv_mass, j) : one;
            const V length = simd::sqrt(dx * dx + dy * dy + dz * dz);
            const V longest = rest * V(T(1) + stretch), shortest = rest * V(T(1) - compression);
            const V excess = simd::select(length > longest, length - longest,
                                          simd::select(length < shortest, length - shortest, zero));
            // !(==), not !=: xsimd 8's AVX and AVX-512 != is false for NaN, where C++'s is true.
            const M act = movable && live && !(excess == zero) && (length > zero) && (w + wj > zero);
            if (!simd::any(act))
                continue;
            const V scale = simd::select(act, w / (w + wj) * excess / length, zero);
            cx = cx + scale * dx;
            cy = cy + scale * dy;
            cz = cz + scale * dz;
            count = count + simd::select(act, one, zero);
            moved = moved || act;
        }
    const V f = scheme.averaged ? V(scheme.relaxation) / simd::max(count, one) : V(scheme.relaxation);
    p.x = p.x + f * cx;
    p.y = p.y + f * cy;
    p.z = p.z + f * cz;
    return moved;
}

/// One Jacobi pass over [begin, end): new positions into scratch from the unchanged arrays, then
/// written back. Returns the particles moved.
template <class T>
int limit_pass(StrainLimitData<T>& d, const World<T>& world, const StateArrays<T>& s, std::size_t begin,
               std::size_t end, T only_colour)
{
    const auto views = world.constraint_layers().views();
    const std::span<const ConstraintArrays<T>> c(views);
    const std::size_t first = begin / simd::kPadLanes<T> * simd::kPadLanes<T>;
    for (auto* scratch : {&d.next_x, &d.next_y, &d.next_z})
        scratch->resize(simd::padded_count<T>(end - first));
    T* const nx = d.next_x.data();
    T* const ny = d.next_y.data();
    T* const nz = d.next_z.data();
    const T stretch = d.max_stretch, compression = d.max_compression;
    const bool runs = world.grid_path();
    // Gather: each particle's new position, stored whole (moved or not); nothing written back yet.
    const auto gather = [&](auto& p, const auto& movable, std::size_t i) {
        using V = std::decay_t<decltype(p.x)>;
        const auto mine = only_colour < T(0)
                              ? movable
                              : movable &&
                                    (simd::load_lanes<V>(d.colour.data() + (i - d.colour_first)) == V(only_colour));
        const auto moved = limit_slots(p, mine, s, c, i, stretch, compression, d.scheme, runs);
        simd::store_at(nx + (i - first), p.x);
        simd::store_at(ny + (i - first), p.y);
        simd::store_at(nz + (i - first), p.z);
        return std::decay_t<decltype(moved)>(false); // store nothing back
    };
    // Apply: the movable particles take their new positions.
    const auto apply = [&](auto& p, const auto& movable, std::size_t i) {
        using V = std::decay_t<decltype(p.x)>;
        const V x = simd::load_lanes<V>(nx + (i - first)), y = simd::load_lanes<V>(ny + (i - first)),
                z = simd::load_lanes<V>(nz + (i - first));
        const auto moved = movable && ((x != p.x) || (y != p.y) || (z != p.z));
        p.x = simd::select(moved, x, p.x);
        p.y = simd::select(moved, y, p.y);
        p.z = simd::select(moved, z, p.z);
        return moved;
    };
    // Within one colour of a proper colouring no particle reads another that moves: each can move
    // in place, in one sweep.
    const auto in_place = [&](auto& p, const auto& movable, std::size_t i) {
        using V = std::decay_t<decltype(p.x)>;
        const auto mine = movable && (simd::load_lanes<V>(d.colour.data() + (i - d.colour_first)) == V(only_colour));
        return limit_slots(p, mine, s, c, i, stretch, compression, d.scheme, runs);
    };
    std::atomic<int> moved{0};
    const auto sweep = [&](const auto& fn, bool count) {
        world.for_each_chunk_within(begin, end, [&](std::size_t b, std::size_t e) {
            const int n = world.vectorized() ? kernels::project_lanes_vector<xsimd::default_arch, false>(s, b, e, fn)
                                             : kernels::project_lanes_scalar(s, b, e, fn);
            if (count)
                moved.fetch_add(n, std::memory_order_relaxed);
        });
    };
    if (only_colour >= T(0) && d.colours_proper)
        sweep(in_place, true);
    else
    {
        sweep(gather, false);
        sweep(apply, true);
    }
    return moved.load();
}

/// The live springs with both ends in [begin, end), each pair once (a < b), its rest length read
/// from the lower particle's slot where both hold it.
/// With `cloth`, only the springs along its triangles' edges: a mesh cloth's bend springs, which
/// shorten as it folds, stay free.
template <class T>
std::vector<ChainSpring<T>> limited_springs(const World<T>& world, std::size_t begin, std::size_t end,
                                            const Cloth<T>* cloth)
{
    const auto by_ends = [](const auto& p, const auto& q) { return std::tie(p.a, p.b) < std::tie(q.a, q.b); };
    const auto same_ends = [](const auto& p, const auto& q) { return p.a == q.a && p.b == q.b; };
    std::vector<ChainSpring<T>> springs;
    for (std::size_t i = begin; i < end; ++i)
        world.constraint_layers().for_each_wired(i, [&](SlotRef, std::int32_t j, T rest, T stiffness) {
            if (stiffness > T(0) && rest > T(0) && j >= std::int32_t(begin) && std::size_t(j) < end &&
                std::size_t(j) != i)
                springs.push_back({std::int32_t(std::min<std::size_t>(i, std::size_t(j))),
                                   std::int32_t(std::max<std::size_t>(i, std::size_t(j))), rest});
        });
    std::stable_sort(springs.begin(), springs.end(), by_ends);
    springs.erase(std::unique(springs.begin(), springs.end(), same_ends), springs.end());
    if (cloth)
    {
        std::vector<ChainSpring<T>> edges;
        for (const auto& t : cloth->triangles())
            for (int k = 0; k < 3; ++k)
            {
                const auto a = std::int32_t(cloth->index(std::size_t(t[std::size_t(k)])));
                const auto b = std::int32_t(cloth->index(std::size_t(t[std::size_t(k + 1) % 3])));
                edges.push_back({std::min(a, b), std::max(a, b), T(0)});
            }
        std::sort(edges.begin(), edges.end(), by_ends);
        edges.erase(std::unique(edges.begin(), edges.end(), same_ends), edges.end());
        std::erase_if(springs,
                      [&](const auto& s) { return !std::binary_search(edges.begin(), edges.end(), s, by_ends); });
    }
    return springs;
}

/// Whether `outer` holds every spring of `inner`, at the same rest length; both sorted by ends.
template <class T>
bool holds_all(const std::vector<ChainSpring<T>>& outer, const std::vector<ChainSpring<T>>& inner)
{
    std::size_t k = 0;
    for (const auto& spring : inner)
    {
        while (k < outer.size() && std::tie(outer[k].a, outer[k].b) < std::tie(spring.a, spring.b))
            ++k;
        if (k == outer.size() || outer[k].a != spring.a || outer[k].b != spring.b || outer[k].rest != spring.rest)
            return false;
    }
    return true;
}

/// Gives each spring the chains were built from its rest length where `current` (sorted by ends, a
/// subset of them) still has it, and 0 where not, so that the chain parts there.
template <class T>
void part_missing(StrainLimitData<T>& d, const std::vector<ChainSpring<T>>& current)
{
    std::size_t k = 0;
    for (std::size_t i = 0; i < d.built.size(); ++i)
    {
        const auto& spring = d.built[i];
        while (k < current.size() && std::tie(current[k].a, current[k].b) < std::tie(spring.a, spring.b))
            ++k;
        const bool kept = k < current.size() && current[k].a == spring.a && current[k].b == spring.b;
        d.chains.families[d.places[i].family].rest[d.places[i].at] = kept ? spring.rest : T(0);
    }
}

/// Parts the chains at each of `cleared` (ends in order) that they hold.
template <class T>
void part_at(StrainLimitData<T>& d, const std::vector<std::pair<std::int32_t, std::int32_t>>& cleared)
{
    for (const auto& [a, b] : cleared)
    {
        const auto it = std::lower_bound(d.places.begin(), d.places.end(), std::pair(a, b),
                                         [](const ChainPlace& p, const auto& q) { return std::pair(p.a, p.b) < q; });
        if (it != d.places.end() && it->a == a && it->b == b)
            d.chains.families[it->family].rest[it->at] = T(0);
    }
}

/// Builds the chains over `bounds`. They run along the springs the stage was added with while those
/// still hold every spring, the missing ones parted: so the chains do not depend on which springs a
/// cut or a tear has taken since, and a simulation restored from a snapshot of a torn cloth holds
/// the chains the torn one held, and steps on to the same bits.
template <class T>
void build_limit_chains(StrainLimitData<T>& d, const World<T>& world, std::pair<std::size_t, std::size_t> bounds,
                        std::size_t regions)
{
    auto current = limited_springs(world, bounds.first, bounds.second, d.cloth ? &*d.cloth : nullptr);
    const bool as_added = d.part_in_place && d.added_begin == bounds.first && d.added_end == bounds.second &&
                          holds_all(d.added, current);
    d.built = as_added ? d.added : current;
    const std::span<const Vec3<T>> layout(d.layout);
    d.chains = build_chains(d.built, bounds.first, bounds.second, simd::kLanes<T>,
                            layout.subspan(std::min(bounds.first, layout.size())), regions);
    d.places = chain_places(d.chains);
    if (d.places.size() != d.built.size()) // not every spring in one chain: never parted in place
        d.part_in_place = false;
    if (as_added)
        part_missing(d, current);
    d.chains_valid = true;
    d.chains_begin = bounds.first;
    d.chains_end = bounds.second;
    d.chains_regions = regions;
}

/// Follows an edit of the constraints: springs that went part their chains in place (those a cut
/// or a tear cleared are looked up alone); any other edit rebuilds them.
template <class T>
void follow_spring_edits(StrainLimitData<T>& d, const World<T>& world, std::pair<std::size_t, std::size_t> bounds,
                         std::size_t regions)
{
    if (d.part_in_place)
    {
        if (const auto cleared = world.constraint_layers().cleared_since(d.chains_stamp))
            return part_at(d, *cleared);
        const auto current = limited_springs(world, bounds.first, bounds.second, d.cloth ? &*d.cloth : nullptr);
        if (holds_all(d.built, current))
            return part_missing(d, current);
    }
    build_limit_chains(d, world, bounds, regions);
}

/// One pass of chain solves: each family in turn, its batches a task each on the executor (the
/// chains of a family share no particle, so the batches may run in any order and at once). With
/// kCount, returns the springs past a bound as the pass reached them. Adds the batches it did not
/// need to solve to `skipped`.
template <bool kCount, class T>
int limit_chains(const StrainLimitData<T>& d, const World<T>& world, const StateArrays<T>& s, int& skipped)
{
    const std::size_t lanes = d.chains.lanes;
    std::atomic<int> past{0}, within{0};
    for (const auto& family : d.chains.families)
        world.run_tasks(family.batches(), [&](std::size_t batch) {
            // Per thread: a batch's scratch is a few hundred kilobytes, kept in cache between batches.
            thread_local ChainScratch<T> scratch;
            scratch.reserve(d.chains.longest * lanes);
            int n = 0;
            // The scalar twin solves every batch: the vector path's skipped batches are the ones
            // whose solve moves nothing, so the two still agree to the bit.
            if (world.vectorized() && d.scheme.skip_within_bounds &&
                chain_batch_within_bounds<simd::Batch<T>>(s, family, batch, lanes, d.max_stretch, d.max_compression))
            {
                within.fetch_add(1, std::memory_order_relaxed);
                return;
            }
            if (world.vectorized())
                n = solve_chain_batch<simd::Batch<T>, kCount>(s, family, batch, 0, lanes, d.max_stretch,
                                                              d.max_compression, scratch, d.scheme.relaxation);
            else
                for (std::size_t lane = 0; lane < lanes; ++lane)
                    n += solve_chain_batch<T, kCount>(s, family, batch, lane, lanes, d.max_stretch, d.max_compression,
                                                      scratch, d.scheme.relaxation);
            if constexpr (kCount)
                past.fetch_add(n, std::memory_order_relaxed);
        });
    skipped += within.load();
    return past.load();
}

/// A step's passes with Chebyshev semi-iteration: x_{k+1} = w_{k+1} (pass(x_k) - x_{k-1}) +
/// x_{k-1}, w rising from 1 by w_2 = 2 / (2 - rho^2), w_{k+1} = 4 / (4 - rho^2 w_k), from pass
/// `chebyshev_from` on. The blend is one loop over the range, the same on every path.
template <class T>
void limit_chains_chebyshev(StrainLimitData<T>& d, const World<T>& world, const StateArrays<T>& s,
                            std::pair<std::size_t, std::size_t> bounds)
{
    const std::size_t begin = bounds.first, end = bounds.second, n = end - begin;
    std::vector<T> before(3 * n), current(3 * n); // x_{k-1}, x_k
    const auto save = [&](std::vector<T>& to) {
        std::copy(s.x + begin, s.x + end, to.begin());
        std::copy(s.y + begin, s.y + end, to.begin() + std::ptrdiff_t(n));
        std::copy(s.z + begin, s.z + end, to.begin() + std::ptrdiff_t(2 * n));
    };
    const T rho2 = d.scheme.spectral_radius * d.scheme.spectral_radius;
    const int first = std::max(2, d.scheme.chebyshev_from); // the first blended pass
    T omega = T(1);
    save(before);
    for (int pass = 1; pass <= d.passes; ++pass)
    {
        if (pass > 1)
            save(current);
        if (pass == d.passes)
            d.limited = limit_chains<true>(d, world, s, d.skipped);
        else
            limit_chains<false>(d, world, s, d.skipped);
        if (pass >= first)
        {
            omega = pass == first ? T(2) / (T(2) - rho2) : T(4) / (T(4) - rho2 * omega);
            T* const axes[3] = {s.x + begin, s.y + begin, s.z + begin};
            for (std::size_t c = 0; c < 3; ++c)
                for (std::size_t i = 0; i < n; ++i)
                    axes[c][i] = omega * (axes[c][i] - before[c * n + i]) + before[c * n + i];
        }
        if (pass > 1)
            std::swap(before, current);
    }
}

template <class T>
void limit_strain(StrainLimitData<T>& d, const World<T>& world, State3<T>& state)
{
    d.limited = 0;
    d.skipped = 0;
    if (d.cloth && d.cloth->removed())
        return;
    const auto bounds = d.range.resolve(state.size());
    if (bounds.second <= bounds.first)
        return;
    const auto s = state.arrays_view();
    if (d.scheme.chains)
    {
        const std::uint64_t stamp = world.constraint_layers().edit_stamp();
        const std::size_t regions = world.executor() ? std::size_t(std::max(1, world.executor()->threads())) : 1;
        if (!d.chains_valid || d.chains_begin != bounds.first || d.chains_end != bounds.second ||
            d.chains_regions != regions)
            build_limit_chains(d, world, bounds, regions);
        else if (d.chains_stamp != stamp)
            follow_spring_edits(d, world, bounds, regions);
        d.chains_stamp = stamp;
        if (d.scheme.spectral_radius > T(0))
            return limit_chains_chebyshev(d, world, s, bounds);
        for (int pass = 1; pass < d.passes; ++pass)
            limit_chains<false>(d, world, s, d.skipped);
        d.limited = limit_chains<true>(d, world, s, d.skipped);
        return;
    }
    const bool coloured = d.scheme.coloured;
    if (coloured && (!d.colours_valid || d.colour_begin != bounds.first || d.colour_end != bounds.second ||
                     d.colour_stamp != world.constraint_layers().edit_stamp()))
        colour_particles(d, world, bounds.first, bounds.second);
    for (int pass = 0; pass < d.passes; ++pass)
        if (coloured)
        {
            d.limited = limit_pass(d, world, s, bounds.first, bounds.second, T(0));
            d.limited += limit_pass(d, world, s, bounds.first, bounds.second, T(1));
        }
        else
            d.limited = limit_pass(d, world, s, bounds.first, bounds.second, T(-1));
}
} // namespace detail

template <class T>
class StrainLimit;

namespace detail
{
/// The data behind a handle: for the benchmark that compares limiting schemes.
template <class T>
std::shared_ptr<StrainLimitData<T>> strain_limit_data(const StrainLimit<T>& handle);

template <class T>
StrainLimit<T> register_strain_limit(Simulation<T>& sim, StrainLimitOptions<T> options, std::optional<Cloth<T>> cloth);
} // namespace detail

/// Handle of a registered strain limit, with the shape of every stage handle (handle.hpp).
template <class T>
class StrainLimit : public detail::StageHandle<T, detail::StrainLimitData<T>>
{
    using Base = detail::StageHandle<T, detail::StrainLimitData<T>>;

  public:
    /// Springs past a bound as the last pass of the last step reached them: 0 once the bounds hold
    /// going into it.
    int limited() const noexcept { return this->data().limited; }

    T max_stretch() const noexcept { return this->data().max_stretch; }
    T max_compression() const noexcept { return this->data().max_compression; }
    int passes() const noexcept { return this->data().passes; }
    /// Throws std::invalid_argument, changing nothing, on a bound or pass count add_strain_limit
    /// would refuse.
    void set_bounds(T max_stretch, T max_compression)
    {
        auto& d = this->live();
        detail::check_strain_limit(max_stretch, max_compression, d.passes);
        d.max_stretch = max_stretch;
        d.max_compression = max_compression;
    }
    void set_passes(int passes)
    {
        auto& d = this->live();
        detail::check_strain_limit(d.max_stretch, d.max_compression, passes);
        d.passes = passes;
    }

  private:
    template <class U>
    friend StrainLimit<U> detail::register_strain_limit(Simulation<U>& sim, StrainLimitOptions<U> options,
                                                        std::optional<Cloth<U>> cloth);
    template <class U>
    friend std::shared_ptr<detail::StrainLimitData<U>> detail::strain_limit_data(const StrainLimit<U>& handle);
    explicit StrainLimit(std::shared_ptr<detail::StrainLimitData<T>> data) : Base(std::move(data)) {}
};

template <class T>
std::shared_ptr<detail::StrainLimitData<T>> detail::strain_limit_data(const StrainLimit<T>& handle)
{
    return handle.shared();
}

namespace detail
{
template <class T>
StrainLimit<T> register_strain_limit(Simulation<T>& sim, StrainLimitOptions<T> options, std::optional<Cloth<T>> cloth)
{
    detail::check_strain_limit(options.max_stretch, options.max_compression, options.passes);
    options.range.check_inside(sim.size(), "strain limit");
    if (options.name.empty())
        detail::raise<std::invalid_argument>("simdverlet: a strain limit needs a non-empty name");
    const auto world = detail::world_of(sim);
    auto data = std::make_shared<detail::StrainLimitData<T>>();
    data->cloth = std::move(cloth);
    data->max_stretch = options.max_stretch;
    data->max_compression = options.max_compression;
    data->passes = options.passes;
    data->range = options.range;
    data->name = options.name;
    data->world = world;
    data->layout.resize(sim.size());
    for (std::size_t i = 0; i < sim.size(); ++i)
        data->layout[i] = sim.state().position(i);
    std::tie(data->added_begin, data->added_end) = data->range.resolve(sim.size());
    data->added = detail::limited_springs(*world, data->added_begin, data->added_end,
                                          data->cloth ? &*data->cloth : nullptr);
    detail::register_projection(sim, data, options.name, "strain limit",
                                [](auto& d, auto& world, State3<T>& state) { detail::limit_strain(d, world, state); });
    sim.add_stage_state(options.name, detail::field_state(data, [](detail::StrainLimitData<T>& l) {
                            return std::tie(l.max_stretch, l.max_compression, l.passes);
                        }));
    return StrainLimit<T>(std::move(data));
}
} // namespace detail

/// Registers strain limiting of every live spring with both ends in `options.range` as a position
/// projection (after the stages registered before it) and returns its handle. Throws, registering
/// nothing, on a negative or non-finite bound, a compression bound of 1 or more, passes < 1, an
/// empty name, or a range not inside the simulation.
template <class T>
StrainLimit<T> add_strain_limit(Simulation<T>& sim, StrainLimitOptions<T> options)
{
    return detail::register_strain_limit(sim, std::move(options), std::optional<Cloth<T>>());
}

/// Strain limiting of one cloth's stretch springs, those along its triangles' edges: on a grid
/// cloth every spring, on a mesh cloth all but its bend springs, which must shorten for it to fold.
/// Throws as the range form does, and std::invalid_argument on a cloth of another simulation or
/// options naming a range, std::logic_error on a removed cloth.
template <class T>
StrainLimit<T> add_strain_limit(Simulation<T>& sim, const Cloth<T>& cloth, StrainLimitOptions<T> options = {})
{
    if (!cloth.belongs_to(sim))
        detail::raise<std::invalid_argument>("simdverlet: cloth '" + cloth.name() + "' is not in this simulation");
    if (cloth.removed())
        detail::raise<std::logic_error>("simdverlet: cloth '" + cloth.name() + "' was removed");
    if (options.range.begin != 0 || options.range.end != ParticleRange::kToEnd)
        detail::raise<std::invalid_argument>("simdverlet: a strain limit on cloth '" + cloth.name() +
                                             "' limits the cloth's particles; leave its range unset");
    options.range = cloth.range();
    return detail::register_strain_limit(sim, std::move(options), std::optional<Cloth<T>>(cloth));
}

} // namespace simdverlet
