// quant_dequant_mxfp4: schemas, and the Meta and CPU implementations. The CPU implementation is
// the native kernel (quant_dequant_mxfp4_cpu.cpp); the AscendC kernel runs through the kernel sim
// as the private op _quant_dequant_mxfp4_emulated (the last_dim schema). Autograd (straight-through)
// is registered here once for all devices (amct_straight_through.h).
#include <torch/library.h>

#include "amct_sim_glue.h"
#include "amct_straight_through.h"
#include "quant_dequant_mxfp4_host.h"

extern "C" void amct_quant_dequant_mxfp4_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* output,
                                                uint8_t* tiling);

namespace {

using amct::bytePtr;
using amct::simRegion;

void simLaunch(uint32_t blockDim, const at::Tensor& input, const at::Tensor& output, const at::Tensor& tiling) {
  amct::adviseHugePages(output);
  amct_sim::GmScope scope{simRegion(input, false), simRegion(output, true), simRegion(tiling, false)};
  amct_quant_dequant_mxfp4_launch(blockDim, nullptr, bytePtr(input), bytePtr(output), bytePtr(tiling));
}

at::Tensor emulated(const at::Tensor& x, int64_t blockSize, double invScaleFactorScale) {
  return amct::qdq::quantDequantKernel(x, blockSize, invScaleFactorScale, amct::simPlatformFacts(), simLaunch);
}

// The two public overloads, called below autograd by the straight-through kernels.
struct FlatForward {
  static at::Tensor call(const at::Tensor& x, double invScaleFactorScale) {
    static const auto op = amct::functionalOp<at::Tensor(const at::Tensor&, double)>("amct::quant_dequant_mxfp4");
    return op.call(x, invScaleFactorScale);
  }
};
struct LastDimForward {
  static at::Tensor call(const at::Tensor& x, int64_t blockSize, double invScaleFactorScale) {
    static const auto op =
        amct::functionalOp<at::Tensor(const at::Tensor&, int64_t, double)>("amct::quant_dequant_mxfp4", "last_dim");
    return op.call(x, blockSize, invScaleFactorScale);
  }
};

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("quant_dequant_mxfp4(Tensor x, float inv_scale_factor_scale) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("quant_dequant_mxfp4.last_dim(Tensor x, int block_size, float inv_scale_factor_scale) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  m.def("_quant_dequant_mxfp4_emulated(Tensor x, int block_size, float inv_scale_factor_scale) -> Tensor");
}

TORCH_LIBRARY_IMPL(amct, Meta, m) {
  m.impl("quant_dequant_mxfp4", &amct::qdq::quantDequantFlatMeta);
  m.impl("quant_dequant_mxfp4.last_dim", &amct::qdq::quantDequantLastDimMeta);
  m.impl("_quant_dequant_mxfp4_emulated", &amct::qdq::quantDequantLastDimMeta);
}

TORCH_LIBRARY_IMPL(amct, CPU, m) {
  m.impl("quant_dequant_mxfp4", &amct::qdq::quantDequantFlat);
  m.impl("quant_dequant_mxfp4.last_dim", &amct::qdq::quantDequantLastDim);
  m.impl("_quant_dequant_mxfp4_emulated", &emulated);
}

TORCH_LIBRARY_IMPL(amct, Autograd, m) {
  m.impl("quant_dequant_mxfp4", &amct::straightThroughAutograd<FlatForward, double>);
  m.impl("quant_dequant_mxfp4.last_dim", &amct::straightThroughAutograd<LastDimForward, int64_t, double>);
}
