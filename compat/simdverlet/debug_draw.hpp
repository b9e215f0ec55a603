// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/io/debug_draw.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/debug_draw.hpp is deprecated: include simdverlet/io/debug_draw.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/io/debug_draw.hpp"
