#include "svd_quant_host.h"

#include "amct_tiling.h"
#include "amct_upload.h"
#include "svd_quant_cpu.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/cpu/Utils.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace amct {
namespace mxfp4 {

using amct_mxfp4::Mxfp4Dtype;
using amct_mxfp4::Mxfp4RoundMode;
using amct_mxfp4::Mxfp4Tiling;

namespace {

constexpr const char* kQ = "mxfp4_quantize";
constexpr const char* kD = "mxfp4_dequantize";
constexpr const char* kS = "svd_quant";
constexpr int64_t kBlock = amct_mxfp4::kMxBlock;
constexpr uint32_t kQuantum = amct_mxfp4::kMxTileQuantum;
constexpr uint32_t kMaxTileBlocks = 512;   // 16384 elements: bounds the per-call counts
constexpr uint64_t kMinBlocksPerCore = 64;  // fewer would not pay for a core's set-up
constexpr uint64_t kBlockSlots = 5;         // the kernel's BlockSlot count (svd_quant_kernel.cpp)

uint64_t rup32(uint64_t v) { return roundUp(v, 32); }

// A dimension as a concrete integer (a guard when it is symbolic): K, N, R and the weight shapes
// decide the kernel's work and the messages; only the batch dimensions stay symbolic.
int64_t concreteSize(const at::Tensor& t, int64_t dim) { return t.sym_size(dim).guard_int(__FILE__, __LINE__); }

using amct::shapeText;

std::string shapeText(std::initializer_list<int64_t> shape) {
  const std::vector<c10::SymInt> sym(shape.begin(), shape.end());
  return amct::shapeText(sym);
}

int64_t scaleK(int64_t k) { return (k + 63) / 64; }

bool isCodeDtype(at::ScalarType t) { return t == at::kByte || t == at::kFloat4_e2m1fn_x2; }
bool isScaleDtype(at::ScalarType t) { return t == at::kByte || t == at::kFloat8_e8m0fnu; }

// fp4/e8m0 tensors hold the same bytes as their uint8 views (docs/mxfp4.md A1).
at::Tensor asBytes(const at::Tensor& t) { return t.scalar_type() == at::kByte ? t : t.view(at::kByte); }

at::TensorOptions contiguousOptions(const at::Tensor& like, at::ScalarType dtype) {
  return like.options().dtype(dtype).memory_format(at::MemoryFormat::Contiguous);
}

// ---- mxfp4_quantize -------------------------------------------------------------------------

Mxfp4RoundMode parseRoundMode(const std::string& mode) {
  if (mode == "round") return amct_mxfp4::kRound;
  if (mode == "rint") return amct_mxfp4::kRint;
  TORCH_CHECK(mode == "floor", kQ, ": round_mode must be one of 'round', 'rint', 'floor', got '", mode, "'");
  return amct_mxfp4::kFloor;
}

// The quantize checks in their documented order (dtype, rank, K, round mode); returns the round mode.
Mxfp4RoundMode checkQuantize(const at::Tensor& input, const std::string& roundMode) {
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK(t == at::kHalf || t == at::kBFloat16 || t == at::kFloat, kQ,
              ": input must have dtype float16, bfloat16 or float32, got ", dtypeName(t));
  TORCH_CHECK(input.dim() >= 1, kQ, ": input must have at least 1 dimension, got a 0-D tensor");
  const int64_t k = concreteSize(input, -1);
  TORCH_CHECK(k % kBlock == 0, kQ, ": the last dimension K must be a multiple of 32, got K = ", k);
  return parseRoundMode(roundMode);
}

std::vector<c10::SymInt> leadingShape(c10::SymIntArrayRef shape) {
  return std::vector<c10::SymInt>(shape.begin(), shape.end() - 1);
}

struct QuantizeShapes {
  std::vector<c10::SymInt> codes;
  std::vector<c10::SymInt> scales;
};

QuantizeShapes quantizeShapes(const at::Tensor& input) {
  const int64_t k = concreteSize(input, -1);
  QuantizeShapes shapes{leadingShape(input.sym_sizes()), leadingShape(input.sym_sizes())};
  shapes.codes.push_back(k / 2);
  shapes.scales.push_back(scaleK(k));
  shapes.scales.push_back(2);
  return shapes;
}

std::tuple<at::Tensor, at::Tensor> emptyQuantizeOutputs(const at::Tensor& input) {
  const QuantizeShapes shapes = quantizeShapes(input);
  return {at::empty_symint(shapes.codes, contiguousOptions(input, at::kByte)),
          at::empty_symint(shapes.scales, contiguousOptions(input, at::kByte))};
}

// The out= tensors of mxfp4_quantize: uint8 bytes or their typed views (float4_e2m1fn_x2 codes,
// float8_e8m0fnu scales), of the result's shapes.
void checkQuantizeOuts(const at::Tensor& input, const at::Tensor& codes, const at::Tensor& scales) {
  const QuantizeShapes shapes = quantizeShapes(input);
  checkOutTensor(kQ, "codes", codes, shapes.codes, {at::kByte, at::kFloat4_e2m1fn_x2}, input);
  checkOutTensor(kQ, "scales", scales, shapes.scales, {at::kByte, at::kFloat8_e8m0fnu}, input);
  checkOutOverlap(kQ, "codes", codes, "input", input);
  checkOutOverlap(kQ, "scales", scales, "input", input);
  checkOutOverlap(kQ, "scales", scales, "codes", codes);
}

Mxfp4Dtype dtypeOf(at::ScalarType type) {
  return type == at::kHalf ? amct_mxfp4::kFp16 : (type == at::kBFloat16 ? amct_mxfp4::kBf16 : amct_mxfp4::kFp32);
}

// Runs the kernel on a contiguous input: codes (numel / 2 bytes) and one scale byte per block,
// densely; the caller shapes them.
void runQuantizer(const at::Tensor& x, Mxfp4RoundMode mode, const at::Tensor& codes, const at::Tensor& denseScales,
                  const PlatformFacts& facts, const Launcher& launch) {
  const uint64_t blocks = static_cast<uint64_t>(x.numel()) / kBlock;
  Mxfp4Tiling tiling = computeTiling(dtypeOf(x.scalar_type()), mode, blocks, facts);
  launch(tiling.blockNum, x, codes, denseScales, tilingTensor(tiling));
}

// The native quantizer (svd_quant_cpu.cpp) on a contiguous CPU input with K > 0: codes
// (numel / 2 bytes) and scales of rows of scaleRowStride bytes, pad bytes written 0x00.
void runNativeQuantizer(const at::Tensor& x, Mxfp4RoundMode mode, uint8_t* codes, uint8_t* scales,
                        int64_t scaleRowStride) {
  const int64_t k = x.size(-1);
  const QuantizeJob job{x.data_ptr(), codes, scales, BlockRows{x.numel() / k, k / kBlock, scaleRowStride},
                        dtypeOf(x.scalar_type()), mode};
  const amct::cpu::IeeeSubnormals ieee;  // whatever the caller's FTZ/DAZ modes
  mxfp4KernelsForThisCpu().quantize(job);
}

// ---- mxfp4_dequantize -----------------------------------------------------------------------

// The dequantize checks in their documented order; returns the output dtype.
at::ScalarType checkDequantize(const at::Tensor& codes, const at::Tensor& scales, std::optional<at::ScalarType> dtype) {
  TORCH_CHECK(isCodeDtype(codes.scalar_type()), kD, ": codes must have dtype uint8 or float4_e2m1fn_x2, got ",
              dtypeName(codes.scalar_type()));
  TORCH_CHECK(isScaleDtype(scales.scalar_type()), kD, ": scales must have dtype uint8 or float8_e8m0fnu, got ",
              dtypeName(scales.scalar_type()));
  const at::ScalarType out = dtype.value_or(at::kBFloat16);
  TORCH_CHECK(out == at::kBFloat16 || out == at::kHalf || out == at::kFloat, kD,
              ": dtype must be bfloat16, float16 or float32, got ", dtypeName(out));
  TORCH_CHECK(codes.dim() >= 1, kD, ": codes must have at least 1 dimension, got a 0-D tensor");
  const int64_t half = concreteSize(codes, -1);
  TORCH_CHECK(half % 16 == 0, kD, ": codes.size(-1) = K/2 must be a multiple of 16, got ", half);
  std::vector<c10::SymInt> want = leadingShape(codes.sym_sizes());
  want.push_back(scaleK(2 * half));
  want.push_back(2);
  c10::SymIntArrayRef got = scales.sym_sizes();
  bool same = got.size() == want.size();
  for (size_t i = 0; same && i < want.size(); ++i) same = got[i].guard_int(__FILE__, __LINE__) == want[i].guard_int(__FILE__, __LINE__);
  TORCH_CHECK(same, kD, ": expected scales of shape ", shapeText(want), " for codes of shape ",
              shapeText(codes.sym_sizes()), ", got ", shapeText(got));
  // After those checks (an addition of ours): a CPU tensor mixed with a meta one would otherwise reach
  // the CPU kernel with a storage-less operand.
  TORCH_CHECK(scales.device() == codes.device(), kD, ": scales must be on codes' device ", codes.device(), ", got ",
              scales.device());
  return out;
}

std::vector<c10::SymInt> dequantizeShape(const at::Tensor& codes) {
  std::vector<c10::SymInt> shape = leadingShape(codes.sym_sizes());
  shape.push_back(2 * concreteSize(codes, -1));
  return shape;
}

// Float32 values of the two E2M1 codes of every byte (A1: low nibble first; code 8 is -0).
const at::Tensor& codePairTable() {
  static const at::Tensor* table = [] {
    static const float kE2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    at::Tensor t = at::empty({256, 2}, at::TensorOptions().dtype(at::kFloat));
    float* p = t.data_ptr<float>();
    for (int b = 0; b < 256; ++b) {
      for (int j = 0; j < 2; ++j) {
        const int code = (b >> (4 * j)) & 15;
        p[2 * b + j] = (code & 8) ? -kE2m1[code & 7] : kE2m1[code & 7];
      }
    }
    return new at::Tensor(t);  // never freed: outlives every caller
  }();
  return *table;
}

// Float32 values 2^(b - 127) of every E8M0 byte; 0xFF is NaN (A1). 2^-127 is an fp32 subnormal.
const at::Tensor& scaleTable() {
  static const at::Tensor* table = [] {
    at::Tensor t = at::empty({256}, at::TensorOptions().dtype(at::kFloat));
    float* p = t.data_ptr<float>();
    for (int b = 0; b < 255; ++b) p[b] = std::ldexp(1.0f, b - 127);
    p[255] = std::numeric_limits<float>::quiet_NaN();
    return new at::Tensor(t);
  }();
  return *table;
}

// The blocking host->device copy of a table, made once per table and device by tableOn.
at::Tensor copyTable(const at::Tensor& host, const at::Device& device) {
  return host.to(device, /*non_blocking=*/false, /*copy=*/true);
}

// A process-lifetime host table on `device`: itself on the CPU, else one upload per device
// (amct_upload.h), so a warm NPU call copies no LUT. Only the NPU path gets here (the CPU one
// is native); this file is also built without torch_npu, hence its own cache over a torch copy.
at::Tensor tableOn(const at::Tensor& table, const at::Device& device) {
  if (table.device() == device) return table;
  static amct::DeviceUploads uploads(copyTable);
  return uploads.constant(table, device);
}

// A3 on byte tensors: codes (rows, K/2), scales (rows, >= K/32) with the block bytes first (pad
// bytes and anything after them ignored) -> (rows, K) in `dtype`. The product of a code value and
// a scale is exact in fp32 (or overflows to Inf, as the spec says), then rounded to dtype by RNE.
at::Tensor dequantizeRows(const at::Tensor& codes, const at::Tensor& scales, at::ScalarType dtype) {
  const int64_t rows = codes.size(0);
  const int64_t k = 2 * codes.size(1);
  const int64_t blocks = k / kBlock;
  const at::Tensor& pairs = codePairTable();
  const at::Tensor& powers = scaleTable();
  at::Tensor pairLut = tableOn(pairs, codes.device());
  at::Tensor powerLut = tableOn(powers, codes.device());
  at::Tensor values = at::index_select(pairLut, 0, codes.reshape({-1}).to(at::kInt)).view({rows, blocks, kBlock});
  at::Tensor blockScale = at::index_select(powerLut, 0, scales.narrow(1, 0, blocks).reshape({-1}).to(at::kInt));
  values.mul_(blockScale.view({rows, blocks, 1}));
  return values.view({rows, k}).to(dtype);
}

// The native dequantizer: contiguous byte codes (rows, K/2) with K > 0 and scale rows of
// scaleRowStride bytes into a contiguous `out` of rows * K elements.
void runNativeDequantizer(const at::Tensor& codes, const at::Tensor& scales, int64_t scaleRowStride,
                          const at::Tensor& out) {
  const int64_t half = codes.size(-1);
  const DequantizeJob job{bytePtr(codes), bytePtr(scales), out.data_ptr(),
                          BlockRows{codes.numel() / half, 2 * half / kBlock, scaleRowStride},
                          dtypeOf(out.scalar_type())};
  const amct::cpu::IeeeSubnormals ieee;  // whatever the caller's FTZ/DAZ modes
  mxfp4KernelsForThisCpu().dequantize(job);
}

// Dequantizes non-empty codes / scales of checked shapes into `out` (contiguous, the result's
// shape): natively on the CPU, by ATen table lookups elsewhere.
void dequantizeInto(const at::Tensor& codes, const at::Tensor& scales, const at::Tensor& out) {
  const int64_t half = codes.size(-1);
  at::Tensor c = asBytes(codes).reshape({-1, half});
  at::Tensor s = asBytes(scales).reshape({c.size(0), 2 * scaleK(2 * half)});
  if (codes.device().is_cpu()) {
    runNativeDequantizer(c.contiguous(), s.contiguous(), s.size(1), out);
  } else {
    out.view({c.size(0), 2 * half}).copy_(dequantizeRows(c, s, out.scalar_type()));
  }
}

// ---- svd_quant ------------------------------------------------------------------------------

void checkSvdDtype(const char* arg, const at::Tensor& t, bool ok, const char* expected) {
  TORCH_CHECK(ok, kS, ": Data Type is wrong: ", arg, " must be ", expected, ", got ", dtypeName(t.scalar_type()));
}

void checkSvdRank(const char* arg, const at::Tensor& t, bool ok, const char* required) {
  TORCH_CHECK(ok, kS, ": invalid input shapes: ", arg, " must be ", required, ", got ", t.dim(), "-D shape ",
              shapeText(t.sym_sizes()));
}

void checkSvdShape(const char* arg, const at::Tensor& t, bool ok, const std::string& expected, const SvdDims& d) {
  TORCH_CHECK(ok, kS, ": Input shapes are incompatible: expected ", arg, " of shape ", expected, ", got ",
              shapeText(t.sym_sizes()), " (K = ", d.k, ", N = ", d.n, ", R = ", d.r, ")");
}

}  // namespace

// svd_quant's checks in their documented order (A5).
SvdDims checkSvdQuant(const at::Tensor& x, const at::Tensor& w, const at::Tensor& s, const at::Tensor& down,
                      const at::Tensor& up) {
  checkSvdDtype("activation", x, x.scalar_type() == at::kBFloat16, "bfloat16");
  checkSvdDtype("weights", w, isCodeDtype(w.scalar_type()), "uint8 or float4_e2m1fn_x2");
  checkSvdDtype("scales", s, isScaleDtype(s.scalar_type()), "uint8 or float8_e8m0fnu");
  checkSvdDtype("down", down, down.scalar_type() == at::kBFloat16, "bfloat16");
  checkSvdDtype("up", up, up.scalar_type() == at::kBFloat16, "bfloat16");
  checkSvdRank("activation", x, x.dim() >= 2, "at least 2-D (*, S, K)");
  checkSvdRank("weights", w, w.dim() == 2, "2-D (N, K/2)");
  checkSvdRank("scales", s, s.dim() == 3, "3-D (N, ceil(K/64), 2)");
  checkSvdRank("down", down, down.dim() == 2, "2-D (K, R)");
  checkSvdRank("up", up, up.dim() == 2, "2-D (R, N)");
  SvdDims d{concreteSize(x, -1), concreteSize(up, 1), concreteSize(down, 1)};
  TORCH_CHECK(d.k % kBlock == 0, kS, ": K dimension should be a multiple of 32, got K = ", d.k);
  const int64_t sk = scaleK(d.k);
  checkSvdShape("up", up, concreteSize(up, 0) == d.r, shapeText({d.r, d.n}), d);
  checkSvdShape("down", down, concreteSize(down, 0) == d.k, shapeText({d.k, d.r}), d);
  checkSvdShape("weights", w, concreteSize(w, 1) == d.k / 2 && concreteSize(w, 0) == d.n,
                shapeText({d.n, d.k / 2}), d);
  checkSvdShape("scales", s,
                concreteSize(s, 2) == 2 && concreteSize(s, 1) == sk && concreteSize(s, 0) == d.n,
                shapeText({d.n, sk, 2}), d);
  TORCH_CHECK(d.r >= 1, kS, ": rank R = down.size(1) must be >= 1, got ", d.r);
  const std::pair<const char*, const at::Tensor*> others[] = {{"weights", &w}, {"scales", &s}, {"down", &down}, {"up", &up}};
  for (const auto& other : others) {
    TORCH_CHECK(other.second->device() == x.device(), kS, ": all inputs must be on the same device; activation is on ",
                x.device(), " but ", other.first, " is on ", other.second->device());
  }
  return d;
}

std::vector<c10::SymInt> svdOutputShape(const at::Tensor& x, int64_t n) {
  std::vector<c10::SymInt> shape = leadingShape(x.sym_sizes());
  shape.push_back(n);
  return shape;
}

std::optional<at::Tensor> trivialSvdResult(const at::Tensor& activation, const SvdDims& d) {
  const std::vector<c10::SymInt> shape = svdOutputShape(activation, d.n);
  const at::TensorOptions options = contiguousOptions(activation, at::kBFloat16);
  if (activation.numel() == 0 && d.k > 0) return at::empty_symint(shape, options);  // B*S = 0
  if (d.n == 0) return at::empty_symint(shape, options);
  if (d.k == 0) return at::zeros_symint(shape, options);
  return std::nullopt;
}

namespace {

at::Tensor bf16(const at::Tensor& t) { return t.to(at::kBFloat16); }

}  // namespace

uint64_t ubBytes(Mxfp4Dtype dtype, uint32_t tileBlocks) {
  const uint64_t u = tileBlocks;
  const uint64_t n = u * kBlock;
  const uint64_t sz = dtype == amct_mxfp4::kFp32 ? 4 : 2;
  uint64_t bytes = 2 * rup32(n * sz) + rup32(n / 2) + rup32(u);  // input (double), code and scale queues
  if (sz != 4) bytes += rup32(4 * n);                                     // the fp32 widening
  bytes += 3 * rup32(4 * n);                                              // three fp32 work buffers
  bytes += rup32(kBlockSlots * u * 4);                                    // block-level slots
  return bytes;
}

Mxfp4Tiling computeTiling(Mxfp4Dtype dtype, Mxfp4RoundMode mode, uint64_t totalBlocks, const PlatformFacts& facts) {
  const uint64_t ub = vectorUbBudget(facts, /*usesSelect=*/true);
  const BlockSplit split = splitBlocks(kQ, totalBlocks, facts, ub, kQuantum, kMaxTileBlocks, kMinBlocksPerCore,
                                       [dtype](uint32_t u) { return ubBytes(dtype, u); });
  Mxfp4Tiling t{};
  t.blockNum = split.blockNum;
  t.dtype = dtype;
  t.roundMode = mode;
  t.tileBlocks = split.tileBlocks;
  t.totalBlocks = totalBlocks;
  t.blocksPerCore = split.blocksPerCore;
  t.blocksLastCore = split.blocksLastCore;
  t.ubBudget = static_cast<uint32_t>(ub);
  t.ubUsed = static_cast<uint32_t>(ubBytes(dtype, t.tileBlocks));
  return t;
}

std::tuple<at::Tensor, at::Tensor> quantize(const at::Tensor& input, const std::string& roundMode,
                                            const PlatformFacts& facts, const Launcher& launch) {
  const Mxfp4RoundMode mode = checkQuantize(input, roundMode);
  auto [codes, scales] = emptyQuantizeOutputs(input);
  if (input.numel() == 0) return {codes, scales};
  at::Tensor x = input.contiguous();
  const int64_t k = input.size(-1);
  const int64_t rows = x.numel() / k;
  const int64_t blocks = k / kBlock;
  if (blocks % 2 == 0) {  // no pad byte: the dense scales are the output's bytes
    runQuantizer(x, mode, codes, scales, facts, launch);
    return {codes, scales};
  }
  // An odd block count per row: every row ends with a pad byte 0x00 (A1).
  at::Tensor dense = at::empty({rows, blocks}, contiguousOptions(input, at::kByte));
  runQuantizer(x, mode, codes, dense, facts, launch);
  scales.zero_();
  scales.view({rows, 2 * scaleK(k)}).narrow(1, 0, blocks).copy_(dense);
  return {codes, scales};
}

std::tuple<at::Tensor, at::Tensor> quantizeNative(const at::Tensor& input, const std::string& roundMode) {
  const Mxfp4RoundMode mode = checkQuantize(input, roundMode);
  auto [codes, scales] = emptyQuantizeOutputs(input);
  if (input.numel() == 0) return {codes, scales};
  adviseHugePages(codes);
  runNativeQuantizer(input.contiguous(), mode, bytePtr(codes), bytePtr(scales), 2 * scaleK(input.size(-1)));
  return {codes, scales};
}

std::tuple<at::Tensor&, at::Tensor&> quantizeNativeOut(const at::Tensor& input, const std::string& roundMode,
                                                       at::Tensor& codes, at::Tensor& scales) {
  const Mxfp4RoundMode mode = checkQuantize(input, roundMode);
  checkQuantizeOuts(input, codes, scales);
  if (input.numel() == 0) return {codes, scales};
  const at::Tensor x = input.contiguous();
  writeContiguous(codes, [&](const at::Tensor& c) {
    writeContiguous(scales, [&](const at::Tensor& s) {
      runNativeQuantizer(x, mode, bytePtr(c), bytePtr(s), 2 * scaleK(input.size(-1)));
    });
  });
  return {codes, scales};
}

at::Tensor dequantize(const at::Tensor& codes, const at::Tensor& scales, std::optional<at::ScalarType> dtype) {
  const at::ScalarType type = checkDequantize(codes, scales, dtype);
  at::Tensor out = at::empty_symint(dequantizeShape(codes), contiguousOptions(codes, type));
  if (codes.numel() == 0) return out;
  adviseHugePages(out);
  dequantizeInto(codes, scales, out);
  return out;
}

at::Tensor& dequantizeOut(const at::Tensor& codes, const at::Tensor& scales, std::optional<at::ScalarType> dtype,
                          at::Tensor& out) {
  const at::ScalarType type = checkDequantize(codes, scales, dtype);
  checkOutTensor(kD, "out", out, dequantizeShape(codes), {type}, codes);
  if (codes.numel() == 0) return out;
  checkOutOverlap(kD, "out", out, "codes", codes);
  checkOutOverlap(kD, "out", out, "scales", scales);
  writeContiguous(out, [&](const at::Tensor& dst) { dequantizeInto(codes, scales, dst); });
  return out;
}

namespace {

// Native dequantization of byte rows into a fresh contiguous (rows, K) tensor.
at::Tensor dequantizeRowsNative(const at::Tensor& codes, const at::Tensor& scales, at::ScalarType dtype) {
  at::Tensor out = at::empty({codes.size(0), 2 * codes.size(1)}, contiguousOptions(codes, dtype));
  if (out.numel() == 0) return out;
  at::Tensor s = scales.contiguous();
  runNativeDequantizer(codes.contiguous(), s, s.size(1), out);
  return out;
}

// ---- svd_quant's GEMMs on the CPU (docs/mxfp4.md A5) -----------------------------------------

// Which GEMMs run in bfloat16. kAuto decides by the CPU; the others are the test hook
// AMCT_SVD_QUANT_GEMM (svd_quant/README.md): kFp32 everywhere, kBf16 as on a CPU with bf16 dot
// products (the FP4 GEMM still gated by fp4FlushFree), kBf16Ungated without that gate (so the
// tests can show that their inputs would be flushed).
enum class GemmMode { kAuto, kFp32, kBf16, kBf16Ungated };

constexpr const char* kGemmEnv = "AMCT_SVD_QUANT_GEMM";

// Read per call, so that a test can switch it within one process.
GemmMode gemmModeFromEnvironment() {
  const char* env = std::getenv(kGemmEnv);
  if (env == nullptr || *env == '\0') return GemmMode::kAuto;
  const std::string mode(env);
  if (mode == "auto") return GemmMode::kAuto;
  if (mode == "fp32") return GemmMode::kFp32;
  if (mode == "bf16") return GemmMode::kBf16;
  TORCH_CHECK(mode == "bf16_ungated", kS, ": ", kGemmEnv, " must be auto, fp32, bf16 or bf16_ungated, got '", mode,
              "'");
  return GemmMode::kBf16Ungated;
}

// avx512_bf16 (vdpbf16ps) or AMX-BF16, as ATen's cpuinfo query reports them.
bool cpuHasBf16DotProducts() {
  static const bool has = [] {
    const auto caps = at::cpu::get_cpu_capabilities();
    auto flag = [&caps](const char* name) {
      const auto it = caps.find(name);
      return it != caps.end() && it->second.isBool() && it->second.toBool();
    };
    return flag("avx512_bf16") || flag("amx_bf16");
  }();
  return has;
}

// Torch's bf16 GEMM is oneDNN's; it beats the fp32 GEMM only with bf16 dot-product instructions
// (on AVX2 it is several times slower). A run lowered to AVX2 or portable code
// (AMCT_CPU_CAPABILITY, _cpu_capability) takes the fp32 path as such a CPU would, and so does one
// with oneDNN disabled (torch.backends.mkldnn.enabled = False: ATen's slow fallback GEMM).
bool bf16GemmsPay() {
  return cpuHasBf16DotProducts() && amct::cpu::activeCapability() == amct::cpu::Capability::kAvx512 &&
         at::hasMKLDNN() && at::globalContext().userEnabledMkldnn();
}

constexpr int kNoLiveBlock = 256;  // above every scale byte

// A block's 16 code bytes hold a nonzero magnitude (code & 7 of either nibble).
bool hasNonzeroCode(const uint8_t* blockCodes) {
  uint8_t any = 0;
  for (int i = 0; i < static_cast<int>(kBlock / 2); ++i) any |= blockCodes[i] & 0x77;
  return any != 0;
}

// The smallest scale byte over the blocks holding a nonzero code (kNoLiveBlock if none): only
// those blocks give nonzero elements (a block of zero codes dequantizes to ±0, or NaN for 0xFF,
// whatever its scale; our quantizer gives all-zero blocks scale 0). codes: contiguous (rows,
// K/2); block b of row r has its scale at scales[r * scaleStride + b]. Scans the scale bytes and
// the codes only of blocks below the running minimum; stops once it is below 2.
int liveMinScale(const uint8_t* codes, const uint8_t* scales, int64_t rows, int64_t blocks, int64_t scaleStride) {
  int best = kNoLiveBlock;
  for (int64_t r = 0; r < rows && best >= 2; ++r) {
    const uint8_t* rowScales = scales + r * scaleStride;
    const uint8_t* rowCodes = codes + r * blocks * (kBlock / 2);
    for (int64_t b = 0; b < blocks; ++b) {
      if (rowScales[b] < best && hasNonzeroCode(rowCodes + b * (kBlock / 2))) best = rowScales[b];
    }
  }
  return best;
}

// Whether a bf16 GEMM of the dequantized Q(X) and Q(W) computes what the fp32 one does although
// bf16 dot products flush subnormal inputs, products and sums to zero (DAZ/FTZ). A nonzero element
// is e2m1 * 2^(s-127) = p * 2^(s-128) with an integer p in {1, 2, 3, 4, 6, 8, 12}: normal iff
// s >= 2. Every product of nonzero elements of blocks with scales sx, sw is an integer multiple
// of 2^(sx+sw-256), hence of u = 2^(sxMin+swMin-256); so is every exact partial sum, and its fp32
// rounding too (rounding a multiple of u lands on a multiple of ulp >= u, or is exact when
// ulp < u), so every value is 0 or at least u in magnitude. With u >= 2^-126 (sxMin + swMin >=
// 130) and every element normal nothing subnormal ever appears, and the flush cannot act. If one
// side has no nonzero element, every product is ±0 or NaN either way.
bool fp4FlushFree(int sxMin, int swMin) {
  if (sxMin == kNoLiveBlock || swMin == kNoLiveBlock) return true;
  return sxMin >= 2 && swMin >= 2 && sxMin + swMin >= 130;
}

struct GemmPlan {
  bool lowRankBf16;
  bool fp4Bf16;
};

// X's codes (m, K/2) with dense scales (m, K/32); W's codes (N, K/2) with scale rows of
// 2 * ceil(K/64) bytes (the pad byte ignored). Reads the scales only when a bf16 path is wanted.
GemmPlan planGemms(const at::Tensor& xCodes, const at::Tensor& xScales, const at::Tensor& w, const at::Tensor& ws) {
  const GemmMode mode = gemmModeFromEnvironment();
  const bool bf16 = mode == GemmMode::kBf16 || mode == GemmMode::kBf16Ungated ||
                    (mode == GemmMode::kAuto && bf16GemmsPay());
  if (!bf16) return {false, false};
  if (mode == GemmMode::kBf16Ungated) return {true, true};
  const int64_t blocks = xScales.size(1);
  const int sxMin = liveMinScale(bytePtr(xCodes), bytePtr(xScales), xCodes.size(0), blocks, blocks);
  if (sxMin < 2) return {true, false};  // a subnormal element of Q(X): no need to scan W
  const int swMin = liveMinScale(bytePtr(w), bytePtr(ws), w.size(0), blocks, ws.size(1));
  return {true, fp4FlushFree(sxMin, swMin)};
}

// bf16(bf16(X·D)·U). In bf16 (bf16 operands, fp32 accumulation, one rounding to bf16 of each
// product, which are A5's rounding points), or in fp32 on the exactly widened operands.
at::Tensor lowRankBranch(const at::Tensor& x, const at::Tensor& down, const at::Tensor& up, bool inBf16) {
  if (inBf16) return at::mm(at::mm(x, down), up);
  at::Tensor xd = bf16(at::mm(x.to(at::kFloat), down.to(at::kFloat)));
  return bf16(at::mm(xd.to(at::kFloat), up.to(at::kFloat)));
}

// bf16(Q(X)·Q(W)ᵀ). The dequantized elements are exact in bf16 and in fp32 (A3), so only the
// GEMM's accumulation differs between the two, and fp4FlushFree keeps the bf16 one free of flushing.
at::Tensor fp4Branch(const at::Tensor& xCodes, const at::Tensor& xScales, const at::Tensor& w, const at::Tensor& ws,
                     bool inBf16) {
  const at::ScalarType type = inBf16 ? at::kBFloat16 : at::kFloat;
  at::Tensor xq = dequantizeRowsNative(xCodes, xScales, type);
  at::Tensor wq = dequantizeRowsNative(w, ws, type);
  return bf16(at::mm(xq, wq.t()));
}

}  // namespace

at::Tensor svdQuantNative(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                          const at::Tensor& down, const at::Tensor& up) {
  const SvdDims d = checkSvdQuant(activation, weights, scales, down, up);
  if (std::optional<at::Tensor> trivial = trivialSvdResult(activation, d)) return *trivial;
  // Batch dimensions folded into M rows; every step is row-wise, so batch shape cannot matter.
  at::Tensor x = activation.reshape({-1, d.k}).contiguous();
  const int64_t m = x.size(0);
  // Q(X): the native quantizer, "round" mode; its dense scales need no pad byte here.
  at::Tensor xCodes = at::empty({m, d.k / 2}, contiguousOptions(x, at::kByte));
  at::Tensor xScales = at::empty({m, d.k / kBlock}, contiguousOptions(x, at::kByte));
  runNativeQuantizer(x, amct_mxfp4::kRound, bytePtr(xCodes), bytePtr(xScales), xScales.size(1));
  at::Tensor w = asBytes(weights).contiguous();
  at::Tensor ws = asBytes(scales).reshape({d.n, 2 * scaleK(d.k)}).contiguous();
  const GemmPlan plan = planGemms(xCodes, xScales, w, ws);
  at::Tensor lowRank = lowRankBranch(x, down, up, plan.lowRankBf16);
  at::Tensor fp4 = fp4Branch(xCodes, xScales, w, ws, plan.fp4Bf16);
  // ATen adds bf16 tensors in fp32 and rounds once: for bf16 a, b that is bf16 of the exact sum
  // (fp32 has more than 2 * 8 + 1 significand bits, so the double rounding is innocuous; A5).
  // In place: fp4 is a fresh tensor of this call, and a new output would cost its page faults.
  return fp4.add_(lowRank).view_symint(svdOutputShape(activation, d.n));
}

std::tuple<at::Tensor, at::Tensor> quantizeMeta(const at::Tensor& input, const std::string& roundMode) {
  checkQuantize(input, roundMode);
  return emptyQuantizeOutputs(input);
}

at::Tensor dequantizeMeta(const at::Tensor& codes, const at::Tensor& scales, std::optional<at::ScalarType> dtype) {
  const at::ScalarType out = checkDequantize(codes, scales, dtype);
  return at::empty_symint(dequantizeShape(codes), contiguousOptions(codes, out));
}

at::Tensor svdQuantMeta(const at::Tensor& activation, const at::Tensor& weights, const at::Tensor& scales,
                        const at::Tensor& down, const at::Tensor& up) {
  const SvdDims d = checkSvdQuant(activation, weights, scales, down, up);
  return at::empty_symint(svdOutputShape(activation, d.n), contiguousOptions(activation, at::kBFloat16));
}

}  // namespace mxfp4
}  // namespace amct
