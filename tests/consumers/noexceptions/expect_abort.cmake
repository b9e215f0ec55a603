# cmake -DPROGRAM=<exe> -DMESSAGE=<regex> -P expect_abort.cmake
#
# Runs PROGRAM and succeeds when it stopped abnormally and its output matches MESSAGE. A script,
# not PASS_REGULAR_EXPRESSION on the program itself: ctest fails a test killed by SIGABRT
# ("Subprocess aborted") whatever its output says.
execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
message(STATUS "${PROGRAM} ended with '${result}', output:\n${output}")
if(result STREQUAL "0")
    message(FATAL_ERROR "expected ${PROGRAM} to abort, but it exited normally")
endif()
if(NOT output MATCHES "${MESSAGE}")
    message(FATAL_ERROR "expected the output of ${PROGRAM} to match '${MESSAGE}'")
endif()
