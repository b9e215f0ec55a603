// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/collision/self_collision.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/self_collision.hpp is deprecated: include simdverlet/collision/self_collision.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/collision/self_collision.hpp"
