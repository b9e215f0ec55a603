// garment: a skirt made from a triangle mesh, worn by a capsule "character" walking a circle. The
// skirt is built here as a cone of rings zipped together irregularly (no grid), so it is a mesh
// cloth: a stretch spring per edge, a bend spring across each inner edge, masses from the areas.
// Motion constraints hold its waistband on the moving hips (max distance 0 there, free below),
// self-collision keeps its folds apart, a light wind blows across the walk, and the body is a
// capsule collider registered last. Prints, every second, how far the waist is from its targets
// and how close any particle came to the body's axis; writes garment.svg: the walk from above and
// the skirt from the side.
//
//   garment [OUTPUT_FOLDER] [--obj FILE]
//
// With --obj, the garment is a user's OBJ file instead (loaded and repaired by load_obj_mesh), held
// at its top-most vertices, dropped on the same walking body. The +y axis points down, as in the
// pictures this library draws: a file modelled y-up is flipped on load.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

#include "garment.hpp"
#if SIMDVERLET_HAVE_TINYOBJLOADER
#    include <simdverlet/obj_mesh.hpp>
#endif

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

namespace
{
constexpr float kWalkRadius = 1.5f; // the character walks a circle of this radius about the origin
constexpr float kWalkPeriod = 8.0f; // seconds a lap: 1.2 units per second
constexpr float kBodyRadius = 0.22f;
constexpr float kWaist = -1.0f; // height of the waistband (y, up is negative)
constexpr float kHead = -1.8f;  // the capsule runs from the knees to the head
constexpr float kKnees = -0.4f;

/// The character's centre on the floor and the direction it walks at time t.
struct Pose
{
    Vec3 centre, forward;
};

Pose pose_at(float t)
{
    const float a = 2.0f * std::numbers::pi_v<float> * t / kWalkPeriod;
    return {Vec3(kWalkRadius * std::cos(a), 0.0f, kWalkRadius * std::sin(a)), Vec3(-std::sin(a), 0.0f, std::cos(a))};
}

/// The garment: the skirt above, or a user's OBJ, placed around the character's waist at t = 0.
sv::TriangleMesh<float> garment_mesh(const char* obj_path, const Pose& start)
{
    sv::TriangleMesh<float> mesh;
    if (obj_path)
    {
#if SIMDVERLET_HAVE_TINYOBJLOADER
        mesh = sv::load_obj_mesh<float>(obj_path); // what it repairs, it logs
        garment::fit_to_waist(mesh, 2.4f * kBodyRadius);
#else
        std::fprintf(stderr, "garment: built without tinyobjloader, so --obj %s cannot be read\n", obj_path);
        std::exit(2);
#endif
    }
    else
        mesh = garment::skirt(kBodyRadius + 0.02f, 0.75f, 0.9f, 14, 28);
    for (auto& v : mesh.vertices)
        v += start.centre + Vec3(0, kWaist, 0);
    return mesh;
}
} // namespace

int main(int argc, char** argv)
{
    std::string out = ".";
    const char* obj = nullptr;
    for (int k = 1; k < argc; ++k)
    {
        if (std::strcmp(argv[k], "--obj") == 0 && k + 1 < argc)
            obj = argv[++k];
        else
            out = argv[k];
    }
    const Pose start = pose_at(0.0f);
    const auto mesh = garment_mesh(obj, start);
    // Held where it is highest: the waistband (top-most vertices, within a hundredth of a unit).
    float top = 1e30f;
    for (const auto& v : mesh.vertices)
        top = std::min(top, v.y());
    const auto held = [&](std::size_t v) { return mesh.vertices[v].y() < top + 0.01f; };

    sv::Simulation<float> sim;
    auto dress = sv::add_mesh_cloth(sim, {.mesh = mesh, .stiffness = 100, .name = "skirt"});
    // Every particle under motion constraints: the waistband glued to the hips, the rest free.
    auto waist = sv::add_motion_constraints(sim, sv::MotionOptions<float>{.range = dress.range(), .max_distance = 0});
    std::vector<float> distances(dress.count());
    std::vector<Vec3> offsets(dress.count()); // each held particle's place relative to the body's centre
    std::size_t held_count = 0;
    for (std::size_t k = 0; k < dress.count(); ++k)
    {
        const std::size_t v = dress.vertex(dress.base() + k);
        distances[k] = held(v) ? 0.0f : 1e6f;
        offsets[k] = mesh.vertices[v] - start.centre;
        if (held(v))
            offsets[k] = garment::outside_body(offsets[k], kBodyRadius + 0.02f);
        held_count += held(v) ? 1 : 0;
    }
    waist.set_max_distance(distances);
    sv::add_self_collision(sim, sv::SelfCollisionOptions<float>{.thickness = 0.05f, .range = dress.range()});
    sv::add_wind(sim, {.velocity = {0.6f, 0, 0.3f}, .cloths = {dress}, .pressure = 0.4f});
    // The body, registered last: it has the last word over where the skirt may be.
    auto body = sv::add_colliders(sim, {});
    auto& capsule = body.add(sv::CapsuleCollider<float>(
        {.a = start.centre + Vec3(0, kKnees, 0), .b = start.centre + Vec3(0, kHead, 0), .radius = kBodyRadius},
        {.friction = 0.3f}));

    const sv::StepParams<float> params{.dt = 1.0f / 60, .gravity = {0, 9.8f, 0}, .iterations = 2, .substeps = 12};
    std::printf("skirt: %zu vertices, %zu triangles, %zu held at the waist, %zu constraint layers, stability %.2f\n",
                dress.count(), dress.triangles().size(), held_count, sim.constraint_layers().count(),
                sv::stability_ratio(sim, params));
    std::vector<Vec3> targets(dress.count()), normals(dress.count(), Vec3(0, -1, 0));
    std::vector<Vec3> path; // the body's centre, for the picture
    float worst_waist = 0, nearest_axis = 1e30f;
    std::printf("second  waist from targets  nearest particle to the body's axis\n");
    for (int frame = 1; frame <= 8 * 60; ++frame)
    {
        const float t = float(frame) / 60.0f;
        const Pose p = pose_at(t);
        // The hips turn with the walk: a held particle's offset, rotated to face where it walks.
        const float turn = std::atan2(p.forward.z(), p.forward.x()) - std::atan2(start.forward.z(), start.forward.x());
        const float c = std::cos(turn), s = std::sin(turn);
        for (std::size_t k = 0; k < dress.count(); ++k)
        {
            const Vec3& o = offsets[k];
            targets[k] = p.centre + Vec3(c * o.x() - s * o.z(), o.y(), s * o.x() + c * o.z());
        }
        waist.set_targets(targets, normals);
        capsule.set_segment(p.centre + Vec3(0, kKnees, 0), p.centre + Vec3(0, kHead, 0));
        sim.step(params);
        path.push_back(p.centre + Vec3(0, kWaist, 0));

        float from_targets = 0, axis = 1e30f;
        for (std::size_t k = 0; k < dress.count(); ++k)
        {
            const Vec3 x = sim.state().position(dress.base() + k);
            if (distances[k] == 0.0f)
                from_targets = std::max(from_targets, (x - targets[k]).norm());
            if (x.y() > kHead && x.y() < kKnees)
                axis = std::min(axis, Vec3(x.x() - p.centre.x(), 0, x.z() - p.centre.z()).norm());
        }
        worst_waist = std::max(worst_waist, from_targets);
        nearest_axis = std::min(nearest_axis, axis);
        if (frame % 60 == 0)
            std::printf("%6d  %18.2e  %35.3f\n", frame / 60, double(from_targets), double(axis));
    }
    std::printf("over the walk: waist at most %.2e from its targets; no particle nearer the body's axis than %.3f "
                "(its radius %.2f)\n",
                double(worst_waist), double(nearest_axis), double(kBodyRadius));
    // How the skirt hangs at the end: the hem's (the lowest rest vertices') mean distance from the
    // body's axis, and how far below the waist it is.
    float bottom = -1e30f;
    for (const auto& v : mesh.vertices)
        bottom = std::max(bottom, v.y());
    const Pose end = pose_at(8.0f);
    double hem_radius = 0, rest_radius = 0, hem_depth = 0;
    int hem = 0;
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
        if (mesh.vertices[v].y() > bottom - 0.01f)
        {
            const Vec3 x = dress.position(v), r = mesh.vertices[v];
            hem_radius += double(Vec3(x.x() - end.centre.x(), 0, x.z() - end.centre.z()).norm());
            rest_radius += double(Vec3(r.x() - start.centre.x(), 0, r.z() - start.centre.z()).norm());
            hem_depth += double(x.y() - kWaist);
            ++hem;
        }
    std::printf("the hem hangs %.2f below the waist, %.2f from the body's axis on average (%.2f at rest)\n",
                hem_depth / hem, hem_radius / hem, rest_radius / hem);

    char first[160], second[160];
    std::snprintf(first, sizeof first, "from above: a skirt of %zu vertices on a body\nwalking a circle of radius %.1f",
                  dress.count(), double(kWalkRadius));
    std::snprintf(second, sizeof second, "from the side, after %.0f s\nwaist at most %.1e from its targets",
                  double(kWalkPeriod), double(worst_waist));
    sv::svg::Figure figure({.columns = 2, .cell_width = 470});
    auto& above = figure.add_panel(first);
    auto& beside = figure.add_panel(second);
    const sv::svg::Stroke cloth_stroke{"#b85b7f", 0.6, 0.8}, path_stroke{"#999999", 1.0, 0.8};
    sv::DebugGeometry<float> walk;
    walk.outlines.push_back(path);
    above.add_polylines(sv::svg::projected(walk, sv::svg::Projection::top()).outlines, path_stroke);
    // The skirt's triangles as outlines: what a renderer would draw.
    sv::DebugGeometry<float> skin;
    for (const auto& tri : dress.triangles())
        skin.outlines.push_back({dress.position(std::size_t(tri[0])), dress.position(std::size_t(tri[1])),
                                 dress.position(std::size_t(tri[2])), dress.position(std::size_t(tri[0]))});
    above.add_polylines(sv::svg::projected(skin, sv::svg::Projection::top()).outlines, cloth_stroke);
    above.add(sv::svg::projected(sv::outline(body), sv::svg::Projection::top()));
    beside.add_polylines(skin.outlines, cloth_stroke);
    beside.add(sv::outline(body));
    figure.save(out + "/garment.svg");
    std::printf("diverged: %s\n", sim.diverged() ? "yes" : "no");
    return sim.diverged() ? 1 : 0;
}
