// The reference the fused cube kernels are compared against: a plain matmul C = A * B (A [M, K],
// B [K, N], C [M, N], row-major; bf16 or half in, C of the same type, fp32 accumulation) through
// the AscendC Matmul high-level API, one MIX 1:2 launch whose AICs each compute one core block of
// the host's MultiCoreMatmulTiling. The kernel sim runs it (torch.ops.amct._sim_matmul_estimate,
// in cost-only mode, so that the NPU cost model estimates shapes such as 32768 x 2048 x 10944 in
// seconds; tests/sim/test_sim_matmul.cpp checks the same API's numbers). Not a product kernel.
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace AscendC;

namespace {

template <class T>
__aicore__ inline void MatmulBlock(GM_ADDR a, GM_ADDR b, GM_ADDR c, const TCubeTiling& t) {
  using Operand = MatmulType<TPosition::GM, CubeFormat::ND, T>;
  const int32_t idx = static_cast<int32_t>(GetBlockIdx());
  if (idx >= t.usedCoreNum) return;
  const int32_t nBlocks = (t.N + t.singleCoreN - 1) / t.singleCoreN;
  const int32_t m0 = idx / nBlocks * t.singleCoreM, n0 = idx % nBlocks * t.singleCoreN;
  GlobalTensor<T> ga, gb, gc;
  ga.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(a) + static_cast<uint64_t>(m0) * t.Ka);
  gb.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b) + n0);
  gc.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(c) + static_cast<uint64_t>(m0) * t.N + n0);
  TPipe pipe;
  Matmul<Operand, Operand, Operand, Operand, CFG_MDL> mm;
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
  mm.SetTensorA(ga);
  mm.SetTensorB(gb);
  const int32_t tailM = t.M - m0 < t.singleCoreM ? t.M - m0 : t.singleCoreM;
  const int32_t tailN = t.N - n0 < t.singleCoreN ? t.N - n0 : t.singleCoreN;
  mm.SetTail(tailM, tailN);
  mm.IterateAll(gc);
  mm.End();
}

}  // namespace

// dtype: 0 bf16, 1 half. tiling: a TCubeTiling in GM.
extern "C" __global__ __aicore__ void amct_matmul_estimate_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tiling,
                                                                 uint32_t dtype) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  if ASCEND_IS_AIV {
    return;
  }
  const TCubeTiling& t = *reinterpret_cast<const TCubeTiling*>(tiling);
  if (dtype == 0) {
    MatmulBlock<bfloat16_t>(a, b, c, t);
  } else {
    MatmulBlock<half>(a, b, c, t);
  }
}

extern "C" void amct_matmul_estimate_launch(uint32_t blockDim, void* stream, uint8_t* a, uint8_t* b, uint8_t* c,
                                            uint8_t* tiling, uint32_t dtype) {
#if defined(AMCT_KERNEL_SIM)
  (void)stream;
  amct_sim::LaunchMix("amct_matmul_estimate_kernel", blockDim, 2,
                      [&] { amct_matmul_estimate_kernel(a, b, c, tiling, dtype); });
#else
  amct_matmul_estimate_kernel<<<blockDim, nullptr, stream>>>(a, b, c, tiling, dtype);
#endif
}
