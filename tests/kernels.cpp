// The kernels' twins: vector against scalar, lane by lane, for the default architecture and for
// SSE2; and the solve against literal passes over unchanged positions, to a stated rounding.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// A sheet shaken out of its rest shape, with odd accumulator contents, a one-way slot, a slot with
/// zero stiffness and two coincident particles: every branch of the accumulate kernel has work.
template <class T>
Simulation<T> busy_sheet()
{
    auto sim = guide_sheet<T>(T(60), 21, 9); // 189 particles: not a whole number of batches
    jitter(sim, T(0.2));
    auto& k = sim.constraints();
    k.set_slot(40, kDown, 150, T(3), T(60));                  // one-way, long
    k.set_stiffness(41, kRight, T(0));                        // present but not live
    sim.state().set_position(100, sim.state().position(101)); // coincident pair: no direction
    auto a = sim.state().arrays_view();
    for (std::size_t i = 0; i < a.size; ++i)
    {
        a.ax[i] = T(0.001) * T(i % 7);
        a.ay[i] = -T(0.002) * T(i % 5);
        a.az[i] = T(i % 3);
    }
    return sim;
}

template <class T>
bool same_accumulators(const State3<T>& a, const State3<T>& b)
{
    const auto eq = [](auto u, auto v) { return std::equal(u.begin(), u.end(), v.begin(), v.end()); };
    return eq(a.ax(), b.ax()) && eq(a.ay(), b.ay()) && eq(a.az(), b.az());
}

template <class T, class Arch>
void check_vector_twin_matches_scalar()
{
    REQUIRE(simd::kLanes<T, Arch> > 1);
    for (int iterations : {1, 3, 16})
    {
        auto vec = busy_sheet<T>();
        auto sca = busy_sheet<T>();
        const auto n = vec.size();
        kernels::accumulate_vector<Arch>(vec.state().arrays_view(), vec.constraints().arrays_view(), {}, 0, n,
                                         iterations);
        kernels::accumulate_scalar(sca.state().arrays_view(), sca.constraints().arrays_view(), {}, 0, n, iterations);
        INFO("iterations " << iterations << ", lanes " << (simd::kLanes<T, Arch>));
        CHECK(same_accumulators(vec.state(), sca.state()));

        const kernels::IntegrateParams<T> p{T(1) / T(3600), T(0.99), T(0.5), T(2), T(-1)};
        const bool fv = kernels::integrate_vector<Arch>(vec.state().arrays_view(), p, 0, n);
        const bool fs = kernels::integrate_scalar(sca.state().arrays_view(), p, 0, n);
        CHECK(fv);
        CHECK(fs);
        CHECK(same_positions(vec, sca));
    }
}
} // namespace

TEMPLATE_TEST_CASE("vector kernels equal their scalar twins lane by lane on the default architecture", "[kernels]",
                   float, double)
{
    check_vector_twin_matches_scalar<TestType, xsimd::default_arch>();
}

#if XSIMD_WITH_SSE2
TEMPLATE_TEST_CASE("vector kernels equal their scalar twins lane by lane on SSE2", "[kernels]", float, double)
{
    check_vector_twin_matches_scalar<TestType, xsimd::sse2>();
}
#endif

namespace
{
/// Packs 67 particles' coordinates (odd bit patterns: -0, a denormal, NaN, infinities among them)
/// and reads them back in a scrambled order with repeats, a batch at a time: every lane must hold
/// the bits of the particle its index names, and every pad must be zero.
template <class Arch>
void check_packed_reads_return_the_named_particles()
{
    using B = simd::Batch<float, Arch>;
    constexpr std::size_t L = B::size;
    constexpr std::size_t n = 64 + 3, padded = (n + L - 1) / L * L;
    std::vector<float> coordinate[3];
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> any(-100.0f, 100.0f);
    for (auto& c : coordinate)
    {
        c.resize(padded);
        for (float& v : c)
            v = any(rng);
    }
    coordinate[0][3] = -0.0f;
    coordinate[1][5] = std::numeric_limits<float>::denorm_min();
    coordinate[2][6] = std::numeric_limits<float>::quiet_NaN();
    coordinate[0][9] = -std::numeric_limits<float>::infinity();
    simd::AlignedVector<float> packed(4 * padded, 1.0f);
    for (std::size_t i = 0; i < padded; i += L)
        simd::store_packed<float, Arch>(packed.data() + 4 * i, B::load_unaligned(coordinate[0].data() + i),
                                        B::load_unaligned(coordinate[1].data() + i),
                                        B::load_unaligned(coordinate[2].data() + i));
    for (std::size_t i = 0; i < padded; ++i)
        CHECK(packed[4 * i + 3] == 0.0f);
    std::vector<std::int32_t> order(5 * L);
    for (auto& k : order)
        k = std::int32_t(rng() % n);
    order[1] = order[0]; // a particle read twice in one batch
    for (std::size_t first = 0; first < order.size(); first += L)
    {
        B x, y, z;
        simd::gather_packed<float, Arch>(packed.data(), order.data() + first, x, y, z);
        alignas(simd::kAlignment) float lanes[3][L];
        x.store_aligned(lanes[0]), y.store_aligned(lanes[1]), z.store_aligned(lanes[2]);
        for (std::size_t lane = 0; lane < L; ++lane)
            for (std::size_t axis = 0; axis < 3; ++axis)
            {
                const auto i = std::size_t(order[first + lane]);
                INFO("lanes " << L << ", lane " << lane << ", particle " << i << ", axis " << axis);
                CHECK(std::bit_cast<std::uint32_t>(lanes[axis][lane]) ==
                      std::bit_cast<std::uint32_t>(coordinate[axis][i]));
            }
    }
}
} // namespace

TEST_CASE("a packed neighbour read returns each named particle's coordinates to the bit, in any order", "[kernels]")
{
    if constexpr (simd::kPackedGather<float, xsimd::default_arch>)
        check_packed_reads_return_the_named_particles<xsimd::default_arch>();
#if XSIMD_WITH_SSE2
    check_packed_reads_return_the_named_particles<xsimd::sse2>();
#endif
}

TEMPLATE_TEST_CASE("the solve matches literal passes over unchanged positions to rounding", "[kernels]", float, double)
{
    // The solve adds iterations x (the sum of a particle's four slot forces); the literal passes add
    // each force once per pass, 4 x iterations sequential roundings. Both round the same exact sum,
    // so they may differ by at most about (4 x iterations + 4) roundings of the magnitudes summed,
    // |a0| + iterations x sum |f_k|: the tolerance below, stated in those units. A wrong multiple
    // (one pass too few or too many) misses by a whole force, millions of those units.
    using T = TestType;
    for (int iterations : {1, 2, 3, 8, 16, 33})
    {
        auto fast = busy_sheet<T>();
        auto fast_scalar = busy_sheet<T>();
        auto literal = busy_sheet<T>();
        const auto n = fast.size();
        kernels::accumulate_vector<xsimd::default_arch>(fast.state().arrays_view(), fast.constraints().arrays_view(),
                                                        {}, 0, n, iterations);
        kernels::accumulate_scalar(fast_scalar.state().arrays_view(), fast_scalar.constraints().arrays_view(), {}, 0, n,
                                   iterations);
        kernels::accumulate_reference_passes(literal.state().arrays_view(), literal.constraints().arrays_view(), {}, 0,
                                             n, iterations);
        auto start = busy_sheet<T>();
        const auto a0 = start.state().arrays_view();
        double worst = 0; // in roundings of the magnitudes summed
        for (std::size_t i = 0; i < n; ++i)
        {
            kernels::SlotForce<T> f[4];
            kernels::slot_forces_scalar(a0, start.constraints().arrays_view(), i, f);
            const T* got[3] = {fast.state().ax().data(), fast.state().ay().data(), fast.state().az().data()};
            const T* want[3] = {literal.state().ax().data(), literal.state().ay().data(), literal.state().az().data()};
            const T* initial[3] = {a0.ax, a0.ay, a0.az};
            for (int axis = 0; axis < 3; ++axis)
            {
                double magnitude = std::abs(double(initial[axis][i]));
                for (const auto& fk : f)
                    magnitude += iterations * std::abs(double(axis == 0 ? fk.x : axis == 1 ? fk.y : fk.z));
                const double unit = double(std::numeric_limits<T>::epsilon()) * magnitude;
                const double gap = std::abs(double(got[axis][i]) - double(want[axis][i]));
                if (gap > 0)
                    worst = std::max(worst, gap / unit);
            }
        }
        INFO("iterations " << iterations);
        CHECK(worst <= 4.0 * iterations + 4.0);
        CHECK(same_accumulators(fast.state(), fast_scalar.state())); // the twins stay bitwise
    }
}

TEMPLATE_TEST_CASE("zero iterations leave the accumulators bitwise as they were", "[kernels]", float, double)
{
    auto solved = busy_sheet<TestType>();
    auto solved_scalar = busy_sheet<TestType>();
    auto untouched = busy_sheet<TestType>();
    const auto n = solved.size();
    kernels::accumulate_vector<xsimd::default_arch>(solved.state().arrays_view(), solved.constraints().arrays_view(),
                                                    {}, 0, n, 0);
    kernels::accumulate_scalar(solved_scalar.state().arrays_view(), solved_scalar.constraints().arrays_view(), {}, 0, n,
                               0);
    CHECK(same_accumulators(solved.state(), untouched.state()));
    CHECK(same_accumulators(solved_scalar.state(), untouched.state()));
}

TEST_CASE("a coincident pair and a dead slot add exactly nothing, even where a live one would be NaN", "[kernels]")
{
    // Particle 0 has a live slot to a particle on top of it (no direction: 0 / 0) and a dead slot
    // (stiffness 0) to one so far away that its length squared overflows to inf, where
    // 0 x (inf - rest) / inf is NaN. Both must be skipped, not multiplied by zero, and the
    // accumulators keep their bits.
    for (bool vectorized : {true, false})
    {
        INFO("vectorized " << vectorized);
        Simulation<float> sim;
        sim.add_particle({1, 1, 1});
        sim.add_particle({1, 1, 1});
        sim.add_particle({3e20f, 1, 1});
        sim.constraints().set_slot(0, 0, 1, 0.5f, 100.0f); // coincident: no direction
        sim.constraints().set_slot(0, 1, 2, 0.5f, 0.0f);   // not live
        auto a = sim.state().arrays_view();
        a.ax[0] = 0.25f;
        a.ay[0] = -0.5f;
        a.az[0] = 2.0f;
        if (vectorized)
            kernels::accumulate_vector<xsimd::default_arch>(a, sim.constraints().arrays_view(), {}, 0, 3, 4);
        else
            kernels::accumulate_scalar(a, sim.constraints().arrays_view(), {}, 0, 3, 4);
        CHECK(a.ax[0] == 0.25f);
        CHECK(a.ay[0] == -0.5f);
        CHECK(a.az[0] == 2.0f);
        CHECK(a.ax[2] == 0.0f);
    }
}

TEST_CASE("one slot's force is iterations x k (|d| - r) d / |d| toward the neighbour", "[kernels]")
{
    for (int iterations : {1, 3})
        for (bool vectorized : {true, false})
        {
            INFO("iterations " << iterations << ", vectorized " << vectorized);
            Simulation<double> sim;
            sim.add_particle({0, 0, 0});
            sim.add_particle({3, 4, 0}); // |d| = 5
            sim.constraints().set_slot(0, 2, 1, 2.0, 10.0);
            auto a = sim.state().arrays_view();
            if (vectorized)
                kernels::accumulate_vector<xsimd::default_arch>(a, sim.constraints().arrays_view(), {}, 0, 2,
                                                                iterations);
            else
                kernels::accumulate_scalar(a, sim.constraints().arrays_view(), {}, 0, 2, iterations);
            // 10 * (5 - 2) / 5 * (3, 4, 0) = (18, 24, 0) per pass; particle 1 has no slot and gets
            // nothing.
            CHECK(a.ax[0] == Approx(18.0 * iterations).epsilon(1e-12));
            CHECK(a.ay[0] == Approx(24.0 * iterations).epsilon(1e-12));
            CHECK(a.az[0] == 0.0);
            CHECK(a.ax[1] == 0.0);
            CHECK(a.ay[1] == 0.0);
        }
}

TEMPLATE_TEST_CASE("the neighbour search's vector twin finds the scalar twin's points, in order, on every run length",
                   "[kernels][self_collision]", float, double)
{
    REQUIRE(simd::kLanes<TestType> > 1);
    // 200 points in a unit cube, padded by a batch; queries from several centres over runs that
    // start and end anywhere, including empty runs and runs shorter than a batch.
    std::vector<TestType> x(200 + simd::kPadLanes<TestType>), y(x.size()), z(x.size());
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    for (std::size_t e = 0; e < 200; ++e)
    {
        x[e] = TestType(u(rng));
        y[e] = TestType(u(rng));
        z[e] = TestType(u(rng));
    }
    std::vector<std::uint32_t> vec(200 + simd::kPadLanes<TestType>), sca(vec.size());
    std::size_t found_total = 0;
    for (std::uint32_t begin : {0u, 1u, 7u, 33u})
        for (std::uint32_t end : {begin, begin + 1, begin + 5, begin + 16, begin + 17, 200u})
            for (const Vec3<TestType>& p : {Vec3<TestType>(0.5, 0.5, 0.5), Vec3<TestType>(0.1, 0.9, 0.3)})
            {
                const auto v = kernels::within_reach_vector<xsimd::default_arch>(x.data(), y.data(), z.data(), begin,
                                                                                 end, p, TestType(0.16), vec.data());
                const auto s = kernels::within_reach_scalar(x.data(), y.data(), z.data(), begin, end, p, TestType(0.16),
                                                            sca.data());
                INFO("run [" << begin << ", " << end << ")");
                REQUIRE(v == s);
                CHECK(std::equal(vec.begin(), vec.begin() + v, sca.begin()));
                for (std::uint32_t f = 0; f < s; ++f)
                    CHECK((Vec3<TestType>(x[sca[f]], y[sca[f]], z[sca[f]]) - p).squaredNorm() < TestType(0.16));
                found_total += s;
            }
    CHECK(found_total > 50); // the runs did hold points within reach
}

TEMPLATE_TEST_CASE("the finiteness check's vector twin finds a NaN or an infinity wherever it sits", "[kernels]", float,
                   double)
{
    // 37 particles: whole batches and a tail on every width.
    Simulation<TestType> sim;
    for (int i = 0; i < 37; ++i)
        sim.add_particle(Vec3<TestType>(TestType(i), TestType(-i), TestType(0.5) * TestType(i)));
    const auto s = sim.state().arrays_view();
    CHECK(kernels::all_finite_vector<xsimd::default_arch>(s));
    CHECK(kernels::all_finite(s));
    const TestType bad[] = {std::numeric_limits<TestType>::quiet_NaN(), std::numeric_limits<TestType>::infinity(),
                            -std::numeric_limits<TestType>::infinity()};
    for (std::size_t i : {std::size_t(0), std::size_t(5), std::size_t(17), std::size_t(31), std::size_t(36)})
        for (TestType* axis : {s.x, s.y, s.z})
            for (const TestType value : bad)
            {
                const TestType kept = axis[i];
                axis[i] = value;
                INFO("particle " << i << ", value " << value);
                CHECK_FALSE(kernels::all_finite_vector<xsimd::default_arch>(s));
                CHECK_FALSE(kernels::all_finite(s));
                axis[i] = kept;
            }
    CHECK(kernels::all_finite_vector<xsimd::default_arch>(s));
}

TEMPLATE_TEST_CASE("the inside-a-box check agrees with its scalar twin on every range, and a NaN is outside",
                   "[kernels]", float, double)
{
    using T = TestType;
    Simulation<T> sim;
    for (int i = 0; i < 37; ++i)
        sim.add_particle(Vec3<T>(T(i % 5), T(i % 3), T(i % 7)));
    for (int i = 0; i < 37; i += 4)
        sim.state().set_velocity(std::size_t(i), Vec3<T>(T(0.5), T(-0.5), T(0.25))); // px off x
    const auto s = sim.state().arrays_view();
    const std::array<T, 3> lo{T(0), T(-0.5), T(0)}, hi{T(4), T(2), T(6)};
    int inside = 0, outside = 0;
    for (std::size_t b = 0; b <= 37; ++b)
        for (std::size_t e = b; e <= 37; ++e)
        {
            INFO("particles [" << b << ", " << e << ")");
            const bool v = kernels::all_inside_vector<xsimd::default_arch>(s, b, e, lo, hi);
            REQUIRE(v == kernels::all_inside(s, b, e, lo, hi));
            (v ? inside : outside) += 1;
        }
    CHECK(inside > 20);
    CHECK(outside > 20);
    // Particle 0's px is (-0.5, 0.5, -0.25): outside on x and z, though x itself is inside.
    CHECK_FALSE(kernels::all_inside(s, 0, 1, lo, hi));
    CHECK(kernels::all_inside(s, 1, 4, lo, hi));
    s.y[2] = std::numeric_limits<T>::quiet_NaN();
    s.py[2] = T(0);
    CHECK_FALSE(kernels::all_inside_vector<xsimd::default_arch>(s, 1, 4, lo, hi));
    CHECK_FALSE(kernels::all_inside(s, 1, 4, lo, hi));
}

TEMPLATE_TEST_CASE("the move survey agrees on both paths and with a plain loop: the two largest distances from the "
                   "centre and the moves past the limit bit for bit, the sums to rounding",
                   "[kernels][self_collision]", float, double)
{
    using T = TestType;
    REQUIRE(simd::kLanes<T> > 1);
    // Moves a - b of up to 75 particles: a drift of 3 in common (the centre), a spread of 0.2 and
    // every eleventh 1.5 farther, so every count has whole batches and a tail, some moves lie past
    // the limit, and the two largest sit anywhere (in the batches, in the tail).
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> small(-0.2, 0.2);
    std::array<std::vector<T>, 3> a, b;
    for (std::size_t k = 0; k < 75; ++k)
        for (int axis = 0; axis < 3; ++axis)
        {
            b[axis].push_back(T(small(rng) * 10));
            a[axis].push_back(b[axis].back() + T(3) + T(small(rng)) + (k % 11 == 3 ? T(1.5) : T(0)));
        }
    const std::array<T, 3> centre{T(3), T(3), T(3)};
    const T limit2 = T(0.25) * T(0.25);
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    // Both twins over the first n moves, each listing into its own array.
    const auto run_both = [&](std::size_t n, std::vector<std::uint32_t>& vector, std::vector<std::uint32_t>& scalar) {
        vector.assign(n + 16, 0);
        scalar.assign(n + 16, 0);
        const auto args = std::tuple{a[0].data(), a[1].data(), a[2].data(), b[0].data(), b[1].data(), b[2].data(), n};
        return std::pair{
            std::apply(
                [&](auto... x) {
                    return kernels::survey_moves_vector<xsimd::default_arch>(x..., centre, limit2, vector.data());
                },
                args),
            std::apply([&](auto... x) { return kernels::survey_moves(x..., centre, limit2, scalar.data()); }, args)};
    };
    const auto both = [&](std::size_t n, std::vector<std::uint32_t>* listed = nullptr) {
        std::vector<std::uint32_t> vector, scalar;
        const auto [v, s] = run_both(n, vector, scalar);
        REQUIRE(std::bit_cast<Bits>(v.first) == std::bit_cast<Bits>(s.first));
        REQUIRE(std::bit_cast<Bits>(v.second) == std::bit_cast<Bits>(s.second));
        vector.resize(v.beyond);
        scalar.resize(s.beyond);
        REQUIRE(vector == scalar);
        for (int axis = 0; axis < 3; ++axis)
        {
            double exact = 0;
            for (std::size_t k = 0; k < n; ++k)
                exact += double(a[axis][k]) - double(b[axis][k]);
            CHECK(std::abs(double(v.sum[std::size_t(axis)]) - exact) <= 1e-5 * (1 + std::abs(exact)));
            CHECK(std::abs(double(s.sum[std::size_t(axis)]) - exact) <= 1e-5 * (1 + std::abs(exact)));
        }
        if (listed)
            *listed = scalar;
        return s;
    };
    for (std::size_t n = 1; n <= 75; ++n)
    {
        INFO(n << " particles");
        // The reference, as plainly as it can be written.
        std::vector<T> d2;
        std::vector<std::uint32_t> plain;
        for (std::uint32_t k = 0; k < n; ++k)
        {
            T sum = 0;
            for (int axis = 0; axis < 3; ++axis)
            {
                const T d = a[axis][k] - b[axis][k] - centre[std::size_t(axis)];
                sum += d * d;
            }
            d2.push_back(sum);
            if (sum > limit2)
                plain.push_back(k);
        }
        std::sort(d2.rbegin(), d2.rend());
        std::vector<std::uint32_t> listed;
        const auto s = both(n, &listed);
        CHECK(s.first == d2[0]);
        CHECK(s.second == (n > 1 ? d2[1] : T(0)));
        CHECK(listed == plain);
        if (n >= 20)
            CHECK(plain.size() > 1);
    }
    // A tie for the largest fills both places.
    for (int axis = 0; axis < 3; ++axis)
    {
        a[axis][3] += T(5);
        a[axis][70] = a[axis][3];
        b[axis][70] = b[axis][3];
    }
    const auto tied = both(75);
    CHECK(tied.first == tied.second);
    CHECK(tied.first > T(25));
    // The two largest in one lane of the vector twin (particles 3 and 3 + the batch width): the
    // lane's second largest must reach the result too.
    const std::size_t same_lane = 3 + simd::kLanes<T>;
    for (int axis = 0; axis < 3; ++axis)
    {
        a[axis][70] = b[axis][70] + T(3);
        a[axis][same_lane] = b[axis][same_lane] + (a[axis][3] - b[axis][3]) - T(0.5);
    }
    const auto one_lane = both(75);
    CHECK(one_lane.first > one_lane.second);
    CHECK(one_lane.second > T(16));
    // A NaN or an infinity anywhere, in a batch or in the tail, leaves a sum not finite.
    const T inf = std::numeric_limits<T>::infinity();
    for (const T bad : {std::numeric_limits<T>::quiet_NaN(), inf, -inf})
        for (const std::size_t k : {std::size_t(0), std::size_t(9), std::size_t(33), std::size_t(74)})
            for (int axis = 0; axis < 3; ++axis)
            {
                INFO("particle " << k << ", axis " << axis << ", value " << bad);
                const T kept = a[axis][k];
                a[axis][k] = bad;
                std::vector<std::uint32_t> vector, scalar;
                const auto [v, s] = run_both(75, vector, scalar);
                CHECK_FALSE(std::isfinite(v.sum[std::size_t(axis)]));
                CHECK_FALSE(std::isfinite(s.sum[std::size_t(axis)]));
                a[axis][k] = kept;
            }
}
