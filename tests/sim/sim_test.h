// Minimal harness for the kernel-sim C++ tests: every check prints "PASS <name>" or
// "FAIL <name>: <why>"; main returns the number of failures. tests/test_kernel_sim.py compiles the
// programs for both arches, runs them and asserts on the markers.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernel_operator.h"

namespace simtest {

inline int g_failures = 0;
inline int g_passes = 0;

inline void Pass(const std::string& name) {
  ++g_passes;
  std::printf("PASS %s\n", name.c_str());
}

inline void Failed(const std::string& name, const std::string& why) {
  ++g_failures;
  std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
}

inline void Check(const std::string& name, bool ok, const std::string& why = "condition false") {
  if (ok) {
    Pass(name);
  } else {
    Failed(name, why);
  }
}

// f() must throw amct_sim::SimError whose message starts with "amct kernel sim: " and contains
// every needle.
template <class F>
void ExpectError(const std::string& name, std::initializer_list<const char*> needles, F f) {
  try {
    f();
  } catch (const amct_sim::SimError& e) {
    const std::string msg = e.what();
    if (msg.rfind("amct kernel sim: ", 0) != 0) {
      Failed(name, "message does not start with 'amct kernel sim: ': " + msg);
      return;
    }
    for (const char* n : needles) {
      if (msg.find(n) == std::string::npos) {
        Failed(name, std::string("message lacks '") + n + "': " + msg);
        return;
      }
    }
    std::printf("  [%s] %s\n", name.c_str(), msg.c_str());
    Pass(name);
    return;
  } catch (const std::exception& e) {
    Failed(name, std::string("not a SimError: ") + e.what());
    return;
  }
  Failed(name, "no error was raised");
}

// f() must not throw.
template <class F>
bool ExpectOk(const std::string& name, F f) {
  try {
    f();
  } catch (const std::exception& e) {
    Failed(name, std::string("unexpected error: ") + e.what());
    return false;
  }
  Pass(name);
  return true;
}

// Launches type-erased kernel bodies, so that the tests instantiate amct_sim::Launch once.
inline void LaunchF(const char* kernel, uint32_t blockDim, const std::function<void()>& body) {
  amct_sim::Launch(kernel, blockDim, body);
}

// One-block launch of `body` (a kernel body).
inline void Run1(const std::function<void()>& body) { LaunchF("test_kernel", 1, body); }

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline int Finish() {
  std::printf("SUMMARY %d passed, %d failed (__NPU_ARCH__ %d)\n", g_passes, g_failures, __NPU_ARCH__);
  return g_failures > 255 ? 255 : g_failures;
}

}  // namespace simtest
