#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/spin.h"

namespace ember {

struct ThreadPool::Impl {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  std::vector<std::thread> threads;
  bool stopping = false;
  std::atomic<int64_t> scheduled{0};
  std::atomic<int64_t> idle_wake_ups{0};  // a worker woke and found nothing (tests)
  // A pool made with `spin`: a worker with nothing to do polls `queued` for spin::kSpinTime
  // before it sleeps, one worker at a time (`spinners`): one polling thread catches the next
  // ParallelFor's helper without a wake-up, and a second would only take a core from the threads
  // doing the work.
  const bool spin;
  std::atomic<int> spinners{0};
  std::atomic<int64_t> queued{0};  // queue.size(), readable without mu

  int sleeping = 0;  // workers blocked on cv (guarded by mu)

  explicit Impl(bool spin_workers) : spin(spin_workers) {}

  // Polls when no other worker does; returns whether it did. A worker that polled stays
  // counted in `spinners` until it holds mu. Schedule, which decides under mu whether to wake a
  // worker, then counts on it for the closure it saw arrive. Before, the poller stopped counting
  // as soon as it saw the count change; its read of `queued` had taken the cache line Schedule
  // read `spinners` from next, and Schedule often found none polling and woke a sleeping worker,
  // which found the closure taken and slept again: a futex call on the caller's critical path
  // and a worker woken onto the caller's CPU (Linux wakes a thread onto the waker's). On two
  // threads, MobileNetV2's GraphDef made 3 context switches a run (9171 in 3000 runs; 224-267
  // now) and ran every node, split or not, slower than on one thread (199.8 -> 179.1 us, the
  // median of 8 interleaved runs; one thread 198.5).
  bool Poll() {
    int none = 0;
    if (queued.load(std::memory_order_acquire) > 0 || !spinners.compare_exchange_strong(none, 1)) {
      return false;
    }
    spin::SpinUntil([this] { return queued.load(std::memory_order_acquire) > 0; });
    return true;
  }

  void WorkerLoop() {
    for (;;) {
      const bool polled = spin && Poll();
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu);
        if (polled) spinners.store(0);
        ++sleeping;
        while (!stopping && queue.empty()) {
          cv.wait(lock);
          if (!stopping && queue.empty()) idle_wake_ups.fetch_add(1, std::memory_order_relaxed);
        }
        --sleeping;
        if (queue.empty()) return;  // stopping and drained
        fn = std::move(queue.front());
        queue.pop_front();
        queued.fetch_sub(1, std::memory_order_relaxed);
      }
      fn();
    }
  }
};

ThreadPool::ThreadPool(const std::string& /*name*/, int num_threads, bool spin_workers)
    : impl_(new Impl(spin_workers)) {
  int n = std::max(1, num_threads);
  for (int i = 0; i < n; ++i) impl_->threads.emplace_back([this] { impl_->WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->threads) t.join();
  delete impl_;
}

int ThreadPool::NumThreads() const { return static_cast<int>(impl_->threads.size()); }

void ThreadPool::Schedule(std::function<void()> fn) {
  impl_->scheduled.fetch_add(1, std::memory_order_relaxed);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->queue.push_back(std::move(fn));
    const int64_t waiting = impl_->queued.fetch_add(1, std::memory_order_release) + 1;
    // Busy workers look at the queue before they sleep, and a polling one takes a closure
    // without a wake-up (if it has just stopped polling, it finds the closure under mu).
    wake = impl_->sleeping > 0 && waiting > impl_->spinners.load();
  }
  if (wake) impl_->cv.notify_one();
}

bool ThreadPool::TryRunOne() {
  std::function<void()> fn;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->queue.empty()) return false;
    fn = std::move(impl_->queue.front());
    impl_->queue.pop_front();
    impl_->queued.fetch_sub(1, std::memory_order_relaxed);
  }
  fn();
  return true;
}

int64_t ThreadPool::NumScheduled() const { return impl_->scheduled.load(); }

int64_t ThreadPool::NumIdleWakeUps() const { return impl_->idle_wake_ups.load(); }

namespace {
// Shards are claimed through an atomic counter by helpers and by the caller; the caller only
// waits for shards already claimed, so ParallelFor never deadlocks even when called from a
// worker of the same pool with every other worker busy.
struct ForState {
  explicit ForState(RangeFn f) : fn(f) {}
  RangeFn fn;  // the caller's: ParallelFor returns only once every claimed shard has run
  // Shard s is [Begin(s), Begin(s + 1)): total / num_shards units, one more for the first
  // total % num_shards shards.
  int64_t base = 0, extra = 0, num_shards = 0;
  std::atomic<int64_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<int64_t> done{0};

  bool RunOne() {
    int64_t s = next.fetch_add(1);
    if (s >= num_shards) return false;
    fn(Begin(s), Begin(s + 1));
    if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == num_shards) {
      std::lock_guard<std::mutex> lock(mu);
      cv.notify_all();
    }
    return true;
  }
  bool Done() const { return done.load(std::memory_order_acquire) == num_shards; }
  int64_t Begin(int64_t s) const { return s * base + std::min(s, extra); }
};
}  // namespace

void ThreadPool::ParallelFor(int64_t total, int64_t cost_per_unit, RangeFn fn) {
  if (total <= 0) return;
  // The least work worth a shard (in the callers' units, a convolution's flops: about 1-2 us
  // here). 10000 split MobileNetV2's small layers into shards of tens of nanoseconds, whose
  // hand-offs cost more than they saved: its GraphDef ran slower on two threads than on one
  // (274 vs 205 us); 192 us now. BERT, the MHA encoder and ResNet50 the same within noise.
  constexpr int64_t kMinCostPerShard = 262144;
  int64_t cost = std::max<int64_t>(1, cost_per_unit);
  int64_t max_shards = std::max<int64_t>(1, total * cost / kMinCostPerShard);
  int64_t num_shards = std::min<int64_t>({max_shards, total, 4 * (NumThreads() + 1)});
  if (num_shards <= 1 || NumThreads() <= 1) {
    fn(0, total);
    return;
  }
  // A multiple of the threads, the shards' sizes within one unit of each other: each thread's
  // share then comes out even when the threads run at one speed. (Shards of ceil(total / n)
  // with the remainder last split a 56-row Conv2D on two threads into 11 of 5 rows and one of
  // 1: 30 rows against 26, the two-thread run 1.76x the one-thread run, not 1.8x.)
  const int64_t threads = NumThreads();
  if (num_shards > threads) num_shards -= num_shards % threads;
  auto state = std::make_shared<ForState>(fn);
  state->num_shards = num_shards;
  state->base = total / num_shards;
  state->extra = total % num_shards;
  int helpers = static_cast<int>(std::min<int64_t>(NumThreads() - 1, state->num_shards - 1));
  for (int i = 0; i < helpers; ++i) {
    Schedule([state] {
      while (state->RunOne()) {
      }
    });
  }
  while (state->RunOne()) {
  }
  // The last shards are a helper's: poll for them (this thread has nothing else to do, and being
  // woken can take longer than a shard), then block.
  if (spin::SpinUntil([&] { return state->Done(); })) return;
  std::unique_lock<std::mutex> lock(state->mu);
  state->cv.wait(lock, [&] { return state->Done(); });
}

void ParallelFor(ThreadPool* pool, int64_t total, int64_t cost_per_unit, RangeFn fn) {
  if (pool == nullptr) {
    if (total > 0) fn(0, total);
    return;
  }
  pool->ParallelFor(total, cost_per_unit, fn);
}

}  // namespace ember
