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
#if defined(__linux__)
#include <sched.h>
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

// Where a worker runs. Linux tends to put a new thread, and a thread woken through a futex, on
// the CPU of the thread that made or woke it, although that thread goes on working and another
// CPU is idle. Measured on a 2-vCPU VM (kernel 6.18): such a worker runs only when the other's
// time slice ends, 1.2-2.6 ms later, then shares that CPU with it until the load balancer moves
// one of them; its poll runs out while it waits for the CPU, it sleeps and is woken onto the same
// CPU again. An int8 28x28x64->128 1x1 CONV_2D at two threads ran no faster than at one in most
// processes (its worker ran none of the first 50 invokes' tasks), 1.6-2.0x faster once the
// worker moved itself off the caller's CPU (LeaveCpu) and the caller yielded where the worker
// was waiting for its CPU (lite/thread_pool.cc).

// The CPU the calling thread runs on; -1 where the OS does not say.
inline int CurrentCpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// How many CPUs the calling thread may run on (1 where the OS does not say).
inline int AllowedCpus() {
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return 1;
  return CPU_COUNT(&allowed);
#else
  return 1;
#endif
}

// Moves the calling thread off `cpu` when it runs there and may run elsewhere, then gives it back
// every CPU it was allowed before (it stays where it was moved until the scheduler moves it).
inline void LeaveCpu(int cpu) {
#if defined(__linux__)
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getcpu() != cpu) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0) return;
  if (sched_setaffinity(0, sizeof(others), &others) == 0) {
    sched_setaffinity(0, sizeof(allowed), &allowed);
  }
#else
  (void)cpu;
#endif
}

}  // namespace spin
}  // namespace ember

#endif  // EMBER_SRC_COMMON_SPIN_H_
