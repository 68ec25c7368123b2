// Kernel sim: Cast is bit-exact for every documented (pair, mode) implemented on
// this arch, against an independent oracle: exact values in long double, the two neighbouring
// codes of the destination found by binary search over decoded codes, and the mode's rule.
// Unlisted modes raise SimError. `test_sim_cast dump DIR` also writes RINT conversions for the
// Python test to compare against torch/numpy.
#include <cfloat>
#include <cmath>
#include <fstream>
#include <random>

#include "sim_test.h"

using namespace AscendC;
using simtest::Check;

namespace {

using amct_sim::detail::BitCast;

// ---------------------------------------------------------------- the oracle
struct Fmt {
  int frac;
  int exp;
};
template <class T>
Fmt FmtOf();
template <>
Fmt FmtOf<float>() { return {23, 8}; }
template <>
Fmt FmtOf<half>() { return {10, 5}; }
template <>
Fmt FmtOf<bfloat16_t>() { return {7, 8}; }

// Magnitude of a non-negative finite code, exactly.
long double DecodeMag(uint64_t code, Fmt f) {
  const uint64_t e = code >> f.frac;
  const uint64_t m = code & ((uint64_t{1} << f.frac) - 1);
  const int bias = (1 << (f.exp - 1)) - 1;
  if (e == 0) return std::ldexp(static_cast<long double>(m), 1 - bias - f.frac);
  return std::ldexp(static_cast<long double>(m + (uint64_t{1} << f.frac)), static_cast<int>(e) - bias - f.frac);
}

enum class M { N, R, F, C, A, T, O };

// Destination code of a float format for the exact value x (not NaN).
uint64_t OracleFloat(long double x, bool neg, Fmt f, M mode) {
  const uint64_t sign = uint64_t{neg} << (f.frac + f.exp);
  const uint64_t infCode = ((uint64_t{1} << f.exp) - 1) << f.frac;
  const uint64_t maxCode = infCode - 1;
  const long double a = std::fabs(x);
  if (std::isinf(a)) return sign | infCode;
  // virtual value of the code after maxCode: max + ulp(max)
  const long double top = DecodeMag(maxCode, f) + (DecodeMag(maxCode, f) - DecodeMag(maxCode - 1, f));
  uint64_t lo = 0, hi = 0;
  if (a >= top) {
    lo = maxCode;
    hi = infCode;
    const bool toInf = mode == M::R || mode == M::N || mode == M::A || (mode == M::F && neg) || (mode == M::C && !neg);
    return sign | (toInf ? infCode : maxCode);
  }
  // largest code with value <= a
  uint64_t l = 0, h = maxCode;
  while (l < h) {
    const uint64_t mid = l + (h - l + 1) / 2;
    if (DecodeMag(mid, f) <= a) {
      l = mid;
    } else {
      h = mid - 1;
    }
  }
  lo = l;
  hi = lo + 1;
  const long double vlo = DecodeMag(lo, f);
  if (vlo == a) return sign | lo;
  const long double vhi = (hi == infCode) ? top : DecodeMag(hi, f);
  uint64_t pick = lo;
  switch (mode) {
    case M::N:
    case M::R:
      pick = (a - vlo < vhi - a) ? lo : (a - vlo > vhi - a) ? hi : ((lo & 1) ? hi : lo);
      break;
    case M::A: pick = (a - vlo < vhi - a) ? lo : hi; break;
    case M::T: pick = lo; break;
    case M::F: pick = neg ? hi : lo; break;
    case M::C: pick = neg ? lo : hi; break;
    case M::O: pick = (lo & 1) ? lo : hi; break;
  }
  return sign | pick;
}

long double RoundInt(long double x, M mode) {
  switch (mode) {
    case M::F: return std::floor(x);
    case M::C: return std::ceil(x);
    case M::A: return std::round(x);
    case M::T: return std::trunc(x);
    default: return std::nearbyint(x);
  }
}

template <class T>
long double ExactOf(T v, bool* neg, bool* nan) {
  *nan = false;
  if constexpr (std::is_same<T, float>::value) {
    *neg = std::signbit(v);
    *nan = std::isnan(v);
    return static_cast<long double>(v);
  } else if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
    const Fmt f = FmtOf<T>();
    const uint16_t bits = v.amct_bits;
    *neg = (bits >> 15) != 0;
    const uint64_t mag = bits & 0x7FFFu;
    const uint64_t inf = ((uint64_t{1} << f.exp) - 1) << f.frac;
    if (mag > inf) {
      *nan = true;
      return 0;
    }
    if (mag == inf) return *neg ? -INFINITY : INFINITY;
    const long double a = DecodeMag(mag, f);
    return *neg ? -a : a;
  } else if constexpr (std::is_signed<T>::value) {
    *neg = v < 0;
    return static_cast<long double>(v);
  } else {
    *neg = false;
    return static_cast<long double>(v);
  }
}

template <class D, class S>
bool OracleEqual(S in, D got, M mode, std::string* why) {
  bool neg = false, nan = false;
  const long double x = ExactOf(in, &neg, &nan);
  if constexpr (std::is_same<D, float>::value && std::is_same<S, float>::value) {
    if (nan) return std::isnan(got);
    const float want = std::isinf(x) ? in : static_cast<float>(RoundInt(x, mode));
    if (BitCast<uint32_t>(want) == BitCast<uint32_t>(got)) return true;
    *why = "want " + std::to_string(want);
    return false;
  } else if constexpr (std::is_same<D, float>::value || std::is_same<D, half>::value ||
                       std::is_same<D, bfloat16_t>::value) {
    using Bits = std::conditional_t<sizeof(D) == 4, uint32_t, uint16_t>;
    const Bits g = BitCast<Bits>(got);
    const Fmt f = FmtOf<D>();
    const uint64_t inf = ((uint64_t{1} << f.exp) - 1) << f.frac;
    const uint64_t gm = g & ((uint64_t{1} << (f.frac + f.exp)) - 1);
    if (nan) {
      if (gm > inf) return true;
      *why = "want NaN";
      return false;
    }
    const uint64_t want = OracleFloat(x, neg, f, mode);
    if (want == g) return true;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "want 0x%llx got 0x%llx", static_cast<unsigned long long>(want),
                  static_cast<unsigned long long>(g));
    *why = buf;
    return false;
  } else {
    long double r;
    if (nan) {
      r = 0;
    } else if (std::isinf(x)) {
      r = x;
    } else {
      r = RoundInt(x, mode);
    }
    const long double lo = static_cast<long double>(std::numeric_limits<D>::min());
    const long double hi = static_cast<long double>(std::numeric_limits<D>::max());
    const D want = r <= lo ? std::numeric_limits<D>::min() : r >= hi ? std::numeric_limits<D>::max() : static_cast<D>(r);
    if (want == got) return true;
    *why = "want " + std::to_string(static_cast<long long>(want)) + " got " + std::to_string(static_cast<long long>(got));
    return false;
  }
}

// ---------------------------------------------------------------- running Cast in the sim
const RoundMode kModes[] = {RoundMode::CAST_NONE, RoundMode::CAST_RINT,  RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL,
                            RoundMode::CAST_ROUND, RoundMode::CAST_TRUNC, RoundMode::CAST_ODD};
const M kOracleModes[] = {M::N, M::R, M::F, M::C, M::A, M::T, M::O};
const char* const kModeNames[] = {"N", "R", "F", "C", "A", "T", "O"};

// Casts src in chunks inside one launch. Returns false (and *err) on SimError.
template <class D, class S>
bool RunCast(const std::vector<S>& src, RoundMode mode, std::vector<D>* out, std::string* err) {
  out->assign(src.size(), D{});
  try {
    simtest::LaunchF("cast_kernel", 1, [&] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> bs, bd;
      constexpr uint32_t kChunk = 4096;
      pipe.InitBuffer(bs, kChunk * sizeof(S));
      pipe.InitBuffer(bd, kChunk * sizeof(D));
      LocalTensor<S> ts = bs.Get<S>();
      LocalTensor<D> td = bd.Get<D>();
      for (size_t off = 0; off < src.size(); off += kChunk) {
        const uint32_t n = static_cast<uint32_t>(std::min<size_t>(kChunk, src.size() - off));
        for (uint32_t i = 0; i < n; ++i) ts.SetValue(i, src[off + i]);
        Cast(td, ts, mode, n);
        for (uint32_t i = 0; i < n; ++i) (*out)[off + i] = td.GetValue(i);
      }
    });
  } catch (const amct_sim::SimError& e) {
    *err = e.what();
    return false;
  }
  return true;
}

template <class D, class S>
void CheckPair(const char* name, const std::vector<S>& inputs, const char* listed) {
  for (int k = 0; k < 7; ++k) {
    const bool isListed = std::strchr(listed, kModeNames[k][0]) != nullptr;
    const std::string test = std::string("cast_") + name + "_" + kModeNames[k];
    std::vector<D> got;
    std::string err;
    const bool ran = RunCast<D, S>(inputs, kModes[k], &got, &err);
    if (!isListed) {
      Check(test + "_unlisted_raises", !ran && err.find("is not listed for") != std::string::npos,
            ran ? "no error" : err);
      continue;
    }
    if (!ran) {
      simtest::Failed(test, err);
      continue;
    }
    size_t bad = 0;
    std::string first;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string why;
      if (!OracleEqual<D, S>(inputs[i], got[i], kOracleModes[k], &why)) {
        if (bad++ == 0) {
          bool neg, nan;
          char buf[96];
          std::snprintf(buf, sizeof(buf), "input #%zu (%.9Lg): ", i, ExactOf(inputs[i], &neg, &nan));
          first = buf + why;
        }
      }
    }
    Check(test, bad == 0, std::to_string(bad) + " of " + std::to_string(inputs.size()) + " differ; first " + first);
    // The reference path (CastRef) must agree with the fast paths bit for bit.
    if (k != 0) {
      size_t refBad = 0;
      for (size_t i = 0; i < inputs.size(); ++i) {
        const D r = amct_sim::detail::CastRef<D, S>(inputs[i], amct_sim::detail::RndOf(kModes[k]));
        std::string why;
        if (!OracleEqual<D, S>(inputs[i], r, kOracleModes[k], &why)) ++refBad;
      }
      Check(test + "_reference_path", refBad == 0, std::to_string(refBad) + " differ");
    }
  }
}

// ---------------------------------------------------------------- inputs
void AddWithNeighbours(std::vector<float>& v, float x) {
  v.push_back(x);
  v.push_back(std::nextafter(x, INFINITY));
  v.push_back(std::nextafter(x, -INFINITY));
  v.push_back(-x);
  v.push_back(-std::nextafter(x, INFINITY));
  v.push_back(-std::nextafter(x, -INFINITY));
}

std::vector<float> FloatInputs(Fmt target) {
  std::vector<float> v;
  for (float t : {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 1.0f, 2.0f, 0.0f, 0.25f, 0.75f, 1e-3f, 1e-8f, 1e-30f, 1e-40f}) {
    AddWithNeighbours(v, t);
  }
  for (int i = 0; i < 300; ++i) AddWithNeighbours(v, static_cast<float>(i) + 0.5f);
  for (int e = -30; e < 40; ++e) AddWithNeighbours(v, std::ldexp(1.0f, e) * 1.5f);
  AddWithNeighbours(v, 2147483648.0f);  // int32 saturation
  AddWithNeighbours(v, 2147483520.0f);
  AddWithNeighbours(v, 32767.5f);  // int16 saturation
  AddWithNeighbours(v, 32768.0f);
  AddWithNeighbours(v, 9.2233720368547758e18f);  // int64 saturation
  AddWithNeighbours(v, FLT_MAX);
  AddWithNeighbours(v, FLT_MIN);
  AddWithNeighbours(v, 8388608.0f);  // 2^23: float -> float integral boundary
  AddWithNeighbours(v, 8388607.5f);
  for (float s : {INFINITY, -INFINITY, NAN, -NAN}) v.push_back(s);
  v.push_back(-0.0f);
  // Every value of the target format (when narrower than float) and every midpoint, with neighbours.
  if (target.frac < 23) {
    const uint64_t inf = ((uint64_t{1} << target.exp) - 1) << target.frac;
    const int step = target.exp == 8 ? 7 : 1;  // bf16: a sample of the 32640 codes
    for (uint64_t c = 0; c < inf; c += step) {
      const long double a = DecodeMag(c, target);
      const long double b = (c + 1 == inf) ? a + (a - DecodeMag(c - 1, target)) : DecodeMag(c + 1, target);
      AddWithNeighbours(v, static_cast<float>(a));
      if ((a + b) / 2 <= FLT_MAX) AddWithNeighbours(v, static_cast<float>((a + b) / 2));
    }
  }
  std::mt19937 rng(2201);
  for (int i = 0; i < 20000; ++i) v.push_back(BitCast<float>(static_cast<uint32_t>(rng())));
  for (int i = 0; i < 20000; ++i) v.push_back(std::ldexp(static_cast<float>(rng() % 100000) / 1000.0f - 50.0f, 0));
  return v;
}

template <class T>
std::vector<T> All16() {
  std::vector<T> v(65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t b = static_cast<uint16_t>(i);
    std::memcpy(&v[i], &b, 2);
  }
  return v;
}

template <class T>
std::vector<T> AllSmallInts() {
  std::vector<T> v;
  for (long long i = std::numeric_limits<T>::min(); i <= std::numeric_limits<T>::max(); ++i) {
    v.push_back(static_cast<T>(i));
  }
  return v;
}

std::vector<int32_t> Int32Inputs() {
  std::vector<int32_t> v = {0, 1, -1, INT32_MAX, INT32_MIN, INT32_MIN + 1, INT32_MAX - 1, 32767, 32768, -32768, -32769};
  for (int e = 23; e <= 30; ++e) {
    for (int d = -5; d <= 5; ++d) {
      v.push_back((1 << e) + d);
      v.push_back(-((1 << e) + d));
      v.push_back((3 << (e - 1)) + d);
    }
  }
  std::mt19937 rng(3510);
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<int32_t>(rng()));
  return v;
}

std::vector<int64_t> Int64Inputs() {
  std::vector<int64_t> v = {0, 1, -1, INT64_MAX, INT64_MIN, INT64_MIN + 1, INT32_MAX, INT32_MIN,
                            int64_t{INT32_MAX} + 1, int64_t{INT32_MIN} - 1};
  for (int e = 23; e <= 62; ++e) {
    for (int d = -3; d <= 3; ++d) {
      v.push_back((int64_t{1} << e) + d);
      v.push_back(-((int64_t{1} << e) + d));
      v.push_back((int64_t{3} << (e - 1)) + d);
    }
  }
  std::mt19937_64 rng(64);
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<int64_t>(rng()));
  return v;
}

// ---------------------------------------------------------------- the half/bf16 types
void TestScalarTypes() {
  // half(float) and bfloat16_t(float): RNE, equal to the exact reference on a stride of all floats.
  size_t badH = 0, badB = 0, n = 0;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4093) {
    const float f = BitCast<float>(static_cast<uint32_t>(u));
    std::string why;
    ++n;
    if (!OracleEqual<half, float>(f, half(f), M::R, &why)) ++badH;
    if (!OracleEqual<bfloat16_t, float>(f, bfloat16_t(f), M::R, &why)) ++badB;
  }
  Check("half_from_float_rne_stride_of_all_floats", badH == 0, std::to_string(badH) + " of " + std::to_string(n));
  Check("bf16_from_float_rne_stride_of_all_floats", badB == 0, std::to_string(badB) + " of " + std::to_string(n));
  size_t badBack = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    half h;
    h.amct_bits = static_cast<uint16_t>(i);
    const float f = static_cast<float>(h);
    bool neg, nan;
    const long double x = ExactOf(h, &neg, &nan);
    if (nan ? !std::isnan(f) : (static_cast<long double>(f) != x || std::signbit(f) != neg)) ++badBack;
    if (!nan && half(f).amct_bits != h.amct_bits) ++badBack;  // round trip
  }
  Check("half_to_float_exact_all_65536", badBack == 0, std::to_string(badBack));
  Check("half_ties", half(1.0f + 1.0f / 2048).amct_bits == 0x3C00 && half(1.0f + 3.0f / 2048).amct_bits == 0x3C02 &&
                         half(65519.0f).amct_bits == 0x7BFF && half(65520.0f).amct_bits == 0x7C00 &&
                         half(-65520.0f).amct_bits == 0xFC00 && half(5.9604645e-08f).amct_bits == 0x0001 &&
                         half(2.9802322e-08f).amct_bits == 0x0000 && half(2.9802326e-08f).amct_bits == 0x0001);
}

void Dump(const std::string& dir) {
  // RINT conversions for the Python cross-check against torch/numpy.
  std::vector<float> f = FloatInputs(FmtOf<half>());
  std::vector<half> h;
  std::vector<bfloat16_t> b;
  std::vector<float> hf, bf, i2f;
  std::string err;
  RunCast<half, float>(f, RoundMode::CAST_RINT, &h, &err);
  RunCast<bfloat16_t, float>(f, RoundMode::CAST_RINT, &b, &err);
  std::vector<half> allH = All16<half>();
  std::vector<bfloat16_t> allB = All16<bfloat16_t>();
  RunCast<float, half>(allH, RoundMode::CAST_NONE, &hf, &err);
  RunCast<float, bfloat16_t>(allB, RoundMode::CAST_NONE, &bf, &err);
  std::vector<int32_t> ii = Int32Inputs();
  RunCast<float, int32_t>(ii, RoundMode::CAST_RINT, &i2f, &err);
  auto write = [&](const char* name, const void* p, size_t bytes) {
    std::ofstream o(dir + "/" + name, std::ios::binary);
    o.write(static_cast<const char*>(p), static_cast<std::streamsize>(bytes));
  };
  write("f32_in.bin", f.data(), f.size() * 4);
  write("f32_to_f16.bin", h.data(), h.size() * 2);
  write("f32_to_bf16.bin", b.data(), b.size() * 2);
  write("f16_to_f32.bin", hf.data(), hf.size() * 4);
  write("bf16_to_f32.bin", bf.data(), bf.size() * 4);
  write("i32_in.bin", ii.data(), ii.size() * 4);
  write("i32_to_f32.bin", i2f.data(), i2f.size() * 4);
  std::printf("DUMPED %zu floats\n", f.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "dump") {
    Dump(argv[2]);
    return 0;
  }
  TestScalarTypes();
  const std::vector<float> toHalf = FloatInputs(FmtOf<half>());
  const std::vector<float> toBf16 = FloatInputs(FmtOf<bfloat16_t>());
  const std::vector<float> plain = FloatInputs(FmtOf<float>());
  // both arches
  CheckPair<float, half>("half_to_float", All16<half>(), "N");
  CheckPair<float, bfloat16_t>("bf16_to_float", All16<bfloat16_t>(), "N");
  CheckPair<float, int16_t>("int16_to_float", AllSmallInts<int16_t>(), "N");
  CheckPair<half, int8_t>("int8_to_half", AllSmallInts<int8_t>(), "N");
  CheckPair<half, uint8_t>("uint8_to_half", AllSmallInts<uint8_t>(), "N");
  CheckPair<int16_t, int32_t>("int32_to_int16", Int32Inputs(), "N");
  CheckPair<int64_t, int32_t>("int32_to_int64", Int32Inputs(), "N");
  CheckPair<int32_t, int64_t>("int64_to_int32", Int64Inputs(), "N");
  CheckPair<half, float>("float_to_half", toHalf, "RFCATON");
  CheckPair<bfloat16_t, float>("float_to_bf16", toBf16, "RFCAT");
  CheckPair<float, float>("float_to_float", plain, "RFCAT");
  CheckPair<int32_t, float>("float_to_int32", plain, "RFCAT");
  CheckPair<int16_t, float>("float_to_int16", plain, "RFCAT");
  CheckPair<int64_t, float>("float_to_int64", plain, "RFCAT");
  CheckPair<int32_t, half>("half_to_int32", All16<half>(), "RFCAT");
  CheckPair<int16_t, half>("half_to_int16", All16<half>(), "RFCAT");
  CheckPair<int32_t, bfloat16_t>("bf16_to_int32", All16<bfloat16_t>(), "RFCAT");
  CheckPair<float, int64_t>("int64_to_float", Int64Inputs(), "RFCAT");
  CheckPair<int8_t, half>("half_to_int8", All16<half>(), "RFCATN");
  CheckPair<uint8_t, half>("half_to_uint8", All16<half>(), "RFCATN");
  CheckPair<half, int16_t>("int16_to_half", AllSmallInts<int16_t>(), "RFCATN");
  CheckPair<float, int32_t>("int32_to_float", Int32Inputs(), "RFCATN");
#if __NPU_ARCH__ == 3510
  CheckPair<bfloat16_t, half>("half_to_bf16", All16<half>(), "RFCAT");
  CheckPair<half, bfloat16_t>("bf16_to_half", All16<bfloat16_t>(), "RFCAT");
  CheckPair<int16_t, int8_t>("int8_to_int16", AllSmallInts<int8_t>(), "N");
  CheckPair<int32_t, int8_t>("int8_to_int32", AllSmallInts<int8_t>(), "N");
  CheckPair<uint16_t, uint8_t>("uint8_to_uint16", AllSmallInts<uint8_t>(), "N");
  CheckPair<uint32_t, uint8_t>("uint8_to_uint32", AllSmallInts<uint8_t>(), "N");
  CheckPair<int32_t, int16_t>("int16_to_int32", AllSmallInts<int16_t>(), "N");
  CheckPair<uint8_t, uint16_t>("uint16_to_uint8", AllSmallInts<uint16_t>(), "N");
  CheckPair<uint32_t, uint16_t>("uint16_to_uint32", AllSmallInts<uint16_t>(), "N");
  CheckPair<uint8_t, int32_t>("int32_to_uint8", Int32Inputs(), "N");
  CheckPair<uint16_t, int32_t>("int32_to_uint16", Int32Inputs(), "N");
  {
    std::vector<uint32_t> u;
    for (int32_t v : Int32Inputs()) u.push_back(static_cast<uint32_t>(v));
    CheckPair<uint8_t, uint32_t>("uint32_to_uint8", u, "N");
    CheckPair<uint16_t, uint32_t>("uint32_to_uint16", u, "N");
    CheckPair<int16_t, uint32_t>("uint32_to_int16", u, "N");
  }
#endif
  // Saturation and tie spot checks (documented examples).
  std::vector<int16_t> sat;
  std::string err;
  RunCast<int16_t, float>({4194304.0f, -4194304.0f, 2.5f, -2.5f}, RoundMode::CAST_RINT, &sat, &err);
  Check("cast_float_to_int16_saturates_2pow22", sat.size() == 4 && sat[0] == 32767 && sat[1] == -32768 &&
                                                    sat[2] == 2 && sat[3] == -2);
  std::vector<int32_t> away;
  RunCast<int32_t, float>({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f}, RoundMode::CAST_ROUND, &away, &err);
  Check("cast_round_ties_away", away == std::vector<int32_t>({1, 2, 3, -1, -2, -3}));
  std::vector<int32_t> even;
  RunCast<int32_t, float>({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f}, RoundMode::CAST_RINT, &even, &err);
  Check("cast_rint_ties_even", even == std::vector<int32_t>({0, 2, 2, 0, -2, -2}));
  return simtest::Finish();
}
