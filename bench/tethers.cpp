// Stretch control on the swinging peer scene: the 256 x 256 sheet (spacing 0.5, unit masses, 60 Hz,
// g = 9.81, damping 0.99833 a frame, a widely used engine's default air) laid out horizontally,
// pinned along one edge and released; 600 frames, the whole swing. Each configuration of
// stiffness, substeps, tethers and strain limiting reports its time per frame and, in the label,
// the peak strain of any spring during the swing and in the tenth second (the targets: <= 4 % and
// <= 1 %). The strain is measured between frames with the timer paused.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

#include "meshes.hpp"
#include "threads.hpp"

namespace
{
using namespace simdverlet;

struct SwingResult
{
    double peak = 0, late = 0;
    double late_stretch = 0, late_compression = 0; ///< the two sides of `late`
    double ms_per_frame = 0;                       ///< the steps alone, wall clock
};

/// The worst stretch and the worst compression of a sheet's springs, as fractions of rest length.
struct Strains
{
    double stretch = 0, compression = 0;
};

/// Strains of every live spring, read the way peak_strain reads them (whose value is the larger of
/// the two).
Strains spring_strains(const Simulation<float>& sim)
{
    const auto& s = sim.state();
    Strains worst;
    for (std::size_t i = 0; i < sim.size(); ++i)
        sim.constraint_layers().for_each_wired(i, [&](SlotRef, std::int32_t neighbour, float rest, float stiffness) {
            if (stiffness == 0.0f || !(rest > 0.0f))
                return;
            const auto j = std::size_t(neighbour);
            const double dx = double(s.x()[i]) - double(s.x()[j]), dy = double(s.y()[i]) - double(s.y()[j]),
                         dz = double(s.z()[i]) - double(s.z()[j]);
            const double strain = (std::sqrt(dx * dx + dy * dy + dz * dz) - double(rest)) / double(rest);
            worst.stretch = std::max(worst.stretch, strain);
            worst.compression = std::max(worst.compression, -strain);
        });
    return worst;
}

/// How a swinging sheet is pinned: along its top row (row 0, the benchmark's), its left column,
/// its two top corners or one of them.
enum class Pinning
{
    top_row,
    left_column,
    two_corners,
    one_corner,
};

const char* name_of(Pinning p)
{
    static constexpr const char* kNames[] = {"top row", "left column", "two top corners", "one corner"};
    return kNames[int(p)];
}

/// A side x side sheet without bending stiffness laid out horizontally (in the x-z plane; +y is
/// down), pinned the way `pinning` says.
Cloth<float> add_swinging_sheet(Simulation<float>& sim, int side, float spacing, float stiffness,
                                Pinning pinning = Pinning::top_row)
{
    return add_cloth(
        sim,
        {.width = side,
         .height = side,
         .spacing = spacing,
         .stiffness = stiffness,
         .curvature_strength = 0.0f,
         .pinned =
             [pinning, side](int c, int r) {
                 switch (pinning)
                 {
                 case Pinning::left_column:
                     return c == 0;
                 case Pinning::two_corners:
                     return r == 0 && (c == 0 || c == side - 1);
                 case Pinning::one_corner:
                     return r == 0 && c == 0;
                 default:
                     return r == 0;
                 }
             },
         .position = [spacing](int c, int r) { return Vec3<float>(spacing * float(c), 0.0f, spacing * float(r)); }});
}

/// Steps `sim` `frames` frames, timing the steps alone: `strain(sim)` (Strains) is read between
/// frames with the benchmark's timer paused, its worst kept for the whole run and for the last 60
/// frames.
template <class Strain>
SwingResult time_frames(benchmark::State& bench, Simulation<float>& sim, const StepParams<float>& step, int frames,
                        Strain strain)
{
    SwingResult r;
    using Clock = std::chrono::steady_clock;
    Clock::duration stepping{};
    for (int frame = 0; frame < frames; ++frame)
    {
        const auto start = Clock::now();
        sim.step(step);
        stepping += Clock::now() - start;
        bench.PauseTiming();
        const Strains now = strain(sim);
        r.peak = std::max({r.peak, now.stretch, now.compression});
        if (frame >= frames - 60)
        {
            r.late_stretch = std::max(r.late_stretch, now.stretch);
            r.late_compression = std::max(r.late_compression, now.compression);
            r.late = std::max(r.late_stretch, r.late_compression);
        }
        bench.ResumeTiming();
    }
    if (sim.diverged())
        bench.SkipWithError("diverged");
    r.ms_per_frame = 1e3 * std::chrono::duration<double>(stepping).count() / frames;
    return r;
}

/// Swings a side x side sheet at `spacing` down from horizontal for `frames` frames, calling
/// bench.PauseTiming around each measurement of the strain (`strain`, once a frame) and timing the
/// steps on their own.
template <class Setup, class Strain = Strains (*)(const Simulation<float>&)>
SwingResult swing(benchmark::State& bench, int side, float spacing, float stiffness, const StepParams<float>& step,
                  int frames, int threads, Setup setup, Pinning pinning = Pinning::top_row,
                  Strain strain = spring_strains)
{
    Simulation<float> sim;
    const auto sheet = add_swinging_sheet(sim, side, spacing, stiffness, pinning);
    setup(sim, sheet);
    benchmarking::use_threads(sim, threads);
    return time_frames(bench, sim, step, frames, strain);
}

std::string percent(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f %%", 100.0 * v);
    return text;
}

/// Args: stiffness, substeps, tethers (0: none; 1: the stage's defaults, a tether to each island of
/// anchors, the two nearest held together; 2: the nearest anchor alone), strain-limit passes (0:
/// none), threads, pinning (see Pinning) and the strain limit's bound (both ways) x 10 000.
/// Registered in that order: tethers, then the strain limit.
void BM_hanging_256_tethers(benchmark::State& bench)
{
    const float stiffness = float(bench.range(0));
    const int substeps = int(bench.range(1));
    const int tethers = int(bench.range(2));
    const int passes = int(bench.range(3));
    const int threads = int(bench.range(4));
    const auto pinning = Pinning(bench.range(5));
    const float bound = float(bench.range(6)) / 10000.0f;
    const StepParams<float> step{
        .dt = 1.0f / 60.0f, .damping = 0.99833f, .gravity = {0, 9.81f, 0}, .iterations = 1, .substeps = substeps};
    constexpr int kFrames = 600;
    SwingResult r;
    std::shared_ptr<detail::StrainLimitData<float>> limit_data;
    double skipped = 0, batch_solves = 0; // the strain limit's batches, over the swing
    const auto strains_and_batches = [&](const Simulation<float>& sim) {
        if (limit_data)
        {
            skipped += limit_data->skipped;
            for (const auto& family : limit_data->chains.families)
                batch_solves += double(passes) * double(family.batches());
        }
        return spring_strains(sim);
    };
    for (auto _ : bench)
        r = swing(
            bench, 256, 0.5f, stiffness, step, kFrames, threads,
            [&](Simulation<float>& sim, const Cloth<float>& c) {
                if (tethers > 0)
                    add_tethers(sim, TethersOptions<float>{
                                         .cloth = c, .islands = tethers == 2 ? 1 : TethersOptions<float>{}.islands});
                if (passes > 0)
                    limit_data = detail::strain_limit_data(add_strain_limit(
                        sim, {.cloth = c, .max_stretch = bound, .max_compression = bound, .passes = passes}));
            },
            pinning, strains_and_batches);
    bench.counters["ms/frame"] = r.ms_per_frame;
    bench.counters["peak"] = r.peak;
    bench.counters["tenth_second"] = r.late;
    if (passes > 0)
        bench.counters["batches_read_not_solved"] = batch_solves > 0 ? skipped / batch_solves : 0.0;
    static constexpr const char* kTethers[] = {"", ", tethers", ", tethers to the nearest anchor"};
    bench.SetLabel(std::string(name_of(pinning)) + ": peak " + percent(r.peak) + ", tenth second " + percent(r.late) +
                   ", " + std::to_string(threads) + (threads > 1 ? " threads" : " thread") + kTethers[tethers] +
                   (passes > 0 ? ", chains " + percent(bound) + " x " + std::to_string(passes) : ""));
}

/// Swings the irregular mesh cloth of BM_mesh_cloth (cells x cells cells at spacing 0.5, valences
/// 4 to 8), laid out horizontally, pinned along its top edge (or at its two top corners) and
/// released: the peer material at stiffness 600 (one substep is stable up to about 700 on this
/// mesh), tethers to `islands` islands of anchors, 600 frames; `limit(sim, cloth)` adds the strain
/// limit. Measures the strain of its stretch springs (the triangles' edges).
template <class Limit>
SwingResult swing_mesh(benchmark::State& bench, int cells, bool corners, int islands, int threads, Limit limit)
{
    auto mesh = testing::sheet_mesh<float>(cells, 0.5f * float(cells), true, 2024);
    const float side = 0.5f * float(cells);
    const auto pinned = [&](std::size_t v) {
        const auto& p = mesh.vertices[v];
        return p.y() == 0.0f && (!corners || p.x() == 0.0f || p.x() == side);
    };
    auto flat = mesh;
    for (auto& v : flat.vertices)
        v = Vec3<float>(v.x(), 0.0f, v.y());
    const StepParams<float> step{.dt = 1.0f / 60.0f, .damping = 0.99833f, .gravity = {0, 9.81f, 0}, .iterations = 1};
    constexpr int kFrames = 600;
    Simulation<float> sim;
    const auto cloth = add_mesh_cloth(sim, {.mesh = flat, .stiffness = 600, .mass_per_area = 4, .pinned = pinned});
    add_tethers(sim, TethersOptions<float>{.cloth = cloth, .islands = islands});
    limit(sim, cloth);
    benchmarking::use_threads(sim, threads);
    std::set<std::pair<std::size_t, std::size_t>> unique;
    for (const auto& t : cloth.triangles())
        for (std::size_t k = 0; k < 3; ++k)
        {
            const std::size_t a = cloth.index(std::size_t(t[k])), b = cloth.index(std::size_t(t[(k + 1) % 3]));
            unique.insert({std::min(a, b), std::max(a, b)});
        }
    const std::vector<std::pair<std::size_t, std::size_t>> edges(unique.begin(), unique.end());
    std::vector<double> rest;
    for (const auto& [a, b] : edges)
        rest.push_back(double((sim.state().position(a) - sim.state().position(b)).norm()));
    return time_frames(bench, sim, step, kFrames, [&](const Simulation<float>& s) {
        Strains worst;
        for (std::size_t e = 0; e < edges.size(); ++e)
        {
            const auto [i, j] = edges[e];
            const double strain = (double((s.state().position(i) - s.state().position(j)).norm()) - rest[e]) / rest[e];
            worst.stretch = std::max(worst.stretch, strain);
            worst.compression = std::max(worst.compression, -strain);
        }
        return worst;
    });
}

/// swing_mesh with the strain limit at 1 % both ways. Reports the peak strain of the triangles'
/// edges in the swing and in the tenth second, and the time per frame. Args: cells, passes (0:
/// tethers alone), threads, two corners (0/1), cloth form (1: the cloth's edges only; 0: every
/// spring, bend springs too), and the islands of anchors each particle is tethered to (the stage's
/// default 4, or 1: the nearest anchor alone).
void BM_mesh_strain_limit(benchmark::State& bench)
{
    const int cells = int(bench.range(0));
    const int passes = int(bench.range(1));
    const int threads = int(bench.range(2));
    const bool corners = bench.range(3) != 0;
    const bool cloth_form = bench.range(4) != 0;
    const int islands = int(bench.range(5));
    SwingResult r;
    for (auto _ : bench)
        r = swing_mesh(bench, cells, corners, islands, threads, [&](Simulation<float>& sim, const Cloth<float>& cloth) {
            if (passes > 0)
                add_strain_limit(sim, StrainLimitOptions<float>{.cloth = cloth_form ? cloth : Cloth<float>{},
                                                                .max_stretch = 0.01f,
                                                                .max_compression = 0.01f,
                                                                .passes = passes});
        });
    bench.counters["ms/frame"] = r.ms_per_frame;
    bench.counters["peak"] = r.peak;
    bench.counters["tenth_second"] = r.late;
    bench.SetLabel(std::string(corners ? "two top corners" : "top edge") + ": edges peak " + percent(r.peak) +
                   ", tenth second " + percent(r.late) + (cloth_form ? ", cloth form" : ", every spring") +
                   (islands == 1 ? ", tethers to the nearest anchor" : ""));
}

/// What a cut costs the step after it: the strain limit holds chains of the springs, and a cut
/// removes some. The peer sheet (256 x 256, stiffness 3 000) or the 65 536-vertex mesh of
/// BM_mesh_strain_limit (stiffness 600), hanging in the x-y plane from its top edge, the strain
/// limit at 1 % x 4, tethers or not. After five frames, five times: a plain step, then a cut of a
/// few springs a little below the top edge, then the step after it. Counters: the mean plain step,
/// the mean cut and the mean step after a cut, in ms, and the last over the first. Args: mesh
/// (0/1), tethers (0/1).
void BM_strain_limit_after_cut(benchmark::State& bench)
{
    using Clock = std::chrono::steady_clock;
    const bool mesh = bench.range(0) != 0, tethers = bench.range(1) != 0;
    const StepParams<float> step{.dt = 1.0f / 60.0f, .damping = 0.99833f, .gravity = {0, 9.81f, 0}, .iterations = 1};
    double plain = 0, cutting = 0, after = 0, springs = 0;
    constexpr int kCuts = 5;
    for (auto _ : bench)
    {
        Simulation<float> sim;
        const auto cloth = [&] {
            if (!mesh)
                return add_cloth(
                    sim,
                    {.width = 256,
                     .height = 256,
                     .spacing = 0.5f,
                     .stiffness = 3000.0f,
                     .curvature_strength = 0.0f,
                     .pinned = [](int, int r) { return r == 0; },
                     .position = [](int c, int r) { return Vec3<float>(0.5f * float(c), 0.5f * float(r), 0.0f); }});
            const auto sheet = testing::sheet_mesh<float>(255, 0.5f * 255.0f, true, 2024);
            return add_mesh_cloth(sim,
                                  {.mesh = sheet, .stiffness = 600, .mass_per_area = 4, .pinned = [&](std::size_t v) {
                                       return sheet.vertices[v].y() == 0.0f;
                                   }});
        }();
        if (tethers)
            add_tethers(sim, TethersOptions<float>{.cloth = cloth});
        add_strain_limit(sim, {.cloth = cloth, .max_stretch = 0.01f, .max_compression = 0.01f, .passes = 4});
        for (int frame = 0; frame < 5; ++frame)
            sim.step(step);
        plain = cutting = after = springs = 0;
        for (int k = 0; k < kCuts; ++k)
        {
            const auto t0 = Clock::now();
            sim.step(step);
            const auto t1 = Clock::now();
            // A short cut across the sheet's plane just below row 40, a new place each time.
            const float x = 10.0f + 2.0f * float(k);
            springs += double(cut(sim, Vec3<float>(x, 20.2f, -5.0f), Vec3<float>(x + 0.6f, 20.2f, 5.0f)));
            const auto t2 = Clock::now();
            sim.step(step);
            const auto t3 = Clock::now();
            const auto ms = [](auto d) { return 1e3 * std::chrono::duration<double>(d).count(); };
            plain += ms(t1 - t0) / kCuts, cutting += ms(t2 - t1) / kCuts, after += ms(t3 - t2) / kCuts;
        }
    }
    bench.counters["plain_ms"] = plain;
    bench.counters["cut_ms"] = cutting;
    bench.counters["after_cut_ms"] = after;
    bench.counters["after_over_plain"] = after / plain;
    bench.counters["springs_cut"] = springs / kCuts;
    char label[128];
    std::snprintf(label, sizeof label, "%s%s: step %.2f ms, cut %.2f ms, step after the cut %.2f ms",
                  mesh ? "mesh" : "grid", tethers ? ", tethers" : "", plain, cutting, after);
    bench.SetLabel(label);
}

/// How fast the strain limit's passes converge on a mesh cloth, apart from the swing that loads it:
/// a 48 x 48-vertex sheet (spacing 0.5) of one of four kinds (arg mesh: 0 regular, every square
/// split along the same diagonal; 1 the vertices jittered by up to 0.3 of the spacing; 2 the
/// diagonals flipped at random; 3 both, as BM_mesh_strain_limit's mesh), hung from its top edge or
/// its two top corners, settles for 30 s at the peer material (stiffness 600, damping 0.99833,
/// 60 Hz) with the strain limit on every spring at 1 % and 16 passes, and no tethers. Then it takes
/// still steps, no gravity, no inertia and no spring forces, so that each is one pass of the
/// limiter alone. Reports the peak strain of every spring settled and after 1, 16, 128 and 1024
/// passes, and the chains' families and mean length.
void BM_strain_limit_convergence(benchmark::State& bench)
{
    const int kind = int(bench.range(0));
    const bool corners = bench.range(1) != 0;
    constexpr int kCells = 47;
    const float side = 0.5f * float(kCells);
    const bool jittered = kind == 1 || kind == 3, flipped = kind >= 2;
    auto mesh = testing::sheet_mesh<float>(kCells, side, jittered || flipped, 2024, jittered ? 0.3f : 0.0f);
    if (!flipped)
    {
        const auto regular = testing::sheet_mesh<float>(kCells, side, false);
        mesh.triangles = regular.triangles;
        mesh.uv_triangles = regular.uv_triangles;
    }
    for (auto& v : mesh.vertices)
        v = Vec3<float>(v.x(), 0.0f, v.y()); // horizontal; +y is down
    const auto pinned = [&](std::size_t v) {
        const auto& p = mesh.vertices[v];
        return p.z() == 0.0f && (!corners || p.x() == 0.0f || p.x() == side);
    };
    const StepParams<float> frame{.dt = 1.0f / 60.0f, .damping = 0.99833f, .gravity = {0, 9.81f, 0}, .iterations = 1};
    const StepParams<float> still{.dt = 1.0f / 60.0f, .damping = 0.0f, .gravity = {0, 0, 0}, .iterations = 0};
    std::vector<double> strain; // settled, then after 1, 16, 128 and 1024 passes
    double families = 0, mean_chain = 0;
    for (auto _ : bench)
    {
        Simulation<float> sim;
        add_mesh_cloth(sim, {.mesh = mesh, .stiffness = 600, .mass_per_area = 4, .pinned = pinned});
        auto limit = add_strain_limit(
            sim, StrainLimitOptions<float>{.max_stretch = 0.01f, .max_compression = 0.01f, .passes = 16});
        for (int f = 0; f < 1800; ++f)
            sim.step(frame);
        strain = {peak_strain(sim)};
        limit.set_passes(1);
        for (int pass = 1; pass <= 1024; ++pass)
        {
            sim.step(still);
            if (pass == 1 || pass == 16 || pass == 128 || pass == 1024)
                strain.push_back(peak_strain(sim));
        }
        const auto& chains = detail::strain_limit_data(limit)->chains;
        families = double(chains.families.size());
        double springs = 0, count = 0;
        for (const auto& family : chains.families)
        {
            springs += double(family.springs);
            count += double(family.chains);
        }
        mean_chain = springs / count;
    }
    const char* names[] = {"settled", "pass_1", "pass_16", "pass_128", "pass_1024"};
    for (std::size_t k = 0; k < strain.size(); ++k)
        bench.counters[names[k]] = strain[k];
    bench.counters["families"] = families;
    bench.counters["mean_chain"] = mean_chain;
    const char* kinds[] = {"regular", "jittered", "flipped", "jittered and flipped"};
    bench.SetLabel(std::string(kinds[kind]) + (corners ? ", two top corners" : ", top edge") + ": settled " +
                   percent(strain[0]) + ", after 16 passes " + percent(strain[2]) + ", after 1024 " +
                   percent(strain[4]));
}

/// The order of tethers and strain limiting, both registered, on the soft 48 x 48 sheet (side 48:
/// stiffness 2000, spacing 0.1, one substep, bounds 2 %, 300 frames) or the swinging peer sheet
/// (side 256: stiffness 110 000, 6 substeps, bounds 1 %, 600 frames). Args: side, limiter first
/// (0: tethers first, the order the other rows use), limiter passes.
void BM_tether_limiter_order(benchmark::State& bench)
{
    const bool soft = bench.range(0) == 48;
    const bool limiter_first = bench.range(1) != 0;
    const int passes = int(bench.range(2));
    const float bound = soft ? 0.02f : 0.01f;
    const StepParams<float> step = soft
                                       ? StepParams<float>{.dt = 1.0f / 60.0f, .gravity = {0, 9.8f, 0}, .iterations = 1}
                                       : StepParams<float>{.dt = 1.0f / 60.0f,
                                                           .damping = 0.99833f,
                                                           .gravity = {0, 9.81f, 0},
                                                           .iterations = 1,
                                                           .substeps = 6};
    const int frames = soft ? 300 : 600;
    SwingResult r;
    for (auto _ : bench)
        r = swing(bench, soft ? 48 : 256, soft ? 0.1f : 0.5f, soft ? 2000.0f : 110000.0f, step, frames, 1,
                  [&](Simulation<float>& sim, const Cloth<float>& c) {
                      const auto limit = [&] {
                          add_strain_limit(sim, StrainLimitOptions<float>{
                                                    .max_stretch = bound, .max_compression = bound, .passes = passes});
                      };
                      if (limiter_first)
                          limit();
                      add_tethers(sim, TethersOptions<float>{.cloth = c});
                      if (!limiter_first)
                          limit();
                  });
    bench.counters["ms/frame"] = r.ms_per_frame;
    bench.counters["peak"] = r.peak;
    bench.counters["late"] = r.late;
    bench.SetLabel(std::string(limiter_first ? "limiter, then tethers" : "tethers, then limiter") + ": peak " +
                   percent(r.peak) + ", last second " + percent(r.late));
}

} // namespace

// The stiffest stable setting per substep count (about 0.85 / (dt / substeps)^2), with and without
// tethers, and the stiffer settings the swing needs.
BENCHMARK(BM_hanging_256_tethers)
    ->ArgNames({"k", "substeps", "tethers", "passes", "threads", "pinning", "bound10k"})
    ->Args({110000, 6, 0, 0, 1, 0, 100})
    ->Args({110000, 6, 1, 0, 1, 0, 100})
    ->Args({3000, 1, 1, 0, 1, 0, 100})
    ->Args({48000, 4, 1, 0, 1, 0, 100})
    ->Args({400000, 16, 0, 0, 1, 0, 100})
    ->Args({400000, 16, 1, 0, 1, 0, 100})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The strain limit (chain solves) on the peer sheet at k 3000 and one substep, with tethers, each
// pinning: the residual per pass count at bounds of 1 %, then the settings chosen for the targets
// (0.5 % x 3) at one and two threads; last, sixteen passes
// from the corners and the tethers to the nearest anchor alone from two corners.
void strain_limit_rows(benchmark::internal::Benchmark* b)
{
    for (int pinning = 0; pinning < 4; ++pinning)
    {
        for (int passes : {1, 2, 4, 8})
            b->Args({3000, 1, 1, passes, 1, pinning, 100});
        for (int threads : {1, 2})
            b->Args({3000, 1, 1, 3, threads, pinning, 50});
    }
    b->Args({3000, 1, 1, 16, 1, 2, 100});
    b->Args({3000, 1, 1, 16, 1, 3, 100});
    // From two corners, against tethers to the nearest anchor alone, and the tethers' own cost
    // without the limiter.
    b->Args({3000, 1, 2, 4, 1, 2, 100});
    b->Args({3000, 1, 2, 3, 1, 2, 50});
    for (int tethers : {1, 2})
        b->Args({3000, 1, tethers, 0, 1, 2, 100});
    b->ArgNames({"k", "substeps", "tethers", "passes", "threads", "pinning", "bound10k"});
    b->Unit(benchmark::kMillisecond);
    b->Iterations(1);
}
BENCHMARK(BM_hanging_256_tethers)->Name("BM_hanging_256_pinnings")->Apply(strain_limit_rows);

BENCHMARK(BM_mesh_strain_limit)
    ->ArgNames({"cells", "passes", "threads", "corners", "cloth", "islands"})
    ->Args({255, 0, 1, 0, 1, 4})
    ->Args({255, 2, 1, 0, 1, 4})
    ->Args({255, 4, 1, 0, 1, 4})
    ->Args({255, 4, 1, 0, 0, 4})
    ->Args({255, 0, 2, 0, 1, 4})
    ->Args({255, 4, 2, 0, 1, 4})
    ->Args({255, 4, 1, 1, 1, 4})
    ->Args({255, 4, 2, 1, 1, 4})
    ->ArgsProduct({{255}, {8, 16}, {1}, {0, 1}, {1}, {4}})
    ->Args({255, 2, 1, 1, 1, 4})
    ->Args({255, 4, 1, 1, 1, 1})
    ->Args({63, 4, 1, 0, 1, 4})
    ->Args({63, 16, 1, 0, 1, 4})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

BENCHMARK(BM_strain_limit_convergence)
    ->ArgNames({"mesh", "corners"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

BENCHMARK(BM_strain_limit_after_cut)
    ->ArgNames({"mesh", "tethers"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

BENCHMARK(BM_tether_limiter_order)
    ->ArgNames({"side", "limiter_first", "passes"})
    ->ArgsProduct({{48}, {0, 1}, {4, 16}})
    ->ArgsProduct({{256}, {0, 1}, {1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
