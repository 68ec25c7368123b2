// Host logic of svd_quant, shared by the CPU (native code), the emulated kernel (kernel sim) and
// NPU paths: validation in the documented order (docs/mxfp4.md, docs/errors.md), the out= checks, byte views of the fp4/e8m0
// dtypes, the quantizer's tiling and launch (docs/mxfp4.md A2), the dequantizer (A3: native on the CPU, ATen
// elsewhere) and the svd_quant composition (A5).
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <optional>
#include <string>
#include <tuple>

#include "amct_host.h"
#include "svd_quant_tiling.h"

namespace amct {
namespace mxfp4 {

// Runs the quantizer kernel on blockDim cores: input (contiguous, totalBlocks * 32 elements),
// codes (totalBlocks * 16 bytes) and dense scales (totalBlocks bytes), both contiguous uint8.
using Launcher = std::function<void(uint32_t blockDim, const at::Tensor& input, const at::Tensor& codes,
                                    const at::Tensor& scales, const at::Tensor& tiling)>;

// How svd_quant forms its three matmuls: fp32 GEMMs of exactly widened operands (CPU),
// or bf16 GEMMs with fp32 accumulation and bf16 output (NPU: torch_npu's matmul).
enum class GemmPrecision { kFp32, kBf16 };

struct SvdDims {
  int64_t k;
  int64_t n;
  int64_t r;
};

// svd_quant's checks in their documented order (one routine for CPU, Meta and NPU).
SvdDims checkSvdQuant(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                      const at::Tensor& down, const at::Tensor& up);

// The ops: validate, allocate contiguous outputs on the input's device, launch nothing for an
// empty input. quantize runs the AscendC kernel through `launch` (NPU, or the kernel sim for the
// private _mxfp4_quantize_emulated op); quantizeNative is the native CPU implementation.
std::tuple<at::Tensor, at::Tensor> quantize(const at::Tensor& input, const std::string& roundMode,
                                            const PlatformFacts& facts, const Launcher& launch);
std::tuple<at::Tensor, at::Tensor> quantizeNative(const at::Tensor& input, const std::string& roundMode);
at::Tensor dequantize(const at::Tensor& codes, const at::Tensor& scales, std::optional<at::ScalarType> dtype);
// svd_quant with the kernel quantizer (NPU) or, on the CPU, with the native one.
at::Tensor svdQuant(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                    const at::Tensor& down, const at::Tensor& up, GemmPrecision gemm, const PlatformFacts& facts,
                    const Launcher& launch);
at::Tensor svdQuantNative(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                          const at::Tensor& down, const at::Tensor& up);

// The native CPU out= kernels, under the rule of every .out overload (amct::checkOutTensor;
// codes may also be float4_e2m1fn_x2 and scales float8_e8m0fnu, the typed views of the bytes).
std::tuple<at::Tensor&, at::Tensor&> quantizeNativeOut(const at::Tensor& input, const std::string& roundMode,
                                                       at::Tensor& codes, at::Tensor& scales);
at::Tensor& dequantizeOut(const at::Tensor& codes, const at::Tensor& scales, std::optional<at::ScalarType> dtype,
                          at::Tensor& out);

// Meta: the same checks, shapes and dtypes only.
std::tuple<at::Tensor, at::Tensor> quantizeMeta(const at::Tensor& input, const std::string& roundMode);
at::Tensor dequantizeMeta(const at::Tensor& codes, const at::Tensor& scales, std::optional<at::ScalarType> dtype);
at::Tensor svdQuantMeta(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                        const at::Tensor& down, const at::Tensor& up);

// UB bytes the kernel's buffers take for a tile of tileBlocks blocks (mirrors its InitBuffer list).
uint64_t ubBytes(amct_mxfp4::Mxfp4Dtype dtype, uint32_t tileBlocks);

// The tiling for totalBlocks > 0 blocks.
amct_mxfp4::Mxfp4Tiling computeTiling(amct_mxfp4::Mxfp4Dtype dtype, amct_mxfp4::Mxfp4RoundMode mode,
                                      uint64_t totalBlocks, const PlatformFacts& facts);

}  // namespace mxfp4
}  // namespace amct
