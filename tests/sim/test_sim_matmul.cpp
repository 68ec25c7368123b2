// Kernel-sim tests of the cube side: the Matmul high-level API (numbers against brute-force loops
// written here, guards), the host tiling API, MIX launches with cross-core flags (semantics,
// deadlock and counter guards) and the cube's cost model (a plain bf16 matmul estimate).
#define ASCENDC_CUBE_ONLY
#include <cmath>
#include <random>

#include "sim_test.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

using namespace AscendC;
using simtest::Check;
using simtest::ExpectError;
using simtest::ExpectOk;

namespace {

using ABf16 = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t, true>;
using BBf16 = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t, true>;
using AHalf = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using BHalf = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using CF32 = MatmulType<TPosition::GM, CubeFormat::ND, float>;
using CBf16 = MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>;

void LaunchMix(const char* name, uint32_t blocks, uint32_t ratio, const std::function<void()>& body) {
  amct_sim::LaunchMix(name, blocks, ratio, body);
}

float Bf(uint16_t bits) { return simtest::BitsFloat(static_cast<uint32_t>(bits) << 16); }

std::vector<bfloat16_t> RandomBf16(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<bfloat16_t> v(n);
  for (auto& x : v) x = bfloat16_t(d(g));
  return v;
}

TCubeTiling MultiCoreTiling(int m, int n, int k, int cores, matmul_tiling::DataType in, matmul_tiling::DataType out,
                            bool bias, bool transB) {
  matmul_tiling::MultiCoreMatmulTiling t;
  using matmul_tiling::CubeFormat;
  using matmul_tiling::TPosition;
  t.SetDim(cores);
  t.SetAType(TPosition::GM, CubeFormat::ND, in, false);
  t.SetBType(TPosition::GM, CubeFormat::ND, in, transB);
  t.SetCType(TPosition::GM, CubeFormat::ND, out);
  if (bias) t.SetBiasType(TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
  t.SetShape(m, n, k);
  t.SetOrgShape(m, n, k);
  t.EnableBias(bias);
  t.SetBufferSpace(-1, -1, -1);
  TCubeTiling tiling;
  if (t.GetTiling(tiling) != 0) throw std::runtime_error("GetTiling failed");
  return tiling;
}

// The brute-force reference of the sim's documented order: fp32 accumulation in K order from the
// bias, products exact (computed here in double and rounded to float, which is exact for bf16).
std::vector<float> ReferenceBf16(const std::vector<bfloat16_t>& a, const std::vector<bfloat16_t>& b,
                                 const std::vector<float>& bias, int m, int n, int k, bool transB) {
  std::vector<float> c(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = bias.empty() ? 0.0f : bias[j];
      for (int kk = 0; kk < k; ++kk) {
        const double x = Bf(a[static_cast<size_t>(i) * k + kk].amct_bits);
        const double y = Bf((transB ? b[static_cast<size_t>(j) * k + kk] : b[static_cast<size_t>(kk) * n + j]).amct_bits);
        acc = static_cast<float>(static_cast<double>(acc) + x * y);
      }
      c[static_cast<size_t>(i) * n + j] = acc;
    }
  }
  return c;
}

// A MIX 1:2 kernel: each AIC computes its core block of C = A * B (+ bias) through the Matmul API.
void Bf16MatmulKernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, const TCubeTiling* tiling, bool transB,
                      bool useIterate) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  if ASCEND_IS_AIV {
    return;
  }
  const TCubeTiling& t = *tiling;
  const int idx = static_cast<int>(GetBlockIdx());
  const int nBlocks = (t.N + t.singleCoreN - 1) / t.singleCoreN;
  const int mi = idx / nBlocks, ni = idx % nBlocks;
  if (idx >= t.usedCoreNum) return;
  const int m0 = mi * t.singleCoreM, n0 = ni * t.singleCoreN;
  const int tailM = std::min(t.singleCoreM, t.M - m0), tailN = std::min(t.singleCoreN, t.N - n0);
  GlobalTensor<bfloat16_t> ga, gb;
  GlobalTensor<float> gbias, gc;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(a) + static_cast<size_t>(m0) * t.Ka);
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(b) + (transB ? static_cast<size_t>(n0) * t.Kb : n0));
  gc.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c) + static_cast<size_t>(m0) * t.N + n0);
  TPipe pipe;
  Matmul<ABf16, BBf16, CF32, CF32, CFG_MDL> mm;
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
  mm.SetTensorA(ga, false);
  mm.SetTensorB(gb, transB);
  if (bias != nullptr) {
    gbias.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias) + n0);
    mm.SetBias(gbias);
  }
  mm.SetTail(tailM, tailN);
  if (useIterate) {
    while (mm.Iterate()) mm.GetTensorC(gc);
  } else {
    mm.IterateAll(gc);
  }
  mm.End();
}

void TestBf16Numerics() {
  struct Case {
    int m, n, k, cores;
    bool bias, transB, iterate;
  };
  const Case cases[] = {{1, 16, 16, 1, false, false, false},  {37, 70, 45, 4, true, false, false},
                        {300, 130, 200, 4, false, true, false}, {64, 512, 96, 2, true, true, true},
                        {17, 33, 64, 8, false, false, true}};
  for (const Case& cs : cases) {
    const auto a = RandomBf16(static_cast<size_t>(cs.m) * cs.k, 1 + cs.m);
    const auto b = RandomBf16(static_cast<size_t>(cs.k) * cs.n, 2 + cs.n);
    std::vector<float> bias;
    if (cs.bias) {
      for (int j = 0; j < cs.n; ++j) bias.push_back(0.25f * static_cast<float>(j % 7) - 0.5f);
    }
    std::vector<float> c(static_cast<size_t>(cs.m) * cs.n, -1.0f);
    const TCubeTiling t = MultiCoreTiling(cs.m, cs.n, cs.k, cs.cores, matmul_tiling::DataType::DT_BF16,
                                          matmul_tiling::DataType::DT_FLOAT, cs.bias, cs.transB);
    const std::string name = "matmul_bf16_" + std::to_string(cs.m) + "x" + std::to_string(cs.n) + "x" +
                             std::to_string(cs.k) + (cs.transB ? "_transB" : "") + (cs.bias ? "_bias" : "") +
                             (cs.iterate ? "_iterate" : "_iterateall");
    amct_sim::GmScope scope{{a.data(), a.size() * 2, false},
                            {b.data(), b.size() * 2, false},
                            {bias.data(), bias.size() * 4, false},
                            {&t, sizeof(t), false},
                            {c.data(), c.size() * 4, true}};
    const bool ok = ExpectOk(name + "_runs", [&] {
      LaunchMix("bf16_matmul", static_cast<uint32_t>(t.usedCoreNum), 2, [&] {
        Bf16MatmulKernel((GM_ADDR)a.data(), (GM_ADDR)b.data(), cs.bias ? (GM_ADDR)bias.data() : nullptr,
                         (GM_ADDR)c.data(), &t, cs.transB, cs.iterate);
      });
    });
    if (!ok) continue;
    const auto ref = ReferenceBf16(a, b, bias, cs.m, cs.n, cs.k, cs.transB);
    size_t bad = 0;
    for (size_t i = 0; i < c.size(); ++i) bad += simtest::FloatBits(c[i]) != simtest::FloatBits(ref[i]);
    Check(name + "_bitexact_vs_bruteforce", bad == 0, std::to_string(bad) + " elements differ");
    // and close to the exact (double) product: the fp32 K-order sum's error bound
    double worst = 0;
    for (int i = 0; i < cs.m; ++i) {
      for (int j = 0; j < cs.n; ++j) {
        double exact = cs.bias ? bias[j] : 0.0, mag = std::fabs(exact);
        for (int kk = 0; kk < cs.k; ++kk) {
          const double p = static_cast<double>(Bf(a[static_cast<size_t>(i) * cs.k + kk].amct_bits)) *
                           Bf((cs.transB ? b[static_cast<size_t>(j) * cs.k + kk] : b[static_cast<size_t>(kk) * cs.n + j]).amct_bits);
          exact += p;
          mag += std::fabs(p);
        }
        worst = std::max(worst, std::fabs(c[static_cast<size_t>(i) * cs.n + j] - exact) / (mag * cs.k * 6e-8 + 1e-30));
      }
    }
    Check(name + "_within_fp32_sum_bound", worst <= 1.0, "error / bound = " + std::to_string(worst));
  }
}

// half inputs, bf16 output, atomic add into C.
void TestHalfBf16OutAtomic() {
  const int m = 32, n = 48, k = 40;
  std::vector<half> a(m * k), b(k * n);
  for (int i = 0; i < m * k; ++i) a[i] = half(static_cast<float>((i * 7) % 13 - 6) * 0.125f);
  for (int i = 0; i < k * n; ++i) b[i] = half(static_cast<float>((i * 5) % 11 - 5) * 0.25f);
  std::vector<bfloat16_t> c(m * n, bfloat16_t(1.0f));
  matmul_tiling::MatmulApiTiling tl;
  tl.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
  tl.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
  tl.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_BF16);
  tl.SetShape(m, n, k);
  TCubeTiling t;
  Check("tiling_single_core_ok", tl.GetTiling(t) == 0 && t.singleCoreM == m && t.baseK % 16 == 0);
  amct_sim::GmScope scope{{a.data(), a.size() * 2, false}, {b.data(), b.size() * 2, false}, {c.data(), c.size() * 2, true}};
  ExpectOk("matmul_half_bf16out_atomic_runs", [&] {
    LaunchMix("half_matmul", 1, 0, [&] {
      GlobalTensor<half> ga, gb;
      GlobalTensor<bfloat16_t> gc;
      ga.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a.data()));
      gb.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b.data()));
      gc.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(c.data()), c.size());
      Matmul<AHalf, BHalf, CBf16> mm;
      mm.Init(&t);
      mm.SetTensorA(ga);
      mm.SetTensorB(gb);
      mm.IterateAll(gc, 1);
      mm.End();
    });
  });
  size_t bad = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      for (int kk = 0; kk < k; ++kk) acc = acc + static_cast<float>(a[i * k + kk]) * static_cast<float>(b[kk * n + j]);
      const bfloat16_t want(1.0f + static_cast<float>(bfloat16_t(acc)));  // acc rounded to C's type, then added
      bad += want.amct_bits != c[i * n + j].amct_bits;
    }
  }
  Check("matmul_half_bf16out_atomic_add_values", bad == 0, std::to_string(bad) + " differ");
}

#if __NPU_ARCH__ == 3510
using AFp4 = MatmulTypeWithScale<TPosition::GM, TPosition::GM, CubeFormat::ND, fp4x2_e2m1_t, false>;
using BFp4 = MatmulTypeWithScale<TPosition::GM, TPosition::GM, CubeFormat::ND, fp4x2_e2m1_t, true>;
using MxMm = Matmul<AFp4, BFp4, CF32, CF32, CFG_MDL, MatmulCallBackFunc<nullptr, nullptr, nullptr>,
                    Impl::Detail::MatmulWithScalePolicy>;

double E2m1(int code) {
  static const double v[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8 ? -1 : 1) * v[code & 7];
}

void TestMxFp4() {
  for (const int k : {64, 96, 160}) {  // 96, 160: K = 32 mod 64 (scales padded to an even count)
    const int m = 20, n = 36, ks = 2 * ((k + 63) / 64);
    std::mt19937 g(k);
    std::vector<uint8_t> a(m * k / 2), b(n * k / 2), sa(m * ks, 0), sb(n * ks, 0);
    for (auto& x : a) x = static_cast<uint8_t>(g());
    for (auto& x : b) x = static_cast<uint8_t>(g());
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < (k + 31) / 32; ++j) sa[i * ks + j] = static_cast<uint8_t>(120 + g() % 14);
    }
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < (k + 31) / 32; ++j) sb[i * ks + j] = static_cast<uint8_t>(118 + g() % 14);
    }
    std::vector<float> c(m * n);
    namespace mt = matmul_tiling;
    mt::MatmulApiTiling tl;
    tl.SetAType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT4_E2M1, false);
    tl.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT4_E2M1, true);
    tl.SetScaleAType(mt::TPosition::GM, mt::CubeFormat::ND, false);
    tl.SetScaleBType(mt::TPosition::GM, mt::CubeFormat::ND, true);
    tl.SetCType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT);
    tl.SetMadType(mt::MatrixMadType::MXMODE);
    tl.SetShape(m, n, k);
    TCubeTiling t;
    tl.GetTiling(t);
    amct_sim::GmScope scope{{a.data(), a.size(), false},   {b.data(), b.size(), false},
                            {sa.data(), sa.size(), false}, {sb.data(), sb.size(), false},
                            {c.data(), c.size() * 4, true}};
    const std::string name = "matmul_mxfp4_k" + std::to_string(k);
    ExpectOk(name + "_runs", [&] {
      amct_sim::LaunchMix("mx_matmul", 1, 2, [&] {
        if ASCEND_IS_AIV {
          return;
        }
        GlobalTensor<fp4x2_e2m1_t> ga, gb;
        GlobalTensor<fp8_e8m0_t> gsa, gsb;
        GlobalTensor<float> gc;
        ga.SetGlobalBuffer(reinterpret_cast<__gm__ fp4x2_e2m1_t*>(a.data()), a.size());
        gb.SetGlobalBuffer(reinterpret_cast<__gm__ fp4x2_e2m1_t*>(b.data()), b.size());
        gsa.SetGlobalBuffer(reinterpret_cast<__gm__ fp8_e8m0_t*>(sa.data()), sa.size());
        gsb.SetGlobalBuffer(reinterpret_cast<__gm__ fp8_e8m0_t*>(sb.data()), sb.size());
        gc.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c.data()), c.size());
        MxMm mm;
        mm.Init(&t);
        mm.SetTensorA(ga);
        mm.SetTensorB(gb, true);
        mm.SetTensorScaleA(gsa);
        mm.SetTensorScaleB(gsb);
        mm.IterateAll(gc);
        mm.End();
      });
    });
    // reference: per 32-group exact sum in double, scaled, added to a float accumulator
    size_t bad = 0;
    double worstRel = 0;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        float acc = 0;
        double exact = 0;
        for (int gi = 0; gi * 32 < k; ++gi) {
          double s = 0;
          for (int kk = gi * 32; kk < std::min(k, gi * 32 + 32); ++kk) {
            const int ea = (a[(i * k + kk) / 2] >> (4 * ((i * k + kk) & 1))) & 15;
            const int eb = (b[(j * k + kk) / 2] >> (4 * ((j * k + kk) & 1))) & 15;
            s += E2m1(ea) * E2m1(eb);
          }
          const double term = s * std::pow(2.0, sa[i * ks + gi] + sb[j * ks + gi] - 254);
          acc = static_cast<float>(static_cast<double>(acc) + term);
          exact += term;
        }
        bad += simtest::FloatBits(acc) != simtest::FloatBits(c[i * n + j]);
        worstRel = std::max(worstRel, std::fabs(c[i * n + j] - exact) / (std::fabs(exact) + 1e-20));
      }
    }
    Check(name + "_bitexact_vs_bruteforce", bad == 0, std::to_string(bad) + " differ");
    Check(name + "_close_to_exact", worstRel < 1e-5 || bad == 0, std::to_string(worstRel));
  }
}
#endif

// ---- guards ----------------------------------------------------------------------------------
struct GuardData {
  std::vector<bfloat16_t> a = RandomBf16(64 * 64, 5), b = RandomBf16(64 * 64, 6);
  std::vector<float> c = std::vector<float>(64 * 64);
  TCubeTiling t = MultiCoreTiling(64, 64, 64, 1, matmul_tiling::DataType::DT_BF16, matmul_tiling::DataType::DT_FLOAT,
                                  false, false);
};

template <class Body>
void OnAic(GuardData& d, const Body& body) {
  amct_sim::GmScope scope{{d.a.data(), d.a.size() * 2, false}, {d.b.data(), d.b.size() * 2, false}, {d.c.data(), d.c.size() * 4, true}};
  amct_sim::LaunchMix("guard_kernel", 1, 2, [&] {
    if ASCEND_IS_AIC {
      GlobalTensor<bfloat16_t> ga, gb;
      GlobalTensor<float> gc;
      ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.a.data()), d.a.size());
      gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(d.b.data()), d.b.size());
      gc.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.c.data()), d.c.size());
      body(ga, gb, gc);
    }
  });
}

// Init plus both operands: the common start of the guard scenarios.
template <class M, class G>
void Ready(M& mm, GuardData& d, const G& ga, const G& gb) {
  mm.Init(&d.t);
  mm.SetTensorA(ga);
  mm.SetTensorB(gb);
}

void TestMatmulGuards() {
  GuardData d;
  using Mm = Matmul<ABf16, BBf16, CF32>;
  ExpectError("matmul_guard_on_aiv", {"Matmul runs on the cube core"}, [&] {
    amct_sim::LaunchMix("k", 1, 2, [&] {
      if ASCEND_IS_AIV {
        Mm mm;
        mm.Init(&d.t);
      }
    });
  });
  ExpectError("matmul_guard_in_vector_launch", {"Matmul runs on the cube core"}, [&] {
    simtest::Run1([&] {
      Mm mm;
      mm.Init(&d.t);
    });
  });
  ExpectError("matmul_guard_before_init", {"before Init"}, [&] {
    OnAic(d, [&](auto& ga, auto&, auto&) {
      Mm mm;
      mm.SetTensorA(ga);
    });
  });
  ExpectError("matmul_guard_after_end", {"after End"}, [&] {
    OnAic(d, [&](auto& ga, auto& gb, auto& gc) {
      Mm mm;
      Ready(mm, d, ga, gb);
      mm.IterateAll(gc);
      mm.End();
      mm.IterateAll(gc);
    });
  });
  ExpectError("matmul_guard_missing_tensor_a", {"SetTensorA was not called"}, [&] {
    OnAic(d, [&](auto&, auto& gb, auto& gc) {
      Mm mm;
      mm.Init(&d.t);
      mm.SetTensorB(gb);
      mm.IterateAll(gc);
    });
  });
  ExpectError("matmul_guard_missing_tensor_b", {"SetTensorB was not called"}, [&] {
    OnAic(d, [&](auto& ga, auto&, auto& gc) {
      Mm mm;
      mm.Init(&d.t);
      mm.SetTensorA(ga);
      mm.IterateAll(gc);
    });
  });
  ExpectError("matmul_guard_transpose_not_enabled", {"ISTRANS = false"}, [&] {
    OnAic(d, [&](auto&, auto&, auto&) {
      GlobalTensor<half> gh;
      std::vector<half> tmp(16);
      gh.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(tmp.data()));
      Matmul<AHalf, BHalf, CF32> mm;
      mm.Init(&d.t);
      mm.SetTensorB(gh, true);
    });
  });
  ExpectError("matmul_guard_tail_beyond_tiling", {"exceeds the tiling's singleCore"}, [&] {
    OnAic(d, [&](auto&, auto&, auto&) {
      Mm mm;
      mm.Init(&d.t);
      mm.SetTail(65, 64, 64);
    });
  });
  ExpectError("matmul_guard_single_beyond_org", {"exceeds the org shape"}, [&] {
    OnAic(d, [&](auto& ga, auto& gb, auto& gc) {
      Mm mm;
      mm.Init(&d.t);
      mm.SetOrgShape(32, 64, 64);
      mm.SetTensorA(ga);
      mm.SetTensorB(gb);
      mm.IterateAll(gc);
    });
  });
  ExpectError("matmul_guard_l0c_overflow", {"L0C"}, [&] {
    OnAic(d, [&](auto&, auto&, auto&) {
      TCubeTiling t = d.t;
      t.baseM = 512;
      t.baseN = 256;
      Mm mm;
      mm.Init(&t);
    });
  });
  ExpectError("matmul_guard_base_not_fractal", {"multiples of 16"}, [&] {
    OnAic(d, [&](auto&, auto&, auto&) {
      TCubeTiling t = d.t;
      t.baseM = 40;
      Mm mm;
      mm.Init(&t);
    });
  });
  ExpectError("matmul_guard_gm_outside_regions", {"outside every registered GM region"}, [&] {
    OnAic(d, [&](auto& ga, auto&, auto& gc) {
      std::vector<bfloat16_t> other(64 * 64);
      GlobalTensor<bfloat16_t> gx;
      gx.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(other.data()));
      Mm mm;
      mm.Init(&d.t);
      mm.SetTensorA(ga);
      mm.SetTensorB(gx);
      mm.IterateAll(gc);
    });
  });
  ExpectError("matmul_guard_gm_beyond_extent", {"SetGlobalBuffer extent"}, [&] {
    OnAic(d, [&](auto& ga, auto& gb, auto&) {
      GlobalTensor<float> small;
      small.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.c.data()), 100);
      Mm mm;
      Ready(mm, d, ga, gb);
      mm.IterateAll(small);
    });
  });
  ExpectError("matmul_guard_gm_unaligned", {"alignment"}, [&] {
    OnAic(d, [&](auto&, auto&, auto&) {
      GlobalTensor<bfloat16_t> odd;
      odd.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(reinterpret_cast<uint8_t*>(d.a.data()) + 1));
      Mm mm;
      mm.Init(&d.t);
      mm.SetTensorA(odd);
    });
  });
  ExpectError("matmul_guard_get_tensor_c_without_iterate", {"call Iterate() first"}, [&] {
    OnAic(d, [&](auto& ga, auto& gb, auto& gc) {
      Mm mm;
      Ready(mm, d, ga, gb);
      mm.GetTensorC(gc);
    });
  });
  ExpectError("matmul_guard_aic_has_no_ub", {"has no unified buffer"}, [&] {
    OnAic(d, [&](auto&, auto&, auto&) {
      TPipe pipe;
      TBuf<TPosition::VECCALC> buf;
      pipe.InitBuffer(buf, 1024);
    });
  });
  Check("tiling_rejects_mixed_dtypes", [] {
    namespace mt = matmul_tiling;
    mt::MatmulApiTiling tl;
    tl.SetAType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_BF16);
    tl.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT16);
    tl.SetCType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_FLOAT);
    tl.SetShape(16, 16, 16);
    TCubeTiling t;
    return tl.GetTiling(t) == -1;
  }());
#if __NPU_ARCH__ == 3510
  ExpectError("matmul_guard_mx_missing_scale", {"SetTensorScaleB was not called"}, [&] {
    OnAic(d, [&](auto&, auto&, auto& gc) {
      std::vector<uint8_t> q(64 * 64);
      GlobalTensor<fp4x2_e2m1_t> g4;
      GlobalTensor<fp8_e8m0_t> g8;
      g4.SetGlobalBuffer(reinterpret_cast<__gm__ fp4x2_e2m1_t*>(d.a.data()));
      g8.SetGlobalBuffer(reinterpret_cast<__gm__ fp8_e8m0_t*>(d.b.data()));
      TCubeTiling t = d.t;
      MxMm mm;
      mm.Init(&t);
      mm.SetTensorA(g4);
      mm.SetTensorB(g4, true);
      mm.SetTensorScaleA(g8);
      mm.IterateAll(gc);
    });
  });
  ExpectError("matmul_guard_mx_odd_k", {"must be even"}, [&] {
    OnAic(d, [&](auto&, auto&, auto& gc) {
      GlobalTensor<fp4x2_e2m1_t> g4;
      GlobalTensor<fp8_e8m0_t> g8;
      g4.SetGlobalBuffer(reinterpret_cast<__gm__ fp4x2_e2m1_t*>(d.a.data()));
      g8.SetGlobalBuffer(reinterpret_cast<__gm__ fp8_e8m0_t*>(d.b.data()));
      TCubeTiling t = d.t;
      MxMm mm;
      mm.Init(&t);
      mm.SetOrgShape(64, 64, 63);
      mm.SetTail(64, 64, 63);
      mm.SetTensorA(g4);
      mm.SetTensorB(g4, true);
      mm.SetTensorScaleA(g8);
      mm.SetTensorScaleB(g8);
      mm.IterateAll(gc);
    });
  });
  ExpectError("matmul_guard_mx_transposed_scale_a", {"transposed scaleA"}, [&] {
    OnAic(d, [&](auto&, auto&, auto&) {
      GlobalTensor<fp8_e8m0_t> g8;
      g8.SetGlobalBuffer(reinterpret_cast<__gm__ fp8_e8m0_t*>(d.b.data()));
      TCubeTiling t = d.t;
      MxMm mm;
      mm.Init(&t);
      mm.SetTensorScaleA(g8, true);
    });
  });
#endif
}

// ---- MIX launches and cross-core flags ------------------------------------------------------
void TestMixQueries() {
  std::vector<int64_t> seen(3 * 3 * 4, -1);
  amct_sim::GmScope scope{};
  ExpectOk("mix_queries_run", [&] {
    amct_sim::LaunchMix("mix_queries", 3, 2, [&] {
      KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
      const int64_t core = ASCEND_IS_AIC ? GetBlockIdx() * 3 : (GetBlockIdx() / 2) * 3 + 1 + GetSubBlockIdx();
      seen[core * 4 + 0] = GetBlockIdx();
      seen[core * 4 + 1] = GetSubBlockIdx();
      seen[core * 4 + 2] = GetBlockNum();
      seen[core * 4 + 3] = GetTaskRatio();
    });
  });
  bool ok = true;
  for (int g = 0; g < 3; ++g) {
    ok = ok && seen[(g * 3) * 4] == g && seen[(g * 3) * 4 + 1] == 0 && seen[(g * 3) * 4 + 2] == 3 && seen[(g * 3) * 4 + 3] == 1;
    for (int s = 0; s < 2; ++s) {
      const int core = g * 3 + 1 + s;
      ok = ok && seen[core * 4] == g * 2 + s && seen[core * 4 + 1] == s && seen[core * 4 + 2] == 3 && seen[core * 4 + 3] == 2;
    }
  }
  Check("mix_block_idx_sub_block_num_ratio", ok);
  ExpectError("mix_kernel_type_mismatch", {"declares type"}, [&] {
    amct_sim::LaunchMix("k", 1, 1, [&] { KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2); });
  });
  ExpectError("mix_too_many_blocks", {"blockDim"}, [&] { amct_sim::LaunchMix("k", 100, 2, [] {}); });
}

// Mode 2 both ways with data through a GM workspace: the AIC writes, the AIVs wait and read (and
// modify their half), then signal back; the AIC waits and reads their results.
void TestMixMode2Pipeline() {
  std::vector<float> ws(2 * 64, 0.0f);
  std::vector<float> out(2 * 64, 0.0f);
  amct_sim::GmScope scope{{ws.data(), ws.size() * 4, true}, {out.data(), out.size() * 4, true}};
  ExpectOk("mix_mode2_handshake_runs", [&] {
    amct_sim::LaunchMix("mix_mode2", 1, 2, [&] {
      if ASCEND_IS_AIC {
        for (int i = 0; i < 128; ++i) ws[i] = static_cast<float>(i);  // stands for the cube's FIX output
        CrossCoreSetFlag<2, PIPE_FIX>(3);
        CrossCoreWaitFlag(4);
        for (int i = 0; i < 128; ++i) out[i] = ws[i] * 2.0f;
      } else {
        CrossCoreWaitFlag(3);
        const int s = static_cast<int>(GetSubBlockIdx());
        for (int i = 0; i < 64; ++i) ws[s * 64 + i] += 1.0f;
        CrossCoreSetFlag<2, PIPE_MTE3>(4);
      }
    });
  });
  bool ok = true;
  for (int i = 0; i < 128; ++i) ok = ok && out[i] == 2.0f * (static_cast<float>(i) + 1.0f);
  Check("mix_mode2_orders_aic_and_aivs", ok);
}

// The setter may finish before the waiters wake up: that is no deadlock (repeated to meet the race).
void TestMixSetterFinishesFirst() {
  amct_sim::GmScope scope{};
  bool ok = true;
  for (int rep = 0; rep < 30 && ok; ++rep) {
    try {
      amct_sim::LaunchMix("setter_first", 2, 2, [&] {
        if ASCEND_IS_AIC {
          CrossCoreSetFlag<2, PIPE_FIX>(9);
        } else {
          CrossCoreWaitFlag(9);
        }
      });
    } catch (const amct_sim::SimError& e) {
      ok = false;
      std::printf("  [mix_setter_returns_before_waiters_wake] %s\n", e.what());
    }
  }
  Check("mix_setter_returns_before_waiters_wake", ok);
}

void TestMixModes01() {
  std::vector<int> order;
  std::mutex mu;
  amct_sim::GmScope scope{};
  ExpectOk("mix_mode0_all_aic_barrier", [&] {
    amct_sim::LaunchMix("mode0", 4, 2, [&] {
      if ASCEND_IS_AIC {
        {
          std::lock_guard<std::mutex> l(mu);
          order.push_back(0);
        }
        CrossCoreSetFlag<0, PIPE_FIX>(5);
        CrossCoreWaitFlag(5);
        std::lock_guard<std::mutex> l(mu);
        order.push_back(1);
      } else {
        CrossCoreSetFlag<1, PIPE_MTE3>(6);  // mode 1: the two AIVs of an AI core
        CrossCoreWaitFlag(6);
      }
    });
  });
  bool ok = order.size() == 8;
  for (int i = 0; i < 4 && ok; ++i) ok = order[i] == 0;
  Check("mix_mode0_no_aic_passes_before_all_set", ok);
#if __NPU_ARCH__ == 3510
  std::vector<int> got(2, 0);
  ExpectOk("mix_mode4_single_aiv", [&] {
    amct_sim::LaunchMix("mode4", 1, 2, [&] {
      if ASCEND_IS_AIC {
        CrossCoreSetFlag<4, PIPE_FIX>(17);  // AIV1's flag 1
        CrossCoreWaitFlag<4, PIPE_FIX>(2);  // AIV0's flag 2
      } else if (GetSubBlockIdx() == 1) {
        CrossCoreWaitFlag<4, PIPE_V>(1);
        got[1] = 1;
      } else {
        got[0] = 1;
        CrossCoreSetFlag<4, PIPE_MTE3>(2);
      }
    });
  });
  Check("mix_mode4_pairs_aic_with_each_aiv", got[0] == 1 && got[1] == 1);
#else
  ExpectError("mix_mode4_rejected_on_2201", {"modeId 4 exists only on dav-3510"}, [&] {
    amct_sim::LaunchMix("mode4", 1, 2, [&] {
      if ASCEND_IS_AIC CrossCoreSetFlag<4, PIPE_FIX>(1);
    });
  });
#endif
}

void TestMixGuards() {
  amct_sim::GmScope scope{};
  ExpectError("mix_deadlock_detected", {"cross-core deadlock", "flagId 7"}, [&] {
    amct_sim::LaunchMix("deadlock", 2, 2, [&] {
      if ASCEND_IS_AIC {
        CrossCoreWaitFlag(7);  // nobody sets 7
      } else {
        CrossCoreWaitFlag(8);
      }
    });
  });
  ExpectError("mix_deadlock_after_partial_progress", {"cross-core deadlock"}, [&] {
    amct_sim::LaunchMix("deadlock2", 1, 2, [&] {
      if ASCEND_IS_AIC {
        CrossCoreSetFlag<2, PIPE_FIX>(1);
        CrossCoreWaitFlag(2);  // only AIV0 sets 2: the meeting of mode 2 never completes
      } else {
        CrossCoreWaitFlag(1);
        if (GetSubBlockIdx() == 0) CrossCoreSetFlag<2, PIPE_MTE3>(2);
      }
    });
  });
  ExpectError("mix_counter_over_15", {"would exceed 15"}, [&] {
    amct_sim::LaunchMix("overflow", 1, 2, [&] {
      if ASCEND_IS_AIC {
        for (int i = 0; i < 16; ++i) CrossCoreSetFlag<2, PIPE_FIX>(0);
      }
    });
  });
  ExpectError("mix_flag_never_waited", {"at the end of the launch"}, [&] {
    amct_sim::LaunchMix("leftover", 1, 2, [&] {
      if ASCEND_IS_AIC CrossCoreSetFlag<2, PIPE_FIX>(0);
    });
  });
  ExpectError("mix_flag_id_over_15", {"flagId 16 is not in 0..15"}, [&] {
    amct_sim::LaunchMix("id", 1, 2, [&] {
      if ASCEND_IS_AIC CrossCoreSetFlag<2, PIPE_FIX>(16);
    });
  });
  ExpectError("mix_pipe_s_rejected", {"PIPE_S"}, [&] {
    amct_sim::LaunchMix("pipe", 1, 2, [&] {
      if ASCEND_IS_AIC CrossCoreSetFlag<0, PIPE_S>(1);
    });
  });
  ExpectError("mix_cross_core_in_vector_launch", {"no cross-core scheduler"}, [&] {
    simtest::Run1([] { CrossCoreSetFlag<0, PIPE_V>(1); });
  });
  ExpectError("mix_mode1_on_aic", {"not for the AIC"}, [&] {
    amct_sim::LaunchMix("m1", 1, 2, [&] {
      if ASCEND_IS_AIC CrossCoreSetFlag<1, PIPE_FIX>(1);
    });
  });
  ExpectError("mix_error_beats_deadlock", {"bounds"}, [&] {
    amct_sim::LaunchMix("err", 1, 2, [&] {
      if ASCEND_IS_AIC {
        CrossCoreWaitFlag(1);
      } else {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64);
        buf.Get<float>().GetValue(100);
      }
    });
  });
  std::vector<float> shared(64);
  amct_sim::GmScope s2{{shared.data(), shared.size() * 4, true}};
  ExpectError("mix_race_between_ai_cores", {"race"}, [&] {
    amct_sim::LaunchMix("race", 2, 2, [&] {
      if ASCEND_IS_AIV {
        // both AI cores' AIV0 write the same bytes through DataCopy
        if (GetSubBlockIdx() != 0) return;
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 256);
        LocalTensor<float> l = buf.Get<float>();
        Duplicate(l, 1.0f, 64);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(shared.data()), 64);
        DataCopy(g, l, 64);
      }
    });
  });
}

// ---- the cube's cost model --------------------------------------------------------------------
double EstimateBf16Matmul(int m, int n, int k, int arch, uint32_t cores, bool costOnly, amct_sim::CostRecord* rec) {
  const TCubeTiling t = MultiCoreTiling(m, n, k, static_cast<int>(cores), matmul_tiling::DataType::DT_BF16,
                                        matmul_tiling::DataType::DT_BF16, false, false);
  // cost-only: no arithmetic, so the operands need only be registered, not allocated
  std::vector<uint8_t> dummy(64);
  const uint64_t big = static_cast<uint64_t>(m) * k * 2 + static_cast<uint64_t>(k) * n * 2 + static_cast<uint64_t>(m) * n * 2;
  std::vector<uint8_t> mem(costOnly ? 0 : big);
  uint8_t* base = costOnly ? reinterpret_cast<uint8_t*>(uintptr_t{1} << 40) : mem.data();
  amct_sim::GmScope scope{{base, big, true}, {&t, sizeof(t), false}};
  amct_sim::CostStart(arch, 0, costOnly);
  amct_sim::LaunchMix("bf16_matmul_estimate", static_cast<uint32_t>(t.usedCoreNum), 2, [&] {
    if ASCEND_IS_AIV {
      return;
    }
    const int idx = static_cast<int>(GetBlockIdx());
    const int nBlocks = (t.N + t.singleCoreN - 1) / t.singleCoreN;
    const int m0 = idx / nBlocks * t.singleCoreM, n0 = idx % nBlocks * t.singleCoreN;
    GlobalTensor<bfloat16_t> ga, gb, gc;
    ga.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(base) + static_cast<size_t>(m0) * k);
    gb.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(base + static_cast<uint64_t>(m) * k * 2) + n0);
    gc.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t*>(base + static_cast<uint64_t>(m) * k * 2 +
                                                            static_cast<uint64_t>(k) * n * 2) +
                       static_cast<size_t>(m0) * n + n0);
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>, MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>,
           MatmulType<TPosition::GM, CubeFormat::ND, bfloat16_t>>
        mm;
    mm.Init(&t);
    mm.SetTensorA(ga);
    mm.SetTensorB(gb);
    mm.SetTail(std::min(t.singleCoreM, m - m0), std::min(t.singleCoreN, n - n0));
    mm.IterateAll(gc);
    mm.End();
  });
  const auto recs = amct_sim::CostStop();
  if (recs.size() != 1) return -1;
  *rec = recs[0];
  return recs[0].estimateUs;
}

void TestCubeCost() {
  const int arch = __NPU_ARCH__;
  const uint32_t aic = arch == 3510 ? 32 : 20;
  amct_sim::SetPlatform(2 * aic, 0);
  amct_sim::CostRecord rec{};
  // small shape with arithmetic vs cost-only: same estimate
  amct_sim::CostRecord recSmall{};
  const double withMath = EstimateBf16Matmul(512, 512, 256, arch, aic, false, &recSmall);
  const double costOnly = EstimateBf16Matmul(512, 512, 256, arch, aic, true, &rec);
  Check("cost_matmul_cost_only_same_estimate", withMath > 0 && withMath == costOnly,
        std::to_string(withMath) + " vs " + std::to_string(costOnly));
  // the plain bf16 matmul of issues 16/18: (32768, 2048) x (2048, 10944)
  const double us = EstimateBf16Matmul(32768, 10944, 2048, arch, aic, true, &rec);
  const double flops = 2.0 * 32768 * 2048 * 10944;
  std::printf("ESTIMATE bf16 matmul M=32768 K=2048 N=10944 on %s: %.1f us (%.0f TFLOPS), cores %u, bound pipe "
              "busy: M %.0f MTE2 %.0f MTE1 %.0f FIX %.0f of %.0f cycles (model %d)\n",
              arch == 3510 ? "ascend950" : "ascend910b", us, flops / us * 1e-6, rec.blockDim, rec.busy[5], rec.busy[2],
              rec.busy[4], rec.busy[6], rec.slowestCycles, amct_sim::cost::kModelVersion);
  Check("cost_matmul_large_shape_is_m_bound", rec.busy[5] >= rec.busy[2] && rec.busy[5] >= rec.busy[4] &&
                                                   rec.busy[5] > 0.8 * rec.slowestCycles);
  // the M pipe's busy cycles are the fractal count (one fractal per cycle, plus issue per tile step)
  const double fractals = std::ceil(32768.0 / 16) * std::ceil(10944.0 / 16) * (2048 / 16) / rec.blockDim;
  Check("cost_matmul_m_busy_near_fractal_count", rec.busy[5] >= fractals * 0.95 && rec.busy[5] <= fractals * 1.3,
        std::to_string(rec.busy[5]) + " vs " + std::to_string(fractals));
  // MIX flag latency: an AIV waiting for the AIC's flag ends after the AIC's work plus the latency
  amct_sim::CostStart(arch, 0);
  amct_sim::GmScope scope{};
  amct_sim::LaunchMix("flag_latency", 1, 2, [&] {
    if ASCEND_IS_AIC {
      CrossCoreSetFlag<2, PIPE_FIX>(0);
    } else {
      CrossCoreWaitFlag(0);
    }
  });
  const auto recs = amct_sim::CostStop();
  Check("cost_cross_core_flag_latency", recs.size() == 1 && recs[0].slowestCycles >= 200,
        recs.empty() ? "no record" : std::to_string(recs[0].slowestCycles));
  amct_sim::SetPlatform(0, 0);
}

}  // namespace

// SetFixSplit: the fixed base block reaches the tiling; its guards (upstream's SetFixSplit.md:
// baseK only -1, baseM / baseN fractal-aligned and within the core block rounded up to 16, L0C).
void TestFixSplit() {
  namespace mt = matmul_tiling;
  auto bf16 = [](mt::MatmulApiTiling& tl, int m, int n, int k) {
    tl.SetAType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_BF16, false);
    tl.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_BF16, true);
    tl.SetCType(mt::TPosition::VECIN, mt::CubeFormat::ND, mt::DataType::DT_FLOAT);
    tl.SetShape(m, n, k);
  };
  TCubeTiling t;
  mt::MatmulApiTiling dflt;
  bf16(dflt, 12, 256, 2048);
  Check("tiling_default_base_block", dflt.GetTiling(t) == 0 && t.baseM == 16 && t.baseN == 256);
  mt::MatmulApiTiling fixed;
  bf16(fixed, 12, 256, 2048);
  Check("tiling_fix_split_sets_base", fixed.SetFixSplit(16, 64, -1) == 0 && fixed.GetTiling(t) == 0 &&
                                          t.baseM == 16 && t.baseN == 64 && t.singleCoreN == 256);
  mt::MatmulApiTiling onlyN;
  bf16(onlyN, 12, 256, 2048);
  Check("tiling_fix_split_minus_one_keeps_choice", onlyN.SetFixSplit(-1, 128) == 0 && onlyN.GetTiling(t) == 0 &&
                                                       t.baseM == 16 && t.baseN == 128);
  mt::MatmulApiTiling bad;
  bf16(bad, 12, 256, 2048);
  Check("tiling_fix_split_rejects_base_k", bad.SetFixSplit(16, 64, 64) == -1 && bad.SetFixSplit(0, 64) == -1);
  bad.SetFixSplit(32, 64);  // baseM 32 > 12 rounded up to 16
  Check("tiling_fix_split_rejects_base_beyond_block", bad.GetTiling(t) == -1);
  bad.SetFixSplit(16, 40);
  Check("tiling_fix_split_rejects_unaligned_base", bad.GetTiling(t) == -1);
  mt::MatmulApiTiling big;
  bf16(big, 512, 512, 64);
  big.SetFixSplit(512, 512);  // 1 MB of fp32 in L0C
  Check("tiling_fix_split_rejects_l0c_overflow", big.GetTiling(t) == -1);
}

int main() {
  TestBf16Numerics();
  TestHalfBf16OutAtomic();
#if __NPU_ARCH__ == 3510
  TestMxFp4();
#endif
  TestMatmulGuards();
  TestFixSplit();
  TestMixQueries();
  TestMixMode2Pipeline();
  TestMixModes01();
  TestMixSetterFinishesFirst();
  TestMixGuards();
  TestCubeCost();
  return simtest::Finish();
}
