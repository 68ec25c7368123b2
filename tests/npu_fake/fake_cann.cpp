// Stubs of the CANN and torch_npu entry points the NPU glue calls, over the fake device
// (fake_device.cpp). The kernels' amct_<op>_launch entries only record the launch: the kernels
// themselves are tested in the kernel sim by each operator's tests, not here.
#include <cstdint>

#include "acl/acl.h"
#include "fake_npu.h"
#include "tiling/platform/platform_ascendc.h"
#include "torch_npu/csrc/core/npu/NPUStream.h"

extern "C" {

const char* aclrtGetSocName() { return fake_npu::platform().soc.c_str(); }

aclError aclrtSynchronizeStream(aclrtStream) {
  fake_npu::countSync();
  return 0;
}

void amct_hifloat8_cast_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* output, uint8_t* lut,
                               uint8_t* tiling) {
  fake_npu::recordLaunch("hifloat8_cast", blockDim, stream, {input, output, lut, tiling});
}

void amct_hifloat4_cast_launch(uint32_t blockDim, void* stream, uint8_t* in0, uint8_t* in1, uint8_t* out0,
                               uint8_t* out1, uint8_t* tiling) {
  fake_npu::recordLaunch("hifloat4_cast", blockDim, stream, {in0, in1, out0, out1, tiling});
}

void amct_quant_dequant_mxfp4_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* output,
                                     uint8_t* tiling) {
  fake_npu::recordLaunch("quant_dequant_mxfp4", blockDim, stream, {input, output, tiling});
}

void amct_svd_quant_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* codes, uint8_t* scales,
                           uint8_t* tiling) {
  fake_npu::recordLaunch("svd_quant", blockDim, stream, {input, codes, scales, tiling});
}

void amct_svd_quant_fused_launch(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* wCodes, uint8_t* wScales,
                                 uint8_t* down, uint8_t* up, uint8_t* out, uint8_t* workspace, uint8_t* tiling) {
  fake_npu::recordLaunch("svd_quant_fused", blockDim, stream, {x, wCodes, wScales, down, up, out, workspace, tiling});
}

void amct_stem_indexer_launch(uint32_t blockDim, void* stream, uint8_t* qflat, uint8_t* kflat, uint8_t* vbias,
                              uint8_t* qLens, uint8_t* kvLens, uint8_t* prompt, uint8_t* metadata, uint8_t* indices,
                              uint8_t* seqLen, uint8_t* tiling) {
  fake_npu::recordLaunch("stem_indexer", blockDim, stream,
                         {qflat, kflat, vbias, qLens, kvLens, prompt, metadata, indices, seqLen, tiling});
}

void amct_probe_launch(void* stream, uint8_t* out) { fake_npu::recordLaunch("probe", 1, stream, {out}); }

}  // extern "C"

namespace c10_npu {

aclrtStream NPUStream::stream(bool) const {
  fake_npu::countStreamQuery();
  return fake_npu::currentStream();
}

void NPUStream::synchronize() const { fake_npu::countSync(); }

NPUStream getCurrentNPUStream(c10::DeviceIndex) { return NPUStream(); }

}  // namespace c10_npu

namespace platform_ascendc {

uint32_t PlatformAscendC::GetCoreNumAiv(void) const { return fake_npu::platform().aivCores; }

void PlatformAscendC::GetCoreMemSize(const CoreMemType& memType, uint64_t& size) const {
  if (memType == CoreMemType::UB) size = fake_npu::platform().ubBytes;
}

PlatformAscendC* PlatformAscendCManager::GetInstance() {
  static PlatformAscendC instance;
  return fake_npu::platform().queryFails ? nullptr : &instance;
}

}  // namespace platform_ascendc
