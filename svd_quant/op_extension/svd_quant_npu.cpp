// svd_quant on the NPU (PrivateUse1): the shared host logic with the NPU launcher of the
// quantizer kernel and torch_npu's bf16 matmuls. Built only with CANN; compiled with
// -fsyntax-only against torch_npu's headers in CI. Not validated on hardware.
#include <torch/library.h>

#include <cstring>
#include <optional>
#include <string>
#include <tuple>

#include "acl/acl.h"
#include "amct_npu.h"
#include "svd_quant_host.h"

#ifndef AMCT_SOC_NAME
#define AMCT_SOC_NAME "unknown"  // the CMake build always defines it; the syntax check does not
#endif

extern "C" void amct_svd_quant_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* codes,
                                      uint8_t* scales, uint8_t* tiling);

namespace {

using amct::bytePtr;

void npuLaunch(uint32_t blockDim, const at::Tensor& input, const at::Tensor& codes, const at::Tensor& scales,
               const at::Tensor& tiling) {
  at::Tensor tilingDev = amct::deviceTiling(tiling, input);  // cached per tiling and device
  amct_svd_quant_launch(blockDim, amct::currentNpuStream(), bytePtr(input), bytePtr(codes), bytePtr(scales),
                        bytePtr(tilingDev));
}

// V7: svd_quant's NPU path targets ascend950 only (built for dav-3510, running on an Ascend950).
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
  // V1-V6 first (the same messages as on the CPU), then V7.
  amct::mxfp4::checkSvdQuant(activation, weights, scales, down, up);
  checkAscend950();
  return amct::mxfp4::svdQuant(activation, weights, scales, down, up, amct::mxfp4::GemmPrecision::kBf16,
                               amct::npuPlatformFacts(), npuLaunch);
}

}  // namespace

TORCH_LIBRARY_IMPL(amct, PrivateUse1, m) {
  m.impl("mxfp4_quantize", &quantizeNpu);
  m.impl("mxfp4_dequantize", &amct::mxfp4::dequantize);
  m.impl("svd_quant", &svdQuantNpu);
}
