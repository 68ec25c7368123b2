// Speed of the repeat-form primitives of sim_reduce.h / sim_gather.h (the sim is the CPU
// backend): one set of checks per call, then loops the compiler vectorises. Prints
// "PERF <name> <ns per element>" and PASS/FAIL against generous bounds (the machine may be
// busy); built with -O2 by tests/test_kernel_sim_ops.py.
#include <chrono>

#include "sim_test.h"

using namespace AscendC;
using simtest::Check;

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Best of 3 runs of `reps` calls, in ns per element.
template <class F>
double NsPerElement(uint32_t elems, int reps, F f) {
  double best = 1e30;
  for (int t = 0; t < 3; ++t) {
    const double a = Now();
    for (int r = 0; r < reps; ++r) f();
    best = std::min(best, (Now() - a) / reps / elems * 1e9);
  }
  return best;
}

}  // namespace

int main() {
  constexpr uint32_t kN = 8192;  // elements (fp32: 128 blocks of 64)
  constexpr int kReps = 2000;
  double blockMax = 0, wholeMinHalf = 0, wholeMax = 0, brcb = 0, gather = 0, gatherMask = 0;
  bool ok = true;
  simtest::Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b, o, h;
    pipe.InitBuffer(a, kN * 4);
    pipe.InitBuffer(b, kN * 4);
    pipe.InitBuffer(o, kN * 4);
    pipe.InitBuffer(h, kN * 2);
    LocalTensor<float> x = a.Get<float>();
    LocalTensor<float> y = b.Get<float>();
    LocalTensor<uint32_t> off = o.Get<uint32_t>();
    LocalTensor<half> xh = h.Get<half>();
    CreateVecIndex(x, 0.0f, kN);
    Duplicate(xh, half(1.5f), kN);
    CreateVecIndex(off.ReinterpretCast<int32_t>(), 0, kN);
    ShiftRight(off, off, uint32_t(2), kN);  // the x4 broadcast of the hifloat4 kernel
    ShiftLeft(off, off, uint32_t(2), kN);
    const uint64_t low[2] = {0x0F0F0F0F0F0F0F0Full, 0};
    blockMax = NsPerElement(kN, kReps, [&] { BlockReduceMax(y, x, kN / 64, low, 1, 1, 8); });
    wholeMax = NsPerElement(kN, kReps, [&] {
      WholeReduceMax(y, x, 64, kN / 64, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
    });
    wholeMinHalf = NsPerElement(kN, kReps, [&] {
      WholeReduceMin(y.ReinterpretCast<half>(), xh, 64, kN / 64, 1, 1, 4, ReduceOrder::ORDER_ONLY_VALUE);
    });
    brcb = NsPerElement(kN, kReps, [&] { Brcb(y, x, kN / 64, BrcbRepeatParams(1, 8)); });
    gather = NsPerElement(kN, kReps, [&] { Gather(y, x, off, 0, kN); });
    uint64_t kept = 0;
    gatherMask = NsPerElement(kN, kReps, [&] {
      GatherMask(y.ReinterpretCast<half>(), xh, uint8_t(1), false, 0, GatherMaskParams(1, kN / 128, 8, 0), kept);
    });
    ok = y.ReinterpretCast<half>().GetValue(0).amct_bits == half(1.5f).amct_bits;
  });
  std::printf("PERF block_reduce_max_half_lanes %.3f ns/elem\n", blockMax);
  std::printf("PERF whole_reduce_max_float %.3f ns/elem\n", wholeMax);
  std::printf("PERF whole_reduce_min_half %.3f ns/elem\n", wholeMinHalf);
  std::printf("PERF brcb_float %.3f ns/elem\n", brcb);
  std::printf("PERF gather_float %.3f ns/elem\n", gather);
  std::printf("PERF gathermask_half %.3f ns/elem\n", gatherMask);
  Check("perf_values", ok);
  // Bounds: about 4x the times on a quiet 2-core CI machine (-O3), so only a loop that stopped
  // vectorising (or per-element checks) fails them.
  Check("perf_block_reduce_under_0.6ns", blockMax < 0.6, std::to_string(blockMax));
  Check("perf_whole_reduce_float_under_1.5ns", wholeMax < 1.5, std::to_string(wholeMax));
  Check("perf_whole_reduce_half_under_3ns", wholeMinHalf < 3.0, std::to_string(wholeMinHalf));
  Check("perf_brcb_under_0.6ns", brcb < 0.6, std::to_string(brcb));
  Check("perf_gather_under_3ns", gather < 3.0, std::to_string(gather));
  Check("perf_gathermask_under_1.6ns", gatherMask < 1.6, std::to_string(gatherMask));
  return simtest::Finish();
}
