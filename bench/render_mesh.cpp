// The render mesh's cost next to the step it follows: the peer scene's 256 x 256 cloth (stiffness
// 110 000, 6 substeps, top row pinned, hanging at rest), and per 60 Hz frame one step and one
// render_mesh_into, each timed on its own clock, so the share is measured within one run.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include <simdverlet/simdverlet.hpp>

#include "peer_scene.hpp"
#include "threads.hpp"

namespace
{
using namespace simdverlet;

void BM_render_mesh(benchmark::State& bench)
{
    const int threads = int(bench.range(1));
    Simulation<float> sim;
    const auto cloth = benchmarking::add_peer_sheet(sim, 110000.0f);
    benchmarking::use_threads(sim, threads);
    const StepParams<float> frame = benchmarking::peer_frame(6);
    for (int f = 0; f < 180; ++f)
        sim.step(frame);
    RenderMesh<float> mesh;
    render_mesh_into(cloth, mesh); // the first fill allocates; the timed ones must not
    using Clock = std::chrono::steady_clock;
    Clock::duration stepping{}, rendering{};
    for (auto _ : bench)
    {
        const auto start = Clock::now();
        sim.step(frame);
        const auto stepped = Clock::now();
        render_mesh_into(cloth, mesh);
        rendering += Clock::now() - stepped;
        stepping += stepped - start;
        benchmark::DoNotOptimize(mesh.normals.data());
    }
    if (sim.diverged())
        bench.SkipWithError("diverged");
    const double frames = double(bench.iterations());
    const double render_ms = 1e3 * std::chrono::duration<double>(rendering).count() / frames;
    const double step_ms = 1e3 * std::chrono::duration<double>(stepping).count() / frames;
    bench.counters["render ms"] = render_ms;
    bench.counters["step ms"] = step_ms;
    bench.counters["render/step"] = render_ms / step_ms;
    bench.counters["triangles"] = double(mesh.triangles.size());
    bench.SetLabel(std::to_string(threads) + (threads > 1 ? " threads" : " thread"));
}
} // namespace

BENCHMARK(BM_render_mesh) // the first argument names the side, which the peer scene fixes at 256
    ->ArgNames({"", "threads"})
    ->Args({256, 1})
    ->Args({256, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
