// svd_quant on the NPU (PrivateUse1): mxfp4_quantize through the quantizer kernel, and svd_quant
// on ascend950 (dav-3510) as one launch of the fused MIX kernel (svd_quant_fused_kernel.cpp: Q(X)
// on the AIV cores, X D, the U product and the MX FP4 matmul on the AIC) with the shared host
// logic (svd_quant_fused_host.cpp). Built only with CANN; compiled with -fsyntax-only against
// torch_npu's headers in CI. Not validated on hardware.
#include <torch/library.h>

#include <cstring>
#include <optional>
#include <string>
#include <tuple>

#include "acl/acl.h"
#include "amct_npu.h"
#include "svd_quant_fused_host.h"
#include "svd_quant_host.h"

#ifndef AMCT_SOC_NAME
#define AMCT_SOC_NAME "unknown"  // the CMake build always defines it; the syntax check does not
#endif

extern "C" void amct_svd_quant_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* codes,
                                      uint8_t* scales, uint8_t* tiling);
#if __NPU_ARCH__ == 3510
extern "C" void amct_svd_quant_fused_launch(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* wCodes,
                                            uint8_t* wScales, uint8_t* down, uint8_t* up, uint8_t* out,
                                            uint8_t* workspace, uint8_t* tiling);
#endif

namespace {

using amct::bytePtr;

void npuLaunch(uint32_t blockDim, const at::Tensor& input, const at::Tensor& codes, const at::Tensor& scales,
               const at::Tensor& tiling) {
  at::Tensor tilingDev = amct::deviceTiling(tiling, input);  // cached per tiling and device
  amct_svd_quant_launch(blockDim, amct::currentNpuStream(), bytePtr(input), bytePtr(codes), bytePtr(scales),
                        bytePtr(tilingDev));
}

#if __NPU_ARCH__ == 3510
void npuFusedLaunch(uint32_t blockDim, const amct::mxfp4::FusedArgs& a, const at::Tensor& tiling) {
  at::Tensor tilingDev = amct::deviceTiling(tiling, a.x);  // cached per tiling and device
  amct_svd_quant_fused_launch(blockDim, amct::currentNpuStream(), bytePtr(a.x), bytePtr(a.wCodes),
                              bytePtr(a.wScales), bytePtr(a.down), bytePtr(a.up), bytePtr(a.out), bytePtr(a.workspace),
                              bytePtr(tilingDev));
}
#endif

// svd_quant's NPU path targets ascend950 only (built for dav-3510, running on an Ascend950).
void checkAscend950() {
  const std::string built = AMCT_SOC_NAME;
  TORCH_CHECK(built == "ascend950",
              "svd_quant: the NPU implementation requires ascend950; this amct_ops wheel was built for ", built);
  const char* soc = aclrtGetSocName();
  const std::string socName = soc == nullptr ? "unknown" : soc;
  TORCH_CHECK(socName.rfind("Ascend950", 0) == 0, "svd_quant: this amct_ops wheel was built for ", built,
              " but the current NPU is ", socName);
}

std::tuple<at::Tensor, at::Tensor> quantizeNpu(const at::Tensor& input, c10::string_view roundMode) {
  return amct::mxfp4::quantize(input, std::string(roundMode), amct::npuPlatformFacts(), npuLaunch);
}

at::Tensor svdQuantNpu(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                       const at::Tensor& down, const at::Tensor& up) {
  // The CPU op's checks first (the same messages), then the ascend950 check.
  amct::mxfp4::checkSvdQuant(activation, weights, scales, down, up);
  checkAscend950();
#if __NPU_ARCH__ == 3510
  return amct::mxfp4::svdQuantFused(activation, weights, scales, down, up, amct::npuPlatformFacts(), npuFusedLaunch);
#else
  TORCH_CHECK(false, "svd_quant: the NPU implementation requires ascend950; this amct_ops wheel was built for ",
              AMCT_SOC_NAME);  // checkAscend950 has already refused: only dav-3510 builds have the kernel
#endif
}

}  // namespace

TORCH_LIBRARY_IMPL(amct, PrivateUse1, m) {
  m.impl("mxfp4_quantize", &quantizeNpu);
  m.impl("mxfp4_dequantize", &amct::mxfp4::dequantize);
  m.impl("svd_quant", &svdQuantNpu);
}
