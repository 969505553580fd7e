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
  if(seconds GREATER LIMIT)
    set(mark "   over ${LIMIT} s")
    list(APPEND slow "lesson${nn}")
  endif()
  message("${folder}  ${seconds} s${mark}")
endforeach()
execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" --test-dir "${BUILD_DIR}" -j4
                        -LE "^(course|probe|exercise|environment|proof)$"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REGEX MATCH "([0-9]+) tests failed out of ([0-9]+)" counts "${out}")
string(REGEX MATCH "Total Test time \\(real\\) = +([0-9.]+) sec" found "${out}")
message("whole suite (the test preset's selection, 4 at a time): ${CMAKE_MATCH_1} s; ${counts}")
if(NOT rc EQUAL 0)
  message("${out}")
  message(FATAL_ERROR "the whole suite failed (exit ${rc})")
endif()
if(slow)
  message(FATAL_ERROR "over ${LIMIT} s: ${slow}")
endif()
