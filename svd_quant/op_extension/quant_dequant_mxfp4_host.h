// Device-agnostic host logic of quant_dequant_mxfp4 (svd_quant/README.md, section
// quant_dequant_mxfp4): validation, the exact exponent parameters of a scale, the native CPU path,
// the Meta functions and the AscendC kernel's tiling and launch (shared by the kernel sim and the NPU).
#pragma once

#include <ATen/ATen.h>

#include <functional>

#include "amct_host.h"
#include "quant_dequant_mxfp4_cpu.h"
#include "quant_dequant_mxfp4_tiling.h"

namespace amct {
namespace qdq {

// Runs the kernel on blockDim cores: input contiguous (totalBlocks * 32 elements of the tiling's
// dtype), output contiguous float32 of the same length.
using Launcher = std::function<void(uint32_t blockDim, const at::Tensor& input, const at::Tensor& output,
                                    const at::Tensor& tiling)>;

// inv_scale_factor_scale as the op uses it: rounded to float32, which must be positive and finite
// (RuntimeError naming the argument otherwise). Returns the exact exponent parameters.
Params paramsFor(double invScaleFactorScale);

// The upstream op: x float32 with numel a multiple of 32, blocks of 32 consecutive elements in
// row-major order; same shape out. Native CPU kernel.
at::Tensor quantDequantFlat(const at::Tensor& x, double invScaleFactorScale);
// The last_dim overload: x float16/bfloat16/float32 of rank >= 1, blocks along the last dimension
// (a partial last block of a row is zero-padded virtually); same shape and dtype out.
at::Tensor quantDequantLastDim(const at::Tensor& x, int64_t blockSize, double invScaleFactorScale);

// The upstream op's checks alone (x, then inv_scale_factor_scale).
void checkFlat(const at::Tensor& x, double invScaleFactorScale);

// Meta: the same checks, shapes and dtypes only.
at::Tensor quantDequantFlatMeta(const at::Tensor& x, double invScaleFactorScale);
at::Tensor quantDequantLastDimMeta(const at::Tensor& x, int64_t blockSize, double invScaleFactorScale);

// The last_dim overload through the AscendC kernel (CPU: kernel sim; NPU: the device). The kernel
// takes whole blocks and writes float32: a ragged last dimension is padded on x's device and the
// result cast to x's dtype there (copies the native CPU path does not make).
at::Tensor quantDequantKernel(const at::Tensor& x, int64_t blockSize, double invScaleFactorScale,
                              const PlatformFacts& facts, const Launcher& launch);

// UB bytes the kernel's buffers take for a tile of tileBlocks blocks (mirrors its InitBuffer list).
uint64_t ubBytes(amct_qdq::QdqDtype dtype, uint32_t tileBlocks);

// The tiling for totalBlocks > 0 blocks.
amct_qdq::QdqTiling computeTiling(amct_qdq::QdqDtype dtype, const Params& p, uint64_t totalBlocks,
                                  const PlatformFacts& facts);

}  // namespace qdq
}  // namespace amct
