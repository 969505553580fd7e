# cmake -DBUILD_DIR=<build> -DLESSONS=<NN-name;...> -P TimeLessons.cmake     (target: time-lessons)
#
# A learner runs one lesson again and again (`ctest --test-dir build -R lesson05`), so each must
# stay quick. Prints each lesson's ctest time as a learner's command gets it (one test at a time),
# then the whole suite's (the test preset's selection, 4 at a time), from ctest's own
# "Total Test time (real)". Fails when a lesson's tests fail or take longer than LIMIT seconds.
cmake_minimum_required(VERSION 3.25)
if(NOT LIMIT)
  set(LIMIT 5)
endif()
set(slow "")
# A lesson whose subject cannot fit LIMIT, with its own limit and why (printed beside its time).
# Lesson 25 suspends whole processes: on driver 580 (H100) a checkpoint or restore of even a small
# process took 0.2-0.4 s, and its run, suites and figure make many of them, each in a child of its own.
set(allow_25 20 "on driver 580 each checkpoint or restore of a process took 0.2-0.4 s")
# Lesson 19 compiles with --no-cache, so that each compile is one and not NVRTC's cache answering;
# on an H100 its ctest time was 4.5 s in one run and 5.0 s in another, at the limit.
set(allow_19 7 "every NVRTC compile passes --no-cache, so it compiles")
message("lesson    ctest time (ctest --test-dir build -R lessonNN)")
foreach(folder IN LISTS LESSONS)
  string(SUBSTRING "${folder}" 0 2 nn)
  execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" --test-dir "${BUILD_DIR}" -R "lesson${nn}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX MATCH "Total Test time \\(real\\) = +([0-9.]+) sec" found "${out}")
  set(seconds "${CMAKE_MATCH_1}")
  if(NOT rc EQUAL 0 OR NOT found)
    message("${out}")
    message(FATAL_ERROR "lesson${nn}: ctest failed (exit ${rc}); times are only read from passing runs")
  endif()
  set(mark "")
  set(limit ${LIMIT})
  if(DEFINED allow_${nn})
    list(GET allow_${nn} 0 limit)
    list(GET allow_${nn} 1 why)
    set(mark "   (allowed ${limit} s: ${why})")
  endif()
  if(seconds GREATER limit)
    set(mark "   over ${limit} s")
    list(APPEND slow "lesson${nn}")
  endif()
  message("${folder}  ${seconds} s${mark}")
endforeach()
execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" --test-dir "${BUILD_DIR}" -j4
                        -LE "^(course|probe|exercise|environment|proof)$"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REGEX MATCH "[0-9]+% tests passed[^\n]*" counts "${out}")
string(REGEX MATCH "Total Test time \\(real\\) = +([0-9.]+) sec" found "${out}")
message("whole suite (the test preset's selection, 4 at a time): ${CMAKE_MATCH_1} s; ${counts}")
# Where the whole suite's time goes: its slowest tests (run 4 at a time, so each took longer than alone).
string(REGEX MATCHALL "Test +#[0-9]+: [^ ]+ [^\n]* ([0-9]+\\.[0-9]+) sec" lines "${out}")
set(timed "")
foreach(line IN LISTS lines)
  if(line MATCHES "Test +#[0-9]+: ([^ ]+) [^\n]* ([0-9]+\\.[0-9]+) sec")
    list(APPEND timed "${CMAKE_MATCH_2} s  ${CMAKE_MATCH_1}")
  endif()
endforeach()
list(SORT timed COMPARE NATURAL ORDER DESCENDING)
list(SUBLIST timed 0 10 slowest)
message("its slowest tests:")
foreach(line IN LISTS slowest)
  message("  ${line}")
endforeach()
if(NOT rc EQUAL 0)
  message("${out}")
  message(FATAL_ERROR "the whole suite failed (exit ${rc})")
endif()
if(slow)
  message(FATAL_ERROR "over ${LIMIT} s: ${slow}")
endif()
