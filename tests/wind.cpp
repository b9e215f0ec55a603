// Wind: drag on free particles, pressure and skin friction on cloth triangles, a grid's and a mesh
// cloth's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
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
/// Total force the wind puts into the accumulators in one step, read before the solve.
template <class T>
Vec3<double> total_wind_force(Simulation<T>& sim)
{
    Vec3<double> total = Vec3<double>::Zero();
    sim.step({.iterations = 0}, [&](State3<T>& s, T) {
        for (std::size_t i = 0; i < s.size(); ++i)
            total += s.force(i).template cast<double>();
    });
    return total;
}
} // namespace

TEST_CASE("a sheet held at its top edge sails further in a stronger wind", "[wind]")
{
    std::vector<double> deflection;
    for (float speed : {0.0f, 2.0f, 4.0f, 8.0f})
    {
        Simulation<float> sim;
        auto sheet = add_cloth(sim, {.pinned = [](int, int r) { return r == 0; }});
        add_wind(sim, {.velocity = {0, 0, speed}, .cloths = {sheet}});
        double mean = 0;
        for (int frame = 0; frame < 600; ++frame)
        {
            sim.step(guide_step<float>(16));
            if (frame >= 300) // mean over the last 300 frames: it flutters
                for (float z : sim.state().z())
                    mean += double(z) / (300.0 * double(sim.size()));
        }
        REQUIRE_FALSE(sim.diverged());
        deflection.push_back(mean);
    }
    CHECK(deflection[0] == 0.0);
    // Measured: 0 / 0.81 / 1.92 / 2.22, the smallest step 0.30.
    for (std::size_t n = 1; n < deflection.size(); ++n)
        CHECK(deflection[n] > deflection[n - 1] + 0.2);
}

TEST_CASE("face-on, a sheet feels pressure x area x speed^2, shared by the triangles' corners, and edge-on only skin "
          "friction x area x speed^2",
          "[wind]")
{
    // The flat 20 x 10 sheet at spacing 0.5: 9.5 x 4.5, in 2 x 19 x 9 triangles of area 0.125.
    const double area = 9.5 * 4.5;
    const auto blow = [](const Vec3<float>& wind, float pressure, float skin, std::vector<Vec3<double>>* each) {
        Simulation<float> sim;
        auto sheet = add_cloth(sim, {.curvature_strength = 0.0f}); // flat in x-y
        add_wind(sim, {.velocity = wind, .cloths = {sheet}, .pressure = pressure, .skin_friction = skin});
        Vec3<double> total = Vec3<double>::Zero();
        sim.step({.iterations = 0}, [&](State3<float>& s, float) {
            for (std::size_t i = 0; i < s.size(); ++i)
            {
                total += s.force(i).cast<double>();
                if (each)
                    each->push_back(s.force(i).cast<double>());
            }
        });
        return total;
    };
    std::vector<Vec3<double>> each;
    const Vec3<double> face = blow({0, 0, 5}, 1.0f, 0.02f, &each);
    const Vec3<double> edge = blow({5, 0, 0}, 1.0f, 0.02f, nullptr);
    CHECK(face.z() == Approx(1.0 * area * 25.0).epsilon(1e-4)); // 1068.75
    CHECK(std::abs(face.x()) < 1e-3);
    CHECK(std::abs(face.y()) < 1e-3);
    CHECK(edge.x() == Approx(0.02 * area * 25.0).epsilon(1e-4)); // 21.375: skin friction alone
    CHECK(edge.norm() < 0.03 * face.norm());
    // Each triangle's force goes a third to each corner: an interior particle is a corner of six
    // triangles, (0, 0) of two, (19, 0) of one.
    REQUIRE(each.size() == 200);
    const double triangle = 0.125 * 25.0; // pressure 1 x area x speed^2
    CHECK(each[5 * 20 + 5].z() == Approx(6 * triangle / 3).epsilon(1e-4));
    CHECK(each[0].z() == Approx(2 * triangle / 3).epsilon(1e-4));
    CHECK(each[19].z() == Approx(1 * triangle / 3).epsilon(1e-4));
    CHECK(each[9 * 20].z() == Approx(1 * triangle / 3).epsilon(1e-4));      // (0, 9): one upper triangle
    CHECK(each[9 * 20 + 19].z() == Approx(2 * triangle / 3).epsilon(1e-4)); // (19, 9): both of the last cell
    // The coefficients are the options', not constants.
    CHECK(blow({0, 0, 5}, 2.0f, 0.02f, nullptr).z() == Approx(2.0 * area * 25.0).epsilon(1e-4));
    CHECK(blow({5, 0, 0}, 1.0f, 0.1f, nullptr).x() == Approx(0.1 * area * 25.0).epsilon(1e-4));
}

TEST_CASE("the parted halves of a cut sheet feel the wind on their own areas, not on the gap between them", "[wind]")
{
    // The flat 20 x 10 sheet at spacing 0.5 with columns 10 to 19 laid 2 further along x, then cut
    // between columns 9 and 10. Each half is 4.5 x 4.5; the nine cells across the cut span a gap
    // 2.5 wide, 11.25 more area, which a wind that ignored the cut would blow on face-on.
    Simulation<float> sim;
    auto sheet = add_cloth(sim, {.curvature_strength = 0.0f, .position = [](int c, int r) {
                                     return Vec3<float>(0.5f * float(c) + (c >= 10 ? 2.0f : 0.0f), 0.5f * float(r), 0);
                                 }});
    add_wind(sim, {.velocity = {0, 0, 5}, .cloths = {sheet}});
    REQUIRE(cut(sim, Vec3<float>(5.75f, -1, 0), Vec3<float>(5.75f, 6, 0)) == 10); // a spring a row
    std::vector<Vec3<double>> each;
    sim.step({.iterations = 0}, [&](State3<float>& s, float) {
        for (std::size_t i = 0; i < s.size(); ++i)
            each.push_back(s.force(i).cast<double>());
    });
    Vec3<double> total = Vec3<double>::Zero();
    for (const auto& f : each)
        total += f;
    CHECK(total.z() == Approx(2 * 4.5 * 4.5 * 25.0).epsilon(1e-4)); // 1012.5, not 1293.75
    // A particle on the cut keeps the three triangles on its own side: (9, 5) is a corner of the
    // lower triangle of cell (8, 5) and of both of cell (8, 4); (10, 5) of the two of cell (10, 5)
    // and the upper one of cell (10, 4).
    const double triangle = 0.125 * 25.0;
    CHECK(each[5 * 20 + 9].z() == Approx(triangle).epsilon(1e-4));
    CHECK(each[5 * 20 + 10].z() == Approx(triangle).epsilon(1e-4));
}

TEST_CASE("a cloth moving with the wind feels no wind", "[wind]")
{
    Simulation<float> sim;
    auto sheet = add_cloth(sim, {.curvature_strength = 0.0f, .position = [](int c, int r) {
                                     return Vec3<float>(0.5f * float(c), 0.1f * float(c % 3), 0.5f * float(r));
                                 }});
    const Vec3<float> wind(1.5f, -0.5f, 2.0f);
    add_wind(sim, {.velocity = wind, .cloths = {sheet}});
    const float dt = 1.0f / 60.0f;
    for (std::size_t i = 0; i < sim.size(); ++i)
        sim.state().set_velocity(i, wind * dt); // per-frame displacement of the wind's speed
    const Vec3<double> f = total_wind_force(sim);
    CHECK(f.norm() < 1e-3);
}

TEST_CASE("a free particle approaches the wind velocity as 1 - exp(-drag t / m)", "[wind]")
{
    Simulation<double> sim;
    sim.add_particle({0, 0, 0});
    const Vec3<double> wind(3, 0, -1);
    add_wind(sim, {.velocity = wind, .drag = 0.5, .range = {}});
    for (int frame = 0; frame < 120; ++frame)
        sim.step({.damping = 1.0});
    // After 2 s, one time constant: measured 1.9010 against the continuous 3 (1 - e^-1) = 1.8964;
    // drag 1 would give 2.59, drag 0.25 1.18.
    const Vec3<double> at_2s = sim.state().velocity(0) * 60.0;
    CHECK((at_2s - wind * (1.0 - std::exp(-1.0))).norm() < 0.01 * wind.norm());
    for (int frame = 120; frame < 1200; ++frame)
        sim.step({.damping = 1.0});
    const Vec3<double> v = sim.state().velocity(0) * 60.0;
    CHECK((v - wind).norm() < 1e-3 * wind.norm()); // measured 4.4e-5 after 20 s
}

TEST_CASE("gusts are called with the position and the wind's own clock", "[wind]")
{
    Simulation<float> sim;
    sim.add_particle({1, 2, 3});
    std::vector<float> times;
    auto wind = add_wind(sim, {.gust =
                                   [&](const Vec3<float>& p, float t) {
                                       CHECK(p == Vec3<float>(1, 2, 3));
                                       times.push_back(t);
                                       return Vec3<float>::Zero();
                                   },
                               .range = {}});
    for (int frame = 0; frame < 3; ++frame)
        sim.step({.dt = 0.5f});
    CHECK(times == std::vector<float>{0.0f, 0.5f, 1.0f});
    CHECK(wind.time() == 1.5f);
}

TEST_CASE("a gust's value replaces the steady velocity", "[wind]")
{
    Simulation<float> sim;
    sim.add_particle({1, 2, 3});
    add_wind(
        sim,
        {.velocity = {1, 0, 0}, .gust = [](const Vec3<float>&, float) { return Vec3<float>(0, 0, 3); }, .range = {}});
    // A particle at rest feels drag 0.5 x the gust, and nothing of the steady (1, 0, 0).
    CHECK(total_wind_force(sim) == Vec3<double>(0, 0, 1.5));
}

namespace
{
/// A crumpled, moving 23 x 11 cloth that starts at particle 5, so its rows straddle lane groups.
Cloth<float> crumpled_moving_sheet(Simulation<float>& sim)
{
    for (int k = 0; k < 5; ++k)
        sim.add_particle({float(k), -3, 0});
    auto sheet = add_cloth(sim, {.width = 23, .height = 11, .curvature_strength = 0.0f});
    jitter(sim, 0.2f);
    for (std::size_t i = 0; i < sim.size(); ++i) // and a different motion for every particle
        sim.state().set_velocity(i, Vec3<float>(0.01f * float(i % 7), -0.02f * float(i % 5), 0.03f * float(i % 3)));
    return sheet;
}

/// The wind's accumulator contents after one blow on the crumpled sheet, vectorised or not, steady
/// or gusty.
std::vector<Vec3<double>> blown(bool vectorized, bool gusty)
{
    Simulation<float> sim;
    const auto sheet = crumpled_moving_sheet(sim);
    WindOptions<float> options{.velocity = {1, 2, 5}, .cloths = {sheet}};
    if (gusty)
        options.gust = [](const Vec3<float>& p, float) { return Vec3<float>(3 * p.y(), 1, 5 + p.x()); };
    add_wind(sim, options);
    sim.set_vectorized(vectorized);
    std::vector<Vec3<double>> forces;
    sim.step({.iterations = 0}, [&](State3<float>& s, float) {
        for (std::size_t i = 0; i < s.size(); ++i)
            forces.push_back(s.force(i).cast<double>());
    });
    return forces;
}

/// The same forces the plain way: each triangle's force computed in double and scattered, a third
/// to each corner. What the gather must add up to.
std::vector<Vec3<double>> blown_by_scatter(bool gusty)
{
    Simulation<float> sim;
    crumpled_moving_sheet(sim);
    const auto& st = sim.state();
    std::vector<Vec3<double>> forces(sim.size(), Vec3<double>::Zero());
    const double dt = 1.0 / 60.0;
    const auto triangle = [&](std::size_t a, std::size_t b, std::size_t c) {
        const Vec3<double> xa = st.position(a).cast<double>(), xb = st.position(b).cast<double>(),
                           xc = st.position(c).cast<double>();
        const Vec3<double> cross = (xb - xa).cross(xc - xa);
        const Vec3<double> n = cross.normalized();
        const Vec3<double> moving = (st.velocity(a) + st.velocity(b) + st.velocity(c)).cast<double>() / (3.0 * dt);
        const Vec3<double> centroid = (xa + xb + xc) / 3.0;
        const Vec3<double> air = gusty ? Vec3<double>(3 * centroid.y(), 1, 5 + centroid.x()) : Vec3<double>(1, 2, 5);
        const Vec3<double> u = air - moving;
        const double un = u.dot(n);
        const Vec3<double> share = 0.5 * cross.norm() * u.norm() / 3.0 * (un * n + 0.02 * (u - un * n));
        for (std::size_t i : {a, b, c})
            forces[i] += share;
    };
    for (std::size_t r = 0; r + 1 < 11; ++r)
        for (std::size_t c = 0; c + 1 < 23; ++c)
        {
            const std::size_t p00 = 5 + r * 23 + c, p11 = p00 + 24;
            triangle(p00, p00 + 1, p11);
            triangle(p00, p11, p00 + 23);
        }
    return forces;
}
} // namespace

TEST_CASE("each particle gathers exactly its six triangles' shares, vectorised or not, to the same bits", "[wind]")
{
    // The gather reads each particle's six triangles at fixed offsets, relying on zeros outside the
    // cells for the border. A wrong offset or a missing zero would give some particle another
    // triangle's force, off by a whole share; rounding differs from the double scatter by 1e-6.
    REQUIRE(simd::kLanes<float> > 1);
    for (bool gusty : {false, true})
    {
        INFO("gusty " << gusty);
        const auto vector = blown(true, gusty), scalar = blown(false, gusty), reference = blown_by_scatter(gusty);
        REQUIRE(vector.size() == reference.size());
        CHECK(vector == scalar); // bitwise: both hold floats widened to double
        double worst = 0, largest = 0;
        for (std::size_t i = 0; i < reference.size(); ++i)
        {
            worst = std::max(worst, (vector[i] - reference[i]).norm());
            largest = std::max(largest, reference[i].norm());
        }
        CHECK(largest > 1.0);
        CHECK(worst < 1e-5 * largest);
        for (std::size_t i = 0; i < 5; ++i) // the particles before the cloth feel nothing
            CHECK(vector[i] == Vec3<double>::Zero());
    }
}

TEST_CASE("bad wind input throws and changes nothing", "[wind][errors]")
{
    Simulation<float> sim;
    auto sheet = add_cloth(sim, {});
    const auto before = sim.bulk_forces().names();
    CHECK_THROWS_WITH(add_wind(sim, {.velocity = {NAN, 0, 0}}), ContainsSubstring("NaN"));
    CHECK_THROWS_WITH(add_wind(sim, {.drag = -1.0f}), ContainsSubstring("-1"));
    CHECK_THROWS_WITH(add_wind(sim, {.pressure = -2.0f}), ContainsSubstring("pressure") && ContainsSubstring("-2"));
    CHECK_THROWS_WITH(add_wind(sim, {.skin_friction = NAN}), ContainsSubstring("skin_friction"));
    CHECK_THROWS_WITH(add_wind(sim, {.range = {.begin = 5, .end = 2}}), ContainsSubstring("[5, 2)"));
    Simulation<float> other;
    CHECK_THROWS_AS(add_wind(other, {.cloths = {sheet}}), std::invalid_argument);
    CHECK_THROWS_WITH(add_wind(other, {.cloths = {sheet}}), ContainsSubstring("another simulation"));
    CHECK(other.bulk_forces().empty());
    CHECK(sim.bulk_forces().names() == before);
    auto wind = add_wind(sim, {.velocity = {1, 0, 0}});
    CHECK_THROWS_AS(wind.set_velocity({0, NAN, 0}), std::invalid_argument);
    CHECK(wind.options().velocity == Vec3<float>(1, 0, 0));
}

namespace
{
/// The wind's accumulator contents by vertex after one blow on the cloth `make` adds: every vertex
/// moved and set moving by the same draws whatever the cloth's numbering, so two cloths of the same
/// triangles start in the same shape.
template <class Make>
std::vector<Vec3<double>> blown_by_vertex(Make&& make, bool gusty)
{
    Simulation<float> sim;
    const Cloth<float> cloth = make(sim);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::size_t v = 0; v < cloth.count(); ++v)
    {
        sim.state().set_position(cloth.index(v), cloth.position(v) + 0.08f * Vec3<float>(u(rng), u(rng), u(rng)));
        sim.state().set_velocity(cloth.index(v), 0.05f * Vec3<float>(u(rng), u(rng), u(rng)));
    }
    WindOptions<float> options{.velocity = {1, 2, 5}, .cloths = {cloth}};
    if (gusty)
        options.gust = [](const Vec3<float>& p, float) { return Vec3<float>(3 * p.y(), 1, 5 + p.x()); };
    add_wind(sim, options);
    std::vector<Vec3<double>> forces(cloth.count());
    sim.step({.iterations = 0}, [&](State3<float>& s, float) {
        for (std::size_t v = 0; v < cloth.count(); ++v)
            forces[v] = s.force(cloth.index(v)).cast<double>();
    });
    return forces;
}

/// The flag of the mesh tests: an irregular sheet of cells x cells squares pinned along its top edge,
/// of the grid cloth's default material (mass 1 and stiffness 60 per particle at spacing 0.5: 4 per
/// unit area, and 15 times that).
Cloth<float> add_flag(Simulation<float>& sim, int cells = 10, float side = 5.0f)
{
    return add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(cells, side, true),
                                .stiffness = 60,
                                .mass_per_area = 4,
                                .pinned = [cells](std::size_t v) { return v <= std::size_t(cells); }});
}
} // namespace

TEST_CASE("a mesh cloth of a grid's triangles feels the grid's wind on every particle, steady or gusting",
          "[wind][mesh_cloth]")
{
    // The same 2 x 2 square as a 9 x 9 grid and as sheet_mesh's regular split, whose triangles are
    // the grid's (each cell cut along its top-left to bottom-right diagonal, corners in the same
    // order), numbered along a Z-order curve. The wind is a function of the triangles: each
    // triangle's share has the same bits on both, and only the order a particle adds its up to six
    // shares in differs, a few float roundings.
    const auto grid = [](Simulation<float>& sim) {
        return add_cloth(sim, {.width = 9, .height = 9, .spacing = 0.25f, .curvature_strength = 0.0f});
    };
    const auto mesh = [](Simulation<float>& sim) {
        auto cloth = add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(8, 2.0f, false), .bend_stiffness = 3.0f});
        REQUIRE(cloth.triangles() == detail::grid_triangles(9, 9));
        return cloth;
    };
    for (bool gusty : {false, true})
    {
        INFO("gusty " << gusty);
        const auto on_grid = blown_by_vertex(grid, gusty), on_mesh = blown_by_vertex(mesh, gusty);
        REQUIRE(on_grid.size() == on_mesh.size());
        double worst = 0, largest = 0;
        for (std::size_t v = 0; v < on_grid.size(); ++v)
        {
            worst = std::max(worst, (on_mesh[v] - on_grid[v]).norm());
            largest = std::max(largest, on_grid[v].norm());
        }
        CHECK(largest > 0.1);
        CHECK(worst < 1e-6 * largest);
    }
}

TEST_CASE("an irregular mesh flag held along its top edge sails further in a stronger wind", "[wind][mesh_cloth]")
{
    std::vector<double> deflection;
    for (float speed : {0.0f, 1.0f, 2.0f, 4.0f})
    {
        Simulation<float> sim;
        auto flag = add_flag(sim);
        add_wind(sim, {.velocity = {0, 0, speed}, .cloths = {flag}});
        // The grid test's step in two substeps: the jittered mesh's shortest edges and lightest
        // vertices need them (one step's stability ratio is near 1).
        StepParams<float> params = guide_step<float>(16);
        params.substeps = 2;
        REQUIRE(stability_ratio(sim, params) < 0.8);
        double mean = 0;
        for (int frame = 0; frame < 600; ++frame)
        {
            sim.step(params);
            if (frame >= 300) // mean over the last 300 frames: it flutters
                for (float z : sim.state().z())
                    mean += double(z) / (300.0 * double(sim.size()));
        }
        REQUIRE_FALSE(sim.diverged());
        deflection.push_back(mean);
    }
    CHECK(deflection[0] == 0.0); // in its own plane it meets only the air it moves through, edge-on
    for (std::size_t n = 1; n < deflection.size(); ++n)
        CHECK(deflection[n] > deflection[n - 1] + 0.2);
}

TEST_CASE("the wind on an irregular mesh cloth has the same bits vectorised or not and on every executor and grain",
          "[wind][mesh_cloth]")
{
    for (bool gusty : {false, true})
    {
        INFO("gusty " << gusty);
        const auto run = [&](auto&& configure) {
            Simulation<float> sim;
            auto flag = add_flag(sim, 12, 3.0f);
            WindOptions<float> options{.velocity = {0.5f, 0, 4}, .cloths = {flag}};
            if (gusty)
                options.gust = [](const Vec3<float>& p, float t) {
                    return Vec3<float>(std::sin(2 * p.y() + 3 * t), 0, 4 + 2 * std::cos(p.x() - t));
                };
            add_wind(sim, options);
            configure(sim);
            for (int frame = 0; frame < 60; ++frame)
                sim.step({.damping = 0.98f, .gravity = {0, 9.8f, 0}, .iterations = 4, .substeps = 4});
            double mean = 0;
            for (float z : sim.state().z())
                mean += double(z) / double(sim.size());
            return std::pair{std::move(sim), int(std::lround(1000 * mean))};
        };
        CHECK(check_same_bits_on_every_path(run, 64) > 100); // it sailed (mean z in thousandths)
    }
}

TEST_CASE("a triangle with a cut edge feels no wind: a square of two triangles cut along one side feels the other's "
          "wind alone",
          "[wind][mesh_cloth]")
{
    // The unit square as {0, 1, 2} and {0, 2, 3}; a stroke across the top side 2-3 cuts that edge
    // alone, and {0, 2, 3} feels nothing: vertex 3 no force at all, and 0, 1 and 2 the bits of a mesh
    // of {0, 1, 2} alone.
    TriangleMesh<float> square;
    square.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    square.triangles = {{0, 1, 2}, {0, 2, 3}};
    const auto blow = [](const TriangleMesh<float>& mesh, bool cut_top) {
        Simulation<float> sim;
        auto cloth = add_mesh_cloth(sim, {.mesh = mesh, .bend_stiffness = 3.0f, .reorder = false});
        add_wind(sim, {.velocity = {1, -2, 5}, .cloths = {cloth}});
        if (cut_top)
            REQUIRE(cut(sim, Vec3<float>(0.5f, 0.9f, 0), Vec3<float>(0.5f, 1.5f, 0)) == 1);
        std::vector<Vec3<float>> forces;
        sim.step({.iterations = 0}, [&](State3<float>& s, float) {
            for (std::size_t i = 0; i < s.size(); ++i)
                forces.push_back(s.force(i));
        });
        return forces;
    };
    TriangleMesh<float> lower = square;
    lower.vertices.pop_back();
    lower.triangles = {{0, 1, 2}};
    const auto whole = blow(square, false), cut_top = blow(square, true), alone = blow(lower, false);
    REQUIRE(whole.size() == 4);
    REQUIRE(alone.size() == 3);
    // Uncut, {0, 2, 3} gives vertex 3 its share: pressure 1 x area 1/2 x |u| u_z over three
    // corners (skin friction acts across the normal, not along it).
    CHECK(double(whole[3].z()) == Approx(0.5 * std::sqrt(30.0) * 5.0 / 3.0).epsilon(1e-5));
    CHECK(whole[0] != alone[0]);
    CHECK(cut_top[3] == Vec3<float>::Zero());
    for (std::size_t v = 0; v < 3; ++v)
        CHECK(cut_top[v] == alone[v]);
}

TEST_CASE("a mesh cloth in a gusting wind, cut, snapshotted and restored steps on to the same bits",
          "[wind][mesh_cloth][snapshot]")
{
    // The copy steps first on its uncut cloth, so the wind's tables and intact flags it holds are
    // stale when the snapshot comes: the restore must bring the cut back into what the wind sees.
    const auto make = [] {
        Simulation<float> sim;
        auto flag = add_flag(sim, 10, 3.0f);
        add_wind(sim, {.gust = [](const Vec3<float>& p, float t) { return Vec3<float>(0, 0, 3 + std::sin(p.x() + t)); },
                       .cloths = {flag}});
        return sim;
    };
    const StepParams<float> params{.damping = 0.98f, .gravity = {0, 9.8f, 0}, .iterations = 4, .substeps = 4};
    auto straight = make(), resumed = make();
    for (int frame = 0; frame < 20; ++frame)
    {
        straight.step(params);
        resumed.step(params);
    }
    REQUIRE(cut(straight, Vec3<float>(1.5f, 1.0f, -5), Vec3<float>(1.5f, 4.0f, 5), ViewPlane::xy) > 0);
    for (int frame = 0; frame < 20; ++frame)
        straight.step(params);
    const auto snap = snapshot(straight);
    for (int frame = 0; frame < 40; ++frame)
        straight.step(params);
    restore(resumed, snap);
    for (int frame = 0; frame < 40; ++frame)
        resumed.step(params);
    CHECK(same_positions(resumed, straight));
}
