// hifloat8_cast on the NPU (PrivateUse1): the shared host logic with the NPU launcher.
// Built only with CANN; compiled with -fsyntax-only against torch_npu's headers in CI.
// Not validated on hardware.
#include <torch/library.h>

#include <map>
#include <mutex>
#include <utility>

#include "amct_npu.h"
#include "hifloat8_cast_host.h"

extern "C" void amct_hifloat8_cast_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* output,
                                          uint8_t* lut, uint8_t* tiling);

namespace {

using amct::bytePtr;

// Each host LUT (one per mode and table size, alive for the process), copied to each device on
// first use and kept there for the process.
at::Tensor deviceLut(const at::Tensor& host, const at::Tensor& like) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, at::Tensor> cache;  // keyed by the host table
  if (!host.defined()) return at::Tensor();
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(static_cast<int>(like.device().index()), host.data_ptr());
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, amct::uploadTo(host, like)).first;
  return it->second;
}

void npuLaunch(uint32_t blockDim, const at::Tensor& input, const at::Tensor& output, amct_hif8::CastMode,
               const at::Tensor& hostLut, const at::Tensor& tiling) {
  at::Tensor lut = deviceLut(hostLut, input);
  at::Tensor deviceTiling = amct::uploadTo(tiling, input);  // alive until after the launch call
  amct_hifloat8_cast_launch(blockDim, amct::currentNpuStream(), bytePtr(input), bytePtr(output),
                            lut.defined() ? bytePtr(lut) : nullptr, bytePtr(deviceTiling));
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
