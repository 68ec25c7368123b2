// NPU-side helpers shared by every operator's PrivateUse1 implementation (<op>_npu.cpp).
// Compiled only with the NPU backend; CI checks it with -fsyntax-only against torch_npu's headers.
#pragma once

#include <ATen/ATen.h>

#include "amct_host.h"
#include "amct_upload.h"
#include "torch_npu/csrc/core/npu/NPUStream.h"

namespace amct {

// Core count and UB budget of the current NPU (platform_npu.cpp, over CANN's platform_ascendc):
// min(GetCoreMemSize(UB), the arch budget); when the query fails, the arch's documented UB
// (192 KB on dav-2201, 248 KB on dav-3510, never 256 KiB) and AMCT_NPU_CORE_NUM (or 1).
PlatformFacts npuPlatformFacts();

// The stream to launch on. stream(true) first drains torch_npu's deferred task queue, so the
// launch cannot overtake queued work such as the tiling upload.
inline void* currentNpuStream() { return c10_npu::getCurrentNPUStream().stream(true); }

// The one host->device copy of a constant upload (blocking: it happens once per distinct
// tiling or LUT and device, never on a warm launch).
inline at::Tensor copyToNpu(const at::Tensor& host, const at::Device& device) {
  return host.to(device, /*non_blocking=*/false, /*copy=*/true);
}

// The process's cache of the launches' constant uploads (amct_upload.h).
inline DeviceUploads& npuUploads() {
  static DeviceUploads uploads(copyToNpu);
  return uploads;
}

// The tiling bytes on the NPU device of `like`: copied on the first launch with these bytes,
// then reused (the caller keeps the tensor until after the launch call).
inline at::Tensor deviceTiling(const at::Tensor& host, const at::Tensor& like) {
  return npuUploads().tiling(host, like.device());
}

// A process-lifetime host table (LUT) on the NPU device of `like`, copied once per device.
inline at::Tensor deviceConstant(const at::Tensor& host, const at::Tensor& like) {
  return npuUploads().constant(host, like.device());
}

}  // namespace amct
