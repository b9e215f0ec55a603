// State3: layout, padding, masses and the accessors users read positions and velocities through.
#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;

TEMPLATE_TEST_CASE("arrays are aligned and padded to whole 64-byte blocks of inert lanes", "[state]", float, double)
{
    State3<TestType> s;
    for (int i = 0; i < 5; ++i)
        s.add({TestType(i), TestType(2 * i), TestType(3 * i)});
    const auto a = s.arrays_view();
    CHECK(s.size() == 5);
    CHECK(s.padded_size() % simd::kPadLanes<TestType> == 0);
    CHECK(s.padded_size() >= s.size());
    for (const TestType* p : std::initializer_list<const TestType*>{a.x, a.y, a.z, a.px, a.py, a.pz, a.ax, a.ay, a.az, a.inv_mass})
        CHECK(reinterpret_cast<std::uintptr_t>(p) % simd::kAlignment == 0);
    for (std::size_t i = s.size(); i < s.padded_size(); ++i)
    {
        CHECK(a.x[i] == 0);
        CHECK(a.inv_mass[i] == 0); // padding is pinned
    }
}

TEMPLATE_TEST_CASE("velocity is the per-frame displacement x - px", "[state]", float, double)
{
    using V = Vec3<TestType>;
    State3<TestType> s;
    const auto i = std::size_t(s.add(V(1, 2, 3)));
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
    State3<float> s(Masses::unit);
    s.add({0, 0, 0});
    s.add({1, 0, 0});
    CHECK_FALSE(s.has_masses());
    CHECK(s.inv_mass().empty());
    CHECK(s.inverse_mass(1) == 1.0f);
    CHECK_FALSE(s.is_pinned(0));
    const State3<float> before = s;
    CHECK_THROWS_AS(s.pin(1), std::logic_error);
    CHECK_THROWS_AS(s.add({2, 0, 0}, 0.0f), std::logic_error);
    CHECK(s == before);
    try
    {
        s.pin(1);
    }
    catch (const std::logic_error& e)
    {
        CHECK(std::string(e.what()).find("particle 1") != std::string::npos);
    }
}

TEST_CASE("compacting removes particles in order and leaves the freed lanes inert", "[state]")
{
    State3<double> s;
    for (int i = 0; i < 20; ++i)
        s.add({double(i), 0, 0}, 0.5);
    std::vector<bool> keep(20, true);
    keep[3] = keep[17] = false;
    s.compact(keep);
    REQUIRE(s.size() == 18);
    CHECK(s.x()[2] == 2.0);
    CHECK(s.x()[3] == 4.0);
    CHECK(s.x()[16] == 18.0);
    CHECK(s.x()[17] == 19.0);
    const auto a = s.arrays_view();
    for (std::size_t i = s.size(); i < s.padded_size(); ++i)
    {
        CHECK(a.x[i] == 0.0);
        CHECK(a.inv_mass[i] == 0.0);
    }
}
