// Self-collision of a material cloth, held inside its implicit solve (self_contact_term.hpp):
// layers rest a thickness apart, a cloth never passes through itself however fast it moves, one
// that starts crossed is refused by name, and the same bits come out on every path.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <vector>

#include "catch.hpp"
#include "garment_scenes.hpp"
#include "meshes.hpp"
#include "same_bits.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
using F = float;

const StepParams<F> kMaterialFrame{.dt = F(1) / F(60), .gravity = {0, F(9.81), 0}, .substeps = 4};

/// A mesh of `layers` copies of a side x side irregular sheet of `cells` cells a side, lying flat
/// (+y down), the first at height `y`, each next one `gap` above the one before.
TriangleMesh<F> layered_sheets(int layers, int cells, F side, F y, F gap)
{
    TriangleMesh<F> out;
    for (int layer = 0; layer < layers; ++layer)
    {
        const TriangleMesh<F> sheet = sheet_mesh<F>(cells, side, true, 7u + unsigned(layer));
        const auto first = std::int32_t(out.vertices.size());
        for (const auto& v : sheet.vertices)
            out.vertices.emplace_back(v.x() - side / 2, y - F(layer) * gap, v.y() - side / 2);
        for (const auto& t : sheet.triangles)
            out.triangles.push_back({t[0] + first, t[1] + first, t[2] + first});
    }
    return out;
}

/// The distance from p to the nearest of `triangles` (particle indices) at their positions now.
double distance_to_triangles(const State3<F>& s, const Vec3<F>& p,
                             const std::vector<std::array<std::int32_t, 3>>& triangles)
{
    double nearest = std::numeric_limits<double>::infinity();
    const Eigen::Vector3d q = p.cast<double>();
    for (const auto& t : triangles)
    {
        const Eigen::Vector3d a = s.position(std::size_t(t[0])).cast<double>();
        const Eigen::Vector3d b = s.position(std::size_t(t[1])).cast<double>();
        const Eigen::Vector3d c = s.position(std::size_t(t[2])).cast<double>();
        const Eigen::Vector3d w = detail::nearest_on_triangle(q, a, b, c);
        nearest = std::min(nearest, (q - (w.x() * a + w.y() * b + w.z() * c)).norm());
    }
    return nearest;
}

/// Two stacked cotton sheets, 40 cm and 2 cm edges, 1.5 cm apart, dropped 6 cm onto a floor with a
/// bump (a ball sunk into it, 3 cm proud), self-collision at 1 cm.
struct StackedSheets
{
    static constexpr int kCells = 20;
    static constexpr F kThickness = F(0.01);
    Simulation<F> sim;
    TriangleMesh<F> mesh = layered_sheets(2, kCells, F(0.4), F(-0.06), F(0.015));
    Cloth<F> cloth;
    SelfCollision<F> self;

    StackedSheets()
    {
        cloth = add_mesh_cloth(sim, {.mesh = mesh, .material = ClothMaterial<F>::cotton(), .name = "stack"});
        self = add_self_collision(sim, {.thickness = kThickness, .range = cloth.range(), .cloths = {cloth}});
        auto floor = add_colliders(sim, {});
        floor.add(PlaneCollider<F>({.normal = {0, -1, 0}, .offset = 0}, {.friction = F(0.5)}));
        floor.add(SphereCollider<F>({.center = {0, F(0.03), 0}, .radius = F(0.06)}, {.friction = F(0.5)}));
    }
};

} // namespace

TEST_CASE("two stacked material sheets dropped on a floor with a bump rest at 0.95 of their thickness apart and "
          "never cross",
          "[self_collision][material]")
{
    // The truth checked: self-collision is a thickness, so the upper sheet's every vertex ends at
    // least about that far from the lower sheet's surface (over a bump, where the layers bend
    // together), and neither sheet's edge ever passes through a triangle.
    StackedSheets scene;
    const EdgeRuler<F> ruler(scene.cloth, scene.mesh.vertices);
    const std::size_t per_sheet = scene.mesh.vertices.size() / 2;
    std::vector<std::array<std::int32_t, 3>> lower;
    for (std::size_t t = 0; t < scene.mesh.triangles.size() / 2; ++t)
    {
        const auto& tri = scene.mesh.triangles[t];
        lower.push_back({std::int32_t(scene.cloth.index(std::size_t(tri[0]))),
                         std::int32_t(scene.cloth.index(std::size_t(tri[1]))),
                         std::int32_t(scene.cloth.index(std::size_t(tri[2])))});
    }
    int crossed = 0;
    for (int frame = 0; frame < 120; ++frame)
    {
        scene.sim.step(kMaterialFrame);
        crossed += edge_triangle_crossings(scene.cloth, ruler, scene.sim.state());
    }
    CHECK(crossed == 0);
    double closest = std::numeric_limits<double>::infinity();
    for (std::size_t v = per_sheet; v < 2 * per_sheet; ++v)
        closest = std::min(
            closest, distance_to_triangles(scene.sim.state(), scene.sim.state().position(scene.cloth.index(v)), lower));
    INFO("closest upper vertex to the lower sheet " << closest << " m");
    CHECK(closest >= 0.95 * double(StackedSheets::kThickness));
    CHECK(closest < 2.0 * double(StackedSheets::kThickness)); // resting on it, not floating above
    // The bump (its top 3 cm above the floor) holds both up: the lower sheet's highest point is on
    // it, the upper's a thickness above that.
    F lower_top = 0, upper_top = 0;
    for (std::size_t v = 0; v < per_sheet; ++v)
    {
        lower_top = std::min(lower_top, scene.sim.state().position(scene.cloth.index(v)).y());
        upper_top = std::min(upper_top, scene.sim.state().position(scene.cloth.index(per_sheet + v)).y());
    }
    INFO("highest points: lower sheet " << -lower_top << " m, upper " << -upper_top << " m");
    CHECK(lower_top < F(-0.028));
    CHECK(upper_top < lower_top - F(0.95) * StackedSheets::kThickness);
    CHECK(scene.self.contacts() > 100);
    CHECK(ruler.worst_strain(scene.sim.state()) < F(0.05));
}

TEST_CASE("a material sheet at a thickness of 0.2 x its spacing crumpled onto a floor never crosses itself",
          "[self_collision][material]")
{
    // Held upright on a floor and let go, a 60 cm sheet of silk buckles and falls into folds. The
    // truth checked: at no frame does an edge pass through a triangle, though folds press against
    // folds only 4 mm apart, a fifth of an edge.
    Simulation<F> sim;
    TriangleMesh<F> mesh = sheet_mesh<F>(30, F(0.6), true, 11u);
    for (auto& v : mesh.vertices)
        v = Vec3<F>(v.x() - F(0.3), v.y() - F(0.61), F(0.02) * std::sin(F(10) * v.x()));
    const Cloth<F> cloth = add_mesh_cloth(sim, {.mesh = mesh, .material = ClothMaterial<F>::silk(), .name = "heap"});
    const auto self = add_self_collision(sim, {.thickness = F(0.004), .range = cloth.range(), .cloths = {cloth}});
    auto floor = add_colliders(sim, {});
    floor.add(PlaneCollider<F>({.normal = {0, -1, 0}, .offset = 0}, {.friction = F(0.5)}));
    const EdgeRuler<F> ruler(cloth, mesh.vertices);
    int crossed = 0;
    std::size_t most_contacts = 0;
    for (int frame = 0; frame < 120; ++frame)
    {
        sim.step(kMaterialFrame);
        crossed += edge_triangle_crossings(cloth, ruler, sim.state());
        most_contacts = std::max(most_contacts, std::size_t(self.contacts()));
    }
    CHECK(crossed == 0);
    float top = 0;
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
        top = std::min(top, sim.state().position(i).y());
    INFO("heap height " << -top << " m, most contacts " << most_contacts);
    CHECK(-top < F(0.3));      // it fell into folds, not a standing sheet
    CHECK(most_contacts > 50); // folds lie on folds
}

TEST_CASE("a patch falling 5 cm a step onto a held material sheet stops on it instead of passing through",
          "[self_collision][material]")
{
    // The sharp case of the step bound: one substep a frame, a patch arriving at 3 m/s moves five
    // times the thickness in a step, so a contact found at the step's start cannot stop it; the
    // bound on each vertex's stray from the cloth's mean move does. Truth: it ends above the sheet.
    Simulation<F> sim;
    TriangleMesh<F> mesh = layered_sheets(1, 10, F(0.2), F(0), F(0));
    const auto sheet_vertices = mesh.vertices.size();
    const TriangleMesh<F> patch = layered_sheets(1, 2, F(0.04), F(-0.5), F(0));
    for (const auto& v : patch.vertices)
        mesh.vertices.push_back(v);
    for (const auto& t : patch.triangles)
        mesh.triangles.push_back({t[0] + std::int32_t(sheet_vertices), t[1] + std::int32_t(sheet_vertices),
                                  t[2] + std::int32_t(sheet_vertices)});
    const auto border = [&](std::size_t v) {
        if (v >= sheet_vertices)
            return false;
        const Vec3<F>& p = mesh.vertices[v];
        return std::abs(p.x()) > F(0.099) || std::abs(p.z()) > F(0.099);
    };
    const Cloth<F> cloth = add_mesh_cloth(
        sim, {.mesh = mesh, .material = ClothMaterial<F>::denim(), .pinned = border, .name = "target"});
    add_self_collision(sim, {.thickness = F(0.01), .range = cloth.range(), .cloths = {cloth}});
    const EdgeRuler<F> ruler(cloth, mesh.vertices);
    const StepParams<F> coarse{.dt = F(1) / F(60), .gravity = {0, F(9.81), 0}, .substeps = 1};
    int crossed = 0;
    for (int frame = 0; frame < 60; ++frame)
    {
        sim.step(coarse);
        crossed += edge_triangle_crossings(cloth, ruler, sim.state());
    }
    CHECK(crossed == 0);
    const F centre = sim.state().position(cloth.index(sheet_vertices / 2)).y();
    for (std::size_t v = sheet_vertices; v < mesh.vertices.size(); ++v)
        CHECK(sim.state().position(cloth.index(v)).y() < centre);
}

namespace
{
/// An 8 cm cotton patch resting on a held 40 cm sheet at the thickness, 8 mm, apart, with gravity
/// tilted by `slope` (radians) along +x: the sheet is an incline. Returns how far the patch's
/// middle has slid along x after `seconds`, at 60 Hz with 4 substeps and no damping.
double slide_on_incline(double slope, F friction, double seconds)
{
    constexpr F thickness = F(0.008);
    Simulation<F> sim;
    TriangleMesh<F> mesh = layered_sheets(1, 20, F(0.4), F(0), F(0));
    const auto sheet_vertices = mesh.vertices.size();
    TriangleMesh<F> patch = layered_sheets(1, 4, F(0.08), -thickness, F(0));
    for (auto& v : patch.vertices)
        mesh.vertices.emplace_back(v.x() - F(0.1), v.y(), v.z());
    for (const auto& t : patch.triangles)
        mesh.triangles.push_back({t[0] + std::int32_t(sheet_vertices), t[1] + std::int32_t(sheet_vertices),
                                  t[2] + std::int32_t(sheet_vertices)});
    const Cloth<F> cloth = add_mesh_cloth(sim,
                                          {.mesh = mesh,
                                           .material = ClothMaterial<F>::cotton(),
                                           .pinned = [sheet_vertices](std::size_t v) { return v < sheet_vertices; },
                                           .name = "incline"});
    add_self_collision(sim, {.thickness = thickness, .range = cloth.range(), .cloths = {cloth}, .friction = friction});
    const auto middle = cloth.index(sheet_vertices + (mesh.vertices.size() - sheet_vertices) / 2);
    const F start = sim.state().position(middle).x();
    const StepParams<F> frame{.dt = F(1) / F(60),
                              .damping = F(1),
                              .gravity = {F(9.81 * std::sin(slope)), F(9.81 * std::cos(slope)), 0},
                              .substeps = 4};
    for (int k = 0; k < int(std::lround(seconds * 60)); ++k)
        sim.step(frame);
    CHECK(sim.state().position(middle).y() < F(-0.9) * thickness); // still on the sheet, not through it
    return double(sim.state().position(middle).x() - start);
}
} // namespace

TEST_CASE("a material layer on an incline shallower than its friction angle stays put, creeping under 1 mm/s",
          "[self_collision][material][friction]")
{
    // Coulomb's static friction between layers: at tan(slope) = 0.25 against friction 0.5 the
    // patch's weight along the incline is half of what friction can hold. The law is smoothed below
    // kStaticSlip (1 mm/s), so the truth checked is that it slides less than 1 mm in a second, where
    // without friction it slides 1.2 m.
    const double slope = std::atan(0.25);
    const double slid = slide_on_incline(slope, F(0.5), 1.0);
    INFO("slid " << slid * 1e3 << " mm in 1 s");
    CHECK(std::abs(slid) < 1e-3);
}

TEST_CASE("a material layer on an incline steeper than its friction angle slides at g (sin - friction cos)",
          "[self_collision][material][friction]")
{
    // Kinetic friction between layers: at 45 degrees a patch against friction 0.5 accelerates at
    // g (sin 45 - 0.5 cos 45) = 3.47 m/s^2 and slides a t^2 / 2 = 10.8 cm in 0.25 s; without
    // friction at g sin 45 = 6.94 m/s^2, 7.8 cm in 0.15 s. Each within 10 %.
    const double slope = std::numbers::pi / 4;
    const double with = slide_on_incline(slope, F(0.5), 0.25);
    const double expected_with = 0.5 * 9.81 * (std::sin(slope) - 0.5 * std::cos(slope)) * 0.25 * 0.25;
    INFO("friction 0.5: slid " << with << " m, Coulomb's law " << expected_with << " m");
    CHECK(std::abs(with - expected_with) < 0.1 * expected_with);
    const double without = slide_on_incline(slope, F(0), 0.15);
    const double expected_without = 0.5 * 9.81 * std::sin(slope) * 0.15 * 0.15;
    INFO("no friction: slid " << without << " m, expected " << expected_without << " m");
    CHECK(std::abs(without - expected_without) < 0.1 * expected_without);
}

namespace
{
/// A cotton skirt of 4 586 vertices, 60 at its 22 cm waist, flaring to 60 cm over 60 cm, its
/// waist held on a body (a capsule mesh of radius 20 cm) and turned about the body's axis at up to
/// one turn a second for 0.75 s, then stopped dead. The waist is moved every substep, as a rigged
/// character's pins are. `self` adds self-collision at 5 mm.
struct SpunSkirt
{
    static constexpr F kBodyRadius = F(0.2);
    static constexpr int kSubsteps = 4;
    Simulation<F> sim;
    TriangleMesh<F> mesh = skirt_mesh<F>(kBodyRadius + F(0.02), F(0.6), F(0.6), 40, 60);
    Cloth<F> skirt;
    SelfCollision<F> self;
    std::vector<std::size_t> waist;
    double angle = 0.0;
    int frame = 0;

    explicit SpunSkirt(bool with_self)
    {
        for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
            if (mesh.vertices[v].y() < F(0.001))
                waist.push_back(v);
        skirt = add_mesh_cloth(sim, {.mesh = mesh,
                                     .material = ClothMaterial<F>::cotton(),
                                     .pinned = [this](std::size_t v) { return mesh.vertices[v].y() < F(0.001); },
                                     .name = "skirt"});
        if (with_self)
            self = add_self_collision(sim, {.thickness = F(0.005), .range = skirt.range(), .cloths = {skirt}});
        const auto body = capsule_mesh<F>(F(-0.3), F(0.9), kBodyRadius, 3);
        auto world = add_colliders(sim, {});
        world.add(TriangleMeshCollider<F>(
            {.vertices = body.vertices, .triangles = body.triangles, .thickness = F(0.005), .two_sided = false},
            {.friction = F(0.3)}));
    }

    void step_frame()
    {
        ++frame;
        const double t = frame / 60.0;
        const double omega = t <= 0.75 ? 2 * std::numbers::pi * std::min(1.0, t / 0.25) : 0.0;
        const StepParams<F> sub{
            .dt = F(1) / F(60 * kSubsteps), .damping = F(std::pow(0.99, 1.0 / kSubsteps)), .gravity = {0, F(9.81), 0}};
        for (int k = 0; k < kSubsteps; ++k)
        {
            angle += omega / (60.0 * kSubsteps);
            const double c = std::cos(angle), s = std::sin(angle);
            for (const auto v : waist)
            {
                const Vec3<F>& r = mesh.vertices[v];
                skirt.teleport(v, Vec3<F>(F(c * r.x() - s * r.z()), r.y(), F(s * r.x() + c * r.z())));
            }
            sim.step(sub);
        }
    }

    /// The nearest any vertex along the body's straight part comes to its axis, over its radius.
    double nearest_to_axis() const
    {
        double nearest = std::numeric_limits<double>::infinity();
        for (std::size_t i = skirt.base(); i < skirt.end(); ++i)
        {
            const Vec3<F> p = sim.state().position(i);
            if (p.y() > F(-0.3) && p.y() < F(0.9))
                nearest = std::min(nearest, double(std::hypot(p.x(), p.z())) / double(kBodyRadius));
        }
        return nearest;
    }
};
} // namespace

TEST_CASE("a skirt spun round a body and stopped folds over itself without ever crossing itself or entering the body",
          "[self_collision][material][skirt]")
{
    // The truth checked: a skirt whose waist is swung round at a turn a second and stopped dead
    // swirls on, its flare folding against itself; at no frame does an edge pass through a
    // triangle, and no vertex is nearer the body's axis than its radius. Without self-collision
    // the same skirt passes through itself within a quarter second, so the scene exposes a miss.
    SpunSkirt loose(false);
    const EdgeRuler<F> loose_ruler(loose.skirt, loose.mesh.vertices);
    int loose_crossed = 0;
    for (int k = 0; k < 15; ++k)
    {
        loose.step_frame();
        loose_crossed += edge_triangle_crossings(loose.skirt, loose_ruler, loose.sim.state());
    }
    CHECK(loose_crossed > 0);

    SpunSkirt scene(true);
    REQUIRE(scene.mesh.vertices.size() > 4500);
    const EdgeRuler<F> ruler(scene.skirt, scene.mesh.vertices);
    int crossed = 0, most_contacts = 0;
    double nearest = std::numeric_limits<double>::infinity();
    for (int k = 0; k < (kSanitized ? 20 : 90); ++k)
    {
        scene.step_frame();
        crossed += edge_triangle_crossings(scene.skirt, ruler, scene.sim.state());
        most_contacts = std::max(most_contacts, scene.self.contacts());
        nearest = std::min(nearest, scene.nearest_to_axis());
    }
    INFO("most pairs in contact " << most_contacts << ", nearest to the axis " << nearest << " x the radius");
    CHECK(crossed == 0);
    CHECK(nearest >= 1.0);
    if (!kSanitized)
        CHECK(most_contacts > 50); // the flare folded onto itself
}

TEST_CASE("material self-collision gives the same bits vector or scalar, on every executor, and after a restore",
          "[self_collision][material][snapshot]")
{
    constexpr int frames = kSanitized ? 8 : 30;
    const auto run = [](const auto& configure) {
        auto scene = std::make_unique<StackedSheets>();
        configure(scene->sim);
        for (int frame = 0; frame < frames; ++frame)
            scene->sim.step(kMaterialFrame);
        const int contacts = scene->self.contacts();
        return std::pair<Simulation<F>, int>(std::move(scene->sim), contacts);
    };
    CHECK(check_same_bits_on_every_path(run) > 0);

    StackedSheets straight, interrupted;
    for (int frame = 0; frame < frames; ++frame)
        straight.sim.step(kMaterialFrame);
    for (int frame = 0; frame < frames / 2; ++frame)
        interrupted.sim.step(kMaterialFrame);
    const auto half = snapshot(interrupted.sim);
    for (int frame = frames / 2; frame < frames; ++frame)
        interrupted.sim.step(kMaterialFrame);
    restore(interrupted.sim, half);
    for (int frame = frames / 2; frame < frames; ++frame)
        interrupted.sim.step(kMaterialFrame);
    CHECK(interrupted.sim.state() == straight.sim.state());
}

TEST_CASE("material self-collision refuses a cloth that already passes through itself, naming the edge and triangle",
          "[self_collision][material][errors]")
{
    // A sheet with a strip folded down through it: the strip's edges cross the sheet's triangles.
    Simulation<F> sim;
    TriangleMesh<F> mesh = layered_sheets(1, 6, F(0.12), F(0), F(0));
    const auto first = std::int32_t(mesh.vertices.size());
    mesh.vertices.emplace_back(F(0.005), F(-0.03), F(0.005));
    mesh.vertices.emplace_back(F(0.015), F(0.03), F(0.005));
    mesh.vertices.emplace_back(F(0.005), F(0.03), F(0.015));
    mesh.triangles.push_back({first, first + 1, first + 2});
    const Cloth<F> cloth = add_mesh_cloth(sim, {.mesh = mesh, .material = ClothMaterial<F>::cotton(), .name = "torn"});
    try
    {
        add_self_collision(sim, {.thickness = F(0.005), .range = cloth.range(), .cloths = {cloth}});
        FAIL("a crossed cloth was accepted");
    }
    catch (const std::invalid_argument& e)
    {
        const std::string what = e.what();
        INFO(what);
        CHECK(what.find("'torn' passes through itself") != std::string::npos);
        CHECK(what.find("edge of particles") != std::string::npos);
        CHECK(what.find(std::to_string(cloth.index(std::size_t(first)))) != std::string::npos);
    }
    CHECK_FALSE(sim.position_projections().contains("self_collision@[0, " + std::to_string(cloth.end()) + ")"));
    CHECK_FALSE(sim.position_projections().contains("self_collision"));
    sim.step(kMaterialFrame); // the cloth steps on as it was, no stage registered
    CHECK_FALSE(sim.diverged());
}

TEST_CASE("material self-collision refuses another cloth beside it, a wider range and a second stage on one cloth",
          "[self_collision][material][errors]")
{
    Simulation<F> sim;
    const Cloth<F> a = add_mesh_cloth(
        sim, {.mesh = layered_sheets(1, 4, F(0.1), F(0), F(0)), .material = ClothMaterial<F>::cotton(), .name = "a"});
    const Cloth<F> b = add_mesh_cloth(
        sim,
        {.mesh = layered_sheets(1, 4, F(0.1), F(-0.1), F(0)), .material = ClothMaterial<F>::cotton(), .name = "b"});
    CHECK_THROWS_WITH(add_self_collision(sim, {.thickness = F(0.01), .cloths = {a, b}}),
                      Catch::Matchers::Contains("must list that cloth alone"));
    CHECK_THROWS_WITH(add_self_collision(sim, {.thickness = F(0.01), .cloths = {a}}),
                      Catch::Matchers::Contains("over its own range [0, 25)"));
    auto first = add_self_collision(sim, {.thickness = F(0.01), .range = a.range(), .cloths = {a}});
    CHECK_THROWS_WITH(
        add_self_collision(sim, {.thickness = F(0.01), .range = a.range(), .cloths = {a}, .name = "again"}),
        Catch::Matchers::Contains("listed by another self-collision stage"));
    first.remove();
    CHECK_NOTHROW(add_self_collision(sim, {.thickness = F(0.01), .range = a.range(), .cloths = {a}, .name = "again"}));
}
