// mesh_drape: a square sheet dropped onto a ring lying on the floor. The ring is a triangle mesh
// (a low-poly torus of 576 triangles built here, as a model loaded with load_obj_mesh would be),
// not a formula: the sheet settles over it and sags into the hole. Prints, every 60 frames, the
// mesh's contacts and the closest any particle comes to the ring's true (smooth) surface, which
// the facets cut inside by at most their sagitta. Writes mesh_drape.svg: the scene from the
// front and in an oblique view. The +y axis points down, as in the pictures this library draws.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

namespace
{
constexpr float kRing = 1.6f;  // distance from the ring's centre to its tube's centre
constexpr float kTube = 0.55f; // tube radius
const Vec3 kCentre(3.0f, 3.45f, 3.0f);

/// A torus around the vertical axis: `around` segments along the ring, `across` around the tube,
/// each quad split in two, wound counter-clockwise seen from outside.
sv::TriangleMesh<float> ring_mesh(int around, int across)
{
    sv::TriangleMesh<float> mesh;
    for (int i = 0; i < around; ++i)
        for (int j = 0; j < across; ++j)
        {
            const double u = 2 * std::numbers::pi * i / around, w = 2 * std::numbers::pi * j / across;
            const double r = kRing + kTube * std::cos(w);
            mesh.vertices.push_back(kCentre +
                                    Vec3(float(r * std::cos(u)), float(kTube * std::sin(w)), float(r * std::sin(u))));
        }
    const auto at = [&](int i, int j) { return std::int32_t((i % around) * across + j % across); };
    for (int i = 0; i < around; ++i)
        for (int j = 0; j < across; ++j)
        {
            mesh.triangles.push_back({at(i, j), at(i, j + 1), at(i + 1, j)});
            mesh.triangles.push_back({at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)});
        }
    return mesh;
}

/// Signed distance to the smooth torus the mesh approximates.
float ring_distance(const Vec3& p)
{
    const Vec3 d = p - kCentre;
    const float q = std::hypot(d.x(), d.z()) - kRing;
    return std::hypot(q, d.y()) - kTube;
}
} // namespace

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::Simulation<float> sim;
    // A 41 x 41 sheet, 6 units square, lying flat 0.4 above the ring's top.
    auto sheet = sv::add_cloth(
        sim, {.width = 41, .height = 41, .spacing = 0.15f, .stiffness = 400.0f, .position = [](int c, int r) {
                  return Vec3(0.15f * c, 2.5f, 0.15f * r);
              }});
    const auto ring = ring_mesh(24, 12);
    const float thickness = 0.05f;
    auto world = sv::add_colliders(
        sim, {},
        sv::TriangleMeshCollider<float>(
            {.vertices = ring.vertices, .triangles = ring.triangles, .thickness = thickness, .two_sided = false},
            {.friction = 0.5f}),
        sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -4.0f}, {.friction = 0.5f, .margin = 0.02f}));
    auto& mesh = static_cast<sv::TriangleMeshCollider<float>&>(world[0]);
    // The sheet's particles batched in square tiles rather than runs along a row: the same
    // result, found faster (docs/performance.md, "Triangle-mesh colliders").
    mesh.set_particle_grids({sheet.grid()});

    const sv::StepParams<float> params{.gravity = {0, 9.81f, 0}, .iterations = 16, .substeps = 2};
    std::printf("frame  on the ring  closest to the smooth ring\n");
    float closest_ever = std::numeric_limits<float>::max();
    for (int frame = 1; frame <= 240; ++frame)
    {
        sheet.step(params);
        float closest = std::numeric_limits<float>::max();
        for (std::size_t i = 0; i < sim.size(); ++i)
            closest = std::min(closest, ring_distance(sim.state().position(i)));
        closest_ever = std::min(closest_ever, closest);
        if (frame % 60 == 0)
            std::printf("%5d  %11d  %8.4f\n", frame, mesh.contacts(), closest);
    }
    // The facets lie inside the smooth ring by up to the sagitta of an edge across the tube plus
    // that of an edge along the outer rim: a quad's middle misses both curves.
    const float pi = std::numbers::pi_v<float>;
    const float sagitta = kTube * (1.0f - std::cos(pi / 12.0f)) + (kRing + kTube) * (1.0f - std::cos(pi / 24.0f));
    std::printf("closest at any frame: %.4f (thickness %.2f, facets up to %.4f inside the smooth ring)\n", closest_ever,
                thickness, sagitta);

    const sv::svg::Projection oblique{.depth_angle_degrees = 35, .depth_scale = 0.6, .y_scale = 1};
    const sv::svg::Stroke mesh_stroke{"#9aa5b1", 0.5, 0.8};
    const sv::svg::Stroke sheet_stroke{"#5b7fb8", 0.9, 0.9};
    char first[160], second[160];
    std::snprintf(first, sizeof first,
                  "a 41 x 41 sheet dropped on a ring mesh of %zu triangles\nfrom the front, after 4 s: %d particles "
                  "on the ring",
                  ring.triangles.size(), mesh.contacts());
    std::snprintf(second, sizeof second,
                  "oblique view (z drawn at %.0f degrees, %.1f of its length)\nclosest to the smooth ring at any "
                  "frame: %.3f",
                  oblique.depth_angle_degrees, oblique.depth_scale, double(closest_ever));
    sv::svg::Figure figure({.columns = 2, .cell_width = 470});
    auto& front = figure.add_panel(first);
    auto& side = figure.add_panel(second);
    sv::DebugGeometry<float> grid;
    grid.outlines = sheet.lines();
    const auto shape = sv::outline(mesh);
    front.add_polylines(shape.outlines, mesh_stroke).add_polylines(grid.outlines, sheet_stroke);
    side.add_polylines(sv::svg::projected(shape, oblique).outlines, mesh_stroke)
        .add_polylines(sv::svg::projected(grid, oblique).outlines, sheet_stroke);
    figure.save(out + "/mesh_drape.svg");
    std::printf("diverged: %s\n", sim.diverged() ? "yes" : "no");
    return sim.diverged() ? 1 : 0;
}
