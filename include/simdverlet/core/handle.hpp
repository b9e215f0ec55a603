// The one shape every stage handle has (docs/architecture.md, "Handles"):
//   removed()  true once the stage is gone: unregistered by its handle or by name, replaced by a
//              stage registered under its name, or its simulation destroyed;
//   remove()   unregisters it and returns whether it was still registered (false after a removal
//              by the handle or by name, so cleanup code may call it twice);
//   the rest   a member that acts on the simulation or changes the stage throws
//              std::logic_error naming the handle once removed() is true, rather than write
//              settings no stage reads; members that report (name, settings, counters of the last
//              step, a block's indices) keep answering. Any member but removed() and the reports
//              throws once the simulation is destroyed, remove() included.
// A handle is a value: copies share one stage. StageLink keeps the rule in one place and
// StageHandle gives every handle removed(), remove() and name() from it.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/simulation.hpp"

namespace simdverlet::detail
{

/// The token a registered stage's closure owns. The registry destroys the closure when the stage
/// is unregistered, replaced or its simulation destroyed, and the token with it: a handle that
/// watches the token knows, without asking the registry, whether its stage is still the one
/// registered under its name.
using Registration = std::shared_ptr<const void>;

inline Registration make_registration()
{
    return std::make_shared<const char>(0);
}

/// Which registry a stage lives in: what remove() asks the world to drop.
template <class T>
using Unregister = bool (World<T>::*)(const std::string& name);

/// A handle's tie to its stage: the simulation, the stage's registry name, how errors name it and
/// the registration token it watches.
template <class T>
class StageLink
{
  public:
    StageLink() = default;
    /// `what` names the handle in messages ("tethers 'cape.tethers'"); `unregister` drops the
    /// stage by `name`; `registration` is the token the stage's closure owns.
    StageLink(std::weak_ptr<World<T>> world, std::string name, std::string what, const Registration& registration,
              Unregister<T> unregister)
        : m_world(std::move(world)),
          m_name(std::move(name)),
          m_what(std::move(what)),
          m_registration(registration),
          m_unregister(unregister)
    {
    }

    bool removed() const noexcept { return m_registration.expired() || m_world.expired(); }

    /// The stage's simulation. Throws std::logic_error naming the handle once removed().
    World<T>& live() const
    {
        const auto world = m_world.lock();
        if (!world)
            raise<std::logic_error>("simdverlet: " + m_what + " was used after its simulation was destroyed");
        if (m_registration.expired())
            raise<std::logic_error>("simdverlet: " + m_what + " was removed");
        return *world; // the simulation owns the world; the handle's caller holds the simulation
    }

    /// Unregisters the stage; false when it was already removed. Throws std::logic_error naming
    /// the handle when its simulation was destroyed.
    bool remove()
    {
        const auto world = m_world.lock();
        if (!world)
            raise<std::logic_error>("simdverlet: " + m_what + " was used after its simulation was destroyed");
        if (m_registration.expired())
            return false;
        return (world.get()->*m_unregister)(m_name);
    }

    const std::string& name() const noexcept { return m_name; }
    const std::string& what() const noexcept { return m_what; }
    const std::weak_ptr<World<T>>& world() const noexcept { return m_world; }

  private:
    std::weak_ptr<World<T>> m_world;
    std::string m_name;
    std::string m_what;
    std::weak_ptr<const void> m_registration;
    Unregister<T> m_unregister = nullptr;
};

/// Ties a stage's `data.link` to the stage about to be registered under `name` in the registry
/// `unregister` drops it from, and returns the token its closure must own. `kind` names the stage
/// in messages ("tethers").
template <class T, class Data>
Registration tie_link(const Simulation<T>& sim, Data& data, const std::string& name, const std::string& kind,
                      Unregister<T> unregister)
{
    auto registration = make_registration();
    data.link = StageLink<T>(world_of(sim), name, kind + " '" + name + "'", registration, unregister);
    return registration;
}

/// What a stage acts on, as its default name's suffix: nothing for every particle, "@[b, e)" for a
/// range (e "end" when it follows the simulation's size).
inline std::string range_suffix(const ParticleRange& range)
{
    if (range.begin == 0 && range.end == ParticleRange::kToEnd)
        return {};
    return "@[" + std::to_string(range.begin) + ", " +
           (range.end == ParticleRange::kToEnd ? std::string("end") : std::to_string(range.end)) + ")";
}

/// A stage's name: the one given, else `derived` (its kind and what it acts on, "tethers@cape").
/// Throws std::invalid_argument naming it when `registry` already holds it, before the stage
/// changes anything, so a second stage never replaces the first unasked.
template <class Fn>
std::string stage_name(const StageRegistry<Fn>& registry, const std::string& given, const std::string& derived)
{
    const std::string name = given.empty() ? derived : given;
    if (registry.contains(name))
        raise<std::invalid_argument>("simdverlet: a stage named '" + name + "' is registered already: " +
                                     (given.empty() ? "give the new one a .name" : "choose another .name") +
                                     ", or remove the old one first");
    return name;
}

/// Registers `run(data, world, state)` as the position projection `name`, tied to the stage's link,
/// and returns the registration token the projection owns.
template <class T, class Data, class Run>
Registration register_projection(Simulation<T>& sim, const std::shared_ptr<Data>& data, const std::string& name,
                                 const std::string& kind, Run run)
{
    const auto registration = tie_link(sim, *data, name, kind, &World<T>::remove_position_projection);
    sim.add_position_projection(name, [data, w = world_of(sim).get(), registration, run](State3<T>& state, T) {
        static_cast<void>(registration); // owned here: see Registration
        run(*data, *w, state);
    });
    return registration;
}

/// The base of a stage handle over the stage's shared data `Data`, which holds a StageLink<T>
/// named `link`: removed(), remove() and name(), and the two accessors the handle's members use,
/// live() before acting and data() to report. A default-constructed handle (a member waiting for
/// its stage) reports as an empty stage that was removed, and acting on it is a logic_error.
template <class T, class Data>
class StageHandle
{
  public:
    bool removed() const noexcept { return !m_data || m_data->link.removed(); }
    bool remove() { return m_data && m_data->link.remove(); }
    /// The stage's key in its registry and in snapshots.
    const std::string& name() const noexcept { return data().link.name(); }

  protected:
    StageHandle() = default;
    explicit StageHandle(std::shared_ptr<Data> data) : m_data(std::move(data)) {}

    /// The stage's data, for a member that acts; throws std::logic_error naming the handle once
    /// removed().
    Data& live() const
    {
        if (!m_data)
            raise<std::logic_error>("simdverlet: this handle was never given a stage");
        m_data->link.live();
        return *m_data;
    }
    /// The stage's simulation, on the same terms.
    World<T>& world() const
    {
        if (!m_data)
            raise<std::logic_error>("simdverlet: this handle was never given a stage");
        return m_data->link.live();
    }
    /// The stage's data, for a member that reports; an empty stage's for a handle never given one.
    /// Reporting members only read it, so the shared empty one never changes.
    const Data& data() const noexcept { return m_data ? *m_data : unset(); }
    const std::shared_ptr<Data>& shared() const noexcept { return m_data; }

  private:
    static const Data& unset() noexcept
    {
        static const Data none{};
        return none;
    }

    std::shared_ptr<Data> m_data;
};

/// The base of the handles of a block of particles (Cloth, Strand) over the block's shared data
/// `Data`, which holds its `world`, `name` and `removed` flag and names its kind in `Data::kind`
/// ("cloth"): reading it, reaching its world to act, and the liveness rule of every handle. A
/// default-constructed handle (a member waiting for its block) reads as an empty block that was
/// removed; acting on it throws std::logic_error.
template <class T, class Data>
class BlockHandle
{
  public:
    /// True once remove() detached the block or its simulation was destroyed, and for a handle
    /// never given one.
    bool removed() const noexcept { return d().removed || d().world.expired(); }

  protected:
    BlockHandle() = default;
    explicit BlockHandle(std::shared_ptr<Data> data) : m_data(std::move(data)) {}

    /// The block's data, to read; an empty block's for a handle never given one.
    const Data& d() const noexcept { return m_data ? *m_data : unset(); }
    /// The block's data, to change; throws std::logic_error for a handle never given one.
    Data& data()
    {
        require_block();
        return *m_data;
    }
    const std::shared_ptr<Data>& shared() const noexcept { return m_data; }
    bool has_block() const noexcept { return bool(m_data); }
    void require_block() const
    {
        if (!m_data)
            raise<std::logic_error>(std::string("simdverlet: this ") + Data::kind + " handle was never given a " +
                                    Data::kind);
    }
    /// How messages name it: "cloth 'cape'".
    std::string what() const { return std::string(Data::kind) + " '" + d().name + "'"; }
    /// The simulation, for a member that acts: throws std::logic_error naming the block once it was
    /// removed or its simulation destroyed.
    World<T>& world() const
    {
        auto& world = any_world();
        if (d().removed)
            raise<std::logic_error>("simdverlet: " + what() + " was removed");
        return world;
    }
    /// The simulation whether or not the block was removed: for remove() and for the stages that
    /// keep their half of a tie to a removed block.
    World<T>& any_world() const
    {
        require_block();
        return *lock_world(d().world, what());
    }
    State3<T>& state() const { return world().state(); }

  private:
    static const Data& unset() noexcept
    {
        static const Data none{};
        return none;
    }

    std::shared_ptr<Data> m_data;
};

} // namespace simdverlet::detail
