// Self-collision's candidate list: every pair of a range closer than thickness + margin (the
// reach) when it was built, found once through a dense grid (cells the size of the reach,
// counting sort by cell, O(n)), each particle's candidates in index order; and the layout a pass
// reads it in (every pair once, by block, with the lane table of the vector settle). Acceleration
// only: a step gives the same bits from a fresh list or an old one.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/self_collision.hpp"

namespace simdverlet::detail
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

/// Where the drift check searches around particle k, one of the far movers (the particles that
/// moved far since the build): where it is now less the centre, how far a particle touching it can
/// be at the build (`reach`: thickness plus the others' largest move), how far the search looks
/// for the nearest unlisted one (`clear_reach`, farther, so that the answer serves later checks),
/// and the build grid's cells within that.
template <class T>
struct FarMoverSearch
{
    std::uint32_t k;
    Vec3<T> at;
    T reach, clear_reach;
    CellBox box;
};

/// What a drift-check search around a particle found: no particle it is not listed with nor
/// joined to by a spring was, at the build, nearer than `radius` to `from`, where the particle
/// was, less the centre, when searched (radius 0 before a search: it clears nothing).
template <class T>
struct ClearZone
{
    Vec3<T> from = Vec3<T>::Zero();
    T radius = 0;
};

/// The pass's layout of a candidate list, made on first use after a build (`ready` false till
/// then): every listed pair once as (pair_a[p], pair_b[p]), absolute indices, a < b, by block,
/// then b - a, then a (see order_pairs), padded with pairs a = b that are never live,
/// `pair_stride` slots in all; the push record each list entry reads (pair p's push on a is
/// record p, on b record pair_stride + p; record 2 x pair_stride is all zeros); and the vector
/// pass's lane table (see kernels::settle_pushes_vector).
struct PassLayout
{
    bool ready = false;
    std::size_t settle_block = 4096; ///< active particles per block (whole batches: rounded up; tests cut finer)
    std::size_t pair_stride = 0;
    std::vector<std::uint32_t> pair_block; ///< block j's pairs are [pair_block[j], pair_block[j + 1])
    std::vector<std::int32_t> pair_a, pair_b;
    std::vector<std::uint8_t> pair_runs; ///< per batch of pairs: 1 where both ends are consecutive
    std::vector<std::uint32_t> record;
    std::vector<std::int32_t> lane_table;
    std::vector<std::uint8_t> row_runs; ///< per lane-table row: 1 where its indices are consecutive
    std::vector<std::uint32_t> group_row;
};

/// The build's grid: the cell of each particle, where each cell starts in the sorted order, the
/// particles sorted by cell and their positions in that order (a row of cells is then read as one
/// contiguous run), and the grid itself, which the drift check searches.
template <class T>
struct CellSort
{
    std::vector<std::uint32_t> particle_cell, cell_start, by_cell, sorted_cell;
    std::vector<T> sorted_x, sorted_y, sorted_z;
    DenseGrid<T> grid;
};

/// The stale-list check's state and scratch: the moves' mean at the last check (where the next
/// measures from); how the check is cut for the executor (particles surveyed per block, a whole
/// number of batches; particles searched per task: any cut gives the same answer, and tests cut
/// small scenes finely to run the pieces); the far movers (block by block, then packed), each
/// block's survey and the searches around the far movers; and what the last search around each
/// particle found, kept till the next build, which clears them: a later check need not search
/// around k while k has not moved far from where it was searched (no_unlisted_contact).
template <class T>
struct DriftCheck
{
    std::array<T, 3> centre{};
    std::size_t survey_block = 8192;
    std::uint32_t search_task = 64;
    std::vector<std::uint32_t> far_movers;
    std::vector<kernels::MoveSurvey<T>> block_surveys;
    std::vector<FarMoverSearch<T>> searches;
    std::vector<ClearZone<T>> clear_zones;
};

/// lay_out_pairs' and the build's scratch: each pair once (its ends k < q, from begin, and their
/// entries), the pairs by gap, each particle's block, where the next pair goes, where its lower
/// partners go, and the pairs (k, q) each executor chunk of the build found.
struct LayoutScratch
{
    struct Pair
    {
        std::uint32_t k, q, entry_k, entry_q;
    };
    std::vector<Pair> canonical;
    std::vector<std::uint32_t> by_gap, block_of, next, lower;
    std::vector<std::vector<std::uint32_t>> chunk_lists;
};

/// The candidate pairs of a range: for each particle, every particle of the range that was closer
/// than `reach` when the list was built and is not joined to it by a spring, in index order.
/// Acceleration only, never state.
/// The pairs an implicit cloth solve holds together (a material cloth's edges, cloth_solve.hpp):
/// left out of self-collision like the pairs a spring joins, and for the same reason, since the
/// solve keeps them apart and at rest they sit an edge apart, which may be less than the thickness.
/// Each particle's partners, sorted, as absolute indices; empty when the stage lists no such cloth.
struct SolveBonds
{
    std::size_t begin = 0;
    std::vector<std::uint32_t> first; ///< particle begin + k's partners: partners[first[k] .. first[k + 1])
    std::vector<std::int32_t> partners;

    bool joins(std::size_t i, std::size_t j) const noexcept
    {
        if (i < begin || i - begin + 1 >= first.size())
            return false;
        const auto from = partners.begin() + std::ptrdiff_t(first[i - begin]);
        const auto to = partners.begin() + std::ptrdiff_t(first[i - begin + 1]);
        return std::binary_search(from, to, std::int32_t(j));
    }

    /// Both ends of each (a, b) in [begin, end), from a list of pairs; the rest are dropped.
    void assign(std::size_t range_begin, std::size_t range_end, const std::vector<std::array<std::int32_t, 2>>& pairs)
    {
        begin = range_begin;
        const std::size_t n = range_end - range_begin;
        const auto inside = [&](std::int32_t i) { return std::size_t(i) >= range_begin && std::size_t(i) < range_end; };
        first.assign(pairs.empty() ? 0 : n + 1, 0);
        partners.clear();
        if (pairs.empty())
            return;
        for (const auto& [a, b] : pairs)
            if (inside(a) && inside(b))
            {
                ++first[std::size_t(a) - range_begin + 1];
                ++first[std::size_t(b) - range_begin + 1];
            }
        for (std::size_t k = 0; k < n; ++k)
            first[k + 1] += first[k];
        partners.resize(first[n]);
        std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
        for (const auto& [a, b] : pairs)
            if (inside(a) && inside(b))
            {
                partners[fill[std::size_t(a) - range_begin]++] = b;
                partners[fill[std::size_t(b) - range_begin]++] = a;
            }
        for (std::size_t k = 0; k < n; ++k)
            std::sort(partners.begin() + std::ptrdiff_t(first[k]), partners.begin() + std::ptrdiff_t(first[k + 1]));
    }
};

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
    std::vector<T> built_x, built_y, built_z; ///< positions at the build
    std::vector<std::uint32_t> first;         ///< particle k's candidates are partners[first[k] .. first[k] + count[k])
    std::vector<std::uint32_t> count;
    std::vector<std::uint32_t> partners; ///< particle indices, from begin
    std::vector<std::uint32_t> active;   ///< the particles (k, from begin) with candidates, in index order
    SolveBonds bonds;                    ///< set by the stage before a build; exempt like springs
    PassLayout layout;
    CellSort<T> cells;
    DriftCheck<T> drift;
    LayoutScratch scratch;
};

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

/// How far ahead the list looks: a quarter of the thickness. On a pile the candidates barely grow
/// from a twentieth of the thickness to a quarter while the builds become rare; much further, a
/// layer's diagonal neighbours in the next layer come within reach and every pass pays for them
/// (BM_self_collision_build measures the margins).
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

/// Sorts the particles of [begin, end), as they are now, into the cells of a grid fitted to them
/// (cells at least `reach`, so everything within reach of a particle lies in its own cell and the
/// 26 around it): a counting sort by cell, the positions copied in that order so that a row of
/// cells is one contiguous run. Non-finite particles go to one extra cell past the grid that no
/// query visits.
template <class T>
void sort_into_cells(CandidateList<T>& list, const StateArrays<T>& s, std::size_t begin, std::size_t end, T reach)
{
    const std::size_t n = end - begin;
    list.built_x.assign(s.x + begin, s.x + end);
    list.built_y.assign(s.y + begin, s.y + end);
    list.built_z.assign(s.z + begin, s.z + end);
    list.cells.grid = fit_grid(list.built_x.data(), list.built_y.data(), list.built_z.data(), n, reach);
    const DenseGrid<T>& grid = list.cells.grid;
    const std::size_t cells = grid.cells();
    list.cells.particle_cell.resize(n);
    list.cells.cell_start.assign(cells + 2, 0);
    for (std::size_t k = 0; k < n; ++k)
    {
        const Vec3<T> p(list.built_x[k], list.built_y[k], list.built_z[k]);
        const auto cell = p.allFinite() ? std::uint32_t(grid.cell_of(p)) : std::uint32_t(cells);
        list.cells.particle_cell[k] = cell;
        ++list.cells.cell_start[cell + 1];
    }
    for (std::size_t b = 1; b < list.cells.cell_start.size(); ++b)
        list.cells.cell_start[b] += list.cells.cell_start[b - 1];
    list.cells.by_cell.resize(n);
    list.cells.sorted_cell.resize(n);
    // Padded by a padding block: the vector search reads a batch past a run's end.
    list.cells.sorted_x.assign(n + simd::kPadLanes<T>, T(0));
    list.cells.sorted_y.assign(n + simd::kPadLanes<T>, T(0));
    list.cells.sorted_z.assign(n + simd::kPadLanes<T>, T(0));
    {
        std::vector<std::uint32_t> fill(list.cells.cell_start.begin(), list.cells.cell_start.end() - 1);
        for (std::size_t k = 0; k < n; ++k)
        {
            const std::uint32_t at = fill[list.cells.particle_cell[k]]++;
            list.cells.by_cell[at] = std::uint32_t(k);
            list.cells.sorted_cell[at] = list.cells.particle_cell[k];
            list.cells.sorted_x[at] = list.built_x[k];
            list.cells.sorted_y[at] = list.built_y[k];
            list.cells.sorted_z[at] = list.built_z[k];
        }
    }
}

/// Finds each pair of the sorted particles within `reach2` (squared) once, leaving out pairs a
/// spring joins (they are left to the spring; the list is rebuilt when springs change): a particle
/// looks at the particles after it in its own cell and in the 13 neighbouring cells that come
/// after its cell in the grid's order (x + 1; the row y + 1; the three rows at z + 1), five runs
/// of the sorted arrays. Chunks of the executor collect their own pairs (k, q), from begin, into
/// list.scratch.chunk_lists, which are read in chunk order, so the split changes nothing.
template <class T>
void find_pairs(CandidateList<T>& list, const World<T>& world, std::size_t begin, T reach2)
{
    const std::size_t n = list.cells.by_cell.size();
    const auto views = world.constraint_layers().views();
    const std::span<const ConstraintArrays<T>> c(views);
    const DenseGrid<T>& grid = list.cells.grid;
    const std::size_t cells = grid.cells();
    const std::uint32_t* const starts = list.cells.cell_start.data();
    const std::uint32_t* const members = list.cells.by_cell.data();
    const T *const sx = list.cells.sorted_x.data(), *const sy = list.cells.sorted_y.data(),
                   *const sz = list.cells.sorted_z.data();
    const bool vectorized = world.vectorized();

    list.scratch.chunk_lists.resize(world.chunk_count(n));
    world.for_each_indexed_chunk(0, n, [&](std::size_t chunk, std::size_t chunk_begin, std::size_t chunk_end) {
        auto& pairs = list.scratch.chunk_lists[chunk];
        pairs.clear();
        std::vector<std::uint32_t> hits; // places in the sorted arrays within reach; grows, never shrinks
        // The four rows of later neighbour cells, shared by every particle of a cell: found once
        // per cell.
        std::size_t cell = cells;
        std::uint32_t rows[4][2] = {}, own_end = 0;
        for (std::size_t e0 = chunk_begin; e0 < chunk_end; ++e0)
        {
            const std::uint32_t at = list.cells.sorted_cell[e0];
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
            const auto partners = spring_partners(c, begin + k);
            for (std::uint32_t f = 0; f < found; ++f)
            {
                const std::uint32_t q = members[hits[f]];
                if (!joined_by_spring(c, begin + k, partners, begin + q) && !list.bonds.joins(begin + k, begin + q))
                {
                    pairs.push_back(k);
                    pairs.push_back(q);
                }
            }
        }
    });
}

/// Both directions of every pair found into per-particle lists (a counting sort by particle), then
/// each list sorted by index: the order a particle sums its contacts in is then canonical,
/// whatever the grid or the split.
template <class T>
void gather_partners(CandidateList<T>& list, const World<T>& world, std::size_t begin)
{
    const std::size_t n = list.cells.by_cell.size();
    list.count.assign(n, 0);
    for (const auto& pairs : list.scratch.chunk_lists)
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
    list.partners.resize(total);
    {
        std::vector<std::uint32_t> fill(list.first);
        for (const auto& pairs : list.scratch.chunk_lists)
            for (std::size_t f = 0; f < pairs.size(); f += 2)
            {
                list.partners[fill[pairs[f]]++] = std::uint32_t(begin) + pairs[f + 1];
                list.partners[fill[pairs[f + 1]]++] = std::uint32_t(begin) + pairs[f];
            }
    }
    world.for_each_chunk(n, [&](std::size_t chunk_begin, std::size_t chunk_end) {
        for (std::size_t k = chunk_begin; k < chunk_end; ++k)
        {
            const auto from = list.partners.begin() + std::ptrdiff_t(list.first[k]);
            std::sort(from, from + std::ptrdiff_t(list.count[k]));
        }
    });
}

/// Rebuilds the candidate list of [begin, end) for a reach of thickness + margin: the particles
/// sorted into cells, each pair within reach found once, the pairs gathered into per-particle
/// lists sorted by index.
template <class T>
void build_candidates(CandidateList<T>& list, const World<T>& world, const StateArrays<T>& s, std::size_t begin,
                      std::size_t end, T thickness, T margin)
{
    const T reach = thickness + margin;
    sort_into_cells(list, s, begin, end, reach);
    find_pairs(list, world, begin, reach * reach);
    gather_partners(list, world, begin);
    list_active(list);
    list.drift.clear_zones.assign(end - begin, ClearZone<T>{});

    list.layout.ready = false;
    list.drift.centre = {T(0), T(0), T(0)};
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
    list.layout.settle_block = (list.layout.settle_block + lanes - 1) / lanes * lanes;
    const std::size_t blocks = std::max<std::size_t>(1, (active.size() + list.layout.settle_block - 1) /
                                                            list.layout.settle_block);
    std::vector<std::uint32_t>& block_of = list.scratch.block_of;
    block_of.resize(n);
    for (std::size_t j = 0; j < blocks; ++j)
        for (std::size_t a = j * list.layout.settle_block;
             a < std::min(active.size(), (j + 1) * list.layout.settle_block); ++a)
            block_of[active[a]] = std::uint32_t(j);
    // Every pair once, lower end first, in the lists' order: its ends and its two entries. A
    // particle's entries for its lower partners come first in its list, in the order those
    // partners are reached here: `lower` is where the next one goes.
    const std::size_t pair_count = list.partners.size() / 2; // every pair is listed from both ends
    auto& pairs = list.scratch.canonical;
    pairs.resize(pair_count);
    std::vector<std::uint32_t>& lower = list.scratch.lower;
    lower.assign(list.first.begin(), list.first.end());
    std::size_t c = 0;
    for (std::uint32_t k = 0; k < n; ++k)
        for (std::uint32_t e = list.first[k]; e < list.first[k] + list.count[k]; ++e)
            if (const std::uint32_t q = list.partners[e] - begin; q > k)
                pairs[c++] = {k, q, e, lower[q]++};
    // By the gap (stable: the lower ends stay in order) into `by_gap`, then by block.
    std::vector<std::uint32_t>& next = list.scratch.next;
    next.assign(n + 1, 0);
    list.layout.pair_block.assign(blocks + 1, 0);
    for (const auto& pair : pairs)
    {
        ++next[pair.q - pair.k];
        ++list.layout.pair_block[block_of[pair.k] + 1];
    }
    for (std::uint32_t gap = 0, at = 0; gap <= n; ++gap)
        at += std::exchange(next[gap], at);
    std::vector<std::uint32_t>& by_gap = list.scratch.by_gap;
    by_gap.resize(pair_count);
    for (std::uint32_t i = 0; i < pair_count; ++i)
        by_gap[next[pairs[i].q - pairs[i].k]++] = i;
    // Each block's pairs start a whole batch after the last block's.
    for (std::size_t j = 1; j <= blocks; ++j)
        list.layout.pair_block[j] = list.layout.pair_block[j - 1] +
                                    std::uint32_t((list.layout.pair_block[j] + lanes - 1) / lanes * lanes);
    list.layout.pair_stride = simd::padded_count<T>(list.layout.pair_block[blocks]);
    list.layout.pair_a.assign(list.layout.pair_stride + simd::kPadLanes<T>, std::int32_t(begin));
    list.layout.pair_b.assign(list.layout.pair_stride + simd::kPadLanes<T>, std::int32_t(begin));
    list.layout.record.resize(list.partners.size());
    next.assign(list.layout.pair_block.begin(), list.layout.pair_block.end() - 1);
    for (const std::uint32_t i : by_gap)
    {
        const auto& pair = pairs[i];
        const std::uint32_t p = next[block_of[pair.k]]++;
        list.layout.pair_a[p] = std::int32_t(begin + pair.k);
        list.layout.pair_b[p] = std::int32_t(begin + pair.q);
        list.layout.record[pair.entry_k] = p;
        list.layout.record[pair.entry_q] = std::uint32_t(list.layout.pair_stride + p);
    }
    list.layout.pair_runs.assign(list.layout.pair_stride / lanes, 0);
    for (std::size_t p = 0; p + lanes <= list.layout.pair_stride; p += lanes)
        list.layout.pair_runs[p / lanes] = consecutive(&list.layout.pair_a[p], lanes) &&
                                           consecutive(&list.layout.pair_b[p], lanes);
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
    const auto none = std::int32_t(2 * list.layout.pair_stride);
    const std::size_t groups = (active.size() + lanes - 1) / lanes;
    list.layout.group_row.resize(groups + 1);
    std::size_t rows = 0;
    for (std::size_t g = 0; g < groups; ++g)
    {
        list.layout.group_row[g] = std::uint32_t(rows);
        std::uint32_t longest = 0;
        for (std::size_t a = g * lanes; a < std::min(active.size(), (g + 1) * lanes); ++a)
            longest = std::max(longest, list.count[active[a]]);
        rows += 1 + longest;
    }
    list.layout.group_row[groups] = std::uint32_t(rows);
    list.layout.lane_table.resize(rows * lanes);
    for (std::size_t g = 0; g < groups; ++g)
    {
        std::int32_t* const rows_of_group = list.layout.lane_table.data() +
                                            std::size_t(list.layout.group_row[g]) * lanes;
        const std::size_t steps = list.layout.group_row[g + 1] - list.layout.group_row[g] - 1;
        for (std::size_t l = 0; l < lanes; ++l)
        {
            const std::size_t a = g * lanes + l;
            const std::uint32_t k = active[a < active.size() ? a : g * lanes];
            const std::uint32_t count = a < active.size() ? list.count[k] : 0;
            rows_of_group[l] = std::int32_t(begin + k);
            for (std::size_t m = 0; m < steps; ++m)
                rows_of_group[(m + 1) * lanes + l] = m < count ? std::int32_t(list.layout.record[list.first[k] + m])
                                                               : none;
        }
    }
    list.layout.row_runs.resize(rows);
    for (std::size_t r = 0; r < rows; ++r)
        list.layout.row_runs[r] = consecutive(&list.layout.lane_table[r * lanes], lanes);
}

/// Lays the list out for a pass (see PassLayout::ready): its pairs, then its particles.
template <class T>
void lay_out_pairs(CandidateList<T>& list, std::size_t lanes)
{
    order_pairs(list, lanes);
    lay_out_groups(list, lanes);
    list.layout.ready = true;
}

} // namespace simdverlet::detail
