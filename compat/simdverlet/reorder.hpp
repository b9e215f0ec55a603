// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/core/reorder.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/reorder.hpp is deprecated: include simdverlet/core/reorder.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/core/reorder.hpp"
