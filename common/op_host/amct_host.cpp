#include "amct_host.h"

#include "amct_sim_host.h"
#include "amct_tiling.h"

#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/MemoryOverlap.h>

#include <algorithm>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace amct {

std::string dtypeName(at::ScalarType type) {
  switch (type) {
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kByte: return "uint8";
    case at::kChar: return "int8";
    case at::kShort: return "int16";
    case at::kInt: return "int32";
    case at::kLong: return "int64";
    case at::kBool: return "bool";
    case at::kComplexHalf: return "complex32";
    case at::kComplexFloat: return "complex64";
    case at::kComplexDouble: return "complex128";
    case at::kUInt16: return "uint16";
    case at::kUInt32: return "uint32";
    case at::kUInt64: return "uint64";
    case at::kFloat8_e4m3fn: return "float8_e4m3fn";
    case at::kFloat8_e5m2: return "float8_e5m2";
    case at::kFloat8_e8m0fnu: return "float8_e8m0fnu";
    case at::kFloat4_e2m1fn_x2: return "float4_e2m1fn_x2";
    default: {
      std::string name = c10::toString(type);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return name;
    }
  }
}

std::string dtypeList(std::initializer_list<at::ScalarType> types) {
  std::string out;
  size_t i = 0;
  for (at::ScalarType t : types) {
    if (i > 0) out += (i + 1 == types.size()) ? " or " : ", ";
    out += dtypeName(t);
    ++i;
  }
  return out;
}

void checkDtype(const char* op, const char* argument, at::ScalarType actual,
                std::initializer_list<at::ScalarType> allowed) {
  for (at::ScalarType t : allowed) {
    if (t == actual) return;
  }
  TORCH_CHECK(false, op, ": ", argument, " dtype must be ", dtypeList(allowed), ", got ", dtypeName(actual));
}

namespace {

bool sameShape(c10::SymIntArrayRef have, c10::SymIntArrayRef want) {
  if (have.size() != want.size()) return false;
  c10::SymBool same(true);
  for (size_t i = 0; i < want.size(); ++i) same = same.sym_and(have[i].sym_eq(want[i]));
  return same.guard_bool(__FILE__, __LINE__);
}

}  // namespace

void checkOutTensor(const char* op, const char* name, const at::Tensor& out, c10::SymIntArrayRef shape,
                    c10::ArrayRef<at::ScalarType> dtypes, const at::Tensor& like, bool resizeEmpty) {
  if (std::find(dtypes.begin(), dtypes.end(), out.scalar_type()) == dtypes.end()) {
    std::string allowed;
    for (size_t i = 0; i < dtypes.size(); ++i) {
      allowed += (i == 0 ? "" : (i + 1 == dtypes.size() ? " or " : ", ")) + dtypeName(dtypes[i]);
    }
    TORCH_CHECK(false, op, ": ", name, " dtype must be ", allowed, ", got ", dtypeName(out.scalar_type()));
  }
  TORCH_CHECK(out.device() == like.device(), op, ": ", name, " device must be ", like.device(), ", got ",
              out.device());
  if (sameShape(out.sym_sizes(), shape)) return;
  TORCH_CHECK(out.sym_numel().sym_eq(0).guard_bool(__FILE__, __LINE__), op, ": ", name, " shape must be ",
              shapeText(shape), " (or an empty tensor, which is resized to it), got ", shapeText(out.sym_sizes()));
  if (resizeEmpty) out.resize__symint(shape);
}

void checkOutOverlap(const char* op, const char* name, const at::Tensor& out, const char* inputName,
                     const at::Tensor& input, bool sameAllowed) {
  if (out.numel() == 0) return;
  TORCH_CHECK(at::has_internal_overlap(out) != at::MemOverlap::Yes, op, ": ", name,
              " must not have elements sharing memory (an expanded tensor), got strides ", out.strides());
  if (input.numel() == 0) return;
  // As ATen's assert_no_overlap: "too hard" (a tensor that is not dense) passes; such an out is
  // written through a temporary and such an input read through a contiguous copy.
  const at::MemOverlapStatus status = at::get_overlap_status(out, input);
  if (sameAllowed) {
    TORCH_CHECK(status != at::MemOverlapStatus::Partial, op, ": ", name, " must be ", inputName,
                " itself or not share memory with it, got a partial overlap");
  } else {
    TORCH_CHECK(status != at::MemOverlapStatus::Partial && status != at::MemOverlapStatus::Full, op, ": ", name,
                " must not share memory with ", inputName, ", got an overlap");
  }
}

namespace {

std::vector<at::ScalarType> resultDtypes(const at::Tensor& result, c10::ArrayRef<at::ScalarType> alsoAllowed) {
  std::vector<at::ScalarType> dtypes{result.scalar_type()};
  dtypes.insert(dtypes.end(), alsoAllowed.begin(), alsoAllowed.end());
  return dtypes;
}

// The result as out's dtype: itself, or its same-size reinterpretation (uint8 as float4_e2m1fn_x2).
at::Tensor asOutDtype(const at::Tensor& result, const at::Tensor& out) {
  return out.scalar_type() == result.scalar_type() ? result : result.view(out.scalar_type());
}

}  // namespace

void copyResultToOut(const char* op, const char* name, const at::Tensor& out, const at::Tensor& result,
                     c10::ArrayRef<at::ScalarType> alsoAllowed) {
  checkOutTensor(op, name, out, result.sym_sizes(), resultDtypes(result, alsoAllowed), result);
  out.copy_(asOutDtype(result, out));
}

at::Tensor functionalInput(const at::Tensor& t) {
  namespace fn = at::functionalization::impl;
  if (!t.defined() || !fn::isFunctionalTensor(t)) return t;
  fn::sync(t);
  return fn::from_functional_tensor(t);
}

void replaceOut(const char* op, const char* name, const at::Tensor& out, const at::Tensor& result,
                c10::ArrayRef<at::ScalarType> alsoAllowed) {
  namespace fn = at::functionalization::impl;
  {
    BelowFunctionalize below;
    const at::Tensor inner = fn::isFunctionalTensor(out) ? fn::from_functional_tensor(out) : out;
    checkOutTensor(op, name, inner, result.sym_sizes(), resultDtypes(result, alsoAllowed), result,
                   /*resizeEmpty=*/false);
  }
  fn::replace_(out, asOutDtype(result, out));
  fn::commit_update(out);
  fn::sync(out);
}

void adviseHugePages(const at::Tensor& output) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t(2) << 20;
  if (byteSize(output) < 4 * kHugePage) return;
  uintptr_t begin = reinterpret_cast<uintptr_t>(output.data_ptr());
  uintptr_t end = begin + byteSize(output);
  uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t last = end & ~(kHugePage - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only
#else
  (void)output;
#endif
}

PlatformFacts simPlatformFacts() { return simPlatformFacts(__NPU_ARCH__); }

PlatformFacts simPlatformFacts(int arch) {
  amct_sim::PlatformFacts facts = amct_sim::GetPlatform(arch);
  return PlatformFacts{facts.aivCores, facts.ubBytes};
}

}  // namespace amct
