// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/cloth/strand.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/strand.hpp is deprecated: include simdverlet/cloth/strand.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/cloth/strand.hpp"
