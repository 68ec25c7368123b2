// quant_dequant_mxfp4: what its native CPU kernel (quant_dequant_mxfp4_cpu.cpp, compiled once per
// SIMD capability) and the host code share: the per-call exponent parameters and the kernel table.
#pragma once

#include <cstdint>

#include "amct_cpu_dispatch.h"

namespace amct {
namespace qdq {

constexpr int64_t kBlock = 32;
constexpr int32_t kMinExponent = -30;  // raw = max(m * s / 6, 2^-30)
// Exponents above this give q = 0 for every float32 x (|x| / 2^E < 2^128 / 2^130 = 0.25), so the
// kernels clamp there: the multipliers 2^-E and 2^E stay within float32's range.
constexpr int32_t kMaxUsefulExponent = 130;

// The block exponent E = round(log2(max(m * s / 6, 2^-30))) of a block maximum m = Mm * 2^em
// (Mm in [1, 2), its fraction field f) is em + base + [f >= fieldThreshold] before the clamp: the
// host derives base and fieldThreshold from s exactly (quant_dequant_mxfp4_host.cpp).
struct Params {
  int32_t base;
  uint32_t fieldThreshold;  // in [0, 2^23]; 2^23 means "never"
};

// E (clamped to [kMinExponent, kMaxUsefulExponent]) of a block whose largest |x| has the float32
// bits maxBits (finite, sign bit clear). Subnormal maxima are normalised first.
inline int32_t blockExponent(uint32_t maxBits, const Params& p) {
  int32_t em;
  uint32_t field;
  if (maxBits >= 0x00800000u) {
    em = static_cast<int32_t>(maxBits >> 23) - 127;
    field = maxBits & 0x007FFFFFu;
  } else if (maxBits != 0) {
    const int lead = 31 - __builtin_clz(maxBits);  // the subnormal's leading bit: m = maxBits * 2^-149
    em = lead - 149;
    field = (maxBits << (23 - lead)) & 0x007FFFFFu;
  } else {
    return kMinExponent;
  }
  int32_t e = em + p.base + (field >= p.fieldThreshold ? 1 : 0);
  if (e < kMinExponent) e = kMinExponent;
  if (e > kMaxUsefulExponent) e = kMaxUsefulExponent;
  return e;
}

enum class Dtype : int { kFp16 = 0, kBf16 = 1, kFp32 = 2 };

// run(x, out, dtype, rows, rowLength, p): rows contiguous rows of rowLength elements of `dtype`,
// blocks of 32 along each row (the last block of a row virtually zero-padded), out likewise.
struct Kernels {
  void (*run)(const void* x, void* out, Dtype dtype, int64_t rows, int64_t rowLength, Params p);
};

AMCT_CPU_KERNEL_TABLE(Kernels, kernels)

}  // namespace qdq
}  // namespace amct
