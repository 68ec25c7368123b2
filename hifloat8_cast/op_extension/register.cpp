// hifloat8_cast: schemas, and the Meta and CPU implementations. On the CPU the ops (and their
// out= variants) are native C++ (hifloat8_cast_native.cpp); the AscendC kernel runs through the
// kernel sim as the private ops _<op>_emulated (same schemas, CPU only), which the tests hold
// bit for bit to the native ops. Autograd (straight-through for fake-quant) is registered here once
// for all devices (amct_straight_through.h).
#include <torch/library.h>

#include <optional>
#include <vector>

#include "amct_sim_glue.h"
#include "amct_straight_through.h"
#include "hifloat8_cast_host.h"

extern "C" void amct_hifloat8_cast_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* output,
                                          uint8_t* lut, uint8_t* tiling);

namespace {

using amct::bytePtr;
using amct::simRegion;

void simLaunch(uint32_t blockDim, const at::Tensor& input, const at::Tensor& output, amct_hif8::CastMode,
               const at::Tensor& lut, const at::Tensor& tiling) {
  amct::adviseHugePages(output);
  amct_sim::GmScope scope{simRegion(input, false), simRegion(output, true), simRegion(tiling, false),
                          simRegion(lut, false)};
  amct_hifloat8_cast_launch(blockDim, nullptr, bytePtr(input), bytePtr(output),
                            lut.defined() ? bytePtr(lut) : nullptr, bytePtr(tiling));
}

// The AscendC kernel through the sim: the _<op>_emulated ops.
at::Tensor encodeCpu(const at::Tensor& input) {
  return amct::hif8::encode(input, amct::simPlatformFacts(), simLaunch);
}

at::Tensor decodeCpu(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return amct::hif8::decode(input, dtype, amct::simPlatformFacts(), simLaunch);
}

at::Tensor fakeQuantCpu(const at::Tensor& input) {
  return amct::hif8::fakeQuant(input, amct::simPlatformFacts(), simLaunch);
}

// Test hook: the tiling the CPU path would use for (cast_mode, numel) on the current sim
// platform, as [blockNum, castMode, totalLength, numPerCore, tailNumLastCore, tileLength,
// ubBudget, encLutBytes, decLutBytes].
std::vector<int64_t> tilingForTest(int64_t castMode, int64_t numel) {
  TORCH_CHECK(castMode >= 0 && castMode < amct_hif8::kCastModeCount, "_hifloat8_cast_tiling: cast_mode must be in [0, ",
              static_cast<int>(amct_hif8::kCastModeCount), "), got ", castMode);
  TORCH_CHECK(numel > 0, "_hifloat8_cast_tiling: numel must be positive, got ", numel);
  amct_hif8::Hif8CastTiling t = amct::hif8::computeTiling(static_cast<amct_hif8::CastMode>(castMode),
                                                          static_cast<uint64_t>(numel), amct::simPlatformFacts());
  return {t.blockNum, t.castMode, static_cast<int64_t>(t.totalLength), static_cast<int64_t>(t.numPerCore),
          static_cast<int64_t>(t.tailNumLastCore), t.tileLength, t.ubBudget, t.encLutBytes, t.decLutBytes};
}

// The .out overloads on every other device: the functional op, then a copy; and under
// functionalization: the functional op on the unwrapped input, whose result becomes out's value
// (docs/architecture.md, "out= overloads").
const auto& encodeOp() {
  static const auto op = amct::functionalOp<at::Tensor(const at::Tensor&)>("amct::encode_to_hifloat8");
  return op;
}
const auto& decodeOp() {
  static const auto op =
      amct::functionalOp<at::Tensor(const at::Tensor&, std::optional<at::ScalarType>)>("amct::decode_from_hifloat8");
  return op;
}
const auto& fakeQuantOp() {
  static const auto op = amct::functionalOp<at::Tensor(const at::Tensor&)>("amct::hifloat8_fake_quant");
  return op;
}

// fakeQuantOp() for the straight-through autograd kernel (amct_straight_through.h).
struct FakeQuantForward {
  static at::Tensor call(const at::Tensor& input) { return fakeQuantOp().call(input); }
};

at::Tensor& encodeOutComposite(const at::Tensor& input, at::Tensor& out) {
  amct::copyResultToOut("encode_to_hifloat8", "out", out, encodeOp().call(input));
  return out;
}
at::Tensor& decodeOutComposite(const at::Tensor& input, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  amct::copyResultToOut("decode_from_hifloat8", "out", out, decodeOp().call(input, dtype));
  return out;
}
at::Tensor& fakeQuantOutComposite(const at::Tensor& input, at::Tensor& out) {
  amct::copyResultToOut("hifloat8_fake_quant", "out", out, fakeQuantOp().call(input));
  return out;
}

at::Tensor& encodeOutFunctionalize(const at::Tensor& input, at::Tensor& out) {
  amct::replaceOut("encode_to_hifloat8", "out", out, amct::callFunctional(encodeOp(), input));
  return out;
}
at::Tensor& decodeOutFunctionalize(const at::Tensor& input, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  amct::replaceOut("decode_from_hifloat8", "out", out, amct::callFunctional(decodeOp(), input, dtype));
  return out;
}
at::Tensor& fakeQuantOutFunctionalize(const at::Tensor& input, at::Tensor& out) {
  amct::replaceOut("hifloat8_fake_quant", "out", out, amct::callFunctional(fakeQuantOp(), input));
  return out;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("_hifloat8_cast_tiling(int cast_mode, int numel) -> int[]", &tilingForTest);
  m.def("encode_to_hifloat8(Tensor input) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("encode_to_hifloat8.out(Tensor input, *, Tensor(a!) out) -> Tensor(a!)", {at::Tag::pt2_compliant_tag});
  m.def("decode_from_hifloat8(Tensor input, ScalarType? dtype=None) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("decode_from_hifloat8.out(Tensor input, ScalarType? dtype=None, *, Tensor(a!) out) -> Tensor(a!)",
        {at::Tag::pt2_compliant_tag});
  m.def("hifloat8_fake_quant(Tensor input) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("hifloat8_fake_quant.out(Tensor input, *, Tensor(a!) out) -> Tensor(a!)", {at::Tag::pt2_compliant_tag});
  m.def("_encode_to_hifloat8_emulated(Tensor input) -> Tensor");
  m.def("_decode_from_hifloat8_emulated(Tensor input, ScalarType? dtype=None) -> Tensor");
  m.def("_hifloat8_fake_quant_emulated(Tensor input) -> Tensor");
}

TORCH_LIBRARY_IMPL(amct, Meta, m) {
  m.impl("encode_to_hifloat8", &amct::hif8::encodeMeta);
  m.impl("decode_from_hifloat8", &amct::hif8::decodeMeta);
  m.impl("hifloat8_fake_quant", &amct::hif8::fakeQuantMeta);
}

TORCH_LIBRARY_IMPL(amct, CompositeExplicitAutograd, m) {
  m.impl("encode_to_hifloat8.out", &encodeOutComposite);
  m.impl("decode_from_hifloat8.out", &decodeOutComposite);
  m.impl("hifloat8_fake_quant.out", &fakeQuantOutComposite);
}

TORCH_LIBRARY_IMPL(amct, Autograd, m) {
  m.impl("hifloat8_fake_quant", &amct::straightThroughAutograd<FakeQuantForward>);
}

TORCH_LIBRARY_IMPL(amct, Functionalize, m) {
  m.impl("encode_to_hifloat8.out", &encodeOutFunctionalize);
  m.impl("decode_from_hifloat8.out", &decodeOutFunctionalize);
  m.impl("hifloat8_fake_quant.out", &fakeQuantOutFunctionalize);
}

TORCH_LIBRARY_IMPL(amct, CPU, m) {
  m.impl("encode_to_hifloat8", &amct::hif8::encodeNative);
  m.impl("encode_to_hifloat8.out", &amct::hif8::encodeNativeOut);
  m.impl("decode_from_hifloat8", &amct::hif8::decodeNative);
  m.impl("decode_from_hifloat8.out", &amct::hif8::decodeNativeOut);
  m.impl("hifloat8_fake_quant", &amct::hif8::fakeQuantNative);
  m.impl("hifloat8_fake_quant.out", &amct::hif8::fakeQuantNativeOut);
  m.impl("_encode_to_hifloat8_emulated", &encodeCpu);
  m.impl("_decode_from_hifloat8_emulated", &decodeCpu);
  m.impl("_hifloat8_fake_quant_emulated", &fakeQuantCpu);
}
