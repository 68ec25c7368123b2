// Kernel sim: the CANN >= 9.1 reduction names (ReduceRepeat, ReduceDataBlock; mask before
// repeatTime) give the bits of the older WholeReduce* / BlockReduce* (repeatTime before mask
// for BlockReduce*) on the same data, for count and bit masks; and the version-selected
// wrappers of common/op_kernel/amct_reduce.h equal both.
#include <random>

#ifndef EXPECT_NEW_NAMES
#define EXPECT_NEW_NAMES 0  // the test build has no asc_devkit_version.h: the CANN 9.0 names
#endif

#include "sim_test.h"
#include "amct_reduce.h"

using namespace AscendC;
using simtest::Check;
using simtest::Run1;

namespace {

constexpr int32_t kRep = 4;

// Runs body(dst, src) on 4 repeats of 64 random floats; returns dst's 64 result slots as bits.
template <class Body>
std::vector<uint32_t> Results(Body body) {
  std::vector<uint32_t> out(64);
  Run1([&] {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, db;
    pipe.InitBuffer(sb, kRep * 64 * 4);
    pipe.InitBuffer(db, 64 * 4);
    LocalTensor<float> src = sb.Get<float>();
    std::mt19937 g(7);
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    for (int32_t i = 0; i < kRep * 64; ++i) src.SetValue(i, u(g));
    LocalTensor<float> dst = db.Get<float>();
    Duplicate(dst, 0.0f, 64);
    body(dst, src);
    for (uint32_t i = 0; i < 64; ++i) out[i] = dst.ReinterpretCast<uint32_t>().GetValue(i);
  });
  return out;
}

using L = const LocalTensor<float>&;
const uint64_t kHalves[2] = {0x0F0F0F0F0F0F0F0Full, 0};

void Same(const std::string& name, const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  Check(name, a == b, "results differ");
}

}  // namespace

int main() {
  using amct_kernel::Reduce;
  const auto order = ReduceOrder::ORDER_ONLY_VALUE;
  Same("names_reduce_repeat_sum",
       Results([](L d, L s) { ReduceRepeat<ReduceType::SUM, float, float>(d, s, 64, kRep, 1, 1, 8); }),
       Results([](L d, L s) { WholeReduceSum(d, s, 64, kRep, 1, 1, 8); }));
  Same("names_reduce_repeat_max_value_index",
       Results([](L d, L s) { ReduceRepeat<ReduceType::MAX, float, float>(d, s, 64, kRep, 2, 1, 8); }),
       Results([](L d, L s) { WholeReduceMax(d, s, 64, kRep, 2, 1, 8); }));
  Same("names_reduce_repeat_min_bit_mask",
       Results([&](L d, L s) { ReduceRepeat<ReduceType::MIN, float, float>(d, s, kHalves, kRep, 1, 1, 8, order); }),
       Results([&](L d, L s) { WholeReduceMin(d, s, kHalves, kRep, 1, 1, 8, order); }));
  Same("names_reduce_data_block_sum",
       Results([](L d, L s) { ReduceDataBlock<ReduceType::SUM, float, float>(d, s, 64, kRep, 1, 1, 8); }),
       Results([](L d, L s) { BlockReduceSum(d, s, kRep, 64, 1, 1, 8); }));
  Same("names_reduce_data_block_max_bit_mask",
       Results([&](L d, L s) { ReduceDataBlock<ReduceType::MAX, float, float>(d, s, kHalves, kRep, 1, 1, 8); }),
       Results([&](L d, L s) { BlockReduceMax(d, s, kRep, kHalves, 1, 1, 8); }));
  Same("names_reduce_data_block_min",
       Results([](L d, L s) { ReduceDataBlock<ReduceType::MIN, float, float>(d, s, 32, kRep, 1, 1, 8); }),
       Results([](L d, L s) { BlockReduceMin(d, s, kRep, 32, 1, 1, 8); }));
  Same("names_wrapper_each_repeat_max",
       Results([&](L d, L s) { amct_kernel::ReduceEachRepeat<Reduce::kMax>(d, s, int32_t(64), kRep, 1, 1, 8, order); }),
       Results([&](L d, L s) { WholeReduceMax(d, s, 64, kRep, 1, 1, 8, order); }));
  Same("names_wrapper_each_block_sum_bit_mask",
       Results([&](L d, L s) { amct_kernel::ReduceEachBlock<Reduce::kSum>(d, s, kHalves, kRep, 1, 1, 8); }),
       Results([&](L d, L s) { BlockReduceSum(d, s, kRep, kHalves, 1, 1, 8); }));
  Check("names_wrapper_version_macro", AMCT_KERNEL_REDUCE_NEW_NAMES == EXPECT_NEW_NAMES,
        "amct_reduce.h picked the other set of names");
  return simtest::Finish();
}
