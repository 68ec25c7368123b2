// Device-agnostic host logic of hifloat8_cast, shared by the native CPU ops, the emulated kernel
// (kernel sim) and the NPU path:
// validation, output allocation, LUTs, tiling from platform facts.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <optional>

#include "amct_host.h"
#include "hifloat8_cast_tiling.h"

namespace amct {
namespace hif8 {

// Runs the kernel: blockDim cores over `input` (contiguous) into `output` with the mode's LUT
// (undefined tensor for mode 7) and the tiling bytes. The CPU path launches the kernel sim,
// the NPU path uploads LUT and tiling and launches on the current stream.
using Launcher = std::function<void(uint32_t blockDim, const at::Tensor& input, const at::Tensor& output,
                                    amct_hif8::CastMode mode, const at::Tensor& lut, const at::Tensor& tiling)>;

// The ops. Each validates, allocates a contiguous output with the input's shape on its
// device, and launches nothing for an empty input.
at::Tensor encode(const at::Tensor& input, const PlatformFacts& facts, const Launcher& launch);
at::Tensor decode(const at::Tensor& input, std::optional<at::ScalarType> dtype, const PlatformFacts& facts,
                  const Launcher& launch);
at::Tensor fakeQuant(const at::Tensor& input, const PlatformFacts& facts, const Launcher& launch);

// Meta: the same checks, shape and dtype only (symbolic shapes allowed).
at::Tensor encodeMeta(const at::Tensor& input);
at::Tensor decodeMeta(const at::Tensor& input, std::optional<at::ScalarType> dtype);
at::Tensor fakeQuantMeta(const at::Tensor& input);

// The output dtype of each op after its input checks (RuntimeError per the op's contract).
at::ScalarType encodeOutputType(const at::Tensor& input);
at::ScalarType decodeOutputType(const at::Tensor& input, std::optional<at::ScalarType> dtype);
at::ScalarType fakeQuantOutputType(const at::Tensor& input);

// The native CPU implementation (hifloat8_cast_native.cpp, kernels in hifloat8_cast_cpu.cpp).
at::Tensor encodeNative(const at::Tensor& input);
at::Tensor decodeNative(const at::Tensor& input, std::optional<at::ScalarType> dtype);
at::Tensor fakeQuantNative(const at::Tensor& input);
at::Tensor& encodeNativeOut(const at::Tensor& input, at::Tensor& out);
at::Tensor& decodeNativeOut(const at::Tensor& input, std::optional<at::ScalarType> dtype, at::Tensor& out);
at::Tensor& fakeQuantNativeOut(const at::Tensor& input, at::Tensor& out);

// The host-built table of a mode, once per process (thread-safe): a CPU uint8 tensor holding
// the encode LUT (if any, of the tiling's encLutBytes) followed by the decode LUT (if any);
// undefined for mode 7.
const at::Tensor& lutOf(amct_hif8::CastMode mode, uint32_t encLutBytes);

// Tiling (docs/hifloat8.md, Kernel) for n > 0 elements on the given platform.
amct_hif8::Hif8CastTiling computeTiling(amct_hif8::CastMode mode, uint64_t n, const PlatformFacts& facts);

}  // namespace hif8
}  // namespace amct
