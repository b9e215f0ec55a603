// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/limits/strain_limit.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/strain_limit.hpp is deprecated: include simdverlet/limits/strain_limit.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/limits/strain_limit.hpp"
