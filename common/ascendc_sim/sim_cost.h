// amct kernel sim, NPU cost model: per block, a timeline per pipe built from the emulated
// instruction stream, with the numbers of sim_cost_table.h. It estimates; it never measures.
// Internal header (sim_context.h includes it): kernels include "kernel_operator.h".
//
// Rules (model version cost::kModelVersion):
// * The scalar unit S issues every instruction in program order at its time `sNow` (plus
//   scalarIssueCycles). An instruction on pipe P starts when it is issued, P is free and P's
//   waits are satisfied: start = max(sNow, free[P], wait[P]); P is busy for its duration; its
//   result is complete `latency` later (DMA only).
// * Waits: WaitFlag<P_Q> makes Q (or, for Q = S, the scalar unit) wait for everything P had
//   issued at the SetFlag; the queue edges do the same (VECIN EnQue -> DeQue: MTE2 -> V; VECIN
//   FreeTensor -> AllocTensor: V -> MTE2; VECOUT: V -> MTE3 and MTE3 -> V); PipeBarrier<PIPE_ALL>
//   waits for every pipe; PipeBarrier<PIPE_X> makes X wait for its own earlier results.
// * Scalar UB access (LocalTensor GetValue/SetValue, the auto-sync bisheng inserts): a read waits
//   for the last V/MTE2 write of its 32-B block; a write also for the last V/MTE3 read.
// * The kernel time is the slowest block's end (all pipes and S idle) plus the launch cost.
// * The cube (version 2): a Matmul tile (sim_matmul.h) runs per baseK step MTE2 (GM -> L1, A and B
//   chunks) -> MTE1 (L1 -> L0A/L0B) -> M (fractals x cycles per fractal), with two L1 and two L0
//   slots (a step's MTE2 waits for the MTE1 of the step two back, its MTE1 for the M of the step
//   two back); the tile's FIX (L0C -> GM) waits for its last M, and the next tile's first M waits
//   for that FIX (one L0C tile). The other instructions of the AIC are timed as on the AIV.
// * MIX launches (sim_mix.h): every core has its own timeline; CrossCoreSetFlag<mode, pipe> is
//   complete when `pipe`'s issued work is (the scalar unit's time for PIPE_S), and the waiting
//   core's scalar unit resumes crossCoreFlagCycles after the last setter it needed. The kernel
//   time is the slowest core's end; a MIX record's busy cycles per pipe are the largest over cores.
// Not modelled: instruction queue depths (S may run arbitrarily far ahead), bank conflicts, L2
// (the cube's GM rate assumes L2 hits), the scalar arithmetic between API calls (folded into
// scalarUbCycles), HBM sharing between AIC and AIV streams.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "amct_sim_host.h"
#include "sim_cost_table.h"
#include "sim_types.h"

namespace amct_sim {
namespace detail {

constexpr int kCostEvents = 64;  // >= number of AscendC::HardEvent values
constexpr int kCostEventIds = 8;

inline cost::VecClass ClassifyVectorApi(const char* api) {
  using namespace cost;
  auto is = [api](const char* s) { return std::strcmp(api, s) == 0; };
  auto starts = [api](const char* s) { return std::strncmp(api, s, std::strlen(s)) == 0; };
  if (is("Cast")) return kVecCast;
  if (starts("Compare") || starts("Select")) return kVecCompare;
  if (is("Div")) return kVecDiv;
  if (is("Exp") || is("Ln") || is("Sqrt")) return kVecTranscend;
  if (std::strstr(api, "Reduce") != nullptr) return kVecReduce;
  if (is("Gather")) return kVecGather;
  if (is("GatherMask") || is("Brcb")) return kVecRearrange;
  if (starts("DataCopy")) return kVecCopy;
  return kVecSimple;
}

// The timeline of one block.
class CostBlock {
 public:
  void Reset(const cost::ArchTable* table, const uint8_t* ub, uint32_t ubBytes, double dmaBytesPerCycle) {
    t_ = table;
    ub_ = ub;
    dmaBytesPerCycle_ = dmaBytesPerCycle;
    sNow_ = 0;
    for (int p = 0; p < cost::kPipes; ++p) free_[p] = done_[p] = wait_[p] = busy_[p] = last_[p] = 0, ops_[p] = 0;
    ubWrite_.assign(ubBytes / 32 + 1, 0.0);
    ubRead_.assign(ubBytes / 32 + 1, 0.0);
    for (auto& row : flag_) std::fill(std::begin(row), std::end(row), 0.0);
    enq_.clear();
    freed_.clear();
    l1Free_[0] = l1Free_[1] = l0Free_[0] = l0Free_[1] = l0cFree_ = lastM_ = 0;
  }

  // ---- instructions on a pipe ----
  void Vector(const char* api, uint32_t widestElemBytes, uint64_t repeats) {
    const cost::VecCost& v = t_->vec[ClassifyVectorApi(api)];
    const double perRepeat = widestElemBytes >= 4 ? v.cyclesPerRepeat32 : v.cyclesPerRepeat16;
    Issue(cost::kV, t_->vecIssueCycles.value + perRepeat * static_cast<double>(repeats), 0.0);
  }
  // Count forms: repeats of 256 B over `bytes` of the widest operand.
  void VectorBytes(const char* api, uint32_t widestElemBytes, uint64_t bytes) {
    Vector(api, widestElemBytes, (bytes + 255) / 256);
  }
  void Dma(int pipe, uint64_t rows, uint64_t rowBytes) {
    const double bytes = static_cast<double>(rows) * static_cast<double>((rowBytes + 31) / 32 * 32);
    const double busy = t_->dmaIssueCycles.value + (rows > 1 ? t_->dmaBurstCycles.value * rows : 0.0) +
                        bytes / dmaBytesPerCycle_;
    Issue(pipe, busy, t_->dmaLatencyCycles.value);
  }

  // ---- the cube: one Matmul tile (mLen x nLen over k, steps of baseK) and its output ----
  // bytes2: element bytes times 2 (fp4: 1); fracK: K elements of one fractal (16, or 64 for fp4).
  // share: the AIC's time is shared by that many clients (the KFC form charges each AIV's requests
  // on its own cube timeline at `share` times their cost).
  void CubeTile(int32_t mLen, int32_t nLen, int32_t k, int32_t baseK, uint32_t aBytes2, uint32_t bBytes2,
                uint32_t fracK, bool fp4, double share = 1.0) {
    const double perFractal = share * (fp4 ? t_->cubeCyclesPerFractalFp4.value : t_->cubeCyclesPerFractal16.value);
    const double issue = t_->cubeIssueCycles.value;
    for (int32_t k0 = 0, s = 0; k0 < k; k0 += baseK, ++s) {
      const int32_t kLen = std::min(baseK, k - k0);
      const double bytes = (static_cast<double>(mLen) * kLen * aBytes2 + static_cast<double>(kLen) * nLen * bBytes2) / 2;
      const double l2 = IssueAt(cost::kMte2, issue + share * bytes / t_->cubeGmBytesPerCycle.value,
                                t_->dmaLatencyCycles.value, l1Free_[s & 1]);
      const double l0 = IssueAt(cost::kMte1, issue + share * bytes / t_->mte1BytesPerCycle.value, 0.0,
                                std::max(l2, l0Free_[s & 1]));
      const double fractals = static_cast<double>((mLen + 15) / 16) * ((nLen + 15) / 16) * ((kLen + fracK - 1) / fracK);
      const double m = IssueAt(cost::kM, issue + fractals * perFractal, 0.0, std::max(l0, k0 == 0 ? l0cFree_ : 0.0));
      l1Free_[s & 1] = l0;
      l0Free_[s & 1] = m;
      lastM_ = m;
    }
  }
  // Returns when the tile is out (the KFC client's synchronous GetTensorC waits for it).
  double CubeFixOut(uint64_t bytes, double share = 1.0) {
    l0cFree_ = IssueAt(cost::kFix,
                       t_->cubeIssueCycles.value + share * static_cast<double>(bytes) / t_->fixBytesPerCycle.value, 0.0,
                       lastM_);
    return l0cFree_;
  }

  // ---- the AIC's basic cube API (sim_cube.h): one instruction each, at the Matmul model's rates ----
  void CubeGmToL1(uint64_t bytes) {  // DataCopy GM -> L1 (ND2NZ)
    Issue(cost::kMte2, t_->cubeIssueCycles.value + static_cast<double>(bytes) / t_->cubeGmBytesPerCycle.value,
          t_->dmaLatencyCycles.value);
  }
  void CubeL1ToL0(uint64_t bytes) {  // LoadData L1 -> L0A/L0B
    Issue(cost::kMte1, t_->cubeIssueCycles.value + static_cast<double>(bytes) / t_->mte1BytesPerCycle.value, 0.0);
  }
  void CubeMmad(uint64_t fractals) {  // Mmad: 16 x 16 x 16 fractals
    Issue(cost::kM, t_->cubeIssueCycles.value + static_cast<double>(fractals) * t_->cubeCyclesPerFractal16.value, 0.0);
  }
  void CubeFixToUb(uint64_t bytes) {  // Fixpipe L0C -> UB (out bytes)
    Issue(cost::kFix, t_->cubeIssueCycles.value + static_cast<double>(bytes) / t_->fixBytesPerCycle.value, 0.0);
  }

  // ---- cross-core flags (sim_mix.h): the time a CrossCoreSetFlag on `pipe` is complete, and a wait ----
  double PipeDoneTime(int pipe) const { return pipe == cost::kS ? sNow_ : std::max(sNow_, done_[pipe]); }
  void CrossCoreWait(double setAt) {
    sNow_ = std::max(sNow_, setAt + t_->crossCoreFlagCycles.value);
  }
  void ScalarOp() {
    sNow_ += t_->scalarIssueCycles.value;
    busy_[cost::kS] += t_->scalarIssueCycles.value;
    ++ops_[cost::kS];
  }

  // ---- UB footprints of the newest instruction of a pipe (for the scalar accesses) ----
  void Stamp(int pipe, uint32_t off, uint32_t bytes, bool write) {
    if (bytes == 0) return;
    std::vector<double>& v = write ? ubWrite_ : ubRead_;
    const size_t b0 = off >> 5, b1 = std::min<size_t>((static_cast<size_t>(off) + bytes + 31) >> 5, v.size());
    const double t = last_[pipe];
    for (size_t b = b0; b < b1; ++b) v[b] = std::max(v[b], t);
  }

  // ---- the scalar unit ----
  void ScalarUb(const void* ptr, bool write) {
    const size_t b = static_cast<size_t>(static_cast<const uint8_t*>(ptr) - ub_) >> 5;
    double t = sNow_;
    if (b < ubWrite_.size()) {
      t = std::max(t, ubWrite_[b]);
      if (write) t = std::max(t, ubRead_[b]);
    }
    sNow_ = t + t_->scalarUbCycles.value;
    busy_[cost::kS] += t_->scalarUbCycles.value;
    ++ops_[cost::kS];
  }
  void ScalarGm() {
    sNow_ += t_->scalarGmCycles.value;
    busy_[cost::kS] += t_->scalarGmCycles.value;
    ++ops_[cost::kS];
  }

  // ---- dependencies ----
  void SetFlag(int evt, int id, int src) { flag_[evt & 63][id & 7] = std::max(sNow_, src == cost::kS ? sNow_ : done_[src]); }
  void WaitFlag(int evt, int id, int dst) { WaitFor(dst, flag_[evt & 63][id & 7]); }
  void BarrierAll() {
    double t = sNow_;
    for (int p = 0; p < cost::kPipes; ++p) t = std::max(t, done_[p]);
    sNow_ = t;
    for (int p = 0; p < cost::kPipes; ++p) wait_[p] = std::max(wait_[p], t);
  }
  void BarrierPipe(int pipe) { wait_[pipe] = std::max(wait_[pipe], done_[pipe]); }
  void Barrier(pipe_t pipe) {
    switch (pipe) {
      case PIPE_ALL: BarrierAll(); break;
      case PIPE_V: BarrierPipe(cost::kV); break;
      case PIPE_MTE2: BarrierPipe(cost::kMte2); break;
      case PIPE_MTE3: BarrierPipe(cost::kMte3); break;
      default: break;  // rejected by PipeBarrier's checks
    }
  }
  // Queue edges: producer/consumer pipes of the queue's position; bufId names the block.
  void EnQue(int producer, int32_t bufId) { Slot(enq_, bufId) = std::max(sNow_, done_[producer]); }
  void DeQue(int consumer, int32_t bufId) { WaitFor(consumer, Slot(enq_, bufId)); }
  void Free(int consumer, int32_t bufId) { Slot(freed_, bufId) = std::max(sNow_, done_[consumer]); }
  void Alloc(int producer, int32_t bufId) { WaitFor(producer, Slot(freed_, bufId)); }

  // ---- results ----
  double EndCycles() const {
    double t = sNow_;
    for (int p = 0; p < cost::kPipes; ++p) t = std::max(t, std::max(done_[p], free_[p]));
    return t;
  }
  double Busy(int p) const { return busy_[p]; }
  uint64_t Ops(int p) const { return ops_[p]; }
  double ScalarNow() const { return sNow_; }

 private:
  void Issue(int pipe, double busy, double latency) { IssueAt(pipe, busy, latency, 0.0); }
  // An instruction on `pipe` that may not start before `ready`; returns its completion.
  double IssueAt(int pipe, double busy, double latency, double ready) {
    const double start = std::max(std::max(sNow_, ready), std::max(free_[pipe], wait_[pipe]));
    sNow_ += t_->scalarIssueCycles.value;
    busy_[cost::kS] += t_->scalarIssueCycles.value;
    free_[pipe] = start + busy;
    last_[pipe] = start + busy + latency;
    done_[pipe] = std::max(done_[pipe], last_[pipe]);
    busy_[pipe] += busy;
    ++ops_[pipe];
    return last_[pipe];
  }
  void WaitFor(int pipe, double t) {
    if (pipe == cost::kS) {
      sNow_ = std::max(sNow_, t);
    } else {
      wait_[pipe] = std::max(wait_[pipe], t);
    }
  }
  static double& Slot(std::vector<double>& v, int32_t bufId) {
    const size_t i = bufId < 0 ? 0 : static_cast<size_t>(bufId);
    if (i >= v.size()) v.resize(i + 1, 0.0);
    return v[i];
  }

  const cost::ArchTable* t_ = nullptr;
  const uint8_t* ub_ = nullptr;
  double dmaBytesPerCycle_ = 1;
  double sNow_ = 0;
  double free_[cost::kPipes] = {};  // pipe occupied until
  double done_[cost::kPipes] = {};  // every result of the pipe complete at
  double wait_[cost::kPipes] = {};  // the pipe's next instruction may not start before
  double last_[cost::kPipes] = {};  // completion of the pipe's newest instruction
  double busy_[cost::kPipes] = {};
  uint64_t ops_[cost::kPipes] = {};
  std::vector<double> ubWrite_, ubRead_;  // per 32-B UB block: completion of its last V/MTE2 write, V/MTE3 read
  double flag_[kCostEvents][kCostEventIds] = {};
  std::vector<double> enq_, freed_;  // per queue block (buffer id)
  double l1Free_[2] = {}, l0Free_[2] = {};  // the cube's L1 / L0 slots free at
  double l0cFree_ = 0, lastM_ = 0;          // L0C free (its tile moved out) at; the last M's end
};

// The block being emulated on this thread when the cost model is on (else null): the scalar
// accessors, which have no block context at hand, read it.
inline thread_local CostBlock* t_cost = nullptr;

// One launch's estimate: created by Launch when the model is on.
class CostLaunch {
 public:
  // Null when the model is off (one relaxed atomic read per launch).
  // blockDim blocks (MIX launches: AI cores, each with `coresPerBlock` timelines, AIC first, and
  // `streamingCores` AIVs sharing HBM).
  static std::unique_ptr<CostLaunch> ForLaunch(const char* kernel, uint32_t blockDim, uint32_t arenaBytes,
                                               uint32_t coresPerBlock = 1, uint32_t streamingCores = 0) {
    uint32_t sample = 0;
    const int arch = amct_sim_state_cost_get(&sample);
    if (arch == 0) return nullptr;
    const cost::ArchTable* table = cost::TableForArch(arch);
    if (table == nullptr) return nullptr;
    std::unique_ptr<CostLaunch> l(new CostLaunch());
    l->table_ = table;
    l->kernel_ = kernel;
    l->blockDim_ = blockDim;
    l->arenaBytes_ = arenaBytes;
    l->dmaBytesPerCycle_ = cost::CoreDmaBytesPerCycle(*table, streamingCores != 0 ? streamingCores : blockDim);
    l->mix_ = coresPerBlock > 1 || streamingCores != 0;
    l->runs_.assign(blockDim, sample == 0 || sample >= blockDim ? 1 : 0);
    if (sample > 0 && sample < blockDim) {
      const uint32_t k = std::max<uint32_t>(sample, 2);
      for (uint32_t i = 0; i < k; ++i) l->runs_[static_cast<size_t>(i) * (blockDim - 1) / (k - 1)] = 1;
    }
    l->results_.resize(static_cast<size_t>(blockDim) * coresPerBlock);
    return l;
  }

  bool Runs(uint32_t block) const { return runs_[block] != 0; }

  CostBlock* Begin(const uint8_t* ub) {
    thread_local std::unique_ptr<CostBlock> storage;
    if (!storage) storage.reset(new CostBlock());
    storage->Reset(table_, ub, arenaBytes_, dmaBytesPerCycle_);
    return storage.get();
  }

  // Called by the block's thread at its end (each block writes only its own result).
  void End(uint32_t block, const CostBlock& b) {
    Result& r = results_[block];
    r.ran = true;
    r.cycles = b.EndCycles();
    for (int p = 0; p < cost::kPipes; ++p) {
      r.busy[p] = b.Busy(p);
      r.ops[p] = b.Ops(p);
    }
  }

  // After the launch: the slowest block's record goes to the process-wide list.
  void Finish() const {
    CostRecord rec;
    std::memset(&rec, 0, sizeof(rec));
    std::strncpy(rec.kernel, kernel_, sizeof(rec.kernel) - 1);
    rec.tableArch = table_->arch;
    rec.buildArch = __NPU_ARCH__;
    rec.blockDim = blockDim_;
    int slowest = -1;
    for (uint32_t i = 0; i < results_.size(); ++i) {
      if (!results_[i].ran) continue;
      ++rec.blocksRun;
      if (slowest < 0 || results_[i].cycles > results_[static_cast<size_t>(slowest)].cycles) slowest = static_cast<int>(i);
    }
    if (slowest < 0) return;
    const Result& s = results_[static_cast<size_t>(slowest)];
    rec.slowestBlock = static_cast<uint32_t>(slowest);
    rec.slowestCycles = s.cycles;
    for (int p = 0; p < cost::kPipes; ++p) {
      rec.busy[p] = s.busy[p];
      rec.ops[p] = s.ops[p];
      if (!mix_) continue;
      for (const Result& r : results_) {  // MIX: the busiest core of each pipe
        if (r.ran && r.busy[p] > rec.busy[p]) {
          rec.busy[p] = r.busy[p];
          rec.ops[p] = r.ops[p];
        }
      }
    }
    rec.clockGHz = table_->clockGHz.value;
    rec.launchUs = table_->launchUs.value;
    rec.estimateUs = rec.launchUs + s.cycles / (rec.clockGHz * 1e3);
    amct_sim_state_cost_record(&rec);
  }

 private:
  struct Result {
    bool ran = false;
    double cycles = 0;
    double busy[cost::kPipes] = {};
    uint64_t ops[cost::kPipes] = {};
  };
  const cost::ArchTable* table_ = nullptr;
  const char* kernel_ = "";
  uint32_t blockDim_ = 0;
  uint32_t arenaBytes_ = 0;
  double dmaBytesPerCycle_ = 1;
  bool mix_ = false;
  std::vector<uint8_t> runs_;
  std::vector<Result> results_;
};

}  // namespace detail
}  // namespace amct_sim

// Hooks in the primitives: one branch on a pointer the block context already holds when the
// model is off. `k` is the block's CostBlock* (BlockCtx::cost).
#define AMCT_SIM_COST(k, call)                 \
  do {                                         \
    if (__builtin_expect((k) != nullptr, 0)) { \
      (k)->call;                               \
    }                                          \
  } while (0)
