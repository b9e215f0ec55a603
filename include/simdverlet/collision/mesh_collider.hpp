// Triangle-mesh colliders: a body, a sofa, a car seat, anything modelled rather than written as a
// formula. A TriangleMeshCollider goes into any ColliderSet and answers contacts through the same
// response as the analytic shapes (position-level friction, restitution, margin).
//
// Two tests per particle and triangle, both written once over V so the vector and scalar paths
// are the same arithmetic:
// - swept: the segment from the previous position to the new one is tested against each
//   triangle's plane, and a crossing inside the triangle puts the particle back on the side it
//   came from. However fast a particle moves it cannot pass through within one step, and a
//   crossing on the shared edge of two triangles is inside both (the inside test has a small
//   tolerance), so it cannot slip through the seam either;
// - closest point: a particle closer than thickness + margin to the nearest triangle (face, edge
//   or vertex) is pushed out to that distance.
//
// Why batches of particles and not a tree walk per particle: a walk costs 100-200 ns, more than
// the contact itself. Particles are visited in blocks of consecutive indices (neighbours on a
// cloth), or, told a cloth's grid (set_particle_grids), in square tiles of it; each block or tile
// keeps the triangles near its swept bounds, and each candidate triangle is tested against a
// whole register of particles at once. A block's list is kept while its
// particles stay inside a margin around the bounds it was built for and the mesh has not moved.
// Each particle tests only the triangles whose bounds overlap its own swept bounds, so the
// result never depends on how stale or generous a list is: a step gives the same bits with a
// fresh list and an old one, for any thread count.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "simdverlet/cloth/triangle_mesh.hpp"
#include "simdverlet/collision/collider.hpp"
#include "simdverlet/collision/detail/mesh_contact.hpp"
#include "simdverlet/collision/detail/triangle_tree.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simd_lanes.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/projection.hpp"

namespace simdverlet
{

/// When a TriangleMeshCollider looks for the triangles near each particle.
enum class ContactDetection
{
    /// Once per call of step(): each particle's nearest feature becomes a contact plane, kept for
    /// the call's substeps while the particle stays inside the box its motion was predicted to
    /// fill; one that leaves it is planned again from where it is. A substep costs a plane test.
    per_call,
    /// Every substep: the swept and closest-point tests against every triangle near each
    /// particle. The exact contact of every substep, at several times the cost.
    per_substep,
};

/// A triangle mesh particles collide with, static or animated (set_vertices each frame). Two-sided
/// by default: a shell `thickness` deep on both sides of every triangle, for open surfaces (a
/// sail, a wall, a car seat). One-sided keeps particles on the outer side of a closed body, the
/// side the counter-clockwise winding faces: a particle found behind a triangle, within reach, is
/// pushed out to the front.
template <class T>
class TriangleMeshCollider : public Collider<T>
{
  public:
    ColliderKind kind() const noexcept override { return ColliderKind::triangle_mesh; }

    struct Shape
    {
        std::vector<Vec3<T>> vertices;                      ///< world positions, all finite
        std::vector<std::array<std::int32_t, 3>> triangles; ///< indices into vertices
        T thickness = T(0.01); ///< finite and > 0, world units: how close a particle may come to a triangle
                               ///< (on both sides when two_sided), before the material's margin
        bool two_sided = true; ///< false: a closed body, outside = the side counter-clockwise winding faces
        MeshRepair repair = MeshRepair::drop; ///< zero-area and repeated triangles: dropped, reported by repairs()
                                              ///< and logged (assets carry a few), or refused
        ContactDetection detection = ContactDetection::per_call; ///< see ContactDetection
    };

    /// Sanitizes the mesh as sanitize_mesh does, except that every vertex is kept, numbered as
    /// given, so that set_vertices takes the same vertex buffer: triangles() are the ones kept.
    explicit TriangleMeshCollider(Shape shape, const ContactMaterial<T>& material = {}) : Collider<T>(material)
    {
        check_thickness(shape.thickness);
        TriangleMesh<T> mesh{.vertices = std::move(shape.vertices), .triangles = std::move(shape.triangles)};
        m_repairs = detail::repair_mesh(mesh, shape.repair, "mesh collider", detail::UnusedVertices::keep);
        detail::log_repairs(m_repairs, "mesh collider");
        m_thickness = shape.thickness;
        m_two_sided = shape.two_sided;
        m_detection = shape.detection;
        m_vertices = std::move(mesh.vertices);
        m_triangles = std::move(mesh.triangles);
        build();
    }

    /// Moves the mesh: the same vertex count and triangles, new positions (a frame of an
    /// animation). The tree is refitted, not rebuilt. The next pass sweeps every particle against
    /// the mesh's motion since the pass before (from where each triangle was to where it is), so
    /// a mesh moving faster than a thickness a frame still cannot pass through a particle. Throws
    /// naming the vertex or the triangle that a bad position would break (a triangle collapsing
    /// to zero area included: the triangles cannot change now), and then keeps the mesh as it was.
    void set_vertices(std::vector<Vec3<T>> vertices)
    {
        if (vertices.size() != m_vertices.size())
            detail::raise<std::invalid_argument>("simdverlet: mesh collider set_vertices got " +
                                                 std::to_string(vertices.size()) + " vertices, but the mesh has " +
                                                 std::to_string(m_vertices.size()));
        detail::check_mesh(vertices, m_triangles, "mesh collider");
        // Unswept motion accumulates: two calls between passes sweep from the first position.
        if (!m_moving)
            m_previous_faces = m_faces;
        m_vertices = std::move(vertices);
        m_moving = true;
        compute_faces();
        for (std::size_t k = 0; k < m_faces.size(); ++k)
            m_boxes[k].add(face_bounds(m_previous_faces[k]));
        m_tree.refit(m_boxes);
        ++m_stamp;
    }

    void set_thickness(T thickness)
    {
        check_thickness(thickness);
        m_thickness = thickness;
    }

    /// Takes effect at the next pass; plans made before are dropped then.
    void set_detection(ContactDetection detection) noexcept
    {
        m_detection = detection;
        ++m_stamp;
    }
    ContactDetection detection() const noexcept { return m_detection; }

    const std::vector<Vec3<T>>& vertices() const noexcept { return m_vertices; }
    const std::vector<std::array<std::int32_t, 3>>& triangles() const noexcept { return m_triangles; }
    T thickness() const noexcept { return m_thickness; }
    bool two_sided() const noexcept { return m_two_sided; }
    /// The triangles the constructor dropped (unused_vertices is 0: every vertex is kept).
    const MeshRepairs& repairs() const noexcept { return m_repairs; }
    /// Whether the last set_vertices has not been swept yet (the next pass sweeps it).
    bool moving() const noexcept { return m_moving; }

    /// Batches the particles of these grids (a cloth's: `cloth.grid()`) in tiles, four rows of four
    /// on AVX-512, instead of runs of sixteen along a row, for both detection modes. A run spans
    /// 7.5 units of the peer sheet against a tile's 1.5 x 1.5, so a tile's candidate triangles each
    /// cover most of its lanes: on a draped sheet a per-substep pass runs about 1.5 x faster and a
    /// call's planning about 1.8 x (docs/performance.md). Only speed depends on it: each particle
    /// tests the triangles near its own swept segment, so the bits are the same with grids or
    /// without (tested), and a grid that no longer matches the particles (a removed cloth) only
    /// costs speed. The scalar path and batches of four lanes or fewer ignore it. Throws naming a
    /// grid that is empty, or overlaps another or the index range, and then keeps the grids it had.
    void set_particle_grids(std::vector<ParticleGrid> grids)
    {
        std::sort(grids.begin(), grids.end(),
                  [](const ParticleGrid& l, const ParticleGrid& r) { return l.first < r.first; });
        std::vector<TiledGrid> tiled;
        for (std::size_t g = 0; g < grids.size(); ++g)
        {
            const ParticleGrid& grid = grids[g];
            const std::string name = "simdverlet: mesh collider particle grid {first " + std::to_string(grid.first) +
                                     ", width " + std::to_string(grid.width) + ", height " +
                                     std::to_string(grid.height) + "}";
            if (grid.width == 0 || grid.height == 0)
                detail::raise<std::invalid_argument>(name + " is empty");
            const std::size_t most = std::numeric_limits<std::size_t>::max();
            if (grid.height > most / grid.width || grid.first > most - grid.width * grid.height)
                detail::raise<std::invalid_argument>(name + " reaches past the largest particle index");
            if (g > 0 && grids[g - 1].first + grids[g - 1].width * grids[g - 1].height > grid.first)
                detail::raise<std::invalid_argument>(name + " overlaps the grid from particle " +
                                                     std::to_string(grids[g - 1].first));
            const std::size_t columns = (grid.width + kTileColumns - 1) / kTileColumns;
            // Lists for every tile only where tiles are used (see project_range).
            tiled.push_back({grid, std::vector<Block>(kTileRows < 2 ? 0 : grid.height / kTileRows * columns), {}});
        }
        m_grids = std::move(tiled);
    }

    /// The plane of each queried particle's nearest feature of the mesh within reach of its
    /// clearance (thickness and margin): the face's own plane where the nearest point is inside a
    /// face, else the plane across the line to the nearest edge or corner, on the side the particle
    /// started the step on (two-sided) or in front (one-sided), as the projection pushes. Runs of
    /// sixteen particles share one query of the tree. The mesh where it stands now: a mesh moved
    /// this call is swept by the projection after the solve.
    void add_planes(const PlaneQuery& query, std::vector<ContactPlane>& out) const override
    {
        const T clearance = m_thickness + this->material().margin;
        const double friction = double(this->material().friction);
        if (m_moving && m_carried_call != query.call)
        {
            // The call's first step: the move it carries, kept for its later steps.
            m_carried_from = m_previous_faces;
            m_carried_call = query.call;
        }
        const bool carrying = m_carried_call == query.call && !m_carried_from.empty();
        std::vector<std::uint32_t> faces;
        for (std::size_t first = query.begin; first < query.end; first += kBlock)
        {
            const std::size_t last = std::min(query.end, first + kBlock);
            detail::Bounds<T> box;
            T widest = T(0);
            for (std::size_t i = first; i < last; ++i)
            {
                const Vec3<double>& at = (*query.at)[i - query.begin];
                box.add(T(at.x()), T(at.y()), T(at.z()));
                widest = std::max(widest, T(query.reach_of(i)));
            }
            m_tree.query(box.grown(clearance + widest), m_boxes, faces);
            if (faces.empty())
                continue;
            for (std::size_t i = first; i < last; ++i)
            {
                const Vec3<T> at = (*query.at)[i - query.begin].template cast<T>();
                const Vec3<T> from = (*query.from)[i - query.begin].template cast<T>();
                const T reach = clearance + T(query.reach_of(i));
                detail::Nearest<T> nearest(reach * reach);
                std::uint32_t nearest_face = 0;
                for (const std::uint32_t k : faces)
                {
                    // The face's box first: most faces of the block's search are out of this
                    // particle's reach.
                    const detail::Bounds<T>& b = m_boxes[k];
                    T gap2 = T(0);
                    for (int c = 0; c < 3; ++c)
                    {
                        const T gap = std::max({b.lo[std::size_t(c)] - at[c], at[c] - b.hi[std::size_t(c)], T(0)});
                        gap2 += gap * gap;
                    }
                    if (!(gap2 < nearest.d2))
                        continue;
                    const detail::Face<T>& f = m_faces[k];
                    const Vec3<T> a(f.a[0], f.a[1], f.a[2]), n(f.n[0], f.n[1], f.n[2]);
                    const T side = m_two_sided && n.dot(from - a) < T(0) ? T(-1) : T(1);
                    if (nearest.consider(f, at.x(), at.y(), at.z(), n.dot(at - a), n.x(), n.y(), n.z(), side, true))
                        nearest_face = k;
                }
                if (!(nearest.d2 < reach * reach))
                    continue;
                const auto normal = detail::closest_normal(nearest, m_two_sided);
                const Vec3<double> nd(double(normal.nx), double(normal.ny), double(normal.nz));
                const Vec3<double> closest = (at - Vec3<T>(nearest.qx, nearest.qy, nearest.qz)).template cast<double>();
                out.push_back({i, nd, nd.dot(closest) + double(clearance), friction,
                               carrying ? carried(nearest_face, closest, query.substeps) : Vec3<double>::Zero()});
            }
        }
    }

    /// The grids set_particle_grids was given, in increasing order of their first particle.
    std::vector<ParticleGrid> particle_grids() const
    {
        std::vector<ParticleGrid> grids;
        for (const TiledGrid& g : m_grids)
            grids.push_back(g.grid);
        return grids;
    }

  protected:
    void begin_pass(std::size_t particles) override
    {
        m_blocks.resize((particles + kBlock - 1) / kBlock);
        m_reach = m_thickness + this->material().margin;
        if (m_detection != ContactDetection::per_call)
            return;
        m_plan_particles = particles;
        m_plan.resize((particles + kBlock - 1) / kBlock, kBlock);
        if (tiles_used())
            for (TiledGrid& g : m_grids)
                g.plan.resize(g.tiles.size(), kTileLanes);
    }

    void end_pass() override { m_moving = false; }

    int project_range(const StateArrays<T>& s, std::size_t begin, std::size_t end) override
    {
        // A mesh that moved since the last pass is swept exactly, as per_substep does: its plans
        // are made at the next pass, against the mesh where it now stands.
        if (m_detection == ContactDetection::per_call && !m_moving)
            return in_tiles_and_runs(
                begin, end, [&](std::size_t b, std::size_t e) { return project_planned(s, b, e); },
                [&](TiledGrid& g, std::size_t k) { return project_planned_row_group(s, g, k); });
        return in_tiles_and_runs(
            begin, end, [&](std::size_t b, std::size_t e) { return project_runs(s, b, e); },
            [&](TiledGrid& g, std::size_t k) { return project_row_group(s, g, k); });
    }

  private:
    /// The share of one substep in how far the point p of face k moved in the set_vertices before
    /// this call: p minus its place on the face then, by its coordinates along the face's edges now.
    Vec3<double> carried(std::uint32_t k, const Vec3<double>& p, int substeps) const
    {
        const detail::Face<T>& now = m_faces[k];
        const detail::Face<T>& before = m_carried_from[k];
        const auto vec = [](const std::array<T, 3>& c) {
            return Vec3<double>(double(c[0]), double(c[1]), double(c[2]));
        };
        const Vec3<double> d = p - vec(now.a), e1 = vec(now.e1), e2 = vec(now.e2);
        const double d1 = d.dot(e1), d2 = d.dot(e2), e11 = e1.dot(e1), e12 = e1.dot(e2), e22 = e2.dot(e2);
        const double gram = e11 * e22 - e12 * e12;
        if (!(gram > 0.0))
            return Vec3<double>::Zero();
        const double v = (e22 * d1 - e12 * d2) / gram, w = (e11 * d2 - e12 * d1) / gram;
        return (p - (vec(before.a) + v * vec(before.e1) + w * vec(before.e2))) / double(substeps);
    }

    /// Particles per cached candidate list: a padding unit, so that a list belongs to one chunk
    /// of the executor's split and no two threads touch it.
    static constexpr std::size_t kBlock = simd::kPadLanes<T>;
    /// Columns and rows of a tile on the vector path.
    static constexpr std::size_t kTileColumns = simd::kTileColumns<T, xsimd::default_arch>;
    static constexpr std::size_t kTileRows = simd::kTileRows<T, xsimd::default_arch>;
    static constexpr std::size_t kTileLanes = kTileRows * kTileColumns;

    bool tiles_used() const noexcept { return !m_grids.empty() && this->vector_path() && kTileRows >= 2; }

    /// Particles [begin, end): a row group (kTileRows rows of a grid) goes to `row_group` when it
    /// lies wholly in this chunk; the particles between row groups, and groups cut by a chunk's
    /// ends, go to `runs`. Without tiles, all of them go to `runs`.
    template <class Runs, class RowGroup>
    int in_tiles_and_runs(std::size_t begin, std::size_t end, Runs&& runs, RowGroup&& row_group)
    {
        if (!tiles_used())
            return runs(begin, end);
        int touched = 0;
        std::size_t next = begin; // the first particle not yet projected
        for (TiledGrid& g : m_grids)
        {
            const std::size_t span = kTileRows * g.grid.width; // particles of a row group
            const std::size_t groups = g.grid.height / kTileRows;
            // Narrower grids would put a run block's particles on both sides of a row group.
            if (span < kBlock)
                continue;
            std::size_t k = g.grid.first >= next ? 0 : (next - g.grid.first + span - 1) / span;
            for (; k < groups && g.grid.first + (k + 1) * span <= end; ++k)
            {
                const std::size_t first = g.grid.first + k * span;
                touched += runs(next, first);
                touched += row_group(g, k);
                next = first + span;
            }
        }
        return touched + runs(next, end);
    }

    using Block = detail::MeshBlock<T>;
    using PlanBlock = detail::MeshPlanBlock<T>;
    using CallPlan = detail::MeshCallPlan<T>;
    using TiledGrid = detail::MeshTiledGrid<T>;

    /// The particles one pass of V covers: a batch's lanes, or one.
    template <class V>
    static constexpr std::size_t lanes_of()
    {
        if constexpr (std::is_floating_point_v<V>)
            return 1;
        else
            return V::size;
    }

    /// Particles [begin, end) against their plans for the call, made here for a block whose plan
    /// is not this call's. A block with no triangle within reach of its box (most of a cloth
    /// hanging beside a body) costs a test of each particle against its own box while all of them
    /// stay inside: then every plan says no contact, and none is made again. Not against the
    /// block's box: a particle that leaves its own but not the block's is planned again (its new
    /// box may reach the mesh), and when must not depend on which particles share its block (a
    /// tile's or a run's). The test takes the whole block before any particle responds, so the
    /// vector path (a batch at a time) and the scalar twin (a particle at a time) decide alike.
    int project_planned(const StateArrays<T>& s, std::size_t begin, std::size_t end)
    {
        int touched = 0;
        for (std::size_t first = begin / kBlock * kBlock; first < end; first += kBlock)
        {
            const std::size_t b = std::max(begin, first), e = std::min(end, first + kBlock);
            PlanBlock& block = m_plan.blocks[first / kBlock];
            const bool fresh = !planned_now(block);
            if (fresh)
                plan_block(s, b, e, block); // its box holds every particle's substep
            if (block.faces.empty() && (fresh || !strayed(s, b, e)))
                continue;
            touched += this->run(s, b, e, [&](auto& p, const auto& movable, std::size_t i) {
                return follow_plan(m_plan, p, movable, i, block);
            });
        }
        return touched;
    }

    /// Row group k of grid g against the plans of its tiles, as project_planned does for runs: a
    /// tile's particles lie within about its width of one another, where a run's sixteen span a
    /// stretch of a row, so its list holds fewer triangles and each is near more of its lanes.
    /// A particle's plan depends only on its own box, so the bits are those of runs.
    int project_planned_row_group(const StateArrays<T>& s, TiledGrid& g, std::size_t k)
    {
        const std::size_t width = g.grid.width;
        const std::size_t columns = (width + kTileColumns - 1) / kTileColumns;
        int touched = 0;
        for (std::size_t c = 0; c < columns; ++c)
        {
            const std::size_t tile = k * columns + c;
            PlanBlock& block = g.plan.blocks[tile];
            const std::size_t first = g.grid.first + k * kTileRows * width + c * kTileColumns;
            const std::size_t used = std::min(kTileColumns, width - c * kTileColumns);
            touched += kernels::project_tile_vector<xsimd::default_arch>(
                s, first, width, used, [&](auto& p, const auto& movable) {
                    using M = std::remove_cvref_t<decltype(movable)>;
                    const std::size_t i = tile * kTileLanes;
                    const bool fresh = !planned_now(block);
                    if (fresh)
                        plan_lanes(g.plan, p, movable, i, i + kTileLanes, block);
                    if (block.faces.empty() && (fresh || !simd::any(outside_plans(g.plan, p, movable, i))))
                        return M(false);
                    return follow_plan(g.plan, p, movable, i, block);
                });
        }
        return touched;
    }

    /// Whether a movable particle of [b, e) is outside the box its plan was made for, at either
    /// end of its substep.
    bool strayed(const StateArrays<T>& s, std::size_t b, std::size_t e) const
    {
        bool out = false;
        this->run(s, b, e, [&](auto& p, const auto& movable, std::size_t i) {
            out = out || simd::any(detail::outside_plans(m_plan, p, movable, i));
            return movable && !movable; // reads only
        });
        return out;
    }

    bool planned_now(const PlanBlock& block) const noexcept
    {
        return block.call == this->call().call && block.stamp == m_stamp && block.reach == m_reach &&
               block.particles == m_plan_particles;
    }

    /// Plans the movable particles of [b, e): their boxes first, then the triangles near all of
    /// them, then each particle's contact.
    void plan_block(const StateArrays<T>& s, std::size_t b, std::size_t e, PlanBlock& block)
    {
        // Particles the passes skip (pinned ones) keep an empty box: were one freed within the
        // call, it would be planned on its first pass.
        detail::clear_plans(m_plan, b, e);
        const auto none = [](const auto& movable) { return std::remove_cvref_t<decltype(movable)>(false); };
        this->run(s, b, e, [&](auto& p, const auto& movable, std::size_t i) {
            predict_boxes(m_plan, p, movable, i);
            return none(movable);
        });
        block.box = detail::Bounds<T>{};
        detail::add_boxes(m_plan, block.box, b, e);
        query_plan_faces(block);
        // With no triangle in reach every particle keeps the no-contact mode clear_plans wrote.
        if (!block.faces.empty())
            this->run(s, b, e, [&](auto& p, const auto& movable, std::size_t i) {
                plan_contacts(m_plan, p, movable, i, block.faces);
                return none(movable);
            });
        mark_planned(block);
    }

    /// plan_block for loaded lanes `lanes` of a tile, whose plan is at [b, e) of `plan`.
    template <class V, class M>
    void plan_lanes(CallPlan& plan, const kernels::ParticleLanes<V>& p, const M& lanes, std::size_t b, std::size_t e,
                    PlanBlock& block)
    {
        detail::clear_plans(plan, b, e);
        predict_boxes(plan, p, lanes, b);
        block.box = detail::Bounds<T>{};
        detail::add_boxes(plan, block.box, b, e);
        query_plan_faces(block);
        if (!block.faces.empty())
            plan_contacts(plan, p, lanes, b, block.faces);
        mark_planned(block);
    }

    void mark_planned(PlanBlock& block) const noexcept
    {
        block.call = this->call().call;
        block.stamp = m_stamp;
        block.reach = m_reach;
        block.particles = m_plan_particles;
    }

    /// Lists the triangles near the block's box, keeping the list of an earlier call while the
    /// box stays inside the one it was made for and the mesh is unchanged: a resting cloth's
    /// boxes barely move, and a tree walk costs more than a block's plan. A longer list only
    /// costs time: each lane tests the triangles near its own box.
    void query_plan_faces(PlanBlock& block) const
    {
        if (!(block.box.lo[0] <= block.box.hi[0]))
        {
            block.faces.clear();
            return;
        }
        if (block.list_stamp == m_stamp && block.list_reach == m_reach && block.inner.contains(block.box))
            return;
        // The same slack as the per-substep lists (see refresh).
        block.inner = block.box.grown(block.box.largest_extent() / T(16));
        block.list_stamp = m_stamp;
        block.list_reach = m_reach;
        block.faces.clear();
        m_tree.query(block.inner.grown(m_reach), m_boxes, block.faces);
    }

    /// Each lane of `lanes`: the box its motion over the rest of the call is predicted to stay
    /// in. It holds the substep's segment (px to x) and the call's end if the particle kept this
    /// substep's velocity under gravity alone, grown by the reach as slack for the forces and
    /// contacts the prediction leaves out.
    template <class V, class M>
    void predict_boxes(CallPlan& plan, const kernels::ParticleLanes<V>& p, const M& lanes, std::size_t i)
    {
        const CallProgress<T>& call = this->call();
        const T r = T(call.remaining());
        const T fall = call.dt * call.dt * r * (r + T(1)) / T(2); // sum of k dt^2 for k = 1..r
        const V x[3] = {p.x, p.y, p.z}, px[3] = {p.px, p.py, p.pz};
        const V slack(m_reach / T(4));
        for (int k = 0; k < 3; ++k)
        {
            const V end = x[k] + (x[k] - px[k]) * V(r) + V(call.gravity[k] * fall);
            detail::store_lanes(plan.lo[k], i, lanes, simd::min(simd::min(x[k], px[k]), end) - slack);
            detail::store_lanes(plan.hi[k], i, lanes, simd::max(simd::max(x[k], px[k]), end) + slack);
        }
    }

    /// Each lane of `lanes`: its contact for the call, planned from where the substep started
    /// (detail::plan_contact) against the triangles near the box its motion is predicted to fill.
    template <class V, class M>
    void plan_contacts(CallPlan& plan, const kernels::ParticleLanes<V>& p, const M& lanes, std::size_t i,
                       const std::vector<std::uint32_t>& faces)
    {
        V lo[3], hi[3];
        for (int k = 0; k < 3; ++k)
        {
            lo[k] = simd::load_at<V>(plan.lo[k].data() + i);
            hi[k] = simd::load_at<V>(plan.hi[k].data() + i);
        }
        const auto contact = detail::plan_contact(mesh_faces(), p, lanes, lo, hi, faces);
        detail::store_lanes(plan.mode, i, lanes, contact.mode);
        if (!contact.found)
            return;
        detail::store_lanes(plan.n[0], i, lanes, contact.nx);
        detail::store_lanes(plan.n[1], i, lanes, contact.ny);
        detail::store_lanes(plan.n[2], i, lanes, contact.nz);
        detail::store_lanes(plan.offset, i, lanes, contact.offset);
    }

    /// One pass of lanes `movable` under the call's plan: a lane that left its box is planned
    /// again first (from where it stands); then each keeps out of its plane, or takes the exact
    /// tests against the block's triangles.
    template <class V, class M>
    M follow_plan(CallPlan& plan, kernels::ParticleLanes<V>& p, const M& movable, std::size_t i, PlanBlock& block)
    {
        const M stray = detail::outside_plans(plan, p, movable, i);
        if (simd::any(stray))
        {
            predict_boxes(plan, p, stray, i);
            detail::add_boxes(plan, block.box, i, i + lanes_of<V>());
            query_plan_faces(block);
            plan_contacts(plan, p, stray, i, block.faces);
        }
        const V mode = simd::load_at<V>(plan.mode.data() + i);
        const V nx = simd::load_at<V>(plan.n[0].data() + i);
        const V ny = simd::load_at<V>(plan.n[1].data() + i);
        const V nz = simd::load_at<V>(plan.n[2].data() + i);
        const V depth = simd::load_at<V>(plan.offset.data() + i) - (nx * p.x + ny * p.y + nz * p.z);
        const M exact = movable && (mode == V(detail::kPlanExact<T>));
        const M active = movable && (mode == V(detail::kPlanPlane<T>)) && (depth > V(T(0)));
        M touched = active;
        if (simd::any(active))
            detail::respond(p, nx, ny, nz, depth, active, this->material());
        if (simd::any(exact))
        {
            const M hit = collide<false>(p, exact, block.faces); // called whatever touched holds
            touched = touched || hit;
        }
        return touched;
    }

    /// Particles [begin, end) in runs of consecutive indices, a block's list shared by its run.
    int project_runs(const StateArrays<T>& s, std::size_t begin, std::size_t end)
    {
        int touched = 0;
        for (std::size_t first = begin / kBlock * kBlock; first < end; first += kBlock)
        {
            const std::size_t b = std::max(begin, first), e = std::min(end, first + kBlock);
            const std::vector<std::uint32_t>& faces = candidates(s, b, e, m_blocks[first / kBlock]);
            if (faces.empty())
                continue;
            if (m_moving)
                touched += this->run(s, b, e,
                                     [&](auto& p, const auto& movable) { return collide<true>(p, movable, faces); });
            else
                touched += this->run(s, b, e,
                                     [&](auto& p, const auto& movable) { return collide<false>(p, movable, faces); });
        }
        return touched;
    }

    /// Row group k of grid g in tiles of kTileRows x kTileColumns particles, each with its list.
    int project_row_group(const StateArrays<T>& s, TiledGrid& g, std::size_t k)
    {
        const std::size_t width = g.grid.width;
        const std::size_t columns = (width + kTileColumns - 1) / kTileColumns;
        int touched = 0;
        for (std::size_t c = 0; c < columns; ++c)
        {
            Block& tile = g.tiles[k * columns + c];
            const std::size_t first = g.grid.first + k * kTileRows * width + c * kTileColumns;
            const std::size_t used = std::min(kTileColumns, width - c * kTileColumns);
            touched += kernels::project_tile_vector<xsimd::default_arch>(
                s, first, width, used, [&](auto& p, const auto& movable) {
                    using M = std::remove_cvref_t<decltype(movable)>;
                    const std::vector<std::uint32_t>& faces = tile_candidates(p, movable, tile);
                    if (faces.empty())
                        return M(false);
                    return m_moving ? collide<true>(p, movable, faces) : collide<false>(p, movable, faces);
                });
        }
        return touched;
    }

    /// A tile's candidate list, read off its loaded lanes: rebuilt, as a run's is, when one of
    /// them has left the bounds it was built for or the mesh moved since. Lanes outside `lanes`
    /// (pinned, or past the grid's edge) take no part.
    template <class V, class M>
    const std::vector<std::uint32_t>& tile_candidates(const kernels::ParticleLanes<V>& p, const M& lanes, Block& tile)
    {
        if (!simd::any(lanes))
            return m_none;
        if (tile.stamp == m_stamp && tile.reach == m_reach)
        {
            const detail::Bounds<T>& box = tile.inner;
            const auto inside = [&](const V& x, const V& y, const V& z) {
                return (x >= V(box.lo[0])) && (x <= V(box.hi[0])) && (y >= V(box.lo[1])) && (y <= V(box.hi[1])) &&
                       (z >= V(box.lo[2])) && (z <= V(box.hi[2]));
            };
            // Written as "not inside", so a NaN coordinate counts as outside.
            if (!simd::any(lanes && !(inside(p.x, p.y, p.z) && inside(p.px, p.py, p.pz))))
                return tile.faces;
        }
        constexpr std::size_t L = V::size;
        alignas(simd::kAlignment) T x[L], y[L], z[L], px[L], py[L], pz[L];
        simd::store_at(x, p.x), simd::store_at(y, p.y), simd::store_at(z, p.z);
        simd::store_at(px, p.px), simd::store_at(py, p.py), simd::store_at(pz, p.pz);
        detail::Bounds<T> swept;
        for (std::uint64_t bits = simd::lane_bits(lanes); bits != 0; bits &= bits - 1)
        {
            const auto k = std::size_t(std::countr_zero(bits));
            swept.add(x[k], y[k], z[k]);
            swept.add(px[k], py[k], pz[k]);
        }
        refresh(tile, swept);
        return tile.faces;
    }

    /// Rebuilds a block's list for particles whose swept bounds are `swept`.
    void refresh(Block& block, const detail::Bounds<T>& swept)
    {
        // A sixteenth of the block's size as slack: a sheet sliding over the mesh keeps its lists
        // for a few steps, and the lists stay short (more slack visits more triangles per
        // particle for fewer rebuilds; BM_mesh_collider measures the balance).
        block.inner = swept.grown(swept.largest_extent() / T(16));
        block.reach = m_reach;
        block.stamp = m_stamp;
        block.faces.clear();
        m_tree.query(block.inner.grown(m_reach), m_boxes, block.faces);
    }

    static void check_thickness(T thickness)
    {
        if (!std::isfinite(thickness) || !(thickness > T(0)))
            detail::raise<std::invalid_argument>("simdverlet: mesh collider thickness must be finite and > 0, got " +
                                                 detail::number(thickness));
    }

    static detail::Bounds<T> face_bounds(const detail::Face<T>& f)
    {
        detail::Bounds<T> box;
        box.add(f.a[0], f.a[1], f.a[2]);
        box.add(f.a[0] + f.e1[0], f.a[1] + f.e1[1], f.a[2] + f.e1[2]);
        box.add(f.a[0] + f.e2[0], f.a[1] + f.e2[1], f.a[2] + f.e2[2]);
        return box;
    }

    void compute_faces()
    {
        m_faces.resize(m_triangles.size());
        m_boxes.resize(m_triangles.size());
        for (std::size_t k = 0; k < m_faces.size(); ++k)
        {
            const auto& tri = m_triangles[m_order[k]];
            m_faces[k] = detail::Face<T>::from(m_vertices[std::size_t(tri[0])], m_vertices[std::size_t(tri[1])],
                                               m_vertices[std::size_t(tri[2])]);
            m_boxes[k] = face_bounds(m_faces[k]);
        }
    }

    void build()
    {
        m_order.assign(m_triangles.size(), 0);
        for (std::uint32_t k = 0; k < m_order.size(); ++k)
            m_order[k] = k;
        compute_faces(); // in the caller's order: the tree sorts these bounds
        m_order = m_tree.build(m_boxes);
        compute_faces(); // and again in tree order
        m_tree.refit(m_boxes);
        m_previous_faces.clear();
        m_carried_from.clear();
        m_moving = false;
        ++m_stamp;
    }

    /// The block's candidate list, rebuilt when one of its particles has left the bounds it was
    /// built for or the mesh moved since.
    const std::vector<std::uint32_t>& candidates(const StateArrays<T>& s, std::size_t b, std::size_t e, Block& block)
    {
        if (block.stamp == m_stamp && block.reach == m_reach && all_inside(s, b, e, block.inner))
            return block.faces;
        detail::Bounds<T> swept;
        for (std::size_t i = b; i < e; ++i)
        {
            swept.add(s.x[i], s.y[i], s.z[i]);
            swept.add(s.px[i], s.py[i], s.pz[i]);
        }
        refresh(block, swept);
        return block.faces;
    }

    bool all_inside(const StateArrays<T>& s, std::size_t b, std::size_t e, const detail::Bounds<T>& box) const
    {
        if (this->vector_path())
            return kernels::all_inside_vector<xsimd::default_arch>(s, b, e, box.lo, box.hi);
        return kernels::all_inside(s, b, e, box.lo, box.hi);
    }

    /// The contact of lanes `movable` with the triangles `faces` (detail::mesh_contact). kMoving
    /// sweeps against the mesh's motion since the last pass.
    template <bool kMoving, class V, class M>
    M collide(kernels::ParticleLanes<V>& p, const M& movable, const std::vector<std::uint32_t>& faces) const
    {
        return detail::mesh_contact<kMoving>(mesh_faces(), p, movable, faces, this->material());
    }

    detail::MeshFaces<T> mesh_faces() const noexcept
    {
        return {.faces = m_faces,
                .previous = m_previous_faces,
                .boxes = m_boxes,
                .reach = m_reach,
                .two_sided = m_two_sided};
    }

    std::vector<Vec3<T>> m_vertices;
    std::vector<std::array<std::int32_t, 3>> m_triangles;
    T m_thickness = T(0.01);
    bool m_two_sided = true;
    MeshRepairs m_repairs;

    std::vector<std::uint32_t> m_order;            // tree order -> the caller's triangle index
    std::vector<detail::Face<T>> m_faces;          // tree order
    std::vector<detail::Face<T>> m_previous_faces; // before the unswept motion, while m_moving
    // The faces before the move of the call m_carried_call, which contact planes carry particles
    // by over its substeps (the projection sweeps the move in the first and forgets it):
    // bookkeeping of the call, not state.
    mutable std::vector<detail::Face<T>> m_carried_from;
    mutable std::uint64_t m_carried_call = 0;
    std::vector<detail::Bounds<T>> m_boxes; // each face's bounds, grown over its last motion
    detail::TriangleTree<T> m_tree;
    std::uint64_t m_stamp = 0; // changes whenever the boxes do
    bool m_moving = false;

    ContactDetection m_detection = ContactDetection::per_call;
    CallPlan m_plan;                   // per particle, per_call
    std::size_t m_plan_particles = 0;  // the state's size at the last pass: a removal renumbers particles
    std::vector<Block> m_blocks;       // per kBlock particles
    std::vector<TiledGrid> m_grids;    // set_particle_grids, in increasing order of first
    std::vector<std::uint32_t> m_none; // the empty list
    T m_reach = T(0);                  // thickness + margin, fixed for a pass
};

} // namespace simdverlet
