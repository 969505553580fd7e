# The exercises of a lesson: what add_lesson() builds and tests when lessons/NN-name/exercises.cpp
# exists (course.lint and exercises.lint require it of every lesson).
#
# Files of lesson NN-name:
#   lessons/NN-name/exercises.hpp, exercises.cpp   the learner's: declarations, and each exercise's
#                                                   task above a body of wb::notDone()
#   tests/exercises/exerciseNN_name.cpp             the checks, one EXERCISE("x", title, hint) each
#   tests/exercises/NN-name/solution.cpp            the reference solutions
#   tests/exercises/NN-name/wrong.cpp               one deliberately wrong variant per exercise
#
# Built: exerciseNN_checks (the checks on the learner's file), exerciseNN_solutions and
# exerciseNN_wrong (the same checks on the solutions and on the wrong variants).
# Tests:
#   exerciseNN.<x>      one exercise's check on the learner's file (labels exercise, exerciseNN); with
#                       -DWORKBOOK_EXERCISES_USE=solutions, on the solutions instead
#   proofNN.solutions   every check passes on the solutions            (labels gpu, proof)
#   proofNN.wrong       every check fails on its wrong variant
#   proofNN.starting    every case of every check reports "not done" on the starting file
#   exercises.progress  after the exercise checks: the table of done / not done / failed
set(WORKBOOK_EXERCISES_USE "learner" CACHE STRING
  "what the exerciseNN.* tests check: learner (lessons/*/exercises.cpp) or solutions (tests/exercises/*/solution.cpp)")
set_property(CACHE WORKBOOK_EXERCISES_USE PROPERTY STRINGS learner solutions)
set(WORKBOOK_EXERCISE_RESULTS "${CMAKE_BINARY_DIR}/exercise-results")

# The checks' main() and reporter, and the bookkeeping tool (lint, proofs, progress table).
add_library(workbook_exercise_main STATIC "${CMAKE_SOURCE_DIR}/tests/exercises/check_main.cpp")
target_link_libraries(workbook_exercise_main PUBLIC doctest::doctest workbook::common)
target_include_directories(workbook_exercise_main PUBLIC
  "${CMAKE_SOURCE_DIR}/tests" "${CMAKE_SOURCE_DIR}/tests/exercises" "${CMAKE_SOURCE_DIR}/lessons")
add_executable(exercise_report "${CMAKE_SOURCE_DIR}/tests/exercises/exercise_report.cpp")
target_link_libraries(exercise_report PRIVATE workbook::images)

# _workbook_add_exercises(<NN-name> <NN> <name_with_underscores> <lesson program>
#   [SERIAL <exercise>...]  checks that measure time: ctest runs them with the GPU to themselves
#   [RUNTIME_SOURCES ...] [KERNELS ...] [EMBED ...] [LIBRARIES ...] [SANITIZER_FLAGS ...]  as the lesson
#   has them: its LIBRARIES are linked into the checks, the solutions and the wrong variants too)
function(_workbook_add_exercises folder nn slug_ program)
  cmake_parse_arguments(PARSE_ARGV 4 X "" "SANITIZER_FLAGS" "SERIAL;RUNTIME_SOURCES;KERNELS;EMBED;LIBRARIES")
  set(check_src "${CMAKE_SOURCE_DIR}/tests/exercises/exercise${nn}_${slug_}.cpp")
  set(learner "${CMAKE_SOURCE_DIR}/lessons/${folder}/exercises.cpp")
  set(solution "${CMAKE_SOURCE_DIR}/tests/exercises/${folder}/solution.cpp")
  set(wrong "${CMAKE_SOURCE_DIR}/tests/exercises/${folder}/wrong.cpp")
  foreach(f IN ITEMS "${check_src}" "${solution}" "${wrong}")
    if(NOT EXISTS "${f}")
      message(FATAL_ERROR "lessons/${folder} has exercises.cpp, so ${f} must exist (cmake/WorkbookExercises.cmake)")
    endif()
  endforeach()

  # The checks compile once and link three ways.
  add_library(exercise${nn}_check OBJECT "${check_src}")
  target_link_libraries(exercise${nn}_check PUBLIC workbook_exercise_main)
  target_compile_definitions(exercise${nn}_check PRIVATE "WORKBOOK_EXERCISE_LESSON=\"${nn}\"")
  if(X_LIBRARIES)
    target_link_libraries(exercise${nn}_check PRIVATE ${X_LIBRARIES})
  endif()
  foreach(pair IN ITEMS "checks|${learner}" "solutions|${solution}" "wrong|${wrong}")
    string(REPLACE "|" ";" pair "${pair}")
    list(GET pair 0 variant)
    list(GET pair 1 source)
    set(target exercise${nn}_${variant})
    add_executable(${target} $<TARGET_OBJECTS:exercise${nn}_check> "${source}")
    target_link_libraries(${target} PRIVATE workbook_exercise_main)
    target_include_directories(${target} PRIVATE "${CMAKE_SOURCE_DIR}/lessons/${folder}")
    if(X_LIBRARIES)
      target_link_libraries(${target} PRIVATE ${X_LIBRARIES})
    endif()
    if(X_RUNTIME_SOURCES)
      target_sources(${target} PRIVATE ${X_RUNTIME_SOURCES})
      target_link_libraries(${target} PRIVATE CUDA::cudart)
    endif()
    foreach(kernel IN LISTS X_KERNELS)
      add_dependencies(${target} kernel-${kernel})
    endforeach()
    if(X_EMBED)
      list(GET X_EMBED 0 image)
      list(GET X_EMBED 1 symbol)
      workbook_embed_image(${target} "${WORKBOOK_KERNEL_DIR}/${image}" ${symbol})
    endif()
  endforeach()
  if(X_RUNTIME_SOURCES)
    target_include_directories(exercise${nn}_check PRIVATE "${CMAKE_SOURCE_DIR}/lessons/${folder}")
  endif()

  # One ctest entry per exercise: ctest -R exercise05 checks lesson 05's.
  file(READ "${check_src}" text)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${check_src}" "${learner}")
  string(REGEX MATCHALL "\nEXERCISE\\(\"[a-z0-9-]+\",[ \n]*\"[^\"]*\"" found "${text}")
  if(NOT found)
    message(FATAL_ERROR "${check_src}: no EXERCISE(\"name\", \"title\", \"hint\") block")
  endif()
  set(use checks)
  if(WORKBOOK_EXERCISES_USE STREQUAL "solutions")
    set(use solutions)
  endif()
  set(names "")
  foreach(entry IN LISTS found)
    string(REGEX REPLACE "^\nEXERCISE\\(\"([a-z0-9-]+)\",[ \n]*\"([^\"]*)\"$" "\\1" name "${entry}")
    string(REGEX REPLACE "^\nEXERCISE\\(\"([a-z0-9-]+)\",[ \n]*\"([^\"]*)\"$" "\\2" title "${entry}")
    list(APPEND names "${name}")
    set(serial "")
    if(name IN_LIST X_SERIAL)
      set(serial SERIAL)
    endif()
    _workbook_gpu_test(exercise${nn}.${name} "exercise;exercise${nn}" ${serial}
      COMMAND $<TARGET_FILE:exercise${nn}_${use}> --test-suite=${name})
    set_property(TEST exercise${nn}.${name} APPEND PROPERTY FIXTURES_REQUIRED exercise-results)
    set_property(TEST exercise${nn}.${name} PROPERTY ENVIRONMENT "WORKBOOK_EXERCISE_RESULTS=${WORKBOOK_EXERCISE_RESULTS}")
    set_property(GLOBAL APPEND PROPERTY WORKBOOK_EXERCISES "${nn}.${name}=${title}")
  endforeach()

  # The proofs that the checks are honest, run by the test workflow beside the lessons' suites.
  string(REPLACE ";" "," names "${names}")
  set(serial "")
  if(X_SERIAL)
    set(serial SERIAL)
  endif()
  foreach(proof IN ITEMS "solutions|done|solutions|" "wrong|failed|wrong|" "starting|not-done|checks|--starting;${learner}")
    string(REPLACE "|" ";" proof "${proof}")
    list(GET proof 0 what)
    list(GET proof 1 expect)
    list(GET proof 2 variant)
    list(SUBLIST proof 3 -1 extra)
    _workbook_gpu_test(proof${nn}.${what} "gpu;proof;proof${nn}" ${serial}
      COMMAND $<TARGET_FILE:exercise_report> proof ${expect} "${CMAKE_BINARY_DIR}/proof-results/${nn}-${what}"
              ${nn} "${names}" ${extra} -- $<TARGET_FILE:exercise${nn}_${variant}>)
  endforeach()
  # The sanitize target runs the checks on the solutions (a skipped multi-device exercise exits 77).
  set_property(GLOBAL APPEND PROPERTY WORKBOOK_EXERCISE_SANITIZE
    "exercise${nn}_solutions\t\t\t${X_SANITIZER_FLAGS}\t$<TARGET_FILE:exercise${nn}_solutions>\t--no-version")
endfunction()

# After the manifest: the results folder's reset and the progress table around the exercise checks,
# and the lint that holds every lesson to having its exercises.
function(_workbook_finish_exercises lessons)
  add_test(NAME exercises.reset COMMAND "${CMAKE_COMMAND}" -E rm -rf "${WORKBOOK_EXERCISE_RESULTS}")
  set_tests_properties(exercises.reset PROPERTIES FIXTURES_SETUP exercise-results LABELS "exercise")
  get_property(entries GLOBAL PROPERTY WORKBOOK_EXERCISES)
  add_test(NAME exercises.progress COMMAND exercise_report progress "${WORKBOOK_EXERCISE_RESULTS}" ${entries})
  set_tests_properties(exercises.progress PROPERTIES FIXTURES_CLEANUP exercise-results LABELS "exercise")
  add_test(NAME exercises.lint COMMAND exercise_report lint "${CMAKE_SOURCE_DIR}" ${lessons})
  set_tests_properties(exercises.lint PROPERTIES LABELS "cpu;docs")
endfunction()
