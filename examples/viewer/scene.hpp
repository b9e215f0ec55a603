// The viewer's scenes: each is a simulation built from the library's public calls, plus what the
// window needs to draw it and the settings its panel edits. Nothing here touches OpenGL.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simdverlet/simdverlet.hpp>

namespace viewer
{
namespace sv = simdverlet;
using Vec3 = sv::Vec3<float>;

/// What the panel edits. Each scene starts from its own values; `apply` pushes them into its
/// simulation, so a slider acts on the next step.
struct Settings
{
    float stiffness = 60.0f; ///< per slot, every cloth spring
    int iterations = 16;
    int substeps = 1;
    float wind = 0.0f;     ///< times the scene's wind field
    float friction = 0.5f; ///< colliders and self-collision alike
    bool self_collision = false;
    int threads = 1;
};

/// Where the camera starts: it orbits `target` at `distance`, `yaw` about the vertical, `pitch`
/// above the horizon (radians).
struct CameraStart
{
    Vec3 target = Vec3::Zero();
    float distance = 10.0f;
    float yaw = 0.0f;
    float pitch = 0.3f;
};

class Scene
{
  public:
    std::string name;
    sv::Simulation<float> sim;
    std::vector<sv::Cloth<float>> cloths;
    std::vector<sv::Strand<float>> strands;
    sv::ColliderSet<float> colliders; ///< drawn shaded; default-constructed (removed()) when the scene has none
    std::optional<sv::SelfCollision<float>> self_collision;
    std::shared_ptr<float> wind_strength = std::make_shared<float>(0.0f); ///< the gust field reads it
    sv::StepParams<float> params;
    std::function<void(Scene&, float time)> animate; ///< before each step, with the time since the start
    std::function<Vec3(const Scene&)> follow;        ///< where the camera looks each frame; unset: it stays
    Settings settings;
    CameraStart camera;
    float time = 0.0f;

    /// Pushes `s` into the simulation: spring stiffness, solver counts, wind, friction, threads.
    void apply(const Settings& s);

    /// One 60 Hz frame: the animation, then the step.
    void step();

    std::size_t particles() const { return sim.size(); }
};

/// The scenes, in the order keys 1-9 pick them.
const std::vector<std::string>& scene_names();

/// The OBJ file the garment scene dresses its body in instead of its own skirt (viewer --obj);
/// empty for the skirt.
void set_garment_file(std::string path);

/// Builds a scene by name; throws std::invalid_argument naming it and listing the known ones.
std::unique_ptr<Scene> make_scene(const std::string& name);

} // namespace viewer
