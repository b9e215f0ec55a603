// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/core/constraint_layers.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/constraint_layers.hpp is deprecated: include simdverlet/core/constraint_layers.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/core/constraint_layers.hpp"
