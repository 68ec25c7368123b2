// Tiling of the MXFP4 quantizer kernel (svd_quant_kernel.cpp): written by the host, read by the
// kernel from GM. Shared by host and kernel, so it includes only <cstdint>.
#pragma once

#include <cstdint>

namespace amct_mxfp4 {

enum Mxfp4Dtype : uint32_t { kFp16 = 0, kBf16 = 1, kFp32 = 2, kDtypeCount = 3 };

// docs/mxfp4.md A2 step 3 (the round_mode table): "round" = nearest, ties away (CAST_ROUND);
// "rint" = ties to even (CAST_RINT); "floor" = toward -inf on the signed value (CAST_FLOOR on
// y >= 0, CAST_CEIL of |y| on y < 0).
enum Mxfp4RoundMode : uint32_t { kRound = 0, kRint = 1, kFloor = 2, kRoundModeCount = 3 };

constexpr uint32_t kMxBlock = 32;          // elements per MX block (one E8M0 scale)
constexpr uint32_t kMxTileQuantum = 64;    // tiles hold a multiple of 64 blocks (the kernel reduces 64 per repeat)

// The input is a flat run of totalBlocks 32-element blocks (rows of K elements, K % 32 == 0, so
// blocks never straddle rows). Core c < blockNum quantizes blocks [c * blocksPerCore, + (c + 1 <
// blockNum ? blocksPerCore : blocksLastCore)) in tiles of tileBlocks blocks. Outputs: 16 code
// bytes per block (even element in the low nibble) and one scale byte per block, densely (the
// host inserts the pad byte of rows with an odd block count).
struct Mxfp4Tiling {
  uint32_t blockNum;        // cores launched
  uint32_t dtype;           // Mxfp4Dtype of the input
  uint32_t roundMode;       // Mxfp4RoundMode
  uint32_t tileBlocks;      // blocks per tile: a multiple of kMxTileQuantum
  uint64_t totalBlocks;     // blocks in the whole tensor
  uint64_t blocksPerCore;   // blocks of every core but the last
  uint64_t blocksLastCore;  // blocks of the last core
  uint32_t ubBudget;        // UB bytes per core the tiling assumed
  uint32_t ubUsed;          // UB bytes the kernel's buffers take for tileBlocks
};

}  // namespace amct_mxfp4
