// Host-side interface of the amct kernel sim (the CPU emulation of the AscendC subset).
//
// Used by operator host glue (which must never include kernel_operator.h) and by the kernel sim
// itself. Standard library only: usable without torch.
//
// The process-wide state (platform override, launch counter, the per-thread GM registry) lives
// in amct_sim_state.cpp, compiled ONCE per process (into libamct_common.so in the torch build,
// into the test program in standalone tests), behind the extern "C" accessors declared below,
// so that every shared library using the sim sees the same object. The state has no arch of its
// own: kernels of dav-2201 and dav-3510 may run in one process, and every per-arch fact (usable
// UB, UB default and limits) is asked for an arch: a launch passes its kernel's __NPU_ARCH__, host
// code the arch it tiles for (the argument-less forms below: the __NPU_ARCH__ it is compiled with).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace amct_sim {

// Every error of the sim. what() starts with "amct kernel sim: ".
struct SimError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One GM (device memory) region a launch may touch: [ptr, ptr + bytes).
struct GmRegion {
  const void* ptr;
  uint64_t bytes;
  bool writable;
};

// Platform facts the CPU backend emulates: AIV core count and UB bytes per core.
struct PlatformFacts {
  uint32_t aivCores;
  uint64_t ubBytes;
};

// One kernel launch estimated by the NPU cost model (sim_cost.h): the slowest block's cycles and
// its busy cycles per pipe (S, V, MTE2, MTE3, MTE1, M, FIX). An estimate, never a measurement.
struct CostRecord {
  char kernel[96];
  int32_t tableArch;  // arch of the cost table used (2201 or 3510)
  int32_t buildArch;  // __NPU_ARCH__ the kernel was compiled for
  uint32_t blockDim;
  uint32_t blocksRun;  // blocks emulated (all, or a sample)
  uint32_t slowestBlock;
  double slowestCycles;
  double busy[8];
  uint64_t ops[8];
  double clockGHz;
  double launchUs;
  double estimateUs;  // launchUs + slowestCycles / clock
};

// Hardware modes the sim can emulate (test switches; all off by default, see README.md):
//  saturation: the FLOAT saturation mode of SetSaturationFlag: half/bf16 results of vector
//      arithmetic and of casts to half/bf16 turn +-Inf into +-MAX and NaN into 0;
//  flushSubnormals: subnormal inputs and results of vector float arithmetic, casts and
//      compares are flushed to signed zero;
//  strictSync: no auto-sync: every scalar <-> pipe ordering on UB needs an explicit flag.
struct HardwareModes {
  bool saturation;
  bool flushSubnormals;
  bool strictSync;
};

}  // namespace amct_sim

// ---- process-wide state (defined in amct_sim_state.cpp) ---------------------------------------
// Errors are reported through (err, errLen) buffers rather than exceptions across the boundary.
extern "C" {
// The usable UB of __NPU_ARCH__ arch (196608 for 2201, 253952 for 3510; 0 for any other).
uint64_t amct_sim_state_arch_ub_bytes(int arch);
// Current platform facts for arch (override, else environment, else arch's defaults); the UB
// must fit arch's usable UB. 0 = ok, else err is set.
int amct_sim_state_get_platform(int arch, uint32_t* aivCores, uint64_t* ubBytes, char* err, size_t errLen);
// Override, checked against arch's limits; a value <= 0 resets that fact. 0 = ok (applied), else
// err is set (nothing applied).
int amct_sim_state_set_platform(int arch, int64_t aivCores, int64_t ubBytes, char* err, size_t errLen);
// The override alone (0: none), for restoring it exactly.
void amct_sim_state_get_override(int64_t* aivCores, int64_t* ubBytes);
// Launch counter: read, and count one more launch (returns the new value).
uint64_t amct_sim_state_launch_count(void);
uint64_t amct_sim_state_note_launch(void);
// The calling thread's GM registry: push a scope of regions, pop the innermost scope, copy the
// registered regions (all scopes) into out[0..cap) and return how many are registered.
void amct_sim_state_gm_push(const amct_sim::GmRegion* regions, size_t count);
void amct_sim_state_gm_pop(void);
size_t amct_sim_state_gm_snapshot(amct_sim::GmRegion* out, size_t cap);
// Hardware modes: override (each -1 = back to the environment), and the current ones
// (override, else AMCT_SIM_SATURATION / AMCT_SIM_FLUSH_SUBNORMALS / AMCT_SIM_STRICT_SYNC, else 0).
void amct_sim_state_set_modes(int saturation, int flushSubnormals, int strictSync);
int amct_sim_state_get_modes(int* saturation, int* flushSubnormals, int* strictSync, char* err, size_t errLen);
// Returns 1 the first time it is called with a given key (0..63) in the process, else 0.
int amct_sim_state_first_time(int key);
// NPU cost model switch: tableArch 0 = off (the default), else 2201 or 3510 (the cost table);
// sampleBlocks 0 = emulate every block, else only about that many (the first, the last and
// evenly spaced ones; the others are skipped, their output is not written).
void amct_sim_state_cost_set(int tableArch, uint32_t sampleBlocks);
int amct_sim_state_cost_get(uint32_t* sampleBlocks);
// Cost-only mode (with the cost model on): the Matmul API times its work but skips the arithmetic
// (outputs are not written); 0 = off (the default).
void amct_sim_state_cost_only_set(int costOnly);
int amct_sim_state_cost_only(void);
// Appends one launch record; count says how many are recorded; take copies min(cap, n) of them
// into out (if not null), clears them all and returns n.
void amct_sim_state_cost_record(const amct_sim::CostRecord* record);
size_t amct_sim_state_cost_count(void);
size_t amct_sim_state_cost_take(amct_sim::CostRecord* out, size_t cap);
}

namespace amct_sim {

// RAII: registers GM regions for the launches made on this thread while it lives (nestable).
class GmScope {
 public:
  GmScope(std::initializer_list<GmRegion> regions) { amct_sim_state_gm_push(regions.begin(), regions.size()); }
  ~GmScope() { amct_sim_state_gm_pop(); }
  GmScope(const GmScope&) = delete;
  GmScope& operator=(const GmScope&) = delete;
};

// Current facts for arch: SetPlatform override, else env AMCT_SIM_CORE_NUM / AMCT_SIM_UB_SIZE,
// else the defaults (40 cores; the usable UB: 196608 B on __NPU_ARCH__ 2201, 253952 B on 3510).
// Invalid env, or a UB (override or env) over arch's usable UB -> SimError.
inline PlatformFacts GetPlatform(int arch) {
  PlatformFacts facts{0, 0};
  char err[512] = {0};
  if (amct_sim_state_get_platform(arch, &facts.aivCores, &facts.ubBytes, err, sizeof(err)) != 0) {
    throw SimError(err);
  }
  return facts;
}

// value <= 0 resets that fact to its default; cores in [1, 65535], ub in [1024, ArchUbBytes(arch)],
// else SimError (and nothing changes).
inline void SetPlatform(int64_t aivCores, int64_t ubBytes, int arch) {
  char err[512] = {0};
  if (amct_sim_state_set_platform(arch, aivCores, ubBytes, err, sizeof(err)) != 0) throw SimError(err);
}

// The arch's documented usable UB (196608 on dav-2201, 253952 on dav-3510).
inline uint64_t ArchUbBytes(int arch) { return amct_sim_state_arch_ub_bytes(arch); }

#ifdef __NPU_ARCH__
// The same for the arch this code is compiled for (a kernel's, or the host code's build arch).
inline PlatformFacts GetPlatform() { return GetPlatform(__NPU_ARCH__); }
inline void SetPlatform(int64_t aivCores, int64_t ubBytes) { SetPlatform(aivCores, ubBytes, __NPU_ARCH__); }
inline uint64_t ArchUbBytes() { return ArchUbBytes(__NPU_ARCH__); }
#endif

// The hardware modes later launches emulate (override, else environment, else all off).
inline HardwareModes GetModes() {
  int sat = 0, flush = 0, strict = 0;
  char err[512] = {0};
  if (amct_sim_state_get_modes(&sat, &flush, &strict, err, sizeof(err)) != 0) throw SimError(err);
  return HardwareModes{sat != 0, flush != 0, strict != 0};
}
inline void SetModes(const HardwareModes& m) {
  amct_sim_state_set_modes(m.saturation ? 1 : 0, m.flushSubnormals ? 1 : 0, m.strictSync ? 1 : 0);
}
inline void ResetModes() { amct_sim_state_set_modes(-1, -1, -1); }

// Number of Launch() calls made so far in the process (all kernels).
inline uint64_t LaunchCount() { return amct_sim_state_launch_count(); }

// NPU cost model: from CostStart on, every launch records an estimate (with the cost table of
// tableArch, 2201 or 3510) until CostStop, which switches it off and returns the records. Off by
// default: a normal run pays one flag read per launch.
// costOnly: the Matmul API skips its arithmetic (a cost-only estimate of large shapes in seconds;
// outputs are garbage, as with sampleBlocks).
inline void CostStart(int tableArch, uint32_t sampleBlocks, bool costOnly = false) {
  amct_sim_state_cost_take(nullptr, 0);
  amct_sim_state_cost_only_set(costOnly ? 1 : 0);
  amct_sim_state_cost_set(tableArch, sampleBlocks);
}

inline std::vector<CostRecord> CostStop() {
  amct_sim_state_cost_set(0, 0);
  amct_sim_state_cost_only_set(0);
  std::vector<CostRecord> records(amct_sim_state_cost_count() + 16);
  records.resize(amct_sim_state_cost_take(records.data(), records.size()));
  return records;
}

}  // namespace amct_sim
