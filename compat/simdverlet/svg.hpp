// Forwards the path this header had before the library's headers were sorted into folders by
// layer. It goes in the next release: include "simdverlet/io/svg.hpp", or the umbrella header.
#pragma once
#pragma message("simdverlet/svg.hpp is deprecated: include simdverlet/io/svg.hpp (or simdverlet/simdverlet.hpp)")
#include "simdverlet/io/svg.hpp"
