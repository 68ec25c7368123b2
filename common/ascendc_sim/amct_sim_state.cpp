// Process-wide state of the amct kernel sim: platform override, launch counter, GM registry,
// hardware modes, cost-model switch and records. Compile exactly once per process
// (libamct_common.so, or the standalone test program). It serves kernels of every arch in one
// process (docs/kernel_sim.md, "Kernels of two arches in one process"): the per-arch facts (the
// usable UB, the UB default and its validation) are taken per call from the arch the caller
// names, never from this file's own __NPU_ARCH__ (which it ignores).
#include "amct_sim_host.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace {

// The documented usable UB of an arch; 0 for an arch the sim does not emulate.
constexpr uint64_t archUbBytes(int arch) { return arch == 2201 ? 196608u : arch == 3510 ? 253952u : 0u; }
constexpr int64_t kDefaultCores = 40;
constexpr int64_t kMaxCores = 65535;
constexpr int64_t kMinUbBytes = 1024;

std::mutex g_platformMutex;
int64_t g_coresOverride = 0;  // 0: none
int64_t g_ubOverride = 0;     // 0: none
std::atomic<uint64_t> g_launchCount{0};
std::atomic<int> g_modeOverride[3] = {{-1}, {-1}, {-1}};  // saturation, flush, strict; -1: none
std::atomic<uint64_t> g_firstTimeBits{0};

struct ThreadGmRegistry {
  std::vector<amct_sim::GmRegion> regions;
  std::vector<size_t> marks;  // regions.size() before each push
};
thread_local ThreadGmRegistry t_gm;

bool checkCores(int64_t cores, const char* source, char* err, size_t errLen) {
  if (cores >= 1 && cores <= kMaxCores) return true;
  if (err != nullptr && errLen > 0) {
    std::snprintf(err, errLen, "amct kernel sim: %s: AIV core count must be in [1, %lld], got %lld", source,
                  static_cast<long long>(kMaxCores), static_cast<long long>(cores));
  }
  return false;
}

bool checkArch(int arch, char* err, size_t errLen) {
  if (archUbBytes(arch) != 0) return true;
  if (err != nullptr && errLen > 0) {
    std::snprintf(err, errLen, "amct kernel sim: __NPU_ARCH__ %d is not one the sim emulates (2201 or 3510)", arch);
  }
  return false;
}

bool checkUb(int arch, int64_t ub, const char* source, char* err, size_t errLen) {
  if (ub >= kMinUbBytes && static_cast<uint64_t>(ub) <= archUbBytes(arch)) return true;
  if (err != nullptr && errLen > 0) {
    std::snprintf(err, errLen,
                  "amct kernel sim: %s: UB bytes must be in [%lld, %llu] (the usable UB of __NPU_ARCH__ %d), "
                  "got %lld",
                  source, static_cast<long long>(kMinUbBytes), static_cast<unsigned long long>(archUbBytes(arch)),
                  arch, static_cast<long long>(ub));
  }
  return false;
}

// Parses an environment variable as a decimal/hex integer. Returns false (err set) if malformed.
bool envInt(const char* name, bool* present, int64_t* value, char* err, size_t errLen) {
  const char* text = std::getenv(name);
  *present = false;
  if (text == nullptr || text[0] == '\0') return true;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') {
    if (err != nullptr && errLen > 0) {
      std::snprintf(err, errLen, "amct kernel sim: environment %s='%s' is not an integer", name, text);
    }
    return false;
  }
  *present = true;
  *value = v;
  return true;
}

}  // namespace

extern "C" {

uint64_t amct_sim_state_arch_ub_bytes(int arch) { return archUbBytes(arch); }

int amct_sim_state_get_platform(int arch, uint32_t* aivCores, uint64_t* ubBytes, char* err, size_t errLen) {
  if (!checkArch(arch, err, errLen)) return 1;
  int64_t cores = 0;
  int64_t ub = 0;
  {
    std::lock_guard<std::mutex> lock(g_platformMutex);
    cores = g_coresOverride;
    ub = g_ubOverride;
  }
  if (cores == 0) {
    bool present = false;
    int64_t v = 0;
    if (!envInt("AMCT_SIM_CORE_NUM", &present, &v, err, errLen)) return 1;
    if (present) {
      if (!checkCores(v, "environment AMCT_SIM_CORE_NUM", err, errLen)) return 1;
      cores = v;
    } else {
      cores = kDefaultCores;
    }
  }
  if (ub != 0) {
    // Set (and checked) for the setter's arch: an arch with a smaller UB cannot take it.
    if (!checkUb(arch, ub, "SetPlatform", err, errLen)) return 1;
  } else {
    bool present = false;
    int64_t v = 0;
    if (!envInt("AMCT_SIM_UB_SIZE", &present, &v, err, errLen)) return 1;
    if (present) {
      if (!checkUb(arch, v, "environment AMCT_SIM_UB_SIZE", err, errLen)) return 1;
      ub = v;
    } else {
      ub = static_cast<int64_t>(archUbBytes(arch));
    }
  }
  *aivCores = static_cast<uint32_t>(cores);
  *ubBytes = static_cast<uint64_t>(ub);
  return 0;
}

int amct_sim_state_set_platform(int arch, int64_t aivCores, int64_t ubBytes, char* err, size_t errLen) {
  if (!checkArch(arch, err, errLen)) return 1;
  if (aivCores > 0 && !checkCores(aivCores, "SetPlatform", err, errLen)) return 1;
  if (ubBytes > 0 && !checkUb(arch, ubBytes, "SetPlatform", err, errLen)) return 1;
  std::lock_guard<std::mutex> lock(g_platformMutex);
  g_coresOverride = aivCores > 0 ? aivCores : 0;
  g_ubOverride = ubBytes > 0 ? ubBytes : 0;
  return 0;
}

void amct_sim_state_get_override(int64_t* aivCores, int64_t* ubBytes) {
  std::lock_guard<std::mutex> lock(g_platformMutex);
  *aivCores = g_coresOverride;
  *ubBytes = g_ubOverride;
}

uint64_t amct_sim_state_launch_count(void) { return g_launchCount.load(std::memory_order_relaxed); }

uint64_t amct_sim_state_note_launch(void) { return g_launchCount.fetch_add(1, std::memory_order_relaxed) + 1; }

void amct_sim_state_gm_push(const amct_sim::GmRegion* regions, size_t count) {
  t_gm.marks.push_back(t_gm.regions.size());
  for (size_t i = 0; i < count; ++i) t_gm.regions.push_back(regions[i]);
}

void amct_sim_state_gm_pop(void) {
  if (t_gm.marks.empty()) return;
  t_gm.regions.resize(t_gm.marks.back());
  t_gm.marks.pop_back();
}

size_t amct_sim_state_gm_snapshot(amct_sim::GmRegion* out, size_t cap) {
  size_t n = t_gm.regions.size();
  for (size_t i = 0; i < n && i < cap; ++i) out[i] = t_gm.regions[i];
  return n;
}

void amct_sim_state_set_modes(int saturation, int flushSubnormals, int strictSync) {
  const int values[3] = {saturation, flushSubnormals, strictSync};
  for (int i = 0; i < 3; ++i) g_modeOverride[i].store(values[i] < 0 ? -1 : (values[i] != 0 ? 1 : 0));
}

int amct_sim_state_get_modes(int* saturation, int* flushSubnormals, int* strictSync, char* err, size_t errLen) {
  static const char* const kEnv[3] = {"AMCT_SIM_SATURATION", "AMCT_SIM_FLUSH_SUBNORMALS", "AMCT_SIM_STRICT_SYNC"};
  int* out[3] = {saturation, flushSubnormals, strictSync};
  for (int i = 0; i < 3; ++i) {
    int v = g_modeOverride[i].load();
    if (v < 0) {
      bool present = false;
      int64_t e = 0;
      if (!envInt(kEnv[i], &present, &e, err, errLen)) return 1;
      if (present && e != 0 && e != 1) {
        if (err != nullptr && errLen > 0) {
          std::snprintf(err, errLen, "amct kernel sim: environment %s must be 0 or 1, got %lld", kEnv[i],
                        static_cast<long long>(e));
        }
        return 1;
      }
      v = present ? static_cast<int>(e) : 0;
    }
    *out[i] = v;
  }
  return 0;
}

int amct_sim_state_first_time(int key) {
  if (key < 0 || key > 63) return 0;
  uint64_t bit = uint64_t{1} << key;
  uint64_t old = g_firstTimeBits.fetch_or(bit);
  return (old & bit) ? 0 : 1;
}

// ---- NPU cost model: the switch and the launch records (sim_cost.h) ---------------------------
namespace {
std::atomic<int> g_costArch{0};
std::atomic<uint32_t> g_costSample{0};
std::atomic<int> g_costOnly{0};
std::mutex g_costMutex;
std::vector<amct_sim::CostRecord> g_costRecords;
}  // namespace

void amct_sim_state_cost_set(int tableArch, uint32_t sampleBlocks) {
  g_costSample.store(sampleBlocks, std::memory_order_relaxed);
  g_costArch.store(tableArch, std::memory_order_release);
}

void amct_sim_state_cost_only_set(int costOnly) { g_costOnly.store(costOnly != 0 ? 1 : 0, std::memory_order_relaxed); }

int amct_sim_state_cost_only(void) { return g_costOnly.load(std::memory_order_relaxed); }

int amct_sim_state_cost_get(uint32_t* sampleBlocks) {
  const int arch = g_costArch.load(std::memory_order_acquire);
  if (sampleBlocks != nullptr) *sampleBlocks = g_costSample.load(std::memory_order_relaxed);
  return arch;
}

void amct_sim_state_cost_record(const amct_sim::CostRecord* record) {
  std::lock_guard<std::mutex> lock(g_costMutex);
  g_costRecords.push_back(*record);
}

size_t amct_sim_state_cost_count(void) {
  std::lock_guard<std::mutex> lock(g_costMutex);
  return g_costRecords.size();
}

size_t amct_sim_state_cost_take(amct_sim::CostRecord* out, size_t cap) {
  std::lock_guard<std::mutex> lock(g_costMutex);
  const size_t n = g_costRecords.size();
  for (size_t i = 0; out != nullptr && i < n && i < cap; ++i) out[i] = g_costRecords[i];
  g_costRecords.clear();
  return n;
}

}  // extern "C"
