// Host-side helpers shared by every operator's CPU and NPU paths: error messages in the
// project's format, platform facts, tiling upload. Includes torch, never kernel_operator.h.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>

namespace amct {

// torch's Python name of a dtype ("float16", "bfloat16", "uint8", ...), as users write it.
std::string dtypeName(at::ScalarType type);

// "float16, bfloat16 or float32" for the error messages.
std::string dtypeList(std::initializer_list<at::ScalarType> types);

// RuntimeError "<op>: <argument> dtype must be <allowed>, got <actual>" unless t's dtype is allowed.
void checkDtype(const char* op, const char* argument, at::ScalarType actual,
                std::initializer_list<at::ScalarType> allowed);

// The facts a tiling is computed from: vector (AIV) core count and UB bytes per core.
struct PlatformFacts {
  uint32_t aivCores;
  uint64_t ubBytes;
};

// The CPU backend's facts: what the kernel sim emulates (overridable by tests).
PlatformFacts simPlatformFacts();

// A POD tiling struct as a CPU uint8 tensor: the kernel's last GM_ADDR argument.
template <typename Tiling>
at::Tensor tilingTensor(const Tiling& tiling) {
  static_assert(std::is_trivially_copyable<Tiling>::value && std::is_standard_layout<Tiling>::value,
                "tiling structs are copied to the device as bytes");
  static_assert(sizeof(Tiling) % 8 == 0, "tiling structs are a multiple of 8 bytes");
  at::Tensor bytes = at::empty({static_cast<int64_t>(sizeof(Tiling))}, at::TensorOptions().dtype(at::kByte));
  std::memcpy(bytes.data_ptr(), &tiling, sizeof(Tiling));
  return bytes;
}

// CPU backend: ask the kernel for transparent huge pages on a large, still untouched output,
// so that writing it costs a few faults instead of one per 4 KB page (Linux; a no-op
// elsewhere, for small tensors, or when THP is off).
void adviseHugePages(const at::Tensor& output);

// Raw byte pointer of a tensor's data, as the kernel launchers take it.
inline uint8_t* bytePtr(const at::Tensor& t) { return static_cast<uint8_t*>(t.data_ptr()); }

inline uint64_t byteSize(const at::Tensor& t) {
  return static_cast<uint64_t>(t.numel()) * static_cast<uint64_t>(t.element_size());
}

// ceil(a / b) and a rounded down / up to a multiple of b, in 64 bits.
inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
inline uint64_t roundDown(uint64_t a, uint64_t b) { return a / b * b; }
inline uint64_t roundUp(uint64_t a, uint64_t b) { return ceilDiv(a, b) * b; }

}  // namespace amct
