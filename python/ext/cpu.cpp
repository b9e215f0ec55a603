// simdverlet._cpu: which builds of the extension this processor runs. Asked of the processor
// through the compiler's __builtin_cpu_supports, which also checks that the operating system saves
// the wider registers; compiled for the x86-64 baseline, so it imports on any x86-64.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

namespace py = pybind11;

namespace
{
/// The instruction sets of the extension's builds this processor can run, narrowest first.
std::vector<std::string> supported()
{
    __builtin_cpu_init();
    std::vector<std::string> sets = {"sse2"};
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx2)
        sets.emplace_back("avx2");
    if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        sets.emplace_back("avx512");
    return sets;
}
} // namespace

PYBIND11_MODULE(_cpu, m)
{
    m.doc() = "Which builds of simdverlet's extension this processor runs.";
    m.def("supported", &supported, "The instruction sets of the builds this processor runs, narrowest first.");
}
