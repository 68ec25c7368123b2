// amct kernel sim: the memory model — LocalTensor, GlobalTensor, TPipe,
// TQue, TBuf, block index/count — and the operand checks shared by the DMA and vector APIs.
// Internal header: kernels include "kernel_operator.h".
#pragma once

#include "sim_context.h"
#include "sim_tiling_data.h"

// Compiler barrier around every API touching UB/GM data: kernels view one UB buffer through
// several types (ReinterpretCast), so no access may be reordered across an API call.
#define AMCT_SIM_BARRIER() __asm__ __volatile__("" ::: "memory")

// Public APIs taking tensors by reference are always-inline wrappers that pass the tensor's
// fields by value to the implementation: a kernel's LocalTensors never have their address
// taken, stay in registers, and GetValue/SetValue compile to one compare plus one load/store.

namespace AscendC {
template <typename T>
class LocalTensor;
template <typename T>
class GlobalTensor;
class TPipe;
}  // namespace AscendC

namespace amct_sim {
namespace detail {

struct TensorAccess;
void ScalarAccess(const uint8_t* p, uint32_t bytes, bool write, const char* api);

// The buffer id of an AIC-side UB view (LocalTensor(pos, addr, tileSize)): its ptr_ holds the UB
// byte offset, not an address; every API but Fixpipe L0C -> UB rejects it as not from a TQue/TBuf.
constexpr int32_t kAicUbViewBufId = -2;

inline bool IsUbPosition(AscendC::TPosition p) {
  return p == AscendC::TPosition::VECIN || p == AscendC::TPosition::VECOUT || p == AscendC::TPosition::VECCALC;
}

inline void MakeAicUbView(AscendC::TPosition pos, uint32_t addr, uint32_t elems, size_t elemBytes) {
  static const char* const kApi = "LocalTensor(TPosition, addr, tileSize)";
  BlockCtx* c = Ctx(kApi);
  if (c->coreKind != kCoreAic || c->mix == nullptr || !IsUbPosition(pos)) {
    Fail(kApi, "the sim emulates this constructor only on the AIC of a MIX launch, for a UB position (VECIN, "
               "VECOUT, VECCALC): the destination of Fixpipe L0C -> UB; elsewhere use TPipe::InitBuffer buffers");
  }
  if (static_cast<uint64_t>(addr) + static_cast<uint64_t>(elems) * elemBytes > c->arenaBytes) {
    Fail(kApi, Fmt("bounds: UB bytes [%u, %llu) exceed the arch's UB of %u bytes", addr,
                   static_cast<unsigned long long>(static_cast<uint64_t>(addr) + elems * elemBytes), c->arenaBytes));
  }
}

// The AIC's cube buffers: L1 (TPosition::A1, ::B1 share it), L0A (::A2), L0B (::B2), L0C (::CO1); -1 for others.
enum CubeMemIdx : int { kCubeL1 = 0, kCubeL0a = 1, kCubeL0b = 2, kCubeL0c = 3 };
inline int CubeIndex(AscendC::TPosition p) {
  using P = AscendC::TPosition;
  switch (p) {
    case P::A1:
    case P::B1: return kCubeL1;
    case P::A2: return kCubeL0a;
    case P::B2: return kCubeL0b;
    case P::CO1: return kCubeL0c;
    default: return -1;
  }
}
inline const char* CubeMemName(int i) {
  static const char* const kNames[4] = {"L1", "L0A", "L0B", "L0C"};
  return kNames[i];
}
// Capacities (sim_tiling_data.h cube::, from asc-devkit impl/basic_api/utils/kernel_utils_constants.h
// TOTAL_L1_SIZE / TOTAL_L0A_SIZE / TOTAL_L0B_SIZE / TOTAL_L0C_SIZE of each arch; the dav-3510 docs
// agree: 矩阵计算的搬入/L1-L0A-B内存结构介绍.md, "L1 Buffer的总容量为512K字节", "L0A Buffer/L0B Buffer的总容量为64K字节").
inline uint32_t CubeCapacity(int i) {
  switch (i) {
    case kCubeL1: return cube::kL1Bytes;
    case kCubeL0a: return cube::kL0aBytes;
    case kCubeL0b: return cube::kL0bBytes;
    default: return cube::L0cBytes(__NPU_ARCH__);
  }
}
// The base address of position p's buffer in this block (UB for the vector positions).
inline uint8_t* PositionBase(BlockCtx* c, AscendC::TPosition p) {
  const int i = CubeIndex(p);
  return i < 0 ? c->ub : c->cubeMem[i].data();
}

[[noreturn]] __attribute__((noinline, cold)) inline void IndexFail(const char* api, uint64_t index, uint64_t size) {
  Fail(api, Fmt("bounds: index %llu >= GetSize() %llu", static_cast<unsigned long long>(index),
                static_cast<unsigned long long>(size)));
}

// Base of TQue: the queue's record lives in the block context, so its state outlives the object.
class QueBase {
 public:
  QueBase() = default;
  QueBase(const QueBase&) = delete;
  QueBase& operator=(const QueBase&) = delete;

 protected:
  friend class AscendC::TPipe;
  BlockCtx* amct_ctx_ = nullptr;
  int32_t amct_queueId_ = -1;
  uint32_t amct_pipeSerial_ = 0;
  QueueRec& Rec(const char* api) const;
  void EnQueRaw(AscendC::TPosition pos, int32_t bufId, uint32_t gen, const uint8_t* ptr, uint64_t bytes);
  void FreeRaw(AscendC::TPosition pos, int32_t bufId, uint32_t gen);
};

// Base of TBuf.
class BufBase {
 public:
  BufBase() = default;
  BufBase(const BufBase&) = delete;
  BufBase& operator=(const BufBase&) = delete;

 protected:
  friend class AscendC::TPipe;
  BlockCtx* amct_ctx_ = nullptr;
  uint32_t amct_pipeSerial_ = 0;
  uint32_t amct_offset_ = 0;
  uint32_t amct_bytes_ = 0;
  int32_t amct_bufId_ = -1;
  uint8_t amct_pos_ = 0;
  bool amct_init_ = false;
  void Live(const char* api) const;
};

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

// ---- LocalTensor ---------------------------------------------------------------------------
template <typename T>
class LocalTensor {
 public:
  LocalTensor() = default;
  // kernel_tensor.h: a tensor at byte `addr` of `pos` holding tileSize elements. The sim accepts
  // it only on the AIC of a MIX launch for a UB position: a view of the AIVs' UB at that offset,
  // usable as the destination of Fixpipe L0C -> UB (sim_cube.h) and nothing else; the AIVs reach
  // the same bytes through their own TPipe buffers.
  __aicore__ inline LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize) {
    amct_sim::detail::MakeAicUbView(pos, addr, tileSize, sizeof(T));
    ptr_ = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(addr));
    size_ = tileSize;
    bufId_ = amct_sim::detail::kAicUbViewBufId;
    pos_ = static_cast<uint8_t>(pos);
  }

  // Scalar pipe: one bounds compare and one load/store, no hazard bookkeeping (S pairs hold),
  // except under strict sync (HardwareModes::strictSync), where every access is checked.
  __aicore__ inline T GetValue(const uint32_t index) const {
    if (__builtin_expect(index >= size_, 0)) amct_sim::detail::IndexFail("LocalTensor::GetValue", index, size_);
    AMCT_SIM_COST(amct_sim::detail::t_cost, ScalarUb(ptr_ + static_cast<size_t>(index) * sizeof(T), false));
    if (__builtin_expect(strict_, 0)) {
      amct_sim::detail::ScalarAccess(ptr_ + static_cast<size_t>(index) * sizeof(T), sizeof(T), false,
                                     "LocalTensor::GetValue");
    }
    T value;
    std::memcpy(&value, ptr_ + static_cast<size_t>(index) * sizeof(T), sizeof(T));
    return value;
  }
  template <typename S>
  __aicore__ inline void SetValue(const uint32_t index, const S value) const {
    if (__builtin_expect(index >= size_, 0)) amct_sim::detail::IndexFail("LocalTensor::SetValue", index, size_);
    AMCT_SIM_COST(amct_sim::detail::t_cost, ScalarUb(ptr_ + static_cast<size_t>(index) * sizeof(T), true));
    if (__builtin_expect(strict_, 0)) {
      amct_sim::detail::ScalarAccess(ptr_ + static_cast<size_t>(index) * sizeof(T), sizeof(T), true,
                                     "LocalTensor::SetValue");
    }
    const T converted = static_cast<T>(value);
    std::memcpy(ptr_ + static_cast<size_t>(index) * sizeof(T), &converted, sizeof(T));
  }
  __aicore__ inline LocalTensor operator[](const uint32_t offset) const {
    if (__builtin_expect(offset > size_, 0)) {
      amct_sim::detail::Fail("LocalTensor::operator[]",
                             amct_sim::detail::Fmt("bounds: offset %u is past the end of a view of %u elements",
                                                   offset, size_));
    }
    LocalTensor view = *this;
    view.ptr_ += static_cast<size_t>(offset) * sizeof(T);
    view.size_ -= offset;
    return view;
  }
  template <typename U>
  __aicore__ inline LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> out;
    out.ptr_ = ptr_;
    out.size_ = static_cast<uint32_t>(static_cast<uint64_t>(size_) * sizeof(T) / sizeof(U));
    out.bufId_ = bufId_;
    out.gen_ = gen_;
    out.pos_ = pos_;
    out.strict_ = strict_;
    return out;
  }
  __aicore__ inline uint32_t GetSize() const { return size_; }
  __aicore__ inline void SetSize(const uint32_t size) {
    if (size > size_) {
      amct_sim::detail::Fail("LocalTensor::SetSize",
                             amct_sim::detail::Fmt("bounds: SetSize(%u) would grow a view of %u elements "
                                                   "(SetSize only shrinks)",
                                                   size, size_));
    }
    size_ = size;
  }
  __aicore__ inline int32_t GetPosition() const { return static_cast<int32_t>(pos_); }

 private:
  template <typename>
  friend class LocalTensor;
  friend struct amct_sim::detail::TensorAccess;
  uint8_t* ptr_ = nullptr;
  uint32_t size_ = 0;
  int32_t bufId_ = -1;
  uint32_t gen_ = 0;
  uint8_t pos_ = static_cast<uint8_t>(TPosition::VECCALC);
  bool strict_ = false;  // made while a strict-sync launch runs: scalar accesses are checked
};

// ---- GlobalTensor --------------------------------------------------------------------------
template <typename T>
class GlobalTensor {
 public:
  GlobalTensor() = default;
  __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
    base_ = reinterpret_cast<uintptr_t>(buffer);
    extLo_ = base_;
    const uint64_t bytes = bufferSize * sizeof(T);
    if (bufferSize != 0 && (bytes / sizeof(T) != bufferSize || base_ + bytes < base_)) {
      amct_sim::detail::Fail("GlobalTensor::SetGlobalBuffer",
                             amct_sim::detail::Fmt("bufferSize %llu overflows the address space",
                                                   static_cast<unsigned long long>(bufferSize)));
    }
    extHi_ = base_ + bytes;
    size_ = bufferSize;
    set_ = true;
  }
  __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer) {
    base_ = reinterpret_cast<uintptr_t>(buffer);
    extLo_ = 0;
    extHi_ = ~uintptr_t{0};
    size_ = 0;
    set_ = true;
  }
  // Scalar read (S pipe). [C] only on GM unwritten during the launch: checked by the race check.
  __aicore__ inline T GetValue(const uint64_t offset) const {
    static const char* const kApi = "GlobalTensor::GetValue";
    amct_sim::detail::BlockCtx* c = amct_sim::detail::Ctx(kApi);
    CheckSet(kApi);
    const uintptr_t lo = base_ + offset * sizeof(T);
    const uintptr_t hi = lo + sizeof(T);
    amct_sim::detail::GmCheckExtent(kApi, lo, hi, extLo_, extHi_);
    const amct_sim::detail::RegionInfo* r = amct_sim::detail::GmFindRegion(c, kApi, lo, hi, false);
    if (r->tracked) amct_sim::detail::AddInterval(c->outcome->log.scalarReads, lo, hi);
    AMCT_SIM_COST(c->cost, ScalarGm());
    T value;
    std::memcpy(&value, reinterpret_cast<const void*>(lo), sizeof(T));
    return value;
  }
  __aicore__ inline uint64_t GetSize() const { return size_; }
  __aicore__ inline GlobalTensor operator[](const uint64_t offset) const {
    GlobalTensor view = *this;
    view.base_ += offset * sizeof(T);
    return view;
  }

 private:
  friend struct amct_sim::detail::TensorAccess;
  void CheckSet(const char* api) const {
    if (!set_) amct_sim::detail::Fail(api, "GlobalTensor used before SetGlobalBuffer");
  }
  uintptr_t base_ = 0;
  uintptr_t extLo_ = 0;
  uintptr_t extHi_ = 0;
  uint64_t size_ = 0;
  bool set_ = false;
};

}  // namespace AscendC

namespace amct_sim {
namespace detail {

// Strict sync: a scalar access of UB bytes [p, p + bytes) (out of line: strict runs are tests).
__attribute__((noinline)) inline void ScalarAccess(const uint8_t* p, uint32_t bytes, bool write, const char* api) {
  BlockCtx* c = Ctx(api);
  ScalarUbAccess(c, static_cast<uint32_t>(p - c->ub), bytes, write, api);
}

struct TensorAccess {
  template <class T>
  AMCT_SIM_INLINE static uint8_t* Ptr(const AscendC::LocalTensor<T>& t) {
    return t.ptr_;
  }
  template <class T>
  AMCT_SIM_INLINE static uint32_t Size(const AscendC::LocalTensor<T>& t) {
    return t.size_;
  }
  template <class T>
  AMCT_SIM_INLINE static int32_t BufId(const AscendC::LocalTensor<T>& t) {
    return t.bufId_;
  }
  template <class T>
  AMCT_SIM_INLINE static uint32_t Gen(const AscendC::LocalTensor<T>& t) {
    return t.gen_;
  }
  template <class T>
  AMCT_SIM_INLINE static uint8_t Pos(const AscendC::LocalTensor<T>& t) {
    return t.pos_;
  }
  template <class T>
  static AscendC::LocalTensor<T> Make(uint8_t* ptr, uint32_t elems, int32_t bufId, uint32_t gen, uint8_t pos) {
    AscendC::LocalTensor<T> t;
    t.ptr_ = ptr;
    t.size_ = elems;
    t.bufId_ = bufId;
    t.gen_ = gen;
    t.pos_ = pos;
    t.strict_ = t_ctx != nullptr && t_ctx->strictSync && t_ctx->checkSync;
    return t;
  }
  template <class T>
  static uintptr_t GmBase(const AscendC::GlobalTensor<T>& g) {
    return g.base_;
  }
  template <class T>
  static uintptr_t GmExtLo(const AscendC::GlobalTensor<T>& g) {
    return g.extLo_;
  }
  template <class T>
  static uintptr_t GmExtHi(const AscendC::GlobalTensor<T>& g) {
    return g.extHi_;
  }
  template <class T>
  static bool GmSet(const AscendC::GlobalTensor<T>& g) {
    return g.set_;
  }
};

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

// ---- TPipe, TQue, TBuf -----------------------------------------------------------------------
template <TPosition pos, int32_t depth, auto mask = 0>
class TQue;
template <TPosition pos = TPosition::LCM>
class TBuf;

class TPipe {
 public:
  TPipe();
  ~TPipe();
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  template <class T>
  bool InitBuffer(T& que, uint8_t num, uint32_t len) {
    static_assert(std::is_base_of<amct_sim::detail::QueBase, T>::value,
                  "TPipe::InitBuffer(que, num, len): que must be a TQue");
    return InitQueue(que, T::kPosition, T::kDepth, num, len);
  }
  template <TPosition pos>
  bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
    return InitTBuf(buf, pos, len);
  }
  template <HardEvent evt>
  TEventID AllocEventID() {
    return AllocEvent(evt);
  }
  template <HardEvent evt>
  void ReleaseEventID(TEventID id) {
    ReleaseEvent(evt, id);
  }
  TEventID FetchEventID(HardEvent evt);

 private:
  amct_sim::detail::BlockCtx* Live(const char* api) const;
  bool InitQueue(amct_sim::detail::QueBase& que, TPosition pos, int32_t depth, uint8_t num, uint32_t len);
  bool InitTBuf(amct_sim::detail::BufBase& buf, TPosition pos, uint32_t len);
  TEventID AllocEvent(HardEvent evt);
  void ReleaseEvent(HardEvent evt, TEventID id);
  uint32_t Reserve(amct_sim::detail::BlockCtx* c, const char* api, uint32_t blocks, uint32_t len, TPosition pos);
  uint32_t ReserveCube(amct_sim::detail::BlockCtx* c, const char* api, uint32_t blocks, uint32_t len, TPosition pos);

  amct_sim::detail::BlockCtx* ctx_ = nullptr;
  uint32_t serial_ = 0;
};

template <TPosition pos, int32_t depth, auto mask>
class TQue : public amct_sim::detail::QueBase {
  static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::A1 || pos == TPosition::B1 ||
                    pos == TPosition::A2 || pos == TPosition::B2 || pos == TPosition::CO1,
                "TQue: only TPosition::VECIN, VECOUT (AIV) and TPosition::A1, ::B1, ::A2, ::B2, ::CO1 (AIC) queues are in the subset");
  static_assert(depth == 1, "TQue: depth must be 1");

 public:
  static constexpr TPosition kPosition = pos;
  static constexpr int32_t kDepth = depth;

  template <typename T>
  __aicore__ inline LocalTensor<T> AllocTensor();
  template <typename T>
  __aicore__ AMCT_SIM_INLINE bool EnQue(const LocalTensor<T>& tensor) {
    EnQueRaw(pos, amct_sim::detail::TensorAccess::BufId(tensor), amct_sim::detail::TensorAccess::Gen(tensor),
             amct_sim::detail::TensorAccess::Ptr(tensor),
             static_cast<uint64_t>(amct_sim::detail::TensorAccess::Size(tensor)) * sizeof(T));
    return true;
  }
  template <typename T>
  __aicore__ inline LocalTensor<T> DeQue();
  template <typename T>
  __aicore__ AMCT_SIM_INLINE void FreeTensor(LocalTensor<T>& tensor) {
    FreeRaw(pos, amct_sim::detail::TensorAccess::BufId(tensor), amct_sim::detail::TensorAccess::Gen(tensor));
  }
  __aicore__ inline bool VacantInQue() {
    amct_sim::detail::QueueRec& q = Rec("TQue::VacantInQue");
    return static_cast<int32_t>(q.queued.size()) < q.depth;
  }
  __aicore__ inline bool HasTensorInQue() { return !Rec("TQue::HasTensorInQue").queued.empty(); }
  __aicore__ inline int32_t GetTensorCountInQue() {
    return static_cast<int32_t>(Rec("TQue::GetTensorCountInQue").queued.size());
  }
  __aicore__ inline bool HasIdleBuffer() { return !Rec("TQue::HasIdleBuffer").idle.empty(); }
};

template <TPosition pos>
class TBuf : public amct_sim::detail::BufBase {
  static_assert(pos == TPosition::VECCALC || pos == TPosition::VECIN || pos == TPosition::A1 || pos == TPosition::B1 ||
                    pos == TPosition::A2 || pos == TPosition::B2 || pos == TPosition::CO1,
                "TBuf: only TBuf<TPosition::VECCALC>, TBuf<TPosition::VECIN> (AIV) and TPosition::A1, ::B1, ::A2, ::B2, ::CO1 (AIC) are "
                "in the subset");

 public:
  template <typename T>
  __aicore__ inline LocalTensor<T> Get();
  template <typename T>
  __aicore__ inline LocalTensor<T> Get(uint32_t len);
  template <typename T>
  __aicore__ inline LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset);
};

// ---- block index/count ---------------------------------------------------------------------
__aicore__ inline int64_t GetBlockIdx() { return amct_sim::detail::Ctx("GetBlockIdx")->blockIdx; }
__aicore__ inline int64_t GetBlockNum() { return amct_sim::detail::Ctx("GetBlockNum")->blockNum; }
// MIX launches (sim_mix.h): an AIV's index within its AI core (0 on the AIC and in vector-only
// launches), and the AIVs per AIC (1 on the AIC and in vector-only launches).
__aicore__ inline int64_t GetSubBlockIdx() { return amct_sim::detail::Ctx("GetSubBlockIdx")->subBlockIdx; }
__aicore__ inline int64_t GetTaskRatio() { return amct_sim::detail::Ctx("GetTaskRatio")->taskRatio; }
__aicore__ constexpr inline int16_t GetDataBlockSizeInBytes() { return 32; }

}  // namespace AscendC

// The current TPipe (global namespace, as upstream).
inline AscendC::TPipe* GetTPipePtr() {
  amct_sim::detail::BlockCtx* c = amct_sim::detail::Ctx("GetTPipePtr");
  if (c->pipe == nullptr) amct_sim::detail::Fail("GetTPipePtr", "no live TPipe (construct one in the kernel first)");
  return static_cast<AscendC::TPipe*>(c->pipe);
}

// ---- implementation ------------------------------------------------------------------------
namespace amct_sim {
namespace detail {

// A LocalTensor operand of a DMA/vector API, type-erased for the shared checks.
struct Opnd {
  const char* role;
  uint8_t* ptr;
  uint64_t viewBytes;
  uint64_t usedBytes;
  uint32_t elemSize;
  int32_t bufId;
  uint32_t gen;
  uint8_t pos;
  uint32_t off;  // UB offset, set by CheckOpnd
};

template <class T>
AMCT_SIM_INLINE Opnd MakeOpnd(const AscendC::LocalTensor<T>& t, uint64_t usedBytes, const char* role) {
  return Opnd{role,
              TensorAccess::Ptr(t),
              static_cast<uint64_t>(TensorAccess::Size(t)) * sizeof(T),
              usedBytes,
              static_cast<uint32_t>(sizeof(T)),
              TensorAccess::BufId(t),
              TensorAccess::Gen(t),
              TensorAccess::Pos(t),
              0};
}

[[noreturn]] __attribute__((noinline, cold)) inline void OpndFail(BlockCtx* c, const char* api, const Opnd& o) {
  if (o.ptr == nullptr) Fail(api, Fmt("%s is an uninitialised LocalTensor (not from a TQue or TBuf)", o.role));
  if (o.bufId < 0 || static_cast<size_t>(o.bufId) >= c->bufGen.size() || c->bufGen[o.bufId] != o.gen) {
    Fail(api, Fmt("queues: %s is a stale tensor: its buffer was freed (FreeTensor) or its TPipe destroyed", o.role));
  }
  const uint64_t off = static_cast<uint64_t>(o.ptr - c->ub);
  if (off % 32 != 0) {
    Fail(api, Fmt("alignment: %s starts at UB offset %llu, not a multiple of 32 bytes", o.role,
                  static_cast<unsigned long long>(off)));
  }
  Fail(api, Fmt("bounds: %s needs %llu elements (%llu bytes) but its view holds %llu elements", o.role,
                static_cast<unsigned long long>((o.usedBytes + o.elemSize - 1) / o.elemSize),
                static_cast<unsigned long long>(o.usedBytes),
                static_cast<unsigned long long>(o.viewBytes / o.elemSize)));
}

// Null, stale, alignment (% 32) and bounds checks; sets o.off.
inline void CheckOpnd(BlockCtx* c, const char* api, Opnd& o) {
  const bool bad = o.ptr == nullptr || o.bufId < 0 || static_cast<size_t>(o.bufId) >= c->bufGen.size() ||
                   c->bufGen[o.bufId] != o.gen || ((o.ptr - c->ub) & 31) != 0 || o.usedBytes > o.viewBytes;
  if (__builtin_expect(bad, 0)) OpndFail(c, api, o);
  o.off = static_cast<uint32_t>(o.ptr - c->ub);
}

// [C] a destination may fully alias a source (same start, same footprint); partial overlap is an error.
inline void CheckOverlap(const char* api, const Opnd& d, const Opnd& s) {
  const uint64_t d0 = d.off, d1 = d.off + d.usedBytes, s0 = s.off, s1 = s.off + s.usedBytes;
  if (d0 < s1 && s0 < d1 && !(d0 == s0 && d1 == s1)) {
    Fail(api, Fmt("parameters: %s UB bytes [%llu, %llu) partially overlap %s bytes [%llu, %llu) (only full "
                  "aliasing is allowed)",
                  d.role, static_cast<unsigned long long>(d0), static_cast<unsigned long long>(d1), s.role,
                  static_cast<unsigned long long>(s0), static_cast<unsigned long long>(s1)));
  }
}

inline QueueRec& QueBase::Rec(const char* api) const {
  BlockCtx* c = Ctx(api);
  if (amct_queueId_ < 0 || amct_ctx_ != c) Fail(api, "TQue used before TPipe::InitBuffer");
  if (c->pipe == nullptr || c->pipeSerial != amct_pipeSerial_) Fail(api, "the TQue's TPipe was destroyed");
  return c->queues[static_cast<size_t>(amct_queueId_)];
}

inline void BufBase::Live(const char* api) const {
  BlockCtx* c = Ctx(api);
  if (!amct_init_ || amct_ctx_ != c) Fail(api, "TBuf used before TPipe::InitBuffer");
  if (c->pipe == nullptr || c->pipeSerial != amct_pipeSerial_) Fail(api, "the TBuf's TPipe was destroyed");
}

inline int FindQueueBlock(const QueueRec& q, int32_t bufId) {
  for (size_t i = 0; i < q.blocks.size(); ++i) {
    if (q.blocks[i].bufId == bufId) return static_cast<int>(i);
  }
  return -1;
}

// The pipes a queue's EnQue/DeQue (producer -> consumer) and FreeTensor/AllocTensor (consumer ->
// producer) order: VECIN MTE2 -> V, VECOUT V -> MTE3; on the AIC TPosition::A1, ::B1 MTE2 -> MTE1, ::A2, ::B2 MTE1 -> M,
// CO1 M -> FIX (the pipes that fill and drain each cube buffer).
inline Pipe QueueProducer(AscendC::TPosition pos) {
  switch (CubeIndex(pos)) {
    case kCubeL1: return kPipeMte2;
    case kCubeL0a:
    case kCubeL0b: return kPipeMte1;
    case kCubeL0c: return kPipeM;
    default: return pos == AscendC::TPosition::VECIN ? kPipeMte2 : kPipeV;
  }
}
inline Pipe QueueConsumer(AscendC::TPosition pos) {
  switch (CubeIndex(pos)) {
    case kCubeL1: return kPipeMte1;
    case kCubeL0a:
    case kCubeL0b: return kPipeM;
    case kCubeL0c: return kPipeFix;
    default: return pos == AscendC::TPosition::VECIN ? kPipeV : kPipeMte3;
  }
}

inline void QueBase::EnQueRaw(AscendC::TPosition pos, int32_t bufId, uint32_t gen, const uint8_t* ptr,
                              uint64_t bytes) {
  static const char* const kApi = "TQue::EnQue";
  QueueRec& q = Rec(kApi);
  BlockCtx* c = amct_ctx_;
  const int i = FindQueueBlock(q, bufId);
  if (i < 0) Fail(kApi, "queues: the tensor does not belong to this TQue (foreign tensor)");
  QueueBlockRec& b = q.blocks[static_cast<size_t>(i)];
  if (b.state == kQbIdle || c->bufGen[static_cast<size_t>(b.bufId)] != gen) {
    Fail(kApi, "queues: the tensor was freed (FreeTensor) and not allocated again");
  }
  if (b.state == kQbQueued) Fail(kApi, "queues: the tensor is already queued (EnQue twice without DeQue)");
  if (static_cast<int32_t>(q.queued.size()) >= q.depth) {
    Fail(kApi, Fmt("queues: EnQue beyond depth %d (DeQue first)", q.depth));
  }
  b.state = kQbQueued;
  b.viewOffset = static_cast<uint32_t>(ptr - PositionBase(c, pos));
  b.viewBytes = static_cast<uint32_t>(bytes);
  b.enq = TakeSnap(c, QueueProducer(pos));  // MTE2->V (VECIN) or V->MTE3 (VECOUT): count at EnQue
  AMCT_SIM_COST(c->cost, EnQue(QueueProducer(pos), b.bufId));
  q.queued.push_back(i);
}

inline void QueBase::FreeRaw(AscendC::TPosition pos, int32_t bufId, uint32_t gen) {
  static const char* const kApi = "TQue::FreeTensor";
  QueueRec& q = Rec(kApi);
  BlockCtx* c = amct_ctx_;
  const int i = FindQueueBlock(q, bufId);
  if (i < 0) Fail(kApi, "queues: the tensor does not belong to this TQue (foreign tensor)");
  QueueBlockRec& b = q.blocks[static_cast<size_t>(i)];
  if (b.state == kQbIdle || c->bufGen[static_cast<size_t>(b.bufId)] != gen) {
    Fail(kApi, "queues: the tensor was already freed (FreeTensor twice)");
  }
  if (b.state == kQbQueued) Fail(kApi, "queues: the tensor is queued (DeQue it before FreeTensor)");
  b.state = kQbIdle;
  ++c->bufGen[static_cast<size_t>(b.bufId)];  // every handle of the block is now stale
  b.freed = TakeSnap(c, QueueConsumer(pos));  // V->MTE2 (VECIN) or MTE3->V (VECOUT): count at Free
  AMCT_SIM_COST(c->cost, Free(QueueConsumer(pos), b.bufId));
  q.idle.push_back(i);
}

}  // namespace detail
}  // namespace amct_sim

namespace AscendC {

inline TPipe::TPipe() {
  amct_sim::detail::BlockCtx* c = amct_sim::detail::Ctx("TPipe::TPipe");
  if (c->pipe != nullptr) {
    amct_sim::detail::Fail("TPipe::TPipe", "UB: a second TPipe while one is live (one TPipe per kernel invocation)");
  }
  ctx_ = c;
  c->pipe = this;
  serial_ = ++c->pipeSerial;
  c->pipeOffset = 0;
  c->pipeBuffers = 0;
  c->pipeFirstBufId = static_cast<uint32_t>(c->bufGen.size());
  std::memset(c->queBlocksPerPos, 0, sizeof(c->queBlocksPerPos));
  std::memset(c->eventAlloc, 0, sizeof(c->eventAlloc));
  for (int i = 0; i < 4; ++i) {  // cube buffers: a fresh bump pointer and hazard state per TPipe
    c->cubeOffset[i] = 0;
    std::fill(c->cubeW[i].begin(), c->cubeW[i].end(), 0u);
    std::fill(c->cubeR[i].begin(), c->cubeR[i].end(), 0u);
  }
}

inline TPipe::~TPipe() {
  amct_sim::detail::BlockCtx* c = ctx_;
  if (c == nullptr || amct_sim::detail::t_ctx != c || c->pipe != this) return;
  for (const amct_sim::detail::QueueRec& q : c->queues) {
    if (q.pipeSerial != serial_) continue;
    int held = 0;
    for (const amct_sim::detail::QueueBlockRec& b : q.blocks) held += (b.state != amct_sim::detail::kQbIdle);
    if (held > 0 && c->exitError.empty()) {
      c->exitError = amct_sim::detail::Fmt(
          "TPipe::~TPipe: queues: a TQue<%s> still holds %d of its %zu blocks at exit (allocated, queued or "
          "dequeued but never FreeTensor'd)",
          amct_sim::detail::PositionName(q.pos), held, q.blocks.size());
    }
  }
  for (size_t i = c->pipeFirstBufId; i < c->bufGen.size(); ++i) ++c->bufGen[i];
  c->pipe = nullptr;
}

inline amct_sim::detail::BlockCtx* TPipe::Live(const char* api) const {
  amct_sim::detail::BlockCtx* c = amct_sim::detail::Ctx(api);
  if (c != ctx_ || c->pipe != this) amct_sim::detail::Fail(api, "this TPipe is not the live TPipe of the block");
  return c;
}

inline uint32_t TPipe::ReserveCube(amct_sim::detail::BlockCtx* c, const char* api, uint32_t blocks, uint32_t len,
                                  TPosition pos) {
  using amct_sim::detail::Fmt;
  const int i = amct_sim::detail::CubeIndex(pos);
  const char* mem = amct_sim::detail::CubeMemName(i);
  if (c->coreKind != amct_sim::detail::kCoreAic || c->mix == nullptr) {
    amct_sim::detail::Fail(api, Fmt("%s: TPosition::%s is a buffer of the AIC (cube core) of a MIX launch: an AIV has "
                                    "no L1/L0A/L0B/L0C (if ASCEND_IS_AIC { ... })",
                                    mem, amct_sim::detail::PositionName(pos)));
  }
  if (len == 0) amct_sim::detail::Fail(api, Fmt("%s: len must be > 0", mem));
  if (c->pipeBuffers + blocks > 64) {
    amct_sim::detail::Fail(api, Fmt("%s: %u more buffers would exceed 64 buffers per TPipe (%u allocated)", mem, blocks,
                                    c->pipeBuffers));
  }
  const uint64_t bytes = amct_sim::detail::RoundUp32(len) * blocks;
  const uint64_t end = c->cubeOffset[i] + bytes;
  const uint32_t cap = amct_sim::detail::CubeCapacity(i);
  if (end > cap) {
    amct_sim::detail::Fail(api, Fmt("%s: %u x %llu bytes at offset %u end at %llu, over the %s capacity of %u bytes "
                                    "(dav-%d)",
                                    mem, blocks, static_cast<unsigned long long>(amct_sim::detail::RoundUp32(len)),
                                    c->cubeOffset[i], static_cast<unsigned long long>(end), mem, cap, __NPU_ARCH__));
  }
  if (c->cubeMem[i].size() != cap) {  // first use in this thread: the buffer and its hazard state
    c->cubeMem[i].assign(cap, 0);
    c->cubeW[i].assign(cap / 32, 0u);
    c->cubeR[i].assign(cap / 32, 0u);
  }
  const uint32_t offset = c->cubeOffset[i];
  c->cubeOffset[i] = static_cast<uint32_t>(end);
  c->pipeBuffers += blocks;
  std::memset(c->cubeMem[i].data() + offset, c->launch->poison, bytes);  // fresh buffers read as poison
  return offset;
}

inline uint32_t TPipe::Reserve(amct_sim::detail::BlockCtx* c, const char* api, uint32_t blocks, uint32_t len,
                               TPosition pos) {
  if (amct_sim::detail::CubeIndex(pos) >= 0) return ReserveCube(c, api, blocks, len, pos);
  if (c->coreKind == amct_sim::detail::kCoreAic) {
    amct_sim::detail::Fail(api, "UB: the AIC (cube core) of a MIX launch has no unified buffer: vector-position "
                                "TQue/TBuf buffers belong to the AIVs (if ASCEND_IS_AIV { ... })");
  }
  using amct_sim::detail::Fmt;
  if (len == 0) amct_sim::detail::Fail(api, "UB: len must be > 0");
  if (c->pipeBuffers + blocks > 64) {
    amct_sim::detail::Fail(api, Fmt("UB: %u more buffers would exceed 64 buffers per TPipe (%u allocated)", blocks,
                                    c->pipeBuffers));
  }
  const uint64_t bytes = amct_sim::detail::RoundUp32(len) * blocks;
  const uint64_t end = c->pipeOffset + bytes;
  if (end > c->ubLimit) {
    amct_sim::detail::Fail(api, Fmt("UB: %u x %llu bytes at offset %u end at %llu, over the UB limit of %llu bytes "
                                    "(GetPlatform().ubBytes: AMCT_SIM_UB_SIZE / SetPlatform / arch default)",
                                    blocks, static_cast<unsigned long long>(amct_sim::detail::RoundUp32(len)),
                                    c->pipeOffset, static_cast<unsigned long long>(end),
                                    static_cast<unsigned long long>(c->ubLimit)));
  }
  const uint32_t offset = c->pipeOffset;
  c->pipeOffset = static_cast<uint32_t>(end);
  c->pipeBuffers += blocks;
  std::memset(c->ub + offset, c->launch->poison, bytes);  // fresh UB reads as poison (AMCT_SIM_POISON)
  c->hazardBlocksUsed = std::max(c->hazardBlocksUsed, static_cast<uint32_t>((end + 31) / 32));
  return offset;
}

inline bool TPipe::InitQueue(amct_sim::detail::QueBase& que, TPosition pos, int32_t depth, uint8_t num,
                             uint32_t len) {
  using amct_sim::detail::Fmt;
  static const char* const kApi = "TPipe::InitBuffer(TQue)";
  amct_sim::detail::BlockCtx* c = Live(kApi);
  if (que.amct_queueId_ >= 0 && que.amct_ctx_ == c && que.amct_pipeSerial_ == serial_ && c->pipe == this) {
    amct_sim::detail::Fail(kApi, "UB: InitBuffer called twice for one TQue");
  }
  if (num < 1 || num > 64) amct_sim::detail::Fail(kApi, Fmt("UB: num must be in [1, 64], got %u", num));
  const int p = static_cast<int>(pos);
  if (c->queBlocksPerPos[p] + num > 8) {
    amct_sim::detail::Fail(kApi, Fmt("UB: %u more TQue blocks at TPosition::%s would exceed 8 per TPosition (%u "
                                     "allocated; one hardware event each)",
                                     num, amct_sim::detail::PositionName(pos), c->queBlocksPerPos[p]));
  }
  const uint32_t offset = Reserve(c, kApi, num, len, pos);
  c->queBlocksPerPos[p] = static_cast<uint8_t>(c->queBlocksPerPos[p] + num);
  amct_sim::detail::QueueRec rec;
  rec.pipeSerial = serial_;
  rec.pos = pos;
  rec.depth = depth;
  rec.len = len;
  const uint32_t blockBytes = static_cast<uint32_t>(amct_sim::detail::RoundUp32(len));
  for (uint32_t i = 0; i < num; ++i) {
    amct_sim::detail::QueueBlockRec b;
    b.offset = offset + i * blockBytes;
    b.bytes = blockBytes;
    b.bufId = static_cast<int32_t>(c->bufGen.size());
    c->bufGen.push_back(1);
    rec.blocks.push_back(b);
    rec.idle.push_back(static_cast<int>(i));
  }
  c->queues.push_back(std::move(rec));
  que.amct_ctx_ = c;
  que.amct_queueId_ = static_cast<int32_t>(c->queues.size() - 1);
  que.amct_pipeSerial_ = serial_;
  return true;
}

inline bool TPipe::InitTBuf(amct_sim::detail::BufBase& buf, TPosition pos, uint32_t len) {
  static const char* const kApi = "TPipe::InitBuffer(TBuf)";
  amct_sim::detail::BlockCtx* c = Live(kApi);
  if (buf.amct_init_ && buf.amct_ctx_ == c && buf.amct_pipeSerial_ == serial_) {
    amct_sim::detail::Fail(kApi, "UB: InitBuffer called twice for one TBuf");
  }
  const uint32_t offset = Reserve(c, kApi, 1, len, pos);
  buf.amct_ctx_ = c;
  buf.amct_pipeSerial_ = serial_;
  buf.amct_offset_ = offset;
  buf.amct_bytes_ = static_cast<uint32_t>(amct_sim::detail::RoundUp32(len));
  buf.amct_bufId_ = static_cast<int32_t>(c->bufGen.size());
  buf.amct_pos_ = static_cast<uint8_t>(pos);
  buf.amct_init_ = true;
  c->bufGen.push_back(1);
  return true;
}

inline TEventID TPipe::AllocEvent(HardEvent evt) {
  static const char* const kApi = "TPipe::AllocEventID";
  amct_sim::detail::BlockCtx* c = Live(kApi);
  const amct_sim::detail::EventInfo info = amct_sim::detail::GetEventInfo(evt);
  if (!info.vectorCore) {
    amct_sim::detail::Fail(kApi, amct_sim::detail::Fmt("flags: HardEvent::%s is not a vector-core event", info.name));
  }
  uint8_t& bits = c->eventAlloc[static_cast<int>(evt)];
  for (int id = 0; id < amct_sim::detail::kEventIds; ++id) {
    if (!(bits & (1u << id))) {
      bits = static_cast<uint8_t>(bits | (1u << id));
      return static_cast<TEventID>(id);
    }
  }
  amct_sim::detail::Fail(kApi, amct_sim::detail::Fmt("flags: all 8 ids of HardEvent::%s are allocated", info.name));
}

inline void TPipe::ReleaseEvent(HardEvent evt, TEventID id) {
  static const char* const kApi = "TPipe::ReleaseEventID";
  amct_sim::detail::BlockCtx* c = Live(kApi);
  const amct_sim::detail::EventInfo info = amct_sim::detail::GetEventInfo(evt);
  if (!info.vectorCore) {
    amct_sim::detail::Fail(kApi, amct_sim::detail::Fmt("flags: HardEvent::%s is not a vector-core event", info.name));
  }
  if (id < 0 || id >= amct_sim::detail::kEventIds) {
    amct_sim::detail::Fail(kApi, amct_sim::detail::Fmt("flags: event id %d is not in 0..7", id));
  }
  uint8_t& bits = c->eventAlloc[static_cast<int>(evt)];
  if (!(bits & (1u << id))) {
    amct_sim::detail::Fail(kApi, amct_sim::detail::Fmt("flags: id %d of HardEvent::%s was not allocated by "
                                                       "AllocEventID",
                                                       id, info.name));
  }
  bits = static_cast<uint8_t>(bits & ~(1u << id));
}

inline TEventID TPipe::FetchEventID(HardEvent evt) {
  static const char* const kApi = "TPipe::FetchEventID";
  amct_sim::detail::BlockCtx* c = Live(kApi);
  const amct_sim::detail::EventInfo info = amct_sim::detail::GetEventInfo(evt);
  if (!info.vectorCore) {
    amct_sim::detail::Fail(kApi, amct_sim::detail::Fmt("flags: HardEvent::%s is not a vector-core event", info.name));
  }
  const uint8_t bits = c->eventAlloc[static_cast<int>(evt)];
  for (int id = 0; id < amct_sim::detail::kEventIds; ++id) {
    if (!(bits & (1u << id))) return static_cast<TEventID>(id);
  }
  amct_sim::detail::Fail(kApi, amct_sim::detail::Fmt("flags: all 8 ids of HardEvent::%s are allocated", info.name));
}

template <TPosition pos, int32_t depth, auto mask>
template <typename T>
inline LocalTensor<T> TQue<pos, depth, mask>::AllocTensor() {
  using namespace amct_sim::detail;
  static const char* const kApi = "TQue::AllocTensor";
  QueueRec& q = Rec(kApi);
  BlockCtx* c = amct_ctx_;
  if (q.idle.empty()) {
    Fail(kApi, Fmt("queues: no idle buffer: all %zu blocks of this TQue<%s> are allocated or queued (FreeTensor "
                   "one first)",
                   q.blocks.size(), PositionName(pos)));
  }
  const int i = q.idle.front();
  q.idle.pop_front();
  QueueBlockRec& b = q.blocks[static_cast<size_t>(i)];
  b.state = kQbAllocated;
  MergeSnap(c, QueueProducer(pos), b.freed);  // V->MTE2 (VECIN) or MTE3->V (VECOUT): count at Free
  AMCT_SIM_COST(c->cost, Alloc(QueueProducer(pos), b.bufId));
  b.freed.valid = false;
  return TensorAccess::Make<T>(PositionBase(c, pos) + b.offset, static_cast<uint32_t>(b.bytes / sizeof(T)), b.bufId,
                               c->bufGen[static_cast<size_t>(b.bufId)], static_cast<uint8_t>(pos));
}

template <TPosition pos, int32_t depth, auto mask>
template <typename T>
inline LocalTensor<T> TQue<pos, depth, mask>::DeQue() {
  using namespace amct_sim::detail;
  static const char* const kApi = "TQue::DeQue";
  QueueRec& q = Rec(kApi);
  BlockCtx* c = amct_ctx_;
  if (q.queued.empty()) Fail(kApi, "queues: DeQue on an empty queue (EnQue first)");
  const int i = q.queued.front();
  q.queued.pop_front();
  QueueBlockRec& b = q.blocks[static_cast<size_t>(i)];
  b.state = kQbDequeued;
  MergeSnap(c, QueueConsumer(pos), b.enq);
  AMCT_SIM_COST(c->cost, DeQue(QueueConsumer(pos), b.bufId));
  b.enq.valid = false;
  return TensorAccess::Make<T>(PositionBase(c, pos) + b.viewOffset, static_cast<uint32_t>(b.viewBytes / sizeof(T)), b.bufId,
                               c->bufGen[static_cast<size_t>(b.bufId)], static_cast<uint8_t>(pos));
}

template <TPosition pos>
template <typename T>
inline LocalTensor<T> TBuf<pos>::Get() {
  Live("TBuf::Get");
  return amct_sim::detail::TensorAccess::Make<T>(amct_sim::detail::PositionBase(amct_ctx_, pos) + amct_offset_,
                                                 static_cast<uint32_t>(amct_bytes_ / sizeof(T)), amct_bufId_,
                                                 amct_ctx_->bufGen[static_cast<size_t>(amct_bufId_)], amct_pos_);
}

template <TPosition pos>
template <typename T>
inline LocalTensor<T> TBuf<pos>::Get(uint32_t len) {
  Live("TBuf::Get");
  if (static_cast<uint64_t>(len) * sizeof(T) > amct_bytes_) {
    amct_sim::detail::Fail("TBuf::Get", amct_sim::detail::Fmt("bounds: Get(%u) elements of %zu bytes exceed the "
                                                              "buffer's %u bytes",
                                                              len, sizeof(T), amct_bytes_));
  }
  return amct_sim::detail::TensorAccess::Make<T>(amct_sim::detail::PositionBase(amct_ctx_, pos) + amct_offset_, len, amct_bufId_,
                                                 amct_ctx_->bufGen[static_cast<size_t>(amct_bufId_)], amct_pos_);
}

template <TPosition pos>
template <typename T>
inline LocalTensor<T> TBuf<pos>::GetWithOffset(uint32_t size, uint32_t bufOffset) {
  static const char* const kApi = "TBuf::GetWithOffset";
  Live(kApi);
  if (bufOffset % 32 != 0) {
    amct_sim::detail::Fail(kApi, amct_sim::detail::Fmt("alignment: bufOffset %u is not a multiple of 32 bytes",
                                                       bufOffset));
  }
  if (static_cast<uint64_t>(size) * sizeof(T) + bufOffset > amct_bytes_) {
    amct_sim::detail::Fail(kApi, amct_sim::detail::Fmt("bounds: %u elements of %zu bytes at offset %u exceed the "
                                                       "buffer's %u bytes",
                                                       size, sizeof(T), bufOffset, amct_bytes_));
  }
  return amct_sim::detail::TensorAccess::Make<T>(amct_sim::detail::PositionBase(amct_ctx_, pos) + amct_offset_ + bufOffset, size, amct_bufId_,
                                                 amct_ctx_->bufGen[static_cast<size_t>(amct_bufId_)], amct_pos_);
}

}  // namespace AscendC
