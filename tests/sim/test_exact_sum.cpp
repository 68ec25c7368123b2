// Kernel sim: amct_kernel::ScaleAddExact<6> / ScaleToUnitsExact / AnyTinyNonzero
// (common/op_kernel/amct_exact_sum.h) on lanes given by tests/test_exact_sum.py. Usage:
//   test_exact_sum <input> <mode>     mode: default | flush | saturation | strict
// The input is lines "x_bits y_bits" (hex fp32 patterns); y repeats every 256 lanes (one chunk
// row of vbias, as the stem_indexer kernel has it), x fills rows of 256. Prints
//   OUT <x_bits> <y_bits> <s_bits>
// per lane, then "TINY <row> <0|1>" = AnyTinyNonzero of each row alone with the chunk's y, and
// "TINYALL <0|1>" for all rows at once. The expected values come from the Python side (an
// independent brute force), never from this program.
#include <fstream>

#include "sim_test.h"
#include "amct_exact_sum.h"

using namespace AscendC;

namespace {

constexpr uint32_t kLanes = 256;

amct_sim::HardwareModes ModeOf(const std::string& name) {
  if (name == "flush") return {false, true, false};
  if (name == "saturation") return {true, false, false};
  if (name == "strict") return {false, false, true};
  return {false, false, false};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <input> <mode>\n", argv[0]);
    return 2;
  }
  std::vector<uint32_t> xs, ys;
  {
    std::ifstream in(argv[1]);
    std::string a, b;
    while (in >> a >> b) {
      xs.push_back(static_cast<uint32_t>(std::stoul(a, nullptr, 16)));
      ys.push_back(static_cast<uint32_t>(std::stoul(b, nullptr, 16)));
    }
  }
  if (xs.empty() || xs.size() % kLanes != 0) {
    std::fprintf(stderr, "need a positive multiple of %u lanes\n", kLanes);
    return 2;
  }
  const uint32_t rows = static_cast<uint32_t>(xs.size() / kLanes);
  for (uint32_t i = kLanes; i < ys.size(); ++i) {
    if (ys[i] != ys[i % kLanes]) {
      std::fprintf(stderr, "y must repeat every %u lanes\n", kLanes);
      return 2;
    }
  }
  std::vector<uint32_t> out(xs.size());
  std::vector<int> tinyRow(rows, -1);
  int tinyAll = -1;
  amct_sim::SetModes(ModeOf(argv[2]));
  try {
    simtest::Run1([&] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> xBuf, yBuf, wBuf, scaledBuf, t0Buf, t1Buf, t2Buf, m0Buf, m1Buf;
      pipe.InitBuffer(xBuf, rows * kLanes * 4);
      pipe.InitBuffer(wBuf, rows * kLanes * 4);
      pipe.InitBuffer(yBuf, kLanes * 4);
      pipe.InitBuffer(scaledBuf, kLanes * 4);
      pipe.InitBuffer(t0Buf, kLanes * 4);
      pipe.InitBuffer(t1Buf, kLanes * 4);
      pipe.InitBuffer(t2Buf, kLanes * 4);
      pipe.InitBuffer(m0Buf, kLanes / 8);
      pipe.InitBuffer(m1Buf, kLanes / 8);
      LocalTensor<float> x = xBuf.Get<float>(), y = yBuf.Get<float>(), w = wBuf.Get<float>();
      LocalTensor<float> scaled = scaledBuf.Get<float>();
      LocalTensor<float> t0 = t0Buf.Get<float>(), t1 = t1Buf.Get<float>(), t2 = t2Buf.Get<float>();
      LocalTensor<uint32_t> xu = x.ReinterpretCast<uint32_t>(), yu = y.ReinterpretCast<uint32_t>();
      for (uint32_t i = 0; i < xs.size(); ++i) xu.SetValue(i, xs[i]);
      for (uint32_t i = 0; i < kLanes; ++i) yu.SetValue(i, ys[i]);
      amct_kernel::WaitForPipe<HardEvent::S_V>();
      for (uint32_t r = 0; r < rows; ++r) {
        tinyRow[r] = amct_kernel::AnyTinyNonzero(x[r * kLanes], 1, kLanes, y, w, t0) ? 1 : 0;
      }
      tinyAll = amct_kernel::AnyTinyNonzero(x, rows, kLanes, y, w, t0) ? 1 : 0;
      amct_kernel::ScaleToUnitsExact(scaled, y, t1, t2, m0Buf.Get<uint8_t>(), kLanes);
      for (uint32_t r = 0; r < rows; ++r) {
        amct_kernel::ScaleAddExact<6>(x[r * kLanes], y, scaled, t0, t1, t2, m0Buf.Get<uint8_t>(),
                                      m1Buf.Get<uint8_t>(), kLanes);
      }
      amct_kernel::WaitForPipe<HardEvent::V_S>();
      for (uint32_t i = 0; i < xs.size(); ++i) out[i] = xu.GetValue(i);
    });
  } catch (const amct_sim::SimError& e) {
    amct_sim::ResetModes();
    std::printf("FAIL launch: %s\n", e.what());
    return 1;
  }
  amct_sim::ResetModes();
  for (uint32_t i = 0; i < xs.size(); ++i) std::printf("OUT %08x %08x %08x\n", xs[i], ys[i], out[i]);
  for (uint32_t r = 0; r < rows; ++r) std::printf("TINY %u %d\n", r, tinyRow[r]);
  std::printf("TINYALL %d\n", tinyAll);
  return 0;
}
