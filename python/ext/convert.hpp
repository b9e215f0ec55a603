// Conversions between NumPy / Python values and the library's types, shared by both scalar types'
// bindings. Every check raises the library's own exception types (std::invalid_argument ->
// ValueError, std::out_of_range -> IndexError), so a bad array reads like a bad C++ argument.
#pragma once

#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <simdverlet/simdverlet.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace simdverlet::python
{
namespace py = pybind11;

/// A C-contiguous array of T, converting from any array-like (lists, other dtypes).
template <class T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

inline std::string shape_of(const py::array& a)
{
    std::string s = "(";
    for (py::ssize_t k = 0; k < a.ndim(); ++k)
        s += (k ? ", " : "") + std::to_string(a.shape(k));
    return s + (a.ndim() == 1 ? ",)" : ")");
}

/// An (n, width) array, or a ValueError naming `what` and the shape it had.
template <class T>
Array<T> rows_of(const py::handle& obj, py::ssize_t width, const std::string& what)
{
    Array<T> a = py::cast<Array<T>>(obj);
    if (a.ndim() != 2 || a.shape(1) != width)
        throw std::invalid_argument("simdverlet: " + what + " must be an (n, " + std::to_string(width) +
                                    ") array, got shape " + shape_of(a));
    return a;
}

template <class T>
std::vector<Vec3<T>> points_of(const py::handle& obj, const std::string& what)
{
    const Array<T> a = rows_of<T>(obj, 3, what);
    const auto r = a.template unchecked<2>();
    std::vector<Vec3<T>> points(std::size_t(a.shape(0)));
    for (py::ssize_t k = 0; k < a.shape(0); ++k)
        points[std::size_t(k)] = Vec3<T>(r(k, 0), r(k, 1), r(k, 2));
    return points;
}

template <class T>
std::vector<Vec2<T>> uvs_of(const py::handle& obj, const std::string& what)
{
    const Array<T> a = rows_of<T>(obj, 2, what);
    const auto r = a.template unchecked<2>();
    std::vector<Vec2<T>> uvs(std::size_t(a.shape(0)));
    for (py::ssize_t k = 0; k < a.shape(0); ++k)
        uvs[std::size_t(k)] = Vec2<T>(r(k, 0), r(k, 1));
    return uvs;
}

/// Triangles as (m, 3) integers. Values outside int32 are refused here, by index; the library
/// checks the rest (an index past the vertices, a repeated corner).
inline std::vector<std::array<std::int32_t, 3>> triangles_of(const py::handle& obj, const std::string& what)
{
    const Array<std::int64_t> a = rows_of<std::int64_t>(obj, 3, what);
    const auto r = a.unchecked<2>();
    std::vector<std::array<std::int32_t, 3>> tris(std::size_t(a.shape(0)));
    for (py::ssize_t k = 0; k < a.shape(0); ++k)
        for (py::ssize_t c = 0; c < 3; ++c)
        {
            const std::int64_t v = r(k, c);
            if (v < 0 || v > std::numeric_limits<std::int32_t>::max())
                throw std::out_of_range("simdverlet: " + what + " " + std::to_string(k) + " has index " +
                                        std::to_string(v) + ", outside 0 to 2147483647");
            tris[std::size_t(k)][std::size_t(c)] = std::int32_t(v);
        }
    return tris;
}

template <class T>
py::array_t<T> points_array(const std::vector<Vec3<T>>& points)
{
    py::array_t<T> a({py::ssize_t(points.size()), py::ssize_t(3)});
    auto w = a.template mutable_unchecked<2>();
    for (std::size_t k = 0; k < points.size(); ++k)
        for (int c = 0; c < 3; ++c)
            w(py::ssize_t(k), c) = points[k][c];
    return a;
}

template <class T>
py::array_t<T> uvs_array(const std::vector<Eigen::Matrix<T, 2, 1>>& uvs)
{
    py::array_t<T> a({py::ssize_t(uvs.size()), py::ssize_t(2)});
    auto w = a.template mutable_unchecked<2>();
    for (std::size_t k = 0; k < uvs.size(); ++k)
        for (int c = 0; c < 2; ++c)
            w(py::ssize_t(k), c) = uvs[k][c];
    return a;
}

template <class I, std::size_t N>
py::array_t<I> index_rows(const std::vector<std::array<I, N>>& rows)
{
    py::array_t<I> a({py::ssize_t(rows.size()), py::ssize_t(N)});
    auto w = a.template mutable_unchecked<2>();
    for (std::size_t k = 0; k < rows.size(); ++k)
        for (std::size_t c = 0; c < N; ++c)
            w(py::ssize_t(k), py::ssize_t(c)) = rows[k][c];
    return a;
}

/// A 1-D view of `values` that keeps `owner` (the Python simulation) alive. A zero-length view
/// is an ordinary empty array: NumPy would allocate its own buffer for a null pointer.
template <class T>
py::array view_of(std::span<T> values, const py::handle& owner, bool writeable)
{
    using Plain = std::remove_const_t<T>;
    if (values.empty())
        return py::array_t<Plain>(0);
    py::array_t<Plain> a({py::ssize_t(values.size())}, {py::ssize_t(sizeof(Plain))}, const_cast<Plain*>(values.data()),
                         owner);
    if (!writeable)
        py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
}

/// A particle range from None (every particle), a (begin, end) pair, or anything with a
/// `range()` method returning one (a cloth, a strand).
inline ParticleRange range_of(const py::handle& obj)
{
    if (obj.is_none())
        return {};
    if (py::hasattr(obj, "range") && !py::isinstance<py::tuple>(obj) && !py::isinstance<py::list>(obj))
        return range_of(obj.attr("range")());
    // (begin, None) is what range_tuple gives for a range that follows the simulation's size.
    const auto pair = py::cast<std::pair<std::size_t, std::optional<std::size_t>>>(obj);
    return {pair.first, pair.second.value_or(ParticleRange::kToEnd)};
}

inline py::tuple range_tuple(const ParticleRange& r)
{
    return py::make_tuple(r.begin, r.end == ParticleRange::kToEnd ? py::object(py::none()) : py::int_(r.end));
}

/// Vertex selection for `pinned`: None, a callable of the vertex, or an iterable of vertices.
/// Evaluated here, in full, before the library is called, so a Python error leaves nothing added.
inline std::vector<bool> vertex_mask(const py::handle& obj, std::size_t count)
{
    std::vector<bool> mask(count, false);
    if (obj.is_none())
        return mask;
    if (PyCallable_Check(obj.ptr()))
    {
        for (std::size_t v = 0; v < count; ++v)
            mask[v] = py::cast<bool>(obj(v));
        return mask;
    }
    for (const py::handle item : obj)
    {
        const auto v = py::cast<std::size_t>(item);
        if (v >= count)
            throw std::out_of_range("simdverlet: pinned vertex " + std::to_string(v) + " is outside the " +
                                    std::to_string(count) + " vertices");
        mask[v] = true;
    }
    return mask;
}

/// Grid selection for `pinned`: None, a callable (col, row) -> bool, or an iterable of (col, row).
inline std::vector<bool> grid_mask(const py::handle& obj, int width, int height)
{
    const std::size_t w = std::size_t(width > 0 ? width : 0), h = std::size_t(height > 0 ? height : 0);
    std::vector<bool> mask(w * h, false);
    if (obj.is_none())
        return mask;
    if (PyCallable_Check(obj.ptr()))
    {
        for (int r = 0; r < height; ++r)
            for (int c = 0; c < width; ++c)
                mask[std::size_t(r) * w + std::size_t(c)] = py::cast<bool>(obj(c, r));
        return mask;
    }
    for (const py::handle item : obj)
    {
        const auto [c, r] = py::cast<std::pair<int, int>>(item);
        if (c < 0 || c >= width || r < 0 || r >= height)
            throw std::out_of_range("simdverlet: pinned (col, row) (" + std::to_string(c) + ", " + std::to_string(r) +
                                    ") is outside the " + std::to_string(width) + " x " + std::to_string(height) +
                                    " grid");
        mask[std::size_t(r) * w + std::size_t(c)] = true;
    }
    return mask;
}

} // namespace simdverlet::python
