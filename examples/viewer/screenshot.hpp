// Writing the window's pixels as a PNG (stb_image_write, from Debian's libstb-dev).
#pragma once

#include <string>
#include <vector>

namespace viewer
{
/// Writes `rgb` (width x height, 3 bytes a pixel, rows bottom-up as OpenGL reads them) to `path`
/// as a PNG, top row first. Throws std::runtime_error naming the path when it cannot.
void write_png(const std::string& path, int width, int height, const std::vector<unsigned char>& rgb);
} // namespace viewer
