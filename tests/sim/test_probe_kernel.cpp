// Kernel sim: the NPU probe kernel (common/op_kernel/amct_probe.cpp) reports the emulated
// hardware modes: the saturation flag at launch (dav-2201), GetRuntimeUBSize, and the exact or
// flushed subnormal results of Cast and Mul; it runs under strict sync (explicit flags only).
// Expected patterns are the IEEE encodings written out by hand.
#include "sim_test.h"
#include "amct_probe.cpp"

using simtest::Check;

namespace {

std::vector<int32_t> RunProbe(amct_sim::HardwareModes m) {
  std::vector<int32_t> out(8, 0x5A5A5A5A);
  amct_sim::GmScope scope{{out.data(), out.size() * 4, true}};
  amct_sim::SetModes(m);
  try {
    amct_probe_launch(nullptr, reinterpret_cast<uint8_t*>(out.data()));
  } catch (const amct_sim::SimError& e) {
    amct_sim::ResetModes();
    simtest::Failed("probe_launch", e.what());
    return out;
  }
  amct_sim::ResetModes();
  return out;
}

void Expect(const std::string& name, const std::vector<int32_t>& got, const std::vector<int32_t>& want) {
  std::string why;
  for (size_t i = 0; i < want.size(); ++i) why += amct_sim::detail::Fmt("%#x/%#x ", got[i], want[i]);
  Check(name, std::equal(want.begin(), want.end(), got.begin()), "got/want " + why);
}

}  // namespace

int main() {
  const int32_t sat0 = amct_sim::detail::kArch2201 ? 0 : -1;
  const int32_t sat1 = amct_sim::detail::kArch2201 ? 1 : -1;
  const int32_t ub = amct_sim::detail::kArch3510 ? 253952 : 0;
  Expect("probe_default", RunProbe({false, false, false}), {sat0, ub, 0x33800000, 0x00080000, 0x0010, 0x03800000, 0x00060000, 3});
  Expect("probe_flush_subnormals", RunProbe({false, true, false}), {sat0, ub, 0, 0, 0, 0, 0, 0});
  Expect("probe_saturation", RunProbe({true, false, false}), {sat1, ub, 0x33800000, 0x00080000, 0x0010, 0x03800000, 0x00060000, 3});
  Expect("probe_strict_sync", RunProbe({false, false, true}), {sat0, ub, 0x33800000, 0x00080000, 0x0010, 0x03800000, 0x00060000, 3});
  return simtest::Finish();
}
