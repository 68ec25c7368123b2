// Tiling of the hifloat4_cast kernel: written by the host, read by the kernel from GM.
// Shared by host and kernel, so it includes only <cstdint>.
#pragma once

#include <cstdint>

namespace amct_hif4 {

// What the kernel does (one kernel, three operators).
enum Hif4Mode : uint32_t {
  kFakeQuant = 0,  // x -> fake-quantised x (same dtype), 64-element blocks along the last dim
  kPack = 1,       // x -> scale bytes (4 per block) and value bytes (32 per block)
  kUnpack = 2,     // scale and value bytes -> values (fp32, then the requested dtype)
  kModeCount = 3,
};

// The float type of the input (fake-quant, pack) or of the output (unpack).
enum Hif4Dtype : uint32_t {
  kFp16 = 0,
  kBf16 = 1,
  kFp32 = 2,
  kDtypeCount = 3,
};

constexpr uint32_t kHif4Block = 64;       // elements per HiF4 block
constexpr uint32_t kHif4TileQuantum = 8;  // tiles hold a multiple of 8 blocks (group-level Compares)

// The tensor is a flat run of totalBlocks 64-element blocks (the host moves the block dimension
// last, so blocks never straddle rows). Core c < blockNum handles blocks
// [c * blocksPerCore, c * blocksPerCore + (c + 1 < blockNum ? blocksPerCore : blocksLastCore)),
// in tiles of tileBlocks blocks (the last tile of a core may be shorter).
struct Hif4Tiling {
  uint32_t blockNum;        // cores launched
  uint32_t mode;            // Hif4Mode
  uint32_t dtype;           // Hif4Dtype
  uint32_t tileBlocks;      // blocks per tile: a multiple of kHif4TileQuantum
  uint64_t totalBlocks;     // blocks in the whole tensor
  uint64_t blocksPerCore;   // blocks of every core but the last
  uint64_t blocksLastCore;  // blocks of the last core
  uint32_t ubBudget;        // UB bytes per core the tiling assumed
  uint32_t ubUsed;          // UB bytes the kernel's buffers take for tileBlocks
};

}  // namespace amct_hif4
