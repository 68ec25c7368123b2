// The platform interface over CANN's platform_ascendc (its sole includer). NPU backend only;
// not validated on hardware.
#include <cstdlib>

#include "amct_npu.h"
#include "tiling/platform/platform_ascendc.h"

namespace amct {

namespace {

uint64_t archUbBudget() {
#if __NPU_ARCH__ == 3510
  return 253952;  // 248 KB usable on dav-3510
#else
  return 196608;  // 192 KB usable on dav-2201
#endif
}

uint32_t configuredCoreNum() {
  const char* value = std::getenv("AMCT_NPU_CORE_NUM");
  long n = value ? std::strtol(value, nullptr, 10) : 0;
  return n > 0 ? static_cast<uint32_t>(n) : 1u;
}

}  // namespace

PlatformFacts npuPlatformFacts() {
  PlatformFacts facts{configuredCoreNum(), archUbBudget()};
  auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
  if (platform == nullptr) return facts;
  uint32_t cores = platform->GetCoreNumAiv();
  if (cores > 0) facts.aivCores = cores;
  uint64_t ub = 0;
  platform->GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
  if (ub > 0 && ub < facts.ubBytes) facts.ubBytes = ub;
  return facts;
}

}  // namespace amct
