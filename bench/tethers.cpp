// Stretch control on the swinging peer scene: the 256 x 256 sheet (spacing 0.5, unit masses, 60 Hz,
// g = 9.81, damping 0.99833 a frame, a widely used engine's default air) laid out horizontally,
// pinned along one edge and released; 600 frames, the whole swing. Each configuration of
// stiffness, substeps, tethers and strain limiting reports its time per frame and, in the label,
// the peak strain of any spring during the swing and in the tenth second (the targets: <= 4 % and
// <= 1 %). The strain is measured between frames with the timer paused.
//
// BM_strain_limit_schemes compares ways of combining a particle's slot corrections on a soft
// 48 x 48 sheet swinging down (stiffness 2000, one substep, bounds 2 %): the residual strain per
// pass count, which chose the limiter's defaults.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <simdverlet/simdverlet.hpp>

#include "threads.hpp"

namespace
{
using namespace simdverlet;

struct SwingResult
{
    double peak = 0, late = 0;
    double ms_per_frame = 0; ///< the steps alone, wall clock
};

/// Swings a side x side sheet at `spacing` down from horizontal for `frames` frames, calling
/// bench.PauseTiming around each measurement of the strain and timing the steps on their own.
template <class Setup>
SwingResult swing(benchmark::State& bench, int side, float spacing, float stiffness, const StepParams<float>& step,
                  int frames, int threads, Setup setup)
{
    Simulation<float> sim;
    const auto sheet = add_cloth(
        sim,
        {.width = side,
         .height = side,
         .spacing = spacing,
         .stiffness = stiffness,
         .curvature_strength = 0.0f,
         .pinned = [](int, int r) { return r == 0; },
         .position = [spacing](int c, int r) { return Vec3<float>(spacing * float(c), 0.0f, spacing * float(r)); }});
    setup(sim, sheet);
    benchmarking::use_threads(sim, threads);
    SwingResult r;
    using Clock = std::chrono::steady_clock;
    Clock::duration stepping{};
    for (int frame = 0; frame < frames; ++frame)
    {
        const auto start = Clock::now();
        sim.step(step);
        stepping += Clock::now() - start;
        bench.PauseTiming();
        const double strain = peak_strain(sim);
        r.peak = std::max(r.peak, strain);
        if (frame >= frames - 60)
            r.late = std::max(r.late, strain);
        bench.ResumeTiming();
    }
    if (sim.diverged())
        bench.SkipWithError("diverged");
    r.ms_per_frame = 1e3 * std::chrono::duration<double>(stepping).count() / frames;
    return r;
}

std::string percent(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f %%", 100.0 * v);
    return text;
}

/// Args: stiffness, substeps, tethers (0/1), strain-limit passes (0: none), threads, the limiter's
/// relaxation x 10 (10: the default).
void BM_hanging_256_tethers(benchmark::State& bench)
{
    const float stiffness = float(bench.range(0));
    const int substeps = int(bench.range(1));
    const bool tethers = bench.range(2) != 0;
    const int passes = int(bench.range(3));
    const int threads = int(bench.range(4));
    const float relaxation = float(bench.range(5)) / 10.0f;
    const StepParams<float> step{
        .dt = 1.0f / 60.0f, .damping = 0.99833f, .gravity = {0, 9.81f, 0}, .iterations = 1, .substeps = substeps};
    constexpr int kFrames = 600;
    SwingResult r;
    for (auto _ : bench)
        r = swing(bench, 256, 0.5f, stiffness, step, kFrames, threads,
                  [&](Simulation<float>& sim, const Cloth<float>& c) {
                      if (tethers)
                          add_tethers(sim, c, TetherOptions<float>{});
                      if (passes > 0)
                      {
                          const auto limit = add_strain_limit(sim, StrainLimitOptions<float>{.max_stretch = 0.01f,
                                                                                             .max_compression = 0.01f,
                                                                                             .passes = passes});
                          detail::strain_limit_data(limit)->scheme.relaxation = relaxation;
                      }
                  });
    bench.counters["ms/frame"] = r.ms_per_frame;
    bench.counters["peak"] = r.peak;
    bench.counters["tenth_second"] = r.late;
    bench.SetLabel("peak " + percent(r.peak) + ", tenth second " + percent(r.late) + ", " + std::to_string(threads) +
                   (threads > 1 ? " threads" : " thread") +
                   (passes > 0 && relaxation != 1.0f ? ", limiter relaxed x " + std::to_string(relaxation) : ""));
}

/// Args: coloured (0/1), averaged (0/1), relaxation x 10, passes.
void BM_strain_limit_schemes(benchmark::State& bench)
{
    detail::LimitScheme<float> scheme{
        .coloured = bench.range(0) != 0, .averaged = bench.range(1) != 0, .relaxation = float(bench.range(2)) / 10.0f};
    const int passes = int(bench.range(3));
    const StepParams<float> step{.dt = 1.0f / 60.0f, .gravity = {0, 9.8f, 0}, .iterations = 1};
    SwingResult r;
    for (auto _ : bench)
        r = swing(bench, 48, 0.1f, 2000.0f, step, 300, 1, [&](Simulation<float>& sim, const Cloth<float>&) {
            const auto limit = add_strain_limit(
                sim, StrainLimitOptions<float>{.max_stretch = 0.02f, .max_compression = 0.02f, .passes = passes});
            detail::strain_limit_data(limit)->scheme = scheme;
        });
    bench.counters["peak"] = r.peak;
    bench.counters["late"] = r.late;
    char label[96];
    std::snprintf(label, sizeof label, "%s, %s x %.1f: peak %s, last second %s",
                  scheme.coloured ? "2 colours" : "Jacobi", scheme.averaged ? "mean" : "sum", double(scheme.relaxation),
                  percent(r.peak).c_str(), percent(r.late).c_str());
    bench.SetLabel(label);
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
                      add_tethers(sim, c, TetherOptions<float>{});
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
// tethers and strain limiting, and the stiffer settings the swing needs.
BENCHMARK(BM_hanging_256_tethers)
    ->ArgNames({"k", "substeps", "tethers", "passes", "threads", "relax10"})
    ->Args({110000, 6, 0, 0, 1, 10})
    ->Args({110000, 6, 1, 0, 1, 10})
    ->Args({110000, 6, 1, 1, 1, 10})
    ->Args({110000, 6, 1, 1, 1, 15})
    ->Args({3000, 1, 1, 0, 1, 10})
    ->Args({3000, 1, 1, 2, 1, 10})
    ->Args({48000, 4, 1, 1, 1, 10})
    ->Args({400000, 16, 0, 0, 1, 10})
    ->Args({400000, 16, 1, 0, 1, 10})
    ->Args({400000, 16, 1, 0, 2, 10})
    ->Args({110000, 6, 1, 0, 2, 10})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

BENCHMARK(BM_strain_limit_schemes)
    ->ArgNames({"coloured", "averaged", "relax10", "passes"})
    ->ArgsProduct({{0, 1}, {0}, {10}, {1, 4, 16}})
    ->ArgsProduct({{0, 1}, {1}, {10, 15}, {1, 4, 16}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

BENCHMARK(BM_tether_limiter_order)
    ->ArgNames({"side", "limiter_first", "passes"})
    ->ArgsProduct({{48}, {0, 1}, {4, 16}})
    ->ArgsProduct({{256}, {0, 1}, {1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
