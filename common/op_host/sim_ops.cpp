// Test-only operators: let tests and the selftest read and override the platform facts the
// kernel sim reports to the tiling code, count kernel launches, force the SIMD path of the
// native CPU kernels, and switch the kernel sim's NPU cost model on and off.
#include <torch/library.h>

#include <optional>
#include <string>
#include <vector>

#include "amct_cpu_dispatch.h"
#include "amct_sim_host.h"
#include "amct_upload.h"
#include "sim_cost_table.h"
#include "tiling/tiling_api.h"

// common/op_kernel/amct_matmul_estimate.cpp (compiled against the kernel sim).
extern "C" void amct_matmul_estimate_launch(uint32_t blockDim, void* stream, uint8_t* a, uint8_t* b, uint8_t* c,
                                            uint8_t* tiling, uint32_t dtype);

namespace {

// The override is checked against the build arch's limits (a kernel of another arch checks it
// again at its launch).
void simSetPlatform(int64_t aivCores, int64_t ubBytes) { amct_sim::SetPlatform(aivCores, ubBytes); }

// The facts a kernel of __NPU_ARCH__ arch launched now would see; 0: the build's arch.
std::vector<int64_t> simGetPlatform(int64_t arch) {
  amct_sim::PlatformFacts facts = arch == 0 ? amct_sim::GetPlatform() : amct_sim::GetPlatform(static_cast<int>(arch));
  return {static_cast<int64_t>(facts.aivCores), static_cast<int64_t>(facts.ubBytes)};
}

// [aiv_cores, ub_bytes] as overridden (0: not overridden), so that an override can be restored
// exactly (restoring the facts would turn each arch's default UB into an override).
std::vector<int64_t> simGetPlatformOverride() {
  int64_t cores = 0, ub = 0;
  amct_sim_state_get_override(&cores, &ub);
  return {cores, ub};
}

// Restores an override taken with amct_sim_state_get_override.
struct PlatformOverrideGuard {
  int64_t cores = 0, ub = 0;
  PlatformOverrideGuard() { amct_sim_state_get_override(&cores, &ub); }
  ~PlatformOverrideGuard() {
    char err[512] = {0};
    (void)amct_sim_state_set_platform(__NPU_ARCH__, cores, ub, err, sizeof(err));  // was accepted before
  }
};

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

std::string cpuCapabilityPicked() { return amct::cpu::capabilityName(amct::cpu::lastPicked()); }

const amct_sim::cost::ArchTable& costTable(const std::string& soc) {
  const amct_sim::cost::ArchTable* t = amct_sim::cost::TableForSoc(soc);
  TORCH_CHECK(t != nullptr, "_sim_cost: soc must be ascend910b, ascend910_93 or ascend950, got '", soc, "'");
  return *t;
}

// From now on every kernel launch records an NPU time estimate with soc's cost table;
// sample_blocks > 0 emulates only about that many blocks per launch (their outputs only);
// cost_only: the Matmul API skips its arithmetic (outputs not written), for large cube shapes.
void simCostBegin(const std::string& soc, int64_t sampleBlocks, bool costOnly) {
  TORCH_CHECK(sampleBlocks >= 0 && sampleBlocks <= 65535, "_sim_cost_begin: sample_blocks must be in [0, 65535], got ",
              sampleBlocks);
  amct_sim::CostStart(costTable(soc).arch, static_cast<uint32_t>(sampleBlocks), costOnly);
}

std::string RecordJson(const amct_sim::CostRecord& r) {
  using amct_sim::cost::JsonNum;
  using amct_sim::cost::JsonString;
  std::string out = "{\"kernel\": " + JsonString(r.kernel) + ", \"table_arch\": " + std::to_string(r.tableArch) +
                    ", \"build_arch\": " + std::to_string(r.buildArch) + ", \"block_dim\": " + std::to_string(r.blockDim) +
                    ", \"blocks_run\": " + std::to_string(r.blocksRun) + ", \"slowest_block\": " +
                    std::to_string(r.slowestBlock) + ", \"slowest_cycles\": " + JsonNum(r.slowestCycles) +
                    ", \"clock_ghz\": " + JsonNum(r.clockGHz) + ", \"launch_us\": " + JsonNum(r.launchUs) +
                    ", \"estimate_us\": " + JsonNum(r.estimateUs) + ", \"busy_cycles\": {";
  for (int p = 0; p < amct_sim::cost::kPipes; ++p) {
    out += std::string(p ? ", " : "") + JsonString(amct_sim::cost::PipeName(p)) + ": " + JsonNum(r.busy[p]);
  }
  out += "}, \"ops\": {";
  for (int p = 0; p < amct_sim::cost::kPipes; ++p) {
    out += std::string(p ? ", " : "") + JsonString(amct_sim::cost::PipeName(p)) + ": " + std::to_string(r.ops[p]);
  }
  return out + "}}";
}

// Switches the model off; the launches recorded since _sim_cost_begin as a JSON list.
std::string simCostEnd() {
  std::string out = "[";
  for (const amct_sim::CostRecord& r : amct_sim::CostStop()) {
    if (out.size() > 1) out += ", ";
    out += RecordJson(r);
  }
  return out + "]";
}

// The NPU estimate of a plain matmul (m, k) x (k, n) -> (m, n) in bf16 or half through the
// emulated Matmul API (common/op_kernel/amct_matmul_estimate.cpp), cost-only: the operands are
// never allocated (a GM region is registered at an address nothing dereferences), so any shape
// runs in seconds. One launch record as JSON. The tiling is the build arch's.
std::string simMatmulEstimate(const std::string& soc, int64_t m, int64_t k, int64_t n, const std::string& dtype) {
  const amct_sim::cost::ArchTable& table = costTable(soc);
  TORCH_CHECK(m > 0 && k > 0 && n > 0 && m <= (1 << 30) && k <= (1 << 30) && n <= (1 << 30),
              "_sim_matmul_estimate: m, k, n must be in [1, 2^30], got ", m, ", ", k, ", ", n);
  TORCH_CHECK(dtype == "bfloat16" || dtype == "float16", "_sim_matmul_estimate: dtype must be bfloat16 or float16, got ",
              dtype);
  TORCH_CHECK(amct_sim_state_cost_get(nullptr) == 0, "_sim_matmul_estimate: the cost model is already on (_sim_cost_begin)");
  const uint32_t aic = static_cast<uint32_t>(table.aicCores.value);
  matmul_tiling::MultiCoreMatmulTiling tiler;
  namespace mt = matmul_tiling;
  const mt::DataType dt = dtype == "bfloat16" ? mt::DataType::DT_BF16 : mt::DataType::DT_FLOAT16;
  tiler.SetDim(static_cast<int32_t>(aic));
  tiler.SetAType(mt::TPosition::GM, mt::CubeFormat::ND, dt);
  tiler.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, dt);
  tiler.SetCType(mt::TPosition::GM, mt::CubeFormat::ND, dt);
  tiler.SetShape(static_cast<int32_t>(m), static_cast<int32_t>(n), static_cast<int32_t>(k));
  tiler.SetOrgShape(static_cast<int32_t>(m), static_cast<int32_t>(n), static_cast<int32_t>(k));
  tiler.SetBufferSpace(-1, -1, -1);
  TCubeTiling tiling;
  TORCH_CHECK(tiler.GetTiling(tiling) == 0, "_sim_matmul_estimate: GetTiling failed");
  const uint64_t aBytes = static_cast<uint64_t>(m) * k * 2, bBytes = static_cast<uint64_t>(k) * n * 2;
  const uint64_t bytes = aBytes + bBytes + static_cast<uint64_t>(m) * n * 2;
  uint8_t* base = reinterpret_cast<uint8_t*>(uintptr_t{1} << 46);  // never dereferenced in cost-only mode
  const PlatformOverrideGuard restore;
  amct_sim::SetPlatform(static_cast<int64_t>(table.aivCores.value), 0);
  try {
    amct_sim::GmScope scope{{base, bytes, true}, {&tiling, sizeof(tiling), false}};
    amct_sim::CostStart(table.arch, 0, true);
    amct_matmul_estimate_launch(static_cast<uint32_t>(tiling.usedCoreNum), nullptr, base, base + aBytes,
                                base + aBytes + bBytes, reinterpret_cast<uint8_t*>(&tiling), dtype == "bfloat16" ? 0 : 1);
    const std::vector<amct_sim::CostRecord> recs = amct_sim::CostStop();
    TORCH_CHECK(recs.size() == 1, "_sim_matmul_estimate: expected one launch record, got ", recs.size());
    return RecordJson(recs[0]);
  } catch (...) {
    amct_sim::CostStop();
    throw;
  }
}

std::string simCostTable(const std::string& soc) { return amct_sim::cost::TableJson(costTable(soc)); }

}  // namespace

TORCH_LIBRARY_FRAGMENT(amct, m) {
  m.def("_sim_set_platform(int aiv_cores, int ub_bytes) -> ()", &simSetPlatform);
  m.def("_sim_get_platform(int arch=0) -> int[]", &simGetPlatform);
  m.def("_sim_get_platform_override() -> int[]", &simGetPlatformOverride);
  m.def("_sim_launch_count() -> int", &simLaunchCount);
  m.def("_sim_set_modes(bool? saturation, bool? flush_subnormals, bool? strict_sync) -> ()", &simSetModes);
  m.def("_sim_get_modes() -> int[]", &simGetModes);
  m.def("_device_uploads_test(Tensor[] tilings, Tensor[] constants) -> int[]", &deviceUploadsTest);
  m.def("_cpu_capability(str? force=None) -> str[]", &cpuCapability);
  m.def("_cpu_capability_picked() -> str", &cpuCapabilityPicked);
  m.def("_sim_cost_begin(str soc, int sample_blocks=0, bool cost_only=False) -> ()", &simCostBegin);
  m.def("_sim_cost_end() -> str", &simCostEnd);
  m.def("_sim_cost_table(str soc) -> str", &simCostTable);
  m.def("_sim_matmul_estimate(str soc, int m, int k, int n, str dtype=\"bfloat16\") -> str", &simMatmulEstimate);
}
