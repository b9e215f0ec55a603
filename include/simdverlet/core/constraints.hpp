// DirectedConstraints4<T>: four outgoing distance constraints per particle of a contiguous range,
// stored as parallel arrays per slot (neighbour, rest length, stiffness). A constraint i -> j writes
// only to i, so the solve has no scatter writes and any particle range can be solved independently.
// Four slots hold a grid particle's up/down/left/right neighbourhood with nothing spare; a particle
// with more springs (a triangle mesh's vertex has about six edge neighbours and as many bend
// partners) gets slots in further layers: ConstraintLayers<T> (constraint_layers.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// Slots per particle in one constraint layer: the one place the number is written.
inline constexpr int kSlots = 4;

/// Raw padded slot arrays of one layer for kernels: slot s of particle i is at [s][i - first], for
/// i in [first, end). `first` is a whole number of padding blocks, so a lane group is either wholly
/// inside a layer or wholly outside it.
template <class T>
struct ConstraintArrays
{
    std::array<const std::int32_t*, kSlots> neighbour;
    std::array<const T*, kSlots> rest;
    std::array<const T*, kSlots> stiffness;
    std::size_t first = 0; ///< the particle of row 0
    std::size_t end = 0;   ///< one past the last particle with a row

    bool covers(std::size_t i) const noexcept { return i >= first && i < end; }
};

namespace detail
{
/// Edit stamps come from one counter for every constraint layer, so they never repeat and a later
/// edit always has a larger stamp than any earlier one.
inline std::uint64_t next_edit_stamp() noexcept
{
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}
} // namespace detail

/// One constraint layer: kSlots slots for each particle of [first(), end()), indexed by particle
/// (not by row), naming neighbours anywhere in the simulation's particles(). The simulation's layer
/// 0 covers every particle ([0, size())); a further layer covers only the range that needs it.
///
/// Invariant the kernels rely on: a slot whose neighbour is -1 has stiffness 0, and stiffness is
/// never negative, so "stiffness > 0" alone tells a live slot. Every writer below keeps it.
template <class T>
class DirectedConstraints4
{
  public:
    static constexpr int kSlots = simdverlet::kSlots;
    /// Neighbour index of an unused slot.
    static constexpr std::int32_t kNone = -1;

    DirectedConstraints4() = default;
    /// A layer 0: rows for particles [0, particles).
    explicit DirectedConstraints4(std::size_t particles) { resize(particles); }
    /// A further layer: rows for [first rounded down to a padding block, end), neighbours in
    /// [0, particles). Throws when end is past particles.
    DirectedConstraints4(std::size_t first, std::size_t end, std::size_t particles)
    {
        if (first > end || end > particles)
            detail::raise<std::out_of_range>("simdverlet: a constraint layer over [" + std::to_string(first) + ", " +
                                             std::to_string(end) + ") is not inside the " + std::to_string(particles) +
                                             " particles");
        m_first = first / simd::kPadLanes<T> * simd::kPadLanes<T>;
        m_particles = particles;
        set_rows(end - m_first);
    }

    /// Rows: the particles covered.
    std::size_t size() const noexcept { return m_size; }
    /// The first particle covered, a whole number of padding blocks (0 for layer 0).
    std::size_t first() const noexcept { return m_first; }
    /// One past the last particle covered.
    std::size_t end() const noexcept { return m_first + m_size; }
    bool covers(std::size_t i) const noexcept { return i >= m_first && i < end(); }
    /// Particles a neighbour may name: the simulation's size.
    std::size_t particles() const noexcept { return m_particles; }

    /// Layer 0's resize: rows for [0, n), neighbours in [0, n). New rows have kSlots unused slots.
    /// Shrinking is refused while a remaining slot points past the new end, since that slot would
    /// then point at nothing.
    void resize(std::size_t n)
    {
        if (n < m_size)
            for (std::size_t r = 0; r < n; ++r)
                for (int s = 0; s < kSlots; ++s)
                    if (m_neighbour[s][r] >= std::int32_t(n))
                        detail::raise<std::logic_error>("simdverlet: cannot shrink constraints to " +
                                                        std::to_string(n) + " particles: slot " + std::to_string(s) +
                                                        " of particle " + std::to_string(m_first + r) +
                                                        " points at particle " + std::to_string(m_neighbour[s][r]));
        m_particles = n;
        set_rows(n - std::min(n, m_first));
    }

    /// A further layer's view of a simulation that grew to n particles: neighbours may name them;
    /// the rows stay.
    void set_particles(std::size_t n)
    {
        if (n < end())
            detail::raise<std::logic_error>("simdverlet: a constraint layer over [" + std::to_string(m_first) + ", " +
                                            std::to_string(end()) + ") cannot see only " + std::to_string(n) +
                                            " particles");
        m_particles = n;
    }

    /// Grows the rows to cover [min(first(), begin) rounded down to a block, max(end(), end)).
    void cover(std::size_t begin, std::size_t end)
    {
        if (end > m_particles || begin > end)
            detail::raise<std::out_of_range>("simdverlet: cannot extend a constraint layer to [" +
                                             std::to_string(begin) + ", " + std::to_string(end) +
                                             "): the simulation holds " + std::to_string(m_particles) + " particles");
        const std::size_t first = m_size == 0 ? begin : std::min(begin, m_first);
        const std::size_t aligned = first / simd::kPadLanes<T> * simd::kPadLanes<T>;
        const std::size_t last = m_size == 0 ? end : std::max(end, this->end());
        if (aligned == m_first && last == this->end() && m_size > 0)
            return;
        const std::size_t shift = m_size == 0 ? 0 : m_first - aligned;
        const std::size_t rows = last - aligned;
        for (int s = 0; s < kSlots; ++s)
        {
            simd::AlignedVector<std::int32_t> neighbour(simd::padded_count<T>(rows), kNone);
            simd::AlignedVector<T> rest(neighbour.size(), T(0)), stiffness(neighbour.size(), T(0));
            for (std::size_t r = 0; r < m_size; ++r)
            {
                neighbour[r + shift] = m_neighbour[s][r];
                rest[r + shift] = m_rest[s][r];
                stiffness[r + shift] = m_stiffness[s][r];
            }
            m_neighbour[s] = std::move(neighbour);
            m_rest[s] = std::move(rest);
            m_stiffness[s] = std::move(stiffness);
        }
        m_first = aligned;
        m_size = rows;
        stamp();
    }

    std::int32_t neighbour(std::size_t i, int s) const { return m_neighbour[check(i, s)][i - m_first]; }
    T rest_length(std::size_t i, int s) const { return m_rest[check(i, s)][i - m_first]; }
    T stiffness(std::size_t i, int s) const { return m_stiffness[check(i, s)][i - m_first]; }

    /// A slot is live when it names a neighbour and has non-zero stiffness.
    bool live(std::size_t i, int s) const
    {
        check(i, s);
        return m_neighbour[s][i - m_first] >= 0 && m_stiffness[s][i - m_first] != T(0);
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
        const std::size_t r = i - m_first;
        m_neighbour[s][r] = j;
        m_rest[s][r] = rest;
        m_stiffness[s][r] = stiffness;
        stamp();
    }

    /// Changes the stiffness of an existing slot, e.g. to soften a spring live. Refused on a slot
    /// with no neighbour: the kernels read liveness from stiffness alone, so a stiff empty slot
    /// would send them to particle -1.
    void set_stiffness(std::size_t i, int s, T stiffness)
    {
        check(i, s);
        check_stiffness(stiffness);
        if (m_neighbour[s][i - m_first] == kNone && stiffness != T(0))
            detail::raise<std::logic_error>("simdverlet: cannot give slot " + std::to_string(s) + " of particle " +
                                            std::to_string(i) + " stiffness " + detail::number(stiffness) +
                                            ": it has no neighbour (set_slot wires one)");
        m_stiffness[s][i - m_first] = stiffness;
        stamp();
    }

    void clear_slot(std::size_t i, int s)
    {
        check(i, s);
        const std::size_t r = i - m_first;
        m_neighbour[s][r] = kNone;
        m_rest[s][r] = T(0);
        m_stiffness[s][r] = T(0);
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
            if (m_neighbour[s][i - m_first] < 0)
                return s;
        return std::nullopt;
    }

    /// The slot of i that points at j, if any.
    std::optional<int> slot_to(std::size_t i, std::int32_t j) const
    {
        check_particle(i);
        for (int s = 0; s < kSlots; ++s)
            if (m_neighbour[s][i - m_first] == j)
                return s;
        return std::nullopt;
    }

    /// A symmetric spring within this layer: one slot on each side, i -> j and j -> i, same rest and
    /// stiffness. Returns the two slots used. Throws, changing nothing, when either side has no
    /// free slot; Simulation::connect, which adds a layer instead, is the usual way to make one.
    std::pair<int, int> connect_within_layer(std::size_t i, std::size_t j, T rest, T stiffness)
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
                                            " has no free slot (all " + std::to_string(kSlots) + " name a neighbour)");
        set_slot(i, *si, std::int32_t(j), rest, stiffness);
        set_slot(j, *sj, std::int32_t(i), rest, stiffness);
        return {*si, *sj};
    }

    /// Read-only views over the rows, one per slot: entry r is particle first() + r.
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
        a.first = m_first;
        a.end = end();
        return a;
    }

    /// Applies a particle removal: rows of removed particles go, the rest shift down in order, and
    /// every slot is renumbered through `remap` (old index -> new index, -1 for removed). A slot
    /// that pointed at a removed particle is cleared.
    void compact(const std::vector<std::int32_t>& remap, std::size_t new_size)
    {
        if (m_first != 0 || m_size != m_particles)
        {
            move_rows(remap, new_size);
            return;
        }
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
        if (m_first != 0 || m_size != m_particles)
        {
            move_rows(where, m_particles);
            return;
        }
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
        if (a.m_size != b.m_size || a.m_first != b.m_first || a.m_particles != b.m_particles)
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

    void stamp() noexcept { m_stamp = detail::next_edit_stamp(); }

    /// Rows for `rows` particles from m_first on, kept where they were; new rows and the padding
    /// past the last row are empty.
    void set_rows(std::size_t rows)
    {
        const std::size_t padded = simd::padded_count<T>(rows);
        for (int s = 0; s < kSlots; ++s)
        {
            // Lanes past the rows are reset as well, so a row freed by shrinking comes back empty.
            m_neighbour[s].resize(padded, kNone);
            m_rest[s].resize(padded, T(0));
            m_stiffness[s].resize(padded, T(0));
            for (std::size_t r = rows; r < padded; ++r)
            {
                m_neighbour[s][r] = kNone;
                m_rest[s][r] = T(0);
                m_stiffness[s][r] = T(0);
            }
        }
        m_size = rows;
        stamp();
    }

    /// A further layer's removal or renumbering: particle p's row goes to to[p] (dropped for -1),
    /// its neighbours through the same map, and the rows become the block-aligned hull of the rows
    /// that still name a neighbour (none left: an empty layer).
    void move_rows(const std::vector<std::int32_t>& to, std::size_t particles)
    {
        std::size_t lo = particles, hi = 0;
        for (std::size_t r = 0; r < m_size; ++r)
        {
            const std::int32_t p = to[m_first + r];
            bool wired = false;
            for (int s = 0; s < kSlots; ++s)
                wired = wired || (m_neighbour[s][r] >= 0 && to[std::size_t(m_neighbour[s][r])] >= 0);
            if (p >= 0 && wired)
            {
                lo = std::min(lo, std::size_t(p));
                hi = std::max(hi, std::size_t(p) + 1);
            }
        }
        DirectedConstraints4 moved = lo < hi ? DirectedConstraints4(lo, hi, particles) : DirectedConstraints4();
        moved.m_particles = particles;
        for (std::size_t r = 0; r < m_size && lo < hi; ++r)
        {
            const std::int32_t p = to[m_first + r];
            if (p < 0)
                continue;
            for (int s = 0; s < kSlots; ++s)
            {
                const std::int32_t j = m_neighbour[s][r];
                const std::int32_t mapped = j >= 0 ? to[std::size_t(j)] : kNone;
                if (mapped < 0)
                    continue;
                const std::size_t row = std::size_t(p) - moved.m_first;
                moved.m_neighbour[s][row] = mapped;
                moved.m_rest[s][row] = m_rest[s][r];
                moved.m_stiffness[s][row] = m_stiffness[s][r];
            }
        }
        *this = std::move(moved);
        stamp();
    }

    void check_particle(std::size_t i) const
    {
        if (i < m_first || i >= end())
        {
            if (m_first == 0)
                detail::raise<std::out_of_range>("simdverlet: " + detail::describe_index(i, m_size));
            detail::raise<std::out_of_range>("simdverlet: particle " + std::to_string(i) +
                                             " is outside the constraint layer over [" + std::to_string(m_first) +
                                             ", " + std::to_string(end()) + ")");
        }
    }

    static int check_slot(int s)
    {
        if (s < 0 || s >= kSlots) [[unlikely]]
            raise_bad_slot(s);
        return s;
    }

    // Out of line and cold: inlined, the message's construction let GCC 12 follow the bad slot
    // index past the throw and warn (-Warray-bounds) about the access the check prevents.
    [[noreturn, gnu::cold, gnu::noinline]] static void raise_bad_slot(int s)
    {
        detail::raise<std::out_of_range>("simdverlet: slot " + std::to_string(s) + " is out of range 0.." +
                                         std::to_string(kSlots - 1));
    }

    int check(std::size_t i, int s) const
    {
        check_particle(i);
        return check_slot(s);
    }

    void check_neighbour(std::size_t i, std::int64_t j) const
    {
        if (j < 0 || std::size_t(j) >= m_particles)
            detail::raise<std::out_of_range>("simdverlet: neighbour " + std::to_string(j) + " of particle " +
                                             std::to_string(i) + " is out of range (the simulation holds " +
                                             std::to_string(m_particles) + " particles)");
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

    std::size_t m_first = 0;     ///< particle of row 0, a whole number of padding blocks
    std::size_t m_size = 0;      ///< rows
    std::size_t m_particles = 0; ///< neighbours name particles below this
    std::uint64_t m_stamp = 0;   ///< see edit_stamp(); 0 for a set never edited
    std::array<simd::AlignedVector<std::int32_t>, kSlots> m_neighbour;
    std::array<simd::AlignedVector<T>, kSlots> m_rest;
    std::array<simd::AlignedVector<T>, kSlots> m_stiffness;
};

} // namespace simdverlet
