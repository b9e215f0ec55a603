// ConstraintLayers<T>: a simulation's constraint layers, layer 0 over every particle and further
// layers over the ranges whose particles need more than kSlots springs (constraints.hpp holds one
// layer), with the edits that keep a spring's two halves together across them.
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

#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

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
