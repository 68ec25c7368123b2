// The repeat reductions under the name the CANN headers in use prefer. CANN 9.1 renamed
// WholeReduceSum/Max/Min to ReduceRepeat<ReduceType::SUM/MAX/MIN, T, U> and BlockReduceSum/Max/Min
// to ReduceDataBlock<...> (basic_api/kernel_operator_vec_reduce_intf.h), keeping the old names
// only as deprecated wrappers; 9.0 has the old names only. The version comes from asc-devkit's
// asc_devkit_version.h (ASC_DEVKIT_MAJOR / ASC_DEVKIT_MINOR; bisheng's CMake force-includes
// it); without it, the old names. Note the argument order: BlockReduce* take repeatTime before
// the mask, ReduceDataBlock (and these wrappers) the mask first, as ReduceRepeat/WholeReduce*.
// The kernel sim declares both sets with their real signatures; tests compile every kernel
// for both versions.
#pragma once

#include "kernel_operator.h"

#if !defined(ASC_DEVKIT_MAJOR) && defined(__has_include)
#if __has_include(<version/asc_devkit_version.h>)
#include <version/asc_devkit_version.h>
#endif
#endif

#if defined(ASC_DEVKIT_MAJOR) && defined(ASC_DEVKIT_MINOR) && \
    (ASC_DEVKIT_MAJOR > 9 || (ASC_DEVKIT_MAJOR == 9 && ASC_DEVKIT_MINOR >= 1))
#define AMCT_KERNEL_REDUCE_NEW_NAMES 1
#else
#define AMCT_KERNEL_REDUCE_NEW_NAMES 0
#endif

namespace amct_kernel {

enum class Reduce { kSum, kMax, kMin };

#if AMCT_KERNEL_REDUCE_NEW_NAMES
template <Reduce kind>
constexpr AscendC::ReduceType kReduceType =
    kind == Reduce::kSum ? AscendC::ReduceType::SUM : (kind == Reduce::kMax ? AscendC::ReduceType::MAX
                                                                            : AscendC::ReduceType::MIN);
#endif

// One result per repeat (WholeReduce* / ReduceRepeat). Mask: an int32_t count or a uint64_t[2]
// bit mask. `order` applies to kMax/kMin.
template <Reduce kind, typename T, typename Mask>
__aicore__ inline void ReduceEachRepeat(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                                        Mask mask, int32_t repeatTime, int32_t dstRepStride, int32_t srcBlkStride,
                                        int32_t srcRepStride,
                                        AscendC::ReduceOrder order = AscendC::ReduceOrder::ORDER_VALUE_INDEX) {
#if AMCT_KERNEL_REDUCE_NEW_NAMES
  if constexpr (kind == Reduce::kSum) {
    AscendC::ReduceRepeat<kReduceType<kind>, T, T>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
                                                   srcRepStride);
  } else {
    AscendC::ReduceRepeat<kReduceType<kind>, T, T>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
                                                   srcRepStride, order);
  }
#else
  if constexpr (kind == Reduce::kSum) {
    AscendC::WholeReduceSum(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride);
  } else if constexpr (kind == Reduce::kMax) {
    AscendC::WholeReduceMax(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, order);
  } else {
    AscendC::WholeReduceMin(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, order);
  }
#endif
}

// One result per 32-B block of every repeat (BlockReduce* / ReduceDataBlock), mask first.
template <Reduce kind, typename T, typename Mask>
__aicore__ inline void ReduceEachBlock(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                                       Mask mask, int32_t repeatTime, int32_t dstRepStride, int32_t srcBlkStride,
                                       int32_t srcRepStride) {
#if AMCT_KERNEL_REDUCE_NEW_NAMES
  AscendC::ReduceDataBlock<kReduceType<kind>, T, T>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
                                                    srcRepStride);
#else
  if constexpr (kind == Reduce::kSum) {
    AscendC::BlockReduceSum(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);
  } else if constexpr (kind == Reduce::kMax) {
    AscendC::BlockReduceMax(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);
  } else {
    AscendC::BlockReduceMin(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);
  }
#endif
}

}  // namespace amct_kernel
