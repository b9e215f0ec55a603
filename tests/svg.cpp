// SVG output: well-formed XML holding one polyline per segment, deterministic to the byte.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace simdverlet;
using namespace simdverlet::testing;

namespace
{
/// A strict well-formedness check of the XML subset the writer emits: balanced, properly nested
/// elements, quoted attributes, known entities only, one root. Returns "" or what is wrong.
std::string xml_problem(const std::string& doc)
{
    std::vector<std::string> open;
    std::size_t roots = 0;
    for (std::size_t i = 0; i < doc.size();)
    {
        if (doc[i] != '<')
        {
            if (doc[i] == '&')
            {
                const std::size_t semi = doc.find(';', i);
                const std::string entity = semi == std::string::npos ? "" : doc.substr(i, semi - i + 1);
                if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;")
                    return "bad entity at " + std::to_string(i);
            }
            if (open.empty() && !std::isspace(static_cast<unsigned char>(doc[i])))
                return "text outside the root at " + std::to_string(i);
            ++i;
            continue;
        }
        const std::size_t close = doc.find('>', i);
        if (close == std::string::npos)
            return "unterminated tag at " + std::to_string(i);
        std::string tag = doc.substr(i + 1, close - i - 1);
        i = close + 1;
        if (!tag.empty() && tag[0] == '/')
        {
            if (open.empty() || open.back() != tag.substr(1))
                return "mismatched </" + tag.substr(1) + ">";
            open.pop_back();
            continue;
        }
        const bool self_closing = !tag.empty() && tag.back() == '/';
        if (self_closing)
            tag.pop_back();
        const std::string name = tag.substr(0, tag.find(' '));
        if (name.empty())
            return "empty tag name";
        // Attributes: name="value" pairs, quotes balanced, no raw '<' inside.
        std::size_t quotes = 0;
        for (char c : tag)
            quotes += c == '"' ? 1 : 0;
        if (quotes % 2 != 0 || tag.find('<') != std::string::npos)
            return "bad attributes in <" + name + ">";
        if (open.empty())
            ++roots;
        if (!self_closing)
            open.push_back(name);
    }
    if (!open.empty())
        return "unclosed <" + open.back() + ">";
    return roots == 1 ? "" : "expected one root element";
}

std::size_t occurrences(const std::string& s, const std::string& what)
{
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
        ++n;
    return n;
}

std::string file_contents(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream read;
    read << in.rdbuf();
    return read.str();
}

/// Three particles in a row, the first pinned, joined by two springs.
Simulation<float> chain_of_three()
{
    Simulation<float> sim;
    sim.add_particle({0, 0, 0}, 0.0f);
    sim.add_particle({1, 0, 0});
    sim.add_particle({2, 1, 0});
    sim.connect(0, 1, 1.0f, 60.0f);
    sim.connect(1, 2, 1.0f, 60.0f);
    return sim;
}
} // namespace

TEST_CASE("the well-formedness checker rejects what it should", "[svg]")
{
    CHECK(xml_problem("<a><b x=\"1\"/></a>").empty());
    CHECK_FALSE(xml_problem("<a><b></a>").empty());
    CHECK_FALSE(xml_problem("<a x=\"1></a>").empty());
    CHECK_FALSE(xml_problem("<a>fish & chips</a>").empty());
    CHECK_FALSE(xml_problem("<a/><b/>").empty());
}

TEST_CASE("a figure of the guide's sheet is well-formed and draws one polyline per segment", "[svg]")
{
    auto sim = guide_sheet<float>(60.0f);
    sim.constraints().set_slot(47, 0, 150, 5.0f, 60.0f); // one mis-wired slot
    const auto g = debug_lines(sim, {.velocity_scale = 2});
    svg::Figure figure({.columns = 2, .title = "a <title> & \"quotes\""});
    figure.add_panel("two\nlines of caption").add(g);
    figure.add_panel("the outline of a ball").add(outline(SphereCollider<float>({.radius = 1})));
    const std::string doc = figure.str();
    CHECK(xml_problem(doc).empty());
    // One polyline per spring (counted from the constraints, not from what debug_lines returned),
    // one per velocity whisker and the ball's outline.
    const std::size_t springs = count_segments(sim);
    CHECK(springs == 371); // 19 x 10 + 20 x 9 pairs, less the one rewired, plus its two one-way halves
    CHECK(g.segments.size() == springs + sim.size());
    CHECK(occurrences(doc, "<polyline") == springs + sim.size() + 1);
    CHECK(occurrences(doc, "<circle") == g.dots.size());
    CHECK(occurrences(doc, "stroke=\"#e8741c\"") == 2); // the two one-way constraints
    CHECK(doc.find("a &lt;title&gt; &amp; &quot;quotes&quot;") != std::string::npos);
    CHECK(occurrences(doc, "<text") == 1 + 2 + 1);
    figure.save(output_path("sheet.svg"));
    CHECK(file_contents(output_path("sheet.svg")) == doc);
}

TEST_CASE("write_svg writes one well-formed panel on the fitted window", "[svg]")
{
    const auto sim = chain_of_three();
    auto g = debug_lines(sim);
    g += outline(SphereCollider<float>({.center = {1, 0, 0}, .radius = 40}));
    const std::string path = output_path("write_svg.svg");
    std::filesystem::remove(path); // a file left by an earlier run must not pass for this one's
    write_svg(path, g, {.title = "a chain of three"});
    REQUIRE(std::filesystem::exists(path));
    const std::string doc = file_contents(path);
    CHECK(xml_problem(doc).empty());
    CHECK(occurrences(doc, "<polyline") == 2 + 1); // two springs, the ball's outline
    CHECK(occurrences(doc, "<circle") == 3);
    CHECK(occurrences(doc, ">a chain of three<") == 1);
    // The ball's 40-unit outline is drawn but leaves the window fitted to the chain.
    svg::Figure figure({.title = "a chain of three"});
    figure.add_panel().add(g);
    const svg::Rect window = figure.window(); // the chain spans [0, 2] x [0, 1], padded by 0.5
    CHECK(window.x == Approx(-0.5));
    CHECK(window.y == Approx(-0.5));
    CHECK(window.w == Approx(2.0 + 2 * 0.5));
    CHECK(window.h == Approx(1.0 + 2 * 0.5));
    CHECK(doc == figure.str());
}

TEST_CASE("write_svg to a folder that does not exist is an error naming the path", "[svg]")
{
    const std::string path = output_path("no such folder/chain.svg");
    CHECK_THROWS_AS(write_svg(path, debug_lines(chain_of_three())), std::runtime_error);
    CHECK_THROWS_WITH(write_svg(path, debug_lines(chain_of_three())), ContainsSubstring(path));
}

TEST_CASE("the same geometry gives the same bytes", "[svg]")
{
    const auto draw = [] {
        auto sim = guide_sheet<double>(60.0);
        for (int frame = 0; frame < 50; ++frame)
            sim.step(guide_step<double>(16));
        svg::Figure figure;
        figure.add_panel("x").add(debug_lines(sim));
        return figure.str();
    };
    CHECK(draw() == draw());
}

TEST_CASE("a plot has its axes, a legend entry per series, and gaps where values are not finite", "[svg]")
{
    const std::vector<svg::Series> series = {{"rises", {1e-3, 1e-2, 1e-1, 1}},
                                             {"dies", {1e-2, 1e-1, std::numeric_limits<double>::quiet_NaN(), 5}}};
    const std::string doc = svg::plot(series, {.title = "t", .y_title = "strain", .log_y = true});
    CHECK(xml_problem(doc).empty());
    CHECK(doc.find(">rises<") != std::string::npos);
    CHECK(doc.find(">dies<") != std::string::npos);
    CHECK(doc.find(">strain<") != std::string::npos);
    CHECK(doc.find(">1e-3<") != std::string::npos); // decade ticks on a log axis
    CHECK(doc.find(">1e0<") != std::string::npos);
    // "rises" is one line; "dies" breaks at its NaN into two.
    CHECK(occurrences(doc, "<polyline") == 3);
}

TEST_CASE("a fitted window leaves collider outlines out, and a set window is used as given", "[svg]")
{
    svg::Figure figure;
    auto& panel = figure.add_panel();
    panel.add_dot(Vec3<float>(0, 0, 0), 1, svg::palette::dot).add_dot(Vec3<float>(2, 1, 0), 1, svg::palette::dot);
    panel.add(outline(PlaneCollider<float>({.normal = {0, -1, 0}, .offset = -5})));
    const svg::Rect fitted = figure.window();
    CHECK(fitted.x == Approx(-0.5));
    CHECK(fitted.y == Approx(-0.5));
    CHECK(fitted.w == Approx(3.0));
    CHECK(fitted.h == Approx(2.0));
    figure.set_window({-10, -5, 20, 30});
    const svg::Rect set = figure.window();
    CHECK(set.x == -10.0);
    CHECK(set.y == -5.0);
    CHECK(set.w == 20.0);
    CHECK(set.h == 30.0);
    CHECK_THROWS_AS(figure.set_window({0, 0, 0, 1}), std::invalid_argument);
    CHECK(figure.window().w == 20.0); // a refused window leaves the one set
}

namespace
{
/// One of every kind of point: a spring, a whisker, a dot, a two-point outline, all at (1, 2, z).
DebugGeometry<double> one_of_each(double z)
{
    DebugGeometry<double> g;
    const Vec3<double> p(1, 2, z);
    g.segments.push_back({p, p, SegmentKind::spring});
    g.segments.push_back({p, p, SegmentKind::velocity});
    g.dots.push_back({p, true});
    g.outlines.push_back({p, p});
    return g;
}

/// Every point of g, in the order segments (a, b), dots, outlines.
std::vector<Vec3<double>> points_of(const DebugGeometry<double>& g)
{
    std::vector<Vec3<double>> points;
    for (const auto& s : g.segments)
        points.insert(points.end(), {s.a, s.b});
    for (const auto& d : g.dots)
        points.push_back(d.position);
    for (const auto& line : g.outlines)
        points.insert(points.end(), line.begin(), line.end());
    return points;
}
} // namespace

TEST_CASE("a projection leaves a point at z = 0 where it was", "[svg][projection]")
{
    const auto g = svg::projected(one_of_each(0), {.depth_angle_degrees = 40, .depth_scale = 0.7});
    for (const auto& p : points_of(g))
        CHECK(p == Vec3<double>(1, 2, 0));
}

TEST_CASE("a projection moves a point at z = 1 by (s cos a, -s sin a): +z recedes up and to the right",
          "[svg][projection]")
{
    const svg::Projection view; // the defaults: a = 30 degrees, s = 0.5
    CHECK(view.depth_angle_degrees == 30.0);
    CHECK(view.depth_scale == 0.5);
    CHECK(view.y_scale == 1.0);
    const double a = 30 * std::numbers::pi / 180;
    const auto g = svg::projected(one_of_each(1), view);
    for (const auto& p : points_of(g))
    {
        CHECK(p.x() == 1 + 0.5 * std::cos(a));
        CHECK(p.y() == 2 - 0.5 * std::sin(a));
        CHECK(p.z() == 0.0);
    }
    const Vec3<double> moved = points_of(g).front();
    CHECK(moved.x() > 1); // right
    CHECK(moved.y() < 2); // up the page, where y runs down
}

TEST_CASE("a projection maps every point of every kind and keeps the counts and kinds", "[svg][projection]")
{
    auto sim = guide_sheet<float>(60.0f);
    for (std::size_t i = 0; i < sim.size(); ++i) // fold the sheet into depth so every point moves
        sim.state().set_position(i, sim.state().position(i) + Vec3<float>(0, 0, float(i % 7) + 1));
    auto g = debug_lines(sim, {.velocity_scale = 2});
    g += outline(SphereCollider<float>({.center = {0, 0, 3}, .radius = 1}));
    const auto p = svg::projected(g, {.depth_angle_degrees = 45, .depth_scale = 1});
    REQUIRE(p.segments.size() == g.segments.size());
    REQUIRE(p.dots.size() == g.dots.size());
    REQUIRE(p.outlines.size() == g.outlines.size());
    CHECK(p.count(SegmentKind::velocity) == g.count(SegmentKind::velocity));
    CHECK(p.count(SegmentKind::spring) == g.count(SegmentKind::spring));
    const double d = std::sqrt(0.5); // cos 45 = sin 45
    const auto expect = [&](const Vec3<float>& from, const Vec3<float>& to) {
        CHECK(to.x() == Approx(from.x() + from.z() * d));
        CHECK(to.y() == Approx(from.y() - from.z() * d));
        CHECK(to.z() == 0.0f);
    };
    for (std::size_t k = 0; k < g.segments.size(); ++k)
    {
        CHECK(p.segments[k].kind == g.segments[k].kind);
        expect(g.segments[k].a, p.segments[k].a);
        expect(g.segments[k].b, p.segments[k].b);
    }
    for (std::size_t k = 0; k < g.dots.size(); ++k)
    {
        CHECK(p.dots[k].pinned == g.dots[k].pinned);
        expect(g.dots[k].position, p.dots[k].position);
    }
    for (std::size_t k = 0; k < g.outlines.size(); ++k)
    {
        REQUIRE(p.outlines[k].size() == g.outlines[k].size());
        for (std::size_t n = 0; n < g.outlines[k].size(); ++n)
            expect(g.outlines[k][n], p.outlines[k][n]);
    }
}

TEST_CASE("two sheets stacked in depth, one picture in the front view, are apart once projected", "[svg][projection]")
{
    DebugGeometry<double> g;
    g.dots.push_back({{0, 0, 0}, false});
    g.dots.push_back({{0, 0, 2}, false}); // hidden behind the first in the plain x-y picture
    svg::Figure front, oblique;
    front.add_panel().add(g);
    oblique.add_panel().add(svg::projected(g, {}));
    CHECK(occurrences(front.str(), "<circle") == 2);
    CHECK(front.window().w == Approx(1.0)); // both dots at one place: only the padding
    // z = 2 at the default 30 degrees and half scale: sqrt(3) / 2 across and 1 / 2 up, plus the padding.
    CHECK(oblique.window().w == Approx(1.0 + std::sqrt(3.0) / 2));
    CHECK(oblique.window().h == Approx(1.0 + 0.5));
}

TEST_CASE("the top view draws x across and world z up the page, dropping y", "[svg][projection]")
{
    const auto g = svg::projected(one_of_each(3), svg::Projection::top());
    for (const auto& p : points_of(g))
    {
        CHECK(p.x() == Approx(1.0).margin(1e-12));
        CHECK(p.y() == Approx(-3.0));
        CHECK(p.z() == 0.0);
    }
}

TEST_CASE("a projection with a value that is not finite or a negative scale is an error naming it", "[svg][projection]")
{
    const auto g = one_of_each(1);
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS(svg::projected(g, {.depth_scale = -0.25}), std::invalid_argument);
    CHECK_THROWS_WITH(svg::projected(g, {.depth_scale = -0.25}),
                      ContainsSubstring("depth_scale") && ContainsSubstring("got -0.25"));
    CHECK_THROWS_WITH(svg::projected(g, {.depth_scale = inf}),
                      ContainsSubstring("depth_scale") && ContainsSubstring("got inf"));
    CHECK_THROWS_WITH(svg::projected(g, {.depth_angle_degrees = nan}),
                      ContainsSubstring("depth_angle_degrees") && ContainsSubstring("got NaN"));
    CHECK_THROWS_WITH(svg::projected(g, {.y_scale = -1}), ContainsSubstring("y_scale") && ContainsSubstring("got -1"));
    CHECK_NOTHROW(svg::projected(g, {.depth_scale = 0})); // 0 is the plain x-y view
}
