# Kernel images: every kernels/<name>.cu becomes
#   <name>.fatbin           machine code for each of WORKBOOK_CUDA_ARCHS plus PTX of the highest,
#                           which the driver compiles for GPUs newer than the list
#   <name>.sm_<XY>.cubin    one architecture's machine code only (lesson 06 loads the device's own
#                           and a foreign one); vector_ops also for WORKBOOK_OTHER_ARCH, below
#   <name>.ptx              PTX of the lowest architecture, which the driver JIT-compiles at load
# in WORKBOOK_KERNEL_DIR. Programs find them through an absolute path baked in at build time, which
# the environment variable CUDA_WORKBOOK_KERNEL_DIR overrides (see common/workbook.hpp).

# Every architecture that both nvcc 12.x and 13.x can build, from Turing (sm_75) up.
set(WORKBOOK_CUDA_ARCHS "75;80;86;87;89;90" CACHE STRING
  "GPU architectures (compute capability without the dot) built into the kernel images")
set(WORKBOOK_KERNEL_DIR "${CMAKE_BINARY_DIR}/kernels")

if(NOT CUDAToolkit_NVCC_EXECUTABLE)
  message(FATAL_ERROR "nvcc was not found with the CUDA Toolkit; it builds the kernel images in kernels/")
endif()
list(SORT WORKBOOK_CUDA_ARCHS COMPARE NATURAL)
list(GET WORKBOOK_CUDA_ARCHS 0 WORKBOOK_LOWEST_ARCH)
list(GET WORKBOOK_CUDA_ARCHS -1 WORKBOOK_HIGHEST_ARCH)
set(WORKBOOK_NVCC_FLAGS -std=c++17 -O3 -lineinfo)

# Lessons 06 and 12 and exercise 12 load a cubin that the device cannot run: one of another major
# version. A learner's build names one architecture (README step 2), so when every listed
# architecture has the same major version, vector_ops gets one more cubin of another major version
# (sm_75, or sm_90 where the list is all 7.x): a few KiB, whatever WORKBOOK_CUDA_ARCHS says.
set(_wb_majors "")
foreach(arch IN LISTS WORKBOOK_CUDA_ARCHS)
  string(REGEX MATCH "^[0-9]+" number "${arch}")
  math(EXPR major "${number} / 10")
  list(APPEND _wb_majors ${major})
endforeach()
list(REMOVE_DUPLICATES _wb_majors)
list(LENGTH _wb_majors _wb_major_count)
set(WORKBOOK_OTHER_ARCH "")
if(_wb_major_count EQUAL 1)
  if(_wb_majors STREQUAL "7")
    set(WORKBOOK_OTHER_ARCH 90)
  else()
    set(WORKBOOK_OTHER_ARCH 75)
  endif()
endif()
# Every architecture with a vector_ops cubin: the built ones and the other one.
set(WORKBOOK_CUBIN_ARCHS ${WORKBOOK_CUDA_ARCHS} ${WORKBOOK_OTHER_ARCH})
list(SORT WORKBOOK_CUBIN_ARCHS COMPARE NATURAL)

add_custom_target(kernel-images ALL COMMENT "Kernel images are in ${WORKBOOK_KERNEL_DIR}")

# workbook_add_kernel(<name>): builds kernels/<name>.cu into the three kinds of image.
function(workbook_add_kernel name)
  set(src "${CMAKE_SOURCE_DIR}/kernels/${name}.cu")
  set(dir "${WORKBOOK_KERNEL_DIR}")
  set(gencode "")
  foreach(arch IN LISTS WORKBOOK_CUDA_ARCHS)
    list(APPEND gencode "-gencode=arch=compute_${arch},code=sm_${arch}")
  endforeach()
  list(APPEND gencode "-gencode=arch=compute_${WORKBOOK_HIGHEST_ARCH},code=compute_${WORKBOOK_HIGHEST_ARCH}")

  set(outputs "${dir}/${name}.fatbin" "${dir}/${name}.ptx")
  add_custom_command(OUTPUT "${dir}/${name}.fatbin"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
    COMMAND "${CUDAToolkit_NVCC_EXECUTABLE}" ${WORKBOOK_NVCC_FLAGS} -fatbin ${gencode}
            -o "${dir}/${name}.fatbin" "${src}"
    DEPENDS "${src}" COMMENT "nvcc: ${name}.fatbin (sm_${WORKBOOK_CUDA_ARCHS} + PTX)" VERBATIM)
  add_custom_command(OUTPUT "${dir}/${name}.ptx"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
    COMMAND "${CUDAToolkit_NVCC_EXECUTABLE}" ${WORKBOOK_NVCC_FLAGS} -ptx
            -arch=compute_${WORKBOOK_LOWEST_ARCH} -o "${dir}/${name}.ptx" "${src}"
    DEPENDS "${src}" COMMENT "nvcc: ${name}.ptx (compute_${WORKBOOK_LOWEST_ARCH})" VERBATIM)
  set(cubin_archs ${WORKBOOK_CUDA_ARCHS})
  if(name STREQUAL "vector_ops")
    set(cubin_archs ${WORKBOOK_CUBIN_ARCHS})
  endif()
  foreach(arch IN LISTS cubin_archs)
    set(cubin "${dir}/${name}.sm_${arch}.cubin")
    list(APPEND outputs "${cubin}")
    add_custom_command(OUTPUT "${cubin}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
      COMMAND "${CUDAToolkit_NVCC_EXECUTABLE}" ${WORKBOOK_NVCC_FLAGS} -cubin -arch=sm_${arch}
              -o "${cubin}" "${src}"
      DEPENDS "${src}" COMMENT "nvcc: ${name}.sm_${arch}.cubin" VERBATIM)
  endforeach()
  add_custom_target(kernel-${name} DEPENDS ${outputs})
  add_dependencies(kernel-images kernel-${name})
  set_property(GLOBAL APPEND PROPERTY WORKBOOK_KERNELS "${name}")
endfunction()

# workbook_embed_image(<target> <image file> <symbol>): compiles the image into <target> as
#   extern const unsigned char <symbol>[]; extern const std::size_t <symbol>_size;
# so a lesson can hand it to cuLibraryLoadData / cuModuleLoadData with no file at run time.
function(workbook_embed_image target image symbol)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${symbol}.cpp")
  get_filename_component(image_name "${image}" NAME_WE)
  add_custom_command(OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" "-DIN=${image}" "-DOUT=${out}" "-DSYMBOL=${symbol}"
            -P "${CMAKE_SOURCE_DIR}/cmake/EmbedFile.cmake"
    DEPENDS "${image}" kernel-${image_name} "${CMAKE_SOURCE_DIR}/cmake/EmbedFile.cmake"
    COMMENT "Embedding ${image} as ${symbol}" VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
