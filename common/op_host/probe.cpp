// The NPU probe kernel (common/op_kernel/amct_probe.cpp) as operators. `_probe(out)` writes the
// kernel's eight int32 facts into `out` (a contiguous int32 tensor of 8) and returns it: on an
// NPU tensor the device kernel (probe_npu.cpp, NPU builds), on a CPU tensor the kernel sim.
// `_probe_emulated()` is the sim run under the current hardware modes (amct_ops._sim). The
// facts are decoded by amct_ops._probe; `selftest` puts them in its JSON.
#include <torch/library.h>

#include "amct_sim_glue.h"

extern "C" void amct_probe_launch(void* stream, uint8_t* out);

namespace amct {

// Shared with probe_npu.cpp.
void checkProbeOut(const at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kInt && out.numel() == 8 && out.is_contiguous(),
              "_probe: out must be a contiguous int32 tensor of 8 elements, got ", out.scalar_type(), " of shape ",
              out.sizes());
}

}  // namespace amct

namespace {

constexpr int64_t kFacts = 8;

at::Tensor probeCpu(const at::Tensor& out) {
  amct::checkProbeOut(out);
  amct_sim::GmScope scope{amct::simRegion(out, true)};
  amct_probe_launch(nullptr, static_cast<uint8_t*>(out.data_ptr()));
  return out;
}

at::Tensor probeEmulated() { return probeCpu(at::empty({kFacts}, at::kInt)); }

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("_probe(Tensor(a!) out) -> Tensor(a!)");
  m.def("_probe_emulated() -> Tensor", &probeEmulated);
}

TORCH_LIBRARY_IMPL(amct, CPU, m) { m.impl("_probe", &probeCpu); }
