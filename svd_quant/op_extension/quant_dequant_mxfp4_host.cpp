#include "quant_dequant_mxfp4_host.h"

#include <cmath>
#include <cstring>

#include "amct_tiling.h"

namespace amct {
namespace qdq {

using amct_qdq::QdqDtype;
using amct_qdq::QdqTiling;

namespace {

constexpr const char* kOp = "quant_dequant_mxfp4";
constexpr uint32_t kQuantum = amct_qdq::kQdqTileQuantum;
constexpr uint32_t kMaxTileBlocks = 512;    // 16384 elements: Gather's per-call limit on dav-2201
constexpr uint64_t kMinBlocksPerCore = 64;  // fewer would not pay for a core's set-up
constexpr uint64_t kBlockSlots = 10;        // the kernel's BlockSlot count (quant_dequant_mxfp4_kernel.cpp)
constexpr uint64_t kTableBytes = 96;        // the kernel's E2M1 value table: 19 floats, rounded up to 32 B

Dtype nativeDtype(at::ScalarType t) {
  return t == at::kHalf ? Dtype::kFp16 : t == at::kBFloat16 ? Dtype::kBf16 : Dtype::kFp32;
}

QdqDtype kernelDtype(at::ScalarType t) {
  return t == at::kHalf ? amct_qdq::kFp16 : t == at::kBFloat16 ? amct_qdq::kBf16 : amct_qdq::kFp32;
}

// A 24-bit significand F (F * 2^(exponent - 23)) of a positive float32, normalised.
struct Significand {
  uint64_t f;
  int32_t exponent;
};

Significand significandOf(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  if (bits >= 0x00800000u) return {(bits & 0x007FFFFFu) | 0x00800000u, static_cast<int32_t>(bits >> 23) - 127};
  const int lead = 31 - __builtin_clz(bits);
  return {static_cast<uint64_t>(bits) << (23 - lead), lead - 149};
}

// The smallest F in [2^23, 2^24) whose product P = F * fs / 2^46 with s's significand reaches
// factor-dependent sqrt(2) multiples: factor 8 tests P >= 3 sqrt(2) / 4 (P^2 >= 9/8), factor 2
// tests P >= 3 sqrt(2) / 2 (P^2 >= 9/2), both exactly in 128-bit integers as
// factor * (F * fs)^2 >= 9 * 2^92. Returns 2^24 when no F does.
uint64_t smallestPassing(uint64_t fs, unsigned factor) {
  using u128 = unsigned __int128;
  const u128 bound = static_cast<u128>(9) << 92;
  auto passes = [&](uint64_t f) {
    const u128 p = static_cast<u128>(f * fs);
    return static_cast<u128>(factor) * p * p >= bound;
  };
  uint64_t lo = uint64_t(1) << 23, hi = uint64_t(1) << 24;  // passes(hi) is the sentinel "yes"
  if (passes(lo)) return lo;
  while (hi - lo > 1) {  // !passes(lo), passes(hi)
    const uint64_t mid = lo + (hi - lo) / 2;
    (passes(mid) ? hi : lo) = mid;
  }
  return hi;
}

void checkX(const at::Tensor& x, bool flat) {
  if (flat) {
    amct::checkDtype(kOp, "x", x.scalar_type(), {at::kFloat});
    const int64_t n = x.sym_numel().guard_int(__FILE__, __LINE__);
    TORCH_CHECK(n % kBlock == 0, kOp, ": x.numel() must be a multiple of 32, got ", n,
                " (the block_size overload takes any last dimension)");
  } else {
    amct::checkDtype(kOp, "x", x.scalar_type(), {at::kHalf, at::kBFloat16, at::kFloat});
    TORCH_CHECK(x.dim() >= 1, kOp, ": x must have at least 1 dimension, got a 0-D tensor");
  }
}

void checkBlockSize(int64_t blockSize) {
  TORCH_CHECK(blockSize == kBlock, kOp, ": block_size must be 32, got ", blockSize);
}

at::Tensor emptyLike(const at::Tensor& x) {
  return at::empty_symint(x.sym_sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
}

at::Tensor runNative(const at::Tensor& x, int64_t rowLength, const Params& p) {
  at::Tensor out = emptyLike(x);
  if (x.numel() == 0) return out;
  const at::Tensor in = x.contiguous();
  const amct::cpu::IeeeSubnormals ieee;  // whatever the caller's FTZ/DAZ modes
  kernelsForThisCpu().run(in.data_ptr(), out.data_ptr(), nativeDtype(x.scalar_type()), in.numel() / rowLength,
                          rowLength, p);
  return out;
}

}  // namespace

Params paramsFor(double invScaleFactorScale) {
  TORCH_CHECK(std::isfinite(invScaleFactorScale) && invScaleFactorScale > 0, kOp,
              ": inv_scale_factor_scale must be positive and finite, got ", invScaleFactorScale);
  const float s = static_cast<float>(invScaleFactorScale);
  TORCH_CHECK(std::isfinite(s) && s > 0, kOp,
              ": inv_scale_factor_scale must be positive and finite as a float32, got ", invScaleFactorScale);
  // E = floor(log2(m * s / (3 sqrt(2)))) (the nearest integer to log2(m * s / 6), never a tie) =
  // em + es - 3 + [P >= 3 sqrt(2) / 4] + [P >= 3 sqrt(2) / 2] with P = Mm * Ms in [1, 4). When the
  // first test passes for every Mm, the second is the one left; otherwise the second never passes.
  const Significand sig = significandOf(s);
  const uint64_t first = smallestPassing(sig.f, 8);
  Params p{};
  uint64_t threshold;
  if (first == (uint64_t(1) << 23)) {
    p.base = sig.exponent - 2;
    threshold = smallestPassing(sig.f, 2);
  } else {
    p.base = sig.exponent - 3;
    threshold = first;
  }
  p.fieldThreshold = static_cast<uint32_t>(threshold - (uint64_t(1) << 23));
  return p;
}

at::Tensor quantDequantFlat(const at::Tensor& x, double invScaleFactorScale) {
  checkX(x, /*flat=*/true);
  const Params p = paramsFor(invScaleFactorScale);
  return runNative(x, std::max<int64_t>(x.numel(), 1), p);
}

at::Tensor quantDequantLastDim(const at::Tensor& x, int64_t blockSize, double invScaleFactorScale) {
  checkX(x, /*flat=*/false);
  checkBlockSize(blockSize);
  const Params p = paramsFor(invScaleFactorScale);
  return runNative(x, std::max<int64_t>(x.size(-1), 1), p);
}

void checkFlat(const at::Tensor& x, double invScaleFactorScale) {
  checkX(x, /*flat=*/true);
  paramsFor(invScaleFactorScale);
}

at::Tensor quantDequantFlatMeta(const at::Tensor& x, double invScaleFactorScale) {
  checkFlat(x, invScaleFactorScale);
  return emptyLike(x);
}

at::Tensor quantDequantLastDimMeta(const at::Tensor& x, int64_t blockSize, double invScaleFactorScale) {
  checkX(x, /*flat=*/false);
  checkBlockSize(blockSize);
  paramsFor(invScaleFactorScale);
  return emptyLike(x);
}

uint64_t ubBytes(QdqDtype dtype, uint32_t tileBlocks) {
  const uint64_t n = static_cast<uint64_t>(tileBlocks) * kBlock;
  const uint64_t in = dtype == amct_qdq::kFp32 ? 4 : 2;
  uint64_t bytes = 2 * roundUp(n * in, 32);      // input queue, double-buffered
  bytes += n * 4;                                 // output queue
  if (dtype != amct_qdq::kFp32) bytes += n * 4;  // widened input
  bytes += 3 * n * 4;                             // three work buffers
  bytes += kBlockSlots * tileBlocks * 4;          // block-level slots
  return bytes + kTableBytes;
}

QdqTiling computeTiling(QdqDtype dtype, const Params& p, uint64_t totalBlocks, const PlatformFacts& facts) {
  const uint64_t ub = vectorUbBudget(facts, /*usesSelect=*/true);
  const BlockSplit split = splitBlocks(kOp, totalBlocks, facts, ub, kQuantum, kMaxTileBlocks, kMinBlocksPerCore,
                                       [dtype](uint32_t u) { return ubBytes(dtype, u); });
  QdqTiling t{};
  t.blockNum = split.blockNum;
  t.dtype = dtype;
  t.tileBlocks = split.tileBlocks;
  t.exponentBase = p.base;
  t.totalBlocks = totalBlocks;
  t.blocksPerCore = split.blocksPerCore;
  t.blocksLastCore = split.blocksLastCore;
  t.fieldThreshold = p.fieldThreshold;
  // The largest E: em <= 127 and the test bit, before the clamp.
  t.wideExponents = 127 + p.base + 1 > 126 ? 1 : 0;
  t.ubBudget = static_cast<uint32_t>(ub);
  t.ubUsed = static_cast<uint32_t>(ubBytes(dtype, t.tileBlocks));
  return t;
}

at::Tensor quantDequantKernel(const at::Tensor& x, int64_t blockSize, double invScaleFactorScale,
                              const PlatformFacts& facts, const Launcher& launch) {
  checkX(x, /*flat=*/false);
  checkBlockSize(blockSize);
  const Params p = paramsFor(invScaleFactorScale);
  at::Tensor out = emptyLike(x);
  if (x.numel() == 0) return out;
  const int64_t n = x.size(-1);
  const int64_t pad = (kBlock - n % kBlock) % kBlock;
  at::Tensor rows = x.contiguous().reshape({-1, n});
  if (pad != 0) rows = at::constant_pad_nd(rows, {0, pad}, 0);
  const at::Tensor flat = rows.contiguous().reshape({-1});
  at::Tensor wide = at::empty({flat.numel()}, x.options().dtype(at::kFloat));
  const QdqTiling t = computeTiling(kernelDtype(x.scalar_type()), p, static_cast<uint64_t>(flat.numel() / kBlock), facts);
  launch(t.blockNum, flat, wide, tilingTensor(t));
  out.copy_(wide.view({-1, n + pad}).narrow(1, 0, n).reshape(x.sizes()));  // to x's dtype, nearest-even
  return out;
}

}  // namespace qdq
}  // namespace amct
