// A material cloth's contact with itself, in two parts that do different jobs.
//
// Inside the solve, a term of the implicit step (newton_solve.hpp): every vertex-triangle and
// edge-edge pair of the cloth that shares no vertex and starts the step closer than kContactReach
// x thickness becomes a contact, its normal and its closest points' weights taken where the step
// starts, as long as those closest points lie inside both parts (the vertex over the triangle's
// face, the edges nearest between their ends): a vertex nearest a triangle's edge or corner is
// over the next triangle's face or in an edge pair, and a plane through that corner, fixed for the
// step, would be a ramp that a layer sliding past must climb. A contact stores
// k / 2 (thickness - gap)^2 while its gap along that normal is under the thickness, nothing beyond:
// piecewise quadratic and convex, so Newton's iterations and their line search hold it like the
// membrane, and layers rest a thickness apart. Friction between layers is
// Coulomb's with the normal force lagged to the step's start (Li et al.'s lagged friction in IPC):
// a contact pressed there by a normal force N resists its relative sliding u_T over the step with
// a potential friction x N f0(|u_T|) whose force grows smoothly from zero to friction x N as the
// slip reaches kStaticSlip x h and stays there beyond: convex again, and a layer pulled along with
// less than that force creeps slower than kStaticSlip instead of sticking exactly.
//
// After the solve, the guarantee (keep_apart): two primitives a distance d apart can close in a
// step by no more than the largest difference between the moves of a vertex of one and a vertex
// of the other (the closest points are weighted sums of their vertices). Every pair within the
// search reach whose vertices' moves differ by more than kCloseShare x d is an impact zone, and a
// zone moves as one, by its particles' mean move (Provot's and Bridson et al.'s impact zones, with
// this distance test in place of a continuous one): zones that then touch another pair merge, until
// none closes. Moving as one, a zone's gaps cannot close, and the whole cloth moving as one cannot
// cross itself, so the loop ends crossing-free. Pairs beyond the reach need every particle within
// kBoundShare x reach of the cloth's mean move; the reach is set from the step's prediction so that
// this holds, and a particle that strays farther still is cut back to it. A zone never moves a
// particle into a collider's plane its start was clear of. The penalty keeps zones rare.
//
// Pairs are found through a bounding-volume tree over the triangles at the step's start, refitted
// each step and rebuilt every kRebuildSteps; each query's results are sorted by index, so the
// contacts, and with them the step's bits, are the same whatever the tree's age.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include "simdverlet/cloth/detail/nearest_points.hpp"
#include "simdverlet/collision/detail/triangle_tree.hpp"
#include "simdverlet/core/contact_planes.hpp"

namespace simdverlet::detail
{

/// What a self-collision stage asks of a material cloth's solve this step.
struct SelfContactSettings
{
    double thickness = 0.0; ///< m, the gap kept between any two parts of the cloth
    double friction = 0.0;  ///< Coulomb coefficient between layers
};

/// A pair closer than the thickness x this at the step's start is a contact of the step.
inline constexpr double kContactReach = 1.5;
/// The share of its nearest pair's distance a vertex may stray from the mean move (< 1/2).
inline constexpr double kBoundShare = 0.4;
/// A pair whose vertices' moves differ by more than this share of its distance is a zone.
inline constexpr double kCloseShare = 2.0 * kBoundShare;
/// A contact's stiffness as a multiple of its own inertia, m / h^2 of the effective mass along its
/// normal: a layer pressed by its weight sinks g h^2 / 16 into the next (2e-5 m at 240 Hz).
inline constexpr double kContactStiffness = 16.0;
inline constexpr int kRebuildSteps = 30;
/// The farthest the pair search looks, as a multiple of its least reach.
inline constexpr double kFarthestReach = 8.0;
/// m/s: the slipping speed at which friction between layers reaches friction x normal force. Below
/// it the force is smaller (a smoothed Coulomb law, so the step stays a smooth minimisation), so
/// static friction holds a layer to creeping slower than this, not to standing still: 1 mm/s is
/// 6 cm in a minute at the most, at a friction Hessian of 2 friction N / (kStaticSlip h).
inline constexpr double kStaticSlip = 1e-3;

/// One crossing of a cloth through itself: an edge's two particles and a triangle's three, counted
/// from the cloth's base.
struct SelfCrossing
{
    std::array<std::int32_t, 2> edge;
    std::array<std::int32_t, 3> triangle;
};

class SelfContactTerm
{
  public:
    /// The cloth's triangles and edges over particles counted from its base; `n` particles.
    void set_mesh(std::vector<std::array<std::int32_t, 3>> triangles, std::vector<std::array<std::int32_t, 2>> edges,
                  std::size_t n)
    {
        m_triangles = std::move(triangles);
        m_edges = std::move(edges);
        m_edge_owner.assign(m_edges.size(), -1);
        m_triangle_edges.assign(m_triangles.size(), {-1, -1, -1});
        // Each edge belongs to the triangles it bounds; it is tried from the first of them only.
        std::vector<std::vector<std::pair<std::int32_t, std::int32_t>>> at(n); // vertex -> (other end, edge)
        for (std::size_t e = 0; e < m_edges.size(); ++e)
        {
            at[std::size_t(m_edges[e][0])].push_back({m_edges[e][1], std::int32_t(e)});
            at[std::size_t(m_edges[e][1])].push_back({m_edges[e][0], std::int32_t(e)});
        }
        for (std::size_t t = 0; t < m_triangles.size(); ++t)
            for (int k = 0; k < 3; ++k)
            {
                const auto a = m_triangles[t][std::size_t(k)], b = m_triangles[t][std::size_t((k + 1) % 3)];
                for (const auto& [other, e] : at[std::size_t(a)])
                    if (other == b)
                    {
                        m_triangle_edges[t][std::size_t(k)] = e;
                        if (m_edge_owner[std::size_t(e)] < 0)
                            m_edge_owner[std::size_t(e)] = std::int32_t(t);
                    }
            }
        m_built_steps = -1;
        m_contacts.clear();
    }

    bool has_mesh() const noexcept { return !m_triangles.empty(); }
    void clear() noexcept
    {
        m_contacts.clear();
        m_pairs.clear();
    }

    /// The step's contacts and bounds from where it starts, `start`, toward where inertia and the
    /// step's forces alone take it, `predict`, in a cloth with `mass` per particle at
    /// 1 / h^2 = inv_h2; `free` marks the particles the solve moves.
    void find(const std::vector<Eigen::Vector3d>& start, const std::vector<Eigen::Vector3d>& predict,
              const std::vector<double>& mass, const std::vector<bool>& free, double inv_h2,
              const SelfContactSettings& settings)
    {
        const std::size_t n = start.size();
        m_thickness = settings.thickness;
        m_friction = settings.friction;
        m_static_slip = kStaticSlip / std::sqrt(inv_h2);
        m_reach = search_reach(start, predict, mass, free);
        m_contacts.clear();
        m_pairs.clear();
        fit_tree(start);
        const double contact_reach = kContactReach * m_thickness;
        for (std::size_t p = 0; p < n; ++p)
        {
            Bounds<double> box;
            box.add(start[p].x(), start[p].y(), start[p].z());
            query(box.grown(m_reach));
            for (const std::uint32_t t : m_found)
            {
                const auto& tri = m_triangles[t];
                if (tri[0] == std::int32_t(p) || tri[1] == std::int32_t(p) || tri[2] == std::int32_t(p))
                    continue;
                const Eigen::Vector3d& a = start[std::size_t(tri[0])];
                const Eigen::Vector3d& b = start[std::size_t(tri[1])];
                const Eigen::Vector3d& c = start[std::size_t(tri[2])];
                const Eigen::Vector3d w = nearest_on_triangle(start[p], a, b, c);
                const Eigen::Vector3d on = w.x() * a + w.y() * b + w.z() * c;
                const Eigen::Vector3d between = start[p] - on;
                const double distance = between.norm();
                if (distance < m_reach)
                    m_pairs.push_back({{std::int32_t(p), tri[0], tri[1], tri[2]}, 1, distance});
                if (distance < contact_reach && w.minCoeff() > 0.0)
                {
                    const Eigen::Vector3d normal = distance > 1e-9 * m_thickness
                                                       ? Eigen::Vector3d(between / distance)
                                                       : Eigen::Vector3d((b - a).cross(c - a).normalized());
                    add_contact({std::int32_t(p), tri[0], tri[1], tri[2]}, {1.0, -w.x(), -w.y(), -w.z()}, normal,
                                between, mass, free, inv_h2);
                }
            }
        }
        for (std::size_t e = 0; e < m_edges.size(); ++e)
        {
            const auto [i, j] = m_edges[e];
            const Eigen::Vector3d &p = start[std::size_t(i)], &q = start[std::size_t(j)];
            Bounds<double> box;
            box.add(p.x(), p.y(), p.z());
            box.add(q.x(), q.y(), q.z());
            query(box.grown(m_reach));
            m_partners.clear();
            for (const std::uint32_t t : m_found)
                for (const std::int32_t f : m_triangle_edges[t])
                    if (f > std::int32_t(e) && m_edge_owner[std::size_t(f)] == std::int32_t(t))
                        m_partners.push_back(f);
            std::sort(m_partners.begin(), m_partners.end());
            for (const std::int32_t f : m_partners)
            {
                const auto [k, l] = m_edges[std::size_t(f)];
                if (k == i || k == j || l == i || l == j)
                    continue;
                const Eigen::Vector3d &a = start[std::size_t(k)], &b = start[std::size_t(l)];
                if (box_gap(p, q, a, b) >= m_reach)
                    continue;
                const auto [s, t] = nearest_on_segments(p, q, a, b);
                const Eigen::Vector3d between = (p + s * (q - p)) - (a + t * (b - a));
                const double distance = between.norm();
                if (distance < m_reach)
                    m_pairs.push_back({{i, j, k, l}, 2, distance});
                if (distance < contact_reach && distance > 1e-9 * m_thickness && s > 0.0 && s < 1.0 && t > 0.0 &&
                    t < 1.0)
                    add_contact({i, j, k, l}, {1.0 - s, s, -(1.0 - t), -t}, between / distance, between, mass, free,
                                inv_h2);
            }
        }
    }

    /// The step's contacts that are closer than the thickness at x: the pairs touching there.
    std::size_t touching(const std::vector<Eigen::Vector3d>& x) const
    {
        std::size_t count = 0;
        for (const auto& c : m_contacts)
            count += gap(c, x) < m_thickness ? 1 : 0;
        return count;
    }

    double value(const std::vector<Eigen::Vector3d>& x) const
    {
        double energy = 0.0;
        for (const auto& c : m_contacts)
        {
            const double depth = m_thickness - gap(c, x);
            if (depth > 0.0)
                energy += 0.5 * c.stiffness * depth * depth;
            if (c.bound > 0.0)
                energy += c.bound * slip_potential(slip(c, x).norm());
        }
        return energy;
    }

    /// Marks which contacts are pressed at x and adds the gradient there to g.
    void prepare(const std::vector<Eigen::Vector3d>& x, std::vector<Eigen::Vector3d>& g)
    {
        for (auto& c : m_contacts)
        {
            const double depth = m_thickness - gap(c, x);
            if (c.bound > 0.0)
            {
                const Eigen::Vector3d u = slip(c, x);
                c.slip_stiffness = c.bound * slip_force_per_slip(u.norm());
                for (std::size_t k = 0; k < 4; ++k)
                    g[std::size_t(c.vertex[k])] += (c.slip_stiffness * c.weight[k]) * u;
            }
            c.pressed = depth > 0.0;
            if (!c.pressed)
                continue;
            for (std::size_t k = 0; k < 4; ++k)
                g[std::size_t(c.vertex[k])] -= (c.stiffness * depth * c.weight[k]) * c.normal;
        }
    }

    void add_product(const std::vector<Eigen::Vector3d>& v, std::vector<Eigen::Vector3d>& out) const
    {
        for (const auto& c : m_contacts)
        {
            if (c.pressed)
            {
                const double along = c.stiffness * gap(c, v);
                for (std::size_t k = 0; k < 4; ++k)
                    out[std::size_t(c.vertex[k])] += (along * c.weight[k]) * c.normal;
            }
            if (c.slip_stiffness > 0.0)
            {
                const Eigen::Vector3d across = c.slip_stiffness * tangential(c, relative(c, v));
                for (std::size_t k = 0; k < 4; ++k)
                    out[std::size_t(c.vertex[k])] += c.weight[k] * across;
            }
        }
    }

    void add_diagonal(std::vector<Eigen::Matrix3d>& blocks) const
    {
        for (const auto& c : m_contacts)
        {
            if (!c.pressed && !(c.slip_stiffness > 0.0))
                continue;
            const Eigen::Matrix3d nn = c.normal * c.normal.transpose(); // element-wise: same on every build
            const Eigen::Matrix3d block = (c.pressed ? c.stiffness : 0.0) * nn +
                                          c.slip_stiffness * Eigen::Matrix3d(Eigen::Matrix3d::Identity() - nn);
            for (std::size_t k = 0; k < 4; ++k)
                blocks[std::size_t(c.vertex[k])] += (c.weight[k] * c.weight[k]) * block;
        }
    }

    /// Moves x, the solve's result, so that no gap of the cloth closes since `start` (the rule at
    /// the top of this file); `planes` are the step's collider planes by particle, which a zone's
    /// move is kept out of. Returns how many particles it moved. A zone holding pinned particles
    /// moves as its pins do (their mean if they differ: a gap between pins the caller moves apart
    /// is theirs); pairs it still cannot keep open are counted in unbounded().
    std::size_t keep_apart(const std::vector<Eigen::Vector3d>& start, const std::vector<bool>& free,
                           const std::vector<double>& mass, const std::vector<ContactPlane>& planes,
                           std::vector<Eigen::Vector3d>& x)
    {
        const std::size_t n = x.size();
        m_unbounded = 0;
        std::size_t moved = cut_strays(start, free, mass, x);
        m_zone.resize(n);
        for (std::size_t v = 0; v < n; ++v)
            m_zone[v] = std::int32_t(v);
        m_move.resize(n);
        for (std::size_t v = 0; v < n; ++v)
            m_move[v] = x[v] - start[v];
        for (std::size_t round = 0; round < n; ++round)
        {
            bool merged = false;
            for (const auto& pair : m_pairs)
            {
                if (!closes(pair))
                    continue;
                const std::int32_t root = zone_of(pair.vertex[0]);
                bool one = true;
                for (std::size_t k = 1; k < 4; ++k)
                    one = one && zone_of(pair.vertex[k]) == root;
                if (one)
                {
                    ++m_unbounded; // pins that pull apart inside one zone
                    continue;
                }
                for (std::size_t k = 1; k < 4; ++k)
                    join(root, pair.vertex[k]);
                merged = true;
            }
            if (!merged)
                break;
            moved += move_zones(start, free, mass, planes);
        }
        for (std::size_t v = 0; v < n; ++v)
            if (free[v])
                x[v] = start[v] + m_move[v];
        return moved;
    }

    std::size_t unbounded() const noexcept { return m_unbounded; }

    /// The edge-triangle crossings of the cloth at x (pairs that share no particle): how many, and
    /// the first in edge order.
    std::size_t crossings(const std::vector<Eigen::Vector3d>& x, std::optional<SelfCrossing>& first)
    {
        m_built_steps = -1;
        fit_tree(x);
        std::size_t count = 0;
        first.reset();
        for (const auto& [i, j] : m_edges)
        {
            const Eigen::Vector3d &p = x[std::size_t(i)], &q = x[std::size_t(j)];
            Bounds<double> box;
            box.add(p.x(), p.y(), p.z());
            box.add(q.x(), q.y(), q.z());
            query(box);
            for (const std::uint32_t t : m_found)
            {
                const auto& tri = m_triangles[t];
                if (std::find(tri.begin(), tri.end(), i) != tri.end() ||
                    std::find(tri.begin(), tri.end(), j) != tri.end())
                    continue;
                if (!segment_crosses_triangle(p, q, x[std::size_t(tri[0])], x[std::size_t(tri[1])],
                                              x[std::size_t(tri[2])]))
                    continue;
                if (!first)
                    first = SelfCrossing{{i, j}, tri};
                ++count;
            }
        }
        m_built_steps = -1; // the next step fits the tree to its own start
        return count;
    }

  private:
    struct Contact
    {
        std::array<std::int32_t, 4> vertex;
        std::array<double, 4> weight; ///< the gap is sum weight_k normal . x_k
        Eigen::Vector3d normal;
        Eigen::Vector3d start; ///< sum weight_k x_k where the step starts: the first primitive from the second
        double stiffness;
        double bound = 0.0;          ///< friction x the normal force at the step's start, N
        double slip_stiffness = 0.0; ///< the friction force per metre of slip at the last prepare, N/m
        bool pressed = false;
    };

    static double gap(const Contact& c, const std::vector<Eigen::Vector3d>& x)
    {
        double sum = 0.0;
        for (std::size_t k = 0; k < 4; ++k)
            sum += c.weight[k] * c.normal.dot(x[std::size_t(c.vertex[k])]);
        return sum;
    }

    /// sum weight_k x_k: where the first primitive's closest point is from the second's.
    static Eigen::Vector3d relative(const Contact& c, const std::vector<Eigen::Vector3d>& x)
    {
        Eigen::Vector3d sum = Eigen::Vector3d::Zero();
        for (std::size_t k = 0; k < 4; ++k)
            sum += c.weight[k] * x[std::size_t(c.vertex[k])];
        return sum;
    }

    static Eigen::Vector3d tangential(const Contact& c, const Eigen::Vector3d& u)
    {
        return u - c.normal.dot(u) * c.normal;
    }

    /// How far the pair has slid along its normal's plane since the step's start.
    static Eigen::Vector3d slip(const Contact& c, const std::vector<Eigen::Vector3d>& x)
    {
        return tangential(c, Eigen::Vector3d(relative(c, x) - c.start));
    }

    /// f0 of the lagged friction, in metres: the potential per newton of friction bound, whose
    /// derivative rises from 0 to 1 over [0, eps] (2y/eps - y^2/eps^2) and is 1 beyond.
    double slip_potential(double y) const
    {
        const double eps = m_static_slip;
        return y < eps ? y * y * (1.0 / eps - y / (3.0 * eps * eps)) + eps / 3.0 : y;
    }

    /// f0'(y) / y: the friction force per metre of slip, per newton of bound.
    double slip_force_per_slip(double y) const
    {
        const double eps = m_static_slip;
        return y < eps ? 2.0 / eps - y / (eps * eps) : 1.0 / y;
    }

    /// The distance between the bounding boxes of segments pq and ab: no closer than the segments.
    static double box_gap(const Eigen::Vector3d& p, const Eigen::Vector3d& q, const Eigen::Vector3d& a,
                          const Eigen::Vector3d& b)
    {
        double sum = 0.0;
        for (int k = 0; k < 3; ++k)
        {
            const double apart = std::max(std::min(a[k], b[k]) - std::max(p[k], q[k]),
                                          std::min(p[k], q[k]) - std::max(a[k], b[k]));
            if (apart > 0.0)
                sum += apart * apart;
        }
        return std::sqrt(sum);
    }

    struct Pair
    {
        std::array<std::int32_t, 4> vertex; ///< the first primitive's, then the second's
        int split;                          ///< how many of them the first primitive has: 1 or 2
        double distance;                    ///< at the step's start
    };

    /// Whether the pair's vertices' moves differ by more than kCloseShare x its distance.
    bool closes(const Pair& pair) const
    {
        const double limit = kCloseShare * pair.distance;
        for (int a = 0; a < pair.split; ++a)
            for (int b = pair.split; b < 4; ++b)
                if ((m_move[std::size_t(pair.vertex[std::size_t(a)])] -
                     m_move[std::size_t(pair.vertex[std::size_t(b)])])
                        .squaredNorm() > limit * limit)
                    return true;
        return false;
    }

    std::int32_t zone_of(std::int32_t v)
    {
        while (m_zone[std::size_t(v)] != v)
        {
            m_zone[std::size_t(v)] = m_zone[std::size_t(m_zone[std::size_t(v)])];
            v = m_zone[std::size_t(v)];
        }
        return v;
    }

    /// Joins v's zone to `root`'s, the lower index the new root, so zones do not depend on order.
    void join(std::int32_t root, std::int32_t v)
    {
        const std::int32_t a = zone_of(root), b = zone_of(v);
        if (a != b)
            m_zone[std::size_t(std::max(a, b))] = std::min(a, b);
    }

    /// Moves every zone of more than one particle by its mean move (its pins' if it has any), held
    /// out of the planes its particles started clear of; returns the particles it moved.
    std::size_t move_zones(const std::vector<Eigen::Vector3d>& start, const std::vector<bool>& free,
                           const std::vector<double>& mass, const std::vector<ContactPlane>& planes)
    {
        const std::size_t n = m_move.size();
        m_sum.assign(n, Eigen::Vector3d::Zero());
        m_weight.assign(n, 0.0);
        m_members.assign(n, 0);
        for (std::size_t v = 0; v < n; ++v)
        {
            const auto root = std::size_t(zone_of(std::int32_t(v)));
            ++m_members[root];
            // Pins outweigh every free particle: a zone with a pin goes where its pins go.
            const double w = free[v] ? mass[v] : 1e30;
            m_sum[root] += w * m_move[v];
            m_weight[root] += w;
        }
        for (std::size_t r = 0; r < n; ++r)
            if (m_members[r] > 1)
                m_sum[r] /= m_weight[r];
        for (const auto& plane : planes)
        {
            const auto root = std::size_t(zone_of(std::int32_t(plane.particle)));
            const Eigen::Vector3d& from = start[plane.particle];
            const double clear = plane.normal.dot(from) - plane.offset;
            const double after = clear + plane.normal.dot(m_sum[root]);
            if (m_members[root] > 1 && clear >= 0.0 && after < 0.0)
                m_sum[root] -= after * plane.normal;
        }
        std::size_t moved = 0;
        for (std::size_t v = 0; v < n; ++v)
        {
            const auto root = std::size_t(zone_of(std::int32_t(v)));
            if (m_members[root] > 1 && free[v])
            {
                m_move[v] = m_sum[root];
                ++moved;
            }
        }
        return moved;
    }

    /// Cuts back to kBoundShare x reach each free particle that strays farther from the mean move.
    std::size_t cut_strays(const std::vector<Eigen::Vector3d>& start, const std::vector<bool>& free,
                           const std::vector<double>& mass, std::vector<Eigen::Vector3d>& x)
    {
        const Eigen::Vector3d mean = mean_move(start, x, mass, free);
        const double bound = kBoundShare * m_reach;
        std::size_t cut = 0;
        for (std::size_t v = 0; v < x.size(); ++v)
        {
            const Eigen::Vector3d stray = x[v] - start[v] - mean;
            const double far = stray.norm();
            if (!(far > bound))
                continue;
            if (!free[v])
            {
                ++m_unbounded;
                continue;
            }
            x[v] = start[v] + mean + (bound / far) * stray;
            ++cut;
        }
        return cut;
    }

    /// A contact's stiffness: kContactStiffness times the inertia of its gap, 1 / (h^2 sum w^2 / m)
    /// over its free particles. A contact among held particles alone moves nothing and is left out.
    /// `between` is sum weight_k x_k at the step's start; a contact already pressed there resists
    /// sliding with friction x its normal force there.
    void add_contact(const std::array<std::int32_t, 4>& vertex, const std::array<double, 4>& weight,
                     const Eigen::Vector3d& normal, const Eigen::Vector3d& between, const std::vector<double>& mass,
                     const std::vector<bool>& free, double inv_h2)
    {
        double compliance = 0.0;
        for (std::size_t k = 0; k < 4; ++k)
            if (free[std::size_t(vertex[k])] && mass[std::size_t(vertex[k])] > 0.0)
                compliance += weight[k] * weight[k] / mass[std::size_t(vertex[k])];
        if (!(compliance > 0.0))
            return;
        const double stiffness = kContactStiffness * inv_h2 / compliance;
        const double depth = m_thickness - normal.dot(between);
        const double bound = depth > 0.0 ? m_friction * stiffness * depth : 0.0;
        m_contacts.push_back({vertex, weight, normal, between, stiffness, bound});
    }

    /// How far to look for pairs: as far as a contact reaches, and farther where the step's
    /// prediction takes a particle from the mean move by more than kBoundShare of that, so that a
    /// fast part of the cloth far from the rest is not cut back for want of a look (up to
    /// kFarthestReach times as far: beyond that it is).
    double search_reach(const std::vector<Eigen::Vector3d>& start, const std::vector<Eigen::Vector3d>& predict,
                        const std::vector<double>& mass, const std::vector<bool>& free) const
    {
        const double least = kContactReach * m_thickness;
        const Eigen::Vector3d mean = mean_move(start, predict, mass, free);
        double stray = 0.0;
        for (std::size_t v = 0; v < start.size(); ++v)
            if (free[v])
                stray = std::max(stray, (predict[v] - start[v] - mean).norm());
        return std::min(kFarthestReach * least, std::max(least, 1.25 * stray / kBoundShare));
    }

    static Eigen::Vector3d mean_move(const std::vector<Eigen::Vector3d>& start, const std::vector<Eigen::Vector3d>& x,
                                     const std::vector<double>& mass, const std::vector<bool>& free)
    {
        Eigen::Vector3d mean = Eigen::Vector3d::Zero();
        double total = 0.0;
        for (std::size_t v = 0; v < x.size(); ++v)
            if (free[v])
            {
                mean += mass[v] * (x[v] - start[v]);
                total += mass[v];
            }
        return total > 0.0 ? Eigen::Vector3d(mean / total) : mean;
    }

    void fit_tree(const std::vector<Eigen::Vector3d>& x)
    {
        m_boxes.resize(m_triangles.size());
        const auto box_of = [&](std::size_t t) {
            Bounds<double> b;
            for (const auto v : m_triangles[t])
                b.add(x[std::size_t(v)].x(), x[std::size_t(v)].y(), x[std::size_t(v)].z());
            return b;
        };
        if (m_built_steps < 0 || m_built_steps >= kRebuildSteps)
        {
            for (std::size_t t = 0; t < m_triangles.size(); ++t)
                m_boxes[t] = box_of(t);
            m_order = m_tree.build(m_boxes);
            m_built_steps = 0;
        }
        ++m_built_steps;
        for (std::size_t k = 0; k < m_order.size(); ++k)
            m_boxes[k] = box_of(m_order[k]);
        m_tree.refit(m_boxes);
    }

    /// m_found = the triangles whose bounds overlap `box`, by index.
    void query(const Bounds<double>& box)
    {
        m_slots.clear();
        m_tree.query(box, m_boxes, m_slots);
        m_found.resize(m_slots.size());
        for (std::size_t k = 0; k < m_slots.size(); ++k)
            m_found[k] = m_order[m_slots[k]];
        std::sort(m_found.begin(), m_found.end());
    }

    std::vector<std::array<std::int32_t, 3>> m_triangles;
    std::vector<std::array<std::int32_t, 2>> m_edges;
    std::vector<std::int32_t> m_edge_owner;                    ///< per edge, the first triangle it bounds
    std::vector<std::array<std::int32_t, 3>> m_triangle_edges; ///< per triangle, its edges (-1 if none listed)
    double m_thickness = 0.0, m_reach = 0.0;
    double m_friction = 0.0, m_static_slip = 0.0; ///< Coulomb's coefficient; kStaticSlip x h, m
    std::vector<Contact> m_contacts;
    std::vector<Pair> m_pairs; ///< every pair within the reach at the step's start
    std::size_t m_unbounded = 0;
    // keep_apart's scratch: each particle's zone (union-find) and move, the zones' sums.
    std::vector<std::int32_t> m_zone;
    std::vector<Eigen::Vector3d> m_move, m_sum;
    std::vector<double> m_weight;
    std::vector<std::size_t> m_members;

    TriangleTree<double> m_tree;
    std::vector<Bounds<double>> m_boxes; ///< in tree order
    std::vector<std::uint32_t> m_order;  ///< tree order -> triangle
    int m_built_steps = -1;
    std::vector<std::uint32_t> m_slots, m_found;
    std::vector<std::int32_t> m_partners;
};

} // namespace simdverlet::detail
