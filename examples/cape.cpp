// cape: a cape on a capsule "character" walking a circle. The cape's top row follows the
// shoulders through motion constraints (max distance 0: glued to targets that move every frame),
// tethers hang the rest of the cape from that row so it does not stretch as it flies out behind,
// and the body is a capsule collider registered last, so the cape drapes over the back instead of
// passing through it. Prints, every second, how far the top row is from its targets and how far
// any particle is past its tether, and writes cape.svg: the walk seen from above and from the side.
// The +y axis points down, as in the pictures this library draws.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

namespace
{
constexpr int kWidth = 12, kHeight = 16;
constexpr float kSpacing = 0.07f;
constexpr float kWalkRadius = 2.0f; // the character walks a circle of this radius about the origin
constexpr float kWalkPeriod = 6.0f; // seconds a lap: 2.1 units per second
constexpr float kBodyRadius = 0.3f; // the capsule's radius
constexpr float kShoulders = -1.5f; // height of the shoulder line (y, up is negative)
constexpr float kHips = -0.7f;      // the capsule runs from the hips to the shoulders

/// Where the character is and which way it faces at time t: the centre of its body on the circle
/// and the unit direction of travel (counter-clockwise seen from above).
struct Pose
{
    Vec3 centre, forward, right;
};

Pose pose_at(float t)
{
    const float a = 2.0f * std::numbers::pi_v<float> * t / kWalkPeriod;
    const Vec3 centre(kWalkRadius * std::cos(a), 0.0f, kWalkRadius * std::sin(a));
    const Vec3 forward(-std::sin(a), 0.0f, std::cos(a));
    return {centre, forward, forward.cross(Vec3(0, -1, 0)).normalized()};
}

/// Column c of the cape's top row: spread along the shoulders, just behind the back.
Vec3 shoulder_point(const Pose& p, int c)
{
    const float across = kSpacing * (float(c) - 0.5f * float(kWidth - 1));
    return p.centre + p.right * across - p.forward * (kBodyRadius + 0.03f) + Vec3(0, kShoulders, 0);
}
} // namespace

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::Simulation<float> sim;
    const Pose start = pose_at(0.0f);
    const auto cape = sv::add_cloth(sim, {.width = kWidth,
                                          .height = kHeight,
                                          .spacing = kSpacing,
                                          .stiffness = 3000.0f,
                                          .position = [start](int c, int r) -> Vec3 {
                                              return shoulder_point(start, c) + Vec3(0, kSpacing * float(r), 0);
                                          }});
    // The top row follows the shoulders; the rest hangs from it.
    auto shoulders = sv::add_motion_constraints(
        sim, sv::MotionConstraintsOptions<float>{.range = {.begin = cape.base(), .end = cape.base() + kWidth},
                                                 .max_distance = 0.0f});
    std::vector<std::size_t> top_row;
    for (int c = 0; c < kWidth; ++c)
        top_row.push_back(cape.index(c, 0));
    const auto tethers = sv::add_tethers(sim,
                                         sv::TethersOptions<float>{.cloth = cape, .anchors = top_row, .slack = 1.02f});
    // The body, registered last: it has the last word over where the cape may be.
    auto body = sv::add_colliders(sim, {});
    auto& capsule = body.add(sv::CapsuleCollider<float>(
        {.a = start.centre + Vec3(0, kHips, 0), .b = start.centre + Vec3(0, kShoulders, 0), .radius = kBodyRadius},
        {.friction = 0.3f}));

    const sv::StepParams<float> params{.dt = 1.0f / 60, .gravity = {0, 9.8f, 0}, .iterations = 8, .substeps = 4};
    std::vector<Vec3> targets(kWidth), normals(kWidth);
    std::vector<std::vector<Vec3>> trail; // the cape's bottom edge once a second, for the picture
    std::vector<Vec3> path;               // the body's centre, for the picture
    float worst_target = 0, worst_tether = 0;
    std::printf("second  top row from targets  worst past a tether\n");
    for (int frame = 1; frame <= 360; ++frame)
    {
        const float t = float(frame) / 60.0f;
        const Pose p = pose_at(t);
        for (int c = 0; c < kWidth; ++c)
        {
            targets[std::size_t(c)] = shoulder_point(p, c);
            normals[std::size_t(c)] = -p.forward; // out of the back
        }
        shoulders.set_targets(targets, normals);
        capsule.set_segment(p.centre + Vec3(0, kHips, 0), p.centre + Vec3(0, kShoulders, 0));
        sim.step(params);
        path.push_back(p.centre + Vec3(0, kShoulders, 0));

        float from_targets = 0, past_tether = 0;
        for (int c = 0; c < kWidth; ++c)
            from_targets = std::max(from_targets, (cape.position(c, 0) - targets[std::size_t(c)]).norm());
        for (std::size_t i = cape.base(); i < cape.end(); ++i)
        {
            const auto anchor = tethers.anchor_of(i);
            const float limit = tethers.slack() * tethers.rest_distance(i);
            if (anchor && limit > 0)
                past_tether = std::max(past_tether,
                                       (sim.state().position(i) - sim.state().position(*anchor)).norm() / limit - 1.0f);
        }
        worst_target = std::max(worst_target, from_targets);
        worst_tether = std::max(worst_tether, past_tether);
        if (frame % 60 == 0)
            std::printf("%6d  %20.2e  %19.2e\n", frame / 60, double(from_targets), double(past_tether));
    }
    std::printf("over the walk: top row at most %.2e from its targets, no particle more than %.2e past its tether\n",
                double(worst_target), double(worst_tether));

    // Above: the walk's circle and the cape now; beside: the cape against the body.
    char first[160], second[160];
    std::snprintf(first, sizeof first,
                  "from above: a %d x %d cape on a body walking a circle of radius %.0f\nin %.0f s (2.1 units/s)",
                  kWidth, kHeight, double(kWalkRadius), double(kWalkPeriod));
    std::snprintf(second, sizeof second, "from the side, after %.0f s\ntop row at most %.1e from its targets",
                  double(kWalkPeriod), double(worst_target));
    sv::svg::Figure figure({.columns = 2, .cell_width = 470});
    auto& above = figure.add_panel(first);
    auto& beside = figure.add_panel(second);
    const sv::svg::Stroke cloth_stroke{"#5b7fb8", 1.0, 0.9}, path_stroke{"#999999", 1.0, 0.8};
    sv::DebugGeometry<float> walk;
    walk.outlines.push_back(path);
    above.add_polylines(sv::svg::projected(walk, sv::svg::Projection::top()).outlines, path_stroke);
    sv::DebugGeometry<float> grid;
    grid.outlines = cape.lines();
    above.add_polylines(sv::svg::projected(grid, sv::svg::Projection::top()).outlines, cloth_stroke);
    above.add(sv::svg::projected(sv::outline(body), sv::svg::Projection::top()));
    beside.add_polylines(grid.outlines, cloth_stroke);
    beside.add(sv::outline(body));
    figure.save(out + "/cape.svg");
    std::printf("diverged: %s\n", sim.diverged() ? "yes" : "no");
    return sim.diverged() ? 1 : 0;
}
