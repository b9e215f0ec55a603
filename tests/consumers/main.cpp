// The consumer projects' program: a cloth settles on a ball; exits non-zero unless it measurably
// did, so a consumer build that links but computes nothing still fails.
#include <cstdio>

#include <simdverlet/simdverlet.hpp>

int main()
{
    simdverlet::Simulation<float> sim;
    auto cloth = simdverlet::add_cloth(sim, {.width = 12, .height = 8, .position = [](int c, int r) {
                                                 return simdverlet::Vec3<float>(0.5f * c, 0.0f, 0.5f * r);
                                             }});
    auto world = simdverlet::add_colliders(
        sim, {}, simdverlet::SphereCollider<float>({.center = {2.75f, 2.0f, 1.75f}, .radius = 1.0f}));
    for (int frame = 0; frame < 240; ++frame)
        cloth.step({.gravity = {0, 2, 0}, .iterations = 16});
    std::printf("consumer: %d particles resting on the ball, peak strain %.3f\n", world.contacts(),
                simdverlet::peak_strain(sim));
    return world.contacts() > 10 && !sim.diverged() ? 0 : 1;
}
