// The executor interface: how a simulation spreads its particle sweeps over threads. The library
// has no thread pool of its own; adapters for OpenMP and oneTBB live in parallel/openmp.hpp and
// parallel/tbb.hpp and are compiled only when a user includes them.
//
// Splits are made on whole 64-byte blocks of particles and every particle's arithmetic is the same
// whichever chunk it lands in, so results are bit-identical for any thread count and any grain.
#pragma once

#include <cstddef>
#include <functional>

namespace simdverlet
{

/// Runs a number of independent jobs, possibly concurrently.
class Executor
{
  public:
    virtual ~Executor() = default;
    /// Calls fn(k) exactly once for every k in [0, count) and returns when all calls have. Calls
    /// may run concurrently; fn does not throw.
    virtual void run(std::size_t count, const std::function<void(std::size_t)>& fn) = 0;
    /// Threads it runs on, for reports.
    virtual int threads() const = 0;
};

/// Runs every job on the calling thread, in order. What a simulation does without an executor.
class SerialExecutor final : public Executor
{
  public:
    void run(std::size_t count, const std::function<void(std::size_t)>& fn) override
    {
        for (std::size_t k = 0; k < count; ++k)
            fn(k);
    }
    int threads() const override { return 1; }
};

} // namespace simdverlet
