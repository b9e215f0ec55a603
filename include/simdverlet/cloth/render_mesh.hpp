// Render output: a cloth as a triangle mesh a renderer can draw every frame, and Wavefront OBJ
// files (one, or a numbered sequence) for Blender and Houdini.
//
// A grid cloth's mesh has one vertex per particle, in particle order, with an area-weighted unit
// normal and the uv (col / (width - 1), row / (height - 1)); each grid cell is two triangles, split
// along its (col, row)-(col + 1, row + 1) diagonal as the wind splits it. A mesh cloth's has its
// mesh's own triangles and uvs, a vertex split in two where a uv seam runs through it. A triangle
// is drawn while its edges are live springs: a tear or a cut drops the triangles beside the spring,
// so no triangle ever spans a cut.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <Eigen/Core>

#include "simdverlet/cloth/cloth.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/kernels/normals.hpp"

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

namespace detail
{
/// A mesh cloth's render topology beyond the triangle list, rebuilt with it: where each corner of
/// the cloth's triangles went, and the drawn triangles around each particle, which the normal pass
/// sums. Empty for a grid, whose neighbours are index arithmetic.
struct RenderFans
{
    IntactTriangles intact = {};                 ///< which of the cloth's triangles are drawn
    std::vector<std::uint32_t> corners = {};     ///< per corner 3 t + k of the cloth's triangle t, its render vertex
    std::vector<std::uint32_t> first = {};       ///< per particle (offset from the cloth's base), where its
                                                 ///< triangles begin in `around`; one more entry, the end
    std::vector<std::uint32_t> around = {};      ///< indices into RenderMesh::triangles, ascending for each particle
    std::vector<std::uint32_t> by_particle = {}; ///< the corners bucketed by particle, while vertices are numbered
};
} // namespace detail

/// A cloth as triangles: render vertex i shows particle particles[i] at positions[i], with
/// normals[i] and uvs[i]; triangles index the render vertices counter-clockwise about the normals.
/// A grid's render vertex i is its particle base + i. A mesh cloth's are its particles split at uv
/// seams: one per distinct (vertex, uv index) pair of its triangles' corners, numbered in particle
/// order (a particle's copies together), so a vertex on a seam appears once per uv, every copy with
/// the same position and normal. They are the same set whatever is torn: a cut drops triangles,
/// never vertices, and a buffer sized once keeps its size.
template <class T>
struct RenderMesh
{
    std::vector<Vec3<T>> positions = {};
    std::vector<Vec3<T>> normals = {}; ///< unit, area-weighted over the particle's drawn triangles; (0, 0, 1)
                                       ///< for a particle in none (or in collapsed ones only)
    std::vector<Eigen::Matrix<T, 2, 1>> uvs = {}; ///< a grid's (col / (width - 1), row / (height - 1)); a mesh
                                                  ///< cloth's own, or empty when its mesh has none: a texture
                                                  ///< coordinate the asset never had would be a lie to the renderer
    std::vector<std::uint32_t> particles = {};    ///< per render vertex, the particle it shows (cloth.vertex()
                                                  ///< gives its vertex); a mesh without uvs has one render vertex
                                                  ///< per particle, base + i, as a grid does
    std::vector<std::array<std::uint32_t, 3>> triangles = {};
    RenderMeshSource source = {}; ///< reset it to {} after editing uvs, particles or triangles by hand
    detail::RenderFans fans = {}; ///< a mesh cloth's topology for the normal pass; the library's
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

/// A grid cloth's render mesh: one vertex per particle, normals from the grid's fans.
template <class T>
void render_grid_into(const Cloth<T>& cloth, RenderMesh<T>& mesh)
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
    if (mesh.source != source || mesh.uvs.size() != n || mesh.particles.size() != n)
    {
        detail::fill_topology(mesh, c, base, cloth.width(), cloth.height());
        mesh.particles.resize(n);
        std::iota(mesh.particles.begin(), mesh.particles.end(), std::uint32_t(base));
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

/// Sorts the items [0, count) into `buckets` buckets by key(item), keeping their order within a
/// bucket (a counting sort): bucket b is out[first[b], first[b + 1]). Allocates nothing once the
/// vectors have grown to the sizes.
template <class Key>
void bucket_items(std::size_t buckets, std::size_t count, const Key& key, std::vector<std::uint32_t>& first,
                  std::vector<std::uint32_t>& out)
{
    first.assign(buckets + 1, 0);
    for (std::size_t item = 0; item < count; ++item)
        ++first[key(item) + 1];
    std::partial_sum(first.begin(), first.end(), first.begin());
    out.resize(count);
    // first[b] walks through bucket b as it fills, ending at the next bucket's start ...
    for (std::size_t item = 0; item < count; ++item)
        out[first[key(item)]++] = std::uint32_t(item);
    // ... so moving every entry up one restores the starts.
    std::copy_backward(first.begin(), first.end() - 1, first.end());
    first[0] = 0;
}

/// A mesh cloth's render vertices (one per distinct (particle, uv index) pair its triangles'
/// corners name, numbered in particle order), the triangles whose three edges are live, and the
/// drawn triangles around each particle.
template <class T>
void fill_mesh_topology(RenderMesh<T>& mesh, const ConstraintLayers<T>& layers, const Cloth<T>& cloth)
{
    auto& fans = mesh.fans;
    const auto& triangles = cloth.triangles();
    const auto& uv_triangles = cloth.uv_triangles();
    const bool has_uvs = !uv_triangles.empty();
    const std::size_t n = cloth.count(), base = cloth.base(), corners = 3 * triangles.size();
    const auto particle_of = [&](std::size_t corner) {
        return cloth.index(std::size_t(triangles[corner / 3][corner % 3])) - base;
    };
    const auto uv_of = [&](std::size_t corner) { return has_uvs ? uv_triangles[corner / 3][corner % 3] : 0; };

    // Each particle's corners together, in corner order, so a particle's copies are numbered
    // together and the same way every time.
    bucket_items(n, corners, particle_of, fans.first, fans.by_particle);
    fans.corners.resize(corners);
    mesh.particles.clear();
    mesh.uvs.clear();
    for (std::size_t p = 0; p < n; ++p)
        for (std::uint32_t k = fans.first[p]; k < fans.first[p + 1]; ++k)
        {
            const std::uint32_t corner = fans.by_particle[k];
            // A corner with the uv of an earlier corner of the particle shares its render vertex;
            // a particle has a handful of corners, so the scan is shorter than any lookup table.
            std::uint32_t same = fans.first[p];
            while (same < k && uv_of(fans.by_particle[same]) != uv_of(corner))
                ++same;
            if (same < k)
            {
                fans.corners[corner] = fans.corners[fans.by_particle[same]];
                continue;
            }
            fans.corners[corner] = std::uint32_t(mesh.particles.size());
            mesh.particles.push_back(std::uint32_t(base + p));
            if (has_uvs)
                mesh.uvs.push_back(cloth.uvs()[std::size_t(uv_of(corner))]);
        }

    const auto& intact = fans.intact.refresh(layers, cloth);
    mesh.triangles.resize(triangles.size());
    std::size_t drawn = 0;
    for (std::size_t t = 0; t < triangles.size(); ++t)
        if (intact[t])
            mesh.triangles[drawn++] = {fans.corners[3 * t], fans.corners[3 * t + 1], fans.corners[3 * t + 2]};
    mesh.triangles.resize(drawn);

    // The drawn triangles around each particle, ascending: the order the normal pass sums them in.
    bucket_items(
        n, 3 * drawn,
        [&](std::size_t corner) { return std::size_t(mesh.particles[mesh.triangles[corner / 3][corner % 3]]) - base; },
        fans.first, fans.around);
    for (auto& corner : fans.around)
        corner /= 3;
}

/// Render vertices [begin, end) of a mesh cloth: the particle's position, and the sum of the cross
/// products of its drawn triangles, scaled to unit length. Each triangle's cross product is taken
/// from its first corner whichever corner asks, and a particle's triangles are summed in one fixed
/// order, so the copies of a seam vertex get the same bits, and so does every thread count. Scalar:
/// the triangles around a particle are gathered through lists of any length, which no batch lays
/// out; the grid is the vectorised fast path.
template <class T>
void mesh_vertices(const StateArrays<T>& s, RenderMesh<T>& mesh, std::size_t base, std::size_t begin, std::size_t end)
{
    const auto at = [&](std::uint32_t vertex) {
        const std::size_t p = mesh.particles[vertex];
        return Vec3<T>(s.x[p], s.y[p], s.z[p]);
    };
    const auto& fans = mesh.fans;
    for (std::size_t i = begin; i < end; ++i)
    {
        const std::size_t p = std::size_t(mesh.particles[i]) - base;
        Vec3<T> sum = Vec3<T>::Zero();
        for (std::uint32_t k = fans.first[p]; k < fans.first[p + 1]; ++k)
        {
            const auto& tri = mesh.triangles[fans.around[k]];
            const Vec3<T> a = at(tri[0]);
            sum += (at(tri[1]) - a).cross(at(tri[2]) - a);
        }
        mesh.positions[i] = at(std::uint32_t(i));
        const auto unit = kernels::unit_or_up(std::array<T, 3>{sum.x(), sum.y(), sum.z()});
        mesh.normals[i] = Vec3<T>(unit[0], unit[1], unit[2]);
    }
}

/// A mesh cloth's render mesh: its triangles and uvs, split at seams, normals per particle.
template <class T>
void render_mesh_cloth_into(const Cloth<T>& cloth, RenderMesh<T>& mesh)
{
    auto& world = detail::ClothAccess::world(cloth);
    const auto& layers = world.constraint_layers();
    // Its springs may sit in any layer, so any layer's edit may have torn a triangle.
    const RenderMeshSource source{.cloth = detail::ClothAccess::key(cloth), .constraints = layers.edit_stamp()};
    if (mesh.source != source || mesh.fans.first.size() != cloth.count() + 1 ||
        mesh.fans.around.size() != 3 * mesh.triangles.size())
    {
        fill_mesh_topology(mesh, layers, cloth);
        mesh.source = source;
    }
    const std::size_t vertices = mesh.particles.size();
    mesh.positions.resize(vertices);
    mesh.normals.resize(vertices);
    const auto s = world.state().arrays_view();
    world.for_each_chunk(vertices, [&](std::size_t b, std::size_t e) { mesh_vertices(s, mesh, cloth.base(), b, e); });
}
} // namespace detail

/// Refills `mesh` with `cloth`'s current shape. Meant for every frame: after the first call with a
/// given cloth it allocates nothing, the positions and normals are rewritten (split over the
/// simulation's executor, bit-identical for any thread count; on a grid vectorised as well), and the
/// uvs, particles and triangles are rebuilt only when the constraints changed since (mesh.source).
/// Do not call it while the simulation steps on another thread. Throws std::logic_error if the
/// simulation is gone.
template <class T>
void render_mesh_into(const Cloth<T>& cloth, RenderMesh<T>& mesh)
{
    if (cloth.is_grid())
        detail::render_grid_into(cloth, mesh);
    else
        detail::render_mesh_cloth_into(cloth, mesh);
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
    if (mesh.normals.size() != n || (mesh.uvs.size() != n && !mesh.uvs.empty()))
        raise<std::invalid_argument>("simdverlet: cannot write '" + path + "': the mesh has " + std::to_string(n) +
                                     " positions, " + std::to_string(mesh.normals.size()) + " normals and " +
                                     std::to_string(mesh.uvs.size()) +
                                     " uvs; the normals must match the positions, the uvs too or be none");
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t)
        for (const std::uint32_t v : mesh.triangles[t])
            if (v >= n)
                raise<std::invalid_argument>("simdverlet: cannot write '" + path + "': triangle " + std::to_string(t) +
                                             " names vertex " + std::to_string(v) + " of " + std::to_string(n));
}
} // namespace detail

/// Writes `mesh` as a Wavefront OBJ file: v, vt and vn lines in vertex order, then one f line per
/// triangle with the same 1-based index for all three (v/vt/vn; v//vn and no vt lines for a mesh
/// without uvs). A seam vertex's copies are separate v lines at the same position. Numbers are written in their
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
            text += ' ' + i + '/' + (mesh.uvs.empty() ? "" : i) + '/' + i;
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
