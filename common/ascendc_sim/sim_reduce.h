// amct kernel sim: the repeat-form reductions — BlockReduceMax/Min/Sum
// (8 results per repeat, one per 32-B block) and WholeReduceMax/Min/Sum (one record per repeat).
// One set of checks per call, then plain loops; half is computed in float and rounded RNE
// (sums: pairwise trees, each partial sum rounded to T).
// Also CANN >= 9.1's names ReduceRepeat / ReduceDataBlock (the same operations, mask before
// repeatTime; see the end of this file), which kernels reach through common/op_kernel/amct_reduce.h
// when the asc-devkit version macros say 9.1 or later. Not provided: the count forms
// ReduceMax/ReduceMin/ReduceSum (no amct kernel uses them).
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include <limits>

#include "sim_memory.h"
#include "sim_modes.h"
#include "sim_repeat.h"
#include "sim_vector.h"

namespace AscendC {
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
// CANN >= 9.1 (impl/utils/common_types.h): the reduction of ReduceRepeat / ReduceDataBlock.
enum class ReduceType { NONE = -1, SUM = 0, MAX, MIN };
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

// ---- per-arch dtype tables -----------------------------------------------------------------
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

// Max/Min over the L lanes p[0..L), in lane order (the first lane wins ties, as ReduceLanes).
template <class T, RedKind K, uint32_t L>
inline void BlockRuns(T* __restrict out, const T* __restrict src, uint32_t blocks, uint32_t first) {
  using A = Arith<T>;
  using C = typename A::C;
  constexpr uint32_t B = kBlockLanes<T>;
  for (uint32_t k = 0; k < blocks; ++k) {
    const T* p = src + static_cast<size_t>(k) * B + first;
    C acc = A::Load(p[0]);
    for (uint32_t e = 1; e < L; ++e) {
      const C x = A::Load(p[e]);
      acc = (K == RedKind::kMax ? x > acc : x < acc) ? x : acc;
    }
    out[k] = A::Store(acc);
  }
}

// The fast path of BlockReduceMax/Min: contiguous source and destination (srcBlkStride 1,
// srcRepStride 8, dstRepStride 1) and every block masked to the same run of lanes [first, end).
template <class T, RedKind K>
inline bool BlockRunsFast(T* out, const T* src, uint32_t blocks, uint32_t first, uint32_t len) {
  constexpr uint32_t B = kBlockLanes<T>;
  if (len == B) {
    BlockRuns<T, K, B>(out, src, blocks, first);
  } else if (len == B / 2) {
    BlockRuns<T, K, B / 2>(out, src, blocks, first);
  } else if (len == 1) {
    BlockRuns<T, K, 1>(out, src, blocks, first);
  } else {
    return false;
  }
  return true;
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
  AMCT_SIM_COST(c->cost, Vector(api, sz, R));
  UbReadShape(c, seq, s, ss, api);
  UbWriteShape(c, seq, d, ds, api);
  AMCT_SIM_BARRIER();
  uint32_t bits[8];
  for (uint32_t b = 0; b < 8; ++b) bits[b] = m.BlockBits(b, B);
  // 2201 leaves the result of a fully masked block unchanged; 3510 writes 0 / -inf / +inf.
  const T masked = Arith<T>::Store(RedIdentity<typename Arith<T>::C>(k));
  bool same = true;
  for (uint32_t b = 1; b < 8; ++b) same = same && bits[b] == bits[0];
  const uint32_t first = bits[0] != 0 ? static_cast<uint32_t>(__builtin_ctz(bits[0])) : 0;
  const uint32_t len = bits[0] != 0 ? static_cast<uint32_t>(__builtin_popcount(bits[0])) : 0;
  const bool run = bits[0] != 0 && (bits[0] >> first) == (1u << len) - 1;
  const FpModes modes = kIsFloatLike<T> ? FpModesOf(c) : FpModes{false, false};
  if (!modes.Any() && k != RedKind::kSum && same && run && ss.blkStride == 32 && ss.repStride == 256 &&
      ds.repStride == 8 * sz) {
    T* out = reinterpret_cast<T*>(d.ptr);
    const T* src = reinterpret_cast<const T*>(s.ptr);
    const bool done = k == RedKind::kMax ? BlockRunsFast<T, RedKind::kMax>(out, src, 8 * R, first, len)
                                         : BlockRunsFast<T, RedKind::kMin>(out, src, 8 * R, first, len);
    if (done) {
      AMCT_SIM_BARRIER();
      return;
    }
  }
  for (uint32_t r = 0; r < R; ++r) {
    T* out = reinterpret_cast<T*>(d.ptr + r * ds.repStride);
    for (uint32_t b = 0; b < 8; ++b) {
      if (bits[b] == 0) {
        if (kArch3510) out[b] = masked;
        continue;
      }
      const T* p = reinterpret_cast<const T*>(s.ptr + r * ss.repStride + b * ss.blkStride);
      if (__builtin_expect(modes.Any(), 0)) {  // hardware modes: flushed inputs, moded result
        T block[B];
        std::memcpy(block, p, 32);
        ApplyModesInPlace<T>(block, B, modes, false);
        out[b] = ApplyModes<T>(Arith<T>::Store(ReduceLanes<T>(block, bits[b], 0, B, k, nullptr)), modes, true);
        continue;
      }
      out[b] = Arith<T>::Store(ReduceLanes<T>(p, bits[b], 0, B, k, nullptr));
    }
  }
  AMCT_SIM_BARRIER();
}

// The extremum of p[0..n) (n >= 1) with ReduceLanes' semantics (the first lane wins ties), by
// eight independent accumulators (lane e in accumulator e % 8) so the loop does not serialise
// on one compare. The first lane holding the extremum is searched only when the index is wanted
// or the extremum is a zero (whose sign depends on the lane); any other value has one pattern.
// half: the same through ordered integer keys (non-negative halves order as their bits,
// negative ones reversed; +-0 both key 0), which vectorise where float conversions do not.
inline int16_t HalfKey(uint16_t h) {
  const int32_t m = h & 0x7FFF;
  const int32_t neg = -static_cast<int32_t>(h >> 15);   // 0 or -1
  return static_cast<int16_t>((m ^ neg) - neg);         // m or -m, in [-32767, 32767]
}

inline half ExtremumOfHalf(const half* ph, uint32_t n, RedKind k, bool wantIndex, uint32_t* index) {
  const uint16_t* p = reinterpret_cast<const uint16_t*>(ph);
  int16_t acc[8];  // int16 keys: SSE2's pmaxsw/pminsw vectorise the loops
  const uint32_t w = n < 8 ? n : 8;
  for (uint32_t j = 0; j < 8; ++j) acc[j] = HalfKey(p[j < w ? j : 0]);  // accumulators >= w stay unused
  uint32_t e = 8;
  if (k == RedKind::kMax) {
    for (; e + 8 <= n; e += 8) {
      for (uint32_t j = 0; j < 8; ++j) {
        const int16_t x = HalfKey(p[e + j]);
        acc[j] = x > acc[j] ? x : acc[j];
      }
    }
  } else {
    for (; e + 8 <= n; e += 8) {
      for (uint32_t j = 0; j < 8; ++j) {
        const int16_t x = HalfKey(p[e + j]);
        acc[j] = x < acc[j] ? x : acc[j];
      }
    }
  }
  for (; e < n; ++e) {
    const int16_t x = HalfKey(p[e]);
    if (k == RedKind::kMax ? x > acc[e % 8] : x < acc[e % 8]) acc[e % 8] = x;
  }
  int32_t best = acc[0];
  for (uint32_t j = 1; j < w; ++j) {
    if (k == RedKind::kMax ? acc[j] > best : acc[j] < best) best = acc[j];
  }
  *index = 0;
  if (wantIndex || best == 0) {
    for (uint32_t i = 0; i < n; ++i) {
      if (HalfKey(p[i]) == best) {
        *index = i;
        return ph[i];
      }
    }
  }
  half out;
  out.amct_bits = static_cast<uint16_t>(best < 0 ? (0x8000 | -best) : best);
  return out;
}

// ExtremumOf for float rows of whole 8-lane groups without the index: the same lane-wise
// accumulation (acc[j] over lanes j, j + 8, ...; then acc[0..7] in order), in registers.
template <class Better>
AMCT_SIM_INLINE float FoldRows8(const float* p, uint32_t n, Better better) {
  float acc[8];
  for (uint32_t j = 0; j < 8; ++j) acc[j] = p[j];
  for (uint32_t e = 8; e < n; e += 8) {
    for (uint32_t j = 0; j < 8; ++j) acc[j] = better(p[e + j], acc[j]) ? p[e + j] : acc[j];
  }
  float best = acc[0];
  for (uint32_t j = 1; j < 8; ++j) best = better(acc[j], best) ? acc[j] : best;
  return best;
}

inline float ExtremumOfRows8(const float* p, uint32_t n, RedKind k, uint32_t* index) {
  const float best = k == RedKind::kMax ? FoldRows8(p, n, [](float a, float b) { return a > b; })
                                        : FoldRows8(p, n, [](float a, float b) { return a < b; });
  *index = 0;
  if (best == 0.0f) {  // the zero as stored (its sign): the first lane equal to it
    for (uint32_t i = 0; i < n; ++i) {
      if (p[i] == best) {
        *index = i;
        return p[i];
      }
    }
  }
  return best;
}

template <class T>
inline T ExtremumOf(const T* p, uint32_t n, RedKind k, bool wantIndex, uint32_t* index) {
  if constexpr (std::is_same<T, half>::value) return ExtremumOfHalf(p, n, k, wantIndex, index);
  using A = Arith<T>;
  using C = typename A::C;
  if constexpr (std::is_same<T, float>::value) {
    if (n % 8 == 0 && n != 0 && !wantIndex) return ExtremumOfRows8(p, n, k, index);
  }
  C acc[8];
  const uint32_t w = n < 8 ? n : 8;
  for (uint32_t j = 0; j < 8; ++j) acc[j] = A::Load(p[j < w ? j : 0]);  // accumulators >= w stay unused
  uint32_t e = 8;
  if (k == RedKind::kMax) {
    for (; e + 8 <= n; e += 8) {
      for (uint32_t j = 0; j < 8; ++j) {
        const C x = A::Load(p[e + j]);
        acc[j] = x > acc[j] ? x : acc[j];
      }
    }
  } else {
    for (; e + 8 <= n; e += 8) {
      for (uint32_t j = 0; j < 8; ++j) {
        const C x = A::Load(p[e + j]);
        acc[j] = x < acc[j] ? x : acc[j];
      }
    }
  }
  for (; e < n; ++e) {
    const C x = A::Load(p[e]);
    if (k == RedKind::kMax ? x > acc[e % 8] : x < acc[e % 8]) acc[e % 8] = x;
  }
  C best = acc[0];
  for (uint32_t j = 1; j < w; ++j) {
    if (k == RedKind::kMax ? acc[j] > best : acc[j] < best) best = acc[j];
  }
  *index = 0;
  if (wantIndex || best == C(0)) {
    for (uint32_t i = 0; i < n; ++i) {
      if (A::Load(p[i]) == best) {
        *index = i;
        return p[i];
      }
    }
  }
  return A::Store(best);
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
  AMCT_SIM_COST(c->cost, Vector(api, sz, R));
  UbReadShape(c, seq, s, ss, api);
  UbWriteShape(c, seq, d, ds, api);
  AMCT_SIM_BARRIER();
  using Idx = std::conditional_t<sz == 2, uint16_t, uint32_t>;
  T lanes[E];
  // Fast path of Max/Min: lanes 0..count-1 of contiguous blocks (a count mask, srcBlkStride 1).
  uint32_t count = 0;
  while (count < E && m.Lane(count)) ++count;
  const FpModes modes = kIsFloatLike<T> ? FpModesOf(c) : FpModes{false, false};
  bool prefix = !modes.Any() && k != RedKind::kSum && ss.blkStride == 32;
  for (uint32_t i = count; i < E && prefix; ++i) prefix = !m.Lane(i);
  for (uint32_t r = 0; r < R; ++r) {
    uint32_t at = 0;
    T v;
    if (prefix) {
      const T* p = reinterpret_cast<const T*>(s.ptr + r * ss.repStride);
      v = ExtremumOf<T>(p, count, k, order != AscendC::ReduceOrder::ORDER_ONLY_VALUE, &at);
    } else {
      // the repeat's E lanes, block by block (srcBlkStride may spread them)
      for (uint32_t b = 0; b < 8; ++b) {
        std::memcpy(&lanes[b * B], s.ptr + r * ss.repStride + b * ss.blkStride, 32);
      }
      if (__builtin_expect(modes.Any(), 0)) ApplyModesInPlace<T>(lanes, E, modes, false);
      v = Arith<T>::Store(ReduceLanes<T>(lanes, m.bits[0], m.bits[1], E, k, &at));
      if (__builtin_expect(modes.Any(), 0)) v = ApplyModes<T>(v, modes, true);
    }
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

namespace amct_sim {
namespace detail {
template <AscendC::ReduceType r, class T, class U>
constexpr bool kNewReduceOk = (r == AscendC::ReduceType::SUM || r == AscendC::ReduceType::MAX ||
                               r == AscendC::ReduceType::MIN) && std::is_same<T, U>::value;
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

// ---- CANN >= 9.1 names (kernel_operator_vec_reduce_intf.h): ReduceDataBlock = BlockReduce*,
// ReduceRepeat = WholeReduce*, both with the mask before repeatTime. T is dst's type and U src's;
// the subset has T == U (as the real header requires for these arches' MAX/MIN). ----------------
#define AMCT_SIM_REDUCE_DATA_BLOCK(MASK_DECL)                                                                  \
  template <ReduceType reduceType, typename T, typename U, bool isSetMask = true>                            \
  __aicore__ AMCT_SIM_INLINE void ReduceDataBlock(const LocalTensor<T>& dst, const LocalTensor<U>& src,        \
                                                  MASK_DECL, const int32_t repeatTime,                         \
                                                  const int32_t dstRepStride, const int32_t srcBlkStride,      \
                                                  const int32_t srcRepStride) {                                \
    static_assert(amct_sim::detail::kNewReduceOk<reduceType, T, U>,                                            \
                  "ReduceDataBlock: reduceType SUM/MAX/MIN with identical src and dst types");                 \
    if constexpr (amct_sim::detail::kNewReduceOk<reduceType, T, U>) {                                          \
      if constexpr (reduceType == ReduceType::SUM) {                                                           \
        BlockReduceSum<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);    \
      } else if constexpr (reduceType == ReduceType::MAX) {                                                    \
        BlockReduceMax<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);    \
      } else {                                                                                                 \
        BlockReduceMin<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);    \
      }                                                                                                        \
    }                                                                                                          \
  }
AMCT_SIM_REDUCE_DATA_BLOCK(const int32_t mask)
AMCT_SIM_REDUCE_DATA_BLOCK(const uint64_t mask[])
#undef AMCT_SIM_REDUCE_DATA_BLOCK

#define AMCT_SIM_REDUCE_REPEAT(MASK_DECL)                                                                      \
  template <ReduceType reduceType, typename T, typename U, bool isSetMask = true>                            \
  __aicore__ AMCT_SIM_INLINE void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, MASK_DECL, \
                                               const int32_t repeatTime, const int32_t dstRepStride,           \
                                               const int32_t srcBlkStride, const int32_t srcRepStride,         \
                                               ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {           \
    static_assert(amct_sim::detail::kNewReduceOk<reduceType, T, U>,                                            \
                  "ReduceRepeat: reduceType SUM/MAX/MIN with identical src and dst types");                    \
    if constexpr (amct_sim::detail::kNewReduceOk<reduceType, T, U>) {                                          \
      if constexpr (reduceType == ReduceType::SUM) {                                                           \
        (void)order; /* SUM has no order */                                                                    \
        WholeReduceSum<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride);    \
      } else if constexpr (reduceType == ReduceType::MAX) {                                                    \
        WholeReduceMax<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride,     \
                                     order);                                                                   \
      } else {                                                                                                 \
        WholeReduceMin<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride,     \
                                     order);                                                                   \
      }                                                                                                        \
    }                                                                                                          \
  }
AMCT_SIM_REDUCE_REPEAT(const int32_t mask)
AMCT_SIM_REDUCE_REPEAT(const uint64_t mask[])
#undef AMCT_SIM_REDUCE_REPEAT

}  // namespace AscendC
