// Test stub of CANN's acl/acl.h: only what the NPU glue calls (tests/npu_fake/harness.py).
#pragma once

#include <cstdint>

typedef void* aclrtStream;
typedef int aclError;

extern "C" {
const char* aclrtGetSocName();                   // the SoC set by the test (fake_npu.set_soc)
aclError aclrtSynchronizeStream(aclrtStream s);  // counted as a stream synchronisation
}
