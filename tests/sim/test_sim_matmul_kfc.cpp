// Kernel-sim tests of the KFC form of the Matmul API (no ASCENDC_CUBE_ONLY): the AIVs of a MIX
// launch call the Matmul, REGIST_MATMUL_OBJ makes the AIC return, and results may go straight
// into the calling AIV's UB (the L0C -> UB path), ordered for the vector pipe by a VECIN queue.
#include <cmath>
#include <random>

#include "sim_test.h"
#include "lib/matmul_intf.h"
#include "sim_kfc_test.h"

using namespace AscendC;
using simtest::Check;
using simtest::ExpectError;
using simtest::ExpectOk;

namespace {

using AType = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>;
using BType = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t, true>;
using CUb = MatmulType<TPosition::VECIN, CubeFormat::ND, float>;

constexpr int kM = 64, kN = 96, kK = 80;  // per AIV: rows [sub * 32, sub * 32 + 32)

float Bf(bfloat16_t v) { return static_cast<float>(v); }

TCubeTiling TilingFor(int m, int n, int k) { return simtest::KfcUbTiling(m, n, k, kM); }

struct Data {
  std::vector<bfloat16_t> a, b;  // a [kM, kK], b [kN, kK] (transposed)
  std::vector<float> out = std::vector<float>(kM * kN, -7.0f);
  TCubeTiling t = TilingFor(kM / 2, kN, kK);
  Data() {
    std::mt19937 g(3);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (int i = 0; i < kM * kK; ++i) a.push_back(bfloat16_t(d(g)));
    for (int i = 0; i < kN * kK; ++i) b.push_back(bfloat16_t(d(g)));
  }
};

enum class Variant { kIterate, kIterateAll, kNoQueueEdge, kSmallUb };

// Each AIV: its 32 rows of A * B^T into UB (through a VECIN queue), times 2 by the vector unit, to GM.
void Kernel(Data& d, Variant v) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  TPipe pipe;
  Matmul<AType, BType, CUb> mm;
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &d.t);
  const int sub = static_cast<int>(GetSubBlockIdx());
  const int rows = kM / 2;
  GlobalTensor<bfloat16_t> ga, gb;
  GlobalTensor<float> gout;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.a.data()) + sub * rows * kK);
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.b.data()));
  gout.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.out.data()) + sub * rows * kN, rows * kN);
  TQue<TPosition::VECIN, 1> inQ;
  TQue<TPosition::VECOUT, 1> outQ;
  const uint32_t elems = v == Variant::kSmallUb ? 64 : rows * kN;
  pipe.InitBuffer(inQ, 1, elems * sizeof(float));
  pipe.InitBuffer(outQ, 1, rows * kN * sizeof(float));
  mm.SetTensorA(ga);
  mm.SetTensorB(gb, true);
  LocalTensor<float> scores = inQ.AllocTensor<float>();
  if (v == Variant::kIterateAll || v == Variant::kSmallUb) {
    mm.IterateAll(scores);
  } else {
    // tiles are baseM x baseN = 32 x 96 here: one tile per AIV
    while (mm.Iterate()) mm.GetTensorC(scores);
  }
  mm.End();
  if (v != Variant::kNoQueueEdge) {
    inQ.EnQue(scores);
    scores = inQ.DeQue<float>();
  }
  LocalTensor<float> y = outQ.AllocTensor<float>();
  Muls(y, scores, 2.0f, rows * kN);
  outQ.EnQue(y);
  y = outQ.DeQue<float>();
  DataCopy(gout, y, rows * kN);
  outQ.FreeTensor(y);
  inQ.FreeTensor(scores);
}

bool MatchesBruteForce(const Data& d) {
  for (int i = 0; i < kM; ++i) {
    for (int j = 0; j < kN; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < kK; ++k) acc = acc + Bf(d.a[i * kK + k]) * Bf(d.b[j * kK + k]);
      if (simtest::FloatBits(acc * 2.0f) != simtest::FloatBits(d.out[i * kN + j])) return false;
    }
  }
  return true;
}

void Run(Data& d, Variant v) {
  amct_sim::GmScope scope{{d.a.data(), d.a.size() * 2, false}, {d.b.data(), d.b.size() * 2, false},
                          {&d.t, sizeof(d.t), false}, {d.out.data(), d.out.size() * 4, true}};
  amct_sim::LaunchMix("kfc_scores", 1, 2, [&] { Kernel(d, v); });
}

}  // namespace

int main() {
  {
    Data d;
    ExpectOk("kfc_iterate_get_tensor_c_ub_runs", [&] { Run(d, Variant::kIterate); });
    Check("kfc_iterate_get_tensor_c_ub_values", MatchesBruteForce(d));
  }
  {
    Data d;
    ExpectOk("kfc_iterate_all_ub_runs", [&] { Run(d, Variant::kIterateAll); });
    Check("kfc_iterate_all_ub_values", MatchesBruteForce(d));
  }
  {
    Data d;
    ExpectError("kfc_guard_vector_reads_ub_without_queue_edge", {"sync", "MTE2_V"}, [&] { Run(d, Variant::kNoQueueEdge); });
  }
  {
    Data d;
    ExpectError("kfc_guard_ub_output_too_small", {"bounds", "co2Local"}, [&] { Run(d, Variant::kSmallUb); });
  }
  {
    Data d;
    ExpectError("kfc_guard_needs_mix_launch", {"needs a MIX launch with AIVs"}, [&] {
      amct_sim::GmScope scope{};
      simtest::Run1([&] {
        TPipe pipe;
        Matmul<AType, BType, CUb> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &d.t);
      });
    });
  }
  {
    Data d;
    ExpectError("kfc_guard_matmul_on_aic", {"the AIVs of a MIX launch call it"}, [&] {
      amct_sim::GmScope scope{};
      amct_sim::LaunchMix("kfc_aic", 1, 2, [&] {
        if ASCEND_IS_AIC {
          Matmul<AType, BType, CUb> mm;
          mm.Init(&d.t);
        }
      });
    });
  }
  {
    // cost: the AIV waits for its tile; two AIVs share one AIC (each request at 2x its cost)
    Data d;
    amct_sim::CostStart(__NPU_ARCH__, 0);
    Run(d, Variant::kIterate);
    const auto recs = amct_sim::CostStop();
    const double fractals = (32 / 16) * (96 / 16) * (80 / 16);
    Check("kfc_cost_m_pipe_charged_at_ratio", recs.size() == 1 && recs[0].busy[5] >= 2 * fractals &&
                                                  recs[0].busy[5] < 2 * fractals + 200,
          recs.empty() ? "no record" : std::to_string(recs[0].busy[5]));
  }
  return simtest::Finish();
}
