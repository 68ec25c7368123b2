// amct kernel sim: control-register and system-variable APIs, with their real declarations:
//  SetSaturationFlag / GetSaturationFlag (basic_api/kernel_operator_common_intf.h): dav-2201
//      only (not supported on Ascend 950); the sim models the FLOAT mode (half/bf16 results
//      +-Inf -> +-MAX, NaN -> 0; see sim_modes.h) per block, starting from the launch's
//      HardwareModes::saturation. The CAST mode (float/int -> int overflow) is not modelled.
//  GetRuntimeUBSize (basic_api/kernel_operator_sys_var_intf.h): the UB bytes the API leaves to
//      TPipe buffers, the UB size less its 8 KB reserve (248 KB on dav-3510, where the sim's
//      allocation limit is the same); the real header returns 0 on dav-2201.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include "sim_context.h"

namespace AscendC {

enum class SaturationMode : uint8_t {
  FLOAT,  // float arithmetic and float conversions (half, bfloat16_t): +-Inf -> +-MAX, NaN -> 0
  CAST    // float -> integer and integer -> integer conversions
};

// Dependent on the mode, so that the arch check fires only where the API is used.
template <SaturationMode mode>
constexpr bool kSaturationFlagOnThisArch = amct_sim::detail::kArch2201;

template <SaturationMode mode>
__aicore__ inline void SetSaturationFlag(bool enableSat) {
  static_assert(kSaturationFlagOnThisArch<mode>, "SetSaturationFlag: not supported on dav-3510 (Ascend 950)");
  static_assert(mode == SaturationMode::FLOAT, "SetSaturationFlag: the sim models SaturationMode::FLOAT only");
  amct_sim::detail::Ctx("SetSaturationFlag")->saturation = enableSat;
}

template <SaturationMode mode>
__aicore__ inline bool GetSaturationFlag() {
  static_assert(kSaturationFlagOnThisArch<mode>, "GetSaturationFlag: not supported on dav-3510 (Ascend 950)");
  static_assert(mode == SaturationMode::FLOAT, "GetSaturationFlag: the sim models SaturationMode::FLOAT only");
  return amct_sim::detail::Ctx("GetSaturationFlag")->saturation;
}

__aicore__ inline uint32_t GetRuntimeUBSize() {
  const amct_sim::detail::BlockCtx* c = amct_sim::detail::Ctx("GetRuntimeUBSize");
  return amct_sim::detail::kArch3510 ? static_cast<uint32_t>(c->ubLimit) : 0u;
}

}  // namespace AscendC
