// svd_quant: the fused NPU kernel of out = bf16(bf16(bf16(X D) U) + bf16(Q(X) Q(W)^T))
// (docs/mxfp4.md, svd_quant), one MIX kernel (KERNEL_TYPE_MIX_AIC_1_2) for dav-3510: per block
// one AIC (cube) core and its two AIV (vector) cores. Compiled by bisheng for dav-3510 and by g++
// against the kernel sim, where the private op _svd_quant_emulated runs it.
//
// Work (svd_quant_fused_tiling.h): block b owns one tile of the output, rows [m0, m0 + rows) x
// columns [n0, n0 + cols).
//   AIV  The two vector cores quantize the tile's rows of X (A2, "round"; the Quantiser class the
//        mxfp4_quantize kernel runs, mxfp4_quantiser.h) chunkM rows at a time, half of each chunk
//        each, into the block's workspace: codes (rows, K/2), scales in rows of 2 * ceil(K/64)
//        bytes (the layout the MX matmul reads; when K/32 is odd the quantizer's dense scales are
//        repacked with a 0x00 pad byte per row). After each chunk each sets flag kChunkReady.
//   AIC  Meanwhile DP = bf16(X D) (Matmul, bf16 in, fp32 accumulation, bf16 out) into the
//        workspace and out = bf16(DP U) (the same) into the output tile; then, per chunk, it
//        waits for kChunkReady and runs the MX FP4 matmul Q(X) Q(W)^T (E2M1 codes with E8M0
//        scales, exact block products, fp32 accumulation, bf16 out) with IterateAll's atomic add:
//        out = bf16(out + bf16(fp4)), the last two rounding points of the formula, in order.
// Every GM offset is 64-bit; the Matmul calls see tile-local shapes only.
//
// dav-3510 only (the MX matmul exists there): svd_quant/CMakeLists.txt lists it as KERNEL_3510, so
// bisheng compiles it for ascend950 only and the sim compiles it for dav-3510 in every build (in
// a dav-2201 build into libamct_svd_quant_sim3510.so, docs/kernel_sim.md). The kernel body is a
// template on the arch whose other instances are empty, so the source also compiles for dav-2201.
#include "kernel_operator.h"
#define ASCENDC_CUBE_ONLY  // the Matmul objects run on the AIC itself (ASCEND_IS_AIC / ASCEND_IS_AIV split below)
#include "lib/matmul_intf.h"
#include "amct_kernel_common.h"
#include "mxfp4_quantiser.h"
#include "svd_quant_fused_tiling.h"

using namespace AscendC;

namespace {

using amct_svdq::SvdFusedTiling;

constexpr uint16_t kChunkReady = 3;  // AIV -> AIC, mode 2: one chunk of Q(X) is in the workspace
constexpr uint32_t kBlock = amct_mxfp4::kMxBlock;

struct Tile {
  uint64_t m0;
  uint32_t rows;
  uint32_t n0;
  uint32_t cols;
};

__aicore__ inline uint32_t MinU32(uint64_t a, uint64_t b) { return static_cast<uint32_t>(a < b ? a : b); }

__aicore__ inline Tile TileOfBlock(const SvdFusedTiling& t, uint32_t block) {
  const uint32_t mi = block / t.nTiles;
  const uint32_t ni = block % t.nTiles;
  Tile tile;
  tile.m0 = static_cast<uint64_t>(mi) * t.singleM;
  tile.rows = MinU32(t.m - tile.m0, t.singleM);
  tile.n0 = ni * t.singleN;
  tile.cols = MinU32(t.n - tile.n0, t.singleN);
  return tile;
}

__aicore__ inline uint32_t ChunksOf(const SvdFusedTiling& t, const Tile& tile) {
  return (tile.rows + t.chunkM - 1) / t.chunkM;
}

// ---- AIV: Q(X) of the tile's rows --------------------------------------------------------------

class VectorPart {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR workspace, const SvdFusedTiling& t, TPipe* pipe) {
    t_ = &t;
    tile_ = TileOfBlock(t, GetBlockIdx() / 2);
    sub_ = GetSubBlockIdx();
    x_ = x;
    ws_ = workspace + static_cast<uint64_t>(GetBlockIdx() / 2) * t.wsBlockBytes;
    blocksPerRow_ = t.k / kBlock;
    quantiser_.InitBuffers(amct_mxfp4::kRound, t.quantTileBlocks, pipe);
    if (t.repackRows > 0) pipe->InitBuffer(repackBuf_, t.repackRows * RoundUp32(t.scaleRow));
  }

  __aicore__ inline void Process() {
    const uint32_t chunks = ChunksOf(*t_, tile_);
    for (uint32_t c = 0; c < chunks; ++c) {
      const uint32_t first = c * t_->chunkM;
      const uint32_t rows = MinU32(tile_.rows - first, t_->chunkM);
      const uint32_t half = (rows + 1) / 2;
      const uint32_t mine = sub_ == 0 ? half : rows - half;
      if (mine > 0) QuantizeRows(first + sub_ * half, mine);
      // The flag goes out on MTE3 behind this core's last workspace write.
      CrossCoreSetFlag<2, PIPE_MTE3>(kChunkReady);
    }
  }

 private:
  static __aicore__ inline uint32_t RoundUp32(uint32_t v) { return (v + 31) / 32 * 32; }

  // Rows [row, row + count) of the tile (tile-local) into the workspace.
  __aicore__ inline void QuantizeRows(uint32_t row, uint32_t count) {
    const uint64_t xOffset = (tile_.m0 + row) * t_->k * sizeof(bfloat16_t);
    GM_ADDR codes = ws_ + t_->wsCodes + static_cast<uint64_t>(row) * (t_->k / 2);
    const bool dense = t_->repackRows == 0;  // K/32 even: dense scale rows are the MX layout already
    GM_ADDR scales = dense ? ws_ + t_->wsScales + static_cast<uint64_t>(row) * t_->scaleRow
                           : ws_ + t_->wsDense + static_cast<uint64_t>(row) * blocksPerRow_;
    quantiser_.Bind(x_ + xOffset, codes, scales, amct_kernel::BlockRange{0, static_cast<uint64_t>(count) * blocksPerRow_});
    quantiser_.Process();
    if (!dense) RepackScales(row, count);
  }

  // Dense rows of K/32 scale bytes -> rows of K/32 + 1 bytes ending in the pad byte 0x00: each row
  // lands in its own 32-B aligned UB slot, padded with zeros, and goes back one byte longer.
  __aicore__ inline void RepackScales(uint32_t row, uint32_t count) {
    amct_kernel::WaitForPipe<HardEvent::MTE3_MTE2>();  // the quantizer's dense scales are in GM
    GlobalTensor<uint8_t> dense;
    GlobalTensor<uint8_t> padded;
    dense.SetGlobalBuffer(ws_ + t_->wsDense + static_cast<uint64_t>(row) * blocksPerRow_,
                          static_cast<uint64_t>(count) * blocksPerRow_);
    padded.SetGlobalBuffer(ws_ + t_->wsScales + static_cast<uint64_t>(row) * t_->scaleRow,
                           static_cast<uint64_t>(count) * t_->scaleRow);
    LocalTensor<uint8_t> slots = repackBuf_.Get<uint8_t>();
    const uint8_t right = static_cast<uint8_t>(RoundUp32(blocksPerRow_) - blocksPerRow_);
    for (uint32_t done = 0; done < count; done += t_->repackRows) {
      const uint16_t n = static_cast<uint16_t>(MinU32(count - done, t_->repackRows));
      DataCopyExtParams in{n, blocksPerRow_, 0, 0, 0};
      DataCopyPad(slots, dense[static_cast<uint64_t>(done) * blocksPerRow_], in,
                  DataCopyPadExtParams<uint8_t>{true, 0, right, 0});
      amct_kernel::WaitForPipe<HardEvent::MTE2_MTE3>();
      DataCopyExtParams out{n, t_->scaleRow, 0, 0, 0};
      DataCopyPad(padded[static_cast<uint64_t>(done) * t_->scaleRow], slots, out);
      amct_kernel::WaitForPipe<HardEvent::MTE3_MTE2>();  // the slots are reloaded next pass
    }
  }

  const SvdFusedTiling* t_ = nullptr;
  Tile tile_{};
  uint32_t sub_ = 0;
  uint32_t blocksPerRow_ = 0;
  GM_ADDR x_ = nullptr;
  GM_ADDR ws_ = nullptr;
  amct_mxfp4_kernel::Quantiser<bfloat16_t> quantiser_;
  TBuf<TPosition::VECIN> repackBuf_;  // loaded by MTE2, stored by MTE3
};

// ---- AIC: the three matmuls ---------------------------------------------------------------------

using Bf16Type = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>;
using Fp4AType = MatmulTypeWithScale<TPosition::GM, TPosition::GM, CubeFormat::ND, fp4x2_e2m1_t, false>;
// W is (N, K) with scales (N, scaleRow): B and its scales transposed.
using Fp4BType = MatmulTypeWithScale<TPosition::GM, TPosition::GM, CubeFormat::ND, fp4x2_e2m1_t, true>;
using Fp4Matmul = Matmul<Fp4AType, Fp4BType, Bf16Type, Bf16Type, CFG_NORM, MatmulCallBackFunc<nullptr, nullptr, nullptr>,
                         Impl::Detail::MatmulWithScalePolicy>;

// The MX matmul of an arch, named through a template so that only dav-3510 instantiates it.
template <int Arch>
struct MxMatmulOf {
  using Type = Fp4Matmul;
};

template <class MxMatmul>
class CubePart {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR wCodes, GM_ADDR wScales, GM_ADDR down, GM_ADDR up, GM_ADDR out,
                              GM_ADDR workspace, const SvdFusedTiling& t) {
    t_ = &t;
    tile_ = TileOfBlock(t, GetBlockIdx());
    GM_ADDR ws = workspace + static_cast<uint64_t>(GetBlockIdx()) * t.wsBlockBytes;
    const uint64_t k = t.k;
    const uint64_t n = t.n;
    x_.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(x) + tile_.m0 * k, static_cast<uint64_t>(tile_.rows) * k);
    d_.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(down), k * t.r);
    u_.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(up) + tile_.n0, static_cast<uint64_t>(t.r) * n - tile_.n0);
    dp_.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(ws + t.wsDp), static_cast<uint64_t>(tile_.rows) * t.r);
    out_.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(out) + tile_.m0 * n + tile_.n0,
                         static_cast<uint64_t>(tile_.rows) * n - tile_.n0);
    // The fp4x2 / e8m0 tensors are placed by byte address (two E2M1 codes per byte); each chunk
    // of Q(X) gets its own GlobalTensor in Fp4().
    xqBase_ = ws + t.wsCodes;
    xsBase_ = ws + t.wsScales;
    wq_.SetGlobalBuffer(reinterpret_cast<__gm__ fp4x2_e2m1_t*>(wCodes + static_cast<uint64_t>(tile_.n0) * (k / 2)),
                        static_cast<uint64_t>(tile_.cols) * k);
    ws_.SetGlobalBuffer(reinterpret_cast<__gm__ fp8_e8m0_t*>(wScales + static_cast<uint64_t>(tile_.n0) * t.scaleRow),
                        static_cast<uint64_t>(tile_.cols) * t.scaleRow);
  }

  __aicore__ inline void Process(TPipe* pipe) {
    REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mmDown_, &t_->down, mmUp_, &t_->up, mmMx_, &t_->mx);
    LowRank();
    PipeBarrier<PIPE_ALL>();  // out holds bf16(DP U) before the atomic adds read it
    Fp4();
  }

 private:
  // DP = bf16(X D) into the workspace, then out = bf16(DP U).
  __aicore__ inline void LowRank() {
    const int32_t rows = static_cast<int32_t>(tile_.rows);
    const int32_t r = static_cast<int32_t>(t_->r);
    mmDown_.SetOrgShape(rows, r, static_cast<int32_t>(t_->k));
    mmDown_.SetTail(rows, r, static_cast<int32_t>(t_->k));
    mmDown_.SetTensorA(x_);
    mmDown_.SetTensorB(d_);
    mmDown_.IterateAll(dp_);
    mmDown_.End();
    PipeBarrier<PIPE_ALL>();  // DP is in GM before the next matmul loads it
    mmUp_.SetOrgShape(rows, static_cast<int32_t>(t_->n), r);
    mmUp_.SetTail(rows, static_cast<int32_t>(tile_.cols), r);
    mmUp_.SetTensorA(dp_);
    mmUp_.SetTensorB(u_);
    mmUp_.IterateAll(out_);
    mmUp_.End();
  }

  // Per chunk of rows, once its Q(X) is in the workspace: out += bf16(Q(X) Q(W)^T) (atomic add).
  __aicore__ inline void Fp4() {
    const uint64_t k = t_->k;
    const uint32_t chunks = ChunksOf(*t_, tile_);
    for (uint32_t c = 0; c < chunks; ++c) {
      const uint64_t first = static_cast<uint64_t>(c) * t_->chunkM;
      const int32_t rows = static_cast<int32_t>(MinU32(tile_.rows - first, t_->chunkM));
      CrossCoreWaitFlag(kChunkReady);  // both AIV halves of the chunk (mode 2)
      mmMx_.SetOrgShape(rows, static_cast<int32_t>(t_->n), static_cast<int32_t>(k));
      mmMx_.SetTail(rows, static_cast<int32_t>(tile_.cols), static_cast<int32_t>(k));
      GlobalTensor<fp4x2_e2m1_t> xq;
      xq.SetGlobalBuffer(reinterpret_cast<__gm__ fp4x2_e2m1_t*>(xqBase_ + first * (k / 2)), static_cast<uint64_t>(rows) * k);
      GlobalTensor<fp8_e8m0_t> xs;
      xs.SetGlobalBuffer(reinterpret_cast<__gm__ fp8_e8m0_t*>(xsBase_ + first * t_->scaleRow),
                         static_cast<uint64_t>(rows) * t_->scaleRow);
      mmMx_.SetTensorA(xq, false);
      mmMx_.SetTensorScaleA(xs, false);
      mmMx_.SetTensorB(wq_, true);
      mmMx_.SetTensorScaleB(ws_, true);
      mmMx_.IterateAll(out_[first * t_->n], 1);
    }
    mmMx_.End();
  }

  const SvdFusedTiling* t_ = nullptr;
  Tile tile_{};
  GlobalTensor<bfloat16_t> x_;
  GlobalTensor<bfloat16_t> d_;
  GlobalTensor<bfloat16_t> u_;
  GlobalTensor<bfloat16_t> dp_;
  GlobalTensor<bfloat16_t> out_;
  GM_ADDR xqBase_ = nullptr;
  GM_ADDR xsBase_ = nullptr;
  GlobalTensor<fp4x2_e2m1_t> wq_;
  GlobalTensor<fp8_e8m0_t> ws_;
  Matmul<Bf16Type, Bf16Type, Bf16Type> mmDown_;
  Matmul<Bf16Type, Bf16Type, Bf16Type> mmUp_;
  MxMatmul mmMx_;
};

template <int Arch>
__aicore__ inline void RunFused(GM_ADDR x, GM_ADDR wCodes, GM_ADDR wScales, GM_ADDR down, GM_ADDR up, GM_ADDR out,
                                GM_ADDR workspace, GM_ADDR tiling) {
  if constexpr (Arch == 3510) {
    SvdFusedTiling t = amct_kernel::LoadTiling<SvdFusedTiling>(tiling);
    TPipe pipe;
    if ASCEND_IS_AIC {
      CubePart<typename MxMatmulOf<Arch>::Type> cube;
      cube.Init(x, wCodes, wScales, down, up, out, workspace, t);
      cube.Process(&pipe);
    }
    if ASCEND_IS_AIV {
      VectorPart vector;
      vector.Init(x, workspace, t, &pipe);
      vector.Process();
    }
  }
}

}  // namespace

// x (M, K) bf16; wCodes (N, K/2) E2M1 pairs; wScales (N, scaleRow) E8M0 with pad bytes 0x00;
// down (K, R), up (R, N) bf16; out (M, N) bf16; workspace blockNum * wsBlockBytes bytes.
extern "C" __global__ __aicore__ void amct_svd_quant_fused_kernel(GM_ADDR x, GM_ADDR wCodes, GM_ADDR wScales,
                                                                  GM_ADDR down, GM_ADDR up, GM_ADDR out,
                                                                  GM_ADDR workspace, GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  RunFused<__NPU_ARCH__>(x, wCodes, wScales, down, up, out, workspace, tiling);
}

extern "C" void amct_svd_quant_fused_launch(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* wCodes,
                                            uint8_t* wScales, uint8_t* down, uint8_t* up, uint8_t* out,
                                            uint8_t* workspace, uint8_t* tiling) {
#if defined(AMCT_KERNEL_SIM)
  (void)stream;
  amct_sim::LaunchMix("amct_svd_quant_fused_kernel", blockDim, 2,
                      [=] { amct_svd_quant_fused_kernel(x, wCodes, wScales, down, up, out, workspace, tiling); });
#else
  amct_svd_quant_fused_kernel<<<blockDim, nullptr, stream>>>(x, wCodes, wScales, down, up, out, workspace, tiling);
#endif
}
