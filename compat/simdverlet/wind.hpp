// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/cloth/wind.hpp", or the umbrella header.
#pragma once
#pragma message("simdverlet/wind.hpp is deprecated: include simdverlet/cloth/wind.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/cloth/wind.hpp"
