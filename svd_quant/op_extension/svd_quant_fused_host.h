// Host side of the fused svd_quant kernel (dav-3510 MIX): its tiling and the op around a launch,
// shared by the emulated op _svd_quant_emulated (kernel sim) and the NPU implementation.
#pragma once

#include <ATen/ATen.h>

#include <functional>

#include "amct_host.h"
#include "svd_quant_fused_tiling.h"
#include "svd_quant_host.h"

namespace amct {
namespace mxfp4 {

// The fused kernel's GM arguments, all contiguous on one device: x (M, K) bf16, wCodes (N, K/2)
// and wScales (N, 2 ceil(K/64)) bytes (pad bytes 0x00), down (K, R), up (R, N), out (M, N) bf16,
// workspace bytes.
struct FusedArgs {
  at::Tensor x, wCodes, wScales, down, up, out, workspace;
};

// Runs the fused kernel on blockDim AIC blocks (each with its two AIV cores).
using FusedLauncher = std::function<void(uint32_t blockDim, const FusedArgs& args, const at::Tensor& tiling)>;

// The fused kernel is dav-3510 code in every build: its tiling is for that arch, and the facts
// passed in must be that arch's (amct::simPlatformFacts(kFusedArch) in the sim).
constexpr int kFusedArch = 3510;

// AIC cores: half the AIV cores (AIC:AIV = 1:2 on dav-3510).
uint32_t aicCores(const PlatformFacts& facts);

// The tiling for m > 0 rows of a validated, non-trivial problem.
amct_svdq::SvdFusedTiling computeFusedTiling(uint64_t m, const SvdDims& dims, const PlatformFacts& facts);

// svd_quant through the fused kernel: the shared validation (checkSvdQuant, the CPU op's checks),
// the trivial results without a launch, dense operands, the weights' pad scale bytes forced to
// 0x00, one launch.
at::Tensor svdQuantFused(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                         const at::Tensor& down, const at::Tensor& up, const PlatformFacts& facts,
                         const FusedLauncher& launch);

}  // namespace mxfp4
}  // namespace amct
