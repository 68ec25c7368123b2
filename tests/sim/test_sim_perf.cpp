// Kernel sim speed (the sim runs every emulated kernel of the test suite). Prints "PERF <name> <value> <unit>" and
// PASS/FAIL against generous bounds (the machine may be busy); built with -O2.
#include <chrono>

#include "sim_test.h"

using namespace AscendC;
using simtest::Check;

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A LUT kernel shaped like hifloat8 encode: per element 2 GetValue + 1 SetValue.
void LutKernel(const uint16_t* x, uint8_t* y, const uint8_t* lut, uint32_t n, uint32_t tile) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> inQ;
  TQue<TPosition::VECOUT, 1> outQ;
  TBuf<TPosition::VECIN> lutBuf;
  pipe.InitBuffer(inQ, 1, tile * 2);
  pipe.InitBuffer(outQ, 1, tile);
  pipe.InitBuffer(lutBuf, 32768);
  const uint32_t blocks = static_cast<uint32_t>(GetBlockNum());
  const uint32_t per = n / blocks;
  const uint32_t begin = static_cast<uint32_t>(GetBlockIdx()) * per;
  const uint32_t end = (GetBlockIdx() + 1 == GetBlockNum()) ? n : begin + per;
  GlobalTensor<uint16_t> gx;
  GlobalTensor<uint8_t> gy, gl;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ uint16_t*>(const_cast<uint16_t*>(x)) + begin, end - begin);
  gy.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(y) + begin, end - begin);
  gl.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(const_cast<uint8_t*>(lut)), 32768);
  LocalTensor<uint8_t> table = lutBuf.Get<uint8_t>();
  DataCopyPad(table, gl, DataCopyExtParams{1, 32768, 0, 0, 0}, DataCopyPadExtParams<uint8_t>{});
  SetFlag<HardEvent::MTE2_S>(0);
  WaitFlag<HardEvent::MTE2_S>(0);
  for (uint32_t off = begin; off < end; off += tile) {
    const uint32_t len = std::min(tile, end - off);
    LocalTensor<uint16_t> a = inQ.AllocTensor<uint16_t>();
    DataCopyPad(a, gx[off - begin], DataCopyExtParams{1, len * 2, 0, 0, 0}, DataCopyPadExtParams<uint16_t>{});
    inQ.EnQue(a);
    a = inQ.DeQue<uint16_t>();
    LocalTensor<uint8_t> b = outQ.AllocTensor<uint8_t>();
    for (uint32_t i = 0; i < len; ++i) {
      const uint16_t v = a.GetValue(i);
      const uint8_t m = table.GetValue(v & 0x7FFFu);
      b.SetValue(i, static_cast<uint8_t>(m == 0 ? 0 : (m | ((v >> 15) << 7))));
    }
    outQ.EnQue(b);
    inQ.FreeTensor(a);
    b = outQ.DeQue<uint8_t>();
    DataCopyPad(gy[off - begin], b, DataCopyExtParams{1, len, 0, 0, 0});
    outQ.FreeTensor(b);
  }
}

// y = x * 3 + 1 in vector ops, tiles of `tile` floats.
void VecKernel(const float* x, float* y, uint32_t n, uint32_t tile) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> inQ;
  TQue<TPosition::VECOUT, 1> outQ;
  pipe.InitBuffer(inQ, 2, tile * 4);
  pipe.InitBuffer(outQ, 2, tile * 4);
  const uint32_t blocks = static_cast<uint32_t>(GetBlockNum());
  const uint32_t per = n / blocks;
  const uint32_t begin = static_cast<uint32_t>(GetBlockIdx()) * per;
  const uint32_t end = (GetBlockIdx() + 1 == GetBlockNum()) ? n : begin + per;
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(const_cast<float*>(x)) + begin, end - begin);
  gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + begin, end - begin);
  for (uint32_t off = begin; off < end; off += tile) {
    const uint32_t len = std::min(tile, end - off);
    LocalTensor<float> a = inQ.AllocTensor<float>();
    DataCopyPad(a, gx[off - begin], DataCopyExtParams{1, len * 4, 0, 0, 0}, DataCopyPadExtParams<float>{});
    inQ.EnQue(a);
    a = inQ.DeQue<float>();
    LocalTensor<float> b = outQ.AllocTensor<float>();
    const int32_t vl = static_cast<int32_t>((len + 7) / 8 * 8);
    Muls(b, a, 3.0f, vl);
    Adds(b, b, 1.0f, vl);
    outQ.EnQue(b);
    inQ.FreeTensor(a);
    b = outQ.DeQue<float>();
    DataCopyPad(gy[off - begin], b, DataCopyExtParams{1, len * 4, 0, 0, 0});
    outQ.FreeTensor(b);
  }
}

}  // namespace

int main() {
  setenv("AMCT_SIM_THREADS", "1", 1);  // per-element costs on one thread
  // ---- scalar LUT loop
  {
    const uint32_t n = 1u << 22;
    std::vector<uint16_t> x(n);
    std::vector<uint8_t> y(n), lut(32768);
    for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<uint16_t>(i * 2654435761u >> 16);
    for (uint32_t i = 0; i < 32768; ++i) lut[i] = static_cast<uint8_t>((i * 7) & 0x7F);
    amct_sim::GmScope scope{{x.data(), n * 2ull, false}, {y.data(), n, true}, {lut.data(), 32768, false}};
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
      const double t0 = Now();
      amct_sim::Launch("lut_kernel", 1, [&] { LutKernel(x.data(), y.data(), lut.data(), n, 32768); });
      best = std::min(best, Now() - t0);
    }
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; ++i) {
      const uint8_t m = lut[x[i] & 0x7FFF];
      ok = y[i] == (m == 0 ? 0 : (m | ((x[i] >> 15) << 7)));
    }
    Check("perf_lut_kernel_values", ok);
    const double ns = best * 1e9 / n;
    std::printf("PERF scalar_lut_loop_3_calls_per_element %.3f ns/element\n", ns);
    Check("perf_scalar_lut_loop_under_4ns", ns < 4.0, std::to_string(ns) + " ns/element");
  }
  // ---- vector ops + DMA + hazard bookkeeping + race check, 16M floats, 40 blocks, 2048 tiles
  {
    const uint32_t n = 1u << 24;
    std::vector<float> x(n), y(n);
    for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i & 1023);
    amct_sim::GmScope scope{{x.data(), n * 4ull, false}, {y.data(), n * 4ull, true}};
    auto run = [&](const char* checkSync, const char* checkRaces) {
      setenv("AMCT_SIM_CHECK_SYNC", checkSync, 1);
      setenv("AMCT_SIM_CHECK_RACES", checkRaces, 1);
      double best = 1e9;
      for (int rep = 0; rep < 2; ++rep) {
        const double t0 = Now();
        amct_sim::Launch("vec_kernel", 40, [&] { VecKernel(x.data(), y.data(), n, 8192); });
        best = std::min(best, Now() - t0);
      }
      unsetenv("AMCT_SIM_CHECK_SYNC");
      unsetenv("AMCT_SIM_CHECK_RACES");
      return best * 1e9 / n;
    };
    const double all = run("1", "1");
    const double noRace = run("1", "0");
    const double bare = run("0", "0");
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; ++i) ok = y[i] == x[i] * 3.0f + 1.0f;
    Check("perf_vec_kernel_values", ok);
    std::printf("PERF vec_kernel_16M_all_checks %.3f ns/element\n", all);
    std::printf("PERF vec_kernel_16M_no_race_check %.3f ns/element\n", noRace);
    std::printf("PERF vec_kernel_16M_no_sync_no_race %.3f ns/element\n", bare);
    Check("perf_vec_kernel_under_8ns", all < 8.0, std::to_string(all) + " ns/element");
    Check("perf_race_check_cheap", all - noRace < 0.5, std::to_string(all - noRace) + " ns/element for the race check");
  }
  // ---- a vector op alone
  {
    std::vector<float> sink(1);
    double best = 1e9;
    const int reps = 2000;
    amct_sim::Launch("adds_kernel", 1, [&] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 2 * 16384 * 4);
      LocalTensor<float> s = b.GetWithOffset<float>(16384, 0);
      LocalTensor<float> d = b.GetWithOffset<float>(16384, 16384 * 4);
      Duplicate(s, 1.0f, 16384);
      for (int r = 0; r < 3; ++r) {
        const double t0 = Now();
        for (int i = 0; i < reps; ++i) Adds(d, s, 1.0f, 16384);
        best = std::min(best, Now() - t0);
      }
      sink[0] = d.GetValue(5);
    });
    const double ns = best * 1e9 / (16384.0 * reps);
    std::printf("PERF adds_16k_float %.3f ns/element\n", ns);
    Check("perf_adds_under_2ns", ns < 2.0, std::to_string(ns) + " ns/element");
  }
  return simtest::Finish();
}
