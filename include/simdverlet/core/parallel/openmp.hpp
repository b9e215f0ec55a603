// OpenMP adapter for Simulation::set_executor. Include it only in a program compiled with OpenMP
// (-fopenmp; CMake: find_package(OpenMP) and link OpenMP::OpenMP_CXX).
#pragma once

#include <cstdint>
#include <stdexcept>

#include <omp.h>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/parallel.hpp"

namespace simdverlet
{

/// Runs a simulation's chunks with `#pragma omp parallel for` on a fixed number of threads.
/// Leave OMP_WAIT_POLICY unset: with `passive`, threads sleep between the sweeps of a step and
/// waking them costs what the second thread saves (1.10 times one thread on the peer scene, against
/// 1.77 with the default); `active` is no faster than the default and spins a core between frames,
/// starving any other thread pool (docs/performance.md, "Threads").
class OpenMPExecutor final : public Executor
{
  public:
    explicit OpenMPExecutor(int threads = omp_get_max_threads()) : m_threads(threads)
    {
        if (threads < 1)
            detail::raise<std::invalid_argument>("simdverlet: an OpenMP executor needs at least 1 thread, got " +
                                                 std::to_string(threads));
    }

    void run(std::size_t count, const std::function<void(std::size_t)>& fn) override
    {
        const auto n = static_cast<std::int64_t>(count);
#pragma omp parallel for num_threads(m_threads) schedule(static)
        for (std::int64_t k = 0; k < n; ++k)
            fn(static_cast<std::size_t>(k));
    }

    int threads() const override
    {
        return m_threads;
    }

  private:
    int m_threads;
};

} // namespace simdverlet
