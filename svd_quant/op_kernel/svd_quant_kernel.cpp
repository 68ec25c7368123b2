// svd_quant: the MXFP4 quantizer (shared/spec/mxfp4_svd_quant.md A2), one AscendC vector kernel
// used by mxfp4_quantize and by svd_quant for its activation. Compiled by bisheng for dav-2201
// and dav-3510 and, on every machine, by g++ against the kernel sim (the CPU backend).
//
// Only the API common to both arches is used (no fp4/e8m0 types, which dav-2201 lacks): the
// element codes are derived arithmetically in fp32, which is exact for every input dtype.
//
// Data: a flat run of 32-element blocks (svd_quant_tiling.h). Per tile, every stage is one vector
// op over the whole tile:
//
//   element  widen to fp32 (exact); exponent field e = (bits << 1) >> 24; the non-finite blocks'
//            elements zeroed (keep mask); y = x * 2^(129 - Ec) (exact: a power of two); a = |y|;
//            the piece of the E2M1 grid a falls in (a < 2: step 0.5, a < 4: step 1, else step 2)
//            gives t = a * {2, 1, 1/2} and the code offset {0, 2, 4}; r = Cast fp32->fp32 of t
//            in the round mode (ties and directions are then exactly those of A2 step 6, as each
//            piece scales the grid to the integers); code = min(r + offset, 7) + 8 * sign bit;
//            four codes per 16-bit word, exactly in fp32 (GatherMask lanes 0..3 of every 4,
//            Horner in base 16, Cast fp32 -> int32 -> int16).
//   block    E = max e (WholeReduceMax, 32 lanes per repeat); Ec = clamp(E, 2, 254); sb = Ec - 2,
//            or 0xFF when E = 255 (a NaN or Inf in the block); the multiplier's bits (256 - Ec)
//            << 23 (0 for non-finite blocks), broadcast to the elements with Brcb.
//
// Non-finite blocks: their multiplier is 0, so their elements fail the keep test and are
// replaced by +0 before anything else touches them: every intermediate is finite and their codes
// come out 0 (spec A2 step 1). Sign bits come from the bits of the kept value, so -0 gives code 8.
// "floor" on a negative value rounds |y| up; |y| is raised to the smallest subnormal first so
// that a non-zero x whose product underflowed still gets magnitude 0.5 (A2 step 5).
#include "kernel_operator.h"
#include "amct_kernel_common.h"
#include "svd_quant_tiling.h"

using namespace AscendC;

namespace {

using amct_kernel::BlockRange;
using amct_mxfp4::Mxfp4Tiling;

constexpr uint32_t kBlock = amct_mxfp4::kMxBlock;
constexpr uint32_t kQuantum = amct_mxfp4::kMxTileQuantum;
constexpr uint32_t kMaxRepeat = 255;          // repeats per repeat-form call
constexpr uint32_t kBrcbChunk = 8 * kMaxRepeat;  // block values per Brcb call (8 per repeat)
constexpr float kTinyPositive = 1.40129846e-45f;  // 2^-149, the smallest fp32 subnormal

// Block-level slots (tileBlocks floats each).
enum BlockSlot : uint32_t {
  kBExp = 0,  // E, the largest exponent field of the block
  kBClamp,    // Ec, then sb's half bits
  kBScale,    // sb (as float)
  kBMul,      // the multiplier 2^(129 - Ec) (bits built in int32), 0 where non-finite
  kBlockSlots
};

__aicore__ inline uint32_t RoundUp(uint32_t v, uint32_t m) { return (v + m - 1) / m * m; }

template <typename T>
class Quantiser {
 public:
  __aicore__ inline void Init(GM_ADDR input, GM_ADDR codes, GM_ADDR scales, const Mxfp4Tiling& t, TPipe* pipe) {
    range_ = amct_kernel::RangeOfThisBlock(t.blockNum, t.blocksPerCore, t.blocksLastCore);
    mode_ = t.roundMode;
    U_ = t.tileBlocks;
    const uint32_t n = U_ * kBlock;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(input) + range_.start * kBlock, range_.length * kBlock);
    codeGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(codes) + range_.start * (kBlock / 2),
                            range_.length * (kBlock / 2));
    scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(scales) + range_.start, range_.length);
    // The host's ubBytes() mirrors this list (svd_quant_host.cpp).
    pipe->InitBuffer(inQueue_, 2, n * static_cast<uint32_t>(sizeof(T)));
    pipe->InitBuffer(codeQueue_, 2, n / 2);
    pipe->InitBuffer(scaleQueue_, 2, U_);
    if constexpr (sizeof(T) != 4) pipe->InitBuffer(wideBuf_, n * 4);
    pipe->InitBuffer(w1Buf_, n * 4);
    pipe->InitBuffer(w2Buf_, n * 4);
    pipe->InitBuffer(w3Buf_, n * 4);
    pipe->InitBuffer(maskBuf_, 4 * (n / 8) + RoundUp(U_ / 8, 32));
    pipe->InitBuffer(blockBuf_, kBlockSlots * U_ * 4);
    pipe->InitBuffer(signBuf_, n * 4);
    BuildSignWeights(n);
  }

  __aicore__ inline void Process() {
    amct_kernel::ForEachTile(range_.length, U_, [this](uint64_t done, uint32_t u) {
      CopyIn(done, u);
      Compute(u);
      CopyOut(done, u);
    });
  }

 private:
  __aicore__ inline LocalTensor<float> B(uint32_t slot) { return blockBuf_.Get<float>()[slot * U_]; }
  // Element-level compare masks (n/8 bytes each): 0 keep, 1 a < 2, 2 a < 4, 3 x < 0.
  __aicore__ inline LocalTensor<uint8_t> Mask(uint32_t k) { return maskBuf_.Get<uint8_t>()[k * (U_ * kBlock / 8)]; }
  __aicore__ inline LocalTensor<uint8_t> FiniteMask() { return maskBuf_.Get<uint8_t>()[4 * (U_ * kBlock / 8)]; }
  static __aicore__ inline LocalTensor<uint32_t> U32(const LocalTensor<float>& t) {
    return t.ReinterpretCast<uint32_t>();
  }
  static __aicore__ inline LocalTensor<int32_t> I32(const LocalTensor<float>& t) {
    return t.ReinterpretCast<int32_t>();
  }

  // signBuf_[i] = -8 where i % 4 == 3, else +8 (once per launch, with w1/w3 as scratch).
  __aicore__ inline void BuildSignWeights(uint32_t n) {
    LocalTensor<int32_t> index = w1Buf_.Get<int32_t>();
    CreateVecIndex(index, int32_t(0), n);
    LocalTensor<uint32_t> lane = index.ReinterpretCast<uint32_t>();
    ShiftLeft(lane, lane, uint32_t(30), static_cast<int32_t>(n));
    ShiftRight(lane, lane, uint32_t(30), static_cast<int32_t>(n));  // i % 4
    LocalTensor<float> laneF = w1Buf_.Get<float>();
    Cast(laneF, index, RoundMode::CAST_RINT, n);
    Compares(Mask(0), laneF, 3.0f, CMPMODE::EQ, n);
    LocalTensor<float> weights = signBuf_.Get<float>();
    Duplicate(weights, -8.0f, static_cast<int32_t>(n));
    Select(weights, Mask(0), weights, 8.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
  }

  __aicore__ inline void CopyIn(uint64_t block, uint32_t u) {
    LocalTensor<T> x = inQueue_.template AllocTensor<T>();
    DataCopy(x, xGm_[block * kBlock], u * kBlock);
    inQueue_.EnQue(x);
  }

  // The input as fp32 (exact), with a partial tile padded by zero blocks up to the quantum.
  __aicore__ inline LocalTensor<float> Widen(const LocalTensor<T>& x, uint32_t u, uint32_t blocks) {
    if (blocks > u) Duplicate(x[u * kBlock], T(0.0f), static_cast<int32_t>((blocks - u) * kBlock));
    if constexpr (sizeof(T) == 4) {
      return x;
    } else {
      LocalTensor<float> wide = wideBuf_.Get<float>();
      Cast(wide, x, RoundMode::CAST_NONE, blocks * kBlock);
      return wide;
    }
  }

  // Block level: E, the scale bytes, the multipliers (A2 steps 1-4).
  __aicore__ inline void BlockScales(const LocalTensor<float>& x, uint32_t blocks) {
    const uint32_t n = blocks * kBlock;
    const int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<uint32_t> e = U32(w1Buf_.Get<float>());
    ShiftLeft(e, U32(x), uint32_t(1), cnt);    // drop the sign
    ShiftRight(e, e, uint32_t(24), cnt);       // the 8-bit exponent field
    LocalTensor<float> ef = w1Buf_.Get<float>();
    Cast(ef, I32(ef), RoundMode::CAST_RINT, n);  // small integers: exact
    LocalTensor<float> big = B(kBExp);
    for (uint32_t b = 0; b < blocks; b += kMaxRepeat) {
      uint32_t rep = blocks - b < kMaxRepeat ? blocks - b : kMaxRepeat;
      WholeReduceMax(big[b], ef[b * kBlock], int32_t(kBlock), static_cast<int32_t>(rep), 1, 1, 4,
                     ReduceOrder::ORDER_ONLY_VALUE);
    }
    const int32_t bc = static_cast<int32_t>(blocks);
    LocalTensor<uint8_t> finite = FiniteMask();
    Compares(finite, big, 255.0f, CMPMODE::LT, blocks);
    LocalTensor<float> ec = B(kBClamp);
    Maxs(ec, big, 2.0f, bc);
    Mins(ec, ec, 254.0f, bc);
    LocalTensor<float> sb = B(kBScale);
    Adds(sb, ec, -2.0f, bc);
    Select(sb, finite, sb, 255.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, blocks);
    LocalTensor<float> mul = B(kBMul);
    Muls(mul, ec, -1.0f, bc);
    Adds(mul, mul, 256.0f, bc);                       // the multiplier's exponent field 256 - Ec
    Cast(I32(mul), mul, RoundMode::CAST_RINT, blocks);
    ShiftLeft(U32(mul), U32(mul), uint32_t(23), bc);  // 2^(129 - Ec), a normal float
    Select(mul, finite, mul, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, blocks);
    LocalTensor<uint8_t> scale = scaleQueue_.template AllocTensor<uint8_t>();
    LocalTensor<half> sbHalf = ec.ReinterpretCast<half>();  // Ec is no longer needed
    Cast(sbHalf, sb, RoundMode::CAST_RINT, blocks);   // 0..255: exact
    Cast(scale, sbHalf, RoundMode::CAST_RINT, blocks);
    scaleQueue_.EnQue(scale);
  }

  // dst[i] = B(kBMul)[i / 32]: each value fills 4 consecutive 32-B blocks (4 Brcb passes).
  __aicore__ inline void BroadcastMultipliers(const LocalTensor<float>& dst, uint32_t blocks) {
    LocalTensor<float> mul = B(kBMul);
    for (uint32_t b = 0; b < blocks; b += kBrcbChunk) {
      uint32_t len = blocks - b < kBrcbChunk ? blocks - b : kBrcbChunk;
      for (uint32_t k = 0; k < 4; ++k) {
        Brcb(dst[b * kBlock + 8 * k], mul[b], static_cast<uint8_t>(len / 8), BrcbRepeatParams(4, 32));
      }
    }
  }

  __aicore__ inline void Compute(uint32_t u) {
    const uint32_t blocks = RoundUp(u, kQuantum);
    const uint32_t n = blocks * kBlock;
    const int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<T> in = inQueue_.template DeQue<T>();
    LocalTensor<float> x = Widen(in, u, blocks);
    BlockScales(x, blocks);
    LocalTensor<float> w1 = w1Buf_.Get<float>();
    LocalTensor<float> w2 = w2Buf_.Get<float>();
    LocalTensor<float> w3 = w3Buf_.Get<float>();
    BroadcastMultipliers(w2, blocks);
    // Keep the elements of finite blocks (multiplier > 0), +0 elsewhere.
    Compares(Mask(0), w2, 0.0f, CMPMODE::GT, n);
    Select(w1, Mask(0), x, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    if (mode_ == amct_mxfp4::kFloor) Compares(Mask(3), w1, 0.0f, CMPMODE::LT, n);
    // sign bit * (+8, +8, +8, -8 per 4 lanes; see PackCodes), kept in x (no longer needed).
    ShiftRight(U32(x), U32(w1), uint32_t(31), cnt);
    Cast(x, I32(x), RoundMode::CAST_RINT, n);
    Mul(x, x, signBuf_.Get<float>(), cnt);
    // a = |x * 2^(129 - Ec)| (exact but for products below 2^-126, which only need their sign).
    Mul(w2, w1, w2, cnt);
    Abs(w2, w2, cnt);
    // t = a * 2 (a < 2), a (a < 4), a / 2 (else): the grid's piece scaled to the integers.
    Compares(Mask(1), w2, 2.0f, CMPMODE::LT, n);
    Compares(Mask(2), w2, 4.0f, CMPMODE::LT, n);
    Muls(w1, w2, 0.5f, cnt);
    Select(w1, Mask(2), w2, w1, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    Muls(w3, w2, 2.0f, cnt);
    Select(w1, Mask(1), w3, w1, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    RoundToIntegral(w2, w1, w3, n);
    // code = r + {0, 2, 4} per piece, saturated at 7 (= 6.0), plus the sign.
    Adds(w1, w2, 4.0f, cnt);
    Adds(w3, w2, 2.0f, cnt);
    Select(w1, Mask(2), w3, w1, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    Select(w1, Mask(1), w2, w1, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    Mins(w1, w1, 7.0f, cnt);
    Add(w1, w1, x, cnt);
    inQueue_.FreeTensor(in);
    PackCodes(w1, n);
  }

  // r = t rounded to an integer as A2 step 6 says for this round mode (t >= 0 is in w1).
  __aicore__ inline void RoundToIntegral(const LocalTensor<float>& r, const LocalTensor<float>& t,
                                         const LocalTensor<float>& tmp, uint32_t n) {
    if (mode_ == amct_mxfp4::kRound) {
      Cast(r, t, RoundMode::CAST_ROUND, n);
    } else if (mode_ == amct_mxfp4::kRint) {
      Cast(r, t, RoundMode::CAST_RINT, n);
    } else {
      // Toward -inf on the signed value: floor of |y| where y >= 0, ceil of |y| where y < 0.
      Cast(r, t, RoundMode::CAST_FLOOR, n);
      Maxs(t, t, kTinyPositive, static_cast<int32_t>(n));
      Cast(tmp, t, RoundMode::CAST_CEIL, n);
      Select(r, Mask(3), tmp, r, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    }
  }

  // Two codes per byte, the even element in the low nibble, four codes per 16-bit word: the word
  // c0 | c1 << 4 | c2 << 8 | c3 << 12 as a signed int16 is sum 16^j c'_j, where c'_3 carries its
  // sign as -8 instead of +8 (the sign weights): computed exactly in fp32 from the four lanes of
  // every 4 (GatherMask patterns 3..6), then Cast fp32 -> int32 -> int16 (exact, no saturation).
  __aicore__ inline void PackCodes(const LocalTensor<float>& code, uint32_t n) {
    LocalTensor<float> lanes = w3Buf_.Get<float>();  // four runs of n / 4: lanes 0, 1, 2, 3 of each 4
    const uint32_t quarter = n / 4;
    uint64_t kept = 0;
    for (uint32_t i = 0; i < n; i += 64 * kMaxRepeat) {  // 64 floats per repeat
      uint32_t len = n - i < 64 * kMaxRepeat ? n - i : 64 * kMaxRepeat;
      GatherMaskParams params(1, static_cast<uint16_t>(len / 64), 8, 0);
      for (uint32_t j = 0; j < 4; ++j) {
        GatherMask(lanes[j * quarter + i / 4], code[i], static_cast<uint8_t>(3 + j), false, 0u, params, kept);
      }
    }
    const int32_t q = static_cast<int32_t>(quarter);
    LocalTensor<float> word = lanes[3 * quarter];
    for (uint32_t j = 3; j > 0; --j) {  // Horner: ((c3 * 16 + c2) * 16 + c1) * 16 + c0
      Muls(word, word, 16.0f, q);
      Add(word, word, lanes[(j - 1) * quarter], q);
    }
    LocalTensor<int32_t> wide = w2Buf_.Get<int32_t>();
    Cast(wide, word, RoundMode::CAST_RINT, quarter);
    LocalTensor<uint8_t> bytes = codeQueue_.template AllocTensor<uint8_t>();
    Cast(bytes.ReinterpretCast<int16_t>(), wide, RoundMode::CAST_NONE, quarter);
    codeQueue_.EnQue(bytes);
  }

  __aicore__ inline void CopyOut(uint64_t block, uint32_t u) {
    LocalTensor<uint8_t> bytes = codeQueue_.template DeQue<uint8_t>();
    DataCopyExtParams codeParams{1, u * (kBlock / 2), 0, 0, 0};
    DataCopyPad(codeGm_[block * (kBlock / 2)], bytes, codeParams);
    codeQueue_.FreeTensor(bytes);
    LocalTensor<uint8_t> scale = scaleQueue_.template DeQue<uint8_t>();
    DataCopyExtParams scaleParams{1, u, 0, 0, 0};
    DataCopyPad(scaleGm_[block], scale, scaleParams);
    scaleQueue_.FreeTensor(scale);
  }

  BlockRange range_;
  uint32_t mode_ = 0;
  uint32_t U_ = 0;
  GlobalTensor<T> xGm_;
  GlobalTensor<uint8_t> codeGm_;
  GlobalTensor<uint8_t> scaleGm_;
  TQue<TPosition::VECIN, 1> inQueue_;
  TQue<TPosition::VECOUT, 1> codeQueue_;
  TQue<TPosition::VECOUT, 1> scaleQueue_;
  TBuf<TPosition::VECCALC> wideBuf_;
  TBuf<TPosition::VECCALC> w1Buf_;
  TBuf<TPosition::VECCALC> w2Buf_;
  TBuf<TPosition::VECCALC> w3Buf_;
  TBuf<TPosition::VECCALC> maskBuf_;
  TBuf<TPosition::VECCALC> blockBuf_;
  TBuf<TPosition::VECCALC> signBuf_;
};

template <typename T>
__aicore__ inline void RunQuantiser(GM_ADDR input, GM_ADDR codes, GM_ADDR scales, const Mxfp4Tiling& t, TPipe* pipe) {
  Quantiser<T> q;
  q.Init(input, codes, scales, t, pipe);
  q.Process();
}

}  // namespace

// input: (totalBlocks * 32) fp16/bf16/fp32; codes: totalBlocks * 16 bytes; scales: totalBlocks bytes.
extern "C" __global__ __vector__ void amct_svd_quant_kernel(GM_ADDR input, GM_ADDR codes, GM_ADDR scales,
                                                            GM_ADDR tiling) {
  Mxfp4Tiling t = amct_kernel::LoadTiling<Mxfp4Tiling>(tiling);
  TPipe pipe;
  switch (t.dtype) {
    case amct_mxfp4::kFp16: RunQuantiser<half>(input, codes, scales, t, &pipe); break;
    case amct_mxfp4::kBf16: RunQuantiser<bfloat16_t>(input, codes, scales, t, &pipe); break;
    case amct_mxfp4::kFp32: RunQuantiser<float>(input, codes, scales, t, &pipe); break;
    default: break;  // the host never sends another dtype
  }
}

extern "C" void amct_svd_quant_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* codes,
                                      uint8_t* scales, uint8_t* tiling) {
#if defined(AMCT_KERNEL_SIM)
  (void)stream;
  amct_sim::Launch("amct_svd_quant_kernel", blockDim, [=] { amct_svd_quant_kernel(input, codes, scales, tiling); });
#else
  amct_svd_quant_kernel<<<blockDim, nullptr, stream>>>(input, codes, scales, tiling);
#endif
}
