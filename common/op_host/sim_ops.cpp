// Sim-only operators: let tests and the selftest read and override the platform facts the
// CPU backend reports to the tiling code, and count kernel launches.
#include <torch/library.h>

#include <vector>

#include "amct_sim_host.h"

namespace {

void simSetPlatform(int64_t aivCores, int64_t ubBytes) { amct_sim::SetPlatform(aivCores, ubBytes); }

std::vector<int64_t> simGetPlatform() {
  amct_sim::PlatformFacts facts = amct_sim::GetPlatform();
  return {static_cast<int64_t>(facts.aivCores), static_cast<int64_t>(facts.ubBytes)};
}

int64_t simLaunchCount() { return static_cast<int64_t>(amct_sim::LaunchCount()); }

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("_sim_set_platform(int aiv_cores, int ub_bytes) -> ()", &simSetPlatform);
  m.def("_sim_get_platform() -> int[]", &simGetPlatform);
  m.def("_sim_launch_count() -> int", &simLaunchCount);
}
