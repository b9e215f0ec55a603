// Every header path from before the folders, which must still compile and forward to its new
// path with a deprecation message (ctest: compat_headers_forward). The executor adapters'
// old paths need their thread libraries, and obj_mesh.hpp's needs tinyobjloader: they are left out.
#include "simdverlet/chain_solve.hpp"
#include "simdverlet/cloth.hpp"
#include "simdverlet/cloth_bending.hpp"
#include "simdverlet/cloth_solve.hpp"
#include "simdverlet/collider.hpp"
#include "simdverlet/colliders.hpp"
#include "simdverlet/constraint_layers.hpp"
#include "simdverlet/constraints.hpp"
#include "simdverlet/controllers.hpp"
#include "simdverlet/debug_draw.hpp"
#include "simdverlet/error.hpp"
#include "simdverlet/grid_slots.hpp"
#include "simdverlet/handle.hpp"
#include "simdverlet/log.hpp"
#include "simdverlet/material.hpp"
#include "simdverlet/measure.hpp"
#include "simdverlet/mesh_cloth.hpp"
#include "simdverlet/mesh_collider.hpp"
#include "simdverlet/mesh_springs.hpp"
#include "simdverlet/motion.hpp"
#include "simdverlet/parallel.hpp"
#include "simdverlet/render_mesh.hpp"
#include "simdverlet/reorder.hpp"
#include "simdverlet/self_collision.hpp"
#include "simdverlet/self_collision_candidates.hpp"
#include "simdverlet/self_collision_drift.hpp"
#include "simdverlet/simd.hpp"
#include "simdverlet/simulation.hpp"
#include "simdverlet/snapshot.hpp"
#include "simdverlet/spring_chains.hpp"
#include "simdverlet/stage_state.hpp"
#include "simdverlet/state.hpp"
#include "simdverlet/step.hpp"
#include "simdverlet/strain_limit.hpp"
#include "simdverlet/strand.hpp"
#include "simdverlet/svg.hpp"
#include "simdverlet/tearing.hpp"
#include "simdverlet/tethers.hpp"
#include "simdverlet/triangle_contacts.hpp"
#include "simdverlet/triangle_mesh.hpp"
#include "simdverlet/triangle_tree.hpp"
#include "simdverlet/wind.hpp"
#include "simdverlet/world.hpp"

int main()
{
    simdverlet::Simulation<float> sim;
    auto cloth = simdverlet::add_cloth(sim, {.width = 4, .height = 4});
    simdverlet::add_tethers(sim, {.cloth = cloth});
    return int(sim.size()) == 16 ? 0 : 1;
}
