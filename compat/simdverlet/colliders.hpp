// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/collision/colliders.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/colliders.hpp is deprecated: include simdverlet/collision/colliders.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/collision/colliders.hpp"
