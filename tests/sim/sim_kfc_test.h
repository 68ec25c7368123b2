// Shared pieces of the KFC Matmul sim tests (test_sim_matmul_kfc.cpp):
// the host tiling of one AIV's bf16 A (m x k, rows of an orgM-row matrix) times bf16 B
// (n x k, transposed), fp32 C into the AIV's UB.
#pragma once

#include <stdexcept>

#include "tiling/tiling_api.h"

namespace simtest {

inline TCubeTiling KfcUbTiling(int m, int n, int k, int orgM) {
  namespace mt = matmul_tiling;
  mt::MatmulApiTiling t;
  t.SetAType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_BF16);
  t.SetBType(mt::TPosition::GM, mt::CubeFormat::ND, mt::DataType::DT_BF16, true);
  t.SetCType(mt::TPosition::VECIN, mt::CubeFormat::ND, mt::DataType::DT_FLOAT);
  t.SetShape(m, n, k);
  t.SetOrgShape(orgM, n, k);
  TCubeTiling tiling;
  if (t.GetTiling(tiling) != 0) throw std::runtime_error("GetTiling failed");
  return tiling;
}

}  // namespace simtest
