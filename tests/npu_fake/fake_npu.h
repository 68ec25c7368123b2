// The fake NPU's shared state (fake_device.cpp): what the stubs of CANN and torch_npu
// (fake_cann.cpp) count and record, and what the test reads back through the Python module.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace fake_npu {

// Events since the last reset().
struct Counts {
  uint64_t h2d = 0, d2h = 0, d2d = 0;  // copies by direction (the CPU fallback's own are not counted)
  uint64_t h2dBytes = 0;
  uint64_t syncs = 0;  // stream synchronisations; a host<->device copy the host waits for is one
  uint64_t streamQueries = 0;  // getCurrentNPUStream().stream(...) calls
};

// One kernel launch: its entry, blockDim, whether it was given the current stream, and for each
// pointer argument 1 (inside a live fake-device allocation), 0 (null) or -1 (anything else).
struct Launch {
  std::string kernel;
  uint32_t blockDim = 0;
  bool onStream = false;
  std::vector<int> pointers;
};

void countCopy(bool srcOnDevice, bool dstOnDevice, bool blocking, uint64_t bytes);
void countSync();
void countStreamQuery();
void* currentStream();
void recordLaunch(const char* kernel, uint32_t blockDim, void* stream, std::initializer_list<const void*> pointers);

// What the stubbed platform answers (set by the test).
struct Platform {
  std::string soc = "Ascend950PR";
  bool queryFails = false;
  uint32_t aivCores = 8;
  uint64_t ubBytes = 0;  // 0: GetCoreMemSize reports nothing
};
Platform& platform();

}  // namespace fake_npu
