// DirectedConstraints4<T>: four outgoing distance constraints per particle, stored as parallel
// arrays per slot (neighbour, rest length, stiffness). A constraint i -> j writes only to i, so the
// solve has no scatter writes and any particle range can be solved independently. Four slots hold
// a grid particle's up/down/left/right neighbourhood with nothing spare.
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"
#include "simd.hpp"
#include "state.hpp"

namespace simdverlet
{

/// Raw padded slot arrays for kernels: slot s of particle i is at [s][i].
template <class T>
struct ConstraintArrays
{
    std::array<const std::int32_t*, 4> neighbour;
    std::array<const T*, 4> rest;
    std::array<const T*, 4> stiffness;
};

/// Invariant the kernels rely on: a slot whose neighbour is -1 has stiffness 0, and stiffness is
/// never negative, so "stiffness > 0" alone tells a live slot. Every writer below keeps it.
template <class T>
class DirectedConstraints4
{
  public:
    static constexpr int kSlots = 4;
    /// Neighbour index of an unused slot.
    static constexpr std::int32_t kNone = -1;

    DirectedConstraints4() = default;
    explicit DirectedConstraints4(std::size_t particles) { resize(particles); }

    /// Particles covered: every particle of the simulation, one row each.
    std::size_t size() const noexcept { return m_size; }

    /// Grows or shrinks to n rows. New rows have four unused slots. Shrinking is refused while a
    /// remaining slot points past the new end, since that slot would then point at nothing.
    void resize(std::size_t n)
    {
        if (n < m_size)
            for (std::size_t i = 0; i < n; ++i)
                for (int s = 0; s < kSlots; ++s)
                    if (m_neighbour[s][i] >= std::int32_t(n))
                        detail::raise<std::logic_error>("simdverlet: cannot shrink constraints to " +
                                                        std::to_string(n) + " particles: slot " + std::to_string(s) +
                                                        " of particle " + std::to_string(i) + " points at particle " +
                                                        std::to_string(m_neighbour[s][i]));
        const std::size_t padded = simd::padded_count<T>(n);
        for (int s = 0; s < kSlots; ++s)
        {
            // Lanes past n are reset as well, so a row freed by shrinking comes back empty.
            m_neighbour[s].resize(padded, kNone);
            m_rest[s].resize(padded, T(0));
            m_stiffness[s].resize(padded, T(0));
            for (std::size_t i = n; i < padded; ++i)
            {
                m_neighbour[s][i] = kNone;
                m_rest[s][i] = T(0);
                m_stiffness[s][i] = T(0);
            }
        }
        m_size = n;
        stamp();
    }

    std::int32_t neighbour(std::size_t i, int s) const { return m_neighbour[check(i, s)][i]; }
    T rest_length(std::size_t i, int s) const { return m_rest[check(i, s)][i]; }
    T stiffness(std::size_t i, int s) const { return m_stiffness[check(i, s)][i]; }

    /// A slot is live when it names a neighbour and has non-zero stiffness.
    bool live(std::size_t i, int s) const
    {
        check(i, s);
        return m_neighbour[s][i] >= 0 && m_stiffness[s][i] != T(0);
    }

    /// Number of live slots of particle i.
    int live_count(std::size_t i) const
    {
        int n = 0;
        for (int s = 0; s < kSlots; ++s)
            n += live(i, s) ? 1 : 0;
        return n;
    }

    /// Wires slot s of particle i to neighbour j. Validates everything before writing anything.
    void set_slot(std::size_t i, int s, std::int32_t j, T rest, T stiffness)
    {
        check(i, s);
        check_neighbour(i, j);
        check_rest(rest);
        check_stiffness(stiffness);
        m_neighbour[s][i] = j;
        m_rest[s][i] = rest;
        m_stiffness[s][i] = stiffness;
        stamp();
    }

    /// Changes the stiffness of an existing slot, e.g. to soften a spring live. Refused on a slot
    /// with no neighbour: the kernels read liveness from stiffness alone, so a stiff empty slot
    /// would send them to particle -1.
    void set_stiffness(std::size_t i, int s, T stiffness)
    {
        check(i, s);
        check_stiffness(stiffness);
        if (m_neighbour[s][i] == kNone && stiffness != T(0))
            detail::raise<std::logic_error>("simdverlet: cannot give slot " + std::to_string(s) + " of particle " +
                                            std::to_string(i) + " stiffness " + detail::number(stiffness) +
                                            ": it has no neighbour (set_slot wires one)");
        m_stiffness[s][i] = stiffness;
        stamp();
    }

    void clear_slot(std::size_t i, int s)
    {
        check(i, s);
        m_neighbour[s][i] = kNone;
        m_rest[s][i] = T(0);
        m_stiffness[s][i] = T(0);
        stamp();
    }

    void clear_slots(std::size_t i)
    {
        check_particle(i);
        for (int s = 0; s < kSlots; ++s)
            clear_slot(i, s);
    }

    /// First slot of particle i that names no neighbour. A slot with a neighbour but zero stiffness
    /// is not free: it still records a wiring the user may switch back on.
    std::optional<int> free_slot(std::size_t i) const
    {
        check_particle(i);
        for (int s = 0; s < kSlots; ++s)
            if (m_neighbour[s][i] < 0)
                return s;
        return std::nullopt;
    }

    /// The slot of i that points at j, if any.
    std::optional<int> slot_to(std::size_t i, std::int32_t j) const
    {
        check_particle(i);
        for (int s = 0; s < kSlots; ++s)
            if (m_neighbour[s][i] == j)
                return s;
        return std::nullopt;
    }

    /// A symmetric spring: one slot on each side, i -> j and j -> i, same rest and stiffness.
    /// Returns the two slots used. Throws, changing nothing, when either side has no free slot.
    std::pair<int, int> connect(std::size_t i, std::size_t j, T rest, T stiffness)
    {
        check_particle(i);
        check_neighbour(i, std::int64_t(j));
        check_rest(rest);
        check_stiffness(stiffness);
        const auto si = free_slot(i);
        const auto sj = free_slot(j);
        if (!si || !sj)
            detail::raise<std::logic_error>("simdverlet: cannot connect particles " + std::to_string(i) + " and " +
                                            std::to_string(j) + ": particle " + std::to_string(!si ? i : j) +
                                            " has no free slot (all four name a neighbour)");
        set_slot(i, *si, std::int32_t(j), rest, stiffness);
        set_slot(j, *sj, std::int32_t(i), rest, stiffness);
        return {*si, *sj};
    }

    /// Read-only views over the live rows, one per slot.
    std::span<const std::int32_t> neighbours(int s) const { return {m_neighbour[check_slot(s)].data(), m_size}; }
    std::span<const T> rest_lengths(int s) const { return {m_rest[check_slot(s)].data(), m_size}; }
    std::span<const T> stiffnesses(int s) const { return {m_stiffness[check_slot(s)].data(), m_size}; }

    ConstraintArrays<T> arrays_view() const noexcept
    {
        ConstraintArrays<T> a;
        for (int s = 0; s < kSlots; ++s)
        {
            a.neighbour[s] = m_neighbour[s].data();
            a.rest[s] = m_rest[s].data();
            a.stiffness[s] = m_stiffness[s].data();
        }
        return a;
    }

    /// Applies a particle removal: rows of removed particles go, the rest shift down in order, and
    /// every slot is renumbered through `remap` (old index -> new index, -1 for removed). A slot
    /// that pointed at a removed particle is cleared.
    void compact(const std::vector<std::int32_t>& remap, std::size_t new_size)
    {
        for (int s = 0; s < kSlots; ++s)
        {
            std::size_t out = 0;
            for (std::size_t i = 0; i < m_size; ++i)
            {
                if (remap[i] < 0)
                    continue;
                const std::int32_t j = m_neighbour[s][i];
                const std::int32_t mapped = j >= 0 ? remap[std::size_t(j)] : kNone;
                m_neighbour[s][out] = mapped;
                m_rest[s][out] = mapped >= 0 ? m_rest[s][i] : T(0);
                m_stiffness[s][out] = mapped >= 0 ? m_stiffness[s][i] : T(0);
                ++out;
            }
        }
        // Every slot is remapped below new_size, so resize's shrink check passes; it also resets the
        // freed rows to empty padding.
        m_size = new_size;
        resize(new_size);
    }

    /// Applies a renumbering of the particles: the rows of order[k] move to first + k (order a
    /// permutation of that block), and every slot anywhere is renumbered through `where` (old
    /// index -> new, the identity outside the block). Stages that derived anything from the slots
    /// see the stamp move.
    void permute(std::size_t first, const std::vector<std::size_t>& order, const std::vector<std::int32_t>& where)
    {
        std::vector<std::int32_t> neighbours(order.size());
        std::vector<T> rests(order.size()), stiffnesses(order.size());
        const auto at = [first](auto& v) { return v.begin() + std::ptrdiff_t(first); };
        for (int s = 0; s < kSlots; ++s)
        {
            for (std::size_t k = 0; k < order.size(); ++k)
            {
                neighbours[k] = m_neighbour[s][order[k]];
                rests[k] = m_rest[s][order[k]];
                stiffnesses[k] = m_stiffness[s][order[k]];
            }
            std::copy(neighbours.begin(), neighbours.end(), at(m_neighbour[s]));
            std::copy(rests.begin(), rests.end(), at(m_rest[s]));
            std::copy(stiffnesses.begin(), stiffnesses.end(), at(m_stiffness[s]));
            for (std::size_t i = 0; i < m_size; ++i)
                if (m_neighbour[s][i] >= 0)
                    m_neighbour[s][i] = where[std::size_t(m_neighbour[s][i])];
        }
        stamp();
    }

    /// A stamp that changes with every edit: equal stamps mean equal contents (a copy carries its
    /// source's stamp), so a stage can keep what it derived from the constraints until the stamp
    /// moves. Stamps come from one counter shared by every instance of the type and never repeat.
    std::uint64_t edit_stamp() const noexcept { return m_stamp; }

    /// Bit equality of every slot array over the covered particles.
    friend bool operator==(const DirectedConstraints4& a, const DirectedConstraints4& b)
    {
        if (a.m_size != b.m_size)
            return false;
        if (a.m_size == 0)
            return true;
        const auto same = [n = a.m_size](const auto& u, const auto& v) {
            return std::memcmp(u.data(), v.data(), n * sizeof(u[0])) == 0;
        };
        for (int s = 0; s < kSlots; ++s)
            if (!same(a.m_neighbour[s], b.m_neighbour[s]) || !same(a.m_rest[s], b.m_rest[s]) ||
                !same(a.m_stiffness[s], b.m_stiffness[s]))
                return false;
        return true;
    }

  private:
    template <class U>
    friend struct detail::SnapshotAccess;

    void stamp() noexcept
    {
        static std::atomic<std::uint64_t> counter{0};
        m_stamp = counter.fetch_add(1, std::memory_order_relaxed) + 1;
    }

    void check_particle(std::size_t i) const
    {
        if (i >= m_size)
            detail::raise<std::out_of_range>("simdverlet: " + detail::describe_index(i, m_size));
    }

    static int check_slot(int s)
    {
        if (s < 0 || s >= kSlots)
            detail::raise<std::out_of_range>("simdverlet: slot " + std::to_string(s) + " is out of range 0..3");
        return s;
    }

    int check(std::size_t i, int s) const
    {
        check_particle(i);
        return check_slot(s);
    }

    void check_neighbour(std::size_t i, std::int64_t j) const
    {
        if (j < 0 || std::size_t(j) >= m_size)
            detail::raise<std::out_of_range>("simdverlet: neighbour " + std::to_string(j) + " of particle " +
                                             std::to_string(i) + " is out of range (the simulation holds " +
                                             std::to_string(m_size) + " particles)");
        if (std::size_t(j) == i)
            detail::raise<std::invalid_argument>("simdverlet: particle " + std::to_string(i) +
                                                 " cannot be constrained to itself");
    }

    static void check_rest(T rest)
    {
        if (!std::isfinite(rest) || rest < T(0))
            detail::raise<std::invalid_argument>("simdverlet: rest length must be finite and >= 0, got " +
                                                 detail::number(rest));
    }

    static void check_stiffness(T stiffness)
    {
        if (!std::isfinite(stiffness) || stiffness < T(0))
            detail::raise<std::invalid_argument>("simdverlet: stiffness must be finite and >= 0, got " +
                                                 detail::number(stiffness));
    }

    std::size_t m_size = 0;
    std::uint64_t m_stamp = 0; ///< see edit_stamp(); 0 for a set never edited
    std::array<simd::AlignedVector<std::int32_t>, 4> m_neighbour;
    std::array<simd::AlignedVector<T>, 4> m_rest;
    std::array<simd::AlignedVector<T>, 4> m_stiffness;
};

} // namespace simdverlet
