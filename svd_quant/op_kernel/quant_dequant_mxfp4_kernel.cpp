// quant_dequant_mxfp4: the MXFP4 activation fake-quant (svd_quant/README.md, section
// quant_dequant_mxfp4), one AscendC vector kernel. Compiled by bisheng for dav-2201 and dav-3510
// and, on every machine, by g++ against the kernel sim (the private op _quant_dequant_mxfp4_emulated).
//
// Subnormals: the widening is exact by integer bit operations (amct_kernel::WidenTile) and |x| is
// taken from the bits, so a device that flushes subnormal float operands changes nothing: the
// only float operations that can meet one (the block maximum, |x| * 2^-E) concern elements whose
// q is 0 anyway.
//
// Data: a flat run of 32-element blocks (fp16, bf16 or fp32), float32 out. Per tile, one vector op
// per stage over the tile or over its block values; every stage is exact:
//
//   non-finite  e = bits & 0x7F800000 as floats (never NaN: +Inf for NaN/Inf elements) and their
//               block maxima; a block whose maximum is +Inf gets keep word 0 (else all ones: one
//               32-bit Select mask word covers its 32 elements). Only in tiles that have such a
//               block, its elements are zeroed before any arithmetic and its results set to NaN
//               (by a bit pattern) at the end.
//   exponent    m = the block maximum of |x| (finite). Its unbiased exponent em and fraction field
//               f from its bits (a subnormal m is normalised by converting its bits as an integer
//               to float: exact below 2^24); E = em + base + [f >= threshold] (base and threshold
//               come from the host, which derives them from the scale exactly), clamped to
//               [-30, 130]; the multipliers 2^-E and 2^E built as exponent fields (split into two
//               normal factors when the host says E can exceed 126).
//   elements    the multipliers broadcast by four strided Brcb (32 contiguous copies per block);
//               a = |x| * 2^-E (exact but below 2^-126, where q = 0 anyway); q = E2M1(a) rounding
//               half up, from a table indexed by a's exponent field and top two fraction bits
//               (every midpoint 0.25 ... 5 has at most two fraction bits, so those bits decide
//               exactly), gathered; out = q * 2^E; the sign bit of x Or'ed in unless x is +-0.
#include "kernel_operator.h"
#include "amct_kernel_common.h"
#include "quant_dequant_mxfp4_tiling.h"

using namespace AscendC;

namespace {

using amct_kernel::As;
using amct_kernel::BlockRange;
using amct_qdq::QdqTiling;

constexpr uint32_t kBlock = amct_qdq::kQdqBlock;
constexpr uint32_t kQuantum = amct_qdq::kQdqTileQuantum;
constexpr uint32_t kMaxRepeat = 255;      // repeats per repeat-form call
constexpr uint32_t kGatherChunk = 8192;   // elements per Gather call (dav-2201: fewer than 256 * 64)
constexpr uint32_t kQuietNan = 0x7FC00000u;
constexpr int32_t kMinExponent = -30;
constexpr int32_t kMaxExponent = 130;     // beyond it q = 0 for every float32 x
constexpr int32_t kSplitAt = 126;         // 2^-E is normal up to here
// a's bits >> 21 (exponent field and the top two fraction bits): 500 is 0.25, 517 is 5.0.
constexpr int32_t kIndexBase = 499;
constexpr int32_t kIndexLast = 18;
constexpr uint32_t kTableSize = 19;

// Block-level slots (tileBlocks 32-bit values each).
enum BlockSlot : uint32_t {
  kBExpMax = 0,  // the largest exponent float of the block
  kBKeep,        // the keep word: 0xFFFFFFFF for a finite block, else 0
  kBMax,         // the largest |x| (bits)
  kBExp,         // em, then E
  kBField,       // f
  kBTmp,         // scratch
  kBDown,        // 2^-E (or its first factor)
  kBDown2,       // the second factor of 2^-E
  kBUp,          // 2^E (or its first factor)
  kBUp2,         // the second factor of 2^E
  kBlockSlots
};

__aicore__ inline uint32_t RoundUp(uint32_t v, uint32_t m) { return (v + m - 1) / m * m; }
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

template <typename T>
class QuantDequant {
 public:
  __aicore__ inline void Init(GM_ADDR input, GM_ADDR output, const QdqTiling& t, TPipe* pipe) {
    range_ = amct_kernel::RangeOfThisBlock(t.blockNum, t.blocksPerCore, t.blocksLastCore);
    U_ = t.tileBlocks;
    base_ = t.exponentBase;
    threshold_ = static_cast<int32_t>(t.fieldThreshold);
    wide_ = t.wideExponents != 0;
    const uint32_t n = U_ * kBlock;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(input) + range_.start * kBlock, range_.length * kBlock);
    outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(output) + range_.start * kBlock, range_.length * kBlock);
    // The host's ubBytes() mirrors this list (quant_dequant_mxfp4_host.cpp).
    pipe->InitBuffer(inQueue_, 2, n * static_cast<uint32_t>(sizeof(T)));
    pipe->InitBuffer(outQueue_, 1, n * 4);
    if constexpr (sizeof(T) != 4) pipe->InitBuffer(wideBuf_, n * 4);
    pipe->InitBuffer(w1Buf_, n * 4);
    pipe->InitBuffer(w2Buf_, n * 4);
    pipe->InitBuffer(w3Buf_, n * 4);
    pipe->InitBuffer(blockBuf_, kBlockSlots * U_ * 4);
    pipe->InitBuffer(tableBuf_, kTableSize * 4);
    FillTable();
  }

  __aicore__ inline void Process() {
    for (uint64_t done = 0; done < range_.length; done += U_) {
      const uint64_t rest = range_.length - done;
      const uint32_t u = rest < U_ ? static_cast<uint32_t>(rest) : U_;
      CopyIn(done, u);
      Compute(u);
      CopyOut(done, u);
    }
  }

 private:
  __aicore__ inline LocalTensor<float> B(uint32_t slot) { return blockBuf_.Get<float>()[slot * U_]; }

  // The E2M1 value of every table index (index 0: a < 0.25; 18: a >= 5).
  __aicore__ inline void FillTable() {
    constexpr float kValues[kTableSize] = {0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 1.0f, 1.0f,
                                           1.5f, 1.5f, 2.0f, 2.0f, 3.0f, 3.0f, 4.0f, 4.0f, 6.0f};
    LocalTensor<float> table = tableBuf_.Get<float>();
    for (uint32_t i = 0; i < kTableSize; ++i) table.SetValue(i, kValues[i]);
    amct_kernel::WaitForPipe<HardEvent::S_V>();
  }

  __aicore__ inline void CopyIn(uint64_t block, uint32_t u) {
    LocalTensor<T> x = inQueue_.template AllocTensor<T>();
    DataCopy(x, xGm_[block * kBlock], u * kBlock);
    inQueue_.EnQue(x);
  }

  // The keep words of the tile's blocks; returns whether any block is non-finite.
  __aicore__ inline bool KeepWords(const LocalTensor<float>& x, uint32_t blocks) {
    LocalTensor<float> big = B(kBExpMax);
    amct_kernel::LargestExponentOfEachBlock(big, x, w1Buf_.Get<float>(), w2Buf_.Get<float>(), blocks);
    const int32_t bc = static_cast<int32_t>(blocks);
    LocalTensor<int32_t> keep = As<int32_t>(B(kBKeep));
    ShiftRight(As<uint32_t>(B(kBKeep)), As<uint32_t>(big), uint32_t(23), bc);  // the exponent field (never negative)
    Adds(keep, keep, int32_t(-255), bc);
    ShiftRight(keep, keep, int32_t(31), bc);  // arithmetic: -1 where the field < 255, else 0
    return amct_kernel::TileHasNonFinite(big, w3Buf_.Get<float>(), blocks);
  }

  // dst = a + (mask & (b - a)) on int32 values: b where mask is all ones, a where it is 0.
  __aicore__ inline void Choose(const LocalTensor<float>& dst, const LocalTensor<float>& a, const LocalTensor<float>& b,
                                const LocalTensor<float>& mask, const LocalTensor<float>& tmp, int32_t count) {
    Sub(As<int32_t>(tmp), As<int32_t>(b), As<int32_t>(a), count);
    And(As<uint16_t>(tmp), As<uint16_t>(tmp), As<uint16_t>(mask), 2 * count);
    Add(As<int32_t>(dst), As<int32_t>(a), As<int32_t>(tmp), count);
  }

  // E per block, clamped, from the block maxima of |x| (bits in kBMax), into kBExp.
  __aicore__ inline void BlockExponents(uint32_t blocks) {
    const int32_t bc = static_cast<int32_t>(blocks);
    LocalTensor<float> maxBits = B(kBMax);
    LocalTensor<float> em = B(kBExp);
    LocalTensor<float> field = B(kBField);
    LocalTensor<float> tmp = B(kBTmp);
    LocalTensor<float> subEm = B(kBDown);  // scratch until the multipliers are built
    LocalTensor<float> subField = B(kBDown2);
    LocalTensor<float> fieldMask = B(kBUp);
    LocalTensor<float> sub = B(kBUp2);
    Duplicate(As<uint32_t>(fieldMask), 0x007FFFFFu, bc);
    // Normal maxima: em = field - 127, f = bits & 0x7FFFFF.
    ShiftRight(As<uint32_t>(em), As<uint32_t>(maxBits), uint32_t(23), bc);
    Adds(As<int32_t>(em), As<int32_t>(em), int32_t(-127), bc);
    And(As<uint16_t>(field), As<uint16_t>(maxBits), As<uint16_t>(fieldMask), 2 * bc);
    // Subnormal maxima (and 0): the bits as an integer, converted to float exactly (< 2^23), are
    // the same significand normalised; m = that * 2^-149.
    Cast(tmp, As<int32_t>(maxBits), RoundMode::CAST_NONE, blocks);
    ShiftRight(As<uint32_t>(subEm), As<uint32_t>(tmp), uint32_t(23), bc);
    Adds(As<int32_t>(subEm), As<int32_t>(subEm), int32_t(-127 - 149), bc);
    And(As<uint16_t>(subField), As<uint16_t>(tmp), As<uint16_t>(fieldMask), 2 * bc);
    Adds(As<int32_t>(sub), As<int32_t>(maxBits), int32_t(-0x00800000), bc);
    ShiftRight(As<int32_t>(sub), As<int32_t>(sub), int32_t(31), bc);  // -1 for a subnormal or zero maximum
    Choose(em, em, subEm, sub, tmp, bc);
    Choose(field, field, subField, sub, tmp, bc);
    // E = em + base + [f >= threshold]: the test bit is 1 + ((f - threshold) >> 31).
    Adds(As<int32_t>(field), As<int32_t>(field), -threshold_, bc);
    ShiftRight(As<int32_t>(field), As<int32_t>(field), int32_t(31), bc);
    Add(As<int32_t>(em), As<int32_t>(em), As<int32_t>(field), bc);
    Adds(As<int32_t>(em), As<int32_t>(em), base_ + 1, bc);
    Maxs(As<int32_t>(em), As<int32_t>(em), kMinExponent, bc);
    Mins(As<int32_t>(em), As<int32_t>(em), kMaxExponent, bc);
  }

  // kBDown/kBUp (and kBDown2/kBUp2 when wide): float32 factors of 2^-E and 2^E, each normal.
  __aicore__ inline void Multipliers(uint32_t blocks) {
    const int32_t bc = static_cast<int32_t>(blocks);
    LocalTensor<int32_t> e = As<int32_t>(B(kBExp));
    LocalTensor<int32_t> down = As<int32_t>(B(kBDown));
    LocalTensor<int32_t> up = As<int32_t>(B(kBUp));
    if (!wide_) {
      Muls(down, e, int32_t(-1), bc);
      Adds(down, down, int32_t(127), bc);
      Adds(up, e, int32_t(127), bc);
    } else {
      // 2^-E = 2^-min(E, 126) * 2^-k with k = max(E - 126, 0); 2^E = 2^min(E, 127) * 2^max(E - 127, 0).
      LocalTensor<int32_t> down2 = As<int32_t>(B(kBDown2));
      LocalTensor<int32_t> up2 = As<int32_t>(B(kBUp2));
      Mins(down, e, kSplitAt, bc);
      Muls(down, down, int32_t(-1), bc);
      Adds(down, down, int32_t(127), bc);
      Adds(down2, e, -kSplitAt, bc);
      Maxs(down2, down2, int32_t(0), bc);
      Muls(down2, down2, int32_t(-1), bc);
      Adds(down2, down2, int32_t(127), bc);
      Mins(up, e, kSplitAt + 1, bc);
      Adds(up, up, int32_t(127), bc);
      Adds(up2, e, -(kSplitAt + 1), bc);
      Maxs(up2, up2, int32_t(0), bc);
      Adds(up2, up2, int32_t(127), bc);
      ShiftLeft(As<uint32_t>(B(kBDown2)), As<uint32_t>(B(kBDown2)), uint32_t(23), bc);
      ShiftLeft(As<uint32_t>(B(kBUp2)), As<uint32_t>(B(kBUp2)), uint32_t(23), bc);
    }
    ShiftLeft(As<uint32_t>(B(kBDown)), As<uint32_t>(B(kBDown)), uint32_t(23), bc);
    ShiftLeft(As<uint32_t>(B(kBUp)), As<uint32_t>(B(kBUp)), uint32_t(23), bc);
  }

  // dst[i] = src[i / 32]: four Brcb calls, call c filling the c-th 32-B block of every group of
  // four (dstBlkStride 4), so each value gets 32 contiguous copies.
  __aicore__ inline void Broadcast(const LocalTensor<float>& dst, const LocalTensor<float>& src, uint32_t blocks) {
    for (uint32_t b = 0; b < blocks; b += 8 * kMaxRepeat) {
      const uint32_t len = MinU(blocks - b, 8 * kMaxRepeat);
      for (uint32_t c = 0; c < 4; ++c) {
        Brcb(dst[b * kBlock + 8 * c], src[b], static_cast<uint8_t>(len / 8), BrcbRepeatParams(4, 32));
      }
    }
  }

  __aicore__ inline void Compute(uint32_t u) {
    const uint32_t blocks = RoundUp(u, kQuantum);
    const uint32_t n = blocks * kBlock;
    const int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<float> out = outQueue_.template AllocTensor<float>();
    LocalTensor<T> in = inQueue_.template DeQue<T>();
    LocalTensor<float> w1 = w1Buf_.Get<float>();
    LocalTensor<float> x = amct_kernel::WidenTile(in, wideBuf_, w1, u * kBlock, n);
    LocalTensor<float> w2 = w2Buf_.Get<float>();
    LocalTensor<float> w3 = w3Buf_.Get<float>();
    LocalTensor<float> keepWords = B(kBKeep);
    const bool nonFinite = KeepWords(x, blocks);
    if (nonFinite) Select(x, keepWords.ReinterpretCast<uint8_t>(), x, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    // |x| from the bits (a float Abs could flush a subnormal, and its bits decide the sign test).
    ShiftLeft(As<uint32_t>(w2), As<uint32_t>(x), uint32_t(1), cnt);
    ShiftRight(As<uint32_t>(w2), As<uint32_t>(w2), uint32_t(1), cnt);
    // The block maxima may lose subnormals to a flush: only in blocks of subnormals (and zeros),
    // whose elements all give q = 0 whatever E is (|x| * 2^-E < 2^-96 with E >= -30).
    amct_kernel::MaxOfEachBlock(B(kBMax), w2, blocks);
    BlockExponents(blocks);
    Multipliers(blocks);
    Broadcast(w1, B(kBDown), blocks);
    Mul(w3, w2, w1, cnt);
    if (wide_) {
      Broadcast(w1, B(kBDown2), blocks);
      Mul(w3, w3, w1, cnt);
    }
    // Table offsets: clamp((bits(a) >> 21) - 499, 0, 18) * 4 bytes.
    LocalTensor<int32_t> index = As<int32_t>(w1);
    ShiftRight(As<uint32_t>(w1), As<uint32_t>(w3), uint32_t(21), cnt);
    Adds(index, index, -kIndexBase, cnt);
    Maxs(index, index, int32_t(0), cnt);
    Mins(index, index, kIndexLast, cnt);
    ShiftLeft(As<uint32_t>(w1), As<uint32_t>(w1), uint32_t(2), cnt);
    LocalTensor<float> table = tableBuf_.Get<float>();
    for (uint32_t i = 0; i < n; i += kGatherChunk) {
      Gather(w3[i], table, As<uint32_t>(w1)[i], 0u, MinU(n - i, kGatherChunk));
    }
    Broadcast(w1, B(kBUp), blocks);
    Mul(out, w3, w1, cnt);
    if (wide_) {
      Broadcast(w1, B(kBUp2), blocks);
      Mul(out, out, w1, cnt);
    }
    // The sign bit of x where x != +-0: (bits(x) >> 31) * min(bits(|x|), 1), shifted back.
    ShiftRight(As<uint32_t>(w1), As<uint32_t>(x), uint32_t(31), cnt);
    Mins(As<int32_t>(w2), As<int32_t>(w2), int32_t(1), cnt);
    Mul(As<int32_t>(w1), As<int32_t>(w1), As<int32_t>(w2), cnt);
    ShiftLeft(As<uint32_t>(w1), As<uint32_t>(w1), uint32_t(31), cnt);
    Or(As<uint16_t>(out), As<uint16_t>(out), As<uint16_t>(w1), 2 * cnt);
    if (nonFinite) {
      Duplicate(As<uint32_t>(w1), kQuietNan, cnt);
      Select(out, keepWords.ReinterpretCast<uint8_t>(), out, w1, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    }
    inQueue_.FreeTensor(in);
    outQueue_.EnQue(out);
  }

  __aicore__ inline void CopyOut(uint64_t block, uint32_t u) {
    LocalTensor<float> out = outQueue_.template DeQue<float>();
    DataCopy(outGm_[block * kBlock], out, u * kBlock);
    outQueue_.FreeTensor(out);
  }

  BlockRange range_;
  uint32_t U_ = 0;
  int32_t base_ = 0;
  int32_t threshold_ = 0;
  bool wide_ = false;
  GlobalTensor<T> xGm_;
  GlobalTensor<float> outGm_;
  TQue<TPosition::VECIN, 1> inQueue_;
  TQue<TPosition::VECOUT, 1> outQueue_;
  TBuf<TPosition::VECCALC> wideBuf_;
  TBuf<TPosition::VECCALC> w1Buf_;
  TBuf<TPosition::VECCALC> w2Buf_;
  TBuf<TPosition::VECCALC> w3Buf_;
  TBuf<TPosition::VECCALC> blockBuf_;
  TBuf<TPosition::VECCALC> tableBuf_;
};

template <typename T>
__aicore__ inline void Run(GM_ADDR input, GM_ADDR output, const QdqTiling& t, TPipe* pipe) {
  QuantDequant<T> op;
  op.Init(input, output, t, pipe);
  op.Process();
}

}  // namespace

// input: totalBlocks * 32 fp16/bf16/fp32 elements; output: as many float32 values.
extern "C" __global__ __vector__ void amct_quant_dequant_mxfp4_kernel(GM_ADDR input, GM_ADDR output, GM_ADDR tiling) {
  QdqTiling t = amct_kernel::LoadTiling<QdqTiling>(tiling);
  TPipe pipe;
  switch (t.dtype) {
    case amct_qdq::kFp16: Run<half>(input, output, t, &pipe); break;
    case amct_qdq::kBf16: Run<bfloat16_t>(input, output, t, &pipe); break;
    case amct_qdq::kFp32: Run<float>(input, output, t, &pipe); break;
    default: break;  // the host never sends another dtype
  }
}

extern "C" void amct_quant_dequant_mxfp4_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* output,
                                                uint8_t* tiling) {
#if defined(AMCT_KERNEL_SIM)
  (void)stream;
  amct_sim::Launch("amct_quant_dequant_mxfp4_kernel", blockDim,
                   [=] { amct_quant_dequant_mxfp4_kernel(input, output, tiling); });
#else
  amct_quant_dequant_mxfp4_kernel<<<blockDim, nullptr, stream>>>(input, output, tiling);
#endif
}
