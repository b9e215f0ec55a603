// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/collision/collider.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/collider.hpp is deprecated: include simdverlet/collision/collider.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/collision/collider.hpp"
