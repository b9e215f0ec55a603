// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/io/snapshot.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/snapshot.hpp is deprecated: include simdverlet/io/snapshot.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/io/snapshot.hpp"
