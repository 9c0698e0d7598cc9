// A fixed-size thread pool used for inter-op scheduling and intra-op ParallelFor.
#ifndef EMBER_CORE_THREAD_POOL_H_
#define EMBER_CORE_THREAD_POOL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

namespace ember {

// A callable fn(begin, end) that ParallelFor runs, by reference: unlike a std::function made
// from a kernel's lambda (which captures more than std::function keeps inline), making one
// allocates nothing. The callable must outlive the call it is passed to.
class RangeFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeFn>>>
  RangeFn(F&& f)  // NOLINT(runtime/explicit): converts at every ParallelFor call
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int64_t b, int64_t e) {
          (*static_cast<std::remove_reference_t<F>*>(o))(b, e);
        }) {}
  void operator()(int64_t begin, int64_t end) const { call_(obj_, begin, end); }

 private:
  void* obj_;
  void (*call_)(void*, int64_t, int64_t);
};

class ThreadPool {
 public:
  // num_threads >= 1 worker threads. With spin_workers an idle worker polls the queue for a
  // while before it sleeps (one at a time): for the intra-op pool, whose ParallelFor helpers
  // follow each other within microseconds.
  ThreadPool(const std::string& name, int num_threads, bool spin_workers = false);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int NumThreads() const;
  void Schedule(std::function<void()> fn);
  // Runs the oldest queued closure on the calling thread, if any (a caller that would only
  // wait for the pool helps instead: no wake-up on the critical path). False when none waits.
  bool TryRunOne();
  // Number of closures ever scheduled (tests check a custom pool was used).
  int64_t NumScheduled() const;
  // Number of times a sleeping worker woke and found nothing to run (tests).
  int64_t NumIdleWakeUps() const;
  // Runs fn(begin, end) over [0, total) split into shards (a multiple of NumThreads() of them
  // where there are more shards than threads, their sizes within one unit of each other), on the
  // calling thread and NumThreads() - 1 of the pool's workers (NumThreads() threads in all: a
  // pool sized to the cores does not put one thread more on them, which a preempted shard would
  // make everyone wait for); returns when all shards are done. Runs inline when total is small
  // relative to cost_per_unit or the pool has one thread.
  void ParallelFor(int64_t total, int64_t cost_per_unit, RangeFn fn);

 private:
  struct Impl;
  Impl* impl_;
};

// Runs fn over [0, total) on `pool`, or inline when pool is null.
void ParallelFor(ThreadPool* pool, int64_t total, int64_t cost_per_unit, RangeFn fn);

}  // namespace ember

#endif  // EMBER_CORE_THREAD_POOL_H_
