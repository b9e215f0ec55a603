// Built with -fno-exceptions: a step with dt = -1 must report the library's message through the
// default log hook (stderr) and abort. Reaching the end means the error went unnoticed.
#include <cstdio>

#include <simdverlet/simdverlet.hpp>

static_assert(SIMDVERLET_EXCEPTIONS == 0, "this program checks the build without exceptions");

int main()
{
    simdverlet::Simulation<float> sim;
    sim.add_particle({0, 0, 0});
    sim.step({.dt = -1.0f});
    std::printf("bad_step: the step returned\n");
    return 0;
}
