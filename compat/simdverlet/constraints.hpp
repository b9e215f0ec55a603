// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/core/constraints.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/constraints.hpp is deprecated: include simdverlet/core/constraints.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/core/constraints.hpp"
