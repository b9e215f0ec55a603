// Strain limiting (Provot's deformation constraints): after the solve, the two ends of every live
// spring stretched or compressed past a bound are moved back toward it. Explicit springs stiff
// enough not to stretch need a stiffness, and so a substep count, that the frame cannot afford; a
// limiter lets soft springs carry the motion and caps what they cannot hold.
//
// The springs are cut into chains (spring_chains.hpp) and each pass solves every chain exactly,
// family after family: a grid's rows, then its columns; a mesh's edges along each of their
// directions. A spring-by-spring pass would move a correction one spring, where a hanging sheet
// needs it carried across the whole sheet; a chain solve carries it along the chain in one pass,
// whichever way the weight runs (docs/decisions.md, "Stretch control"). Each chain's particles are
// written by its solve alone, so the result is the same for any thread count and split; pinned
// particles never move.
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

#include "simdverlet/cloth/cloth.hpp"
#include "simdverlet/core/constraint_layers.hpp"
#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/stage_state.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/projection.hpp"
#include "simdverlet/limits/detail/chain_solve.hpp"
#include "simdverlet/limits/detail/spring_chains.hpp"

namespace simdverlet
{

/// What add_strain_limit registers.
template <class T>
struct StrainLimitOptions
{
    /// A cloth whose stretch springs are limited; unset (the default), the springs of `range`.
    Cloth<T> cloth = {};
    /// Finite and >= 0: how far past its rest length a spring may stretch, as a fraction (0.1: 10 %).
    /// Unset, it is max_compression when that is set, else 0.1.
    std::optional<T> max_stretch = std::nullopt;
    /// Finite, in [0, 1): how far below its rest length a spring may shrink, as a fraction. Unset,
    /// it is max_stretch when that is set (a sheet held to 1 % is held both ways), else 0.1.
    std::optional<T> max_compression = std::nullopt;
    /// Passes per step, >= 1, each one solve of every chain. A straight chain lands on its bounds in
    /// one; the chains of a bent or branching sheet pull on each other, and each further pass cuts
    /// what the last left (docs/performance.md measures the residual per pass count).
    int passes = 4;
    /// Without a cloth, the particles whose springs are limited (those with both ends inside);
    /// default every particle, re-read each step. Left unset beside a cloth, which gives its own.
    ParticleRange range = {};
    /// Key in the position-projection registry and in snapshots; default "strain_limit", followed by
    /// "@<cloth name>" for a cloth and "@[begin, end)" for a range short of every particle. A
    /// name registered already is an error.
    std::string name = {};
};

namespace detail
{
template <class T>
struct StrainLimitData
{
    T max_stretch;
    T max_compression;
    int passes;
    ParticleRange range;
    std::string name;
    std::weak_ptr<World<T>> world;
    StageLink<T> link = {};
    int limited = 0; ///< springs past a bound as the last pass reached them
    int skipped = 0; ///< batches found within their bounds, not solved, over the last step
    // The chains of the limited springs, rebuilt when the range changes or a spring comes. A spring
    // that goes (a cut, a tear) parts its chain in place: its rest becomes 0, an identity row.
    SpringChains<T> chains;
    std::vector<ChainSpring<T>> built; ///< the springs the chains were built from, sorted by ends
    std::vector<ChainPlace> places;    ///< where each of `built` sits in the chains, in the same order
    std::vector<ChainSpring<T>> added; ///< the limited springs when the stage was added, sorted by ends
    std::size_t added_begin = 0, added_end = 0;
    /// Whether every limited spring sits in one chain, so one that goes (a cut, a tear) parts its
    /// chain in place; where not, every edit of the springs rebuilds the chains.
    bool part_in_place = true;
    std::vector<Vec3<T>> layout;   ///< every particle's position when the stage was added: how the chains run
    std::optional<Cloth<T>> cloth; ///< given in the options: only its triangles' edges are limited
    bool chains_valid = false;
    std::uint64_t chains_stamp = 0;
    std::size_t chains_begin = 0, chains_end = 0;
    std::size_t chains_regions = 1; ///< the executor's threads when the chains were built
};

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

/// A limiter's two bounds from its options: an unset bound follows the set one, and both unset are
/// `fallback`. A bound given is checked first, so its error names it rather than the one following
/// it; a stretch bound of 1 or more leaves the compression bound without a value to follow, which
/// is an error asking for it rather than a clamp.
template <class T>
std::pair<T, T> resolve_strain_bounds(const std::string& stage, std::optional<T> max_stretch,
                                      std::optional<T> max_compression, T fallback)
{
    check_strain_bounds(stage, max_stretch.value_or(fallback), max_compression.value_or(T(0)), "count", 1);
    if (!max_compression && !(max_stretch.value_or(fallback) < T(1)))
        detail::raise<std::invalid_argument>("simdverlet: " + stage +
                                             " max_compression follows max_stretch when unset, "
                                             "and max_stretch " +
                                             number(*max_stretch) + " is not in [0, 1): give max_compression too");
    const T stretch = max_stretch.value_or(max_compression.value_or(fallback));
    return {stretch, max_compression.value_or(stretch)};
}

template <class T>
void check_strain_limit(T max_stretch, T max_compression, int passes)
{
    check_strain_bounds("strain limit", max_stretch, max_compression, "passes", passes);
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
            if (world.vectorized() &&
                chain_batch_within_bounds<simd::Batch<T>>(s, family, batch, lanes, d.max_stretch, d.max_compression))
            {
                within.fetch_add(1, std::memory_order_relaxed);
                return;
            }
            if (world.vectorized())
                n = solve_chain_batch<simd::Batch<T>, kCount>(s, family, batch, 0, lanes, d.max_stretch,
                                                              d.max_compression, scratch);
            else
                for (std::size_t lane = 0; lane < lanes; ++lane)
                    n += solve_chain_batch<T, kCount>(s, family, batch, lane, lanes, d.max_stretch, d.max_compression,
                                                      scratch);
            if constexpr (kCount)
                past.fetch_add(n, std::memory_order_relaxed);
        });
    skipped += within.load();
    return past.load();
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
    const std::uint64_t stamp = world.constraint_layers().edit_stamp();
    const std::size_t regions = world.executor() ? std::size_t(std::max(1, world.executor()->threads())) : 1;
    if (!d.chains_valid || d.chains_begin != bounds.first || d.chains_end != bounds.second ||
        d.chains_regions != regions)
        build_limit_chains(d, world, bounds, regions);
    else if (d.chains_stamp != stamp)
        follow_spring_edits(d, world, bounds, regions);
    d.chains_stamp = stamp;
    for (int pass = 1; pass < d.passes; ++pass)
        limit_chains<false>(d, world, s, d.skipped);
    d.limited = limit_chains<true>(d, world, s, d.skipped);
}
} // namespace detail

template <class T>
class StrainLimit;

namespace detail
{
/// The data behind a handle: its chains, for the tests that check how they run.
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
    /// A handle of no stage yet: it reports an empty stage that was removed, and acting on it throws
    /// std::logic_error.
    StrainLimit() = default;
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
    const auto [max_stretch, max_compression] = detail::resolve_strain_bounds("strain limit", options.max_stretch,
                                                                              options.max_compression, T(0.1));
    detail::check_strain_limit(max_stretch, max_compression, options.passes);
    options.range.check_inside(sim.size(), "strain limit");
    options.name = detail::stage_name(sim.position_projections(), options.name,
                                      "strain_limit" +
                                          (cloth ? "@" + cloth->name() : detail::range_suffix(options.range)));
    const auto world = detail::world_of(sim);
    auto data = std::make_shared<detail::StrainLimitData<T>>();
    data->cloth = std::move(cloth);
    data->max_stretch = max_stretch;
    data->max_compression = max_compression;
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

/// Registers strain limiting as a position projection (after the stages registered before it) and
/// returns its handle. With `options.cloth` it limits the cloth's stretch springs, those along its
/// triangles' edges: on a grid every spring, on a mesh cloth all but its bend springs, which must
/// shorten for it to fold. Without, every live spring with both ends in `options.range`. Throws,
/// registering nothing, on a negative or non-finite bound, a compression bound of 1 or more,
/// passes < 1, a name registered already, a range not inside the simulation or given beside a
/// cloth, or a cloth removed (std::logic_error) or of another simulation.
template <class T>
StrainLimit<T> add_strain_limit(Simulation<T>& sim, StrainLimitOptions<T> options)
{
    if (!detail::ClothAccess::key(options.cloth))
        return detail::register_strain_limit(sim, std::move(options), std::optional<Cloth<T>>());
    const Cloth<T> cloth = options.cloth;
    detail::check_stage_cloth(sim, cloth, "strain limit");
    if (options.range.begin != 0 || options.range.end != ParticleRange::kToEnd)
        detail::raise<std::invalid_argument>("simdverlet: a strain limit on cloth '" + cloth.name() +
                                             "' limits the cloth's particles; leave its range unset");
    options.range = cloth.range();
    return detail::register_strain_limit(sim, std::move(options), std::optional<Cloth<T>>(cloth));
}

} // namespace simdverlet
