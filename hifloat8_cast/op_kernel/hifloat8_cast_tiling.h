// Tiling of the hifloat8_cast kernel: written by the host, read by the kernel from GM.
// Shared by host and kernel, so it includes only <cstdint>.
#pragma once

#include <cstdint>

namespace amct_hif8 {

// castMode: 0..3 keep upstream's meanings; 4..7 are this project's additions.
enum CastMode : uint32_t {
  kEncodeFp16 = 0,     // fp16 -> HiF8, 32 KB magnitude LUT
  kEncodeBf16 = 1,     // bf16 -> HiF8, 32 KB magnitude LUT
  kDecodeFp16 = 2,     // HiF8 -> fp16, 512 B LUT
  kDecodeBf16 = 3,     // HiF8 -> bf16, 512 B LUT
  kDecodeFp32 = 4,     // HiF8 -> fp32, 1 KB LUT
  kFakeQuantFp16 = 5,  // fp16 -> HiF8 -> fp16, encode then decode LUT
  kFakeQuantBf16 = 6,  // bf16 -> HiF8 -> bf16, encode then decode LUT
  kFakeQuantFp32 = 7,  // fp32 -> HiF8 -> fp32, arithmetic formulation with vector ops
  kCastModeCount = 8,
};

struct Hif8CastTiling {
  uint32_t blockNum;         // cores launched
  uint32_t castMode;         // CastMode
  uint64_t totalLength;      // elements in the whole tensor
  uint64_t numPerCore;       // elements of every core but the last, which starts at (blockNum-1)*numPerCore
  uint64_t tailNumLastCore;  // elements of the last core (numPerCore plus the remainder)
  uint32_t tileLength;       // elements per tile (the last tile of a core may be shorter)
  uint32_t ubBudget;         // UB bytes per core the tiling assumed
  uint32_t encLutBytes;      // encode LUT bytes at the start of the LUT buffer (0: none)
  uint32_t decLutBytes;      // decode LUT bytes following it (0: none)
};

}  // namespace amct_hif8
