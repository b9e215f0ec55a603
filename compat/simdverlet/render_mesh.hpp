// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/cloth/render_mesh.hpp", or the umbrella header.
#pragma once
#pragma message(                                                                                                       \
    "simdverlet/render_mesh.hpp is deprecated: include simdverlet/cloth/render_mesh.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/cloth/render_mesh.hpp"
