// State3<T>: the particles of a simulation as a structure of arrays. A particle is an index into
// every array at once, never an object, so the solver's kernels stream each field contiguously.
// Arrays are padded to a whole number of 64-byte blocks with inert lanes (pinned, at the origin)
// so vector kernels never need a scalar tail.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simd.hpp"

namespace simdverlet
{

template <class T>
using Vec3 = Eigen::Matrix<T, 3, 1>;
/// A texture coordinate (u, v), as a mesh's uvs hold them.
template <class T>
using Vec2 = Eigen::Matrix<T, 2, 1>;

/// Whether a state stores a per-particle inverse mass. Without it every particle has unit mass
/// and nothing can be pinned: pinning *is* an inverse mass of zero, there is no pinned flag.
enum class Masses
{
    unit,         ///< no inv_mass array; every particle has mass 1 and is free
    per_particle, ///< an inv_mass array; 0 pins a particle
};

namespace detail
{
/// Grants snapshot.hpp access to the raw arrays; defined there.
template <class T>
struct SnapshotAccess;
template <class T>
class World;

inline std::string describe_index(std::size_t i, std::size_t size)
{
    return "particle " + std::to_string(i) + " is out of range (the simulation holds " + std::to_string(size) +
           " particles)";
}

/// A value as a message shows it: shortest readable form, NaN spelled as users search for it.
template <class T>
std::string number(T value)
{
    if (std::isnan(value))
        return "NaN";
    std::ostringstream out;
    out << value;
    return out.str();
}
} // namespace detail

/// A block of particle indices [begin, end). The default covers every particle and is re-read
/// each time it is resolved, so particles appended later are included.
struct ParticleRange
{
    static constexpr std::size_t kToEnd = std::size_t(-1);
    std::size_t begin = 0;    ///< first particle
    std::size_t end = kToEnd; ///< one past the last; kToEnd follows the simulation's size

    /// The range as concrete bounds for a state of `size` particles. An end past the state (its
    /// particles were removed) stops at the last particle.
    std::pair<std::size_t, std::size_t> resolve(std::size_t size) const noexcept
    {
        const std::size_t e = end < size ? end : size;
        return {begin < e ? begin : e, e};
    }

    /// Throws std::invalid_argument when begin > end.
    void check() const
    {
        if (begin > end)
            detail::raise<std::invalid_argument>("simdverlet: particle range [" + std::to_string(begin) + ", " +
                                                 std::to_string(end) + ") has begin after end");
    }

    /// check(), and throws std::out_of_range when an explicit end lies past `size` particles,
    /// naming `stage` (the stage the range is for).
    void check_inside(std::size_t size, const std::string& stage) const
    {
        check();
        if (end != kToEnd && end > size)
            detail::raise<std::out_of_range>("simdverlet: " + stage + " range [" + std::to_string(begin) + ", " +
                                             std::to_string(end) + ") is not inside the " + std::to_string(size) +
                                             " particles");
    }
};

/// Particles laid out as a grid, row by row: `height` rows of `width` particles from `first` (a
/// cloth's layout: Cloth::grid()). A hint for stages that batch neighbours together; it changes
/// how fast they run, never what they compute.
struct ParticleGrid
{
    std::size_t first = 0;  ///< the particle of column 0, row 0
    std::size_t width = 0;  ///< particles a row, > 0
    std::size_t height = 0; ///< rows, > 0

    friend bool operator==(const ParticleGrid&, const ParticleGrid&) = default;
};

/// Raw pointers to every array of a state, over the padded length. What kernels work on; user code
/// should prefer the spans of State3.
template <class T>
struct StateArrays
{
    T* x;
    T* y;
    T* z;
    T* px;
    T* py;
    T* pz;
    T* ax;
    T* ay;
    T* az;
    const T* inv_mass;  ///< nullptr when the state has unit masses
    std::size_t size;   ///< live particles
    std::size_t padded; ///< array length, a whole number of padding blocks
    /// x, y, z and a pad per particle (16-byte aligned), as the solve's gathers read them; nullptr
    /// where the solve gathers from x, y and z. Set by the step for its solve only.
    const T* packed = nullptr;
};

template <class T>
class State3
{
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "State3 holds float or double");

  public:
    using Scalar = T;

    explicit State3(Masses masses = Masses::per_particle) : m_has_masses(masses == Masses::per_particle) {}

    std::size_t size() const noexcept { return m_size; }
    bool empty() const noexcept { return m_size == 0; }
    /// Length of every array, including the inert padding lanes after size().
    std::size_t padded_size() const noexcept { return m_x.size(); }
    bool has_masses() const noexcept { return m_has_masses; }

    /// Reserves room for n particles without changing size().
    void reserve(std::size_t n)
    {
        const std::size_t padded = simd::padded_count<T>(n);
        for (auto* v : arrays())
            v->reserve(padded);
        if (m_has_masses)
            m_w.reserve(padded);
    }

    // The arrays over the live particles [0, size()).
    std::span<T> x() noexcept { return {m_x.data(), m_size}; }
    std::span<T> y() noexcept { return {m_y.data(), m_size}; }
    std::span<T> z() noexcept { return {m_z.data(), m_size}; }
    std::span<T> px() noexcept { return {m_px.data(), m_size}; }
    std::span<T> py() noexcept { return {m_py.data(), m_size}; }
    std::span<T> pz() noexcept { return {m_pz.data(), m_size}; }
    std::span<T> ax() noexcept { return {m_ax.data(), m_size}; }
    std::span<T> ay() noexcept { return {m_ay.data(), m_size}; }
    std::span<T> az() noexcept { return {m_az.data(), m_size}; }
    std::span<const T> x() const noexcept { return {m_x.data(), m_size}; }
    std::span<const T> y() const noexcept { return {m_y.data(), m_size}; }
    std::span<const T> z() const noexcept { return {m_z.data(), m_size}; }
    std::span<const T> px() const noexcept { return {m_px.data(), m_size}; }
    std::span<const T> py() const noexcept { return {m_py.data(), m_size}; }
    std::span<const T> pz() const noexcept { return {m_pz.data(), m_size}; }
    std::span<const T> ax() const noexcept { return {m_ax.data(), m_size}; }
    std::span<const T> ay() const noexcept { return {m_ay.data(), m_size}; }
    std::span<const T> az() const noexcept { return {m_az.data(), m_size}; }
    /// Inverse masses, read-only: write them through set_inverse_mass or pin, which validate.
    /// Empty when the state has unit masses.
    std::span<const T> inv_mass() const noexcept
    {
        return m_has_masses ? std::span<const T>{m_w.data(), m_size} : std::span<const T>{};
    }

    Vec3<T> position(std::size_t i) const
    {
        check_index(i);
        return {m_x[i], m_y[i], m_z[i]};
    }

    /// Displacement over the last step, x - px: Verlet's implicit velocity, in world units per frame.
    Vec3<T> velocity(std::size_t i) const
    {
        check_index(i);
        return {m_x[i] - m_px[i], m_y[i] - m_py[i], m_z[i] - m_pz[i]};
    }

    Vec3<T> force(std::size_t i) const
    {
        check_index(i);
        return {m_ax[i], m_ay[i], m_az[i]};
    }

    /// Moves particle i to p. keep_velocity keeps its per-frame displacement, otherwise it arrives
    /// at rest. Pinned particles move too: this is how a user carries a pin.
    void set_position(std::size_t i, const Vec3<T>& p, bool keep_velocity = false)
    {
        check_index(i);
        check_finite_position(p);
        const Vec3<T> v = keep_velocity ? velocity(i) : Vec3<T>::Zero();
        m_x[i] = p.x();
        m_y[i] = p.y();
        m_z[i] = p.z();
        m_px[i] = p.x() - v.x();
        m_py[i] = p.y() - v.y();
        m_pz[i] = p.z() - v.z();
    }

    /// Sets the per-frame displacement of particle i by rewriting its previous position.
    void set_velocity(std::size_t i, const Vec3<T>& v)
    {
        check_index(i);
        if (!v.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: velocity of particle " + std::to_string(i) +
                                                 " is not finite");
        m_px[i] = m_x[i] - v.x();
        m_py[i] = m_y[i] - v.y();
        m_pz[i] = m_z[i] - v.z();
    }

    T inverse_mass(std::size_t i) const
    {
        check_index(i);
        return m_has_masses ? m_w[i] : T(1);
    }

    /// Sets the inverse mass of particle i; 0 pins it. A state with unit masses accepts only 1.
    void set_inverse_mass(std::size_t i, T inv_mass)
    {
        check_index(i);
        check_inverse_mass(i, inv_mass);
        if (m_has_masses)
            m_w[i] = inv_mass;
    }

    /// Pins particle i (inverse mass 0). Throws std::logic_error on a state without masses.
    void pin(std::size_t i) { set_inverse_mass(i, T(0)); }

    bool is_pinned(std::size_t i) const { return inverse_mass(i) == T(0); }

    /// Raw padded arrays for kernels.
    StateArrays<T> arrays_view() noexcept
    {
        return {m_x.data(),  m_y.data(),  m_z.data(),  m_px.data(), m_py.data(),
                m_pz.data(), m_ax.data(), m_ay.data(), m_az.data(), m_has_masses ? m_w.data() : nullptr,
                m_size,      m_x.size()};
    }

    void check_index(std::size_t i) const
    {
        if (i >= m_size)
            detail::raise<std::out_of_range>("simdverlet: " + detail::describe_index(i, m_size));
    }

    /// Bit equality of every array over the live particles: NaNs compare by their bits and -0 is
    /// not +0, which is what "the same state" has to mean for snapshots and determinism checks.
    friend bool operator==(const State3& a, const State3& b)
    {
        if (a.m_size != b.m_size || a.m_has_masses != b.m_has_masses)
            return false;
        auto same = [&](const simd::AlignedVector<T>& u, const simd::AlignedVector<T>& v) {
            return a.m_size == 0 || std::memcmp(u.data(), v.data(), a.m_size * sizeof(T)) == 0;
        };
        return same(a.m_x, b.m_x) && same(a.m_y, b.m_y) && same(a.m_z, b.m_z) && same(a.m_px, b.m_px) &&
               same(a.m_py, b.m_py) && same(a.m_pz, b.m_pz) && same(a.m_ax, b.m_ax) && same(a.m_ay, b.m_ay) &&
               same(a.m_az, b.m_az) && (!a.m_has_masses || same(a.m_w, b.m_w));
    }

  private:
    template <class U>
    friend struct detail::SnapshotAccess;
    friend class detail::World<T>;

    /// Appends a particle at rest at p and returns its index. inv_mass 0 pins it. Private: a
    /// particle joins through Simulation::add_particle, which gives it its constraint slots too.
    std::size_t add(const Vec3<T>& p, T inv_mass)
    {
        check_finite_position(p);
        check_inverse_mass(m_size, inv_mass);
        if (m_size >= std::size_t(INT32_MAX))
            detail::raise<std::length_error>("simdverlet: a simulation holds at most 2^31 - 1 particles");
        resize_padded(simd::padded_count<T>(m_size + 1));
        const std::size_t i = m_size++;
        m_x[i] = m_px[i] = p.x();
        m_y[i] = m_py[i] = p.y();
        m_z[i] = m_pz[i] = p.z();
        if (m_has_masses)
            m_w[i] = inv_mass;
        return i;
    }

    /// Removes the particles whose entry in `keep` is false, shifting the rest down in order.
    /// keep.size() must equal size(). Freed lanes become inert padding again.
    void compact(const std::vector<bool>& keep)
    {
        std::size_t out = 0;
        for (std::size_t i = 0; i < m_size; ++i)
        {
            if (!keep[i])
                continue;
            for (auto* v : arrays())
                (*v)[out] = (*v)[i];
            if (m_has_masses)
                m_w[out] = m_w[i];
            ++out;
        }
        const std::size_t old_size = m_size;
        m_size = out;
        // Reset the vacated lanes so padding stays pinned and at the origin.
        for (std::size_t i = out; i < old_size; ++i)
        {
            for (auto* v : arrays())
                (*v)[i] = T(0);
            if (m_has_masses)
                m_w[i] = T(0);
        }
        resize_padded(simd::padded_count<T>(m_size));
    }

    /// Renumbers a block: the particle at order[k] moves to index first + k, for k in
    /// [0, order.size()), every per-particle array with it. `order` must be a permutation of
    /// [first, first + order.size()) (the caller checks).
    void permute(std::size_t first, const std::vector<std::size_t>& order)
    {
        std::vector<T> moved(order.size());
        const auto apply = [&](simd::AlignedVector<T>& v) {
            for (std::size_t k = 0; k < order.size(); ++k)
                moved[k] = v[order[k]];
            std::copy(moved.begin(), moved.end(), v.begin() + std::ptrdiff_t(first));
        };
        for (auto* v : arrays())
            apply(*v);
        if (m_has_masses)
            apply(m_w);
    }

    /// Swaps the current and previous position arrays. Lets an integrator write the new position
    /// into the previous-position array in the same sweep that reads both.
    void swap_positions_with_previous() noexcept
    {
        m_x.swap(m_px);
        m_y.swap(m_py);
        m_z.swap(m_pz);
    }

    std::array<simd::AlignedVector<T>*, 9> arrays() noexcept
    {
        return {&m_x, &m_y, &m_z, &m_px, &m_py, &m_pz, &m_ax, &m_ay, &m_az};
    }

    void resize_padded(std::size_t padded)
    {
        // New lanes are value-initialised: at the origin, at rest and, with masses, pinned.
        for (auto* v : arrays())
            v->resize(padded, T(0));
        if (m_has_masses)
            m_w.resize(padded, T(0));
    }

    void check_inverse_mass(std::size_t i, T inv_mass) const
    {
        if (!m_has_masses && inv_mass != T(1))
            detail::raise<std::logic_error>("simdverlet: cannot give particle " + std::to_string(i) + " inverse mass " +
                                            detail::number(inv_mass) +
                                            ": the state was created with unit masses (Masses::unit), so nothing "
                                            "can be pinned or weighted; create it with Masses::per_particle");
        if (!(inv_mass >= T(0)) || !std::isfinite(inv_mass))
            detail::raise<std::invalid_argument>("simdverlet: inverse mass of particle " + std::to_string(i) +
                                                 " must be "
                                                 "finite and >= 0, got " +
                                                 detail::number(inv_mass));
    }

    static void check_finite_position(const Vec3<T>& p)
    {
        if (!p.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: position (" + detail::number(p.x()) + ", " +
                                                 detail::number(p.y()) + ", " + detail::number(p.z()) +
                                                 ") is not finite");
    }

    bool m_has_masses;
    std::size_t m_size = 0;
    simd::AlignedVector<T> m_x, m_y, m_z, m_px, m_py, m_pz, m_ax, m_ay, m_az, m_w;
};

} // namespace simdverlet
