// Kernel-side helpers every amct_ops AscendC kernel may share. Uses only the API subset the
// kernel sim emulates (docs/kernel_sim.md); included after "kernel_operator.h".
#pragma once

#include "kernel_operator.h"
#include "amct_reduce.h"

namespace amct_kernel {

// Copies the tiling struct from GM with 32-bit reads (the only raw GM dereference allowed).
template <typename Tiling>
__aicore__ inline Tiling LoadTiling(GM_ADDR tiling) {
  static_assert(sizeof(Tiling) % sizeof(uint32_t) == 0, "tiling structs are whole 32-bit words");
  Tiling t;
  const __gm__ uint32_t* words = reinterpret_cast<const __gm__ uint32_t*>(tiling);
  uint32_t* fields = reinterpret_cast<uint32_t*>(&t);
  for (uint32_t i = 0; i < sizeof(Tiling) / sizeof(uint32_t); ++i) {
    fields[i] = words[i];
  }
  return t;
}

// The part of a flat range this core works on: [start, start + length).
struct BlockRange {
  uint64_t start;
  uint64_t length;
};

// Upstream's split: every core but the last takes numPerCore units, the last one the rest.
__aicore__ inline BlockRange RangeOfThisBlock(uint32_t blockNum, uint64_t numPerCore, uint64_t tailNumLastCore) {
  uint64_t block = static_cast<uint64_t>(AscendC::GetBlockIdx());
  bool last = block + 1 == blockNum;
  return BlockRange{block * numPerCore, last ? tailNumLastCore : numPerCore};
}

// Calls op.ProcessTile(offset, len) for the consecutive tiles of at most tileLength covering
// [0, length). The step is a member of the kernel's own class, never a lambda: a lambda in device
// code would need bisheng's explicit __attribute__((cce_aicore)), which the sim cannot check.
template <class Op>
__aicore__ inline void ForEachTile(uint64_t length, uint32_t tileLength, Op& op) {
  for (uint64_t done = 0; done < length; done += tileLength) {
    uint64_t rest = length - done;
    op.ProcessTile(done, rest < tileLength ? static_cast<uint32_t>(rest) : tileLength);
  }
}

// Makes the results of one pipe visible to another through a flag pair (e.g. MTE2 -> S after
// a DMA into a TBuf that the scalar unit reads).
template <AscendC::HardEvent event>
__aicore__ inline void WaitForPipe() {
  int32_t id = static_cast<int32_t>(GetTPipePtr()->FetchEventID(event));
  AscendC::SetFlag<event>(id);
  AscendC::WaitFlag<event>(id);
}

// The same UB bytes seen as another element type (for bit operations on float data).
template <typename U, typename T>
__aicore__ inline AscendC::LocalTensor<U> As(const AscendC::LocalTensor<T>& t) {
  return t.template ReinterpretCast<U>();
}

// IsHalf<T>::value: T is fp16 (whose subnormals are normal fp32 values once widened exactly).
template <typename T>
struct IsHalf {
  static constexpr bool value = false;
};
template <>
struct IsHalf<half> {
  static constexpr bool value = true;
};

// ---- Exact float work without subnormal vector arithmetic ----
// A vector float operation (arithmetic, Cast, Compare, reduction) may flush subnormal operands
// and results to zero, depending on the device and its control state (docs/kernel_sim.md,
// hardware modes). Where a kernel needs subnormals exactly, these helpers get them from integer
// bit operations; every float operation they issue has normal (or zero) operands and results.

// dst = fp32 of the fp16 values in src, exactly. Normal, Inf and NaN values go through the Cast
// (exact for them); a subnormal's fraction m (value m * 2^-24) is cut out of the bits first and
// added back as the bits of float(m) * 2^-24, a normal fp32. src is overwritten (it ends up
// holding those fractions); scratch is `count` floats, dst and scratch distinct from src.
__aicore__ inline void WidenExact(const AscendC::LocalTensor<float>& dst, const AscendC::LocalTensor<half>& src,
                                  const AscendC::LocalTensor<float>& scratch, uint32_t count) {
  const int32_t cnt = static_cast<int32_t>(count);
  AscendC::LocalTensor<uint16_t> x = src.template ReinterpretCast<uint16_t>();
  AscendC::LocalTensor<uint16_t> flag = scratch.template ReinterpretCast<uint16_t>();
  AscendC::LocalTensor<uint16_t> frac = flag[count];
  AscendC::ShiftLeft(flag, x, uint16_t(1), cnt);
  AscendC::ShiftRight(flag, flag, uint16_t(11), cnt);  // the exponent field, 0..31
  AscendC::LocalTensor<int16_t> flagS = flag.template ReinterpretCast<int16_t>();
  AscendC::Adds(flagS, flagS, int16_t(-1), cnt);
  AscendC::ShiftRight(flagS, flagS, int16_t(15), cnt);  // arithmetic: all ones where the field is 0
  AscendC::ShiftLeft(frac, x, uint16_t(6), cnt);
  AscendC::ShiftRight(frac, frac, uint16_t(6), cnt);  // the fraction field
  AscendC::And(frac, frac, flag, cnt);                // kept for subnormals (and zeros) only
  AscendC::LocalTensor<int16_t> normal = flagS;       // the flags are no longer needed
  AscendC::Sub(normal, x.template ReinterpretCast<int16_t>(), frac.template ReinterpretCast<int16_t>(), cnt);
  AscendC::Cast(dst, normal.template ReinterpretCast<half>(), AscendC::RoundMode::CAST_NONE, count);  // never subnormal
  AscendC::LocalTensor<int16_t> fracS = x.template ReinterpretCast<int16_t>();
  AscendC::Adds(fracS, frac.template ReinterpretCast<int16_t>(), int16_t(0), cnt);  // out of scratch's way
  AscendC::Cast(scratch, fracS, AscendC::RoundMode::CAST_NONE, count);               // m, exact
  AscendC::Muls(scratch, scratch, 5.9604644775390625e-08f, cnt);                     // m * 2^-24: normal or 0
  AscendC::Or(dst.template ReinterpretCast<uint16_t>(), dst.template ReinterpretCast<uint16_t>(),
              scratch.template ReinterpretCast<uint16_t>(), 2 * cnt);  // subnormal lanes: +-0 | magnitude
}

// dst = fp32 of the bf16 values in src, exactly (bf16 subnormals become fp32 subnormals): the
// 16-bit patterns as integers (int16 -> float -> int32, both exact) shifted into the top half.
// (scratch is unused: the same signature as the fp16 overload.)
__aicore__ inline void WidenExact(const AscendC::LocalTensor<float>& dst, const AscendC::LocalTensor<bfloat16_t>& src,
                                  const AscendC::LocalTensor<float>& scratch, uint32_t count) {
  (void)scratch;
  AscendC::LocalTensor<int32_t> bits = dst.template ReinterpretCast<int32_t>();
  AscendC::Cast(dst, src.template ReinterpretCast<int16_t>(), AscendC::RoundMode::CAST_NONE, count);
  AscendC::Cast(bits, dst, AscendC::RoundMode::CAST_RINT, count);
  AscendC::ShiftLeft(dst.template ReinterpretCast<uint32_t>(), dst.template ReinterpretCast<uint32_t>(), uint32_t(16),
                     static_cast<int32_t>(count));
}

// dst = fp16 of the fp32 values v, rounded to nearest even, subnormal results included. Normal
// results come from the Cast; where |v| < 2^-14 the result is the subnormal pattern itself:
// magnitude k = RINT(|v| * 2^24), an integer in [0, 1024] (1024 is 2^-14, the smallest normal),
// with the sign as k - 32768 (its int16 two's complement is 0x8000 | k), converted float -> int16
// exactly and selected in. v (fp32, every value normal or zero) is consumed; scratch is `count`
// floats, mask `count / 8` bytes.
__aicore__ inline void NarrowToHalfExact(const AscendC::LocalTensor<half>& dst, const AscendC::LocalTensor<float>& v,
                                         const AscendC::LocalTensor<float>& scratch,
                                         const AscendC::LocalTensor<uint8_t>& mask, uint32_t count) {
  const int32_t cnt = static_cast<int32_t>(count);
  constexpr float kSmallestNormal = 6.103515625e-05f;  // 2^-14
  AscendC::Cast(dst, v, AscendC::RoundMode::CAST_RINT, count);
  AscendC::LocalTensor<uint32_t> su = scratch.template ReinterpretCast<uint32_t>();
  AscendC::ShiftLeft(su, v.template ReinterpretCast<uint32_t>(), uint32_t(1), cnt);
  AscendC::ShiftRight(su, su, uint32_t(1), cnt);  // |v|
  AscendC::Compares(mask, scratch, kSmallestNormal, AscendC::CMPMODE::LT, count);
  AscendC::Mins(scratch, scratch, kSmallestNormal, cnt);
  AscendC::Muls(scratch, scratch, 16777216.0f, cnt);
  AscendC::Cast(scratch, scratch, AscendC::RoundMode::CAST_RINT, count);  // k
  AscendC::LocalTensor<int32_t> sign = v.template ReinterpretCast<int32_t>();
  AscendC::ShiftRight(sign, sign, int32_t(31), cnt);  // arithmetic: -1 for a negative v
  AscendC::ShiftLeft(sign, sign, int32_t(15), cnt);   // -32768 or 0
  AscendC::Cast(v, sign, AscendC::RoundMode::CAST_RINT, count);
  AscendC::Add(scratch, scratch, v, cnt);
  AscendC::LocalTensor<int16_t> bits = v.template ReinterpretCast<int16_t>();
  AscendC::Cast(bits, scratch, AscendC::RoundMode::CAST_RINT, count);
  AscendC::Select(dst, mask, bits.template ReinterpretCast<half>(), dst, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE,
                  count);
}

// A tile of `count` elements of T as float32, exact for every value including subnormals
// (into `wide` for 16-bit T; fp32 as is), after zeroing the elements from `valid` on (the
// partial tile's padding up to a quantum). fp16 input needs `scratch` (count floats) and is
// overwritten; `scratch` is unused otherwise.
template <typename T>
__aicore__ inline AscendC::LocalTensor<float> WidenTile(const AscendC::LocalTensor<T>& x,
                                                        AscendC::TBuf<AscendC::TPosition::VECCALC>& wide,
                                                        const AscendC::LocalTensor<float>& scratch, uint32_t valid,
                                                        uint32_t count) {
  if (count > valid) AscendC::Duplicate(x[valid], T(0.0f), static_cast<int32_t>(count - valid));
  if constexpr (sizeof(T) == 4) {
    return x;
  } else {
    AscendC::LocalTensor<float> out = wide.Get<float>();
    WidenExact(out, x, scratch, count);
    return out;
  }
}

// dst = the bits of |x| * 2^k for fp32 x (exact bits, subnormals included) and per-element k
// given as k << 23 in `shift` (int32), whenever the product is at least 2^-126; smaller products
// come out as +0 or a value below 2^-126 (callers only need them to be tiny). Subnormal |x| are
// normalised through float(|x| bits), exact below 2^24: |x| = float(bits) * 2^-149, so its
// pattern with the exponent field lowered by 149 (possibly "negative") takes the shift as a
// normal one does. Integer operations only, but for that one exact int32 -> float Cast.
// tmp is `count` 32-bit values; dst may be `shift`. Needs |x| * 2^k < 2^129 for every element
// (int32 range of the sums; the MXFP4 quantizer's |y| < 8) and k >= -125.
__aicore__ inline void ScaleByPowerOfTwo(const AscendC::LocalTensor<float>& dst, const AscendC::LocalTensor<float>& x,
                                         const AscendC::LocalTensor<float>& shift,
                                         const AscendC::LocalTensor<float>& tmp, uint32_t count) {
  const int32_t cnt = static_cast<int32_t>(count);
  AscendC::LocalTensor<int32_t> mag = tmp.template ReinterpretCast<int32_t>();
  AscendC::ShiftLeft(tmp.template ReinterpretCast<uint32_t>(), x.template ReinterpretCast<uint32_t>(), uint32_t(1), cnt);
  AscendC::ShiftRight(tmp.template ReinterpretCast<uint32_t>(), tmp.template ReinterpretCast<uint32_t>(), uint32_t(1),
                      cnt);  // |x| bits
  // |x| * 2^k has the bits M + K, M = g(c) + max(mag - 0xFFFFFF, 0) with c = min(mag, 0xFFFFFF) and
  // g(c) = bits(float(c)) - (149 << 23): g(c) = c on [2^23, 2^24), so M = mag for every normal
  // |x|, and M is the normalised pattern of a subnormal one.
  AscendC::LocalTensor<int32_t> out = dst.template ReinterpretCast<int32_t>();
  AscendC::Add(out, shift.template ReinterpretCast<int32_t>(), mag, cnt);  // K + mag
  AscendC::Mins(mag, mag, int32_t(0xFFFFFF), cnt);                        // c
  AscendC::Sub(out, out, mag, cnt);                                        // K + max(mag - 0xFFFFFF, 0)
  AscendC::Cast(tmp, mag, AscendC::RoundMode::CAST_RINT, count);            // float(c), exact
  AscendC::Adds(mag, mag, int32_t(-(149 << 23)), cnt);                    // g(c)
  // g(0) = -149 << 23 would wrap K + g for the smallest K; -128 << 23 is below every other g(c)
  // (>= -22 << 23) and still gives a negative sum, i.e. +0, for x = +-0.
  AscendC::Maxs(mag, mag, -(int32_t(128) << 23), cnt);
  AscendC::Add(out, out, mag, cnt);
  AscendC::Maxs(out, out, int32_t(0), cnt);  // an underflow below zero: +0
}

// dst[b] = the largest of src[32 b .. 32 b + 31] for `blocks` 32-element blocks of floats
// (src has no NaN).
__aicore__ inline void MaxOfEachBlock(const AscendC::LocalTensor<float>& dst, const AscendC::LocalTensor<float>& src,
                                      uint32_t blocks) {
  constexpr uint32_t kMaxRepeat = 255;
  for (uint32_t b = 0; b < blocks; b += kMaxRepeat) {
    const uint32_t rep = blocks - b < kMaxRepeat ? blocks - b : kMaxRepeat;
    ReduceEachRepeat<Reduce::kMax>(dst[b], src[b * 32], int32_t(32), static_cast<int32_t>(rep), 1, 1, 4,
                                   AscendC::ReduceOrder::ORDER_ONLY_VALUE);
  }
}

// dst[b] = the largest exponent field of the 32-element block b of x, as the float 2^(F - 127)
// (+0 for a block of zeros and subnormals, +Inf when the block holds a NaN or an Inf): the bits
// And 0x7F800000 (never a NaN, never a subnormal) and their block maxima. pattern and e are
// `32 * blocks` 32-bit values of scratch.
__aicore__ inline void LargestExponentOfEachBlock(const AscendC::LocalTensor<float>& dst,
                                                  const AscendC::LocalTensor<float>& x,
                                                  const AscendC::LocalTensor<float>& pattern,
                                                  const AscendC::LocalTensor<float>& e, uint32_t blocks) {
  const int32_t n = static_cast<int32_t>(32 * blocks);
  AscendC::Duplicate(pattern.template ReinterpretCast<uint32_t>(), 0x7F800000u, n);
  AscendC::And(e.template ReinterpretCast<uint16_t>(), x.template ReinterpretCast<uint16_t>(),
               pattern.template ReinterpretCast<uint16_t>(), 2 * n);
  MaxOfEachBlock(dst, e, blocks);
}

// Whether any of the `blocks` (a multiple of 64, at most 64 * 64) values of LargestExponentOfEachBlock
// is +Inf: two reductions (64 blocks per repeat, then the repeats) and one scalar read, with
// explicit V -> S and S -> V flags (no reliance on auto-sync). scratch is 128 floats.
__aicore__ inline bool TileHasNonFinite(const AscendC::LocalTensor<float>& blockMax,
                                        const AscendC::LocalTensor<float>& scratch, uint32_t blocks) {
  AscendC::LocalTensor<float> total = scratch[64];
  const int32_t groups = static_cast<int32_t>(blocks / 64);
  ReduceEachRepeat<Reduce::kMax>(scratch, blockMax, int32_t(64), groups, 1, 1, 8, AscendC::ReduceOrder::ORDER_ONLY_VALUE);
  ReduceEachRepeat<Reduce::kMax>(total, scratch, groups, 1, 1, 1, 8, AscendC::ReduceOrder::ORDER_ONLY_VALUE);
  WaitForPipe<AscendC::HardEvent::V_S>();
  const bool nonFinite = total.template ReinterpretCast<uint32_t>().GetValue(0) == 0x7F800000u;
  WaitForPipe<AscendC::HardEvent::S_V>();  // later vector ops may overwrite the maxima
  return nonFinite;
}

}  // namespace amct_kernel
