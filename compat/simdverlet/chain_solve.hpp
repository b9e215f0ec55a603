// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/limits/detail/chain_solve.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/chain_solve.hpp is deprecated: include simdverlet/limits/detail/chain_solve.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/limits/detail/chain_solve.hpp"
