// amct kernel sim: the float hardware modes (amct_sim::HardwareModes) applied to vector
// arithmetic, casts and compares: FLOAT saturation (SetSaturationFlag: half/bf16 results +-Inf
// -> +-MAX, NaN -> 0) and flush-to-zero of subnormal float inputs and results. Both are off by
// default; the vector APIs take these paths only when a mode is on (one branch per call).
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include "sim_context.h"

namespace amct_sim {
namespace detail {

template <class T>
constexpr bool kIsFloatLike = kIsOneOf<T, float, half, bfloat16_t>;

struct FpModes {
  bool saturate;
  bool flush;
  bool Any() const { return saturate || flush; }
};

inline FpModes FpModesOf(const BlockCtx* c) { return FpModes{c->saturation, c->flushSubnormals}; }

// Bit layout of a float-like format: sign bit, exponent field, fraction field, largest finite.
template <class T>
struct FpBits;
template <>
struct FpBits<float> {
  using U = uint32_t;
  static constexpr U kSign = 0x80000000u, kExp = 0x7F800000u, kFrac = 0x007FFFFFu, kMax = 0x7F7FFFFFu;
};
template <>
struct FpBits<half> {
  using U = uint16_t;
  static constexpr U kSign = 0x8000u, kExp = 0x7C00u, kFrac = 0x03FFu, kMax = 0x7BFFu;
};
template <>
struct FpBits<bfloat16_t> {
  using U = uint16_t;
  static constexpr U kSign = 0x8000u, kExp = 0x7F80u, kFrac = 0x007Fu, kMax = 0x7F7Fu;
};

// A value's pattern after the modes: subnormals -> signed zero (flush); for half/bf16, +-Inf ->
// +-MAX and NaN -> +0 (saturate; float results keep Inf/NaN, as documented for the FLOAT mode).
template <class T>
inline typename FpBits<T>::U ApplyModesToBits(typename FpBits<T>::U u, FpModes m, bool isResult) {
  using B = FpBits<T>;
  const typename B::U exp = u & B::kExp;
  if (m.flush && exp == 0 && (u & B::kFrac) != 0) return static_cast<typename B::U>(u & B::kSign);
  if (isResult && m.saturate && !std::is_same<T, float>::value && exp == B::kExp) {
    if ((u & B::kFrac) != 0) return 0;                          // NaN -> 0
    return static_cast<typename B::U>((u & B::kSign) | B::kMax);  // +-Inf -> +-MAX
  }
  return u;
}

// Integer types pass unchanged (the modes concern float formats only).
template <class T>
inline T ApplyModes(T v, FpModes m, bool isResult) {
  if constexpr (kIsFloatLike<T>) {
    typename FpBits<T>::U u;
    std::memcpy(&u, &v, sizeof(u));
    u = ApplyModesToBits<T>(u, m, isResult);
    std::memcpy(&v, &u, sizeof(u));
  }
  return v;
}

// In place over n values: inputs (flush only) or results (flush and saturate).
template <class T>
inline void ApplyModesInPlace(T* p, uint64_t n, FpModes m, bool isResult) {
  for (uint64_t i = 0; i < n; ++i) p[i] = ApplyModes<T>(p[i], m, isResult);
}

}  // namespace detail
}  // namespace amct_sim
