// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/collision/detail/self_collision_candidates.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/self_collision_candidates.hpp is deprecated: include simdverlet/collision/detail/self_collision_candidates.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/collision/detail/self_collision_candidates.hpp"
