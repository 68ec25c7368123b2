// The native CPU MXFP4 quantizer and dequantizer (svd_quant_cpu.cpp): one copy per SIMD
// capability (amct_cpu_dispatch.h), chosen per call by mxfp4KernelsForThisCpu().
#pragma once

#include <cstdint>

#include "amct_cpu_dispatch.h"
#include "../op_kernel/svd_quant_tiling.h"  // CPU kernel objects do not have op_kernel/ on their path

namespace amct {
namespace mxfp4 {

// A run of rows of K = 32 * blocksPerRow elements, all contiguous. Row r's block b has its scale
// byte at scales[r * scaleRowStride + b]; bytes blocksPerRow..scaleRowStride-1 of a row are pad
// bytes (written 0x00 by the quantizer, ignored by the dequantizer).
struct BlockRows {
  int64_t rows;
  int64_t blocksPerRow;
  int64_t scaleRowStride;
};

// input: rows * K elements of `dtype`; codes: rows * K / 2 bytes (even element in the low nibble).
struct QuantizeJob {
  const void* input;
  uint8_t* codes;
  uint8_t* scales;
  BlockRows layout;
  amct_mxfp4::Mxfp4Dtype dtype;
  amct_mxfp4::Mxfp4RoundMode mode;
};

// out: rows * K elements of `dtype` (the exact fp32 value rounded to nearest even).
struct DequantizeJob {
  const uint8_t* codes;
  const uint8_t* scales;
  void* out;
  BlockRows layout;
  amct_mxfp4::Mxfp4Dtype dtype;
};

struct Mxfp4Kernels {
  void (*quantize)(const QuantizeJob& job);
  void (*dequantize)(const DequantizeJob& job);
};

AMCT_CPU_KERNEL_TABLE(Mxfp4Kernels, mxfp4Kernels)

}  // namespace mxfp4
}  // namespace amct
