// The thread setup the benchmarks share: OpenMP where the build has it.
#pragma once

#include <memory>

#include <simdverlet/core/simulation.hpp>
#if SIMDVERLET_HAVE_OPENMP
#    include <simdverlet/core/parallel/openmp.hpp>
#endif

namespace simdverlet::benchmarking
{

/// Runs `sim` on `threads` OpenMP threads in chunks of 16 384 particles; 1 leaves it serial.
/// Returns false, leaving it serial, when more than one thread was asked for and the build has no
/// OpenMP.
template <class T>
bool use_threads(Simulation<T>& sim, int threads)
{
    if (threads <= 1)
        return true;
#if SIMDVERLET_HAVE_OPENMP
    sim.set_executor(std::make_shared<OpenMPExecutor>(threads), 16384);
    return true;
#else
    return false;
#endif
}

} // namespace simdverlet::benchmarking
