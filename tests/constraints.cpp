// DirectedConstraints4: slot bookkeeping, symmetric connections, and renumbering on removal.
#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;

TEST_CASE("connect_within_layer spends one free slot on each side and writes both directions", "[constraints]")
{
    DirectedConstraints4<float> k(3);
    const auto [si, sj] = k.connect_within_layer(0, 2, 1.5f, 60.0f);
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
    const auto [si2, sj2] = k.connect_within_layer(0, 1, 0.5f, 30.0f);
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
    CHECK_THROWS_AS(k.connect_within_layer(0, 1, 1.0, 1.0), std::logic_error);
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
        k.connect_within_layer(0, std::size_t(j), 1.0f, 1.0f);
    const auto before = k;
    try
    {
        k.connect_within_layer(5, 0, 1.0f, 1.0f);
        FAIL("connect_within_layer should have thrown");
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
    k.connect_within_layer(0, 1, 1.0f, 1.0f);
    k.connect_within_layer(1, 2, 1.0f, 1.0f);
    k.connect_within_layer(2, 3, 1.0f, 2.0f);
    k.connect_within_layer(3, 4, 1.0f, 3.0f);
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

TEST_CASE("connect spends the lowest layer's free slot, and adds a layer over a block where none has one",
          "[constraints][layers]")
{
    Simulation<float> sim;
    for (int k = 0; k < 40; ++k)
        sim.add_particle({float(k), 0, 0});
    auto& layers = sim.constraint_layers();
    REQUIRE(layers.count() == 1);
    // Particle 20 joined to six others: four slots in layer 0, then two in a new layer 1.
    std::vector<std::pair<SlotRef, SlotRef>> at;
    for (std::size_t j : {0, 1, 2, 3, 4, 5})
        at.push_back(sim.connect(20, j, 1.0f, 50.0f));
    REQUIRE(layers.count() == 2);
    for (int k = 0; k < 4; ++k)
        CHECK(at[std::size_t(k)].first == SlotRef{0, k});
    CHECK(at[4].first == SlotRef{1, 0});
    CHECK(at[5].first == SlotRef{1, 1});
    // Each far side had its first slot free in layer 0.
    for (const auto& a : at)
        CHECK(a.second == SlotRef{0, 0});
    // The new layer covers only particle 20's padding block.
    const std::size_t block = simd::kPadLanes<float>;
    CHECK(layers[1].first() == 20 / block * block);
    CHECK(layers[1].end() == std::min<std::size_t>(20 / block * block + block, 40));
    CHECK_FALSE(layers[1].covers(0));
    CHECK(layers.live_count(20) == 6);
    CHECK(layers.slot_to(20, 5) == SlotRef{1, 1});
    CHECK(layers[1].neighbour(20, 1) == 5);
    CHECK(layers.free_slot(20) == SlotRef{1, 2});
    // Layer 0 is unchanged as a DirectedConstraints4: the four first springs, nothing more.
    CHECK(sim.constraints().live_count(20) == 4);
    CHECK_FALSE(sim.constraints().free_slot(20).has_value());
    // A particle in the next block that runs out of slots grows layer 1 over its block instead of
    // adding a layer.
    const std::size_t far = std::min<std::size_t>(20 / block * block + block, 39);
    int joined = 0;
    for (std::size_t j : {30, 31, 33, 34, 35, 36})
        if (j != far && joined < 5)
        {
            sim.connect(far, j, 1.0f, 50.0f);
            ++joined;
        }
    CHECK(layers.count() == 2);
    CHECK(layers[1].covers(far));
    CHECK(layers[1].covers(20));
    CHECK(layers.live_count(far) == 5);
}

TEST_CASE("connect refuses a bad spring naming it, and adds no layer", "[constraints][layers][errors]")
{
    Simulation<double> sim;
    for (int k = 0; k < 6; ++k)
        sim.add_particle({double(k), 0, 0});
    for (std::size_t j = 1; j < 5; ++j)
        sim.connect(0, j, 1.0, 10.0);
    const auto before = sim.constraint_layers();
    CHECK(testing::error_message([&] { sim.connect(0, 6, 1.0, 10.0); }) ==
          "simdverlet: particle 6 is out of range (the simulation holds 6 particles)");
    CHECK(testing::error_message([&] { sim.connect(0, 0, 1.0, 10.0); }) ==
          "simdverlet: particle 0 cannot be constrained to itself");
    CHECK(testing::error_message([&] { sim.connect(0, 5, 1.0, std::nan("")); }) ==
          "simdverlet: stiffness must be finite and >= 0, got NaN");
    CHECK(testing::error_message([&] { sim.connect(0, 5, -1.0, 10.0); }) ==
          "simdverlet: rest length must be finite and >= 0, got -1");
    CHECK(sim.constraint_layers() == before);
    CHECK(sim.constraint_layers().count() == 1);
    CHECK(testing::error_message([&] { sim.constraint_layers()[1]; }) ==
          "simdverlet: constraint layer 1 is out of range (there are 1)");
}

TEST_CASE("a removal renumbers every layer's slots and clears those that named the removed particle",
          "[constraints][layers]")
{
    Simulation<float> sim;
    testing::add_net(sim, 64, 8);
    REQUIRE(sim.constraint_layers().count() > 1);
    // Every spring as (owner, neighbour, rest, stiffness), before and after removing particle 10.
    const auto springs = [](const Simulation<float>& s) {
        std::vector<std::tuple<std::size_t, std::int32_t, float, float>> out;
        for (std::size_t i = 0; i < s.size(); ++i)
            s.constraint_layers().for_each_wired(
                i, [&](SlotRef, std::int32_t j, float rest, float k) { out.emplace_back(i, j, rest, k); });
        std::sort(out.begin(), out.end());
        return out;
    };
    const auto before = springs(sim);
    sim.queue_remove(10);
    sim.step({.iterations = 0});
    const auto mapped = [](std::size_t p) { return p > 10 ? p - 1 : p; };
    std::vector<std::tuple<std::size_t, std::int32_t, float, float>> expected;
    for (const auto& [i, j, rest, k] : before)
        if (i != 10 && j != 10)
            expected.emplace_back(mapped(i), std::int32_t(mapped(std::size_t(j))), rest, k);
    std::sort(expected.begin(), expected.end());
    CHECK(sim.size() == 63);
    CHECK(springs(sim) == expected);
    CHECK(testing::all_pairs_whole(sim));
}

TEST_CASE("clear_spring clears both halves in any layer, and the springs linked to it", "[constraints][layers]")
{
    Simulation<float> sim;
    for (int k = 0; k < 8; ++k)
        sim.add_particle({float(k), 0, 0});
    for (std::size_t j = 1; j < 7; ++j)
        sim.connect(0, j, 1.0f, 50.0f); // 0-5 and 0-6 sit in layer 1 on 0's side, layer 0 on theirs
    sim.connect(3, 7, 1.0f, 50.0f);
    auto& k = sim.constraint_layers();
    k.link(0, 6, 3, 7);
    CHECK(k.links_of(6, 0) == 1);
    k.clear_spring(6, 0);
    CHECK_FALSE(k.slot_to(0, 6).has_value());
    CHECK_FALSE(k.slot_to(6, 0).has_value());
    CHECK_FALSE(k.slot_to(3, 7).has_value()); // linked: it went with 0-6
    CHECK_FALSE(k.slot_to(7, 3).has_value());
    CHECK(k.live_count(0) == 5);
    CHECK(testing::all_pairs_whole(sim));
}

TEST_CASE("cleared_since lists the springs clear_spring cleared since a stamp, linked ones too, and nothing once "
          "anything else was edited",
          "[constraints][layers]")
{
    using Pairs = std::vector<std::pair<std::int32_t, std::int32_t>>;
    Simulation<float> sim;
    for (int k = 0; k < 8; ++k)
        sim.add_particle({float(k), 0, 0});
    for (std::size_t j = 1; j < 7; ++j)
        sim.connect(0, j, 1.0f, 50.0f);
    sim.connect(3, 7, 1.0f, 50.0f);
    auto& k = sim.constraint_layers();
    k.link(0, 6, 3, 7);
    const auto start = k.edit_stamp();
    CHECK(k.cleared_since(start) == Pairs{}); // nothing since
    k.clear_spring(6, 0);
    k.clear_spring(2, 0);
    k.clear_spring(2, 0); // already gone: no edit
    CHECK(k.cleared_since(start) == Pairs{{0, 6}, {3, 7}, {0, 2}});
    const auto after_clears = k.edit_stamp();
    sim.connect(4, 5, 1.0f, 50.0f); // another edit: the clears no longer account for everything
    CHECK_FALSE(k.cleared_since(start).has_value());
    CHECK_FALSE(k.cleared_since(after_clears).has_value());
    const auto after_connect = k.edit_stamp();
    k.clear_spring(4, 5);
    CHECK(k.cleared_since(after_connect) == Pairs{{4, 5}});
}
