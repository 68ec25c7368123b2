// The NPU facts the reviews could not settle from the docs, measured by a one-block kernel:
//   out[0] the FLOAT saturation flag at launch (dav-2201; -1 on dav-3510, which has no such flag)
//   out[1] GetRuntimeUBSize() (the UB bytes left to TPipe buffers; 0 on dav-2201)
//   out[2] fp16 subnormal 0x0001 widened by Cast half->float (bits; 0 if flushed)
//   out[3] fp32 2^-100 * 2^-30 by Mul (bits; 0x00080000 exact, 0 if flushed)
//   out[4] fp32 2^-20 narrowed by Cast float->half CAST_RINT (bits; 0x0010 exact, 0 if flushed)
//   out[5] fp32 2^-130 (subnormal input) * 2^10 by Mul (bits; 0x03800000 exact, 0 if flushed)
//   out[6] fp32 1.5 * 2^-125 * 2^-6 by Muls (a subnormal result, as stem_indexer's dot * 2^-6 can give;
//          bits; 0x00060000 exact (3 * 2^-132), 0 if flushed)
//   out[7] fp32 2^-149 + 2^-148 by Add (subnormal inputs and result, as stem_indexer's + vbias can
//          take; bits; 0x00000003 exact, 0 if flushed)
// Every scalar <-> pipe ordering is an explicit flag, so the kernel runs with or without
// auto-sync. Results are meant for `selftest --device npu` (docs/npu.md: the op _probe, decoded by
// amct_ops._probe); in the sim (_probe_emulated) they follow the emulated hardware modes
// (tests/sim/test_probe_kernel.cpp, tests/test_probe.py).
#include "kernel_operator.h"
#include "amct_kernel_common.h"

using namespace AscendC;

namespace {

constexpr uint32_t kFacts = 8;  // int32 words written (32 B)

// GetSaturationFlag exists on dav-2201 only: the specialisation is instantiated there alone.
template <int arch, bool kHasFlag = arch == 2201>
struct SaturationProbe {
  static __aicore__ inline int32_t AtLaunch() { return -1; }
};
template <int arch>
struct SaturationProbe<arch, true> {
  static constexpr SaturationMode kFloat = arch == 2201 ? SaturationMode::FLOAT : SaturationMode::FLOAT;
  static __aicore__ inline int32_t AtLaunch() { return GetSaturationFlag<kFloat>() ? 1 : 0; }
};

class Probe {
 public:
  __aicore__ inline void Run(GM_ADDR out, TPipe* pipe) {
    outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out), kFacts);
    pipe->InitBuffer(a_, 256);
    pipe->InitBuffer(b_, 256);
    pipe->InitBuffer(c_, 256);
    pipe->InitBuffer(outQue_, 1, kFacts * 4);
    const int32_t saturation = SaturationProbe<__NPU_ARCH__>::AtLaunch();
    Duplicate(a_.Get<float>(), 0.0f, 64);  // no NaN (fresh UB) enters the arithmetic
    Duplicate(b_.Get<float>(), 0.0f, 64);
    amct_kernel::WaitForPipe<HardEvent::V_S>();
    LocalTensor<uint32_t> a = a_.Get<uint32_t>();
    LocalTensor<uint32_t> b = b_.Get<uint32_t>();
    a.SetValue(0, 0x0D800000u);  // 2^-100
    b.SetValue(0, 0x30800000u);  // 2^-30
    a.SetValue(8, 0x00080000u);  // 2^-130
    b.SetValue(8, 0x44800000u);  // 2^10
    a.SetValue(16, 0x35800000u);  // 2^-20
    a.SetValue(48, 0x01400000u);  // 1.5 * 2^-125
    a.SetValue(56, 0x00000001u);  // 2^-149
    b.SetValue(56, 0x00000002u);  // 2^-148
    a.ReinterpretCast<uint16_t>().SetValue(48, uint16_t(0x0001));  // fp16 2^-24
    amct_kernel::WaitForPipe<HardEvent::S_V>();
    LocalTensor<float> af = a_.Get<float>();
    LocalTensor<float> bf = b_.Get<float>();
    LocalTensor<float> cf = c_.Get<float>();
    Mul(cf, af, bf, 16);                                                        // c[0], c[8]
    Cast(cf[16].ReinterpretCast<half>(), af[16], RoundMode::CAST_RINT, 8);       // c[16] low half
    Cast(cf[32], af[24].ReinterpretCast<half>(), RoundMode::CAST_NONE, 16);      // c[32]
    Muls(cf[48], af[48], 0.015625f, 8);                                          // c[48]: * 2^-6
    Add(cf[56], af[56], bf[56], 8);                                              // c[56]
    amct_kernel::WaitForPipe<HardEvent::V_S>();
    LocalTensor<uint32_t> c = c_.Get<uint32_t>();
    LocalTensor<int32_t> o = outQue_.AllocTensor<int32_t>();
    o.SetValue(0, saturation);
    o.SetValue(1, static_cast<int32_t>(GetRuntimeUBSize()));
    o.SetValue(2, static_cast<int32_t>(c.GetValue(32)));
    o.SetValue(3, static_cast<int32_t>(c.GetValue(0)));
    o.SetValue(4, static_cast<int32_t>(c.ReinterpretCast<uint16_t>().GetValue(32)));
    o.SetValue(5, static_cast<int32_t>(c.GetValue(8)));
    o.SetValue(6, static_cast<int32_t>(c.GetValue(48)));
    o.SetValue(7, static_cast<int32_t>(c.GetValue(56)));
    amct_kernel::WaitForPipe<HardEvent::S_MTE3>();
    outQue_.EnQue(o);
    LocalTensor<int32_t> ov = outQue_.DeQue<int32_t>();
    DataCopy(outGm_, ov, kFacts);
    outQue_.FreeTensor(ov);
  }

 private:
  GlobalTensor<int32_t> outGm_;
  TBuf<TPosition::VECCALC> a_, b_, c_;
  TQue<TPosition::VECOUT, 1> outQue_;
};

}  // namespace

extern "C" __global__ __vector__ void amct_probe_kernel(GM_ADDR out) {
  TPipe pipe;
  Probe probe;
  probe.Run(out, &pipe);
}

extern "C" void amct_probe_launch(void* stream, uint8_t* out) {
#if defined(AMCT_KERNEL_SIM)
  (void)stream;
  amct_sim::Launch("amct_probe_kernel", 1, [=] { amct_probe_kernel(out); });
#else
  amct_probe_kernel<<<1, nullptr, stream>>>(out);
#endif
}
