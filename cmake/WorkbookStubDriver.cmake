# The toolkit's stub libcuda, copied into the build tree as libcuda.so.1. Tests that need no GPU put
# this directory first on LD_LIBRARY_PATH to see exactly what a machine without a driver sees:
# every call, cuGetErrorName included, returns CUDA_ERROR_STUB_LIBRARY.
find_file(WORKBOOK_STUB_LIBCUDA libcuda.so
  PATHS "${CUDAToolkit_LIBRARY_DIR}/stubs" "${CUDAToolkit_TARGET_DIR}/lib/stubs"
        "${CUDAToolkit_TARGET_DIR}/lib64/stubs"
  NO_DEFAULT_PATH)
if(WORKBOOK_STUB_LIBCUDA)
  set(WORKBOOK_STUB_DRIVER_DIR "${CMAKE_BINARY_DIR}/stub-driver")
  file(MAKE_DIRECTORY "${WORKBOOK_STUB_DRIVER_DIR}")
  file(COPY_FILE "${WORKBOOK_STUB_LIBCUDA}" "${WORKBOOK_STUB_DRIVER_DIR}/libcuda.so.1" ONLY_IF_DIFFERENT)
else()
  message(WARNING "The toolkit's stub libcuda.so was not found under ${CUDAToolkit_LIBRARY_DIR}/stubs: "
                  "the no-driver tests are not registered")
endif()
