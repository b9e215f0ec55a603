// Shared fixtures for the tests and benchmarks: the guide's hanging sheet built from core calls
// only, and the two rulers the guide measures with (furthest particle apart, peak strain).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace simdverlet::testing
{

/// Slot layout of the grid: each axis neighbour sits at one constant index offset per slot.
enum GridSlot : int
{
    kDown = 0,  ///< (c, r + 1), offset +width
    kUp = 1,    ///< (c, r - 1), offset -width
    kRight = 2, ///< (c + 1, r), offset +1
    kLeft = 3,  ///< (c - 1, r), offset -1
};

/// Appends a width x height grid to sim, at `position(c, r)` or by default (c * spacing, r * spacing,
/// 0), wires the four axis slots symmetrically at rest length `spacing`, pins what `pinned(c, r)`
/// selects, and returns the base index.
template <class T>
std::size_t add_grid(Simulation<T>& sim, int width, int height, T spacing, T stiffness,
                     const std::function<bool(int, int)>& pinned, const std::function<Vec3<T>(int, int)>& position = {})
{
    const std::size_t base = sim.size();
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c)
            sim.add_particle(position ? position(c, r) : Vec3<T>(T(c) * spacing, T(r) * spacing, T(0)),
                             pinned && pinned(c, r) ? T(0) : T(1));
    auto& k = sim.constraints();
    const auto at = [&](int c, int r) { return std::int32_t(base + std::size_t(r * width + c)); };
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c)
        {
            const std::size_t i = std::size_t(at(c, r));
            if (r + 1 < height)
                k.set_slot(i, kDown, at(c, r + 1), spacing, stiffness);
            if (r > 0)
                k.set_slot(i, kUp, at(c, r - 1), spacing, stiffness);
            if (c + 1 < width)
                k.set_slot(i, kRight, at(c + 1, r), spacing, stiffness);
            if (c > 0)
                k.set_slot(i, kLeft, at(c - 1, r), spacing, stiffness);
        }
    return base;
}

/// The guide's sheet: 20 x 10 at spacing 0.5, hanging from every fourth particle of row 0.
template <class T>
Simulation<T> guide_sheet(T stiffness, int width = 20, int height = 10)
{
    Simulation<T> sim;
    add_grid<T>(sim, width, height, T(0.5), stiffness, [](int c, int r) { return r == 0 && c % 4 == 0; });
    return sim;
}

/// The guide's step: dt 1/60, damping 0.99, gravity 2 along +y (down on the page).
template <class T>
StepParams<T> guide_step(int iterations)
{
    return {.dt = T(1) / T(60), .damping = T(0.99), .gravity = {T(0), T(2), T(0)}, .iterations = iterations};
}

/// The guide's sheet lying flat in the x-z plane at height y = 0, free, to be dropped on things.
template <class T>
Simulation<T> flat_sheet(T stiffness = T(60))
{
    Simulation<T> sim;
    add_grid<T>(sim, 20, 10, T(0.5), stiffness, {},
                [](int c, int r) { return Vec3<T>(T(c) * T(0.5), T(0), T(r) * T(0.5)); });
    return sim;
}

/// Mean position of every particle, in double.
template <class T>
Vec3<double> centroid(const Simulation<T>& sim)
{
    Vec3<double> c = Vec3<double>::Zero();
    for (std::size_t i = 0; i < sim.size(); ++i)
        c += sim.state().position(i).template cast<double>();
    return c / double(sim.size());
}

/// Bit equality of every live coordinate (x and px) of two simulations.
template <class T>
bool same_positions(const Simulation<T>& a, const Simulation<T>& b)
{
    const auto eq = [](auto u, auto v) { return std::equal(u.begin(), u.end(), v.begin(), v.end()); };
    const auto& s = a.state();
    const auto& t = b.state();
    return eq(s.x(), t.x()) && eq(s.y(), t.y()) && eq(s.z(), t.z()) && eq(s.px(), t.px()) && eq(s.py(), t.py()) &&
           eq(s.pz(), t.pz());
}

/// Springs the constraint set holds, counted as the debug view draws them: a symmetric pair once,
/// a one-way slot by its owner.
template <class T>
std::size_t count_segments(const Simulation<T>& sim)
{
    const auto& k = sim.constraint_layers();
    std::size_t n = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
        k.for_each_wired(i, [&](SlotRef, std::int32_t neighbour, T, T stiffness) {
            if (stiffness == T(0))
                return;
            const auto j = std::size_t(neighbour);
            const auto back = k.slot_to(j, std::int32_t(i));
            const bool paired = back && k.live(j, *back);
            n += (!paired || i < j) ? 1 : 0;
        });
    return n;
}

/// Live slots whose neighbour has no live slot pointing back: one-way constraints, and the halves
/// a faulty tear would leave behind.
template <class T>
std::size_t half_pairs(const Simulation<T>& sim)
{
    const auto& k = sim.constraint_layers();
    std::size_t n = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
        k.for_each_wired(i, [&](SlotRef, std::int32_t neighbour, T, T stiffness) {
            if (stiffness == T(0))
                return;
            const auto j = std::size_t(neighbour);
            const auto back = k.slot_to(j, std::int32_t(i));
            n += back && k.live(j, *back) ? 0 : 1;
        });
    return n;
}

/// True when every live slot's neighbour has a live slot pointing back: no half-torn pairs.
template <class T>
bool all_pairs_whole(const Simulation<T>& sim)
{
    return half_pairs(sim) == 0;
}

/// Connected components of the particle graph the live slots form (union-find).
template <class T>
std::size_t connected_components(const Simulation<T>& sim, std::size_t begin = 0, std::size_t end = std::size_t(-1))
{
    end = std::min(end, sim.size());
    std::vector<std::size_t> parent(sim.size());
    for (std::size_t i = 0; i < parent.size(); ++i)
        parent[i] = i;
    const auto root = [&](std::size_t x) {
        while (parent[x] != x)
            x = parent[x] = parent[parent[x]];
        return x;
    };
    for (std::size_t i = begin; i < end; ++i)
        sim.constraint_layers().for_each_wired(i, [&](SlotRef, std::int32_t j, T, T stiffness) {
            if (stiffness != T(0))
                parent[root(i)] = root(std::size_t(j));
        });
    std::size_t n = 0;
    for (std::size_t i = begin; i < end; ++i)
        n += root(i) == i ? 1 : 0;
    return n;
}

/// Shakes every free particle by up to `amount` in each axis, deterministically.
template <class T>
void jitter(Simulation<T>& sim, T amount, unsigned seed = 42)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-double(amount), double(amount));
    for (std::size_t i = 0; i < sim.size(); ++i)
    {
        if (sim.state().is_pinned(i))
            continue;
        const Vec3<T> p = sim.state().position(i);
        sim.state().set_position(i, p + Vec3<T>(T(u(rng)), T(u(rng)), T(u(rng))), true);
    }
}

/// A copy of a particle-and-slot simulation (no stages) with its particles relabelled by a random
/// permutation drawn from `seed`: the order a mesh from a file may arrive in. Every spring keeps its
/// two ends and its slot.
template <class T>
Simulation<T> shuffled(const Simulation<T>& source, unsigned seed)
{
    const std::size_t n = source.size();
    std::vector<std::size_t> order(n); // order[new] = old
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    std::vector<std::int32_t> where(n); // where[old] = new
    for (std::size_t k = 0; k < n; ++k)
        where[order[k]] = std::int32_t(k);
    Simulation<T> sim;
    for (std::size_t k = 0; k < n; ++k)
        sim.add_particle(source.state().position(order[k]), source.state().inverse_mass(order[k]));
    const auto& c = source.constraints();
    for (std::size_t k = 0; k < n; ++k)
        for (int s = 0; s < 4; ++s)
            if (c.live(order[k], s))
                sim.constraints().set_slot(k, s, where[std::size_t(c.neighbour(order[k], s))],
                                           c.rest_length(order[k], s), c.stiffness(order[k], s));
    return sim;
}

/// A net whose particles have more springs than one constraint layer holds: `count` particles
/// jittered over a plane, each joined to its `nearest` nearest others (rest length the distance
/// in the layout, stiffness varying from spring to spring), the first `pinned` pinned. Built with
/// Simulation::connect in a fixed order, so the springs past a particle's fourth land in further
/// layers. Returns the number of springs.
template <class T>
std::size_t add_net(Simulation<T>& sim, std::size_t count, std::size_t nearest, std::size_t pinned = 0,
                    unsigned seed = 7)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const std::size_t base = sim.size();
    const double side = std::sqrt(double(count));
    std::vector<Vec3<T>> p;
    for (std::size_t k = 0; k < count; ++k)
    {
        const double x = double(k % std::size_t(side)) + 0.4 * u(rng), y = double(k / std::size_t(side)) + 0.4 * u(rng);
        p.emplace_back(T(x * 0.5), T(y * 0.5), T(0.05 * u(rng)));
        sim.add_particle(p.back(), k < pinned ? T(0) : T(1));
    }
    std::size_t springs = 0;
    for (std::size_t a = 0; a < count; ++a)
    {
        std::vector<std::size_t> others(count);
        std::iota(others.begin(), others.end(), std::size_t(0));
        std::stable_sort(others.begin(), others.end(), [&](std::size_t l, std::size_t r) {
            return (p[l] - p[a]).squaredNorm() < (p[r] - p[a]).squaredNorm();
        });
        for (std::size_t n = 1; n <= nearest && n < count; ++n)
        {
            const std::size_t b = others[n];
            if (b < a && sim.constraint_layers().slot_to(base + a, std::int32_t(base + b)))
                continue; // b already took a as one of its nearest
            sim.connect(base + a, base + b, (p[a] - p[b]).norm(), T(40) + T(20) * T(u(rng)));
            ++springs;
        }
    }
    return springs;
}

/// Captures the library's warnings for the lifetime of the object, then puts the previous hook back.
struct LogCapture
{
    std::vector<std::string> warnings;
    LogHook previous;
    LogCapture()
    {
        previous = set_log_hook([this](LogLevel level, std::string_view m) {
            if (level == LogLevel::warning)
                warnings.emplace_back(m);
        });
    }
    ~LogCapture() { set_log_hook(previous); }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;
};

#ifdef SIMDVERLET_TEST_OUTPUT_DIR
/// Where a test writes a file of its own: under the build tree, never beside the sources.
inline std::string output_path(const std::string& name)
{
    std::string path = SIMDVERLET_TEST_OUTPUT_DIR; // appended, not `+`: GCC 12 warns falsely on the temporary
    path += '/';
    path += name;
    return path;
}
#endif

/// What `fn` throws as an E, or "no exception" when it returns: for checking that an error names
/// the bad value.
template <class E = std::exception, class Fn>
std::string error_message(Fn&& fn)
{
    try
    {
        fn();
    }
    catch (const E& e)
    {
        return e.what();
    }
    return "no exception";
}

/// Every stage the library offers, on one simulation: a cloth with curvature, a sphere, a floor and a mesh shelf,
/// tearing, a gusting wind on the cloth, a rope tied to its corner, self-collision, and a grab pulling the cloth's
/// bottom edge down and sideways. What ownership and snapshot tests run, so nothing escapes them.
template <class T>
struct FullWorld
{
    Cloth<T> cloth;
    ColliderSet<T> colliders;
    Tearing<T> tearing;
    Wind<T> wind;
    Strand<T> rope;
    SelfCollision<T> self;
    Tethers<T> tethers;
    StrainLimit<T> limit;
    MotionConstraints<T> motion;

    explicit FullWorld(Simulation<T>& sim)
        : cloth(add_cloth(sim, {.pinned = [](int c, int r) { return r == 0 && c % 4 == 0; }})),
          colliders(add_colliders(sim, {}, SphereCollider<T>({.center = {T(5), T(6), T(1)}, .radius = T(1.5)}),
                                  PlaneCollider<T>({.normal = {0, -1, 0}, .offset = T(-9)}),
                                  // A tilted two-triangle shelf that torn pieces land on.
                                  TriangleMeshCollider<T>({.vertices = {{T(-1), T(7.3), T(-1.5)},
                                                                        {T(11), T(7.7), T(-1.5)},
                                                                        {T(11), T(7.7), T(1.5)},
                                                                        {T(-1), T(7.3), T(1.5)}},
                                                           .triangles = {{0, 1, 2}, {0, 2, 3}},
                                                           .thickness = T(0.1)}))),
          tearing(add_tearing(sim, {.max_strain = T(0.25)})),
          wind(add_wind(sim, {.gust =
                                  [](const Vec3<T>& p, T t) {
                                      return Vec3<T>(T(1) + T(2) * std::sin(T(3) * t), T(0),
                                                     T(1.5) * std::cos(T(2) * t + p.x()));
                                  },
                              .cloths = {cloth}})),
          rope(add_strand(sim, {.count = 8,
                                .spacing = T(0.3),
                                .bend_stiffness = T(0.3),
                                .position = [](int n) { return Vec3<T>(T(0), T(4.5) + T(0.3) * T(n + 1), T(0)); }})),
          self(add_self_collision(sim, SelfCollisionOptions<T>{.thickness = T(0.45)})),
          // Loose enough that the hand still tears the sheet (tearing at 0.25 strain).
          tethers(add_tethers(sim, TethersOptions<T>{.cloth = cloth, .slack = T(1.6)})),
          limit(add_strain_limit(
              sim, StrainLimitOptions<T>{.max_stretch = T(0.35), .max_compression = T(0.3), .passes = 2})),
          motion(
              add_motion_constraints(sim, MotionConstraintsOptions<T>{.range = rope.range(), .max_distance = T(1.5)}))
    {
        rope.attach_to(cloth.index(0, 9), 0);
        cloth.grab_nearest(grab_target(0));
    }

    /// Where the hand is at a frame: it drags the bottom edge's middle down and to the side.
    static Vec3<T> grab_target(int frame)
    {
        return Vec3<T>(T(5) + T(0.01) * T(frame), T(4.5) + T(0.025) * T(frame), T(0.01) * T(frame));
    }

    /// The user's input for a frame, then the step.
    void frame(Simulation<T>& sim, int frame)
    {
        cloth.move_grabbed(grab_target(frame));
        sim.step({.gravity = {0, T(2), 0}, .iterations = 16});
    }
};

} // namespace simdverlet::testing
