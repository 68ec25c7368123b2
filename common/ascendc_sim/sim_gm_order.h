// amct kernel sim: GM ordering between the cores of one AI core in a MIX launch (the AIC and its
// AIVs). Internal header, included by sim_mix.h; kernels include "kernel_operator.h".
//
// Within one core the hazard model of sim_context.h orders GM accesses by pipe flags. Between the
// cores of an AI core only the cross-core flags order anything (CrossCoreSetFlag(ISASI).md: the
// flag is raised when the given pipe's earlier instructions have completed; CrossCoreWaitFlag
// blocks until it is), so GM that one core writes and another core reads or writes must be
// separated by a chain of them. The sim keeps a vector clock per core:
//  - CrossCoreSetFlag<mode, pipe>: the core's set count + 1; every access group of the core that
//    `pipe` has completed (its own op count, what `pipe` knows of the other pipes through
//    SetFlag/WaitFlag, or a PipeBarrier<PIPE_ALL>) is covered by this set; the flag carries the
//    core's clock (its own entry = the set count).
//  - CrossCoreWaitFlag: the clock the flag carried is merged into the waiting core's (for meetings,
//    modes 0-2 from the AIVs: the union of the participants' clocks of that round). The knowledge
//    is the whole core's (as on dav-2201, where a wait blocks every pipe; on dav-3510 the template
//    pipe is the only one that waits: a kernel relying on another pipe is not caught).
//  - After the launch: two accesses of different cores of one AI core on overlapping GM bytes, at
//    least one a write, need one to be covered by a set the other core had received when it
//    accessed; otherwise the launch fails naming both.
// Recorded accesses: DMAs (DataCopy, DataCopyPad) on tracked GM, and on the AIC the Matmul's GM
// loads (as MTE2) and output writes (as FIX, the pipe the AIC sets its flag on). Not recorded:
// the KFC form's Matmul (run on the calling AIV, ordered by the KFC messages) and
// GlobalTensor::GetValue (forbidden on GM written in the launch anyway, sim_launch.h).
#pragma once

#include <memory>

#include "sim_context.h"

namespace amct_sim {
namespace detail {

using CoreClock = std::shared_ptr<const std::vector<uint32_t>>;

// The hazard-model pipe whose completion a cross-core flag on `pipe` waits for, or -1 (a pipe
// with no recorded GM access: PIPE_M, PIPE_MTE1, PIPE_V on the AIC ...). The AIC's FIX pipe
// writes the Matmul output: it shares the MTE3 slot (the AIC has no MTE3 and no UB).
inline int CrossCoreSlot(const BlockCtx* c, pipe_t pipe) {
  switch (pipe) {
    case PIPE_MTE2: return kPipeMte2;
    case PIPE_MTE3: return c->coreKind == kCoreAiv ? kPipeMte3 : -1;
    case PIPE_FIX: return c->coreKind == kCoreAic ? kPipeMte3 : -1;
    case PIPE_V: return c->coreKind == kCoreAiv ? kPipeV : -1;
    case PIPE_S: return kPipeS;
    default: return -1;
  }
}

// Ops of pipe q known complete when a flag on `slot` goes out.
inline uint32_t CompletedAtSet(const BlockCtx* c, int slot, int q) {
  uint32_t done = c->allDone[q];
  if (slot < 0) return done;
  const uint32_t k = slot == q ? c->count[q] : c->known[slot][q];
  if (k != kHolds && k > done) done = k;  // kHolds (auto-sync pairs with S) orders no DMA
  return done;
}

// CrossCoreSetFlag on `pipe`: covers what the pipe completed and returns the clock the flag carries
// (null when the check is off).
inline CoreClock CrossCoreClockAtSet(BlockCtx* c, pipe_t pipe) {
  CoreGmOrder* o = c->gmOrder;
  if (o == nullptr) return nullptr;
  ++o->sets;
  const int slot = CrossCoreSlot(c, pipe);
  size_t keep = 0;
  for (uint32_t idx : o->uncovered) {
    CoreGmGroup& g = o->groups[idx];
    if (g.maxSeq <= CompletedAtSet(c, slot, g.pipe)) {
      g.cover = o->sets;
    } else {
      o->uncovered[keep++] = idx;
    }
  }
  o->uncovered.resize(keep);
  auto clock = std::make_shared<std::vector<uint32_t>>(o->vc.back());
  (*clock)[o->self] = o->sets;
  return clock;
}

// The union of clocks (a meeting's round).
inline CoreClock CrossCoreClockUnion(const std::vector<CoreClock>& clocks) {
  std::shared_ptr<std::vector<uint32_t>> u;
  for (const CoreClock& k : clocks) {
    if (k == nullptr) continue;
    if (u == nullptr) {
      u = std::make_shared<std::vector<uint32_t>>(*k);
    } else {
      for (size_t i = 0; i < u->size(); ++i) (*u)[i] = std::max((*u)[i], (*k)[i]);
    }
  }
  return u;
}

// CrossCoreWaitFlag took a count that carried `clock`: the waiting core learns it.
inline void CrossCoreLearn(BlockCtx* c, const CoreClock& clock) {
  CoreGmOrder* o = c->gmOrder;
  if (o == nullptr || clock == nullptr) return;
  const std::vector<uint32_t>& now = o->vc.back();
  bool news = false;
  for (size_t i = 0; i < now.size() && !news; ++i) news = (*clock)[i] > now[i];
  if (!news) return;
  std::vector<uint32_t> next = now;
  for (size_t i = 0; i < next.size(); ++i) next[i] = std::max(next[i], (*clock)[i]);
  o->vc.push_back(std::move(next));
}

// Does group a of core `ca` happen before group b of core `cb`?
inline bool CrossCoreBefore(const std::vector<CoreGmOrder>& cores, uint32_t ca, const CoreGmGroup& a, uint32_t cb,
                            const CoreGmGroup& b) {
  return a.cover != 0 && cores[cb].vc[b.vcState][ca] >= a.cover;
}

// The first overlap of two sorted, disjoint span lists, or false.
inline bool SpansMeet(const std::vector<Interval>& x, const std::vector<Interval>& y, Interval* where) {
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const uint64_t lo = std::max(x[i].lo, y[j].lo), hi = std::min(x[i].hi, y[j].hi);
    if (lo < hi) {
      *where = Interval{lo, hi};
      return true;
    }
    if (x[i].hi <= y[j].hi) {
      ++i;
    } else {
      ++j;
    }
  }
  return false;
}

inline void SortSpans(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
  size_t out = 0;
  for (const Interval& s : v) {
    if (out > 0 && s.lo <= v[out - 1].hi) {
      v[out - 1].hi = std::max(v[out - 1].hi, s.hi);
    } else {
      v[out++] = s;
    }
  }
  v.resize(out);
}

inline const char* CrossCoreAccessName(bool aic, const CoreGmGroup& g) {
  if (aic) return g.write ? "writes (Matmul output, FIX)" : "reads (Matmul input, MTE2)";
  return g.write ? "writes (MTE3)" : "reads (MTE2)";
}

// After a MIX launch: every conflicting pair of accesses by two cores of one AI core must be
// ordered by cross-core flags. cores[id] is core id's record (perGroup cores per AI core, the
// first the AIC); name(id) names it. Returns the first violation, or "".
template <class Name>
std::string CrossCoreGmCheck(std::vector<CoreGmOrder>& cores, uint32_t perGroup, const Name& name) {
  for (CoreGmOrder& o : cores) {
    for (CoreGmGroup& g : o.groups) SortSpans(g.spans);
  }
  for (uint32_t first = 0; first + perGroup <= cores.size(); first += perGroup) {
    for (uint32_t ca = first; ca < first + perGroup; ++ca) {
      for (uint32_t cb = ca + 1; cb < first + perGroup; ++cb) {
        for (const CoreGmGroup& a : cores[ca].groups) {
          for (const CoreGmGroup& b : cores[cb].groups) {
            if (!a.write && !b.write) continue;
            if (a.hi <= b.lo || b.hi <= a.lo) continue;
            Interval at{0, 0};
            if (!SpansMeet(a.spans, b.spans, &at)) continue;
            if (CrossCoreBefore(cores, ca, a, cb, b) || CrossCoreBefore(cores, cb, b, ca, a)) continue;
            const CoreGmGroup& w = a.write ? a : b;
            const CoreGmGroup& other = a.write ? b : a;
            const uint32_t cw = a.write ? ca : cb, co = a.write ? cb : ca;
            const bool wAic = cw % perGroup == 0, oAic = co % perGroup == 0;
            return Fmt("sync: %s %s GM bytes [%#llx, %#llx) and %s %s them, and no cross-core flag orders the two "
                       "accesses: the core that goes first must CrossCoreSetFlag after its access, on the pipe that "
                       "made it (%s) or once that pipe has completed (SetFlag/WaitFlag, PipeBarrier<PIPE_ALL>), and "
                       "the other must CrossCoreWaitFlag for it before its own (AMCT_SIM_CHECK_SYNC=0 disables the "
                       "check)",
                       name(cw).c_str(), CrossCoreAccessName(wAic, w), static_cast<unsigned long long>(at.lo),
                       static_cast<unsigned long long>(at.hi), name(co).c_str(), CrossCoreAccessName(oAic, other),
                       wAic ? "PIPE_FIX for the Matmul output" : "PIPE_MTE3 for DataCopy to GM");
          }
        }
      }
    }
  }
  return std::string();
}

}  // namespace detail
}  // namespace amct_sim
