// stem_indexer: schemas (docs/stem_indexer.md §2), and the Meta and CPU implementations. On the CPU the score
// matmuls are our own sequential-sum kernel (stem_indexer_cpu_kernels.h) and the selection is
// native C++ fused with them (§7.1), all in the shared host code. The fused AscendC kernel (its
// cube scores, its vector selection) runs on the CPU through the kernel sim as the private op
// _npu_stem_indexer_emulated (same schema), which the tests hold exactly to the CPU op (§7.3).
// Neither op is differentiable.
#include <torch/library.h>

#include <optional>
#include <tuple>
#include <vector>

#include "amct_sim_glue.h"
#include "stem_indexer_host.h"

extern "C" void amct_stem_indexer_launch(uint32_t blockDim, void* stream, uint8_t* qflat, uint8_t* kflat,
                                         uint8_t* vbias, uint8_t* qLens, uint8_t* kvLens, uint8_t* prompt,
                                         uint8_t* metadata, uint8_t* indices, uint8_t* seqLen, uint8_t* tiling);

namespace {

using amct::bytePtr;
using amct::simRegion;
using amct::stem::Attributes;

void simLaunch(const amct::stem::KernelArgs& a) {
  // prompt is kvLens itself when num_prompt_tokens is absent: one region.
  const bool ownPrompt = a.prompt.data_ptr() != a.kvLens.data_ptr();
  amct_sim::GmScope scope{simRegion(a.qflat, false),    simRegion(a.kflat, false),
                          simRegion(a.vbias, false),    simRegion(a.qLens, false),
                          simRegion(a.kvLens, false),   simRegion(ownPrompt ? a.prompt : a.qLens, false),
                          simRegion(a.metadata, false), simRegion(a.indices, true),
                          simRegion(a.seqLen, true),    simRegion(a.tiling, false)};
  amct_stem_indexer_launch(a.blockDim, nullptr, bytePtr(a.qflat), bytePtr(a.kflat), bytePtr(a.vbias),
                           bytePtr(a.qLens), bytePtr(a.kvLens), bytePtr(a.prompt), bytePtr(a.metadata),
                           bytePtr(a.indices), bytePtr(a.seqLen), bytePtr(a.tiling));
}

Attributes attributes(bool causal, int64_t stemBlockSize, int64_t stemStride, double alpha, int64_t initialBlocks,
                      int64_t windowSize, double rateMedium, int64_t biasMedium, double rateLarge, int64_t biasLarge,
                      int64_t precision) {
  return Attributes{causal,     stemBlockSize, stemStride, alpha,    initialBlocks, windowSize,
                    rateMedium, biasMedium,    rateLarge,  biasLarge, precision};
}

// The CPU op (native selection) and the emulated kernel differ only in the backend.
template <amct::stem::Selection Where>
std::tuple<at::Tensor, at::Tensor> stemIndexerCpu(
    const at::Tensor& qflat, const at::Tensor& kflat, const at::Tensor& vbias, const at::Tensor& qSeqLens,
    const at::Tensor& kvSeqLens, const std::optional<at::Tensor>& numPromptTokens,
    const std::optional<at::Tensor>& metadata, bool causal, int64_t stemBlockSize, int64_t stemStride, double alpha,
    int64_t initialBlocks, int64_t windowSize, double rateMedium, int64_t biasMedium, double rateLarge,
    int64_t biasLarge, int64_t precision) {
  // The kernel is dav-3510 code: it runs on the sim platform as dav-3510 sees it, whatever the build's arch.
  amct::stem::Backend backend{amct::simPlatformFacts(amct::stem::kKernelArch), simLaunch, false, Where};
  return amct::stem::stemIndexer(qflat, kflat, vbias, qSeqLens, kvSeqLens, numPromptTokens, metadata,
                                 attributes(causal, stemBlockSize, stemStride, alpha, initialBlocks, windowSize,
                                            rateMedium, biasMedium, rateLarge, biasLarge, precision),
                                 backend);
}

std::tuple<at::Tensor, at::Tensor> stemIndexerMeta(
    const at::Tensor& qflat, const at::Tensor& kflat, const at::Tensor& vbias, const at::Tensor& qSeqLens,
    const at::Tensor& kvSeqLens, const std::optional<at::Tensor>& numPromptTokens,
    const std::optional<at::Tensor>& metadata, bool causal, int64_t stemBlockSize, int64_t stemStride, double alpha,
    int64_t initialBlocks, int64_t windowSize, double rateMedium, int64_t biasMedium, double rateLarge,
    int64_t biasLarge, int64_t precision) {
  return amct::stem::stemIndexerMeta(qflat, kflat, vbias, qSeqLens, kvSeqLens, numPromptTokens, metadata,
                                     attributes(causal, stemBlockSize, stemStride, alpha, initialBlocks, windowSize,
                                                rateMedium, biasMedium, rateLarge, biasLarge, precision));
}

// Test hook: the C++ budget (§5) with the default rates and biases, for rows i = 0..Qb-1.
at::Tensor budgetsForTest(int64_t P, int64_t Qb, int64_t Kb, double alpha) {
  TORCH_CHECK(Qb >= 0, "_stem_indexer_budgets: Qb must be >= 0, got ", Qb);
  at::Tensor out = at::empty({Qb}, at::TensorOptions().dtype(at::kLong));
  int64_t* k = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < Qb; ++i) k[i] = amct::stem::topkBudget(P, i, Qb, Kb, alpha, 0.2, 30, 0.1, 30);
  return out;
}

// Test hook: the kernel's tiling for maxKb key blocks (B = 1, Nq 32, Nk 2) on the current sim
// platform as dav-3510 sees it, as [blockNum, rowLanes, groupRows, ubBudget, ubUsed, scratchRows,
// nextKeys].
std::vector<int64_t> tilingForTest(int64_t maxKb) {
  TORCH_CHECK(maxKb > 0, "_stem_indexer_tiling: maxKb must be positive, got ", maxKb);
  amct_stem::StemTiling t = amct::stem::computeTiling(1, 32, 2, 1, maxKb, Attributes{}, true,
                                                      amct::stem::metadataCapacity(1, 2),
                                                      amct::simPlatformFacts(amct::stem::kKernelArch));
  return {t.blockNum, t.rowLanes, t.groupRows, t.ubBudget, t.ubUsed, t.scratchRows, t.nextKeys};
}

// Test hook: the §7.1 query tile in rows (see setTileRowsForTest).
int64_t tileRowsForTest(int64_t rows) { return amct::stem::setTileRowsForTest(rows); }

}  // namespace

// The arguments of npu_stem_indexer (§2), also those of the emulated-kernel op (a macro, as
// Library::def takes the schema as one string literal).
#define AMCT_STEM_INDEXER_ARGS \
  "(Tensor qflat, Tensor kflat, Tensor vbias, Tensor q_seq_lens, Tensor kv_seq_lens, *, "                     \
  "Tensor? num_prompt_tokens=None, Tensor? metadata=None, bool causal=True, int stem_block_size=128, "        \
  "int stem_stride=16, float alpha=1.0, int initial_blocks=4, int window_size=4, "                           \
  "float k_block_num_rate_medium=0.2, int k_block_num_bias_medium=30, float k_block_num_rate_large=0.1, "    \
  "int k_block_num_bias_large=30, int topk_score_precision=1) -> (Tensor, Tensor)"

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("_stem_indexer_budgets(int P, int Qb, int Kb, float alpha) -> Tensor", &budgetsForTest);
  m.def("_stem_indexer_tiling(int maxKb) -> int[]", &tilingForTest);
  m.def("_stem_indexer_tile_rows(int rows) -> int", &tileRowsForTest);
  m.def("_stem_indexer_scores(Tensor queries, Tensor keys, bool portable=False) -> Tensor",
        &amct::stem::scoresForTest);
  m.def("npu_stem_indexer" AMCT_STEM_INDEXER_ARGS, {at::Tag::pt2_compliant_tag});
  m.def("_npu_stem_indexer_emulated" AMCT_STEM_INDEXER_ARGS);
  m.def(
      "npu_stem_indexer_metadata(Tensor q_seq_lens, Tensor kv_seq_lens, int q_heads, int kv_heads, *, "
      "bool causal=True, int stem_block_size=128, int dim_qkflat=2048, int window_size=4) -> Tensor",
      {at::Tag::pt2_compliant_tag});
}

TORCH_LIBRARY_IMPL(amct, Meta, m) {
  m.impl("npu_stem_indexer", &stemIndexerMeta);
  m.impl("npu_stem_indexer_metadata", &amct::stem::stemIndexerMetadataMeta);
}

TORCH_LIBRARY_IMPL(amct, CPU, m) {
  m.impl("npu_stem_indexer", &stemIndexerCpu<amct::stem::Selection::kNativeCpu>);
  m.impl("_npu_stem_indexer_emulated", &stemIndexerCpu<amct::stem::Selection::kKernel>);
  m.impl("npu_stem_indexer_metadata", &amct::stem::stemIndexerMetadata);
}

#if __NPU_ARCH__ != 3510
#ifndef AMCT_NPU_ARCH_NAME
#define AMCT_NPU_ARCH_NAME "dav-2201"
#endif
// A build for another SoC has no stem_indexer NPU library (its kernel is dav-3510 only); NPU
// tensors get the ascend950 error instead of a missing-kernel one.
namespace {

[[noreturn]] void notThisSoc(const char* op) {
  TORCH_CHECK(false, op, ": the NPU kernel is only available for ascend950, but this amct_ops wheel was built for ",
              "ascend910b or ascend910_93 (", AMCT_NPU_ARCH_NAME, ")");
}

std::tuple<at::Tensor, at::Tensor> stemIndexerOtherSoc(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                       const at::Tensor&, const at::Tensor&,
                                                       const std::optional<at::Tensor>&,
                                                       const std::optional<at::Tensor>&, bool, int64_t, int64_t,
                                                       double, int64_t, int64_t, double, int64_t, double, int64_t,
                                                       int64_t) {
  notThisSoc("npu_stem_indexer");
}

at::Tensor stemIndexerMetadataOtherSoc(const at::Tensor&, const at::Tensor&, int64_t, int64_t, bool, int64_t, int64_t,
                                       int64_t) {
  notThisSoc("npu_stem_indexer_metadata");
}

}  // namespace

TORCH_LIBRARY_IMPL(amct, PrivateUse1, m) {
  m.impl("npu_stem_indexer", &stemIndexerOtherSoc);
  m.impl("npu_stem_indexer_metadata", &stemIndexerMetadataOtherSoc);
}
#endif
