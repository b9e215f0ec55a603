// The arithmetic of a triangle-mesh collider's contacts, written once over V (a scalar or a
// batch) so the vector path and the scalar twin are the same: the swept and closest-point tests of
// a lane group against a list of triangles, and the contact plane per_call detection plans for the
// call. TriangleMeshCollider (collision/mesh_collider.hpp) chooses which triangles and particles.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "simdverlet/collision/collider.hpp"
#include "simdverlet/collision/detail/triangle_tree.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/projection.hpp"

namespace simdverlet::detail
{

/// The triangles a mesh collider tests, as the contact kernels read them.
template <class T>
struct MeshFaces
{
    std::span<const Face<T>> faces;    ///< tree order
    std::span<const Face<T>> previous; ///< where they were before the unswept motion, for a moving mesh
    std::span<const Bounds<T>> boxes;  ///< each face's bounds, grown over its last motion
    T reach = T(0);                    ///< thickness + margin
    bool two_sided = true;
};

/// A lane's contact for a call under per_call detection: no triangle within reach of its box, one
/// plane that stands for every triangle near it, or the exact tests.
template <class T>
inline constexpr T kPlanNone = T(0);
template <class T>
inline constexpr T kPlanPlane = T(1);
template <class T>
inline constexpr T kPlanExact = T(2);
/// How far, as a fraction of the reach, a corner of a triangle near a particle's box may stand
/// in front of the particle's contact plane for the plane alone to stand in for the mesh. A
/// particle held by its plane keeps at least (1 - this) x reach from every triangle; it cannot
/// cross one.
template <class T>
inline constexpr T kPlaneTolerance = T(0.25);

/// What plan_contact finds for a lane group: the mode (kPlan*), and for kPlanPlane the plane
/// n . x >= offset. `found` is false when no lane found a triangle: then only the mode is set.
template <class V>
struct ContactPlan
{
    V mode, nx, ny, nz, offset;
    bool found;
};

/// Whether the point r, where a segment crossed the plane at fraction t of the step, lies
/// inside the triangle (where it was then, for a moving mesh), barycentric slack `tolerance`.
template <bool kMoving, class T, class V>
auto inside_triangle(const Face<T>& f0, const Face<T>& f, const V& t, const V& rx, const V& ry, const V& rz,
                     T tolerance)
{
    V ax(f.a[0]), ay(f.a[1]), az(f.a[2]);
    V e1x(f.e1[0]), e1y(f.e1[1]), e1z(f.e1[2]);
    V e2x(f.e2[0]), e2y(f.e2[1]), e2z(f.e2[2]);
    V e11(f.e11), e12(f.e12), e22(f.e22), inv_gram(f.inv_gram);
    if constexpr (kMoving)
    {
        // The triangle where it was at t, moving each corner on a straight line.
        const auto lerp = [&](T from, T to) -> V { return V(from) + t * V(to - from); };
        ax = lerp(f0.a[0], f.a[0]), ay = lerp(f0.a[1], f.a[1]), az = lerp(f0.a[2], f.a[2]);
        e1x = lerp(f0.e1[0], f.e1[0]), e1y = lerp(f0.e1[1], f.e1[1]), e1z = lerp(f0.e1[2], f.e1[2]);
        e2x = lerp(f0.e2[0], f.e2[0]), e2y = lerp(f0.e2[1], f.e2[1]), e2z = lerp(f0.e2[2], f.e2[2]);
        e11 = e1x * e1x + e1y * e1y + e1z * e1z;
        e12 = e1x * e2x + e1y * e2y + e1z * e2z;
        e22 = e2x * e2x + e2y * e2y + e2z * e2z;
        inv_gram = V(T(1)) / simd::max(e11 * e22 - e12 * e12, V(std::numeric_limits<T>::min()));
    }
    const V px = rx - ax, py = ry - ay, pz = rz - az;
    const V d1 = e1x * px + e1y * py + e1z * pz;
    const V d2 = e2x * px + e2y * py + e2z * pz;
    const V v = (e22 * d1 - e12 * d2) * inv_gram;
    const V w = (e11 * d2 - e12 * d1) * inv_gram;
    const V low(-tolerance);
    return (v >= low) && (w >= low) && (v + w <= V(T(1) + tolerance));
}

/// The contact normal of the nearest triangle's offset q (a point minus its closest point) on
/// a triangle of normal fn (toward the point when two-sided): along q, except where q has no
/// direction (a point on the surface) or, one-sided, points inward, where the face normal
/// decides (`face`). Also |q| and q . fn.
template <class V>
struct ClosestNormal
{
    V nx, ny, nz, d, s;
    decltype(V() < V()) face;
};
template <class V>
ClosestNormal<V> closest_normal(const Nearest<V>& q, bool two_sided)
{
    using T = simd::Scalar<V>;
    const V d = simd::sqrt(q.d2);
    const V s = q.qx * q.fnx + q.qy * q.fny + q.qz * q.fnz;
    auto face = d < V(kTinyLength<T>);
    if (!two_sided)
        face = face || (s < V(T(0)));
    const V inv_d = V(T(1)) / simd::max(d, V(kTinyLength<T>));
    return {simd::select(face, q.fnx, q.qx * inv_d),
            simd::select(face, q.fny, q.qy * inv_d),
            simd::select(face, q.fnz, q.qz * inv_d),
            d,
            s,
            face};
}

/// The most n . q over the points q of face f's plane within sqrt(r2) of px, for n . px =
/// n_px: they form a disk around px's foot on that plane, whose radius shrinks with px's
/// distance from it, and n rises across the disk by the sine of its angle to the face's normal.
/// A bound for the face's own points there; either sign of the face's normal gives the same.
template <class T, class V>
V disk_most(const Face<T>& f, const kernels::ParticleLanes<V>& p, const V& nx, const V& ny, const V& nz, const V& n_px,
            const V& r2)
{
    const V zero(T(0));
    const V fx(f.n[0]), fy(f.n[1]), fz(f.n[2]);
    const V cos = nx * fx + ny * fy + nz * fz;
    const V height = (p.px - V(f.a[0])) * fx + (p.py - V(f.a[1])) * fy + (p.pz - V(f.a[2])) * fz;
    const V radius = simd::sqrt(simd::max(zero, r2 - height * height));
    const V sin = simd::sqrt(simd::max(zero, V(T(1)) - cos * cos));
    return n_px - height * cos + radius * sin;
}

/// Each lane of `lanes`: its contact for the call, from where the substep started (px, on
/// the legal side of every triangle as the last pass left it): the nearest feature of the
/// triangles near its box gives the plane; the plane stands for the mesh if every one of
/// those triangles lies behind it (kPlanPlane), else the lane takes the exact tests (kPlanExact).
template <class T, class V, class M>
ContactPlan<V> plan_contact(const MeshFaces<T>& mesh, const kernels::ParticleLanes<V>& p, const M& lanes,
                            const V (&box_lo)[3], const V (&box_hi)[3], const std::vector<std::uint32_t>& faces)
{
    const V zero(T(0)), one(T(1)), reach(mesh.reach);
    V lo[3], hi[3];
    for (int k = 0; k < 3; ++k)
    {
        lo[k] = box_lo[k] - reach;
        hi[k] = box_hi[k] + reach;
    }
    const auto near_box = [&](std::uint32_t f) {
        const Bounds<T>& box = mesh.boxes[f];
        return lanes && (lo[0] <= V(box.hi[0])) && (hi[0] >= V(box.lo[0])) && (lo[1] <= V(box.hi[1])) &&
               (hi[1] >= V(box.lo[1])) && (lo[2] <= V(box.hi[2])) && (hi[2] >= V(box.lo[2]));
    };
    // A triangle farther from px than the box's farthest corner plus the reach is out of reach
    // of the whole box: the search starts there, so that it never finds one.
    V far2 = zero;
    for (int k = 0; k < 3; ++k)
    {
        const V c = k == 0 ? p.px : k == 1 ? p.py : p.pz;
        const V out = simd::max(c - lo[k], hi[k] - c); // lo, hi already grown by the reach
        far2 = far2 + out * out;
    }
    Nearest<V> nearest(far2); // to px
    M found = lanes && (zero != zero);
    // Which lanes each triangle is near, kept for the second loop where the list is short
    // enough (nearly always): the box test is most of the cost of a triangle no lane needs.
    constexpr std::size_t kKept = 64;
    std::array<M, kKept> near_of;
    const bool keep = faces.size() <= kKept;
    for (std::size_t at = 0; at < faces.size(); ++at)
    {
        const std::uint32_t k = faces[at];
        const M near = near_box(k);
        if (keep)
            near_of[at] = near;
        if (!simd::any(near))
            continue;
        const Face<T>& f = mesh.faces[k];
        const V nx(f.n[0]), ny(f.n[1]), nz(f.n[2]);
        const V s0 = (p.px - V(f.a[0])) * nx + (p.py - V(f.a[1])) * ny + (p.pz - V(f.a[2])) * nz;
        // No point of the triangle is nearer than its plane.
        const M could = near && (s0 * s0 < nearest.d2);
        if (!simd::any(could))
            continue;
        const V side = mesh.two_sided ? simd::select(s0 < zero, V(-one), one) : one;
        // Not inside ||: for the scalar twin that would skip the triangle once one was found.
        const M closer = nearest.consider(f, p.px, p.py, p.pz, s0, nx, ny, nz, side, could);
        found = found || closer;
    }
    if (!simd::any(found))
        return {.mode = zero, .nx = zero, .ny = zero, .nz = zero, .offset = zero, .found = false};
    // The normal as the exact test takes it.
    const auto normal = closest_normal(nearest, mesh.two_sided);
    const V &nx = normal.nx, &ny = normal.ny, &nz = normal.nz;
    // n . the closest point
    const V foot = nx * (p.px - nearest.qx) + ny * (p.py - nearest.qy) + nz * (p.pz - nearest.qz);
    // How far the triangles near the box stand in front of the plane through the closest point,
    // counting only their points within the particle's reach from the box: those lie within
    // far2 of px, so on a triangle's plane within the disk that ball cuts from it. Its whole
    // triangle would count the far corners of a neighbour across a shallow concave crease
    // (a mesh's smooth hollow) and send the lane to the exact tests.
    const V n_px = nx * p.px + ny * p.py + nz * p.pz;
    const V tolerance(kPlaneTolerance<T> * mesh.reach);
    V ahead(std::numeric_limits<T>::lowest());
    for (std::size_t at = 0; at < faces.size(); ++at)
    {
        const std::uint32_t k = faces[at];
        const M near = keep ? near_of[at] : near_box(k);
        if (!simd::any(near))
            continue;
        const Face<T>& f = mesh.faces[k];
        const V na = nx * V(f.a[0]) + ny * V(f.a[1]) + nz * V(f.a[2]);
        const V n1 = nx * V(f.e1[0]) + ny * V(f.e1[1]) + nz * V(f.e1[2]);
        const V n2 = nx * V(f.e2[0]) + ny * V(f.e2[1]) + nz * V(f.e2[2]);
        V most = na + simd::max(zero, simd::max(n1, n2)) - foot; // its corners
        // The disk's bound costs two roots: only where the corners' would spoil the plane.
        if (simd::any(near && (most > tolerance)))
            most = simd::min(most, disk_most(f, p, nx, ny, nz, n_px, far2) - foot);
        ahead = simd::select(near, simd::max(ahead, most), ahead);
    }
    const V mode = simd::select(found, simd::select(ahead <= tolerance, V(kPlanPlane<T>), V(kPlanExact<T>)),
                                V(kPlanNone<T>));
    return {.mode = mode, .nx = nx, .ny = ny, .nz = nz, .offset = foot + reach, .found = true};
}

/// The contact of lanes `movable` with the triangles `faces`: the earliest crossing of the
/// swept segment if there is one, else the closest triangle within reach. kMoving sweeps
/// against the mesh's motion since the last pass.
template <bool kMoving, class T, class V, class M>
M mesh_contact(const MeshFaces<T>& mesh, kernels::ParticleLanes<V>& p, const M& movable,
               const std::vector<std::uint32_t>& faces, const ContactMaterial<T>& material)
{
    const V zero(T(0)), one(T(1)), reach(mesh.reach);
    // Each lane's swept bounds: a triangle outside them is skipped by that lane whatever the
    // list holds, which is what makes the list's age invisible in the result.
    const V lo_x = simd::min(p.x, p.px) - reach, hi_x = simd::max(p.x, p.px) + reach;
    const V lo_y = simd::min(p.y, p.py) - reach, hi_y = simd::max(p.y, p.py) + reach;
    const V lo_z = simd::min(p.z, p.pz) - reach, hi_z = simd::max(p.z, p.pz) + reach;
    V best_t(T(2));                                              // earliest crossing, as a fraction of the step
    V hit_nx = zero, hit_ny = zero, hit_nz = zero, hit_s = zero; // its normal, and x's distance along it
    Nearest<V> nearest(reach * reach);                           // the closest triangle within reach, to p
    const T tolerance = T(1e-5);                                 // barycentric slack: a seam belongs to both sides
    for (const std::uint32_t k : faces)
    {
        const Bounds<T>& box = mesh.boxes[k];
        const M near = movable && (lo_x <= V(box.hi[0])) && (hi_x >= V(box.lo[0])) && (lo_y <= V(box.hi[1])) &&
                       (hi_y >= V(box.lo[1])) && (lo_z <= V(box.hi[2])) && (hi_z >= V(box.lo[2]));
        if (!simd::any(near))
            continue;
        const Face<T>& f = mesh.faces[k];
        const Face<T>& f0 = kMoving ? mesh.previous[k] : f;
        const V nx(f.n[0]), ny(f.n[1]), nz(f.n[2]);
        const V s1 = (p.x - V(f.a[0])) * nx + (p.y - V(f.a[1])) * ny + (p.z - V(f.a[2])) * nz;
        const V s0 = (p.px - V(f0.a[0])) * V(f0.n[0]) + (p.py - V(f0.a[1])) * V(f0.n[1]) +
                     (p.pz - V(f0.a[2])) * V(f0.n[2]);
        M cross = (s0 >= zero) && (s1 < zero);
        if (mesh.two_sided)
            cross = (cross && (s0 > zero)) || ((s0 < zero) && (s1 > zero));
        cross = cross && near;
        // The side px is on; a one-sided mesh has only the front.
        const V side = mesh.two_sided ? simd::select(s0 < zero, V(-one), one) : one;
        if (simd::any(cross))
        {
            const V t = s0 / simd::select(cross, s0 - s1, one);
            const V rx = p.px + t * (p.x - p.px), ry = p.py + t * (p.y - p.py), rz = p.pz + t * (p.z - p.pz);
            const M inside = inside_triangle<kMoving>(f0, f, t, rx, ry, rz, tolerance);
            const M hit = cross && inside && (t < best_t);
            best_t = simd::select(hit, t, best_t);
            hit_nx = simd::select(hit, nx * side, hit_nx);
            hit_ny = simd::select(hit, ny * side, hit_ny);
            hit_nz = simd::select(hit, nz * side, hit_nz);
            hit_s = simd::select(hit, s1 * side, hit_s);
        }
        // No point of the triangle is nearer than its plane: most candidates stop here.
        const M flat = near && (s1 < reach) && (s1 > -reach);
        if (!simd::any(flat))
            continue;
        nearest.consider(f, p.x, p.y, p.z, s1, nx, ny, nz, side, flat);
    }
    const M swept = best_t < V(T(2));
    const M close = !swept && movable && (nearest.d2 < reach * reach);
    const M active = swept || close;
    if (!simd::any(active))
        return active;
    const auto normal = closest_normal(nearest, mesh.two_sided);
    const V &cnx = normal.nx, &cny = normal.ny, &cnz = normal.nz;
    const V close_depth = reach - simd::select(normal.face, normal.s, normal.d);
    const V nx = simd::select(swept, hit_nx, cnx);
    const V ny = simd::select(swept, hit_ny, cny);
    const V nz = simd::select(swept, hit_nz, cnz);
    const V depth = simd::select(swept, reach - hit_s, close_depth);
    return respond(p, nx, ny, nz, depth, active, material);
}

// ---- the plan per_call detection keeps through a call ----

template <class T>
struct MeshBlock
{
    Bounds<T> inner;                  // where the block's particles may go and keep the list
    T reach = T(0);                   // the reach it was built for: it covers inner grown by that
    std::uint64_t stamp = 0;          // the collider's stamp when built; 0: never
    std::vector<std::uint32_t> faces; // triangles (tree order) within that reach of inner
};

/// A block of particles' share of a call's plan: kBlock consecutive ones, or a tile.
template <class T>
struct MeshPlanBlock
{
    std::uint64_t call = 0;           // the call it was made for; 0: never
    std::uint64_t stamp = 0;          // the collider's stamp then
    T reach = T(0);                   // its reach then
    std::size_t particles = 0;        // the state's size then: a removal renumbers particles
    Bounds<T> box;                    // the union of its particles' boxes
    Bounds<T> inner;                  // the box faces was listed for, holding `box`
    std::uint64_t list_stamp = 0;     // the stamp when listed; 0: never
    T list_reach = T(0);              // its reach then
    std::vector<std::uint32_t> faces; // triangles (tree order) within reach of inner
};

/// What per_call detection keeps for each particle through a call: the box its motion was
/// predicted to stay in, and what to do while it does (kPlanNone, kPlanPlane or
/// kPlanExact), with the plane n . x >= offset for kPlanPlane. Block k's particles are at [k * lanes, (k + 1) *
/// lanes) of the arrays: for runs, the particle's own index; for a grid's tiles, its lane.
template <class T>
struct MeshCallPlan
{
    std::array<std::vector<T>, 3> lo, hi, n;
    std::vector<T> offset, mode;
    std::vector<MeshPlanBlock<T>> blocks;

    void resize(std::size_t block_count, std::size_t lanes)
    {
        blocks.resize(block_count);
        // Whole blocks, so that a vector pass reads and writes whole lane groups.
        const std::size_t padded = block_count * lanes;
        for (auto* a : {&lo[0], &lo[1], &lo[2], &hi[0], &hi[1], &hi[2], &n[0], &n[1], &n[2], &offset, &mode})
            a->resize(padded);
    }
};

template <class T>
struct MeshTiledGrid
{
    ParticleGrid grid;
    std::vector<MeshBlock<T>> tiles; // row group by row group, left to right within one
    MeshCallPlan<T> plan;            // per_call, tile by tile in the same order
};

/// Lanes of `lanes` outside their box [lo, hi] at either end of their substep. Written as "not
/// inside", so a NaN coordinate counts as outside.
template <class V, class M>
M outside(const kernels::ParticleLanes<V>& p, const M& lanes, const V (&lo)[3], const V (&hi)[3])
{
    const auto inside = [&](int k, const V& a, const V& c) {
        return (a >= lo[k]) && (a <= hi[k]) && (c >= lo[k]) && (c <= hi[k]);
    };
    return lanes && !(inside(0, p.x, p.px) && inside(1, p.y, p.py) && inside(2, p.z, p.pz));
}

/// Lanes of `lanes` outside the boxes their plans at plan[i...] were made for.
template <class T, class V, class M>
M outside_plans(const MeshCallPlan<T>& plan, const kernels::ParticleLanes<V>& p, const M& lanes, std::size_t i)
{
    V lo[3], hi[3];
    for (int k = 0; k < 3; ++k)
    {
        lo[k] = simd::load_at<V>(plan.lo[k].data() + i);
        hi[k] = simd::load_at<V>(plan.hi[k].data() + i);
    }
    return outside(p, lanes, lo, hi);
}

/// Empty boxes and no contact for plan entries [b, e).
template <class T>
void clear_plans(MeshCallPlan<T>& plan, std::size_t b, std::size_t e)
{
    for (int k = 0; k < 3; ++k)
    {
        std::fill(plan.lo[k].begin() + std::ptrdiff_t(b), plan.lo[k].begin() + std::ptrdiff_t(e),
                  std::numeric_limits<T>::max());
        std::fill(plan.hi[k].begin() + std::ptrdiff_t(b), plan.hi[k].begin() + std::ptrdiff_t(e),
                  std::numeric_limits<T>::lowest());
    }
    std::fill(plan.mode.begin() + std::ptrdiff_t(b), plan.mode.begin() + std::ptrdiff_t(e), kPlanNone<T>);
}

/// Adds the boxes of plan entries [b, e) to `box`. An empty one (lo = max, hi = lowest) adds
/// nothing, so no lane needs a test.
template <class T>
void add_boxes(const MeshCallPlan<T>& plan, Bounds<T>& box, std::size_t b, std::size_t e)
{
    for (int k = 0; k < 3; ++k)
    {
        // In locals: through the reference, every step would store and reload the bound.
        T lo = box.lo[k], hi = box.hi[k];
        const T* los = plan.lo[k].data();
        const T* his = plan.hi[k].data();
        for (std::size_t i = b; i < e; ++i)
        {
            lo = std::min(lo, los[i]);
            hi = std::max(hi, his[i]);
        }
        box.lo[k] = lo;
        box.hi[k] = hi;
    }
}

/// Writes v into the lanes `lanes` of a[i...], keeping the others.
template <class T, class V, class M>
void store_lanes(std::vector<T>& a, std::size_t i, const M& lanes, const V& v)
{
    simd::store_at(a.data() + i, simd::select(lanes, v, simd::load_at<V>(a.data() + i)));
}

} // namespace simdverlet::detail
