// amct kernel sim: Brcb, Gather and GatherMask.
// One set of checks per call, then plain loops.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include <cstring>
#include <vector>

#include "sim_memory.h"
#include "sim_repeat.h"
#include "sim_vector.h"

namespace AscendC {

// Field order differs from the constructor's argument order (as upstream).
struct BrcbRepeatParams {
  BrcbRepeatParams() {}
  BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn) {
    dstBlkStride = dstBlkStrideIn;
    dstRepStride = dstRepStrideIn;
  }
  uint32_t blockNumber = 8;
  uint16_t dstRepStride = 8;
  uint16_t dstBlkStride = 1;
  uint8_t src0BlkStride = 1;
  uint8_t src1BlkStride = 1;
  uint8_t src0RepStride = 8;
  uint8_t src1RepStride = 8;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };  // reserved
#if __NPU_ARCH__ == 3510
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V1;
#else
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V2;
#endif

struct GatherMaskParams {
  GatherMaskParams() {}
  GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn, const uint16_t src0RepeatStrideIn,
                   const uint8_t src1RepeatStrideIn) {
    src0BlockStride = src0BlockStrideIn;
    repeatTimes = repeatTimesIn;
    src0RepeatStride = src0RepeatStrideIn;
    src1RepeatStride = src1RepeatStrideIn;
  }
  uint8_t src0BlockStride = 1;
  uint16_t repeatTimes = 0;
  uint16_t src0RepeatStride = 8;
  uint8_t src1RepeatStride = 8;
};

}  // namespace AscendC

namespace amct_sim {
namespace api {
AMCT_SIM_API_TAG(Brcb)
AMCT_SIM_API_TAG(Gather)
AMCT_SIM_API_TAG(GatherMask)
}  // namespace api

namespace detail {

// ---- per-arch dtype tables -----------------------------------------------------------------
template <class T>
constexpr bool kBrcbOk = kIsOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float> ||
                         (kArch3510 && kIsOneOf<T, int8_t, uint8_t, int64_t, uint64_t>);
template <class T>
constexpr bool kGatherOk = kIsOneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float> ||
                           (kArch3510 && kIsOneOf<T, int8_t, uint8_t>);

// Same-size unsigned type: loops copy bit patterns (no per-element memcpy through bytes).
template <class T>
using BitsOf = std::conditional_t<sizeof(T) == 1, uint8_t,
                                  std::conditional_t<sizeof(T) == 2, uint16_t,
                                                     std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

// Brcb: repeat i, j in [0, 8): src0[8i + j] fills the 32-B block at dst byte
// 32 * (i * dstRepStride + j * dstBlkStride) (dstBlkStride 0 means 1).
template <class T>
inline void BrcbImpl(Opnd d, Opnd s, uint8_t repeatTime, const AscendC::BrcbRepeatParams& p) {
  static const char* const kApi = "Brcb";
  BlockCtx* c = Ctx(kApi);
  using W = BitsOf<T>;
  constexpr uint32_t B = kBlockLanes<T>;
  const uint32_t R = repeatTime;
  const uint32_t blk = p.dstBlkStride == 0 ? 1u : p.dstBlkStride;
  StridedShape ds;
  ds.repeats = R;
  ds.repStride = 32ull * p.dstRepStride;
  ds.blkStride = 32ull * blk;
  ShapeFull(ds);
  s.usedBytes = static_cast<uint64_t>(8) * R * sizeof(T);
  d.usedBytes = ds.Extent();
  CheckOpnd(c, kApi, s);
  CheckOpnd(c, kApi, d);
  CheckDisjoint(kApi, d, s);
  if (R == 0) return;
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, Vector(kApi, sizeof(T), R));
  UbRead(c, kPipeV, seq, s.off, static_cast<uint32_t>(s.usedBytes), kApi);
  UbWriteShape(c, seq, d, ds, kApi);
  AMCT_SIM_BARRIER();
  const W* src = reinterpret_cast<const W*>(s.ptr);
  if (blk == 1 && p.dstRepStride == 8) {  // dst element k*B + e = src[k]: contiguous
    W* dst = reinterpret_cast<W*>(d.ptr);
    const uint32_t n = 8 * R;
    for (uint32_t k = 0; k < n; ++k) {
      const W v = src[k];
      W* o = dst + static_cast<size_t>(k) * B;
      for (uint32_t e = 0; e < B; ++e) o[e] = v;
    }
  } else {
    for (uint32_t i = 0; i < R; ++i) {
      for (uint32_t j = 0; j < 8; ++j) {
        const W v = src[8 * i + j];
        W* o = reinterpret_cast<W*>(d.ptr + ds.repStride * i + ds.blkStride * j);
        for (uint32_t e = 0; e < B; ++e) o[e] = v;
      }
    }
  }
  AMCT_SIM_BARRIER();
}

[[noreturn]] __attribute__((noinline, cold)) inline void GatherOffsetFail(const uint32_t* off, uint32_t count,
                                                                          uint32_t base, uint64_t srcBytes,
                                                                          uint32_t sz) {
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t at = static_cast<uint64_t>(base) + off[i];
    if (at % sz != 0) {
      Fail("Gather", Fmt("parameters: srcBaseAddr %u + srcOffset[%u] = %u is not a multiple of sizeof(T) = %u "
                         "(byte offsets)",
                         base, i, off[i], sz));
    }
    if (at + sz > srcBytes) {
      Fail("Gather", Fmt("bounds: srcBaseAddr %u + srcOffset[%u] = %u reads bytes [%llu, %llu) outside src's %llu "
                         "bytes",
                         base, i, off[i], static_cast<unsigned long long>(at),
                         static_cast<unsigned long long>(at + sz), static_cast<unsigned long long>(srcBytes)));
    }
  }
  Fail("Gather", "parameters: internal error locating a bad offset");
}

// Gather: dst[i] = the T at byte srcBaseAddr + srcOffset[i] of src.
template <class T>
inline void GatherImpl(Opnd d, Opnd s, Opnd o, uint32_t srcBaseAddr, uint32_t count) {
  static const char* const kApi = "Gather";
  BlockCtx* c = Ctx(kApi);
  using W = BitsOf<T>;
  constexpr uint32_t sz = sizeof(T);
  CheckCount(kApi, count);
  if (kArch2201 && count >= 256u * kRepeatLanes<T>) {
    Fail(kApi, Fmt("parameters: count %u is not below 256 * %u on dav-2201", count, kRepeatLanes<T>));
  }
  d.usedBytes = static_cast<uint64_t>(count) * sz;
  o.usedBytes = static_cast<uint64_t>(count) * 4;
  CheckOpnd(c, kApi, d);
  CheckOpnd(c, kApi, o);
  s.usedBytes = 0;
  CheckOpnd(c, kApi, s);  // null / stale / alignment
  const uint32_t* off = reinterpret_cast<const uint32_t*>(o.ptr);
  // One pass over the offsets: range and alignment (vectorisable), then the plain gather.
  // Signed min/max (baseline x86-64 vectorises them; unsigned ones it does not): an offset with
  // bit 31 set shows in the OR and is out of range anyway (UB is < 2^31 bytes).
  const int32_t* offI = reinterpret_cast<const int32_t*>(o.ptr);
  int32_t loI = 0x7FFFFFFF, hiI = 0;
  uint32_t bits = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const int32_t v = offI[i];
    loI = v < loI ? v : loI;
    hiI = v > hiI ? v : hiI;
    bits |= static_cast<uint32_t>(v);
  }
  const uint64_t srcBytes = s.viewBytes;
  if ((bits >> 31) != 0 || ((bits | srcBaseAddr) & (sz - 1)) != 0 ||
      static_cast<uint64_t>(srcBaseAddr) + static_cast<uint32_t>(hiI) + sz > srcBytes) {
    GatherOffsetFail(off, count, srcBaseAddr, srcBytes, sz);
  }
  const uint32_t lo = static_cast<uint32_t>(loI);
  const uint32_t hi = static_cast<uint32_t>(hiI);
  // The footprint actually read: [base + lo, base + hi + sz).
  Opnd sr = s;
  sr.off = s.off + srcBaseAddr + lo;
  sr.usedBytes = static_cast<uint64_t>(hi) - lo + sz;
  CheckDisjoint(kApi, d, sr);
  CheckDisjoint(kApi, d, o);
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, VectorBytes(kApi, 4, static_cast<uint64_t>(count) * 4));
  UbRead(c, kPipeV, seq, o.off, count * 4, kApi);
  UbRead(c, kPipeV, seq, sr.off, static_cast<uint32_t>(sr.usedBytes), kApi);
  UbWrite(c, kPipeV, seq, d.off, count * sz, kApi);
  AMCT_SIM_BARRIER();
  const uint8_t* __restrict base = s.ptr + srcBaseAddr;
  const uint32_t* __restrict offs = off;
  W* __restrict dst = reinterpret_cast<W*>(d.ptr);
  uint32_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const W v0 = *reinterpret_cast<const W*>(base + offs[i]);
    const W v1 = *reinterpret_cast<const W*>(base + offs[i + 1]);
    const W v2 = *reinterpret_cast<const W*>(base + offs[i + 2]);
    const W v3 = *reinterpret_cast<const W*>(base + offs[i + 3]);
    dst[i] = v0;
    dst[i + 1] = v1;
    dst[i + 2] = v2;
    dst[i + 3] = v3;
  }
  for (; i < count; ++i) dst[i] = *reinterpret_cast<const W*>(base + offs[i]);
  AMCT_SIM_BARRIER();
}

// GatherMask, normal mode ([C]): repeat r reads the 8 blocks of src0 at 32 * (r * src0RepeatStride
// + b * src0BlockStride) and appends the lanes whose pattern bit is 1 densely to dst, after those
// of the repeats before it. A user pattern is read per repeat at byte 32 * r * src1RepeatStride
// (CANN's GatherMask page: in the user mode the repeats' patterns lie src1RepeatStride data blocks
// apart; asc-devkit's dav-3510 implementation loads repeat i's at src1 + i * src1RepeatStride
// blocks), so stride 0 reuses one pattern for every repeat.
template <class T>
inline void GatherMaskImpl(Opnd d, Opnd s, const Opnd* pat, uint8_t builtin, bool reduceMode, uint32_t mask,
                           const AscendC::GatherMaskParams& p, uint64_t& rsvdCnt) {
  static const char* const kApi = "GatherMask";
  BlockCtx* c = Ctx(kApi);
  using W = BitsOf<T>;
  constexpr uint32_t E = kRepeatLanes<T>;
  constexpr uint32_t B = kBlockLanes<T>;
  if (reduceMode || mask != 0) {
    Fail(kApi, Fmt("parameters: [C] only the normal mode (reduceMode = false, mask = 0) is in the subset, got "
                   "reduceMode = %d, mask = %u",
                   reduceMode ? 1 : 0, mask));
  }
  CheckRepeatTime(kApi, p.repeatTimes);
  if (pat == nullptr && (builtin < 1 || builtin > 7)) {
    Fail(kApi, Fmt("parameters: built-in src1Pattern %u is not in [1, 7]", builtin));
  }
  const uint32_t R = p.repeatTimes;
  // The pattern of each repeat (E bits): a built-in one, or the user's at byte 32 * r *
  // src1RepeatStride of src1Pattern (one pattern for all repeats when the stride is 0).
  const uint32_t patterns = (pat != nullptr && p.src1RepeatStride != 0 && R > 1) ? R : 1;
  std::vector<LaneMask> masks(patterns);
  LaneMask any;  // the lanes some repeat keeps: the src footprint
  any.lanes = E;
  if (pat == nullptr) {
    LaneMask& m = masks[0];
    m.lanes = E;
    for (uint32_t i = 0; i < E; ++i) {
      bool on = false;
      switch (builtin) {
        case 1: on = (i % 2) == 0; break;
        case 2: on = (i % 2) == 1; break;
        case 7: on = true; break;
        default: on = (i % 4) == static_cast<uint32_t>(builtin - 3); break;  // 3..6: lane 0..3 of each 4
      }
      if (on) m.bits[i >> 6] |= uint64_t{1} << (i & 63);
    }
  }
  Opnd pp = pat != nullptr ? *pat : s;
  const uint64_t patStride = 32ull * p.src1RepeatStride;
  if (pat != nullptr) {
    pp.usedBytes = patStride * (patterns - 1) + E / 8;
    CheckOpnd(c, kApi, pp);
    for (uint32_t r = 0; r < patterns; ++r) {
      masks[r].lanes = E;
      std::memcpy(masks[r].bits, pp.ptr + r * patStride, E / 8);
    }
  }
  uint64_t total = 0;
  for (uint32_t r = 0; r < R; ++r) {
    const LaneMask& m = masks[r < patterns ? r : 0];
    for (uint32_t i = 0; i < E; ++i) total += m.Lane(i) ? 1u : 0u;
  }
  for (const LaneMask& m : masks) any.bits[0] |= m.bits[0], any.bits[1] |= m.bits[1];
  StridedShape ss;
  ss.repeats = R;
  ss.repStride = 32ull * p.src0RepeatStride;
  ss.blkStride = 32ull * p.src0BlockStride;
  ShapeFromMask(ss, any, sizeof(T));
  s.usedBytes = ss.Extent();
  d.usedBytes = total * sizeof(T);
  CheckOpnd(c, kApi, s);
  CheckOpnd(c, kApi, d);
  CheckDisjoint(kApi, d, s);
  if (pat != nullptr) CheckDisjoint(kApi, d, pp);
  rsvdCnt = total;
  if (R == 0 || total == 0) return;
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, Vector(kApi, sizeof(T), R));
  if (pat != nullptr) UbRead(c, kPipeV, seq, pp.off, static_cast<uint32_t>(pp.usedBytes), kApi);
  UbReadShape(c, seq, s, ss, kApi);
  UbWrite(c, kPipeV, seq, d.off, static_cast<uint32_t>(d.usedBytes), kApi);
  AMCT_SIM_BARRIER();
  W* dst = reinterpret_cast<W*>(d.ptr);
  const bool dense = ss.blkStride == 32;
  if (dense && ss.repStride == 256 && pat == nullptr && builtin != 7) {
    // Built-in patterns 1-6 over back-to-back repeats: every 2nd / 4th lane of one run, a
    // strided loop the compiler vectorises.
    const uint32_t step = builtin <= 2 ? 2 : 4;
    const uint32_t lane0 = builtin <= 2 ? builtin - 1u : builtin - 3u;
    const W* src = reinterpret_cast<const W*>(s.ptr) + lane0;
    for (uint64_t k = 0; k < total; ++k) dst[k] = src[static_cast<size_t>(k) * step];
    AMCT_SIM_BARRIER();
    return;
  }
  uint16_t lanes[128];
  uint32_t nk = 0;
  for (uint32_t r = 0; r < R; ++r) {
    if (r < patterns) {  // this repeat's kept lanes
      nk = 0;
      for (uint32_t i = 0; i < E; ++i) {
        if (masks[r].Lane(i)) lanes[nk++] = static_cast<uint16_t>(i);
      }
    }
    const uint8_t* rep = s.ptr + r * ss.repStride;
    if (dense) {
      const W* src = reinterpret_cast<const W*>(rep);
      for (uint32_t k = 0; k < nk; ++k) dst[k] = src[lanes[k]];
    } else {
      for (uint32_t k = 0; k < nk; ++k) {
        const uint32_t i = lanes[k];
        dst[k] = reinterpret_cast<const W*>(rep + (i / B) * ss.blkStride)[i % B];
      }
    }
    dst += nk;
  }
  AMCT_SIM_BARRIER();
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

template <typename T>
__aicore__ AMCT_SIM_INLINE void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t repeatTime,
                                     const BrcbRepeatParams& repeatParams) {
  AMCT_SIM_REQUIRE_DTYPE(Brcb, T, amct_sim::detail::kBrcbOk<T>);
  if constexpr (amct_sim::detail::kBrcbOk<T>) {
    amct_sim::detail::BrcbImpl<T>(amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src0, 0, "src0"), repeatTime, repeatParams);
  }
}

template <typename T>
__aicore__ AMCT_SIM_INLINE void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                       const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseAddr,
                                       const uint32_t count) {
  AMCT_SIM_REQUIRE_DTYPE(Gather, T, amct_sim::detail::kGatherOk<T>);
  if constexpr (amct_sim::detail::kGatherOk<T>) {
    amct_sim::detail::GatherImpl<T>(amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src, 0, "src"),
                                    amct_sim::detail::MakeOpnd(srcOffset, 0, "srcOffset"), srcBaseAddr, count);
  }
}

// User pattern: U = uint16_t / uint32_t for 16- / 32-bit T, LSB first.
template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ AMCT_SIM_INLINE void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                                           const LocalTensor<U>& src1Pattern, const bool reduceMode,
                                           const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                                           uint64_t& rsvdCnt) {
  AMCT_SIM_REQUIRE_DTYPE(GatherMask, T, amct_sim::detail::kGatherOk<T>);
  static_assert(sizeof(U) == sizeof(T) && std::is_unsigned<U>::value && sizeof(U) >= 2,
                "GatherMask: the pattern type U must be uint16_t for 16-bit T and uint32_t for 32-bit T");
  if constexpr (amct_sim::detail::kGatherOk<T>) {
    const amct_sim::detail::Opnd pat = amct_sim::detail::MakeOpnd(src1Pattern, 0, "src1Pattern");
    amct_sim::detail::GatherMaskImpl<T>(amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src0, 0, "src0"), &pat, 0, reduceMode,
                                        mask, gatherMaskParams, rsvdCnt);
  }
}

// Built-in pattern: 1 even lanes, 2 odd lanes, 3..6 lane 0..3 of each 4, 7 all lanes.
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ AMCT_SIM_INLINE void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                                           const uint8_t src1Pattern, const bool reduceMode, const uint32_t mask,
                                           const GatherMaskParams& gatherMaskParams, uint64_t& rsvdCnt) {
  AMCT_SIM_REQUIRE_DTYPE(GatherMask, T, amct_sim::detail::kGatherOk<T>);
  if constexpr (amct_sim::detail::kGatherOk<T>) {
    amct_sim::detail::GatherMaskImpl<T>(amct_sim::detail::MakeOpnd(dst, 0, "dst"), amct_sim::detail::MakeOpnd(src0, 0, "src0"), nullptr, src1Pattern,
                                        reduceMode, mask, gatherMaskParams, rsvdCnt);
  }
}

}  // namespace AscendC
