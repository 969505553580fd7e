# cmake -DEXTRA_INCLUDE=<dir holding another toolkit's cuda.h> -DTOOLKIT_INCLUDE=<this build's toolkit include dir>
#       -DCOMPILER=<c++> -DSOURCE_DIR=<repo>
#       -DOUT_DIR=<scratch> -DINCLUDES=<list> -DDEFINES=<list> -P CheckOtherHeaders.cmake
# (ctest common.cuda12-headers)
#
# The course promises CUDA 12.0 and newer. The machines have one toolkit, so this compiles every
# host source (lessons, common, tests, the GPU launcher) with -fsyntax-only against another
# toolkit's cuda.h, with the CUresult table generated from that same header. It proves the host
# code compiles there; it does not build device code with that toolkit's nvcc, link against its
# libraries, or run against a driver of that version.
cmake_minimum_required(VERSION 3.25)
if(NOT EXTRA_INCLUDE)
  message("SKIPPED: no second toolkit's headers: configure with -DWORKBOOK_EXTRA_CUDA_INCLUDE=<dir holding cuda.h> "
          "(or set that environment variable), e.g. ../shared/toolkits/cuda-12.6/include")
  return()
endif()
if(NOT EXISTS "${EXTRA_INCLUDE}/cuda.h")
  message(FATAL_ERROR "WORKBOOK_EXTRA_CUDA_INCLUDE is ${EXTRA_INCLUDE}, which holds no cuda.h")
endif()
file(STRINGS "${EXTRA_INCLUDE}/cuda.h" version REGEX "^#define CUDA_VERSION [0-9]+")
string(REGEX REPLACE "[^0-9]" "" version "${version}")
message("Checking the host sources against ${EXTRA_INCLUDE}/cuda.h (CUDA_VERSION ${version})")

include("${CMAKE_CURRENT_LIST_DIR}/WorkbookErrorTable.cmake")
file(MAKE_DIRECTORY "${OUT_DIR}")
workbook_generate_error_table("${OUT_DIR}/cuda_error_table.inc" "${EXTRA_INCLUDE}/cuda.h")

file(GLOB sources "${SOURCE_DIR}/common/*.cpp" "${SOURCE_DIR}/lessons/*/*.cpp" "${SOURCE_DIR}/tests/*.cpp"
     "${SOURCE_DIR}/tests/exercises/*.cpp" "${SOURCE_DIR}/tests/exercises/*/*.cpp" "${SOURCE_DIR}/tests/exercises/*/*/*.cpp" "${SOURCE_DIR}/cmake/gpu_launcher.cpp")
# The include path of the build: the exercise checks include "check.hpp" and "05-memory/exercises.hpp";
# a lesson's own folder comes first for its sources (below), as its CMake targets have it.
set(flags -std=c++17 -fsyntax-only -Wall -Wextra -Werror "-I${EXTRA_INCLUDE}" "-I${OUT_DIR}")
foreach(dir IN LISTS INCLUDES ITEMS "${SOURCE_DIR}/tests/exercises" "${SOURCE_DIR}/lessons")
  list(APPEND flags "-I${dir}")
endforeach()
foreach(def IN LISTS DEFINES)
  list(APPEND flags "-D${def}")
endforeach()
# The files are compiled `cores` at a time: execute_process runs the COMMANDs of one call at once
# (as a pipeline; -fsyntax-only reads no input and writes its diagnostics to stderr, so nothing
# passes between them), and gives each one's exit code. A file that failed is compiled again alone,
# so that its own diagnostics are shown.
cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
set(pending 0)
set(batch "")
macro(check_batch)
  if(pending GREATER 0)
    execute_process(${batch} RESULTS_VARIABLE rcs OUTPUT_QUIET ERROR_QUIET)
    math(EXPR top "${pending} - 1")
    foreach(i RANGE 0 ${top})
      list(GET rcs ${i} rc)
      if(rc EQUAL 0)
        message("ok      ${name_${i}}${note_${i}}")
      else()
        execute_process(COMMAND ${command_${i}} OUTPUT_VARIABLE out ERROR_VARIABLE out)
        message("${out}")
        message("FAILED  ${name_${i}}")
        list(APPEND failed "${name_${i}}")
      endif()
    endforeach()
  endif()
  set(pending 0)
  set(batch "")
endmacro()
set(failed "")
set(unchecked "")
foreach(src IN LISTS sources)
  file(RELATIVE_PATH name "${SOURCE_DIR}" "${src}")
  # A source that includes another header of the toolkit (cuda_runtime.h, cudaTypedefs.h) can only
  # be checked where the second toolkit's folder has that header too: say so instead of guessing.
  file(STRINGS "${src}" toolkit_includes REGEX "^#include <(cuda_runtime|cuda_runtime_api|cudaTypedefs)[^>]*>")
  set(missing "")
  foreach(inc IN LISTS toolkit_includes)
    string(REGEX REPLACE "^#include <([^>]+)>.*$" "\\1" header "${inc}")
    if(NOT EXISTS "${EXTRA_INCLUDE}/${header}")
      list(APPEND missing "${header}")
    endif()
  endforeach()
  if(missing)
    string(REPLACE ";" ", " missing "${missing}")
    message("skipped ${name}: it includes ${missing}, which ${EXTRA_INCLUDE} lacks")
    list(APPEND unchecked "${name}")
    continue()
  endif()
  # The libraries beside the driver (NVRTC, nvJitLink) have headers of their own that do not include
  # cuda.h. Where the second folder lacks them, they come from this build's toolkit, searched after
  # it: the source's Driver API calls are still checked against the second cuda.h, and the line says
  # which headers were not.
  file(STRINGS "${src}" library_includes REGEX "^#include <(nvrtc|nvJitLink)\\.h>")
  set(borrowed "")
  foreach(inc IN LISTS library_includes)
    string(REGEX REPLACE "^#include <([^>]+)>.*$" "\\1" header "${inc}")
    if(NOT EXISTS "${EXTRA_INCLUDE}/${header}")
      list(APPEND borrowed "${header}")
    endif()
  endforeach()
  set(after "")
  set(note "")
  if(borrowed)
    set(after "-idirafter" "${TOOLKIT_INCLUDE}")
    string(REPLACE ";" ", " borrowed "${borrowed}")
    set(note " (cuda.h from ${version}; ${borrowed} from this build's toolkit, which ${EXTRA_INCLUDE} lacks)")
  endif()
  # A lesson's test, its exercise checks, solutions and wrong variants include its headers
  # (exercises.hpp, lesson 11's runtime_kernel.hpp) from lessons/NN-name/.
  set(own "")
  if(name MATCHES "^(lessons|tests/exercises)/([0-9][0-9]-[a-z0-9-]+)/")
    set(own "-I${SOURCE_DIR}/lessons/${CMAKE_MATCH_2}")
  elseif(name MATCHES "^tests/(lesson|exercises/exercise)([0-9][0-9])_")
    file(GLOB own LIST_DIRECTORIES true "${SOURCE_DIR}/lessons/${CMAKE_MATCH_2}-*")
    set(own "-I${own}")
  endif()
  set(name_${pending} "${name}")
  set(note_${pending} "${note}")
  set(command_${pending} "${COMPILER}" ${own} ${flags} ${after} "${src}")
  list(APPEND batch COMMAND ${command_${pending}})
  math(EXPR pending "${pending} + 1")
  if(pending EQUAL cores)
    check_batch()
  endif()
endforeach()
check_batch()
list(LENGTH sources count)
list(LENGTH unchecked skipped)
math(EXPR checked "${count} - ${skipped}")
if(failed)
  message(FATAL_ERROR "do not compile against CUDA ${version}'s cuda.h: ${failed}")
endif()
# Every host source must be covered: one that includes a toolkit header the other folder lacks is a
# gap in the CUDA 12 promise, not a pass.
if(unchecked)
  message(FATAL_ERROR "${skipped} host sources could not be checked against CUDA ${version}: ${unchecked}")
endif()
message("all ${checked} host sources compile against CUDA_VERSION ${version}")
