// The garment scenes of DESIGN section 7 (tests/garment_scenes.hpp): a 2 m x 2 m sheet of 10 000
// vertices, irregular, 2 cm edges, 0.2 kg/m^2, at 60 Hz with gravity 9.81.
//   S1: dropped 0.3 m onto a 0.5 m icosphere mesh (5 120 triangles) on a floor, 4 s.
//   S3: hung from the two corners of one edge and released from horizontal, 6 s.
//   S2: S1 with self-collision at 1 cm over the cloth's triangles.
//   S4: a dress of about 10 000 vertices on a body mesh walking a circle, held at the waist.
// and S3 as a user would try it next: from one corner, from the whole edge, in a knit ten times
// softer, and triangulated regularly instead of irregularly.
// Each run reports ms a frame, the peak edge strain |l / L - 1|, the largest strain in the last
// second, and the vertices more than 1 cm inside the sphere in any frame of the last second.
// Methods: 0 the explicit springs with the strain limit (and tethers on S3) at the settings that
// hold the sheet near 5 %; 1 a cloth made with a ClothMaterial (the implicit cloth solve).
#include <algorithm>
#include <chrono>
#include <map>
#include <numbers>
#include <vector>

#include <string>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>

#include <benchmark/benchmark.h>

#include <simdverlet/simdverlet.hpp>

#include "cantilever.hpp"
#include "garment_scenes.hpp"
#include "threads.hpp"

namespace
{
using namespace simdverlet;
using T = float;

const Vec3<T> kBallCentre(0, -0.5f, 0);
constexpr T kBallRadius = 0.5f;
/// The garment scenes' fabric: a shirt cotton with its bending.
const ClothMaterial<T> kFabric = ClothMaterial<T>::cotton();

enum Scene
{
    s1_drape = 1,
    s2_drape_self_collision = 2,
    s3_two_corners = 3,
    s4_dress = 4,
    s3_one_corner = 31,
    s3_whole_edge = 32,
    s3_soft = 33,
    s3_regular = 34,
};

struct GarmentRun
{
    double ms_per_frame = 0, peak = 0, late = 0;
    int inside = 0;
    std::size_t strained_at_end = 0; ///< edges past 5 % strain after the last frame
    int crossings = 0;               ///< edge-triangle crossings within the cloth after the last frame
    int crossings_late = 0;          ///< S2: the most edge-triangle crossings in a frame of the last second
    bool diverged = false;
};

GarmentRun run_garment(Scene scene, int method, int substeps, int threads)
{
    Simulation<T> sim;
    auto mesh = testing::garment_sheet<T>();
    if (scene == s3_regular)
    {
        mesh = testing::sheet_mesh<T>(99, 2.0f, false);
        for (auto& v : mesh.vertices)
            v = Vec3<T>(v.x() - 1.0f, -1.3f, v.y() - 1.0f);
    }
    const bool hang = scene != s1_drape && scene != s2_drape_self_collision;
    const auto pinned = [scene, hang](std::size_t v) {
        if (scene == s3_one_corner)
            return v == 0;
        if (scene == s3_whole_edge)
            return v < 100;
        return hang && (v == 0 || v == 99);
    };
    ClothMaterial<T> fabric = kFabric;
    if (scene == s3_soft)
        fabric.stretch /= 10;
    const Cloth<T> cloth = method == 0
                               ? add_mesh_cloth(sim,
                                                {.mesh = mesh,
                                                 .stiffness = (hang ? 8.0f : 128.0f) * fabric.stretch / kFabric.stretch,
                                                 .bend_stiffness = 0.0f,
                                                 .mass_per_area = kFabric.density,
                                                 .pinned = pinned,
                                                 .name = "sheet"})
                               : add_mesh_cloth(sim,
                                                {.mesh = mesh, .material = fabric, .pinned = pinned, .name = "sheet"});
    if (method == 0)
    {
        if (hang)
            add_tethers(sim, {.cloth = cloth});
        add_strain_limit(sim, {.cloth = cloth, .max_stretch = 0.01f, .max_compression = 0.01f, .passes = hang ? 4 : 2});
    }
    if (scene == s2_drape_self_collision)
        add_self_collision(sim, {.thickness = 0.01f, .range = cloth.range(), .cloths = {cloth}});
    ColliderSet<T> world;
    if (!hang)
    {
        const auto ball = testing::icosphere<T>(kBallCentre, kBallRadius, 4);
        world = add_colliders(sim, {});
        world.add(TriangleMeshCollider<T>(
            {.vertices = ball.vertices, .triangles = ball.triangles, .thickness = 0.005f, .two_sided = false},
            {.friction = 0.5f}));
        world.add(PlaneCollider<T>({.normal = {0, -1, 0}, .offset = 0}, {.friction = 0.5f}));
    }
    benchmarking::use_threads(sim, threads);
    const testing::EdgeRuler<T> ruler(cloth, mesh.vertices);
    const int frames = hang ? 360 : 240, last_second = frames - 60;
    const StepParams<T> frame{
        .dt = 1.0f / 60.0f, .gravity = {0, 9.81f, 0}, .iterations = method == 0 ? 1 : 0, .substeps = substeps};
    GarmentRun run;
    std::chrono::steady_clock::duration stepping{};
    for (int f = 0; f < frames && !sim.diverged(); ++f)
    {
        const auto start = std::chrono::steady_clock::now();
        sim.step(frame);
        stepping += std::chrono::steady_clock::now() - start;
        const double strain = ruler.worst_strain(sim.state());
        run.peak = std::max(run.peak, strain);
        if (f >= last_second)
        {
            run.late = std::max(run.late, strain);
            if (!hang)
                run.inside = std::max(run.inside, testing::inside_sphere(sim.state(), cloth.base(), cloth.end(),
                                                                         kBallCentre, kBallRadius, 0.01f));
            if (scene == s2_drape_self_collision) // counted outside the timed step
                run.crossings_late = std::max(run.crossings_late,
                                              testing::edge_triangle_crossings(cloth, ruler, sim.state()));
        }
    }
    run.diverged = sim.diverged();
    run.strained_at_end = ruler.count_strained(sim.state(), 0.05f);
    run.crossings = hang || run.diverged ? 0 : testing::edge_triangle_crossings(cloth, ruler, sim.state());
    run.ms_per_frame = std::chrono::duration<double, std::milli>(stepping).count() / frames;
    return run;
}

// S4: a dress of about 10 000 vertices (a cone of rings zipped together, 2 cm edges) on a body that
// walks a circle of 1.5 m in 8 s: a capsule mesh from the knees to the head, its vertices moved
// every frame. The waistband is pinned and moved with the hips (a material cloth's attachments
// are pins: docs/guide.md). Inside counts, over every frame, the dress vertices more than 1 cm
// inside the body's capsule.
constexpr float kBodyRadius = 0.22f, kWaist = -1.0f, kHead = -1.8f, kKnees = -0.4f;

GarmentRun run_dress(int substeps, int threads)
{
    Simulation<T> sim;
    const auto centre_at = [](float t) {
        const float a = 2.0f * std::numbers::pi_v<float> * t / 8.0f;
        return Vec3<T>(1.5f * std::cos(a), 0.0f, 1.5f * std::sin(a));
    };
    auto mesh = testing::skirt_mesh<T>(kBodyRadius + 0.02f, 0.75f, 0.9f, 56, 84);
    for (auto& v : mesh.vertices)
        v += centre_at(0) + Vec3<T>(0, kWaist, 0);
    const auto waist = [&](std::size_t v) { return mesh.vertices[v].y() < kWaist + 0.001f; };
    auto dress = add_mesh_cloth(sim, {.mesh = mesh, .material = kFabric, .pinned = waist, .name = "dress"});
    auto body = testing::capsule_mesh<T>(kHead + kBodyRadius, kKnees - kBodyRadius, kBodyRadius, 3);
    for (auto& v : body.vertices)
        v += centre_at(0); // where the walk starts: the first frame's move is then a step, not a jump
    auto world = add_colliders(sim, {});
    auto& skin = world.add(TriangleMeshCollider<T>(
        {.vertices = body.vertices, .triangles = body.triangles, .thickness = 0.005f, .two_sided = false},
        {.friction = 0.3f}));
    benchmarking::use_threads(sim, threads);
    const testing::EdgeRuler<T> ruler(dress, mesh.vertices);
    std::vector<std::size_t> band;
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
        if (waist(v))
            band.push_back(v);
    const StepParams<T> frame{.dt = 1.0f / 60.0f, .gravity = {0, 9.81f, 0}, .substeps = substeps};
    const int frames = 8 * 60, last_second = frames - 60;
    GarmentRun run;
    std::chrono::steady_clock::duration stepping{};
    std::vector<Vec3<T>> moved(body.vertices.size());
    for (int f = 1; f <= frames && !sim.diverged(); ++f)
    {
        const float t = float(f) / 60.0f;
        const Vec3<T> shift = centre_at(t) - centre_at(0);
        const float turn = 2.0f * std::numbers::pi_v<float> * t / 8.0f;
        const float c = std::cos(turn), s = std::sin(turn);
        const auto walk = [&](const Vec3<T>& rest) -> Vec3<T> {
            // Turned about the body's axis as it walks, then carried along the circle.
            const Vec3<T> o = rest - centre_at(0);
            return centre_at(0) + shift + Vec3<T>(c * o.x() - s * o.z(), o.y(), s * o.x() + c * o.z());
        };
        const auto started = std::chrono::steady_clock::now();
        for (std::size_t k = 0; k < body.vertices.size(); ++k)
            moved[k] = walk(body.vertices[k]);
        skin.set_vertices(moved);
        for (const auto v : band)
            dress.teleport(v, walk(mesh.vertices[v]));
        sim.step(frame);
        stepping += std::chrono::steady_clock::now() - started;
        const double strain = ruler.worst_strain(sim.state());
        run.peak = std::max(run.peak, strain);
        if (f > last_second)
            run.late = std::max(run.late, strain);
        const Vec3<T> axis_top = walk(centre_at(0) + Vec3<T>(0, kHead + kBodyRadius, 0));
        const Vec3<T> axis_bottom = walk(centre_at(0) + Vec3<T>(0, kKnees - kBodyRadius, 0));
        int inside = 0;
        for (std::size_t i = dress.base(); i < dress.end(); ++i)
        {
            const Vec3<T> p = sim.state().position(i), d = axis_bottom - axis_top;
            const float along = std::clamp((p - axis_top).dot(d) / d.squaredNorm(), 0.0f, 1.0f);
            inside += (p - axis_top - along * d).norm() < kBodyRadius - 0.01f ? 1 : 0;
        }
        run.inside = std::max(run.inside, inside);
    }
    run.diverged = sim.diverged();
    run.strained_at_end = ruler.count_strained(sim.state(), 0.05f);
    run.crossings = run.diverged ? 0 : testing::edge_triangle_crossings(dress, ruler, sim.state());
    run.ms_per_frame = std::chrono::duration<double, std::milli>(stepping).count() / frames;
    return run;
}

void BM_garment(benchmark::State& bench)
{
    const auto scene = Scene(bench.range(0));
    const int method = int(bench.range(1)), substeps = int(bench.range(2)), threads = int(bench.range(3));
    GarmentRun run;
    for (auto _ : bench)
        run = scene == s4_dress ? run_dress(substeps, threads) : run_garment(scene, method, substeps, threads);
    bench.counters["ms/frame"] = run.ms_per_frame;
    bench.counters["peak"] = run.peak;
    bench.counters["late"] = run.late;
    bench.counters["inside_1cm"] = run.inside;
    bench.counters["edges_past_5pct_at_end"] = double(run.strained_at_end);
    bench.counters["crossings_at_end"] = run.crossings;
    if (scene == s2_drape_self_collision)
        bench.counters["crossings_late"] = run.crossings_late;
    static const std::map<int, std::string> scenes = {{s1_drape, "S1"},
                                                      {s2_drape_self_collision, "S2"},
                                                      {s4_dress, "S4"},
                                                      {s3_two_corners, "S3"},
                                                      {s3_one_corner, "S3 one corner"},
                                                      {s3_whole_edge, "S3 whole edge"},
                                                      {s3_soft, "S3 knit (10^3 N/m)"},
                                                      {s3_regular, "S3 regular mesh"}};
    bench.SetLabel(scenes.at(int(scene)) + (method == 0 ? " explicit + strain limit, " : " material, ") +
                   std::to_string(substeps) + " substeps, " + std::to_string(threads) + " thread" +
                   (threads > 1 ? "s" : "") + (run.diverged ? ", diverged" : ""));
}

void garment_arguments(benchmark::internal::Benchmark* b)
{
    b->ArgNames({"scene", "method", "substeps", "threads"});
    for (const int scene : {1, 3})
    {
        b->Args({scene, 0, scene == 1 ? 64 : 16, 1});
        for (const int substeps : {1, 2, 4, 8})
            b->Args({scene, 1, substeps, 1});
        b->Args({scene, 1, 4, 2});
    }
    b->Args({1, 1, 16, 1});
    for (const int substeps : {1, 4})
        b->Args({2, 1, substeps, 1});
    for (const int substeps : {2, 4})
        b->Args({4, 1, substeps, 1});
    for (const int variant : {31, 32, 33, 34})
        for (const int substeps : {2, 4})
            b->Args({variant, 1, substeps, 1});
}

BENCHMARK(BM_garment)->Apply(garment_arguments)->Unit(benchmark::kMillisecond)->Iterations(1);

// Peirce's cantilever (tests/cantilever.hpp) at 1.5, 2 and 2.5 bending lengths, 16 cells along and
// regular, or 32 cells, or irregular, or stiffer (10^6 N/m): the chord angle against the heavy
// elastica's. The solve's hinge at the pins shows here (docs/decisions.md, "What bounds the
// bending").
void BM_cantilever(benchmark::State& bench)
{
    const int variant = int(bench.range(0));
    const double overhang = double(bench.range(1)) / 10;
    const testing::Cantilever c{.overhang = overhang,
                                .cells_along = variant == 1 ? 32 : 16,
                                .irregular = variant == 2,
                                .stretch = variant == 3 ? 1e6 : 1e4};
    double angle = 0;
    for (auto _ : bench)
        angle = testing::cantilever_chord_degrees(c);
    const double expected = testing::elastica_chord_degrees(overhang);
    bench.counters["angle"] = angle;
    bench.counters["elastica"] = expected;
    bench.counters["off_degrees"] = angle - expected;
    static const char* variants[] = {"16 cells", "32 cells", "16 cells irregular", "10^6 N/m"};
    bench.SetLabel(variants[variant]);
}

void cantilever_arguments(benchmark::internal::Benchmark* b)
{
    b->ArgNames({"variant", "overhang_x10"});
    for (const int overhang : {15, 20, 25})
        b->Args({0, overhang});
    for (const int variant : {1, 2, 3})
        b->Args({variant, 20});
}

BENCHMARK(BM_cantilever)->Apply(cantilever_arguments)->Unit(benchmark::kMillisecond)->Iterations(1);

/// One application of the cloth solve's preconditioner factor (stretch_factor.hpp) to the garment
/// sheet, three coordinates at once, against Eigen's solve of the same matrix for a three-column
/// right-hand side (arg 0).
void BM_cloth_solve_factor(benchmark::State& bench)
{
    const bool interleaved = bench.range(0) != 0;
    const auto mesh = testing::garment_sheet<T>();
    std::vector<std::uint32_t> identity(mesh.vertices.size());
    for (std::size_t v = 0; v < identity.size(); ++v)
        identity[v] = std::uint32_t(v);
    const auto plan = detail::plan_material_cloth(mesh, kFabric);
    const auto data = detail::material_solve(mesh, plan, kFabric, identity, 0);
    const std::size_t n = mesh.vertices.size();
    const std::vector<bool> free(n, true);
    const double h = 1.0 / 240.0;
    detail::StretchFactor factor;
    factor.factor(data->energy.stretch, nullptr, data->energy.inertia.mass, free, h);
    std::vector<Eigen::Triplet<double>> entries;
    for (std::size_t v = 0; v < n; ++v)
        entries.emplace_back(int(v), int(v), data->energy.inertia.mass[v] / (h * h));
    for (const auto& t : data->energy.stretch.triangles)
        for (std::size_t a = 0; a < 3; ++a)
            for (std::size_t b = 0; b < 3; ++b)
                entries.emplace_back(t.corner[a], t.corner[b],
                                     data->energy.stretch.stretch * t.area * t.gradient[a].dot(t.gradient[b]));
    Eigen::SparseMatrix<double> matrix(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
    matrix.setFromTriplets(entries.begin(), entries.end());
    const Eigen::SimplicialLLT<Eigen::SparseMatrix<double>> cholesky(matrix);
    Eigen::Matrix<double, Eigen::Dynamic, 3> rhs = Eigen::Matrix<double, Eigen::Dynamic, 3>::Ones(Eigen::Index(n), 3);
    Eigen::Matrix<double, Eigen::Dynamic, 3> out;
    const std::vector<Eigen::Vector3d> r(n, Eigen::Vector3d::Ones());
    std::vector<Eigen::Vector3d> z;
    for (auto _ : bench)
    {
        if (interleaved)
        {
            factor.solve(r, z);
            benchmark::DoNotOptimize(z.data());
        }
        else
        {
            out = cholesky.solve(rhs);
            benchmark::DoNotOptimize(out.data());
        }
    }
    bench.counters["factor_entries"] = double(factor.entries());
    bench.SetLabel(interleaved ? "interleaved xyz, float entries" : "Eigen, three columns");
}

BENCHMARK(BM_cloth_solve_factor)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

} // namespace
