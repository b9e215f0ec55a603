// garment: a skirt of about 5 000 vertices made from a triangle mesh, worn by a capsule
// "character" walking a circle, all in metres. The skirt is built here as a cone of rings zipped
// together irregularly (no grid), 2-3 cm edges, and made of a fabric in physical units
// (ClothMaterial: 0.2 kg/m^2, 10^4 N/m), which the implicit cloth solve holds at four substeps.
// Its waistband is pinned and moved with the hips each frame, a light wind blows across the walk,
// and the body is a capsule collider registered last. Prints, every second, how close any particle
// came to the body's axis and the skirt's largest edge strain; writes garment.svg: the walk from
// above and the skirt from the side.
//
//   garment [OUTPUT_FOLDER] [--obj FILE]
//
// With --obj, the garment is a user's OBJ file instead (loaded and repaired by load_obj_mesh), held
// at its top-most vertices, dropped on the same walking body. The +y axis points down, as in the
// pictures this library draws: a file modelled y-up is flipped on load.
#include <algorithm>
#include <chrono>
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
#    include <simdverlet/io/obj_mesh.hpp>
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
        mesh = garment::skirt(kBodyRadius + 0.02f, 0.75f, 0.9f, 40, 60);
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
    const sv::ClothMaterial<float> cotton{.density = 0.2f, .stretch = 1e4f, .damping = 0.5f};
    auto dress = sv::add_mesh_cloth(sim, {.mesh = mesh, .material = cotton, .pinned = held, .name = "skirt"});
    // The waistband is pinned and moved with the hips each frame: a pinned vertex is a fixed end
    // of every spring in the implicit solve, so the skirt hangs from it. (A motion constraint of
    // max distance 0 would put a free vertex back after the solve had already let the skirt fall.)
    std::vector<std::size_t> waistband;
    std::vector<Vec3> offsets; // each waistband vertex's place relative to the body's centre
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
        if (held(v))
        {
            waistband.push_back(v);
            offsets.push_back(garment::outside_body(mesh.vertices[v] - start.centre, kBodyRadius + 0.02f));
        }
    const std::size_t held_count = waistband.size();
    sv::add_wind(sim, {.velocity = {0.6f, 0, 0.3f}, .cloths = {dress}, .pressure = 0.4f});
    // The body, registered last: it has the last word over where the skirt may be.
    auto body = sv::add_colliders(sim, {});
    auto& capsule = body.add(sv::CapsuleCollider<float>(
        {.a = start.centre + Vec3(0, kKnees, 0), .b = start.centre + Vec3(0, kHead, 0), .radius = kBodyRadius},
        {.friction = 0.3f}));

    const sv::StepParams<float> params{.dt = 1.0f / 60, .gravity = {0, 9.8f, 0}, .substeps = 4};
    std::printf("skirt: %zu vertices, %zu triangles, %zu held at the waist\n", dress.count(), dress.triangles().size(),
                held_count);
    std::vector<Vec3> path; // the body's centre, for the picture
    float nearest_axis = 1e30f;
    // The skirt's edges at rest, to read its strain by: every triangle side once per triangle.
    const auto strain = [&] {
        float worst = 0;
        for (const auto& t : dress.triangles())
            for (int k = 0; k < 3; ++k)
            {
                const auto a = std::size_t(t[std::size_t(k)]), b = std::size_t(t[std::size_t((k + 1) % 3)]);
                const float rest = (mesh.vertices[a] - mesh.vertices[b]).norm();
                worst = std::max(worst, std::abs((dress.position(a) - dress.position(b)).norm() / rest - 1.0f));
            }
        return worst;
    };
    float worst_strain = 0;
    std::chrono::steady_clock::duration stepping{};
    std::printf("second  nearest particle to the body's axis  largest edge strain\n");
    for (int frame = 1; frame <= 8 * 60; ++frame)
    {
        const float t = float(frame) / 60.0f;
        const Pose p = pose_at(t);
        // The hips turn with the walk: a waistband vertex's offset, rotated to face where it walks.
        const float turn = std::atan2(p.forward.z(), p.forward.x()) - std::atan2(start.forward.z(), start.forward.x());
        const float c = std::cos(turn), s = std::sin(turn);
        for (std::size_t k = 0; k < waistband.size(); ++k)
        {
            const Vec3& o = offsets[k];
            dress.teleport(waistband[k], p.centre + Vec3(c * o.x() - s * o.z(), o.y(), s * o.x() + c * o.z()));
        }
        capsule.set_segment(p.centre + Vec3(0, kKnees, 0), p.centre + Vec3(0, kHead, 0));
        const auto started = std::chrono::steady_clock::now();
        sim.step(params);
        stepping += std::chrono::steady_clock::now() - started;
        path.push_back(p.centre + Vec3(0, kWaist, 0));

        float axis = 1e30f;
        for (std::size_t k = 0; k < dress.count(); ++k)
        {
            const Vec3 x = sim.state().position(dress.base() + k);
            if (x.y() > kHead && x.y() < kKnees)
                axis = std::min(axis, Vec3(x.x() - p.centre.x(), 0, x.z() - p.centre.z()).norm());
        }
        nearest_axis = std::min(nearest_axis, axis);
        const float strained = strain();
        worst_strain = std::max(worst_strain, strained);
        if (frame % 60 == 0)
            std::printf("%6d  %35.3f  %19.2f %%\n", frame / 60, double(axis), 100.0 * double(strained));
    }
    std::printf("stepping took %.2f ms a frame; the largest edge strain of the walk was %.2f %%\n",
                std::chrono::duration<double, std::milli>(stepping).count() / (8 * 60), 100.0 * double(worst_strain));
    std::printf("over the walk: no particle nearer the body's axis than %.3f (its radius %.2f)\n", double(nearest_axis),
                double(kBodyRadius));
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
    std::snprintf(second, sizeof second, "from the side, after %.0f s\nlargest edge strain of the walk %.1f %%",
                  double(kWalkPeriod), 100.0 * double(worst_strain));
    sv::svg::Figure figure({.columns = 2, .cell_width = 470});
    auto& above = figure.add_panel(first);
    auto& beside = figure.add_panel(second);
    const sv::svg::Stroke cloth_stroke{"#b85b7f", 0.6, 0.8}, path_stroke{"#999999", 1.0, 0.8};
    sv::DebugGeometry<float> walk;
    walk.outlines.push_back(path);
    above.add_polylines(sv::svg::projected(walk, sv::svg::Projection::top()).outlines, path_stroke);
    // The skirt's triangles as outlines, about 1 500 of them (every few on a fine mesh), so the
    // picture stays light.
    sv::DebugGeometry<float> skin;
    const std::size_t every = std::max<std::size_t>(1, dress.triangles().size() / 1500);
    for (std::size_t t = 0; t < dress.triangles().size(); t += every)
    {
        const auto& tri = dress.triangles()[t];
        skin.outlines.push_back({dress.position(std::size_t(tri[0])), dress.position(std::size_t(tri[1])),
                                 dress.position(std::size_t(tri[2])), dress.position(std::size_t(tri[0]))});
    }
    above.add_polylines(sv::svg::projected(skin, sv::svg::Projection::top()).outlines, cloth_stroke);
    above.add(sv::svg::projected(sv::outline(body), sv::svg::Projection::top()));
    beside.add_polylines(skin.outlines, cloth_stroke);
    beside.add(sv::outline(body));
    figure.save(out + "/garment.svg");
    std::printf("diverged: %s\n", sim.diverged() ? "yes" : "no");
    return sim.diverged() ? 1 : 0;
}
