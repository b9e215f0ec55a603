// The fused sweep, the grid fast path and the executors: each must give the bits of the reference
// (unfused, gather, serial) path exactly.
#include <thread>

#include "catch.hpp"
#include "same_bits.hpp"
#include "support.hpp"

#if SIMDVERLET_HAVE_OPENMP
#    include <simdverlet/core/parallel/openmp.hpp>
#endif
#if SIMDVERLET_HAVE_TBB
#    include <simdverlet/core/parallel/tbb.hpp>
#endif

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// A scene that exercises every stage: a cloth (with curvature) that a ball and a floor hold, a
/// rope tied to it, tearing, wind, a grab, and torn and re-attached slots so that lane groups take
/// the grid path and the gather path in the same step.
template <class T>
struct AllStages
{
    Simulation<T> sim;
    AllStages()
    {
        auto cloth = add_cloth(sim, {.width = 37, .height = 23, .spacing = T(0.25), .position = [](int c, int r) {
                                         return Vec3<T>(T(0.25) * T(c), T(0), T(0.25) * T(r));
                                     }});
        auto rope = add_strand(sim, {.count = 30, .spacing = T(0.2), .bend_stiffness = T(0.4), .position = [](int n) {
                                         return Vec3<T>(T(9.5), T(0.2) * T(n + 1), T(5.5));
                                     }});
        rope.attach_to(cloth.index(36, 22), 0);
        add_colliders(sim, {.relaxations = 2},
                      SphereCollider<T>({.center = {T(4.5), T(2), T(2.75)}, .radius = T(1.5)}, {.friction = T(0.6)}),
                      PlaneCollider<T>({.normal = {0, -1, 0}, .offset = T(-3.5)}));
        add_tearing(sim, {.max_strain = T(0.6)});
        add_wind(sim, {.velocity = {T(1), T(0), T(0.5)}, .cloths = {cloth}});
        cloth.grab_nearest(cloth.position(0, 0));
        // Tear a few slots and re-attach others across the sheet: those lane groups must gather.
        cut(sim, Vec3<T>(T(2.1), T(-1), T(0)), Vec3<T>(T(2.1), T(1), T(0)), ViewPlane::xy);
        sim.constraints().clear_slot(cloth.index(10, 10), kClothRight);
        sim.constraints().clear_slot(cloth.index(11, 10), kClothLeft);
        sim.constraints().set_slot(cloth.index(10, 10), kClothRight, std::int32_t(cloth.index(20, 3)), T(3), T(60));
    }
};

template <class T>
bool same_accumulators(const Simulation<T>& a, const Simulation<T>& b)
{
    const auto eq = [](auto u, auto v) { return std::equal(u.begin(), u.end(), v.begin(), v.end()); };
    const auto& s = a.state();
    const auto& t = b.state();
    return eq(s.ax(), t.ax()) && eq(s.ay(), t.ay()) && eq(s.az(), t.az());
}

template <class T, class Configure>
Simulation<T> run(Configure configure, int frames = 120)
{
    AllStages<T> scene;
    configure(scene.sim);
    for (int frame = 0; frame < frames; ++frame)
        scene.sim.step({.gravity = {T(0), T(2), T(0)}, .iterations = 16, .substeps = 2});
    return std::move(scene.sim);
}
} // namespace

TEMPLATE_TEST_CASE("the fused sweep is bit-identical to the unfused reference order", "[parallel]", float, double)
{
    for (bool vectorized : {true, false})
    {
        const auto fused = run<TestType>([&](auto& s) { s.set_vectorized(vectorized); });
        const auto reference = run<TestType>([&](auto& s) {
            s.set_vectorized(vectorized);
            s.set_fused(false);
        });
        INFO("vectorized " << vectorized);
        CHECK(same_positions(fused, reference));
        CHECK(fused.constraints() == reference.constraints()); // the same tears too
        const auto start = run<TestType>([](auto&) {}, 0);
        CHECK(fused.constraints() != start.constraints()); // and there were tears (measured 12)
        CHECK(furthest_apart(fused, start) > 0.5);         // and it did move (measured 2.86)
        // The reference really took the other path: its solve added the springs into the
        // accumulators, where the fused sweep leaves only what the force stages added.
        CHECK_FALSE(reference.fused());
        CHECK_FALSE(same_accumulators(fused, reference));
    }
}

TEMPLATE_TEST_CASE("the grid fast path is bit-identical to gathering every neighbour", "[parallel]", float, double)
{
    REQUIRE(simd::kLanes<TestType> > 1);
    const auto grid = run<TestType>([](auto&) {});
    const auto gather = run<TestType>([](auto& s) { s.set_grid_path(false); });
    CHECK(same_positions(grid, gather));
    CHECK(grid.constraints() == gather.constraints());
    // Both paths really ran: the scene has lane groups of each kind.
    AllStages<TestType> scene;
    const auto s = scene.sim.state().arrays_view();
    const auto c = scene.sim.constraints().arrays_view();
    int contiguous = 0, gathered = 0;
    for (std::size_t i = 0; i + simd::kLanes<TestType> <= s.size; i += simd::kLanes<TestType>)
        for (int k = 0; k < 4; ++k)
        {
            bool run_of_neighbours = c.neighbour[k][i] >= 0;
            for (std::size_t lane = 1; lane < simd::kLanes<TestType>; ++lane)
                run_of_neighbours = run_of_neighbours &&
                                    (c.neighbour[k][i + lane] == c.neighbour[k][i] + std::int32_t(lane) ||
                                     c.neighbour[k][i + lane] == -1);
            (run_of_neighbours ? contiguous : gathered) += 1;
        }
    CHECK(contiguous > 100);
    CHECK(gathered > 10);
}

TEMPLATE_TEST_CASE("results do not depend on the executor, its thread count or its grain", "[parallel]", float, double)
{
    const auto reference = run<TestType>([](auto&) {}, 60); // serial, no executor
    std::vector<std::pair<std::string, std::shared_ptr<Executor>>> executors = {
        {"serial executor", std::make_shared<SerialExecutor>()}};
#if SIMDVERLET_HAVE_OPENMP
    for (int threads : {1, 2, 3, 8})
        executors.emplace_back("OpenMP x" + std::to_string(threads), std::make_shared<OpenMPExecutor>(threads));
#endif
#if SIMDVERLET_HAVE_TBB
    for (int threads : {1, 2, 3, 8})
        executors.emplace_back("oneTBB x" + std::to_string(threads), std::make_shared<TbbExecutor>(threads));
#endif
    REQUIRE(executors.size() >= 1 + 4 * (SIMDVERLET_HAVE_OPENMP + SIMDVERLET_HAVE_TBB));
    for (const auto& named : executors)
        for (std::size_t grain : {std::size_t(1), std::size_t(64), std::size_t(100), std::size_t(1000)})
        {
            const auto& executor = named.second;
            INFO(named.first << ", grain " << grain);
            const auto threaded = run<TestType>([&](auto& s) { s.set_executor(executor, grain); }, 60);
            CHECK(same_positions(threaded, reference));
            CHECK(threaded.constraints() == reference.constraints());
        }
    const auto start = run<TestType>([](auto&) {}, 0);
    CHECK(furthest_apart(reference, start) > 0.5);         // the compared runs did move (measured 2.5)
    CHECK(reference.constraints() != start.constraints()); // and tear (measured 12 tears)

    // Chunks run in reverse order give the same bits, and the sweeps were split as the grain and
    // the threads say: 881 particles in about 881 / grain chunks, rounded up to a multiple of the
    // executor's threads and capped at one 64-byte block each (grain 1: 56 blocks in float; 100:
    // 9 chunks, 9 again on 3 threads, 10 on 2); a grain past the particle count runs in one piece
    // without the executor.
    const std::size_t block = simd::kPadLanes<TestType>, blocks = (881 + block - 1) / block;
    for (int threads : {1, 2, 3})
        for (std::size_t grain : {std::size_t(1), std::size_t(100), std::size_t(1000)})
        {
            INFO("reversed, " << threads << " threads, grain " << grain);
            const auto reversed = std::make_shared<ReversedExecutor>(threads);
            const auto threaded = run<TestType>([&](auto& s) { s.set_executor(reversed, grain); }, 60);
            CHECK(same_positions(threaded, reference));
            CHECK(threaded.constraints() == reference.constraints());
            REQUIRE(threaded.size() == 881);
            const std::size_t t = std::size_t(threads), wanted = (881 + grain - 1) / grain;
            if (std::max(grain, block) < 881)
            {
                CHECK(reversed->most == std::min((wanted + t - 1) / t * t, blocks));
                // In each substep: the cloth's curvature, the wind's one pass (row by row), the
                // fused sweep, the collider pass, the tearing scan.
                CHECK(reversed->calls == 5 * 120);
            }
            else
                CHECK(reversed->calls == 0);
        }
}

TEST_CASE("executor chunks are whole blocks, within a block of each other, and as many as a multiple of the threads",
          "[parallel]")
{
    // The rule that keeps two threads equally busy: 316 x 316 particles at the benchmarks' grain of
    // 16 384 were seven chunks, one thread's share twice the other's; now they are eight.
    Simulation<float> sim;
    const std::size_t block = simd::kPadLanes<float>;
    for (int threads : {1, 2, 3, 8})
        for (std::size_t n : {std::size_t(99856), std::size_t(1000000), std::size_t(5000), std::size_t(17)})
            for (std::size_t grain : {std::size_t(1), std::size_t(1000), std::size_t(16384)})
            {
                INFO(threads << " threads, " << n << " particles, grain " << grain);
                sim.set_executor(std::make_shared<ReversedExecutor>(threads), grain);
                const auto& world = *detail::world_of(sim);
                const std::size_t count = world.chunk_count(n), blocks = (n + block - 1) / block;
                CHECK(world.chunk_begin(n, 0) == 0);
                CHECK(world.chunk_begin(n, count) == n);
                if (n > std::max(grain, block))
                    CHECK((count % std::size_t(threads) == 0 || count == blocks));
                else
                    CHECK(count == 1);
                std::size_t smallest = n, largest = 0;
                for (std::size_t k = 0; k < count; ++k)
                {
                    const std::size_t b = world.chunk_begin(n, k), e = world.chunk_begin(n, k + 1);
                    CHECK(b % block == 0);
                    CHECK(b < e);
                    if (k + 1 < count)
                    {
                        smallest = std::min(smallest, e - b);
                        largest = std::max(largest, e - b);
                    }
                }
                if (count > 2)
                    CHECK(largest - smallest <= block);
            }
    sim.set_executor(std::make_shared<ReversedExecutor>(2), 16384);
    CHECK(detail::world_of(sim)->chunk_count(316 * 316) == 8);
}

TEST_CASE("an executor grain of 0 is refused", "[parallel][errors]")
{
    Simulation<float> sim;
    CHECK_THROWS_AS(sim.set_executor(std::make_shared<SerialExecutor>(), 0), std::invalid_argument);
    CHECK(sim.executor() == nullptr);
}
