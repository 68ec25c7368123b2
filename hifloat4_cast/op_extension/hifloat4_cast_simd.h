// The SIMD operations the native HiF4 kernels need that at::vec::Vectorized lacks, one
// definition per capability (included by hifloat4_cast_cpu.cpp, which is compiled once per
// capability with CPU_CAPABILITY_AVX512 / CPU_CAPABILITY_AVX2 / neither):
//
// * lookup: a per-lane permute of one vector by an index vector (vpermps). It spreads the 16
//   per-subgroup factors of a block over the block's elements, one instruction per vector;
//   at::vec has only fixed interleaves and a gather through memory, which was slower.
// * (storeLowBytes, pack's nibble bytes, is shared with MXFP4: common/op_host/amct_cpu_simd.h.)
// * signedMin: sign(v) min(|v|, limit) in one AVX-512 instruction (vrangeps; AVX2: a min and a
//   max). It is on the per-element path of every code: keeping the sign of x m in the clamped value
//   carries it through the rounding to the code and the product c f, so no sign bits are or-ed in.
// * joinHalves: the high 16 bits of one vector's lanes and the low 16 bits of another's (one
//   vpblendw / masked blend instead of an and, an xor and an xor): bfloat16 pairs' stores.
// * swapPairs, maxOfLanes: lanes 2i and 2i + 1 exchanged (an in-lane shuffle), and the largest lane
//   (a shuffle tree): a block's group maxima and its maximum in its own rows (the per-block stage
//   B), where at::vec offers only loops through memory.
//
// The portable copies are plain loops over the lanes; every copy gives the same bits.
#pragma once

#include <ATen/cpu/vec/vec.h>

#include <cmath>
#include <cstdint>

#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>
#endif

namespace amct {
namespace hif4 {
namespace CPU_CAPABILITY {

// Lane i of the result is lane index[i] of `table` (every index in [0, size)).
inline at::vec::Vectorized<float> lookup(const at::vec::Vectorized<float>& table,
                                         const at::vec::Vectorized<int32_t>& index) {
#if defined(CPU_CAPABILITY_AVX512)
  return _mm512_permutexvar_ps(index, table);
#elif defined(CPU_CAPABILITY_AVX2)
  return _mm256_permutevar8x32_ps(table, index);
#else
  constexpr int n = at::vec::Vectorized<float>::size();
  float t[n], out[n];
  int32_t idx[n];
  table.store(t);
  index.store(idx);
  for (int i = 0; i < n; ++i) out[i] = t[idx[i]];
  return at::vec::Vectorized<float>::loadu(out);
#endif
}

// sign(v) min(|v|, limit) for limit >= 0, the sign bit of v kept (-0.0 stays -0.0), the same value
// on every path for every non-NaN v. A NaN v (only in a poisoned block, whose outputs are replaced)
// gives +-limit or NaN, never an overflow: the portable copy's integer steps on the result are plain
// C++ arithmetic.
inline at::vec::Vectorized<float> signedMin(const at::vec::Vectorized<float>& v, const at::vec::Vectorized<float>& limit) {
#if defined(CPU_CAPABILITY_AVX512)
  return _mm512_range_ps(v, limit, 0x02);  // imm: minimum of the absolute values, sign of v (the first operand)
#elif defined(CPU_CAPABILITY_AVX2)
  // min(v, limit) keeps v unless v > limit; the max then raises v < -limit to -limit.
  return _mm256_max_ps(_mm256_min_ps(v, limit), _mm256_xor_ps(limit, _mm256_set1_ps(-0.0f)));
#else
  constexpr int n = at::vec::Vectorized<float>::size();
  float a[n], b[n];
  v.store(a);
  limit.store(b);
  for (int i = 0; i < n; ++i) a[i] = std::copysign(std::fabs(a[i]) < b[i] ? std::fabs(a[i]) : b[i], a[i]);
  return at::vec::Vectorized<float>::loadu(a);
#endif
}

// x m rounded once (RNE), for m > 0 finite, with its sign bit set iff x < 0: -0.0 gives +0.0, and
// a negative x whose product underflows gives -0.0. The fused x m + (+0) rounds the exact product
// once; an exact -0 plus +0 is +0, and an inexact product keeps its sign when it rounds to zero
// (IEEE 754). The portable copy gets the same bits from (x + 0) m: a product's sign is always the
// xor of its operands' signs.
inline at::vec::Vectorized<float> signedProduct(const at::vec::Vectorized<float>& x, const at::vec::Vectorized<float>& m) {
#if defined(CPU_CAPABILITY_AVX512)
  return _mm512_fmadd_ps(x, m, _mm512_setzero_ps());
#elif defined(CPU_CAPABILITY_AVX2)
  return _mm256_fmadd_ps(x, m, _mm256_setzero_ps());
#else
  return (x + at::vec::Vectorized<float>(0.0f)) * m;
#endif
}

// Lane i: the high 16 bits of lane i of `high`, the low 16 bits of lane i of `low`.
inline at::vec::Vectorized<int32_t> joinHalves(const at::vec::Vectorized<int32_t>& low,
                                               const at::vec::Vectorized<int32_t>& high) {
#if defined(CPU_CAPABILITY_AVX512)
  return _mm512_mask_blend_epi16(0xAAAAAAAAu, low, high);  // odd 16-bit words from `high`
#elif defined(CPU_CAPABILITY_AVX2)
  return _mm256_blend_epi16(low, high, 0xAA);  // odd 16-bit words (per 128 bits) from `high`
#else
  const at::vec::Vectorized<int32_t> mask(static_cast<int32_t>(0xFFFF0000u));
  return low ^ ((low ^ high) & mask);
#endif
}

// Lanes 2i and 2i + 1 exchanged.
inline at::vec::Vectorized<int32_t> swapPairs(const at::vec::Vectorized<int32_t>& v) {
#if defined(CPU_CAPABILITY_AVX512)
  return _mm512_shuffle_epi32(v, _MM_PERM_CDAB);
#elif defined(CPU_CAPABILITY_AVX2)
  return _mm256_shuffle_epi32(v, 0xB1);  // lanes 1 0 3 2 of each 128 bits
#else
  constexpr int n = at::vec::Vectorized<int32_t>::size();
  int32_t a[n], b[n];
  v.store(a);
  for (int i = 0; i < n; ++i) b[i] = a[i ^ 1];
  return at::vec::Vectorized<int32_t>::loadu(b);
#endif
}

// The largest lane (signed).
inline int32_t maxOfLanes(const at::vec::Vectorized<int32_t>& v) {
#if defined(CPU_CAPABILITY_AVX512)
  return _mm512_reduce_max_epi32(v);
#elif defined(CPU_CAPABILITY_AVX2)
  __m256i m = _mm256_max_epi32(v, _mm256_permute2x128_si256(v, v, 1));
  m = _mm256_max_epi32(m, _mm256_shuffle_epi32(m, 0x4E));  // 64-bit halves of each 128 bits swapped
  m = _mm256_max_epi32(m, _mm256_shuffle_epi32(m, 0xB1));
  return _mm256_cvtsi256_si32(m);
#else
  constexpr int n = at::vec::Vectorized<int32_t>::size();
  int32_t a[n];
  v.store(a);
  int32_t m = a[0];
  for (int i = 1; i < n; ++i) m = a[i] > m ? a[i] : m;
  return m;
#endif
}

}  // namespace CPU_CAPABILITY
}  // namespace hif4
}  // namespace amct
