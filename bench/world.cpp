// The world layer's own costs, whole steps: a 256 x 256 cloth with curvature on, and a thousand
// 64-node ropes with bending, in float; and BM_world_256, every stage of the library at once on
// one 256 x 256 cloth, timed stage by stage (bench/stage_timer.hpp).
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

#include <simdverlet/simdverlet.hpp>

#include "meshes.hpp"
#include "stage_timer.hpp"
#include "threads.hpp"
#include "timing.hpp"

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

/// A 256 x 256 cloth (spacing 0.5, stiffness 60 000, curvature on, two corners pinned with
/// tethers, a third held by the grab and carried in a circle) falling onto a 10 000-triangle torus
/// with a ball in its hole and a floor below, in the wind, tearing past strain 0.8, colliding with
/// itself at thickness 0.5. The peer scene's frame: 1/60 s in six substeps. Each timed frame
/// starts from the same snapshot, taken 1.5 s in, so every repetition times the same frame.
void BM_world_256(benchmark::State& bench)
{
    const int threads = int(bench.range(0));
    constexpr int side = 256;
    constexpr float spacing = 0.5f, half = spacing * float(side - 1) / 2;
    const StepParams<float> frame{.dt = 1.0f / 60.0f, .gravity = {0, 9.81f, 0}, .iterations = 1, .substeps = 6};
    Simulation<float> sim;
    auto cloth = add_cloth(
        sim,
        {.width = side,
         .height = side,
         .spacing = spacing,
         .stiffness = 60000.0f,
         .pinned = [](int c, int r) { return r == 0 && (c == 0 || c == side - 1); },
         .position = [&](int c,
                         int r) { return Vec3<float>(spacing * float(c) - half, -20.0f, spacing * float(r) - half); }});
    add_tethers(sim, TethersOptions<float>{.cloth = cloth});
    add_self_collision(sim, SelfCollisionOptions<float>{.thickness = spacing});
    const auto ring = testing::torus<float>({0, 0, 0}, 40.0f, 15.0f, 100, 50);
    add_colliders(sim, {},
                  TriangleMeshCollider<float>(
                      {.vertices = ring.vertices, .triangles = ring.triangles, .thickness = 0.25f, .two_sided = false},
                      {.friction = 0.5f}),
                  SphereCollider<float>({.center = {0, 0, 0}, .radius = 20.0f}, {.friction = 0.5f}),
                  PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -15.0f}, {.friction = 0.5f}));
    auto tearing = add_tearing(sim, {.max_strain = 0.8f});
    add_wind(sim, {.velocity = {2, 0, 3}, .cloths = {cloth}});
    benchmarking::use_threads(sim, threads);
    const auto corner = cloth.index(side - 1, side - 1);
    cloth.grab_nearest(sim.state().position(corner));
    const Vec3<float> hold = sim.state().position(corner);
    for (int f = 0; f < 90; ++f)
    {
        const float t = float(f) / 60.0f;
        cloth.move_grabbed(hold + Vec3<float>(10.0f * std::sin(t), -5.0f, 10.0f * (1.0f - std::cos(t))));
        sim.step(frame);
    }
    const auto start = snapshot(sim);
    const auto stages = benchmarking::time_stages(sim);
    const double seconds = benchmarking::seconds_per_iteration(
        bench, [&] { sim.step(frame); }, [&] { restore(sim, start); });
    if (sim.diverged())
    {
        bench.SkipWithError("diverged");
        return;
    }
    const double per_frame = 1e3 / double(bench.iterations());
    double staged = 0;
    for (const auto& [name, s] : stages->seconds)
    {
        bench.counters[name + " ms"] = s * per_frame;
        staged += s * per_frame;
    }
    bench.counters["ms/frame"] = 1e3 * seconds;
    bench.counters["core ms"] = 1e3 * seconds - staged;
    bench.counters["torn"] = double(tearing.torn());
    bench.SetLabel(std::to_string(threads) + (threads > 1 ? " threads" : " thread"));
}
} // namespace

BENCHMARK(BM_world_256)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cloth_256_tearing_wind)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_cloth_256_curvature)->Arg(1)->Arg(0)->ArgName("vectorized")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ropes_1000x64_bending)->Unit(benchmark::kMicrosecond);
