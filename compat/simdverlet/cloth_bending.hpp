// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/cloth/detail/cloth_bending.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/cloth_bending.hpp is deprecated: include simdverlet/cloth/detail/cloth_bending.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/cloth/detail/cloth_bending.hpp"
