// Umbrella header: everything simdverlet offers, in one include. The optional thread adapters
// (parallel/openmp.hpp, parallel/tbb.hpp) are left out on purpose: they pull in their runtimes.
#pragma once

#include "cloth.hpp"
#include "colliders.hpp"
#include "constraints.hpp"
#include "controllers.hpp"
#include "debug_draw.hpp"
#include "error.hpp"
#include "kernels.hpp"
#include "log.hpp"
#include "measure.hpp"
#include "self_collision.hpp"
#include "simd.hpp"
#include "simulation.hpp"
#include "snapshot.hpp"
#include "state.hpp"
#include "strand.hpp"
#include "svg.hpp"
#include "tearing.hpp"
#include "wind.hpp"
