# doctest, in this order: Debian's doctest-dev (a CMake package), a bare doctest/doctest.h on the
# include path (some images ship only the header), then a pinned release fetched with FetchContent.
# The fetch runs in a child CMake so that a machine without network gets our message, not a
# FetchContent stack trace.
set(WORKBOOK_DOCTEST_TAG "v2.4.11" CACHE STRING "doctest release fetched when no installed doctest is found")

find_package(doctest 2.4 CONFIG QUIET)
if(TARGET doctest::doctest)
  message(STATUS "doctest: the installed CMake package (${doctest_DIR})")
  return()
endif()

find_path(WORKBOOK_DOCTEST_INCLUDE_DIR doctest/doctest.h)
if(NOT WORKBOOK_DOCTEST_INCLUDE_DIR)
  set(_dest "${CMAKE_BINARY_DIR}/_deps/doctest-src")
  if(NOT EXISTS "${_dest}/doctest/doctest.h")
    message(STATUS "doctest: not installed, fetching ${WORKBOOK_DOCTEST_TAG}")
    execute_process(
      COMMAND "${CMAKE_COMMAND}" "-DDEST=${_dest}" "-DTAG=${WORKBOOK_DOCTEST_TAG}"
              -P "${CMAKE_CURRENT_LIST_DIR}/FetchDoctest.cmake"
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _log ERROR_VARIABLE _log)
    if(NOT _rc EQUAL 0 OR NOT EXISTS "${_dest}/doctest/doctest.h")
      message(FATAL_ERROR
        "doctest was not found and could not be fetched (${WORKBOOK_DOCTEST_TAG}).\n"
        "Install it (Debian/Ubuntu: apt-get install doctest-dev), or point CMake at it with "
        "-DCMAKE_PREFIX_PATH=<prefix> or -DWORKBOOK_DOCTEST_INCLUDE_DIR=<dir holding doctest/doctest.h>.\n"
        "The fetch said:\n${_log}")
    endif()
  endif()
  set(WORKBOOK_DOCTEST_INCLUDE_DIR "${_dest}" CACHE PATH "directory holding doctest/doctest.h" FORCE)
endif()
message(STATUS "doctest: header in ${WORKBOOK_DOCTEST_INCLUDE_DIR}")
add_library(doctest::doctest INTERFACE IMPORTED GLOBAL)
target_include_directories(doctest::doctest INTERFACE "${WORKBOOK_DOCTEST_INCLUDE_DIR}")
