// Device copies of the constant host bytes a kernel launch needs (tiling structs, LUTs), made
// once and kept for the process: a warm launch copies nothing to the device and so never waits
// for a host->device copy. Torch only (no torch_npu): the NPU glue (amct_npu.h) plugs in the
// real copy; tests count the copies of a CPU stand-in (torch.ops.amct._device_uploads_test).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace amct {

class DeviceUploads {
 public:
  using CopyFn = at::Tensor (*)(const at::Tensor& host, const at::Device& device);

  explicit DeviceUploads(CopyFn copy) : copy_(copy) {}

  // A tiling (or any small host tensor) on `device`, keyed by its bytes: one copy per distinct
  // tiling and device. Beyond kMaxTilings distinct ones the cache starts over (a launch in
  // flight keeps its tensor alive through the caller's reference).
  at::Tensor tiling(const at::Tensor& host, const at::Device& device) {
    const at::Tensor bytes = host.contiguous();
    std::string content(static_cast<size_t>(bytes.nbytes()), '\0');
    if (!content.empty()) std::memcpy(&content[0], bytes.data_ptr(), content.size());
    std::lock_guard<std::mutex> lock(mutex_);
    if (tilings_.size() >= kMaxTilings) tilings_.clear();
    auto key = std::make_tuple(static_cast<int>(device.type()), static_cast<int>(device.index()), std::move(content));
    auto it = tilings_.find(key);
    if (it == tilings_.end()) it = tilings_.emplace(std::move(key), copyCounted(bytes, device)).first;
    return it->second;
  }

  // A host table that lives for the process (a LUT), keyed by its address: one copy per device.
  at::Tensor constant(const at::Tensor& host, const at::Device& device) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto key = std::make_tuple(static_cast<int>(device.type()), static_cast<int>(device.index()), host.data_ptr(),
                               static_cast<int64_t>(host.nbytes()));
    auto it = constants_.find(key);
    if (it == constants_.end()) it = constants_.emplace(key, copyCounted(host, device)).first;
    return it->second;
  }

  // Host->device copies made so far.
  uint64_t copies() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return copies_;
  }

  static constexpr size_t kMaxTilings = 4096;

 private:
  at::Tensor copyCounted(const at::Tensor& host, const at::Device& device) {
    ++copies_;
    return copy_(host, device);
  }

  CopyFn copy_;
  mutable std::mutex mutex_;
  uint64_t copies_ = 0;
  std::map<std::tuple<int, int, std::string>, at::Tensor> tilings_;
  std::map<std::tuple<int, int, const void*, int64_t>, at::Tensor> constants_;
};

}  // namespace amct
