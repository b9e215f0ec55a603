// Self-collision on the peer scene's sheet (256 x 256 at spacing 0.5, 1 iteration, 6 substeps,
// g = 9.81; stiffness 60000, as the peer's 110000 diverges in a pile): laid out folded six layers
// deep with wrinkles, dropped on a floor and stepped 0.5 s, then timed per 60 Hz frame with the
// pass on and with it switched off (the same pile: the difference is the stage's cost), on 1 and
// 2 threads.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <simdverlet/simdverlet.hpp>

#include "threads.hpp"
#include "timing.hpp"

namespace
{
using namespace simdverlet;

constexpr int kSide = 256;
constexpr float kSpacing = 0.5f;
constexpr int kLayers = 6;

/// Row r of the sheet lies in layer r / rows_per_layer, running back and forth like an accordion;
/// consecutive layers sit one spacing apart, so the fold rows keep their rest length.
Vec3<float> folded(int c, int r)
{
    const int rows_per_layer = (kSide + kLayers - 1) / kLayers;
    const int layer = r / rows_per_layer;
    const int along = layer % 2 == 0 ? r % rows_per_layer : rows_per_layer - 1 - r % rows_per_layer;
    const float wrinkle = 0.1f * std::sin(0.3f * float(c)) * std::sin(0.2f * float(along));
    return {kSpacing * float(c), -kSpacing * (float(layer) + 0.5f) + wrinkle, kSpacing * float(along)};
}

const StepParams<float> kFrame{.dt = 1.0f / 60.0f, .gravity = {0, 9.81f, 0}, .iterations = 1, .substeps = 6};

/// The pile after 0.5 s: folded, dropped, settling.
struct Pile
{
    Simulation<float> sim;
    SelfCollision<float> self;

    /// `triangles`: with point-triangle contacts against the sheet's own triangles as well;
    /// `thickness` in spacings.
    Pile(float stiffness, int threads, bool triangles = false, float thickness = 1.0f)
        : self([&] {
              auto cloth = add_cloth(sim, {.width = kSide,
                                           .height = kSide,
                                           .spacing = kSpacing,
                                           .stiffness = stiffness,
                                           .curvature_strength = 0.0f,
                                           .position = folded});
              add_colliders(sim, {}, PlaneCollider<float>({.normal = {0, -1, 0}, .offset = 0}, {.friction = 0.5f}));
              return add_self_collision(
                  sim, SelfCollisionOptions<float>{.thickness = thickness * kSpacing,
                                                   .cloths = triangles ? std::vector<Cloth<float>>{cloth}
                                                                       : std::vector<Cloth<float>>{}});
          }())
    {
        benchmarking::use_threads(sim, threads);
        for (int f = 0; f < 30; ++f)
            sim.step(kFrame);
    }
};

void BM_self_collision(benchmark::State& bench)
{
    const bool enabled = bench.range(0) != 0;
    const int threads = int(bench.range(1));
    const bool triangles = bench.range(4) != 0;
    Pile pile(float(bench.range(2)), threads, triangles, float(bench.range(5)) / 100.0f);
    auto& sim = pile.sim;
    sim.set_vectorized(bench.range(3) != 0);
    auto& self = pile.self;
    const auto& frame = kFrame;
    self.set_enabled(enabled);
    const auto rebuilds = self.rebuilds();
    const double seconds = benchmarking::seconds_per_iteration(bench, [&] { sim.step(frame); });
    if (sim.diverged())
        bench.SkipWithError("diverged");
    using C = benchmark::Counter;
    bench.counters["ms/frame"] = 1e3 * seconds;
    bench.counters["contacts"] = double(self.contacts());
    bench.counters["candidates/particle"] = double(self.candidates()) / double(sim.size());
    bench.counters["rebuilds/frame"] = C(double(self.rebuilds() - rebuilds), C::kAvgIterations);
    bench.SetLabel(std::string(enabled ? "with" : "without") + " self-collision" +
                   (enabled && triangles ? " and triangle contacts, " : ", ") + "thickness " +
                   std::to_string(bench.range(5)) + "% of the spacing, " + std::to_string(threads) +
                   (threads > 1 ? " threads" : " thread") + (sim.vectorized() ? "" : ", scalar"));
}
/// The stage's two parts on the same pile, one thread: building the candidate list with a margin
/// of `margin_percent` of the thickness (0: the list a rebuild every substep would need), and
/// one resolving pass over the list the stage left, vector or scalar.
void BM_self_collision_build(benchmark::State& bench)
{
    Pile pile(60000.0f, 1);
    const float margin = kSpacing * float(bench.range(0)) / 100.0f;
    auto& world = *detail::world_of(pile.sim);
    const auto s = pile.sim.state().arrays_view();
    detail::CandidateList<float> list;
    const double seconds = benchmarking::seconds_per_iteration(
        bench, [&] { detail::build_candidates(list, world, s, 0, pile.sim.size(), kSpacing, margin); });
    bench.counters["candidates/particle"] = double(list.partners.size()) / double(pile.sim.size());
    bench.counters["ms"] = 1e3 * seconds;
}

void BM_self_collision_pass(benchmark::State& bench)
{
    Pile pile(60000.0f, 1);
    pile.sim.set_vectorized(bench.range(0) != 0);
    auto& world = *detail::world_of(pile.sim);
    auto& data = *detail::self_collision_data(pile.self);
    const auto s = pile.sim.state().arrays_view();
    // Time passes over a copy of the positions, restored each time, so every pass does the same work.
    const std::vector<float> x(s.x, s.x + pile.sim.size()), y(s.y, s.y + pile.sim.size()),
        z(s.z, s.z + pile.sim.size());
    int contacts = 0;
    for (auto _ : bench)
    {
        contacts = detail::resolve_pass(data, world, s);
        bench.PauseTiming();
        std::copy(x.begin(), x.end(), s.x);
        std::copy(y.begin(), y.end(), s.y);
        std::copy(z.begin(), z.end(), s.z);
        bench.ResumeTiming();
    }
    bench.counters["contacts"] = double(contacts);
    bench.counters["candidates/particle"] = double(data.candidates.partners.size()) / double(pile.sim.size());
}

/// The stage's parts on BM_self_collision's frames (vector, on `threads` threads): finding the
/// particles the floor holds, the stale-list test, the builds, the layouts and the passes, each
/// timed by a stage that runs them in collide_self's order in place of the registered one. In ms
/// per frame.
void BM_self_collision_parts(benchmark::State& bench)
{
    using Clock = std::chrono::steady_clock;
    Pile pile(60000.0f, int(bench.range(0)));
    auto& sim = pile.sim;
    auto& d = *detail::self_collision_data(pile.self);
    const auto& world = *detail::world_of(sim);
    pile.self.set_enabled(false);
    Clock::duration held{}, check{}, build{}, layout{}, pass{};
    const auto timed = [](Clock::duration& into, auto&& part) {
        const auto start = Clock::now();
        part();
        into += Clock::now() - start;
    };
    sim.add_position_projection("self_collision_parts", [&](State3<float>& state, float) {
        const auto s = state.arrays_view();
        const std::size_t n = state.size();
        bool current = false;
        timed(held, [&] { detail::mark_held(d, world, s, 0, n); });
        timed(check, [&] {
            current = detail::list_is_current(d.candidates, world, s, 0, n, d.thickness, world.vectorized());
        });
        if (!current)
            timed(build, [&] {
                detail::build_candidates(d.candidates, world, s, 0, n, d.thickness, detail::list_margin(d.thickness));
            });
        timed(layout, [&] {
            if (!d.candidates.layout.ready)
                detail::lay_out_pairs(d.candidates, simd::kLanes<float>);
        });
        timed(pass, [&] { d.contacts = detail::resolve_pass(d, world, s); });
        timed(held, [&] { detail::remember_left(d, world, s, 0, n); });
    });
    for (auto _ : bench)
        sim.step(kFrame);
    const auto per_frame = [&](Clock::duration total) {
        return 1e3 * std::chrono::duration<double>(total).count() / double(bench.iterations());
    };
    bench.counters["held"] = per_frame(held);
    bench.counters["check"] = per_frame(check);
    bench.counters["build"] = per_frame(build);
    bench.counters["layout"] = per_frame(layout);
    bench.counters["pass"] = per_frame(pass);
    bench.counters["stage"] = per_frame(held + check + build + layout + pass);
    bench.counters["contacts"] = double(d.contacts);
}

/// The read every pass makes of whether the candidate list is stale: every particle's move since
/// the list was built, measured from the list's centre (kernels::survey_moves, over the pile's
/// current positions against the list's), vector twin against scalar.
void BM_self_collision_staleness(benchmark::State& bench)
{
    Pile pile(60000.0f, 1);
    const auto& list = detail::self_collision_data(pile.self)->candidates;
    const auto s = pile.sim.state().arrays_view();
    const std::size_t n = pile.sim.size();
    std::vector<std::uint32_t> few(n + 16);
    const float half = list.margin / 2;
    kernels::MoveSurvey<float> survey{};
    for (auto _ : bench)
    {
        survey = bench.range(0) != 0
                     ? kernels::survey_moves_vector<xsimd::default_arch>(s.x, s.y, s.z, list.built_x.data(),
                                                                         list.built_y.data(), list.built_z.data(), n,
                                                                         list.drift.centre, half * half, few.data())
                     : kernels::survey_moves(s.x, s.y, s.z, list.built_x.data(), list.built_y.data(),
                                             list.built_z.data(), n, list.drift.centre, half * half, few.data());
        benchmark::DoNotOptimize(survey);
    }
    bench.counters["largest"] = std::sqrt(survey.first);
    bench.counters["beyond"] = double(survey.beyond);
    bench.SetItemsProcessed(std::int64_t(bench.iterations()) * std::int64_t(n));
}
} // namespace

BENCHMARK(BM_self_collision_build)->ArgName("margin%")->Arg(0)->Arg(25)->Arg(50)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_self_collision_pass)->ArgName("vectorized")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_self_collision_parts)->ArgName("threads")->Arg(1)->Arg(2)->Iterations(60)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_self_collision_staleness)->ArgName("vectorized")->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_self_collision)
    ->ArgNames({"self", "threads", "k", "vectorized", "triangles", "thickness%"})
    ->Args({1, 1, 60000, 1, 0, 100})
    ->Args({1, 1, 60000, 0, 0, 100})
    ->Args({0, 1, 60000, 1, 0, 100})
    ->Args({1, 2, 60000, 1, 0, 100})
    ->Args({0, 2, 60000, 1, 0, 100})
    // With point-triangle contacts: the same pile, its triangles against its particles; and a
    // thin pile (the same, at a fifth of the thickness), with and without them.
    ->Args({1, 1, 60000, 1, 1, 100})
    ->Args({1, 2, 60000, 1, 1, 100})
    ->Args({1, 1, 60000, 1, 1, 20})
    ->Args({1, 1, 60000, 1, 0, 20})
    ->Args({0, 1, 60000, 1, 0, 20})
    // The peer scene's own stiffness: at the edge of stability for dt / 6 when hanging, it does
    // not survive the pile's compression and the floor (with or without self-collision).
    ->Args({0, 1, 110000, 1, 0, 100})
    // The pile's frames 30 to 90: a fixed count, so that a faster stage times the same frames (the
    // pile settles, and its contacts grow, as it is stepped).
    ->Iterations(60)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
