// Drawing for the viewer, OpenGL 3.3 core: shaded two-sided triangle meshes (the cloths from
// render_mesh, the colliders from collider_mesh) and coloured lines (ropes, debug springs, the
// knife's stroke). One program each; buffers are refilled every frame, which at the viewer's
// sizes costs far less than a step.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <simdverlet/cloth/render_mesh.hpp>
#include <simdverlet/collision/colliders.hpp>

namespace viewer
{
using Vec3f = Eigen::Vector3f;
using Mat4f = Eigen::Matrix4f;

/// The orbit camera: looks at `target` from `distance`, turned `yaw` about the vertical and
/// `pitch` above the horizon. The library's +y points down, so the camera's up is -y.
struct Camera
{
    Vec3f target = Vec3f::Zero();
    float distance = 10.0f;
    float yaw = 0.0f;
    float pitch = 0.3f;
    float fov_y = 0.8f; ///< radians

    Vec3f eye() const;
    Mat4f view() const;
    Mat4f projection(float aspect) const;
};

/// A coloured line list: two vertices a segment.
struct Lines
{
    std::vector<Vec3f> points;
    std::vector<Vec3f> colours;

    void add(const Vec3f& a, const Vec3f& b, const Vec3f& colour)
    {
        points.push_back(a);
        points.push_back(b);
        colours.push_back(colour);
        colours.push_back(colour);
    }
    void clear()
    {
        points.clear();
        colours.clear();
    }
};

/// A collider as triangles for drawing (positions, normals, triangles; uvs unused). Planes are a
/// square 40 units across around the point nearest the origin; an SDF draws nothing.
simdverlet::RenderMesh<float> collider_mesh(const simdverlet::Collider<float>& collider);

class Renderer
{
  public:
    /// Compiles the programs; throws std::runtime_error with the driver's log on failure.
    Renderer();
    ~Renderer();
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;

    /// Clears the frame and sets the camera for the draws that follow.
    void begin(int width, int height, const Camera& camera);
    /// A shaded mesh, front faces in `front`, back faces in `back`. `behind` pushes it back in
    /// depth a little: colliders, so cloth resting on them within its margin is not hidden.
    void draw_mesh(const simdverlet::RenderMesh<float>& mesh, const Vec3f& front, const Vec3f& back,
                   bool behind = false);
    void draw_lines(const Lines& lines);

    /// The colour the frame is cleared to: the screenshot test counts what differs from it.
    static constexpr std::array<float, 3> kBackground = {0.16f, 0.18f, 0.22f};

  private:
    unsigned m_mesh_program = 0, m_line_program = 0;
    unsigned m_mesh_vao = 0, m_mesh_buffers[3] = {0, 0, 0};
    unsigned m_line_vao = 0, m_line_buffers[2] = {0, 0};
    Mat4f m_view_projection = Mat4f::Identity();
    Vec3f m_eye = Vec3f::Zero();
};

} // namespace viewer
