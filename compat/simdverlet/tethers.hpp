// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/limits/tethers.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/tethers.hpp is deprecated: include simdverlet/limits/tethers.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/limits/tethers.hpp"
