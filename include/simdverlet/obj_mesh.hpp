// Loading a triangle mesh from a Wavefront OBJ file, for a TriangleMeshCollider. Optional: this
// header needs tinyobjloader (Debian: libtinyobjloader-dev; CMake: link
// tinyobjloader::tinyobjloader, or simdverlet::obj where simdverlet found it). The rest of the
// library does not include it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <tiny_obj_loader.h>

#include "error.hpp"
#include "mesh_collider.hpp"

namespace simdverlet
{

/// Reads the vertices and faces of every shape in an OBJ file; polygons are split into triangle
/// fans. Normals, texture coordinates and materials are ignored. A file that cannot be read or
/// parsed is a std::runtime_error naming the path; a vertex that is not finite, an index out of
/// range or a degenerate triangle is a std::invalid_argument naming the path and the element.
template <class T>
TriangleMesh<T> load_obj_mesh(const std::string& path)
{
    tinyobj::ObjReaderConfig config;
    config.triangulate = true;
    config.vertex_color = false;
    tinyobj::ObjReader reader;
    if (!reader.ParseFromFile(path, config))
        detail::raise<std::runtime_error>("simdverlet: cannot load OBJ file '" + path + "': " + reader.Error());
    const auto& attrib = reader.GetAttrib();
    TriangleMesh<T> mesh;
    mesh.vertices.reserve(attrib.vertices.size() / 3);
    for (std::size_t k = 0; k + 2 < attrib.vertices.size(); k += 3)
        mesh.vertices.emplace_back(T(attrib.vertices[k]), T(attrib.vertices[k + 1]), T(attrib.vertices[k + 2]));
    for (const auto& shape : reader.GetShapes())
    {
        const auto& indices = shape.mesh.indices;
        std::size_t at = 0;
        for (const auto corners : shape.mesh.num_face_vertices)
        {
            // Triangulated on load; anything else (a line or point element) is not a surface.
            if (corners == 3)
                mesh.triangles.push_back({std::int32_t(indices[at].vertex_index),
                                          std::int32_t(indices[at + 1].vertex_index),
                                          std::int32_t(indices[at + 2].vertex_index)});
            at += corners;
        }
    }
    detail::check_mesh(mesh.vertices, mesh.triangles, "OBJ file '" + path + "'");
    return mesh;
}

} // namespace simdverlet
