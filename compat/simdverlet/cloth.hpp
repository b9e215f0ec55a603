// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/cloth/cloth.hpp", or the umbrella header.
#pragma once
#pragma message("simdverlet/cloth.hpp is deprecated: include simdverlet/cloth/cloth.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/cloth/cloth.hpp"
