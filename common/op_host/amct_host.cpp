#include "amct_host.h"

#include "amct_sim_host.h"

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

PlatformFacts simPlatformFacts() {
  amct_sim::PlatformFacts facts = amct_sim::GetPlatform();
  return PlatformFacts{facts.aivCores, facts.ubBytes};
}

}  // namespace amct
