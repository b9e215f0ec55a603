// flag: a flag nailed to a pole at four points flies in gusty wind until the gusts, growing
// stronger, tear it loose. Prints the gust speed, the tears so far and whether the flag still
// hangs on the pole, once a second, and writes flag.svg (a panel per second). The +y axis points
// down, as in the pictures this library draws.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::Simulation<float> sim;
    // 24 x 16 flag in the x-y plane, its left column against the pole, nailed at every fifth row.
    auto flag = sv::add_cloth(sim, {.width = 24, .height = 16, .spacing = 0.25f, .pinned = [](int c, int r) {
                                        return c == 0 && r % 5 == 0;
                                    }});
    // Gusts along +x with a swirl in z, growing by 1 unit/s every second.
    const auto gust = [](const Vec3& p, float t) -> Vec3 {
        const float base = 2.0f + 1.0f * t;
        const float puff = 1.0f + 0.5f * std::sin(3.0f * t - 0.8f * p.x());
        return {base * puff, 0.0f, 0.6f * base * std::sin(1.7f * t + 0.5f * p.y())};
    };
    auto wind = sv::add_wind(sim, {.gust = gust, .cloths = {flag}});
    auto tearing = sv::add_tearing(sim, {.max_strain = 0.4f, .max_tears_per_frame = 4});

    const auto still_on_pole = [&] {
        // Is any particle of the far edge still connected, spring by spring, to a nail?
        std::vector<bool> reached(sim.size(), false);
        std::vector<std::size_t> todo;
        for (int r = 0; r < flag.height(); r += 5)
        {
            reached[flag.index(0, r)] = true;
            todo.push_back(flag.index(0, r));
        }
        while (!todo.empty())
        {
            const std::size_t i = todo.back();
            todo.pop_back();
            for (int s = 0; s < 4; ++s)
                if (sim.constraints().live(i, s))
                {
                    const auto j = std::size_t(sim.constraints().neighbour(i, s));
                    if (!reached[j])
                    {
                        reached[j] = true;
                        todo.push_back(j);
                    }
                }
        }
        for (int r = 0; r < flag.height(); ++r)
            if (reached[flag.index(flag.width() - 1, r)])
                return true;
        return false;
    };

    const sv::StepParams<float> params{.gravity = {0, 2, 0}, .iterations = 16};
    sv::svg::Figure figure({.columns = 2, .cell_width = 400, .title = "A flag in growing gusts, once a second"});
    for (int frame = 1; frame <= 60 * 12; ++frame)
    {
        sim.step(params);
        if (frame % 60 != 0)
            continue;
        const bool attached = still_on_pole();
        char line[160];
        std::snprintf(line, sizeof line, "second %d: gusts of %.1f, %llu tears, %s", frame / 60,
                      double(gust(flag.position(12, 8), wind.time()).norm()),
                      static_cast<unsigned long long>(tearing.torn()), attached ? "on the pole" : "torn loose");
        figure.add_panel(line).add(sv::debug_lines(sim, {.particles = flag.range()}));
        std::printf("%s\n", line);
        if (!attached)
            break;
    }
    figure.save(out + "/flag.svg");
    return sim.diverged() ? 1 : 0;
}
