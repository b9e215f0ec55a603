// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/limits/detail/spring_chains.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/spring_chains.hpp is deprecated: include simdverlet/limits/detail/spring_chains.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/limits/detail/spring_chains.hpp"
