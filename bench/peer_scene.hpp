// The peer scene the benchmarks share: a 256 x 256 cloth (spacing 0.5, unit masses, no curvature,
// laid out hanging straight down at rest length, top row pinned) stepped at 60 frames/s under
// g = 9.81, one iteration and `substeps` substeps a frame.
#pragma once

#include <simdverlet/cloth/cloth.hpp>
#include <simdverlet/core/simulation.hpp>

namespace simdverlet::benchmarking
{

inline Cloth<float> add_peer_sheet(Simulation<float>& sim, float stiffness)
{
    return add_cloth(sim, {.width = 256,
                           .height = 256,
                           .spacing = 0.5f,
                           .stiffness = stiffness,
                           .curvature_strength = 0.0f,
                           .pinned = [](int, int r) { return r == 0; }});
}

inline StepParams<float> peer_frame(int substeps)
{
    return {.dt = 1.0f / 60.0f, .gravity = {0, 9.81f, 0}, .iterations = 1, .substeps = substeps};
}

} // namespace simdverlet::benchmarking
