// amct kernel sim: the per-block context (thread_local), error reporting, the hazard model,
// GM region checks and the GM access log used by the race check.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "amct_sim_host.h"
#include "sim_cost.h"
#include "sim_types.h"

namespace amct_sim {
namespace detail {

// ---- pipes and events ----------------------------------------------------------------------
// S, V, MTE2, MTE3 are the vector core's; MTE1, M and FIX exist on the AIC only (its cube data
// path, sim_cube.h: L1 -> L0A/L0B, Mmad, L0C -> UB). MTE2 is the AIC's GM -> L1 DMA there.
enum Pipe : uint8_t { kPipeS = 0, kPipeV = 1, kPipeMte2 = 2, kPipeMte3 = 3, kPipeMte1 = 4, kPipeM = 5, kPipeFix = 6 };
constexpr int kPipes = 7;
static_assert(int{kPipeS} == cost::kS && int{kPipeV} == cost::kV && int{kPipeMte2} == cost::kMte2 &&
                  int{kPipeMte3} == cost::kMte3 && int{kPipeMte1} == cost::kMte1 && int{kPipeM} == cost::kM &&
                  int{kPipeFix} == cost::kFix && kPipes == cost::kPipes,
              "the cost model numbers the pipes as the hazard model does");
constexpr uint32_t kHolds = 0xFFFFFFFFu;  // "this ordering always holds"
constexpr int kEventIds = 8;
constexpr int kHardEvents = static_cast<int>(AscendC::HardEvent::MAX);

inline const char* PipeName(int p) {
  static const char* const kNames[kPipes] = {"S", "V", "MTE2", "MTE3", "MTE1", "M", "FIX"};
  return (p >= 0 && p < kPipes) ? kNames[p] : "?";
}

struct EventInfo {
  bool vectorCore;  // one of the 13 vector-core events (HardEvent)
  int8_t src;       // Pipe, when vectorCore or cubeCore
  int8_t dst;
  const char* name;
  bool cubeCore = false;  // an event between the AIC's pipes (S, MTE2, MTE1, M, FIX): accepted on the AIC only
};

inline EventInfo GetEventInfo(AscendC::HardEvent e) {
  using H = AscendC::HardEvent;
  switch (e) {
    case H::MTE2_V: return {true, kPipeMte2, kPipeV, "MTE2_V"};
    case H::V_MTE2: return {true, kPipeV, kPipeMte2, "V_MTE2"};
    case H::MTE3_V: return {true, kPipeMte3, kPipeV, "MTE3_V"};
    case H::V_MTE3: return {true, kPipeV, kPipeMte3, "V_MTE3"};
    case H::V_V: return {true, kPipeV, kPipeV, "V_V"};
    case H::MTE3_MTE2: return {true, kPipeMte3, kPipeMte2, "MTE3_MTE2"};
    case H::MTE2_MTE3: return {true, kPipeMte2, kPipeMte3, "MTE2_MTE3"};
    case H::S_V: return {true, kPipeS, kPipeV, "S_V"};
    case H::V_S: return {true, kPipeV, kPipeS, "V_S"};
    case H::S_MTE2: return {true, kPipeS, kPipeMte2, "S_MTE2"};
    case H::MTE2_S: return {true, kPipeMte2, kPipeS, "MTE2_S"};
    case H::S_MTE3: return {true, kPipeS, kPipeMte3, "S_MTE3"};
    case H::MTE3_S: return {true, kPipeMte3, kPipeS, "MTE3_S"};
    case H::MTE2_MTE1: return {false, kPipeMte2, kPipeMte1, "MTE2_MTE1", true};
    case H::MTE1_MTE2: return {false, kPipeMte1, kPipeMte2, "MTE1_MTE2", true};
    case H::MTE1_M: return {false, kPipeMte1, kPipeM, "MTE1_M", true};
    case H::M_MTE1: return {false, kPipeM, kPipeMte1, "M_MTE1", true};
    case H::M_V: return {false, 0, 0, "M_V"};
    case H::V_M: return {false, 0, 0, "V_M"};
    case H::MTE3_MTE1: return {false, 0, 0, "MTE3_MTE1"};
    case H::MTE1_MTE3: return {false, 0, 0, "MTE1_MTE3"};
    case H::MTE1_V: return {false, 0, 0, "MTE1_V"};
    case H::MTE2_M: return {false, kPipeMte2, kPipeM, "MTE2_M", true};
    case H::M_MTE2: return {false, kPipeM, kPipeMte2, "M_MTE2", true};
    case H::V_MTE1: return {false, 0, 0, "V_MTE1"};
    case H::M_FIX: return {false, kPipeM, kPipeFix, "M_FIX", true};
    case H::FIX_M: return {false, kPipeFix, kPipeM, "FIX_M", true};
    case H::MTE2_FIX: return {false, kPipeMte2, kPipeFix, "MTE2_FIX", true};
    case H::FIX_MTE2: return {false, kPipeFix, kPipeMte2, "FIX_MTE2", true};
    case H::FIX_S: return {false, kPipeFix, kPipeS, "FIX_S", true};
    case H::M_S: return {false, kPipeM, kPipeS, "M_S", true};
    case H::FIX_MTE3: return {false, 0, 0, "FIX_MTE3"};
    case H::MTE1_FIX: return {false, kPipeMte1, kPipeFix, "MTE1_FIX", true};
    case H::FIX_MTE1: return {false, kPipeFix, kPipeMte1, "FIX_MTE1", true};
    case H::FIX_FIX: return {false, kPipeFix, kPipeFix, "FIX_FIX", true};
    default: return {false, 0, 0, "MAX"};
  }
}

inline const char* PositionName(AscendC::TPosition p) {
  using P = AscendC::TPosition;
  switch (p) {
    case P::GM: return "GM";
    case P::VECIN: return "VECIN";
    case P::VECOUT: return "VECOUT";
    case P::VECCALC: return "VECCALC";
    case P::A1: return "A1";
    case P::B1: return "B1";
    case P::A2: return "A2";
    case P::B2: return "B2";
    case P::CO1: return "CO1";
    default: return "non-vector position";
  }
}

// ---- messages ------------------------------------------------------------------------------
inline std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string Fmt(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0) return std::string("(format error)");
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(&out[0], out.size(), fmt, ap);
  va_end(ap);
  out.resize(static_cast<size_t>(n));
  return out;
}

// ---- launch-wide and per-block state ---------------------------------------------------------
struct RegionInfo {
  uintptr_t lo;
  uintptr_t hi;
  bool writable;
  bool tracked;  // writable, or overlapping a writable region: accesses can race
};

struct Interval {
  uint64_t lo;
  uint64_t hi;
};

// One DMA's GM footprint: `rows` bursts of rowBytes at lo + i * pitch (pitch >= rowBytes).
struct GmDma {
  uint64_t lo;
  uint64_t rowBytes;
  uint64_t pitch;
  uint32_t rows;
  uint32_t seq;
  uint64_t Hi() const { return lo + static_cast<uint64_t>(rows - 1) * pitch + rowBytes; }
};

// Does burst [a, a + len) meet any row of d?
inline bool BurstMeets(const GmDma& d, uint64_t a, uint64_t len) {
  if (a + len <= d.lo || a >= d.Hi()) return false;
  if (d.rows == 1) return true;
  // first row j whose end is beyond a: d.lo + j * pitch + rowBytes > a
  uint64_t j = 0;
  if (a + 1 > d.lo + d.rowBytes) j = (a + 1 - d.lo - d.rowBytes + d.pitch - 1) / d.pitch;
  if (j >= d.rows) return false;
  return d.lo + j * d.pitch < a + len;
}

inline bool DmaOverlap(const GmDma& x, const GmDma& y) {
  if (x.lo >= y.Hi() || y.lo >= x.Hi()) return false;
  const GmDma& few = x.rows <= y.rows ? x : y;
  const GmDma& many = x.rows <= y.rows ? y : x;
  for (uint32_t i = 0; i < few.rows; ++i) {
    if (BurstMeets(many, few.lo + static_cast<uint64_t>(i) * few.pitch, few.rowBytes)) return true;
  }
  return false;
}

// GM accesses of one block, for the post-launch race check (only tracked regions).
struct GmLog {
  std::vector<Interval> reads;        // DMA reads (MTE2)
  std::vector<Interval> writes;       // DMA writes (MTE3)
  std::vector<Interval> scalarReads;  // GlobalTensor::GetValue: must not meet any write of the launch
  void Clear() {
    reads.clear();
    writes.clear();
    scalarReads.clear();
  }
};

inline void AddInterval(std::vector<Interval>& v, uint64_t lo, uint64_t hi) {
  if (!v.empty()) {
    Interval& last = v.back();
    if (lo <= last.hi && hi >= last.lo) {
      if (lo < last.lo) last.lo = lo;
      if (hi > last.hi) last.hi = hi;
      return;
    }
  }
  v.push_back(Interval{lo, hi});
}

struct LaunchShared {
  const char* kernel = "";
  uint32_t blockDim = 0;
  uint64_t ubLimit = 0;  // allocation limit (GetPlatform().ubBytes)
  uint32_t arenaBytes = 0;
  uint8_t poison = 0xFF;
  bool checkSync = true;
  bool checkRaces = true;
  HardwareModes modes{false, false, false};
  std::vector<RegionInfo> regions;
  CostLaunch* cost = nullptr;  // NPU cost model of this launch (sim_cost.h), null when off
  uint32_t mixRatio = 0;       // AIVs per AIC of a MIX launch (sim_mix.h); 0: a vector-only launch
  bool costOnly = false;       // cost model on and cost-only: Matmul skips its arithmetic
};

struct BlockOutcome {
  bool failed = false;
  std::string error;
  GmLog log;
};

// What one pipe knows at a Set/EnQue/Free: k[p] = its own op count, other entries its knowledge.
struct Snap {
  bool valid = false;
  uint32_t k[kPipes] = {0, 0, 0, 0};
};

enum QueueBlockState : uint8_t { kQbIdle = 0, kQbAllocated, kQbQueued, kQbDequeued };

struct QueueBlockRec {
  uint32_t offset = 0;  // UB byte offset
  uint32_t bytes = 0;   // roundup32(len)
  int32_t bufId = -1;
  uint8_t state = kQbIdle;
  uint32_t viewOffset = 0;  // the tensor view given to EnQue (bytes)
  uint32_t viewBytes = 0;
  Snap enq;    // producer's knowledge at EnQue (consumer learns it at DeQue)
  Snap freed;  // consumer's knowledge at FreeTensor (producer learns it at the next AllocTensor)
};

struct QueueRec {
  uint32_t pipeSerial = 0;
  AscendC::TPosition pos = AscendC::TPosition::VECIN;
  int32_t depth = 1;
  uint32_t len = 0;
  std::vector<QueueBlockRec> blocks;
  std::deque<int> idle;    // block indices, FIFO
  std::deque<int> queued;  // block indices, FIFO
};

struct FlagRec {
  bool set = false;
  Snap snap;
};

// GM ordering between the cores of one AI core (MIX launches; sim_gm_order.h checks it after the
// launch). A core's GM accesses on tracked regions are kept in groups: consecutive accesses of one
// pipe and kind with no cross-core flag in between share their ordering facts. A group is
// "covered" by the core's first CrossCoreSetFlag whose pipe had completed it (cover = that set's
// 1-based number, 0: not yet); vc[vcState][w] is how many of core w's sets this core had received
// (through CrossCoreWaitFlag, transitively) when the group's accesses were issued.
struct CoreGmGroup {
  uint8_t pipe;  // Pipe: MTE2 reads, MTE3 writes (on the AIC: Matmul's GM loads and its FIX writes)
  bool write;
  uint32_t vcState;
  uint32_t setsBefore;
  uint32_t maxSeq;
  uint32_t cover;
  uint64_t lo, hi;  // hull of the spans
  std::vector<Interval> spans;
};

struct CoreGmOrder {
  uint32_t self = 0;  // core id in the MIX launch (MixGroup::CoreId)
  uint32_t sets = 0;  // CrossCoreSetFlag calls so far
  std::vector<std::vector<uint32_t>> vc;  // vc[0] all zero; one more state per wait that taught something
  std::vector<CoreGmGroup> groups;
  std::vector<uint32_t> uncovered;  // indices of groups with cover == 0
};

// The core a block runs on: an AIV (every launch of a vector kernel) or, in a MIX launch
// (sim_mix.h), the AIC or one of the AIVs of an AI core.
enum CoreKind : uint8_t { kCoreAiv = 0, kCoreAic = 1 };
struct MixGroup;  // sim_mix.h

struct BlockCtx {
  const LaunchShared* launch = nullptr;
  BlockOutcome* outcome = nullptr;
  uint32_t blockIdx = 0;  // GetBlockIdx(): in MIX launches, an AIV's is aicIdx * ratio + subBlockIdx
  uint32_t blockNum = 0;  // GetBlockNum(): the launch's blockDim (in MIX launches, the AIC count)
  uint8_t coreKind = kCoreAiv;
  uint32_t subBlockIdx = 0;    // GetSubBlockIdx()
  uint32_t taskRatio = 1;      // GetTaskRatio(): AIVs per AIC in a MIX launch (1 on the AIC)
  uint32_t aicIdx = 0;         // the AI core (group) of a MIX launch
  MixGroup* mix = nullptr;     // the MIX launch's shared state, null outside MIX launches
  bool checkSync = true;
  // Hardware modes of this launch (amct_sim::HardwareModes); saturation is the block's current
  // FLOAT saturation flag (SetSaturationFlag on dav-2201 changes it).
  bool saturation = false;
  bool flushSubnormals = false;
  bool strictSync = false;  // with checkSync: S pairs do not hold, scalar UB accesses are tracked

  // UB arena (arch size), allocation limit
  uint8_t* ub = nullptr;
  uint32_t arenaBytes = 0;
  uint64_t ubLimit = 0;

  // TPipe state (at most one live pipe)
  void* pipe = nullptr;  // AscendC::TPipe*
  uint32_t pipeSerial = 0;
  uint32_t pipeOffset = 0;   // bump pointer
  uint32_t pipeBuffers = 0;  // buffers allocated (TQue blocks + TBufs)
  uint32_t pipeFirstBufId = 0;
  uint8_t queBlocksPerPos[static_cast<int>(AscendC::TPosition::MAX)] = {};
  uint8_t eventAlloc[kHardEvents] = {};  // AllocEventID bitmask per event
  std::vector<uint32_t> bufGen;          // generation per buffer id (stale-tensor check)
  std::vector<QueueRec> queues;
  std::string exitError;  // recorded by destructors (cannot throw), reported at block end

  // flags and the hazard model
  FlagRec flags[kHardEvents][kEventIds];
  uint32_t count[kPipes] = {0, 0, 0, 0};
  uint32_t known[kPipes][kPipes];  // known[q][p] = done[p][q]: highest p op known complete to q
  std::vector<uint32_t> wV, wM2, rV, rM3;  // per 32-B UB block: last V/MTE2 write, last V/MTE3 read
  std::vector<uint32_t> wS, rS;            // ... last S write / read (strict sync only)
  uint32_t hazardBlocksUsed = 0;            // 32-B blocks ever allocated since the last reset
  // The newest seq in wM2 / rM3 (seqs only grow): when the consumer knows it complete, no block
  // can fail that check, and V accesses skip the per-block scan (they still record themselves).
  uint32_t newestWM2 = 0, newestRM3 = 0;
  std::vector<GmDma> gmM3Writes, gmM2Reads;  // DMAs of this block on tracked GM (hazard model)
  size_t gmPruneAt = 64;
  uint32_t allDone[kPipes] = {0, 0, 0, 0};  // each pipe's count at the last PipeBarrier<PIPE_ALL>
  CoreGmOrder* gmOrder = nullptr;           // MIX launches with the sync check on (sim_gm_order.h)

  std::unique_ptr<uint8_t, void (*)(void*)> arena{nullptr, std::free};
  CostBlock* cost = nullptr;  // this block's NPU cost timeline (sim_cost.h), null when off

  // The AIC's cube buffers (sim_cube.h), allocated on the first cube-position InitBuffer:
  // kCubeL1 (TPosition::A1, ::B1), kCubeL0a (::A2), kCubeL0b (::B2), kCubeL0c (::CO1); each with a TPipe bump pointer
  // and, per 32-B block, the op number of its last write and last read (the cube hazard model).
  std::vector<uint8_t> cubeMem[4];
  uint32_t cubeOffset[4] = {0, 0, 0, 0};
  std::vector<uint32_t> cubeW[4], cubeR[4];
  // The latest Mmad's op number and L0C bytes (Mmad.md: small accumulating Mmads need
  // PipeBarrier<PIPE_M> between them; sim_cube.h CheckSmallAccumulation).
  uint32_t lastMmadSeq = 0, lastMmadOff = 0;
  uint64_t lastMmadBytes = 0;
  // An AIV of a MIX launch with the sync check on: per 32-B UB block, 1 + its CrossCoreSetFlag count
  // at its last V/MTE2/MTE3 access (0: none since the last Fixpipe write it received; sim_mix.h).
  std::vector<uint32_t> ubEpoch;
};

inline thread_local BlockCtx* t_ctx = nullptr;

// ---- errors ----------------------------------------------------------------------------------
inline std::string ErrorPrefix(const char* api) {
  const BlockCtx* c = t_ctx;
  std::string s = "amct kernel sim: ";
  if (c != nullptr && c->launch != nullptr) {
    if (c->mix == nullptr) {
      s += Fmt("kernel %s, block %u of %u: ", c->launch->kernel, c->blockIdx, c->blockNum);
    } else if (c->coreKind == kCoreAic) {
      s += Fmt("kernel %s, AIC %u of %u: ", c->launch->kernel, c->aicIdx, c->blockNum);
    } else {
      s += Fmt("kernel %s, AIV %u (AIC %u, sub-block %u) of %u x %u: ", c->launch->kernel, c->blockIdx, c->aicIdx,
               c->subBlockIdx, c->blockNum, c->launch->mixRatio);
    }
  }
  if (api != nullptr && api[0] != '\0') {
    s += api;
    s += ": ";
  }
  return s;
}

[[noreturn]] __attribute__((noinline, cold)) inline void Fail(const char* api, const std::string& msg) {
  throw SimError(ErrorPrefix(api) + msg);
}

// The context of the running block; outside Launch -> SimError.
inline BlockCtx* Ctx(const char* api) {
  BlockCtx* c = t_ctx;
  if (__builtin_expect(c == nullptr, 0)) Fail(api, "called outside amct_sim::Launch (no block is running)");
  return c;
}

// ---- hazard model -----------------------------------------------------------------------------
inline uint32_t BeginOp(BlockCtx* c, Pipe p) { return ++c->count[p]; }

inline Snap TakeSnap(const BlockCtx* c, Pipe p) {
  Snap s;
  s.valid = true;
  for (int r = 0; r < kPipes; ++r) s.k[r] = c->known[p][r];
  s.k[p] = c->count[p];
  return s;
}

inline void MergeSnap(BlockCtx* c, Pipe q, const Snap& s) {
  if (!s.valid) return;
  for (int r = 0; r < kPipes; ++r) {
    if (s.k[r] > c->known[q][r]) c->known[q][r] = s.k[r];
  }
}

inline void ResetHazards(BlockCtx* c) {
  for (int q = 0; q < kPipes; ++q) {
    c->count[q] = 0;
    for (int p = 0; p < kPipes; ++p) c->known[q][p] = 0;
    if (!c->strictSync) {
      c->known[q][kPipeS] = kHolds;  // pairs with S always hold (bisheng auto-sync)
      c->known[kPipeS][q] = kHolds;
    }
  }
  c->known[kPipeS][kPipeS] = kHolds;
  c->known[kPipeV][kPipeV] = kHolds;  // V -> V holds (2201 auto-sync, 3510 hardware)
  c->gmM3Writes.clear();
  c->gmM2Reads.clear();
  c->gmPruneAt = 64;
  for (int p = 0; p < kPipes; ++p) c->allDone[p] = 0;
  c->gmOrder = nullptr;  // a MIX launch's core setup attaches its own
  // Only blocks inside an allocation were ever touched: reset those (cheap for small launches).
  const size_t used = std::min<size_t>(c->hazardBlocksUsed, c->wV.size());
  std::fill(c->wV.begin(), c->wV.begin() + used, 0u);
  std::fill(c->wM2.begin(), c->wM2.begin() + used, 0u);
  std::fill(c->rV.begin(), c->rV.begin() + used, 0u);
  std::fill(c->rM3.begin(), c->rM3.begin() + used, 0u);
  if (c->strictSync) {
    std::fill(c->wS.begin(), c->wS.begin() + used, 0u);
    std::fill(c->rS.begin(), c->rS.begin() + used, 0u);
  }
  c->hazardBlocksUsed = 0;
  c->newestWM2 = c->newestRM3 = 0;
}

inline std::string SyncHint(int producer, int consumer) {
  if (producer == consumer) {
    return Fmt("overlapping writes of one DMA pipe need PipeBarrier<PIPE_%s>() between them", PipeName(producer));
  }
  std::string hint = Fmt("missing SetFlag/WaitFlag<HardEvent::%s_%s>", PipeName(producer), PipeName(consumer));
  if ((producer == kPipeMte2 && consumer == kPipeV) || (producer == kPipeV && consumer == kPipeMte2)) {
    hint += " (or a VECIN TQue EnQue/DeQue, FreeTensor/AllocTensor)";
  } else if ((producer == kPipeV && consumer == kPipeMte3) || (producer == kPipeMte3 && consumer == kPipeV)) {
    hint += " (or a VECOUT TQue EnQue/DeQue, FreeTensor/AllocTensor)";
  }
  return hint;
}

[[noreturn]] __attribute__((noinline, cold)) inline void HazardFail(const char* api, Pipe q, bool write,
                                                                    const char* kind, int p, uint32_t byteOff,
                                                                    uint32_t seq, uint32_t knownSeq) {
  Fail(api, Fmt("sync: pipe %s %s UB bytes [%u, %u) %s by %s op #%u, but only %s ops <= %u are known complete "
                "to %s: %s before this access (AMCT_SIM_CHECK_SYNC=0 disables the check)",
                PipeName(q), write ? "writes" : "reads", byteOff, byteOff + 32, kind, PipeName(p), seq,
                PipeName(p), knownSeq, PipeName(q), SyncHint(p, q).c_str()));
}

// Finds the first offending 32-B block of an access that failed the fast check, and reports it
// (cross-pipe conflicts before same-pipe ones).
[[noreturn]] __attribute__((noinline, cold)) inline void ReportUbHazard(BlockCtx* c, const char* api, Pipe q,
                                                                        bool write, uint32_t b0, uint32_t b1) {
  const uint32_t* K = c->known[q];
  for (uint32_t b = b0; b < b1; ++b) {
    const uint32_t off = b * 32;
    if (q != kPipeV && c->wV[b] > K[kPipeV]) HazardFail(api, q, write, "written", kPipeV, off, c->wV[b], K[kPipeV]);
    if (q != kPipeMte2 && c->wM2[b] > K[kPipeMte2]) {
      HazardFail(api, q, write, "written", kPipeMte2, off, c->wM2[b], K[kPipeMte2]);
    }
    if (write) {
      if (q != kPipeV && c->rV[b] > K[kPipeV]) HazardFail(api, q, write, "read", kPipeV, off, c->rV[b], K[kPipeV]);
      if (q != kPipeMte3 && c->rM3[b] > K[kPipeMte3]) {
        HazardFail(api, q, write, "read", kPipeMte3, off, c->rM3[b], K[kPipeMte3]);
      }
    }
  }
  for (uint32_t b = b0; b < b1; ++b) {
    if (q == kPipeMte2 && c->wM2[b] > K[kPipeMte2]) {
      HazardFail(api, q, write, "written", kPipeMte2, b * 32, c->wM2[b], K[kPipeMte2]);
    }
  }
  Fail(api, "sync: internal error locating a hazard");
}

// Strict sync: pipe q accesses 32-B blocks [b0, b1), which the scalar unit may have written (or,
// for a write, read) without an S -> q flag since.
inline void StrictScalarCheck(BlockCtx* c, Pipe q, bool write, uint32_t b0, uint32_t b1, const char* api) {
  const uint32_t tS = c->known[q][kPipeS];
  for (uint32_t b = b0; b < b1; ++b) {
    if (c->wS[b] > tS) HazardFail(api, q, write, "written", kPipeS, b * 32, c->wS[b], tS);
    if (write && c->rS[b] > tS) HazardFail(api, q, write, "read", kPipeS, b * 32, c->rS[b], tS);
  }
}

// Strict sync: one GetValue/SetValue (pipe S) of UB bytes [off, off + bytes): the vector and DMA
// pipes' accesses must be known complete to S (an X_S flag), and the access is recorded.
inline void ScalarUbAccess(BlockCtx* c, uint32_t off, uint32_t bytes, bool write, const char* api) {
  if (!c->checkSync) return;
  const uint32_t seq = BeginOp(c, kPipeS);
  const uint32_t* K = c->known[kPipeS];
  const uint32_t b0 = off >> 5;
  const uint32_t b1 = (off + bytes + 31) >> 5;
  for (uint32_t b = b0; b < b1; ++b) {
    if (c->wV[b] > K[kPipeV]) HazardFail(api, kPipeS, write, "written", kPipeV, b * 32, c->wV[b], K[kPipeV]);
    if (c->wM2[b] > K[kPipeMte2]) HazardFail(api, kPipeS, write, "written", kPipeMte2, b * 32, c->wM2[b], K[kPipeMte2]);
    if (write && c->rV[b] > K[kPipeV]) HazardFail(api, kPipeS, write, "read", kPipeV, b * 32, c->rV[b], K[kPipeV]);
    if (write && c->rM3[b] > K[kPipeMte3]) {
      HazardFail(api, kPipeS, write, "read", kPipeMte3, b * 32, c->rM3[b], K[kPipeMte3]);
    }
    (write ? c->wS : c->rS)[b] = seq;
  }
}

// MIX AIVs: the access epoch of UB bytes [off, off + bytes) (checked against the AIC's Fixpipe
// L0C -> UB writes when the AIV receives them, sim_mix.h).
__attribute__((noinline)) inline void MarkUbEpoch(BlockCtx* c, uint32_t off, uint32_t bytes) {
  if (bytes == 0 || c->gmOrder == nullptr) return;
  const uint32_t b0 = off >> 5, b1 = std::min<uint32_t>((off + bytes + 31) >> 5, static_cast<uint32_t>(c->ubEpoch.size()));
  if (b0 < b1) std::fill(c->ubEpoch.begin() + b0, c->ubEpoch.begin() + b1, c->gmOrder->sets + 1);
}

// Pipe q (V or MTE3) reads UB bytes [off, off + bytes) in its op `seq`.
inline void UbRead(BlockCtx* c, Pipe q, uint32_t seq, uint32_t off, uint32_t bytes, const char* api) {
  AMCT_SIM_COST(c->cost, Stamp(q, off, bytes, false));
  if (__builtin_expect(!c->ubEpoch.empty(), 0)) MarkUbEpoch(c, off, bytes);
  if (!c->checkSync || bytes == 0) return;
  const uint32_t b0 = off >> 5;
  const uint32_t b1 = (off + bytes + 31) >> 5;
  if (__builtin_expect(c->strictSync, 0)) StrictScalarCheck(c, q, false, b0, b1, api);
  const uint32_t* __restrict wV = c->wV.data();
  const uint32_t* __restrict wM2 = c->wM2.data();
  uint32_t bad = 0;
  if (q == kPipeV) {
    const uint32_t tM2 = c->known[kPipeV][kPipeMte2];
    if (c->newestWM2 > tM2) {
      for (uint32_t b = b0; b < b1; ++b) bad |= static_cast<uint32_t>(wM2[b] > tM2);
    }
    if (__builtin_expect(bad != 0, 0)) ReportUbHazard(c, api, q, false, b0, b1);
    std::fill(c->rV.begin() + b0, c->rV.begin() + b1, seq);
  } else {
    const uint32_t tV = c->known[q][kPipeV];
    const uint32_t tM2 = c->known[q][kPipeMte2];
    for (uint32_t b = b0; b < b1; ++b) bad |= static_cast<uint32_t>(wV[b] > tV) | static_cast<uint32_t>(wM2[b] > tM2);
    if (__builtin_expect(bad != 0, 0)) ReportUbHazard(c, api, q, false, b0, b1);
    std::fill(c->rM3.begin() + b0, c->rM3.begin() + b1, seq);
    c->newestRM3 = seq;
  }
}

// Pipe q (V or MTE2) writes UB bytes [off, off + bytes) in its op `seq`.
inline void UbWrite(BlockCtx* c, Pipe q, uint32_t seq, uint32_t off, uint32_t bytes, const char* api) {
  AMCT_SIM_COST(c->cost, Stamp(q, off, bytes, true));
  if (__builtin_expect(!c->ubEpoch.empty(), 0)) MarkUbEpoch(c, off, bytes);
  if (!c->checkSync || bytes == 0) return;
  const uint32_t b0 = off >> 5;
  const uint32_t b1 = (off + bytes + 31) >> 5;
  if (__builtin_expect(c->strictSync, 0)) StrictScalarCheck(c, q, true, b0, b1, api);
  const uint32_t* __restrict wV = c->wV.data();
  const uint32_t* __restrict wM2 = c->wM2.data();
  const uint32_t* __restrict rV = c->rV.data();
  const uint32_t* __restrict rM3 = c->rM3.data();
  const uint32_t* K = c->known[q];
  const uint32_t tV = K[kPipeV];
  const uint32_t tM2 = K[kPipeMte2];
  const uint32_t tM3 = K[kPipeMte3];
  uint32_t bad = 0;
  if (q == kPipeV) {
    if (c->newestWM2 > tM2 || c->newestRM3 > tM3) {
      for (uint32_t b = b0; b < b1; ++b) {
        bad |= static_cast<uint32_t>(wM2[b] > tM2) | static_cast<uint32_t>(rM3[b] > tM3);
      }
    }
    if (__builtin_expect(bad != 0, 0)) ReportUbHazard(c, api, q, true, b0, b1);
    std::fill(c->wV.begin() + b0, c->wV.begin() + b1, seq);
  } else {
    for (uint32_t b = b0; b < b1; ++b) {
      bad |= static_cast<uint32_t>(wV[b] > tV) | static_cast<uint32_t>(wM2[b] > tM2) |
             static_cast<uint32_t>(rV[b] > tV) | static_cast<uint32_t>(rM3[b] > tM3);
    }
    if (__builtin_expect(bad != 0, 0)) ReportUbHazard(c, api, q, true, b0, b1);
    std::fill(c->wM2.begin() + b0, c->wM2.begin() + b1, seq);
    c->newestWM2 = seq;
  }
}

// ---- GM regions, extents, the GM hazard lists and the race log --------------------------------
[[noreturn]] __attribute__((noinline, cold)) inline void GmRegionFail(const BlockCtx* c, const char* api,
                                                                      uintptr_t lo, uintptr_t hi, bool write) {
  bool inReadOnly = false;
  for (const RegionInfo& r : c->launch->regions) {
    if (lo >= r.lo && hi <= r.hi) inReadOnly = true;
  }
  std::string list;
  for (const RegionInfo& r : c->launch->regions) {
    if (!list.empty()) list += ", ";
    list += Fmt("[%#llx, +%llu) %s", static_cast<unsigned long long>(r.lo),
                static_cast<unsigned long long>(r.hi - r.lo), r.writable ? "rw" : "ro");
  }
  if (list.empty()) list = "none (the host glue must open an amct_sim::GmScope)";
  if (write && inReadOnly) {
    Fail(api, Fmt("GM write of bytes [%#llx, +%llu) into a read-only region (inputs and tiling are read-only; "
                  "registered: %s)",
                  static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi - lo), list.c_str()));
  }
  Fail(api, Fmt("GM %s of bytes [%#llx, +%llu) is outside every registered GM region (registered: %s)",
                write ? "write" : "read", static_cast<unsigned long long>(lo),
                static_cast<unsigned long long>(hi - lo), list.c_str()));
}

// The region holding all of [lo, hi) (writable when write); SimError if none.
inline const RegionInfo* GmFindRegion(const BlockCtx* c, const char* api, uintptr_t lo, uintptr_t hi, bool write) {
  for (const RegionInfo& r : c->launch->regions) {
    if (lo >= r.lo && hi <= r.hi && (r.writable || !write)) return &r;
  }
  GmRegionFail(c, api, lo, hi, write);
}

// [lo, hi) must lie in the SetGlobalBuffer extent [extLo, extHi).
inline void GmCheckExtent(const char* api, uintptr_t lo, uintptr_t hi, uintptr_t extLo, uintptr_t extHi) {
  if (__builtin_expect(lo < extLo || hi > extHi, 0)) {
    Fail(api, Fmt("bounds: GM bytes [%#llx, +%llu) leave the GlobalTensor's SetGlobalBuffer extent [%#llx, +%llu)",
                  static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi - lo),
                  static_cast<unsigned long long>(extLo), static_cast<unsigned long long>(extHi - extLo)));
  }
}

inline void PruneGmLists(BlockCtx* c) {
  const uint32_t* K2 = c->known[kPipeMte2];
  const uint32_t* K3 = c->known[kPipeMte3];
  const uint32_t wDone = std::min(K2[kPipeMte3], K3[kPipeMte3]);
  const uint32_t rDone = K3[kPipeMte2];
  c->gmM3Writes.erase(std::remove_if(c->gmM3Writes.begin(), c->gmM3Writes.end(),
                                     [&](const GmDma& d) { return d.seq <= wDone; }),
                      c->gmM3Writes.end());
  c->gmM2Reads.erase(std::remove_if(c->gmM2Reads.begin(), c->gmM2Reads.end(),
                                    [&](const GmDma& d) { return d.seq <= rDone; }),
                     c->gmM2Reads.end());
  c->gmPruneAt = std::max<size_t>(64, 2 * (c->gmM3Writes.size() + c->gmM2Reads.size()));
}

[[noreturn]] __attribute__((noinline, cold)) inline void GmHazardFail(const char* api, Pipe q, const char* what,
                                                                      int p, const GmDma& s, const GmDma& d,
                                                                      uint32_t knownSeq) {
  Fail(api, Fmt("sync: pipe %s %s GM bytes [%#llx, %#llx), overlapping bytes [%#llx, %#llx) %s by %s op #%u, "
                "but only %s ops <= %u are known complete to %s: %s (AMCT_SIM_CHECK_SYNC=0 disables the check)",
                PipeName(q), q == kPipeMte3 ? "writes" : "reads", static_cast<unsigned long long>(d.lo),
                static_cast<unsigned long long>(d.Hi()), static_cast<unsigned long long>(s.lo),
                static_cast<unsigned long long>(s.Hi()), what, PipeName(p), s.seq, PipeName(p), knownSeq,
                PipeName(q), SyncHint(p, q).c_str()));
}

// A GM access of this core (MIX launches): op `seq` of pipe q, `rows` bursts of rowBytes at
// lo + i * pitch, joined to the last group when nothing that orders cores happened in between.
inline void RecordCrossCoreGm(BlockCtx* c, Pipe q, uint32_t seq, uint64_t lo, uint64_t rowBytes, uint64_t pitch,
                              uint32_t rows) {
  CoreGmOrder* o = c->gmOrder;
  const bool write = q == kPipeMte3;
  const uint32_t state = static_cast<uint32_t>(o->vc.size() - 1);
  if (o->groups.empty() || o->groups.back().pipe != q || o->groups.back().vcState != state ||
      o->groups.back().setsBefore != o->sets) {
    o->groups.push_back(CoreGmGroup{static_cast<uint8_t>(q), write, state, o->sets, seq, 0, lo, lo, {}});
    o->uncovered.push_back(static_cast<uint32_t>(o->groups.size() - 1));
  }
  CoreGmGroup& g = o->groups.back();
  g.maxSeq = seq;
  for (uint32_t i = 0; i < rows; ++i) {
    const uint64_t a = lo + static_cast<uint64_t>(i) * pitch;
    AddInterval(g.spans, a, a + rowBytes);
    if (a < g.lo) g.lo = a;
    if (a + rowBytes > g.hi) g.hi = a + rowBytes;
  }
}

// One DMA on GM (region r found by GmFindRegion for its hull): q = MTE2 (reads) or MTE3 (writes)
// `rows` bursts of rowBytes at lo + i * pitch. Logs the bursts for the race check and applies
// the hazard model to GM (MTE3 -> MTE2 on the same GM, overlapping MTE3 writes, MTE2 -> MTE3).
inline void GmDmaAccess(BlockCtx* c, const RegionInfo* r, Pipe q, uint32_t seq, uint64_t lo, uint64_t rowBytes,
                        uint64_t pitch, uint32_t rows, const char* api) {
  if (!r->tracked || rows == 0 || rowBytes == 0) return;
  if (pitch == rowBytes) {  // contiguous: one burst
    rowBytes *= rows;
    pitch = rowBytes;
    rows = 1;
  }
  std::vector<Interval>& log = (q == kPipeMte3) ? c->outcome->log.writes : c->outcome->log.reads;
  for (uint32_t i = 0; i < rows; ++i) {
    const uint64_t a = lo + static_cast<uint64_t>(i) * pitch;
    AddInterval(log, a, a + rowBytes);
  }
  if (!c->checkSync) return;
  if (c->gmOrder != nullptr) RecordCrossCoreGm(c, q, seq, lo, rowBytes, pitch, rows);
  const GmDma d{lo, rowBytes, pitch, rows, seq};
  if (q == kPipeMte2) {
    const uint32_t t = c->known[kPipeMte2][kPipeMte3];
    for (const GmDma& s : c->gmM3Writes) {
      if (s.seq > t && DmaOverlap(s, d)) GmHazardFail(api, q, "written", kPipeMte3, s, d, t);
    }
    c->gmM2Reads.push_back(d);
  } else {
    const uint32_t tw = c->known[kPipeMte3][kPipeMte3];
    const uint32_t tr = c->known[kPipeMte3][kPipeMte2];
    for (const GmDma& s : c->gmM3Writes) {
      if (s.seq > tw && DmaOverlap(s, d)) GmHazardFail(api, q, "written", kPipeMte3, s, d, tw);
    }
    for (const GmDma& s : c->gmM2Reads) {
      if (s.seq > tr && DmaOverlap(s, d)) GmHazardFail(api, q, "read", kPipeMte2, s, d, tr);
    }
    c->gmM3Writes.push_back(d);
  }
  if (c->gmM3Writes.size() + c->gmM2Reads.size() > c->gmPruneAt) PruneGmLists(c);
}

// ---- small helpers -------------------------------------------------------------------------
inline uint64_t RoundUp32(uint64_t v) { return (v + 31) & ~uint64_t{31}; }

}  // namespace detail
}  // namespace amct_sim
