// The Matmul tiling API's platform for the kernels that are dav-3510 code in every build
// (KERNEL_3510: svd_quant's fused kernel, stem_indexer's): their host code tiles for the kernel's
// SoC, ascend950, not the build's (a dav-2201 build runs them in the kernel sim).
#pragma once

#include "tiling/tiling_api.h"

namespace amct {

inline matmul_tiling::PlatformInfo ascend950MatmulPlatform() {
  matmul_tiling::PlatformInfo p{};
  p.socVersion = platform_ascendc::SocVersion::ASCEND950;
  return p;
}

}  // namespace amct
