// Snapshots: the state, the constraint set, the step count and the divergence flag of a
// simulation, copied out and back bit for bit, and a versioned binary format for them with a
// checksum. Stages (colliders, cloth curvature, tearing, wind...) are code, not data: they are
// not saved, and a restored simulation keeps the stages it has.
//
// Format, version 1, host byte order (a marker refuses a stream from the other order):
//   "SVLT" | u32 version | u32 byte-order marker 0x01020304 | u8 sizeof(T) | u8 has masses |
//   u64 particles | u64 steps | u8 diverged |
//   x y z px py pz ax ay az [inv_mass]: T[particles] each |
//   for slot 0..3: i32 neighbour[particles], T rest[particles], T stiffness[particles] |
//   u64 FNV-1a of every byte before it
#pragma once

#include <cstdint>
#include <cstring>
#include <istream>
#include <iterator>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "constraints.hpp"
#include "error.hpp"
#include "simulation.hpp"
#include "state.hpp"

namespace simdverlet
{

/// Everything a simulation holds as data.
template <class T>
struct Snapshot
{
    State3<T> state;
    DirectedConstraints4<T> constraints;
    std::uint64_t steps = 0;
    bool diverged = false;
};

inline constexpr std::uint32_t kSnapshotFormatVersion = 1;

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
        std::vector<simd::AlignedVector<T>*> a{&s.m_x, &s.m_y, &s.m_z, &s.m_px, &s.m_py, &s.m_pz, &s.m_ax, &s.m_ay, &s.m_az};
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

    static Snapshot<T> take(const Simulation<T>& sim) { return {sim.m_state, sim.m_constraints, sim.m_steps, sim.m_diverged}; }

    static void put(Simulation<T>& sim, const Snapshot<T>& snap)
    {
        sim.m_state = snap.state;
        sim.m_constraints = snap.constraints;
        sim.m_steps = snap.steps;
        sim.m_diverged = snap.diverged;
    }
};

/// Throws unless `snap` can replace what `sim` holds: same scalar layout, and a different particle
/// count only for a simulation with nothing that refers to particle indices.
template <class T>
void check_restorable(const Simulation<T>& sim, const Snapshot<T>& snap)
{
    if (snap.state.has_masses() != sim.state().has_masses())
        detail::raise<std::invalid_argument>(std::string("simdverlet: cannot restore a snapshot ") +
                                    (snap.state.has_masses() ? "with" : "without") +
                                    " per-particle masses into a simulation " +
                                    (sim.state().has_masses() ? "with" : "without") + " them");
    if (snap.constraints.size() != snap.state.size())
        detail::raise<std::invalid_argument>("simdverlet: snapshot constraints cover " + std::to_string(snap.constraints.size()) +
                                    " particles, its state " + std::to_string(snap.state.size()));
    if (snap.state.size() != sim.size() && (sim.has_index_references() || sim.pending_removals() > 0))
        detail::raise<std::logic_error>("simdverlet: cannot restore a snapshot of " + std::to_string(snap.state.size()) +
                               " particles into a simulation of " + std::to_string(sim.size()) +
                               " whose cloths, strands, controllers or queued removals refer to particle indices");
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
};
} // namespace detail

/// A bit-exact copy of what `sim` holds.
template <class T>
Snapshot<T> snapshot(const Simulation<T>& sim)
{
    return detail::SnapshotAccess<T>::take(sim);
}

/// Puts a snapshot back. Throws, changing nothing, when it does not fit (see check_restorable).
/// Stepping on from a restored snapshot gives the same bits as the run it was taken from.
template <class T>
void restore(Simulation<T>& sim, const Snapshot<T>& snap)
{
    detail::check_restorable(sim, snap);
    detail::SnapshotAccess<T>::put(sim, snap);
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
    for (int s = 0; s < 4; ++s)
    {
        put(A::neighbours(snap.constraints, s).data(), n * sizeof(std::int32_t));
        put(A::rests(snap.constraints, s).data(), n * sizeof(T));
        put(A::stiffnesses(snap.constraints, s).data(), n * sizeof(T));
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
    if (version != kSnapshotFormatVersion)
        detail::fail_load("format version " + std::to_string(version) + ", this build reads version " +
                          std::to_string(kSnapshotFormatVersion));
    if (r.read<std::uint32_t>("the byte-order marker") != detail::kByteOrderMarker)
        detail::fail_load("written on a machine of the other byte order");
    const auto scalar = r.read<std::uint8_t>("the scalar size");
    if (scalar != sizeof(T))
        detail::fail_load(std::string("it holds ") + (scalar == 4 ? "float" : scalar == 8 ? "double" : "unknown") +
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
    const std::uint64_t expected = r.at + n * (arrays * sizeof(T) + 4 * (4 + 2 * sizeof(T))) + 8;
    if (n > std::uint64_t(INT32_MAX) || expected != r.bytes.size())
        detail::fail_load("its particle count " + std::to_string(n) + " does not match its length");

    using A = detail::SnapshotAccess<T>;
    Snapshot<T> snap{A::blank_state(std::size_t(n), masses), DirectedConstraints4<T>(std::size_t(n)), steps, diverged};
    for (auto* array : A::arrays(snap.state))
        r.take(array->data(), std::size_t(n) * sizeof(T), "the particle arrays");
    for (int s = 0; s < 4; ++s)
    {
        r.take(A::neighbours(snap.constraints, s).data(), std::size_t(n) * 4, "the neighbours");
        r.take(A::rests(snap.constraints, s).data(), std::size_t(n) * sizeof(T), "the rest lengths");
        r.take(A::stiffnesses(snap.constraints, s).data(), std::size_t(n) * sizeof(T), "the stiffnesses");
        for (std::size_t i = 0; i < n; ++i)
        {
            const std::int32_t j = A::neighbours(snap.constraints, s)[i];
            const T rest = A::rests(snap.constraints, s)[i], k = A::stiffnesses(snap.constraints, s)[i];
            const bool sane = j >= -1 && j < std::int32_t(n) && j != std::int32_t(i) && std::isfinite(rest) &&
                              rest >= T(0) && std::isfinite(k) && k >= T(0) && (j >= 0 || k == T(0));
            if (!sane)
                detail::fail_load("slot " + std::to_string(s) + " of particle " + std::to_string(i) + " is invalid");
        }
    }
    const auto w = snap.state.inv_mass();
    for (std::size_t i = 0; i < w.size(); ++i)
        if (!(w[i] >= T(0)) || !std::isfinite(w[i]))
            detail::fail_load("inverse mass of particle " + std::to_string(i) + " is invalid");
    restore(sim, snap);
}

} // namespace simdverlet
