// Forced into every TU of the harness (-include): the names an ascend950 build's CMake defines.
#pragma once
#define AMCT_NPU_ARCH_NAME "dav-3510"
#define AMCT_SOC_NAME "ascend950"
