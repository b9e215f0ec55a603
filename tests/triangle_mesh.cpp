// Triangle meshes as assets arrive: sanitize_mesh's repairs (what it drops, how it renumbers, the
// report and the one warning), what it refuses and that a refusal changes nothing; and the OBJ
// loader's uvs, fans and repairs, and each bad file it names, from small files the tests write.
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

#if SIMDVERLET_HAVE_TINYOBJLOADER
#    include <simdverlet/io/obj_mesh.hpp>
#endif

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
using Triangles = std::vector<std::array<std::int32_t, 3>>;

/// A unit square (vertices 0, 2, 3, 4) as two triangles, each also written again in another order
/// and orientation, with two zero-area triangles (three corners in a line; a corner twice) and two
/// vertices no kept triangle names (1, and 5, named only by the line). Every triangle has uvs.
TriangleMesh<float> messy_square()
{
    TriangleMesh<float> mesh;
    mesh.vertices = {{0, 0, 0}, {5, 5, 5}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {2, 0, 0}};
    mesh.triangles = {{0, 2, 3}, {0, 2, 5}, {3, 2, 0}, {0, 3, 4}, {4, 4, 0}, {3, 4, 0}};
    mesh.uvs = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    mesh.uv_triangles = {{0, 1, 2}, {0, 1, 1}, {2, 1, 0}, {0, 2, 3}, {3, 3, 0}, {2, 3, 0}};
    return mesh;
}

/// Bit for bit, so that a mesh holding a NaN equals itself.
bool same_mesh(const TriangleMesh<float>& a, const TriangleMesh<float>& b)
{
    const auto same_points = [](const auto& p, const auto& q) {
        return p.size() == q.size() && (p.empty() || std::memcmp(p.data(), q.data(), p.size() * sizeof(p[0])) == 0);
    };
    return same_points(a.vertices, b.vertices) && a.triangles == b.triangles && same_points(a.uvs, b.uvs) &&
           a.uv_triangles == b.uv_triangles;
}
} // namespace

TEST_CASE("sanitize_mesh drops zero-area and repeated triangles and unused vertices, renumbers the rest in order and "
          "reports the first of each",
          "[mesh][triangle_mesh]")
{
    LogCapture log;
    TriangleMesh<float> mesh = messy_square();
    const MeshRepairs repairs = sanitize_mesh(mesh, MeshRepair::drop, "test mesh");
    CHECK(repairs.degenerate_triangles == 2);
    CHECK(repairs.first_degenerate_triangle == std::optional<std::size_t>(1));
    CHECK(repairs.repeated_triangles == 2);
    CHECK(repairs.first_repeated_triangle == std::optional<std::size_t>(2));
    CHECK(repairs.unused_vertices == 2);
    CHECK(repairs.first_unused_vertex == std::optional<std::size_t>(1));
    CHECK_FALSE(repairs.uvs_dropped);
    CHECK(repairs.any());
    CHECK(mesh.repairs.degenerate_triangles == 2);
    CHECK(mesh.repairs.first_unused_vertex == repairs.first_unused_vertex);
    // The first of each repeated pair is kept; the vertices keep their order, 1 and 5 gone.
    CHECK(mesh.vertices == std::vector<Vec3<float>>{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}});
    CHECK(mesh.triangles == Triangles{{0, 1, 2}, {0, 2, 3}});
    // uvs are not renumbered: the kept triangles keep their uv corners.
    CHECK(mesh.uvs.size() == 4);
    CHECK(mesh.uv_triangles == Triangles{{0, 1, 2}, {0, 2, 3}});
    REQUIRE(log.warnings.size() == 1);
    CHECK(log.warnings[0] == "test mesh: dropped 2 degenerate triangles (the first is triangle 1), 2 repeated "
                             "triangles (the first is triangle 2) and 2 unused vertices (the first is vertex 1)");

    // What is left is clean: a second pass finds nothing, says nothing and changes nothing.
    const TriangleMesh<float> clean = mesh;
    CHECK_FALSE(sanitize_mesh(mesh).any());
    CHECK_FALSE(mesh.repairs.any());
    CHECK(same_mesh(mesh, clean));
    CHECK(log.warnings.size() == 1);
}

TEST_CASE("a repair report names one of each in the singular, and nothing when there is nothing", "[triangle_mesh]")
{
    MeshRepairs repairs{.degenerate_triangles = 1, .first_degenerate_triangle = 7};
    CHECK(repairs.describe("body") == "body: dropped 1 degenerate triangle (triangle 7)");
    repairs.unused_vertices = 1;
    repairs.first_unused_vertex = 0;
    repairs.uvs_dropped = true;
    CHECK(repairs.describe("body") ==
          "body: dropped 1 degenerate triangle (triangle 7), 1 unused vertex (vertex 0) and its uvs, which some "
          "face corners lacked");
    CHECK_FALSE(MeshRepairs{}.any());
    CHECK(MeshRepairs{}.describe("body") == "body: nothing to repair");
}

TEST_CASE("sanitize_mesh with refuse throws naming the first defect, warns nothing and leaves the mesh as it was",
          "[mesh][triangle_mesh][errors]")
{
    LogCapture log;
    const auto refused = [](TriangleMesh<float> mesh) {
        const TriangleMesh<float> before = mesh;
        const std::string message = error_message<std::invalid_argument>(
            [&] { sanitize_mesh(mesh, MeshRepair::refuse, "test mesh"); });
        CHECK(same_mesh(mesh, before));
        return message;
    };
    CHECK(refused(messy_square()) ==
          "simdverlet: test mesh triangle 1 (vertices 0, 2, 5) is degenerate: its area is 0");
    TriangleMesh<float> repeated = messy_square();
    repeated.triangles = {{0, 2, 3}, {0, 3, 4}, {4, 0, 3}, {0, 2, 5}};
    repeated.uv_triangles.clear();
    CHECK(refused(repeated) ==
          "simdverlet: test mesh triangle 2 (vertices 4, 0, 3) repeats triangle 1 (vertices 0, 3, 4)");
    TriangleMesh<float> unused = messy_square();
    unused.triangles = {{0, 2, 3}, {0, 3, 4}};
    unused.uv_triangles.clear();
    CHECK(refused(unused) == "simdverlet: test mesh vertex 1 is used by no triangle");
    // A clean mesh passes a refusal untouched.
    unused.vertices.erase(unused.vertices.begin() + 5);
    unused.vertices.erase(unused.vertices.begin() + 1);
    unused.triangles = {{0, 1, 2}, {0, 2, 3}};
    const TriangleMesh<float> clean = unused;
    CHECK_FALSE(sanitize_mesh(unused, MeshRepair::refuse).any());
    CHECK(same_mesh(unused, clean));
    CHECK(log.warnings.empty());
}

TEST_CASE("sanitize_mesh throws on what no repair can fix, naming the element, and leaves the mesh as it was",
          "[mesh][triangle_mesh][errors]")
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto message = [](auto change) {
        TriangleMesh<float> mesh = messy_square();
        change(mesh);
        const TriangleMesh<float> before = mesh;
        const std::string text = error_message<std::invalid_argument>(
            [&] { sanitize_mesh(mesh, MeshRepair::drop, "test mesh"); });
        CHECK(same_mesh(mesh, before));
        return text;
    };
    CHECK(message([](auto& m) { m.triangles.clear(); }) == "simdverlet: test mesh has no triangles");
    // Even a vertex no triangle names: a NaN is a broken file, not a stray vertex.
    CHECK(message([=](auto& m) { m.vertices[1].y() = nan; }) ==
          "simdverlet: test mesh vertex 1 (5, NaN, 5) is not finite");
    CHECK(message([](auto& m) { m.triangles[3][1] = 6; }) ==
          "simdverlet: test mesh triangle 3 refers to vertex 6, but there are 6 vertices");
    CHECK(message([](auto& m) { m.triangles[0][0] = -1; }).find("triangle 0 refers to vertex -1") != std::string::npos);
    CHECK(message([](auto& m) { m.uv_triangles.pop_back(); }) ==
          "simdverlet: test mesh has 5 uv triangles for 6 triangles; it needs one per triangle, or none");
    CHECK(message([](auto& m) { m.uv_triangles[4][2] = 4; }) ==
          "simdverlet: test mesh uv triangle 4 refers to uv 4, but there are 4 uvs");
    CHECK(message([](auto& m) { m.uvs[2].x() = std::numeric_limits<float>::infinity(); }) ==
          "simdverlet: test mesh uv 2 (inf, 1) is not finite");
    CHECK(message([](auto& m) {
              m.triangles = {{0, 2, 5}, {4, 4, 0}};
              m.uv_triangles.clear();
          }) == "simdverlet: test mesh has no triangles left: all 2 are degenerate");
    CHECK(message([](auto& m) {
              m.triangles = {{0, 2, 5}};
              m.uv_triangles.clear();
          }) == "simdverlet: test mesh has no triangles left: its one triangle is degenerate");
}

#if SIMDVERLET_HAVE_TINYOBJLOADER
namespace
{
std::string write_text(const std::string& name, const std::string& text)
{
    const std::string path = std::string(SIMDVERLET_TEST_OUTPUT_DIR) + "/" + name;
    std::ofstream(path) << text;
    return path;
}

template <class E = std::invalid_argument>
std::string load_error(const std::string& path, MeshRepair repair = MeshRepair::drop)
{
    return error_message<E>([&] { load_obj_mesh<float>(path, {.repair = repair}); });
}
} // namespace

TEST_CASE(
    "an OBJ file in centimetres modelled y-up or z-up loads scaled and turned into the y-down world, not mirrored",
    "[mesh][obj]")
{
    // A tetrahedron wound outward, its apex up in the file: once loaded the apex is the lowest y
    // (up is -y), every coordinate is a hundredth of the file's, and the signed volume keeps its
    // sign, which a mirror (y -> -y alone) would flip: a closed collider would turn inside out.
    const auto volume = [](const TriangleMesh<double>& m) {
        double six = 0;
        for (const auto& t : m.triangles)
            six += m.vertices[std::size_t(t[0])].dot(
                m.vertices[std::size_t(t[1])].cross(m.vertices[std::size_t(t[2])]));
        return six / 6;
    };
    const std::string faces = "f 1 3 2\nf 1 2 4\nf 2 3 4\nf 3 1 4\n";
    const auto y_up = write_text("tetra_y.obj", "v 0 0 0\nv 100 0 0\nv 0 0 100\nv 0 100 0\n" + faces);
    const auto z_up = write_text("tetra_z.obj", "v 0 0 0\nv 100 0 0\nv 0 -100 0\nv 0 0 100\n" + faces);
    const auto file = load_obj_mesh<double>(y_up);
    const auto from_y = load_obj_mesh<double>(y_up, {.scale = 0.01, .up = ObjUp::y});
    const auto from_z = load_obj_mesh<double>(z_up, {.scale = 0.01, .up = ObjUp::z});
    for (const auto* mesh : {&from_y, &from_z})
    {
        CHECK(mesh->vertices[3].isApprox(Vec3<double>(0, -1, 0)));
        CHECK(mesh->vertices[1].isApprox(Vec3<double>(1, 0, 0)));
        CHECK(volume(*mesh) == Approx(volume(file) * 1e-6));
    }
    CHECK(volume(file) != 0);
    struct Bad
    {
        double scale;
        const char* shown;
    };
    for (const Bad bad : {Bad{0.0, "0"}, Bad{-1.0, "-1"}, Bad{std::numeric_limits<double>::infinity(), "inf"}})
        CHECK(error_message<std::invalid_argument>([&] { load_obj_mesh<double>(y_up, {.scale = bad.scale}); }) ==
              "simdverlet: loading OBJ file '" + y_up + "': scale must be finite and > 0, got " + bad.shown);
}

TEST_CASE("an OBJ file loads welded by position, its polygons fanned, each corner with its uv", "[mesh][obj]")
{
    LogCapture log;
    // A square as one quad and a triangle beside it, the triangle's uvs a separate island: vertices
    // 2 (1 1 0) and 3 (1 0 0) carry two uvs each, one per side of the seam. The last face counts back.
    const auto path = write_text("square.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\n"
                                               "vt 0 0\nvt 0.5 0\nvt 0.5 1\nvt 0 1\nvt 0.6 0\nvt 1 0\nvt 0.6 1\n"
                                               "vn 0 0 1\n"
                                               "f 1/1/1 2/2/1 3/3/1 4/4/1\nf -4/-3/1 -1/-2/1 -3/-1/1\n");
    const auto mesh = load_obj_mesh<float>(path);
    CHECK(mesh.vertices.size() == 5);
    CHECK(mesh.vertices[4] == Vec3<float>(2, 0, 0));
    CHECK(mesh.triangles == Triangles{{0, 1, 2}, {0, 2, 3}, {1, 4, 2}});
    REQUIRE(mesh.uvs.size() == 7);
    CHECK(mesh.uvs[1] == Vec2<float>(0.5f, 0));
    CHECK(mesh.uv_triangles == Triangles{{0, 1, 2}, {0, 2, 3}, {4, 5, 6}});
    CHECK_FALSE(mesh.repairs.any());
    CHECK(log.warnings.empty());
    TriangleMeshCollider<float> collider({.vertices = mesh.vertices, .triangles = mesh.triangles});
    CHECK(collider.triangles().size() == 3);

    // Without a vt on any corner there are no uvs at all, whatever vt lines the file holds.
    const auto plain = load_obj_mesh<double>(write_text("plain.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nf 1 2 3\n"));
    CHECK(plain.triangles == Triangles{{0, 1, 2}});
    CHECK(plain.uvs.empty());
    CHECK(plain.uv_triangles.empty());
}

TEST_CASE("an OBJ file's zero-area and repeated triangles and unused vertices are dropped, reported and logged, or "
          "refused",
          "[mesh][obj]")
{
    // Vertex 4 (2 0 0) lies on the line through 1 and 2; vertex 6 is named by nothing.
    const auto path = write_text("messy.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\nv 9 9 9\n"
                                              "f 1 2 3 4\nf 1 2 5\nf 3 1 2\nf 4 4 1\n");
    {
        LogCapture log;
        const auto mesh = load_obj_mesh<float>(path);
        // Fanned: 0 (1 2 3), 1 (1 3 4), 2 the line, 3 a repeat of 0, 4 a corner twice.
        CHECK(mesh.triangles == Triangles{{0, 1, 2}, {0, 2, 3}});
        CHECK(mesh.vertices.size() == 4);
        CHECK(mesh.repairs.degenerate_triangles == 2);
        CHECK(mesh.repairs.first_degenerate_triangle == std::optional<std::size_t>(2));
        CHECK(mesh.repairs.repeated_triangles == 1);
        CHECK(mesh.repairs.first_repeated_triangle == std::optional<std::size_t>(3));
        CHECK(mesh.repairs.unused_vertices == 2);
        CHECK(mesh.repairs.first_unused_vertex == std::optional<std::size_t>(4));
        REQUIRE(log.warnings.size() == 1);
        CHECK(log.warnings[0] == "OBJ file '" + path +
                                     "': dropped 2 degenerate triangles (the first is triangle 2), 1 repeated "
                                     "triangle (triangle 3) and 2 unused vertices (the first is vertex 4)");
    }
    CHECK(load_error(path, MeshRepair::refuse) ==
          "simdverlet: OBJ file '" + path + "' triangle 2 (vertices 0, 1, 4) is degenerate: its area is 0");

    // A file of one degenerate triangle has nothing left to drop to.
    const auto degenerate = write_text("degenerate.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n");
    CHECK(load_error(degenerate) ==
          "simdverlet: OBJ file '" + degenerate + "' has no triangles left: its one triangle is degenerate");
    CHECK(load_error(degenerate, MeshRepair::refuse).find("triangle 0 (vertices 0, 1, 2) is degenerate") !=
          std::string::npos);
}

TEST_CASE("an OBJ file with uvs on only some corners loads without uvs and says so, or is refused", "[mesh][obj]")
{
    const auto path = write_text("some_uvs.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\n"
                                                 "f 1/1 2/2 3/3\n# no uvs here\nf 1 3 4\n");
    {
        LogCapture log;
        const auto mesh = load_obj_mesh<float>(path);
        CHECK(mesh.triangles.size() == 2);
        CHECK(mesh.uvs.empty());
        CHECK(mesh.uv_triangles.empty());
        CHECK(mesh.repairs.uvs_dropped);
        CHECK(mesh.repairs.degenerate_triangles == 0);
        REQUIRE(log.warnings.size() == 1);
        CHECK(log.warnings[0] == "OBJ file '" + path + "': dropped its uvs, which some face corners lacked");
    }
    CHECK(load_error(path, MeshRepair::refuse) ==
          "simdverlet: OBJ file '" + path +
              "' has uvs on some face corners only: the face on line 8 has one, the face on line 10 lacks one");
}

TEST_CASE("a bad OBJ file is an error naming the file and the line or element", "[mesh][obj][errors]")
{
    const std::string missing = std::string(SIMDVERLET_TEST_OUTPUT_DIR) + "/no_such_mesh.obj";
    CHECK(load_error<std::runtime_error>(missing) == "simdverlet: cannot open OBJ file '" + missing + "'");
    const auto named = [](const std::string& name, const std::string& text) {
        const auto path = write_text(name, text);
        const std::string message = load_error(path);
        CHECK(message.find("OBJ file '" + path + "'") != std::string::npos);
        return message;
    };
    const auto tail = [](const std::string& message) { return message.substr(message.find("' ") + 2); };
    CHECK(tail(named("empty.obj", "")) == "has no vertices and no faces");
    CHECK(tail(named("no_faces.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nl 1 2 3\n")) == "has 3 vertices but no faces");
    CHECK(tail(named("bad_index.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 9\n")) ==
          "line 4: the face refers to vertex 9, but the file has 3 vertices");
    // A quad too: tinyobjloader's own triangulation would have skipped it with only a warning.
    CHECK(tail(named("bad_quad.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\n\nf 1 2 3 4\n")) ==
          "line 5: the face refers to vertex 4, but the file has 3 vertices");
    CHECK(tail(named("far_back.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf -1 -2 -4\n")) ==
          "line 4: the face refers to a vertex before the first, but the file has 3 vertices");
    CHECK(tail(named("bad_uv.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nf 1/1 2/1 3/2\n")) ==
          "line 5: the face refers to uv 2, but the file has 1 uvs");
    // OBJ counts from 1: a 0 must not wrap round to the last vertex.
    CHECK(tail(named("zero_index.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 0 1 2\n")) ==
          "line 4: face corner '0' has the index 0, but OBJ indices count from 1");
    CHECK(tail(named("zero_uv.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nf 1/1 2/0 3/1\n")) ==
          "line 5: face corner '2/0' has the index 0, but OBJ indices count from 1");
    CHECK(tail(named("not_an_index.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 x\n")) ==
          "line 4: face corner 'x' is not a vertex index (v, v/vt, v//vn or v/vt/vn)");
    CHECK(tail(named("trailing_slash.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1/ 2 3\n")) ==
          "line 4: face corner '1/' is not a vertex index (v, v/vt, v//vn or v/vt/vn)");
    CHECK(tail(named("four_indices.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1/1/1/1 2 3\n")) ==
          "line 4: face corner '1/1/1/1' has more than three indices");
    std::string wide = "v 0 0 0\nv 1 0 0\nv 1 1 0\nf"; // tinyobjloader counts a face's corners in a byte
    for (int k = 0; k < 256; ++k)
        wide += " " + std::to_string(k % 3 + 1);
    CHECK(tail(named("wide.obj", wide + "\n")) == "line 4: a face needs 3 to 255 corners, but has 256");
    CHECK(tail(named("two_corners.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n")) ==
          "line 3: a face needs 3 to 255 corners, but has 2");
    // tinyobjloader reads "nan", "inf" and "1,5" as numbers it makes up; the loader refuses them.
    CHECK(tail(named("nan.obj", "v 0 0 0\nv 0 nan 0\nv 1 1 0\nf 1 2 3\n")) ==
          "line 2: a vertex coordinate 'nan' is not a finite number");
    CHECK(tail(named("inf.obj", "v 0 0 0\r\nv 1 0 0\r\nv -inf 1 0\r\nf 1 2 3\r\n")) ==
          "line 3: a vertex coordinate '-inf' is not a finite number");
    CHECK(tail(named("comma.obj", "v 0 0 0\nv 1,5 0 0\nv 1 1 0\nf 1 2 3\n")) ==
          "line 2: a vertex coordinate '1,5' is not a finite number");
    CHECK(tail(named("uv_nan.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nvt NaN 0\nf 1/1 2/1 3/1\n")) ==
          "line 4: a uv coordinate 'NaN' is not a finite number");
    CHECK(tail(named("short.obj", "v 0 0 0\nv 1 0\nv 1 1 0\nf 1 2 3\n")) ==
          "line 2: a vertex needs 3 coordinates, but has 2");
    // Too large for the reader's float: infinite once read.
    CHECK(tail(named("huge.obj", "v 0 0 0\nv 1 0 0\nv 1 1e999 0\nf 1 2 3\n")) ==
          "line 3: the vertex (1, inf, 0) is not finite");
}
#endif
