// hifloat8_cast: schemas, and the Meta and CPU implementations. The CPU implementation runs
// the AscendC kernel through the kernel sim; autograd (straight-through for fake-quant) is
// registered once for all devices by the Python package (torch.library.register_autograd).
#include <torch/library.h>

#include <optional>

#include "amct_sim_host.h"
#include "hifloat8_cast_host.h"

extern "C" void amct_hifloat8_cast_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* output,
                                          uint8_t* lut, uint8_t* tiling);

namespace {

using amct::bytePtr;
using amct::byteSize;

void simLaunch(uint32_t blockDim, const at::Tensor& input, const at::Tensor& output, amct_hif8::CastMode,
               const at::Tensor& lut, const at::Tensor& tiling) {
  amct_sim::GmScope data{{input.data_ptr(), byteSize(input), false},
                         {output.data_ptr(), byteSize(output), true},
                         {tiling.data_ptr(), byteSize(tiling), false}};
  std::optional<amct_sim::GmScope> table;
  if (lut.defined()) table.emplace(std::initializer_list<amct_sim::GmRegion>{{lut.data_ptr(), byteSize(lut), false}});
  amct_hifloat8_cast_launch(blockDim, nullptr, bytePtr(input), bytePtr(output),
                            lut.defined() ? bytePtr(lut) : nullptr, bytePtr(tiling));
}

at::Tensor encodeCpu(const at::Tensor& input) {
  return amct::hif8::encode(input, amct::simPlatformFacts(), simLaunch);
}

at::Tensor decodeCpu(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return amct::hif8::decode(input, dtype, amct::simPlatformFacts(), simLaunch);
}

at::Tensor fakeQuantCpu(const at::Tensor& input) {
  return amct::hif8::fakeQuant(input, amct::simPlatformFacts(), simLaunch);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("encode_to_hifloat8(Tensor input) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("decode_from_hifloat8(Tensor input, ScalarType? dtype=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("hifloat8_fake_quant(Tensor input) -> Tensor", {at::Tag::pt2_compliant_tag});
}

TORCH_LIBRARY_IMPL(amct, Meta, m) {
  m.impl("encode_to_hifloat8", &amct::hif8::encodeMeta);
  m.impl("decode_from_hifloat8", &amct::hif8::decodeMeta);
  m.impl("hifloat8_fake_quant", &amct::hif8::fakeQuantMeta);
}

TORCH_LIBRARY_IMPL(amct, CPU, m) {
  m.impl("encode_to_hifloat8", &encodeCpu);
  m.impl("decode_from_hifloat8", &decodeCpu);
  m.impl("hifloat8_fake_quant", &fakeQuantCpu);
}
