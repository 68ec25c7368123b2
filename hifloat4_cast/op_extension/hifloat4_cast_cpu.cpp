// Native CPU implementation of hifloat4_fake_quant / pack / unpack (docs/hifloat4.md), with
// at::vec::Vectorized<float> / <int32_t>; compiled once per capability (amct_cpu_dispatch.h), so a
// vector holds W = 8 (DEFAULT, AVX2) or 16 (AVX-512) lanes. Every step is the same IEEE fp32
// operation (round to nearest even) or bit operation in every copy, so all copies give the same bits.
//
// Blocks along the last dim (fake-quant, pack, unpack) are read one 64-element block at a time
// into 64 / W registers and "deinterleaved" twice (at::vec::deinterleave2): lane l of plane r then
// holds element 4l + r, i.e. the planes run over the 16 subgroups of 4, so a subgroup maximum is
// a max of the four planes, and every per-subgroup factor multiplies a plane lane by lane. The
// inverse interleave restores the element order for the store. Blocks along another dim are
// columns of a 64 x inner run: there a lane is a block and every reduction is a max of rows.
// All stages of a block (max, scale, flags, codes, reconstruction) run in registers between its
// load and its store; the only branches are per block or per tile, never per element.
// GCC 12 reports AVX-512 shifts by a vector as "(may be) used uninitialized" inside its own
// intrinsics headers (_mm512_undefined_epi32), and notes the 32-byte vector ABI of the DEFAULT
// copy's lambdas; neither is about this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wpsabi"

#include <ATen/Parallel.h>
#include <ATen/cpu/vec/functional.h>
#include <ATen/cpu/vec/vec.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "hifloat4_cast_cpu.h"

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

inline VecI bitsOf(const Vec& v) { return at::vec::cast<int32_t>(v); }
inline Vec floatOf(const VecI& v) { return at::vec::cast<float>(v); }
inline VecI splat(int32_t v) { return VecI(v); }
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

// Non-finite lanes count as +0: a = |x'| and the sign of x' as a sign bit (set only for x' < 0,
// so -0.0 and masked -Inf give +0); `bad` is all-ones for NaN / Inf lanes.
struct Masked {
  Vec a;
  VecI neg;
  VecI bad;
};

inline Masked maskNonFinite(const Vec& x) {
  const VecI xb = bitsOf(x);
  const VecI mag = xb & splat(INT32_MAX);
  const VecI finite = mag < splat(0x7F800000);
  const VecI kept = mag & finite;
  return {floatOf(kept), xb & (kept > splat(0)) & splat(kSignBit), finite ^ splat(-1)};
}

// Block scale (docs/hifloat4.md A2.3-4) of the block maxima in each lane: S, rec = bf16(1/S) and
// the E6M2 byte (e + 48) * 4 + (q - 4).
struct Scale {
  Vec S;
  Vec rec;
  VecI e6m2;
};

inline Scale blockScale(const Vec& vmax) {
  Vec p = roundToBf16(vmax * Vec(kC7));
  p = at::vec::minimum(at::vec::maximum(p, Vec(kSMin)), Vec(kSMax));
  const VecI e = (bitsOf(p) >> splat(23)) - splat(127);
  const Vec q = (p * pow2(splat(2) - e)).round();  // RNE: ties to even
  const Vec S = q * pow2(e - splat(2));
  const VecI e6m2 = ((e + splat(48)) << splat(2)) + at::vec::convert_to_int_of_same_size(q) - splat(4);
  return {S, roundToBf16(Vec(1.0f) / S), e6m2};
}

// Per-subgroup factors from the subgroup maximum m4 and its group's maximum m8 (A2.5-8):
// the flags (1.0 / 0.0), 2^-de for the in-group value and F = S * 2^(de - 2), so that an
// element's magnitude is code * F (exact: at most 6 significant bits, >= 2^-50).
struct Factors {
  Vec l2;
  Vec l3;
  Vec invDe;
  Vec F;
};

inline Factors subgroupFactors(const Vec& m4, const Vec& m8, const Scale& s) {
  const Vec one(1.0f), half(0.5f);
  const Vec l2 = (m8 * s.rec).ge(Vec(4.0f));
  const Vec invL2 = one - l2 * half;
  const Vec l3 = ((m4 * s.rec) * invL2).ge(Vec(2.0f));
  const Vec invDe = invL2 * (one - l3 * half);
  const Vec F = s.S * ((one + l2) * (one + l3) * Vec(0.25f));
  return {l2, l3, invDe, F};
}

// The code c = min(floor(4 bf16(a * rec * 2^-de) + 0.5), 7) as fp32 (A2.7). min before floor
// gives the same result and keeps the value small.
inline Vec codeOf(const Vec& a, const Vec& rec, const Vec& invDe) {
  const Vec t = roundToBf16((a * rec) * invDe);
  return at::vec::minimum(t * Vec(4.0f) + Vec(0.5f), Vec(7.0f)).floor();
}

// The output bits: sign OR code * F, the quiet NaN in poisoned lanes.
inline Vec reconstruct(const Vec& code, const Factors& f, const VecI& neg, const VecI& poison) {
  return floatOf(select(poison, splat(kQuietNaN), bitsOf(code * f.F) | neg));
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

inline void toPlanes(const Vec (&v)[kVecsPerBlock], Planes& x) {
  Vec even[kVecsPerBlock / 2], odd[kVecsPerBlock / 2];
  for (int i = 0; i < kVecsPerBlock / 2; ++i) std::tie(even[i], odd[i]) = at::vec::deinterleave2(v[2 * i], v[2 * i + 1]);
  for (int g = 0; g < kSubVecs; ++g) {
    std::tie(x[0][g], x[2][g]) = at::vec::deinterleave2(even[2 * g], even[2 * g + 1]);
    std::tie(x[1][g], x[3][g]) = at::vec::deinterleave2(odd[2 * g], odd[2 * g + 1]);
  }
}

inline void fromPlanes(const Planes& x, Vec (&v)[kVecsPerBlock]) {
  Vec even[kVecsPerBlock / 2], odd[kVecsPerBlock / 2];
  for (int g = 0; g < kSubVecs; ++g) {
    std::tie(even[2 * g], even[2 * g + 1]) = at::vec::interleave2(x[0][g], x[2][g]);
    std::tie(odd[2 * g], odd[2 * g + 1]) = at::vec::interleave2(x[1][g], x[3][g]);
  }
  for (int i = 0; i < kVecsPerBlock / 2; ++i) std::tie(v[2 * i], v[2 * i + 1]) = at::vec::interleave2(even[i], odd[i]);
}

// Maxima of adjacent subgroup pairs (2j, 2j + 1), i.e. of group j, given back per subgroup.
inline void groupMaxima(const Vec (&m4)[kSubVecs], Vec (&m8)[kSubVecs]) {
  const Vec& hi = m4[kSubVecs - 1];
  Vec even, odd;
  std::tie(even, odd) = at::vec::deinterleave2(m4[0], hi);
  const Vec groups = at::vec::maximum(even, odd);  // group j in lane j (and j + 8 for W = 16)
  Vec lo2, hi2;
  std::tie(lo2, hi2) = at::vec::interleave2(groups, groups);
  m8[0] = lo2;
  if (kSubVecs == 2) m8[kSubVecs - 1] = hi2;
}

// Everything a block's outputs are made from.
struct BlockState {
  Planes a;
  VecI neg[kPlanes][kSubVecs];
  Scale scale;
  Factors f[kSubVecs];
  VecI poison;  // all-ones in every lane for a poisoned block
  bool poisoned;
};

template <class T>
inline void analyseBlock(const T* in, BlockState& st) {
  Vec v[kVecsPerBlock];
  for (int i = 0; i < kVecsPerBlock; ++i) v[i] = Io<T>::load(in + i * W);
  Planes x;
  toPlanes(v, x);
  VecI bad(0);
  Vec m4[kSubVecs];
  for (int g = 0; g < kSubVecs; ++g) {
    for (int r = 0; r < kPlanes; ++r) {
      const Masked m = maskNonFinite(x[r][g]);
      st.a[r][g] = m.a;
      st.neg[r][g] = m.neg;
      bad = bad | m.bad;
      m4[g] = r == 0 ? m.a : at::vec::maximum(m4[g], m.a);
    }
  }
  Vec m8[kSubVecs];
  groupMaxima(m4, m8);
  Vec all = m4[0];
  for (int g = 1; g < kSubVecs; ++g) all = at::vec::maximum(all, m4[g]);
  const float vmax = at::vec::vec_reduce_all<float>([](Vec p, Vec q) { return at::vec::maximum(p, q); }, all);
  const float anyBad = at::vec::vec_reduce_all<float>([](Vec p, Vec q) { return at::vec::maximum(p, q); },
                                                      floatOf(bad & splat(0x3F800000)));  // 1.0 if poisoned
  st.poisoned = anyBad != 0.0f;
  st.poison = splat(st.poisoned ? -1 : 0);
  st.scale = blockScale(Vec(vmax));
  for (int g = 0; g < kSubVecs; ++g) st.f[g] = subgroupFactors(m4[g], m8[g], st.scale);
}

template <class T>
inline void storeFakeQuant(const BlockState& st, T* dst) {
  Planes y;
  for (int g = 0; g < kSubVecs; ++g) {
    for (int r = 0; r < kPlanes; ++r) {
      const Vec c = codeOf(st.a[r][g], st.scale.rec, st.f[g].invDe);
      y[r][g] = reconstruct(c, st.f[g], st.neg[r][g], st.poison);
    }
  }
  Vec v[kVecsPerBlock];
  fromPlanes(y, v);
  for (int i = 0; i < kVecsPerBlock; i += 2) Io<T>::store2(v[i], v[i + 1], dst + i * W);
}

template <class T>
void fakeQuantRowsOf(const void* in, void* out, int64_t blocks) {
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  at::parallel_for(0, blocks, kGrainElements / kBlock, [&](int64_t begin, int64_t end) {
    int64_t b = begin;
    // Two blocks at a time: their (long, serial) max -> scale chains are independent, so the
    // core overlaps them.
    for (; b + 2 <= end; b += 2) {
      BlockState st0, st1;
      analyseBlock(src + b * kBlock, st0);
      analyseBlock(src + (b + 1) * kBlock, st1);
      storeFakeQuant(st0, dst + b * kBlock);
      storeFakeQuant(st1, dst + (b + 1) * kBlock);
    }
    for (; b < end; ++b) {
      BlockState st;
      analyseBlock(src + b * kBlock, st);
      storeFakeQuant(st, dst + b * kBlock);
    }
  });
}

// Bit weights of the flag bytes, per subgroup l: byte 1 holds l2 of group j = l / 2 at bit 7 - j
// (taken from the even subgroup); bytes 2 and 3 hold l3 at bit 7 - l and 15 - l, summed here as
// one 16-bit value byte2 * 256 + byte3.
alignas(64) constexpr float kL2Weights[16] = {128, 0, 64, 0, 32, 0, 16, 0, 8, 0, 4, 0, 2, 0, 1, 0};
alignas(64) constexpr float kL3Weights[16] = {32768, 16384, 8192, 4096, 2048, 1024, 512, 256,
                                              128,   64,    32,   16,   8,    4,    2,   1};

inline int weightedFlags(const Vec (&flags)[kSubVecs], const float* weights) {
  Vec sum = flags[0] * Vec::loadu(weights);
  for (int g = 1; g < kSubVecs; ++g) sum = sum + flags[g] * Vec::loadu(weights + g * W);
  return static_cast<int>(at::vec::vec_reduce_all<float>([](Vec p, Vec q) { return p + q; }, sum));
}

template <class T>
void packOf(const void* in, uint8_t* scale, uint8_t* value, int64_t blocks) {
  const T* src = static_cast<const T*>(in);
  at::parallel_for(0, blocks, kGrainElements / kBlock, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      BlockState st;
      analyseBlock(src + b * kBlock, st);
      // Nibble = 8 [x' < 0] + c; byte 2l holds elements 4l (low) and 4l + 1, byte 2l + 1 holds
      // elements 4l + 2 (low) and 4l + 3.
      Vec l2[kSubVecs], l3[kSubVecs];
      alignas(64) int32_t bytes[32];
      for (int g = 0; g < kSubVecs; ++g) {
        VecI nib[kPlanes];
        for (int r = 0; r < kPlanes; ++r) {
          const VecI c = at::vec::convert_to_int_of_same_size(codeOf(st.a[r][g], st.scale.rec, st.f[g].invDe));
          nib[r] = c | ((st.neg[r][g] != splat(0)) & splat(8));
        }
        const Vec lo = floatOf(nib[0] | (nib[1] << splat(4)));
        const Vec hi = floatOf(nib[2] | (nib[3] << splat(4)));
        Vec first, second;
        std::tie(first, second) = at::vec::interleave2(lo, hi);
        bitsOf(first).store(bytes + 2 * g * W);
        bitsOf(second).store(bytes + (2 * g + 1) * W);
        l2[g] = st.f[g].l2;
        l3[g] = st.f[g].l3;
      }
      uint8_t* v = value + b * 32;
      for (int i = 0; i < 32; ++i) v[i] = static_cast<uint8_t>(bytes[i]);
      alignas(64) int32_t e6m2[W];
      st.scale.e6m2.store(e6m2);
      const int l3Bits = weightedFlags(l3, kL3Weights);
      uint8_t* s = scale + b * 4;
      s[0] = static_cast<uint8_t>(st.poisoned ? 0xFF : e6m2[0]);
      s[1] = static_cast<uint8_t>(weightedFlags(l2, kL2Weights));
      s[2] = static_cast<uint8_t>(l3Bits >> 8);
      s[3] = static_cast<uint8_t>(l3Bits & 0xFF);
    }
  });
}

// Per subgroup l: the shifts that bring its l2 bit (byte 1, bit 7 - l / 2) and its l3 bit
// (bytes 2, 3 as one 16-bit value, bit 15 - l) to bit 0.
alignas(64) constexpr int32_t kL2Shifts[16] = {7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0};
alignas(64) constexpr int32_t kL3Shifts[16] = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};

template <class T>
void unpackOf(const uint8_t* scale, const uint8_t* value, void* out, int64_t blocks) {
  T* dst = static_cast<T*>(out);
  at::parallel_for(0, blocks, kGrainElements / kBlock, [&](int64_t begin, int64_t end) {
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

// --- blocks along a strided dim: W blocks side by side, one per lane -------------------------

// Fake-quant of the W columns at `in` (row r at in + r * stride), written likewise to `out`.
// Two sweeps over the 64 rows: maxima first, then the codes; the second re-reads the rows from
// the cache (in == out is fine: each row is read before it is written).
template <class T>
inline void fakeQuantColumnTile(const T* in, T* out, int64_t stride) {
  Vec m4[16];
  VecI bad(0);
  for (int l = 0; l < 16; ++l) {
    for (int k = 0; k < kPlanes; ++k) {
      const Masked m = maskNonFinite(Io<T>::load(in + (4 * l + k) * stride));
      bad = bad | m.bad;
      m4[l] = k == 0 ? m.a : at::vec::maximum(m4[l], m.a);
    }
  }
  Vec m8[8];
  Vec vmax(0.0f);
  for (int j = 0; j < 8; ++j) {
    m8[j] = at::vec::maximum(m4[2 * j], m4[2 * j + 1]);
    vmax = at::vec::maximum(vmax, m8[j]);
  }
  const Scale s = blockScale(vmax);
  Factors f[16];
  for (int l = 0; l < 16; ++l) f[l] = subgroupFactors(m4[l], m8[l / 2], s);
  for (int row = 0; row < kBlock; ++row) {
    const Masked m = maskNonFinite(Io<T>::load(in + row * stride));
    const Factors& fl = f[row / 4];
    Io<T>::store(reconstruct(codeOf(m.a, s.rec, fl.invDe), fl, m.neg, bad), out + row * stride);
  }
}

// The last inner % W columns (or all of them, inner < W): through a zero-padded W-wide copy.
template <class T>
inline void fakeQuantColumnTail(const T* in, T* out, int64_t inner, int64_t columns) {
  T tile[kBlock * W];
  std::memset(static_cast<void*>(tile), 0, sizeof(tile));
  for (int r = 0; r < kBlock; ++r) std::memcpy(tile + r * W, in + r * inner, columns * sizeof(T));
  fakeQuantColumnTile(tile, tile, W);
  for (int r = 0; r < kBlock; ++r) std::memcpy(out + r * inner, tile + r * W, columns * sizeof(T));
}

template <class T>
void fakeQuantColumnsOf(const void* in, void* out, int64_t blockRows, int64_t inner) {
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  // A piece is 64 rows x up to kPieceColumns columns of one block row; consecutive pieces are
  // consecutive memory, so each thread's range is one contiguous stretch.
  constexpr int64_t kPieceColumns = 16 * W;
  const int64_t piecesPerRow = (inner + kPieceColumns - 1) / kPieceColumns;
  const int64_t grain = std::max<int64_t>(1, kGrainElements / (kBlock * std::min(inner, kPieceColumns)));
  at::parallel_for(0, blockRows * piecesPerRow, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t row = p / piecesPerRow;
      const int64_t first = (p % piecesPerRow) * kPieceColumns;
      const int64_t last = std::min(inner, first + kPieceColumns);
      const int64_t base = row * kBlock * inner;
      int64_t c = first;
      for (; c + W <= last; c += W) fakeQuantColumnTile(src + base + c, dst + base + c, inner);
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
