// Snapshots: the state, the constraint set, the step count, the divergence flag, the queued
// particle removals and the saved state of every stage that keeps any (a wind's clock, a grab's
// PID memory, tearing's counters: see stage_state.hpp), copied out and back bit for bit, and a versioned binary format for them
// with a checksum. Stages themselves are code, not data: a restored simulation keeps the stages it
// has, and a snapshot restores only into a simulation with the same stateful stages.
//
// Format, version 3, host byte order (a marker refuses a stream from the other order):
//   "SVLT" | u32 version | u32 byte-order marker 0x01020304 | u8 sizeof(T) | u8 has masses |
//   u64 particles | u64 steps | u8 diverged |
//   x y z px py pz ax ay az [inv_mass]: T[particles] each |
//   layer 0, for each slot: i32 neighbour[particles], T rest[particles], T stiffness[particles] |
//   u32 further layers | for each: u64 first, u64 rows, then per slot i32 neighbour[rows], T rest[rows],
//   T stiffness[rows] |
//   u32 queued removals | u32 particle[removals] |
//   u32 stages | for each: u32 name length, name, u64 byte count, bytes |
//   u64 FNV-1a of every byte before it
// Version 2 is version 3 without the further layers, and version 1 is version 2 without the removals
// and the stage section; both are still read (version 1 then restores only into a simulation with
// no stateful stage: there is nothing to give them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <istream>
#include <iterator>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// Everything a simulation holds as data.
template <class T>
struct Snapshot
{
    State3<T> state;
    DirectedConstraints4<T> constraints;         ///< layer 0
    std::vector<DirectedConstraints4<T>> layers; ///< the further constraint layers, in order
    std::uint64_t steps = 0;
    bool diverged = false;
    /// Particles queued with queue_remove, removed at the start of the next step: part of what the
    /// next step does, so part of the snapshot.
    std::vector<std::size_t> pending_removals;
    /// Each stateful stage's name and saved bytes, in the order the simulation registered them.
    std::vector<std::pair<std::string, std::string>> stages;
    /// The layer set's own edit stamp (layers added, dropped, renumbered) when it was taken; each
    /// layer carries its own. A restore puts them back, so the constraints read as the edit they
    /// were then, and a stage that derived something from them then (tether tables, chains) keeps
    /// it instead of rebuilding it at every restore. A snapshot loaded from bytes gets new stamps.
    std::uint64_t layers_stamp = 0;
};

inline constexpr std::uint32_t kSnapshotFormatVersion = 3;

namespace detail
{
inline constexpr char kSnapshotMagic[4] = {'S', 'V', 'L', 'T'};
inline constexpr std::uint32_t kByteOrderMarker = 0x01020304u;

inline std::uint64_t fnv1a(const char* data, std::size_t n)
{
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < n; ++i)
    {
        h ^= static_cast<unsigned char>(data[i]);
        h *= 1099511628211ull;
    }
    return h;
}

template <class T>
struct SnapshotAccess
{
    static std::vector<simd::AlignedVector<T>*> arrays(State3<T>& s)
    {
        std::vector<simd::AlignedVector<T>*> a{&s.m_x,  &s.m_y,  &s.m_z,  &s.m_px, &s.m_py,
                                               &s.m_pz, &s.m_ax, &s.m_ay, &s.m_az};
        if (s.m_has_masses)
            a.push_back(&s.m_w);
        return a;
    }

    /// A state of n particles, every array zeroed and padded, to be filled in.
    static State3<T> blank_state(std::size_t n, bool masses)
    {
        State3<T> s(masses ? Masses::per_particle : Masses::unit);
        s.m_size = n;
        s.resize_padded(simd::padded_count<T>(n));
        return s;
    }

    static simd::AlignedVector<std::int32_t>& neighbours(DirectedConstraints4<T>& k, int s) { return k.m_neighbour[s]; }
    static simd::AlignedVector<T>& rests(DirectedConstraints4<T>& k, int s) { return k.m_rest[s]; }
    static simd::AlignedVector<T>& stiffnesses(DirectedConstraints4<T>& k, int s) { return k.m_stiffness[s]; }
    /// After writing the arrays directly: a new edit stamp, as any edit gets.
    static void restamp(DirectedConstraints4<T>& k) { k.stamp(); }

    static Snapshot<T> take(const World<T>& world)
    {
        Snapshot<T> snap{world.m_state,         world.m_layers.base(), {}, world.m_steps, world.m_diverged, {}, {},
                         world.m_layers.m_stamp};
        snap.layers.assign(world.m_layers.m_extra.begin(), world.m_layers.m_extra.end());
        for (std::int32_t r : world.m_pending_removals)
            snap.pending_removals.push_back(std::size_t(r));
        for (const auto& [name, state] : world.stage_states())
            snap.stages.emplace_back(name, state.save());
        return snap;
    }

    /// Only after check_restorable passed: nothing here can fail half way.
    static void put(World<T>& world, const Snapshot<T>& snap)
    {
        world.m_state = snap.state;
        world.m_layers.m_base = snap.constraints;
        world.m_layers.m_extra.assign(snap.layers.begin(), snap.layers.end());
        world.m_layers.m_stamp = snap.layers_stamp;
        world.m_steps = snap.steps;
        world.m_diverged = snap.diverged;
        world.m_pending_removals.assign(snap.pending_removals.begin(), snap.pending_removals.end());
        // The accumulators now hold whatever the snapshot's did: have the next step zero them.
        world.m_accumulators_dirty = true;
        for (const auto& [name, state] : world.stage_states())
            state.load(saved_state(snap, name)->second);
    }

    static const std::pair<std::string, std::string>* saved_state(const Snapshot<T>& snap, const std::string& name)
    {
        for (const auto& stage : snap.stages)
            if (stage.first == name)
                return &stage;
        return nullptr;
    }
};

/// Throws unless the snapshot holds a state for exactly the stateful stages `world` has, each one
/// accepted by its stage.
template <class T>
void check_stage_states(const World<T>& world, const Snapshot<T>& snap)
{
    for (const auto& [name, state] : world.stage_states())
    {
        const auto* saved = SnapshotAccess<T>::saved_state(snap, name);
        if (!saved)
            detail::raise<std::logic_error>("simdverlet: cannot restore: the snapshot holds no state for stage '" +
                                            name +
                                            "', which this simulation has registered (take the snapshot after "
                                            "registering the stage)");
        if (!state.accepts(saved->second))
            detail::raise<std::invalid_argument>("simdverlet: cannot restore: stage '" + name +
                                                 "' does not accept the state saved for it");
    }
    for (const auto& saved : snap.stages) // not a structured binding: clang 14 cannot capture one
        if (std::none_of(world.stage_states().begin(), world.stage_states().end(),
                         [&](const auto& s) { return s.first == saved.first; }))
            detail::raise<std::logic_error>("simdverlet: cannot restore: the snapshot holds state for stage '" +
                                            saved.first + "', which this simulation does not have registered");
}

/// Throws unless `snap` can replace what `sim` holds: same scalar layout, and a different particle
/// count only for a simulation with nothing that refers to particle indices.
template <class T>
void check_restorable(const World<T>& sim, const Snapshot<T>& snap)
{
    if (snap.state.has_masses() != sim.state().has_masses())
        detail::raise<std::invalid_argument>(
            std::string("simdverlet: cannot restore a snapshot ") + (snap.state.has_masses() ? "with" : "without") +
            " per-particle masses into a simulation " + (sim.state().has_masses() ? "with" : "without") + " them");
    if (snap.constraints.size() != snap.state.size())
        detail::raise<std::invalid_argument>("simdverlet: snapshot constraints cover " +
                                             std::to_string(snap.constraints.size()) + " particles, its state " +
                                             std::to_string(snap.state.size()));
    for (std::size_t k = 0; k < snap.layers.size(); ++k)
        if (snap.layers[k].end() > snap.state.size() || snap.layers[k].particles() != snap.state.size())
            detail::raise<std::invalid_argument>("simdverlet: snapshot constraint layer " + std::to_string(k + 1) +
                                                 " covers [" + std::to_string(snap.layers[k].first()) + ", " +
                                                 std::to_string(snap.layers[k].end()) + ") of " +
                                                 std::to_string(snap.layers[k].particles()) +
                                                 " particles, its state holds " + std::to_string(snap.state.size()));
    if (snap.state.size() != sim.size() && (sim.has_index_references() || sim.pending_removals() > 0))
        detail::raise<std::logic_error>(
            "simdverlet: cannot restore a snapshot of " + std::to_string(snap.state.size()) +
            " particles into a simulation of " + std::to_string(sim.size()) +
            " whose cloths, strands, controllers or queued removals refer to particle indices");
    std::vector<bool> queued(snap.state.size(), false);
    for (const std::size_t r : snap.pending_removals)
    {
        if (r >= snap.state.size())
            detail::raise<std::invalid_argument>("simdverlet: snapshot queues particle " + std::to_string(r) +
                                                 " for removal, but holds " + std::to_string(snap.state.size()));
        if (queued[r])
            detail::raise<std::invalid_argument>("simdverlet: snapshot queues particle " + std::to_string(r) +
                                                 " for removal twice");
        queued[r] = true;
        sim.check_removable(r); // a cloth or strand registered since must not be renumbered
    }
    check_stage_states(sim, snap);
}

inline void fail_load(const std::string& why)
{
    detail::raise<std::runtime_error>("simdverlet: cannot load snapshot: " + why);
}

/// Reads a stream into memory, then takes fixed-size fields off its front.
struct Reader
{
    std::string bytes;
    std::size_t at = 0;

    void take(void* out, std::size_t n, const char* what)
    {
        if (bytes.size() - at < n)
            fail_load(std::string("the stream ends inside ") + what + " (truncated?)");
        if (n > 0) // an empty simulation's arrays have no storage: memcpy from or to null is UB
            std::memcpy(out, bytes.data() + at, n);
        at += n;
    }
    template <class V>
    V read(const char* what)
    {
        V v;
        take(&v, sizeof v, what);
        return v;
    }

    /// The next n bytes as a string; n is checked against what is left before anything is copied.
    std::string read_bytes(std::uint64_t n, const char* what)
    {
        if (at + 8 > bytes.size() || bytes.size() - 8 - at < n) // the checksum is not part of any field
            fail_load(std::string("the stream ends inside ") + what + " (truncated?)");
        std::string out = bytes.substr(at, std::size_t(n));
        at += std::size_t(n);
        return out;
    }
};

inline void read_stage_states(Reader& r, std::vector<std::pair<std::string, std::string>>& stages)
{
    const auto count = r.read<std::uint32_t>("the stage count");
    for (std::uint32_t k = 0; k < count; ++k)
    {
        std::string name = r.read_bytes(r.read<std::uint32_t>("a stage name's length"), "a stage name");
        std::string state = r.read_bytes(r.read<std::uint64_t>("a stage state's length"), "a stage state");
        if (name.empty())
            fail_load("stage " + std::to_string(k) + " has an empty name");
        for (const auto& stage : stages)
            if (stage.first == name)
                fail_load("it holds stage '" + name + "' twice");
        stages.emplace_back(std::move(name), std::move(state));
    }
}
} // namespace detail

/// A bit-exact copy of what `sim` holds.
template <class T>
Snapshot<T> snapshot(const Simulation<T>& sim)
{
    return detail::SnapshotAccess<T>::take(*detail::world_of(sim));
}

/// Puts a snapshot back, stage state included. Throws, changing nothing, when it does not fit (see
/// check_restorable). Stepping on from a restored snapshot gives the same bits as the run it was
/// taken from.
template <class T>
void restore(Simulation<T>& sim, const Snapshot<T>& snap)
{
    auto& world = *detail::world_of(sim);
    detail::check_restorable(world, snap);
    detail::SnapshotAccess<T>::put(world, snap);
}

/// Writes `sim` in the binary format above. Throws std::runtime_error if the stream fails.
template <class T>
void save(const Simulation<T>& sim, std::ostream& out)
{
    Snapshot<T> snap = snapshot(sim);
    using A = detail::SnapshotAccess<T>;
    std::string bytes;
    const auto put = [&](const void* p, std::size_t n) {
        if (n > 0) // an empty simulation's arrays have no storage
            bytes.append(static_cast<const char*>(p), n);
    };
    const std::uint32_t version = kSnapshotFormatVersion, marker = detail::kByteOrderMarker;
    const std::uint8_t scalar = sizeof(T), masses = snap.state.has_masses() ? 1 : 0, diverged = snap.diverged ? 1 : 0;
    const std::uint64_t n = snap.state.size(), steps = snap.steps;
    put(detail::kSnapshotMagic, 4);
    put(&version, 4);
    put(&marker, 4);
    put(&scalar, 1);
    put(&masses, 1);
    put(&n, 8);
    put(&steps, 8);
    put(&diverged, 1);
    for (auto* array : A::arrays(snap.state))
        put(array->data(), n * sizeof(T));
    const auto put_slots = [&](DirectedConstraints4<T>& layer) {
        const std::size_t rows = layer.size();
        for (int s = 0; s < kSlots; ++s)
        {
            put(A::neighbours(layer, s).data(), rows * sizeof(std::int32_t));
            put(A::rests(layer, s).data(), rows * sizeof(T));
            put(A::stiffnesses(layer, s).data(), rows * sizeof(T));
        }
    };
    put_slots(snap.constraints);
    const auto layers = std::uint32_t(snap.layers.size());
    put(&layers, 4);
    for (auto& layer : snap.layers)
    {
        const std::uint64_t first = layer.first(), rows = layer.size();
        put(&first, 8);
        put(&rows, 8);
        put_slots(layer);
    }
    const auto removals = std::uint32_t(snap.pending_removals.size());
    put(&removals, 4);
    for (std::size_t i : snap.pending_removals)
    {
        const auto index = std::uint32_t(i);
        put(&index, 4);
    }
    const auto stages = std::uint32_t(snap.stages.size());
    put(&stages, 4);
    for (const auto& [name, state] : snap.stages)
    {
        const auto name_length = std::uint32_t(name.size());
        const auto byte_count = std::uint64_t(state.size());
        put(&name_length, 4);
        put(name.data(), name.size());
        put(&byte_count, 8);
        put(state.data(), state.size());
    }
    const std::uint64_t checksum = detail::fnv1a(bytes.data(), bytes.size());
    put(&checksum, 8);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out)
        detail::raise<std::runtime_error>("simdverlet: writing the snapshot failed");
}

/// Reads a stream written by save() and restores it into `sim`. Everything is read, checked
/// (magic, version, byte order, scalar type, checksum, every slot's neighbour and values) and
/// assembled before `sim` is touched: a truncated, corrupt, wrong-type or wrong-version stream
/// throws std::runtime_error and leaves `sim` as it was.
template <class T>
void load(Simulation<T>& sim, std::istream& in)
{
    detail::Reader r{std::string(std::istreambuf_iterator<char>(in), {})};
    char magic[4];
    r.take(magic, 4, "the magic number");
    if (std::memcmp(magic, detail::kSnapshotMagic, 4) != 0)
        detail::fail_load("not a simdverlet snapshot (bad magic number)");
    const auto version = r.read<std::uint32_t>("the format version");
    if (version < 1 || version > kSnapshotFormatVersion)
        detail::fail_load("format version " + std::to_string(version) + ", this build reads versions 1 to " +
                          std::to_string(kSnapshotFormatVersion));
    if (r.read<std::uint32_t>("the byte-order marker") != detail::kByteOrderMarker)
        detail::fail_load("written on a machine of the other byte order");
    const auto scalar = r.read<std::uint8_t>("the scalar size");
    if (scalar != sizeof(T))
        detail::fail_load(std::string("it holds ") +
                          (scalar == 4   ? "float"
                           : scalar == 8 ? "double"
                                         : "unknown") +
                          " values, this simulation is " + (sizeof(T) == 4 ? "float" : "double"));
    // Check the checksum before trusting any size read from the stream.
    if (r.bytes.size() < r.at + 8)
        detail::fail_load("the stream ends before its checksum (truncated?)");
    std::uint64_t stored;
    std::memcpy(&stored, r.bytes.data() + r.bytes.size() - 8, 8);
    const std::uint64_t computed = detail::fnv1a(r.bytes.data(), r.bytes.size() - 8);
    if (stored != computed)
        detail::fail_load("checksum mismatch (corrupt or truncated stream)");
    const bool masses = r.read<std::uint8_t>("the mass flag") != 0;
    const auto n = r.read<std::uint64_t>("the particle count");
    const auto steps = r.read<std::uint64_t>("the step count");
    const bool diverged = r.read<std::uint8_t>("the divergence flag") != 0;
    const std::uint64_t arrays = masses ? 10 : 9;
    if (n > std::uint64_t(INT32_MAX))
        detail::fail_load("its particle count " + std::to_string(n) + " is more than a simulation holds");
    const std::uint64_t end_of_arrays = r.at + n * (arrays * sizeof(T) + kSlots * (4 + 2 * sizeof(T)));
    // Version 1 ends with the arrays; version 2 has at least a removal and a stage count after them,
    // version 3 a layer count before those.
    const std::uint64_t minimum = end_of_arrays + (version == 1 ? 0 : version == 2 ? 8 : 12) + 8;
    if (version == 1 ? minimum != r.bytes.size() : minimum > r.bytes.size())
        detail::fail_load("its particle count " + std::to_string(n) + " does not match its length");

    using A = detail::SnapshotAccess<T>;
    Snapshot<T> snap{A::blank_state(std::size_t(n), masses),
                     DirectedConstraints4<T>(std::size_t(n)),
                     {},
                     steps,
                     diverged,
                     {},
                     {},
                     detail::next_edit_stamp()};
    for (auto* array : A::arrays(snap.state))
        r.take(array->data(), std::size_t(n) * sizeof(T), "the particle arrays");
    const auto take_slots = [&](DirectedConstraints4<T>& layer, const std::string& where) {
        const std::size_t rows = layer.size();
        for (int s = 0; s < kSlots; ++s)
        {
            r.take(A::neighbours(layer, s).data(), rows * 4, "the neighbours");
            r.take(A::rests(layer, s).data(), rows * sizeof(T), "the rest lengths");
            r.take(A::stiffnesses(layer, s).data(), rows * sizeof(T), "the stiffnesses");
            for (std::size_t row = 0; row < rows; ++row)
            {
                const std::size_t i = layer.first() + row;
                const std::int32_t j = A::neighbours(layer, s)[row];
                const T rest = A::rests(layer, s)[row], k = A::stiffnesses(layer, s)[row];
                const bool sane = j >= -1 && j < std::int32_t(n) && j != std::int32_t(i) && std::isfinite(rest) &&
                                  rest >= T(0) && std::isfinite(k) && k >= T(0) && (j >= 0 || k == T(0));
                if (!sane)
                    detail::fail_load("slot " + std::to_string(s) + " of particle " + std::to_string(i) + where +
                                      " is invalid");
            }
        }
        A::restamp(layer);
    };
    take_slots(snap.constraints, "");
    if (version >= 3)
    {
        const auto layers = r.read<std::uint32_t>("the layer count");
        for (std::uint32_t k = 0; k < layers; ++k)
        {
            const auto first = r.read<std::uint64_t>("a layer's first particle");
            const auto rows = r.read<std::uint64_t>("a layer's row count");
            const std::string where = " in constraint layer " + std::to_string(k + 1);
            if (first % simd::kPadLanes<T> != 0 || first > n || rows > n - first)
                detail::fail_load("constraint layer " + std::to_string(k + 1) + " over [" + std::to_string(first) +
                                  ", +" + std::to_string(rows) + ") does not fit its " + std::to_string(n) +
                                  " particles");
            if (r.bytes.size() - r.at < rows * kSlots * (4 + 2 * sizeof(T)) + 8)
                detail::fail_load("the stream ends inside constraint layer " + std::to_string(k + 1) + " (truncated?)");
            take_slots(snap.layers.emplace_back(std::size_t(first), std::size_t(first + rows), std::size_t(n)), where);
        }
    }
    if (version >= 2)
    {
        const auto removals = r.read<std::uint32_t>("the removal count");
        for (std::uint32_t k = 0; k < removals; ++k)
        {
            const auto i = r.read<std::uint32_t>("the queued removals");
            if (i >= n)
                detail::fail_load("it queues particle " + std::to_string(i) + " for removal, of " + std::to_string(n));
            snap.pending_removals.push_back(i);
        }
        detail::read_stage_states(r, snap.stages);
    }
    if (r.at + 8 > r.bytes.size())
        detail::fail_load("the stream ends inside its stage states (truncated?)");
    if (r.at + 8 < r.bytes.size())
        detail::fail_load("it has " + std::to_string(r.bytes.size() - 8 - r.at) + " bytes after its last stage");
    const auto w = snap.state.inv_mass();
    for (std::size_t i = 0; i < w.size(); ++i)
        if (!(w[i] >= T(0)) || !std::isfinite(w[i]))
            detail::fail_load("inverse mass of particle " + std::to_string(i) + " is invalid");
    restore(sim, snap);
}

} // namespace simdverlet
