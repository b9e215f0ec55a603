// DirectedConstraints4: slot bookkeeping, symmetric connections, and renumbering on removal.
#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;

TEST_CASE("connect spends one free slot on each side and writes both directions", "[constraints]")
{
    DirectedConstraints4<float> k(3);
    const auto [si, sj] = k.connect(0, 2, 1.5f, 60.0f);
    CHECK(si == 0);
    CHECK(sj == 0);
    for (const auto& [from, to] : {std::pair{0, 2}, std::pair{2, 0}})
    {
        INFO(from << " -> " << to);
        CHECK(k.neighbour(std::size_t(from), 0) == to);
        CHECK(k.rest_length(std::size_t(from), 0) == 1.5f);
        CHECK(k.stiffness(std::size_t(from), 0) == 60.0f);
        CHECK(k.live(std::size_t(from), 0));
        CHECK(k.live_count(std::size_t(from)) == 1);
        CHECK(k.free_slot(std::size_t(from)) == 1);
    }
    CHECK(k.live_count(1) == 0);
    CHECK(k.slot_to(2, 0) == 0);
    CHECK(k.slot_to(0, 2) == 0);
    // The next connection takes the next free slot: 1 on particle 0, 0 on particle 1.
    const auto [si2, sj2] = k.connect(0, 1, 0.5f, 30.0f);
    CHECK(si2 == 1);
    CHECK(sj2 == 0);
    CHECK(k.neighbour(0, 0) == 2); // the first connection is untouched
    CHECK(k.free_slot(0) == 2);
}

TEST_CASE("a slot is live only with a neighbour and non-zero stiffness, and a switched-off one is not free",
          "[constraints]")
{
    DirectedConstraints4<double> k(2);
    k.set_slot(0, 0, 1, 1.0, 2.0);
    k.set_slot(0, 1, 1, 1.0, 2.0);
    k.set_slot(0, 2, 1, 1.0, 2.0);
    k.set_slot(0, 3, 1, 1.0, 0.0);
    CHECK_FALSE(k.live(0, 3));
    CHECK(k.live_count(0) == 3);
    CHECK_FALSE(k.free_slot(0).has_value()); // slot 3 still names a neighbour: not free
    CHECK_THROWS_AS(k.connect(0, 1, 1.0, 1.0), std::logic_error);
    k.set_stiffness(0, 3, 5.0);
    CHECK(k.live(0, 3));
    CHECK(k.live_count(0) == 4);
    k.clear_slot(0, 3);
    CHECK_FALSE(k.live(0, 3));
    CHECK(k.neighbour(0, 3) == -1);
    CHECK(k.rest_length(0, 3) == 0.0);
    CHECK(k.stiffness(0, 3) == 0.0);
    CHECK(k.free_slot(0) == 3);
}

TEST_CASE("a particle with four slots taken cannot be connected, and nothing is written", "[constraints]")
{
    DirectedConstraints4<float> k(6);
    for (int j = 1; j <= 4; ++j)
        k.connect(0, std::size_t(j), 1.0f, 1.0f);
    const auto before = k;
    try
    {
        k.connect(5, 0, 1.0f, 1.0f);
        FAIL("connect should have thrown");
    }
    catch (const std::logic_error& e)
    {
        CHECK(std::string(e.what()).find("particle 0 has no free slot") != std::string::npos);
    }
    CHECK(k == before);
    CHECK(k.free_slot(5) == 0); // the free side was not spent either
}

TEST_CASE("compaction clears slots that pointed at a removed particle and renumbers the rest", "[constraints]")
{
    DirectedConstraints4<float> k(5);
    k.connect(0, 1, 1.0f, 1.0f);
    k.connect(1, 2, 1.0f, 1.0f);
    k.connect(2, 3, 1.0f, 2.0f);
    k.connect(3, 4, 1.0f, 3.0f);
    // remove particle 2: 0 1 _ 3 4 -> 0 1 2 3
    k.compact({0, 1, -1, 2, 3}, 4);
    REQUIRE(k.size() == 4);
    CHECK(k.neighbour(0, 0) == 1);
    CHECK(k.live_count(1) == 1); // its slot toward the removed particle is cleared
    CHECK(k.neighbour(1, 0) == 0);
    CHECK(k.neighbour(1, 1) == -1);
    CHECK(k.neighbour(2, 0) == -1); // old 3: its link to 2 is gone
    CHECK(k.stiffness(2, 0) == 0.0f);
    CHECK(k.neighbour(2, 1) == 3); // old 3 -> old 4, renumbered
    CHECK(k.stiffness(2, 1) == 3.0f);
    CHECK(k.rest_length(2, 1) == 1.0f);
    CHECK(k.neighbour(3, 0) == 2); // old 4 -> old 3
    CHECK(k.stiffness(3, 0) == 3.0f);
    CHECK(k.live_count(2) == 1);
    CHECK(k.live_count(3) == 1);
}

TEST_CASE("a slot with no neighbour refuses a stiffness: the kernels read liveness from stiffness",
          "[constraints][errors]")
{
    // Found by the test audit: a stiff empty slot made the vector kernel read particle -1 (one step
    // moved a particle from x = 5 to 4.444) while the scalar twin did nothing.
    DirectedConstraints4<float> k(3);
    const auto before = k;
    CHECK_THROWS_WITH(k.set_stiffness(1, 2, 60.0f),
                      Catch::Matchers::ContainsSubstring("slot 2 of particle 1 stiffness 60: it has no neighbour"));
    CHECK(k == before);
    k.set_stiffness(1, 2, 0.0f); // zero keeps the invariant and is allowed
    k.set_slot(1, 2, 0, 1.0f, 5.0f);
    k.set_stiffness(1, 2, 60.0f);
    CHECK(k.stiffness(1, 2) == 60.0f);
}

TEST_CASE("the edit stamp moves with every edit, never repeats, and travels with a copy", "[constraints]")
{
    DirectedConstraints4<float> k(4);
    std::vector<std::uint64_t> seen{k.edit_stamp()};
    const auto moved = [&] {
        const bool fresh = std::find(seen.begin(), seen.end(), k.edit_stamp()) == seen.end();
        seen.push_back(k.edit_stamp());
        return fresh;
    };
    k.set_slot(0, 0, 1, 1.0f, 60.0f);
    CHECK(moved());
    k.set_stiffness(0, 0, 30.0f);
    CHECK(moved());
    k.clear_slot(0, 0);
    CHECK(moved());
    k.clear_slots(1);
    CHECK(moved());
    k.resize(5);
    CHECK(moved());
    k.compact({0, 1, -1, 2, 3}, 4);
    CHECK(moved());
    const DirectedConstraints4<float> copy = k;
    CHECK(copy.edit_stamp() == k.edit_stamp()); // the same contents, the same stamp
    DirectedConstraints4<float> other = k;
    other.set_slot(0, 1, 2, 1.0f, 60.0f);
    k.set_slot(0, 1, 2, 1.0f, 60.0f); // the same edit on another instance: still a new stamp
    CHECK(other.edit_stamp() != k.edit_stamp());
    CHECK(moved());
    // Reading changes nothing.
    const auto before = k.edit_stamp();
    (void)k.live(0, 1);
    (void)k.neighbour(0, 1);
    CHECK(k.edit_stamp() == before);
}
