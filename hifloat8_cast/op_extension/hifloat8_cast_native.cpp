// The native CPU implementation of the hifloat8_cast ops (the kernels are hifloat8_cast_cpu.cpp):
// validation as the other backends, one output pass in contiguous chunks that the intra-op
// threads take as they become free (amct_parallel.h), and the out= variants.

#include "amct_parallel.h"
#include "hifloat8_cast_cpu.h"
#include "hifloat8_cast_host.h"

namespace amct {
namespace hif8 {
namespace {

using native::Dtype;

// Chunks of 64K..1M elements (a call below 64K runs on the calling thread: waking the pool costs
// more), 16 per call in between; a multiple of 4096 elements, so that neighbouring chunks share at
// most one 4 KiB page of output (none when the output is page-aligned), whatever its dtype.
constexpr int64_t kMinChunk = 1 << 16, kMaxChunk = 1 << 20, kChunkAlign = 4096;

Dtype dtypeOf(at::ScalarType type) {
  return type == at::kHalf ? Dtype::kFp16 : (type == at::kBFloat16 ? Dtype::kBf16 : Dtype::kFp32);
}

// Runs convert(src, dst, count) over input (made contiguous) into out (contiguous, same numel).
template <typename Convert>
void convertChunks(const at::Tensor& input, const at::Tensor& out, const Convert& convert) {
  const int64_t n = input.numel();
  if (n == 0) return;
  at::Tensor src = input.contiguous();
  const auto* s = static_cast<const uint8_t*>(src.data_ptr());
  auto* d = static_cast<uint8_t*>(out.data_ptr());
  const int64_t inBytes = src.element_size(), outBytes = out.element_size();
  parallelChunks(n, chunkElements(n, kMinChunk, kMaxChunk, kChunkAlign), [&](int64_t begin, int64_t end) {
    convert(s + begin * inBytes, d + begin * outBytes, end - begin);
  });
}

at::Tensor freshOutput(const at::Tensor& input, at::ScalarType dtype) {
  at::Tensor out = at::empty(input.sizes(), input.options().dtype(dtype).memory_format(at::MemoryFormat::Contiguous));
  adviseHugePages(out);  // before the first touch: fewer page faults on large fresh outputs
  return out;
}

// out= of `op` with the output dtype `dtype` (after the input checks): the out rule of every
// op, then the conversion into out (fake-quant's out may be its input: it converts in place).
template <typename Convert>
void convertInto(const char* op, const at::Tensor& input, at::Tensor& out, at::ScalarType dtype,
                 const Convert& convert) {
  checkOutTensor(op, "out", out, input.sym_sizes(), {dtype}, input);
  checkOutOverlap(op, "out", out, "input", input, /*sameAllowed=*/dtype == input.scalar_type());
  writeContiguous(out, [&](const at::Tensor& dst) { convertChunks(input, dst, convert); });
}

auto encoder(at::ScalarType type) {
  const native::Kernels& k = native::kernelsForThisCpu();
  const native::Tables& t = native::tables();
  const Dtype in = dtypeOf(type);
  return [&k, &t, in](const uint8_t* src, uint8_t* dst, int64_t n) { k.encode(in, src, dst, n, t); };
}

auto decoder(at::ScalarType type) {
  const native::Kernels& k = native::kernelsForThisCpu();
  const native::Tables& t = native::tables();
  const Dtype out = dtypeOf(type);
  return [&k, &t, out](const uint8_t* src, uint8_t* dst, int64_t n) { k.decode(out, src, dst, n, t); };
}

auto fakeQuantizer(at::ScalarType type) {
  const native::Kernels& k = native::kernelsForThisCpu();
  const native::Tables& t = native::tables();
  const Dtype d = dtypeOf(type);
  return [&k, &t, d](const uint8_t* src, uint8_t* dst, int64_t n) { k.fakeQuant(d, src, dst, n, t); };
}

}  // namespace

at::Tensor encodeNative(const at::Tensor& input) {
  at::Tensor out = freshOutput(input, encodeOutputType(input));
  convertChunks(input, out, encoder(input.scalar_type()));
  return out;
}

at::Tensor decodeNative(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  at::Tensor out = freshOutput(input, decodeOutputType(input, dtype));
  convertChunks(input, out, decoder(out.scalar_type()));
  return out;
}

at::Tensor fakeQuantNative(const at::Tensor& input) {
  at::Tensor out = freshOutput(input, fakeQuantOutputType(input));
  convertChunks(input, out, fakeQuantizer(input.scalar_type()));
  return out;
}

at::Tensor& encodeNativeOut(const at::Tensor& input, at::Tensor& out) {
  convertInto("encode_to_hifloat8", input, out, encodeOutputType(input), encoder(input.scalar_type()));
  return out;
}

at::Tensor& decodeNativeOut(const at::Tensor& input, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  const at::ScalarType type = decodeOutputType(input, dtype);
  convertInto("decode_from_hifloat8", input, out, type, decoder(type));
  return out;
}

at::Tensor& fakeQuantNativeOut(const at::Tensor& input, at::Tensor& out) {
  convertInto("hifloat8_fake_quant", input, out, fakeQuantOutputType(input), fakeQuantizer(input.scalar_type()));
  return out;
}

}  // namespace hif8
}  // namespace amct
