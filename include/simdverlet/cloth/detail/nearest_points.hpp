// The nearest points of a point and a triangle and of two segments, and whether a segment passes
// through a triangle: the exact tests under a material cloth's self-contact (self_contact_term.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>

#include <Eigen/Core>

namespace simdverlet::detail
{

/// The point of triangle abc nearest p, as barycentric weights (Ericson, Real-Time Collision
/// Detection, 5.1.5).
inline Eigen::Vector3d nearest_on_triangle(const Eigen::Vector3d& p, const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                                           const Eigen::Vector3d& c)
{
    const Eigen::Vector3d ab = b - a, ac = c - a, ap = p - a;
    const double d1 = ab.dot(ap), d2 = ac.dot(ap);
    if (d1 <= 0.0 && d2 <= 0.0)
        return Eigen::Vector3d(1, 0, 0);
    const Eigen::Vector3d bp = p - b;
    const double d3 = ab.dot(bp), d4 = ac.dot(bp);
    if (d3 >= 0.0 && d4 <= d3)
        return Eigen::Vector3d(0, 1, 0);
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0)
    {
        const double v = d1 / (d1 - d3);
        return Eigen::Vector3d(1 - v, v, 0);
    }
    const Eigen::Vector3d cp = p - c;
    const double d5 = ab.dot(cp), d6 = ac.dot(cp);
    if (d6 >= 0.0 && d5 <= d6)
        return Eigen::Vector3d(0, 0, 1);
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0)
    {
        const double w = d2 / (d2 - d6);
        return Eigen::Vector3d(1 - w, 0, w);
    }
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0)
    {
        const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return Eigen::Vector3d(0, 1 - w, w);
    }
    const double denominator = 1.0 / (va + vb + vc);
    const double v = vb * denominator, w = vc * denominator;
    return Eigen::Vector3d(1 - v - w, v, w);
}

/// The parameters s, t in [0, 1] of the nearest points p + s (q - p) and a + t (b - a) of two
/// segments (Ericson 5.1.9).
inline std::array<double, 2> nearest_on_segments(const Eigen::Vector3d& p, const Eigen::Vector3d& q,
                                                 const Eigen::Vector3d& a, const Eigen::Vector3d& b)
{
    const Eigen::Vector3d d1 = q - p, d2 = b - a, r = p - a;
    const double aa = d1.dot(d1), ee = d2.dot(d2), f = d2.dot(r);
    constexpr double tiny = 1e-30;
    if (aa <= tiny && ee <= tiny)
        return {0, 0};
    if (aa <= tiny)
        return {0, std::clamp(f / ee, 0.0, 1.0)};
    const double c = d1.dot(r);
    if (ee <= tiny)
        return {std::clamp(-c / aa, 0.0, 1.0), 0};
    const double bb = d1.dot(d2), denominator = aa * ee - bb * bb;
    double s = denominator > tiny * aa * ee ? std::clamp((bb * f - c * ee) / denominator, 0.0, 1.0) : 0.0;
    double t = (bb * s + f) / ee;
    if (t < 0.0)
    {
        t = 0.0;
        s = std::clamp(-c / aa, 0.0, 1.0);
    }
    else if (t > 1.0)
    {
        t = 1.0;
        s = std::clamp((bb - c) / aa, 0.0, 1.0);
    }
    return {s, t};
}

/// Whether segment pq passes through triangle abc (Moller-Trumbore).
inline bool segment_crosses_triangle(const Eigen::Vector3d& p, const Eigen::Vector3d& q, const Eigen::Vector3d& a,
                                     const Eigen::Vector3d& b, const Eigen::Vector3d& c)
{
    const Eigen::Vector3d e1 = b - a, e2 = c - a, d = q - p, h = d.cross(e2);
    const double det = e1.dot(h);
    if (std::abs(det) < 1e-300)
        return false;
    const Eigen::Vector3d from = p - a, k = from.cross(e1);
    const double u = from.dot(h) / det, v = d.dot(k) / det, along = e2.dot(k) / det;
    return u >= 0 && v >= 0 && u + v <= 1 && along >= 0 && along <= 1;
}

} // namespace simdverlet::detail
