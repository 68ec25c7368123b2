// Tiling of the fused svd_quant kernel (svd_quant_fused_kernel.cpp, dav-3510 MIX: one AIC and its
// two AIV cores per block): written by the host (svd_quant_fused_host.cpp), read by the kernel
// from GM. Shared by host and kernel.
//
// Rows M = B*S of X (M, K) bf16; the output (M, N) bf16 is cut into a grid of mTiles x nTiles
// tiles of singleM x singleN (the last row / column of tiles takes the tail); AIC block b owns
// tile (b / nTiles, b % nTiles). Its two AIV cores quantize the tile's rows of X, chunkM rows at
// a time, into the block's workspace and flag each chunk to the AIC (CrossCoreSetFlag mode 2); the
// AIC meanwhile runs DP = bf16(X D) and out = bf16(DP U) for the tile, then per chunk waits for
// the flag and adds bf16(Q(X) Q(W)^T) into out (IterateAll with atomic add: the final bf16 sum).
#pragma once

#include <cstdint>

#if defined(__CCE_AICORE__)
#include "kernel_tiling/kernel_tiling.h"  // bisheng: CANN's TCubeTiling
#else
#include "sim_tiling_data.h"  // host code and the kernel sim: TCubeTiling with CANN's fields, in its order
#endif

namespace amct_svdq {

constexpr uint32_t kMaxChunksPerTile = 8;  // AIV -> AIC flags pending at most (hardware counts up to 15)

struct SvdFusedTiling {
  uint64_t m;                // rows of X (B*S), > 0
  uint32_t k;                // K > 0, a multiple of 32
  uint32_t n;                // N > 0
  uint32_t r;                // R >= 1
  uint32_t blockNum;         // AIC blocks launched (mTiles * nTiles), each with its two AIV cores
  uint32_t mTiles;
  uint32_t nTiles;
  uint32_t singleM;          // rows per tile (a multiple of 16; the last tile row takes the rest)
  uint32_t singleN;          // columns per tile (a multiple of 16; the last tile column takes the rest)
  uint32_t chunkM;           // rows per AIV -> AIC hand-over (<= kMaxChunksPerTile chunks per tile)
  uint32_t scaleRow;         // bytes per scale row: 2 * ceil(K / 64) (pad byte 0x00 when K/32 is odd)
  uint32_t quantTileBlocks;  // the quantizer's tile (blocks; a multiple of kMxTileQuantum)
  uint32_t repackRows;       // rows per pass of the pad-byte repack (K/32 odd), else 0
  uint32_t pad0;
  // Per-block workspace (bytes from the block's base, every part 512-B aligned): Q(X) codes
  // (singleM, K/2), Q(X) scales (singleM, scaleRow), the quantizer's dense scales (singleM, K/32;
  // only when K/32 is odd), DP (singleM, R) bf16.
  uint64_t wsCodes;
  uint64_t wsScales;
  uint64_t wsDense;
  uint64_t wsDp;
  uint64_t wsBlockBytes;     // bytes per block
  TCubeTiling down;          // X (singleM, K) . D (K, R) -> DP
  TCubeTiling up;            // DP (singleM, R) . U (R, N)[:, tile] -> out tile
  TCubeTiling mx;            // Q(X) (chunkM, K) . Q(W)^T -> out chunk (MX FP4, atomic add)
};

}  // namespace amct_svdq
