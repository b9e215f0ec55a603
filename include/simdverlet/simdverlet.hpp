// Umbrella header: everything simdverlet offers, in one include, layer by layer. The optional
// thread adapters (core/parallel/openmp.hpp, core/parallel/tbb.hpp) are left out on purpose: they
// pull in their runtimes; so is io/obj_mesh.hpp, which needs tinyobjloader (simdverlet::obj).
#pragma once

// core: particles, springs, the step and its stages, executors, SIMD
#include "simdverlet/core/constraint_layers.hpp"
#include "simdverlet/core/constraints.hpp"
#include "simdverlet/core/controllers.hpp"
#include "simdverlet/core/error.hpp"
#include "simdverlet/core/log.hpp"
#include "simdverlet/core/measure.hpp"
#include "simdverlet/core/reorder.hpp"
#include "simdverlet/core/simd.hpp"
#include "simdverlet/core/simd_lanes.hpp"
#include "simdverlet/core/simulation.hpp"
#include "simdverlet/core/state.hpp"
#include "simdverlet/core/step.hpp"

// cloth: grid and mesh cloth, strands, materials, the forces and tears that act on them
#include "simdverlet/cloth/cloth.hpp"
#include "simdverlet/cloth/material.hpp"
#include "simdverlet/cloth/mesh_cloth.hpp"
#include "simdverlet/cloth/render_mesh.hpp"
#include "simdverlet/cloth/strand.hpp"
#include "simdverlet/cloth/tearing.hpp"
#include "simdverlet/cloth/triangle_mesh.hpp"
#include "simdverlet/cloth/wind.hpp"

// collision: shapes, triangle meshes, self-collision
#include "simdverlet/collision/collider.hpp"
#include "simdverlet/collision/collider_set.hpp"
#include "simdverlet/collision/colliders.hpp"
#include "simdverlet/collision/mesh_collider.hpp"
#include "simdverlet/collision/self_collision.hpp"

// limits: what holds cloth where the springs alone would not
#include "simdverlet/limits/motion.hpp"
#include "simdverlet/limits/strain_limit.hpp"
#include "simdverlet/limits/tethers.hpp"

// io: snapshots, drawings, debug lines
#include "simdverlet/io/debug_draw.hpp"
#include "simdverlet/io/snapshot.hpp"
#include "simdverlet/io/svg.hpp"
