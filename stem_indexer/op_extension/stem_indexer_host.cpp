#include "stem_indexer_host.h"

#include "stem_indexer_cpu_kernels.h"
#include "amct_tiling.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <utility>
#include <sstream>
#include <string>

// The budget's fused step is normative (docs/stem_indexer.md §5): this file is compiled with -ffp-contract=off
// (stem_indexer/CMakeLists.txt) and calls std::fmaf explicitly.

namespace amct {
namespace stem {

namespace {

constexpr const char* kOp = "npu_stem_indexer";
constexpr const char* kMetaOp = "npu_stem_indexer_metadata";
constexpr int64_t kBlock = 128;
constexpr int64_t kSink = amct_stem::kSink;
constexpr int64_t kWin = amct_stem::kWindow;
constexpr int64_t kDim = 2048;
constexpr int64_t kMaxBatch = 65536;
constexpr int64_t kKeyCacheBytes = int64_t(256) << 20;  // keys packed once per item up to this size

// Metadata layout (§6).
constexpr int64_t kHeaderWords = amct_stem::kHeaderWords;
constexpr int64_t kSlots = amct_stem::kSlots;
constexpr int64_t kVectorSlots = 72;
constexpr int64_t kRecordWords = amct_stem::kRecordWords;
constexpr int64_t kMTile = amct_stem::kMTile;
constexpr int64_t kSectionBytes = int64_t(96) << 20;

int64_t blocksOf(int64_t tokens) { return (tokens + kBlock - 1) / kBlock; }

std::string shapeText(at::IntArrayRef shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

int64_t concrete(const c10::SymInt& v) { return v.guard_int(__FILE__, __LINE__); }

std::vector<int64_t> concreteSizes(const at::Tensor& t) {
  std::vector<int64_t> out;
  for (const c10::SymInt& s : t.sym_sizes()) out.push_back(concrete(s));
  return out;
}

void checkRank(const char* op, const char* name, const at::Tensor& t, int64_t rank, const char* layout) {
  TORCH_CHECK(t.dim() == rank, op, ": ", name, " must have rank ", rank, " (", layout, "), but got rank ", t.dim(),
              " with shape ", shapeText(concreteSizes(t)));
}

void checkChoice(const char* name, int64_t value, std::initializer_list<int64_t> allowed) {
  for (int64_t a : allowed) {
    if (a == value) return;
  }
  std::ostringstream s;
  size_t i = 0;
  for (int64_t a : allowed) s << (i++ ? (i == allowed.size() ? " or " : ", ") : "") << a;
  TORCH_CHECK(false, kOp, ": ", name, " must be ", s.str(), ", but got ", value);
}

void checkFixed(const char* op, const char* name, int64_t value, int64_t want) {
  TORCH_CHECK(value == want, op, ": ", name, " must be ", want, ", but got ", value);
}

void checkRate(const char* name, double value, float want) {
  const float f = static_cast<float>(value);
  TORCH_CHECK(!std::isnan(f) && std::fabs(f - want) <= 1e-6f, kOp, ": ", name, " must be ", want,
              " (within 1e-6 as float32), but got ", value);
}

// S5: the attribute values of §2.
void checkAttributes(const Attributes& a) {
  checkFixed(kOp, "stem_block_size", a.stemBlockSize, 128);
  checkFixed(kOp, "stem_stride", a.stemStride, 16);
  const float alpha = static_cast<float>(a.alpha);
  TORCH_CHECK(!std::isnan(alpha) && alpha > 0.0f && alpha <= 1.0f, kOp,
              ": alpha must be in (0, 1] after rounding to float32, but got ", a.alpha, " (float32 ", alpha, ")");
  checkFixed(kOp, "initial_blocks", a.initialBlocks, 4);
  checkFixed(kOp, "window_size", a.windowSize, 4);
  checkRate("k_block_num_rate_medium", a.rateMedium, 0.2f);
  checkFixed(kOp, "k_block_num_bias_medium", a.biasMedium, 30);
  checkRate("k_block_num_rate_large", a.rateLarge, 0.1f);
  checkFixed(kOp, "k_block_num_bias_large", a.biasLarge, 30);
  checkChoice("topk_score_precision", a.precision, {1, 2});
}

void checkLengthTensor(const char* name, const at::Tensor& t, int64_t batch) {
  const int64_t n = concrete(t.sym_numel());
  TORCH_CHECK(n == batch, kOp, ": ", name, " must have ", batch, " elements (B), but got ", n);
}

// S9: everything on qflat's device; on the NPU the length tensors may also be CPU tensors.
void checkDevices(const at::Tensor& q, const at::Tensor& k, const at::Tensor& vb, const at::Tensor& ql,
                  const at::Tensor& kvl, const std::optional<at::Tensor>& prompt, const at::Tensor& md) {
  const at::Device dev = q.device();
  const bool npu = dev.is_privateuseone();
  auto same = [&](const char* name, const at::Tensor& t) {
    TORCH_CHECK(t.device() == dev, kOp, ": ", name, " must be on ", dev, " (the device of qflat), but got ",
                t.device());
  };
  auto lengths = [&](const char* name, const at::Tensor& t) {
    TORCH_CHECK(t.device() == dev || (npu && t.device().is_cpu()), kOp, ": ", name, " must be on ", dev,
                npu ? " or on the CPU" : "", ", but got ", t.device());
  };
  same("kflat", k);
  same("vbias", vb);
  same("metadata", md);
  lengths("q_seq_lens", ql);
  lengths("kv_seq_lens", kvl);
  if (prompt) lengths("num_prompt_tokens", *prompt);
}

// S1-S9 (table order); works on Meta tensors (a CPU tensor mixed with a meta one dispatches to Meta).
void checkInputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& vb, const at::Tensor& ql,
                 const at::Tensor& kvl, const std::optional<at::Tensor>& prompt,
                 const std::optional<at::Tensor>& metadata, const Attributes& attrs) {
  TORCH_CHECK(metadata.has_value(), kOp, ": metadata is required; create it with npu_stem_indexer_metadata");
  const at::Tensor& md = *metadata;
  checkRank(kOp, "qflat", q, 4, "[B, Nq, maxQb, 2048]");
  checkRank(kOp, "kflat", k, 4, "[B, Nk, maxKb, 2048]");
  checkRank(kOp, "vbias", vb, 3, "[B, Nk, maxKb]");
  checkRank(kOp, "q_seq_lens", ql, 1, "[B]");
  checkRank(kOp, "kv_seq_lens", kvl, 1, "[B]");
  if (prompt) checkRank(kOp, "num_prompt_tokens", *prompt, 1, "[B]");
  checkRank(kOp, "metadata", md, 1, "[M]");
  checkDtype(kOp, "qflat", q.scalar_type(), {at::kBFloat16});
  checkDtype(kOp, "kflat", k.scalar_type(), {at::kBFloat16});
  checkDtype(kOp, "vbias", vb.scalar_type(), {at::kFloat});
  checkDtype(kOp, "q_seq_lens", ql.scalar_type(), {at::kInt});
  checkDtype(kOp, "kv_seq_lens", kvl.scalar_type(), {at::kInt});
  if (prompt) checkDtype(kOp, "num_prompt_tokens", prompt->scalar_type(), {at::kInt});
  checkDtype(kOp, "metadata", md.scalar_type(), {at::kInt});
  const std::vector<int64_t> qs = concreteSizes(q);
  const std::vector<int64_t> ks = concreteSizes(k);
  for (int d = 0; d < 4; ++d) {
    TORCH_CHECK(qs[d] > 0, kOp, ": qflat.size(", d, ") must be > 0, but got ", qs[d], " (shape ", shapeText(qs), ")");
  }
  TORCH_CHECK(ks[2] > 0, kOp, ": kflat.size(2) (maxKb) must be > 0, but got ", ks[2]);
  checkAttributes(attrs);
  const int64_t B = qs[0], Nq = qs[1], Nk = ks[1];
  TORCH_CHECK(B <= kMaxBatch, kOp, ": batch size B = qflat.size(0) must be <= ", kMaxBatch, ", but got ", B);
  checkChoice("qflat.size(1) (Nq, query heads)", Nq, {32, 64});
  checkChoice("kflat.size(1) (Nk, kv heads)", Nk, {2, 4, 8});
  TORCH_CHECK(Nq % Nk == 0, kOp, ": Nq must be a multiple of Nk, but got Nq = ", Nq, ", Nk = ", Nk);
  TORCH_CHECK(qs[3] == kDim, kOp, ": qflat.size(3) must be 2048 (stem_stride * 128), but got ", qs[3]);
  TORCH_CHECK(ks[3] == qs[3], kOp, ": kflat.size(3) must be ", qs[3], " (qflat.size(3)), but got ", ks[3]);
  TORCH_CHECK(ks[0] == B, kOp, ": kflat.size(0) must be ", B, " (B), but got ", ks[0]);
  const std::vector<int64_t> want{B, Nk, ks[2]};
  const std::vector<int64_t> vs = concreteSizes(vb);
  TORCH_CHECK(vs == want, kOp, ": vbias must have shape ", shapeText(want), " ([B, Nk, maxKb]), but got ",
              shapeText(vs));
  checkLengthTensor("q_seq_lens", ql, B);
  checkLengthTensor("kv_seq_lens", kvl, B);
  if (prompt) checkLengthTensor("num_prompt_tokens", *prompt, B);
  const int64_t cap = metadataCapacity(B, Nk);
  const int64_t m = concrete(md.sym_size(0));
  TORCH_CHECK(m >= cap, kOp, ": metadata must have at least ", cap, " elements (capacity(B=", B, ", Nk=", Nk,
              ")), but got ", m);
  checkDevices(q, k, vb, ql, kvl, prompt, md);
}


// The values of an int32 [B] length tensor (S-checked), read in place on the CPU: converting
// copies would cost more than the whole op's planning for short sequences.
std::vector<int64_t> hostValues(const at::Tensor& t) {
  const at::Tensor c = t.device().is_cpu() ? t : t.to(at::kCPU);
  const int32_t* p = c.data_ptr<int32_t>();
  std::vector<int64_t> v(static_cast<size_t>(c.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = p[static_cast<int64_t>(i) * c.stride(0)];
  return v;
}

// Blocks of row i that the causal (right-down aligned) or full mask makes visible (§4 step 2).
int64_t visibleBlocks(int64_t i, int64_t Qb, int64_t Kb, bool causal) {
  return causal ? std::max<int64_t>(Kb - Qb + i + 1, 0) : Kb;
}

// One Top-K row of the plan.
struct TopRow {
  int64_t i;
  int64_t vis;
  int64_t K;
};

// Top-K rows of one (b, n) item, scored together: consecutive rows i0..i1-1 of batch b.
struct Tile {
  int64_t b;
  int64_t n;
  size_t first;  // into the batch's TopRow list
  size_t count;
  int64_t width;       // candidates of the widest row (its vis - 8)
};

struct Plan {
  std::vector<std::vector<TopRow>> rows;  // per batch
  std::vector<Tile> tiles;
  int64_t topRows = 0;
};

// Keys of the CPU score kernel packed once per item (packKeysOnce): the floats of item b * Nk + n
// start at offset[item], or offset[item] < 0 when its tiles pack their own.
struct PackedKeys {
  at::Tensor data;
  std::vector<int64_t> offset;
};

// The shapes and inputs every tile reads.
struct Problem {
  int64_t B, Nq, Nk, G, maxQb, maxKb;
  at::Tensor q;        // qflat, detached
  at::Tensor k;        // kflat, detached
  at::Tensor vb;       // vbias, contiguous
};

// The §7.1 query tile in rows (G * TQ); tests change it to show the results do not depend on it.
std::atomic<int64_t> gTileRows{256};

// The row lengths of every row (L = vis on short-path rows, K + 8 on Top-K rows, 0 on empty ones;
// shortLen = vis on short-path rows, else 0) and the Top-K rows, in tiles of at most tileRows / G
// consecutive query blocks per kv head.
Plan makePlan(const std::vector<int64_t>& qLen, const std::vector<int64_t>& kvLen, const std::vector<int64_t>& prompt,
              const Problem& p, const Attributes& attrs, int32_t* ll, int32_t* sl) {
  Plan plan;
  plan.rows.resize(p.B);
  const int64_t tq = std::max<int64_t>(1, gTileRows.load() / p.G);
  for (int64_t b = 0; b < p.B; ++b) {
    // Out-of-contract device lengths are clamped so that everything stays in bounds.
    const int64_t Qb = std::min(std::max<int64_t>(blocksOf(qLen[b]), 0), p.maxQb);
    const int64_t Kb = std::min(std::max<int64_t>(blocksOf(kvLen[b]), 0), p.maxKb);
    const int64_t P = std::max<int64_t>(blocksOf(prompt[b]), 0);
    if (Qb == 0 || Kb == 0) continue;
    std::vector<TopRow>& rows = plan.rows[b];
    for (int64_t i = 0; i < Qb; ++i) {
      const int64_t vis = visibleBlocks(i, Qb, Kb, attrs.causal);
      if (vis == 0) continue;
      const int64_t K = topkBudget(P, i, Qb, Kb, attrs.alpha, attrs.rateMedium, attrs.biasMedium, attrs.rateLarge,
                                   attrs.biasLarge);
      const bool shortPath = vis <= K + kSink + kWin;
      for (int64_t h = 0; h < p.Nq; ++h) {
        const int64_t r = (b * p.Nq + h) * p.maxQb + i;
        ll[r] = static_cast<int32_t>(shortPath ? vis : K + kSink + kWin);
        if (shortPath) sl[r] = static_cast<int32_t>(vis);
      }
      if (!shortPath) rows.push_back(TopRow{i, vis, K});
    }
    size_t start = 0;
    while (start < rows.size()) {
      size_t end = start + 1;
      while (end < rows.size() && end - start < static_cast<size_t>(tq) && rows[end].i == rows[end - 1].i + 1) ++end;
      int64_t width = 0;
      for (size_t k = start; k < end; ++k) width = std::max(width, rows[k].vis - kSink - kWin);
      for (int64_t n = 0; n < p.Nk; ++n) {
        plan.tiles.push_back(Tile{b, n, start, end - start, width});
      }
      plan.topRows += p.Nk * p.G * static_cast<int64_t>(end - start);
      start = end;
    }
  }
  return plan;
}

// Element offset of sparse_indices[b, h, i, 0].
int64_t outOffset(const Problem& p, const Tile& t, int64_t g, const TopRow& row) {
  return ((t.b * p.Nq + t.n * p.G + g) * p.maxQb + row.i) * p.maxKb;
}

// Element offset of vbias[b, n, kSink].
int64_t biasOffset(const Problem& p, const Tile& t) { return (t.b * p.Nk + t.n) * p.maxKb + kSink; }

// The fp32 scratch buffers of a CPU tile: its packed keys and its scores.
enum ScratchSlot { kKeyScratch = 0, kScoreScratch, kScratchSlots };

// `elements` fp32 of CPU scratch: a per-thread buffer kept across tiles and calls (it only grows,
// to a few MB): fresh buffers per call would cost page faults that matter for short sequences.
// ATen's CPU allocator aligns it to 64 bytes, so the score kernel's 32-byte loads of packed keys
// never straddle a cache line. The tensor is valid until this thread asks for the slot again.
at::Tensor scratch(ScratchSlot slot, int64_t elements) {
  thread_local at::Tensor keep[kScratchSlots];
  at::Tensor& buf = keep[slot];
  if (!buf.defined() || buf.numel() < elements) buf = at::empty({elements}, at::TensorOptions().dtype(at::kFloat));
  return buf.narrow(0, 0, elements);
}

// The query rows of a tile: qflat[b, n*G : (n+1)*G, i0 : i0 + count] ([G, count, kDim]).
at::Tensor tileQueries(const Tile& t, const Plan& plan, const Problem& p) {
  return p.q.select(0, t.b).narrow(0, t.n * p.G, p.G).narrow(1, plan.rows[t.b][t.first].i,
                                                               static_cast<int64_t>(t.count));
}

// The candidate keys of item (b, n) up to `width`: kflat[b, n : n+1, 4 : 4 + width] ([1, width, kDim]).
at::Tensor candidateKeys(const Problem& p, int64_t b, int64_t n, int64_t width) {
  return p.k.select(0, b).narrow(0, n, 1).narrow(1, kSink, width);
}

// The rows of a bf16 [A, I, kDim] view for the CPU score kernel; `hold` keeps the view, or a
// tile-sized contiguous copy when its rows are not contiguous.
Bf16Rows bf16Rows(const at::Tensor& view, at::Tensor& hold) {
  hold = view.stride(2) == 1 ? view : view.contiguous();
  return Bf16Rows{reinterpret_cast<const uint16_t*>(hold.data_ptr<at::BFloat16>()), hold.size(0), hold.size(1),
                  hold.stride(0), hold.stride(1)};
}

// The score matmul of one tile on the CPU: out[G * count, width] (row-major) = the sequential fp32
// dot products of stem_indexer_cpu_kernels.h, from the item's keys in `packed` or keys packed here.
void scoreTileCpu(const Tile& t, const Plan& plan, const Problem& p, const PackedKeys& packed, float* out) {
  at::Tensor qHold, kHold;
  const Bf16Rows q = bf16Rows(tileQueries(t, plan, p), qHold);
  const int64_t offset = packed.offset.empty() ? -1 : packed.offset[t.b * p.Nk + t.n];
  const float* keys = nullptr;
  if (offset >= 0) {
    keys = packed.data.data_ptr<float>() + offset;
  } else {
    at::Tensor buf = scratch(kKeyScratch, packedKeyFloats(t.width));
    packKeys(bf16Rows(candidateKeys(p, t.b, t.n, t.width), kHold), buf.data_ptr<float>());
    keys = buf.data_ptr<float>();
  }
  sequentialScores(q, keys, t.width, out, t.width);
}

// The keys of every item with several tiles, packed once per item (not once per tile) on the CPU
// when they fit kKeyCacheBytes; none otherwise (then each tile packs its own, which costs the same when
// every item has one tile, and keeps them in the packing thread's cache).
PackedKeys packKeysOnce(const Plan& plan, const Problem& p) {
  const int64_t items = p.B * p.Nk;
  std::vector<int64_t> width(items, 0), tiles(items, 0);
  for (const Tile& t : plan.tiles) {
    width[t.b * p.Nk + t.n] = std::max(width[t.b * p.Nk + t.n], t.width);
    ++tiles[t.b * p.Nk + t.n];
  }
  PackedKeys packed{at::Tensor(), std::vector<int64_t>(items, -1)};
  int64_t floats = 0;
  for (int64_t item = 0; item < items; ++item) {
    if (tiles[item] < 2) continue;
    packed.offset[item] = floats;
    floats += packedKeyFloats(width[item]);
  }
  if (floats == 0 || floats * 4 > kKeyCacheBytes) return PackedKeys{};
  packed.data = at::empty({floats}, at::TensorOptions().dtype(at::kFloat));
  adviseHugePages(packed.data);
  float* base = packed.data.data_ptr<float>();
  at::parallel_for(0, items, 1, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      if (packed.offset[item] < 0) continue;
      at::Tensor hold;
      packKeys(bf16Rows(candidateKeys(p, item / p.Nk, item % p.Nk, width[item]), hold), base + packed.offset[item]);
    }
  });
  return packed;
}

// Runs work(tile, state) for every tile on the intra-op threads, the costliest tiles first, each
// thread taking the next tile when it is done: under a causal mask the tiles' widths grow with
// the query block, so ATen's static split would leave one thread idle for most of the call.
// Every tile writes only its own outputs, so the results do not depend on the schedule.
template <class State, class Work>
void forEachTileBalanced(const std::vector<Tile>& tiles, const Work& work) {
  std::vector<size_t> order(tiles.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return static_cast<int64_t>(tiles[a].count) * tiles[a].width > static_cast<int64_t>(tiles[b].count) * tiles[b].width;
  });
  std::atomic<size_t> next{0};
  const int64_t workers = std::min<int64_t>(at::get_num_threads(), static_cast<int64_t>(tiles.size()));
  at::parallel_for(0, workers, 1, [&](int64_t, int64_t) {
    State state;
    for (size_t k = next.fetch_add(1); k < order.size(); k = next.fetch_add(1)) work(tiles[order[k]], state);
  });
}

// §4.1: the sortable key of a score (larger ranks higher; NaN lowest). Precision 2 ranks the
// score's bf16 value (round to nearest even), whose 16-bit key has the same order. Branch-free,
// so that the compiler vectorises the loop over a row's candidates.
template <int64_t Precision>
inline uint32_t sortKey(float s) {
  uint32_t u;
  std::memcpy(&u, &s, sizeof(u));
  const bool nan = (u & 0x7FFFFFFFu) > 0x7F800000u;
  uint32_t key;
  if constexpr (Precision == 2) {
    const uint32_t v = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    key = v ^ ((0u - (v >> 15)) & 0x7FFFu) ^ 0x8000u;  // ~v & 0xFFFF if the sign is set, else v ^ 0x8000
  } else {
    key = u ^ ((0u - (u >> 31)) | 0x80000000u);       // ~u if the sign is set, else u ^ 0x80000000
  }
  return nan ? 0u : key;
}

// One Top-K row (§4 step 5) from its dot products, written whole: [0..3] ++ ascending(T) ++
// [vis-4 .. vis-1], then -1 up to width. Every candidate becomes one 64-bit word key << 32 |
// ~index, so one unsigned order ranks by key descending and ties by the smaller index, and the
// words are distinct. Short rows are chosen by counting (stem_indexer_cpu_kernels.h); otherwise the
// K-th largest word (nth_element on a copy) is a threshold that exactly the K chosen candidates
// reach, and a pass in index order writes them ascending.
template <int64_t Precision>
void selectRow(const float* dots, const float* bias, const TopRow& row, int64_t width, int32_t* out,
               std::vector<uint64_t>& words, std::vector<uint64_t>& work) {
  const size_t n = static_cast<size_t>(row.vis - kSink - kWin);
  words.resize(n);
  for (size_t c = 0; c < n; ++c) {
    const float scaled = dots[c] * 0.015625f;  // 2^-6, then a separately rounded add (§4 step 5)
    const float s = scaled + bias[c];
    words[c] = (static_cast<uint64_t>(sortKey<Precision>(s)) << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(c));
  }
  for (int32_t j = 0; j < kSink; ++j) out[j] = j;
  int32_t* chosen = writeLargestByCounting(words.data(), static_cast<int64_t>(n), row.K, kSink, out + kSink);
  if (!chosen) {
    work.assign(words.begin(), words.end());
    std::nth_element(work.begin(), work.begin() + (row.K - 1), work.end(), std::greater<uint64_t>());
    const uint64_t threshold = work[static_cast<size_t>(row.K - 1)];
    chosen = out + kSink;
    for (size_t c = 0; c < n; ++c) {
      if (words[c] >= threshold) *chosen++ = static_cast<int32_t>(kSink + c);
    }
  }
  for (int64_t j = 0; j < kWin; ++j) *chosen++ = static_cast<int32_t>(row.vis - kWin + j);
  std::fill(chosen, out + width, -1);
}

// What a thread of the native CPU path keeps across its tiles.
struct NativeScratch {
  std::vector<uint64_t> words, work;
};

// The CPU path of §7.1: per tile, the score matmul into a per-thread buffer, then the selection of
// each of its rows while the scores are still in cache. Writes the whole of every Top-K row.
void scoreAndSelectCpu(const Plan& plan, const Problem& p, int64_t precision, at::Tensor& indices) {
  int32_t* idx = indices.data_ptr<int32_t>();
  const float* vb = p.vb.data_ptr<float>();
  const PackedKeys packed = packKeysOnce(plan, p);
  auto work = [&](const Tile& t, NativeScratch& s) {
    const int64_t count = static_cast<int64_t>(t.count);
    float* d = scratch(kScoreScratch, p.G * count * t.width).data_ptr<float>();
    scoreTileCpu(t, plan, p, packed, d);
    const float* bias = vb + biasOffset(p, t);
    for (int64_t g = 0; g < p.G; ++g) {
      for (int64_t k = 0; k < count; ++k) {
        const TopRow& row = plan.rows[t.b][t.first + k];
        const float* rowDots = d + (g * count + k) * t.width;
        int32_t* out = idx + outOffset(p, t, g, row);
        if (precision == 2) {
          selectRow<2>(rowDots, bias, row, p.maxKb, out, s.words, s.work);
        } else {
          selectRow<1>(rowDots, bias, row, p.maxKb, out, s.words, s.work);
        }
      }
    }
  };
  forEachTileBalanced<NativeScratch>(plan.tiles, work);
}

// The rows of the CPU op that the native selection does not write: -1, then 0..vis-1 on
// short-path rows (the selection writes the Top-K rows whole).
void prefillCpu(at::Tensor& indices, const at::Tensor& seqLen, const at::Tensor& shortLen) {
  const int64_t rows = seqLen.numel();
  const int64_t width = indices.size(3);
  int32_t* idx = indices.data_ptr<int32_t>();
  const int32_t* sl = shortLen.data_ptr<int32_t>();
  const int32_t* ll = seqLen.data_ptr<int32_t>();
  const int64_t grain = std::max<int64_t>(64, (int64_t(1) << 18) / std::max<int64_t>(width, 1));  // ~1 MB per task
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      if (ll[r] != sl[r]) continue;  // a Top-K row
      int32_t* row = idx + r * width;
      const int32_t vis = sl[r];
      for (int32_t j = 0; j < vis; ++j) row[j] = j;
      std::fill(row + vis, row + width, -1);
    }
  });
}

// The int32 [B] length tensors on `dev`, contiguous. Host ones on another device (the NPU takes
// CPU lengths, S9) are packed into one pinned buffer and sent in one non-blocking copy: the launch
// does not wait for it, and the device's caching host allocator keeps the buffer until it has run.
std::vector<at::Tensor> lengthsOn(const at::Device& dev, const std::vector<at::Tensor>& lengths) {
  std::vector<at::Tensor> out(lengths.size());
  std::vector<size_t> host;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i].device() != dev && lengths[i].device().is_cpu()) {
      host.push_back(i);
    } else {
      out[i] = lengths[i].to(dev).contiguous();
    }
  }
  if (host.empty()) return out;
  at::Tensor staging = at::empty({static_cast<int64_t>(host.size()), lengths[host[0]].numel()},
                                 at::TensorOptions().dtype(at::kInt).pinned_memory(true));
  for (size_t j = 0; j < host.size(); ++j) staging[static_cast<int64_t>(j)].copy_(lengths[host[j]]);
  const at::Tensor onDevice = staging.to(dev, /*non_blocking=*/true);
  for (size_t j = 0; j < host.size(); ++j) out[host[j]] = onDevice[static_cast<int64_t>(j)];
  return out;
}

// The kernel path (the NPU, and the emulated kernel on the CPU): the outputs filled with -1 / 0 on
// their device, then one launch that writes every row of the plan's tiles.
std::tuple<at::Tensor, at::Tensor> runKernel(const Problem& p, const at::Tensor& qSeqLens, const at::Tensor& kvSeqLens,
                                             const std::optional<at::Tensor>& numPromptTokens,
                                             const at::Tensor& metadata, const Attributes& attrs,
                                             const Backend& backend) {
  const amct_stem::StemTiling tiling = computeTiling(p.B, p.Nq, p.Nk, p.maxQb, p.maxKb, attrs, !numPromptTokens,
                                                     metadata.size(0), backend.facts);
  const at::Device dev = p.q.device();
  at::TensorOptions opts = p.q.options().dtype(at::kInt).memory_format(at::MemoryFormat::Contiguous);
  at::Tensor indices = at::full({p.B, p.Nq, p.maxQb, p.maxKb}, -1, opts);
  at::Tensor seqLen = at::zeros({p.B, p.Nq, p.maxQb}, opts);
  std::vector<at::Tensor> lengths{qSeqLens, kvSeqLens};
  if (numPromptTokens) lengths.push_back(*numPromptTokens);
  lengths = lengthsOn(dev, lengths);
  const at::Tensor& prompt = numPromptTokens ? lengths[2] : lengths[1];
  // The kernel's matmuls read rows of 2048 contiguous elements at row strides of the dense layout.
  backend.launch(KernelArgs{tiling.aicNum, p.q.contiguous(), p.k.contiguous(), p.vb, lengths[0], lengths[1], prompt,
                            metadata.contiguous(), indices, seqLen, tilingTensor(tiling)});
  return {indices, seqLen};
}

}  // namespace

int64_t metadataCapacity(int64_t batch, int64_t kvHeads) {
  const int64_t words = kHeaderWords + batch * kvHeads * (kSlots + kVectorSlots) * kRecordWords;
  return (words + 4095) / 4096 * 4096;
}

int64_t topkBudget(int64_t P, int64_t i, int64_t Qb, int64_t Kb, double alpha, double rateMedium, int64_t biasMedium,
                   double rateLarge, int64_t biasLarge) {
  int64_t kStart = P;
  if (P >= 56) {
    const bool medium = P < 160;
    const float rate = static_cast<float>(medium ? rateMedium : rateLarge);
    const float bias = static_cast<float>(medium ? biasMedium : biasLarge);
    const float scaled = static_cast<float>(P) * rate;
    const float sum = scaled + bias;
    kStart = static_cast<int64_t>(std::trunc(sum));
  }
  const int64_t p = i + Kb - Qb;
  const int64_t decay = P - kStart;
  int64_t budget = kStart;
  if (!(p < kStart || decay <= 1)) {
    const float a = static_cast<float>(alpha);
    const float ks = static_cast<float>(kStart);
    const float kEnd = ks * a;
    const float t = static_cast<float>(p - kStart) / static_cast<float>(decay - 1);
    const float d = kEnd - ks;
    const float v = std::fmaf(t, d, ks);
    budget = v < 1.0f ? 1 : std::min<int64_t>(static_cast<int64_t>(std::floor(v)), kStart);
  }
  return std::min<int64_t>(budget, amct_stem::kMaxK);
}

uint64_t ubBytes(uint32_t rowLanes, uint32_t groupRows, uint32_t scratchRows, bool nextKeys) {
  const uint64_t w = rowLanes;
  const uint64_t n = static_cast<uint64_t>(groupRows) * amct_stem::kChunk;
  const uint64_t repeats = w / 64;
  auto r32 = [](uint64_t v) { return roundUp(v, 32); };
  uint64_t bytes = 2 * 4 * n + 4 * amct_stem::kChunk;  // the two score slots (the AIC's Fixpipe targets), vbias
  bytes += 4 * scratchRows * amct_stem::kChunk;    // the chunk scratch
  bytes += 4 * groupRows * w;                      // the group's scores
  bytes += 4 * 4 * w;                              // hi, lo, scratch, index ramp
  // Compare masks: kNotNaN, kAux, kRange over a group's chunk, kNegative, kTaken, kTie over a row.
  bytes += 3 * (std::max(w, n) / 8) + 3 * (w / 8);
  bytes += n / 8 + n / 8;  // the chunk rows' sink mask, the Gather offsets repeating a row's mask
  if (nextKeys) {  // the next row's hi digits, temporary, kNegNext, kAuxNext, the counts' half ones
                   // and the first count's two levels of sums
    bytes += 2 * 4 * w + 2 * (w / 8) + 2 * w + r32(repeats * 4) + 32;
  }
  bytes += r32(repeats * 4) + r32((repeats / 64 + 1) * 4);  // the two levels of sums
  bytes += 2 * repeats * 32;                       // GatherMask patterns and their Gather offsets
  bytes += amct_stem::kLengthSlots * 32;           // the ring of length slots
  bytes += amct_stem::kSlots * amct_stem::kRecordWords * 4;  // a section's records (the kernel's own share)
  return bytes;
}

amct_stem::StemTiling computeTiling(int64_t B, int64_t Nq, int64_t Nk, int64_t maxQb, int64_t maxKb,
                                    const Attributes& attrs, bool promptFromKv, int64_t metadataWords,
                                    const PlatformFacts& facts) {
  // The kernel is dav-3510 code in every build (KERNEL_3510): its UB budget is dav-3510's 248 KB.
  const uint64_t ub = vectorUbBudget(facts, /*usesSelect=*/true, kKernelArch);
  const uint32_t lanes = static_cast<uint32_t>(roundUp(static_cast<uint64_t>(maxKb), amct_stem::kChunk));
  // The most rows per group (a pair of groups reads its keys once), then the next row's keys
  // built in the gaps of the row before it (a row's selection then does not wait for its keys),
  // then a scratch of all of them (its steps run once per chunk) rather than half (twice).
  uint32_t rows = 0, scratchRows = 0;
  bool nextKeys = false;
  for (uint32_t r = 1; r <= amct_stem::kMaxGroupRows; ++r) {
    const std::pair<bool, uint32_t> choices[] = {{true, r}, {true, (r + 1) / 2}, {false, r}, {false, (r + 1) / 2}};
    for (const auto& [next, s] : choices) {  // (next row's keys, scratch rows), preferred first
      if (ubBytes(lanes, r, s, next) <= ub) {
        rows = r;
        scratchRows = s;
        nextKeys = next;
        break;
      }
    }
  }
  uint64_t maxLanes = 0;
  for (uint64_t w = amct_stem::kChunk; ubBytes(static_cast<uint32_t>(w), 1, 1, false) <= ub;
       w += amct_stem::kChunk) {
    maxLanes = w;
  }
  TORCH_CHECK(rows > 0, kOp, ": kflat.size(2) (maxKb) must be at most ", maxLanes,
              " for the NPU kernel's row buffers in ", ub, " bytes of UB, but got ", maxKb);
  // One cube core per two vector cores (MIX 1:2); the plan has kSlots slots, so more cores would idle.
  TORCH_CHECK(facts.aivCores >= amct_stem::kSubBlocks, kOp, ": the NPU kernel runs on AI cores of one cube and ",
              amct_stem::kSubBlocks, " vector cores, but the platform has ", facts.aivCores, " vector core(s)");
  const uint64_t sub = amct_stem::kSubBlocks;
  const uint64_t aic = std::max<uint64_t>(1, std::min<uint64_t>(facts.aivCores / sub, amct_stem::kSlots));
  amct_stem::StemTiling t{};
  t.batch = static_cast<uint32_t>(B);
  t.qHeads = static_cast<uint32_t>(Nq);
  t.kvHeads = static_cast<uint32_t>(Nk);
  t.group = static_cast<uint32_t>(Nq / Nk);
  t.maxQb = static_cast<uint32_t>(maxQb);
  t.maxKb = static_cast<uint32_t>(maxKb);
  t.causal = attrs.causal ? 1 : 0;
  t.precision = static_cast<uint32_t>(attrs.precision);
  t.promptFromKv = promptFromKv ? 1 : 0;
  t.aicNum = static_cast<uint32_t>(aic);
  t.subBlocks = static_cast<uint32_t>(sub);
  t.blockNum = static_cast<uint32_t>(aic * sub);
  t.rowLanes = lanes;
  t.groupRows = rows;
  t.scratchRows = scratchRows;
  t.nextKeys = nextKeys ? 1 : 0;
  t.ubBudget = static_cast<uint32_t>(ub);
  t.ubUsed = static_cast<uint32_t>(ubBytes(lanes, rows, scratchRows, nextKeys));
  t.alpha = static_cast<float>(attrs.alpha);
  t.rateMedium = static_cast<float>(attrs.rateMedium);
  t.rateLarge = static_cast<float>(attrs.rateLarge);
  t.biasMedium = static_cast<int32_t>(attrs.biasMedium);
  t.biasLarge = static_cast<int32_t>(attrs.biasLarge);
  t.metadataWords = static_cast<uint64_t>(metadataWords);
  return t;
}

std::tuple<at::Tensor, at::Tensor> stemIndexerMeta(const at::Tensor& qflat, const at::Tensor& kflat,
                                                   const at::Tensor& vbias, const at::Tensor& qSeqLens,
                                                   const at::Tensor& kvSeqLens,
                                                   const std::optional<at::Tensor>& numPromptTokens,
                                                   const std::optional<at::Tensor>& metadata, const Attributes& attrs) {
  checkInputs(qflat, kflat, vbias, qSeqLens, kvSeqLens, numPromptTokens, metadata, attrs);
  at::TensorOptions opts = qflat.options().dtype(at::kInt);
  c10::SymIntArrayRef qs = qflat.sym_sizes();
  return {at::empty_symint({qs[0], qs[1], qs[2], kflat.sym_size(2)}, opts), at::empty_symint({qs[0], qs[1], qs[2]}, opts)};
}

std::tuple<at::Tensor, at::Tensor> stemIndexer(const at::Tensor& qflat, const at::Tensor& kflat,
                                               const at::Tensor& vbias, const at::Tensor& qSeqLens,
                                               const at::Tensor& kvSeqLens,
                                               const std::optional<at::Tensor>& numPromptTokens,
                                               const std::optional<at::Tensor>& metadata, const Attributes& attrs,
                                               const Backend& backend) {
  checkInputs(qflat, kflat, vbias, qSeqLens, kvSeqLens, numPromptTokens, metadata, attrs);
  const int64_t B = qflat.size(0), Nq = qflat.size(1), maxQb = qflat.size(2);
  const int64_t Nk = kflat.size(1), maxKb = kflat.size(2);
  const at::Tensor& promptT = numPromptTokens ? *numPromptTokens : kvSeqLens;
  // S11: always on the CPU; on the NPU when the lengths are host tensors.
  const bool checkLengths = !backend.npu || (qSeqLens.device().is_cpu() && kvSeqLens.device().is_cpu() &&
                                             promptT.device().is_cpu());
  const std::vector<int64_t> qLen = checkLengths ? hostValues(qSeqLens) : std::vector<int64_t>();
  const std::vector<int64_t> kvLen = checkLengths ? hostValues(kvSeqLens) : std::vector<int64_t>();
  const std::vector<int64_t> prompt = checkLengths ? hostValues(promptT) : std::vector<int64_t>();
  if (checkLengths) {
    for (int64_t b = 0; b < B; ++b) {
      TORCH_CHECK(qLen[b] >= 0 && qLen[b] <= maxQb * kBlock, kOp, ": q_seq_lens[", b, "] must be in [0, ",
                  maxQb * kBlock, "] (maxQb * 128), but got ", qLen[b]);
      TORCH_CHECK(kvLen[b] >= 0 && kvLen[b] <= maxKb * kBlock, kOp, ": kv_seq_lens[", b, "] must be in [0, ",
                  maxKb * kBlock, "] (maxKb * 128), but got ", kvLen[b]);
      TORCH_CHECK(prompt[b] >= kvLen[b], kOp, ": num_prompt_tokens[", b, "] must be >= kv_seq_lens[", b, "] (",
                  kvLen[b], "), but got ", prompt[b]);
    }
  }
  // Not differentiable: the inputs are only read (detached, as grad mode is per thread).
  const Problem p{B, Nq, Nk, Nq / Nk, maxQb, maxKb, qflat.detach(), kflat.detach(), vbias.contiguous()};
  if (backend.selection == Selection::kKernel) {
    return runKernel(p, qSeqLens, kvSeqLens, numPromptTokens, *metadata, attrs, backend);
  }
  at::TensorOptions opts = qflat.options().dtype(at::kInt).memory_format(at::MemoryFormat::Contiguous);
  at::TensorOptions host = at::TensorOptions().dtype(at::kInt);
  at::Tensor shortLen = at::zeros({B, Nq, maxQb}, host);
  at::Tensor seqLenHost = at::zeros({B, Nq, maxQb}, host);
  const Plan plan = makePlan(qLen, kvLen, prompt, p, attrs, seqLenHost.data_ptr<int32_t>(),
                             shortLen.data_ptr<int32_t>());
  at::Tensor indices = at::empty({B, Nq, maxQb, maxKb}, opts);
  adviseHugePages(indices);
  prefillCpu(indices, seqLenHost, shortLen);
  if (plan.topRows > 0) scoreAndSelectCpu(plan, p, attrs.precision, indices);
  return {indices, seqLenHost};
}


int64_t setTileRowsForTest(int64_t rows) {
  if (rows <= 0) return gTileRows.load();
  return gTileRows.exchange(rows);
}

at::Tensor scoresForTest(const at::Tensor& queries, const at::Tensor& keys, bool portable) {
  constexpr const char* op = "_stem_indexer_scores";
  TORCH_CHECK(queries.device().is_cpu() && keys.device().is_cpu(), op, ": CPU tensors only");
  TORCH_CHECK(queries.scalar_type() == at::kBFloat16 && keys.scalar_type() == at::kBFloat16, op, ": bfloat16 only");
  TORCH_CHECK(queries.dim() == 3 && queries.size(2) == kDim, op, ": queries must be [A, I, 2048], got ",
              queries.sizes());
  TORCH_CHECK(keys.dim() == 2 && keys.size(1) == kDim, op, ": keys must be [W, 2048], got ", keys.sizes());
  const int64_t width = keys.size(0);
  at::Tensor out = at::empty({queries.size(0) * queries.size(1), width}, at::TensorOptions().dtype(at::kFloat));
  if (out.numel() == 0) return out;
  at::Tensor qHold, kHold;
  at::Tensor packed = at::empty({packedKeyFloats(width)}, at::TensorOptions().dtype(at::kFloat));
  packKeys(bf16Rows(keys.unsqueeze(0), kHold), packed.data_ptr<float>());
  sequentialScores(bf16Rows(queries, qHold), packed.data_ptr<float>(), width, out.data_ptr<float>(), width, portable);
  return out;
}

// ---- metadata (§6) ------------------------------------------------------------------------

namespace {

void checkMetadataInputs(const at::Tensor& ql, const at::Tensor& kvl, int64_t qHeads, int64_t kvHeads,
                         int64_t stemBlockSize, int64_t dimQkflat, int64_t windowSize) {
  checkRank(kMetaOp, "q_seq_lens", ql, 1, "[B]");
  checkRank(kMetaOp, "kv_seq_lens", kvl, 1, "[B]");
  checkDtype(kMetaOp, "q_seq_lens", ql.scalar_type(), {at::kInt});
  checkDtype(kMetaOp, "kv_seq_lens", kvl.scalar_type(), {at::kInt});
  const int64_t nq = concrete(ql.sym_size(0)), nkv = concrete(kvl.sym_size(0));
  TORCH_CHECK(nq > 0, kMetaOp, ": q_seq_lens must not be empty, but got 0 elements");
  TORCH_CHECK(nkv == nq, kMetaOp, ": kv_seq_lens must have ", nq, " elements (as q_seq_lens), but got ", nkv);
  TORCH_CHECK(kvl.device() == ql.device(), kMetaOp, ": kv_seq_lens must be on ", ql.device(),
              " (the device of q_seq_lens), but got ", kvl.device());
  TORCH_CHECK(nq <= kMaxBatch, kMetaOp, ": q_seq_lens must have at most ", kMaxBatch, " elements (batch), but got ",
              nq);
  TORCH_CHECK(qHeads == 32 || qHeads == 64, kMetaOp, ": q_heads must be 32 or 64, but got ", qHeads);
  TORCH_CHECK(kvHeads == 2 || kvHeads == 4 || kvHeads == 8, kMetaOp, ": kv_heads must be 2, 4 or 8, but got ",
              kvHeads);
  TORCH_CHECK(qHeads % kvHeads == 0, kMetaOp, ": q_heads must be a multiple of kv_heads, but got q_heads = ", qHeads,
              ", kv_heads = ", kvHeads);
  checkFixed(kMetaOp, "stem_block_size", stemBlockSize, 128);
  checkFixed(kMetaOp, "dim_qkflat", dimQkflat, 2048);
  checkFixed(kMetaOp, "window_size", windowSize, 4);
}

struct MetaTile {
  int64_t bn2;
  int64_t m;
  int64_t cost;
};

// Tiles of one bn2 with their §6 costs.
void appendTiles(int64_t bn2, int64_t G, int64_t Qb, int64_t Kb, bool causal, std::vector<MetaTile>& tiles) {
  const int64_t rows = G * Qb;
  const int64_t mt = (rows + kMTile - 1) / kMTile;
  for (int64_t m = 0; m < mt; ++m) {
    const int64_t r0 = m * kMTile, r1 = std::min(rows, r0 + kMTile);
    int64_t visMax = 0;
    for (int64_t r = r0; r < r1; ++r) visMax = std::max(visMax, visibleBlocks(r % Qb, Qb, Kb, causal));
    const int64_t e = std::max<int64_t>(0, visMax - kWin);
    const int64_t cost = amct_stem::TileCost(r1 - r0, e);
    tiles.push_back(MetaTile{bn2, m, cost});
  }
}

// Records of one section: tiles split over min(36, n) slots by cost.
void writeSection(int32_t* words, int64_t section, const std::vector<MetaTile>& tiles,
                  const std::vector<int64_t>& mtOf) {
  const int64_t n = static_cast<int64_t>(tiles.size());
  if (n == 0) return;
  const int64_t ce = std::min<int64_t>(kSlots, n);
  std::vector<int64_t> prefix(n + 1, 0);
  for (int64_t x = 0; x < n; ++x) prefix[x + 1] = prefix[x] + tiles[x].cost;
  const int64_t total = prefix[n];
  std::vector<int64_t> a(ce + 1, 0);
  a[ce] = n;
  for (int64_t k = 1; k < ce; ++k) {
    int64_t x = a[k - 1] + 1;
    while (x < n - (ce - k) && ce * prefix[x] < k * total) ++x;
    a[k] = std::min(x, n - (ce - k));
  }
  for (int64_t k = 0; k < ce; ++k) {
    const MetaTile& first = tiles[a[k]];
    const MetaTile& last = tiles[a[k + 1] - 1];
    int32_t* rec = words + kHeaderWords + kRecordWords * (kSlots * section + k);
    rec[0] = static_cast<int32_t>(first.bn2);
    rec[1] = static_cast<int32_t>(first.m);
    rec[2] = 0;
    const bool nextM = last.m + 1 < mtOf[last.bn2];
    rec[3] = static_cast<int32_t>(nextM ? last.bn2 : last.bn2 + 1);
    rec[4] = static_cast<int32_t>(nextM ? last.m + 1 : 0);
    rec[5] = 0;
  }
}

}  // namespace

at::Tensor stemIndexerMetadataMeta(const at::Tensor& qSeqLens, const at::Tensor& kvSeqLens, int64_t qHeads,
                                   int64_t kvHeads, bool causal, int64_t stemBlockSize, int64_t dimQkflat,
                                   int64_t windowSize) {
  checkMetadataInputs(qSeqLens, kvSeqLens, qHeads, kvHeads, stemBlockSize, dimQkflat, windowSize);
  return at::empty({metadataCapacity(concrete(qSeqLens.sym_size(0)), kvHeads)}, qSeqLens.options());
}

at::Tensor stemIndexerMetadata(const at::Tensor& qSeqLens, const at::Tensor& kvSeqLens, int64_t qHeads,
                               int64_t kvHeads, bool causal, int64_t stemBlockSize, int64_t dimQkflat,
                               int64_t windowSize) {
  checkMetadataInputs(qSeqLens, kvSeqLens, qHeads, kvHeads, stemBlockSize, dimQkflat, windowSize);
  const std::vector<int64_t> qLen = hostValues(qSeqLens);
  const std::vector<int64_t> kvLen = hostValues(kvSeqLens);
  const int64_t B = static_cast<int64_t>(qLen.size());
  for (int64_t b = 0; b < B; ++b) {
    TORCH_CHECK(qLen[b] >= 0, kMetaOp, ": q_seq_lens[", b, "] must be >= 0, but got ", qLen[b]);
    TORCH_CHECK(kvLen[b] >= 0, kMetaOp, ": kv_seq_lens[", b, "] must be >= 0, but got ", kvLen[b]);
  }
  const int64_t G = qHeads / kvHeads;
  at::Tensor out = at::zeros({metadataCapacity(B, kvHeads)}, at::TensorOptions().dtype(at::kInt));
  int32_t* words = out.data_ptr<int32_t>();
  std::vector<int64_t> mtOf(B * kvHeads, 0);
  int64_t sections = 0;
  int64_t sectionBytes = 0;
  std::vector<MetaTile> current;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t Qb = blocksOf(qLen[b]), Kb = blocksOf(kvLen[b]);
    if (Qb == 0 || Kb == 0) continue;
    const int64_t bytes = (G * Qb + Kb) * 4096;
    for (int64_t n = 0; n < kvHeads; ++n) {
      const int64_t bn2 = b * kvHeads + n;
      mtOf[bn2] = (G * Qb + kMTile - 1) / kMTile;
      if (sectionBytes > 0 && sectionBytes + bytes > kSectionBytes) {
        writeSection(words, sections++, current, mtOf);
        current.clear();
        sectionBytes = 0;
      }
      sectionBytes += bytes;
      appendTiles(bn2, G, Qb, Kb, causal, current);
    }
  }
  if (!current.empty() || sections == 0) writeSection(words, sections++, current, mtOf);
  words[0] = static_cast<int32_t>(sections);
  return out.to(qSeqLens.device());
}

}  // namespace stem
}  // namespace amct
