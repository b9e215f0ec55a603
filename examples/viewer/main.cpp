// viewer: the library's scenes in a window you can play with. Left drag grabs the nearest cloth
// particle through the cloth's PID grab (or orbits, away from the cloth), right drag cuts along the
// stroke, middle drag pans, the wheel zooms. Keys: space pause, . one step, r reset, d debug
// springs, 1-9 scenes, Esc quit. The panel edits stiffness, iterations, substeps, wind, friction,
// self-collision and threads while it runs.
//
//   viewer [--scene NAME] [--obj FILE] [--frames N --screenshot FILE.png [--drive]] [--size WIDTHxHEIGHT]
//
// --obj FILE dresses the garment scene's walking body in a garment of your own (an OBJ file,
// held at its top-most vertices) instead of the scene's skirt.
//
// With --frames and --screenshot it runs N frames without input, writes what the window shows as
// a PNG and exits 0: how CI checks it under Xvfb. --drive adds a scripted hand: a third of the way
// in it grabs the first cloth's middle particle and pulls it up the screen, two thirds in it cuts
// down the cloth, through the same code a mouse drives, and prints what it grabbed and cut.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include "renderer.hpp"
#include "scene.hpp"
#include "screenshot.hpp"

namespace viewer
{
namespace
{
struct Options
{
    std::string scene = "hello_cloth";
    int frames = 0; ///< > 0 with a screenshot: run this many frames headless, then write it
    std::string screenshot;
    bool drive = false; ///< headless: grab and cut with a scripted pointer
    int width = 1280, height = 720;
};

void usage(std::FILE* to)
{
    std::fprintf(to, "usage: viewer [--scene NAME] [--obj FILE] [--frames N --screenshot FILE.png [--drive]] "
                     "[--size WIDTHxHEIGHT]\n"
                     "scenes:");
    for (const auto& name : scene_names())
        std::fprintf(to, " %s", name.c_str());
    std::fprintf(to, "\n");
}

Options parse(int argc, char** argv)
{
    Options o;
    const auto value = [&](int& i) -> std::string {
        if (i + 1 >= argc)
            throw std::invalid_argument(std::string(argv[i]) + " needs a value");
        return argv[++i];
    };
    const auto number = [](const std::string& flag, const std::string& text) {
        std::size_t used = 0;
        int n = 0;
        try
        {
            n = std::stoi(text, &used);
        }
        catch (const std::exception&)
        {
            used = 0;
        }
        if (used != text.size() || n <= 0)
            throw std::invalid_argument(flag + " wants a positive whole number, got '" + text + "'");
        return n;
    };
    for (int i = 1; i < argc; ++i)
    {
        const std::string arg = argv[i];
        if (arg == "--scene")
            o.scene = value(i);
        else if (arg == "--frames")
            o.frames = number(arg, value(i));
        else if (arg == "--screenshot")
            o.screenshot = value(i);
        else if (arg == "--drive")
            o.drive = true;
        else if (arg == "--obj")
        {
            set_garment_file(value(i));
            o.scene = "garment";
        }
        else if (arg == "--size")
        {
            const std::string size = value(i);
            const auto x = size.find('x');
            if (x == std::string::npos)
                throw std::invalid_argument("--size wants WIDTHxHEIGHT, got '" + size + "'");
            o.width = number(arg, size.substr(0, x));
            o.height = number(arg, size.substr(x + 1));
        }
        else if (arg == "--help" || arg == "-h")
        {
            usage(stdout);
            std::exit(0);
        }
        else
            throw std::invalid_argument("unknown argument '" + arg + "'");
    }
    if (o.screenshot.empty() != (o.frames == 0))
        throw std::invalid_argument("--frames and --screenshot go together");
    if (o.drive && o.frames == 0)
        throw std::invalid_argument("--drive needs --frames and --screenshot");
    make_scene(o.scene); // an unknown name fails here, before a window opens
    return o;
}

/// Cloth colours, front and back: warm, so they stand apart from the cool colliders and floor
/// (and the screenshot test can find them).
const Vec3f kFront[] = {
    {0.92f, 0.42f, 0.22f}, {0.85f, 0.25f, 0.30f}, {0.95f, 0.55f, 0.15f}, {0.80f, 0.30f, 0.50f}, {0.90f, 0.35f, 0.35f}};
const Vec3f kBack[] = {
    {0.62f, 0.30f, 0.20f}, {0.58f, 0.20f, 0.24f}, {0.66f, 0.40f, 0.14f}, {0.55f, 0.22f, 0.36f}, {0.62f, 0.26f, 0.26f}};
// The rope is a pale neutral, not warm: the screenshot test counts warm pixels as cloth.
const Vec3f kCollider(0.55f, 0.60f, 0.68f), kFloor(0.30f, 0.33f, 0.37f), kRope(0.78f, 0.75f, 0.66f);

class App
{
  public:
    App(GLFWwindow* window, const Options& options) : m_window(window), m_options(options)
    {
        load(options.scene);
        glfwSetWindowUserPointer(window, this);
        // Installed before ImGui's, which chains to them.
        glfwSetKeyCallback(window, [](GLFWwindow* w, int key, int, int action, int) {
            static_cast<App*>(glfwGetWindowUserPointer(w))->on_key(key, action);
        });
        glfwSetScrollCallback(window, [](GLFWwindow* w, double, double dy) {
            static_cast<App*>(glfwGetWindowUserPointer(w))->on_scroll(dy);
        });
        glfwSetMouseButtonCallback(window, [](GLFWwindow* w, int button, int action, int) {
            static_cast<App*>(glfwGetWindowUserPointer(w))->on_button(button, action);
        });
    }

    /// Runs until the window closes, or for the screenshot's frames. Returns the exit status.
    int run()
    {
        const bool headless = m_options.frames > 0;
        for (int frame = 1; !glfwWindowShouldClose(m_window); ++frame)
        {
            glfwPollEvents();
            if (!headless)
                m_pointer = mouse();
            else if (m_options.drive)
                drive(frame);
            follow_pointer();
            if (!m_paused || m_step_once)
                step();
            m_step_once = false;
            if (m_scene->follow)
                m_camera.target = m_scene->follow(*m_scene);
            draw();
            if (headless && frame >= m_options.frames)
            {
                int w = 0, h = 0;
                glfwGetFramebufferSize(m_window, &w, &h);
                write_screenshot(m_options.screenshot, w, h);
                std::printf("viewer: %s after %d frames, %zu particles, %.2f ms a step; wrote %s\n",
                            m_scene->name.c_str(), frame, m_scene->particles(), m_step_ms,
                            m_options.screenshot.c_str());
                if (m_options.drive)
                    std::printf("viewer: the scripted hand grabbed particle %s and moved it %.3f units; the knife cut "
                                "%zu springs\n",
                                m_grabbed ? std::to_string(*m_grabbed).c_str() : "none", double(m_grab_travel), m_cuts);
                return 0;
            }
            glfwSwapBuffers(m_window);
        }
        return 0;
    }

  private:
    void load(const std::string& name)
    {
        m_grab.reset();
        m_knife.reset();
        m_scene = make_scene(name);
        m_settings = m_scene->settings;
        m_meshes.assign(m_scene->cloths.size(), {});
        const auto& c = m_scene->camera;
        m_camera = {.target = c.target, .distance = c.distance, .yaw = c.yaw, .pitch = c.pitch};
    }

    void step()
    {
        const auto start = std::chrono::steady_clock::now();
        m_scene->step();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        m_step_ms = m_step_ms == 0 ? ms : 0.9 * m_step_ms + 0.1 * ms;
    }

    // -- drawing --------------------------------------------------------------------------------

    void draw()
    {
        int w = 0, h = 0;
        glfwGetFramebufferSize(m_window, &w, &h);
        m_renderer.begin(w, h, m_camera);
        m_triangles = 0;
        for (std::size_t k = 0; k < m_scene->cloths.size(); ++k)
        {
            sv::render_mesh_into(m_scene->cloths[k], m_meshes[k]);
            m_triangles += m_meshes[k].triangles.size();
            m_renderer.draw_mesh(m_meshes[k], kFront[k % 5], kBack[k % 5]);
        }
        if (!m_scene->colliders.removed())
            for (std::size_t k = 0; k < m_scene->colliders.size(); ++k)
            {
                const auto& collider = m_scene->colliders[k];
                const bool floor = collider.kind() == sv::ColliderKind::plane;
                const Vec3f colour = floor ? kFloor : kCollider;
                m_renderer.draw_mesh(collider_mesh(collider), colour, colour * 0.7f, true);
            }
        Lines lines;
        for (const auto& strand : m_scene->strands)
            for (int n = 0; n + 1 < strand.count(); ++n)
                if (m_scene->sim.constraints().slot_to(strand.node(n), std::int32_t(strand.node(n + 1))))
                    lines.add(strand.position(n), strand.position(n + 1), kRope);
        if (m_debug)
            for (const auto& s : sv::debug_lines(m_scene->sim, {.dots = false}).segments)
                lines.add(s.a, s.b, s.kind == sv::SegmentKind::spring ? Vec3f(0.9f, 0.9f, 0.9f) : Vec3f(1, 0.2f, 0.2f));
        if (m_knife)
            for (std::size_t k = 1; k < m_knife->stroke.size(); ++k)
                lines.add(m_knife->stroke[k - 1], m_knife->stroke[k], Vec3f(1.0f, 0.15f, 0.1f));
        if (m_grab)
            lines.add(m_scene->sim.state().position(m_grab->particle), m_grab->target, Vec3f(0.3f, 0.9f, 1.0f));
        m_renderer.draw_lines(lines);
        panel();
    }

    void panel()
    {
        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        ImGui::NewFrame();
        ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
        ImGui::SetNextWindowSize(ImVec2(330, 0), ImGuiCond_FirstUseEver);
        ImGui::Begin("simdverlet");
        const auto& names = scene_names();
        int current = int(std::find(names.begin(), names.end(), m_scene->name) - names.begin());
        if (ImGui::BeginCombo("scene", m_scene->name.c_str()))
        {
            for (int k = 0; k < int(names.size()); ++k)
                if (ImGui::Selectable(names[std::size_t(k)].c_str(), k == current))
                    m_pending_scene = names[std::size_t(k)];
            ImGui::EndCombo();
        }
        ImGui::Text("%zu particles, %zu triangles", m_scene->particles(), m_triangles);
        ImGui::Text("step %.2f ms   %.0f fps", m_step_ms, double(ImGui::GetIO().Framerate));
        Settings s = m_settings;
        ImGui::SliderFloat("stiffness", &s.stiffness, 1.0f, 50000.0f, "%.0f", ImGuiSliderFlags_Logarithmic);
        ImGui::SliderInt("iterations", &s.iterations, 1, 32);
        ImGui::SliderInt("substeps", &s.substeps, 1, 12);
        ImGui::SliderFloat("wind", &s.wind, 0.0f, 4.0f, "%.2f");
        ImGui::SliderFloat("friction", &s.friction, 0.0f, 2.0f, "%.2f");
        ImGui::Checkbox("self-collision", &s.self_collision);
#if SIMDVERLET_HAVE_OPENMP
        ImGui::SliderInt("threads", &s.threads, 1, std::max(1, int(std::thread::hardware_concurrency())));
#else
        ImGui::TextDisabled("threads: 1 (built without OpenMP)");
#endif
        if (s.stiffness != m_settings.stiffness || s.iterations != m_settings.iterations ||
            s.substeps != m_settings.substeps || s.wind != m_settings.wind || s.friction != m_settings.friction ||
            s.self_collision != m_settings.self_collision || s.threads != m_settings.threads)
        {
            m_scene->apply(s);
            m_settings = s;
        }
        ImGui::Checkbox("paused (space)", &m_paused);
        ImGui::SameLine();
        if (ImGui::Button("step (.)"))
            m_paused = m_step_once = true;
        ImGui::SameLine();
        if (ImGui::Button("reset (r)"))
            m_pending_scene = m_scene->name;
        ImGui::Checkbox("debug springs (d)", &m_debug);
        if (m_scene->sim.diverged())
            ImGui::TextColored(ImVec4(1, 0.4f, 0.3f, 1), "diverged: lower the stiffness or add substeps, then reset");
        ImGui::Separator();
        ImGui::TextWrapped("left drag: pull the cloth (or orbit)   right drag: cut   middle drag: pan   wheel: zoom   "
                           "1-%zu: scenes",
                           names.size());
        ImGui::End();
        ImGui::Render();
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        if (m_pending_scene)
        {
            load(*m_pending_scene);
            m_pending_scene.reset();
        }
    }

    void write_screenshot(const std::string& path, int w, int h)
    {
        std::vector<unsigned char> pixels(std::size_t(w) * std::size_t(h) * 3);
        glReadBuffer(GL_BACK);
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
        write_png(path, w, h, pixels);
    }

    // -- input ----------------------------------------------------------------------------------

    /// The mouse in framebuffer pixels, y down.
    Eigen::Vector2f mouse() const
    {
        double x = 0, y = 0;
        glfwGetCursorPos(m_window, &x, &y);
        int ww = 0, wh = 0, fw = 0, fh = 0;
        glfwGetWindowSize(m_window, &ww, &wh);
        glfwGetFramebufferSize(m_window, &fw, &fh);
        return {float(x) * float(fw) / float(std::max(ww, 1)), float(y) * float(fh) / float(std::max(wh, 1))};
    }

    Mat4f view_projection() const
    {
        int w = 0, h = 0;
        glfwGetFramebufferSize(m_window, &w, &h);
        return m_camera.projection(float(w) / float(std::max(h, 1))) * m_camera.view();
    }

    /// The world point under framebuffer pixel p at normalised depth z (-1 near, 1 far).
    Vec3f unproject(const Eigen::Vector2f& p, float z) const
    {
        int w = 0, h = 0;
        glfwGetFramebufferSize(m_window, &w, &h);
        const Eigen::Vector4f ndc(2 * p.x() / float(w) - 1, 1 - 2 * p.y() / float(h), z, 1);
        const Eigen::Vector4f world = view_projection().inverse() * ndc;
        return world.head<3>() / world.w();
    }

    /// The cloth particle drawn nearest to pixel p, within 30 pixels: (cloth, particle, depth).
    struct Pick
    {
        std::size_t cloth, particle;
        float depth;
    };
    std::optional<Pick> pick(const Eigen::Vector2f& p) const
    {
        int w = 0, h = 0;
        glfwGetFramebufferSize(m_window, &w, &h);
        const Mat4f vp = view_projection();
        std::optional<Pick> best;
        float best_d2 = 30.0f * 30.0f;
        for (std::size_t k = 0; k < m_scene->cloths.size(); ++k)
        {
            const auto& cloth = m_scene->cloths[k];
            for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
            {
                const Eigen::Vector4f clip = vp * m_scene->sim.state().position(i).homogeneous();
                if (clip.w() <= 0)
                    continue;
                const Eigen::Vector3f ndc = clip.head<3>() / clip.w();
                const Eigen::Vector2f screen((ndc.x() + 1) * 0.5f * float(w), (1 - ndc.y()) * 0.5f * float(h));
                const float d2 = (screen - p).squaredNorm();
                if (d2 < best_d2 || (best && d2 == best_d2 && ndc.z() < best->depth))
                {
                    best_d2 = d2;
                    best = Pick{k, i, ndc.z()};
                }
            }
        }
        return best;
    }

    /// The knife's point under pixel p, at the depth of the camera's target. Any depth would do:
    /// cut_from_eye cuts along the rays from the eye through the stroke.
    Vec3f knife_point(const Eigen::Vector2f& p) const
    {
        const Eigen::Vector4f clip = view_projection() * m_camera.target.homogeneous();
        return unproject(p, clip.z() / clip.w());
    }

    void on_button(int button, int action)
    {
        if (ImGui::GetIO().WantCaptureMouse && action == GLFW_PRESS)
            return;
        if (m_options.frames == 0)
            m_pointer = mouse(); // where the click happened, not where the last frame left the mouse
        const Eigen::Vector2f p = m_pointer;
        if (button == GLFW_MOUSE_BUTTON_LEFT && action == GLFW_PRESS)
        {
            if (const auto hit = pick(p))
            {
                auto& cloth = m_scene->cloths[hit->cloth];
                const std::size_t particle = cloth.grab_nearest(m_scene->sim.state().position(hit->particle));
                m_grab = Grab{hit->cloth, particle, hit->depth, m_scene->sim.state().position(particle)};
                m_grabbed = particle;
                m_grab_start = m_scene->sim.state().position(particle);
            }
            else
                m_drag = Drag::orbit;
            m_last_mouse = p;
        }
        else if (button == GLFW_MOUSE_BUTTON_RIGHT && action == GLFW_PRESS)
            m_knife = Knife{{knife_point(p)}, p};
        else if (button == GLFW_MOUSE_BUTTON_MIDDLE && action == GLFW_PRESS)
        {
            m_drag = Drag::pan;
            m_last_mouse = p;
        }
        else if (action == GLFW_RELEASE)
        {
            if (button == GLFW_MOUSE_BUTTON_LEFT && m_grab)
            {
                m_grab_travel = (m_scene->sim.state().position(m_grab->particle) - m_grab_start).norm();
                m_scene->cloths[m_grab->cloth].release();
                m_grab.reset();
            }
            if (button == GLFW_MOUSE_BUTTON_RIGHT)
                m_knife.reset();
            m_drag = Drag::none;
        }
    }

    /// Per frame while a button is held: the grab's target follows the pointer at the grabbed
    /// particle's depth, the knife cuts from its last point to the pointer, the camera turns.
    void follow_pointer()
    {
        const Eigen::Vector2f p = m_pointer;
        if (m_grab)
        {
            m_grab->target = unproject(p, m_grab->depth);
            m_scene->cloths[m_grab->cloth].move_grabbed(m_grab->target);
        }
        if (m_knife && (p - m_knife->last_pixel).norm() > 3.0f)
        {
            const Vec3f a = m_knife->stroke.back(), b = knife_point(p);
            if ((a - b).norm() > 1e-6f)
            {
                m_cuts += sv::cut_from_eye(m_scene->sim, m_camera.eye(), a, b);
                m_knife->stroke.push_back(b);
            }
            m_knife->last_pixel = p;
        }
        const Eigen::Vector2f d = p - m_last_mouse;
        if (m_drag == Drag::orbit)
        {
            m_camera.yaw -= 0.008f * d.x();
            m_camera.pitch = std::clamp(m_camera.pitch + 0.008f * d.y(), -1.5f, 1.5f);
        }
        else if (m_drag == Drag::pan)
        {
            const Mat4f v = m_camera.view();
            const Vec3f right = v.block<1, 3>(0, 0).transpose(), up = v.block<1, 3>(1, 0).transpose();
            const float scale = 0.0015f * m_camera.distance;
            m_camera.target += scale * (-d.x() * right + d.y() * up);
        }
        m_last_mouse = p;
    }

    /// The scripted hand of --drive, frame by frame: a grab and pull over the second third of the
    /// run, a cut down the first cloth over the last third.
    void drive(int frame)
    {
        const int n = m_options.frames, grab_at = n / 3, cut_at = 2 * n / 3, span = std::max(n / 6, 2);
        const auto& cloth = m_scene->cloths.front();
        if (frame == grab_at)
        {
            m_pointer = on_screen(m_scene->sim.state().position(cloth.index(cloth.width() / 2, cloth.height() / 2)));
            on_button(GLFW_MOUSE_BUTTON_LEFT, GLFW_PRESS);
        }
        else if (frame > grab_at && frame < grab_at + span)
            m_pointer.y() -= 150.0f / float(span);
        else if (frame == grab_at + span)
            on_button(GLFW_MOUSE_BUTTON_LEFT, GLFW_RELEASE);
        else if (frame == cut_at)
        {
            // Down the screen through the cloth's middle particle, over its whole drawn height.
            float top = 1e9f, bottom = -1e9f;
            for (std::size_t i = cloth.base(); i < cloth.end(); ++i)
            {
                const float y = on_screen(m_scene->sim.state().position(i)).y();
                top = std::min(top, y);
                bottom = std::max(bottom, y);
            }
            m_cut_to = bottom + 40.0f;
            m_pointer = {on_screen(cloth.position(cloth.width() / 2, cloth.height() / 2)).x(), top - 40.0f};
            on_button(GLFW_MOUSE_BUTTON_RIGHT, GLFW_PRESS);
        }
        else if (frame > cut_at && frame <= cut_at + span)
        {
            m_pointer.y() += (m_cut_to - m_pointer.y()) / float(cut_at + span + 1 - frame);
            if (frame == cut_at + span)
            {
                follow_pointer();
                on_button(GLFW_MOUSE_BUTTON_RIGHT, GLFW_RELEASE);
            }
        }
    }

    /// Framebuffer pixel of world point p.
    Eigen::Vector2f on_screen(const Vec3f& p) const
    {
        int w = 0, h = 0;
        glfwGetFramebufferSize(m_window, &w, &h);
        const Eigen::Vector4f clip = view_projection() * p.homogeneous();
        return {(clip.x() / clip.w() + 1) * 0.5f * float(w), (1 - clip.y() / clip.w()) * 0.5f * float(h)};
    }

    void on_scroll(double dy)
    {
        if (ImGui::GetIO().WantCaptureMouse)
            return;
        m_camera.distance = std::clamp(m_camera.distance * std::pow(0.9f, float(dy)), 0.5f, 200.0f);
    }

    void on_key(int key, int action)
    {
        if (action != GLFW_PRESS || ImGui::GetIO().WantCaptureKeyboard)
            return;
        if (key == GLFW_KEY_SPACE)
            m_paused = !m_paused;
        else if (key == GLFW_KEY_PERIOD)
            m_paused = m_step_once = true;
        else if (key == GLFW_KEY_R)
            m_pending_scene = m_scene->name;
        else if (key == GLFW_KEY_D)
            m_debug = !m_debug;
        else if (key == GLFW_KEY_ESCAPE)
            glfwSetWindowShouldClose(m_window, GLFW_TRUE);
        else if (key >= GLFW_KEY_1 && key <= GLFW_KEY_9 && std::size_t(key - GLFW_KEY_1) < scene_names().size())
            m_pending_scene = scene_names()[std::size_t(key - GLFW_KEY_1)];
        if (m_pending_scene)
        {
            load(*m_pending_scene);
            m_pending_scene.reset();
        }
    }

    struct Grab
    {
        std::size_t cloth, particle;
        float depth;
        Vec3f target;
    };
    struct Knife
    {
        std::vector<Vec3f> stroke;
        Eigen::Vector2f last_pixel;
    };
    enum class Drag
    {
        none,
        orbit,
        pan
    };

    GLFWwindow* m_window;
    Options m_options;
    Renderer m_renderer;
    Camera m_camera;
    std::unique_ptr<Scene> m_scene;
    Settings m_settings;
    std::vector<sv::RenderMesh<float>> m_meshes;
    std::optional<std::string> m_pending_scene;
    std::optional<Grab> m_grab;
    std::optional<Knife> m_knife;
    Drag m_drag = Drag::none;
    Eigen::Vector2f m_last_mouse = Eigen::Vector2f::Zero();
    Eigen::Vector2f m_pointer = Eigen::Vector2f::Zero(); ///< the mouse, or the scripted hand of --drive
    std::optional<std::size_t> m_grabbed;                ///< the last particle grabbed
    Vec3f m_grab_start = Vec3f::Zero();
    float m_grab_travel = 0, m_cut_to = 0;
    bool m_paused = false, m_step_once = false, m_debug = false;
    double m_step_ms = 0;
    std::size_t m_triangles = 0, m_cuts = 0;
};
} // namespace
} // namespace viewer

int main(int argc, char** argv)
{
    viewer::Options options;
    try
    {
        options = viewer::parse(argc, argv);
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "viewer: %s\n", e.what());
        viewer::usage(stderr);
        return 2;
    }
    glfwSetErrorCallback(
        [](int code, const char* text) { std::fprintf(stderr, "viewer: GLFW error %d: %s\n", code, text); });
    if (!glfwInit())
    {
        std::fprintf(stderr, "viewer: cannot initialise GLFW (no display? run it under xvfb-run)\n");
        return 1;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_SAMPLES, 4);
    GLFWwindow* window = glfwCreateWindow(options.width, options.height, "simdverlet viewer", nullptr, nullptr);
    if (!window)
    {
        std::fprintf(stderr, "viewer: cannot open an OpenGL 3.3 core window\n");
        glfwTerminate();
        return 1;
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval(options.frames > 0 ? 0 : 1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr; // no imgui.ini left behind
    ImGui::StyleColorsDark();
    int status = 1;
    bool backends = false;
    try
    {
        viewer::App app(window, options);
        ImGui_ImplGlfw_InitForOpenGL(window, true);
        ImGui_ImplOpenGL3_Init("#version 330 core");
        backends = true;
        status = app.run();
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "viewer: %s\n", e.what());
    }
    if (backends)
    {
        ImGui_ImplOpenGL3_Shutdown();
        ImGui_ImplGlfw_Shutdown();
    }
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return status;
}
