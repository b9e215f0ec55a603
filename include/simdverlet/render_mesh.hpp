// Render output: a cloth as a triangle mesh a renderer can draw every frame, and Wavefront OBJ
// files (one, or a numbered sequence) for Blender and Houdini.
//
// The mesh has one vertex per particle, in particle order, with an area-weighted unit normal and
// the uv (col / (width - 1), row / (height - 1)); each grid cell is two triangles, split along its
// (col, row)-(col + 1, row + 1) diagonal as the wind splits it. A triangle is drawn while both of
// its grid edges are live springs: a tear or a cut drops the two triangles beside the spring, so
// no triangle ever spans a cut.
#pragma once

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <Eigen/Core>

#include "cloth.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "simulation.hpp"
#include "state.hpp"

namespace simdverlet
{

/// What a RenderMesh's uvs and triangles were built from. render_mesh_into rebuilds them only when
/// this changes: another cloth, or any edit of the constraints (a tear, a cut) since.
struct RenderMeshSource
{
    const void* cloth = nullptr;   ///< the cloth's identity (not its handle's)
    std::uint64_t constraints = 0; ///< the constraint set's edit stamp
    friend bool operator==(const RenderMeshSource&, const RenderMeshSource&) = default;
};

/// A cloth as triangles: positions[i], normals[i] and uvs[i] belong to the cloth's particle
/// base + i; triangles index them counter-clockwise about the normals.
template <class T>
struct RenderMesh
{
    std::vector<Vec3<T>> positions = {};
    std::vector<Vec3<T>> normals = {};            ///< unit; (0, 0, 1) for a particle in no intact triangle
    std::vector<Eigen::Matrix<T, 2, 1>> uvs = {}; ///< (col / (width - 1), row / (height - 1))
    std::vector<std::array<std::uint32_t, 3>> triangles = {};
    RenderMeshSource source = {}; ///< reset it to {} after editing uvs or triangles by hand
};

namespace detail
{
template <class T>
void fill_topology(RenderMesh<T>& mesh, const ConstraintArrays<T>& c, std::size_t base, int width, int height)
{
    const std::size_t w = std::size_t(width), h = std::size_t(height);
    mesh.uvs.resize(w * h);
    for (std::size_t r = 0; r < h; ++r)
        for (std::size_t col = 0; col < w; ++col)
            mesh.uvs[r * w + col] = {T(col) / T(w - 1), T(r) / T(h - 1)};
    // Sized for every cell's two triangles, then cut to those drawn: after the first frame the
    // capacity is there and nothing allocates.
    mesh.triangles.resize(2 * (w - 1) * (h - 1));
    std::size_t drawn = 0;
    const auto intact = [&](std::size_t right_of, std::size_t down_of) {
        return kernels::grid_triangle_intact<T>(c, base + right_of, base + down_of);
    };
    for (std::size_t r = 0; r + 1 < h; ++r)
        for (std::size_t col = 0; col + 1 < w; ++col)
        {
            const std::size_t p00 = r * w + col, p10 = p00 + 1, p01 = p00 + w, p11 = p01 + 1;
            const auto u32 = [](std::size_t i) { return std::uint32_t(i); };
            if (intact(p00, p10))
                mesh.triangles[drawn++] = {u32(p00), u32(p10), u32(p11)};
            if (intact(p01, p00))
                mesh.triangles[drawn++] = {u32(p00), u32(p11), u32(p01)};
        }
    mesh.triangles.resize(drawn);
}

/// Whether `mesh` holds all of a width x height grid's 2 (w - 1)(h - 1) triangles. Every right and
/// down slot of the grid is an edge of some triangle, so then every spring the normals read is live.
template <class T>
bool is_whole(const RenderMesh<T>& mesh, std::size_t width, std::size_t height)
{
    return mesh.triangles.size() == 2 * (width - 1) * (height - 1);
}
} // namespace detail

/// Refills `mesh` with `cloth`'s current shape. Meant for every frame: after the first call with a
/// given cloth it allocates nothing, the positions and normals are rewritten (normals vectorised on
/// the grid and split over the simulation's executor, bit-identical for any thread count), and the
/// uvs and triangles are rebuilt only when the constraints changed since (mesh.source). Do not call
/// it while the simulation steps on another thread. Throws std::logic_error if the simulation is
/// gone.
template <class T>
void render_mesh_into(const Cloth<T>& cloth, RenderMesh<T>& mesh)
{
    static_assert(sizeof(Vec3<T>) == 3 * sizeof(T), "render normals are written as packed triples");
    auto& world = detail::ClothAccess::world(cloth);
    const auto s = world.state().arrays_view();
    const auto c = world.constraints().arrays_view();
    const std::size_t base = cloth.base(), n = cloth.count();
    const std::size_t width = std::size_t(cloth.width()), height = std::size_t(cloth.height());
    // Topology first: the vertex pass needs to know whether every spring is live.
    const RenderMeshSource source{.cloth = detail::ClothAccess::key(cloth),
                                  .constraints = world.constraints().edit_stamp()};
    if (mesh.source != source || mesh.uvs.size() != n)
    {
        detail::fill_topology(mesh, c, base, cloth.width(), cloth.height());
        mesh.source = source;
    }
    const bool whole = detail::is_whole(mesh, width, height);
    mesh.positions.resize(n);
    mesh.normals.resize(n);
    T* const positions = mesh.positions.data()->data();
    T* const normals = mesh.normals.data()->data();
    // Over the executor in whole rows, like the curvature: a chunk takes the rows that start in it.
    world.for_each_chunk(n, [&](std::size_t b, std::size_t e) {
        const std::size_t first = (b + width - 1) / width, last = (e + width - 1) / width;
        kernels::grid_vertices<xsimd::default_arch>(s, c, base, width, height, first, last, world.vectorized(), whole,
                                                    positions, normals);
    });
}

/// `cloth`'s current shape as a new mesh; render_mesh_into refills one instead.
template <class T>
RenderMesh<T> render_mesh(const Cloth<T>& cloth)
{
    RenderMesh<T> mesh;
    render_mesh_into(cloth, mesh);
    return mesh;
}

namespace detail
{
/// The shortest text that reads back as the same number.
template <class T>
void append_number(std::string& out, T v)
{
    char buffer[64];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
    out.append(buffer, end);
}

template <class T>
void check_render_mesh(const RenderMesh<T>& mesh, const std::string& path)
{
    const std::size_t n = mesh.positions.size();
    if (mesh.normals.size() != n || mesh.uvs.size() != n)
        raise<std::invalid_argument>("simdverlet: cannot write '" + path + "': the mesh has " + std::to_string(n) +
                                     " positions, " + std::to_string(mesh.normals.size()) + " normals and " +
                                     std::to_string(mesh.uvs.size()) + " uvs; they must match");
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t)
        for (const std::uint32_t v : mesh.triangles[t])
            if (v >= n)
                raise<std::invalid_argument>("simdverlet: cannot write '" + path + "': triangle " + std::to_string(t) +
                                             " names vertex " + std::to_string(v) + " of " + std::to_string(n));
}
} // namespace detail

/// Writes `mesh` as a Wavefront OBJ file: v, vt and vn lines in vertex order, then one f line per
/// triangle with the same 1-based index for all three (v/vt/vn). Numbers are written in their
/// shortest exact form, so reading the file back gives the same bits. Coordinates are written as
/// they are (the default cloth layout hangs along +y; rotate on import if your tool's up is +y).
/// Throws std::invalid_argument for a mesh whose arrays disagree (naming the triangle) and
/// std::runtime_error naming the path when the file cannot be opened or written.
template <class T>
void write_obj(const std::filesystem::path& path, const RenderMesh<T>& mesh)
{
    detail::check_render_mesh(mesh, path.string());
    std::string text;
    text.reserve(mesh.positions.size() * 96 + mesh.triangles.size() * 40);
    text += "# simdverlet render mesh: " + std::to_string(mesh.positions.size()) + " vertices, " +
            std::to_string(mesh.triangles.size()) + " triangles\n";
    const auto line = [&](const char* tag, const auto& v) {
        text += tag;
        for (Eigen::Index k = 0; k < v.size(); ++k)
        {
            text += ' ';
            detail::append_number(text, v[k]);
        }
        text += '\n';
    };
    for (const auto& p : mesh.positions)
        line("v", p);
    for (const auto& uv : mesh.uvs)
        line("vt", uv);
    for (const auto& nrm : mesh.normals)
        line("vn", nrm);
    for (const auto& t : mesh.triangles)
    {
        text += 'f';
        for (const std::uint32_t v : t)
        {
            const std::string i = std::to_string(std::uint64_t(v) + 1);
            text += ' ' + i + '/' + i + '/' + i;
        }
        text += '\n';
    }
    std::ofstream out(path, std::ios::binary);
    if (!out)
        detail::raise<std::runtime_error>("simdverlet: cannot open '" + path.string() + "' for writing");
    out.write(text.data(), std::streamsize(text.size()));
    out.close(); // flushes: a full disk shows here, not in the destructor
    if (!out)
        detail::raise<std::runtime_error>("simdverlet: failed writing '" + path.string() + "'");
}

/// How an ObjSequence names its files: <prefix><frame, zero-padded to digits>.obj.
struct ObjSequenceOptions
{
    std::string prefix = "frame_"; ///< before the number
    int digits = 4;                ///< zero padding, >= 1 (a larger frame number simply uses more digits)
    int first = 1;                 ///< the first frame's number, >= 0 (Blender counts from 1)
};

/// Writes one OBJ file per frame into a directory: frame_0001.obj, frame_0002.obj, ... for
/// Blender's and Houdini's sequence importers.
class ObjSequence
{
  public:
    /// Throws std::invalid_argument for bad options and std::runtime_error naming the directory
    /// when it does not exist.
    explicit ObjSequence(std::filesystem::path directory, ObjSequenceOptions options = {})
        : m_directory(std::move(directory)), m_options(std::move(options)), m_next(m_options.first)
    {
        if (m_options.digits < 1 || m_options.digits > 9)
            detail::raise<std::invalid_argument>("simdverlet: OBJ sequence digits must be 1 to 9, got " +
                                                 std::to_string(m_options.digits));
        if (m_options.first < 0)
            detail::raise<std::invalid_argument>("simdverlet: OBJ sequence first frame must be >= 0, got " +
                                                 std::to_string(m_options.first));
        std::error_code error;
        if (!std::filesystem::is_directory(m_directory, error))
            detail::raise<std::runtime_error>("simdverlet: OBJ sequence directory '" + m_directory.string() +
                                              "' does not exist");
    }

    /// The file frame `frame` is written to.
    std::filesystem::path path(int frame) const
    {
        const std::string number = std::to_string(frame);
        const std::size_t digits = std::size_t(m_options.digits);
        const std::size_t pad = digits > number.size() ? digits - number.size() : 0;
        return m_directory / (m_options.prefix + std::string(pad, '0') + number + ".obj");
    }

    /// Writes the next frame and returns its path. A failed write throws (see write_obj) and
    /// leaves the frame number where it was, so a retry writes the same file.
    template <class T>
    std::filesystem::path write(const RenderMesh<T>& mesh)
    {
        const auto file = path(m_next);
        write_obj(file, mesh);
        ++m_next;
        return file;
    }

    int next_frame() const noexcept { return m_next; }

  private:
    std::filesystem::path m_directory;
    ObjSequenceOptions m_options;
    int m_next;
};

} // namespace simdverlet
