// amct kernel sim: amct_sim::Launch — runs the blocks of a kernel invocation (in parallel, or
// serially in a shuffled order), then checks every block ended cleanly and runs the race check.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include <atomic>
#include <cerrno>
#include <exception>
#include <system_error>
#include <thread>

#include "sim_memory.h"

#ifdef AMCT_SIM_WITH_ATEN
#include <ATen/Parallel.h>
#endif

namespace amct_sim {
namespace detail {

// ---- environment ---------------------------------------------------------------------------
inline bool EnvInt(const char* name, long long* value) {
  const char* text = std::getenv(name);
  if (text == nullptr || text[0] == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') {
    throw SimError(Fmt("amct kernel sim: environment %s='%s' is not an integer", name, text));
  }
  *value = v;
  return true;
}

inline long long EnvIntIn(const char* name, long long def, long long lo, long long hi) {
  long long v = def;
  if (EnvInt(name, &v) && (v < lo || v > hi)) {
    throw SimError(Fmt("amct kernel sim: environment %s=%lld is not in [%lld, %lld]", name, v, lo, hi));
  }
  return v;
}

inline uint64_t EnvU64(const char* name, uint64_t def) {
  const char* text = std::getenv(name);
  if (text == nullptr || text[0] == '\0') return def;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') {
    throw SimError(Fmt("amct kernel sim: environment %s='%s' is not an unsigned integer", name, text));
  }
  return v;
}

constexpr uint64_t kDefaultSeed = 0x5EED2201u;

inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// ---- per-thread block context ----------------------------------------------------------------
inline BlockCtx* ThreadCtx(uint32_t arenaBytes) {
  thread_local std::unique_ptr<BlockCtx> storage;
  if (!storage || storage->arenaBytes != arenaBytes) {
    std::unique_ptr<BlockCtx> c(new BlockCtx());
    void* mem = std::aligned_alloc(64, arenaBytes);
    if (mem == nullptr) throw std::bad_alloc();
    c->arena.reset(static_cast<uint8_t*>(mem));
    c->ub = c->arena.get();
    c->arenaBytes = arenaBytes;
    const size_t blocks = arenaBytes / 32;
    c->wV.assign(blocks, 0);
    c->wM2.assign(blocks, 0);
    c->rV.assign(blocks, 0);
    c->rM3.assign(blocks, 0);
    c->wS.assign(blocks, 0);
    c->rS.assign(blocks, 0);
    storage = std::move(c);
  }
  return storage.get();
}

inline void BeginBlock(BlockCtx* c, const LaunchShared& sh, uint32_t idx, BlockOutcome* out) {
  c->launch = &sh;
  c->outcome = out;
  c->blockIdx = idx;
  c->blockNum = sh.blockDim;
  c->checkSync = sh.checkSync;
  c->saturation = sh.modes.saturation;
  c->flushSubnormals = sh.modes.flushSubnormals;
  c->strictSync = sh.modes.strictSync;
  c->ubLimit = sh.ubLimit;
  c->coreKind = kCoreAiv;
  c->subBlockIdx = 0;
  c->taskRatio = 1;
  c->aicIdx = idx;
  c->mix = nullptr;
  c->ubEpoch.clear();  // a MIX AIV's core setup (sim_mix.h) sizes it
  // The UB is poisoned allocation by allocation (TPipe::InitBuffer): nothing outside an
  // allocation is reachable, and small launches do not pay for poisoning the whole arena.
  c->pipe = nullptr;
  c->pipeOffset = 0;
  c->pipeBuffers = 0;
  c->pipeFirstBufId = 0;
  std::memset(c->queBlocksPerPos, 0, sizeof(c->queBlocksPerPos));
  std::memset(c->eventAlloc, 0, sizeof(c->eventAlloc));
  c->bufGen.clear();
  c->queues.clear();
  c->exitError.clear();
  for (auto& row : c->flags) {
    for (FlagRec& f : row) f = FlagRec{};
  }
  ResetHazards(c);
  out->failed = false;
  out->error.clear();
  out->log.Clear();
  t_ctx = c;
}

// After the kernel body returned: every block must end cleanly.
inline void EndBlockChecks(BlockCtx* c) {
  static const char* const kApi = "block end";
  if (c->pipe != nullptr) Fail(kApi, "a TPipe is still live when the block ends");
  if (!c->exitError.empty()) Fail(kApi, c->exitError);
  for (int e = 0; e < kHardEvents; ++e) {
    for (int id = 0; id < kEventIds; ++id) {
      if (c->flags[e][id].set) {
        Fail(kApi, Fmt("flags: SetFlag<HardEvent::%s>(%d) is still pending (never waited for) when the block ends",
                       GetEventInfo(static_cast<AscendC::HardEvent>(e)).name, id));
      }
    }
  }
}

// Runs one block (or, in a MIX launch, one core: `setup` sets its core fields after BeginBlock;
// costSlot is where its cost result goes).
template <class F, class Setup>
inline void RunBlockWith(const LaunchShared& sh, uint32_t idx, uint32_t costSlot, BlockOutcome& out, F& fn,
                         const Setup& setup) noexcept {
  BlockCtx* c = nullptr;
  try {
    c = ThreadCtx(sh.arenaBytes);
    BeginBlock(c, sh, idx, &out);
    setup(c);
    if (sh.cost != nullptr) t_cost = c->cost = sh.cost->Begin(c->ub);
    fn();
    EndBlockChecks(c);
    if (c->cost != nullptr) sh.cost->End(costSlot, *c->cost);
  } catch (const SimError& e) {
    out.failed = true;
    out.error = e.what();
  } catch (const std::exception& e) {
    out.failed = true;
    out.error = ErrorPrefix("") + "uncaught exception in the kernel: " + e.what();
  } catch (...) {
    out.failed = true;
    out.error = ErrorPrefix("") + "uncaught non-standard exception in the kernel";
  }
  t_cost = nullptr;
  if (c != nullptr) {
    c->cost = nullptr;
    c->pipe = nullptr;
    c->launch = nullptr;
    c->outcome = nullptr;
    c->mix = nullptr;
  }
  t_ctx = nullptr;
}

template <class F>
inline void RunBlock(const LaunchShared& sh, uint32_t idx, BlockOutcome& out, F& fn) noexcept {
  if (sh.cost != nullptr && !sh.cost->Runs(idx)) return;  // cost model sampling a few blocks
  RunBlockWith(sh, idx, idx, out, fn, [](BlockCtx*) {});
}

// ---- race check ------------------------------------------------------------------------------
struct TaggedInterval {
  uint64_t lo;
  uint64_t hi;
  uint32_t block;
};

[[noreturn]] inline void RaceFail(const LaunchShared& sh, const std::string& what) {
  throw SimError(Fmt("amct kernel sim: kernel %s: race: ", sh.kernel) + what +
                 " (blocks must touch disjoint GM; AMCT_SIM_CHECK_RACES=0 disables the check)");
}

inline std::string Range(uint64_t lo, uint64_t hi) {
  return Fmt("[%#llx, %#llx)", static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi));
}

inline void RaceCheck(const LaunchShared& sh, const std::vector<BlockOutcome>& outs) {
  std::vector<TaggedInterval> writes;
  for (uint32_t b = 0; b < outs.size(); ++b) {
    for (const Interval& w : outs[b].log.writes) writes.push_back(TaggedInterval{w.lo, w.hi, b});
  }
  if (writes.empty()) return;
  bool anyScalar = false;
  for (const BlockOutcome& o : outs) anyScalar = anyScalar || !o.log.scalarReads.empty();
  std::sort(writes.begin(), writes.end(), [](const TaggedInterval& x, const TaggedInterval& y) {
    return x.lo < y.lo || (x.lo == y.lo && x.hi < y.hi);
  });
  // Write/write: sweep keeping the largest end overall and the largest end of another block.
  TaggedInterval best{0, 0, ~0u}, second{0, 0, ~0u};
  for (const TaggedInterval& w : writes) {
    if (best.block != ~0u && best.block != w.block && w.lo < best.hi) {
      RaceFail(sh, Fmt("blocks %u and %u both write GM bytes ", best.block, w.block) +
                       Range(w.lo, std::min(w.hi, best.hi)));
    }
    if (best.block == w.block && second.block != ~0u && w.lo < second.hi) {
      RaceFail(sh, Fmt("blocks %u and %u both write GM bytes ", second.block, w.block) +
                       Range(w.lo, std::min(w.hi, second.hi)));
    }
    if (best.block == ~0u) {
      best = w;
    } else if (w.block == best.block) {
      best.hi = std::max(best.hi, w.hi);
    } else if (w.hi > best.hi) {
      second = best;
      best = w;
    } else if (second.block == ~0u || w.hi > second.hi) {
      second = w;
    }
  }
  // Writes of different blocks are disjoint now: merge per block, then look reads up.
  std::vector<TaggedInterval> merged;
  for (const TaggedInterval& w : writes) {
    if (!merged.empty() && merged.back().block == w.block && w.lo <= merged.back().hi) {
      merged.back().hi = std::max(merged.back().hi, w.hi);
    } else {
      merged.push_back(w);
    }
  }
  auto lookup = [&](uint32_t b, const Interval& r, bool scalar) {
    auto it = std::lower_bound(merged.begin(), merged.end(), r.lo,
                               [](const TaggedInterval& m, uint64_t lo) { return m.hi <= lo; });
    for (; it != merged.end() && it->lo < r.hi; ++it) {
      if (scalar) {
        RaceFail(sh, Fmt("block %u reads GM bytes ", b) + Range(std::max(r.lo, it->lo), std::min(r.hi, it->hi)) +
                         Fmt(" with GlobalTensor::GetValue, but block %u writes them in this launch ([C] GetValue "
                             "only on GM unwritten during the launch)",
                             it->block));
      }
      if (it->block != b) {
        RaceFail(sh, Fmt("block %u reads GM bytes ", b) + Range(std::max(r.lo, it->lo), std::min(r.hi, it->hi)) +
                         Fmt(" that block %u writes", it->block));
      }
    }
  };
  for (uint32_t b = 0; b < outs.size(); ++b) {
    for (const Interval& r : outs[b].log.reads) lookup(b, r, false);
    if (anyScalar) {
      for (const Interval& r : outs[b].log.scalarReads) lookup(b, r, true);
    }
  }
}

inline void SetUpLaunch(LaunchShared& sh, const char* kernel, uint32_t blockDim, uint32_t aivPerBlock = 1) {
  sh.kernel = kernel != nullptr ? kernel : "(unnamed kernel)";
  if (t_ctx != nullptr) {
    throw SimError(Fmt("amct kernel sim: kernel %s: Launch called from inside a running block", sh.kernel));
  }
  // The platform as this kernel's arch sees it (its UB default and limit): the shared state
  // serves kernels of both arches in one process.
  const PlatformFacts facts = GetPlatform(__NPU_ARCH__);
  const uint32_t maxDim = facts.aivCores / std::max<uint32_t>(1, aivPerBlock);
  if (blockDim < 1 || blockDim > maxDim) {
    throw SimError(Fmt("amct kernel sim: kernel %s: blockDim %u is not in [1, %u] (AIV cores: AMCT_SIM_CORE_NUM / "
                       "SetPlatform = %u, %u AIV per block)",
                       sh.kernel, blockDim, maxDim, facts.aivCores, std::max<uint32_t>(1, aivPerBlock)));
  }
  sh.blockDim = blockDim;
  sh.ubLimit = facts.ubBytes;
  sh.arenaBytes = static_cast<uint32_t>(ArchUbBytes(__NPU_ARCH__));
  sh.poison = static_cast<uint8_t>(EnvIntIn("AMCT_SIM_POISON", 0xFF, 0, 255));
  sh.checkSync = EnvIntIn("AMCT_SIM_CHECK_SYNC", 1, 0, 1) != 0;
  sh.checkRaces = EnvIntIn("AMCT_SIM_CHECK_RACES", 1, 0, 1) != 0;
  sh.modes = GetModes();
  sh.costOnly = amct_sim_state_cost_get(nullptr) != 0 && amct_sim_state_cost_only() != 0;
  GmRegion regions[256];
  const size_t n = amct_sim_state_gm_snapshot(regions, 256);
  if (n > 256) throw SimError(Fmt("amct kernel sim: kernel %s: more than 256 GM regions registered", sh.kernel));
  sh.regions.clear();
  for (size_t i = 0; i < n; ++i) {
    const uintptr_t lo = reinterpret_cast<uintptr_t>(regions[i].ptr);
    sh.regions.push_back(RegionInfo{lo, lo + regions[i].bytes, regions[i].writable, regions[i].writable});
  }
  for (RegionInfo& r : sh.regions) {
    for (const RegionInfo& w : sh.regions) {
      if (w.writable && w.lo < r.hi && r.lo < w.hi) r.tracked = true;
    }
  }
}

}  // namespace detail

// Runs runOneBlock() once per block index in [0, blockDim); see README.md for the environment.
template <class F>
void Launch(const char* kernel, uint32_t blockDim, F&& runOneBlock) {
  using namespace detail;
  amct_sim_state_note_launch();
  LaunchShared sh;
  SetUpLaunch(sh, kernel, blockDim);
  const std::unique_ptr<CostLaunch> cost = CostLaunch::ForLaunch(sh.kernel, blockDim, sh.arenaBytes);
  sh.cost = cost.get();
  const bool serial = EnvIntIn("AMCT_SIM_SERIAL", 0, 0, 1) != 0;
  std::vector<BlockOutcome> outs(blockDim);
  if (serial) {
    const uint64_t seed = EnvU64("AMCT_SIM_SEED", kDefaultSeed);
    if (amct_sim_state_first_time(0)) {
      std::fprintf(stderr, "amct kernel sim: AMCT_SIM_SERIAL=1: blocks run one at a time in an order shuffled "
                           "with AMCT_SIM_SEED=%llu\n", static_cast<unsigned long long>(seed));
    }
    std::vector<uint32_t> order(blockDim);
    for (uint32_t i = 0; i < blockDim; ++i) order[i] = i;
    uint64_t state = seed ^ (static_cast<uint64_t>(blockDim) << 32);
    for (uint32_t i = blockDim; i > 1; --i) std::swap(order[i - 1], order[SplitMix64(&state) % i]);
    for (uint32_t b : order) RunBlock(sh, b, outs[b], runOneBlock);
  } else {
#ifdef AMCT_SIM_WITH_ATEN
    at::parallel_for(0, static_cast<int64_t>(blockDim), 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) RunBlock(sh, static_cast<uint32_t>(b), outs[b], runOneBlock);
    });
#else
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const uint32_t threads = static_cast<uint32_t>(std::min<long long>(
        EnvIntIn("AMCT_SIM_THREADS", static_cast<long long>(hw), 1, 4096), static_cast<long long>(blockDim)));
    std::atomic<uint32_t> next{0};
    auto worker = [&]() {
      for (uint32_t b = next.fetch_add(1); b < blockDim; b = next.fetch_add(1)) RunBlock(sh, b, outs[b], runOneBlock);
    };
    std::vector<std::thread> pool;
    for (uint32_t t = 1; t < threads; ++t) {
      try {
        pool.emplace_back(worker);
      } catch (const std::system_error&) {
        break;  // fewer threads: the caller and the others take the remaining blocks
      }
    }
    worker();
    for (std::thread& t : pool) t.join();
#endif
  }
  for (const BlockOutcome& o : outs) {
    if (o.failed) throw SimError(o.error);
  }
  if (sh.checkRaces) RaceCheck(sh, outs);
  if (cost) cost->Finish();
}

}  // namespace amct_sim
