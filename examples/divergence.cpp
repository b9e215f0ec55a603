// divergence: at a high enough product the explicit solve overshoots and the run stops being a
// number. The peak strain of three settings traced frame by frame; the title gives the frame where
// the one that blows up passes 100 % strain and the frame its coordinates become NaN. Writes
// divergence.svg.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    int warnings = 0;
    sv::set_log_hook([&](sv::LogLevel, std::string_view message) {
        ++warnings;
        std::printf("log: %.*s\n", int(message.size()), message.data());
    });
    const std::vector<float> watched = {60, 100, 150};
    std::vector<sv::svg::Series> traces;
    std::string headline = "none of them diverged";
    for (float k : watched)
    {
        sv::Simulation<float> sim;
        sv::add_cloth(sim, {.stiffness = k, .curvature_strength = 0.0f, .pinned = [](int c, int r) {
                                return r == 0 && c % 4 == 0;
                            }});
        sv::svg::Series trace{std::to_string(int(k)) + " x 16", {}};
        int past_100 = -1, died = -1;
        for (int frame = 1; frame <= 400; ++frame)
        {
            sim.step({.gravity = {0, 2, 0}, .iterations = 16});
            const double strain = sv::peak_strain(sim);
            if (!std::isfinite(strain))
            {
                died = frame;
                break;
            }
            if (past_100 < 0 && strain > 1.0)
                past_100 = frame;
            trace.values.push_back(std::max(strain, 1e-4));
        }
        if (died > 0)
            headline = trace.label + ": 100 % at frame " + std::to_string(past_100) + ", NaN at frame " +
                       std::to_string(died);
        std::printf("%-8s %s\n", trace.label.c_str(),
                    died > 0
                        ? ("100 % at frame " + std::to_string(past_100) + ", NaN at " + std::to_string(died)).c_str()
                        : "settles");
        traces.push_back(std::move(trace));
    }
    std::printf("divergence warnings logged: %d\n", warnings);
    sv::svg::save(out + "/divergence.svg", sv::svg::plot(traces, {.title = "Peak strain per frame - " + headline,
                                                                  .y_title = "peak strain (log)",
                                                                  .log_y = true}));
    return 0;
}
