// The MXFP4 quantizer (docs/mxfp4.md A2) as one AscendC vector class, shared by the
// mxfp4_quantize kernel (svd_quant_kernel.cpp) and the AIV part of the fused svd_quant kernel
// (svd_quant_fused_kernel.cpp). Header-only device code.
//
// Only the API common to both arches is used (no fp4/e8m0 types, which dav-2201 lacks): the
// element codes are derived arithmetically in fp32, exactly for every input dtype.
//
// Data: a flat run of 32-element blocks (svd_quant_tiling.h). Per tile, every stage is one vector
// op over the whole tile (or over its blocks), about 20 passes over the elements:
//
//   block    the exponent fields as floats, e = bits & 0x7F800000 (And on the 16-bit view:
//            2^(F - 127), 0 for zero and subnormal fp32 values, +Inf for NaN/Inf), and their block
//            maximum (WholeReduceMax): E = its exponent field; Ec = clamp(E, 2, 254); sb = Ec - 2,
//            or 0xFF when E = 255; the multiplier 2^(129 - Ec) (bits (256 - Ec) << 23); the keep
//            word of the block, all ones when it is finite, else 0 (one 32-bit Select mask word
//            covers its 32 elements, so no mask needs broadcasting).
//   element  widen to fp32 (exact, subnormals included, by integer bit operations:
//            amct_kernel::WidenTile); elements of non-finite blocks replaced by +0 (Select with the
//            keep words, only in tiles that have such a block: a WholeReduceMax of the block
//            maxima and one scalar read); the multipliers broadcast by contiguous Brcb;
//            a = |x * 2^(129 - Ec)| (exact but for products below 2^-126, which only need their
//            sign): for fp16 a float Mul (every operand and product is normal), for bf16/fp32
//            exponent-field arithmetic on the bits (amct_kernel::ScaleByPowerOfTwo), since their
//            subnormal inputs can give non-zero codes; the code magnitude is the rounding of the piecewise-linear
//            c = min(2a, a + 2, a / 2 + 4, 7): each piece maps its part of the E2M1 grid (steps
//            0.5, 1, 2) onto consecutive integers, so Cast fp32 -> int32 in the round mode makes
//            exactly the decisions of A2 step 6 (ties and directions included; 7 = 6.0 saturates).
//            c is exact when a has at most 11 significant bits (bf16, fp16); fp32 products are
//            first rounded to odd at half precision (Cast fp32 -> half CAST_ODD), which keeps every
//            decision (the grid points and midpoints are even at that precision). Then code |=
//            sign bit << 3, and four codes per 16-bit word (GatherMask lanes 0..3 of every 4,
//            Horner in base 16 with shifts and Or, GatherMask of the low halves).
//
// Non-finite blocks: their elements are +0 before anything else touches them, so every
// intermediate is finite and their codes come out 0 (spec A2 step 1). Sign bits come from the kept
// value, so -0 gives code 8. "floor" rounds c down where x >= 0 and up, to at least 1, where x < 0
// (from the bits of x), so that a non-zero x whose product underflowed still gets magnitude 0.5
// (A2 step 5). No float operation meets a subnormal operand whose value matters, so the codes do
// not depend on whether the device flushes subnormals (tests/test_hardware_modes.py).
#pragma once

#include "kernel_operator.h"
#include "amct_kernel_common.h"
#include "svd_quant_tiling.h"

namespace amct_mxfp4_kernel {

using namespace AscendC;

using amct_kernel::BlockRange;
using amct_kernel::Reduce;
using amct_kernel::ReduceEachRepeat;
using amct_kernel::WaitForPipe;

constexpr uint32_t kBlock = amct_mxfp4::kMxBlock;
constexpr uint32_t kQuantum = amct_mxfp4::kMxTileQuantum;
constexpr uint32_t kMaxRepeat = 255;              // repeats per repeat-form call

// Block-level slots (tileBlocks 32-bit values each).
enum BlockSlot : uint32_t {
  kBMax = 0,  // the largest exponent float of the block, then sb as float
  kBClamp,    // E, then Ec (int32)
  kBKeep,     // the keep word: 0xFFFFFFFF for a finite block, else 0
  kBScale,    // sb (int32)
  kBMul,      // the multiplier 2^(129 - Ec) (bits built in int32)
  kBlockSlots
};

__aicore__ inline uint32_t RoundUp(uint32_t v, uint32_t m) { return (v + m - 1) / m * m; }
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

template <typename T>
class Quantiser {
  // fp16 widens to normal fp32 values only: its scaling is a float Mul; bf16/fp32 may hold
  // subnormals and scale by integer exponent arithmetic.
  static constexpr bool kHalf = amct_kernel::IsHalf<T>::value;

 public:
  // The UB buffers for tiles of tileBlocks blocks (a multiple of kMxTileQuantum). The host's
  // ubBytes() mirrors this list (svd_quant_host.cpp).
  __aicore__ inline void InitBuffers(uint32_t roundMode, uint32_t tileBlocks, TPipe* pipe) {
    mode_ = roundMode;
    U_ = tileBlocks;
    const uint32_t n = U_ * kBlock;
    pipe->InitBuffer(inQueue_, 2, n * static_cast<uint32_t>(sizeof(T)));
    // Single output buffers: a tile's compute outlasts the previous tile's copy-out anyway, and
    // allocating them first makes that copy-out known complete to every vector op of the tile.
    pipe->InitBuffer(codeQueue_, 1, n / 2);
    pipe->InitBuffer(scaleQueue_, 1, U_);
    if constexpr (sizeof(T) != 4) pipe->InitBuffer(wideBuf_, n * 4);
    pipe->InitBuffer(w1Buf_, n * 4);
    pipe->InitBuffer(w2Buf_, n * 4);
    pipe->InitBuffer(w3Buf_, n * 4);
    pipe->InitBuffer(blockBuf_, kBlockSlots * U_ * 4);
  }

  // The run to quantize: range.length blocks from input + range.start blocks, written to codes and
  // scales at the same block offsets (16 code bytes and one scale byte per block, dense).
  __aicore__ inline void Bind(GM_ADDR input, GM_ADDR codes, GM_ADDR scales, BlockRange range) {
    range_ = range;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(input) + range_.start * kBlock, range_.length * kBlock);
    codeGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(codes) + range_.start * (kBlock / 2),
                            range_.length * (kBlock / 2));
    scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(scales) + range_.start, range_.length);
  }

  __aicore__ inline void Process() {
    amct_kernel::ForEachTile(range_.length, U_, *this);
  }

  // One tile: the step amct_kernel::ForEachTile calls.
  __aicore__ inline void ProcessTile(uint64_t done, uint32_t u) {
    CopyIn(done, u);
    Compute(u);
    CopyOut(done, u);
  }

 private:
  __aicore__ inline LocalTensor<float> B(uint32_t slot) { return blockBuf_.Get<float>()[slot * U_]; }
  static __aicore__ inline LocalTensor<uint32_t> U32(const LocalTensor<float>& t) {
    return t.ReinterpretCast<uint32_t>();
  }
  static __aicore__ inline LocalTensor<int32_t> I32(const LocalTensor<float>& t) {
    return t.ReinterpretCast<int32_t>();
  }
  static __aicore__ inline LocalTensor<uint16_t> U16(const LocalTensor<float>& t) {
    return t.ReinterpretCast<uint16_t>();
  }

  __aicore__ inline void CopyIn(uint64_t block, uint32_t u) {
    LocalTensor<T> x = inQueue_.template AllocTensor<T>();
    DataCopy(x, xGm_[block * kBlock], u * kBlock);
    inQueue_.EnQue(x);
  }

  // Block level (A2 steps 1-4): the scale bytes, the multipliers and the keep words.
  __aicore__ inline void BlockScales(const LocalTensor<float>& x, const LocalTensor<uint8_t>& scale, uint32_t blocks) {
    const int32_t bc = static_cast<int32_t>(blocks);
    // The exponent-field pattern is filled per tile into scratch: a constant buffer would cost
    // a quarter of the tile.
    LocalTensor<float> big = B(kBMax);
    amct_kernel::LargestExponentOfEachBlock(big, x, w2Buf_.Get<float>(), w1Buf_.Get<float>(), blocks);
    hasNonFinite_ = amct_kernel::TileHasNonFinite(big, w3Buf_.Get<float>(), blocks);
    LocalTensor<int32_t> ec = I32(B(kBClamp));
    ShiftRight(U32(B(kBClamp)), U32(big), uint32_t(23), bc);  // E (the max is never negative)
    LocalTensor<int32_t> keep = I32(B(kBKeep));
    Adds(keep, ec, int32_t(-255), bc);
    ShiftRight(keep, keep, int32_t(31), bc);  // arithmetic: -1 where E < 255, else 0
    Maxs(ec, ec, int32_t(2), bc);
    Mins(ec, ec, int32_t(254), bc);
    // sb = Ec + 1 + 3 * keep: Ec - 2 for a finite block, 255 (= 254 + 1) for a non-finite one.
    LocalTensor<int32_t> sb = I32(B(kBScale));
    Muls(sb, keep, int32_t(3), bc);
    Add(sb, sb, ec, bc);
    Adds(sb, sb, int32_t(1), bc);
    LocalTensor<int32_t> mul = I32(B(kBMul));
    Muls(mul, ec, int32_t(-1), bc);
    Adds(mul, mul, int32_t(256), bc);                     // the multiplier's exponent field 256 - Ec
    ShiftLeft(U32(B(kBMul)), U32(B(kBMul)), uint32_t(23), bc);  // 2^(129 - Ec), a normal float
    // bf16/fp32: the exponent-field offset (129 - Ec) << 23 instead, for the integer scaling.
    if constexpr (!kHalf) Adds(mul, mul, -(int32_t(127) << 23), bc);
    LocalTensor<float> sbFloat = big;                     // the block maxima are no longer needed
    Cast(sbFloat, sb, RoundMode::CAST_RINT, blocks);      // 0..255: exact
    LocalTensor<float> clampSlot = B(kBClamp);
    LocalTensor<half> sbHalf = clampSlot.ReinterpretCast<half>();  // Ec is no longer needed
    Cast(sbHalf, sbFloat, RoundMode::CAST_RINT, blocks);
    Cast(scale, sbHalf, RoundMode::CAST_RINT, blocks);
  }

  // dst[i] = B(kBMul)[i / 32]: Brcb gives every value a 32-B block (8 copies), GatherMask keeps 4
  // of them, and a second Brcb turns each of those into a block: 32 copies, all contiguous.
  __aicore__ inline void BroadcastMultipliers(const LocalTensor<float>& dst, const LocalTensor<float>& tmp,
                                              uint32_t blocks) {
    LocalTensor<float> eight = tmp;             // 8 * blocks values
    LocalTensor<float> four = tmp[8 * blocks];  // 4 * blocks values
    LocalTensor<float> mul = B(kBMul);
    for (uint32_t b = 0; b < blocks; b += 8 * kMaxRepeat) {
      const uint32_t len = MinU(blocks - b, 8 * kMaxRepeat);
      Brcb(eight[8 * b], mul[b], static_cast<uint8_t>(len / 8), BrcbRepeatParams(1, 8));
    }
    uint64_t kept = 0;
    for (uint32_t b = 0; b < blocks; b += 8 * kMaxRepeat) {  // 8 blocks' copies per 256-B repeat
      const uint32_t len = MinU(blocks - b, 8 * kMaxRepeat);
      GatherMaskParams params(1, static_cast<uint16_t>(len / 8), 8, 0);
      GatherMask(four[4 * b], eight[8 * b], uint8_t(1), false, 0u, params, kept);  // even lanes
    }
    for (uint32_t v = 0; v < 4 * blocks; v += 8 * kMaxRepeat) {
      const uint32_t len = MinU(4 * blocks - v, 8 * kMaxRepeat);
      Brcb(dst[8 * v], four[v], static_cast<uint8_t>(len / 8), BrcbRepeatParams(1, 8));
    }
  }

  __aicore__ inline void Compute(uint32_t u) {
    const uint32_t blocks = RoundUp(u, kQuantum);
    const uint32_t n = blocks * kBlock;
    const int32_t cnt = static_cast<int32_t>(n);
    LocalTensor<uint8_t> scale = scaleQueue_.template AllocTensor<uint8_t>();
    LocalTensor<uint8_t> bytes = codeQueue_.template AllocTensor<uint8_t>();
    LocalTensor<T> in = inQueue_.template DeQue<T>();
    LocalTensor<float> w1 = w1Buf_.Get<float>();
    LocalTensor<float> w2 = w2Buf_.Get<float>();
    LocalTensor<float> w3 = w3Buf_.Get<float>();
    LocalTensor<float> x = amct_kernel::WidenTile(in, wideBuf_, w1, u * kBlock, n);  // zero-padded to the quantum
    BlockScales(x, scale, blocks);
    scaleQueue_.EnQue(scale);
    if (hasNonFinite_) {
      LocalTensor<float> keepWords = B(kBKeep);
      Select(x, keepWords.ReinterpretCast<uint8_t>(), x, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    }
    BroadcastMultipliers(w2, w1, blocks);
    if constexpr (kHalf) {
      Mul(w2, x, w2, cnt);  // normal operands, normal products (|y| >= 2^-37)
      Abs(w2, w2, cnt);     // a
    } else {
      amct_kernel::ScaleByPowerOfTwo(w2, x, w2, w1, n);  // a, exact from 2^-126 on
    }
    if constexpr (sizeof(T) == 4) RoundToOddHalf(w2, w1, n);
    // c = min(2a, a + 2, a / 2 + 4, 7) = min(a + min(a, 2), a / 2 + 4, 7).
    Mins(w3, w2, 2.0f, cnt);
    Add(w3, w2, w3, cnt);
    Muls(w1, w2, 0.5f, cnt);
    Adds(w1, w1, 4.0f, cnt);
    Min(w3, w3, w1, cnt);
    Mins(w3, w3, 7.0f, cnt);
    RoundToCode(I32(w1), w3, w2, x, n);
    // code |= sign bit << 3.
    LocalTensor<uint32_t> sign = U32(w2);
    ShiftRight(sign, U32(x), uint32_t(31), cnt);
    ShiftLeft(sign, sign, uint32_t(3), cnt);
    Or(U16(w1), U16(w1), U16(w2), 2 * cnt);
    inQueue_.FreeTensor(in);
    PackCodes(U32(w1), bytes, n);
    codeQueue_.EnQue(bytes);
  }

  // fp32 input only: a rounded to odd at half precision and widened back (exact), so that the
  // piecewise-linear c is computed exactly and still decides as a would.
  __aicore__ inline void RoundToOddHalf(const LocalTensor<float>& a, const LocalTensor<float>& tmp, uint32_t n) {
    LocalTensor<half> narrow = tmp.ReinterpretCast<half>();
    Cast(narrow, a, RoundMode::CAST_ODD, n);
    Cast(a, narrow, RoundMode::CAST_NONE, n);
  }

  // code = c rounded to an integer as A2 step 6 says for this round mode. c is consumed.
  __aicore__ inline void RoundToCode(const LocalTensor<int32_t>& code, const LocalTensor<float>& c,
                                     const LocalTensor<float>& tmp, const LocalTensor<float>& x, uint32_t n) {
    if (mode_ == amct_mxfp4::kRound) {
      Cast(code, c, RoundMode::CAST_ROUND, n);
    } else if (mode_ == amct_mxfp4::kRint) {
      Cast(code, c, RoundMode::CAST_RINT, n);
    } else {
      // Toward -inf on the signed value: floor of c where x >= 0; where x < 0 (decided on the
      // bits of x, never on an underflowed product), ceil of c but at least 1 (A2 step 5):
      // code = floor + [x < 0] * (max(ceil, 1) - floor), in integers.
      const int32_t cnt = static_cast<int32_t>(n);
      LocalTensor<int32_t> diff = I32(tmp);
      LocalTensor<int32_t> flag = I32(c);
      Cast(code, c, RoundMode::CAST_FLOOR, n);
      Cast(diff, c, RoundMode::CAST_CEIL, n);
      Maxs(diff, diff, int32_t(1), cnt);
      Sub(diff, diff, code, cnt);
      ShiftLeft(U32(c), U32(x), uint32_t(1), cnt);
      ShiftRight(U32(c), U32(c), uint32_t(1), cnt);
      Mins(flag, flag, int32_t(1), cnt);  // x != +-0
      Mul(diff, diff, flag, cnt);
      ShiftRight(U32(c), U32(x), uint32_t(31), cnt);  // the sign bit
      Mul(diff, diff, flag, cnt);
      Add(code, code, diff, cnt);
    }
  }

  // Two codes per byte, the even element in the low nibble: word = c0 | c1 << 4 | c2 << 8 |
  // c3 << 12 from the four lanes of every 4 (GatherMask patterns 3..6), built in the low half of a
  // 32-bit lane and kept by a GatherMask of the even 16-bit lanes.
  __aicore__ inline void PackCodes(const LocalTensor<uint32_t>& code, const LocalTensor<uint8_t>& bytes, uint32_t n) {
    LocalTensor<uint32_t> lanes = U32(w3Buf_.Get<float>());  // four runs of n / 4: lanes 0..3 of each 4
    const uint32_t quarter = n / 4;
    uint64_t kept = 0;
    for (uint32_t i = 0; i < n; i += 64 * kMaxRepeat) {  // 64 32-bit lanes per repeat
      const uint32_t len = MinU(n - i, 64 * kMaxRepeat);
      GatherMaskParams params(1, static_cast<uint16_t>(len / 64), 8, 0);
      for (uint32_t j = 0; j < 4; ++j) {
        GatherMask(lanes[j * quarter + i / 4], code[i], static_cast<uint8_t>(3 + j), false, 0u, params, kept);
      }
    }
    const int32_t q = static_cast<int32_t>(quarter);
    LocalTensor<uint32_t> word = lanes[3 * quarter];
    for (uint32_t j = 3; j > 0; --j) {  // Horner: ((c3 << 4 | c2) << 4 | c1) << 4 | c0
      ShiftLeft(word, word, uint32_t(4), q);
      Or(word.ReinterpretCast<uint16_t>(), word.ReinterpretCast<uint16_t>(),
         lanes[(j - 1) * quarter].ReinterpretCast<uint16_t>(), 2 * q);
    }
    LocalTensor<uint16_t> halves = word.ReinterpretCast<uint16_t>();  // 2 * quarter
    for (uint32_t i = 0; i < 2 * quarter; i += 128 * kMaxRepeat) {   // 128 16-bit lanes per repeat
      const uint32_t len = MinU(2 * quarter - i, 128 * kMaxRepeat);
      GatherMaskParams params(1, static_cast<uint16_t>(len / 128), 8, 0);
      GatherMask(bytes.ReinterpretCast<uint16_t>()[i / 2], halves[i], uint8_t(1), false, 0u, params, kept);
    }
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
  bool hasNonFinite_ = false;  // of the current tile
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
  TBuf<TPosition::VECCALC> blockBuf_;
};

}  // namespace amct_mxfp4_kernel
