// Each collider's projection over 100k particles, xsimd path against the scalar twin in the same
// run. The cloud is restored before every iteration (outside the timed region) so every iteration
// sees the same penetrations: about a third of the particles are in contact.
#include <random>

#include <benchmark/benchmark.h>

#include <simdverlet/simdverlet.hpp>

namespace
{
using namespace simdverlet;

Simulation<float> particle_cloud(std::size_t n)
{
    Simulation<float> sim;
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> pos(-3, 3), vel(-0.05f, 0.05f);
    for (std::size_t i = 0; i < n; ++i)
    {
        const auto k = sim.add_particle({pos(rng), pos(rng), pos(rng)});
        sim.state().set_velocity(std::size_t(k), {vel(rng), vel(rng), vel(rng)});
    }
    return sim;
}

template <class MakeCollider>
void project_cloud(benchmark::State& bench, MakeCollider make, bool vectorized)
{
    auto sim = particle_cloud(100'000);
    const State3<float> original = sim.state();
    auto collider = make();
    collider.vectorized = vectorized;
    int contacts = 0;
    for (auto _ : bench)
    {
        bench.PauseTiming();
        sim.state() = original;
        bench.ResumeTiming();
        contacts = collider.project(sim.state());
        benchmark::DoNotOptimize(contacts);
    }
    using C = benchmark::Counter;
    bench.counters["particles/s"] = C(double(sim.size()), C::kIsIterationInvariantRate);
    bench.counters["contacts"] = contacts;
    bench.SetLabel(vectorized && collider.has_vector_path() ? simd::arch_name() : "scalar");
}

auto plane()
{
    return PlaneCollider<float>({.normal = {0.2f, -1, 0.1f}, .offset = -1});
}
auto sphere()
{
    return SphereCollider<float>({.radius = 2.2f});
}
auto bowl()
{
    return SphereCollider<float>({.radius = 4.0f, .inside = true});
}
auto capsule()
{
    return CapsuleCollider<float>({.a = {-2, 0, 0}, .b = {2, 1, 0}, .radius = 1.4f});
}
auto room()
{
    return BoxCollider<float>({.min = {-2.5f, -2.5f, -2.5f}, .max = {2.5f, 2.5f, 2.5f}});
}
auto crate()
{
    return BoxCollider<float>({.min = {-2, -2, -2}, .max = {2, 1, 2}, .inside = false});
}
auto sdf_sphere()
{
    return SdfCollider<float>({.field = [](const Vec3<float>& p) { return p.norm() - 2.2f; }});
}
} // namespace

#define SIMDVERLET_COLLIDER_BENCH(shape)                                                                               \
    BENCHMARK_CAPTURE(project_cloud, shape##_vector, shape, true)->Unit(benchmark::kMicrosecond);                      \
    BENCHMARK_CAPTURE(project_cloud, shape##_scalar, shape, false)->Unit(benchmark::kMicrosecond)

SIMDVERLET_COLLIDER_BENCH(plane);
SIMDVERLET_COLLIDER_BENCH(sphere);
SIMDVERLET_COLLIDER_BENCH(bowl);
SIMDVERLET_COLLIDER_BENCH(capsule);
SIMDVERLET_COLLIDER_BENCH(room);
SIMDVERLET_COLLIDER_BENCH(crate);
BENCHMARK_CAPTURE(project_cloud, sdf_scalar, sdf_sphere, false)->Unit(benchmark::kMicrosecond);
