// The one point every error of the library goes through. By default a bad input throws the
// standard exception its message describes; a project built without exceptions (-fno-exceptions,
// as game engines often are) gets the same message through the log hook, then std::abort(): the
// library cannot hand the caller a half-applied change, so it stops where the error was found.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include "simdverlet/core/log.hpp"

/// 1 when errors throw, 0 when they are logged and abort. Follows the compiler's exception switch
/// unless the user defines it before including any simdverlet header.
#ifndef SIMDVERLET_EXCEPTIONS
#    if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#        define SIMDVERLET_EXCEPTIONS 1
#    else
#        define SIMDVERLET_EXCEPTIONS 0
#    endif
#endif

#if SIMDVERLET_EXCEPTIONS
#    include <stdexcept>
#endif

namespace simdverlet::detail
{
/// Reports an error of kind E (std::invalid_argument, std::out_of_range, std::logic_error,
/// std::runtime_error, std::length_error) with `message`. Never returns.
template <class E>
[[noreturn]] void raise(const std::string& message)
{
#if SIMDVERLET_EXCEPTIONS
    throw E(message);
#else
    // The log hook names the level ("simdverlet error: ..."); drop the message's own prefix.
    constexpr std::string_view prefix = "simdverlet: ";
    const std::string_view text = message;
    log(LogLevel::error, text.starts_with(prefix) ? text.substr(prefix.size()) : text);
    std::abort();
#endif
}
} // namespace simdverlet::detail
