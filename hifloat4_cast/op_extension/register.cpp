// hifloat4_cast: schemas, and the Meta and CPU implementations. The CPU implementation runs the
// AscendC kernel through the kernel sim; autograd (straight-through for fake-quant) is registered
// once for all devices by the Python package (torch.library.register_autograd).
#include <torch/library.h>

#include <optional>
#include <tuple>
#include <vector>

#include "amct_sim_glue.h"
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

at::Tensor fakeQuantCpu(const at::Tensor& input, int64_t qdim) {
  return amct::hif4::fakeQuant(input, qdim, amct::simPlatformFacts(), simLaunch);
}

std::tuple<at::Tensor, at::Tensor> packCpu(const at::Tensor& input) {
  return amct::hif4::pack(input, amct::simPlatformFacts(), simLaunch);
}

at::Tensor unpackCpu(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype) {
  return amct::hif4::unpack(scale, value, dtype, amct::simPlatformFacts(), simLaunch);
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

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("_hifloat4_cast_tiling(int mode, int dtype, int blocks) -> int[]", &tilingForTest);
  m.def("hifloat4_fake_quant(Tensor input, int qdim=-1) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("hifloat4_pack(Tensor input) -> (Tensor scale, Tensor value)", {at::Tag::pt2_compliant_tag});
  m.def("hifloat4_unpack(Tensor scale, Tensor value, ScalarType? dtype=None) -> Tensor", {at::Tag::pt2_compliant_tag});
}

TORCH_LIBRARY_IMPL(amct, Meta, m) {
  m.impl("hifloat4_fake_quant", &amct::hif4::fakeQuantMeta);
  m.impl("hifloat4_pack", &amct::hif4::packMeta);
  m.impl("hifloat4_unpack", &amct::hif4::unpackMeta);
}

TORCH_LIBRARY_IMPL(amct, CPU, m) {
  m.impl("hifloat4_fake_quant", &fakeQuantCpu);
  m.impl("hifloat4_pack", &packCpu);
  m.impl("hifloat4_unpack", &unpackCpu);
}
