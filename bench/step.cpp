// Whole-step throughput of a pinned hanging grid, the number users feel, next to a traffic
// skeleton of the same step: a sweep that streams exactly the bytes a fused step must move
// (positions, previous positions, inverse masses and the four slots' neighbours, rest lengths and
// stiffnesses in; new positions out) and does nothing else. Its time over the step's time is the
// "fraction of ceiling" each result prints, measured in the same run on the same arrays.
//
// Paths: grid (contiguous neighbour loads), gather (the same cloth with its particles shuffled by a
// random permutation, so every neighbour is a gather), scalar (the scalar twins), scalar on the
// shuffled cloth (path 3, one thread, the like-for-like partner of the gather path), and the
// shuffled cloth after reorder(sim) (path 4, one thread). Threads: 1,
// and 2 through the OpenMP adapter.
//
// Counters:
//   particle-steps/s   particles advanced per second
//   slot-evals/s       live slots x iterations per second: what literal passes would evaluate
//   slot-forces/s      live slots per second: forces actually computed (once per step)
//   ceiling%           skeleton time / step time, in percent: 100 means the step runs at the speed
//                      of its bytes
#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

#include <benchmark/benchmark.h>

#include <simdverlet/simdverlet.hpp>

#include "threads.hpp"
#include "timing.hpp"

#include "support.hpp"

namespace
{
using namespace simdverlet;

enum Path
{
    kGrid,
    kGather,
    kScalar,
    kScalarShuffled, ///< the scalar twins on the shuffled cloth: what the gather path is compared with
    kReordered,      ///< the shuffled cloth after reorder(sim), vector: what renumbering buys back
};

/// The hanging grid, or the same grid with its particles relabelled by a random permutation.
template <class T>
Simulation<T> hanging_grid(int width, int height, bool relabelled)
{
    Simulation<T> grid;
    testing::add_grid<T>(grid, width, height, T(0.5), T(60), [](int, int r) { return r == 0; });
    return relabelled ? testing::shuffled(grid, 12345) : std::move(grid);
}

template <class T>
std::size_t live_slots(const Simulation<T>& sim)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
        n += std::size_t(sim.constraints().live_count(i));
    return n;
}

/// Streams the bytes of one fused step over [begin, end): 7 (6 without masses) position arrays and
/// 12 slot arrays in, 3 arrays out.
template <class T>
void skeleton_range(const StateArrays<T>& s, const ConstraintArrays<T>& c, std::size_t begin, std::size_t end)
{
    using B = simd::Batch<T>;
    using IB = simd::IndexBatch<T>;
    constexpr std::size_t L = B::size;
    IB links(typename IB::value_type(0));
    for (std::size_t i = begin; i < end; i += L)
    {
        B rest = simd::load<T, xsimd::default_arch>(c.rest[0] + i),
          stiff = simd::load<T, xsimd::default_arch>(c.stiffness[0] + i);
        for (int k = 1; k < 4; ++k)
        {
            rest = rest + simd::load<T, xsimd::default_arch>(c.rest[k] + i);
            stiff = stiff + simd::load<T, xsimd::default_arch>(c.stiffness[k] + i);
        }
        for (int k = 0; k < 4; ++k)
            links = links + simd::load_indices<T, xsimd::default_arch>(c.neighbour[k] + i);
        const B w = s.inv_mass ? simd::load<T, xsimd::default_arch>(s.inv_mass + i) : B(T(1));
        const B bias = rest * stiff * w * B(T(1e-30));
        for (auto [x, px] : {std::pair{s.x, s.px}, std::pair{s.y, s.py}, std::pair{s.z, s.pz}})
            simd::store<T, xsimd::default_arch>(px + i, simd::load<T, xsimd::default_arch>(x + i) +
                                                            simd::load<T, xsimd::default_arch>(px + i) * B(T(0)) +
                                                            bias);
    }
    benchmark::DoNotOptimize(links);
}

template <class T>
double seconds_per_skeleton(Simulation<T>& twin)
{
    const auto s = twin.state().arrays_view();
    const auto c = twin.constraints().arrays_view();
    const auto& world = *detail::world_of(twin); // the step's own chunking, so the skeleton splits alike
    const auto one = [&] {
        world.for_each_chunk(s.size, [&](std::size_t b, std::size_t e) { skeleton_range(s, c, b, e); });
        benchmark::ClobberMemory();
    };
    one(); // warm
    int reps = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < 0.2 || reps < 3)
    {
        one();
        ++reps;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return elapsed / reps;
}

template <class T>
void BM_step(benchmark::State& bench)
{
    const int width = int(bench.range(0)), height = int(bench.range(1)), iterations = int(bench.range(2));
    const auto path = Path(bench.range(3));
    const int threads = int(bench.range(4));
    auto sim = hanging_grid<T>(width, height, path != kGrid && path != kScalar);
    if (path == kReordered)
        reorder(sim);
    sim.set_vectorized(path == kGrid || path == kGather || path == kReordered);
    sim.set_grid_path(path == kGrid);
    if (!benchmarking::use_threads(sim, threads))
    {
        bench.SkipWithError("built without OpenMP");
        return;
    }
    const StepParams<T> params{.gravity = {T(0), T(2), T(0)}, .iterations = iterations};
    for (int warm = 0; warm < 3; ++warm)
        sim.step(params);
    // The skeleton runs on a second grid built the same way (a simulation is not copyable), with
    // the same executor and grain, so timing it leaves `sim` as it was.
    auto twin = hanging_grid<T>(width, height, path != kGrid && path != kScalar);
    if (path == kReordered)
        reorder(twin);
    twin.set_executor(threads > 1 ? std::shared_ptr<Executor>(sim.executor(), [](Executor*) {}) : nullptr, 16384);
    const double skeleton = seconds_per_skeleton(twin);
    const double seconds = benchmarking::seconds_per_iteration(bench, [&] {
        sim.step(params);
        benchmark::ClobberMemory();
    });
    if (sim.diverged())
        bench.SkipWithError("the grid diverged; the figures would time NaN arithmetic");
    const double particles = double(sim.size());
    const double slots = double(live_slots(sim));
    using C = benchmark::Counter;
    bench.counters["particle-steps/s"] = C(particles, C::kIsIterationInvariantRate);
    bench.counters["slot-evals/s"] = C(slots * iterations, C::kIsIterationInvariantRate);
    bench.counters["slot-forces/s"] = C(slots, C::kIsIterationInvariantRate);
    bench.counters["ceiling%"] = 100.0 * skeleton / seconds;
    const char* names[] = {"grid ", "gather ", "scalar", "scalar shuffled", "reordered "};
    bench.SetLabel(std::string(names[path]) + (sim.vectorized() ? simd::arch_name() : "") + (threads > 1 ? " x2" : ""));
}

void grid_sizes(benchmark::internal::Benchmark* b)
{
    for (auto [w, h] : {std::pair{20, 10}, {100, 100}, {316, 316}, {1000, 1000}})
        for (int iterations : {1, 16})
        {
            for (int path : {kGrid, kGather, kScalar})
                for (int threads : {1, 2})
                    b->Args({w, h, iterations, path, threads});
            b->Args({w, h, iterations, kScalarShuffled, 1});
            b->Args({w, h, iterations, kReordered, 1});
        }
    b->ArgNames({"w", "h", "it", "path", "threads"});
    b->Unit(benchmark::kMicrosecond);
    b->UseRealTime(); // with two threads, CPU time would count both
}
} // namespace

BENCHMARK_TEMPLATE(BM_step, float)->Apply(grid_sizes);
BENCHMARK_TEMPLATE(BM_step, double)->Apply(grid_sizes);
