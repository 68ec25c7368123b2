// The native CPU MXFP4 quantizer and dequantizer, compiled once per SIMD capability
// (amct_cpu_dispatch.h) with ATen's at::vec::Vectorized. Same bits as the AscendC kernel
// (svd_quant_kernel.cpp) and reference.py in every copy: only exact float operations, compares
// and integer bit manipulation, no fused multiply-add.
//
// Quantizer, one pass over memory, per 32-element block in registers:
//   - the 32 elements as 16 pairs (element 2j, element 2j + 1) in 32-bit lanes: bf16/fp16 pairs
//     are one 32-bit word of the input, fp32 pairs come from deinterleave2. Per pair: |x| of
//     both as fp32 (exact; fp16 by placing its bits in an fp32 and scaling by 2^112, which keeps
//     subnormals exact) and the two sign bits at bits 3 and 7, where the packed byte has them;
//   - E = the largest fp32 exponent field of the block (for fp16 inputs the field of the exact
//     fp32 value: NaN/Inf become 2^16..2^17, field 143, which no finite fp16 reaches);
//     Ec = clamp(E, 2, 254); scale byte Ec - 2, or 0xFF for a non-finite block, whose code bytes
//     are then masked to 0 (one scalar step per block; docs/mxfp4.md);
//   - a = |x| * 2^(129 - Ec), exact down to 2^-126 (smaller products only ever need their sign);
//   - the magnitude index = the number of decision thresholds a has passed, counted
//     on the bits: non-negative floats order as their bit patterns, so "a >= t" is the sign of
//     bits(a) - bits(t) (integer subtract and shift, no compare or branch), and "a > t" is
//     "a >= t+" with t+ = the next float (bits + 1). "floor" on a negative element rounds the
//     magnitude up: 1 + #{grid values g >= 0.5 with a > g}, capped at 7; this needs no a > 0, so
//     a product that underflowed to 0 still gives 0.5 (x != 0 there);
//   - byte = index(even) | index(odd) << 4 | sign bits, narrowed to 8 bits and stored.
// Dequantizer: code -> fp32 bits (magnitude bits << 22 is e2m1 * 2^-126, subnormal for codes 0,
// 1) times 2^126 times the block scale, exact (or Inf/NaN), then rounded to nearest even to the
// output dtype by at::vec's conversions.
#include "svd_quant_cpu.h"

#include <ATen/Parallel.h>
#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "amct_cpu_simd.h"
#include "amct_parallel.h"

namespace amct {
namespace mxfp4 {
namespace CPU_CAPABILITY {

extern const Mxfp4Kernels mxfp4Kernels;

namespace {

using at::vec::Vectorized;
using VecF = Vectorized<float>;
using VecI = Vectorized<int32_t>;

constexpr int kLanes = VecF::size();
constexpr int kBlock = amct_mxfp4::kMxBlock;
constexpr int kPairs = kBlock / 2;         // pairs of elements (= code bytes) per block
constexpr int kChunks = kPairs / kLanes;   // vectors of pairs per block
static_assert(kChunks >= 1 && kPairs % kLanes == 0, "a block must be a whole number of vectors");
constexpr int64_t kGrainBlocks = 4096;     // 128K elements per task at least
constexpr int64_t kMaxChunkBlocks = 32768; // 1M elements per chunk at most
constexpr int64_t kChunkAlignBlocks = 128; // chunks of whole 4 KiB pages of codes (16 B per block)

constexpr int32_t kExponentMask = 0x7F800000;
constexpr int32_t kMagnitudeMask = 0x7FFFFFFF;

inline float bitsToFloat(int32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline int32_t floatToBits(float f) {
  int32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline VecI bitsOf(const VecF& v) { return at::vec::cast<int32_t>(v); }
inline VecF floatOf(const VecI& v) { return at::vec::cast<float>(v); }

// kLanes pairs of one block: |x| of the even and odd elements and their sign bits at bits 3, 7.
struct Pairs {
  VecF even;
  VecF odd;
  VecI signs;
};

// The sign bits of a 32-bit word holding two 16-bit values, moved to bits 3 and 7.
inline VecI signsOfHalves(const VecI& w) { return ((w >> VecI(12)) & VecI(0x08)) | ((w >> VecI(24)) & VecI(0x80)); }

template <typename T>
struct Loader;

template <>
struct Loader<c10::BFloat16> {
  static constexpr int32_t kNonFinite = kExponentMask;  // the fp32 field 255
  static Pairs load(const c10::BFloat16* p) {
    const VecI w = VecI::loadu(p);
    return {floatOf((w << VecI(16)) & VecI(kMagnitudeMask)), floatOf(w & VecI(0x7FFF0000)), signsOfHalves(w)};
  }
};

template <>
struct Loader<c10::Half> {
  static constexpr int32_t kNonFinite = 143 << 23;  // fp16 Inf/NaN read as 2^16 * (1 + m)
  static Pairs load(const c10::Half* p) {
    const VecI w = VecI::loadu(p);
    const VecF rebias(0x1p112f);  // 2^(127 - 15): the fp16 bits in an fp32 times this = the value
    const VecI even = (w & VecI(0x7FFF)) << VecI(13);
    const VecI odd = (w >> VecI(3)) & VecI(0x7FFF << 13);
    return {floatOf(even) * rebias, floatOf(odd) * rebias, signsOfHalves(w)};
  }
};

template <>
struct Loader<float> {
  static constexpr int32_t kNonFinite = kExponentMask;
  static Pairs load(const float* p) {
    auto pair = at::vec::deinterleave2(VecF::loadu(p), VecF::loadu(p + kLanes));
    const VecI even = bitsOf(pair.first);
    const VecI odd = bitsOf(pair.second);
    const VecI signs = ((even >> VecI(28)) & VecI(0x08)) | ((odd >> VecI(24)) & VecI(0x80));
    return {floatOf(even & VecI(kMagnitudeMask)), floatOf(odd & VecI(kMagnitudeMask)), signs};
  }
};

// -1 where bits(a) < tBits, else 0 (a >= 0, or bits -1; the difference cannot overflow).
inline VecI below(const VecI& aBits, int32_t tBits) { return (aBits - VecI(tBits)) >> VecI(31); }

// 7 - #{t: a < t} = #{t: a >= t} over seven thresholds; "a > t" is passed as the next float t+.
inline VecI passed(const VecI& aBits, std::initializer_list<float> atLeast, std::initializer_list<float> above) {
  VecI c(7);
  for (float t : atLeast) c = c + below(aBits, floatToBits(t));
  for (float t : above) c = c + below(aBits, floatToBits(t) + 1);
  return c;
}

template <amct_mxfp4::Mxfp4RoundMode Mode>
struct Rounder;

template <>
struct Rounder<amct_mxfp4::kRound> {  // nearest, ties away: a >= each midpoint
  // The seven midpoints cost 21 operations; this is 12 with the same result for 0 <= a < 8 (a
  // finite block's a; non-finite blocks are masked). From 1 up the grid keeps one fraction bit,
  // so adding half its weight (2^21) and clearing the bits below rounds ties away, a carry moving
  // to the next binade; (bits >> 22) - 252 is then the index (1.0 -> 2, 1.5 -> 3, ..., 6.0 -> 7),
  // capped at 7. Below 1 the same expression is at most the true index (it rounds to the
  // binade's grid, finer than 0, 0.5, 1), which the two lowest midpoints count: the larger of
  // the two is the index everywhere (from 1 up both midpoints are passed, 2 <= the first).
  // (bits + 2^21) >> 22 is computed as ((bits >> 1) + 2^20) >> 21, the same value for every int32
  // (the dropped bit cannot carry: 2^21 is even) without the signed overflow the plain sum has
  // for the bits of a masked NaN (>= 0x7FE00000), undefined behaviour in the portable copy.
  static VecI index(const VecI& aBits, const VecI& /*negative*/) {
    const VecI fromOne = (((aBits >> VecI(1)) + VecI(1 << 20)) >> VecI(21)) - VecI(252);
    const VecI belowOne = VecI(2) + below(aBits, floatToBits(0.25f)) + below(aBits, floatToBits(0.75f));
    return at::vec::minimum(at::vec::maximum(fromOne, belowOne), VecI(7));
  }
};

template <>
struct Rounder<amct_mxfp4::kRint> {  // nearest, ties to the even code: ties with an odd code below
  static VecI index(const VecI& aBits, const VecI& /*negative*/) {
    return passed(aBits, {0.75f, 1.75f, 3.5f}, {0.25f, 1.25f, 2.5f, 5.0f});
  }
};

template <>
struct Rounder<amct_mxfp4::kFloor> {  // toward -inf: down for x >= 0, the magnitude up for x < 0
  static VecI index(const VecI& aBits, const VecI& negative) {
    // x < 0 (negative = -1): a > g is bits(a) - 1 >= bits(g), plus the step to 0.5.
    const VecI c = passed(aBits + negative, {0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f}, {}) - negative;
    return at::vec::minimum(c, VecI(7));
  }
};

// -1 where the element is < 0 (sign set and non-zero: -0 rounds as +0), else 0.
// signAt31 has the sign at bit 31; magnitude bits are >= 0, so m | -m is negative iff m != 0.
inline VecI negativeLanes(const VecF& magnitude, const VecI& signAt31) {
  const VecI m = bitsOf(magnitude);
  return ((m | (VecI(0) - m)) & signAt31) >> VecI(31);
}

// The largest lane. On AVX2/AVX-512 by at::vec's shuffle reduction of floats (the exponent
// fields are non-negative floats, +Inf at most, so integer max = float max); the portable
// Vectorized has no shuffles, where a scalar loop is the fast way.
inline int32_t largestLane(const VecI& v) {
#if defined(CPU_CAPABILITY_AVX2) || defined(CPU_CAPABILITY_AVX512)
  return floatToBits(at::vec::vec_reduce_all<float>(
      [](const VecF& u, const VecF& w) { return floatOf(at::vec::maximum(bitsOf(u), bitsOf(w))); }, floatOf(v)));
#else
  int32_t lanes[kLanes];
  v.store(lanes);
  return *std::max_element(lanes, lanes + kLanes);
#endif
}

// The block's code bytes, one per 32-bit lane of bytes[0], bytes[1], ... (each 0..255), stored by
// the shared narrowing store (amct_cpu_simd.h: at::vec::convert<int8_t> of int32 is a scalar loop
// through memory on AVX2, which was the quantizer's hot spot there).
inline void storeCodeBytes(const VecI (&bytes)[kChunks], uint8_t* codes) {
  for (int c = 0; c < kChunks; ++c) simd::CPU_CAPABILITY::storeLowBytes(bytes[c], codes + c * kLanes);
}

template <typename T, amct_mxfp4::Mxfp4RoundMode Mode>
inline uint8_t quantizeBlock(const T* x, uint8_t* codes) {
  Pairs p[kChunks];
  VecI fields(0);
  for (int c = 0; c < kChunks; ++c) {
    p[c] = Loader<T>::load(x + c * 2 * kLanes);
    fields = at::vec::maximum(fields, at::vec::maximum(bitsOf(p[c].even) & VecI(kExponentMask),
                                                       bitsOf(p[c].odd) & VecI(kExponentMask)));
  }
  const int32_t e = largestLane(fields);
  const bool nonFinite = e == Loader<T>::kNonFinite;
  const int32_t ec = std::min(std::max(e >> 23, 2), 254);
  const VecF multiplier(bitsToFloat((256 - ec) << 23));  // 2^(129 - Ec), a normal float
  const VecI keep(nonFinite ? 0 : 0xFF);
  VecI bytes[kChunks];
  for (int c = 0; c < kChunks; ++c) {
    const VecI ae = bitsOf(p[c].even * multiplier);
    const VecI ao = bitsOf(p[c].odd * multiplier);
    VecI negE(0), negO(0);
    if (Mode == amct_mxfp4::kFloor) {
      negE = negativeLanes(p[c].even, p[c].signs << VecI(28));
      negO = negativeLanes(p[c].odd, p[c].signs << VecI(24));
    }
    bytes[c] = (Rounder<Mode>::index(ae, negE) | (Rounder<Mode>::index(ao, negO) << VecI(4)) | p[c].signs) & keep;
  }
  storeCodeBytes(bytes, codes);
  return nonFinite ? 0xFF : static_cast<uint8_t>(ec - 2);
}

// Calls body(block, row, column) for every flat block of the layout, row-major, and pad(row)
// after the last block of every row; contiguous runs of blocks, taken by the threads as they
// become free (amct_parallel.h: a late thread does not hold up the call by a fixed share).
template <typename Body, typename Pad>
inline void forEachBlock(const BlockRows& layout, Body body, Pad pad) {
  const int64_t blocks = layout.rows * layout.blocksPerRow;
  parallelChunks(blocks, chunkElements(blocks, kGrainBlocks, kMaxChunkBlocks, kChunkAlignBlocks), [&](int64_t begin,
                                                                                                    int64_t end) {
    int64_t row = begin / layout.blocksPerRow;
    int64_t col = begin % layout.blocksPerRow;
    for (int64_t b = begin; b < end; ++b) {
      body(b, row, col);
      if (++col == layout.blocksPerRow) {
        pad(row);
        col = 0;
        ++row;
      }
    }
  });
}

template <typename T, amct_mxfp4::Mxfp4RoundMode Mode>
void quantizeTyped(const QuantizeJob& job) {
  const T* x = static_cast<const T*>(job.input);
  const BlockRows layout = job.layout;
  forEachBlock(
      layout,
      [&](int64_t b, int64_t row, int64_t col) {
        job.scales[row * layout.scaleRowStride + col] = quantizeBlock<T, Mode>(x + b * kBlock, job.codes + b * kPairs);
      },
      [&](int64_t row) {
        for (int64_t j = layout.blocksPerRow; j < layout.scaleRowStride; ++j) job.scales[row * layout.scaleRowStride + j] = 0;
      });
}

// Calls fn(T{}) with T the element type of `dtype`.
template <typename Fn>
void withElementType(amct_mxfp4::Mxfp4Dtype dtype, Fn fn) {
  switch (dtype) {
    case amct_mxfp4::kFp16: return fn(c10::Half{});
    case amct_mxfp4::kBf16: return fn(c10::BFloat16{});
    default: return fn(float{});
  }
}

void quantize(const QuantizeJob& job) {
  withElementType(job.dtype, [&](auto element) {
    using T = decltype(element);
    switch (job.mode) {
      case amct_mxfp4::kRint: return quantizeTyped<T, amct_mxfp4::kRint>(job);
      case amct_mxfp4::kFloor: return quantizeTyped<T, amct_mxfp4::kFloor>(job);
      default: return quantizeTyped<T, amct_mxfp4::kRound>(job);
    }
  });
}

// ---- dequantizer ----------------------------------------------------------------------------

// 2^(b - 127) for every E8M0 byte b; 0xFF is NaN. 2^-127 (b = 0) is an fp32 subnormal.
struct ScaleValues {
  float value[256];
  ScaleValues() {
    for (int b = 0; b < 255; ++b) value[b] = b == 0 ? bitsToFloat(0x00400000) : bitsToFloat(b << 23);
    value[255] = std::numeric_limits<float>::quiet_NaN();
  }
};

// The signed e2m1 values of nibbles (0..15 in each lane), times `scale`.
inline VecF decodeNibbles(const VecI& n, const VecF& scale) {
  const VecI bits = ((n & VecI(7)) << VecI(22)) | ((n & VecI(8)) << VecI(28));  // e2m1 * 2^-126, signed
  return floatOf(bits) * VecF(0x1p126f) * scale;
}

template <typename Out>
inline void storeValues(Out* out, const VecF& lo, const VecF& hi);

template <>
inline void storeValues<float>(float* out, const VecF& lo, const VecF& hi) {
  lo.store(out);
  hi.store(out + kLanes);
}

template <>
inline void storeValues<c10::BFloat16>(c10::BFloat16* out, const VecF& lo, const VecF& hi) {
  at::vec::convert_from_float<c10::BFloat16>(lo, hi).store(out, 2 * kLanes);
}

template <>
inline void storeValues<c10::Half>(c10::Half* out, const VecF& lo, const VecF& hi) {
  at::vec::convert_from_float<c10::Half>(lo, hi).store(out, 2 * kLanes);
}

template <typename Out>
inline void dequantizeBlock(const uint8_t* codes, float scale, Out* out) {
  const VecF s(scale);
  for (int c = 0; c < kChunks; ++c) {
    const VecI bytes = at::vec::convert<int32_t>(Vectorized<uint8_t>::loadu(codes + c * kLanes, kLanes));
    const VecF even = decodeNibbles(bytes, s);
    const VecF odd = decodeNibbles(bytes >> VecI(4), s);
    auto ordered = at::vec::interleave2(even, odd);
    storeValues(out + c * 2 * kLanes, ordered.first, ordered.second);
  }
}

template <typename Out>
void dequantizeTyped(const DequantizeJob& job) {
  static const ScaleValues scales;
  Out* out = static_cast<Out*>(job.out);
  const BlockRows layout = job.layout;
  forEachBlock(
      layout,
      [&](int64_t b, int64_t row, int64_t col) {
        const float scale = scales.value[job.scales[row * layout.scaleRowStride + col]];
        dequantizeBlock(job.codes + b * kPairs, scale, out + b * kBlock);
      },
      [](int64_t) {});
}

void dequantize(const DequantizeJob& job) {
  withElementType(job.dtype, [&](auto element) { dequantizeTyped<decltype(element)>(job); });
}

}  // namespace

const Mxfp4Kernels mxfp4Kernels{&quantize, &dequantize};

}  // namespace CPU_CAPABILITY
}  // namespace mxfp4
}  // namespace amct
