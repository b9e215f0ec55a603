// Spring chains: a spring graph cut into chains, families of chains that share no particle, and
// batches of them a vector register wide. chain_solve.hpp holds each chain's springs at their
// bounds by one exact solve.
//
// Why chains: a spring-by-spring limiter moves a correction one spring a pass, and a hanging sheet's
// springs each carry the weight of everything below them, so the correction has to cross the whole
// sheet. Held all at once, the springs of a chain form a tridiagonal system (J W J^T) lambda = -C,
// one row a spring, which Thomas' algorithm solves exactly in O(n): one solve of a straight chain
// lands every spring on its bound (Goldenthal et al.'s fast projection, 2007, on the chains where the
// system is tridiagonal). A grid's springs are two families of disjoint chains, its rows and its
// columns; a triangle mesh's edges fall into about three, along its three edge directions. Solving
// the families one after the other (Gauss-Seidel over families) carries a load along any path the
// springs allow, whichever way the cloth hangs.
//
// The decomposition reads the springs and the layout as they were when the stage was added, which
// a scene rebuilt to restore a snapshot into has too, so a restored simulation rebuilds the same
// chains; a spring gone since (a cut, a tear) parts its chain where it was (ChainPlace). At each
// particle its springs are paired into straight-through pairs, the straightest first; the chains
// follow the pairs. A family is a set of chains no two of which share a particle, so its chains
// solve independently: a vector lane a chain, the executor splitting the batches, each particle
// written by one lane.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet::detail
{

/// A spring a chain holds: particles a < b and its rest length.
template <class T>
struct ChainSpring
{
    std::int32_t a, b;
    T rest;
};

/// One family's chains, `lanes` to a batch. Batch k's node t of lane l is nodes[offset[k] + t *
/// lanes + l] (-1 past the end of a shorter chain), and rest[...] at the same place the rest length
/// of the spring from node t - 1 to node t (0 at t = 0 and past the end).
/// How a batch's lanes lie in the particle arrays, so the vector solve reads them the cheapest
/// way: at each node a run of consecutive particles (a grid's columns side by side), each lane a run
/// along the chain (a grid's rows, read by tiles turned in registers), or scattered (gathers).
enum class ChainShape : std::uint8_t
{
    scattered,
    runs,
    rows,
};

template <class T>
struct ChainFamily
{
    std::vector<std::size_t> offset;  ///< per batch, and one past the last
    std::vector<std::int32_t> length; ///< per batch, the nodes of its longest chain
    std::vector<ChainShape> shape;    ///< per batch
    simd::AlignedVector<std::int32_t> nodes;
    simd::AlignedVector<T> rest;
    std::size_t chains = 0, springs = 0;

    std::size_t batches() const noexcept { return length.size(); }
};

template <class T>
struct SpringChains
{
    std::size_t lanes = 1;
    std::vector<ChainFamily<T>> families;
    std::size_t longest = 0; ///< nodes of the longest chain
    std::size_t springs = 0;
};

/// The springs' graph over particles [begin, end): for each particle (from begin) its neighbours,
/// sorted, and the spring to each.
struct ChainGraph
{
    std::vector<std::size_t> first;      ///< per particle, where its neighbours start; one past the last
    std::vector<std::int32_t> neighbour; ///< from begin
    std::vector<std::int32_t> spring;    ///< the index of the spring to that neighbour

    std::size_t degree(std::size_t v) const noexcept { return first[v + 1] - first[v]; }
    bool joined(std::size_t u, std::int32_t v) const noexcept
    {
        return std::binary_search(neighbour.begin() + std::ptrdiff_t(first[u]),
                                  neighbour.begin() + std::ptrdiff_t(first[u + 1]), v);
    }
    /// How many neighbours u and v share.
    int shared(std::size_t u, std::size_t v) const noexcept
    {
        int n = 0;
        std::size_t i = first[u], j = first[v];
        while (i < first[u + 1] && j < first[v + 1])
        {
            if (neighbour[i] == neighbour[j])
                ++n, ++i, ++j;
            else if (neighbour[i] < neighbour[j])
                ++i;
            else
                ++j;
        }
        return n;
    }
};

template <class T>
ChainGraph chain_graph(const std::vector<ChainSpring<T>>& springs, std::size_t begin, std::size_t end)
{
    ChainGraph g;
    const std::size_t n = end - begin;
    g.first.assign(n + 1, 0);
    for (const auto& s : springs)
        ++g.first[std::size_t(s.a) - begin + 1], ++g.first[std::size_t(s.b) - begin + 1];
    std::partial_sum(g.first.begin(), g.first.end(), g.first.begin());
    g.neighbour.resize(g.first[n]);
    g.spring.resize(g.first[n]);
    std::vector<std::size_t> at(g.first.begin(), g.first.end() - 1);
    for (std::size_t k = 0; k < springs.size(); ++k)
    {
        const auto a = std::size_t(springs[k].a) - begin, b = std::size_t(springs[k].b) - begin;
        g.neighbour[at[a]] = std::int32_t(b), g.spring[at[a]++] = std::int32_t(k);
        g.neighbour[at[b]] = std::int32_t(a), g.spring[at[b]++] = std::int32_t(k);
    }
    for (std::size_t v = 0; v < n; ++v)
    {
        // Sorted by neighbour, so that shared() can merge; springs are distinct pairs, so no ties.
        std::vector<std::pair<std::int32_t, std::int32_t>> row;
        for (std::size_t e = g.first[v]; e < g.first[v + 1]; ++e)
            row.emplace_back(g.neighbour[e], g.spring[e]);
        std::sort(row.begin(), row.end());
        for (std::size_t e = g.first[v]; e < g.first[v + 1]; ++e)
            std::tie(g.neighbour[e], g.spring[e]) = row[e - g.first[v]];
    }
    return g;
}

/// The cosine below which two springs at a particle are straight enough to chain through: more
/// than 110 degrees apart. A grid's corner (90) ends its row and its column; a jittered mesh's edge
/// lines, whose springs meet at 180 degrees give or take twice the jitter's tilt, run on.
inline constexpr double kStraightCosine = -0.34202014332566873; // cos(110 degrees)

/// How straight a pair of springs at a particle runs, 0 where it is not straight enough to chain
/// through. With the particles' layout (the pose the stage was added in) it is how far the cosine
/// of the angle between the two springs lies below kStraightCosine. Without a layout for the three
/// particles it reads the graph: 1 / (1 + what the far ends share besides v, counting 2 more if
/// they are joined), where that is nothing and v has fewer than five springs, or at most one and v
/// has more (a vertex of valence five has no opposite pair).
template <class T>
double pair_straightness(const ChainGraph& g, std::span<const Vec3<T>> layout, std::size_t v, std::size_t u,
                         std::size_t w)
{
    if (v < layout.size() && u < layout.size() && w < layout.size())
    {
        const Vec3<double> a = (layout[u] - layout[v]).template cast<double>(),
                           b = (layout[w] - layout[v]).template cast<double>();
        const double norms = a.norm() * b.norm();
        if (norms > 0)
            return std::max(0.0, kStraightCosine - a.dot(b) / norms);
    }
    const int shared = g.shared(u, w) - 1 + 2 * int(g.joined(u, std::int32_t(w)));
    return shared <= (g.degree(v) >= 5 ? 1 : 0) ? 1.0 / double(1 + shared) : 0.0;
}

/// The pairs of a particle's springs (indices into its row, i < j) to chain through: the set of
/// disjoint straight pairs that is straightest in sum (pair_straightness), found exactly over the subsets of its springs
/// where it has at most kExactPairing, and straightest pair first where it has more. Greedy alone
/// lets one jittered pair take a spring its straighter neighbour needed: a mesh's edge lines then
/// turn into diagonals that soon end.
inline constexpr std::size_t kExactPairing = 10;

inline std::vector<std::pair<std::size_t, std::size_t>>
straightest_pairs(std::size_t d,
                  const std::vector<std::tuple<double, std::size_t, std::size_t>>& candidates) // (straightness, i, j)
{
    std::vector<std::pair<std::size_t, std::size_t>> chosen;
    if (d <= kExactPairing)
    {
        // gain[i][j]: how straight the pair is (0 where it may not pair); best[mask]: the largest
        // sum for the springs in mask, taking the lowest spring of mask first.
        std::vector<double> gain(d * d, 0.0);
        for (const auto& [straightness, i, j] : candidates)
            gain[i * d + j] = straightness;
        const std::size_t full = std::size_t(1) << d;
        std::vector<double> best(full, 0.0);
        std::vector<std::int8_t> partner(full, -1);
        for (std::size_t mask = 1; mask < full; ++mask)
        {
            const std::size_t i = std::size_t(std::countr_zero(mask)), rest = mask & (mask - 1);
            best[mask] = best[rest];
            for (std::size_t others = rest; others != 0; others &= others - 1)
            {
                const std::size_t j = std::size_t(std::countr_zero(others));
                const double g = gain[i * d + j];
                if (g > 0.0 && g + best[rest & ~(std::size_t(1) << j)] > best[mask])
                {
                    best[mask] = g + best[rest & ~(std::size_t(1) << j)];
                    partner[mask] = std::int8_t(j);
                }
            }
        }
        for (std::size_t mask = full - 1; mask != 0;)
        {
            const std::size_t i = std::size_t(std::countr_zero(mask));
            if (partner[mask] < 0)
                mask &= mask - 1;
            else
            {
                const auto j = std::size_t(partner[mask]);
                chosen.emplace_back(i, j);
                mask &= ~((std::size_t(1) << i) | (std::size_t(1) << j));
            }
        }
        return chosen;
    }
    auto sorted = candidates;
    std::sort(sorted.begin(), sorted.end(), [](const auto& p, const auto& q) {
        return std::get<0>(p) != std::get<0>(q) ? std::get<0>(p) > std::get<0>(q) : p < q;
    });
    std::vector<char> taken(d, 0);
    for (const auto& [straightness, i, j] : sorted)
        if (!taken[i] && !taken[j])
        {
            taken[i] = taken[j] = 1;
            chosen.emplace_back(i, j);
        }
    return chosen;
}

/// For each spring and each of its ends (0: a, 1: b), the spring it continues into through that
/// end, or -1 where a chain ends, from each particle's straightest_pairs.
template <class T>
std::vector<std::array<std::int32_t, 2>>
pair_springs(const ChainGraph& g, const std::vector<std::array<std::int32_t, 2>>& ends, std::span<const Vec3<T>> layout)
{
    std::vector<std::array<std::int32_t, 2>> next(ends.size(), {-1, -1});
    std::vector<std::tuple<double, std::size_t, std::size_t>> candidates;
    for (std::size_t v = 0; v + 1 < g.first.size(); ++v)
    {
        const std::size_t f = g.first[v], d = g.degree(v);
        candidates.clear();
        for (std::size_t i = 0; i < d; ++i)
            for (std::size_t j = i + 1; j < d; ++j)
            {
                const double straightness = pair_straightness(g, layout, v, std::size_t(g.neighbour[f + i]),
                                                              std::size_t(g.neighbour[f + j]));
                if (straightness > 0)
                    candidates.emplace_back(straightness, i, j);
            }
        for (const auto& [i, j] : straightest_pairs(d, candidates))
        {
            const std::int32_t si = g.spring[f + i], sj = g.spring[f + j];
            next[std::size_t(si)][ends[std::size_t(si)][0] == std::int32_t(v) ? 0 : 1] = sj;
            next[std::size_t(sj)][ends[std::size_t(sj)][0] == std::int32_t(v) ? 0 : 1] = si;
        }
    }
    return next;
}

/// Walks the chains: from every spring with a free end first (where chains begin), then from what
/// is left (closed loops). A chain stops before a particle it already holds, so no particle
/// appears twice in one; the spring it did not take begins another. Each chain is turned so its
/// first particle is the lower. Particles are from begin.
inline std::vector<std::vector<std::int32_t>> walk_chains(const std::vector<std::array<std::int32_t, 2>>& ends,
                                                          const std::vector<std::array<std::int32_t, 2>>& next,
                                                          std::size_t particles)
{
    std::vector<std::vector<std::int32_t>> chains;
    std::vector<char> used(ends.size(), 0);
    std::vector<std::size_t> seen(particles, 0); // the chain (from 1) that last held the particle
    const auto walk = [&](std::size_t spring, int from) {
        std::vector<std::int32_t> chain{ends[spring][std::size_t(from)]};
        seen[std::size_t(chain[0])] = chains.size() + 1;
        std::int32_t s = std::int32_t(spring);
        int in = from; // the end of s the chain came in through
        while (s >= 0 && !used[std::size_t(s)])
        {
            const std::int32_t out = ends[std::size_t(s)][std::size_t(1 - in)];
            if (seen[std::size_t(out)] == chains.size() + 1)
                break;
            used[std::size_t(s)] = 1;
            seen[std::size_t(out)] = chains.size() + 1;
            chain.push_back(out);
            const std::int32_t t = next[std::size_t(s)][std::size_t(1 - in)];
            if (t >= 0)
                in = ends[std::size_t(t)][0] == out ? 0 : 1;
            s = t;
        }
        if (chain.front() > chain.back())
            std::reverse(chain.begin(), chain.end());
        chains.push_back(std::move(chain));
    };
    for (std::size_t s = 0; s < ends.size(); ++s)
        for (int end = 0; end < 2 && !used[s]; ++end)
            if (next[s][std::size_t(end)] < 0)
                walk(s, end);
    for (std::size_t s = 0; s < ends.size(); ++s)
        if (!used[s])
            walk(s, 0);
    return chains;
}

/// The shape of a batch of `length` nodes (see ChainShape): runs or rows only where every lane
/// holds a chain of the full length.
inline ChainShape batch_shape(const std::int32_t* nodes, std::size_t length, std::size_t lanes)
{
    bool runs = true, rows = true;
    for (std::size_t t = 0; t < length; ++t)
        for (std::size_t l = 0; l < lanes; ++l)
        {
            const std::int32_t v = nodes[t * lanes + l];
            if (v < 0)
                return ChainShape::scattered;
            runs = runs && v == nodes[t * lanes] + std::int32_t(l);
            rows = rows && v == nodes[l] + std::int32_t(t);
        }
    return runs ? ChainShape::runs : rows ? ChainShape::rows : ChainShape::scattered;
}

/// The region, of `regions` equal parts of particles [0, particles), that a chain starting at
/// `first` lies in (build_chains).
inline std::size_t chain_region(std::int32_t first, std::size_t particles, std::size_t regions) noexcept
{
    return std::size_t(first) * regions / particles;
}

/// Adds batches of `lanes` chains to `family`, the chains chosen[first, last) in that order
/// (longest first): their particles offset by `begin`, their springs' rest lengths from `rest`.
template <class T, class Rest>
void add_chain_batches(ChainFamily<T>& family, const std::vector<std::vector<std::int32_t>>& chains,
                       const std::vector<std::size_t>& chosen, std::size_t first, std::size_t last, std::size_t lanes,
                       std::size_t begin, const Rest& rest)
{
    for (std::size_t k = first; k < last; k += lanes)
    {
        const std::size_t length = chains[chosen[k]].size(); // the batch's longest: sorted
        family.offset.push_back(family.nodes.size());
        family.length.push_back(std::int32_t(length));
        family.nodes.resize(family.nodes.size() + length * lanes, -1);
        family.rest.resize(family.nodes.size(), T(0));
        const std::size_t at = family.offset.back();
        for (std::size_t l = 0; l < lanes && k + l < last; ++l)
        {
            const auto& chain = chains[chosen[k + l]];
            for (std::size_t t = 0; t < chain.size(); ++t)
            {
                family.nodes[at + t * lanes + l] = std::int32_t(begin) + chain[t];
                if (t > 0)
                    family.rest[at + t * lanes + l] = rest(chain[t - 1], chain[t]);
            }
            family.springs += chain.size() - 1;
        }
        family.shape.push_back(batch_shape(family.nodes.data() + at, length, lanes));
    }
}

/// Cuts the springs over particles [begin, end) (each pair once, a < b, both in the range) into
/// families of particle-disjoint chains, `lanes` chains to a batch: the longest chains are placed
/// first, each in the first family none of whose chains shares a particle with it. `layout` holds
/// the particles' layout pose from `begin` on (as far as it reaches; see pair_straightness).
///
/// A family's batches run in `regions` (>= 1) equal parts of the particle numbering, longest first
/// within each: give it the executor's thread count. An executor deals a family's batches to its
/// threads in contiguous ranges. Sorted by length alone (one region), a mesh family's long chains
/// would all go to the first thread and the short ones to the next, each from all over the cloth:
/// unequal work, and both threads writing the same cache lines. A region per thread gives each its
/// own part of the cloth with its share of long and short chains. One region wastes fewest lanes: a
/// region fills its batches from fewer chains, so more lanes idle past the end of a shorter chain.
/// The chains do not depend on it, and a chain's solve does not depend on its batch, so neither do
/// the bits.
template <class T>
SpringChains<T> build_chains(const std::vector<ChainSpring<T>>& springs, std::size_t begin, std::size_t end,
                             std::size_t lanes, std::span<const Vec3<T>> layout, std::size_t regions = 1)
{
    SpringChains<T> out;
    out.lanes = lanes;
    out.springs = springs.size();
    if (springs.empty())
        return out;
    const ChainGraph g = chain_graph(springs, begin, end);
    std::vector<std::array<std::int32_t, 2>> ends(springs.size());
    for (std::size_t k = 0; k < springs.size(); ++k)
        ends[k] = {std::int32_t(std::size_t(springs[k].a) - begin), std::int32_t(std::size_t(springs[k].b) - begin)};
    auto chains = walk_chains(ends, pair_springs<T>(g, ends, layout), end - begin);
    std::stable_sort(chains.begin(), chains.end(),
                     [](const auto& p, const auto& q) { return p.size() != q.size() ? p.size() > q.size() : p < q; });
    // Families: a byte per particle per family says whether one of its chains holds the particle.
    std::vector<std::vector<char>> holds;
    std::vector<std::vector<std::size_t>> members;
    for (std::size_t c = 0; c < chains.size(); ++c)
    {
        std::size_t f = 0;
        for (; f < holds.size(); ++f)
            if (std::none_of(chains[c].begin(), chains[c].end(),
                             [&](std::int32_t v) { return holds[f][std::size_t(v)]; }))
                break;
        if (f == holds.size())
        {
            holds.emplace_back(end - begin, 0);
            members.emplace_back();
        }
        for (const std::int32_t v : chains[c])
            holds[f][std::size_t(v)] = 1;
        members[f].push_back(c);
    }
    // The rest length of the spring between two particles, from the graph's sorted rows.
    const auto rest_between = [&](std::int32_t u, std::int32_t v) {
        const auto row = g.neighbour.begin() + std::ptrdiff_t(g.first[std::size_t(u)]);
        const auto at = std::lower_bound(row, g.neighbour.begin() + std::ptrdiff_t(g.first[std::size_t(u) + 1]), v);
        return springs[std::size_t(g.spring[std::size_t(at - g.neighbour.begin())])].rest;
    };
    for (auto& chosen : members)
    {
        ChainFamily<T>& family = out.families.emplace_back();
        family.chains = chosen.size();
        out.longest = std::max(out.longest, chains[chosen.front()].size()); // chosen longest first
        const bool uniform = std::all_of(chosen.begin(), chosen.end(), [&](std::size_t c) {
            return chains[c].size() == chains[chosen.front()].size();
        });
        // Chains of one length (a grid's rows or columns) fill every lane in any order, and too
        // few chains to fill a batch in each region are better placed by length alone.
        const bool one_region = uniform || chosen.size() < regions * lanes;
        const std::size_t particles = end - begin;
        const auto region = [&](std::size_t c) {
            return one_region ? 0 : chain_region(chains[c].front(), particles, regions);
        };
        std::stable_sort(chosen.begin(), chosen.end(),
                         [&](std::size_t p, std::size_t q) { return region(p) < region(q); });
        for (std::size_t first = 0; first < chosen.size();)
        {
            std::size_t last = first;
            while (last < chosen.size() && region(chosen[last]) == region(chosen[first]))
                ++last;
            add_chain_batches(family, chains, chosen, first, last, lanes, begin, rest_between);
            first = last;
        }
        family.offset.push_back(family.nodes.size());
    }
    return out;
}

/// Where a spring sits in a SpringChains: its family, and its index in that family's nodes and
/// rests (the node its spring ends at).
struct ChainPlace
{
    std::int32_t a, b; ///< its ends, a < b
    std::uint32_t family;
    std::size_t at;
};

/// Every held spring's place, sorted by its ends.
template <class T>
std::vector<ChainPlace> chain_places(const SpringChains<T>& chains)
{
    std::vector<ChainPlace> places;
    const std::size_t lanes = chains.lanes;
    for (std::size_t f = 0; f < chains.families.size(); ++f)
    {
        const auto& family = chains.families[f];
        for (std::size_t k = 0; k < family.batches(); ++k)
            for (std::size_t t = 1; t < std::size_t(family.length[k]); ++t)
                for (std::size_t l = 0; l < lanes; ++l)
                {
                    const std::size_t at = family.offset[k] + t * lanes + l;
                    const std::int32_t u = family.nodes[at - lanes], v = family.nodes[at];
                    if (u >= 0 && v >= 0 && family.rest[at] > T(0))
                        places.push_back({std::min(u, v), std::max(u, v), std::uint32_t(f), at});
                }
    }
    std::sort(places.begin(), places.end(),
              [](const auto& p, const auto& q) { return std::tie(p.a, p.b) < std::tie(q.a, q.b); });
    return places;
}

} // namespace simdverlet::detail
