// svd_quant: schemas of mxfp4_quantize, mxfp4_dequantize and svd_quant, and their Meta and CPU
// implementations. The CPU quantizer runs the AscendC kernel through the kernel sim; the matmuls
// of svd_quant are ATen fp32 GEMMs (spec A8). None of the ops is differentiable.
#include <torch/library.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "amct_sim_glue.h"
#include "svd_quant_host.h"

extern "C" void amct_svd_quant_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* codes,
                                      uint8_t* scales, uint8_t* tiling);

namespace {

using amct::bytePtr;
using amct::simRegion;

// Registers every tensor argument (input and tiling read-only, outputs writable) and launches.
void simLaunch(uint32_t blockDim, const at::Tensor& input, const at::Tensor& codes, const at::Tensor& scales,
               const at::Tensor& tiling) {
  amct::adviseHugePages(codes);
  amct_sim::GmScope scope{simRegion(input, false), simRegion(codes, true), simRegion(scales, true),
                          simRegion(tiling, false)};
  amct_svd_quant_launch(blockDim, nullptr, bytePtr(input), bytePtr(codes), bytePtr(scales), bytePtr(tiling));
}

std::tuple<at::Tensor, at::Tensor> quantizeCpu(const at::Tensor& input, c10::string_view roundMode) {
  return amct::mxfp4::quantize(input, std::string(roundMode), amct::simPlatformFacts(), simLaunch);
}

std::tuple<at::Tensor, at::Tensor> quantizeMeta(const at::Tensor& input, c10::string_view roundMode) {
  return amct::mxfp4::quantizeMeta(input, std::string(roundMode));
}

at::Tensor svdQuantCpu(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                       const at::Tensor& down, const at::Tensor& up) {
  return amct::mxfp4::svdQuant(activation, weights, scales, down, up, amct::mxfp4::GemmPrecision::kFp32,
                               amct::simPlatformFacts(), simLaunch);
}

// Test hook: the quantizer tiling the CPU path would use for (dtype, blocks) on the current sim
// platform, as [blockNum, dtype, roundMode, tileBlocks, totalBlocks, blocksPerCore,
// blocksLastCore, ubBudget, ubUsed]. dtype: 0 float16, 1 bfloat16, 2 float32.
std::vector<int64_t> tilingForTest(int64_t dtype, int64_t blocks) {
  TORCH_CHECK(dtype >= 0 && dtype < amct_mxfp4::kDtypeCount, "_svd_quant_tiling: dtype must be in [0, ",
              static_cast<int>(amct_mxfp4::kDtypeCount), "), got ", dtype);
  TORCH_CHECK(blocks > 0, "_svd_quant_tiling: blocks must be positive, got ", blocks);
  amct_mxfp4::Mxfp4Tiling t = amct::mxfp4::computeTiling(static_cast<amct_mxfp4::Mxfp4Dtype>(dtype),
                                                         amct_mxfp4::kRound, static_cast<uint64_t>(blocks),
                                                         amct::simPlatformFacts());
  return {t.blockNum,
          t.dtype,
          t.roundMode,
          t.tileBlocks,
          static_cast<int64_t>(t.totalBlocks),
          static_cast<int64_t>(t.blocksPerCore),
          static_cast<int64_t>(t.blocksLastCore),
          t.ubBudget,
          t.ubUsed};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("_svd_quant_tiling(int dtype, int blocks) -> int[]", &tilingForTest);
  m.def("mxfp4_quantize(Tensor input, str round_mode=\"round\") -> (Tensor codes, Tensor scales)",
        {at::Tag::pt2_compliant_tag});
  m.def("mxfp4_dequantize(Tensor codes, Tensor scales, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("svd_quant(Tensor activation, Tensor weights, Tensor scales, Tensor down, Tensor up) -> Tensor",
        {at::Tag::pt2_compliant_tag});
}

TORCH_LIBRARY_IMPL(amct, Meta, m) {
  m.impl("mxfp4_quantize", &quantizeMeta);
  m.impl("mxfp4_dequantize", &amct::mxfp4::dequantizeMeta);
  m.impl("svd_quant", &amct::mxfp4::svdQuantMeta);
}

TORCH_LIBRARY_IMPL(amct, CPU, m) {
  m.impl("mxfp4_quantize", &quantizeCpu);
  m.impl("mxfp4_dequantize", &amct::mxfp4::dequantize);  // ATen table lookups, device-agnostic
  m.impl("svd_quant", &svdQuantCpu);
}
