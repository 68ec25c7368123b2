// The CPU implementation of the hifloat4_cast ops: the shared checks, then the native kernels of
// hifloat4_cast_cpu.cpp for the best SIMD path of this CPU. No layout change: a quant dim that is
// not the last one is handled in place, as columns of blocks (the kernels' fakeQuantColumns).
#include "hifloat4_cast_cpu.h"
#include "hifloat4_cast_host.h"

namespace amct {
namespace hif4 {

namespace {

constexpr int64_t kBlock = amct_hif4::kHif4Block;
constexpr const char* kFakeQuant = "hifloat4_fake_quant";
constexpr const char* kPack = "hifloat4_pack";
constexpr const char* kUnpack = "hifloat4_unpack";

const void* dataOf(const at::Tensor& t) { return t.const_data_ptr(); }

// Writes fake-quant(input) along dim d into the contiguous `out` of input's shape (out may be
// input itself: every kernel reads a block before it writes it).
void fakeQuantInto(const at::Tensor& input, int64_t d, const at::Tensor& out) {
  if (input.numel() == 0) return;
  const at::Tensor x = input.contiguous();
  int64_t inner = 1;
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  const amct::cpu::IeeeSubnormals ieee;  // whatever the caller's FTZ/DAZ modes
  const CpuKernels& k = cpuKernelsForThisCpu();
  const int dt = dtypeOf(x.scalar_type());
  if (inner == 1) {
    k.fakeQuantRows[dt](dataOf(x), out.data_ptr(), x.numel() / kBlock);
  } else {
    k.fakeQuantColumns[dt](dataOf(x), out.data_ptr(), x.numel() / (kBlock * inner), inner);
  }
}

void packInto(const at::Tensor& input, const at::Tensor& scale, const at::Tensor& value) {
  if (input.numel() == 0) return;
  const at::Tensor x = input.contiguous();
  const amct::cpu::IeeeSubnormals ieee;  // whatever the caller's FTZ/DAZ modes
  cpuKernelsForThisCpu().pack[dtypeOf(x.scalar_type())](dataOf(x), scale.data_ptr<uint8_t>(),
                                                         value.data_ptr<uint8_t>(), x.numel() / kBlock);
}

void unpackInto(const at::Tensor& scale, const at::Tensor& value, const at::Tensor& out) {
  if (scale.numel() == 0 || value.numel() == 0) return;
  const at::Tensor s = scale.contiguous();
  const at::Tensor v = value.contiguous();
  const amct::cpu::IeeeSubnormals ieee;  // whatever the caller's FTZ/DAZ modes
  cpuKernelsForThisCpu().unpack[dtypeOf(out.scalar_type())](s.const_data_ptr<uint8_t>(), v.const_data_ptr<uint8_t>(),
                                                            out.data_ptr(), s.numel() / 4);
}

// A fresh contiguous output; large ones ask for transparent huge pages (fewer page faults).
at::Tensor freshOutput(c10::SymIntArrayRef shape, const at::Tensor& like, at::ScalarType dtype) {
  at::Tensor out = at::empty_symint(shape, contiguousOptions(like, dtype));
  adviseHugePages(out);
  return out;
}

}  // namespace

at::Tensor fakeQuantNative(const at::Tensor& input, int64_t qdim) {
  const int64_t d = checkFakeQuant(input, qdim);
  at::Tensor out = freshOutput(input.sym_sizes(), input, input.scalar_type());
  fakeQuantInto(input, d, out);
  return out;
}

at::Tensor& fakeQuantNativeOut(const at::Tensor& input, int64_t qdim, at::Tensor& out) {
  const int64_t d = checkFakeQuant(input, qdim);
  checkOutTensor(kFakeQuant, "out", out, input.sym_sizes(), {input.scalar_type()}, input);
  checkOutOverlap(kFakeQuant, "out", out, "input", input, /*sameAllowed=*/true);
  writeContiguous(out, [&](const at::Tensor& dst) { fakeQuantInto(input, d, dst); });
  return out;
}

std::tuple<at::Tensor, at::Tensor> packNative(const at::Tensor& input) {
  checkPack(input);
  at::Tensor scale = freshOutput(packScaleShape(input.sym_sizes()), input, at::kByte);
  at::Tensor value = freshOutput(packValueShape(input.sym_sizes()), input, at::kByte);
  packInto(input, scale, value);
  return {scale, value};
}

std::tuple<at::Tensor&, at::Tensor&> packNativeOut(const at::Tensor& input, at::Tensor& scale, at::Tensor& value) {
  checkPack(input);
  checkOutTensor(kPack, "scale", scale, packScaleShape(input.sym_sizes()), {at::kByte}, input);
  checkOutTensor(kPack, "value", value, packValueShape(input.sym_sizes()), {at::kByte}, input);
  checkOutOverlap(kPack, "scale", scale, "input", input);
  checkOutOverlap(kPack, "value", value, "input", input);
  checkOutOverlap(kPack, "value", value, "scale", scale);
  writeContiguous(scale, [&](const at::Tensor& s) {
    writeContiguous(value, [&](const at::Tensor& v) { packInto(input, s, v); });
  });
  return {scale, value};
}

at::Tensor unpackNative(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype) {
  const at::ScalarType type = checkUnpack(scale, value, dtype);
  at::Tensor out = freshOutput(unpackShape(scale.sym_sizes()), scale, type);
  unpackInto(scale, value, out);
  return out;
}

at::Tensor& unpackNativeOut(const at::Tensor& scale, const at::Tensor& value, std::optional<at::ScalarType> dtype,
                            at::Tensor& out) {
  const at::ScalarType type = checkUnpack(scale, value, dtype);
  checkOutTensor(kUnpack, "out", out, unpackShape(scale.sym_sizes()), {type}, scale);
  checkOutOverlap(kUnpack, "out", out, "scale", scale);
  checkOutOverlap(kUnpack, "out", out, "value", value);
  writeContiguous(out, [&](const at::Tensor& dst) { unpackInto(scale, value, dst); });
  return out;
}

}  // namespace hif4
}  // namespace amct
