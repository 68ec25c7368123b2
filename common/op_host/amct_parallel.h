// Dynamic chunking of an elementwise pass over the intra-op threads.
//
// at::parallel_for splits [0, n) into one fixed range per thread, so a call lasts as long as its
// slowest thread: a worker that wakes late from its sleep between calls, or is descheduled on a
// busy 2-core machine, delays a millisecond-long call by the whole of its half. Here the range
// is cut into chunks that the threads take in order as they become free, so a late thread takes
// fewer chunks instead. Each chunk is written by one thread from its first touch on, so the
// page faults of a fresh output are taken by the thread that writes the page, in parallel.
// The chunks depend only on n, never on the thread count or the schedule, so neither do the
// results.
#pragma once

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace amct {
// Internal linkage: the header is also included by kernel sources compiled once per SIMD
// capability (amct_cpu_dispatch.h), whose copies must not be merged by the linker.
namespace {

// Elements per chunk for n elements: about 8 chunks per thread of a 2-thread call, at least
// minChunk, at most maxChunk, a multiple of `align` elements.
inline int64_t chunkElements(int64_t n, int64_t minChunk, int64_t maxChunk, int64_t align) {
  const int64_t target = std::clamp<int64_t>((n + 15) / 16, minChunk, maxChunk);
  return std::max<int64_t>(align, (target + align - 1) / align * align);
}

// Calls body(begin, end) on consecutive chunks of `chunk` elements covering [0, n). Runs on the
// calling thread when n <= chunk or inside a parallel region.
template <typename Body>
void parallelChunks(int64_t n, int64_t chunk, const Body& body) {
  if (n <= 0) return;
  const int64_t chunks = (n + chunk - 1) / chunk;
  const int64_t workers = std::min<int64_t>(at::get_num_threads(), chunks);
  if (workers <= 1 || at::in_parallel_region()) {
    body(0, n);
    return;
  }
  std::atomic<int64_t> next{0};
  at::parallel_for(0, workers, 1, [&](int64_t, int64_t) {
    for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < chunks;
         c = next.fetch_add(1, std::memory_order_relaxed)) {
      const int64_t begin = c * chunk;
      body(begin, std::min(n, begin + chunk));
    }
  });
}

}  // namespace
}  // namespace amct
