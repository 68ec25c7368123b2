// The native CPU kernels of hifloat4_cast (hifloat4_cast_cpu.cpp, compiled once per SIMD
// capability; amct_cpu_dispatch.h picks the copy). Every entry is indexed by the float dtype
// (amct_hif4::Hif4Dtype: 0 float16, 1 bfloat16, 2 float32); pointers are to contiguous data,
// counts are 64-bit, and each call splits its work over at::parallel_for threads.
#pragma once

#include <cstdint>

#include "amct_cpu_dispatch.h"

namespace amct {
namespace hif4 {

struct CpuKernels {
  // Fake-quant of `blocks` consecutive 64-element blocks (the quant dim is the last one).
  void (*fakeQuantRows[3])(const void* in, void* out, int64_t blocks);
  // Fake-quant along a strided quant dim: `blockRows` runs of 64 x `inner` contiguous elements,
  // in each of which column i (stride `inner`) is one block.
  void (*fakeQuantColumns[3])(const void* in, void* out, int64_t blockRows, int64_t inner);
  // Pack of `blocks` consecutive blocks: 4 scale bytes and 32 value bytes per block.
  void (*pack[3])(const void* in, uint8_t* scale, uint8_t* value, int64_t blocks);
  // Unpack of `blocks` blocks to the dtype.
  void (*unpack[3])(const uint8_t* scale, const uint8_t* value, void* out, int64_t blocks);
};

AMCT_CPU_KERNEL_TABLE(CpuKernels, cpuKernels)

}  // namespace hif4
}  // namespace amct
