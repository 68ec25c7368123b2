// amct kernel sim: MIX launches (an AIC and its AIVs per AI core, running concurrently), the core
// queries, the cross-core flags and the workspace accessors. Internal header: kernels include
// "kernel_operator.h".
//
// Sources (CANN asc-devkit, head of July 2026): KernelMetaType and KERNEL_TASK_TYPE_DEFAULT
// (impl/basic_api/utils/kernel_utils_macros.h), ASCEND_IS_AIC/AIV (impl/utils/sys_macros.h),
// GetBlockIdx/GetSubBlockIdx/GetTaskRatio (include/basic_api/kernel_operator_sys_var_intf.h;
// dav_3510/kernel_operator_sys_var_impl.h: an AIV's block index is block_idx * subblockdim +
// subblockid, the AIC's ratio is 1), CrossCoreSetFlag/CrossCoreWaitFlag (include/basic_api/
// kernel_operator_block_sync_intf.h, docs: CrossCoreSetFlag(ISASI).md, 关键特性说明.md):
//  mode 0: all AICs (or all AIVs) of the launch meet: when each has set, each one's counter +1;
//  mode 1: the AIVs of one AI core meet likewise;
//  mode 2: an AIC's set raises the counter of each of its AIVs; when all of its AIVs have set,
//          the AIC's counter +1;
//  mode 4 (dav-3510): AIC flag f in 0-10 -> AIV0's f, 16-26 -> AIV1's f - 16; AIV s flag f in
//          0-10 -> the AIC's f + 16 * s;
//  a wait blocks until its counter is non-zero and takes one; flag ids 0-15 (modes 0-2); each
//  counter counts 0-15 (more is a hardware error); PIPE_S/PIPE_ALL are not allowed in modes 0-2.
// A wait no core can satisfy any more (every running core waits) is reported as a deadlock; a
// counter still non-zero or a meeting still incomplete at the end of the launch is an error.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <tuple>

#include "sim_gm_order.h"
#include "sim_launch.h"

enum KernelMetaType : uint8_t {
  KERNEL_TYPE_AIV_ONLY,
  KERNEL_TYPE_AIC_ONLY,
  KERNEL_TYPE_MIX_AIV_1_0,
  KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1,
  KERNEL_TYPE_MIX_AIC_1_2,
  KERNEL_TYPE_AICORE,
  KERNEL_TYPE_VECTORCORE,
  KERNEL_TYPE_MIX_AICORE,
  KERNEL_TYPE_MIX_VECTOR_CORE,
  KERNEL_TYPE_MAX,
};

namespace amct_sim {
namespace detail {

constexpr int kCrossFlags = 32;    // per core: 0-15 (modes 0-2), mode 4 uses 0-10 and 16-26
constexpr int kCrossCounterMax = 15;

// One Fixpipe L0C -> UB (sim_cube.h) for one AIV: `rows` rows of rowBytes at UB byte off + i * pitch.
// The AIC's thread never touches an AIV's UB: the AIV copies the rows in when it learns the write,
// at a CrossCoreWaitFlag for an AIC flag set on PIPE_FIX (or after PipeBarrier<PIPE_ALL>) after
// the Fixpipe -- the earliest point where a correct kernel may touch those bytes.
struct FixDelivery {
  uint32_t fixSeq = 0;      // the AIC's FIX op
  uint32_t cover = 0;       // the AIC's set (1-based count) that completed it; 0: none yet
  uint32_t aivSetsSeen = 0; // CrossCoreSetFlags of the target AIV the AIC had received at the Fixpipe
  uint32_t off = 0, rowBytes = 0, pitch = 0, rows = 0;
  std::vector<uint8_t> data;  // rows x rowBytes
};

// The shared state of one MIX launch. Cores are numbered g * (1 + ratio) + (0: AIC, 1 + s: AIV s).
struct MixGroup {
  std::mutex mu;
  std::condition_variable cv;
  uint32_t blockDim = 0;
  uint32_t ratio = 0;
  uint32_t live = 0;     // cores running (not yet returned)
  uint32_t waiting = 0;  // of which blocked in CrossCoreWaitFlag
  bool deadlock = false;
  std::string deadlockWhat;
  std::vector<uint8_t> runs;  // per AI core: emulated (cost-model sampling skips the others)
  struct Core {
    std::deque<double> counter[kCrossFlags];  // each pending count: the time it became available
    std::deque<CoreClock> clocks[kCrossFlags];  // ... and the vector clock it carries (sim_gm_order.h)
    std::deque<uint32_t> aicSet[kCrossFlags];   // ... and the AIC set number it carries (0: not the AIC's)
    int waitFlag = -1;
    int waitMode = 0;
    uint32_t aicSetsSeen = 0;          // an AIV: the highest AIC set number it has received
    std::vector<FixDelivery> fixMail;  // an AIV: Fixpipe L0C -> UB writes not yet received
  };
  std::vector<Core> cores;
  // Meetings (modes 0, 1, 2 from the AIVs): per (mode, scope, kind, flag) the set times of each participant.
  struct Meeting {
    std::map<uint32_t, std::vector<double>> sets;  // core -> its set times
    std::map<uint32_t, std::vector<CoreClock>> clocks;  // core -> the clocks of its sets
    size_t done = 0;                              // completed rounds
  };
  std::map<std::tuple<int, int, int, int>, Meeting> meetings;
  std::vector<CoreGmOrder> order;  // per core, when the sync check is on (sim_gm_order.h)
  std::vector<uint32_t> aicSets;   // per AI core: its AIC's CrossCoreSetFlag count

  uint32_t CoresPerBlock() const { return 1 + ratio; }
  uint32_t CoreId(uint32_t g, bool aic, uint32_t sub) const { return g * CoresPerBlock() + (aic ? 0 : 1 + sub); }
  std::string CoreName(uint32_t id) const {
    const uint32_t g = id / CoresPerBlock(), r = id % CoresPerBlock();
    return r == 0 ? Fmt("AIC %u", g) : Fmt("AIV %u (AIC %u, sub-block %u)", g * ratio + (r - 1), g, r - 1);
  }
};

inline bool CoreIsAic() {
  const BlockCtx* c = t_ctx;
  return c != nullptr && c->coreKind == kCoreAic;
}
inline bool CoreIsAiv() {
  const BlockCtx* c = t_ctx;
  return c == nullptr || c->coreKind == kCoreAiv;
}

// KERNEL_TASK_TYPE_DEFAULT(type) in a kernel body: the type must match how the block was launched.
inline void DeclareKernelType(KernelMetaType type) {
  static const char* const kApi = "KERNEL_TASK_TYPE_DEFAULT";
  BlockCtx* c = Ctx(kApi);
  const uint32_t ratio = c->launch->mixRatio;
  bool ok = false;
  switch (type) {
    case KERNEL_TYPE_AIV_ONLY: ok = c->mix == nullptr; break;
    case KERNEL_TYPE_MIX_AIC_1_1: ok = c->mix != nullptr && ratio == 1; break;
    case KERNEL_TYPE_MIX_AIC_1_2: ok = c->mix != nullptr && ratio == 2; break;
    case KERNEL_TYPE_AIC_ONLY:
    case KERNEL_TYPE_MIX_AIC_1_0: ok = c->mix != nullptr && ratio == 0; break;
    default: Fail(kApi, Fmt("kernel type %d is not emulated", static_cast<int>(type)));
  }
  if (!ok) {
    Fail(kApi, Fmt("the kernel declares type %d but runs in a %s launch (vector kernels: amct_sim::Launch; MIX "
                   "1:N kernels: amct_sim::LaunchMix(name, blockDim, N, fn))",
                   static_cast<int>(type), c->mix == nullptr ? "vector" : Fmt("MIX 1:%u", ratio).c_str()));
  }
}

inline int CostPipeOf(pipe_t p) {
  switch (p) {
    case PIPE_V: return cost::kV;
    case PIPE_MTE2: return cost::kMte2;
    case PIPE_MTE3: return cost::kMte3;
    case PIPE_MTE1: return cost::kMte1;
    case PIPE_M: return cost::kM;
    case PIPE_FIX: return cost::kFix;
    default: return cost::kS;
  }
}

inline MixGroup* CrossCoreCtx(BlockCtx* c, const char* api, int mode, pipe_t pipe, uint16_t flagId) {
  if (c->mix == nullptr) {
    Fail(api, "a vector-only launch has no cross-core scheduler (KERNEL_TYPE_AIV_ONLY): launch the kernel as MIX "
              "(amct_sim::LaunchMix, KERNEL_TYPE_MIX_AIC_1_1/1_2)");
  }
  if (mode != 0 && mode != 1 && mode != 2 && mode != 4) Fail(api, Fmt("modeId %d is not 0, 1, 2 or 4", mode));
  if (mode == 4 && !kArch3510) Fail(api, "modeId 4 exists only on dav-3510 (Ascend 950)");
  if (mode == 4 && c->launch->mixRatio != 2) Fail(api, "modeId 4 needs KERNEL_TYPE_MIX_AIC_1_2");
  if ((mode == 1 || mode == 2) && c->launch->mixRatio == 0) {
    Fail(api, Fmt("modeId %d needs a MIX launch with AIVs (KERNEL_TYPE_MIX_AIC_1_1/1_2)", mode));
  }
  if (mode != 4 && (pipe == PIPE_S || pipe == PIPE_ALL)) Fail(api, "pipe PIPE_S / PIPE_ALL is not allowed in modes 0, 1, 2");
  if (pipe == PIPE_ALL) Fail(api, "pipe PIPE_ALL is not allowed");
  if (mode != 4 && flagId > 15) Fail(api, Fmt("flagId %u is not in 0..15 (modes 0, 1, 2)", flagId));
  if (mode == 4) {
    const bool aic = c->coreKind == kCoreAic;
    const bool okId = aic ? (flagId <= 10 || (flagId >= 16 && flagId <= 26)) : flagId <= 10;
    if (!okId) {
      Fail(api, Fmt("mode 4: flagId %u is not in %s", flagId, aic ? "0..10 (AIV0) or 16..26 (AIV1)" : "0..10"));
    }
  }
  return c->mix;
}

inline uint32_t SelfCore(const BlockCtx* c) {
  return c->mix->CoreId(c->aicIdx, c->coreKind == kCoreAic, c->subBlockIdx);
}

// Raises core `id`'s counter of `flag`, available at time t. Caller holds the lock.
inline void CrossCoreRaise(MixGroup& m, uint32_t id, int flag, double t, const CoreClock& clock, const char* api,
                           uint32_t aicSetNo = 0) {
  std::deque<double>& q = m.cores[id].counter[flag];
  if (static_cast<int>(q.size()) >= kCrossCounterMax) {
    Fail(api, Fmt("the counter of flagId %d on %s would exceed %d (too many CrossCoreSetFlag without "
                  "CrossCoreWaitFlag: a hardware error)",
                  flag, m.CoreName(id).c_str(), kCrossCounterMax));
  }
  q.push_back(t);
  m.cores[id].clocks[flag].push_back(clock);
  m.cores[id].aicSet[flag].push_back(aicSetNo);
}

// The AIC of AI core g sets a flag on `pipe`: its Fixpipe L0C -> UB writes that pipe has completed
// (FIX ops up to its count for PIPE_FIX; up to the last PipeBarrier<PIPE_ALL> for any pipe) are
// covered by this set. Returns the set's number. Caller holds the lock.
inline uint32_t CoverFixDeliveries(MixGroup& m, const BlockCtx* c, pipe_t pipe) {
  const uint32_t g = c->aicIdx;
  const uint32_t setNo = ++m.aicSets[g];
  const uint32_t done = pipe == PIPE_FIX ? c->count[kPipeFix] : c->allDone[kPipeFix];
  for (uint32_t s = 0; s < m.ratio; ++s) {
    for (FixDelivery& d : m.cores[m.CoreId(g, false, s)].fixMail) {
      if (d.cover == 0 && d.fixSeq <= done) d.cover = setNo;
    }
  }
  return setNo;
}

// The AIC's Fixpipe posts a write for its AIV `sub`. Called without the lock.
inline void PostFixDelivery(BlockCtx* c, uint32_t sub, FixDelivery&& d) {
  MixGroup& m = *c->mix;
  const uint32_t target = m.CoreId(c->aicIdx, false, sub);
  if (c->gmOrder != nullptr) d.aivSetsSeen = c->gmOrder->vc.back()[target];
  std::lock_guard<std::mutex> lock(m.mu);
  m.cores[target].fixMail.push_back(std::move(d));
}

[[noreturn]] __attribute__((noinline, cold)) inline void FixRaceFail(const char* api, uint32_t off, uint32_t epoch,
                                                                     const FixDelivery& d) {
  Fail(api, Fmt("sync: this AIV accessed UB bytes [%u, %u) after its CrossCoreSetFlag #%u, and the AIC's Fixpipe "
                "L0C -> UB (FIX op #%u) wrote them having received only %u of this AIV's sets: the access and the "
                "write are not ordered (access them only after the CrossCoreWaitFlag that delivers the write, or "
                "CrossCoreSetFlag after the access and have the AIC CrossCoreWaitFlag before its Fixpipe; "
                "AMCT_SIM_CHECK_SYNC=0 disables the check)",
                off, off + 32, epoch, d.fixSeq, d.aivSetsSeen));
}

// An AIV receives Fixpipe writes at a CrossCoreWaitFlag: each must land in its TPipe's
// allocations, and no access of the AIV to those bytes may be unordered with the write
// (BlockCtx::ubEpoch: the AIV's set count + 1 at its last access of each 32-B block).
inline void ApplyFixDeliveries(BlockCtx* c, std::vector<FixDelivery>& got, const char* api) {
  for (const FixDelivery& d : got) {
    const uint64_t end = static_cast<uint64_t>(d.off) + static_cast<uint64_t>(d.rows - 1) * d.pitch + d.rowBytes;
    if (c->pipe == nullptr || end > c->pipeOffset) {
      Fail(api, Fmt("bounds: the AIC's Fixpipe L0C -> UB (FIX op #%u) wrote UB bytes [%u, %llu) of this AIV, beyond "
                    "its TPipe allocations [0, %u) (allocate the destination with TPipe::InitBuffer on the AIV)",
                    d.fixSeq, d.off, static_cast<unsigned long long>(end), c->pipe == nullptr ? 0u : c->pipeOffset));
    }
    for (uint32_t r = 0; r < d.rows; ++r) {
      const uint32_t a = d.off + r * d.pitch;
      if (!c->ubEpoch.empty()) {
        for (uint32_t b = a >> 5; b < (a + d.rowBytes + 31) >> 5; ++b) {
          const uint32_t e = c->ubEpoch[b];
          if (e != 0 && e - 1 >= d.aivSetsSeen) FixRaceFail(api, b * 32, e - 1, d);
          c->ubEpoch[b] = 0;
        }
      }
      std::memcpy(c->ub + a, d.data.data() + static_cast<size_t>(r) * d.rowBytes, d.rowBytes);
    }
  }
}

// A meeting of `participants`: records this core's set; each round all have completed raises the targets.
inline void CrossCoreMeet(MixGroup& m, const std::tuple<int, int, int, int>& key, uint32_t self,
                          const std::vector<uint32_t>& participants, const std::vector<uint32_t>& targets, int flag,
                          double t, const CoreClock& clock, const char* api) {
  MixGroup::Meeting& mt = m.meetings[key];
  for (uint32_t p : participants) mt.sets[p];  // every participant has an entry
  mt.sets[self].push_back(t);
  mt.clocks[self].push_back(clock);
  size_t rounds = SIZE_MAX;
  for (const auto& kv : mt.sets) rounds = std::min(rounds, kv.second.size());
  for (; mt.done < rounds; ++mt.done) {
    double at = 0;
    for (const auto& kv : mt.sets) at = std::max(at, kv.second[mt.done]);
    std::vector<CoreClock> round;
    for (const auto& kv : mt.clocks) round.push_back(kv.second[mt.done]);
    const CoreClock all = CrossCoreClockUnion(round);
    for (uint32_t tgt : targets) CrossCoreRaise(m, tgt, flag, at, all, api);
  }
}

inline std::vector<uint32_t> RunningCores(const MixGroup& m, bool aic, int onlyGroup) {
  std::vector<uint32_t> v;
  for (uint32_t g = 0; g < m.blockDim; ++g) {
    if (!m.runs[g] || (onlyGroup >= 0 && g != static_cast<uint32_t>(onlyGroup))) continue;
    if (aic) {
      v.push_back(m.CoreId(g, true, 0));
    } else {
      for (uint32_t s = 0; s < m.ratio; ++s) v.push_back(m.CoreId(g, false, s));
    }
  }
  return v;
}

inline void CrossCoreSet(int mode, pipe_t pipe, uint16_t flagId) {
  static const char* const kApi = "CrossCoreSetFlag";
  BlockCtx* c = Ctx(kApi);
  MixGroup& m = *CrossCoreCtx(c, kApi, mode, pipe, flagId);
  if (mode == 1 && c->coreKind == kCoreAic) Fail(kApi, "modeId 1 synchronises the AIVs of an AI core: not for the AIC");
  const double t = c->cost != nullptr ? c->cost->PipeDoneTime(CostPipeOf(pipe)) : 0.0;
  AMCT_SIM_COST(c->cost, ScalarOp());
  const bool aic = c->coreKind == kCoreAic;
  const uint32_t self = SelfCore(c);
  const int g = static_cast<int>(c->aicIdx);
  const CoreClock clock = CrossCoreClockAtSet(c, pipe);
  std::lock_guard<std::mutex> lock(m.mu);
  const uint32_t aicSetNo = aic ? CoverFixDeliveries(m, c, pipe) : 0;
  switch (mode) {
    case 0: {
      const std::vector<uint32_t> all = RunningCores(m, aic, -1);
      CrossCoreMeet(m, std::make_tuple(0, -1, aic ? 1 : 0, flagId), self, all, all, flagId, t, clock, kApi);
      break;
    }
    case 1: {
      const std::vector<uint32_t> mine = RunningCores(m, false, g);
      CrossCoreMeet(m, std::make_tuple(1, g, 0, flagId), self, mine, mine, flagId, t, clock, kApi);
      break;
    }
    case 2:
      if (aic) {
        for (uint32_t s = 0; s < m.ratio; ++s) CrossCoreRaise(m, m.CoreId(g, false, s), flagId, t, clock, kApi, aicSetNo);
      } else {
        CrossCoreMeet(m, std::make_tuple(2, g, 0, flagId), self, RunningCores(m, false, g), {m.CoreId(g, true, 0)},
                      flagId, t, clock, kApi);
      }
      break;
    default:  // 4
      if (aic) {
        const uint32_t sub = flagId >= 16 ? 1 : 0;
        CrossCoreRaise(m, m.CoreId(g, false, sub), flagId - 16 * sub, t, clock, kApi, aicSetNo);
      } else {
        CrossCoreRaise(m, m.CoreId(g, true, 0), flagId + 16 * c->subBlockIdx, t, clock, kApi);
      }
      break;
  }
  m.cv.notify_all();
}

// Every running core waits: nothing can ever set a flag again. Caller holds the lock.
// (A waiter whose counter was raised but who has not woken up yet is not stuck.)
inline void CheckDeadlock(MixGroup& m) {
  if (m.deadlock || m.live == 0 || m.waiting < m.live) return;
  uint32_t stuck = 0;
  for (const MixGroup::Core& core : m.cores) {
    if (core.waitFlag >= 0 && core.counter[core.waitFlag].empty()) ++stuck;
  }
  if (stuck < m.live) return;
  std::string who;
  for (uint32_t id = 0; id < m.cores.size(); ++id) {
    if (m.cores[id].waitFlag < 0) continue;
    if (!who.empty()) who += "; ";
    who += Fmt("%s waits for flagId %d (mode %d)", m.CoreName(id).c_str(), m.cores[id].waitFlag, m.cores[id].waitMode);
  }
  m.deadlock = true;
  m.deadlockWhat = "cross-core deadlock: every running core waits in CrossCoreWaitFlag and no core can set a flag "
                   "any more: " + who;
  m.cv.notify_all();
}

inline void CrossCoreWait(int mode, pipe_t pipe, uint16_t flagId) {
  static const char* const kApi = "CrossCoreWaitFlag";
  BlockCtx* c = Ctx(kApi);
  // The template arguments only take effect on dav-3510 (on dav-2201 the wait blocks every pipe).
  MixGroup& m = *CrossCoreCtx(c, kApi, mode, mode == 4 || pipe != PIPE_S ? pipe : PIPE_V, flagId);
  const uint32_t self = SelfCore(c);
  double at = 0;
  CoreClock clock;
  std::vector<FixDelivery> got;
  {
    std::unique_lock<std::mutex> lock(m.mu);
    MixGroup::Core& me = m.cores[self];
    while (me.counter[flagId].empty()) {
      if (m.deadlock) break;
      me.waitFlag = flagId;
      me.waitMode = mode;
      ++m.waiting;
      CheckDeadlock(m);
      if (!m.deadlock) m.cv.wait(lock);
      --m.waiting;
      me.waitFlag = -1;
    }
    if (me.counter[flagId].empty()) {
      const std::string what = m.deadlockWhat;
      lock.unlock();
      Fail(kApi, what);
    }
    at = me.counter[flagId].front();
    me.counter[flagId].pop_front();
    clock = me.clocks[flagId].front();
    me.clocks[flagId].pop_front();
    me.aicSetsSeen = std::max(me.aicSetsSeen, me.aicSet[flagId].front());
    me.aicSet[flagId].pop_front();
    size_t keep = 0;  // the Fixpipe writes this wait delivers
    for (FixDelivery& d : me.fixMail) {
      if (d.cover != 0 && d.cover <= me.aicSetsSeen) {
        got.push_back(std::move(d));
      } else {
        me.fixMail[keep++] = std::move(d);
      }
    }
    me.fixMail.resize(keep);
  }
  if (!got.empty()) ApplyFixDeliveries(c, got, kApi);
  CrossCoreLearn(c, clock);
  AMCT_SIM_COST(c->cost, CrossCoreWait(at));
}

// After every core returned: counters and meetings must be settled.
inline std::string MixEndError(const MixGroup& m) {
  for (uint32_t id = 0; id < m.cores.size(); ++id) {
    if (!m.cores[id].fixMail.empty()) {
      return Fmt("sync: %zu Fixpipe L0C -> UB write(s) of the AIC to %s were never received: the AIV did not "
                 "CrossCoreWaitFlag for an AIC CrossCoreSetFlag on PIPE_FIX issued after the Fixpipe",
                 m.cores[id].fixMail.size(), m.CoreName(id).c_str());
    }
    for (int f = 0; f < kCrossFlags; ++f) {
      if (!m.cores[id].counter[f].empty()) {
        return Fmt("flags: the counter of flagId %d on %s is %zu at the end of the launch (a CrossCoreSetFlag without "
                   "its CrossCoreWaitFlag)",
                   f, m.CoreName(id).c_str(), m.cores[id].counter[f].size());
      }
    }
  }
  for (const auto& kv : m.meetings) {
    for (const auto& s : kv.second.sets) {
      if (s.second.size() > kv.second.done) {
        return Fmt("flags: %s set flagId %d (mode %d) but not every core of that synchronisation did", 
                   m.CoreName(s.first).c_str(), std::get<3>(kv.first), std::get<0>(kv.first));
      }
    }
  }
  return std::string();
}

}  // namespace detail

// Runs a MIX kernel: blockDim AI cores, each an AIC and `ratio` AIVs (0: AIC only, 1 or 2), all
// cores at once on their own threads (they may wait for each other). blockDim * max(ratio, 1)
// must not exceed the platform's AIV cores. See README.md.
template <class F>
void LaunchMix(const char* kernel, uint32_t blockDim, uint32_t ratio, F&& runOneCore) {
  using namespace detail;
  amct_sim_state_note_launch();
  if (ratio > 2) throw SimError(Fmt("amct kernel sim: kernel %s: MIX ratio %u is not 0, 1 or 2", kernel, ratio));
  LaunchShared sh;
  SetUpLaunch(sh, kernel, blockDim, std::max<uint32_t>(1, ratio));
  sh.mixRatio = ratio;
  MixGroup m;
  m.blockDim = blockDim;
  m.ratio = ratio;
  const uint32_t per = m.CoresPerBlock();
  const uint32_t cores = blockDim * per;
  const std::unique_ptr<CostLaunch> cost = CostLaunch::ForLaunch(sh.kernel, blockDim, sh.arenaBytes, per,
                                                                 std::max<uint32_t>(1, blockDim * ratio));
  sh.cost = cost.get();
  m.cores.resize(cores);
  m.aicSets.assign(blockDim, 0);
  m.runs.assign(blockDim, 1);
  for (uint32_t g = 0; g < blockDim; ++g) m.runs[g] = cost == nullptr || cost->Runs(g) ? 1 : 0;
  for (uint32_t g = 0; g < blockDim; ++g) m.live += m.runs[g] ? per : 0;
  if (sh.checkSync) {
    m.order.resize(cores);
    for (uint32_t id = 0; id < cores; ++id) {
      m.order[id].self = id;
      m.order[id].vc.assign(1, std::vector<uint32_t>(cores, 0u));
    }
  }
  std::vector<BlockOutcome> outs(cores);
  auto core = [&](uint32_t id) {
    const uint32_t g = id / per, r = id % per;
    RunBlockWith(sh, g, id, outs[id], runOneCore, [&](BlockCtx* c) {
      c->mix = &m;
      c->aicIdx = g;
      c->coreKind = r == 0 ? kCoreAic : kCoreAiv;
      c->subBlockIdx = r == 0 ? 0 : r - 1;
      c->taskRatio = r == 0 ? 1 : ratio;
      c->blockIdx = r == 0 ? g : g * ratio + (r - 1);
      c->gmOrder = m.order.empty() ? nullptr : &m.order[id];
      // An AIV's UB access epochs: the unordered-access check of the AIC's Fixpipe L0C -> UB writes.
      if (r != 0 && c->gmOrder != nullptr) {
        c->ubEpoch.assign(c->arenaBytes / 32, 0u);
      } else {
        c->ubEpoch.clear();
      }
    });
    std::lock_guard<std::mutex> lock(m.mu);
    --m.live;
    CheckDeadlock(m);
    m.cv.notify_all();
  };
  std::vector<std::thread> threads;
  std::string startError;
  for (uint32_t id = 0; id < cores; ++id) {
    if (!m.runs[id / per]) continue;
    try {
      threads.emplace_back(core, id);
    } catch (const std::system_error& e) {
      // The cores never started do not run: the started ones finish or meet a deadlock report.
      std::lock_guard<std::mutex> lock(m.mu);
      for (uint32_t rest = id; rest < cores; ++rest) m.live -= m.runs[rest / per] ? 1 : 0;
      CheckDeadlock(m);
      m.cv.notify_all();
      startError = Fmt("amct kernel sim: kernel %s: could not start the thread of core %u of this MIX launch (%s)",
                       sh.kernel, id, e.what());
      break;
    }
  }
  for (std::thread& t : threads) t.join();
  if (!startError.empty()) throw SimError(startError);
  // The first failure that is not a consequence (deadlock) of another.
  const BlockOutcome* first = nullptr;
  for (const BlockOutcome& o : outs) {
    if (!o.failed) continue;
    if (first == nullptr) first = &o;
    if (o.error.find("cross-core deadlock") == std::string::npos) {
      first = &o;
      break;
    }
  }
  if (first != nullptr) throw SimError(first->error);
  const std::string endError = MixEndError(m);
  if (!endError.empty()) throw SimError(Fmt("amct kernel sim: kernel %s: ", sh.kernel) + endError);
  if (!m.order.empty()) {
    const std::string orderError = CrossCoreGmCheck(m.order, per, [&](uint32_t id) { return m.CoreName(id); });
    if (!orderError.empty()) throw SimError(Fmt("amct kernel sim: kernel %s: ", sh.kernel) + orderError);
  }
  if (sh.checkRaces) {
    // Cores of one AI core are ordered by their flags (not verified): races are checked between AI cores.
    std::vector<BlockOutcome> perBlock(blockDim);
    for (uint32_t id = 0; id < cores; ++id) {
      GmLog& dst = perBlock[id / per].log;
      for (const Interval& i : outs[id].log.writes) dst.writes.push_back(i);
      for (const Interval& i : outs[id].log.reads) dst.reads.push_back(i);
      for (const Interval& i : outs[id].log.scalarReads) dst.scalarReads.push_back(i);
    }
    RaceCheck(sh, perBlock);
  }
  if (cost) cost->Finish();
}

}  // namespace amct_sim

// ---- kernel-side names --------------------------------------------------------------------------
#define KERNEL_TASK_TYPE_DEFAULT(value) ::amct_sim::detail::DeclareKernelType(value)
#define ASCEND_IS_AIC (::amct_sim::detail::CoreIsAic())
#define ASCEND_IS_AIV (::amct_sim::detail::CoreIsAiv())

namespace AscendC {

template <uint8_t modeId, pipe_t pipe>
__aicore__ inline void CrossCoreSetFlag(uint16_t flagId) {
  amct_sim::detail::CrossCoreSet(modeId, pipe, flagId);
}

template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
__aicore__ inline void CrossCoreWaitFlag(uint16_t flagId) {
  amct_sim::detail::CrossCoreWait(modeId, pipe, flagId);
}

// Workspace: the sim reserves no system workspace; the user workspace is the kernel's argument.
__aicore__ inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) { return workspace; }
__aicore__ inline void SetSysWorkspace(GM_ADDR workspace) { (void)workspace; }
__aicore__ inline GM_ADDR GetSysWorkSpacePtr() { return nullptr; }

}  // namespace AscendC
