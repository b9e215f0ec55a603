// The float64 classes: Simulation64, Cloth64, ColliderSet64, ...
#include "bindings.hpp"

namespace simdverlet::python
{
void bind_double(py::module_& m)
{
    bind_scalar<double>(m, "64");
}
} // namespace simdverlet::python
