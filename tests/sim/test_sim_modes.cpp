// Kernel sim: the hardware-mode switches (amct_sim::HardwareModes) and their guards.
//  saturation: half/bf16 results of vector arithmetic and casts: +-Inf -> +-MAX, NaN -> 0
//      (SetSaturationFlag's FLOAT mode as documented); float results keep Inf/NaN;
//  flushSubnormals: subnormal float inputs and results of arithmetic, casts, compares -> +-0;
//  strictSync: no auto-sync: scalar <-> pipe orderings on UB need explicit flags.
// Expected bit patterns are written out by hand (IEEE binary16/bfloat16/binary32 encodings).
#include "sim_test.h"

using namespace AscendC;
using simtest::BitsFloat;
using simtest::Check;
using simtest::ExpectError;
using simtest::ExpectOk;
using simtest::FloatBits;
using simtest::Run1;

namespace {

struct ModeScope {  // sets modes for the scope, back to the environment after
  explicit ModeScope(amct_sim::HardwareModes m) { amct_sim::SetModes(m); }
  ~ModeScope() { amct_sim::ResetModes(); }
};

constexpr amct_sim::HardwareModes kDefault{false, false, false};
constexpr amct_sim::HardwareModes kSaturation{true, false, false};
constexpr amct_sim::HardwareModes kFlush{false, true, false};
constexpr amct_sim::HardwareModes kStrict{false, false, true};

// Runs dst = op(a, b) over 16 lanes of T given as raw patterns; returns the result patterns.
template <class T, class Bits, class Op>
std::vector<Bits> Binary(amct_sim::HardwareModes m, const std::vector<Bits>& a, const std::vector<Bits>& b, Op op) {
  ModeScope scope(m);
  std::vector<Bits> out(a.size());
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * 64 * sizeof(T));
    LocalTensor<Bits> raw = buf.Get<Bits>();
    for (uint32_t i = 0; i < a.size(); ++i) {
      raw.SetValue(i, a[i]);
      raw.SetValue(64 + i, b[i]);
    }
    LocalTensor<T> t = buf.Get<T>();
    op(t[128], t, t[64], static_cast<int32_t>(a.size()));
    for (uint32_t i = 0; i < a.size(); ++i) out[i] = raw.GetValue(128 + i);
  });
  return out;
}

template <class D, class S, class DB, class SB>
std::vector<DB> CastBits(amct_sim::HardwareModes m, const std::vector<SB>& in, RoundMode mode) {
  ModeScope scope(m);
  std::vector<DB> out(in.size());
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, 64 * sizeof(S));
    pipe.InitBuffer(db, 64 * sizeof(D));
    LocalTensor<SB> s = sb.Get<SB>();
    for (uint32_t i = 0; i < in.size(); ++i) s.SetValue(i, in[i]);
    Cast(db.Get<D>(), sb.Get<S>(), mode, static_cast<uint32_t>(in.size()));
    LocalTensor<DB> d = db.Get<DB>();
    for (uint32_t i = 0; i < in.size(); ++i) out[i] = d.GetValue(i);
  });
  return out;
}

template <class Bits>
std::string Show(const std::vector<Bits>& v) {
  std::string s;
  for (Bits b : v) s += amct_sim::detail::Fmt("%#llx ", static_cast<unsigned long long>(b));
  return s;
}

template <class Bits>
void Expect(const std::string& name, const std::vector<Bits>& got, const std::vector<Bits>& want) {
  Check(name, got == want, "got " + Show(got) + "want " + Show(want));
}

const auto kAddHalf = [](const LocalTensor<half>& d, const LocalTensor<half>& a, const LocalTensor<half>& b,
                         int32_t n) { Add(d, a, b, n); };
const auto kMulFloat = [](const LocalTensor<float>& d, const LocalTensor<float>& a, const LocalTensor<float>& b,
                          int32_t n) { Mul(d, a, b, n); };
const auto kAddFloat = [](const LocalTensor<float>& d, const LocalTensor<float>& a, const LocalTensor<float>& b,
                          int32_t n) { Add(d, a, b, n); };

void TestSaturation() {
  // half: 65504 + 65504 overflows, -Inf + 1, NaN + 1, 1 + 1 (unaffected).
  const std::vector<uint16_t> a{0x7BFF, 0xFC00, 0x7E00, 0x3C00}, b{0x7BFF, 0x3C00, 0x3C00, 0x3C00};
  Expect("mode_default_half_add_keeps_inf_nan", Binary<half, uint16_t>(kDefault, a, b, kAddHalf),
         std::vector<uint16_t>{0x7C00, 0xFC00, 0x7E00, 0x4000});
  Expect("mode_saturation_half_add_inf_to_max_nan_to_zero", Binary<half, uint16_t>(kSaturation, a, b, kAddHalf),
         std::vector<uint16_t>{0x7BFF, 0xFBFF, 0x0000, 0x4000});
  // float arithmetic is not saturated (the FLOAT mode covers half/bf16 only).
  const std::vector<uint32_t> fa{0x7F7FFFFFu, 0x7FC00000u}, fb{0x7F7FFFFFu, 0x3F800000u};
  Expect("mode_saturation_float_add_keeps_inf_nan", Binary<float, uint32_t>(kSaturation, fa, fb, kAddFloat),
         std::vector<uint32_t>{0x7F800000u, 0x7FC00000u});
  // narrowing casts: 1e6 and -Inf to half, NaN to half and bf16, Inf to bf16.
  const std::vector<uint32_t> in{FloatBits(1e6f), 0xFF800000u, 0x7FC00000u, FloatBits(1.5f)};
  Expect("mode_default_cast_float_to_half_overflows_to_inf",
         CastBits<half, float, uint16_t, uint32_t>(kDefault, in, RoundMode::CAST_NONE),
         std::vector<uint16_t>{0x7C00, 0xFC00, 0x7E00, 0x3E00});
  Expect("mode_saturation_cast_float_to_half", CastBits<half, float, uint16_t, uint32_t>(kSaturation, in,
                                                                                        RoundMode::CAST_NONE),
         std::vector<uint16_t>{0x7BFF, 0xFBFF, 0x0000, 0x3E00});
  const std::vector<uint32_t> inBf{0x7F800000u, 0x7FC00000u, FloatBits(-2.0f)};
  Expect("mode_saturation_cast_float_to_bf16", CastBits<bfloat16_t, float, uint16_t, uint32_t>(kSaturation, inBf,
                                                                                              RoundMode::CAST_RINT),
         std::vector<uint16_t>{0x7F7F, 0x0000, 0xC000});
  // widening casts keep Inf/NaN: half Inf -> float Inf.
  Expect("mode_saturation_cast_half_to_float_keeps_inf",
         CastBits<float, half, uint32_t, uint16_t>(kSaturation, std::vector<uint16_t>{0x7C00, 0x7E00},
                                                   RoundMode::CAST_NONE),
         std::vector<uint32_t>{0x7F800000u, 0x7FC00000u});
}

void TestFlush() {
  // 2^-130 * 2^10: a subnormal input (flushed: 0); 2^-100 * 2^-30: a subnormal result (-> 0);
  // -2^-130 * 1: -0; 2^-60 * 2^-60: normal.
  const std::vector<uint32_t> a{0x00080000u, 0x0D800000u, 0x80080000u, 0x21800000u};
  const std::vector<uint32_t> b{0x44800000u, 0x30800000u, 0x3F800000u, 0x21800000u};
  Expect("mode_default_mul_float_subnormals_exact", Binary<float, uint32_t>(kDefault, a, b, kMulFloat),
         std::vector<uint32_t>{0x03800000u, 0x00080000u, 0x80080000u, 0x03800000u});
  Expect("mode_flush_mul_float_subnormals_to_signed_zero", Binary<float, uint32_t>(kFlush, a, b, kMulFloat),
         std::vector<uint32_t>{0x00000000u, 0x00000000u, 0x80000000u, 0x03800000u});
  // fp32 2^-20 -> half subnormal 0x0010; fp32 -2^-15 -> half 0x8200 (subnormal); 2^-14 normal.
  const std::vector<uint32_t> in{0x35800000u, 0xB8000000u, 0x38800000u};
  Expect("mode_default_cast_float_to_half_subnormal",
         CastBits<half, float, uint16_t, uint32_t>(kDefault, in, RoundMode::CAST_RINT),
         std::vector<uint16_t>{0x0010, 0x8200, 0x0400});
  Expect("mode_flush_cast_float_to_half_subnormal_to_zero",
         CastBits<half, float, uint16_t, uint32_t>(kFlush, in, RoundMode::CAST_RINT),
         std::vector<uint16_t>{0x0000, 0x8000, 0x0400});
  Expect("mode_flush_cast_half_subnormal_input_to_zero",
         CastBits<float, half, uint32_t, uint16_t>(kFlush, std::vector<uint16_t>{0x0001, 0x8200, 0x0400},
                                                   RoundMode::CAST_NONE),
         std::vector<uint32_t>{0x00000000u, 0x80000000u, 0x38800000u});
  // Compares(2^-130 == 0): false by default, true when flushed.
  for (bool flush : {false, true}) {
    ModeScope scope(flush ? kFlush : kDefault);
    uint8_t mask = 0xAA;
    Run1([&] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> buf, mb;
      pipe.InitBuffer(buf, 64 * 4);
      pipe.InitBuffer(mb, 32);
      LocalTensor<float> x = buf.Get<float>();
      Duplicate(x, BitsFloat(0x00080000u), 64);
      LocalTensor<uint8_t> m = mb.Get<uint8_t>();
      Compares(m, x, 0.0f, CMPMODE::EQ, 64);
      mask = m.GetValue(0);
    });
    Check(flush ? "mode_flush_compares_subnormal_equals_zero" : "mode_default_compares_subnormal_not_zero",
          mask == (flush ? 0xFF : 0x00), amct_sim::detail::Fmt("mask byte %#x", mask));
  }
}

// A DMA into a TBuf read by the scalar unit (variant 0: no flag; 1: MTE2_S), a scalar write read
// by V (2: no flag; 3: S_V), and a scalar write into a buffer MTE3 has read (4: no flag; 5: MTE3_S).
void StrictKernel(float* in, float* out, int variant) {
  TPipe pipe;
  TBuf<TPosition::VECIN> inBuf;
  TBuf<TPosition::VECCALC> work;
  TBuf<TPosition::VECCALC> outBuf;
  pipe.InitBuffer(inBuf, 64 * 4);
  pipe.InitBuffer(work, 64 * 4);
  pipe.InitBuffer(outBuf, 64 * 4);
  GlobalTensor<float> inGm, outGm;
  inGm.SetGlobalBuffer(in, 64);
  outGm.SetGlobalBuffer(out, 64);
  LocalTensor<float> x = inBuf.Get<float>();
  LocalTensor<float> w = work.Get<float>();
  if (variant <= 1) {
    DataCopy(x, inGm, 64);
    if (variant == 1) {
      SetFlag<HardEvent::MTE2_S>(0);
      WaitFlag<HardEvent::MTE2_S>(0);
    }
    out[0] = x.GetValue(3);
  } else if (variant <= 3) {
    w.SetValue(0, 1.0f);
    if (variant == 3) {
      SetFlag<HardEvent::S_V>(0);
      WaitFlag<HardEvent::S_V>(0);
    }
    Adds(w, w, 1.0f, 64);
  } else {
    LocalTensor<float> y = outBuf.Get<float>();
    y.SetValue(0, 1.0f);
    SetFlag<HardEvent::S_MTE3>(0);
    WaitFlag<HardEvent::S_MTE3>(0);
    DataCopy(outGm, y, 64);
    if (variant == 5) {
      SetFlag<HardEvent::MTE3_S>(0);
      WaitFlag<HardEvent::MTE3_S>(0);
    }
    y.SetValue(0, 2.0f);
  }
}

void TestStrictSync() {
  std::vector<float> in(64, 2.0f), out(64, 0.0f);
  amct_sim::GmScope gm{{in.data(), in.size() * 4, false}, {out.data(), out.size() * 4, true}};
  auto run = [&](amct_sim::HardwareModes m, int variant) {
    ModeScope scope(m);
    Run1([&] { StrictKernel(in.data(), out.data(), variant); });
  };
  for (int variant : {0, 2, 4}) {
    ExpectOk(amct_sim::detail::Fmt("mode_default_auto_sync_variant_%d", variant), [&] { run(kDefault, variant); });
  }
  ExpectError("mode_strict_scalar_read_after_dma_needs_mte2_s",
              {"LocalTensor::GetValue", "pipe S reads", "written by MTE2", "HardEvent::MTE2_S"},
              [&] { run(kStrict, 0); });
  ExpectOk("mode_strict_scalar_read_after_mte2_s_flag", [&] { run(kStrict, 1); });
  ExpectError("mode_strict_vector_read_after_scalar_write_needs_s_v",
              {"Adds", "pipe V reads", "written by S", "HardEvent::S_V"}, [&] { run(kStrict, 2); });
  ExpectOk("mode_strict_vector_read_after_s_v_flag", [&] { run(kStrict, 3); });
  ExpectError("mode_strict_scalar_write_after_mte3_read_needs_mte3_s",
              {"LocalTensor::SetValue", "pipe S writes", "read by MTE3", "HardEvent::MTE3_S"},
              [&] { run(kStrict, 4); });
  ExpectOk("mode_strict_scalar_write_after_mte3_s_flag", [&] { run(kStrict, 5); });
  {
    ModeScope scope(kStrict);
    ExpectOk("mode_strict_pipe_barrier_all_orders_the_scalar_unit", [&] {
      Run1([&] {
        TPipe pipe;
        TBuf<TPosition::VECIN> inBuf;
        pipe.InitBuffer(inBuf, 64 * 4);
        GlobalTensor<float> inGm;
        inGm.SetGlobalBuffer(in.data(), 64);
        LocalTensor<float> x = inBuf.Get<float>();
        DataCopy(x, inGm, 64);
        PipeBarrier<PIPE_ALL>();
        out[1] = x.GetValue(0);
      });
    });
  }
}

// The kernel-side APIs: SetSaturationFlag<FLOAT> changes the block's mode for later ops and
// does not leak into the next launch (every block starts from the launch's mode);
// GetRuntimeUBSize is the TPipe budget on dav-3510 (follows SetPlatform) and 0 on dav-2201.
void TestKernelApis() {
#if __NPU_ARCH__ == 2201
  const std::vector<uint16_t> big{0x7BFF}, one{0x3C00};
  bool seenAtEntry = true;
  std::vector<uint16_t> inKernel;
  {
    ModeScope scope(kDefault);
    inKernel = Binary<half, uint16_t>(kDefault, big, big, [&](const LocalTensor<half>& d, const LocalTensor<half>& a,
                                                               const LocalTensor<half>& b, int32_t n) {
      seenAtEntry = GetSaturationFlag<SaturationMode::FLOAT>();
      SetSaturationFlag<SaturationMode::FLOAT>(true);
      Add(d, a, b, n);
    });
  }
  Check("ctrl_saturation_flag_off_at_entry_by_default", !seenAtEntry);
  Expect("ctrl_set_saturation_flag_saturates_later_ops", inKernel, std::vector<uint16_t>{0x7BFF});
  Expect("ctrl_saturation_flag_does_not_leak_into_the_next_launch",
         Binary<half, uint16_t>(kDefault, big, big, kAddHalf), std::vector<uint16_t>{0x7C00});
  bool atEntryUnderMode = false;
  Binary<half, uint16_t>(kSaturation, one, one, [&](const LocalTensor<half>& d, const LocalTensor<half>& a,
                                                     const LocalTensor<half>& b, int32_t n) {
    atEntryUnderMode = GetSaturationFlag<SaturationMode::FLOAT>();
    Add(d, a, b, n);
  });
  Check("ctrl_saturation_flag_reports_the_launch_mode", atEntryUnderMode);
#endif
  uint32_t ub = 1, ubSmall = 1;
  Run1([&] { ub = GetRuntimeUBSize(); });
  amct_sim::SetPlatform(0, 65536);
  Run1([&] { ubSmall = GetRuntimeUBSize(); });
  amct_sim::SetPlatform(0, 0);
  const bool ok = amct_sim::detail::kArch3510 ? (ub == 253952u && ubSmall == 65536u) : (ub == 0u && ubSmall == 0u);
  Check("ctrl_get_runtime_ub_size", ok, amct_sim::detail::Fmt("got %u and %u", ub, ubSmall));
}

void TestSwitches() {
  amct_sim::SetModes(amct_sim::HardwareModes{true, true, true});
  const amct_sim::HardwareModes on = amct_sim::GetModes();
  amct_sim::ResetModes();
  const amct_sim::HardwareModes off = amct_sim::GetModes();
  Check("mode_switches_set_and_reset",
        on.saturation && on.flushSubnormals && on.strictSync && !off.saturation && !off.flushSubnormals &&
            !off.strictSync);
}

}  // namespace

int main() {
  TestSwitches();
  TestSaturation();
  TestFlush();
  TestStrictSync();
  TestKernelApis();
  return simtest::Finish();
}
