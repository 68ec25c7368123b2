// s = f32(f32(x * 2^-k) + y) for fp32 vectors, exact (IEEE, subnormals included) whether or not the
// vector unit flushes subnormal operands and results to zero (dav-3510 does: docs/npu.md,
// "Subnormals"; the kernel sim's flush_subnormals mode). Every vector float operation issued here
// has normal (or zero, or infinite) operands and results; subnormals only ever live in integer
// bit patterns. Included after "kernel_operator.h" (and amct_kernel_common.h).
//
// The argument. Let a = f32(x * 2^-k) (so that s = f32(a + y)) and T = 2^-54 (0 <= k <= 40).
//  * Hardware path, right where |x| >= T or |y| >= T: a lane whose values are all normal or zero
//    (x, a, y, s) is unaffected by flushing. Otherwise some operand is below 2^-126 while the
//    larger operand m = max(|a|, |y|) is >= 2^-94: a flushed operand (|.| < 2^-126) is below a
//    quarter ulp of m (>= 2^-117), so f32(m +- it) = m, which is what the flushed Add returns
//    (and x subnormal means a subnormal: flushed a is the same 0); the sum of two normal values of
//    which one is >= 2^-94 is either exact cancellation (Sterbenz: then a multiple of the smaller
//    one's ulp, >= 2^-118, so normal or zero) or at least half the larger: never subnormal.
//  * Scaled path, for lanes where |x| < T and |y| < T: work in units of 2^64, where the fp32 grid
//    of every value of these lanes (multiples of 2^-149) becomes multiples of 2^-85, all normal.
//      A' = |x| * 2^(64-k) exactly: normal |x| by adding (64-k) << 23 to its bits; subnormal |x|
//      (bits f < 2^23, value f * 2^-149) as float(f) * 2^(64-k-149), an exact Cast and a product
//      >= 2^-126.  a is subnormal iff |A'| < 2^-62, and then a * 2^64 is A' rounded to the
//      multiples of 2^-85, nearest even: RINT(A' * 2^85) (an integer < 2^23, exact through the
//      Cast) times 2^-85; otherwise A = A' (x * 2^-k is then exact).  B = y * 2^64 likewise.
//      Signs are Or'ed back from the bits (so -0 stays -0).
//      S = A + B: both multiples of 2^-85, so S is zero or at least 2^-85 (normal), and S is
//      2^64 * f32(a + y): when a + y is subnormal it is exact in both domains, otherwise both
//      round the same real number to 24 significant bits, nearest even (no overflow: |S| < 2^11).
//      s: |S| >= 2^-62 gives a normal s, whose bits are S's with the exponent field lowered by
//      64; |S| < 2^-62 gives a subnormal (or zero) s whose bits are sign | RINT(|S| * 2^85), an
//      exact integer below 2^23.
//  The lanes pick one of the two results by an integer compare of the magnitude bits. Inputs must
//  be NaN-free (Inf is fine: such a lane takes the hardware path). No integer operation overflows.
#pragma once

#include "amct_kernel_common.h"

namespace amct_kernel {

namespace exact_sum {
// 2^p for -126 <= p <= 127 (exact: products of powers of two).
constexpr float PowerOfTwo(int p) {
  float v = 1.0f;
  for (; p > 0; --p) v *= 2.0f;
  for (; p < 0; ++p) v *= 0.5f;
  return v;
}
constexpr int32_t kTinyBits = 73 << 23;       // bits of T = 2^-54: the scaled path is below it
constexpr int32_t kSmallestNormal = 1 << 23;  // bits of 2^-126
constexpr int32_t kUnitsExponent = 64;        // the scaled path works in units of 2^64
constexpr float kSubnormalLimit = PowerOfTwo(-62);  // 2^-126 in units of 2^64
constexpr float kToGridUnits = PowerOfTwo(85);      // the grid 2^-149 (2^-85 in units of 2^64) -> 1
constexpr float kFromGridUnits = PowerOfTwo(-85);
}  // namespace exact_sum

// mag = the bits of min(|x|, 2^-54) (int32), sign = the sign bit of x alone (x - |x| as int32,
// no overflow).
__aicore__ inline void MagnitudeAndSign(const AscendC::LocalTensor<int32_t>& mag,
                                        const AscendC::LocalTensor<int32_t>& sign,
                                        const AscendC::LocalTensor<float>& x, int32_t cnt) {
  AscendC::LocalTensor<uint32_t> magU = mag.template ReinterpretCast<uint32_t>();
  AscendC::ShiftLeft(magU, x.template ReinterpretCast<uint32_t>(), uint32_t(1), cnt);
  AscendC::ShiftRight(magU, magU, uint32_t(1), cnt);
  AscendC::Sub(sign, x.template ReinterpretCast<int32_t>(), mag, cnt);
  AscendC::Mins(mag, mag, exact_sum::kTinyBits, cnt);
}

// v (in place: the int32 bits m of a magnitude min(|x|, 2^-54)) = that magnitude * 2^e, a normal
// fp32 or zero, exactly (23 <= e <= 64): a normal one by its exponent field, a subnormal one
// (m * 2^-149) as float(m) * 2^(e-149). tmp is `count` floats, mask `count / 8` bytes.
template <int32_t e>
__aicore__ inline void ScaledMagnitude(const AscendC::LocalTensor<float>& v, const AscendC::LocalTensor<float>& tmp,
                                       const AscendC::LocalTensor<uint8_t>& mask, uint32_t count) {
  static_assert(e >= 23 && e <= 64, "float(m) * 2^(e-149) must be normal, the magnitude * 2^e below 2^11");
  const int32_t cnt = static_cast<int32_t>(count);
  AscendC::LocalTensor<int32_t> m = v.template ReinterpretCast<int32_t>();
  AscendC::Compares(mask, m, exact_sum::kSmallestNormal, AscendC::CMPMODE::LT, count);  // subnormal or 0
  AscendC::Cast(tmp, m, AscendC::RoundMode::CAST_RINT, count);  // m, exact below 2^24
  AscendC::Muls(tmp, tmp, exact_sum::PowerOfTwo(e - 149), cnt);
  AscendC::Adds(m, m, int32_t(e << 23), cnt);  // m <= 73 << 23: no overflow
  AscendC::Select(v, mask, tmp, v, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
}

// v (a magnitude in units of 2^64, normal or zero, below 2^11) rounded to the multiples of 2^-85,
// nearest even, where it is below 2^-62 (the subnormal range in those units); unchanged elsewhere.
__aicore__ inline void RoundSubnormalRange(const AscendC::LocalTensor<float>& v, const AscendC::LocalTensor<float>& tmp,
                                           const AscendC::LocalTensor<uint8_t>& mask, uint32_t count) {
  const int32_t cnt = static_cast<int32_t>(count);
  AscendC::LocalTensor<int32_t> k = tmp.template ReinterpretCast<int32_t>();
  AscendC::Mins(tmp, v, exact_sum::kSubnormalLimit, cnt);
  AscendC::Muls(tmp, tmp, exact_sum::kToGridUnits, cnt);        // >= 2^-6 where nonzero, <= 2^23
  AscendC::Cast(k, tmp, AscendC::RoundMode::CAST_RINT, count);  // nearest even
  AscendC::Cast(tmp, k, AscendC::RoundMode::CAST_RINT, count);  // exact
  AscendC::Muls(tmp, tmp, exact_sum::kFromGridUnits, cnt);
  AscendC::Compares(mask, v, exact_sum::kSubnormalLimit, AscendC::CMPMODE::LT, count);
  AscendC::Select(v, mask, tmp, v, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
}

// dst |= src on 32-bit lanes (as 16-bit halves: the form both arches have).
__aicore__ inline void OrBits(const AscendC::LocalTensor<float>& dst, const AscendC::LocalTensor<int32_t>& src,
                              int32_t cnt) {
  AscendC::LocalTensor<uint16_t> d = dst.template ReinterpretCast<uint16_t>();
  AscendC::Or(d, d, src.template ReinterpretCast<uint16_t>(), 2 * cnt);
}

// scaledY = y * 2^64 exactly (normal or zero) where |y| < 2^-54, sign(y) * 2^10 elsewhere: the B
// of the argument above, once per vector y. sign and tmp are `count` 32-bit values each.
__aicore__ inline void ScaleToUnitsExact(const AscendC::LocalTensor<float>& scaledY,
                                         const AscendC::LocalTensor<float>& y, const AscendC::LocalTensor<float>& sign,
                                         const AscendC::LocalTensor<float>& tmp,
                                         const AscendC::LocalTensor<uint8_t>& mask, uint32_t count) {
  const int32_t cnt = static_cast<int32_t>(count);
  AscendC::LocalTensor<int32_t> signBits = sign.template ReinterpretCast<int32_t>();
  MagnitudeAndSign(scaledY.template ReinterpretCast<int32_t>(), signBits, y, cnt);
  ScaledMagnitude<exact_sum::kUnitsExponent>(scaledY, tmp, mask, count);
  OrBits(scaledY, signBits, cnt);
}

// x = f32(f32(x * 2^-k) + y) in place, exactly in every mode (the argument above), for NaN-free x
// and y of `count` lanes (a multiple of 64); scaledY = ScaleToUnitsExact(y). t0, t1, t2 are
// `count` 32-bit values each, mask0 and mask1 `count / 8` bytes; all distinct from x and y.
template <int32_t k>
__aicore__ inline void ScaleAddExact(const AscendC::LocalTensor<float>& x, const AscendC::LocalTensor<float>& y,
                                     const AscendC::LocalTensor<float>& scaledY, const AscendC::LocalTensor<float>& t0,
                                     const AscendC::LocalTensor<float>& t1, const AscendC::LocalTensor<float>& t2,
                                     const AscendC::LocalTensor<uint8_t>& mask0,
                                     const AscendC::LocalTensor<uint8_t>& mask1, uint32_t count) {
  static_assert(k >= 0 && k <= 40, "the hardware path needs |x| * 2^-k >= 2^-94 above T");
  using exact_sum::kUnitsExponent;
  const int32_t cnt = static_cast<int32_t>(count);
  AscendC::LocalTensor<int32_t> i0 = t0.template ReinterpretCast<int32_t>();
  AscendC::LocalTensor<int32_t> i1 = t1.template ReinterpretCast<int32_t>();
  AscendC::LocalTensor<int32_t> i2 = t2.template ReinterpretCast<int32_t>();
  AscendC::LocalTensor<uint32_t> u2 = t2.template ReinterpretCast<uint32_t>();
  // The lanes of the scaled path: min(|x|, T) and |y| both below T (mask1).
  MagnitudeAndSign(i0, i1, x, cnt);
  AscendC::ShiftLeft(u2, y.template ReinterpretCast<uint32_t>(), uint32_t(1), cnt);
  AscendC::ShiftRight(u2, u2, uint32_t(1), cnt);
  AscendC::Max(i2, i2, i0, cnt);
  AscendC::Compares(mask1, i2, exact_sum::kTinyBits, AscendC::CMPMODE::LT, count);
  // A = a * 2^64: |x| * 2^(64-k), rounded where a is subnormal, with x's sign.
  ScaledMagnitude<kUnitsExponent - k>(t0, t2, mask0, count);
  RoundSubnormalRange(t0, t2, mask0, count);
  OrBits(t0, i1, cnt);
  // S = A + B, then s from |S| and the sign of S.
  AscendC::Add(t0, t0, scaledY, cnt);
  AscendC::ShiftLeft(u2, t0.template ReinterpretCast<uint32_t>(), uint32_t(1), cnt);
  AscendC::ShiftRight(u2, u2, uint32_t(1), cnt);
  AscendC::Sub(i1, i0, i2, cnt);  // the sign bit of S
  AscendC::Compares(mask0, t2, exact_sum::kSubnormalLimit, AscendC::CMPMODE::LT, count);  // s subnormal or 0
  AscendC::Adds(i0, i2, int32_t(-(kUnitsExponent << 23)), cnt);  // normal s: |S| * 2^-64 by its exponent
  AscendC::Mins(t2, t2, exact_sum::kSubnormalLimit, cnt);
  AscendC::Muls(t2, t2, exact_sum::kToGridUnits, cnt);
  AscendC::Cast(i2, t2, AscendC::RoundMode::CAST_RINT, count);  // subnormal s: its bits, exact
  AscendC::Select(t0, mask0, t2, t0, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
  OrBits(t0, i1, cnt);
  // The hardware path, then the scaled lanes' results in.
  AscendC::Muls(x, x, exact_sum::PowerOfTwo(-k), cnt);
  AscendC::Add(x, x, y, cnt);
  AscendC::Select(x, mask1, t0, x, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
}

// Whether some lane of x (`rows` rows of `lanes`, a power of two >= 16) or of y (`lanes`) has
// 0 < |value| < 2^-54: only then can the scaled path of ScaleAddExact matter (a lane whose x and y
// are each 0 or at least 2^-54 in magnitude is exact on the hardware path). Integer steps: |bits| - 1
// (-1 for +-0, the largest as uint32), their minimum by uint32 Min folds, one scalar read of 8
// values with explicit V -> S and S -> V flags. w is rows * lanes 32-bit values, acc `lanes`.
__aicore__ inline bool AnyTinyNonzero(const AscendC::LocalTensor<float>& x, uint32_t rows, uint32_t lanes,
                                      const AscendC::LocalTensor<float>& y, const AscendC::LocalTensor<float>& w,
                                      const AscendC::LocalTensor<float>& acc) {
  const int32_t n = static_cast<int32_t>(rows * lanes), l = static_cast<int32_t>(lanes);
  AscendC::LocalTensor<uint32_t> wu = w.template ReinterpretCast<uint32_t>();
  AscendC::LocalTensor<uint32_t> au = acc.template ReinterpretCast<uint32_t>();
  AscendC::ShiftLeft(au, y.template ReinterpretCast<uint32_t>(), uint32_t(1), l);
  AscendC::ShiftRight(au, au, uint32_t(1), l);
  AscendC::Adds(acc.template ReinterpretCast<int32_t>(), acc.template ReinterpretCast<int32_t>(), int32_t(-1), l);
  AscendC::ShiftLeft(wu, x.template ReinterpretCast<uint32_t>(), uint32_t(1), n);
  AscendC::ShiftRight(wu, wu, uint32_t(1), n);
  AscendC::Adds(w.template ReinterpretCast<int32_t>(), w.template ReinterpretCast<int32_t>(), int32_t(-1), n);
  for (uint32_t q = 0; q < rows; ++q) AscendC::Min(au, au, wu[q * lanes], l);
  for (uint32_t h = lanes / 2; h >= 8; h /= 2) AscendC::Min(au, au, au[h], static_cast<int32_t>(h));
  WaitForPipe<AscendC::HardEvent::V_S>();
  bool tiny = false;
  for (uint32_t i = 0; i < 8; ++i) tiny = tiny || au.GetValue(i) < static_cast<uint32_t>(exact_sum::kTinyBits - 1);
  WaitForPipe<AscendC::HardEvent::S_V>();  // later vector ops may overwrite acc
  return tiny;
}

}  // namespace amct_kernel
