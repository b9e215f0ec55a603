// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/limits/motion.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/motion.hpp is deprecated: include simdverlet/limits/motion.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/limits/motion.hpp"
