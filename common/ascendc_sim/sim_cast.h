// amct kernel sim: Cast. Bit-exact: every conversion is defined by the
// exact software rounding of sim_types.h; the hot (pair, mode) cases have equal fast paths.
// Absent pair -> static_assert; unlisted mode for a present pair -> SimError.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include <cmath>
#include <limits>

#include "sim_memory.h"
#include "sim_modes.h"

namespace amct_sim {
namespace detail {

// Mode bits: bit k = RoundMode value k (NONE 0, RINT 1, FLOOR 2, CEIL 3, ROUND 4, TRUNC 5, ODD 6).
constexpr uint32_t kModeN = 1u << 0;
constexpr uint32_t kMode5 = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);
constexpr uint32_t kModeO = 1u << 6;

// The table of modes allowed for Cast(dst D, src S) on this arch; 0 = absent pair.
template <class D, class S>
constexpr uint32_t CastModes() {
  using std::is_same;
  // both arches
  if (is_same<S, half>::value && is_same<D, float>::value) return kModeN;
  if (is_same<S, bfloat16_t>::value && is_same<D, float>::value) return kModeN;
  if (is_same<S, int16_t>::value && is_same<D, float>::value) return kModeN;
  if (is_same<S, int8_t>::value && is_same<D, half>::value) return kModeN;
  if (is_same<S, uint8_t>::value && is_same<D, half>::value) return kModeN;
  if (is_same<S, int32_t>::value && is_same<D, int16_t>::value) return kModeN;
  if (is_same<S, int32_t>::value && is_same<D, int64_t>::value) return kModeN;
  if (is_same<S, int64_t>::value && is_same<D, int32_t>::value) return kModeN;
  if (is_same<S, float>::value && is_same<D, half>::value) return kMode5 | kModeO | kModeN;
  if (is_same<S, float>::value &&
      (is_same<D, bfloat16_t>::value || is_same<D, float>::value || is_same<D, int32_t>::value ||
       is_same<D, int16_t>::value || is_same<D, int64_t>::value)) {
    return kMode5;
  }
  if (is_same<S, half>::value && (is_same<D, int32_t>::value || is_same<D, int16_t>::value)) return kMode5;
  if (is_same<S, bfloat16_t>::value && is_same<D, int32_t>::value) return kMode5;
  if (is_same<S, int64_t>::value && is_same<D, float>::value) return kMode5;
  if (is_same<S, half>::value && (is_same<D, int8_t>::value || is_same<D, uint8_t>::value)) return kMode5 | kModeN;
  if (is_same<S, int16_t>::value && is_same<D, half>::value) return kMode5 | kModeN;
  if (is_same<S, int32_t>::value && is_same<D, float>::value) return kMode5 | kModeN;
  if (kArch3510) {
    if ((is_same<S, half>::value && is_same<D, bfloat16_t>::value) ||
        (is_same<S, bfloat16_t>::value && is_same<D, half>::value)) {
      return kMode5;
    }
    if (is_same<S, int8_t>::value && (is_same<D, int16_t>::value || is_same<D, int32_t>::value)) return kModeN;
    if (is_same<S, uint8_t>::value && (is_same<D, uint16_t>::value || is_same<D, uint32_t>::value)) return kModeN;
    if (is_same<S, int16_t>::value && is_same<D, int32_t>::value) return kModeN;
    if (is_same<S, uint16_t>::value && (is_same<D, uint8_t>::value || is_same<D, uint32_t>::value)) return kModeN;
    if (is_same<S, int32_t>::value && (is_same<D, uint8_t>::value || is_same<D, uint16_t>::value)) return kModeN;
    if (is_same<S, uint32_t>::value &&
        (is_same<D, uint8_t>::value || is_same<D, uint16_t>::value || is_same<D, int16_t>::value)) {
      return kModeN;
    }
  }
  return 0;
}

// Float-format descriptors.
template <class T>
struct FloatFormat;
template <>
struct FloatFormat<float> {
  static constexpr int kFrac = 23, kExp = 8;
  using Bits = uint32_t;
};
template <>
struct FloatFormat<half> {
  static constexpr int kFrac = 10, kExp = 5;
  using Bits = uint16_t;
};
template <>
struct FloatFormat<bfloat16_t> {
  static constexpr int kFrac = 7, kExp = 8;
  using Bits = uint16_t;
};

template <class T>
constexpr bool kIsSimFloat = kIsOneOf<T, float, half, bfloat16_t>;

template <class S>
inline Exact ToExact(S v) {
  if constexpr (kIsSimFloat<S>) {
    using F = FloatFormat<S>;
    return UnpackFloatBits(BitCast<typename F::Bits>(v), F::kFrac, F::kExp);
  } else if constexpr (std::is_signed<S>::value) {
    return UnpackInteger(static_cast<int64_t>(v));
  } else {
    return UnpackUnsigned(static_cast<uint64_t>(v));
  }
}

// The reference conversion of one element (exact rounding in direction r, integer saturation).
template <class D, class S>
inline D CastRef(S v, Rnd r) {
  const Exact x = ToExact(v);
  if constexpr (std::is_same<D, float>::value && std::is_same<S, float>::value) {
    // float -> float: round to an integral value; Inf, NaN and |x| >= 2^23 are already integral.
    if (x.nan || x.inf || x.mant == 0 || x.exp >= 0) return v;
    Exact i;
    i.neg = x.neg;
    i.mant = RoundShift(x.mant, -x.exp, x.neg, r);
    return BitCast<float>(static_cast<uint32_t>(RoundToFormat(i, 23, 8, Rnd::kRint)));
  } else if constexpr (kIsSimFloat<D>) {
    using F = FloatFormat<D>;
    return BitCast<D>(static_cast<typename F::Bits>(RoundToFormat(x, F::kFrac, F::kExp, r)));
  } else {
    static_assert(std::is_integral<D>::value, "Cast: integer destination expected");
    constexpr bool kSigned = std::is_signed<D>::value;
    const uint64_t maxMag = static_cast<uint64_t>(std::numeric_limits<D>::max());
    const uint64_t minMag = kSigned ? maxMag + 1 : 0;  // magnitude of the most negative value
    if (x.nan) return D(0);  // unspecified on the NPU ([C] clamp first)
    uint64_t mag = 0;
    const bool fits = RoundToInteger(x, r, &mag);
    if (x.neg && (mag != 0 || !fits)) {
      if (!fits || mag >= minMag) return kSigned ? std::numeric_limits<D>::min() : D(0);
      return static_cast<D>(-static_cast<int64_t>(mag));
    }
    if (!fits || mag > maxMag) return std::numeric_limits<D>::max();
    return static_cast<D>(mag);
  }
}

inline Rnd RndOf(AscendC::RoundMode m) {
  switch (m) {
    case AscendC::RoundMode::CAST_FLOOR: return Rnd::kFloor;
    case AscendC::RoundMode::CAST_CEIL: return Rnd::kCeil;
    case AscendC::RoundMode::CAST_ROUND: return Rnd::kRound;
    case AscendC::RoundMode::CAST_TRUNC: return Rnd::kTrunc;
    case AscendC::RoundMode::CAST_ODD: return Rnd::kOdd;
    default: return Rnd::kRint;  // RINT, NONE (RINT when lossy, exact otherwise)
  }
}

inline const char* RoundModeName(AscendC::RoundMode m) {
  switch (static_cast<int>(m)) {
    case 0: return "CAST_NONE";
    case 1: return "CAST_RINT";
    case 2: return "CAST_FLOOR";
    case 3: return "CAST_CEIL";
    case 4: return "CAST_ROUND";
    case 5: return "CAST_TRUNC";
    case 6: return "CAST_ODD";
#if __NPU_ARCH__ == 3510
    case 7: return "CAST_HYBRID";
    case 8: return "CAST_EVEN";
    case 9: return "CAST_ZERO";
#endif
    default: return "UNKNOWN";
  }
}

template <class T>
inline const char* SimTypeName() {
  if (std::is_same<T, float>::value) return "float";
  if (std::is_same<T, half>::value) return "half";
  if (std::is_same<T, bfloat16_t>::value) return "bfloat16_t";
  if (std::is_same<T, int8_t>::value) return "int8_t";
  if (std::is_same<T, uint8_t>::value) return "uint8_t";
  if (std::is_same<T, int16_t>::value) return "int16_t";
  if (std::is_same<T, uint16_t>::value) return "uint16_t";
  if (std::is_same<T, int32_t>::value) return "int32_t";
  if (std::is_same<T, uint32_t>::value) return "uint32_t";
  if (std::is_same<T, int64_t>::value) return "int64_t";
  if (std::is_same<T, uint64_t>::value) return "uint64_t";
  return "?";
}

// trunc and round-half-even without libm calls or branches (baseline x86-64 has no roundps), so
// that the loops vectorise. Everything is done on the bit patterns as int32 (GCC vectorises
// integer selects, not float ones around a conversion): below 2^23 through an int32 conversion
// / the 2^23 addition trick, at or above it (and for Inf/NaN) the value is already integral and
// passes through. The magnitude is clamped first so the conversion is always in range; the sign
// is put back from the input's bits, which keeps -0.0.
constexpr int32_t kTwo23Bits = 0x4B000000;  // 2^23
constexpr int32_t kSignBit = static_cast<int32_t>(0x80000000u);

AMCT_SIM_INLINE float IntegralOrInput(int32_t integralMagnitudeBits, int32_t inputBits, int32_t magnitudeBits) {
  const int32_t signedBits = integralMagnitudeBits | (inputBits & kSignBit);
  return BitCast<float>(SelectBits(magnitudeBits < kTwo23Bits, signedBits, inputBits));
}

AMCT_SIM_INLINE float TruncFloat(float x) {
  const int32_t b = BitCast<int32_t>(x);
  const int32_t ab = b & 0x7FFFFFFF;
  const float clamped = BitCast<float>(ab < kTwo23Bits ? ab : kTwo23Bits);
  return IntegralOrInput(BitCast<int32_t>(static_cast<float>(static_cast<int32_t>(clamped))), b, ab);
}

AMCT_SIM_INLINE float RintFloat(float x) {  // default FP environment: ties to even
  const int32_t b = BitCast<int32_t>(x);
  const int32_t ab = b & 0x7FFFFFFF;
  const float clamped = BitCast<float>(ab < kTwo23Bits ? ab : 0);
  return IntegralOrInput(BitCast<int32_t>((clamped + 8388608.0f) - 8388608.0f), b, ab);
}

// floor, ceil and round-half-away from TruncFloat, equal to std::floor/ceil/round bit for bit
// (signed zeros, NaN, Inf included) but vectorisable: x - trunc(x) is exact below 2^23.
AMCT_SIM_INLINE float FloorFloat(float x) {
  const float t = TruncFloat(x);
  return t > x ? t - 1.0f : t;
}

AMCT_SIM_INLINE float CeilFloat(float x) {
  const float t = TruncFloat(x);
  return t < x ? t + 1.0f : t;
}

AMCT_SIM_INLINE float RoundAwayFloat(float x) {
  const float t = TruncFloat(x);
  return std::fabs(x - t) >= 0.5f ? t + std::copysign(1.0f, x) : t;
}

AMCT_SIM_INLINE float RoundFloatIntegral(float x, Rnd r) {
  switch (r) {
    case Rnd::kFloor: return FloorFloat(x);
    case Rnd::kCeil: return CeilFloat(x);
    case Rnd::kRound: return RoundAwayFloat(x);
    case Rnd::kTrunc: return TruncFloat(x);
    default: return RintFloat(x);
  }
}

// float -> int32/int16: x rounded as RoundFloatIntegral(x, R) does, saturated to D (NaN -> 0), in
// one step: the truncation i and the exact fraction f = x - i (|x| < 2^31) decide it, with
// selects the compiler vectorises.
template <class D, Rnd R>
AMCT_SIM_INLINE D RoundFloatToInt(float x) {
  const int32_t ab = BitCast<int32_t>(x) & 0x7FFFFFFF;
  const bool inRange = ab < 0x4F000000;  // |x| < 2^31
  const float xc = inRange ? x : 0.0f;
  const int32_t i = static_cast<int32_t>(xc);
  const float f = xc - static_cast<float>(i);  // exact: |f| < 1, 0 once |x| >= 2^23
  int32_t r = i;
  if constexpr (R == Rnd::kFloor) {
    r = i - static_cast<int32_t>(f < 0.0f);
  } else if constexpr (R == Rnd::kCeil) {
    r = i + static_cast<int32_t>(f > 0.0f);
  } else if constexpr (R == Rnd::kRound) {
    r = i + static_cast<int32_t>(f >= 0.5f) - static_cast<int32_t>(f <= -0.5f);
  } else if constexpr (R != Rnd::kTrunc) {  // RINT: ties to even
    const bool odd = (i & 1) != 0;
    r = i + static_cast<int32_t>(f > 0.5f || (f == 0.5f && odd)) -
        static_cast<int32_t>(f < -0.5f || (f == -0.5f && odd));
  }
  constexpr int32_t kMax = std::numeric_limits<D>::max();
  constexpr int32_t kMin = std::numeric_limits<D>::min();
  const int32_t big = ab > 0x7F800000 ? 0 : (x > 0.0f ? kMax : kMin);  // NaN, +-huge
  r = r > kMax ? kMax : (r < kMin ? kMin : r);
  return static_cast<D>(inRange ? r : big);
}

// The loop, with the rounding direction a compile-time constant.
template <class D, class S, Rnd R>
inline void CastLoop(D* __restrict d, const S* __restrict s, uint32_t n) {
  if constexpr (std::is_same<S, half>::value && std::is_same<D, float>::value) {
    for (uint32_t i = 0; i < n; ++i) d[i] = HalfToFloatBits(s[i].amct_bits);
  } else if constexpr (std::is_same<S, bfloat16_t>::value && std::is_same<D, float>::value) {
    for (uint32_t i = 0; i < n; ++i) d[i] = Bf16ToFloatBits(s[i].amct_bits);
  } else if constexpr (std::is_same<S, float>::value && std::is_same<D, half>::value && R == Rnd::kRint) {
    for (uint32_t i = 0; i < n; ++i) d[i].amct_bits = FloatToHalfRne(s[i]);
  } else if constexpr (std::is_same<S, float>::value && std::is_same<D, bfloat16_t>::value && R == Rnd::kRint) {
    for (uint32_t i = 0; i < n; ++i) d[i].amct_bits = FloatToBf16Rne(s[i]);
  } else if constexpr (std::is_same<S, float>::value && std::is_same<D, float>::value) {
    for (uint32_t i = 0; i < n; ++i) d[i] = RoundFloatIntegral(s[i], R);
  } else if constexpr (std::is_same<S, float>::value && kIsOneOf<D, int32_t, int16_t>) {
    for (uint32_t i = 0; i < n; ++i) d[i] = RoundFloatToInt<D, R>(s[i]);
  } else if constexpr (std::is_same<S, half>::value && kIsOneOf<D, int8_t, uint8_t>) {
    for (uint32_t i = 0; i < n; ++i) d[i] = RoundFloatToInt<D, R>(HalfToFloatBits(s[i].amct_bits));  // exact widening
  } else if constexpr (kIsOneOf<S, int8_t, uint8_t> && std::is_same<D, half>::value) {
    for (uint32_t i = 0; i < n; ++i) d[i] = half(static_cast<float>(s[i]));  // exact
  } else if constexpr (kIsOneOf<S, int16_t> && std::is_same<D, float>::value) {
    for (uint32_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]);  // exact
  } else if constexpr (std::is_same<S, int32_t>::value && std::is_same<D, float>::value && R == Rnd::kRint) {
    for (uint32_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]);  // default FP environment: RNE
  } else if constexpr (std::is_integral<S>::value && std::is_integral<D>::value) {
    for (uint32_t i = 0; i < n; ++i) {
      const S v = s[i];
      if constexpr (std::is_signed<S>::value && !std::is_signed<D>::value) {
        d[i] = v < 0 ? D(0)
                     : (static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<D>::max())
                            ? std::numeric_limits<D>::max()
                            : static_cast<D>(v));
      } else if constexpr (!std::is_signed<S>::value) {
        d[i] = static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<D>::max())
                   ? std::numeric_limits<D>::max()
                   : static_cast<D>(v);
      } else {
        const int64_t w = static_cast<int64_t>(v);
        d[i] = w > static_cast<int64_t>(std::numeric_limits<D>::max())
                   ? std::numeric_limits<D>::max()
                   : (w < static_cast<int64_t>(std::numeric_limits<D>::min()) ? std::numeric_limits<D>::min()
                                                                              : static_cast<D>(w));
      }
    }
  } else {
    for (uint32_t i = 0; i < n; ++i) d[i] = CastRef<D, S>(s[i], R);
  }
}

template <class D, class S>
inline void CastDispatch(D* d, const S* s, uint32_t n, Rnd r) {
  switch (r) {
    case Rnd::kRint: CastLoop<D, S, Rnd::kRint>(d, s, n); break;
    case Rnd::kFloor: CastLoop<D, S, Rnd::kFloor>(d, s, n); break;
    case Rnd::kCeil: CastLoop<D, S, Rnd::kCeil>(d, s, n); break;
    case Rnd::kRound: CastLoop<D, S, Rnd::kRound>(d, s, n); break;
    case Rnd::kTrunc: CastLoop<D, S, Rnd::kTrunc>(d, s, n); break;
    case Rnd::kOdd: CastLoop<D, S, Rnd::kOdd>(d, s, n); break;
  }
}

template <class T, class U>
inline void CastImpl(Opnd d, Opnd s, AscendC::RoundMode roundMode, uint32_t count) {
  constexpr uint32_t kModes = CastModes<T, U>();
  static const char* const kApi = "Cast";
  BlockCtx* c = Ctx(kApi);
  const int m = static_cast<int>(roundMode);
  if (m > 6 || !(kModes & (1u << m))) {
    Fail(kApi, Fmt("parameters: RoundMode::%s is not listed for %s -> %s on __NPU_ARCH__ %d",
                   RoundModeName(roundMode), SimTypeName<U>(), SimTypeName<T>(), __NPU_ARCH__));
  }
  CheckCount(kApi, count);
  d.usedBytes = static_cast<uint64_t>(count) * sizeof(T);
  s.usedBytes = static_cast<uint64_t>(count) * sizeof(U);
  CheckOpnd(c, kApi, d);
  CheckOpnd(c, kApi, s);
  CheckOverlap(kApi, d, s);
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, VectorBytes(kApi, sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U),
                                     std::max(d.usedBytes, s.usedBytes)));
  UbRead(c, kPipeV, seq, s.off, static_cast<uint32_t>(s.usedBytes), kApi);
  UbWrite(c, kPipeV, seq, d.off, static_cast<uint32_t>(d.usedBytes), kApi);
  AMCT_SIM_BARRIER();
  const FpModes fp = FpModesOf(c);
  constexpr bool kModed = kIsFloatLike<T> || kIsFloatLike<U>;
  if (kModed && __builtin_expect(fp.Any(), 0)) {  // sources flushed in a copy, results after the cast
    constexpr uint32_t kChunk = 2048;
    alignas(64) U tmp[kChunk];
    for (uint32_t done = 0; done < count; done += kChunk) {
      const uint32_t n = count - done < kChunk ? count - done : kChunk;
      std::memcpy(tmp, s.ptr + static_cast<size_t>(done) * sizeof(U), static_cast<size_t>(n) * sizeof(U));
      if constexpr (kIsFloatLike<U>) ApplyModesInPlace<U>(tmp, n, FpModes{false, fp.flush}, false);
      T* out = reinterpret_cast<T*>(d.ptr) + done;
      CastDispatch<T, U>(out, tmp, n, RndOf(roundMode));
      if constexpr (kIsFloatLike<T>) ApplyModesInPlace<T>(out, n, fp, true);
    }
  } else if (d.ptr == s.ptr) {  // full alias (same size types): convert chunks through a stack copy
    constexpr uint32_t kChunk = 2048;
    alignas(64) U tmp[kChunk];
    for (uint32_t done = 0; done < count; done += kChunk) {
      const uint32_t n = count - done < kChunk ? count - done : kChunk;
      std::memcpy(tmp, s.ptr + static_cast<size_t>(done) * sizeof(U), static_cast<size_t>(n) * sizeof(U));
      CastDispatch<T, U>(reinterpret_cast<T*>(d.ptr) + done, tmp, n, RndOf(roundMode));
    }
  } else {
    CastDispatch<T, U>(reinterpret_cast<T*>(d.ptr), reinterpret_cast<const U*>(s.ptr), count, RndOf(roundMode));
  }
  AMCT_SIM_BARRIER();
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

// dst T, src U.
template <typename T, typename U>
__aicore__ AMCT_SIM_INLINE void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                                     const uint32_t count) {
  using DstSrcPair = amct_sim::CastPair<T, U>;
  AMCT_SIM_REQUIRE_DTYPE(Cast, DstSrcPair, (amct_sim::detail::CastModes<T, U>() != 0));
  if constexpr (amct_sim::detail::CastModes<T, U>() != 0) {
    amct_sim::detail::CastImpl<T, U>(amct_sim::detail::MakeOpnd(dst, 0, "dst"),
                                     amct_sim::detail::MakeOpnd(src, 0, "src"), roundMode, count);
  }
}

}  // namespace AscendC
