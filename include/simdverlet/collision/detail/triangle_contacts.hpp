// Point-triangle contacts for self-collision: a particle may not come within the thickness of
// another part of a cloth's triangles, nor pass through one, for any thickness larger than how far
// a particle moves against the cloth in one substep (a contact is seen within the thickness). The particle
// pairs alone hold only while a particle cannot fit between a triangle's corners (a thickness of
// about 0.7 x spacing or more); these contacts hold a thin sheet, and let stacked layers rest a
// whole thickness apart instead of nesting in each other's grid squares.
//
// A contact is a particle within the thickness of a triangle's face (its projection inside the
// triangle). It is pushed to the side of the triangle it was on at the start of the step, measured
// from the previous positions, out to the thickness: a particle that crossed the face during the
// step goes back, not on through. The triangle's corners take the opposite push, shared by their
// barycentric weights and inverse masses. Contacts are found with the particle pairs, from the
// same grid and the same build positions, so the list's staleness rule covers both: a triangle is
// a convex combination of its corners, so a particle and a triangle close by at most the two
// largest moves, as two particles do. A particle keeps one triangle for each part of the sheet
// near it, the nearest (keep_nearest_per_patch): over a layer, every triangle within reach would
// push it the same way, a dozen times over.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "simdverlet/cloth/cloth.hpp"
#include "simdverlet/collision/detail/self_collision_candidates.hpp"
#include "simdverlet/collision/detail/triangle_tree.hpp"
#include "simdverlet/core/constraint_layers.hpp"
#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simd_lanes.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/self_collision.hpp"

namespace simdverlet::detail
{
/// A particle's candidate triangle at a list build: within `reach`, at squared distance d2.
template <class T>
struct TriangleCandidate
{
    std::int32_t particle, triangle;
    T d2;
    std::array<T, 3> offset; ///< the particle less its closest point on the triangle
};

/// The particle-triangle candidates of a self-collision range, and one pass's pushes. Acceleration
/// and scratch only, never state: every contact is evaluated from the current positions.
template <class T>
struct TriangleContacts
{
    /// The intact triangles of the stage's cloths inside its range, as particle indices, and for
    /// triangle t the particles it leaves alone (near_in_sheet), sorted:
    /// exempt[exempt_first[t] .. exempt_first[t + 1]). Remade only when the constraints or the
    /// range change (`made_for`): a torn spring, a removal, a new cloth.
    std::vector<std::array<std::int32_t, 3>> triangles;
    std::vector<std::uint32_t> exempt_first;
    std::vector<std::int32_t> exempt;
    std::array<std::uint64_t, 4> made_for = {~std::uint64_t(0), 0, 0, 0};
    /// Contact j is particle[j] against triangle (a[j], b[j], c[j]), absolute indices, ordered by
    /// triangle then particle; padded to a whole block with -1 (never live), `stride` in all.
    std::vector<std::int32_t> particle, a, b, c;
    std::size_t stride = 0;
    /// Pushes by record: contact j's on its particle is record j, on its corners stride + j,
    /// 2 stride + j and 3 stride + j.
    std::vector<T> push_x, push_y, push_z, push_touching;
    /// Particle k's (from the range's begin) records are record[first[k] .. first[k] + count[k]), in
    /// increasing order; `active` lists the particles with any.
    std::vector<std::uint32_t> first, count, record, active;
    /// Build scratch: the candidates each chunk found, then all of them by particle (particle k's
    /// from candidate_first[k]), and the (particle, triangle) contacts each chunk kept.
    std::vector<std::vector<TriangleCandidate<T>>> chunk_candidates;
    std::vector<TriangleCandidate<T>> candidates;
    std::vector<std::uint32_t> candidate_first;
    std::vector<std::vector<std::int32_t>> chunk_kept;
};

/// Whether a cloth's triangle still makes a surface: every edge that carries a spring is live. A
/// mesh cloth has a spring along each edge, or a bond of its implicit solve when made with a
/// material; a grid along two of each triangle's three, the cell's diagonal having none. A torn triangle's corners drift apart, so it no longer collides.
template <class T>
bool triangle_holds(const ConstraintLayers<T>& layers, const SolveBonds& bonds, const Cloth<T>& cloth,
                    const std::array<std::int32_t, 3>& tri)
{
    for (std::size_t e = 0; e < 3; ++e)
    {
        const auto u = std::size_t(tri[e]), v = std::size_t(tri[(e + 1) % 3]);
        if (cloth.is_grid())
        {
            const auto width = std::size_t(cloth.width());
            if (u % width != v % width && u / width != v / width) // the cell's diagonal
                continue;
        }
        if (!layers.joined(cloth.index(u), cloth.index(v)) && !bonds.joins(cloth.index(u), cloth.index(v)))
            return false;
    }
    return true;
}

template <class T>
void near_in_sheet(const ConstraintLayers<T>& layers, const std::array<std::int32_t, 3>& tri,
                   std::vector<std::int32_t>& out, const SolveBonds& bonds = {});

/// The triangles of `cloths` that hold (triangle_holds) and whose three corners lie in
/// [begin, end), as particle indices, in the cloths' order and each cloth's triangle order, and
/// the particles each leaves alone. A removed cloth has none. Kept while the constraints and the
/// range are the same.
template <class T>
void collect_triangles(TriangleContacts<T>& tc, std::span<const Cloth<T>> cloths, const ConstraintLayers<T>& layers,
                       const SolveBonds& bonds, std::size_t begin, std::size_t end)
{
    const std::array<std::uint64_t, 4> key{layers.edit_stamp(), begin, end, bonds.partners.size()};
    if (tc.made_for == key)
        return;
    tc.made_for = key;
    tc.triangles.clear();
    for (const Cloth<T>& cloth : cloths)
    {
        if (cloth.removed())
            continue;
        for (const auto& tri : cloth.triangles())
        {
            std::array<std::int32_t, 3> at;
            bool inside = true;
            for (std::size_t v = 0; v < 3; ++v)
            {
                const std::size_t i = cloth.index(std::size_t(tri[v]));
                inside = inside && i >= begin && i < end;
                at[v] = std::int32_t(i);
            }
            if (inside && triangle_holds(layers, bonds, cloth, tri))
                tc.triangles.push_back(at);
        }
    }
    tc.exempt_first.assign(1, 0);
    tc.exempt.clear();
    std::vector<std::int32_t> near;
    for (const auto& tri : tc.triangles)
    {
        near_in_sheet(layers, tri, near, bonds);
        tc.exempt.insert(tc.exempt.end(), near.begin(), near.end());
        tc.exempt_first.push_back(std::uint32_t(tc.exempt.size()));
    }
}

/// Particle k's records into per-particle lists (a counting sort over the records in order, so
/// each list is increasing), and the particles that have any.
template <class T>
void list_records(TriangleContacts<T>& tc, std::size_t begin, std::size_t n)
{
    tc.count.assign(n, 0);
    const std::size_t stride = tc.stride;
    const auto owner = [&](std::size_t r) -> std::int32_t {
        const std::size_t j = r % stride;
        const std::size_t corner = r / stride;
        return corner == 0 ? tc.particle[j] : corner == 1 ? tc.a[j] : corner == 2 ? tc.b[j] : tc.c[j];
    };
    for (std::size_t r = 0; r < 4 * stride; ++r)
        if (const std::int32_t i = owner(r); i >= 0)
            ++tc.count[std::size_t(i) - begin];
    tc.first.resize(n);
    std::uint32_t total = 0;
    tc.active.clear();
    for (std::size_t k = 0; k < n; ++k)
    {
        tc.first[k] = total;
        total += tc.count[k];
        if (tc.count[k] > 0)
            tc.active.push_back(std::uint32_t(k));
    }
    tc.record.resize(total);
    std::vector<std::uint32_t> fill(tc.first);
    for (std::size_t r = 0; r < 4 * stride; ++r)
        if (const std::int32_t i = owner(r); i >= 0)
            tc.record[fill[std::size_t(i) - begin]++] = std::uint32_t(r);
}

/// The particles within two springs of a triangle's corners, the corners included, sorted: those
/// the triangle leaves to the springs and the particle pairs. They lie in the sheet beside it, so a
/// push along its normal would turn the sheet's in-plane squeeze into a kick out of its plane; a
/// fold tighter than that is what the particle pairs stop. Neighbours are the live slots each
/// particle names, in every layer (a cloth's springs name each other both ways), and the bonds of
/// a material cloth's solve.
template <class T>
void near_in_sheet(const ConstraintLayers<T>& layers, const std::array<std::int32_t, 3>& tri,
                   std::vector<std::int32_t>& out, const SolveBonds& bonds)
{
    out.assign(tri.begin(), tri.end());
    std::size_t from = 0;
    for (int ring = 0; ring < 2; ++ring)
    {
        const std::size_t to = out.size();
        for (std::size_t k = from; k < to; ++k)
        {
            const auto i = std::size_t(out[k]);
            for (std::size_t l = 0; l < layers.count(); ++l)
            {
                const auto& layer = layers[l];
                if (!layer.covers(i))
                    continue;
                for (int slot = 0; slot < kSlots; ++slot)
                    if (layer.stiffness(i, slot) != T(0) && layer.neighbour(i, slot) >= 0)
                        out.push_back(layer.neighbour(i, slot));
            }
            if (i >= bonds.begin && i - bonds.begin + 1 < bonds.first.size())
                out.insert(out.end(), bonds.partners.begin() + std::ptrdiff_t(bonds.first[i - bonds.begin]),
                           bonds.partners.begin() + std::ptrdiff_t(bonds.first[i - bonds.begin + 1]));
        }
        from = to;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
}

/// The places e in [from, to) of the sorted points within `reach` of face f, in increasing order,
/// and their offsets from their closest points on it. The box [lo, hi] (the triangle's, grown by the reach) and the
/// plane sift a batch first: most points near a triangle are off to one side or in another layer.
/// Written once for V = T and a batch: the same arithmetic, the same places. The outputs need room
/// for to - from, and the arrays a batch past `to`.
template <class V, class T>
std::uint32_t near_face(const Face<T>& f, const T* x, const T* y, const T* z, std::uint32_t from, std::uint32_t to,
                        const Vec3<T>& lo, const Vec3<T>& hi, T reach, std::uint32_t* out, std::array<T, 3>* offset)
{
    constexpr auto L = std::uint32_t(simd::kLanesOf<V>);
    const V lo_x(lo.x()), lo_y(lo.y()), lo_z(lo.z()), hi_x(hi.x()), hi_y(hi.y()), hi_z(hi.z());
    const V ax(f.a[0]), ay(f.a[1]), az(f.a[2]), nx(f.n[0]), ny(f.n[1]), nz(f.n[2]), r(reach), r2(reach * reach);
    std::uint32_t found = 0;
    alignas(simd::kAlignment) T lanes_x[L], lanes_y[L], lanes_z[L];
    for (std::uint32_t e = from; e < to; e += L)
    {
        const V px = simd::load_at<V>(x + e), py = simd::load_at<V>(y + e), pz = simd::load_at<V>(z + e);
        const V height = nx * (px - ax) + ny * (py - ay) + nz * (pz - az);
        const auto sifted = (px >= lo_x) && (px <= hi_x) && (py >= lo_y) && (py <= hi_y) && (pz >= lo_z) &&
                            (pz <= hi_z) && (simd::abs(height) < r);
        if (!simd::any(sifted))
            continue;
        V dx, dy, dz;
        closest_offset(f, px, py, pz, height, nx, ny, nz, sifted, dx, dy, dz);
        const V d2 = dx * dx + dy * dy + dz * dz;
        // Written so that a degenerate triangle's NaN distance is not near.
        std::uint64_t bits = simd::lane_bits(sifted && (d2 < r2));
        if (to - e < L)
            bits &= (std::uint64_t(1) << (to - e)) - 1;
        simd::store_at(lanes_x, dx);
        simd::store_at(lanes_y, dy);
        simd::store_at(lanes_z, dz);
        for (; bits != 0; bits &= bits - 1)
        {
            const auto k = std::uint32_t(std::countr_zero(bits));
            out[found] = e + k;
            offset[found++] = {lanes_x[k], lanes_y[k], lanes_z[k]};
        }
    }
    return found;
}

/// Every (particle, triangle) of [begin, end) within `reach` of each other at the list's build,
/// leaving out the particles within two springs of the triangle's corners (near_in_sheet), from
/// the build's positions and grid (`list` just built), into tc.candidates by particle (a counting
/// sort: a particle's candidates in triangle order, from tc.candidate_first).
template <class T, class List>
void find_triangle_candidates(TriangleContacts<T>& tc, const List& list, const World<T>& world, std::size_t begin,
                              std::size_t end, T reach)
{
    const auto& grid = list.cells.grid;
    const std::size_t triangles = tc.triangles.size();
    const bool vectorized = world.vectorized();
    const auto at = [&](std::int32_t i) {
        const std::size_t k = std::size_t(i) - begin;
        return Vec3<T>(list.built_x[k], list.built_y[k], list.built_z[k]);
    };
    tc.chunk_candidates.resize(world.chunk_count(triangles));
    world.for_each_indexed_chunk(0, triangles, [&](std::size_t chunk, std::size_t chunk_begin, std::size_t chunk_end) {
        auto& found = tc.chunk_candidates[chunk];
        found.clear();
        std::vector<std::uint32_t> hits; // places in the sorted arrays near a face; grow, never shrink
        std::vector<std::array<T, 3>> hit_offset;
        for (std::size_t t = chunk_begin; t < chunk_end; ++t)
        {
            const auto& tri = tc.triangles[t];
            const std::int32_t* beside = tc.exempt.data() + tc.exempt_first[t];
            const std::int32_t* beside_end = tc.exempt.data() + tc.exempt_first[t + 1];
            const Vec3<T> a = at(tri[0]), b = at(tri[1]), c = at(tri[2]);
            if (!a.allFinite() || !b.allFinite() || !c.allFinite())
                continue;
            // The cells within reach of the triangle's box: those around its corners, merged.
            // (cells_around and its CellBox come from self_collision.hpp, which includes this header
            // before defining them: found when the template is instantiated.)
            const auto ca = cells_around(grid, a, reach), cb = cells_around(grid, b, reach),
                       cc = cells_around(grid, c, reach);
            const decltype(ca) box{std::min({ca.x0, cb.x0, cc.x0}), std::max({ca.x1, cb.x1, cc.x1}),
                                   std::min({ca.y0, cb.y0, cc.y0}), std::max({ca.y1, cb.y1, cc.y1}),
                                   std::min({ca.z0, cb.z0, cc.z0}), std::max({ca.z1, cb.z1, cc.z1})};
            const Vec3<T> lo = a.cwiseMin(b).cwiseMin(c).array() - reach;
            const Vec3<T> hi = a.cwiseMax(b).cwiseMax(c).array() + reach;
            const auto face = Face<T>::from(a, b, c);
            for (std::int64_t cz = box.z0; cz <= box.z1; ++cz)
                for (std::int64_t cy = box.y0; cy <= box.y1; ++cy)
                {
                    // A row of cells is one run of the sorted order.
                    const std::uint32_t from = list.cells.cell_start[std::size_t(grid.index(box.x0, cy, cz))];
                    const std::uint32_t to = list.cells.cell_start[std::size_t(grid.index(box.x1, cy, cz)) + 1];
                    if (hits.size() < to - from)
                    {
                        hits.resize(2 * (to - from));
                        hit_offset.resize(hits.size());
                    }
                    const std::uint32_t near = vectorized ? near_face<simd::Batch<T, xsimd::default_arch>>(
                                                                face, list.cells.sorted_x.data(),
                                                                list.cells.sorted_y.data(), list.cells.sorted_z.data(),
                                                                from, to, lo, hi, reach, hits.data(), hit_offset.data())
                                                          : near_face<T>(face, list.cells.sorted_x.data(),
                                                                         list.cells.sorted_y.data(),
                                                                         list.cells.sorted_z.data(), from, to, lo, hi,
                                                                         reach, hits.data(), hit_offset.data());
                    for (std::uint32_t h = 0; h < near; ++h)
                    {
                        const std::uint32_t e = hits[h];
                        const auto i = std::int32_t(begin + list.cells.by_cell[e]);
                        if (std::binary_search(beside, beside_end, i))
                            continue;
                        const auto& [dx, dy, dz] = hit_offset[h];
                        found.push_back({i, std::int32_t(t), dx * dx + dy * dy + dz * dz, hit_offset[h]});
                    }
                }
        }
    });
    // By particle, each particle's in triangle order: chunks come in triangle order.
    const std::size_t n = end - begin;
    tc.candidate_first.assign(n + 1, 0);
    for (const auto& found : tc.chunk_candidates)
        for (const auto& f : found)
            ++tc.candidate_first[std::size_t(f.particle) - begin + 1];
    for (std::size_t k = 0; k < n; ++k)
        tc.candidate_first[k + 1] += tc.candidate_first[k];
    tc.candidates.resize(tc.candidate_first[n]);
    std::vector<std::uint32_t> fill(tc.candidate_first.begin(), tc.candidate_first.end() - 1);
    for (const auto& found : tc.chunk_candidates)
        for (const auto& f : found)
            tc.candidates[fill[std::size_t(f.particle) - begin]++] = f;
}

/// Whether triangle u lies in the part of the sheet around triangle t: a corner of u among the
/// particles t leaves alone.
template <class T>
bool same_patch(const TriangleContacts<T>& tc, std::int32_t t, std::int32_t u)
{
    const std::int32_t* beside = tc.exempt.data() + tc.exempt_first[std::size_t(t)];
    const std::int32_t* beside_end = tc.exempt.data() + tc.exempt_first[std::size_t(t) + 1];
    const auto& tri = tc.triangles[std::size_t(u)];
    return std::any_of(tri.begin(), tri.end(),
                       [&](std::int32_t i) { return std::binary_search(beside, beside_end, i); });
}

/// A particle's contacts among its candidates: the nearest triangle of each part of the sheet
/// near it, on each side of it. Nearest first (ties by triangle index); a candidate is left to one
/// already kept if it lies in that one's patch (same_patch) on the same side of the particle (the
/// offsets to their closest points agree in direction). A particle over a layer then has one
/// contact there, not one for each of the dozen triangles within reach, and a particle between two
/// folds of one patch keeps both. A kept triangle is evaluated with an outside margin at least the
/// list's (triangle_push), so that a particle drifting off it before the list is rebuilt is still
/// held by it.
template <class T>
void keep_nearest_per_patch(const TriangleContacts<T>& tc, std::span<TriangleCandidate<T>> candidates,
                            std::vector<const TriangleCandidate<T>*>& kept)
{
    std::sort(candidates.begin(), candidates.end(), [](const TriangleCandidate<T>& l, const TriangleCandidate<T>& r) {
        return l.d2 < r.d2 || (l.d2 == r.d2 && l.triangle < r.triangle);
    });
    kept.clear();
    for (const auto& candidate : candidates)
    {
        const bool covered = std::any_of(kept.begin(), kept.end(), [&](const TriangleCandidate<T>* k) {
            const T along = k->offset[0] * candidate.offset[0] + k->offset[1] * candidate.offset[1] +
                            k->offset[2] * candidate.offset[2];
            return along > T(0) && along * along > T(0.5) * k->d2 * candidate.d2 &&
                   same_patch(tc, k->triangle, candidate.triangle);
        });
        if (!covered)
            kept.push_back(&candidate);
    }
}

/// The contacts of [begin, end) against the triangles, found with the particle pairs (`list`
/// just built, from its positions and grid), within `reach`: each particle's nearest triangle per
/// patch (keep_nearest_per_patch), ordered by particle then distance. Each particle's contacts
/// depend on its candidates alone: the same contacts, in one order, for any split.
template <class T, class List>
void build_triangle_contacts(TriangleContacts<T>& tc, const List& list, const World<T>& world, std::size_t begin,
                             std::size_t end, T reach)
{
    find_triangle_candidates(tc, list, world, begin, end, reach);
    const std::size_t n = end - begin;
    tc.chunk_kept.resize(world.chunk_count(n));
    world.for_each_indexed_chunk(0, n, [&](std::size_t chunk, std::size_t chunk_begin, std::size_t chunk_end) {
        auto& kept = tc.chunk_kept[chunk];
        kept.clear();
        std::vector<const TriangleCandidate<T>*> nearest;
        for (std::size_t k = chunk_begin; k < chunk_end; ++k)
        {
            const std::uint32_t from = tc.candidate_first[k], to = tc.candidate_first[k + 1];
            if (from == to)
                continue;
            keep_nearest_per_patch(tc, std::span(tc.candidates.data() + from, to - from), nearest);
            for (const auto* candidate : nearest)
            {
                kept.push_back(std::int32_t(begin + k));
                kept.push_back(candidate->triangle);
            }
        }
    });
    std::size_t contacts = 0;
    for (const auto& kept : tc.chunk_kept)
        contacts += kept.size() / 2;
    tc.stride = simd::padded_count<T>(contacts);
    for (auto* v : {&tc.particle, &tc.a, &tc.b, &tc.c})
        v->assign(tc.stride + simd::kPadLanes<T>, -1);
    std::size_t j = 0;
    for (const auto& kept : tc.chunk_kept)
        for (std::size_t f = 0; f < kept.size(); f += 2, ++j)
        {
            const auto& tri = tc.triangles[std::size_t(kept[f + 1])];
            tc.particle[j] = kept[f];
            tc.a[j] = tri[0];
            tc.b[j] = tri[1];
            tc.c[j] = tri[2];
        }
    list_records(tc, begin, n);
}

/// What one point-triangle contact does, written once for a scalar (V = T, M = bool) and a batch of
/// contacts: the particle's push, each corner's, and whether it touches (1, else 0, pushes 0).
template <class V>
struct TrianglePush
{
    V px, py, pz;
    std::array<V, 3> cx, cy, cz;
    V touching;
};

/// The contact of particle p with triangle (a, b, c). The projection of p on the triangle's plane
/// must fall inside the triangle and p lie within the thickness of the plane; the side it belongs
/// on is the side its previous position had of the triangle's previous point under it. The
/// particle and the triangle's point under it are then set the thickness apart on that side, with
/// the pair's relative sliding this step cut Coulomb-style by at most friction x depth, as between
/// two particles (pair_push). The correction is shared like a constraint's: the particle by its
/// inverse mass, each corner by its inverse mass times its barycentric weight, over the sum of
/// those weights squared, so the relative move is exactly the correction.
template <class T, class V, class M>
SIMDVERLET_INLINE TrianglePush<V> triangle_push(const kernels::BodyLanes<V>& p,
                                                const std::array<kernels::BodyLanes<V>, 3>& corner, const M& live,
                                                T thickness, T slack, T friction)
{
    const V zero(T(0)), one(T(1));
    const auto& [a, b, c] = corner;
    const V e0x = b.x - a.x, e0y = b.y - a.y, e0z = b.z - a.z;
    const V e1x = c.x - a.x, e1y = c.y - a.y, e1z = c.z - a.z;
    const V nx_raw = e0y * e1z - e0z * e1y, ny_raw = e0z * e1x - e0x * e1z, nz_raw = e0x * e1y - e0y * e1x;
    const V area2 = nx_raw * nx_raw + ny_raw * ny_raw + nz_raw * nz_raw;
    const V d00 = e0x * e0x + e0y * e0y + e0z * e0z, d11 = e1x * e1x + e1y * e1y + e1z * e1z;
    const V d01 = e0x * e1x + e0y * e1y + e0z * e1z;
    // A sliver whose area is lost in the rounding of its sides has no normal worth following.
    const M flat = area2 > V(T(1e-8)) * d00 * d11;
    const V len = simd::sqrt(simd::select(flat, area2, one));
    const V nx = nx_raw / len, ny = ny_raw / len, nz = nz_raw / len;
    const V rx = p.x - a.x, ry = p.y - a.y, rz = p.z - a.z;
    const V height = rx * nx + ry * ny + rz * nz;
    const V d20 = rx * e0x + ry * e0y + rz * e0z, d21 = rx * e1x + ry * e1y + rz * e1z;
    const V denom = simd::select(flat, d00 * d11 - d01 * d01, one);
    const V v = (d11 * d20 - d01 * d21) / denom, w = (d00 * d21 - d01 * d20) / denom;
    const V u = one - v - w;
    const V weights = p.w + u * u * a.w + v * v * b.w + w * w * c.w;
    // Inside, or outside an edge by at most the particle's height over the plane (in barycentric
    // units of the longer side): above a ridge where two triangles meet, each one's normal carries
    // the particle past the shared edge, out of both, by its height times the tangent of the turn;
    // this covers turns up to 45 degrees. And by at least `slack` of distance from any edge (over
    // an edge of length l the barycentric margin is distance x l / len; the longest side covers
    // all three): a particle keeps only its nearest triangle of a patch until the list is rebuilt,
    // and may drift that far off it. The particles beside a triangle in the sheet are exempt, so
    // the allowance never reaches a neighbour in the plane.
    const V e2x = c.x - b.x, e2y = c.y - b.y, e2z = c.z - b.z;
    const V longest = simd::sqrt(simd::max(simd::max(d00, d11), e2x * e2x + e2y * e2y + e2z * e2z));
    const V edge = -simd::max(simd::abs(height) / simd::sqrt(simd::max(d00, d11)), V(slack) * longest / len);
    // The side p had: its previous position against the previous point under it.
    const V qx = u * a.px + v * b.px + w * c.px, qy = u * a.py + v * b.py + w * c.py,
            qz = u * a.pz + v * b.pz + w * c.pz;
    const V before = (p.px - qx) * nx + (p.py - qy) * ny + (p.pz - qz) * nz;
    const V side = simd::select(before >= zero, one, V(T(-1)));
    const V above = side * height;
    const M near = live && flat && (u >= edge) && (v >= edge) && (w >= edge) && (above < V(thickness)) &&
                   (above > -V(thickness)) && (weights > zero);
    if (!simd::any(near))
        return {zero, zero, zero, {zero, zero, zero}, {zero, zero, zero}, {zero, zero, zero}, zero};
    const V sx = side * nx, sy = side * ny, sz = side * nz;
    const V depth = V(thickness) - above;
    // Sliding between p and the point under it this step.
    const V vx = (p.x - p.px) - (u * (a.x - a.px) + v * (b.x - b.px) + w * (c.x - c.px));
    const V vy = (p.y - p.py) - (u * (a.y - a.py) + v * (b.y - b.py) + w * (c.y - c.py));
    const V vz = (p.z - p.pz) - (u * (a.z - a.pz) + v * (b.z - b.pz) + w * (c.z - c.pz));
    const V vn = vx * sx + vy * sy + vz * sz;
    const V tx = vx - vn * sx, ty = vy - vn * sy, tz = vz - vn * sz;
    const V slide = simd::sqrt(tx * tx + ty * ty + tz * tz);
    const V slip = simd::select(slide > zero, simd::min(one, V(friction) * depth / slide), zero);
    const V kx = depth * sx - slip * tx, ky = depth * sy - slip * ty, kz = depth * sz - slip * tz;
    const V inv = one / simd::select(near, weights, one);
    const V share_p = p.w * inv;
    const std::array<V, 3> share{-(a.w * u * inv), -(b.w * v * inv), -(c.w * w * inv)};
    TrianglePush<V> out;
    out.px = simd::select(near, share_p * kx, zero);
    out.py = simd::select(near, share_p * ky, zero);
    out.pz = simd::select(near, share_p * kz, zero);
    for (std::size_t k = 0; k < 3; ++k)
    {
        out.cx[k] = simd::select(near, share[k] * kx, zero);
        out.cy[k] = simd::select(near, share[k] * ky, zero);
        out.cz[k] = simd::select(near, share[k] * kz, zero);
    }
    out.touching = simd::select(near, one, zero);
    return out;
}

/// Evaluates contacts [j_begin, j_end) (j_begin a whole number of batches) from the unchanged
/// positions into their four push records; returns how many touch. V is T (one contact at a time)
/// or a batch.
template <class V, class T>
T evaluate_triangle_contacts(TriangleContacts<T>& tc, const StateArrays<T>& s, std::size_t n, std::size_t j_begin,
                             std::size_t j_end, T thickness, T slack, T friction)
{
    constexpr std::size_t L = simd::kLanesOf<V>;
    const std::size_t stride = tc.stride;
    T *const push_x = tc.push_x.data(), *const push_y = tc.push_y.data(), *const push_z = tc.push_z.data(),
             *const push_touching = tc.push_touching.data();
    const auto body = [&](const std::int32_t* index) {
        const auto at = simd::lane_index<V>(index, n, false);
        return kernels::BodyLanes<V>{simd::read_lanes<V>(s.x, at),
                                     simd::read_lanes<V>(s.y, at),
                                     simd::read_lanes<V>(s.z, at),
                                     simd::read_lanes<V>(s.px, at),
                                     simd::read_lanes<V>(s.py, at),
                                     simd::read_lanes<V>(s.pz, at),
                                     s.inv_mass ? simd::read_lanes<V>(s.inv_mass, at) : V(T(1))};
    };
    T found = 0;
    for (std::size_t j = j_begin; j < j_end; j += L)
    {
        const auto live = simd::present_lanes<V>(tc.particle.data() + j);
        const auto push = triangle_push(body(tc.particle.data() + j),
                                        {body(tc.a.data() + j), body(tc.b.data() + j), body(tc.c.data() + j)}, live,
                                        thickness, slack, friction);
        simd::store_at(push_x + j, push.px);
        simd::store_at(push_y + j, push.py);
        simd::store_at(push_z + j, push.pz);
        simd::store_at(push_touching + j, push.touching);
        for (std::size_t k = 0; k < 3; ++k)
        {
            const std::size_t r = (k + 1) * stride + j;
            simd::store_at(push_x + r, push.cx[k]);
            simd::store_at(push_y + r, push.cy[k]);
            simd::store_at(push_z + r, push.cz[k]);
            simd::store_at(push_touching + r, push.touching);
        }
        found += simd::sum_lanes(push.touching);
    }
    return found;
}

/// One pass over the point-triangle contacts: every contact evaluated from the unchanged positions,
/// then every particle with contacts moved by the average of its pushes (settle, as the particle
/// pairs' pass does). Each sweep writes only its own records or particles: the same bits for any
/// split, vector or scalar. Returns the contacts that touch.
template <class T, class Settle>
int resolve_triangle_pass(TriangleContacts<T>& tc, const World<T>& world, const StateArrays<T>& s, std::size_t begin,
                          std::size_t n, T thickness, T slack, T friction, Settle&& settle)
{
    if (tc.stride == 0)
        return 0;
    for (auto* push : {&tc.push_x, &tc.push_y, &tc.push_z, &tc.push_touching})
        push->resize(4 * tc.stride + simd::kPadLanes<T>);
    std::atomic<int> touching{0};
    world.for_each_chunk(tc.stride, [&](std::size_t chunk_begin, std::size_t chunk_end) {
        const T found = world.vectorized() ? evaluate_triangle_contacts<simd::Batch<T, xsimd::default_arch>>(
                                                 tc, s, begin + n, chunk_begin, chunk_end, thickness, slack, friction)
                                           : evaluate_triangle_contacts<T>(tc, s, begin + n, chunk_begin, chunk_end,
                                                                           thickness, slack, friction);
        touching.fetch_add(int(found), std::memory_order_relaxed);
    });
    const kernels::PushArrays<T> pushes{tc.push_x.data(), tc.push_y.data(), tc.push_z.data(), tc.push_touching.data()};
    world.for_each_chunk(tc.active.size(), [&](std::size_t chunk_begin, std::size_t chunk_end) {
        kernels::settle_pushes_scalar(s, pushes, tc.active.data(), chunk_begin, chunk_end, begin, tc.first.data(),
                                      tc.count.data(), tc.record.data(), settle);
    });
    return touching.load();
}
} // namespace simdverlet::detail
