// oneTBB adapter for Simulation::set_executor. Include it only in a program linked with oneTBB
// (CMake: find_package(TBB) and link TBB::tbb).
#pragma once

#include <stdexcept>
#include <string>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/parallel.hpp"

namespace simdverlet
{

/// Runs a simulation's chunks with tbb::parallel_for inside its own task arena of a fixed size.
class TbbExecutor final : public Executor
{
  public:
    explicit TbbExecutor(int threads = tbb::this_task_arena::max_concurrency()) : m_threads(threads)
    {
        if (threads < 1)
            detail::raise<std::invalid_argument>("simdverlet: a oneTBB executor needs at least 1 thread, got " +
                                                 std::to_string(threads));
        m_arena.initialize(threads);
    }

    void run(std::size_t count, const std::function<void(std::size_t)>& fn) override
    {
        m_arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1),
                              [&](const tbb::blocked_range<std::size_t>& r) {
                                  for (std::size_t k = r.begin(); k != r.end(); ++k)
                                      fn(k);
                              });
        });
    }

    int threads() const override { return m_threads; }

  private:
    int m_threads;
    tbb::task_arena m_arena;
};

} // namespace simdverlet
