// Polling for a short while before blocking, shared by lite's pool (lite/thread_pool.cc) and the
// framework's (core/thread_pool.cc). Header-only: libember_lite does not link the framework.
//
// Why poll at all: a network's operators follow each other within microseconds, and waking a
// blocked thread can take longer than a whole operator. Measured on a 2-vCPU VM, an int8
// 56x56x64 3x3 CONV_2D at two threads ran 520-560 us (no faster than one thread) in 5 processes
// of 8 with a 50 us poll, the worker asleep in a third of the invokes, and 276-311 us in every
// one with 1.3 ms or more. So 2 ms, timed by the clock (a PAUSE takes 25 ns on that CPU, 140
// cycles on some others): one core's poll per idle gap, the cost XNNPACK's pool also pays.
#ifndef EMBER_SRC_COMMON_SPIN_H_
#define EMBER_SRC_COMMON_SPIN_H_

#include <chrono>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ember {
namespace spin {

constexpr std::chrono::microseconds kSpinTime{2000};

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls done() between PAUSEs until it is true (returns true) or kSpinTime has passed (false).
template <typename Done>
bool SpinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (int i = 1;; ++i) {
    if (done()) return true;
    CpuRelax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace spin
}  // namespace ember

#endif  // EMBER_SRC_COMMON_SPIN_H_
