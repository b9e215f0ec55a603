// The float32 classes: Simulation, Cloth, ColliderSet, ...
#include "bindings.hpp"

namespace simdverlet::python
{
void bind_float(py::module_& m)
{
    bind_scalar<float>(m, "");
}
} // namespace simdverlet::python
