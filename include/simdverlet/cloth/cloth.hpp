// Cloth: a sheet of particles appended to a simulation as one contiguous, protected index block
// (removing a particle inside or below it is refused), and the handle that speaks of it. Every
// cloth knows its triangles, which the stages that take a cloth read (wind, the render mesh,
// tethers); a cloth made by add_cloth is also a grid, and one made from a triangle mesh
// (mesh_cloth.hpp) is not.
//
// A grid cloth is the block [base, base + width * height), row by row, wired in layer 0 with fixed
// slot roles at a constant index offset per slot (down +width, up -width, right +1, left -1),
// which is what lets the solver load its neighbours contiguously instead of gathering them; its
// triangles are two per cell, and a curvature bulk force smooths it.
#pragma once

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "simdverlet/cloth/detail/cloth_solve.hpp"
#include "simdverlet/cloth/detail/grid_slots.hpp"
#include "simdverlet/cloth/detail/mesh_springs.hpp"
#include "simdverlet/cloth/material.hpp"
#include "simdverlet/cloth/triangle_mesh.hpp"
#include "simdverlet/core/controllers.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/curvature.hpp"

namespace simdverlet
{

/// What add_cloth appends.
template <class T>
struct ClothOptions
{
    int width = 20;                                          ///< particles per row, >= 2
    int height = 10;                                         ///< rows, >= 2
    std::optional<ClothMaterial<T>> material = std::nullopt; ///< the fabric in SI units (material.hpp). When
        ///< given it decides the masses (density x the areas around each particle), the stretch and the
        ///< bending, held by the implicit cloth solve (cloth_solve.hpp) instead of the grid's springs and
        ///< curvature, stable at any spacing; stiffness, mass and curvature_strength must then be left at
        ///< their defaults, and the state needs per-particle masses. The rest shape is the default
        ///< layout, or `position`'s when rest_length_from_layout
    T spacing = T(0.5);  ///< world units between neighbours in the default layout, > 0; the rest length
                         ///< of every spring unless rest_length_from_layout
    T stiffness = T(60); ///< per slot, >= 0. The sheet feels stiffness x iterations only: 60 at 16
                         ///< iterations is the guide's product of 960, a drape with ~10 % sag strain
    T mass = T(1);       ///< per particle, > 0. Needs a state with per-particle masses unless 1
    std::optional<T> curvature_strength = std::nullopt; ///< >= 0; pull of each interior particle toward the mean of
        ///< its four neighbours, on the springs' force scale; a neighbour
        ///< whose spring is torn or cut pulls no more. Default
        ///< stiffness / 3: enough to take the kinks out of a hanging
        ///< sheet's festoons without being a load of its own. 0 = off
    std::function<bool(int col, int row)> pinned = {};      ///< which particles get inverse mass 0; none by default
    std::function<Vec3<T>(int col, int row)> position = {}; ///< layout; default (col, row, 0) x spacing,
                                                            ///< hanging in the x-y plane (+y is down)
    bool rest_length_from_layout = false; ///< rest lengths measured from `position` instead of spacing
    PidGains<T> grab_gains = {.kp = T(150), .ki = T(50), .kd = T(20)}; ///< the controller grab_nearest installs:
        ///< a soft hand. Carrying the guide's sheet's bottom-centre 4 units in half a second, it holds the peak
        ///< strain near 0.57 of a teleported copy's and closes to ~0.4 units of the hand two seconds later
        ///< (tests/cloth.cpp measures both); stiffer gains follow tighter and strain the sheet more
    std::string name = {}; ///< prefix of the stages it registers; default "cloth@<base>"
};

template <class T>
class Cloth;

namespace detail
{
template <class T>
struct ClothData
{
    static constexpr const char* kind = "cloth"; ///< how messages name it (BlockHandle)
    std::weak_ptr<World<T>> world;
    std::size_t base = 0;
    std::size_t count = 0;
    int width = 0;           ///< a grid's particles per row; 0 for a cloth made from a mesh
    int height = 0;          ///< a grid's rows; 0 for a cloth made from a mesh
    std::vector<T> inv_mass; ///< each particle's inverse mass when free (what pin(..., false) restores)
    std::vector<std::array<std::int32_t, 3>> triangles; ///< vertex indices; a grid's two per cell
    std::vector<Vec2<T>> uvs;                           ///< texture coordinates of a mesh cloth, if its mesh had them
    std::vector<std::array<std::int32_t, 3>> uv_triangles; ///< per triangle its corners' uv indices, or empty
    std::vector<std::uint32_t> particle_of;                ///< vertex -> offset from base; empty: the identity (a grid)
    std::vector<std::uint32_t> vertex_of;                  ///< offset from base -> vertex; empty: the identity
    MeshRepairs repairs;                                   ///< what add_mesh_cloth's sanitize dropped from the mesh
    std::size_t non_manifold_edges = 0;                    ///< edges of three or more triangles: no bend spring
    T curvature = T(0);
    PidGains<T> grab_gains;
    std::string name;
    std::uint64_t protection = 0;
    std::optional<PidController<T>> grab;
    std::shared_ptr<ClothSolveData<T>> solve; ///< the implicit solve of a cloth made with a material
    bool removed = false;

    bool grid() const noexcept { return width > 0; }
    std::size_t particle(std::size_t vertex) const noexcept
    {
        return base + (particle_of.empty() ? vertex : std::size_t(particle_of[vertex]));
    }
};

/// The library's own way into a cloth's world (render_mesh reads its state and constraints),
/// without widening the handle's public surface.
struct ClothAccess;

/// The handle of a cloth whose data is filled (add_cloth, add_mesh_cloth).
template <class T>
Cloth<T> make_cloth(std::shared_ptr<ClothData<T>> data);
} // namespace detail

/// One cell of a grid cloth, by column and row.
struct GridCell
{
    int col = 0;
    int row = 0;
};

/// Live handle of a cloth, a grid (add_cloth) or one made from a triangle mesh (add_mesh_cloth).
/// Copies address the same cloth. It refers to its simulation's world, not to the Simulation
/// object, so the simulation may be moved freely; once the simulation is destroyed, calls that
/// need it report a logic_error naming the cloth.
///
/// Every cloth speaks of vertices: a mesh cloth's are its mesh's (welded by position index), a
/// grid's are its cells in row order (col + row x width). Grid coordinates (col, row) are only for a
/// grid: on a mesh cloth they are a std::logic_error.
template <class T>
class Cloth : public detail::BlockHandle<T, detail::ClothData<T>>
{
    using Base = detail::BlockHandle<T, detail::ClothData<T>>;
    using Base::any_world;
    using Base::d;
    using Base::data;
    using Base::require_block;
    using Base::state;
    using Base::world;

  public:
    /// A handle of no cloth yet (a member waiting for its cloth): it reads as an empty cloth that
    /// was removed, and a member that acts throws std::logic_error.
    Cloth() = default;

    /// Particle index of grid cell (col, row).
    std::size_t index(int col, int row) const
    {
        require_grid("cell (" + std::to_string(col) + ", " + std::to_string(row) + ")");
        if (col < 0 || col >= d().width || row < 0 || row >= d().height)
            detail::raise<std::out_of_range>("simdverlet: cell (" + std::to_string(col) + ", " + std::to_string(row) +
                                             ") is outside the " + std::to_string(d().width) + " x " +
                                             std::to_string(d().height) + " cloth '" + d().name + "'");
        return d().base + std::size_t(row) * std::size_t(d().width) + std::size_t(col);
    }

    /// Particle index of a vertex: of the mesh a mesh cloth was made from, or a grid's cell
    /// col + row x width.
    std::size_t index(std::size_t vertex) const
    {
        require_block();
        if (vertex >= d().count)
            detail::raise<std::out_of_range>("simdverlet: vertex " + std::to_string(vertex) + " is outside cloth '" +
                                             d().name + "', which has " + std::to_string(d().count));
        return d().particle(vertex);
    }

    /// The vertex a particle of the cloth stands for (index's inverse).
    std::size_t vertex(std::size_t particle) const
    {
        require_block();
        if (!contains(particle))
            detail::raise<std::out_of_range>("simdverlet: particle " + std::to_string(particle) + " is not in cloth '" +
                                             d().name + "' [" + std::to_string(base()) + ", " + std::to_string(end()) +
                                             ")");
        const std::size_t offset = particle - base();
        return d().vertex_of.empty() ? offset : std::size_t(d().vertex_of[offset]);
    }

    std::size_t base() const noexcept { return d().base; }
    std::size_t end() const noexcept { return d().base + count(); }
    std::size_t count() const noexcept { return d().count; }
    /// Whether the cloth is a grid (add_cloth), with grid coordinates.
    bool is_grid() const noexcept { return d().grid(); }
    /// A grid's particles per row; a logic_error on a mesh cloth.
    int width() const
    {
        require_grid("width()");
        return d().width;
    }
    /// A grid's rows; a logic_error on a mesh cloth.
    int height() const
    {
        require_grid("height()");
        return d().height;
    }
    const std::string& name() const noexcept { return d().name; }
    ParticleRange range() const noexcept { return {base(), end()}; }
    /// The grid's layout, for stages that batch a grid's neighbours (TriangleMeshCollider); a
    /// logic_error on a mesh cloth.
    ParticleGrid grid() const
    {
        require_grid("grid()");
        return {base(), std::size_t(d().width), std::size_t(d().height)};
    }
    bool contains(std::size_t particle) const noexcept { return particle >= base() && particle < end(); }

    /// The cloth's triangles as vertex indices (index() gives their particles), counter-clockwise
    /// as built: a mesh cloth's mesh's after its repairs, a grid's two per cell.
    const std::vector<std::array<std::int32_t, 3>>& triangles() const noexcept { return d().triangles; }
    /// A mesh cloth's texture coordinates and, per triangle, its corners' indices into them; empty
    /// for a grid and for a mesh without uvs.
    const std::vector<Vec2<T>>& uvs() const noexcept { return d().uvs; }
    const std::vector<std::array<std::int32_t, 3>>& uv_triangles() const noexcept { return d().uv_triangles; }
    /// What add_mesh_cloth dropped from its mesh (zero-area and repeated triangles, unused
    /// vertices); nothing for a grid.
    const MeshRepairs& repairs() const noexcept { return d().repairs; }
    /// A mesh cloth's edges shared by three or more triangles, which got a stretch spring and no
    /// bend spring; 0 for a grid.
    std::size_t non_manifold_edges() const noexcept { return d().non_manifold_edges; }

    Vec3<T> position(int col, int row) const { return state().position(index(col, row)); }
    Vec3<T> position(std::size_t vertex) const { return state().position(index(vertex)); }

    /// Pins (inverse mass 0) or releases (its inverse mass as built) one vertex.
    void pin(std::size_t vertex, bool pinned = true) { pin_particle(index(vertex), pinned); }
    void pin(int vertex, bool pinned = true) { pin(std::size_t(vertex), pinned); }
    /// Pins or releases one cell of a grid: pin({col, row}).
    void pin(GridCell cell, bool pinned = true) { pin_particle(index(cell.col, cell.row), pinned); }
    /// pin(7, 0) reads as a cell, yet would release vertex 7: it does not compile. Write pin({7, 0})
    /// for the cell, pin(7, false) for the vertex.
    template <class V, std::integral I>
    requires(!std::same_as<I, bool>) void pin(V, I) = delete;
    bool is_pinned(std::size_t vertex) const { return state().is_pinned(index(vertex)); }
    bool is_pinned(GridCell cell) const { return state().is_pinned(index(cell.col, cell.row)); }

    /// Moves one cell. By default it arrives at rest; keep_velocity carries its per-frame
    /// displacement along, so it keeps moving as it was.
    void teleport(int col, int row, const Vec3<T>& to, bool keep_velocity = false)
    {
        state().set_position(index(col, row), to, keep_velocity);
    }
    /// Moves one vertex, as teleport(col, row, ...) moves a cell.
    void teleport(std::size_t vertex, const Vec3<T>& to, bool keep_velocity = false)
    {
        state().set_position(index(vertex), to, keep_velocity);
    }

    /// Grabs the particle nearest to p with a PID position controller targeting p, and returns its
    /// index. The controller pulls through the solve, so the sheet follows instead of snapping.
    /// Grabbing again releases the previous grab first.
    std::size_t grab_nearest(const Vec3<T>& p)
    {
        if (!p.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: grab point is not finite");
        auto& world = this->world();
        release();
        std::size_t nearest = base();
        T best = std::numeric_limits<T>::infinity();
        for (std::size_t i = base(); i < end(); ++i)
        {
            const T dist2 = (state().position(i) - p).squaredNorm();
            if (dist2 < best)
            {
                best = dist2;
                nearest = i;
            }
        }
        data().grab = world.add_pid_position_controller(nearest, p, grab_gains_for(nearest), d().world,
                                                        "cloth '" + d().name + "''s grab");
        return nearest;
    }

    /// Moves the grab target. Throws std::logic_error when nothing is grabbed.
    void move_grabbed(const Vec3<T>& p)
    {
        if (!d().grab)
            detail::raise<std::logic_error>("simdverlet: cloth '" + d().name +
                                            "' has nothing grabbed; call grab_nearest first");
        data().grab->set_target(p);
    }

    /// Lets go; returns whether something was grabbed.
    bool release()
    {
        if (!d().grab)
            return false;
        data().grab->remove();
        data().grab.reset();
        return true;
    }

    /// The grabbed particle, if any.
    std::optional<std::size_t> grabbed() const
    {
        if (!d().grab)
            return std::nullopt;
        return d().grab->particle();
    }

    /// A grid's curvature; 0 for a mesh cloth, which bends through its bend springs.
    T curvature_strength() const noexcept { return d().curvature; }
    /// Live; 0 switches curvature off without unregistering anything. A logic_error on a mesh
    /// cloth, which has no curvature stage (its bend springs are set with add_mesh_cloth), and on a
    /// cloth made with a material, which bends by it.
    void set_curvature_strength(T strength)
    {
        require_grid("set_curvature_strength");
        if (d().solve)
            detail::raise<std::logic_error>("simdverlet: cloth '" + d().name +
                                            "' bends by its material, which has no curvature stage");
        check_curvature(strength);
        data().curvature = strength;
    }

    /// The grid as drawn from the indices: each row and each column as a polyline. It shows the
    /// grid the cloth was built as, whatever the constraint set now holds; debug_lines shows that.
    /// A logic_error on a mesh cloth (debug_lines draws its springs).
    std::vector<std::vector<Vec3<T>>> lines() const
    {
        require_grid("lines()");
        std::vector<std::vector<Vec3<T>>> out;
        for (int r = 0; r < height(); ++r)
        {
            auto& row = out.emplace_back();
            for (int c = 0; c < width(); ++c)
                row.push_back(position(c, r));
        }
        for (int c = 0; c < width(); ++c)
        {
            auto& column = out.emplace_back();
            for (int r = 0; r < height(); ++r)
                column.push_back(position(c, r));
        }
        return out;
    }

    /// Steps the whole simulation (every cloth, strand and particle in it), for the common case
    /// where the cloth is the simulation.
    void step(const StepParams<T>& params, const typename Simulation<T>::StateStage& accumulate_forces = {})
    {
        world().step(params, accumulate_forces);
    }

    /// Detaches the cloth: clears its particles' slots in every layer, unregisters its curvature,
    /// lets go of a grab and lifts the removal protection. The particles stay where they are.
    /// Anything tied to the cloth keeps its own half of the tie.
    /// Returns whether the cloth was still attached; throws std::logic_error naming the cloth when
    /// its simulation was destroyed.
    bool remove()
    {
        if (!this->has_block())
            return false;
        auto& world = any_world();
        if (d().removed)
            return false;
        release();
        if (is_grid())
            world.remove_bulk_force(curvature_stage());
        if (d().solve)
            world.remove_position_projection("cloth_solve@" + d().name);
        world.detach_block(base(), end(), d().protection);
        data().removed = true;
        return true;
    }

    /// Whether this cloth was added to `sim` (the same simulation, wherever it has moved).
    bool belongs_to(const Simulation<T>& sim) const { return d().world.lock() == detail::world_of(sim); }

  private:
    template <class U>
    friend Cloth<U> add_cloth(Simulation<U>& sim, ClothOptions<U> options);
    template <class U>
    friend Cloth<U> detail::make_cloth(std::shared_ptr<detail::ClothData<U>> data);
    friend struct detail::ClothAccess;

    explicit Cloth(std::shared_ptr<detail::ClothData<T>> data) : Base(std::move(data)) {}

    std::string curvature_stage() const { return d().name + ".curvature"; }

    void require_grid(const std::string& what) const
    {
        require_block();
        if (!is_grid())
            detail::raise<std::logic_error>("simdverlet: " + what + " is a grid's, and cloth '" + d().name +
                                            "' was made from a triangle mesh: speak of its vertices instead");
    }

    /// A grid's gains as given; a mesh cloth's are per unit of mass, times the grabbed particle's
    /// (its vertices' masses follow the areas around them, so one set of gains fits them all).
    PidGains<T> grab_gains_for(std::size_t particle) const
    {
        PidGains<T> g = d().grab_gains;
        if (is_grid())
            return g;
        const T mass = T(1) / d().inv_mass[particle - base()];
        return {.kp = g.kp * mass, .ki = g.ki * mass, .kd = g.kd * mass};
    }

    void pin_particle(std::size_t particle, bool pinned)
    {
        state().set_inverse_mass(particle, pinned ? T(0) : d().inv_mass[particle - base()]);
    }

    static void check_curvature(T strength)
    {
        if (!std::isfinite(strength) || strength < T(0))
            detail::raise<std::invalid_argument>("simdverlet: curvature strength must be finite and >= 0, got " +
                                                 detail::number(strength));
    }
};

namespace detail
{
struct ClothAccess
{
    template <class T>
    static World<T>& world(const Cloth<T>& cloth)
    {
        return cloth.any_world();
    }

    /// The implicit solve of a cloth made with a material; null for one held by springs.
    template <class T>
    static const ClothSolveData<T>* solve(const Cloth<T>& cloth) noexcept
    {
        return cloth.shared() ? cloth.shared()->solve.get() : nullptr;
    }
    template <class T>
    static std::shared_ptr<ClothSolveData<T>> shared_solve(const Cloth<T>& cloth) noexcept
    {
        return cloth.shared() ? cloth.shared()->solve : nullptr;
    }

    /// Identifies the cloth itself, not the handle: copies of a handle give the same key.
    template <class T>
    static const void* key(const Cloth<T>& cloth) noexcept
    {
        return cloth.shared().get();
    }
};

template <class T>
Cloth<T> make_cloth(std::shared_ptr<ClothData<T>> data)
{
    return Cloth<T>(std::move(data));
}

/// Checks the cloth a stage's options name (`what`: "tethers"): given, added to `sim`, not removed.
template <class T>
void check_stage_cloth(const Simulation<T>& sim, const Cloth<T>& cloth, const std::string& what)
{
    if (!ClothAccess::key(cloth))
        raise<std::invalid_argument>("simdverlet: " + what + " need a cloth: set the options' .cloth");
    if (!cloth.belongs_to(sim))
        raise<std::invalid_argument>("simdverlet: " + what + " cloth '" + cloth.name() + "' is not in this simulation");
    if (cloth.removed())
        raise<std::logic_error>("simdverlet: " + what + " cloth '" + cloth.name() + "' was removed");
}

/// Which of a cloth's triangles still hold: a triangle with a torn or cut edge (no live spring
/// between two of its corners, in any layer) feels no wind and is not rendered; a material cloth's
/// triangles all hold, its solve holding each of them. Kept per stage and
/// recomputed only when the constraints' edit stamp moves, so a frame without tears reads flags.
struct IntactTriangles
{
    std::vector<std::uint8_t> intact; ///< per triangle of the cloth, 1 when its three edges are live
    std::uint64_t stamp = 0;          ///< the layers' edit stamp the flags were computed for
    std::size_t broken = 0;           ///< triangles with a torn edge
    const void* cloth = nullptr;      ///< the cloth (ClothAccess::key) they were computed for

    template <class T>
    const std::vector<std::uint8_t>& refresh(const ConstraintLayers<T>& layers, const Cloth<T>& of);
};

/// A width x height grid's triangles as vertex indices (col + row x width): each cell (p00 its
/// top-left corner) split along p00-p11 into (p00, p10, p11) and (p00, p11, p01), the split the
/// render mesh and the wind use.
inline std::vector<std::array<std::int32_t, 3>> grid_triangles(int width, int height)
{
    std::vector<std::array<std::int32_t, 3>> out;
    out.reserve(2 * std::size_t(width - 1) * std::size_t(height - 1));
    for (int r = 0; r + 1 < height; ++r)
        for (int c = 0; c + 1 < width; ++c)
        {
            const std::int32_t p00 = r * width + c, p10 = p00 + 1, p01 = p00 + width, p11 = p01 + 1;
            out.push_back({p00, p10, p11});
            out.push_back({p00, p11, p01});
        }
    return out;
}

/// A grid given a material: what every material cloth passes, and a state that can hold its masses.
template <class T>
void check_grid_material(const Simulation<T>& sim, const ClothOptions<T>& o)
{
    const ClothOptions<T> defaults;
    check_material_cloth(sim, *o.material, "cloth",
                         {{o.stiffness != defaults.stiffness, "stiffness"},
                          {o.mass != defaults.mass, "mass"},
                          {bool(o.curvature_strength), "curvature_strength"}},
                         o.name);
    if (!sim.state().has_masses())
        detail::raise<std::logic_error>("simdverlet: a cloth with a material lumps a mass onto each particle from the "
                                        "areas around it: it needs a state with per-particle masses "
                                        "(Masses::per_particle)");
}

template <class T>
void check_cloth_options(const Simulation<T>& sim, const ClothOptions<T>& o)
{
    if (o.width < 2 || o.height < 2)
        detail::raise<std::invalid_argument>("simdverlet: a cloth needs at least 2 x 2 particles, got " +
                                             std::to_string(o.width) + " x " + std::to_string(o.height));
    if (!std::isfinite(o.spacing) || !(o.spacing > T(0)))
        detail::raise<std::invalid_argument>("simdverlet: cloth spacing must be finite and > 0, got " +
                                             number(o.spacing));
    if (!std::isfinite(o.stiffness) || o.stiffness < T(0))
        detail::raise<std::invalid_argument>("simdverlet: cloth stiffness must be finite and >= 0, got " +
                                             number(o.stiffness));
    if (!std::isfinite(o.mass) || !(o.mass > T(0)))
        detail::raise<std::invalid_argument>("simdverlet: cloth mass must be finite and > 0, got " + number(o.mass));
    if (o.mass != T(1) && !sim.state().has_masses())
        detail::raise<std::logic_error>("simdverlet: cloth mass " + number(o.mass) +
                                        " needs a state with per-particle masses (Masses::per_particle)");
    check_gains(o.grab_gains);
    const T curvature = o.curvature_strength.value_or(o.stiffness / T(3));
    if (!std::isfinite(curvature) || curvature < T(0))
        detail::raise<std::invalid_argument>("simdverlet: curvature strength must be finite and >= 0, got " +
                                             number(curvature));
    if (o.material)
        check_grid_material(sim, o);
}

template <class T>
const std::vector<std::uint8_t>& IntactTriangles::refresh(const ConstraintLayers<T>& layers, const Cloth<T>& of)
{
    const void* key = ClothAccess::key(of);
    if (cloth == key && stamp == layers.edit_stamp() && intact.size() == of.triangles().size())
        return intact;
    const auto& triangles = of.triangles();
    intact.resize(triangles.size());
    broken = 0;
    const bool held = ClothAccess::solve(of) != nullptr;
    for (std::size_t t = 0; t < triangles.size(); ++t)
    {
        const auto& tri = triangles[t];
        const std::size_t a = of.index(std::size_t(tri[0])), b = of.index(std::size_t(tri[1])),
                          c = of.index(std::size_t(tri[2]));
        // A material cloth's solve holds every triangle, whatever the spring layers say.
        intact[t] = held || (layers.joined(a, b) && layers.joined(b, c) && layers.joined(c, a)) ? 1 : 0;
        broken += intact[t] ? 0 : 1;
    }
    cloth = key;
    stamp = layers.edit_stamp();
    return intact;
}
} // namespace detail

/// Appends a width x height cloth to `sim` and returns its handle. Validates every option and
/// every layout position before appending anything, so a failed call leaves sim unchanged.
///
/// Without a material the cloth is the seed's: a spring in each grid slot, held by the explicit
/// step, and a curvature pull. With options.material it has no springs in slots: its stretch and
/// bending are held by the implicit cloth solve, registered as "cloth_solve@<name>", as a mesh
/// cloth with a material is (the grid's triangles are its mesh).
template <class T>
Cloth<T> add_cloth(Simulation<T>& sim, ClothOptions<T> options)
{
    detail::check_cloth_options(sim, options);
    auto& world = *detail::world_of(sim);
    if (!options.name.empty() && sim.bulk_forces().contains(options.name + ".curvature"))
        detail::raise<std::invalid_argument>("simdverlet: a cloth named '" + options.name + "' is already registered");
    if (sim.pending_removals() > 0)
        detail::raise<std::logic_error>(
            "simdverlet: cannot append a cloth while particle removals are queued: the next "
            "step would renumber it. Step once first.");
    const int w = options.width;
    const int h = options.height;
    const std::size_t base = sim.size();
    std::vector<Vec3<T>> layout;
    std::vector<bool> pinned;
    layout.reserve(std::size_t(w * h));
    for (int r = 0; r < h; ++r)
        for (int c = 0; c < w; ++c)
        {
            const Vec3<T> p = options.position ? options.position(c, r)
                                               : Vec3<T>(T(c) * options.spacing, T(r) * options.spacing, T(0));
            if (!p.allFinite())
                detail::raise<std::invalid_argument>("simdverlet: cloth layout position of cell (" + std::to_string(c) +
                                                     ", " + std::to_string(r) + ") is not finite");
            layout.push_back(p);
            pinned.push_back(options.pinned && options.pinned(c, r));
        }
    if (!sim.state().has_masses())
        for (std::size_t k = 0; k < pinned.size(); ++k)
            if (pinned[k])
                detail::raise<std::logic_error>("simdverlet: cannot pin cloth cell (" + std::to_string(int(k) % w) +
                                                ", " + std::to_string(int(k) / w) +
                                                "): the simulation's state has unit masses (Masses::unit)");

    // A material decides each particle's mass from the area around it in the rest shape, and
    // holds the sheet by the implicit solve instead of the slots' springs.
    std::optional<detail::MeshClothPlan<T>> plan;
    TriangleMesh<T> rest_shape;
    std::vector<T> inv_masses(layout.size(), T(1) / options.mass);
    if (options.material)
    {
        for (int r = 0; r < h; ++r)
            for (int c = 0; c < w; ++c)
                rest_shape.vertices.push_back(options.rest_length_from_layout
                                                  ? layout[std::size_t(r * w + c)]
                                                  : Vec3<T>(T(c) * options.spacing, T(r) * options.spacing, T(0)));
        rest_shape.triangles = detail::grid_triangles(w, h);
        plan = detail::plan_material_cloth(rest_shape, *options.material);
        for (std::size_t k = 0; k < layout.size(); ++k)
        {
            if (!(plan->mass[k] > T(0)) || !std::isfinite(plan->mass[k]))
                detail::raise<std::invalid_argument>(
                    "simdverlet: cloth cell (" + std::to_string(int(k) % w) + ", " + std::to_string(int(k) / w) +
                    ") has mass " + detail::number(plan->mass[k]) + " from the areas around it in its rest layout");
            inv_masses[k] = T(1) / plan->mass[k];
        }
    }
    sim.state().reserve(base + layout.size());
    for (std::size_t k = 0; k < layout.size(); ++k)
        sim.add_particle(layout[k], pinned[k] ? T(0) : inv_masses[k]);

    const auto rest = [&](std::size_t a, std::size_t b) {
        return options.rest_length_from_layout ? (layout[a] - layout[b]).norm() : options.spacing;
    };
    auto& k = sim.constraints();
    for (int r = 0; r < h && !options.material; ++r)
        for (int c = 0; c < w; ++c)
        {
            const std::size_t local = std::size_t(r * w + c);
            const std::size_t i = base + local;
            const auto wire = [&](int slot, std::size_t other) {
                k.set_slot(i, slot, std::int32_t(base + other), rest(local, other), options.stiffness);
            };
            if (r + 1 < h)
                wire(kClothDown, local + std::size_t(w));
            if (r > 0)
                wire(kClothUp, local - std::size_t(w));
            if (c + 1 < w)
                wire(kClothRight, local + 1);
            if (c > 0)
                wire(kClothLeft, local - 1);
        }

    auto data = std::make_shared<detail::ClothData<T>>();
    data->world = detail::world_of(sim);
    data->base = base;
    data->count = layout.size();
    data->width = w;
    data->height = h;
    data->inv_mass = std::move(inv_masses);
    data->triangles = detail::grid_triangles(w, h);
    data->curvature = options.material ? T(0) : options.curvature_strength.value_or(options.stiffness / T(3));
    data->grab_gains = options.grab_gains;
    data->name = options.name.empty() ? "cloth@" + std::to_string(base) : options.name;
    data->protection = world.protect_range(base, base + layout.size(), "cloth '" + data->name + "'");
    if (options.material)
    {
        std::vector<std::uint32_t> identity(layout.size());
        std::iota(identity.begin(), identity.end(), std::uint32_t(0));
        data->solve = detail::add_cloth_solve(
            sim, detail::material_solve(rest_shape, *plan, *options.material, identity, base),
            "cloth_solve@" + data->name);
    }

    // One bulk pass over the whole patch rather than a force generator per particle: a single
    // sweep with contiguous neighbour loads, and strength 0 skips it without unregistering.
    // The stage shares the cloth's data, so curvature keeps working when the user drops the handle,
    // and refers to the world that owns it, which outlives it and never moves.
    sim.add_bulk_force(data->name + ".curvature", [cloth = data, world = &world](State3<T>& s, T) {
        if (cloth->curvature == T(0))
            return;
        const auto a = s.arrays_view();
        // The live slots decide which neighbours pull, so a cut or torn sheet comes apart.
        const auto c = world->constraints().arrays_view();
        // Over the executor in whole rows: a chunk of the cloth's particles takes the rows that
        // start in it.
        const auto width = std::size_t(cloth->width), height = std::size_t(cloth->height);
        world->for_each_chunk(width * height, [&](std::size_t b, std::size_t e) {
            const std::size_t first = (b + width - 1) / width, last = (e + width - 1) / width;
            if (world->vectorized())
                kernels::pull_to_neighbour_mean_vector<xsimd::default_arch>(a, c, cloth->base, width, height,
                                                                            cloth->curvature, first, last);
            else
                kernels::pull_to_neighbour_mean_scalar(a, c, cloth->base, width, height, cloth->curvature, first, last);
        });
    });
    return detail::make_cloth(std::move(data));
}

} // namespace simdverlet
