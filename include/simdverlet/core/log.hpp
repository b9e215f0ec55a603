// The library's one output channel. simdverlet never prints on its own: warnings such as a
// diverged step go through a replaceable hook, which writes to stderr until a user replaces it
// (with a game's console, a test's capture, or nothing).
#pragma once

#include <functional>
#include <iostream>
#include <string_view>
#include <utility>

namespace simdverlet
{

enum class LogLevel
{
    info,
    warning,
    error, ///< an error in a build without exceptions, just before it aborts
};

using LogHook = std::function<void(LogLevel, std::string_view)>;

namespace detail
{
inline void log_to_stderr(LogLevel level, std::string_view message)
{
    std::cerr << (level == LogLevel::error     ? "simdverlet error: "
                  : level == LogLevel::warning ? "simdverlet warning: "
                                               : "simdverlet: ")
              << message << '\n';
}

inline LogHook& log_hook_slot()
{
    static LogHook hook = log_to_stderr;
    return hook;
}
} // namespace detail

/// Replaces the log hook for the whole library and returns the previous one. An empty hook
/// restores the default (stderr). Not synchronised: set it before stepping from several threads.
inline LogHook set_log_hook(LogHook hook)
{
    LogHook previous = std::move(detail::log_hook_slot());
    detail::log_hook_slot() = hook ? std::move(hook) : LogHook(detail::log_to_stderr);
    return previous;
}

inline void log(LogLevel level, std::string_view message)
{
    detail::log_hook_slot()(level, message);
}

} // namespace simdverlet
