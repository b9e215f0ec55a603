// A triangle-mesh collider under the peer scene's sheet: 256 x 256 at spacing 0.5 (65 536
// particles), 1 iteration, 6 substeps, g = 9.81, dropped onto a 10 000-triangle torus (100 x 50
// quads, ring radius 40, tube 15) and stepped 2 s, so that about two fifths of the sheet lie on
// the mesh. Then timed per 60 Hz frame with the mesh on and switched off (the difference is the
// collider's cost), on 1 and 2 threads, and one collider pass alone, vector and scalar; contacts
// found per call (the default) or per substep; the vector path with the sheet's grid given to the
// collider (tiles: 4 x 4 particles a batch on AVX-512) and without (runs of 16 along a row). The Drape settles per call; the pass alone (BM_mesh_collider_pass) is the per-substep
// path, driven directly. BM_mesh_collider_parts times the set's pass inside the step, the first
// substep's (which plans the call's contacts) apart from the later ones (projection alone).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

#include "threads.hpp"
#include "timing.hpp"

#include "meshes.hpp"

namespace
{
using namespace simdverlet;

constexpr int kSide = 256;
constexpr float kSpacing = 0.5f;
const StepParams<float> kFrame{.dt = 1.0f / 60.0f, .gravity = {0, 9.81f, 0}, .iterations = 1, .substeps = 6};

struct Drape
{
    Simulation<float> sim;
    ColliderSet<float> world;
    TriangleMeshCollider<float>* mesh = nullptr;
    ParticleGrid grid;

    explicit Drape(int threads)
    {
        const float half = kSpacing * float(kSide - 1) / 2;
        const auto cloth = add_cloth(sim, {.width = kSide,
                                           .height = kSide,
                                           .spacing = kSpacing,
                                           .stiffness = 60000.0f,
                                           .curvature_strength = 0.0f,
                                           .position = [&](int c, int r) {
                                               return Vec3<float>(kSpacing * float(c) - half, -16.0f,
                                                                  kSpacing * float(r) - half);
                                           }});
        const auto ring = testing::torus<float>({0, 0, 0}, 40.0f, 15.0f, 100, 50);
        world = add_colliders(sim, {});
        mesh = &world.add(TriangleMeshCollider<float>(
            {.vertices = ring.vertices, .triangles = ring.triangles, .thickness = 0.25f, .two_sided = false},
            {.friction = 0.5f}));
        grid = cloth.grid();
        benchmarking::use_threads(sim, threads);
        for (int f = 0; f < 120; ++f)
            sim.step(kFrame);
    }
};

void BM_mesh_collider(benchmark::State& bench)
{
    const bool enabled = bench.range(0) != 0;
    const int threads = int(bench.range(1));
    Drape drape(threads);
    drape.sim.set_vectorized(bench.range(2) != 0);
    drape.mesh->enabled = enabled;
    const bool tiles = bench.range(3) != 0;
    if (tiles)
        drape.mesh->set_particle_grids({drape.grid});
    const bool per_call = bench.range(4) != 0;
    drape.mesh->set_detection(per_call ? ContactDetection::per_call : ContactDetection::per_substep);
    // Every iteration steps the same frame from the same state, so runs of any length time the
    // same work.
    const State3<float> original = drape.sim.state();
    const double seconds = benchmarking::seconds_per_iteration(
        bench, [&] { drape.sim.step(kFrame); }, [&] { drape.sim.state() = original; });
    if (drape.sim.diverged())
        bench.SkipWithError("diverged");
    bench.counters["ms/frame"] = 1e3 * seconds;
    bench.counters["contacts"] = double(drape.mesh->contacts());
    bench.SetLabel(std::string(enabled ? "with" : "without") + " the mesh, " + std::to_string(threads) +
                   (threads > 1 ? " threads" : " thread") + (drape.sim.vectorized() ? "" : ", scalar") +
                   (tiles ? ", tiles" : "") + (enabled ? (per_call ? ", per call" : ", per substep") : ""));
}

/// The collider set's pass split by where it falls in a call of step(): the first substep's pass
/// plans the call's contacts (per_call detection) and projects; every later pass projects alone.
/// The set's projection is re-registered under its own name inside a clock, keeping its place in
/// the step. Reports, per 60 Hz frame: the whole frame, the first pass, the later passes, their
/// mean (one projection), the detection (the first pass less one projection) and the cloth's own
/// substep without the mesh (the same frame with the collider switched off, over six).
void BM_mesh_collider_parts(benchmark::State& bench)
{
    using Clock = std::chrono::steady_clock;
    const bool per_call = bench.range(0) != 0;
    const int threads = int(bench.range(1));
    const bool tiles = bench.range(2) != 0;
    Drape drape(threads);
    drape.mesh->set_detection(per_call ? ContactDetection::per_call : ContactDetection::per_substep);
    if (tiles)
        drape.mesh->set_particle_grids({drape.grid});
    auto& world = *detail::world_of(drape.sim);
    double first = 0, later = 0; // seconds, summed over the timed frames
    for (const auto& entry : std::vector(world.position_projections().entries()))
        if (entry.first == "colliders")
            world.add_position_projection(entry.first, [&, pass = entry.second](State3<float>& state, float dt) {
                const auto start = Clock::now();
                pass(state, dt);
                const double s = std::chrono::duration<double>(Clock::now() - start).count();
                (world.call_progress().substep == 0 ? first : later) += s;
            });
    const State3<float> original = drape.sim.state();
    const auto reset = [&] { drape.sim.state() = original; };
    // The cloth alone, on the same state: the collider switched off for these frames.
    drape.mesh->enabled = false;
    double cloth = 0;
    for (int f = 0; f < 20; ++f)
    {
        const auto start = Clock::now();
        drape.sim.step(kFrame);
        cloth += std::chrono::duration<double>(Clock::now() - start).count();
        reset();
    }
    cloth /= 20;
    drape.mesh->enabled = true;
    first = later = 0;
    const double frame = benchmarking::seconds_per_iteration(
        bench, [&] { drape.sim.step(kFrame); }, reset);
    if (drape.sim.diverged())
        bench.SkipWithError("diverged");
    const double frames = double(bench.iterations());
    const double projection = later / frames / double(kFrame.substeps - 1);
    bench.counters["ms/frame"] = 1e3 * frame;
    bench.counters["first_pass_ms"] = 1e3 * first / frames;
    bench.counters["later_passes_ms"] = 1e3 * later / frames;
    bench.counters["projection_ms"] = 1e3 * projection;
    bench.counters["detection_ms"] = 1e3 * (first / frames - projection);
    bench.counters["cloth_substep_ms"] = 1e3 * cloth / double(kFrame.substeps);
    bench.counters["projection/cloth_substep"] = projection / (cloth / double(kFrame.substeps));
    bench.SetLabel(std::string(per_call ? "per call, " : "per substep, ") + std::to_string(threads) +
                   (threads > 1 ? " threads" : " thread") + (tiles ? ", tiles" : ""));
}

/// Times one pass of `mesh` over `state`, restored after each, so every pass sees the same
/// contacts (and, after the first, warm candidate lists). Reports the contacts.
void time_passes(benchmark::State& bench, TriangleMeshCollider<float>& mesh, State3<float>& state)
{
    mesh.set_detection(ContactDetection::per_substep); // a pass driven directly is a call of its own
    const State3<float> original = state;
    int contacts = 0;
    for (auto _ : bench)
    {
        contacts = mesh.project(state);
        bench.PauseTiming();
        state = original;
        bench.ResumeTiming();
    }
    bench.counters["contacts"] = double(contacts);
}

/// One pass of the collider over the draped sheet, vector (in tiles or runs) or scalar.
void BM_mesh_collider_pass(benchmark::State& bench)
{
    Drape drape(1);
    drape.mesh->vectorized = bench.range(0) != 0;
    const bool tiles = bench.range(1) != 0;
    if (tiles)
        drape.mesh->set_particle_grids({drape.grid});
    auto& state = drape.sim.state();
    time_passes(bench, *drape.mesh, state);
    bench.counters["particles_per_s"] = benchmark::Counter(double(state.size()),
                                                           benchmark::Counter::kIsIterationInvariantRate);
    bench.SetLabel(std::string(drape.mesh->vectorized ? simd::arch_name() : "scalar") + (tiles ? ", tiles" : ""));
}
} // namespace

BENCHMARK(BM_mesh_collider_pass)
    ->ArgNames({"vectorized", "tiles"})
    ->Args({1, 1})
    ->Args({1, 0})
    ->Args({0, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mesh_collider_parts)
    ->ArgNames({"per_call", "threads", "tiles"})
    ->Args({1, 1, 1})
    ->Args({1, 1, 0})
    ->Args({0, 1, 1})
    ->Args({0, 1, 0})
    ->Args({1, 2, 1})
    ->Args({1, 2, 0})
    ->Args({0, 2, 1})
    ->Args({0, 2, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mesh_collider)
    ->ArgNames({"mesh", "threads", "vectorized", "tiles", "per_call"})
    ->Args({1, 1, 1, 1, 1})
    ->Args({1, 1, 1, 0, 1})
    ->Args({1, 1, 1, 1, 0})
    ->Args({1, 1, 1, 0, 0})
    ->Args({0, 1, 1, 0, 0})
    ->Args({1, 1, 0, 0, 1})
    ->Args({1, 1, 0, 0, 0})
    ->Args({1, 2, 1, 1, 1})
    ->Args({1, 2, 1, 0, 1})
    ->Args({1, 2, 1, 1, 0})
    ->Args({1, 2, 1, 0, 0})
    ->Args({0, 2, 1, 0, 0})
    ->Unit(benchmark::kMillisecond);
