// pile: four sheets dropped in a pile on a ball that rests on a floor, with self-collision keeping
// every particle a thickness from every other. Each sheet starts flat, a little higher than the
// one below, turned and shifted in x-z so that it folds differently. Prints, every 60 frames, the
// pairs in contact, the candidate-list rebuilds so far and the closest distance between particles
// of different sheets, and at the end whether two sheets ever came closer than half the thickness.
// Writes pile.svg: the pile from the front and in an oblique view that spreads the folds apart.
// The +y axis points down, as in the pictures this library draws.
#include <algorithm>
#include <cmath>
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
constexpr int kSheets = 4;
constexpr int kSide = 20;          // particles per row and per column
constexpr float kSpacing = 0.1f;   // world units between neighbours
constexpr float kThickness = 0.1f; // about the spacing, as recommended
constexpr float kFloor = 1.2f;     // the floor is the plane y = kFloor
constexpr float kRadius = 0.6f;    // the ball rests on the floor
constexpr int kCount = kSide * kSide;
// A spring holding n particles up stretches by about n g / (stiffness x iterations x spacing). The
// guide's sheet (spacing 0.5, gravity 2, 60 x 16) stretches 1/240 per particle it holds; at spacing
// 0.1 under gravity 9.8 the same takes about 1500 x 16. The default 60 would let these sheets
// stretch to several times their size.
constexpr float kStiffness = 1500.0f;

/// Closest distance between two particles of different sheets, brute force.
float closest_between_sheets(const sv::Simulation<float>& sim)
{
    const auto& s = sim.state();
    float best2 = std::numeric_limits<float>::max();
    for (std::size_t a = 0; a < std::size_t(kSheets * kCount); ++a)
    {
        const Vec3 p = s.position(a);
        for (std::size_t b = (a / kCount + 1) * kCount; b < std::size_t(kSheets * kCount); ++b)
            best2 = std::min(best2, (s.position(b) - p).squaredNorm());
    }
    return std::sqrt(best2);
}
} // namespace

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::Simulation<float> sim;
    // Sheet k lies flat 0.15 above sheet k - 1 (the first 0.15 above the ball's top at y = 0),
    // turned by turn[k] about the vertical and shifted by (dx[k], dz[k]) from the ball's axis.
    const float turn[kSheets] = {0.0f, 25.0f, 55.0f, 80.0f};
    const float dx[kSheets] = {0.0f, 0.09f, -0.075f, 0.05f};
    const float dz[kSheets] = {0.0f, -0.06f, 0.05f, 0.11f};
    std::vector<sv::Cloth<float>> sheets;
    for (int k = 0; k < kSheets; ++k)
    {
        const float a = turn[k] * std::numbers::pi_v<float> / 180.0f;
        const float ca = std::cos(a), sa = std::sin(a), height = -0.15f - 0.15f * float(k);
        const float x0 = dx[k], z0 = dz[k];
        sheets.push_back(sv::add_cloth(sim, {.width = kSide,
                                             .height = kSide,
                                             .spacing = kSpacing,
                                             .stiffness = kStiffness,
                                             .position = [=](int c, int r) {
                                                 const float u = kSpacing * (float(c) - 0.5f * (kSide - 1));
                                                 const float v = kSpacing * (float(r) - 0.5f * (kSide - 1));
                                                 return Vec3(x0 + ca * u - sa * v, height, z0 + sa * u + ca * v);
                                             }}));
    }
    auto self = sv::add_self_collision(sim, sv::SelfCollisionOptions<float>{.thickness = kThickness, .friction = 0.3f});
    // Registered after self-collision, so the ball and the floor have the last word.
    auto world = sv::add_colliders(
        sim, {},
        sv::SphereCollider<float>({.center = {0.0f, kFloor - kRadius, 0.0f}, .radius = kRadius}, {.friction = 0.5f}),
        sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -kFloor}, {.friction = 0.5f}));

    const sv::StepParams<float> params{.dt = 1.0f / 60, .gravity = {0, 9.8f, 0}, .iterations = 16, .substeps = 6};
    float closest_ever = closest_between_sheets(sim);
    int closest_frame = 0;
    std::printf("frame  contacts  rebuilds  closest between sheets\n");
    for (int frame = 1; frame <= 240; ++frame)
    {
        sim.step(params);
        const float closest = closest_between_sheets(sim);
        if (closest < closest_ever)
        {
            closest_ever = closest;
            closest_frame = frame;
        }
        if (frame % 60 == 0)
            std::printf("%5d  %8d  %8llu  %8.4f\n", frame, self.contacts(), (unsigned long long)self.rebuilds(),
                        closest);
    }
    const float closest_now = closest_between_sheets(sim);
    const bool too_close = closest_ever < 0.5f * kThickness;
    std::printf("closest between sheets at any frame: %.4f (frame %d); closer than half the thickness (%.2f): %s\n",
                closest_ever, closest_frame, 0.5f * kThickness, too_close ? "yes" : "no");

    // Each sheet as cloth.lines(), a polyline per row and per column, in its own colour (the lowest
    // first), so the layers can be told apart: one segment per spring in one colour, as
    // debug_lines(sim) draws them, would blend four sheets into one tangle and take six times the
    // file. The untorn grid is exactly what the solver holds. projected() moves every polyline a
    // DebugGeometry holds, so the grids go into one to get the oblique view.
    const sv::svg::Projection oblique{.depth_angle_degrees = 45, .depth_scale = 0.7, .y_scale = 1};
    const sv::svg::Stroke colours[kSheets] = {
        {"#5b7fb8", 1.0, 0.9}, {"#2a9d8f", 1.0, 0.9}, {"#7b5ea7", 1.0, 0.9}, {"#d62828", 1.0, 0.9}};
    char first[160], second[160];
    std::snprintf(first, sizeof first,
                  "from the front: %d sheets of %d x %d, spacing %.1f, thickness %.1f\nclosest between sheets after "
                  "4 s: %.3f, at any frame: %.3f",
                  kSheets, kSide, kSide, double(kSpacing), double(kThickness), double(closest_now),
                  double(closest_ever));
    // The caption keeps to the physics: how often the list was rebuilt is a cost, printed above,
    // and changes whenever the search is tuned.
    std::snprintf(second, sizeof second,
                  "oblique view (z drawn at %.0f degrees, %.1f of its length)\n%d pairs in contact",
                  oblique.depth_angle_degrees, oblique.depth_scale, self.contacts());
    sv::svg::Figure figure({.columns = 2, .cell_width = 470});
    auto& front = figure.add_panel(first);
    auto& side = figure.add_panel(second);
    for (int k = 0; k < kSheets; ++k)
    {
        sv::DebugGeometry<float> grid;
        grid.outlines = sheets[std::size_t(k)].lines();
        front.add_polylines(grid.outlines, colours[k]);
        side.add_polylines(sv::svg::projected(grid, oblique).outlines, colours[k]);
    }
    front.add(sv::outline(world));
    side.add(sv::svg::projected(sv::outline(world), oblique));
    figure.save(out + "/pile.svg");
    std::printf("diverged: %s\n", sim.diverged() ? "yes" : "no");
    return sim.diverged() ? 1 : 0;
}
