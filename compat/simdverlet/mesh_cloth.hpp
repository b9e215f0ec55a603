// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/cloth/mesh_cloth.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/mesh_cloth.hpp is deprecated: include simdverlet/cloth/mesh_cloth.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/cloth/mesh_cloth.hpp"
