#include "renderer.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include <Eigen/Geometry>

#include <simdverlet/collision/mesh_collider.hpp>

namespace viewer
{
namespace sv = simdverlet;

Vec3f Camera::eye() const
{
    // Up is -y: a positive pitch lifts the eye to smaller y. At yaw 0 the eye is on the -z side,
    // where x runs to the right with y down, as in the library's SVG pictures.
    const Vec3f back(std::cos(pitch) * std::sin(yaw), -std::sin(pitch), -std::cos(pitch) * std::cos(yaw));
    return target + distance * back;
}

Mat4f Camera::view() const
{
    const Vec3f f = (target - eye()).normalized();
    const Vec3f s = f.cross(Vec3f(0, -1, 0)).normalized();
    const Vec3f u = s.cross(f);
    Mat4f m = Mat4f::Identity();
    m.block<1, 3>(0, 0) = s.transpose();
    m.block<1, 3>(1, 0) = u.transpose();
    m.block<1, 3>(2, 0) = -f.transpose();
    m(0, 3) = -s.dot(eye());
    m(1, 3) = -u.dot(eye());
    m(2, 3) = f.dot(eye());
    return m;
}

Mat4f Camera::projection(float aspect) const
{
    const float z_near = 0.05f, z_far = 500.0f, t = 1.0f / std::tan(fov_y / 2);
    Mat4f m = Mat4f::Zero();
    m(0, 0) = t / aspect;
    m(1, 1) = t;
    m(2, 2) = (z_far + z_near) / (z_near - z_far);
    m(2, 3) = 2 * z_far * z_near / (z_near - z_far);
    m(3, 2) = -1;
    return m;
}

namespace
{
constexpr const char* kMeshVertex = R"(#version 330 core
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
uniform mat4 view_projection;
out vec3 v_normal;
out vec3 v_position;
void main()
{
    v_normal = normal;
    v_position = position;
    gl_Position = view_projection * vec4(position, 1.0);
}
)";

// Two-sided: a back face is lit with its own normal turned round and tinted, so the two sides of
// a sheet read apart. A key light from above and behind the eye, a fill from below, and ambient.
constexpr const char* kMeshFragment = R"(#version 330 core
in vec3 v_normal;
in vec3 v_position;
uniform vec3 front_colour;
uniform vec3 back_colour;
uniform vec3 eye;
out vec4 colour;
void main()
{
    vec3 n = normalize(v_normal);
    vec3 base = front_colour;
    if (!gl_FrontFacing) { n = -n; base = back_colour; }
    vec3 to_eye = normalize(eye - v_position);
    if (dot(n, to_eye) < 0.0) n = -n; // a normal averaged across a sharp fold
    vec3 key = normalize(0.8 * to_eye + vec3(0.3, -0.8, 0.2)); // over the viewer's shoulder
    vec3 fill = normalize(vec3(-0.5, 0.6, -0.4));
    float diffuse = max(dot(n, key), 0.0) * 0.75 + max(dot(n, fill), 0.0) * 0.2;
    float rim = pow(1.0 - max(dot(n, to_eye), 0.0), 3.0) * 0.15;
    colour = vec4(base * (0.25 + diffuse) + vec3(rim), 1.0);
}
)";

constexpr const char* kLineVertex = R"(#version 330 core
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 colour;
uniform mat4 view_projection;
out vec3 v_colour;
void main()
{
    v_colour = colour;
    gl_Position = view_projection * vec4(position, 1.0);
}
)";

constexpr const char* kLineFragment = R"(#version 330 core
in vec3 v_colour;
out vec4 colour;
void main() { colour = vec4(v_colour, 1.0); }
)";

/// Throws with the driver's log when `status` of `object` (a shader or a program) is false.
void require(GLuint object, GLenum status, void (*get)(GLuint, GLenum, GLint*),
             void (*get_log)(GLuint, GLsizei, GLsizei*, GLchar*), const char* what)
{
    GLint ok = 0;
    get(object, status, &ok);
    if (ok)
        return;
    char log[2048];
    get_log(object, sizeof log, nullptr, log);
    throw std::runtime_error(std::string("viewer: ") + what + ": " + log);
}

GLuint compile(GLenum kind, const char* source)
{
    const GLuint shader = glCreateShader(kind);
    glShaderSource(shader, 1, &source, nullptr);
    glCompileShader(shader);
    require(shader, GL_COMPILE_STATUS, glGetShaderiv, glGetShaderInfoLog, "shader does not compile");
    return shader;
}

GLuint link(const char* vertex, const char* fragment)
{
    const GLuint program = glCreateProgram();
    const GLuint vs = compile(GL_VERTEX_SHADER, vertex), fs = compile(GL_FRAGMENT_SHADER, fragment);
    glAttachShader(program, vs);
    glAttachShader(program, fs);
    glLinkProgram(program);
    glDeleteShader(vs);
    glDeleteShader(fs);
    require(program, GL_LINK_STATUS, glGetProgramiv, glGetProgramInfoLog, "shader program does not link");
    return program;
}

/// Attribute `location` of the bound VAO reads packed float triples from `buffer`.
void attribute(GLuint buffer, GLuint location)
{
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    glEnableVertexAttribArray(location);
    glVertexAttribPointer(location, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
}

template <class V>
void upload(GLenum target, GLuint buffer, const std::vector<V>& data)
{
    glBindBuffer(target, buffer);
    // Orphan, then fill: the driver need not wait for last frame's draw.
    glBufferData(target, GLsizeiptr(data.size() * sizeof(V)), nullptr, GL_STREAM_DRAW);
    glBufferData(target, GLsizeiptr(data.size() * sizeof(V)), data.data(), GL_STREAM_DRAW);
}

void set_matrix(GLuint program, const char* name, const Mat4f& m)
{
    glUniformMatrix4fv(glGetUniformLocation(program, name), 1, GL_FALSE, m.data()); // column-major, as Eigen
}

void set_vec3(GLuint program, const char* name, const Vec3f& v)
{
    glUniform3f(glGetUniformLocation(program, name), v.x(), v.y(), v.z());
}

/// A unit sphere's triangles, `rings` x `segments`, scaled and moved to (centre, radius).
void add_sphere(sv::RenderMesh<float>& m, const Vec3f& centre, float radius, int rings = 24, int segments = 48)
{
    const auto first = std::uint32_t(m.positions.size());
    const float pi = std::numbers::pi_v<float>;
    for (int r = 0; r <= rings; ++r)
        for (int s = 0; s <= segments; ++s)
        {
            const float theta = pi * float(r) / float(rings), phi = 2 * pi * float(s) / float(segments);
            const Vec3f n(std::sin(theta) * std::cos(phi), std::cos(theta), std::sin(theta) * std::sin(phi));
            m.positions.push_back(centre + radius * n);
            m.normals.push_back(n);
        }
    const auto at = [&](int r, int s) { return first + std::uint32_t(r * (segments + 1) + s); };
    for (int r = 0; r < rings; ++r)
        for (int s = 0; s < segments; ++s)
        {
            m.triangles.push_back({at(r, s), at(r, s + 1), at(r + 1, s)});
            m.triangles.push_back({at(r, s + 1), at(r + 1, s + 1), at(r + 1, s)});
        }
}

/// The side of a cylinder from a to b.
void add_tube(sv::RenderMesh<float>& m, const Vec3f& a, const Vec3f& b, float radius, int segments = 32)
{
    const Vec3f axis = (b - a).normalized();
    const Vec3f helper = std::abs(axis.y()) < 0.9f ? Vec3f(0, 1, 0) : Vec3f(1, 0, 0);
    const Vec3f u = axis.cross(helper).normalized(), v = axis.cross(u);
    const auto first = std::uint32_t(m.positions.size());
    const float pi = std::numbers::pi_v<float>;
    for (int s = 0; s <= segments; ++s)
    {
        const float phi = 2 * pi * float(s) / float(segments);
        const Vec3f n = std::cos(phi) * u + std::sin(phi) * v;
        m.positions.push_back(a + radius * n);
        m.normals.push_back(n);
        m.positions.push_back(b + radius * n);
        m.normals.push_back(n);
    }
    for (std::uint32_t s = 0; s < std::uint32_t(segments); ++s)
    {
        const std::uint32_t k = first + 2 * s;
        m.triangles.push_back({k, k + 2, k + 1});
        m.triangles.push_back({k + 1, k + 2, k + 3});
    }
}

void add_quad(sv::RenderMesh<float>& m, const std::array<Vec3f, 4>& corners, const Vec3f& normal)
{
    const auto first = std::uint32_t(m.positions.size());
    for (const auto& c : corners)
    {
        m.positions.push_back(c);
        m.normals.push_back(normal);
    }
    m.triangles.push_back({first, first + 1, first + 2});
    m.triangles.push_back({first, first + 2, first + 3});
}
} // namespace

sv::RenderMesh<float> collider_mesh(const sv::Collider<float>& collider)
{
    sv::RenderMesh<float> m;
    if (!collider.enabled)
        return m;
    switch (collider.kind())
    {
    case sv::ColliderKind::plane:
    {
        const auto& plane = static_cast<const sv::PlaneCollider<float>&>(collider);
        const Vec3f n = plane.normal();
        const Vec3f helper = std::abs(n.y()) < 0.9f ? Vec3f(0, 1, 0) : Vec3f(1, 0, 0);
        const Vec3f t = n.cross(helper).normalized() * 20.0f, u = n.cross(t);
        const Vec3f c = n * plane.offset();
        add_quad(m, {c - t - u, c + t - u, c + t + u, c - t + u}, n);
        break;
    }
    case sv::ColliderKind::sphere:
    {
        const auto& s = static_cast<const sv::SphereCollider<float>&>(collider).shape();
        add_sphere(m, s.center, s.radius);
        break;
    }
    case sv::ColliderKind::capsule:
    {
        const auto& c = static_cast<const sv::CapsuleCollider<float>&>(collider).shape();
        add_sphere(m, c.a, c.radius, 12, 24);
        add_sphere(m, c.b, c.radius, 12, 24);
        if ((c.b - c.a).norm() > 1e-6f)
            add_tube(m, c.a, c.b, c.radius);
        break;
    }
    case sv::ColliderKind::box:
    {
        const auto& b = static_cast<const sv::BoxCollider<float>&>(collider).shape();
        const Vec3f lo = b.min, hi = b.max;
        const auto corner = [&](int k) {
            return Vec3f(k & 1 ? hi.x() : lo.x(), k & 2 ? hi.y() : lo.y(), k & 4 ? hi.z() : lo.z());
        };
        add_quad(m, {corner(0), corner(2), corner(6), corner(4)}, {-1, 0, 0});
        add_quad(m, {corner(1), corner(5), corner(7), corner(3)}, {1, 0, 0});
        add_quad(m, {corner(0), corner(4), corner(5), corner(1)}, {0, -1, 0});
        add_quad(m, {corner(2), corner(3), corner(7), corner(6)}, {0, 1, 0});
        add_quad(m, {corner(0), corner(1), corner(3), corner(2)}, {0, 0, -1});
        add_quad(m, {corner(4), corner(6), corner(7), corner(5)}, {0, 0, 1});
        break;
    }
    case sv::ColliderKind::triangle_mesh:
    {
        // Flat-shaded: each triangle its own three vertices.
        const auto& mesh = static_cast<const sv::TriangleMeshCollider<float>&>(collider);
        const auto& v = mesh.vertices();
        for (const auto& t : mesh.triangles())
        {
            const Vec3f a = v[std::size_t(t[0])], b = v[std::size_t(t[1])], c = v[std::size_t(t[2])];
            const Vec3f n = (b - a).cross(c - a).normalized();
            const auto first = std::uint32_t(m.positions.size());
            for (const Vec3f& p : {a, b, c})
            {
                m.positions.push_back(p);
                m.normals.push_back(n);
            }
            m.triangles.push_back({first, first + 1, first + 2});
        }
        break;
    }
    case sv::ColliderKind::sdf:
        break;
    }
    return m;
}

Renderer::Renderer()
{
    m_mesh_program = link(kMeshVertex, kMeshFragment);
    m_line_program = link(kLineVertex, kLineFragment);
    glGenVertexArrays(1, &m_mesh_vao);
    glGenBuffers(3, m_mesh_buffers);
    glBindVertexArray(m_mesh_vao);
    attribute(m_mesh_buffers[0], 0);
    attribute(m_mesh_buffers[1], 1);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m_mesh_buffers[2]);
    glGenVertexArrays(1, &m_line_vao);
    glGenBuffers(2, m_line_buffers);
    glBindVertexArray(m_line_vao);
    attribute(m_line_buffers[0], 0);
    attribute(m_line_buffers[1], 1);
    glBindVertexArray(0);
}

Renderer::~Renderer()
{
    glDeleteBuffers(3, m_mesh_buffers);
    glDeleteBuffers(2, m_line_buffers);
    glDeleteVertexArrays(1, &m_mesh_vao);
    glDeleteVertexArrays(1, &m_line_vao);
    glDeleteProgram(m_mesh_program);
    glDeleteProgram(m_line_program);
}

void Renderer::begin(int width, int height, const Camera& camera)
{
    glViewport(0, 0, width, height);
    glClearColor(kBackground[0], kBackground[1], kBackground[2], 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE); // two-sided cloth
    m_view_projection = camera.projection(float(width) / float(std::max(height, 1))) * camera.view();
    m_eye = camera.eye();
}

void Renderer::draw_mesh(const sv::RenderMesh<float>& mesh, const Vec3f& front, const Vec3f& back, bool behind)
{
    if (mesh.triangles.empty())
        return;
    if (behind)
    {
        glEnable(GL_POLYGON_OFFSET_FILL);
        glPolygonOffset(2.0f, 4.0f);
    }
    else
        glDisable(GL_POLYGON_OFFSET_FILL);
    glUseProgram(m_mesh_program);
    set_matrix(m_mesh_program, "view_projection", m_view_projection);
    set_vec3(m_mesh_program, "front_colour", front);
    set_vec3(m_mesh_program, "back_colour", back);
    set_vec3(m_mesh_program, "eye", m_eye);
    glBindVertexArray(m_mesh_vao);
    upload(GL_ARRAY_BUFFER, m_mesh_buffers[0], mesh.positions);
    upload(GL_ARRAY_BUFFER, m_mesh_buffers[1], mesh.normals);
    upload(GL_ELEMENT_ARRAY_BUFFER, m_mesh_buffers[2], mesh.triangles);
    glDrawElements(GL_TRIANGLES, GLsizei(3 * mesh.triangles.size()), GL_UNSIGNED_INT, nullptr);
    glBindVertexArray(0);
}

void Renderer::draw_lines(const Lines& lines)
{
    if (lines.points.empty())
        return;
    glUseProgram(m_line_program);
    set_matrix(m_line_program, "view_projection", m_view_projection);
    glBindVertexArray(m_line_vao);
    upload(GL_ARRAY_BUFFER, m_line_buffers[0], lines.points);
    upload(GL_ARRAY_BUFFER, m_line_buffers[1], lines.colours);
    glDrawArrays(GL_LINES, 0, GLsizei(lines.points.size()));
    glBindVertexArray(0);
}

} // namespace viewer
