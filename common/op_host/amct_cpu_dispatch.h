// Run-time choice of a native CPU kernel's SIMD path, as ATen's DispatchStub does it.
//
// A native kernel source is listed in amct_add_operator(... CPU_KERNELS <file>) and compiled once
// per capability with ATen's macros: CPU_CAPABILITY is DEFAULT, AVX2 or AVX512 (with
// CPU_CAPABILITY_AVX2 / CPU_CAPABILITY_AVX512 and the matching -m flags), so at::vec::Vectorized<T>
// has that width in each copy. The source puts its functions inside `namespace CPU_CAPABILITY`
// and defines one table of function pointers there; the host code declares the table with
// AMCT_CPU_KERNEL_TABLE and calls `<name>ForThisCpu()`, which returns the copy for the best
// capability this CPU (and the OS) supports, lowered by the environment variable
// AMCT_CPU_CAPABILITY=default|avx2|avx512 or by the test hook torch.ops.amct._cpu_capability.
// Non-x86 machines compile only the DEFAULT copy.
#pragma once

#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace amct {
namespace cpu {

// For its lifetime, the calling thread computes with IEEE subnormals: the x86 flush-to-zero
// (MXCSR bit 15) and denormals-are-zero (bit 6) modes, which torch.set_flush_denormal(True) sets,
// are cleared, and the caller's MXCSR is restored afterwards. The native MXFP4 kernels need exact
// subnormals (docs/errors.md, "flush-denormal mode"). Covers the calling thread, which runs the
// kernels' parallel work inline or as one of ATen's workers; other workers keep their own MXCSR.
// No-op off x86.
class IeeeSubnormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  IeeeSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ & ~kFlushBits); }
  ~IeeeSubnormals() { _mm_setcsr(saved_); }

 private:
  static constexpr unsigned kFlushBits = (1u << 15) | (1u << 6);
  unsigned saved_;
#else
  IeeeSubnormals() {}
#endif

 public:
  IeeeSubnormals(const IeeeSubnormals&) = delete;
  IeeeSubnormals& operator=(const IeeeSubnormals&) = delete;
};

enum class Capability : int { kDefault = 0, kAvx2 = 1, kAvx512 = 2 };

// The best capability of this CPU and OS (cpuid and XCR0, through the compiler's builtins).
Capability detectedCapability();

// The capability kernels run with now: the detected one, unless lowered by AMCT_CPU_CAPABILITY
// (read once) or by forceCapability.
Capability activeCapability();

// Test hook: run every native kernel with `c` from now on (process-wide). Throws a RuntimeError
// naming both when `c` is above the detected capability. resetCapability() undoes it.
void forceCapability(Capability c);
void resetCapability();

const char* capabilityName(Capability c);  // "default", "avx2", "avx512"
Capability capabilityFromName(const std::string& name);  // RuntimeError listing the names otherwise

// The copy the latest pickTable call returned (process-wide): the test hook
// torch.ops.amct._cpu_capability_picked reports it, so that the tests see which copy ran, not
// only which capability was asked for.
void notePicked(Capability c);
Capability lastPicked();

// The copy for the active capability: the best one compiled at or below it.
inline Capability capabilityToRun(bool haveAvx2, bool haveAvx512) {
  switch (activeCapability()) {
    case Capability::kAvx512:
      if (haveAvx512) return Capability::kAvx512;
      [[fallthrough]];
    case Capability::kAvx2:
      if (haveAvx2) return Capability::kAvx2;
      [[fallthrough]];
    default:
      return Capability::kDefault;
  }
}

template <class Table>
const Table& pickTable(const Table& portable, const Table* avx2, const Table* avx512) {
  const Capability picked = capabilityToRun(avx2 != nullptr, avx512 != nullptr);
  notePicked(picked);
  return picked == Capability::kAvx512 ? *avx512 : picked == Capability::kAvx2 ? *avx2 : portable;
}

}  // namespace cpu
}  // namespace amct

// Declares the three copies of a kernel table `name` of type `Table` (in the enclosing namespace)
// and `const Table& nameForThisCpu()`, which picks one per call (cheap: one relaxed load).
#if defined(__x86_64__)
#define AMCT_CPU_KERNEL_TABLE(Table, name)                                                        \
  namespace DEFAULT {                                                                             \
  extern const Table name;                                                                        \
  }                                                                                               \
  namespace AVX2 {                                                                                \
  extern const Table name;                                                                        \
  }                                                                                               \
  namespace AVX512 {                                                                              \
  extern const Table name;                                                                        \
  }                                                                                               \
  inline const Table& name##ForThisCpu() { return ::amct::cpu::pickTable(DEFAULT::name, &AVX2::name, &AVX512::name); }
#else
#define AMCT_CPU_KERNEL_TABLE(Table, name)                                                        \
  namespace DEFAULT {                                                                             \
  extern const Table name;                                                                        \
  }                                                                                               \
  inline const Table& name##ForThisCpu() {                                                        \
    return ::amct::cpu::pickTable<Table>(DEFAULT::name, nullptr, nullptr);                        \
  }
#endif
