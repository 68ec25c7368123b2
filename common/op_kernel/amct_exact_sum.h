// s = f32(f32(x * 2^-k) + y) for fp32 vectors, exact (IEEE, subnormals included) whether or not the
// vector unit flushes subnormal operands and results to zero (dav-3510 does: docs/npu.md,
// "Subnormals"; the kernel sim's flush_subnormals mode). Every vector float operation issued here
// has normal (or zero, or infinite) operands and results; subnormals only ever live in integer
// bit patterns. Included after "kernel_operator.h" (and amct_kernel_common.h).
//
// The argument. Let a = f32(x * 2^-k) (so that s = f32(a + y)) and T = 2^-54 (0 <= k <= 40).
//  * Hardware path (Muls, Add), right for every lane with |x| >= 2^-55 or |y| >= 2^-55 (it takes
//    the lanes with |x| >= T or |y| >= T, give or take the compare's rounding). A lane whose
//    x, a, y, s are all normal, zero or infinite is unaffected by flushing. Otherwise some
//    operand is below 2^-126 while the larger one, m = max(|a|, |y|), is >= 2^-95 (k <= 40):
//    a flushed operand (below 2^-126) is less than a quarter ulp of m (>= 2^-120), so
//    f32(m +- it) = m, which is what the flushed Add returns (a subnormal x gives a subnormal
//    a: both flush to the same 0); and the sum of two normal operands, one of them >= 2^-95, is
//    either at least half the larger or an exact cancellation (Sterbenz) that is a multiple of
//    the smaller one's ulp (>= 2^-119): never a subnormal.
//  * Scaled path, for lanes with |x| < T and |y| < T: work in units of 2^64, where the fp32 grid
//    of these lanes (multiples of 2^-149) becomes the multiples of 2^-85, all normal.
//      A' = |x| * 2^(64-k) exactly: a normal |x| by adding (64-k) << 23 to its bits, a subnormal
//      one (bits f < 2^23, value f * 2^-149) as float(f) * 2^(64-k-149): an exact Cast and a
//      normal product. a is subnormal iff A' < 2^-62, and then a * 2^64 is A' rounded to the
//      multiples of 2^-85, nearest even: RINT(A' * 2^85) (an integer <= 2^23, exact through
//      the Casts) times 2^-85; otherwise A = A' (x * 2^-k is exact). B = |y| * 2^64 likewise.
//      The signs are Or'ed back from the bits (so -0 stays -0).
//      S = A + B: both are multiples of 2^-85, so S is zero or at least 2^-85 (normal), and
//      S = 2^64 * f32(a + y): a subnormal a + y is exact in both units; otherwise both round the
//      same real number to 24 significant bits, nearest even (no overflow: |S| < 2^11).
//      s: |S| >= 2^-62 gives a normal s, S's bits with the exponent field lowered by 64;
//      |S| < 2^-62 a subnormal (or zero) s, the bits sign | RINT(|S| * 2^85), an exact integer
//      below 2^23.
//  Each lane takes one of the two results by a compare of its magnitude bits (as exact or
//  monotonely rounded integer-valued floats: never a subnormal). Inputs must be NaN-free (Inf
//  is fine: such a lane takes the hardware path). No integer operation overflows.
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
constexpr float kSmallestNormalBits = 8388608.0f;  // 1 << 23, the bits of 2^-126, as a float
constexpr int32_t kUnitsExponent = 64;        // the scaled path works in units of 2^64
constexpr float kSubnormalLimit = PowerOfTwo(-62);  // 2^-126 in units of 2^64
constexpr float kToGridUnits = PowerOfTwo(85);      // the grid 2^-149 (2^-85 in units of 2^64) -> 1
constexpr float kFromGridUnits = PowerOfTwo(-85);
}  // namespace exact_sum

// dst = the bits of x with the sign bit cleared (the bits of |x|, also for NaN, which no float
// operation may touch): a shift left and back on uint32 lanes. dst may be x.
__aicore__ inline void ClearSignBits(const AscendC::LocalTensor<uint32_t>& dst, const AscendC::LocalTensor<uint32_t>& x,
                                     int32_t cnt) {
  AscendC::ShiftLeft(dst, x, uint32_t(1), cnt);
  AscendC::ShiftRight(dst, dst, uint32_t(1), cnt);
}

// mag = the bits of min(|x|, 2^-54) (int32), sign = the sign bit of x alone (x - |x| as int32,
// no overflow).
__aicore__ inline void MagnitudeAndSign(const AscendC::LocalTensor<int32_t>& mag,
                                        const AscendC::LocalTensor<int32_t>& sign,
                                        const AscendC::LocalTensor<float>& x, int32_t cnt) {
  AscendC::LocalTensor<uint32_t> magU = mag.template ReinterpretCast<uint32_t>();
  ClearSignBits(magU, x.template ReinterpretCast<uint32_t>(), cnt);
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
  AscendC::Cast(tmp, m, AscendC::RoundMode::CAST_RINT, count);  // m, exact below 2^24 (an integer: normal)
  AscendC::Compares(mask, tmp, exact_sum::kSmallestNormalBits, AscendC::CMPMODE::LT, count);  // subnormal or 0
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
  // The lanes of the scaled path: min(|x|, T) and |y| both below T (mask1; the compare on the
  // integers' fp32 values, as dav-2201 compares int32 for equality only: a lane within 32 bits of
  // T may go to the hardware path, exact there as well).
  MagnitudeAndSign(i0, i1, x, cnt);
  ClearSignBits(u2, y.template ReinterpretCast<uint32_t>(), cnt);
  AscendC::Max(i2, i2, i0, cnt);
  AscendC::Cast(t2, i2, AscendC::RoundMode::CAST_RINT, count);  // monotone; float(n) < T only if n < T
  AscendC::Compares(mask1, t2, static_cast<float>(exact_sum::kTinyBits), AscendC::CMPMODE::LT, count);
  // A = a * 2^64: |x| * 2^(64-k), rounded where a is subnormal, with x's sign.
  ScaledMagnitude<kUnitsExponent - k>(t0, t2, mask0, count);
  RoundSubnormalRange(t0, t2, mask0, count);
  OrBits(t0, i1, cnt);
  // S = A + B, then s from |S| and the sign of S.
  AscendC::Add(t0, t0, scaledY, cnt);
  ClearSignBits(u2, t0.template ReinterpretCast<uint32_t>(), cnt);
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
// are each 0 or at least 2^-54 in magnitude is exact on the hardware path). Integer steps: the
// key |bits| - 1, with +-0 mapped to the largest key (as uint32 on dav-3510, whose Min takes
// uint32; elsewhere the sign bit cleared, an int32 key), the minimum key by Min folds, and four
// scalar reads of the last 8 keys with explicit V -> S and S -> V flags. w is rows * lanes
// 32-bit values (overwritten), acc `lanes`.
template <int arch = __NPU_ARCH__>
__aicore__ inline void TinyKeys(const AscendC::LocalTensor<float>& key, const AscendC::LocalTensor<float>& x,
                                int32_t cnt) {
  AscendC::LocalTensor<uint32_t> u = key.template ReinterpretCast<uint32_t>();
  ClearSignBits(u, x.template ReinterpretCast<uint32_t>(), cnt);
  AscendC::Adds(key.template ReinterpretCast<int32_t>(), key.template ReinterpretCast<int32_t>(), int32_t(-1), cnt);
  if constexpr (arch != 3510) {
    ClearSignBits(u, u, cnt);
  }
}

template <bool unsignedMin>
struct TinyKeyType {
  using T = int32_t;
};
template <>
struct TinyKeyType<true> {
  using T = uint32_t;
};

template <int arch = __NPU_ARCH__>
__aicore__ inline bool AnyTinyNonzero(const AscendC::LocalTensor<float>& x, uint32_t rows, uint32_t lanes,
                                      const AscendC::LocalTensor<float>& y, const AscendC::LocalTensor<float>& w,
                                      const AscendC::LocalTensor<float>& acc) {
  using Key = typename TinyKeyType<arch == 3510>::T;
  TinyKeys<arch>(acc, y, static_cast<int32_t>(lanes));
  TinyKeys<arch>(w, x, static_cast<int32_t>(rows * lanes));
  AscendC::LocalTensor<Key> a = acc.template ReinterpretCast<Key>();
  AscendC::LocalTensor<Key> k = w.template ReinterpretCast<Key>();
  // The rows fold pairwise, half of them onto the other half (an odd last row into acc): one Min
  // per halving rather than per row.
  for (uint32_t r = rows; r > 1; r /= 2) {
    if (r % 2 == 1) AscendC::Min(a, a, k[(r - 1) * lanes], static_cast<int32_t>(lanes));
    AscendC::Min(k, k, k[(r / 2) * lanes], static_cast<int32_t>((r / 2) * lanes));
  }
  AscendC::Min(a, a, k, static_cast<int32_t>(lanes));
  for (uint32_t h = lanes / 2; h >= 8; h /= 2) AscendC::Min(a, a, a[h], static_cast<int32_t>(h));
  WaitForPipe<AscendC::HardEvent::V_S>();
  bool tiny = false;
  const AscendC::LocalTensor<uint64_t> pairs = acc.template ReinterpretCast<uint64_t>();
  for (uint32_t i = 0; i < 4; ++i) {  // the 8 keys, two per scalar read
    const uint64_t two = pairs.GetValue(i);
    const Key lowKey = static_cast<Key>(static_cast<uint32_t>(two));
    const Key highKey = static_cast<Key>(static_cast<uint32_t>(two >> 32));
    const Key limit = static_cast<Key>(exact_sum::kTinyBits - 1);
    tiny = tiny || lowKey < limit || highKey < limit;
  }
  WaitForPipe<AscendC::HardEvent::S_V>();  // later vector ops may overwrite acc
  return tiny;
}

}  // namespace amct_kernel
