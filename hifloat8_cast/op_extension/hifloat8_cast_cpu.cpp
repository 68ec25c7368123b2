// The native CPU kernels of hifloat8_cast: one pass over memory, V16::size() elements per step,
// no branches per element. The method is described in hifloat8_cast_cpu.h; the SIMD pieces
// at::vec lacks are in hifloat8_cast_simd.h. Compiled once per capability (CPU_KERNELS).
#include "hifloat8_cast_cpu.h"

#include <cstring>

#include "hifloat8_cast_simd.h"

namespace amct {
namespace hif8 {
namespace native {
namespace CPU_CAPABILITY {

extern const Kernels kernels;

namespace {

// p of fp32 patterns (see hifloat8_cast_cpu.h): the top 16 bits, bit 0 set when the low 16 are not 0.
V16 patternOfFloatBits(const V32& low, const V32& high) {
  auto top = [](const V32& u) {
    const V32 low16(0xFFFF);
    return shiftRight<16>(u) | (((u & low16) != V32(0)) & V32(1));
  };
  return narrow(top(low), top(high));
}

// HiF8 codes (0..255 per lane) of bf16 patterns.
class Encoder {
 public:
  explicit Encoder(const Tables& t) : increment_(t.roundIncrement), mask_(t.roundMask), assembly_(t.assembly) {}

  V16 operator()(const V16& p) const {
    const V16 magnitude = p & V16(0x7FFF);
    const V16 exponentIndex = at::vec::minimum(at::vec::maximum(shiftRight<7>(magnitude) - V16(103), V16(0)), V16(63));
    const V16 rounded = at::vec::minimum((magnitude + increment_(exponentIndex)) & mask_(exponentIndex), V16(0x4700));
    const V16 entry = assembly_(at::vec::maximum(shiftRight<7>(rounded) - V16(104), V16(0)));
    // The top w fraction bits of `rounded` (the rest are 0), times 2^w, shifted down by 7: q.
    const V16 q = shiftRight<7>((rounded & V16(0x7F)) * shiftRight<8>(entry));
    const V16 code = (entry & V16(0xFF)) | q;
    const V16 sign = shiftRight<8>(p) & V16(0x80);
    V16 out = code | (sign & (code != V16(0)));  // a zero result is 00 whatever the sign
    out = V16::blendv(out, V16(0x6F) | sign, magnitude == V16(0x7F80));
    return V16::blendv(out, V16(0x80), magnitude > V16(0x7F80));
  }

 private:
  Table64 increment_, mask_, assembly_;
};

// 16-bit patterns (fp16 or bf16, by the table) of HiF8 codes; code 80 gives 7FFF.
class Decoder {
 public:
  explicit Decoder(const int16_t* magnitudes) : low_(magnitudes), high_(magnitudes + 64) {}

  V16 operator()(const V16& code) const {
    const V16 index = code & V16(0x3F);
    V16 value = V16::blendv(low_(index), high_(index), (code & V16(0x40)) != V16(0));
    value = value | shiftLeft<8>(code & V16(0x80));
    return V16::blendv(value, V16(0x7FFF), code == V16(0x80));
  }

 private:
  Table64 low_, high_;
};

// Calls step(src, dst) on every kLanes elements; the tail goes through zero-padded buffers.
template <typename In, typename Out, typename Step>
void forEachStep(const In* in, Out* out, int64_t n, const Step& step) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) step(in + i, out + i);
  if (i < n) {
    In src[kLanes] = {};
    Out dst[kLanes];
    std::memcpy(src, in + i, static_cast<size_t>(n - i) * sizeof(In));
    step(src, dst);
    std::memcpy(out + i, dst, static_cast<size_t>(n - i) * sizeof(Out));
  }
}

V16 loadPattern16(Dtype in, const uint16_t* src) {
  if (in == Dtype::kBf16) return V16::loadu(src);
  V32 low, high;
  halfToFloatBits(src, low, high);
  return patternOfFloatBits(low, high);
}

V16 loadPatternFp32(const uint32_t* src) {
  return patternOfFloatBits(V32::loadu(src), V32::loadu(src + kLanes / 2));
}

void storeBf16AsFp32(uint32_t* dst, const V16& bf16) {
  V32 low, high;
  widen(bf16, low, high);
  shiftLeft<16>(low).store(dst);
  shiftLeft<16>(high).store(dst + kLanes / 2);
}

void encode(Dtype in, const void* src, uint8_t* dst, int64_t n, const Tables& t) {
  const Encoder enc(t);
  const auto* s = static_cast<const uint16_t*>(src);
  if (in == Dtype::kBf16) {
    forEachStep(s, dst, n, [&](const uint16_t* a, uint8_t* b) { storeBytes(b, enc(V16::loadu(a))); });
  } else {
    forEachStep(s, dst, n, [&](const uint16_t* a, uint8_t* b) { storeBytes(b, enc(loadPattern16(Dtype::kFp16, a))); });
  }
}

void decode(Dtype out, const uint8_t* src, void* dst, int64_t n, const Tables& t) {
  if (out == Dtype::kFp32) {
    const Decoder dec(t.bf16);
    forEachStep(src, static_cast<uint32_t*>(dst), n,
                [&](const uint8_t* a, uint32_t* b) { storeBf16AsFp32(b, dec(loadBytes(a))); });
    return;
  }
  const Decoder dec(out == Dtype::kFp16 ? t.fp16 : t.bf16);
  forEachStep(src, static_cast<uint16_t*>(dst), n, [&](const uint8_t* a, uint16_t* b) { dec(loadBytes(a)).store(b); });
}

// decode(encode(x)) in registers; fp32 decodes through the bf16 patterns (all HiF8 values are bf16).
void fakeQuant(Dtype type, const void* src, void* dst, int64_t n, const Tables& t) {
  const Encoder enc(t);
  if (type == Dtype::kFp32) {
    const Decoder dec(t.bf16);
    forEachStep(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), n,
                [&](const uint32_t* a, uint32_t* b) { storeBf16AsFp32(b, dec(enc(loadPatternFp32(a)))); });
    return;
  }
  const Decoder dec(type == Dtype::kFp16 ? t.fp16 : t.bf16);
  auto* d = static_cast<uint16_t*>(dst);
  const auto* s = static_cast<const uint16_t*>(src);
  if (type == Dtype::kBf16) {
    forEachStep(s, d, n, [&](const uint16_t* a, uint16_t* b) { dec(enc(V16::loadu(a))).store(b); });
  } else {
    forEachStep(s, d, n, [&](const uint16_t* a, uint16_t* b) { dec(enc(loadPattern16(Dtype::kFp16, a))).store(b); });
  }
}

}  // namespace

const Kernels kernels{encode, decode, fakeQuant};

}  // namespace CPU_CAPABILITY
}  // namespace native
}  // namespace hif8
}  // namespace amct
