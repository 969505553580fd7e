# cmake -DMANIFEST=<build>/sanitize.tsv [-DONLY=<regex>] -P Sanitize.cmake   (target: sanitize)
#
# Runs every lesson program, every lesson's doctest binary and every lesson's exercise checks built
# against the reference solutions under
#   compute-sanitizer --leak-check full --report-api-errors no
# and fails unless each reports 0 errors and 0 bytes leaked. API errors are not reported because
# the lessons provoke them on purpose (cuInit(1), popping an empty stack, ...); memory errors,
# and leaks still are. Left out: the suites in WORKBOOK_SANITIZE_EXCLUDED_SUITES and a lesson's own
# SANITIZE_EXCLUDE list (cmake/WorkbookLessons.cmake and lessons/CMakeLists.txt say why each), and
# on a machine with one device the multi-device suites. Lessons marked SANITIZE_PARENT_ONLY (10, 11,
# 12) run with --target-processes application-only: their child processes fault, reset the device
# or measure the JIT on purpose, and are not checked.
cmake_minimum_required(VERSION 3.25)
find_program(SANITIZER compute-sanitizer HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)
if(NOT SANITIZER)
  message(FATAL_ERROR "compute-sanitizer was not found: it ships with the CUDA toolkit (bin/compute-sanitizer)")
endif()
execute_process(COMMAND nvidia-smi -L OUTPUT_VARIABLE gpus ERROR_QUIET)
string(REGEX MATCHALL "GPU [0-9]+:" gpus "${gpus}")
list(LENGTH gpus devices)

file(STRINGS "${MANIFEST}" lines)
set(failed "")
set(count 0)
foreach(line IN LISTS lines)
  string(REPLACE "\t" ";" fields "${line}")
  list(POP_FRONT fields name multi exclude flags)
  string(REPLACE "," ";" flags "${flags}")
  if(ONLY AND NOT name MATCHES "${ONLY}")
    continue()
  endif()
  if(multi AND devices LESS 2)
    set(exclude "${exclude},${multi}")
  endif()
  if(exclude)
    list(APPEND fields "--test-suite-exclude=${exclude}")
  endif()
  # Lesson 10 shows compute-sanitizer's report by running it itself; under the sanitizer it skips that.
  set(ENV{WORKBOOK_UNDER_SANITIZER} 1)
  execute_process(COMMAND "${SANITIZER}" --leak-check full --report-api-errors no ${flags} ${fields}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX MATCH "ERROR SUMMARY: [0-9]+ errors?" errors "${out}")
  string(REGEX MATCH "LEAK SUMMARY: [0-9]+ bytes leaked in [0-9]+ allocations" leaks "${out}")
  # An exercise check binary exits 77 when it skipped what needs two devices on a machine with one.
  set(ended_well FALSE)
  if(rc EQUAL 0 OR (rc EQUAL 77 AND name MATCHES "^exercise"))
    set(ended_well TRUE)
  endif()
  if(ended_well AND errors STREQUAL "ERROR SUMMARY: 0 errors" AND leaks MATCHES "^LEAK SUMMARY: 0 bytes")
    message("clean   ${name}: ${errors}, ${leaks}")
  else()
    message("${out}")
    message("FAILED  ${name}: exit ${rc}, ${errors}, ${leaks}")
    list(APPEND failed "${name}")
  endif()
  math(EXPR count "${count} + 1")
endforeach()
if(failed)
  message(FATAL_ERROR "not clean under compute-sanitizer: ${failed}")
endif()
message("${count} programs clean under compute-sanitizer --leak-check full (${devices} device(s))")
