// Host side of the fused svd_quant kernel (svd_quant_fused_kernel.cpp, dav-3510 MIX): the
// output grid over the AIC cores, the AIV quantizer's tile, the per-block workspace and the three
// TCubeTiling of its Matmul calls through the Matmul tiling API (matmul_tiling::MatmulApiTiling,
// emulated by the kernel sim with the same call sequence). Shared by the emulated op (CPU) and the
// NPU implementation.
#include "svd_quant_fused_host.h"

#include <algorithm>

#include "amct_matmul_platform.h"
#include "amct_tiling.h"
#include "svd_quant_host.h"
#include "tiling/tiling_api.h"

namespace amct {
namespace mxfp4 {

using amct_svdq::SvdFusedTiling;

namespace {

constexpr const char* kS = "svd_quant";
constexpr uint64_t kAlign = 16;             // rows and columns of a tile: whole fractals
constexpr uint64_t kBaseMax = 256;          // upstream's largest base block
constexpr uint64_t kMaxTileRows = 16384;    // keeps the Matmul calls' int32 shapes small
constexpr uint64_t kMaxBlocks = 65535;      // launch limit
constexpr uint64_t kMinChunkRows = 256;     // a chunk's MX matmul should fill the cube
constexpr uint64_t kWorkspaceAlign = 512;
constexpr uint32_t kRepackSlotRows = 64;    // rows per pass of the pad-byte repack
constexpr uint32_t kMaxQuantTileBlocks = 512;

uint64_t clampU(uint64_t v, uint64_t lo, uint64_t hi) { return std::min(std::max(v, lo), hi); }

struct Grid {
  uint32_t mTiles;
  uint32_t nTiles;
  uint32_t singleM;
  uint32_t singleN;
};

// Upstream's split of the output over `cores` AIC cores, rows first: as many row tiles as there
// are full base blocks of rows (at most one per core, a divisor of the core count), the rest of
// the cores across the columns while each still gets a full base block of columns.
Grid splitOutput(uint64_t m, uint64_t n, uint64_t cores) {
  const uint64_t baseM = clampU(roundUp(m, kAlign), kAlign, kBaseMax);
  const uint64_t baseN = clampU(roundUp(n, kAlign), kAlign, kBaseMax);
  uint64_t mLoops = std::min(std::max<uint64_t>(m / baseM, 1), cores);
  while (cores % mLoops != 0) --mLoops;
  uint64_t nLoops = cores / mLoops;
  while (nLoops > 1 && n / nLoops < baseN) --nLoops;
  Grid g{};
  const uint64_t singleM = std::min(roundUp(ceilDiv(m, mLoops), kAlign), kMaxTileRows);
  const uint64_t singleN = roundUp(ceilDiv(n, nLoops), kAlign);
  g.singleM = static_cast<uint32_t>(singleM);
  g.singleN = static_cast<uint32_t>(singleN);
  const uint64_t mTiles = ceilDiv(m, singleM);
  const uint64_t nTiles = ceilDiv(n, singleN);
  TORCH_CHECK(mTiles * nTiles <= kMaxBlocks, kS, ": ", m, " rows need ", mTiles * nTiles,
              " blocks of the fused kernel, more than ", kMaxBlocks);
  g.mTiles = static_cast<uint32_t>(mTiles);
  g.nTiles = static_cast<uint32_t>(nTiles);
  return g;
}

// The AIV quantizer's tile: the largest that fits the vector UB next to the repack slots, and no
// larger than half a chunk of rows needs.
uint32_t quantTileBlocks(const SvdFusedTiling& t, const PlatformFacts& facts) {
  const uint64_t repack = static_cast<uint64_t>(t.repackRows) * roundUp(t.scaleRow, 32);
  const uint64_t ub = vectorUbBudget(facts, /*usesSelect=*/true, kFusedArch) - repack;
  const uint64_t halfChunkBlocks = ceilDiv(t.chunkM, 2) * (t.k / amct_mxfp4::kMxBlock);
  const PlatformFacts one{1, facts.ubBytes};
  const BlockSplit split = splitBlocks(kS, halfChunkBlocks, one, ub, amct_mxfp4::kMxTileQuantum, kMaxQuantTileBlocks,
                                       1, [](uint32_t u) { return ubBytes(amct_mxfp4::kBf16, u); });
  return split.tileBlocks;
}

void layOutWorkspace(SvdFusedTiling& t) {
  uint64_t at = 0;
  auto take = [&at](uint64_t bytes) {
    const uint64_t start = at;
    at += roundUp(bytes, kWorkspaceAlign);
    return start;
  };
  const uint64_t rows = t.singleM;
  t.wsCodes = take(rows * (t.k / 2));
  t.wsScales = take(rows * t.scaleRow);
  t.wsDense = take(t.repackRows > 0 ? rows * (t.k / amct_mxfp4::kMxBlock) : 0);
  t.wsDp = take(rows * t.r * 2);
  t.wsBlockBytes = at;
}

// One TCubeTiling of a single-core Matmul call: A (m, k), B (k, n) or, transposed, (n, k);
// C (m, n) bf16 with row stride orgN.
struct MatmulShape {
  int32_t m, n, k, orgN;
};

TCubeTiling bf16Tiling(const char* what, const MatmulShape& s) {
  using namespace matmul_tiling;
  MatmulApiTiling api(ascend950MatmulPlatform());
  api.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_BF16, false);
  api.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_BF16, false);
  api.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_BF16);
  api.SetBias(false);
  api.SetShape(s.m, s.n, s.k);
  api.SetOrgShape(s.m, s.orgN, s.k);
  api.SetBufferSpace(-1, -1, -1);
  TCubeTiling tiling{};
  TORCH_CHECK(api.GetTiling(tiling) != -1, kS, ": the Matmul tiling of ", what, " failed for m ", s.m, ", n ", s.n,
              ", k ", s.k);
  return tiling;
}

TCubeTiling mxTiling(const MatmulShape& s) {
  using namespace matmul_tiling;
  MatmulApiTiling api(ascend950MatmulPlatform());
  api.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT4_E2M1, false);
  api.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT4_E2M1, true);
  api.SetScaleAType(TPosition::GM, CubeFormat::ND, false);
  api.SetScaleBType(TPosition::GM, CubeFormat::ND, true);
  api.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_BF16);
  api.SetMadType(MatrixMadType::MXMODE);
  api.SetBias(false);
  api.SetShape(s.m, s.n, s.k);
  api.SetOrgShape(s.m, s.orgN, s.k);
  api.SetBufferSpace(-1, -1, -1);
  TCubeTiling tiling{};
  TORCH_CHECK(api.GetTiling(tiling) != -1, kS, ": the MX Matmul tiling failed for m ", s.m, ", n ", s.n, ", k ",
              s.k);
  return tiling;
}

}  // namespace

uint32_t aicCores(const PlatformFacts& facts) { return std::max<uint32_t>(1, facts.aivCores / 2); }

SvdFusedTiling computeFusedTiling(uint64_t m, const SvdDims& d, const PlatformFacts& facts) {
  TORCH_CHECK(m > 0 && d.k > 0 && d.n > 0 && d.r >= 1, kS, ": the fused tiling needs a non-empty problem");
  SvdFusedTiling t{};
  t.m = m;
  t.k = static_cast<uint32_t>(d.k);
  t.n = static_cast<uint32_t>(d.n);
  t.r = static_cast<uint32_t>(d.r);
  const Grid g = splitOutput(m, t.n, aicCores(facts));
  t.mTiles = g.mTiles;
  t.nTiles = g.nTiles;
  t.singleM = g.singleM;
  t.singleN = g.singleN;
  t.blockNum = g.mTiles * g.nTiles;
  const uint64_t chunk = roundUp(ceilDiv(t.singleM, amct_svdq::kMaxChunksPerTile), kAlign);
  t.chunkM = static_cast<uint32_t>(std::min<uint64_t>(std::max(chunk, kMinChunkRows), t.singleM));
  t.scaleRow = static_cast<uint32_t>(2 * ceilDiv(t.k, 64));
  const bool oddBlocks = (t.k / amct_mxfp4::kMxBlock) % 2 == 1;
  t.repackRows = oddBlocks ? kRepackSlotRows : 0;
  t.quantTileBlocks = quantTileBlocks(t, facts);
  layOutWorkspace(t);
  const int32_t singleM = static_cast<int32_t>(t.singleM);
  const int32_t singleN = static_cast<int32_t>(t.singleN);
  const int32_t k = static_cast<int32_t>(t.k);
  const int32_t n = static_cast<int32_t>(t.n);
  const int32_t r = static_cast<int32_t>(t.r);
  t.down = bf16Tiling("X D", MatmulShape{singleM, r, k, r});
  t.up = bf16Tiling("DP U", MatmulShape{singleM, singleN, r, n});
  t.mx = mxTiling(MatmulShape{static_cast<int32_t>(t.chunkM), singleN, k, n});
  return t;
}

at::Tensor svdQuantFused(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                         const at::Tensor& down, const at::Tensor& up, const PlatformFacts& facts,
                         const FusedLauncher& launch) {
  const SvdDims d = checkSvdQuant(activation, weights, scales, down, up);
  if (std::optional<at::Tensor> trivial = trivialSvdResult(activation, d)) return *trivial;
  // Batch dimensions folded into M rows: the kernel is row-wise, so batch shape cannot matter.
  FusedArgs a;
  a.x = activation.reshape({-1, d.k}).contiguous();
  const int64_t m = a.x.size(0);
  const int64_t scaleRow = 2 * ((d.k + 63) / 64);
  a.wCodes = (weights.scalar_type() == at::kByte ? weights : weights.view(at::kByte)).contiguous();
  at::Tensor wScales = (scales.scalar_type() == at::kByte ? scales : scales.view(at::kByte)).reshape({d.n, scaleRow});
  if ((d.k / amct_mxfp4::kMxBlock) % 2 == 1) {
    // The MX matmul reads the pad byte's block (zero codes): it must scale by a finite 2^-127,
    // never 0xFF (NaN), whatever the caller left there.
    wScales = wScales.clone();
    wScales.select(1, scaleRow - 1).zero_();
  }
  a.wScales = wScales.contiguous();
  a.down = down.contiguous();
  a.up = up.contiguous();
  const SvdFusedTiling t = computeFusedTiling(static_cast<uint64_t>(m), d, facts);
  a.out = at::empty({m, d.n}, a.x.options().dtype(at::kBFloat16));
  a.workspace = at::empty({static_cast<int64_t>(t.blockNum * t.wsBlockBytes)}, a.x.options().dtype(at::kByte));
  launch(t.blockNum, a, tilingTensor(t));
  return a.out.view_symint(svdOutputShape(activation, d.n));
}

}  // namespace mxfp4
}  // namespace amct
