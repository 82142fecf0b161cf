# ONEFIT_NATIVE=ON: compile cmake/simd_probe.cpp with -march=native and the build's Highway
# settings, and stop with one message naming the CPU and the fix if Highway cannot build for it
# (instead of every file that includes core/simd.hpp failing on a Highway #error).
try_compile(onefit_native_ok
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/simd_probe.cpp
  COMPILE_DEFINITIONS -march=native "-DHWY_DISABLED_TARGETS=(${onefit_hwy_disabled})"
  CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${HWY_INCLUDE_DIR}"
  CXX_STANDARD 20
  OUTPUT_VARIABLE onefit_native_out)
if(NOT onefit_native_ok)
  set(onefit_cpu "unknown CPU")
  if(EXISTS /proc/cpuinfo)
    file(STRINGS /proc/cpuinfo onefit_cpu_line REGEX "^(model name|Model|CPU part)[ \t]*:" LIMIT_COUNT 1)
    string(REGEX REPLACE "^[^:]*:[ \t]*" "" onefit_cpu "${onefit_cpu_line}")
  endif()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -march=native -Q --help=target
                  OUTPUT_VARIABLE onefit_gcc_target ERROR_QUIET)
  string(REGEX MATCH "-march=[ \t]*([^ \t\n]+)" onefit_gcc_march "${onefit_gcc_target}")
  set(onefit_gcc_march "${CMAKE_MATCH_1}")
  string(REGEX MATCH "error: [^\n]*" onefit_first_error "${onefit_native_out}")
  message(FATAL_ERROR "ONEFIT_NATIVE=ON cannot build for this CPU (${onefit_cpu}; "
    "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} calls it -march=${onefit_gcc_march}): "
    "Highway fails with '${onefit_first_error}'. Configure without -DONEFIT_NATIVE=ON: the portable "
    "build runs the best SIMD target this CPU has, chosen at run time.")
endif()
