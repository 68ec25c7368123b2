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
// * swapPairs: lanes 2i and 2i + 1 exchanged (an in-lane shuffle): a block's group maxima in its
//   own rows (the per-block stage B).
// * rowMaxima: the largest lane of each of W rows of W lanes, as one vector (a transposing max
//   tree: 21 AVX2 / 45 AVX-512 instructions instead of a reduction per row and a store-forwarding
//   stall); the block maxima of a batch.
// * quadMaxima16, evenLanes: the largest of each four 16-bit words (two shifts and two 16-bit
//   maxima: bfloat16 subgroups without widening), and the even 32-bit lanes of two vectors (one
//   in-lane shuffle and one 64-bit permute on AVX2): bfloat16's stage A.
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
inline at::vec::Vectorized<float> signedMin(const at::vec::Vectorized<float>& v,
                                            const at::vec::Vectorized<float>& limit) {
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

// Lane r: the largest (signed) of the n lanes of row r, rows[r * n ... r * n + n), n = W.
inline at::vec::Vectorized<int32_t> rowMaxima(const int32_t* rows) {
  constexpr int n = at::vec::Vectorized<int32_t>::size();
#if defined(CPU_CAPABILITY_AVX2)
  // Each step halves the partial maxima per row and interleaves the rows: per 128 bits, pairOf(i)
  // holds two of row 2i and two of row 2i + 1, quadOf(j) one of each of rows 4j ... 4j + 3. (No
  // arrays of __m256i: GCC 12 copies those through the stack.)
  const auto row = [rows](int i) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + 8 * i)); };
  const auto pairOf = [&row](int i) {
    const __m256i a = row(2 * i), b = row(2 * i + 1);
    return _mm256_max_epi32(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
  };
  const auto quadOf = [&pairOf](int j) {
    const __m256i a = pairOf(2 * j), b = pairOf(2 * j + 1);
    return _mm256_max_epi32(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b));
  };
  const __m256i low = quadOf(0), high = quadOf(1);
  return _mm256_max_epi32(_mm256_permute2x128_si256(low, high, 0x20), _mm256_permute2x128_si256(low, high, 0x31));
#elif defined(CPU_CAPABILITY_AVX512)
  // The same tree over 16 rows: per 128 bits, pairOf(i) two of rows 2i, 2i + 1, quadOf(j) one of
  // rows 4j ... 4j + 3; then two 128-bit shuffles leave row r's maximum in lane r.
  const auto row = [rows](int i) { return _mm512_loadu_si512(rows + 16 * i); };
  const auto pairOf = [&row](int i) {
    const __m512i a = row(2 * i), b = row(2 * i + 1);
    return _mm512_max_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
  };
  const auto quadOf = [&pairOf](int j) {
    const __m512i a = pairOf(2 * j), b = pairOf(2 * j + 1);
    return _mm512_max_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
  };
  // 128-bit chunks (a0 a2 b0 b2) and (a1 a3 b1 b3): imm 0x88 and 0xDD.
  const auto foldChunks = [](const __m512i& a, const __m512i& b) {
    return _mm512_max_epi32(_mm512_shuffle_i32x4(a, b, 0x88), _mm512_shuffle_i32x4(a, b, 0xDD));
  };
  return foldChunks(foldChunks(quadOf(0), quadOf(1)), foldChunks(quadOf(2), quadOf(3)));
#else
  alignas(64) int32_t m[n];
  for (int r = 0; r < n; ++r) {
    m[r] = rows[n * r];
    for (int i = 1; i < n; ++i) m[r] = rows[n * r + i] > m[r] ? rows[n * r + i] : m[r];
  }
  return at::vec::Vectorized<int32_t>::loadu(m);
#endif
}

// Word 0 of each 64 bits of the result: the largest of the four signed 16-bit words of those 64
// bits of v (the other words are unspecified).
inline at::vec::Vectorized<int32_t> quadMaxima16(const at::vec::Vectorized<int32_t>& v) {
#if defined(CPU_CAPABILITY_AVX512)
  const __m512i m = _mm512_max_epi16(v, _mm512_srli_epi32(v, 16));
  return _mm512_max_epi16(m, _mm512_srli_epi64(m, 32));
#elif defined(CPU_CAPABILITY_AVX2)
  const __m256i m = _mm256_max_epi16(v, _mm256_srli_epi32(v, 16));
  return _mm256_max_epi16(m, _mm256_srli_epi64(m, 32));
#else
  constexpr int n = at::vec::Vectorized<int32_t>::size();
  int16_t w[2 * n];
  v.store(w);
  for (int q = 0; q < n / 2; ++q) {
    for (int i = 1; i < 4; ++i) w[4 * q] = w[4 * q + i] > w[4 * q] ? w[4 * q + i] : w[4 * q];
  }
  return at::vec::Vectorized<int32_t>::loadu(w);
#endif
}

// Lanes a0 a2 ... a(n-2) b0 b2 ... b(n-2).
inline at::vec::Vectorized<int32_t> evenLanes(const at::vec::Vectorized<int32_t>& a,
                                              const at::vec::Vectorized<int32_t>& b) {
#if defined(CPU_CAPABILITY_AVX512)
  return _mm512_permutex2var_epi32(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
#elif defined(CPU_CAPABILITY_AVX2)
  // a0 a2 b0 b2 | a4 a6 b4 b6, then the 64-bit lanes in the order 0 2 1 3.
  const __m256 evens = _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), 0x88);
  return _mm256_permute4x64_epi64(_mm256_castps_si256(evens), 0xD8);
#else
  constexpr int n = at::vec::Vectorized<int32_t>::size();
  int32_t x[n], y[n], r[n];
  a.store(x);
  b.store(y);
  for (int i = 0; i < n / 2; ++i) {
    r[i] = x[2 * i];
    r[n / 2 + i] = y[2 * i];
  }
  return at::vec::Vectorized<int32_t>::loadu(r);
#endif
}

}  // namespace CPU_CAPABILITY
}  // namespace hif4
}  // namespace amct
