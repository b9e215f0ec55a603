# simdverlet_parallel_backends(<target>)
#
# The executor adapters include/simdverlet/core/parallel/openmp.hpp and tbb.hpp are only
# compiled when a program includes them, so the library target itself never depends on OpenMP
# or oneTBB. The project's own programs (tests, benchmarks, examples) link whichever of the two
# is available and say so with compile definitions, always defined as 0 or 1:
#
#   SIMDVERLET_HAVE_OPENMP   OpenMP::OpenMP_CXX found and linked
#   SIMDVERLET_HAVE_TBB      TBB::tbb (oneTBB config) found and linked
#
# Sources guard their use of an adapter with `#if SIMDVERLET_HAVE_TBB` etc.
# Set SIMDVERLET_WITH_OPENMP / SIMDVERLET_WITH_TBB to OFF to build without them.
# Included once, from the top-level CMakeLists.txt, so the imported targets are visible in
# tests/, bench/ and examples/.

option(SIMDVERLET_WITH_OPENMP "Link OpenMP into tests/benchmarks/examples when found" ON)
option(SIMDVERLET_WITH_TBB "Link oneTBB into tests/benchmarks/examples when found" ON)

if(SIMDVERLET_WITH_OPENMP AND NOT TARGET OpenMP::OpenMP_CXX)
    find_package(OpenMP QUIET COMPONENTS CXX)
endif()
if(SIMDVERLET_WITH_TBB AND NOT TARGET TBB::tbb)
    find_package(TBB CONFIG QUIET)
endif()

if(SIMDVERLET_WITH_OPENMP AND TARGET OpenMP::OpenMP_CXX)
    message(STATUS "simdverlet: OpenMP ${OpenMP_CXX_VERSION} found (used by tests/benchmarks/examples)")
else()
    message(STATUS "simdverlet: OpenMP not used (its executor adapter is not built)")
endif()
if(SIMDVERLET_WITH_TBB AND TARGET TBB::tbb)
    message(STATUS "simdverlet: oneTBB ${TBB_VERSION} found (used by tests/benchmarks/examples)")
else()
    message(STATUS "simdverlet: oneTBB not used (its executor adapter is not built)")
endif()

function(simdverlet_parallel_backends target)
    if(SIMDVERLET_WITH_OPENMP AND TARGET OpenMP::OpenMP_CXX)
        target_link_libraries(${target} PRIVATE OpenMP::OpenMP_CXX)
        target_compile_definitions(${target} PRIVATE SIMDVERLET_HAVE_OPENMP=1)
    else()
        target_compile_definitions(${target} PRIVATE SIMDVERLET_HAVE_OPENMP=0)
    endif()
    if(SIMDVERLET_WITH_TBB AND TARGET TBB::tbb)
        target_link_libraries(${target} PRIVATE TBB::tbb)
        target_compile_definitions(${target} PRIVATE SIMDVERLET_HAVE_TBB=1)
    else()
        target_compile_definitions(${target} PRIVATE SIMDVERLET_HAVE_TBB=0)
    endif()
endfunction()
