// amct kernel sim: the kernel side of AscendC's Matmul high-level API (what "lib/matmul_intf.h"
// declares), for bf16/half operands and, on dav-3510, MX FP4 (fp4x2_e2m1_t with fp8_e8m0_t
// scales). Internal header: kernels include "kernel_operator.h" and "lib/matmul_intf.h".
//
// Declarations follow CANN asc-devkit (head of July 2026): MatmulType / MatmulTypeWithScale
// (impl/adv_api/detail/matmul/utils/matmul_type_def.h), MatmulConfig, CubeFormat, CFG_NORM,
// CFG_MDL (include/adv_api/matmul/matmul_config.h, tiling.h), MatmulImpl and its methods
// (include/adv_api/matmul/matmul.h, impl/adv_api/detail/matmul/mx_matmul_impl.h), the alias
// Matmul and REGIST_MATMUL_OBJ (include/adv_api/matmul/matmul_intf.h, kfc_register_obj.h). Two
// forms, chosen as the real header does by ASCENDC_CUBE_ONLY before the include:
//  * ASCENDC_CUBE_ONLY: Matmul = MatmulImpl, run by the AIC itself (outputs to GM);
//  * otherwise the KFC client/server form of MIX kernels: the AIVs own the Matmul objects and call
//    it, REGIST_MATMUL_OBJ makes the AIC serve them and return; outputs may go to the calling
//    AIV's UB (GetTensorC / IterateAll with a LocalTensor: the L0C -> UB path). The sim computes
//    a client's request on the AIV's thread; its cost goes to that AIV's cube timeline at `ratio`
//    times the cost (the AIC serves its AIVs in turn).
//
// Numerics (the sim's definition; docs/kernel_sim_api.md): every output element is
//   acc = bias (or +0); for k = 0, 1, ..., K-1: acc = fp32(acc + a[m][k] * b[k][n])
// with a*b exact in fp32 (bf16*bf16 and half*half products fit 24 bits; a bf16 product outside
// fp32's normal range is rounded to fp32 first), i.e. fp32 accumulation
// in K order; the baseK chunking of the cube does not change that order. MX FP4: per group g of 32
// K elements the exact sum S_g of the E2M1 products is scaled by 2^(ea + eb - 254) and added once:
// acc = fp32(acc + S_g * 2^(...)) (rounded once, RNE); an E8M0 scale of 0xFF gives NaN. The output
// is acc rounded (RNE) to C's type; enAtomic = 1 adds that rounded value to the GM value (in fp32,
// rounded once more to C's type), as the fixpipe's conversion precedes the atomic add.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "sim_cube.h"
#include "sim_memory.h"
#include "sim_tiling_data.h"

// ---- enums and config (include/adv_api/matmul/matmul_config.h) --------------------------------
enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR = ND, COLUMN_MAJOR = 8 };
enum class LayoutMode { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };
enum class BatchMode { NONE = 0, BATCH_LESS_THAN_L1, BATCH_LARGE_THAN_L1, SINGLE_LARGE_THAN_L1 };
enum class IterateOrder { ORDER_M = 0, ORDER_N, UNDEF };
enum class ScheduleType { INNER_PRODUCT = 0, OUTER_PRODUCT };
enum IterateMode : uint8_t {
  ITERATE_MODE_NORMAL = 0b00000001,
  ITERATE_MODE_ALL = 0b00000010,
  ITERATE_MODE_BATCH = 0b00000100,
  ITERATE_MODE_N_BATCH = 0b00001000,
  ITERATE_MODE_DEFAULT = 0b11111111,
};

// The leading fields of CANN's MatmulConfig, in its order (the sim reads doNorm / doMultiDataLoad
// to name the template and iterateOrder; the rest of CANN's fields are not emulated).
struct MatmulConfig {
  bool doNorm;
  bool doBasicBlock;
  bool doMultiDataLoad;
  uint32_t basicM;
  uint32_t basicN;
  uint32_t basicK;
  bool intrinsicsCheck;
  bool isNBatch;
  bool enVecND2NZ;
  bool doSpecialBasicBlock;
  uint32_t doMTE2Preload;
  uint32_t singleCoreM;
  uint32_t singleCoreN;
  uint32_t singleCoreK;
  uint32_t stepM;
  uint32_t stepN;
  uint32_t baseMN;
  uint32_t singleCoreMN;
  bool enUnitFlag = true;
  bool isPerTensor;
  bool hasAntiQuantOffset;
  bool doIBShareNorm;
  bool doSpecialMDL;
  bool enableInit = true;
  BatchMode batchMode;
  bool enableEnd = true;
  bool enableGetTensorC = true;
  bool enableSetOrgShape = true;
  bool enableSetBias = true;
  bool enableSetTail = true;
  bool enableQuantVector = true;
  bool enableSetDefineData = true;
  uint8_t iterateMode = IterateMode::ITERATE_MODE_DEFAULT;
  bool enableReuse = true;
  bool enableUBReuse;
  bool enableL1CacheUB;
  bool intraBlockPartSum = false;
  IterateOrder iterateOrder{IterateOrder::UNDEF};
  ScheduleType scheduleType;
};

// GetNormalConfig / GetMDLConfig (include/adv_api/matmul/tiling.h): the Norm and MDL templates.
constexpr MatmulConfig GetNormalConfig(const bool intrinsicsLimit = false, const bool batchLoop = false,
                                       const bool isVecND2NZ = false, const BatchMode bmmMode = BatchMode::BATCH_LESS_THAN_L1,
                                       const bool isMsgReuse = true, const IterateOrder iterateOrder = IterateOrder::UNDEF,
                                       const ScheduleType scheduleType = ScheduleType::INNER_PRODUCT,
                                       const bool enUnitFlag = true, const bool enableMixDualMaster = false) {
  MatmulConfig c{};
  c.doNorm = true;
  c.intrinsicsCheck = intrinsicsLimit;
  c.isNBatch = batchLoop;
  c.enVecND2NZ = isVecND2NZ;
  c.enUnitFlag = enUnitFlag;
  c.batchMode = bmmMode;
  c.enableReuse = isMsgReuse;
  c.iterateOrder = iterateOrder;
  c.scheduleType = scheduleType;
  (void)enableMixDualMaster;
  return c;
}

constexpr MatmulConfig GetMDLConfig(const bool intrinsicsLimit = false, const bool batchLoop = false,
                                    const uint32_t doMTE2Preload = 0, const bool isVecND2NZ = false,
                                    bool isPerTensor = false, bool hasAntiQuantOffset = false,
                                    const bool enUnitFlag = false, const bool isMsgReuse = true,
                                    const bool enableUBReuse = true, const bool enableL1CacheUB = false,
                                    const bool enableMixDualMaster = false, const bool enableKdimReorderLoad = false) {
  MatmulConfig c{};
  c.doMultiDataLoad = true;
  c.intrinsicsCheck = intrinsicsLimit;
  c.isNBatch = batchLoop;
  c.doMTE2Preload = doMTE2Preload;
  c.enVecND2NZ = isVecND2NZ;
  c.isPerTensor = isPerTensor;
  c.hasAntiQuantOffset = hasAntiQuantOffset;
  c.enUnitFlag = enUnitFlag;
  c.enableReuse = isMsgReuse;
  c.enableUBReuse = enableUBReuse;
  c.enableL1CacheUB = enableL1CacheUB;
  (void)enableMixDualMaster;
  (void)enableKdimReorderLoad;
  return c;
}

constexpr MatmulConfig CFG_NORM = GetNormalConfig();
constexpr MatmulConfig CFG_MDL = GetMDLConfig();

namespace AscendC {

// ---- type descriptors (impl/adv_api/detail/matmul/utils/matmul_type_def.h) --------------------
template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false, TPosition SRCPOS = TPosition::GM>
struct MatmulType {
  constexpr static TPosition pos = POSITION;
  constexpr static CubeFormat format = FORMAT;
  using T = TYPE;
  constexpr static bool isTrans = ISTRANS;
  constexpr static LayoutMode layout = LAYOUT;
  constexpr static bool ibShare = IBSHARE;
  constexpr static TPosition srcPos = SRCPOS;
};

template <TPosition POSITION, TPosition SCALE_POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          TPosition SRCPOS = TPosition::GM, CubeFormat SCALE_FORMAT = FORMAT, bool SCALE_ISTRANS = ISTRANS,
          TPosition SCALE_SRCPOS = SRCPOS>
struct MatmulTypeWithScale : public MatmulType<POSITION, FORMAT, TYPE, ISTRANS, LayoutMode::NONE, false, SRCPOS> {
  constexpr static TPosition scalePosition = SCALE_POSITION;
  constexpr static CubeFormat scaleFormat = SCALE_FORMAT;
  constexpr static bool isScaleTrans = SCALE_ISTRANS;
  constexpr static TPosition srcScalePos = SCALE_SRCPOS;
};

template <typename INPUT_TYPE, typename = void>
struct HasScalePosition : std::false_type {};
template <typename INPUT_TYPE>
struct HasScalePosition<INPUT_TYPE, std::void_t<decltype(&INPUT_TYPE::scalePosition)>> : std::true_type {};

template <typename A_TYPE, typename B_TYPE>
constexpr bool isMxMatmul = HasScalePosition<A_TYPE>::value && HasScalePosition<B_TYPE>::value;

// Callbacks (not emulated: only MatmulCallBackFunc<nullptr, nullptr, nullptr> is accepted).
template <auto DataCopyOut = nullptr, auto CopyA1 = nullptr, auto CopyB1 = nullptr>
struct MatmulCallBackFunc {
  static constexpr bool kNone = DataCopyOut == nullptr && CopyA1 == nullptr && CopyB1 == nullptr;
};

namespace Impl {
namespace Detail {
// Policies (impl/adv_api/detail/matmul/policy/matmul_policy.h): MX matmuls need
// MatmulWithScalePolicy (docs: MxMatmul场景, "传入MatmulWithScalePolicy表明开启MxMatmul模板策略").
template <const auto& MM_CFG, typename IMPL, typename A_TYPE, typename B_TYPE, typename C_TYPE, typename BIAS_TYPE>
struct MatmulPolicy {
  static constexpr bool kWithScale = false;
};
template <const auto& MM_CFG, typename IMPL, typename A_TYPE, typename B_TYPE, typename C_TYPE, typename BIAS_TYPE>
struct MatmulWithScalePolicy : public MatmulPolicy<MM_CFG, IMPL, A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE> {
  static constexpr bool kWithScale = true;
};
}  // namespace Detail
}  // namespace Impl

}  // namespace AscendC

namespace amct_sim {
namespace detail {

template <class T>
constexpr bool kIsCubeFloat16 = std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value;
template <class T>
constexpr bool kIsCubeOut = kIsCubeFloat16<T> || std::is_same<T, float>::value;

template <class T>
inline float CubeToFloat(T v) {
  if constexpr (std::is_same<T, float>::value) {
    return v;
  } else {
    return static_cast<float>(v);
  }
}

// E2M1 code -> twice its value (exact integers): 0 0.5 1 1.5 2 3 4 6 and their negatives.
inline int Fp4TimesTwo(uint32_t code) {
  static const int8_t kTable[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  return kTable[code & 15u];
}

// Elements per K-direction of one cube fractal (32 bytes): 16 for 16-bit types, 64 for fp4.
template <class T>
constexpr uint32_t kFractalK = std::is_same<T, fp4x2_e2m1_t>::value ? 64 : 16;

inline int32_t CeilDiv(int32_t a, int32_t b) { return (a + b - 1) / b; }

namespace {  // per translation unit, as the real header's choice of Matmul
#ifdef ASCENDC_CUBE_ONLY
constexpr bool kMatmulClientForm = false;
#else
constexpr bool kMatmulClientForm = true;
#endif
}  // namespace

// MX scales must be ND in GM (the positions the sim emulates); true for non-MX types.
template <class A, class B>
constexpr bool ScalesInGmNd() {
  if constexpr (AscendC::isMxMatmul<A, B>) {
    return A::scalePosition == AscendC::TPosition::GM && B::scalePosition == AscendC::TPosition::GM &&
           A::scaleFormat == CubeFormat::ND && B::scaleFormat == CubeFormat::ND;
  } else {
    return true;
  }
}

// State shared by every MatmulImpl instantiation (non-template code).
struct MatmulState {
  TCubeTiling tiling{};
  bool inited = false;
  bool ended = false;
  int32_t orgM = 0, orgN = 0, orgKa = 0, orgKb = 0;
  int32_t singleM = 0, singleN = 0, singleK = 0;
  bool setA = false, setB = false, setScaleA = false, setScaleB = false, setBias = false;
  bool transA = false, transB = false;
  uintptr_t a = 0, b = 0, scaleA = 0, scaleB = 0, bias = 0;  // GM bases
  uintptr_t aHi = 0, bHi = 0, scaleAHi = 0, scaleBHi = 0, biasHi = 0;  // GlobalTensor extents
  // Iterate state: the tile order of tiling.iterateOrder (0: M first)
  int32_t tile = -1;
  std::vector<float> l0c;  // the current tile (Iterate / GetTensorC)
  bool tileFresh = false;
};

[[noreturn]] __attribute__((noinline, cold)) inline void MatmulFail(const char* api, const std::string& msg) {
  Fail(api, msg);
}

// ASCENDC_CUBE_ONLY: the block must be an AIC. KFC form: an AIV of a MIX launch with AIVs.
inline BlockCtx* MatmulCtx(const char* api, bool client) {
  BlockCtx* c = Ctx(api);
  if (!client && c->coreKind != kCoreAic) {
    MatmulFail(api, "Matmul runs on the cube core: with ASCENDC_CUBE_ONLY call it on the AIC of a MIX launch "
                    "(if ASCEND_IS_AIC { ... }); without it (the KFC form) the AIVs call it");
  }
  if (client && (c->coreKind != kCoreAiv || c->mix == nullptr || c->launch->mixRatio == 0)) {
    MatmulFail(api, "Matmul (KFC form, no ASCENDC_CUBE_ONLY): the AIVs of a MIX launch call it and the AIC serves them "
                    "(REGIST_MATMUL_OBJ returns on the AIC); a vector-only launch has no AIC");
  }
  return c;
}

inline void MatmulCheckInited(const MatmulState& s, const char* api) {
  if (s.ended) MatmulFail(api, "the Matmul object was used after End() (Init it again first)");
  if (!s.inited) MatmulFail(api, "the Matmul object is used before Init (REGIST_MATMUL_OBJ or Init(&tiling))");
}

inline void MatmulInit(MatmulState& s, const TCubeTiling* t, uint32_t aBytes2, uint32_t bBytes2, int arch,
                       bool mx, bool client) {
  static const char* const kApi = "Matmul::Init";
  MatmulCtx(kApi, client);
  if (t == nullptr) MatmulFail(kApi, "cubeTiling is null");
  const TCubeTiling& x = *t;
  if (x.M <= 0 || x.N <= 0 || x.Ka <= 0 || x.Kb <= 0 || x.singleCoreM <= 0 || x.singleCoreN <= 0 ||
      x.singleCoreK <= 0 || x.baseM <= 0 || x.baseN <= 0 || x.baseK <= 0) {
    MatmulFail(kApi, Fmt("tiling: M %d N %d Ka %d Kb %d singleCore %d x %d x %d base %d x %d x %d must all be > 0 "
                         "(fill it with matmul_tiling's GetTiling)",
                         x.M, x.N, x.Ka, x.Kb, x.singleCoreM, x.singleCoreN, x.singleCoreK, x.baseM, x.baseN, x.baseK));
  }
  if (x.Ka != x.Kb) MatmulFail(kApi, Fmt("tiling: Ka %d != Kb %d", x.Ka, x.Kb));
  if (x.baseM % 16 != 0 || x.baseN % 16 != 0) {
    MatmulFail(kApi, Fmt("tiling: baseM %d and baseN %d must be multiples of 16 (the cube fractal)", x.baseM, x.baseN));
  }
  const int32_t kAlign = mx ? 64 : 16;
  if (x.baseK % kAlign != 0) {
    MatmulFail(kApi, Fmt("tiling: baseK %d must be a multiple of %d (one 32-byte fractal of K)", x.baseK, kAlign));
  }
  // aBytes2/bBytes2: element bytes times 2 (fp4 = 1).
  const uint64_t l0a = static_cast<uint64_t>(x.baseM) * x.baseK * aBytes2 / 2;
  const uint64_t l0b = static_cast<uint64_t>(x.baseK) * x.baseN * bBytes2 / 2;
  const uint64_t l0c = static_cast<uint64_t>(x.baseM) * x.baseN * 4;
  const int32_t dbA = x.dbL0A > 1 ? 2 : 1, dbB = x.dbL0B > 1 ? 2 : 1, dbC = x.dbL0C > 1 ? 2 : 1;
  if (l0a * dbA > cube::kL0aBytes || l0b * dbB > cube::kL0bBytes || l0c * dbC > cube::L0cBytes(arch)) {
    MatmulFail(kApi, Fmt("tiling: base %d x %d x %d needs L0A %llu B x %d, L0B %llu B x %d, L0C %llu B x %d; the "
                         "arch has L0A %u, L0B %u, L0C %u",
                         x.baseM, x.baseN, x.baseK, static_cast<unsigned long long>(l0a), dbA,
                         static_cast<unsigned long long>(l0b), dbB, static_cast<unsigned long long>(l0c), dbC,
                         cube::kL0aBytes, cube::kL0bBytes, cube::L0cBytes(arch)));
  }
  const uint64_t l1 = static_cast<uint64_t>(std::max(1, x.depthA1)) * l0a + static_cast<uint64_t>(std::max(1, x.depthB1)) * l0b;
  if (l1 > cube::kL1Bytes) {
    MatmulFail(kApi, Fmt("tiling: depthA1 %d x %llu B + depthB1 %d x %llu B = %llu B exceed L1 (%u B)", x.depthA1,
                         static_cast<unsigned long long>(l0a), x.depthB1, static_cast<unsigned long long>(l0b),
                         static_cast<unsigned long long>(l1), cube::kL1Bytes));
  }
  s = MatmulState{};
  s.tiling = x;
  s.inited = true;
  s.orgM = x.M;
  s.orgN = x.N;
  s.orgKa = x.Ka;
  s.orgKb = x.Kb;
  s.singleM = x.singleCoreM;
  s.singleN = x.singleCoreN;
  s.singleK = x.singleCoreK;
}

// A GM operand: aligned to its element size, inside the registered regions (read-only use).
template <class T>
inline void MatmulSetGm(const AscendC::GlobalTensor<T>& g, const char* api, uintptr_t* base, uintptr_t* hi) {
  if (!TensorAccess::GmSet(g)) MatmulFail(api, "GlobalTensor used before SetGlobalBuffer");
  const uintptr_t b = TensorAccess::GmBase(g);
  if (b % alignof(T) != 0 || b % sizeof(T) != 0) {
    MatmulFail(api, Fmt("alignment: GM address %#llx is not a multiple of sizeof(T) = %zu",
                        static_cast<unsigned long long>(b), sizeof(T)));
  }
  *base = b;
  *hi = TensorAccess::GmExtHi(g);
}

// Reads `rows` rows of `rowBytes` at base + i * pitch of GM: extent, region and race log.
inline void MatmulGmRead(BlockCtx* c, const char* api, uintptr_t base, uintptr_t extHi, uint64_t rows,
                         uint64_t rowBytes, uint64_t pitch) {
  if (rows == 0 || rowBytes == 0) return;
  const uintptr_t lo = base;
  const uintptr_t hi = base + (rows - 1) * pitch + rowBytes;
  GmCheckExtent(api, lo, hi, base, extHi);
  const RegionInfo* r = GmFindRegion(c, api, lo, hi, false);
  if (!r->tracked) return;
  for (uint64_t i = 0; i < rows; ++i) AddInterval(c->outcome->log.reads, lo + i * pitch, lo + i * pitch + rowBytes);
  // The AIC's loads order against its AIVs' GM accesses by cross-core flags (sim_gm_order.h).
  if (c->gmOrder != nullptr && c->coreKind == kCoreAic) {
    RecordCrossCoreGm(c, kPipeMte2, BeginOp(c, kPipeMte2), lo, rowBytes, pitch, static_cast<uint32_t>(rows));
  }
}

inline void MatmulGmWrite(BlockCtx* c, const char* api, uintptr_t base, uintptr_t extLo, uintptr_t extHi,
                          uint64_t rows, uint64_t rowBytes, uint64_t pitch) {
  if (rows == 0 || rowBytes == 0) return;
  const uintptr_t lo = base;
  const uintptr_t hi = base + (rows - 1) * pitch + rowBytes;
  GmCheckExtent(api, lo, hi, extLo, extHi);
  const RegionInfo* r = GmFindRegion(c, api, lo, hi, true);
  if (!r->tracked) return;
  for (uint64_t i = 0; i < rows; ++i) AddInterval(c->outcome->log.writes, lo + i * pitch, lo + i * pitch + rowBytes);
  // The AIC's FIX writes (the MTE3 slot of its hazard counts: the AIC has no MTE3), sim_gm_order.h.
  if (c->gmOrder != nullptr && c->coreKind == kCoreAic) {
    RecordCrossCoreGm(c, kPipeMte3, BeginOp(c, kPipeMte3), lo, rowBytes, pitch, static_cast<uint32_t>(rows));
  }
}

inline bool MatmulCostOnly(const BlockCtx* c) { return c->cost != nullptr && c->launch->costOnly; }

// KFC form, REGIST_MATMUL_OBJ: true on the AIC (which serves and returns), false on the AIVs.
inline bool KfcServerReturns() {
  static const char* const kApi = "REGIST_MATMUL_OBJ";
  BlockCtx* c = Ctx(kApi);
  if (c->mix == nullptr || c->launch->mixRatio == 0) {
    MatmulFail(kApi, "the KFC form (no ASCENDC_CUBE_ONLY) needs a MIX launch with AIVs (KERNEL_TYPE_MIX_AIC_1_1/1_2)");
  }
  return c->coreKind == kCoreAic;
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

// AMCT_CLIENT (the sim's own last parameter, set by the Matmul alias): the KFC form.
template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<nullptr, nullptr, nullptr>,
          template <const auto& = MM_CFG, typename...> class MATMUL_POLICY = Impl::Detail::MatmulPolicy,
          bool AMCT_CLIENT = false>
class MatmulImpl {
  using SrcAT = typename A_TYPE::T;
  using SrcBT = typename B_TYPE::T;
  using DstT = typename C_TYPE::T;
  using BiasT = typename BIAS_TYPE::T;
  static constexpr bool kMx = isMxMatmul<A_TYPE, B_TYPE>;
  using Policy = MATMUL_POLICY<MM_CFG, MatmulImpl, A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE>;

  static_assert(MM_CB::kNone, "Matmul (kernel sim): MatmulCallBackFunc callbacks are not emulated");
  static_assert(A_TYPE::pos == TPosition::GM && B_TYPE::pos == TPosition::GM,
                "Matmul (kernel sim): A and B must be in TPosition::GM (TSCM/VECOUT sources are not emulated)");
  // C's type may name GM or a vector position (asc-devkit's BareMix example, matmul_fused_manual,
  // declares C in VECIN and IterateAll's to GM); the outputs themselves go to GM only.
  static constexpr bool kCInUb =
      C_TYPE::pos == TPosition::VECIN || C_TYPE::pos == TPosition::VECCALC || C_TYPE::pos == TPosition::VECOUT;
  static_assert(C_TYPE::pos == TPosition::GM || kCInUb, "Matmul (kernel sim): C must be in GM or UB (CO1 not emulated)");
  static_assert(A_TYPE::format == CubeFormat::ND && B_TYPE::format == CubeFormat::ND && C_TYPE::format == CubeFormat::ND,
                "Matmul (kernel sim): only CubeFormat::ND operands are emulated");
  static_assert(A_TYPE::layout == LayoutMode::NONE && B_TYPE::layout == LayoutMode::NONE,
                "Matmul (kernel sim): batch layouts (LayoutMode) are not emulated");
  static_assert(amct_sim::detail::kIsCubeOut<DstT>, "Matmul: C must be float, half or bfloat16_t");
  static_assert(amct_sim::detail::kIsCubeOut<BiasT>, "Matmul: Bias must be float, half or bfloat16_t");
  static_assert(MM_CFG.doNorm || MM_CFG.doMultiDataLoad,
                "Matmul (kernel sim): only the Norm (CFG_NORM) and MDL (CFG_MDL) templates are emulated");
  static_assert(kMx || (amct_sim::detail::kIsCubeFloat16<SrcAT> && std::is_same<SrcAT, SrcBT>::value),
                "Matmul (kernel sim): A and B must both be half or both bfloat16_t (float/int8 operands are not "
                "emulated); MX operands need MatmulTypeWithScale for both");
  static_assert(!kMx || (std::is_same<SrcAT, fp4x2_e2m1_t>::value && std::is_same<SrcBT, fp4x2_e2m1_t>::value),
                "Matmul (kernel sim): of the MX types only fp4x2_e2m1_t x fp4x2_e2m1_t is emulated");
  static_assert(!kMx || amct_sim::detail::kArch3510, "Matmul: MxMatmul exists only on dav-3510 (Ascend 950)");
  static_assert(!kMx || Policy::kWithScale,
                "Matmul: an MX matmul needs the policy AscendC::Impl::Detail::MatmulWithScalePolicy (7th parameter)");
  static_assert(amct_sim::detail::ScalesInGmNd<A_TYPE, B_TYPE>(),
                "Matmul (kernel sim): MX scales must be ND in TPosition::GM");

  static constexpr uint32_t kABytes2 = std::is_same<SrcAT, fp4x2_e2m1_t>::value ? 1 : 2 * sizeof(SrcAT);
  static constexpr uint32_t kBBytes2 = std::is_same<SrcBT, fp4x2_e2m1_t>::value ? 1 : 2 * sizeof(SrcBT);

 public:
  __aicore__ inline MatmulImpl() {}

  __aicore__ inline void Init(const TCubeTiling* __restrict cubeTiling, TPipe* tpipe = nullptr) {
    (void)tpipe;
    amct_sim::detail::MatmulInit(s_, cubeTiling, kABytes2, kBBytes2, __NPU_ARCH__, kMx, AMCT_CLIENT);
  }

  __aicore__ inline void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK, orgN); }
  __aicore__ inline void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
    static const char* const kApi = "Matmul::SetOrgShape";
    Live(kApi);
    (void)orgKc;
    if (orgM <= 0 || orgN <= 0 || orgKa <= 0 || orgKb <= 0) {
      amct_sim::detail::MatmulFail(kApi, amct_sim::detail::Fmt("orgM %d orgN %d orgKa %d orgKb %d must be > 0", orgM,
                                                               orgN, orgKa, orgKb));
    }
    s_.orgM = orgM;
    s_.orgN = orgN;
    s_.orgKa = orgKa;
    s_.orgKb = orgKb;
  }

  __aicore__ inline void SetSingleShape(int singleM, int singleN, int singleK) {
    Live("Matmul::SetSingleShape");
    SetShape("Matmul::SetSingleShape", singleM, singleN, singleK);
  }

  // The tail block of this core: -1 keeps the current value.
  __aicore__ inline void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
    Live("Matmul::SetTail");
    SetShape("Matmul::SetTail", tailM < 0 ? s_.singleM : tailM, tailN < 0 ? s_.singleN : tailN,
             tailK < 0 ? s_.singleK : tailK);
  }

  __aicore__ inline void SetTensorA(const GlobalTensor<SrcAT>& gm, bool isTransposeA = false) {
    SetOperand("Matmul::SetTensorA", gm, isTransposeA, A_TYPE::isTrans, "A", &s_.a, &s_.aHi, &s_.transA, &s_.setA);
  }
  __aicore__ inline void SetTensorB(const GlobalTensor<SrcBT>& gm, bool isTransposeB = false) {
    SetOperand("Matmul::SetTensorB", gm, isTransposeB, B_TYPE::isTrans, "B", &s_.b, &s_.bHi, &s_.transB, &s_.setB);
  }
  __aicore__ inline void SetBias(const GlobalTensor<BiasT>& biasGlobal) {
    static const char* const kApi = "Matmul::SetBias";
    Live(kApi);
    amct_sim::detail::MatmulSetGm(biasGlobal, kApi, &s_.bias, &s_.biasHi);
    s_.setBias = true;
  }
  __aicore__ inline void DisableBias() {
    Live("Matmul::DisableBias");
    s_.setBias = false;
  }
  __aicore__ inline void ClearBias() { DisableBias(); }

  // MX scales (mx_matmul_impl.h): scaleA [M, Ks] (not transposed), scaleB [N, Ks] (transposed, the
  // default), Ks = 2 * ceil(K / 64) per row: the K direction padded with zeros to an even count
  // of 32-element groups (docs: MxMatmul场景, constraints).
  template <bool M = kMx, std::enable_if_t<M, int> = 0>
  __aicore__ inline void SetTensorScaleA(const GlobalTensor<fp8_e8m0_t>& gm, bool isTransposeScaleA = false) {
    static const char* const kApi = "Matmul::SetTensorScaleA";
    Live(kApi);
    if (isTransposeScaleA) {
      amct_sim::detail::MatmulFail(kApi, "a transposed scaleA ([ceil(K/64), M, 2]) is not emulated: pass [M, Ks]");
    }
    amct_sim::detail::MatmulSetGm(gm, kApi, &s_.scaleA, &s_.scaleAHi);
    s_.setScaleA = true;
    s_.tile = -1;
  }
  template <bool M = kMx, std::enable_if_t<M, int> = 0>
  __aicore__ inline void SetTensorScaleB(const GlobalTensor<fp8_e8m0_t>& gm, bool isTransposeScaleB = true) {
    static const char* const kApi = "Matmul::SetTensorScaleB";
    Live(kApi);
    if (!isTransposeScaleB) {
      amct_sim::detail::MatmulFail(kApi, "a non-transposed scaleB is not emulated: pass [N, Ks] with isTransposeScaleB = true");
    }
    amct_sim::detail::MatmulSetGm(gm, kApi, &s_.scaleB, &s_.scaleBHi);
    s_.setScaleB = true;
    s_.tile = -1;
  }

  // One base tile (baseM x baseN, tiles in tiling.iterateOrder) into L0C; false when all are done.
  template <bool sync = true>
  __aicore__ inline bool Iterate(bool enPartialSum = false) {
    static const char* const kApi = "Matmul::Iterate";
    amct_sim::detail::BlockCtx* c = Live(kApi);
    if (enPartialSum) amct_sim::detail::MatmulFail(kApi, "enPartialSum is not emulated");
    CheckInputs(kApi);
    const int32_t tiles = TilesM() * TilesN();
    if (s_.tile + 1 >= tiles) {
      s_.tile = -1;
      s_.tileFresh = false;
      return false;
    }
    ++s_.tile;
    int32_t m0, n0, mLen, nLen;
    TileRect(s_.tile, &m0, &n0, &mLen, &nLen);
    ComputeTile(c, kApi, m0, n0, mLen, nLen, s_.l0c);
    s_.tileFresh = true;
    return true;
  }

  // The current tile to its place in C (gm: this core's C block, row stride orgN).
  template <bool sync = true>
  __aicore__ inline void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
    static const char* const kApi = "Matmul::GetTensorC";
    amct_sim::detail::BlockCtx* c = Live(kApi);
    if (!s_.tileFresh) amct_sim::detail::MatmulFail(kApi, "no tile computed: call Iterate() first (once per GetTensorC)");
    if (enSequentialWrite) amct_sim::detail::MatmulFail(kApi, "enSequentialWrite is not emulated");
    int32_t m0, n0, mLen, nLen;
    TileRect(s_.tile, &m0, &n0, &mLen, &nLen);
    WriteTile(c, kApi, gm, enAtomic, m0, n0, mLen, nLen, s_.l0c);
    s_.tileFresh = false;
  }

  // Every tile of this core's block to C (gm: the block's first element, row stride orgN).
  template <bool sync = true>
  __aicore__ inline void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                                    bool waitIterateAll = false, bool fakeMsg = false) {
    static const char* const kApi = "Matmul::IterateAll";
    amct_sim::detail::BlockCtx* c = Live(kApi);
    (void)waitIterateAll;
    (void)fakeMsg;
    if (enSequentialWrite) amct_sim::detail::MatmulFail(kApi, "enSequentialWrite is not emulated");
    CheckInputs(kApi);
    std::vector<float> tile;
    const int32_t tiles = TilesM() * TilesN();
    for (int32_t t = 0; t < tiles; ++t) {
      int32_t m0, n0, mLen, nLen;
      TileRect(t, &m0, &n0, &mLen, &nLen);
      ComputeTile(c, kApi, m0, n0, mLen, nLen, tile);
      WriteTile(c, kApi, gm, enAtomic, m0, n0, mLen, nLen, tile);
    }
    s_.tile = -1;
    s_.tileFresh = false;
  }

  // KFC form, C in UB: the current tile into the calling AIV's UB (rows of baseN elements; a tail
  // tile fills its top-left mLen x nLen), synchronously (the call returns with the data in UB; the
  // vector pipe must then be ordered after it as after an MTE2 write: a VECIN EnQue/DeQue or MTE2_V).
  template <bool sync = true>
  __aicore__ inline void GetTensorC(const LocalTensor<DstT>& co2Local, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
    static const char* const kApi = "Matmul::GetTensorC(UB)";
    amct_sim::detail::BlockCtx* c = LiveUb(kApi);
    (void)enSequentialWrite;
    if (!s_.tileFresh) amct_sim::detail::MatmulFail(kApi, "no tile computed: call Iterate() first (once per GetTensorC)");
    int32_t m0, n0, mLen, nLen;
    TileRect(s_.tile, &m0, &n0, &mLen, &nLen);
    WriteTileUb(c, kApi, co2Local, 0, s_.tiling.baseN, enAtomic, mLen, nLen, s_.l0c);
    s_.tileFresh = false;
  }

  // KFC form, C in UB: the whole core block (singleM x singleN, row stride singleN) into the AIV's UB.
  template <bool sync = true>
  __aicore__ inline void IterateAll(const LocalTensor<DstT>& ubCmatrix, uint8_t enAtomic = 0) {
    static const char* const kApi = "Matmul::IterateAll(UB)";
    amct_sim::detail::BlockCtx* c = LiveUb(kApi);
    CheckInputs(kApi);
    std::vector<float> tile;
    for (int32_t t = 0; t < TilesM() * TilesN(); ++t) {
      int32_t m0, n0, mLen, nLen;
      TileRect(t, &m0, &n0, &mLen, &nLen);
      ComputeTile(c, kApi, m0, n0, mLen, nLen, tile);
      WriteTileUb(c, kApi, ubCmatrix, static_cast<uint64_t>(m0) * s_.singleN + n0, s_.singleN, enAtomic, mLen, nLen,
                  tile);
    }
    s_.tile = -1;
    s_.tileFresh = false;
  }

  __aicore__ inline void End() {
    Live("Matmul::End");
    s_.ended = true;
  }

  __aicore__ inline void SetSubBlockIdx(uint8_t subBlockIdx) { (void)subBlockIdx; }
  __aicore__ inline uint8_t GetSubBlockIdx() { return 0; }

 private:
  amct_sim::detail::BlockCtx* Live(const char* api) {
    amct_sim::detail::BlockCtx* c = amct_sim::detail::MatmulCtx(api, AMCT_CLIENT);
    amct_sim::detail::MatmulCheckInited(s_, api);
    return c;
  }

  void SetShape(const char* api, int m, int n, int k) {
    const TCubeTiling& t = s_.tiling;
    if (m <= 0 || n <= 0 || k <= 0) {
      amct_sim::detail::MatmulFail(api, amct_sim::detail::Fmt("shape %d x %d x %d must be > 0", m, n, k));
    }
    // The L1/L0 buffers were sized by Init from the tiling's singleCore shape.
    if (m > t.singleCoreM || n > t.singleCoreN || k > t.singleCoreK) {
      amct_sim::detail::MatmulFail(api, amct_sim::detail::Fmt("shape %d x %d x %d exceeds the tiling's singleCore "
                                                              "shape %d x %d x %d",
                                                              m, n, k, t.singleCoreM, t.singleCoreN, t.singleCoreK));
    }
    s_.singleM = m;
    s_.singleN = n;
    s_.singleK = k;
    s_.tile = -1;
  }

  template <class T>
  void SetOperand(const char* api, const GlobalTensor<T>& gm, bool requested, bool enabled, const char* which,
                  uintptr_t* base, uintptr_t* hi, bool* trans, bool* set) {
    Live(api);
    if (requested && !enabled) {
      amct_sim::detail::MatmulFail(api, amct_sim::detail::Fmt("isTranspose%s = true but the MatmulType of %s has "
                                                              "ISTRANS = false (the transpose must be enabled in the type)",
                                                              which, which));
    }
    amct_sim::detail::MatmulSetGm(gm, api, base, hi);
    *trans = requested;
    *set = true;
    s_.tile = -1;
  }

  void CheckInputs(const char* api) const {
    if (!s_.setA) amct_sim::detail::MatmulFail(api, "SetTensorA was not called");
    if (!s_.setB) amct_sim::detail::MatmulFail(api, "SetTensorB was not called");
    if (kMx && !s_.setScaleA) amct_sim::detail::MatmulFail(api, "SetTensorScaleA was not called (MX matmul)");
    if (kMx && !s_.setScaleB) amct_sim::detail::MatmulFail(api, "SetTensorScaleB was not called (MX matmul)");
    if (s_.singleM > s_.orgM || s_.singleN > s_.orgN || s_.singleK > s_.orgKa || s_.singleK > s_.orgKb) {
      amct_sim::detail::MatmulFail(api, amct_sim::detail::Fmt("single shape %d x %d x %d exceeds the org shape M %d N %d "
                                                              "Ka %d Kb %d (SetOrgShape)",
                                                              s_.singleM, s_.singleN, s_.singleK, s_.orgM, s_.orgN,
                                                              s_.orgKa, s_.orgKb));
    }
    if constexpr (kMx) {
      // fp4x2: the inner axis holds two elements per byte and must be even (MxMatmul constraints).
      const int32_t aInner = s_.transA ? s_.orgM : s_.orgKa;
      const int32_t bInner = s_.transB ? s_.orgKb : s_.orgN;
      if (aInner % 2 != 0 || bInner % 2 != 0 || (s_.singleK % 2 != 0)) {
        amct_sim::detail::MatmulFail(api, amct_sim::detail::Fmt("fp4x2: the inner axes (A %d, B %d) and K (%d) must be "
                                                                "even (two E2M1 elements per byte)",
                                                                aInner, bInner, s_.singleK));
      }
      if (s_.transA) amct_sim::detail::MatmulFail(api, "a transposed fp4 A is not emulated");
    }
  }

  int32_t TilesM() const { return amct_sim::detail::CeilDiv(s_.singleM, s_.tiling.baseM); }
  int32_t TilesN() const { return amct_sim::detail::CeilDiv(s_.singleN, s_.tiling.baseN); }

  // Tile t in iterateOrder: 0 (ORDER_M) walks M first, 1 (ORDER_N) walks N first.
  void TileRect(int32_t t, int32_t* m0, int32_t* n0, int32_t* mLen, int32_t* nLen) const {
    const int32_t tm = TilesM(), tn = TilesN();
    const bool orderN = s_.tiling.iterateOrder == 1;
    const int32_t mi = orderN ? t / tn : t % tm;
    const int32_t ni = orderN ? t % tn : t / tm;
    *m0 = mi * s_.tiling.baseM;
    *n0 = ni * s_.tiling.baseN;
    *mLen = std::min(s_.tiling.baseM, s_.singleM - *m0);
    *nLen = std::min(s_.tiling.baseN, s_.singleN - *n0);
  }

  // Element (m, k) of A and (k, n) of B as floats (16-bit types) or twice the E2M1 value (fp4).
  float AElem(int32_t m, int32_t k) const {
    if constexpr (kMx) {
      const uint64_t e = static_cast<uint64_t>(m) * s_.orgKa + k;
      const uint8_t byte = reinterpret_cast<const uint8_t*>(s_.a)[e >> 1];
      return static_cast<float>(amct_sim::detail::Fp4TimesTwo((e & 1) ? byte >> 4 : byte));
    } else {
      const uint64_t e = s_.transA ? static_cast<uint64_t>(k) * s_.orgM + m : static_cast<uint64_t>(m) * s_.orgKa + k;
      SrcAT v;
      std::memcpy(&v, reinterpret_cast<const uint8_t*>(s_.a) + e * sizeof(SrcAT), sizeof(SrcAT));
      return static_cast<float>(v);
    }
  }
  float BElem(int32_t k, int32_t n) const {
    const uint64_t e = s_.transB ? static_cast<uint64_t>(n) * s_.orgKb + k : static_cast<uint64_t>(k) * s_.orgN + n;
    if constexpr (kMx) {
      const uint8_t byte = reinterpret_cast<const uint8_t*>(s_.b)[e >> 1];
      return static_cast<float>(amct_sim::detail::Fp4TimesTwo((e & 1) ? byte >> 4 : byte));
    } else {
      SrcBT v;
      std::memcpy(&v, reinterpret_cast<const uint8_t*>(s_.b) + e * sizeof(SrcBT), sizeof(SrcBT));
      return static_cast<float>(v);
    }
  }

  static int32_t ScaleStride(int32_t k) { return 2 * amct_sim::detail::CeilDiv(k, 64); }

  // GM footprints of one tile's operands (checks and race log), element-accurate.
  void CheckTileGm(amct_sim::detail::BlockCtx* c, const char* api, int32_t m0, int32_t n0, int32_t mLen,
                   int32_t nLen) const {
    using amct_sim::detail::MatmulGmRead;
    const int32_t k = s_.singleK;
    if constexpr (kMx) {
      MatmulGmRead(c, api, s_.a + static_cast<uint64_t>(m0) * s_.orgKa / 2, s_.aHi, mLen, (k + 1) / 2, s_.orgKa / 2);
      if (s_.transB) {
        MatmulGmRead(c, api, s_.b + static_cast<uint64_t>(n0) * s_.orgKb / 2, s_.bHi, nLen, (k + 1) / 2, s_.orgKb / 2);
      } else {
        MatmulGmRead(c, api, s_.b + static_cast<uint64_t>(n0) / 2, s_.bHi, k, (nLen + 1) / 2, s_.orgN / 2);
      }
      const int32_t groups = amct_sim::detail::CeilDiv(k, 32);
      MatmulGmRead(c, api, s_.scaleA + static_cast<uint64_t>(m0) * ScaleStride(s_.orgKa), s_.scaleAHi, mLen, groups,
                   ScaleStride(s_.orgKa));
      MatmulGmRead(c, api, s_.scaleB + static_cast<uint64_t>(n0) * ScaleStride(s_.orgKb), s_.scaleBHi, nLen, groups,
                   ScaleStride(s_.orgKb));
    } else {
      const uint64_t ea = sizeof(SrcAT), eb = sizeof(SrcBT);
      if (s_.transA) {
        MatmulGmRead(c, api, s_.a + m0 * ea, s_.aHi, k, mLen * ea, s_.orgM * ea);
      } else {
        MatmulGmRead(c, api, s_.a + static_cast<uint64_t>(m0) * s_.orgKa * ea, s_.aHi, mLen, k * ea, s_.orgKa * ea);
      }
      if (s_.transB) {
        MatmulGmRead(c, api, s_.b + static_cast<uint64_t>(n0) * s_.orgKb * eb, s_.bHi, nLen, k * eb, s_.orgKb * eb);
      } else {
        MatmulGmRead(c, api, s_.b + n0 * eb, s_.bHi, k, nLen * eb, s_.orgN * eb);
      }
    }
    if (s_.setBias) MatmulGmRead(c, api, s_.bias + n0 * sizeof(BiasT), s_.biasHi, 1, nLen * sizeof(BiasT), 0);
  }

  void ComputeTile(amct_sim::detail::BlockCtx* c, const char* api, int32_t m0, int32_t n0, int32_t mLen,
                   int32_t nLen, std::vector<float>& out) const {
    CheckTileGm(c, api, m0, n0, mLen, nLen);
    AMCT_SIM_COST(c->cost, CubeTile(mLen, nLen, s_.singleK, s_.tiling.baseK, kABytes2, kBBytes2,
                                    amct_sim::detail::kFractalK<SrcAT>, kMx, Share(c)));
    out.assign(static_cast<size_t>(mLen) * nLen, 0.0f);
    if (amct_sim::detail::MatmulCostOnly(c)) return;
    std::vector<float> bias(static_cast<size_t>(nLen), 0.0f);
    if (s_.setBias) {
      for (int32_t j = 0; j < nLen; ++j) {
        BiasT v;
        std::memcpy(&v, reinterpret_cast<const uint8_t*>(s_.bias) + (n0 + j) * sizeof(BiasT), sizeof(BiasT));
        bias[j] = amct_sim::detail::CubeToFloat(v);
      }
    }
    const int32_t k = s_.singleK;
    // B as [k][nLen] floats, so that a row of accumulators runs over contiguous memory.
    std::vector<float> b(static_cast<size_t>(k) * nLen);
    for (int32_t kk = 0; kk < k; ++kk) {
      for (int32_t j = 0; j < nLen; ++j) b[static_cast<size_t>(kk) * nLen + j] = BElem(kk, n0 + j);
    }
    std::vector<float> aRow(kMx ? 0 : static_cast<size_t>(k));
    for (int32_t i = 0; i < mLen; ++i) {
      float* acc = &out[static_cast<size_t>(i) * nLen];
      for (int32_t j = 0; j < nLen; ++j) acc[j] = bias[j];
      if constexpr (kMx) {
        AccumulateMxRow(m0 + i, n0, nLen, b, acc);
      } else {
        for (int32_t kk = 0; kk < k; ++kk) aRow[kk] = AElem(m0 + i, kk);
        amct_sim::detail::AccumulateRowInKOrder(acc, aRow.data(), b.data(), k, nLen);  // a * b: exact in range
      }
    }
  }

  // MX: per 32-element group, the exact product sum (values are twice E2M1, so S / 4) scaled once.
  void AccumulateMxRow(int32_t m, int32_t n0, int32_t nLen, const std::vector<float>& b, float* acc) const {
    const int32_t k = s_.singleK;
    const uint8_t* sa = reinterpret_cast<const uint8_t*>(s_.scaleA) + static_cast<uint64_t>(m) * ScaleStride(s_.orgKa);
    std::vector<int32_t> sum(static_cast<size_t>(nLen));
    for (int32_t g = 0; g * 32 < k; ++g) {
      std::fill(sum.begin(), sum.end(), 0);
      for (int32_t kk = g * 32; kk < std::min(k, g * 32 + 32); ++kk) {
        const int32_t a = static_cast<int32_t>(AElem(m, kk));
        const float* brow = &b[static_cast<size_t>(kk) * nLen];
        for (int32_t j = 0; j < nLen; ++j) sum[j] += a * static_cast<int32_t>(brow[j]);
      }
      for (int32_t j = 0; j < nLen; ++j) {
        const uint8_t* sb = reinterpret_cast<const uint8_t*>(s_.scaleB) + static_cast<uint64_t>(n0 + j) * ScaleStride(s_.orgKb);
        const uint32_t ea = sa[g], eb = sb[g];
        if (ea == 0xFF || eb == 0xFF) {
          acc[j] = std::numeric_limits<float>::quiet_NaN();
          continue;
        }
        const double term = std::ldexp(static_cast<double>(sum[j]) * 0.25, static_cast<int>(ea + eb) - 254);
        acc[j] = static_cast<float>(static_cast<double>(acc[j]) + term);
      }
    }
  }

  void WriteTile(amct_sim::detail::BlockCtx* c, const char* api, const GlobalTensor<DstT>& gm, uint8_t enAtomic,
                 int32_t m0, int32_t n0, int32_t mLen, int32_t nLen, const std::vector<float>& tile) const {
    if (enAtomic > 1) amct_sim::detail::MatmulFail(api, amct_sim::detail::Fmt("enAtomic %u: only 0 and 1 (add) are emulated", enAtomic));
    if (!amct_sim::detail::TensorAccess::GmSet(gm)) amct_sim::detail::MatmulFail(api, "GlobalTensor used before SetGlobalBuffer");
    const uintptr_t base = amct_sim::detail::TensorAccess::GmBase(gm);
    if (base % sizeof(DstT) != 0) {
      amct_sim::detail::MatmulFail(api, amct_sim::detail::Fmt("alignment: C's GM address %#llx is not a multiple of %zu",
                                                              static_cast<unsigned long long>(base), sizeof(DstT)));
    }
    const uint64_t es = sizeof(DstT);
    const uintptr_t lo = base + (static_cast<uint64_t>(m0) * s_.orgN + n0) * es;
    amct_sim::detail::MatmulGmWrite(c, api, lo, amct_sim::detail::TensorAccess::GmExtLo(gm),
                                    amct_sim::detail::TensorAccess::GmExtHi(gm), mLen, nLen * es, s_.orgN * es);
    AMCT_SIM_COST(c->cost, CubeFixOut(static_cast<uint64_t>(mLen) * nLen * es, Share(c)));
    if (amct_sim::detail::MatmulCostOnly(c)) return;
    for (int32_t i = 0; i < mLen; ++i) {
      uint8_t* row = reinterpret_cast<uint8_t*>(lo + static_cast<uint64_t>(i) * s_.orgN * es);
      for (int32_t j = 0; j < nLen; ++j) {
        float v = tile[static_cast<size_t>(i) * nLen + j];
        if (enAtomic == 1) {
          // The fixpipe converts the L0C value to DstT first; the atomic add (SetAtomicAdd<DstT>,
          // CANN matmul scheduler_base.h) then sums two DstT values: two rounding points.
          DstT old;
          std::memcpy(&old, row + j * es, es);
          v = amct_sim::detail::CubeToFloat(old) + amct_sim::detail::CubeToFloat(static_cast<DstT>(v));
        }
        const DstT out = static_cast<DstT>(v);
        std::memcpy(row + j * es, &out, es);
      }
    }
  }

  // The KFC form charges an AIV's request at `ratio` times its cost (its AIC serves all its AIVs).
  static double Share(const amct_sim::detail::BlockCtx* c) {
    return AMCT_CLIENT ? static_cast<double>(c->launch->mixRatio) : 1.0;
  }

  amct_sim::detail::BlockCtx* LiveUb(const char* api) {
    amct_sim::detail::BlockCtx* c = Live(api);
    if (!AMCT_CLIENT) {
      amct_sim::detail::MatmulFail(api, "a C in UB needs the KFC form (the AIV calls the Matmul, without "
                                        "ASCENDC_CUBE_ONLY): an AIC has no UB of its own");
    }
    if (!kCInUb) {
      amct_sim::detail::MatmulFail(api, "C's MatmulType is in TPosition::GM: a UB output needs VECIN/VECCALC/VECOUT");
    }
    return c;
  }

  // Writes an mLen x nLen tile at element `first` of dst with row stride `stride` (an L0C -> UB
  // fixpipe: an MTE2-like write in the AIV's hazard model; the scalar unit waits for it).
  void WriteTileUb(amct_sim::detail::BlockCtx* c, const char* api, const LocalTensor<DstT>& dst, uint64_t first,
                   int32_t stride, uint8_t enAtomic, int32_t mLen, int32_t nLen, const std::vector<float>& tile) const {
    using namespace amct_sim::detail;
    if (enAtomic > 1) MatmulFail(api, Fmt("enAtomic %u: only 0 and 1 (add) are emulated", enAtomic));
    const uint64_t es = sizeof(DstT);
    const uint64_t lastEnd = first + static_cast<uint64_t>(mLen - 1) * stride + nLen;
    Opnd d = MakeOpnd(dst, lastEnd * es, "co2Local");
    CheckOpnd(c, api, d);
    const uint32_t seq = BeginOp(c, kPipeMte2);
    UbWrite(c, kPipeMte2, seq, d.off + static_cast<uint32_t>(first * es), static_cast<uint32_t>((lastEnd - first) * es),
            api);
    if (c->cost != nullptr) {
      const double out = c->cost->CubeFixOut(static_cast<uint64_t>(mLen) * nLen * es, Share(c));
      c->cost->CrossCoreWait(out);  // the synchronous call returns when the tile is in UB
    }
    if (MatmulCostOnly(c)) return;
    for (int32_t i = 0; i < mLen; ++i) {
      uint8_t* row = d.ptr + (first + static_cast<uint64_t>(i) * stride) * es;
      for (int32_t j = 0; j < nLen; ++j) {
        float v = tile[static_cast<size_t>(i) * nLen + j];
        if (enAtomic == 1) {
          DstT old;
          std::memcpy(&old, row + j * es, es);
          v = CubeToFloat(old) + v;
        }
        const DstT o = static_cast<DstT>(v);
        std::memcpy(row + j * es, &o, es);
      }
    }
  }

  amct_sim::detail::MatmulState s_;
};

// matmul_intf.h: Matmul is MatmulImpl, driven by the AIC (ASCENDC_CUBE_ONLY) or by the AIVs (KFC).
template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<nullptr, nullptr, nullptr>,
          template <const auto& = MM_CFG, typename...> class MATMUL_POLICY = Impl::Detail::MatmulPolicy>
using Matmul = MatmulImpl<A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE, MM_CFG, MM_CB, MATMUL_POLICY,
                          amct_sim::detail::kMatmulClientForm>;

// REGIST_MATMUL_OBJ(tpipe, workspace, mm1, &tiling1, mm2, &tiling2, ...) (kfc_register_obj.h, the
// ASCENDC_CUBE_ONLY form): SetSubBlockIdx(0) and Init(tiling, tpipe) for each object.
inline void InitCurObj(TPipe* tpipe) { (void)tpipe; }
template <class T, class... Args>
inline void InitCurObj(TPipe* tpipe, T& mm, const TCubeTiling* tiling, Args&&... rest) {
  mm.SetSubBlockIdx(0);
  mm.Init(tiling, tpipe);
  InitCurObj(tpipe, rest...);
}

}  // namespace AscendC

namespace matmul = AscendC;

#ifdef ASCENDC_CUBE_ONLY
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...) \
  do {                                           \
    (void)(workspace);                           \
    AscendC::InitCurObj(tpipe, __VA_ARGS__);     \
  } while (0)
#else
// KFC form (kfc_register_obj.h): the AIC serves its AIVs' requests and returns from the kernel; the
// AIVs initialise their objects. (The sim's AIVs compute their requests themselves.)
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...)  \
  (void)(workspace);                              \
  if (::amct_sim::detail::KfcServerReturns()) {   \
    return;                                       \
  }                                               \
  AscendC::InitCurObj(tpipe, __VA_ARGS__)
#endif
#define REGIST_CUBE_OBJ REGIST_MATMUL_OBJ
#define REGIST_MATMUL_OBJ_STATIC REGIST_MATMUL_OBJ
