// hifloat4_cast: HiFloat4 fake-quant, pack and unpack (docs/hifloat4.md), one AscendC
// vector kernel for the three operators (hifloat4_cast_tiling.h). Compiled by bisheng for
// dav-2201 and dav-3510 and, on every machine, by g++ against the kernel sim (the private
// _<op>_emulated ops, which test it on the CPU; the CPU ops themselves are native).
//
// Data: a flat run of 64-element blocks (the host moves the block dimension last). A tile is a
// multiple of 8 blocks; every stage is a vector op over the whole tile:
//
//   element level (64 per block)  widen, |x|, non-finite mask, sign, in-group codes, output
//   group level   (8 per block)   m4 (two half-group maxima), m8, the L2/L3 flags, and the
//                                 per-subgroup factors rec*2^(2-de) and S*2^(de-2)
//   block level   (1 per block)   vmax, p, e, q, S, rec = bf16(1/S), the poison flag
//
// Levels are linked by BlockReduceMax, WholeReduceMax/Min (down) and Brcb (up, x8 per 32-B block);
// the x4 broadcast from subgroups to elements is a Gather through a fixed offset table.
//
// Poison (spec C8, the design reason of upstream's exception 507057): non-finite lanes are
// zeroed from the exponent bits before any reduction, Div or Cast, so every intermediate is
// finite; the per-block poison flag lives in its own buffer; NaN is written only at the output,
// after the last Cast, by a Select (skipped when the tile has no poisoned block).
//
// Exactness (C8): fp32 Mul is RNE, every bf16(.) is Cast fp32->bf16 CAST_RINT and back, q is an
// fp32->fp32 CAST_RINT of an exact power-of-two scaling, floor(4t + 0.5) is +0.5 then CAST_TRUNC
// (t >= 0), divisions by 2^de are multiplications by exact powers of two, 1/S is one Div.
// Sign and zero-ness come from the bits of the masked value (sign bit set and magnitude bits
// non-zero), so -0.0 gives +0.0 and no denormal flush can flip a signed zero.
// Subnormals: fp16 inputs widen exactly by integer bit operations (amct_kernel::WidenExact) and
// fp16 outputs narrow through amct_kernel::NarrowToHalfExact (subnormal results from their bits),
// so results do not depend on whether the device flushes subnormal vector operands.
#include "kernel_operator.h"
#include "amct_kernel_common.h"
#include "hifloat4_cast_tiling.h"

using namespace AscendC;

namespace {

using amct_hif4::Hif4Tiling;

constexpr uint32_t kBlock = 64;          // elements per HiF4 block
constexpr uint32_t kGroupsPerBlock = 8;  // groups of 8 elements
constexpr uint32_t kMaxRepeat = 255;     // repeats per repeat-form call
constexpr uint32_t kGatherChunk = 8192;  // elements per Gather call (dav-2201: count < 256 * 64)

// A2 constants.
constexpr float kC7 = 0.142578125f;  // bf16(1/7) = 3E120000
constexpr float kSMin = 0x1p-48f;    // 27800000
constexpr float kSMax = 49152.0f;    // 47400000

// Lanes 0-3 / 4-7 of every 8-lane (32-B) block of an fp32 repeat: the two subgroups.
constexpr uint64_t kLowHalves = 0x0F0F0F0F0F0F0F0Full;
constexpr uint64_t kHighHalves = 0xF0F0F0F0F0F0F0F0ull;

using amct_kernel::BlockRange;
using amct_kernel::ForEachTile;
using amct_kernel::Reduce;
using amct_kernel::ReduceEachBlock;
using amct_kernel::ReduceEachRepeat;
using amct_kernel::WaitForPipe;

__aicore__ inline BlockRange RangeOfThisBlock(const Hif4Tiling& t) {
  return amct_kernel::RangeOfThisBlock(t.blockNum, t.blocksPerCore, t.blocksLastCore);
}

__aicore__ inline uint32_t RoundUp(uint32_t v, uint32_t m) { return (v + m - 1) / m * m; }

// Bit types of the input: fp32 is handled in 32-bit lanes, fp16/bf16 in 16-bit lanes.
template <typename T>
struct InTraits;
template <>
struct InTraits<float> {
  using Bits = uint32_t;
  using SBits = int32_t;
  static constexpr int32_t kInfBits = 0x7F800000;  // |x| >= this: Inf or NaN
};
template <>
struct InTraits<half> {
  using Bits = uint16_t;
  using SBits = int16_t;
  static constexpr int32_t kInfBits = 0x7C00;
};
template <>
struct InTraits<bfloat16_t> {
  using Bits = uint16_t;
  using SBits = int16_t;
  static constexpr int32_t kInfBits = 0x7F80;
};

// The scratch common to all modes: the Gather offset table of the subgroup broadcast, the
// quiet-NaN scalars and the clean-block mask of the output Select.
class Common {
 public:
  __aicore__ inline void InitCommon(TPipe* pipe, uint32_t tileBlocks) {
    tileBlocks_ = tileBlocks;
    uint32_t n = tileBlocks * kBlock;
    pipe->InitBuffer(offBuf_, n * 4);
    pipe->InitBuffer(constBuf_, 32);
    pipe->InitBuffer(cleanBuf_, tileBlocks * kGroupsPerBlock);
    LocalTensor<uint32_t> cu = constBuf_.Get<uint32_t>();
    cu.SetValue(0, 0x7FC00000u);  // fp32 quiet NaN
    cu.SetValue(1, 0x7FC07E00u);  // fp16 quiet NaN (low half), bf16 quiet NaN (high half)
    nanF_ = constBuf_.Get<float>().GetValue(0);
    nanFp16_ = constBuf_.Get<half>().GetValue(2);
    nanBf16AsHalf_ = constBuf_.Get<half>().GetValue(3);
  }

  // off[i] = byte offset of element i's subgroup factor in a [lo (8 U) | hi (8 U)] group array:
  // 4 * (k * 8U + i / 8) with k = (i / 4) % 2. Built with the scratch `tmp` (n uint32).
  __aicore__ inline void BuildOffsets(const LocalTensor<uint32_t>& tmp) {
    uint32_t n = tileBlocks_ * kBlock;
    int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<uint32_t> off = offBuf_.Get<uint32_t>();
    CreateVecIndex(off.ReinterpretCast<int32_t>(), int32_t(0), n);
    ShiftRight(tmp, off, uint32_t(2), cnt);    // i / 4
    ShiftLeft(tmp, tmp, uint32_t(31), cnt);    // k in bit 31
    ShiftRight(tmp, tmp, uint32_t(31), cnt);   // k
    Muls(tmp.ReinterpretCast<int32_t>(), tmp.ReinterpretCast<int32_t>(),
         static_cast<int32_t>(tileBlocks_ * kGroupsPerBlock), cnt);  // k * 8U
    ShiftRight(off, off, uint32_t(3), cnt);    // i / 8
    Add(off.ReinterpretCast<int32_t>(), off.ReinterpretCast<int32_t>(), tmp.ReinterpretCast<int32_t>(), cnt);
    ShiftLeft(off, off, uint32_t(2), cnt);     // bytes
  }

  // dst[i] = groups[subgroup of element i], for the n elements of a tile.
  __aicore__ inline void BroadcastSubgroups(const LocalTensor<float>& dst, const LocalTensor<float>& groups,
                                            uint32_t n) {
    LocalTensor<uint32_t> off = offBuf_.Get<uint32_t>();
    for (uint32_t i = 0; i < n; i += kGatherChunk) {
      uint32_t len = n - i < kGatherChunk ? n - i : kGatherChunk;
      Gather(dst[i], groups, off[i], 0u, len);
    }
  }

  // y = v rounded to nearest even (v is consumed, scratch and mask are work space): fp16 through
  // amct_kernel::NarrowToHalfExact (its subnormal results must not be flushed), bf16 by the Cast
  // (every bf16 result here is normal).
  template <typename TOut>
  static __aicore__ inline void NarrowOutput(const LocalTensor<TOut>& y, const LocalTensor<float>& v,
                                             const LocalTensor<float>& scratch, const LocalTensor<uint8_t>& mask,
                                             uint32_t n) {
    if constexpr (amct_kernel::IsHalf<TOut>::value) {
      amct_kernel::NarrowToHalfExact(y, v, scratch, mask, n);
    } else {
      Cast(y, v, RoundMode::CAST_RINT, n);
    }
  }

  // The clean-element mask of the output Select from the per-group poison flags (0/1): byte j
  // (group j) = 0xFF where the block is clean, built in float and converted exactly to uint8.
  __aicore__ inline LocalTensor<uint8_t> CleanMask(const LocalTensor<float>& poisonG,
                                                   const LocalTensor<half>& halfScratch, uint32_t groups) {
    int32_t cnt = static_cast<int32_t>(groups);
    Muls(poisonG, poisonG, -255.0f, cnt);
    Adds(poisonG, poisonG, 255.0f, cnt);
    Cast(halfScratch, poisonG, RoundMode::CAST_RINT, groups);
    LocalTensor<uint8_t> clean = cleanBuf_.Get<uint8_t>();
    Cast(clean, halfScratch, RoundMode::CAST_RINT, groups);
    return clean;
  }

 protected:
  uint32_t tileBlocks_ = 0;
  float nanF_ = 0.0f;
  half nanFp16_;
  half nanBf16AsHalf_;
  TBuf<TPosition::VECCALC> offBuf_;
  TBuf<TPosition::VECCALC> constBuf_;
  TBuf<TPosition::VECCALC> cleanBuf_;
};

// Group-level slots (8 U floats each) and block-level slots (U floats each) of the quantiser.
enum GroupSlot : uint32_t {
  kGM4Lo = 0,  // m4 of subgroup 0 of each group; kGM4Hi follows (both reductions write them)
  kGM4Hi,
  kGM8,      // m8, then rec * 4 * 2^-l2
  kGRec,     // rec broadcast
  kGS,       // S broadcast, then S / 4 * 2^l2
  kGL2,      // l2 flag (0/1)
  kGThr,     // 2 * 2^l2
  kGTmp,
  kGL3Lo,    // l3 flags (0/1)
  kGL3Hi,
  kGRecLo,   // rec * 2^(2 - de) per subgroup: lo | hi (the Gather source)
  kGRecHi,
  kGSLo,     // S * 2^(de - 2) per subgroup: lo | hi
  kGSHi,
  kGOnes,    // 1.0 constant
  kGPoison,  // poison flag broadcast
  kGW1,      // pack: flag weights of byte 1 (128 >> j), byte 2/3 of subgroups 0 and 1
  kGWLo,
  kGWHi,
  kGroupSlots
};
enum BlockSlot : uint32_t {
  kBMax = 0,  // vmax, then p
  kBExp,      // biased exponent of p (uint32)
  kBPow,      // power-of-two bit patterns
  kBQ,
  kBS,
  kBRec,
  kBOnes,
  kBPoison,   // 0/1
  kBBf16,     // bf16 scratch
  kBByte0,    // pack: the four scale bytes as floats
  kBByte1,
  kBByte2,
  kBByte3,
  kBTmp,
  kBlockSlots
};

// Fake-quant (kPack false) and pack (kPack true) of input type T.
template <typename T, bool kPack>
class Quantiser : public Common {
  using Bits = typename InTraits<T>::Bits;
  using SBits = typename InTraits<T>::SBits;
  static constexpr uint32_t kBits = sizeof(Bits) * 8;

 public:
  __aicore__ inline void Init(GM_ADDR input, GM_ADDR out0, GM_ADDR out1, const Hif4Tiling& t, TPipe* pipe) {
    range_ = RangeOfThisBlock(t);
    U_ = t.tileBlocks;
    uint32_t n = U_ * kBlock;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(input) + range_.start * kBlock, range_.length * kBlock);
    if constexpr (kPack) {
      scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(out0) + range_.start * 4, range_.length * 4);
      valueGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(out1) + range_.start * 32, range_.length * 32);
    } else {
      yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out0) + range_.start * kBlock, range_.length * kBlock);
    }
    // The host's ubBytes() mirrors this list (hifloat4_cast_host.cpp).
    pipe->InitBuffer(inQueue_, 2, n * static_cast<uint32_t>(sizeof(T)));
    if constexpr (kPack) {
      pipe->InitBuffer(valueQueue_, 2, n / 2);
      pipe->InitBuffer(scaleQueue_, 2, U_ * 4);
    } else {
      pipe->InitBuffer(outQueue_, 2, n * static_cast<uint32_t>(sizeof(T)));
    }
    pipe->InitBuffer(aBuf_, n * 4);
    pipe->InitBuffer(absBuf_, n * static_cast<uint32_t>(sizeof(T)));
    pipe->InitBuffer(signBuf_, n * static_cast<uint32_t>(sizeof(T)));
    pipe->InitBuffer(w1Buf_, n * 4);
    pipe->InitBuffer(w2Buf_, n * 4);
    pipe->InitBuffer(groupBuf_, kGroupSlots * U_ * kGroupsPerBlock * 4);
    pipe->InitBuffer(blockBuf_, kBlockSlots * U_ * 4);
    pipe->InitBuffer(maskBuf_, 2 * RoundUp(U_, 32));
    InitCommon(pipe, U_);
    BuildOffsets(w1Buf_.Get<uint32_t>());
    Duplicate(G(kGOnes), 1.0f, static_cast<int32_t>(U_ * kGroupsPerBlock));
    Duplicate(B(kBOnes), 1.0f, static_cast<int32_t>(U_));
    if constexpr (kPack) BuildFlagWeights();
  }

  __aicore__ inline void Process() {
    ForEachTile(range_.length, U_, *this);
  }

  // One tile: the step amct_kernel::ForEachTile calls.
  __aicore__ inline void ProcessTile(uint64_t done, uint32_t u) {
    CopyIn(done, u);
    Compute(u);
    CopyOut(done, u);
  }

 private:
  __aicore__ inline LocalTensor<float> G(uint32_t slot) {
    return groupBuf_.Get<float>()[slot * U_ * kGroupsPerBlock];
  }
  __aicore__ inline LocalTensor<float> B(uint32_t slot) { return blockBuf_.Get<float>()[slot * U_]; }
  static __aicore__ inline LocalTensor<uint32_t> U32(const LocalTensor<float>& t) {
    return t.ReinterpretCast<uint32_t>();
  }
  static __aicore__ inline LocalTensor<int32_t> I32(const LocalTensor<float>& t) {
    return t.ReinterpretCast<int32_t>();
  }

  // Pack byte weights per group j: byte 1 bit 7-j; bytes 2/3 bit 7-2(j%4) (subgroup 0) and
  // 6-2(j%4) (subgroup 1). Written once by the scalar unit (8 U values each).
  __aicore__ inline void BuildFlagWeights() {
    LocalTensor<float> w1 = G(kGW1);
    LocalTensor<float> wlo = G(kGWLo);
    LocalTensor<float> whi = G(kGWHi);
    for (uint32_t i = 0; i < U_ * kGroupsPerBlock; ++i) {
      uint32_t j = i % kGroupsPerBlock;
      w1.SetValue(i, static_cast<float>(128u >> j));
      wlo.SetValue(i, static_cast<float>(128u >> (2 * (j % 4))));
      whi.SetValue(i, static_cast<float>(64u >> (2 * (j % 4))));
    }
    WaitForPipe<HardEvent::S_V>();  // the vector unit reads the weights
  }

  __aicore__ inline void CopyIn(uint64_t block, uint32_t u) {
    LocalTensor<T> x = inQueue_.template AllocTensor<T>();
    DataCopy(x, xGm_[block * kBlock], u * kBlock);
    inQueue_.EnQue(x);
  }

  // Stage 1 (A2 step 1): |x| with non-finite lanes zeroed, the poison flags, the sign bits.
  __aicore__ inline LocalTensor<float> Mask(const LocalTensor<T>& x, uint32_t n, uint32_t blocks) {
    int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<Bits> xb = x.template ReinterpretCast<Bits>();
    LocalTensor<Bits> abs = absBuf_.Get<Bits>();
    LocalTensor<Bits> sign = signBuf_.Get<Bits>();
    LocalTensor<SBits> absS = abs.template ReinterpretCast<SBits>();
    LocalTensor<SBits> signS = sign.template ReinterpretCast<SBits>();
    ShiftLeft(abs, xb, Bits(1), cnt);
    ShiftRight(abs, abs, Bits(1), cnt);  // |x| bits
    // keep = all ones where |x| < Inf (finite), else 0: the sign of |x| - Inf, spread.
    Adds(signS, absS, static_cast<SBits>(-InTraits<T>::kInfBits), cnt);
    ShiftRight(signS, signS, static_cast<SBits>(kBits - 1), cnt);
    // Poison flag per block (1 poisoned, 0 clean), reduced in fp32 (the fastest reduction):
    // fp16/bf16: keep as fp32 (-1.0 finite, 0.0 not), block max + 1; fp32: keep >> 2 (logical),
    // 0x3FFFFFFF (just under 2.0: normal, finite) where finite, +0 where not, 1 - min(block
    // min, 1). No NaN or Inf reaches the reduction.
    LocalTensor<float> flags = w1Buf_.Get<float>();
    if constexpr (sizeof(T) == 4) {
      ShiftRight(flags.template ReinterpretCast<uint32_t>(), sign.template ReinterpretCast<uint32_t>(), uint32_t(2),
                 cnt);
    } else {
      Cast(flags, signS, RoundMode::CAST_NONE, n);
    }
    LocalTensor<float> poison = B(kBPoison);
    for (uint32_t b = 0; b < blocks; b += kMaxRepeat) {
      uint32_t rep = blocks - b < kMaxRepeat ? blocks - b : kMaxRepeat;
      if constexpr (sizeof(T) == 4) {
        ReduceEachRepeat<Reduce::kMin>(poison[b], flags[b * kBlock], int32_t(kBlock), static_cast<int32_t>(rep), 1, 1, 8,
                                       ReduceOrder::ORDER_ONLY_VALUE);
      } else {
        ReduceEachRepeat<Reduce::kMax>(poison[b], flags[b * kBlock], int32_t(kBlock), static_cast<int32_t>(rep), 1, 1, 8,
                                       ReduceOrder::ORDER_ONLY_VALUE);
      }
    }
    int32_t bc = static_cast<int32_t>(blocks);
    if constexpr (sizeof(T) == 4) {
      Mins(poison, poison, 1.0f, bc);
      Muls(poison, poison, -1.0f, bc);
    }
    Adds(poison, poison, 1.0f, bc);
    // a = |x'|: the magnitude bits where finite, else +0.
    And(abs.template ReinterpretCast<uint16_t>(), abs.template ReinterpretCast<uint16_t>(),
        sign.template ReinterpretCast<uint16_t>(), static_cast<int32_t>(n * sizeof(Bits) / 2));
    // Sign of x': the sign bit, kept only where the magnitude bits are non-zero (min(s, |x'|)).
    ShiftRight(sign, xb, Bits(kBits - 1), cnt);
    Min(signS, signS, absS, cnt);
    if constexpr (!kPack) ShiftLeft(sign, sign, Bits(kBits - 1), cnt);
    if constexpr (sizeof(T) == 4) {
      return abs.template ReinterpretCast<float>();
    } else {
      LocalTensor<float> a = aBuf_.Get<float>();
      if constexpr (amct_kernel::IsHalf<T>::value) {
        // Exact for subnormals too, without a Cast that could flush them (abs is free after this).
        amct_kernel::WidenExact(a, abs.template ReinterpretCast<half>(), w2Buf_.Get<float>(), n);
      } else {
        Cast(a, abs.template ReinterpretCast<T>(), RoundMode::CAST_NONE, n);  // bf16: code 0 below 2^-126 anyway
      }
      return a;
    }
  }

  // bf16 scratch of n elements: free once stage 1 is done.
  __aicore__ inline LocalTensor<bfloat16_t> Bf16Scratch() {
    if constexpr (sizeof(T) == 4) {
      return aBuf_.Get<bfloat16_t>();
    } else {
      return absBuf_.Get<bfloat16_t>();
    }
  }

  // v = bf16(v), n values.
  static __aicore__ inline void RoundBf16(const LocalTensor<float>& v, const LocalTensor<bfloat16_t>& scratch,
                                          uint32_t n) {
    Cast(scratch, v, RoundMode::CAST_RINT, n);
    Cast(v, scratch, RoundMode::CAST_NONE, n);
  }

  // Stages 2-6 (A2 steps 2-6): maxima, S, rec, the flags and the per-subgroup factors.
  __aicore__ inline void Scales(const LocalTensor<float>& a, uint32_t blocks) {
    uint32_t groups = blocks * kGroupsPerBlock;
    int32_t gc = static_cast<int32_t>(groups);
    int32_t bc = static_cast<int32_t>(blocks);
    const uint64_t lowMask[2] = {kLowHalves, 0};
    const uint64_t highMask[2] = {kHighHalves, 0};
    // A2 step 2: one repeat = one block (64 fp32), one result per 32-B group.
    for (uint32_t b = 0; b < blocks; b += kMaxRepeat) {
      uint32_t rep = blocks - b < kMaxRepeat ? blocks - b : kMaxRepeat;
      ReduceEachBlock<Reduce::kMax>(G(kGM4Lo)[b * kGroupsPerBlock], a[b * kBlock], lowMask, static_cast<int32_t>(rep), 1, 1, 8);
      ReduceEachBlock<Reduce::kMax>(G(kGM4Hi)[b * kGroupsPerBlock], a[b * kBlock], highMask, static_cast<int32_t>(rep), 1, 1,
                                    8);
    }
    LocalTensor<float> m8 = G(kGM8);
    Max(m8, G(kGM4Lo), G(kGM4Hi), gc);
    LocalTensor<float> p = B(kBMax);
    for (uint32_t b = 0; b < blocks; b += 8 * kMaxRepeat) {  // 8 blocks (64 groups) per repeat
      uint32_t rep = (blocks - b < 8 * kMaxRepeat ? blocks - b : 8 * kMaxRepeat) / 8;
      ReduceEachBlock<Reduce::kMax>(p[b], m8[b * kGroupsPerBlock], int32_t(64), static_cast<int32_t>(rep), 1, 1, 8);
    }
    // A2 step 3: p = clamp(bf16(vmax * C7)); e from the bits; q = RNE(p * 2^(2-e)); S = q * 2^(e-2).
    LocalTensor<bfloat16_t> bf = B(kBBf16).template ReinterpretCast<bfloat16_t>();
    Muls(p, p, kC7, bc);
    RoundBf16(p, bf, blocks);
    Maxs(p, p, kSMin, bc);
    Mins(p, p, kSMax, bc);
    LocalTensor<float> eb = B(kBExp);
    LocalTensor<float> pw = B(kBPow);
    LocalTensor<float> q = B(kBQ);
    LocalTensor<float> s = B(kBS);
    ShiftRight(U32(eb), U32(p), uint32_t(23), bc);  // biased exponent E = e + 127, in [79, 142]
    Muls(I32(pw), I32(eb), int32_t(-1), bc);
    Adds(I32(pw), I32(pw), int32_t(256), bc);
    ShiftLeft(U32(pw), U32(pw), uint32_t(23), bc);  // 2^(2-e): biased 129 - e = 256 - E
    Mul(q, p, pw, bc);
    Cast(q, q, RoundMode::CAST_RINT, blocks);  // in {4, ..., 8}, ties to even
    Adds(I32(pw), I32(eb), int32_t(-2), bc);
    ShiftLeft(U32(pw), U32(pw), uint32_t(23), bc);  // 2^(e-2)
    Mul(s, q, pw, bc);
    // A2 step 4: rec = bf16(1/S).
    LocalTensor<float> rec = B(kBRec);
    Div(rec, B(kBOnes), s, bc);
    RoundBf16(rec, bf, blocks);
    // Up to the group level.
    uint8_t brcbRepeats = static_cast<uint8_t>(blocks / 8);  // blocks <= 8 * 255 (tile cap)
    LocalTensor<float> recG = G(kGRec);
    LocalTensor<float> sG = G(kGS);
    Brcb(recG, rec, brcbRepeats, BrcbRepeatParams(1, 8));
    Brcb(sG, s, brcbRepeats, BrcbRepeatParams(1, 8));
    // A2 step 5: l2 = fp32(m8 * rec) >= 4.
    LocalTensor<float> tmp = G(kGTmp);
    LocalTensor<float> l2 = G(kGL2);
    LocalTensor<float> ones = G(kGOnes);
    LocalTensor<uint8_t> mask = maskBuf_.Get<uint8_t>();
    Mul(tmp, m8, recG, gc);
    Compares(mask, tmp, 4.0f, CMPMODE::GE, groups);
    Select(l2, mask, ones, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, groups);
    // A2 step 6 threshold: fp32(m4 * rec) * 2^-l2 >= 2  <=>  fp32(m4 * rec) >= 2 * 2^l2 (exact scaling).
    LocalTensor<float> thr = G(kGThr);
    Muls(thr, l2, 2.0f, gc);
    Adds(thr, thr, 2.0f, gc);
    // rec * 4 * 2^-l2 (into m8's slot) and S / 4 * 2^l2 (in place): exact powers of two.
    LocalTensor<float> recBase = m8;
    Muls(tmp, l2, -2.0f, gc);
    Adds(tmp, tmp, 4.0f, gc);
    Mul(recBase, recG, tmp, gc);
    Adds(tmp, l2, 1.0f, gc);
    Muls(tmp, tmp, 0.25f, gc);
    Mul(sG, sG, tmp, gc);
    SubgroupFactors(G(kGM4Lo), G(kGL3Lo), G(kGRecLo), G(kGSLo), groups);
    SubgroupFactors(G(kGM4Hi), G(kGL3Hi), G(kGRecHi), G(kGSHi), groups);
  }

  // A2 step 6 for one subgroup of every group, and its factors rec*2^(2-de), S*2^(de-2).
  __aicore__ inline void SubgroupFactors(const LocalTensor<float>& m4, const LocalTensor<float>& l3,
                                         const LocalTensor<float>& recSub, const LocalTensor<float>& sSub,
                                         uint32_t groups) {
    int32_t gc = static_cast<int32_t>(groups);
    LocalTensor<float> tmp = G(kGTmp);
    LocalTensor<uint8_t> mask = maskBuf_.Get<uint8_t>()[RoundUp(U_, 32)];
    Mul(tmp, m4, G(kGRec), gc);
    Compare(mask, tmp, G(kGThr), CMPMODE::GE, groups);
    Select(l3, mask, G(kGOnes), 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, groups);
    Muls(tmp, l3, -0.5f, gc);
    Adds(tmp, tmp, 1.0f, gc);
    Mul(recSub, G(kGM8), tmp, gc);  // kGM8 holds rec * 4 * 2^-l2
    Adds(tmp, l3, 1.0f, gc);
    Mul(sSub, G(kGS), tmp, gc);     // kGS holds S / 4 * 2^l2
  }

  // Stage 7 (A2 step 7): c = min(floor(4 bf16(t) + 0.5), 7) with 4t = fp32(a * rec) * 2^(2-de), into w1.
  __aicore__ inline LocalTensor<float> Codes(const LocalTensor<float>& a, uint32_t n) {
    int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<float> c = w1Buf_.Get<float>();
    LocalTensor<float> f = w2Buf_.Get<float>();
    BroadcastSubgroups(f, G(kGRecLo), n);
    Mul(c, a, f, cnt);
    RoundBf16(c, Bf16Scratch(), n);
    Adds(c, c, 0.5f, cnt);
    Cast(c, c, RoundMode::CAST_TRUNC, n);
    Mins(c, c, 7.0f, cnt);
    return c;
  }

  // Is any block of the tile poisoned? (scalar reads of the block flags)
  __aicore__ inline bool AnyPoison(uint32_t u) {
    LocalTensor<float> poison = B(kBPoison);
    WaitForPipe<HardEvent::V_S>();
    bool any = false;
    for (uint32_t b = 0; b < u && !any; ++b) any = poison.GetValue(b) > 0.5f;
    WaitForPipe<HardEvent::S_V>();  // the next tile's vector ops overwrite the flags
    return any;
  }

  __aicore__ inline void Compute(uint32_t u) {
    uint32_t blocks = RoundUp(u, 8);
    uint32_t n = blocks * kBlock;
    LocalTensor<T> x = inQueue_.template DeQue<T>();
    if (blocks > u) {  // whole zero blocks up to the multiple of 8 (computed, never stored)
      Duplicate(x.template ReinterpretCast<uint16_t>()[u * kBlock * sizeof(T) / 2], uint16_t(0),
                static_cast<int32_t>((blocks - u) * kBlock * sizeof(T) / 2));
    }
    LocalTensor<float> a = Mask(x, n, blocks);
    inQueue_.FreeTensor(x);
    Scales(a, blocks);
    LocalTensor<float> c = Codes(a, n);
    if constexpr (kPack) {
      PackBytes(c, n, u, blocks);
    } else {
      Reconstruct(c, n, u, blocks);
    }
  }

  // A2 steps 8-10: out = c * S * 2^(de-2), signed by bits, narrowed, NaN for poisoned blocks.
  __aicore__ inline void Reconstruct(const LocalTensor<float>& c, uint32_t n, uint32_t u, uint32_t blocks) {
    int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<float> f = w2Buf_.Get<float>();
    BroadcastSubgroups(f, G(kGSLo), n);
    LocalTensor<T> y = outQueue_.template AllocTensor<T>();
    LocalTensor<uint16_t> sign16 = signBuf_.Get<uint16_t>();
    if constexpr (sizeof(T) == 4) {
      Mul(y, c, f, cnt);
      Or(y.template ReinterpretCast<uint16_t>(), y.template ReinterpretCast<uint16_t>(), sign16, 2 * cnt);
    } else {
      Mul(c, c, f, cnt);
      NarrowOutput(y, c, f, cleanBuf_.Get<uint8_t>(), n);  // fp16: RNE onto the subnormal grid; bf16: exact
      Or(y.template ReinterpretCast<uint16_t>(), y.template ReinterpretCast<uint16_t>(), sign16, cnt);
    }
    if (AnyPoison(u)) {
      LocalTensor<float> poisonG = G(kGPoison);
      Brcb(poisonG, B(kBPoison), static_cast<uint8_t>(blocks / 8), BrcbRepeatParams(1, 8));
      LocalTensor<uint8_t> clean = CleanMask(poisonG, G(kGTmp).template ReinterpretCast<half>(), blocks * kGroupsPerBlock);
      if constexpr (sizeof(T) == 4) {
        Select(y, clean, y, nanF_, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
      } else {
        LocalTensor<half> yh = y.template ReinterpretCast<half>();
        half nan = sizeof(T) == 2 && InTraits<T>::kInfBits == 0x7C00 ? nanFp16_ : nanBf16AsHalf_;
        Select(yh, clean, yh, nan, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
      }
    }
    outQueue_.EnQue(y);
  }

  // A3: value bytes (nibble = 8 [x' < 0] + c; even element low) and the four scale bytes.
  __aicore__ inline void PackBytes(const LocalTensor<float>& c, uint32_t n, uint32_t u, uint32_t blocks) {
    int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<float> s01 = w2Buf_.Get<float>();
    Cast(s01, signBuf_.Get<SBits>(), RoundMode::CAST_NONE, n);
    Muls(s01, s01, 8.0f, cnt);
    Add(c, c, s01, cnt);  // nibble in 0..15
    LocalTensor<half> nib = w2Buf_.Get<half>();
    Cast(nib, c, RoundMode::CAST_RINT, n);
    LocalTensor<half> even = nib[n];
    LocalTensor<half> odd = nib[n + n / 2];
    uint64_t kept = 0;
    for (uint32_t i = 0; i < n; i += 128 * kMaxRepeat) {  // 128 halves per repeat
      uint32_t len = n - i < 128 * kMaxRepeat ? n - i : 128 * kMaxRepeat;
      GatherMaskParams params(1, static_cast<uint16_t>(len / 128), 8, 0);
      GatherMask(even[i / 2], nib[i], uint8_t(1), false, 0u, params, kept);
      GatherMask(odd[i / 2], nib[i], uint8_t(2), false, 0u, params, kept);
    }
    int32_t pairs = static_cast<int32_t>(n / 2);
    Muls(odd, odd, half(16.0f), pairs);
    Add(even, even, odd, pairs);
    LocalTensor<uint8_t> value = valueQueue_.template AllocTensor<uint8_t>();
    Cast(value, even, RoundMode::CAST_RINT, n / 2);
    valueQueue_.EnQue(value);
    ScaleBytes(u, blocks);
  }

  __aicore__ inline void ScaleBytes(uint32_t u, uint32_t blocks) {
    int32_t gc = static_cast<int32_t>(blocks * kGroupsPerBlock);
    int32_t bc = static_cast<int32_t>(blocks);
    // Byte 0: E6M2 = 4 E + q - 320 (E = e + 127), 255 where poisoned: e6 + poison (255 - e6).
    LocalTensor<float> b0 = B(kBByte0);
    LocalTensor<float> tmp = B(kBTmp);
    Cast(b0, I32(B(kBExp)), RoundMode::CAST_NONE, blocks);
    Muls(b0, b0, 4.0f, bc);
    Add(b0, b0, B(kBQ), bc);
    Adds(b0, b0, -320.0f, bc);
    Muls(tmp, b0, -1.0f, bc);
    Adds(tmp, tmp, 255.0f, bc);
    Mul(tmp, tmp, B(kBPoison), bc);
    Add(b0, b0, tmp, bc);
    // Bytes 1-3: sums of weighted flags over the 8 groups / the two halves of the groups.
    LocalTensor<float> g = G(kGTmp);
    LocalTensor<float> g2 = G(kGThr);
    Mul(g, G(kGL2), G(kGW1), gc);
    uint32_t rep = blocks / 8;  // 8 blocks of 8 groups per repeat
    ReduceEachBlock<Reduce::kSum>(B(kBByte1), g, int32_t(64), static_cast<int32_t>(rep), 1, 1, 8);
    Mul(g, G(kGL3Lo), G(kGWLo), gc);
    Mul(g2, G(kGL3Hi), G(kGWHi), gc);
    Add(g, g, g2, gc);
    const uint64_t lowMask[2] = {kLowHalves, 0};
    const uint64_t highMask[2] = {kHighHalves, 0};
    ReduceEachBlock<Reduce::kSum>(B(kBByte2), g, lowMask, static_cast<int32_t>(rep), 1, 1, 8);
    ReduceEachBlock<Reduce::kSum>(B(kBByte3), g, highMask, static_cast<int32_t>(rep), 1, 1, 8);
    // Interleave the 4 u bytes (scalar: 4 per block).
    LocalTensor<uint8_t> scale = scaleQueue_.template AllocTensor<uint8_t>();
    LocalTensor<float> b1 = B(kBByte1);
    LocalTensor<float> b2 = B(kBByte2);
    LocalTensor<float> b3 = B(kBByte3);
    WaitForPipe<HardEvent::V_S>();     // the byte values
    WaitForPipe<HardEvent::MTE3_S>();  // the previous tile's scale DMA has read `scale`
    for (uint32_t b = 0; b < u; ++b) {
      scale.SetValue(4 * b, static_cast<uint8_t>(static_cast<uint32_t>(b0.GetValue(b))));
      scale.SetValue(4 * b + 1, static_cast<uint8_t>(static_cast<uint32_t>(b1.GetValue(b))));
      scale.SetValue(4 * b + 2, static_cast<uint8_t>(static_cast<uint32_t>(b2.GetValue(b))));
      scale.SetValue(4 * b + 3, static_cast<uint8_t>(static_cast<uint32_t>(b3.GetValue(b))));
    }
    WaitForPipe<HardEvent::S_V>();  // the next tile's vector ops overwrite the byte values
    scaleQueue_.EnQue(scale);
  }

  __aicore__ inline void CopyOut(uint64_t block, uint32_t u) {
    if constexpr (kPack) {
      LocalTensor<uint8_t> value = valueQueue_.template DeQue<uint8_t>();
      DataCopy(valueGm_[block * 32], value, u * 32);
      valueQueue_.FreeTensor(value);
      LocalTensor<uint8_t> scale = scaleQueue_.template DeQue<uint8_t>();
      WaitForPipe<HardEvent::S_MTE3>();  // the scale bytes were written by the scalar unit
      DataCopyExtParams params{1, u * 4, 0, 0, 0};
      DataCopyPad(scaleGm_[block * 4], scale, params);
      scaleQueue_.FreeTensor(scale);
    } else {
      LocalTensor<T> y = outQueue_.template DeQue<T>();
      DataCopy(yGm_[block * kBlock], y, u * kBlock);
      outQueue_.FreeTensor(y);
    }
  }

  BlockRange range_;
  uint32_t U_ = 0;
  GlobalTensor<T> xGm_;
  GlobalTensor<T> yGm_;
  GlobalTensor<uint8_t> scaleGm_;
  GlobalTensor<uint8_t> valueGm_;
  TQue<TPosition::VECIN, 1> inQueue_;
  TQue<TPosition::VECOUT, 1> outQueue_;
  TQue<TPosition::VECOUT, 1> valueQueue_;
  TQue<TPosition::VECOUT, 1> scaleQueue_;
  TBuf<TPosition::VECCALC> aBuf_;
  TBuf<TPosition::VECCALC> absBuf_;
  TBuf<TPosition::VECCALC> signBuf_;
  TBuf<TPosition::VECCALC> w1Buf_;
  TBuf<TPosition::VECCALC> w2Buf_;
  TBuf<TPosition::VECCALC> groupBuf_;
  TBuf<TPosition::VECCALC> blockBuf_;
  TBuf<TPosition::VECCALC> maskBuf_;
};

// Unpack (A4) to output type TOut: elementwise, with the per-subgroup factors S/4 * 2^de built
// at the group level from the scale bytes, and the signed codes from a 256-entry byte table.
enum UnpackGroupSlot : uint32_t {
  kUF = 0,   // S / 4 broadcast, then S / 4 * 2^l2
  kUL2,      // byte 1 broadcast (int32)
  kUW,       // bytes 2, 3 as one 16-bit number (int32)
  kUT,       // int32 scratch
  kUT2,      // float scratch
  kUFLo,     // the Gather source: factor of subgroup 0 | subgroup 1
  kUFHi,
  kUP2,      // 2^j (int32)
  kUP4,      // 4^j
  kUP4x2,    // 2 * 4^j
  kUPoison,  // poison flag broadcast
  kUnpackGroupSlots
};
enum UnpackBlockSlot : uint32_t { kUBF = 0, kUBL2, kUBW, kUBPoison, kUnpackBlockSlots };

template <typename TOut>
class Unpacker : public Common {
 public:
  __aicore__ inline void Init(GM_ADDR scale, GM_ADDR value, GM_ADDR output, const Hif4Tiling& t, TPipe* pipe) {
    range_ = RangeOfThisBlock(t);
    U_ = t.tileBlocks;
    uint32_t n = U_ * kBlock;
    scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(scale) + range_.start * 4, range_.length * 4);
    valueGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(value) + range_.start * 32, range_.length * 32);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ TOut*>(output) + range_.start * kBlock, range_.length * kBlock);
    // The host's ubBytes() mirrors this list (hifloat4_cast_host.cpp).
    pipe->InitBuffer(scaleQueue_, 2, U_ * 4);
    pipe->InitBuffer(valueQueue_, 2, U_ * 32);
    pipe->InitBuffer(outQueue_, 2, n * static_cast<uint32_t>(sizeof(TOut)));
    pipe->InitBuffer(aBuf_, n * 4);
    pipe->InitBuffer(bBuf_, n * 4);
    pipe->InitBuffer(lutBuf_, 256 * 4);
    pipe->InitBuffer(groupBuf_, kUnpackGroupSlots * U_ * kGroupsPerBlock * 4);
    pipe->InitBuffer(blockBuf_, kUnpackBlockSlots * U_ * 4);
    InitCommon(pipe, U_);
    BuildOffsets(aBuf_.Get<uint32_t>());
    BuildTables();
  }

  __aicore__ inline void Process() {
    ForEachTile(range_.length, U_, *this);
  }

  // One tile: the step amct_kernel::ForEachTile calls.
  __aicore__ inline void ProcessTile(uint64_t done, uint32_t u) {
    CopyIn(done, u);
    Compute(u);
    CopyOut(done, u);
  }

 private:
  __aicore__ inline LocalTensor<float> G(uint32_t slot) {
    return groupBuf_.Get<float>()[slot * U_ * kGroupsPerBlock];
  }
  __aicore__ inline LocalTensor<int32_t> GI(uint32_t slot) { return G(slot).template ReinterpretCast<int32_t>(); }
  __aicore__ inline LocalTensor<float> B(uint32_t slot) { return blockBuf_.Get<float>()[slot * U_]; }

  // The byte table (two halves per byte: the signed codes of its low and high nibble, -0.0 for
  // nibble 8) and the per-group bit weights, written once by the scalar unit.
  __aicore__ inline void BuildTables() {
    LocalTensor<half> lut = lutBuf_.Get<half>();
    for (uint32_t byte = 0; byte < 256; ++byte) {
      for (uint32_t k = 0; k < 2; ++k) {
        uint32_t nibble = (byte >> (4 * k)) & 15u;
        float code = static_cast<float>(nibble & 7u);
        lut.SetValue(2 * byte + k, half(nibble >= 8 ? -code : code));
      }
    }
    LocalTensor<int32_t> p2 = GI(kUP2);
    LocalTensor<int32_t> p4 = GI(kUP4);
    LocalTensor<int32_t> p4x2 = GI(kUP4x2);
    for (uint32_t i = 0; i < U_ * kGroupsPerBlock; ++i) {
      uint32_t j = i % kGroupsPerBlock;
      p2.SetValue(i, static_cast<int32_t>(1u << j));
      p4.SetValue(i, static_cast<int32_t>(1u << (2 * j)));
      p4x2.SetValue(i, static_cast<int32_t>(2u << (2 * j)));
    }
    WaitForPipe<HardEvent::S_V>();  // the vector unit reads the tables
  }

  __aicore__ inline void CopyIn(uint64_t block, uint32_t u) {
    LocalTensor<uint8_t> scale = scaleQueue_.template AllocTensor<uint8_t>();
    DataCopyExtParams params{1, u * 4, 0, 0, 0};
    DataCopyPadExtParams<uint8_t> noPad{false, 0, 0, 0};
    DataCopyPad(scale, scaleGm_[block * 4], params, noPad);
    scaleQueue_.EnQue(scale);
    LocalTensor<uint8_t> value = valueQueue_.template AllocTensor<uint8_t>();
    DataCopy(value, valueGm_[block * 32], u * 32);
    valueQueue_.EnQue(value);
  }

  // flag = (w * weight >> shift) & 1, as 2^flag in float: 1.0 or 2.0.
  __aicore__ inline void FlagFactor(const LocalTensor<float>& dst, const LocalTensor<int32_t>& w,
                                    const LocalTensor<int32_t>& weight, uint32_t shift, int32_t gc) {
    LocalTensor<int32_t> t = GI(kUT);
    LocalTensor<uint32_t> tu = t.ReinterpretCast<uint32_t>();
    Mul(t, w, weight, gc);
    ShiftRight(tu, tu, shift, gc);
    ShiftLeft(tu, tu, uint32_t(31), gc);
    ShiftRight(tu, tu, uint32_t(31), gc);
    Cast(dst, t, RoundMode::CAST_NONE, static_cast<uint32_t>(gc));
    Adds(dst, dst, 1.0f, gc);
  }

  __aicore__ inline void Compute(uint32_t u) {
    uint32_t blocks = RoundUp(u, 8);
    uint32_t n = blocks * kBlock;
    int32_t cnt = static_cast<int32_t>(n);
    int32_t gc = static_cast<int32_t>(blocks * kGroupsPerBlock);
    LocalTensor<uint8_t> scale = scaleQueue_.template DeQue<uint8_t>();
    LocalTensor<uint8_t> value = valueQueue_.template DeQue<uint8_t>();
    if (blocks > u) {  // zero bytes for the padding blocks (computed, never stored)
      Duplicate(value.ReinterpretCast<uint16_t>()[u * 16], uint16_t(0), static_cast<int32_t>((blocks - u) * 16));
    }
    // Block level (scalar, 4 bytes per block): S/4 = 2^((b0 >> 2) - 50) (1 + (b0 & 3)/4) from its
    // bits, the poison flag (b0 = FF), byte 1 and bytes 2-3.
    LocalTensor<uint32_t> fq = B(kUBF).template ReinterpretCast<uint32_t>();
    LocalTensor<int32_t> l2 = B(kUBL2).template ReinterpretCast<int32_t>();
    LocalTensor<int32_t> w = B(kUBW).template ReinterpretCast<int32_t>();
    LocalTensor<float> poison = B(kUBPoison);
    bool anyPoison = false;
    WaitForPipe<HardEvent::MTE2_S>();  // the scale bytes
    WaitForPipe<HardEvent::V_S>();     // the previous tile's vector reads of fq, l2, w, poison
    for (uint32_t b = 0; b < blocks; ++b) {
      uint32_t b0 = b < u ? static_cast<uint32_t>(scale.GetValue(4 * b)) : 0u;
      uint32_t b1 = b < u ? static_cast<uint32_t>(scale.GetValue(4 * b + 1)) : 0u;
      uint32_t b2 = b < u ? static_cast<uint32_t>(scale.GetValue(4 * b + 2)) : 0u;
      uint32_t b3 = b < u ? static_cast<uint32_t>(scale.GetValue(4 * b + 3)) : 0u;
      fq.SetValue(b, (((b0 >> 2) + 77u) << 23) | ((b0 & 3u) << 21));
      l2.SetValue(b, static_cast<int32_t>(b1));
      w.SetValue(b, static_cast<int32_t>((b2 << 8) | b3));
      poison.SetValue(b, b0 == 255u ? 1.0f : 0.0f);
      anyPoison = anyPoison || b0 == 255u;
    }
    WaitForPipe<HardEvent::S_V>();     // the vector unit reads fq, l2, w, poison
    WaitForPipe<HardEvent::S_MTE2>();  // the next tile's scale DMA overwrites `scale`
    scaleQueue_.FreeTensor(scale);
    // Group level: F = S/4 * 2^l2[j] * 2^l3[j][k] per subgroup.
    uint8_t brcbRepeats = static_cast<uint8_t>(blocks / 8);
    LocalTensor<float> f = G(kUF);
    Brcb(f, B(kUBF), brcbRepeats, BrcbRepeatParams(1, 8));
    Brcb(GI(kUL2), l2, brcbRepeats, BrcbRepeatParams(1, 8));
    Brcb(GI(kUW), w, brcbRepeats, BrcbRepeatParams(1, 8));
    LocalTensor<float> t2 = G(kUT2);
    FlagFactor(t2, GI(kUL2), GI(kUP2), 7, gc);  // l2[j] = bit 7 - j of byte 1
    Mul(f, f, t2, gc);
    FlagFactor(t2, GI(kUW), GI(kUP4), 15, gc);  // l3[j][0] = bit 15 - 2j of bytes 2-3
    Mul(G(kUFLo), f, t2, gc);
    FlagFactor(t2, GI(kUW), GI(kUP4x2), 15, gc);  // l3[j][1] = bit 14 - 2j
    Mul(G(kUFHi), f, t2, gc);
    // Element level: byte -> table offset 4 * byte, exactly through fp32 (4b + 2^23 has the
    // integer in its low mantissa bits), gather the two signed codes, widen, scale.
    uint32_t pairs = n / 2;
    int32_t pc = static_cast<int32_t>(pairs);
    LocalTensor<half> vh = aBuf_.Get<half>();
    LocalTensor<float> vf = aBuf_.Get<float>()[pairs];
    Cast(vh, value, RoundMode::CAST_NONE, pairs);
    valueQueue_.FreeTensor(value);
    Cast(vf, vh, RoundMode::CAST_NONE, pairs);
    Muls(vf, vf, 4.0f, pc);
    Adds(vf, vf, 8388608.0f, pc);
    Adds(vf.ReinterpretCast<int32_t>(), vf.ReinterpretCast<int32_t>(), int32_t(-0x4B000000), pc);
    LocalTensor<uint32_t> codes2 = bBuf_.Get<uint32_t>();
    LocalTensor<uint32_t> lut = lutBuf_.Get<uint32_t>();
    LocalTensor<uint32_t> offsets = vf.ReinterpretCast<uint32_t>();
    for (uint32_t i = 0; i < pairs; i += kGatherChunk) {
      uint32_t len = pairs - i < kGatherChunk ? pairs - i : kGatherChunk;
      Gather(codes2[i], lut, offsets[i], 0u, len);
    }
    LocalTensor<float> code = aBuf_.Get<float>();
    Cast(code, bBuf_.Get<half>(), RoundMode::CAST_NONE, n);  // signed codes, -0.0 kept
    LocalTensor<float> factor = bBuf_.Get<float>();
    BroadcastSubgroups(factor, G(kUFLo), n);
    LocalTensor<TOut> y = outQueue_.template AllocTensor<TOut>();
    if constexpr (sizeof(TOut) == 4) {
      Mul(y, code, factor, cnt);  // exact; (-0) * F = -0
    } else {
      Mul(code, code, factor, cnt);
      NarrowOutput(y, code, factor, cleanBuf_.Get<uint8_t>(), n);
    }
    if (anyPoison) {
      LocalTensor<float> poisonG = G(kUPoison);
      Brcb(poisonG, poison, brcbRepeats, BrcbRepeatParams(1, 8));
      LocalTensor<uint8_t> clean = CleanMask(poisonG, G(kUT2).template ReinterpretCast<half>(), blocks * kGroupsPerBlock);
      if constexpr (sizeof(TOut) == 4) {
        Select(y, clean, y, nanF_, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
      } else {
        LocalTensor<half> yh = y.template ReinterpretCast<half>();
        half nan = InTraits<TOut>::kInfBits == 0x7C00 ? nanFp16_ : nanBf16AsHalf_;
        Select(yh, clean, yh, nan, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
      }
    }
    outQueue_.EnQue(y);
  }

  __aicore__ inline void CopyOut(uint64_t block, uint32_t u) {
    LocalTensor<TOut> y = outQueue_.template DeQue<TOut>();
    DataCopy(yGm_[block * kBlock], y, u * kBlock);
    outQueue_.FreeTensor(y);
  }

  BlockRange range_;
  uint32_t U_ = 0;
  GlobalTensor<uint8_t> scaleGm_;
  GlobalTensor<uint8_t> valueGm_;
  GlobalTensor<TOut> yGm_;
  TQue<TPosition::VECIN, 1> scaleQueue_;
  TQue<TPosition::VECIN, 1> valueQueue_;
  TQue<TPosition::VECOUT, 1> outQueue_;
  TBuf<TPosition::VECCALC> aBuf_;
  TBuf<TPosition::VECCALC> bBuf_;
  TBuf<TPosition::VECCALC> lutBuf_;
  TBuf<TPosition::VECCALC> groupBuf_;
  TBuf<TPosition::VECCALC> blockBuf_;
};

template <typename T, bool kPack>
__aicore__ inline void RunQuantiser(GM_ADDR in0, GM_ADDR out0, GM_ADDR out1, const Hif4Tiling& t, TPipe* pipe) {
  Quantiser<T, kPack> op;
  op.Init(in0, out0, out1, t, pipe);
  op.Process();
}

template <typename TOut>
__aicore__ inline void RunUnpacker(GM_ADDR in0, GM_ADDR in1, GM_ADDR out0, const Hif4Tiling& t, TPipe* pipe) {
  Unpacker<TOut> op;
  op.Init(in0, in1, out0, t, pipe);
  op.Process();
}

template <bool kPack>
__aicore__ inline void RunQuantiserOf(GM_ADDR in0, GM_ADDR out0, GM_ADDR out1, const Hif4Tiling& t, TPipe* pipe) {
  switch (t.dtype) {
    case amct_hif4::kFp16: RunQuantiser<half, kPack>(in0, out0, out1, t, pipe); break;
    case amct_hif4::kBf16: RunQuantiser<bfloat16_t, kPack>(in0, out0, out1, t, pipe); break;
    case amct_hif4::kFp32: RunQuantiser<float, kPack>(in0, out0, out1, t, pipe); break;
    default: break;  // the host never sends another dtype
  }
}

}  // namespace

// in0/in1/out0/out1 per mode: fake-quant x, -, y, -; pack x, -, scale, value; unpack scale,
// value, y, -.
extern "C" __global__ __vector__ void amct_hifloat4_cast_kernel(GM_ADDR in0, GM_ADDR in1, GM_ADDR out0,
                                                                GM_ADDR out1, GM_ADDR tiling) {
  Hif4Tiling t = amct_kernel::LoadTiling<Hif4Tiling>(tiling);
  TPipe pipe;
  switch (t.mode) {
    case amct_hif4::kFakeQuant: RunQuantiserOf<false>(in0, out0, out1, t, &pipe); break;
    case amct_hif4::kPack: RunQuantiserOf<true>(in0, out0, out1, t, &pipe); break;
    case amct_hif4::kUnpack:
      switch (t.dtype) {
        case amct_hif4::kFp16: RunUnpacker<half>(in0, in1, out0, t, &pipe); break;
        case amct_hif4::kBf16: RunUnpacker<bfloat16_t>(in0, in1, out0, t, &pipe); break;
        case amct_hif4::kFp32: RunUnpacker<float>(in0, in1, out0, t, &pipe); break;
        default: break;
      }
      break;
    default: break;  // the host never sends another mode
  }
}

extern "C" void amct_hifloat4_cast_launch(uint32_t blockDim, void* stream, uint8_t* in0, uint8_t* in1, uint8_t* out0,
                                          uint8_t* out1, uint8_t* tiling) {
#if defined(AMCT_KERNEL_SIM)
  (void)stream;
  amct_sim::Launch("amct_hifloat4_cast_kernel", blockDim, [=] { amct_hifloat4_cast_kernel(in0, in1, out0, out1, tiling); });
#else
  amct_hifloat4_cast_kernel<<<blockDim, nullptr, stream>>>(in0, in1, out0, out1, tiling);
#endif
}
