// The extension: what both scalar types share (enums, executors, meshes, the OBJ loader), then the
// float32 and float64 classes (bind_float.cpp, bind_double.cpp). Built once per instruction set
// (setup.py), each as `simdverlet._simdverlet_<set>`; the package imports the widest one the
// processor runs (src/simdverlet/__init__.py).
#include "convert.hpp"

#if SIMDVERLET_HAVE_OPENMP
#    include <simdverlet/core/parallel/openmp.hpp>
#endif
#if SIMDVERLET_HAVE_TINYOBJLOADER
#    include <simdverlet/io/obj_mesh.hpp>
#endif

namespace simdverlet::python
{
void bind_float(py::module_& m);
void bind_double(py::module_& m);

namespace
{
using Mesh = TriangleMesh<double>;

void bind_enums(py::module_& m)
{
    py::enum_<Masses>(m, "Masses", "How a simulation stores masses.")
        .value("unit", Masses::unit, "every particle has mass 1 and is free")
        .value("per_particle", Masses::per_particle, "an inverse mass per particle; 0 pins it");
    py::enum_<MeshRepair>(m, "MeshRepair", "What to do with zero-area and repeated triangles and unused vertices.")
        .value("drop", MeshRepair::drop, "remove them, report them (repairs) and log one warning")
        .value("refuse", MeshRepair::refuse, "raise ValueError naming the first");
#if SIMDVERLET_HAVE_TINYOBJLOADER
    py::enum_<ObjUp>(m, "ObjUp", "Which way is up in an OBJ file; load_obj_mesh turns it into +y down.")
        .value("y_down", ObjUp::y_down, "already the library's world: read as it is")
        .value("y", ObjUp::y, "y up (OBJ's usual convention): half a turn about x")
        .value("z", ObjUp::z, "z up (Blender's scene): a quarter turn about x, +z becomes -y");
#endif
    py::enum_<ContactDetection>(m, "ContactDetection", "When a triangle-mesh collider looks for contacts.")
        .value("per_call", ContactDetection::per_call, "once per step() call, a contact plane per particle")
        .value("per_substep", ContactDetection::per_substep, "the full swept test every substep");
    py::enum_<TetherKind>(m, "TetherKind", "How a tether measures the distance to its anchor.")
        .value("geodesic", TetherKind::geodesic, "along the cloth, through live springs")
        .value("euclidean", TetherKind::euclidean, "the straight line in the pose the tethers were added in");
    py::enum_<ViewPlane>(m, "ViewPlane", "The plane a cut stroke is drawn in.")
        .value("xy", ViewPlane::xy)
        .value("xz", ViewPlane::xz)
        .value("yz", ViewPlane::yz);
}

void bind_executors(py::module_& m)
{
    py::class_<Executor, std::shared_ptr<Executor>>(m, "Executor",
                                                    "Runs a simulation's particle sweeps; see Simulation.set_executor.")
        .def("threads", &Executor::threads);
    py::class_<SerialExecutor, Executor, std::shared_ptr<SerialExecutor>>(m, "SerialExecutor", "One thread, in order.")
        .def(py::init<>());
#if SIMDVERLET_HAVE_OPENMP
    py::class_<OpenMPExecutor, Executor, std::shared_ptr<OpenMPExecutor>>(
        m, "OpenMPExecutor", "OpenMP threads; results are the same bits whatever the thread count.")
        .def(py::init<int>(), py::arg("threads"));
#endif
}

void bind_meshes(py::module_& m)
{
    py::class_<MeshRepairs>(m, "MeshRepairs", "What a mesh's repair dropped.")
        .def_readonly("degenerate_triangles", &MeshRepairs::degenerate_triangles)
        .def_readonly("repeated_triangles", &MeshRepairs::repeated_triangles)
        .def_readonly("unused_vertices", &MeshRepairs::unused_vertices)
        .def_readonly("first_degenerate_triangle", &MeshRepairs::first_degenerate_triangle)
        .def_readonly("first_repeated_triangle", &MeshRepairs::first_repeated_triangle)
        .def_readonly("first_unused_vertex", &MeshRepairs::first_unused_vertex)
        .def_readonly("uvs_dropped", &MeshRepairs::uvs_dropped)
        .def("any", &MeshRepairs::any)
        .def("describe", &MeshRepairs::describe, py::arg("what") = "mesh");

    py::class_<Mesh>(m, "TriangleMesh",
                     "Vertices (n, 3), triangles (m, 3) and optional uvs (k, 2) with per-corner uv_triangles (m, 3), "
                     "as an OBJ holds them. Stored in float64; a float32 simulation converts when it uses one.")
        .def(py::init([](const py::handle& vertices, const py::handle& triangles, const py::handle& uvs,
                         const py::handle& uv_triangles) {
                 Mesh mesh{.vertices = points_of<double>(vertices, "mesh vertices"),
                           .triangles = triangles_of(triangles, "mesh triangle")};
                 if (!uvs.is_none())
                     mesh.uvs = uvs_of<double>(uvs, "mesh uvs");
                 if (!uv_triangles.is_none())
                     mesh.uv_triangles = triangles_of(uv_triangles, "mesh uv triangle");
                 return mesh;
             }),
             py::arg("vertices"), py::arg("triangles"), py::arg("uvs") = py::none(),
             py::arg("uv_triangles") = py::none())
        .def_property_readonly("vertices", [](const Mesh& mesh) { return points_array(mesh.vertices); })
        .def_property_readonly("triangles", [](const Mesh& mesh) { return index_rows(mesh.triangles); })
        .def_property_readonly("uvs", [](const Mesh& mesh) { return uvs_array(mesh.uvs); })
        .def_property_readonly("uv_triangles", [](const Mesh& mesh) { return index_rows(mesh.uv_triangles); })
        .def_readonly("repairs", &Mesh::repairs, "what the loader's repair dropped");

#if SIMDVERLET_HAVE_TINYOBJLOADER
    m.def(
        "load_obj_mesh",
        [](const std::string& path, MeshRepair repair, double scale, ObjUp up) {
            return load_obj_mesh<double>(path, {.repair = repair, .scale = scale, .up = up});
        },
        py::arg("path"), py::arg("repair") = ObjLoadOptions{}.repair, py::arg("scale") = ObjLoadOptions{}.scale,
        py::arg("up") = ObjLoadOptions{}.up,
        "Reads a Wavefront OBJ into a TriangleMesh, welded by position index, polygons fanned, uvs kept; "
        "repairs what it can (see MeshRepair) and raises ValueError naming the line for what it cannot. "
        "scale: metres per file unit (0.01 for centimetres); up: the file's up axis (ObjUp), turned, not "
        "mirrored, into the library's +y down.");
#endif
}
} // namespace
} // namespace simdverlet::python

#ifndef SIMDVERLET_EXTENSION
#    define SIMDVERLET_EXTENSION _simdverlet
#endif

PYBIND11_MODULE(SIMDVERLET_EXTENSION, m)
{
    using namespace simdverlet::python;
    m.doc() = "simdverlet: SIMD Verlet cloth and rope physics (the C++ library's Python module).";
    m.attr("snapshot_format_version") = simdverlet::kSnapshotFormatVersion;
    m.attr("has_openmp") = bool(SIMDVERLET_HAVE_OPENMP);
    m.attr("instruction_set") = simdverlet::simd::arch_name();
    bind_enums(m);
    bind_executors(m);
    bind_meshes(m);
    bind_float(m);
    bind_double(m);
}
