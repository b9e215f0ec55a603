// reorder: particles renumbered along a Z-order curve, with the constraints, generators and stages
// following, so that the physics is unchanged to the bit and only the memory order moves.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// The guide's 41 x 23 grid with its particles relabelled by a random permutation, built from
/// particles and slots the way a mesh from a file arrives: no cloth handle, any order.
Simulation<float> shuffled_grid()
{
    Simulation<float> grid;
    add_grid<float>(grid, 41, 23, 0.5f, 60.0f, [](int c, int r) { return r == 0 && c % 5 == 0; });
    return shuffled(grid, 7);
}

/// Mean |i - j| over the live slots: how far apart in memory a spring's two ends sit.
double mean_index_gap(const Simulation<float>& sim)
{
    double sum = 0;
    std::size_t count = 0;
    for (std::size_t i = 0; i < sim.size(); ++i)
        for (int s = 0; s < 4; ++s)
            if (sim.constraints().live(i, s))
            {
                sum += std::abs(double(sim.constraints().neighbour(i, s)) - double(i));
                ++count;
            }
    return sum / double(count);
}

/// The scene both runs step: gravity, a ball under the sheet, a pull on one particle.
void dress(Simulation<float>& sim, std::size_t pulled)
{
    add_colliders(sim, {}, SphereCollider<float>({.center = {10, 4, 0}, .radius = 3}, {.friction = 0.5f}));
    sim.add_force_generator(pulled, [](const State3<float>&, std::size_t, float) { return Vec3<float>(30, 0, 5); });
}
} // namespace

TEST_CASE("reorder brings a shuffled sheet's springs together in memory and changes no bit of its motion", "[reorder]")
{
    // The physical truth: renumbering is a relabelling. Every particle keeps its slots in their
    // order and reads the same neighbour positions, so the same particle moves the same way, to the
    // bit, on the vector and the scalar path. What changes is the distance in memory between a
    // spring's ends.
    for (bool vectorized : {true, false})
    {
        INFO("vectorized " << vectorized);
        auto plain = shuffled_grid();
        auto sorted = shuffled_grid();
        const double before = mean_index_gap(sorted);
        const auto new_index = reorder(sorted);
        const double after = mean_index_gap(sorted);
        CHECK(after < before / 10);
        std::vector<std::size_t> seen(new_index);
        std::sort(seen.begin(), seen.end());
        for (std::size_t k = 0; k < seen.size(); ++k)
            REQUIRE(seen[k] == k); // a permutation
        dress(plain, 100);
        dress(sorted, new_index[100]);
        plain.set_vectorized(vectorized);
        sorted.set_vectorized(vectorized);
        for (int frame = 0; frame < 120; ++frame)
        {
            plain.step(guide_step<float>(16));
            sorted.step(guide_step<float>(16));
        }
        std::size_t differing = 0;
        for (std::size_t i = 0; i < plain.size(); ++i)
        {
            const auto a = plain.state().position(i), b = sorted.state().position(new_index[i]);
            differing += std::memcmp(a.data(), b.data(), sizeof(float) * 3) != 0;
        }
        CHECK(differing == 0);
        CHECK(furthest_apart(plain, shuffled_grid()) > 1.0); // it moved: the sheet fell and swung
    }
}

TEST_CASE("reorder carries force generators and renumbers only its range", "[reorder]")
{
    auto sim = shuffled_grid();
    const std::size_t n = sim.size();
    const auto id = sim.add_force_generator(
        n - 1, [](const State3<float>&, std::size_t, float) { return Vec3<float>(1, 0, 0); });
    const Vec3<float> outside = sim.state().position(3);
    const auto new_index = reorder(sim, {.begin = 10, .end = n});
    for (std::size_t i = 0; i < 10; ++i)
        CHECK(new_index[i] == i);
    CHECK(sim.state().position(3) == outside);
    REQUIRE(sim.force_generator_particle(id).has_value());
    CHECK(*sim.force_generator_particle(id) == new_index[n - 1]);
    // Slots from outside the range into it were renumbered too: every spring still joins the
    // particles it joined, at its rest length.
    for (std::size_t i = 0; i < n; ++i)
        for (int s = 0; s < 4; ++s)
            if (sim.constraints().live(i, s))
            {
                const auto j = std::size_t(sim.constraints().neighbour(i, s));
                const float gap = (sim.state().position(j) - sim.state().position(i)).norm();
                CHECK(gap == Approx(sim.constraints().rest_length(i, s)).margin(1e-5));
            }
}

TEST_CASE("reorder refuses cloths, queued removals, bad ranges and non-finite positions, changing nothing",
          "[reorder][errors]")
{
    Simulation<float> sim;
    for (int k = 0; k < 20; ++k)
        sim.add_particle({float(k % 7), float(k / 7), 0});
    add_cloth(sim, {.width = 4, .height = 3});
    std::vector<Vec3<float>> before;
    for (std::size_t i = 0; i < sim.size(); ++i)
        before.push_back(sim.state().position(i));
    const auto constraints = sim.constraints();
    const auto unchanged = [&] {
        for (std::size_t i = 0; i < sim.size(); ++i)
            if (sim.state().position(i) != before[i])
                return false;
        return sim.constraints() == constraints;
    };
    CHECK(error_message<std::logic_error>([&] { reorder(sim); }).find("cloth") != std::string::npos);
    CHECK(error_message<std::logic_error>([&] { reorder(sim, {.begin = 15, .end = 22}); }).find("[20, 32)") !=
          std::string::npos);
    CHECK(error_message<std::out_of_range>([&] { reorder(sim, {.begin = 0, .end = 40}); }).find("40") !=
          std::string::npos);
    CHECK(unchanged());
    Simulation<float> removing;
    for (int k = 0; k < 10; ++k)
        removing.add_particle({float(9 - k), 0, 0});
    removing.queue_remove(2);
    CHECK(error_message<std::logic_error>([&] { reorder(removing); }).find("removals") != std::string::npos);
    CHECK(removing.state().position(0).x() == 9.0f);
    Simulation<float> broken;
    for (int k = 0; k < 5; ++k)
        broken.add_particle({float(k), 0, 0});
    broken.state().arrays_view().y[3] = std::numeric_limits<float>::quiet_NaN();
    CHECK(error_message<std::invalid_argument>([&] { reorder(broken); }).find("particle 3") != std::string::npos);
    CHECK(broken.state().position(4).x() == 4.0f);
    // A loose block below the cloth reorders.
    Simulation<float> fine;
    for (int k = 0; k < 20; ++k)
        fine.add_particle({float(19 - k), 0, 0});
    add_cloth(fine, {.width = 4, .height = 3});
    const auto moved = reorder(fine, {.begin = 0, .end = 20});
    CHECK(moved[0] == 19); // the particle at x = 19 sorts last
    CHECK(fine.state().position(0).x() == 0.0f);
}

TEST_CASE("reorder renumbers every constraint layer and changes no bit of a layered net's motion", "[reorder][layers]")
{
    const auto net = [] {
        Simulation<float> sim;
        add_net(sim, 200, 9, 5);
        return sim;
    };
    for (bool vectorized : {true, false})
    {
        INFO("vectorized " << vectorized);
        auto plain = net();
        auto sorted = net();
        REQUIRE(sorted.constraint_layers().count() >= 3);
        const auto new_index = reorder(sorted);
        plain.set_vectorized(vectorized);
        sorted.set_vectorized(vectorized);
        for (int frame = 0; frame < 90; ++frame)
        {
            plain.step({.gravity = {0, 9.8f, 0}, .iterations = 4});
            sorted.step({.gravity = {0, 9.8f, 0}, .iterations = 4});
        }
        std::size_t differing = 0;
        for (std::size_t i = 0; i < plain.size(); ++i)
        {
            const auto a = plain.state().position(i), b = sorted.state().position(new_index[i]);
            differing += std::memcmp(a.data(), b.data(), sizeof(float) * 3) != 0;
        }
        CHECK(differing == 0);
        CHECK(furthest_apart(plain, net()) > 0.5);
        for (std::size_t i = 0; i < plain.size(); ++i)
            CHECK(plain.constraint_layers().live_count(i) == sorted.constraint_layers().live_count(new_index[i]));
    }
}
