// Kernel sim: the stem_indexer kernel stays inside its outputs' rows whatever the plan and the
// lengths say. A crafted metadata table (a section count far above B * Nk, a record spanning past
// the grid, records outside it, a negative one) and out-of-contract lengths (q and kv far above
// maxQb * 128 and maxKb * 128, a prompt shorter than kv: K = 1, and a zero prompt: K = 0) must
// never make it write outside sparse_indices / sparse_seq_len (sentinel guards around both), nor
// past L elements of a row; every written prefix is ascending and holds the sink and window blocks.
// The kernel's own AIC program scores random bf16 queries and keys (one AI core: its AIC and two
// AIVs); the sim's cube DataCopy checks every operand read against the qflat / kflat regions.
// Also: the kernel's Top-K budget (its integer emulation of the fused step) equals the spec's
// formula computed with std::fmaf, for every P <= 3000, every row p in [kStart, P) and six alphas.
#include <algorithm>
#include <cmath>
#include <random>

#include "sim_test.h"

// The kernel is dav-3510 code (KERNEL_3510; its AIC program uses the dav-3510 cube API): on the
// dav-2201 sim this program checks nothing.
#if __NPU_ARCH__ == 3510
#include "stem_indexer_kernel.cpp"

using simtest::Check;
using simtest::ExpectOk;

namespace {

constexpr int32_t kSentinel = 0x7EEEEEEE;
constexpr int64_t kGuard = 64;  // sentinel elements before and after each output
constexpr uint32_t kB = 2, kNq = 32, kNk = 2, kG = kNq / kNk, kMaxQb = 2, kMaxKb = 24;

// docs/stem_indexer.md §5 with the fused step as std::fmaf (the spec's own C++ form).
int64_t SpecBudget(int64_t P, int64_t p, float alpha) {
  int64_t kStart = P;
  if (P >= 56) {
    const bool medium = P < 160;
    const float scaled = static_cast<float>(P) * (medium ? 0.2f : 0.1f);
    kStart = static_cast<int64_t>(std::trunc(scaled + 30.0f));
  }
  const int64_t decay = P - kStart;
  int64_t budget = kStart;
  if (!(p < kStart || decay <= 1)) {
    const float ks = static_cast<float>(kStart);
    const float kEnd = ks * alpha;
    const float t = static_cast<float>(p - kStart) / static_cast<float>(decay - 1);
    const float v = std::fmaf(t, kEnd - ks, ks);
    budget = v < 1.0f ? 1 : std::min<int64_t>(static_cast<int64_t>(std::floor(v)), kStart);
  }
  return std::min<int64_t>(budget, 256);
}

void BudgetMatchesSpec() {
  amct_stem::StemTiling t{};
  t.rateMedium = 0.2f;
  t.rateLarge = 0.1f;
  t.biasMedium = 30;
  t.biasLarge = 30;
  uint64_t checked = 0, wrong = 0;
  std::string first;
  for (float alpha : {0.01f, 0.3f, 0.5f, 0.75f, 0.9f, 1.0f}) {
    t.alpha = alpha;
    for (int64_t P = 0; P <= 3000; ++P) {
      const int64_t kStart = KStart(P, t);
      for (int64_t p = kStart; p < P; ++p) {
        const int64_t got = TopkBudget(P, p, P, P, t), want = SpecBudget(P, p, alpha);
        ++checked;
        if (got != want && wrong++ == 0) {
          first = amct_sim::detail::Fmt("P %lld p %lld alpha %g: %lld, spec %lld", static_cast<long long>(P),
                                        static_cast<long long>(p), alpha, static_cast<long long>(got),
                                        static_cast<long long>(want));
        }
      }
    }
  }
  Check("stem_budget_fused_step", wrong == 0 && checked > 1000000,
        amct_sim::detail::Fmt("%llu of %llu differ; first %s", static_cast<unsigned long long>(wrong),
                              static_cast<unsigned long long>(checked), first.c_str()));
  t.alpha = 0.3f;
  Check("stem_budget_spec_example", TopkBudget(254, 235, 254, 254, t) == 19, "P 254, p 235, alpha 0.3 must give 19");
}

// A metadata record of section s, slot c.
void Record(std::vector<int32_t>& md, uint32_t s, uint32_t c, std::initializer_list<int32_t> words) {
  std::copy(words.begin(), words.end(), md.begin() + amct_stem::kHeaderWords + amct_stem::kRecordWords * (36 * s + c));
}

void Run(bool strict) {
  const std::string tag = strict ? "stem_bounds_strict_" : "stem_bounds_";
  const std::vector<int32_t> qLens{100000, 256}, kvLens{100000, 3072}, prompt{100, 0};
  std::vector<int32_t> md(4096, 0);
  md[0] = 1000;                            // sections: clamped to B * Nk
  Record(md, 0, 0, {0, 0, 0, 99, 0, 0});   // every tile of the grid, and on past its end
  Record(md, 0, 1, {4, 0, 0, 9, 0, 0});    // bn2 >= B * Nk
  Record(md, 0, 2, {0, 7, 0, 0, 9, 0});    // m >= Mt
  Record(md, 0, 3, {-5, 0, 0, 2, 0, 0});   // negative
  std::mt19937 g(3);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  // Random bf16 queries and keys: the kernel's cube scores them (any values: only the bounds are checked).
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<bfloat16_t> qflat, kflat;
  for (size_t i = 0; i < static_cast<size_t>(kB) * kNq * kMaxQb * amct_stem::kDim; ++i) qflat.push_back(bfloat16_t(unit(g)));
  for (size_t i = 0; i < static_cast<size_t>(kB) * kNk * kMaxKb * amct_stem::kDim; ++i) kflat.push_back(bfloat16_t(unit(g)));
  std::vector<float> vbias(kB * kNk * kMaxKb);
  for (float& v : vbias) v = u(g);
  const size_t rows = static_cast<size_t>(kB) * kNq * kMaxQb;
  std::vector<int32_t> out(rows * kMaxKb + 2 * kGuard, kSentinel), seq(rows + 2 * kGuard, kSentinel);
  std::fill(out.begin() + kGuard, out.end() - kGuard, -1);  // the host's fills
  std::fill(seq.begin() + kGuard, seq.end() - kGuard, 0);
  amct_stem::StemTiling t{};
  t.batch = kB;
  t.qHeads = kNq;
  t.kvHeads = kNk;
  t.group = kG;
  t.maxQb = kMaxQb;
  t.maxKb = kMaxKb;
  t.causal = 1;
  t.precision = 1;
  t.aicNum = 1;
  t.subBlocks = 2;
  t.blockNum = 2;
  t.rowLanes = 256;
  t.groupRows = 3;
  t.alpha = 1.0f;
  t.rateMedium = 0.2f;
  t.rateLarge = 0.1f;
  t.biasMedium = 30;
  t.biasLarge = 30;
  t.metadataWords = md.size();
  amct_sim::GmScope scope{{qflat.data(), qflat.size() * 2, false}, {kflat.data(), kflat.size() * 2, false},
                          {vbias.data(), vbias.size() * 4, false},
                          {const_cast<int32_t*>(qLens.data()), 8, false}, {const_cast<int32_t*>(kvLens.data()), 8, false},
                          {const_cast<int32_t*>(prompt.data()), 8, false}, {md.data(), md.size() * 4, false},
                          {&t, sizeof(t), false},                   {out.data(), out.size() * 4, true},
                          {seq.data(), seq.size() * 4, true}};
  amct_sim::SetModes(amct_sim::HardwareModes{false, false, strict});
  auto bytes = [](const void* p) { return reinterpret_cast<uint8_t*>(const_cast<void*>(p)); };
  const bool ran = ExpectOk(tag + "launch", [&] {
    amct_stem_indexer_launch(1, nullptr, bytes(qflat.data()), bytes(kflat.data()), bytes(vbias.data()), bytes(qLens.data()),
                             bytes(kvLens.data()), bytes(prompt.data()), bytes(md.data()), bytes(out.data() + kGuard),
                             bytes(seq.data() + kGuard), bytes(&t));
  });
  amct_sim::ResetModes();
  if (!ran) return;
  auto guarded = [](const std::vector<int32_t>& v) {
    return std::all_of(v.begin(), v.begin() + kGuard, [](int32_t x) { return x == kSentinel; }) &&
           std::all_of(v.end() - kGuard, v.end(), [](int32_t x) { return x == kSentinel; });
  };
  Check(tag + "guards_untouched", guarded(out) && guarded(seq), "a write outside the outputs");
  // Hand-derived lengths: Qb = 2, Kb = 24 (clamped) in both batches; vis = 23, 24 (causal) > K + 8.
  // b0: P = 1, kStart = 1, no decay: K = 1, L = 9. b1: P = 0: K = 0, L = 8 (sink and window only).
  bool lengthsOk = true, rowsOk = true;
  std::string why;
  for (uint32_t b = 0; b < kB; ++b) {
    for (uint32_t h = 0; h < kNq; ++h) {
      for (uint32_t i = 0; i < kMaxQb; ++i) {
        const size_t r = (static_cast<size_t>(b) * kNq + h) * kMaxQb + i;
        const int32_t L = seq[kGuard + r];
        const int32_t wantL = b == 0 ? 9 : 8;
        const int32_t vis = static_cast<int32_t>(kMaxKb) - static_cast<int32_t>(kMaxQb) + static_cast<int32_t>(i) + 1;
        if (L != wantL && lengthsOk) {
          lengthsOk = false;
          why = amct_sim::detail::Fmt("row (%u, %u, %u): L %d, want %d", b, h, i, L, wantL);
        }
        const int32_t* row = &out[kGuard + r * kMaxKb];
        const int32_t n = std::max(0, std::min<int32_t>(L, kMaxKb));
        bool ok = std::all_of(row + n, row + kMaxKb, [](int32_t x) { return x == -1; });
        ok = ok && std::is_sorted(row, row + n) && std::adjacent_find(row, row + n) == row + n;
        ok = ok && n >= 8 && row[0] == 0 && row[3] == 3 && row[n - 4] == vis - 4 && row[n - 1] == vis - 1;
        if (!ok && rowsOk) {
          rowsOk = false;
          why += amct_sim::detail::Fmt(" row (%u, %u, %u) with L %d: bad prefix or tail", b, h, i, L);
        }
      }
    }
  }
  Check(tag + "lengths", lengthsOk, why);
  Check(tag + "rows_within_L", rowsOk, why);
}

}  // namespace
#endif

int main() {
#if __NPU_ARCH__ == 3510
  BudgetMatchesSpec();
  Run(false);
  Run(true);
#endif
  return simtest::Finish();
}
