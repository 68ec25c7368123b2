// SIMD operations that at::vec::Vectorized lacks and more than one operator's native CPU kernel
// needs, one definition per capability: the including file is compiled once per capability with
// CPU_CAPABILITY_AVX512 / CPU_CAPABILITY_AVX2 / neither, and CPU_CAPABILITY names the namespace.
//
// * storeLowBytes: the low byte of every 32-bit lane, stored (vpmovdb; AVX2 byte shuffles).
//   at::vec has no narrowing store between integer widths (its convert<int8_t> of int32 is a
//   scalar loop through memory on AVX2). Used by HiF4 pack's nibble bytes and MXFP4's code bytes.
//
// The portable copy is a plain loop over the lanes; every copy gives the same bits.
#pragma once

#include <ATen/cpu/vec/vec.h>

#include <cstdint>

#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>
#endif

namespace amct {
namespace simd {
namespace CPU_CAPABILITY {

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
}  // namespace simd
}  // namespace amct
