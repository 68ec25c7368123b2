// amct kernel sim: the AIC's low-level cube data path (basic API, ISASI), the smallest complete
// chain for C = A * B^T with A [M, K] and B [N, K] (rows at a stride) bf16/half ND in GM, C fp32:
//   DataCopy GM -> L1 (Nd2NzParams)  ->  LoadData L1 -> L0A/L0B (LoadData2DParamsV2)  ->
//   Mmad L0A x L0B -> L0C (MmadParams)  ->  Fixpipe L0C -> UB of the AIVs (FixpipeParamsArch3510,
//   NZ2ND, single or dual destination).
// Internal header: kernels include "kernel_operator.h".
//
// Declarations follow CANN asc-devkit (head of July 2026): Nd2NzParams (include/basic_api/
// kernel_struct_data_copy.h), LoadData2DParamsV2 and MmadParams (include/basic_api/kernel_struct_mm.h),
// FixpipeConfig, CFG_*, TransformParams, FixpipeParamsArch3510/C310 (include/basic_api/
// kernel_struct_fixpipe.h), Nz2NdParams, Nz2DnParams (impl/basic_api/utils/
// kernel_utils_struct_dma_params.h), the functions (include/basic_api/kernel_operator_data_copy_intf.h,
// kernel_operator_mm_intf.h, kernel_operator_fixpipe_intf.h). Semantics from the docs
// (docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/): 矩阵计算的搬入/DataCopy（GMToL1随路转换-ND2NZ搬运）.md,
// LoadData_2D_V2.md, Mmad计算/Mmad.md, 矩阵计算的搬出/Fixpipe（L0C到UB数据搬运）.md,
// 矩阵搬出关键特性说明/L0C-Buffer到UB双目标模式.md, and the example
// examples/01_simd_cpp_api/03_basic_api/03_matrix_compute/fixpipe_l0c2ub.
//
// Layouts (dav-3510, Mmad.md table 1): L1 holds what ND2NZ wrote (element (r, d) of an ND matrix at
// (d / c0) * dstNzC0Stride * 32 B + r * dstNzNStride * 32 B + (d % c0) * sizeof(T), c0 = 32 / sizeof(T));
// L0A is Nz (16 x 16 fractals, fractal (mi, ki) at (ki * mFrac + mi) * 512 B, rows of 16 contiguous);
// L0B is Zn (fractal (ki, nj) at (ki * nFrac + nj) * 512 B, each with k contiguous: element (k, n) at
// (n % 16) * 16 + k % 16); L0C is Nz (element (m, n) at ((n / 16) * mFrac * 16 + m) * 16 + n % 16 floats),
// with mFrac = ceil(m / 16), nFrac = ceil(n / 16). B given as rows [N, K] (keys as rows) therefore needs no
// transpose on the way to L0B: its ND2NZ image already is Zn, and LoadData2DParamsV2 with
// ifTranspose = false copies it (what the Matmul library does for a transposed B on dav-3510:
// impl/adv_api/detail/matmul/stage/split/load_to_l0b/load_to_l0b_load2dV2.h, TransLoadDataToL0).
//
// Numerics: every L0C element is acc = (cmatrixInitVal ? +0 : its L0C value); for k = 0..K-1:
// acc = fp32(acc + a[m][k] * b[k][n]) -- the Matmul emulation's order and rounding
// (AccumulateRowInKOrder, shared with sim_matmul.h). Fixpipe with NoQuant copies the fp32 values.
//
// The cube hazard model: each cube buffer keeps per 32-B block its last write and last read (L1:
// written by MTE2, read by MTE1; L0A/L0B: MTE1 / M; L0C: M / FIX); a read before the writing pipe's
// op is known complete to the reader, or a write before the last reader's op is known complete to
// the writer, is a SimError naming the missing HardEvent (MTE2_MTE1, MTE1_M, M_FIX, M_MTE1,
// MTE1_MTE2, FIX_M). Knowledge comes from SetFlag/WaitFlag, PipeBarrier<PIPE_ALL> and the cube
// TQue edges (TPosition::A1, ::B1: MTE2 -> MTE1, ::A2, ::B2: MTE1 -> M, ::CO1: M -> FIX), as for the vector pipes.
#pragma once

#include <type_traits>
#include <vector>

#include "sim_mix.h"

namespace amct_sim {
namespace detail {

// acc[j] = fp32(acc[j] + a[kk] * b[kk * n + j]) for kk = 0, 1, ..., k-1 in that order: the fp32
// accumulation every cube emulation of the sim uses (Mmad here, the Matmul API in sim_matmul.h).
// bf16/half products are exact in fp32 (in range), so one rounding per addition.
inline void AccumulateRowInKOrder(float* acc, const float* a, const float* b, int32_t k, int32_t n) {
  for (int32_t kk = 0; kk < k; ++kk) {
    const float av = a[kk];
    const float* brow = b + static_cast<size_t>(kk) * n;
    for (int32_t j = 0; j < n; ++j) acc[j] = acc[j] + av * brow[j];
  }
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

// ---- parameter structs -------------------------------------------------------------------------
struct Nd2NzParams {
  __aicore__ Nd2NzParams() {}
#if __NPU_ARCH__ == 3510
  __aicore__ Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint32_t dValueIn,
                         const uint64_t srcNdMatrixStrideIn, const uint64_t srcDValueIn, const uint16_t dstNzC0StrideIn,
                         const uint16_t dstNzNStrideIn, const uint32_t dstNzMatrixStrideIn)
      : ndNum(ndNumIn),
        nValue(nValueIn),
        dValue(dValueIn),
        srcNdMatrixStride(srcNdMatrixStrideIn),
        srcDValue(srcDValueIn),
        dstNzC0Stride(dstNzC0StrideIn),
        dstNzNStride(dstNzNStrideIn),
        dstNzMatrixStride(dstNzMatrixStrideIn) {}
  uint16_t ndNum = 0;
  uint16_t nValue = 0;
  uint32_t dValue = 0;
  uint64_t srcNdMatrixStride = 0;
  uint64_t srcDValue = 0;
  uint16_t dstNzC0Stride = 0;
  uint16_t dstNzNStride = 0;
  uint32_t dstNzMatrixStride = 0;
#else
  __aicore__ Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn,
                         const uint16_t srcNdMatrixStrideIn, const uint16_t srcDValueIn, const uint16_t dstNzC0StrideIn,
                         const uint16_t dstNzNStrideIn, const uint16_t dstNzMatrixStrideIn)
      : ndNum(ndNumIn),
        nValue(nValueIn),
        dValue(dValueIn),
        srcNdMatrixStride(srcNdMatrixStrideIn),
        srcDValue(srcDValueIn),
        dstNzC0Stride(dstNzC0StrideIn),
        dstNzNStride(dstNzNStrideIn),
        dstNzMatrixStride(dstNzMatrixStrideIn) {}
  uint16_t ndNum = 0;
  uint16_t nValue = 0;
  uint16_t dValue = 0;
  uint16_t srcNdMatrixStride = 0;
  uint16_t srcDValue = 0;
  uint16_t dstNzC0Stride = 0;
  uint16_t dstNzNStride = 0;
  uint16_t dstNzMatrixStride = 0;
#endif
};

struct LoadData2DParamsV2 {
  __aicore__ LoadData2DParamsV2() {}
  __aicore__ LoadData2DParamsV2(const uint32_t mStartPositionIn, const uint32_t kStartPositionIn, const uint16_t mStepIn,
                                const uint16_t kStepIn, const int32_t srcStrideIn, const uint16_t dstStrideIn,
                                const bool ifTransposeIn, const uint8_t sidIn)
      : mStartPosition(mStartPositionIn),
        kStartPosition(kStartPositionIn),
        mStep(mStepIn),
        kStep(kStepIn),
        srcStride(srcStrideIn),
        dstStride(dstStrideIn),
        ifTranspose(ifTransposeIn),
        sid(sidIn) {}
  uint32_t mStartPosition = 0;
  uint32_t kStartPosition = 0;
  uint16_t mStep = 0;
  uint16_t kStep = 0;
  int32_t srcStride = 0;
  uint16_t dstStride = 0;
  bool ifTranspose = false;
  uint8_t sid = 0;
};

struct MmadParams {
  __aicore__ MmadParams() {}
  __aicore__ MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn,
                        const int32_t fmOffsetIn, const bool enSsparseIn, const bool enWinogradAIn,
                        const bool enWinogradBIn)
      : m(mIn),
        n(nIn),
        k(kIn),
        isBias(isBiasIn),
        fmOffset(fmOffsetIn),
        enSsparse(enSsparseIn),
        enWinogradA(enWinogradAIn),
        enWinogradB(enWinogradBIn) {}
  __aicore__ MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn,
                        const bool cmatrixSourceIn, const bool cmatrixInitValIn)
      : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn), cmatrixInitVal(cmatrixInitValIn) {}
  uint16_t m = 0;
  uint16_t n = 0;
  uint16_t k = 0;
  bool isBias = false;
  int32_t fmOffset = 0;
  bool enSsparse = false;
  bool enWinogradA = false;
  bool enWinogradB = false;
  uint8_t unitFlag = 0;
  bool kDirectionAlign = false;
  bool cmatrixSource = false;
  bool cmatrixInitVal = true;
#if __NPU_ARCH__ == 3510
  bool disableGemv = false;
#endif
};

struct FixpipeConfig {
  CO2Layout format;
#if __NPU_ARCH__ == 3510
  bool isToUB;
#endif
  __aicore__ constexpr inline FixpipeConfig(CO2Layout format_)
      : format(format_)
#if __NPU_ARCH__ == 3510
        ,
        isToUB(false)
#endif
  {
  }
  __aicore__ constexpr inline FixpipeConfig(CO2Layout format_, bool isToUB_)
      : format(format_)
#if __NPU_ARCH__ == 3510
        ,
        isToUB(isToUB_)
#endif
  {
    (void)isToUB_;
  }
};

#if __NPU_ARCH__ == 3510
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ, false};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR, false};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR, false};
#else
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};
#endif

struct Nz2NdParams {
#if __NPU_ARCH__ == 3510
  __aicore__ Nz2NdParams() {}
  __aicore__ Nz2NdParams(const uint16_t ndNumIn, const uint16_t srcNdStrideIn, const uint32_t dstNdStrideIn) {
    ndNum = ndNumIn;
    srcNdStride = srcNdStrideIn;
    dstNdStride = dstNdStrideIn;
  }
  uint16_t ndNum = 1;
  uint16_t srcNdStride = 0;
  uint32_t dstNdStride = 0;
#else
  __aicore__ Nz2NdParams() {}
  __aicore__ Nz2NdParams(const bool nz2ndEnIn, const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                         const uint16_t dstNdStrideIn, const uint16_t originalNSizeIn) {
    nz2ndEn = nz2ndEnIn;
    ndNum = ndNumIn;
    srcNdStride = srcNdStrideIn;
    dstNdStride = dstNdStrideIn;
    originalNSize = originalNSizeIn;
  }
  bool nz2ndEn = false;
  uint16_t ndNum = 1;
  uint16_t srcNdStride = 0;
  uint16_t dstNdStride = 0;
  uint16_t originalNSize = 0;
#endif
};

struct Nz2DnParams {
  __aicore__ Nz2DnParams() {}
  __aicore__ Nz2DnParams(const uint16_t dnNumIn, const uint16_t srcNzMatrixStrideIn, const uint32_t dstDnMatrixStrideIn,
                         const uint16_t srcNzC0StrideIn) {
    dnNum = dnNumIn;
    srcNzMatrixStride = srcNzMatrixStrideIn;
    dstDnMatrixStride = dstDnMatrixStrideIn;
    srcNzC0Stride = srcNzC0StrideIn;
  }
  uint16_t dnNum = 1;
  uint16_t srcNzMatrixStride = 0;
  uint32_t dstDnMatrixStride = 0;
  uint16_t srcNzC0Stride = 0;
};

template <CO2Layout format>
struct TransformParams {};
template <>
struct TransformParams<CO2Layout::NZ> {
  __aicore__ inline TransformParams() {}
  using PARAMS = uint8_t;
};
template <>
struct TransformParams<CO2Layout::ROW_MAJOR> {
  __aicore__ inline TransformParams() {}
  using PARAMS = Nz2NdParams;
};
template <>
struct TransformParams<CO2Layout::COLUMN_MAJOR> {
  __aicore__ inline TransformParams() {}
  using PARAMS = Nz2DnParams;
};

// The field the docs call dualDstCtrl is dualDstCtl in the header (and the example).
template <CO2Layout format = CO2Layout::ROW_MAJOR>
struct FixpipeParamsArch3510 {
  __aicore__ FixpipeParamsArch3510() {}
  __aicore__ FixpipeParamsArch3510(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                                   const uint32_t dstStrideIn) {
    nSize = nSizeIn;
    mSize = mSizeIn;
    srcStride = srcStrideIn;
    dstStride = dstStrideIn;
  }
  ReluMode preReluMode = ReluMode::NO_RELU;
  ClipReluMode preClipReluMode = ClipReluMode::NOCLIP_RELU;
  uint64_t reluScalar;
  uint64_t vectorRelu;
  uint16_t nSize = 0;
  uint16_t mSize = 0;
  uint16_t srcStride = 0;
  uint32_t dstStride = 0;
  QuantMode_t quantPre = QuantMode_t::NoQuant;
  uint64_t deqScalar;
  bool reluEn = false;
  uint8_t unitFlag = 0;
  uint8_t dualDstCtl = 0;
  bool subBlockId = false;
  typename TransformParams<format>::PARAMS params;
  bool isChannelSplit = false;
};

template <CO2Layout format = CO2Layout::ROW_MAJOR>
struct FixpipeParamsC310 : FixpipeParamsArch3510<format> {
  __aicore__ FixpipeParamsC310() : FixpipeParamsArch3510<format>() {}
  __aicore__ FixpipeParamsC310(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                               const uint32_t dstStrideIn)
      : FixpipeParamsArch3510<format>(nSizeIn, mSizeIn, srcStrideIn, dstStrideIn) {}
};

}  // namespace AscendC

// ---- implementation --------------------------------------------------------------------------------
namespace amct_sim {
namespace detail {

template <class T>
constexpr bool kIsCube16 = std::is_same<T, bfloat16_t>::value || std::is_same<T, half>::value;

// The block must be the AIC of a MIX launch.
inline BlockCtx* CubeCtx(const char* api) {
  BlockCtx* c = Ctx(api);
  if (c->coreKind != kCoreAic || c->mix == nullptr) {
    Fail(api, "the cube data path (L1/L0A/L0B/L0C) is emulated on the AIC of a MIX launch only (an AIV's call, which "
              "the hardware forwards to the AIC, is not): call it in if ASCEND_IS_AIC { ... } of a kernel launched with "
              "amct_sim::LaunchMix");
  }
  return c;
}

// A cube-buffer operand: live, in one of the allowed positions, `align`-aligned, holding `bytes`.
struct CubeOpnd {
  int mem;       // CubeMemIdx
  uint32_t off;  // byte offset in the buffer
  uint8_t* ptr;
};

// A cube operand that needs more bytes than its tensor's view holds; `why`, when given, names the
// fields that place its end.
[[noreturn]] inline void FailCubeBounds(const char* api, const char* role, int mem, uint64_t bytes, uint64_t view,
                                        const std::string& why = "") {
  Fail(api, Fmt("bounds: %s needs %llu bytes of %s but its view holds %llu%s%s", role,
                static_cast<unsigned long long>(bytes), CubeMemName(mem), static_cast<unsigned long long>(view),
                why.empty() ? "" : ": ", why.c_str()));
}

template <typename T>
inline uint64_t CubeViewBytes(const AscendC::LocalTensor<T>& t) {
  return static_cast<uint64_t>(TensorAccess::Size(t)) * sizeof(T);
}

template <typename T>
inline CubeOpnd CheckCubeOpnd(BlockCtx* c, const char* api, const char* role, const AscendC::LocalTensor<T>& t,
                              std::initializer_list<AscendC::TPosition> allowed, uint32_t align, uint64_t bytes) {
  const AscendC::TPosition pos = static_cast<AscendC::TPosition>(TensorAccess::Pos(t));
  bool ok = false;
  std::string names;
  for (AscendC::TPosition p : allowed) {
    ok = ok || p == pos;
    names += std::string(names.empty() ? "" : "/") + PositionName(p);
  }
  const int32_t bufId = TensorAccess::BufId(t);
  if (!ok || bufId < 0) {
    Fail(api, Fmt("%s must be a TQue/TBuf tensor in TPosition::%s, not TPosition::%s%s", role, names.c_str(),
                  PositionName(pos), bufId < 0 ? " (or it is not from a TQue/TBuf)" : ""));
  }
  if (static_cast<size_t>(bufId) >= c->bufGen.size() || c->bufGen[bufId] != TensorAccess::Gen(t)) {
    Fail(api, Fmt("queues: %s is a stale tensor: its buffer was freed (FreeTensor) or its TPipe destroyed", role));
  }
  const int mem = CubeIndex(pos);
  uint8_t* p = TensorAccess::Ptr(t);
  const uint32_t off = static_cast<uint32_t>(p - c->cubeMem[mem].data());
  if (off % align != 0) {
    Fail(api, Fmt("alignment: %s starts at %s byte %u, not a multiple of %u bytes", role, CubeMemName(mem), off, align));
  }
  if (bytes > CubeViewBytes(t)) FailCubeBounds(api, role, mem, bytes, CubeViewBytes(t));
  return CubeOpnd{mem, off, p};
}

// The pipes that write and read each cube buffer.
inline Pipe CubeWriter(int mem) { return mem == kCubeL1 ? kPipeMte2 : mem == kCubeL0c ? kPipeM : kPipeMte1; }
inline Pipe CubeReader(int mem) { return mem == kCubeL1 ? kPipeMte1 : mem == kCubeL0c ? kPipeFix : kPipeM; }

inline std::string CubeSyncHint(int producer, int consumer) {
  std::string hint = Fmt("missing SetFlag/WaitFlag<HardEvent::%s_%s>", PipeName(producer), PipeName(consumer));
  const char* que = nullptr;
  if ((producer == kPipeMte2 && consumer == kPipeMte1) || (producer == kPipeMte1 && consumer == kPipeMte2)) que = "TPosition::A1/::B1";
  if ((producer == kPipeMte1 && consumer == kPipeM) || (producer == kPipeM && consumer == kPipeMte1)) que = "TPosition::A2/::B2";
  if ((producer == kPipeM && consumer == kPipeFix) || (producer == kPipeFix && consumer == kPipeM)) que = "TPosition::CO1";
  if (que != nullptr) hint += Fmt(" (or a TQue<%s> EnQue/DeQue, FreeTensor/AllocTensor)", que);
  return hint;
}

// Pipe q accesses bytes [off, off + bytes) of cube buffer `mem` in its op `seq`.
inline void CubeAccess(BlockCtx* c, int mem, Pipe q, bool write, uint32_t seq, uint32_t off, uint64_t bytes,
                       const char* api) {
  if (!c->checkSync || bytes == 0) return;
  const Pipe w = CubeWriter(mem), r = CubeReader(mem);
  const uint32_t b0 = off >> 5, b1 = static_cast<uint32_t>((off + bytes + 31) >> 5);
  uint32_t* W = c->cubeW[mem].data();
  uint32_t* R = c->cubeR[mem].data();
  const uint32_t* K = c->known[q];
  for (uint32_t b = b0; b < b1; ++b) {
    const bool rawBad = q != w && W[b] > K[w];
    const bool warBad = write && q != r && R[b] > K[r];
    if (__builtin_expect(rawBad || warBad, 0)) {
      const int p = rawBad ? w : r;
      Fail(api, Fmt("sync: pipe %s %s %s bytes [%u, %u) %s by %s op #%u, but only %s ops <= %u are known complete to "
                    "%s: %s before this access (AMCT_SIM_CHECK_SYNC=0 disables the check)",
                    PipeName(q), write ? "writes" : "reads", CubeMemName(mem), b * 32, b * 32 + 32,
                    rawBad ? "written" : "read", PipeName(p), rawBad ? W[b] : R[b], PipeName(p), K[p], PipeName(q),
                    CubeSyncHint(p, q).c_str()));
    }
  }
  if (q == w && write) {
    std::fill(W + b0, W + b1, seq);
  } else if (q == r) {
    std::fill(R + b0, R + b1, seq);
  }
}

inline void CheckNd2Nz(const char* api, uint32_t ndNum, uint32_t nValue, uint64_t dValue, uint64_t srcNdMatrixStride,
                       uint64_t srcDValue, uint32_t c0Stride, uint32_t nStride, uint32_t dstMatrixStride,
                       uint32_t elemBytes) {
  auto range = [&](const char* name, uint64_t v, uint64_t lo, uint64_t hi) {
    if (v < lo || v > hi) {
      Fail(api, Fmt("parameters: Nd2NzParams.%s = %llu is not in [%llu, %llu]", name, static_cast<unsigned long long>(v),
                    static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi)));
    }
  };
  range("ndNum", ndNum, 0, 4095);
  range("nValue", nValue, 0, 16384);
  range("dValue", dValue, 0, 65535);
  range("srcNdMatrixStride", srcNdMatrixStride, 0, 65535);
  range("srcDValue", srcDValue, 1, 65535);
  range("dstNzC0Stride", c0Stride, 1, 16384);
  range("dstNzNStride", nStride, 1, 16384);
  range("dstNzMatrixStride", dstMatrixStride, 0, 16384);
  if (ndNum > 1 && (dstMatrixStride * elemBytes) % 32 != 0) {
    Fail(api, Fmt("parameters: Nd2NzParams.dstNzMatrixStride %u elements is not a whole number of 32-B blocks, which "
                  "the hardware would truncate (ndNum %u > 1): not emulated",
                  dstMatrixStride, ndNum));
  }
  if (srcDValue < dValue) {
    Fail(api, Fmt("parameters: Nd2NzParams.srcDValue %llu < dValue %llu (a source row holds srcDValue elements)",
                  static_cast<unsigned long long>(srcDValue), static_cast<unsigned long long>(dValue)));
  }
}

// DataCopy GM -> L1 with ND2NZ (the AIC's MTE2).
template <class T>
inline void DataCopyNd2NzImpl(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src,
                              const AscendC::Nd2NzParams& p) {
  static const char* const kApi = "DataCopy(GM->L1, Nd2NzParams)";
  BlockCtx* c = CubeCtx(kApi);
  const uint32_t ndNum = p.ndNum, nValue = p.nValue;
  const uint64_t dValue = p.dValue;
  CheckNd2Nz(kApi, ndNum, nValue, dValue, p.srcNdMatrixStride, p.srcDValue, p.dstNzC0Stride, p.dstNzNStride,
             p.dstNzMatrixStride, sizeof(T));
  if (ndNum == 0 || nValue == 0 || dValue == 0) return;  // documented NOPs
  constexpr uint32_t c0 = 32 / sizeof(T);
  const uint64_t colBlocks = (dValue + c0 - 1) / c0;
  // The NZ image's extent: the last matrix's last row of its last column block, one 32-B block.
  const uint64_t lastBlock = static_cast<uint64_t>(ndNum - 1) * p.dstNzMatrixStride * sizeof(T) +
                             (colBlocks - 1) * p.dstNzC0Stride * 32 + static_cast<uint64_t>(nValue - 1) * p.dstNzNStride * 32;
  const CubeOpnd d = CheckCubeOpnd(c, kApi, "dst", dst, {AscendC::TPosition::A1, AscendC::TPosition::B1}, 32, lastBlock + 32);
  if (!TensorAccess::GmSet(src)) Fail(kApi, "GlobalTensor used before SetGlobalBuffer");
  const uintptr_t base = TensorAccess::GmBase(src);
  const uint64_t es = sizeof(T), rowBytes = dValue * es, pitch = p.srcDValue * es;
  const uintptr_t lo = base, hi = base + (static_cast<uint64_t>(ndNum - 1) * p.srcNdMatrixStride * es) +
                                  static_cast<uint64_t>(nValue - 1) * pitch + rowBytes;
  GmCheckExtent(kApi, lo, hi, TensorAccess::GmExtLo(src), TensorAccess::GmExtHi(src));
  const RegionInfo* region = GmFindRegion(c, kApi, lo, hi, false);
  const uint32_t seq = BeginOp(c, kPipeMte2);
  AMCT_SIM_COST(c->cost, CubeGmToL1(static_cast<uint64_t>(ndNum) * nValue * rowBytes));
  for (uint32_t nd = 0; nd < ndNum; ++nd) {
    const uintptr_t m0 = base + static_cast<uint64_t>(nd) * p.srcNdMatrixStride * es;
    GmDmaAccess(c, region, kPipeMte2, seq, m0, rowBytes, pitch, nValue, kApi);
    const uint64_t dst0 = d.off + static_cast<uint64_t>(nd) * p.dstNzMatrixStride * es;
    for (uint64_t cb = 0; cb < colBlocks; ++cb) {
      for (uint32_t r = 0; r < nValue; ++r) {
        const uint64_t at = dst0 + cb * p.dstNzC0Stride * 32 + static_cast<uint64_t>(r) * p.dstNzNStride * 32;
        CubeAccess(c, kCubeL1, kPipeMte2, true, seq, static_cast<uint32_t>(at), 32, kApi);
        uint8_t* out = c->cubeMem[kCubeL1].data() + at;
        const uint64_t cols = std::min<uint64_t>(c0, dValue - cb * c0);
        std::memcpy(out, reinterpret_cast<const uint8_t*>(m0 + r * pitch + cb * 32), cols * es);
        if (cols < c0) std::memset(out + cols * es, 0, (c0 - cols) * es);  // the row's pad to 32 B is zero
      }
    }
  }
}

// LoadData L1 -> L0A/L0B, LoadData2DParamsV2, 16-bit types, no transpose (the AIC's MTE1).
template <class T>
inline void LoadData2dV2Impl(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                             const AscendC::LoadData2DParamsV2& p) {
  static const char* const kApi = "LoadData(L1->L0A/L0B, LoadData2DParamsV2)";
  BlockCtx* c = CubeCtx(kApi);
  if (p.ifTranspose) {
    Fail(kApi, "ifTranspose = true is not emulated (B as rows [N, K] needs none on dav-3510: its ND2NZ image is "
               "already the Zn layout of L0B)");
  }
  if (p.srcStride < 0) Fail(kApi, Fmt("parameters: a negative srcStride (%d) is not emulated", p.srcStride));
  if (p.mStep > 255 || p.kStep > 255) {
    Fail(kApi, Fmt("parameters: mStep %u and kStep %u must be in [0, 255]", p.mStep, p.kStep));
  }
  if (p.mStep == 0 || p.kStep == 0) return;  // documented NOP
  constexpr uint64_t kFrac = 512;            // a 16 x 16 fractal of a 16-bit type
  const uint64_t srcLast = (static_cast<uint64_t>(p.kStartPosition + p.kStep - 1) * static_cast<uint64_t>(p.srcStride) +
                            p.mStartPosition + p.mStep - 1);
  const uint64_t dstLast = static_cast<uint64_t>(p.kStep - 1) * p.dstStride + p.mStep - 1;
  // Positions and alignment first (bytes 0: no bounds check there), then the bounds, naming the fields that
  // place the last fractal (LoadData_2D_V2.md: startAddr = srcAddr + (kStartPosition * srcStride +
  // mStartPosition) * 512 B; the docs give no range for the start positions, the tensors bound them).
  const CubeOpnd s = CheckCubeOpnd(c, kApi, "src", src, {AscendC::TPosition::A1, AscendC::TPosition::B1}, 32, 0);
  const CubeOpnd d = CheckCubeOpnd(c, kApi, "dst", dst, {AscendC::TPosition::A2, AscendC::TPosition::B2}, 512, 0);
  if ((srcLast + 1) * kFrac > CubeViewBytes(src)) {
    FailCubeBounds(kApi, "src", s.mem, (srcLast + 1) * kFrac, CubeViewBytes(src),
                   Fmt("its last fractal, (kStartPosition %u + kStep %u - 1) * srcStride %d + mStartPosition %u + "
                       "mStep %u - 1 = %llu, leaves the src tensor", p.kStartPosition, p.kStep, p.srcStride,
                       p.mStartPosition, p.mStep, static_cast<unsigned long long>(srcLast)));
  }
  if ((dstLast + 1) * kFrac > CubeViewBytes(dst)) {
    FailCubeBounds(kApi, "dst", d.mem, (dstLast + 1) * kFrac, CubeViewBytes(dst),
                   Fmt("its last fractal, (kStep %u - 1) * dstStride %u + mStep %u - 1 = %llu, leaves the dst tensor",
                       p.kStep, p.dstStride, p.mStep, static_cast<unsigned long long>(dstLast)));
  }
  const uint32_t seq = BeginOp(c, kPipeMte1);
  AMCT_SIM_COST(c->cost, CubeL1ToL0(static_cast<uint64_t>(p.mStep) * p.kStep * kFrac));
  for (uint32_t ki = 0; ki < p.kStep; ++ki) {
    for (uint32_t mi = 0; mi < p.mStep; ++mi) {
      const uint64_t from = s.off + ((static_cast<uint64_t>(p.kStartPosition) + ki) * p.srcStride + p.mStartPosition + mi) * kFrac;
      const uint64_t to = d.off + (static_cast<uint64_t>(ki) * p.dstStride + mi) * kFrac;
      CubeAccess(c, kCubeL1, kPipeMte1, false, seq, static_cast<uint32_t>(from), kFrac, kApi);
      CubeAccess(c, d.mem, kPipeMte1, true, seq, static_cast<uint32_t>(to), kFrac, kApi);
      std::memcpy(c->cubeMem[d.mem].data() + to, c->cubeMem[kCubeL1].data() + from, kFrac);
    }
  }
}

// Mmad.md (同步优化说明): an Mmad accumulating onto L0C the previous Mmad wrote needs
// PipeBarrier<PIPE_M> between the two when (m / 16) * (n / 16) < 10; larger ones the hardware
// orders itself.
inline void CheckSmallAccumulation(BlockCtx* c, const char* api, const AscendC::MmadParams& p, uint32_t off,
                                   uint64_t bytes) {
  if (!c->checkSync || p.cmatrixInitVal || (p.m / 16) * (p.n / 16) >= 10 || c->lastMmadSeq == 0) return;
  const bool overlaps = off < c->lastMmadOff + c->lastMmadBytes && c->lastMmadOff < off + bytes;
  if (overlaps && c->known[kPipeM][kPipeM] < c->lastMmadSeq) {
    Fail(api, Fmt("sync: this Mmad (m %u, n %u: (m / 16) * (n / 16) < 10) accumulates onto L0C the previous Mmad "
                  "writes, without PipeBarrier<PIPE_M> between them (Mmad.md; AMCT_SIM_CHECK_SYNC=0 disables the check)",
                  static_cast<uint32_t>(p.m), static_cast<uint32_t>(p.n)));
  }
}

// Mmad L0A (Nz) x L0B (Zn) -> L0C (Nz), fp32 accumulation in K order (the AIC's M pipe).
template <class T, class U, class S>
inline void MmadImpl(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& fm,
                     const AscendC::LocalTensor<S>& filter, const AscendC::MmadParams& p) {
  static const char* const kApi = "Mmad";
  BlockCtx* c = CubeCtx(kApi);
  const uint32_t m = p.m, n = p.n, k = p.k;
  if (m > 4095 || n > 4095 || k > 4095) Fail(kApi, Fmt("parameters: m %u, n %u, k %u must be in [0, 4095]", m, n, k));
  if (m == 0 || n == 0 || k == 0) return;  // documented NOP (Mmad.md)
  if (p.isBias || p.cmatrixSource) Fail(kApi, "isBias / cmatrixSource (a bias from the BT buffer) are not emulated");
  if (p.unitFlag != 0) Fail(kApi, Fmt("unitFlag %u is not emulated (0 only)", p.unitFlag));
#if __NPU_ARCH__ == 3510
  if (m == 1 && !p.disableGemv) {
    Fail(kApi, "m = 1 enables GEMV mode (L0A read as ND, Mmad.md), which is not emulated: set disableGemv = true");
  }
#endif
  const uint32_t m1 = (m + 15) / 16, n1 = (n + 15) / 16, k1 = (k + 15) / 16;
  const CubeOpnd a = CheckCubeOpnd(c, kApi, "fm", fm, {AscendC::TPosition::A2}, 512, uint64_t{m1} * k1 * 512);
  const CubeOpnd b = CheckCubeOpnd(c, kApi, "filter", filter, {AscendC::TPosition::B2}, 512, uint64_t{k1} * n1 * 512);
  const CubeOpnd o = CheckCubeOpnd(c, kApi, "dst", dst, {AscendC::TPosition::CO1}, 1024, uint64_t{m1} * n1 * 1024);
  CheckSmallAccumulation(c, kApi, p, o.off, uint64_t{m1} * n1 * 1024);
  const uint32_t seq = BeginOp(c, kPipeM);
  c->lastMmadSeq = seq;
  c->lastMmadOff = o.off;
  c->lastMmadBytes = uint64_t{m1} * n1 * 1024;
  CubeAccess(c, kCubeL0a, kPipeM, false, seq, a.off, uint64_t{m1} * k1 * 512, kApi);
  CubeAccess(c, kCubeL0b, kPipeM, false, seq, b.off, uint64_t{k1} * n1 * 512, kApi);
  CubeAccess(c, kCubeL0c, kPipeM, true, seq, o.off, uint64_t{m1} * n1 * 1024, kApi);
  AMCT_SIM_COST(c->cost, CubeMmad(uint64_t{m1} * n1 * k1));
  if (c->cost != nullptr && c->launch->costOnly) return;
  // B as [k][n] floats, so that a row of accumulators runs over contiguous memory.
  std::vector<float> bKN(static_cast<size_t>(k) * n), aRow(k), acc(n);
  for (uint32_t kk = 0; kk < k; ++kk) {
    for (uint32_t j = 0; j < n; ++j) {
      S v;
      std::memcpy(&v, b.ptr + ((static_cast<size_t>(kk / 16) * n1 + j / 16) * 256 + (j % 16) * 16 + kk % 16) * sizeof(S),
                  sizeof(S));
      bKN[static_cast<size_t>(kk) * n + j] = static_cast<float>(v);
    }
  }
  float* l0c = reinterpret_cast<float*>(o.ptr);
  auto cAt = [&](uint32_t r, uint32_t j) { return (static_cast<size_t>(j / 16) * m1 * 16 + r) * 16 + j % 16; };
  for (uint32_t r = 0; r < m; ++r) {
    for (uint32_t kk = 0; kk < k; ++kk) {
      U v;
      std::memcpy(&v, a.ptr + ((static_cast<size_t>(kk / 16) * m1 + r / 16) * 256 + (r % 16) * 16 + kk % 16) * sizeof(U),
                  sizeof(U));
      aRow[kk] = static_cast<float>(v);
    }
    for (uint32_t j = 0; j < n; ++j) acc[j] = p.cmatrixInitVal ? 0.0f : l0c[cAt(r, j)];
    AccumulateRowInKOrder(acc.data(), aRow.data(), bKN.data(), static_cast<int32_t>(k), static_cast<int32_t>(n));
    for (uint32_t j = 0; j < n; ++j) l0c[cAt(r, j)] = acc[j];
  }
}

// NZ2ND (CO2Layout::ROW_MAJOR) with `ndNum` NZ matrices; other formats arrive with ndNum = 1 and fail.
template <class T, class U, class P>
inline void FixpipeToUbImpl(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& src, const P& p,
                            AscendC::CO2Layout format, bool isToUB, uint32_t ndNum) {
  static const char* const kApi = "Fixpipe(L0C->UB)";
  BlockCtx* c = CubeCtx(kApi);
  if (!isToUB) {
    Fail(kApi, "config.isToUB is false: L0C -> UB needs a FixpipeConfig built with isToUB = true (CFG_ROW_MAJOR, "
               "CFG_NZ, CFG_COLUMN_MAJOR mean L0C -> L1/GM, which the sim does not emulate)");
  }
  if (format != AscendC::CO2Layout::ROW_MAJOR) {
    Fail(kApi, "only CO2Layout::ROW_MAJOR (NZ2ND) is emulated (NZ2NZ and NZ2DN are not)");
  }
  if (TensorAccess::BufId(dst) != kAicUbViewBufId) {
    Fail(kApi, "dst must be a UB view of the AIVs made on the AIC with LocalTensor<T>(TPosition::VECIN/VECOUT/VECCALC, "
               "addr, tileSize)");
  }
  if (p.quantPre != NoQuant || p.reluEn || p.preReluMode != AscendC::ReluMode::NO_RELU ||
      p.preClipReluMode != AscendC::ClipReluMode::NOCLIP_RELU || p.isChannelSplit || p.unitFlag != 0) {
    Fail(kApi, "only the plain copy is emulated: quantPre = NoQuant, reluEn = false, preReluMode = NO_RELU, "
               "preClipReluMode = NOCLIP_RELU, isChannelSplit = false, unitFlag = 0");
  }
  if (ndNum != 1) Fail(kApi, Fmt("params.ndNum %u: only one NZ matrix (ndNum = 1) is emulated", ndNum));
  const uint32_t nSize = p.nSize, mSize = p.mSize, srcStride = p.srcStride, dstStride = p.dstStride;
  if (nSize > 4095) Fail(kApi, Fmt("parameters: nSize %u is not in [0, 4095]", nSize));
  if (nSize == 0 || mSize == 0) return;  // documented NOPs
  if (nSize % 16 != 0 || (nSize * sizeof(T)) % 32 != 0) {
    Fail(kApi, Fmt("parameters: nSize %u must be a multiple of 16 (no channel split) and nSize * sizeof(T) = %zu a "
                   "multiple of 32 (NZ2ND)",
                   nSize, nSize * sizeof(T)));
  }
  const uint32_t m16 = (mSize + 15) / 16 * 16;
  if (srcStride < m16) {
    Fail(kApi, Fmt("parameters: srcStride %u (C0_SIZE units between the Z columns of L0C) must be >= mSize rounded "
                   "up to 16 = %u",
                   srcStride, m16));
  }
  if (dstStride < nSize) Fail(kApi, Fmt("parameters: dstStride %u (elements per ND row) must be >= nSize %u", dstStride, nSize));
  if (p.dualDstCtl > 1) {
    Fail(kApi, Fmt("dualDstCtl %u: only 0 (single destination) and 1 (split M) are emulated (2: split N is not; 3 is "
                   "reserved)",
                   p.dualDstCtl));
  }
  const uint32_t ratio = c->launch->mixRatio;
  const bool dual = p.dualDstCtl == 1;
  if (dual && mSize % 2 != 0) Fail(kApi, Fmt("dualDstCtl 1 splits M in halves: mSize %u must be even", mSize));
  if (dual && ratio != 2) Fail(kApi, Fmt("dualDstCtl 1 writes two AIVs' UB: needs KERNEL_TYPE_MIX_AIC_1_2 (ratio %u)", ratio));
  if (!dual && static_cast<uint32_t>(p.subBlockId) >= ratio) {
    Fail(kApi, Fmt("subBlockId %u has no AIV in this MIX 1:%u launch", static_cast<uint32_t>(p.subBlockId), ratio));
  }
  const uint32_t rowsPer = dual ? mSize / 2 : mSize;
  const uint64_t es = sizeof(T);
  const uint32_t addr = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(TensorAccess::Ptr(dst)));
  if (addr % 32 != 0) Fail(kApi, Fmt("alignment: dst UB offset %u is not a multiple of 32 bytes", addr));
  const uint64_t dstElems = static_cast<uint64_t>(rowsPer - 1) * dstStride + nSize;
  if (dstElems > TensorAccess::Size(dst)) {
    Fail(kApi, Fmt("bounds: dst needs %llu elements (%u rows of %u at a stride of %u) but its view holds %u",
                   static_cast<unsigned long long>(dstElems), rowsPer, nSize, dstStride, TensorAccess::Size(dst)));
  }
  const uint64_t srcBytes = (static_cast<uint64_t>(nSize / 16 - 1) * srcStride * 16 + uint64_t{m16} * 16) * sizeof(U);
  const CubeOpnd s = CheckCubeOpnd(c, kApi, "src", src, {AscendC::TPosition::CO1}, 64, srcBytes);
  const uint32_t seq = BeginOp(c, kPipeFix);
  for (uint32_t jb = 0; jb < nSize / 16; ++jb) {
    CubeAccess(c, kCubeL0c, kPipeFix, false, seq, static_cast<uint32_t>(s.off + uint64_t{jb} * srcStride * 16 * sizeof(U)),
               uint64_t{mSize} * 16 * sizeof(U), kApi);
  }
  AMCT_SIM_COST(c->cost, CubeFixToUb(uint64_t{mSize} * nSize * es));
  const U* l0c = reinterpret_cast<const U*>(s.ptr);
  for (uint32_t part = 0; part < (dual ? 2u : 1u); ++part) {
    FixDelivery d;
    d.fixSeq = seq;
    d.off = addr;
    d.rowBytes = static_cast<uint32_t>(nSize * es);
    d.pitch = static_cast<uint32_t>(dstStride * es);
    d.rows = rowsPer;
    d.data.resize(static_cast<size_t>(rowsPer) * d.rowBytes);
    T* out = reinterpret_cast<T*>(d.data.data());
    for (uint32_t i = 0; i < rowsPer; ++i) {
      const uint32_t r = part * rowsPer + i;
      for (uint32_t j = 0; j < nSize; ++j) {
        out[static_cast<size_t>(i) * nSize + j] = static_cast<T>(l0c[(static_cast<size_t>(j / 16) * srcStride + r) * 16 + j % 16]);
      }
    }
    PostFixDelivery(c, dual ? part : static_cast<uint32_t>(p.subBlockId), std::move(d));
  }
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

// ---- the kernel-side functions ---------------------------------------------------------------------
#if __NPU_ARCH__ == 3510
template <typename T, bool enableSmallC0 = false>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& intriParams) {
  static_assert(!enableSmallC0, "DataCopy(GM->L1, Nd2NzParams): enableSmallC0 = true is not emulated");
#else
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& intriParams) {
#endif
  static_assert(amct_sim::detail::kIsCube16<T>, "DataCopy(GM->L1, Nd2NzParams): the sim emulates half and bfloat16_t");
  AMCT_SIM_BARRIER();
  amct_sim::detail::DataCopyNd2NzImpl(dst, src, intriParams);
  AMCT_SIM_BARRIER();
}

template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                const LoadData2DParamsV2& loadDataParams) {
  static_assert(amct_sim::detail::kArch3510 || sizeof(T) == 0,
                "LoadData(LoadData2DParamsV2): dav-3510 only (LoadData_2D_V2.md: Atlas A2 不支持)");
  static_assert(amct_sim::detail::kIsCube16<T>, "LoadData(LoadData2DParamsV2): the sim emulates half and bfloat16_t");
  AMCT_SIM_BARRIER();
  amct_sim::detail::LoadData2dV2Impl(dst, src, loadDataParams);
  AMCT_SIM_BARRIER();
}

template <typename T, typename U, typename S>
__aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                            const MmadParams& mmadParams) {
  static_assert(amct_sim::detail::kArch3510 || sizeof(T) == 0,
                "Mmad: the sim emulates the dav-3510 L0A layout (Nz) only; on dav-2201 L0A is Zz (Mmad.md), filled by "
                "LoadData2DParams, which is not emulated");
  static_assert(std::is_same<T, float>::value && std::is_same<U, S>::value && amct_sim::detail::kIsCube16<U>,
                "Mmad: the sim emulates float = bfloat16_t x bfloat16_t and float = half x half");
  AMCT_SIM_BARRIER();
  amct_sim::detail::MmadImpl(dst, fm, filter, mmadParams);
  AMCT_SIM_BARRIER();
}

// L0C -> UB (the FixpipeParamsArch3510 form; the real header declares it on dav-3510 only).
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
__aicore__ inline void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                               const FixpipeParamsArch3510<config.format>& intriParams) {
  static_assert(amct_sim::detail::kArch3510 || sizeof(T) == 0,
                "Fixpipe: L0C -> UB (FixpipeParamsArch3510) is dav-3510 only (Fixpipe（L0C到UB数据搬运）.md: Atlas A2 "
                "不支持)");
  static_assert(std::is_same<T, float>::value && std::is_same<U, float>::value,
                "Fixpipe(L0C->UB): the sim emulates float -> float (NoQuant) only");
#if __NPU_ARCH__ == 3510
  AMCT_SIM_BARRIER();
  uint32_t ndNum = 1;
  if constexpr (config.format == CO2Layout::ROW_MAJOR) ndNum = intriParams.params.ndNum;
  amct_sim::detail::FixpipeToUbImpl(dst, src, intriParams, config.format, config.isToUB, ndNum);
  AMCT_SIM_BARRIER();
#else
  (void)dst;
  (void)src;
  (void)intriParams;
#endif
}

}  // namespace AscendC
