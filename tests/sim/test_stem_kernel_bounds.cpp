// Kernel sim: the stem_indexer kernel bounds what it writes per row by itself. A crafted row
// table (K above the candidates, the row room and kMaxK; candidates above the UB capacity;
// K = 0; an output row too short for the sink and window blocks) must never make it write past
// a row: rows sit 2 * rowLength apart in a sentinel-filled output, and every element outside
// [row start, row start + kSink + K' + kWindow) must keep the sentinel.
#include <algorithm>
#include <random>

#include "sim_test.h"
#include "stem_indexer_kernel.cpp"

using simtest::Check;
using simtest::ExpectOk;

namespace {

constexpr int32_t kSentinel = 0x7EEEEEEE;
constexpr uint32_t kRowLength = 16;  // maxKb of the crafted problem
constexpr uint32_t kMaxLanes = 128;

struct CraftedRow {
  const char* name;
  int64_t candidates;
  int64_t k;
  uint32_t expectWritten;  // kSink + K' + kWindow, or 0
};

void Run(bool strict) {
  const std::vector<CraftedRow> rows = {
      {"k_above_room_and_candidates", 100, 200, kRowLength},  // K' = min(200, 256, 100, 16 - 8) = 8
      {"candidates_above_capacity", 5000, 3, 4 + 3 + 4},      // n' = 128
      {"k_zero", 50, 0, 0},
      {"k_above_max_k", 120, 100000, kRowLength},
  };
  std::mt19937 g(3);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  std::vector<float> dots(rows.size() * kMaxLanes), vbias(kMaxLanes + 16, 0.0f);
  for (float& d : dots) d = u(g);
  std::vector<int64_t> table(rows.size() * amct_stem::kRowFields, 0);
  for (size_t r = 0; r < rows.size(); ++r) {
    int64_t* e = &table[r * amct_stem::kRowFields];
    e[amct_stem::kDotsOffset] = static_cast<int64_t>(r * kMaxLanes);
    e[amct_stem::kBiasOffset] = 0;
    e[amct_stem::kOutOffset] = static_cast<int64_t>(r * 2 * kRowLength);
    e[amct_stem::kCandidates] = rows[r].candidates;
    e[amct_stem::kTopK] = rows[r].k;
  }
  std::vector<int32_t> out(rows.size() * 2 * kRowLength, kSentinel);
  amct_stem::StemTiling t{};
  t.blockNum = 1;
  t.precision = 1;
  t.rowCount = rows.size();
  t.rowsPerCore = rows.size();
  t.rowsLastCore = rows.size();
  t.maxLanes = kMaxLanes;
  t.rowLength = kRowLength;
  amct_sim::GmScope scope{{dots.data(), dots.size() * 4, false},
                          {vbias.data(), vbias.size() * 4, false},
                          {table.data(), table.size() * 8, false},
                          {&t, sizeof(t), false},
                          {out.data(), out.size() * 4, true}};
  amct_sim::SetModes(amct_sim::HardwareModes{false, false, strict});
  const std::string tag = strict ? "stem_bounds_strict_" : "stem_bounds_";
  const bool ran = ExpectOk(tag + "launch", [&] {
    amct_stem_indexer_launch(1, nullptr, reinterpret_cast<uint8_t*>(dots.data()),
                             reinterpret_cast<uint8_t*>(vbias.data()), reinterpret_cast<uint8_t*>(table.data()),
                             reinterpret_cast<uint8_t*>(out.data()), reinterpret_cast<uint8_t*>(&t));
  });
  amct_sim::ResetModes();
  if (!ran) return;
  for (size_t r = 0; r < rows.size(); ++r) {
    const int32_t* row = &out[r * 2 * kRowLength];
    uint32_t written = 0;
    while (written < 2 * kRowLength && row[written] != kSentinel) ++written;
    bool untouched = std::all_of(row + written, row + 2 * kRowLength, [](int32_t v) { return v == kSentinel; });
    bool ascending = std::is_sorted(row, row + written) && std::adjacent_find(row, row + written) == row + written;
    Check(tag + rows[r].name, written == rows[r].expectWritten && untouched && ascending,
          amct_sim::detail::Fmt("wrote %u elements (want %u), rest untouched %d, ascending %d", written,
                                rows[r].expectWritten, untouched, ascending));
  }
}

}  // namespace

int main() {
  Run(false);
  Run(true);
  return simtest::Finish();
}
