// The tether search: which anchors each particle of a cloth hangs from, and how far along the
// cloth (through live springs and intact cells) or in the pose the tethers were added in. Anchors
// joined by springs form islands, and each particle finds the nearest anchor of each of its
// nearest islands. Rerun whenever the constraints' edit stamp moves (tethers.hpp).
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
#include "simdverlet/core/state.hpp"

namespace simdverlet::detail
{

template <class T>
struct TetherData;

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

/// The cloth's steps (cloth_steps) gathered once per recomputation: node k's steps are
/// next[first[k], first[k + 1]) with their lengths, in the order cloth_steps visits them. Every
/// island's search walks them, and on a grid each diagonal costs four slot scans to find.
template <class T>
struct StepGraph
{
    std::vector<std::uint32_t> first;
    std::vector<std::uint32_t> next;
    std::vector<T> length;

    template <class Visit>
    void steps(std::size_t k, Visit&& visit) const
    {
        for (std::uint32_t e = first[k]; e < first[k + 1]; ++e)
            visit(std::size_t(next[e]), length[e]);
    }
};

template <class T>
StepGraph<T> step_graph(const Cloth<T>& cloth, Layers<T> c)
{
    StepGraph<T> g;
    const std::size_t n = cloth.count();
    g.first.reserve(n + 1);
    g.first.push_back(0);
    for (std::size_t k = 0; k < n; ++k)
    {
        cloth_steps(c, cloth.base(), n, grid_width(cloth), grid_height(cloth), k, [&](std::size_t next, T length) {
            g.next.push_back(std::uint32_t(next));
            g.length.push_back(length);
        });
        g.first.push_back(std::uint32_t(g.next.size()));
    }
    return g;
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

/// Anchors joined to one another by the cloth's steps form an island. Each island's anchors in
/// ascending order, the islands in the order of their lowest anchor.
template <class T>
std::vector<std::vector<std::size_t>> anchor_islands(const TetherData<T>& d, const StepGraph<T>& graph)
{
    const std::size_t base = d.cloth.base(), n = d.cloth.count();
    constexpr std::int32_t kUnplaced = -2; // an anchor not yet in an island; other particles are -1
    std::vector<std::int32_t> island(n, -1);
    for (const std::size_t a : d.anchors)
        island[a - base] = kUnplaced;
    std::vector<std::vector<std::size_t>> out;
    std::vector<std::size_t> stack;
    for (const std::size_t a : d.anchors)
    {
        if (island[a - base] != kUnplaced)
            continue;
        const auto id = std::int32_t(out.size());
        auto& members = out.emplace_back();
        island[a - base] = id;
        stack.push_back(a - base);
        while (!stack.empty())
        {
            const std::size_t k = stack.back();
            stack.pop_back();
            members.push_back(base + k);
            graph.steps(k, [&](std::size_t next, T) {
                if (island[next] == kUnplaced)
                {
                    island[next] = id;
                    stack.push_back(next);
                }
            });
        }
        std::sort(members.begin(), members.end());
    }
    return out;
}

/// Geodesic: Dijkstra from every anchor of one island at once over cloth_steps; each node takes the
/// anchor whose wave reaches it first (ties to the lower node index, so the result is
/// deterministic). A node settled farther than its `cutoff` (its farthest island kept so far) is
/// not expanded: this island cannot be among the nearest of anything reached through it either.
///
/// On a mesh cloth, paths along edges alone zig-zag and run several percent long (4 % on the
/// irregular test sheet), so the wave also crosses triangles: once two corners of an intact
/// triangle are settled, the third is reached along the unfolded straight line (across_triangle,
/// the fast-marching update), which measures the distance to the anchors as a set. A particle's
/// rest distance is then the larger of that and its straight-line distance to its own anchor in
/// the pose at creation: on a flat, whole sheet the straight line is the geodesic, and where the
/// cloth curves or a cut makes the path go round, the distance along the cloth is the longer.
template <class T>
void nearest_along_cloth(const TetherData<T>& d, Layers<T> c, const StepGraph<T>& graph, const NodeTriangles& around,
                         std::span<const std::size_t> anchors, std::span<const T> cutoff,
                         std::vector<std::int32_t>& anchor, std::vector<T>& dist)
{
    const std::size_t base = d.cloth.base();
    const bool mesh = !d.cloth.is_grid();
    std::vector<bool> settled(d.cloth.count(), false);
    const auto side = [&](std::uint32_t p, std::uint32_t q) {
        return live_spring(c, base + p, base + q).value_or(T(0));
    };
    using Entry = std::pair<T, std::size_t>; // (distance, node)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> frontier;
    for (const std::size_t a : anchors)
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
        if (at > cutoff[k])
            continue;
        graph.steps(k, [&](std::size_t next, T length) { offer(next, at + length, anchor[k]); });
        if (!mesh)
            continue;
        for (std::uint32_t n = around.first[k]; n < around.first[k + 1]; ++n)
        {
            const auto& t = around.triangles[around.around[n]];
            for (int e = 0; e < 3; ++e)
            {
                // k, another settled corner, and the third still open.
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

/// Each particle's connected piece of the cloth, over the steps the geodesic search takes.
template <class T>
std::vector<std::int32_t> cloth_pieces(const TetherData<T>& d, const StepGraph<T>& graph)
{
    const std::size_t n = d.cloth.count();
    std::vector<std::int32_t> piece(n, -1);
    std::vector<std::size_t> stack;
    std::int32_t pieces = 0;
    for (std::size_t start = 0; start < n; ++start)
    {
        if (piece[start] >= 0)
            continue;
        piece[start] = pieces;
        stack.push_back(start);
        while (!stack.empty())
        {
            const std::size_t k = stack.back();
            stack.pop_back();
            graph.steps(k, [&](std::size_t next, T) {
                if (piece[next] < 0)
                {
                    piece[next] = pieces;
                    stack.push_back(next);
                }
            });
        }
        ++pieces;
    }
    return piece;
}

/// Euclidean: the nearest of `anchors` in the pose at creation among those in the particle's piece.
template <class T>
void nearest_in_pose(const TetherData<T>& d, std::span<const std::size_t> anchors, std::span<const std::int32_t> piece,
                     std::vector<std::int32_t>& anchor, std::vector<T>& dist)
{
    const std::size_t base = d.cloth.base();
    for (std::size_t k = 0; k < d.cloth.count(); ++k)
        for (const std::size_t a : anchors)
        {
            if (piece[a - base] != piece[k])
                continue;
            const T length = (d.pose[k] - d.pose[a - base]).norm();
            if (length < dist[k]) // strict: the first of equally near anchors in the list wins
            {
                dist[k] = length;
                anchor[k] = std::int32_t(a);
            }
        }
}

} // namespace simdverlet::detail
