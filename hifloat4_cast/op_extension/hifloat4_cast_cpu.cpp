// Native CPU implementation of hifloat4_fake_quant / pack / unpack (docs/hifloat4.md), with
// at::vec::Vectorized<float> / <int32_t>; compiled once per capability (amct_cpu_dispatch.h), so a
// vector holds W = 8 (DEFAULT, AVX2) or 16 (AVX-512) lanes. Every step is the same IEEE fp32
// operation (round to nearest even) or bit operation in every copy, so all copies give the same bits.
//
// Fake-quant and pack along the last dim run in batches of W blocks (see "batches of W blocks"
// below): per block the subgroup maxima; then the block scales of all W blocks at once, a lane
// a block; then per block its flags and per-subgroup factors, a lane a subgroup, and its codes,
// with the factors spread over the elements by one lookup (hifloat4_cast_simd.h) per vector. Unpack
// reads one block at a time into 64 / W registers in a "plane" layout (lane l of plane r =
// element 4l + r; at::vec::interleave2 restores the order). Blocks along another dim are columns
// of a 64 x inner run: there a lane is a block and every reduction is a max of rows. The only
// branches are per batch, per block or per tile, never per element; a batch holding a NaN / Inf
// block takes one more (rare) pass for it.
// GCC 12 reports AVX-512 shifts by a vector as "(may be) used uninitialized" inside its own
// intrinsics headers (_mm512_undefined_epi32), and notes the 32-byte vector ABI of the DEFAULT
// copy's lambdas; neither is about this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wpsabi"

#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <cstring>
#include <tuple>

#include "hifloat4_cast_cpu.h"
#include "amct_cpu_simd.h"
#include "amct_parallel.h"
#include "hifloat4_cast_simd.h"

namespace amct {
namespace hif4 {
namespace CPU_CAPABILITY {

namespace {

using Vec = at::vec::Vectorized<float>;
using VecI = at::vec::Vectorized<int32_t>;
constexpr int W = Vec::size();
static_assert(W == 8 || W == 16, "the plane layout assumes 8 or 16 fp32 lanes");
static_assert(VecI::size() == W, "int32 and fp32 vectors have the same lane count");
constexpr int kBlock = 64;
constexpr int kVecsPerBlock = kBlock / W;  // 8 or 4
constexpr int kSubVecs = 16 / W;           // vectors of per-subgroup values: 2 or 1
constexpr int kPlanes = 4;                 // elements per subgroup

// docs/hifloat4.md constants: C7 = bf16(1/7); the clamp of the block scale.
constexpr float kC7 = 0.142578125f;
constexpr float kSMin = 0x1p-48f;
constexpr float kSMax = 49152.0f;
constexpr int32_t kQuietNaN = 0x7FC00000;
constexpr int32_t kSignBit = INT32_MIN;
constexpr int64_t kGrainElements = 1 << 16;  // below this, one thread: waking others costs more
constexpr int64_t kMaxChunkElements = 1 << 20;

// Calls body(begin, end) over [0, units) units of `unitElements` elements each, in chunks the
// threads take as they become free (amct_parallel.h: a late or descheduled thread takes fewer
// chunks instead of holding up the call by a fixed half).
template <typename Body>
inline void parallelUnits(int64_t units, int64_t unitElements, const Body& body) {
  const int64_t minChunk = std::max<int64_t>(1, kGrainElements / unitElements);
  const int64_t maxChunk = std::max<int64_t>(minChunk, kMaxChunkElements / unitElements);
  parallelChunks(units, chunkElements(units, minChunk, maxChunk, 1), body);
}

inline VecI bitsOf(const Vec& v) { return at::vec::cast<int32_t>(v); }
inline Vec floatOf(const VecI& v) { return at::vec::cast<float>(v); }
inline VecI splat(int32_t v) { return VecI(v); }
inline VecI bit(int n) { return VecI(static_cast<int32_t>(1u << n)); }
// b where the all-ones / all-zeros mask m is set, else a.
inline VecI select(const VecI& m, const VecI& b, const VecI& a) { return a ^ ((a ^ b) & m); }

// 2^k for integer k in the normal range, from the exponent bits.
inline Vec pow2(const VecI& k) { return floatOf((k + splat(127)) << splat(23)); }

// bf16(v) of the docs: v (finite, >= 0) rounded to 8 significant bits, ties to even.
inline Vec roundToBf16(const Vec& v) {
  const VecI b = bitsOf(v);
  const VecI lsb = (b >> splat(16)) & splat(1);
  return floatOf((b + splat(0x7FFF) + lsb) & splat(static_cast<int32_t>(0xFFFF0000u)));
}

// Block scale (docs/hifloat4.md A2 steps 3-4) of the block maxima in each lane: S, rec = bf16(1/S) and
// the E6M2 byte (e + 48) * 4 + (q - 4).
struct Scale {
  Vec S;
  Vec rec;
  VecI e6m2;
};

// bf16(1/q) (the float32 quotient rounded to bfloat16, RNE) for q = 4 ... 8 in lanes 0 ... 4.
alignas(64) constexpr float kRecOfQ[16] = {0x1p-2f, 0x1.9ap-3f, 0x1.56p-3f, 0x1.24p-3f, 0x1p-3f};

// rec = bf16(1/S) for S = q 2^(e-2) is bf16(1/q) 2^(2-e) exactly: 1/S and 2^(2-e) lie in the normal
// range ([2^-16, 2^48] and [2^-13, 2^50]), where the float32 quotient and the bf16 rounding commute
// with a power-of-two scaling. So one lookup and a multiply stand for a division (long latency, on
// the critical path of every batch) and a rounding.
inline Scale blockScale(const Vec& vmax) {
  const Vec p = at::vec::clamp(roundToBf16(vmax * Vec(kC7)), Vec(kSMin), Vec(kSMax));
  const VecI e = (bitsOf(p) >> splat(23)) - splat(127);
  const Vec down = pow2(splat(2) - e);
  const Vec q = (p * down).round();  // RNE: ties to even; q in 4 ... 8
  const VecI qInt = at::vec::convert_to_int_of_same_size(q);
  const Vec S = q * pow2(e - splat(2));
  const VecI e6m2 = ((e + splat(48)) << splat(2)) + qInt - splat(4);
  return {S, lookup(Vec::loadu(kRecOfQ), qInt - splat(4)) * down, e6m2};
}

// --- loads and stores of W (one vector) or 2W (two vectors) elements of each dtype ----------

template <class T>
struct Io;

template <>
struct Io<float> {
  static Vec load(const float* p) { return Vec::loadu(p); }
  static void store(const Vec& v, float* p) { v.store(p); }
  static void store2(const Vec& a, const Vec& b, float* p) {
    a.store(p);
    b.store(p + W);
  }
};

template <>
struct Io<c10::Half> {
  static Vec load(const c10::Half* p) {
    Vec v;
    at::vec::load_to_float<c10::Half>(p, v);
    return v;
  }
  // RNE with float16 subnormals (F16C / AVX-512 or c10's software conversion: the same bits).
  static void store(const Vec& v, c10::Half* p) { at::vec::convert_from_float<c10::Half>(v, v).store(p, W); }
  static void store2(const Vec& a, const Vec& b, c10::Half* p) { at::vec::convert_from_float<c10::Half>(a, b).store(p); }
};

template <>
struct Io<c10::BFloat16> {
  static Vec load(const c10::BFloat16* p) {
    Vec v;
    at::vec::load_to_float<c10::BFloat16>(p, v);
    return v;
  }
  // Every result is exact in bfloat16, so narrowing is the upper half of the bits; done here
  // rather than with at::vec's rounding conversion, whose NaN is FFFF on x86 and 7FC0 elsewhere.
  static void store(const Vec& v, c10::BFloat16* p) { storeHalves(&v, 1, p); }
  static void store2(const Vec& a, const Vec& b, c10::BFloat16* p) {
    const Vec v[2] = {a, b};
    storeHalves(v, 2, p);
  }
  static void storeHalves(const Vec* v, int count, c10::BFloat16* p) {
    alignas(64) uint32_t bits[2 * W];
    for (int i = 0; i < count; ++i) bitsOf(v[i]).store(bits + i * W);
    uint16_t* dst = reinterpret_cast<uint16_t*>(p);
    for (int i = 0; i < count * W; ++i) dst[i] = static_cast<uint16_t>(bits[i] >> 16);
  }
};

// --- one block along the last dim, in the plane layout ---------------------------------------

using Planes = Vec[kPlanes][kSubVecs];  // [r][g]: lane l of vector g = element 4 (g W + l) + r

inline void fromPlanes(const Planes& x, Vec (&v)[kVecsPerBlock]) {
  Vec even[kVecsPerBlock / 2], odd[kVecsPerBlock / 2];
  for (int g = 0; g < kSubVecs; ++g) {
    std::tie(even[2 * g], even[2 * g + 1]) = at::vec::interleave2(x[0][g], x[2][g]);
    std::tie(odd[2 * g], odd[2 * g + 1]) = at::vec::interleave2(x[1][g], x[3][g]);
  }
  for (int i = 0; i < kVecsPerBlock / 2; ++i) std::tie(v[2 * i], v[2 * i + 1]) = at::vec::interleave2(even[i], odd[i]);
}

// --- blocks along the last dim: batches of W blocks -------------------------------------------
//
// A batch runs in three stages. (A) Per block: |x| as int32 bits (ordered like the magnitudes, NaN
// and Inf above every finite value), maxima of pairs then of subgroups (bfloat16: on its 16-bit
// bits): one vector per 16 subgroups (a row), and the lane-wise maxima of its rows. (B) Lane-wise,
// lane b = block b: the poison test and the block scale of the W blocks at once; then per block in
// its rows: the group maxima (pairs of lanes), the L2 / L3 flags and per subgroup the two factors
// m = 4 rec 2^-de and f = S 2^(de - 2), for all blocks before (C). (C) Per block: every element's
// code and output, with its subgroup's factors spread over the lanes by one lookup per vector.
// (Stage B in the rows needs no transposes, which cost AVX2 more than the lane-wise flags saved.)
// A poisoned block runs through (A)-(C) like any other (its garbage is finite or NaN, never a
// trap); afterwards the rare batches that hold one are patched: fake-quant writes NaN, pack
// recomputes the block with its non-finite elements set to 0 and forces byte 0 to FF. A last
// partial batch runs on a zero-padded copy.

constexpr int kSubgroups = 16;
constexpr int kBatch = W;  // blocks per batch: one lane each in the block scale
constexpr int kPairVecs = kVecsPerBlock / 2;

// Where the elements of a block sit in its kVecsPerBlock fp32 vectors. float16 / float32:
// naturally, lane i of vector v is element W v + i. bfloat16: in pairs, chunk k of 2W elements is
// read as W 32-bit lanes of two elements each; vector 2k holds the even ones (the low halves
// shifted up), vector 2k + 1 the odd ones (the high halves): no conversion, one shift or and.
// Each vector's elements lie in one factor row vector (row) and use one lookup (slot); the two
// vectors of a pair share it.
template <class T>
struct Layout {
  static constexpr bool kPairs = false;
  static constexpr int kSlots = kVecsPerBlock;
  static constexpr int slotOf(int v) { return v; }
  static constexpr int elementOf(int v, int i) { return W * v + i; }
};

template <>
struct Layout<c10::BFloat16> {
  static constexpr bool kPairs = true;
  static constexpr int kSlots = kPairVecs;
  static constexpr int slotOf(int v) { return v / 2; }
  static constexpr int elementOf(int v, int i) { return 2 * W * (v / 2) + 2 * i + v % 2; }
};

// The factor row vector of element vector v (a compile-time constant once the loops unroll).
template <class T>
constexpr int factorRowOf(int v) {
  return Layout<T>::elementOf(v, 0) / 4 / W;
}

// Per slot: for each lane, the lane of its subgroup in the factor row vector.
template <class T>
struct Lookups {
  VecI index[Layout<T>::kSlots];
  Lookups() {
    for (int v = 0; v < kVecsPerBlock; ++v) {
      alignas(64) int32_t lanes[W];
      for (int i = 0; i < W; ++i) lanes[i] = (Layout<T>::elementOf(v, i) / 4) % W;
      index[Layout<T>::slotOf(v)] = VecI::loadu(lanes);
    }
  }
};

// A block moves as kPairVecs pairs of vectors (2k, 2k + 1): the codes of a pair are computed and
// stored before the next pair is loaded, so that few vectors are live at once (AVX2 has 16 registers).
template <class T>
struct BlockIo {
  static void loadPair(const T* p, int k, Vec& a, Vec& b) {
    a = Io<T>::load(p + 2 * k * W);
    b = Io<T>::load(p + (2 * k + 1) * W);
  }
  static void storePair(const Vec& a, const Vec& b, T* p, int k) { Io<T>::store2(a, b, p + 2 * k * W); }
  static void load(const T* p, Vec (&v)[kVecsPerBlock]) {
    for (int k = 0; k < kPairVecs; ++k) loadPair(p, k, v[2 * k], v[2 * k + 1]);
  }
};

template <>
struct BlockIo<c10::BFloat16> {
  static constexpr int32_t kHigh = static_cast<int32_t>(0xFFFF0000u);
  static void loadPair(const c10::BFloat16* p, int k, Vec& a, Vec& b) {
    const VecI pair = VecI::loadu(p + 2 * W * k);
    a = floatOf(pair << splat(16));
    b = floatOf(pair & splat(kHigh));
  }
  // Every result is exact in bfloat16: the upper halves of the bits (see Io<c10::BFloat16>).
  static void storePair(const Vec& a, const Vec& b, c10::BFloat16* p, int k) {
    joinHalves(bitsOf(a) >> splat(16), bitsOf(b)).store(p + 2 * W * k);
  }
  static void load(const c10::BFloat16* p, Vec (&v)[kVecsPerBlock]) {
    for (int k = 0; k < kPairVecs; ++k) loadPair(p, k, v[2 * k], v[2 * k + 1]);
  }
};

// Stage A: lane i of m4[g] = the largest |x| bits of subgroup W g + i of the block at p.
// bfloat16: on the 16-bit |x| bits themselves (ordered like the magnitudes, NaN and Inf above every
// finite value, all >= 0 as int16), 2W elements per vector with a subgroup in each 64 bits; the
// widened maximum is the 16 bits shifted up, as before: the same values, without the widening.
template <class T>
inline void subgroupMaximaOf(const T* p, VecI (&m4)[kSubVecs]) {
  VecI pairs[kPairVecs];
  if constexpr (Layout<T>::kPairs) {
    for (int k = 0; k < kPairVecs; ++k) pairs[k] = quadMaxima16(VecI::loadu(p + 2 * W * k) & splat(0x7FFF7FFF));
    for (int g = 0; g < kSubVecs; ++g) m4[g] = evenLanes(pairs[2 * g], pairs[2 * g + 1]) << splat(16);
    return;
  }
  Vec v[kVecsPerBlock];
  BlockIo<T>::load(p, v);
  for (int k = 0; k < kPairVecs; ++k) {  // lane i of pairs[k]: the pair W k + i
    const VecI even = bitsOf(v[2 * k]) & splat(INT32_MAX), odd = bitsOf(v[2 * k + 1]) & splat(INT32_MAX);
    Vec e, o;
    std::tie(e, o) = at::vec::deinterleave2(floatOf(even), floatOf(odd));
    pairs[k] = at::vec::maximum(bitsOf(e), bitsOf(o));
  }
  for (int g = 0; g < kSubVecs; ++g) {
    Vec e, o;
    std::tie(e, o) = at::vec::deinterleave2(floatOf(pairs[2 * g]), floatOf(pairs[2 * g + 1]));
    m4[g] = at::vec::maximum(bitsOf(e), bitsOf(o));
  }
}

// The batch's per-block values, from stage A (m4, rowMax) and the lane-wise block scale.
struct Batch {
  alignas(64) int32_t m4[kBatch][kSubgroups];  // per block, the largest |x| bits of each subgroup
  alignas(64) int32_t rowMax[kBatch][W];       // ... and lane-wise over its rows
  alignas(64) float m[kBatch][kSubgroups];     // stage B: per block, m of each subgroup
  alignas(64) float rec[kBatch];               // bf16(1/S)
  alignas(64) int32_t sumBits[kBatch];         // bits(S) + bits(rec): f = sum - bits(m)
  alignas(64) int32_t e6m2[kBatch];            // pack: byte 0 of each block
  int poisoned;                                // bit b: block b holds a NaN or an Inf
};

// The poison mask (a NaN or an Inf in the block) and the block scale of the maxima vmax (|x| bits,
// NaN and Inf above every finite value) in each lane.
struct ScaledMax {
  VecI poison;
  Scale sc;
};

inline ScaledMax scaleOfMaxima(const VecI& vmax) {
  const VecI poison = vmax > splat(0x7F7FFFFF);
  // A poisoned block's scale from a zero maximum: every value of stage B stays finite (its
  // outputs are replaced anyway), so no integer step can overflow.
  return {poison, blockScale(floatOf(vmax & (poison ^ splat(-1))))};
}

// Stage B of a batch, lane-wise: the block scales from stage A's block maxima.
inline void batchScales(Batch& bt) {
  const ScaledMax sm = scaleOfMaxima(rowMaxima(&bt.rowMax[0][0]));  // lane b: block b's maximum
  sm.sc.rec.store(bt.rec);
  (bitsOf(sm.sc.rec) + bitsOf(sm.sc.S)).store(bt.sumBits);  // S rec is about 1: no overflow
  sm.sc.e6m2.store(bt.e6m2);
  bt.poisoned = ~floatOf(sm.poison).zero_mask() & ((1 << kBatch) - 1);
}

// Stage B of one block in its rows (lane i of row g: subgroup W g + i) from its subgroup maxima and
// rec: m = 4 rec 2^-de per subgroup and, for pack, the L2 / L3 flags as compare masks (all ones or
// zero). Group j is subgroups 2j and 2j + 1, a pair of lanes. Every power-of-two factor is an
// exponent-field addition (m and rec are normal).
struct RowFlags {
  VecI l2[kSubVecs];  // lanes 2j and 2j + 1: l2 of group j
  VecI l3[kSubVecs];
};

template <bool kPack>
inline void rowFactors(const int32_t* m4Row, float rec, Vec (&m)[kSubVecs], RowFlags& flags) {
  const Vec r(rec);
  const VecI mMax = bitsOf(r) + splat(2 << 23);  // m = 4 rec 2^-de
  for (int g = 0; g < kSubVecs; ++g) {
    const VecI m4 = VecI::loadu(m4Row + g * W);
    const VecI m8 = at::vec::maximum(m4, swapPairs(m4));
    const Vec l2 = floatOf(m8) * r >= Vec(4.0f);                                // A2 step 5
    const Vec l3 = floatOf(m4) * r >= Vec::blendv(Vec(2.0f), Vec(4.0f), l2);  // 2 * 2^l2 (A2 step 6)
    // de = -(l2 + l3) of the all-ones masks: bits(m) = bits(mMax) - de 2^23.
    m[g] = floatOf(mMax + ((bitsOf(l2) + bitsOf(l3)) << splat(23)));
    if (kPack) {
      flags.l2[g] = bitsOf(l2);
      flags.l3[g] = bitsOf(l3);
    }
  }
}

// The bits of each byte in reverse order (flag bytes are most significant bit first).
struct ByteReversal {
  uint8_t of[256];
  constexpr ByteReversal() : of() {
    for (int v = 0; v < 256; ++v) {
      for (int i = 0; i < 8; ++i) of[v] = static_cast<uint8_t>(of[v] | (((v >> i) & 1) << (7 - i)));
    }
  }
};
constexpr ByteReversal kReversed;

// Bytes 1-3 of a block's scale (docs/hifloat4.md A3) from its flag masks, at bits 8-31 of a
// little-endian word: byte 1 bit 7 - j = l2 of group j, byte 2 bit 7 - s (s < 8), byte 3 bit 15 - s.
inline uint32_t flagBytesOf(const RowFlags& f) {
  uint32_t l2 = 0, l3 = 0;  // bit s: lane s of the rows
  for (int g = 0; g < kSubVecs; ++g) {
    l2 |= static_cast<uint32_t>(~floatOf(f.l2[g]).zero_mask() & ((1 << W) - 1)) << (g * W);
    l3 |= static_cast<uint32_t>(~floatOf(f.l3[g]).zero_mask() & ((1 << W) - 1)) << (g * W);
  }
  // l2's even bits (bit 2j: group j), gathered to bits 0-7.
  l2 &= 0x5555u;
  l2 = (l2 | (l2 >> 1)) & 0x3333u;
  l2 = (l2 | (l2 >> 2)) & 0x0F0Fu;
  l2 = (l2 | (l2 >> 4)) & 0x00FFu;
  return (static_cast<uint32_t>(kReversed.of[l2]) << 8) | (static_cast<uint32_t>(kReversed.of[l3 & 0xFFu]) << 16) |
         (static_cast<uint32_t>(kReversed.of[l3 >> 8]) << 24);
}

// The columns path's stage B, lane-wise (lane b = block b) from the subgroup maxima m4: per
// subgroup s, m = 4 rec 2^-de passed to putM(s, m) as soon as it is known, and the block's
// bits(S) + bits(rec) (f = S 2^(de - 2) has bits sum - bits(m)) and its poison mask. The same
// steps as rowFactors, with a lane for a block instead of a subgroup.
struct LaneFactors {
  VecI sumBits;
  VecI poison;
};

template <class PutM>
inline LaneFactors laneFactors(const VecI (&m4)[kSubgroups], const PutM& putM) {
  VecI m8[8];
  VecI vmax = at::vec::maximum(m4[0], m4[1]);
  for (int j = 0; j < 8; ++j) {
    m8[j] = at::vec::maximum(m4[2 * j], m4[2 * j + 1]);
    vmax = at::vec::maximum(vmax, m8[j]);
  }
  const ScaledMax sm = scaleOfMaxima(vmax);
  const Scale& sc = sm.sc;
  const VecI rec = bitsOf(sc.rec);
  const VecI mMax = rec + splat(2 << 23);  // m = 4 rec 2^-de
  for (int j = 0; j < 8; ++j) {
    const VecI l2 = bitsOf(floatOf(m8[j]) * sc.rec >= Vec(4.0f));  // A2 step 5
    const Vec l3Threshold = floatOf(splat(0x40000000) + (l2 & splat(1 << 23)));  // 2 * 2^l2 (A2 step 6)
    for (int s = 2 * j; s < 2 * j + 2; ++s) {
      const VecI l3 = bitsOf(floatOf(m4[s]) * sc.rec >= l3Threshold);
      const VecI de = splat(0) - l2 - l3;
      putM(s, floatOf(mMax - (de << splat(23))));
    }
  }
  return {rec + bitsOf(sc.S), sm.poison};  // S rec is about 1: no overflow
}

// Stage C, one element vector: the signed code, +-c with c = min(floor(bf16(4t) + 0.5), 7) for
// 4t = |x'| m (exact scalings of a rec: docs/hifloat4.md A2 step 7), its sign bit set iff x < 0
// (-0.0 gives +0.0). The output is (signed code) f: the product's sign is the code's (f > 0).
//
// c = min(floor(bf16(u) + 0.5), 7) for u = min(|x m|, 7) (min before rounding: bf16 is monotone and
// 7 is a bf16 value), exact for every u in [0, 7] (each of its float32 values was checked against the definition),
// in three steps instead of a bf16 rounding, an add and a floor:
// * h = (bits(u) + 0x8000) & ~0xFFFF rounds u to bf16 with ties away from zero instead of to even.
//   c changes only where bf16(u) crosses a half k + 0.5, and the two roundings differ only at ties,
//   whose neighbours never straddle k + 0.5 (itself a bf16 value): same c.
// * v = (bits(u) + 0x8000) | 0xFFFF lies strictly between h and the next bf16 value h+, so between
//   the same two halves as h but never on one (its low 16 bits are ones, a half's are zeros):
//   RNE(v) = floor(h + 0.5), with no tie to break. h <= 7 gives RNE(v) <= 7.
// The steps run on the signed u' = sign(x m) u (signedMin): its bits are the sign bit or-ed onto
// bits(u), the carry of + 0x8000 never reaches the sign (u <= 7), and RNE is odd, RNE(-v) = -RNE(v)
// (-0.0 for a negative v that rounds to 0), so the result is +-c with the sign bit of x m.
// For bfloat16 and float16 x one integer add stands for the add and the or: x m is exact (x has at
// most 8 / 11 significant bits, m = 4 rec 2^-de at most 8), so the low 16 bits L of bits(u) are a
// multiple of unit = 2^8 / 2^5 (u = 7 too). Then v = bits(u) + 0x8000 + unit / 2 carries into the
// high half iff L >= 0x8000 (the multiple of unit below 0x8000 is 0x8000 - unit), the same h, and
// its low 16 bits are never zero (that needs L = 0x8000 - unit / 2): again strictly between h and
// h+. A product below the float32 normal range may have any L, but its code is 0 either way.
// NaN u (only in a poisoned block, whose outputs are replaced) stays NaN or a finite garbage code.
template <class T>
constexpr int32_t kProductUnit = std::is_same<T, c10::BFloat16>::value ? 1 << 8
                                 : std::is_same<T, c10::Half>::value    ? 1 << 5
                                                                        : 1;

template <class T>
inline Vec signedCodeOf(const Vec& x, const Vec& m) {
  const Vec u = signedMin(signedProduct(x, m), Vec(7.0f));  // sign bit: x < 0
  if constexpr (kProductUnit<T> > 1) {
    return floatOf(bitsOf(u) + splat(0x8000 + kProductUnit<T> / 2)).round();
  } else {
    return floatOf((bitsOf(u) + splat(0x8000)) | splat(0xFFFF)).round();
  }
}

// f = S 2^(de - 2) from m = 4 rec 2^-de: bits(f) = bits(S) + bits(rec) - bits(m).
template <class T>
inline void fakeQuantBlockOf(const T* in, T* out, const Vec (&mRows)[kSubVecs], int32_t sumBits, const Lookups<T>& lk) {
  const VecI sum(sumBits);
  for (int k = 0; k < kPairVecs; ++k) {
    Vec v[2];
    BlockIo<T>::loadPair(in, k, v[0], v[1]);
    for (int i = 0; i < 2; ++i) {
      const int vec = 2 * k + i;
      const Vec m = lookup(mRows[factorRowOf<T>(vec)], lk.index[Layout<T>::slotOf(vec)]);
      const Vec f = floatOf(sum - bitsOf(m));
      v[i] = signedCodeOf<T>(v[i], m) * f;
    }
    BlockIo<T>::storePair(v[0], v[1], out, k);
  }
}

// Pack, one block: value bytes (even element in the low nibble, nibble = 8 [x' < 0] + c).
template <class T>
inline void packBlockOf(const T* in, uint8_t* value, const Vec (&mRows)[kSubVecs], const Lookups<T>& lk) {
  Vec v[kVecsPerBlock];
  BlockIo<T>::load(in, v);
  VecI nib[kVecsPerBlock];
  for (int k = 0; k < kVecsPerBlock; ++k) {
    const int slot = Layout<T>::slotOf(k);
    const Vec code = signedCodeOf<T>(v[k], lookup(mRows[factorRowOf<T>(k)], lk.index[slot]));
    nib[k] = at::vec::convert_to_int_of_same_size(code).abs() | ((bitsOf(code) >> splat(31)) & splat(8));
  }
  for (int k = 0; k < kPairVecs; ++k) {
    VecI even = nib[2 * k], odd = nib[2 * k + 1];
    if (!Layout<T>::kPairs) {
      Vec e, o;
      std::tie(e, o) = at::vec::deinterleave2(floatOf(even), floatOf(odd));
      even = bitsOf(e);
      odd = bitsOf(o);
    }
    simd::CPU_CAPABILITY::storeLowBytes(even | (odd << splat(4)), value + k * W);
  }
}

// The quiet NaN of each dtype (7FC00000 / 7E00 / 7FC0), for poisoned fake-quant blocks.
template <class T>
inline T quietNaN() {
  const uint16_t bits = std::is_same<T, c10::Half>::value ? 0x7E00 : 0x7FC0;
  T v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

template <>
inline float quietNaN<float>() {
  float v;
  std::memcpy(&v, &kQuietNaN, sizeof(v));
  return v;
}

// The outputs of one batch: fake-quant writes `out` (it may be `in`), pack writes `scale` and
// `value`.
template <class T, bool kPack>
struct BatchOut {
  T* out;
  uint8_t* scale;
  uint8_t* value;
};

template <class T, bool kPack>
void runBatch(const T* in, const BatchOut<T, kPack>& o, const Lookups<T>& lk, Batch& bt);

// Pack of a poisoned block: the block with its non-finite elements set to 0, as the first of an
// otherwise zero batch; then byte 0 = FF.
template <class T>
void packPoisonedBlock(const T* in, uint8_t* scale, uint8_t* value, const Lookups<T>& lk) {
  T masked[kBatch * kBlock] = {};
  for (int i = 0; i < kBlock; ++i) masked[i] = std::isfinite(static_cast<float>(in[i])) ? in[i] : T(0.0f);
  uint8_t s[kBatch * 4], v[kBatch * 32];
  Batch bt;
  runBatch<T, true>(masked, {nullptr, s, v}, lk, bt);
  std::memcpy(value, v, 32);
  std::memcpy(scale, s, 4);
  scale[0] = 0xFF;
}

template <class T, bool kPack>
void runBatch(const T* in, const BatchOut<T, kPack>& o, const Lookups<T>& lk, Batch& bt) {
  for (int b = 0; b < kBatch; ++b) {
    VecI m4[kSubVecs];
    subgroupMaximaOf<T>(in + b * kBlock, m4);
    VecI all = m4[0];
    for (int g = 0; g < kSubVecs; ++g) {
      m4[g].store(bt.m4[b] + g * W);
      all = at::vec::maximum(all, m4[g]);
    }
    all.store(bt.rowMax[b]);
  }
  batchScales(bt);
  // Stage B of all blocks before stage C of any: each block's chain of dependent steps (maxima to
  // m) then overlaps the others instead of holding up its codes.
  for (int b = 0; b < kBatch; ++b) {
    Vec m[kSubVecs];
    RowFlags flags;
    rowFactors<kPack>(bt.m4[b], bt.rec[b], m, flags);
    for (int g = 0; g < kSubVecs; ++g) m[g].store(bt.m[b] + g * W);
    if (kPack) {
      const uint32_t word = (static_cast<uint32_t>(bt.e6m2[b]) & 0xFFu) | flagBytesOf(flags);
      std::memcpy(o.scale + b * 4, &word, 4);
    }
  }
  for (int b = 0; b < kBatch; ++b) {
    Vec m[kSubVecs];
    for (int g = 0; g < kSubVecs; ++g) m[g] = Vec::loadu(bt.m[b] + g * W);
    if (kPack) {
      packBlockOf(in + b * kBlock, o.value + b * 32, m, lk);
    } else {
      fakeQuantBlockOf(in + b * kBlock, o.out + b * kBlock, m, bt.sumBits[b], lk);
    }
  }
  for (int bits = bt.poisoned; bits != 0; bits &= bits - 1) {  // rare: a NaN or an Inf in the batch
    const int b = __builtin_ctz(bits);
    if (kPack) {
      packPoisonedBlock(in + b * kBlock, o.scale + b * 4, o.value + b * 32, lk);
    } else {
      std::fill(o.out + b * kBlock, o.out + (b + 1) * kBlock, quietNaN<T>());
    }
  }
}

// All blocks of a call, in batches; a thread takes contiguous chunks of batches. The last
// partial batch runs on a zero-padded copy.
template <class T, bool kPack>
void rowsOf(const T* src, const BatchOut<T, kPack>& o, int64_t blocks) {
  static const Lookups<T> lk;
  const int64_t batches = (blocks + kBatch - 1) / kBatch;
  parallelUnits(batches, kBatch * kBlock, [&](int64_t begin, int64_t end) {
    Batch bt;
    for (int64_t q = begin; q < end; ++q) {
      const int64_t first = q * kBatch;
      const int64_t n = std::min<int64_t>(kBatch, blocks - first);
      const BatchOut<T, kPack> at{kPack ? nullptr : o.out + first * kBlock, kPack ? o.scale + first * 4 : nullptr,
                                  kPack ? o.value + first * 32 : nullptr};
      if (n == kBatch) {
        runBatch<T, kPack>(src + first * kBlock, at, lk, bt);
        continue;
      }
      T tile[kBatch * kBlock] = {};
      std::copy(src + first * kBlock, src + (first + n) * kBlock, tile);
      uint8_t s[kBatch * 4], v[kBatch * 32];
      runBatch<T, kPack>(tile, {tile, s, v}, lk, bt);
      if (kPack) {
        std::memcpy(at.scale, s, n * 4);
        std::memcpy(at.value, v, n * 32);
      } else {
        std::copy(tile, tile + n * kBlock, at.out);
      }
    }
  });
}

template <class T>
void fakeQuantRowsOf(const void* in, void* out, int64_t blocks) {
  rowsOf<T, false>(static_cast<const T*>(in), {static_cast<T*>(out), nullptr, nullptr}, blocks);
}

template <class T>
void packOf(const void* in, uint8_t* scale, uint8_t* value, int64_t blocks) {
  rowsOf<T, true>(static_cast<const T*>(in), {nullptr, scale, value}, blocks);
}

// Per subgroup l: the shifts that bring its l2 bit (byte 1, bit 7 - l / 2) and its l3 bit
// (bytes 2, 3 as one 16-bit value, bit 15 - l) to bit 0.
alignas(64) constexpr int32_t kL2Shifts[16] = {7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0};
alignas(64) constexpr int32_t kL3Shifts[16] = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};

template <class T>
void unpackOf(const uint8_t* scale, const uint8_t* value, void* out, int64_t blocks) {
  T* dst = static_cast<T*>(out);
  parallelUnits(blocks, kBlock, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const uint8_t* s = scale + b * 4;
      const uint8_t* v = value + b * 32;
      // S = 2^((b0 >> 2) - 48) * (1 + (b0 & 3) / 4), exact; FF marks a poisoned block.
      const int32_t b0 = s[0];
      const VecI poison = splat(b0 == 0xFF ? -1 : 0);
      const Vec S = Vec(1.0f + static_cast<float>(b0 & 3) * 0.25f) * pow2(splat((b0 >> 2) - 48));
      const VecI flags2 = splat(s[1]);
      const VecI flags3 = splat((s[2] << 8) | s[3]);
      alignas(64) int32_t bytes[32];
      for (int i = 0; i < 32; ++i) bytes[i] = v[i];
      Planes y;
      for (int g = 0; g < kSubVecs; ++g) {
        const VecI de = ((flags2 >> VecI::loadu(kL2Shifts + g * W)) & splat(1)) +
                        ((flags3 >> VecI::loadu(kL3Shifts + g * W)) & splat(1));
        const Vec F = S * pow2(de - splat(2));
        Vec evenBytes, oddBytes;  // bytes 2l and 2l + 1 of subgroup l
        std::tie(evenBytes, oddBytes) = at::vec::deinterleave2(floatOf(VecI::loadu(bytes + 2 * g * W)),
                                                               floatOf(VecI::loadu(bytes + (2 * g + 1) * W)));
        const VecI lo = bitsOf(evenBytes), hi = bitsOf(oddBytes);
        const VecI nib[kPlanes] = {lo & splat(15), lo >> splat(4), hi & splat(15), hi >> splat(4)};
        for (int r = 0; r < kPlanes; ++r) {
          const Vec code = at::vec::convert_to_fp_of_same_size<float>(nib[r] & splat(7));
          const VecI neg = (nib[r] & splat(8)) != splat(0);
          y[r][g] = floatOf(select(poison, splat(kQuietNaN), bitsOf(code * F) | (neg & splat(kSignBit))));
        }
      }
      Vec out[kVecsPerBlock];
      fromPlanes(y, out);
      for (int i = 0; i < kVecsPerBlock; i += 2) Io<T>::store2(out[i], out[i + 1], dst + b * kBlock + i * W);
    }
  });
}

// --- blocks along a strided dim: blocks side by side, one per lane -------------------------
//
// A tile is kColumns<T> adjacent columns of a 64 x inner run, each column one block, in
// kGroups<T> vectors per row: the maxima, laneFactors and per element the same steps as the
// rows path (signedCodeOf, f = sum - bits(m)), with no lookups: a row's factors are one vector per
// group. float16 / float32: one group of W columns. bfloat16: 2W columns read as W 32-bit lanes,
// the even columns (the low halves shifted up) and the odd ones (the high halves), as in
// BlockIo<c10::BFloat16>: no conversion, and a row stores with one select.
template <class T>
struct ColumnIo {
  static constexpr int kGroups = 1;
  static void load(const T* p, Vec (&v)[1]) { v[0] = Io<T>::load(p); }
  static void store(const Vec (&v)[1], T* p) { Io<T>::store(v[0], p); }
};

template <>
struct ColumnIo<c10::BFloat16> {
  static constexpr int kGroups = 2;
  static constexpr int32_t kHigh = static_cast<int32_t>(0xFFFF0000u);
  static void load(const c10::BFloat16* p, Vec (&v)[2]) {
    const VecI pair = VecI::loadu(p);
    v[0] = floatOf(pair << splat(16));
    v[1] = floatOf(pair & splat(kHigh));
  }
  // Every result is exact in bfloat16: the upper halves of the bits.
  static void store(const Vec (&v)[2], c10::BFloat16* p) {
    joinHalves(bitsOf(v[0]) >> splat(16), bitsOf(v[1])).store(p);
  }
};

template <class T>
constexpr int kColumns = W * ColumnIo<T>::kGroups;

// Fake-quant of the kColumns<T> columns at `in` (row r at in + r * stride), written likewise to
// `out`. Two sweeps over the 64 rows: maxima first, then the codes; the second re-reads the rows
// from the cache (in == out is fine: each row is read before it is written).
template <class T>
inline void fakeQuantColumnTile(const T* in, T* out, int64_t stride) {
  constexpr int G = ColumnIo<T>::kGroups;
  VecI m4[G][kSubgroups];
  for (int l = 0; l < kSubgroups; ++l) {
    for (int k = 0; k < kPlanes; ++k) {
      Vec v[G];
      ColumnIo<T>::load(in + (4 * l + k) * stride, v);
      for (int g = 0; g < G; ++g) {
        const VecI mag = bitsOf(v[g]) & splat(INT32_MAX);
        m4[g][l] = k == 0 ? mag : at::vec::maximum(m4[g][l], mag);
      }
    }
  }
  Vec m[G][kSubgroups];
  LaneFactors lf[G];
  for (int g = 0; g < G; ++g) lf[g] = laneFactors(m4[g], [&](int s, const Vec& v) { m[g][s] = v; });
  for (int row = 0; row < kBlock; ++row) {
    Vec v[G];
    ColumnIo<T>::load(in + row * stride, v);
    for (int g = 0; g < G; ++g) {
      const Vec& mr = m[g][row / 4];
      const VecI bits = bitsOf(signedCodeOf<T>(v[g], mr) * floatOf(lf[g].sumBits - bitsOf(mr)));
      v[g] = floatOf(select(lf[g].poison, splat(kQuietNaN), bits));
    }
    ColumnIo<T>::store(v, out + row * stride);
  }
}

// The last inner % kColumns<T> columns (or all of them, inner < kColumns<T>): through a
// zero-padded kColumns<T>-wide copy.
template <class T>
inline void fakeQuantColumnTail(const T* in, T* out, int64_t inner, int64_t columns) {
  constexpr int C = kColumns<T>;
  T tile[kBlock * C];
  std::memset(static_cast<void*>(tile), 0, sizeof(tile));
  for (int r = 0; r < kBlock; ++r) std::memcpy(tile + r * C, in + r * inner, columns * sizeof(T));
  fakeQuantColumnTile(tile, tile, C);
  for (int r = 0; r < kBlock; ++r) std::memcpy(out + r * inner, tile + r * C, columns * sizeof(T));
}

template <class T>
void fakeQuantColumnsOf(const void* in, void* out, int64_t blockRows, int64_t inner) {
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  // A piece is 64 rows x up to kPieceColumns columns of one block row; consecutive pieces are
  // consecutive memory, so each chunk of pieces is one contiguous stretch.
  constexpr int64_t kPieceColumns = 16 * W;
  const int64_t piecesPerRow = (inner + kPieceColumns - 1) / kPieceColumns;
  parallelUnits(blockRows * piecesPerRow, kBlock * std::min(inner, kPieceColumns), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t row = p / piecesPerRow;
      const int64_t first = (p % piecesPerRow) * kPieceColumns;
      const int64_t last = std::min(inner, first + kPieceColumns);
      const int64_t base = row * kBlock * inner;
      int64_t c = first;
      for (; c + kColumns<T> <= last; c += kColumns<T>) fakeQuantColumnTile(src + base + c, dst + base + c, inner);
      if (c < last) fakeQuantColumnTail(src + base + c, dst + base + c, inner, last - c);
    }
  });
}

}  // namespace

extern const CpuKernels cpuKernels;
const CpuKernels cpuKernels{
    {&fakeQuantRowsOf<c10::Half>, &fakeQuantRowsOf<c10::BFloat16>, &fakeQuantRowsOf<float>},
    {&fakeQuantColumnsOf<c10::Half>, &fakeQuantColumnsOf<c10::BFloat16>, &fakeQuantColumnsOf<float>},
    {&packOf<c10::Half>, &packOf<c10::BFloat16>, &packOf<float>},
    {&unpackOf<c10::Half>, &unpackOf<c10::BFloat16>, &unpackOf<float>},
};

}  // namespace CPU_CAPABILITY
}  // namespace hif4
}  // namespace amct
