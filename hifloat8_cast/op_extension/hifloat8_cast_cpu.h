// The native CPU kernels of hifloat8_cast (hifloat8_cast_cpu.cpp, compiled once per SIMD
// capability, see amct_cpu_dispatch.h) and the small tables they run on, which the host builds
// once from the same HiF8 definitions as the AscendC kernel's LUTs (hifloat8_cast_host.cpp).
//
// Every 16-bit input is first brought to a "bf16 pattern" p: bf16 as it is; fp16 and fp32 as
// the top 16 bits of their fp32 pattern, with bit 0 set when the low 16 bits are not zero. The
// encode algorithm (docs/hifloat8.md) looks at the sign, the exponent and at most the top four
// fraction bits (the guard bit included), which p keeps; the sticky bit 0 keeps NaN apart from
// Inf and is below every rounding position. Rounding p to the HiF8 grid is then
//   r = min((|p| + inc[e]) & mask[e], 2^15)
// with inc / mask looked up by the exponent (the quantum of the binade, the 2^-23 and zero edges
// folded in), and the code is assembled from r's exponent and top fraction bits by one more
// lookup. Decoding is a lookup of the 128 magnitudes plus the sign. The AVX2 and portable copies
// encode fp16/bf16 by looking up a table of the codes of all 65536 patterns, built once with this
// encoder (hifloat8_cast_cpu.cpp, CodeTable); fake-quant computes on every path.
#pragma once

#include <cstdint>

#include "amct_cpu_dispatch.h"

namespace amct {
namespace hif8 {
namespace native {

enum class Dtype : int { kFp16 = 0, kBf16 = 1, kFp32 = 2 };

struct Tables {
  // By the input exponent field F of p: index clamp(F - 103, 0, 63).
  int16_t roundIncrement[64];
  int16_t roundMask[64];
  // By the rounded exponent field F' of r: index max(F' - 104, 0). Low byte: the code of
  // 2^(F'-127) (mantissa 0); high byte: 2^w, w the binade's mantissa width (0 for denormals).
  int16_t assembly[64];
  // Decoded patterns of the magnitude codes 0..127, fp16 and bf16 (fp32 = bf16 << 16).
  int16_t fp16[128];
  int16_t bf16[128];
};

// The tables, built on first use (thread-safe).
const Tables& tables();

// Each kernel converts n >= 0 contiguous elements, serially; out may equal in (same dtype).
struct Kernels {
  void (*encode)(Dtype in, const void* src, uint8_t* dst, int64_t n, const Tables& t);          // fp16 / bf16
  void (*decode)(Dtype out, const uint8_t* src, void* dst, int64_t n, const Tables& t);         // any
  void (*fakeQuant)(Dtype type, const void* src, void* dst, int64_t n, const Tables& t);        // any
};

AMCT_CPU_KERNEL_TABLE(Kernels, kernels)

}  // namespace native
}  // namespace hif8
}  // namespace amct
