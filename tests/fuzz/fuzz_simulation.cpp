// libFuzzer target: reads its input as a script of operations on one simulation (add particles,
// cloths, strands, colliders, tearing, wind; cut, attach, set slots, queue removals, grab; step
// with arbitrary parameters; snapshot and restore; save and load, sometimes corrupted) and checks
// the library's invariants after every operation:
//   - only the documented exceptions escape (invalid_argument, out_of_range, logic_error, and
//     runtime_error from load); anything else, or a crash, is a finding;
//   - every slot's neighbour is in range and not the owner, an unused slot has stiffness 0, rest
//     lengths and stiffnesses are finite and >= 0, the constraint set covers every particle;
//   - pinned particles do not move in a step (unless a removal renumbered them);
//   - tearing and cutting never leave half of a symmetric pair behind.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include <simdverlet/simdverlet.hpp>

#include "support.hpp"

namespace
{
using namespace simdverlet;
using simdverlet::testing::half_pairs;
using V = Vec3<float>;

void require(bool ok, const char* what)
{
    if (!ok)
    {
        std::fprintf(stderr, "invariant broken: %s\n", what);
        std::abort();
    }
}

/// A float that is usually sensible and sometimes hostile.
float any_float(FuzzedDataProvider& in, float lo, float hi)
{
    switch (in.ConsumeIntegralInRange<int>(0, 15))
    {
    case 0:
        return std::numeric_limits<float>::quiet_NaN();
    case 1:
        return std::numeric_limits<float>::infinity();
    case 2:
        return -in.ConsumeFloatingPointInRange<float>(0, 1e6f);
    case 3:
        return 0.0f;
    default:
        return in.ConsumeFloatingPointInRange<float>(lo, hi);
    }
}

V any_point(FuzzedDataProvider& in)
{
    return {any_float(in, -10, 10), any_float(in, -10, 10), any_float(in, -10, 10)};
}

void check_constraints(const Simulation<float>& sim)
{
    const auto& k = sim.constraints();
    require(k.size() == sim.size(), "the constraint set covers every particle");
    for (std::size_t i = 0; i < sim.size(); ++i)
        for (int s = 0; s < 4; ++s)
        {
            const std::int32_t j = k.neighbour(i, s);
            require(j >= -1 && j < std::int32_t(sim.size()), "neighbour in range");
            require(j != std::int32_t(i), "no self constraint");
            require(j >= 0 || k.stiffness(i, s) == 0.0f, "an unused slot has stiffness 0");
            require(std::isfinite(k.stiffness(i, s)) && k.stiffness(i, s) >= 0.0f, "stiffness finite, >= 0");
            require(std::isfinite(k.rest_length(i, s)) && k.rest_length(i, s) >= 0.0f, "rest finite, >= 0");
        }
}

struct World
{
    Simulation<float> sim;
    std::vector<Cloth<float>> cloths;
    std::vector<Strand<float>> strands;
    std::vector<ColliderSet<float>> colliders;
    std::optional<Snapshot<float>> saved;
    int stages = 0;

    std::string next_name(const char* what) { return std::string(what) + std::to_string(stages++); }
};

void add_collider(World& w, FuzzedDataProvider& in)
{
    if (w.colliders.empty() || in.ConsumeBool())
        w.colliders.push_back(add_colliders(
            w.sim, {.name = w.next_name("colliders"), .relaxations = in.ConsumeIntegralInRange<int>(-1, 3)}));
    auto& set = w.colliders[in.ConsumeIntegralInRange<std::size_t>(0, w.colliders.size() - 1)];
    const ContactMaterial<float> m{.friction = any_float(in, 0, 1),
                                   .tangential_damping = any_float(in, 0, 1),
                                   .restitution = any_float(in, 0, 1),
                                   .margin = any_float(in, 0, 0.2f)};
    switch (in.ConsumeIntegralInRange<int>(0, 5))
    {
    case 0:
        set.add(PlaneCollider<float>({.normal = any_point(in), .offset = any_float(in, -10, 10)}, m));
        break;
    case 1:
        set.add(SphereCollider<float>(
            {.center = any_point(in), .radius = any_float(in, 0, 4), .inside = in.ConsumeBool()}, m));
        break;
    case 2:
        set.add(CapsuleCollider<float>(
            {.a = any_point(in), .b = any_point(in), .radius = any_float(in, 0, 2), .inside = in.ConsumeBool()}, m));
        break;
    case 3:
        set.add(BoxCollider<float>({.min = any_point(in), .max = any_point(in), .inside = in.ConsumeBool()}, m));
        break;
    case 4:
    {
        // A few triangles over a few points, indices possibly out of range, possibly degenerate
        // or repeated (dropped, or refused); then perhaps a move, so the next pass sweeps the
        // mesh's motion.
        TriangleMeshCollider<float>::Shape shape{.thickness = any_float(in, -0.1f, 0.5f),
                                                 .two_sided = in.ConsumeBool()};
        const int points = in.ConsumeIntegralInRange<int>(3, 6);
        for (int k = 0; k < points; ++k)
            shape.vertices.push_back(any_point(in));
        for (int t = in.ConsumeIntegralInRange<int>(1, 4); t > 0; --t)
            shape.triangles.push_back({in.ConsumeIntegralInRange<std::int32_t>(-1, points),
                                       in.ConsumeIntegralInRange<std::int32_t>(-1, points),
                                       in.ConsumeIntegralInRange<std::int32_t>(-1, points)});
        shape.repair = in.ConsumeBool() ? MeshRepair::drop : MeshRepair::refuse;
        auto& mesh = set.add(TriangleMeshCollider<float>(shape, m));
        const MeshRepairs& dropped = mesh.repairs();
        require(mesh.vertices().size() == shape.vertices.size() &&
                    mesh.triangles().size() + dropped.degenerate_triangles + dropped.repeated_triangles ==
                        shape.triangles.size() &&
                    (shape.repair == MeshRepair::drop || !dropped.any()),
                "a mesh collider keeps its vertices and drops only what its report counts");
        if (in.ConsumeBool())
        {
            auto moved = shape.vertices;
            for (auto& v : moved)
                v += any_point(in) * 0.1f;
            mesh.set_vertices(moved);
        }
        break;
    }
    default:
        set.add(SdfCollider<float>({.field = [](const V& p) { return p.norm() - 2.0f; },
                                    .epsilon = any_float(in, 1e-4f, 0.1f),
                                    .max_steps = in.ConsumeIntegralInRange<int>(-1, 3)},
                                   m));
    }
}

/// Self-collision, tethers, strain limiting or motion constraints, with settings that may be bad.
void add_contact_or_stretch_stage(World& w, FuzzedDataProvider& in)
{
    auto& sim = w.sim;
    const auto any_range = [&]() -> ParticleRange {
        const std::size_t a = in.ConsumeIntegralInRange<std::size_t>(0, sim.size() + 2);
        return {.begin = a, .end = in.ConsumeIntegralInRange<std::size_t>(a, sim.size() + 2)};
    };
    switch (in.ConsumeIntegralInRange<int>(0, 3))
    {
    case 0:
        add_self_collision(sim, SelfCollisionOptions<float>{.thickness = any_float(in, -0.1f, 1),
                                                            .range = any_range(),
                                                            .friction = any_float(in, -0.1f, 1),
                                                            .passes = in.ConsumeIntegralInRange<int>(0, 3),
                                                            .name = w.next_name("self")});
        break;
    case 1:
        if (!w.cloths.empty())
            add_tethers(sim, TethersOptions<float>{
                                 .cloth = w.cloths[in.ConsumeIntegralInRange<std::size_t>(0, w.cloths.size() - 1)],
                                 .kind = in.ConsumeBool() ? TetherKind::geodesic : TetherKind::euclidean,
                                 .slack = any_float(in, 0.5f, 3),
                                 .islands = in.ConsumeIntegralInRange<int>(0, 5),
                                 .name = w.next_name("tethers")});
        break;
    case 2:
        add_strain_limit(sim, StrainLimitOptions<float>{.max_stretch = any_float(in, -0.1f, 0.5f),
                                                        .max_compression = any_float(in, -0.1f, 0.5f),
                                                        .passes = in.ConsumeIntegralInRange<int>(0, 4),
                                                        .range = any_range(),
                                                        .name = w.next_name("limit")});
        break;
    default:
    {
        const ParticleRange range = any_range();
        auto motion = add_motion_constraints(sim,
                                             MotionConstraintsOptions<float>{.range = range,
                                                                             .max_distance = any_float(in, -0.1f, 2),
                                                                             .backstop_radius = any_float(in, 0, 1),
                                                                             .backstop_distance = any_float(in, 0, 1),
                                                                             .name = w.next_name("motion")});
        // Targets where the particles are, moved a little, perhaps one short.
        std::vector<V> targets, normals;
        for (std::size_t i = range.begin; i < std::min(range.end, sim.size()); ++i)
        {
            targets.push_back(sim.state().position(i) + any_point(in) * 0.05f);
            normals.push_back(V(0, -1, 0));
        }
        if (!targets.empty() && in.ConsumeBool())
            targets.pop_back();
        motion.set_targets(targets, normals);
    }
    }
}

void one_operation(World& w, FuzzedDataProvider& in)
{
    auto& sim = w.sim;
    const auto any_particle = [&] { return in.ConsumeIntegralInRange<std::size_t>(0, sim.size() + 2); };
    switch (in.ConsumeIntegralInRange<int>(0, 15))
    {
    case 0:
        for (int n = in.ConsumeIntegralInRange<int>(1, 8); n > 0; --n)
            sim.add_particle(any_point(in), in.ConsumeBool() ? 0.0f : any_float(in, 0.1f, 4));
        break;
    case 1:
        if (sim.size() < 1500)
            w.cloths.push_back(add_cloth(sim, {.width = in.ConsumeIntegralInRange<int>(0, 12),
                                               .height = in.ConsumeIntegralInRange<int>(0, 12),
                                               .spacing = any_float(in, 0.1f, 1),
                                               .stiffness = any_float(in, 0, 200),
                                               .curvature_strength = any_float(in, 0, 50),
                                               .pinned = [bits = in.ConsumeIntegral<std::uint32_t>()](int c, int r) {
                                                   return ((bits >> ((c + 3 * r) % 32)) & 1u) != 0;
                                               }}));
        break;
    case 2:
        if (sim.size() < 1500)
            w.strands.push_back(add_strand(sim, {.count = in.ConsumeIntegralInRange<int>(0, 20),
                                                 .spacing = any_float(in, 0.05f, 0.5f),
                                                 .stiffness = any_float(in, 0, 200),
                                                 .bend_stiffness = any_float(in, 0, 1),
                                                 .pinned = [](int n) { return n == 0; }}));
        break;
    case 3:
        add_collider(w, in);
        break;
    case 4:
    {
        const std::size_t before = half_pairs(sim);
        add_tearing(sim, {.max_strain = any_float(in, 0.05f, 2),
                          .max_tears_per_frame = in.ConsumeIntegralInRange<std::size_t>(0, 1000),
                          .name = w.next_name("tearing")});
        require(half_pairs(sim) == before, "adding tearing changes no constraint");
        break;
    }
    case 5:
    {
        const std::size_t before = half_pairs(sim);
        cut(sim, any_point(in), any_point(in), static_cast<ViewPlane>(in.ConsumeIntegralInRange<int>(0, 2)));
        require(half_pairs(sim) <= before, "a cut leaves no half pair behind");
        break;
    }
    case 6:
        if (!w.strands.empty())
        {
            auto& strand = w.strands[in.ConsumeIntegralInRange<std::size_t>(0, w.strands.size() - 1)];
            strand.attach_to(any_particle(), in.ConsumeIntegralInRange<int>(-1, 21));
        }
        break;
    case 7:
        sim.queue_remove(any_particle());
        break;
    case 8:
    {
        // Pinned particles must stay put through a step that renumbers nothing.
        std::vector<std::pair<std::size_t, V>> pins;
        if (sim.pending_removals() == 0)
            for (std::size_t i = 0; i < sim.size(); ++i)
                if (sim.state().is_pinned(i))
                    pins.emplace_back(i, sim.state().position(i));
        const std::size_t halves = half_pairs(sim);
        const bool vectorized = in.ConsumeBool();
        sim.set_vectorized(vectorized);
        sim.step({.dt = any_float(in, 1e-4f, 0.05f),
                  .damping = any_float(in, 0.5f, 1),
                  .gravity = any_point(in),
                  .iterations = in.ConsumeIntegralInRange<int>(-1, 24),
                  .substeps = in.ConsumeIntegralInRange<int>(0, 3)});
        for (const auto& [i, p] : pins)
        {
            const V now = sim.state().position(i);
            require(!p.allFinite() || (now.array() == p.array()).all(), "pinned particles do not move");
        }
        require(half_pairs(sim) <= halves, "tearing leaves no half pair behind");
        break;
    }
    case 9:
        if (in.ConsumeBool() || !w.saved)
            w.saved = snapshot(sim);
        else
        {
            const Snapshot<float> copy = *w.saved;
            restore(sim, copy);
            const Snapshot<float> now = snapshot(sim);
            require(now.state == copy.state && now.constraints == copy.constraints && now.stages == copy.stages,
                    "restore is exact, stage state included");
            // Stepping on from a restore is deterministic with every stage registered: twice the
            // same restore and step give the same bits.
            const StepParams<float> params{.gravity = {0, 2, 0}, .iterations = 4, .substeps = 2};
            sim.step(params);
            const Snapshot<float> first = snapshot(sim);
            restore(sim, copy);
            sim.step(params);
            const Snapshot<float> second = snapshot(sim);
            require(first.state == second.state && first.constraints == second.constraints &&
                        first.stages == second.stages,
                    "a restored run steps to the same bits");
        }
        break;
    case 10:
    {
        std::stringstream bytes(std::ios::in | std::ios::out | std::ios::binary);
        save(sim, bytes);
        std::string data = bytes.str();
        if (in.ConsumeBool() && !data.empty())
            data[in.ConsumeIntegralInRange<std::size_t>(0, data.size() - 1)] ^= char(
                1 + in.ConsumeIntegral<std::uint8_t>() % 255);
        if (in.ConsumeBool())
            data.resize(in.ConsumeIntegralInRange<std::size_t>(0, data.size()));
        std::istringstream back(data, std::ios::binary);
        const Snapshot<float> before = snapshot(sim);
        const auto unchanged = [&] {
            const Snapshot<float> now = snapshot(sim);
            return now.state == before.state && now.constraints == before.constraints && now.stages == before.stages;
        };
        try
        {
            load(sim, back);
        }
        catch (const std::runtime_error&)
        {
            require(unchanged(), "a failed load changes nothing");
            throw;
        }
        catch (const std::logic_error&)
        {
            require(unchanged(), "a refused load changes nothing");
            throw;
        }
        if (data == bytes.str())
            require(unchanged(), "loading what was saved gives back the same state and stage state");
        break;
    }
    case 11:
        sim.constraints().set_slot(any_particle(), in.ConsumeIntegralInRange<int>(-1, 4),
                                   in.ConsumeIntegralInRange<std::int32_t>(-2, std::int32_t(sim.size()) + 2),
                                   any_float(in, 0, 3), any_float(in, 0, 200));
        break;
    case 12:
        if (!w.cloths.empty())
            add_wind(sim, {.velocity = any_point(in),
                           .drag = any_float(in, 0, 2),
                           .range = {.begin = 0, .end = in.ConsumeIntegralInRange<std::size_t>(0, sim.size())},
                           .cloths = {w.cloths[in.ConsumeIntegralInRange<std::size_t>(0, w.cloths.size() - 1)]},
                           .name = w.next_name("wind")});
        break;
    case 13:
        if (!w.cloths.empty())
        {
            auto& cloth = w.cloths[in.ConsumeIntegralInRange<std::size_t>(0, w.cloths.size() - 1)];
            switch (in.ConsumeIntegralInRange<int>(0, 3))
            {
            case 0:
                cloth.grab_nearest(any_point(in));
                break;
            case 1:
                cloth.move_grabbed(any_point(in));
                break;
            case 2:
                cloth.release();
                break;
            default:
                cloth.teleport(in.ConsumeIntegralInRange<int>(-1, 13), in.ConsumeIntegralInRange<int>(-1, 13),
                               any_point(in), in.ConsumeBool());
            }
        }
        break;
    case 14:
        add_contact_or_stretch_stage(w, in);
        break;
    default:
        if (!w.cloths.empty() && in.ConsumeBool())
            w.cloths[in.ConsumeIntegralInRange<std::size_t>(0, w.cloths.size() - 1)].remove();
        else if (!w.strands.empty())
            w.strands[in.ConsumeIntegralInRange<std::size_t>(0, w.strands.size() - 1)].remove();
    }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const bool quiet = [] {
        set_log_hook([](LogLevel, std::string_view) {}); // divergence is an expected outcome here
        return true;
    }();
    (void)quiet;
    FuzzedDataProvider in(data, size);
    World w;
    for (int op = 0; op < 64 && in.remaining_bytes() > 0; ++op)
    {
        try
        {
            one_operation(w, in);
        }
        catch (const std::invalid_argument&)
        {
        }
        catch (const std::out_of_range&)
        {
        }
        catch (const std::logic_error&)
        {
        }
        catch (const std::runtime_error&)
        {
        }
        check_constraints(w.sim);
    }
    return 0;
}
