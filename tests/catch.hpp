// Catch2 compatibility header for the simdverlet tests: include this, never Catch2 directly.
//
// Catch2 3.x (vcpkg, FetchContent) splits the single header of Catch2 2.x (Debian 12 ships
// 2.13). Everything the tests use exists in both under the same names:
//   TEST_CASE, SECTION, REQUIRE, CHECK, REQUIRE_THROWS_AS, REQUIRE_THROWS_WITH, ...
//   TEMPLATE_TEST_CASE, TestType
//   Approx(x)                              (plain, unqualified)
//   REQUIRE_THAT(v, WithinAbs(t, m)), REQUIRE_THAT(v, WithinRel(t, eps))
//   REQUIRE_THROWS_WITH(expr, ContainsSubstring("17"))
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
// Catch2 3.x
#    include <catch2/catch_approx.hpp>
#    include <catch2/catch_template_test_macros.hpp>
#    include <catch2/catch_test_macros.hpp>
#    include <catch2/matchers/catch_matchers_floating_point.hpp>
#    include <catch2/matchers/catch_matchers_string.hpp>
#    define SIMDVERLET_CATCH2_MAJOR 3
using Catch::Approx;
using Catch::Matchers::ContainsSubstring;
#else
// Catch2 2.x: one header; Approx is already visible unqualified, the matchers live in
// Catch::Matchers as in 3.x. Contains was renamed ContainsSubstring in 3.0.
#    include <catch2/catch.hpp>
#    define SIMDVERLET_CATCH2_MAJOR 2
namespace Catch::Matchers
{
inline auto ContainsSubstring(const std::string& s, CaseSensitive::Choice cs = CaseSensitive::Yes)
{
    return Contains(s, cs);
}
} // namespace Catch::Matchers
using Catch::Matchers::ContainsSubstring;
#endif

// In both versions the floating-point matchers are Catch::Matchers::WithinAbs / WithinRel
// (and WithinULP).
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using Catch::Matchers::WithinULP;
