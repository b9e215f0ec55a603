// A ruler for thin cloth: counts particles that pass through a triangle of a cloth between two
// substep ends. Registered as the last position projection, it sees every substep's final
// positions and compares each with the last.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <unordered_map>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace simdverlet::testing
{
/// Counts crossings: a particle whose straight path from one substep end to the next goes through
/// a watched triangle, the triangle moving linearly between its own two positions. The path
/// crosses the triangle's plane where its signed height changes sign; the crossing counts when,
/// at that moment (the root of the height taken as linear between the ends), the particle lies
/// inside the triangle. `counts(particle, t)` says whether particle is watched against triangle
/// t (a triangle's own corners never are).
template <class T>
class CrossingCounter
{
  public:
    using Watch = std::function<bool(std::size_t particle, std::size_t triangle)>;

    /// Watches `triangles` (particle indices) of `sim`, for the particles of [begin, end).
    CrossingCounter(Simulation<T>& sim, std::vector<std::array<std::int32_t, 3>> triangles, std::size_t begin,
                    std::size_t end, T cell, Watch counts)
        : m_triangles(std::move(triangles)), m_begin(begin), m_end(end), m_cell(cell), m_counts(std::move(counts))
    {
        sim.add_position_projection("crossings", [this](State3<T>& state, T) { look(state); });
    }

    int crossings() const noexcept { return m_crossings; }

  private:
    using Key = std::int64_t;

    Key key(std::int64_t x, std::int64_t y, std::int64_t z) const
    {
        return (x * 73856093) ^ (y * 19349663) ^ (z * 83492791);
    }

    std::array<std::int64_t, 3> cell_of(const Vec3<T>& p) const
    {
        return {std::int64_t(std::floor(p.x() / m_cell)), std::int64_t(std::floor(p.y() / m_cell)),
                std::int64_t(std::floor(p.z() / m_cell))};
    }

    void look(const State3<T>& state)
    {
        std::vector<Vec3<T>> now(state.size());
        for (std::size_t i = 0; i < state.size(); ++i)
            now[i] = state.position(i);
        if (!m_before.empty())
            count(now);
        m_before = std::move(now);
    }

    void count(const std::vector<Vec3<T>>& now)
    {
        // Each triangle's swept box, into every cell it touches.
        std::unordered_map<Key, std::vector<std::uint32_t>> cells;
        for (std::uint32_t t = 0; t < m_triangles.size(); ++t)
        {
            Vec3<T> lo = Vec3<T>::Constant(std::numeric_limits<T>::max()), hi = -lo;
            for (const auto v : m_triangles[t])
            {
                lo = lo.cwiseMin(m_before[std::size_t(v)]).cwiseMin(now[std::size_t(v)]);
                hi = hi.cwiseMax(m_before[std::size_t(v)]).cwiseMax(now[std::size_t(v)]);
            }
            const auto c0 = cell_of(lo), c1 = cell_of(hi);
            for (auto x = c0[0]; x <= c1[0]; ++x)
                for (auto y = c0[1]; y <= c1[1]; ++y)
                    for (auto z = c0[2]; z <= c1[2]; ++z)
                        cells[key(x, y, z)].push_back(t);
        }
        std::vector<std::uint32_t> seen;
        for (std::size_t i = m_begin; i < m_end; ++i)
        {
            const auto c0 = cell_of(m_before[i].cwiseMin(now[i])), c1 = cell_of(m_before[i].cwiseMax(now[i]));
            seen.clear();
            for (auto x = c0[0]; x <= c1[0]; ++x)
                for (auto y = c0[1]; y <= c1[1]; ++y)
                    for (auto z = c0[2]; z <= c1[2]; ++z)
                        if (const auto found = cells.find(key(x, y, z)); found != cells.end())
                            seen.insert(seen.end(), found->second.begin(), found->second.end());
            std::sort(seen.begin(), seen.end());
            seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
            for (const auto t : seen)
                if (m_counts(i, t) && crosses(i, m_triangles[t], now))
                    ++m_crossings;
        }
    }

    bool crosses(std::size_t i, const std::array<std::int32_t, 3>& tri, const std::vector<Vec3<T>>& now) const
    {
        for (const auto v : tri)
            if (std::size_t(v) == i)
                return false;
        const auto height = [&](const std::vector<Vec3<T>>& at) {
            const Vec3<double> a = at[std::size_t(tri[0])].template cast<double>(),
                               b = at[std::size_t(tri[1])].template cast<double>(),
                               c = at[std::size_t(tri[2])].template cast<double>();
            return (b - a).cross(c - a).normalized().dot(at[i].template cast<double>() - a);
        };
        const double h0 = height(m_before), h1 = height(now);
        if ((h0 > 0) == (h1 > 0) || h0 == h1)
            return false;
        const double s = h0 / (h0 - h1);
        const auto mid = [&](std::size_t k) {
            return (m_before[k].template cast<double>() * (1 - s) + now[k].template cast<double>() * s).eval();
        };
        const Vec3<double> a = mid(std::size_t(tri[0])), b = mid(std::size_t(tri[1])), c = mid(std::size_t(tri[2])),
                           p = mid(i);
        const Vec3<double> n = (b - a).cross(c - a);
        // Inside when p lies on the inner side of each edge, seen along the normal.
        return n.dot((b - a).cross(p - a)) >= 0 && n.dot((c - b).cross(p - b)) >= 0 && n.dot((a - c).cross(p - c)) >= 0;
    }

    std::vector<std::array<std::int32_t, 3>> m_triangles;
    std::size_t m_begin, m_end;
    T m_cell;
    Watch m_counts;
    std::vector<Vec3<T>> m_before;
    int m_crossings = 0;
};
} // namespace simdverlet::testing
