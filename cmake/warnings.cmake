# simdverlet_warnings(<target>)
#
# Turns on the project's warning set for one of its own targets (tests, benchmarks, examples).
# Never applied to the INTERFACE library itself: consumers choose their own warnings.
# With SIMDVERLET_WERROR=ON warnings become errors.

function(simdverlet_warnings target)
    if(MSVC)
        target_compile_options(${target} PRIVATE /W4 /permissive-)
        if(SIMDVERLET_WERROR)
            target_compile_options(${target} PRIVATE /WX)
        endif()
    else()
        target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
        if(SIMDVERLET_WERROR)
            target_compile_options(${target} PRIVATE -Werror)
        endif()
    endif()
endfunction()
