// The viewer's scenes, after the examples of the same names (examples/*.cpp), made a little finer
// where a shaded surface shows more than a line drawing. +y points down, as everywhere in the
// library's pictures; the camera turns it the right way up.
#include "scene.hpp"

#include "../garment.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if SIMDVERLET_HAVE_OPENMP
#    include <simdverlet/core/parallel/openmp.hpp>
#endif
#if SIMDVERLET_HAVE_TINYOBJLOADER
#    include <simdverlet/io/obj_mesh.hpp>
#endif

namespace viewer
{
namespace
{
constexpr float kPi = std::numbers::pi_v<float>;

/// Self-collision on every scene's particles, off unless the scene turns it on: the panel's
/// checkbox switches it. Registered before the colliders, which then have the last word.
void add_self_collision(Scene& s, float thickness)
{
    s.self_collision = sv::add_self_collision(
        s.sim, sv::SelfCollisionOptions<float>{.thickness = thickness, .friction = s.settings.friction});
}

/// A wind field the panel's wind slider scales: `field` at strength 1.
void add_wind(Scene& s, std::function<Vec3(const Vec3&, float)> field)
{
    s.wind_strength = std::make_shared<float>(s.settings.wind);
    sv::add_wind(s.sim, {.gust = [strength = s.wind_strength, field](const Vec3& p, float t) -> Vec3 {
                             return *strength * field(p, t);
                         },
                         .cloths = s.cloths});
}

std::unique_ptr<Scene> hello_cloth()
{
    auto s = std::make_unique<Scene>();
    s->settings = {.stiffness = 60.0f, .iterations = 16, .substeps = 1, .wind = 0.0f, .friction = 0.6f};
    // The guide's sheet at twice the resolution: 40 x 20 at spacing 0.25, flat above a ball.
    s->cloths.push_back(sv::add_cloth(
        s->sim,
        {.width = 40, .height = 20, .spacing = 0.25f, .stiffness = s->settings.stiffness, .position = [](int c, int r) {
             return Vec3(0.25f * float(c), 0.0f, 0.25f * float(r));
         }}));
    add_wind(*s, [](const Vec3&, float) { return Vec3(2.0f, 0.0f, 0.5f); });
    add_self_collision(*s, 0.25f);
    s->colliders = sv::add_colliders(
        s->sim, {.relaxations = 2},
        sv::SphereCollider<float>({.center = {4.875f, 2.6f, 2.375f}, .radius = 1.6f},
                                  {.friction = s->settings.friction, .margin = 0.05f}),
        sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -4.2f}, {.friction = s->settings.friction}));
    s->params = {.gravity = {0.0f, 2.0f, 0.0f}, .iterations = 16};
    s->camera = {.target = {4.875f, 2.6f, 2.375f}, .distance = 13.0f, .yaw = 0.5f, .pitch = 0.45f};
    return s;
}

std::unique_ptr<Scene> flag()
{
    auto s = std::make_unique<Scene>();
    s->settings = {.stiffness = 60.0f, .iterations = 16, .substeps = 1, .wind = 1.0f, .friction = 0.3f};
    // Nailed to a pole at every fifth row; the gusts grow until the flag tears loose.
    s->cloths.push_back(sv::add_cloth(
        s->sim,
        {.width = 36, .height = 24, .spacing = 0.166f, .stiffness = s->settings.stiffness, .pinned = [](int c, int r) {
             return c == 0 && r % 6 == 0;
         }}));
    add_wind(*s, [](const Vec3& p, float t) {
        const float base = 2.0f + std::min(t, 8.0f);
        const float puff = 1.0f + 0.5f * std::sin(3.0f * t - 0.8f * p.x());
        return Vec3(base * puff, 0.0f, 0.6f * base * std::sin(1.7f * t + 0.5f * p.y()));
    });
    sv::add_tearing(s->sim, {.max_strain = 0.4f, .max_tears_per_frame = 4});
    add_self_collision(*s, 0.15f);
    s->colliders = sv::add_colliders(
        s->sim, {},
        sv::CapsuleCollider<float>({.a = {-0.08f, -1.0f, 0.0f}, .b = {-0.08f, 9.0f, 0.0f}, .radius = 0.06f},
                                   {.friction = s->settings.friction}));
    s->params = {.gravity = {0, 2, 0}, .iterations = 16};
    s->camera = {.target = {3.0f, 2.5f, 0.0f}, .distance = 10.0f, .yaw = 0.4f, .pitch = 0.15f};
    return s;
}

std::unique_ptr<Scene> rope_bridge()
{
    auto s = std::make_unique<Scene>();
    s->settings = {.stiffness = 60.0f, .iterations = 16, .substeps = 1, .wind = 0.0f, .friction = 0.5f};
    // A rope between two posts 8 apart with 8.8 units of rope, and a banner tied beneath it.
    s->strands.push_back(sv::add_strand(s->sim, {.count = 45,
                                                 .spacing = 0.2f,
                                                 .stiffness = 150.0f,
                                                 .bend_stiffness = 0.2f,
                                                 .position = [](int n) { return Vec3(8.0f * float(n) / 44.0f, 0, 0); },
                                                 .pinned = [](int n) { return n == 0 || n == 44; }}));
    auto& rope = s->strands.back();
    s->cloths.push_back(sv::add_cloth(
        s->sim,
        {.width = 13, .height = 6, .spacing = 0.4f, .stiffness = s->settings.stiffness, .position = [](int c, int r) {
             return Vec3(1.6f + 0.4f * float(c), 0.3f + 0.4f * float(r), 0.0f);
         }}));
    auto& banner = s->cloths.back();
    for (int c = 0; c < banner.width(); c += 2)
    {
        const Vec3 top = banner.position(c, 0);
        int nearest = 0;
        for (int n = 1; n < rope.count(); ++n)
            if ((rope.position(n) - top).norm() < (rope.position(nearest) - top).norm())
                nearest = n;
        rope.attach_to(banner.index(c, 0), nearest);
    }
    add_wind(*s, [](const Vec3& p, float t) { return Vec3(0.0f, 0.0f, 3.0f + 2.0f * std::sin(2.0f * t + p.x())); });
    add_self_collision(*s, 0.3f);
    s->colliders = sv::add_colliders(
        s->sim, {}, sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -6.0f}, {.friction = 0.5f}));
    s->params = {.gravity = {0, 4, 0}, .iterations = 16};
    s->camera = {.target = {4.0f, 1.5f, 0.0f}, .distance = 11.0f, .yaw = 0.35f, .pitch = 0.2f};
    return s;
}

std::unique_ptr<Scene> pile()
{
    auto s = std::make_unique<Scene>();
    s->settings = {
        .stiffness = 1500.0f, .iterations = 16, .substeps = 6, .wind = 0.0f, .friction = 0.5f, .self_collision = true};
    // Four 24 x 24 sheets stacked 0.15 apart above a ball on the floor, each turned a little.
    constexpr int kSide = 24;
    constexpr float kSpacing = 0.1f, kFloor = 1.2f, kRadius = 0.6f;
    const float turn[4] = {0.0f, 25.0f, 55.0f, 80.0f};
    for (int k = 0; k < 4; ++k)
    {
        const float a = turn[k] * kPi / 180.0f, ca = std::cos(a), sa = std::sin(a);
        const float height = -0.15f - 0.15f * float(k);
        s->cloths.push_back(sv::add_cloth(s->sim, {.width = kSide,
                                                   .height = kSide,
                                                   .spacing = kSpacing,
                                                   .stiffness = s->settings.stiffness,
                                                   .position = [=](int c, int r) {
                                                       const float u = kSpacing * (float(c) - 0.5f * (kSide - 1));
                                                       const float v = kSpacing * (float(r) - 0.5f * (kSide - 1));
                                                       return Vec3(ca * u - sa * v, height, sa * u + ca * v);
                                                   }}));
    }
    add_wind(*s, [](const Vec3&, float) { return Vec3(1.5f, 0.0f, 0.0f); });
    add_self_collision(*s, 0.1f);
    s->colliders = sv::add_colliders(
        s->sim, {},
        sv::SphereCollider<float>({.center = {0.0f, kFloor - kRadius, 0.0f}, .radius = kRadius},
                                  {.friction = s->settings.friction}),
        sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -kFloor}, {.friction = s->settings.friction}));
    s->params = {.dt = 1.0f / 60, .gravity = {0, 9.8f, 0}, .iterations = 16, .substeps = 6};
    s->camera = {.target = {0.0f, 0.6f, 0.0f}, .distance = 4.0f, .yaw = 0.6f, .pitch = 0.5f};
    return s;
}

/// The cape's character: a capsule walking a circle of radius 2 in 6 s, counter-clockwise seen
/// from above.
struct Walker
{
    static constexpr int kWidth = 12, kHeight = 16;
    static constexpr float kSpacing = 0.07f, kRadius = 2.0f, kPeriod = 6.0f, kBody = 0.3f;
    static constexpr float kShoulders = -1.5f, kHips = -0.7f;

    Vec3 centre, forward, right;

    explicit Walker(float t)
    {
        const float a = 2.0f * kPi * t / kPeriod;
        centre = {kRadius * std::cos(a), 0.0f, kRadius * std::sin(a)};
        forward = {-std::sin(a), 0.0f, std::cos(a)};
        right = forward.cross(Vec3(0, -1, 0)).normalized();
    }

    /// Column c of the cape's top row: along the shoulders, just behind the back.
    Vec3 shoulder(int c) const
    {
        const float across = kSpacing * (float(c) - 0.5f * float(kWidth - 1));
        return centre + right * across - forward * (kBody + 0.03f) + Vec3(0, kShoulders, 0);
    }
};

std::unique_ptr<Scene> cape()
{
    auto s = std::make_unique<Scene>();
    s->settings = {.stiffness = 3000.0f, .iterations = 8, .substeps = 4, .wind = 0.0f, .friction = 0.3f};
    const Walker start(0.0f);
    s->cloths.push_back(sv::add_cloth(s->sim, {.width = Walker::kWidth,
                                               .height = Walker::kHeight,
                                               .spacing = Walker::kSpacing,
                                               .stiffness = s->settings.stiffness,
                                               .position = [start](int c, int r) {
                                                   Vec3 p = start.shoulder(c);
                                                   p.y() += Walker::kSpacing * float(r);
                                                   return p;
                                               }}));
    const auto cape = s->cloths.back();
    auto shoulders = sv::add_motion_constraints(
        s->sim, sv::MotionConstraintsOptions<float>{
                    .range = {.begin = cape.base(), .end = cape.base() + Walker::kWidth}, .max_distance = 0.0f});
    std::vector<std::size_t> top_row;
    for (int c = 0; c < Walker::kWidth; ++c)
        top_row.push_back(cape.index(c, 0));
    sv::add_tethers(s->sim, sv::TethersOptions<float>{.cloth = cape, .anchors = top_row, .slack = 1.02f});
    add_wind(*s, [](const Vec3&, float) { return Vec3(1.0f, 0.0f, 0.0f); });
    add_self_collision(*s, 0.07f);
    s->colliders = sv::add_colliders(s->sim, {});
    auto& body = s->colliders.add(sv::CapsuleCollider<float>({.a = start.centre + Vec3(0, Walker::kHips, 0),
                                                              .b = start.centre + Vec3(0, Walker::kShoulders, 0),
                                                              .radius = Walker::kBody},
                                                             {.friction = s->settings.friction}));
    s->colliders.add(sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = 0.0f}, {.friction = 0.5f}));
    s->animate = [shoulders, &body](Scene&, float t) mutable {
        const Walker w(t);
        std::vector<Vec3> targets(Walker::kWidth), normals(Walker::kWidth, -w.forward);
        for (int c = 0; c < Walker::kWidth; ++c)
            targets[std::size_t(c)] = w.shoulder(c);
        shoulders.set_targets(targets, normals);
        body.set_segment(w.centre + Vec3(0, Walker::kHips, 0), w.centre + Vec3(0, Walker::kShoulders, 0));
    };
    s->follow = [](const Scene& scene) { return Vec3(Walker(scene.time).centre + Vec3(0, -1.1f, 0)); };
    s->params = {.dt = 1.0f / 60, .gravity = {0, 9.8f, 0}, .iterations = 8, .substeps = 4};
    s->camera = {.target = {2.0f, -1.1f, 0.0f}, .distance = 3.2f, .yaw = 2.2f, .pitch = 0.35f};
    return s;
}
std::string& garment_file()
{
    static std::string path;
    return path;
}

/// A skirt (or the user's OBJ garment) on a capsule walking a circle of radius 1.5 in 8 s: a mesh
/// cloth held at its waistband by motion constraints, free below, with self-collision and a breeze.
std::unique_ptr<Scene> garment_scene()
{
    static constexpr float kRadius = 1.5f, kPeriod = 8.0f, kBody = 0.22f, kWaist = -1.0f, kKnees = -0.4f, kHead = -1.8f;
    struct Pose
    {
        Vec3 centre;
        float heading;
    };
    const auto pose = [=](float t) {
        const float a = 2.0f * kPi * t / kPeriod;
        return Pose{Vec3(kRadius * std::cos(a), 0.0f, kRadius * std::sin(a)), a};
    };
    auto s = std::make_unique<Scene>();
    s->settings = {
        .stiffness = 100.0f, .iterations = 2, .substeps = 12, .wind = 1.0f, .friction = 0.3f, .self_collision = true};
    sv::TriangleMesh<float> mesh;
    if (garment_file().empty())
        mesh = garment::skirt(kBody + 0.02f, 0.75f, 0.9f, 14, 28);
    else
    {
#if SIMDVERLET_HAVE_TINYOBJLOADER
        mesh = sv::load_obj_mesh<float>(garment_file());
        garment::fit_to_waist(mesh, 2.4f * kBody);
#else
        throw std::invalid_argument("this viewer was built without tinyobjloader: it cannot read " + garment_file());
#endif
    }
    const Pose start = pose(0.0f);
    for (auto& v : mesh.vertices)
        v += start.centre + Vec3(0, kWaist, 0);
    float top = 1e30f;
    for (const auto& v : mesh.vertices)
        top = std::min(top, v.y());
    s->cloths.push_back(
        sv::add_mesh_cloth(s->sim, {.mesh = mesh, .stiffness = s->settings.stiffness, .name = "skirt"}));
    const auto dress = s->cloths.back();
    auto waist = sv::add_motion_constraints(
        s->sim, sv::MotionConstraintsOptions<float>{.range = dress.range(), .max_distance = 0});
    std::vector<float> distances(dress.count());
    std::vector<Vec3> offsets(dress.count());
    for (std::size_t k = 0; k < dress.count(); ++k)
    {
        const Vec3 rest = mesh.vertices[dress.vertex(dress.base() + k)];
        distances[k] = rest.y() < top + 0.01f ? 0.0f : 1e6f;
        offsets[k] = rest - start.centre;
        if (distances[k] == 0.0f)
            offsets[k] = garment::outside_body(offsets[k], kBody + 0.02f);
    }
    waist.set_max_distance(distances);
    add_self_collision(*s, 0.05f);
    add_wind(*s, [](const Vec3&, float t) { return Vec3(0.6f + 0.3f * std::sin(0.7f * t), 0.0f, 0.3f); });
    s->colliders = sv::add_colliders(s->sim, {});
    auto& body = s->colliders.add(sv::CapsuleCollider<float>(
        {.a = start.centre + Vec3(0, kKnees, 0), .b = start.centre + Vec3(0, kHead, 0), .radius = kBody},
        {.friction = s->settings.friction}));
    s->colliders.add(sv::PlaneCollider<float>({.normal = {0, -1, 0}, .offset = 0.0f}, {.friction = 0.5f}));
    s->animate = [waist, offsets, pose, &body](Scene&, float t) mutable {
        const Pose p = pose(t);
        const float c = std::cos(p.heading), sn = std::sin(p.heading);
        std::vector<Vec3> targets(offsets.size()), normals(offsets.size(), Vec3(0, -1, 0));
        for (std::size_t k = 0; k < offsets.size(); ++k)
        {
            const Vec3& o = offsets[k];
            targets[k] = p.centre + Vec3(c * o.x() - sn * o.z(), o.y(), sn * o.x() + c * o.z());
        }
        waist.set_targets(targets, normals);
        body.set_segment(p.centre + Vec3(0, kKnees, 0), p.centre + Vec3(0, kHead, 0));
    };
    s->follow = [pose](const Scene& scene) { return Vec3(pose(scene.time).centre + Vec3(0, -0.8f, 0)); };
    s->params = {.dt = 1.0f / 60, .gravity = {0, 9.8f, 0}, .iterations = 2, .substeps = 12};
    s->camera = {.target = {1.5f, -0.8f, 0.0f}, .distance = 3.0f, .yaw = 2.2f, .pitch = 0.3f};
    return s;
}
} // namespace

void set_garment_file(std::string path)
{
    garment_file() = std::move(path);
}

void Scene::apply(const Settings& s)
{
    if (s.stiffness != settings.stiffness)
        for (const auto& cloth : cloths)
            for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
            {
                auto& layers = sim.constraint_layers();
                for (std::size_t k = 0; k < layers.count(); ++k)
                    for (int slot = 0; slot < sv::kSlots && layers[k].covers(i); ++slot)
                        if (layers[k].live(i, slot)) // torn springs stay torn
                            // A grid's springs all take the slider's value; a mesh cloth's keep
                            // their shares of it, scaled.
                            layers[k].set_stiffness(i, slot,
                                                    cloth.is_grid() ? s.stiffness
                                                                    : layers[k].stiffness(i, slot) * s.stiffness /
                                                                          settings.stiffness);
            }
    params.iterations = s.iterations;
    params.substeps = s.substeps;
    *wind_strength = s.wind;
    if (!colliders.removed())
        for (std::size_t k = 0; k < colliders.size(); ++k)
            colliders[k].set_friction(s.friction);
    if (self_collision)
    {
        self_collision->set_friction(s.friction);
        self_collision->set_enabled(s.self_collision);
    }
    if (s.threads != settings.threads)
    {
#if SIMDVERLET_HAVE_OPENMP
        if (s.threads > 1)
            sim.set_executor(std::make_shared<sv::OpenMPExecutor>(s.threads), 512); // small scenes: small chunks
        else
            sim.set_executor(nullptr);
#endif
    }
    settings = s;
}

void Scene::step()
{
    time += params.dt;
    if (animate)
        animate(*this, time);
    sim.step(params);
}

const std::vector<std::string>& scene_names()
{
    static const std::vector<std::string> names = {"hello_cloth", "flag", "rope_bridge", "pile", "cape", "garment"};
    return names;
}

std::unique_ptr<Scene> make_scene(const std::string& name)
{
    std::unique_ptr<Scene> scene;
    if (name == "hello_cloth")
        scene = hello_cloth();
    else if (name == "flag")
        scene = flag();
    else if (name == "rope_bridge")
        scene = rope_bridge();
    else if (name == "pile")
        scene = pile();
    else if (name == "cape")
        scene = cape();
    else if (name == "garment")
        scene = garment_scene();
    else
    {
        std::string known;
        for (const auto& n : scene_names())
            known += (known.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown scene '" + name + "' (known: " + known + ")");
    }
    scene->name = name;
    // The scene's own settings, pushed once so the self-collision switch and friction agree.
    const Settings start = scene->settings;
    scene->settings.threads = 1;
    scene->apply(start);
    return scene;
}

} // namespace viewer
