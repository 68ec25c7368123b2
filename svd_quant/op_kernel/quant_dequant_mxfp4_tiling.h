// Tiling of the quant_dequant_mxfp4 kernel (quant_dequant_mxfp4_kernel.cpp): written by the host,
// read by the kernel from GM. Shared by host and kernel, so it includes only <cstdint>.
#pragma once

#include <cstdint>

namespace amct_qdq {

enum QdqDtype : uint32_t { kFp16 = 0, kBf16 = 1, kFp32 = 2, kDtypeCount = 3 };

constexpr uint32_t kQdqBlock = 32;        // elements per block (one scale)
constexpr uint32_t kQdqTileQuantum = 64;  // tiles hold a multiple of 64 blocks (64 block values per compare)

// The input is a flat run of totalBlocks 32-element blocks of `dtype`; the output is float32, block
// for block. Core c < blockNum takes blocks [c * blocksPerCore, + (c + 1 < blockNum ? blocksPerCore :
// blocksLastCore)) in tiles of tileBlocks blocks. The block exponent is E = em + exponentBase +
// [f >= fieldThreshold] for a block maximum with unbiased exponent em and fraction field f, clamped
// to [-30, 130]; wideExponents = 1 when E can exceed 126 (then the kernel splits 2^-E and 2^E
// into two normal factors).
struct QdqTiling {
  uint32_t blockNum;        // cores launched
  uint32_t dtype;           // QdqDtype of the input
  uint32_t tileBlocks;      // blocks per tile: a multiple of kQdqTileQuantum
  int32_t exponentBase;
  uint64_t totalBlocks;     // blocks in the whole tensor
  uint64_t blocksPerCore;   // blocks of every core but the last
  uint64_t blocksLastCore;  // blocks of the last core
  uint32_t fieldThreshold;  // in [0, 2^23]
  uint32_t wideExponents;   // 0 or 1
  uint32_t ubBudget;        // UB bytes per core the tiling assumed
  uint32_t ubUsed;          // UB bytes the kernel's buffers take for tileBlocks
};

}  // namespace amct_qdq
