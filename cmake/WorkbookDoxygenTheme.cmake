# doxygen-awesome-css: Debian's package where it is installed, else a pinned release fetched in a
# child CMake (so a machine without network gets a message, not a stack trace).
set(WORKBOOK_AWESOME_TAG "v2.3.4" CACHE STRING "doxygen-awesome-css release fetched when none is installed")
find_path(WORKBOOK_AWESOME_CSS_DIR doxygen-awesome.css
  PATHS /usr/share/doxygen-awesome-css /usr/local/share/doxygen-awesome-css
  PATH_SUFFIXES doxygen-awesome-css)
if(NOT WORKBOOK_AWESOME_CSS_DIR)
  set(_dest "${CMAKE_BINARY_DIR}/_deps/doxygen-awesome-src")
  if(NOT EXISTS "${_dest}/doxygen-awesome.css")
    execute_process(
      COMMAND "${CMAKE_COMMAND}" "-DDEST=${_dest}" "-DTAG=${WORKBOOK_AWESOME_TAG}"
              -P "${CMAKE_CURRENT_LIST_DIR}/FetchDoxygenAwesome.cmake"
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _log ERROR_VARIABLE _log)
    if(NOT _rc EQUAL 0 OR NOT EXISTS "${_dest}/doxygen-awesome.css")
      message(FATAL_ERROR "doxygen-awesome-css was not found and could not be fetched.\n"
                          "Install it (Debian/Ubuntu: apt-get install doxygen-awesome-css) or pass "
                          "-DWORKBOOK_AWESOME_CSS_DIR=<dir holding doxygen-awesome.css>.\n${_log}")
    endif()
  endif()
  set(WORKBOOK_AWESOME_CSS_DIR "${_dest}" CACHE PATH "directory holding doxygen-awesome.css" FORCE)
endif()
message(STATUS "Site theme: doxygen-awesome-css in ${WORKBOOK_AWESOME_CSS_DIR}")
