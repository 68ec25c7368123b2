// Kernel sim: Brcb, Gather and GatherMask (sim_gather.h) against
// references computed here from the spec's formulas, for their 16- and 32-bit types, plus every
// parameter/bounds/overlap/sync guard they add. Driven by tests/test_kernel_sim_ops.py.
#include <algorithm>
#include <random>

#include "sim_test.h"

using namespace AscendC;
using amct_sim::detail::Fmt;
using simtest::Check;
using simtest::ExpectError;
using simtest::ExpectOk;
using simtest::Run1;

namespace {

std::mt19937& Rng() {
  static std::mt19937 g(777);
  return g;
}

template <class T>
const char* Name() {
  if (std::is_same<T, float>::value) return "float";
  if (std::is_same<T, half>::value) return "half";
  if (std::is_same<T, bfloat16_t>::value) return "bf16";
  if (std::is_same<T, uint16_t>::value) return "uint16";
  if (std::is_same<T, int16_t>::value) return "int16";
  if (std::is_same<T, int32_t>::value) return "int32";
  if (std::is_same<T, uint32_t>::value) return "uint32";
  return "?";
}

// Distinct bit patterns (never NaN for the float types: high bits stay low).
template <class T>
std::vector<T> Patterns(size_t n) {
  using W = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    const W w = static_cast<W>((i * 2654435761u) & (sizeof(T) == 2 ? 0x3FFFu : 0x3FFFFFFFu));
    std::memcpy(&v[i], &w, sizeof(T));
  }
  return v;
}

template <class T>
bool SameBits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ---------------------------------------------------------------- Brcb
template <class T>
void BrcbCase(const char* name, uint8_t repeats, uint16_t blk, uint16_t rep) {
  constexpr uint32_t B = 32 / sizeof(T);
  const uint32_t blkEff = blk == 0 ? 1 : blk;
  const uint32_t dstBlocks = (repeats - 1) * rep + 7 * blkEff + 1;
  const uint32_t dstElems = dstBlocks * B;
  const std::vector<T> src = Patterns<T>(8 * repeats);
  T sentinel;
  std::memset(&sentinel, 0x2A, sizeof(T));
  std::vector<T> got(dstElems);
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, 8 * repeats * sizeof(T));
    pipe.InitBuffer(db, dstElems * sizeof(T));
    LocalTensor<T> s = sb.Get<T>();
    LocalTensor<T> d = db.Get<T>(dstElems);
    for (uint32_t i = 0; i < 8u * repeats; ++i) s.SetValue(i, src[i]);
    for (uint32_t i = 0; i < dstElems; ++i) d.SetValue(i, sentinel);
    Brcb(d, s, repeats, BrcbRepeatParams(blk, rep));
    for (uint32_t i = 0; i < dstElems; ++i) got[i] = d.GetValue(i);
  });
  std::vector<T> want(dstElems, sentinel);
  for (uint32_t i = 0; i < repeats; ++i) {
    for (uint32_t j = 0; j < 8; ++j) {
      const uint32_t block = i * rep + j * blkEff;
      for (uint32_t e = 0; e < B; ++e) want[block * B + e] = src[8 * i + j];
    }
  }
  bool ok = true;
  uint32_t bad = 0;
  for (uint32_t i = 0; i < dstElems; ++i) {
    if (!SameBits(got[i], want[i])) {
      ok = false;
      bad = i;
      break;
    }
  }
  Check(std::string("brcb_") + Name<T>() + "_" + name, ok, Fmt("first difference at element %u", bad));
}

template <class T>
void BrcbAll() {
  BrcbCase<T>("default_1_8", 3, 1, 8);
  BrcbCase<T>("blk_0_means_1", 2, 0, 8);
  BrcbCase<T>("blk_2_rep_16", 3, 2, 16);
  BrcbCase<T>("blk_1_rep_9_gaps", 4, 1, 9);
  BrcbCase<T>("255_repeats", 255, 1, 8);
}

void TestBrcb() {
  BrcbAll<float>();
  BrcbAll<half>();
  BrcbAll<bfloat16_t>();
  BrcbAll<uint16_t>();
  BrcbAll<int16_t>();
  BrcbAll<int32_t>();
  BrcbAll<uint32_t>();
  // the struct: constructor order (dstBlkStride, dstRepStride), field order rep before blk
  BrcbRepeatParams p(3, 11);
  BrcbRepeatParams d;
  Check("brcb_params_ctor_and_defaults", p.dstBlkStride == 3 && p.dstRepStride == 11 && d.dstBlkStride == 1 &&
                                             d.dstRepStride == 8 && d.blockNumber == 8 &&
                                             offsetof(BrcbRepeatParams, dstRepStride) <
                                                 offsetof(BrcbRepeatParams, dstBlkStride));
}

// ---------------------------------------------------------------- Gather
template <class T>
void GatherCase(const char* name, uint32_t srcElems, uint32_t count, uint32_t baseElems) {
  const std::vector<T> src = Patterns<T>(srcElems);
  std::vector<uint32_t> off(count);
  std::uniform_int_distribution<uint32_t> d(0, srcElems - baseElems - 1);
  for (auto& o : off) o = d(Rng()) * static_cast<uint32_t>(sizeof(T));
  std::vector<T> got(count);
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, ob, db;
    pipe.InitBuffer(sb, srcElems * sizeof(T));
    pipe.InitBuffer(ob, count * 4);
    pipe.InitBuffer(db, count * sizeof(T));
    LocalTensor<T> s = sb.Get<T>(srcElems);
    LocalTensor<uint32_t> o = ob.Get<uint32_t>(count);
    LocalTensor<T> dd = db.Get<T>(count);
    for (uint32_t i = 0; i < srcElems; ++i) s.SetValue(i, src[i]);
    for (uint32_t i = 0; i < count; ++i) o.SetValue(i, off[i]);
    Gather(dd, s, o, baseElems * static_cast<uint32_t>(sizeof(T)), count);
    for (uint32_t i = 0; i < count; ++i) got[i] = dd.GetValue(i);
  });
  bool ok = true;
  uint32_t bad = 0;
  for (uint32_t i = 0; i < count && ok; ++i) {
    if (!SameBits(got[i], src[baseElems + off[i] / sizeof(T)])) {
      ok = false;
      bad = i;
    }
  }
  Check(std::string("gather_") + Name<T>() + "_" + name, ok, Fmt("first difference at %u", bad));
}

void TestGather() {
  GatherCase<float>("random", 1000, 777, 0);
  GatherCase<float>("base_addr", 512, 300, 40);
  GatherCase<half>("random", 2000, 1000, 0);
  GatherCase<bfloat16_t>("random", 640, 640, 16);
  GatherCase<uint16_t>("random", 64, 500, 0);
  GatherCase<int32_t>("random", 300, 256, 8);
  GatherCase<uint32_t>("broadcast_x4", 64, 256, 0);
  // The x4 broadcast the hifloat4 kernel uses: dst[i] = src[i / 4].
  bool ok = true;
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    LocalTensor<float> s = b.GetWithOffset<float>(16, 0);
    LocalTensor<uint32_t> o = b.GetWithOffset<uint32_t>(64, 1024);
    LocalTensor<float> d = b.GetWithOffset<float>(64, 2048);
    CreateVecIndex(s, 0.0f, 16);
    CreateVecIndex(o.ReinterpretCast<int32_t>(), 0, 64);
    ShiftRight(o, o, uint32_t(2), 64);
    ShiftLeft(o, o, uint32_t(2), 64);
    Gather(d, s, o, 0, 64);
    for (uint32_t i = 0; i < 64; ++i) ok = ok && d.GetValue(i) == static_cast<float>(i / 4);
  });
  Check("gather_float_subgroup_broadcast", ok);
}

// ---------------------------------------------------------------- GatherMask
// Runs GatherMask on src with the user pattern words `pat` (builtin 0) or a built-in pattern, and
// checks its output and rsvdCnt against `want` (the brute-force compaction).
template <class T, class U>
void CheckGatherMask(const std::string& name, const std::vector<T>& src, const std::vector<U>& pat, int builtin,
                     const GatherMaskParams& gp, const std::vector<T>& want) {
  const uint32_t srcElems = static_cast<uint32_t>(src.size());
  const uint32_t patWords = static_cast<uint32_t>(pat.size());
  std::vector<T> got(want.size());
  uint64_t cnt = 0;
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, pb, db;
    pipe.InitBuffer(sb, srcElems * sizeof(T));
    pipe.InitBuffer(pb, static_cast<uint32_t>(patWords * sizeof(U) + 32));
    pipe.InitBuffer(db, static_cast<uint32_t>(want.size() * sizeof(T) + 32));
    LocalTensor<T> s = sb.Get<T>(srcElems);
    for (uint32_t i = 0; i < srcElems; ++i) s.SetValue(i, src[i]);
    LocalTensor<U> p = pb.Get<U>(patWords);
    for (uint32_t k = 0; k < patWords; ++k) p.SetValue(k, pat[k]);
    LocalTensor<T> d = db.Get<T>();
    if (builtin == 0) {
      GatherMask(d, s, p, false, 0, gp, cnt);
    } else {
      GatherMask(d, s, static_cast<uint8_t>(builtin), false, 0, gp, cnt);
    }
    for (uint32_t i = 0; i < want.size(); ++i) got[i] = d.GetValue(i);
  });
  bool ok = cnt == want.size();
  for (size_t i = 0; i < want.size() && ok; ++i) ok = SameBits(got[i], want[i]);
  Check(name, ok, Fmt("rsvdCnt %llu (want %zu) or a value differs", static_cast<unsigned long long>(cnt), want.size()));
}

template <class T>
void GatherMaskCase(const char* name, int pattern /* 1..7, or 0 = user */, uint16_t repeats, uint8_t blkStride,
                    uint16_t repStride) {
  constexpr uint32_t E = 256 / sizeof(T);
  constexpr uint32_t B = 32 / sizeof(T);
  using U = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
  const uint32_t srcElems = ((repeats - 1) * repStride + 7 * blkStride) * B + B;
  const std::vector<T> src = Patterns<T>(srcElems);
  uint64_t bits[2] = {0, 0};
  std::vector<bool> on(E);
  for (uint32_t i = 0; i < E; ++i) {
    switch (pattern) {
      case 0: on[i] = ((i * 7 + 3) % 5) < 2; break;
      case 1: on[i] = i % 2 == 0; break;
      case 2: on[i] = i % 2 == 1; break;
      case 7: on[i] = true; break;
      default: on[i] = static_cast<int>(i % 4) == pattern - 3; break;
    }
    if (on[i]) bits[i / 64] |= uint64_t{1} << (i % 64);
  }
  std::vector<T> want;
  for (uint32_t r = 0; r < repeats; ++r) {
    for (uint32_t i = 0; i < E; ++i) {
      if (on[i]) want.push_back(src[(r * repStride + (i / B) * blkStride) * B + i % B]);
    }
  }
  std::vector<U> pat(E / (8 * sizeof(U)));
  for (uint32_t k = 0; k < pat.size(); ++k) {
    const uint32_t bit = k * 8 * sizeof(U);
    pat[k] = static_cast<U>(bits[bit / 64] >> (bit % 64));
  }
  CheckGatherMask(std::string("gathermask_") + Name<T>() + "_" + name, src, pat, pattern,
                  GatherMaskParams(blkStride, repeats, repStride, 0), want);
}

template <class T>
void GatherMaskAll() {
  GatherMaskCase<T>("even", 1, 3, 1, 8);
  GatherMaskCase<T>("odd", 2, 3, 1, 8);
  GatherMaskCase<T>("lane0_of_4", 3, 2, 1, 8);
  GatherMaskCase<T>("lane1_of_4", 4, 2, 1, 8);
  GatherMaskCase<T>("lane2_of_4", 5, 2, 1, 8);
  GatherMaskCase<T>("lane3_of_4", 6, 2, 1, 8);
  GatherMaskCase<T>("all", 7, 2, 1, 8);
  GatherMaskCase<T>("user_pattern", 0, 4, 1, 8);
  GatherMaskCase<T>("strided", 1, 3, 2, 20);
}

// A user pattern per repeat, src1RepeatStride blocks apart: each repeat keeps its own lanes, and
// the kept lanes of all repeats are appended densely in repeat order (the layout the stem_indexer
// kernel's emission uses: one GatherMask over a row, one 32-B pattern slot per repeat).
template <class T>
void GatherMaskPerRepeatCase(const char* name, uint16_t repeats, uint8_t patStride, uint16_t repStride) {
  constexpr uint32_t E = 256 / sizeof(T);
  constexpr uint32_t B = 32 / sizeof(T);
  using U = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
  constexpr uint32_t kWordBits = 8 * sizeof(U);
  const uint32_t srcElems = ((repeats - 1) * repStride + 8) * B;
  const std::vector<T> src = Patterns<T>(srcElems);
  const uint32_t patWords = (32 * patStride * (repeats - 1) + E / 8) / sizeof(U);
  std::vector<U> pat(patWords, 0);
  std::vector<T> want;
  for (uint32_t r = 0; r < repeats; ++r) {
    for (uint32_t i = 0; i < E; ++i) {
      const bool on = r == 1 ? false : ((i * 7 + r * 3 + 1) % (r + 2)) == 0;  // repeat 1 keeps nothing
      if (!on) continue;
      pat[(32 * patStride * r) / sizeof(U) + i / kWordBits] |= static_cast<U>(U{1} << (i % kWordBits));
      want.push_back(src[r * repStride * B + i]);
    }
  }
  CheckGatherMask(std::string("gathermask_") + Name<T>() + "_per_repeat_pattern_" + name, src, pat, 0,
                  GatherMaskParams(1, repeats, repStride, patStride), want);
}

void TestGatherMask() {
  GatherMaskPerRepeatCase<float>("stride1", 5, 1, 8);
  GatherMaskPerRepeatCase<int32_t>("stride2_gapped_src", 4, 2, 12);
  GatherMaskPerRepeatCase<half>("stride1", 3, 1, 8);
  GatherMaskPerRepeatCase<uint16_t>("stride3", 3, 3, 8);
  GatherMaskAll<half>();
  GatherMaskAll<float>();
  GatherMaskAll<bfloat16_t>();
  GatherMaskAll<uint16_t>();
  GatherMaskAll<int32_t>();
  GatherMaskAll<uint32_t>();
  GatherMaskParams d;
  GatherMaskParams p(2, 5, 16, 0);
  Check("gathermask_params_ctor_and_defaults", d.src0BlockStride == 1 && d.repeatTimes == 0 &&
                                                  d.src0RepeatStride == 8 && d.src1RepeatStride == 8 &&
                                                  p.src0BlockStride == 2 && p.repeatTimes == 5 &&
                                                  p.src0RepeatStride == 16 && p.src1RepeatStride == 0);
  Check("gathermask_default_mode_per_arch",
        defaultGatherMaskMode == (__NPU_ARCH__ == 2201 ? GatherMaskMode::VERSION_V2 : GatherMaskMode::VERSION_V1));
}

// ---------------------------------------------------------------- guards
void TestGuards() {
  using Buf = TBuf<TPosition::VECCALC>;
  auto with = [](auto body) {
    return [body] {
      Run1([body] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 32768);
        body(b);
      });
    };
  };
  ExpectError("brcb_dst_beyond_view", {"Brcb", "bounds", "dst"}, with([](Buf& b) {
                Brcb(b.GetWithOffset<float>(63, 0), b.GetWithOffset<float>(8, 1024), 1, BrcbRepeatParams(1, 8));
              }));
  ExpectError("brcb_src_beyond_view", {"Brcb", "bounds", "src0"}, with([](Buf& b) {
                Brcb(b.GetWithOffset<float>(128, 0), b.GetWithOffset<float>(8, 1024), 2, BrcbRepeatParams(1, 8));
              }));
  ExpectError("brcb_overlap", {"Brcb", "overlap"}, with([](Buf& b) {
                LocalTensor<float> t = b.GetWithOffset<float>(128, 0);
                Brcb(t, t, 1, BrcbRepeatParams(1, 8));
              }));
  ExpectError("brcb_dst_misaligned", {"Brcb", "alignment"}, with([](Buf& b) {
                Brcb(b.GetWithOffset<float>(128, 0)[2], b.GetWithOffset<float>(8, 1024), 1, BrcbRepeatParams(1, 8));
              }));
  ExpectOk("brcb_repeat_zero_is_nop", with([](Buf& b) {
             Brcb(b.GetWithOffset<float>(8, 0), b.GetWithOffset<float>(8, 1024), 0, BrcbRepeatParams(1, 8));
           }));
  ExpectError("gather_offset_not_multiple_of_sizeof", {"Gather", "parameters", "srcOffset[3] = 6"},
              with([](Buf& b) {
                LocalTensor<uint32_t> o = b.GetWithOffset<uint32_t>(8, 0);
                for (uint32_t i = 0; i < 8; ++i) o.SetValue(i, 4 * i);
                o.SetValue(3, 6u);
                Gather(b.GetWithOffset<float>(8, 64), b.GetWithOffset<float>(64, 1024), o, 0, 8);
              }));
  ExpectError("gather_offset_outside_src", {"Gather", "bounds", "srcOffset[5] = 256", "outside src"},
              with([](Buf& b) {
                LocalTensor<uint32_t> o = b.GetWithOffset<uint32_t>(8, 0);
                for (uint32_t i = 0; i < 8; ++i) o.SetValue(i, 0u);
                o.SetValue(5, 256u);
                Gather(b.GetWithOffset<float>(8, 64), b.GetWithOffset<float>(64, 1024), o, 0, 8);
              }));
  ExpectError("gather_base_addr_outside_src", {"Gather", "bounds", "srcBaseAddr 252"}, with([](Buf& b) {
                LocalTensor<uint32_t> o = b.GetWithOffset<uint32_t>(8, 0);
                for (uint32_t i = 0; i < 8; ++i) o.SetValue(i, 4u);
                Gather(b.GetWithOffset<float>(8, 64), b.GetWithOffset<float>(64, 1024), o, 252, 8);
              }));
  ExpectError("gather_count_zero", {"Gather", "count must be > 0"}, with([](Buf& b) {
                Gather(b.GetWithOffset<float>(8, 64), b.GetWithOffset<float>(64, 1024),
                       b.GetWithOffset<uint32_t>(8, 0), 0, 0);
              }));
  ExpectError("gather_offsets_beyond_view", {"Gather", "bounds", "srcOffset"}, with([](Buf& b) {
                Gather(b.GetWithOffset<float>(16, 64), b.GetWithOffset<float>(64, 1024),
                       b.GetWithOffset<uint32_t>(8, 0), 0, 16);
              }));
  ExpectError("gather_dst_overlaps_read_range", {"Gather", "overlap"}, with([](Buf& b) {
                LocalTensor<uint32_t> o = b.GetWithOffset<uint32_t>(8, 0);
                for (uint32_t i = 0; i < 8; ++i) o.SetValue(i, 4 * i);
                LocalTensor<float> s = b.GetWithOffset<float>(64, 1024);
                Gather(s, s, o, 0, 8);
              }));
#if __NPU_ARCH__ == 2201
  ExpectError("gather_count_limit_2201", {"Gather", "count 16384 is not below 256 * 64 on dav-2201"}, [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> o, s, d;
      pipe.InitBuffer(o, 16384 * 4);
      pipe.InitBuffer(s, 256);
      pipe.InitBuffer(d, 16384 * 4);
      Gather(d.Get<float>(), s.Get<float>(), o.Get<uint32_t>(), 0, 16384);
    });
  });
#else
  ExpectOk("gather_count_16384_3510", [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> o, s, d;
      pipe.InitBuffer(o, 16384 * 4);
      pipe.InitBuffer(s, 256);
      pipe.InitBuffer(d, 16384 * 4);
      Duplicate(o.Get<uint32_t>(), 4u, 16384);
      Gather(d.Get<float>(), s.Get<float>(), o.Get<uint32_t>(), 0, 16384);
    });
  });
#endif
  ExpectError("gathermask_reduce_mode_rejected", {"GatherMask", "[C] only the normal mode"}, with([](Buf& b) {
                uint64_t n = 0;
                GatherMask(b.GetWithOffset<float>(64, 0), b.GetWithOffset<float>(64, 1024), uint8_t(1), true, 0,
                           GatherMaskParams(1, 1, 8, 0), n);
              }));
  ExpectError("gathermask_counter_mask_rejected", {"GatherMask", "mask = 5"}, with([](Buf& b) {
                uint64_t n = 0;
                GatherMask(b.GetWithOffset<float>(64, 0), b.GetWithOffset<float>(64, 1024), uint8_t(1), false, 5,
                           GatherMaskParams(1, 1, 8, 0), n);
              }));
  ExpectError("gathermask_builtin_pattern_range", {"GatherMask", "src1Pattern 8 is not in [1, 7]"},
              with([](Buf& b) {
                uint64_t n = 0;
                GatherMask(b.GetWithOffset<float>(64, 0), b.GetWithOffset<float>(64, 1024), uint8_t(8), false, 0,
                           GatherMaskParams(1, 1, 8, 0), n);
              }));
  ExpectError("gathermask_per_repeat_pattern_beyond_view", {"GatherMask", "bounds", "src1Pattern"},
              with([](Buf& b) {
                uint64_t n = 0;  // 3 repeats 1 block apart need 72 pattern bytes; the view holds 64
                GatherMask(b.GetWithOffset<float>(192, 0), b.GetWithOffset<float>(192, 1024),
                           b.GetWithOffset<uint32_t>(16, 2048), false, 0, GatherMaskParams(1, 3, 8, 1), n);
              }));
  ExpectOk("gathermask_shared_pattern_fits_its_view", with([](Buf& b) {
             uint64_t n = 0;  // stride 0: one 8-byte pattern for all 3 repeats
             GatherMask(b.GetWithOffset<float>(192, 0), b.GetWithOffset<float>(192, 1024),
                        b.GetWithOffset<uint32_t>(2, 2048), false, 0, GatherMaskParams(1, 3, 8, 0), n);
           }));
  ExpectError("gathermask_repeat_over_255", {"GatherMask", "repeatTime 256"}, with([](Buf& b) {
                uint64_t n = 0;
                GatherMask(b.GetWithOffset<float>(64, 0), b.GetWithOffset<float>(64, 1024), uint8_t(1), false, 0,
                           GatherMaskParams(1, 256, 0, 0), n);
              }));
  ExpectError("gathermask_src_beyond_view", {"GatherMask", "bounds", "src0"}, with([](Buf& b) {
                uint64_t n = 0;
                GatherMask(b.GetWithOffset<half>(128, 0), b.GetWithOffset<half>(200, 1024), uint8_t(7), false, 0,
                           GatherMaskParams(1, 2, 8, 0), n);
              }));
  ExpectError("gathermask_dst_beyond_view", {"GatherMask", "bounds", "dst"}, with([](Buf& b) {
                uint64_t n = 0;
                GatherMask(b.GetWithOffset<half>(127, 0), b.GetWithOffset<half>(256, 1024), uint8_t(1), false, 0,
                           GatherMaskParams(1, 2, 8, 0), n);
              }));

  // Sync: Brcb / Gather of DMA-loaded data need MTE2_V.
  std::vector<float> gm(64, 2.0f);
  amct_sim::GmScope scope{{gm.data(), gm.size() * 4, false}};
  auto run = [&](int which, bool flag) {
    Run1([&, which, flag] {
      TPipe pipe;
      TBuf<TPosition::VECIN> in;
      TBuf<TPosition::VECCALC> out, off;
      pipe.InitBuffer(in, 256);
      pipe.InitBuffer(out, 4096);
      pipe.InitBuffer(off, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm.data()), 64);
      LocalTensor<uint32_t> o = off.Get<uint32_t>();
      Duplicate(o, 0u, 64);
      DataCopy(in.Get<float>(), g, 64);
      if (flag) {
        const int32_t id = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
        SetFlag<HardEvent::MTE2_V>(id);
        WaitFlag<HardEvent::MTE2_V>(id);
      }
      uint64_t n = 0;
      if (which == 0) Brcb(out.Get<float>(), in.Get<float>(), 1, BrcbRepeatParams(1, 8));
      if (which == 1) Gather(out.Get<float>(), in.Get<float>(), o, 0, 64);
      if (which == 2) GatherMask(out.Get<float>(), in.Get<float>(), uint8_t(1), false, 0, GatherMaskParams(1, 1, 8, 0), n);
    });
  };
  ExpectError("brcb_sync_dma_without_flag", {"Brcb", "sync", "HardEvent::MTE2_V"}, [&] { run(0, false); });
  ExpectOk("brcb_sync_dma_with_flag", [&] { run(0, true); });
  ExpectError("gather_sync_dma_without_flag", {"Gather", "sync", "HardEvent::MTE2_V"}, [&] { run(1, false); });
  ExpectOk("gather_sync_dma_with_flag", [&] { run(1, true); });
  ExpectError("gathermask_sync_dma_without_flag", {"GatherMask", "sync", "HardEvent::MTE2_V"},
              [&] { run(2, false); });
  ExpectOk("gathermask_sync_dma_with_flag", [&] { run(2, true); });
}

}  // namespace

int main() {
  TestBrcb();
  TestGather();
  TestGatherMask();
  TestGuards();
  return simtest::Finish();
}
