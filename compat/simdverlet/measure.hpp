// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/core/measure.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/measure.hpp is deprecated: include simdverlet/core/measure.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/core/measure.hpp"
