// Capability detection and the process-wide override of amct_cpu_dispatch.h.
#include "amct_cpu_dispatch.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>

namespace amct {
namespace cpu {
namespace {

Capability detect() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  // The features ATen's AVX512 / AVX2 builds are compiled with (-mavx512f -mavx512bw -mavx512vl
  // -mavx512dq -mfma; -mavx2 -mfma -mbmi -mbmi2 -mf16c). The builtins also check that the OS
  // saves the wider registers (XCR0).
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                    __builtin_cpu_supports("f16c");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (avx512) return Capability::kAvx512;
  if (avx2) return Capability::kAvx2;
#endif
  return Capability::kDefault;
}

// The ceiling the environment sets, or the detected capability.
Capability fromEnvironment(Capability detected) {
  const char* env = std::getenv("AMCT_CPU_CAPABILITY");
  if (env == nullptr || *env == '\0') return detected;
  Capability wanted = capabilityFromName(env);
  return static_cast<int>(wanted) < static_cast<int>(detected) ? wanted : detected;
}

Capability detectedOnce() {
  static const Capability detected = detect();
  return detected;
}

Capability defaultActive() {
  static const Capability active = fromEnvironment(detectedOnce());
  return active;
}

constexpr int kNotForced = -1;
std::atomic<int> forced{kNotForced};
constexpr int kNonePicked = -1;
std::atomic<int> picked{kNonePicked};

}  // namespace

Capability detectedCapability() { return detectedOnce(); }

Capability activeCapability() {
  const int f = forced.load(std::memory_order_relaxed);
  return f == kNotForced ? defaultActive() : static_cast<Capability>(f);
}

void forceCapability(Capability c) {
  TORCH_CHECK(static_cast<int>(c) <= static_cast<int>(detectedOnce()), "_cpu_capability: cannot force ",
              capabilityName(c), ", this CPU supports at most ", capabilityName(detectedOnce()));
  forced.store(static_cast<int>(c), std::memory_order_relaxed);
}

void resetCapability() { forced.store(kNotForced, std::memory_order_relaxed); }

void notePicked(Capability c) { picked.store(static_cast<int>(c), std::memory_order_relaxed); }

Capability lastPicked() {
  const int p = picked.load(std::memory_order_relaxed);
  TORCH_CHECK(p != kNonePicked, "_cpu_capability_picked: no native CPU kernel has run yet");
  return static_cast<Capability>(p);
}

const char* capabilityName(Capability c) {
  switch (c) {
    case Capability::kAvx512:
      return "avx512";
    case Capability::kAvx2:
      return "avx2";
    default:
      return "default";
  }
}

Capability capabilityFromName(const std::string& name) {
  if (name == "default") return Capability::kDefault;
  if (name == "avx2") return Capability::kAvx2;
  if (name == "avx512") return Capability::kAvx512;
  TORCH_CHECK(false, "AMCT_CPU_CAPABILITY / _cpu_capability: capability must be default, avx2 or avx512, got '", name,
              "'");
}

}  // namespace cpu
}  // namespace amct
