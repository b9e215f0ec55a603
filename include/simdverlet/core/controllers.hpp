// Per-particle controllers built on force generators. The PID position controller pulls one
// particle toward a target through the force accumulators, so the constraint solve sees the pull
// and the rest of a sheet follows it, where a teleport would move one particle out of the sheet
// and leave the springs to snap it back.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "simdverlet/core/error.hpp"
#include "simdverlet/core/stage_state.hpp"
#include "simdverlet/core/state.hpp"

namespace simdverlet
{

namespace detail
{
template <class T>
class World;
template <class T>
std::shared_ptr<World<T>> lock_world(const std::weak_ptr<World<T>>& world, const std::string& handle);
} // namespace detail

/// Gains of a PID position controller. Forces are in the solver's units (they are multiplied by
/// the particle's inverse mass and dt^2 like every other force). The defaults are tuned for a unit
/// mass at dt = 1/60: kp dt^2 ~ 0.28 and kd dt ~ 0.67 keep the discrete loop well damped (its
/// poles sit at |z| ~ 0.57), and kp = 1000 outweighs the four springs of a grid particle at the
/// default stiffness x iterations of a few hundred, so a grabbed particle follows the hand closely.
template <class T>
struct PidGains
{
    T kp = T(1000); ///< force per world unit of position error; higher follows tighter, too high rings
    T ki = T(0);    ///< force per (world unit x second) of accumulated error; removes the steady offset
                    ///< a constant load leaves (load / kp), at the price of overshoot. Off by default.
    T kd = T(40);   ///< force per (world unit / second) of error rate; damps the approach.
};

/// What add_pid_controller adds.
template <class T>
struct PidControllerOptions
{
    std::size_t particle = 0;         ///< the particle pulled
    Vec3<T> target = Vec3<T>::Zero(); ///< where it is pulled toward
    PidGains<T> gains = {};
};

namespace detail
{
template <class T>
struct PidState
{
    Vec3<T> target;
    PidGains<T> gains;
    Vec3<T> integral = Vec3<T>::Zero();
    Vec3<T> previous_error = Vec3<T>::Zero();
    bool started = false;

    /// Derivative on the error, not on the measurement, so a hand moving at constant speed is
    /// tracked without lag; the first call seeds the previous error so a fresh grab does not kick.
    Vec3<T> force(const Vec3<T>& position, T dt)
    {
        const Vec3<T> error = target - position;
        if (!started)
        {
            previous_error = error;
            started = true;
        }
        integral += error * dt;
        const Vec3<T> rate = (error - previous_error) / dt;
        previous_error = error;
        return gains.kp * error + gains.ki * integral + gains.kd * rate;
    }
};

/// What a snapshot keeps of a controller: its target and the memory of its loop.
template <class T>
StageState pid_stage_state(std::shared_ptr<PidState<T>> pid)
{
    return field_state(std::move(pid), [](PidState<T>& p) {
        return std::tie(p.target.x(), p.target.y(), p.target.z(), p.integral.x(), p.integral.y(), p.integral.z(),
                        p.previous_error.x(), p.previous_error.y(), p.previous_error.z(), p.started);
    });
}

template <class T>
void check_gains(const PidGains<T>& g)
{
    for (T v : {g.kp, g.ki, g.kd})
        if (!std::isfinite(v) || v < T(0))
            detail::raise<std::invalid_argument>("simdverlet: PID gains must be finite and >= 0, got " + number(v));
}
} // namespace detail

/// Handle of a PID position controller registered on a simulation, with the shape of every stage
/// handle (handle.hpp): copies address the same controller; once removed() is true, every call
/// but removed() and remove() throws std::logic_error naming the controller.
template <class T>
class PidController
{
  public:
    PidController() = default;

    /// Moves the point the particle is pulled toward.
    void set_target(const Vec3<T>& target)
    {
        if (!target.allFinite())
            detail::raise<std::invalid_argument>("simdverlet: PID target is not finite");
        live_state().target = target;
    }
    Vec3<T> target() const { return reported_state().target; }

    void set_gains(const PidGains<T>& gains)
    {
        detail::check_gains(gains);
        live_state().gains = gains;
    }
    PidGains<T> gains() const { return reported_state().gains; }

    /// The controlled particle's current index (removals below it renumber it); empty once the
    /// controller was removed or its particle was.
    std::optional<std::size_t> particle() const;

    /// Unregisters the controller; returns whether it was still registered. Throws
    /// std::logic_error naming the controller when its simulation was destroyed.
    bool remove();

    /// True after remove(), once the controlled particle was removed from the simulation, or once
    /// the simulation is gone.
    bool removed() const;

  private:
    friend class detail::World<T>;
    PidController(std::weak_ptr<detail::World<T>> world, std::uint64_t id, std::shared_ptr<detail::PidState<T>> state,
                  std::string owner)
        : m_world(std::move(world)), m_id(id), m_state(std::move(state)), m_owner(std::move(owner))
    {
    }

    /// How errors name this controller: by its owner when a handle installed it (a cloth's grab).
    std::string describe() const
    {
        const std::string id = "PID controller #" + std::to_string(m_id);
        return m_owner.empty() ? id : m_owner + " (" + id + ")";
    }

    /// The controller's settings for a member that reports: readable after removal too.
    const detail::PidState<T>& reported_state() const
    {
        if (!m_state)
            detail::raise<std::logic_error>("simdverlet: this PID controller was never attached to a simulation");
        return *m_state;
    }

    detail::PidState<T>& live_state() const
    {
        if (!m_state)
            detail::raise<std::logic_error>("simdverlet: this PID controller was never attached to a simulation");
        if (removed())
        {
            detail::lock_world(m_world, describe()); // names a destroyed simulation
            detail::raise<std::logic_error>("simdverlet: " + describe() + " was removed");
        }
        return *m_state;
    }

    std::weak_ptr<detail::World<T>> m_world;
    std::uint64_t m_id = 0;
    std::shared_ptr<detail::PidState<T>> m_state;
    std::string m_owner;
};

} // namespace simdverlet
