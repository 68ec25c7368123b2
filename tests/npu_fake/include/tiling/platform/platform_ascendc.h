// Test stub of CANN's tiling/platform/platform_ascendc.h: the two queries platform_npu.cpp makes,
// with the real signatures (asc-devkit include/utils/tiling/platform/platform_ascendc.h); the
// answers are set by the test (fake_npu.set_platform).
#pragma once

#include <cstdint>

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };

class PlatformAscendC {
 public:
  uint32_t GetCoreNumAiv(void) const;
  void GetCoreMemSize(const CoreMemType& memType, uint64_t& size) const;
};

class PlatformAscendCManager {
 public:
  static PlatformAscendC* GetInstance();  // nullptr when the test says the query fails
};

}  // namespace platform_ascendc
