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

// ---- cube buffer capacities (both arches) ----------------------------------------------------------
void CapacityTests() {
  ExpectError("cube_guard_l0a_over_capacity", {"TPipe::InitBuffer(TBuf)", "L0A", "over the L0A capacity of 65536"}, [] {
    amct_sim::GmScope scope{};
    amct_sim::LaunchMix("cube_cap", 1, 2, [] {
      if ASCEND_IS_AIC {
        TPipe pipe;
        TBuf<TPosition::A2> a2;
        pipe.InitBuffer(a2, 64 * 1024 + 32);
      }
    });
  });
  ExpectOk("cube_l0a_full_capacity_ok", [] {
    amct_sim::GmScope scope{};
    amct_sim::LaunchMix("cube_cap", 1, 2, [] {
      if ASCEND_IS_AIC {
        TPipe pipe;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        pipe.InitBuffer(a2, 64 * 1024);
        pipe.InitBuffer(b2, 64 * 1024);
      }
    });
  });
  // TPosition::A1 and ::B1 share the L1 (512 KB on both arches).
  ExpectError("cube_guard_l1_shared_over_capacity", {"L1", "over the L1 capacity of 524288"}, [] {
    amct_sim::GmScope scope{};
    amct_sim::LaunchMix("cube_cap", 1, 2, [] {
      if ASCEND_IS_AIC {
        TPipe pipe;
        TQue<TPosition::A1, 1> a1;
        TQue<TPosition::B1, 1> b1;
        pipe.InitBuffer(a1, 1, 300 * 1024);
        pipe.InitBuffer(b1, 1, 300 * 1024);
      }
    });
  });
  // L0C: 256 KB on dav-3510, 128 KB on dav-2201.
  auto l0c = [] {
    amct_sim::GmScope scope{};
    amct_sim::LaunchMix("cube_cap", 1, 2, [] {
      if ASCEND_IS_AIC {
        TPipe pipe;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(co1, 192 * 1024);
      }
    });
  };
  if (__NPU_ARCH__ == 3510) {
    ExpectOk("cube_l0c_capacity_per_arch", l0c);
  } else {
    ExpectError("cube_l0c_capacity_per_arch", {"over the L0C capacity of 131072"}, l0c);
  }
  ExpectError("cube_guard_cube_position_on_aiv", {"TPosition::A1 is a buffer of the AIC"}, [] {
    amct_sim::GmScope scope{};
    amct_sim::LaunchMix("cube_aiv", 1, 2, [] {
      if ASCEND_IS_AIV {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        pipe.InitBuffer(a1, 1024);
      }
    });
  });
  ExpectError("cube_guard_cube_position_in_vector_launch", {"TPosition::CO1 is a buffer of the AIC"}, [] {
    amct_sim::GmScope scope{};
    simtest::Run1([] {
      TPipe pipe;
      TBuf<TPosition::CO1> c;
      pipe.InitBuffer(c, 1024);
    });
  });
  ExpectError("cube_guard_nd2nz_src_d_value", {"DataCopy(GM->L1, Nd2NzParams)", "srcDValue 16 < dValue 32"}, [] {
    std::vector<bfloat16_t> a(1024, bfloat16_t(1.0f));
    amct_sim::GmScope scope{{a.data(), a.size() * 2, false}};
    amct_sim::LaunchMix("cube_nd2nz", 1, 2, [&] {
      if ASCEND_IS_AIC {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        pipe.InitBuffer(a1, 4096);
        GlobalTensor<bfloat16_t> ga;
        ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(a.data()), a.size());
        LocalTensor<bfloat16_t> t = a1.Get<bfloat16_t>();
        DataCopy(t, ga, Nd2NzParams(1, 16, 32, 0, 16, 16, 1, 0));
      }
    });
  });
  ExpectError("cube_guard_nd2nz_on_aiv", {"DataCopy(GM->L1, Nd2NzParams)", "emulated on the AIC of a MIX launch only"}, [] {
    std::vector<bfloat16_t> a(1024, bfloat16_t(1.0f));
    amct_sim::GmScope scope{{a.data(), a.size() * 2, false}};
    simtest::Run1([&] {
      GlobalTensor<bfloat16_t> ga;
      ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(a.data()), a.size());
      LocalTensor<bfloat16_t> t;
      DataCopy(t, ga, Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0));
    });
  });
  ExpectError("cube_guard_cube_event_on_aiv", {"SetFlag", "HardEvent::MTE2_MTE1 orders the AIC's cube pipes"}, [] {
    amct_sim::GmScope scope{};
    simtest::Run1([] { SetFlag<HardEvent::MTE2_MTE1>(0); });
  });
}

#if __NPU_ARCH__ == 3510
// ---- the 64 x 256 x 2048 score tile ------------------------------------------------------------------
constexpr int kM = 64, kN = 256, kK = 2048, kBaseK = 64;
constexpr int kLda = kK + 64, kLdb = kK + 32;  // A's and B's rows sit at a stride
constexpr int kIntRowsA = 8, kIntRowsB = 32;   // small-integer rows: their dot products are exact sums
constexpr uint16_t kFlag = 3;
constexpr FixpipeConfig kRowMajorUb = {CO2Layout::ROW_MAJOR, true};

float Bf(bfloat16_t v) { return static_cast<float>(v); }

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
  float BruteForce(int i, int j) const {  // fp32 accumulation in K order
    float acc = 0.0f;
    for (int k = 0; k < kK; ++k) acc = acc + Bf(a[i * kLda + k]) * Bf(b[j * kLdb + k]);
    return acc;
  }
  double Exact(int i, int j) const {
    double s = 0;
    for (int k = 0; k < kK; ++k) s += double(Bf(a[i * kLda + k])) * double(Bf(b[j * kLdb + k]));
    return s;
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
  TPipe pipe;
  TBuf<TPosition::A1> a1;
  TBuf<TPosition::B1> b1;
  TBuf<TPosition::A2> a2;
  TBuf<TPosition::B2> b2;
  TBuf<TPosition::CO1> co1;
  pipe.InitBuffer(a1, kM * kBaseK * sizeof(bfloat16_t));
  pipe.InitBuffer(b1, kN * kBaseK * sizeof(bfloat16_t));
  pipe.InitBuffer(a2, kM * kBaseK * sizeof(bfloat16_t));
  pipe.InitBuffer(b2, kN * kBaseK * sizeof(bfloat16_t));
  pipe.InitBuffer(co1, kM * kN * sizeof(float));
  GlobalTensor<bfloat16_t> ga, gb;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.a.data()), d.a.size());
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.b.data()), d.b.size());
  LocalTensor<bfloat16_t> la1 = a1.Get<bfloat16_t>(), lb1 = b1.Get<bfloat16_t>();
  LocalTensor<bfloat16_t> la2 = a2.Get<bfloat16_t>(), lb2 = b2.Get<bfloat16_t>();
  LocalTensor<float> lc = co1.Get<float>();
  for (int kc = 0; kc < kK / kBaseK; ++kc) {
    // GM -> L1: a [kM, kBaseK] slice of A and a [kN, kBaseK] slice of B, ND -> NZ (Z columns of 16).
    Nd2NzParams pa;
    pa.ndNum = 1;
    pa.nValue = kM;
    pa.dValue = kBaseK;
    pa.srcDValue = kLda;
    pa.dstNzC0Stride = kM;
    pa.dstNzNStride = 1;
    DataCopy(la1, ga[kc * kBaseK], pa);
    Nd2NzParams pb = pa;
    pb.nValue = kN;
    pb.srcDValue = kLdb;
    pb.dstNzC0Stride = kN;
    DataCopy(lb1, gb[kc * kBaseK], pb);
    if (v != Variant::kNoMte2Mte1) {
      SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
      WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    }
    // L1 -> L0A (Nz) and L0B (Zn: B's rows need no transpose).
    LoadData2DParamsV2 la;
    la.mStep = kM / 16;
    la.kStep = kBaseK / 16;
    la.srcStride = kM / 16;
    la.dstStride = kM / 16;
    if (v == Variant::kLoadToL1) {
      LoadData(lb1, la1, la);  // dst in TPosition::B1: not an L0 position
    }
    LoadData(la2, la1, la);
    LoadData2DParamsV2 lb = la;
    lb.mStep = kN / 16;
    lb.srcStride = kN / 16;
    lb.dstStride = kN / 16;
    LoadData(lb2, lb1, lb);
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    MmadParams mp;
    mp.m = kM;
    mp.n = kN;
    mp.k = kBaseK;
    mp.cmatrixInitVal = kc == 0;  // the first K slice starts from 0, the others accumulate
    Mmad(lc, la2, lb2, mp);
    if (v != Variant::kNoMMte2) {  // the next slice's loads may overwrite L1 and (transitively) L0
      SetFlag<HardEvent::M_MTE2>(EVENT_ID0);
      WaitFlag<HardEvent::M_MTE2>(EVENT_ID0);
    }
  }
  if (v != Variant::kNoMFix) {
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
  }
  FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp;
  fp.nSize = v == Variant::kNSize24 ? 24 : kN;
  fp.mSize = v == Variant::kOddM ? kM - 1 : kM;
  fp.srcStride = kM;
  fp.dstStride = kN;
  fp.dualDstCtl = Single(v) ? 0 : 1;
  fp.subBlockId = Single(v);
  LocalTensor<float> ub(TPosition::VECIN, 0, (Single(v) ? kM : kM / 2) * kN);  // the AIVs' UB at offset 0
  if (v == Variant::kNotToUb) {
    Fixpipe<float, float, CFG_ROW_MAJOR>(ub, lc, fp);
  } else {
    Fixpipe<float, float, kRowMajorUb>(ub, lc, fp);
  }
  CrossCoreSetFlag<2, PIPE_FIX>(kFlag);
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
  GlobalTensor<float> gout;
  gout.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.out.data()), d.out.size());
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

void Kernel(Data& d, Variant v) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  if ASCEND_IS_AIC {
    AicProgram(d, v);
  }
  if ASCEND_IS_AIV {
    AivProgram(d, v);
  }
}

void Run(Data& d, Variant v) {
  amct_sim::GmScope scope{{d.a.data(), d.a.size() * 2, false}, {d.b.data(), d.b.size() * 2, false},
                          {d.out.data(), d.out.size() * 4, true}};
  amct_sim::LaunchMix("cube_scores", 1, 2, [&] { Kernel(d, v); });
}

bool MatchesBruteForce(const Data& d, int rowLo, int rowHi) {
  for (int i = rowLo; i < rowHi; ++i) {
    for (int j = 0; j < kN; ++j) {
      if (simtest::FloatBits(d.BruteForce(i, j)) != simtest::FloatBits(d.out[i * kN + j])) {
        std::printf("  mismatch at (%d, %d): sim %.9g, brute force %.9g\n", i, j, d.out[i * kN + j], d.BruteForce(i, j));
        return false;
      }
    }
  }
  return true;
}

bool IntegerBlockExact(const Data& d) {
  for (int i = 0; i < kIntRowsA; ++i) {
    for (int j = 0; j < kIntRowsB; ++j) {
      if (double(d.out[i * kN + j]) != d.Exact(i, j)) return false;
    }
  }
  return true;
}

void ChainTests() {
  {
    Data d(11);
    ExpectOk("cube_dual_dst_64x256x2048_runs", [&] { Run(d, Variant::kDual); });
    Check("cube_dual_dst_aiv0_rows_bitexact_vs_bruteforce", MatchesBruteForce(d, 0, kM / 2));
    Check("cube_dual_dst_aiv1_rows_bitexact_vs_bruteforce", MatchesBruteForce(d, kM / 2, kM));
    Check("cube_dual_dst_integer_block_exact", IntegerBlockExact(d));
  }
  {
    Data d(12);
    ExpectOk("cube_single_dst_sub1_runs", [&] { Run(d, Variant::kSingleSub1); });
    Check("cube_single_dst_sub1_all_rows_bitexact_vs_bruteforce", MatchesBruteForce(d, 0, kM));
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
    amct_sim::LaunchMix("cube_aiv", 1, 2, [] {
      if ASCEND_IS_AIV {
        LocalTensor<float> c;
        LocalTensor<bfloat16_t> a, b;
        MmadParams p;
        Mmad(c, a, b, p);
      }
    });
  });
  ExpectError("cube_guard_ub_view_on_aiv", {"LocalTensor(TPosition, addr, tileSize)", "only on the AIC"}, [] {
    amct_sim::GmScope scope{};
    amct_sim::LaunchMix("cube_aiv", 1, 2, [] {
      if ASCEND_IS_AIV {
        LocalTensor<float> t(TPosition::VECIN, 0, 64);
        (void)t;
      }
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
  bool Matches() const {
    for (int i = 0; i < kQm; ++i) {
      for (int j = 0; j < kQn; ++j) {
        float acc = 0.0f;
        for (int k = 0; k < kQk; ++k) acc = acc + Bf(a[i * kQk + k]) * Bf(b[j * kQk + k]);
        if (simtest::FloatBits(acc) != simtest::FloatBits(out[i * kQn + j])) return false;
      }
    }
    return true;
  }
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
  GlobalTensor<bfloat16_t> ga, gb;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.a.data()), d.a.size());
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.b.data()), d.b.size());
  LocalTensor<float> c = qc.AllocTensor<float>();
  for (int kc = 0; kc < kQk / kQbaseK; ++kc) {
    LocalTensor<bfloat16_t> a1 = qa1.AllocTensor<bfloat16_t>(), b1 = qb1.AllocTensor<bfloat16_t>();
    Nd2NzParams pa(1, kQm, kQbaseK, 0, kQk, kQm, 1, 0);
    Nd2NzParams pb(1, kQn, kQbaseK, 0, kQk, kQn, 1, 0);
    DataCopy(a1, ga[kc * kQbaseK], pa);
    DataCopy(b1, gb[kc * kQbaseK], pb);
    if (edgesL1) {
      qa1.EnQue(a1);
      qb1.EnQue(b1);
      a1 = qa1.DeQue<bfloat16_t>();
      b1 = qb1.DeQue<bfloat16_t>();
    }
    LocalTensor<bfloat16_t> a2 = qa2.AllocTensor<bfloat16_t>(), b2 = qb2.AllocTensor<bfloat16_t>();
    LoadData(a2, a1, LoadData2DParamsV2(0, 0, kQm / 16, kQbaseK / 16, kQm / 16, kQm / 16, false, 0));
    LoadData(b2, b1, LoadData2DParamsV2(0, 0, kQn / 16, kQbaseK / 16, kQn / 16, kQn / 16, false, 0));
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
  FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp(kQn, kQm, kQm, kQn);
  fp.dualDstCtl = 1;
  LocalTensor<float> ub(TPosition::VECOUT, 0, kQm / 2 * kQn);
  Fixpipe<float, float, kRowMajorUb>(ub, c, fp);
  qc.FreeTensor(c);
  CrossCoreSetFlag<2, PIPE_FIX>(kFlag);
}

void QueueAiv(SmallData& d) {
  const int sub = static_cast<int>(GetSubBlockIdx());
  const int n = kQm / 2 * kQn;
  TPipe pipe;
  TQue<TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 1, n * sizeof(float));
  GlobalTensor<float> gout;
  gout.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.out.data()), d.out.size());
  LocalTensor<float> y = q.AllocTensor<float>();
  CrossCoreWaitFlag(kFlag);  // the AIC's Fixpipe wrote y's bytes: they go straight out
  q.EnQue(y);
  y = q.DeQue<float>();
  DataCopy(gout[sub * n], y, n);
  q.FreeTensor(y);
}

void QueueTests() {
  auto run = [](SmallData& d, bool edges) {
    amct_sim::GmScope scope{{d.a.data(), d.a.size() * 2, false}, {d.b.data(), d.b.size() * 2, false},
                            {d.out.data(), d.out.size() * 4, true}};
    amct_sim::LaunchMix("cube_queues", 1, 2, [&] {
      KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
      if ASCEND_IS_AIC {
        QueueAic(d, edges);
      }
      if ASCEND_IS_AIV {
        QueueAiv(d);
      }
    });
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
  amct_sim::LaunchMix("cube_back_to_back", 1, 2, [&] {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
      TPipe pipe;
      TBuf<TPosition::A2> a2;
      TBuf<TPosition::B2> b2;
      TBuf<TPosition::CO1> co1;
      pipe.InitBuffer(a2, 512);
      pipe.InitBuffer(b2, 512);
      pipe.InitBuffer(co1, 1024);
      LocalTensor<bfloat16_t> la = a2.Get<bfloat16_t>(), lb = b2.Get<bfloat16_t>();
      LocalTensor<float> lc = co1.Get<float>();
      Mmad(lc, la, lb, MmadParams(16, 16, 16, 0, false, true));
      if (mBarrier) PipeBarrier<PIPE_M>();
      Mmad(lc, la, lb, MmadParams(16, 16, 16, 0, false, false));
    }
  });
}

// ---- Mmad with m, n or k = 0 is a NOP (Mmad.md); ND2NZ refuses a matrix stride the hardware truncates ----
void NopAndStrideTests() {
  ExpectError("cube_guard_small_accumulation_without_pipe_m_barrier",
              {"Mmad", "(m / 16) * (n / 16) < 10", "without PipeBarrier<PIPE_M>"}, [] { BackToBackMmads(false); });
  ExpectOk("cube_small_accumulation_after_pipe_m_barrier", [] { BackToBackMmads(true); });
  ExpectOk("cube_mmad_zero_k_is_not_refused", [&] {
    amct_sim::GmScope scope{};
    amct_sim::LaunchMix("cube_nop", 1, 2, [&] {
      KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
      if ASCEND_IS_AIC {
        TPipe pipe;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(a2, 512);
        pipe.InitBuffer(b2, 512);
        pipe.InitBuffer(co1, 1024);
        LocalTensor<float> lc = co1.Get<float>();
        Mmad(lc, a2.Get<bfloat16_t>(), b2.Get<bfloat16_t>(), MmadParams(16, 16, 0, 0, false, true));
      }
    });
  });
  ExpectError("cube_guard_nd2nz_matrix_stride_not_32_bytes", {"dstNzMatrixStride 8 elements", "not emulated"}, [] {
    std::vector<bfloat16_t> a(4096, bfloat16_t(1.0f));
    amct_sim::GmScope scope{{a.data(), a.size() * 2, false}};
    amct_sim::LaunchMix("cube_nd2nz", 1, 2, [&] {
      KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
      if ASCEND_IS_AIC {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        pipe.InitBuffer(a1, 16384);
        GlobalTensor<bfloat16_t> ga;
        ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(a.data()), a.size());
        DataCopy(a1.Get<bfloat16_t>(), ga, Nd2NzParams(2, 16, 32, 1024, 32, 16, 1, 8));
      }
    });
  });
}

// ---- ND2NZ's zero padding: K = 40 fills 3 Z columns of 16; an Mmad over k = 48 sees zeros there ----
void PaddingTest() {
  constexpr int m = 32, n = 32, k = 40, k16 = 48;
  SmallData d;  // uses its first m x k and n x k elements as A [m, 40] and B [n, 40] (row stride 40)
  auto kernel = [&] {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
      TPipe pipe;
      TBuf<TPosition::A1> a1;
      TBuf<TPosition::B1> b1;
      TBuf<TPosition::A2> a2;
      TBuf<TPosition::B2> b2;
      TBuf<TPosition::CO1> co1;
      pipe.InitBuffer(a1, m * k16 * 2);
      pipe.InitBuffer(b1, n * k16 * 2);
      pipe.InitBuffer(a2, m * k16 * 2);
      pipe.InitBuffer(b2, n * k16 * 2);
      pipe.InitBuffer(co1, m * n * 4);
      GlobalTensor<bfloat16_t> ga, gb;
      ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.a.data()), m * k);
      gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.b.data()), n * k);
      LocalTensor<bfloat16_t> la1 = a1.Get<bfloat16_t>(), lb1 = b1.Get<bfloat16_t>();
      LocalTensor<bfloat16_t> la2 = a2.Get<bfloat16_t>(), lb2 = b2.Get<bfloat16_t>();
      LocalTensor<float> lc = co1.Get<float>();
      DataCopy(la1, ga, Nd2NzParams(1, m, k, 0, k, m, 1, 0));
      DataCopy(lb1, gb, Nd2NzParams(1, n, k, 0, k, n, 1, 0));
      SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID1);
      WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID1);
      LoadData(la2, la1, LoadData2DParamsV2(0, 0, m / 16, k16 / 16, m / 16, m / 16, false, 0));
      LoadData(lb2, lb1, LoadData2DParamsV2(0, 0, n / 16, k16 / 16, n / 16, n / 16, false, 0));
      SetFlag<HardEvent::MTE1_M>(EVENT_ID1);
      WaitFlag<HardEvent::MTE1_M>(EVENT_ID1);
      Mmad(lc, la2, lb2, MmadParams(m, n, k16, 0, false, true));
      SetFlag<HardEvent::M_FIX>(EVENT_ID1);
      WaitFlag<HardEvent::M_FIX>(EVENT_ID1);
      FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp(n, m, m, n);
      fp.dualDstCtl = 1;
      LocalTensor<float> ub(TPosition::VECOUT, 0, m / 2 * n);
      Fixpipe<float, float, kRowMajorUb>(ub, lc, fp);
      CrossCoreSetFlag<2, PIPE_FIX>(kFlag);
    }
    if ASCEND_IS_AIV {
      QueueAiv(d);
    }
  };
  bool ok = true;
  try {
    amct_sim::GmScope scope{{d.a.data(), d.a.size() * 2, false}, {d.b.data(), d.b.size() * 2, false},
                            {d.out.data(), d.out.size() * 4, true}};
    amct_sim::LaunchMix("cube_pad", 1, 2, kernel);
  } catch (const std::exception& e) {
    ok = false;
    std::printf("  %s\n", e.what());
  }
  for (int i = 0; ok && i < m; ++i) {
    for (int j = 0; ok && j < n; ++j) {
      float acc = 0.0f;
      for (int kk = 0; kk < k; ++kk) acc = acc + Bf(d.a[i * k + kk]) * Bf(d.b[j * k + kk]);
      ok = simtest::FloatBits(acc) == simtest::FloatBits(d.out[i * n + j]);
    }
  }
  Check("cube_nd2nz_pads_rows_with_zeros", ok);
}

// ---- write-after-read guards of L0A/L0B (M_MTE1) and L0C (FIX_M), each with its passing twin ----
// Two K slices through ping-pong L1 buffers (so that MTE2 needs no edge) and one L0A/L0B pair; then,
// for the L0C case, a second tile's Mmad over the L0C the Fixpipe read.
void WarKernel(SmallData& d, bool mMte1, bool fixM) {
  TPipe pipe;
  TBuf<TPosition::A1> a1[2];
  TBuf<TPosition::B1> b1[2];
  TBuf<TPosition::A2> a2;
  TBuf<TPosition::B2> b2;
  TBuf<TPosition::CO1> co1;
  for (int i = 0; i < 2; ++i) {
    pipe.InitBuffer(a1[i], kQm * kQbaseK * 2);
    pipe.InitBuffer(b1[i], kQn * kQbaseK * 2);
  }
  pipe.InitBuffer(a2, kQm * kQbaseK * 2);
  pipe.InitBuffer(b2, kQn * kQbaseK * 2);
  pipe.InitBuffer(co1, kQm * kQn * 4);
  GlobalTensor<bfloat16_t> ga, gb;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.a.data()), d.a.size());
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.b.data()), d.b.size());
  LocalTensor<bfloat16_t> la2 = a2.Get<bfloat16_t>(), lb2 = b2.Get<bfloat16_t>();
  LocalTensor<float> lc = co1.Get<float>();
  for (int kc = 0; kc < 2; ++kc) {
    LocalTensor<bfloat16_t> la1 = a1[kc].Get<bfloat16_t>(), lb1 = b1[kc].Get<bfloat16_t>();
    DataCopy(la1, ga[kc * kQbaseK], Nd2NzParams(1, kQm, kQbaseK, 0, kQk, kQm, 1, 0));
    DataCopy(lb1, gb[kc * kQbaseK], Nd2NzParams(1, kQn, kQbaseK, 0, kQk, kQn, 1, 0));
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID2);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID2);
    LoadData(la2, la1, LoadData2DParamsV2(0, 0, kQm / 16, kQbaseK / 16, kQm / 16, kQm / 16, false, 0));
    LoadData(lb2, lb1, LoadData2DParamsV2(0, 0, kQn / 16, kQbaseK / 16, kQn / 16, kQn / 16, false, 0));
    SetFlag<HardEvent::MTE1_M>(EVENT_ID2);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID2);
    Mmad(lc, la2, lb2, MmadParams(kQm, kQn, kQbaseK, 0, false, kc == 0));
    if (mMte1) {  // the next slice's LoadData overwrites what this Mmad read
      SetFlag<HardEvent::M_MTE1>(EVENT_ID2);
      WaitFlag<HardEvent::M_MTE1>(EVENT_ID2);
    }
  }
  SetFlag<HardEvent::M_FIX>(EVENT_ID2);
  WaitFlag<HardEvent::M_FIX>(EVENT_ID2);
  FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp(kQn, kQm, kQm, kQn);
  fp.dualDstCtl = 1;
  Fixpipe<float, float, kRowMajorUb>(LocalTensor<float>(TPosition::VECOUT, 0, kQm / 2 * kQn), lc, fp);
  CrossCoreSetFlag<2, PIPE_FIX>(kFlag);
  if (fixM) {  // the next tile's Mmad overwrites what the Fixpipe read
    SetFlag<HardEvent::FIX_M>(EVENT_ID2);
    WaitFlag<HardEvent::FIX_M>(EVENT_ID2);
  }
  Mmad(lc, la2, lb2, MmadParams(kQm, kQn, kQbaseK, 0, false, true));
}

void WarTests() {
  auto run = [](SmallData& d, bool mMte1, bool fixM) {
    amct_sim::GmScope scope{{d.a.data(), d.a.size() * 2, false}, {d.b.data(), d.b.size() * 2, false},
                            {d.out.data(), d.out.size() * 4, true}};
    amct_sim::LaunchMix("cube_war", 1, 2, [&] {
      KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
      if ASCEND_IS_AIC {
        WarKernel(d, mMte1, fixM);
      }
      if ASCEND_IS_AIV {
        QueueAiv(d);
      }
    });
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
// select, per the docs' meaning of each field (computed here from GM, never from the sim's layouts), fp32
// in K order. A third of the rows are small integers (their dot products are exact in any order).
template <class T>
float F(T v) {
  return static_cast<float>(v);
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

// out [rows, ldo] (what the AIVs copied; -7 where nothing arrived) against want(i, j) on rows [r0, r1),
// columns [0, cols); exactAt(i, j, &e) true marks the integer-row pairs, whose value must be the double sum e
// too (and there must be some).
template <class W, class E>
bool OutMatches(const std::vector<float>& out, int ldo, int r0, int r1, int cols, W want, E exactAt) {
  int exactPairs = 0;
  for (int i = r0; i < r1; ++i) {
    for (int j = 0; j < cols; ++j) {
      const float w = want(i, j), got = out[static_cast<size_t>(i) * ldo + j];
      double e = 0;
      const bool isExact = exactAt(i, j, &e);
      exactPairs += isExact;
      if (simtest::FloatBits(w) != simtest::FloatBits(got) || (isExact && double(got) != e)) {
        std::printf("  mismatch at (%d, %d): sim %.9g, brute force %.9g (exact %.9g)\n", i, j, got, w, e);
        return false;
      }
    }
  }
  if (exactPairs == 0) std::printf("  no integer-row pairs among the compared values\n");
  return exactPairs > 0;
}

// What the AIVs receive from one Fixpipe: AIV s gets rows[s] ND rows of nSize floats at a pitch of dstStride
// elements at UB offset 0, L0C rows row0[s]..; it copies row i to out[(row0[s] + i) * ldo] (row by row, so
// that the UB gaps between the rows, which nothing wrote, are not read).
struct UbRows {
  int rows[2];
  int row0[2];
  int nSize;
  int dstStride;
};

void UbRowsAiv(std::vector<float>& out, int ldo, const UbRows& u) {
  const int sub = static_cast<int>(GetSubBlockIdx());
  TPipe pipe;
  TQue<TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 1, std::max(u.rows[sub], 1) * u.dstStride * sizeof(float));
  GlobalTensor<float> gout;
  gout.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out.data()), out.size());
  LocalTensor<float> y = q.AllocTensor<float>();
  CrossCoreWaitFlag(kFlag);
  q.EnQue(y);
  y = q.DeQue<float>();
  for (int i = 0; i < u.rows[sub]; ++i) DataCopy(gout[(u.row0[sub] + i) * ldo], y[i * u.dstStride], u.nSize);
  q.FreeTensor(y);
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
  float A(int i, int kk) const { return F(a[SbARow(i) * kSbLd + kSbK0 + kk]); }
  float B(int j, int kk) const { return F(b[SbBRow(j) * kSbLd + kSbK0 + kk]); }
  bool Matches() const {
    auto want = [&](int i, int j) {
      return DotInKOrder([&](int kk) { return A(i, kk); }, [&](int kk) { return B(j, kk); }, kSbKSel);
    };
    auto exact = [&](int i, int j, double* e) {
      return ExactIfIntegers([&](int kk) { return A(i, kk); }, [&](int kk) { return B(j, kk); }, kSbKSel, e);
    };
    return OutMatches(out, kSbN, 0, kSbM, kSbN, want, exact);
  }
};

template <class T>
void SbAic(SbData<T>& d, SbBad bad) {
  TPipe pipe;
  TBuf<TPosition::A1> a1;
  TBuf<TPosition::B1> b1;
  TBuf<TPosition::A2> a2;
  TBuf<TPosition::B2> b2;
  TBuf<TPosition::CO1> co1;
  pipe.InitBuffer(a1, kSbRowsA * kSbK * sizeof(T));
  pipe.InitBuffer(b1, kSbRowsB * kSbK * sizeof(T));
  pipe.InitBuffer(a2, kSbM * kSbKSel * sizeof(T));
  pipe.InitBuffer(b2, kSbN * kSbKSel * sizeof(T));
  pipe.InitBuffer(co1, kSbM * kSbN * sizeof(float));
  GlobalTensor<T> ga, gb;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(d.a.data()), d.a.size());
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(d.b.data()), d.b.size());
  LocalTensor<T> la1 = a1.Get<T>(), lb1 = b1.Get<T>(), la2 = a2.Get<T>(), lb2 = b2.Get<T>();
  LocalTensor<float> lc = co1.Get<float>();
  DataCopy(la1, ga, Nd2NzParams(1, kSbRowsA, kSbK, 0, kSbLd, kSbRowsA, 1, 0));
  DataCopy(lb1, gb, Nd2NzParams(1, kSbRowsB, kSbK, 0, kSbLd, kSbRowsB, 1, 0));
  SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
  // The negative twins: K fractals 5, 6 of A (it has 6: the read leaves the L1 tensor), or a dstStride of 5
  // whose last fractal lies past the end of L0A's view.
  const uint32_t kStart2 = bad == SbBad::kKStartBeyondSrc ? 5 : 2;
  const uint16_t dstStride2 = bad == SbBad::kDstStrideBeyondL0a ? 5 : kSbM / 16;
  LoadData(la2, la1, LoadData2DParamsV2(2, 2, 2, 3, kSbRowsA / 16, kSbM / 16, false, 0));
  LoadData(la2[2 * 256], la1, LoadData2DParamsV2(1, kStart2, 2, 3, kSbRowsA / 16, dstStride2, false, 0));
  LoadData(lb2, lb1, LoadData2DParamsV2(2, 2, 1, 3, kSbRowsB / 16, kSbN / 16, false, 0));
  LoadData(lb2[256], lb1, LoadData2DParamsV2(0, 2, 1, 3, kSbRowsB / 16, kSbN / 16, false, 0));
  SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
  WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
  Mmad(lc, la2, lb2, MmadParams(kSbM, kSbN, kSbKSel, 0, false, true));
  SetFlag<HardEvent::M_FIX>(EVENT_ID0);
  WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
  FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp(kSbN, kSbM, kSbM, kSbN);
  fp.dualDstCtl = 1;
  Fixpipe<float, float, kRowMajorUb>(LocalTensor<float>(TPosition::VECOUT, 0, kSbM / 2 * kSbN), lc, fp);
  CrossCoreSetFlag<2, PIPE_FIX>(kFlag);
}

template <class T>
void RunSb(SbData<T>& d, SbBad bad) {
  amct_sim::GmScope scope{{d.a.data(), d.a.size() * sizeof(T), false}, {d.b.data(), d.b.size() * sizeof(T), false},
                          {d.out.data(), d.out.size() * 4, true}};
  amct_sim::LaunchMix("cube_sub_blocks", 1, 2, [&] {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
      SbAic(d, bad);
    }
    if ASCEND_IS_AIV {
      UbRowsAiv(d.out, kSbN, UbRows{{kSbM / 2, kSbM / 2}, {0, kSbM / 2}, kSbN, kSbN});
    }
  });
}

template <class T>
void SubBlockTests(const char* type) {
  const std::string p = std::string("cube_load_data_sub_blocks_") + type;
  SbData<T> d;
  ExpectOk(p + "_runs", [&] { RunSb(d, SbBad::kNone); });
  Check(p + "_bitexact_vs_bruteforce", d.Matches());
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
    auto av = [&](int i) { return [this, i](int kk) { return F(a[i * c.lda + kk]); }; };
    auto bv = [&](int j) { return [this, j](int kk) { return F(b[j * c.ldb + kk]); }; };
    auto want = [&](int i, int j) { return DotInKOrder(av(i), bv(j), c.k); };
    auto exact = [&](int i, int j, double* e) { return ExactIfIntegers(av(i), bv(j), c.k, e); };
    return OutMatches(out, c.nSize, c.fixRow0, c.fixRow0 + c.mSize, std::min(c.n, c.nSize), want, exact);
  }
};

template <class T>
void TailAic(TailData<T>& d, TailBad bad) {
  const TailCase& c = d.c;
  const int mFrac = (c.m + 15) / 16, nFrac = (c.n + 15) / 16, kFrac = (c.k + 15) / 16;
  TPipe pipe;
  TBuf<TPosition::A1> a1;
  TBuf<TPosition::B1> b1;
  TBuf<TPosition::A2> a2;
  TBuf<TPosition::B2> b2;
  TBuf<TPosition::CO1> co1;
  pipe.InitBuffer(a1, mFrac * kFrac * 512);
  pipe.InitBuffer(b1, nFrac * kFrac * 512);
  pipe.InitBuffer(a2, mFrac * kFrac * 512);
  pipe.InitBuffer(b2, nFrac * kFrac * 512);
  pipe.InitBuffer(co1, mFrac * nFrac * 1024);
  GlobalTensor<T> ga, gb;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(d.a.data()), d.a.size());
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(d.b.data()), d.b.size());
  LocalTensor<T> la1 = a1.Get<T>(), lb1 = b1.Get<T>(), la2 = a2.Get<T>(), lb2 = b2.Get<T>();
  LocalTensor<float> lc = co1.Get<float>();
  DataCopy(la1, ga, Nd2NzParams(1, c.m, c.k, 0, c.lda, mFrac * 16, 1, 0));
  DataCopy(lb1, gb, Nd2NzParams(1, c.n, c.k, 0, c.ldb, nFrac * 16, 1, 0));
  SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID1);
  WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID1);
  LoadData(la2, la1, LoadData2DParamsV2(0, 0, mFrac, kFrac, mFrac, mFrac, false, 0));
  LoadData(lb2, lb1, LoadData2DParamsV2(0, 0, nFrac, kFrac, nFrac, nFrac, false, 0));
  SetFlag<HardEvent::MTE1_M>(EVENT_ID1);
  WaitFlag<HardEvent::MTE1_M>(EVENT_ID1);
  MmadParams mp(c.m, c.n, c.k, 0, false, true);
  mp.disableGemv = c.m == 1 && bad != TailBad::kGemv;  // m = 1: the plain Nz product, not GEMV (Mmad.md)
  Mmad(lc, la2, lb2, mp);
  SetFlag<HardEvent::M_FIX>(EVENT_ID1);
  WaitFlag<HardEvent::M_FIX>(EVENT_ID1);
  FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp(c.nSize, c.mSize, c.srcStride, c.dstStride);
  if (bad == TailBad::kSrcStrideBelowM16) fp.srcStride = c.mSize;
  if (bad == TailBad::kDstStrideBelowN) fp.dstStride = c.nSize - 8;
  fp.dualDstCtl = c.dual ? 1 : 0;
  fp.subBlockId = c.sub == 1;
  const int rows = c.dual ? c.mSize / 2 : c.mSize;
  Fixpipe<float, float, kRowMajorUb>(LocalTensor<float>(TPosition::VECOUT, 0, rows * c.dstStride), lc[c.fixRow0 * 16],
                                     fp);
  CrossCoreSetFlag<2, PIPE_FIX>(kFlag);
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
  amct_sim::GmScope scope{{d.a.data(), d.a.size() * sizeof(T), false}, {d.b.data(), d.b.size() * sizeof(T), false},
                          {d.out.data(), d.out.size() * 4, true}};
  amct_sim::LaunchMix("cube_tails", 1, 2, [&] {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
      TailAic(d, bad);
    }
    if ASCEND_IS_AIV {
      UbRowsAiv(d.out, c.nSize, u);
    }
  });
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
    const std::string p = std::string("cube_tail_") + c.name + "_" + type;
    TailData<T> d(c);
    ExpectOk(p + "_runs", [&] { RunTail(d, TailBad::kNone); });
    Check(p + "_bitexact_vs_bruteforce", d.Matches());
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
  size_t AAt(int i) const { return static_cast<size_t>(i % 2) * kNdStrideA + static_cast<size_t>(i / 2) * kNdLda; }
  size_t BAt(int j) const {
    return static_cast<size_t>(j / kNdRowsB) * kNdStrideB + static_cast<size_t>(j % kNdRowsB) * kNdLdb;
  }
  bool Matches() const {
    auto av = [&](int i) { return [this, i](int kk) { return F(a[AAt(i) + kk]); }; };
    auto bv = [&](int j) { return [this, j](int kk) { return F(b[BAt(j) + kk]); }; };
    auto want = [&](int i, int j) { return DotInKOrder(av(i), bv(j), kNdK); };
    auto exact = [&](int i, int j, double* e) { return ExactIfIntegers(av(i), bv(j), kNdK, e); };
    return OutMatches(out, 32, 0, kNdM, kNdN, want, exact);
  }
};

template <class T>
void NdAic(NdData<T>& d, NdBad bad) {
  TPipe pipe;
  TBuf<TPosition::A1> a1;
  TBuf<TPosition::B1> b1;
  TBuf<TPosition::A2> a2;
  TBuf<TPosition::B2> b2;
  TBuf<TPosition::CO1> co1;
  pipe.InitBuffer(a1, kNdM * kNdK16 * sizeof(T));
  pipe.InitBuffer(b1, kNdC0B * kNdK16 * sizeof(T));
  pipe.InitBuffer(a2, kNdM * kNdK16 * sizeof(T));
  pipe.InitBuffer(b2, 32 * kNdK16 * sizeof(T));
  pipe.InitBuffer(co1, kNdM * 32 * sizeof(float));
  GlobalTensor<T> ga, gb;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(d.a.data()), d.a.size());
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(d.b.data()), d.b.size());
  LocalTensor<T> la1 = a1.Get<T>(), lb1 = b1.Get<T>(), la2 = a2.Get<T>(), lb2 = b2.Get<T>();
  LocalTensor<float> lc = co1.Get<float>();
  // The negative twins: A's second NZ matrix one 32-B row further (its last row leaves the L1 tensor), or
  // B's third ND matrix read past the end of the GlobalTensor.
  const uint32_t dstMatrixA = bad == NdBad::kMatrixBeyondL1 ? 32 : 16;
  const uint64_t srcMatrixB = bad == NdBad::kSrcMatrixBeyondGm ? d.b.size() / 2 : kNdStrideB;
  DataCopy(la1, ga, Nd2NzParams(2, kNdRowsA, kNdK, kNdStrideA, kNdLda, kNdM, 2, dstMatrixA));
  DataCopy(lb1, gb, Nd2NzParams(kNdNumB, kNdRowsB, kNdK, srcMatrixB, kNdLdb, kNdC0B, 1, kNdRowsB * 16));
  SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID2);
  WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID2);
  LoadData(la2, la1, LoadData2DParamsV2(0, 0, kNdM / 16, kNdK16 / 16, kNdM / 16, kNdM / 16, false, 0));
  LoadData(lb2, lb1, LoadData2DParamsV2(0, 0, 2, kNdK16 / 16, kNdC0B / 16, 2, false, 0));
  SetFlag<HardEvent::MTE1_M>(EVENT_ID2);
  WaitFlag<HardEvent::MTE1_M>(EVENT_ID2);
  Mmad(lc, la2, lb2, MmadParams(kNdM, kNdN, kNdK16, 0, false, true));
  SetFlag<HardEvent::M_FIX>(EVENT_ID2);
  WaitFlag<HardEvent::M_FIX>(EVENT_ID2);
  FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> fp(32, kNdM, kNdM, 32);
  fp.dualDstCtl = 1;
  Fixpipe<float, float, kRowMajorUb>(LocalTensor<float>(TPosition::VECOUT, 0, kNdM / 2 * 32), lc, fp);
  CrossCoreSetFlag<2, PIPE_FIX>(kFlag);
}

template <class T>
void RunNd(NdData<T>& d, NdBad bad) {
  amct_sim::GmScope scope{{d.a.data(), d.a.size() * sizeof(T), false}, {d.b.data(), d.b.size() * sizeof(T), false},
                          {d.out.data(), d.out.size() * 4, true}};
  amct_sim::LaunchMix("cube_nd2nz_matrices", 1, 2, [&] {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
      NdAic(d, bad);
    }
    if ASCEND_IS_AIV {
      UbRowsAiv(d.out, 32, UbRows{{kNdM / 2, kNdM / 2}, {0, kNdM / 2}, 32, 32});
    }
  });
}

template <class T>
void Nd2NzMatrixTests(const char* type) {
  const std::string p = std::string("cube_nd2nz_nd_num_strides_") + type;
  NdData<T> d;
  ExpectOk(p + "_runs", [&] { RunNd(d, NdBad::kNone); });
  Check(p + "_bitexact_vs_bruteforce", d.Matches());
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
