# Repair a broken xsimd package config.
#
# Debian's libxsimd-dev (8.1) exports an imported target `xsimd` whose INTERFACE_LINK_LIBRARIES
# names `xtl`, but its config never looks for xtl. CMake then treats `xtl` as a plain library
# name and every consumer fails to link with "cannot find -lxtl". xsimd only needs xtl for its
# optional xtl::xcomplex support, which simdverlet does not use.
#
# If a real `xtl` target exists (xsimd built with xtl support, whose config found xtl), leave
# everything alone. Otherwise drop `xtl` from the link interface of `xsimd`.
#
# Included by the top-level CMakeLists.txt and by the installed simdverletConfig.cmake, right
# after xsimd has been found. Idempotent.

if(TARGET xsimd AND NOT TARGET xtl)
    get_target_property(_simdverlet_xsimd_real xsimd ALIASED_TARGET)
    if(NOT _simdverlet_xsimd_real)
        set(_simdverlet_xsimd_real xsimd)
    endif()

    get_target_property(_simdverlet_xsimd_libs ${_simdverlet_xsimd_real} INTERFACE_LINK_LIBRARIES)
    if(_simdverlet_xsimd_libs)
        set(_simdverlet_xsimd_kept "${_simdverlet_xsimd_libs}")
        # Matches `xtl` and `$<LINK_ONLY:xtl>`.
        list(FILTER _simdverlet_xsimd_kept EXCLUDE REGEX "^(\\$<LINK_ONLY:)?xtl>?$")
        if(NOT _simdverlet_xsimd_kept STREQUAL _simdverlet_xsimd_libs)
            set_property(TARGET ${_simdverlet_xsimd_real}
                         PROPERTY INTERFACE_LINK_LIBRARIES "${_simdverlet_xsimd_kept}")
            message(STATUS "simdverlet: removed the undefined `xtl` from the link interface of "
                           "the imported target `xsimd` (broken xsimd package config)")
        endif()
        unset(_simdverlet_xsimd_kept)
    endif()

    unset(_simdverlet_xsimd_libs)
    unset(_simdverlet_xsimd_real)
endif()
