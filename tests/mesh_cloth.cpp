// Mesh cloth: a cloth made from any triangle mesh, its springs in constraint layers, its handle the
// grid cloth's without grid coordinates, and a material that the triangulation does not change.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "meshes.hpp"
#include "same_bits.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// Every live spring of a cloth as a pair of its vertices (lower first).
std::set<std::pair<std::size_t, std::size_t>> vertex_springs(const Simulation<float>& sim, const Cloth<float>& cloth)
{
    std::set<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
        sim.constraint_layers().for_each_wired(i, [&](SlotRef, std::int32_t j, float, float k) {
            if (k > 0)
            {
                const std::size_t a = cloth.vertex(i), b = cloth.vertex(std::size_t(j));
                out.emplace(std::min(a, b), std::max(a, b));
            }
        });
    return out;
}

/// The mesh's edges and, per inner edge, the pair of vertices opposite it (lower first).
struct Topology
{
    std::set<std::pair<std::size_t, std::size_t>> edges;
    std::vector<std::pair<std::pair<std::size_t, std::size_t>, std::pair<std::size_t, std::size_t>>> bends;
};

Topology topology(const std::vector<std::array<std::int32_t, 3>>& triangles)
{
    std::map<std::pair<std::size_t, std::size_t>, std::vector<std::size_t>> opposite;
    for (const auto& t : triangles)
        for (int k = 0; k < 3; ++k)
        {
            const auto a = std::size_t(t[std::size_t(k)]), b = std::size_t(t[std::size_t((k + 1) % 3)]);
            opposite[{std::min(a, b), std::max(a, b)}].push_back(std::size_t(t[std::size_t((k + 2) % 3)]));
        }
    Topology out;
    for (const auto& [edge, others] : opposite)
    {
        out.edges.insert(edge);
        if (others.size() == 2)
            out.bends.push_back({edge, {std::min(others[0], others[1]), std::max(others[0], others[1])}});
    }
    return out;
}

/// The lowest y of the bottom row of a sheet_mesh(cells) cloth hanging from its top row, once
/// settled: how far the sheet stretched under its weight.
template <class Make>
double settled_drop(Make&& make, int cells, double side)
{
    Simulation<float> sim;
    auto cloth = make(sim);
    const StepParams<float> params{
        .dt = 1.0f / 60, .damping = 0.95f, .gravity = {0, 9.8f, 0}, .iterations = 4, .substeps = 8};
    REQUIRE(stability_ratio(sim, params) < 0.8);
    for (int frame = 0; frame < 400; ++frame)
        sim.step(params);
    double sum = 0;
    for (int c = 0; c <= cells; ++c)
        sum += double(cloth.position(std::size_t(cells * (cells + 1) + c)).y());
    return sum / double(cells + 1) / side - 1.0;
}
} // namespace

TEST_CASE("a mesh cloth has a particle per vertex, a stretch spring per edge and a bend spring per inner edge",
          "[mesh_cloth]")
{
    // The unit square as two triangles on the diagonal 0-2: five edges, and one bend spring joining
    // 1 and 3 across the diagonal. Each triangle's mass (area 1/2 x mass_per_area 3) goes a third
    // to each of its corners: 1 to the diagonal's ends, 1/2 to the others.
    Simulation<float> sim;
    TriangleMesh<float> square;
    square.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    square.triangles = {{0, 1, 2}, {0, 2, 3}};
    auto cloth = add_mesh_cloth(
        sim, {.mesh = square, .stiffness = 30, .bend_stiffness = 6, .mass_per_area = 3, .reorder = false});
    CHECK(cloth.count() == 4);
    CHECK_FALSE(cloth.is_grid());
    CHECK(cloth.triangles() == square.triangles);
    const auto springs = vertex_springs(sim, cloth);
    const std::set<std::pair<std::size_t, std::size_t>> expected = {{0, 1}, {1, 2}, {2, 3}, {0, 3}, {0, 2}, {1, 3}};
    CHECK(springs == expected);
    CHECK(sim.state().inverse_mass(cloth.index(0)) == Approx(1.0f));
    CHECK(sim.state().inverse_mass(cloth.index(1)) == Approx(2.0f));
    CHECK(sim.state().inverse_mass(cloth.index(2)) == Approx(1.0f));
    CHECK(sim.state().inverse_mass(cloth.index(3)) == Approx(2.0f));
    // Stiffness: kappa E A / L^2 with A a third of the triangles around the spring. The side 0-1
    // (one triangle, L 1): 8/3 x 30 x (1/2 / 3) = 13.33; the diagonal (two triangles, L^2 2):
    // 8/3 x 30 x (1/3) / 2 = 13.33; the bend 1-3 (across the two, L^2 2) 8/3 x 6 x (1/3) / 2.
    const auto& k = sim.constraint_layers();
    const auto stiffness = [&](std::size_t a, std::size_t b) {
        const auto at = k.slot_to(cloth.index(a), std::int32_t(cloth.index(b)));
        REQUIRE(at);
        return k[at->layer].stiffness(cloth.index(a), at->slot);
    };
    CHECK(stiffness(0, 1) == Approx(8.0 / 3 * 30 / 6));
    CHECK(stiffness(0, 2) == Approx(8.0 / 3 * 30 / 3 / 2));
    CHECK(stiffness(1, 3) == Approx(8.0 / 3 * 6 / 3 / 2));
    CHECK(k.links_of(cloth.index(0), cloth.index(2)) == 1); // the bend goes with the diagonal

    // bend_stiffness 0: no bend springs.
    Simulation<float> flat;
    auto no_bend = add_mesh_cloth(flat, {.mesh = square, .bend_stiffness = 0, .reorder = false});
    CHECK(vertex_springs(flat, no_bend).size() == 5);
}

TEST_CASE("a garment vertex's springs spill into further layers and step with the same bits on every path",
          "[mesh_cloth][layers]")
{
    const auto mesh = sheet_mesh<float>(12, 3.0f, true);
    const auto run = [&](auto&& configure) {
        Simulation<float> sim;
        add_mesh_cloth(sim, {.mesh = mesh, .stiffness = 200, .pinned = [](std::size_t v) { return v <= 12; }});
        configure(sim);
        for (int frame = 0; frame < 60; ++frame)
            sim.step({.damping = 0.98f, .gravity = {0, 9.8f, 0}, .iterations = 4, .substeps = 4});
        const int layers = int(sim.constraint_layers().count());
        return std::pair{std::move(sim), layers};
    };
    const int layers = check_same_bits_on_every_path(run, 64);
    CHECK(layers >= 3);
    const auto moved = run([](auto&) {});
    CHECK(moved.first.state().position(150).y() > 0.5f); // it sagged
    const auto unfused = run([](auto& s) { s.set_fused(false); });
    CHECK(same_positions(unfused.first, moved.first));
}

TEST_CASE("the material, not the triangulation, sets how far a hanging square stretches", "[mesh_cloth]")
{
    // A 4 x 4 square of 16 x 16 cells hung from its top row: regular (every diagonal the same way),
    // irregular (random diagonals, interior vertices jittered by 0.3 of the spacing), and as a grid
    // cloth of the same spacing, stiffness and mass per area. The physical truth checked: the
    // stretch under its own weight (about rho g L / 2E at the middle) belongs to the material, so
    // the two triangulations settle within 10 % of each other.
    const int cells = 16;
    const double side = 4, h = side / cells;
    const float stiffness = 100; // x 4 iterations: the sheet feels 400
    const auto hang = [&](bool irregular, unsigned seed) {
        return [=](Simulation<float>& sim) {
            return add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(cells, float(side), irregular, seed),
                                        .stiffness = stiffness,
                                        .bend_stiffness = 0,
                                        .pinned = [=](std::size_t v) { return v <= std::size_t(cells); }});
        };
    };
    const double regular = settled_drop(hang(false, 1), cells, side);
    const double irregular = settled_drop(hang(true, 3), cells, side);
    const double other = settled_drop(hang(true, 11), cells, side);
    const double grid = settled_drop(
        [&](Simulation<float>& sim) {
            return add_cloth(sim, {.width = cells + 1,
                                   .height = cells + 1,
                                   .spacing = float(h),
                                   .stiffness = stiffness,
                                   .mass = float(h * h),
                                   .curvature_strength = 0.0f,
                                   .pinned = [](int, int r) { return r == 0; }});
        },
        cells, side);
    CHECK(regular > 0.02); // it stretched visibly
    CHECK(std::abs(irregular / regular - 1) < 0.10);
    CHECK(std::abs(other / regular - 1) < 0.10);
    // The grid has no diagonals: nothing resists shear, and its sides do not draw in as the
    // triangulated square's do, so it stretches differently; it is in the same range.
    CHECK(grid / regular > 0.5);
    CHECK(grid / regular < 2.0);
}

TEST_CASE("a sliver triangle in a good mesh does not make the defaults diverge", "[mesh_cloth]")
{
    // A sheet of spacing 0.5 whose vertex 40 sits almost on top of its right neighbour: the edge
    // between them is a thousandth of the others, the triangles on it needles. Its stiffness is held
    // to the bound kMaxAreaOverLength2 allows, so the sheet's stiffest particle is little worse than
    // a good mesh's, and the default options and the default step (8 iterations, 1 substep) hold.
    auto mesh = sheet_mesh<float>(10, 5.0f, false);
    mesh.vertices[40] = mesh.vertices[41] + Vec3<float>(-0.0005f, 0.0003f, 0);
    const auto hang = [](const TriangleMesh<float>& m) {
        Simulation<float> sim;
        auto cloth = add_mesh_cloth(sim, {.mesh = m, .pinned = [](std::size_t v) { return v <= 10; }});
        return std::pair{std::move(sim), cloth};
    };
    auto [sim, cloth] = hang(mesh);
    auto [good, good_cloth] = hang(sheet_mesh<float>(10, 5.0f, false));
    const StepParams<float> params{.gravity = {0, 9.8f, 0}};
    const double ratio = stability_ratio(sim, params), good_ratio = stability_ratio(good, params);
    CHECK(good_ratio < 0.7);
    CHECK(ratio < 1.0);
    for (int frame = 0; frame < 300; ++frame)
    {
        sim.step(params);
        good.step(params);
    }
    CHECK_FALSE(sim.diverged());
    // It hangs as the good sheet does: the bottom row within a few percent of the spacing.
    for (std::size_t v = 110; v <= 120; ++v)
        CHECK(std::abs(cloth.position(v).y() - good_cloth.position(v).y()) < 0.05f);
}

TEST_CASE("a mesh cloth's handle speaks vertices, and grid coordinates are a logic_error", "[mesh_cloth][errors]")
{
    Simulation<float> sim;
    sim.add_particle({9, 9, 9}); // the cloth does not start at particle 0
    const auto mesh = sheet_mesh<float>(6, 3.0f, true);
    auto cloth = add_mesh_cloth(sim, {.mesh = mesh, .bend_stiffness = 3.0f, .name = "sail"});
    CHECK(cloth.base() == 1);
    CHECK(cloth.count() == mesh.vertices.size());
    CHECK(cloth.end() == 1 + mesh.vertices.size());
    // Reordered along a Z-order curve: index() maps, and vertex() maps back.
    bool moved = false;
    for (std::size_t v = 0; v < cloth.count(); ++v)
    {
        CHECK(cloth.vertex(cloth.index(v)) == v);
        CHECK(cloth.position(v) == mesh.vertices[v]);
        moved = moved || cloth.index(v) != 1 + v;
    }
    CHECK(moved);
    const std::string grid_error = "simdverlet: cell (1, 2) is a grid's, and cloth 'sail' was made from a triangle "
                                   "mesh: speak of its vertices instead";
    CHECK(error_message<std::logic_error>([&] { cloth.index(1, 2); }) == grid_error);
    CHECK(error_message<std::logic_error>([&] { cloth.position(1, 2); }) == grid_error);
    CHECK(error_message<std::logic_error>([&] { cloth.pin({1, 2}, true); }) == grid_error);
    CHECK(error_message<std::logic_error>([&] { cloth.width(); }).find("width() is a grid's") != std::string::npos);
    CHECK(error_message<std::logic_error>([&] { cloth.grid(); }).find("grid() is a grid's") != std::string::npos);
    CHECK(error_message<std::logic_error>([&] { cloth.lines(); }).find("lines() is a grid's") != std::string::npos);
    const auto springs = sim.constraint_layers().edit_stamp();
    CHECK(sim.position_projections().names().empty());
    CHECK(sim.constraint_layers().edit_stamp() == springs);
    CHECK(error_message<std::out_of_range>([&] { cloth.index(std::size_t(999)); }) ==
          "simdverlet: vertex 999 is outside cloth 'sail', which has 49");

    // pin / teleport / grab by vertex.
    const float free_w = sim.state().inverse_mass(cloth.index(10));
    cloth.pin(10);
    CHECK(cloth.is_pinned(std::size_t(10)));
    cloth.pin(10, false);
    CHECK(sim.state().inverse_mass(cloth.index(10)) == free_w);
    cloth.teleport(std::size_t(3), Vec3<float>(0, -1, 0));
    CHECK(cloth.position(3) == Vec3<float>(0, -1, 0));
    const std::size_t grabbed = cloth.grab_nearest({3, 3, 0});
    CHECK(cloth.contains(grabbed));
    CHECK((cloth.position(cloth.vertex(grabbed)) - Vec3<float>(3, 3, 0)).norm() < 0.5f);
    cloth.move_grabbed({4, 4, 0});
    for (int frame = 0; frame < 30; ++frame)
        sim.step({.iterations = 4, .substeps = 2});
    CHECK(sim.state().position(grabbed).x() > 3.0f);
    CHECK(cloth.release());

    // remove: every layer's slots of the cloth go, and the layers with them.
    REQUIRE(sim.constraint_layers().count() > 1);
    cloth.remove();
    CHECK(cloth.removed());
    CHECK(sim.constraint_layers().count() == 1);
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
        CHECK(sim.constraint_layers().live_count(i) == 0);
}

TEST_CASE("add_mesh_cloth refuses bad options and unrepairable meshes, changing nothing", "[mesh_cloth][errors]")
{
    Simulation<float> sim;
    add_cloth(sim, {.width = 3, .height = 3});
    const auto state_before = sim.state();
    const auto layers_before = sim.constraint_layers();
    const auto mesh = sheet_mesh<float>(3, 1.0f, false);
    const auto message = [&](MeshClothOptions<float> o) {
        return error_message([&] { add_mesh_cloth(sim, std::move(o)); });
    };
    CHECK(message({.mesh = mesh, .stiffness = -1}) ==
          "simdverlet: mesh cloth stiffness must be finite and >= 0, got -1");
    CHECK(message({.mesh = mesh, .bend_stiffness = std::nanf("")}) ==
          "simdverlet: mesh cloth bend_stiffness must be finite and >= 0, got NaN");
    CHECK(message({.mesh = mesh, .mass_per_area = 0}) ==
          "simdverlet: mesh cloth mass_per_area must be finite and > 0, got 0");
    auto nan_vertex = mesh;
    nan_vertex.vertices[5].x() = std::nanf("");
    CHECK(message({.mesh = nan_vertex}).find("vertex 5 (NaN, ") != std::string::npos);
    auto bad_index = mesh;
    bad_index.triangles[2][1] = 99;
    CHECK(message({.mesh = bad_index}).find("triangle 2 refers to vertex 99") != std::string::npos);
    CHECK(message({.mesh = TriangleMesh<float>{}}).find("has no triangles") != std::string::npos);
    auto degenerate = mesh;
    degenerate.triangles.push_back({0, 1, 1});
    degenerate.uv_triangles.push_back({0, 1, 1});
    CHECK(message({.mesh = degenerate, .repair = MeshRepair::refuse}).find("is degenerate") != std::string::npos);
    Simulation<float> unit(Masses::unit);
    CHECK(error_message([&] { add_mesh_cloth(unit, {.mesh = mesh}); }).find("per-particle masses") !=
          std::string::npos);
    sim.add_particle({0, 0, 0});
    sim.queue_remove(9);
    CHECK(message({.mesh = mesh}).find("removals are queued") != std::string::npos);
    sim.step({});
    CHECK(sim.state() == state_before);
    CHECK(sim.constraint_layers() == layers_before);
}

TEST_CASE("a mesh with a zero-area and a repeated triangle and an unused vertex is repaired and reported",
          "[mesh_cloth]")
{
    LogCapture log;
    auto mesh = sheet_mesh<float>(4, 2.0f, true);
    const std::size_t triangles = mesh.triangles.size();
    mesh.triangles.push_back({3, 3, 7});         // zero area
    mesh.triangles.push_back(mesh.triangles[5]); // repeated
    mesh.uv_triangles.push_back({3, 3, 7});
    mesh.uv_triangles.push_back(mesh.uv_triangles[5]);
    mesh.vertices.emplace_back(50, 50, 50); // named by no triangle
    mesh.uvs.emplace_back(0, 0);
    Simulation<float> sim;
    auto cloth = add_mesh_cloth(sim, {.mesh = mesh, .name = "skirt"});
    CHECK(cloth.triangles().size() == triangles);
    CHECK(cloth.count() == 25);
    CHECK(cloth.repairs().degenerate_triangles == 1);
    CHECK(cloth.repairs().first_degenerate_triangle == triangles);
    CHECK(cloth.repairs().repeated_triangles == 1);
    CHECK(cloth.repairs().first_repeated_triangle == triangles + 1);
    CHECK(cloth.repairs().unused_vertices == 1);
    CHECK(cloth.repairs().first_unused_vertex == 25);
    REQUIRE_FALSE(log.warnings.empty());
    CHECK(log.warnings[0].find("mesh cloth 'skirt'") != std::string::npos);
}

TEST_CASE("an edge of three triangles keeps its stretch spring and gets no bend spring", "[mesh_cloth]")
{
    // A fin: three triangles on the edge 0-1, and a fourth beside one of them.
    LogCapture log;
    TriangleMesh<float> fin;
    fin.vertices = {{0, 0, 0}, {0, 1, 0}, {1, 0.5f, 0}, {-1, 0.5f, 0}, {0, 0.5f, 1}, {1, 1.5f, 0}};
    fin.triangles = {{0, 1, 2}, {1, 0, 3}, {0, 1, 4}, {1, 5, 2}};
    Simulation<float> sim;
    auto cloth = add_mesh_cloth(sim, {.mesh = fin, .bend_stiffness = 3.0f, .reorder = false});
    CHECK(cloth.non_manifold_edges() == 1);
    const auto springs = vertex_springs(sim, cloth);
    CHECK(springs.count({0, 1}) == 1);
    // The only bend spring is across the manifold edge 1-2: between 0 and 5.
    const auto topo = topology(fin.triangles);
    CHECK(springs.size() == topo.edges.size() + 1);
    CHECK(springs.count({0, 5}) == 1);
    REQUIRE(log.warnings.size() == 1);
    CHECK(log.warnings[0].find("1 non-manifold edges") != std::string::npos);
}

TEST_CASE("a bend spring goes with its edge: a cut mesh cloth parts and its lower half falls freely",
          "[mesh_cloth][tearing]")
{
    // An irregular sheet hung from its top row, cut across the middle. Without the links, the bend
    // springs that reach across the cut from one side to the other (their ends on one side of the
    // line and their edge's ends on the other are both possible) would keep the halves together.
    const int cells = 14;
    Simulation<float> sim;
    auto cloth = add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(cells, 7.0f, true, 5),
                                      .stiffness = 200,
                                      .pinned = [&](std::size_t v) { return v <= std::size_t(cells); }});
    const StepParams<float> params{.damping = 0.99f, .gravity = {0, 9.8f, 0}, .iterations = 4, .substeps = 4};
    for (int frame = 0; frame < 60; ++frame)
        sim.step(params);
    REQUIRE(connected_components(sim) == 1);
    // Between rows 7 and 8 at the left edge.
    const float cut_y = 0.5f * (cloth.position(std::size_t(7 * (cells + 1))).y() +
                                cloth.position(std::size_t(8 * (cells + 1))).y());
    const std::size_t cuts = cut(sim, Vec3<float>(-5, cut_y, 0), Vec3<float>(12, cut_y, 0));
    CHECK(cuts > std::size_t(cells));
    CHECK(connected_components(sim) == 2);
    // Every live bend spring's edge is live: none outlived its edge.
    const auto topo = topology(cloth.triangles());
    const auto live = vertex_springs(sim, cloth);
    for (const auto& [edge, ends] : topo.bends)
        if (live.count(ends) && !topo.edges.count(ends))
            CHECK(live.count(edge) == 1);
    // The lower half falls freely: after half a second its lowest vertex has fallen g t^2 / 2 less
    // what the damping takes, far past where a held sheet would hang.
    const float bottom_before = cloth.position(std::size_t(cells * (cells + 1) + cells / 2)).y();
    for (int frame = 0; frame < 30; ++frame)
        sim.step(params);
    const float bottom_after = cloth.position(std::size_t(cells * (cells + 1) + cells / 2)).y();
    CHECK(bottom_after - bottom_before > 0.8f);
}

namespace
{
/// An irregular mesh cloth hung from its top row (the vertices at y = 0), 4 x 4 in 16 x 16 cells:
/// soft (the sheet feels 20 x 4 iterations), so that its own weight stretches it tens of percent.
struct SoftMeshSheet
{
    static constexpr int kCells = 16;
    Simulation<float> sim;
    TriangleMesh<float> mesh = sheet_mesh<float>(kCells, 4.0f, true, 17);
    Cloth<float> cloth;

    explicit SoftMeshSheet(float stiffness = 20)
        : cloth(add_mesh_cloth(
              sim, {.mesh = mesh, .stiffness = stiffness, .bend_stiffness = 0, .pinned = [this](std::size_t v) {
                        return mesh.vertices[v].y() == 0.0f;
                    }}))
    {
    }
    static StepParams<float> step()
    {
        return {.damping = 0.97f, .gravity = {0, 9.8f, 0}, .iterations = 4, .substeps = 4};
    }

    /// How far, as a fraction, the particle furthest past its rest distance below the top row is.
    double worst_stretch() const
    {
        double worst = 0;
        for (std::size_t v = 0; v < cloth.count(); ++v)
        {
            const double rest = mesh.vertices[v].y();
            if (rest < 0.5)
                continue;
            const double below = cloth.position(v).y() - rest;
            worst = std::max(worst, below / rest);
        }
        return worst;
    }
};
} // namespace

TEST_CASE("tethers over a mesh cloth's springs hold a soft hanging mesh cloth to under 1 %", "[mesh_cloth][tethers]")
{
    // The physical truth: a particle tethered to the top row at its rest distance along the cloth
    // cannot hang further below it, however soft the springs; without tethers the sheet's weight
    // stretches it tens of percent. Measured as the drop below a particle's rest height, which
    // neither tether kind lets grow past slack x the rest distance to its anchor.
    SoftMeshSheet loose, geodesic, euclidean;
    const auto along = add_tethers(geodesic.sim, TethersOptions<float>{.cloth = geodesic.cloth});
    add_tethers(euclidean.sim, TethersOptions<float>{.cloth = euclidean.cloth, .kind = TetherKind::euclidean});
    CHECK(along.tethered() == int(geodesic.cloth.count()));
    for (int frame = 0; frame < 300; ++frame)
    {
        loose.sim.step(SoftMeshSheet::step());
        geodesic.sim.step(SoftMeshSheet::step());
        euclidean.sim.step(SoftMeshSheet::step());
    }
    CHECK(loose.worst_stretch() > 0.2);
    CHECK(euclidean.worst_stretch() < 0.01);
    // Geodesic rest distances cross the triangles in straight lines (not along zig-zag edges), so on
    // the flat rest sheet they are the straight-line distances too.
    CHECK(geodesic.worst_stretch() < 0.01);
}

TEST_CASE("every stage on a mesh cloth gives the same bits on every path and after a restore", "[mesh_cloth][snapshot]")
{
    // An irregular mesh cloth held along its top edge by motion constraints (max distance 0 there,
    // free elsewhere), tethered, strain-limited, falling onto a ball with self-collision on, a tear
    // limit and a floor: every stage a garment uses, all reading the cloth's constraint layers.
    const auto build = [] {
        Simulation<float> sim;
        const auto mesh = sheet_mesh<float>(14, 4.0f, true, 23);
        auto cloth = add_mesh_cloth(sim, {.mesh = mesh, .stiffness = 60, .pinned = [&](std::size_t v) {
                                              return mesh.vertices[v].y() == 0.0f;
                                          }});
        auto motion = add_motion_constraints(
            sim, MotionConstraintsOptions<float>{.range = cloth.range(), .max_distance = 100});
        std::vector<float> distances(cloth.count(), 100.0f);
        std::vector<Vec3<float>> targets(cloth.count()), normals(cloth.count(), Vec3<float>(0, 0, -1));
        for (std::size_t k = 0; k < cloth.count(); ++k)
        {
            const std::size_t v = cloth.vertex(cloth.base() + k);
            targets[k] = mesh.vertices[v] + Vec3<float>(0.3f, 0, 0);
            if (mesh.vertices[v].y() < 0.3f)
                distances[k] = 0;
        }
        motion.set_max_distance(distances);
        motion.set_targets(targets, normals);
        add_tethers(sim, TethersOptions<float>{.cloth = cloth, .slack = 1.05f});
        add_strain_limit(sim, StrainLimitOptions<float>{.max_stretch = 0.1f, .passes = 2});
        add_self_collision(sim, SelfCollisionOptions<float>{.thickness = 0.2f});
        add_tearing(sim, {.max_strain = 0.6f});
        add_colliders(sim, {}, SphereCollider<float>({.center = {2, 3, 1.0f}, .radius = 1.2f}),
                      PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -5}));
        return std::pair{std::move(sim), cloth};
    };
    const StepParams<float> params{.gravity = {0, 9.8f, 0}, .iterations = 4, .substeps = 2};
    const auto run = [&](auto&& configure) {
        auto [sim, cloth] = build();
        configure(sim);
        for (int frame = 0; frame < 90; ++frame)
            sim.step(params);
        return std::pair{std::move(sim), int(sim.constraint_layers().count())};
    };
    const int layers = check_same_bits_on_every_path(run, 64);
    CHECK(layers >= 3);

    auto [source, cloth] = build();
    for (int frame = 0; frame < 40; ++frame)
        source.step(params);
    const auto snap = snapshot(source);
    for (int frame = 0; frame < 50; ++frame)
        source.step(params);
    auto [restored, restored_cloth] = build();
    restore(restored, snap);
    for (int frame = 0; frame < 50; ++frame)
        restored.step(params);
    CHECK(same_positions(restored, source));
    CHECK(restored.constraint_layers() == source.constraint_layers());
    // It draped: no particle inside the ball, and the edge stayed on its targets.
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
        CHECK((source.state().position(i) - Vec3<float>(2, 3, 1.0f)).norm() > 1.2f - 1e-3f);
}

TEST_CASE("a mesh cloth on the debug view, under removal and in the strain limit reads every layer",
          "[mesh_cloth][layers]")
{
    Simulation<float> sim;
    const auto mesh = sheet_mesh<float>(8, 4.0f, true, 31);
    auto cloth = add_mesh_cloth(sim, {.mesh = mesh, .bend_stiffness = 3.0f});
    REQUIRE(sim.constraint_layers().count() >= 3);
    const auto topo = topology(mesh.triangles);
    // Each edge and each bend spring drawn once.
    CHECK(debug_lines(sim).count(SegmentKind::spring) == topo.edges.size() + topo.bends.size());
    // Removals: a particle appended after the cloth can go; one inside it or below it cannot.
    const std::size_t extra = sim.add_particle({0, 0, 0});
    sim.queue_remove(extra);
    sim.step({});
    CHECK(sim.size() == cloth.end());
    CHECK(error_message<std::logic_error>([&] { sim.queue_remove(cloth.base() + 3); }).find("inside cloth 'cloth@0'") !=
          std::string::npos);
    // The strain limit holds every layer's springs: stretched 50 % by hand, a limit of 5 % with
    // enough passes brings every spring back near its bound.
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
        sim.state().set_position(i, sim.state().position(i) * 1.5f);
    add_strain_limit(sim, StrainLimitOptions<float>{.max_stretch = 0.05f, .passes = 64});
    sim.step({.iterations = 0});
    // Without layers 1 and up, two thirds of the springs would still be 50 % long.
    CHECK(peak_strain(sim) < 0.2);
}

TEST_CASE("a mesh cloth numbered along a Z-order curve moves to the bit as the one in file order", "[mesh_cloth]")
{
    // A particle's springs are wired in the order of their vertices, whatever the numbering, so each
    // lands in the same slot and layer either way and every sum adds the same forces in the same
    // order: the same bits, only the memory order moves.
    const auto mesh = sheet_mesh<float>(12, 3.0f, true, 41);
    const auto hang = [&](bool reorder) {
        Simulation<float> sim;
        auto cloth = add_mesh_cloth(sim, {.mesh = mesh,
                                          .stiffness = 100,
                                          .pinned = [&](std::size_t v) { return mesh.vertices[v].y() == 0.0f; },
                                          .reorder = reorder});
        for (int frame = 0; frame < 120; ++frame)
            sim.step({.gravity = {0, 9.8f, 0}, .iterations = 4, .substeps = 4});
        std::vector<Vec3<float>> out;
        for (std::size_t v = 0; v < cloth.count(); ++v)
            out.push_back(cloth.position(v));
        return out;
    };
    const auto ordered = hang(true), filed = hang(false);
    double gap = 0, moved = 0;
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
    {
        gap = std::max(gap, double((ordered[v] - filed[v]).norm()));
        moved = std::max(moved, double((ordered[v] - mesh.vertices[v]).norm()));
    }
    CHECK(moved > 0.1);
    CHECK(gap == 0.0);
}

TEST_CASE("self-collision spares a mesh cloth's spring partners in every layer and pushes the others apart",
          "[mesh_cloth][self_collision]")
{
    // A flat irregular mesh cloth at rest, no gravity, with a thickness above the rest distance of
    // some pairs joined only by a spring in a further layer (bend springs across short diagonals)
    // and below every unjoined pair's: at rest nothing may move, so the exemption reads every
    // layer. Then one vertex is lifted to a third of the thickness above an unjoined vertex, and
    // the stage must part them.
    Simulation<float> sim;
    const auto mesh = sheet_mesh<float>(14, 4.0f, true, 5, 0.35f);
    auto cloth = add_mesh_cloth(sim, {.mesh = mesh, .stiffness = 60});
    const auto& layers = sim.constraint_layers();
    REQUIRE(layers.count() >= 3);
    float later_only = std::numeric_limits<float>::max(), unjoined = std::numeric_limits<float>::max();
    std::pair<std::size_t, std::size_t> unjoined_pair;
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
        for (std::size_t j = i + 1; j < cloth.end(); ++j)
        {
            const float d = (sim.state().position(i) - sim.state().position(j)).norm();
            const auto slot = layers.slot_to(i, std::int32_t(j));
            if (!layers.joined(i, j) && d < unjoined)
            {
                unjoined = d;
                unjoined_pair = {i, j};
            }
            else if (slot && slot->layer > 0 && !layers[0].slot_to(i, std::int32_t(j)) &&
                     !layers[0].slot_to(j, std::int32_t(i)) && d < later_only)
                later_only = d;
        }
    const float thickness = 0.5f * (later_only + unjoined);
    REQUIRE(later_only < 0.95f * unjoined);
    add_self_collision(sim, SelfCollisionOptions<float>{.thickness = thickness});
    const State3<float> rest = sim.state();
    const StepParams<float> still{.gravity = {0, 0, 0}, .iterations = 2, .substeps = 2};
    for (int frame = 0; frame < 30; ++frame)
        sim.step(still);
    float drift = 0;
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
        drift = std::max(drift, (sim.state().position(i) - rest.position(i)).norm());
    CHECK(drift < 1e-4f * thickness); // what remains is the springs' rounding at their rest lengths

    const auto [a, b] = unjoined_pair;
    cloth.teleport(cloth.vertex(a), sim.state().position(b) + Vec3<float>(0, 0, thickness / 3));
    sim.step(still);
    const float parted = (sim.state().position(a) - sim.state().position(b)).norm();
    CHECK(parted > 0.9f * thickness);
}
