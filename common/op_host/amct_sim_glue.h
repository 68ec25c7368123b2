// The CPU registrations' bridge to the kernel sim: tensors as the GM regions a launch may touch.
// Includes torch and the sim's host header, never kernel_operator.h.
#pragma once

#include <ATen/ATen.h>

#include "amct_host.h"
#include "amct_sim_host.h"

namespace amct {

// A tensor's bytes as a GM region; an undefined (unused) argument is an empty, read-only region.
inline amct_sim::GmRegion simRegion(const at::Tensor& t, bool writable) {
  if (!t.defined()) return amct_sim::GmRegion{nullptr, 0, false};
  return amct_sim::GmRegion{t.data_ptr(), byteSize(t), writable};
}

}  // namespace amct
