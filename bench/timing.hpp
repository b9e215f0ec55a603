// Wall-clock timing the benchmarks share, so per-frame costs print as plain numbers. Google
// Benchmark prints a rate counter with a "/s" suffix and an inverted one as seconds ("1.09ms/frame"
// came out as "1.09ms"), so counters made from these helpers are plain values: milliseconds are
// milliseconds.
#pragma once

#include <chrono>

#include <benchmark/benchmark.h>

namespace simdverlet::benchmarking
{

/// Runs `body` once per benchmark iteration and returns its wall-clock seconds per iteration.
/// `reset` runs after each body with the benchmark's timer paused, and outside this clock too.
template <class Body, class Reset>
double seconds_per_iteration(benchmark::State& bench, Body&& body, Reset&& reset)
{
    using Clock = std::chrono::steady_clock;
    Clock::duration total{};
    for (auto _ : bench)
    {
        const auto start = Clock::now();
        body();
        total += Clock::now() - start;
        bench.PauseTiming();
        reset();
        bench.ResumeTiming();
    }
    return std::chrono::duration<double>(total).count() / double(bench.iterations());
}

/// As above, with nothing to reset between iterations: the clock spans the whole loop.
template <class Body>
double seconds_per_iteration(benchmark::State& bench, Body&& body)
{
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    for (auto _ : bench)
        body();
    return std::chrono::duration<double>(Clock::now() - start).count() / double(bench.iterations());
}

} // namespace simdverlet::benchmarking
