// strain_ladder: one knob, one ladder. Four products of stiffness x iterations, 400 frames each,
// captioned with the worst strain any spring reached, for the springs alone and again with a
// curvature strength of 100. A rung that blows up is drawn at its last finite frame. Writes
// strain_ladder.svg.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace sv = simdverlet;

struct Rung
{
    sv::Simulation<float> sim;
    double peak = 0;
    int blew_up_at = -1;
};

// Runs one setting; stops at the first non-finite frame and rewinds to the last finite one.
static void climb(Rung& rung, float stiffness, int iterations, float curvature)
{
    sv::add_cloth(rung.sim, {.stiffness = stiffness, .curvature_strength = curvature, .pinned = [](int c, int r) {
                                 return r == 0 && c % 4 == 0;
                             }});
    for (int frame = 1; frame <= 400; ++frame)
    {
        const sv::State3<float> last = rung.sim.state();
        rung.sim.step({.gravity = {0, 2, 0}, .iterations = iterations});
        const double now = sv::peak_strain(rung.sim);
        if (!std::isfinite(now))
        {
            rung.blew_up_at = frame;
            rung.sim.state() = last;
            return;
        }
        rung.peak = std::max(rung.peak, now);
    }
}

static std::string verdict(const Rung& r)
{
    char text[64];
    if (r.blew_up_at > 0)
        std::snprintf(text, sizeof text, "NOT FINITE from frame %d", r.blew_up_at);
    else
        std::snprintf(text, sizeof text, "%.0f %%", 100.0 * r.peak);
    return text;
}

int main(int argc, char** argv)
{
    const std::string out = argc > 1 ? argv[1] : ".";
    sv::set_log_hook([](sv::LogLevel, std::string_view) {}); // a rung may diverge on purpose
    const std::vector<std::pair<float, int>> ladder = {{0.8f, 8}, {8, 8}, {20, 16}, {60, 16}};
    std::vector<Rung> bare(ladder.size()), curved(ladder.size());
    sv::svg::Figure figure({.columns = 4, .cell_width = 300, .title = "Peak strain over 400 frames, by product"});
    for (std::size_t n = 0; n < ladder.size(); ++n)
    {
        const auto [k, iterations] = ladder[n];
        climb(bare[n], k, iterations, 0.0f);
        climb(curved[n], k, iterations, 100.0f);
        char head[96];
        std::snprintf(head, sizeof head, "stiffness %g x %d (product %.0f)", double(k), iterations,
                      double(k) * iterations);
        const std::string caption = std::string(head) + "\npeak strain " + verdict(bare[n]) +
                                    "\nwith curvature 100: " + verdict(curved[n]);
        figure.add_panel(caption).add(sv::debug_lines(bare[n].sim));
        std::printf("%-36s springs alone %-22s with curvature 100 %s\n", head, verdict(bare[n]).c_str(),
                    verdict(curved[n]).c_str());
    }
    figure.save(out + "/strain_ladder.svg");
    return 0;
}
