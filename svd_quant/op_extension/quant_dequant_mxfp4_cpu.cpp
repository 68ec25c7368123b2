// quant_dequant_mxfp4's native CPU kernel, compiled once per SIMD capability (amct_cpu_dispatch.h).
//
// Per block of 32: the largest |x| as integer bits (a NaN's bits exceed +Inf's, so one compare
// finds non-finite blocks, which become all NaN), the exponent E (blockExponent, exact), then per
// element a = |x| * 2^-E (exact: a power-of-two scaling that can only lose bits below 2^-126,
// where q = 0 anyway), q = E2M1(a) rounding half up, out = q * 2^E with the sign of x (none for
// +-0). q is found exactly from a's bits: for a >= 1 the E2M1 grid keeps one fraction bit, so
// adding half of that bit's weight to the bits and clearing the bits below rounds half up (a
// carry moves to the next binade), capped at 6.0; below 1 the grid is 0, 0.5, 1 (thresholds 0.25
// and 0.75). No multiply-add is fused (-ffp-contract=off), so every capability gives the same bits.
#include "quant_dequant_mxfp4_cpu.h"

// GCC 12 reports the undefined vectors that some AVX-512 intrinsics (_mm512_cvtps_ph, _mm512_max_epi32)
// start from as uninitialized: false positives inside the intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <ATen/Parallel.h>
#include <ATen/cpu/vec/vec.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

namespace amct {
namespace qdq {
namespace CPU_CAPABILITY {

using Vf = at::vec::Vectorized<float>;
using Vi = at::vec::Vectorized<int32_t>;
static_assert(kBlock % Vf::size() == 0, "a block is whole vectors");

constexpr int64_t kGrainBlocks = 2048;  // blocks per parallel chunk (64K elements)

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// 2^e as a float32 for e in [-126, 127].
float pow2(int32_t e) { return bitsToFloat(static_cast<uint32_t>(e + 127) << 23); }

uint32_t blockMaxBits(const float* v) {
  Vi best(0);
  const Vi magnitude(0x7FFFFFFF);
  for (int64_t i = 0; i < kBlock; i += Vf::size()) {
    best = at::vec::maximum(best, Vi::loadu(v + i) & magnitude);
  }
  int32_t lanes[Vi::size()];
  best.store(lanes);
  int32_t m = 0;
  for (int i = 0; i < Vi::size(); ++i) m = lanes[i] > m ? lanes[i] : m;
  return static_cast<uint32_t>(m);
}

// q = E2M1(a) rounding half up, for a >= 0 (+Inf included).
Vf e2m1(const Vf& a) {
  const Vi bits = at::vec::cast<int32_t>(a);
  const Vi rounded = (bits + Vi(1 << 21)) & Vi(static_cast<int32_t>(0xFFC00000u));
  const Vf upper = at::vec::cast<float>(at::vec::minimum(rounded, Vi(0x40C00000)));  // 6.0
  const Vf half(0.5f);
  const Vf lower = ((a >= Vf(0.25f)) & half) + ((a >= Vf(0.75f)) & half);
  return Vf::blendv(lower, upper, a >= Vf(1.0f));
}

// out[i] for a finite block: (q(|v| * down1 * down2) * up1) * up2 with the sign of v (v != 0). The
// split multipliers keep every factor a normal float32 when E is beyond [-126, 126].
template <bool Split>
void quantizeBlock(const float* v, float* out, float down1, float down2, float up1, float up2) {
  const Vf signBit(-0.0f);
  const Vf zero(0.0f);
  for (int64_t i = 0; i < kBlock; i += Vf::size()) {
    const Vf x = Vf::loadu(v + i);
    Vf a = x.abs() * Vf(down1);
    if (Split) a = a * Vf(down2);
    Vf q = e2m1(a) * Vf(up1);
    if (Split) q = q * Vf(up2);
    const Vf sign = x & signBit & (x != zero);
    (q | sign).store(out + i);
  }
}

void quantDequantBlock(const float* v, float* out, const Params& p) {
  const uint32_t maxBits = blockMaxBits(v);
  if (maxBits >= 0x7F800000u) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t i = 0; i < kBlock; ++i) out[i] = nan;
    return;
  }
  const int32_t e = blockExponent(maxBits, p);
  if (e <= 126) {
    quantizeBlock<false>(v, out, pow2(-e), 1.0f, pow2(e), 1.0f);
  } else {
    // 2^-e = 2^-(e - k) * 2^-k and 2^e = 2^(e - k2) * 2^k2 with every factor normal.
    const int32_t k = e - 126, k2 = e > 127 ? e - 127 : 0;
    quantizeBlock<true>(v, out, pow2(-(e - k)), pow2(-k), pow2(e - k2), pow2(k2));
  }
}

template <typename T>
void loadBlock(const T* src, int64_t n, float* dst) {
  if (n < kBlock) std::memset(dst + n, 0, sizeof(float) * (kBlock - n));
  if constexpr (std::is_same_v<T, float>) {
    std::memcpy(dst, src, sizeof(float) * n);
  } else {
    at::vec::convert(src, dst, n);
  }
}

template <typename T>
void storeBlock(const float* src, int64_t n, T* dst) {
  if constexpr (std::is_same_v<T, float>) {
    std::memcpy(dst, src, sizeof(float) * n);
  } else {
    at::vec::convert(src, dst, n);
  }
}

template <typename T>
void runTyped(const T* x, T* out, int64_t rows, int64_t rowLength, Params p) {
  const int64_t perRow = (rowLength + kBlock - 1) / kBlock;
  at::parallel_for(0, rows * perRow, kGrainBlocks, [&](int64_t begin, int64_t end) {
    alignas(64) float in[kBlock];
    alignas(64) float res[kBlock];
    for (int64_t b = begin; b < end; ++b) {
      const int64_t row = b / perRow, col = (b % perRow) * kBlock;
      const int64_t n = std::min<int64_t>(kBlock, rowLength - col);
      const int64_t start = row * rowLength + col;
      if (std::is_same_v<T, float> && n == kBlock) {
        quantDequantBlock(reinterpret_cast<const float*>(x + start), reinterpret_cast<float*>(out + start), p);
        continue;
      }
      loadBlock(x + start, n, in);
      quantDequantBlock(in, res, p);
      storeBlock(res, n, out + start);
    }
  });
}

void run(const void* x, void* out, Dtype dtype, int64_t rows, int64_t rowLength, Params p) {
  switch (dtype) {
    case Dtype::kFp16:
      runTyped(static_cast<const c10::Half*>(x), static_cast<c10::Half*>(out), rows, rowLength, p);
      break;
    case Dtype::kBf16:
      runTyped(static_cast<const c10::BFloat16*>(x), static_cast<c10::BFloat16*>(out), rows, rowLength, p);
      break;
    case Dtype::kFp32:
      runTyped(static_cast<const float*>(x), static_cast<float*>(out), rows, rowLength, p);
      break;
  }
}

extern const Kernels kernels;
const Kernels kernels{&run};

}  // namespace CPU_CAPABILITY
}  // namespace qdq
}  // namespace amct
