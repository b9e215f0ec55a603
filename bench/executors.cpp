// Threads, their spread and their wait policy: the same frames on one thread, on two OpenMP
// threads and on two oneTBB threads, every frame timed on its own so the results give the spread
// (10th percentile, median, 90th percentile, worst), not only a typical time. OpenMP's wait policy
// is an environment setting read when its runtime starts, so each policy is a separate run of this
// binary (docs/performance.md gives the three commands):
//   OMP_WAIT_POLICY unset    libgomp spins a while (GOMP_SPINCOUNT) and then sleeps
//   OMP_WAIT_POLICY=passive  threads sleep between parallel regions at once
//   OMP_WAIT_POLICY=active   threads spin between parallel regions
// Scenes: the 316 x 316 grid step (16 iterations, one step per frame) and the peer scene (256 x
// 256, six substeps per 60 Hz frame, so six fused sweeps and no other stage).
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include <simdverlet/simdverlet.hpp>
#if SIMDVERLET_HAVE_OPENMP
#    include <simdverlet/core/parallel/openmp.hpp>
#endif
#if SIMDVERLET_HAVE_TBB
#    include <simdverlet/core/parallel/tbb.hpp>
#endif

#include "support.hpp"

namespace
{
using namespace simdverlet;

enum Kind
{
    kSerial,
    kOpenMP,
    kTbb,
};

std::shared_ptr<Executor> make_executor(Kind kind, int threads)
{
#if SIMDVERLET_HAVE_OPENMP
    if (kind == kOpenMP)
        return std::make_shared<OpenMPExecutor>(threads);
#endif
#if SIMDVERLET_HAVE_TBB
    if (kind == kTbb)
        return std::make_shared<TbbExecutor>(threads);
#endif
    (void)threads;
    return nullptr;
}

void BM_executor(benchmark::State& bench)
{
    const bool peer = bench.range(0) != 0;
    const auto kind = Kind(bench.range(1));
    const int threads = kind == kSerial ? 1 : 2;
    Simulation<float> sim;
    StepParams<float> frame{.gravity = {0, 2, 0}, .iterations = 16};
    if (peer)
    {
        add_cloth(sim, {.width = 256,
                        .height = 256,
                        .spacing = 0.5f,
                        .stiffness = 110000.0f,
                        .curvature_strength = 0.0f,
                        .pinned = [](int, int r) { return r == 0; }});
        frame = {.dt = 1.0f / 60.0f, .gravity = {0, 9.81f, 0}, .iterations = 1, .substeps = 6};
    }
    else
        testing::add_grid<float>(sim, 316, 316, 0.5f, 60.0f, [](int, int r) { return r == 0; });
    const auto executor = make_executor(kind, threads);
    if (kind != kSerial && !executor)
    {
        bench.SkipWithError("built without this executor");
        return;
    }
    sim.set_executor(executor, 16384);
    for (int warm = 0; warm < 30; ++warm)
        sim.step(frame);
    using Clock = std::chrono::steady_clock;
    std::vector<double> ms;
    for (auto _ : bench)
    {
        const auto start = Clock::now();
        sim.step(frame);
        ms.push_back(1e3 * std::chrono::duration<double>(Clock::now() - start).count());
    }
    if (sim.diverged())
        bench.SkipWithError("diverged");
    std::sort(ms.begin(), ms.end());
    const auto at = [&](double q) { return ms[std::size_t(q * double(ms.size() - 1))]; };
    bench.counters["p10_ms"] = at(0.1);
    bench.counters["median_ms"] = at(0.5);
    bench.counters["p90_ms"] = at(0.9);
    bench.counters["worst_ms"] = ms.back();
    const char* names[] = {"1 thread", "OpenMP x2", "oneTBB x2"};
    bench.SetLabel(std::string(peer ? "peer scene, " : "316^2 step, ") + names[kind] + ", " +
                   std::to_string(sim.executor() ? detail::world_of(sim)->chunk_count(sim.size()) : 1) + " chunks");
}
} // namespace

BENCHMARK(BM_executor)
    ->ArgNames({"peer", "executor"})
    ->ArgsProduct({{0, 1}, {kSerial, kOpenMP, kTbb}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);
