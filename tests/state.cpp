// State3: layout, padding, masses and the accessors users read positions and velocities through.
#include <cstdint>
#include <initializer_list>

#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;

TEMPLATE_TEST_CASE("arrays are aligned and padded to whole 64-byte blocks of inert lanes", "[state]", float, double)
{
    Simulation<TestType> sim;
    for (int i = 0; i < 5; ++i)
        sim.add_particle({TestType(i), TestType(2 * i), TestType(3 * i)});
    const auto& s = sim.state();
    const auto a = sim.state().arrays_view();
    const auto& k = sim.constraints();
    CHECK(k.size() == 5);
    // Every particle arrives with four empty slots: no neighbour, no rest length, no stiffness.
    for (std::size_t i = 0; i < 5; ++i)
    {
        CHECK(k.free_slot(i) == 0);
        CHECK(k.live_count(i) == 0);
        for (int slot = 0; slot < 4; ++slot)
        {
            CAPTURE(i, slot);
            CHECK(k.neighbour(i, slot) == -1);
            CHECK(k.rest_length(i, slot) == 0);
            CHECK(k.stiffness(i, slot) == 0);
        }
    }
    CHECK(s.size() == 5);
    CHECK(s.padded_size() % simd::kPadLanes<TestType> == 0);
    CHECK(s.padded_size() >= s.size());
    const std::initializer_list<const TestType*> arrays{a.x, a.y, a.z, a.px, a.py, a.pz, a.ax, a.ay, a.az, a.inv_mass};
    for (const TestType* p : arrays)
        CHECK(reinterpret_cast<std::uintptr_t>(p) % simd::kAlignment == 0);
    // Padding is inert in all ten arrays: at the origin, at rest, no force, pinned.
    for (const TestType* p : arrays)
        for (std::size_t i = s.size(); i < s.padded_size(); ++i)
            CHECK(p[i] == 0);
}

TEMPLATE_TEST_CASE("velocity is the per-frame displacement x - px", "[state]", float, double)
{
    using V = Vec3<TestType>;
    Simulation<TestType> sim;
    auto& s = sim.state();
    const std::size_t i = sim.add_particle(V(1, 2, 3));
    CHECK(s.velocity(i) == V::Zero());
    s.set_velocity(i, V(TestType(0.25), TestType(-0.5), TestType(1)));
    CHECK(s.position(i) == V(1, 2, 3));
    CHECK(s.velocity(i) == V(TestType(0.25), TestType(-0.5), TestType(1)));
    CHECK(s.px()[i] == TestType(0.75));
    s.set_position(i, V(5, 5, 5), true);
    CHECK(s.velocity(i) == V(TestType(0.25), TestType(-0.5), TestType(1)));
    s.set_position(i, V(6, 6, 6));
    CHECK(s.velocity(i) == V::Zero());
}

TEST_CASE("a state without masses is unit mass everywhere and refuses to pin", "[state]")
{
    Simulation<float> sim(Masses::unit);
    auto& s = sim.state();
    sim.add_particle({0, 0, 0});
    sim.add_particle({1, 0, 0});
    CHECK_FALSE(s.has_masses());
    CHECK(s.inv_mass().empty());
    CHECK(s.inverse_mass(1) == 1.0f);
    CHECK_FALSE(s.is_pinned(0));
    const State3<float> before = s;
    CHECK_THROWS_AS(s.pin(1), std::logic_error);
    CHECK_THROWS_WITH(s.pin(1), ContainsSubstring("cannot give particle 1 inverse mass 0") &&
                                    ContainsSubstring("unit masses (Masses::unit)"));
    CHECK_THROWS_AS(sim.add_particle({2, 0, 0}, 0.0f), std::logic_error);
    CHECK(s == before);
}

TEST_CASE("removing particles shifts the rest down in order and leaves the freed lanes inert", "[state]")
{
    Simulation<double> sim;
    for (int i = 0; i < 20; ++i)
        sim.add_particle({double(i), 0, 0}, 0.5);
    sim.queue_remove(3);
    sim.queue_remove(17);
    sim.step({}); // at rest, no gravity: nothing moves but the renumbering
    const auto& s = sim.state();
    REQUIRE(s.size() == 18);
    CHECK(s.x()[2] == 2.0);
    CHECK(s.x()[3] == 4.0);
    CHECK(s.x()[16] == 18.0);
    CHECK(s.x()[17] == 19.0);
    const auto a = sim.state().arrays_view();
    // The two freed lanes, and any padding beyond them, are inert in all ten arrays.
    REQUIRE(s.padded_size() >= 20);
    for (const double* p :
         std::initializer_list<const double*>{a.x, a.y, a.z, a.px, a.py, a.pz, a.ax, a.ay, a.az, a.inv_mass})
        for (std::size_t i = s.size(); i < s.padded_size(); ++i)
            CHECK(p[i] == 0.0);
}
