#include "hifloat4_cast_host.h"

#include "amct_tiling.h"

#include <c10/core/SymBool.h>

#include <algorithm>
#include <sstream>
#include <vector>

namespace amct {
namespace hif4 {

using amct_hif4::Hif4Dtype;
using amct_hif4::Hif4Mode;
using amct_hif4::Hif4Tiling;

namespace {

constexpr const char* kFq = "hifloat4_fake_quant";
constexpr const char* kPk = "hifloat4_pack";
constexpr const char* kUp = "hifloat4_unpack";
constexpr int64_t kBlock = amct_hif4::kHif4Block;
constexpr uint32_t kQuantum = amct_hif4::kHif4TileQuantum;
constexpr uint32_t kMaxTileBlocks = 256;   // 16384 elements: bounds the per-call counts
constexpr uint64_t kMinBlocksPerCore = 16;  // fewer would not pay for a core's set-up

// The kernel's slot counts (hifloat4_cast_kernel.cpp: GroupSlot, BlockSlot, UnpackGroupSlot,
// UnpackBlockSlot).
constexpr uint64_t kQuantGroupSlots = 19;
constexpr uint64_t kQuantBlockSlots = 14;
constexpr uint64_t kUnpackGroupSlots = 11;
constexpr uint64_t kUnpackBlockSlots = 4;

uint64_t rup32(uint64_t v) { return roundUp(v, 32); }


void checkFloatInput(const char* op, const at::Tensor& input) {
  checkDtype(op, "input", input.scalar_type(), {at::kHalf, at::kBFloat16, at::kFloat});
  TORCH_CHECK(input.dim() >= 1, op, ": input must have at least 1 dimension, got ", input.dim());
}

void run(Hif4Mode mode, Hif4Dtype dtype, uint64_t totalBlocks, const PlatformFacts& facts, const Launcher& launch,
         const at::Tensor& in0, const at::Tensor& in1, const at::Tensor& out0, const at::Tensor& out1) {
  Hif4Tiling tiling = computeTiling(mode, dtype, totalBlocks, facts);
  launch(tiling.blockNum, in0, in1, out0, out1, tilingTensor(tiling));
}

}  // namespace

Hif4Dtype dtypeOf(at::ScalarType type) {
  return type == at::kHalf ? amct_hif4::kFp16 : (type == at::kBFloat16 ? amct_hif4::kBf16 : amct_hif4::kFp32);
}

// hifloat4_fake_quant's checks in order (dtype, rank, qdim range, multiple of 64); returns qdim in [0, rank).
int64_t checkFakeQuant(const at::Tensor& input, int64_t qdim) {
  checkFloatInput(kFq, input);
  const int64_t rank = input.dim();
  TORCH_CHECK(qdim >= -rank && qdim <= rank - 1, kFq, ": qdim out of range, expected a value in [", -rank, ", ",
              rank - 1, "], got ", qdim);
  const int64_t d = qdim < 0 ? qdim + rank : qdim;
  const c10::SymInt& len = input.sym_size(d);
  TORCH_SYM_CHECK((len % kBlock).sym_eq(0), kFq, ": quant dim length must be a multiple of 64, got ", len);
  return d;
}

// hifloat4_pack's checks (dtype, rank, last dim a multiple of 64).
void checkPack(const at::Tensor& input) {
  checkFloatInput(kPk, input);
  const c10::SymInt& n = input.sym_size(-1);
  TORCH_SYM_CHECK((n % kBlock).sym_eq(0), kPk, ": last dim length must be a multiple of 64, got ", n);
}

// hifloat4_unpack's checks, in the order of the reference; returns the output dtype.
at::ScalarType checkUnpack(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype) {
  checkDtype(kUp, "scale", scale.scalar_type(), {at::kByte});
  checkDtype(kUp, "value", value.scalar_type(), {at::kByte});
  const at::ScalarType out = dtype.value_or(at::kFloat);
  TORCH_CHECK(out == at::kHalf || out == at::kBFloat16 || out == at::kFloat, kUp,
              ": dtype must be float16, bfloat16 or float32, got ", dtypeName(out));
  TORCH_CHECK(value.device() == scale.device(), kUp, ": value device must be ", scale.device(), " to match scale, got ",
              value.device());
  TORCH_CHECK(scale.dim() >= 2, kUp, ": scale must have at least 2 dimensions, got ", scale.dim());
  const c10::SymInt& last = scale.sym_size(-1);
  TORCH_SYM_CHECK(last.sym_eq(4), kUp, ": scale last dim must be 4, got ", last);
  c10::SymIntArrayRef s = scale.sym_sizes();
  std::vector<c10::SymInt> want(s.begin(), s.end() - 2);
  want.push_back(s[s.size() - 2] * 32);
  c10::SymIntArrayRef v = value.sym_sizes();
  bool sameRank = v.size() == want.size();
  c10::SymBool same(sameRank);
  if (sameRank) {
    for (size_t i = 0; i < want.size(); ++i) same = same.sym_and(v[i].sym_eq(want[i]));
  }
  TORCH_SYM_CHECK(same, kUp, ": value shape must be ", shapeText(want), " to match scale ", shapeText(s), ", got ",
                  shapeText(v));
  return out;
}

at::TensorOptions contiguousOptions(const at::Tensor& like, at::ScalarType dtype) {
  return like.options().dtype(dtype).memory_format(at::MemoryFormat::Contiguous);
}

std::vector<c10::SymInt> packScaleShape(c10::SymIntArrayRef in) {
  std::vector<c10::SymInt> s(in.begin(), in.end() - 1);
  s.push_back(in[in.size() - 1] / kBlock);
  s.push_back(4);
  return s;
}

std::vector<c10::SymInt> packValueShape(c10::SymIntArrayRef in) {
  std::vector<c10::SymInt> s(in.begin(), in.end() - 1);
  s.push_back(in[in.size() - 1] / 2);
  return s;
}

std::vector<c10::SymInt> unpackShape(c10::SymIntArrayRef scale) {
  std::vector<c10::SymInt> s(scale.begin(), scale.end() - 2);
  s.push_back(scale[scale.size() - 2] * kBlock);
  return s;
}

uint64_t ubBytes(Hif4Mode mode, Hif4Dtype dtype, uint32_t tileBlocks) {
  const uint64_t u = tileBlocks;
  const uint64_t n = u * kBlock;
  const uint64_t sz = dtype == amct_hif4::kFp32 ? 4 : 2;
  // Common: Gather offsets, NaN scalars, the clean-block mask.
  uint64_t bytes = rup32(4 * n) + 32 + rup32(8 * u);
  if (mode == amct_hif4::kUnpack) {
    bytes += 2 * rup32(4 * u) + 2 * rup32(32 * u) + 2 * rup32(n * sz);  // scale, value, output queues
    bytes += 2 * rup32(4 * n) + 1024;                                    // two fp32 work buffers, byte table
    bytes += rup32(kUnpackGroupSlots * 8 * u * 4) + rup32(kUnpackBlockSlots * u * 4);
    return bytes;
  }
  bytes += 2 * rup32(n * sz);  // input queue
  if (mode == amct_hif4::kPack) {
    bytes += 2 * rup32(n / 2) + 2 * rup32(4 * u);  // value and scale queues
  } else {
    bytes += 2 * rup32(n * sz);  // output queue
  }
  bytes += rup32(4 * n) + 2 * rup32(n * sz) + 2 * rup32(4 * n);  // a, |x| and sign bits, two fp32 work
  bytes += rup32(kQuantGroupSlots * 8 * u * 4) + rup32(kQuantBlockSlots * u * 4);
  bytes += rup32(2 * rup32(u));  // the two compare masks
  return bytes;
}

uint64_t ubBudget(const PlatformFacts& facts) {
#if __NPU_ARCH__ == 3510
  const uint64_t arch = 253952;  // 248 KB usable on dav-3510
#else
  const uint64_t arch = 188416;  // dav-2201: [184 KB, 192 KB) is Select's scratch (modes 1/2)
#endif
  return std::min<uint64_t>(facts.ubBytes, arch);
}

Hif4Tiling computeTiling(Hif4Mode mode, Hif4Dtype dtype, uint64_t totalBlocks, const PlatformFacts& facts) {
  const uint64_t ub = ubBudget(facts);
  uint32_t maxTile = 0;
  for (uint32_t u = kMaxTileBlocks; u >= kQuantum; u -= kQuantum) {
    if (ubBytes(mode, dtype, u) <= ub) {
      maxTile = u;
      break;
    }
  }
  TORCH_CHECK(maxTile > 0, "hifloat4_cast: the UB budget of ", ub, " bytes cannot hold a tile of ", kQuantum,
              " blocks (", ubBytes(mode, dtype, kQuantum), " bytes)");
  const uint64_t cores = std::max<uint64_t>(1, std::min<uint64_t>(facts.aivCores, 65535));
  const uint64_t perCore = std::max<uint64_t>(ceilDiv(totalBlocks, cores), kMinBlocksPerCore);
  const uint64_t blockNum = ceilDiv(totalBlocks, perCore);
  Hif4Tiling t{};
  t.blockNum = static_cast<uint32_t>(blockNum);
  t.mode = mode;
  t.dtype = dtype;
  t.tileBlocks = static_cast<uint32_t>(std::min<uint64_t>(maxTile, roundUp(std::min(perCore, totalBlocks), kQuantum)));
  t.totalBlocks = totalBlocks;
  t.blocksPerCore = perCore;
  t.blocksLastCore = totalBlocks - (blockNum - 1) * perCore;
  t.ubBudget = static_cast<uint32_t>(ub);
  t.ubUsed = static_cast<uint32_t>(ubBytes(mode, dtype, t.tileBlocks));
  return t;
}

at::Tensor fakeQuant(const at::Tensor& input, int64_t qdim, const PlatformFacts& facts, const Launcher& launch) {
  const int64_t d = checkFakeQuant(input, qdim);
  if (input.numel() == 0) return at::empty(input.sizes(), contiguousOptions(input, input.scalar_type()));
  const bool last = d == input.dim() - 1;
  at::Tensor x = last ? input.contiguous() : input.movedim(d, -1).contiguous();
  at::Tensor y = at::empty(x.sizes(), contiguousOptions(x, x.scalar_type()));
  run(amct_hif4::kFakeQuant, dtypeOf(input.scalar_type()), static_cast<uint64_t>(x.numel()) / kBlock, facts, launch,
      x, at::Tensor(), y, at::Tensor());
  return last ? y : y.movedim(-1, d).contiguous();
}

std::tuple<at::Tensor, at::Tensor> pack(const at::Tensor& input, const PlatformFacts& facts, const Launcher& launch) {
  checkPack(input);
  at::Tensor scale = at::empty_symint(packScaleShape(input.sym_sizes()), contiguousOptions(input, at::kByte));
  at::Tensor value = at::empty_symint(packValueShape(input.sym_sizes()), contiguousOptions(input, at::kByte));
  if (input.numel() == 0) return {scale, value};
  at::Tensor x = input.contiguous();
  run(amct_hif4::kPack, dtypeOf(input.scalar_type()), static_cast<uint64_t>(x.numel()) / kBlock, facts, launch, x,
      at::Tensor(), scale, value);
  return {scale, value};
}

at::Tensor unpack(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype,
                  const PlatformFacts& facts, const Launcher& launch) {
  const at::ScalarType out = checkUnpack(scale, value, dtype);
  at::Tensor y = at::empty_symint(unpackShape(scale.sym_sizes()), contiguousOptions(scale, out));
  if (scale.numel() == 0 || value.numel() == 0) return y;
  at::Tensor s = scale.contiguous();
  at::Tensor v = value.contiguous();
  run(amct_hif4::kUnpack, dtypeOf(out), static_cast<uint64_t>(s.numel()) / 4, facts, launch, s, v, y, at::Tensor());
  return y;
}

at::Tensor fakeQuantMeta(const at::Tensor& input, int64_t qdim) {
  checkFakeQuant(input, qdim);
  return at::empty_symint(input.sym_sizes(), contiguousOptions(input, input.scalar_type()));
}

std::tuple<at::Tensor, at::Tensor> packMeta(const at::Tensor& input) {
  checkPack(input);
  return {at::empty_symint(packScaleShape(input.sym_sizes()), contiguousOptions(input, at::kByte)),
          at::empty_symint(packValueShape(input.sym_sizes()), contiguousOptions(input, at::kByte))};
}

at::Tensor unpackMeta(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype) {
  const at::ScalarType out = checkUnpack(scale, value, dtype);
  return at::empty_symint(unpackShape(scale.sym_sizes()), contiguousOptions(scale, out));
}

}  // namespace hif4
}  // namespace amct
