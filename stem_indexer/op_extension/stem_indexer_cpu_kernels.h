// The CPU kernels of the StemIndexer (docs/stem_indexer.md §4 step 5, §7.1): the score matmul (fp32 dot products
// of bf16 query rows with bf16 key rows, read in place and summed in one fixed order) and the
// selection of short rows.
//
// Every dot product is the plain sequential fp32 sum over d = 0..2047, one fused multiply-add per
// term. A product of two bf16 values is exact in fp32, so this is the ordinary running sum of the
// exact products, the same on every machine, for every tile size and thread count. An AVX2
// kernel computes it where the CPU has AVX2 and FMA; a portable loop gives the same bits
// elsewhere.
#pragma once

#include <cstdint>

namespace amct {
namespace stem {

constexpr int64_t kScoreDim = 2048;  // qflat/kflat row length (stem_stride * 128)
constexpr int64_t kKeyLanes = 8;     // key columns per packed block

// Rows of kScoreDim bf16 bit patterns, each contiguous: row r = a * inner + i (0 <= i < inner)
// starts at base + a * outerStride + i * innerStride (strides in elements).
struct Bf16Rows {
  const uint16_t* base;
  int64_t outer, inner;
  int64_t outerStride, innerStride;

  int64_t rows() const { return outer * inner; }
  const uint16_t* row(int64_t r) const { return base + (r / inner) * outerStride + (r % inner) * innerStride; }
};

// Floats of the packed form of `width` key rows: fp32 [ceil(width / 8)][kScoreDim][8], the key
// rows as columns, zero past `width`. A prefix of the packed blocks is the packed form of the
// first rows, so one packing serves every narrower tile of the same keys.
int64_t packedKeyFloats(int64_t width);

// Packs keys.rows() key rows into `packed` (packedKeyFloats(keys.rows()) floats).
void packKeys(const Bf16Rows& keys, float* packed);

// out[r * ldo + c] = sum over d of q_r[d] * key_c[d] (the order above) for r < q.rows() and
// c < width, from keys packed by packKeys (at least `width` rows). `portable` forces the portable
// loop (tests compare the two).
void sequentialScores(const Bf16Rows& q, const float* packed, int64_t width, float* out, int64_t ldo,
                      bool portable = false);

// The selection of a row of n candidates whose words (key << 32 | ~index, all distinct) are
// `words`: writes first + c, ascending in c, for the k candidates of largest word (0 < k < n), and
// returns the end of what it wrote (out[k], one past it, may be overwritten too). For rows of at most kCountedCandidates on a CPU with AVX2, by
// counting for every candidate the words above it (branch-free, a fraction of nth_element's time
// on such rows); elsewhere it writes nothing and returns nullptr.
constexpr int64_t kCountedCandidates = 64;
int32_t* writeLargestByCounting(const uint64_t* words, int64_t n, int64_t k, int32_t first, int32_t* out);

}  // namespace stem
}  // namespace amct
