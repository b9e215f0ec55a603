// The geometry a triangle mesh is queried with, shared by the mesh collider and self-collision's
// point-triangle contacts: axis-aligned bounds, a triangle prepared for closest-point queries
// (Face) and the closest-point offset written once over V, and the bounding-volume tree that
// finds the triangles near a box.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "simdverlet/cloth/triangle_mesh.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet::detail
{

/// An axis-aligned box.
template <class T>
struct Bounds
{
    std::array<T, 3> lo{std::numeric_limits<T>::max(), std::numeric_limits<T>::max(), std::numeric_limits<T>::max()};
    std::array<T, 3> hi{std::numeric_limits<T>::lowest(), std::numeric_limits<T>::lowest(),
                        std::numeric_limits<T>::lowest()};

    void add(T x, T y, T z)
    {
        lo = {std::min(lo[0], x), std::min(lo[1], y), std::min(lo[2], z)};
        hi = {std::max(hi[0], x), std::max(hi[1], y), std::max(hi[2], z)};
    }
    void add(const Bounds& b)
    {
        for (int k = 0; k < 3; ++k)
        {
            lo[k] = std::min(lo[k], b.lo[k]);
            hi[k] = std::max(hi[k], b.hi[k]);
        }
    }
    Bounds grown(T by) const
    {
        Bounds b = *this;
        for (int k = 0; k < 3; ++k)
        {
            b.lo[k] -= by;
            b.hi[k] += by;
        }
        return b;
    }
    bool overlaps(const Bounds& b) const
    {
        return lo[0] <= b.hi[0] && hi[0] >= b.lo[0] && lo[1] <= b.hi[1] && hi[1] >= b.lo[1] && lo[2] <= b.hi[2] &&
               hi[2] >= b.lo[2];
    }
    bool contains(const Bounds& b) const
    {
        return lo[0] <= b.lo[0] && lo[1] <= b.lo[1] && lo[2] <= b.lo[2] && hi[0] >= b.hi[0] && hi[1] >= b.hi[1] &&
               hi[2] >= b.hi[2];
    }
    T largest_extent() const { return std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}); }
};

/// One triangle as the contact tests read it: a corner, two edges from it, the unit normal, and
/// the edges' dot products and reciprocals, which depend on the triangle alone. Precomputing them
/// takes every division out of the closest-point test.
template <class T>
struct Face
{
    std::array<T, 3> a, e1, e2, n;
    T e11, e12, e22;             // e1.e1, e1.e2, e2.e2
    T inv_e11, inv_e22, inv_e33; // reciprocals of e1.e1, e2.e2 and |c - b|^2
    T inv_gram;                  // 1 / (e11 e22 - e12^2) = 1 / |e1 x e2|^2

    static Face from(const Vec3<T>& a, const Vec3<T>& b, const Vec3<T>& c)
    {
        const Vec3<T> e1 = b - a, e2 = c - a;
        const Vec3<T> n = e1.cross(e2).normalized();
        Face f;
        f.a = {a.x(), a.y(), a.z()};
        f.e1 = {e1.x(), e1.y(), e1.z()};
        f.e2 = {e2.x(), e2.y(), e2.z()};
        f.n = {n.x(), n.y(), n.z()};
        f.e11 = e1.dot(e1);
        f.e12 = e1.dot(e2);
        f.e22 = e2.dot(e2);
        f.inv_e11 = T(1) / f.e11;
        f.inv_e22 = T(1) / f.e22;
        f.inv_e33 = T(1) / (c - b).squaredNorm();
        f.inv_gram = T(1) / e1.cross(e2).squaredNorm();
        return f;
    }
};

/// p minus the closest point of triangle f (Ericson's Voronoi regions, all evaluated and
/// selected, vertex regions winning over edges over the face). A lane whose foot on the plane is
/// inside the triangle takes its plane offset s1 n, so when every lane of `lanes` is, the regions
/// are not evaluated at all: a particle lying on a mesh usually is. F is a Face (one triangle for
/// every lane) or any struct of the same fields holding one triangle per lane: V(f.field) reads
/// either, so both layouts share this arithmetic.
template <class V, class F, class M>
SIMDVERLET_INLINE void closest_offset(const F& f, const V& px, const V& py, const V& pz, const V& s1, const V& nx,
                                      const V& ny, const V& nz, const M& lanes, V& dx, V& dy, V& dz)
{
    using T = simd::Scalar<V>;
    const V zero(T(0)), one(T(1));
    const V apx = px - V(f.a[0]), apy = py - V(f.a[1]), apz = pz - V(f.a[2]);
    const V d1 = V(f.e1[0]) * apx + V(f.e1[1]) * apy + V(f.e1[2]) * apz;
    const V d2 = V(f.e2[0]) * apx + V(f.e2[1]) * apy + V(f.e2[2]) * apz;
    const V d3 = d1 - V(f.e11), d4 = d2 - V(f.e12); // the same against b
    const V d5 = d1 - V(f.e12), d6 = d2 - V(f.e22); // and against c
    const V vc = d1 * d4 - d3 * d2;
    const V vb = d5 * d2 - d1 * d6;
    const V va = d3 * d6 - d5 * d4;
    const M face = (va > zero) && (vb > zero) && (vc > zero);
    dx = s1 * nx;
    dy = s1 * ny;
    dz = s1 * nz;
    if (!simd::any(lanes && !face))
        return;
    // Barycentric (v, w) of the closest point, a + v e1 + w e2: the face first, then each
    // region that overrides it, in increasing precedence.
    V v = vb * V(f.inv_gram);
    V w = vc * V(f.inv_gram);
    const auto region = [&](const auto& in, const V& rv, const V& rw) {
        v = simd::select(in, rv, v);
        w = simd::select(in, rw, w);
    };
    const V bc = (d4 - d3) * V(f.inv_e33);
    region((va <= zero) && (d4 - d3 >= zero) && (d5 - d6 >= zero), one - bc, bc);
    region((vb <= zero) && (d2 >= zero) && (d6 <= zero), zero, d2 * V(f.inv_e22));
    region((d6 >= zero) && (d5 <= d6), zero, one);
    region((vc <= zero) && (d1 >= zero) && (d3 <= zero), d1 * V(f.inv_e11), zero);
    region((d3 >= zero) && (d4 <= d3), one, zero);
    region((d1 <= zero) && (d2 <= zero), zero, zero);
    dx = simd::select(face, dx, apx - (V(f.e1[0]) * v + V(f.e2[0]) * w));
    dy = simd::select(face, dy, apy - (V(f.e1[1]) * v + V(f.e2[1]) * w));
    dz = simd::select(face, dz, apz - (V(f.e1[2]) * v + V(f.e2[2]) * w));
}

/// The nearest triangle found so far, lane by lane: the point minus its closest point on it (q,
/// |q|^2 = d2) and the triangle's normal (fn, toward the point when two-sided).
template <class V>
struct Nearest
{
    V d2, qx, qy, qz, fnx, fny, fnz;

    explicit Nearest(const V& start) : d2(start), qx(V(0)), qy(V(0)), qz(V(0)), fnx(V(0)), fny(V(0)), fnz(V(0)) {}

    /// Takes triangle f, for `lanes`, where it is nearer than what was found (s: the point's
    /// distance along n, side: +-1 toward the point); returns where it was taken.
    template <class F, class M>
    M consider(const F& f, const V& x, const V& y, const V& z, const V& s, const V& nx, const V& ny, const V& nz,
               const V& side, const M& lanes)
    {
        V dx, dy, dz;
        closest_offset(f, x, y, z, s, nx, ny, nz, lanes, dx, dy, dz);
        const V e2 = dx * dx + dy * dy + dz * dz;
        const M closer = lanes && (e2 < d2);
        d2 = simd::select(closer, e2, d2);
        qx = simd::select(closer, dx, qx);
        qy = simd::select(closer, dy, qy);
        qz = simd::select(closer, dz, qz);
        fnx = simd::select(closer, nx * side, fnx);
        fny = simd::select(closer, ny * side, fny);
        fnz = simd::select(closer, nz * side, fnz);
        return closer;
    }
};

/// A bounding-volume hierarchy over triangle bounds: median splits on the longest axis of the
/// centroids, up to kLeaf triangles a leaf, nodes in depth-first order (a node's children come
/// after it, the left one next). Built in O(m log m); refit in O(m), children before parents.
template <class T>
class TriangleTree
{
  public:
    static constexpr std::uint32_t kLeaf = 4;

    /// Builds over `boxes`; returns the triangle order of the leaves, which the caller stores its
    /// triangles in, so that a query lists triangles in increasing order.
    std::vector<std::uint32_t> build(const std::vector<Bounds<T>>& boxes)
    {
        std::vector<std::uint32_t> order(boxes.size());
        std::vector<std::array<T, 3>> centre(boxes.size());
        for (std::uint32_t i = 0; i < order.size(); ++i)
        {
            order[i] = i;
            for (int k = 0; k < 3; ++k)
                centre[i][k] = (boxes[i].lo[k] + boxes[i].hi[k]) / T(2);
        }
        m_nodes.clear();
        m_nodes.reserve(2 * boxes.size() / kLeaf + 2);
        split(order, centre, 0, std::uint32_t(order.size()));
        return order;
    }

    /// Recomputes every node's bounds from the triangles' (in tree order).
    void refit(const std::vector<Bounds<T>>& boxes)
    {
        for (std::size_t i = m_nodes.size(); i-- > 0;)
        {
            Node& node = m_nodes[i];
            node.box = Bounds<T>{};
            if (node.count > 0)
                for (std::uint32_t k = node.first; k < node.first + node.count; ++k)
                    node.box.add(boxes[k]);
            else
            {
                node.box.add(m_nodes[i + 1].box);
                node.box.add(m_nodes[node.first].box);
            }
        }
    }

    /// Appends to `out`, in increasing order, every triangle whose bounds overlap `box`.
    void query(const Bounds<T>& box, const std::vector<Bounds<T>>& boxes, std::vector<std::uint32_t>& out) const
    {
        std::array<std::uint32_t, 64> stack;
        std::size_t top = 0;
        stack[top++] = 0;
        while (top > 0)
        {
            const std::uint32_t i = stack[--top];
            const Node& node = m_nodes[i];
            if (!node.box.overlaps(box))
                continue;
            if (node.count > 0)
            {
                for (std::uint32_t k = node.first; k < node.first + node.count; ++k)
                    if (boxes[k].overlaps(box))
                        out.push_back(k);
                continue;
            }
            stack[top++] = node.first; // right, visited after the left
            stack[top++] = i + 1;
        }
    }

    std::size_t nodes() const noexcept { return m_nodes.size(); }

  private:
    struct Node
    {
        Bounds<T> box;
        std::uint32_t first = 0; // a leaf's first triangle; an inner node's right child
        std::uint32_t count = 0; // triangles in a leaf; 0 for an inner node
    };

    void split(std::vector<std::uint32_t>& order, const std::vector<std::array<T, 3>>& centre, std::uint32_t first,
               std::uint32_t count)
    {
        const auto index = std::uint32_t(m_nodes.size());
        m_nodes.push_back({});
        if (count <= kLeaf)
        {
            m_nodes[index].first = first;
            m_nodes[index].count = count;
            return;
        }
        Bounds<T> spread;
        for (std::uint32_t k = first; k < first + count; ++k)
            spread.add(centre[order[k]][0], centre[order[k]][1], centre[order[k]][2]);
        int axis = 0;
        for (int k = 1; k < 3; ++k)
            if (spread.hi[k] - spread.lo[k] > spread.hi[axis] - spread.lo[axis])
                axis = k;
        const std::uint32_t half = count / 2;
        // Ties broken by index, so the tree, and with it every query's order, is the same on
        // every standard library.
        std::nth_element(order.begin() + first, order.begin() + first + half, order.begin() + first + count,
                         [&](std::uint32_t l, std::uint32_t r) {
                             return centre[l][axis] < centre[r][axis] || (centre[l][axis] == centre[r][axis] && l < r);
                         });
        split(order, centre, first, half);
        m_nodes[index].first = std::uint32_t(m_nodes.size());
        split(order, centre, first + half, count - half);
    }

    std::vector<Node> m_nodes;
};

} // namespace simdverlet::detail
