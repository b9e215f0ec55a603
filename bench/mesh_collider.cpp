// A triangle-mesh collider under the peer scene's sheet: 256 x 256 at spacing 0.5 (65 536
// particles), 1 iteration, 6 substeps, g = 9.81, dropped onto a 10 000-triangle torus (100 x 50
// quads, ring radius 40, tube 15) and stepped 2 s, so that about two fifths of the sheet lie on
// the mesh. Then timed per 60 Hz frame with the mesh on and switched off (the difference is the
// collider's cost), on 1 and 2 threads, and one collider pass alone, vector and scalar.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include <simdverlet/simdverlet.hpp>

#include "threads.hpp"

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
    std::shared_ptr<ColliderSet<float>> world;
    TriangleMeshCollider<float>* mesh = nullptr;

    explicit Drape(int threads)
    {
        const float half = kSpacing * float(kSide - 1) / 2;
        add_cloth(sim, {.width = kSide,
                        .height = kSide,
                        .spacing = kSpacing,
                        .stiffness = 60000.0f,
                        .curvature_strength = 0.0f,
                        .position = [&](int c, int r) {
                            return Vec3<float>(kSpacing * float(c) - half, -16.0f, kSpacing * float(r) - half);
                        }});
        const auto ring = testing::torus<float>({0, 0, 0}, 40.0f, 15.0f, 100, 50);
        world = add_colliders(sim, {});
        mesh = &world->add(TriangleMeshCollider<float>(
            {.vertices = ring.vertices, .triangles = ring.triangles, .thickness = 0.25f, .two_sided = false},
            {.friction = 0.5f}));
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
    // Every iteration steps the same frame from the same state, so runs of any length time the
    // same work.
    const State3<float> original = drape.sim.state();
    for (auto _ : bench)
    {
        drape.sim.step(kFrame);
        bench.PauseTiming();
        drape.sim.state() = original;
        bench.ResumeTiming();
    }
    if (drape.sim.diverged())
        bench.SkipWithError("diverged");
    using C = benchmark::Counter;
    bench.counters["ms_per_frame"] = C(1e-3, C::kIsIterationInvariantRate | C::kInvert);
    bench.counters["contacts"] = double(drape.mesh->contacts());
    bench.SetLabel(std::string(enabled ? "with" : "without") + " the mesh, " + std::to_string(threads) +
                   (threads > 1 ? " threads" : " thread") + (drape.sim.vectorized() ? "" : ", scalar"));
}

/// One pass of the collider over the draped sheet, positions restored after each, so every pass
/// sees the same contacts (and, after the first, warm candidate lists).
void BM_mesh_collider_pass(benchmark::State& bench)
{
    Drape drape(1);
    drape.mesh->vectorized = bench.range(0) != 0;
    auto& state = drape.sim.state();
    const State3<float> original = state;
    int contacts = 0;
    for (auto _ : bench)
    {
        contacts = drape.mesh->project(state);
        bench.PauseTiming();
        state = original;
        bench.ResumeTiming();
    }
    bench.counters["contacts"] = double(contacts);
    bench.counters["particles_per_s"] = benchmark::Counter(double(state.size()),
                                                           benchmark::Counter::kIsIterationInvariantRate);
    bench.SetLabel(drape.mesh->vectorized ? simd::arch_name() : "scalar");
}
/// The draped particles copied, positions and velocities, into a particle-only simulation: in the
/// cloth's row order, or in 4 x 4 tiles (each 16 consecutive indices one tile of the sheet), the
/// order a space-filling renumbering of the sheet would give.
Simulation<float> reordered(const Simulation<float>& sim, bool tiles)
{
    Simulation<float> out;
    const auto copy = [&](std::size_t i) {
        const auto k = out.add_particle(sim.state().position(i), sim.state().inverse_mass(i));
        out.state().set_velocity(k, sim.state().velocity(i));
    };
    for (int tr = 0; tr < kSide; tr += tiles ? 4 : 1)
        for (int tc = 0; tc < kSide; tc += tiles ? 4 : kSide)
            for (int r = 0; r < (tiles ? 4 : 1); ++r)
                for (int c = 0; c < (tiles ? 4 : kSide); ++c)
                    copy(std::size_t((tr + r) * kSide + tc + c));
    return out;
}

/// One pass over the same particles in row order and in tiles: what lane groups shaped as tiles
/// would save the collider.
void BM_mesh_collider_order(benchmark::State& bench)
{
    const bool tiles = bench.range(0) != 0;
    Drape drape(1);
    auto particles = reordered(drape.sim, tiles);
    auto& state = particles.state();
    const State3<float> original = state;
    int contacts = 0;
    for (auto _ : bench)
    {
        contacts = drape.mesh->project(state);
        bench.PauseTiming();
        state = original;
        bench.ResumeTiming();
    }
    bench.counters["contacts"] = double(contacts);
    bench.SetLabel(tiles ? "4 x 4 tiles" : "rows");
}
} // namespace

BENCHMARK(BM_mesh_collider_order)->ArgName("tiles")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mesh_collider_pass)->ArgName("vectorized")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mesh_collider)
    ->ArgNames({"mesh", "threads", "vectorized"})
    ->Args({1, 1, 1})
    ->Args({0, 1, 1})
    ->Args({1, 1, 0})
    ->Args({1, 2, 1})
    ->Args({0, 2, 1})
    ->Unit(benchmark::kMillisecond);
