# Shared CMake logic of every amct_ops operator (and of common/ itself).
#
# An operator's CMakeLists.txt is:
#
#   cmake_minimum_required(VERSION 3.18)
#   include(${CMAKE_CURRENT_LIST_DIR}/../common/cmake/amct_operator.cmake)
#   project(<op> LANGUAGES ${AMCT_LANGUAGES})
#   amct_add_operator(<op> KERNEL op_kernel/<op>_kernel.cpp
#                     HOST op_extension/register.cpp op_extension/<op>_host.cpp
#                     [CPU_KERNELS op_extension/<op>_cpu.cpp]
#                     NPU_HOST op_extension/<op>_npu.cpp
#                     [KERNEL_3510 op_kernel/<op>_<x>_kernel.cpp]
#                     [NPU_ARCHS dav-2201 dav-3510])
#
# Including this file (before project(), at file scope) chooses the backend's languages:
# CPU -> CXX only; NPU -> find_package(ASC) and ASC + CXX. ops_build.sh passes the settings:
# AMCT_ROOT, AMCT_PYTHON, AMCT_BACKEND (cpu|npu), AMCT_SOC, AMCT_NPU_ARCH (dav-2201|dav-3510),
# AMCT_ARCH_NUMBER (2201|3510), AMCT_HOST_ARCH (x86_64|aarch64).

foreach(_amct_var AMCT_ROOT AMCT_PYTHON AMCT_BACKEND AMCT_NPU_ARCH AMCT_ARCH_NUMBER AMCT_HOST_ARCH)
  if(NOT DEFINED ${_amct_var})
    message(FATAL_ERROR "amct_ops: ${_amct_var} is not set; build with `bash ops_build.sh` (see README.md)")
  endif()
endforeach()
set(AMCT_CONFIG_KEY "${AMCT_CONFIG_KEY}" CACHE STRING "settings this build dir was configured with")

if(AMCT_BACKEND STREQUAL "npu")
  list(APPEND CMAKE_MODULE_PATH "$ENV{ASCEND_HOME_PATH}/compiler/tikcpp/ascendc_kernel_cmake")
  find_package(ASC REQUIRED)
  set(AMCT_LANGUAGES ASC CXX)
elseif(AMCT_BACKEND STREQUAL "cpu")
  set(AMCT_LANGUAGES CXX)
else()
  message(FATAL_ERROR "amct_ops: AMCT_BACKEND must be cpu or npu, got '${AMCT_BACKEND}'")
endif()

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(AMCT_COMMON_DIR "${AMCT_ROOT}/common")
# Our bisheng options for every AscendC kernel (common/CMakeLists.txt records them, with CMake's
# ASC flags, for the build info: whether --cce-auto-sync was given is part of what selftest reports).
set(AMCT_KERNEL_FLAGS --npu-arch=${AMCT_NPU_ARCH} -DASCENDC_DUMP=0)
# ops_build.sh --sanitize builds into build-sanitize/ directories (AMCT_BUILD_DIR_NAME).
if(NOT DEFINED AMCT_BUILD_DIR_NAME)
  set(AMCT_BUILD_DIR_NAME build)
endif()
set(AMCT_COMMON_BUILD_DIR "${AMCT_ROOT}/common/${AMCT_BUILD_DIR_NAME}")
# AddressSanitizer + UndefinedBehaviorSanitizer for the CPU libraries (ops_build.sh --sanitize):
# every report is fatal (-fno-sanitize-recover), frames stay readable; -O1 (after the libraries'
# own -O3) keeps the instrumented build several times quicker to compile. The kernel sim's own
# guards are unchanged. The process must preload the sanitizer runtimes (python is not instrumented);
# tests/test_sanitizers.py shows how.
set(AMCT_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1)
function(amct_apply_sanitizers target)
  if(AMCT_SANITIZE)
    target_compile_options(${target} PRIVATE ${AMCT_SANITIZE_FLAGS})
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# torch's include dirs, library dir and C++ ABI, asked from the Python that will import us.
function(amct_find_torch)
  execute_process(
    COMMAND "${AMCT_PYTHON}" -c
      "import os, torch; from torch.utils import cpp_extension as c; print(';'.join(c.include_paths())); print(os.path.join(os.path.dirname(torch.__file__), 'lib')); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
    OUTPUT_VARIABLE _out RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "amct_ops: cannot import torch with ${AMCT_PYTHON}")
  endif()
  string(REPLACE "\n" ";" _lines "${_out}")
  list(GET _lines -2 _libdir)
  list(GET _lines -1 _abi)
  list(REMOVE_AT _lines -1)
  list(REMOVE_AT _lines -1)
  set(AMCT_TORCH_INCLUDE_DIRS "${_lines}" PARENT_SCOPE)
  set(AMCT_TORCH_LIB_DIR "${_libdir}" PARENT_SCOPE)
  set(AMCT_TORCH_CXX11_ABI "${_abi}" PARENT_SCOPE)
endfunction()

# torch_npu's install dir (NPU backend only; needs CANN to import).
function(amct_find_torch_npu)
  execute_process(
    COMMAND "${AMCT_PYTHON}" -c "import os, torch, torch_npu; print(os.path.dirname(torch_npu.__file__))"
    OUTPUT_VARIABLE _dir RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "amct_ops: the NPU backend needs an importable torch_npu (with CANN set up)")
  endif()
  set(AMCT_TORCH_NPU_DIR "${_dir}" PARENT_SCOPE)
endfunction()

amct_find_torch()

# Compile and link settings every library of ours shares: torch, the project's host headers.
function(amct_use_torch target)
  target_include_directories(${target} SYSTEM PRIVATE ${AMCT_TORCH_INCLUDE_DIRS})
  target_include_directories(${target} PRIVATE "${AMCT_COMMON_DIR}/op_host" "${AMCT_COMMON_DIR}/ascendc_sim")
  target_compile_definitions(${target} PRIVATE _GLIBCXX_USE_CXX11_ABI=${AMCT_TORCH_CXX11_ABI}
                             __NPU_ARCH__=${AMCT_ARCH_NUMBER} AMCT_NPU_ARCH_NAME="${AMCT_NPU_ARCH}")
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  target_link_directories(${target} PRIVATE "${AMCT_TORCH_LIB_DIR}")
  target_link_libraries(${target} PRIVATE c10 torch torch_cpu)
  set_target_properties(${target} PROPERTIES PREFIX "lib" BUILD_RPATH_USE_ORIGIN ON)
endfunction()

# The NPU-side settings (docs/npu.md): CANN and torch_npu includes and libraries.
function(amct_use_cann target)
  amct_find_torch_npu()
  set(_cann "$ENV{ASCEND_HOME_PATH}")
  set(_host "${_cann}/${AMCT_HOST_ARCH}-linux")
  target_include_directories(${target} SYSTEM PRIVATE "${_host}/include" "${_host}/asc/include" "${_cann}/include"
                             "${AMCT_TORCH_NPU_DIR}/include" "${AMCT_TORCH_NPU_DIR}/include/third_party/acl/inc")
  target_link_directories(${target} PRIVATE "${_cann}/lib64" "${_host}/lib64" "${AMCT_TORCH_NPU_DIR}/lib")
  target_link_libraries(${target} PRIVATE torch_npu tiling_api platform register unified_dlog graph_base
                        ascendcl ascendc_runtime dl m)
  target_compile_definitions(${target} PRIVATE AMCT_WITH_NPU=1)
endfunction()

# The library every operator links: kernel-sim state, platform facts, sim-only ops.
function(amct_link_common target)
  if(NOT EXISTS "${AMCT_COMMON_BUILD_DIR}/libamct_common.so")
    message(FATAL_ERROR "amct_ops: ${AMCT_COMMON_BUILD_DIR}/libamct_common.so is missing; ops_build.sh builds common/ first")
  endif()
  target_link_libraries(${target} PRIVATE "${AMCT_COMMON_BUILD_DIR}/libamct_common.so")
  # Staged as amct_ops/<op>/libamct_<op>.so next to amct_ops/lib/libamct_common.so.
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/../lib" BUILD_WITH_INSTALL_RPATH ON)
endfunction()

# The native CPU kernels: each source compiled once per SIMD capability, as ATen compiles its own
# kernels (cmake/Codegen.cmake there), so at::vec::Vectorized<T> has that capability's width in each
# copy; amct_cpu_dispatch.h picks a copy at run time. Non-x86 hosts build the DEFAULT copy only.
# -ffp-contract=off: no copy may fuse a multiply and an add that another copy keeps apart, so all
# copies give the same bits.
set(AMCT_CPU_CAPABILITY_FLAGS_DEFAULT "")
set(AMCT_CPU_CAPABILITY_FLAGS_AVX2 -mavx2 -mfma -mbmi -mbmi2 -mf16c)
# GCC 12's own avx512fintrin.h trips -W(maybe-)uninitialized on its _mm512_undefined_*() operands;
# the same source's DEFAULT and AVX2 copies keep those warnings for our code.
set(AMCT_CPU_CAPABILITY_FLAGS_AVX512 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mbmi -mbmi2 -mf16c
    -Wno-uninitialized -Wno-maybe-uninitialized)
if(AMCT_HOST_ARCH STREQUAL "x86_64")
  set(AMCT_CPU_CAPABILITIES DEFAULT AVX2 AVX512)
else()
  set(AMCT_CPU_CAPABILITIES DEFAULT)
endif()
function(amct_add_cpu_kernels target)
  foreach(_cap ${AMCT_CPU_CAPABILITIES})
    set(_obj ${target}_cpu_${_cap})
    add_library(${_obj} OBJECT ${ARGN})
    amct_use_torch(${_obj})
    target_include_directories(${_obj} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/op_extension" "${AMCT_COMMON_DIR}/op_kernel")
    target_compile_definitions(${_obj} PRIVATE CPU_CAPABILITY=${_cap} CPU_CAPABILITY_${_cap})
    target_compile_options(${_obj} PRIVATE -O3 -fopenmp -fno-trapping-math -ffp-contract=off
                           ${AMCT_CPU_CAPABILITY_FLAGS_${_cap}})
    amct_apply_sanitizers(${_obj})
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${_obj}>)
  endforeach()
endfunction()

# The wrapper TU through which the sim compiles a kernel source: one source has one LANGUAGE per
# directory, and the NPU library compiles the kernel itself as ASC.
function(amct_sim_wrapper out source)
  get_filename_component(_kernel "${source}" ABSOLUTE)
  get_filename_component(_name "${source}" NAME_WE)
  set(_wrapper "${CMAKE_CURRENT_BINARY_DIR}/${_name}_sim.cpp")
  file(WRITE "${_wrapper}.in" "// generated: the AscendC kernel compiled against the kernel sim\n#include \"${_kernel}\"\n")
  configure_file("${_wrapper}.in" "${_wrapper}" COPYONLY)
  set(${out} "${_wrapper}" PARENT_SCOPE)
endfunction()

# What every target compiling kernels against the sim needs (besides torch and libamct_common).
function(amct_use_sim_kernels target)
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/op_kernel" "${CMAKE_CURRENT_SOURCE_DIR}/op_extension"
                             "${AMCT_COMMON_DIR}/op_kernel")
  target_compile_definitions(${target} PRIVATE AMCT_KERNEL_SIM=1 AMCT_SIM_WITH_ATEN=1)
  # ATen's OpenMP at::parallel_for, which runs the sim's blocks, is inline code: without
  # -fopenmp it runs serially. The runtime is the libgomp.so.1 torch already loaded (same soname).
  # -fno-trapping-math: the sim's float loops (selects around conversions, rounding casts)
  # vectorise only when the compiler may assume FP exceptions are not observed (nothing here
  # enables FP traps); results stay IEEE, bit for bit.
  target_compile_options(${target} PRIVATE -O3 -fopenmp -fno-trapping-math)
  target_link_options(${target} PRIVATE -fopenmp)
endfunction()

# libamct_<op>_sim3510.so: dav-3510 kernels against the sim in a build for another arch. The sim
# headers are header-only and arch-dependent (#if __NPU_ARCH__, inline functions, templates,
# inline thread_local variables): linked into one object with dav-2201 TUs, the linker and the
# dynamic loader would keep ONE copy of each (an ODR violation: a 3510 launch running 2201 code).
# So these TUs get their own shared library whose only dynamic symbols are the kernels'
# amct_*_launch entries (amct_sim_3510.map): every other definition is local to it, and
# -fvisibility-inlines-hidden keeps its inline members out of the symbol tables. The process-wide
# state (platform, modes, cost records, launch counter) stays in libamct_common, which it links.
function(amct_add_sim_3510_library target)
  set(_wrappers "")
  foreach(_source ${ARGN})
    amct_sim_wrapper(_wrapper "${_source}")
    list(APPEND _wrappers "${_wrapper}")
  endforeach()
  add_library(${target} SHARED ${_wrappers})
  amct_use_torch(${target})
  amct_link_common(${target})
  amct_use_sim_kernels(${target})
  # amct_use_torch defined the build's arch; these TUs are dav-3510's.
  get_target_property(_defs ${target} COMPILE_DEFINITIONS)
  list(FILTER _defs EXCLUDE REGEX "^(__NPU_ARCH__|AMCT_NPU_ARCH_NAME)=")
  set_target_properties(${target} PROPERTIES COMPILE_DEFINITIONS "${_defs}")
  target_compile_definitions(${target} PRIVATE __NPU_ARCH__=3510 AMCT_NPU_ARCH_NAME="dav-3510")
  target_compile_options(${target} PRIVATE -fvisibility-inlines-hidden)
  set(_map "${AMCT_COMMON_DIR}/cmake/amct_sim_3510.map")
  target_link_options(${target} PRIVATE "-Wl,--version-script=${_map}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${_map}")
  amct_apply_sanitizers(${target})
endfunction()

# amct_add_operator(<op> KERNEL <kernel.cpp...> HOST <files...> [CPU_KERNELS <files...>] NPU_HOST <files...>
#                   [KERNEL_3510 <kernel.cpp...>] [NPU_ARCHS <archs...>])
#
# KERNEL lists one AscendC source per operator of the package (a package such as svd_quant holds
# several operators); each is its own translation unit in both libraries.
# KERNEL_3510 lists kernels that are dav-3510 code (MX matmuls, ...), run in the sim in EVERY build
# (docs/kernel_sim.md, "Kernels of two arches in one process"): in a dav-3510 build they are
# ordinary KERNEL sources; in any other they are compiled against the sim for dav-3510 only, into
# libamct_<op>_sim3510.so (see amct_add_sim_3510_library), and bisheng never sees them. Either
# way the CPU library gets AMCT_SIM_3510_KERNELS=1 and their amct_*_launch entries.
# Always builds libamct_<op>.so: schema, Meta, the native CPU implementation (CPU_KERNELS) and
# the private _<op>_emulated CPU ops, whose kernel is the AscendC source compiled as C++ against
# the kernel sim. With the NPU
# backend it also builds libamct_<op>_npu.so: the PrivateUse1 implementation with the kernel
# compiled by bisheng for --npu-arch=${AMCT_NPU_ARCH} (skipped with a message when the op
# has no NPU kernel for that arch).
function(amct_add_operator op)
  cmake_parse_arguments(ARG "" "" "KERNEL;HOST;CPU_KERNELS;NPU_HOST;KERNEL_3510;NPU_ARCHS" ${ARGN})
  if((NOT ARG_KERNEL AND NOT ARG_KERNEL_3510) OR NOT ARG_HOST)
    message(FATAL_ERROR "amct_add_operator(${op}): KERNEL (or KERNEL_3510) and HOST are required")
  endif()
  if(NOT ARG_NPU_ARCHS)
    set(ARG_NPU_ARCHS dav-2201 dav-3510)
  endif()
  set(_sim3510 "")
  if(ARG_KERNEL_3510 AND AMCT_ARCH_NUMBER STREQUAL "3510")
    list(APPEND ARG_KERNEL ${ARG_KERNEL_3510})
  elseif(ARG_KERNEL_3510)
    set(_sim3510 amct_${op}_sim3510)
    amct_add_sim_3510_library(${_sim3510} ${ARG_KERNEL_3510})
  endif()
  set(_kernels "")
  set(_wrappers "")
  foreach(_source ${ARG_KERNEL})
    get_filename_component(_kernel "${_source}" ABSOLUTE)
    list(APPEND _kernels "${_kernel}")
    amct_sim_wrapper(_wrapper "${_source}")
    list(APPEND _wrappers "${_wrapper}")
  endforeach()

  set(_cpu amct_${op})
  add_library(${_cpu} SHARED ${ARG_HOST} ${_wrappers})
  amct_use_torch(${_cpu})
  amct_link_common(${_cpu})
  amct_use_sim_kernels(${_cpu})
  amct_apply_sanitizers(${_cpu})
  if(ARG_KERNEL_3510)
    target_compile_definitions(${_cpu} PRIVATE AMCT_SIM_3510_KERNELS=1)
  endif()
  if(_sim3510)
    target_link_libraries(${_cpu} PRIVATE ${_sim3510})
    set_target_properties(${_cpu} PROPERTIES INSTALL_RPATH "$ORIGIN:$ORIGIN/../lib")
  endif()
  if(ARG_CPU_KERNELS)
    amct_add_cpu_kernels(${_cpu} ${ARG_CPU_KERNELS})
  endif()

  if(AMCT_BACKEND STREQUAL "npu")
    list(FIND ARG_NPU_ARCHS "${AMCT_NPU_ARCH}" _found)
    if(_found EQUAL -1)
      message(STATUS "amct_ops: ${op} has no NPU kernel for ${AMCT_NPU_ARCH} (only ${ARG_NPU_ARCHS}); building its CPU library only")
      return()
    endif()
    set(_npu amct_${op}_npu)
    set_source_files_properties(${_kernels} PROPERTIES LANGUAGE ASC)
    add_library(${_npu} SHARED ${ARG_NPU_HOST} ${_kernels})
    amct_use_torch(${_npu})
    amct_use_cann(${_npu})
    target_include_directories(${_npu} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/op_kernel" "${CMAKE_CURRENT_SOURCE_DIR}/op_extension"
                               "${AMCT_COMMON_DIR}/op_kernel")
    target_compile_options(${_npu} PRIVATE $<$<COMPILE_LANGUAGE:ASC>:${AMCT_KERNEL_FLAGS}>)
    # Host code (validation, tiling, LUTs) lives in the CPU library; the NPU one reuses it.
    target_link_libraries(${_npu} PRIVATE ${_cpu} "${AMCT_COMMON_BUILD_DIR}/libamct_common_npu.so")
    amct_link_common(${_npu})
    set_target_properties(${_npu} PROPERTIES INSTALL_RPATH "$ORIGIN:$ORIGIN/../lib")
  endif()
endfunction()
