// DirectedConstraints4<T>: four outgoing distance constraints per particle of a contiguous range,
// stored as parallel arrays per slot (neighbour, rest length, stiffness). A constraint i -> j writes
// only to i, so the solve has no scatter writes and any particle range can be solved independently.
// Four slots hold a grid particle's up/down/left/right neighbourhood with nothing spare; a particle
// with more springs (a triangle mesh's vertex has about six edge neighbours and as many bend
// partners) gets slots in further layers: ConstraintLayers<T> below, docs/architecture.md.
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

#include "error.hpp"
#include "simd.hpp"
#include "state.hpp"

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
    /// free slot (Simulation::connect adds a layer instead).
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

/// Where a slot is: its layer and its slot in that layer.
struct SlotRef
{
    std::size_t layer = 0;
    int slot = 0;
    friend bool operator==(const SlotRef&, const SlotRef&) = default;
};

/// A simulation's constraint layers (docs/architecture.md, "Layers"): layer 0 covers every particle, and each
/// further layer a contiguous range of particles that need more than kSlots springs. The solve sums
/// every layer's slots of a particle in layer order, from the same unchanged positions, so a
/// particle still writes only to itself and every bitwise rule holds across layers. A simulation
/// of grids and strands has layer 0 alone and steps exactly as it did before layers existed.
///
/// Layers live at fixed addresses (layer 0 for the container's life, further layers until removed
/// by a compaction that empties them), so a reference to layer 0 stays valid while layers come.
template <class T>
class ConstraintLayers
{
  public:
    using Layer = DirectedConstraints4<T>;

    ConstraintLayers() = default;
    explicit ConstraintLayers(std::size_t particles) : m_base(particles) {}

    /// Layers, layer 0 included.
    std::size_t count() const noexcept { return 1 + m_extra.size(); }
    Layer& base() noexcept { return m_base; }
    const Layer& base() const noexcept { return m_base; }
    Layer& operator[](std::size_t k) { return k == 0 ? m_base : m_extra[check_layer(k) - 1]; }
    const Layer& operator[](std::size_t k) const { return k == 0 ? m_base : m_extra[check_layer(k) - 1]; }
    /// A constraint edit written for one layer (a function of DirectedConstraints4&) still
    /// registers: it is handed layer 0.
    operator Layer&() noexcept { return m_base; }

    /// Particles: the simulation's size.
    std::size_t size() const noexcept { return m_base.size(); }

    /// The simulation now holds n particles. Growing only adds rows to layer 0; shrinking is
    /// refused while a further layer still covers a particle at or past n.
    void resize(std::size_t n)
    {
        for (const auto& layer : m_extra)
            if (n < layer.end())
                detail::raise<std::logic_error>("simdverlet: cannot shrink constraints to " + std::to_string(n) +
                                                " particles: a constraint layer covers [" +
                                                std::to_string(layer.first()) + ", " + std::to_string(layer.end()) +
                                                ")");
        m_base.resize(n);
        for (auto& layer : m_extra)
            layer.set_particles(n);
    }

    /// Adds a layer over [first, end) (first rounded down to a padding block) and returns its index.
    std::size_t add_layer(std::size_t first, std::size_t end)
    {
        m_extra.emplace_back(first, end, size());
        return m_extra.size();
    }

    /// Every slot of particle i that names a neighbour, in layer order then slot order:
    /// fn(SlotRef, neighbour, rest, stiffness). The order the solve sums them in.
    template <class Fn>
    void for_each_wired(std::size_t i, Fn&& fn) const
    {
        for (std::size_t k = 0; k < count(); ++k)
        {
            const Layer& layer = (*this)[k];
            if (!layer.covers(i))
                continue;
            for (int s = 0; s < kSlots; ++s)
            {
                const std::int32_t j = layer.neighbour(i, s);
                if (j >= 0)
                    fn(SlotRef{k, s}, j, layer.rest_length(i, s), layer.stiffness(i, s));
            }
        }
    }

    /// Live slots of particle i over every layer.
    int live_count(std::size_t i) const
    {
        int n = 0;
        for_each_wired(i, [&](SlotRef, std::int32_t, T, T k) { n += k != T(0) ? 1 : 0; });
        return n;
    }

    /// The first slot of i (layer order) that points at j, if any.
    std::optional<SlotRef> slot_to(std::size_t i, std::int32_t j) const
    {
        check_particle(i);
        for (std::size_t k = 0; k < count(); ++k)
            if ((*this)[k].covers(i))
                if (const auto s = (*this)[k].slot_to(i, j))
                    return SlotRef{k, *s};
        return std::nullopt;
    }

    /// The lowest layer's free slot of particle i, if any layer covering it has one.
    std::optional<SlotRef> free_slot(std::size_t i) const
    {
        check_particle(i);
        for (std::size_t k = 0; k < count(); ++k)
            if ((*this)[k].covers(i))
                if (const auto s = (*this)[k].free_slot(i))
                    return SlotRef{k, *s};
        return std::nullopt;
    }

    bool live(std::size_t i, SlotRef at) const { return (*this)[at.layer].live(i, at.slot); }

    /// Whether a live slot joins i and j, either way, in any layer: the spring between them holds.
    bool joined(std::size_t i, std::size_t j) const
    {
        const auto names = [&](std::size_t from, std::size_t to) {
            for (std::size_t k = 0; k < count(); ++k)
            {
                const Layer& layer = (*this)[k];
                if (!layer.covers(from))
                    continue;
                for (int s = 0; s < kSlots; ++s)
                    if (layer.neighbour(from, s) == std::int32_t(to) && layer.stiffness(from, s) != T(0))
                        return true;
            }
            return false;
        };
        return names(i, j) || names(j, i);
    }

    /// Clears the spring between i and j: every slot of i naming j and of j naming i, in every layer
    /// (the two halves of a symmetric pair, and any duplicate or switched-off slot with them, so no
    /// half survives), and then, the same way, every spring linked to it (link). What tearing and
    /// cutting call.
    void clear_spring(std::size_t i, std::size_t j)
    {
        clear_recorded(i, j);
        const auto [lo, hi] = m_links.equal_range(pair_key(i, j));
        std::vector<std::pair<std::int32_t, std::int32_t>> linked;
        for (auto it = lo; it != hi; ++it)
            linked.push_back(it->second);
        for (const auto& [c, d] : linked)
            clear_recorded(std::size_t(c), std::size_t(d));
    }

    /// The springs clear_spring has cleared since edit stamp `since` (each pair's ends in order,
    /// a < b), provided nothing else has changed the constraints since; nullopt when something has,
    /// or when the record no longer reaches back that far. A stage that built from the springs at
    /// `since` can then part what it holds in place instead of rebuilding: a cut or a tear costs it
    /// a lookup a spring.
    std::optional<std::vector<std::pair<std::int32_t, std::int32_t>>> cleared_since(std::uint64_t since) const
    {
        std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
        const std::uint64_t now = edit_stamp();
        // Every edit draws a new stamp from one rising counter, so the clears account for every
        // edit since `since` exactly when their stamps chain from it to now.
        auto it = std::lower_bound(m_cleared.begin(), m_cleared.end(), since,
                                   [](const Cleared& c, std::uint64_t stamp) { return c.before < stamp; });
        std::uint64_t at = since;
        for (; it != m_cleared.end() && at != now; ++it)
        {
            if (it->before != at)
                return std::nullopt;
            pairs.emplace_back(it->a, it->b);
            at = it->after;
        }
        if (at != now)
            return std::nullopt;
        return pairs;
    }

    /// Makes the spring c-d go whenever the spring a-b is cleared by clear_spring: a mesh cloth's
    /// bend spring across an edge goes with the edge, so a torn or cut cloth parts. Links are
    /// topology, set up with the springs: they are not part of a snapshot, which restores into a
    /// simulation built the same way.
    void link(std::size_t a, std::size_t b, std::size_t c, std::size_t d)
    {
        for (const std::size_t p : {a, b, c, d})
            check_particle(p);
        m_links.emplace(pair_key(a, b), std::pair{std::int32_t(c), std::int32_t(d)});
    }

    /// Links to the spring a-b (link), for tests and tools.
    std::size_t links_of(std::size_t a, std::size_t b) const { return m_links.count(pair_key(a, b)); }
    void clear_slot(std::size_t i, SlotRef at) { (*this)[at.layer].clear_slot(i, at.slot); }

    /// Clears every slot of particle i in every layer.
    void clear_slots(std::size_t i)
    {
        check_particle(i);
        for (std::size_t k = 0; k < count(); ++k)
            if ((*this)[k].covers(i))
                (*this)[k].clear_slots(i);
    }

    /// A symmetric spring, i -> j and j -> i, same rest and stiffness: each side spends the free
    /// slot of its lowest layer that has one; a side with none gets one in a layer extended or added
    /// over its padding block (extend_for). Validates everything before writing anything. Returns
    /// where the two halves went.
    std::pair<SlotRef, SlotRef> connect(std::size_t i, std::size_t j, T rest, T stiffness)
    {
        check_particle(i);
        check_particle(j);
        if (i == j)
            detail::raise<std::invalid_argument>("simdverlet: particle " + std::to_string(i) +
                                                 " cannot be constrained to itself");
        // set_slot checks rest and stiffness too, but only after a layer may have grown.
        check_values(rest, stiffness);
        const SlotRef a = make_room(i);
        (*this)[a.layer].set_slot(i, a.slot, std::int32_t(j), rest, stiffness);
        const SlotRef b = make_room(j);
        (*this)[b.layer].set_slot(j, b.slot, std::int32_t(i), rest, stiffness);
        return {a, b};
    }

    /// Views of every layer, layer 0 first.
    std::vector<ConstraintArrays<T>> views() const
    {
        std::vector<ConstraintArrays<T>> out{m_base.arrays_view()};
        for (const auto& layer : m_extra)
            out.push_back(layer.arrays_view());
        return out;
    }

    /// Views of the layers past layer 0, for the solve.
    std::vector<ConstraintArrays<T>> extra_views() const
    {
        std::vector<ConstraintArrays<T>> out;
        out.reserve(m_extra.size());
        for (const auto& layer : m_extra)
            out.push_back(layer.arrays_view());
        return out;
    }

    /// Applies a particle removal to every layer (see DirectedConstraints4::compact); layers left
    /// with no wired slot go.
    void compact(const std::vector<std::int32_t>& remap, std::size_t new_size)
    {
        m_base.compact(remap, new_size);
        for (auto& layer : m_extra)
            layer.compact(remap, new_size);
        drop_empty_layers();
        remap_links([&](std::size_t p) { return remap[p]; });
    }

    /// Applies a renumbering to every layer (see DirectedConstraints4::permute).
    void permute(std::size_t first, const std::vector<std::size_t>& order, const std::vector<std::int32_t>& where)
    {
        m_base.permute(first, order, where);
        for (auto& layer : m_extra)
            layer.permute(first, order, where);
        remap_links([&](std::size_t p) { return where[p]; });
        m_stamp = detail::next_edit_stamp();
    }

    /// Drops further layers whose every slot is empty (a removed mesh cloth's).
    void drop_empty_layers()
    {
        const auto empty = [](const Layer& layer) {
            for (int s = 0; s < kSlots; ++s)
                for (const std::int32_t j : layer.neighbours(s))
                    if (j >= 0)
                        return false;
            return true;
        };
        const auto before = m_extra.size();
        std::erase_if(m_extra, empty);
        if (m_extra.size() != before)
            m_stamp = detail::next_edit_stamp();
    }

    /// Changes with every edit of any layer and with every layer added or dropped: stamps are drawn
    /// from one rising counter, so the largest of them moves whenever anything changes.
    std::uint64_t edit_stamp() const noexcept
    {
        std::uint64_t stamp = std::max(m_stamp, m_base.edit_stamp());
        for (const auto& layer : m_extra)
            stamp = std::max(stamp, layer.edit_stamp());
        return stamp;
    }

    friend bool operator==(const ConstraintLayers& a, const ConstraintLayers& b)
    {
        return a.m_base == b.m_base && a.m_extra == b.m_extra;
    }

  private:
    template <class U>
    friend struct detail::SnapshotAccess;

    static std::uint64_t pair_key(std::size_t a, std::size_t b) noexcept
    {
        return std::uint64_t(std::min(a, b)) << 32 | std::uint64_t(std::max(a, b));
    }

    /// clear_between, recorded for cleared_since when it changed anything.
    void clear_recorded(std::size_t i, std::size_t j)
    {
        const std::uint64_t before = edit_stamp();
        clear_between(i, j);
        const std::uint64_t after = edit_stamp();
        if (after == before)
            return;
        if (m_cleared.size() >= kClearedKept)
            m_cleared.erase(m_cleared.begin(), m_cleared.begin() + std::ptrdiff_t(kClearedKept / 2));
        m_cleared.push_back({std::int32_t(std::min(i, j)), std::int32_t(std::max(i, j)), before, after});
    }

    void clear_between(std::size_t i, std::size_t j)
    {
        for (std::size_t k = 0; k < count(); ++k)
        {
            Layer& layer = (*this)[k];
            for (int s = 0; s < kSlots; ++s)
            {
                if (layer.covers(i) && layer.neighbour(i, s) == std::int32_t(j))
                    layer.clear_slot(i, s);
                if (layer.covers(j) && layer.neighbour(j, s) == std::int32_t(i))
                    layer.clear_slot(j, s);
            }
        }
    }

    /// Renumbers the links' particles; a link with a removed end goes.
    template <class Map>
    void remap_links(Map&& to)
    {
        if (m_links.empty())
            return;
        std::unordered_multimap<std::uint64_t, std::pair<std::int32_t, std::int32_t>> moved;
        for (const auto& [key, cd] : m_links)
        {
            const std::int32_t a = to(std::size_t(key >> 32)), b = to(std::size_t(key & 0xffffffffu)),
                               c = to(std::size_t(cd.first)), d = to(std::size_t(cd.second));
            if (a >= 0 && b >= 0 && c >= 0 && d >= 0)
                moved.emplace(pair_key(std::size_t(a), std::size_t(b)), std::pair{c, d});
        }
        m_links = std::move(moved);
    }

    std::size_t check_layer(std::size_t k) const
    {
        if (k >= count())
            detail::raise<std::out_of_range>("simdverlet: constraint layer " + std::to_string(k) +
                                             " is out of range (there are " + std::to_string(count()) + ")");
        return k;
    }

    void check_particle(std::size_t i) const
    {
        if (i >= size())
            detail::raise<std::out_of_range>("simdverlet: " + detail::describe_index(i, size()));
    }

    static void check_values(T rest, T stiffness)
    {
        if (!std::isfinite(rest) || rest < T(0))
            detail::raise<std::invalid_argument>("simdverlet: rest length must be finite and >= 0, got " +
                                                 detail::number(rest));
        if (!std::isfinite(stiffness) || stiffness < T(0))
            detail::raise<std::invalid_argument>("simdverlet: stiffness must be finite and >= 0, got " +
                                                 detail::number(stiffness));
    }

    /// A free slot for particle i: the lowest layer's that covers it; else a slot in the lowest
    /// further layer that can grow to cover i by at most its own size (so layers built in index
    /// order grow by doubling, and none grows across a far gap); else a new layer over i's block.
    SlotRef make_room(std::size_t i)
    {
        if (const auto free = free_slot(i))
            return *free;
        const std::size_t block = simd::kPadLanes<T>, lo = i / block * block, hi = std::min(lo + block, size());
        for (std::size_t k = 0; k < m_extra.size(); ++k)
        {
            Layer& layer = m_extra[k];
            if (layer.covers(i))
                continue;
            const std::size_t grown = std::max(layer.end(), hi) - std::min(layer.first(), lo);
            if (grown <= 2 * std::max(layer.size(), block))
            {
                layer.cover(lo, hi);
                return {k + 1, *layer.free_slot(i)};
            }
        }
        const std::size_t k = add_layer(lo, hi);
        return {k, 0};
    }

    Layer m_base;
    std::deque<Layer> m_extra;
    std::uint64_t m_stamp = 0; ///< layers added, dropped or renumbered
    /// Springs that go with another (link): key (min, max) of the spring, value the linked pair.
    std::unordered_multimap<std::uint64_t, std::pair<std::int32_t, std::int32_t>> m_links;
    /// A spring clear_spring cleared, with the edit stamps just before and after (cleared_since).
    struct Cleared
    {
        std::int32_t a, b;
        std::uint64_t before, after;
    };
    /// The latest clears, oldest first; past kClearedKept the older half goes, and a stage that
    /// built before them rebuilds instead.
    std::vector<Cleared> m_cleared;
    static constexpr std::size_t kClearedKept = std::size_t(1) << 16;
};

} // namespace simdverlet
