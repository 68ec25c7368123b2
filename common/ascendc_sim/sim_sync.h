// amct kernel sim: SetFlag / WaitFlag / PipeBarrier over the hazard model of sim_context.h.
// Internal header: kernels include "kernel_operator.h".
//
// Model: pipes S, V, MTE2, MTE3 number their operations; known[q][p] (= done[p][q]) is the highest
// p operation known complete to q. SetFlag<P_Q> snapshots P's count and P's own knowledge;
// WaitFlag<P_Q> merges the snapshot into Q (so knowledge is transitive). WaitFlag<P_S> stalls
// the scalar unit, which issues every later instruction, so it informs V, MTE2 and MTE3.
// PipeBarrier<PIPE_ALL> completes everything; PipeBarrier<PIPE_MTE2/MTE3> completes that pipe's
// own earlier DMAs (needed between overlapping same-pipe writes).
#pragma once

#include "sim_memory.h"

namespace amct_sim {
namespace detail {

inline EventInfo CheckEvent(const char* api, AscendC::HardEvent evt, int32_t id) {
  const EventInfo info = GetEventInfo(evt);
  const BlockCtx* c = t_ctx;
  const bool onAic = c != nullptr && c->coreKind == kCoreAic;
  if (info.cubeCore && !onAic) {
    Fail(api, Fmt("flags: HardEvent::%s orders the AIC's cube pipes (MTE1, M, FIX): call it on the AIC of a MIX "
                  "launch (if ASCEND_IS_AIC { ... })",
                  info.name));
  }
  if (!info.vectorCore && !info.cubeCore) {
    Fail(api, Fmt("flags: HardEvent::%s is not a vector-core event (use MTE2_V, V_MTE2, MTE3_V, V_MTE3, V_V, "
                  "MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S)",
                  info.name));
  }
  if (id < 0 || id >= kEventIds) Fail(api, Fmt("flags: event id %d of HardEvent::%s is not in 0..7", id, info.name));
  return info;
}

inline void DoSetFlag(AscendC::HardEvent evt, int32_t id) {
  static const char* const kApi = "SetFlag";
  BlockCtx* c = Ctx(kApi);
  const EventInfo info = CheckEvent(kApi, evt, id);
  FlagRec& f = c->flags[static_cast<int>(evt)][id];
  if (f.set) {
    Fail(kApi, Fmt("flags: SetFlag<HardEvent::%s>(%d) twice without a WaitFlag in between", info.name, id));
  }
  f.set = true;
  AMCT_SIM_COST(c->cost, SetFlag(static_cast<int>(evt), id, info.src));
  if (info.src == kPipeS && !c->strictSync) {
    f.snap.valid = false;  // S -> X always holds (auto-sync); nothing to transfer
  } else {
    f.snap = TakeSnap(c, static_cast<Pipe>(info.src));
  }
}

inline void DoWaitFlag(AscendC::HardEvent evt, int32_t id) {
  static const char* const kApi = "WaitFlag";
  BlockCtx* c = Ctx(kApi);
  const EventInfo info = CheckEvent(kApi, evt, id);
  FlagRec& f = c->flags[static_cast<int>(evt)][id];
  if (!f.set) Fail(kApi, Fmt("flags: WaitFlag<HardEvent::%s>(%d) without a matching SetFlag", info.name, id));
  f.set = false;
  AMCT_SIM_COST(c->cost, WaitFlag(static_cast<int>(evt), id, info.dst));
  if (info.dst == kPipeS) {
    for (int q = 0; q < kPipes; ++q) MergeSnap(c, static_cast<Pipe>(q), f.snap);
  } else {
    MergeSnap(c, static_cast<Pipe>(info.dst), f.snap);
  }
  f.snap.valid = false;
}

inline void DoPipeBarrier(pipe_t pipe) {
  static const char* const kApi = "PipeBarrier";
  BlockCtx* c = Ctx(kApi);
  AMCT_SIM_COST(c->cost, Barrier(pipe));
  switch (pipe) {
    case PIPE_ALL:  // the scalar pipe too (it only counts under strict sync)
      for (int p = 0; p < kPipes; ++p) c->allDone[p] = c->count[p];  // cross-core flags (sim_gm_order.h)
      for (int q = 0; q < kPipes; ++q) {
        for (int p = 0; p < kPipes; ++p) {
          if (c->count[p] > c->known[q][p]) c->known[q][p] = c->count[p];
        }
      }
      break;
    case PIPE_V:
      break;  // V -> V holds anyway
    case PIPE_MTE2:
      if (c->count[kPipeMte2] > c->known[kPipeMte2][kPipeMte2]) c->known[kPipeMte2][kPipeMte2] = c->count[kPipeMte2];
      break;
    case PIPE_MTE3:
      if (c->count[kPipeMte3] > c->known[kPipeMte3][kPipeMte3]) c->known[kPipeMte3][kPipeMte3] = c->count[kPipeMte3];
      break;
    case PIPE_M:
    case PIPE_MTE1:
    case PIPE_FIX:
      // The AIC's cube pipes: the cube hazard model (sim_cube.h) checks cross-pipe orderings, and
      // of one pipe only PIPE_M's barrier between small accumulating Mmads (Mmad.md).
      if (pipe == PIPE_M && c->count[kPipeM] > c->known[kPipeM][kPipeM]) c->known[kPipeM][kPipeM] = c->count[kPipeM];
      if (c->coreKind != kCoreAic) {
        Fail(kApi, Fmt("flags: pipe %d is not a vector-core pipe (PIPE_V, PIPE_MTE2, PIPE_MTE3, PIPE_ALL; PIPE_M, "
                       "PIPE_MTE1 and PIPE_FIX exist on the AIC only)",
                       static_cast<int>(pipe)));
      }
      break;
    case PIPE_S:
      Fail(kApi, "flags: PipeBarrier<PIPE_S> is not valid (PipeBarrier waits for a non-scalar pipe)");
    default:
      Fail(kApi, Fmt("flags: pipe %d is not a vector-core pipe (PIPE_V, PIPE_MTE2, PIPE_MTE3, PIPE_ALL)",
                     static_cast<int>(pipe)));
  }
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID) {
  amct_sim::detail::DoSetFlag(event, eventID);
}

template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID) {
  amct_sim::detail::DoWaitFlag(event, eventID);
}

template <pipe_t pipe>
__aicore__ inline void PipeBarrier() {
  amct_sim::detail::DoPipeBarrier(pipe);
}

}  // namespace AscendC
