// Wind: drag on free particles, pressure and skin friction on cloth triangles.
#include <cstdio>

#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// Total force the wind puts into the accumulators in one step, read before the solve.
template <class T>
Vec3<double> total_wind_force(Simulation<T>& sim)
{
    Vec3<double> total = Vec3<double>::Zero();
    sim.step({.iterations = 0}, [&](State3<T>& s, T) {
        for (std::size_t i = 0; i < s.size(); ++i)
            total += s.force(i).template cast<double>();
    });
    return total;
}
} // namespace

TEST_CASE("a sheet held at its top edge sails further in a stronger wind", "[wind]")
{
    std::vector<double> deflection;
    for (float speed : {0.0f, 2.0f, 4.0f, 8.0f})
    {
        Simulation<float> sim;
        auto sheet = add_cloth(sim, {.pinned = [](int, int r) { return r == 0; }});
        add_wind(sim, {.velocity = {0, 0, speed}, .cloths = {sheet}});
        double mean = 0;
        for (int frame = 0; frame < 600; ++frame)
        {
            sim.step(guide_step<float>(16));
            if (frame >= 300) // mean over the last 300 frames: it flutters
                for (float z : sim.state().z())
                    mean += double(z) / (300.0 * double(sim.size()));
        }
        REQUIRE_FALSE(sim.diverged());
        deflection.push_back(mean);
    }
    std::printf("mean deflection at wind 0 / 2 / 4 / 8: %.3f / %.3f / %.3f / %.3f\n", deflection[0], deflection[1],
                deflection[2], deflection[3]);
    CHECK(deflection[0] == 0.0);
    for (std::size_t n = 1; n < deflection.size(); ++n)
        CHECK(deflection[n] > deflection[n - 1] + 0.1);
}

TEST_CASE("face-on, a sheet feels pressure x area x speed^2; edge-on almost nothing", "[wind]")
{
    const auto blow = [](const Vec3<float>& wind) {
        Simulation<float> sim;
        auto sheet = add_cloth(sim, {.curvature_strength = 0.0f}); // flat in x-y, 9.5 x 4.5
        add_wind(sim, {.velocity = wind, .cloths = {sheet}});
        return total_wind_force(sim);
    };
    const Vec3<double> face = blow({0, 0, 5});
    const Vec3<double> edge = blow({5, 0, 0});
    CHECK(face.z() == Approx(1.0 * 9.5 * 4.5 * 25.0).epsilon(1e-4));
    CHECK(std::abs(face.x()) < 1e-3);
    CHECK(edge.norm() < 0.03 * face.norm()); // only skin friction, 2 %
}

TEST_CASE("a cloth moving with the wind feels no wind", "[wind]")
{
    Simulation<float> sim;
    auto sheet = add_cloth(sim, {.curvature_strength = 0.0f, .position = [](int c, int r) {
                                     return Vec3<float>(0.5f * float(c), 0.1f * float(c % 3), 0.5f * float(r));
                                 }});
    const Vec3<float> wind(1.5f, -0.5f, 2.0f);
    add_wind(sim, {.velocity = wind, .cloths = {sheet}});
    const float dt = 1.0f / 60.0f;
    for (std::size_t i = 0; i < sim.size(); ++i)
        sim.state().set_velocity(i, wind * dt); // per-frame displacement of the wind's speed
    const Vec3<double> f = total_wind_force(sim);
    CHECK(f.norm() < 1e-3);
}

TEST_CASE("a free particle approaches the wind velocity", "[wind]")
{
    Simulation<double> sim;
    sim.add_particle({0, 0, 0});
    const Vec3<double> wind(3, 0, -1);
    add_wind(sim, {.velocity = wind, .drag = 0.5, .particles = {}});
    for (int frame = 0; frame < 1200; ++frame)
        sim.step({.damping = 1.0});
    const Vec3<double> v = sim.state().velocity(0) * 60.0;
    CHECK((v - wind).norm() < 1e-3 * wind.norm());
}

TEST_CASE("gusts are called with the position and the wind's own clock", "[wind]")
{
    Simulation<float> sim;
    sim.add_particle({1, 2, 3});
    std::vector<float> times;
    auto wind = add_wind(sim, {.gust = [&](const Vec3<float>& p, float t) {
                                   CHECK(p == Vec3<float>(1, 2, 3));
                                   times.push_back(t);
                                   return Vec3<float>::Zero();
                               },
                               .particles = {}});
    for (int frame = 0; frame < 3; ++frame)
        sim.step({.dt = 0.5f});
    CHECK(times == std::vector<float>{0.0f, 0.5f, 1.0f});
    CHECK(wind.time() == 1.5f);
}

TEST_CASE("bad wind input throws and changes nothing", "[wind][errors]")
{
    Simulation<float> sim;
    auto sheet = add_cloth(sim, {});
    const auto before = sim.bulk_forces().names();
    CHECK_THROWS_WITH(add_wind(sim, {.velocity = {NAN, 0, 0}}), ContainsSubstring("NaN"));
    CHECK_THROWS_WITH(add_wind(sim, {.drag = -1.0f}), ContainsSubstring("-1"));
    Simulation<float> other;
    CHECK_THROWS_AS(add_wind(other, {.cloths = {sheet}}), std::invalid_argument);
    CHECK(sim.bulk_forces().names() == before);
    auto wind = add_wind(sim, {.velocity = {1, 0, 0}});
    CHECK_THROWS_AS(wind.set_velocity({0, NAN, 0}), std::invalid_argument);
    CHECK(wind.options().velocity == Vec3<float>(1, 0, 0));
}
