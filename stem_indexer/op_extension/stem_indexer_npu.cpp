// stem_indexer on the NPU (PrivateUse1, ascend950 only): the shared host logic (validation, the
// -1 / 0 fills of the outputs on the device) with one launch of the fused AscendC kernel, which
// scores on its cube and selects on its vector cores, reading the lengths and the metadata on the
// device: no ATen matmul; device lengths are not copied, CPU ones go in one non-blocking copy
// (stem_indexer_host.cpp). The metadata generator runs on the host (a D2H copy of the lengths, an
// H2D copy of the plan), so it is not capturable in a graph. Built only with CANN for dav-3510;
// compiled with -fsyntax-only against torch_npu's headers in CI and run against stubs by
// tests/test_npu_launch.py (copies and syncs counted). Not validated on hardware.
#include <torch/library.h>

#include <optional>
#include <string>
#include <tuple>

#include "acl/acl.h"
#include "amct_npu.h"
#include "stem_indexer_host.h"

extern "C" void amct_stem_indexer_launch(uint32_t blockDim, void* stream, uint8_t* qflat, uint8_t* kflat,
                                         uint8_t* vbias, uint8_t* qLens, uint8_t* kvLens, uint8_t* prompt,
                                         uint8_t* metadata, uint8_t* indices, uint8_t* seqLen, uint8_t* tiling);

namespace {

using amct::bytePtr;

// docs/stem_indexer.md S10: the device must be an ascend950 (this library is only built for dav-3510).
void checkDeviceSoc(const char* op) {
  const char* soc = aclrtGetSocName();
  const std::string name = soc != nullptr ? soc : "";
  TORCH_CHECK(name.find("950") != std::string::npos, op,
              ": the NPU kernel is only available for ascend950, but this amct_ops wheel was built for ascend950 "
              "and the device is ",
              name.empty() ? std::string("of an unknown SoC") : name);
}

void npuLaunch(const amct::stem::KernelArgs& a) {
  at::Tensor tilingDev = amct::deviceTiling(a.tiling, a.indices);  // cached per tiling and device
  amct_stem_indexer_launch(a.blockDim, amct::currentNpuStream(), bytePtr(a.qflat), bytePtr(a.kflat),
                           bytePtr(a.vbias), bytePtr(a.qLens), bytePtr(a.kvLens), bytePtr(a.prompt),
                           bytePtr(a.metadata), bytePtr(a.indices), bytePtr(a.seqLen), bytePtr(tilingDev));
}

std::tuple<at::Tensor, at::Tensor> stemIndexerNpu(
    const at::Tensor& qflat, const at::Tensor& kflat, const at::Tensor& vbias, const at::Tensor& qSeqLens,
    const at::Tensor& kvSeqLens, const std::optional<at::Tensor>& numPromptTokens,
    const std::optional<at::Tensor>& metadata, bool causal, int64_t stemBlockSize, int64_t stemStride, double alpha,
    int64_t initialBlocks, int64_t windowSize, double rateMedium, int64_t biasMedium, double rateLarge,
    int64_t biasLarge, int64_t precision) {
  checkDeviceSoc("npu_stem_indexer");
  amct::stem::Attributes attrs{causal,     stemBlockSize, stemStride, alpha,    initialBlocks, windowSize,
                               rateMedium, biasMedium,    rateLarge,  biasLarge, precision};
  amct::stem::Backend backend{amct::npuPlatformFacts(), npuLaunch, true};
  return amct::stem::stemIndexer(qflat, kflat, vbias, qSeqLens, kvSeqLens, numPromptTokens, metadata, attrs, backend);
}

at::Tensor stemIndexerMetadataNpu(const at::Tensor& qSeqLens, const at::Tensor& kvSeqLens, int64_t qHeads,
                                  int64_t kvHeads, bool causal, int64_t stemBlockSize, int64_t dimQkflat,
                                  int64_t windowSize) {
  checkDeviceSoc("npu_stem_indexer_metadata");
  // Host generator: the lengths are copied to the host, the plan back to the device.
  return amct::stem::stemIndexerMetadata(qSeqLens, kvSeqLens, qHeads, kvHeads, causal, stemBlockSize, dimQkflat,
                                         windowSize);
}

}  // namespace

TORCH_LIBRARY_IMPL(amct, PrivateUse1, m) {
  m.impl("npu_stem_indexer", &stemIndexerNpu);
  m.impl("npu_stem_indexer_metadata", &stemIndexerMetadataNpu);
}
