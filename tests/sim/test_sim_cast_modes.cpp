// Kernel sim: the Cast (pair, mode)s that the hifloat4_cast kernel
// uses, at their ties, neighbours, saturation edges and signed zeros, against bit patterns
// written out by hand here (independent of the sim's rounding code). test_sim_cast.cpp covers
// every pair and mode against an oracle; this program pins the cases the HiF4 numerics rely on
// (docs/hifloat4.md C8: bf16 steps CAST_RINT, the E6M2 step fp32->fp32 CAST_RINT, floor(4t+0.5)
// as +0.5 then CAST_TRUNC, fp16 narrowing RNE onto the subnormal grid, exact byte conversions).
#include "sim_test.h"

using namespace AscendC;
using amct_sim::detail::Fmt;
using simtest::BitsFloat;
using simtest::Check;
using simtest::FloatBits;
using simtest::Run1;

namespace {

template <class D, class S, class DB, class SB>
void Case(const char* name, RoundMode mode, const std::vector<std::pair<SB, DB>>& cases) {
  const uint32_t n = static_cast<uint32_t>(cases.size());
  const uint32_t padded = (n + 63) / 64 * 64;
  std::vector<DB> got(n);
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, padded * sizeof(S));
    pipe.InitBuffer(db, padded * sizeof(D));
    LocalTensor<SB> s = sb.Get<SB>();
    for (uint32_t i = 0; i < padded; ++i) s.SetValue(i, i < n ? cases[i].first : SB(0));
    LocalTensor<S> src = sb.Get<S>();
    LocalTensor<D> dst = db.Get<D>();
    Cast(dst, src, mode, padded);
    LocalTensor<DB> d = db.Get<DB>();
    for (uint32_t i = 0; i < n; ++i) got[i] = d.GetValue(i);
  });
  bool ok = true;
  std::string why;
  for (uint32_t i = 0; i < n && ok; ++i) {
    if (got[i] != cases[i].second) {
      ok = false;
      why = Fmt("input %#llx: got %#llx, want %#llx", static_cast<unsigned long long>(cases[i].first),
                static_cast<unsigned long long>(got[i]), static_cast<unsigned long long>(cases[i].second));
    }
  }
  Check(name, ok, why);
}

uint32_t F(float f) { return FloatBits(f); }

}  // namespace

int main() {
  using P32 = std::pair<uint32_t, uint32_t>;
  using P32_16 = std::pair<uint32_t, uint16_t>;
  using P16_32 = std::pair<uint16_t, uint32_t>;
  // fp32 -> bf16, CAST_RINT: ties to even, carries, overflow to Inf, subnormals, signed zeros.
  Case<bfloat16_t, float, uint16_t, uint32_t>(
      "hif4_cast_float_to_bf16_rint", RoundMode::CAST_RINT,
      {P32_16{0x3F808000u, 0x3F80}, P32_16{0x3F818000u, 0x3F82}, P32_16{0x3F818001u, 0x3F82},
       P32_16{0x3F817FFFu, 0x3F81}, P32_16{0xBF808000u, 0xBF80}, P32_16{0xBF818000u, 0xBF82},
       P32_16{0x3FFF8000u, 0x4000}, P32_16{0x7F7F7FFFu, 0x7F7F}, P32_16{0x7F7F8000u, 0x7F80},
       P32_16{0x7F7FFFFFu, 0x7F80}, P32_16{0x00008000u, 0x0000}, P32_16{0x00018000u, 0x0002},
       P32_16{0x80008000u, 0x8000}, P32_16{0x00000000u, 0x0000}, P32_16{0x80000000u, 0x8000},
       P32_16{0x3E124925u, 0x3E12}, P32_16{0x404CCCCDu, 0x404D}, P32_16{0x3F2AAAABu, 0x3F2B}});
  // bf16 -> fp32 and fp16 -> fp32, CAST_NONE: exact.
  Case<float, bfloat16_t, uint32_t, uint16_t>(
      "hif4_cast_bf16_to_float_none", RoundMode::CAST_NONE,
      {P16_32{0x3F80, 0x3F800000u}, P16_32{0x8001, 0x80010000u}, P16_32{0x7F7F, 0x7F7F0000u},
       P16_32{0x8000, 0x80000000u}, P16_32{0x4066, 0x40660000u}});
  Case<float, half, uint32_t, uint16_t>(
      "hif4_cast_half_to_float_none", RoundMode::CAST_NONE,
      {P16_32{0x3C00, 0x3F800000u}, P16_32{0x0001, 0x33800000u}, P16_32{0x8001, 0xB3800000u},
       P16_32{0x03FF, 0x387FC000u}, P16_32{0x7BFF, 0x477FE000u}, P16_32{0x8000, 0x80000000u},
       P16_32{0x0400, 0x38800000u}});
  // fp32 -> fp32 CAST_RINT (the E6M2 step: q in {4..8}, ties to even) and the general ties.
  Case<float, float, uint32_t, uint32_t>(
      "hif4_cast_float_to_float_rint", RoundMode::CAST_RINT,
      {P32{F(4.5f), F(4.0f)}, P32{F(5.5f), F(6.0f)}, P32{F(6.5f), F(6.0f)}, P32{F(7.5f), F(8.0f)},
       P32{F(4.5625f), F(5.0f)}, P32{F(0.5f), F(0.0f)}, P32{F(1.5f), F(2.0f)}, P32{F(2.5f), F(2.0f)},
       P32{F(-0.5f), 0x80000000u}, P32{F(-1.5f), F(-2.0f)}, P32{F(-2.5f), F(-2.0f)},
       P32{0x3EFFFFFFu, F(0.0f)}, P32{0x3F000001u, F(1.0f)}, P32{F(8388607.5f), F(8388608.0f)},
       P32{F(1e30f), F(1e30f)}, P32{0x80000000u, 0x80000000u}, P32{0x00000001u, 0x00000000u},
       P32{F(7.99999952f), F(8.0f)}});
  // fp32 -> fp32 CAST_TRUNC (floor(4t + 0.5) for t >= 0): toward zero, -0 kept.
  Case<float, float, uint32_t, uint32_t>(
      "hif4_cast_float_to_float_trunc", RoundMode::CAST_TRUNC,
      {P32{F(0.5f), F(0.0f)}, P32{F(1.5f), F(1.0f)}, P32{F(2.5f), F(2.0f)}, P32{F(6.90625f), F(6.0f)},
       P32{F(7.99999952f), F(7.0f)}, P32{F(8.0f), F(8.0f)}, P32{F(8.5f), F(8.0f)}, P32{F(0.99999994f), F(0.0f)},
       P32{F(-0.5f), 0x80000000u}, P32{F(-1.5f), F(-1.0f)}, P32{F(1e30f), F(1e30f)},
       P32{0x80000000u, 0x80000000u}, P32{F(7.5f), F(7.0f)}, P32{F(4.0625f), F(4.0f)}});
  // fp32 -> fp16 CAST_RINT: the subnormal grid (A6 ex. 6), ties to even, overflow.
  Case<half, float, uint16_t, uint32_t>(
      "hif4_cast_float_to_half_rint", RoundMode::CAST_RINT,
      {P32_16{F(-7.5f * 0x1p-24f), 0x8008}, P32_16{F(7.5f * 0x1p-24f), 0x0008}, P32_16{F(0.5f * 0x1p-24f), 0x0000},
       P32_16{F(1.5f * 0x1p-24f), 0x0002}, P32_16{F(0x1p-25f * 1.0000001f), 0x0001}, P32_16{F(-0.5f * 0x1p-24f), 0x8000},
       P32_16{F(0x1p-14f), 0x0400}, P32_16{F(65504.0f), 0x7BFF}, P32_16{F(65519.0f), 0x7BFF},
       P32_16{F(65520.0f), 0x7C00}, P32_16{F(61440.0f), 0x7B80}, P32_16{F(1.0f + 0x1p-11f), 0x3C00},
       P32_16{F(1.0f + 3 * 0x1p-11f), 0x3C02}, P32_16{0x80000000u, 0x8000}, P32_16{F(1.875f), 0x3F80}});
  // int16 -> fp32 and int32 -> fp32, CAST_NONE (the poison flag, the biased exponents).
  Case<float, int16_t, uint32_t, uint16_t>(
      "hif4_cast_int16_to_float_none", RoundMode::CAST_NONE,
      {P16_32{0xFFFF, F(-1.0f)}, P16_32{0x0000, 0x00000000u}, P16_32{0x7FFF, F(32767.0f)},
       P16_32{0x8000, F(-32768.0f)}, P16_32{0x0001, F(1.0f)}});
  Case<float, int32_t, uint32_t, uint32_t>(
      "hif4_cast_int32_to_float_none", RoundMode::CAST_NONE,
      {P32{79u, F(79.0f)}, P32{142u, F(142.0f)}, P32{0xFFFFFFFFu, F(-1.0f)}, P32{0u, 0u},
       P32{16777217u, F(16777216.0f)}, P32{16777219u, F(16777220.0f)}});
  // fp16 -> uint8 (RINT) and uint8 -> fp16 (NONE): the byte conversions of pack/unpack.
  std::vector<std::pair<uint16_t, uint8_t>> toByte;
  for (uint32_t v = 0; v < 256; ++v) toByte.emplace_back(half(static_cast<float>(v)).amct_bits, static_cast<uint8_t>(v));
  toByte.emplace_back(half(254.5f).amct_bits, uint8_t(254));
  toByte.emplace_back(half(253.5f).amct_bits, uint8_t(254));
  Case<uint8_t, half, uint8_t, uint16_t>("hif4_cast_half_to_uint8_rint", RoundMode::CAST_RINT, toByte);
  std::vector<std::pair<uint8_t, uint16_t>> fromByte;
  for (uint32_t v = 0; v < 256; ++v) fromByte.emplace_back(static_cast<uint8_t>(v), half(static_cast<float>(v)).amct_bits);
  Case<half, uint8_t, uint16_t, uint8_t>("hif4_cast_uint8_to_half_none", RoundMode::CAST_NONE, fromByte);
  (void)BitsFloat;
  return simtest::Finish();
}
