// amct kernel sim: TCubeTiling, the tiling the host's matmul_tiling API fills and the kernel's
// Matmul::Init reads. Standard library only (host glue and kernels both include it).
//
// The fields and their order are CANN's (asc-devkit include/adv_api/matmul/matmul_tilingdata.h,
// BEGIN_TILING_DATA_DEF(TCubeTiling), head of July 2026): a tiling struct the host copies into
// GM byte for byte. The sim's Matmul reads the shape fields (M, N, Ka, Kb, singleCore*, base*),
// the L1 depths and steps, isBias and iterateOrder; the others are carried, not used.
#pragma once

#include <cstdint>

struct TCubeTiling {
  int32_t usedCoreNum;
  int32_t M;
  int32_t N;
  int32_t Ka;
  int32_t Kb;
  int32_t singleCoreM;
  int32_t singleCoreN;
  int32_t singleCoreK;
  int32_t baseM;
  int32_t baseN;
  int32_t baseK;
  int32_t depthA1;
  int32_t depthB1;
  int32_t stepM;
  int32_t stepN;
  int32_t isBias;
  int32_t transLength;
  int32_t iterateOrder;
  int32_t shareMode;
  int32_t shareL1Size;
  int32_t shareL0CSize;
  int32_t shareUbSize;
  int32_t batchM;
  int32_t batchN;
  int32_t singleBatchM;
  int32_t singleBatchN;
  int32_t stepKa;
  int32_t stepKb;
  int32_t depthAL1CacheUB;
  int32_t depthBL1CacheUB;
  int32_t dbL0A;
  int32_t dbL0B;
  int32_t dbL0C;
  int32_t ALayoutInfoB;
  int32_t ALayoutInfoS;
  int32_t ALayoutInfoN;
  int32_t ALayoutInfoG;
  int32_t ALayoutInfoD;
  int32_t BLayoutInfoB;
  int32_t BLayoutInfoS;
  int32_t BLayoutInfoN;
  int32_t BLayoutInfoG;
  int32_t BLayoutInfoD;
  int32_t CLayoutInfoB;
  int32_t CLayoutInfoS1;
  int32_t CLayoutInfoN;
  int32_t CLayoutInfoG;
  int32_t CLayoutInfoS2;
  int32_t BatchNum;
  int32_t mxTypePara;
};

namespace AscendC {
namespace tiling {
using ::TCubeTiling;  // CANN names the plain struct AscendC::tiling::TCubeTiling on the host
}  // namespace tiling
}  // namespace AscendC

namespace amct_sim {
namespace cube {
// Buffer sizes of the AI core's cube side (asc-devkit impl/basic_api/utils/kernel_utils_constants.h:
// TOTAL_L0A_SIZE = TOTAL_L0B_SIZE = 64 KB on both; dav-2201 TOTAL_L1_SIZE = 512 KB (less
// KFC_L1_RESERVER_SIZE, 128 B by default; the sim does not subtract it), TOTAL_L0C_SIZE = 128 KB; dav-3510
// TOTAL_L1_SIZE = 512 KB, TOTAL_L0C_SIZE = 256 KB).
constexpr uint32_t kL0aBytes = 64 * 1024;
constexpr uint32_t kL0bBytes = 64 * 1024;
constexpr uint32_t kL1Bytes = 512 * 1024;
constexpr uint32_t L0cBytes(int arch) { return arch == 3510 ? 256u * 1024u : 128u * 1024u; }
}  // namespace cube
}  // namespace amct_sim
