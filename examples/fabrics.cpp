// fabrics: the same square of cloth in silk, cotton and denim, each dropped onto the same ball, as
// a drape tester would lay a specimen over its pedestal. Each is a grid cloth given a material
// preset (ClothMaterial::silk() and so on): masses, stretch and bending in SI units, held by the
// implicit cloth solve. Prints, for each fabric, how far below the top of the ball its corners and
// the middles of its edges hang and its largest edge strain. Writes fabrics.svg: the three from
// the front and from above a corner. The +y axis points down, as in the pictures this library draws.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

namespace
{
constexpr int kCells = 40;          // 40 x 40 cells of 1 cm: a 40 cm square
constexpr float kSpacing = 0.01f;   // metres
constexpr float kRadius = 0.09f;    // the ball: a pedestal of 18 cm across
const Vec3 kBall(0.2f, 0.3f, 0.2f); // under the square's middle
constexpr float kTop = 0.3f - kRadius;

struct Fabric
{
    const char* name;
    sv::ClothMaterial<float> material;
};

struct Drape
{
    sv::Simulation<float> sim;
    std::optional<sv::Cloth<float>> cloth; // set by drape()
    float corner_drop = 0, edge_drop = 0, strain = 0;
};

/// The largest relative change of a grid edge's length (rows, columns and cell diagonals).
float largest_strain(const sv::Cloth<float>& cloth)
{
    float worst = 0;
    for (const auto& t : cloth.triangles())
        for (int k = 0; k < 3; ++k)
        {
            const auto a = std::size_t(t[std::size_t(k)]), b = std::size_t(t[std::size_t((k + 1) % 3)]);
            const auto ca = int(a) % (kCells + 1), ra = int(a) / (kCells + 1);
            const auto cb = int(b) % (kCells + 1), rb = int(b) / (kCells + 1);
            const float rest = kSpacing * std::hypot(float(ca - cb), float(ra - rb));
            worst = std::max(worst, std::abs((cloth.position(a) - cloth.position(b)).norm() / rest - 1.0f));
        }
    return worst;
}

void drape(Drape& d, const Fabric& fabric)
{
    d.cloth = sv::add_cloth(
        d.sim, {.width = kCells + 1,
                .height = kCells + 1,
                .material = fabric.material,
                .spacing = kSpacing,
                .position = [](int c, int r) { return Vec3(kSpacing * float(c), kTop - 0.02f, kSpacing * float(r)); },
                .name = fabric.name});
    auto world = sv::add_colliders(d.sim, {});
    const sv::ContactMaterial<float> on_ball{.friction = 0.5f, .margin = 0.002f};
    world.add(sv::SphereCollider<float>({.center = kBall, .radius = kRadius}, on_ball));
    world.add(sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -0.5f}, on_ball));
    const sv::StepParams<float> params{.gravity = {0, 9.81f, 0}, .substeps = 4};
    for (int frame = 0; frame < 180; ++frame)
        d.sim.step(params);
    const auto drop = [&](int c, int r) { return d.cloth->position(c, r).y() - kTop; };
    d.corner_drop = (drop(0, 0) + drop(kCells, 0) + drop(0, kCells) + drop(kCells, kCells)) / 4;
    d.edge_drop = (drop(kCells / 2, 0) + drop(0, kCells / 2) + drop(kCells, kCells / 2) + drop(kCells / 2, kCells)) / 4;
    d.strain = largest_strain(*d.cloth);
}
} // namespace

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    using M = sv::ClothMaterial<float>;
    const Fabric fabrics[] = {{"silk", M::silk()}, {"cotton", M::cotton()}, {"denim", M::denim()}};
    std::vector<Drape> drapes(3);
    std::printf("fabric   density  bending     corners below the top  edge middles  largest strain\n");
    bool diverged = false;
    for (int k = 0; k < 3; ++k)
    {
        drape(drapes[std::size_t(k)], fabrics[k]);
        const auto& d = drapes[std::size_t(k)];
        std::printf("%-7s  %.3f    %.1e     %.1f cm               %.1f cm       %.2f %%\n", fabrics[k].name,
                    double(fabrics[k].material.density), double(fabrics[k].material.bending), 100 * d.corner_drop,
                    100 * d.edge_drop, 100 * d.strain);
        diverged = diverged || d.sim.diverged();
    }

    const sv::svg::Projection oblique{.depth_angle_degrees = 35, .depth_scale = 0.6, .y_scale = 1};
    const sv::svg::Stroke ball_stroke{"#9aa5b1", 0.6, 0.8};
    const sv::svg::Stroke sheet_stroke{"#5b7fb8", 0.6, 0.9};
    sv::svg::Figure figure({.columns = 3, .cell_width = 300, .padding = 0.02});
    sv::DebugGeometry<float> ball;
    for (int k = 0; k <= 64; ++k)
    {
        const float a = 2 * 3.14159265f * float(k) / 64;
        if (k == 0)
            ball.outlines.emplace_back();
        ball.outlines.back().push_back(kBall + kRadius * Vec3(std::cos(a), std::sin(a), 0));
    }
    for (const bool above : {false, true})
        for (int k = 0; k < 3; ++k)
        {
            const auto& d = drapes[std::size_t(k)];
            char caption[160];
            if (above)
                std::snprintf(caption, sizeof caption, "%s, oblique (z at %.0f degrees)", fabrics[k].name,
                              oblique.depth_angle_degrees);
            else
                std::snprintf(caption, sizeof caption, "%s from the front after 3 s\ncorners %.1f cm below the top",
                              fabrics[k].name, 100 * double(d.corner_drop));
            sv::DebugGeometry<float> sheet;
            sheet.outlines = d.cloth->lines();
            auto& panel = figure.add_panel(caption);
            if (above)
                panel.add_polylines(sv::svg::projected(sheet, oblique).outlines, sheet_stroke);
            else
                panel.add_polylines(ball.outlines, ball_stroke).add_polylines(sheet.outlines, sheet_stroke);
        }
    figure.save(out + "/fabrics.svg");
    std::printf("diverged: %s\n", diverged ? "yes" : "no");
    return diverged ? 1 : 0;
}
