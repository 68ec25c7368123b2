// hifloat4_cast on the NPU (PrivateUse1): the shared host logic with the NPU launcher.
// Built only with CANN; compiled with -fsyntax-only against torch_npu's headers in CI.
// Not validated on hardware.
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "amct_npu.h"
#include "hifloat4_cast_host.h"

extern "C" void amct_hifloat4_cast_launch(uint32_t blockDim, void* stream, uint8_t* in0, uint8_t* in1, uint8_t* out0,
                                          uint8_t* out1, uint8_t* tiling);

namespace {

using amct::bytePtr;

uint8_t* ptrOrNull(const at::Tensor& t) { return t.defined() ? bytePtr(t) : nullptr; }

void npuLaunch(uint32_t blockDim, const at::Tensor& in0, const at::Tensor& in1, const at::Tensor& out0,
               const at::Tensor& out1, const at::Tensor& tiling) {
  at::Tensor tilingDev = amct::deviceTiling(tiling, in0);  // cached per tiling and device
  amct_hifloat4_cast_launch(blockDim, amct::currentNpuStream(), ptrOrNull(in0), ptrOrNull(in1), ptrOrNull(out0),
                            ptrOrNull(out1), bytePtr(tilingDev));
}

at::Tensor fakeQuantNpu(const at::Tensor& input, int64_t qdim) {
  return amct::hif4::fakeQuant(input, qdim, amct::npuPlatformFacts(), npuLaunch);
}

std::tuple<at::Tensor, at::Tensor> packNpu(const at::Tensor& input) {
  return amct::hif4::pack(input, amct::npuPlatformFacts(), npuLaunch);
}

at::Tensor unpackNpu(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype) {
  return amct::hif4::unpack(scale, value, dtype, amct::npuPlatformFacts(), npuLaunch);
}

}  // namespace

TORCH_LIBRARY_IMPL(amct, PrivateUse1, m) {
  m.impl("hifloat4_fake_quant", &fakeQuantNpu);
  m.impl("hifloat4_pack", &packNpu);
  m.impl("hifloat4_unpack", &unpackNpu);
}
