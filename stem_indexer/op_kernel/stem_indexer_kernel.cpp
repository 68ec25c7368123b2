// stem_indexer: the block selection of npu_stem_indexer (docs/stem_indexer.md §4, §4.1), one
// AscendC vector kernel. Compiled by bisheng for dav-3510 and, on every machine, by g++ against
// the kernel sim (the CPU backend).
//
// Input: the fp32 dot products q.k of every Top-K row with its candidate blocks [4, vis - 4)
// (the host's score matmul), vbias, and a row table (stem_indexer_tiling.h). Output: the valid
// prefix [0..3] ++ ascending(TopK) ++ [vis-4 .. vis-1] of each Top-K row; the host writes the -1
// tails, the short-path rows and sparse_seq_len.
//
// Per row (one row at a time, candidates padded to whole 64-lane repeats):
//   1. The lanes with a NaN dot or vbias and the pad lanes (j >= n) are masked and zeroed before
//      any arithmetic; s = f32(f32(dot * 2^-6) + vbias) (Muls, Add: two roundings, as the
//      spec); precision 2 rounds s to bf16 (RNE) by integer steps on its bits, so neither the
//      FLOAT saturation mode (Inf -> MAX, NaN -> 0 in casts to bf16) nor flush-to-zero of a cast
//      can change a key.
//   2. The §4.1 key as a signed int32 ikey (same order as the unsigned key): the fp32 bits for
//      s >= +0, ~|bits| for a set sign bit; NaN is lowest. It is split into hi = ikey >> 16
//      (arithmetic) and lo = ikey & 0xFFFF, both exact in fp32, so the float compares of the
//      vector unit order them exactly. NaN gets hi = -32768, lo = 0 (the lowest key; a finite
//      or infinite value has hi >= -32641). Pad lanes get NaN's key and come after every real lane.
//   3. The K-th key: a search on hi (bisection alternating with interpolation of the counts;
//      each count is a Compares, then a popcount of the mask words by the scalar unit for rows
//      of <= 1024 lanes, Select + WholeReduceSum beyond), ended by a scalar pass once at most 16
//      lanes remain in the bracket; then, only when the K-th key shares its hi with lanes that
//      are not all taken, the same search on lo within that hi bucket. Exact ties are taken in
//      index order, so ties go to the smaller index.
//   4. The chosen lanes are read from the compare masks in index order (scalar bit scan of
//      32-bit mask words), so the output is ascending by construction.
// The scalar unit's orderings with the vector and DMA pipes are explicit flags (WaitForPipe):
// the kernel does not rely on bisheng's auto-sync.
#include "kernel_operator.h"
#include "amct_kernel_common.h"
#include "stem_indexer_tiling.h"

using namespace AscendC;

namespace {

using amct_stem::StemTiling;
using amct_kernel::Reduce;
using amct_kernel::ReduceEachRepeat;
using amct_kernel::WaitForPipe;

constexpr float kScale = 0.015625f;         // 2^-6: exact scaling
constexpr int32_t kHiNaN = -32768;          // hi half of NaN's key: the lowest
constexpr int32_t kHiTop = 32640;           // hi half of +inf's key: nothing is above
constexpr int32_t kLoTop = 65535;
constexpr uint32_t kRepeatLanes = 64;       // fp32 lanes per repeat
constexpr uint32_t kOutMax = amct_stem::kMaxK + amct_stem::kSink + amct_stem::kWindow;

__aicore__ inline uint32_t RoundUpTo(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }

// Set bits of x.
__aicore__ inline uint32_t PopCount(uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0Fu;
  return (x * 0x01010101u) >> 24;
}

// Index of the lowest set bit of x != 0.
__aicore__ inline uint32_t LowestBit(uint32_t x) {
  uint32_t n = 0;
  if ((x & 0xFFFFu) == 0) { n += 16; x >>= 16; }
  if ((x & 0xFFu) == 0) { n += 8; x >>= 8; }
  if ((x & 0xFu) == 0) { n += 4; x >>= 4; }
  if ((x & 0x3u) == 0) { n += 2; x >>= 2; }
  if ((x & 0x1u) == 0) { n += 1; }
  return n;
}

// One selection result: the largest threshold t with count(>= t) >= need, count(>= t + 1) and
// count(>= t).
struct Kth {
  int32_t threshold;
  uint32_t above;
  uint32_t atLeast;
};

// Below this many lanes in the bracket, the search ends with a scalar pass over them.
constexpr uint32_t kScalarFinish = 16;
// Up to this many per-repeat sums are added by the scalar unit (no second reduction).
constexpr uint32_t kScalarSumRepeats = 8;
// Rows of at most this many lanes count a compare mask with the scalar unit (a popcount per
// 32-bit word); longer rows with Select + WholeReduceSum.
constexpr uint32_t kScalarCountLanes = 1024;

class StemSelector {
 public:
  __aicore__ inline void Init(GM_ADDR dots, GM_ADDR vbias, GM_ADDR rows, GM_ADDR out, const StemTiling& t,
                              TPipe* pipe) {
    t_ = t;
    range_ = amct_kernel::RangeOfThisBlock(t.blockNum, t.rowsPerCore, t.rowsLastCore);
    dotsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(dots));
    biasGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(vbias));
    rowGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(rows));
    outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out));
    const uint32_t w = t.maxLanes;
    pipe->InitBuffer(dotsQue_, 1, w * 4);
    pipe->InitBuffer(biasQue_, 1, w * 4);
    pipe->InitBuffer(outQue_, 1, kOutMax * 4);
    pipe->InitBuffer(hiBuf_, w * 4);
    pipe->InitBuffer(loBuf_, w * 4);
    pipe->InitBuffer(onesBuf_, w * 4);
    for (uint32_t m = 0; m < kMasks; ++m) pipe->InitBuffer(maskBuf_[m], RoundUpTo(w / 8, 32));
    pipe->InitBuffer(partBuf_, RoundUpTo(w / kRepeatLanes * 4, 32));
    pipe->InitBuffer(part2Buf_, RoundUpTo((w / kRepeatLanes / kRepeatLanes + 1) * 4, 32));
    hi_ = hiBuf_.Get<float>();
    lo_ = loBuf_.Get<float>();
    ones_ = onesBuf_.Get<float>();
    Duplicate(ones_, 1.0f, static_cast<int32_t>(w));
  }

  __aicore__ inline void Process() {
    for (uint64_t r = 0; r < range_.length; ++r) Row(range_.start + r);
  }

 private:
  static constexpr uint32_t kMasks = 5;
  enum MaskSlot : uint32_t { kNotNaN = 0, kNegative = 1, kTaken = 2, kTie = 3, kAux = 4 };

  __aicore__ inline LocalTensor<uint8_t> Mask(uint32_t slot) { return maskBuf_[slot].Get<uint8_t>(); }

  __aicore__ inline uint64_t Field(uint64_t row, uint32_t field) {
    return static_cast<uint64_t>(rowGm_.GetValue(row * amct_stem::kRowFields + field));
  }

  // Mask(dst) &= Mask(src) over `lanes` mask bits.
  __aicore__ inline void AndMask(uint32_t dst, uint32_t src, uint32_t lanes) {
    And(Mask(dst).ReinterpretCast<uint16_t>(), Mask(dst).ReinterpretCast<uint16_t>(),
        Mask(src).ReinterpretCast<uint16_t>(), static_cast<int32_t>(lanes / 16));
  }

  // s = f32(f32(dot * 2^-6) + vbias) over `lanes` lanes. Mask(kNotNaN) marks the real lanes
  // (j < n) whose dot, vbias and s are not NaN; the others are zeroed before the arithmetic
  // (pads arrive as zeros), so no NaN enters a vector operation.
  __aicore__ inline void Scores(const LocalTensor<float>& s, const LocalTensor<float>& bias, uint64_t dotsOff,
                                uint64_t biasOff, uint32_t n, uint32_t lanes) {
    const uint32_t n8 = RoundUpTo(n, 8);
    const uint8_t pad = static_cast<uint8_t>(n8 - n);
    DataCopyPad(s, dotsGm_[dotsOff], DataCopyExtParams(1, n * 4, 0, 0, 0),
                DataCopyPadExtParams<float>(true, 0, pad, 0.0f));
    DataCopyPad(bias, biasGm_[biasOff], DataCopyExtParams(1, n * 4, 0, 0, 0),
                DataCopyPadExtParams<float>(true, 0, pad, 0.0f));
    dotsQue_.EnQue(s);
    biasQue_.EnQue(bias);
    LocalTensor<float> sv = dotsQue_.DeQue<float>();
    LocalTensor<float> bv = biasQue_.DeQue<float>();
    if (lanes > n8) {
      Duplicate(sv[n8], 0.0f, static_cast<int32_t>(lanes - n8));
      Duplicate(bv[n8], 0.0f, static_cast<int32_t>(lanes - n8));
    }
    CreateVecIndex(lo_, 0.0f, lanes);  // lo_ is free until Keys
    Compares(Mask(kNotNaN), lo_, static_cast<float>(n), CMPMODE::LT, lanes);
    Compare(Mask(kAux), sv, sv, CMPMODE::EQ, lanes);
    AndMask(kNotNaN, kAux, lanes);
    Compare(Mask(kAux), bv, bv, CMPMODE::EQ, lanes);
    AndMask(kNotNaN, kAux, lanes);
    Select(sv, Mask(kNotNaN), sv, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
    Select(bv, Mask(kNotNaN), bv, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
    Muls(sv, sv, kScale, static_cast<int32_t>(lanes));
    Add(sv, sv, bv, static_cast<int32_t>(lanes));
    Compare(Mask(kAux), sv, sv, CMPMODE::EQ, lanes);  // +Inf + -Inf
    AndMask(kNotNaN, kAux, lanes);
    Select(sv, Mask(kNotNaN), sv, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
    if (t_.precision == 2) RoundToBf16(sv, lanes);
  }

  // s rounded to bf16 (RNE) in place by integer steps on its bits: bits + 0x7FFF + bit 16, then
  // the low 16 bits cleared (a carry into the exponent is the rounding up; overflow gives Inf,
  // Inf stays Inf). No lane is NaN here, so no int32 addition overflows.
  __aicore__ inline void RoundToBf16(const LocalTensor<float>& s, uint32_t lanes) {
    const int32_t cnt = static_cast<int32_t>(lanes);
    LocalTensor<uint32_t> bits = s.ReinterpretCast<uint32_t>();
    LocalTensor<uint32_t> lsb = hi_.ReinterpretCast<uint32_t>();  // hi_ is free until Keys
    ShiftRight(lsb, bits, uint32_t(16), cnt);
    ShiftLeft(lsb, lsb, uint32_t(31), cnt);
    ShiftRight(lsb, lsb, uint32_t(31), cnt);
    Add(s.ReinterpretCast<int32_t>(), s.ReinterpretCast<int32_t>(), hi_.ReinterpretCast<int32_t>(), cnt);
    Adds(s.ReinterpretCast<int32_t>(), s.ReinterpretCast<int32_t>(), int32_t(0x7FFF), cnt);
    ShiftRight(bits, bits, uint32_t(16), cnt);
    ShiftLeft(bits, bits, uint32_t(16), cnt);
  }

  // hi_ = the high half of the signed key of s (see the file comment); s is kept. With r = the
  // fp32 bits of s shifted right by 16 (arithmetic): hi = r for a clear sign bit, and
  // ~(|bits| >> 16) = -r - 32769 for a set one (-0.0 gives -1, below +0.0's 0).
  __aicore__ inline void Keys(const LocalTensor<float>& s, uint32_t lanes) {
    const int32_t cnt = static_cast<int32_t>(lanes);
    LocalTensor<int32_t> loI = lo_.ReinterpretCast<int32_t>();
    ShiftRight(loI, s.ReinterpretCast<int32_t>(), int32_t(16), cnt);
    Cast(hi_, loI, RoundMode::CAST_NONE, lanes);  // r, exact
    Compares(Mask(kNegative), hi_, 0.0f, CMPMODE::LT, lanes);
    Muls(lo_, hi_, -1.0f, cnt);
    Adds(lo_, lo_, -32769.0f, cnt);
    Select(hi_, Mask(kNegative), lo_, hi_, SELMODE::VSEL_TENSOR_TENSOR_MODE, lanes);
    Select(hi_, Mask(kNotNaN), hi_, static_cast<float>(kHiNaN), SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
  }

  // lo_ = the low half of the key of s (only needed when the K-th key's hi bucket is split): the
  // low 16 bits w of the fp32 bits for a clear sign bit, 65535 - w for a set one; 0 for NaN.
  __aicore__ inline void LowKeys(const LocalTensor<float>& s, const LocalTensor<float>& flipped, uint32_t lanes) {
    const int32_t cnt = static_cast<int32_t>(lanes);
    LocalTensor<uint32_t> loU = lo_.ReinterpretCast<uint32_t>();
    ShiftLeft(loU, s.ReinterpretCast<uint32_t>(), uint32_t(16), cnt);
    ShiftRight(loU, loU, uint32_t(16), cnt);
    Cast(lo_, lo_.ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, lanes);  // w, exact
    Compares(Mask(kNegative), hi_, 0.0f, CMPMODE::LT, lanes);  // the sign bit (NaN: see below)
    Muls(flipped, lo_, -1.0f, cnt);
    Adds(flipped, flipped, 65535.0f, cnt);
    Select(lo_, Mask(kNegative), flipped, lo_, SELMODE::VSEL_TENSOR_TENSOR_MODE, lanes);
    Select(lo_, Mask(kNotNaN), lo_, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
  }

  // Sum of x[0, lanes) for 0/1 values (exact in fp32): one WholeReduceSum per repeat, then per 64 repeats.
  __aicore__ inline uint32_t Sum(const LocalTensor<float>& x, uint32_t lanes) {
    LocalTensor<float> part = partBuf_.Get<float>();
    LocalTensor<float> part2 = part2Buf_.Get<float>();
    const uint32_t repeats = lanes / kRepeatLanes;
    ReduceEachRepeat<Reduce::kSum>(part, x, static_cast<int32_t>(kRepeatLanes), static_cast<int32_t>(repeats), 1, 1, 8);
    if (repeats <= kScalarSumRepeats) {  // a few partial sums: the scalar unit adds them
      WaitForPipe<HardEvent::V_S>();
      float total = 0.0f;
      for (uint32_t r = 0; r < repeats; ++r) total += part.GetValue(r);
      WaitForPipe<HardEvent::S_V>();
      return static_cast<uint32_t>(total);
    }
    const uint32_t full = repeats / kRepeatLanes;
    const uint32_t rest = repeats % kRepeatLanes;
    if (full > 0) {
      ReduceEachRepeat<Reduce::kSum>(part2, part, static_cast<int32_t>(kRepeatLanes), static_cast<int32_t>(full), 1, 1, 8);
    }
    if (rest > 0) {
      ReduceEachRepeat<Reduce::kSum>(part2[full], part[full * kRepeatLanes], static_cast<int32_t>(rest), 1, 1, 1, 8);
    }
    WaitForPipe<HardEvent::V_S>();
    float total = 0.0f;
    for (uint32_t i = 0; i < full + (rest > 0 ? 1u : 0u); ++i) total += part2.GetValue(i);
    WaitForPipe<HardEvent::S_V>();
    return static_cast<uint32_t>(total);
  }

  // Lanes of v that are >= t.
  __aicore__ inline uint32_t CountAtLeast(const LocalTensor<float>& v, const LocalTensor<float>& scratch, int32_t t,
                                          uint32_t lanes) {
    Compares(Mask(kAux), v, static_cast<float>(t), CMPMODE::GE, lanes);
    if (lanes <= kScalarCountLanes) {
      WaitForPipe<HardEvent::V_S>();
      LocalTensor<uint32_t> words = Mask(kAux).ReinterpretCast<uint32_t>();
      uint32_t count = 0;
      for (uint32_t w = 0; w < lanes / 32; ++w) count += PopCount(words.GetValue(w));
      WaitForPipe<HardEvent::S_V>();
      return count;
    }
    Select(scratch, Mask(kAux), ones_, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
    return Sum(scratch, lanes);
  }

  // The largest t in [lo, top] with count(v >= t) >= need, given count(v >= lo) = atLeast >= need
  // over the real lanes. Values are integers in fp32; lanes j >= n never count.
  __aicore__ inline Kth Rank(const LocalTensor<float>& v, const LocalTensor<float>& scratch, int32_t lo, int32_t top,
                             uint32_t need, uint32_t atLeast, uint32_t n, uint32_t lanes) {
    int32_t hi = top;
    uint32_t above = 0;  // count(v >= hi + 1): nothing lies above top
    bool interpolate = false;
    while (lo < hi) {
      if (atLeast - above <= kScalarFinish) return Finish(v, lo, hi, need, above, n, lanes);
      // Bisection and interpolation alternate: the count falls from atLeast at lo to above at
      // hi + 1; interpolation guesses where it crosses need (fast on dense value ranges),
      // bisection bounds the worst case at twice its 16 steps.
      int32_t mid = lo + (hi - lo + 1) / 2;
      if (interpolate) {
        const float span = static_cast<float>(hi - lo + 1);
        const float frac = static_cast<float>(atLeast - need) / static_cast<float>(atLeast - above);
        const int32_t guess = lo + static_cast<int32_t>(span * frac);
        mid = guess <= lo ? lo + 1 : (guess > hi ? hi : guess);
      }
      interpolate = !interpolate;
      const uint32_t c = CountAtLeast(v, scratch, mid, lanes);
      if (c >= need) {
        lo = mid;
        atLeast = c;
      } else {
        hi = mid - 1;
        above = c;
      }
    }
    return Kth{lo, above, atLeast};
  }

  // The few real lanes with lo <= v <= hi, read by the scalar unit: the (need - above)-th
  // largest of their values is the threshold.
  __aicore__ inline Kth Finish(const LocalTensor<float>& v, int32_t lo, int32_t hi, uint32_t need, uint32_t above,
                               uint32_t n, uint32_t lanes) {
    Compares(Mask(kAux), v, static_cast<float>(lo), CMPMODE::GE, lanes);
    Compares(Mask(kNegative), v, static_cast<float>(hi), CMPMODE::LE, lanes);  // kNegative is free after Keys
    const int32_t words16 = static_cast<int32_t>(lanes / 16);
    And(Mask(kAux).ReinterpretCast<uint16_t>(), Mask(kAux).ReinterpretCast<uint16_t>(),
        Mask(kNegative).ReinterpretCast<uint16_t>(), words16);
    WaitForPipe<HardEvent::V_S>();
    float vals[kScalarFinish];
    uint32_t m = 0;
    LocalTensor<uint32_t> bits = Mask(kAux).ReinterpretCast<uint32_t>();
    for (uint32_t w = 0; w < lanes / 32 && m < kScalarFinish; ++w) {
      uint32_t word = bits.GetValue(w);
      while (word != 0 && m < kScalarFinish) {
        const uint32_t j = w * 32 + LowestBit(word);
        word &= word - 1u;
        if (j >= n) continue;
        const float x = v.GetValue(j);  // insertion, descending
        uint32_t at = m++;
        while (at > 0 && vals[at - 1] < x) {
          vals[at] = vals[at - 1];
          --at;
        }
        vals[at] = x;
      }
    }
    WaitForPipe<HardEvent::S_V>();
    const float t = vals[need - above - 1];
    uint32_t greater = 0, equal = 0;
    for (uint32_t k = 0; k < m; ++k) {
      greater += vals[k] > t ? 1u : 0u;
      equal += vals[k] == t ? 1u : 0u;
    }
    return Kth{static_cast<int32_t>(t), above + greater, above + greater + equal};
  }

  // Writes into kTaken (and kTie with `ties` lanes to take in index order) the K chosen lanes.
  // Returns the tie count to take from kTie (0: kTaken alone is the answer).
  __aicore__ inline uint32_t Choose(const LocalTensor<float>& s, const LocalTensor<float>& scratch, uint32_t n,
                                    uint32_t K, uint32_t lanes) {
    // count(hi >= -32768) = n real lanes >= K: the lower end needs no count.
    const Kth h = Rank(hi_, scratch, kHiNaN, kHiTop, K, n, n, lanes);
    const uint32_t need = K - h.above;  // lanes still to take from the bucket hi == h.threshold
    const float th = static_cast<float>(h.threshold);
    if (h.atLeast == K) {  // the whole bucket is taken (pads, hi = -32768, are never in it: j < n)
      Compares(Mask(kTaken), hi_, th, CMPMODE::GE, lanes);
      return 0;
    }
    Compares(Mask(kTaken), hi_, th, CMPMODE::GT, lanes);
    Compares(Mask(kTie), hi_, th, CMPMODE::EQ, lanes);
    if (t_.precision == 2) return need;  // bf16 keys: lo is the same for the whole bucket
    // The bucket's lo halves, -1 elsewhere (NaN and pad lanes all have lo = 0).
    LowKeys(s, scratch, lanes);
    LocalTensor<float> bucket = lo_;
    Select(bucket, Mask(kTie), lo_, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
    const Kth l = Rank(bucket, scratch, 0, kLoTop, need, h.atLeast - h.above, n, lanes);
    const float tl = static_cast<float>(l.threshold);
    Compares(Mask(kAux), bucket, tl, CMPMODE::GT, lanes);
    Or(Mask(kTaken).ReinterpretCast<uint16_t>(), Mask(kTaken).ReinterpretCast<uint16_t>(),
       Mask(kAux).ReinterpretCast<uint16_t>(), static_cast<int32_t>(lanes / 16));
    Compares(Mask(kTie), bucket, tl, CMPMODE::EQ, lanes);
    return need - l.above;
  }

  // Appends kSink + j for the chosen lanes j < n in ascending order, at most up to position
  // `end`; returns the new position.
  __aicore__ inline uint32_t Emit(const LocalTensor<int32_t>& o, uint32_t pos, uint32_t end, uint32_t n,
                                  uint32_t ties, uint32_t lanes) {
    LocalTensor<uint32_t> taken = Mask(kTaken).ReinterpretCast<uint32_t>();
    LocalTensor<uint32_t> tie = Mask(kTie).ReinterpretCast<uint32_t>();
    for (uint32_t w = 0; w < lanes / 32; ++w) {
      uint32_t word = taken.GetValue(w);
      if (ties > 0) {
        uint32_t t = tie.GetValue(w);
        while (t != 0 && ties > 0) {
          const uint32_t low = t & (~t + 1u);
          word |= low;
          t ^= low;
          --ties;
        }
      }
      while (word != 0) {
        const uint32_t j = w * 32 + LowestBit(word);
        if (j < n && pos < end) o.SetValue(pos++, static_cast<int32_t>(amct_stem::kSink + j));
        word &= word - 1u;
      }
    }
    return pos;
  }

  // The row table is trusted for values, not for bounds: a row's candidates are capped at the
  // UB capacity, K at the candidates, kMaxK and the output row (kSink + K + kWindow elements).
  // A row that cannot hold its sink and window blocks is skipped.
  __aicore__ inline void Row(uint64_t row) {
    const uint64_t rawN = Field(row, amct_stem::kCandidates);
    const uint64_t rawK = Field(row, amct_stem::kTopK);
    const uint32_t n = static_cast<uint32_t>(rawN < t_.maxLanes ? rawN : t_.maxLanes);
    if (n == 0 || rawK == 0 || t_.rowLength < amct_stem::kSink + amct_stem::kWindow + 1) return;
    const uint32_t room = t_.rowLength - amct_stem::kSink - amct_stem::kWindow;
    uint32_t K = static_cast<uint32_t>(rawK < amct_stem::kMaxK ? rawK : amct_stem::kMaxK);
    K = K < n ? K : n;
    K = K < room ? K : room;
    const uint32_t lanes = RoundUpTo(n, kRepeatLanes);
    LocalTensor<float> s = dotsQue_.AllocTensor<float>();
    LocalTensor<float> bias = biasQue_.AllocTensor<float>();
    Scores(s, bias, Field(row, amct_stem::kDotsOffset), Field(row, amct_stem::kBiasOffset), n, lanes);
    Keys(s, lanes);
    const uint32_t ties = Choose(s, bias, n, K, lanes);  // bias is free: scratch
    LocalTensor<int32_t> o = outQue_.AllocTensor<int32_t>();
    WaitForPipe<HardEvent::V_S>();     // the masks Emit reads
    WaitForPipe<HardEvent::MTE3_S>();  // the previous row's output DMA has read o
    for (uint32_t c = 0; c < amct_stem::kSink; ++c) o.SetValue(c, static_cast<int32_t>(c));
    uint32_t pos = Emit(o, amct_stem::kSink, amct_stem::kSink + K, n, ties, lanes);
    const uint32_t windowStart = n + amct_stem::kSink;  // vis - 4 with vis = n + 8
    for (uint32_t c = 0; c < amct_stem::kWindow; ++c) o.SetValue(pos + c, static_cast<int32_t>(windowStart + c));
    pos += amct_stem::kWindow;
    WaitForPipe<HardEvent::S_MTE3>();  // o was written by the scalar unit
    WaitForPipe<HardEvent::S_V>();     // the next row's vector ops overwrite the masks
    outQue_.EnQue(o);
    LocalTensor<int32_t> ov = outQue_.DeQue<int32_t>();
    DataCopyPad(outGm_[Field(row, amct_stem::kOutOffset)], ov, DataCopyExtParams(1, pos * 4, 0, 0, 0));
    outQue_.FreeTensor(ov);
    dotsQue_.FreeTensor(s);
    biasQue_.FreeTensor(bias);
  }

  StemTiling t_;
  amct_kernel::BlockRange range_;
  GlobalTensor<float> dotsGm_;
  GlobalTensor<float> biasGm_;
  GlobalTensor<int64_t> rowGm_;
  GlobalTensor<int32_t> outGm_;
  TQue<TPosition::VECIN, 1> dotsQue_;
  TQue<TPosition::VECIN, 1> biasQue_;
  TQue<TPosition::VECOUT, 1> outQue_;
  TBuf<TPosition::VECCALC> hiBuf_;
  TBuf<TPosition::VECCALC> loBuf_;
  TBuf<TPosition::VECCALC> onesBuf_;
  TBuf<TPosition::VECCALC> maskBuf_[kMasks];
  TBuf<TPosition::VECCALC> partBuf_;
  TBuf<TPosition::VECCALC> part2Buf_;
  LocalTensor<float> hi_;
  LocalTensor<float> lo_;
  LocalTensor<float> ones_;
};

}  // namespace

extern "C" __global__ __vector__ void amct_stem_indexer_kernel(GM_ADDR dots, GM_ADDR vbias, GM_ADDR rows, GM_ADDR out,
                                                               GM_ADDR tiling) {
  StemTiling t = amct_kernel::LoadTiling<StemTiling>(tiling);
  TPipe pipe;
  StemSelector op;
  op.Init(dots, vbias, rows, out, t, &pipe);
  op.Process();
}

extern "C" void amct_stem_indexer_launch(uint32_t blockDim, void* stream, uint8_t* dots, uint8_t* vbias, uint8_t* rows,
                                         uint8_t* out, uint8_t* tiling) {
#if defined(AMCT_KERNEL_SIM)
  (void)stream;
  amct_sim::Launch("amct_stem_indexer_kernel", blockDim, [=] { amct_stem_indexer_kernel(dots, vbias, rows, out, tiling); });
#else
  amct_stem_indexer_kernel<<<blockDim, nullptr, stream>>>(dots, vbias, rows, out, tiling);
#endif
}
