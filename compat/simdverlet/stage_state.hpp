// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/core/stage_state.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/stage_state.hpp is deprecated: include simdverlet/core/stage_state.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/core/stage_state.hpp"
