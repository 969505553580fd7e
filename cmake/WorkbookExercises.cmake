# The exercises of a lesson: what add_lesson() builds and tests when lessons/NN-name/exercises.cpp
# exists (course.lint and exercises.lint require it of every lesson).
#
# Files of lesson NN-name:
#   lessons/NN-name/exercises.hpp, exercises.cpp   the learner's: declarations, and each exercise's
#                                                   task above a body of wb::notDone()
#   tests/exercises/exerciseNN_name.cpp             the checks, one EXERCISE("x", title, hint) each
#   tests/exercises/NN-name/solution/<x>.cpp        the reference solution of exercise x
#   tests/exercises/NN-name/wrong/<x>.<n>.cpp       wrong variant n of exercise x: the solution of x
#                                                   with one realistic mistake, said in its first
#                                                   line ("// Wrong: ...")
#
# Built for the learner: exerciseNN_checks (the checks on the learner's file). With WORKBOOK_PROOFS
# (the test workflow turns it on; a learner's build leaves it off): exerciseNN_solutions (the checks
# on the solutions) and one binary per wrong variant, proofs/NN/<x>.<n> (the checks on the solutions
# with exercise x replaced by the variant).
# Tests:
#   exerciseNN.<x>      one exercise's check on the learner's file (labels exercise, exerciseNN); with
#                       -DWORKBOOK_EXERCISES_USE=solutions, on the solutions instead
#   proofNN.solutions   every check passes on the solutions            (labels gpu, proof)
#   proofNN.wrong       every wrong variant fails its exercise's check (failed or crashed)
#   proofNN.starting    every case of every check reports "not done" on the starting file
#   exercises.progress  after the exercise checks: the table of done / not done / failed
set(WORKBOOK_EXERCISES_USE "learner" CACHE STRING
  "what the exerciseNN.* tests check: learner (lessons/*/exercises.cpp) or solutions (tests/exercises/*/solution/)")
set_property(CACHE WORKBOOK_EXERCISES_USE PROPERTY STRINGS learner solutions)
set(WORKBOOK_PROOFS OFF CACHE STRING "Build the reference solutions and every wrong variant, and test that each check tells them apart: ON, OFF, or AUTO (the test workflow: the solutions always, the wrong variants where this machine has the NVIDIA driver)")
set_property(CACHE WORKBOOK_PROOFS PROPERTY STRINGS ON OFF AUTO)
# The wrong variants are most of the build (a binary each, about 450) and only a GPU can run them:
# with AUTO a machine without the driver (CI) builds the solutions and reports the variants skipped.
set(WORKBOOK_PROOF_VARIANTS ${WORKBOOK_PROOFS})
set(WORKBOOK_PROOF_VARIANTS_WHY "")
if(WORKBOOK_PROOFS STREQUAL "AUTO")
  set(WORKBOOK_PROOF_VARIANTS OFF)
  find_program(WORKBOOK_LDCONFIG ldconfig PATHS /sbin /usr/sbin)
  set(_wb_cache "")
  if(WORKBOOK_LDCONFIG)
    execute_process(COMMAND "${WORKBOOK_LDCONFIG}" -p OUTPUT_VARIABLE _wb_cache ERROR_QUIET)
  endif()
  string(REGEX MATCHALL "libcuda\\.so\\.1 [^\n]*=> [^\n]*" _wb_drivers "${_wb_cache}")
  list(FILTER _wb_drivers EXCLUDE REGEX "/stubs/")
  foreach(lib /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/lib/wsl/lib/libcuda.so.1)
    if(EXISTS "${lib}")
      list(APPEND _wb_drivers "${lib}")
    endif()
  endforeach()
  if(_wb_drivers)
    set(WORKBOOK_PROOF_VARIANTS ON)
  else()
    set(WORKBOOK_PROOF_VARIANTS_WHY "no NVIDIA driver (libcuda.so.1) on this machine at configure time, so the wrong variants were not built: only a GPU runs them. -DWORKBOOK_PROOFS=ON builds them anyway")
  endif()
endif()
set(WORKBOOK_EXERCISE_RESULTS "${CMAKE_BINARY_DIR}/exercise-results")

# The checks' main() and reporter, the ledger that counts what the code under check holds (it
# stands between the check binaries and the driver: tests/exercises/ledger.hpp), and the bookkeeping
# tool (lint, proofs, progress table). An OBJECT library, so that every check binary has the
# ledger's definitions of the driver's entry points whether or not its own code calls them.
add_library(workbook_exercise_main OBJECT "${CMAKE_SOURCE_DIR}/tests/exercises/check_main.cpp"
  "${CMAKE_SOURCE_DIR}/tests/exercises/ledger.cpp")
target_link_libraries(workbook_exercise_main PUBLIC doctest::doctest workbook::common ${CMAKE_DL_LIBS})
target_include_directories(workbook_exercise_main PUBLIC
  "${CMAKE_SOURCE_DIR}/tests" "${CMAKE_SOURCE_DIR}/tests/exercises" "${CMAKE_SOURCE_DIR}/lessons")
add_executable(exercise_report "${CMAKE_SOURCE_DIR}/tests/exercises/exercise_report.cpp")
target_link_libraries(exercise_report PRIVATE workbook::images)
add_executable(exercise-runner "${CMAKE_SOURCE_DIR}/tests/exercises/exercise_runner.cpp")
target_link_libraries(exercise-runner PRIVATE workbook::images)
# The ledger itself, under the stub driver (no GPU): it counts calls and fails the one it is told to.
if(WORKBOOK_STUB_DRIVER_DIR)
  add_executable(ledger_tests "${CMAKE_SOURCE_DIR}/tests/exercises/ledger_test.cpp"
    "${CMAKE_SOURCE_DIR}/tests/exercises/ledger.cpp")
  target_link_libraries(ledger_tests PRIVATE workbook::test_main ${CMAKE_DL_LIBS})
  add_test(NAME common.ledger COMMAND ledger_tests --no-version)
  set_tests_properties(common.ledger PROPERTIES LABELS "cpu;common"
    ENVIRONMENT_MODIFICATION "LD_LIBRARY_PATH=path_list_prepend:${WORKBOOK_STUB_DRIVER_DIR}")
endif()

# _workbook_exercise_binary(<target> <folder> <check object target> <sources>... [OPTIONS ...])
# One check binary: the lesson's checks, linked with the exercise code in <sources>, set up as the
# lesson's program is (its runtime sources, kernels, embedded image, libraries).
function(_workbook_exercise_binary target folder check)
  cmake_parse_arguments(PARSE_ARGV 3 B "" "OUTPUT_DIR;OUTPUT_NAME" "SOURCES;RUNTIME_SOURCES;KERNELS;EMBED;LIBRARIES")
  add_executable(${target} $<TARGET_OBJECTS:${check}> ${B_SOURCES})
  target_link_libraries(${target} PRIVATE workbook_exercise_main ${B_LIBRARIES})
  target_include_directories(${target} PRIVATE "${CMAKE_SOURCE_DIR}/lessons/${folder}")
  if(B_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${B_OUTPUT_DIR}" OUTPUT_NAME "${B_OUTPUT_NAME}")
  else()
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lessons")
  endif()
  if(B_RUNTIME_SOURCES)
    target_sources(${target} PRIVATE ${B_RUNTIME_SOURCES})
    target_link_libraries(${target} PRIVATE CUDA::cudart)
  endif()
  foreach(kernel IN LISTS B_KERNELS)
    add_dependencies(${target} kernel-${kernel})
  endforeach()
  if(B_EMBED)
    list(GET B_EMBED 0 image)
    list(GET B_EMBED 1 symbol)
    workbook_embed_image(${target} "${WORKBOOK_KERNEL_DIR}/${image}" ${symbol})
  endif()
endfunction()

# _workbook_add_exercises(<NN-name> <NN> <name_with_underscores> <lesson program>
#   [SERIAL <exercise>...]  checks that measure time: ctest runs them with the GPU to themselves
#   [RUNTIME_SOURCES ...] [KERNELS ...] [EMBED ...] [LIBRARIES ...] [SANITIZER_FLAGS ...]  as the lesson
#   has them: its LIBRARIES are linked into the checks, the solutions and the wrong variants too)
function(_workbook_add_exercises folder nn slug_ program)
  cmake_parse_arguments(PARSE_ARGV 4 X "" "SANITIZER_FLAGS" "SERIAL;RUNTIME_SOURCES;KERNELS;EMBED;LIBRARIES")
  set(check_src "${CMAKE_SOURCE_DIR}/tests/exercises/exercise${nn}_${slug_}.cpp")
  set(learner "${CMAKE_SOURCE_DIR}/lessons/${folder}/exercises.cpp")
  set(dir "${CMAKE_SOURCE_DIR}/tests/exercises/${folder}")
  if(NOT EXISTS "${check_src}")
    message(FATAL_ERROR "lessons/${folder} has exercises.cpp, so ${check_src} must exist (cmake/WorkbookExercises.cmake)")
  endif()

  # The exercises, in the check file's order: one ctest entry each (ctest -R exercise05 checks
  # lesson 05's).
  file(READ "${check_src}" text)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${check_src}" "${learner}")
  string(REGEX MATCHALL "\nEXERCISE\\(\"[a-z0-9-]+\",[ \n]*\"[^\"]*\"" found "${text}")
  if(NOT found)
    message(FATAL_ERROR "${check_src}: no EXERCISE(\"name\", \"title\", \"hint\") block")
  endif()
  set(names "")
  set(titles "")
  foreach(entry IN LISTS found)
    string(REGEX REPLACE "^\nEXERCISE\\(\"([a-z0-9-]+)\",[ \n]*\"([^\"]*)\"$" "\\1" name "${entry}")
    string(REGEX REPLACE "^\nEXERCISE\\(\"([a-z0-9-]+)\",[ \n]*\"([^\"]*)\"$" "\\2" title "${entry}")
    list(APPEND names "${name}")
    set(title_${name} "${title}")
  endforeach()

  set(setup RUNTIME_SOURCES ${X_RUNTIME_SOURCES} KERNELS ${X_KERNELS} EMBED ${X_EMBED} LIBRARIES ${X_LIBRARIES})
  # The checks compile once and link with each body of exercise code.
  add_library(exercise${nn}_check OBJECT "${check_src}")
  target_link_libraries(exercise${nn}_check PUBLIC workbook_exercise_main ${X_LIBRARIES})
  target_compile_definitions(exercise${nn}_check PRIVATE "WORKBOOK_EXERCISE_LESSON=\"${nn}\"")
  if(X_RUNTIME_SOURCES)
    target_include_directories(exercise${nn}_check PRIVATE "${CMAKE_SOURCE_DIR}/lessons/${folder}")
  endif()
  _workbook_exercise_binary(exercise${nn}_checks ${folder} exercise${nn}_check SOURCES "${learner}" ${setup})

  set(build_solutions ${WORKBOOK_PROOFS})
  if(WORKBOOK_EXERCISES_USE STREQUAL "solutions")
    set(build_solutions ON)
  endif()
  set(solution_objects "")
  if(build_solutions)
    # Each exercise's solution compiles once: the solutions binary and every variant of the other
    # exercises link it.
    foreach(name IN LISTS names)
      set(src "${dir}/solution/${name}.cpp")
      if(NOT EXISTS "${src}")
        message(FATAL_ERROR "exercise${nn}.${name} has no reference solution: ${src} must exist (cmake/WorkbookExercises.cmake)")
      endif()
      add_library(exercise${nn}_solution_${name} OBJECT "${src}")
      target_link_libraries(exercise${nn}_solution_${name} PRIVATE workbook::common ${X_LIBRARIES})
      target_include_directories(exercise${nn}_solution_${name} PRIVATE "${CMAKE_SOURCE_DIR}/lessons/${folder}"
        "${CMAKE_SOURCE_DIR}/tests/exercises" "${CMAKE_SOURCE_DIR}/tests")
      list(APPEND solution_objects "$<TARGET_OBJECTS:exercise${nn}_solution_${name}>")
    endforeach()
    _workbook_exercise_binary(exercise${nn}_solutions ${folder} exercise${nn}_check SOURCES ${solution_objects} ${setup})
  endif()

  set(use checks)
  if(WORKBOOK_EXERCISES_USE STREQUAL "solutions")
    set(use solutions)
  endif()
  foreach(name IN LISTS names)
    set(serial "")
    if(name IN_LIST X_SERIAL)
      set(serial SERIAL)
    endif()
    _workbook_gpu_test(exercise${nn}.${name} "exercise;exercise${nn}" ${serial}
      COMMAND $<TARGET_FILE:exercise${nn}_${use}> --test-suite=${name})
    set_property(TEST exercise${nn}.${name} PROPERTY ENVIRONMENT "WORKBOOK_EXERCISE_RESULTS=${WORKBOOK_EXERCISE_RESULTS}")
  endforeach()
  # The runner (cmake --build build --target exercises-NN) checks what this binary was built from.
  # (By path, not $<TARGET_FILE>: that would make one lesson's runner target build every lesson's.)
  get_target_property(bin exercise${nn}_${use} RUNTIME_OUTPUT_DIRECTORY)
  set_property(GLOBAL APPEND PROPERTY WORKBOOK_EXERCISE_BINARIES "${folder}=${bin}/exercise${nn}_${use}")
  set_property(GLOBAL APPEND PROPERTY WORKBOOK_EXERCISE_TARGETS "${nn}:exercise${nn}_${use}")
  if(NOT build_solutions)
    return()
  endif()
  # The sanitize target runs the checks on the solutions (a skipped multi-device exercise exits 77).
  set_property(GLOBAL APPEND PROPERTY WORKBOOK_EXERCISE_SANITIZE
    "exercise${nn}_solutions\t\t\t${X_SANITIZER_FLAGS}\t$<TARGET_FILE:exercise${nn}_solutions>\t--no-version")
  if(NOT WORKBOOK_PROOFS)
    return()
  endif()
  set(results "${CMAKE_BINARY_DIR}/proof-results/${nn}")
  set(serial "")
  if(X_SERIAL)
    set(serial SERIAL)
  endif()
  string(REPLACE ";" "," listed "${names}")
  _workbook_gpu_test(proof${nn}.solutions "gpu;proof;proof${nn}" ${serial}
    COMMAND $<TARGET_FILE:exercise_report> proof done "${results}-solutions" ${nn} "${listed}"
            -- $<TARGET_FILE:exercise${nn}_solutions>)
  _workbook_gpu_test(proof${nn}.starting "gpu;proof;proof${nn}" ${serial}
    COMMAND $<TARGET_FILE:exercise_report> proof not-done "${results}-starting" ${nn} "${listed}"
            --starting "${learner}" -- $<TARGET_FILE:exercise${nn}_checks>)
  if(NOT WORKBOOK_PROOF_VARIANTS)
    return()
  endif()

  # Every wrong variant: the solutions, with one exercise's replaced by the variant.
  file(GLOB variants RELATIVE "${dir}/wrong" CONFIGURE_DEPENDS "${dir}/wrong/*.cpp")
  list(SORT variants COMPARE NATURAL)
  set(variant_args "")
  set(serial_variant_args "")
  foreach(file IN LISTS variants)
    if(NOT file MATCHES "^([a-z0-9-]+)\\.([0-9]+)\\.cpp$" OR NOT CMAKE_MATCH_1 IN_LIST names)
      message(FATAL_ERROR "tests/exercises/${folder}/wrong/${file}: a wrong variant is named <exercise>.<n>.cpp after one of this lesson's exercises (${names})")
    endif()
    set(name "${CMAKE_MATCH_1}")
    set(variant "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
    set(others "")
    foreach(other IN LISTS names)
      if(NOT other STREQUAL name)
        list(APPEND others "$<TARGET_OBJECTS:exercise${nn}_solution_${other}>")
      endif()
    endforeach()
    _workbook_exercise_binary(exercise${nn}_wrong_${variant} ${folder} exercise${nn}_check
      OUTPUT_DIR "${CMAKE_BINARY_DIR}/proofs/${nn}" OUTPUT_NAME "${variant}"
      SOURCES "${dir}/wrong/${file}" ${others} ${setup})
    target_include_directories(exercise${nn}_wrong_${variant} PRIVATE "${CMAKE_SOURCE_DIR}/tests/exercises")
    if(name IN_LIST X_SERIAL)
      list(APPEND serial_variant_args "${variant}=$<TARGET_FILE:exercise${nn}_wrong_${variant}>")
    else()
      list(APPEND variant_args "${variant}=$<TARGET_FILE:exercise${nn}_wrong_${variant}>")
    endif()
  endforeach()

  # The proof that the checks are honest, run by the test workflow beside the lessons' suites: the
  # variants of checks that measure time or free memory (SERIAL) in a test of their own, one at a
  # time with the GPU to itself; every other variant beside the other lessons' proofs. COST (the
  # number of variants) starts the longest proofs first, so that none is left running alone.
  if(variant_args)
    set(except "")  # (ctest drops an empty argument: --except only with names after it)
    if(X_SERIAL)
      string(REPLACE ";" "," serial_names "${X_SERIAL}")
      set(except --except "${serial_names}")
    endif()
    _workbook_gpu_test(proof${nn}.wrong "gpu;proof;proof${nn}"
      COMMAND $<TARGET_FILE:exercise_report> wrong "${results}-wrong" ${nn} "${dir}/wrong" ${except}
              -- ${variant_args})
    list(LENGTH variant_args cost)
    set_tests_properties(proof${nn}.wrong PROPERTIES COST ${cost})
    set_property(GLOBAL APPEND PROPERTY WORKBOOK_PROOF_PARTS "${nn}-wrong:proof${nn}.wrong")
  endif()
  if(serial_variant_args)
    string(REPLACE ";" "," serial_names "${X_SERIAL}")
    _workbook_gpu_test(proof${nn}.wrong-serial "gpu;proof;proof${nn}" SERIAL
      COMMAND $<TARGET_FILE:exercise_report> wrong "${results}-wrong-serial" ${nn} "${dir}/wrong"
              --only "${serial_names}" --one-at-a-time -- ${serial_variant_args})
    set_property(GLOBAL APPEND PROPERTY WORKBOOK_PROOF_PARTS "${nn}-wrong-serial:proof${nn}.wrong-serial")
  endif()
endfunction()

# After the manifest: the learner's runner targets, the proofs' summary, and the lint that holds
# every lesson to having its exercises.
#   cmake --build build --target exercises-05   builds lesson 05's checks with your code, checks each
#                                               exercise, and ends with the progress table
#   cmake --build build --target exercises      the same for every lesson
function(_workbook_finish_exercises lessons)
  get_property(binaries GLOBAL PROPERTY WORKBOOK_EXERCISE_BINARIES)
  get_property(targets GLOBAL PROPERTY WORKBOOK_EXERCISE_TARGETS)
  set(runner $<TARGET_FILE:exercise-runner> "${CMAKE_SOURCE_DIR}" "${WORKBOOK_EXERCISE_RESULTS}"
             $<TARGET_FILE:workbook-gpu-launcher>)
  set(all "")
  foreach(entry IN LISTS targets)
    string(REPLACE ":" ";" entry "${entry}")
    list(GET entry 0 nn)
    list(GET entry 1 target)
    list(APPEND all ${target})
    add_custom_target(exercises-${nn} COMMAND ${runner} --only ${nn} -- ${binaries}
      DEPENDS ${target} exercise-runner workbook-gpu-launcher
      COMMENT "Checking lesson ${nn}'s exercises" USES_TERMINAL VERBATIM)
  endforeach()
  add_custom_target(exercises COMMAND ${runner} -- ${binaries}
    DEPENDS ${all} exercise-runner workbook-gpu-launcher
    COMMENT "Checking every exercise" USES_TERMINAL VERBATIM)
  if(WORKBOOK_PROOFS AND NOT WORKBOOK_PROOF_VARIANTS)
    add_test(NAME proofs.wrong-variants COMMAND sh -c "echo 'SKIPPED: ${WORKBOOK_PROOF_VARIANTS_WHY}'; exit 77")
    set_tests_properties(proofs.wrong-variants PROPERTIES LABELS "proof" SKIP_RETURN_CODE 77)
  elseif(WORKBOOK_PROOFS)
    # The course's count of wrong variants and how many the checks caught, after every proofNN.wrong.
    get_property(parts GLOBAL PROPERTY WORKBOOK_PROOF_PARTS)
    list(TRANSFORM parts REPLACE ":.*$" "" OUTPUT_VARIABLE folders)
    list(TRANSFORM parts REPLACE "^.*:" "" OUTPUT_VARIABLE proofs)
    add_test(NAME proofs.summary COMMAND exercise_report summary --source "${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/proof-results" ${folders})
    set_tests_properties(proofs.summary PROPERTIES LABELS "proof" DEPENDS "${proofs}" SKIP_RETURN_CODE 77)
  endif()
  add_test(NAME exercises.lint COMMAND exercise_report lint "${CMAKE_SOURCE_DIR}" ${lessons})
  set_tests_properties(exercises.lint PROPERTIES LABELS "cpu;docs")
endfunction()
