// amct kernel sim: Compare / Compares / Select count forms.
// Mask layout: element i -> bit (i mod 8) of byte i/8 (LSB first), 1 = true / take src0.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include "sim_memory.h"
#include "sim_modes.h"
#include "sim_vector.h"

namespace amct_sim {
namespace detail {

template <class T>
constexpr bool kCompareOk =
    kIsOneOf<T, half, float, int32_t> || (kArch3510 && kIsOneOf<T, int16_t, uint16_t, bfloat16_t, uint32_t>);
template <class T>
constexpr bool kSelectOk =
    kIsOneOf<T, half, float> || (kArch3510 && kIsOneOf<T, int16_t, uint16_t, int32_t, uint32_t, bfloat16_t>);
template <class U>
constexpr bool kSelectMaskOk = kIsOneOf<U, uint8_t, uint16_t, uint32_t, uint64_t>;

inline const char* CmpName(AscendC::CMPMODE m) {
  switch (m) {
    case AscendC::CMPMODE::LT: return "LT";
    case AscendC::CMPMODE::GT: return "GT";
    case AscendC::CMPMODE::EQ: return "EQ";
    case AscendC::CMPMODE::LE: return "LE";
    case AscendC::CMPMODE::GE: return "GE";
    case AscendC::CMPMODE::NE: return "NE";
  }
  return "?";
}

template <class T>
inline void CheckCompareArgs(const char* api, AscendC::CMPMODE mode, uint32_t count) {
  const int m = static_cast<int>(mode);
  if (m < 0 || m > 5) Fail(api, Fmt("parameters: CMPMODE value %d is not LT, GT, EQ, LE, GE or NE", m));
  if (kArch2201 && std::is_same<T, int32_t>::value && mode != AscendC::CMPMODE::EQ) {
    Fail(api, Fmt("parameters: int32_t supports only CMPMODE::EQ on dav-2201, got CMPMODE::%s", CmpName(mode)));
  }
  CheckCount(api, count);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  if (bytes % 256 != 0) {
    Fail(api, Fmt("parameters: count*sizeof(T) = %u*%zu = %llu bytes is not a multiple of 256 (the NPU drops the "
                  "tail)",
                  count, sizeof(T), static_cast<unsigned long long>(bytes)));
  }
}

template <class C>
inline bool CompareValues(C a, C b, AscendC::CMPMODE mode) {
  switch (mode) {
    case AscendC::CMPMODE::LT: return a < b;
    case AscendC::CMPMODE::GT: return a > b;
    case AscendC::CMPMODE::EQ: return a == b;
    case AscendC::CMPMODE::LE: return a <= b;
    case AscendC::CMPMODE::GE: return a >= b;
    case AscendC::CMPMODE::NE: return a != b;
  }
  return false;
}

template <class T, AscendC::CMPMODE M, class GetB>
inline void ComparePack(uint8_t* out, const T* a, GetB getB, uint32_t count) {
  using A = Arith<T>;
  for (uint32_t byte = 0; byte < count / 8; ++byte) {
    uint32_t bits = 0;
    for (uint32_t k = 0; k < 8; ++k) {
      const uint32_t i = byte * 8 + k;
      bits |= static_cast<uint32_t>(CompareValues(A::Load(a[i]), getB(i), M)) << k;
    }
    out[byte] = static_cast<uint8_t>(bits);
  }
}

template <class T, class GetB>
inline void CompareDispatch(uint8_t* out, const T* a, GetB getB, uint32_t count, AscendC::CMPMODE mode) {
  using M = AscendC::CMPMODE;
  switch (mode) {
    case M::LT: ComparePack<T, M::LT>(out, a, getB, count); break;
    case M::GT: ComparePack<T, M::GT>(out, a, getB, count); break;
    case M::EQ: ComparePack<T, M::EQ>(out, a, getB, count); break;
    case M::LE: ComparePack<T, M::LE>(out, a, getB, count); break;
    case M::GE: ComparePack<T, M::GE>(out, a, getB, count); break;
    case M::NE: ComparePack<T, M::NE>(out, a, getB, count); break;
  }
}

// 2201: Select modes 1/2 use UB [184 KB, 192 KB) as scratch; no TPipe allocation may meet it.
inline void CheckSelectScratch(const BlockCtx* c, const char* api) {
  if (kArch2201 && c->pipeOffset > 188416u) {
    Fail(api, Fmt("UB: Select modes 1/2 on dav-2201 use UB [188416, 196608) (the last 8 KB) as scratch, but the "
                  "TPipe's allocations reach byte %u: budget 184 KB when using Select",
                  c->pipeOffset));
  }
}

template <class T>
inline T LoadElem(const uint8_t* p, uint32_t i) {
  T v;
  std::memcpy(&v, p + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

template <class T>
inline void CompareImpl(const char* api, Opnd d, Opnd a, const Opnd* b, T scalar, AscendC::CMPMODE cmpMode,
                        uint32_t count) {
  BlockCtx* c = Ctx(api);
  CheckCompareArgs<T>(api, cmpMode, count);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  d.usedBytes = count / 8;
  a.usedBytes = bytes;
  Opnd bb = b != nullptr ? *b : a;
  bb.usedBytes = bytes;
  CheckOpnd(c, api, d);
  CheckOpnd(c, api, a);
  CheckOverlap(api, d, a);
  if (b != nullptr) {
    CheckOpnd(c, api, bb);
    CheckOverlap(api, d, bb);
  }
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, VectorBytes(api, sizeof(T), bytes));
  UbRead(c, kPipeV, seq, a.off, static_cast<uint32_t>(bytes), api);
  if (b != nullptr) UbRead(c, kPipeV, seq, bb.off, static_cast<uint32_t>(bytes), api);
  UbWrite(c, kPipeV, seq, d.off, count / 8, api);
  AMCT_SIM_BARRIER();
  const T* pa = reinterpret_cast<const T*>(a.ptr);
  const T* pbRaw = b != nullptr ? reinterpret_cast<const T*>(bb.ptr) : nullptr;
  std::vector<T> flushedA, flushedB;  // flush-to-zero mode: compare flushed copies
  if constexpr (kIsFloatLike<T>) {
    if (__builtin_expect(c->flushSubnormals, 0)) {
      const FpModes m{false, true};
      flushedA.assign(pa, pa + count);
      ApplyModesInPlace<T>(flushedA.data(), count, m, false);
      pa = flushedA.data();
      if (pbRaw != nullptr) {
        flushedB.assign(pbRaw, pbRaw + count);
        ApplyModesInPlace<T>(flushedB.data(), count, m, false);
        pbRaw = flushedB.data();
      }
      scalar = ApplyModes<T>(scalar, m, false);
    }
  }
  if (b != nullptr) {
    const T* pb = pbRaw;
    CompareDispatch<T>(d.ptr, pa, [pb](uint32_t i) { return Arith<T>::Load(pb[i]); }, count, cmpMode);
  } else {
    const auto s = Arith<T>::Load(scalar);
    CompareDispatch<T>(d.ptr, pa, [s](uint32_t) { return s; }, count, cmpMode);
  }
  AMCT_SIM_BARRIER();
}

template <class Bits>
inline void SelectGroup(Bits* d, uint32_t maskByte, const Bits* a, const Bits* b, uint32_t lanes) {
#pragma GCC ivdep
  for (uint32_t k = 0; k < lanes; ++k) {
    const Bits keep = static_cast<Bits>(0u - ((maskByte >> k) & 1u));
    d[k] = static_cast<Bits>((a[k] & keep) | (b[k] & static_cast<Bits>(~keep)));
  }
}

template <class Bits>
inline void SelectGroupScalar(Bits* d, uint32_t maskByte, const Bits* a, Bits fill, uint32_t lanes) {
#pragma GCC ivdep
  for (uint32_t k = 0; k < lanes; ++k) {
    const Bits keep = static_cast<Bits>(0u - ((maskByte >> k) & 1u));
    d[k] = static_cast<Bits>((a[k] & keep) | (fill & static_cast<Bits>(~keep)));
  }
}

// Mode 2 (b != nullptr): dst[i] = mask bit i ? src0[i] : src1[i]; mode 1: ... : scalar.
template <class T>
inline void SelectImpl(Opnd d, Opnd m, Opnd a, const Opnd* b, T scalar, AscendC::SELMODE selMode, uint32_t count) {
  static const char* const kApi = "Select";
  BlockCtx* c = Ctx(kApi);
  const AscendC::SELMODE want =
      b != nullptr ? AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE : AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE;
  if (selMode != want) {
    Fail(kApi, Fmt("parameters: the %s overload needs SELMODE::%s ([C] modes: 1 with a scalar src1, 2 with a tensor "
                   "src1), got mode %d",
                   b != nullptr ? "tensor-tensor" : "scalar",
                   b != nullptr ? "VSEL_TENSOR_TENSOR_MODE" : "VSEL_TENSOR_SCALAR_MODE", static_cast<int>(selMode)));
  }
  CheckSelectScratch(c, kApi);
  CheckCount(kApi, count);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  const uint64_t maskBytes = (static_cast<uint64_t>(count) + 7) / 8;
  d.usedBytes = a.usedBytes = bytes;
  m.usedBytes = maskBytes;
  Opnd bb = b != nullptr ? *b : a;
  bb.usedBytes = bytes;
  CheckOpnd(c, kApi, d);
  CheckOpnd(c, kApi, m);
  CheckOpnd(c, kApi, a);
  CheckOverlap(kApi, d, m);
  CheckOverlap(kApi, d, a);
  if (b != nullptr) {
    CheckOpnd(c, kApi, bb);
    CheckOverlap(kApi, d, bb);
  }
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, VectorBytes(kApi, sizeof(T), bytes));
  UbRead(c, kPipeV, seq, m.off, static_cast<uint32_t>(maskBytes), kApi);
  UbRead(c, kPipeV, seq, a.off, static_cast<uint32_t>(bytes), kApi);
  if (b != nullptr) UbRead(c, kPipeV, seq, bb.off, static_cast<uint32_t>(bytes), kApi);
  UbWrite(c, kPipeV, seq, d.off, static_cast<uint32_t>(bytes), kApi);
  AMCT_SIM_BARRIER();
  // Typed loops over groups of 8 lanes (one mask byte), bit patterns moved as unsigned
  // integers (no float semantics): the compiler vectorises them. dst may fully alias a source.
  using Bits = typename std::conditional<sizeof(T) == 2, uint16_t, uint32_t>::type;
  static_assert(sizeof(T) == sizeof(Bits), "Select: 16- or 32-bit lanes");
  const uint8_t* mask = m.ptr;
  Bits* pd = reinterpret_cast<Bits*>(d.ptr);
  const Bits* pa = reinterpret_cast<const Bits*>(a.ptr);
  const uint32_t full = count / 8;
  if (b != nullptr) {
    const Bits* pb = reinterpret_cast<const Bits*>(bb.ptr);
    for (uint32_t g = 0; g < full; ++g) SelectGroup(pd + 8 * g, mask[g], pa + 8 * g, pb + 8 * g, 8);
    if (count % 8 != 0) SelectGroup(pd + 8 * full, mask[full], pa + 8 * full, pb + 8 * full, count % 8);
  } else {
    Bits fill;
    std::memcpy(&fill, &scalar, sizeof(Bits));
    for (uint32_t g = 0; g < full; ++g) SelectGroupScalar(pd + 8 * g, mask[g], pa + 8 * g, fill, 8);
    if (count % 8 != 0) SelectGroupScalar(pd + 8 * full, mask[full], pa + 8 * full, fill, count % 8);
  }
  AMCT_SIM_BARRIER();
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

// dst bit i = (src0[i] cmpMode src1[i]); count*sizeof(T) % 256 == 0; count/8 bytes written.
template <typename T, typename U>
__aicore__ AMCT_SIM_INLINE void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0,
                                        const LocalTensor<T>& src1, CMPMODE cmpMode, uint32_t count) {
  AMCT_SIM_REQUIRE_DTYPE(Compare, T, amct_sim::detail::kCompareOk<T>);
  static_assert(std::is_same<U, uint8_t>::value, "Compare: [C] the mask type U must be uint8_t");
  const amct_sim::detail::Opnd b = amct_sim::detail::MakeOpnd(src1, 0, "src1");
  amct_sim::detail::CompareImpl<T>("Compare", amct_sim::detail::MakeOpnd(dst, 0, "dst"),
                                   amct_sim::detail::MakeOpnd(src0, 0, "src0"), &b, T{}, cmpMode, count);
}

// dst bit i = (src0[i] cmpMode src1Scalar).
template <typename T, typename U>
__aicore__ AMCT_SIM_INLINE void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                                         CMPMODE cmpMode, uint32_t count) {
  AMCT_SIM_REQUIRE_DTYPE(Compares, T, amct_sim::detail::kCompareOk<T>);
  static_assert(std::is_same<U, uint8_t>::value, "Compares: [C] the mask type U must be uint8_t");
  amct_sim::detail::CompareImpl<T>("Compares", amct_sim::detail::MakeOpnd(dst, 0, "dst"),
                                   amct_sim::detail::MakeOpnd(src0, 0, "src0"), nullptr, src1Scalar, cmpMode, count);
}

// Mode 2 (VSEL_TENSOR_TENSOR_MODE): dst[i] = mask bit i ? src0[i] : src1[i].
template <typename T, typename U>
__aicore__ AMCT_SIM_INLINE void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                                       const LocalTensor<T>& src0, const LocalTensor<T>& src1, SELMODE selMode,
                                       uint32_t count) {
  AMCT_SIM_REQUIRE_DTYPE(Select, T, amct_sim::detail::kSelectOk<T>);
  static_assert(amct_sim::detail::kSelectMaskOk<U>,
                "Select: the mask type U must be uint8_t, uint16_t, uint32_t or uint64_t");
  const amct_sim::detail::Opnd b = amct_sim::detail::MakeOpnd(src1, 0, "src1");
  amct_sim::detail::SelectImpl<T>(amct_sim::detail::MakeOpnd(dst, 0, "dst"),
                                  amct_sim::detail::MakeOpnd(selMask, 0, "selMask"),
                                  amct_sim::detail::MakeOpnd(src0, 0, "src0"), &b, T{}, selMode, count);
}

// Mode 1 (VSEL_TENSOR_SCALAR_MODE): dst[i] = mask bit i ? src0[i] : src1.
template <typename T, typename U>
__aicore__ AMCT_SIM_INLINE void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                                       const LocalTensor<T>& src0, T src1, SELMODE selMode, uint32_t count) {
  AMCT_SIM_REQUIRE_DTYPE(Select, T, amct_sim::detail::kSelectOk<T>);
  static_assert(amct_sim::detail::kSelectMaskOk<U>,
                "Select: the mask type U must be uint8_t, uint16_t, uint32_t or uint64_t");
  amct_sim::detail::SelectImpl<T>(amct_sim::detail::MakeOpnd(dst, 0, "dst"),
                                  amct_sim::detail::MakeOpnd(selMask, 0, "selMask"),
                                  amct_sim::detail::MakeOpnd(src0, 0, "src0"), nullptr, src1, selMode, count);
}

}  // namespace AscendC
