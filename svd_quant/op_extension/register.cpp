// svd_quant: schemas of mxfp4_quantize, mxfp4_dequantize and svd_quant (with out= overloads of
// the first two), and their Meta and CPU implementations. On the CPU the quantizer and the
// dequantizer are native code (svd_quant_cpu.cpp); the matmuls of svd_quant are ATen GEMMs (bf16 or fp32,
// svd_quant_host.cpp).
// The AscendC quantizer kernel runs on the CPU through the kernel sim as the private op
// _mxfp4_quantize_emulated (same schema), which the tests hold bit for bit to the native op.
// (The dequantizer has no AscendC kernel.) The fused svd_quant kernel of the NPU (dav-3510 MIX:
// Q(X) on the AIV cores, the three matmuls on the AIC) runs in the sim as _svd_quant_emulated
// (svd_quant's schema) in every build, which the tests hold to the float64 golden. None of the ops is
// differentiable.
#include <torch/library.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "amct_sim_glue.h"
#include "svd_quant_fused_host.h"
#include "svd_quant_host.h"

extern "C" void amct_svd_quant_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* codes,
                                      uint8_t* scales, uint8_t* tiling);
#if defined(AMCT_SIM_3510_KERNELS)
// svd_quant_fused_kernel.cpp compiled against the sim for dav-3510 in every build (in a dav-2201
// build it lives in libamct_svd_quant_sim3510.so: amct_add_operator's KERNEL_3510).
extern "C" void amct_svd_quant_fused_launch(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* wCodes,
                                            uint8_t* wScales, uint8_t* down, uint8_t* up, uint8_t* out,
                                            uint8_t* workspace, uint8_t* tiling);
#endif

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

std::tuple<at::Tensor, at::Tensor> quantizeEmulated(const at::Tensor& input, c10::string_view roundMode) {
  return amct::mxfp4::quantize(input, std::string(roundMode), amct::simPlatformFacts(), simLaunch);
}

std::tuple<at::Tensor, at::Tensor> quantizeCpu(const at::Tensor& input, c10::string_view roundMode) {
  return amct::mxfp4::quantizeNative(input, std::string(roundMode));
}

std::tuple<at::Tensor&, at::Tensor&> quantizeOutCpu(const at::Tensor& input, c10::string_view roundMode,
                                                    at::Tensor& codes, at::Tensor& scales) {
  return amct::mxfp4::quantizeNativeOut(input, std::string(roundMode), codes, scales);
}

// The .out overloads on every other device: the functional op, then a copy; and under
// functionalization: the functional op on the unwrapped inputs, whose results become the outs'
// values (docs/architecture.md, "out= overloads"). Typed outs take the bytes' typed views.
const auto& quantizeOp() {
  static const auto op =
      amct::functionalOp<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, c10::string_view)>(
          "amct::mxfp4_quantize");
  return op;
}
const auto& dequantizeOp() {
  static const auto op =
      amct::functionalOp<at::Tensor(const at::Tensor&, const at::Tensor&, std::optional<at::ScalarType>)>(
          "amct::mxfp4_dequantize");
  return op;
}

std::tuple<at::Tensor&, at::Tensor&> quantizeOutComposite(const at::Tensor& input, c10::string_view roundMode,
                                                          at::Tensor& codes, at::Tensor& scales) {
  auto [c, s] = quantizeOp().call(input, roundMode);
  amct::copyResultToOut("mxfp4_quantize", "codes", codes, c, {at::kFloat4_e2m1fn_x2});
  amct::copyResultToOut("mxfp4_quantize", "scales", scales, s, {at::kFloat8_e8m0fnu});
  return {codes, scales};
}
at::Tensor& dequantizeOutComposite(const at::Tensor& codes, const at::Tensor& scales,
                                   std::optional<at::ScalarType> dtype, at::Tensor& out) {
  amct::copyResultToOut("mxfp4_dequantize", "out", out, dequantizeOp().call(codes, scales, dtype));
  return out;
}

std::tuple<at::Tensor&, at::Tensor&> quantizeOutFunctionalize(const at::Tensor& input, c10::string_view roundMode,
                                                              at::Tensor& codes, at::Tensor& scales) {
  auto [c, s] = amct::callFunctional(quantizeOp(), input, roundMode);
  amct::replaceOut("mxfp4_quantize", "codes", codes, c, {at::kFloat4_e2m1fn_x2});
  amct::replaceOut("mxfp4_quantize", "scales", scales, s, {at::kFloat8_e8m0fnu});
  return {codes, scales};
}
at::Tensor& dequantizeOutFunctionalize(const at::Tensor& codes, const at::Tensor& scales,
                                       std::optional<at::ScalarType> dtype, at::Tensor& out) {
  amct::replaceOut("mxfp4_dequantize", "out", out, amct::callFunctional(dequantizeOp(), codes, scales, dtype));
  return out;
}

std::tuple<at::Tensor, at::Tensor> quantizeMeta(const at::Tensor& input, c10::string_view roundMode) {
  return amct::mxfp4::quantizeMeta(input, std::string(roundMode));
}

#if defined(AMCT_SIM_3510_KERNELS)
// The fused kernel in the sim: inputs and tiling read-only, the output and workspace writable.
void simFusedLaunch(uint32_t blockDim, const amct::mxfp4::FusedArgs& a, const at::Tensor& tiling) {
  amct_sim::GmScope scope{simRegion(a.x, false),       simRegion(a.wCodes, false), simRegion(a.wScales, false),
                          simRegion(a.down, false),    simRegion(a.up, false),     simRegion(a.out, true),
                          simRegion(a.workspace, true), simRegion(tiling, false)};
  amct_svd_quant_fused_launch(blockDim, nullptr, bytePtr(a.x), bytePtr(a.wCodes), bytePtr(a.wScales),
                              bytePtr(a.down), bytePtr(a.up), bytePtr(a.out), bytePtr(a.workspace), bytePtr(tiling));
}
#endif

// The fused kernel is dav-3510 code: it runs on the sim platform as dav-3510 sees it, whatever
// the build's arch. A library built without the dav-3510 sim kernels (not one amct_add_operator
// makes) refuses with the reason.
at::Tensor svdQuantEmulated(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                            const at::Tensor& down, const at::Tensor& up) {
#if defined(AMCT_SIM_3510_KERNELS)
  return amct::mxfp4::svdQuantFused(activation, weights, scales, down, up,
                                    amct::simPlatformFacts(amct::mxfp4::kFusedArch), simFusedLaunch);
#else
  TORCH_CHECK(false, "_svd_quant_emulated: this library was built without the dav-3510 sim kernels "
              "(svd_quant/CMakeLists.txt: amct_add_operator(... KERNEL_3510 ...)), which hold the fused kernel");
#endif
}

at::Tensor svdQuantCpu(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                       const at::Tensor& down, const at::Tensor& up) {
  return amct::mxfp4::svdQuantNative(activation, weights, scales, down, up);
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
  m.def("mxfp4_quantize.out(Tensor input, str round_mode=\"round\", *, Tensor(a!) codes, Tensor(b!) scales) -> "
        "(Tensor(a!) codes, Tensor(b!) scales)",
        {at::Tag::pt2_compliant_tag});
  m.def("_mxfp4_quantize_emulated(Tensor input, str round_mode=\"round\") -> (Tensor codes, Tensor scales)");
  m.def("mxfp4_dequantize(Tensor codes, Tensor scales, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("mxfp4_dequantize.out(Tensor codes, Tensor scales, ScalarType? dtype=None, *, Tensor(a!) out) -> Tensor(a!)",
        {at::Tag::pt2_compliant_tag});
  m.def("svd_quant(Tensor activation, Tensor weights, Tensor scales, Tensor down, Tensor up) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("_svd_quant_emulated(Tensor activation, Tensor weights, Tensor scales, Tensor down, Tensor up) -> Tensor");
}

TORCH_LIBRARY_IMPL(amct, Meta, m) {
  m.impl("mxfp4_quantize", &quantizeMeta);
  m.impl("mxfp4_dequantize", &amct::mxfp4::dequantizeMeta);
  m.impl("svd_quant", &amct::mxfp4::svdQuantMeta);
}

TORCH_LIBRARY_IMPL(amct, CompositeExplicitAutograd, m) {
  m.impl("mxfp4_quantize.out", &quantizeOutComposite);
  m.impl("mxfp4_dequantize.out", &dequantizeOutComposite);
}

TORCH_LIBRARY_IMPL(amct, Functionalize, m) {
  m.impl("mxfp4_quantize.out", &quantizeOutFunctionalize);
  m.impl("mxfp4_dequantize.out", &dequantizeOutFunctionalize);
}

TORCH_LIBRARY_IMPL(amct, CPU, m) {
  m.impl("mxfp4_quantize", &quantizeCpu);
  m.impl("mxfp4_quantize.out", &quantizeOutCpu);
  m.impl("_mxfp4_quantize_emulated", &quantizeEmulated);
  m.impl("mxfp4_dequantize", &amct::mxfp4::dequantize);  // native on the CPU, ATen lookups elsewhere
  m.impl("mxfp4_dequantize.out", &amct::mxfp4::dequantizeOut);
  m.impl("svd_quant", &svdQuantCpu);
  m.impl("_svd_quant_emulated", &svdQuantEmulated);
}
