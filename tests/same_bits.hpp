// The determinism check every stage's tests share: a scene run as given, scalar, and over every
// executor and grain gives the same bits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

#if SIMDVERLET_HAVE_OPENMP
#    include <simdverlet/core/parallel/openmp.hpp>
#endif

namespace simdverlet::testing
{

/// True in the sanitizer build (the asan preset), which runs the heaviest bitwise scenes over fewer
/// frames: the same comparisons on every path, at a fraction of the instrumented cost.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#    if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#    else
inline constexpr bool kSanitized = false;
#    endif
#else
inline constexpr bool kSanitized = false;
#endif

/// Runs the jobs serially in reverse order, and counts its calls and their jobs: a chunk that
/// depended on another having run first would see it not yet run. It reports `threads`, so what a
/// stage cuts by the executor's thread count is cut as for that many.
class ReversedExecutor final : public Executor
{
  public:
    void run(std::size_t count, const std::function<void(std::size_t)>& fn) override
    {
        ++calls;
        most = std::max(most, count);
        for (std::size_t k = count; k-- > 0;)
            fn(k);
    }
    int threads() const override { return m_threads; }
    explicit ReversedExecutor(int threads = 1) : m_threads(threads) {}
    int m_threads;
    std::size_t calls = 0;
    std::size_t most = 0; ///< jobs in the largest call: the chunk count of a full sweep
};

/// The executors a bitwise test runs over, named: the serial executor and, where the build has
/// OpenMP, 1, 2 and 3 threads.
inline std::vector<std::pair<std::string, std::shared_ptr<Executor>>> bitwise_executors()
{
    std::vector<std::pair<std::string, std::shared_ptr<Executor>>> executors = {
        {"serial executor", std::make_shared<SerialExecutor>()}};
#if SIMDVERLET_HAVE_OPENMP
    for (int threads : {1, 2, 3})
        executors.emplace_back("OpenMP x" + std::to_string(threads), std::make_shared<OpenMPExecutor>(threads));
#endif
    return executors;
}

/// `run(configure)` builds a scene, calls configure(sim), steps it and returns the simulation and
/// a count the stage reported. Checks that the scalar path and the serial executor and OpenMP on
/// 1, 2 and 3 threads, each at grains 1, 40 and `large_grain`, give the reference's positions, and
/// the scalar path its count too. Returns the reference's count, for the caller to check that the
/// stage did work.
template <class Run>
int check_same_bits_on_every_path(Run run, std::size_t large_grain = 1000)
{
    const auto reference = run([](auto&) {});
    const auto scalar = run([](auto& s) { s.set_vectorized(false); });
    CHECK(same_positions(scalar.first, reference.first));
    CHECK(scalar.second == reference.second);
    for (const auto& named : bitwise_executors())
        for (std::size_t grain : {std::size_t(1), std::size_t(40), large_grain})
        {
            INFO(named.first << ", grain " << grain);
            const auto executor = named.second;
            const auto threaded = run([&](auto& s) { s.set_executor(executor, grain); });
            CHECK(same_positions(threaded.first, reference.first));
        }
    return reference.second;
}

} // namespace simdverlet::testing
