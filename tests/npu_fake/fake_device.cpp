// A fake NPU for the launcher test (tests/test_npu_launch.py): PrivateUse1 over host memory, so
// the real NPU glue (*_npu.cpp, amct_npu.h, platform_npu.cpp) runs on this machine against the
// stubs of fake_cann.cpp. It counts what a launch costs on the device's stream: host<->device
// copies by direction, stream synchronisations (a host<->device copy the host waits for is one)
// and kernel launches. Built by tests/npu_fake/harness.py with torch.utils.cpp_extension.
//
// Registered for PrivateUse1: an allocator (malloc'd host memory whose live ranges are tracked,
// so a launch's pointers can be checked to be device memory), a pinned host allocator,
// factories, copies, fills, views, resize_ and _local_scalar_dense (a D2H copy and a sync).
// Every other op runs through a boxed fallback, the CPU kernel via at::native::cpu_fallback, whose
// own staging copies are not counted (on the NPU those ops would be device kernels).
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "fake_npu.h"

namespace fake_npu {

namespace {

struct State {
  std::mutex mutex;
  Counts counts;
  std::vector<Launch> launches;
  std::map<uintptr_t, size_t> device, pinned;  // live allocations: base -> bytes
  Platform platform;
};

State& state() {
  static State s;
  return s;
}

// > 0 while the CPU fallback stages its arguments: those copies are not the op's.
thread_local int fallbackDepth = 0;

int streamToken;  // its address is the one stream's handle

constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;

bool inRanges(const std::map<uintptr_t, size_t>& ranges, const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = ranges.upper_bound(addr);
  if (it == ranges.begin()) return false;
  --it;
  return addr < it->first + it->second;
}

bool isDevicePointer(const void* p) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return inRanges(state().device, p);
}

bool isPinnedPointer(const void* p) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return inRanges(state().pinned, p);
}

// Host memory whose live ranges are tracked: standing for device memory, or pinned host memory.
class TrackedAllocator final : public c10::Allocator {
 public:
  TrackedAllocator(std::map<uintptr_t, size_t> State::*ranges, c10::Device device, c10::DeleterFnPtr release)
      : ranges_(ranges), device_(device), release_(release) {}

  c10::DataPtr allocate(size_t nbytes) override {
    void* p = nullptr;
    if (nbytes > 0) {
      p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
      TORCH_CHECK(p != nullptr, "fake npu: out of memory for ", nbytes, " bytes");
      std::lock_guard<std::mutex> lock(state().mutex);
      (state().*ranges_)[reinterpret_cast<uintptr_t>(p)] = nbytes;
    }
    return {p, p, release_, device_};
  }
  c10::DeleterFnPtr raw_deleter() const override { return release_; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }

  template <std::map<uintptr_t, size_t> State::*ranges>
  static void release(void* p) {
    if (p == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(state().mutex);
      (state().*ranges).erase(reinterpret_cast<uintptr_t>(p));
    }
    std::free(p);
  }

 private:
  std::map<uintptr_t, size_t> State::*ranges_;
  c10::Device device_;
  c10::DeleterFnPtr release_;
};

TrackedAllocator gAllocator(&State::device, c10::Device(kDevice, 0), &TrackedAllocator::release<&State::device>);
TrackedAllocator gPinnedAllocator(&State::pinned, c10::Device(c10::kCPU),
                                  &TrackedAllocator::release<&State::pinned>);
REGISTER_ALLOCATOR(kDevice, &gAllocator);

// One device, one stream.
struct DeviceGuard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kDevice; }
  c10::Device exchangeDevice(c10::Device) const override { return {kDevice, 0}; }
  c10::Device getDevice() const override { return {kDevice, 0}; }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
};
C10_REGISTER_GUARD_IMPL(PrivateUse1, DeviceGuard);

struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::Allocator* getPinnedMemoryAllocator() const override { return &gPinnedAllocator; }
  bool isPinnedPtr(const void* data) const override { return isPinnedPointer(data); }
};
const bool gHooks = (at::RegisterPrivateUse1HooksInterface(new Hooks), true);

// A CPU tensor over the same memory (a CPU tensor is returned as is).
at::Tensor hostView(const at::Tensor& t) {
  if (!t.is_privateuseone()) return t;
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(at::kCPU));
}

const c10::DispatchKeySet kKeys{c10::DispatchKey::PrivateUse1};

at::Tensor emptyMemoryFormat(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                             std::optional<at::Device>, std::optional<bool>,
                             std::optional<at::MemoryFormat> memoryFormat) {
  return at::detail::empty_generic(size, &gAllocator, kKeys, c10::dtype_or_default(dtype), memoryFormat);
}

at::Tensor emptyStrided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout>, std::optional<at::Device>, std::optional<bool>) {
  return at::detail::empty_strided_generic(size, stride, &gAllocator, kKeys, c10::dtype_or_default(dtype));
}

at::Tensor copyFrom(const at::Tensor& self, const at::Tensor& dst, bool nonBlocking) {
  if (dst.numel() == 0) return dst;
  // A host<->device copy waits for the stream unless it is non-blocking from or to pinned memory
  // (the runtime stages pageable memory synchronously).
  const at::Tensor& host = self.is_privateuseone() ? dst : self;
  const bool waits = !nonBlocking || !isPinnedPointer(host.data_ptr());
  if (fallbackDepth == 0) countCopy(self.is_privateuseone(), dst.is_privateuseone(), waits, dst.nbytes());
  hostView(dst).copy_(hostView(self));
  return dst;
}

const at::Tensor& resizeInPlace(const at::Tensor& self, c10::IntArrayRef size, std::optional<at::MemoryFormat>) {
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  const size_t needed = at::detail::computeStorageNbytesContiguous(size, self.dtype().itemsize(),
                                                                   self.storage_offset());
  c10::StorageImpl* storage = impl->storage().unsafeGetStorageImpl();
  if (needed > storage->nbytes()) {
    at::DataPtr fresh = gAllocator.allocate(needed);
    if (storage->nbytes() > 0) std::memcpy(fresh.get(), storage->data(), storage->nbytes());
    storage->set_data_ptr_noswap(std::move(fresh));
    storage->set_nbytes(needed);
  }
  impl->set_sizes_contiguous(size);
  return self;
}

at::Tensor copyFromAndResize(const at::Tensor& self, const at::Tensor& dst) {
  resizeInPlace(dst, self.sizes(), std::nullopt);
  return copyFrom(self, dst, false);
}

at::Tensor& fill(at::Tensor& self, const at::Scalar& value) {
  hostView(self).fill_(value);
  return self;
}

at::Tensor& zero(at::Tensor& self) {
  hostView(self).zero_();
  return self;
}

// Reading one element on the host: a D2H copy the host waits for.
at::Scalar localScalar(const at::Tensor& self) {
  if (fallbackDepth == 0) countCopy(true, false, true, self.element_size());
  return at::_local_scalar_dense(hostView(self));
}

void cpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  ++fallbackDepth;
  try {
    at::native::cpu_fallback(op, stack);
  } catch (...) {
    --fallbackDepth;
    throw;
  }
  --fallbackDepth;
}

}  // namespace

void countCopy(bool srcOnDevice, bool dstOnDevice, bool blocking, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Counts& c = state().counts;
  if (srcOnDevice && dstOnDevice) {
    ++c.d2d;
    return;
  }
  if (dstOnDevice) {
    ++c.h2d;
    c.h2dBytes += bytes;
  } else {
    ++c.d2h;
  }
  if (blocking) ++c.syncs;
}

void countSync() {
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().counts.syncs;
}

void countStreamQuery() {
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().counts.streamQueries;
}

void* currentStream() { return &streamToken; }

void recordLaunch(const char* kernel, uint32_t blockDim, void* stream, std::initializer_list<const void*> pointers) {
  Launch launch{kernel, blockDim, stream == currentStream(), {}};
  for (const void* p : pointers) launch.pointers.push_back(p == nullptr ? 0 : isDevicePointer(p) ? 1 : -1);
  std::lock_guard<std::mutex> lock(state().mutex);
  state().launches.push_back(std::move(launch));
}

Platform& platform() { return state().platform; }

}  // namespace fake_npu

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", &fake_npu::emptyMemoryFormat);
  m.impl("empty_strided", &fake_npu::emptyStrided);
  m.impl("_copy_from", &fake_npu::copyFrom);
  m.impl("_copy_from_and_resize", &fake_npu::copyFromAndResize);
  m.impl("resize_", &fake_npu::resizeInPlace);
  m.impl("fill_.Scalar", &fake_npu::fill);
  m.impl("zero_", &fake_npu::zero);
  m.impl("_local_scalar_dense", &fake_npu::localScalar);
  m.impl("view", &at::native::view);
  m.impl("as_strided", &at::native::as_strided_tensorimpl);
  m.impl("_reshape_alias", &at::native::_reshape_alias);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&fake_npu::cpuFallback>()); }

// The test's view of the fake device.
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  using namespace fake_npu;
  m.def("reset", [] {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().counts = Counts();
    state().launches.clear();
  });
  m.def("counts", [] {
    std::lock_guard<std::mutex> lock(state().mutex);
    const Counts& c = state().counts;
    return std::map<std::string, uint64_t>{{"h2d", c.h2d},       {"d2h", c.d2h},     {"d2d", c.d2d},
                                           {"h2d_bytes", c.h2dBytes}, {"syncs", c.syncs},
                                           {"stream_queries", c.streamQueries}};
  });
  m.def("launches", [] {
    std::lock_guard<std::mutex> lock(state().mutex);
    py::list out;
    for (const Launch& l : state().launches) {
      py::dict d;
      d["kernel"] = l.kernel;
      d["block_dim"] = l.blockDim;
      d["on_stream"] = l.onStream;
      d["pointers"] = l.pointers;
      out.append(d);
    }
    return out;
  });
  m.def(
      "set_platform",
      [](const std::string& soc, uint32_t aivCores, uint64_t ubBytes, bool queryFails) {
        Platform& p = platform();
        p.soc = soc;
        p.aivCores = aivCores;
        p.ubBytes = ubBytes;
        p.queryFails = queryFails;
      },
      py::arg("soc"), py::arg("aiv_cores") = 8, py::arg("ub_bytes") = 0, py::arg("query_fails") = false);
}
