// Test-only operators: let tests and the selftest read and override the platform facts the
// kernel sim reports to the tiling code, count kernel launches, and force the SIMD path of the
// native CPU kernels.
#include <torch/library.h>

#include <optional>
#include <string>
#include <vector>

#include "amct_cpu_dispatch.h"
#include "amct_sim_host.h"
#include "amct_upload.h"

namespace {

void simSetPlatform(int64_t aivCores, int64_t ubBytes) { amct_sim::SetPlatform(aivCores, ubBytes); }

std::vector<int64_t> simGetPlatform() {
  amct_sim::PlatformFacts facts = amct_sim::GetPlatform();
  return {static_cast<int64_t>(facts.aivCores), static_cast<int64_t>(facts.ubBytes)};
}

// The hardware modes later sim launches emulate (amct_sim::HardwareModes); None: back to the
// environment (AMCT_SIM_SATURATION / AMCT_SIM_FLUSH_SUBNORMALS / AMCT_SIM_STRICT_SYNC).
void simSetModes(std::optional<bool> saturation, std::optional<bool> flushSubnormals, std::optional<bool> strictSync) {
  auto code = [](const std::optional<bool>& v) { return v ? (*v ? 1 : 0) : -1; };
  amct_sim_state_set_modes(code(saturation), code(flushSubnormals), code(strictSync));
}

// [saturation, flush_subnormals, strict_sync] as 0/1.
std::vector<int64_t> simGetModes() {
  amct_sim::HardwareModes m = amct_sim::GetModes();
  return {m.saturation ? 1 : 0, m.flushSubnormals ? 1 : 0, m.strictSync ? 1 : 0};
}

// The NPU launchers' upload cache (amct_upload.h) over a counting CPU copy: gets every tiling,
// then every constant, in order, and returns the copy count after each get (each result is
// checked to hold the host bytes).
std::vector<int64_t> deviceUploadsTest(const std::vector<at::Tensor>& tilings, const std::vector<at::Tensor>& constants) {
  amct::DeviceUploads uploads([](const at::Tensor& host, const at::Device&) { return host.clone(); });
  std::vector<int64_t> counts;
  auto record = [&](const at::Tensor& host, const at::Tensor& got) {
    TORCH_CHECK(at::equal(got, host.contiguous()), "_device_uploads_test: the cached copy differs from the host bytes");
    counts.push_back(static_cast<int64_t>(uploads.copies()));
  };
  for (const at::Tensor& t : tilings) record(t, uploads.tiling(t, at::Device(at::kCPU)));
  for (const at::Tensor& t : constants) record(t, uploads.constant(t, at::Device(at::kCPU)));
  return counts;
}

int64_t simLaunchCount() { return static_cast<int64_t>(amct_sim::LaunchCount()); }

// force: "default" / "avx2" / "avx512" pins the native kernels' SIMD path, "reset" returns to the
// detected one (or AMCT_CPU_CAPABILITY's), None only asks. Returns [active, detected].
std::vector<std::string> cpuCapability(const std::optional<std::string>& force) {
  using namespace amct::cpu;
  if (force && *force == "reset") {
    resetCapability();
  } else if (force) {
    forceCapability(capabilityFromName(*force));
  }
  return {capabilityName(activeCapability()), capabilityName(detectedCapability())};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("_sim_set_platform(int aiv_cores, int ub_bytes) -> ()", &simSetPlatform);
  m.def("_sim_get_platform() -> int[]", &simGetPlatform);
  m.def("_sim_launch_count() -> int", &simLaunchCount);
  m.def("_sim_set_modes(bool? saturation, bool? flush_subnormals, bool? strict_sync) -> ()", &simSetModes);
  m.def("_sim_get_modes() -> int[]", &simGetModes);
  m.def("_device_uploads_test(Tensor[] tilings, Tensor[] constants) -> int[]", &deviceUploadsTest);
  m.def("_cpu_capability(str? force=None) -> str[]", &cpuCapability);
}
