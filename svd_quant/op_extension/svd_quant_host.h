// Host logic of svd_quant, shared by the CPU (native code), the emulated kernel (kernel sim) and
// NPU paths: validation in the documented order (docs/mxfp4.md, docs/errors.md), the out= checks, byte views of the fp4/e8m0
// dtypes, the quantizer's tiling and launch (docs/mxfp4.md A2), the dequantizer (A3: native on the CPU, ATen
// elsewhere) and the CPU svd_quant composition (A5). The fused NPU kernel's host side is
// svd_quant_fused_host.h.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "amct_host.h"
#include "svd_quant_tiling.h"

namespace amct {
namespace mxfp4 {

// Runs the quantizer kernel on blockDim cores: input (contiguous, totalBlocks * 32 elements),
// codes (totalBlocks * 16 bytes) and dense scales (totalBlocks bytes), both contiguous uint8.
using Launcher = std::function<void(uint32_t blockDim, const at::Tensor& input, const at::Tensor& codes,
                                    const at::Tensor& scales, const at::Tensor& tiling)>;

struct SvdDims {
  int64_t k;
  int64_t n;
  int64_t r;
};

// svd_quant's checks in their documented order (one routine for CPU, Meta and NPU).
SvdDims checkSvdQuant(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                      const at::Tensor& down, const at::Tensor& up);

// The output shape of svd_quant, (*B, S, N).
std::vector<c10::SymInt> svdOutputShape(const at::Tensor& activation, int64_t n);

// The result without any matmul: empty when B*S = 0 or N = 0, zeros when K = 0; otherwise none.
std::optional<at::Tensor> trivialSvdResult(const at::Tensor& activation, const SvdDims& dims);

// The ops: validate, allocate contiguous outputs on the input's device, launch nothing for an
// empty input. quantize runs the AscendC kernel through `launch` (NPU, or the kernel sim for the
// private _mxfp4_quantize_emulated op); quantizeNative is the native CPU implementation.
std::tuple<at::Tensor, at::Tensor> quantize(const at::Tensor& input, const std::string& roundMode,
                                            const PlatformFacts& facts, const Launcher& launch);
std::tuple<at::Tensor, at::Tensor> quantizeNative(const at::Tensor& input, const std::string& roundMode);
at::Tensor dequantize(const at::Tensor& codes, const at::Tensor& scales, std::optional<at::ScalarType> dtype);
// svd_quant on the CPU: the native quantizer and dequantizer, ATen GEMMs (docs/mxfp4.md A5): bf16 ones on
// CPUs with bf16 dot products (the FP4 one only where no subnormal can occur), fp32 ones of exactly
// widened operands otherwise; test hook AMCT_SVD_QUANT_GEMM (svd_quant/README.md). The NPU and emulated
// paths run the fused kernel (svd_quant_fused_host.h).
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
