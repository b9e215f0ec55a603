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
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "cloth.hpp"
#include "constraints.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "simd.hpp"
#include "simulation.hpp"
#include "stage_state.hpp"
#include "state.hpp"
#include "triangle_contacts.hpp"

namespace simdverlet
{

/// What add_self_collision registers.
template <class T>
struct SelfCollisionOptions
{
    /// Finite and > 0, world units: the closest two particles of the range may come (twice a
    /// particle's radius), and, for the cloths listed in `cloths`, the closest a particle may come
    /// to their triangles. Only pairs joined by a spring are exempt, so above ~1.4 x spacing a
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
    std::vector<Cloth<T>> cloths = {};
    /// Finite and >= 0, Coulomb coefficient between layers: a contact's relative sliding this step
    /// is cut by at most friction x depth, in position as in velocity, so layers that should stick
    /// do not creep.
    T friction = T(0.3);
    /// Jacobi passes per step, >= 1. Each pass resolves every contact once from the positions the
    /// previous pass left; a pile of many layers separates faster with more.
    int passes = 1;
    std::string name = "self_collision"; ///< key in the position-projection registry
};

namespace detail
{
/// A dense grid over the bounding box of a range's finite positions, padded by one empty cell on
/// every side so that a query never leaves it. Cells are numbered x fastest, so the three cells of
/// a row a query needs are neighbours in the sorted order and read as one run.
template <class T>
struct DenseGrid
{
    Vec3<T> origin; ///< the corner of cell (1, 1, 1), the first inside the padding
    T inv_cell = 0; ///< 1 / cell side
    std::int64_t nx = 0, ny = 0, nz = 0;

    std::size_t cells() const noexcept { return std::size_t(nx * ny * nz); }
    std::int64_t index(std::int64_t cx, std::int64_t cy, std::int64_t cz) const noexcept
    {
        return (cz * ny + cy) * nx + cx;
    }
    /// The cell holding p, padding included.
    std::int64_t cell_of(const Vec3<T>& p) const noexcept
    {
        const Vec3<T> t = (p - origin) * inv_cell;
        return index(std::int64_t(std::floor(t.x())) + 1, std::int64_t(std::floor(t.y())) + 1,
                     std::int64_t(std::floor(t.z())) + 1);
    }
};

/// A box of a DenseGrid's cells, corners included.
struct CellBox
{
    std::int64_t x0, x1, y0, y1, z0, z1;
    std::size_t cells() const noexcept { return std::size_t((x1 - x0 + 1) * (y1 - y0 + 1) * (z1 - z0 + 1)); }
};

/// Where the drift check searches around particle k, one of the few that moved far: where it is
/// now less the centre, how far a particle touching it can be at the build (`reach`: thickness
/// plus the others' largest move), how far the search looks for the nearest unlisted one
/// (`clear_reach`, farther, so that the answer serves later checks), and the build grid's cells
/// within that.
template <class T>
struct FewSearch
{
    std::uint32_t k;
    Vec3<T> at;
    T reach, clear_reach;
    CellBox box;
};

/// What a drift-check search around a particle found: no particle it is not listed with nor
/// joined to by a spring was, at the build, nearer than `distance` to `from`, where the particle
/// was, less the centre, when searched (distance 0 before a search: it clears nothing).
template <class T>
struct Clearance
{
    Vec3<T> from = Vec3<T>::Zero();
    T distance = 0;
};

/// The candidate pairs of a range: for each particle, every particle of the range that was closer
/// than `reach` when the list was built and is not joined to it by a spring, in index order.
/// Acceleration only, never state.
template <class T>
struct CandidateList
{
    bool valid = false;
    std::size_t begin = 0, end = 0;
    T thickness = 0;                     ///< the thickness it was built for
    T margin = 0;                        ///< how far any pair may have closed before the list is stale
    std::uint64_t constraints_stamp = 0; ///< the constraints' edit stamp at the build: the pairs a
                                         ///< spring joined then are left out
    std::uint64_t builds = 0;
    std::vector<T> x, y, z;           ///< positions at the build
    std::vector<std::uint32_t> first; ///< particle k's candidates are list[first[k] .. first[k] + count[k])
    std::vector<std::uint32_t> count;
    std::vector<std::uint32_t> list;   ///< particle indices
    std::vector<std::uint32_t> active; ///< the particles (k, from begin) with candidates, in index order
    // The pass's layout, made on first use after a build (laid_out false till then):
    // every listed pair once as (pair_a[p], pair_b[p]), absolute indices, a < b, by block, then
    // b - a, then a (see order_pairs), padded with pairs a = b that are never live,
    // `pair_stride` slots in all; the push record each list entry
    // reads (pair p's push on a is record p, on b record pair_stride + p; record 2 x pair_stride
    // is all zeros); and the vector pass's lane table (see kernels::settle_pushes_vector).
    bool laid_out = false;
    std::size_t settle_block = 4096; ///< active particles per block (whole batches: rounded up; tests cut finer)
    std::size_t pair_stride = 0;
    std::vector<std::uint32_t> pair_block; ///< block j's pairs are [pair_block[j], pair_block[j + 1])
    std::vector<std::int32_t> pair_a, pair_b;
    std::vector<std::uint8_t> pair_runs; ///< per batch of pairs: 1 where both ends are consecutive
    std::vector<std::uint32_t> record;
    std::vector<std::int32_t> table;
    std::vector<std::uint8_t> row_runs; ///< per table row: 1 where its indices are consecutive
    std::vector<std::uint32_t> group_row;
    // Grid scratch: the cell of each particle, where each cell starts in the sorted order, the
    // particles sorted by cell and their positions in that order (a row of cells is then read as
    // one contiguous run).
    std::vector<std::uint32_t> particle_cell, cell_start, by_cell, sorted_cell;
    std::vector<T> sorted_x, sorted_y, sorted_z;
    DenseGrid<T> grid;         ///< the grid of the last build, which the drift check searches
    std::array<T, 3> centre{}; ///< the moves' mean at the last check: where the next measures from
    // How the stale-list check is cut for the executor: particles surveyed per block (a whole
    // number of batches), particles searched per task. Any cut gives the same answer; tests cut
    // small scenes finely to run the pieces.
    std::size_t survey_block = 8192;
    std::uint32_t search_task = 64;
    // The drift check's scratch: the particles that moved far (block by block, then packed), each
    // block's survey, and the searches it makes around the few.
    std::vector<std::uint32_t> few;
    std::vector<kernels::MoveSurvey<T>> block_surveys;
    std::vector<FewSearch<T>> searches;
    // What the drift check's last search around each particle found, kept till the next build,
    // which clears them: a later check need not search around k while k has not moved far from
    // where it was searched (no_unlisted_contact).
    std::vector<Clearance<T>> clearances;

    // lay_out_pairs' scratch: each pair once (its ends k < q, from begin, and their entries), the
    // pairs by gap, each particle's block, where the next pair goes, where its lower partners go.
    struct Pair
    {
        std::uint32_t k, q, entry_k, entry_q;
    };
    std::vector<Pair> canonical;
    std::vector<std::uint32_t> by_gap, block_of, next, lower;
    std::vector<std::vector<std::uint32_t>> chunk_lists; ///< pairs (k, q) found by each executor chunk
};

template <class T>
struct SelfCollisionData
{
    T thickness;
    T friction;
    int passes;
    ParticleRange range;
    std::string name;
    std::weak_ptr<World<T>> world;
    /// Alive while the registered pass is: the pass's closure owns it, so it expires when the pass
    /// is unregistered, by the handle or by name, or its simulation is destroyed.
    std::weak_ptr<const void> registration;
    bool enabled = true;
    int contacts = 0;
    CandidateList<T> candidates;
    std::vector<Cloth<T>> cloths;
    TriangleContacts<T> faces;
    // One pass's pushes, by record (see CandidateList::record), padded by a batch.
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

/// A grid of cells at least `cell` wide over the finite points among (x, y, z)[0, n), with at most
/// about four cells per point: a scene spread far apart gets coarser cells (more distance tests,
/// never a missed pair) rather than a grid that does not fit in memory.
template <class T>
DenseGrid<T> fit_grid(const T* x, const T* y, const T* z, std::size_t n, T cell)
{
    const T inf = std::numeric_limits<T>::infinity();
    Vec3<T> lo(inf, inf, inf), hi(-inf, -inf, -inf);
    for (std::size_t k = 0; k < n; ++k)
    {
        const Vec3<T> p(x[k], y[k], z[k]);
        if (!p.allFinite())
            continue;
        lo = lo.cwiseMin(p);
        hi = hi.cwiseMax(p);
    }
    DenseGrid<T> g;
    if (!(lo.x() <= hi.x())) // no finite point
    {
        g.origin = Vec3<T>::Zero();
        g.inv_cell = T(1);
        g.nx = g.ny = g.nz = 3;
        return g;
    }
    const Vec3<double> extent = (hi - lo).template cast<double>();
    const double most = 4.0 * double(n) + 64.0;
    double side = double(cell);
    const auto count = [&](double e) { return std::floor(e / side) + 3.0; };
    while (count(extent.x()) * count(extent.y()) * count(extent.z()) > most)
        side *= 2.0;
    g.origin = lo;
    g.inv_cell = T(1.0 / side);
    // Cells from the float arithmetic the queries use, so a point on the far edge still fits.
    const Vec3<T> far = (hi - lo) * g.inv_cell;
    g.nx = std::int64_t(std::floor(far.x())) + 3;
    g.ny = std::int64_t(std::floor(far.y())) + 3;
    g.nz = std::int64_t(std::floor(far.z())) + 3;
    return g;
}

/// The particles particle i's live slots in layer 0 (`layers[0]`) point at, -1 for a dead slot.
template <class T>
std::array<std::int32_t, kSlots> spring_partners(std::span<const ConstraintArrays<T>> layers, std::size_t i)
{
    const ConstraintArrays<T>& c = layers[0];
    std::array<std::int32_t, kSlots> out;
    for (int a = 0; a < kSlots; ++a)
        out[std::size_t(a)] = c.stiffness[a][i] > T(0) ? c.neighbour[a][i] : -1;
    return out;
}

/// Whether a live spring joins i and j, either way, in any constraint layer, given i's layer-0
/// partners: that spring keeps the pair apart, and at rest it sits a spring's length apart, which
/// may be less than the thickness. Pairs two springs apart collide like any others, which is what
/// stops a sheet folding sharper than its thickness (a mesh cloth's bend springs join the two
/// vertices across an edge, so those pairs are the springs' too). i's own slots are checked first:
/// for the symmetric springs of a cloth or a rope they decide it without reading j's.
template <class T>
bool joined_by_spring(std::span<const ConstraintArrays<T>> layers, std::size_t i,
                      const std::array<std::int32_t, kSlots>& partners_of_i, std::size_t j)
{
    const auto ii = std::int32_t(i), jj = std::int32_t(j);
    if (std::find(partners_of_i.begin(), partners_of_i.end(), jj) != partners_of_i.end())
        return true;
    const auto names = [](const ConstraintArrays<T>& c, std::size_t from, std::int32_t to) {
        if (!c.covers(from))
            return false;
        for (int a = 0; a < kSlots; ++a)
            if (c.neighbour[a][from - c.first] == to && c.stiffness[a][from - c.first] > T(0))
                return true;
        return false;
    };
    for (std::size_t k = 1; k < layers.size(); ++k)
        if (names(layers[k], i, jj))
            return true;
    for (const auto& c : layers)
        if (names(c, j, ii))
            return true;
    return false;
}

/// The cells of a grid, its padding included, that a sphere of radius `reach` around `at` touches.
template <class T>
CellBox cells_around(const DenseGrid<T>& grid, const Vec3<T>& at, T reach)
{
    const auto cell_range = [&](int axis, std::int64_t cells) {
        const T o = grid.origin[axis];
        const T lo = std::floor((at[axis] - reach - o) * grid.inv_cell) + T(1);
        const T hi = std::floor((at[axis] + reach - o) * grid.inv_cell) + T(1);
        const auto clamp = [&](T v) { return std::int64_t(std::clamp(v, T(0), T(cells - 1))); };
        return std::pair{clamp(lo), clamp(hi)};
    };
    const auto [x0, x1] = cell_range(0, grid.nx);
    const auto [y0, y1] = cell_range(1, grid.ny);
    const auto [z0, z1] = cell_range(2, grid.nz);
    return {x0, x1, y0, y1, z0, z1};
}

/// Whether particle k touches, now, a particle it is not listed with nor joined to by a spring,
/// among those the build's grid put in the search's box; on the way, how near to `at` the build
/// had the nearest of those particles, out to the clear reach, which it records as k's clearance
/// (see Clearance). Only a particle within the reach of `at` at the build can touch
/// k now (no_unlisted_contact). Touching is measured as pair_push measures it.
template <class T>
bool touches_unlisted(CandidateList<T>& list, std::span<const ConstraintArrays<T>> c, const StateArrays<T>& s,
                      const FewSearch<T>& search, T thickness)
{
    const DenseGrid<T>& grid = list.grid;
    const std::size_t begin = list.begin;
    const std::uint32_t k = search.k;
    const T h2 = thickness * thickness, reach2 = search.reach * search.reach;
    T nearest2 = search.clear_reach * search.clear_reach;
    const CellBox& box = search.box;
    const auto partners = spring_partners(c, begin + k);
    const auto listed_from = list.list.begin() + std::ptrdiff_t(list.first[k]);
    const auto listed_to = listed_from + std::ptrdiff_t(list.count[k]);
    const auto unlisted = [&](std::uint32_t q) {
        return !std::binary_search(listed_from, listed_to, std::uint32_t(begin + q)) &&
               !joined_by_spring(c, begin + k, partners, begin + q);
    };
    for (std::int64_t cz = box.z0; cz <= box.z1; ++cz)
        for (std::int64_t cy = box.y0; cy <= box.y1; ++cy)
        {
            // A row of cells is one run of the sorted order.
            const auto row = std::size_t(grid.index(box.x0, cy, cz));
            for (std::uint32_t e = list.cell_start[row]; e < list.cell_start[row + std::size_t(box.x1 - box.x0) + 1];
                 ++e)
            {
                const T bx = list.sorted_x[e] - search.at.x(), by = list.sorted_y[e] - search.at.y(),
                        bz = list.sorted_z[e] - search.at.z();
                const T built2 = bx * bx + by * by + bz * bz;
                const bool within_reach = built2 < reach2;
                if (!within_reach && !(built2 < nearest2))
                    continue;
                const std::uint32_t q = list.by_cell[e];
                if (q == k || !unlisted(q))
                    continue;
                nearest2 = std::min(nearest2, built2);
                if (!within_reach)
                    continue;
                const T rx = s.x[begin + k] - s.x[begin + q], ry = s.y[begin + k] - s.y[begin + q],
                        rz = s.z[begin + k] - s.z[begin + q];
                if (rx * rx + ry * ry + rz * rz < h2)
                    return true;
            }
        }
    list.clearances[k] = {search.at, std::sqrt(nearest2)};
    return false;
}

/// Surveys every particle's move since the build (kernels::survey_moves) from `centre`, listing
/// in list.few, in increasing order, those that moved more than half the margin from it. Blocks
/// of a fixed size go to the executor's threads and are combined in order, so the survey is the
/// same for any thread count.
template <class T>
kernels::MoveSurvey<T> survey_moves(CandidateList<T>& list, const World<T>& world, const StateArrays<T>& s,
                                    const std::array<T, 3>& centre, T limit, bool vectorized)
{
    const std::size_t block = list.survey_block;
    const std::size_t n = list.end - list.begin, blocks = (n + block - 1) / block;
    // Each block's list has room for all its particles and the vector kernel's overrun.
    const std::size_t room = block + simd::kPadLanes<T>;
    if (list.few.size() < blocks * room)
        list.few.resize(blocks * room); // scratch kept with the list: no zeroing per check
    list.block_surveys.resize(blocks);
    world.run_tasks(blocks, [&](std::size_t b) {
        const std::size_t from = b * block, count = std::min(block, n - from);
        const T *const x = s.x + list.begin + from, *const y = s.y + list.begin + from,
                       *const z = s.z + list.begin + from;
        const T *const bx = list.x.data() + from, *const by = list.y.data() + from, *const bz = list.z.data() + from;
        std::uint32_t* const out = list.few.data() + b * room;
        auto& survey = list.block_surveys[b];
        survey = vectorized ? kernels::survey_moves_vector<xsimd::default_arch>(x, y, z, bx, by, bz, count, centre,
                                                                                limit * limit, out)
                            : kernels::survey_moves(x, y, z, bx, by, bz, count, centre, limit * limit, out);
        for (std::uint32_t f = 0; f < survey.beyond; ++f)
            out[f] += std::uint32_t(from);
    });
    kernels::MoveSurvey<T> all{T(0), T(0), {T(0), T(0), T(0)}, 0};
    for (std::size_t b = 0; b < blocks; ++b)
    {
        const auto& part = list.block_surveys[b];
        kernels::rank_move(all.first, all.second, part.first);
        kernels::rank_move(all.first, all.second, part.second);
        for (std::size_t axis = 0; axis < 3; ++axis)
            all.sum[axis] += part.sum[axis];
        const auto from = list.few.begin() + std::ptrdiff_t(b * room);
        std::copy(from, from + part.beyond, list.few.begin() + all.beyond); // down, behind the blocks before
        all.beyond += part.beyond;
    }
    return all;
}

/// The survey from `centre`, worked out from the one just made from a centre `drift` away that
/// listed (in list.few) every particle farther than `listed` from it, without reading every
/// move again. A particle it did not list is within listed + drift of `centre`: when that is
/// short of half the margin, the few are all among those listed, and so are the two largest moves
/// when two of the listed lie beyond it. Then `survey` becomes, bit for bit, what survey_moves
/// from `centre` would give (its sums aside, which are the same moves'); otherwise nothing
/// changes and it returns false. A thousandth of a percent on the bound covers rounding. It also
/// returns false past a sixteenth of the particles listed, where reading them one by one, twice,
/// would cost about as much as a survey (BM_self_collision_staleness: a fifth of a scalar read)
/// and the drift check gives up anyway unless most are dropped.
template <class T>
bool narrow_survey(CandidateList<T>& list, const StateArrays<T>& s, kernels::MoveSurvey<T>& survey,
                   const std::array<T, 3>& centre, T listed, T drift)
{
    const T half = list.margin / T(2), bound = (listed + drift) * T(1.00001);
    if (!(bound < half) || survey.beyond > (list.end - list.begin) / 16)
        return false;
    const auto from_centre = [&](std::uint32_t k) {
        const std::size_t i = list.begin + k;
        return kernels::squared_from(s.x[i] - list.x[k], s.y[i] - list.y[k], s.z[i] - list.z[k], centre);
    };
    T first = 0, second = 0;
    for (std::uint32_t f = 0; f < survey.beyond; ++f)
        kernels::rank_move(first, second, from_centre(list.few[f]));
    if (!(second > bound * bound))
        return false;
    std::uint32_t kept = 0;
    for (std::uint32_t f = 0; f < survey.beyond; ++f)
    {
        const std::uint32_t k = list.few[f];
        list.few[kept] = k; // as survey_moves lists them: in order, written always, kept when past half
        kept += from_centre(k) > half * half ? 1u : 0u;
    }
    survey.first = first;
    survey.second = second;
    survey.beyond = kept;
    return true;
}

/// The drift check, for when the margin test fails: most often a few particles moved more than
/// half the margin from the centre (a flapping corner in a settling pile; measured on
/// BM_self_collision's pile, 2 to 500 of 65 536 when the margin test failed, and 1 time in 23
/// one of them touched a particle it was not listed with). Pairs of the others cannot have closed
/// by the margin, so only pairs with one of the few can be missing: around where each of those is
/// now (less the centre), the build's grid is searched out to the thickness plus the largest move
/// from the centre, and any particle found touching it, not listed with it and not joined to it
/// by a spring, makes the list stale. Gives up (stale) past a sixteenth of the particles (a
/// sixteenth rather than a sixty-fourth took the builds from 0.68 to 0.63 a frame), or past as
/// many cells to search as particles, where a rebuild costs less than the search. That is decided
/// before searching, and the few are then searched on the executor's threads: the same answer
/// for any thread count.
///
/// Most of the few are the same particles check after check (on that pile 86 % were among the
/// previous search's, in a scratch probe), so a search also records how far the nearest particle
/// that could ever touch k lay (looking half a margin further out than it must), and a later
/// check skips k while that still clears it. The cells to search are counted for every one of
/// the few, skipped or not: what earlier searches found changes what a check costs, never what it
/// answers.
template <class T>
bool no_unlisted_contact(CandidateList<T>& list, const World<T>& world, const StateArrays<T>& s,
                         const kernels::MoveSurvey<T>& survey, const std::array<T, 3>& centre, T thickness)
{
    const std::size_t n = list.end - list.begin;
    if (survey.beyond > n / 16)
        return false;
    list.searches.clear();
    std::size_t cells = 0;
    for (std::uint32_t f = 0; f < survey.beyond; ++f)
    {
        const std::uint32_t k = list.few[f];
        const std::size_t i = list.begin + k;
        // A particle q touching k now was, at the build, within thickness + q's move of where k
        // is now less the centre: |X_q - (x_k - c)| <= |x_q - x_k| + |m_q - c|. q's move is at
        // most the largest, or the second largest when k's own is the largest (a lone fast
        // particle then searches around itself only as far as the others moved). A hundredth of
        // a percent wider, so that rounding cannot leave out a cell at the edge.
        const T own = kernels::squared_from(s.x[i] - list.x[k], s.y[i] - list.y[k], s.z[i] - list.z[k], centre);
        const T others = std::sqrt(own == survey.first ? survey.second : survey.first);
        const T reach = (thickness + others) * T(1.0001);
        const Vec3<T> at(s.x[i] - centre[0], s.y[i] - centre[1], s.z[i] - centre[2]);
        cells += cells_around(list.grid, at, reach).cells();
        if (cells > n)
            return false;
        // An earlier search found no unlisted particle nearer than the clearance to where k was
        // then, so none is nearer to where k is now than that less how far k has moved since.
        const Clearance<T>& found = list.clearances[k];
        if ((thickness + others + (at - found.from).norm()) * T(1.0001) <= found.distance)
            continue;
        const T clear_reach = (thickness + others + list.margin / T(2)) * T(1.0001);
        list.searches.push_back({k, at, reach, clear_reach, cells_around(list.grid, at, clear_reach)});
    }
    const std::uint32_t task = list.search_task, searches = std::uint32_t(list.searches.size());
    const auto views = world.constraint_layers().views();
    const std::span<const ConstraintArrays<T>> c(views);
    std::atomic<bool> touched{false};
    world.run_tasks((searches + task - 1) / task, [&](std::size_t t) {
        for (std::uint32_t f = std::uint32_t(t) * task; f < std::min(searches, std::uint32_t(t + 1) * task); ++f)
        {
            if (touched.load(std::memory_order_relaxed))
                return;
            if (touches_unlisted(list, c, s, list.searches[f], thickness))
                touched.store(true, std::memory_order_relaxed);
        }
    });
    return !touched.load();
}

/// Whether the list still holds every pair of [begin, end) that is closer than `thickness` and not
/// joined by a spring: built for this range, thickness and these constraints (a tear or a new
/// spring changes which pairs are exempt), and either the two particles that moved farthest from
/// a centre since moved less than the margin together (a pair's distance changes by at most
/// |m_i - m_j| <= |m_i - c| + |m_j - c| for any c, so no pair has closed by more), or the few
/// that moved more than half the margin touch no particle they are not listed with
/// (no_unlisted_contact). The list then changes nothing but speed: a pass sums a particle's
/// contacts over its list in index order, and a listed pair that does not touch adds nothing.
///
/// Any centre will do, so the moves are measured from their mean at the last check, which costs
/// one read of the moves when it still fits (a pile settling, a sheet in steady flight); when the
/// test fails, once more from their mean now: a sheet travelling as a whole (a cape on a running
/// character) then counts as still, and one fast particle does not make every other look fast
/// as it would from the centre of the moves' box. That second survey is most often worked out
/// from the first without reading the moves again (narrow_survey): the first lists the particles
/// a sixteenth of the margin short of half of it, and the mean moves less than half of that
/// between checks on a settling pile (a scratch probe on BM_self_collision's pile: at most 0.0011,
/// against a margin of 0.125). A fresh read is made only when it moved further.
template <class T>
bool list_is_current(CandidateList<T>& list, const World<T>& world, const StateArrays<T>& s, std::size_t begin,
                     std::size_t end, T thickness, bool vectorized, bool search_few = true)
{
    if (!list.valid || list.begin != begin || list.end != end || list.thickness != thickness ||
        list.constraints_stamp != world.constraint_layers().edit_stamp())
        return false;
    const auto n = T(end - begin);
    const auto fits = [&](const kernels::MoveSurvey<T>& survey) {
        return std::sqrt(survey.first) + std::sqrt(survey.second) <= list.margin;
    };
    const auto finite = [](const kernels::MoveSurvey<T>& survey) {
        return std::isfinite(survey.sum[0]) && std::isfinite(survey.sum[1]) && std::isfinite(survey.sum[2]);
    };
    const T half = list.margin / T(2), listed = half - list.margin / T(16);
    const std::array<T, 3> centre = list.centre;
    auto survey = survey_moves(list, world, s, centre, listed, vectorized);
    if (!finite(survey))
        return false;
    const std::array<T, 3> mean{survey.sum[0] / n, survey.sum[1] / n, survey.sum[2] / n};
    list.centre = mean;
    if (fits(survey))
        return true;
    const T drift = std::sqrt(kernels::squared_from(mean[0], mean[1], mean[2], centre));
    if (!narrow_survey(list, s, survey, mean, listed, drift))
        survey = survey_moves(list, world, s, mean, half, vectorized);
    if (fits(survey))
        return true;
    return search_few && no_unlisted_contact(list, world, s, survey, mean, thickness);
}

/// How far ahead the list looks: a quarter of the thickness. Measured on BM_self_collision's pile
/// (docs/performance.md): the candidates barely grow from a twentieth of the thickness to a
/// quarter, where the builds fall from 0.55 to 0.13 a frame; at four tenths a layer's diagonal
/// neighbours in the next layer come within reach and a pass costs a fifth more.
template <class T>
T list_margin(T thickness)
{
    return thickness / T(4);
}

/// Only particles with candidates can be moved by a pass: the pass visits those alone, in index
/// order (neighbours along a sheet or a rope then share cache lines).
template <class T>
void list_active(CandidateList<T>& list)
{
    list.active.clear();
    for (std::size_t k = 0; k < list.count.size(); ++k)
        if (list.count[k] > 0)
            list.active.push_back(std::uint32_t(k));
}

/// Rebuilds the candidate list of [begin, end) for a reach of thickness + margin: a counting sort
/// of the particles by grid cell (cells the size of the reach), a search that finds each pair
/// within reach once, and a counting sort of the pairs into per-particle lists sorted by index.
template <class T>
void build_candidates(CandidateList<T>& list, const World<T>& world, const StateArrays<T>& s, std::size_t begin,
                      std::size_t end, T thickness, T margin)
{
    const std::size_t n = end - begin;
    const auto views = world.constraint_layers().views();
    const std::span<const ConstraintArrays<T>> c(views);
    // Cells at least the reach: everything within reach of a particle lies in its own cell and the
    // 26 around it.
    const T reach = thickness + margin, reach2 = reach * reach;
    list.x.assign(s.x + begin, s.x + end);
    list.y.assign(s.y + begin, s.y + end);
    list.z.assign(s.z + begin, s.z + end);
    list.grid = fit_grid(list.x.data(), list.y.data(), list.z.data(), n, reach);
    const DenseGrid<T>& grid = list.grid;
    // Non-finite particles go to one extra cell past the grid that no query visits.
    const std::size_t cells = grid.cells();
    list.particle_cell.resize(n);
    list.cell_start.assign(cells + 2, 0);
    for (std::size_t k = 0; k < n; ++k)
    {
        const Vec3<T> p(list.x[k], list.y[k], list.z[k]);
        const auto cell = p.allFinite() ? std::uint32_t(grid.cell_of(p)) : std::uint32_t(cells);
        list.particle_cell[k] = cell;
        ++list.cell_start[cell + 1];
    }
    for (std::size_t b = 1; b < list.cell_start.size(); ++b)
        list.cell_start[b] += list.cell_start[b - 1];
    list.by_cell.resize(n);
    list.sorted_cell.resize(n);
    // Padded by a padding block: the vector search reads a batch past a run's end.
    list.sorted_x.assign(n + simd::kPadLanes<T>, T(0));
    list.sorted_y.assign(n + simd::kPadLanes<T>, T(0));
    list.sorted_z.assign(n + simd::kPadLanes<T>, T(0));
    {
        std::vector<std::uint32_t> fill(list.cell_start.begin(), list.cell_start.end() - 1);
        for (std::size_t k = 0; k < n; ++k)
        {
            const std::uint32_t at = fill[list.particle_cell[k]]++;
            list.by_cell[at] = std::uint32_t(k);
            list.sorted_cell[at] = list.particle_cell[k];
            list.sorted_x[at] = list.x[k];
            list.sorted_y[at] = list.y[k];
            list.sorted_z[at] = list.z[k];
        }
    }
    const std::uint32_t* const starts = list.cell_start.data();
    const std::uint32_t* const members = list.by_cell.data();
    const T *const sx = list.sorted_x.data(), *const sy = list.sorted_y.data(), *const sz = list.sorted_z.data();
    const bool vectorized = world.vectorized();

    // Find each pair once: a particle looks at the particles after it in its own cell and in the
    // 13 neighbouring cells that come after its cell in the grid's order (x + 1; the row y + 1;
    // the three rows at z + 1), five runs of the sorted arrays. Chunks of the executor collect
    // their own pairs, which are read in chunk order below, so the split changes nothing.
    list.chunk_lists.resize(world.chunk_count(n));
    world.for_each_indexed_chunk(0, n, [&](std::size_t chunk, std::size_t chunk_begin, std::size_t chunk_end) {
        auto& pairs = list.chunk_lists[chunk];
        pairs.clear();
        std::vector<std::uint32_t> hits; // places in the sorted arrays within reach; grows, never shrinks
        // The four rows of later neighbour cells, shared by every particle of a cell: found once
        // per cell.
        std::size_t cell = cells;
        std::uint32_t rows[4][2] = {}, own_end = 0;
        for (std::size_t e0 = chunk_begin; e0 < chunk_end; ++e0)
        {
            const std::uint32_t at = list.sorted_cell[e0];
            if (at == cells) // the non-finite particles, sorted last: no pairs
                break;
            if (at != cell)
            {
                cell = at;
                const auto cx = std::int64_t(cell % std::size_t(grid.nx));
                const auto cy = std::int64_t(cell / std::size_t(grid.nx) % std::size_t(grid.ny));
                const auto cz = std::int64_t(cell / std::size_t(grid.nx * grid.ny));
                const std::int64_t row_y[4] = {cy + 1, cy - 1, cy, cy + 1}, row_z[4] = {cz, cz + 1, cz + 1, cz + 1};
                for (int r = 0; r < 4; ++r)
                {
                    const auto row_start = std::size_t(grid.index(cx - 1, row_y[r], row_z[r]));
                    rows[r][0] = starts[row_start];
                    rows[r][1] = starts[row_start + 3];
                }
                own_end = starts[cell + 2];
            }
            const std::uint32_t k = members[e0];
            const Vec3<T> p(sx[e0], sy[e0], sz[e0]);
            const std::uint32_t runs[5][2] = {{std::uint32_t(e0 + 1), own_end},
                                              {rows[0][0], rows[0][1]},
                                              {rows[1][0], rows[1][1]},
                                              {rows[2][0], rows[2][1]},
                                              {rows[3][0], rows[3][1]}};
            std::size_t most = 0;
            for (const auto& run : runs)
                most += run[1] - run[0];
            if (hits.size() < most + 16) // within_reach_vector may write 16 past its last hit
                hits.resize(2 * (most + 16));
            std::uint32_t found = 0;
            for (const auto& run : runs)
                found += vectorized
                             ? kernels::within_reach_vector<xsimd::default_arch>(sx, sy, sz, run[0], run[1], p, reach2,
                                                                                 hits.data() + found)
                             : kernels::within_reach_scalar(sx, sy, sz, run[0], run[1], p, reach2, hits.data() + found);
            // Pairs a spring joins are left to the spring; the list is rebuilt when springs change.
            const auto partners = spring_partners(c, begin + k);
            for (std::uint32_t f = 0; f < found; ++f)
            {
                const std::uint32_t q = members[hits[f]];
                if (!joined_by_spring(c, begin + k, partners, begin + q))
                {
                    pairs.push_back(k);
                    pairs.push_back(q);
                }
            }
        }
    });

    // Both directions of every pair into per-particle lists (a counting sort by particle), then
    // each list sorted by index: the order a particle sums its contacts in is then canonical,
    // whatever the grid or the split.
    list.count.assign(n, 0);
    for (const auto& pairs : list.chunk_lists)
        for (std::size_t f = 0; f < pairs.size(); f += 2)
        {
            ++list.count[pairs[f]];
            ++list.count[pairs[f + 1]];
        }
    list.first.resize(n);
    std::size_t total = 0;
    for (std::size_t k = 0; k < n; ++k)
    {
        list.first[k] = std::uint32_t(total);
        total += list.count[k];
    }
    list.list.resize(total);
    {
        std::vector<std::uint32_t> fill(list.first);
        for (const auto& pairs : list.chunk_lists)
            for (std::size_t f = 0; f < pairs.size(); f += 2)
            {
                list.list[fill[pairs[f]]++] = std::uint32_t(begin) + pairs[f + 1];
                list.list[fill[pairs[f + 1]]++] = std::uint32_t(begin) + pairs[f];
            }
    }
    world.for_each_chunk(n, [&](std::size_t chunk_begin, std::size_t chunk_end) {
        for (std::size_t k = chunk_begin; k < chunk_end; ++k)
        {
            const auto from = list.list.begin() + std::ptrdiff_t(list.first[k]);
            std::sort(from, from + std::ptrdiff_t(list.count[k]));
        }
    });
    list_active(list);
    list.clearances.assign(n, Clearance<T>{});

    list.laid_out = false;
    list.centre = {T(0), T(0), T(0)};
    list.valid = true;
    list.begin = begin;
    list.end = end;
    list.thickness = thickness;
    list.margin = margin;
    list.constraints_stamp = world.constraint_layers().edit_stamp();
    ++list.builds;
}

/// Whether `lanes` indices from `first` are consecutive: a batch a vector sweep loads whole.
inline bool consecutive(const std::int32_t* first, std::size_t lanes)
{
    for (std::size_t l = 1; l < lanes; ++l)
        if (first[l] != first[0] + std::int32_t(l))
            return false;
    return true;
}

/// Lays the list's pairs out for a pass. The active particles are cut into blocks of
/// `settle_block` (rounded up to whole batches, so that a lane group never straddles two); the
/// pairs go by the block of their lower end, then by the gap between their indices, then by the
/// lower index (two stable counting sorts): along a fold a row of one layer meets a row of the
/// next at one gap, so batches of pairs have both ends consecutive and a vector sweep loads them
/// whole, and a serial pass can settle a block's particles right after evaluating its pairs
/// (resolve_pass). Each block's pairs are padded to a whole batch with pairs of a particle with
/// itself, which are never live. Writes the record each list entry reads, and marks the batches
/// whose ends are both consecutive as runs.
template <class T>
void order_pairs(CandidateList<T>& list, std::size_t lanes)
{
    const std::size_t n = list.count.size();
    const auto begin = std::uint32_t(list.begin);
    const auto& active = list.active;
    list.settle_block = (list.settle_block + lanes - 1) / lanes * lanes;
    const std::size_t blocks = std::max<std::size_t>(1, (active.size() + list.settle_block - 1) / list.settle_block);
    std::vector<std::uint32_t>& block_of = list.block_of;
    block_of.resize(n);
    for (std::size_t j = 0; j < blocks; ++j)
        for (std::size_t a = j * list.settle_block; a < std::min(active.size(), (j + 1) * list.settle_block); ++a)
            block_of[active[a]] = std::uint32_t(j);
    // Every pair once, lower end first, in the lists' order: its ends and its two entries. A
    // particle's entries for its lower partners come first in its list, in the order those
    // partners are reached here: `lower` is where the next one goes.
    const std::size_t pair_count = list.list.size() / 2; // every pair is listed from both ends
    auto& pairs = list.canonical;
    pairs.resize(pair_count);
    std::vector<std::uint32_t>& lower = list.lower;
    lower.assign(list.first.begin(), list.first.end());
    std::size_t c = 0;
    for (std::uint32_t k = 0; k < n; ++k)
        for (std::uint32_t e = list.first[k]; e < list.first[k] + list.count[k]; ++e)
            if (const std::uint32_t q = list.list[e] - begin; q > k)
                pairs[c++] = {k, q, e, lower[q]++};
    // By the gap (stable: the lower ends stay in order) into `by_gap`, then by block.
    std::vector<std::uint32_t>& next = list.next;
    next.assign(n + 1, 0);
    list.pair_block.assign(blocks + 1, 0);
    for (const auto& pair : pairs)
    {
        ++next[pair.q - pair.k];
        ++list.pair_block[block_of[pair.k] + 1];
    }
    for (std::uint32_t gap = 0, at = 0; gap <= n; ++gap)
        at += std::exchange(next[gap], at);
    std::vector<std::uint32_t>& by_gap = list.by_gap;
    by_gap.resize(pair_count);
    for (std::uint32_t i = 0; i < pair_count; ++i)
        by_gap[next[pairs[i].q - pairs[i].k]++] = i;
    // Each block's pairs start a whole batch after the last block's.
    for (std::size_t j = 1; j <= blocks; ++j)
        list.pair_block[j] = list.pair_block[j - 1] + std::uint32_t((list.pair_block[j] + lanes - 1) / lanes * lanes);
    list.pair_stride = simd::padded_count<T>(list.pair_block[blocks]);
    list.pair_a.assign(list.pair_stride + simd::kPadLanes<T>, std::int32_t(begin));
    list.pair_b.assign(list.pair_stride + simd::kPadLanes<T>, std::int32_t(begin));
    list.record.resize(list.list.size());
    next.assign(list.pair_block.begin(), list.pair_block.end() - 1);
    for (const std::uint32_t i : by_gap)
    {
        const auto& pair = pairs[i];
        const std::uint32_t p = next[block_of[pair.k]]++;
        list.pair_a[p] = std::int32_t(begin + pair.k);
        list.pair_b[p] = std::int32_t(begin + pair.q);
        list.record[pair.entry_k] = p;
        list.record[pair.entry_q] = std::uint32_t(list.pair_stride + p);
    }
    list.pair_runs.assign(list.pair_stride / lanes, 0);
    for (std::size_t p = 0; p + lanes <= list.pair_stride; p += lanes)
        list.pair_runs[p / lanes] = consecutive(&list.pair_a[p], lanes) && consecutive(&list.pair_b[p], lanes);
}

/// Lays the active particles out for a vector pass of `lanes` lanes (see
/// kernels::settle_pushes_vector): in groups of `lanes`, each group a row of the lanes' own
/// indices and then one row per step of its longest list, the records its entries read (lanes
/// past the last active particle repeat the group's first, with no records); rows whose indices
/// are consecutive are marked as runs.
template <class T>
void lay_out_groups(CandidateList<T>& list, std::size_t lanes)
{
    const auto begin = std::uint32_t(list.begin);
    const auto& active = list.active;
    const auto none = std::int32_t(2 * list.pair_stride);
    const std::size_t groups = (active.size() + lanes - 1) / lanes;
    list.group_row.resize(groups + 1);
    std::size_t rows = 0;
    for (std::size_t g = 0; g < groups; ++g)
    {
        list.group_row[g] = std::uint32_t(rows);
        std::uint32_t longest = 0;
        for (std::size_t a = g * lanes; a < std::min(active.size(), (g + 1) * lanes); ++a)
            longest = std::max(longest, list.count[active[a]]);
        rows += 1 + longest;
    }
    list.group_row[groups] = std::uint32_t(rows);
    list.table.resize(rows * lanes);
    for (std::size_t g = 0; g < groups; ++g)
    {
        std::int32_t* const rows_of_group = list.table.data() + std::size_t(list.group_row[g]) * lanes;
        const std::size_t steps = list.group_row[g + 1] - list.group_row[g] - 1;
        for (std::size_t l = 0; l < lanes; ++l)
        {
            const std::size_t a = g * lanes + l;
            const std::uint32_t k = active[a < active.size() ? a : g * lanes];
            const std::uint32_t count = a < active.size() ? list.count[k] : 0;
            rows_of_group[l] = std::int32_t(begin + k);
            for (std::size_t m = 0; m < steps; ++m)
                rows_of_group[(m + 1) * lanes + l] = m < count ? std::int32_t(list.record[list.first[k] + m]) : none;
        }
    }
    list.row_runs.resize(rows);
    for (std::size_t r = 0; r < rows; ++r)
        list.row_runs[r] = consecutive(&list.table[r * lanes], lanes);
}

/// Lays the list out for a pass (see CandidateList::laid_out): its pairs, then its particles.
template <class T>
void lay_out_pairs(CandidateList<T>& list, std::size_t lanes)
{
    order_pairs(list, lanes);
    lay_out_groups(list, lanes);
    list.laid_out = true;
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
    const std::size_t stride = d.candidates.pair_stride;
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
    const std::size_t stride = list.pair_stride;
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
        kernels::for_each_pair_vector<xsimd::default_arch>(s, list.pair_a.data(), list.pair_b.data(),
                                                           list.pair_runs.data(), p_begin, p_end, evaluate);
    else
        kernels::for_each_pair_scalar(s, list.pair_a.data(), list.pair_b.data(), p_begin, p_end, evaluate);
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
        kernels::settle_pushes_vector<xsimd::default_arch>(s, pushes, list.table.data(), list.row_runs.data(),
                                                           list.group_row.data(), a_begin / lanes,
                                                           (a_end + lanes - 1) / lanes, list.active.size(), settle);
    else
        kernels::settle_pushes_scalar(s, pushes, list.active.data(), a_begin, a_end, list.begin, list.first.data(),
                                      list.count.data(), list.record.data(), settle);
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
    if (!list.laid_out)
        lay_out_pairs(list, simd::kLanes<T>);
    prepare_pushes(d);
    const StateArrays<T> seen = as_contacts_see(d, s);
    const std::size_t active = list.active.size();
    if (world.chunk_count(list.pair_stride) == 1 && world.chunk_count(active) == 1)
    {
        T found = 0;
        for (std::size_t j = 0; j + 1 < list.pair_block.size(); ++j)
        {
            found += evaluate_pair_range(d, world, seen, list.pair_block[j], list.pair_block[j + 1]);
            settle_range(d, world, s, std::min(active, j * list.settle_block),
                         std::min(active, (j + 1) * list.settle_block));
        }
        return int(found);
    }
    std::atomic<int> contacts{0};
    world.for_each_chunk(list.pair_stride, [&](std::size_t chunk_begin, std::size_t chunk_end) {
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

/// The registered stage: refresh the candidate list when stale, then resolve, each pass the
/// particle pairs and then the point-triangle contacts. With triangles the list must be current
/// by the moves alone: the search around the few that moved far looks for particles, not for
/// triangles, so it cannot vouch for the triangle contacts.
template <class T>
void collide_self(SelfCollisionData<T>& d, const World<T>& world, State3<T>& state)
{
    d.contacts = 0;
    const auto bounds = d.range.resolve(state.size());
    const std::size_t begin = bounds.first, end = bounds.second;
    if (!d.enabled || end - begin < 2)
        return;
    const auto s = state.arrays_view();
    const bool faces = !d.cloths.empty();
    d.holds = false;
    if (faces)
        mark_held(d, world, s, begin, end);
    for (int pass = 0; pass < d.passes; ++pass)
    {
        if (!list_is_current(d.candidates, world, s, begin, end, d.thickness, world.vectorized(), !faces))
        {
            const T margin = list_margin(d.thickness);
            build_candidates(d.candidates, world, s, begin, end, d.thickness, margin);
            if (faces)
            {
                collect_triangles(d.faces, std::span<const Cloth<T>>(d.cloths), world.constraint_layers(), begin, end);
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

/// Live handle of a registered self-collision pass.
template <class T>
class SelfCollision
{
  public:
    /// Contacts found by the last pass of the last step: pairs of particles closer than the
    /// thickness (a pair counts once), and particles within it of a listed cloth's triangle.
    int contacts() const noexcept { return m_data->contacts; }

    T thickness() const noexcept { return m_data->thickness; }
    /// Throws std::invalid_argument, changing nothing, unless finite and > 0. Every setter throws
    /// std::logic_error once the pass is unregistered or its simulation is gone: it would write
    /// into settings no pass reads.
    void set_thickness(T thickness)
    {
        check_registered();
        detail::check_self_collision(thickness, m_data->friction, m_data->passes);
        m_data->thickness = thickness;
    }

    T friction() const noexcept { return m_data->friction; }
    /// Throws std::invalid_argument, changing nothing, unless finite and >= 0.
    void set_friction(T friction)
    {
        check_registered();
        detail::check_self_collision(m_data->thickness, friction, m_data->passes);
        m_data->friction = friction;
    }

    /// Off skips the pass without unregistering it.
    bool enabled() const noexcept { return m_data->enabled; }
    void set_enabled(bool on)
    {
        check_registered();
        m_data->enabled = on;
    }

    /// How many times the candidate list has been rebuilt: a measure of how well it is reused.
    std::uint64_t rebuilds() const noexcept { return m_data->candidates.builds; }
    /// Entries in the current candidate list (a pair appears once from each side): what a pass
    /// tests. Grows with the square of thickness + margin on a sheet, with its cube in a heap.
    std::size_t candidates() const noexcept { return m_data->candidates.list.size(); }

    /// Unregisters the pass; returns whether it was registered. Throws std::logic_error when the
    /// simulation is gone.
    bool remove()
    {
        return detail::lock_world(m_data->world, "self-collision '" + m_data->name + "'")
            ->remove_position_projection(m_data->name);
    }

  private:
    template <class U>
    friend SelfCollision<U> add_self_collision(Simulation<U>& sim, SelfCollisionOptions<U> options);
    template <class U>
    friend std::shared_ptr<detail::SelfCollisionData<U>> detail::self_collision_data(const SelfCollision<U>& handle);
    explicit SelfCollision(std::shared_ptr<detail::SelfCollisionData<T>> data) : m_data(std::move(data)) {}

    void check_registered() const
    {
        const std::string what = "self-collision '" + m_data->name + "'";
        detail::lock_world(m_data->world, what);
        if (m_data->registration.expired())
            detail::raise<std::logic_error>("simdverlet: " + what + " was removed");
    }

    std::shared_ptr<detail::SelfCollisionData<T>> m_data;
};

template <class T>
std::shared_ptr<detail::SelfCollisionData<T>> detail::self_collision_data(const SelfCollision<T>& handle)
{
    return handle.m_data;
}

/// Registers self-collision as a position projection, after the stages registered before it
/// (colliders registered after it get the last word), and returns its handle. Throws, registering
/// nothing, on a thickness that is not finite and > 0, a negative or non-finite friction, passes
/// < 1, an empty name, a range that is not inside the simulation, or a listed cloth of another
/// simulation (std::invalid_argument) or one removed (std::logic_error).
template <class T>
SelfCollision<T> add_self_collision(Simulation<T>& sim, SelfCollisionOptions<T> options)
{
    detail::check_self_collision(options.thickness, options.friction, options.passes);
    options.range.check_inside(sim.size(), "self-collision");
    if (options.name.empty())
        detail::raise<std::invalid_argument>("simdverlet: self-collision needs a non-empty name");
    for (const Cloth<T>& cloth : options.cloths)
    {
        if (!cloth.belongs_to(sim))
            detail::raise<std::invalid_argument>("simdverlet: self-collision cloth '" + cloth.name() +
                                                 "' is not in this simulation");
        if (cloth.removed())
            detail::raise<std::logic_error>("simdverlet: self-collision cloth '" + cloth.name() + "' was removed");
    }
    const auto world = detail::world_of(sim);
    auto data = std::make_shared<detail::SelfCollisionData<T>>();
    data->thickness = options.thickness;
    data->friction = options.friction;
    data->passes = options.passes;
    data->range = options.range;
    data->cloths = std::move(options.cloths);
    data->name = options.name;
    data->world = world;
    auto registration = std::make_shared<const int>(0);
    data->registration = registration;
    sim.add_stage_state(options.name, detail::self_collision_state(data));
    sim.add_position_projection(options.name, [data, w = world.get(), registration](State3<T>& state, T) {
        static_cast<void>(registration); // owned here: see registration
        detail::collide_self(*data, *w, state);
    });
    return SelfCollision<T>(std::move(data));
}

} // namespace simdverlet
