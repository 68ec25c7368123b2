// amct kernel sim: qualifiers, scalar types (half, bfloat16_t), exact float rounding, the
// global pipe_t/event_t builtins, AscendC enums and constants, and the dtype-table machinery.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

// Forced inlining for the sim's API wrappers and for the per-element conversions inside its hot
// loops: a conversion left as a call keeps GCC from vectorising the loop around it.
#define AMCT_SIM_INLINE __attribute__((always_inline)) inline

// ---- qualifiers (empty in the sim) ------------------------------------
#define __gm__
#define __aicore__
#define __global__
#define __vector__
#define __cube__
#define __mix__(aic, aiv)
#define GM_ADDR __gm__ uint8_t*

namespace amct_sim {
namespace detail {

template <class To, class From>
inline To BitCast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "BitCast size mismatch");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// ---- exact software rounding: the reference for every float conversion of the sim ----------
// Rounding directions of Cast (NONE is resolved by the caller).
enum class Rnd : uint8_t { kRint, kFloor, kCeil, kRound, kTrunc, kOdd };

// An exactly represented real: (-1)^neg * mant * 2^exp; mant == 0 means a signed zero.
struct Exact {
  bool neg = false;
  bool nan = false;
  bool inf = false;
  uint64_t mant = 0;
  int32_t exp = 0;
};

inline int HighBit(uint64_t v) { return 63 - __builtin_clzll(v); }

// mant / 2^sh rounded to an integer in direction `mode` (sign `neg` for the directed modes).
inline uint64_t RoundShift(uint64_t mant, int sh, bool neg, Rnd mode) {
  if (sh <= 0) return mant << (-sh);
  if (sh >= 66) {
    mant = (mant != 0) ? 1 : 0;  // far below half an ulp: keep only "inexact"
    sh = 63;
  }
  while (sh > 63) {  // jam shifted-out bits into a sticky LSB
    mant = (mant >> 1) | (mant & 1);
    --sh;
  }
  uint64_t kept = mant >> sh;
  uint64_t rem = mant & ((uint64_t{1} << sh) - 1);
  uint64_t halfway = uint64_t{1} << (sh - 1);
  switch (mode) {
    case Rnd::kRint:
      if (rem > halfway || (rem == halfway && (kept & 1))) ++kept;
      break;
    case Rnd::kRound:
      if (rem >= halfway) ++kept;
      break;
    case Rnd::kFloor:
      if (neg && rem != 0) ++kept;
      break;
    case Rnd::kCeil:
      if (!neg && rem != 0) ++kept;
      break;
    case Rnd::kTrunc:
      break;
    case Rnd::kOdd:
      if (rem != 0) kept |= 1;
      break;
  }
  return kept;
}

// Rounds an exact value to a binary float format with `fracBits` fraction bits and `expBits`
// exponent bits (IEEE layout, subnormals, Inf/NaN). Returns the format's bit pattern.
inline uint64_t RoundToFormat(const Exact& v, int fracBits, int expBits, Rnd mode) {
  const int bias = (1 << (expBits - 1)) - 1;
  const int emin = 1 - bias;
  const uint64_t maxBiased = (uint64_t{1} << expBits) - 1;
  const uint64_t sign = uint64_t{v.neg ? 1u : 0u} << (fracBits + expBits);
  if (v.nan) return sign | (maxBiased << fracBits) | (uint64_t{1} << (fracBits - 1));
  if (v.inf) return sign | (maxBiased << fracBits);
  if (v.mant == 0) return sign;
  const int e = HighBit(v.mant) + v.exp;  // value in [2^e, 2^(e+1))
  int q = (e < emin ? emin : e) - fracBits;  // exponent of the result's ulp
  const int sh = q - v.exp;
  uint64_t r = (sh <= 0) ? (v.mant << (-sh)) : RoundShift(v.mant, sh, v.neg, mode);
  if (r >> (fracBits + 1)) {  // rounding carried into a new binade
    r >>= 1;
    ++q;
  }
  uint64_t biased = 0;
  uint64_t frac = r;
  if (r >> fracBits) {
    biased = static_cast<uint64_t>(q + fracBits + bias);
    frac = r & ((uint64_t{1} << fracBits) - 1);
  }
  if (biased >= maxBiased) {
    bool toInf = false;
    switch (mode) {
      case Rnd::kRint:
      case Rnd::kRound: toInf = true; break;
      case Rnd::kFloor: toInf = v.neg; break;
      case Rnd::kCeil: toInf = !v.neg; break;
      case Rnd::kTrunc:
      case Rnd::kOdd: toInf = false; break;
    }
    return sign | (toInf ? (maxBiased << fracBits) : ((maxBiased << fracBits) - 1));
  }
  return sign | (biased << fracBits) | frac;
}

// Rounds an exact value to an integer magnitude. Returns false if it does not fit 64 bits.
inline bool RoundToInteger(const Exact& v, Rnd mode, uint64_t* magnitude) {
  *magnitude = 0;
  if (v.nan || v.inf) return false;
  if (v.mant == 0) return true;
  if (v.exp >= 0) {
    if (HighBit(v.mant) + v.exp >= 64) return false;
    *magnitude = v.mant << v.exp;
    return true;
  }
  *magnitude = RoundShift(v.mant, -v.exp, v.neg, mode);
  return true;
}

// Unpacks an IEEE-layout bit pattern exactly.
inline Exact UnpackFloatBits(uint64_t bits, int fracBits, int expBits) {
  Exact v;
  const int bias = (1 << (expBits - 1)) - 1;
  const uint64_t maxBiased = (uint64_t{1} << expBits) - 1;
  v.neg = ((bits >> (fracBits + expBits)) & 1) != 0;
  const uint64_t biased = (bits >> fracBits) & maxBiased;
  const uint64_t frac = bits & ((uint64_t{1} << fracBits) - 1);
  if (biased == maxBiased) {
    v.nan = frac != 0;
    v.inf = frac == 0;
    return v;
  }
  if (biased == 0) {
    v.mant = frac;
    v.exp = 1 - bias - fracBits;
  } else {
    v.mant = frac | (uint64_t{1} << fracBits);
    v.exp = static_cast<int32_t>(biased) - bias - fracBits;
  }
  return v;
}

inline Exact UnpackInteger(int64_t value) {
  Exact v;
  v.neg = value < 0;
  v.mant = v.neg ? (~static_cast<uint64_t>(value) + 1) : static_cast<uint64_t>(value);
  return v;
}

inline Exact UnpackUnsigned(uint64_t value) {
  Exact v;
  v.mant = value;
  return v;
}

// ---- fast conversions used by half/bfloat16_t and the hot Cast pairs (RNE) ------------------
// Equal to RoundToFormat(..., Rnd::kRint) for every input (tests check this); NaN payloads differ.
// Branch-free: every candidate result is computed and one is picked with integer selects, so that
// GCC vectorises the Cast loops around them (checked bit-identical to the branchy forms over all
// 2^32 floats and all 65536 halves). Masked magnitudes are < 2^31, so signed compares are exact.
AMCT_SIM_INLINE int32_t SelectBits(bool pickFirst, int32_t first, int32_t second) {
  const int32_t m = -static_cast<int32_t>(pickFirst);
  return (first & m) | (second & ~m);
}

AMCT_SIM_INLINE uint16_t FloatToHalfRne(float value) {
  const int32_t bits = BitCast<int32_t>(value);
  const int32_t sign = (bits >> 16) & 0x8000;
  const int32_t x = bits & 0x7FFFFFFF;
  const bool tiny = x < 0x38800000;  // below 2^-14: half subnormal or zero
  // >= 65536, Inf or NaN.
  const int32_t special = SelectBits(x > 0x7F800000, 0x7E00, 0x7C00);
  // Subnormal: adding 0.5 puts the value's 2^-24 multiples into the low mantissa bits of a float
  // in [0.5, 1), rounded by the FPU (RNE).
  const int32_t subnormal = BitCast<int32_t>(BitCast<float>(SelectBits(tiny, x, 0)) + 0.5f) - 0x3F000000;
  // Normal: rebias the exponent by (15 - 127) and add the rounding increment.
  const uint32_t ux = static_cast<uint32_t>(x);
  const int32_t normal = static_cast<int32_t>((ux + 0xC8000FFFu + ((ux >> 13) & 1u)) >> 13);
  const int32_t out = SelectBits(x >= 0x47800000, special, SelectBits(tiny, subnormal, normal));
  return static_cast<uint16_t>(out | sign);
}

AMCT_SIM_INLINE float HalfToFloatBits(uint16_t h) {
  const int32_t sign = static_cast<int32_t>(h & 0x8000u) << 16;
  const int32_t rest = static_cast<int32_t>(h & 0x7FFFu) << 13;
  const int32_t e = rest & 0x0F800000;
  // Zero, subnormal: m * 2^-24 exactly.
  const int32_t subnormal = BitCast<int32_t>(static_cast<float>(h & 0x3FF) * 5.9604644775390625e-08f);
  const int32_t other = rest + SelectBits(e == 0x0F800000, 0x70000000, 0x38000000);  // Inf/NaN, normal
  return BitCast<float>(SelectBits(e == 0, subnormal, other) | sign);
}

AMCT_SIM_INLINE uint16_t FloatToBf16Rne(float value) {
  const uint32_t x = BitCast<uint32_t>(value);
  const int32_t quietNan = static_cast<int32_t>((x >> 16) | 0x0040u);
  const int32_t rounded = static_cast<int32_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
  return static_cast<uint16_t>(SelectBits(static_cast<int32_t>(x & 0x7FFFFFFFu) > 0x7F800000, quietNan, rounded));
}

AMCT_SIM_INLINE float Bf16ToFloatBits(uint16_t b) { return BitCast<float>(static_cast<uint32_t>(b) << 16); }

template <class F>
using OnlyFloat = std::enable_if_t<std::is_same<F, float>::value, int>;

}  // namespace detail
}  // namespace amct_sim

// ---- half and bfloat16_t (docs/kernel_sim.md R7: built from float only, explicit to float, no operators)
struct half {
  uint16_t amct_bits;  // binary16 pattern (sim-internal; kernels use ReinterpretCast<uint16_t>)
  half() = default;
  template <class F, amct_sim::detail::OnlyFloat<F> = 0>
  half(F value) : amct_bits(amct_sim::detail::FloatToHalfRne(value)) {}  // NOLINT: implicit by design
  explicit operator float() const { return amct_sim::detail::HalfToFloatBits(amct_bits); }
};

struct bfloat16_t {
  uint16_t amct_bits;  // bfloat16 pattern (sim-internal)
  bfloat16_t() = default;
  template <class F, amct_sim::detail::OnlyFloat<F> = 0>
  bfloat16_t(F value) : amct_bits(amct_sim::detail::FloatToBf16Rne(value)) {}  // NOLINT: implicit by design
  explicit operator float() const { return amct_sim::detail::Bf16ToFloatBits(amct_bits); }
};

// The MX types of dav-3510 (CANN: fp4x2_e2m1_t = two E2M1 codes per byte, the first element in the
// low nibble; fp8_e8m0_t = a power-of-two scale 2^(bits - 127), 0xFF = NaN). Storage only: the sim
// uses them as Matmul operands (sim_matmul.h); kernels move their bytes with DataCopy.
struct fp4x2_e2m1_t {
  uint8_t amct_bits;
};
struct fp8_e8m0_t {
  uint8_t amct_bits;
};

static_assert(sizeof(half) == 2 && std::is_trivially_copyable<half>::value, "half layout");
static_assert(sizeof(bfloat16_t) == 2 && std::is_trivially_copyable<bfloat16_t>::value, "bfloat16_t layout");

// ---- compiler builtins (global): pipes and event ids; numeric values are the sim's own --------
// The fixpipe's quantization modes (a builtin enum: the values as listed by the dav-3510 docs,
// 矩阵计算的搬出/Fixpipe（L0C到UB数据搬运）.md, quantPre; the sim emulates NoQuant only).
enum QuantMode_t {
  NoQuant,
  F322F16,
  F322BF16,
  DEQF16,
  VDEQF16,
  QF322B8_PRE,
  VQF322B8_PRE,
  REQ8,
  VREQ8,
  QF322FP8_PRE,
  VQF322FP8_PRE,
  QF322HIF8_PRE,
  VQF322HIF8_PRE,
  QF322HIF8_PRE_HYBRID,
  VQF322HIF8_PRE_HYBRID,
  QS322BF16_PRE,
  VQS322BF16_PRE,
  QF322F16_PRE,
  VQF322F16_PRE,
  QF322BF16_PRE,
  VQF322BF16_PRE,
  QF322F32_PRE,
  VQF322F32_PRE
};
enum pipe_t : uint8_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL };
enum event_t : uint8_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace AscendC {

enum class TPosition : uint8_t {
  GM,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM = VECCALC,
  SPM,
  SHM = SPM,
  TSCM,
  C2PIPE2GM,
  C2PIPE2LOCAL,
  MAX
};

using TEventID = int8_t;

enum class HardEvent : uint8_t {
  MTE2_MTE1,
  MTE1_MTE2,
  MTE1_M,
  M_MTE1,
  MTE2_V,
  V_MTE2,
  MTE3_V,
  V_MTE3,
  M_V,
  V_M,
  V_V,
  MTE3_MTE1,
  MTE1_MTE3,
  MTE1_V,
  MTE2_M,
  M_MTE2,
  V_MTE1,
  M_FIX,
  FIX_M,
  MTE3_MTE2,
  MTE2_MTE3,
  S_V,
  V_S,
  S_MTE2,
  MTE2_S,
  S_MTE3,
  MTE3_S,
  MTE2_FIX,
  FIX_MTE2,
  FIX_S,
  M_S,
  FIX_MTE3,
  MTE1_FIX,
  FIX_MTE1,
  FIX_FIX,
  MAX
};

enum class RoundMode : uint8_t {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD,
#if __NPU_ARCH__ == 3510
  CAST_HYBRID,
  CAST_EVEN,
  CAST_ZERO,
#endif
  UNKNOWN = 0xFF
};

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

// ---- the cube data path's enums (sim_cube.h) ----
// impl/basic_api/utils/kernel_utils_mode.h
enum class ClipReluMode { NOCLIP_RELU = 0, CLIP_RELU = 1 };
enum class ReluMode { NO_RELU = 0, NORMAL_RELU = 1, SCALAR_RELU = 2, VECTOR_RELU = 3 };
// include/basic_api/kernel_struct_fixpipe.h
enum class CO2Layout : uint8_t {
  NZ = 0,
  ROW_MAJOR,    // ND Row
  COLUMN_MAJOR  // ND Column
};

// Repeat-form constants.
constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t MAX_REPEAT_TIMES = 255;
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
constexpr int32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr int32_t MASK_PLACEHOLDER = 0;

}  // namespace AscendC

// ---- per-arch dtype tables: a failed (API, dtype) is a static_assert naming API, type, arch ---
namespace amct_sim {
namespace detail {

template <class T, class... Ts>
constexpr bool kIsOneOf = (std::is_same<T, Ts>::value || ...);

constexpr bool kArch2201 = (__NPU_ARCH__ == 2201);
constexpr bool kArch3510 = (__NPU_ARCH__ == 3510);

// Instantiated as api::<Name>::Check<dtype, __NPU_ARCH__, ok>: when ok is false the compiler
// prints "static assertion failed: <Name>: dtype not supported on this __NPU_ARCH__ ..." in the
// context "In instantiation of 'struct amct_sim::api::<Name>::Check<dtype, arch, false>'".
#define AMCT_SIM_API_TAG(NAME)                                                                          \
  struct NAME {                                                                                         \
    template <class Dtype, int Arch, bool Ok>                                                           \
    struct Check {                                                                                      \
      static_assert(Ok, #NAME ": dtype not supported on this __NPU_ARCH__ (the per-arch dtype "           \
                              "tables; 'In instantiation of ...Check<dtype, arch, false>' above names both)"); \
      static constexpr bool value = Ok;                                                                 \
    };                                                                                                  \
  };

// (The condition is always true: instantiating Check<..., false> is what fails, with one message.)
#define AMCT_SIM_REQUIRE_DTYPE(NAME, DTYPE, OK) \
  static_assert(::amct_sim::api::NAME::Check<DTYPE, __NPU_ARCH__, (OK)>::value || !(OK), #NAME)

}  // namespace detail

namespace api {
AMCT_SIM_API_TAG(Add)
AMCT_SIM_API_TAG(Sub)
AMCT_SIM_API_TAG(Mul)
AMCT_SIM_API_TAG(Div)
AMCT_SIM_API_TAG(Max)
AMCT_SIM_API_TAG(Min)
AMCT_SIM_API_TAG(And)
AMCT_SIM_API_TAG(Or)
AMCT_SIM_API_TAG(Not)
AMCT_SIM_API_TAG(Adds)
AMCT_SIM_API_TAG(Muls)
AMCT_SIM_API_TAG(Maxs)
AMCT_SIM_API_TAG(Mins)
AMCT_SIM_API_TAG(ShiftLeft)
AMCT_SIM_API_TAG(ShiftRight)
AMCT_SIM_API_TAG(Abs)
AMCT_SIM_API_TAG(Exp)
AMCT_SIM_API_TAG(Ln)
AMCT_SIM_API_TAG(Sqrt)
AMCT_SIM_API_TAG(Relu)
AMCT_SIM_API_TAG(Duplicate)
AMCT_SIM_API_TAG(CreateVecIndex)
AMCT_SIM_API_TAG(Cast)
AMCT_SIM_API_TAG(Compare)
AMCT_SIM_API_TAG(Compares)
AMCT_SIM_API_TAG(Select)
AMCT_SIM_API_TAG(DataCopy)
AMCT_SIM_API_TAG(DataCopyPad)
AMCT_SIM_API_TAG(TQue)
AMCT_SIM_API_TAG(TBuf)
}  // namespace api

// Cast's "dtype" in the static_assert context: the (destination, source) pair.
template <class Dst, class Src>
struct CastPair {};

}  // namespace amct_sim
