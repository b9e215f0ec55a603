// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/collision/mesh_collider.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/mesh_collider.hpp is deprecated: include simdverlet/collision/mesh_collider.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/collision/mesh_collider.hpp"
