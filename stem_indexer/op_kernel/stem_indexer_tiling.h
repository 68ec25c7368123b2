// Tiling of the stem_indexer selection kernel: written by the host, read by the kernel from GM.
// Shared by host and kernel, so it includes only <cstdint>.
#pragma once

#include <cstdint>

namespace amct_stem {

constexpr uint32_t kSink = 4;           // initial_blocks: always selected
constexpr uint32_t kWindow = 4;         // window_size: always selected
constexpr uint32_t kMaxK = 256;         // cap on the dynamic count
constexpr uint32_t kLaneQuantum = 64;   // candidates are padded to whole fp32 repeats (Compares)
constexpr uint32_t kRowFields = 8;      // int64 words per row-table entry

// One Top-K row of the row table (int64 words, kRowFields per row):
//   [0] element offset of the row's dot products in `dots` (candidate c is block kSink + c)
//   [1] element offset of vbias[b, n, kSink] in `vbias`
//   [2] element offset of sparse_indices[b, h, i, 0] in the output
//   [3] n: the candidate count vis - 8 (> K)
//   [4] K: the dynamic count, 1..256
//   [5..7] 0
enum RowField : uint32_t { kDotsOffset = 0, kBiasOffset = 1, kOutOffset = 2, kCandidates = 3, kTopK = 4 };

// Core c < blockNum handles rows [c * rowsPerCore, c * rowsPerCore + (last ? rowsLastCore : rowsPerCore)).
struct StemTiling {
  uint32_t blockNum;      // cores launched
  uint32_t precision;     // topk_score_precision: 1 ranks fp32 scores, 2 their bf16 (RNE) values
  uint64_t rowCount;      // Top-K rows in the row table
  uint64_t rowsPerCore;   // rows of every core but the last
  uint64_t rowsLastCore;  // rows of the last core
  uint32_t maxLanes;      // UB buffers hold this many candidates (a multiple of kLaneQuantum)
  uint32_t ubBudget;      // UB bytes per core the tiling assumed
  uint32_t ubUsed;        // UB bytes the kernel's buffers take for maxLanes
  uint32_t rowLength;     // elements of an output row (maxKb): the kernel never writes more
};

}  // namespace amct_stem
