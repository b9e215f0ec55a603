// The world layer's own costs, whole steps: a 256 x 256 cloth with curvature on, and a thousand
// 64-node ropes with bending, in float.
#include <benchmark/benchmark.h>

#include <simdverlet/simdverlet.hpp>

namespace
{
using namespace simdverlet;

/// Times sim.step(params) and reports particle-steps/s, labelled with the path that ran.
void time_steps(benchmark::State& bench, Simulation<float>& sim, const StepParams<float>& params)
{
    for (auto _ : bench)
        sim.step(params);
    if (sim.diverged())
        bench.SkipWithError("diverged");
    using C = benchmark::Counter;
    bench.counters["particle-steps/s"] = C(double(sim.size()), C::kIsIterationInvariantRate);
    bench.SetLabel(sim.vectorized() ? simd::arch_name() : "scalar");
}

void BM_cloth_256_curvature(benchmark::State& bench)
{
    const bool vectorized = bench.range(0) != 0;
    Simulation<float> sim;
    add_cloth(sim, {.width = 256, .height = 256, .pinned = [](int c, int r) { return r == 0 && c % 8 == 0; }});
    sim.set_vectorized(vectorized);
    time_steps(bench, sim, {.gravity = {0, 2, 0}, .iterations = 16});
}

void BM_ropes_1000x64_bending(benchmark::State& bench)
{
    Simulation<float> sim;
    for (int r = 0; r < 1000; ++r)
        add_strand(sim, {.count = 64,
                         .spacing = 0.1f,
                         .bend_stiffness = 0.5f,
                         .position = [r](int n) { return Vec3<float>(0.1f * float(n), 0, 0.05f * float(r)); },
                         .pinned = [](int n) { return n == 0; }});
    time_steps(bench, sim, {.gravity = {0, 9.81f, 0}, .iterations = 16});
}
void BM_cloth_256_tearing_wind(benchmark::State& bench)
{
    Simulation<float> sim;
    auto cloth = add_cloth(sim,
                           {.width = 256, .height = 256, .pinned = [](int c, int r) { return r == 0 && c % 8 == 0; }});
    auto tearing = add_tearing(sim, {.max_strain = 0.8f});
    add_wind(sim, {.velocity = {1, 0, 3}, .cloths = {cloth}});
    time_steps(bench, sim, {.gravity = {0, 2, 0}, .iterations = 16});
    bench.counters["torn"] = double(tearing.torn());
}
} // namespace

BENCHMARK(BM_cloth_256_tearing_wind)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_cloth_256_curvature)->Arg(1)->Arg(0)->ArgName("vectorized")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ropes_1000x64_bending)->Unit(benchmark::kMicrosecond);
