#include "stem_indexer_cpu_kernels.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#define AMCT_STEM_AVX2 1
#endif

namespace amct {
namespace stem {

namespace {

constexpr int64_t kPanel = kScoreDim * kKeyLanes;  // floats of one packed block of 8 keys

int64_t keyBlocks(int64_t width) { return (width + kKeyLanes - 1) / kKeyLanes; }

float widen(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;  // bf16 is the high half of fp32
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

void packKeysPortable(const Bf16Rows& keys, float* packed) {
  const int64_t width = keys.rows();
  for (int64_t block = 0; block < keyBlocks(width); ++block) {
    float* panel = packed + block * kPanel;
    for (int64_t lane = 0; lane < kKeyLanes; ++lane) {
      const int64_t c = block * kKeyLanes + lane;
      const uint16_t* key = c < width ? keys.row(c) : nullptr;
      for (int64_t d = 0; d < kScoreDim; ++d) panel[d * kKeyLanes + lane] = key ? widen(key[d]) : 0.0f;
    }
  }
}

void scoresPortable(const Bf16Rows& q, const float* packed, int64_t width, float* out, int64_t ldo) {
  std::vector<float> row(kScoreDim);
  for (int64_t r = 0; r < q.rows(); ++r) {
    const uint16_t* src = q.row(r);
    for (int64_t d = 0; d < kScoreDim; ++d) row[d] = widen(src[d]);
    for (int64_t c = 0; c < width; ++c) {
      const float* column = packed + (c / kKeyLanes) * kPanel + c % kKeyLanes;
      float sum = 0.0f;
      for (int64_t d = 0; d < kScoreDim; ++d) sum = std::fma(row[d], column[d * kKeyLanes], sum);
      out[r * ldo + c] = sum;
    }
  }
}

#ifdef AMCT_STEM_AVX2

// The AVX2 kernel, blocked like a GEMM so that its operands stay in cache: the sum over d runs in
// chunks of kChunk; per chunk the query rows are widened once into a small buffer, and each group
// of up to 3 key blocks (24 keys, 24 KB of packed keys: L1) is applied to all query rows, a few
// rows at a time, with 8-12 accumulators of 8 lanes. Each lane is one (row, key) sum, carried
// across chunks through `out`, so every sum still runs over d in order.
constexpr int64_t kChunk = 256;
constexpr int kGroup = 3;

bool cpuHasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

__attribute__((target("avx2"))) __m256i laneMask(int64_t valid) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(std::min<int64_t>(valid, kKeyLanes))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Rows c0..c0+7 of `keys` (zero past width), d0..d0+7, transposed into packed[d][lane].
__attribute__((target("avx2"))) void packOctet(const Bf16Rows& keys, int64_t c0, int64_t d0, float* dst) {
  __m256 r[8];
  for (int lane = 0; lane < 8; ++lane) {
    const int64_t c = c0 + lane;
    if (c < keys.rows()) {
      const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(keys.row(c) + d0));
      r[lane] = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
    } else {
      r[lane] = _mm256_setzero_ps();
    }
  }
  // The 8x8 transpose: unpack pairs, then quads, then swap the 128-bit halves.
  __m256 t[8], s[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    s[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * 8, _mm256_permute2f128_ps(s[i], s[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * 8, _mm256_permute2f128_ps(s[i], s[i + 4], 0x31));
  }
}

__attribute__((target("avx2"))) void packKeysAvx2(const Bf16Rows& keys, float* packed) {
  for (int64_t block = 0; block < keyBlocks(keys.rows()); ++block) {
    for (int64_t d0 = 0; d0 < kScoreDim; d0 += 8) {
      packOctet(keys, block * kKeyLanes, d0, packed + block * kPanel + d0 * kKeyLanes);
    }
  }
}

// rows x [d0, d0 + kChunk) of q as fp32, row-major with row length kChunk.
__attribute__((target("avx2"))) void widenChunk(const Bf16Rows& q, int64_t d0, float* dst) {
  for (int64_t r = 0; r < q.rows(); ++r) {
    const uint16_t* src = q.row(r) + d0;
    if (d0 + kChunk < kScoreDim) {
      // The next chunk of this row (8 cache lines), to arrive while this chunk is computed.
      for (int64_t line = 0; line < kChunk; line += 32) {
        _mm_prefetch(reinterpret_cast<const char*>(src + kChunk + line), _MM_HINT_T1);
      }
    }
    for (int64_t d = 0; d < kChunk; d += 8) {
      const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + d));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + r * kChunk + d),
                          _mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
    }
  }
}

// R query rows (from `rows`, a chunk buffer) times NB key blocks from `panel` (the chunk's
// offset into the first block), accumulating into out (ldo) at key column c0; `first` starts the
// sums at zero. Columns at or past `width` are neither read nor written.
template <int R, int NB>
__attribute__((target("avx2,fma"))) void microKernel(const float* rows, const float* panel, float* out, int64_t ldo,
                                                     int64_t c0, int64_t width, bool first) {
  __m256 acc[R][NB];
  __m256i mask[NB];
#pragma GCC unroll 8
  for (int b = 0; b < NB; ++b) mask[b] = laneMask(width - c0 - b * kKeyLanes);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) {
      acc[r][b] = first ? _mm256_setzero_ps() : _mm256_maskload_ps(out + r * ldo + c0 + b * kKeyLanes, mask[b]);
    }
  }
  for (int64_t d = 0; d < kChunk; ++d) {
    __m256 key[NB];
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) key[b] = _mm256_loadu_ps(panel + b * kPanel + d * kKeyLanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 qv = _mm256_broadcast_ss(rows + r * kChunk + d);
#pragma GCC unroll 8
      for (int b = 0; b < NB; ++b) acc[r][b] = _mm256_fmadd_ps(qv, key[b], acc[r][b]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) _mm256_maskstore_ps(out + r * ldo + c0 + b * kKeyLanes, mask[b], acc[r][b]);
  }
}

// Rows per micro-kernel call for a group of NB key blocks: 12 accumulators where possible (4 x 3,
// 6 x 2), enough independent FMAs to hide their latency, and with the key and query registers
// within the 16 of AVX2.
constexpr int rowsPerCall(int NB) { return NB == 3 ? 4 : NB == 2 ? 6 : 8; }

// The micro-kernel for the last r (< R) rows of a group.
template <int NB, int R>
void remainderRows(int r, const float* rows, const float* panel, float* out, int64_t ldo, int64_t c0, int64_t width,
                   bool first) {
  if constexpr (R > 1) {
    if (r == R - 1) return microKernel<R - 1, NB>(rows, panel, out, ldo, c0, width, first);
    remainderRows<NB, R - 1>(r, rows, panel, out, ldo, c0, width, first);
  }
}

// One chunk of one group of NB key blocks (from `panel`, key column c0) for every query row.
template <int NB>
void groupChunk(int64_t rows, const float* chunk, const float* panel, float* out, int64_t ldo, int64_t c0,
                int64_t width, bool first) {
  constexpr int R = rowsPerCall(NB);
  int64_t r0 = 0;
  for (; r0 + R <= rows; r0 += R) microKernel<R, NB>(chunk + r0 * kChunk, panel, out + r0 * ldo, ldo, c0, width, first);
  if (r0 < rows) {
    remainderRows<NB, R>(static_cast<int>(rows - r0), chunk + r0 * kChunk, panel, out + r0 * ldo, ldo, c0, width,
                         first);
  }
}

// Key blocks per group: 3s, with a remainder of 1 spread as 2 + 2 (a lone block would leave the
// kernel load-bound).
std::vector<int> keyGroups(int64_t blocks) {
  std::vector<int> groups(static_cast<size_t>(blocks / kGroup), kGroup);
  const int64_t rest = blocks % kGroup;
  if (rest == 1 && !groups.empty()) {
    groups.back() = 2;
    groups.push_back(2);
  } else if (rest) {
    groups.push_back(static_cast<int>(rest));
  }
  return groups;
}

// This thread's buffer of at least n floats for the widened query chunk, 64-byte aligned (the
// widening stores whole 32-byte vectors), kept across calls.
float* chunkBuffer(size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n + 16) buffer.resize(n + 16);
  return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(buffer.data()) + 63) & ~uintptr_t(63));
}

void scoresAvx2(const Bf16Rows& q, const float* packed, int64_t width, float* out, int64_t ldo) {
  const int64_t rows = q.rows();
  float* chunk = chunkBuffer(static_cast<size_t>(rows * kChunk));
  const std::vector<int> groups = keyGroups(keyBlocks(width));
  for (int64_t d0 = 0; d0 < kScoreDim; d0 += kChunk) {
    widenChunk(q, d0, chunk);
    int64_t block = 0;
    for (int group : groups) {
      const float* panel = packed + block * kPanel + d0 * kKeyLanes;
      const int64_t c0 = block * kKeyLanes;
      if (group == 3) groupChunk<3>(rows, chunk, panel, out, ldo, c0, width, d0 == 0);
      if (group == 2) groupChunk<2>(rows, chunk, panel, out, ldo, c0, width, d0 == 0);
      if (group == 1) groupChunk<1>(rows, chunk, panel, out, ldo, c0, width, d0 == 0);
      block += group;
    }
  }
}

// Candidate c is among the k largest iff fewer than k words exceed its own. The words, with the top
// bit flipped, compare as signed 64-bit integers; padding is the smallest, which exceeds nothing.
__attribute__((target("avx2"))) int32_t* countingSelectAvx2(const uint64_t* words, int64_t n, int64_t k,
                                                            int32_t first, int32_t* out) {
  constexpr int64_t kVectors = kCountedCandidates / 4;
  alignas(32) int64_t flipped[kCountedCandidates];
  const int64_t vectors = (n + 3) / 4;
  for (int64_t j = 0; j < vectors * 4; ++j) {
    flipped[j] = j < n ? static_cast<int64_t>(words[j] ^ 0x8000000000000000ull) : INT64_MIN;
  }
  __m256i row[kVectors];
  for (int64_t v = 0; v < vectors; ++v) row[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(flipped + 4 * v));
  for (int64_t c = 0; c < n; ++c) {
    const __m256i mine = _mm256_set1_epi64x(flipped[c]);
    __m256i above = _mm256_setzero_si256();
    for (int64_t v = 0; v < vectors; ++v) above = _mm256_sub_epi64(above, _mm256_cmpgt_epi64(row[v], mine));
    const __m128i pair = _mm_add_epi64(_mm256_castsi256_si128(above), _mm256_extracti128_si256(above, 1));
    const int64_t count = _mm_cvtsi128_si64(pair) + _mm_extract_epi64(pair, 1);
    *out = first + static_cast<int32_t>(c);
    out += count < k;  // branch-free: the slot is overwritten unless c is chosen
  }
  return out;
}

#endif  // AMCT_STEM_AVX2

}  // namespace

int32_t* writeLargestByCounting(const uint64_t* words, int64_t n, int64_t k, int32_t first, int32_t* out) {
#ifdef AMCT_STEM_AVX2
  if (n <= kCountedCandidates && cpuHasAvx2Fma()) return countingSelectAvx2(words, n, k, first, out);
#endif
  (void)words, (void)n, (void)k, (void)first, (void)out;
  return nullptr;
}

int64_t packedKeyFloats(int64_t width) { return keyBlocks(width) * kPanel; }

void packKeys(const Bf16Rows& keys, float* packed) {
#ifdef AMCT_STEM_AVX2
  if (cpuHasAvx2Fma()) return packKeysAvx2(keys, packed);
#endif
  packKeysPortable(keys, packed);
}

void sequentialScores(const Bf16Rows& q, const float* packed, int64_t width, float* out, int64_t ldo,
                      bool portable) {
  if (q.rows() == 0 || width == 0) return;
#ifdef AMCT_STEM_AVX2
  if (!portable && cpuHasAvx2Fma()) return scoresAvx2(q, packed, width, out, ldo);
#endif
  scoresPortable(q, packed, width, out, ldo);
}

}  // namespace stem
}  // namespace amct
