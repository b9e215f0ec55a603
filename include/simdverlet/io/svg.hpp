// SVG pictures of debug geometry and of signals over frames, with no dependency beyond the
// standard library. The plane view draws world x to the right and world y down, as the guide's
// pages do (gravity +y falls down the page). Output is deterministic: the same geometry gives the
// same bytes, so committed figures only change when the physics does.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <deque>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "simdverlet/core/error.hpp"
#include "simdverlet/io/debug_draw.hpp"

namespace simdverlet::svg
{

/// A window onto the world's x-y plane.
struct Rect
{
    double x = 0, y = 0, w = 1, h = 1;
};

/// An oblique (cabinet) view of 3-D geometry, for projected(). The plain picture drops world z,
/// so a pile of crumpled sheets seen from the front hides its folds behind one another; drawing z
/// as a shortened diagonal spreads them apart. Points map as
///   x' = x + depth_scale * z * cos(a),   y' = y_scale * y - depth_scale * z * sin(a),   z' = 0
/// with a = depth_angle_degrees. The picture's y runs down the page, hence the minus: with
/// 0 < a < 90 world +z recedes up and to the right, away from a viewer who sees +y fall down the
/// page. Fill with designated initialisers: projected(g, {.depth_angle_degrees = 45}).
struct Projection
{
    double depth_angle_degrees = 30; ///< where world +z points in the picture, counter-clockwise from +x
    double depth_scale = 0.5;        ///< picture length of one unit of z: 0.5 is a cabinet view, 1 a cavalier one,
                                     ///< 0 the plain x-y view
    double y_scale = 1;              ///< how much world y counts: 1 in an oblique view, 0 in top()

    /// Looking straight down (+y is down): x right and world +z up the page, as the oblique view's
    /// +z recedes upwards, so the picture is the pile seen from above and not its mirror image.
    static constexpr Projection top() { return {.depth_angle_degrees = 90, .depth_scale = 1, .y_scale = 0}; }

    /// Throws std::invalid_argument naming the first value that is not finite, or a scale < 0.
    void check() const
    {
        const auto fail = [](const char* what, double v, const char* range) {
            simdverlet::detail::raise<std::invalid_argument>(std::string("simdverlet: projection ") + what +
                                                             " must be " + range + ", got " +
                                                             simdverlet::detail::number(v));
        };
        if (!std::isfinite(depth_angle_degrees))
            fail("depth_angle_degrees", depth_angle_degrees, "finite");
        if (!(std::isfinite(depth_scale) && depth_scale >= 0))
            fail("depth_scale", depth_scale, "finite and >= 0");
        if (!(std::isfinite(y_scale) && y_scale >= 0))
            fail("y_scale", y_scale, "finite and >= 0");
    }
};

/// A copy of `g` whose every point (segment ends, whiskers included, dots, outline points) is
/// mapped by the view `p`, so that drawing its x-y plane, as Scene and write_svg do, shows that
/// view. Counts and kinds are unchanged; z becomes 0, since the copy is a flat picture. A point that
/// is not finite stays so, and the picture skips it as before. Collider outlines are their x-y
/// silhouettes moved point by point, not re-derived for the view: in top() a sphere's circle
/// flattens to a line.
template <class T>
DebugGeometry<T> projected(const DebugGeometry<T>& g, const Projection& p)
{
    p.check();
    const double a = p.depth_angle_degrees * std::numbers::pi / 180;
    const double dx = p.depth_scale * std::cos(a), dy = -p.depth_scale * std::sin(a);
    const auto map = [&](const Vec3<T>& v) {
        const double z = double(v.z());
        return Vec3<T>(T(double(v.x()) + z * dx), T(p.y_scale * double(v.y()) + z * dy), T(0));
    };
    DebugGeometry<T> out = g;
    for (auto& s : out.segments)
        s.a = map(s.a), s.b = map(s.b);
    for (auto& d : out.dots)
        d.position = map(d.position);
    for (auto& line : out.outlines)
        for (auto& v : line)
            v = map(v);
    return out;
}

struct Stroke
{
    const char* color = "#5b7fb8";
    double width = 1.0; ///< pixels
    double opacity = 1.0;
};

/// The palette the library's pictures share.
namespace palette
{
inline constexpr Stroke spring{"#5b7fb8", 1.0, 0.9};
inline constexpr Stroke one_way{"#e8741c", 1.8, 1.0};
inline constexpr Stroke velocity{"#2a9d8f", 1.0, 0.9};
inline constexpr Stroke outline{"#f0a830", 1.6, 0.85};
inline constexpr Stroke grid{"#bccfee", 1.2, 0.8}; ///< cloth.lines(): the grid as built
inline constexpr Stroke hand{"#ff8c33", 2.0, 1.0};
inline constexpr const char* dot = "#2b3a55";
inline constexpr const char* pinned = "#d62828";
} // namespace palette

namespace detail
{
/// Fixed-point text of a coordinate: two decimals are a hundredth of a pixel, invisible, and keep
/// the files small and byte-stable.
inline std::string fixed(double v)
{
    if (!std::isfinite(v))
        v = 0; // a non-finite point has no place in a picture; callers skip such points first
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f", v);
    std::string s = buffer;
    return s == "-0.00" ? "0.00" : s;
}

inline std::string escape(const std::string& text)
{
    std::string out;
    for (char c : text)
        switch (c)
        {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    return out;
}

inline std::vector<std::string> split_lines(const std::string& text)
{
    std::vector<std::string> lines;
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

/// Appends "x,y" to a polyline's point list. Piece by piece on purpose: g++ 12 at -O3 reads
/// `(first ? "" : " ") + std::string` as a possibly overlapping copy and warns (-Wrestrict).
inline void append_point(std::string& points, double x, double y)
{
    if (!points.empty())
        points += ' ';
    points += fixed(x);
    points += ',';
    points += fixed(y);
}

inline std::string polyline(const std::string& attributes, const std::string& points)
{
    return "<polyline " + attributes + " points=\"" + points + "\"/>\n";
}

inline std::string stroke_attributes(const Stroke& s)
{
    return "stroke=\"" + std::string(s.color) + "\" stroke-width=\"" + fixed(s.width) + "\" stroke-opacity=\"" +
           fixed(s.opacity) + "\" fill=\"none\"";
}

inline void write_file(const std::string& path, const std::string& content)
{
    std::ofstream out(path, std::ios::binary);
    if (!out)
        simdverlet::detail::raise<std::runtime_error>("simdverlet: cannot open " + path + " for writing");
    out << content;
    if (!out)
        simdverlet::detail::raise<std::runtime_error>("simdverlet: failed writing " + path);
}

inline std::string text(double x, double y, const std::string& content, const char* anchor = "start", int size = 13,
                        const char* extra = "")
{
    return "<text x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\" font-size=\"" + std::to_string(size) +
           "\" text-anchor=\"" + anchor + "\"" + extra + ">" + escape(content) + "</text>\n";
}
} // namespace detail

/// One panel's contents, in world coordinates.
class Scene
{
  public:
    struct Path
    {
        std::vector<std::pair<double, double>> points;
        Stroke stroke;
        bool frames_window; ///< counts toward the fitted window
    };
    struct Dot
    {
        double x, y, radius;
        const char* color;
    };

    std::string caption;

    /// A polyline; frames_window = false keeps it out of the fitted window (an outline reaching far
    /// beyond the scene, like a plane's 40-unit cross).
    template <class T>
    Scene& add_polyline(const std::vector<Vec3<T>>& points, const Stroke& stroke, bool frames_window = true)
    {
        Path path{{}, stroke, frames_window};
        for (const auto& p : points)
            if (p.allFinite())
                path.points.emplace_back(double(p.x()), double(p.y()));
        if (path.points.size() >= 2)
            m_paths.push_back(std::move(path));
        return *this;
    }

    template <class T>
    Scene& add_polylines(const std::vector<std::vector<Vec3<T>>>& lines, const Stroke& stroke,
                         bool frames_window = true)
    {
        for (const auto& line : lines)
            add_polyline(line, stroke, frames_window);
        return *this;
    }

    template <class T>
    Scene& add_dot(const Vec3<T>& p, double radius, const char* color)
    {
        if (p.allFinite())
            m_dots.push_back({double(p.x()), double(p.y()), radius, color});
        return *this;
    }

    /// Springs, one-way constraints (in their own colour), whiskers, dots (pinned ones larger and
    /// red) and collider outlines.
    template <class T>
    Scene& add(const DebugGeometry<T>& g)
    {
        for (const auto& s : g.segments)
            add_polyline(std::vector<Vec3<T>>{s.a, s.b}, s.kind == SegmentKind::spring    ? palette::spring
                                                         : s.kind == SegmentKind::one_way ? palette::one_way
                                                                                          : palette::velocity);
        add_polylines(g.outlines, palette::outline, false);
        for (const auto& d : g.dots)
            add_dot(d.position, d.pinned ? 3.0 : 1.6, d.pinned ? palette::pinned : palette::dot);
        return *this;
    }

    /// Extent of the particles and of the polylines that frame the window (collider outlines do
    /// not: a plane's cross is 40 units wide and would shrink everything else to a speck).
    bool bounds(double& x0, double& y0, double& x1, double& y1) const
    {
        bool any = false;
        const auto grow = [&](double x, double y) {
            x0 = std::min(x0, x);
            y0 = std::min(y0, y);
            x1 = std::max(x1, x);
            y1 = std::max(y1, y);
            any = true;
        };
        for (const auto& p : m_paths)
            if (p.frames_window)
                for (const auto& [x, y] : p.points)
                    grow(x, y);
        for (const auto& d : m_dots)
            grow(d.x, d.y);
        return any;
    }

    const std::vector<Path>& paths() const noexcept { return m_paths; }
    const std::vector<Dot>& dots() const noexcept { return m_dots; }

  private:
    std::vector<Path> m_paths;
    std::vector<Dot> m_dots;
};

struct FigureOptions
{
    int columns = 2;        ///< panels per row
    int cell_width = 470;   ///< pixels; the cell's height follows the shared window's aspect
    double padding = 0.5;   ///< world units around the fitted window
    std::string title = {}; ///< optional line above the panels
};

/// Several panels in a grid on one shared window, so they can be compared and none is mostly empty.
class Figure
{
  public:
    explicit Figure(FigureOptions options = {}) : m_options(std::move(options))
    {
        if (m_options.columns < 1 || m_options.cell_width < 16)
            simdverlet::detail::raise<std::invalid_argument>(
                "simdverlet: a figure needs columns >= 1 and cell_width >= 16");
    }

    /// A new panel; the reference stays valid as more are added.
    Scene& add_panel(std::string caption = {})
    {
        Scene& s = m_panels.emplace_back();
        s.caption = std::move(caption);
        return s;
    }

    void set_window(const Rect& window)
    {
        if (!(window.w > 0) || !(window.h > 0))
            simdverlet::detail::raise<std::invalid_argument>("simdverlet: a figure window needs a positive size");
        m_window = window;
        m_fixed_window = true;
    }

    /// The window: the one set, or every panel's extent plus padding.
    Rect window() const
    {
        if (m_fixed_window)
            return m_window;
        double x0 = std::numeric_limits<double>::max(), y0 = x0;
        double x1 = -std::numeric_limits<double>::max(), y1 = x1;
        bool any = false;
        for (const auto& p : m_panels)
            any = p.bounds(x0, y0, x1, y1) || any;
        if (!any)
            return {0, 0, 1, 1};
        const double pad = m_options.padding;
        return {x0 - pad, y0 - pad, std::max(x1 - x0, 1e-6) + 2 * pad, std::max(y1 - y0, 1e-6) + 2 * pad};
    }

    std::string str() const
    {
        const Rect w = window();
        const int columns = std::max(1, std::min(m_options.columns, int(m_panels.size())));
        const int rows = int((m_panels.size() + std::size_t(columns) - 1) / std::size_t(columns));
        const double cell_w = m_options.cell_width;
        const double cell_h = std::round(cell_w * w.h / w.w);
        std::size_t caption_lines = 1;
        for (const auto& p : m_panels)
            caption_lines = std::max(caption_lines, detail::split_lines(p.caption).size());
        const double caption_h = 8.0 + 16.0 * double(caption_lines);
        const double title_h = m_options.title.empty() ? 0.0 : 28.0;
        const double gap = 12;
        const double width = columns * (cell_w + gap) + gap;
        const double height = title_h + rows * (caption_h + cell_h + gap) + gap;
        const double scale = cell_w / w.w;

        std::string out;
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + detail::fixed(width) + "\" height=\"" +
               detail::fixed(height) + "\" viewBox=\"0 0 " + detail::fixed(width) + " " + detail::fixed(height) +
               "\" font-family=\"Helvetica, Arial, sans-serif\">\n";
        out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
        if (!m_options.title.empty())
            out += detail::text(width / 2, 20, m_options.title, "middle", 15, " font-weight=\"bold\"");
        for (std::size_t k = 0; k < m_panels.size(); ++k)
        {
            const Scene& panel = m_panels[k];
            const double left = gap + double(int(k) % columns) * (cell_w + gap);
            const double top = title_h + gap + double(int(k) / columns) * (caption_h + cell_h + gap);
            double line_y = top + 14;
            for (const auto& line : detail::split_lines(panel.caption))
            {
                out += detail::text(left, line_y, line, "start", 13, " fill=\"#222222\"");
                line_y += 16;
            }
            const double y0 = top + caption_h;
            const auto px = [&](double x) { return left + (x - w.x) * scale; };
            const auto py = [&](double y) { return y0 + (y - w.y) * scale; };
            const std::string clip = "cell" + std::to_string(k);
            out += "<clipPath id=\"" + clip + "\"><rect x=\"" + detail::fixed(left) + "\" y=\"" + detail::fixed(y0) +
                   "\" width=\"" + detail::fixed(cell_w) + "\" height=\"" + detail::fixed(cell_h) + "\"/></clipPath>\n";
            out += "<rect x=\"" + detail::fixed(left) + "\" y=\"" + detail::fixed(y0) + "\" width=\"" +
                   detail::fixed(cell_w) + "\" height=\"" + detail::fixed(cell_h) +
                   "\" fill=\"#f7f9fc\" stroke=\"#d0d7e2\"/>\n";
            out += "<g clip-path=\"url(#" + clip + ")\">\n";
            for (const auto& path : panel.paths())
            {
                std::string points;
                for (const auto& [x, y] : path.points)
                    detail::append_point(points, px(x), py(y));
                out += detail::polyline(detail::stroke_attributes(path.stroke), points);
            }
            for (const auto& d : panel.dots())
                out += "<circle cx=\"" + detail::fixed(px(d.x)) + "\" cy=\"" + detail::fixed(py(d.y)) + "\" r=\"" +
                       detail::fixed(d.radius) + "\" fill=\"" + d.color + "\"/>\n";
            out += "</g>\n";
        }
        out += "</svg>\n";
        return out;
    }

    void save(const std::string& path) const { detail::write_file(path, str()); }

  private:
    FigureOptions m_options;
    std::deque<Scene> m_panels;
    Rect m_window;
    bool m_fixed_window = false;
};

/// One line of a plot: a value per frame (frame 1 first).
struct Series
{
    std::string label;
    std::vector<double> values;
};

struct PlotOptions
{
    std::string title = {};
    std::string x_title = "frame";
    std::string y_title = {};
    bool log_y = false; ///< plot log10 of the values; non-positive values leave a gap
    int width = 760;    ///< pixels
    int height = 380;   ///< pixels
};

/// A line plot of signals over frames, with axis titles, ticks, a legend and optional log scale.
/// Non-finite values (and, on a log axis, non-positive ones) end a line: a trace that became NaN
/// stops where it did.
inline std::string plot(const std::vector<Series>& series, const PlotOptions& o)
{
    static constexpr const char* colours[] = {"#5b7fb8", "#e8741c", "#2a9d8f", "#d62828", "#7b5ea7", "#6b4f3a"};
    const auto mapped = [&](double v) { return o.log_y ? (v > 0 ? std::log10(v) : NAN) : v; };
    double lo = std::numeric_limits<double>::max(), hi = -lo;
    std::size_t frames = 1;
    for (const auto& s : series)
    {
        frames = std::max(frames, s.values.size());
        for (double v : s.values)
            if (const double m = mapped(v); std::isfinite(m))
            {
                lo = std::min(lo, m);
                hi = std::max(hi, m);
            }
    }
    if (lo > hi)
        lo = 0, hi = 1;
    if (o.log_y)
        lo = std::floor(lo), hi = std::ceil(hi);
    if (hi - lo < 1e-12)
        hi = lo + 1;

    const double left = 70, right = 190, top = o.title.empty() ? 20 : 44, bottom = 50;
    const double pw = o.width - left - right, ph = o.height - top - bottom;
    const auto px = [&](double frame) { return left + (frame - 1) / std::max<double>(1, double(frames) - 1) * pw; };
    const auto py = [&](double m) { return top + (hi - m) / (hi - lo) * ph; };
    using detail::fixed;

    std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(o.width) + "\" height=\"" +
                      std::to_string(o.height) + "\" viewBox=\"0 0 " + std::to_string(o.width) + " " +
                      std::to_string(o.height) + "\" font-family=\"Helvetica, Arial, sans-serif\">\n";
    out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    if (!o.title.empty())
        out += detail::text(o.width / 2.0, 24, o.title, "middle", 14, " font-weight=\"bold\"");
    out += "<rect x=\"" + fixed(left) + "\" y=\"" + fixed(top) + "\" width=\"" + fixed(pw) + "\" height=\"" +
           fixed(ph) + "\" fill=\"#f7f9fc\" stroke=\"#b0b8c6\"/>\n";
    // y ticks: every decade on a log axis, five steps otherwise.
    const int steps = o.log_y ? int(hi - lo) : 5;
    const int stride = std::max(1, steps / 8);
    for (int k = 0; k <= steps; k += stride)
    {
        const double m = lo + (hi - lo) * k / steps;
        char label[32];
        if (o.log_y)
            std::snprintf(label, sizeof label, "1e%d", int(std::lround(m)));
        else
            std::snprintf(label, sizeof label, "%.3g", m);
        out += "<line x1=\"" + fixed(left) + "\" y1=\"" + fixed(py(m)) + "\" x2=\"" + fixed(left + pw) + "\" y2=\"" +
               fixed(py(m)) + "\" stroke=\"#e1e6ee\"/>\n";
        out += detail::text(left - 6, py(m) + 4, label, "end", 11);
    }
    for (int k = 0; k <= 4; ++k)
    {
        const double frame = 1 + (double(frames) - 1) * k / 4;
        out += detail::text(px(frame), top + ph + 16, std::to_string(int(std::lround(frame))), "middle", 11);
    }
    out += detail::text(left + pw / 2, o.height - 10, o.x_title, "middle", 12);
    out += detail::text(16, top + ph / 2, o.y_title, "middle", 12,
                        (" transform=\"rotate(-90 16 " + fixed(top + ph / 2) + ")\"").c_str());
    for (std::size_t k = 0; k < series.size(); ++k)
    {
        const char* colour = colours[k % std::size(colours)];
        std::string points;
        const auto flush = [&] {
            if (!points.empty())
                out += detail::polyline("stroke=\"" + std::string(colour) + "\" stroke-width=\"1.6\" fill=\"none\"",
                                        points);
            points.clear();
        };
        for (std::size_t n = 0; n < series[k].values.size(); ++n)
        {
            const double m = mapped(series[k].values[n]);
            if (!std::isfinite(m))
            {
                flush();
                continue;
            }
            detail::append_point(points, px(double(n + 1)), py(m));
        }
        flush();
        const double ly = top + 14 + 18 * double(k);
        out += "<line x1=\"" + fixed(left + pw + 12) + "\" y1=\"" + fixed(ly - 4) + "\" x2=\"" + fixed(left + pw + 32) +
               "\" y2=\"" + fixed(ly - 4) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
        out += detail::text(left + pw + 38, ly, series[k].label, "start", 11);
    }
    out += "</svg>\n";
    return out;
}

inline void save(const std::string& path, const std::string& svg)
{
    detail::write_file(path, svg);
}

} // namespace simdverlet::svg

namespace simdverlet
{
/// Writes `geometry` (debug_lines, outline, or both joined with +=) to an SVG file at `path`: one
/// panel on a window fitted to its particles and segments, x right and y down. Collider outlines
/// are drawn but do not stretch the window. options.title heads the picture; several panels on
/// one window, or a window set by hand, are what svg::Figure is for.
template <class T>
void write_svg(const std::string& path, const DebugGeometry<T>& geometry, const svg::FigureOptions& options = {})
{
    svg::Figure figure(options);
    figure.add_panel().add(geometry);
    figure.save(path);
}
} // namespace simdverlet
