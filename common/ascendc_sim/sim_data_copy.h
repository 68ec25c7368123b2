// amct kernel sim: DataCopy / DataCopyPad.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include "sim_memory.h"

namespace amct_sim {
namespace detail {
#if __NPU_ARCH__ == 3510
using DataCopyStride = int64_t;
#else
using DataCopyStride = uint32_t;
#endif
}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

struct DataCopyParams {
  DataCopyParams() {}
  DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn) {
    blockCount = count;
    blockLen = len;
    srcStride = srcStrideIn;
    dstStride = dstStrideIn;
  }
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;  // 32-B units
  union {
    uint16_t srcGap = 0;
    uint16_t srcStride;
  };
  union {
    uint16_t dstGap = 0;
    uint16_t dstStride;
  };
};

// srcStride/dstStride: uint32_t on dav-2201, int64_t on dav-3510.
struct DataCopyExtParams {
  DataCopyExtParams() {}
  DataCopyExtParams(const uint16_t count, const uint32_t len, const amct_sim::detail::DataCopyStride srcStrideIn,
                    const amct_sim::detail::DataCopyStride dstStrideIn, const uint32_t rsvIn) {
    blockCount = count;
    blockLen = len;
    srcStride = srcStrideIn;
    dstStride = dstStrideIn;
    rsv = rsvIn;
  }
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;  // bytes
  amct_sim::detail::DataCopyStride srcStride = 0;
  amct_sim::detail::DataCopyStride dstStride = 0;
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() {}
  DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, T padValue) {
    isPad = isPadValue;
    leftPadding = leftPadValue;
    rightPadding = rightPadValue;
    paddingValue = padValue;
  }
  bool isPad = false;
  uint8_t leftPadding = 0;   // elements
  uint8_t rightPadding = 0;  // elements
  T paddingValue{};
};

#if __NPU_ARCH__ == 3510
enum class PaddingMode : uint8_t { Normal = 0, Compact };
#endif

}  // namespace AscendC

namespace amct_sim {
namespace detail {

// A GlobalTensor operand, type-erased.
struct GmOpnd {
  uintptr_t base;
  uintptr_t extLo;
  uintptr_t extHi;
  bool set;
};

template <class T>
inline GmOpnd MakeGm(const AscendC::GlobalTensor<T>& g) {
  return GmOpnd{TensorAccess::GmBase(g), TensorAccess::GmExtLo(g), TensorAccess::GmExtHi(g), TensorAccess::GmSet(g)};
}

template <class T>
inline void CheckDmaType(const char*) {
  static_assert(std::is_trivially_copyable<T>::value && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 ||
                                                         sizeof(T) == 8),
                "DataCopy/DataCopyPad: T must be a 1-, 2-, 4- or 8-byte trivially copyable type");
}

inline void CheckGmSet(const char* api, const GmOpnd& g) {
  if (!g.set) Fail(api, "GlobalTensor used before SetGlobalBuffer");
}

inline void CheckGmAligned(const char* api, const GmOpnd& g, uint32_t elemSize) {
  if (g.base % elemSize != 0) {
    Fail(api, Fmt("alignment: GM address %#llx is not a multiple of sizeof(T) = %u",
                  static_cast<unsigned long long>(g.base), elemSize));
  }
}

inline void CheckLoadPosition(const char* api, const Opnd& dst) {
  if (dst.pos == static_cast<uint8_t>(AscendC::TPosition::VECCALC)) {
    Fail(api, "GM->UB DMA into a VECCALC tensor is not a documented path: load into a TQue<VECIN> block or a "
              "TBuf<TPosition::VECIN>");
  }
}

// Checks and (unless NOP) validates the operand; a NOP still needs a live, aligned tensor.
inline void CheckNopOperand(BlockCtx* c, const char* api, Opnd& o) {
  o.usedBytes = 0;
  CheckOpnd(c, api, o);
}

// GM -> UB: `rows` bursts of rowBytes from GM base + i*gmPitch to UB dst + i*ubPitch, each UB
// slot ubSlot bytes: [padL][data][padR][tail], padL/padR/tail filled per `fill`.
struct PadFill {
  uint32_t leftBytes = 0;
  uint32_t rightBytes = 0;
  int mode = 0;                // 0: no padding (DataCopy); 1: pad value; 2: first element; 3: undefined (poison)
  const uint8_t* value = nullptr;  // one element (mode 1)
  uint32_t elemSize = 1;
  uint8_t poison = 0xFF;
};

inline void FillPattern(uint8_t* dst, uint64_t bytes, const uint8_t* elem, uint32_t elemSize) {
  for (uint64_t i = 0; i + elemSize <= bytes; i += elemSize) std::memcpy(dst + i, elem, elemSize);
}

inline void DmaGmToUb(BlockCtx* c, const char* api, Opnd& dst, const GmOpnd& src, uint32_t rows, uint64_t rowBytes,
                      uint64_t gmPitch, uint64_t ubPitch, uint64_t ubSlot, const PadFill& fill) {
  CheckLoadPosition(api, dst);
  dst.usedBytes = static_cast<uint64_t>(rows - 1) * ubPitch + ubSlot;
  CheckOpnd(c, api, dst);
  const uintptr_t lo = src.base;
  const uintptr_t hi = src.base + static_cast<uint64_t>(rows - 1) * gmPitch + rowBytes;
  GmCheckExtent(api, lo, hi, src.extLo, src.extHi);
  const RegionInfo* region = GmFindRegion(c, api, lo, hi, false);
  const uint32_t seq = BeginOp(c, kPipeMte2);
  AMCT_SIM_COST(c->cost, Dma(kPipeMte2, rows, rowBytes));
  for (uint32_t i = 0; i < rows; ++i) UbWrite(c, kPipeMte2, seq, static_cast<uint32_t>(dst.off + i * ubPitch),
                                              static_cast<uint32_t>(ubSlot), api);
  GmDmaAccess(c, region, kPipeMte2, seq, lo, rowBytes, gmPitch, rows, api);
  AMCT_SIM_BARRIER();
  for (uint32_t i = 0; i < rows; ++i) {
    uint8_t* slot = dst.ptr + i * ubPitch;
    const uint8_t* g = reinterpret_cast<const uint8_t*>(lo + i * gmPitch);
    std::memcpy(slot + fill.leftBytes, g, rowBytes);
    if (fill.mode == 0) continue;
    const uint64_t tailStart = fill.leftBytes + rowBytes + fill.rightBytes;
    if (fill.mode == 1) {
      FillPattern(slot, fill.leftBytes, fill.value, fill.elemSize);
      FillPattern(slot + fill.leftBytes + rowBytes, ubSlot - fill.leftBytes - rowBytes, fill.value, fill.elemSize);
    } else if (fill.mode == 2) {
      FillPattern(slot + tailStart, ubSlot - tailStart, slot, fill.elemSize);
    } else {
      std::memset(slot, fill.poison, fill.leftBytes);
      std::memset(slot + fill.leftBytes + rowBytes, fill.poison, ubSlot - fill.leftBytes - rowBytes);
    }
  }
  AMCT_SIM_BARRIER();
}

// UB -> GM: `rows` bursts of rowBytes from UB src + i*ubPitch to GM base + i*gmPitch.
inline void DmaUbToGm(BlockCtx* c, const char* api, const GmOpnd& dst, Opnd& src, uint32_t rows, uint64_t rowBytes,
                      uint64_t gmPitch, uint64_t ubPitch) {
  src.usedBytes = static_cast<uint64_t>(rows - 1) * ubPitch + rowBytes;
  CheckOpnd(c, api, src);
  const uintptr_t lo = dst.base;
  const uintptr_t hi = dst.base + static_cast<uint64_t>(rows - 1) * gmPitch + rowBytes;
  GmCheckExtent(api, lo, hi, dst.extLo, dst.extHi);
  const RegionInfo* region = GmFindRegion(c, api, lo, hi, true);
  const uint32_t seq = BeginOp(c, kPipeMte3);
  AMCT_SIM_COST(c->cost, Dma(kPipeMte3, rows, rowBytes));
  for (uint32_t i = 0; i < rows; ++i) UbRead(c, kPipeMte3, seq, static_cast<uint32_t>(src.off + i * ubPitch),
                                             static_cast<uint32_t>(rowBytes), api);
  GmDmaAccess(c, region, kPipeMte3, seq, lo, rowBytes, gmPitch, rows, api);
  AMCT_SIM_BARRIER();
  for (uint32_t i = 0; i < rows; ++i) {
    std::memcpy(reinterpret_cast<uint8_t*>(lo + i * gmPitch), src.ptr + i * ubPitch, rowBytes);
  }
  AMCT_SIM_BARRIER();
}

inline uint64_t DataCopyCountBytes(const char* api, uint32_t count, uint32_t elemSize) {
  if (count == 0) Fail(api, "parameters: count must be > 0 ([C] DataCopy count 0 is forbidden)");
  const uint64_t bytes = static_cast<uint64_t>(count) * elemSize;
  if (bytes % 32 != 0) {
    Fail(api, Fmt("parameters: count*sizeof(T) = %u*%u = %llu bytes is not a multiple of 32 (the NPU would round "
                  "down silently; use DataCopyPad for non-32-B tails)",
                  count, elemSize, static_cast<unsigned long long>(bytes)));
  }
  if (bytes / 32 > 65535) {
    Fail(api, Fmt("parameters: count*sizeof(T) = %llu bytes exceeds 65535 blocks of 32 B",
                  static_cast<unsigned long long>(bytes)));
  }
  return bytes;
}

template <class S>
inline bool IsNegative(S v) {
  if constexpr (std::is_signed<S>::value) {
    return v < 0;
  } else {
    return false;
  }
}

inline void CheckParamsRange(const char* api, const AscendC::DataCopyParams& p) {
  if (p.blockCount > 4095) Fail(api, Fmt("parameters: blockCount %u is not in [0, 4095]", p.blockCount));
}

inline void CheckExtRange(const char* api, const AscendC::DataCopyExtParams& p, uint32_t elemSize) {
  if (p.blockCount > 4095) Fail(api, Fmt("parameters: blockCount %u is not in [0, 4095]", p.blockCount));
  if (p.blockLen > 2097151) Fail(api, Fmt("parameters: blockLen %u bytes is not in [0, 2097151]", p.blockLen));
  if (p.blockLen % elemSize != 0) {
    Fail(api, Fmt("parameters: blockLen %u bytes is not a multiple of sizeof(T) = %u", p.blockLen, elemSize));
  }
  if (IsNegative(p.srcStride) || IsNegative(p.dstStride)) {
    Fail(api, Fmt("parameters: negative strides (%lld, %lld) are not in the subset",
                  static_cast<long long>(p.srcStride), static_cast<long long>(p.dstStride)));
  }
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

// GM -> UB (MTE2), count elements; count*sizeof(T) % 32 == 0.
template <typename T>
__aicore__ AMCT_SIM_INLINE void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
  using namespace amct_sim::detail;
  static const char* const kApi = "DataCopy(GM->UB)";
  CheckDmaType<T>(kApi);
  BlockCtx* c = Ctx(kApi);
  const uint64_t bytes = DataCopyCountBytes(kApi, count, sizeof(T));
  const GmOpnd g = MakeGm(src);
  CheckGmSet(kApi, g);
  CheckGmAligned(kApi, g, sizeof(T));
  Opnd d = MakeOpnd(dst, 0, "dst");
  DmaGmToUb(c, kApi, d, g, 1, bytes, bytes, bytes, bytes, PadFill{});
}

// UB -> GM (MTE3), count elements; count*sizeof(T) % 32 == 0.
template <typename T>
__aicore__ AMCT_SIM_INLINE void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  using namespace amct_sim::detail;
  static const char* const kApi = "DataCopy(UB->GM)";
  CheckDmaType<T>(kApi);
  BlockCtx* c = Ctx(kApi);
  const uint64_t bytes = DataCopyCountBytes(kApi, count, sizeof(T));
  const GmOpnd g = MakeGm(dst);
  CheckGmSet(kApi, g);
  CheckGmAligned(kApi, g, sizeof(T));
  Opnd s = MakeOpnd(src, 0, "src");
  DmaUbToGm(c, kApi, g, s, 1, bytes, bytes, bytes);
}

// GM -> UB, blockCount bursts of blockLen*32 bytes; gaps in 32-B units on both sides.
template <typename T>
__aicore__ AMCT_SIM_INLINE void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                const DataCopyParams& repeatParams) {
  using namespace amct_sim::detail;
  static const char* const kApi = "DataCopy(GM->UB, DataCopyParams)";
  CheckDmaType<T>(kApi);
  BlockCtx* c = Ctx(kApi);
  CheckParamsRange(kApi, repeatParams);
  const GmOpnd g = MakeGm(src);
  CheckGmSet(kApi, g);
  CheckGmAligned(kApi, g, sizeof(T));
  Opnd d = MakeOpnd(dst, 0, "dst");
  if (repeatParams.blockCount == 0 || repeatParams.blockLen == 0) {
    CheckNopOperand(c, kApi, d);
    return;
  }
  const uint64_t row = 32ull * repeatParams.blockLen;
  DmaGmToUb(c, kApi, d, g, repeatParams.blockCount, row, row + 32ull * repeatParams.srcGap,
            row + 32ull * repeatParams.dstGap, row, PadFill{});
}

// UB -> GM, blockCount bursts of blockLen*32 bytes; gaps in 32-B units on both sides.
template <typename T>
__aicore__ AMCT_SIM_INLINE void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                const DataCopyParams& repeatParams) {
  using namespace amct_sim::detail;
  static const char* const kApi = "DataCopy(UB->GM, DataCopyParams)";
  CheckDmaType<T>(kApi);
  BlockCtx* c = Ctx(kApi);
  CheckParamsRange(kApi, repeatParams);
  const GmOpnd g = MakeGm(dst);
  CheckGmSet(kApi, g);
  CheckGmAligned(kApi, g, sizeof(T));
  Opnd s = MakeOpnd(src, 0, "src");
  if (repeatParams.blockCount == 0 || repeatParams.blockLen == 0) {
    CheckNopOperand(c, kApi, s);
    return;
  }
  const uint64_t row = 32ull * repeatParams.blockLen;
  DmaUbToGm(c, kApi, g, s, repeatParams.blockCount, row, row + 32ull * repeatParams.dstGap,
            row + 32ull * repeatParams.srcGap);
}

// UB -> UB (counted as the V pipe), count elements; count*sizeof(T) % 32 == 0.
template <typename T>
__aicore__ AMCT_SIM_INLINE void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  using namespace amct_sim::detail;
  static const char* const kApi = "DataCopy(UB->UB)";
  CheckDmaType<T>(kApi);
  BlockCtx* c = Ctx(kApi);
  const uint64_t bytes = DataCopyCountBytes(kApi, count, sizeof(T));
  Opnd d = MakeOpnd(dst, bytes, "dst");
  Opnd s = MakeOpnd(src, bytes, "src");
  CheckOpnd(c, kApi, d);
  CheckOpnd(c, kApi, s);
  CheckOverlap(kApi, d, s);
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, VectorBytes(kApi, sizeof(T), bytes));
  UbRead(c, kPipeV, seq, s.off, static_cast<uint32_t>(bytes), kApi);
  UbWrite(c, kPipeV, seq, d.off, static_cast<uint32_t>(bytes), kApi);
  AMCT_SIM_BARRIER();
  if (d.ptr != s.ptr) std::memcpy(d.ptr, s.ptr, bytes);
  AMCT_SIM_BARRIER();
}

// UB -> UB strided (counted as the V pipe; CANN "DataCopy (UBToUB high-dimensional)", VECIN ->
// VECCALC and VECCALC -> VECOUT): blockCount blocks of blockLen 32-B data blocks, block i from src
// + 32 * i * (blockLen + srcGap) to dst + 32 * i * (blockLen + dstGap).
template <typename T>
__aicore__ AMCT_SIM_INLINE void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                         const DataCopyParams& repeatParams) {
  using namespace amct_sim::detail;
  static const char* const kApi = "DataCopy(UB->UB)";
  CheckDmaType<T>(kApi);
  BlockCtx* c = Ctx(kApi);
  CheckParamsRange(kApi, repeatParams);
  Opnd d = MakeOpnd(dst, 0, "dst");
  Opnd s = MakeOpnd(src, 0, "src");
  const uint64_t count = repeatParams.blockCount;
  const uint64_t row = 32ull * repeatParams.blockLen;
  if (count == 0 || row == 0) {
    CheckNopOperand(c, kApi, d);
    CheckNopOperand(c, kApi, s);
    return;
  }
  const uint64_t dstPitch = row + 32ull * repeatParams.dstGap;
  const uint64_t srcPitch = row + 32ull * repeatParams.srcGap;
  d.usedBytes = (count - 1) * dstPitch + row;
  s.usedBytes = (count - 1) * srcPitch + row;
  CheckOpnd(c, kApi, d);
  CheckOpnd(c, kApi, s);
  CheckOverlap(kApi, d, s);
  const uint32_t seq = BeginOp(c, kPipeV);
  AMCT_SIM_COST(c->cost, VectorBytes(kApi, sizeof(T), count * row));
  for (uint64_t i = 0; i < count; ++i) {
    UbRead(c, kPipeV, seq, static_cast<uint32_t>(s.off + i * srcPitch), static_cast<uint32_t>(row), kApi);
    UbWrite(c, kPipeV, seq, static_cast<uint32_t>(d.off + i * dstPitch), static_cast<uint32_t>(row), kApi);
  }
  AMCT_SIM_BARRIER();
  for (uint64_t i = 0; i < count; ++i) std::memcpy(d.ptr + i * dstPitch, s.ptr + i * srcPitch, row);
  AMCT_SIM_BARRIER();
}

// GM -> UB with padding: blockCount bursts of blockLen bytes (GM gap srcStride bytes) into UB
// slots of W = roundup32(L*sz + blockLen + R*sz) bytes at dst + i*(W + 32*dstStride).
#if __NPU_ARCH__ == 3510
template <typename T, PaddingMode mode = PaddingMode::Normal>
#else
template <typename T>
#endif
__aicore__ AMCT_SIM_INLINE void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& dataCopyParams, const DataCopyPadExtParams<T>& padParams) {
#if __NPU_ARCH__ == 3510
  static_assert(mode == PaddingMode::Normal, "DataCopyPad: only PaddingMode::Normal is in the subset");
#endif
  using namespace amct_sim::detail;
  static const char* const kApi = "DataCopyPad(GM->UB)";
  CheckDmaType<T>(kApi);
  BlockCtx* c = Ctx(kApi);
  CheckExtRange(kApi, dataCopyParams, sizeof(T));
  const uint32_t left = static_cast<uint32_t>(padParams.leftPadding) * sizeof(T);
  const uint32_t right = static_cast<uint32_t>(padParams.rightPadding) * sizeof(T);
  if (left > 32 || right > 32) {
    Fail(kApi, Fmt("parameters: pads of %u/%u elements are %u/%u bytes; each must be <= 32 bytes",
                   padParams.leftPadding, padParams.rightPadding, left, right));
  }
  const GmOpnd g = MakeGm(src);
  CheckGmSet(kApi, g);
  Opnd d = MakeOpnd(dst, 0, "dst");
  if (dataCopyParams.blockCount == 0 || dataCopyParams.blockLen == 0) {
    CheckNopOperand(c, kApi, d);
    return;
  }
  const uint64_t len = dataCopyParams.blockLen;
  const uint64_t w = RoundUp32(left + len + right);
  PadFill fill;
  fill.leftBytes = left;
  fill.rightBytes = right;
  fill.elemSize = sizeof(T);
  fill.poison = c->launch->poison;
  uint8_t padValue[sizeof(T)];
  std::memcpy(padValue, &padParams.paddingValue, sizeof(T));
  if (padParams.isPad) {
    fill.mode = 1;
    fill.value = padValue;
  } else {
    fill.mode = (left == 0 && right == 0) ? 2 : 3;
  }
  DmaGmToUb(c, kApi, d, g, dataCopyParams.blockCount, len, len + static_cast<uint64_t>(dataCopyParams.srcStride),
            w + 32ull * static_cast<uint64_t>(dataCopyParams.dstStride), w, fill);
}

// UB -> GM: blockCount bursts of exactly blockLen bytes from UB src + i*(roundup32(blockLen) +
// 32*srcStride) to GM dst + i*(blockLen + dstStride).
#if __NPU_ARCH__ == 3510
template <typename T, PaddingMode mode = PaddingMode::Normal>
#else
template <typename T>
#endif
__aicore__ AMCT_SIM_INLINE void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyExtParams& dataCopyParams) {
#if __NPU_ARCH__ == 3510
  static_assert(mode == PaddingMode::Normal, "DataCopyPad: only PaddingMode::Normal is in the subset");
#endif
  using namespace amct_sim::detail;
  static const char* const kApi = "DataCopyPad(UB->GM)";
  CheckDmaType<T>(kApi);
  BlockCtx* c = Ctx(kApi);
  CheckExtRange(kApi, dataCopyParams, sizeof(T));
  const GmOpnd g = MakeGm(dst);
  CheckGmSet(kApi, g);
  Opnd s = MakeOpnd(src, 0, "src");
  if (dataCopyParams.blockCount == 0 || dataCopyParams.blockLen == 0) {
    CheckNopOperand(c, kApi, s);
    return;
  }
  const uint64_t len = dataCopyParams.blockLen;
  DmaUbToGm(c, kApi, g, s, dataCopyParams.blockCount, len, len + static_cast<uint64_t>(dataCopyParams.dstStride),
            RoundUp32(len) + 32ull * static_cast<uint64_t>(dataCopyParams.srcStride));
}

}  // namespace AscendC
