# cmake -DMANIFEST=<build>/course.tsv -DOUT_DIR=<dir> -DTOOLKIT=<version> -DBUILD_DIR=<build>
#       -DSOURCE_DIR=<repo> -P RecordOutputs.cmake
# (target: record-outputs, which writes docs/output/)
#
# Runs every lesson on this machine's GPU and stores what each printed as lessonNN.txt (its optional
# page's program, deeper.cpp, as lessonNN-deeper.txt), under a
# header naming the device, the driver, the toolkit and the date; a CSV file a lesson writes (one
# of its run arguments ends in .csv) is copied beside them. Paths of this machine's build and
# checkout are written as build/ and ./, so no recording names the machine it ran on. The site
# includes these files, split at each lesson's step marks: never edit them by hand.
# WORKBOOK_RECORD_ONLY (environment, a regex of lesson numbers such as "06|12") records only those.
# A project measured against PyTorch (lessons 30-32) names its table with `--pytorch <file>.csv` in
# its run arguments: before the program runs, the script beside it (lessons/NN-name/pytorch_side.py)
# is run with that path, in the same recording on the same GPU, and writes the table where PyTorch
# and a GPU are there. Where they are not, the script says why and writes nothing, and the program
# shows the course's own series alone. PyTorch is never needed to build or test the course.
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  OUTPUT_VARIABLE gpus RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT gpus)
  message(FATAL_ERROR "nvidia-smi found no GPU: record the outputs on a machine with the NVIDIA driver and a GPU")
endif()
# "NVIDIA H200, 580.159.04" per GPU -> "2 GPUs (the first: NVIDIA H200), driver 580.159.04"
string(REPLACE "\n" ";" rows "${gpus}")
list(LENGTH rows count)
list(GET rows 0 first)
string(REGEX REPLACE "^(.*), ([^,]*)$" "\\1" name "${first}")
string(REGEX REPLACE "^(.*), ([^,]*)$" "\\2" driver "${first}")
set(gpus "${name}")
if(count GREATER 1)
  set(gpus "${count} GPUs (the first: ${name})")
endif()
set(gpus "${gpus}, driver ${driver}")
string(TIMESTAMP today "%Y-%m-%d" UTC)
file(MAKE_DIRECTORY "${OUT_DIR}")

# What a run printed, with this machine's folders written as a reader's checkout names them.
function(as_in_checkout var)
  set(text "${${var}}")
  string(REPLACE "${BUILD_DIR}/" "build/" text "${text}")
  string(REPLACE "${BUILD_DIR}" "build" text "${text}")
  string(REPLACE "${SOURCE_DIR}/" "./" text "${text}")
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

file(STRINGS "${MANIFEST}" lines)
foreach(line IN LISTS lines)
  string(REPLACE "\t" ";" fields "${line}")
  list(POP_FRONT fields place title program)
  string(REGEX MATCH "lesson([0-9][0-9])" _ "${program}")
  set(nn "${CMAKE_MATCH_1}")
  get_filename_component(name "${program}" NAME)
  if(NOT "$ENV{WORKBOOK_RECORD_ONLY}" STREQUAL "" AND NOT nn MATCHES "^($ENV{WORKBOOK_RECORD_ONLY})$")
    continue()
  endif()
  # A figure's table comes from this run or from none: an earlier run's CSV, in the build or in
  # OUT_DIR, must not be copied beside this recording (lesson 18 measures only on two GPUs).
  foreach(arg IN LISTS fields)
    if(arg MATCHES "\\.csv$")
      get_filename_component(table "${arg}" NAME)
      file(REMOVE "${arg}" "${OUT_DIR}/${table}")
    endif()
  endforeach()
  set(side "")
  list(FIND fields "--pytorch" at)
  if(at GREATER -1)
    math(EXPR at "${at} + 1")
    list(GET fields ${at} table)
    get_filename_component(table_name "${table}" NAME)
    file(GLOB script "${SOURCE_DIR}/lessons/${nn}-*/pytorch_side.py")
    if(NOT script)
      message(FATAL_ERROR "lesson${nn} names a PyTorch table but lessons/${nn}-*/pytorch_side.py does not exist")
    endif()
    execute_process(COMMAND python3 "${script}" "${table}" TIMEOUT 300
      RESULT_VARIABLE side_rc OUTPUT_VARIABLE side ERROR_VARIABLE side)
    get_filename_component(folder "${script}" DIRECTORY)
    get_filename_component(folder "${folder}" NAME)
    as_in_checkout(side)
    set(side "$ python3 lessons/${folder}/pytorch_side.py build/${table_name}\n# exit code ${side_rc}\n\n${side}")
    message("${place} pytorch_side.py: exit code ${side_rc}")
  endif()
  execute_process(COMMAND "${program}" ${fields} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  as_in_checkout(out)
  set(recording "lesson${nn}")
  if(name MATCHES "-deeper$")  # the second program of a lesson's optional page
    set(recording "lesson${nn}-deeper")
  endif()
  file(WRITE "${OUT_DIR}/${recording}.txt"
    "$ ${name}\n# recorded ${today} on ${gpus}, CUDA toolkit ${TOOLKIT}; exit code ${rc}\n\n${out}")
  if(NOT side STREQUAL "")  # what the PyTorch side printed, kept beside the recording
    file(WRITE "${OUT_DIR}/lesson${nn}-pytorch.txt" "${side}")
  endif()
  message("${place} ${name}: exit code ${rc}")
  foreach(arg IN LISTS fields)
    if(arg MATCHES "\\.csv$" AND EXISTS "${arg}")
      file(COPY "${arg}" DESTINATION "${OUT_DIR}")
    endif()
  endforeach()
endforeach()
