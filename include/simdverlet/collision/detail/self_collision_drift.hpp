// Whether a candidate list is still current, asked before every self-collision pass: the survey of
// every particle's move since the build (kernels::survey_moves), its re-centring on the listed
// particles, and the drift check, which searches around the few particles that moved far for one
// they are not listed with. Decides only whether to rebuild: it never adds a pair.
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

#include "simdverlet/collision/detail/self_collision_candidates.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/self_collision.hpp"

namespace simdverlet::detail
{

/// Whether particle k touches, now, a particle it is not listed with nor joined to by a spring,
/// among those the build's grid put in the search's box; on the way, how near to `at` the build
/// had the nearest of those particles, out to the clear reach, which it records as k's clear
/// zone (see ClearZone). Only a particle within the reach of `at` at the build can touch
/// k now (no_unlisted_contact). Touching is measured as pair_push measures it.
template <class T>
bool touches_unlisted(CandidateList<T>& list, std::span<const ConstraintArrays<T>> c, const StateArrays<T>& s,
                      const FarMoverSearch<T>& search, T thickness)
{
    const DenseGrid<T>& grid = list.cells.grid;
    const std::size_t begin = list.begin;
    const std::uint32_t k = search.k;
    const T h2 = thickness * thickness, reach2 = search.reach * search.reach;
    T nearest2 = search.clear_reach * search.clear_reach;
    const CellBox& box = search.box;
    const auto partners = spring_partners(c, begin + k);
    const auto listed_from = list.partners.begin() + std::ptrdiff_t(list.first[k]);
    const auto listed_to = listed_from + std::ptrdiff_t(list.count[k]);
    const auto unlisted = [&](std::uint32_t q) {
        return !std::binary_search(listed_from, listed_to, std::uint32_t(begin + q)) &&
               !joined_by_spring(c, begin + k, partners, begin + q) && !list.bonds.joins(begin + k, begin + q);
    };
    for (std::int64_t cz = box.z0; cz <= box.z1; ++cz)
        for (std::int64_t cy = box.y0; cy <= box.y1; ++cy)
        {
            // A row of cells is one run of the sorted order.
            const auto row = std::size_t(grid.index(box.x0, cy, cz));
            for (std::uint32_t e = list.cells.cell_start[row];
                 e < list.cells.cell_start[row + std::size_t(box.x1 - box.x0) + 1]; ++e)
            {
                const T bx = list.cells.sorted_x[e] - search.at.x(), by = list.cells.sorted_y[e] - search.at.y(),
                        bz = list.cells.sorted_z[e] - search.at.z();
                const T built2 = bx * bx + by * by + bz * bz;
                const bool within_reach = built2 < reach2;
                if (!within_reach && !(built2 < nearest2))
                    continue;
                const std::uint32_t q = list.cells.by_cell[e];
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
    list.drift.clear_zones[k] = {search.at, std::sqrt(nearest2)};
    return false;
}

/// Surveys every particle's move since the build (kernels::survey_moves) from `centre`, listing
/// in list.drift.far_movers, in increasing order, those that moved more than half the margin from it. Blocks
/// of a fixed size go to the executor's threads and are combined in order, so the survey is the
/// same for any thread count.
template <class T>
kernels::MoveSurvey<T> survey_moves(CandidateList<T>& list, const World<T>& world, const StateArrays<T>& s,
                                    const std::array<T, 3>& centre, T limit, bool vectorized)
{
    const std::size_t block = list.drift.survey_block;
    const std::size_t n = list.end - list.begin, blocks = (n + block - 1) / block;
    // Each block's list has room for all its particles and the vector kernel's overrun.
    const std::size_t room = block + simd::kPadLanes<T>;
    if (list.drift.far_movers.size() < blocks * room)
        list.drift.far_movers.resize(blocks * room); // scratch kept with the list: no zeroing per check
    list.drift.block_surveys.resize(blocks);
    world.run_tasks(blocks, [&](std::size_t b) {
        const std::size_t from = b * block, count = std::min(block, n - from);
        const T *const x = s.x + list.begin + from, *const y = s.y + list.begin + from,
                       *const z = s.z + list.begin + from;
        const T *const bx = list.built_x.data() + from, *const by = list.built_y.data() + from,
                       *const bz = list.built_z.data() + from;
        std::uint32_t* const out = list.drift.far_movers.data() + b * room;
        auto& survey = list.drift.block_surveys[b];
        survey = vectorized ? kernels::survey_moves_vector<xsimd::default_arch>(x, y, z, bx, by, bz, count, centre,
                                                                                limit * limit, out)
                            : kernels::survey_moves(x, y, z, bx, by, bz, count, centre, limit * limit, out);
        for (std::uint32_t f = 0; f < survey.beyond; ++f)
            out[f] += std::uint32_t(from);
    });
    kernels::MoveSurvey<T> all{T(0), T(0), {T(0), T(0), T(0)}, 0};
    for (std::size_t b = 0; b < blocks; ++b)
    {
        const auto& part = list.drift.block_surveys[b];
        kernels::rank_move(all.first, all.second, part.first);
        kernels::rank_move(all.first, all.second, part.second);
        for (std::size_t axis = 0; axis < 3; ++axis)
            all.sum[axis] += part.sum[axis];
        const auto from = list.drift.far_movers.begin() + std::ptrdiff_t(b * room);
        std::copy(from, from + part.beyond,
                  list.drift.far_movers.begin() + all.beyond); // down, behind the blocks before
        all.beyond += part.beyond;
    }
    return all;
}

/// The survey from `centre`, worked out from the one just made from a centre `drift` away that
/// listed (in list.drift.far_movers) every particle farther than `listed` from it, without reading every
/// move again. A particle it did not list is within listed + drift of `centre`: when that is
/// short of half the margin, the few are all among those listed, and so are the two largest moves
/// when two of the listed lie beyond it. Then `survey` becomes, bit for bit, what survey_moves
/// from `centre` would give (its sums aside, which are the same moves'); otherwise nothing
/// changes and it returns false. A thousandth of a percent on the bound covers rounding. It also
/// returns false past a sixteenth of the particles listed, where reading them one by one, twice,
/// would cost about as much as a survey (BM_self_collision_staleness: a fifth of a scalar read)
/// and the drift check gives up anyway unless most are dropped.
template <class T>
bool recentre_survey(CandidateList<T>& list, const StateArrays<T>& s, kernels::MoveSurvey<T>& survey,
                     const std::array<T, 3>& centre, T listed, T drift)
{
    const T half = list.margin / T(2), bound = (listed + drift) * T(1.00001);
    if (!(bound < half) || survey.beyond > (list.end - list.begin) / 16)
        return false;
    const auto from_centre = [&](std::uint32_t k) {
        const std::size_t i = list.begin + k;
        return kernels::squared_from(s.x[i] - list.built_x[k], s.y[i] - list.built_y[k], s.z[i] - list.built_z[k],
                                     centre);
    };
    T first = 0, second = 0;
    for (std::uint32_t f = 0; f < survey.beyond; ++f)
        kernels::rank_move(first, second, from_centre(list.drift.far_movers[f]));
    if (!(second > bound * bound))
        return false;
    std::uint32_t kept = 0;
    for (std::uint32_t f = 0; f < survey.beyond; ++f)
    {
        const std::uint32_t k = list.drift.far_movers[f];
        list.drift.far_movers[kept] = k; // as survey_moves lists them: in order, written always, kept when past half
        kept += from_centre(k) > half * half ? 1u : 0u;
    }
    survey.first = first;
    survey.second = second;
    survey.beyond = kept;
    return true;
}

/// The drift check, for when the margin test fails: most often a few particles moved more than
/// half the margin from the centre (a flapping corner in a settling pile), and they seldom touch a
/// particle they are not listed with. Pairs of the others cannot have closed
/// by the margin, so only pairs with one of the few can be missing: around where each of those is
/// now (less the centre), the build's grid is searched out to the thickness plus the largest move
/// from the centre, and any particle found touching it, not listed with it and not joined to it
/// by a spring, makes the list stale. Gives up (stale) past a sixteenth of the particles, or past
/// as many cells to search as particles, where a rebuild costs less than the search. That is decided
/// before searching, and the few are then searched on the executor's threads: the same answer
/// for any thread count.
///
/// Most of the few are the same particles check after check in a settling pile, so a search also
/// records how far the nearest particle
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
    list.drift.searches.clear();
    std::size_t cells = 0;
    for (std::uint32_t f = 0; f < survey.beyond; ++f)
    {
        const std::uint32_t k = list.drift.far_movers[f];
        const std::size_t i = list.begin + k;
        // A particle q touching k now was, at the build, within thickness + q's move of where k
        // is now less the centre: |X_q - (x_k - c)| <= |x_q - x_k| + |m_q - c|. q's move is at
        // most the largest, or the second largest when k's own is the largest (a lone fast
        // particle then searches around itself only as far as the others moved). A hundredth of
        // a percent wider, so that rounding cannot leave out a cell at the edge.
        const T own = kernels::squared_from(s.x[i] - list.built_x[k], s.y[i] - list.built_y[k],
                                            s.z[i] - list.built_z[k], centre);
        const T others = std::sqrt(own == survey.first ? survey.second : survey.first);
        const T reach = (thickness + others) * T(1.0001);
        const Vec3<T> at(s.x[i] - centre[0], s.y[i] - centre[1], s.z[i] - centre[2]);
        cells += cells_around(list.cells.grid, at, reach).cells();
        if (cells > n)
            return false;
        // An earlier search found no unlisted particle nearer than its clear zone's radius to where k was
        // then, so none is nearer to where k is now than that less how far k has moved since.
        const ClearZone<T>& found = list.drift.clear_zones[k];
        if ((thickness + others + (at - found.from).norm()) * T(1.0001) <= found.radius)
            continue;
        const T clear_reach = (thickness + others + list.margin / T(2)) * T(1.0001);
        list.drift.searches.push_back({k, at, reach, clear_reach, cells_around(list.cells.grid, at, clear_reach)});
    }
    const std::uint32_t task = list.drift.search_task, searches = std::uint32_t(list.drift.searches.size());
    const auto views = world.constraint_layers().views();
    const std::span<const ConstraintArrays<T>> c(views);
    std::atomic<bool> touched{false};
    world.run_tasks((searches + task - 1) / task, [&](std::size_t t) {
        for (std::uint32_t f = std::uint32_t(t) * task; f < std::min(searches, std::uint32_t(t + 1) * task); ++f)
        {
            if (touched.load(std::memory_order_relaxed))
                return;
            if (touches_unlisted(list, c, s, list.drift.searches[f], thickness))
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
/// from the first without reading the moves again (recentre_survey): the first lists the particles
/// a sixteenth of the margin short of half of it, and on a settling pile the mean moves far less
/// than that between checks. A fresh read is made only when it moved further.
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
    const std::array<T, 3> centre = list.drift.centre;
    auto survey = survey_moves(list, world, s, centre, listed, vectorized);
    if (!finite(survey))
        return false;
    const std::array<T, 3> mean{survey.sum[0] / n, survey.sum[1] / n, survey.sum[2] / n};
    list.drift.centre = mean;
    if (fits(survey))
        return true;
    const T drift = std::sqrt(kernels::squared_from(mean[0], mean[1], mean[2], centre));
    if (!recentre_survey(list, s, survey, mean, listed, drift))
        survey = survey_moves(list, world, s, mean, half, vectorized);
    if (fits(survey))
        return true;
    return search_few && no_unlisted_contact(list, world, s, survey, mean, thickness);
}

} // namespace simdverlet::detail
