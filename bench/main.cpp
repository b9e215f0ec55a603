// The benchmark executable's entry point; the suites are in the other files of bench/.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
