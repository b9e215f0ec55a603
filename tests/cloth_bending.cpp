// Bending rigidity as a material (cloth_bending.hpp): the energy of a sheet rolled onto a cylinder
// against the plate's G / (2 R^2), on regular and irregular triangulations and in any direction;
// invariance under rigid motion; a curved rest shape kept; the presets; and the heavy elastica that
// Peirce's cantilever is measured against (bench/garment.cpp, BM_cantilever).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <vector>

#include <simdverlet/simdverlet.hpp>

#include "cantilever.hpp"
#include "catch.hpp"
#include "meshes.hpp"

namespace
{
using namespace simdverlet;

/// The stencils of a side x side metre sheet of `cells` squares a side in the x-y plane.
detail::BendStencils sheet_stencils(const TriangleMesh<double>& mesh, double rigidity)
{
    std::vector<std::uint32_t> identity(mesh.vertices.size());
    std::iota(identity.begin(), identity.end(), 0u);
    return detail::bend_stencils(mesh, identity, rigidity);
}

/// The sheet rolled onto a cylinder of radius r whose axis lies in the sheet's plane at `angle` to
/// its x axis: lengths and areas kept, curvature 1 / r across the axis.
std::vector<Eigen::Vector3d> rolled(const TriangleMesh<double>& mesh, double r, double angle)
{
    const Eigen::Vector2d across(std::cos(angle), std::sin(angle)), axis(-std::sin(angle), std::cos(angle));
    std::vector<Eigen::Vector3d> out;
    for (const auto& v : mesh.vertices)
    {
        const Eigen::Vector2d p(v.x() - 0.5, v.y() - 0.5);
        const double u = p.dot(across), w = p.dot(axis);
        const Eigen::Vector2d in_plane = r * std::sin(u / r) * across + w * axis;
        out.emplace_back(in_plane.x(), in_plane.y(), r * (1 - std::cos(u / r)));
    }
    return out;
}

} // namespace

TEST_CASE("a sheet rolled onto a cylinder stores G / 2R^2 per unit area on any triangulation and in any direction")
{
    // A plate of rigidity G curved to radius R stores G / (2 R^2) per unit area; the sheet is one
    // square metre. Regular triangulations hold it to 1 %, irregular ones (interior vertices moved
    // up to 0.3 of a cell) to 8 %; turning the cylinder's axis changes it by no more than that.
    const double rigidity = 1e-4, radius = 0.5, expected = rigidity / (2 * radius * radius);
    for (const bool irregular : {false, true})
        for (const int cells : {20, 40})
            for (const double angle : {0.0, std::numbers::pi / 4, std::numbers::pi / 2, 1.0})
            {
                CAPTURE(irregular, cells, angle);
                const auto mesh = testing::sheet_mesh<double>(cells, 1.0, irregular);
                const auto stencils = sheet_stencils(mesh, rigidity);
                const double energy = detail::bending_energy(stencils, rolled(mesh, radius, angle));
                CHECK(energy == Approx(expected).epsilon(irregular ? 0.08 : 0.01));
            }
}

TEST_CASE(
    "a sheet bent into a saddle stores G / R^2 per unit area, as a plate does, not the zero of its mean curvature")
{
    // z = (x^2 - y^2) / (2 R): principal curvatures 1 / R and -1 / R, mean curvature 0. A plate
    // with Poisson's ratio 0 stores G / 2 (k1^2 + k2^2) = G / R^2 per unit area there; an energy of
    // the mean curvature alone would store none, and a sheet that gives way in compression could
    // then curl across itself to bend along itself for free. Both surfaces are height fields
    // over the same square metre, gentle enough (R = 5 m) that their curvatures stay within 1 %
    // of 1 / R: the saddle stores twice what the cylinder z = x^2 / (2 R) does, within 2 %.
    const double rigidity = 1e-4, radius = 5.0;
    for (const bool irregular : {false, true})
    {
        CAPTURE(irregular);
        const auto mesh = testing::sheet_mesh<double>(40, 1.0, irregular);
        std::vector<Eigen::Vector3d> saddle, cylinder;
        for (const auto& v : mesh.vertices)
        {
            const double x = v.x() - 0.5, y = v.y() - 0.5;
            saddle.emplace_back(x, y, (x * x - y * y) / (2 * radius));
            cylinder.emplace_back(x, y, x * x / (2 * radius));
        }
        const auto stencils = sheet_stencils(mesh, rigidity);
        const double ratio = detail::bending_energy(stencils, saddle) / detail::bending_energy(stencils, cylinder);
        CHECK(ratio == Approx(2.0).epsilon(0.02));
    }
}

TEST_CASE("the bending energy is zero for a flat sheet and unchanged by rigid motion")
{
    const auto mesh = testing::sheet_mesh<double>(16, 1.0, true);
    const auto stencils = sheet_stencils(mesh, 1e-4);
    std::vector<Eigen::Vector3d> flat;
    for (const auto& v : mesh.vertices)
        flat.push_back(v);
    CHECK(detail::bending_energy(stencils, flat) < 1e-30);
    const auto bent = rolled(mesh, 0.3, 0.4);
    const Eigen::Matrix3d turn = Eigen::AngleAxisd(1.1, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
    std::vector<Eigen::Vector3d> moved;
    for (const auto& p : bent)
        moved.push_back(turn * p + Eigen::Vector3d(4, -5, 6));
    const double energy = detail::bending_energy(stencils, bent);
    CHECK(energy > 0);
    CHECK(detail::bending_energy(stencils, moved) == Approx(energy).epsilon(1e-9));
}

TEST_CASE("a curved rest shape is the bending's zero: a bent sheet left alone stays bent")
{
    // A quarter cylinder of 5 cm radius, no gravity: its rest shape is in balance, so it stays
    // where it was made, and the energy there is zero while a flattened copy's is not.
    const double radius = 0.05;
    auto mesh = testing::grid_mesh<double>(16, 16, std::numbers::pi / 2 * radius / 16, true);
    std::vector<Eigen::Vector3d> flat;
    for (auto& v : mesh.vertices)
    {
        flat.push_back(v);
        const double angle = v.x() / radius;
        v = Vec3<double>(radius * std::sin(angle), radius * (1 - std::cos(angle)), v.y());
    }
    std::vector<Eigen::Vector3d> rest(mesh.vertices.begin(), mesh.vertices.end());
    const auto stencils = sheet_stencils(mesh, 1e-4);
    CHECK(detail::bending_energy(stencils, rest) < 1e-30);
    CHECK(detail::bending_energy(stencils, flat) > 1e-6);

    Simulation<double> sim;
    const auto sheet = add_mesh_cloth(sim, {.mesh = mesh, .material = ClothMaterial<double>{.bending = 1e-4}});
    for (int frame = 0; frame < 60; ++frame)
        sim.step({.dt = 1.0 / 60, .damping = 1.0, .gravity = {0, 0, 0}, .substeps = 2});
    double worst = 0;
    for (std::size_t v = 0; v < sheet.count(); ++v)
        worst = std::max(worst, (sheet.position(v) - mesh.vertices[v]).norm());
    CHECK(worst < 1e-9);
}

TEST_CASE("the heavy elastica gives Peirce's cantilever angles")
{
    // Peirce's 41.5 degrees at twice the bending length, and the angles at 1.5 and 2.5 of it.
    CHECK(testing::elastica_chord_degrees(1.5) == Approx(22.2).margin(0.05));
    CHECK(testing::elastica_chord_degrees(2.0) == Approx(41.5).margin(0.05));
    CHECK(testing::elastica_chord_degrees(2.5) == Approx(56.9).margin(0.05));
}

TEST_CASE("the fabric presets are valid materials whose bending rises silk, cotton, denim, leather")
{
    // Each preset passes the material's checks, and its bending length c = (G / (density g))^(1/3)
    // lies in the 1-6 cm that textile bending tests report for garment fabrics.
    const std::vector<ClothMaterial<double>> fabrics = {ClothMaterial<double>::silk(), ClothMaterial<double>::cotton(),
                                                        ClothMaterial<double>::denim(),
                                                        ClothMaterial<double>::leather()};
    const auto accepted = [](const ClothMaterial<double>& material) {
        Simulation<double> sim;
        return add_cloth(sim, {.width = 3, .height = 3, .material = material}).count() == 9;
    };
    for (std::size_t k = 0; k < fabrics.size(); ++k)
    {
        CHECK(accepted(fabrics[k]));
        const double length = std::cbrt(fabrics[k].bending / (fabrics[k].density * 9.81));
        CHECK(length > 0.01);
        CHECK(length < 0.06);
        if (k > 0)
            CHECK(fabrics[k].bending > fabrics[k - 1].bending);
    }
    const auto jersey = ClothMaterial<double>::jersey();
    CHECK(accepted(jersey));
    CHECK(jersey.stretch < ClothMaterial<double>::cotton().stretch / 5); // a knit gives
}
