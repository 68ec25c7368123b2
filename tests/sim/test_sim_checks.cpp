// Kernel sim: every guard of the sim (common/ascendc_sim/README.md) fires with a SimError naming
// the problem, and the positive paths (TQue pipelines, flags, DataCopy/DataCopyPad semantics,
// vector ops, Compare/Select) work.
#include "sim_test.h"

using namespace AscendC;
using simtest::Check;
using simtest::ExpectError;
using simtest::ExpectOk;
using simtest::Run1;

namespace {

constexpr uint32_t kArchUb = (__NPU_ARCH__ == 2201) ? 196608u : 253952u;

// ---------------------------------------------------------------- UB
void TestUb() {
  ExpectError("ub_over_limit", {"TPipe::InitBuffer", "UB", "over the UB limit", "196608", "block 0 of 1"}, [] {
    if (kArchUb != 196608u) amct_sim::SetPlatform(0, 196608);
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> a, b;
      pipe.InitBuffer(a, 100000);
      pipe.InitBuffer(b, 100000);
    });
  });
  amct_sim::SetPlatform(0, 0);
  ExpectOk("ub_exactly_at_limit", [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> a;
      pipe.InitBuffer(a, kArchUb);
    });
  });
  ExpectError("ub_override_shrinks_limit", {"UB", "over the UB limit of 40960"}, [] {
    amct_sim::SetPlatform(0, 40960);
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> a;
      pipe.InitBuffer(a, 40961);
    });
  });
  ExpectOk("ub_override_allows_up_to_limit", [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> a;
      pipe.InitBuffer(a, 40960);
    });
  });
  amct_sim::SetPlatform(0, 0);
  ExpectError("ub_more_than_64_buffers", {"UB", "64 buffers"}, [] {
    Run1([] {
      TPipe pipe;
      std::vector<TBuf<TPosition::VECCALC>> bufs(65);
      for (auto& b : bufs) pipe.InitBuffer(b, 32);
    });
  });
  ExpectOk("ub_64_buffers_ok", [] {
    Run1([] {
      TPipe pipe;
      std::vector<TBuf<TPosition::VECCALC>> bufs(64);
      for (auto& b : bufs) pipe.InitBuffer(b, 32);
    });
  });
  ExpectError("ub_more_than_8_tque_blocks_per_position", {"UB", "8 per TPosition", "VECIN"}, [] {
    Run1([] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q[5];
      for (auto& x : q) pipe.InitBuffer(x, 2, 256);
    });
  });
  ExpectOk("ub_8_tque_blocks_per_position_ok", [] {
    Run1([] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> in[4];
      TQue<TPosition::VECOUT, 1> out[4];
      for (auto& x : in) pipe.InitBuffer(x, 2, 256);
      for (auto& x : out) pipe.InitBuffer(x, 2, 256);
    });
  });
  ExpectError("ub_two_live_tpipes", {"TPipe", "second TPipe"}, [] {
    Run1([] {
      TPipe a;
      TPipe b;
    });
  });
  ExpectOk("ub_sequential_tpipes_ok", [] {
    Run1([] {
      { TPipe a; }
      TPipe b;
    });
  });
  ExpectError("ub_initbuffer_twice_tque", {"InitBuffer called twice"}, [] {
    Run1([] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 64);
      pipe.InitBuffer(q, 1, 64);
    });
  });
  ExpectError("ub_initbuffer_twice_tbuf", {"InitBuffer called twice"}, [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 64);
      pipe.InitBuffer(b, 64);
    });
  });
  ExpectError("ub_initbuffer_len_zero", {"UB", "len must be > 0"}, [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 0);
    });
  });
  ExpectError("ub_initbuffer_num_zero", {"UB", "num must be in [1, 64]"}, [] {
    Run1([] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 0, 64);
    });
  });
  ExpectOk("ub_layout_bump_allocated_rounded_to_32", [] {
    Run1([] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(q, 2, 40);  // 2 x 64 B
      pipe.InitBuffer(b, 10);     // 32 B
      LocalTensor<float> t = q.AllocTensor<float>();
      LocalTensor<float> u = q.AllocTensor<float>();
      LocalTensor<uint8_t> v = b.Get<uint8_t>();
      if (t.GetSize() != 16 || v.GetSize() != 32) throw std::runtime_error("sizes");
      q.FreeTensor(t);
      q.FreeTensor(u);
    });
  });
  ExpectError("ub_tpipe_outside_launch", {"TPipe", "outside amct_sim::Launch"}, [] { TPipe pipe; });
  ExpectError("ub_getblockidx_outside_launch", {"GetBlockIdx", "outside amct_sim::Launch"}, [] { GetBlockIdx(); });
}

// ---------------------------------------------------------------- Select 184-KB budget
void TestSelectBudget() {
  auto run = [](uint32_t scratch) {
    Run1([scratch] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> data, mask, pad;
      pipe.InitBuffer(data, 3 * 256);
      pipe.InitBuffer(mask, 32);
      pipe.InitBuffer(pad, scratch);
      LocalTensor<float> x = data.Get<float>();
      LocalTensor<uint8_t> m = mask.Get<uint8_t>();
      Duplicate(x, 1.0f, 192);
      Duplicate(m.ReinterpretCast<uint16_t>(), uint16_t(0x5555), 16);
      Select(x[128], m, x, 2.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
      Select(x[128], m, x, x[64], SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);
    });
  };
  const uint32_t used = 3 * 256 + 32;
  ExpectOk("select_budget_up_to_184KB_ok", [&] { run(188416 - used); });
#if __NPU_ARCH__ == 2201
  ExpectError("select_budget_2201_scratch_collision", {"Select", "UB", "188416", "184 KB"},
              [&] { run(188416 - used + 32); });
#else
  ExpectOk("select_budget_3510_no_scratch", [&] { run(188416 - used + 32); });
#endif
}

// ---------------------------------------------------------------- alignment
void TestAlignment() {
  ExpectError("align_ub_operand_not_32B", {"Adds", "alignment", "UB offset 4"}, [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 1024);
      LocalTensor<float> x = b.Get<float>();
      Duplicate(x, 0.0f, 64);
      Adds(x[1], x[1], 1.0f, 8);
    });
  });
  ExpectOk("align_ub_operand_32B_view_ok", [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 1024);
      LocalTensor<float> x = b.Get<float>();
      Duplicate(x, 0.0f, 64);
      Adds(x[8], x[8], 1.0f, 8);
      x.SetValue(1, 3.0f);  // scalar access has no alignment rule
      if (static_cast<float>(x.GetValue(8)) != 1.0f || x[1].GetValue(0) != 3.0f) throw std::runtime_error("values");
    });
  });
  std::vector<uint8_t> gm(1024, 0);
  amct_sim::GmScope scope{{gm.data(), gm.size(), true}};
  ExpectError("align_datacopy_gm_address", {"DataCopy(GM->UB)", "alignment", "GM address", "sizeof(T) = 4"}, [&] {
    Run1([&] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm.data() + 2));
      LocalTensor<float> t = q.AllocTensor<float>();
      DataCopy(t, g, 8);
      q.FreeTensor(t);
    });
  });
  ExpectOk("align_datacopypad_gm_address_free", [&] {
    Run1([&] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm.data() + 2));
      LocalTensor<float> t = q.AllocTensor<float>();
      DataCopyPad(t, g, DataCopyExtParams{1, 32, 0, 0, 0}, DataCopyPadExtParams<float>{});
      q.FreeTensor(t);
    });
  });
  ExpectError("align_getwithoffset_offset", {"TBuf::GetWithOffset", "alignment", "bufOffset 16"}, [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 256);
      b.GetWithOffset<float>(8, 16);
    });
  });
}

// ---------------------------------------------------------------- bounds
void TestBounds() {
  auto withBuf = [](auto body) {
    Run1([body] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> b;
      pipe.InitBuffer(b, 256);
      LocalTensor<float> x = b.Get<float>();  // 64 elements
      body(x, b);
    });
  };
  ExpectError("bounds_count_beyond_view", {"Add", "bounds", "dst needs 72 elements", "holds 64"}, [&] {
    withBuf([](LocalTensor<float> x, TBuf<TPosition::VECCALC>&) { Add(x, x, x, 72); });
  });
  ExpectError("bounds_count_beyond_shrunk_view", {"Muls", "bounds", "holds 16"}, [&] {
    withBuf([](LocalTensor<float> x, TBuf<TPosition::VECCALC>&) {
      Duplicate(x, 0.0f, 64);
      LocalTensor<float> y = x;
      y.SetSize(16);
      Muls(y, y, 2.0f, 24);
    });
  });
  ExpectError("bounds_getvalue_index", {"LocalTensor::GetValue", "index 64 >= GetSize() 64"}, [&] {
    withBuf([](LocalTensor<float> x, TBuf<TPosition::VECCALC>&) { x.GetValue(64); });
  });
  ExpectError("bounds_setvalue_index", {"LocalTensor::SetValue", "index 70 >= GetSize() 64"}, [&] {
    withBuf([](LocalTensor<float> x, TBuf<TPosition::VECCALC>&) { x.SetValue(70, 1.0f); });
  });
  ExpectError("bounds_subscript_past_end", {"operator[]", "past the end"}, [&] {
    withBuf([](LocalTensor<float> x, TBuf<TPosition::VECCALC>&) { x[65]; });
  });
  ExpectError("bounds_setsize_growth", {"SetSize", "only shrinks"}, [&] {
    withBuf([](LocalTensor<float> x, TBuf<TPosition::VECCALC>&) { x.SetSize(65); });
  });
  ExpectError("bounds_tbuf_get_len", {"TBuf::Get", "bounds"}, [&] {
    withBuf([](LocalTensor<float>, TBuf<TPosition::VECCALC>& b) { b.Get<float>(65); });
  });
  ExpectError("bounds_tbuf_getwithoffset_size", {"TBuf::GetWithOffset", "bounds"}, [&] {
    withBuf([](LocalTensor<float>, TBuf<TPosition::VECCALC>& b) { b.GetWithOffset<float>(60, 32); });
  });

  std::vector<float> in(256, 1.0f), out(256, 0.0f), other(256, 0.0f);
  amct_sim::GmScope scope{{in.data(), in.size() * 4, false}, {out.data(), out.size() * 4, true}};
  auto load = [&](float* src, uint32_t n, uint64_t extent) {
    Run1([=] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 4096);
      GlobalTensor<float> g;
      if (extent) {
        g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(src), extent);
      } else {
        g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(src));
      }
      LocalTensor<float> t = q.AllocTensor<float>();
      DataCopy(t, g, n);
      q.FreeTensor(t);
    });
  };
  ExpectError("bounds_gm_outside_regions", {"DataCopy(GM->UB)", "outside every registered GM region"},
              [&] { load(other.data(), 64, 0); });
  ExpectError("bounds_gm_past_region_end", {"outside every registered GM region"},
              [&] { load(in.data() + 200, 64, 0); });
  ExpectError("bounds_gm_setglobalbuffer_extent", {"bounds", "SetGlobalBuffer extent"},
              [&] { load(in.data(), 64, 56); });
  ExpectOk("bounds_gm_inside_extent_ok", [&] { load(in.data(), 64, 64); });
  ExpectError("bounds_gm_write_read_only", {"DataCopyPad(UB->GM)", "read-only region"}, [&] {
    Run1([&] {
      TPipe pipe;
      TQue<TPosition::VECOUT, 1> q;
      pipe.InitBuffer(q, 1, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in.data()), 256);
      LocalTensor<float> t = q.AllocTensor<float>();
      Duplicate(t, 0.0f, 64);
      q.EnQue(t);
      t = q.DeQue<float>();
      DataCopyPad(g, t, DataCopyExtParams{1, 12, 0, 0, 0});
      q.FreeTensor(t);
    });
  });
  ExpectError("bounds_gm_getvalue_outside_region", {"GlobalTensor::GetValue", "outside every registered"}, [&] {
    Run1([&] {
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(other.data()));
      g.GetValue(0);
    });
  });
  ExpectError("bounds_gm_getvalue_extent", {"GlobalTensor::GetValue", "SetGlobalBuffer extent"}, [&] {
    Run1([&] {
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in.data()), 4);
      g[2].GetValue(2);
    });
  });
  ExpectOk("bounds_gm_getvalue_ok", [&] {
    Run1([&] {
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in.data()), 4);
      if (g[1].GetValue(2) != 1.0f || g[1].GetSize() != 4) throw std::runtime_error("GetValue");
    });
  });
}

void TestNoGmScope() {
  ExpectError("bounds_no_gm_scope", {"kernel no_scope_kernel, block 0 of 1", "outside every registered GM region",
                                     "GmScope"},
              [&] {
                std::vector<float> local(64);
                simtest::LaunchF("no_scope_kernel", 1, [&] {
                  GlobalTensor<float> g;
                  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(local.data()));
                  g.GetValue(0);
                });
              });
  ExpectOk("gm_scope_nesting_pops", [] {
    std::vector<float> a(8), b(8);
    amct_sim::GmScope outer{{a.data(), 32, false}};
    {
      amct_sim::GmScope inner{{b.data(), 32, true}};
      amct_sim::GmRegion got[4];
      if (amct_sim_state_gm_snapshot(got, 4) != 2) throw std::runtime_error("2 regions inside");
    }
    amct_sim::GmRegion got[4];
    if (amct_sim_state_gm_snapshot(got, 4) != 1 || got[0].ptr != a.data()) throw std::runtime_error("1 after pop");
  });
}

// ---------------------------------------------------------------- parameters
void TestParameters() {
  std::vector<float> in(4096, 1.0f), out(4096, 0.0f);
  amct_sim::GmScope scope{{in.data(), in.size() * 4, false}, {out.data(), out.size() * 4, true}};
  auto inQueue = [&](auto body) {
    Run1([&, body] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 8192);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in.data()), in.size());
      LocalTensor<float> t = q.AllocTensor<float>();
      body(t, g);
      q.FreeTensor(t);
    });
  };
  ExpectError("param_count_zero_vector", {"Adds", "count must be > 0, got 0"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) { Adds(t, t, 1.0f, 0); });
  });
  ExpectError("param_count_negative_vector", {"Add", "count must be > 0, got -8"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) { Add(t, t, t, -8); });
  });
  ExpectError("param_count_zero_datacopy", {"DataCopy(GM->UB)", "count must be > 0"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float> g) { DataCopy(t, g, 0); });
  });
  ExpectError("param_datacopy_bytes_not_32", {"DataCopy(GM->UB)", "7*4 = 28 bytes is not a multiple of 32"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float> g) { DataCopy(t, g, 7); });
  });
  ExpectError("param_compare_bytes_not_256", {"Compare", "not a multiple of 256"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Compare(t[512].ReinterpretCast<uint8_t>(), t, t[64], CMPMODE::LT, 32);
    });
  });
  ExpectError("param_compares_bytes_not_256", {"Compares", "not a multiple of 256"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Compares(t[512].ReinterpretCast<uint8_t>(), t, 1.0f, CMPMODE::LT, 72);
    });
  });
  ExpectError("param_blockcount_range", {"DataCopyPad(GM->UB)", "blockCount 4096 is not in [0, 4095]"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float> g) {
      DataCopyPad(t, g, DataCopyExtParams{4096, 4, 0, 0, 0}, DataCopyPadExtParams<float>{});
    });
  });
  ExpectError("param_datacopy_params_blockcount_range", {"DataCopy(GM->UB, DataCopyParams)", "4095"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float> g) { DataCopy(t, g, DataCopyParams{4096, 1, 0, 0}); });
  });
  ExpectError("param_blocklen_range", {"blockLen 2097152 bytes is not in [0, 2097151]"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float> g) {
      DataCopyPad(t, g, DataCopyExtParams{1, 2097152, 0, 0, 0}, DataCopyPadExtParams<float>{});
    });
  });
  ExpectError("param_blocklen_multiple_of_sizeof", {"blockLen 6 bytes is not a multiple of sizeof(T) = 4"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float> g) {
      DataCopyPad(t, g, DataCopyExtParams{1, 6, 0, 0, 0}, DataCopyPadExtParams<float>{});
    });
  });
  ExpectError("param_pads_over_32B", {"pads of 9/0 elements are 36/0 bytes"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float> g) {
      DataCopyPad(t, g, DataCopyExtParams{1, 64, 0, 0, 0}, DataCopyPadExtParams<float>{true, 9, 0, 0.0f});
    });
  });
  ExpectOk("param_pads_32B_ok", [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float> g) {
      DataCopyPad(t, g, DataCopyExtParams{1, 64, 0, 0, 0}, DataCopyPadExtParams<float>{true, 8, 8, 0.0f});
    });
  });
  ExpectError("param_dma_ub_side_bounds", {"DataCopyPad(GM->UB)", "bounds", "dst needs"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float> g) {
      DataCopyPad(t, g, DataCopyExtParams{3, 4096, 0, 0, 0}, DataCopyPadExtParams<float>{});
    });
  });
  ExpectError("param_cast_mode_unlisted", {"Cast", "RoundMode::CAST_NONE is not listed for float -> bfloat16_t"},
              [&] {
                inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
                  Duplicate(t, 1.0f, 64);
                  Cast(t[64].ReinterpretCast<bfloat16_t>(), t, RoundMode::CAST_NONE, 64);
                });
              });
  ExpectError("param_cast_mode_odd_not_for_int32", {"Cast", "CAST_ODD is not listed for float -> int32_t"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Duplicate(t, 1.0f, 64);
      Cast(t[64].ReinterpretCast<int32_t>(), t, RoundMode::CAST_ODD, 64);
    });
  });
  ExpectError("param_cast_mode_unknown", {"Cast", "RoundMode::UNKNOWN is not listed"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Duplicate(t, 1.0f, 64);
      Cast(t[64].ReinterpretCast<half>(), t, RoundMode::UNKNOWN, 64);
    });
  });
  ExpectOk("param_cast_mode_odd_for_half_ok", [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Duplicate(t, 1.0f, 64);
      Cast(t[64].ReinterpretCast<half>(), t, RoundMode::CAST_ODD, 64);
    });
  });
  ExpectError("param_partial_overlap", {"Add", "partially overlap"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Duplicate(t, 1.0f, 128);
      Add(t[8], t, t[64], 32);
    });
  });
  ExpectError("param_partial_overlap_cast", {"Cast", "partially overlap"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Duplicate(t, 1.0f, 128);
      Cast(t.ReinterpretCast<half>(), t, RoundMode::CAST_RINT, 64);
    });
  });
  ExpectOk("param_full_alias_ok", [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Duplicate(t, 1.0f, 128);
      Add(t, t, t[64], 64);
      Muls(t, t, 3.0f, 64);
      if (t.GetValue(5) != 6.0f) throw std::runtime_error("value");
    });
  });
  ExpectError("param_shift_amount_negative", {"ShiftLeft", "shift amount -1"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      LocalTensor<int32_t> u = t.ReinterpretCast<int32_t>();
      ShiftLeft(u, u, int32_t(-1), 64);
    });
  });
#if __NPU_ARCH__ == 2201
  ExpectError("param_shift_amount_over_width_2201", {"ShiftRight", "shift amount 17 is not in [0, 16]"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      LocalTensor<uint16_t> u = t.ReinterpretCast<uint16_t>();
      ShiftRight(u, u, uint16_t(17), 64);
    });
  });
  ExpectError("param_compare_int32_eq_only_2201", {"Compare", "int32_t supports only CMPMODE::EQ"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      LocalTensor<int32_t> u = t.ReinterpretCast<int32_t>();
      Compare(t[1024].ReinterpretCast<uint8_t>(), u, u[64], CMPMODE::LT, 64);
    });
  });
#else
  ExpectOk("param_shift_amount_over_width_3510", [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      LocalTensor<int16_t> u = t.ReinterpretCast<int16_t>();
      Duplicate(u, int16_t(-5), 64);
      ShiftRight(u, u, int16_t(17), 64);
      if (u.GetValue(3) != -1) throw std::runtime_error("arith shift past width must give -1");
      LocalTensor<uint16_t> w = t.ReinterpretCast<uint16_t>();
      Duplicate(w, uint16_t(0xFFFF), 64);
      ShiftLeft(w, w, uint16_t(20), 64);
      if (w.GetValue(3) != 0) throw std::runtime_error("logical shift past width must give 0");
    });
  });
#endif
  ExpectOk("param_compare_int32_eq_ok", [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      LocalTensor<int32_t> u = t.ReinterpretCast<int32_t>();
      Duplicate(u, int32_t(3), 128);
      Compare(t[1024].ReinterpretCast<uint8_t>(), u, u[64], CMPMODE::EQ, 64);
    });
  });
  ExpectError("param_select_mode", {"Select", "VSEL_TENSOR_TENSOR_MODE", "got mode 0"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Duplicate(t, 1.0f, 256);
      Select(t, t[256].ReinterpretCast<uint8_t>(), t[64], t[128], SELMODE::VSEL_CMPMASK_SPR, 64);
    });
  });
  ExpectError("param_select_scalar_mode", {"Select", "VSEL_TENSOR_SCALAR_MODE", "got mode 2"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      Duplicate(t, 1.0f, 256);
      Select(t, t[256].ReinterpretCast<uint8_t>(), t[64], 0.0f, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);
    });
  });
#if __NPU_ARCH__ == 3510
  ExpectError("param_div_int_by_zero_3510", {"Div", "division by zero"}, [&] {
    inQueue([](LocalTensor<float> t, GlobalTensor<float>) {
      LocalTensor<int32_t> u = t.ReinterpretCast<int32_t>();
      Duplicate(u, int32_t(0), 128);
      Div(u, u, u[64], 64);
    });
  });
#endif
}

// ---------------------------------------------------------------- queues
void TestQueues() {
  auto withQueues = [](auto body) {
    Run1([body] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> a, b;
      pipe.InitBuffer(a, 2, 256);
      pipe.InitBuffer(b, 1, 256);
      body(a, b);
    });
  };
  using Q = TQue<TPosition::VECIN, 1>;
  ExpectError("que_alloc_none_idle", {"TQue::AllocTensor", "no idle buffer", "all 2 blocks"}, [&] {
    withQueues([](Q& a, Q&) {
      a.AllocTensor<float>();
      a.AllocTensor<float>();
      a.AllocTensor<float>();
    });
  });
  ExpectError("que_enque_foreign", {"TQue::EnQue", "foreign"}, [&] {
    withQueues([](Q& a, Q& b) {
      LocalTensor<float> x = a.AllocTensor<float>();
      b.EnQue(x);
    });
  });
  ExpectError("que_enque_tbuf_tensor_foreign", {"TQue::EnQue", "foreign"}, [&] {
    Run1([] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> a;
      TBuf<TPosition::VECIN> t;
      pipe.InitBuffer(a, 1, 256);
      pipe.InitBuffer(t, 256);
      a.EnQue(t.Get<float>());
    });
  });
  ExpectError("que_enque_queued", {"TQue::EnQue", "already queued"}, [&] {
    withQueues([](Q& a, Q&) {
      LocalTensor<float> x = a.AllocTensor<float>();
      a.EnQue(x);
      a.EnQue(x);
    });
  });
  ExpectError("que_enque_freed", {"TQue::EnQue", "was freed"}, [&] {
    withQueues([](Q& a, Q&) {
      LocalTensor<float> x = a.AllocTensor<float>();
      LocalTensor<float> keep = x;
      a.FreeTensor(x);
      a.EnQue(keep);
    });
  });
  ExpectError("que_enque_beyond_depth", {"TQue::EnQue", "beyond depth 1"}, [&] {
    withQueues([](Q& a, Q&) {
      LocalTensor<float> x = a.AllocTensor<float>();
      LocalTensor<float> y = a.AllocTensor<float>();
      a.EnQue(x);
      a.EnQue(y);
    });
  });
  ExpectError("que_deque_empty", {"TQue::DeQue", "empty queue"}, [&] {
    withQueues([](Q& a, Q&) { a.DeQue<float>(); });
  });
  ExpectError("que_free_foreign", {"TQue::FreeTensor", "foreign"}, [&] {
    withQueues([](Q& a, Q& b) {
      LocalTensor<float> x = a.AllocTensor<float>();
      b.FreeTensor(x);
    });
  });
  ExpectError("que_free_queued", {"TQue::FreeTensor", "is queued"}, [&] {
    withQueues([](Q& a, Q&) {
      LocalTensor<float> x = a.AllocTensor<float>();
      a.EnQue(x);
      a.FreeTensor(x);
    });
  });
  ExpectError("que_free_freed", {"TQue::FreeTensor", "already freed"}, [&] {
    withQueues([](Q& a, Q&) {
      LocalTensor<float> x = a.AllocTensor<float>();
      LocalTensor<float> keep = x;
      a.FreeTensor(x);
      a.FreeTensor(keep);
    });
  });
  ExpectError("que_stale_tensor_vector", {"Adds", "stale tensor"}, [&] {
    withQueues([](Q& a, Q&) {
      LocalTensor<float> x = a.AllocTensor<float>();
      LocalTensor<float> keep = x;
      a.FreeTensor(x);
      Adds(keep, keep, 1.0f, 8);
    });
  });
  ExpectError("que_stale_tensor_dma", {"DataCopy(UB->UB)", "stale tensor"}, [&] {
    withQueues([](Q& a, Q& b) {
      LocalTensor<float> x = a.AllocTensor<float>();
      LocalTensor<float> y = b.AllocTensor<float>();
      LocalTensor<float> keep = x;
      a.FreeTensor(x);
      DataCopy(y, keep, 8);
    });
  });
  ExpectError("que_stale_tensor_after_tpipe", {"Duplicate", "stale tensor"}, [&] {
    Run1([] {
      LocalTensor<float> keep;
      {
        TPipe pipe;
        TBuf<TPosition::VECCALC> t;
        pipe.InitBuffer(t, 256);
        keep = t.Get<float>();
      }
      TPipe pipe2;
      Duplicate(keep, 0.0f, 8);
    });
  });
  ExpectError("que_blocks_held_at_exit", {"block end", "still holds 1 of its 2 blocks"}, [&] {
    withQueues([](Q& a, Q&) { a.AllocTensor<float>(); });
  });
  ExpectError("que_blocks_queued_at_exit", {"block end", "still holds"}, [&] {
    withQueues([](Q& a, Q&) { a.EnQue(a.AllocTensor<float>()); });
  });
  ExpectError("que_uninitialised_tensor", {"Duplicate", "uninitialised LocalTensor"}, [&] {
    Run1([] {
      LocalTensor<float> x;
      Duplicate(x, 0.0f, 8);
    });
  });
  ExpectError("que_before_initbuffer", {"TQue::AllocTensor", "before TPipe::InitBuffer"}, [&] {
    Run1([] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      q.AllocTensor<float>();
    });
  });
  ExpectOk("que_state_queries", [&] {
    withQueues([](Q& a, Q&) {
      if (!a.HasIdleBuffer() || a.HasTensorInQue() || !a.VacantInQue() || a.GetTensorCountInQue() != 0) {
        throw std::runtime_error("initial state");
      }
      LocalTensor<float> x = a.AllocTensor<float>();
      a.EnQue(x);
      if (!a.HasTensorInQue() || a.VacantInQue() || a.GetTensorCountInQue() != 1 || !a.HasIdleBuffer()) {
        throw std::runtime_error("after EnQue");
      }
      LocalTensor<float> y = a.AllocTensor<float>();
      if (a.HasIdleBuffer()) throw std::runtime_error("after 2nd Alloc");
      LocalTensor<float> z = a.DeQue<float>();
      a.FreeTensor(z);
      a.FreeTensor(y);
    });
  });
}

// ---------------------------------------------------------------- flags
void TestFlags() {
  ExpectError("flag_wait_without_set", {"WaitFlag", "without a matching SetFlag", "MTE2_V"}, [] {
    Run1([] {
      TPipe pipe;
      WaitFlag<HardEvent::MTE2_V>(0);
    });
  });
  ExpectError("flag_set_twice", {"SetFlag", "twice", "V_MTE3"}, [] {
    Run1([] {
      TPipe pipe;
      SetFlag<HardEvent::V_MTE3>(1);
      SetFlag<HardEvent::V_MTE3>(1);
    });
  });
  ExpectError("flag_id_out_of_range", {"SetFlag", "event id 8", "not in 0..7"}, [] {
    Run1([] { SetFlag<HardEvent::MTE2_V>(8); });
  });
  ExpectError("flag_id_negative", {"WaitFlag", "event id -1"}, [] { Run1([] { WaitFlag<HardEvent::MTE2_V>(-1); }); });
  ExpectError("flag_non_vector_event", {"SetFlag", "HardEvent::M_V is not a vector-core event"}, [] {
    Run1([] { SetFlag<HardEvent::M_V>(0); });
  });
  ExpectError("flag_fetch_non_vector_event", {"FetchEventID", "HardEvent::MTE1_MTE2 is not a vector-core event"}, [] {
    Run1([] {
      TPipe pipe;
      pipe.FetchEventID(HardEvent::MTE1_MTE2);
    });
  });
  ExpectError("flag_pending_at_exit", {"block end", "SetFlag<HardEvent::S_V>(3) is still pending"}, [] {
    Run1([] { SetFlag<HardEvent::S_V>(3); });
  });
  ExpectOk("flag_set_wait_pairs", [] {
    Run1([] {
      TPipe pipe;
      const HardEvent all[] = {HardEvent::MTE2_V, HardEvent::V_MTE2, HardEvent::MTE3_V, HardEvent::V_MTE3};
      (void)all;
      SetFlag<HardEvent::MTE2_V>(0);
      SetFlag<HardEvent::MTE2_V>(1);
      WaitFlag<HardEvent::MTE2_V>(1);
      WaitFlag<HardEvent::MTE2_V>(0);
      SetFlag<HardEvent::S_MTE3>(0);
      WaitFlag<HardEvent::S_MTE3>(0);
      SetFlag<HardEvent::MTE3_MTE2>(7);
      WaitFlag<HardEvent::MTE3_MTE2>(7);
      SetFlag<HardEvent::V_V>(2);
      WaitFlag<HardEvent::V_V>(2);
      PipeBarrier<PIPE_V>();
      PipeBarrier<PIPE_MTE2>();
      PipeBarrier<PIPE_MTE3>();
      PipeBarrier<PIPE_ALL>();
    });
  });
  ExpectError("flag_alloc_event_exhausted", {"AllocEventID", "all 8 ids of HardEvent::MTE2_V"}, [] {
    Run1([] {
      TPipe pipe;
      for (int i = 0; i < 9; ++i) pipe.AllocEventID<HardEvent::MTE2_V>();
    });
  });
  ExpectError("flag_release_unallocated", {"ReleaseEventID", "was not allocated"}, [] {
    Run1([] {
      TPipe pipe;
      pipe.ReleaseEventID<HardEvent::V_MTE3>(2);
    });
  });
  ExpectOk("flag_alloc_release_fetch", [] {
    Run1([] {
      TPipe pipe;
      TEventID a = pipe.AllocEventID<HardEvent::MTE2_V>();
      TEventID b = pipe.AllocEventID<HardEvent::MTE2_V>();
      TEventID f = pipe.FetchEventID(HardEvent::MTE2_V);
      if (a != 0 || b != 1 || f != 2) throw std::runtime_error("ids");
      pipe.ReleaseEventID<HardEvent::MTE2_V>(a);
      if (pipe.FetchEventID(HardEvent::MTE2_V) != 0) throw std::runtime_error("fetch after release");
      if (GetTPipePtr() != &pipe) throw std::runtime_error("GetTPipePtr");
    });
  });
  ExpectError("flag_pipebarrier_s", {"PipeBarrier", "PIPE_S"}, [] { Run1([] { PipeBarrier<PIPE_S>(); }); });
  ExpectError("flag_pipebarrier_cube_pipe", {"PipeBarrier", "not a vector-core pipe"}, [] {
    Run1([] { PipeBarrier<PIPE_M>(); });
  });
  ExpectError("flag_gettpipeptr_without_pipe", {"GetTPipePtr", "no live TPipe"}, [] { Run1([] { GetTPipePtr(); }); });
}

// ---------------------------------------------------------------- sync (hazard model)
struct TableKernel {
  // DMA a table into a TBuf<VECIN>, then a V op reads it.
  static void Run(float* gm, int variant) {
    Run1([gm, variant] {
      TPipe pipe;
      TBuf<TPosition::VECIN> table;
      TBuf<TPosition::VECCALC> work;
      pipe.InitBuffer(table, 256);
      pipe.InitBuffer(work, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm), 64);
      LocalTensor<float> t = table.Get<float>();
      LocalTensor<float> w = work.Get<float>();
      DataCopy(t, g, 64);
      if (variant == 1) {
        TEventID id = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
        SetFlag<HardEvent::MTE2_V>(id);
        WaitFlag<HardEvent::MTE2_V>(id);
      } else if (variant == 2) {
        SetFlag<HardEvent::MTE2_S>(0);
        WaitFlag<HardEvent::MTE2_S>(0);
      } else if (variant == 3) {
        PipeBarrier<PIPE_ALL>();
      } else if (variant == 4) {
        SetFlag<HardEvent::MTE2_V>(0);  // set but waited for only after the V op
      }
      Adds(w, t, 1.0f, 64);
      if (variant == 4) WaitFlag<HardEvent::MTE2_V>(0);
    });
  }
};

void TestSync() {
  std::vector<float> gm(64, 2.0f), out(1024, 0.0f);
  amct_sim::GmScope scope{{gm.data(), gm.size() * 4, false}, {out.data(), out.size() * 4, true}};
  ExpectError("sync_tbuf_dma_to_v_without_flag", {"Adds", "sync", "pipe V reads", "MTE2 op #1", "HardEvent::MTE2_V"},
              [&] { TableKernel::Run(gm.data(), 0); });
  ExpectOk("sync_tbuf_dma_to_v_with_mte2_v_flag", [&] { TableKernel::Run(gm.data(), 1); });
  ExpectOk("sync_tbuf_dma_then_wait_mte2_s_orders_all", [&] { TableKernel::Run(gm.data(), 2); });
  ExpectOk("sync_tbuf_dma_pipe_barrier_all", [&] { TableKernel::Run(gm.data(), 3); });
  ExpectError("sync_flag_waited_too_late", {"Adds", "sync", "MTE2_V"}, [&] { TableKernel::Run(gm.data(), 4); });

  auto tbufOut = [&](int variant) {
    Run1([&, variant] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> work;
      pipe.InitBuffer(work, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out.data()), 64);
      LocalTensor<float> w = work.Get<float>();
      Duplicate(w, 5.0f, 64);
      if (variant >= 1) {
        SetFlag<HardEvent::V_MTE3>(0);
        WaitFlag<HardEvent::V_MTE3>(0);
      }
      DataCopy(g, w, 64);
      if (variant == 2) {
        SetFlag<HardEvent::MTE3_V>(0);
        WaitFlag<HardEvent::MTE3_V>(0);
      }
      if (variant >= 1) Duplicate(w, 6.0f, 64);  // reuse after the store
    });
  };
  ExpectError("sync_v_to_mte3_without_flag", {"DataCopy(UB->GM)", "pipe MTE3 reads", "HardEvent::V_MTE3"},
              [&] { tbufOut(0); });
  ExpectError("sync_mte3_to_v_reuse_without_flag", {"Duplicate", "pipe V writes", "read by MTE3",
                                                    "HardEvent::MTE3_V"},
              [&] { tbufOut(1); });
  ExpectOk("sync_tbuf_store_with_flags", [&] { tbufOut(2); });

  auto reload = [&](int variant) {
    Run1([&, variant] {
      TPipe pipe;
      TBuf<TPosition::VECIN> table;
      TBuf<TPosition::VECCALC> work;
      pipe.InitBuffer(table, 256);
      pipe.InitBuffer(work, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm.data()), 64);
      LocalTensor<float> t = table.Get<float>();
      LocalTensor<float> w = work.Get<float>();
      DataCopy(t, g, 64);
      SetFlag<HardEvent::MTE2_V>(0);
      WaitFlag<HardEvent::MTE2_V>(0);
      Adds(w, t, 1.0f, 64);
      if (variant == 1) {
        SetFlag<HardEvent::V_MTE2>(0);
        WaitFlag<HardEvent::V_MTE2>(0);
      }
      DataCopy(t, g, 64);  // reload over data V read
      SetFlag<HardEvent::MTE2_V>(0);
      WaitFlag<HardEvent::MTE2_V>(0);
    });
  };
  ExpectError("sync_v_to_mte2_reuse_without_flag", {"DataCopy(GM->UB)", "pipe MTE2 writes", "read by V",
                                                    "HardEvent::V_MTE2"},
              [&] { reload(0); });
  ExpectOk("sync_v_to_mte2_reuse_with_flag", [&] { reload(1); });

  auto mte2Waw = [&](bool barrier) {
    Run1([&, barrier] {
      TPipe pipe;
      TBuf<TPosition::VECIN> table;
      pipe.InitBuffer(table, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm.data()), 64);
      LocalTensor<float> t = table.Get<float>();
      DataCopy(t, g, 64);
      if (barrier) PipeBarrier<PIPE_MTE2>();
      DataCopy(t[16], g, 32);
    });
  };
  ExpectError("sync_overlapping_mte2_writes_need_barrier", {"DataCopy(GM->UB)", "PipeBarrier<PIPE_MTE2>"},
              [&] { mte2Waw(false); });
  ExpectOk("sync_overlapping_mte2_writes_with_barrier", [&] { mte2Waw(true); });

  auto gmRoundTrip = [&](bool flag) {
    Run1([&, flag] {
      TPipe pipe;
      TQue<TPosition::VECOUT, 1> qo;
      TQue<TPosition::VECIN, 1> qi;
      pipe.InitBuffer(qo, 1, 256);
      pipe.InitBuffer(qi, 1, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out.data()), 64);
      LocalTensor<float> o = qo.AllocTensor<float>();
      Duplicate(o, 7.0f, 64);
      qo.EnQue(o);
      o = qo.DeQue<float>();
      DataCopy(g, o, 64);
      qo.FreeTensor(o);
      if (flag) {
        SetFlag<HardEvent::MTE3_MTE2>(0);
        WaitFlag<HardEvent::MTE3_MTE2>(0);
      }
      LocalTensor<float> i = qi.AllocTensor<float>();
      DataCopy(i, g, 64);  // read back what this block wrote
      qi.EnQue(i);
      i = qi.DeQue<float>();
      if (i.GetValue(9) != 7.0f) throw std::runtime_error("round trip value");
      qi.FreeTensor(i);
    });
  };
  ExpectError("sync_gm_mte3_to_mte2_without_flag", {"DataCopy(GM->UB)", "GM bytes", "HardEvent::MTE3_MTE2"},
              [&] { gmRoundTrip(false); });
  ExpectOk("sync_gm_mte3_to_mte2_with_flag", [&] { gmRoundTrip(true); });

  ExpectOk("sync_check_disabled_by_env", [&] {
    setenv("AMCT_SIM_CHECK_SYNC", "0", 1);
    try {
      TableKernel::Run(gm.data(), 0);
    } catch (...) {
      unsetenv("AMCT_SIM_CHECK_SYNC");
      throw;
    }
    unsetenv("AMCT_SIM_CHECK_SYNC");
  });
  ExpectOk("sync_scalar_access_needs_no_flags", [&] {
    Run1([&] {
      TPipe pipe;
      TBuf<TPosition::VECIN> table;
      TBuf<TPosition::VECCALC> work;
      pipe.InitBuffer(table, 256);
      pipe.InitBuffer(work, 256);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm.data()), 64);
      LocalTensor<float> t = table.Get<float>();
      LocalTensor<float> w = work.Get<float>();
      DataCopy(t, g, 64);
      SetFlag<HardEvent::MTE2_S>(0);
      WaitFlag<HardEvent::MTE2_S>(0);
      float s = 0;
      for (uint32_t k = 0; k < 64; ++k) s += t.GetValue(k);  // S reads after MTE2 (auto-sync)
      Duplicate(w, s, 64);                                    // V
      w.SetValue(0, 1.0f);                                    // S writes after V
      if (w.GetValue(1) != 128.0f) throw std::runtime_error("sum");
    });
  });
}

// ---------------------------------------------------------------- TQue pipeline (positive)
// Double-buffered CopyIn/Compute/CopyOut over many tiles, y = x * 2 + 1, then half round trip.
void PipelineKernel(const float* x, float* y, uint32_t n, uint32_t tile, int bufferNum) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> inQ;
  TQue<TPosition::VECOUT, 1> outQ;
  TBuf<TPosition::VECCALC> tmp;
  pipe.InitBuffer(inQ, bufferNum, tile * sizeof(float));
  pipe.InitBuffer(outQ, bufferNum, tile * sizeof(float));
  pipe.InitBuffer(tmp, tile * sizeof(half));
  const uint32_t blocks = static_cast<uint32_t>(GetBlockNum());
  const uint32_t per = (n + blocks - 1) / blocks;
  const uint32_t begin = static_cast<uint32_t>(GetBlockIdx()) * per;
  const uint32_t end = std::min(n, begin + per);
  if (begin >= end) return;
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(const_cast<float*>(x)) + begin, end - begin);
  gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + begin, end - begin);
  for (uint32_t off = 0; off < end - begin; off += tile) {
    const uint32_t len = std::min(tile, end - begin - off);
    LocalTensor<float> a = inQ.AllocTensor<float>();
    DataCopyPad(a, gx[off], DataCopyExtParams{1, len * 4u, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    inQ.EnQue(a);
    LocalTensor<float> b = inQ.DeQue<float>();
    LocalTensor<float> c = outQ.AllocTensor<float>();
    const int32_t vlen = static_cast<int32_t>((len + 7) / 8 * 8);
    Muls(c, b, 2.0f, vlen);
    Adds(c, c, 1.0f, vlen);
    LocalTensor<half> h = tmp.Get<half>();
    Cast(h, c, RoundMode::CAST_RINT, vlen);
    Cast(c, h, RoundMode::CAST_NONE, vlen);
    outQ.EnQue(c);
    inQ.FreeTensor(b);
    LocalTensor<float> d = outQ.DeQue<float>();
    DataCopyPad(gy[off], d, DataCopyExtParams{1, len * 4u, 0, 0, 0});
    outQ.FreeTensor(d);
  }
}

void TestPipeline() {
  const uint32_t n = 100003;
  std::vector<float> x(n), y(n, -1.0f);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) * 0.25f - 100.0f;
  amct_sim::GmScope scope{{x.data(), n * 4ull, false}, {y.data(), n * 4ull, true}};
  for (int bufs = 1; bufs <= 2; ++bufs) {
    const std::string name = "pipeline_tque_copyin_compute_copyout_buffers_" + std::to_string(bufs);
    if (!ExpectOk(name, [&] {
          simtest::LaunchF("pipeline_kernel", 7, [&] { PipelineKernel(x.data(), y.data(), n, 1000, bufs); });
        })) {
      continue;
    }
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; ++i) {
      const float want = static_cast<float>(half(x[i] * 2.0f + 1.0f));
      if (y[i] != want) {
        ok = false;
        simtest::Failed(name + "_values", "y[" + std::to_string(i) + "] = " + std::to_string(y[i]));
      }
    }
    if (ok) simtest::Pass(name + "_values");
  }
}

// ---------------------------------------------------------------- DataCopy / DataCopyPad semantics
void TestDataCopySemantics() {
  const uint32_t poisonBits = 0xFFFFFFFFu;
  // A padded DataCopyPad: 3 rows of 47 floats, GM pitch 64 floats.
  std::vector<float> src(3 * 64), dst(3 * 64, -7.0f);
  for (uint32_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) + 0.5f;
  amct_sim::GmScope scope{{src.data(), src.size() * 4, false}, {dst.data(), dst.size() * 4, true}};
  std::vector<uint32_t> ub(3 * 48 + 8);
  ExpectOk("dcp_spec_example_3x47_pitch64", [&] {
    Run1([&] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 1024);
      GlobalTensor<float> gs, gd;
      gs.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(src.data()), src.size());
      gd.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(dst.data()), dst.size());
      LocalTensor<float> t = q.AllocTensor<float>();
      DataCopyPad(t, gs, DataCopyExtParams{3, 188, 68, 0, 0}, DataCopyPadExtParams<float>{true, 0, 1, 0.0f});
      q.EnQue(t);
      t = q.DeQue<float>();
      LocalTensor<uint32_t> u = t.ReinterpretCast<uint32_t>();
      for (uint32_t i = 0; i < ub.size(); ++i) ub[i] = u.GetValue(i);
      SetFlag<HardEvent::V_MTE3>(0);  // t is a VECIN block stored directly: order V (none) -> MTE3
      WaitFlag<HardEvent::V_MTE3>(0);
      DataCopyPad(gd, t, DataCopyExtParams{3, 188, 0, 68, 0});
      q.FreeTensor(t);
    });
  });
  bool ok = true;
  for (uint32_t r = 0; r < 3; ++r) {
    for (uint32_t k = 0; k < 47; ++k) ok = ok && simtest::BitsFloat(ub[r * 48 + k]) == src[r * 64 + k];
    ok = ok && ub[r * 48 + 47] == 0u;  // bytes 188..191 = 0.0f
  }
  ok = ok && ub[144] == poisonBits;  // beyond the 3 slots: untouched (poison)
  Check("dcp_spec_example_ub_layout", ok, "UB rows at 0/192/384 with R pad 0.0f");
  ok = true;
  for (uint32_t r = 0; r < 3; ++r) {
    for (uint32_t k = 0; k < 64; ++k) {
      const float want = k < 47 ? src[r * 64 + k] : -7.0f;
      ok = ok && dst[r * 64 + k] == want;
    }
  }
  Check("dcp_spec_example_back_to_gm_pitch64", ok, "UB->GM wrote exactly 188 bytes per row at pitch 256 B");

  // L/R pads with a pad value, half.
  std::vector<uint16_t> hs(64);
  for (uint32_t i = 0; i < 64; ++i) hs[i] = static_cast<uint16_t>(0x3C00 + i);
  std::vector<uint16_t> hub(64);
  amct_sim::GmScope scope2{{hs.data(), hs.size() * 2, false}};
  ExpectOk("dcp_left_right_pads_half", [&] {
    Run1([&] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 128);
      GlobalTensor<half> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(hs.data()), 64);
      LocalTensor<half> t = q.AllocTensor<half>();
      // 2 rows of 5 halves, GM gap 6 bytes, L = 2, R = 3: W = roundup32(4 + 10 + 6) = 32, dstStride 1 block
      DataCopyPad(t, g, DataCopyExtParams{2, 10, 6, 1, 0}, DataCopyPadExtParams<half>{true, 2, 3, half(-2.0f)});
      q.EnQue(t);
      t = q.DeQue<half>();
      LocalTensor<uint16_t> u = t.ReinterpretCast<uint16_t>();
      for (uint32_t i = 0; i < 64; ++i) hub[i] = u.GetValue(i);
      q.FreeTensor(t);
    });
  });
  ok = true;
  const uint16_t pad = 0xC000;  // -2.0
  for (uint32_t r = 0; r < 2; ++r) {
    const uint32_t base = r * 32;  // slot W = 32 B = 16 halves, + 32 B gap
    for (uint32_t k = 0; k < 16; ++k) {
      uint16_t want = pad;
      if (k >= 2 && k < 7) want = hs[r * 8 + (k - 2)];
      ok = ok && hub[base + k] == want;
    }
    for (uint32_t k = 16; k < 32; ++k) ok = ok && hub[base + k] == 0xFFFF;  // dstStride gap untouched
  }
  Check("dcp_left_right_pads_layout", ok, "[L pad][data][R pad][pad value to W], gaps untouched");

  // Dummy = first element (L = R = 0, isPad false), and L > 0 without isPad = poison.
  std::vector<uint32_t> dub(24);
  ExpectOk("dcp_dummy_first_element", [&] {
    Run1([&] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 128);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(src.data()), src.size());
      LocalTensor<float> t = q.AllocTensor<float>();
      DataCopyPad(t, g[10], DataCopyExtParams{2, 20, 12, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 9.0f});
      DataCopyPad(t[16], g[10], DataCopyExtParams{1, 20, 0, 0, 0}, DataCopyPadExtParams<float>{false, 1, 0, 9.0f});
      q.EnQue(t);
      t = q.DeQue<float>();
      LocalTensor<uint32_t> u = t.ReinterpretCast<uint32_t>();
      for (uint32_t i = 0; i < 24; ++i) dub[i] = u.GetValue(i);
      q.FreeTensor(t);
    });
  });
  ok = true;
  for (uint32_t r = 0; r < 2; ++r) {
    const float first = src[10 + r * 8];
    for (uint32_t k = 0; k < 8; ++k) {
      const float want = k < 5 ? src[10 + r * 8 + k] : first;
      ok = ok && simtest::BitsFloat(dub[r * 8 + k]) == want;
    }
  }
  Check("dcp_dummy_repeats_first_element", ok, "slot elements 5..7 repeat element 0 of the row");
  ok = dub[16] == poisonBits && simtest::BitsFloat(dub[17]) == src[10] && dub[22] == poisonBits &&
       dub[23] == poisonBits;
  Check("dcp_pad_without_ispad_is_undefined_poison", ok, "L pad and tail are poison when isPad is false");

  // UB -> GM partial blocks with a UB src stride, and NOPs.
  std::vector<float> o(64, -1.0f);
  amct_sim::GmScope scope3{{o.data(), o.size() * 4, true}};
  ExpectOk("dcp_ub_to_gm_partial_blocks", [&] {
    Run1([&] {
      TPipe pipe;
      TQue<TPosition::VECOUT, 1> q;
      pipe.InitBuffer(q, 1, 512);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(o.data()), o.size());
      LocalTensor<float> t = q.AllocTensor<float>();
      for (uint32_t i = 0; i < 128; ++i) t.SetValue(i, static_cast<float>(i));
      q.EnQue(t);
      t = q.DeQue<float>();
      // 3 rows of 5 floats: UB rows at 0, 64 B, 128 B (roundup32(20) + 32 * 1); GM rows at 0, 28 B, 56 B
      DataCopyPad(g, t, DataCopyExtParams{3, 20, 1, 8, 0});
      DataCopyPad(g[40], t, DataCopyExtParams{0, 20, 0, 0, 0});  // NOP: blockCount 0
      DataCopyPad(g[40], t, DataCopyExtParams{4, 0, 0, 0, 0});   // NOP: blockLen 0
      DataCopy(g[40], t, DataCopyParams{0, 1, 0, 0});            // NOP
      q.FreeTensor(t);
    });
  });
  ok = true;
  for (uint32_t i = 0; i < 64; ++i) {
    float want = -1.0f;
    for (uint32_t r = 0; r < 3; ++r) {
      if (i >= r * 7 && i < r * 7 + 5) want = static_cast<float>(r * 16 + (i - r * 7));
    }
    ok = ok && o[i] == want;
  }
  Check("dcp_ub_to_gm_exact_bytes_and_nops", ok, "exactly blockLen bytes per row; NOPs write nothing");

  // DataCopy with DataCopyParams gaps, UB -> UB copy.
  std::vector<float> gx(256);
  for (uint32_t i = 0; i < 256; ++i) gx[i] = static_cast<float>(i);
  std::vector<float> got(64);
  amct_sim::GmScope scope4{{gx.data(), gx.size() * 4, false}};
  ExpectOk("dc_params_gaps_and_ub_to_ub", [&] {
    Run1([&] {
      TPipe pipe;
      TQue<TPosition::VECIN, 1> q;
      TBuf<TPosition::VECCALC> w;
      pipe.InitBuffer(q, 1, 512);
      pipe.InitBuffer(w, 512);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gx.data()), gx.size());
      LocalTensor<float> t = q.AllocTensor<float>();
      Duplicate(t, -3.0f, 128);
      SetFlag<HardEvent::V_MTE2>(0);  // V wrote the block the DMA overwrites
      WaitFlag<HardEvent::V_MTE2>(0);
      // 2 blocks of 1 x 32 B; GM gap 1 block (8 floats), UB gap 2 blocks.
      DataCopy(t, g, DataCopyParams{2, 1, 1, 2});
      q.EnQue(t);
      t = q.DeQue<float>();
      LocalTensor<float> u = w.Get<float>();
      DataCopy(u, t, 64);
      for (uint32_t i = 0; i < 64; ++i) got[i] = u.GetValue(i);
      q.FreeTensor(t);
    });
  });
  ok = true;
  for (uint32_t i = 0; i < 64; ++i) {
    float want = -3.0f;
    if (i < 8) want = static_cast<float>(i);
    if (i >= 24 && i < 32) want = static_cast<float>(16 + i - 24);
    ok = ok && got[i] == want;
  }
  Check("dc_params_gaps_layout", ok, "block i: GM 32*i*(len+srcGap) -> UB 32*i*(len+dstGap)");
  ExpectError("dc_gm_to_veccalc_rejected", {"DataCopy(GM->UB)", "VECCALC", "TBuf<TPosition::VECIN>"}, [&] {
    Run1([&] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> w;
      pipe.InitBuffer(w, 512);
      GlobalTensor<float> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gx.data()), gx.size());
      LocalTensor<float> u = w.Get<float>();
      DataCopy(u, g, 64);
    });
  });

  // UB -> UB with DataCopyParams: 3 blocks of 2 data blocks (16 floats), source gap 1 data block,
  // destination gap 3; the bytes between the destination blocks keep their values.
  std::vector<float> strided(160);
  ExpectOk("dc_ub_to_ub_strided", [&] {
    Run1([&] {
      TPipe pipe;
      TBuf<TPosition::VECIN> in;
      TBuf<TPosition::VECCALC> out;
      pipe.InitBuffer(in, 512);
      pipe.InitBuffer(out, 640);
      LocalTensor<float> a = in.Get<float>();
      LocalTensor<float> b = out.Get<float>();
      CreateVecIndex(a, 0.0f, 128);
      Duplicate(b, -1.0f, 160);
      DataCopy(b, a, DataCopyParams{3, 2, 1, 3});
      SetFlag<HardEvent::V_S>(0);
      WaitFlag<HardEvent::V_S>(0);
      for (uint32_t i = 0; i < 160; ++i) strided[i] = b.GetValue(i);
    });
  });
  ok = true;
  for (uint32_t i = 0; i < 160; ++i) {
    const uint32_t block = i / 40, at = i % 40;  // destination pitch: 2 + 3 data blocks = 40 floats
    const float want = block < 3 && at < 16 ? static_cast<float>(block * 24 + at) : -1.0f;  // source pitch 24
    ok = ok && strided[i] == want;
  }
  Check("dc_ub_to_ub_strided_layout", ok, "block i: src 32*i*(len+srcGap) -> dst 32*i*(len+dstGap)");
  auto ubToUb = [](uint32_t dstFloats, uint32_t dstOffset, DataCopyParams p) {
    return [=] {
      Run1([=] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        DataCopy(buf.GetWithOffset<float>(dstFloats, dstOffset), buf.GetWithOffset<float>(256, 0), p);
      });
    };
  };
  ExpectError("dc_ub_to_ub_strided_dst_beyond_view", {"DataCopy(UB->UB)", "bounds", "dst"},
              ubToUb(64, 2048, DataCopyParams{3, 2, 0, 2}));  // needs 2 * 128 + 64 = 320 B; the view holds 256
  ExpectError("dc_ub_to_ub_strided_block_count", {"DataCopy(UB->UB)", "blockCount 4096"},
              ubToUb(64, 2048, DataCopyParams{4096, 1, 0, 0}));
  ExpectError("dc_ub_to_ub_strided_overlap", {"DataCopy(UB->UB)", "partially overlap"},
              ubToUb(256, 256, DataCopyParams{2, 8, 0, 0}));  // src bytes [0, 512), dst [256, 768)
  ExpectOk("dc_ub_to_ub_strided_nop", ubToUb(8, 2048, DataCopyParams{0, 1, 0, 0}));
}

// ---------------------------------------------------------------- vector ops
template <class T>
std::vector<T> RunVec(const std::vector<T>& a, const std::vector<T>& b, int op) {
  std::vector<T> out(a.size());
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * 1024);
    LocalTensor<T> x = buf.GetWithOffset<T>(1024 / sizeof(T), 0);
    LocalTensor<T> y = buf.GetWithOffset<T>(1024 / sizeof(T), 1024);
    LocalTensor<T> z = buf.GetWithOffset<T>(1024 / sizeof(T), 2048);
    const int32_t n = static_cast<int32_t>(a.size());
    for (int32_t i = 0; i < n; ++i) {
      x.SetValue(i, a[i]);
      y.SetValue(i, b[i]);
    }
    switch (op) {
      case 0: Add(z, x, y, n); break;
      case 1: Sub(z, x, y, n); break;
      case 2: Mul(z, x, y, n); break;
      case 3: Max(z, x, y, n); break;
      case 4: Min(z, x, y, n); break;
      default: break;
    }
    for (int32_t i = 0; i < n; ++i) out[i] = z.GetValue(i);
  });
  return out;
}

void TestVector() {
  {
    std::vector<float> a(64), b(64);
    for (int i = 0; i < 64; ++i) {
      a[i] = static_cast<float>(i) * 1.5f - 20.0f;
      b[i] = static_cast<float>(64 - i) * 0.75f;
    }
    bool ok = true;
    auto add = RunVec(a, b, 0), sub = RunVec(a, b, 1), mul = RunVec(a, b, 2), mx = RunVec(a, b, 3),
         mn = RunVec(a, b, 4);
    for (int i = 0; i < 64; ++i) {
      ok = ok && add[i] == a[i] + b[i] && sub[i] == a[i] - b[i] && mul[i] == a[i] * b[i] &&
           mx[i] == std::max(a[i], b[i]) && mn[i] == std::min(a[i], b[i]);
    }
    Check("vec_binary_float", ok);
  }
  {
    std::vector<int16_t> a(64), b(64);
    for (int i = 0; i < 64; ++i) {
      a[i] = static_cast<int16_t>(i * 1000 - 30000);
      b[i] = static_cast<int16_t>(i * 7 - 200);
    }
    bool ok = true;
    auto add = RunVec(a, b, 0), mul = RunVec(a, b, 2), mx = RunVec(a, b, 3);
    for (int i = 0; i < 64; ++i) {
      ok = ok && add[i] == static_cast<int16_t>(a[i] + b[i]) && mul[i] == static_cast<int16_t>(a[i] * b[i]) &&
           mx[i] == std::max(a[i], b[i]);
    }
    Check("vec_binary_int16_wraps", ok);
  }
  {
    std::vector<half> a(64), b(64);
    for (int i = 0; i < 64; ++i) {
      a[i] = half(static_cast<float>(i) * 0.1f);
      b[i] = half(3.0f);
    }
    auto add = RunVec(a, b, 0);
    auto mul = RunVec(a, b, 2);
    bool ok = true;
    for (int i = 0; i < 64; ++i) {
      const float fa = static_cast<float>(a[i]);
      ok = ok && add[i].amct_bits == half(fa + 3.0f).amct_bits && mul[i].amct_bits == half(fa * 3.0f).amct_bits;
    }
    Check("vec_binary_half_in_float_rne", ok);
  }
  ExpectOk("vec_scalar_unary_logic_fill_index", [] {
    Run1([] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> buf;
      pipe.InitBuffer(buf, 4096);
      LocalTensor<float> f = buf.GetWithOffset<float>(64, 0);
      LocalTensor<float> g = buf.GetWithOffset<float>(64, 256);
      CreateVecIndex(f, -10.0f, 64);
      if (f.GetValue(63) != 53.0f) throw std::runtime_error("CreateVecIndex float");
      Adds(g, f, 0.5f, 64);
      if (g.GetValue(0) != -9.5f) throw std::runtime_error("Adds");
      Muls(g, f, -2.0f, 64);
      if (g.GetValue(1) != 18.0f) throw std::runtime_error("Muls");
      Maxs(g, f, 0.0f, 64);
      if (g.GetValue(2) != 0.0f || g.GetValue(20) != 10.0f) throw std::runtime_error("Maxs");
      Mins(g, f, 0.0f, 64);
      if (g.GetValue(2) != -8.0f || g.GetValue(20) != 0.0f) throw std::runtime_error("Mins");
      Abs(g, f, 64);
      if (g.GetValue(0) != 10.0f) throw std::runtime_error("Abs");
      Relu(g, f, 64);
      if (g.GetValue(0) != 0.0f || g.GetValue(15) != 5.0f) throw std::runtime_error("Relu");
      Duplicate(g, 4.0f, 64);
      Sqrt(g, g, 64);
      if (g.GetValue(7) != 2.0f) throw std::runtime_error("Sqrt");
      Ln(g, g, 64);
      Exp(g, g, 64);
      if (std::fabs(g.GetValue(7) - 2.0f) > 1e-6f) throw std::runtime_error("Ln/Exp");
      Div(g, f, g, 64);
      if (std::fabs(g.GetValue(0) + 5.0f) > 1e-5f) throw std::runtime_error("Div");

      LocalTensor<int16_t> s = buf.GetWithOffset<int16_t>(128, 512);
      LocalTensor<uint16_t> u = buf.GetWithOffset<uint16_t>(128, 768);
      Duplicate(s, static_cast<int16_t>(0xAAAA), 128);
      ShiftLeft(s, s, int16_t(1), 128);
      if (static_cast<uint16_t>(s.GetValue(5)) != 0xD554) throw std::runtime_error("signed ShiftLeft keeps sign");
      Duplicate(s, int16_t(-16), 128);
      ShiftRight(s, s, int16_t(2), 128);
      if (s.GetValue(5) != -4) throw std::runtime_error("arithmetic ShiftRight");
      Duplicate(u, uint16_t(0x8000), 128);
      ShiftRight(u, u, uint16_t(15), 128);
      if (u.GetValue(5) != 1) throw std::runtime_error("logical ShiftRight");
      Duplicate(u, uint16_t(0x0F0F), 128);
      Not(u, u, 128);
      if (u.GetValue(3) != 0xF0F0) throw std::runtime_error("Not");
      LocalTensor<uint16_t> v = buf.GetWithOffset<uint16_t>(128, 1024);
      Duplicate(v, uint16_t(0x00FF), 128);
      And(v, u, v, 128);
      if (v.GetValue(0) != 0x00F0) throw std::runtime_error("And");
      Or(v, u, v, 128);
      if (v.GetValue(0) != 0xF0F0) throw std::runtime_error("Or");
      LocalTensor<int32_t> i32 = buf.GetWithOffset<int32_t>(64, 1536);
      CreateVecIndex(i32, int32_t(100), 64);
      if (i32.GetValue(9) != 109) throw std::runtime_error("CreateVecIndex int32");
      LocalTensor<half> h = buf.GetWithOffset<half>(128, 2048);
      Duplicate(h, half(1.5f), 128);
      Adds(h, h, half(0.25f), 128);
      if (static_cast<float>(h.GetValue(127)) != 1.75f) throw std::runtime_error("half Adds");
      LocalTensor<bfloat16_t> bf = buf.GetWithOffset<bfloat16_t>(128, 2560);
      Duplicate(bf, bfloat16_t(3.0f), 128);
      if (static_cast<float>(bf.GetValue(3)) != 3.0f) throw std::runtime_error("bf16 Duplicate");
#if __NPU_ARCH__ == 3510
      Add(bf, bf, bf, 128);  // bf16 arithmetic exists on 3510 only
      if (static_cast<float>(bf.GetValue(3)) != 6.0f) throw std::runtime_error("bf16 Add (3510)");
      LocalTensor<int32_t> q = buf.GetWithOffset<int32_t>(64, 3072);
      Duplicate(q, int32_t(-7), 64);
      Duplicate(i32, int32_t(2), 64);
      Div(q, q, i32, 64);
      if (q.GetValue(0) != -3) throw std::runtime_error("int32 Div (3510)");
      LocalTensor<uint8_t> b8 = buf.GetWithOffset<uint8_t>(64, 3584);
      Duplicate(b8, uint8_t(250), 64);
      Adds(b8, b8, uint8_t(10), 64);
      if (b8.GetValue(0) != 4) throw std::runtime_error("uint8 Adds (3510)");
#endif
    });
  });
}

// ---------------------------------------------------------------- Compare / Select
void TestCompareSelect() {
  std::vector<uint8_t> bits(16);
  std::vector<float> sel(128);
  std::vector<uint16_t> hsel(128);
  ExpectOk("compare_select_run", [&] {
    Run1([&] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> buf;
      pipe.InitBuffer(buf, 8192);
      LocalTensor<float> a = buf.GetWithOffset<float>(128, 0);
      LocalTensor<float> b = buf.GetWithOffset<float>(128, 512);
      LocalTensor<uint8_t> m = buf.GetWithOffset<uint8_t>(32, 1024);
      LocalTensor<float> y = buf.GetWithOffset<float>(128, 1536);
      CreateVecIndex(a, 0.0f, 128);  // a[i] = i
      Duplicate(b, 64.0f, 128);
      for (uint32_t i = 0; i < 128; i += 3) b.SetValue(i, -1.0f);  // every third: a > b
      Compare(m, a, b, CMPMODE::LT, 128);                           // bit i = a[i] < b[i]
      for (uint32_t i = 0; i < 16; ++i) bits[i] = m.GetValue(i);
      Select(y, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);
      Compares(m, a, 5.0f, CMPMODE::GE, 64);
      Select(y, m, a, -9.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
      for (uint32_t i = 0; i < 128; ++i) sel[i] = y.GetValue(i);
      LocalTensor<half> ha = buf.GetWithOffset<half>(128, 2048);
      LocalTensor<half> hy = buf.GetWithOffset<half>(128, 2560);
      CreateVecIndex(ha, half(0.0f), 128);
      Compares(m, ha, half(100.0f), CMPMODE::NE, 128);
      Select(hy, m.ReinterpretCast<uint32_t>(), ha, half(7.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, 128);
      for (uint32_t i = 0; i < 128; ++i) hsel[i] = hy.ReinterpretCast<uint16_t>().GetValue(i);
    });
  });
  bool ok = true;
  for (uint32_t i = 0; i < 128; ++i) {
    const bool lt = (i % 3 == 0) ? false : (i < 64);
    ok = ok && (((bits[i / 8] >> (i % 8)) & 1) == (lt ? 1 : 0));
  }
  Check("compare_bit_order_lsb_first", ok, "element i -> bit i%8 of byte i/8");
  Check("compare_bit_order_byte0", bits[0] == 0xB6, "byte 0 = 0b10110110");
  ok = true;
  for (uint32_t i = 0; i < 128; ++i) {
    float want;
    if (i < 64) {
      want = i >= 5 ? static_cast<float>(i) : -9.0f;  // mode 1 overwrote the first 64
    } else {
      const bool lt = (i % 3 == 0) ? false : (i < 64);
      want = lt ? static_cast<float>(i) : (i % 3 == 0 ? -1.0f : 64.0f);
    }
    ok = ok && sel[i] == want;
  }
  Check("select_mode2_and_mode1", ok, "mask bit 1 -> src0, 0 -> src1 / scalar");
  ok = true;
  for (uint32_t i = 0; i < 128; ++i) {
    const uint16_t want = i == 100 ? half(7.0f).amct_bits : half(static_cast<float>(i)).amct_bits;
    ok = ok && hsel[i] == want;
  }
  Check("select_half_uint32_mask", ok);
}

}  // namespace

int main() {
  TestNoGmScope();
  TestUb();
  TestSelectBudget();
  TestAlignment();
  TestBounds();
  TestParameters();
  TestQueues();
  TestFlags();
  TestSync();
  TestPipeline();
  TestDataCopySemantics();
  TestVector();
  TestCompareSelect();
  return simtest::Finish();
}
