// The lane loops of a position projection (colliders, tethers, strain limits, motion
// constraints): a projection is written once over a lane group V and these loops run it over a
// particle range, vector or scalar, storing back only what it touched.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simdverlet/kernels/core.hpp"

namespace simdverlet::kernels
{

// ---------------------------------------------------------------------------------------------
// position projections

/// One lane group of particles (V = T: one particle; V = Batch<T>: a batch of them), positions and
/// previous positions, as a projection reads and rewrites them.
template <class V>
struct ParticleLanes
{
    V x, y, z, px, py, pz;
};

/// Runs `fn(ParticleLanes<Batch>&, movable) -> touched` over particles [begin, end) in lane groups,
/// vector twin. `movable` marks lanes inside the range whose particle is not pinned; fn must leave
/// other lanes' values as it found them. Lane groups fn touched are stored back. Returns the number
/// of touched particles. Any begin works: lanes before it are masked out, not read as a scalar head.
/// A stage with per-particle data of its own takes a third argument, the particle in lane 0 (a
/// multiple of the batch size), and reads its arrays there (simd::load_lanes). kPrevious = false
/// leaves the previous positions unread and unwritten (zero in fn's lanes): half the memory traffic
/// for a projection that moves x alone.
template <class Arch, bool kPrevious = true, class T, class Fn>
int project_lanes_vector(const StateArrays<T>& s, std::size_t begin, std::size_t end, Fn&& fn)
{
    using B = simd::Batch<T, Arch>;
    using M = simd::Mask<T, Arch>;
    constexpr std::size_t L = B::size;
    alignas(simd::kAlignment) T iota_lanes[L];
    for (std::size_t k = 0; k < L; ++k)
        iota_lanes[k] = T(k);
    const B iota = simd::load<T, Arch>(iota_lanes);
    const B zero(T(0));
    int touched_count = 0;
    for (std::size_t i = begin / L * L; i < end; i += L)
    {
        // Lane bounds relative to i are below L, so they are exact in T however large i is.
        const T lo = T(begin > i ? begin - i : 0);
        const T hi = T(end - i < L ? end - i : L);
        M movable = (iota >= B(lo)) && (iota < B(hi));
        if (s.inv_mass)
            movable = movable && (simd::load<T, Arch>(s.inv_mass + i) != zero);
        ParticleLanes<B> p{
            simd::load<T, Arch>(s.x + i), simd::load<T, Arch>(s.y + i), simd::load<T, Arch>(s.z + i), zero, zero, zero};
        if constexpr (kPrevious)
        {
            p.px = simd::load<T, Arch>(s.px + i);
            p.py = simd::load<T, Arch>(s.py + i);
            p.pz = simd::load<T, Arch>(s.pz + i);
        }
        M touched;
        if constexpr (std::is_invocable_v<Fn&, ParticleLanes<B>&, const M&>)
            touched = fn(p, movable);
        else
            touched = fn(p, movable, i);
        if (!simd::any<T, Arch>(touched))
            continue;
        touched_count += simd::count<T, Arch>(touched);
        simd::store<T, Arch>(s.x + i, p.x);
        simd::store<T, Arch>(s.y + i, p.y);
        simd::store<T, Arch>(s.z + i, p.z);
        if constexpr (kPrevious)
        {
            simd::store<T, Arch>(s.px + i, p.px);
            simd::store<T, Arch>(s.py + i, p.py);
            simd::store<T, Arch>(s.pz + i, p.pz);
        }
    }
    return touched_count;
}

/// project_lanes_vector over one tile of a grid of particles instead of a run of them: rows of
/// simd::kTileColumns particles, the first at `first`, each `stride` after the one above, of which
/// the first `columns` are particles (the rest masked out, neither read nor written). Lane
/// r * kTileColumns + c is particle first + r * stride + c. Returns the touched particles.
template <class Arch, bool kPrevious = true, class T, class Fn>
int project_tile_vector(const StateArrays<T>& s, std::size_t first, std::size_t stride, std::size_t columns, Fn&& fn)
{
    using B = simd::Batch<T, Arch>;
    using M = simd::Mask<T, Arch>;
    constexpr std::size_t L = B::size;
    const B zero(T(0));
    const auto load = [&](const T* a) { return simd::load_tile<T, Arch>(a + first, stride, columns); };
    const auto store = [&](T* a, const B& v) { simd::store_tile<T, Arch>(a + first, stride, v, columns); };
    M movable = zero == zero;
    if (columns < simd::kTileColumns<T, Arch>) // a grid's right edge: only there are lanes not particles
    {
        alignas(simd::kAlignment) T column_lanes[L];
        for (std::size_t k = 0; k < L; ++k)
            column_lanes[k] = T(k % simd::kTileColumns<T, Arch>);
        movable = simd::load<T, Arch>(column_lanes) < B(T(columns));
    }
    if (s.inv_mass)
        movable = movable && (load(s.inv_mass) != zero);
    ParticleLanes<B> p{load(s.x), load(s.y), load(s.z), zero, zero, zero};
    if constexpr (kPrevious)
    {
        p.px = load(s.px);
        p.py = load(s.py);
        p.pz = load(s.pz);
    }
    const M touched = fn(p, movable);
    if (!simd::any<T, Arch>(touched))
        return 0;
    store(s.x, p.x);
    store(s.y, p.y);
    store(s.z, p.z);
    if constexpr (kPrevious)
    {
        store(s.px, p.px);
        store(s.py, p.py);
        store(s.pz, p.pz);
    }
    return simd::count<T, Arch>(touched);
}

/// Scalar twin of project_lanes_vector: fn receives ParticleLanes<T>, a bool and, if it takes one,
/// the particle's index.
template <class T, class Fn>
int project_lanes_scalar(const StateArrays<T>& s, std::size_t begin, std::size_t end, Fn&& fn)
{
    int touched_count = 0;
    for (std::size_t i = begin; i < end; ++i)
    {
        if (s.inv_mass && s.inv_mass[i] == T(0))
            continue;
        ParticleLanes<T> p{s.x[i], s.y[i], s.z[i], s.px[i], s.py[i], s.pz[i]};
        bool touched;
        if constexpr (std::is_invocable_v<Fn&, ParticleLanes<T>&, bool>)
            touched = fn(p, true);
        else
            touched = fn(p, true, i);
        if (!touched)
            continue;
        ++touched_count;
        s.x[i] = p.x;
        s.y[i] = p.y;
        s.z[i] = p.z;
        s.px[i] = p.px;
        s.py[i] = p.py;
        s.pz[i] = p.pz;
    }
    return touched_count;
}

} // namespace simdverlet::kernels
