// The few SIMD operations the native HiF8 kernels need that at::vec::Vectorized lacks, one
// definition per capability (this header is included by hifloat8_cast_cpu.cpp, which is compiled
// once per capability with CPU_CAPABILITY_AVX512 / CPU_CAPABILITY_AVX2 / neither):
//
// * Table64: a 64-entry int16 table held in registers and indexed per lane. at::vec has no
//   per-lane permute; AVX-512BW has one instruction for it (vpermi2w), AVX2 builds it from byte
//   shuffles (vpshufb on 16-entry pieces), ~20 instructions per lookup. On AVX2 the 16-bit
//   encode therefore looks its codes up in a 64 KiB table of all patterns instead, which was
//   faster on the AMD EPYC of docs/performance.md (hifloat8_cast_cpu.cpp, CodeTable).
// * Narrowing and widening between 16- and 32-bit lanes, byte loads/stores, fp16 -> fp32
//   widening, and shifts by constants (at::vec shifts by a vector, emulated on AVX2 for 16 bits).
//
// The portable copies are plain loops over the lanes; every copy gives the same bits.
#pragma once

#include <ATen/cpu/vec/vec.h>
#include <c10/util/Half.h>

#include <cstdint>
#include <cstring>

#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>
#endif

namespace amct {
namespace hif8 {
namespace native {
namespace CPU_CAPABILITY {

using V16 = at::vec::Vectorized<int16_t>;
using V32 = at::vec::Vectorized<int32_t>;
constexpr int64_t kLanes = V16::size();  // elements per step: one vector of 16-bit lanes, or two of 32-bit lanes
static_assert(V32::size() * 2 == kLanes, "two 32-bit vectors per 16-bit vector");

#if defined(CPU_CAPABILITY_AVX512)

class Table64 {
 public:
  explicit Table64(const int16_t* table)
      : low_(_mm512_loadu_si512(table)), high_(_mm512_loadu_si512(table + 32)) {}
  V16 operator()(const V16& index) const { return _mm512_permutex2var_epi16(low_, index, high_); }  // index 0..63

 private:
  __m512i low_, high_;
};

template <int k> inline V16 shiftRight(const V16& v) { return _mm512_srli_epi16(v, k); }
template <int k> inline V16 shiftLeft(const V16& v) { return _mm512_slli_epi16(v, k); }
template <int k> inline V32 shiftRight(const V32& v) { return _mm512_srli_epi32(v, k); }
template <int k> inline V32 shiftLeft(const V32& v) { return _mm512_slli_epi32(v, k); }

// The low 16 bits of every lane of `low` then `high`.
inline V16 narrow(const V32& low, const V32& high) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(low)), _mm512_cvtepi32_epi16(high), 1);
}

// Zero-extends the lanes of `v` into `low` (first half) and `high`.
inline void widen(const V16& v, V32& low, V32& high) {
  low = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(v));
  high = _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1));
}

inline V16 loadBytes(const uint8_t* p) { return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }

inline void storeBytes(uint8_t* p, const V16& v) {  // the low byte of every lane
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi16_epi8(v));
}

// The fp32 bit patterns of kLanes fp16 values (exact).
inline void halfToFloatBits(const uint16_t* p, V32& low, V32& high) {
  low = _mm512_castps_si512(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
  high = _mm512_castps_si512(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16))));
}

#elif defined(CPU_CAPABILITY_AVX2)

class Table64 {
 public:
  // Byte k of entry 16 * piece + j is byte j of low_[piece] (k = 0) or high_[piece] (k = 1),
  // in both 128-bit lanes, as vpshufb looks up within a lane.
  explicit Table64(const int16_t* table) {
    for (int piece = 0; piece < 4; ++piece) {
      alignas(16) uint8_t lowBytes[16], highBytes[16];
      for (int j = 0; j < 16; ++j) {
        uint16_t entry = static_cast<uint16_t>(table[16 * piece + j]);
        lowBytes[j] = static_cast<uint8_t>(entry & 0xFF);
        highBytes[j] = static_cast<uint8_t>(entry >> 8);
      }
      low_[piece] = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(lowBytes)));
      high_[piece] = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(highBytes)));
    }
  }

  V16 operator()(const V16& index) const {  // index 0..63
    __m256i i = index;
    __m256i bytes = _mm256_or_si256(i, _mm256_slli_epi16(i, 8));  // the index in both bytes of a lane
    __m256i bit4 = _mm256_slli_epi16(bytes, 3);                    // index bit 4 at bit 7 of each byte
    __m256i bit5 = _mm256_slli_epi16(bytes, 2);                    // index bit 5 at bit 7
    auto pick = [&](const __m256i* pieces) {
      __m256i a = _mm256_blendv_epi8(_mm256_shuffle_epi8(pieces[0], bytes), _mm256_shuffle_epi8(pieces[1], bytes), bit4);
      __m256i b = _mm256_blendv_epi8(_mm256_shuffle_epi8(pieces[2], bytes), _mm256_shuffle_epi8(pieces[3], bytes), bit4);
      return _mm256_blendv_epi8(a, b, bit5);
    };
    const __m256i lowByte = _mm256_set1_epi16(0x00FF);
    return _mm256_or_si256(_mm256_and_si256(pick(low_), lowByte), _mm256_andnot_si256(lowByte, pick(high_)));
  }

 private:
  __m256i low_[4], high_[4];
};

template <int k> inline V16 shiftRight(const V16& v) { return _mm256_srli_epi16(v, k); }
template <int k> inline V16 shiftLeft(const V16& v) { return _mm256_slli_epi16(v, k); }
template <int k> inline V32 shiftRight(const V32& v) { return _mm256_srli_epi32(v, k); }
template <int k> inline V32 shiftLeft(const V32& v) { return _mm256_slli_epi32(v, k); }

inline V16 narrow(const V32& low, const V32& high) {
  const __m256i mask = _mm256_set1_epi32(0xFFFF);  // packus saturates: keep the values in range
  __m256i packed = _mm256_packus_epi32(_mm256_and_si256(low, mask), _mm256_and_si256(high, mask));
  return _mm256_permute4x64_epi64(packed, 0xD8);  // packus interleaves the 128-bit lanes
}

inline void widen(const V16& v, V32& low, V32& high) {
  __m256i x = v;
  low = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(x));
  high = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(x, 1));
}

inline V16 loadBytes(const uint8_t* p) { return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

inline void storeBytes(uint8_t* p, const V16& v) {
  __m256i x = _mm256_and_si256(v, _mm256_set1_epi16(0x00FF));
  __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi16(x, x), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}

inline void halfToFloatBits(const uint16_t* p, V32& low, V32& high) {
  low = _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  high = _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8))));
}

#else  // portable

class Table64 {
 public:
  explicit Table64(const int16_t* table) : table_(table) {}
  V16 operator()(const V16& index) const {
    int16_t lanes[kLanes];
    index.store(lanes);
    for (int64_t i = 0; i < kLanes; ++i) lanes[i] = table_[lanes[i] & 63];
    return V16::loadu(lanes);
  }

 private:
  const int16_t* table_;
};

template <class V, int k, bool right>
inline V shiftLanes(const V& v) {
  using T = typename V::value_type;
  using U = std::make_unsigned_t<T>;
  T lanes[V::size()];
  v.store(lanes);
  for (int64_t i = 0; i < V::size(); ++i) {
    U u = static_cast<U>(lanes[i]);
    lanes[i] = static_cast<T>(right ? U(u >> k) : U(u << k));
  }
  return V::loadu(lanes);
}

template <int k> inline V16 shiftRight(const V16& v) { return shiftLanes<V16, k, true>(v); }
template <int k> inline V16 shiftLeft(const V16& v) { return shiftLanes<V16, k, false>(v); }
template <int k> inline V32 shiftRight(const V32& v) { return shiftLanes<V32, k, true>(v); }
template <int k> inline V32 shiftLeft(const V32& v) { return shiftLanes<V32, k, false>(v); }

inline V16 narrow(const V32& low, const V32& high) {
  int32_t wide[kLanes];
  int16_t lanes[kLanes];
  low.store(wide);
  high.store(wide + kLanes / 2);
  for (int64_t i = 0; i < kLanes; ++i) lanes[i] = static_cast<int16_t>(static_cast<uint32_t>(wide[i]) & 0xFFFFu);
  return V16::loadu(lanes);
}

inline void widen(const V16& v, V32& low, V32& high) {
  int16_t lanes[kLanes];
  int32_t wide[kLanes];
  v.store(lanes);
  for (int64_t i = 0; i < kLanes; ++i) wide[i] = static_cast<uint16_t>(lanes[i]);
  low = V32::loadu(wide);
  high = V32::loadu(wide + kLanes / 2);
}

inline V16 loadBytes(const uint8_t* p) {
  int16_t lanes[kLanes];
  for (int64_t i = 0; i < kLanes; ++i) lanes[i] = p[i];
  return V16::loadu(lanes);
}

inline void storeBytes(uint8_t* p, const V16& v) {
  int16_t lanes[kLanes];
  v.store(lanes);
  for (int64_t i = 0; i < kLanes; ++i) p[i] = static_cast<uint8_t>(lanes[i] & 0xFF);
}

inline void halfToFloatBits(const uint16_t* p, V32& low, V32& high) {
  int32_t wide[kLanes];
  for (int64_t i = 0; i < kLanes; ++i) {
    float f = static_cast<float>(c10::Half(p[i], c10::Half::from_bits()));
    std::memcpy(&wide[i], &f, sizeof(f));
  }
  low = V32::loadu(wide);
  high = V32::loadu(wide + kLanes / 2);
}

#endif

}  // namespace CPU_CAPABILITY
}  // namespace native
}  // namespace hif8
}  // namespace amct
