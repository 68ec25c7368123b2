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

// The codes of n fp16 or bf16 inputs computed by the Encoder.
void encodeComputed(Dtype in, const uint16_t* s, uint8_t* dst, int64_t n, const Tables& t) {
  const Encoder enc(t);
  if (in == Dtype::kBf16) {
    forEachStep(s, dst, n, [&](const uint16_t* a, uint8_t* b) { storeBytes(b, enc(V16::loadu(a))); });
  } else {
    forEachStep(s, dst, n, [&](const uint16_t* a, uint8_t* b) { storeBytes(b, enc(loadPattern16(Dtype::kFp16, a))); });
  }
}

// The code of a 16-bit input is a function of its 16 bits: CodeTable holds all 65536 codes of one
// input dtype, computed by this copy's own Encoder (encodeComputed), so a lookup gives the Encoder's
// bits by construction, and the tests of every pattern on every path cover every entry. Where the
// Encoder's per-lane tables are slow (AVX2 builds them from byte shuffles, the portable copy from
// scalar loops), looking codes up is faster: on an AMD EPYC running the AVX2 copy, 1M bf16 randn on
// one thread took 0.3-0.45 ns per element against ~1 ns computed (hifloat8_cast/README.md,
// Backends). AVX-512 computes with one vpermi2w per table and keeps the
// Encoder. The 64 KiB exceed L1 but fit L2; typical tensors touch a few KiB of it (a few binades).
#if defined(CPU_CAPABILITY_AVX512)
constexpr bool kEncodeByLookup = false;
#else
constexpr bool kEncodeByLookup = true;
#endif

struct CodeTable {
  uint8_t code[1 << 16];

  CodeTable(Dtype in, const Tables& t) {
    constexpr int kPiece = 4096;  // patterns per encodeComputed call (8 KiB of stack)
    uint16_t patterns[kPiece];
    for (int start = 0; start < (1 << 16); start += kPiece) {
      for (int j = 0; j < kPiece; ++j) patterns[j] = static_cast<uint16_t>(start + j);
      encodeComputed(in, patterns, code + start, kPiece, t);
    }
  }
};

// Built at first use (thread-safe); `t` is always tables(), so the first call's is everyone's.
const uint8_t* codeTable(Dtype in, const Tables& t) {
  if (in == Dtype::kBf16) {
    static const CodeTable bf16(Dtype::kBf16, t);
    return bf16.code;
  }
  static const CodeTable fp16(Dtype::kFp16, t);
  return fp16.code;
}

// dst[i] = table[s[i]]: eight codes per step, packed into one 64-bit store (each pattern loaded
// by itself, no shifts to extract it). The fastest of the loops tried stand-alone at -O3 on the
// machine above: byte stores, 64-bit loads of four patterns, 8-lane vpgatherdd (the slowest).
void lookUpCodes(const uint8_t* table, const uint16_t* s, uint8_t* dst, int64_t n) {
  int64_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; i + 8 <= n; i += 8) {
    uint64_t codes = 0;
    for (int k = 0; k < 8; ++k) codes |= uint64_t{table[s[i + k]]} << (8 * k);
    std::memcpy(dst + i, &codes, sizeof codes);
  }
#endif
  for (; i < n; ++i) dst[i] = table[s[i]];
}

void encode(Dtype in, const void* src, uint8_t* dst, int64_t n, const Tables& t) {
  const auto* s = static_cast<const uint16_t*>(src);
  if (kEncodeByLookup) {
    lookUpCodes(codeTable(in, t), s, dst, n);
  } else {
    encodeComputed(in, s, dst, n, t);
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
