// Device-agnostic host logic of hifloat4_cast: validation (docs/hifloat4.md; shared by every
// backend), and for the AscendC kernel (NPU, and the kernel sim behind the
// _emulated CPU ops) layout (qdim moved last, contiguous), output allocation and the tiling from
// platform facts.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <optional>
#include <tuple>
#include <vector>

#include "amct_host.h"
#include "hifloat4_cast_tiling.h"

namespace amct {
namespace hif4 {

// Runs the kernel on blockDim cores. Per mode (hifloat4_cast_kernel.cpp): fake-quant in0 = x,
// out0 = y; pack in0 = x, out0 = scale, out1 = value; unpack in0 = scale, in1 = value, out0 = y.
// Unused tensors are undefined. All defined tensors are contiguous.
using Launcher = std::function<void(uint32_t blockDim, const at::Tensor& in0, const at::Tensor& in1,
                                    const at::Tensor& out0, const at::Tensor& out1, const at::Tensor& tiling)>;

// The ops: validate, allocate contiguous outputs on the input's device, launch nothing for an
// empty input.
at::Tensor fakeQuant(const at::Tensor& input, int64_t qdim, const PlatformFacts& facts, const Launcher& launch);
std::tuple<at::Tensor, at::Tensor> pack(const at::Tensor& input, const PlatformFacts& facts,
                                        const Launcher& launch);
at::Tensor unpack(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype,
                  const PlatformFacts& facts, const Launcher& launch);

// The checks, in the documented order; checkFakeQuant returns qdim in [0, rank), checkUnpack the
// output dtype.
int64_t checkFakeQuant(const at::Tensor& input, int64_t qdim);
void checkPack(const at::Tensor& input);
at::ScalarType checkUnpack(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype);

// Result shapes (symbolic allowed) and the kernel's dtype code of a float dtype.
std::vector<c10::SymInt> packScaleShape(c10::SymIntArrayRef input);
std::vector<c10::SymInt> packValueShape(c10::SymIntArrayRef input);
std::vector<c10::SymInt> unpackShape(c10::SymIntArrayRef scale);
amct_hif4::Hif4Dtype dtypeOf(at::ScalarType type);

// Contiguous tensor options of `like`'s device with `dtype`.
at::TensorOptions contiguousOptions(const at::Tensor& like, at::ScalarType dtype);

// Meta: the same checks, shapes and dtypes only (symbolic shapes allowed).
at::Tensor fakeQuantMeta(const at::Tensor& input, int64_t qdim);
std::tuple<at::Tensor, at::Tensor> packMeta(const at::Tensor& input);
at::Tensor unpackMeta(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype);

// The native CPU ops (hifloat4_cast_native.cpp, on the kernels of hifloat4_cast_cpu.cpp).
at::Tensor fakeQuantNative(const at::Tensor& input, int64_t qdim);
at::Tensor& fakeQuantNativeOut(const at::Tensor& input, int64_t qdim, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> packNative(const at::Tensor& input);
std::tuple<at::Tensor&, at::Tensor&> packNativeOut(const at::Tensor& input, at::Tensor& scale, at::Tensor& value);
at::Tensor unpackNative(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype);
at::Tensor& unpackNativeOut(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype,
                            at::Tensor& out);

// UB bytes the kernel's buffers take for a tile of tileBlocks blocks (mirrors its InitBuffer list).
uint64_t ubBytes(amct_hif4::Hif4Mode mode, amct_hif4::Hif4Dtype dtype, uint32_t tileBlocks);

// UB the kernel may use on this platform: min(facts, the arch budget; 184 KB on dav-2201 as
// the kernel uses Select modes 1/2).
uint64_t ubBudget(const PlatformFacts& facts);

// The tiling for totalBlocks > 0 blocks.
amct_hif4::Hif4Tiling computeTiling(amct_hif4::Hif4Mode mode, amct_hif4::Hif4Dtype dtype, uint64_t totalBlocks,
                                    const PlatformFacts& facts);

}  // namespace hif4
}  // namespace amct
