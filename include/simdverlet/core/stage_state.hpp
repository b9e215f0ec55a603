// Stage state: what a stage that keeps data between steps (a wind's clock, a PID controller's
// integral, tearing's counters) hands its simulation so that snapshots carry it. Snapshots copy
// the state and the constraints; without this a restored run would step on with the stages'
// state of the present, not of the snapshot, and stop being bit-identical to the run it copies.
#pragma once

#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>

namespace simdverlet
{

/// A stage's saved state, as bytes. Registered on a simulation under the stage's name
/// (Simulation::add_stage_state); snapshot() asks every registered one to save, restore() checks
/// that each accepts its bytes before any of them loads, so a failed restore changes nothing.
struct StageState
{
    std::function<std::string()> save;             ///< the stage's state now, as bytes
    std::function<bool(std::string_view)> accepts; ///< whether bytes are a state `load` can take
    std::function<void(std::string_view)> load;    ///< puts saved bytes back; only given accepted bytes

    /// Complete: all three functions are set.
    explicit operator bool() const noexcept { return save && accepts && load; }
};

namespace detail
{
/// A StageState over plain fields of a stage's shared data: `fields(data)` returns a std::tie of
/// references to trivially copyable values (scalars, counters, flags), saved in that order.
template <class Data, class Fields>
StageState field_state(std::shared_ptr<Data> data, Fields fields)
{
    const auto size = [fields](Data& d) {
        return std::apply([](auto&... v) { return (std::size_t(0) + ... + sizeof v); }, fields(d));
    };
    return {
        [data, fields] {
            return std::apply(
                [](auto&... v) {
                    std::string out;
                    (out.append(reinterpret_cast<const char*>(&v), sizeof v), ...);
                    return out;
                },
                fields(*data));
        },
        [data, size](std::string_view bytes) { return bytes.size() == size(*data); },
        [data, fields](std::string_view bytes) {
            std::apply(
                [&](auto&... v) {
                    std::size_t at = 0;
                    ((std::memcpy(&v, bytes.data() + at, sizeof v), at += sizeof v), ...);
                },
                fields(*data));
        },
    };
}
} // namespace detail

} // namespace simdverlet
