// The check every collider's tests share: a shape's vector path against its scalar twin on a
// cloud of particles.
#pragma once

#include <cstddef>
#include <random>

#include "catch.hpp"
#include "support.hpp"

namespace simdverlet::testing
{

/// 1000 particles scattered through [-3, 3]^3 with random per-frame velocities; every 7th pinned.
template <class T>
Simulation<T> particle_cloud(Masses masses = Masses::per_particle)
{
    Simulation<T> sim(masses);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> pos(-3, 3), vel(-0.2, 0.2);
    for (int i = 0; i < 1000; ++i)
    {
        const auto k = sim.add_particle({T(pos(rng)), T(pos(rng)), T(pos(rng))},
                                        masses == Masses::per_particle && i % 7 == 0 ? T(0) : T(1));
        sim.state().set_velocity(std::size_t(k), {T(vel(rng)), T(vel(rng)), T(vel(rng))});
    }
    return sim;
}

/// Projects a fresh cloud through the vector path and another through the scalar twin, over a range
/// that starts and ends mid-batch; returns the vector path's contact count after checking equality.
/// Masses::unit leaves the cloud without pinned particles or an inverse-mass array.
template <class T, class C>
int check_collider_twins(C vector_collider, Masses masses = Masses::per_particle)
{
    C scalar_collider = vector_collider;
    scalar_collider.vectorized = false;
    auto a = particle_cloud<T>(masses);
    auto b = particle_cloud<T>(masses);
    const auto untouched = particle_cloud<T>(masses);
    const std::size_t begin = 3, end = a.size() - 5;
    const int cv = vector_collider.project(a.state(), begin, end);
    const int cs = scalar_collider.project(b.state(), begin, end);
    CHECK(cv == cs);
    CHECK(a.state() == b.state());
    // Outside the range and pinned particles are exactly as they were.
    for (std::size_t i = 0; i < a.size(); ++i)
        if (i < begin || i >= end || a.state().is_pinned(i))
        {
            CHECK(a.state().position(i) == untouched.state().position(i));
            CHECK(a.state().velocity(i) == untouched.state().velocity(i));
        }
    return cv;
}

} // namespace simdverlet::testing
