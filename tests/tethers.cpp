// Tethers: a hanging sheet cannot stretch past its rest distance from its anchors, a cut releases
// what it disconnects, geodesic and euclidean rest distances differ where the cloth is curved, and
// the pass is deterministic like every other stage.
#include <cmath>
#include <numbers>
#include <optional>
#include <sstream>
#include <vector>

#include "catch.hpp"
#include "same_bits.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
constexpr int kSide = 48;

/// A soft 48 x 48 sheet at spacing 0.1 hanging from its pinned top row: one iteration, stiffness
/// 2000 at 60 Hz with one substep (4000 diverges), gravity 2. Laid out hanging, it stretches about
/// 40 % under its own weight without tethers.
template <class T>
struct SoftHangingSheet
{
    static constexpr T kSpacing = T(0.1);
    Simulation<T> sim;
    Cloth<T> cloth;

    SoftHangingSheet()
        : cloth(add_cloth(sim, {.width = kSide,
                                .height = kSide,
                                .spacing = kSpacing,
                                .stiffness = T(2000),
                                .curvature_strength = T(0),
                                .pinned = [](int, int r) { return r == 0; }}))
    {
    }

    static StepParams<T> step() { return {.dt = T(1) / T(60), .gravity = {T(0), T(2), T(0)}, .iterations = 1}; }

    /// The worst stretch of any particle past its rest distance below the top row: its distance to
    /// the top-row particle above it over (row x spacing), minus one.
    T worst_stretch_below_top() const
    {
        T worst = 0;
        for (int r = 1; r < kSide; ++r)
            for (int c = 0; c < kSide; ++c)
                worst = std::max(worst,
                                 T((cloth.position(c, r) - cloth.position(c, 0)).norm() / (kSpacing * T(r))) - T(1));
        return worst;
    }
};

/// The worst ratio of a particle's distance to its anchor over its allowed distance (slack x rest).
template <class T>
T worst_over_limit(const Simulation<T>& sim, const Cloth<T>& cloth, const Tethers<T>& tethers)
{
    T worst = 0;
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
    {
        const auto anchor = tethers.anchor_of(i);
        if (!anchor || *anchor == i)
            continue;
        const T limit = tethers.slack() * tethers.rest_distance(i);
        worst = std::max(worst, T((sim.state().position(i) - sim.state().position(*anchor)).norm() / limit));
    }
    return worst;
}
} // namespace

TEST_CASE("a soft sheet hung from its top row stretches tens of percent without tethers, and with them no "
          "particle ends more than 0.5 % past its rest distance below its anchor",
          "[tethers]")
{
    SoftHangingSheet<float> loose, held;
    const auto tethers = add_tethers(held.sim, TethersOptions<float>{.cloth = held.cloth});
    CHECK(tethers.tethered() == kSide * kSide);
    CHECK(tethers.anchors().size() == std::size_t(kSide)); // the pinned top row
    CHECK(tethers.rest_distance(held.cloth.index(5, 30)) == Approx(3.0f));
    for (int frame = 0; frame < 300; ++frame)
    {
        loose.sim.step(SoftHangingSheet<float>::step());
        held.sim.step(SoftHangingSheet<float>::step());
    }
    REQUIRE_FALSE(loose.sim.diverged());
    REQUIRE_FALSE(held.sim.diverged());
    // Measured: 0.42 without, 2.4e-7 with.
    CHECK(loose.worst_stretch_below_top() > 0.2f);
    CHECK(held.worst_stretch_below_top() < 0.005f);
    CHECK(held.worst_stretch_below_top() >= 0.0f);
}

TEST_CASE("slack lets a tethered particle go that factor past its rest distance, and no further", "[tethers]")
{
    SoftHangingSheet<float> held;
    const auto tethers = add_tethers(held.sim, TethersOptions<float>{.cloth = held.cloth, .slack = 1.1f});
    for (int frame = 0; frame < 300; ++frame)
        held.sim.step(SoftHangingSheet<float>::step());
    // The soft sheet would stretch 42 %: it stops at 10 %.
    CHECK(held.worst_stretch_below_top() > 0.09f);
    CHECK(held.worst_stretch_below_top() < 0.1f + 1e-5f);
    CHECK(worst_over_limit(held.sim, held.cloth, tethers) < 1.0f + 1e-5f);
}

TEST_CASE("anchors that move take their tethers with them", "[tethers]")
{
    SoftHangingSheet<float> held;
    auto tethers = add_tethers(held.sim, TethersOptions<float>{.cloth = held.cloth});
    for (int frame = 0; frame < 60; ++frame)
        held.sim.step(SoftHangingSheet<float>::step());
    // Carry the pinned top row 3 units sideways in one jump: after one step every particle is
    // again within its rest distance of its anchor where the anchor is now.
    for (int c = 0; c < kSide; ++c)
        held.cloth.teleport(c, 0, held.cloth.position(c, 0) + Vec3<float>(3, 0, 0));
    CHECK(worst_over_limit(held.sim, held.cloth, tethers) > 1.5f);
    held.sim.step(SoftHangingSheet<float>::step());
    CHECK(worst_over_limit(held.sim, held.cloth, tethers) < 1.0f + 1e-5f);
}

TEST_CASE("a cut across a tethered sheet releases the lower half, which falls", "[tethers]")
{
    SoftHangingSheet<float> held;
    const auto tethers = add_tethers(held.sim, TethersOptions<float>{.cloth = held.cloth});
    for (int frame = 0; frame < 60; ++frame)
        held.sim.step(SoftHangingSheet<float>::step());
    // Between rows 23 (y = 2.3) and 24 (y = 2.4), across the whole width.
    CHECK(cut(held.sim, Vec3<float>(-1, 2.35f, 0), Vec3<float>(6, 2.35f, 0)) == std::size_t(kSide));
    CHECK(tethers.tethered() == 24 * kSide);
    CHECK_FALSE(tethers.anchor_of(held.cloth.index(7, 24)).has_value());
    CHECK(tethers.anchor_of(held.cloth.index(7, 23)) == held.cloth.index(7, 0));
    for (int frame = 0; frame < 60; ++frame)
        held.sim.step(SoftHangingSheet<float>::step());
    // A second of free fall at g = 2 drops the lower half about one unit; the upper half stays.
    for (int c = 0; c < kSide; ++c)
    {
        CHECK(held.cloth.position(c, 24).y() > 3.2f);
        CHECK(held.cloth.position(c, 23).y() < 2.31f);
    }
}

TEST_CASE("geodesic rest distances run over a bar and euclidean ones through it: on a soft strip "
          "draped over a bar, euclidean tethers hold the hanging end where it was laid, geodesic "
          "ones allow the strip's length",
          "[tethers]")
{
    // A strip 4 wide and 40 rows long pinned at its first row on the left of a bar (a capsule
    // along z, radius 0.5), laid over the top and hanging down the right: from the pins, 1.73
    // around the bar, then 2.17 straight down.
    constexpr float kRadius = 0.55f, kSpacing = 0.1f; // the strip lies 0.05 off the bar
    const auto draped = [&](int c, int r) {
        const float s = kSpacing * float(r), over = std::numbers::pi_v<float> * kRadius;
        const float z = kSpacing * float(c);
        if (s <= over)
        {
            const float angle = s / kRadius; // from the left, over the top (-y is up)
            return Vec3<float>(-kRadius * std::cos(angle), -kRadius * std::sin(angle), z);
        }
        return Vec3<float>(kRadius, s - over, z);
    };
    const auto run = [&](std::optional<TetherKind> kind) {
        Simulation<float> sim;
        const auto strip = add_cloth(sim, {.width = 4,
                                           .height = 40,
                                           .spacing = kSpacing,
                                           .stiffness = 2000.0f,
                                           .curvature_strength = 0.0f,
                                           .pinned = [](int, int r) { return r == 0; },
                                           .position = draped});
        std::optional<Tethers<float>> tethers;
        if (kind)
            tethers = add_tethers(sim, TethersOptions<float>{.cloth = strip, .kind = *kind});
        add_colliders(sim, {}, CapsuleCollider<float>({.a = {0, 0, -1}, .b = {0, 0, 1}, .radius = 0.5f}));
        for (int frame = 0; frame < 300; ++frame)
            sim.step(SoftHangingSheet<float>::step());
        REQUIRE_FALSE(sim.diverged());
        const float end = (strip.position(1, 39) - strip.position(1, 0)).norm();
        const float rest = tethers ? tethers->rest_distance(strip.index(1, 39)) : 0.0f;
        return std::pair<float, float>(end, rest);
    };
    const float laid = (draped(1, 39) - draped(1, 0)).norm(); // 2.43 straight through the bar
    const auto loose = run(std::nullopt);
    const auto geodesic = run(TetherKind::geodesic);
    const auto euclidean = run(TetherKind::euclidean);
    // Along the strip, 39 steps of 0.1 (up to float rounding of the arc); straight, as laid.
    CHECK(geodesic.second == Approx(3.9f).epsilon(1e-5));
    CHECK(euclidean.second == Approx(laid).epsilon(1e-6));
    CHECK(euclidean.first <= laid * 1.00001f); // held where it was laid
    CHECK(geodesic.first > laid * 1.05f);      // allowed to stretch down the far side ...
    CHECK(geodesic.first <= 3.9f * 1.00001f);  // ... but never past the strip's length
    CHECK(loose.first > laid * 1.05f);
    // Measured: loose 3.13, geodesic 3.03, euclidean 2.435 (laid 2.435).
}

TEST_CASE("geodesic rest distances are exact along rows, columns and diagonals, within 8.3 % between, "
          "and go around a cut",
          "[tethers]")
{
    Simulation<float> sim;
    const auto sheet = add_cloth(sim, {.width = 10, .height = 10, .spacing = 0.1f});
    const auto tethers = add_tethers(sim, TethersOptions<float>{.cloth = sheet, .anchors = {sheet.index(0, 0)}});
    CHECK(tethers.rest_distance(sheet.index(4, 0)) == Approx(0.4f));
    CHECK(tethers.rest_distance(sheet.index(0, 7)) == Approx(0.7f));
    CHECK(tethers.rest_distance(sheet.index(4, 4)) == Approx(0.4f * std::sqrt(2.0f)));
    const float straight = 0.1f * std::sqrt(4.0f * 4.0f + 2.0f * 2.0f);
    CHECK(tethers.rest_distance(sheet.index(4, 2)) > straight);
    CHECK(tethers.rest_distance(sheet.index(4, 2)) < straight * 1.083f);
    // A slit between columns 2 and 3 from the top down past row 6: (4, 0) is reached around its end.
    CHECK(cut(sim, Vec3<float>(0.25f, -0.05f, 0), Vec3<float>(0.25f, 0.65f, 0)) == 7u);
    CHECK(tethers.rest_distance(sheet.index(4, 0)) > 1.2f);
    CHECK(tethers.tethered() == 100); // still one piece
}

namespace
{
/// A 32 x 32 sheet at spacing 0.5 laid out horizontally (x-z) and pinned at its two top corners (or
/// all four: a hammock), the swinging peer material (stiffness 3000, one substep, one iteration),
/// released under g = 9.81.
template <class T, int kCorners = 2>
struct CornerSheet
{
    static constexpr int kSide = 32;
    Simulation<T> sim;
    Cloth<T> cloth;

    CornerSheet()
        : cloth(add_cloth(sim, {.width = kSide,
                                .height = kSide,
                                .spacing = T(0.5),
                                .stiffness = T(3000),
                                .curvature_strength = T(0),
                                .pinned =
                                    [](int c, int r) {
                                        return (r == 0 || (kCorners == 4 && r == kSide - 1)) &&
                                               (c == 0 || c == kSide - 1);
                                    },
                                .position = [](int c, int r) { return Vec3<T>(T(0.5) * T(c), T(0), T(0.5) * T(r)); }}))
    {
    }

    static StepParams<T> step()
    {
        return {.dt = T(1) / T(60), .damping = T(0.99833), .gravity = {T(0), T(9.81), T(0)}, .iterations = 1};
    }
    void frames(int count)
    {
        for (int frame = 0; frame < count; ++frame)
            sim.step(step());
    }
    /// How far the top edge's particles are from the straight line between the corners.
    T top_edge_sag() const
    {
        T worst = 0;
        for (int c = 0; c < kSide; ++c)
        {
            const Vec3<T> p = cloth.position(c, 0);
            worst = std::max(worst, std::hypot(p.y(), p.z()));
        }
        return worst;
    }
};

/// The worst ratio of a particle's distance to its anchor of the given rank over its reach.
template <class T>
T worst_over_rank(const Simulation<T>& sim, const Cloth<T>& cloth, const Tethers<T>& tethers, int rank)
{
    T worst = 0;
    for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
        if (const auto anchor = tethers.anchor_of(i, rank); anchor && *anchor != i && !sim.state().is_pinned(i))
            worst = std::max(worst, T((sim.state().position(i) - sim.state().position(*anchor)).norm() /
                                      (tethers.slack() * tethers.rest_distance(i, rank))));
    return worst;
}
} // namespace

TEST_CASE(
    "a sheet hung from its two top corners is tethered to both: its top edge, exactly as long as the corners "
    "are apart, stays straight, and no particle ends past its reach of either corner, where tethered to the nearer "
    "corner alone, the edge sags",
    "[tethers]")
{
    CornerSheet<float> both, nearer;
    const auto held = add_tethers(both.sim, TethersOptions<float>{.cloth = both.cloth});
    const auto loose = add_tethers(nearer.sim, TethersOptions<float>{.cloth = nearer.cloth, .islands = 1});
    CHECK(held.islands() == 2);
    CHECK(loose.islands() == 2);
    // Particle (2, 3) is nearer the left corner; both corners are its islands, nearest first.
    const std::size_t left = both.cloth.index(0, 0), right = both.cloth.index(31, 0), p = both.cloth.index(2, 3);
    CHECK(held.anchor_of(p, 0) == left);
    CHECK(held.anchor_of(p, 1) == right);
    CHECK_FALSE(held.anchor_of(p, 2).has_value());
    CHECK(held.rest_distance(p, 2) == std::numeric_limits<float>::infinity());
    CHECK(held.rest_distance(both.cloth.index(5, 0), 1) == Approx(13.0f)); // along the top edge
    CHECK(held.rest_distance(both.cloth.index(5, 0), 0) == Approx(2.5f));
    CHECK(loose.anchor_of(p, 0) == left);
    CHECK_THROWS_AS(loose.anchor_of(p, 1), std::out_of_range); // one island asked for
    // An anchor hangs from itself alone.
    CHECK(held.anchor_of(left, 0) == left);
    CHECK_FALSE(held.anchor_of(left, 1).has_value());

    both.frames(300);
    nearer.frames(300);
    REQUIRE_FALSE(both.sim.diverged());
    REQUIRE_FALSE(nearer.sim.diverged());
    // Measured: 0 (to float rounding) from both corners; 5.45 from the nearer alone.
    CHECK(both.top_edge_sag() < 1e-3f);
    CHECK(nearer.top_edge_sag() > 3.0f);
    CHECK(worst_over_rank(both.sim, both.cloth, held, 0) < 1.0f + 1e-5f);
    CHECK(worst_over_rank(both.sim, both.cloth, held, 1) < 1.0f + 1e-5f);
    CHECK(worst_over_rank(nearer.sim, nearer.cloth, loose, 0) < 1.0f + 1e-5f);
}

TEST_CASE("a hammock pinned at its four corners is tethered to all four, nearest first, and its two nearest "
          "tethers hold exactly",
          "[tethers]")
{
    CornerSheet<float, 4> hammock;
    const auto held = add_tethers(hammock.sim, TethersOptions<float>{.cloth = hammock.cloth});
    CHECK(held.islands() == 4);
    const std::size_t p = hammock.cloth.index(3, 10);
    const std::size_t top_left = hammock.cloth.index(0, 0), bottom_left = hammock.cloth.index(0, 31),
                      top_right = hammock.cloth.index(31, 0), bottom_right = hammock.cloth.index(31, 31);
    CHECK(held.anchor_of(p, 0) == top_left);
    CHECK(held.anchor_of(p, 1) == bottom_left);
    CHECK(held.anchor_of(p, 2) == top_right);
    CHECK(held.anchor_of(p, 3) == bottom_right);
    for (int rank = 1; rank < 4; ++rank)
        CHECK(held.rest_distance(p, rank) >= held.rest_distance(p, rank - 1));
    hammock.frames(120);
    REQUIRE_FALSE(hammock.sim.diverged());
    CHECK(worst_over_rank(hammock.sim, hammock.cloth, held, 0) < 1.0f + 1e-5f);
    CHECK(worst_over_rank(hammock.sim, hammock.cloth, held, 1) < 1.0f + 1e-5f);
}

TEST_CASE("anchors joined by springs are one island: a pinned row is one, a row pinned in two runs is two, and a cut "
          "between the runs of a whole row makes it two",
          "[tethers]")
{
    const auto sheet = [](auto pinned) {
        Simulation<float> sim;
        const auto cloth = add_cloth(sim, {.width = 10, .height = 6, .spacing = 0.5f, .pinned = pinned});
        return std::pair<Simulation<float>, Cloth<float>>(std::move(sim), cloth);
    };
    auto [row_sim, row] = sheet([](int, int r) { return r == 0; });
    const auto whole = add_tethers(row_sim, TethersOptions<float>{.cloth = row});
    CHECK(whole.islands() == 1);
    CHECK_FALSE(whole.anchor_of(row.index(3, 4), 1).has_value());

    auto [runs_sim, runs] = sheet([](int c, int r) { return r == 0 && c != 4 && c != 5; });
    const auto two = add_tethers(runs_sim, TethersOptions<float>{.cloth = runs});
    CHECK(two.islands() == 2);
    CHECK(two.anchor_of(runs.index(2, 3), 0) == runs.index(2, 0));
    CHECK(two.anchor_of(runs.index(2, 3), 1) == runs.index(6, 0)); // the nearest of the other run
    CHECK(two.rest_distance(runs.index(2, 3), 1) == Approx(0.5f * std::sqrt(4.0f * 4.0f + 3.0f * 3.0f)).epsilon(0.09));

    // The whole row again, its top spring between columns 4 and 5 cut (the cloth stays one piece).
    CHECK(cut(row_sim, Vec3<float>(2.25f, -0.1f, 0), Vec3<float>(2.25f, 0.2f, 0)) == 1u);
    CHECK(whole.islands() == 2);
    CHECK(whole.tethered() == 60);
    CHECK(whole.anchor_of(row.index(3, 4), 1) == row.index(5, 0));
}

TEST_CASE("an anchor that is not pinned hangs from itself alone, so no tether moves a particle another reads as its "
          "anchor",
          "[tethers]")
{
    Simulation<float> sim;
    const auto cloth = add_cloth(sim, {.width = 8, .height = 8, .spacing = 0.5f});
    const auto tethers = add_tethers(
        sim, TethersOptions<float>{.cloth = cloth, .anchors = {cloth.index(0, 0), cloth.index(7, 0)}});
    CHECK(tethers.islands() == 2);
    CHECK(tethers.anchor_of(cloth.index(0, 0), 0) == cloth.index(0, 0));
    CHECK_FALSE(tethers.anchor_of(cloth.index(0, 0), 1).has_value());
    CHECK(tethers.anchor_of(cloth.index(3, 5), 1).has_value());
}

namespace
{
/// 40 frames of `Scene` with tethers on every path check_same_bits_on_every_path takes; returns
/// the particles they pulled.
template <class Scene, class T>
int tethered_bits_on_every_path(T slack)
{
    const auto run = [slack](auto configure) {
        Scene scene;
        const auto tethers = add_tethers(scene.sim, TethersOptions<T>{.cloth = scene.cloth, .slack = slack});
        configure(scene.sim);
        int pulled = 0;
        for (int frame = 0; frame < 40; ++frame)
        {
            scene.sim.step(Scene::step());
            pulled += tethers.pulled();
        }
        return std::pair<Simulation<T>, int>(std::move(scene.sim), pulled);
    };
    return check_same_bits_on_every_path(run);
}
} // namespace

TEMPLATE_TEST_CASE("tethers give the same bits vector or scalar, and for any executor and grain, to one island or "
                   "to two corners at once",
                   "[tethers][parallel]", float, double)
{
    REQUIRE(simd::kLanes<TestType> > 1);
    CHECK(tethered_bits_on_every_path<SoftHangingSheet<TestType>>(TestType(1.02)) > 1000); // tethers pulled
    CHECK(tethered_bits_on_every_path<CornerSheet<TestType>>(TestType(1)) > 1000);
    CHECK(tethered_bits_on_every_path<CornerSheet<TestType, 4>>(TestType(1)) > 1000);
}

TEST_CASE("a restored tethered sheet steps on to the same bits, its slack restored with it", "[tethers][snapshot]")
{
    const auto frames = [](SoftHangingSheet<float>& s, int count) {
        for (int frame = 0; frame < count; ++frame)
            s.sim.step(SoftHangingSheet<float>::step());
    };
    SoftHangingSheet<float> straight;
    add_tethers(straight.sim, TethersOptions<float>{.cloth = straight.cloth, .slack = 1.05f});
    frames(straight, 60);

    SoftHangingSheet<float> interrupted;
    auto tethers = add_tethers(interrupted.sim, TethersOptions<float>{.cloth = interrupted.cloth, .slack = 1.05f});
    frames(interrupted, 30);
    const auto at_30 = snapshot(interrupted.sim);
    std::ostringstream out(std::ios::binary);
    save(interrupted.sim, out);
    tethers.set_slack(1.5f);
    cut(interrupted.sim, Vec3<float>(-1, 2.35f, 0), Vec3<float>(6, 2.35f, 0));
    frames(interrupted, 15);
    restore(interrupted.sim, at_30); // uncut, slack 1.05 again
    CHECK(tethers.slack() == 1.05f);
    CHECK(tethers.tethered() == kSide * kSide);
    frames(interrupted, 30);
    CHECK(interrupted.sim.state() == straight.sim.state());

    SoftHangingSheet<float> fresh;
    add_tethers(fresh.sim, TethersOptions<float>{.cloth = fresh.cloth, .slack = 1.05f});
    std::istringstream in(out.str(), std::ios::binary);
    load(fresh.sim, in);
    frames(fresh, 30);
    CHECK(fresh.sim.state() == straight.sim.state());
}

TEST_CASE("tethers refuse bad settings, naming the value, and leave the simulation as it was", "[tethers][errors]")
{
    using Catch::Matchers::ContainsSubstring;
    SoftHangingSheet<float> held;
    Simulation<float> other;
    const auto unpinned = add_cloth(held.sim, {.width = 3, .height = 3, .name = "free"});
    const auto elsewhere = add_cloth(other, {.width = 3, .height = 3, .name = "elsewhere"});
    held.sim.add_position_projection("taken", [](State3<float>&, float) {}); // a name in use
    const auto stages = held.sim.position_projections().names();
    const auto refused = [&](const Cloth<float>& cloth, TethersOptions<float> options, const std::string& text) {
        options.cloth = cloth;
        CHECK_THROWS_WITH(add_tethers(held.sim, options), ContainsSubstring(text));
        CHECK(held.sim.position_projections().names() == stages);
    };
    refused(held.cloth, {.slack = 0.5f}, "slack must be finite and >= 1, got 0.5");
    refused(held.cloth, {.slack = std::numeric_limits<float>::quiet_NaN()}, "got NaN");
    refused(held.cloth, {.slack = std::numeric_limits<float>::infinity()}, "got inf");
    refused(held.cloth, {.anchors = {3, 2304}}, "anchor 2304 is not in cloth");
    refused(held.cloth, {.name = "taken"}, "'taken' is registered already");
    refused(held.cloth, {.islands = 0}, "islands >= 1, got 0");
    refused(unpinned, {}, "need anchors: none given and none of its particles is pinned");
    refused(elsewhere, {}, "is not in this simulation");
    refused(Cloth<float>{}, {}, "tethers need a cloth: set the options' .cloth");
    CHECK_THROWS_AS(add_tethers(held.sim, TethersOptions<float>{.cloth = held.cloth, .anchors = {9999}}),
                    std::out_of_range);

    auto tethers = add_tethers(held.sim, TethersOptions<float>{.cloth = held.cloth, .anchors = {0, 47}});
    CHECK(tethers.anchors() == std::vector<std::size_t>{0, 47});
    CHECK_THROWS_WITH(tethers.set_slack(0.99f), ContainsSubstring("got 0.99"));
    CHECK(tethers.slack() == 1.0f);
    CHECK_THROWS_AS(tethers.anchor_of(unpinned.base()), std::out_of_range);
    CHECK_THROWS_WITH(tethers.anchor_of(0, 4), ContainsSubstring("tether rank 4 is outside [0, 4)"));
    CHECK_THROWS_WITH(tethers.rest_distance(0, -1), ContainsSubstring("tether rank -1"));
    CHECK(tethers.remove());
    CHECK_FALSE(tethers.remove());
}

TEST_CASE("a tethers handle used after its simulation is gone is a logic error", "[tethers][errors]")
{
    std::optional<Tethers<float>> tethers;
    {
        SoftHangingSheet<float> held;
        tethers = add_tethers(held.sim, TethersOptions<float>{.cloth = held.cloth});
    }
    CHECK_THROWS_AS(tethers->tethered(), std::logic_error);
    CHECK_THROWS_AS(tethers->remove(), std::logic_error);
}
