// Tiling of the fused stem_indexer kernel: written by the host from shapes and attributes only
// (never from the lengths, which the kernel reads itself), read by the kernel from GM. Shared by
// host and kernel.
#pragma once

#include <cstdint>

// Functions both sides call: kernel functions on the device, plain inline ones on the host and in the sim.
#if defined(__CCE_AICORE__)
#define AMCT_STEM_SHARED __aicore__ inline
#else
#define AMCT_STEM_SHARED inline
#endif

namespace amct_stem {

constexpr uint32_t kSink = 4;            // initial_blocks: always selected
constexpr uint32_t kWindow = 4;          // window_size: always selected
constexpr uint32_t kMaxK = 256;          // cap on the dynamic count
constexpr uint32_t kChunk = 256;         // key blocks per score chunk (the metadata's s2 tile)
constexpr uint32_t kMTile = 64;          // rows per m tile (group-major rows r = g * Qb + s1)
constexpr uint32_t kMaxGroupRows = 32;   // Top-K rows per group: half of a 64-row tile (a vector core's share); a pair of groups is one matmul
constexpr uint32_t kSubBlocks = 2;       // vector cores per cube core (MIX 1:2)
constexpr uint32_t kLengthSlots = 32;    // the kernel's ring of 32-B slots for the L writes (one DMA each)
constexpr uint32_t kDim = 2048;          // elements of a qflat / kflat row (the dot products' K)
// Metadata layout (docs/stem_indexer.md §6), in int32 words.
constexpr uint32_t kHeaderWords = 16;
constexpr uint32_t kSlots = 36;
constexpr uint32_t kRecordWords = 16;

// The §6 cost of an m tile of `rows` rows whose widest row has `e` candidates (its visible blocks
// past the window): per kChunk-block step, 6 per 16 rows and 10 per 64 key blocks. The host's
// metadata splits the slots by it and the kernel's slot share walks it, so both must agree.
AMCT_STEM_SHARED int64_t TileCost(int64_t rows, int64_t e) {
  const int64_t chunk = static_cast<int64_t>(kChunk);
  const int64_t steps = e > 0 ? (e + chunk - 1) / chunk : 1;
  const int64_t last = e - chunk * (steps - 1);
  return steps * 6 * ((rows + 15) / 16) + 10 * ((steps - 1) * (chunk / 64) + (last + 63) / 64);
}

struct StemTiling {
  uint32_t batch;         // B
  uint32_t qHeads;        // Nq
  uint32_t kvHeads;       // Nk
  uint32_t group;         // G = Nq / Nk
  uint32_t maxQb;         // qflat.size(2)
  uint32_t maxKb;         // kflat.size(2): the length of an output row, never exceeded
  uint32_t causal;        // 1: right-down aligned causal mask
  uint32_t precision;     // topk_score_precision: 1 ranks fp32 scores, 2 their bf16 (RNE) values
  uint32_t promptFromKv;  // 1: num_prompt_tokens absent, the prompt is kv_seq_lens
  uint32_t aicNum;        // cube cores sharing the plan's 36 slots (36 / aicNum slots' worth each)
  uint32_t subBlocks;     // vector blocks per cube core: kSubBlocks
  uint32_t blockNum;      // vector blocks (subBlocks per cube core); the MIX launch's blockDim is aicNum
  uint32_t rowLanes;      // W: lanes of a row's key buffer, a multiple of kChunk, >= maxKb
  uint32_t groupRows;     // Top-K rows per key group, 1..kMaxGroupRows
  uint32_t ubBudget;      // UB bytes per core the tiling assumed
  uint32_t ubUsed;        // UB bytes the kernel's buffers take
  float alpha;            // f32(alpha), in (0, 1]
  float rateMedium;       // f32(k_block_num_rate_medium)
  float rateLarge;        // f32(k_block_num_rate_large)
  int32_t biasMedium;
  int32_t biasLarge;
  uint32_t scratchRows;   // rows of a group's chunk the chunk scratch holds: groupRows, or half of it
                          // where that lets more rows form a group
  uint32_t nextKeys;      // 1: the UB holds a second row of keys, built in the previous row's gaps
  uint32_t pad;           // keeps metadataWords 8-byte aligned
  uint64_t metadataWords; // metadata.size(0) (>= capacity(B, Nk))
};

}  // namespace amct_stem
