// Contact planes: how a stage that keeps particles out of a shape (a collider set, motion
// constraints) describes itself to an implicit solve, so the solve can hold its contacts inside its
// iterations instead of meeting them only after it. A plane is one particle's one-sided linear
// constraint for one step; the stage still projects after the solve and has the last word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// One particle's contact for one step: normal . x >= offset is legal.
struct ContactPlane
{
    std::size_t particle = 0;
    Vec3<double> normal = Vec3<double>::Zero(); ///< unit, into the legal side
    double offset = 0.0;                        ///< metres along the normal, the clearance included
    double friction = 0.0;                      ///< Coulomb coefficient of the surface, >= 0
    /// How far the surface under the particle moves in this step, metres: static friction holds a
    /// particle to the surface, so one stuck to a moving body moves with it. A surface moved
    /// between calls moves evenly over the call's substeps here, as a body does over the frame.
    Vec3<double> motion = Vec3<double>::Zero();
};

/// What a plane source is asked: the planes of the particles [begin, end) that lie within
/// reach_of(i) of being held, `at` (from begin) where the solve starts them and `from` (from begin)
/// where they were at the step's start, which decides the side of a two-sided surface.
struct PlaneQuery
{
    std::size_t begin = 0, end = 0;
    const std::vector<Vec3<double>>* at = nullptr;
    const std::vector<Vec3<double>>* from = nullptr;
    double reach = 0.0;     ///< metres beyond the surface's clearance that any particle may travel in the step
    std::uint64_t call = 0; ///< the step() call the step belongs to (CallProgress::call)
    int substeps = 1;       ///< of that call: a surface moved between calls moves 1 / substeps of it a step

    /// How far beyond the clearance particle i is asked about: twice its own move from `from` to
    /// `at` (the solve may take it as far again) and `reach`. Per particle, so that one fast corner
    /// does not widen every other particle's search.
    double reach_of(std::size_t i) const { return reach + 2.0 * ((*at)[i - begin] - (*from)[i - begin]).norm(); }
};

/// Appends the planes a stage holds the queried particles to.
using PlaneSource = std::function<void(const PlaneQuery&, std::vector<ContactPlane>&)>;

namespace detail
{
/// The plane of a particle at `at` held at distance `clearance` outside a point `q` of a round
/// surface (a sphere's centre, a capsule's axis), or inside it for sign -1: appended to `out` when
/// the particle is within `reach` of it.
inline void add_radial_plane(std::size_t particle, const Vec3<double>& at, const Vec3<double>& q, double clearance,
                             double sign, double reach, double friction, std::vector<ContactPlane>& out)
{
    const Vec3<double> d = at - q;
    const double distance = d.norm();
    if ((distance - clearance) * sign > reach)
        return;
    const Vec3<double> n = distance > 1e-12 ? Vec3<double>(sign * d / distance) : Vec3<double>(0.0, sign, 0.0);
    out.push_back({particle, n, n.dot(q) + sign * clearance, friction});
}
} // namespace detail

} // namespace simdverlet
