// hifloat4_cast: schemas (each op with an ATen-style .out overload), and the Meta and CPU
// implementations. The CPU ops are native (hifloat4_cast_native.cpp); the AscendC kernel, which
// is what the NPU runs, runs on the CPU through the kernel sim as the private ops
// _hifloat4_{fake_quant,pack,unpack}_emulated (the functional schemas, CPU only), which the tests
// hold bit for bit to the CPU ops. Other devices get .out as the functional op plus a copy.
// Autograd (straight-through for fake-quant) is registered here once for all devices.
#include <torch/library.h>

#include <optional>
#include <tuple>
#include <vector>

#include "amct_sim_glue.h"
#include "amct_straight_through.h"
#include "hifloat4_cast_host.h"

extern "C" void amct_hifloat4_cast_launch(uint32_t blockDim, void* stream, uint8_t* in0, uint8_t* in1, uint8_t* out0,
                                          uint8_t* out1, uint8_t* tiling);

namespace {

using amct::bytePtr;
using amct::simRegion;

uint8_t* ptrOrNull(const at::Tensor& t) { return t.defined() ? bytePtr(t) : nullptr; }

// Registers every tensor argument (inputs and tiling read-only, outputs writable) and launches.
void simLaunch(uint32_t blockDim, const at::Tensor& in0, const at::Tensor& in1, const at::Tensor& out0,
               const at::Tensor& out1, const at::Tensor& tiling) {
  for (const at::Tensor* out : {&out0, &out1}) {
    if (out->defined()) amct::adviseHugePages(*out);
  }
  amct_sim::GmScope scope{simRegion(in0, false), simRegion(in1, false), simRegion(out0, true),
                          simRegion(out1, true), simRegion(tiling, false)};
  amct_hifloat4_cast_launch(blockDim, nullptr, ptrOrNull(in0), ptrOrNull(in1), ptrOrNull(out0), ptrOrNull(out1),
                            bytePtr(tiling));
}

at::Tensor fakeQuantEmulated(const at::Tensor& input, int64_t qdim) {
  return amct::hif4::fakeQuant(input, qdim, amct::simPlatformFacts(), simLaunch);
}

std::tuple<at::Tensor, at::Tensor> packEmulated(const at::Tensor& input) {
  return amct::hif4::pack(input, amct::simPlatformFacts(), simLaunch);
}

at::Tensor unpackEmulated(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype) {
  return amct::hif4::unpack(scale, value, dtype, amct::simPlatformFacts(), simLaunch);
}

using amct::functionalOp;

// The .out overloads on every other device: the functional op, then a copy; and under
// functionalization: the functional op on the unwrapped inputs, whose results become the outs'
// values (docs/architecture.md, "out= overloads").
const auto& fakeQuantOp() {
  static const auto op = functionalOp<at::Tensor(const at::Tensor&, int64_t)>("amct::hifloat4_fake_quant");
  return op;
}
const auto& packOp() {
  static const auto op = functionalOp<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&)>("amct::hifloat4_pack");
  return op;
}
const auto& unpackOp() {
  static const auto op =
      functionalOp<at::Tensor(const at::Tensor&, const at::Tensor&, std::optional<at::ScalarType>)>(
          "amct::hifloat4_unpack");
  return op;
}

at::Tensor& fakeQuantOutComposite(const at::Tensor& input, int64_t qdim, at::Tensor& out) {
  amct::copyResultToOut("hifloat4_fake_quant", "out", out, fakeQuantOp().call(input, qdim));
  return out;
}
std::tuple<at::Tensor&, at::Tensor&> packOutComposite(const at::Tensor& input, at::Tensor& scale, at::Tensor& value) {
  auto [s, v] = packOp().call(input);
  amct::copyResultToOut("hifloat4_pack", "scale", scale, s);
  amct::copyResultToOut("hifloat4_pack", "value", value, v);
  return {scale, value};
}
at::Tensor& unpackOutComposite(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype,
                               at::Tensor& out) {
  amct::copyResultToOut("hifloat4_unpack", "out", out, unpackOp().call(scale, value, dtype));
  return out;
}

at::Tensor& fakeQuantOutFunctionalize(const at::Tensor& input, int64_t qdim, at::Tensor& out) {
  amct::replaceOut("hifloat4_fake_quant", "out", out, amct::callFunctional(fakeQuantOp(), input, qdim));
  return out;
}
std::tuple<at::Tensor&, at::Tensor&> packOutFunctionalize(const at::Tensor& input, at::Tensor& scale,
                                                          at::Tensor& value) {
  auto [s, v] = amct::callFunctional(packOp(), input);
  amct::replaceOut("hifloat4_pack", "scale", scale, s);
  amct::replaceOut("hifloat4_pack", "value", value, v);
  return {scale, value};
}
at::Tensor& unpackOutFunctionalize(const at::Tensor& scale, const at::Tensor& value,
                                   std::optional<at::ScalarType> dtype, at::Tensor& out) {
  amct::replaceOut("hifloat4_unpack", "out", out, amct::callFunctional(unpackOp(), scale, value, dtype));
  return out;
}

// Test hook: the tiling the CPU path would use for (mode, dtype, blocks) on the current sim
// platform, as [blockNum, mode, dtype, tileBlocks, totalBlocks, blocksPerCore, blocksLastCore,
// ubBudget, ubUsed]. dtype: 0 float16, 1 bfloat16, 2 float32.
std::vector<int64_t> tilingForTest(int64_t mode, int64_t dtype, int64_t blocks) {
  TORCH_CHECK(mode >= 0 && mode < amct_hif4::kModeCount, "_hifloat4_cast_tiling: mode must be in [0, ",
              static_cast<int>(amct_hif4::kModeCount), "), got ", mode);
  TORCH_CHECK(dtype >= 0 && dtype < amct_hif4::kDtypeCount, "_hifloat4_cast_tiling: dtype must be in [0, ",
              static_cast<int>(amct_hif4::kDtypeCount), "), got ", dtype);
  TORCH_CHECK(blocks > 0, "_hifloat4_cast_tiling: blocks must be positive, got ", blocks);
  amct_hif4::Hif4Tiling t =
      amct::hif4::computeTiling(static_cast<amct_hif4::Hif4Mode>(mode), static_cast<amct_hif4::Hif4Dtype>(dtype),
                                static_cast<uint64_t>(blocks), amct::simPlatformFacts());
  return {t.blockNum,
          t.mode,
          t.dtype,
          t.tileBlocks,
          static_cast<int64_t>(t.totalBlocks),
          static_cast<int64_t>(t.blocksPerCore),
          static_cast<int64_t>(t.blocksLastCore),
          t.ubBudget,
          t.ubUsed};
}

// fakeQuantOp() for the straight-through autograd kernel (amct_straight_through.h).
struct FakeQuantForward {
  static at::Tensor call(const at::Tensor& input, int64_t qdim) { return fakeQuantOp().call(input, qdim); }
};

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("_hifloat4_cast_tiling(int mode, int dtype, int blocks) -> int[]", &tilingForTest);
  // flexible_layout: any input strides are fine (outputs are contiguous).
  m.def("hifloat4_fake_quant(Tensor input, int qdim=-1) -> Tensor",
        {at::Tag::pt2_compliant_tag, at::Tag::flexible_layout});
  m.def("hifloat4_pack(Tensor input) -> (Tensor scale, Tensor value)",
        {at::Tag::pt2_compliant_tag, at::Tag::flexible_layout});
  m.def("hifloat4_unpack(Tensor scale, Tensor value, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag, at::Tag::flexible_layout});
  // The .out overloads are not tagged `out` (docs/architecture.md, "out= overloads").
  m.def("hifloat4_fake_quant.out(Tensor input, int qdim=-1, *, Tensor(a!) out) -> Tensor(a!)",
        {at::Tag::pt2_compliant_tag});
  m.def("hifloat4_pack.out(Tensor input, *, Tensor(a!) scale, Tensor(b!) value) -> (Tensor(a!) scale, Tensor(b!) value)",
        {at::Tag::pt2_compliant_tag});
  m.def("hifloat4_unpack.out(Tensor scale, Tensor value, ScalarType? dtype=None, *, Tensor(a!) out) -> Tensor(a!)",
        {at::Tag::pt2_compliant_tag});
  m.def("_hifloat4_fake_quant_emulated(Tensor input, int qdim=-1) -> Tensor");
  m.def("_hifloat4_pack_emulated(Tensor input) -> (Tensor scale, Tensor value)");
  m.def("_hifloat4_unpack_emulated(Tensor scale, Tensor value, ScalarType? dtype=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(amct, Meta, m) {
  m.impl("hifloat4_fake_quant", &amct::hif4::fakeQuantMeta);
  m.impl("hifloat4_pack", &amct::hif4::packMeta);
  m.impl("hifloat4_unpack", &amct::hif4::unpackMeta);
}

TORCH_LIBRARY_IMPL(amct, CPU, m) {
  m.impl("hifloat4_fake_quant", &amct::hif4::fakeQuantNative);
  m.impl("hifloat4_pack", &amct::hif4::packNative);
  m.impl("hifloat4_unpack", &amct::hif4::unpackNative);
  m.impl("hifloat4_fake_quant.out", &amct::hif4::fakeQuantNativeOut);
  m.impl("hifloat4_pack.out", &amct::hif4::packNativeOut);
  m.impl("hifloat4_unpack.out", &amct::hif4::unpackNativeOut);
  m.impl("_hifloat4_fake_quant_emulated", &fakeQuantEmulated);
  m.impl("_hifloat4_pack_emulated", &packEmulated);
  m.impl("_hifloat4_unpack_emulated", &unpackEmulated);
}

TORCH_LIBRARY_IMPL(amct, Autograd, m) {
  m.impl("hifloat4_fake_quant", &amct::straightThroughAutograd<FakeQuantForward, int64_t>);
}

TORCH_LIBRARY_IMPL(amct, CompositeExplicitAutograd, m) {
  m.impl("hifloat4_fake_quant.out", &fakeQuantOutComposite);
  m.impl("hifloat4_pack.out", &packOutComposite);
  m.impl("hifloat4_unpack.out", &unpackOutComposite);
}

TORCH_LIBRARY_IMPL(amct, Functionalize, m) {
  m.impl("hifloat4_fake_quant.out", &fakeQuantOutFunctionalize);
  m.impl("hifloat4_pack.out", &packOutFunctionalize);
  m.impl("hifloat4_unpack.out", &unpackOutFunctionalize);
}
