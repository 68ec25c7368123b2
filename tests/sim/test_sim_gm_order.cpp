// Kernel-sim tests of GM ordering between the cores of one AI core (sim_gm_order.h): in a MIX
// launch, GM that one core writes and another reads (or writes) must be separated by cross-core
// flags set on the pipe that made the access (or after it completed) and waited for by the other
// core. Each guard has its passing twin with the right flag; the passing runs also check the data
// that went through GM against a brute-force matmul.
#define ASCENDC_CUBE_ONLY
#include "sim_test.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

using namespace AscendC;
using simtest::Check;
using simtest::ExpectError;
using simtest::ExpectOk;

namespace {

constexpr int kN = 16;  // C = A (16 x 16) * B (16 x 16), bf16 in, fp32 out
constexpr uint16_t kCReady = 1, kAReady = 2, kBRead = 3, kAivMeet = 4;

using ABf16 = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>;
using CF32 = MatmulType<TPosition::GM, CubeFormat::ND, float>;

TCubeTiling SmallTiling() {
  matmul_tiling::MatmulApiTiling t;
  using matmul_tiling::CubeFormat;
  using matmul_tiling::DataType;
  using matmul_tiling::TPosition;
  t.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_BF16);
  t.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_BF16);
  t.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
  t.SetShape(kN, kN, kN);
  t.SetOrgShape(kN, kN, kN);
  t.SetBufferSpace(-1, -1, -1);
  TCubeTiling tiling;
  if (t.GetTiling(tiling) != 0) throw std::runtime_error("GetTiling failed");
  return tiling;
}

struct Buffers {
  std::vector<bfloat16_t> aSrc = Pattern(3);  // read-only: the AIVs stage it into aWs
  std::vector<bfloat16_t> aWs = std::vector<bfloat16_t>(kN * kN, bfloat16_t(0.0f));
  std::vector<bfloat16_t> b = Pattern(5);     // writable: the WAR case overwrites it
  std::vector<float> c = std::vector<float>(kN * kN, -1.0f);
  std::vector<float> out = std::vector<float>(kN * kN, -1.0f);
  TCubeTiling tiling = SmallTiling();

  static std::vector<bfloat16_t> Pattern(int mul) {
    std::vector<bfloat16_t> v(kN * kN);
    for (int i = 0; i < kN * kN; ++i) v[i] = bfloat16_t(static_cast<float>((i * mul) % 9 - 4) * 0.5f);
    return v;
  }
  // C = aSrc * b in double (the products and sums of these small values are exact in fp32)
  bool OutIsProduct() const {
    for (int i = 0; i < kN; ++i) {
      for (int j = 0; j < kN; ++j) {
        double s = 0;
        for (int k = 0; k < kN; ++k) {
          s += static_cast<double>(static_cast<float>(aSrc[i * kN + k])) * static_cast<float>(b[k * kN + j]);
        }
        if (out[i * kN + j] != static_cast<float>(s)) return false;
      }
    }
    return true;
  }
};

template <class T>
GlobalTensor<T> Gm(std::vector<T>& v) {
  GlobalTensor<T> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(v.data()), v.size());
  return g;
}

// The AIC: C = A * B with A from `a` (the workspace or the source), IterateAll into c.
void CubeMatmul(Buffers& d, std::vector<bfloat16_t>& a) {
  TPipe pipe;
  Matmul<ABf16, ABf16, CF32> mm;
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &d.tiling);
  mm.SetTensorA(Gm(a));
  mm.SetTensorB(Gm(d.b));
  mm.IterateAll(Gm(d.c));
  mm.End();
}

// An AIV: its half of the rows of src (GM) -> dst (GM) through UB.
template <class T>
void AivCopyHalf(std::vector<T>& src, std::vector<T>& dst) {
  TPipe pipe;
  TBuf<TPosition::VECIN> buf;
  const uint32_t half = kN * kN / 2;
  pipe.InitBuffer(buf, half * sizeof(T));
  LocalTensor<T> ub = buf.Get<T>();
  const uint64_t first = static_cast<uint64_t>(GetSubBlockIdx()) * half;
  DataCopy(ub, Gm(src)[first], half);
  SetFlag<HardEvent::MTE2_MTE3>(0);
  WaitFlag<HardEvent::MTE2_MTE3>(0);
  DataCopy(Gm(dst)[first], ub, half);
  SetFlag<HardEvent::MTE3_MTE2>(0);  // the next call reloads the same UB
  WaitFlag<HardEvent::MTE3_MTE2>(0);
}

// ---- AIC writes C (FIX), the AIVs read it (MTE2) ----------------------------------------------
enum class CubeToVector { kFixFlag, kNoFlag, kMte2Flag, kBarrierThenMte2Flag };

void RunCubeToVector(Buffers& d, CubeToVector v) {
  amct_sim::GmScope scope{{d.aSrc.data(), d.aSrc.size() * 2, false}, {d.b.data(), d.b.size() * 2, false},
                          {&d.tiling, sizeof(d.tiling), false},  {d.c.data(), d.c.size() * 4, true},
                          {d.out.data(), d.out.size() * 4, true}};
  amct_sim::LaunchMix("cube_to_vector", 1, 2, [&] {
    if ASCEND_IS_AIC {
      CubeMatmul(d, d.aSrc);
      if (v == CubeToVector::kFixFlag) CrossCoreSetFlag<2, PIPE_FIX>(kCReady);
      if (v == CubeToVector::kMte2Flag) CrossCoreSetFlag<2, PIPE_MTE2>(kCReady);
      if (v == CubeToVector::kBarrierThenMte2Flag) {
        PipeBarrier<PIPE_ALL>();
        CrossCoreSetFlag<2, PIPE_MTE2>(kCReady);
      }
    } else {
      if (v != CubeToVector::kNoFlag) CrossCoreWaitFlag(kCReady);
      AivCopyHalf(d.c, d.out);
    }
  });
}

void TestCubeToVector() {
  {
    Buffers d;
    if (ExpectOk("gm_order_cube_to_vector_fix_flag", [&] { RunCubeToVector(d, CubeToVector::kFixFlag); })) {
      Check("gm_order_cube_to_vector_values", d.OutIsProduct());
    }
  }
  {
    Buffers d;
    ExpectOk("gm_order_cube_to_vector_barrier_then_other_pipe",
             [&] { RunCubeToVector(d, CubeToVector::kBarrierThenMte2Flag); });
  }
  {
    Buffers d;
    ExpectError("gm_order_cube_to_vector_without_flag",
                {"kernel cube_to_vector", "sync: AIC 0 writes (Matmul output, FIX) GM bytes",
                 "reads (MTE2) them, and no cross-core flag orders", "PIPE_FIX"},
                [&] { RunCubeToVector(d, CubeToVector::kNoFlag); });
  }
  {
    Buffers d;
    ExpectError("gm_order_cube_to_vector_flag_on_wrong_pipe", {"AIC 0 writes (Matmul output, FIX)", "PIPE_FIX"},
                [&] { RunCubeToVector(d, CubeToVector::kMte2Flag); });
  }
}

// ---- the AIVs write A (MTE3), the AIC's Matmul reads it (MTE2) ---------------------------------
enum class VectorToCube { kMte3Flag, kVFlag, kVFlagAfterMte3V, kSetBeforeWrite };

void RunVectorToCube(Buffers& d, VectorToCube v) {
  amct_sim::GmScope scope{{d.aSrc.data(), d.aSrc.size() * 2, false}, {d.aWs.data(), d.aWs.size() * 2, true},
                          {d.b.data(), d.b.size() * 2, false},       {&d.tiling, sizeof(d.tiling), false},
                          {d.c.data(), d.c.size() * 4, true},        {d.out.data(), d.out.size() * 4, true}};
  amct_sim::LaunchMix("vector_to_cube", 1, 2, [&] {
    if ASCEND_IS_AIC {
      CrossCoreWaitFlag(kAReady);  // both AIVs (mode 2)
      CubeMatmul(d, d.aWs);
      CrossCoreSetFlag<2, PIPE_FIX>(kCReady);
    } else {
      if (v == VectorToCube::kSetBeforeWrite) CrossCoreSetFlag<2, PIPE_MTE3>(kAReady);
      AivCopyHalf(d.aSrc, d.aWs);
      if (v == VectorToCube::kMte3Flag) CrossCoreSetFlag<2, PIPE_MTE3>(kAReady);
      if (v == VectorToCube::kVFlagAfterMte3V) {
        SetFlag<HardEvent::MTE3_V>(0);
        WaitFlag<HardEvent::MTE3_V>(0);
      }
      if (v == VectorToCube::kVFlag || v == VectorToCube::kVFlagAfterMte3V) CrossCoreSetFlag<2, PIPE_V>(kAReady);
      CrossCoreWaitFlag(kCReady);
      AivCopyHalf(d.c, d.out);
    }
  });
}

void TestVectorToCube() {
  {
    Buffers d;
    if (ExpectOk("gm_order_vector_to_cube_mte3_flag", [&] { RunVectorToCube(d, VectorToCube::kMte3Flag); })) {
      Check("gm_order_vector_to_cube_values", d.OutIsProduct());
    }
  }
  {
    Buffers d;
    ExpectOk("gm_order_vector_to_cube_v_flag_after_mte3_v",
             [&] { RunVectorToCube(d, VectorToCube::kVFlagAfterMte3V); });
  }
  {
    Buffers d;
    ExpectError("gm_order_vector_to_cube_v_flag_without_mte3_v",
                {"sync: AIV", "writes (MTE3) GM bytes", "AIC 0 reads (Matmul input, MTE2) them", "PIPE_MTE3"},
                [&] { RunVectorToCube(d, VectorToCube::kVFlag); });
  }
  {
    Buffers d;
    ExpectError("gm_order_vector_to_cube_flag_before_write", {"writes (MTE3) GM bytes", "AIC 0 reads"},
                [&] { RunVectorToCube(d, VectorToCube::kSetBeforeWrite); });
  }
}

// ---- write after read: the AIC reads B, then AIV 0 overwrites it --------------------------------
void RunWriteAfterRead(Buffers& d, bool ordered) {
  amct_sim::GmScope scope{{d.aSrc.data(), d.aSrc.size() * 2, false}, {d.b.data(), d.b.size() * 2, true},
                          {&d.tiling, sizeof(d.tiling), false},      {d.c.data(), d.c.size() * 4, true}};
  amct_sim::LaunchMix("write_after_read", 1, 2, [&] {
    if ASCEND_IS_AIC {
      CubeMatmul(d, d.aSrc);
      if (ordered) CrossCoreSetFlag<2, PIPE_MTE2>(kBRead);  // the loads of B are done
    } else {
      if (ordered) CrossCoreWaitFlag(kBRead);
      if (GetSubBlockIdx() == 0) AivCopyHalf(d.aSrc, d.b);  // rows 0-7 of B := rows 0-7 of A
    }
  });
}

void TestWriteAfterRead() {
  {
    Buffers d;
    ExpectOk("gm_order_write_after_read_ordered", [&] { RunWriteAfterRead(d, true); });
  }
  {
    Buffers d;
    ExpectError("gm_order_write_after_read_unordered",
                {"AIV 0 (AIC 0, sub-block 0) writes (MTE3) GM bytes", "AIC 0 reads (Matmul input, MTE2) them"},
                [&] { RunWriteAfterRead(d, false); });
  }
}

// ---- AIV 0 writes, AIV 1 reads (mode 1 meets the two AIVs of an AI core) -------------------------
enum class VectorToVector { kMeetAfterWrite, kNoMeet, kMeetBeforeWrite };

void RunVectorToVector(VectorToVector v, uint32_t blocks, bool checkData = true) {
  std::vector<float> ws(static_cast<size_t>(blocks) * 64, 0.0f);
  std::vector<float> src(64, 0.0f);
  std::vector<float> out(static_cast<size_t>(blocks) * 64, -1.0f);
  for (int i = 0; i < 64; ++i) src[i] = static_cast<float>(i);
  amct_sim::GmScope scope{{src.data(), src.size() * 4, false}, {ws.data(), ws.size() * 4, true},
                          {out.data(), out.size() * 4, true}};
  amct_sim::LaunchMix("vector_to_vector", blocks, 2, [&] {
    if ASCEND_IS_AIC return;
    TPipe pipe;
    TBuf<TPosition::VECIN> buf;
    pipe.InitBuffer(buf, 64 * sizeof(float));
    LocalTensor<float> ub = buf.Get<float>();
    const uint64_t mine = static_cast<uint64_t>(GetBlockIdx() / 2) * 64;
    if (v == VectorToVector::kMeetBeforeWrite) {
      CrossCoreSetFlag<1, PIPE_MTE3>(kAivMeet);
      CrossCoreWaitFlag(kAivMeet);
    }
    if (GetSubBlockIdx() == 0) {  // AIV 0 stages src into its AI core's slice of ws
      DataCopy(ub, Gm(src), 64);
      SetFlag<HardEvent::MTE2_MTE3>(0);
      WaitFlag<HardEvent::MTE2_MTE3>(0);
      DataCopy(Gm(ws)[mine], ub, 64);
    }
    if (v == VectorToVector::kMeetAfterWrite) {
      CrossCoreSetFlag<1, PIPE_MTE3>(kAivMeet);
      CrossCoreWaitFlag(kAivMeet);
    }
    if (GetSubBlockIdx() == 1) {  // AIV 1 reads it back and stores it
      DataCopy(ub, Gm(ws)[mine], 64);
      SetFlag<HardEvent::MTE2_MTE3>(0);
      WaitFlag<HardEvent::MTE2_MTE3>(0);
      DataCopy(Gm(out)[mine], ub, 64);
    }
  });
  for (uint32_t i = 0; i < blocks * 64 && checkData; ++i) {
    if (out[i] != static_cast<float>(i % 64)) throw std::runtime_error("vector_to_vector: wrong data in out");
  }
}

void TestVectorToVector() {
  ExpectOk("gm_order_vector_to_vector_meet_after_write",
           [&] { RunVectorToVector(VectorToVector::kMeetAfterWrite, 3); });
  ExpectError("gm_order_vector_to_vector_without_meet",
              {"AIV 0 (AIC 0, sub-block 0) writes (MTE3) GM bytes", "AIV 1 (AIC 0, sub-block 1) reads (MTE2) them"},
              [&] { RunVectorToVector(VectorToVector::kNoMeet, 1); });
  ExpectError("gm_order_vector_to_vector_meet_before_write", {"writes (MTE3) GM bytes", "reads (MTE2) them"},
              [&] { RunVectorToVector(VectorToVector::kMeetBeforeWrite, 1); });
  ExpectOk("gm_order_check_disabled_by_env", [&] {
    setenv("AMCT_SIM_CHECK_SYNC", "0", 1);
    try {
      RunVectorToVector(VectorToVector::kNoMeet, 1, false);
    } catch (...) {
      unsetenv("AMCT_SIM_CHECK_SYNC");
      throw;
    }
    unsetenv("AMCT_SIM_CHECK_SYNC");
  });
}

// ---- within one core (the vector-launch hazard model of sim_context.h, GmDmaAccess) ----------------
// MTE3 writes GM, MTE2 reads it back: ordered by MTE3_MTE2 or PipeBarrier<PIPE_ALL>; a scalar
// GlobalTensor::GetValue of the bytes is refused whatever the flags (the [C] rule: the scalar unit
// reads GM through its data cache).
enum class InCore { kNothing, kFlag, kBarrierAll, kBarrierMte3, kScalarRead };

void RunInCore(InCore v) {
  std::vector<float> g(64, 0.0f);
  amct_sim::GmScope scope{{g.data(), g.size() * 4, true}};
  amct_sim::Launch("in_core", 1, [&] {
    TPipe pipe;
    TBuf<TPosition::VECIN> buf, back;
    pipe.InitBuffer(buf, 64 * sizeof(float));
    pipe.InitBuffer(back, 64 * sizeof(float));
    LocalTensor<float> ub = buf.Get<float>();
    Duplicate(ub, 3.0f, 64);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(Gm(g), ub, 64);
    if (v == InCore::kFlag) {
      SetFlag<HardEvent::MTE3_MTE2>(0);
      WaitFlag<HardEvent::MTE3_MTE2>(0);
    }
    if (v == InCore::kBarrierAll) PipeBarrier<PIPE_ALL>();
    if (v == InCore::kBarrierMte3) PipeBarrier<PIPE_MTE3>();  // completes MTE3 for MTE3 only
    if (v == InCore::kScalarRead) {
      PipeBarrier<PIPE_ALL>();
      if (Gm(g).GetValue(5) != 3.0f) throw std::runtime_error("in_core: scalar value");
      return;
    }
    DataCopy(back.Get<float>(), Gm(g), 64);  // into other UB: only the GM bytes conflict
  });
}

void TestInCore() {
  ExpectOk("gm_order_in_core_mte3_mte2_flag", [] { RunInCore(InCore::kFlag); });
  ExpectOk("gm_order_in_core_barrier_all", [] { RunInCore(InCore::kBarrierAll); });
  ExpectError("gm_order_in_core_without_sync", {"DataCopy(GM->UB)", "reads GM bytes", "HardEvent::MTE3_MTE2"},
              [] { RunInCore(InCore::kNothing); });
  ExpectError("gm_order_in_core_barrier_of_mte3_only", {"DataCopy(GM->UB)", "HardEvent::MTE3_MTE2"},
              [] { RunInCore(InCore::kBarrierMte3); });
  ExpectError("gm_order_in_core_scalar_read_of_written_gm", {"GlobalTensor::GetValue", "GM unwritten during the launch"},
              [] { RunInCore(InCore::kScalarRead); });
}

}  // namespace

int main() {
  TestInCore();
  TestCubeToVector();
  TestVectorToCube();
  TestWriteAfterRead();
  TestVectorToVector();
  return simtest::Finish();
}
