// Cloth: a rectangular grid of particles appended to a simulation, wired through the simulation's
// one constraint set, with a curvature bulk force and a handle that speaks grid coordinates.
//
// A cloth is a contiguous index block [base, base + width * height), row by row, and everything
// here is written in those terms; the block is protected, so removing a particle inside or below
// it is refused. Each particle's slots have fixed roles with a constant index offset per slot
// (down +width, up -width, right +1, left -1), which is what lets the solver load a cloth's
// neighbours contiguously instead of gathering them.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "controllers.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "simulation.hpp"
#include "state.hpp"

namespace simdverlet
{

/// Slot roles of a cloth particle. The grid wires them symmetrically: slot kClothDown of (c, r)
/// and slot kClothUp of (c, r + 1) are the two halves of one spring.
enum ClothSlot : int
{
    kClothDown = 0,  ///< (c, r + 1): index + width
    kClothUp = 1,    ///< (c, r - 1): index - width
    kClothRight = 2, ///< (c + 1, r): index + 1
    kClothLeft = 3,  ///< (c - 1, r): index - 1
};

/// What add_cloth appends.
template <class T>
struct ClothOptions
{
    int width = 20;      ///< particles per row, >= 2
    int height = 10;     ///< rows, >= 2
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

namespace detail
{
template <class T>
struct ClothData
{
    std::weak_ptr<World<T>> world;
    std::size_t base = 0;
    int width = 0;
    int height = 0;
    T mass = T(1);
    T curvature = T(0);
    PidGains<T> grab_gains;
    std::string name;
    std::uint64_t protection = 0;
    std::optional<PidController<T>> grab;
    bool removed = false;
};

/// The library's own way into a cloth's world (render_mesh reads its state and constraints),
/// without widening the handle's public surface.
struct ClothAccess;
} // namespace detail

/// Live handle of a cloth. Copies address the same cloth. It refers to its simulation's world,
/// not to the Simulation object, so the simulation may be moved freely; once the simulation is
/// destroyed, calls that need it report a logic_error naming the cloth.
template <class T>
class Cloth
{
  public:
    /// Particle index of grid cell (col, row).
    std::size_t index(int col, int row) const
    {
        if (col < 0 || col >= d().width || row < 0 || row >= d().height)
            detail::raise<std::out_of_range>("simdverlet: cell (" + std::to_string(col) + ", " + std::to_string(row) +
                                             ") is outside the " + std::to_string(d().width) + " x " +
                                             std::to_string(d().height) + " cloth '" + d().name + "'");
        return d().base + std::size_t(row) * std::size_t(d().width) + std::size_t(col);
    }

    std::size_t base() const noexcept { return d().base; }
    std::size_t end() const noexcept { return d().base + count(); }
    std::size_t count() const noexcept { return std::size_t(d().width) * std::size_t(d().height); }
    int width() const noexcept { return d().width; }
    int height() const noexcept { return d().height; }
    const std::string& name() const noexcept { return d().name; }
    ParticleRange range() const noexcept { return {base(), end()}; }
    /// The cloth's layout, for stages that batch a grid's neighbours (TriangleMeshCollider).
    ParticleGrid grid() const noexcept { return {base(), std::size_t(width()), std::size_t(height())}; }
    bool contains(std::size_t particle) const noexcept { return particle >= base() && particle < end(); }

    Vec3<T> position(int col, int row) const { return state().position(index(col, row)); }

    /// Pins (inverse mass 0) or releases (inverse mass 1 / mass) one cell.
    void pin(int col, int row, bool pinned = true)
    {
        state().set_inverse_mass(index(col, row), pinned ? T(0) : T(1) / d().mass);
    }
    bool is_pinned(int col, int row) const { return state().is_pinned(index(col, row)); }

    /// Moves one cell. By default it arrives at rest; keep_velocity carries its per-frame
    /// displacement along, so it keeps moving as it was.
    void teleport(int col, int row, const Vec3<T>& to, bool keep_velocity = false)
    {
        state().set_position(index(col, row), to, keep_velocity);
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
        data().grab = world.add_pid_position_controller(nearest, p, d().grab_gains, d().world,
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

    T curvature_strength() const noexcept { return d().curvature; }
    /// Live; 0 switches curvature off without unregistering anything.
    void set_curvature_strength(T strength)
    {
        check_curvature(strength);
        data().curvature = strength;
    }

    /// The grid as drawn from the indices: each row and each column as a polyline. It shows the
    /// grid the cloth was built as, whatever the constraint set now holds; debug_lines shows that.
    std::vector<std::vector<Vec3<T>>> lines() const
    {
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

    /// Detaches the cloth: clears its particles' slots, unregisters its curvature, lets go of a
    /// grab and lifts the removal protection. The particles stay where they are. Anything tied to
    /// the cloth keeps its own half of the tie.
    void remove()
    {
        if (d().removed)
            return;
        release();
        world().remove_bulk_force(curvature_stage());
        world().detach_block(base(), end(), d().protection);
        data().removed = true;
    }

    bool removed() const noexcept { return d().removed; }
    /// Whether this cloth was added to `sim` (the same simulation, wherever it has moved).
    bool belongs_to(const Simulation<T>& sim) const { return d().world.lock() == detail::world_of(sim); }

  private:
    template <class U>
    friend Cloth<U> add_cloth(Simulation<U>& sim, ClothOptions<U> options);
    friend struct detail::ClothAccess;

    explicit Cloth(std::shared_ptr<detail::ClothData<T>> data) : m_data(std::move(data)) {}

    const detail::ClothData<T>& d() const noexcept { return *m_data; }
    detail::ClothData<T>& data() noexcept { return *m_data; }
    detail::World<T>& world() const { return *detail::lock_world(d().world, "cloth '" + d().name + "'"); }
    State3<T>& state() const { return world().state(); }
    std::string curvature_stage() const { return d().name + ".curvature"; }

    static void check_curvature(T strength)
    {
        if (!std::isfinite(strength) || strength < T(0))
            detail::raise<std::invalid_argument>("simdverlet: curvature strength must be finite and >= 0, got " +
                                                 detail::number(strength));
    }

    std::shared_ptr<detail::ClothData<T>> m_data;
};

namespace detail
{
struct ClothAccess
{
    template <class T>
    static World<T>& world(const Cloth<T>& cloth)
    {
        return cloth.world();
    }

    /// Identifies the cloth itself, not the handle: copies of a handle give the same key.
    template <class T>
    static const void* key(const Cloth<T>& cloth) noexcept
    {
        return cloth.m_data.get();
    }
};

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
}
} // namespace detail

/// Appends a width x height cloth to `sim` and returns its handle. Validates every option and
/// every layout position before appending anything, so a failed call leaves sim unchanged.
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

    const T inv_mass = T(1) / options.mass;
    sim.state().reserve(base + layout.size());
    for (std::size_t k = 0; k < layout.size(); ++k)
        sim.add_particle(layout[k], pinned[k] ? T(0) : inv_mass);

    const auto rest = [&](std::size_t a, std::size_t b) {
        return options.rest_length_from_layout ? (layout[a] - layout[b]).norm() : options.spacing;
    };
    auto& k = sim.constraints();
    for (int r = 0; r < h; ++r)
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
    data->width = w;
    data->height = h;
    data->mass = options.mass;
    data->curvature = options.curvature_strength.value_or(options.stiffness / T(3));
    data->grab_gains = options.grab_gains;
    data->name = options.name.empty() ? "cloth@" + std::to_string(base) : options.name;
    data->protection = world.protect_range(base, base + layout.size(), "cloth '" + data->name + "'");

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
    return Cloth<T>(std::move(data));
}

} // namespace simdverlet
