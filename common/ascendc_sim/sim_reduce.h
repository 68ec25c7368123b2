// amct kernel sim: the repeat-form reductions of ascendc_subset.md §5.5 — BlockReduceMax/Min/Sum
// (8 results per repeat, one per 32-B block) and WholeReduceMax/Min/Sum (one record per repeat).
// One set of checks per call, then plain loops; half is computed in float and rounded RNE
// (sums: pairwise trees, each partial sum rounded to T).
// Not provided: the count forms ReduceMax/ReduceMin/ReduceSum, and CANN >= 9.1's
// ReduceRepeat/ReduceDataBlock (AMCT_SIM_CANN_NEW_REDUCE): no amct kernel uses them yet.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include <limits>

#include "sim_memory.h"
#include "sim_repeat.h"
#include "sim_vector.h"

namespace AscendC {
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
}  // namespace AscendC

namespace amct_sim {
namespace api {
AMCT_SIM_API_TAG(BlockReduceMax)
AMCT_SIM_API_TAG(BlockReduceMin)
AMCT_SIM_API_TAG(BlockReduceSum)
AMCT_SIM_API_TAG(WholeReduceMax)
AMCT_SIM_API_TAG(WholeReduceMin)
AMCT_SIM_API_TAG(WholeReduceSum)
}  // namespace api

namespace detail {

// ---- per-arch dtype tables (§5.5) ----------------------------------------------------------
template <class T>
constexpr bool kBlockReduceOk = kIsOneOf<T, half, float>;
template <class T>
constexpr bool kWholeReduceOk = kIsOneOf<T, half, float> || (kArch3510 && kIsOneOf<T, int16_t, uint16_t, int32_t, uint32_t>);

enum class RedKind : uint8_t { kMax, kMin, kSum };

template <class C>
inline C RedIdentity(RedKind k) {
  if (k == RedKind::kSum) return C(0);
  if constexpr (std::numeric_limits<C>::has_infinity) {
    return k == RedKind::kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
  } else {
    return k == RedKind::kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  }
}

// Pairwise tree over v[0..n) (n a power of two), each partial rounded to T.
template <class T>
inline typename Arith<T>::C TreeSum(typename Arith<T>::C* v, uint32_t n) {
  using A = Arith<T>;
  for (uint32_t width = n; width > 1; width /= 2) {
    for (uint32_t i = 0; i < width / 2; ++i) v[i] = A::Load(A::Store(AddOp{}(v[2 * i], v[2 * i + 1])));
  }
  return v[0];
}

// Reduces lanes of `p` selected by `bits` (n lanes), returning the value and (max/min) the
// first lane of the extremum.
template <class T>
inline typename Arith<T>::C ReduceLanes(const T* p, uint64_t bitsLo, uint64_t bitsHi, uint32_t n, RedKind k,
                                        uint32_t* index) {
  using A = Arith<T>;
  using C = typename A::C;
  if (k == RedKind::kSum) {
    C v[128];
    for (uint32_t e = 0; e < n; ++e) {
      const bool on = ((e < 64 ? bitsLo >> e : bitsHi >> (e - 64)) & 1u) != 0;
      v[e] = on ? A::Load(p[e]) : C(0);
    }
    return TreeSum<T>(v, n);
  }
  C acc = RedIdentity<C>(k);
  uint32_t at = 0;
  bool any = false;
  for (uint32_t e = 0; e < n; ++e) {
    const bool on = ((e < 64 ? bitsLo >> e : bitsHi >> (e - 64)) & 1u) != 0;
    if (!on) continue;
    const C x = A::Load(p[e]);
    const bool better = !any || (k == RedKind::kMax ? x > acc : x < acc);  // ties keep the first lane
    if (better) {
      acc = x;
      at = e;
      any = true;
    }
  }
  if (index != nullptr) *index = at;
  return acc;
}

inline const char* BlockReduceName(RedKind k) {
  return k == RedKind::kMax ? "BlockReduceMax" : (k == RedKind::kMin ? "BlockReduceMin" : "BlockReduceSum");
}
inline const char* WholeReduceName(RedKind k) {
  return k == RedKind::kMax ? "WholeReduceMax" : (k == RedKind::kMin ? "WholeReduceMin" : "WholeReduceSum");
}

// BlockReduce*: repeat r, block b -> dst[8 * r * dstRepStride + b]; dst unit 8 * sizeof(T).
template <class T>
inline void BlockReduceImpl(RedKind k, Opnd d, Opnd s, int32_t repeatTime, const LaneMask& m, int32_t dstRepStride,
                            int32_t srcBlkStride, int32_t srcRepStride) {
  const char* api = BlockReduceName(k);
  BlockCtx* c = Ctx(api);
  CheckRepeatTime(api, repeatTime);
  CheckStride(api, "dstRepStride", dstRepStride);
  CheckStride(api, "srcBlkStride", srcBlkStride);
  CheckStride(api, "srcRepStride", srcRepStride);
  constexpr uint32_t sz = sizeof(T);
  constexpr uint32_t B = kBlockLanes<T>;
  const uint32_t R = static_cast<uint32_t>(repeatTime);
  StridedShape ss;
  ss.repeats = R;
  ss.repStride = 32ull * static_cast<uint64_t>(srcRepStride);
  ss.blkStride = 32ull * static_cast<uint64_t>(srcBlkStride);
  ShapeFromMask(ss, m, sz);
  StridedShape ds;  // 8 results per repeat
  ds.repeats = R;
  ds.repStride = 8ull * sz * static_cast<uint64_t>(dstRepStride);
  ds.blkStride = 0;
  ds.end[0] = 8 * sz;
  s.usedBytes = ss.Extent();
  d.usedBytes = ds.Extent();
  CheckOpnd(c, api, s);
  CheckOpndUnit(c, api, d, 8 * sz);
  CheckDisjoint(api, d, s);
  if (R == 0) return;
  const uint32_t seq = BeginOp(c, kPipeV);
  UbReadShape(c, seq, s, ss, api);
  UbWriteShape(c, seq, d, ds, api);
  AMCT_SIM_BARRIER();
  uint32_t bits[8];
  for (uint32_t b = 0; b < 8; ++b) bits[b] = m.BlockBits(b, B);
  // 2201 leaves the result of a fully masked block unchanged; 3510 writes 0 / -inf / +inf.
  const T masked = Arith<T>::Store(RedIdentity<typename Arith<T>::C>(k));
  for (uint32_t r = 0; r < R; ++r) {
    T* out = reinterpret_cast<T*>(d.ptr + r * ds.repStride);
    for (uint32_t b = 0; b < 8; ++b) {
      if (bits[b] == 0) {
        if (kArch3510) out[b] = masked;
        continue;
      }
      const T* p = reinterpret_cast<const T*>(s.ptr + r * ss.repStride + b * ss.blkStride);
      out[b] = Arith<T>::Store(ReduceLanes<T>(p, bits[b], 0, B, k, nullptr));
    }
  }
  AMCT_SIM_BARRIER();
}

template <class T>
inline uint32_t WholeUnit(RedKind k, AscendC::ReduceOrder order) {
  if (k == RedKind::kSum) return sizeof(T);
  switch (order) {
    case AscendC::ReduceOrder::ORDER_ONLY_VALUE: return sizeof(T);
    case AscendC::ReduceOrder::ORDER_ONLY_INDEX: return 4;
    default: return 2 * sizeof(T);
  }
}

// WholeReduce*: one record per repeat at dst byte r * dstRepStride * unit.
template <class T>
inline void WholeReduceImpl(RedKind k, Opnd d, Opnd s, const LaneMask& m, int32_t repeatTime, int32_t dstRepStride,
                            int32_t srcBlkStride, int32_t srcRepStride, AscendC::ReduceOrder order) {
  const char* api = WholeReduceName(k);
  BlockCtx* c = Ctx(api);
  const int o = static_cast<int>(order);
  if (o < 0 || o > 3) Fail(api, Fmt("parameters: ReduceOrder value %d is not one of the four orders", o));
  CheckRepeatTime(api, repeatTime);
  CheckStride(api, "dstRepStride", dstRepStride);
  CheckStride(api, "srcBlkStride", srcBlkStride);
  CheckStride(api, "srcRepStride", srcRepStride);
  constexpr uint32_t sz = sizeof(T);
  constexpr uint32_t E = kRepeatLanes<T>;
  constexpr uint32_t B = kBlockLanes<T>;
  const uint32_t R = static_cast<uint32_t>(repeatTime);
  const uint32_t unit = WholeUnit<T>(k, order);
  StridedShape ss;
  ss.repeats = R;
  ss.repStride = 32ull * static_cast<uint64_t>(srcRepStride);
  ss.blkStride = 32ull * static_cast<uint64_t>(srcBlkStride);
  ShapeFromMask(ss, m, sz);
  StridedShape ds;
  ds.repeats = R;
  ds.repStride = static_cast<uint64_t>(unit) * static_cast<uint64_t>(dstRepStride);
  ds.blkStride = 0;
  ds.end[0] = unit;
  s.usedBytes = ss.Extent();
  d.usedBytes = ds.Extent();
  CheckOpnd(c, api, s);
  CheckOpndUnit(c, api, d, unit);
  CheckDisjoint(api, d, s);
  if (R == 0) return;
  const uint32_t seq = BeginOp(c, kPipeV);
  UbReadShape(c, seq, s, ss, api);
  UbWriteShape(c, seq, d, ds, api);
  AMCT_SIM_BARRIER();
  using Idx = std::conditional_t<sz == 2, uint16_t, uint32_t>;
  T lanes[E];
  for (uint32_t r = 0; r < R; ++r) {
    // the repeat's E lanes, block by block (srcBlkStride may spread them)
    for (uint32_t b = 0; b < 8; ++b) {
      std::memcpy(&lanes[b * B], s.ptr + r * ss.repStride + b * ss.blkStride, 32);
    }
    uint32_t at = 0;
    const T v = Arith<T>::Store(ReduceLanes<T>(lanes, m.bits[0], m.bits[1], E, k, &at));
    uint8_t* rec = d.ptr + r * ds.repStride;
    const Idx idx = static_cast<Idx>(at);
    const uint32_t idx32 = at;
    if (k == RedKind::kSum || order == AscendC::ReduceOrder::ORDER_ONLY_VALUE) {
      std::memcpy(rec, &v, sz);
    } else if (order == AscendC::ReduceOrder::ORDER_ONLY_INDEX) {
      std::memcpy(rec, &idx32, 4);
    } else if (order == AscendC::ReduceOrder::ORDER_VALUE_INDEX) {
      std::memcpy(rec, &v, sz);
      std::memcpy(rec + sz, &idx, sz);
    } else {
      std::memcpy(rec, &idx, sz);
      std::memcpy(rec + sz, &v, sz);
    }
  }
  AMCT_SIM_BARRIER();
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

// ---- BlockReduceMax / Min / Sum: repeatTime before mask -------------------------------------
#define AMCT_SIM_BLOCK_REDUCE(NAME, KIND)                                                                       \
  template <typename T, bool isSetMask = true>                                                                 \
  __aicore__ AMCT_SIM_INLINE void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                   \
                                       const int32_t repeatTime, const int32_t mask, const int32_t dstRepStride, \
                                       const int32_t srcBlkStride, const int32_t srcRepStride) {               \
    AMCT_SIM_REQUIRE_DTYPE(NAME, T, amct_sim::detail::kBlockReduceOk<T>);                                      \
    static_assert(isSetMask, #NAME ": [C] isSetMask stays true (no SetVectorMask in v1)");                      \
    if constexpr (amct_sim::detail::kBlockReduceOk<T>) {                                                       \
      amct_sim::detail::BlockReduceImpl<T>(                                                                    \
          KIND, amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src, 0, "src"), repeatTime,                              \
          amct_sim::detail::CountLaneMask(#NAME, mask, amct_sim::detail::kRepeatLanes<T>), dstRepStride,       \
          srcBlkStride, srcRepStride);                                                                         \
    }                                                                                                          \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  __aicore__ AMCT_SIM_INLINE void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                   \
                                       const int32_t repeatTime, const uint64_t mask[],                        \
                                       const int32_t dstRepStride, const int32_t srcBlkStride,                 \
                                       const int32_t srcRepStride) {                                           \
    AMCT_SIM_REQUIRE_DTYPE(NAME, T, amct_sim::detail::kBlockReduceOk<T>);                                      \
    static_assert(isSetMask, #NAME ": [C] isSetMask stays true (no SetVectorMask in v1)");                      \
    if constexpr (amct_sim::detail::kBlockReduceOk<T>) {                                                       \
      amct_sim::detail::BlockReduceImpl<T>(                                                                    \
          KIND, amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src, 0, "src"), repeatTime,                              \
          amct_sim::detail::BitLaneMask(#NAME, mask, amct_sim::detail::kRepeatLanes<T>), dstRepStride,         \
          srcBlkStride, srcRepStride);                                                                         \
    }                                                                                                          \
  }

AMCT_SIM_BLOCK_REDUCE(BlockReduceMax, amct_sim::detail::RedKind::kMax)
AMCT_SIM_BLOCK_REDUCE(BlockReduceMin, amct_sim::detail::RedKind::kMin)
AMCT_SIM_BLOCK_REDUCE(BlockReduceSum, amct_sim::detail::RedKind::kSum)
#undef AMCT_SIM_BLOCK_REDUCE

// ---- WholeReduceMax / Min: mask before repeatTime, record order ------------------------------
#define AMCT_SIM_WHOLE_REDUCE_EXT(NAME, KIND)                                                                  \
  template <typename T, bool isSetMask = true>                                                                 \
  __aicore__ AMCT_SIM_INLINE void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, \
                                       const int32_t repeatTime, const int32_t dstRepStride,                   \
                                       const int32_t srcBlkStride, const int32_t srcRepStride,                 \
                                       ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {                   \
    AMCT_SIM_REQUIRE_DTYPE(NAME, T, amct_sim::detail::kWholeReduceOk<T>);                                      \
    static_assert(isSetMask, #NAME ": [C] isSetMask stays true (no SetVectorMask in v1)");                      \
    if constexpr (amct_sim::detail::kWholeReduceOk<T>) {                                                       \
      amct_sim::detail::WholeReduceImpl<T>(                                                                    \
          KIND, amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src, 0, "src"),                                          \
          amct_sim::detail::CountLaneMask(#NAME, mask, amct_sim::detail::kRepeatLanes<T>), repeatTime,         \
          dstRepStride, srcBlkStride, srcRepStride, order);                                                    \
    }                                                                                                          \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  __aicore__ AMCT_SIM_INLINE void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                   \
                                       const uint64_t mask[], const int32_t repeatTime,                        \
                                       const int32_t dstRepStride, const int32_t srcBlkStride,                 \
                                       const int32_t srcRepStride,                                             \
                                       ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {                   \
    AMCT_SIM_REQUIRE_DTYPE(NAME, T, amct_sim::detail::kWholeReduceOk<T>);                                      \
    static_assert(isSetMask, #NAME ": [C] isSetMask stays true (no SetVectorMask in v1)");                      \
    if constexpr (amct_sim::detail::kWholeReduceOk<T>) {                                                       \
      amct_sim::detail::WholeReduceImpl<T>(                                                                    \
          KIND, amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src, 0, "src"),                                          \
          amct_sim::detail::BitLaneMask(#NAME, mask, amct_sim::detail::kRepeatLanes<T>), repeatTime,           \
          dstRepStride, srcBlkStride, srcRepStride, order);                                                    \
    }                                                                                                          \
  }

AMCT_SIM_WHOLE_REDUCE_EXT(WholeReduceMax, amct_sim::detail::RedKind::kMax)
AMCT_SIM_WHOLE_REDUCE_EXT(WholeReduceMin, amct_sim::detail::RedKind::kMin)
#undef AMCT_SIM_WHOLE_REDUCE_EXT

// ---- WholeReduceSum: no order (3510's defaulted `typename U = T` is not in the intersection) --
template <typename T, bool isSetMask = true>
__aicore__ AMCT_SIM_INLINE void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                               const int32_t mask, const int32_t repeatTime,
                                               const int32_t dstRepStride, const int32_t srcBlkStride,
                                               const int32_t srcRepStride) {
  AMCT_SIM_REQUIRE_DTYPE(WholeReduceSum, T, amct_sim::detail::kWholeReduceOk<T>);
  static_assert(isSetMask, "WholeReduceSum: [C] isSetMask stays true (no SetVectorMask in v1)");
  if constexpr (amct_sim::detail::kWholeReduceOk<T>) {
    amct_sim::detail::WholeReduceImpl<T>(
        amct_sim::detail::RedKind::kSum, amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src, 0, "src"),
        amct_sim::detail::CountLaneMask("WholeReduceSum", mask, amct_sim::detail::kRepeatLanes<T>), repeatTime,
        dstRepStride, srcBlkStride, srcRepStride, ReduceOrder::ORDER_ONLY_VALUE);
  }
}
template <typename T, bool isSetMask = true>
__aicore__ AMCT_SIM_INLINE void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                               const uint64_t mask[], const int32_t repeatTime,
                                               const int32_t dstRepStride, const int32_t srcBlkStride,
                                               const int32_t srcRepStride) {
  AMCT_SIM_REQUIRE_DTYPE(WholeReduceSum, T, amct_sim::detail::kWholeReduceOk<T>);
  static_assert(isSetMask, "WholeReduceSum: [C] isSetMask stays true (no SetVectorMask in v1)");
  if constexpr (amct_sim::detail::kWholeReduceOk<T>) {
    amct_sim::detail::WholeReduceImpl<T>(
        amct_sim::detail::RedKind::kSum, amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src, 0, "src"),
        amct_sim::detail::BitLaneMask("WholeReduceSum", mask, amct_sim::detail::kRepeatLanes<T>), repeatTime,
        dstRepStride, srcBlkStride, srcRepStride, ReduceOrder::ORDER_ONLY_VALUE);
  }
}

}  // namespace AscendC
