// hello_cloth: the guide's sheet, a 20 x 10 grid at spacing 0.5 hanging from every fourth particle
// of its top row, settling under gravity. Every 50 frames it prints how far the sheet has sagged
// and the worst strain any spring holds, read from the solver's own rest lengths.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;

int main()
{
    constexpr int width = 20;
    constexpr int height = 10;
    constexpr float spacing = 0.5f;
    constexpr float stiffness = 60.0f; // x 16 iterations: the guide's product of 960

    sv::Simulation<float> sim;
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c)
        {
            const bool pinned = r == 0 && c % 4 == 0;
            sim.add_particle({c * spacing, r * spacing, 0.0f}, pinned ? 0.0f : 1.0f);
        }
    // Four axis neighbours per particle, each a symmetric pair of directed slots.
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c)
        {
            const std::size_t i = std::size_t(r * width + c);
            if (c + 1 < width)
                sim.constraints().connect(i, i + 1, spacing, stiffness);
            if (r + 1 < height)
                sim.constraints().connect(i, i + width, spacing, stiffness);
        }

    const auto bottom_rest = (height - 1) * spacing;
    const sv::StepParams<float> params{.gravity = {0.0f, 2.0f, 0.0f}, .iterations = 16}; // +y is down
    std::printf("frame   sag (lowest particle below its rest row)   peak strain\n");
    for (int frame = 1; frame <= 400; ++frame)
    {
        sim.step(params);
        if (frame % 50 != 0)
            continue;
        const auto y = sim.state().y();
        const float lowest = *std::max_element(y.begin(), y.end());
        double peak = 0;
        for (std::size_t i = 0; i < sim.size(); ++i)
            for (int s = 0; s < 4; ++s)
                if (sim.constraints().live(i, s))
                {
                    const auto j = std::size_t(sim.constraints().neighbour(i, s));
                    const float len = (sim.state().position(j) - sim.state().position(i)).norm();
                    const float rest = sim.constraints().rest_length(i, s);
                    peak = std::max(peak, double(std::abs(len - rest) / rest));
                }
        std::printf("%5d   %8.4f world units                          %6.2f %%\n", frame, lowest - bottom_rest,
                    100.0 * peak);
    }
    std::printf("diverged: %s\n", sim.diverged() ? "yes" : "no");
    return sim.diverged() ? 1 : 0;
}
