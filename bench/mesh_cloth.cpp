// A cloth made from an irregular triangle mesh, stepped at the peer scene's settings: 60 frames a
// second, 6 substeps, 1 iteration, the top row pinned. The mesh is the 256 x 256 vertex square
// (spacing 0.5, 65 536 vertices) with every cell's diagonal flipped at random and every interior
// vertex jittered by 0.3 of the spacing, with bend springs: valences from 4 to 8 and about twelve
// springs a vertex, three or four constraint layers.
//
// The same mesh at 64^2 to 224^2 vertices, reordered on one thread, shows where its constraint
// layers (192 bytes a vertex) stop fitting in the cache.
//
// Paths: reordered (add_mesh_cloth's default Z-order numbering), file order (the mesh's row order,
// reorder = false: the order of a mesh that happens to be laid out well), shuffled (the vertices
// in a random order, reorder = false: what an exported file often is).
//
// Counters:
//   slot-forces/s   live slots x substeps per second: spring forces computed, as BM_step counts them
//   layers          constraint layers the simulation holds
#include <algorithm>
#include <numeric>
#include <random>

#include <benchmark/benchmark.h>

#include <simdverlet/simdverlet.hpp>

#include "meshes.hpp"
#include "threads.hpp"
#include "timing.hpp"

namespace
{
using namespace simdverlet;

enum MeshOrder
{
    kReordered,
    kFileOrder,
    kShuffled,
};

/// The benchmark's mesh: `cells` x `cells` cells at spacing 0.5, irregular; with `shuffled`, its
/// vertices renumbered by a random permutation.
TriangleMesh<float> benchmark_mesh(int cells, bool shuffled)
{
    auto mesh = testing::sheet_mesh<float>(cells, 0.5f * float(cells), true, 2024);
    if (!shuffled)
        return mesh;
    std::vector<std::int32_t> where(mesh.vertices.size());
    std::iota(where.begin(), where.end(), 0);
    std::shuffle(where.begin(), where.end(), std::mt19937(99));
    TriangleMesh<float> out;
    out.vertices.resize(mesh.vertices.size());
    for (std::size_t v = 0; v < where.size(); ++v)
        out.vertices[std::size_t(where[v])] = mesh.vertices[v];
    for (const auto& t : mesh.triangles)
        out.triangles.push_back({where[std::size_t(t[0])], where[std::size_t(t[1])], where[std::size_t(t[2])]});
    return out;
}

void BM_mesh_cloth(benchmark::State& bench)
{
    const auto order = MeshOrder(bench.range(0));
    const int threads = int(bench.range(1));
    const int cells = int(bench.range(2));
    Simulation<float> sim;
    const auto mesh = benchmark_mesh(cells, order == kShuffled);
    // The top row: the vertices at y = 0 (exactly, the border is not jittered).
    const auto top = [&](std::size_t v) { return mesh.vertices[v].y() == 0.0f; };
    // The peer sheet's material: stiffness 3000 per grid spring, unit masses at spacing 0.5.
    add_mesh_cloth(
        sim, {.mesh = mesh, .stiffness = 3000, .mass_per_area = 4, .pinned = top, .reorder = order == kReordered});
    if (!benchmarking::use_threads(sim, threads))
    {
        bench.SkipWithError("built without OpenMP");
        return;
    }
    const StepParams<float> frame{.dt = 1.0f / 60.0f, .gravity = {0, 9.81f, 0}, .iterations = 1, .substeps = 6};
    for (int warm = 0; warm < 3; ++warm)
        sim.step(frame);
    const double seconds = benchmarking::seconds_per_iteration(bench, [&] {
        sim.step(frame);
        benchmark::ClobberMemory();
    });
    if (sim.diverged())
        bench.SkipWithError("the cloth diverged; the figures would time NaN arithmetic");
    double slots = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
        slots += sim.constraint_layers().live_count(i);
    using C = benchmark::Counter;
    bench.counters["slot-forces/s"] = C(slots * frame.substeps, C::kIsIterationInvariantRate);
    bench.counters["layers"] = double(sim.constraint_layers().count());
    bench.counters["vertices"] = double(sim.size());
    bench.counters["ms/frame"] = 1e3 * seconds;
    const char* names[] = {"reordered", "file order", "shuffled"};
    bench.SetLabel(std::string(names[order]) + " " + simd::arch_name() + (threads > 1 ? " x2" : ""));
}

void mesh_paths(benchmark::internal::Benchmark* b)
{
    for (int order : {kReordered, kFileOrder, kShuffled})
        for (int threads : {1, 2})
            b->Args({order, threads, 255});
    // Smaller meshes, reordered, one thread: where the solve's data leaves the cache.
    for (int cells : {63, 127, 191, 223})
        b->Args({kReordered, 1, cells});
    b->ArgNames({"order", "threads", "cells"});
    b->Unit(benchmark::kMillisecond);
    b->UseRealTime();
}
} // namespace

BENCHMARK(BM_mesh_cloth)->Apply(mesh_paths);
