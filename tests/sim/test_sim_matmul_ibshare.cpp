// Kernel-sim tests of the Matmul API's IBShare template (KFC form, MIX 1:2): B marked ibShare is
// shared in L1 by the two AIVs' Matmul objects of an AI core; their IterateAll calls pair, an AIV
// without work sends a fake message; each guard with its passing twin, values against a brute-force
// matmul, and the cost of the shared B's GM -> L1 load charged once per pair.
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
using BShared = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t, true, LayoutMode::NONE, true>;
using BPlain = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t, true>;
using CUb = MatmulType<TPosition::VECIN, CubeFormat::ND, float>;
using SharedMatmul = Matmul<AType, BShared, CUb, CUb, CFG_IBSHARE_NORM>;
using PlainMatmul = Matmul<AType, BPlain, CUb, CUb, CFG_NORM>;

constexpr int kM = 64, kN = 64, kK = 64;  // per AIV: rows [sub * 32, sub * 32 + 32), all of B

float Bf(bfloat16_t v) { return static_cast<float>(v); }

TCubeTiling TilingFor(int m, int n, int k) { return simtest::KfcUbTiling(m, n, k, kM); }

struct Data {
  std::vector<bfloat16_t> a, b;  // a [kM, kK], b [2 * kN, kK] (transposed; the second half: another B)
  std::vector<float> out = std::vector<float>(kM * kN, -7.0f);
  TCubeTiling t = TilingFor(kM / 2, kN, kK);
  Data() {
    std::mt19937 g(5);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (int i = 0; i < kM * kK; ++i) a.push_back(bfloat16_t(d(g)));
    for (int i = 0; i < 2 * kN * kK; ++i) b.push_back(bfloat16_t(d(g)));
  }
};

enum class Variant {
  kPaired,          // both AIVs: one IterateAll with the same B
  kFakeOnSub1,      // AIV 1 sends the fake message instead
  kOtherB,          // AIV 1 names another B: the pair disagrees
  kExtraOnSub0,     // AIV 0 makes one IterateAll more than AIV 1
  kNoEnd,           // AIV 0's request has no partner, and nobody calls End
  kIterate,         // Iterate / GetTensorC with an ibShare B
  kFakeWithoutShare,  // fakeMsg on a Matmul without IBShare
};

template <class MM>
void Request(MM& mm, Data& d, LocalTensor<float>& scores, int sub, bool otherB) {
  GlobalTensor<bfloat16_t> ga, gb;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.a.data()) + sub * (kM / 2) * kK);
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.b.data()) + (otherB ? kN * kK : 0));
  mm.SetTensorA(ga);
  mm.SetTensorB(gb, true);
  mm.IterateAll(scores);
}

// Each AIV: its 32 rows of A * B^T into UB (through a VECIN queue), copied to GM.
template <class MM>
void Kernel(Data& d, Variant v) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  TPipe pipe;
  MM mm;
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &d.t);
  const int sub = static_cast<int>(GetSubBlockIdx());
  const int rows = kM / 2;
  GlobalTensor<float> gout;
  gout.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.out.data()) + sub * rows * kN, rows * kN);
  TQue<TPosition::VECIN, 1> inQ;
  pipe.InitBuffer(inQ, 1, rows * kN * sizeof(float));
  LocalTensor<float> scores = inQ.AllocTensor<float>();
  bool wrote = true;
  if (v == Variant::kIterate) {
    GlobalTensor<bfloat16_t> ga, gb;
    ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.a.data()));
    gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.b.data()));
    mm.SetTensorA(ga);
    mm.SetTensorB(gb, true);
    while (mm.Iterate()) mm.GetTensorC(scores);
  } else if ((v == Variant::kFakeOnSub1 || v == Variant::kFakeWithoutShare) && sub == 1) {
    mm.IterateAll(gout, 0, false, false, /*fakeMsg=*/true);
    wrote = false;
  } else {
    Request(mm, d, scores, sub, v == Variant::kOtherB && sub == 1);
    if (v == Variant::kExtraOnSub0 && sub == 0) {
      PipeBarrier<PIPE_MTE2>();  // the second request rewrites the first one's UB output
      Request(mm, d, scores, sub, false);
    }
  }
  if (v == Variant::kNoEnd) {
    if (sub == 0) {
      PipeBarrier<PIPE_MTE2>();
      Request(mm, d, scores, sub, false);
    }
  } else {
    mm.End();
  }
  inQ.EnQue(scores);
  scores = inQ.DeQue<float>();
  if (wrote) {
    TQue<TPosition::VECOUT, 1> outQ;
    pipe.InitBuffer(outQ, 1, rows * kN * sizeof(float));
    LocalTensor<float> y = outQ.AllocTensor<float>();
    Adds(y, scores, 0.0f, rows * kN);
    outQ.EnQue(y);
    y = outQ.DeQue<float>();
    DataCopy(gout, y, rows * kN);
    outQ.FreeTensor(y);
  }
  inQ.FreeTensor(scores);
}

// Rows [r0, r1) of out against the brute-force dots (fp32 in K order) with the first B.
bool MatchesBruteForce(const Data& d, int r0, int r1) {
  for (int i = r0; i < r1; ++i) {
    for (int j = 0; j < kN; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < kK; ++k) acc = acc + Bf(d.a[i * kK + k]) * Bf(d.b[j * kK + k]);
      if (simtest::FloatBits(acc + 0.0f) != simtest::FloatBits(d.out[i * kN + j])) return false;
    }
  }
  return true;
}

bool Untouched(const Data& d, int r0, int r1) {
  for (int i = r0 * kN; i < r1 * kN; ++i) {
    if (d.out[i] != -7.0f) return false;
  }
  return true;
}

template <class MM = SharedMatmul>
void Run(Data& d, Variant v, uint32_t ratio = 2) {
  amct_sim::GmScope scope{{d.a.data(), d.a.size() * 2, false}, {d.b.data(), d.b.size() * 2, false},
                          {&d.t, sizeof(d.t), false}, {d.out.data(), d.out.size() * 4, true}};
  amct_sim::LaunchMix("ibshare_scores", 1, ratio, [&] { Kernel<MM>(d, v); });
}

// MTE2 busy cycles (the largest over the cores) of one run.
template <class MM>
double Mte2Busy(Variant v) {
  Data d;
  amct_sim::CostStart(__NPU_ARCH__, 0);
  Run<MM>(d, v);
  const auto recs = amct_sim::CostStop();
  return recs.size() == 1 ? recs[0].busy[amct_sim::cost::kMte2] : -1.0;
}

}  // namespace

int main() {
  {
    Data d;
    ExpectOk("ibshare_paired_iterate_all_runs", [&] { Run(d, Variant::kPaired); });
    Check("ibshare_paired_iterate_all_values", MatchesBruteForce(d, 0, kM));
  }
  {
    Data d;
    ExpectOk("ibshare_fake_message_runs", [&] { Run(d, Variant::kFakeOnSub1); });
    Check("ibshare_fake_message_values", MatchesBruteForce(d, 0, kM / 2) && Untouched(d, kM / 2, kM),
          "AIV 0's rows must be its scores, AIV 1's (the fake) untouched");
  }
  {
    Data d;
    ExpectError("ibshare_guard_pair_disagrees_on_b", {"IBShare", "disagree on the shared matrix B"},
                [&] { Run(d, Variant::kOtherB); });
  }
  {
    Data d;
    ExpectError("ibshare_guard_unpaired_at_end", {"IBShare: at End", "1 IterateAll request(s) of sub-block 0"},
                [&] { Run(d, Variant::kExtraOnSub0); });
  }
  {
    Data d;
    ExpectError("ibshare_guard_unpaired_at_launch_end", {"never paired", "fakeMsg"}, [&] { Run(d, Variant::kNoEnd); });
  }
  {
    Data d;
    ExpectError("ibshare_guard_iterate_is_not_paired", {"IBShare", "use IterateAll"},
                [&] { Run(d, Variant::kIterate); });
  }
  {
    Data d;
    ExpectError("ibshare_guard_fake_without_ibshare", {"fakeMsg = true outside IBShare"},
                [&] { Run<PlainMatmul>(d, Variant::kFakeWithoutShare); });
  }
  {
    Data d;
    ExpectError("ibshare_guard_needs_mix_1_2", {"IBShare", "MIX 1:2"}, [&] {
      amct_sim::GmScope scope{{&d.t, sizeof(d.t), false}};
      amct_sim::LaunchMix("ibshare_1_1", 1, 1, [&] {
        TPipe pipe;
        SharedMatmul mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &d.t);
      });
    });
  }
  {
    // B of 256 x 2048 bf16 (1 MiB) cannot be whole in L1 (512 KB); the twin above (64 x 64) is.
    Data d;
    d.t = TilingFor(32, 256, 2048);
    ExpectError("ibshare_guard_shared_b_not_whole_in_l1", {"IBShare", "loaded whole in L1"}, [&] {
      amct_sim::GmScope scope{{&d.t, sizeof(d.t), false}};
      amct_sim::LaunchMix("ibshare_big_b", 1, 2, [&] {
        TPipe pipe;
        SharedMatmul mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &d.t);
      });
    });
  }
  {
    // Cost: the paired requests share B's GM -> L1 load (half charged to each, at the AIC's
    // ratio 2), the plain ones each load it: the per-AIV MTE2 differs by B's bytes at the GM rate.
    Data d;
    int32_t bFull = 0;  // B elements in full base tiles (only those are cached for the pair)
    for (int32_t n0 = 0; n0 < kN; n0 += d.t.baseN) bFull += (kN - n0 >= d.t.baseN ? d.t.baseN : 0) * kK;
    const double rate = amct_sim::cost::TableForArch(__NPU_ARCH__)->cubeGmBytesPerCycle.value;
    const double shared = Mte2Busy<SharedMatmul>(Variant::kPaired), plain = Mte2Busy<PlainMatmul>(Variant::kPaired);
    const double want = 2.0 * bFull / rate;  // 2 bytes per bf16 element, a whole B per AIV less
    Check("ibshare_cost_b_loaded_once_per_pair", bFull > 0 && std::fabs((plain - shared) - want) < 1e-6 * want + 1e-9,
          std::to_string(plain) + " - " + std::to_string(shared) + " vs " + std::to_string(want));
  }
  return simtest::Finish();
}
