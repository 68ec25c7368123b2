// Kernel-side helpers every amct_ops AscendC kernel may share. Uses only the API subset of
// ascendc_subset.md; included after "kernel_operator.h".
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

// A tile of `count` elements of T as float32 (exact widening into `wide` for 16-bit T; fp32 as
// is), after zeroing the elements from `valid` on (the partial tile's padding up to a quantum).
template <typename T>
__aicore__ inline AscendC::LocalTensor<float> WidenTile(const AscendC::LocalTensor<T>& x,
                                                        AscendC::TBuf<AscendC::TPosition::VECCALC>& wide,
                                                        uint32_t valid, uint32_t count) {
  if (count > valid) AscendC::Duplicate(x[valid], T(0.0f), static_cast<int32_t>(count - valid));
  if constexpr (sizeof(T) == 4) {
    return x;
  } else {
    AscendC::LocalTensor<float> out = wide.Get<float>();
    AscendC::Cast(out, x, AscendC::RoundMode::CAST_NONE, count);
    return out;
  }
}

}  // namespace amct_kernel
