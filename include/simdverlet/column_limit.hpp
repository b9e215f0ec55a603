// Column limit: strain limiting along a cloth's columns by solving each column as one chain.
//
// Why a chain solve and not more passes: a spring-by-spring limiter (Jacobi or Gauss-Seidel) moves
// a correction one spring a pass, and a hanging column of 256 springs carries the weight of every
// particle below each one, so on the swinging peer sheet even a hundred sweeps a step leave the
// bound broken. Held all at once, the column's springs form a tridiagonal system (J W J^T) lambda = -C, one row a spring,
// solved exactly in O(n) by Thomas' algorithm: one solve of a straight column lands every spring
// on its bound, and a bent one comes within the linearisation's error, which the next solve
// (or the next substep) removes. This is Goldenthal et al.'s fast projection (2007) restricted
// to the column chains, where the system is tridiagonal.
//
// Every spring of a column is held, not only those past a bound: a spring inside its bounds keeps
// its current length through the solve (its row asks for no change), so the corrections of its
// neighbours cannot stretch it. Dropping those rows, as an active-set solve would, was measured to
// lose the bound within three seconds of the swing (84 % peak strain).
//
// The columns are independent: a vector lane holds a column, so a batch solves 16 columns with
// contiguous loads (a cloth row is contiguous), and the executor splits the columns. The vector
// and scalar twins are one template over V, so every path gives the same bits.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "chain_solve.hpp"
#include "cloth.hpp"
#include "constraints.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "simd.hpp"
#include "simulation.hpp"
#include "stage_state.hpp"
#include "state.hpp"
#include "strain_limit.hpp"

namespace simdverlet
{

/// What add_column_limit registers.
template <class T>
struct ColumnLimitOptions
{
    /// Finite and >= 0: how far past its rest length a column spring may stretch, as a fraction
    /// (0.01: 1 %). Unset, it is max_compression when that is set, else 0.01.
    std::optional<T> max_stretch = std::nullopt;
    /// Finite, in [0, 1): how far below its rest length a column spring may shrink, as a fraction.
    /// Unset, it is max_stretch when that is set, else 0.01.
    std::optional<T> max_compression = std::nullopt;
    /// Chain solves per step, >= 1. One lands a straight column exactly on its bounds; a column
    /// bent within a step needs a second where the step is long (docs/performance.md).
    int solves = 1;
    /// Key in the position-projection registry and in snapshots; default "column_limit@<cloth name>".
    /// A name registered already is an error.
    std::string name = {};
};

namespace detail
{
template <class T>
struct ColumnLimitData
{
    ColumnLimitData() = default;
    ColumnLimitData(Cloth<T> of, std::weak_ptr<World<T>> in) : cloth(std::move(of)), world(std::move(in)) {}

    Cloth<T> cloth;
    std::weak_ptr<World<T>> world;
    StageLink<T> link = {};
    T max_stretch = T(0.01), max_compression = T(0.01);
    int solves = 1;
    std::string name;
    int limited = 0; ///< springs past a bound when the last solve of the last step began
    // Scratch of a solve, one entry a spring (at the index of its lower particle, from the cloth's
    // base): the eliminated super-diagonal, the eliminated right-hand side and the reciprocal of
    // its length (0 for a spring that dropped out), from which the backward pass forms its
    // direction again from the positions it reads anyway: a third of the scratch traffic.
    simd::AlignedVector<T> cp, dp, inv_length;
};

template <class T>
void check_column_limit(T max_stretch, T max_compression, int solves)
{
    check_strain_bounds("column limit", max_stretch, max_compression, "solves", solves);
}

/// The columns of a cloth as a solve reads them: particle (c, r) at base + r * width + c, the
/// spring from (c, r - 1) down to (c, r) in slot kClothDown of the upper particle.
template <class T>
struct ColumnView
{
    StateArrays<T> s;
    ConstraintArrays<T> springs;
    std::size_t base, width;
    int height;
    T stretch, compression;
};

/// One solve of the columns [c, c + lanes of V), written once for a scalar (one column) and a
/// batch. Spring r joins rows r - 1 and r and is held at its length clamped to the bounds: the
/// rows of J W J^T are (w_{r-1} + w_r) on the diagonal and -w_{r-1} n_{r-1} . n_r between springs
/// r - 1 and r (their shared particle). Thomas' algorithm, fused: the forward pass forms each
/// spring's direction, its row and the elimination (the super-diagonal of row r - 1 is the
/// sub-diagonal of row r, so its eliminated value is formed at row r); the backward pass finds
/// lambda and moves each particle by w (lambda_r n_r - lambda_{r+1} n_{r+1}). A spring that is
/// torn, has no length, joins two pinned particles or was rewired away from the cell below drops
/// out (an identity row, no direction): the column parts there. With kCount, returns the springs
/// that were past a bound (only the last solve of a step reports them).
template <class V, bool kCount, class T>
int solve_columns(const ColumnView<T>& v, ColumnLimitData<T>& d, std::size_t c)
{
    using simd::load_at, simd::store_at;
    const V zero(T(0)), one(T(1));
    const V stretch(T(1) + v.stretch), compression(T(1) - v.compression);
    const StateArrays<T>& s = v.s;
    const auto w_at = [&](std::size_t i) { return s.inv_mass ? load_at<V>(s.inv_mass + i) : one; };
    const auto at = [&](int r) { return std::size_t(r) * v.width + c; }; // from the cloth's base
    std::size_t up = v.base + c;
    V ux = load_at<V>(s.x + up), uy = load_at<V>(s.y + up), uz = load_at<V>(s.z + up), w_up = w_at(up);
    V pnx = zero, pny = zero, pnz = zero; // the spring above's direction: none above row 1
    V pivot = one, dp = zero;             // the row above's pivot and eliminated right-hand side
    int past = 0;
    for (int r = 1; r < v.height; ++r)
    {
        const std::size_t i = up + v.width;
        const V x = load_at<V>(s.x + i), y = load_at<V>(s.y + i), z = load_at<V>(s.z + i), w = w_at(i);
        const V dx = x - ux, dy = y - uy, dz = z - uz;
        const V length = simd::sqrt(dx * dx + dy * dy + dz * dz);
        const V rest = load_at<V>(v.springs.rest[kClothDown] + up);
        auto live = (load_at<V>(v.springs.stiffness[kClothDown] + up) > zero) &&
                    simd::lanes_point_at<V>(v.springs.neighbour[kClothDown] + up, std::int64_t(i)) && (length > zero) &&
                    (w_up + w > zero);
        const V target = detail::bound_length(length, rest, compression, stretch);
        if constexpr (kCount)
            past += simd::count(live && !(target == length)); // != is ordered on AVX in xsimd 8
        const V inv = simd::select(live, one / simd::select(live, length, one), zero);
        const V nx = dx * inv, ny = dy * inv, nz = dz * inv;
        const V cp_above = detail::eliminate_spring(w_up, w, pnx * nx + pny * ny + pnz * nz, live, target - length,
                                                    pivot, dp);
        store_at(d.cp.data() + at(r - 1), cp_above);
        store_at(d.dp.data() + at(r), dp);
        store_at(d.inv_length.data() + at(r), simd::select(live, inv, zero)); // 0 where the row was dropped
        ux = x, uy = y, uz = z, w_up = w;
        pnx = simd::select(live, nx, zero), pny = simd::select(live, ny, zero), pnz = simd::select(live, nz, zero);
        up = i;
    }
    V lambda_below = zero, bx = zero, by = zero, bz = zero; // the spring below: lambda, direction
    std::size_t i = v.base + at(v.height - 1);
    V x = load_at<V>(s.x + i), y = load_at<V>(s.y + i), z = load_at<V>(s.z + i); // as the forward pass read them
    for (int r = v.height - 1; r >= 0; --r, i -= v.width)
    {
        V lambda = zero, nx = zero, ny = zero, nz = zero; // row 0 has no spring above
        V ux = zero, uy = zero, uz = zero;
        if (r > 0)
        {
            const std::size_t above = i - v.width;
            ux = load_at<V>(s.x + above), uy = load_at<V>(s.y + above), uz = load_at<V>(s.z + above);
            const V inv = load_at<V>(d.inv_length.data() + at(r));
            nx = (x - ux) * inv, ny = (y - uy) * inv, nz = (z - uz) * inv;
            const V cp = r + 1 < v.height ? load_at<V>(d.cp.data() + at(r)) : zero;
            lambda = load_at<V>(d.dp.data() + at(r)) - cp * lambda_below;
        }
        const V w = w_at(i);
        const auto moves = w > zero; // a pinned particle keeps its bits, even beside a NaN
        store_at(s.x + i, simd::select(moves, x + w * (lambda * nx - lambda_below * bx), x));
        store_at(s.y + i, simd::select(moves, y + w * (lambda * ny - lambda_below * by), y));
        store_at(s.z + i, simd::select(moves, z + w * (lambda * nz - lambda_below * bz), z));
        lambda_below = lambda, bx = nx, by = ny, bz = nz;
        x = ux, y = uy, z = uz;
    }
    return past;
}

/// The registered stage: `solves` solves of every column, the columns split over the executor.
template <class T>
void limit_columns(ColumnLimitData<T>& d, const World<T>& world, State3<T>& state)
{
    d.limited = 0;
    if (d.cloth.removed())
        return;
    const ColumnView<T> v{state.arrays_view(), world.constraints().arrays_view(),
                          d.cloth.base(),      std::size_t(d.cloth.width()),
                          d.cloth.height(),    d.max_stretch,
                          d.max_compression};
    for (auto* scratch : {&d.cp, &d.dp, &d.inv_length})
        scratch->resize(d.cloth.count());
    constexpr std::size_t L = simd::kLanes<T>;
    const bool vectorized = world.vectorized();
    const int solves = d.solves;
    // Every solve of a batch of columns before the next batch: the columns are independent, so
    // this is the same arithmetic as solving all columns once and again, and the batch's rows are
    // still in cache for its later solves.
    const auto solve_all = [&](auto batch, std::size_t c) {
        using V = decltype(batch);
        for (int solve = 1; solve < solves; ++solve)
            solve_columns<V, false>(v, d, c);
        return solve_columns<V, true>(v, d, c);
    };
    std::atomic<int> past{0};
    world.for_each_chunk(v.width, [&](std::size_t b, std::size_t e) {
        int n = 0;
        std::size_t c = b;
        if (vectorized)
            for (; c + L <= e; c += L)
                n += solve_all(simd::Batch<T>(T(0)), c);
        for (; c < e; ++c)
            n += solve_all(T(0), c);
        past.fetch_add(n, std::memory_order_relaxed);
    });
    d.limited = past.load();
}
} // namespace detail

/// Handle of a cloth's column limit, with the shape of every stage handle (handle.hpp).
template <class T>
class ColumnLimit : public detail::StageHandle<T, detail::ColumnLimitData<T>>
{
    using Base = detail::StageHandle<T, detail::ColumnLimitData<T>>;

  public:
    /// A handle of no stage yet: it reports an empty stage that was removed, and acting on it throws
    /// std::logic_error.
    ColumnLimit() = default;
    /// Column springs past a bound when the last solve of the last step began: 0 once the bounds
    /// hold going into it.
    int limited() const noexcept { return this->data().limited; }

    T max_stretch() const noexcept { return this->data().max_stretch; }
    T max_compression() const noexcept { return this->data().max_compression; }
    int solves() const noexcept { return this->data().solves; }
    /// Throws std::invalid_argument, changing nothing, on bounds add_column_limit would refuse.
    void set_bounds(T max_stretch, T max_compression)
    {
        auto& d = this->live();
        detail::check_column_limit(max_stretch, max_compression, d.solves);
        d.max_stretch = max_stretch;
        d.max_compression = max_compression;
    }
    /// Throws std::invalid_argument, changing nothing, unless solves >= 1.
    void set_solves(int solves)
    {
        auto& d = this->live();
        detail::check_column_limit(d.max_stretch, d.max_compression, solves);
        d.solves = solves;
    }

  private:
    template <class U>
    friend ColumnLimit<U> add_column_limit(Simulation<U>& sim, const Cloth<U>& cloth, ColumnLimitOptions<U> options);
    explicit ColumnLimit(std::shared_ptr<detail::ColumnLimitData<T>> data) : Base(std::move(data)) {}
};

/// Registers a column limit on `cloth` as a position projection (after the stages registered
/// before it) and returns its handle. Register it after the cloth's tethers: the tethers bound
/// each particle's distance to its anchor, the column limit then each spring of the column.
/// Throws, registering nothing, on a negative or non-finite bound, a compression bound of 1 or
/// more, solves < 1, a name registered already, a cloth that was removed or belongs to another simulation, or a
/// cloth made from a triangle mesh (it has no columns; std::logic_error).
template <class T>
ColumnLimit<T> add_column_limit(Simulation<T>& sim, const Cloth<T>& cloth, ColumnLimitOptions<T> options = {})
{
    const auto [max_stretch, max_compression] = detail::resolve_strain_bounds("column limit", options.max_stretch,
                                                                              options.max_compression, T(0.01));
    detail::check_column_limit(max_stretch, max_compression, options.solves);
    if (!cloth.belongs_to(sim))
        detail::raise<std::invalid_argument>("simdverlet: cloth '" + cloth.name() + "' is not in this simulation");
    if (cloth.removed())
        detail::raise<std::logic_error>("simdverlet: cloth '" + cloth.name() + "' was removed");
    if (!cloth.is_grid())
        detail::raise<std::logic_error>("simdverlet: a column limit solves a grid's columns, and cloth '" +
                                        cloth.name() + "' was made from a triangle mesh: use add_strain_limit");
    options.name = detail::stage_name(sim.position_projections(), options.name, "column_limit@" + cloth.name());
    const auto world = detail::world_of(sim);
    auto data = std::make_shared<detail::ColumnLimitData<T>>(cloth, world);
    data->max_stretch = max_stretch;
    data->max_compression = max_compression;
    data->solves = options.solves;
    data->name = options.name;
    detail::register_projection(sim, data, options.name, "column limit",
                                [](auto& d, auto& world, State3<T>& state) { detail::limit_columns(d, world, state); });
    sim.add_stage_state(options.name, detail::field_state(data, [](detail::ColumnLimitData<T>& l) {
                            return std::tie(l.max_stretch, l.max_compression, l.solves);
                        }));
    return ColumnLimit<T>(std::move(data));
}

} // namespace simdverlet
