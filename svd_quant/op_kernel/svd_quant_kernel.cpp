// svd_quant: the MXFP4 quantizer (docs/mxfp4.md A2), one AscendC vector kernel
// used by mxfp4_quantize and by svd_quant for its activation. Compiled by bisheng for dav-2201
// and dav-3510 and, on every machine, by g++ against the kernel sim (the private
// _<op>_emulated ops, which test it on the CPU; the CPU ops themselves are native).
//
// The quantizer's stages are the class amct_mxfp4_kernel::Quantiser (mxfp4_quantiser.h, which
// describes them), shared with the fused svd_quant kernel.
#include "kernel_operator.h"
#include "amct_kernel_common.h"
#include "mxfp4_quantiser.h"
#include "svd_quant_tiling.h"

using namespace AscendC;

namespace {

using amct_mxfp4::Mxfp4Tiling;
using amct_mxfp4_kernel::Quantiser;

template <typename T>
__aicore__ inline void RunQuantiser(GM_ADDR input, GM_ADDR codes, GM_ADDR scales, const Mxfp4Tiling& t, TPipe* pipe) {
  Quantiser<T> q;
  q.InitBuffers(t.roundMode, t.tileBlocks, pipe);
  q.Bind(input, codes, scales, amct_kernel::RangeOfThisBlock(t.blockNum, t.blocksPerCore, t.blocksLastCore));
  q.Process();
}

}  // namespace

// input: (totalBlocks * 32) fp16/bf16/fp32; codes: totalBlocks * 16 bytes; scales: totalBlocks bytes.
extern "C" __global__ __vector__ void amct_svd_quant_kernel(GM_ADDR input, GM_ADDR codes, GM_ADDR scales,
                                                            GM_ADDR tiling) {
  Mxfp4Tiling t = amct_kernel::LoadTiling<Mxfp4Tiling>(tiling);
  TPipe pipe;
  switch (t.dtype) {
    case amct_mxfp4::kFp16: RunQuantiser<half>(input, codes, scales, t, &pipe); break;
    case amct_mxfp4::kBf16: RunQuantiser<bfloat16_t>(input, codes, scales, t, &pipe); break;
    case amct_mxfp4::kFp32: RunQuantiser<float>(input, codes, scales, t, &pipe); break;
    default: break;  // the host never sends another dtype
  }
}

extern "C" void amct_svd_quant_launch(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* codes,
                                      uint8_t* scales, uint8_t* tiling) {
#if defined(AMCT_KERNEL_SIM)
  (void)stream;
  amct_sim::Launch("amct_svd_quant_kernel", blockDim, [=] { amct_svd_quant_kernel(input, codes, scales, tiling); });
#else
  amct_svd_quant_kernel<<<blockDim, nullptr, stream>>>(input, codes, scales, tiling);
#endif
}
