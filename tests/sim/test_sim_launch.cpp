// Kernel sim: Launch (parallel / serial-shuffled, errors, block context), the race check and
// the platform stub.
#include <map>
#include <mutex>
#include <random>

#include "sim_test.h"

using namespace AscendC;
using simtest::Check;
using simtest::ExpectError;
using simtest::ExpectOk;

namespace {

constexpr uint64_t kArchUb = (__NPU_ARCH__ == 2201) ? 196608u : 253952u;

struct EnvGuard {
  std::string name;
  EnvGuard(const char* n, const char* value) : name(n) { setenv(n, value, 1); }
  ~EnvGuard() { unsetenv(name.c_str()); }
};

// y[i] = x[i] * (1 + blockIdx % 3) over per-block ranges, tiles of `tile`, one VECIN + one VECOUT.
void ScaleKernel(const float* x, float* y, uint32_t n, uint32_t tile) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> inQ;
  TQue<TPosition::VECOUT, 1> outQ;
  pipe.InitBuffer(inQ, 2, tile * 4);
  pipe.InitBuffer(outQ, 2, tile * 4);
  const uint32_t blocks = static_cast<uint32_t>(GetBlockNum());
  const uint32_t per = (n + blocks - 1) / blocks;
  const uint32_t begin = std::min<uint32_t>(n, static_cast<uint32_t>(GetBlockIdx()) * per);
  const uint32_t end = std::min(n, begin + per);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(const_cast<float*>(x)) + begin, end - begin);
  gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + begin, end - begin);
  const float scale = 1.0f + static_cast<float>(GetBlockIdx() % 3);
  for (uint32_t off = begin; off < end; off += tile) {
    const uint32_t len = std::min(tile, end - off);
    LocalTensor<float> a = inQ.AllocTensor<float>();
    DataCopyPad(a, gx[off - begin], DataCopyExtParams{1, len * 4, 0, 0, 0}, DataCopyPadExtParams<float>{});
    inQ.EnQue(a);
    a = inQ.DeQue<float>();
    LocalTensor<float> b = outQ.AllocTensor<float>();
    Muls(b, a, scale, static_cast<int32_t>((len + 7) / 8 * 8));
    outQ.EnQue(b);
    inQ.FreeTensor(a);
    b = outQ.DeQue<float>();
    DataCopyPad(gy[off - begin], b, DataCopyExtParams{1, len * 4, 0, 0, 0});
    outQ.FreeTensor(b);
  }
}

std::vector<float> RunScale(const std::vector<float>& x, uint32_t blocks, uint32_t tile) {
  std::vector<float> y(x.size(), -1.0f);
  amct_sim::GmScope scope{{x.data(), x.size() * 4, false}, {y.data(), y.size() * 4, true}};
  simtest::LaunchF("scale_kernel", blocks, [&] { ScaleKernel(x.data(), y.data(), static_cast<uint32_t>(x.size()), tile); });
  return y;
}

bool ScaleOk(const std::vector<float>& x, const std::vector<float>& y, uint32_t blocks) {
  const uint32_t n = static_cast<uint32_t>(x.size());
  const uint32_t per = (n + blocks - 1) / blocks;
  for (uint32_t i = 0; i < n; ++i) {
    if (y[i] != x[i] * (1.0f + static_cast<float>((i / per) % 3))) return false;
  }
  return true;
}

// ---------------------------------------------------------------- launch
void TestLaunch() {
  std::vector<float> x(50021);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 977) - 300.0f;
  std::vector<float> par, ser, one;
  ExpectOk("launch_parallel", [&] { par = RunScale(x, 13, 512); });
  Check("launch_parallel_values", ScaleOk(x, par, 13));
  {
    EnvGuard serial("AMCT_SIM_SERIAL", "1");
    ExpectOk("launch_serial_shuffled", [&] { ser = RunScale(x, 13, 512); });
  }
  Check("launch_serial_equals_parallel", ser == par);
  {
    EnvGuard threads("AMCT_SIM_THREADS", "1");
    ExpectOk("launch_one_thread", [&] { one = RunScale(x, 13, 512); });
  }
  Check("launch_one_thread_equals_parallel", one == par);

  // Serial order: shuffled, reproducible for a seed, different for another seed.
  auto order = [](const char* seed) {
    EnvGuard serial("AMCT_SIM_SERIAL", "1");
    std::unique_ptr<EnvGuard> s;
    if (seed != nullptr) s.reset(new EnvGuard("AMCT_SIM_SEED", seed));
    std::vector<int64_t> seen;
    simtest::LaunchF("order_kernel", 16, [&] { seen.push_back(GetBlockIdx()); });
    return seen;
  };
  std::vector<int64_t> o1 = order(nullptr), o2 = order(nullptr), o3 = order("12345");
  std::vector<int64_t> sorted = o1;
  std::sort(sorted.begin(), sorted.end());
  bool perm = sorted.size() == 16;
  for (int64_t i = 0; i < 16 && perm; ++i) perm = sorted[static_cast<size_t>(i)] == i;
  Check("launch_serial_runs_every_block_once", perm);
  Check("launch_serial_order_is_shuffled", o1 != sorted);
  Check("launch_serial_order_reproducible", o1 == o2);
  Check("launch_serial_seed_changes_order", o1 != o3);

  // Block context.
  std::mutex mu;
  std::map<int64_t, int64_t> ids;
  ExpectOk("launch_block_idx_num", [&] {
    simtest::LaunchF("ids_kernel", 9, [&] {
      std::lock_guard<std::mutex> lock(mu);
      ids[GetBlockIdx()] = GetBlockNum();
    });
  });
  bool idsOk = ids.size() == 9;
  for (auto& kv : ids) idsOk = idsOk && kv.first >= 0 && kv.first < 9 && kv.second == 9;
  Check("launch_block_idx_num_values", idsOk);

  // Poisoned UB: 0xFF by default (NaN), AMCT_SIM_POISON overrides; each block starts poisoned.
  uint32_t firstWord = 0, afterWrite = 0;
  auto peek = [&](uint32_t* out, bool scribble) {
    simtest::LaunchF("poison_kernel", 1, [&] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 64);
      LocalTensor<uint32_t> t = b.Get<uint32_t>();
      *out = t.GetValue(0);
      if (scribble) t.SetValue(0, 0x12345678u);
    });
  };
  ExpectOk("launch_poison_default", [&] {
    peek(&firstWord, true);
    peek(&afterWrite, false);
  });
  Check("launch_poison_default_0xFF", firstWord == 0xFFFFFFFFu && afterWrite == 0xFFFFFFFFu,
        "UB starts as 0xFF bytes in every block");
  {
    EnvGuard p("AMCT_SIM_POISON", "0x5A");
    ExpectOk("launch_poison_env", [&] { peek(&firstWord, false); });
    Check("launch_poison_env_value", firstWord == 0x5A5A5A5Au);
  }
  {
    EnvGuard p("AMCT_SIM_POISON", "300");
    ExpectError("launch_poison_env_invalid", {"AMCT_SIM_POISON=300 is not in [0, 255]"}, [&] { peek(&firstWord, false); });
  }
#ifndef AMCT_SIM_WITH_ATEN  // with ATen, at::parallel_for sizes the pool (torch.set_num_threads)
  {
    EnvGuard p("AMCT_SIM_THREADS", "abc");
    ExpectError("launch_threads_env_invalid", {"AMCT_SIM_THREADS='abc' is not an integer"},
                [&] { simtest::LaunchF("k", 2, [] {}); });
  }
#endif

  // Errors.
  ExpectError("launch_worker_exception_rethrown", {"kernel throw_kernel, block 3 of 8", "uncaught exception",
                                                   "boom in block 3"},
              [] {
                simtest::LaunchF("throw_kernel", 8, [] {
                  if (GetBlockIdx() == 3) throw std::runtime_error("boom in block 3");
                });
              });
  ExpectError("launch_first_error_lowest_block", {"block 2 of 8", "Adds"}, [] {
    simtest::LaunchF("two_errors", 8, [] {
      if (GetBlockIdx() == 2 || GetBlockIdx() == 5) {
        LocalTensor<float> t;
        Adds(t, t, 1.0f, 8);
      }
    });
  });
  ExpectError("launch_nested_rejected", {"Launch called from inside a running block"},
              [] { simtest::LaunchF("outer", 1, [] { simtest::LaunchF("inner", 1, [] {}); }); });
  ExpectError("launch_blockdim_zero", {"blockDim 0 is not in [1, 40]"}, [] { simtest::LaunchF("k", 0, [] {}); });
  ExpectError("launch_blockdim_over_cores", {"blockDim 41 is not in [1, 40]"}, [] { simtest::LaunchF("k", 41, [] {}); });
  ExpectOk("launch_blockdim_at_cores", [] { simtest::LaunchF("k", 40, [] {}); });

  const uint64_t before = amct_sim::LaunchCount();
  simtest::LaunchF("count_kernel", 1, [] {});
  simtest::LaunchF("count_kernel", 3, [] {});
  try {
    simtest::LaunchF("count_kernel", 100, [] {});
  } catch (const amct_sim::SimError&) {
  }
  Check("launch_counter_counts_calls", amct_sim::LaunchCount() == before + 3,
        "LaunchCount " + std::to_string(amct_sim::LaunchCount() - before));
}

// ---------------------------------------------------------------- races
void TestRaces() {
  std::vector<float> in(4096, 1.0f), out(4096, 0.0f);
  amct_sim::GmScope scope{{in.data(), in.size() * 4, false}, {out.data(), out.size() * 4, true}};
  // Block b writes `len` floats at out + start(b), after reading `rlen` floats at out + rstart(b).
  auto writer = [&](auto start, uint32_t len, auto rstart, uint32_t rlen) {
    simtest::LaunchF("race_kernel", 4, [&, start, len, rstart, rlen] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> qi;
      TQue<TPosition::VECOUT, 1> qo;
      pipe.InitBuffer(qi, 1, 4096);
      pipe.InitBuffer(qo, 1, 4096);
      const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out.data()), out.size());
      if (rlen > 0) {
        LocalTensor<float> r = qi.AllocTensor<float>();
        DataCopyPad(r, g[rstart(b)], DataCopyExtParams{1, rlen * 4, 0, 0, 0}, DataCopyPadExtParams<float>{});
        qi.EnQue(r);
        r = qi.DeQue<float>();
        qi.FreeTensor(r);
      }
      LocalTensor<float> t = qo.AllocTensor<float>();
      Duplicate(t, static_cast<float>(b), 1024);
      qo.EnQue(t);
      t = qo.DeQue<float>();
      DataCopyPad(g[start(b)], t, DataCopyExtParams{1, len * 4, 0, 0, 0});
      qo.FreeTensor(t);
    });
  };
  auto none = [](uint32_t) { return 0u; };
  ExpectOk("race_disjoint_adjacent_ok", [&] { writer([](uint32_t b) { return b * 100; }, 100, none, 0); });
  ExpectError("race_two_blocks_write_one_byte", {"kernel race_kernel: race", "both write GM bytes"},
              [&] { writer([](uint32_t b) { return b * 100; }, 101, none, 0); });
  ExpectError("race_read_of_other_blocks_write", {"race", "reads GM bytes", "that block"},
              [&] { writer([](uint32_t b) { return b * 100; }, 100, [](uint32_t b) { return b * 100 + 50; }, 100); });
  ExpectOk("race_read_own_write_region_ok", [&] {
    writer([](uint32_t b) { return b * 100; }, 100, [](uint32_t b) { return b * 100 + 1000; }, 50);
  });
  ExpectOk("race_check_disabled_by_env", [&] {
    EnvGuard g("AMCT_SIM_CHECK_RACES", "0");
    writer([](uint32_t) { return 0u; }, 100, none, 0);
  });
  ExpectError("race_getvalue_on_written_gm", {"race", "GlobalTensor::GetValue", "writes them in this launch"}, [&] {
    simtest::LaunchF("getvalue_kernel", 2, [&] {
      TPipe pipe;
      TQue<TPosition::VECOUT, 1> qo;
      pipe.InitBuffer(qo, 1, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out.data()), out.size());
      const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
      volatile float v = g.GetValue(b * 64 + 3);  // the block's own output: still forbidden
      (void)v;
      LocalTensor<float> t = qo.AllocTensor<float>();
      Duplicate(t, 1.0f, 64);
      qo.EnQue(t);
      t = qo.DeQue<float>();
      DataCopy(g[b * 64], t, 64);
      qo.FreeTensor(t);
    });
  });
  ExpectOk("race_getvalue_on_input_ok", [&] {
    simtest::LaunchF("getvalue_input_kernel", 4, [&] {
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in.data()), in.size());
      for (uint32_t i = 0; i < 64; ++i) (void)g.GetValue(i * 7);
    });
  });
  // Interleaved strided rows: block b writes rows b, b+4, b+8, ... (disjoint).
  ExpectOk("race_interleaved_strided_rows_ok", [&] {
    simtest::LaunchF("strided_kernel", 4, [&] {
      TPipe pipe;
      TQue<TPosition::VECOUT, 1> qo;
      pipe.InitBuffer(qo, 1, 8192);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out.data()), out.size());
      const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
      LocalTensor<float> t = qo.AllocTensor<float>();
      Duplicate(t, static_cast<float>(b), 2048);
      qo.EnQue(t);
      t = qo.DeQue<float>();
      // 16 rows of 12 floats; row r at out + (4r + b) * 16 floats; UB rows at 64-B pitch
      DataCopyPad(g[b * 16], t, DataCopyExtParams{16, 48, 0, 3 * 64 + 16, 0});
      qo.FreeTensor(t);
    });
  });
  bool ok = true;
  for (uint32_t r = 0; r < 64; ++r) {
    for (uint32_t k = 0; k < 12; ++k) ok = ok && out[r * 16 + k] == static_cast<float>(r % 4);
  }
  Check("race_interleaved_strided_rows_values", ok);

  // The sweep itself, against brute force on random interval sets.
  std::mt19937 rng(7);
  bool sweepOk = true;
  int racesSeen = 0;
  for (int trial = 0; trial < 400 && sweepOk; ++trial) {
    amct_sim::detail::LaunchShared sh;
    sh.kernel = "synthetic";
    const uint32_t blocks = 2 + rng() % 5;
    std::vector<amct_sim::detail::BlockOutcome> outs(blocks);
    for (uint32_t b = 0; b < blocks; ++b) {
      const int nw = static_cast<int>(rng() % 4), nr = static_cast<int>(rng() % 3);
      for (int i = 0; i < nw; ++i) {
        const uint64_t lo = rng() % 2000;
        outs[b].log.writes.push_back({lo, lo + 1 + rng() % 60});
      }
      for (int i = 0; i < nr; ++i) {
        const uint64_t lo = rng() % 2000;
        outs[b].log.reads.push_back({lo, lo + 1 + rng() % 60});
      }
    }
    bool expect = false;
    for (uint32_t a = 0; a < blocks; ++a) {
      for (uint32_t b = 0; b < blocks; ++b) {
        if (a == b) continue;
        for (auto& w : outs[a].log.writes) {
          for (auto& v : outs[b].log.writes) expect = expect || (w.lo < v.hi && v.lo < w.hi);
          for (auto& r : outs[b].log.reads) expect = expect || (w.lo < r.hi && r.lo < w.hi);
        }
      }
    }
    bool got = false;
    try {
      amct_sim::detail::RaceCheck(sh, outs);
    } catch (const amct_sim::SimError&) {
      got = true;
    }
    racesSeen += got;
    if (got != expect) sweepOk = false;
  }
  Check("race_sweep_matches_brute_force", sweepOk && racesSeen > 50 && racesSeen < 390,
        "races " + std::to_string(racesSeen));
}

// ---------------------------------------------------------------- platform stub
void TestPlatform() {
  amct_sim::SetPlatform(0, 0);
  amct_sim::PlatformFacts f = amct_sim::GetPlatform();
  Check("platform_defaults", f.aivCores == 40 && f.ubBytes == kArchUb && amct_sim::ArchUbBytes() == kArchUb,
        std::to_string(f.aivCores) + " cores, " + std::to_string(f.ubBytes) + " B");
  ExpectError("platform_ub_larger_than_arch_rejected", {"SetPlatform", "UB bytes must be in [1024,"},
              [] { amct_sim::SetPlatform(0, static_cast<int64_t>(kArchUb) + 32); });
  ExpectError("platform_ub_too_small_rejected", {"UB bytes must be in [1024"}, [] { amct_sim::SetPlatform(0, 1000); });
  ExpectError("platform_cores_over_65535_rejected", {"AIV core count must be in [1, 65535], got 65536"},
              [] { amct_sim::SetPlatform(65536, 0); });
  f = amct_sim::GetPlatform();
  Check("platform_rejected_set_changes_nothing", f.aivCores == 40 && f.ubBytes == kArchUb);

  ExpectOk("platform_one_core", [] {
    amct_sim::SetPlatform(1, 0);
    simtest::LaunchF("k", 1, [] {});
  });
  ExpectError("platform_one_core_blockdim_2_rejected", {"blockDim 2 is not in [1, 1]"},
              [] { simtest::LaunchF("k", 2, [] {}); });
  std::vector<float> x(7919);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  std::vector<float> y1, y7;
  ExpectOk("platform_prime_core_count", [&] {
    amct_sim::SetPlatform(1, 0);
    y1 = RunScale(x, 1, 256);
    amct_sim::SetPlatform(7, 0);
    y7 = RunScale(x, 7, 256);
  });
  Check("platform_prime_core_count_values", ScaleOk(x, y1, 1) && ScaleOk(x, y7, 7));
  ExpectError("platform_blockdim_over_prime_cores", {"blockDim 8 is not in [1, 7]"},
              [] { simtest::LaunchF("k", 8, [] {}); });
  ExpectOk("platform_blockdim_more_than_elements", [&] {
    std::vector<float> tiny(3, 2.0f);
    std::vector<float> r = RunScale(tiny, 7, 32);  // blocks 3..6 get no elements
    if (!ScaleOk(tiny, r, 7)) throw std::runtime_error("values");
  });
  amct_sim::SetPlatform(0, 0);

  ExpectOk("platform_ub_override_is_launch_limit", [] {
    amct_sim::SetPlatform(0, 4096);
    simtest::LaunchF("k", 1, [] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 4096);
    });
    if (amct_sim::GetPlatform().ubBytes != 4096) throw std::runtime_error("facts");
  });
  ExpectError("platform_ub_override_rejects_more", {"over the UB limit of 4096"}, [] {
    simtest::LaunchF("k", 1, [] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 4128);
    });
  });
  amct_sim::SetPlatform(0, 0);

  {
    EnvGuard c("AMCT_SIM_CORE_NUM", "13");
    EnvGuard u("AMCT_SIM_UB_SIZE", "65536");
    f = amct_sim::GetPlatform();
    Check("platform_env_facts", f.aivCores == 13 && f.ubBytes == 65536);
    amct_sim::SetPlatform(5, 0);
    f = amct_sim::GetPlatform();
    Check("platform_override_beats_env", f.aivCores == 5 && f.ubBytes == 65536);
    amct_sim::SetPlatform(0, 0);
  }
  {
    EnvGuard c("AMCT_SIM_CORE_NUM", "many");
    ExpectError("platform_env_invalid", {"AMCT_SIM_CORE_NUM='many' is not an integer"}, [] { amct_sim::GetPlatform(); });
  }
  {
    EnvGuard u("AMCT_SIM_UB_SIZE", "1000000");
    ExpectError("platform_env_ub_larger_than_arch", {"environment AMCT_SIM_UB_SIZE", "UB bytes must be in"},
                [] { amct_sim::GetPlatform(); });
    ExpectError("platform_env_invalid_reaches_launch", {"AMCT_SIM_UB_SIZE"}, [] { simtest::LaunchF("k", 1, [] {}); });
  }
  f = amct_sim::GetPlatform();
  Check("platform_restored", f.aivCores == 40 && f.ubBytes == kArchUb);
}

}  // namespace

int main() {
  TestLaunch();
  TestRaces();
  TestPlatform();
  return simtest::Finish();
}
