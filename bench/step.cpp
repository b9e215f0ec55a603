// Whole-step throughput of a hanging grid: the number users feel. Four sizes from in-cache to
// memory-bound, 1 and 16 iterations, float and double, the xsimd kernels against their scalar
// twins, all in one run so the ratios are measured side by side.
//
// Counters:
//   particle-steps/s   particles advanced per second
//   slot-evals/s       live slots x iterations per second: what literal passes would evaluate
//   slot-forces/s      live slots per second: forces actually computed (once per step, then
//                      added `iterations` times), the honest cost figure for the fused solve
#include <benchmark/benchmark.h>

#include "support.hpp"

namespace
{
using namespace simdverlet;

template <class T>
Simulation<T> hanging_grid(int width, int height)
{
    Simulation<T> sim;
    testing::add_grid<T>(sim, width, height, T(0.5), T(60), [](int, int r) { return r == 0; });
    return sim;
}

template <class T>
std::size_t live_slots(const Simulation<T>& sim)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
        n += std::size_t(sim.constraints().live_count(i));
    return n;
}

template <class T, bool Vectorized>
void BM_step(benchmark::State& bench)
{
    const int width = int(bench.range(0));
    const int height = int(bench.range(1));
    const int iterations = int(bench.range(2));
    auto sim = hanging_grid<T>(width, height);
    sim.set_vectorized(Vectorized);
    const StepParams<T> params{.gravity = {T(0), T(2), T(0)}, .iterations = iterations};
    for (int warm = 0; warm < 3; ++warm)
        sim.step(params);
    for (auto _ : bench)
    {
        sim.step(params);
        benchmark::ClobberMemory();
    }
    if (sim.diverged())
        bench.SkipWithError("the grid diverged; the figures would time NaN arithmetic");
    const double particles = double(sim.size());
    const double slots = double(live_slots(sim));
    using C = benchmark::Counter;
    bench.counters["particle-steps/s"] = C(particles, C::kIsIterationInvariantRate);
    bench.counters["slot-evals/s"] = C(slots * iterations, C::kIsIterationInvariantRate);
    bench.counters["slot-forces/s"] = C(slots, C::kIsIterationInvariantRate);
    bench.SetLabel(Vectorized ? simd::arch_name() : "scalar");
}

void grid_sizes(benchmark::internal::Benchmark* b)
{
    for (auto [w, h] : {std::pair{20, 10}, {100, 100}, {316, 316}, {1000, 1000}})
        for (int iterations : {1, 16})
            b->Args({w, h, iterations});
    b->ArgNames({"w", "h", "it"});
    b->Unit(benchmark::kMicrosecond);
}
} // namespace

BENCHMARK_TEMPLATE(BM_step, float, true)->Apply(grid_sizes);
BENCHMARK_TEMPLATE(BM_step, float, false)->Apply(grid_sizes);
BENCHMARK_TEMPLATE(BM_step, double, true)->Apply(grid_sizes);
BENCHMARK_TEMPLATE(BM_step, double, false)->Apply(grid_sizes);

BENCHMARK_MAIN();
