// hifloat8_cast on the NPU (PrivateUse1): the shared host logic with the NPU launcher.
// Built only with CANN; compiled with -fsyntax-only against torch_npu's headers in CI.
// Not validated on hardware.
#include <torch/library.h>

#include "amct_npu.h"
#include "hifloat8_cast_host.h"

extern "C" void amct_hifloat8_cast_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* output,
                                          uint8_t* lut, uint8_t* tiling);

namespace {

using amct::bytePtr;

void npuLaunch(uint32_t blockDim, const at::Tensor& input, const at::Tensor& output, amct_hif8::CastMode,
               const at::Tensor& hostLut, const at::Tensor& tiling) {
  // Each host LUT (one per mode and table size) lives for the process: copied once per device.
  at::Tensor lut = hostLut.defined() ? amct::deviceConstant(hostLut, input) : at::Tensor();
  at::Tensor tilingDev = amct::deviceTiling(tiling, input);  // cached per tiling and device
  amct_hifloat8_cast_launch(blockDim, amct::currentNpuStream(), bytePtr(input), bytePtr(output),
                            lut.defined() ? bytePtr(lut) : nullptr, bytePtr(tilingDev));
}

at::Tensor encodeNpu(const at::Tensor& input) {
  return amct::hif8::encode(input, amct::npuPlatformFacts(), npuLaunch);
}

at::Tensor decodeNpu(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return amct::hif8::decode(input, dtype, amct::npuPlatformFacts(), npuLaunch);
}

at::Tensor fakeQuantNpu(const at::Tensor& input) {
  return amct::hif8::fakeQuant(input, amct::npuPlatformFacts(), npuLaunch);
}

}  // namespace

TORCH_LIBRARY_IMPL(amct, PrivateUse1, m) {
  m.impl("encode_to_hifloat8", &encodeNpu);
  m.impl("decode_from_hifloat8", &decodeNpu);
  m.impl("hifloat8_fake_quant", &fakeQuantNpu);
}
