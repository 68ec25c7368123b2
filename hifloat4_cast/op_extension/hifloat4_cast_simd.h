// The SIMD operations the native HiF4 kernels need that at::vec::Vectorized lacks, one
// definition per capability (included by hifloat4_cast_cpu.cpp, which is compiled once per
// capability with CPU_CAPABILITY_AVX512 / CPU_CAPABILITY_AVX2 / neither):
//
// * lookup: a per-lane permute of one vector by an index vector (vpermps). It spreads the 16
//   per-subgroup factors of a block over the block's elements, one instruction per vector;
//   at::vec has only fixed interleaves and a gather through memory, which was slower.
// * storeLowBytes: the low byte of every 32-bit lane, stored (vpmovdb; AVX2 byte shuffles):
//   pack's nibble bytes. at::vec has no narrowing store between integer widths.
// * absMin: min(|v|, limit) in one AVX-512 instruction (vrangeps) instead of an and and a min; it
//   is on the per-element path of every code.
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

// min(|v|, limit) for limit >= 0, the same value on every path for every non-NaN v. A NaN v
// (only in a poisoned block, whose outputs are replaced) gives limit or NaN, never an overflow:
// the portable copy's integer steps on the result are plain C++ arithmetic.
inline at::vec::Vectorized<float> absMin(const at::vec::Vectorized<float>& v, const at::vec::Vectorized<float>& limit) {
#if defined(CPU_CAPABILITY_AVX512)
  return _mm512_range_ps(v, limit, 0x0A);  // imm: minimum of the absolute values, sign cleared
#elif defined(CPU_CAPABILITY_AVX2)
  return _mm256_min_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), v), limit);  // NaN: the second operand
#else
  constexpr int n = at::vec::Vectorized<float>::size();
  float a[n], b[n];
  v.store(a);
  limit.store(b);
  for (int i = 0; i < n; ++i) a[i] = std::fabs(a[i]) < b[i] ? std::fabs(a[i]) : b[i];
  return at::vec::Vectorized<float>::loadu(a);
#endif
}

// Stores the low byte of every lane of v to p[0 .. size).
inline void storeLowBytes(const at::vec::Vectorized<int32_t>& v, uint8_t* p) {
#if defined(CPU_CAPABILITY_AVX512)
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v));
#elif defined(CPU_CAPABILITY_AVX2)
  const __m256i bytes = _mm256_shuffle_epi8(
      v, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1,
                          -1, -1, -1, -1, -1, -1, -1));
  const __m128i lo = _mm256_castsi256_si128(bytes), hi = _mm256_extracti128_si256(bytes, 1);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_unpacklo_epi32(lo, hi));
#else
  constexpr int n = at::vec::Vectorized<int32_t>::size();
  int32_t lanes[n];
  v.store(lanes);
  for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(lanes[i]);
#endif
}

}  // namespace CPU_CAPABILITY
}  // namespace hif4
}  // namespace amct
