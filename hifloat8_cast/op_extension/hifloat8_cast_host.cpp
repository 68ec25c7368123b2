#include "hifloat8_cast_host.h"

#include "hifloat8_cast_cpu.h"

#include <ATen/MemoryOverlap.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <mutex>

namespace amct {
namespace hif8 {

using amct_hif8::CastMode;
using amct_hif8::Hif8CastTiling;

namespace {

constexpr uint32_t kEncodeLutBytes = 32768;      // fp16: magnitude code per (bits & 0x7FFF)
constexpr uint32_t kEncodeBf16LutBytes = 8192;       // bf16: whole code per (bits >> 3)
constexpr uint32_t kEncodeBf16FullLutBytes = 65536;  // bf16: whole code per pattern, when it fits
constexpr uint64_t kFullLutMinTile = 8192;           // ... leaving tiles of at least this many elements
constexpr uint64_t kFullLutMinPerCore = 65536;       // ... for cores converting at least this many
constexpr uint64_t kMaxTile = 65536;

// ---- HiF8 encode and decode on the host (docs/hifloat8.md A3/A4), used only to build the LUTs ----

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// Mantissa width w of a binade |e| <= 15 (A4: 3 for |e| <= 3, 2 for |e| <= 7, 1 otherwise).
int mantissaWidth(int absExponent) { return absExponent <= 3 ? 3 : (absExponent <= 7 ? 2 : 1); }

// Code of sign-less value 2^e * (1 + q/2^w) for -15 <= e <= 15 (A4 "Assembly").
uint8_t assemble(int e, uint32_t q) {
  if (e == 0) return static_cast<uint8_t>(0x08 | q);
  int absE = std::abs(e);
  int w = mantissaWidth(absE);
  int d = absE == 1 ? 1 : (absE <= 3 ? 2 : (absE <= 7 ? 3 : 4));
  static constexpr uint32_t kDotPrefix[4] = {0b0010, 0b0100, 0b1000, 0b1100};
  uint32_t neg = e < 0 ? 1u : 0u;
  uint32_t code = (kDotPrefix[d - 1] << 3) | (neg << (d + w - 1)) |
                  (static_cast<uint32_t>(absE - (1 << (d - 1))) << w) | q;
  return static_cast<uint8_t>(code);
}

// A4 magnitude code MAG of an fp32 bit pattern (the sign is ignored).
uint8_t magnitudeCode(uint32_t bits) {
  uint32_t field = (bits >> 23) & 0xFFu;
  uint32_t fraction = bits & 0x7FFFFFu;
  if (field == 0) return 0x00;
  if (field == 255) return fraction != 0 ? 0x80 : 0x6F;
  int e = static_cast<int>(field) - 127;
  if (e >= 15) return 0x6E;
  if (e <= -24) return 0x00;
  if (e == -23) return 0x01;
  if (e <= -16) {
    uint32_t k = static_cast<uint32_t>(e + 23) + ((fraction >> 22) & 1u);
    return k == 8 ? 0x7E : static_cast<uint8_t>(k);
  }
  int w = mantissaWidth(std::abs(e));
  uint32_t t = fraction >> (22 - w);  // top w+1 fraction bits; the low one is the guard bit
  if (t == (1u << (w + 1)) - 1) {     // rounds up into the next binade
    return e + 1 == 15 ? 0x6E : assemble(e + 1, 0);
  }
  uint32_t q = (t & 1u) ? (t + 1) >> 1 : t >> 1;
  return assemble(e, q);
}

// Exact value of a code (A1/A3); NaN for 0x80.
double decodeValue(uint8_t code) {
  if (code == 0x00) return 0.0;
  if (code == 0x80) return std::nan("");
  double sign = (code & 0x80) ? -1.0 : 1.0;
  uint32_t b = code & 0x7Fu;
  if (b == 0x6F) return sign * INFINITY;
  int d;
  if ((b >> 5) == 0b11) d = 4;
  else if ((b >> 5) == 0b10) d = 3;
  else if ((b >> 5) == 0b01) d = 2;
  else if ((b >> 4) == 0b001) d = 1;
  else if ((b >> 3) == 0b0001) d = 0;
  else return sign * std::ldexp(1.0, static_cast<int>(b) - 23);  // denormal 01..07
  int prefixBits = d >= 2 ? 2 : (d == 1 ? 3 : 4);
  int w = 7 - prefixBits - d;
  uint32_t mantissa = b & ((1u << w) - 1);
  int e = 0;
  if (d > 0) {
    uint32_t field = (b >> w) & ((1u << d) - 1);
    bool negative = (field >> (d - 1)) & 1u;
    int magnitude = static_cast<int>(field & ((1u << (d - 1)) - 1)) + (1 << (d - 1));
    e = negative ? -magnitude : magnitude;
  }
  return sign * std::ldexp(1.0 + mantissa / static_cast<double>(1u << w), e);
}

// The fp32 pattern an fp16 / bf16 input is encoded from (A4 step 1).
uint32_t widenHalf(uint16_t bits) { return floatBits(static_cast<float>(c10::Half(bits, c10::Half::from_bits()))); }
uint32_t widenBFloat16(uint16_t bits) {
  return ((bits >> 7) & 0xFFu) == 0 ? 0u : static_cast<uint32_t>(bits) << 16;  // subnormals -> +0
}

template <typename T>
T* lutData(at::Tensor& lut, uint32_t byteOffset) {
  return reinterpret_cast<T*>(lut.data_ptr<uint8_t>() + byteOffset);
}

// fp16: the magnitude code of every positive pattern; the kernel applies the sign rule.
void fillEncodeLutFp16(at::Tensor& lut) {
  uint8_t* mag = lutData<uint8_t>(lut, 0);
  for (uint32_t i = 0; i < kEncodeLutBytes; ++i) mag[i] = magnitudeCode(widenHalf(static_cast<uint16_t>(i)));
}

uint8_t bf16Code(uint16_t bits) {
  uint8_t mag = magnitudeCode(widenBFloat16(bits));
  return mag == 0 ? 0 : static_cast<uint8_t>(mag | ((bits >> 8) & 0x80u));
}

// bf16, full table: the whole code (sign rule applied) of every pattern.
// bf16, top-13 table: the code of the pattern (i << 3), which every pattern with the same top
// 13 bits shares; the kernel encodes exponent-255 lanes itself (NaN vs Inf).
void fillEncodeLutBf16(at::Tensor& lut, uint32_t bytes) {
  uint8_t* code = lutData<uint8_t>(lut, 0);
  uint32_t shift = bytes == kEncodeBf16FullLutBytes ? 0 : 3;
  for (uint32_t i = 0; i < bytes; ++i) code[i] = bf16Code(static_cast<uint16_t>(i << shift));
}

void fillDecodeLut(at::Tensor& lut, uint32_t byteOffset, at::ScalarType type) {
  for (uint32_t c = 0; c < 256; ++c) {
    float value = static_cast<float>(decodeValue(static_cast<uint8_t>(c)));
    bool nan = c == 0x80;  // upstream's NaN payload (docs/hifloat8.md, Layouts and contract)
    if (type == at::kFloat) {
      lutData<uint32_t>(lut, byteOffset)[c] = nan ? 0x7FFF0000u : floatBits(value);
    } else if (type == at::kHalf) {
      lutData<uint16_t>(lut, byteOffset)[c] = nan ? uint16_t(0x7FFF) : c10::Half(value).x;
    } else {
      lutData<uint16_t>(lut, byteOffset)[c] = nan ? uint16_t(0x7FFF) : c10::BFloat16(value).x;
    }
  }
}

struct ModeLayout {
  uint32_t inBytes;
  uint32_t outBytes;
  uint32_t encLutBytes;
  uint32_t decLutBytes;
  uint64_t minPerCore;  // fewer elements per core would not pay for the LUT load
};

bool isBf16Encode(CastMode mode) { return mode == amct_hif8::kEncodeBf16 || mode == amct_hif8::kFakeQuantBf16; }

// bf16 modes use the full 64 KB code table when `fullBf16Table`, else the 8 KB one.
ModeLayout layoutOf(CastMode mode, bool fullBf16Table = false) {
  uint32_t bf16Table = fullBf16Table ? kEncodeBf16FullLutBytes : kEncodeBf16LutBytes;
  switch (mode) {
    case amct_hif8::kEncodeFp16: return {2, 1, kEncodeLutBytes, 0, 4096};
    case amct_hif8::kEncodeBf16: return {2, 1, bf16Table, 0, 4096};
    case amct_hif8::kDecodeFp16:
    case amct_hif8::kDecodeBf16: return {1, 2, 0, 512, 2048};
    case amct_hif8::kDecodeFp32: return {1, 4, 0, 1024, 2048};
    case amct_hif8::kFakeQuantFp16: return {2, 2, kEncodeLutBytes, 512, 4096};
    case amct_hif8::kFakeQuantBf16: return {2, 2, bf16Table, 512, 4096};
    default: return {4, 4, 0, 0, 4096};
  }
}

at::Tensor buildLut(CastMode mode, bool fullBf16Table) {
  ModeLayout layout = layoutOf(mode, fullBf16Table);
  at::Tensor lut = at::empty({static_cast<int64_t>(layout.encLutBytes + layout.decLutBytes)},
                             at::TensorOptions().dtype(at::kByte));
  switch (mode) {
    case amct_hif8::kEncodeFp16: fillEncodeLutFp16(lut); break;
    case amct_hif8::kEncodeBf16: fillEncodeLutBf16(lut, layout.encLutBytes); break;
    case amct_hif8::kDecodeFp16: fillDecodeLut(lut, 0, at::kHalf); break;
    case amct_hif8::kDecodeBf16: fillDecodeLut(lut, 0, at::kBFloat16); break;
    case amct_hif8::kDecodeFp32: fillDecodeLut(lut, 0, at::kFloat); break;
    case amct_hif8::kFakeQuantFp16:
      fillEncodeLutFp16(lut);
      fillDecodeLut(lut, kEncodeLutBytes, at::kHalf);
      break;
    case amct_hif8::kFakeQuantBf16:
      fillEncodeLutBf16(lut, layout.encLutBytes);
      fillDecodeLut(lut, layout.encLutBytes, at::kBFloat16);
      break;
    default: return at::Tensor();
  }
  return lut;
}

// UB bytes the kernel may use: the platform's figure capped by the arch budget. dav-2201's
// Select modes 1/2 (used by mode 7) take [184 KB, 192 KB) as scratch.
uint64_t ubBudget(CastMode mode, const PlatformFacts& facts) {
#if __NPU_ARCH__ == 3510
  uint64_t arch = 253952;
#else
  uint64_t arch = mode == amct_hif8::kFakeQuantFp32 ? 188416 : 196608;
#endif
  return std::min<uint64_t>(facts.ubBytes, arch);
}

// Largest tile for the budget (and its analogue for mode 7).
uint64_t maxTileOf(CastMode mode, uint64_t ub, const ModeLayout& layout) {
  uint64_t lutBytes = layout.encLutBytes + layout.decLutBytes;
  TORCH_CHECK(ub > lutBytes, "hifloat8_cast: UB budget ", ub, " bytes cannot hold the ", lutBytes, "-byte LUT");
  uint64_t tile;
  if (mode == amct_hif8::kFakeQuantFp32) {
    // input, output and four fp32 work buffers (24 B/element) plus two bit masks (2 bits),
    // each mask rounded up to 32 B: tiles are multiples of the 64-lane Compare granule.
    tile = roundDown((ub - 64) * 4 / 97, 64);
    TORCH_CHECK(tile >= 64, "hifloat8_cast: UB budget ", ub, " bytes is too small for fp32 tiles");
  } else {
    tile = (ub - lutBytes) / (layout.inBytes + layout.outBytes);
    TORCH_CHECK(tile >= 32, "hifloat8_cast: UB budget ", ub, " bytes leaves tiles under 32 elements");
  }
  tile = std::min(tile, kMaxTile);
  return tile >= 32768 ? roundDown(tile, 32768) : roundDown(tile, mode == amct_hif8::kFakeQuantFp32 ? 64 : 32);
}

at::Tensor emptyLike(const at::Tensor& input, at::ScalarType dtype) {
  return at::empty_symint(input.sym_sizes(), input.options().dtype(dtype).memory_format(at::MemoryFormat::Contiguous));
}

at::Tensor run(CastMode mode, const at::Tensor& input, at::ScalarType outType, const PlatformFacts& facts,
               const Launcher& launch) {
  at::Tensor output = at::empty(input.sizes(), input.options().dtype(outType));
  if (input.numel() == 0) return output;  // no launch for an empty input
  at::Tensor contiguous = input.contiguous();
  Hif8CastTiling tiling = computeTiling(mode, static_cast<uint64_t>(input.numel()), facts);
  launch(tiling.blockNum, contiguous, output, mode, lutOf(mode, tiling.encLutBytes), tilingTensor(tiling));
  return output;
}

void checkEncodeInput(const at::Tensor& input) {
  checkDtype("encode_to_hifloat8", "input", input.scalar_type(), {at::kHalf, at::kBFloat16});
}

at::ScalarType checkDecodeArgs(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  checkDtype("decode_from_hifloat8", "input", input.scalar_type(), {at::kByte});
  at::ScalarType out = dtype.value_or(at::kBFloat16);
  TORCH_CHECK(out == at::kHalf || out == at::kBFloat16 || out == at::kFloat,
              "decode_from_hifloat8: dtype must be float16, bfloat16 or float32, got ", dtypeName(out));
  return out;
}

void checkFakeQuantInput(const at::Tensor& input) {
  checkDtype("hifloat8_fake_quant", "input", input.scalar_type(), {at::kHalf, at::kBFloat16, at::kFloat});
}

CastMode decodeMode(at::ScalarType out) {
  return out == at::kHalf ? amct_hif8::kDecodeFp16
                          : (out == at::kBFloat16 ? amct_hif8::kDecodeBf16 : amct_hif8::kDecodeFp32);
}

CastMode fakeQuantMode(at::ScalarType type) {
  return type == at::kHalf ? amct_hif8::kFakeQuantFp16
                           : (type == at::kBFloat16 ? amct_hif8::kFakeQuantBf16 : amct_hif8::kFakeQuantFp32);
}

}  // namespace

const at::Tensor& lutOf(CastMode mode, uint32_t encLutBytes) {
  constexpr size_t kTables = 2 * amct_hif8::kCastModeCount;  // bf16 modes have two table sizes
  static std::array<at::Tensor, kTables> luts;
  static std::array<std::once_flag, kTables> built;
  bool full = isBf16Encode(mode) && encLutBytes == kEncodeBf16FullLutBytes;
  size_t slot = 2 * static_cast<size_t>(mode) + (full ? 1 : 0);
  std::call_once(built[slot], [mode, full, slot] { luts[slot] = buildLut(mode, full); });
  return luts[slot];
}

namespace native {
namespace {

// The native kernels' tables (hifloat8_cast_cpu.h), from the definitions the LUTs use.
Tables buildTables() {
  Tables t{};
  for (int i = 0; i < 64; ++i) {
    int e = i - 24;  // input exponent of index i = F - 103
    int increment = 0, mask = 0;  // e <= -24: zero
    if (e == -23) {
      increment = 0x80, mask = -0x80;  // the whole binade rounds up to 2^-22 (tie at 2^-23 included)
    } else if (e >= -22 && e <= -16) {
      increment = 0x40, mask = -0x80;  // denormal band: one significant bit, guard bit 22
    } else if (e >= -15 && e <= 15) {
      int w = mantissaWidth(std::abs(e));
      increment = 1 << (6 - w), mask = -(1 << (7 - w));
    } else if (e > 15) {
      mask = -1;  // saturated by the min with 2^15 (NaN / Inf are selected from the input)
    }
    t.roundIncrement[i] = static_cast<int16_t>(increment);
    t.roundMask[i] = static_cast<int16_t>(mask);
    int eRounded = i - 23;  // rounded exponent of index i = F' - 104
    int entry = 0;
    if (eRounded >= -22 && eRounded <= -16) {
      entry = eRounded + 23;  // denormal codes 01..07 carry no mantissa
    } else if (eRounded >= -15 && eRounded <= 15) {
      entry = assemble(eRounded, 0) | ((1 << mantissaWidth(std::abs(eRounded))) << 8);
    }
    t.assembly[i] = static_cast<int16_t>(entry);
  }
  const uint16_t* fp16 = reinterpret_cast<const uint16_t*>(lutOf(amct_hif8::kDecodeFp16, 0).data_ptr<uint8_t>());
  const uint16_t* bf16 = reinterpret_cast<const uint16_t*>(lutOf(amct_hif8::kDecodeBf16, 0).data_ptr<uint8_t>());
  for (int c = 0; c < 128; ++c) {
    t.fp16[c] = static_cast<int16_t>(fp16[c]);
    t.bf16[c] = static_cast<int16_t>(bf16[c]);
  }
  return t;
}

}  // namespace

const Tables& tables() {
  static const Tables built = buildTables();
  return built;
}

}  // namespace native

Hif8CastTiling computeTiling(CastMode mode, uint64_t n, const PlatformFacts& facts) {
  uint64_t ub = ubBudget(mode, facts);
  ModeLayout layout = layoutOf(mode, false);
  uint64_t cores = std::max<uint64_t>(1, std::min<uint64_t>(facts.aivCores, 65535));
  uint64_t blockNum = std::max<uint64_t>(1, std::min<uint64_t>(cores, n / layout.minPerCore));
  uint64_t numPerCore = n / blockNum;
  // bf16: the full table saves work per element; take it when the UB still leaves big tiles
  // and each core has enough elements to pay for loading 64 KB instead of 8 KB.
  if (isBf16Encode(mode) && numPerCore >= kFullLutMinPerCore) {
    ModeLayout full = layoutOf(mode, true);
    if (ub > full.encLutBytes + full.decLutBytes && maxTileOf(mode, ub, full) >= kFullLutMinTile) layout = full;
  }
  uint64_t maxTile = maxTileOf(mode, ub, layout);
  uint64_t granule = mode == amct_hif8::kFakeQuantFp32 ? 64 : 32;
  Hif8CastTiling t{};
  t.blockNum = static_cast<uint32_t>(blockNum);
  t.castMode = mode;
  t.totalLength = n;
  t.numPerCore = numPerCore;
  t.tailNumLastCore = numPerCore + n % blockNum;
  t.tileLength = static_cast<uint32_t>(std::min(maxTile, roundUp(numPerCore, granule)));
  t.ubBudget = static_cast<uint32_t>(ub);
  t.encLutBytes = layout.encLutBytes;
  t.decLutBytes = layout.decLutBytes;
  return t;
}

at::Tensor encode(const at::Tensor& input, const PlatformFacts& facts, const Launcher& launch) {
  checkEncodeInput(input);
  CastMode mode = input.scalar_type() == at::kHalf ? amct_hif8::kEncodeFp16 : amct_hif8::kEncodeBf16;
  return run(mode, input, at::kByte, facts, launch);
}

at::Tensor decode(const at::Tensor& input, std::optional<at::ScalarType> dtype, const PlatformFacts& facts,
                  const Launcher& launch) {
  at::ScalarType out = checkDecodeArgs(input, dtype);
  return run(decodeMode(out), input, out, facts, launch);
}

at::Tensor fakeQuant(const at::Tensor& input, const PlatformFacts& facts, const Launcher& launch) {
  checkFakeQuantInput(input);
  return run(fakeQuantMode(input.scalar_type()), input, input.scalar_type(), facts, launch);
}

at::ScalarType encodeOutputType(const at::Tensor& input) {
  checkEncodeInput(input);
  return at::kByte;
}

at::ScalarType decodeOutputType(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return checkDecodeArgs(input, dtype);
}

at::ScalarType fakeQuantOutputType(const at::Tensor& input) {
  checkFakeQuantInput(input);
  return input.scalar_type();
}

at::Tensor encodeMeta(const at::Tensor& input) {
  checkEncodeInput(input);
  return emptyLike(input, at::kByte);
}

at::Tensor decodeMeta(const at::Tensor& input, std::optional<at::ScalarType> dtype) {
  return emptyLike(input, checkDecodeArgs(input, dtype));
}

at::Tensor fakeQuantMeta(const at::Tensor& input) {
  checkFakeQuantInput(input);
  return emptyLike(input, input.scalar_type());
}

}  // namespace hif8
}  // namespace amct
