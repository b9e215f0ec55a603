// Triangle-mesh colliders: the tree against a brute-force scan, the closest point against an
// independent distance, the swept test against fast particles and a moving mesh, the physics the
// shared contact response promises, determinism, bad input, and a messy mesh sanitized.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "catch.hpp"
#include "collider_twins.hpp"
#include "meshes.hpp"
#include "same_bits.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
template <class T>
TriangleMeshCollider<T> collider_of(const TriangleMesh<T>& mesh, T thickness, bool two_sided = true,
                                    const ContactMaterial<T>& material = {},
                                    ContactDetection detection = ContactDetection::per_call)
{
    return TriangleMeshCollider<T>({.vertices = mesh.vertices,
                                    .triangles = mesh.triangles,
                                    .thickness = thickness,
                                    .two_sided = two_sided,
                                    .detection = detection},
                                   material);
}

const char* name_of(ContactDetection detection)
{
    return detection == ContactDetection::per_call ? "per_call" : "per_substep";
}

/// Distance from p to triangle (a, b, c), in double and by a different route from the
/// collider's: the plane's foot if it lies inside, else the nearest of the three edges.
double distance_to_triangle(const Vec3<double>& p, const Vec3<double>& a, const Vec3<double>& b, const Vec3<double>& c)
{
    const auto to_segment = [&](const Vec3<double>& s, const Vec3<double>& e) {
        const double t = std::clamp((p - s).dot(e - s) / (e - s).squaredNorm(), 0.0, 1.0);
        return (p - (s + t * (e - s))).norm();
    };
    const Vec3<double> n = (b - a).cross(c - a).normalized();
    const Vec3<double> foot = p - n * (p - a).dot(n);
    const bool inside = (b - a).cross(foot - a).dot(n) >= 0 && (c - b).cross(foot - b).dot(n) >= 0 &&
                        (a - c).cross(foot - c).dot(n) >= 0;
    if (inside)
        return std::abs((p - a).dot(n));
    return std::min({to_segment(a, b), to_segment(b, c), to_segment(c, a)});
}

template <class T>
double distance_to_mesh(const Vec3<T>& p, const TriangleMesh<T>& mesh)
{
    double best = std::numeric_limits<double>::max();
    for (const auto& t : mesh.triangles)
        best = std::min(best, distance_to_triangle(p.template cast<double>(),
                                                   mesh.vertices[std::size_t(t[0])].template cast<double>(),
                                                   mesh.vertices[std::size_t(t[1])].template cast<double>(),
                                                   mesh.vertices[std::size_t(t[2])].template cast<double>()));
    return best;
}

template <class T>
std::vector<Vec3<T>> moved(const std::vector<Vec3<T>>& vertices, const Vec3<T>& by)
{
    std::vector<Vec3<T>> out = vertices;
    for (auto& v : out)
        v += by;
    return out;
}
} // namespace

TEST_CASE("the triangle tree finds exactly the triangles whose bounds a brute-force scan finds, in order", "[mesh]")
{
    const auto mesh = torus<float>({0, 0, 0}, 2.0f, 0.6f, 40, 16);
    const std::vector<detail::Bounds<float>> boxes = triangle_bounds(mesh);
    detail::TriangleTree<float> tree;
    const auto order = tree.build(boxes);
    std::vector<detail::Bounds<float>> sorted;
    for (const auto k : order)
        sorted.push_back(boxes[k]);
    tree.refit(sorted);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> at(-3, 3), size(0, 1.5f);
    for (int q = 0; q < 200; ++q)
    {
        detail::Bounds<float> box;
        box.add(at(rng), at(rng), at(rng));
        box = box.grown(size(rng));
        std::vector<std::uint32_t> found, expected;
        tree.query(box, sorted, found);
        for (std::uint32_t k = 0; k < sorted.size(); ++k)
            if (sorted[k].overlaps(box))
                expected.push_back(k);
        REQUIRE(found == expected);
    }
}

TEMPLATE_TEST_CASE("the mesh collider's vector path equals its scalar twin, still and moving", "[mesh]", float, double)
{
    using T = TestType;
    REQUIRE(simd::kLanes<T> > 1);
    const ContactMaterial<T> m{
        .friction = T(0.4), .tangential_damping = T(0.1), .restitution = T(0.5), .margin = T(0.05)};
    const auto ball = icosphere<T>({T(0.5), 0, 0}, T(1.5), 2);
    CHECK(check_collider_twins<T>(collider_of(ball, T(0.1), true, m)) > 20);
    CHECK(check_collider_twins<T>(collider_of(ball, T(0.1), false, m)) > 20);
    auto moving = collider_of(ball, T(0.1), true, m);
    moving.set_vertices(moved(ball.vertices, Vec3<T>(T(0.3), T(-0.2), T(0.1))));
    CHECK(check_collider_twins<T>(moving) > 20);
}

TEST_CASE("a particle within reach of a mesh ends exactly at the reach from it: faces, edges and vertices", "[mesh]")
{
    // A coarse icosphere has large flat faces, sharp edges and corners; particles scattered just
    // outside it, at rest (so no sweep), are pushed to thickness + margin from the nearest point
    // of the surface, measured here by a brute-force distance in double.
    const auto ball = icosphere<double>({0, 0, 0}, 1.0, 0);
    auto mesh = collider_of(ball, 0.15, true, {.friction = 0, .margin = 0.05});
    Simulation<double> sim;
    std::mt19937 rng(11);
    std::normal_distribution<double> dir(0, 1);
    std::uniform_real_distribution<double> gap(0.0, 0.25);
    for (int i = 0; i < 2000; ++i)
    {
        const Vec3<double> u = Vec3<double>(dir(rng), dir(rng), dir(rng)).normalized();
        // Out from the surface along u: first to the sphere, then back to the mesh, then a gap.
        Vec3<double> p = u * 1.2;
        p = u * (1.2 - distance_to_mesh(p, ball) + gap(rng));
        sim.add_particle(p);
    }
    std::vector<double> before;
    for (std::size_t i = 0; i < sim.size(); ++i)
        before.push_back(distance_to_mesh(sim.state().position(i), ball));
    const int contacts = mesh.project(sim.state());
    int expected = 0;
    double worst = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
    {
        const double after = distance_to_mesh(sim.state().position(i), ball);
        if (before[i] < 0.2)
        {
            ++expected;
            worst = std::max(worst, std::abs(after - 0.2));
        }
        else
            CHECK(after == before[i]); // out of reach: untouched
    }
    CHECK(contacts == expected);
    CHECK(expected > 500);
    CHECK(worst < 1e-9);
}

namespace
{
/// One particle released on a tilted square mesh (two triangles, 2000 units across) under gravity
/// 9.81 along +y; returns how far it travelled in `frames` steps at 60 Hz.
double slide_on_mesh_incline(double degrees, double friction, int frames)
{
    const double theta = degrees * std::numbers::pi / 180.0;
    // The incline's frame: n out of its legal side (up, -y, tilted), t downhill.
    const Vec3<double> n(std::sin(theta), -std::cos(theta), 0), t(std::cos(theta), std::sin(theta), 0);
    const Vec3<double> w(0, 0, 1);
    TriangleMesh<double> plane;
    plane.vertices = {-1000 * t - 1000 * w, 1000 * t - 1000 * w, 1000 * t + 1000 * w, -1000 * t + 1000 * w};
    plane.triangles = {{0, 1, 2}, {0, 2, 3}};
    Simulation<double> sim;
    sim.add_particle(n * 0.05); // resting at the thickness
    add_colliders(sim, {}, collider_of(plane, 0.05, true, {.friction = friction}));
    const Vec3<double> start = sim.state().position(0);
    for (int frame = 0; frame < frames; ++frame)
        sim.step({.damping = 1.0, .gravity = {0, 9.81, 0}, .iterations = 0});
    return (sim.state().position(0) - start).norm();
}
} // namespace

TEST_CASE("a particle on a tilted mesh stays exactly put while tan(theta) <= friction, else slides at g (sin - mu cos)",
          "[mesh][friction]")
{
    // The mesh answers contacts with the analytic shapes' response: static friction holds without
    // creep, kinetic friction slows the slide by mu g cos(theta).
    const int frames = 600; // 10 s
    const double held = slide_on_mesh_incline(20, 0.5, frames);
    const double at_limit = slide_on_mesh_incline(26, 0.5, frames); // tan 26 = 0.488
    const double slid = slide_on_mesh_incline(35, 0.5, 60);         // 1 s
    const double theta = 35 * std::numbers::pi / 180.0;
    const double expected = 0.5 * 9.81 * (std::sin(theta) - 0.5 * std::cos(theta));
    CHECK(held < 1e-12);
    CHECK(at_limit < 1e-12);
    CHECK(slid == Approx(expected).epsilon(0.03));
}

TEST_CASE("a sheet dropped on an icosphere mesh rests where it rests on the analytic sphere", "[mesh]")
{
    // The guide's flat 20 x 10 sheet dropped onto a ball of radius 2.4 below its centre, held by
    // friction 0.6: once as a SphereCollider with margin 0.1, once as a 3-times subdivided
    // icosphere (1280 triangles, vertices on the sphere) with thickness 0.1. The facets sit
    // inside the sphere by at most 0.4 % of its radius, so the two must agree to a few percent.
    const float radius = 2.4f;
    const Vec3<float> centre(4.75f, 2.9f, 2.25f);
    const auto settle = [&](auto collider) {
        auto sim = flat_sheet<float>();
        auto world = add_colliders(sim, {}, std::move(collider));
        for (int frame = 0; frame < 600; ++frame)
            sim.step(guide_step<float>(16));
        double closest = std::numeric_limits<double>::max();
        for (std::size_t i = 0; i < sim.size(); ++i)
            closest = std::min(closest, double((sim.state().position(i) - centre).norm()));
        return std::tuple{centroid(sim), closest, world.contacts()};
    };
    const auto [sphere_centroid, sphere_closest, sphere_contacts] = settle(
        SphereCollider<float>({.center = centre, .radius = radius}, {.friction = 0.6f, .margin = 0.1f}));
    const auto ball = icosphere<float>(centre, radius, 3);
    REQUIRE(ball.triangles.size() == 1280);
    const auto [mesh_centroid, mesh_closest,
                mesh_contacts] = settle(collider_of(ball, 0.1f, false, {.friction = 0.6f}));
    const double apart = (mesh_centroid - sphere_centroid).norm();
    CHECK(apart < 0.03 * radius);
    CHECK(mesh_closest > radius * (1 - 0.004) + 0.1 - 0.01); // on the facets, not through them
    CHECK(mesh_contacts >= sphere_contacts / 2);
    CHECK(mesh_contacts >= 50);
}

TEST_CASE("particles fired at a thin two-triangle wall at up to 600 units a second never cross it", "[mesh][swept]")
{
    // The wall is the square [-1, 1]^2 in the plane x = 0, split along the diagonal y = z. Each
    // particle is aimed at a point of the wall and set off so that it would cross the plane during
    // its first or third step: head-on, grazing at 80 degrees from the normal, and on the seam
    // between the two triangles; from both sides; at 6, 60 and 600 units a second (a step of 10
    // units at 600: a thousand times the thickness, which a closest-point test alone never sees).
    const float dt = 1.0f / 60.0f;
    const auto detection = GENERATE(ContactDetection::per_call, ContactDetection::per_substep);
    const int substeps = GENERATE(1, 6);
    const auto fire = [&](bool with_wall) {
        Simulation<float> sim;
        std::vector<float> side;
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> inside(-0.95f, 0.95f), phase(0.05f, 0.95f);
        for (const float speed : {6.0f, 60.0f, 600.0f})
            for (const float sign : {1.0f, -1.0f})
                for (int k = 0; k < 60; ++k)
                {
                    Vec3<float> aim(0, inside(rng), inside(rng));
                    if (k % 3 == 2)
                        aim.z() = aim.y(); // on the seam
                    // Head-on, or grazing: 80 degrees from the normal, in a random direction.
                    const float tilt = k % 2 == 0 ? 0.0f : 80.0f * std::numbers::pi_v<float> / 180.0f;
                    const float around = inside(rng) * std::numbers::pi_v<float>;
                    const Vec3<float> direction(sign * std::cos(tilt), std::sin(tilt) * std::cos(around),
                                                std::sin(tilt) * std::sin(around));
                    const Vec3<float> step = direction * speed * dt;
                    const float steps_before = (k % 4 < 2 ? 0.0f : 2.0f) + phase(rng);
                    const auto i = sim.add_particle(aim - step * steps_before);
                    sim.state().set_velocity(std::size_t(i), step);
                    side.push_back(-sign);
                }
        ColliderSet<float> world;
        if (with_wall)
            world = add_colliders(sim, {},
                                  collider_of(square_wall<float>(1.0f), 0.01f, true, {.friction = 0}, detection));
        int crossed = 0;
        for (int frame = 0; frame < 5; ++frame)
        {
            sim.step({.dt = dt, .damping = 1.0f, .iterations = 0, .substeps = substeps});
            for (std::size_t i = 0; i < sim.size(); ++i)
            {
                const Vec3<float> p = sim.state().position(i);
                // Crossed: on the far side of the plane, having passed inside the square. A
                // particle that bounced or slid off stays on its own side.
                if (p.x() * side[i] < 0)
                    ++crossed;
            }
        }
        return std::tuple{crossed, with_wall ? world.contacts() : 0, sim.size()};
    };
    const auto [crossed, contacts, count] = fire(true);
    const auto [crossed_freely, unused, same_count] = fire(false);
    CHECK(crossed == 0);
    CHECK(crossed_freely >= int(count) * 2); // without it every particle is through within 3 frames
    (void)unused;
    (void)same_count;
    (void)contacts;
}

TEST_CASE("an animated box mesh sweeping across a floor pushes a sheet ahead of it without passing through",
          "[mesh][swept]")
{
    // A closed, one-sided box 1 wide and 2 tall moves along +x at 3 units a second (0.05 a
    // frame, five times its thickness) across a 21 x 21 sheet lying on the floor, for 60 frames.
    // set_vertices each frame; the collider sweeps each frame's motion. The same scene with the
    // box rebuilt at each frame's place instead (no motion to sweep) lets particles inside.
    const auto run = [](bool animate) {
        Simulation<float> sim;
        auto sheet = add_cloth(sim, {.width = 21, .height = 21, .spacing = 0.1f, .position = [](int c, int r) {
                                         return Vec3<float>(0.1f * c, 0.02f, 0.1f * r);
                                     }});
        (void)sheet;
        auto world = add_colliders(sim, {},
                                   PlaneCollider<float>({.normal = {0, 1, 0}, .offset = 0}, {.margin = 0.01f}));
        const auto box_at = [](int frame) {
            const float x = -1.2f + 0.05f * float(frame);
            return box_mesh<float>({x, -0.5f, -0.5f}, {x + 1.0f, 1.5f, 2.5f});
        };
        auto* mesh = &world.add(collider_of(box_at(0), 0.01f, false, {.friction = 0.3f}));
        int inside = 0;
        for (int frame = 1; frame <= 60; ++frame)
        {
            if (animate)
                mesh->set_vertices(box_at(frame).vertices);
            else
            {
                world.remove(*mesh);
                mesh = &world.add(collider_of(box_at(frame), 0.01f, false, {.friction = 0.3f}));
            }
            sim.step({.gravity = {0, -9.81f, 0}, .iterations = 16, .substeps = 2});
            const float lo = -1.2f + 0.05f * float(frame);
            for (std::size_t i = 0; i < sim.size(); ++i)
            {
                const Vec3<float> p = sim.state().position(i);
                if (p.x() > lo + 1e-3f && p.x() < lo + 1.0f - 1e-3f && p.y() < 1.5f && p.z() > -0.5f && p.z() < 2.5f)
                    ++inside;
            }
        }
        float rearmost = std::numeric_limits<float>::max();
        for (std::size_t i = 0; i < sim.size(); ++i)
            rearmost = std::min(rearmost, sim.state().position(i).x());
        return std::tuple{inside, rearmost};
    };
    const auto [inside, rearmost] = run(true);
    const auto [inside_rebuilt, rearmost_rebuilt] = run(false);
    const float front = -1.2f + 0.05f * 60 + 1.0f; // the box's leading face at the end: x = 2.8
    CHECK(inside == 0);
    CHECK(rearmost > front); // every particle pushed ahead of the box, none left behind it
    CHECK(inside_rebuilt > 0);
}

TEST_CASE("a mesh collider gives the same bits on every path: vector, scalar, threads and grains", "[mesh][threads]")
{
    // The guide's sheet dropped onto a torus mesh that turns and rises a little every frame.
    const auto ring = torus<float>({4.75f, 1.2f, 2.25f}, 2.0f, 0.7f, 48, 16); // its top 0.5 below the sheet
    const auto detection = GENERATE(ContactDetection::per_call, ContactDetection::per_substep);
    INFO(name_of(detection));
    const int contacts = check_same_bits_on_every_path(
        [&](auto configure) {
            auto sim = flat_sheet<float>();
            configure(sim);
            auto world = add_colliders(sim, {}, collider_of(ring, 0.1f, false, {.friction = 0.4f}, detection));
            auto& mesh = static_cast<TriangleMeshCollider<float>&>(world[0]);
            for (int frame = 0; frame < 90; ++frame)
            {
                std::vector<Vec3<float>> v = ring.vertices;
                const float a = 0.01f * float(frame);
                for (auto& p : v)
                {
                    const Vec3<float> r = p - Vec3<float>(4.75f, 1.2f, 2.25f);
                    p = Vec3<float>(4.75f, 1.2f - 0.005f * float(frame), 2.25f) +
                        Vec3<float>(std::cos(a) * r.x() - std::sin(a) * r.z(), r.y(),
                                    std::sin(a) * r.x() + std::cos(a) * r.z());
                }
                mesh.set_vertices(std::move(v));
                auto params = guide_step<float>(16);
                params.substeps = 3;
                sim.step(params);
            }
            return std::pair{std::move(sim), world.contacts()};
        },
        64);
    CHECK(contacts > 30);
}

TEMPLATE_TEST_CASE("a mesh collider batching grids in tiles gives every particle the scalar twin's bits",
                   "[mesh][tiles]", float, double)
{
    // The cloud is no grid, so a tile spans the cloud: the worst case for its lists, and the same
    // bits all the same. Grids cut by the range's ends, partial last columns and rows left over
    // below the last row group all go through the other paths.
    using T = TestType;
    if (simd::kTileRows<T, xsimd::default_arch> < 2)
        WARN("batches of " << simd::kLanes<T> << " lanes hold one row: tiles are not used");
    const ContactMaterial<T> m{
        .friction = T(0.4), .tangential_damping = T(0.1), .restitution = T(0.5), .margin = T(0.05)};
    const auto ball = icosphere<T>({T(0.5), 0, 0}, T(1.5), 2);
    const std::vector<std::vector<ParticleGrid>> layouts = {
        {{.first = 0, .width = 37, .height = 26}},
        {{.first = 3, .width = 16, .height = 60}},
        {{.first = 5, .width = 25, .height = 8},
         {.first = 300, .width = 50, .height = 13},
         {.first = 990, .width = 4, .height = 4}},
    };
    for (const auto& grids : layouts)
        for (const bool moving : {false, true})
        {
            INFO("grids from " << grids.front().first << ", moving " << moving);
            auto mesh = collider_of(ball, T(0.1), true, m);
            mesh.set_particle_grids(grids);
            if (moving)
                mesh.set_vertices(moved(ball.vertices, Vec3<T>(T(0.3), T(-0.2), T(0.1))));
            CHECK(check_collider_twins<T>(mesh) > 20);
        }
    // Lanes past a grid's right edge must stay out of the contact, pinned or not: on a cloud with
    // no inverse masses, a ball whose surface passes 0.05 from the origin, where those lanes'
    // zeros lie, would otherwise count them in contact.
    auto near_origin = collider_of(icosphere<T>({T(0.5), 0, 0}, T(0.55), 3), T(0.1), true, m);
    near_origin.set_particle_grids({{.first = 0, .width = 37, .height = 26}});
    CHECK(check_collider_twins<T>(near_origin, Masses::unit) > 0);
}

TEST_CASE("a sheet on a turning torus mesh takes the same bits batched in tiles as in runs, on every path",
          "[mesh][tiles][threads]")
{
    // The threads test's scene with the sheet's grid given: its 20 x 10 grid has two row groups
    // of four rows and two rows left over, and small grains cut row groups between chunks.
    const auto ring = torus<float>({4.75f, 1.2f, 2.25f}, 2.0f, 0.7f, 48, 16);
    const auto drape = [&](bool tiles) {
        return [&, tiles](auto configure) {
            auto sim = flat_sheet<float>();
            configure(sim);
            auto world = add_colliders(sim, {}, collider_of(ring, 0.1f, false, {.friction = 0.4f}));
            auto& mesh = static_cast<TriangleMeshCollider<float>&>(world[0]);
            if (tiles)
                mesh.set_particle_grids({{.first = 0, .width = 20, .height = 10}});
            // Sinking for 30 frames, then still: a still mesh keeps the lists while the sheet
            // settles, and a tile must notice when its particles leave its list's bounds.
            for (int frame = 0; frame < 90; ++frame)
            {
                if (frame < 30)
                {
                    std::vector<Vec3<float>> v = ring.vertices;
                    for (auto& p : v)
                        p.y() -= 0.005f * float(frame);
                    mesh.set_vertices(std::move(v));
                }
                sim.step(guide_step<float>(16));
            }
            return std::pair{std::move(sim), world.contacts()};
        };
    };
    const int contacts = check_same_bits_on_every_path(drape(true), 64);
    CHECK(contacts > 30);
    const auto runs = drape(false)([](auto&) {});
    const auto tiles = drape(true)([](auto&) {});
    CHECK(same_positions(runs.first, tiles.first));
    CHECK(runs.second == tiles.second);
}

TEST_CASE("a sheet settling on a mesh that then jumps sideways takes the scalar twin's bits, in tiles and in runs",
          "[mesh][tiles]")
{
    // Simulation::set_vectorized(false) runs the colliders' scalar twins too. The sheet settles onto a
    // still ring for 180 frames (the candidate lists kept pass after pass), two of its particles
    // pinned for 30 of them and let go, then the ring jumps sideways by more than a triangle:
    // every list must be renewed then.
    REQUIRE(simd::kLanes<float> > 1);
    const auto ring = torus<float>({4.75f, 1.2f, 2.25f}, 2.0f, 0.7f, 48, 16);
    for (const bool tiles : {false, true})
    {
        INFO("tiles " << tiles);
        const auto drape = [&](bool vectorized) {
            auto sim = flat_sheet<float>();
            sim.set_vectorized(vectorized);
            auto world = add_colliders(sim, {}, collider_of(ring, 0.1f, false, {.friction = 0.4f}));
            auto& mesh = static_cast<TriangleMeshCollider<float>&>(world[0]);
            if (tiles)
                mesh.set_particle_grids({{.first = 0, .width = 20, .height = 10}});
            // Damped hard, so that it comes nearly to rest on the ring.
            auto params = guide_step<float>(16);
            params.damping = 0.9f;
            for (int frame = 0; frame < 180; ++frame)
            {
                sim.step(params);
                if (frame == 140 || frame == 170)
                    for (const std::size_t i : {std::size_t(4 * 20 + 9), std::size_t(5 * 20 + 10)})
                        sim.state().set_inverse_mass(i, frame == 140 ? 0.0f : 1.0f);
            }
            // The ring jumps sideways under the resting sheet, by more than a triangle, then
            // stays: what the lanes rested near before the jump is no guide after it.
            std::vector<Vec3<float>> jumped = ring.vertices;
            for (auto& v : jumped)
                v.x() += 0.4f;
            mesh.set_vertices(std::move(jumped));
            for (int frame = 0; frame < 30; ++frame)
                sim.step(params);
            return std::pair{std::move(sim), mesh.contacts()};
        };
        const auto [vector, vector_contacts] = drape(true);
        const auto [scalar, scalar_contacts] = drape(false);
        CHECK(same_positions(vector, scalar));
        CHECK(vector_contacts == scalar_contacts);
        CHECK(vector_contacts > 30);
    }
}

TEST_CASE("beads sliding over a bumpy mesh take the scalar twin's bits, in tiles and in runs", "[mesh][tiles]")
{
    // 256 free beads on a terrain of 12 800 small triangles (0.125 wide), sliding without
    // friction at up to 1.0 unit a second in every direction, downhill faster: the beads cross
    // triangles all the time, and a tile's lanes spread apart as they go.
    REQUIRE(simd::kLanes<float> > 1);
    const auto height = [](float x, float z) { return 0.1f * std::sin(1.3f * x) * std::cos(1.1f * z); };
    const auto terrain = height_field<float>(80, 10.0f, height);
    const auto slide = [&](bool vectorized, bool tiles) {
        Simulation<float> sim;
        sim.set_vectorized(vectorized);
        std::mt19937 rng(3);
        std::uniform_real_distribution<float> speed(-1.0f, 1.0f);
        for (int r = 0; r < 16; ++r)
            for (int c = 0; c < 16; ++c)
            {
                const float x = 0.4f * float(c) - 3.0f, z = 0.4f * float(r) - 3.0f;
                const auto k = std::size_t(sim.add_particle({x, height(x, z) + 0.12f, z}));
                // A velocity is a displacement per step, here per substep of 1 / 240 s.
                sim.state().set_velocity(k, {speed(rng) / 240.0f, 0.0f, speed(rng) / 240.0f});
            }
        auto world = add_colliders(sim, {}, collider_of(terrain, 0.1f, false, {.friction = 0.0f}));
        auto& mesh = static_cast<TriangleMeshCollider<float>&>(world[0]);
        if (tiles)
            mesh.set_particle_grids({{.first = 0, .width = 16, .height = 16}});
        for (int frame = 0; frame < 90; ++frame)
            sim.step({.dt = 1.0f / 60.0f, .damping = 1.0f, .gravity = {0, -9.81f, 0}, .iterations = 1, .substeps = 4});
        return std::pair{std::move(sim), world.contacts()};
    };
    for (const bool tiles : {false, true})
    {
        INFO("tiles " << tiles);
        const auto [vector, vector_contacts] = slide(true, tiles);
        const auto [scalar, scalar_contacts] = slide(false, tiles);
        CHECK(same_positions(vector, scalar));
        CHECK(vector_contacts == scalar_contacts);
        CHECK(vector_contacts > 100);
        // Every bead stays on the terrain, 0.1 above it at the least (within rounding).
        float lowest = 1e9f;
        for (std::size_t i = 0; i < vector.size(); ++i)
            lowest = std::min(lowest, float(distance_to_mesh(vector.state().position(i), terrain)));
        CHECK(lowest > 0.099f);
    }
}

TEST_CASE("beads shaken by a stage before the collider take the scalar twin's bits, in tiles and in runs",
          "[mesh][tiles]")
{
    // A user's projection registered before the collider teleports a seventh of the beads each
    // substep (velocity kept) by up to 0.12 across the rows and less along them: beyond the slack
    // of the box each bead's motion was predicted to stay in, so beads leave their boxes often,
    // above a bumpy terrain where the plane a bead is given depends on where it stands when
    // planned. A tile (four rows) and a run (one row) then see different neighbours stray; the
    // beads' paths must not depend on which.
    REQUIRE(simd::kLanes<float> > 1);
    const auto height = [](float x, float z) { return 0.15f * std::sin(1.7f * x) * std::cos(1.3f * z); };
    const auto terrain = height_field<float>(60, 10.0f, height);
    const auto shake = [&](bool vectorized, bool tiles) {
        Simulation<float> sim;
        sim.set_vectorized(vectorized);
        for (int r = 0; r < 16; ++r)
            for (int c = 0; c < 16; ++c)
            {
                const float x = 0.3f * float(c) - 2.4f, z = 0.3f * float(r) - 2.4f;
                sim.add_particle({x, height(x, z) + 0.6f + 0.02f * float((r * 7 + c * 3) % 11), z});
            }
        std::uint32_t calls = 0;
        sim.add_position_projection("shake", [&calls](State3<float>& s, float) {
            ++calls;
            for (std::size_t i = 0; i < s.size(); ++i)
            {
                std::uint32_t h = std::uint32_t(i) * 2654435761u ^ calls * 40503u;
                const auto next = [&h] {
                    h ^= h << 13, h ^= h >> 17, h ^= h << 5;
                    return 0.06f * (float(h % 2001u) / 1000.0f - 1.0f);
                };
                const float dx = next(), dy = next(), dz = next();
                if (h % 7u == 0u)
                    s.set_position(i, s.position(i) + Vec3<float>(0.3f * dx, 0.5f * dy, 2.0f * dz), true);
            }
        });
        auto world = add_colliders(sim, {}, collider_of(terrain, 0.1f, false, {.friction = 0.3f}));
        auto& mesh = static_cast<TriangleMeshCollider<float>&>(world[0]);
        if (tiles)
            mesh.set_particle_grids({{.first = 0, .width = 16, .height = 16}});
        int contacts = 0;
        for (int frame = 0; frame < 120; ++frame)
        {
            sim.step({.dt = 1.0f / 60.0f, .damping = 0.98f, .gravity = {0, -9.81f, 0}, .iterations = 1, .substeps = 4});
            contacts += world.contacts();
        }
        return std::pair{std::move(sim), contacts};
    };
    const auto runs = shake(true, false);
    CHECK(runs.second > 3000);
    for (const bool tiles : {false, true})
    {
        INFO("tiles " << tiles);
        const auto [vector, vector_contacts] = shake(true, tiles);
        const auto [scalar, scalar_contacts] = shake(false, tiles);
        CHECK(same_positions(vector, scalar));
        CHECK(vector_contacts == scalar_contacts);
        CHECK(same_positions(vector, runs.first));
    }
    // The collider runs after the nudges, so every bead ends each call at least the thickness
    // from the terrain (within rounding); a nudge moves a bead at most 0.03 toward it.
    float nearest = 1e9f;
    for (std::size_t i = 0; i < runs.first.size(); ++i)
        nearest = std::min(nearest, float(distance_to_mesh(runs.first.state().position(i), terrain)));
    CHECK(nearest > 0.099f);
}

TEST_CASE("beads resting on a floor mesh take the scalar twin's bits when one is let go and the floor shifts by a "
          "triangle",
          "[mesh][tiles]")
{
    // Two changes that leave the particles where they were: one pinned 0.05 above the floor,
    // inside the reach, is let go; and the floor is moved by exactly one triangle, so every
    // surface point is where it was but the triangles under the beads are others.
    REQUIRE(simd::kLanes<float> > 1);
    const float cell = 0.25f;
    const auto floor = height_field<float>(32, 32 * cell, [](float, float) { return 0.0f; });
    const std::size_t let_go = 37;
    const auto settle = [&](bool vectorized, bool tiles) {
        Simulation<float> sim;
        sim.set_vectorized(vectorized);
        for (int r = 0; r < 16; ++r)
            for (int c = 0; c < 16; ++c)
                sim.add_particle({0.3f * float(c) - 2.4f, 0.1f, 0.3f * float(r) - 2.4f});
        sim.state().set_position(let_go, {0.3f * 5 - 2.4f + 0.1f, 0.05f, 0.3f * 2 - 2.4f + 0.1f});
        sim.state().set_inverse_mass(let_go, 0.0f);
        auto world = add_colliders(sim, {}, collider_of(floor, 0.1f, false, {.friction = 0.5f}));
        auto& mesh = static_cast<TriangleMeshCollider<float>&>(world[0]);
        if (tiles)
            mesh.set_particle_grids({{.first = 0, .width = 16, .height = 16}});
        const StepParams<float> params{.dt = 1.0f / 60.0f, .damping = 0.9f, .gravity = {0, -9.81f, 0}, .substeps = 2};
        for (int frame = 0; frame < 90; ++frame)
        {
            if (frame == 30)
                sim.state().set_inverse_mass(let_go, 1.0f);
            if (frame == 60)
            {
                std::vector<Vec3<float>> shifted = floor.vertices;
                for (auto& v : shifted)
                    v.x() += cell;
                mesh.set_vertices(std::move(shifted));
            }
            sim.step(params);
        }
        return std::pair{std::move(sim), world.contacts()};
    };
    for (const bool tiles : {false, true})
    {
        INFO("tiles " << tiles);
        const auto [vector, vector_contacts] = settle(true, tiles);
        const auto [scalar, scalar_contacts] = settle(false, tiles);
        CHECK(same_positions(vector, scalar));
        CHECK(vector_contacts == scalar_contacts);
        CHECK(vector_contacts == 256);
        CHECK(vector.state().position(let_go).y() > 0.0999f);
    }
}

TEST_CASE("a particle turned toward a wall in the middle of a call is planned again and does not cross it",
          "[mesh][swept]")
{
    // Particles glide parallel to the wall of the wall test, 0.3 in front of it, at 6 units a
    // second: their planned boxes over the 6-substep call do not reach the wall, so they plan no
    // contact. From the call's fourth substep a force outside the plan (the step's callback)
    // drives them at the wall at up to 600 units a second, 1.7 units a substep. Only a particle
    // that is planned again when it leaves its box can be stopped.
    const float dt = 1.0f / 60.0f;
    Simulation<float> sim;
    for (int k = 0; k < 40; ++k)
    {
        const auto i = sim.add_particle(Vec3<float>(0.3f, -0.9f + 0.045f * float(k), -0.5f));
        sim.state().set_velocity(std::size_t(i), Vec3<float>(0, 0, 6.0f * dt / 6));
    }
    auto world = add_colliders(sim, {}, collider_of(square_wall<float>(1.0f), 0.01f, true, {.friction = 0}));
    int substep = 0;
    int crossed = 0, stopped = 0;
    for (int frame = 0; frame < 3; ++frame)
    {
        sim.step({.dt = dt, .damping = 1.0f, .iterations = 0, .substeps = 6}, [&](State3<float>& state, float h) {
            if (substep++ % 6 >= 3)
            {
                const auto a = state.arrays_view();
                for (std::size_t i = 0; i < state.size(); ++i) // up to 600 units a second within one substep
                    a.ax[i] += -600.0f / h * (1 + float(i % 4)) / 4;
            }
        });
        for (std::size_t i = 0; i < sim.size(); ++i)
        {
            const float x = sim.state().position(i).x();
            crossed += x < 0 ? 1 : 0;
            stopped += frame == 2 && std::abs(x - 0.01f) < 1e-3f ? 1 : 0;
        }
    }
    CHECK(crossed == 0);
    CHECK(stopped == int(sim.size())); // every one reached the wall and was held at the thickness
    CHECK(world.contacts() >= int(sim.size()));
}

TEST_CASE("a sheet resting on a torus mesh moves per call as it moves per substep, within a fiftieth of the thickness",
          "[mesh]")
{
    // The benchmark's drape, smaller: a 64 x 64 sheet (spacing 0.5, stiff) dropped onto a torus
    // (ring 10, tube 4, 1 200 triangles) at 6 substeps, one-sided, thickness 0.25, friction 1,
    // settled 3 s per substep; then half a second more per call or per substep. Per call, a
    // particle holds to one plane through a call where per substep it follows the facets: the
    // sheets must stay within a small part of the thickness of each other everywhere. (Settled
    // from the drop in each mode, the sheets' free edges part by whole thicknesses: the drop is
    // chaotic, and any difference in contact sends them different ways.)
    const float thickness = 0.25f;
    const auto settle = [&](ContactDetection detection) {
        Simulation<float> sim;
        const float half = 0.5f * 63 / 2;
        add_cloth(sim, {.width = 64,
                        .height = 64,
                        .spacing = 0.5f,
                        .stiffness = 20000.0f,
                        .curvature_strength = 0.0f,
                        .position = [&](int c, int r) {
                            return Vec3<float>(0.5f * float(c) - half, -4.5f, 0.5f * float(r) - half);
                        }});
        auto world = add_colliders(sim, {},
                                   collider_of(torus<float>({0, 0, 0}, 10.0f, 4.0f, 60, 20), thickness, false,
                                               {.friction = 1.0f}, ContactDetection::per_substep));
        const StepParams<float> frame{.dt = 1.0f / 60, .gravity = {0, 9.81f, 0}, .iterations = 1, .substeps = 6};
        for (int f = 0; f < 180; ++f)
            sim.step(frame);
        static_cast<TriangleMeshCollider<float>&>(world[0]).set_detection(detection);
        for (int f = 0; f < 30; ++f)
            sim.step(frame);
        return std::pair{sim.state(), world.contacts()};
    };
    const auto [planned, planned_contacts] = settle(ContactDetection::per_call);
    const auto [exact, exact_contacts] = settle(ContactDetection::per_substep);
    double worst = 0, mean = 0;
    for (std::size_t i = 0; i < exact.size(); ++i)
    {
        const double d = (planned.position(i) - exact.position(i)).norm();
        worst = std::max(worst, d);
        mean += d / double(exact.size());
    }
    CHECK(worst < 0.02 * thickness);
    CHECK(mean < 0.001 * thickness);
    CHECK(planned_contacts > 300);
    CHECK(std::abs(planned_contacts - exact_contacts) < exact_contacts / 20);
}

namespace
{
/// A roof: two planes rising at `degrees` from the horizontal to a ridge along z through the
/// origin (+y is down), 40 units across, four triangles.
TriangleMesh<double> roof(double degrees)
{
    const double s = std::tan(degrees * std::numbers::pi / 180.0), half = 20;
    TriangleMesh<double> mesh;
    mesh.vertices = {{-half, half * s, -half}, {0, 0, -half},           {0, 0, half},
                     {-half, half * s, half},  {half, half * s, -half}, {half, half * s, half}};
    mesh.triangles = {{0, 1, 2}, {0, 2, 3}, {1, 4, 5}, {1, 5, 2}};
    return mesh;
}

struct RidgeCrossing
{
    std::vector<Vec3<double>> path;                      // at each frame's end
    double closest = std::numeric_limits<double>::max(); // to the roof, over those ends
};

/// One frictionless particle resting at the thickness on the rising slope of roof(degrees), half
/// a unit before the ridge, sent up it at `speed` units a second: it goes over the ridge, flies
/// and lands on the far side, 6 substeps a frame for a second.
RidgeCrossing cross_ridge(double degrees, double speed, double thickness, ContactDetection detection)
{
    const double theta = degrees * std::numbers::pi / 180.0, dt = 1.0 / 60;
    const Vec3<double> up_slope(std::cos(theta), -std::sin(theta), 0);
    const Vec3<double> normal(-std::sin(theta), -std::cos(theta), 0); // out of the rising face
    const TriangleMesh<double> mesh = roof(degrees);
    Simulation<double> sim;
    sim.add_particle(-0.5 * up_slope + thickness * normal);
    sim.state().set_velocity(0, up_slope * (speed * dt / 6));
    add_colliders(sim, {}, collider_of(mesh, thickness, true, {.friction = 0}, detection));
    RidgeCrossing crossing;
    for (int frame = 0; frame < 60; ++frame)
    {
        sim.step({.dt = dt, .damping = 1.0, .gravity = {0, 9.81, 0}, .iterations = 0, .substeps = 6});
        const Vec3<double> p = sim.state().position(0);
        crossing.path.push_back(p);
        crossing.closest = std::min(crossing.closest, distance_to_mesh(p, mesh));
    }
    return crossing;
}
} // namespace

TEST_CASE("a particle going over a sharp ridge per call leaves it at most one call's gravity faster than per substep",
          "[mesh]")
{
    // Per call, a particle keeps the one plane it was planned with for the whole call. Over a
    // convex ridge that plane (the rising face's, or the ridge edge's) stands above the far face,
    // so it never lets the particle into the mesh, but it holds up a particle that, exactly, has
    // already left the ridge and begun to fall, until the next call plans it again. So it can
    // withhold at most one call's gravity from the launch: the flights differ by at most g dt in
    // velocity. Slopes of 10 to 45 degrees, crossed from just over the top to fast; the velocity
    // is compared two frames after the crossing, when both are in flight.
    const double thickness = 0.05, dt = 1.0 / 60, g = 9.81;
    for (const double degrees : {10.0, 25.0, 45.0})
        for (const double speed : {3.0, 6.0, 12.0})
        {
            const RidgeCrossing planned = cross_ridge(degrees, speed, thickness, ContactDetection::per_call);
            const RidgeCrossing exact = cross_ridge(degrees, speed, thickness, ContactDetection::per_substep);
            const auto over = std::find_if(exact.path.begin(), exact.path.end(),
                                           [](const Vec3<double>& p) { return p.x() > 0; });
            REQUIRE(over - exact.path.begin() + 2 < std::ptrdiff_t(exact.path.size()));
            const auto f = std::size_t(over - exact.path.begin()) + 2;
            const Vec3<double> launch_gap = (planned.path[f] - planned.path[f - 1]) -
                                            (exact.path[f] - exact.path[f - 1]);
            const double dv = launch_gap.norm() / dt;
            CHECK(dv <= g * dt);
            CHECK(dv > 0); // the plane did hold it: the two modes differ
            CHECK(planned.closest >= thickness * (1 - 1e-9));
            CHECK(exact.closest >= thickness * (1 - 1e-9));
        }
}

TEST_CASE("beads sliding into a concave crease per call keep three quarters of the reach from both slopes and rest "
          "where they rest per substep",
          "[mesh]")
{
    // A valley (the roof turned over: +y is down), its two slopes meeting at a concave crease of
    // 174, 160 or 120 degrees. A bead near the crease is planned with one plane, its nearest
    // feature's; the other slope rises in front of that plane, by little near a shallow crease.
    // Per call a bead held by its plane must keep (1 - the plan's tolerance of a quarter) of the
    // reach from every triangle, and a bead whose plane cannot promise that takes the exact tests:
    // at every call's end, each bead stands at least 0.75 x the reach from the valley, and the
    // beads settle where they settle tested per substep.
    const double thickness = 0.05, dt = 1.0 / 60;
    for (const double degrees : {3.0, 10.0, 30.0})
    {
        INFO(degrees << " degree slopes");
        const TriangleMesh<double> valley = roof(-degrees);
        const auto slide = [&](ContactDetection detection) {
            Simulation<double> sim;
            // Beads on both slopes, 0.1 to 0.65 units out, a little above them, moving along the crease.
            const double s = std::tan(degrees * std::numbers::pi / 180.0);
            for (int k = 0; k < 12; ++k)
            {
                const double x = (k % 2 == 0 ? 1.0 : -1.0) * (0.1 + 0.11 * double(k / 2));
                const auto i = std::size_t(sim.add_particle({x, -std::abs(x) * s - 0.2, 0.3 * double(k) - 1.5}));
                sim.state().set_velocity(i, {0, 0, (k % 3 == 0 ? 1.0 : -0.5) * dt});
            }
            // Friction below tan(3 degrees), so that every bead slides down.
            add_colliders(sim, {}, collider_of(valley, thickness, true, {.friction = 0.02}, detection));
            double closest = std::numeric_limits<double>::max();
            for (int frame = 0; frame < 360; ++frame)
            {
                sim.step({.dt = dt, .damping = 0.98, .gravity = {0, 9.81, 0}, .iterations = 0, .substeps = 4});
                for (std::size_t i = 0; i < sim.size(); ++i)
                    closest = std::min(closest, distance_to_mesh(sim.state().position(i), valley));
            }
            return std::pair{sim.state(), closest};
        };
        const auto [planned, planned_closest] = slide(ContactDetection::per_call);
        const auto [exact, exact_closest] = slide(ContactDetection::per_substep);
        double apart = 0, from_crease = 0;
        for (std::size_t i = 0; i < planned.size(); ++i)
        {
            apart = std::max(apart, (planned.position(i) - exact.position(i)).norm());
            from_crease = std::max(from_crease, std::abs(planned.position(i).x()));
        }
        CHECK(planned_closest >= 0.75 * thickness - 1e-9);
        // Tested per substep, a bead in the crease is pushed out of one slope, then the other, once
        // each: it may end a hair inside the first (a set's relaxations take that out).
        CHECK(exact_closest >= 0.75 * thickness);
        CHECK(from_crease < 0.05); // they have slid into the crease
        CHECK(apart < 0.1 * thickness);
    }
}

TEST_CASE("a particle pushed within its tile but out of its run's box above a ridge takes the same bits in tiles "
          "and in runs",
          "[mesh][tiles]")
{
    // A sheet of 16 x 4 falling slowly, without gravity, just clear of the ridge of a roof for the
    // whole call: no block has a triangle within reach, so every block skips its substeps while
    // its particles stay inside its box. In the second substep a stage before the collider moves
    // one particle a row over and doubles its fall: still inside its tile's box (four rows) but
    // out of its run's (one row) and out of its own, so that its fall now reaches the ridge.
    using T = float; // four rows of four lanes on AVX-512
    REQUIRE(simd::kLanes<T> > 1);
    if (simd::kTileRows<T, xsimd::default_arch> < 2)
        WARN("batches of " << simd::kLanes<T> << " lanes hold one row: tiles are not used");
    const T thickness = 0.05f, spacing = 0.1f, fall = 0.02f; // fall: a substep's
    TriangleMesh<T> ridge;
    for (const auto& v : roof(20.0).vertices)
        ridge.vertices.push_back(v.cast<T>());
    ridge.triangles = roof(20.0).triangles;
    const std::size_t pushed = 2; // column 2 of row 0
    const auto drop = [&](bool vectorized, bool tiles) {
        Simulation<T> sim;
        sim.set_vectorized(vectorized);
        // Clear of the reach by 0.1 at the call's end (the fall, the plan's slack, the reach), so
        // that the lists' own slack finds no triangle either.
        const T y0 = -(6 * fall + thickness / 4 + thickness + 0.1f);
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 16; ++c)
            {
                const auto i = std::size_t(sim.add_particle({0.01f + spacing * T(c - 2), y0, spacing * T(r)}));
                sim.state().set_velocity(i, {0, fall, 0});
            }
        int passes = 0;
        sim.add_position_projection("push", [&](State3<T>& st, T) {
            if (++passes != 2)
                return;
            const Vec3<T> v = st.velocity(pushed);
            st.set_position(pushed, st.position(pushed) + Vec3<T>(0, 2 * fall, spacing));
            st.set_velocity(pushed, v + Vec3<T>(0, 2 * fall, 0));
        });
        auto world = add_colliders(sim, {}, collider_of(ridge, thickness, true, {.friction = 0.2}));
        auto& mesh = static_cast<TriangleMeshCollider<T>&>(world[0]);
        if (tiles)
            mesh.set_particle_grids({{.first = 0, .width = 16, .height = 4}});
        for (int frame = 0; frame < 3; ++frame)
            sim.step({.dt = 1.0f / 60, .damping = 1.0f, .gravity = {0, 0, 0}, .iterations = 0, .substeps = 6});
        return sim;
    };
    const auto runs = drop(true, false);
    const auto tiles = drop(true, true);
    const auto scalar = drop(false, false);
    CHECK(same_positions(runs, scalar));
    CHECK(same_positions(tiles, scalar));
    // It reached the ridge and was held at the reach.
    CHECK(distance_to_mesh(scalar.state().position(pushed), ridge) >= 0.75 * thickness);
    CHECK(distance_to_mesh(scalar.state().position(pushed), ridge) < 1.5 * thickness);
}

TEST_CASE("a garment on a walking body mesh never ends a call inside it, at 6 substeps", "[mesh][swept]")
{
    // A character-sized body: an icosphere of radius 0.5 (320 triangles) bobbing along a circle
    // of radius 1.5 at 1.6 units a second, moved by set_vertices every frame; a 24 x 24 cape of
    // spacing 0.06 pinned along its top row a little above and behind the body, so that it drapes
    // over it; thickness 0.05. After every call, no particle may lie inside the convex body
    // (behind all of its face planes), which is what the per-call plans and the exact first
    // substep of a moving mesh must guarantee together.
    const auto body = icosphere<double>({0, 0, 0}, 0.5, 2);
    const auto at = [&](int frame) {
        const double t = double(frame) / 60, a = 1.6 * t / 1.5;
        return Vec3<double>(1.5 * std::cos(a), 0.05 * std::sin(12 * t), 1.5 * std::sin(a));
    };
    const auto placed = [&](int frame) {
        std::vector<Vec3<float>> v;
        for (const auto& p : body.vertices)
            v.push_back((p + at(frame)).cast<float>());
        return v;
    };
    Simulation<float> sim;
    const auto cloth = add_cloth(sim, {.width = 24,
                                       .height = 24,
                                       .spacing = 0.06f,
                                       .stiffness = 4000.0f,
                                       .pinned = [](int, int r) { return r == 0; },
                                       .position =
                                           [&](int c, int r) {
                                               return Vec3<float>(1.5f - 0.69f + 0.06f * float(c),
                                                                  -0.6f + 0.03f * float(r), -0.2f + 0.05f * float(r));
                                           }});
    TriangleMesh<float> mesh{.vertices = placed(0), .triangles = body.triangles};
    const auto detection = GENERATE(ContactDetection::per_call, ContactDetection::per_substep);
    auto world = add_colliders(sim, {}, collider_of(mesh, 0.05f, false, {.friction = 0.3f}, detection));
    auto& collider = static_cast<TriangleMeshCollider<float>&>(world[0]);
    int inside = 0, contacts = 0;
    for (int frame = 1; frame <= 240; ++frame)
    {
        collider.set_vertices(placed(frame));
        // The pins walk with the body.
        const Vec3<double> moved = at(frame) - at(frame - 1);
        for (int c = 0; c < 24; ++c)
        {
            const std::size_t i = cloth.index(c, 0);
            sim.state().set_position(i, sim.state().position(i) + moved.cast<float>());
        }
        sim.step({.dt = 1.0f / 60, .gravity = {0, 9.81f, 0}, .iterations = 4, .substeps = 6});
        contacts += world.contacts();
        for (std::size_t i = 0; i < sim.size(); ++i)
        {
            const Vec3<double> p = sim.state().position(i).cast<double>() - at(frame);
            bool behind_all = true;
            for (const auto& t : body.triangles)
            {
                const Vec3<double> a = body.vertices[std::size_t(t[0])], b = body.vertices[std::size_t(t[1])],
                                   c = body.vertices[std::size_t(t[2])];
                const Vec3<double> n = (b - a).cross(c - a).normalized();
                behind_all = behind_all && n.dot(p - a) < 0;
            }
            inside += behind_all ? 1 : 0;
        }
    }
    // Per substep, a particle pulled deeper into a one-sided mesh than the reach within one
    // substep is not seen by the closest-point test: in this scene a couple do. A plane holds
    // at any depth.
    if (detection == ContactDetection::per_call)
        CHECK(inside == 0);
    CHECK(contacts > 240 * 20); // the cape lies on the body, it does not hang clear
}

TEST_CASE("restoring a snapshot, then stepping a sheet on a mesh planned per call, gives the same bits", "[mesh]")
{
    // Plans live within a call, and a call cannot stop between its substeps, so a snapshot holds
    // none: a restored simulation plans afresh and must take the uninterrupted run's bits.
    const auto ring = torus<float>({4.75f, 1.2f, 2.25f}, 2.0f, 0.7f, 48, 16);
    auto params = guide_step<float>(16);
    params.substeps = 6;
    auto sim = flat_sheet<float>();
    auto world = add_colliders(sim, {}, collider_of(ring, 0.1f, false, {.friction = 0.4f}));
    for (int frame = 0; frame < 40; ++frame)
        sim.step(params);
    const auto saved = snapshot(sim);
    for (int frame = 0; frame < 40; ++frame)
        sim.step(params);
    const State3<float> uninterrupted = sim.state();
    restore(sim, saved);
    for (int frame = 0; frame < 40; ++frame)
        sim.step(params);
    const auto eq = [](auto u, auto v) { return std::equal(u.begin(), u.end(), v.begin(), v.end()); };
    const auto& s = sim.state();
    CHECK(world.contacts() > 30);
    CHECK((eq(s.x(), uninterrupted.x()) && eq(s.y(), uninterrupted.y()) && eq(s.z(), uninterrupted.z()) &&
           eq(s.px(), uninterrupted.px()) && eq(s.py(), uninterrupted.py()) && eq(s.pz(), uninterrupted.pz())));
}

TEST_CASE("bad particle grids throw naming the grid and leave the collider's grids as they were", "[mesh][errors]")
{
    const auto message = [](auto&& fn) { return error_message<std::invalid_argument>(fn); };
    auto mesh = collider_of(square_wall<float>(1.0f), 0.01f);
    const std::vector<ParticleGrid> before = {{.first = 0, .width = 10, .height = 10}};
    mesh.set_particle_grids(before);
    CHECK(message([&] { mesh.set_particle_grids({{.first = 4, .width = 0, .height = 3}}); }) ==
          "simdverlet: mesh collider particle grid {first 4, width 0, height 3} is empty");
    CHECK(message([&] { mesh.set_particle_grids({{.first = 4, .width = 3, .height = 0}}); }).find("is empty") !=
          std::string::npos);
    CHECK(
        message([&] {
            mesh.set_particle_grids({{.first = 50, .width = 10, .height = 2}, {.first = 0, .width = 10, .height = 6}});
        }) ==
        "simdverlet: mesh collider particle grid {first 50, width 10, height 2} overlaps the grid from particle 0");
    const std::size_t half = std::size_t(1) << (4 * sizeof(std::size_t)); // squared, one past the largest
    CHECK(message([&] { mesh.set_particle_grids({{.first = 0, .width = half, .height = half}}); }) ==
          "simdverlet: mesh collider particle grid {first 0, width " + std::to_string(half) + ", height " +
              std::to_string(half) + "} reaches past the largest particle index");
    CHECK(message([&] {
              mesh.set_particle_grids({{.first = half * half - 4, .width = 2, .height = 3}});
          }).find("reaches past the largest particle index") != std::string::npos);
    CHECK(mesh.particle_grids() == before);
    mesh.set_particle_grids({});
    CHECK(mesh.particle_grids().empty());
}

TEST_CASE("bad mesh input throws, names the value and leaves the collider as it was", "[mesh][errors]")
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto message = [](auto&& fn) { return error_message<std::invalid_argument>(fn); };
    const auto wall = square_wall<float>(1.0f);
    const auto with = [&](auto change) {
        return [=] {
            TriangleMeshCollider<float>::Shape shape{.vertices = wall.vertices, .triangles = wall.triangles};
            change(shape);
            TriangleMeshCollider<float> mesh(shape);
        };
    };
    CHECK(message(with([](auto& s) { s.thickness = 0; })) ==
          "simdverlet: mesh collider thickness must be finite and > 0, got 0");
    CHECK(message(with([=](auto& s) { s.thickness = nan; })).find("got NaN") != std::string::npos);
    CHECK(message(with([=](auto& s) { s.vertices[2].y() = nan; })).find("vertex 2 (0, NaN, 1) is not finite") !=
          std::string::npos);
    CHECK(message(with([](auto& s) { s.triangles[1][2] = 7; })) ==
          "simdverlet: mesh collider triangle 1 refers to vertex 7, but there are 4 vertices");
    CHECK(message(with([](auto& s) { s.triangles[1][0] = -1; })).find("refers to vertex -1") != std::string::npos);
    // Degenerate triangles are dropped unless refused, but a mesh of nothing else is an error.
    CHECK(message(with([](auto& s) {
              s.triangles[0] = {0, 2, 2};
              s.repair = MeshRepair::refuse;
          })).find("triangle 0 (vertices 0, 2, 2) is degenerate") != std::string::npos);
    CHECK(message(with([](auto& s) {
              s.vertices[1] = Vec3<float>(0, 0, 0);
              s.vertices[2] = Vec3<float>(0, 1, 1);
              s.repair = MeshRepair::refuse;
          })).find("triangle 0 (vertices 0, 1, 2) is degenerate") != std::string::npos);
    CHECK(message(with([](auto& s) {
              s.triangles[1] = {2, 0, 1};
              s.repair = MeshRepair::refuse;
          })) == "simdverlet: mesh collider triangle 1 (vertices 2, 0, 1) repeats triangle 0 (vertices 0, 1, 2)");
    CHECK(message(with([](auto& s) {
              s.triangles = {{0, 2, 2}, {3, 3, 1}};
          })) == "simdverlet: mesh collider has no triangles left: all 2 are degenerate");
    CHECK(message(with([](auto& s) { s.triangles.clear(); })) == "simdverlet: mesh collider has no triangles");

    auto mesh = collider_of(wall, 0.01f);
    const auto before = mesh.vertices();
    CHECK(message([&] { mesh.set_vertices({}); }) ==
          "simdverlet: mesh collider set_vertices got 0 vertices, but the mesh has 4");
    CHECK(message([&] { mesh.set_vertices(moved(wall.vertices, Vec3<float>(nan, 0, 0))); }).find("vertex 0") !=
          std::string::npos);
    // The triangles cannot change once built: one collapsing is refused, not dropped.
    auto collapsed = wall.vertices;
    collapsed[1] = collapsed[0];
    CHECK(message([&] { mesh.set_vertices(collapsed); }) ==
          "simdverlet: mesh collider triangle 0 (vertices 0, 1, 2) is degenerate: its area is 0");
    CHECK(message([&] { mesh.set_thickness(-1); }).find("got -1") != std::string::npos);
    CHECK(mesh.vertices() == before);
    CHECK(mesh.thickness() == 0.01f);
    CHECK_FALSE(mesh.moving());
}

TEST_CASE("a mesh collider drops a zero-area triangle among good ones, reports it and collides as the clean mesh does, "
          "still and moved",
          "[mesh][errors]")
{
    // The wall with a sliver between its two triangles: vertex 4 halfway along the edge 0-1.
    const auto wall = square_wall<float>(1.0f);
    auto vertices = wall.vertices;
    vertices.push_back((vertices[0] + vertices[1]) / 2.0f);
    LogCapture log;
    TriangleMeshCollider<float> dirty(
        {.vertices = vertices, .triangles = {wall.triangles[0], {0, 4, 1}, wall.triangles[1]}, .thickness = 0.05f});
    REQUIRE(log.warnings.size() == 1);
    CHECK(log.warnings[0] == "mesh collider: dropped 1 degenerate triangle (triangle 1)");
    CHECK(dirty.repairs().degenerate_triangles == 1);
    CHECK(dirty.repairs().first_degenerate_triangle == std::optional<std::size_t>(1));
    CHECK(dirty.repairs().repeated_triangles == 0);
    CHECK(dirty.repairs().unused_vertices == 0);
    CHECK(dirty.triangles() == wall.triangles);
    CHECK(dirty.vertices() == vertices); // kept, as given: set_vertices takes the same buffer

    // Beads falling onto the wall along +x, from a grid in front of it.
    const auto fall = [&](TriangleMeshCollider<float> mesh, const std::vector<Vec3<float>>& shifted) {
        Simulation<float> sim;
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c)
                sim.add_particle(Vec3<float>(-0.3f, -0.9f + 0.35f * float(r), -0.9f + 0.35f * float(c)));
        auto set = add_colliders(sim, {});
        auto& collider = set.add(std::move(mesh));
        for (int frame = 0; frame < 60; ++frame)
        {
            if (frame == 30)
                collider.set_vertices(shifted);
            sim.step({.damping = 1.0f, .gravity = {3, 0, 0}, .iterations = 0});
        }
        return sim;
    };
    TriangleMeshCollider<float> clean({.vertices = wall.vertices, .triangles = wall.triangles, .thickness = 0.05f});
    const Vec3<float> by(-0.1f, 0, 0);
    const Simulation<float> with_sliver = fall(dirty, moved(vertices, by));
    const Simulation<float> without = fall(clean, moved(wall.vertices, by));
    CHECK(same_positions(with_sliver, without));
    for (std::size_t i = 0; i < with_sliver.size(); ++i)
        CHECK(with_sliver.state().position(i).x() < -0.1f); // held in front of the moved wall
}
