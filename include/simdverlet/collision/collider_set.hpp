// The collider set: a list of colliders (colliders.hpp, mesh_collider.hpp, or a user's own
// Collider) run as one position projection after integration, every collider in order over a
// particle range, split across an executor's chunks; it also reports the colliders' contact planes
// to an implicit solve (core/contact_planes.hpp).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simdverlet/collision/collider.hpp"
#include "simdverlet/core/contact_planes.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/handle.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

/// Options of add_colliders.
struct ColliderSetOptions
{
    /// Key in the position-projection registry; default "colliders", followed by "@[begin, end)" for
    /// a range short of every particle. A name registered already is an error.
    std::string name = {};
    ParticleRange range = {}; ///< particles to collide; default all, re-read every frame
    int relaxations = 1;      ///< >= 1 runs of the whole list per frame. 2 settles a particle in a
                              ///< crease between two shapes to ~1e-4; most scenes have none
};

namespace detail
{
/// A collider set's colliders and settings, shared by every copy of its handle and by the pass.
template <class T>
struct ColliderSetData
{
    StageLink<T> link;
    ParticleRange range;
    int relaxations = 1;
    int contacts = 0;
    std::vector<std::unique_ptr<Collider<T>>> colliders;
    /// Per chunk of the last pass, per collider, its contacts: kept between passes, so a step
    /// allocates nothing here (an allocation each substep is a trim and a page fault each under a
    /// low MALLOC_TRIM_THRESHOLD_, as Dask's workers run).
    std::vector<std::vector<int>> chunk_contacts;

    /// The pass: every collider in order over the range, `relaxations` times. With an executor the
    /// range is split into its chunks and the chunks run concurrently, each applying every
    /// collider in order to its own particles (a particle's colliders stay in series, and an
    /// SdfCollider's field must then be safe to call from several threads).
    void project(World<T>& world, State3<T>& state);

    /// The planes of every enabled collider, in list order, for the queried particles the set's
    /// range covers.
    void add_planes(const PlaneQuery& query, std::vector<ContactPlane>& out, std::size_t particles) const
    {
        const auto [begin, end] = range.resolve(particles);
        if (begin <= query.begin && query.end <= end)
        {
            for (const auto& c : colliders)
                if (c->enabled)
                    c->add_planes(query, out);
            return;
        }
        // Part of the query: the covered particles' positions, renumbered from their first.
        const std::size_t first = std::max(query.begin, begin), last = std::min(query.end, end);
        if (first >= last)
            return;
        const auto slice = [&](const std::vector<Vec3<double>>* all) {
            return std::vector<Vec3<double>>(all->begin() + std::ptrdiff_t(first - query.begin),
                                             all->begin() + std::ptrdiff_t(last - query.begin));
        };
        const std::vector<Vec3<double>> at = slice(query.at), from = slice(query.from);
        const PlaneQuery covered{.begin = first, .end = last, .at = &at, .from = &from, .reach = query.reach};
        for (const auto& c : colliders)
            if (c->enabled)
                c->add_planes(covered, out);
    }
};

template <class T>
void ColliderSetData<T>::project(World<T>& world, State3<T>& state)
{
    contacts = 0;
    const auto bounds = range.resolve(state.size());
    const std::size_t begin = bounds.first, end = bounds.second; // named, not bound: lambdas capture them
    const auto view = state.arrays_view();
    const std::size_t n = colliders.size();
    if (n == 0 || begin >= end)
    {
        for (auto& c : colliders)
        {
            c->m_contacts = 0;
            c->end_pass(); // an empty pass still ends: a mesh's motion is not swept later
        }
        return;
    }
    CallProgress<T> call = world.call_progress();
    if (call.call == 0) // driven outside any call of step()
        call.call = next_call_id();
    for (auto& c : colliders)
        if (c->enabled)
        {
            c->m_simulation_vectorized = world.vectorized();
            c->m_call = call;
            c->begin_pass(state.size());
        }
    const auto run_range = [&](std::size_t b, std::size_t e, std::vector<int>& count) {
        for (int r = 0; r < relaxations; ++r)
            for (std::size_t k = 0; k < n; ++k)
                if (colliders[k]->enabled)
                    count[k] += colliders[k]->project_range(view, b, e);
    };
    // Chunks are cut on absolute particle indices from 0, so their bounds are whole padding
    // blocks and two chunks never share a lane group.
    const std::size_t chunks = world.chunk_count(end);
    if (chunk_contacts.size() < chunks)
        chunk_contacts.resize(chunks);
    for (std::size_t c = 0; c < chunks; ++c)
        chunk_contacts[c].assign(n, 0);
    world.for_each_indexed_chunk(
        begin, end, [&](std::size_t c, std::size_t b, std::size_t e) { run_range(b, e, chunk_contacts[c]); });
    for (auto& c : colliders)
        c->end_pass();
    for (std::size_t k = 0; k < n; ++k)
    {
        int total = 0;
        for (std::size_t c = 0; c < chunks; ++c)
            total += chunk_contacts[c][k];
        colliders[k]->m_contacts = total;
        contacts += total;
    }
}

inline void check_relaxations(int n)
{
    if (n < 1)
        raise<std::invalid_argument>("simdverlet: collider relaxations must be >= 1, got " + std::to_string(n));
}
} // namespace detail

/// Several colliders run as one position-projection pass, in list order and in series: a particle
/// in the crease between a sphere and a floor is pushed off the sphere, then off the floor, and
/// the floor must see the sphere's result. Live: add, remove, move and retune between frames. A
/// value handle with the shape of every stage handle (handle.hpp); a default-constructed one
/// names no set and reports removed().
template <class T>
class ColliderSet : public detail::StageHandle<T, detail::ColliderSetData<T>>
{
    using Base = detail::StageHandle<T, detail::ColliderSetData<T>>;

  public:
    ColliderSet() = default;

    /// Appends a collider and returns a reference to it that stays valid until it is removed.
    template <std::derived_from<Collider<T>> C>
    C& add(C collider)
    {
        auto owned = std::make_unique<C>(std::move(collider));
        C& ref = *owned;
        this->live().colliders.push_back(std::move(owned));
        return ref;
    }

    using Base::remove;
    /// Drops a collider; returns whether it was in the set.
    bool remove(const Collider<T>& collider)
    {
        auto& list = this->live().colliders;
        const auto it = std::find_if(list.begin(), list.end(), [&](const auto& c) { return c.get() == &collider; });
        if (it == list.end())
            return false;
        list.erase(it);
        return true;
    }

    std::size_t size() const noexcept { return this->data().colliders.size(); }
    Collider<T>& operator[](std::size_t i) const { return *this->data().colliders.at(i); }

    int relaxations() const noexcept { return this->data().relaxations; }
    /// Throws std::invalid_argument, changing nothing, unless >= 1.
    void set_relaxations(int n)
    {
        auto& d = this->live();
        detail::check_relaxations(n);
        d.relaxations = n;
    }

    const ParticleRange& range() const noexcept { return this->data().range; }
    void set_range(const ParticleRange& range)
    {
        auto& d = this->live();
        range.check();
        d.range = range;
    }

    /// Contacts across every collider and relaxation of the last pass.
    int contacts() const noexcept { return this->data().contacts; }

  private:
    template <class U, std::derived_from<Collider<U>>... Colliders>
    friend ColliderSet<U> add_colliders(Simulation<U>& sim, ColliderSetOptions options, Colliders... colliders);
    explicit ColliderSet(std::shared_ptr<detail::ColliderSetData<T>> data) : Base(std::move(data)) {}
};

/// Registers a ColliderSet as one position projection and returns its handle. The colliders given
/// here are added in order; more can be added through the handle. Throws std::invalid_argument,
/// registering nothing, on relaxations < 1, a range with begin after end or a name registered
/// already.
///     auto world = add_colliders(sim, {}, SphereCollider<float>({.center = {2.5f, 3, 0}, .radius = 1.2f}),
///                                PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -6}));
template <class T, std::derived_from<Collider<T>>... Colliders>
ColliderSet<T> add_colliders(Simulation<T>& sim, ColliderSetOptions options = {}, Colliders... colliders)
{
    detail::check_relaxations(options.relaxations);
    options.range.check();
    options.name = detail::stage_name(sim.position_projections(), options.name,
                                      "colliders" + detail::range_suffix(options.range));
    auto data = std::make_shared<detail::ColliderSetData<T>>();
    data->range = options.range;
    data->relaxations = options.relaxations;
    (data->colliders.push_back(std::make_unique<Colliders>(std::move(colliders))), ...);
    const auto registration = detail::register_projection(
        sim, data, options.name, "collider set",
        [](auto& d, auto& world, State3<T>& state) { d.project(world, state); });
    detail::world_of(sim)->add_plane_source(registration, [d = data.get(), w = detail::world_of(sim).get()](
                                                              const PlaneQuery& query, std::vector<ContactPlane>& out) {
        d->add_planes(query, out, w->size());
    });
    return ColliderSet<T>(std::move(data));
}

} // namespace simdverlet
