// Render output: a cloth as positions, unit normals, uvs and triangles, refilled without
// allocating, with torn and cut triangles dropped; and OBJ files that read back bit for bit.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

#if SIMDVERLET_HAVE_OPENMP
#    include <simdverlet/parallel/openmp.hpp>
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

std::string output_path(const std::string& name)
{
    std::string path = SIMDVERLET_TEST_OUTPUT_DIR; // appended, not `+`: GCC 12 warns falsely on the temporary
    path += '/';
    path += name;
    return path;
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
        std::vector<std::shared_ptr<Executor>> executors = {std::make_shared<SerialExecutor>()};
#if SIMDVERLET_HAVE_OPENMP
        for (int threads : {1, 2, 3})
            executors.push_back(std::make_shared<OpenMPExecutor>(threads));
#endif
        for (const auto& executor : executors)
            for (std::size_t grain : {std::size_t(1), std::size_t(40), std::size_t(1000)})
            {
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
