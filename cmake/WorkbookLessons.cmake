# The lesson manifest's helpers. lessons/CMakeLists.txt calls add_lesson() once per lesson, in
# course order; that one list makes the programs, their doctest binaries, their ctest entries, the
# course run and the site's navigation.
#
# add_lesson(<NN-name> TITLE <one line> PROVES <one line: what its assertions establish>
#            [SHORT <name>]                 the page's short title (default: the folder's name)
#            [NEEDS <NN>...]                earlier lessons a reader needs first (the page says so)
#            [RUNTIME_SOURCES <file.cu>...]  CUDA sources compiled into the program and its tests by
#                                           nvcc; the lesson then links the CUDA runtime as well
#            [LIBRARIES <target>...]        further libraries (CMake targets, e.g. CUDA::nvrtc) linked
#                                           into the program, its test binary and its exercise binaries
#            [DRIVER_AT_RUN_TIME]           the program opens libcuda with dlopen (common/loaded_driver.hpp)
#                                           and must start without it: it links with --as-needed, so the
#                                           driver that workbook::common names is dropped when nothing in
#                                           the program calls it directly (its tests must check the
#                                           program's DT_NEEDED); program, tests and exercises get
#                                           workbook::machine (the loaded driver, the ELF reader)
#            [SANITIZE_EXCLUDE <suite>...]  suites the sanitize target leaves out for this lesson, beside
#                                           WORKBOOK_SANITIZE_EXCLUDED_SUITES (say why where they are)
#            [SANITIZE_PARENT_ONLY]         compute-sanitizer checks the program and its test binary
#                                           but not the children they start (which fault on purpose)
#            [KERNELS <kernel>...]          kernel images the program and its tests load
#            [EMBED <image file> <symbol>]  an image compiled into the program and its tests
#            [RUN_ARGS <arg>...]            arguments for the program's run under ctest and the course
#            [DEEPER_RUN_ARGS <arg>...]     the same for deeper.cpp, the optional page's program
#            [MULTI_DEVICE_SUITES <suite>...]   doctest suites that need two devices
#            [SERIAL_SUITES <suite>...]         suites (or "run", the program) that measure memory
#                                               or time: ctest runs them with the GPU to themselves
#            [ALONE_SUITES <suite>...]          suites about what a fresh process sees: each runs
#                                               in a process of its own
#            [SERIAL_EXERCISES <exercise>...])  exercise checks that measure time, likewise
#
# A lesson's exercises (lessons/NN-name/exercises.cpp, their checks, solutions and wrong variants)
# are built and tested by cmake/WorkbookExercises.cmake, which says what it adds.
#
# For lesson NN-name it builds lessonNN-name from lessons/NN-name/main.cpp and lessonNN_name_tests
# from tests/lessonNN_name.cpp, and adds these ctest tests, all named lessonNN.*:
#   lessonNN.run        the program, through the GPU launcher, from a scratch working directory
#   lessonNN.claims     the doctest suites of tests/lessonNN_name.cpp that share the GPU, in one process
#   lessonNN.measured   the SERIAL_SUITES, in one process with the GPU to itself
#   lessonNN.multi-device, lessonNN.multi-device-measured   the MULTI_DEVICE_SUITES (two GPUs)
#   lessonNN.<suite>    each of the ALONE_SUITES
#   damaged.NN          the damaged-images suite, outside the learner's `ctest -R lessonNN` loop
#   environment.NN      the program under the CUDA environment variables (tests/environment_check.cpp)
#   lessonNN.no-driver  the program under the toolkit's stub driver: it must say so and exit 2

set(WORKBOOK_SKIP_CODE 77)
set(WORKBOOK_EXIT_NO_GPU 2)  # wb::kExitNoGpu in common/workbook.hpp
# Suites the sanitize target leaves out, and why: reclaim leaves allocations for a teardown to take
# back (the leak check counts them by definition); unspecified runs behaviour the reference leaves
# open in a child that may crash; damaged-images runs the lesson programs on broken input, where
# the reader, not the driver, is under test.
set(WORKBOOK_SANITIZE_EXCLUDED_SUITES "reclaim,unspecified,damaged-images")
set(WORKBOOK_PROBE_FILE "${CMAKE_BINARY_DIR}/gpu-probe.txt")  # gpu.probe-once writes it
set(WORKBOOK_RUN_DIR "${CMAKE_BINARY_DIR}/run")  # lessons run from here, never from the build dir
file(MAKE_DIRECTORY "${WORKBOOK_RUN_DIR}")

function(_workbook_gpu_test name labels)
  cmake_parse_arguments(PARSE_ARGV 2 T "SERIAL" "MIN_DEVICES" "COMMAND")
  if(NOT T_MIN_DEVICES)
    set(T_MIN_DEVICES 1)
  endif()
  add_test(NAME ${name}
    COMMAND workbook-gpu-launcher --probe-file "${WORKBOOK_PROBE_FILE}" --min-devices ${T_MIN_DEVICES}
            -- ${T_COMMAND}
    WORKING_DIRECTORY "${WORKBOOK_RUN_DIR}")
  # The probe runs once per ctest run (gpu.probe-once); RUN_SERIAL keeps every other test off the
  # GPU while a suite measures free memory or time, so no other test of the run can disturb it.
  set_tests_properties(${name} PROPERTIES
    LABELS "${labels}" SKIP_RETURN_CODE ${WORKBOOK_SKIP_CODE} TIMEOUT 600 FIXTURES_REQUIRED gpu-probe
    RUN_SERIAL ${T_SERIAL})
endfunction()

# What each lesson needs (lessons/needs.tsv, one row a lesson): lesson NN's row becomes
# wb::lessonNeeds() (common/needs.hpp) in its program and test binary, so that the lesson's guards
# read the table the pages and README show. The row is compiled in as its text and read by the one
# parser the page generator and ctest course.needs use too; here it must exist and have 7 columns.
set(WORKBOOK_NEEDS_TABLE "${CMAKE_SOURCE_DIR}/lessons/needs.tsv")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${WORKBOOK_NEEDS_TABLE}")
function(_workbook_lesson_needs nn program tests)
  file(READ "${WORKBOOK_NEEDS_TABLE}" table)
  string(REGEX MATCHALL "\n${nn}\t" starts "${table}")  # row starts: a row may hold ';', which splits a list
  list(LENGTH starts count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "lessons/needs.tsv has ${count} rows for lesson ${nn}, not 1: give it one (the file's header says what each column means)")
  endif()
  string(REGEX MATCH "\n${nn}\t[^\n]*" row "${table}")
  string(SUBSTRING "${row}" 1 -1 row)
  string(REGEX MATCHALL "\t" tabs "${row}")
  list(LENGTH tabs tabs)
  if(NOT tabs EQUAL 6)
    message(FATAL_ERROR "lessons/needs.tsv: lesson ${nn}'s row has ${tabs} tabs, not 6 (7 columns)")
  endif()
  string(REPLACE "\\" "\\\\" row "${row}")
  string(REPLACE "\"" "\\\"" row "${row}")
  string(REPLACE "\t" "\\t" row "${row}")
  set(source "${CMAKE_BINARY_DIR}/needs/lesson${nn}_needs.cpp")
  file(CONFIGURE OUTPUT "${source}" @ONLY CONTENT [=[// Generated by add_lesson (cmake/WorkbookLessons.cmake) from lessons/needs.tsv: edit the table, not this.
#include "needs.hpp"

const wb::LessonNeeds& wb::lessonNeeds() {
  static const LessonNeeds row = parseNeedsRow("@row@");
  return row;
}
]=])
  target_sources(${program} PRIVATE "${source}")
  target_sources(${tests} PRIVATE "${source}")
endfunction()

function(add_lesson folder)
  cmake_parse_arguments(PARSE_ARGV 1 L "SANITIZE_PARENT_ONLY;DRIVER_AT_RUN_TIME" "TITLE;PROVES;SHORT" "KERNELS;EMBED;RUN_ARGS;DEEPER_RUN_ARGS;MULTI_DEVICE_SUITES;SERIAL_SUITES;ALONE_SUITES;NEEDS;RUNTIME_SOURCES;SANITIZE_EXCLUDE;SERIAL_EXERCISES;LIBRARIES")
  if(NOT folder MATCHES "^([0-9][0-9])-([a-z0-9-]+)$")
    message(FATAL_ERROR "add_lesson(${folder}): a lesson folder is NN-name, e.g. 05-memory")
  endif()
  set(nn "${CMAKE_MATCH_1}")
  set(slug "${CMAKE_MATCH_2}")
  string(REPLACE "-" "_" slug_ "${slug}")
  if(NOT L_TITLE OR NOT L_PROVES)
    message(FATAL_ERROR "add_lesson(${folder}): TITLE and PROVES are required (the course map shows both)")
  endif()
  # The course starts at lesson 00 (your machine) and goes on without gaps.
  get_property(previous GLOBAL PROPERTY WORKBOOK_LESSONS)
  list(LENGTH previous expected)
  if(NOT nn EQUAL expected)
    message(FATAL_ERROR "add_lesson(${folder}): lessons are numbered in order; expected ${expected} here")
  endif()

  set(program_src "${CMAKE_SOURCE_DIR}/lessons/${folder}/main.cpp")
  set(test_src "${CMAKE_SOURCE_DIR}/tests/lesson${nn}_${slug_}.cpp")
  foreach(f IN ITEMS "${program_src}" "${test_src}")
    if(NOT EXISTS "${f}")
      message(FATAL_ERROR "add_lesson(${folder}): ${f} is missing")
    endif()
  endforeach()

  set(program "lesson${nn}-${slug}")
  set(tests "lesson${nn}_${slug_}_tests")
  add_executable(${program} "${program_src}")
  add_executable(${tests} "${test_src}")
  target_link_libraries(${tests} PRIVATE workbook::test_main)
  # A lesson may have a second program, deeper.cpp, for its optional "Going deeper" page: what a
  # first reading can skip, so that main.cpp stays a story of about 700 lines. It is built and run
  # like main.cpp (lessonNN.deeper), and its steps continue main.cpp's numbering.
  set(deeper "")
  set(binaries ${program} ${tests})
  if(EXISTS "${CMAKE_SOURCE_DIR}/lessons/${folder}/deeper.cpp")
    set(deeper "${program}-deeper")
    add_executable(${deeper} "${CMAKE_SOURCE_DIR}/lessons/${folder}/deeper.cpp")
    list(APPEND binaries ${deeper})
    target_compile_definitions(${tests} PRIVATE "WORKBOOK_LESSON_DEEPER_PROGRAM=\"$<TARGET_FILE:${deeper}>\"")
    add_dependencies(${tests} ${deeper})
  endif()
  foreach(target IN LISTS binaries)
    target_link_libraries(${target} PRIVATE workbook::common)
  endforeach()
  _workbook_lesson_needs(${nn} ${program} ${tests})
  if(deeper)
    target_sources(${deeper} PRIVATE "${CMAKE_BINARY_DIR}/needs/lesson${nn}_needs.cpp")
  endif()
  # A lesson about the runtime beside the driver (11) compiles its runtime kernels with nvcc into
  # its binaries and links the CUDA runtime; every other lesson links the driver only.
  if(L_RUNTIME_SOURCES)
    list(TRANSFORM L_RUNTIME_SOURCES PREPEND "${CMAKE_SOURCE_DIR}/lessons/${folder}/")
    foreach(target IN LISTS binaries)
      target_sources(${target} PRIVATE ${L_RUNTIME_SOURCES})
      target_include_directories(${target} PRIVATE "${CMAKE_SOURCE_DIR}/lessons/${folder}")
      target_link_libraries(${target} PRIVATE CUDA::cudart)
    endforeach()
  endif()
  # A lesson whose program must start without a driver (21) opens it at run time; nothing it calls
  # names libcuda, so --as-needed leaves libcuda.so.1 out of its DT_NEEDED.
  if(L_DRIVER_AT_RUN_TIME)
    list(APPEND L_LIBRARIES workbook::machine)
    target_link_options(${program} PRIVATE "LINKER:--as-needed")
  endif()
  # A lesson about a toolkit library beside the driver (19: NVRTC and nvJitLink) links it into all.
  if(L_LIBRARIES)
    foreach(target IN LISTS binaries)
      target_link_libraries(${target} PRIVATE ${L_LIBRARIES})
    endforeach()
  endif()
  # The damaged-images suites run the lesson's own program.
  target_compile_definitions(${tests} PRIVATE "WORKBOOK_LESSON_PROGRAM=\"$<TARGET_FILE:${program}>\"")
  add_dependencies(${tests} ${program})
  foreach(kernel IN LISTS L_KERNELS)
    foreach(target IN LISTS binaries)
      add_dependencies(${target} kernel-${kernel})
    endforeach()
  endforeach()
  if(L_EMBED)
    list(GET L_EMBED 0 image)
    list(GET L_EMBED 1 symbol)
    foreach(target IN LISTS binaries)
      workbook_embed_image(${target} "${WORKBOOK_KERNEL_DIR}/${image}" ${symbol})
    endforeach()
  endif()

  # `cmake --build build --target lesson05` builds what `ctest -R lesson05` runs, and nothing else.
  add_custom_target(lesson${nn} DEPENDS ${binaries} workbook-gpu-launcher)

  set(labels "lesson;lesson${nn}")
  set(serial "")
  if("run" IN_LIST L_SERIAL_SUITES)
    set(serial SERIAL)
  endif()
  _workbook_gpu_test(lesson${nn}.run "${labels};gpu" ${serial} COMMAND $<TARGET_FILE:${program}> ${L_RUN_ARGS})
  if(deeper)
    _workbook_gpu_test(lesson${nn}.deeper "${labels};gpu" ${serial} COMMAND $<TARGET_FILE:${deeper}> ${L_DEEPER_RUN_ARGS})
  endif()

  # The doctest suites run in a few processes, not one each: every process pays for cuInit and a
  # context (about 0.25 s on an H200, much of it serialised by the driver), and a learner runs
  # `ctest -R lessonNN` again and again. lessonNN.claims holds every suite that may share the GPU;
  # lessonNN.measured those that measure free memory or time (SERIAL_SUITES: RUN_SERIAL, the GPU to
  # themselves); lessonNN.multi-device(-measured) those that need two GPUs. Each prints one line per
  # suite (tests/doctest_main.cpp), and one suite runs alone with `<tests binary> -ts=<suite>`.
  file(READ "${test_src}" test_text)
  string(REGEX MATCHALL "TEST_SUITE(_BEGIN)?\\(\"[^\"]+\"" suites "${test_text}")
  if(NOT suites)
    message(FATAL_ERROR "${test_src}: put the test cases in TEST_SUITE(\"name\") blocks; ctest runs them by suite")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${test_src}")
  list(TRANSFORM suites REPLACE "^TEST_SUITE(_BEGIN)?\\(\"([^\"]+)\"$" "\\2")
  list(REMOVE_DUPLICATES suites)
  foreach(suite IN LISTS L_SERIAL_SUITES L_MULTI_DEVICE_SUITES L_ALONE_SUITES)
    if(NOT suite STREQUAL "run" AND NOT suite IN_LIST suites)
      message(FATAL_ERROR "add_lesson(${folder}): SERIAL_SUITES, MULTI_DEVICE_SUITES or ALONE_SUITES names ${suite}, which ${test_src} does not have")
    endif()
  endforeach()
  set(groups "")
  set(suite_tests "")  # suite=ctest entry, for the pages
  foreach(suite IN LISTS suites)
    # The damaged-images suite runs the program on broken images: robustness, not the lesson's
    # claims, so it is damaged.NN, outside the learner's `ctest -R lessonNN` (the test workflow runs it).
    if(suite STREQUAL "damaged-images")
      _workbook_gpu_test(damaged.${nn} "${labels};gpu" COMMAND $<TARGET_FILE:${tests}> --test-suite=${suite} --no-version)
      list(APPEND suite_tests "${suite}=damaged.${nn}")
      continue()
    endif()
    # A suite about what a fresh process sees (lesson 01: calls before cuInit) runs in its own.
    if(suite IN_LIST L_ALONE_SUITES)
      _workbook_gpu_test(lesson${nn}.${suite} "${labels};gpu" COMMAND $<TARGET_FILE:${tests}> --test-suite=${suite} --no-version)
      list(APPEND suite_tests "${suite}=lesson${nn}.${suite}")
      continue()
    endif()
    set(group claims)
    if(suite IN_LIST L_MULTI_DEVICE_SUITES)
      set(group multi-device)
    endif()
    if(suite IN_LIST L_SERIAL_SUITES)
      if(group STREQUAL "claims")
        set(group measured)
      else()
        set(group multi-device-measured)
      endif()
    endif()
    list(APPEND groups ${group})
    list(APPEND _suites_${group} ${suite})
    list(APPEND suite_tests "${suite}=lesson${nn}.${group}")
  endforeach()
  foreach(group IN ITEMS claims measured multi-device multi-device-measured)
    if(NOT group IN_LIST groups)
      continue()
    endif()
    set(min 1)
    if(group MATCHES "^multi-device")
      set(min 2)
    endif()
    set(serial "")
    if(group MATCHES "measured$")
      set(serial SERIAL)
    endif()
    list(JOIN _suites_${group} "," selected)
    _workbook_gpu_test(lesson${nn}.${group} "${labels};gpu" MIN_DEVICES ${min} ${serial}
      COMMAND $<TARGET_FILE:${tests}> --test-suite=${selected} --no-version)
  endforeach()
  # Each program (main.cpp's, and deeper.cpp's where there is one: ".deeper" in its tests' names):
  # - under every CUDA environment variable it may meet (tests/environment_check.cpp): it stops at
  #   once, naming the variable, or it runs and its narration stays true. Not under lessonNN: a
  #   learner's `ctest -R lessonNN` stays fast; the test workflow runs them all. Serial: the lessons
  #   measure free memory and time, which other processes on the GPU would move.
  # - on a machine with no driver: it must say why it stopped instead of crashing.
  foreach(binary IN ITEMS ${program} ${deeper})
    set(part "")
    if(binary STREQUAL deeper)
      set(part ".deeper")
    endif()
    _workbook_gpu_test(environment.${nn}${part} "gpu;environment" SERIAL
      COMMAND $<TARGET_FILE:workbook-environment-check> $<TARGET_FILE:${binary}>)
    if(WORKBOOK_STUB_DRIVER_DIR)
      add_test(NAME lesson${nn}${part}.no-driver
        COMMAND "${CMAKE_COMMAND}" "-DLIBRARY_PATH=${WORKBOOK_STUB_DRIVER_DIR}"
                "-DEXPECT_EXIT=${WORKBOOK_EXIT_NO_GPU}" "-DEXPECT_OUTPUT=stub.*install the NVIDIA driver"
                "-DPROGRAM=$<TARGET_FILE:${binary}>" -P "${CMAKE_SOURCE_DIR}/cmake/ExpectRun.cmake"
        WORKING_DIRECTORY "${WORKBOOK_RUN_DIR}")
      set_tests_properties(lesson${nn}${part}.no-driver PROPERTIES LABELS "${labels};cpu")
    endif()
  endforeach()

  set(sanitizer_flags "")
  if(L_SANITIZE_PARENT_ONLY)
    set(sanitizer_flags "--target-processes,application-only")
  endif()
  if(EXISTS "${CMAKE_SOURCE_DIR}/lessons/${folder}/exercises.cpp")
    _workbook_add_exercises(${folder} ${nn} ${slug_} ${program} SERIAL ${L_SERIAL_EXERCISES}
      RUNTIME_SOURCES ${L_RUNTIME_SOURCES} KERNELS ${L_KERNELS} EMBED ${L_EMBED} LIBRARIES ${L_LIBRARIES}
      SANITIZER_FLAGS "${sanitizer_flags}")
  endif()

  set_property(GLOBAL APPEND PROPERTY WORKBOOK_LESSONS "${folder}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_TITLE "${L_TITLE}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_PROVES "${L_PROVES}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_SHORT "${L_SHORT}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_PROGRAM "${program}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_DEEPER "${deeper}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_DEEPER_ARGS "${L_DEEPER_RUN_ARGS}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_ARGS "${L_RUN_ARGS}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_TESTS "${tests}")
  string(REPLACE ";" "," suite_tests "${suite_tests}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_SUITE_TESTS "${suite_tests}")
  string(REPLACE ";" "," multi "${L_MULTI_DEVICE_SUITES}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_MULTI "${multi}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_SANITIZER_FLAGS "${sanitizer_flags}")
  set(excluded "${WORKBOOK_SANITIZE_EXCLUDED_SUITES}")
  foreach(suite IN LISTS L_SANITIZE_EXCLUDE)
    string(APPEND excluded ",${suite}")
  endforeach()
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_SANITIZE_EXCLUDED "${excluded}")
  string(REPLACE ";" "," needs "${L_NEEDS}")
  set_property(GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_NEEDS "${needs}")
endfunction()

# Called once after the manifest: checks it against lessons/ and adds the course run and the probe.
function(workbook_finish_course)
  get_property(lessons GLOBAL PROPERTY WORKBOOK_LESSONS)
  file(GLOB entries RELATIVE "${CMAKE_SOURCE_DIR}/lessons" "${CMAKE_SOURCE_DIR}/lessons/*")
  foreach(entry IN LISTS entries)
    if(IS_DIRECTORY "${CMAKE_SOURCE_DIR}/lessons/${entry}" AND NOT entry IN_LIST lessons)
      message(FATAL_ERROR "lessons/${entry} is not in the lesson manifest (lessons/CMakeLists.txt): "
                          "add it with add_lesson(${entry} TITLE ...) or remove the folder")
    endif()
  endforeach()

  # "[5/19]": each lesson's number of the last one's, lesson 00 the first ("[0/19]").
  list(LENGTH lessons total)
  math(EXPR total "${total} - 1")
  set(manifest "")
  set(sanitize "")
  foreach(folder IN LISTS lessons)
    string(SUBSTRING "${folder}" 0 2 nn)
    get_property(title GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_TITLE)
    get_property(program GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_PROGRAM)
    get_property(args GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_ARGS)
    math(EXPR place "${nn}")
    string(REPLACE ";" "\t" args "${args}")
    string(APPEND manifest "[${place}/${total}]\t${program}: ${title}\t$<TARGET_FILE:${program}>\t${args}\n")
    get_property(tests GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_TESTS)
    get_property(multi GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_MULTI)
    get_property(flags GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_SANITIZER_FLAGS)
    string(APPEND sanitize "${program}\t\t\t${flags}\t$<TARGET_FILE:${program}>\t${args}\n")
    get_property(deeper GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_DEEPER)
    if(deeper)  # the optional page's program, right after the lesson's (record-outputs: lessonNN-deeper.txt)
      get_property(deeper_args GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_DEEPER_ARGS)
      string(REPLACE ";" "\t" deeper_args "${deeper_args}")
      string(APPEND manifest "[${place}/${total}]\t${deeper}: ${title} (going deeper)\t$<TARGET_FILE:${deeper}>\t${deeper_args}\n")
      string(APPEND sanitize "${deeper}\t\t\t${flags}\t$<TARGET_FILE:${deeper}>\t${deeper_args}\n")
    endif()
    get_property(excluded GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_SANITIZE_EXCLUDED)
    string(APPEND sanitize "${tests}\t${multi}\t${excluded}\t${flags}\t$<TARGET_FILE:${tests}>\t--no-version\n")
  endforeach()
  get_property(exercise_lines GLOBAL PROPERTY WORKBOOK_EXERCISE_SANITIZE)
  foreach(line IN LISTS exercise_lines)
    string(APPEND sanitize "${line}\n")
  endforeach()
  file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/course.tsv" CONTENT "${manifest}")
  file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/sanitize.tsv" CONTENT "${sanitize}")

  # On a GPU machine: every lesson and test binary under compute-sanitizer (SANITIZE_ONLY=<regex> narrows it).
  set(WORKBOOK_SANITIZE_ONLY "" CACHE STRING "regex of the programs the sanitize target runs (empty: all)")
  add_custom_target(sanitize
    COMMAND "${CMAKE_COMMAND}" "-DMANIFEST=${CMAKE_BINARY_DIR}/sanitize.tsv" "-DONLY=${WORKBOOK_SANITIZE_ONLY}"
            -P "${CMAKE_SOURCE_DIR}/cmake/Sanitize.cmake"
    WORKING_DIRECTORY "${WORKBOOK_RUN_DIR}" USES_TERMINAL VERBATIM)
  # On a GPU machine: run every lesson and store its output for the site in docs/output/.
  add_custom_target(record-outputs
    COMMAND "${CMAKE_COMMAND}" "-DMANIFEST=${CMAKE_BINARY_DIR}/course.tsv"
            "-DOUT_DIR=${CMAKE_SOURCE_DIR}/docs/output" "-DTOOLKIT=${CUDAToolkit_VERSION}"
            "-DBUILD_DIR=${CMAKE_BINARY_DIR}" "-DSOURCE_DIR=${CMAKE_SOURCE_DIR}"
            -P "${CMAKE_SOURCE_DIR}/cmake/RecordOutputs.cmake"
    WORKING_DIRECTORY "${WORKBOOK_RUN_DIR}" USES_TERMINAL VERBATIM)

  # On a GPU machine: each lesson's ctest time as a learner gets it, and the whole suite's.
  add_custom_target(time-lessons
    COMMAND "${CMAKE_COMMAND}" "-DBUILD_DIR=${CMAKE_BINARY_DIR}" "-DLESSONS=${lessons}"
            -P "${CMAKE_SOURCE_DIR}/cmake/TimeLessons.cmake"
    USES_TERMINAL VERBATIM)

  add_test(NAME course COMMAND workbook-gpu-launcher --course "${CMAKE_BINARY_DIR}/course.tsv"
    WORKING_DIRECTORY "${WORKBOOK_RUN_DIR}")
  set_tests_properties(course PROPERTIES LABELS "course" SKIP_RETURN_CODE ${WORKBOOK_SKIP_CODE} TIMEOUT 1800)
  # The course stays whole: every lesson has its files, page, README row and snippets.
  add_test(NAME course.lint
    COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${CMAKE_SOURCE_DIR}" "-DLESSONS=${lessons}"
            -P "${CMAKE_SOURCE_DIR}/cmake/LintCourse.cmake")
  set_tests_properties(course.lint PROPERTIES LABELS "cpu;docs")
  # What each lesson needs (lessons/needs.tsv) is what README's Needs column says, and what its
  # main.cpp's guards and its multi-device suites say (tests/needs_check.cpp).
  set(multi_lessons "")
  foreach(folder IN LISTS lessons)
    string(SUBSTRING "${folder}" 0 2 nn)
    get_property(multi GLOBAL PROPERTY WORKBOOK_LESSON_${nn}_MULTI)
    if(multi)
      list(APPEND multi_lessons ${nn})
    endif()
  endforeach()
  string(REPLACE ";" "," folders "${lessons}")
  string(REPLACE ";" "," multi_lessons "${multi_lessons}")
  add_test(NAME course.needs COMMAND workbook-needs-check "${CMAKE_SOURCE_DIR}" "${folders}" "${multi_lessons}")
  set_tests_properties(course.needs PROPERTIES LABELS "cpu;docs")

  _workbook_finish_exercises("${lessons}")

  add_test(NAME gpu.probe-once COMMAND workbook-gpu-launcher --write-probe "${WORKBOOK_PROBE_FILE}")
  set_tests_properties(gpu.probe-once PROPERTIES FIXTURES_SETUP gpu-probe LABELS "fixture")
  add_test(NAME gpu.probe COMMAND workbook-gpu-launcher --probe)
  set_tests_properties(gpu.probe PROPERTIES LABELS "probe")
endfunction()
