// `_probe(out)` on the NPU (PrivateUse1): the probe kernel (common/op_kernel/amct_probe.cpp,
// compiled by bisheng into libamct_common_npu) on the current stream, one block. Built only with
// CANN; compiled with -fsyntax-only against torch_npu's headers in CI. Not run on hardware.
#include <torch/library.h>

#include "amct_npu.h"

extern "C" void amct_probe_launch(void* stream, uint8_t* out);

namespace amct {
void checkProbeOut(const at::Tensor& out);  // probe.cpp (libamct_common)
}

namespace {

at::Tensor probeNpu(const at::Tensor& out) {
  amct::checkProbeOut(out);
  amct_probe_launch(amct::currentNpuStream(), amct::bytePtr(out));
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(amct, PrivateUse1, m) { m.impl("_probe", &probeNpu); }
