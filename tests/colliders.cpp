// Colliders: every shape's vector path against its scalar twin, then the physics the contact
// response promises (static friction, restitution, creases) and the penalty-force trap it avoids.
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>

#include "catch.hpp"
#include "collider_twins.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

TEMPLATE_TEST_CASE("every shape's vector path equals its scalar twin", "[colliders]", float, double)
{
    using T = TestType;
    REQUIRE(simd::kLanes<T> > 1); // or the comparison would be the scalar path against itself
    const ContactMaterial<T> m{
        .friction = T(0.4), .tangential_damping = T(0.1), .restitution = T(0.5), .margin = T(0.05)};
    CHECK(check_collider_twins<T>(PlaneCollider<T>({.normal = {T(0.3), T(-1), T(0.2)}, .offset = T(-0.5)}, m)) > 20);
    CHECK(check_collider_twins<T>(SphereCollider<T>({.center = {T(0.5), 0, 0}, .radius = T(1.5)}, m)) > 20);
    CHECK(check_collider_twins<T>(SphereCollider<T>({.radius = T(2.5), .inside = true}, m)) > 20);
    CHECK(check_collider_twins<T>(CapsuleCollider<T>({.a = {-2, 0, 0}, .b = {2, T(1), 0}, .radius = T(0.8)}, m)) > 20);
    CHECK(check_collider_twins<T>(
              CapsuleCollider<T>({.a = {-1, 0, 0}, .b = {1, 0, 0}, .radius = T(2), .inside = true}, m)) > 20);
    CHECK(check_collider_twins<T>(BoxCollider<T>({.min = {-2, -2, -2}, .max = {2, T(2.5), 2}}, m)) > 20);
    CHECK(check_collider_twins<T>(BoxCollider<T>({.min = {-1, -1, -1}, .max = {1, 2, T(0.5)}, .inside = false}, m)) >
          20);
}

namespace
{
/// A collider that touches nothing and records which path each pass took.
struct PathRecorder : Collider<float>
{
    PathRecorder() : Collider<float>(ContactMaterial<float>{}) {}
    ColliderKind kind() const noexcept override { return ColliderKind::sdf; }
    std::vector<bool> vector_passes;

  protected:
    int project_range(const StateArrays<float>&, std::size_t, std::size_t) override
    {
        vector_passes.push_back(vector_path());
        return 0;
    }
};
} // namespace

TEST_CASE("a simulation's set_vectorized(false) sends its colliders down their scalar twins", "[colliders]")
{
    // Bit equality of the two paths is tested shape by shape; this checks that the switch a user
    // flips to get the scalar path reaches the colliders at all.
    auto sim = flat_sheet<float>();
    auto world = add_colliders(sim, {}, PathRecorder{});
    const auto& recorder = static_cast<const PathRecorder&>(world[0]);
    sim.step(guide_step<float>(1));
    sim.set_vectorized(false);
    sim.step(guide_step<float>(1));
    sim.set_vectorized(true);
    auto& own = static_cast<PathRecorder&>(world[0]);
    own.vectorized = false; // the collider's own switch, with the simulation's on
    sim.step(guide_step<float>(1));
    own.vectorized = true;
    sim.set_vectorized(false);
    sim.step(guide_step<float>(1));
    own.project(sim.state()); // driven directly: no simulation's switch applies
    CHECK(recorder.vector_passes == std::vector<bool>{true, false, false, false, true});
}

TEST_CASE("a projected particle ends on the surface with the normal velocity reflected", "[colliders]")
{
    Simulation<double> sim;
    sim.add_particle({0, 0.1, 0}); // 0.1 below a floor at y = 0 (legal side y <= 0)
    sim.state().set_velocity(0, {0.3, 0.2, 0});
    PlaneCollider<double> floor({.normal = {0, -1, 0}, .offset = 0}, {.friction = 0, .restitution = 0.5});
    CHECK(floor.project(sim.state()) == 1);
    CHECK(sim.state().y()[0] == 0.0);
    // Approaching at 0.2, leaving at 0.5 * 0.2; frictionless: the tangential 0.3 is kept.
    CHECK(sim.state().velocity(0).x() == Approx(0.3));
    CHECK(sim.state().velocity(0).y() == Approx(-0.1));
    // Friction removes at most friction x depth of the tangential speed.
    sim.state().set_position(0, {0, 0.1, 0});
    sim.state().set_velocity(0, {0.3, 0.2, 0});
    floor.set_friction(1.0);
    floor.project(sim.state());
    CHECK(sim.state().velocity(0).x() == Approx(0.3 - 1.0 * 0.1));
    // A particle already leaving the surface keeps its normal velocity: no energy is added.
    sim.state().set_position(0, {0, 0.1, 0});
    sim.state().set_velocity(0, {0, -0.2, 0});
    floor.project(sim.state());
    CHECK(sim.state().velocity(0).y() == Approx(-0.2));
}

TEST_CASE("a sheet dropped on a sphere with friction 0.6 stays, and with friction 0 it slides off", "[colliders]")
{
    // The guide's 20 x 10 sheet at 60 x 16, flat, dropped 0.5 units onto a sphere of radius 2.5
    // whose top sits 0.25 off the sheet's centre, so nothing but friction can hold it.
    const auto drop = [](float friction) {
        auto sim = flat_sheet<float>();
        auto world = add_colliders(
            sim, {}, SphereCollider<float>({.center = {5.0f, 3.0f, 2.25f}, .radius = 2.5f}, {.friction = friction}));
        Vec3<double> at_400 = Vec3<double>::Zero();
        int fewest_contacts = std::numeric_limits<int>::max();
        for (int frame = 1; frame <= 600; ++frame)
        {
            sim.step(guide_step<float>(16));
            if (frame == 400)
                at_400 = centroid(sim);
            if (frame > 400)
                fewest_contacts = std::min(fewest_contacts, world.contacts());
        }
        return std::tuple{(centroid(sim) - at_400).norm(), fewest_contacts};
    };
    const auto [held_moved, held_contacts] = drop(0.6f);
    const auto [slid_moved, slid_contacts] = drop(0.0f);
    CHECK(held_moved < 0.05);    // a tenth of a spacing over 200 frames: at rest
    CHECK(held_contacts >= 120); // and lying on the sphere, every frame
    CHECK(slid_moved > 1.0);     // two spacings and more: sliding off
    CHECK(slid_contacts < held_contacts);
}

namespace
{
/// One particle released at rest on a plane tilted by `degrees` about z, under gravity 9.81 along
/// +y (down), with no damping, for `frames` steps at 60 Hz. Returns how far it travelled.
double slide_on_incline(double degrees, double friction, int frames)
{
    const double theta = degrees * std::numbers::pi / 180.0;
    Simulation<double> sim;
    sim.add_particle({0, 0, 0});
    // The legal side is up the page (-y), tilted: downhill is +x.
    add_colliders(
        sim, {},
        PlaneCollider<double>({.normal = {std::sin(theta), -std::cos(theta), 0}, .offset = 0}, {.friction = friction}));
    for (int frame = 0; frame < frames; ++frame)
        sim.step({.damping = 1.0, .gravity = {0, 9.81, 0}, .iterations = 0});
    return sim.state().position(0).norm();
}
} // namespace

TEST_CASE("a particle on an incline stays exactly put while tan(theta) <= friction, else slides at g (sin - mu cos)",
          "[colliders][friction]")
{
    // Coulomb: static friction holds while the slope's pull g sin(theta) is at most mu g cos(theta);
    // past that the particle accelerates at g (sin(theta) - mu cos(theta)). Velocity-only friction
    // fails the first half by creeping g sin(theta) dt^2 a step.
    const int frames = 600; // 10 s
    const double dt = 1.0 / 60.0;
    for (double mu : {0.3, 0.6, 1.0})
        for (double degrees : {5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0})
        {
            const double theta = degrees * std::numbers::pi / 180.0;
            const double travelled = slide_on_incline(degrees, mu, frames);
            CAPTURE(mu, degrees, travelled);
            if (std::tan(theta) <= mu)
                CHECK(travelled < 1e-9);
            else
            {
                // Discrete Verlet from rest under constant a covers a dt^2 N (N + 1) / 2 in N steps.
                const double expected = 9.81 * (std::sin(theta) - mu * std::cos(theta));
                const double measured = 2.0 * travelled / (dt * dt * frames * (frames + 1.0));
                CHECK(measured == Approx(expected).epsilon(0.02));
            }
        }
}

TEST_CASE(
    "a sheet draped on a ball half its width with friction 0.6 settles and stays, and with friction 0 it slides off",
    "[colliders][friction]")
{
    // The guide's 20 x 10 sheet (9.5 units wide) dropped flat onto a ball of radius 2.4 whose top sits
    // half a spacing off the sheet's centre, so friction alone keeps it from sliding off one side.
    const auto drape = [](float friction) {
        auto sim = flat_sheet<float>();
        auto world = add_colliders(
            sim, {}, SphereCollider<float>({.center = {5.0f, 2.9f, 2.75f}, .radius = 2.4f}, {.friction = friction}));
        // 20 s to settle: the flaps hanging off the ball sway for ~15 s at damping 0.99 (a
        // swing, not a slide: the centre oscillates about one point). Velocity-only friction
        // creeps 5e-3 units a second here, and faster the further it gets.
        for (int frame = 0; frame < 1200; ++frame)
            sim.step(guide_step<float>(16));
        const Vec3<double> settled = centroid(sim);
        int fewest_contacts = std::numeric_limits<int>::max();
        for (int frame = 0; frame < 240; ++frame) // then 4 s more
        {
            sim.step(guide_step<float>(16));
            fewest_contacts = std::min(fewest_contacts, world.contacts());
        }
        return std::tuple{(centroid(sim) - settled).norm(), centroid(sim).y(), fewest_contacts};
    };
    const auto [held_moved, held_y, held_contacts] = drape(0.6f);
    const auto [slid_moved, slid_y, slid_contacts] = drape(0.0f);
    CHECK(held_moved < 1e-3);
    CHECK(held_contacts >= 120); // lying on the ball every frame
    CHECK(held_y < 2.9);         // above the ball's centre, not fallen past it
    CHECK(slid_y > 2.9 + 1.0);   // friction 0: slid off and fell below the ball's centre
}

TEST_CASE("restitution 1 keeps the bounce height, 0.9 returns 0.81 of it per bounce, none adds energy", "[colliders]")
{
    // Released at rest 3 units above a floor, no air damping, apex measured between contacts.
    // At dt = 1/240 the one gravity kick a departing frame misses (the velocity is read after
    // integration) costs about 2 g dt^2 / v of the height per bounce, about 1 % here.
    const auto apexes = [](double restitution) {
        Simulation<double> sim;
        sim.add_particle({0, 0, 0});
        auto world = add_colliders(
            sim, {}, PlaneCollider<double>({.normal = {0, -1, 0}, .offset = -3}, {.restitution = restitution}));
        std::vector<double> heights;
        double top = 3.0;
        bool rising = false;
        for (int frame = 0; frame < 20000 && heights.size() < 5; ++frame)
        {
            sim.step({.dt = 1.0 / 240, .damping = 1.0, .gravity = {0, 9.81, 0}});
            if (world.contacts() > 0)
            {
                if (rising)
                    heights.push_back(3.0 - top);
                rising = true;
                top = 3.0;
            }
            top = std::min(top, sim.state().y()[0]);
        }
        return heights;
    };
    const auto lossless = apexes(1.0);
    const auto bouncy = apexes(0.9);
    REQUIRE(lossless.size() == 5);
    REQUIRE(bouncy.size() == 5);
    double previous = 3.0;
    for (double h : lossless)
    {
        CHECK(h <= previous); // never above where it was released
        CHECK(h > 0.985 * previous);
        previous = h;
    }
    CHECK(lossless.back() > 0.95 * 3.0);
    previous = 3.0;
    for (double h : bouncy)
    {
        CHECK(h / previous == Approx(0.81).margin(0.02));
        previous = h;
    }
}

TEST_CASE("a particle in the crease of a sphere and a floor settles onto both after two relaxations", "[colliders]")
{
    // The sphere sinks 0.5 into the floor, so the crease is a 60 degree wedge, and gravity drives
    // the particle into it. One pass leaves it inside the sphere (the floor moved it back in);
    // a second pass converges it to ~1e-4 of both surfaces.
    const auto settle = [](int relaxations) {
        Simulation<double> sim;
        sim.add_particle({1.5, -0.1, 0});
        add_colliders(sim, {.relaxations = relaxations},
                      SphereCollider<double>({.center = {0, -0.5, 0}, .radius = 1}, {.friction = 0}),
                      PlaneCollider<double>({.normal = {0, -1, 0}, .offset = 0}, {.friction = 0}));
        for (int frame = 0; frame < 300; ++frame)
            sim.step({.gravity = {-2, 2, 0}});
        const Vec3<double> p = sim.state().position(0);
        return std::pair{1.0 - (p - Vec3<double>(0, -0.5, 0)).norm(), p.y()}; // depth in sphere, below floor
    };
    const auto [sphere_1, floor_1] = settle(1);
    const auto [sphere_2, floor_2] = settle(2);
    CHECK(sphere_1 > 3e-4);
    CHECK(std::abs(sphere_2) < 1.5e-4);
    CHECK(std::abs(floor_2) < 1.5e-4);
    CHECK(floor_1 <= 0.0);
}

TEST_CASE("a penalty force in place of a projection either sinks through or launches the sheet", "[colliders]")
{
    // The reason colliders are projections, measured. The same drop as above, first with the
    // projection, then with a penalty spring k (R - |d|) d / |d| registered as a bulk force, for k
    // from the cloth's own per-slot stiffness up past the explicit stability limit.
    const Vec3<float> centre(5.0f, 3.0f, 2.25f);
    const float radius = 2.5f;
    struct Outcome
    {
        double deepest; ///< worst penetration of the sphere over the run, world units
        double fastest; ///< fastest particle over the run, world units per second
    };
    const auto measure = [&](Simulation<float>& sim) {
        Outcome o{0, 0};
        for (int frame = 0; frame < 600 && !sim.diverged(); ++frame)
        {
            sim.step(guide_step<float>(16));
            for (std::size_t i = 0; i < sim.size(); ++i)
            {
                o.deepest = std::max(o.deepest, double(radius - (sim.state().position(i) - centre).norm()));
                o.fastest = std::max(o.fastest, double(sim.state().velocity(i).norm()) * 60.0);
            }
        }
        if (sim.diverged())
            o.fastest = std::numeric_limits<double>::infinity();
        return o;
    };

    auto projected = flat_sheet<float>();
    add_colliders(projected, {}, SphereCollider<float>({.center = centre, .radius = radius}, {.friction = 0.6f}));
    const Outcome reference = measure(projected);
    CHECK(reference.deepest < 1e-3);

    const double spacing = 0.5;
    for (float k : {60.0f, 240.0f, 960.0f, 3840.0f, 15360.0f, 61440.0f})
    {
        auto sim = flat_sheet<float>();
        sim.add_bulk_force("penalty", [&, k](State3<float>& s, float) {
            for (std::size_t i = 0; i < s.size(); ++i)
            {
                const Vec3<float> d = s.position(i) - centre;
                const float len = d.norm();
                if (len < radius && len > 0)
                {
                    const Vec3<float> f = k * (radius - len) * d / len;
                    s.ax()[i] += f.x();
                    s.ay()[i] += f.y();
                    s.az()[i] += f.z();
                }
            }
        });
        const Outcome o = measure(sim);
        const bool sinks = o.deepest > spacing / 10;
        const bool launched = o.fastest > 2 * reference.fastest;
        CHECK((sinks || launched));
        if (k == 60.0f)
            CHECK(o.deepest > spacing / 2); // at the cloth's own stiffness it sinks half a spacing
        if (k == 61440.0f)
            CHECK(o.fastest > 5 * reference.fastest);
    }
}

TEST_CASE("pinned particles inside a shape are never moved, and unit-mass states collide everywhere", "[colliders]")
{
    auto sim = particle_cloud<float>();
    auto unit = particle_cloud<float>(Masses::unit);
    SphereCollider<float> ball({.radius = 2.0f});
    const auto before = sim.state();
    const int contacts = ball.project(sim.state());
    const int unit_contacts = ball.project(unit.state());
    int pinned_inside = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
        if (sim.state().is_pinned(i) && before.position(i).norm() < 2.0f)
        {
            ++pinned_inside;
            CHECK(sim.state().position(i) == before.position(i));
        }
    CHECK(pinned_inside > 10);
    CHECK(unit_contacts == contacts + pinned_inside);
}

TEST_CASE("colliders can be moved, retuned, disabled, removed and detached between frames", "[colliders]")
{
    Simulation<float> sim;
    sim.add_particle({0, 0, 0});
    auto world = add_colliders(sim, {});
    auto& floor = world.add(PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -1}));
    CHECK(sim.position_projections().contains("colliders"));
    for (int frame = 0; frame < 120; ++frame)
        sim.step({.gravity = {0, 2, 0}});
    CHECK(sim.state().y()[0] == Approx(1.0f));
    CHECK(world.contacts() == 1);
    floor.set_offset(-2); // lower the floor: the particle falls to the new one
    for (int frame = 0; frame < 120; ++frame)
        sim.step({.gravity = {0, 2, 0}});
    CHECK(sim.state().y()[0] == Approx(2.0f));
    floor.enabled = false;
    sim.step({.gravity = {0, 2, 0}});
    CHECK(world.contacts() == 0);
    CHECK(sim.state().y()[0] > 2.0f);
    floor.enabled = true;
    CHECK(world.remove(floor));
    CHECK(world.size() == 0);
    CHECK(world.remove());
    CHECK_FALSE(sim.position_projections().contains("colliders"));
    CHECK_FALSE(world.remove());
}

TEST_CASE("the collider range covers only its particles and follows the simulation's size", "[colliders]")
{
    Simulation<float> sim;
    for (int i = 0; i < 10; ++i)
        sim.add_particle({float(i), 0.5f, 0});
    auto world = add_colliders(sim, {.range = {.begin = 2, .end = 5}},
                               PlaneCollider<float>({.normal = {0, -1, 0}, .offset = 0}));
    sim.step({});
    CHECK(world.contacts() == 3);
    world.set_range({});
    sim.add_particle({0, 0.5f, 0}); // appended later: covered by the default range
    sim.step({});
    CHECK(world.contacts() == 8); // 2..4 were already pushed out; the other 7 + the new one
}

TEST_CASE("bad collider input throws, names the value and changes nothing", "[colliders][errors]")
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto message = [](auto&& fn) { return error_message<std::invalid_argument>(fn); };
    CHECK(message([] { PlaneCollider<float>({.normal = {0, 0, 0}}); }).find("(0, 0, 0)") != std::string::npos);
    CHECK(message([] { SphereCollider<float>({.radius = -1}); }).find("-1") != std::string::npos);
    CHECK(message([] { CapsuleCollider<float>({.radius = -0.5f}); }).find("-0.5") != std::string::npos);
    CHECK(message([] {
              BoxCollider<float>({.min = {0, 3, 0}, .max = {1, 1, 1}});
          }).find("axis y: min 3 > max 1") != std::string::npos);
    CHECK(message([] {
              SdfCollider<float>({.field = [](const Vec3<float>& p) { return p.norm() - 1; }, .max_steps = 0});
          }).find("max_steps must be >= 1, got 0") != std::string::npos);
    CHECK(message([&] { SphereCollider<float>({}, {.friction = nan}); }).find("NaN") != std::string::npos);
    CHECK(message([] { SphereCollider<float>({}, {.restitution = 1.5f}); }).find("1.5") != std::string::npos);

    // A failed setter leaves the collider as it was.
    PlaneCollider<float> plane({.normal = {0, -1, 0}, .offset = -2});
    CHECK_THROWS_AS(plane.set_normal({0, 0, 0}), std::invalid_argument);
    CHECK(plane.normal() == Vec3<float>(0, -1, 0));
    SphereCollider<float> ball({.radius = 2});
    CHECK_THROWS_AS(ball.set_radius(-3), std::invalid_argument);
    CHECK_THROWS_AS(ball.set_tangential_damping(2), std::invalid_argument);
    CHECK(ball.shape().radius == 2.0f);
    CHECK(ball.material().tangential_damping == 0.0f);
    SdfCollider<float> sdf({.field = [](const Vec3<float>& p) { return p.norm() - 1; }});
    CHECK_THROWS_AS(sdf.set_max_steps(0), std::invalid_argument);
    CHECK(sdf.shape().max_steps == 2);
    Simulation<float> sim;
    auto world = add_colliders(sim, {});
    CHECK_THROWS_AS(world.set_relaxations(0), std::invalid_argument);
    CHECK(world.relaxations() == 1);
    CHECK_THROWS_AS(add_colliders(sim, {.name = "other", .relaxations = 0}), std::invalid_argument);
    CHECK_FALSE(sim.position_projections().contains("other"));
}

TEST_CASE("an SDF collider projects onto its field's surface and counts each particle once", "[colliders]")
{
    auto sim = particle_cloud<double>();
    // A torus around the y axis: major radius 2, minor 0.6. Frictionless, so the check below sees
    // the projection alone: friction's tangential correction runs along the tangent plane, which
    // on the saddle of a torus's inner side dips inside by the square of the correction.
    const auto field = [](const Vec3<double>& p) {
        const double q = std::hypot(p.x(), p.z()) - 2.0;
        return std::hypot(q, p.y()) - 0.6;
    };
    SdfCollider<double> torus({.field = field}, {.friction = 0});
    int inside = 0; // free particles inside the torus before the projection: each is one contact
    for (std::size_t i = 0; i < sim.size(); ++i)
        inside += !sim.state().is_pinned(i) && field(sim.state().position(i)) < 0.0 ? 1 : 0;
    REQUIRE(inside > 20);
    const int contacts = torus.project(sim.state());
    CHECK(contacts == inside);
    for (std::size_t i = 0; i < sim.size(); ++i)
    {
        const Vec3<double> p = sim.state().position(i);
        const double d = std::hypot(std::hypot(p.x(), p.z()) - 2.0, p.y()) - 0.6;
        if (!sim.state().is_pinned(i))
            CHECK(d > -1e-6);
    }
}
