// The Python face of one scalar type: Simulation<T> and every stage and handle it hands out.
// bind_float.cpp and bind_double.cpp instantiate it as `Simulation` and `Simulation64`, and the
// handles with the same suffix, so the two compile in parallel.
//
// Rules the bindings keep:
// - Arguments are keywords with the C++ defaults, read from a default-constructed options struct,
//   so a default changed in a header changes here too.
// - Python callables (pinned, position) are evaluated in full before the library is called, so a
//   Python error leaves the simulation as it was, and no Python runs inside a step.
// - step() releases the GIL: threads of one process (a Dask worker's) step simulations in parallel.
// - Handles hold the library's shared data, so a collider or handle outliving its simulation
//   raises the library's "used after its simulation was destroyed" instead of touching freed memory.
#pragma once

#include "convert.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_set>

namespace simdverlet::python
{

/// The mesh type Python passes around: always float64, converted to the simulation's scalar when
/// a cloth or collider is made from it.
using Mesh = TriangleMesh<double>;

template <class T>
TriangleMesh<T> mesh_as(const Mesh& m)
{
    TriangleMesh<T> out{.triangles = m.triangles, .uv_triangles = m.uv_triangles, .repairs = m.repairs};
    out.vertices.reserve(m.vertices.size());
    for (const auto& v : m.vertices)
        out.vertices.push_back(v.template cast<T>());
    out.uvs.reserve(m.uvs.size());
    for (const auto& uv : m.uvs)
        out.uvs.push_back(uv.template cast<T>());
    return out;
}

template <class T>
ContactMaterial<T> material_of(T friction, T tangential_damping, T restitution, T margin)
{
    return {
        .friction = friction, .tangential_damping = tangential_damping, .restitution = restitution, .margin = margin};
}

/// The keyword arguments every collider's constructor takes for its material.
template <class T>
auto material_args()
{
    const ContactMaterial<T> d{};
    return std::make_tuple(py::arg("friction") = d.friction, py::arg("tangential_damping") = d.tangential_damping,
                           py::arg("restitution") = d.restitution, py::arg("margin") = d.margin);
}

/// remove(), removed() and name(), which every stage handle has (handle.hpp's StageHandle, a base
/// pybind11 does not see, so bound through the handle's own type).
template <class Handle>
void add_handle_methods(py::class_<Handle>& cls)
{
    cls.def(
           "remove", [](Handle& h) { return h.remove(); },
           "unregisters the stage; False if it already was. The handle then raises on use")
        .def("removed", [](const Handle& h) { return h.removed(); })
        .def(
            "name", [](const Handle& h) { return h.name(); }, "the stage's key in its registry");
}

/// The `radius` and `inside` properties the round shapes share (the box has only `inside`).
template <class C, class Class>
void add_inside_property(Class& cls)
{
    cls.def_property(
        "inside", [](const C& c) { return c.shape().inside; }, &C::set_inside, "True: keep particles inside");
}

template <class C, class Class>
void add_round_properties(Class& cls)
{
    cls.def_property(
        "radius", [](const C& c) { return c.shape().radius; }, &C::set_radius, "world units, >= 0");
    add_inside_property<C>(cls);
}

template <class T>
void bind_colliders(py::module_& m, const std::string& suffix)
{
    py::class_<Collider<T>>(m, ("Collider" + suffix).c_str(),
                            "A shape in a collider set. Made by ColliderSet.add_*; lives as long as its set.")
        .def_readwrite("enabled", &Collider<T>::enabled, "skipped entirely while False")
        .def_readwrite("vectorized", &Collider<T>::vectorized, "False forces the scalar twin (same bits)")
        .def_property(
            "friction", [](const Collider<T>& c) { return c.material().friction; }, &Collider<T>::set_friction,
            "Coulomb coefficient, >= 0")
        .def_property(
            "tangential_damping", [](const Collider<T>& c) { return c.material().tangential_damping; },
            &Collider<T>::set_tangential_damping, "in [0, 1]")
        .def_property(
            "restitution", [](const Collider<T>& c) { return c.material().restitution; }, &Collider<T>::set_restitution,
            "in [0, 1]")
        .def_property(
            "margin", [](const Collider<T>& c) { return c.material().margin; }, &Collider<T>::set_margin,
            "clearance kept from the surface, >= 0")
        .def("contacts", &Collider<T>::contacts, "particles found penetrating in the set's last pass");

    py::class_<PlaneCollider<T>, Collider<T>>(m, ("PlaneCollider" + suffix).c_str(), "An infinite plane.")
        .def_property(
            "normal", [](const PlaneCollider<T>& c) { return Vec3<T>(c.normal()); }, &PlaneCollider<T>::set_normal,
            "unit normal into the legal side (normalised when set)")
        .def_property("offset", &PlaneCollider<T>::offset, &PlaneCollider<T>::set_offset,
                      "signed distance of the plane from the origin along the normal");
    auto sphere = py::class_<SphereCollider<T>, Collider<T>>(m, ("SphereCollider" + suffix).c_str(),
                                                             "A ball, or a bowl (inside).")
                      .def_property(
                          "center", [](const SphereCollider<T>& c) { return c.shape().center; },
                          &SphereCollider<T>::move_to);
    add_round_properties<SphereCollider<T>>(sphere);
    auto capsule = py::class_<CapsuleCollider<T>, Collider<T>>(m, ("CapsuleCollider" + suffix).c_str(),
                                                               "A segment swept by a radius, or a tube (inside).")
                       .def("set_segment", &CapsuleCollider<T>::set_segment, py::arg("a"), py::arg("b"))
                       .def_property_readonly("a", [](const CapsuleCollider<T>& c) { return c.shape().a; })
                       .def_property_readonly("b", [](const CapsuleCollider<T>& c) { return c.shape().b; });
    add_round_properties<CapsuleCollider<T>>(capsule);
    auto box = py::class_<BoxCollider<T>, Collider<T>>(m, ("BoxCollider" + suffix).c_str(),
                                                       "An axis-aligned box: a room or a crate.")
                   .def("set_bounds", &BoxCollider<T>::set_bounds, py::arg("min"), py::arg("max"))
                   .def_property_readonly("min", [](const BoxCollider<T>& c) { return c.shape().min; })
                   .def_property_readonly("max", [](const BoxCollider<T>& c) { return c.shape().max; });
    add_inside_property<BoxCollider<T>>(box);
    py::class_<TriangleMeshCollider<T>, Collider<T>>(m, ("TriangleMeshCollider" + suffix).c_str(),
                                                     "A triangle mesh, static or animated with set_vertices.")
        .def(
            "set_vertices",
            [](TriangleMeshCollider<T>& c, const py::handle& v) { c.set_vertices(points_of<T>(v, "mesh vertices")); },
            py::arg("vertices"), "new positions of the same vertices, an (n, 3) array; refits the tree")
        .def_property("thickness", &TriangleMeshCollider<T>::thickness, &TriangleMeshCollider<T>::set_thickness)
        .def_property("detection", &TriangleMeshCollider<T>::detection, &TriangleMeshCollider<T>::set_detection)
        .def_property_readonly("two_sided", &TriangleMeshCollider<T>::two_sided)
        .def_property_readonly("vertices", [](const TriangleMeshCollider<T>& c) { return points_array(c.vertices()); })
        .def_property_readonly(
            "triangles", [](const TriangleMeshCollider<T>& c) { return index_rows(c.triangles()); },
            "the triangles kept after repair")
        .def_property_readonly("repairs", &TriangleMeshCollider<T>::repairs);

    const auto [friction, damping, restitution, margin] = material_args<T>();
    using Set = ColliderSet<T>;
    auto set =
        py::class_<Set>(m, ("ColliderSet" + suffix).c_str(),
                        "Colliders run as one position projection, in the order added. The add_* methods return the "
                        "collider, which lives as long as the set; disable one with `enabled = False`.")
            .def(
                "add_plane",
                [](Set& s, const Vec3<T>& normal, T offset, T f, T d, T r, T mg) -> Collider<T>& {
                    return s.add(PlaneCollider<T>({.normal = normal, .offset = offset}, material_of(f, d, r, mg)));
                },
                py::arg("normal") = typename PlaneCollider<T>::Shape{}.normal, py::arg("offset") = T(0), friction,
                damping, restitution, margin, py::return_value_policy::reference_internal,
                "A plane: particles stay on the side the normal points into.")
            .def(
                "add_sphere",
                [](Set& s, const Vec3<T>& center, T radius, bool inside, T f, T d, T r, T mg) -> Collider<T>& {
                    return s.add(SphereCollider<T>({.center = center, .radius = radius, .inside = inside},
                                                   material_of(f, d, r, mg)));
                },
                py::arg("center") = Vec3<T>::Zero().eval(), py::arg("radius") = T(1), py::arg("inside") = false,
                friction, damping, restitution, margin, py::return_value_policy::reference_internal)
            .def(
                "add_capsule",
                [](Set& s, const Vec3<T>& a, const Vec3<T>& b, T radius, bool inside, T f, T d, T r,
                   T mg) -> Collider<T>& {
                    return s.add(CapsuleCollider<T>({.a = a, .b = b, .radius = radius, .inside = inside},
                                                    material_of(f, d, r, mg)));
                },
                py::arg("a"), py::arg("b"), py::arg("radius") = T(0.5), py::arg("inside") = false, friction, damping,
                restitution, margin, py::return_value_policy::reference_internal)
            .def(
                "add_box",
                [](Set& s, const Vec3<T>& lo, const Vec3<T>& hi, bool inside, T f, T d, T r, T mg) -> Collider<T>& {
                    return s.add(BoxCollider<T>({.min = lo, .max = hi, .inside = inside}, material_of(f, d, r, mg)));
                },
                py::arg("min"), py::arg("max"), py::arg("inside") = true, friction, damping, restitution, margin,
                py::return_value_policy::reference_internal, "inside=True: a room; False: a crate")
            .def(
                "add_mesh",
                [](Set& s, const py::object& mesh, const py::object& vertices, const py::object& triangles, T thickness,
                   bool two_sided, MeshRepair repair, ContactDetection detection, T f, T d, T r, T mg) -> Collider<T>& {
                    TriangleMesh<T> source;
                    if (!mesh.is_none())
                        source = mesh_as<T>(py::cast<const Mesh&>(mesh));
                    else
                        source = {.vertices = points_of<T>(vertices, "mesh vertices"),
                                  .triangles = triangles_of(triangles, "mesh triangle")};
                    typename TriangleMeshCollider<T>::Shape shape{.vertices = std::move(source.vertices),
                                                                  .triangles = std::move(source.triangles),
                                                                  .thickness = thickness,
                                                                  .two_sided = two_sided,
                                                                  .repair = repair,
                                                                  .detection = detection};
                    return s.add(TriangleMeshCollider<T>(std::move(shape), material_of(f, d, r, mg)));
                },
                py::arg("mesh") = py::none(), py::arg("vertices") = py::none(), py::arg("triangles") = py::none(),
                py::arg("thickness") = typename TriangleMeshCollider<T>::Shape{}.thickness, py::arg("two_sided") = true,
                py::arg("repair") = MeshRepair::drop, py::arg("detection") = ContactDetection::per_call, friction,
                damping, restitution, margin, py::return_value_policy::reference_internal,
                "A triangle mesh: a TriangleMesh, or vertices (n, 3) and triangles (m, 3).")
            .def("__len__", &Set::size)
            .def(
                "__getitem__", [](const Set& s, std::size_t i) -> Collider<T>& { return s[i]; },
                py::return_value_policy::reference_internal)
            .def_property("relaxations", &Set::relaxations, &Set::set_relaxations)
            .def_property(
                "range", [](const Set& s) { return range_tuple(s.range()); },
                [](Set& s, const py::object& r) { s.set_range(range_of(r)); })
            .def("contacts", &Set::contacts, "contacts across every collider and relaxation of the last pass");
    add_handle_methods(set);
}

template <class T>
void bind_cloth(py::module_& m, const std::string& suffix)
{
    using C = Cloth<T>;
    // A vertex is an int (any cloth) or a (col, row) pair (a grid cloth only), and the C++ members
    // that take one expect its number, not its particle (a mesh cloth reordered for locality
    // numbers them apart).
    const auto vertex_at = [](const C& c, const py::handle& v) -> std::size_t {
        if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v))
        {
            const auto [col, row] = py::cast<std::pair<int, int>>(v);
            return c.vertex(c.index(col, row));
        }
        return py::cast<std::size_t>(v);
    };
    const auto at = [vertex_at](const C& c, const py::handle& v) { return c.index(vertex_at(c, v)); };
    py::class_<C>(m, ("Cloth" + suffix).c_str(),
                  "A cloth made by add_cloth (a grid) or add_mesh_cloth (any triangle mesh). A vertex is an int, the "
                  "mesh's vertex number (a grid's is row * width + col), or on a grid a (col, row) pair; grid "
                  "coordinates on a mesh cloth raise RuntimeError.")
        .def("index", at, py::arg("vertex"), "the particle index of a vertex")
        .def("vertex", &C::vertex, py::arg("particle"), "the vertex a particle of this cloth shows")
        .def(
            "position", [vertex_at](const C& c, const py::handle& v) { return c.position(vertex_at(c, v)); },
            py::arg("vertex"))
        .def(
            "pin", [vertex_at](C& c, const py::handle& v, bool pinned) { c.pin(vertex_at(c, v), pinned); },
            py::arg("vertex"), py::arg("pinned") = true)
        .def(
            "is_pinned", [vertex_at](const C& c, const py::handle& v) { return c.is_pinned(vertex_at(c, v)); },
            py::arg("vertex"))
        .def(
            "teleport",
            [vertex_at](C& c, const py::handle& v, const Vec3<T>& to, bool keep_velocity) {
                c.teleport(vertex_at(c, v), to, keep_velocity);
            },
            py::arg("vertex"), py::arg("to"), py::arg("keep_velocity") = false,
            "moves a vertex; it arrives at rest unless keep_velocity")
        .def("grab_nearest", &C::grab_nearest, py::arg("point"),
             "grabs the vertex nearest `point` with a PID controller; returns its particle")
        .def("move_grabbed", &C::move_grabbed, py::arg("point"))
        .def("release", &C::release)
        .def("grabbed", &C::grabbed, "the grabbed particle, or None")
        .def("base", &C::base, "first particle")
        .def("end", &C::end, "one past the last particle")
        .def("count", &C::count)
        .def("range", [](const C& c) { return range_tuple(c.range()); })
        .def("is_grid", &C::is_grid)
        .def("width", &C::width, "grid cloths only")
        .def("height", &C::height, "grid cloths only")
        .def("name", &C::name)
        .def(
            "triangles", [](const C& c) { return index_rows(c.triangles()); },
            "(m, 3) vertex indices; a grid has two per cell")
        .def("repairs", &C::repairs, "what add_mesh_cloth dropped from its mesh")
        .def("non_manifold_edges", &C::non_manifold_edges)
        .def_property("curvature_strength", &C::curvature_strength, &C::set_curvature_strength)
        .def(
            "render_mesh", [](const C& c) { return render_mesh(c); },
            "positions, normals, uvs and the drawn triangles, for write_obj or a renderer")
        .def("remove", &C::remove, "removes the cloth's particles and stages; False if it already was")
        // removed() is BlockHandle's, which pybind11 would bind against that unregistered base.
        .def("removed", [](const C& c) { return c.removed(); });

    using S = Strand<T>;
    py::class_<S>(m, ("Strand" + suffix).c_str(), "A rope made by add_strand; nodes are numbered 0 to count - 1.")
        .def("node", &S::node, py::arg("n"), "the particle index of node n")
        .def("position", &S::position, py::arg("n"))
        .def("pin", &S::pin, py::arg("n"), py::arg("pinned") = true)
        .def("is_pinned", &S::is_pinned, py::arg("n"))
        .def("teleport", &S::teleport, py::arg("n"), py::arg("to"), py::arg("keep_velocity") = false)
        .def("mean_kink_degrees", &S::mean_kink_degrees)
        .def("base", &S::base)
        .def("end", &S::end)
        .def("count", &S::count)
        .def("range", [](const S& s) { return range_tuple(s.range()); })
        .def("name", &S::name)
        .def("remove", &S::remove)
        .def("removed", [](const S& s) { return s.removed(); });

    using R = RenderMesh<T>;
    py::class_<R>(m, ("RenderMesh" + suffix).c_str(),
                  "A cloth as a renderer wants it: a triangle disappears once one of its edges is torn or cut.")
        .def_property_readonly("positions", [](const R& r) { return points_array(r.positions); })
        .def_property_readonly("normals", [](const R& r) { return points_array(r.normals); })
        .def_property_readonly("uvs", [](const R& r) { return uvs_array(r.uvs); })
        .def_property_readonly("triangles", [](const R& r) { return index_rows(r.triangles); })
        .def_property_readonly("particles", [](const R& r) {
            return py::array_t<std::uint32_t>(py::ssize_t(r.particles.size()), r.particles.data());
        });
    m.def(
        "write_obj", [](const std::filesystem::path& path, const R& mesh) { write_obj(path, mesh); }, py::arg("path"),
        py::arg("mesh"), "writes a render mesh as a Wavefront OBJ (positions, uvs, normals, faces)");
}

template <class T>
void bind_stages(py::module_& m, const std::string& suffix)
{
    using SC = SelfCollision<T>;
    auto self_collision = py::class_<SC>(m, ("SelfCollision" + suffix).c_str(), "Handle of add_self_collision.")
                              .def("contacts", &SC::contacts)
                              .def_property("thickness", &SC::thickness, &SC::set_thickness)
                              .def_property("friction", &SC::friction, &SC::set_friction)
                              .def_property("enabled", &SC::enabled, &SC::set_enabled)
                              .def("rebuilds", &SC::rebuilds, "candidate-list rebuilds since it was added")
                              .def("candidates", &SC::candidates);
    add_handle_methods(self_collision);

    using TH = Tethers<T>;
    auto tethers = py::class_<TH>(m, ("Tethers" + suffix).c_str(), "Handle of add_tethers.")
                       .def("tethered", &TH::tethered, "particles with an anchor")
                       .def("pulled", &TH::pulled, "particles pulled back in the last step")
                       .def("anchor_of", &TH::anchor_of, py::arg("particle"), py::arg("rank") = 0,
                            "the anchor of the particle's rank-th nearest island, None if it has none")
                       .def("rest_distance", &TH::rest_distance, py::arg("particle"), py::arg("rank") = 0)
                       .def("islands", &TH::islands, "islands of anchors (anchors joined by springs)")
                       .def("anchors", &TH::anchors)
                       .def("kind", &TH::kind)
                       .def_property("slack", &TH::slack, &TH::set_slack);
    add_handle_methods(tethers);

    using SL = StrainLimit<T>;
    auto strain_limit = py::class_<SL>(m, ("StrainLimit" + suffix).c_str(), "Handle of add_strain_limit.")
                            .def("limited", &SL::limited, "springs moved back to their bounds in the last step")
                            .def_property_readonly("max_stretch", &SL::max_stretch)
                            .def_property_readonly("max_compression", &SL::max_compression)
                            .def("set_bounds", &SL::set_bounds, py::arg("max_stretch"), py::arg("max_compression"))
                            .def_property("passes", &SL::passes, &SL::set_passes);
    add_handle_methods(strain_limit);

    using MC = MotionConstraints<T>;
    auto motion = py::class_<MC>(m, ("MotionConstraints" + suffix).c_str(),
                                 "Handle of add_motion_constraints: set the targets each frame from an animation.")
                      .def(
                          "set_targets",
                          [](MC& c, const py::handle& positions, const py::handle& normals) {
                              const auto p = points_of<T>(positions, "motion targets");
                              const auto n = points_of<T>(normals, "motion normals");
                              c.set_targets(p, n);
                          },
                          py::arg("positions"), py::arg("normals"), "(n, 3) target positions and their surface normals")
                      .def(
                          "set_max_distance",
                          [](MC& c, const py::handle& d) {
                              if (py::isinstance<py::float_>(d) || py::isinstance<py::int_>(d))
                                  return c.set_max_distance(py::cast<T>(d));
                              const Array<T> a = py::cast<Array<T>>(d);
                              c.set_max_distance(std::span<const T>(a.data(), std::size_t(a.size())));
                          },
                          py::arg("distance"), "one distance for every particle, or one per particle")
                      .def("max_distance", &MC::max_distance, py::arg("k"))
                      .def("moved", &MC::moved, "particles moved in the last step")
                      .def("size", &MC::size)
                      .def("begin", &MC::begin);
    add_handle_methods(motion);

    using W = Wind<T>;
    auto wind = py::class_<W>(m, ("Wind" + suffix).c_str(), "Handle of add_wind.")
                    .def_property(
                        "velocity", [](const W& w) { return w.options().velocity; }, &W::set_velocity)
                    .def("time", &W::time, "seconds since add_wind");
    add_handle_methods(wind);

    using TE = Tearing<T>;
    auto tearing = py::class_<TE>(m, ("Tearing" + suffix).c_str(), "Handle of add_tearing.")
                       .def("torn", &TE::torn, "tears since it was added; a symmetric pair counts once")
                       .def("torn_last_frame", &TE::torn_last_frame)
                       .def_property("max_strain", &TE::max_strain, &TE::set_max_strain)
                       .def_property("max_tears_per_frame", &TE::max_tears_per_frame, &TE::set_max_tears_per_frame);
    add_handle_methods(tearing);

    py::class_<Snapshot<T>>(m, ("Snapshot" + suffix).c_str(),
                            "A bit-exact copy of a simulation's state, constraints and stage states (restore()).")
        .def_property_readonly("steps", [](const Snapshot<T>& s) { return s.steps; });
}

/// A cloth's or strand's layout from None (the default layout: empty), a callable of one element
/// (`call(position, k)` calls it for element k in particle order) or a (count, 3) array; `what`
/// names it and `of` the elements in the message for a wrong count.
template <class T, class Call>
std::vector<Vec3<T>> layout_of(const py::handle& position, std::size_t count, const std::string& what,
                               const std::string& of, Call call)
{
    std::vector<Vec3<T>> layout;
    if (position.is_none())
        return layout;
    if (PyCallable_Check(position.ptr()))
        for (std::size_t k = 0; k < count; ++k)
            layout.push_back(py::cast<Vec3<T>>(call(position, k)));
    else
        layout = points_of<T>(position, what);
    if (layout.size() != count)
        throw std::invalid_argument("simdverlet: " + what + " hold " + std::to_string(layout.size()) + " points for " +
                                    of);
    return layout;
}

template <class T>
StepParams<T> step_params(T dt, T damping, const Vec3<T>& gravity, int iterations, int substeps)
{
    return {.dt = dt, .damping = damping, .gravity = gravity, .iterations = iterations, .substeps = substeps};
}

/// Marks a simulation as stepping while step() runs without the GIL, so a second Python thread
/// stepping it at the same time gets an error instead of a data race. Made and destroyed with the
/// GIL held, which guards the set.
class SteppingGuard
{
  public:
    explicit SteppingGuard(const void* sim) : m_sim(sim)
    {
        if (!stepping().insert(sim).second)
            throw std::runtime_error("simdverlet: this simulation is already stepping in another thread; step a "
                                     "simulation from one thread at a time");
    }
    ~SteppingGuard() { stepping().erase(m_sim); }
    SteppingGuard(const SteppingGuard&) = delete;
    SteppingGuard& operator=(const SteppingGuard&) = delete;

  private:
    static std::unordered_set<const void*>& stepping()
    {
        static std::unordered_set<const void*> set;
        return set;
    }
    const void* m_sim;
};

/// Position, previous position and inverse-mass views: the documentation every one of them carries.
inline constexpr const char* kViewNote =
    "A zero-copy NumPy view of the simulation's own array (writing to it moves the particles). Valid until "
    "the next step() or anything that adds or removes particles: a step swaps the position and "
    "previous-position arrays, and adding particles may move them. Fetch it again after each.";

template <class T>
void bind_simulation(py::module_& m, const std::string& suffix)
{
    using Sim = Simulation<T>;
    const StepParams<T> step_defaults{};
    const std::string scalar = sizeof(T) == 4 ? "float32" : "float64";

    py::class_<Sim> cls(m, ("Simulation" + suffix).c_str(),
                        ("A " + scalar +
                         " simulation: particles in structure-of-arrays form, springs in constraint layers, and the "
                         "stages registered on it (colliders, self-collision, tethers, ...). step() advances it. "
                         "Errors raise ValueError (a bad value), IndexError (an index out of range) or "
                         "RuntimeError (a handle used after removal, a grid call on a mesh cloth), with the "
                         "library's message, and leave the simulation as it was.")
                            .c_str());
    cls.def(py::init<Masses>(), py::arg("masses") = Masses::per_particle,
            "Masses.per_particle (default) keeps an inverse mass per particle; Masses.unit makes every one 1")
        .def("size", &Sim::size, "number of particles")
        .def("__len__", &Sim::size)
        .def("add_particle", &Sim::add_particle, py::arg("position"), py::arg("inv_mass") = T(1),
             "appends a particle at rest and returns its index; inv_mass 0 pins it")
        .def(
            "connect",
            [](Sim& s, std::size_t i, std::size_t j, T rest, T stiffness) {
                static_cast<void>(s.connect(i, j, rest, stiffness));
            },
            py::arg("i"), py::arg("j"), py::arg("rest"), py::arg("stiffness"),
            "a symmetric spring between particles i and j")
        .def(
            "step",
            [](Sim& s, T dt, T damping, const Vec3<T>& gravity, int iterations, int substeps) {
                const auto params = step_params(dt, damping, gravity, iterations, substeps);
                const SteppingGuard stepping(&s);
                py::gil_scoped_release unlocked;
                s.step(params);
            },
            py::arg("dt") = step_defaults.dt, py::arg("damping") = step_defaults.damping,
            py::arg("gravity") = step_defaults.gravity, py::arg("iterations") = step_defaults.iterations,
            py::arg("substeps") = step_defaults.substeps,
            "Advances by dt seconds in `substeps` equal steps. The sheet feels stiffness x iterations; +y is down "
            "in the library's pictures, so gravity is usually (0, 9.81, 0). Releases the GIL; a second thread "
            "stepping the same simulation meanwhile gets a RuntimeError.")
        .def("diverged", &Sim::diverged, "True from the first step that left a coordinate non-finite")
        .def("step_count", &Sim::step_count)
        .def_property("vectorized", &Sim::vectorized, &Sim::set_vectorized,
                      "xsimd kernels or their scalar twins: same bits")
        .def_property("fused", &Sim::fused, &Sim::set_fused)
        .def_property("grid_path", &Sim::grid_path, &Sim::set_grid_path)
        .def("queue_remove", &Sim::queue_remove, py::arg("particle"),
             "removes a particle at the start of the next step")
        .def("pending_removals", &Sim::pending_removals);

    // The C++ side of bench/python_overhead.py: `frames` calls of step() in one C++ loop, the
    // program a C++ user would write, to set against the same calls made from Python.
    m.def(
        "_step_in_cpp",
        [](Sim& s, int frames, T dt, T damping, const Vec3<T>& gravity, int iterations, int substeps) {
            const auto params = step_params(dt, damping, gravity, iterations, substeps);
            const SteppingGuard stepping(&s);
            py::gil_scoped_release unlocked;
            for (int f = 0; f < frames; ++f)
                s.step(params);
        },
        py::arg("sim"), py::arg("frames"), py::arg("dt") = step_defaults.dt, py::arg("damping") = step_defaults.damping,
        py::arg("gravity") = step_defaults.gravity, py::arg("iterations") = step_defaults.iterations,
        py::arg("substeps") = step_defaults.substeps);

    // ---- particles: views and copies ----
    const auto view = [](std::span<T> (State3<T>::*array)()) {
        return [array](const py::object& self) {
            auto& s = py::cast<Sim&>(self);
            return view_of((s.state().*array)(), self, true);
        };
    };
    cls.def_property_readonly("x", view(&State3<T>::x), kViewNote)
        .def_property_readonly("y", view(&State3<T>::y), kViewNote)
        .def_property_readonly("z", view(&State3<T>::z), kViewNote)
        .def_property_readonly("px", view(&State3<T>::px), kViewNote)
        .def_property_readonly("py", view(&State3<T>::py), kViewNote)
        .def_property_readonly("pz", view(&State3<T>::pz), kViewNote)
        .def_property_readonly(
            "inverse_mass",
            [](const py::object& self) {
                const auto& s = py::cast<const Sim&>(self);
                return view_of(s.state().inv_mass(), self, false);
            },
            "A read-only zero-copy view of the inverse masses (set_inverse_mass changes one, checked). Valid "
            "until particles are added or removed.")
        .def(
            "positions",
            [](const Sim& s) {
                const auto& st = s.state();
                py::array_t<T> a({py::ssize_t(st.size()), py::ssize_t(3)});
                auto w = a.template mutable_unchecked<2>();
                for (std::size_t i = 0; i < st.size(); ++i)
                {
                    w(py::ssize_t(i), 0) = st.x()[i];
                    w(py::ssize_t(i), 1) = st.y()[i];
                    w(py::ssize_t(i), 2) = st.z()[i];
                }
                return a;
            },
            "an (n, 3) copy of the positions")
        .def(
            "position", [](const Sim& s, std::size_t i) { return s.state().position(i); }, py::arg("i"))
        .def(
            "velocity", [](const Sim& s, std::size_t i) { return s.state().velocity(i); }, py::arg("i"),
            "position minus previous position: displacement per step")
        .def(
            "set_position",
            [](Sim& s, std::size_t i, const Vec3<T>& p, bool keep_velocity) {
                s.state().set_position(i, p, keep_velocity);
            },
            py::arg("i"), py::arg("position"), py::arg("keep_velocity") = false)
        .def(
            "inverse_mass_of", [](const Sim& s, std::size_t i) { return s.state().inverse_mass(i); }, py::arg("i"))
        .def(
            "set_inverse_mass", [](Sim& s, std::size_t i, T w) { s.state().set_inverse_mass(i, w); }, py::arg("i"),
            py::arg("inv_mass"), "0 pins the particle; needs Masses.per_particle")
        .def(
            "peak_strain", [](const Sim& s, const py::object& r) { return peak_strain(s, range_of(r)); },
            py::arg("range") = py::none(), "worst |length - rest| / rest over the live springs in range");

    // ---- cloths and strands ----
    const ClothOptions<T> cloth_defaults{};
    cls.def(
        "add_cloth",
        [](Sim& s, int width, int height, std::optional<ClothMaterial<T>> material, T spacing, T stiffness, T mass,
           std::optional<T> curvature_strength, const py::object& pinned, const py::object& position,
           bool rest_length_from_layout, std::string name) {
            const auto pins = grid_mask(pinned, width, height);
            const std::size_t w = std::size_t(std::max(width, 0));
            const auto layout = layout_of<T>(position, w * std::size_t(std::max(height, 0)), "cloth positions",
                                             "a " + std::to_string(width) + " x " + std::to_string(height) + " grid",
                                             [w](const py::handle& f, std::size_t k) { return f(k % w, k / w); });
            ClothOptions<T> o{.width = width,
                              .height = height,
                              .material = material,
                              .spacing = spacing,
                              .stiffness = stiffness,
                              .mass = mass,
                              .curvature_strength = curvature_strength,
                              .rest_length_from_layout = rest_length_from_layout,
                              .name = std::move(name)};
            if (!pinned.is_none())
                o.pinned = [pins, w](int c, int r) { return bool(pins[std::size_t(r) * w + std::size_t(c)]); };
            if (!layout.empty())
                o.position = [layout, w](int c, int r) { return layout[std::size_t(r) * w + std::size_t(c)]; };
            return add_cloth(s, std::move(o));
        },
        py::arg("width") = cloth_defaults.width, py::arg("height") = cloth_defaults.height,
        py::arg("material") = py::none(), py::arg("spacing") = cloth_defaults.spacing,
        py::arg("stiffness") = cloth_defaults.stiffness, py::arg("mass") = cloth_defaults.mass,
        py::arg("curvature_strength") = cloth_defaults.curvature_strength, py::arg("pinned") = py::none(),
        py::arg("position") = py::none(), py::arg("rest_length_from_layout") = cloth_defaults.rest_length_from_layout,
        py::arg("name") = "",
        "A width x height grid cloth. pinned: a callable (col, row) -> bool or an iterable of (col, row). "
        "position: a callable (col, row) -> (x, y, z) or a (width * height, 3) array in row order; default "
        "(col, row, 0) x spacing, hanging in the x-y plane with +y down. curvature_strength None: stiffness / 3. "
        "material: a ClothMaterial, held by the implicit cloth solve (then leave stiffness, mass and "
        "curvature_strength at their defaults).");

    const MeshClothOptions<T> mesh_defaults{};
    cls.def(
        "add_mesh_cloth",
        [](Sim& s, const py::object& mesh, const py::object& vertices, const py::object& triangles,
           std::optional<ClothMaterial<T>> material, T stiffness, std::optional<T> bend_stiffness, T mass_per_area,
           const py::object& pinned, MeshRepair repair, bool reorder, std::string name) {
            TriangleMesh<T> source;
            if (!mesh.is_none())
                source = mesh_as<T>(py::cast<const Mesh&>(mesh));
            else
                source = {.vertices = points_of<T>(vertices, "mesh vertices"),
                          .triangles = triangles_of(triangles, "mesh triangle")};
            // The pinned callable sees the sanitized mesh's numbering; an iterable is checked
            // against it by the library's own vertex count when the mask is read.
            MeshClothOptions<T> o{.mesh = std::move(source),
                                  .material = material,
                                  .stiffness = stiffness,
                                  .bend_stiffness = bend_stiffness,
                                  .mass_per_area = mass_per_area,
                                  .repair = repair,
                                  .reorder = reorder,
                                  .name = std::move(name)};
            if (!pinned.is_none())
            {
                auto check = o.mesh;
                static_cast<void>(sanitize_mesh(check, repair));
                const auto pins = vertex_mask(pinned, check.vertices.size());
                o.pinned = [pins](std::size_t v) { return v < pins.size() && pins[v]; };
            }
            return add_mesh_cloth(s, std::move(o));
        },
        py::arg("mesh") = py::none(), py::arg("vertices") = py::none(), py::arg("triangles") = py::none(),
        py::arg("material") = py::none(), py::arg("stiffness") = mesh_defaults.stiffness,
        py::arg("bend_stiffness") = mesh_defaults.bend_stiffness,
        py::arg("mass_per_area") = mesh_defaults.mass_per_area, py::arg("pinned") = py::none(),
        py::arg("repair") = mesh_defaults.repair, py::arg("reorder") = mesh_defaults.reorder, py::arg("name") = "",
        "A cloth from any triangle mesh: a TriangleMesh (load_obj_mesh), or vertices (n, 3) and triangles (m, 3). "
        "One particle per vertex. material: a ClothMaterial, held by the implicit cloth solve (then leave "
        "stiffness, bend_stiffness and mass_per_area alone); with one of those three and no material, a stretch "
        "spring per edge and a bend spring across each shared edge; with neither, the default ClothMaterial. pinned: a "
        "callable of the vertex or an iterable of vertices (numbered "
        "after repair).");

    const StrandOptions<T> strand_defaults{};
    cls.def(
        "add_strand",
        [](Sim& s, int count, T spacing, T stiffness, T mass, T bend_stiffness, const py::object& pinned,
           const py::object& position, bool rest_length_from_layout, std::string name) {
            const auto pins = vertex_mask(pinned, std::size_t(std::max(count, 0)));
            const auto layout = layout_of<T>(position, std::size_t(std::max(count, 0)), "strand positions",
                                             std::to_string(count) + " nodes",
                                             [](const py::handle& f, std::size_t n) { return f(n); });
            StrandOptions<T> o{.count = count,
                               .spacing = spacing,
                               .stiffness = stiffness,
                               .mass = mass,
                               .bend_stiffness = bend_stiffness,
                               .rest_length_from_layout = rest_length_from_layout,
                               .name = std::move(name)};
            if (!pinned.is_none())
                o.pinned = [pins](int n) { return bool(pins[std::size_t(n)]); };
            if (!layout.empty())
                o.position = [layout](int n) { return layout[std::size_t(n)]; };
            return add_strand(s, std::move(o));
        },
        py::arg("count") = strand_defaults.count, py::arg("spacing") = strand_defaults.spacing,
        py::arg("stiffness") = strand_defaults.stiffness, py::arg("mass") = strand_defaults.mass,
        py::arg("bend_stiffness") = strand_defaults.bend_stiffness, py::arg("pinned") = py::none(),
        py::arg("position") = py::none(), py::arg("rest_length_from_layout") = strand_defaults.rest_length_from_layout,
        py::arg("name") = "",
        "A rope of `count` nodes. pinned: a callable of the node or an iterable of nodes. position: a callable "
        "of the node -> (x, y, z) or a (count, 3) array; default along +x.");

    // ---- stages ----
    const ColliderSetOptions set_defaults{};
    cls.def(
        "add_colliders",
        [](Sim& s, std::string name, const py::object& range, int relaxations) {
            return add_colliders<T>(s, {.name = std::move(name), .range = range_of(range), .relaxations = relaxations});
        },
        py::arg("name") = set_defaults.name, py::arg("range") = py::none(),
        py::arg("relaxations") = set_defaults.relaxations,
        "An empty collider set (add shapes with its add_* methods). range: None (every particle), (begin, end), "
        "or a cloth or strand.");

    const SelfCollisionOptions<T> self_defaults{};
    cls.def(
        "add_self_collision",
        [](Sim& s, T thickness, const py::object& range, std::vector<Cloth<T>> cloths, T friction, int passes,
           std::string name) {
            return add_self_collision(s, SelfCollisionOptions<T>{.thickness = thickness,
                                                                 .range = range_of(range),
                                                                 .cloths = std::move(cloths),
                                                                 .friction = friction,
                                                                 .passes = passes,
                                                                 .name = std::move(name)});
        },
        py::arg("thickness") = self_defaults.thickness, py::arg("range") = py::none(),
        py::arg("cloths") = std::vector<Cloth<T>>{}, py::arg("friction") = self_defaults.friction,
        py::arg("passes") = self_defaults.passes, py::arg("name") = self_defaults.name,
        "Keeps the particles in range at least `thickness` apart, and off the triangles of `cloths`.");

    const TethersOptions<T> tether_defaults{};
    cls.def(
        "add_tethers",
        [](Sim& s, const Cloth<T>& cloth, std::vector<std::size_t> anchors, TetherKind kind, T slack, int islands,
           std::string name) {
            return add_tethers(s, TethersOptions<T>{.cloth = cloth,
                                                    .anchors = std::move(anchors),
                                                    .kind = kind,
                                                    .slack = slack,
                                                    .islands = islands,
                                                    .name = std::move(name)});
        },
        py::arg("cloth"), py::arg("anchors") = std::vector<std::size_t>{}, py::arg("kind") = tether_defaults.kind,
        py::arg("slack") = tether_defaults.slack, py::arg("islands") = tether_defaults.islands,
        py::arg("name") = tether_defaults.name,
        "Keeps each particle within slack x its rest distance of the nearest anchor of each of its `islands` "
        "nearest islands of anchors (anchors joined by springs; default: the pinned particles).");

    const StrainLimitOptions<T> limit_defaults{};
    cls.def(
        "add_strain_limit",
        [](Sim& s, const std::optional<Cloth<T>>& cloth, std::optional<T> max_stretch, std::optional<T> max_compression,
           int passes, const py::object& range, std::string name) {
            return add_strain_limit(s, StrainLimitOptions<T>{.cloth = cloth.value_or(Cloth<T>{}),
                                                             .max_stretch = max_stretch,
                                                             .max_compression = max_compression,
                                                             .passes = passes,
                                                             .range = range_of(range),
                                                             .name = std::move(name)});
        },
        py::arg("cloth") = py::none(), py::arg("max_stretch") = py::none(), py::arg("max_compression") = py::none(),
        py::arg("passes") = limit_defaults.passes, py::arg("range") = py::none(), py::arg("name") = limit_defaults.name,
        "Moves both ends of every spring strained past its bounds back to them, whichever way the cloth hangs. "
        "An unset bound follows the one given; both unset are 0.1.");

    const MotionConstraintsOptions<T> motion_defaults{};
    cls.def(
        "add_motion_constraints",
        [](Sim& s, const py::object& range, T max_distance, T backstop_radius, T backstop_distance, std::string name) {
            return add_motion_constraints(s, MotionConstraintsOptions<T>{.range = range_of(range),
                                                                         .max_distance = max_distance,
                                                                         .backstop_radius = backstop_radius,
                                                                         .backstop_distance = backstop_distance,
                                                                         .name = std::move(name)});
        },
        py::arg("range") = py::none(), py::arg("max_distance") = motion_defaults.max_distance,
        py::arg("backstop_radius") = motion_defaults.backstop_radius,
        py::arg("backstop_distance") = motion_defaults.backstop_distance, py::arg("name") = motion_defaults.name,
        "Keeps each particle in range within max_distance of a target set each frame (set_targets).");

    const WindOptions<T> wind_defaults{};
    cls.def(
        "add_wind",
        [](Sim& s, const Vec3<T>& velocity, T drag, const py::object& range, std::vector<Cloth<T>> cloths, T pressure,
           T skin_friction, std::string name) {
            return add_wind(s, WindOptions<T>{.velocity = velocity,
                                              .drag = drag,
                                              .range = range.is_none() ? ParticleRange{0, 0} : range_of(range),
                                              .cloths = std::move(cloths),
                                              .pressure = pressure,
                                              .skin_friction = skin_friction,
                                              .name = std::move(name)});
        },
        py::arg("velocity") = wind_defaults.velocity, py::arg("drag") = wind_defaults.drag,
        py::arg("range") = py::none(), py::arg("cloths") = std::vector<Cloth<T>>{},
        py::arg("pressure") = wind_defaults.pressure, py::arg("skin_friction") = wind_defaults.skin_friction,
        py::arg("name") = wind_defaults.name,
        "A steady wind: per-triangle pressure and skin friction on `cloths`, linear drag on the particles in "
        "`range` (None: none).");

    const TearingOptions<T> tear_defaults{};
    cls.def(
        "add_tearing",
        [](Sim& s, T max_strain, const py::object& range, std::optional<std::size_t> max_tears_per_frame,
           std::string name) {
            TearingOptions<T> o{.max_strain = max_strain, .range = range_of(range), .name = std::move(name)};
            if (max_tears_per_frame)
                o.max_tears_per_frame = *max_tears_per_frame;
            return add_tearing(s, std::move(o));
        },
        py::arg("max_strain") = tear_defaults.max_strain, py::arg("range") = py::none(),
        py::arg("max_tears_per_frame") = py::none(), py::arg("name") = tear_defaults.name,
        "Tears a spring when |length - rest| / rest exceeds max_strain, the most strained first.");
    cls.def(
           "cut", [](Sim& s, const Vec3<T>& a, const Vec3<T>& b, ViewPlane view) { return cut(s, a, b, view); },
           py::arg("a"), py::arg("b"), py::arg("view") = ViewPlane::xy,
           "cuts every spring whose segment, seen in `view`, crosses the stroke a-b; returns how many")
        .def(
            "cut_from_eye",
            [](Sim& s, const Vec3<T>& eye, const Vec3<T>& a, const Vec3<T>& b) { return cut_from_eye(s, eye, a, b); },
            py::arg("eye"), py::arg("a"), py::arg("b"),
            "cuts every spring crossing the rays from `eye` through the stroke a-b");

    // ---- snapshots ----
    cls.def("snapshot", [](const Sim& s) { return snapshot(s); })
        .def(
            "restore", [](Sim& s, const Snapshot<T>& snap) { restore(s, snap); }, py::arg("snapshot"))
        .def(
            "save",
            [](const Sim& s, const std::optional<std::filesystem::path>& path) -> py::object {
                if (!path)
                {
                    std::ostringstream out(std::ios::binary);
                    save(s, out);
                    return py::bytes(out.str());
                }
                std::ofstream out(*path, std::ios::binary);
                if (!out)
                    throw std::runtime_error("simdverlet: cannot open '" + path->string() + "' for writing");
                save(s, out);
                out.close();
                if (!out)
                    throw std::runtime_error("simdverlet: writing '" + path->string() + "' failed");
                return py::none();
            },
            py::arg("path") = py::none(), "the versioned binary snapshot: as bytes, or written to `path`")
        .def(
            "load",
            [](Sim& s, const py::object& source) {
                if (py::isinstance<py::bytes>(source))
                {
                    std::istringstream in(std::string(py::cast<py::bytes>(source)), std::ios::binary);
                    return load(s, in);
                }
                const auto path = py::cast<std::filesystem::path>(source);
                std::ifstream in(path, std::ios::binary);
                if (!in)
                    throw std::runtime_error("simdverlet: cannot open '" + path.string() + "' for reading");
                load(s, in);
            },
            py::arg("source"),
            "restores from bytes or a file written by save(); a corrupt stream raises and changes nothing");

    // ---- threads ----
    cls.def(
        "set_executor",
        [](Sim& s, std::shared_ptr<Executor> executor, std::size_t grain) {
            s.set_executor(std::move(executor), grain);
        },
        py::arg("executor"), py::arg("grain") = std::size_t(8192),
        "spreads the particle sweeps over an executor (None: serially); the bits do not change");
}

/// ClothMaterial with its keyword names and presets, as in C++.
template <class T>
void bind_material(py::module_& m, const std::string& suffix)
{
    using M = ClothMaterial<T>;
    const M defaults{};
    py::class_<M>(
        m, ("ClothMaterial" + suffix).c_str(),
        "A fabric in SI units: density kg/m^2, stretch N/m, bending N*m (flexural rigidity), damping 1/s. "
        "Given to add_cloth(material=...) or add_mesh_cloth(material=...), it decides the masses, stretch and "
        "bending.")
        .def(py::init([](T density, T stretch, T bending, T damping) {
                 return M{.density = density, .stretch = stretch, .bending = bending, .damping = damping};
             }),
             py::arg("density") = defaults.density, py::arg("stretch") = defaults.stretch,
             py::arg("bending") = defaults.bending, py::arg("damping") = defaults.damping)
        .def_readwrite("density", &M::density)
        .def_readwrite("stretch", &M::stretch)
        .def_readwrite("bending", &M::bending)
        .def_readwrite("damping", &M::damping)
        .def_static("silk", &M::silk)
        .def_static("cotton", &M::cotton)
        .def_static("denim", &M::denim)
        .def_static("jersey", &M::jersey)
        .def_static("leather", &M::leather)
        .def("__repr__", [suffix](const M& x) {
            return "ClothMaterial" + suffix + "(density=" + detail::number(x.density) +
                   ", stretch=" + detail::number(x.stretch) + ", bending=" + detail::number(x.bending) +
                   ", damping=" + detail::number(x.damping) + ")";
        });
}

/// Everything for one scalar type, with `suffix` on every class name ("" or "64").
template <class T>
void bind_scalar(py::module_& m, const std::string& suffix)
{
    bind_material<T>(m, suffix);
    bind_colliders<T>(m, suffix);
    bind_cloth<T>(m, suffix);
    bind_stages<T>(m, suffix);
    bind_simulation<T>(m, suffix);
}

} // namespace simdverlet::python
