// Device-agnostic host logic of the StemIndexer operators (docs/stem_indexer.md), shared by
// the CPU, emulated-kernel and NPU paths: validation (§3), the Top-K budget (§5), metadata capacity
// and generation (§6), output allocation, and either the CPU op (the per-tile score matmuls of the
// visible blocks with the CPU score kernel of stem_indexer_cpu_kernels.h, fused with the native
// selection, §7.1) or the launch of the AscendC kernel, which scores on its cube itself (§7.3).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <tuple>
#include <vector>

#include "amct_host.h"
#include "stem_indexer_tiling.h"

namespace amct {
namespace stem {

// The fused kernel is dav-3510 code (stem_indexer/CMakeLists.txt: KERNEL_3510): it runs in the sim
// as dav-3510 in every build, so its host code tiles for dav-3510 whatever the build's arch.
constexpr int kKernelArch = 3510;

// The arguments of one launch of the stem_indexer kernel, all on the kernel's device except the
// tiling (a CPU uint8 tensor): qflat and kflat (bf16, contiguous), vbias fp32 [B, Nk, maxKb], the
// three int32 [B] length tensors (prompt is kvLens when num_prompt_tokens is absent), the
// metadata, and the outputs sparse_indices / sparse_seq_len (contiguous, pre-filled with -1 / 0).
// blockDim counts AI cores (MIX 1:2: an AIC and two AIVs each).
struct KernelArgs {
  uint32_t blockDim;
  at::Tensor qflat, kflat, vbias, qLens, kvLens, prompt, metadata, indices, seqLen, tiling;
};
using Launcher = std::function<void(const KernelArgs&)>;

// The attributes of npu_stem_indexer in IR order (§2).
struct Attributes {
  bool causal = true;
  int64_t stemBlockSize = 128;
  int64_t stemStride = 16;
  double alpha = 1.0;
  int64_t initialBlocks = 4;
  int64_t windowSize = 4;
  double rateMedium = 0.2;
  int64_t biasMedium = 30;
  double rateLarge = 0.1;
  int64_t biasLarge = 30;
  int64_t precision = 1;
};

// Where the selection runs: the AscendC kernel through `launch` (the NPU; on the CPU the emulated
// kernel), or natively on the CPU, fused with each tile's score matmul (§7.1).
enum class Selection { kKernel, kNativeCpu };

// What a backend supplies: platform facts, the kernel launcher, whether it is the NPU, and where
// the selection runs.
struct Backend {
  PlatformFacts facts;
  Launcher launch;
  bool npu = false;
  Selection selection = Selection::kKernel;
};

std::tuple<at::Tensor, at::Tensor> stemIndexer(const at::Tensor& qflat, const at::Tensor& kflat,
                                               const at::Tensor& vbias, const at::Tensor& qSeqLens,
                                               const at::Tensor& kvSeqLens,
                                               const std::optional<at::Tensor>& numPromptTokens,
                                               const std::optional<at::Tensor>& metadata, const Attributes& attrs,
                                               const Backend& backend);

// Meta: checks S1-S8, outputs of the §2 shapes.
std::tuple<at::Tensor, at::Tensor> stemIndexerMeta(const at::Tensor& qflat, const at::Tensor& kflat,
                                                   const at::Tensor& vbias, const at::Tensor& qSeqLens,
                                                   const at::Tensor& kvSeqLens,
                                                   const std::optional<at::Tensor>& numPromptTokens,
                                                   const std::optional<at::Tensor>& metadata, const Attributes& attrs);

// The metadata op: checks M1-M4; the generator of §6 on host lengths (CPU tensors), or only the
// [capacity] shape for Meta.
at::Tensor stemIndexerMetadata(const at::Tensor& qSeqLens, const at::Tensor& kvSeqLens, int64_t qHeads,
                               int64_t kvHeads, bool causal, int64_t stemBlockSize, int64_t dimQkflat,
                               int64_t windowSize);
at::Tensor stemIndexerMetadataMeta(const at::Tensor& qSeqLens, const at::Tensor& kvSeqLens, int64_t qHeads,
                                   int64_t kvHeads, bool causal, int64_t stemBlockSize, int64_t dimQkflat,
                                   int64_t windowSize);

// Test hook: sets the query tile (G * TQ rows per score matmul, default 256) when rows > 0 and
// returns the previous value; rows <= 0 only reads it. Results must not depend on it.
int64_t setTileRowsForTest(int64_t rows);

// Test hook: the CPU score kernel (stem_indexer_cpu_kernels.h) on bf16 queries [A, I, 2048] and
// keys [W, 2048], as fp32 [A * I, W]; `portable` forces the portable loop instead of the AVX2
// kernel. Rows that are not contiguous are copied first, as the op's tiles are.
at::Tensor scoresForTest(const at::Tensor& queries, const at::Tensor& keys, bool portable);

// §6 capacity in int32 words.
int64_t metadataCapacity(int64_t batch, int64_t kvHeads);

// §5: K of row i (cap included); float attributes as given (rounded to f32 inside).
int64_t topkBudget(int64_t P, int64_t i, int64_t Qb, int64_t Kb, double alpha, double rateMedium, int64_t biasMedium,
                   double rateLarge, int64_t biasLarge);

// UB bytes of the kernel's buffers for row buffers of rowLanes lanes and groupRows rows per
// group (mirrors its InitBuffer list).
uint64_t ubBytes(uint32_t rowLanes, uint32_t groupRows, uint32_t scratchRows, bool nextKeys);

// The kernel's tiling, from shapes and attributes only (the kernel reads the lengths itself).
amct_stem::StemTiling computeTiling(int64_t B, int64_t Nq, int64_t Nk, int64_t maxQb, int64_t maxKb,
                                    const Attributes& attrs, bool promptFromKv, int64_t metadataWords,
                                    const PlatformFacts& facts);

}  // namespace stem
}  // namespace amct
