// Kernel sim: the repeat-form reductions (sim_reduce.h) —
// BlockReduceMax/Min/Sum and WholeReduceMax/Min/Sum — against brute-force references computed
// here from the spec's lane/block/stride formulas, on half and float (and 3510's integer
// WholeReduce), plus every parameter/alignment/bounds/overlap/sync guard they add.
// Driven by tests/test_kernel_sim_ops.py for both arches.
#include <cmath>
#include <random>

#include "sim_test.h"

using namespace AscendC;
using simtest::Check;
using simtest::ExpectError;
using simtest::ExpectOk;
using simtest::Run1;

namespace {

constexpr bool k3510 = __NPU_ARCH__ == 3510;

uint16_t HalfBits(float f) { return half(f).amct_bits; }
float HalfValue(uint16_t b) {
  half h;
  h.amct_bits = b;
  return static_cast<float>(h);
}

// Element e of block b of repeat r at element offset (r * repStride + b * blkStride) * B + e.
template <class T>
uint32_t LaneAt(uint32_t r, uint32_t b, uint32_t e, uint32_t blkStride, uint32_t repStride) {
  constexpr uint32_t B = 32 / sizeof(T);
  return (r * repStride + b * blkStride) * B + e;
}

bool MaskOn(const uint64_t m[2], uint32_t lane) { return ((m[lane / 64] >> (lane % 64)) & 1u) != 0; }

std::mt19937& Rng() {
  static std::mt19937 g(12345);
  return g;
}

// Random values with many ties (small integers), in float; as half they are exact.
std::vector<float> TieValues(size_t n) {
  std::uniform_int_distribution<int> d(-20, 20);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(d(Rng())) * 0.25f;
  return v;
}

// ---------------------------------------------------------------- BlockReduce
struct BlockCase {
  const char* name;
  uint32_t repeats;
  uint64_t mask[2];
  int32_t countMask;  // > 0: use the int32 overload with this count
  int32_t dstRep, srcBlk, srcRep;
};

template <class T>
void RunBlockReduce(const char* op, const BlockCase& bc) {
  constexpr uint32_t B = 32 / sizeof(T);
  constexpr uint32_t E = 256 / sizeof(T);
  const uint32_t srcElems = LaneAt<T>(bc.repeats - 1, 7, B - 1, bc.srcBlk, bc.srcRep) + 1;
  const uint32_t dstElems = 8 * (bc.repeats - 1) * bc.dstRep + 8;
  std::vector<float> in = TieValues(srcElems);
  std::vector<float> got(dstElems, 0.0f);
  uint64_t mask[2] = {bc.mask[0], bc.mask[1]};
  if (bc.countMask > 0) {
    mask[0] = mask[1] = 0;
    for (int i = 0; i < bc.countMask; ++i) mask[i / 64] |= uint64_t{1} << (i % 64);
  }
  const float sentinel = 999.0f;
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, srcElems * sizeof(T));
    pipe.InitBuffer(db, dstElems * sizeof(T));
    LocalTensor<T> s = sb.Get<T>(srcElems);
    LocalTensor<T> d = db.Get<T>(dstElems);
    for (uint32_t i = 0; i < srcElems; ++i) s.SetValue(i, T(in[i]));
    for (uint32_t i = 0; i < dstElems; ++i) d.SetValue(i, T(sentinel));
    const std::string o = op;
    if (bc.countMask > 0) {
      if (o == "max") BlockReduceMax(d, s, bc.repeats, bc.countMask, bc.dstRep, bc.srcBlk, bc.srcRep);
      if (o == "min") BlockReduceMin(d, s, bc.repeats, bc.countMask, bc.dstRep, bc.srcBlk, bc.srcRep);
      if (o == "sum") BlockReduceSum(d, s, bc.repeats, bc.countMask, bc.dstRep, bc.srcBlk, bc.srcRep);
    } else {
      if (o == "max") BlockReduceMax(d, s, bc.repeats, mask, bc.dstRep, bc.srcBlk, bc.srcRep);
      if (o == "min") BlockReduceMin(d, s, bc.repeats, mask, bc.dstRep, bc.srcBlk, bc.srcRep);
      if (o == "sum") BlockReduceSum(d, s, bc.repeats, mask, bc.dstRep, bc.srcBlk, bc.srcRep);
    }
    for (uint32_t i = 0; i < dstElems; ++i) got[i] = static_cast<float>(d.GetValue(i));
  });
  bool ok = true;
  std::string why;
  std::vector<bool> written(dstElems, false);
  for (uint32_t r = 0; r < bc.repeats; ++r) {
    for (uint32_t b = 0; b < 8; ++b) {
      const uint32_t at = 8 * r * bc.dstRep + b;
      written[at] = true;
      bool any = false;
      double acc = 0;
      for (uint32_t e = 0; e < B; ++e) {
        if (!MaskOn(mask, b * B + e)) continue;
        const float x = in[LaneAt<T>(r, b, e, bc.srcBlk, bc.srcRep)];
        if (std::string(op) == "sum") {
          acc += x;
        } else if (!any || (std::string(op) == "max" ? x > acc : x < acc)) {
          acc = x;
        }
        any = true;
      }
      float want;
      if (!any) {  // fully masked block: 2201 leaves it, 3510 writes 0 / -inf / +inf
        want = !k3510 ? sentinel
                      : (std::string(op) == "sum" ? 0.0f : (std::string(op) == "max" ? -INFINITY : INFINITY));
      } else {
        want = static_cast<float>(acc);  // exact: quarter integers, few terms
      }
      if (!(got[at] == want)) {
        ok = false;
        why = amct_sim::detail::Fmt("repeat %u block %u: got %g want %g", r, b, got[at], want);
      }
      (void)E;
    }
  }
  for (uint32_t i = 0; i < dstElems && ok; ++i) {
    if (!written[i] && got[i] != sentinel) {
      ok = false;
      why = amct_sim::detail::Fmt("dst element %u outside the records was written (%g)", i, got[i]);
    }
  }
  Check(std::string("block_reduce_") + op + "_" + (sizeof(T) == 2 ? "half_" : "float_") + bc.name, ok, why);
}

void TestBlockReduce() {
  const BlockCase cases[] = {
      {"full_count", 3, {0, 0}, 256 / 4, 1, 1, 8},
      {"count_20", 2, {0, 0}, 20, 1, 1, 8},
      {"low_half_of_each_block", 4, {0x0F0F0F0F0F0F0F0Full, 0}, 0, 1, 1, 8},
      {"high_half_of_each_block", 4, {0xF0F0F0F0F0F0F0F0ull, 0}, 0, 1, 1, 8},
      {"blocks_masked_off", 2, {0x00FF0000FF0000FFull, 0x00FF0000FF0000FFull}, 0, 1, 1, 8},
      {"strided", 3, {0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull}, 0, 2, 2, 20},
      {"one_repeat_rep_stride_0", 1, {0x8000000000000001ull, 0x1ull}, 0, 0, 1, 0},
  };
  for (const BlockCase& bc : cases) {
    BlockCase f = bc;
    if (f.countMask == 64 * 1) f.countMask = 64;  // float lanes
    RunBlockReduce<float>("max", f);
    RunBlockReduce<float>("min", f);
    RunBlockReduce<float>("sum", f);
    BlockCase h = bc;
    if (h.countMask == 64) h.countMask = 128;  // half lanes
    RunBlockReduce<half>("max", h);
    RunBlockReduce<half>("min", h);
    RunBlockReduce<half>("sum", h);
  }

  // Ties: the value is the same whichever lane wins; the half sum rounds each partial to half.
  std::vector<uint16_t> hs;
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<half> s = b.GetWithOffset<half>(128, 0);
    LocalTensor<half> d = b.GetWithOffset<half>(16, 512);
    // block 0: 16 x 2049 (not a half value: 2048 each) -> sum 32768 exactly
    // block 1: 1 + 15 x 2^-11: each 2^-11 is lost against 1 in a left-to-right or tree sum of halves
    for (uint32_t i = 0; i < 128; ++i) s.SetValue(i, half(0.0f));
    for (uint32_t i = 0; i < 16; ++i) s.SetValue(i, half(2048.0f));
    s.SetValue(16, half(1.0f));
    for (uint32_t i = 17; i < 32; ++i) s.SetValue(i, half(0x1p-11f));
    BlockReduceSum(d, s, 1, 128, 1, 1, 8);
    for (uint32_t i = 0; i < 2; ++i) hs.push_back(d.ReinterpretCast<uint16_t>().GetValue(i));
  });
  // tree: pairs (2^-11 + 2^-11) = 2^-10 are exact, so block 1 keeps them: 1 + 2^-11 (lost) + 7 * 2^-10
  // pairwise: ((1 + 2^-11) -> 1) + ... ; the exact tree value is computed here:
  auto treeHalf = [](std::vector<float> v) {
    while (v.size() > 1) {
      std::vector<float> n;
      for (size_t i = 0; i + 1 < v.size(); i += 2) n.push_back(HalfValue(HalfBits(v[i] + v[i + 1])));
      v = n;
    }
    return v[0];
  };
  std::vector<float> b1(16, 0x1p-11f);
  b1[0] = 1.0f;
  Check("block_reduce_sum_half_exact_and_tree_rounding",
        hs.size() == 2 && HalfValue(hs[0]) == 32768.0f && HalfValue(hs[1]) == treeHalf(b1),
        hs.size() == 2 ? amct_sim::detail::Fmt("got %g and %g", HalfValue(hs[0]), HalfValue(hs[1])) : "no result");
}

// ---------------------------------------------------------------- WholeReduce
template <class T>
void RunWholeReduce(const char* op, ReduceOrder order, uint32_t repeats, int32_t countMask, int32_t dstRep,
                    int32_t srcBlk, int32_t srcRep, const char* name) {
  constexpr uint32_t B = 32 / sizeof(T);
  constexpr uint32_t E = 256 / sizeof(T);
  using Idx = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
  const std::string o = op;
  const uint32_t unit = o == "sum" || order == ReduceOrder::ORDER_ONLY_VALUE
                            ? sizeof(T)
                            : (order == ReduceOrder::ORDER_ONLY_INDEX ? 4u : 2u * sizeof(T));
  const uint32_t srcElems = LaneAt<T>(repeats - 1, 7, B - 1, srcBlk, srcRep) + 1;
  const uint32_t dstBytes = (repeats - 1) * dstRep * unit + unit;
  std::vector<float> in = TieValues(srcElems);
  std::vector<uint8_t> got(dstBytes + 64, 0xEE);
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, srcElems * sizeof(T));
    pipe.InitBuffer(db, dstBytes + 64);
    LocalTensor<T> s = sb.Get<T>(srcElems);
    LocalTensor<uint8_t> raw = db.Get<uint8_t>();
    for (uint32_t i = 0; i < dstBytes + 64; ++i) raw.SetValue(i, uint8_t(0xEE));
    LocalTensor<T> d = db.Get<T>();
    for (uint32_t i = 0; i < srcElems; ++i) s.SetValue(i, T(in[i]));
    if (o == "max") WholeReduceMax(d, s, countMask, repeats, dstRep, srcBlk, srcRep, order);
    if (o == "min") WholeReduceMin(d, s, countMask, repeats, dstRep, srcBlk, srcRep, order);
    if (o == "sum") WholeReduceSum(d, s, countMask, repeats, dstRep, srcBlk, srcRep);
    for (uint32_t i = 0; i < dstBytes + 64; ++i) got[i] = raw.GetValue(i);
  });
  bool ok = true;
  std::string why;
  std::vector<bool> mine(dstBytes + 64, false);
  for (uint32_t r = 0; r < repeats; ++r) {
    double acc = 0;
    uint32_t at = 0;
    std::vector<float> lanes;
    for (uint32_t i = 0; i < E; ++i) {
      const float x = static_cast<int32_t>(i) < countMask ? in[LaneAt<T>(r, i / B, i % B, srcBlk, srcRep)] : 0.0f;
      lanes.push_back(x);
      if (static_cast<int32_t>(i) >= countMask) continue;
      if (o == "sum") {
        acc += x;
      } else if (i == 0 || (o == "max" ? x > acc : x < acc)) {
        acc = x;
        at = i;
      }
    }
    const uint8_t* rec = got.data() + r * dstRep * unit;
    for (uint32_t k = 0; k < unit; ++k) mine[r * dstRep * unit + k] = true;
    T v;
    std::memcpy(&v, order == ReduceOrder::ORDER_INDEX_VALUE && o != "sum" ? rec + sizeof(T) : rec, sizeof(T));
    Idx idx = 0;
    uint32_t idx32 = 0;
    if (o != "sum" && order == ReduceOrder::ORDER_VALUE_INDEX) std::memcpy(&idx, rec + sizeof(T), sizeof(T));
    if (o != "sum" && order == ReduceOrder::ORDER_INDEX_VALUE) std::memcpy(&idx, rec, sizeof(T));
    if (o != "sum" && order == ReduceOrder::ORDER_ONLY_INDEX) std::memcpy(&idx32, rec, 4);
    const float value = static_cast<float>(v);
    const bool valueChecked = o == "sum" || order != ReduceOrder::ORDER_ONLY_INDEX;
    if (valueChecked && value != static_cast<float>(acc)) {
      ok = false;
      why = amct_sim::detail::Fmt("repeat %u: value %g want %g", r, value, static_cast<float>(acc));
    }
    if (o != "sum" && (order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE) &&
        idx != at) {
      ok = false;
      why = amct_sim::detail::Fmt("repeat %u: index %u want %u (smallest lane on ties)", r, static_cast<unsigned>(idx), at);
    }
    if (o != "sum" && order == ReduceOrder::ORDER_ONLY_INDEX && idx32 != at) {
      ok = false;
      why = amct_sim::detail::Fmt("repeat %u: index %u want %u", r, idx32, at);
    }
  }
  for (uint32_t i = 0; i < dstBytes + 64 && ok; ++i) {
    if (!mine[i] && got[i] != 0xEE) {
      ok = false;
      why = amct_sim::detail::Fmt("dst byte %u outside the records was written", i);
    }
  }
  Check(std::string("whole_reduce_") + op + "_" + (sizeof(T) == 2 ? "half_" : "float_") + name, ok, why);
}

void TestWholeReduce() {
  using O = ReduceOrder;
  const std::pair<O, const char*> orders[] = {{O::ORDER_VALUE_INDEX, "value_index"},
                                              {O::ORDER_INDEX_VALUE, "index_value"},
                                              {O::ORDER_ONLY_VALUE, "only_value"},
                                              {O::ORDER_ONLY_INDEX, "only_index"}};
  for (const auto& [order, oname] : orders) {
    RunWholeReduce<float>("max", order, 5, 64, 1, 1, 8, oname);
    RunWholeReduce<float>("min", order, 5, 64, 1, 1, 8, oname);
    RunWholeReduce<half>("max", order, 5, 128, 1, 1, 8, oname);
    RunWholeReduce<half>("min", order, 5, 128, 1, 1, 8, oname);
  }
  RunWholeReduce<float>("max", O::ORDER_VALUE_INDEX, 3, 37, 3, 2, 24, "masked_strided");
  RunWholeReduce<half>("min", O::ORDER_VALUE_INDEX, 3, 100, 2, 1, 9, "masked_strided");
  RunWholeReduce<float>("max", O::ORDER_ONLY_VALUE, 4, 64, 1, 1, 8, "per_block_of_64");
  RunWholeReduce<half>("max", O::ORDER_ONLY_VALUE, 4, 64, 1, 1, 4, "64_lanes_rep_stride_4");
  RunWholeReduce<float>("sum", O::ORDER_ONLY_VALUE, 4, 64, 1, 1, 8, "full");
  RunWholeReduce<float>("sum", O::ORDER_ONLY_VALUE, 3, 10, 5, 1, 8, "masked_strided");
  RunWholeReduce<half>("sum", O::ORDER_ONLY_VALUE, 3, 128, 1, 1, 8, "full");

  // Bit-mask overload: lanes 3 and 70 of a half repeat.
  float v = 0;
  uint16_t idx = 0;
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<half> s = b.GetWithOffset<half>(128, 0);
    LocalTensor<half> d = b.GetWithOffset<half>(16, 512);
    for (uint32_t i = 0; i < 128; ++i) s.SetValue(i, half(static_cast<float>(i)));
    s.SetValue(3, half(500.0f));  // masked in
    s.SetValue(5, half(900.0f));  // masked out
    const uint64_t m[2] = {uint64_t{1} << 3, uint64_t{1} << 6};
    WholeReduceMax(d, s, m, 1, 1, 1, 8);
    v = static_cast<float>(d.GetValue(0));
    idx = d.ReinterpretCast<uint16_t>().GetValue(1);
  });
  Check("whole_reduce_max_half_bit_mask", v == 500.0f && idx == 3, amct_sim::detail::Fmt("got %g at %u", v, idx));

  // +-0 maxima: the first lane's zero wins (its sign bit is the record's), value-only too.
  uint32_t z0 = 0, z1 = 0;
  uint16_t zh = 0;
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 2048);
    LocalTensor<float> s = b.GetWithOffset<float>(128, 0);
    LocalTensor<float> d = b.GetWithOffset<float>(8, 512);
    LocalTensor<half> sh = b.GetWithOffset<half>(128, 1024);
    LocalTensor<half> dh = b.GetWithOffset<half>(16, 1536);
    Duplicate(s, -1.0f, 128);
    s.SetValue(9, -0.0f);   // repeat 0: -0 first, then +0
    s.SetValue(17, 0.0f);
    s.SetValue(64 + 3, 0.0f);  // repeat 1: +0 first, then -0
    s.SetValue(64 + 40, -0.0f);
    WholeReduceMax(d, s, 64, 2, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
    z0 = d.ReinterpretCast<uint32_t>().GetValue(0);
    z1 = d.ReinterpretCast<uint32_t>().GetValue(1);
    Duplicate(sh, half(-2.0f), 128);
    sh.SetValue(70, half(-0.0f));
    sh.SetValue(90, half(0.0f));
    WholeReduceMax(dh, sh, 128, 1, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
    zh = dh.ReinterpretCast<uint16_t>().GetValue(0);
  });
  Check("whole_reduce_max_float_signed_zero_first_lane", z0 == 0x80000000u && z1 == 0u && zh == 0x8000,
        amct_sim::detail::Fmt("got %#x %#x %#x", z0, z1, zh));

  // Float sums are trees: within log2(64) * eps * sum|x| of the exact sum.
  bool ok = true;
  std::vector<float> in(64 * 8);
  std::uniform_real_distribution<float> u(-1000.0f, 1000.0f);
  for (auto& x : in) x = u(Rng());
  std::vector<float> got(8);
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    LocalTensor<float> s = b.GetWithOffset<float>(512, 0);
    LocalTensor<float> d = b.GetWithOffset<float>(8, 2048);
    for (uint32_t i = 0; i < 512; ++i) s.SetValue(i, in[i]);
    WholeReduceSum(d, s, 64, 8, 1, 1, 8);
    for (uint32_t i = 0; i < 8; ++i) got[i] = d.GetValue(i);
  });
  for (uint32_t r = 0; r < 8; ++r) {
    double exact = 0, mag = 0;
    for (uint32_t i = 0; i < 64; ++i) {
      exact += in[64 * r + i];
      mag += std::fabs(in[64 * r + i]);
    }
    ok = ok && std::fabs(got[r] - exact) <= 6 * 0x1p-24 * mag;
  }
  Check("whole_reduce_sum_float_tree_tolerance", ok);

#if __NPU_ARCH__ == 3510
  int32_t iv = 0;
  uint32_t ii = 0;
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<int32_t> s = b.GetWithOffset<int32_t>(64, 0);
    LocalTensor<int32_t> d = b.GetWithOffset<int32_t>(8, 512);
    for (uint32_t i = 0; i < 64; ++i) s.SetValue(i, static_cast<int32_t>(i % 7) - 100);
    WholeReduceMin(d, s, 64, 1, 1, 1, 8);
    iv = d.GetValue(0);
    ii = d.ReinterpretCast<uint32_t>().GetValue(1);
  });
  Check("whole_reduce_min_int32_3510", iv == -100 && ii == 0, amct_sim::detail::Fmt("got %d at %u", iv, ii));
#endif
}

// ---------------------------------------------------------------- guards
void TestGuards() {
  auto with = [](auto body) {
    return [body] {
      Run1([body] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 16384);
        body(b);
      });
    };
  };
  using Buf = TBuf<TPosition::VECCALC>;
  ExpectError("reduce_repeat_time_over_255", {"BlockReduceMax", "parameters", "repeatTime 256"}, with([](Buf& b) {
                BlockReduceMax(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(64, 256), 256, 64, 1, 1, 0);
              }));
  ExpectError("reduce_repeat_time_negative", {"WholeReduceSum", "parameters", "repeatTime -1"}, with([](Buf& b) {
                WholeReduceSum(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(64, 256), 64, -1, 1, 1, 8);
              }));
  ExpectError("reduce_count_mask_zero", {"BlockReduceSum", "parameters", "mask 0 is not in [1, 64]"},
              with([](Buf& b) {
                BlockReduceSum(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(64, 256), 1, 0, 1, 1, 8);
              }));
  ExpectError("reduce_count_mask_over_lanes", {"WholeReduceMax", "mask 129 is not in [1, 128]"}, with([](Buf& b) {
                WholeReduceMax(b.GetWithOffset<half>(16, 0), b.GetWithOffset<half>(128, 256), 129, 1, 1, 1, 8);
              }));
  ExpectError("reduce_bit_mask_empty", {"BlockReduceMax", "mask[] selects no lane"}, with([](Buf& b) {
                const uint64_t m[2] = {0, 0};
                BlockReduceMax(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(64, 256), 1, m, 1, 1, 8);
              }));
  ExpectError("reduce_negative_stride", {"BlockReduceMin", "srcRepStride -8"}, with([](Buf& b) {
                BlockReduceMin(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(64, 256), 1, 64, 1, 1, -8);
              }));
  ExpectError("reduce_bad_order", {"WholeReduceMin", "ReduceOrder value 7"}, with([](Buf& b) {
                WholeReduceMin(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(64, 256), 64, 1, 1, 1, 8,
                               static_cast<ReduceOrder>(7));
              }));
  ExpectError("reduce_src_footprint_beyond_view", {"BlockReduceMax", "bounds", "src"}, with([](Buf& b) {
                BlockReduceMax(b.GetWithOffset<float>(16, 0), b.GetWithOffset<float>(100, 256), 2, 64, 1, 1, 8);
              }));
  ExpectError("reduce_dst_footprint_beyond_view", {"BlockReduceMax", "bounds", "dst"}, with([](Buf& b) {
                BlockReduceMax(b.GetWithOffset<float>(15, 0), b.GetWithOffset<float>(128, 256), 2, 64, 1, 1, 8);
              }));
  ExpectError("reduce_whole_dst_stride_beyond_view", {"WholeReduceSum", "bounds", "dst"}, with([](Buf& b) {
                WholeReduceSum(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(192, 256), 64, 3, 4, 1, 8);
              }));
  ExpectError("reduce_block_dst_unit_alignment_float", {"BlockReduceMax", "alignment", "32-byte unit"},
              with([](Buf& b) {
                BlockReduceMax(b.GetWithOffset<float>(64, 0)[4], b.GetWithOffset<float>(64, 512), 1, 64, 1, 1, 8);
              }));
  ExpectOk("reduce_block_dst_unit_16B_half_ok", with([](Buf& b) {
             LocalTensor<half> s = b.GetWithOffset<half>(128, 512);
             Duplicate(s, half(1.0f), 128);
             BlockReduceMax(b.GetWithOffset<half>(64, 0)[8], s, 1, 128, 1, 1, 8);
           }));
  ExpectOk("reduce_whole_only_value_4B_unit_ok", with([](Buf& b) {
             LocalTensor<float> s = b.GetWithOffset<float>(64, 512);
             Duplicate(s, 1.0f, 64);
             WholeReduceMax(b.GetWithOffset<float>(64, 0)[1], s, 64, 1, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
           }));
  ExpectError("reduce_whole_value_index_unit_alignment", {"WholeReduceMax", "alignment", "8-byte unit"},
              with([](Buf& b) {
                WholeReduceMax(b.GetWithOffset<float>(64, 0)[1], b.GetWithOffset<float>(64, 512), 64, 1, 1, 1, 8);
              }));
  ExpectError("reduce_src_not_32B_aligned", {"BlockReduceSum", "alignment", "src"}, with([](Buf& b) {
                BlockReduceSum(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(128, 256)[4], 1, 64, 1, 1, 8);
              }));
  ExpectError("reduce_dst_overlaps_src", {"WholeReduceSum", "overlap"}, with([](Buf& b) {
                LocalTensor<float> s = b.GetWithOffset<float>(64, 0);
                WholeReduceSum(s, s, 64, 1, 1, 1, 8);
              }));
  ExpectError("reduce_stale_tensor", {"BlockReduceMax", "stale"}, [] {
    Run1([] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(q, 1, 256);
      pipe.InitBuffer(b, 256);
      LocalTensor<float> x = q.AllocTensor<float>();
      q.EnQue(x);
      LocalTensor<float> y = q.DeQue<float>();
      q.FreeTensor(y);
      BlockReduceMax(b.Get<float>(), y, 1, 64, 1, 1, 8);
    });
  });
  ExpectError("reduce_outside_launch", {"BlockReduceMax", "outside amct_sim::Launch"}, [] {
    LocalTensor<float> t;
    BlockReduceMax(t, t, 1, 64, 1, 1, 8);
  });

  // Sync: a TBuf filled by DMA and reduced without MTE2_V fails; with the flag it passes.
  std::vector<float> gm(64, 1.5f);
  amct_sim::GmScope scope{{gm.data(), gm.size() * 4, false}};
  auto dmaThenReduce = [&](bool flag) {
    Run1([&, flag] {
      TPipe pipe;
      TBuf<TPosition::VECIN> in;
      TBuf<TPosition::VECCALC> out;
      pipe.InitBuffer(in, 256);
      pipe.InitBuffer(out, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm.data()), 64);
      DataCopy(in.Get<float>(), g, 64);
      if (flag) {
        const int32_t id = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
        SetFlag<HardEvent::MTE2_V>(id);
        WaitFlag<HardEvent::MTE2_V>(id);
      }
      WholeReduceMax(out.Get<float>(), in.Get<float>(), 64, 1, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
    });
  };
  ExpectError("reduce_sync_dma_without_flag", {"WholeReduceMax", "sync", "HardEvent::MTE2_V"},
              [&] { dmaThenReduce(false); });
  ExpectOk("reduce_sync_dma_with_flag", [&] { dmaThenReduce(true); });
  // The hazard marks cover exactly the touched blocks: a masked-off 32-B block of the source
  // may still be in flight from MTE2.
  ExpectOk("reduce_sync_masked_block_not_read", [&] {
    Run1([&] {
      TPipe pipe;
      TBuf<TPosition::VECIN> in;
      TBuf<TPosition::VECCALC> out;
      pipe.InitBuffer(in, 256);
      pipe.InitBuffer(out, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm.data()), 64);
      LocalTensor<float> t = in.Get<float>();
      Duplicate(t, 0.0f, 56);
      DataCopy(t[56], g, 8);  // block 7, never read below
      const uint64_t m[2] = {0x00FFFFFFFFFFFFFFull, 0};
      BlockReduceMax(out.Get<float>(), t, 1, m, 1, 1, 8);
      const int32_t id = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
      SetFlag<HardEvent::MTE2_V>(id);
      WaitFlag<HardEvent::MTE2_V>(id);
    });
  });
  ExpectOk("reduce_repeat_time_zero_is_nop", with([](Buf& b) {
             BlockReduceMax(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(64, 256), 0, 64, 1, 1, 8);
           }));
}

}  // namespace

int main() {
  TestBlockReduce();
  TestWholeReduce();
  TestGuards();
  return simtest::Finish();
}
