// Device-agnostic host logic of hifloat4_cast, shared by the CPU (kernel sim) and NPU paths:
// validation (spec C2-C4, C6), layout (qdim moved last, contiguous), output allocation and the
// tiling from platform facts (C8).
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <optional>
#include <tuple>

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

// Meta: the same checks, shapes and dtypes only (symbolic shapes allowed).
at::Tensor fakeQuantMeta(const at::Tensor& input, int64_t qdim);
std::tuple<at::Tensor, at::Tensor> packMeta(const at::Tensor& input);
at::Tensor unpackMeta(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype);

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
