// amct kernel sim: shared machinery of the repeat forms used by the
// reductions (sim_reduce.h) and Brcb/GatherMask (sim_gather.h): lane masks, the footprint of a
// strided operand (bounds, partial-overlap and hazard bookkeeping over exactly the 32-B blocks
// it touches) and the unit alignment of reduction destinations.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include "sim_memory.h"

namespace amct_sim {
namespace detail {

// Lanes of one 256-B repeat and of one 32-B block.
template <class T>
constexpr uint32_t kRepeatLanes = 256 / static_cast<uint32_t>(sizeof(T));
template <class T>
constexpr uint32_t kBlockLanes = 32 / static_cast<uint32_t>(sizeof(T));

// The active lanes of one repeat: lane i iff bit (i mod 64) of bits[i / 64].
struct LaneMask {
  uint64_t bits[2] = {0, 0};
  uint32_t lanes = 0;  // E
  bool Lane(uint32_t i) const { return ((bits[i >> 6] >> (i & 63)) & 1u) != 0; }
  // Bit e = lane b * B + e, for the B lanes of block b.
  uint32_t BlockBits(uint32_t b, uint32_t perBlock) const {
    uint32_t out = 0;
    for (uint32_t e = 0; e < perBlock; ++e) out |= static_cast<uint32_t>(Lane(b * perBlock + e)) << e;
    return out;
  }
};

// `int32_t mask` (or `uint64_t mask` of the elementwise forms): lanes i < mask, mask in [1, E].
inline LaneMask CountLaneMask(const char* api, int64_t mask, uint32_t lanes) {
  if (mask < 1 || mask > static_cast<int64_t>(lanes)) {
    Fail(api, Fmt("parameters: mask %lld is not in [1, %u] (lanes of one 256-B repeat)", static_cast<long long>(mask),
                  lanes));
  }
  LaneMask m;
  m.lanes = lanes;
  for (uint32_t i = 0; i < static_cast<uint32_t>(mask); ++i) m.bits[i >> 6] |= uint64_t{1} << (i & 63);
  return m;
}

// `uint64_t mask[2]`: 32-bit types use mask[0] only (64 lanes), 16-bit types both words.
inline LaneMask BitLaneMask(const char* api, const uint64_t mask[], uint32_t lanes) {
  if (mask == nullptr) Fail(api, "parameters: mask[] is a null pointer");
  LaneMask m;
  m.lanes = lanes;
  m.bits[0] = mask[0];
  m.bits[1] = lanes > 64 ? mask[1] : 0;
  if (m.bits[0] == 0 && m.bits[1] == 0) Fail(api, "parameters: mask[] selects no lane");
  return m;
}

inline void CheckRepeatTime(const char* api, int64_t repeatTime) {
  if (repeatTime < 0 || repeatTime > 255) {
    Fail(api, Fmt("parameters: repeatTime %lld is not in [0, 255]", static_cast<long long>(repeatTime)));
  }
}

inline void CheckStride(const char* api, const char* name, int64_t stride) {
  if (stride < 0 || stride > 65535) {
    Fail(api, Fmt("parameters: %s %lld is not in [0, 65535]", name, static_cast<long long>(stride)));
  }
}

// The byte ranges of a strided operand: repeat r, block b (b < 8) at
// 32 * (r * repStride + b * blkStride) + first[b] .. + end[b] (bytes within the block); blocks
// with first[b] >= end[b] are not touched.
struct StridedShape {
  uint32_t repeats = 0;
  uint64_t repStride = 0;  // bytes
  uint64_t blkStride = 0;  // bytes
  uint32_t first[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  uint32_t end[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  // Contiguous blocks, every one touched: the hazard model's 32-B granularity sees one range
  // [0, repeats * 256) (masked lanes inside a touched block do not matter to it).
  bool Dense() const {
    if (blkStride != 32 || repStride != 256) return false;
    for (int b = 0; b < 8; ++b) {
      if (first[b] >= end[b]) return false;
    }
    return true;
  }
  // Blocks 0..k-1 of every repeat touched, the others not, and repeats k blocks apart: the
  // footprint is one range [0, repeats * repStride) at the hazard model's 32-B granularity
  // (e.g. a 32-lane WholeReduce of float rows). Returns k, or 0 if the shape is not like that.
  uint32_t ContiguousPrefixBlocks() const {
    if (blkStride != 32) return 0;
    uint32_t k = 0;
    while (k < 8 && first[k] < end[k]) ++k;
    for (uint32_t b = k; b < 8; ++b) {
      if (first[b] < end[b]) return 0;
    }
    return k != 0 && repStride == 32ull * k ? k : 0;
  }
  // One past the last byte touched (0 if nothing is).
  uint64_t Extent() const {
    if (repeats == 0) return 0;
    uint64_t hi = 0;
    for (int b = 0; b < 8; ++b) {
      if (first[b] >= end[b]) continue;
      const uint64_t e = (repeats - 1) * repStride + b * blkStride + end[b];
      if (e > hi) hi = e;
    }
    return hi;
  }
};

// The blocks of a repeat touched by the active lanes of `m` (element size sz).
inline void ShapeFromMask(StridedShape& s, const LaneMask& m, uint32_t sz) {
  const uint32_t perBlock = 32 / sz;
  for (uint32_t b = 0; b < 8; ++b) {
    const uint32_t bits = m.BlockBits(b, perBlock);
    if (bits == 0) {
      s.first[b] = s.end[b] = 0;
      continue;
    }
    s.first[b] = static_cast<uint32_t>(__builtin_ctz(bits)) * sz;
    s.end[b] = (32u - static_cast<uint32_t>(__builtin_clz(bits))) * sz;
  }
}

inline void ShapeFull(StridedShape& s) {
  for (int b = 0; b < 8; ++b) {
    s.first[b] = 0;
    s.end[b] = 32;
  }
}

// Calls mark(offset, bytes) for the touched 32-B blocks (the hazard model's unit), merging
// adjacent ones into runs. base is 32-B aligned (CheckOpnd / the reduction unit rules).
template <class Mark>
inline void ForEachRange(const StridedShape& s, uint32_t base, Mark mark) {
  if (s.repeats == 0) return;
  if (s.Dense() || s.ContiguousPrefixBlocks() != 0) {
    mark(base, static_cast<uint32_t>(s.repeats * s.repStride));
    return;
  }
  if (s.blkStride == 0 && s.first[0] == 0 && s.end[0] == s.repStride) {  // back-to-back records
    bool one = true;
    for (int b = 1; b < 8; ++b) one = one && s.first[b] >= s.end[b];
    if (one) {
      mark(base, static_cast<uint32_t>(s.repeats * s.repStride));
      return;
    }
  }
  const uint64_t b0 = base;
  uint64_t runLo = 0, runHi = 0;  // absolute bytes, multiples of 32
  bool open = false;
  for (uint32_t r = 0; r < s.repeats; ++r) {
    for (uint32_t b = 0; b < 8; ++b) {
      if (s.first[b] >= s.end[b]) continue;
      const uint64_t at = b0 + r * s.repStride + b * s.blkStride;
      const uint64_t lo = (at + s.first[b]) & ~uint64_t{31};
      const uint64_t hi = (at + s.end[b] + 31) & ~uint64_t{31};
      if (open && lo <= runHi && hi >= runLo) {
        if (lo < runLo) runLo = lo;
        if (hi > runHi) runHi = hi;
        continue;
      }
      if (open) mark(static_cast<uint32_t>(runLo), static_cast<uint32_t>(runHi - runLo));
      runLo = lo;
      runHi = hi;
      open = true;
    }
  }
  if (open) mark(static_cast<uint32_t>(runLo), static_cast<uint32_t>(runHi - runLo));
}

inline void UbReadShape(BlockCtx* c, uint32_t seq, const Opnd& o, const StridedShape& s, const char* api) {
  if (!c->checkSync) return;
  ForEachRange(s, o.off, [&](uint32_t off, uint32_t bytes) { UbRead(c, kPipeV, seq, off, bytes, api); });
}

inline void UbWriteShape(BlockCtx* c, uint32_t seq, const Opnd& o, const StridedShape& s, const char* api) {
  if (!c->checkSync) return;
  ForEachRange(s, o.off, [&](uint32_t off, uint32_t bytes) { UbWrite(c, kPipeV, seq, off, bytes, api); });
}

// CheckOpnd with the alignment of a reduction destination (the record unit, not 32 B).
[[noreturn]] __attribute__((noinline, cold)) inline void UnitAlignFail(const char* api, const Opnd& o,
                                                                       uint64_t off, uint32_t unit) {
  Fail(api, Fmt("alignment: %s starts at UB offset %llu, not a multiple of its %u-byte unit",
                o.role, static_cast<unsigned long long>(off), unit));
}

inline void CheckOpndUnit(BlockCtx* c, const char* api, Opnd& o, uint32_t unit) {
  const bool bad = o.ptr == nullptr || o.bufId < 0 || static_cast<size_t>(o.bufId) >= c->bufGen.size() ||
                   c->bufGen[o.bufId] != o.gen || o.usedBytes > o.viewBytes;
  const uint64_t off = static_cast<uint64_t>(o.ptr - c->ub);
  if (__builtin_expect(bad, 0)) {
    // OpndFail reports null/stale/bounds; make sure it does not stop at the 32-B alignment rule.
    if (o.ptr != nullptr && o.bufId >= 0 && static_cast<size_t>(o.bufId) < c->bufGen.size() &&
        c->bufGen[o.bufId] == o.gen) {
      Fail(api, Fmt("bounds: %s needs %llu elements (%llu bytes) but its view holds %llu elements", o.role,
                    static_cast<unsigned long long>((o.usedBytes + o.elemSize - 1) / o.elemSize),
                    static_cast<unsigned long long>(o.usedBytes),
                    static_cast<unsigned long long>(o.viewBytes / o.elemSize)));
    }
    OpndFail(c, api, o);
  }
  if (__builtin_expect(off % unit != 0, 0)) UnitAlignFail(api, o, off, unit);
  o.off = static_cast<uint32_t>(off);
}

// No overlap at all between two footprints (hulls): reductions, Brcb, Gather and GatherMask read
// and write different layouts, so even a same-start alias is rejected (stricter than the
// documented overlap rule of the repeat forms).
inline void CheckDisjoint(const char* api, const Opnd& d, const Opnd& s) {
  const uint64_t d0 = d.off, d1 = d.off + d.usedBytes, s0 = s.off, s1 = s.off + s.usedBytes;
  if (d.usedBytes != 0 && s.usedBytes != 0 && d0 < s1 && s0 < d1) {
    Fail(api, Fmt("parameters: %s UB bytes [%llu, %llu) overlap %s bytes [%llu, %llu) (this API's destination "
                  "must not overlap its sources)",
                  d.role, static_cast<unsigned long long>(d0), static_cast<unsigned long long>(d1), s.role,
                  static_cast<unsigned long long>(s0), static_cast<unsigned long long>(s1)));
  }
}

}  // namespace detail
}  // namespace amct_sim
