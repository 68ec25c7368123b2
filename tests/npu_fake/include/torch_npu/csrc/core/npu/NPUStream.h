// Test stub of torch_npu's NPUStream.h: one stream per process; synchronize() is counted.
#pragma once

#include <c10/core/Device.h>

#include "acl/acl.h"

namespace c10_npu {

class NPUStream {
 public:
  // need_empty: torch_npu drains its deferred task queue first (counted, never a sync).
  aclrtStream stream(bool need_empty = true) const;
  void synchronize() const;
};

NPUStream getCurrentNPUStream(c10::DeviceIndex device_index = -1);

}  // namespace c10_npu
