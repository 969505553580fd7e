# cmake -DPROGRAM=<exe> [-DARGS=<list>] [-DLIBRARY_PATH=<dir>] -DEXPECT_EXIT=<code>
#       -DEXPECT_OUTPUT=<regex> -P ExpectRun.cmake
# Runs a program (with LIBRARY_PATH first on LD_LIBRARY_PATH) and checks both its exit code and
# its output, which a plain ctest PASS_REGULAR_EXPRESSION cannot do together.
cmake_minimum_required(VERSION 3.25)
if(LIBRARY_PATH)
  set(ENV{LD_LIBRARY_PATH} "${LIBRARY_PATH}:$ENV{LD_LIBRARY_PATH}")
endif()
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT "${rc}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}; expected ${EXPECT_EXIT}")
endif()
if(NOT out MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "${PROGRAM}'s output does not match '${EXPECT_OUTPUT}'")
endif()
message("exit code ${rc} and output as expected")
