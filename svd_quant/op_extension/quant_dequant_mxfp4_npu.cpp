// quant_dequant_mxfp4 on the NPU (PrivateUse1): the shared host logic with the NPU launcher of
// the AscendC kernel. Built only with CANN; compiled with -fsyntax-only against torch_npu's
// headers in CI. Not validated on hardware.
#include <torch/library.h>

#include "amct_npu.h"
#include "quant_dequant_mxfp4_host.h"

extern "C" void amct_quant_dequant_mxfp4_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* output,
                                                uint8_t* tiling);

namespace {

using amct::bytePtr;

void npuLaunch(uint32_t blockDim, const at::Tensor& input, const at::Tensor& output, const at::Tensor& tiling) {
  at::Tensor tilingDev = amct::deviceTiling(tiling, input);  // cached per tiling and device
  amct_quant_dequant_mxfp4_launch(blockDim, amct::currentNpuStream(), bytePtr(input), bytePtr(output),
                                  bytePtr(tilingDev));
}

at::Tensor lastDimNpu(const at::Tensor& x, int64_t blockSize, double invScaleFactorScale) {
  return amct::qdq::quantDequantKernel(x, blockSize, invScaleFactorScale, amct::npuPlatformFacts(), npuLaunch);
}

// The upstream schema: the flat fp32 tensor's checks, then the same kernel on it as one row.
at::Tensor flatNpu(const at::Tensor& x, double invScaleFactorScale) {
  amct::qdq::checkFlat(x, invScaleFactorScale);
  if (x.numel() == 0) return at::empty_like(x, at::MemoryFormat::Contiguous);
  return lastDimNpu(x.reshape({-1}), 32, invScaleFactorScale).view(x.sizes());
}

}  // namespace

TORCH_LIBRARY_IMPL(amct, PrivateUse1, m) {
  m.impl("quant_dequant_mxfp4", &flatNpu);
  m.impl("quant_dequant_mxfp4.last_dim", &lastDimNpu);
}
