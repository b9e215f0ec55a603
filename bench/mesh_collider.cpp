// A triangle-mesh collider under the peer scene's sheet: 256 x 256 at spacing 0.5 (65 536
// particles), 1 iteration, 6 substeps, g = 9.81, dropped onto a 10 000-triangle torus (100 x 50
// quads, ring radius 40, tube 15) and stepped 2 s, so that about two fifths of the sheet lie on
// the mesh. Then timed per 60 Hz frame with the mesh on and switched off (the difference is the
// collider's cost), on 1 and 2 threads, and one collider pass alone, vector and scalar; contacts
// found per call (the default) or per substep; per substep, the vector path with the sheet's grid
// given to the collider (tiles: 4 x 4 particles a batch on AVX-512) and without (runs of 16 along
// a row). The Drape settles per call; the passes alone (BM_mesh_collider_pass, _order) are the
// per-substep path, driven directly.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
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
    std::shared_ptr<ColliderSet<float>> world;
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
        mesh = &world->add(TriangleMeshCollider<float>(
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
    if (!tiles)
    {
        for (std::size_t i = 0; i < sim.size(); ++i)
            copy(i);
        return out;
    }
    for (int tile = 0; tile < kSide * kSide / 16; ++tile)
        for (int k = 0; k < 16; ++k)
        {
            const int row = tile / (kSide / 4) * 4 + k / 4, col = tile % (kSide / 4) * 4 + k % 4;
            copy(std::size_t(row * kSide + col));
        }
    return out;
}

/// One pass over the same particles in row order and in tiles: what lane groups shaped as tiles
/// would save the collider.
void BM_mesh_collider_order(benchmark::State& bench)
{
    const bool tiles = bench.range(0) != 0;
    Drape drape(1);
    auto particles = reordered(drape.sim, tiles);
    time_passes(bench, *drape.mesh, particles.state());
    bench.SetLabel(tiles ? "4 x 4 tiles" : "rows");
}
/// "Particles in lanes or triangles in lanes": the closest-point query alone (no sweep, no
/// response) over the draped particles, each against the triangles of its block's list, written
/// both ways around the same arithmetic (detail::closest_offset). Particles in lanes is how the
/// collider runs: 16 particles of a block against one broadcast triangle. Triangles in lanes:
/// one broadcast particle against 16 triangles of the list, laid out a register apart beforehand.
/// Both count the particles within reach and must agree.
struct QueryScene
{
    using B = simd::Batch<float, xsimd::default_arch>;
    static constexpr std::size_t L = B::size;
    static constexpr float kReach = 0.25f;

    struct FaceLanes // one triangle per lane, the fields of detail::Face
    {
        std::array<B, 3> a, e1, e2, n;
        B e11, e12, e22, inv_e11, inv_e22, inv_e33, inv_gram;
        std::array<B, 3> lo, hi; // bounds
        simd::Mask<float, xsimd::default_arch> valid;
    };

    mutable Drape drape{1}; // arrays_view() is non-const; the queries only read
    std::vector<detail::Face<float>> faces;
    std::vector<detail::Bounds<float>> boxes;
    std::vector<std::vector<std::uint32_t>> lists;  // per block of L particles
    std::vector<std::vector<FaceLanes>> lane_lists; // the same, L triangles a register

    QueryScene()
    {
        const auto ring = testing::torus<float>({0, 0, 0}, 40.0f, 15.0f, 100, 50);
        for (const auto& t : ring.triangles)
            faces.push_back(detail::Face<float>::from(
                ring.vertices[std::size_t(t[0])], ring.vertices[std::size_t(t[1])], ring.vertices[std::size_t(t[2])]));
        boxes = testing::triangle_bounds(ring);
        detail::TriangleTree<float> tree;
        const auto order = tree.build(boxes);
        std::vector<detail::Face<float>> f2;
        std::vector<detail::Bounds<float>> b2;
        for (const auto k : order)
        {
            f2.push_back(faces[k]);
            b2.push_back(boxes[k]);
        }
        faces = std::move(f2);
        boxes = std::move(b2);
        tree.refit(boxes);
        const auto& s = drape.sim.state();
        for (std::size_t first = 0; first < s.size(); first += L)
        {
            detail::Bounds<float> box;
            for (std::size_t i = first; i < std::min(s.size(), first + L); ++i)
                box.add(s.position(i).x(), s.position(i).y(), s.position(i).z());
            lists.emplace_back();
            tree.query(box.grown(kReach), boxes, lists.back());
            lane_lists.push_back(lay_out(lists.back()));
        }
    }

    std::vector<FaceLanes> lay_out(const std::vector<std::uint32_t>& list) const
    {
        std::vector<FaceLanes> out;
        for (std::size_t g = 0; g < list.size(); g += L)
        {
            alignas(64) float v[26][L];
            alignas(64) float ok[L];
            for (std::size_t l = 0; l < L; ++l)
            {
                const auto k = list[std::min(g + l, list.size() - 1)];
                const auto& f = faces[k];
                const float fields[26] = {f.a[0],         f.a[1],
                                          f.a[2],         f.e1[0],
                                          f.e1[1],        f.e1[2],
                                          f.e2[0],        f.e2[1],
                                          f.e2[2],        f.n[0],
                                          f.n[1],         f.n[2],
                                          f.e11,          f.e12,
                                          f.e22,          f.inv_e11,
                                          f.inv_e22,      f.inv_e33,
                                          f.inv_gram,     boxes[k].lo[0],
                                          boxes[k].lo[1], boxes[k].lo[2],
                                          boxes[k].hi[0], boxes[k].hi[1],
                                          boxes[k].hi[2], 0.0f};
                for (int q = 0; q < 26; ++q)
                    v[q][l] = fields[q];
                ok[l] = g + l < list.size() ? 1.0f : 0.0f;
            }
            const auto at = [&](int q) { return simd::load<float, xsimd::default_arch>(v[q]); };
            out.push_back({{at(0), at(1), at(2)},
                           {at(3), at(4), at(5)},
                           {at(6), at(7), at(8)},
                           {at(9), at(10), at(11)},
                           at(12),
                           at(13),
                           at(14),
                           at(15),
                           at(16),
                           at(17),
                           at(18),
                           {at(19), at(20), at(21)},
                           {at(22), at(23), at(24)},
                           simd::load<float, xsimd::default_arch>(ok) != B(0.0f)});
        }
        return out;
    }

    /// Particles within reach, 16 particles against a broadcast triangle.
    int particles_in_lanes() const
    {
        const auto s = drape.sim.state().arrays_view();
        const B reach(kReach), reach2(kReach * kReach);
        int within = 0;
        for (std::size_t b = 0; b < lists.size(); ++b)
        {
            const std::size_t i = b * L;
            const B x = simd::load<float, xsimd::default_arch>(s.x + i),
                    y = simd::load<float, xsimd::default_arch>(s.y + i),
                    z = simd::load<float, xsimd::default_arch>(s.z + i);
            const auto lanes = simd::first_lanes<float, xsimd::default_arch>(std::min(L, s.size - i));
            B best = reach2;
            for (const auto k : lists[b])
            {
                const auto& f = faces[k];
                const auto& box = boxes[k];
                const auto near = lanes && (x - reach <= B(box.hi[0])) && (x + reach >= B(box.lo[0])) &&
                                  (y - reach <= B(box.hi[1])) && (y + reach >= B(box.lo[1])) &&
                                  (z - reach <= B(box.hi[2])) && (z + reach >= B(box.lo[2]));
                if (!simd::any(near))
                    continue;
                const B nx(f.n[0]), ny(f.n[1]), nz(f.n[2]);
                const B s1 = (x - B(f.a[0])) * nx + (y - B(f.a[1])) * ny + (z - B(f.a[2])) * nz;
                const auto flat = near && (s1 < reach) && (s1 > -reach);
                if (!simd::any(flat))
                    continue;
                B dx, dy, dz;
                detail::closest_offset(f, x, y, z, s1, nx, ny, nz, flat, dx, dy, dz);
                const B d2 = dx * dx + dy * dy + dz * dz;
                best = simd::select(flat && (d2 < best), d2, best);
            }
            within += simd::count<float, xsimd::default_arch>(lanes && (best < reach2));
        }
        return within;
    }

    /// Particles within reach, one broadcast particle against 16 triangles.
    int triangles_in_lanes() const
    {
        const auto s = drape.sim.state().arrays_view();
        const B reach(kReach), reach2(kReach * kReach);
        int within = 0;
        for (std::size_t i = 0; i < s.size; ++i)
        {
            const B x(s.x[i]), y(s.y[i]), z(s.z[i]);
            B best = reach2;
            for (const auto& f : lane_lists[i / L])
            {
                const auto near = f.valid && (x - reach <= f.hi[0]) && (x + reach >= f.lo[0]) &&
                                  (y - reach <= f.hi[1]) && (y + reach >= f.lo[1]) && (z - reach <= f.hi[2]) &&
                                  (z + reach >= f.lo[2]);
                if (!simd::any(near))
                    continue;
                const B s1 = (x - f.a[0]) * f.n[0] + (y - f.a[1]) * f.n[1] + (z - f.a[2]) * f.n[2];
                const auto flat = near && (s1 < reach) && (s1 > -reach);
                if (!simd::any(flat))
                    continue;
                B dx, dy, dz;
                detail::closest_offset(f, x, y, z, s1, f.n[0], f.n[1], f.n[2], flat, dx, dy, dz);
                const B d2 = dx * dx + dy * dy + dz * dz;
                best = simd::select(flat && (d2 < best), d2, best);
            }
            within += simd::any(best < reach2) ? 1 : 0;
        }
        return within;
    }
};

void BM_mesh_query_layout(benchmark::State& bench)
{
    const bool triangles = bench.range(0) != 0;
    const QueryScene scene;
    const int expected = scene.particles_in_lanes();
    int within = 0;
    for (auto _ : bench)
    {
        within = triangles ? scene.triangles_in_lanes() : scene.particles_in_lanes();
        benchmark::DoNotOptimize(within);
    }
    if (within != expected)
        bench.SkipWithError("the two layouts disagree");
    bench.counters["within_reach"] = double(within);
    bench.SetLabel(triangles ? "triangles in lanes" : "particles in lanes");
}
} // namespace

BENCHMARK(BM_mesh_query_layout)->ArgName("triangles")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mesh_collider_order)->ArgName("tiles")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mesh_collider_pass)
    ->ArgNames({"vectorized", "tiles"})
    ->Args({1, 1})
    ->Args({1, 0})
    ->Args({0, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mesh_collider)
    ->ArgNames({"mesh", "threads", "vectorized", "tiles", "per_call"})
    ->Args({1, 1, 1, 0, 1})
    ->Args({1, 1, 1, 1, 0})
    ->Args({1, 1, 1, 0, 0})
    ->Args({0, 1, 1, 0, 0})
    ->Args({1, 1, 0, 0, 1})
    ->Args({1, 1, 0, 0, 0})
    ->Args({1, 2, 1, 0, 1})
    ->Args({1, 2, 1, 1, 0})
    ->Args({1, 2, 1, 0, 0})
    ->Args({0, 2, 1, 0, 0})
    ->Unit(benchmark::kMillisecond);
