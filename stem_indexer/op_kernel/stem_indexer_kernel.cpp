// stem_indexer: npu_stem_indexer (docs/stem_indexer.md §4-§6) as one AscendC kernel driven by the
// metadata plan. Compiled by bisheng for dav-3510 and, on every machine, by g++ against the kernel
// sim (the private op _npu_stem_indexer_emulated).
//
// Work split: the metadata (§6) assigns (bn2, m) tiles of 64 group-major rows r = g * Qb + s1 to
// 36 cost-balanced slots; with A cube cores (MIX 1:2: the AIC and its two AIVs), core a takes the
// slot units [36a / A, 36(a + 1) / A), cutting a slot at tile boundaries by the §6 cost (Section),
// so that 32 cores do not run 36 slots as 4 cores running two (a section of fewer tiles than slots:
// slot c on core c % A). A section within one batch is instead cut over all its slots by the
// kernel's own tile measure (OwnTileCost: score chunks per vector core, Top-K and short rows),
// which the §6 cost, blind to short rows, balances worse. The core's two vector blocks take the first ceil(rows / 2) rows of each
// tile and the rest, or, for a tile of at most groupRows rows, the whole tile in turn. Records outside the grid (bn2 >= B * Nk, m >= Mt)
// are skipped, so a foreign plan cannot make the kernel leave its outputs' rows.
//
// The kernel reads the lengths itself (no host round trip): Qb, Kb (clamped to maxQb, maxKb), P,
// then per row vis, K (§5, the fused step emulated exactly in integers) and the path. The host
// fills sparse_indices with -1 and sparse_seq_len with 0 (device fills, no lengths needed); the
// kernel writes the prefix and L of every row of its tiles: 0..vis-1 on short rows, [0..3] ++
// ascending(TopK) ++ [vis-4 .. vis-1] on Top-K rows, never more than min(maxKb, K' + 8) elements.
//
// Top-K rows, in groups of up to groupRows (<= 32: half a 64-row tile) rows of one tile whose qflat rows lie at one
// stride (a group ends where the stride would change):
//   1. The scores come from the kernel's own AIC program (basic cube API, no Matmul object, no
//      GM score buffer). The AIC walks the same plan and tiles as its two AIVs and forms the same
//      groups (ShareOf, HalfOf, NextGroup: every role computes the same sequence); group i of
//      AIV0's half and group i of AIV1's go into L1 at rows 0 and R (R = the larger count), and
//      per 256-block chunk of their visible range the chunk's key rows come into L1 in K slices
//      (256 keys x 256, double-buffered), through L0A/L0B (64 of K per load, double-buffered) to
//      Mmads accumulating in L0C in order d = 0..2047 (the CPU op's order: the same dots); one
//      Fixpipe (dualDstCtl 1: rows [0, R) to AIV0, [R, 2R) to AIV1) writes both AIVs' next score
//      slot. A group without a partner (the halves' group or chunk counts differ, or a tile of at
//      most groupRows rows goes whole to one AIV, the AIVs alternating) goes to its AIV alone
//      (dualDstCtl 0), as do both halves when the AIVs' next slots differ. Each AIV has 2 slots
//      of groupRows x 256 fp32 at UB offset 0; mode-4 cross-core flags hand them over (AIC ->
//      AIV "ready" after the Fixpipe, AIV -> AIC "free" after its last read), so the cube runs
//      up to 2 chunks ahead of each AIV; vbias is DMA'd beside it. The lanes outside a row's
//      candidates [4, vis - 4) (ChunkRange: a Duplicate per run of rows the chunk lies inside or
//      outside of, a Compares per row whose window starts in it) and the lanes with a NaN dot or
//      vbias are masked and zeroed before
//      any arithmetic; then s = f32(f32(dot * 2^-6)
//      + vbias) (Muls, Add) for all rows of the group at once; an inf - inf sum is masked again;
//      the masked lanes get the bits 0xFFFE0000 (candidates with a NaN) or 0x7FFF0000 (the
//      others: not candidates) by an int32 Select, so that a row needs only its scores in UB (4
//      bytes per key block, rowLanes >= maxKb) and no masks; precision 2 then rounds s to bf16
//      (RNE) by integer steps on its bits, which keep both patterns. s is exact (IEEE, subnormals included) whether
//      or not the vector unit flushes subnormals (dav-3510 does): a chunk with a dot or vbias of
//      magnitude in (0, 2^-54) is scored by amct_kernel::ScaleAddExact (amct_exact_sum.h: the
//      tiny lanes in units of 2^64 and integer bit steps, never a subnormal in a float
//      operation), the others by the plain Muls / Add, exact there in every mode.
//   2. The §4.1 key as a signed int32 split into hi = key >> 16 and lo = key & 0xFFFF, both exact
//      in fp32, so fp32 compares order them exactly: a radix select on two 16-bit digits, MSB
//      first. A NaN score gets hi = -32767, below -inf's -32641 (the lowest key, as in §4.1);
//      lanes that are not candidates get 32767, above +inf's 32640, so that every count holds
//      them all (lanes - n: the search counts from there) and the chosen mask (hi above the K-th
//      key's digit) takes them with the Top-K lanes, ready for the emission. hi is built from the
//      row's scores when the row is selected, or, where the UB holds a second row of keys
//      (tiling nextKeys), one vector step at a time while the scalar unit reads the previous
//      row's counts (NextKeySteps), followed there by the row's first count (step 3) at the
//      probe the hint gave then: the 0xFFFE0000 lanes give -32767, the 0x7FFF0000
//      lanes 32767, with no candidate mask.
//   3. Per row, the K-th key: the cumulative histogram of the hi digit (count of hi >= t, a
//      Compares, a Select of ones and the vector unit's sums, in half on rows of <= 2048 lanes,
//      exact there, else in fp32) searched from the previous rows' hi thresholds (the rows of a
//      group score the same keys: their thresholds scatter around one level; the first row
//      within its digit range, a vector min and max): a probe at their running mean (in score
//      value: each row weighs half), then probes where the score density (lanes per unit of
//      score value: the previous row's for the first jump, then the secant of the last two
//      probes) puts the crossing, each at least 1, 2, 4 ... digits on, until the count crosses
//      K, then bisection alternating with interpolation (in score values), ended by a scalar
//      pass over the values of at most 16 lanes, compacted by GatherMask (on rows of > 256
//      lanes spanning at least 3 digits); then, only when the K-th key's hi bucket is split, the
//      same on the lo digit
//      within that bucket (from its
//      digit range). Equal keys are taken in index order (the smaller index first) by a scalar
//      pass over the tie mask words.
//   4. The chosen lanes and the lanes that are not candidates (the sink lanes 0..3, the window
//      lanes vis-4..vis-1 and the lanes from vis on: their digit kHiNone lies above the K-th
//      key's) form one mask; one GatherMask over the row (each 64-lane repeat's pattern spread
//      into its own 32-B slot by one Gather) compacts an index ramp by it, so the prefix is
//      ascending by construction; its first K + 8 indices (the sink, the K chosen, the window:
//      the lanes from vis on come after them) go to the row in one DMA, and L comes from a ring
//      of 32 slots, so the scalar unit waits for those DMAs once per 32 rows.
// Every scalar <-> pipe ordering is an explicit flag (WaitForPipe): the kernel does not rely on
// bisheng's auto-sync.
#include "kernel_operator.h"
#include "amct_kernel_common.h"
#include "amct_exact_sum.h"
#include "stem_indexer_tiling.h"

using namespace AscendC;

namespace {

using amct_stem::StemTiling;
using amct_kernel::Reduce;
using amct_kernel::ReduceEachRepeat;
using amct_kernel::WaitForPipe;

constexpr float kScale = 0.015625f;         // 2^-6: exact scaling
constexpr int32_t kHiNaN = -32767;          // hi digit given to a NaN score: the lowest key
constexpr int32_t kHiNone = 32767;          // hi digit of a lane that is not a candidate: above every key
constexpr int32_t kNotCandidateBits = 0x7FFF0000;  // the score bits giving kHiNone (a NaN pattern no score has)
constexpr int32_t kHiTop = 32640;           // hi half of +inf's key: nothing is above
constexpr int32_t kLoTop = 65535;
constexpr uint32_t kRepeatLanes = 64;       // fp32 lanes per repeat
constexpr uint32_t kChunk = amct_stem::kChunk;
constexpr uint64_t kDim = amct_stem::kDim;   // elements of a qflat / kflat row
// The AIC -> AIV "score slot ready" and AIV -> AIC "score slot free" cross-core flags (mode 4:
// the AIC sets f for AIV0, f + 16 for AIV1; AIV s's f reaches the AIC as f + 16 * s).
constexpr uint16_t kReadyFlag = 0;
constexpr uint16_t kFreeFlag = 1;
constexpr uint16_t kAivFlagStride = 16;
constexpr uint32_t kScoreSlots = 2;    // score slots per AIV (the AIC runs up to 2 deliveries ahead)
constexpr uint32_t kKSlice = 256;      // key elements per B slice in L1 (256 keys x 256: 128 KB)
constexpr uint32_t kL0K = 64;          // elements of K per L0A/L0B load and Mmad
constexpr uint32_t kMaxCubeRows = 2 * amct_stem::kMaxGroupRows;  // M of a group pair
// Fixpipe L0C -> UB, NZ2ND: the AIVs' row-major score slots.
constexpr FixpipeConfig kScoresToUb = {CO2Layout::ROW_MAJOR, true};

__aicore__ inline uint32_t RoundUpTo(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }
__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }

// ND2NZ of one matrix: `rows` rows of `d` elements from GM rows kDim apart into L1 Z columns of
// `c0Stride` rows (the L1 matrix's row count rounded up to 16), rows consecutive within a column.
__aicore__ inline Nd2NzParams OneMatrixNd2Nz(uint32_t rows, uint32_t d, uint32_t c0Stride) {
  return Nd2NzParams(1, static_cast<uint16_t>(rows), d, 0, kDim, static_cast<uint16_t>(c0Stride), 1, 0);
}
__aicore__ inline int64_t BlocksOf(int64_t tokens) { return tokens <= 0 ? 0 : (tokens + 127) / 128; }

// Inserts x into sorted[0, count), kept descending (the scalar passes over at most 16 values).
template <typename T>
__aicore__ inline void InsertDescending(T* sorted, uint32_t count, T x) {
  uint32_t at = count;
  while (at > 0 && sorted[at - 1] < x) {
    sorted[at] = sorted[at - 1];
    --at;
  }
  sorted[at] = x;
}

// Index of the highest set bit of x != 0.
__aicore__ inline uint32_t HighestBit(uint64_t x) {
  uint32_t n = 0;
  for (uint32_t step = 32; step > 0; step >>= 1) {
    if ((x >> step) != 0) { x >>= step; n += step; }
  }
  return n;
}

__aicore__ inline uint32_t FloatBits(float f) {
  union { float f; uint32_t u; } v;
  v.f = f;
  return v.u;
}

__aicore__ inline float BitsFloat(uint32_t u) {
  union { uint32_t u; float f; } v;
  v.u = u;
  return v.f;
}

// ---- the Top-K budget (§5) on the scalar unit -------------------------------------------------

// floor(fl(t * d + ks)) for finite t in [0, 1], d <= 0 and an integer ks in [0, 2^23): the
// single-rounding step of §5 without relying on a scalar FMA. The product is exact in 48 bits; the
// sum is formed in fixed point with 40 fraction bits and a sticky bit for what lies below, then
// rounded to 24 significant bits, nearest even. Returns 0 when the rounded value is below 1.
__aicore__ inline int64_t FloorOfFusedStep(float t, float d, int64_t ks) {
  constexpr int32_t kFraction = 40;
  const uint32_t tb = FloatBits(t), db = FloatBits(d);
  const uint32_t te = (tb >> 23) & 0xFFu, de = (db >> 23) & 0xFFu;
  const uint64_t tm = (tb & 0x7FFFFFu) | (te != 0 ? 0x800000u : 0u);
  const uint64_t dm = (db & 0x7FFFFFu) | (de != 0 ? 0x800000u : 0u);
  const uint64_t product = tm * dm;  // |t * d| = product * 2^e
  const int32_t e = (te != 0 ? static_cast<int32_t>(te) : 1) + (de != 0 ? static_cast<int32_t>(de) : 1) - 300;
  uint64_t a = 0;
  bool sticky = false;
  const int32_t shift = e + kFraction;
  if (product == 0) {
    a = 0;
  } else if (shift >= 0) {
    a = product << shift;  // |t * d| <= ks < 2^23: fits
  } else if (shift > -64) {
    a = product >> (-shift);
    sticky = (product & ((uint64_t(1) << (-shift)) - 1u)) != 0;
  } else {
    sticky = true;
  }
  // The exact value lies in (x - 1, x] units of 2^-40, and is x exactly when !sticky.
  const uint64_t x = (static_cast<uint64_t>(ks) << kFraction) - a;
  if (x < (uint64_t(1) << kFraction)) return 0;  // below 1 (or rounds to at most 1.0: budget 1)
  const uint32_t top = HighestBit(x);
  const uint32_t drop = top - 23;  // >= 17 here
  const uint64_t q = x >> drop;
  const uint64_t r = x & ((uint64_t(1) << drop) - 1u);
  const uint64_t half = uint64_t(1) << (drop - 1);
  // With a sticky remainder the exact value is x - delta (0 < delta < 1): it rounds up from q
  // only when r > half, and never ties.
  const bool up = sticky ? (r > half) : (r > half || (r == half && (q & 1u) != 0));
  const uint64_t rounded = (q + (up ? 1u : 0u)) << drop;
  return static_cast<int64_t>(rounded >> kFraction);
}

__aicore__ inline int64_t KStart(int64_t P, const StemTiling& t) {
  if (P < 56) return P;
  const bool medium = P < 160;
  const float rate = medium ? t.rateMedium : t.rateLarge;
  const float bias = static_cast<float>(medium ? t.biasMedium : t.biasLarge);
  const float scaled = static_cast<float>(P) * rate;
  const float sum = scaled + bias;  // two roundings, as §5 (the sim compiles without contraction)
  return static_cast<int64_t>(sum);
}

// K of row i (§5), the cap included.
__aicore__ inline int64_t TopkBudget(int64_t P, int64_t i, int64_t Qb, int64_t Kb, const StemTiling& t) {
  const int64_t kStart = KStart(P, t);
  const int64_t p = i + Kb - Qb;
  const int64_t decay = P - kStart;
  int64_t budget = kStart;
  if (!(p < kStart || decay <= 1)) {
    const float ks = static_cast<float>(kStart);
    const float kEnd = ks * t.alpha;
    const float step = static_cast<float>(p - kStart) / static_cast<float>(decay - 1);
    const float d = kEnd - ks;  // <= 0: alpha <= 1 (S5)
    const int64_t v = FloorOfFusedStep(step, d, kStart);
    budget = v < 1 ? 1 : (v < kStart ? v : kStart);
  }
  return budget < amct_stem::kMaxK ? budget : amct_stem::kMaxK;
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
// On rows of more than kShortRowLanes lanes, a bracket ends with that scalar pass only when it
// holds at most kLongRowFinish lanes and hi - lo >= 2^kFinishSpan: the pass (one GatherMask of
// the bracket's values, then a 17-cycle scalar read of each) costs about a count at 1024 lanes,
// and a bracket of fewer digits is settled by one more count (of the values tried, these gave the
// cost model's lowest 128K estimate).
constexpr uint32_t kLongRowFinish = 16;
constexpr int32_t kFinishSpan = 1;
constexpr uint32_t kShortRowLanes = 256;
// Up to this many per-repeat sums are added by the scalar unit (no second reduction).
constexpr uint32_t kScalarSumRepeats = 2;
// Rows of at most this many lanes count a compare mask in half: a Select of half ones (half the
// repeats of fp32) and two half sums, exact as half holds every integer up to 2048 (a count of a
// row of 256 lanes so costs less than the scalar popcount of its four 64-bit mask words, 17
// cycles a read); longer rows in fp32.
constexpr uint32_t kHalfCountLanes = 2048;

// What the previous rows' hi digit searches (Rank) met: the mean of their thresholds in score
// value (DigitValue), each row weighing half, and the lanes per unit of score value the last one
// met between its first probe and its answer.
struct RankHint {
  float center = 0.0f;
  float slope = 0.0f;
  bool valid = false;
  bool hasSlope = false;
};
// The hi digit seen as a score value, for the hi search's guesses only (any probe is exact: it
// only orders the counts). In digits the scores crowd toward zero (an exponent range per 128
// digits, the two signs at either end of a gap of some 30000 digits), so that a step or an
// interpolation counted in digits lands far off near zero; in values the scores' density is
// smooth. DigitValue(h) is the value of the key with hi digit h and lo digit 0 (the digit
// clamped to finite values), monotone in h; ValueDigit is its inverse (a NaN or infinite value
// gives a digit the search clamps to its bracket).
constexpr int32_t kHiFiniteTop = 32639;  // the hi digit of the largest finite values
__aicore__ inline float DigitValue(int32_t h) {
  h = h > kHiFiniteTop ? kHiFiniteTop : (h < -kHiFiniteTop - 1 ? -kHiFiniteTop - 1 : h);
  return h >= 0 ? BitsFloat(static_cast<uint32_t>(h) << 16) : -BitsFloat(static_cast<uint32_t>(-h - 1) << 16);
}
__aicore__ inline int32_t ValueDigit(float x) {
  const uint32_t b = FloatBits(x);
  return (b >> 31) == 0 ? static_cast<int32_t>(b >> 16) : -static_cast<int32_t>((b & 0x7FFFFFFFu) >> 16) - 1;
}
// The gallop's probes aim this many lanes past the crossing the density predicts.
constexpr float kGallopMargin = 0.5f;

// A Top-K row of the current group.
struct GroupRow {
  uint64_t outRow;      // (b * Nq + h) * maxQb + s1: also the row's index in qflat (rows of 2048)
  uint32_t vis;
  uint32_t K;
};

// The lengths of one batch, clamped (§3: the kernel must stay in bounds whatever they are), and
// the first s1 of a Top-K row (OwnTileCost's estimate).
struct Lengths {
  int64_t Qb, Kb, P;
  int64_t firstTopk;
};

struct SlotRange {
  int64_t bn2, m, bn2End, mEnd;
};

// A cursor over rows [r, rb) of the current tile (NextGroup).
struct RowCursor {
  uint64_t r, rb;
};

// Lanes [c0, c0 + cols) of a chunk that hold candidates of a group whose widest row has visMax
// blocks (the rest are scored by no row).
__aicore__ inline uint32_t ChunkCols(uint32_t c0, uint32_t visMax) {
  const uint32_t candEnd = visMax > amct_stem::kWindow ? visMax - amct_stem::kWindow : 0u;
  return candEnd > c0 ? Min(candEnd - c0, kChunk) : 0u;
}

// The chunks of such a group that the AIC scores (cols > 0): the AIC delivers, the AIV waits for, these.
__aicore__ inline uint32_t ScoredChunks(uint32_t visMax) {
  const uint32_t candEnd = visMax > amct_stem::kWindow ? visMax - amct_stem::kWindow : 0u;
  return (candEnd + kChunk - 1) / kChunk;
}

__aicore__ inline uint32_t VisMaxOf(const GroupRow* g, uint32_t count) {
  uint32_t v = 0;
  for (uint32_t q = 0; q < count; ++q) v = g[q].vis > v ? g[q].vis : v;
  return v;
}

class StemIndexer {
 public:
  __aicore__ inline void Init(GM_ADDR qflat, GM_ADDR kflat, GM_ADDR vbias, GM_ADDR qLens, GM_ADDR kvLens,
                              GM_ADDR prompt, GM_ADDR metadata, GM_ADDR indices, GM_ADDR seqLen, const StemTiling& t,
                              TPipe* pipe) {
    t_ = t;
    if (t_.groupRows < 1) t_.groupRows = 1;
    if (t_.groupRows > amct_stem::kMaxGroupRows) t_.groupRows = amct_stem::kMaxGroupRows;
    if (t_.scratchRows < 1 || t_.scratchRows > t_.groupRows) t_.scratchRows = t_.groupRows;
    qBase_ = reinterpret_cast<__gm__ bfloat16_t*>(qflat);
    kBase_ = reinterpret_cast<__gm__ bfloat16_t*>(kflat);
    biasGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(vbias));
    qLenGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(qLens));
    kvLenGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(kvLens));
    promptGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(t.promptFromKv != 0 ? kvLens : prompt));
    metaGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(metadata));
    outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices));
    seqGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(seqLen));
    if ASCEND_IS_AIC {
      cube_ = true;
      CubeInit(pipe);
      return;
    }
    const uint32_t w = t_.rowLanes;
    const uint32_t n = t_.groupRows * kChunk;
    // The score slots first: at UB offset 0, where the AIC's Fixpipe writes them (SlotOffset).
    pipe->InitBuffer(slotBuf_, kScoreSlots * n * 4);
    pipe->InitBuffer(biasQue_, 1, kChunk * 4);
    pipe->InitBuffer(chunkA_, ScratchLanes() * 4);
    pipe->InitBuffer(hiBuf_, w * 4);  // the hi digits of the row being selected
    pipe->InitBuffer(sBuf_, t_.groupRows * w * 4);
    pipe->InitBuffer(loBuf_, w * 4);
    pipe->InitBuffer(scratchBuf_, w * 4);
    pipe->InitBuffer(rampBuf_, w * 4);
    const uint32_t maskLanes = w > n ? w : n;
    const bool next = t_.nextKeys != 0;
    for (uint32_t m = 0; m < kMasks; ++m) {
      const bool nextOnly = m == kNegNext || m == kAuxNext;
      if (!nextOnly || next) pipe->InitBuffer(maskBuf_[m], (m < kChunkMasks ? maskLanes : w) / 8);
    }
    const uint32_t repeats = w / kRepeatLanes;
    if (next) {
      pipe->InitBuffer(hiNextBuf_, w * 4);
      pipe->InitBuffer(keyTmpBuf_, w * 4);
      pipe->InitBuffer(onesBuf_, w * 2);
      pipe->InitBuffer(partNextBuf_, RoundUpTo(repeats * 4, 32));
      pipe->InitBuffer(part2NextBuf_, 32);
      hiNext_ = hiNextBuf_.Get<float>();
      keyTmp_ = keyTmpBuf_.Get<float>();
      Duplicate(onesBuf_.Get<half>(), half(1.0f), static_cast<int32_t>(w));
    }
    pipe->InitBuffer(partBuf_, RoundUpTo(repeats * 4, 32));
    // Every chunk row's mask with its sink lanes 0..3 clear (ChunkRange, chunk 0).
    pipe->InitBuffer(sinkMask_, n / 8);
    LocalTensor<uint16_t> sink = sinkMask_.Get<uint16_t>();
    Duplicate(sink, uint16_t(0xFFFFu), static_cast<int32_t>(n / 16));
    WaitForPipe<HardEvent::V_S>();
    for (uint32_t q = 0; q < t_.groupRows; ++q) sink.SetValue(q * (kChunk / 16), uint16_t(0xFFF0u));
    // Gather offsets that repeat one chunk row's 8 mask words for every row (Scores' vbias mask).
    pipe->InitBuffer(rowRepeat_, n / 8);
    // Offset i is 4 * (i % 8) = (i << 29) >> 27 (32-bit logical shifts).
    static_assert(kChunk / 32 == 8, "a chunk row's mask is 8 words");
    LocalTensor<uint32_t> repeatOff = rowRepeat_.Get<uint32_t>();
    CreateVecIndex(repeatOff.ReinterpretCast<int32_t>(), int32_t(0), n / 32);
    ShiftLeft(repeatOff, repeatOff, uint32_t(29), static_cast<int32_t>(n / 32));
    ShiftRight(repeatOff, repeatOff, uint32_t(27), static_cast<int32_t>(n / 32));
    pipe->InitBuffer(part2Buf_, RoundUpTo((repeats / kRepeatLanes + 1) * 4, 32));
    pipe->InitBuffer(patBuf_, repeats * 32);
    pipe->InitBuffer(patOffBuf_, repeats * 32);
    pipe->InitBuffer(seqBuf_, amct_stem::kLengthSlots * 32);
    pipe->InitBuffer(recBuf_, amct_stem::kSlots * amct_stem::kRecordWords * 4);
    hi_ = hiBuf_.Get<float>();
    s_ = sBuf_.Get<float>();
    lo_ = loBuf_.Get<float>();
    scratch_ = scratchBuf_.Get<float>();
    ramp_ = rampBuf_.Get<int32_t>();
    CreateVecIndex(ramp_, int32_t(0), w);
    // The Gather offsets that spread a row mask into one 32-B pattern slot per 64-lane repeat:
    // slot word 0 <- mask word 2r, word 1 <- 2r + 1, words 2..7 <- word 2r (unused by GatherMask).
    LocalTensor<uint32_t> off = patOffBuf_.Get<uint32_t>();
    for (uint32_t r = 0; r < repeats; ++r) {
      for (uint32_t k = 0; k < 8; ++k) off.SetValue(r * 8 + k, (2 * r + (k == 1 ? 1u : 0u)) * 4);
    }
    WaitForPipe<HardEvent::S_V>();
    WaitForPipe<HardEvent::V_MTE3>();  // the ramp, read by the short rows' DMAs
  }

  // Walks the slots of this block's cube core in every section of the plan.
  __aicore__ inline void Process() {
    const uint32_t block = static_cast<uint32_t>(GetBlockIdx());
    const uint32_t subBlocks = t_.subBlocks == 1 ? 1u : amct_stem::kSubBlocks;
    aic_ = cube_ ? block : block / subBlocks;  // the AIC's block index is its AI core's
    sub_ = cube_ ? 0u : block % subBlocks;
    split_ = subBlocks > 1;
    const uint64_t items = static_cast<uint64_t>(t_.batch) * t_.kvHeads;
    int64_t sections = metaGm_.GetValue(0);
    if (sections < 0) sections = 0;
    if (static_cast<uint64_t>(sections) > items) sections = static_cast<int64_t>(items);
    for (int64_t s = 0; s < sections; ++s) Section(s);
    if (cube_) CubeDrain();
  }

 private:
  static constexpr uint32_t kMasks = 8;
  // kNegNext and kAuxNext belong to the next row's keys and first count (NextKeySteps). The
  // chunk steps use kNotNaN, kAux and kRange over a group's chunk (n bits); the others hold one
  // row (w bits).
  enum MaskSlot : uint32_t {
    kNotNaN = 0, kAux = 1, kRange = 2, kNegative = 3, kTaken = 4, kTie = 5, kNegNext = 6, kAuxNext = 7
  };
  static constexpr uint32_t kChunkMasks = 3;  // slots below this hold n bits

  __aicore__ inline LocalTensor<uint8_t> Mask(uint32_t slot) { return maskBuf_[slot].Get<uint8_t>(); }

  // Mask(dst) op= Mask(src) over `lanes` mask bits (And, or Or when `orMasks`), at bit `first`.
  __aicore__ inline void AndMask(uint32_t dst, uint32_t src, uint32_t lanes, uint32_t dstFirst = 0,
                                 uint32_t srcFirst = 0) {
    LocalTensor<uint16_t> d = Mask(dst)[dstFirst / 8].ReinterpretCast<uint16_t>();
    And(d, d, Mask(src)[srcFirst / 8].ReinterpretCast<uint16_t>(), static_cast<int32_t>(lanes / 16));
  }
  __aicore__ inline void OrMask(uint32_t dst, uint32_t src, uint32_t lanes) {
    LocalTensor<uint16_t> d = Mask(dst).ReinterpretCast<uint16_t>();
    Or(d, d, Mask(src).ReinterpretCast<uint16_t>(), static_cast<int32_t>(lanes / 16));
  }

  __aicore__ inline int64_t Word(uint64_t index) {
    return index < t_.metadataWords ? static_cast<int64_t>(metaGm_.GetValue(index)) : 0;
  }

  __aicore__ inline Lengths LengthsOf(uint32_t b) {
    const int64_t qb = BlocksOf(qLenGm_.GetValue(b));
    const int64_t kb = BlocksOf(kvLenGm_.GetValue(b));
    const int64_t maxQb = t_.maxQb, maxKb = t_.maxKb;
    Lengths l{qb < maxQb ? qb : maxQb, kb < maxKb ? kb : maxKb, BlocksOf(promptGm_.GetValue(b)), 0};
    l.firstTopk = FirstTopkRow(l);
    return l;
  }

  // m tiles of item bn2.
  __aicore__ inline int64_t TilesOf(const Lengths& l) {
    if (l.Qb == 0 || l.Kb == 0) return 0;
    return (static_cast<int64_t>(t_.group) * l.Qb + amct_stem::kMTile - 1) / amct_stem::kMTile;
  }

  // This cube core's share of section s. The plan balances the cost of the section's tiles over
  // kSlots slots; with A cube cores, core a takes the slot units [a * kSlots / A, (a + 1) *
  // kSlots / A): the slots wholly inside, and of a slot cut by an end the tiles whose middle (by
  // the §6 cost, the plan's own measure) lies inside. So every tile goes to exactly one core, and
  // no core runs two whole slots while others run one (36 slots on 32 cores). A section of fewer
  // tiles than slots (its last record empty: it ends at (0, 0)) has one tile per used slot: slot
  // c then runs on core c mod A. A section within one batch (one set of lengths: the walks read
  // them once) is instead cut by the kernel's own measure (OwnTileCost) over all its slots.
  __aicore__ inline void Section(int64_t s) {
    const uint64_t A = t_.aicNum, S = amct_stem::kSlots;
    const uint64_t lastRec = amct_stem::kHeaderWords + amct_stem::kRecordWords * (S * s + S - 1);
    const int64_t endBn2 = Word(lastRec + 3), endM = Word(lastRec + 4);
    const int64_t previousEnd = previousEnd_;
    previousEnd_ = endBn2;
    if (endBn2 == 0 && endM == 0) {
      for (uint32_t c = aic_; c < S; c += t_.aicNum) Slot(s, c, true);
      return;
    }
    if (WithinOneBatch(s, previousEnd, endBn2, endM) && LoadRecords(s)) {
      OwnShare();
      return;
    }
    const uint64_t first = aic_ * S / A, last = ((aic_ + 1) * S - 1) / A;
    for (uint64_t k = first; k <= last && k < S; ++k) {
      const bool whole = k * A >= aic_ * S && (k + 1) * A <= (aic_ + 1) * S;
      Slot(s, static_cast<uint32_t>(k), whole);
    }
  }

  __aicore__ inline SlotRange RangeOf(int64_t s, uint32_t c) {
    const uint64_t rec = amct_stem::kHeaderWords + amct_stem::kRecordWords * (amct_stem::kSlots * s + c);
    return SlotRange{Word(rec + 0), Word(rec + 1), Word(rec + 3), Word(rec + 4)};
  }

  // Whether every tile of section s lies in one batch: from the first slot's start to the last
  // tile before the last slot's (exclusive) end (endBn2, endM). The section starts where the
  // previous one ended (the plan's sections are consecutive; in a foreign plan this only picks a
  // worse measure), so only section 0 reads its start from GM.
  __aicore__ inline bool WithinOneBatch(int64_t s, int64_t previousEnd, int64_t endBn2, int64_t endM) {
    if (endBn2 < 0 || endM < 0) return false;
    if (t_.batch == 1) return true;
    const int64_t firstBn2 =
        s > 0 ? previousEnd : Word(amct_stem::kHeaderWords + amct_stem::kRecordWords * amct_stem::kSlots * s);
    if (firstBn2 < 0) return false;
    const int64_t lastBn2 = endM > 0 ? endBn2 : endBn2 - 1;
    return lastBn2 >= firstBn2 && firstBn2 / t_.kvHeads == lastBn2 / t_.kvHeads;
  }

  // Section s's records into UB (one DMA; OwnShare reads them twice, at the scalar unit's UB
  // cost instead of a GM read each). False when the metadata is too short to hold them all.
  __aicore__ inline bool LoadRecords(int64_t s) {
    const uint32_t words = amct_stem::kRecordWords * amct_stem::kSlots;
    const uint64_t first = amct_stem::kHeaderWords + static_cast<uint64_t>(words) * s;
    if (first + words > t_.metadataWords) return false;
    if (cube_) {  // the AIC has no UB: LoadedRange reads GM
      recordsSection_ = s;
      return true;
    }
    WaitForPipe<HardEvent::S_MTE2>();  // the previous section's reads are done
    DataCopy(recBuf_.Get<int32_t>(), metaGm_[first], words);
    WaitForPipe<HardEvent::MTE2_S>();
    return true;
  }

  // Slot c's range in the records LoadRecords copied.
  __aicore__ inline SlotRange LoadedRange(uint32_t c) {
    if (cube_) return RangeOf(recordsSection_, c);
    const LocalTensor<int32_t> rec = recBuf_.Get<int32_t>()[c * amct_stem::kRecordWords];
    return SlotRange{rec.GetValue(0), rec.GetValue(1), rec.GetValue(3), rec.GetValue(4)};
  }

  // The tiles of all kSlots loaded records whose middle, by OwnTileCost over the whole section,
  // lies in this core's share [a / A, (a + 1) / A) of it. Every core sums the same costs in the
  // same order, so every tile still goes to exactly one core.
  __aicore__ inline void OwnShare() {
    SlotRange ranges[amct_stem::kSlots];
    int64_t total = 0;
    for (uint32_t c = 0; c < amct_stem::kSlots; ++c) {
      ranges[c] = LoadedRange(c);
      if (ranges[c].bn2 >= 0 && ranges[c].m >= 0) total += Walk(ranges[c], Pass::kCost, 0, 0, true);
    }
    if (total <= 0) return;
    int64_t before = 0;
    for (uint32_t c = 0; c < amct_stem::kSlots; ++c) {
      if (ranges[c].bn2 >= 0 && ranges[c].m >= 0) before += Walk(ranges[c], Pass::kRunShare, before, total, true);
    }
  }

  // The tiles of record (section s, slot c), lexicographic from its start to its (exclusive) end:
  // all of them when `whole`, else this core's part of them (Section).
  __aicore__ inline void Slot(int64_t s, uint32_t c, bool whole) {
    const SlotRange range = RangeOf(s, c);
    if (range.bn2 < 0 || range.m < 0) return;
    if (whole) {
      Walk(range, Pass::kRunAll, 0, 0, false);
      return;
    }
    const int64_t total = Walk(range, Pass::kCost, 0, 0, false);
    // Slot c's tiles lie in units [c, c + 1) of the kSlots slots: before = c * total of a grand total kSlots * total.
    if (total > 0) Walk(range, Pass::kRunShare, c * total, amct_stem::kSlots * total, false);
  }

  enum class Pass { kRunAll, kCost, kRunShare };

  // One pass over the tiles of a range: runs them all, or sums their costs (the §6 cost, or with
  // `own` OwnTileCost), or runs those whose middle (before + prefix cost + half their own, of a
  // grand total) lies in this core's share [a / A, (a + 1) / A). Returns the cost sum (0 for
  // kRunAll).
  __aicore__ inline int64_t Walk(const SlotRange& w, Pass pass, int64_t before, int64_t grand, bool own) {
    const int64_t items = static_cast<int64_t>(t_.batch) * t_.kvHeads;
    const uint64_t A = t_.aicNum, T = static_cast<uint64_t>(grand), B0 = static_cast<uint64_t>(before);
    int64_t bn2 = w.bn2, m = w.m, cost = 0;
    while (bn2 < items && (bn2 < w.bn2End || (bn2 == w.bn2End && m < w.mEnd))) {
      const uint32_t b = static_cast<uint32_t>(bn2 / t_.kvHeads);
      const Lengths l = CachedLengths(b);
      const int64_t mt = TilesOf(l);
      if (m < mt) {
        bool run = pass == Pass::kRunAll;
        if (pass != Pass::kRunAll) {
          const int64_t tc = own ? OwnTileCost(static_cast<uint64_t>(m), l) : TileCost(static_cast<uint64_t>(m), l);
          if (pass == Pass::kRunShare) {
            const uint64_t mid2 = 2 * B0 + 2 * static_cast<uint64_t>(cost) + static_cast<uint64_t>(tc);
            run = A * mid2 >= 2 * aic_ * T && A * mid2 < 2 * (aic_ + 1) * T;
          }
          cost += tc;
        }
        if (run && cube_) CubeTile(static_cast<uint32_t>(bn2), static_cast<uint32_t>(m), l);
        if (run && !cube_) Tile(static_cast<uint32_t>(bn2), static_cast<uint32_t>(m), l);
        ++m;
      }
      if (m >= mt) {
        ++bn2;
        m = 0;
      }
    }
    return cost;
  }

  // The kernel's own estimate of tile m's time on its cube core, in vector-core cycles of the
  // cost model: ~24K per score chunk request of a group (21-26K at 32K-128K causal prefill), and
  // 500 per Top-K row, 100 per short row. Unlike the §6 cost it gives a tile of short rows only
  // their row writes, and a tile's chunks per vector core: a split tile's chunks are requested by
  // both vector cores, its rows shared (the sum is twice the core's time); a tile of at most one
  // group goes whole to one of them in turn. (The rows' selection, ~1000-2000 cycles each in the
  // model's profile, weighed at 1000-2500 per row or per 64 lanes, balanced no better: 128K
  // 1039-1042 us.)
  __aicore__ inline int64_t OwnTileCost(uint64_t m, const Lengths& l) {
    constexpr int64_t kChunkCost = 24000, kRowCost = 500, kShortCost = 100;
    const uint64_t rows = static_cast<uint64_t>(t_.group) * l.Qb;
    const uint64_t r0 = m * amct_stem::kMTile;
    const uint64_t r1 = rows - r0 < amct_stem::kMTile ? rows : r0 + amct_stem::kMTile;
    const int64_t topk = TopkRowsBefore(r1, l) - TopkRowsBefore(r0, l);
    const int64_t shortRows = static_cast<int64_t>(r1 - r0) - topk;
    if (topk <= 0) return shortRows * kShortCost;
    const uint64_t qb = static_cast<uint64_t>(l.Qb);
    const uint64_t s1Max = (r1 - 1) / qb != r0 / qb ? qb - 1 : (r1 - 1) % qb;
    const int64_t vis = VisibleBlocks(static_cast<int64_t>(s1Max), l);  // the widest row
    const int64_t chunks = (vis + kChunk - 1) / kChunk;
    const bool whole = !split_ || r1 - r0 <= t_.groupRows;
    return chunks * kChunkCost * (whole ? 1 : 2) + topk * kRowCost + shortRows * kShortCost;
  }

  // Top-K rows among the group-major rows [0, r) of a batch: those with s1 >= l.firstTopk.
  __aicore__ inline int64_t TopkRowsBefore(uint64_t r, const Lengths& l) {
    const int64_t qb = l.Qb, f = l.firstTopk;
    const int64_t heads = static_cast<int64_t>(r) / qb, rest = static_cast<int64_t>(r) % qb;
    return heads * (qb - f) + (rest > f ? rest - f : 0);
  }

  // The first s1 whose row is a Top-K row (vis > K + kSink + kWindow), or Qb: vis - K does not
  // fall as s1 grows (vis grows, K does not), so a bisection finds it.
  __aicore__ inline int64_t FirstTopkRow(const Lengths& l) {
    int64_t lo = 0, hi = l.Qb;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const int64_t vis = VisibleBlocks(mid, l);
      if (vis > TopkBudget(l.P, mid, l.Qb, l.Kb, t_) + amct_stem::kSink + amct_stem::kWindow) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

  // The §6 cost of tile m (amct_stem::TileCost, the metadata's measure) from its widest row.
  __aicore__ inline int64_t TileCost(uint64_t m, const Lengths& l) {
    const uint64_t rows = static_cast<uint64_t>(t_.group) * l.Qb;
    const uint64_t r0 = m * amct_stem::kMTile;
    const uint64_t r1 = rows - r0 < amct_stem::kMTile ? rows : r0 + amct_stem::kMTile;
    // The widest row: the largest s1 of the tile (vis grows with s1).
    const uint64_t qb = static_cast<uint64_t>(l.Qb);
    const uint64_t s1Max = (r1 - 1) / qb != r0 / qb ? qb - 1 : (r1 - 1) % qb;
    const int64_t vis = VisibleBlocks(static_cast<int64_t>(s1Max), l);
    const int64_t e = vis > amct_stem::kWindow ? vis - amct_stem::kWindow : 0;
    return amct_stem::TileCost(static_cast<int64_t>(r1 - r0), e);
  }

  // LengthsOf(b), read from GM only when b changes.
  __aicore__ inline Lengths CachedLengths(uint32_t b) {
    if (!lengthsValid_ || lengthsB_ != b) {
      lengths_ = LengthsOf(b);
      lengthsB_ = b;
      lengthsValid_ = true;
    }
    return lengths_;
  }

  __aicore__ inline uint32_t VisibleBlocks(int64_t i, const Lengths& l) {
    if (t_.causal == 0) return static_cast<uint32_t>(l.Kb);
    const int64_t v = l.Kb - l.Qb + i + 1;
    return v > 0 ? static_cast<uint32_t>(v) : 0u;
  }

  // How tile m's rows are shared: rows [r0, r0 + mRows) of its item; a tile of at most one group's
  // rows (decode: G rows) goes whole to one vector block, the blocks alternating along the walk
  // (turn: every role walks the same tiles), so that the cube reads its keys once for one group;
  // larger tiles are halved: AIV0 takes the first ceil(mRows / 2) rows, AIV1 the rest.
  struct TileShare {
    uint64_t r0, mRows, firstHalf;
    bool whole;
    uint32_t turn;
  };
  __aicore__ inline TileShare ShareOf(uint32_t m, const Lengths& l) {
    const uint64_t rows = static_cast<uint64_t>(t_.group) * l.Qb;
    TileShare sh;
    sh.r0 = static_cast<uint64_t>(m) * amct_stem::kMTile;
    sh.mRows = rows - sh.r0 < amct_stem::kMTile ? rows - sh.r0 : amct_stem::kMTile;
    sh.whole = !split_ || sh.mRows <= t_.groupRows;
    sh.turn = split_ ? static_cast<uint32_t>(walked_++ % amct_stem::kSubBlocks) : 0u;
    sh.firstHalf = sh.whole ? sh.mRows : (sh.mRows + 1) / 2;
    return sh;
  }

  // Vector block `sub`'s rows of the tile (empty when a whole tile is the other's).
  __aicore__ inline RowCursor HalfOf(const TileShare& sh, uint32_t sub) {
    if (sh.whole) return sh.turn == sub ? RowCursor{sh.r0, sh.r0 + sh.mRows} : RowCursor{sh.r0, sh.r0};
    return sub == 0 ? RowCursor{sh.r0, sh.r0 + sh.firstHalf} : RowCursor{sh.r0 + sh.firstHalf, sh.r0 + sh.mRows};
  }

  // The next group of Top-K rows of item bn2 among the cursor's rows into g (its count; 0 when
  // the rows are used up). The AIV (writeShort) writes the short rows met on the way; the AIC,
  // which only scores, skips them: both form the same groups. One group's query rows lie at one
  // stride in qflat (consecutive s1 of a head: 1 row; one s1 of consecutive heads: maxQb rows), so
  // a group ends where the stride would change.
  __aicore__ inline uint32_t NextGroup(RowCursor& cur, uint32_t bn2, const Lengths& l, GroupRow* g, bool writeShort) {
    const uint32_t b = bn2 / t_.kvHeads, n = bn2 % t_.kvHeads;
    uint32_t count = 0;
    for (; cur.r < cur.rb; ++cur.r) {
      const uint64_t gi = cur.r / l.Qb, s1 = cur.r % l.Qb;
      const uint64_t h = n * t_.group + gi;
      const uint64_t outRow = (static_cast<uint64_t>(b) * t_.qHeads + h) * t_.maxQb + s1;
      const uint32_t vis = VisibleBlocks(static_cast<int64_t>(s1), l);
      if (vis == 0) continue;  // L = 0: the host's fill stands
      const int64_t K = TopkBudget(l.P, static_cast<int64_t>(s1), l.Qb, l.Kb, t_);
      if (static_cast<int64_t>(vis) <= K + amct_stem::kSink + amct_stem::kWindow) {
        if (writeShort) ShortRow(outRow, vis);
        continue;
      }
      if (count >= 2 && outRow - g[count - 1].outRow != g[1].outRow - g[0].outRow) return count;
      g[count++] = GroupRow{outRow, vis, static_cast<uint32_t>(K)};
      if (count == t_.groupRows) {
        ++cur.r;
        return count;
      }
    }
    return count;
  }

  // This block's half of the rows of tile (bn2, m): the short rows at once, the Top-K rows in
  // groups.
  __aicore__ inline void Tile(uint32_t bn2, uint32_t m, const Lengths& l) {
    const TileShare sh = ShareOf(m, l);
    RowCursor cur = HalfOf(sh, sub_);
    biasOffset_ = static_cast<uint64_t>(bn2) * t_.maxKb;  // also item bn2's first key row
    while ((count_ = NextGroup(cur, bn2, l, group_, true)) > 0) Group();
  }

  // ---- the AIC: the score matmuls of both AIVs' groups -----------------------------------------

  // L1 (512 KB): the query rows of a group pair, [64, 2048] bf16 (256 KB), and two B slices of a
  // chunk's keys, [256, 256] bf16 (128 KB each); L0A/L0B: two [M, 64] / [256, 64] loads each; L0C:
  // two [64, 256] fp32 chunk results, so that the Fixpipe of one chunk overlaps the next one's Mmads.
  __aicore__ inline void CubeInit(TPipe* pipe) {
    pipe->InitBuffer(aL1_, kMaxCubeRows * kDim * 2);
    for (uint32_t i = 0; i < 2; ++i) {
      pipe->InitBuffer(bL1_[i], kChunk * kKSlice * 2);
      pipe->InitBuffer(aL0_[i], kMaxCubeRows * kL0K * 2);
      pipe->InitBuffer(bL0_[i], kChunk * kL0K * 2);
      pipe->InitBuffer(cL0_[i], kMaxCubeRows * kChunk * 4);
    }
  }

  // Tile (bn2, m) on the AIC: the groups each AIV half forms (NextGroup, as the AIVs do), paired
  // by index: group i of AIV0's half and group i of AIV1's.
  __aicore__ inline void CubeTile(uint32_t bn2, uint32_t m, const Lengths& l) {
    const TileShare sh = ShareOf(m, l);
    RowCursor c0 = HalfOf(sh, 0), c1 = HalfOf(sh, 1);
    biasOffset_ = static_cast<uint64_t>(bn2) * t_.maxKb;
    while (true) {
      const uint32_t n0 = NextGroup(c0, bn2, l, group_, false);
      const uint32_t n1 = split_ ? NextGroup(c1, bn2, l, partner_, false) : 0u;
      if (n0 == 0 && n1 == 0) return;
      CubeJob(n0, n1);
    }
  }

  // The score chunks of group_ (n0 rows, AIV0's) and partner_ (n1 rows, AIV1's; either may be
  // empty): their query rows at L1 rows 0 and R (R = the larger count, M = 2R; a lone group at 0,
  // M = its rows), then per chunk the Mmads over K and the Fixpipe into the AIVs' score slots:
  // both halves at once (dualDstCtl 1) while both groups have the chunk, else to one AIV.
  __aicore__ inline void CubeJob(uint32_t n0, uint32_t n1) {
    const bool paired = n0 > 0 && n1 > 0;
    const uint32_t R = n0 > n1 ? n0 : n1;
    const uint32_t M = paired ? 2 * R : R;
    const uint32_t m16 = RoundUpTo(M, 16);
    const uint32_t at1 = paired ? R : 0u;  // L1 / L0C row of partner_'s first row
    if (aBusy_) WaitFlag<HardEvent::MTE1_MTE2>(kAEvent);  // the previous job's loads have read A
    if (n0 > 0) CopyQueries(group_, n0, 0, m16);
    if (n1 > 0) CopyQueries(partner_, n1, at1, m16);
    SetFlag<HardEvent::MTE2_MTE1>(kAEvent);
    WaitFlag<HardEvent::MTE2_MTE1>(kAEvent);
    const uint32_t chunks0 = n0 > 0 ? ScoredChunks(VisMaxOf(group_, n0)) : 0u;
    const uint32_t chunks1 = n1 > 0 ? ScoredChunks(VisMaxOf(partner_, n1)) : 0u;
    const uint32_t vis0 = n0 > 0 ? VisMaxOf(group_, n0) : 0u, vis1 = n1 > 0 ? VisMaxOf(partner_, n1) : 0u;
    const uint32_t chunks = chunks0 > chunks1 ? chunks0 : chunks1;
    for (uint32_t c = 0; c < chunks; ++c) {
      const uint32_t c0 = c * kChunk;
      const bool to0 = c < chunks0, to1 = c < chunks1;
      const uint32_t cols0 = to0 ? ChunkCols(c0, vis0) : 0u, cols1 = to1 ? ChunkCols(c0, vis1) : 0u;
      const uint32_t n16 = RoundUpTo(cols0 > cols1 ? cols0 : cols1, 16);
      const uint32_t cb = chunkCount_ % 2;
      ++chunkCount_;
      ChunkMatmul(c0, cols0 > cols1 ? cols0 : cols1, n16, M, m16, cb);
      SetFlag<HardEvent::M_FIX>(cb);
      WaitFlag<HardEvent::M_FIX>(cb);
      const LocalTensor<float> c0L = cL0_[cb].Get<float>();
      if (to0 && to1 && delivered_[0] % kScoreSlots == delivered_[1] % kScoreSlots) {
        Deliver(c0L, R, n16, m16, true, 0);  // rows [0, R) to AIV0, [R, 2R) to AIV1
      } else {
        // A Fixpipe of rows from row `at` of L0C: its Nz columns of m16 rows start 16 floats per row on.
        if (to0) Deliver(c0L, n0, n16, m16, false, 0);
        if (to1) Deliver(c0L[at1 * 16], n1, n16, m16, false, 1);
      }
      SetFlag<HardEvent::FIX_M>(cb);
      cBusy_[cb] = true;
    }
    SetFlag<HardEvent::MTE1_MTE2>(kAEvent);
    aBusy_ = true;
  }

  // Group g's query rows (n rows of qflat at one stride) into L1 from row `at` of an ND2NZ image of
  // m16 rows (column blocks of 16 elements, m16 rows apart): one DataCopy for consecutive rows, else
  // one per row (a source stride of maxQb rows may exceed Nd2NzParams' 16-bit srcDValue).
  __aicore__ inline void CopyQueries(const GroupRow* g, uint32_t n, uint32_t at, uint32_t m16) {
    const uint64_t step = n > 1 ? g[1].outRow - g[0].outRow : 1u;
    const uint32_t copies = step == 1 ? 1u : n;
    LocalTensor<bfloat16_t> a = aL1_.Get<bfloat16_t>();
    for (uint32_t i = 0; i < copies; ++i) {
      const uint32_t rows = step == 1 ? n : 1u;
      GlobalTensor<bfloat16_t> q;
      q.SetGlobalBuffer(qBase_ + g[i].outRow * kDim, static_cast<uint64_t>(rows) * kDim);
      DataCopy(a[(at + i) * 16], q, OneMatrixNd2Nz(rows, kDim, m16));
    }
  }

  // L0C buffer cb = the [M, n16] dots of the L1 query rows with key blocks [c0, c0 + cols) of the
  // tile's kv head, accumulated in order d = 0..2047 (K slices of kKSlice in L1, of kL0K in L0):
  // the CPU op's sum, bit for bit. Key rows [cols, n16) of the B slices hold earlier data; their
  // columns are outside every row's candidates, which the AIVs mask.
  __aicore__ inline void ChunkMatmul(uint32_t c0, uint32_t cols, uint32_t n16, uint32_t M, uint32_t m16, uint32_t cb) {
    GlobalTensor<bfloat16_t> k;
    k.SetGlobalBuffer(kBase_ + (biasOffset_ + c0) * kDim, static_cast<uint64_t>(cols) * kDim);
    const LocalTensor<bfloat16_t> a = aL1_.Get<bfloat16_t>();
    const LocalTensor<float> c = cL0_[cb].Get<float>();
    bool first = true;
    for (uint32_t d0 = 0; d0 < kDim; d0 += kKSlice) {
      const uint32_t bb = bSlices_ % 2;
      ++bSlices_;
      if (bBusy_[bb]) WaitFlag<HardEvent::MTE1_MTE2>(bb);  // its previous loads have read the slice
      const LocalTensor<bfloat16_t> bl1 = bL1_[bb].Get<bfloat16_t>();
      DataCopy(bl1, k[d0], OneMatrixNd2Nz(cols, kKSlice, n16));
      SetFlag<HardEvent::MTE2_MTE1>(bb);
      WaitFlag<HardEvent::MTE2_MTE1>(bb);
      for (uint32_t k0 = 0; k0 < kKSlice; k0 += kL0K) {
        const uint32_t lb = l0Loads_ % 2;
        ++l0Loads_;
        if (l0Busy_[lb]) WaitFlag<HardEvent::M_MTE1>(lb);  // its previous Mmad has read L0A/L0B
        const LocalTensor<bfloat16_t> al0 = aL0_[lb].Get<bfloat16_t>();
        const LocalTensor<bfloat16_t> bl0 = bL0_[lb].Get<bfloat16_t>();
        // Fractal (mi, ki) of an ND2NZ image of r16 rows lies at (ki * r16 / 16 + mi) * 512 B: the
        // Nz layout of L0A and (for B as rows) the Zn layout of L0B, copied without a transpose.
        LoadData2DParamsV2 la;
        la.mStartPosition = 0;
        la.kStartPosition = (d0 + k0) / 16;
        la.mStep = static_cast<uint16_t>(m16 / 16);
        la.kStep = kL0K / 16;
        la.srcStride = static_cast<int32_t>(m16 / 16);
        la.dstStride = static_cast<uint16_t>(m16 / 16);
        la.ifTranspose = false;
        LoadData(al0, a, la);
        LoadData2DParamsV2 lb2 = la;
        lb2.kStartPosition = k0 / 16;
        lb2.mStep = static_cast<uint16_t>(n16 / 16);
        lb2.srcStride = static_cast<int32_t>(n16 / 16);
        lb2.dstStride = static_cast<uint16_t>(n16 / 16);
        LoadData(bl0, bl1, lb2);
        SetFlag<HardEvent::MTE1_M>(lb);
        WaitFlag<HardEvent::MTE1_M>(lb);
        if (first && cBusy_[cb]) WaitFlag<HardEvent::FIX_M>(cb);  // the previous Fixpipe has read L0C
        MmadParams mp;
        mp.m = static_cast<uint16_t>(M);
        mp.n = static_cast<uint16_t>(n16);
        mp.k = kL0K;
        mp.cmatrixInitVal = first;  // the first K slice starts from +0, the others accumulate
        mp.disableGemv = true;      // M = 1 is a plain matrix too (L0A in Nz)
        // An accumulating Mmad of a small tile must wait for the previous one (Mmad.md: the
        // hardware orders only tiles of (m / 16) * (n / 16) >= 10 itself).
        if (!first && (M / 16) * (n16 / 16) < 10) PipeBarrier<PIPE_M>();
        Mmad(c, al0, bl0, mp);
        first = false;
        SetFlag<HardEvent::M_MTE1>(lb);
        l0Busy_[lb] = true;
      }
      SetFlag<HardEvent::MTE1_MTE2>(bb);
      bBusy_[bb] = true;
    }
  }

  // One Fixpipe of `rows` rows (x n16 columns) of an L0C result into the next score slot of AIV
  // `sub`, or (dual) rows [0, rows) into AIV0's and [rows, 2 rows) into AIV1's, both at one slot:
  // each target's slot must have been handed back first (after 2 deliveries), then it is told.
  __aicore__ inline void Deliver(const LocalTensor<float>& src, uint32_t rows, uint32_t n16, uint32_t m16, bool dual,
                                 uint32_t sub) {
    const uint32_t slot = delivered_[sub] % kScoreSlots;
    for (uint32_t s = 0; s < amct_stem::kSubBlocks; ++s) {
      if ((dual || s == sub) && delivered_[s] >= kScoreSlots) {
        CrossCoreWaitFlag<4, PIPE_FIX>(kFreeFlag + kAivFlagStride * s);
      }
    }
    FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp;
    fp.nSize = static_cast<uint16_t>(n16);
    fp.mSize = static_cast<uint16_t>(dual ? 2 * rows : rows);
    fp.srcStride = static_cast<uint16_t>(m16);
    fp.dstStride = kChunk;
    fp.dualDstCtl = dual ? 1 : 0;
    fp.subBlockId = sub != 0;
    const uint32_t slotElems = t_.groupRows * kChunk;
    LocalTensor<float> ub(TPosition::VECIN, slot * slotElems * 4, slotElems);
    Fixpipe<float, float, kScoresToUb>(ub, src, fp);
    for (uint32_t s = 0; s < amct_stem::kSubBlocks; ++s) {
      if (dual || s == sub) {
        CrossCoreSetFlag<4, PIPE_FIX>(kReadyFlag + kAivFlagStride * s);
        ++delivered_[s];
      }
    }
  }

  // The end of the AIC's walk: every flag it set is waited for, every slot hand-back received.
  __aicore__ inline void CubeDrain() {
    if (aBusy_) WaitFlag<HardEvent::MTE1_MTE2>(kAEvent);
    for (uint32_t i = 0; i < 2; ++i) {
      if (bBusy_[i]) WaitFlag<HardEvent::MTE1_MTE2>(i);
      if (l0Busy_[i]) WaitFlag<HardEvent::M_MTE1>(i);
      if (cBusy_[i]) WaitFlag<HardEvent::FIX_M>(i);
    }
    for (uint32_t s = 0; s < amct_stem::kSubBlocks; ++s) {
      const uint32_t pending = delivered_[s] < kScoreSlots ? delivered_[s] : kScoreSlots;
      for (uint32_t i = 0; i < pending; ++i) CrossCoreWaitFlag<4, PIPE_FIX>(kFreeFlag + kAivFlagStride * s);
    }
  }

  // L of row outRow, from its own 32-B slot of a ring of kLengthSlots: the scalar unit waits for
  // the length DMAs (MTE3_S, their latency) once per round of the ring, not once per row.
  __aicore__ inline void WriteLength(uint64_t outRow, uint32_t L) {
    LocalTensor<int32_t> v = seqBuf_.Get<int32_t>()[lengthSlot_ * 8];
    if (lengthSlot_ == 0) WaitForPipe<HardEvent::MTE3_S>();  // the previous round's DMAs have read the ring
    v.SetValue(0, static_cast<int32_t>(L));
    WaitForPipe<HardEvent::S_MTE3>();
    DataCopyPad(seqGm_[outRow], v, DataCopyExtParams(1, 4, 0, 0, 0));
    lengthSlot_ = lengthSlot_ + 1 < amct_stem::kLengthSlots ? lengthSlot_ + 1 : 0;
  }

  // A short-path row: 0..vis-1 (vis <= maxKb) from the index ramp.
  __aicore__ inline void ShortRow(uint64_t outRow, uint32_t vis) {
    const uint32_t L = Min(vis, t_.maxKb);
    DataCopyPad(outGm_[outRow * t_.maxKb], ramp_, DataCopyExtParams(1, L * 4, 0, 0, 0));
    WriteLength(outRow, L);
  }

  // ---- a group of Top-K rows -------------------------------------------------------------------

  __aicore__ inline void Group() {
    uint32_t visMax = 0;
    for (uint32_t q = 0; q < count_; ++q) visMax = group_[q].vis > visMax ? group_[q].vis : visMax;
    const uint32_t chunks = (visMax + kChunk - 1) / kChunk;  // the key buffers cover [0, vis) of every row
    for (uint32_t c = 0; c < chunks; ++c) ChunkKeys(c * kChunk, visMax);
    for (uint32_t q = 0; q < count_; ++q) SelectRow(q);
    count_ = 0;
  }

  // Scores of lanes [c0, c0 + 256) of every row of the group into s_ (row q at q * rowLanes).
  // The lanes [c0, c0 + cols) up to the widest row's candidates are scored; the rest of the
  // chunk rows are zeroed (and marked unscored, as non-candidates). The dots come from the AIC's
  // Fixpipe into this AIV's next score slot (CrossCoreWaitFlag); the slot is handed back
  // (CrossCoreSetFlag on the V pipe) after its last read, the copy into s_.
  __aicore__ inline void ChunkKeys(uint32_t c0, uint32_t visMax) {
    const uint32_t rowsN = count_ * kChunk;
    const uint32_t cols = ChunkCols(c0, visMax);
    if (cols == 0) {  // no candidate: every lane unscored (what Scores and MarkUnscored would give)
      if (c0 == 0) WaitForPipe<HardEvent::MTE3_V>();  // the previous group's emission DMAs have read s_
      for (uint32_t q = 0; q < count_; ++q) {
        Duplicate(s_[q * t_.rowLanes + c0].ReinterpretCast<int32_t>(), kNotCandidateBits, static_cast<int32_t>(kChunk));
      }
      return;
    }
    LocalTensor<float> bias = biasQue_.AllocTensor<float>();
    LoadPadded(bias, biasGm_[biasOffset_ + c0], cols);
    biasQue_.EnQue(bias);
    const uint32_t slot = deliveries_ % kScoreSlots;
    ++deliveries_;
    LocalTensor<float> sv = slotBuf_.Get<float>()[slot * t_.groupRows * kChunk];
    CrossCoreWaitFlag<4, PIPE_S>(kReadyFlag);  // the AIC's Fixpipe of this chunk into the slot
    LocalTensor<float> bv = biasQue_.DeQue<float>();
    for (uint32_t q = 0; q < count_; ++q) ZeroTail(sv[q * kChunk], cols);
    ZeroTail(bv, cols);
    Scores(sv, bv, c0, rowsN);
    MarkUnscored(sv, rowsN);
    if (t_.precision == 2) {
      for (uint32_t q = 0; q < count_; q += ScratchRows()) {
        RoundToBf16(sv[q * kChunk], Min(ScratchRows(), count_ - q) * kChunk);
      }
    }
    if (c0 == 0) WaitForPipe<HardEvent::MTE3_V>();  // the previous group's emission DMAs have read s_
    // The group's chunk rows into their rows of s_, one strided copy (rows rowLanes apart).
    DataCopy(s_[c0], sv, DataCopyParams(static_cast<uint16_t>(count_), kChunk * 4 / 32, 0,
                                        static_cast<uint16_t>((t_.rowLanes - kChunk) * 4 / 32)));
    CrossCoreSetFlag<4, PIPE_V>(kFreeFlag);
    biasQue_.FreeTensor(bv);
  }

  __aicore__ inline void LoadPadded(const LocalTensor<float>& dst, const GlobalTensor<float>& src, uint32_t len) {
    const uint8_t pad = static_cast<uint8_t>(RoundUpTo(len, 8) - len);
    DataCopyPad(dst, src, DataCopyExtParams(1, len * 4, 0, 0, 0), DataCopyPadExtParams<float>(true, 0, pad, 0.0f));
  }

  // Zeroes [valid rounded up to 8, 256) of a chunk row (the DMA padded to 8 lanes with zeros).
  __aicore__ inline void ZeroTail(const LocalTensor<float>& row, uint32_t valid) {
    const uint32_t from = RoundUpTo(valid, 8);
    if (from < kChunk) Duplicate(row[from], 0.0f, static_cast<int32_t>(kChunk - from));
  }

  // Mask(kRange) over the group's chunk [c0, c0 + 256): each row's candidates [4, vis - 4). A
  // run of rows whose candidates cover the chunk, or miss it, is one Duplicate of all-ones or
  // zero mask words; a row whose window starts inside the chunk is one Compares of the lane index
  // idx; in chunk 0 one And with sinkMask_ then clears every row's sink lanes.
  __aicore__ inline void ChunkRange(const LocalTensor<float>& idx, uint32_t c0) {
    enum Kind : uint32_t { kFull, kEmpty, kPartial };
    const LocalTensor<uint16_t> words = Mask(kRange).ReinterpretCast<uint16_t>();
    constexpr uint32_t kRowWords = kChunk / 16;
    uint32_t runStart = 0;
    uint32_t runKind = kPartial;
    for (uint32_t q = 0; q <= count_; ++q) {
      uint32_t kind = kPartial;
      uint32_t end = 0;
      if (q < count_) {
        const uint32_t vis = group_[q].vis;
        end = vis > amct_stem::kWindow ? vis - amct_stem::kWindow : 0u;  // the candidates end
        const uint32_t from = c0 > amct_stem::kSink ? c0 : amct_stem::kSink;  // the chunk's first candidate lane
        kind = end <= from ? kEmpty : (c0 + kChunk <= end ? kFull : kPartial);
      }
      if (kind != runKind || kind == kPartial) {  // the run of rows [runStart, q) ends
        if (runKind != kPartial && q > runStart) {
          Duplicate(words[runStart * kRowWords], uint16_t(runKind == kFull ? 0xFFFFu : 0u),
                    static_cast<int32_t>((q - runStart) * kRowWords));
        }
        runStart = q;
        runKind = kind;
      }
      if (q < count_ && kind == kPartial) {
        Compares(Mask(kRange)[q * kChunk / 8], idx, static_cast<float>(end), CMPMODE::LT, kChunk);
      }
    }
    if (c0 == 0) {
      And(words, words, sinkMask_.Get<uint16_t>(), static_cast<int32_t>(count_ * kRowWords));
    }
  }

  // s = f32(f32(dot * 2^-6) + vbias) on the group's chunk rows, exact in every hardware mode (the
  // file comment). Mask(kRange) marks the candidates of each row, Mask(kNotNaN) those with dot,
  // vbias and s not NaN; every other lane is zeroed before the arithmetic, so no NaN enters a
  // vector operation.
  __aicore__ inline void Scores(const LocalTensor<float>& sv, const LocalTensor<float>& bv, uint32_t c0,
                                uint32_t rowsN) {
    LocalTensor<float> idx = chunkA_.Get<float>();
    CreateVecIndex(idx, static_cast<float>(c0), kChunk);
    ChunkRange(idx, c0);
    Compare(Mask(kNegative), bv, bv, CMPMODE::EQ, kChunk);  // kNegative: vbias is not NaN
    Select(bv, Mask(kNegative), bv, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, kChunk);
    Compare(Mask(kNotNaN), sv, sv, CMPMODE::EQ, rowsN);
    AndMask(kNotNaN, kRange, rowsN);
    // The vbias mask (one chunk row's 256 bits) repeated for every row by one Gather, then one And.
    Gather(Mask(kAux).ReinterpretCast<uint32_t>(), Mask(kNegative).ReinterpretCast<uint32_t>(),
           rowRepeat_.Get<uint32_t>(), 0u, count_ * (kChunk / 32));
    AndMask(kNotNaN, kAux, rowsN);
    Select(sv, Mask(kNotNaN), sv, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, rowsN);
    if (AnyTinyScore(sv, bv)) {
      // Subnormals may be involved: the exact form. hi_, lo_, scratch_ and chunkA_ are free
      // until the rows are selected (kAux, kNegative until the sum's NaN test below).
      LocalTensor<float> scaledBias = chunkA_.Get<float>();
      amct_kernel::ScaleToUnitsExact(scaledBias, bv, lo_, scratch_, Mask(kAux), kChunk);
      for (uint32_t q = 0; q < count_; ++q) {
        amct_kernel::ScaleAddExact<6>(sv[q * kChunk], bv, scaledBias, hi_, lo_, scratch_, Mask(kAux),
                                      Mask(kNegative), kChunk);
      }
    } else {
      Muls(sv, sv, kScale, static_cast<int32_t>(rowsN));
      for (uint32_t q = 0; q < count_; ++q) Add(sv[q * kChunk], sv[q * kChunk], bv, static_cast<int32_t>(kChunk));
    }
    Compare(Mask(kAux), sv, sv, CMPMODE::EQ, rowsN);  // +inf + -inf
    AndMask(kNotNaN, kAux, rowsN);
  }

  // The chunk scratch may hold only half a group's chunk rows (t_.scratchRows, the host's choice):
  // the UB that saves lets 32 rows of 1024 key blocks (128K tokens) form one group, so a 64-row
  // tile is one pair of groups and its keys are read once, not twice (31 + 1 rows). A step over
  // the whole group's chunk that needs the scratch therefore runs on ScratchRows() rows at a time.
  __aicore__ inline uint32_t ScratchRows() const { return t_.scratchRows; }
  __aicore__ inline uint32_t ScratchLanes() const { return t_.scratchRows * kChunk; }

  // Whether a dot or vbias of the group's chunk is a nonzero of magnitude below 2^-54
  // (amct_exact_sum.h), ScratchRows() rows at a time.
  __aicore__ inline bool AnyTinyScore(const LocalTensor<float>& sv, const LocalTensor<float>& bv) {
    for (uint32_t q = 0; q < count_; q += ScratchRows()) {
      const uint32_t rows = Min(ScratchRows(), count_ - q);
      if (amct_kernel::AnyTinyNonzero(sv[q * kChunk], rows, kChunk, bv, chunkA_.Get<float>(), hi_)) return true;
    }
    return false;
  }

  // s rounded to bf16 (RNE) in place by integer steps on its bits: bits + 0x7FFF + bit 16, then
  // the low 16 bits cleared (a carry into the exponent is the rounding up; overflow gives Inf,
  // Inf stays Inf). The lanes hold scores (no NaN) or MarkUnscored's patterns, which it leaves
  // as they are (0xFFFE0000: bit 16 clear; 0x7FFF0000 + 0x8000 clears back), so no int32
  // addition overflows.
  __aicore__ inline void RoundToBf16(const LocalTensor<float>& s, uint32_t lanes) {
    const int32_t cnt = static_cast<int32_t>(lanes);
    LocalTensor<uint32_t> bits = s.ReinterpretCast<uint32_t>();
    LocalTensor<uint32_t> lsb = chunkA_.Get<uint32_t>();
    ShiftRight(lsb, bits, uint32_t(16), cnt);
    ShiftLeft(lsb, lsb, uint32_t(31), cnt);
    ShiftRight(lsb, lsb, uint32_t(31), cnt);
    Add(s.ReinterpretCast<int32_t>(), s.ReinterpretCast<int32_t>(), lsb.ReinterpretCast<int32_t>(), cnt);
    Adds(s.ReinterpretCast<int32_t>(), s.ReinterpretCast<int32_t>(), int32_t(0x7FFF), cnt);
    ShiftRight(bits, bits, uint32_t(16), cnt);
    ShiftLeft(bits, bits, uint32_t(16), cnt);
  }

  // The lanes Scores left unscored (Mask(kNotNaN) clear) get bits that RowKeys maps to digits
  // outside every key's: 0xFFFE0000 (hi -32767, kHiNaN, below every key) on the candidates with a
  // NaN score, 0x7FFF0000 (hi 32767, kHiNone, above every key) on the lanes that are not
  // candidates (Mask(kRange) clear), so that a row keeps only its scores in UB, not its masks, and
  // RowKeys needs no candidate mask (Mask(kNotNaN) lies within Mask(kRange)). Two int32 Selects
  // (moves, not arithmetic: no vector arithmetic reads the patterns as floats) over the group's
  // chunk: every unscored lane (a NaN dot among them) first gets 0x7FFF0000, then those in
  // Mask(kRange) 0xFFFE0000 (Mask(kAux) = kNotNaN or not kRange keeps the others).
  __aicore__ inline void MarkUnscored(const LocalTensor<float>& sv, uint32_t rowsN) {
    const LocalTensor<int32_t> bits = sv.ReinterpretCast<int32_t>();
    Select(bits, Mask(kNotNaN), bits, kNotCandidateBits, SELMODE::VSEL_TENSOR_SCALAR_MODE, rowsN);
    const LocalTensor<uint16_t> keep = Mask(kAux).ReinterpretCast<uint16_t>();
    Not(keep, Mask(kRange).ReinterpretCast<uint16_t>(), static_cast<int32_t>(rowsN / 16));
    OrMask(kAux, kNotNaN, rowsN);
    Select(bits, Mask(kAux), bits, static_cast<int32_t>(0xFFFE0000u), SELMODE::VSEL_TENSOR_SCALAR_MODE, rowsN);
  }

  // hi_ = the hi digit of the key of the row's scores s (see the file comment), built when the row
  // is selected. With r = the fp32 bits of s shifted right by 16 (arithmetic): hi = r for a clear
  // sign bit, and ~(|bits| >> 16) = -r - 32769 for a set one (-0.0 gives -1, below +0.0's 0). The
  // unscored lanes (MarkUnscored: no score has their bits, which are NaNs) have r = -2, so hi =
  // -32767 (kHiNaN) on the NaN candidates, below every score's digit (-inf's is -32641), and r =
  // 32767, so hi = 32767 (kHiNone) on the others, above every score's (+inf's is 32640).
  // Step `step` (< kKeySteps) of the keys of the row scores s into hi (tmp: a row buffer; neg: the
  // sign mask's slot). One vector instruction a step, so that the next row's keys can fill the
  // scalar unit's gaps (NextKeySteps).
  __aicore__ inline void KeyStep(uint32_t step, const LocalTensor<float>& s, const LocalTensor<float>& hi,
                                 const LocalTensor<float>& tmp, uint32_t neg, uint32_t lanes) {
    const int32_t cnt = static_cast<int32_t>(lanes);
    switch (step) {
      case 0: ShiftRight(tmp.ReinterpretCast<int32_t>(), s.ReinterpretCast<int32_t>(), int32_t(16), cnt); break;
      case 1: Cast(hi, tmp.ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, lanes); break;  // r, exact
      case 2: Compares(Mask(neg), hi, 0.0f, CMPMODE::LT, lanes); break;
      case 3: Muls(tmp, hi, -1.0f, cnt); break;
      case 4: Adds(tmp, tmp, -32769.0f, cnt); break;
      default: Select(hi, Mask(neg), tmp, hi, SELMODE::VSEL_TENSOR_TENSOR_MODE, lanes); break;
    }
  }
  static constexpr uint32_t kKeySteps = 6;
  static constexpr uint32_t kPrefetchSteps = 10;  // kKeySteps, then the first count's four (NextKeySteps)

  // ---- the next row's keys, built in the scalar unit's gaps --------------------------------------
  // A row's selection alternates vector counts with scalar reads and decisions, and the vector
  // unit would idle while the scalar unit reads a count and picks the next probe. The next row's
  // keys do not depend on this row, so their steps are issued into hiNext_ (keyTmp_, kNegNext)
  // one at a time between the flag that hands a result to the scalar unit and the
  // scalar unit's wait for it (ResultsToScalar); RowKeys then swaps them in.
  // With a valid hint and a half count, the next row's first count (its hi search's first probe,
  // at the hint's center as it stands now: a row older than the search itself would use, which only
  // changes which probe comes first) follows its keys, into kAuxNext, keyTmp_ (free by then),
  // partNext and part2Next.
  __aicore__ inline void StartNextKeys(uint32_t q) {
    next_.active = t_.nextKeys != 0 && q < count_;
    next_.row = q;
    next_.lanes = q < count_ ? RoundUpTo(group_[q].vis, kChunk) : 0;
    next_.step = 0;
    next_.steps = hiHint_.valid && next_.lanes <= kHalfCountLanes ? kPrefetchSteps : kKeySteps;
    const int32_t mid = ValueDigit(hiHint_.center);  // Search's first probe, clamped as there
    next_.probe = mid <= kHiNaN ? kHiNaN + 1 : (mid > kHiTop ? kHiTop : mid);
  }
  __aicore__ inline void NextKeySteps(uint32_t steps) {
    for (uint32_t i = 0; i < steps && next_.active && next_.step < next_.steps; ++i, ++next_.step) {
      if (next_.step < kKeySteps) {
        KeyStep(next_.step, s_[next_.row * t_.rowLanes], hiNext_, keyTmp_, kNegNext, next_.lanes);
      } else {
        CountStep(next_.step - kKeySteps, hiNext_, next_.probe, kAuxNext, keyTmp_.ReinterpretCast<half>(),
                  partNextBuf_.Get<half>(), part2NextBuf_.Get<half>(), next_.lanes);
      }
    }
  }
  // Step `step` (< 4) of a half count of v >= t (lanes <= kHalfCountLanes) into total[0]: a
  // Compares into Mask(aux), a Select of ones into marks, the per-repeat sums into part, their sum.
  __aicore__ inline void CountStep(uint32_t step, const LocalTensor<float>& v, int32_t t, uint32_t aux,
                                   const LocalTensor<half>& marks, const LocalTensor<half>& part,
                                   const LocalTensor<half>& total, uint32_t lanes) {
    const int32_t repeats = static_cast<int32_t>(lanes / (2 * kRepeatLanes));
    const AscendC::ReduceOrder order = AscendC::ReduceOrder::ORDER_ONLY_VALUE;
    switch (step) {
      case 0: Compares(Mask(aux), v, static_cast<float>(t), CMPMODE::GE, lanes); break;
      case 1: Select(marks, Mask(aux), Ones(), half(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes); break;
      case 2:
        ReduceEachRepeat<Reduce::kSum>(part, marks, static_cast<int32_t>(2 * kRepeatLanes), repeats, 1, 1, 8, order);
        break;
      default: ReduceEachRepeat<Reduce::kSum>(total, part, repeats, 1, 1, 1, 8, order); break;
    }
  }
  // The half ones of the counts: a buffer filled once where the tiling has one (nextKeys), else
  // scratch_ (filled by each search).
  __aicore__ inline LocalTensor<half> Ones() {
    return t_.nextKeys != 0 ? onesBuf_.Get<half>() : scratch_.ReinterpretCast<half>();
  }
  // The vector unit's results so far, for the scalar unit (V_S), with `steps` steps of the next
  // row's keys issued between the flag and the wait.
  __aicore__ inline void ResultsToScalar(uint32_t steps) {
    const int32_t id = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
    SetFlag<HardEvent::V_S>(id);
    NextKeySteps(steps);
    WaitFlag<HardEvent::V_S>(id);
  }

  // hi_ = the keys of row q (see the file comment and KeyStep): swapped in when the previous row's
  // gaps built them (the steps left issued now), else built here.
  __aicore__ inline void RowKeys(uint32_t q, uint32_t lanes) {
    given_.valid = false;
    if (next_.active && next_.row == q) {
      given_.valid = next_.steps == kPrefetchSteps;  // the first count, once the steps left are issued
      given_.at = next_.probe;
      NextKeySteps(kPrefetchSteps);
      const LocalTensor<float> built = hiNext_;
      hiNext_ = hi_;
      hi_ = built;
    } else {
      for (uint32_t step = 0; step < kKeySteps; ++step) {
        KeyStep(step, s_[q * t_.rowLanes], hi_, scratch_, kNegative, lanes);
      }
    }
    StartNextKeys(q + 1);
  }

  // lo_ = the lo digit of the key of s: the low 16 bits w of the fp32 bits for a clear sign bit,
  // 65535 - w for a set one (the NaN bucket hi = -32767 is never split by lo: Choose ends before).
  __aicore__ inline void LowKeys(const LocalTensor<float>& hi, const LocalTensor<float>& s, uint32_t lanes) {
    const int32_t cnt = static_cast<int32_t>(lanes);
    LocalTensor<uint32_t> loU = lo_.ReinterpretCast<uint32_t>();
    ShiftLeft(loU, s.ReinterpretCast<uint32_t>(), uint32_t(16), cnt);
    ShiftRight(loU, loU, uint32_t(16), cnt);
    Cast(lo_, lo_.ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, lanes);  // w, exact
    Compares(Mask(kNegative), hi, 0.0f, CMPMODE::LT, lanes);
    Muls(scratch_, lo_, -1.0f, cnt);
    Adds(scratch_, scratch_, 65535.0f, cnt);
    Select(lo_, Mask(kNegative), scratch_, lo_, SELMODE::VSEL_TENSOR_TENSOR_MODE, lanes);
  }

  // The sum (of 0/1 values: exact in fp32), largest or smallest of x[0, lanes): one reduction per
  // repeat, then per 64 repeats, and the scalar unit combines the last few.
  template <Reduce kind>
  __aicore__ inline float ReduceAll(const LocalTensor<float>& x, uint32_t lanes) {
    LocalTensor<float> part = partBuf_.Get<float>();
    LocalTensor<float> part2 = part2Buf_.Get<float>();
    const uint32_t repeats = lanes / kRepeatLanes;
    const AscendC::ReduceOrder order = AscendC::ReduceOrder::ORDER_ONLY_VALUE;
    ReduceEachRepeat<kind>(part, x, static_cast<int32_t>(kRepeatLanes), static_cast<int32_t>(repeats), 1, 1, 8, order);
    LocalTensor<float> last = part;
    uint32_t values = repeats;
    if (repeats > kScalarSumRepeats) {  // more than a few partial results: one more vector level
      const uint32_t full = repeats / kRepeatLanes;
      const uint32_t rest = repeats % kRepeatLanes;
      if (full > 0) {
        ReduceEachRepeat<kind>(part2, part, static_cast<int32_t>(kRepeatLanes), static_cast<int32_t>(full), 1, 1, 8,
                               order);
      }
      if (rest > 0) {
        ReduceEachRepeat<kind>(part2[full], part[full * kRepeatLanes], static_cast<int32_t>(rest), 1, 1, 1, 8, order);
      }
      last = part2;
      values = full + (rest > 0 ? 1u : 0u);
    }
    ResultsToScalar(1);  // one step of the next row's keys meanwhile
    float total = last.GetValue(0);
    for (uint32_t i = 1; i < values; ++i) {
      const float v = last.GetValue(i);
      total = kind == Reduce::kSum ? total + v : (kind == Reduce::kMax ? (v > total ? v : total) : (v < total ? v : total));
    }
    WaitForPipe<HardEvent::S_V>();
    return total;
  }

  __aicore__ inline uint32_t Sum(const LocalTensor<float>& x, uint32_t lanes) {
    return static_cast<uint32_t>(ReduceAll<Reduce::kSum>(x, lanes));
  }

  // The range [lowest, highest] of the digits v of the lanes in Mask(slot) (others ignored):
  // Rank's starting bracket, so that the search spans the row's values, not the digit's range.
  __aicore__ inline void DigitRange(const LocalTensor<float>& v, uint32_t slot, uint32_t lanes, int32_t& lowest,
                                    int32_t& highest) {
    Select(scratch_, Mask(slot), v, 65536.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);  // above every digit
    lowest = static_cast<int32_t>(ReduceAll<Reduce::kMin>(scratch_, lanes));
    Select(scratch_, Mask(slot), v, -65536.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);  // below every digit
    highest = static_cast<int32_t>(ReduceAll<Reduce::kMax>(scratch_, lanes));
  }

  // Lanes of v that are >= t: a Compares, a Select of scratch_'s ones (filled by Search: half
  // ones on rows of at most kHalfCountLanes lanes, else fp32) into `part`, summed by the vector
  // unit.
  __aicore__ inline uint32_t CountAtLeast(const LocalTensor<float>& v, int32_t t, uint32_t lanes,
                                          const LocalTensor<float>& part) {
    if (lanes <= kHalfCountLanes) {  // exact in half: every integer up to 2048
      LocalTensor<half> total = part2Buf_.Get<half>();
      for (uint32_t step = 0; step < 4; ++step) {
        CountStep(step, v, t, kAux, part.ReinterpretCast<half>(), partBuf_.Get<half>(), total, lanes);
      }
      return ReadCount(total);
    }
    Compares(Mask(kAux), v, static_cast<float>(t), CMPMODE::GE, lanes);
    Select(part, Mask(kAux), scratch_, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
    return Sum(part, lanes);
  }

  // A half count's total[0], read by the scalar unit (one step of the next row's keys meanwhile).
  __aicore__ inline uint32_t ReadCount(const LocalTensor<half>& total) {
    ResultsToScalar(1);
    const float count = static_cast<float>(total.GetValue(0));
    WaitForPipe<HardEvent::S_V>();  // later counts rewrite total
    return static_cast<uint32_t>(count);
  }

  // The largest t in [lo, top] with count(v >= t) >= need, given count(v >= lo) = atLeast >= need.
  // Values are integers in fp32. With a valid `hint` (the previous rows' searches: rows of a group
  // score the same keys, so their thresholds scatter around one level, and the mean of the last
  // few is a closer guess than the last alone), the search first probes the hint's center (the
  // running mean of their thresholds, in score value), then gallops on in the same direction:
  // each probe where the score density (counted lanes per unit of score value, DigitValue: the
  // hint's for the first jump, then the secant of the last two probes) puts the crossing of
  // need, but at least 1, 2, 4 ... digits on, until the count crosses need; then it bisects: a
  // threshold near the hint costs 2-4 counts instead of a digit range and a dozen. Any hint is
  // exact (it only orders the probes); the gallop ends within 18 probes. With `hint` (the hi
  // digit) the interpolations are in score values, else (the lo digit, linear in value) in
  // digits. Updates the hint.
  // `part`: a row buffer free meanwhile (CountAtLeast).
  __aicore__ inline Kth Rank(const LocalTensor<float>& v, int32_t lo, int32_t top, uint32_t need, uint32_t atLeast,
                             uint32_t above, uint32_t lanes, const LocalTensor<float>& part,
                             RankHint* hint = nullptr) {
    const bool gallop = hint != nullptr && hint->valid;
    Probe firstProbe{0, 0};
    const Kth k = Search(v, lo, top, need, atLeast, above, lanes, part, gallop, gallop ? *hint : RankHint{},
                         hint != nullptr, firstProbe, hint != nullptr ? &given_ : nullptr);
    if (hint != nullptr) {
      if (k.threshold != firstProbe.at && firstProbe.count != k.atLeast) {
        const float slope = Slope(firstProbe, Probe{k.threshold, k.atLeast});
        if (slope > 0.0f) {
          hint->slope = slope;
          hint->hasSlope = true;
        }
      }
      const float x = DigitValue(k.threshold);
      hint->center = hint->valid ? 0.5f * x + 0.5f * hint->center : x;
      hint->valid = true;
    }
    return k;
  }

  struct GivenCount {
    int32_t at;
    bool valid;
  };

  struct Probe {
    int32_t at;
    uint32_t count;
  };

  // Lanes per unit of value between two probes of other counts (0 when the values coincide or
  // are not finite).
  __aicore__ inline float Slope(const Probe& a, const Probe& b) {
    const float dx = DigitValue(a.at) - DigitValue(b.at);
    const float dc = static_cast<float>(a.count) - static_cast<float>(b.count);
    const float slope = dc / dx;  // negative: the count falls as the value grows
    const float m = slope < 0.0f ? -slope : slope;
    return m > 0.0f && m < 3.0e38f ? m : 0.0f;
  }

  // The hi search's next probe while it gallops from its last probe `last` (count >= need: `up`,
  // the answer lies above; else below): the value where the density `slope` (lanes per unit of
  // value, 0: unknown) puts the crossing of need, kGallopMargin lanes past it, as a digit; at
  // least `minStep` digits from `last`.
  __aicore__ inline int32_t GallopProbe(const Probe& last, uint32_t need, bool up, float slope, int32_t minStep) {
    int32_t d = 0;
    if (slope > 0.0f) {
      const float off = up ? static_cast<float>(last.count - need) + 1.0f + kGallopMargin
                           : static_cast<float>(need - last.count) + kGallopMargin;
      const float x0 = DigitValue(last.at);
      const int32_t target = ValueDigit(up ? x0 + off / slope : x0 - off / slope);
      d = up ? target - last.at : last.at - target;
    }
    d = d < minStep ? minStep : (d > (1 << 16) ? (1 << 16) : d);
    return up ? last.at + d : last.at - d;
  }

  // The value interpolation of the count between lo (atLeast) and hi + 1 (above), as a digit.
  __aicore__ inline int32_t ValueGuess(int32_t lo, int32_t hi, uint32_t need, uint32_t atLeast, uint32_t above) {
    const float frac = static_cast<float>(atLeast - need) / static_cast<float>(atLeast - above);
    return ValueDigit(DigitValue(lo) * (1.0f - frac) + DigitValue(hi + 1) * frac);
  }

  // `given`: a first count already issued (the hi search: NextKeySteps), used when its probe is
  // this search's first.
  __aicore__ inline Kth Search(const LocalTensor<float>& v, int32_t lo, int32_t top, uint32_t need, uint32_t atLeast,
                               uint32_t above, uint32_t lanes, const LocalTensor<float>& part, bool gallop, const RankHint& hint,
                               bool values, Probe& firstProbe, const GivenCount* given) {
    if (lanes > kHalfCountLanes) {  // CountAtLeast's ones
      Duplicate(scratch_, 1.0f, static_cast<int32_t>(lanes));
    } else if (t_.nextKeys == 0) {
      Duplicate(scratch_.ReinterpretCast<half>(), half(1.0f), static_cast<int32_t>(lanes));
    }
    int32_t hi = top;
    // above = count(v >= hi + 1): what lies above top
    bool interpolate = false;
    uint32_t probes = 0;
    bool up = true;
    int32_t step = 1;
    Probe last{0, 0}, before{0, 0};
    while (lo < hi) {
      const uint32_t inside = atLeast - above;
      const bool few = lanes <= kShortRowLanes ? inside <= kScalarFinish
                                               : inside <= kLongRowFinish && hi - lo >= (1 << kFinishSpan);
      if (few) {
        return Finish(v, lo, hi, need, above, inside, lanes);
      }
      // Bisection and interpolation alternate: the count falls from atLeast at lo to above at
      // hi + 1; interpolation guesses where it crosses need (fast on smooth densities: in score
      // values for the hi digit), bisection bounds the worst case at twice its 16 steps.
      int32_t mid = lo + (hi - lo + 1) / 2;
      if (gallop && probes == 0) {  // a count already issued at an older center is as good a start
        mid = given != nullptr && given->valid ? given->at : ValueDigit(hint.center);
      } else if (gallop) {
        // The density: the previous row's for the first jump, then the last two probes' secant.
        float slope = 0.0f;
        if (probes == 1) {
          slope = hint.hasSlope ? hint.slope : 0.0f;
        } else if (last.count != before.count) {
          slope = Slope(last, before);
        }
        mid = GallopProbe(last, need, up, slope, step);  // at least 1, 2, 4, ... digits: <= 17 steps
        step = step < (1 << 16) ? 2 * step : step;
      } else if (interpolate && values) {
        mid = ValueGuess(lo, hi, need, atLeast, above);
      } else if (interpolate) {
        const float span = static_cast<float>(hi - lo + 1);
        const float frac = static_cast<float>(atLeast - need) / static_cast<float>(atLeast - above);
        const int32_t guess = lo + static_cast<int32_t>(span * frac);
        mid = guess;
      }
      mid = mid <= lo ? lo + 1 : (mid > hi ? hi : mid);
      if (!gallop) interpolate = !interpolate;
      uint32_t c = 0;
      if (probes == 0 && given != nullptr && given->valid && given->at == mid) {
        c = ReadCount(part2NextBuf_.Get<half>());  // counted in the previous row's gaps (NextKeySteps)
      } else {
        c = CountAtLeast(v, mid, lanes, part);
      }
      const bool reached = c >= need;
      if (reached) {
        lo = mid;
        atLeast = c;
      } else {
        hi = mid - 1;
        above = c;
      }
      before = last;
      last = Probe{mid, c};
      if (probes == 0) firstProbe = last;
      if (gallop && probes == 0) {
        up = reached;  // the answer lies at or above the first probe, or below it
      } else if (gallop && reached != up) {
        gallop = false;  // bracketed: bisection and interpolation from here
      }
      ++probes;
    }
    return Kth{lo, above, atLeast};
  }

  // The `inside` (<= kScalarFinish) lanes with lo <= v <= hi, read by the scalar unit: the
  // (need - above)-th largest of their values is the threshold. GatherMask compacts their values
  // (in index order) into scratch_ (free at the end of a search: its ones are refilled by the
  // next), so the scalar unit reads just those values, not the mask words.
  __aicore__ inline Kth Finish(const LocalTensor<float>& v, int32_t lo, int32_t hi, uint32_t need, uint32_t above,
                               uint32_t inside, uint32_t lanes) {
    Compares(Mask(kAux), v, static_cast<float>(lo), CMPMODE::GE, lanes);
    Compares(Mask(kNegative), v, static_cast<float>(hi), CMPMODE::LE, lanes);
    AndMask(kAux, kNegative, lanes);
    CompactByMask(scratch_, v, kAux, lanes);
    ResultsToScalar(kPrefetchSteps);  // the next row's keys meanwhile
    float vals[kScalarFinish];
    const uint32_t m = inside < kScalarFinish ? inside : kScalarFinish;
    for (uint32_t i = 0; i < m; ++i) InsertDescending(vals, i, scratch_.GetValue(i));
    WaitForPipe<HardEvent::S_V>();
    const float t = vals[need - above - 1];
    uint32_t greater = 0, equal = 0;
    for (uint32_t k = 0; k < m; ++k) {
      greater += vals[k] > t ? 1u : 0u;
      equal += vals[k] == t ? 1u : 0u;
    }
    return Kth{static_cast<int32_t>(t), above + greater, above + greater + equal};
  }

  // A row buffer for the hi search's counts: the chunk scratch, free during the selection, when it
  // holds a row; else lo_ (free until the lo digit search).
  __aicore__ inline LocalTensor<float> CountBuffer(uint32_t lanes) {
    return ScratchLanes() >= lanes ? chunkA_.Get<float>() : lo_;
  }

  // Writes into kTaken (and kTie, of which the first `ties` lanes in index order are also taken)
  // the K chosen lanes among the n candidates of a row. Returns the tie count.
  __aicore__ inline uint32_t Choose(const LocalTensor<float>& hi, const LocalTensor<float>& s, uint32_t n,
                                    uint32_t K, uint32_t lanes) {
    // The counts of the hi digit hold the lanes - n lanes that are not candidates (kHiNone, above
    // every key): count(hi >= lowest) = lanes, count(hi > highest) = lanes - n, and the search
    // takes K + lanes - n, so that the chosen mask holds those lanes too (Emit's sink, window and
    // tail). The first row searches within the row's digit range, the others gallop from the
    // previous row's threshold (Rank).
    const uint32_t others = lanes - n;
    int32_t lowest = kHiNaN, highest = kHiTop;
    if (!hiHint_.valid) {
      Compares(Mask(kRange), hi, static_cast<float>(kHiTop), CMPMODE::LE, lanes);  // the candidates
      DigitRange(hi, kRange, lanes, lowest, highest);
    }
    const uint32_t take = K + others;
    const Kth h = Rank(hi, lowest, highest, take, lanes, others, lanes, CountBuffer(lanes), &hiHint_);
    const uint32_t need = take - h.above;  // lanes still to take from the bucket hi == h.threshold
    const float th = static_cast<float>(h.threshold);
    if (h.atLeast == take) {  // the whole bucket is taken
      Compares(Mask(kTaken), hi, th, CMPMODE::GE, lanes);
      return 0;
    }
    Compares(Mask(kTaken), hi, th, CMPMODE::GT, lanes);
    Compares(Mask(kTie), hi, th, CMPMODE::EQ, lanes);
    if (t_.precision == 2 || h.threshold == kHiNaN) return need;  // lo is the same for the whole bucket
    const uint32_t bucket = h.atLeast - h.above;
    if (bucket <= kScalarFinish) return ChooseInBucket(s, need, bucket, h.threshold >= 0, lanes);
    // The bucket's lo digits, -1 elsewhere.
    LowKeys(hi, s, lanes);
    Select(lo_, Mask(kTie), lo_, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
    int32_t lowest2 = 0, highest2 = kLoTop;
    DigitRange(lo_, kTie, lanes, lowest2, highest2);
    const Kth l = Rank(lo_, lowest2, highest2, need, bucket, 0, lanes, hi_);  // hi_ is no longer needed
    const float tl = static_cast<float>(l.threshold);
    if (l.atLeast == need) {  // the K-th key's lanes are all taken: no ties to order
      Compares(Mask(kAux), lo_, tl, CMPMODE::GE, lanes);  // lo_ is -1 outside the bucket, tl >= 0
      OrMask(kTaken, kAux, lanes);
      return 0;
    }
    Compares(Mask(kAux), lo_, tl, CMPMODE::GT, lanes);
    OrMask(kTaken, kAux, lanes);
    Compares(Mask(kTie), lo_, tl, CMPMODE::EQ, lanes);
    return need - l.above;
  }

  // The K-th key's bucket (Mask(kTie): hi == the K-th key's digit, not the NaN one) of at most
  // kScalarFinish lanes, of which `need` are still to take: the scalar unit reads their score bits,
  // compacted by GatherMask (index order), and finds the need-th largest key; no lo digits are
  // built. Within one hi bucket all scores share their sign and are numbers, so the key order is
  // the order of the int32 bits (`positive`) or its reverse, and one int32 Compares against that
  // key's bits adds the bucket's larger keys to kTaken (it also holds lanes of higher buckets, all
  // in kTaken already, and never a lower one: the unscored patterns lie outside that range). Returns
  // the tie count, with Mask(kTie) = the lanes of the need-th largest key.
  __aicore__ inline uint32_t ChooseInBucket(const LocalTensor<float>& s, uint32_t need, uint32_t bucket,
                                            bool positive, uint32_t lanes) {
    const LocalTensor<int32_t> bits = s.ReinterpretCast<int32_t>();
    const LocalTensor<int32_t> vals = scratch_.ReinterpretCast<int32_t>();
    CompactByMask(vals, bits, kTie, lanes);
    ResultsToScalar(kPrefetchSteps);  // the next row's keys meanwhile
    int32_t keys[kScalarFinish];  // descending; a negative score's key is its bits ^ 0x7FFFFFFF
    for (uint32_t i = 0; i < bucket; ++i) {
      const int32_t b = vals.GetValue(i);
      InsertDescending(keys, i, positive ? b : (b ^ 0x7FFFFFFF));
    }
    WaitForPipe<HardEvent::S_V>();
    const int32_t kth = keys[need - 1];
    uint32_t greater = 0, equal = 0;
    for (uint32_t i = 0; i < bucket; ++i) {
      greater += keys[i] > kth ? 1u : 0u;
      equal += keys[i] == kth ? 1u : 0u;
    }
    const int32_t tb = positive ? kth : (kth ^ 0x7FFFFFFF);  // the need-th largest key's score bits
    const bool all = greater + equal == need;  // the K-th key's lanes are all taken: no ties
    const CMPMODE mode = positive ? (all ? CMPMODE::GE : CMPMODE::GT) : (all ? CMPMODE::LE : CMPMODE::LT);
    Compares(Mask(kAux), bits, tb, mode, lanes);
    OrMask(kTaken, kAux, lanes);
    if (all) return 0;
    Compares(Mask(kTie), bits, tb, CMPMODE::EQ, lanes);
    return need - greater;
  }

  // Adds the first `ties` lanes of kTie (index order) to kTaken, on the scalar unit.
  __aicore__ inline void TakeTies(uint32_t ties, uint32_t lanes) {
    ResultsToScalar(kPrefetchSteps);  // the next row's keys meanwhile
    LocalTensor<uint64_t> taken = Mask(kTaken).ReinterpretCast<uint64_t>();
    LocalTensor<uint64_t> tie = Mask(kTie).ReinterpretCast<uint64_t>();
    for (uint32_t w = 0; w < lanes / 64 && ties > 0; ++w) {  // 64 mask bits per scalar read
      uint64_t t = tie.GetValue(w);
      if (t == 0) continue;
      uint64_t word = taken.GetValue(w);
      while (t != 0 && ties > 0) {
        const uint64_t low = t & (~t + 1u);
        word |= low;
        t ^= low;
        --ties;
      }
      taken.SetValue(w, word);
    }
    WaitForPipe<HardEvent::S_V>();
  }

  // Row q of the group: select, then emit [0..3] ++ ascending(TopK) ++ [vis-4 .. vis-1].
  __aicore__ inline void SelectRow(uint32_t q) {
    const GroupRow& row = group_[q];
    const uint32_t lanes = RoundUpTo(row.vis, kChunk);
    const uint32_t n = row.vis - amct_stem::kSink - amct_stem::kWindow;
    // Bounds: K <= n, <= kMaxK and the row (maxKb >= vis > K + 8 by construction; kept as a guard).
    uint32_t K = Min(row.K, n);
    K = Min(K, amct_stem::kMaxK);
    const LocalTensor<float> s = s_[q * t_.rowLanes];
    RowKeys(q, lanes);
    if (K == 0) {  // only out-of-contract lengths (a prompt shorter than kv) give K = 0: no candidate
      Compares(Mask(kTaken), hi_, static_cast<float>(kHiTop), CMPMODE::GT, lanes);
    } else {
      const uint32_t ties = Choose(hi_, s, n, K, lanes);
      if (ties > 0) TakeTies(ties, lanes);
    }
    const uint32_t written = Emit(s.ReinterpretCast<int32_t>(), row.outRow * t_.maxKb,
                                  Min(K + amct_stem::kSink + amct_stem::kWindow, t_.maxKb), lanes);
    WriteLength(row.outRow, written);
  }

  // dst = the lanes of src [0, lanes) whose bit in Mask(slot) is set, densely in index order: one
  // Gather spreads each 64-lane repeat's 8 mask bytes into its own 32-B pattern slot (GatherMask
  // reads a repeat's user pattern src1RepeatStride blocks after the previous one), then one
  // GatherMask over the row.
  template <typename T>
  __aicore__ inline void CompactByMask(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t slot,
                                       uint32_t lanes) {
    const uint32_t repeats = lanes / kRepeatLanes;
    LocalTensor<uint32_t> pat = patBuf_.Get<uint32_t>();
    Gather(pat, Mask(slot).ReinterpretCast<uint32_t>(), patOffBuf_.Get<uint32_t>(), 0u, repeats * 8);
    uint64_t kept = 0;
    GatherMask(dst, src, pat, false, 0u, GatherMaskParams(1, static_cast<uint16_t>(repeats), 8, 1), kept);
  }

  // Compacts the index ramp by Mask(kTaken), which holds the chosen lanes and those that are not
  // candidates (the sink lanes [0, 4), the window lanes [vis - 4, vis) and the lanes from vis on:
  // Choose), into the output row at `out`: `limit` elements, which are the sink, the K taken lanes
  // and the window (ascending: the lanes from vis on come after them, and are not written). The
  // compaction (CompactByMask) goes into `slot`, the row's own scores (dead once it is selected,
  // and rewritten only by the next group's chunks, which wait for these DMAs: so no row waits for
  // the previous row's), then one DMA; the scalar unit reads nothing.
  __aicore__ inline uint32_t Emit(const LocalTensor<int32_t>& slot, uint64_t out, uint32_t limit, uint32_t lanes) {
    CompactByMask(slot, ramp_, kTaken, lanes);
    WaitForPipe<HardEvent::V_MTE3>();
    DataCopyPad(outGm_[out], slot, DataCopyExtParams(1, limit * 4, 0, 0, 0));
    return limit;
  }

  StemTiling t_;
  uint32_t aic_ = 0, sub_ = 0;
  bool split_ = true;     // two vector blocks share each tile
  uint64_t walked_ = 0;  // tiles of this cube core's walk so far
  uint64_t biasOffset_ = 0;
  Lengths lengths_{0, 0, 0, 0};  // CachedLengths
  uint32_t lengthsB_ = 0;
  bool lengthsValid_ = false;
  GroupRow group_[amct_stem::kMaxGroupRows];
  uint32_t count_ = 0;
  uint32_t lengthSlot_ = 0;  // WriteLength's next slot
  int64_t previousEnd_ = 0;  // the bn2 where the previous section's last record ends
  RankHint hiHint_;          // the last row's hi search (Choose)
  __gm__ bfloat16_t* qBase_ = nullptr;
  __gm__ bfloat16_t* kBase_ = nullptr;
  GlobalTensor<float> biasGm_;
  GlobalTensor<int32_t> qLenGm_;
  GlobalTensor<int32_t> kvLenGm_;
  GlobalTensor<int32_t> promptGm_;
  GlobalTensor<int32_t> metaGm_;
  GlobalTensor<int32_t> outGm_;
  GlobalTensor<int32_t> seqGm_;
  TBuf<TPosition::VECIN> slotBuf_;  // the kScoreSlots score slots, at UB offset 0 (the AIC's Fixpipe target)
  uint32_t deliveries_ = 0;         // score slots this AIV has received
  // The AIC's state.
  bool cube_ = false;
  int64_t recordsSection_ = 0;      // LoadRecords' section (the AIC reads its records from GM)
  GroupRow partner_[amct_stem::kMaxGroupRows];  // AIV1's group of the pair (group_ is AIV0's)
  uint32_t delivered_[amct_stem::kSubBlocks] = {0, 0};
  uint32_t chunkCount_ = 0, bSlices_ = 0, l0Loads_ = 0;
  bool aBusy_ = false;
  bool bBusy_[2] = {false, false};
  bool l0Busy_[2] = {false, false};
  bool cBusy_[2] = {false, false};
  static constexpr uint32_t kAEvent = 2;  // event id of the query rows in L1 (0, 1: the B slices)
  TBuf<TPosition::A1> aL1_;
  TBuf<TPosition::B1> bL1_[2];
  TBuf<TPosition::A2> aL0_[2];
  TBuf<TPosition::B2> bL0_[2];
  TBuf<TPosition::CO1> cL0_[2];
  TQue<TPosition::VECIN, 1> biasQue_;
  TBuf<TPosition::VECCALC> chunkA_;
  TBuf<TPosition::VECCALC> hiBuf_;
  TBuf<TPosition::VECCALC> sBuf_;
  TBuf<TPosition::VECCALC> loBuf_;
  TBuf<TPosition::VECCALC> scratchBuf_;
  TBuf<TPosition::VECCALC> rampBuf_;
  TBuf<TPosition::VECCALC> maskBuf_[kMasks];
  TBuf<TPosition::VECCALC> partBuf_;
  TBuf<TPosition::VECCALC> part2Buf_;
  TBuf<TPosition::VECCALC> patBuf_;
  TBuf<TPosition::VECCALC> patOffBuf_;
  TBuf<TPosition::VECCALC> seqBuf_;
  TBuf<TPosition::VECIN> recBuf_;
  LocalTensor<float> hi_;
  LocalTensor<float> s_;
  LocalTensor<float> lo_;
  LocalTensor<float> scratch_;
  LocalTensor<int32_t> ramp_;
  TBuf<TPosition::VECCALC> hiNextBuf_;
  TBuf<TPosition::VECCALC> keyTmpBuf_;
  LocalTensor<float> hiNext_;  // the next row's hi digits (NextKeySteps)
  LocalTensor<float> keyTmp_;
  struct NextKeys {
    uint32_t row, lanes, step, steps;
    int32_t probe;  // the first count's threshold
    bool active;
  } next_{0, 0, 0, 0, 0, false};
  GivenCount given_{0, false};  // the current row's first count, issued by NextKeySteps
  TBuf<TPosition::VECCALC> onesBuf_;
  TBuf<TPosition::VECCALC> sinkMask_;
  TBuf<TPosition::VECCALC> rowRepeat_;
  TBuf<TPosition::VECCALC> partNextBuf_;
  TBuf<TPosition::VECCALC> part2NextBuf_;
};

}  // namespace

// qflat [B, Nq, maxQb, 2048] and kflat [B, Nk, maxKb, 2048] bf16 (contiguous), vbias [B, Nk, maxKb]
// fp32, the three int32 [B] lengths (prompt may be kvLens), the metadata, the outputs (pre-filled
// with -1 / 0) and the tiling. blockDim = tiling.aicNum AI cores, each an AIC and its two AIVs.
extern "C" __global__ __aicore__ void amct_stem_indexer_kernel(GM_ADDR qflat, GM_ADDR kflat, GM_ADDR vbias,
                                                               GM_ADDR qLens, GM_ADDR kvLens, GM_ADDR prompt,
                                                               GM_ADDR metadata, GM_ADDR indices, GM_ADDR seqLen,
                                                               GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  StemTiling t = amct_kernel::LoadTiling<StemTiling>(tiling);
  TPipe pipe;
  StemIndexer op;
  op.Init(qflat, kflat, vbias, qLens, kvLens, prompt, metadata, indices, seqLen, t, &pipe);
  op.Process();
}

extern "C" void amct_stem_indexer_launch(uint32_t blockDim, void* stream, uint8_t* qflat, uint8_t* kflat,
                                         uint8_t* vbias, uint8_t* qLens, uint8_t* kvLens, uint8_t* prompt,
                                         uint8_t* metadata, uint8_t* indices, uint8_t* seqLen, uint8_t* tiling) {
#if defined(AMCT_KERNEL_SIM)
  (void)stream;
  amct_sim::LaunchMix("amct_stem_indexer_kernel", blockDim, amct_stem::kSubBlocks, [=] {
    amct_stem_indexer_kernel(qflat, kflat, vbias, qLens, kvLens, prompt, metadata, indices, seqLen, tiling);
  });
#else
  amct_stem_indexer_kernel<<<blockDim, nullptr, stream>>>(qflat, kflat, vbias, qLens, kvLens, prompt, metadata,
                                                         indices, seqLen, tiling);
#endif
}
