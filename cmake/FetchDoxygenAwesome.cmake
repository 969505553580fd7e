# cmake -DDEST=<dir> -DTAG=<release tag> -P FetchDoxygenAwesome.cmake
cmake_minimum_required(VERSION 3.25)
include(FetchContent)
FetchContent_Populate(doxygen_awesome
  GIT_REPOSITORY https://github.com/jothepro/doxygen-awesome-css.git
  GIT_TAG        ${TAG}
  GIT_SHALLOW    TRUE
  SOURCE_DIR     ${DEST}
  SUBBUILD_DIR   ${DEST}-subbuild
  BINARY_DIR     ${DEST}-build
  QUIET)
