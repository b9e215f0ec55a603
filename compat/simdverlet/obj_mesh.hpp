// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/io/obj_mesh.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/obj_mesh.hpp is deprecated: include simdverlet/io/obj_mesh.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/io/obj_mesh.hpp"
