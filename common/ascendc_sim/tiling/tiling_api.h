// amct kernel sim: the host tiling API of the Matmul (what host code includes as
// "tiling/tiling_api.h"): matmul_tiling::MatmulApiTiling (one core) and MultiCoreMatmulTiling
// with CANN's call sequence (SetAType/SetBType/SetCType/SetBiasType, SetScaleAType/SetScaleBType,
// SetMadType, SetShape, SetOrgShape, EnableBias/SetBias, SetBufferSpace, SetFixSplit, SetDim, GetTiling),
// filling the TCubeTiling the sim's Matmul reads. Declarations: asc-devkit include/adv_api/matmul/
// matmul_tiling_base.h, matmul_tiling.h, bmm_tiling.h (head of July 2026). Standard library only.
//
// The base and split choices are the sim's own (upstream's GetTiling searches a cost model that is
// not published): base blocks of 256 x 256 (dav-3510) or 128 x 256 (dav-2201, 128 KB L0C) clamped
// to the shape, baseK 64 (16-bit) or 256 (fp4), two L0A/L0B buffers, L1 depth 2 x stepK with
// stepK = min(4, K / baseK); MultiCoreMatmulTiling splits M and N over SetDim cores so that the
// largest core block has the fewest base tiles. GetTiling returns 0, or -1 when a type or the
// shape is missing or the combination is not one the sim's Matmul emulates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "../amct_sim_host.h"
#include "../sim_tiling_data.h"

// The SoCs the sim emulates, numbered as upstream's platform_ascendc::SocVersion
// (include/utils/tiling/platform/platform_ascendc.h).
namespace platform_ascendc {
enum class SocVersion { ASCEND910B = 1, ASCEND950 = 4, ASCEND910_93 = 13 };
}  // namespace platform_ascendc

namespace matmul_tiling {

// Upstream's PlatformInfo: the SoC the tiling is for and its buffer sizes. The sim reads the SoC
// (its arch decides the base blocks) and ignores the sizes (it uses its own per-arch buffers).
struct PlatformInfo {
  platform_ascendc::SocVersion socVersion;
  uint64_t l1Size = 0;
  uint64_t l0CSize = 0;
  uint64_t ubSize = 0;
  uint64_t l0ASize = 0;
  uint64_t l0BSize = 0;
};

enum class DataType : int32_t {
  DT_FLOAT = 0,
  DT_FLOAT16 = 1,
  DT_BF16 = 27,
  DT_FLOAT4_E2M1 = 37,
  DT_FLOAT8_E8M0 = 38,
};

enum class TPosition : int32_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX };
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR = ND, COLUMN_MAJOR = 8 };
enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };
enum class MatrixMadType : int32_t { NORMAL = 0, HF32 = 1, MXMODE = 2 };

class MatmulApiTilingBase {
 public:
#ifdef __NPU_ARCH__
  // Upstream's default constructor tiles for the current platform; in the sim that is the arch
  // the host code is compiled for. A tiling for another arch names its SoC (PlatformInfo).
  MatmulApiTilingBase() : arch_(__NPU_ARCH__) {}
#endif
  explicit MatmulApiTilingBase(const PlatformInfo& platform)
      : arch_(platform.socVersion == platform_ascendc::SocVersion::ASCEND950 ? 3510 : 2201) {}
  virtual ~MatmulApiTilingBase() = default;

  int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false) {
    a_ = Operand{true, pos, type, dataType, isTrans};
    return 0;
  }
  int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false) {
    b_ = Operand{true, pos, type, dataType, isTrans};
    return 0;
  }
  int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType) {
    c_ = Operand{true, pos, type, dataType, false};
    return 0;
  }
  int32_t SetBiasType(TPosition pos, CubeFormat type, DataType dataType) {
    bias_ = Operand{true, pos, type, dataType, false};
    return 0;
  }
  int32_t SetScaleAType(TPosition scalePos, CubeFormat scaleType, bool isScaleTrans = false) {
    scaleA_ = Operand{true, scalePos, scaleType, DataType::DT_FLOAT8_E8M0, isScaleTrans};
    return 0;
  }
  int32_t SetScaleBType(TPosition scalePos, CubeFormat scaleType, bool isScaleTrans = true) {
    scaleB_ = Operand{true, scalePos, scaleType, DataType::DT_FLOAT8_E8M0, isScaleTrans};
    return 0;
  }
  int32_t SetMadType(MatrixMadType madType) {
    mad_ = madType;
    return 0;
  }
  virtual int32_t SetShape(int32_t m, int32_t n, int32_t k) {
    if (m <= 0 || n <= 0 || k <= 0) return -1;
    m_ = m;
    n_ = n;
    k_ = k;
    if (orgM_ == 0) SetOrgShape(m, n, k);
    return 0;
  }
  int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn) { return SetOrgShape(orgMIn, orgNIn, orgKIn, orgKIn); }
  int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn) {
    if (orgMIn <= 0 || orgNIn <= 0 || orgKaIn <= 0 || orgKbIn <= 0) return -1;
    orgM_ = orgMIn;
    orgN_ = orgNIn;
    orgKa_ = orgKaIn;
    orgKb_ = orgKbIn;
    return 0;
  }
  int32_t EnableBias(bool isBiasIn = false) {
    bias_.set = bias_.set || isBiasIn;
    isBias_ = isBiasIn;
    return 0;
  }
  int32_t SetBias(bool isBiasIn = false) { return EnableBias(isBiasIn); }
  // -1: the arch's buffer (the sim's choices use the whole L1 / L0C anyway).
  int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1, int32_t btSize = -1) {
    l1_ = l1Size;
    l0c_ = l0CSize;
    (void)ubSize;
    (void)btSize;
    return 0;
  }
  // Upstream's fixed base block (elements): -1 leaves baseM / baseN to GetTiling; baseKIn must be
  // -1 (upstream supports no other value). GetTiling fails (-1) when a fixed baseM / baseN is not a
  // multiple of 16 or exceeds the core block rounded up to 16, or baseM x baseN fp32 exceeds L0C.
  int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1) {
    if (baseKIn != -1 || baseMIn == 0 || baseMIn < -1 || baseNIn == 0 || baseNIn < -1) return -1;
    fixBaseM_ = baseMIn;
    fixBaseN_ = baseNIn;
    return 0;
  }
  int32_t SetTraverse(MatrixTraverse traverse) {
    traverse_ = traverse;
    return 0;
  }
  virtual int64_t GetTiling(TCubeTiling& tiling) = 0;

 protected:
  struct Operand {
    bool set = false;
    TPosition pos = TPosition::GM;
    CubeFormat format = CubeFormat::ND;
    DataType type = DataType::DT_FLOAT16;
    bool trans = false;
  };

  static int32_t RoundUp(int32_t v, int32_t a) { return (v + a - 1) / a * a; }
  static int32_t CeilDiv(int32_t v, int32_t a) { return (v + a - 1) / a; }
  bool Fp4() const { return a_.type == DataType::DT_FLOAT4_E2M1; }

  // SetFixSplit's constraints for a core block of singleM x singleN (true when none is set).
  bool FixSplitFits(int32_t singleM, int32_t singleN) const {
    const int32_t l0cBytes = arch_ == 3510 ? 256 * 1024 : 128 * 1024;
    const int32_t bm = fixBaseM_ > 0 ? fixBaseM_ : 16, bn = fixBaseN_ > 0 ? fixBaseN_ : 16;
    if (bm % 16 != 0 || bn % 16 != 0) return false;
    if (bm > RoundUp(singleM, 16) || bn > RoundUp(singleN, 16)) return false;
    return static_cast<int64_t>(bm) * bn * 4 <= l0cBytes;
  }

  // The combinations sim_matmul.h emulates; false otherwise.
  bool Valid() const {
    if (!a_.set || !b_.set || !c_.set || m_ <= 0) return false;
    const bool half16 = a_.type == DataType::DT_FLOAT16 && b_.type == DataType::DT_FLOAT16;
    const bool bf16 = a_.type == DataType::DT_BF16 && b_.type == DataType::DT_BF16;
    const bool fp4 = Fp4() && b_.type == DataType::DT_FLOAT4_E2M1;
    if (!(half16 || bf16 || fp4)) return false;
    if (fp4 != (mad_ == MatrixMadType::MXMODE) || (fp4 && (!scaleA_.set || !scaleB_.set))) return false;
    const bool outOk = c_.type == DataType::DT_FLOAT || c_.type == DataType::DT_FLOAT16 || c_.type == DataType::DT_BF16;
    return outOk && a_.format == CubeFormat::ND && b_.format == CubeFormat::ND && c_.format == CubeFormat::ND;
  }

  // Fills tiling for a core block of singleM x singleN x k.
  void Fill(TCubeTiling& t, int32_t singleM, int32_t singleN, int32_t usedCores) const {
    std::memset(&t, 0, sizeof(t));
    const int32_t maxBaseM = arch_ == 3510 ? 256 : 128;
    t.usedCoreNum = usedCores;
    t.M = orgM_;
    t.N = orgN_;
    t.Ka = orgKa_;
    t.Kb = orgKb_;
    t.singleCoreM = singleM;
    t.singleCoreN = singleN;
    t.singleCoreK = k_;
    t.baseM = fixBaseM_ > 0 ? fixBaseM_ : std::min(maxBaseM, RoundUp(singleM, 16));
    t.baseN = fixBaseN_ > 0 ? fixBaseN_ : std::min(256, RoundUp(singleN, 16));
    t.baseK = std::min(Fp4() ? 256 : 64, RoundUp(k_, Fp4() ? 64 : 16));
    const int32_t stepK = std::max(1, std::min(4, CeilDiv(k_, t.baseK)));
    t.stepKa = t.stepKb = stepK;
    t.stepM = t.stepN = 1;
    t.depthA1 = t.depthB1 = 2 * stepK;
    t.dbL0A = t.dbL0B = 2;
    t.dbL0C = 1;
    t.isBias = isBias_ ? 1 : 0;
    t.iterateOrder = traverse_ == MatrixTraverse::FIRSTN ? 1 : 0;
    const int32_t elem2 = Fp4() ? 1 : 4;  // element bytes x 2
    t.shareL1Size = (t.depthA1 * t.baseM + t.depthB1 * t.baseN) * t.baseK * elem2 / 2;
    t.shareL0CSize = t.baseM * t.baseN * 4;
    t.mxTypePara = Fp4() ? 1 : 0;
  }

  Operand a_, b_, c_, bias_, scaleA_, scaleB_;
  MatrixMadType mad_ = MatrixMadType::NORMAL;
  MatrixTraverse traverse_ = MatrixTraverse::NOSET;
  int32_t m_ = 0, n_ = 0, k_ = 0;
  int32_t orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0;
  int32_t l1_ = -1, l0c_ = -1;
  bool isBias_ = false;
  int32_t fixBaseM_ = -1, fixBaseN_ = -1;  // SetFixSplit
  int arch_;  // the __NPU_ARCH__ the tiling is for
};

// One core computes the whole SetShape.
class MatmulApiTiling : public MatmulApiTilingBase {
 public:
#ifdef __NPU_ARCH__
  MatmulApiTiling() = default;
#endif
  explicit MatmulApiTiling(const PlatformInfo& platform) : MatmulApiTilingBase(platform) {}
  int64_t GetTiling(TCubeTiling& tiling) override {
    if (!Valid() || !FixSplitFits(m_, n_)) return -1;
    Fill(tiling, m_, n_, 1);
    return 0;
  }
};

// SetDim(cores) cores split M and N; each core's block is singleCoreM x singleCoreN (the last
// ones smaller: the kernel sets its tail with SetTail).
class MultiCoreMatmulTiling : public MatmulApiTilingBase {
 public:
#ifdef __NPU_ARCH__
  MultiCoreMatmulTiling() = default;
#endif
  explicit MultiCoreMatmulTiling(const PlatformInfo& platform) : MatmulApiTilingBase(platform) {}
  int32_t SetDim(int32_t dim) {
    if (dim <= 0) return -1;
    dim_ = dim;
    return 0;
  }
  int32_t SetSingleShape(int32_t singleMIn = -1, int32_t singleNIn = -1, int32_t singleKIn = -1) {
    singleM_ = singleMIn;
    singleN_ = singleNIn;
    (void)singleKIn;
    return 0;
  }
  int64_t GetTiling(TCubeTiling& tiling) override {
    if (!Valid()) return -1;
    int32_t sm = singleM_, sn = singleN_;
    if (sm <= 0 || sn <= 0) Split(&sm, &sn);
    const int32_t used = CeilDiv(m_, sm) * CeilDiv(n_, sn);
    if (used > dim_ || !FixSplitFits(sm, sn)) return -1;
    Fill(tiling, sm, sn, used);
    return 0;
  }
  int32_t GetSingleShape(int32_t& shapeM, int32_t& shapeN, int32_t& shapeK) {
    Split(&shapeM, &shapeN);
    shapeK = k_;
    return 0;
  }

 private:
  // mDim x nDim <= dim minimising the base tiles of the largest block (then the cores used).
  void Split(int32_t* sm, int32_t* sn) const {
    const int32_t bm = arch_ == 3510 ? 256 : 128, bn = 256;
    int64_t best = -1;
    for (int32_t md = 1; md <= dim_; ++md) {
      const int32_t nd = dim_ / md;
      const int32_t cm = RoundUp(CeilDiv(m_, md), 16), cn = RoundUp(CeilDiv(n_, nd), 16);
      const int64_t tiles = static_cast<int64_t>(CeilDiv(cm, bm)) * CeilDiv(cn, bn);
      const int64_t score = tiles * 65536 + static_cast<int64_t>(CeilDiv(m_, cm)) * CeilDiv(n_, cn);
      if (best < 0 || score < best) {
        best = score;
        *sm = std::min(cm, m_);
        *sn = std::min(cn, n_);
      }
    }
  }
  int32_t dim_ = 1;
  int32_t singleM_ = -1, singleN_ = -1;
};

}  // namespace matmul_tiling
