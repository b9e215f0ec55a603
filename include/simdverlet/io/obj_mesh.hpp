// Loading a triangle mesh from a Wavefront OBJ file: positions, faces fanned into triangles, and
// uvs, sanitized (triangle_mesh.hpp) for a TriangleMeshCollider or a cloth. Optional: this header
// needs tinyobjloader (Debian: libtinyobjloader-dev; CMake: link tinyobjloader::tinyobjloader, or
// simdverlet::obj where simdverlet found it). The rest of the library does not include it.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <tiny_obj_loader.h>

#include "simdverlet/cloth/triangle_mesh.hpp"
#include "simdverlet/core/error.hpp"

namespace simdverlet
{

/// Which way is up in an OBJ file. The library's world has +y down (gravity along +y); a file
/// modelled with y or z up is turned into it, never mirrored, so a closed collider keeps its
/// outside out and a garment's triangles keep their winding.
enum class ObjUp
{
    y_down, ///< the file is already in the library's world: read as it is
    y,      ///< y up (OBJ's usual convention, most modelling tools): turned half a turn about x
    z,      ///< z up (Blender's scene): turned a quarter turn about x, so +z becomes -y
};

/// How load_obj_mesh treats what a file can lose without losing surface, and its units and axes.
struct ObjLoadOptions
{
    MeshRepair repair = MeshRepair::drop; ///< zero-area and repeated triangles, unused vertices, uvs on only some
                                          ///< corners: dropped and reported (assets carry a few), or refused
    double scale = 1.0;       ///< finite and > 0: metres per file unit (0.01 for a file in centimetres). SI is the
                              ///< library's scale: a material's density and stiffness assume metres
    ObjUp up = ObjUp::y_down; ///< the file's up axis, turned into the library's +y down
};

namespace detail
{
/// The line of each vertex (v), uv (vt) and face (f) statement, in the order tinyobjloader
/// numbers them, so that a message can point into the file.
struct ObjLines
{
    std::vector<std::size_t> vertices, uvs, faces;
};

/// " line N" for element k, or nothing where the lines do not cover it.
inline std::string obj_line(const std::vector<std::size_t>& lines, std::size_t k)
{
    return k < lines.size() ? " line " + std::to_string(lines[k]) : std::string();
}

/// Whether `s` is a number as OBJ files write them: [+-] digits [. digits] [e [+-] digits], with a
/// digit on at least one side of the point.
inline bool obj_number(std::string_view s)
{
    std::size_t i = 0, digits = 0;
    const auto skip_digits = [&] {
        std::size_t n = 0;
        for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
            ++n;
        return n;
    };
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
        ++i;
    digits += skip_digits();
    if (i < s.size() && s[i] == '.')
    {
        ++i;
        digits += skip_digits();
    }
    if (digits == 0)
        return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E'))
    {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
            ++i;
        if (skip_digits() == 0)
            return false;
    }
    return i == s.size();
}

/// Checks, line by line, what tinyobjloader would read wrong without a word or refuse with only
/// "Failed parse": it reads a coordinate that is not a number ("nan", "inf", "1,5" from a comma
/// locale) as 0 or as its leading digits, and a missing one as 0; it reads an index with atoi;
/// and it keeps at most 255 corners a face. Throws naming the line; returns the lines of the
/// statements the loader reports on. Statements it does not read (normals, groups, materials)
/// are left alone.
inline ObjLines scan_obj(std::string_view text, const std::string& where)
{
    ObjLines lines;
    std::vector<std::string_view> words;
    for (std::size_t line = 1; !text.empty(); ++line)
    {
        // A line ends at \n, \r\n or a lone \r, as tinyobjloader reads them.
        const std::size_t end = std::min(text.find_first_of("\r\n"), text.size());
        std::string_view rest = text.substr(0, end);
        text.remove_prefix(std::min(text.size(), end + (text.substr(end).starts_with("\r\n") ? 2 : 1)));
        words.clear();
        while (true)
        {
            const std::size_t begin = rest.find_first_not_of(" \t");
            if (begin == std::string_view::npos)
                break;
            rest.remove_prefix(begin);
            const std::size_t length = std::min(rest.find_first_of(" \t"), rest.size());
            words.push_back(rest.substr(0, length));
            rest.remove_prefix(length);
        }
        if (words.empty())
            continue;
        const std::string at = "simdverlet: " + where + " line " + std::to_string(line) + ": ";
        const std::string_view keyword = words[0];
        const std::size_t given = words.size() - 1;
        // The numbers tinyobjloader reads: x y z of a vertex (the rest would be a colour), u [v] of a uv.
        const auto check_numbers = [&](std::size_t least, std::size_t most, const char* element) {
            if (given < least)
                raise<std::invalid_argument>(at + element + " needs " + std::to_string(least) +
                                             " coordinates, but has " + std::to_string(given));
            for (std::size_t k = 1; k <= std::min(given, most); ++k)
                if (!obj_number(words[k]))
                    raise<std::invalid_argument>(at + element + " coordinate '" + std::string(words[k]) +
                                                 "' is not a finite number");
        };
        if (keyword == "v")
        {
            check_numbers(3, 3, "a vertex");
            lines.vertices.push_back(line);
        }
        else if (keyword == "vt")
        {
            check_numbers(1, 2, "a uv");
            lines.uvs.push_back(line);
        }
        else if (keyword == "f")
        {
            if (given < 3 || given > 255)
                raise<std::invalid_argument>(at + "a face needs 3 to 255 corners, but has " + std::to_string(given));
            for (std::size_t k = 1; k <= given; ++k)
            {
                // v, v/vt, v//vn or v/vt/vn: an index may be missing only between two slashes.
                const std::string corner = "face corner '" + std::string(words[k]) + "'";
                std::array<std::string_view, 3> indices{};
                std::size_t count = 0;
                for (std::string_view rest = words[k];;)
                {
                    if (count == indices.size())
                        raise<std::invalid_argument>(at + corner + " has more than three indices");
                    const std::size_t slash = rest.find('/');
                    indices[count++] = rest.substr(0, slash);
                    if (slash == std::string_view::npos)
                        break;
                    rest.remove_prefix(slash + 1);
                }
                for (std::size_t i = 0; i < count; ++i)
                {
                    std::string_view index = indices[i];
                    if (index.empty() && i == 1 && count == 3)
                        continue;
                    if (index.starts_with('+'))
                        index.remove_prefix(1);
                    int value = 0;
                    const auto [ptr, error] = std::from_chars(index.data(), index.data() + index.size(), value);
                    if (error == std::errc::result_out_of_range)
                        raise<std::invalid_argument>(at + corner + " has an index too large for any file");
                    if (error != std::errc() || ptr != index.data() + index.size())
                        raise<std::invalid_argument>(at + corner +
                                                     " is not a vertex index (v, v/vt, v//vn or v/vt/vn)");
                    if (value == 0)
                        raise<std::invalid_argument>(at + corner + " has the index 0, but OBJ indices count from 1");
                }
            }
            lines.faces.push_back(line);
        }
    }
    return lines;
}
/// A file's point in the library's world: scaled to metres, then turned so the file's up is -y.
template <class T>
Vec3<T> into_world(const Vec3<T>& p, const ObjLoadOptions& options)
{
    const Vec3<T> q = p * T(options.scale);
    switch (options.up)
    {
    case ObjUp::y:
        return {q.x(), -q.y(), -q.z()};
    case ObjUp::z:
        return {q.x(), -q.z(), q.y()};
    case ObjUp::y_down:
        break;
    }
    return q;
}
} // namespace detail

/// Reads the vertices, faces and uvs of every shape in an OBJ file, welded by position index (a uv
/// seam is one vertex with two uvs: uv_triangles hold each corner's), polygons fanned into
/// triangles; normals, lines, points and materials are ignored. The uvs are kept when every face
/// corner has one; when only some have one they are dropped (repairs.uvs_dropped), or refused.
/// Then sanitize_mesh runs with `options.repair`: one warning names all that was dropped, and
/// mesh.repairs holds it, in the loaded mesh's indices (vertices in file order from 0, triangles
/// once fanned). Each vertex is scaled by `options.scale` and turned from the file's `options.up`
/// into the library's +y down. A scale that is not finite and > 0 is a std::invalid_argument. A
/// file that cannot be opened or parsed is a std::runtime_error naming the path; a file without
/// faces, a coordinate that is not a finite number (or not once scaled), an index 0 or out of
/// range, or what sanitize_mesh refuses is a std::invalid_argument naming the path and the line or element.
///
/// Link: a program calling this needs tinyobjloader (Debian: libtinyobjloader-dev). With simdverlet
/// added by add_subdirectory or FetchContent, `target_link_libraries(app PRIVATE simdverlet::obj)`
/// brings it (the target exists where simdverlet's configure found tinyobjloader); with an
/// installed simdverlet, link `tinyobjloader::tinyobjloader` beside `simdverlet::simdverlet`.
template <class T>
TriangleMesh<T> load_obj_mesh(const std::string& path, const ObjLoadOptions& options = {})
{
    const std::string where = "OBJ file '" + path + "'";
    if (!std::isfinite(options.scale) || !(options.scale > 0.0))
        detail::raise<std::invalid_argument>("simdverlet: loading " + where + ": scale must be finite and > 0, got " +
                                             detail::number(options.scale));
    std::ifstream file(path, std::ios::binary);
    if (!file)
        detail::raise<std::runtime_error>("simdverlet: cannot open " + where);
    const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    if (file.bad())
        detail::raise<std::runtime_error>("simdverlet: cannot read " + where);
    const detail::ObjLines lines = detail::scan_obj(text, where);

    tinyobj::ObjReaderConfig config;
    // Fanned below instead: tinyobjloader's own triangulation skips, with only a warning, a polygon
    // of four or more corners that has an index out of range.
    config.triangulate = false;
    config.vertex_color = false;
    tinyobj::ObjReader reader;
    // From the text already read, with no material text: materials are not used.
    if (!reader.ParseFromString(text, "", config))
    {
        std::string error = reader.Error();
        error.erase(error.find_last_not_of(" \r\n") + 1);
        detail::raise<std::runtime_error>("simdverlet: cannot load " + where + ": " + error);
    }

    const auto& attrib = reader.GetAttrib();
    TriangleMesh<T> mesh;
    mesh.vertices.reserve(attrib.vertices.size() / 3);
    for (std::size_t k = 0; k + 2 < attrib.vertices.size(); k += 3)
    {
        const Vec3<T> p(T(attrib.vertices[k]), T(attrib.vertices[k + 1]), T(attrib.vertices[k + 2]));
        // A number too large for the reader's float is inf by now.
        if (!p.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: " + where + detail::obj_line(lines.vertices, k / 3) +
                                                 ": the vertex (" + detail::number(p.x()) + ", " +
                                                 detail::number(p.y()) + ", " + detail::number(p.z()) +
                                                 ") is not finite");
        const Vec3<T> placed = detail::into_world(p, options);
        if (!placed.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: " + where + detail::obj_line(lines.vertices, k / 3) +
                                                 ": the vertex is not finite once scaled by " +
                                                 detail::number(options.scale));
        mesh.vertices.push_back(placed);
    }
    for (std::size_t k = 0; k + 1 < attrib.texcoords.size(); k += 2)
        mesh.uvs.emplace_back(T(attrib.texcoords[k]), T(attrib.texcoords[k + 1]));

    const auto vertex_count = std::int64_t(mesh.vertices.size());
    const auto uv_count = std::int64_t(mesh.uvs.size());
    std::size_t face = 0;                           // counted over every shape, in file order
    std::optional<std::size_t> with_uv, without_uv; // the first face with a corner that has one, and lacks one
    for (const auto& shape : reader.GetShapes())
    {
        const auto& indices = shape.mesh.indices;
        std::size_t at = 0;
        for (const std::size_t corners : shape.mesh.num_face_vertices)
        {
            const std::string line = where + detail::obj_line(lines.faces, face);
            for (std::size_t k = at; k < at + corners; ++k)
            {
                // Resolved from 1-based or relative: negative is before the first element.
                const std::int64_t v = indices[k].vertex_index, vt = indices[k].texcoord_index;
                if (v < 0 || v >= vertex_count)
                    detail::raise<std::invalid_argument>(
                        "simdverlet: " + line + ": the face refers to " +
                        (v < 0 ? "a vertex before the first" : "vertex " + std::to_string(v + 1)) +
                        ", but the file has " + std::to_string(vertex_count) + " vertices");
                // -1 is a corner without a uv.
                if (vt < -1 || vt >= uv_count)
                    detail::raise<std::invalid_argument>(
                        "simdverlet: " + line + ": the face refers to " +
                        (vt < 0 ? "a uv before the first" : "uv " + std::to_string(vt + 1)) + ", but the file has " +
                        std::to_string(uv_count) + " uvs");
                auto& first = vt < 0 ? without_uv : with_uv;
                if (!first)
                    first = face;
            }
            for (std::size_t k = at + 1; k + 1 < at + corners; ++k)
            {
                mesh.triangles.push_back({std::int32_t(indices[at].vertex_index), std::int32_t(indices[k].vertex_index),
                                          std::int32_t(indices[k + 1].vertex_index)});
                mesh.uv_triangles.push_back({std::int32_t(indices[at].texcoord_index),
                                             std::int32_t(indices[k].texcoord_index),
                                             std::int32_t(indices[k + 1].texcoord_index)});
            }
            at += corners;
            ++face;
        }
    }
    if (mesh.triangles.empty())
        detail::raise<std::invalid_argument>("simdverlet: " + where + " has " +
                                             (mesh.vertices.empty()
                                                  ? std::string("no vertices and no faces")
                                                  : std::to_string(mesh.vertices.size()) + " vertices but no faces"));

    const bool mixed = with_uv && without_uv;
    if (mixed && options.repair == MeshRepair::refuse)
        detail::raise<std::invalid_argument>("simdverlet: " + where +
                                             " has uvs on some face corners only: the face on" +
                                             detail::obj_line(lines.faces, *with_uv) + " has one, the face on" +
                                             detail::obj_line(lines.faces, *without_uv) + " lacks one");
    if (!with_uv || mixed)
    {
        mesh.uvs.clear();
        mesh.uv_triangles.clear();
    }
    MeshRepairs repairs = detail::repair_mesh(mesh, options.repair, where, detail::UnusedVertices::drop);
    repairs.uvs_dropped = mixed;
    mesh.repairs = repairs;
    detail::log_repairs(repairs, where);
    return mesh;
}

} // namespace simdverlet
