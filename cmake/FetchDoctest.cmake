# cmake -DDEST=<dir> -DTAG=<release tag> -P FetchDoctest.cmake
# Script mode, so a failed download ends this child process instead of the configure.
cmake_minimum_required(VERSION 3.25)
include(FetchContent)
FetchContent_Populate(doctest
  GIT_REPOSITORY https://github.com/doctest/doctest.git
  GIT_TAG        ${TAG}
  GIT_SHALLOW    TRUE
  SOURCE_DIR     ${DEST}
  SUBBUILD_DIR   ${DEST}-subbuild
  BINARY_DIR     ${DEST}-build
  QUIET)
