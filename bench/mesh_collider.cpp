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

/// What a separate per-substep pass over the draped sheet must cost at the least, whatever it
/// computes: it reads each particle's positions and inverse mass (7 floats), then the box its
/// motion was predicted to stay in (6 more: the stray test, which a block with no triangle in
/// reach needs too), then the plane and its mode (5 more). Each kind of
/// pass here reads those arrays for every particle and counts the lanes its test finds, with no
/// response: a floor for the projection, timed in the same run as the cloth's own substep.
void BM_mesh_collider_floor(benchmark::State& bench)
{
    const int reads = int(bench.range(0)); // 7, 13 or 18 floats a particle
    Drape drape(1);
    auto& state = drape.sim.state();
    const std::size_t n = state.size();
    const auto x = state.x(), y = state.y(), z = state.z(), px = state.px(), py = state.py(), pz = state.pz();
    const auto w = state.inv_mass();
    // Boxes and planes as a plan would hold them: around each particle, the plane just below it.
    std::array<std::vector<float>, 3> lo, hi, nrm;
    std::vector<float> offset(n), mode(n);
    for (int k = 0; k < 3; ++k)
    {
        const auto c = k == 0 ? x : k == 1 ? y : z;
        lo[std::size_t(k)].assign(c.begin(), c.end());
        hi[std::size_t(k)].assign(c.begin(), c.end());
        nrm[std::size_t(k)].assign(n, k == 1 ? -1.0f : 0.0f);
        for (std::size_t i = 0; i < n; ++i)
            lo[std::size_t(k)][i] -= 0.1f, hi[std::size_t(k)][i] += 0.1f;
    }
    for (std::size_t i = 0; i < n; ++i)
        offset[i] = -y[i] - 0.2f, mode[i] = float(i % 3 == 0);
    using B = simd::Batch<float, xsimd::default_arch>;
    constexpr std::size_t L = B::size; // n is a multiple: the sheet has 65 536 particles
    const B big(1e6f), zero(0.0f), plane(1.0f);
    const float *lx = lo[0].data(), *ly = lo[1].data(), *lz = lo[2].data();
    const float *hx = hi[0].data(), *hy = hi[1].data(), *hz = hi[2].data();
    const float *nx = nrm[0].data(), *ny = nrm[1].data(), *nz = nrm[2].data();
    std::uint64_t found = 0;
    const auto pass = [&] {
        std::uint64_t count = 0;
        for (std::size_t i = 0; i < n; i += L)
        {
            const auto at = [i](const float* a) { return simd::load_at<B>(a + i); };
            const B bx = at(x.data()), by = at(y.data()), bz = at(z.data());
            const B bpx = at(px.data()), bpy = at(py.data()), bpz = at(pz.data());
            const auto movable = w.empty() ? (zero == zero) : (at(w.data()) != zero);
            auto found_here = (bx > big) || (by > big) || (bz > big) || (bpx > big) || (bpy > big) || (bpz > big);
            if (reads >= 13)
            {
                const B x0 = at(lx), y0 = at(ly), z0 = at(lz), x1 = at(hx), y1 = at(hy), z1 = at(hz);
                found_here = found_here || (bx < x0) || (bx > x1) || (by < y0) || (by > y1) || (bz < z0) || (bz > z1) ||
                             (bpx < x0) || (bpx > x1) || (bpy < y0) || (bpy > y1) || (bpz < z0) || (bpz > z1);
            }
            if (reads == 18)
            {
                const B depth = at(offset.data()) - (at(nx) * bx + at(ny) * by + at(nz) * bz);
                found_here = found_here || ((at(mode.data()) == plane) && (depth > zero));
            }
            count += std::uint64_t(simd::count(movable && found_here));
        }
        found += count;
    };
    // The cloth's own substep on the same state, as BM_mesh_collider_parts measures it.
    drape.mesh->enabled = false;
    const State3<float> original = state;
    const double frame = benchmarking::seconds_per_iteration(
        bench, [&] { drape.sim.step(kFrame); }, [&] { drape.sim.state() = original; });
    bench.counters["cloth_substep_ms"] = 1e3 * frame / double(kFrame.substeps);
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const int passes = 2000;
    for (int k = 0; k < passes; ++k)
        pass();
    const double one = std::chrono::duration<double>(Clock::now() - start).count() / passes;
    benchmark::DoNotOptimize(found);
    bench.counters["pass_ms"] = 1e3 * one;
    bench.counters["pass/cloth_substep"] = one / (frame / double(kFrame.substeps));
    bench.SetLabel(std::to_string(reads) + " floats a particle");
}
} // namespace

BENCHMARK(BM_mesh_collider_pass)
    ->ArgNames({"vectorized", "tiles"})
    ->Args({1, 1})
    ->Args({1, 0})
    ->Args({0, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mesh_collider_floor)->ArgName("reads")->Arg(7)->Arg(13)->Arg(18)->Unit(benchmark::kMillisecond);
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
