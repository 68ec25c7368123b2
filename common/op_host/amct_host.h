// Host-side helpers shared by every operator's CPU and NPU paths: error messages in the
// project's format, platform facts, tiling upload. Includes torch, never kernel_operator.h.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>

namespace amct {

// torch's Python name of a dtype ("float16", "bfloat16", "uint8", ...), as users write it.
std::string dtypeName(at::ScalarType type);

// "float16, bfloat16 or float32" for the error messages.
std::string dtypeList(std::initializer_list<at::ScalarType> types);

// RuntimeError "<op>: <argument> dtype must be <allowed>, got <actual>" unless t's dtype is allowed.
void checkDtype(const char* op, const char* argument, at::ScalarType actual,
                std::initializer_list<at::ScalarType> allowed);

// ---- out= overloads: one rule for every operator (docs/architecture.md, "out= overloads") ----

// Checks the out tensor `name` of `op` that is to receive a result of `shape` on `like`'s device:
// its dtype is one of `dtypes` (the result's first; the others are same-size reinterpretations),
// its device is like's, and its shape is `shape` or it has no elements, in which case it is
// resized to `shape` (as ATen's out= ops resize an empty out; a wrong non-empty shape raises
// where ATen would warn and resize, behaviour ATen has deprecated). Any strides are accepted.
// Raises "<op>: <name> dtype|device|shape must be <expected>, got <actual>". Symbolic shapes allowed.
void checkOutTensor(const char* op, const char* name, const at::Tensor& out, c10::SymIntArrayRef shape,
                    c10::ArrayRef<at::ScalarType> dtypes, const at::Tensor& like, bool resizeEmpty = true);

// For the native kernels, which write through raw pointers while reading the inputs: `out` may
// not have elements sharing memory, and may not share memory with `input` (named `inputName`),
// except that with sameAllowed it may be exactly `input` (an elementwise op in place).
void checkOutOverlap(const char* op, const char* name, const at::Tensor& out, const char* inputName,
                     const at::Tensor& input, bool sameAllowed = false);

// Runs write(dst) with a contiguous dst of out's shape and dtype: out itself when it is
// contiguous, otherwise a temporary that is then copied into out (out= accepts any strides).
template <typename Write>
void writeContiguous(const at::Tensor& out, const Write& write) {
  if (out.is_contiguous()) {
    write(out);
    return;
  }
  at::Tensor dst = at::empty(out.sizes(), out.options().memory_format(at::MemoryFormat::Contiguous));
  write(dst);
  out.copy_(dst);
}

// The out= overload as its functional op plus a copy (CompositeExplicitAutograd): what every
// device without its own .out kernel runs (Meta, fake tensors, the NPU). Checks `out` against the
// functional result (dtypes as in checkOutTensor, alsoAllowed after the result's) and copies.
void copyResultToOut(const char* op, const char* name, const at::Tensor& out, const at::Tensor& result,
                     c10::ArrayRef<at::ScalarType> alsoAllowed = {});

// Functionalization of the out= overloads (torch.compile, export, torch.func.functionalize), as
// ATen's generated kernels do it for its own out= ops: the functional op runs on the unwrapped
// inputs (callFunctional), then replaceOut checks `out` against its result and makes the result
// out's new value (no resize_ or copy_ is traced: torch's functional resize_ takes no SymInts).
at::Tensor functionalInput(const at::Tensor& t);
struct BelowFunctionalize {
  c10::impl::ExcludeDispatchKeyGuard guard{c10::DispatchKey::Functionalize};
};
void replaceOut(const char* op, const char* name, const at::Tensor& out, const at::Tensor& result,
                c10::ArrayRef<at::ScalarType> alsoAllowed = {});

// Calls `op` below functionalization with its tensor arguments unwrapped (functionalInput).
inline at::Tensor functionalArg(const at::Tensor& t) { return functionalInput(t); }
template <typename T>
const T& functionalArg(const T& value) {
  return value;
}
template <typename Signature, typename... Args>
auto callFunctional(const c10::TypedOperatorHandle<Signature>& op, const Args&... args) {
  BelowFunctionalize below;
  return op.call(functionalArg(args)...);
}

// The typed handle of a registered op ("amct::<op>", its overload "" or e.g. "last_dim"), for
// calls through the dispatcher.
template <typename Signature>
c10::TypedOperatorHandle<Signature> functionalOp(const char* name, const char* overload = "") {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Signature>();
}

// The facts a tiling is computed from: vector (AIV) core count and UB bytes per core.
struct PlatformFacts {
  uint32_t aivCores;
  uint64_t ubBytes;
};

// The kernel sim's facts: what it emulates (overridable by tests), for the build's
// arch, or for __NPU_ARCH__ arch (the host code of a dav-3510 kernel in a dav-2201 build).
PlatformFacts simPlatformFacts();
PlatformFacts simPlatformFacts(int arch);

// A POD tiling struct as a CPU uint8 tensor: the kernel's last GM_ADDR argument.
template <typename Tiling>
at::Tensor tilingTensor(const Tiling& tiling) {
  static_assert(std::is_trivially_copyable<Tiling>::value && std::is_standard_layout<Tiling>::value,
                "tiling structs are copied to the device as bytes");
  static_assert(sizeof(Tiling) % 8 == 0, "tiling structs are a multiple of 8 bytes");
  at::Tensor bytes = at::empty({static_cast<int64_t>(sizeof(Tiling))}, at::TensorOptions().dtype(at::kByte));
  std::memcpy(bytes.data_ptr(), &tiling, sizeof(Tiling));
  return bytes;
}

// CPU backend: ask the kernel for transparent huge pages on a large, still untouched output,
// so that writing it costs a few faults instead of one per 4 KB page (Linux; a no-op
// elsewhere, for small tensors, or when THP is off).
void adviseHugePages(const at::Tensor& output);

// Raw byte pointer of a tensor's data, as the kernel launchers take it.
inline uint8_t* bytePtr(const at::Tensor& t) { return static_cast<uint8_t*>(t.data_ptr()); }

inline uint64_t byteSize(const at::Tensor& t) {
  return static_cast<uint64_t>(t.numel()) * static_cast<uint64_t>(t.element_size());
}

// ceil(a / b) and a rounded down / up to a multiple of b, in 64 bits.
inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
inline uint64_t roundDown(uint64_t a, uint64_t b) { return a / b * b; }
inline uint64_t roundUp(uint64_t a, uint64_t b) { return ceilDiv(a, b) * b; }

}  // namespace amct
