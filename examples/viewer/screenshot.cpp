#include "screenshot.hpp"

#include <stdexcept>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace viewer
{
void write_png(const std::string& path, int width, int height, const std::vector<unsigned char>& rgb)
{
    if (rgb.size() != std::size_t(width) * std::size_t(height) * 3)
        throw std::runtime_error("screenshot of " + std::to_string(width) + " x " + std::to_string(height) +
                                 " pixels got " + std::to_string(rgb.size()) + " bytes");
    stbi_flip_vertically_on_write(1); // OpenGL's rows run bottom-up, a PNG's top-down
    if (!stbi_write_png(path.c_str(), width, height, 3, rgb.data(), 3 * width))
        throw std::runtime_error("cannot write screenshot '" + path + "'");
}
} // namespace viewer
