// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/cloth/tearing.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/tearing.hpp is deprecated: include simdverlet/cloth/tearing.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/cloth/tearing.hpp"
