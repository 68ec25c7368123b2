// Host-side helpers for operators whose vector kernel walks a flat run of fixed-size blocks:
// the UB budget, the split of the blocks over cores and tiles, shapes in error messages.
// Header-only; includes torch, never kernel_operator.h.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include "amct_host.h"

namespace amct {

// UB bytes a vector kernel of __NPU_ARCH__ kernelArch (default: the build's) may use:
// min(the platform's, the arch budget). dav-2201 reserves [184 KB, 192 KB) as the scratch of
// Select modes 1/2 (docs/kernel_sim.md, What it emulates); dav-3510 has 248 KB usable.
inline uint64_t vectorUbBudget(const PlatformFacts& facts, bool usesSelect, int kernelArch = __NPU_ARCH__) {
  const uint64_t arch = kernelArch == 3510 ? 253952 : (usesSelect ? 188416 : 196608);
  return std::min<uint64_t>(facts.ubBytes, arch);
}

// How totalBlocks > 0 blocks are spread: core c < blockNum takes blocksPerCore blocks (the last
// one blocksLastCore), in tiles of tileBlocks.
struct BlockSplit {
  uint32_t blockNum;
  uint32_t tileBlocks;
  uint64_t blocksPerCore;
  uint64_t blocksLastCore;
};

// The largest tile (a multiple of quantum, at most maxTile) whose ubBytes(tile) fits `ub`;
// contiguous runs of at least minPerCore blocks per core, never more cores than facts.aivCores.
template <class UbBytes>
BlockSplit splitBlocks(const char* op, uint64_t totalBlocks, const PlatformFacts& facts, uint64_t ub,
                       uint32_t quantum, uint32_t maxTile, uint64_t minPerCore, UbBytes ubBytes) {
  uint32_t fit = 0;
  for (uint32_t u = maxTile; u >= quantum; u -= quantum) {
    if (ubBytes(u) <= ub) {
      fit = u;
      break;
    }
  }
  TORCH_CHECK(fit > 0, op, ": the UB budget of ", ub, " bytes cannot hold a tile of ", quantum, " blocks (",
              ubBytes(quantum), " bytes)");
  const uint64_t cores = std::max<uint64_t>(1, std::min<uint64_t>(facts.aivCores, 65535));
  const uint64_t perCore = std::max<uint64_t>(ceilDiv(totalBlocks, cores), minPerCore);
  const uint64_t blockNum = ceilDiv(totalBlocks, perCore);
  BlockSplit s{};
  s.blockNum = static_cast<uint32_t>(blockNum);
  s.tileBlocks = static_cast<uint32_t>(std::min<uint64_t>(fit, roundUp(std::min(perCore, totalBlocks), quantum)));
  s.blocksPerCore = perCore;
  s.blocksLastCore = totalBlocks - (blockNum - 1) * perCore;
  return s;
}

// "[a, b, c]", as the specs print shapes.
inline std::string shapeText(c10::SymIntArrayRef shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

}  // namespace amct
