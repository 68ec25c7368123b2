// Kernel-sim tests of the AIC's low-level cube data path (sim_cube.h): a MIX 1:2 kernel whose AIC
// runs its own program (DataCopy GM -> L1 with ND2NZ, LoadData L1 -> L0A/L0B, Mmad into L0C, Fixpipe
// L0C -> UB into both AIVs' UB) for a 64 x 256 x 2048 bf16 score tile, the AIVs receiving their halves
// by a cross-core flag; checked against brute-force fp32 sums in K order. Then one test per guard, and
// small chains (bf16 and half) for the parameters the score tile leaves at their plain values: LoadData
// start positions and strides, m / n tails and Fixpipe strides, ND2NZ with several ND matrices.
#include <algorithm>
#include <cmath>
#include <random>

#include "sim_test.h"

using namespace AscendC;
using simtest::Check;
using simtest::ExpectError;
using simtest::ExpectOk;

namespace {

// ---- helpers shared by the programs below ------------------------------------------------------------
// A MIX 1:2 launch of one block: aic() on the AIC, aiv() on each of its two AIVs (the kernel type declared
// as a real kernel declares it).
template <class Aic, class Aiv>
void LaunchCube(const char* kernel, Aic aic, Aiv aiv) {
  amct_sim::LaunchMix(kernel, 1, 2, [&] {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
      aic();
    }
    if ASCEND_IS_AIV {
      aiv();
    }
  });
}
template <class Aic>
void LaunchCube(const char* kernel, Aic aic) {
  LaunchCube(kernel, aic, [] {});
}

// The GlobalTensor of v's first n elements (all of them by default).
template <class T>
GlobalTensor<T> Gm(std::vector<T>& v, size_t n = 0) {
  GlobalTensor<T> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(v.data()), n == 0 ? v.size() : n);
  return g;
}

// The cube buffers of one AIC program: a TPipe and TBufs in TPosition::A1, ::B1, ::A2, ::B2 and ::CO1,
// initialised in that order from their byte sizes (a size of 0 leaves that buffer out), and their tensors.
// With pingPongL1 a second TPosition::A1 / ::B1 pair follows the first in L1, so that the next K slice's
// GM -> L1 copies need no flag against the previous slice's loads; UseL1 picks the pair a1 / b1 name.
template <class T>
struct CubeBuffers {
  TPipe pipe;
  TBuf<TPosition::A1> a1Buf[2];
  TBuf<TPosition::B1> b1Buf[2];
  TBuf<TPosition::A2> a2Buf;
  TBuf<TPosition::B2> b2Buf;
  TBuf<TPosition::CO1> co1Buf;
  LocalTensor<T> a1, b1, a2, b2;
  LocalTensor<float> c;
  CubeBuffers(uint32_t a1Bytes, uint32_t b1Bytes, uint32_t a2Bytes, uint32_t b2Bytes, uint32_t co1Bytes,
              bool pingPongL1 = false) {
    for (int i = 0; i < (pingPongL1 ? 2 : 1); ++i) {
      if (a1Bytes != 0) pipe.InitBuffer(a1Buf[i], a1Bytes);
      if (b1Bytes != 0) pipe.InitBuffer(b1Buf[i], b1Bytes);
    }
    if (a2Bytes != 0) pipe.InitBuffer(a2Buf, a2Bytes);
    if (b2Bytes != 0) pipe.InitBuffer(b2Buf, b2Bytes);
    if (co1Bytes != 0) pipe.InitBuffer(co1Buf, co1Bytes);
    if (a1Bytes != 0) a1 = a1Buf[0].template Get<T>();
    if (b1Bytes != 0) b1 = b1Buf[0].template Get<T>();
    if (a2Bytes != 0) a2 = a2Buf.template Get<T>();
    if (b2Bytes != 0) b2 = b2Buf.template Get<T>();
    if (co1Bytes != 0) c = co1Buf.template Get<float>();
  }
  void UseL1(int set) {
    a1 = a1Buf[set].template Get<T>();
    b1 = b1Buf[set].template Get<T>();
  }
};

// DataCopy(GM->L1, Nd2NzParams) p on the AIC from gmElems bf16 ones in GM into an L1 buffer of l1Bytes
// (the ND2NZ parameter guards).
void Nd2NzOnAic(size_t gmElems, uint32_t l1Bytes, const Nd2NzParams& p) {
  std::vector<bfloat16_t> a(gmElems, bfloat16_t(1.0f));
  amct_sim::GmScope scope{{a.data(), a.size() * sizeof(bfloat16_t), false}};
  LaunchCube("cube_nd2nz", [&] {
    CubeBuffers<bfloat16_t> cb(l1Bytes, 0, 0, 0, 0);
    DataCopy(cb.a1, Gm(a), p);
  });
}

// ---- cube buffer capacities (both arches) ----------------------------------------------------------
void CapacityTests() {
  ExpectError("cube_guard_l0a_over_capacity", {"TPipe::InitBuffer(TBuf)", "L0A", "over the L0A capacity of 65536"}, [] {
    amct_sim::GmScope scope{};
    LaunchCube("cube_cap", [] { CubeBuffers<bfloat16_t> cb(0, 0, 64 * 1024 + 32, 0, 0); });
  });
  ExpectOk("cube_l0a_full_capacity_ok", [] {
    amct_sim::GmScope scope{};
    LaunchCube("cube_cap", [] { CubeBuffers<bfloat16_t> cb(0, 0, 64 * 1024, 64 * 1024, 0); });
  });
  // TPosition::A1 and ::B1 share the L1 (512 KB on both arches).
  ExpectError("cube_guard_l1_shared_over_capacity", {"L1", "over the L1 capacity of 524288"}, [] {
    amct_sim::GmScope scope{};
    LaunchCube("cube_cap", [] {
      TPipe pipe;
      TQue<TPosition::A1, 1> a1;
      TQue<TPosition::B1, 1> b1;
      pipe.InitBuffer(a1, 1, 300 * 1024);
      pipe.InitBuffer(b1, 1, 300 * 1024);
    });
  });
  // L0C: 256 KB on dav-3510, 128 KB on dav-2201.
  auto l0c = [] {
    amct_sim::GmScope scope{};
    LaunchCube("cube_cap", [] { CubeBuffers<bfloat16_t> cb(0, 0, 0, 0, 192 * 1024); });
  };
  if (__NPU_ARCH__ == 3510) {
    ExpectOk("cube_l0c_capacity_per_arch", l0c);
  } else {
    ExpectError("cube_l0c_capacity_per_arch", {"over the L0C capacity of 131072"}, l0c);
  }
  ExpectError("cube_guard_cube_position_on_aiv", {"TPosition::A1 is a buffer of the AIC"}, [] {
    amct_sim::GmScope scope{};
    LaunchCube("cube_aiv", [] {}, [] { CubeBuffers<bfloat16_t> cb(1024, 0, 0, 0, 0); });
  });
  ExpectError("cube_guard_cube_position_in_vector_launch", {"TPosition::CO1 is a buffer of the AIC"}, [] {
    amct_sim::GmScope scope{};
    simtest::Run1([] { CubeBuffers<bfloat16_t> cb(0, 0, 0, 0, 1024); });
  });
  ExpectError("cube_guard_nd2nz_src_d_value", {"DataCopy(GM->L1, Nd2NzParams)", "srcDValue 16 < dValue 32"},
              [] { Nd2NzOnAic(1024, 4096, Nd2NzParams(1, 16, 32, 0, 16, 16, 1, 0)); });
  ExpectError("cube_guard_nd2nz_on_aiv", {"DataCopy(GM->L1, Nd2NzParams)", "emulated on the AIC of a MIX launch only"}, [] {
    std::vector<bfloat16_t> a(1024, bfloat16_t(1.0f));
    amct_sim::GmScope scope{{a.data(), a.size() * 2, false}};
    simtest::Run1([&] {
      LocalTensor<bfloat16_t> t;
      DataCopy(t, Gm(a), Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0));
    });
  });
  ExpectError("cube_guard_cube_event_on_aiv", {"SetFlag", "HardEvent::MTE2_MTE1 orders the AIC's cube pipes"}, [] {
    amct_sim::GmScope scope{};
    simtest::Run1([] { SetFlag<HardEvent::MTE2_MTE1>(0); });
  });
}

#if __NPU_ARCH__ == 3510
// ---- stages shared by the AIC programs (dav-3510: Fixpipe L0C -> UB) --------------------------------
constexpr uint16_t kFlag = 3;
constexpr FixpipeConfig kRowMajorUb = {CO2Layout::ROW_MAJOR, true};

// SetFlag and WaitFlag at once: the second pipe of E waits here for all the first pipe has issued so far.
template <HardEvent E>
void SetWait(event_t id) {
  SetFlag<E>(id);
  WaitFlag<E>(id);
}

// One ND matrix [rows, cols] (GM rows ld elements apart) to L1 in Z columns of c0Stride rows.
Nd2NzParams OneNd(int rows, int cols, int ld, int c0Stride) {
  return Nd2NzParams(1, rows, cols, 0, ld, c0Stride, 1, 0);
}

// A whole L1 matrix of rowFrac x kFrac fractals (Z columns of rowFrac fractals) to L0 in the same layout.
LoadData2DParamsV2 WholeL0(int rowFrac, int kFrac) {
  return LoadData2DParamsV2(0, 0, rowFrac, kFrac, rowFrac, rowFrac, false, 0);
}

// Fixpipe parameters for an m x n tile in Z columns of m rows, to both AIVs (m / 2 rows each, pitch n).
FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> DualFix(int m, int n) {
  FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp(n, m, m, n);
  fp.dualDstCtl = 1;
  return fp;
}

// GM -> L1 of A and B (ND2NZ), then the MTE2 -> MTE1 flag the loads from L1 need; mte2Mte1 = false leaves
// it out (the guard test of the missing flag).
template <class T>
void CopyToL1(CubeBuffers<T>& cb, const GlobalTensor<T>& ga, const Nd2NzParams& pa, const GlobalTensor<T>& gb,
              const Nd2NzParams& pb, event_t id, bool mte2Mte1 = true) {
  DataCopy(cb.a1, ga, pa);
  DataCopy(cb.b1, gb, pb);
  if (mte2Mte1) SetWait<HardEvent::MTE2_MTE1>(id);
}

// L1 -> L0A (Nz) and L0B (Zn: B's rows need no transpose), then the MTE1 -> M flag the Mmad needs.
template <class T>
void LoadToL0(CubeBuffers<T>& cb, const LoadData2DParamsV2& la, const LoadData2DParamsV2& lb, event_t id) {
  LoadData(cb.a2, cb.a1, la);
  LoadData(cb.b2, cb.b1, lb);
  SetWait<HardEvent::MTE1_M>(id);
}

// The M -> FIX flag (mFix = false leaves it out: the guard test of the missing flag, or a chain whose
// TQue<TPosition::CO1> edge orders M -> FIX instead), Fixpipe src -> the
// AIVs' UB at offset 0 (a view of ubElems floats in ubPos), then the cross-core flag that hands the rows to
// the AIVs.
template <const FixpipeConfig& config = kRowMajorUb>
void FixpipeToAivs(const LocalTensor<float>& src, const FixpipeParamsArch3510<CO2Layout::ROW_MAJOR>& fp, int ubElems,
                   event_t id, bool mFix = true, TPosition ubPos = TPosition::VECOUT) {
  if (mFix) SetWait<HardEvent::M_FIX>(id);
  Fixpipe<float, float, config>(LocalTensor<float>(ubPos, 0, ubElems), src, fp);
  CrossCoreSetFlag<2, PIPE_FIX>(kFlag);
}

// The GM regions of a test's a, b (read) and out (written), and the MIX launch of aic() and aiv() on them.
template <class D, class Aic, class Aiv>
void RunCube(const char* kernel, D& d, Aic aic, Aiv aiv) {
  amct_sim::GmScope scope{{d.a.data(), d.a.size() * sizeof(d.a[0]), false},
                          {d.b.data(), d.b.size() * sizeof(d.b[0]), false},
                          {d.out.data(), d.out.size() * sizeof(float), true}};
  LaunchCube(kernel, aic, aiv);
}

// What the AIVs receive from one Fixpipe: AIV s gets rows[s] ND rows of nSize floats at a pitch of dstStride
// elements at UB offset 0, L0C rows row0[s]..; it copies row i to out[(row0[s] + i) * ldo]: row by row, so
// that the UB gaps between the rows, which nothing wrote, are not read, or in one DataCopy where the rows
// are contiguous in UB and in out (dstStride = nSize = ldo).
struct UbRows {
  int rows[2];
  int row0[2];
  int nSize;
  int dstStride;
};

// The m x n tile of DualFix(m, n): m / 2 contiguous rows of n floats to each AIV.
UbRows Halves(int m, int n) { return UbRows{{m / 2, m / 2}, {0, m / 2}, n, n}; }

void UbRowsAiv(std::vector<float>& out, int ldo, const UbRows& u) {
  const int sub = static_cast<int>(GetSubBlockIdx());
  TPipe pipe;
  TQue<TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 1, std::max(u.rows[sub], 1) * u.dstStride * sizeof(float));
  GlobalTensor<float> gout = Gm(out);
  LocalTensor<float> y = q.AllocTensor<float>();
  CrossCoreWaitFlag(kFlag);  // the AIC's Fixpipe wrote y's bytes: they go straight out
  q.EnQue(y);
  y = q.DeQue<float>();
  if (u.dstStride == u.nSize && ldo == u.nSize) {
    DataCopy(gout[u.row0[sub] * ldo], y, u.rows[sub] * u.nSize);
  } else {
    for (int i = 0; i < u.rows[sub]; ++i) DataCopy(gout[(u.row0[sub] + i) * ldo], y[i * u.dstStride], u.nSize);
  }
  q.FreeTensor(y);
}

// acc = fp32(acc + a(kk) * b(kk)) for kk = 0..k-1 from +0.
template <class FA, class FB>
float DotInKOrder(FA a, FB b, int k) {
  float acc = 0.0f;
  for (int kk = 0; kk < k; ++kk) acc = acc + a(kk) * b(kk);
  return acc;
}
// When both rows are integer-valued, their double sum (fp32 must then be exact, whatever the order).
template <class FA, class FB>
bool ExactIfIntegers(FA a, FB b, int k, double* e) {
  double s = 0;
  for (int kk = 0; kk < k; ++kk) {
    if (a(kk) != std::trunc(a(kk)) || b(kk) != std::trunc(b(kk))) return false;
    s += double(a(kk)) * double(b(kk));
  }
  *e = s;
  return true;
}

// The brute force: out [.., ldo] (what the AIVs copied; -7 where nothing arrived) on rows [r0, r1), columns
// [0, cols) against acc = fp32(acc + a(i)(kk) * b(j)(kk)) for kk = 0..k-1 from +0, a(i) and b(j) the
// accessors kk -> float of the product's row i of A and row j of B (C = A * B^T), computed from GM, never
// from the sim's layouts. Where both rows are integer-valued the value must also be their double sum (fp32
// must then be exact, whatever the order); needIntegerPairs: there must be some such pairs.
template <class RowA, class RowB>
bool ProductMatches(const std::vector<float>& out, int ldo, int r0, int r1, int cols, int k, RowA a, RowB b,
                    bool needIntegerPairs) {
  int exactPairs = 0;
  for (int i = r0; i < r1; ++i) {
    for (int j = 0; j < cols; ++j) {
      const float w = DotInKOrder(a(i), b(j), k), got = out[static_cast<size_t>(i) * ldo + j];
      double e = 0;
      const bool isExact = ExactIfIntegers(a(i), b(j), k, &e);
      exactPairs += isExact;
      if (simtest::FloatBits(w) != simtest::FloatBits(got) || (isExact && double(got) != e)) {
        std::printf("  mismatch at (%d, %d): sim %.9g, brute force %.9g (exact %.9g)\n", i, j, got, w, e);
        return false;
      }
    }
  }
  if (needIntegerPairs && exactPairs == 0) std::printf("  no integer-row pairs among the compared values\n");
  return exactPairs > 0 || !needIntegerPairs;
}

// Row accessors of a row-major matrix m (rows ld elements apart, from element at(i) of m for row i).
template <class T, class At>
auto Rows(const std::vector<T>& m, At at) {
  return [&m, at](int i) { return [&m, base = at(i)](int kk) { return static_cast<float>(m[base + kk]); }; };
}
template <class T>
auto Rows(const std::vector<T>& m, int ld) {
  return Rows(m, [ld](int i) { return static_cast<size_t>(i) * ld; });
}

// ---- the 64 x 256 x 2048 score tile ------------------------------------------------------------------
constexpr int kM = 64, kN = 256, kK = 2048, kBaseK = 64;
constexpr int kLda = kK + 64, kLdb = kK + 32;  // A's and B's rows sit at a stride
constexpr int kIntRowsA = 8, kIntRowsB = 32;   // small-integer rows: their dot products are exact sums

struct Data {
  std::vector<bfloat16_t> a, b;  // a [kM, kLda], b [kN, kLdb] (B as rows: C = A * B^T)
  std::vector<float> out = std::vector<float>(kM * kN, -7.0f);
  explicit Data(unsigned seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::uniform_int_distribution<int> small(-8, 8);
    for (int i = 0; i < kM * kLda; ++i) a.push_back(bfloat16_t((i / kLda) < kIntRowsA ? float(small(g)) : u(g)));
    for (int i = 0; i < kN * kLdb; ++i) b.push_back(bfloat16_t((i / kLdb) < kIntRowsB ? float(small(g)) : u(g)));
  }
  // out's rows [rowLo, rowHi) against the brute force.
  bool Matches(int rowLo, int rowHi) const {
    return ProductMatches(out, kN, rowLo, rowHi, kN, kK, Rows(a, kLda), Rows(b, kLdb), false);
  }
  // The small-integer block, whose values are exact sums.
  bool IntegerBlockExact() const {
    return ProductMatches(out, kN, 0, kIntRowsA, kIntRowsB, kK, Rows(a, kLda), Rows(b, kLdb), true);
  }
};

enum class Variant {
  kDual,
  kSingleSub1,
  kNoMte2Mte1,
  kNoMFix,
  kNoMMte2,
  kOddM,
  kNSize24,
  kNotToUb,
  kLoadToL1,
  kAivReadsEarly,
  kAivNeverWaits,
  kSmallAivBuffer,
};

bool Single(Variant v) { return v == Variant::kSingleSub1; }

void AicProgram(Data& d, Variant v) {
  constexpr uint32_t aBytes = kM * kBaseK * sizeof(bfloat16_t), bBytes = kN * kBaseK * sizeof(bfloat16_t);
  CubeBuffers<bfloat16_t> cb(aBytes, bBytes, aBytes, bBytes, kM * kN * sizeof(float));
  GlobalTensor<bfloat16_t> ga = Gm(d.a), gb = Gm(d.b);
  const LoadData2DParamsV2 la = WholeL0(kM / 16, kBaseK / 16), lb = WholeL0(kN / 16, kBaseK / 16);
  for (int kc = 0; kc < kK / kBaseK; ++kc) {
    // GM -> L1: a [kM, kBaseK] slice of A and a [kN, kBaseK] slice of B, ND -> NZ (Z columns of 16).
    CopyToL1(cb, ga[kc * kBaseK], OneNd(kM, kBaseK, kLda, kM), gb[kc * kBaseK], OneNd(kN, kBaseK, kLdb, kN), EVENT_ID0,
             v != Variant::kNoMte2Mte1);
    if (v == Variant::kLoadToL1) {
      LoadData(cb.b1, cb.a1, la);  // dst in TPosition::B1: not an L0 position
    }
    LoadToL0(cb, la, lb, EVENT_ID0);
    // The first K slice starts from 0, the others accumulate.
    Mmad(cb.c, cb.a2, cb.b2, MmadParams(kM, kN, kBaseK, 0, false, kc == 0));
    if (v != Variant::kNoMMte2) {  // the next slice's loads may overwrite L1 and (transitively) L0
      SetWait<HardEvent::M_MTE2>(EVENT_ID0);
    }
  }
  FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp(v == Variant::kNSize24 ? 24 : kN, v == Variant::kOddM ? kM - 1 : kM,
                                                  kM, kN);
  fp.dualDstCtl = Single(v) ? 0 : 1;
  fp.subBlockId = Single(v);
  const int ubElems = (Single(v) ? kM : kM / 2) * kN;  // the AIVs' UB at offset 0
  if (v == Variant::kNotToUb) {
    FixpipeToAivs<CFG_ROW_MAJOR>(cb.c, fp, ubElems, EVENT_ID0, true, TPosition::VECIN);
  } else {
    FixpipeToAivs(cb.c, fp, ubElems, EVENT_ID0, v != Variant::kNoMFix, TPosition::VECIN);
  }
}

// Each AIV: its rows of the tile (from its UB at offset 0) times 1.0 by the vector unit, to GM.
void AivProgram(Data& d, Variant v) {
  const int sub = static_cast<int>(GetSubBlockIdx());
  const int rows = Single(v) ? kM : kM / 2;
  const int row0 = Single(v) ? 0 : sub * rows;
  TPipe pipe;
  TBuf<TPosition::VECIN> inBuf;
  TQue<TPosition::VECOUT, 1> outQ;
  pipe.InitBuffer(inBuf, v == Variant::kSmallAivBuffer ? 1024 : rows * kN * sizeof(float));
  pipe.InitBuffer(outQ, 1, v == Variant::kSmallAivBuffer ? 1024 : rows * kN * sizeof(float));
  GlobalTensor<float> gout = Gm(d.out);
  LocalTensor<float> scores = inBuf.Get<float>();
  LocalTensor<float> y = outQ.AllocTensor<float>();
  if (v == Variant::kAivReadsEarly) Muls(y, scores, 1.0f, 64);  // before the flag: races the Fixpipe
  if (v != Variant::kAivNeverWaits) CrossCoreWaitFlag(kFlag);
  if (Single(v) && sub == 0) {  // single destination: nothing for sub block 0
    outQ.FreeTensor(y);
    return;
  }
  Muls(y, scores, 1.0f, rows * kN);
  outQ.EnQue(y);
  y = outQ.DeQue<float>();
  DataCopy(gout[row0 * kN], y, rows * kN);
  outQ.FreeTensor(y);
}

void Run(Data& d, Variant v) {
  RunCube("cube_scores", d, [&] { AicProgram(d, v); }, [&] { AivProgram(d, v); });
}

void ChainTests() {
  {
    Data d(11);
    ExpectOk("cube_dual_dst_64x256x2048_runs", [&] { Run(d, Variant::kDual); });
    Check("cube_dual_dst_aiv0_rows_bitexact_vs_bruteforce", d.Matches(0, kM / 2));
    Check("cube_dual_dst_aiv1_rows_bitexact_vs_bruteforce", d.Matches(kM / 2, kM));
    Check("cube_dual_dst_integer_block_exact", d.IntegerBlockExact());
  }
  {
    Data d(12);
    ExpectOk("cube_single_dst_sub1_runs", [&] { Run(d, Variant::kSingleSub1); });
    Check("cube_single_dst_sub1_all_rows_bitexact_vs_bruteforce", d.Matches(0, kM));
  }
  const struct {
    const char* name;
    Variant v;
    std::initializer_list<const char*> needles;
  } guards[] = {
      {"cube_guard_read_without_mte2_mte1", Variant::kNoMte2Mte1,
       {"LoadData", "pipe MTE1 reads L1", "written by MTE2", "HardEvent::MTE2_MTE1"}},
      {"cube_guard_fixpipe_without_m_fix", Variant::kNoMFix, {"Fixpipe(L0C->UB)", "pipe FIX reads L0C", "HardEvent::M_FIX"}},
      {"cube_guard_overwrite_without_mte1_mte2", Variant::kNoMMte2,
       {"DataCopy(GM->L1, Nd2NzParams)", "pipe MTE2 writes L1", "read by MTE1", "HardEvent::MTE1_MTE2"}},
      {"cube_guard_odd_m_dual_dst", Variant::kOddM, {"Fixpipe(L0C->UB)", "mSize 63 must be even"}},
      {"cube_guard_nsize_not_multiple_of_16", Variant::kNSize24, {"Fixpipe(L0C->UB)", "nSize 24 must be a multiple of 16"}},
      {"cube_guard_config_not_to_ub", Variant::kNotToUb, {"config.isToUB is false"}},
      {"cube_guard_load_data_wrong_position", Variant::kLoadToL1,
       {"LoadData", "dst must be a TQue/TBuf tensor in TPosition::A2/B2, not TPosition::B1"}},
      {"cube_guard_aiv_reads_before_wait", Variant::kAivReadsEarly,
       {"CrossCoreWaitFlag", "sync: this AIV accessed UB bytes [0, 32)", "not ordered"}},
      {"cube_guard_aiv_never_waits", Variant::kAivNeverWaits,
       {"Fixpipe L0C -> UB write(s) of the AIC to AIV 0", "were never received"}},
      {"cube_guard_delivery_beyond_aiv_buffers", Variant::kSmallAivBuffer,
       {"CrossCoreWaitFlag", "beyond its TPipe allocations"}},
  };
  for (const auto& g : guards) {
    Data d(13);
    ExpectError(g.name, g.needles, [&] { Run(d, g.v); });
  }
  ExpectError("cube_guard_aiv_calls_mmad", {"Mmad", "emulated on the AIC of a MIX launch only"}, [] {
    amct_sim::GmScope scope{};
    LaunchCube("cube_aiv", [] {}, [] {
      LocalTensor<float> c;
      LocalTensor<bfloat16_t> a, b;
      MmadParams p;
      Mmad(c, a, b, p);
    });
  });
  ExpectError("cube_guard_ub_view_on_aiv", {"LocalTensor(TPosition, addr, tileSize)", "only on the AIC"}, [] {
    amct_sim::GmScope scope{};
    LaunchCube("cube_aiv", [] {}, [] {
      LocalTensor<float> t(TPosition::VECIN, 0, 64);
      (void)t;
    });
  });
  ExpectOk("cube_sync_check_off_lets_missing_flag_pass", [] {
    Data d(14);
    setenv("AMCT_SIM_CHECK_SYNC", "0", 1);
    try {
      Run(d, Variant::kNoMte2Mte1);
    } catch (...) {
      unsetenv("AMCT_SIM_CHECK_SYNC");
      throw;
    }
    unsetenv("AMCT_SIM_CHECK_SYNC");
  });
}

// ---- the same chain ordered by the cube TQue edges instead of flags (32 x 32 x 128, two K slices) ----
constexpr int kQm = 32, kQn = 32, kQk = 128, kQbaseK = 64;

struct SmallData {
  std::vector<bfloat16_t> a, b;  // a [kQm, kQk], b [kQn, kQk]
  std::vector<float> out = std::vector<float>(kQm * kQn, -7.0f);
  SmallData() {
    std::mt19937 g(21);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (int i = 0; i < kQm * kQk; ++i) a.push_back(bfloat16_t(u(g)));
    for (int i = 0; i < kQn * kQk; ++i) b.push_back(bfloat16_t(u(g)));
  }
  bool Matches() const { return ProductMatches(out, kQn, 0, kQm, kQn, kQk, Rows(a, kQk), Rows(b, kQk), false); }
};

void QueueAic(SmallData& d, bool edgesL1) {
  TPipe pipe;
  TQue<TPosition::A1, 1> qa1;
  TQue<TPosition::B1, 1> qb1;
  TQue<TPosition::A2, 1> qa2;
  TQue<TPosition::B2, 1> qb2;
  TQue<TPosition::CO1, 1> qc;
  pipe.InitBuffer(qa1, 1, kQm * kQbaseK * 2);
  pipe.InitBuffer(qb1, 1, kQn * kQbaseK * 2);
  pipe.InitBuffer(qa2, 1, kQm * kQbaseK * 2);
  pipe.InitBuffer(qb2, 1, kQn * kQbaseK * 2);
  pipe.InitBuffer(qc, 1, kQm * kQn * 4);
  GlobalTensor<bfloat16_t> ga = Gm(d.a), gb = Gm(d.b);
  LocalTensor<float> c = qc.AllocTensor<float>();
  for (int kc = 0; kc < kQk / kQbaseK; ++kc) {
    LocalTensor<bfloat16_t> a1 = qa1.AllocTensor<bfloat16_t>(), b1 = qb1.AllocTensor<bfloat16_t>();
    DataCopy(a1, ga[kc * kQbaseK], OneNd(kQm, kQbaseK, kQk, kQm));
    DataCopy(b1, gb[kc * kQbaseK], OneNd(kQn, kQbaseK, kQk, kQn));
    if (edgesL1) {
      qa1.EnQue(a1);
      qb1.EnQue(b1);
      a1 = qa1.DeQue<bfloat16_t>();
      b1 = qb1.DeQue<bfloat16_t>();
    }
    LocalTensor<bfloat16_t> a2 = qa2.AllocTensor<bfloat16_t>(), b2 = qb2.AllocTensor<bfloat16_t>();
    LoadData(a2, a1, WholeL0(kQm / 16, kQbaseK / 16));
    LoadData(b2, b1, WholeL0(kQn / 16, kQbaseK / 16));
    qa1.FreeTensor(a1);
    qb1.FreeTensor(b1);
    qa2.EnQue(a2);
    qb2.EnQue(b2);
    a2 = qa2.DeQue<bfloat16_t>();
    b2 = qb2.DeQue<bfloat16_t>();
    Mmad(c, a2, b2, MmadParams(kQm, kQn, kQbaseK, 0, false, kc == 0));
    qa2.FreeTensor(a2);
    qb2.FreeTensor(b2);
  }
  qc.EnQue(c);
  c = qc.DeQue<float>();
  FixpipeToAivs(c, DualFix(kQm, kQn), kQm / 2 * kQn, EVENT_ID0, false);  // the CO1 queue's edge orders M -> FIX
  qc.FreeTensor(c);
}

void QueueTests() {
  auto run = [](SmallData& d, bool edges) {
    RunCube("cube_queues", d, [&] { QueueAic(d, edges); }, [&] { UbRowsAiv(d.out, kQn, Halves(kQm, kQn)); });
  };
  SmallData d;
  ExpectOk("cube_tque_edges_order_the_chain", [&] { run(d, true); });
  Check("cube_tque_edges_values_bitexact_vs_bruteforce", d.Matches());
  SmallData e;
  ExpectError("cube_guard_tque_without_l1_edge", {"LoadData", "HardEvent::MTE2_MTE1", "TQue<TPosition::A1/::B1>"}, [&] { run(e, false); });
}

// Two 16 x 16 Mmads back to back on the same L0C, the second accumulating: small ((m / 16) * (n / 16)
// = 1 < 10), so Mmad.md asks for PipeBarrier<PIPE_M> between them (nothing else orders them here).
void BackToBackMmads(bool mBarrier) {
  amct_sim::GmScope scope{};
  LaunchCube("cube_back_to_back", [&] {
    CubeBuffers<bfloat16_t> cb(0, 0, 512, 512, 1024);
    Mmad(cb.c, cb.a2, cb.b2, MmadParams(16, 16, 16, 0, false, true));
    if (mBarrier) PipeBarrier<PIPE_M>();
    Mmad(cb.c, cb.a2, cb.b2, MmadParams(16, 16, 16, 0, false, false));
  });
}

// ---- Mmad with m, n or k = 0 is a NOP (Mmad.md); ND2NZ refuses a matrix stride the hardware truncates ----
void NopAndStrideTests() {
  ExpectError("cube_guard_small_accumulation_without_pipe_m_barrier",
              {"Mmad", "(m / 16) * (n / 16) < 10", "without PipeBarrier<PIPE_M>"}, [] { BackToBackMmads(false); });
  ExpectOk("cube_small_accumulation_after_pipe_m_barrier", [] { BackToBackMmads(true); });
  ExpectOk("cube_mmad_zero_k_is_not_refused", [&] {
    amct_sim::GmScope scope{};
    LaunchCube("cube_nop", [] {
      CubeBuffers<bfloat16_t> cb(0, 0, 512, 512, 1024);
      Mmad(cb.c, cb.a2, cb.b2, MmadParams(16, 16, 0, 0, false, true));
    });
  });
  ExpectError("cube_guard_nd2nz_matrix_stride_not_32_bytes", {"dstNzMatrixStride 8 elements", "not emulated"},
              [] { Nd2NzOnAic(4096, 16384, Nd2NzParams(2, 16, 32, 1024, 32, 16, 1, 8)); });
}

// ---- ND2NZ's zero padding: K = 40 fills 3 Z columns of 16; an Mmad over k = 48 sees zeros there ----
void PaddingTest() {
  constexpr int m = 32, n = 32, k = 40, k16 = 48;
  SmallData d;  // uses its first m x k and n x k elements as A [m, 40] and B [n, 40] (row stride 40)
  auto aic = [&] {
    CubeBuffers<bfloat16_t> cb(m * k16 * 2, n * k16 * 2, m * k16 * 2, n * k16 * 2, m * n * 4);
    CopyToL1(cb, Gm(d.a, m * k), OneNd(m, k, k, m), Gm(d.b, n * k), OneNd(n, k, k, n), EVENT_ID1);
    LoadToL0(cb, WholeL0(m / 16, k16 / 16), WholeL0(n / 16, k16 / 16), EVENT_ID1);
    Mmad(cb.c, cb.a2, cb.b2, MmadParams(m, n, k16, 0, false, true));
    FixpipeToAivs(cb.c, DualFix(m, n), m / 2 * n, EVENT_ID1);
  };
  bool ok = true;
  try {
    RunCube("cube_pad", d, aic, [&] { UbRowsAiv(d.out, n, Halves(m, n)); });
  } catch (const std::exception& e) {
    ok = false;
    std::printf("  %s\n", e.what());
  }
  Check("cube_nd2nz_pads_rows_with_zeros",
        ok && ProductMatches(d.out, n, 0, m, n, k, Rows(d.a, k), Rows(d.b, k), false));
}

// ---- write-after-read guards of L0A/L0B (M_MTE1) and L0C (FIX_M), each with its passing twin ----
// Two K slices through ping-pong L1 buffers (so that MTE2 needs no edge) and one L0A/L0B pair; then,
// for the L0C case, a second tile's Mmad over the L0C the Fixpipe read.
void WarKernel(SmallData& d, bool mMte1, bool fixM) {
  CubeBuffers<bfloat16_t> cb(kQm * kQbaseK * 2, kQn * kQbaseK * 2, kQm * kQbaseK * 2, kQn * kQbaseK * 2, kQm * kQn * 4,
                             true);
  GlobalTensor<bfloat16_t> ga = Gm(d.a), gb = Gm(d.b);
  for (int kc = 0; kc < 2; ++kc) {
    cb.UseL1(kc);
    CopyToL1(cb, ga[kc * kQbaseK], OneNd(kQm, kQbaseK, kQk, kQm), gb[kc * kQbaseK], OneNd(kQn, kQbaseK, kQk, kQn),
             EVENT_ID2);
    LoadToL0(cb, WholeL0(kQm / 16, kQbaseK / 16), WholeL0(kQn / 16, kQbaseK / 16), EVENT_ID2);
    Mmad(cb.c, cb.a2, cb.b2, MmadParams(kQm, kQn, kQbaseK, 0, false, kc == 0));
    if (mMte1) {  // the next slice's LoadData overwrites what this Mmad read
      SetWait<HardEvent::M_MTE1>(EVENT_ID2);
    }
  }
  FixpipeToAivs(cb.c, DualFix(kQm, kQn), kQm / 2 * kQn, EVENT_ID2);
  if (fixM) {  // the next tile's Mmad overwrites what the Fixpipe read
    SetWait<HardEvent::FIX_M>(EVENT_ID2);
  }
  Mmad(cb.c, cb.a2, cb.b2, MmadParams(kQm, kQn, kQbaseK, 0, false, true));
}

void WarTests() {
  auto run = [](SmallData& d, bool mMte1, bool fixM) {
    RunCube("cube_war", d, [&] { WarKernel(d, mMte1, fixM); }, [&] { UbRowsAiv(d.out, kQn, Halves(kQm, kQn)); });
  };
  {
    SmallData d;
    ExpectOk("cube_war_with_m_mte1_and_fix_m", [&] { run(d, true, true); });
    Check("cube_war_ping_pong_l1_values_bitexact_vs_bruteforce", d.Matches());
  }
  SmallData e, f;
  ExpectError("cube_guard_l0_overwrite_without_m_mte1", {"LoadData", "pipe MTE1 writes L0A", "read by M", "HardEvent::M_MTE1"},
              [&] { run(e, false, true); });
  ExpectError("cube_guard_l0c_overwrite_without_fix_m", {"Mmad", "pipe M writes L0C", "read by FIX", "HardEvent::FIX_M"},
              [&] { run(f, true, false); });
}

// ---- sub-blocks, tails and strides -----------------------------------------------------------------
// Each program below moves T (bf16 or half) data GM -> L1 -> L0A/L0B -> Mmad -> Fixpipe -> the AIVs' UB ->
// GM, and the result is compared bit-exactly against the plain product of the sub-blocks the parameters
// select, per the docs' meaning of each field (ProductMatches, with row accessors that follow those
// meanings). A third of the rows are small integers (their dot products are exact in any order).
// The checks p_runs (run() raises nothing) and p_bitexact_vs_bruteforce (d.Matches() after it).
template <class D, class R>
void RunsAndMatches(const std::string& p, D& d, R run) {
  ExpectOk(p + "_runs", run);
  Check(p + "_bitexact_vs_bruteforce", d.Matches());
}

template <class T>
std::vector<T> TestMatrix(int rows, int cols, unsigned seed) {  // row-major; rows r % 3 == 0 are integers
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(-8, 8);
  std::vector<T> m;
  for (int i = 0; i < rows * cols; ++i) m.push_back(T((i / cols) % 3 == 0 ? float(small(g)) : u(g)));
  return m;
}

// ---- 1. LoadData2DParamsV2 start positions and strides: sub-blocks of larger L1 matrices ----
// A [64, 96] and B [48, 96] (GM row stride 104) go whole to L1 (ND2NZ, Z columns of 64 and 48 rows: 4 and 3
// row fractals). LoadData_2D_V2.md: fractal (mStartPosition + mi, kStartPosition + ki) of the source, in
// units of 16 rows and 32 B (16 b16 elements), sits at fractal (kStart + ki) * srcStride + mStart + mi; it
// goes to dst fractal ki * dstStride + mi. Selected: k = 32..79 (kStartPosition 2, kStep 3) of both;
// L0A rows 0..31 = A rows 32..63 (mStart 2), rows 32..63 = A rows 16..47 (mStart 1, the second call at
// L0A fractal 2), each call mStep 2 with srcStride 4 and dstStride 4 (L0A's Nz: mFrac 4 row fractals per
// K column); L0B columns 0..15 = B rows 32..47, 16..31 = B rows 0..15, each mStep 1, srcStride 3, dstStride 2
// (L0B's Zn: nFrac 2 per K row). Mmad 64 x 32 x 48.
constexpr int kSbRowsA = 64, kSbRowsB = 48, kSbK = 96, kSbLd = 104, kSbM = 64, kSbN = 32, kSbKSel = 48, kSbK0 = 32;
int SbARow(int i) { return i < 32 ? 32 + i : 16 + (i - 32); }
int SbBRow(int j) { return j < 16 ? 32 + j : j - 16; }

enum class SbBad { kNone, kKStartBeyondSrc, kDstStrideBeyondL0a };

template <class T>
struct SbData {
  std::vector<T> a = TestMatrix<T>(kSbRowsA, kSbLd, 31), b = TestMatrix<T>(kSbRowsB, kSbLd, 32);
  std::vector<float> out = std::vector<float>(kSbM * kSbN, -7.0f);
  bool Matches() const {
    auto at = [](int (*row)(int)) { return [row](int i) { return static_cast<size_t>(row(i)) * kSbLd + kSbK0; }; };
    return ProductMatches(out, kSbN, 0, kSbM, kSbN, kSbKSel, Rows(a, at(SbARow)), Rows(b, at(SbBRow)), true);
  }
};

template <class T>
void SbAic(SbData<T>& d, SbBad bad) {
  CubeBuffers<T> cb(kSbRowsA * kSbK * sizeof(T), kSbRowsB * kSbK * sizeof(T), kSbM * kSbKSel * sizeof(T),
                    kSbN * kSbKSel * sizeof(T), kSbM * kSbN * sizeof(float));
  CopyToL1(cb, Gm(d.a), OneNd(kSbRowsA, kSbK, kSbLd, kSbRowsA), Gm(d.b), OneNd(kSbRowsB, kSbK, kSbLd, kSbRowsB),
           EVENT_ID0);
  // The negative twins: K fractals 5, 6 of A (it has 6: the read leaves the L1 tensor), or a dstStride of 5
  // whose last fractal lies past the end of L0A's view.
  const uint32_t kStart2 = bad == SbBad::kKStartBeyondSrc ? 5 : 2;
  const uint16_t dstStride2 = bad == SbBad::kDstStrideBeyondL0a ? 5 : kSbM / 16;
  LoadData(cb.a2, cb.a1, LoadData2DParamsV2(2, 2, 2, 3, kSbRowsA / 16, kSbM / 16, false, 0));
  LoadData(cb.a2[2 * 256], cb.a1, LoadData2DParamsV2(1, kStart2, 2, 3, kSbRowsA / 16, dstStride2, false, 0));
  LoadData(cb.b2, cb.b1, LoadData2DParamsV2(2, 2, 1, 3, kSbRowsB / 16, kSbN / 16, false, 0));
  LoadData(cb.b2[256], cb.b1, LoadData2DParamsV2(0, 2, 1, 3, kSbRowsB / 16, kSbN / 16, false, 0));
  SetWait<HardEvent::MTE1_M>(EVENT_ID0);
  Mmad(cb.c, cb.a2, cb.b2, MmadParams(kSbM, kSbN, kSbKSel, 0, false, true));
  FixpipeToAivs(cb.c, DualFix(kSbM, kSbN), kSbM / 2 * kSbN, EVENT_ID0);
}

template <class T>
void RunSb(SbData<T>& d, SbBad bad) {
  RunCube("cube_sub_blocks", d, [&] { SbAic(d, bad); }, [&] { UbRowsAiv(d.out, kSbN, Halves(kSbM, kSbN)); });
}

template <class T>
void SubBlockTests(const char* type) {
  SbData<T> d;
  RunsAndMatches(std::string("cube_load_data_sub_blocks_") + type, d, [&] { RunSb(d, SbBad::kNone); });
}

// ---- 2. Mmad and Fixpipe with m and n tails, Fixpipe srcStride != mSize, dstStride != nSize ----
// A [m, k] and B [n, k] (GM row strides lda, ldb) go to L1 in Z columns of mFrac * 16 and nFrac * 16 rows
// (mFrac = ceil(m / 16), nFrac = ceil(n / 16); ND2NZ pads k to 16 with zeros), whole to L0A / L0B, one
// Mmad m x n x k. Fixpipe (Fixpipe（L0C到UB数据搬运）.md) reads mSize rows from L0C row fixRow0 (a 64-B step
// per row in L0C's Nz), Z columns srcStride C0_SIZE (16 floats) apart, nSize columns (a multiple of 16:
// with n % 16 != 0 the columns from n on are not compared; Mmad.md defines only m x n), and writes them as ND
// rows dstStride elements apart into one AIV's UB (dual: the first mSize / 2 rows to AIV 0, the rest to
// AIV 1).
struct TailCase {
  const char* name;
  int m, n, k, lda, ldb;
  int fixRow0, mSize, nSize, srcStride, dstStride;
  bool dual;
  int sub;  // single destination
};

enum class TailBad { kNone, kSrcStrideBelowM16, kDstStrideBelowN, kGemv };

template <class T>
struct TailData {
  TailCase c;
  std::vector<T> a, b;
  std::vector<float> out;
  explicit TailData(const TailCase& tc)
      : c(tc), a(TestMatrix<T>(tc.m, tc.lda, 41)), b(TestMatrix<T>(tc.n, tc.ldb, 42)), out(tc.m * tc.nSize, -7.0f) {}
  bool Matches() const {
    return ProductMatches(out, c.nSize, c.fixRow0, c.fixRow0 + c.mSize, std::min(c.n, c.nSize), c.k, Rows(a, c.lda),
                          Rows(b, c.ldb), true);
  }
};

template <class T>
void TailAic(TailData<T>& d, TailBad bad) {
  const TailCase& c = d.c;
  const int mFrac = (c.m + 15) / 16, nFrac = (c.n + 15) / 16, kFrac = (c.k + 15) / 16;
  CubeBuffers<T> cb(mFrac * kFrac * 512, nFrac * kFrac * 512, mFrac * kFrac * 512, nFrac * kFrac * 512,
                    mFrac * nFrac * 1024);
  CopyToL1(cb, Gm(d.a), OneNd(c.m, c.k, c.lda, mFrac * 16), Gm(d.b), OneNd(c.n, c.k, c.ldb, nFrac * 16), EVENT_ID1);
  LoadToL0(cb, WholeL0(mFrac, kFrac), WholeL0(nFrac, kFrac), EVENT_ID1);
  MmadParams mp(c.m, c.n, c.k, 0, false, true);
  mp.disableGemv = c.m == 1 && bad != TailBad::kGemv;  // m = 1: the plain Nz product, not GEMV (Mmad.md)
  Mmad(cb.c, cb.a2, cb.b2, mp);
  FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp(c.nSize, c.mSize, c.srcStride, c.dstStride);
  if (bad == TailBad::kSrcStrideBelowM16) fp.srcStride = c.mSize;
  if (bad == TailBad::kDstStrideBelowN) fp.dstStride = c.nSize - 8;
  fp.dualDstCtl = c.dual ? 1 : 0;
  fp.subBlockId = c.sub == 1;
  FixpipeToAivs(cb.c[c.fixRow0 * 16], fp, (c.dual ? c.mSize / 2 : c.mSize) * c.dstStride, EVENT_ID1);
}

template <class T>
void RunTail(TailData<T>& d, TailBad bad) {
  const TailCase& c = d.c;
  UbRows u{{0, 0}, {c.fixRow0, c.fixRow0}, c.nSize, c.dstStride};
  if (c.dual) {
    u.rows[0] = u.rows[1] = c.mSize / 2;
    u.row0[1] = c.fixRow0 + c.mSize / 2;
  } else {
    u.rows[c.sub] = c.mSize;
  }
  RunCube("cube_tails", d, [&] { TailAic(d, bad); }, [&] { UbRowsAiv(d.out, c.nSize, u); });
}
// name, m, n, k, lda, ldb, fixRow0, mSize, nSize, srcStride, dstStride, dual, sub
constexpr TailCase kTails[] = {
    // m = 37 (mFrac 3), n = 40 (nFrac 3), k = 40 (padded to 48 in L1): all 37 rows to AIV 1, 48 columns at a
    // pitch of 56, srcStride 48 (mSize rounded up to 16, != mSize).
    {"m37_n40_k40", 37, 40, 40, 40, 48, 0, 37, 48, 48, 56, false, 1},
    // m = 1 (disableGemv), to AIV 0, pitch 24.
    {"m1_n16_k32", 1, 16, 32, 40, 32, 0, 1, 16, 16, 24, false, 0},
    // m = 17 (mFrac 2, 15 dummy rows per fractal column), pitch 40.
    {"m17_n32_k64", 17, 32, 64, 72, 64, 0, 17, 32, 32, 40, false, 0},
    // a sub-block of a 64 x 48 L0C tile: rows 5..38 (mSize 34, dual: 17 rows to each AIV), columns 0..31,
    // srcStride 64 (the tile's Z column) > mSize rounded up to 16 (48), pitch 40.
    {"sub_tile_rows5_m34_dual", 64, 48, 32, 32, 40, 5, 34, 32, 64, 40, true, 0},
};

template <class T>
void TailTests(const char* type) {
  for (const TailCase& c : kTails) {
    TailData<T> d(c);
    RunsAndMatches(std::string("cube_tail_") + c.name + "_" + type, d, [&] { RunTail(d, TailBad::kNone); });
  }
}

// ---- 3. ND2NZ with ndNum > 1, matrix strides, dstNzNStride != 1 and Z columns taller than the rows ----
// DataCopy（GMToL1随路转换-ND2NZ搬运）.md: ND matrix nd (at srcNdMatrixStride elements from the previous in GM,
// rows srcDValue elements apart) row r, column d goes to L1 element offset nd * dstNzMatrixStride +
// (d / 16) * dstNzC0Stride * 16 + r * dstNzNStride * 16 + d % 16 (strides in elements / 32-B blocks), the
// row padded with zeros to 32 B.
// A: two ND matrices [16, 40] (GM rows 48 apart, the second 792 elements after the first), dstNzNStride 2,
// dstNzMatrixStride 16 elements (one 32-B row): rows interleave, L1 row slot 2r + nd = A_nd row r, in Z
// columns of 32 slots: the Nz image of a [32, 48] matrix.
// B: three ND matrices [8, 40] (GM rows 56 apart, 488 elements between matrices), dstNzNStride 1,
// dstNzMatrixStride 128 elements (8 rows of 32 B): stacked, L1 row slot 8 * nd + r = B_nd row r, in Z
// columns of 48 slots (dstNzC0Stride 48 > the 24 rows); LoadData reads them with srcStride 3 (!= mStep 2).
// Mmad 32 x 24 x 48 (n tail: nFrac 2; k 40..47 are ND2NZ's zero padding), Fixpipe nSize 32, columns < 24
// compared.
constexpr int kNdK = 40, kNdK16 = 48;
constexpr int kNdRowsA = 16, kNdLda = 48, kNdStrideA = 792, kNdM = 32;
constexpr int kNdRowsB = 8, kNdLdb = 56, kNdStrideB = 488, kNdNumB = 3, kNdN = 24, kNdC0B = 48;

enum class NdBad { kNone, kMatrixBeyondL1, kSrcMatrixBeyondGm };

template <class T>
struct NdData {
  std::vector<T> a = TestMatrix<T>(kNdStrideA / kNdLda + kNdRowsA + 1, kNdLda, 51);  // 16 + 1 + 16 rows used
  std::vector<T> b = TestMatrix<T>(3 * kNdStrideB / kNdLdb + 1, kNdLdb, 52);
  std::vector<float> out = std::vector<float>(kNdM * 32, -7.0f);
  // Row i of the product's A: ND matrix i % 2, row i / 2; column j of its B^T: ND matrix j / 8, row j % 8.
  static size_t AAt(int i) { return static_cast<size_t>(i % 2) * kNdStrideA + static_cast<size_t>(i / 2) * kNdLda; }
  static size_t BAt(int j) {
    return static_cast<size_t>(j / kNdRowsB) * kNdStrideB + static_cast<size_t>(j % kNdRowsB) * kNdLdb;
  }
  bool Matches() const { return ProductMatches(out, 32, 0, kNdM, kNdN, kNdK, Rows(a, AAt), Rows(b, BAt), true); }
};

template <class T>
void NdAic(NdData<T>& d, NdBad bad) {
  CubeBuffers<T> cb(kNdM * kNdK16 * sizeof(T), kNdC0B * kNdK16 * sizeof(T), kNdM * kNdK16 * sizeof(T),
                    32 * kNdK16 * sizeof(T), kNdM * 32 * sizeof(float));
  // The negative twins: A's second NZ matrix one 32-B row further (its last row leaves the L1 tensor), or
  // B's third ND matrix read past the end of the GlobalTensor.
  const uint32_t dstMatrixA = bad == NdBad::kMatrixBeyondL1 ? 32 : 16;
  const uint64_t srcMatrixB = bad == NdBad::kSrcMatrixBeyondGm ? d.b.size() / 2 : kNdStrideB;
  CopyToL1(cb, Gm(d.a), Nd2NzParams(2, kNdRowsA, kNdK, kNdStrideA, kNdLda, kNdM, 2, dstMatrixA), Gm(d.b),
           Nd2NzParams(kNdNumB, kNdRowsB, kNdK, srcMatrixB, kNdLdb, kNdC0B, 1, kNdRowsB * 16), EVENT_ID2);
  LoadToL0(cb, WholeL0(kNdM / 16, kNdK16 / 16), LoadData2DParamsV2(0, 0, 2, kNdK16 / 16, kNdC0B / 16, 2, false, 0),
           EVENT_ID2);
  Mmad(cb.c, cb.a2, cb.b2, MmadParams(kNdM, kNdN, kNdK16, 0, false, true));
  FixpipeToAivs(cb.c, DualFix(kNdM, 32), kNdM / 2 * 32, EVENT_ID2);
}

template <class T>
void RunNd(NdData<T>& d, NdBad bad) {
  RunCube("cube_nd2nz_matrices", d, [&] { NdAic(d, bad); }, [&] { UbRowsAiv(d.out, 32, Halves(kNdM, 32)); });
}

template <class T>
void Nd2NzMatrixTests(const char* type) {
  NdData<T> d;
  RunsAndMatches(std::string("cube_nd2nz_nd_num_strides_") + type, d, [&] { RunNd(d, NdBad::kNone); });
}

void SubBlockTailStrideTests() {
  SubBlockTests<bfloat16_t>("bf16");
  SubBlockTests<half>("half");
  TailTests<bfloat16_t>("bf16");
  TailTests<half>("half");
  Nd2NzMatrixTests<bfloat16_t>("bf16");
  Nd2NzMatrixTests<half>("half");
  // The negative twins (bf16): each guard's message names the API and the field or operand.
  auto sb = [](SbBad bad) {
    SbData<bfloat16_t> d;
    RunSb(d, bad);
  };
  ExpectError("cube_guard_load_data_k_start_beyond_src",
              {"LoadData(L1->L0A/L0B, LoadData2DParamsV2)", "bounds: src needs 15872 bytes of L1", "view holds 12288",
               "(kStartPosition 5 + kStep 3 - 1) * srcStride 4 + mStartPosition 1 + mStep 2 - 1 = 30"},
              [&] { sb(SbBad::kKStartBeyondSrc); });
  ExpectError("cube_guard_load_data_dst_stride_beyond_l0a",
              {"LoadData(L1->L0A/L0B, LoadData2DParamsV2)", "bounds: dst needs 6144 bytes of L0A", "view holds 5120",
               "(kStep 3 - 1) * dstStride 5 + mStep 2 - 1 = 11"},
              [&] { sb(SbBad::kDstStrideBeyondL0a); });
  auto tail = [](int idx, TailBad bad) {
    TailData<bfloat16_t> d(kTails[idx]);
    RunTail(d, bad);
  };
  ExpectError("cube_guard_fixpipe_src_stride_below_m16",
              {"Fixpipe(L0C->UB)", "srcStride 37", "must be >= mSize rounded up to 16 = 48"},
              [&] { tail(0, TailBad::kSrcStrideBelowM16); });
  ExpectError("cube_guard_fixpipe_dst_stride_below_n_size", {"Fixpipe(L0C->UB)", "dstStride 40", "must be >= nSize 48"},
              [&] { tail(0, TailBad::kDstStrideBelowN); });
  ExpectError("cube_guard_mmad_m1_without_disable_gemv", {"Mmad", "m = 1 enables GEMV mode", "disableGemv = true"},
              [&] { tail(1, TailBad::kGemv); });
  auto nd = [](NdBad bad) {
    NdData<bfloat16_t> d;
    RunNd(d, bad);
  };
  ExpectError("cube_guard_nd2nz_nz_matrix_beyond_l1",
              {"DataCopy(GM->L1, Nd2NzParams)", "bounds: dst needs 3104 bytes of L1", "view holds 3072"},
              [&] { nd(NdBad::kMatrixBeyondL1); });
  ExpectError("cube_guard_nd2nz_nd_matrix_beyond_gm",
              {"DataCopy(GM->L1, Nd2NzParams)", "bounds: GM bytes", "leave the GlobalTensor's SetGlobalBuffer extent"},
              [&] { nd(NdBad::kSrcMatrixBeyondGm); });
}

// The chain's cost: every pipe charged once per instruction at the Matmul model's rates.
void CostTests() {
  Data d(15);
  amct_sim::CostStart(3510, 0);
  bool ok = true;
  try {
    Run(d, Variant::kDual);
  } catch (const std::exception& e) {
    std::printf("  %s\n", e.what());
    ok = false;
  }
  const auto recs = amct_sim::CostStop();
  if (!ok || recs.size() != 1) {
    simtest::Failed("cube_cost_pipes_charged", "the launch failed or did not record one estimate");
    return;
  }
  const amct_sim::CostRecord& r = recs[0];
  const amct_sim::cost::ArchTable& t = *amct_sim::cost::TableForArch(3510);
  const double issue = t.cubeIssueCycles.value, steps = kK / kBaseK;
  const double aBytes = kM * kBaseK * 2.0, bBytes = kN * kBaseK * 2.0;
  const double mte2 = steps * (2 * issue + (aBytes + bBytes) / t.cubeGmBytesPerCycle.value);
  const double mte1 = steps * (2 * issue + (aBytes + bBytes) / t.mte1BytesPerCycle.value);
  const double m = steps * (issue + (kM / 16) * (kN / 16) * (kBaseK / 16) * t.cubeCyclesPerFractal16.value);
  const double fix = issue + kM * kN * 4.0 / t.fixBytesPerCycle.value;
  auto near = [](double x, double want) { return std::fabs(x - want) <= 1e-6 * want; };
  std::printf("  cube chain estimate %.2f us (model %d): busy MTE2 %.0f MTE1 %.0f M %.0f FIX %.0f of %.0f cycles\n",
              r.estimateUs, amct_sim::cost::kModelVersion, r.busy[2], r.busy[4], r.busy[5], r.busy[6], r.slowestCycles);
  Check("cube_cost_pipes_charged", near(r.busy[2], mte2) && near(r.busy[4], mte1) && near(r.busy[5], m) &&
                                       near(r.busy[6], fix),
        amct_sim::detail::Fmt("busy MTE2 %.1f (want %.1f) MTE1 %.1f (%.1f) M %.1f (%.1f) FIX %.1f (%.1f)", r.busy[2],
                              mte2, r.busy[4], mte1, r.busy[5], m, r.busy[6], fix));
  Check("cube_cost_slowest_core_at_least_the_m_pipe", r.slowestCycles >= m);
}
#endif

}  // namespace

int main() {
  CapacityTests();
#if __NPU_ARCH__ == 3510
  ChainTests();
  QueueTests();
  PaddingTest();
  WarTests();
  NopAndStrideTests();
  SubBlockTailStrideTests();
  CostTests();
#endif
  return simtest::Finish();
}
