// Render output: a cloth as positions, unit normals, uvs and triangles, refilled without
// allocating, with torn and cut triangles dropped; and OBJ files that read back bit for bit.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numbers>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "meshes.hpp"
#include "same_bits.hpp"
#include "support.hpp"

#if SIMDVERLET_HAVE_TINYOBJLOADER
#    include <simdverlet/io/obj_mesh.hpp>
#endif

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// The guide's sheet hung from its top corners, shaken and stepped until it is creased in every
/// direction: no normal is axis-aligned, so a wrong neighbour or a swapped cross product shows.
struct CreasedSheet
{
    Simulation<float> sim;
    Cloth<float> cloth;

    explicit CreasedSheet(int frames = 40)
        : cloth(add_cloth(
              sim, {.width = 20, .height = 12, .pinned = [](int c, int r) { return r == 0 && (c == 0 || c == 19); }}))
    {
        jitter(sim, 0.2f, 7);
        for (int f = 0; f < frames; ++f)
            sim.step(guide_step<float>(16));
    }
};

/// Per-vertex normals recomputed in double from the mesh's own triangles: the area-weighted sum
/// of each triangle's cross product, normalised.
std::vector<Vec3<double>> reference_normals(const RenderMesh<float>& mesh)
{
    std::vector<Vec3<double>> sum(mesh.positions.size(), Vec3<double>::Zero());
    for (const auto& t : mesh.triangles)
    {
        const Vec3<double> a = mesh.positions[t[0]].cast<double>(), b = mesh.positions[t[1]].cast<double>(),
                           c = mesh.positions[t[2]].cast<double>();
        const Vec3<double> n = (b - a).cross(c - a);
        for (const auto v : t)
            sum[v] += n;
    }
    for (auto& n : sum)
        n = n.norm() > 0 ? Vec3<double>(n.normalized()) : Vec3<double>(0, 0, 1);
    return sum;
}

/// Component of every particle in the graph of live springs (union-find roots).
std::vector<std::size_t> components(const Simulation<float>& sim)
{
    std::vector<std::size_t> parent(sim.size());
    std::iota(parent.begin(), parent.end(), std::size_t(0));
    const auto root = [&](std::size_t x) {
        while (parent[x] != x)
            x = parent[x] = parent[parent[x]];
        return x;
    };
    for (std::size_t i = 0; i < sim.size(); ++i)
        for (int s = 0; s < 4; ++s)
            if (sim.constraints().live(i, s))
                parent[root(i)] = root(std::size_t(sim.constraints().neighbour(i, s)));
    for (std::size_t i = 0; i < sim.size(); ++i)
        parent[i] = root(i);
    return parent;
}

bool same_normals(const RenderMesh<float>& a, const RenderMesh<float>& b)
{
    return a.normals.size() == b.normals.size() &&
           std::memcmp(a.normals.data(), b.normals.data(), a.normals.size() * sizeof(a.normals[0])) == 0;
}

std::set<std::array<std::uint32_t, 3>> triangle_set(const RenderMesh<float>& mesh)
{
    return {mesh.triangles.begin(), mesh.triangles.end()};
}

/// Whether the mesh holds every triangle of the cloth's grid (the vertex pass then reads no springs).
bool whole_sheet(const RenderMesh<float>& mesh, const Cloth<float>& cloth)
{
    return mesh.triangles.size() == 2 * std::size_t(cloth.width() - 1) * std::size_t(cloth.height() - 1);
}

} // namespace

TEST_CASE("a flat sheet's render normals are unit and face one way, its triangles wound about them", "[render_mesh]")
{
    // The sheet tilted 30 degrees about x: every normal is the plane's, (0, -sin, cos).
    const float angle = 0.5235988f;
    Simulation<float> sim;
    const auto cloth = add_cloth(sim, {.width = 9, .height = 7, .position = [&](int c, int r) {
                                           return Vec3<float>(0.5f * float(c), 0.5f * float(r) * std::cos(angle),
                                                              0.5f * float(r) * std::sin(angle));
                                       }});
    const auto mesh = render_mesh(cloth);
    const Vec3<float> plane(0, -std::sin(angle), std::cos(angle));
    REQUIRE(mesh.normals.size() == 63);
    for (const auto& n : mesh.normals)
    {
        CHECK(std::abs(n.norm() - 1.0f) < 1e-6f);
        CHECK((n - plane).norm() < 1e-6f);
    }
    REQUIRE(mesh.triangles.size() == 2 * 8 * 6);
    for (const auto& t : mesh.triangles)
    {
        const Vec3<float> face =
            (mesh.positions[t[1]] - mesh.positions[t[0]]).cross(mesh.positions[t[2]] - mesh.positions[t[0]]);
        CHECK(face.dot(plane) > 0.0f); // counter-clockwise about the normal
    }
}

TEST_CASE("an intact sheet is two triangles a cell, covering each cell once, with uvs from 0 to 1", "[render_mesh]")
{
    Simulation<float> sim;
    const auto cloth = add_cloth(sim, {.width = 6, .height = 4});
    const auto mesh = render_mesh(cloth);
    REQUIRE(mesh.triangles.size() == 2 * 5 * 3);
    std::set<std::array<std::uint32_t, 3>> expected;
    for (std::uint32_t r = 0; r < 3; ++r)
        for (std::uint32_t c = 0; c < 5; ++c)
        {
            const std::uint32_t p00 = r * 6 + c;
            expected.insert({p00, p00 + 1, p00 + 7});
            expected.insert({p00, p00 + 7, p00 + 6});
        }
    CHECK(triangle_set(mesh) == expected);
    CHECK(mesh.uvs[0] == Eigen::Vector2f(0, 0));
    CHECK(mesh.uvs[5] == Eigen::Vector2f(1, 0));
    CHECK(mesh.uvs[18] == Eigen::Vector2f(0, 1));
    CHECK(mesh.uvs[23] == Eigen::Vector2f(1, 1));
    CHECK(mesh.uvs[6 + 2] == Eigen::Vector2f(0.4f, 1.0f / 3.0f));
    for (std::size_t i = 0; i < 24; ++i)
        CHECK(mesh.positions[i] == cloth.position(int(i % 6), int(i / 6)));
}

TEST_CASE("a creased sheet's normals are the area-weighted means of its triangles' normals", "[render_mesh]")
{
    CreasedSheet sheet;
    const auto mesh = render_mesh(sheet.cloth);
    const auto reference = reference_normals(mesh);
    double worst = 0, least_z = 1;
    for (std::size_t i = 0; i < mesh.normals.size(); ++i)
    {
        CHECK(std::abs(mesh.normals[i].norm() - 1.0f) < 1e-6f);
        worst = std::max(worst, (mesh.normals[i].cast<double>() - reference[i]).norm());
        least_z = std::min(least_z, std::abs(double(mesh.normals[i].z())));
    }
    CHECK(worst < 1e-5);
    CHECK(least_z < 0.9); // the sheet really is creased: some normals are far from the layout's
}

TEST_CASE("a torn spring drops exactly the two triangles beside it", "[render_mesh]")
{
    Simulation<float> sim;
    const auto cloth = add_cloth(sim, {.width = 6, .height = 5});
    const auto intact = triangle_set(render_mesh(cloth));
    auto& k = sim.constraints();
    SECTION("a spring along a row")
    {
        // (2, 2)-(3, 2): the lower triangle of cell (2, 2) and the upper one of cell (2, 1).
        k.clear_slot(cloth.index(2, 2), kClothRight);
        k.clear_slot(cloth.index(3, 2), kClothLeft);
        auto expected = intact;
        expected.erase({14, 15, 21});
        expected.erase({8, 15, 14});
        CHECK(triangle_set(render_mesh(cloth)) == expected);
    }
    SECTION("a spring along a column")
    {
        // (2, 2)-(2, 3): the upper triangle of cell (2, 2) and the lower one of cell (1, 2).
        k.clear_slot(cloth.index(2, 2), kClothDown);
        k.clear_slot(cloth.index(2, 3), kClothUp);
        auto expected = intact;
        expected.erase({14, 21, 20});
        expected.erase({13, 14, 20});
        CHECK(triangle_set(render_mesh(cloth)) == expected);
    }
}

TEST_CASE("a cut drops the triangles across it and no triangle joins its two sides", "[render_mesh]")
{
    Simulation<float> sim;
    const auto cloth = add_cloth(sim, {.width = 20, .height = 10});
    REQUIRE(render_mesh(cloth).triangles.size() == 2 * 19 * 9);
    SECTION("straight along a row")
    {
        cut(sim, Vec3<float>(-1, 2.25f, 0), Vec3<float>(11, 2.25f, 0));
        CHECK(render_mesh(cloth).triangles.size() == 2 * 19 * 8); // the cells of row 4 are gone
    }
    SECTION("slanted, through cells diagonally")
    {
        cut(sim, Vec3<float>(-1, 0.3f, 0), Vec3<float>(10.5f, 4.6f, 0));
    }
    const auto mesh = render_mesh(cloth);
    const auto component = components(sim);
    REQUIRE(connected_components(sim) == 2);
    std::set<std::size_t> sides;
    for (const auto& t : mesh.triangles)
    {
        CHECK(component[t[0]] == component[t[1]]);
        CHECK(component[t[0]] == component[t[2]]);
        sides.insert(component[t[0]]);
    }
    CHECK(sides.size() == 2); // both halves are still drawn
}

TEST_CASE("render_mesh_into refills the caller's buffers without reallocating and matches render_mesh", "[render_mesh]")
{
    CreasedSheet sheet(10);
    RenderMesh<float> mesh;
    render_mesh_into(sheet.cloth, mesh);
    const auto* positions = mesh.positions.data();
    const auto* normals = mesh.normals.data();
    const auto* uvs = mesh.uvs.data();
    const auto* triangles = mesh.triangles.data();
    const std::size_t capacity = mesh.triangles.capacity();
    for (int f = 0; f < 20; ++f)
    {
        if (f == 10)
            REQUIRE(cut(sheet.sim, Vec3<float>(4.1f, -5, 0), Vec3<float>(4.1f, 20, 0)) > 0); // topology changes
        sheet.sim.step(guide_step<float>(16));
        render_mesh_into(sheet.cloth, mesh);
        const auto fresh = render_mesh(sheet.cloth);
        CHECK(mesh.positions == fresh.positions);
        CHECK(same_normals(mesh, fresh));
        CHECK(mesh.uvs == fresh.uvs);
        CHECK(mesh.triangles == fresh.triangles);
    }
    const auto reference = reference_normals(mesh); // the cut's border particles lost triangles
    for (std::size_t i = 0; i < mesh.normals.size(); ++i)
        CHECK((mesh.normals[i].cast<double>() - reference[i]).norm() < 1e-5);
    CHECK(mesh.triangles.size() < capacity);   // the cut dropped triangles ...
    CHECK(mesh.positions.data() == positions); // ... and nothing moved
    CHECK(mesh.normals.data() == normals);
    CHECK(mesh.uvs.data() == uvs);
    CHECK(mesh.triangles.data() == triangles);
    CHECK(mesh.triangles.capacity() == capacity);
}

TEST_CASE("render normals are the same bits on the scalar path and on any thread count and grain", "[render_mesh]")
{
    CreasedSheet sheet;
    // 37 wide: vector batches, then an overlapping last batch, in every row.
    Simulation<float>& sim = sheet.sim;
    const auto wide = add_cloth(sim, {.width = 37, .height = 9, .position = [](int c, int r) {
                                          return Vec3<float>(0.5f * float(c), 0.3f * std::sin(float(c * r)),
                                                             0.5f * float(r));
                                      }});
    // Whole, every spring live: the unmasked ring; then cut, so the masked fan runs too.
    for (const bool whole : {true, false})
    {
        if (!whole)
        {
            REQUIRE(cut(sim, Vec3<float>(4.1f, -5, 0), Vec3<float>(4.1f, 20, 0)) > 0);
            REQUIRE(cut(sim, Vec3<float>(3.1f, 0, -5), Vec3<float>(3.1f, 0, 20), ViewPlane::xz) > 0);
        }
        sim.set_executor(nullptr);
        const auto reference = render_mesh(sheet.cloth), reference_wide = render_mesh(wide);
        CHECK(whole_sheet(reference, sheet.cloth) == whole); // all triangles drawn: the unmasked ring runs
        CHECK(whole_sheet(reference_wide, wide) == whole);
        sim.set_vectorized(false);
        CHECK(same_normals(render_mesh(sheet.cloth), reference));
        CHECK(same_normals(render_mesh(wide), reference_wide));
        CHECK(render_mesh(wide).positions == reference_wide.positions); // interleaved by the scalar twin
        for (int c = 0; c < wide.width(); ++c)
            CHECK(reference_wide.positions[wide.index(c, 4) - wide.base()] == wide.position(c, 4));
        sim.set_vectorized(true);
        for (const auto& [name, executor] : bitwise_executors())
            for (std::size_t grain : {std::size_t(1), std::size_t(40), std::size_t(1000)})
            {
                INFO(name << ", grain " << grain);
                sim.set_executor(executor, grain);
                CHECK(same_normals(render_mesh(sheet.cloth), reference));
                CHECK(same_normals(render_mesh(wide), reference_wide));
            }
    }
}

TEST_CASE("on a whole sheet the vertex pass reads no springs and sums the ring in four cross products", "[render_mesh]")
{
    // The whole-sheet shortcut regroups the six cross products of an interior particle's ring
    // into four: the same normal to rounding, not to the bit (the masked fan is the reference).
    CreasedSheet sheet;
    const auto& cloth = sheet.cloth;
    REQUIRE(whole_sheet(render_mesh(cloth), cloth));
    const auto s = sheet.sim.state().arrays_view();
    const auto c = sheet.sim.constraints().arrays_view();
    const std::size_t w = std::size_t(cloth.width()), h = std::size_t(cloth.height());
    for (const bool vectorized : {true, false})
    {
        std::vector<float> p_read(3 * cloth.count()), n_read(3 * cloth.count()), p_skip(p_read), n_skip(n_read);
        kernels::grid_vertices<xsimd::default_arch>(s, c, cloth.base(), w, h, 0, h, vectorized, false, p_read.data(),
                                                    n_read.data());
        kernels::grid_vertices<xsimd::default_arch>(s, c, cloth.base(), w, h, 0, h, vectorized, true, p_skip.data(),
                                                    n_skip.data());
        float worst = 0;
        for (std::size_t k = 0; k < n_read.size(); ++k)
            worst = std::max(worst, std::abs(n_read[k] - n_skip[k]));
        CHECK(worst < 1e-6f);
        CHECK(p_read == p_skip);
    }
    cut(sheet.sim, Vec3<float>(2.1f, -5, 0), Vec3<float>(2.1f, 20, 0));
    CHECK_FALSE(whole_sheet(render_mesh(cloth), cloth));
}

TEST_CASE("a double-precision cloth renders with unit normals, the same bits vector and scalar", "[render_mesh]")
{
    // Double lanes interleave through their own permutes: 8 a register, not 16.
    Simulation<double> sim;
    const auto cloth = add_cloth(sim, {.width = 23, .height = 7, .position = [](int c, int r) {
                                           return Vec3<double>(0.5 * c, 0.4 * std::sin(0.7 * c + r), 0.5 * r);
                                       }});
    const auto vector = render_mesh(cloth);
    sim.set_vectorized(false);
    const auto scalar = render_mesh(cloth);
    CHECK(vector.positions == scalar.positions);
    CHECK(std::memcmp(vector.normals.data(), scalar.normals.data(),
                      vector.normals.size() * sizeof(vector.normals[0])) == 0);
    for (std::size_t i = 0; i < vector.normals.size(); ++i)
    {
        CHECK(std::abs(vector.normals[i].norm() - 1.0) < 1e-14);
        CHECK(vector.positions[i] == sim.state().position(cloth.base() + i));
    }
}

TEST_CASE("an OBJ file reads back to the same counts, bits and triangles", "[render_mesh]")
{
    CreasedSheet sheet(5);
    cut(sheet.sim, Vec3<float>(2.1f, -5, 0), Vec3<float>(2.1f, 20, 0));
    const auto mesh = render_mesh(sheet.cloth);
    const std::string path = output_path("render_mesh.obj");
    write_obj(path, mesh);
    std::ifstream in(path);
    std::vector<float> v, vt, vn;
    std::vector<std::array<std::uint32_t, 3>> f;
    std::string line;
    const auto numbers = [](std::istringstream& fields, std::vector<float>& out) {
        std::string word;
        while (fields >> word)
        {
            float x = 0;
            REQUIRE(std::from_chars(word.data(), word.data() + word.size(), x).ec == std::errc());
            out.push_back(x);
        }
    };
    while (std::getline(in, line))
    {
        std::istringstream fields(line);
        std::string tag;
        fields >> tag;
        if (tag == "v")
            numbers(fields, v);
        else if (tag == "vt")
            numbers(fields, vt);
        else if (tag == "vn")
            numbers(fields, vn);
        else if (tag == "f")
        {
            std::array<std::uint32_t, 3> t{};
            for (auto& corner : t)
            {
                std::string word;
                fields >> word;
                const auto a = word.substr(0, word.find('/'));
                CHECK(word == a + "/" + a + "/" + a);
                corner = std::uint32_t(std::stoul(a)) - 1; // 1-based
            }
            f.push_back(t);
        }
    }
    REQUIRE(v.size() == 3 * mesh.positions.size());
    REQUIRE(vt.size() == 2 * mesh.uvs.size());
    REQUIRE(vn.size() == 3 * mesh.normals.size());
    CHECK(std::memcmp(v.data(), mesh.positions.data(), v.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(vt.data(), mesh.uvs.data(), vt.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(vn.data(), mesh.normals.data(), vn.size() * sizeof(float)) == 0);
    CHECK(f == mesh.triangles);
    CHECK(f.size() < 2 * 19 * 11); // the cut's triangles are not in the file
}

TEST_CASE("an OBJ sequence numbers its frames from 1 with four digits", "[render_mesh]")
{
    const std::filesystem::path directory = output_path("obj_sequence");
    std::filesystem::remove_all(directory);
    std::filesystem::create_directories(directory);
    Simulation<float> sim;
    const auto cloth = add_cloth(sim, {.width = 4, .height = 3});
    ObjSequence sequence(directory);
    CHECK(sequence.write(render_mesh(cloth)) == directory / "frame_0001.obj");
    sim.step(guide_step<float>(1));
    CHECK(sequence.write(render_mesh(cloth)) == directory / "frame_0002.obj");
    CHECK(std::filesystem::file_size(directory / "frame_0002.obj") > 0);
    CHECK(sequence.next_frame() == 3);
    CHECK(ObjSequence(directory, {.prefix = "cape.", .digits = 2, .first = 0}).path(123) == directory / "cape.123.obj");
}

TEST_CASE("render output reports bad meshes, bad paths and a dead simulation, naming them", "[render_mesh][errors]")
{
    Simulation<float> sim;
    const auto cloth = add_cloth(sim, {.width = 4, .height = 3});
    auto mesh = render_mesh(cloth);
    const std::string missing = output_path("no/such/dir/mesh.obj");
    CHECK_THROWS_AS(write_obj(missing, mesh), std::runtime_error);
    CHECK_THROWS_WITH(write_obj(missing, mesh), ContainsSubstring("no/such/dir/mesh.obj"));
#ifdef __linux__
    CHECK_THROWS_WITH(write_obj("/dev/full", mesh), ContainsSubstring("failed writing '/dev/full'"));
#endif
    auto bad = mesh;
    bad.triangles[3][1] = 12;
    CHECK_THROWS_WITH(write_obj(output_path("bad.obj"), bad), ContainsSubstring("triangle 3 names vertex 12 of 12"));
    bad = mesh;
    bad.normals.pop_back();
    CHECK_THROWS_AS(write_obj(output_path("bad.obj"), bad), std::invalid_argument);
    CHECK_THROWS_WITH(ObjSequence(output_path("no/such/dir")), ContainsSubstring("no/such/dir' does not exist"));
    CHECK_THROWS_WITH(ObjSequence(SIMDVERLET_TEST_OUTPUT_DIR, {.digits = 0}), ContainsSubstring("got 0"));
    CHECK_THROWS_WITH(ObjSequence(SIMDVERLET_TEST_OUTPUT_DIR, {.first = -1}), ContainsSubstring("got -1"));

    std::optional<Cloth<float>> orphan;
    {
        Simulation<float> gone;
        orphan = add_cloth(gone, {.width = 3, .height = 3, .name = "orphan"});
    }
    CHECK_THROWS_AS(render_mesh(*orphan), std::logic_error);
    CHECK_THROWS_WITH(render_mesh(*orphan), ContainsSubstring("orphan"));
}

namespace
{
/// A tube of `around` columns of vertices round the y axis and rows + 1 rings down it (+y), each
/// cell split along (c, r)-(c + 1, r + 1) and wound to face outward, with uvs (c / around,
/// r / rows): the column of uvs at u = 1 lies on the vertices of column 0, which makes that column
/// a uv seam, every vertex on it with two uvs.
TriangleMesh<float> seamed_tube(int around, int rows, float radius, float spacing)
{
    TriangleMesh<float> mesh;
    for (int r = 0; r <= rows; ++r)
        for (int c = 0; c < around; ++c)
        {
            const double angle = 2 * std::numbers::pi * c / around;
            mesh.vertices.emplace_back(float(radius * std::cos(angle)), float(r) * spacing,
                                       float(radius * std::sin(angle)));
        }
    for (int r = 0; r <= rows; ++r)
        for (int c = 0; c <= around; ++c)
            mesh.uvs.emplace_back(float(c) / float(around), float(r) / float(rows));
    const auto vertex = [&](int c, int r) { return std::int32_t(r * around + c % around); };
    const auto uv = [&](int c, int r) { return std::int32_t(r * (around + 1) + c); };
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < around; ++c)
        {
            mesh.triangles.push_back({vertex(c, r), vertex(c + 1, r + 1), vertex(c + 1, r)});
            mesh.uv_triangles.push_back({uv(c, r), uv(c + 1, r + 1), uv(c + 1, r)});
            mesh.triangles.push_back({vertex(c, r), vertex(c, r + 1), vertex(c + 1, r + 1)});
            mesh.uv_triangles.push_back({uv(c, r), uv(c, r + 1), uv(c + 1, r + 1)});
        }
    return mesh;
}

/// Moves every vertex of a cloth by 0.4 sin(1.3 x) cos(0.9 y) along z: a sheet in the x-y plane
/// becomes a surface curved both ways, so no two of its normals agree, and a tube loses its symmetry.
void bump(Cloth<float>& cloth)
{
    for (std::size_t v = 0; v < cloth.count(); ++v)
    {
        const Vec3<float> p = cloth.position(v);
        cloth.teleport(v, {p.x(), p.y(), p.z() + 0.4f * std::sin(1.3f * p.x()) * std::cos(0.9f * p.y())});
    }
}

/// Per particle, the area-weighted unit normal recomputed in double from the given triangles (as
/// particle triples): the sum of their cross products, normalised.
std::map<std::size_t, Vec3<double>> particle_normals(const Simulation<float>& sim,
                                                     const std::vector<std::array<std::size_t, 3>>& triangles)
{
    std::map<std::size_t, Vec3<double>> sum;
    for (const auto& t : triangles)
    {
        const Vec3<double> a = sim.state().position(t[0]).cast<double>(), b = sim.state().position(t[1]).cast<double>(),
                           c = sim.state().position(t[2]).cast<double>();
        for (const auto p : t)
            sum.try_emplace(p, Vec3<double>::Zero()).first->second += (b - a).cross(c - a);
    }
    for (auto& [p, n] : sum)
        n.normalize();
    return sum;
}

/// The render mesh's triangles as particle triples.
std::vector<std::array<std::size_t, 3>> particle_triangles(const RenderMesh<float>& mesh)
{
    std::vector<std::array<std::size_t, 3>> out;
    for (const auto& t : mesh.triangles)
        out.push_back({mesh.particles[t[0]], mesh.particles[t[1]], mesh.particles[t[2]]});
    return out;
}

/// The cloth's own triangles as particle triples.
std::vector<std::array<std::size_t, 3>> particle_triangles(const Cloth<float>& cloth)
{
    std::vector<std::array<std::size_t, 3>> out;
    for (const auto& t : cloth.triangles())
        out.push_back({cloth.index(std::size_t(t[0])), cloth.index(std::size_t(t[1])), cloth.index(std::size_t(t[2]))});
    return out;
}

/// The largest distance between a render normal and its particle's reference normal, or (0, 0, 1)
/// for a particle the reference has no triangle for.
double worst_normal(const RenderMesh<float>& mesh, const std::map<std::size_t, Vec3<double>>& reference)
{
    double worst = 0;
    for (std::size_t i = 0; i < mesh.normals.size(); ++i)
    {
        const auto it = reference.find(mesh.particles[i]);
        const Vec3<double> expected = it == reference.end() ? Vec3<double>(0, 0, 1) : it->second;
        worst = std::max(worst, (mesh.normals[i].cast<double>() - expected).norm());
    }
    return worst;
}

/// What an OBJ file says, as written: numbers by tag, and per face corner its 1-based v, vt and vn
/// indices (0 where the corner leaves one out, as v//vn does).
struct ObjText
{
    std::vector<float> v, vt, vn;
    std::vector<std::array<std::array<std::uint32_t, 3>, 3>> f;
};

ObjText read_obj_text(const std::string& path)
{
    std::ifstream in(path);
    ObjText obj;
    const auto numbers = [](std::istringstream& fields, std::vector<float>& out) {
        std::string word;
        while (fields >> word)
        {
            float x = 0;
            REQUIRE(std::from_chars(word.data(), word.data() + word.size(), x).ec == std::errc());
            out.push_back(x);
        }
    };
    std::string line;
    while (std::getline(in, line))
    {
        std::istringstream fields(line);
        std::string tag;
        fields >> tag;
        if (tag == "v")
            numbers(fields, obj.v);
        else if (tag == "vt")
            numbers(fields, obj.vt);
        else if (tag == "vn")
            numbers(fields, obj.vn);
        else if (tag == "f")
        {
            auto& face = obj.f.emplace_back();
            for (auto& corner : face)
            {
                std::string word;
                fields >> word;
                std::istringstream parts(word);
                for (auto& index : corner)
                {
                    std::string part;
                    std::getline(parts, part, '/');
                    index = part.empty() ? 0 : std::uint32_t(std::stoul(part));
                }
            }
        }
    }
    return obj;
}
} // namespace

TEST_CASE("a mesh cloth's render mesh is its triangles and uvs, a seam vertex once per uv with one position and normal",
          "[render_mesh]")
{
    Simulation<float> sim;
    const int around = 12, rows = 4;
    auto cloth = add_mesh_cloth(sim, {.mesh = seamed_tube(around, rows, 1.0f, 0.5f), .bend_stiffness = 3.0f});
    bump(cloth); // uneven, so the triangles on the seam's two sides differ
    auto sheet = add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(8, 4.0f, true, 7), .bend_stiffness = 3.0f});
    for (const auto* of : {&cloth, &sheet})
    {
        const auto mesh = render_mesh(*of);
        REQUIRE(mesh.triangles.size() == of->triangles().size());
        REQUIRE(mesh.uvs.size() == mesh.particles.size());
        for (std::size_t t = 0; t < mesh.triangles.size(); ++t)
            for (std::size_t k = 0; k < 3; ++k)
            {
                const std::uint32_t i = mesh.triangles[t][k];
                CHECK(mesh.particles[i] == of->index(std::size_t(of->triangles()[t][k])));
                CHECK(mesh.uvs[i] == of->uvs()[std::size_t(of->uv_triangles()[t][k])]);
            }
        std::set<std::pair<std::uint32_t, std::pair<float, float>>> pairs;
        for (std::size_t i = 0; i < mesh.particles.size(); ++i)
        {
            pairs.insert({mesh.particles[i], {mesh.uvs[i].x(), mesh.uvs[i].y()}});
            CHECK(mesh.positions[i] == sim.state().position(mesh.particles[i]));
        }
        CHECK(pairs.size() == mesh.particles.size()); // one render vertex per (vertex, uv)
    }

    // Every vertex of column 0 twice (u = 0 and u = 1), every other once.
    const auto mesh = render_mesh(cloth);
    CHECK(render_mesh(sheet).particles.size() == sheet.count());
    REQUIRE(mesh.particles.size() == cloth.count() + std::size_t(rows + 1));
    std::map<std::size_t, std::vector<std::size_t>> copies;
    for (std::size_t i = 0; i < mesh.particles.size(); ++i)
        copies[cloth.vertex(mesh.particles[i])].push_back(i);
    for (const auto& [vertex, at] : copies)
    {
        CHECK(at.size() == (vertex % around == 0 ? 2u : 1u));
        if (at.size() != 2)
            continue;
        CHECK(at[1] == at[0] + 1); // a particle's copies are numbered together
        CHECK(mesh.uvs[at[0]].x() != mesh.uvs[at[1]].x());
        CHECK(mesh.positions[at[0]] == mesh.positions[at[1]]);
        CHECK(std::memcmp(&mesh.normals[at[0]], &mesh.normals[at[1]], sizeof(mesh.normals[0])) == 0);
    }
}

TEST_CASE("a mesh cloth without uvs renders one vertex per particle, in particle order, and no uvs", "[render_mesh]")
{
    Simulation<float> sim;
    const auto cloth = add_mesh_cloth(
        sim, {.mesh = torus<float>(Vec3<float>::Zero(), 2.0f, 0.6f, 16, 8), .bend_stiffness = 3.0f});
    const auto mesh = render_mesh(cloth);
    std::vector<std::uint32_t> order(cloth.count());
    std::iota(order.begin(), order.end(), std::uint32_t(cloth.base()));
    CHECK(mesh.particles == order);
    CHECK(mesh.uvs.empty());
    CHECK(particle_triangles(mesh) == particle_triangles(cloth));
    // A closed torus wound outward: every normal points away from the tube's centre line.
    for (std::size_t i = 0; i < mesh.positions.size(); ++i)
    {
        const Vec3<float> p = mesh.positions[i], ring = 2.0f * Vec3<float>(p.x(), 0, p.z()).normalized();
        CHECK(mesh.normals[i].dot((p - ring).normalized()) > 0.95f);
    }
}

TEST_CASE("on a flat irregular mesh cloth every render normal is the plane's", "[render_mesh]")
{
    // In the x-y plane every cross product is (0, 0, +z) exactly, whatever the triangle's shape:
    // only the normalisation rounds.
    Simulation<float> sim;
    const auto cloth = add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(10, 5.0f, true, 11), .bend_stiffness = 3.0f});
    const auto mesh = render_mesh(cloth);
    REQUIRE(mesh.normals.size() == cloth.count());
    for (const auto& n : mesh.normals)
    {
        CHECK(n.x() == 0.0f);
        CHECK(n.y() == 0.0f);
        CHECK(std::abs(n.z() - 1.0f) <= 1e-6f);
    }
}

TEST_CASE("a curved irregular mesh cloth's normals are its particles' area-weighted unit normals", "[render_mesh]")
{
    Simulation<float> sim;
    auto cloth = add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(10, 5.0f, true, 11), .bend_stiffness = 3.0f});
    bump(cloth);
    const auto mesh = render_mesh(cloth);
    float least_z = 1;
    for (const auto& n : mesh.normals)
    {
        CHECK(std::abs(n.norm() - 1.0f) < 1e-6f);
        least_z = std::min(least_z, n.z());
    }
    CHECK(least_z < 0.95f); // really curved: some normals tilt more than 18 degrees off the plane's
    // The reference reads the cloth's triangles, not the render mesh's.
    CHECK(worst_normal(mesh, particle_normals(sim, particle_triangles(cloth))) < 1e-5);
}

TEST_CASE("on a mesh cloth tube every normal of an inner ring points radially, seam copies too", "[render_mesh]")
{
    // Each inner vertex's six triangles are symmetric under the half turn about its radius, so
    // their sum lies along it: only the rounding of the positions and the sums tilts it.
    Simulation<float> sim;
    const int around = 16, rows = 6;
    const auto cloth = add_mesh_cloth(sim, {.mesh = seamed_tube(around, rows, 1.5f, 0.5f), .bend_stiffness = 3.0f});
    const auto mesh = render_mesh(cloth);
    std::size_t checked = 0;
    for (std::size_t i = 0; i < mesh.positions.size(); ++i)
    {
        const std::size_t ring = cloth.vertex(mesh.particles[i]) / std::size_t(around);
        if (ring == 0 || ring == std::size_t(rows))
            continue; // a border ring's triangles lie on one side of it
        const Vec3<float> p = mesh.positions[i], radial = Vec3<float>(p.x(), 0, p.z()).normalized();
        CHECK((mesh.normals[i] - radial).norm() < 1e-5f);
        ++checked;
    }
    CHECK(checked == std::size_t((rows - 1) * (around + 1))); // the seam's inner vertices twice
}

TEST_CASE("cutting a mesh cloth drops exactly the triangles with a cut edge, and its normals ignore them",
          "[render_mesh]")
{
    Simulation<float> sim;
    auto cloth = add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(10, 5.0f, true, 5), .bend_stiffness = 3.0f});
    bump(cloth);
    const auto before = render_mesh(cloth);
    const Vec3<float> a(-1, 1.37f, 0), b(6, 3.21f, 0);
    // The triangles none of whose edges crosses the stroke in the x-y plane, found from the
    // positions alone.
    const auto orient = [](const Vec3<float>& p, const Vec3<float>& q, const Vec3<float>& r) {
        return (double(q.x()) - p.x()) * (double(r.y()) - p.y()) - (double(q.y()) - p.y()) * (double(r.x()) - p.x());
    };
    const auto crosses = [&](const Vec3<float>& p, const Vec3<float>& q) {
        return orient(a, b, p) * orient(a, b, q) < 0 && orient(p, q, a) * orient(p, q, b) < 0;
    };
    std::set<std::array<std::size_t, 3>> expected;
    for (const auto& t : particle_triangles(cloth))
    {
        const auto at = [&](std::size_t k) { return sim.state().position(t[k]); };
        if (!crosses(at(0), at(1)) && !crosses(at(1), at(2)) && !crosses(at(2), at(0)))
            expected.insert(t);
    }
    REQUIRE(expected.size() + 10 < cloth.triangles().size()); // the stroke crosses a row of triangles

    REQUIRE(cut(sim, a, b) > 0);
    const auto after = render_mesh(cloth);
    const auto drawn = particle_triangles(after);
    CHECK(std::set<std::array<std::size_t, 3>>(drawn.begin(), drawn.end()) == expected);
    CHECK(drawn.size() == expected.size());
    CHECK(after.particles == before.particles); // a cut drops triangles, never vertices
    CHECK(after.positions == before.positions);

    // Normals from the drawn triangles only; the cut's border particles turned.
    CHECK(worst_normal(after, particle_normals(sim, drawn)) < 1e-5);
    float turned = 0;
    for (std::size_t i = 0; i < after.normals.size(); ++i)
        turned = std::max(turned, (after.normals[i] - before.normals[i]).norm());
    CHECK(turned > 1e-2f);
}

TEST_CASE("a regular sheet mesh cloth renders the normals of the grid cloth of the same square", "[render_mesh]")
{
    // sheet_mesh splits each square along p00-p11 as the grid does, and numbers its vertices as
    // the grid numbers its cells; the grid's whole-sheet ring sums in another order, so the two
    // agree to rounding.
    const int cells = 8;
    Simulation<float> sim;
    auto mesh_cloth = add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(cells, 4.0f, false), .bend_stiffness = 3.0f});
    auto grid = add_cloth(sim, {.width = cells + 1, .height = cells + 1, .spacing = 0.5f});
    bump(mesh_cloth);
    bump(grid);
    const auto from_mesh = render_mesh(mesh_cloth), from_grid = render_mesh(grid);
    REQUIRE(from_mesh.normals.size() == from_grid.normals.size());
    REQUIRE(from_mesh.triangles.size() == from_grid.triangles.size());
    float worst = 0;
    for (std::size_t i = 0; i < from_mesh.normals.size(); ++i)
    {
        const std::size_t vertex = mesh_cloth.vertex(from_mesh.particles[i]);
        CHECK(from_mesh.positions[i] == from_grid.positions[vertex]);
        worst = std::max(worst, (from_mesh.normals[i] - from_grid.normals[vertex]).norm());
    }
    CHECK(worst < 1e-5f);
    CHECK(from_grid.particles[5] == grid.base() + 5); // a grid's render vertex i is its particle base + i
}

TEST_CASE("a mesh cloth's render normals are the same bits on any thread count and grain, whole and cut",
          "[render_mesh]")
{
    Simulation<float> sim;
    auto cloth = add_mesh_cloth(sim, {.mesh = seamed_tube(24, 10, 1.5f, 0.4f), .bend_stiffness = 3.0f});
    bump(cloth);
    for (const bool whole : {true, false})
    {
        if (!whole)
            REQUIRE(cut(sim, Vec3<float>(0, 1.1f, 0.05f), Vec3<float>(0, 3.3f, 0.05f), ViewPlane::yz) > 0);
        sim.set_executor(nullptr);
        const auto reference = render_mesh(cloth);
        CHECK((reference.triangles.size() == cloth.triangles().size()) == whole);
        sim.set_vectorized(false); // the mesh path is scalar either way
        CHECK(same_normals(render_mesh(cloth), reference));
        sim.set_vectorized(true);
        for (const auto& [name, executor] : bitwise_executors())
            for (std::size_t grain : {std::size_t(1), std::size_t(40), std::size_t(1000)})
            {
                INFO(name << ", grain " << grain);
                sim.set_executor(executor, grain);
                const auto mesh = render_mesh(cloth);
                CHECK(same_normals(mesh, reference));
                CHECK(mesh.positions == reference.positions);
            }
    }
}

TEST_CASE("render_mesh_into refills a mesh cloth's buffers in place, its triangles rebuilt after a cut",
          "[render_mesh]")
{
    Simulation<float> sim;
    auto cloth = add_mesh_cloth(sim, {.mesh = sheet_mesh<float>(10, 5.0f, true, 3),
                                      .bend_stiffness = 3.0f,
                                      .pinned = [](std::size_t v) { return v <= 10; }});
    REQUIRE(stability_ratio(sim, guide_step<float>(16)) < 1);
    RenderMesh<float> mesh;
    render_mesh_into(cloth, mesh);
    const auto* positions = mesh.positions.data();
    const auto* normals = mesh.normals.data();
    const auto* particles = mesh.particles.data();
    const auto* triangles = mesh.triangles.data();
    const std::size_t whole = mesh.triangles.size();
    for (int f = 0; f < 20; ++f)
    {
        if (f == 10)
            REQUIRE(cut(sim, Vec3<float>(2.3f, -5, 0), Vec3<float>(2.6f, 20, 0)) > 0);
        sim.step(guide_step<float>(16));
        render_mesh_into(cloth, mesh);
        const auto fresh = render_mesh(cloth);
        CHECK(mesh.positions == fresh.positions);
        CHECK(same_normals(mesh, fresh));
        CHECK(mesh.uvs == fresh.uvs);
        CHECK(mesh.particles == fresh.particles);
        CHECK(mesh.triangles == fresh.triangles);
    }
    CHECK(mesh.triangles.size() < whole);
    CHECK(mesh.positions.data() == positions);
    CHECK(mesh.normals.data() == normals);
    CHECK(mesh.particles.data() == particles);
    CHECK(mesh.triangles.data() == triangles);
    CHECK(worst_normal(mesh, particle_normals(sim, particle_triangles(mesh))) < 1e-5);

    // The same buffers take a grid cloth next, and the mesh cloth again.
    const auto grid = add_cloth(sim, {.width = 5, .height = 4});
    render_mesh_into(grid, mesh);
    CHECK(mesh.triangles == render_mesh(grid).triangles);
    CHECK(mesh.particles == render_mesh(grid).particles);
    render_mesh_into(cloth, mesh);
    CHECK(mesh.triangles == render_mesh(cloth).triangles);
    CHECK(same_normals(mesh, render_mesh(cloth)));
}

TEST_CASE("a mesh cloth's OBJ file reads back to its positions, normals, uvs and faces, seam included", "[render_mesh]")
{
    Simulation<float> sim;
    auto tube = add_mesh_cloth(sim, {.mesh = seamed_tube(10, 4, 1.0f, 0.5f), .bend_stiffness = 3.0f});
    bump(tube);
    auto bare = seamed_tube(6, 2, 1.0f, 0.5f);
    bare.uvs.clear();
    bare.uv_triangles.clear();
    for (auto& v : bare.vertices)
        v.x() += 4;
    auto no_uvs = add_mesh_cloth(sim, {.mesh = bare, .bend_stiffness = 3.0f});
    for (const auto* cloth : {&tube, &no_uvs})
    {
        const auto mesh = render_mesh(*cloth);
        const bool has_uvs = !mesh.uvs.empty();
        CHECK(has_uvs == (cloth == &tube));
        const std::string path = output_path(has_uvs ? "mesh_cloth.obj" : "mesh_cloth_no_uvs.obj");
        write_obj(path, mesh);
        const auto obj = read_obj_text(path);
        REQUIRE(obj.v.size() == 3 * mesh.positions.size());
        REQUIRE(obj.vt.size() == 2 * mesh.uvs.size());
        REQUIRE(obj.vn.size() == 3 * mesh.normals.size());
        CHECK(std::memcmp(obj.v.data(), mesh.positions.data(), obj.v.size() * sizeof(float)) == 0);
        // No uvs: both empty, and memcmp may not be handed their null data.
        CHECK((obj.vt.empty() || std::memcmp(obj.vt.data(), mesh.uvs.data(), obj.vt.size() * sizeof(float)) == 0));
        CHECK(std::memcmp(obj.vn.data(), mesh.normals.data(), obj.vn.size() * sizeof(float)) == 0);
        REQUIRE(obj.f.size() == mesh.triangles.size());
        for (std::size_t t = 0; t < obj.f.size(); ++t)
            for (std::size_t k = 0; k < 3; ++k)
            {
                const std::uint32_t i = mesh.triangles[t][k] + 1;
                CHECK(obj.f[t][k] == std::array<std::uint32_t, 3>{i, has_uvs ? i : 0, i});
            }
#if SIMDVERLET_HAVE_TINYOBJLOADER
        // The loader welds by position index: a seam's copies come back as separate vertices at
        // one position, each triangle's corners and uvs as written.
        const auto loaded = load_obj_mesh<float>(path);
        CHECK_FALSE(loaded.repairs.any());
        CHECK(loaded.vertices == mesh.positions);
        REQUIRE(loaded.triangles.size() == mesh.triangles.size());
        for (std::size_t t = 0; t < mesh.triangles.size(); ++t)
            for (std::size_t k = 0; k < 3; ++k)
            {
                CHECK(std::uint32_t(loaded.triangles[t][k]) == mesh.triangles[t][k]);
                if (has_uvs)
                    CHECK(loaded.uvs[std::size_t(loaded.uv_triangles[t][k])] == mesh.uvs[mesh.triangles[t][k]]);
            }
        CHECK(loaded.uvs.size() == mesh.uvs.size());
#endif
    }
}

TEST_CASE("a material cloth renders every triangle: its solve, not springs, holds its edges", "[render_mesh]")
{
    // A material cloth has no spring between its corners; a triangle is drawn when it holds, and
    // the solve holds all of them.
    Simulation<float> sim;
    const auto sheet = add_mesh_cloth(
        sim, {.mesh = sheet_mesh<float>(8, 4.0f, true, 7), .material = ClothMaterial<float>::cotton()});
    const auto mesh = render_mesh(sheet);
    CHECK(mesh.triangles.size() == sheet.triangles().size());
    CHECK(mesh.particles.size() == sheet.count());
}
