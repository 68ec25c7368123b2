// amct kernel sim: count forms of the elementwise, fill and index APIs.
// One set of checks per call, then a plain loop. half/bf16 are computed in float, rounded RNE.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include <cmath>
#include <limits>

#include "sim_memory.h"
#include "sim_modes.h"

namespace amct_sim {
namespace detail {

// ---- per-arch dtype tables -----------------------------------------------------------------
template <class T>
constexpr bool kBase4 = kIsOneOf<T, int16_t, half, int32_t, float>;
template <class T>
constexpr bool kAddSubMaxMinOk =
    kBase4<T> || (kArch3510 && kIsOneOf<T, int8_t, uint8_t, uint16_t, bfloat16_t, uint32_t, int64_t, uint64_t>);
template <class T>
constexpr bool kMulOk = kBase4<T> || (kArch3510 && kIsOneOf<T, uint16_t, bfloat16_t, uint32_t>);
template <class T>
constexpr bool kDivOk = kIsOneOf<T, half, float> || (kArch3510 && kIsOneOf<T, int16_t, uint16_t, int32_t, uint32_t>);
template <class T>
constexpr bool kAddsMaxsMinsOk = kBase4<T> || (kArch3510 && kIsOneOf<T, int8_t, uint8_t, bfloat16_t>);
template <class T>
constexpr bool kMulsOk = kBase4<T> || (kArch3510 && kIsOneOf<T, bfloat16_t>);
template <class T>
constexpr bool kAbsOk = kIsOneOf<T, half, float> || (kArch3510 && kIsOneOf<T, int8_t, int16_t, int32_t>);
template <class T>
constexpr bool kExpLnSqrtOk = kIsOneOf<T, half, float>;
template <class T>
constexpr bool kReluOk = kIsOneOf<T, half, int32_t, float>;
template <class T>
constexpr bool kLogicOk =
    kIsOneOf<T, int16_t, uint16_t> || (kArch3510 && kIsOneOf<T, int8_t, uint8_t, int32_t, uint32_t, int64_t, uint64_t>);
template <class T>
constexpr bool kNotOk = kLogicOk<T> || (kArch3510 && kIsOneOf<T, half, float>);
template <class T>
constexpr bool kShiftOk =
    kIsOneOf<T, int16_t, uint16_t, int32_t, uint32_t> || (kArch3510 && kIsOneOf<T, int8_t, uint8_t, int64_t, uint64_t>);
template <class T>
constexpr bool kDuplicateOk = kIsOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float> ||
                              (kArch3510 && kIsOneOf<T, int8_t, uint8_t>);
template <class T>
constexpr bool kVecIndexOk = kBase4<T> || (kArch3510 && kIsOneOf<T, int8_t>);

// ---- arithmetic types ----------------------------------------------------------------------
template <class T>
struct Arith {
  using C = T;
  static C Load(T v) { return v; }
  static T Store(C v) { return v; }
};
template <>
struct Arith<half> {
  using C = float;
  static float Load(half v) { return HalfToFloatBits(v.amct_bits); }
  static half Store(float v) { return half(v); }
};
template <>
struct Arith<bfloat16_t> {
  using C = float;
  static float Load(bfloat16_t v) { return Bf16ToFloatBits(v.amct_bits); }
  static bfloat16_t Store(float v) { return bfloat16_t(v); }
};

// Integer arithmetic wraps (no signed-overflow UB); [C] kernels never rely on overflow.
template <class T>
using WideUnsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct AddOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral<C>::value) {
      return static_cast<C>(static_cast<WideUnsigned<C>>(a) + static_cast<WideUnsigned<C>>(b));
    } else {
      return a + b;
    }
  }
};
struct SubOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral<C>::value) {
      return static_cast<C>(static_cast<WideUnsigned<C>>(a) - static_cast<WideUnsigned<C>>(b));
    } else {
      return a - b;
    }
  }
};
struct MulOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral<C>::value) {
      return static_cast<C>(static_cast<WideUnsigned<C>>(a) * static_cast<WideUnsigned<C>>(b));
    } else {
      return a * b;
    }
  }
};
struct MaxOp {
  template <class C>
  C operator()(C a, C b) const {
    return a > b ? a : b;
  }
};
struct MinOp {
  template <class C>
  C operator()(C a, C b) const {
    return a < b ? a : b;
  }
};
struct AndOp {
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(a & b);
  }
};
struct OrOp {
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(a | b);
  }
};

inline void CheckCount(const char* api, int64_t count) {
  if (count <= 0) Fail(api, Fmt("parameters: count must be > 0, got %lld", static_cast<long long>(count)));
}

// dst[i] = f(src0[i], src1[i]) for i < count. Operands arrive by value (see AMCT_SIM_INLINE).
template <class T, class F>
inline void BinaryImpl(const char* api, Opnd d, Opnd a, Opnd b, int32_t count, F f) {
  BlockCtx* c = Ctx(api);
  CheckCount(api, count);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  d.usedBytes = a.usedBytes = b.usedBytes = bytes;
  CheckOpnd(c, api, d);
  CheckOpnd(c, api, a);
  CheckOpnd(c, api, b);
  CheckOverlap(api, d, a);
  CheckOverlap(api, d, b);
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, VectorBytes(api, sizeof(T), bytes));
  UbRead(c, kPipeV, seq, a.off, static_cast<uint32_t>(bytes), api);
  UbRead(c, kPipeV, seq, b.off, static_cast<uint32_t>(bytes), api);
  UbWrite(c, kPipeV, seq, d.off, static_cast<uint32_t>(bytes), api);
  AMCT_SIM_BARRIER();
  T* pd = reinterpret_cast<T*>(d.ptr);
  const T* pa = reinterpret_cast<const T*>(a.ptr);
  const T* pb = reinterpret_cast<const T*>(b.ptr);
  if constexpr (kIsFloatLike<T>) {
    const FpModes m = FpModesOf(c);
    if (__builtin_expect(m.Any(), 0)) {
      for (int32_t i = 0; i < count; ++i) {
        const auto x = Arith<T>::Load(ApplyModes<T>(pa[i], m, false));
        const auto y = Arith<T>::Load(ApplyModes<T>(pb[i], m, false));
        pd[i] = ApplyModes<T>(Arith<T>::Store(f(x, y)), m, true);
      }
      AMCT_SIM_BARRIER();
      return;
    }
  }
#pragma GCC ivdep
  for (int32_t i = 0; i < count; ++i) pd[i] = Arith<T>::Store(f(Arith<T>::Load(pa[i]), Arith<T>::Load(pb[i])));
  AMCT_SIM_BARRIER();
}

// dst[i] = f(src[i]) for i < count.
template <class T, class F>
inline void UnaryImpl(const char* api, Opnd d, Opnd a, int64_t count, F f) {
  BlockCtx* c = Ctx(api);
  CheckCount(api, count);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  d.usedBytes = a.usedBytes = bytes;
  CheckOpnd(c, api, d);
  CheckOpnd(c, api, a);
  CheckOverlap(api, d, a);
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, VectorBytes(api, sizeof(T), bytes));
  UbRead(c, kPipeV, seq, a.off, static_cast<uint32_t>(bytes), api);
  UbWrite(c, kPipeV, seq, d.off, static_cast<uint32_t>(bytes), api);
  AMCT_SIM_BARRIER();
  T* pd = reinterpret_cast<T*>(d.ptr);
  const T* pa = reinterpret_cast<const T*>(a.ptr);
  if constexpr (kIsFloatLike<T>) {
    const FpModes m = FpModesOf(c);
    if (__builtin_expect(m.Any(), 0)) {
      for (int64_t i = 0; i < count; ++i) {
        pd[i] = ApplyModes<T>(Arith<T>::Store(f(Arith<T>::Load(ApplyModes<T>(pa[i], m, false)))), m, true);
      }
      AMCT_SIM_BARRIER();
      return;
    }
  }
#pragma GCC ivdep
  for (int64_t i = 0; i < count; ++i) pd[i] = Arith<T>::Store(f(Arith<T>::Load(pa[i])));
  AMCT_SIM_BARRIER();
}

// dst[i] = g(i) for i < count (no source).
template <class T, class G>
inline void FillImpl(const char* api, Opnd d, int64_t count, G g) {
  BlockCtx* c = Ctx(api);
  CheckCount(api, count);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  d.usedBytes = bytes;
  CheckOpnd(c, api, d);
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, VectorBytes(api, sizeof(T), bytes));
  UbWrite(c, kPipeV, seq, d.off, static_cast<uint32_t>(bytes), api);
  AMCT_SIM_BARRIER();
  T* pd = reinterpret_cast<T*>(d.ptr);
  for (int64_t i = 0; i < count; ++i) pd[i] = g(i);
  AMCT_SIM_BARRIER();
}

template <class T>
inline void DivImpl(Opnd dst, Opnd src0, Opnd src1, int32_t count) {
  if constexpr (std::is_integral<T>::value) {
    bool divByZero = false;
    BinaryImpl<T>("Div", dst, src0, src1, count, [&divByZero](T a, T b) -> T {
      if (b == 0) {
        divByZero = true;
        return 0;
      }
      if (std::is_signed<T>::value && b == static_cast<T>(-1)) {
        return static_cast<T>(~static_cast<WideUnsigned<T>>(a) + 1);  // wraps for the minimum
      }
      return static_cast<T>(a / b);
    });
    if (divByZero) Fail("Div", "parameters: integer division by zero");
  } else {
    BinaryImpl<T>("Div", dst, src0, src1, count, [](auto a, auto b) { return a / b; });
  }
}

template <class T>
constexpr int kBits = static_cast<int>(sizeof(T) * 8);

// Shift amounts: 2201 [0, 16] / [0, 32] for 16/32-bit; 3510 >= 0 (past the width -> 0, or
// -1 for a negative arithmetic right shift).
template <class T>
inline int CheckShift(const char* api, T amount) {
  const long long n = static_cast<long long>(amount);
  if (n < 0 || (kArch2201 && n > kBits<T>)) {
    Fail(api, Fmt("parameters: shift amount %lld is not in [0, %d]%s", n, kBits<T>,
                  kArch2201 ? " (dav-2201)" : ""));
  }
  return n > kBits<T> ? kBits<T> : static_cast<int>(n);
}

template <class T>
inline T ShiftLeftValue(T x, int n) {
  using U = std::make_unsigned_t<T>;
  const U ux = static_cast<U>(x);
  const U shifted = n >= kBits<T> ? U{0} : static_cast<U>(static_cast<WideUnsigned<T>>(ux) << n);
  if constexpr (std::is_signed<T>::value) {
    const U signBit = static_cast<U>(U{1} << (kBits<T> - 1));
    return static_cast<T>((shifted & static_cast<U>(~signBit)) | (ux & signBit));  // keeps the sign bit
  } else {
    return static_cast<T>(shifted);
  }
}

template <class T>
inline T ShiftRightValue(T x, int n) {
  if constexpr (std::is_signed<T>::value) {
    if (n >= kBits<T>) return static_cast<T>(x < 0 ? -1 : 0);
    return static_cast<T>(x >> n);  // arithmetic (GCC: sign-propagating)
  } else {
    if (n >= kBits<T>) return T{0};
    return static_cast<T>(x >> n);
  }
}

}  // namespace detail
}  // namespace amct_sim

// Operands of the public wrappers (fields by value; see AMCT_SIM_INLINE).
#define AMCT_SIM_D ::amct_sim::detail::MakeOpnd(dst, 0, "dst")
#define AMCT_SIM_S ::amct_sim::detail::MakeOpnd(src, 0, "src")
#define AMCT_SIM_S0 ::amct_sim::detail::MakeOpnd(src0, 0, "src0")
#define AMCT_SIM_S1 ::amct_sim::detail::MakeOpnd(src1, 0, "src1")

namespace AscendC {

// ---- binary: dst = src0 op src1 ------------------------------------------------------------
template <typename T>
__aicore__ AMCT_SIM_INLINE void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                                    const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Add, T, amct_sim::detail::kAddSubMaxMinOk<T>);
  amct_sim::detail::BinaryImpl<T>("Add", AMCT_SIM_D, AMCT_SIM_S0, AMCT_SIM_S1, count, amct_sim::detail::AddOp{});
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Sub(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                                    const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Sub, T, amct_sim::detail::kAddSubMaxMinOk<T>);
  amct_sim::detail::BinaryImpl<T>("Sub", AMCT_SIM_D, AMCT_SIM_S0, AMCT_SIM_S1, count, amct_sim::detail::SubOp{});
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                                    const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Mul, T, amct_sim::detail::kMulOk<T>);
  amct_sim::detail::BinaryImpl<T>("Mul", AMCT_SIM_D, AMCT_SIM_S0, AMCT_SIM_S1, count, amct_sim::detail::MulOp{});
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Div(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                                    const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Div, T, amct_sim::detail::kDivOk<T>);
  amct_sim::detail::DivImpl<T>(AMCT_SIM_D, AMCT_SIM_S0, AMCT_SIM_S1, count);
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                                    const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Max, T, amct_sim::detail::kAddSubMaxMinOk<T>);
  amct_sim::detail::BinaryImpl<T>("Max", AMCT_SIM_D, AMCT_SIM_S0, AMCT_SIM_S1, count, amct_sim::detail::MaxOp{});
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Min(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                                    const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Min, T, amct_sim::detail::kAddSubMaxMinOk<T>);
  amct_sim::detail::BinaryImpl<T>("Min", AMCT_SIM_D, AMCT_SIM_S0, AMCT_SIM_S1, count, amct_sim::detail::MinOp{});
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void And(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                                    const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(And, T, amct_sim::detail::kLogicOk<T>);
  amct_sim::detail::BinaryImpl<T>("And", AMCT_SIM_D, AMCT_SIM_S0, AMCT_SIM_S1, count, amct_sim::detail::AndOp{});
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Or(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                                   const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Or, T, amct_sim::detail::kLogicOk<T>);
  amct_sim::detail::BinaryImpl<T>("Or", AMCT_SIM_D, AMCT_SIM_S0, AMCT_SIM_S1, count, amct_sim::detail::OrOp{});
}

// ---- tensor-scalar: dst = src op scalar (scalar exactly T, docs/kernel_sim.md R5) -----------
template <typename T, bool isSetMask = true>
__aicore__ AMCT_SIM_INLINE void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                     const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Adds, T, amct_sim::detail::kAddsMaxsMinsOk<T>);
  const auto s = amct_sim::detail::Arith<T>::Load(scalarValue);
  amct_sim::detail::UnaryImpl<T>("Adds", AMCT_SIM_D, AMCT_SIM_S, count,
                                 [s](auto x) { return amct_sim::detail::AddOp{}(x, s); });
}
template <typename T, bool isSetMask = true>
__aicore__ AMCT_SIM_INLINE void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                     const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Muls, T, amct_sim::detail::kMulsOk<T>);
  const auto s = amct_sim::detail::Arith<T>::Load(scalarValue);
  amct_sim::detail::UnaryImpl<T>("Muls", AMCT_SIM_D, AMCT_SIM_S, count,
                                 [s](auto x) { return amct_sim::detail::MulOp{}(x, s); });
}
template <typename T, bool isSetMask = true>
__aicore__ AMCT_SIM_INLINE void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                     const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Maxs, T, amct_sim::detail::kAddsMaxsMinsOk<T>);
  const auto s = amct_sim::detail::Arith<T>::Load(scalarValue);
  amct_sim::detail::UnaryImpl<T>("Maxs", AMCT_SIM_D, AMCT_SIM_S, count,
                                 [s](auto x) { return amct_sim::detail::MaxOp{}(x, s); });
}
template <typename T, bool isSetMask = true>
__aicore__ AMCT_SIM_INLINE void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                     const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Mins, T, amct_sim::detail::kAddsMaxsMinsOk<T>);
  const auto s = amct_sim::detail::Arith<T>::Load(scalarValue);
  amct_sim::detail::UnaryImpl<T>("Mins", AMCT_SIM_D, AMCT_SIM_S, count,
                                 [s](auto x) { return amct_sim::detail::MinOp{}(x, s); });
}
template <typename T, bool isSetMask = true>
__aicore__ AMCT_SIM_INLINE void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                          const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(ShiftLeft, T, amct_sim::detail::kShiftOk<T>);
  if constexpr (amct_sim::detail::kShiftOk<T>) {
    const int n = amct_sim::detail::CheckShift("ShiftLeft", scalarValue);
    amct_sim::detail::UnaryImpl<T>("ShiftLeft", AMCT_SIM_D, AMCT_SIM_S, count,
                                   [n](T x) { return amct_sim::detail::ShiftLeftValue<T>(x, n); });
  }
}
template <typename T, bool isSetMask = true>
__aicore__ AMCT_SIM_INLINE void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                           const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(ShiftRight, T, amct_sim::detail::kShiftOk<T>);
  if constexpr (amct_sim::detail::kShiftOk<T>) {
    const int n = amct_sim::detail::CheckShift("ShiftRight", scalarValue);
    amct_sim::detail::UnaryImpl<T>("ShiftRight", AMCT_SIM_D, AMCT_SIM_S, count,
                                   [n](T x) { return amct_sim::detail::ShiftRightValue<T>(x, n); });
  }
}

// ---- unary ---------------------------------------------------------------------------------
template <typename T>
__aicore__ AMCT_SIM_INLINE void Abs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Abs, T, amct_sim::detail::kAbsOk<T>);
  amct_sim::detail::UnaryImpl<T>("Abs", AMCT_SIM_D, AMCT_SIM_S, count, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_integral<C>::value) {
      return x < 0 ? static_cast<C>(~static_cast<amct_sim::detail::WideUnsigned<C>>(x) + 1) : x;
    } else {
      return std::fabs(x);
    }
  });
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Exp, T, amct_sim::detail::kExpLnSqrtOk<T>);
  amct_sim::detail::UnaryImpl<T>("Exp", AMCT_SIM_D, AMCT_SIM_S, count, [](float x) { return std::exp(x); });
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Ln(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Ln, T, amct_sim::detail::kExpLnSqrtOk<T>);
  amct_sim::detail::UnaryImpl<T>("Ln", AMCT_SIM_D, AMCT_SIM_S, count, [](float x) { return std::log(x); });
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Sqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Sqrt, T, amct_sim::detail::kExpLnSqrtOk<T>);
  amct_sim::detail::UnaryImpl<T>("Sqrt", AMCT_SIM_D, AMCT_SIM_S, count, [](float x) { return std::sqrt(x); });
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Relu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Relu, T, amct_sim::detail::kReluOk<T>);
  amct_sim::detail::UnaryImpl<T>("Relu", AMCT_SIM_D, AMCT_SIM_S, count, [](auto x) {
    using C = decltype(x);
    return x > C(0) ? x : C(0);
  });
}
template <typename T>
__aicore__ AMCT_SIM_INLINE void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Not, T, amct_sim::detail::kNotOk<T>);
  if constexpr (std::is_integral<T>::value) {
    amct_sim::detail::UnaryImpl<T>("Not", AMCT_SIM_D, AMCT_SIM_S, count, [](T x) { return static_cast<T>(~x); });
  } else if constexpr (amct_sim::detail::kNotOk<T>) {  // 3510 half/float: bitwise on the pattern
    using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
    amct_sim::detail::UnaryImpl<Bits>("Not", AMCT_SIM_D, AMCT_SIM_S, count,
                                      [](Bits x) { return static_cast<Bits>(~x); });
  }
}

// ---- fill, index -----------------------------------------------------------------------------
template <typename T>
__aicore__ AMCT_SIM_INLINE void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count) {
  AMCT_SIM_REQUIRE_DTYPE(Duplicate, T, amct_sim::detail::kDuplicateOk<T>);
  const T v = scalarValue;
  amct_sim::detail::FillImpl<T>("Duplicate", AMCT_SIM_D, count, [v](int64_t) { return v; });
}

// dst[i] = firstValue + i (half: computed in float, rounded RNE).
template <typename T>
__aicore__ AMCT_SIM_INLINE void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count) {
  AMCT_SIM_REQUIRE_DTYPE(CreateVecIndex, T, amct_sim::detail::kVecIndexOk<T>);
  using A = amct_sim::detail::Arith<T>;
  const auto first = A::Load(firstValue);
  amct_sim::detail::FillImpl<T>("CreateVecIndex", AMCT_SIM_D, count, [first](int64_t i) {
    using C = std::remove_const_t<decltype(first)>;
    if constexpr (std::is_integral<C>::value) {
      return A::Store(amct_sim::detail::AddOp{}(first, static_cast<C>(i)));
    } else {
      return A::Store(first + static_cast<float>(i));
    }
  });
}

}  // namespace AscendC

#undef AMCT_SIM_D
#undef AMCT_SIM_S
#undef AMCT_SIM_S0
#undef AMCT_SIM_S1
