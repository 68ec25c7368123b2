// The SIMD operations the native HiF4 kernels need that at::vec::Vectorized lacks, one
// definition per capability (included by hifloat4_cast_cpu.cpp, which is compiled once per
// capability with CPU_CAPABILITY_AVX512 / CPU_CAPABILITY_AVX2 / neither):
//
// * lookup: a per-lane permute of one vector by an index vector (vpermps). It spreads the 16
//   per-subgroup factors of a block over the block's elements, one instruction per vector;
//   at::vec has only fixed interleaves and a gather through memory, which was slower.
// * (storeLowBytes, pack's nibble bytes, is shared with MXFP4: common/op_host/amct_cpu_simd.h.)
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

}  // namespace CPU_CAPABILITY
}  // namespace hif4
}  // namespace amct
