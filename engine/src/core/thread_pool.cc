#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ember {

struct ThreadPool::Impl {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  std::vector<std::thread> threads;
  bool stopping = false;
  std::atomic<int64_t> scheduled{0};

  int sleeping = 0;  // workers blocked on cv (guarded by mu)

  void WorkerLoop() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu);
        ++sleeping;
        cv.wait(lock, [this] { return stopping || !queue.empty(); });
        --sleeping;
        if (queue.empty()) return;  // stopping and drained
        fn = std::move(queue.front());
        queue.pop_front();
      }
      fn();
    }
  }
};

ThreadPool::ThreadPool(const std::string& /*name*/, int num_threads) : impl_(new Impl) {
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
    wake = impl_->sleeping > 0;  // busy workers look at the queue before they sleep
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
  }
  fn();
  return true;
}

int64_t ThreadPool::NumScheduled() const { return impl_->scheduled.load(); }

namespace {
// Shards are claimed through an atomic counter by helpers and by the caller; the caller only
// waits for shards already claimed, so ParallelFor never deadlocks even when called from a
// worker of the same pool with every other worker busy.
struct ForState {
  std::function<void(int64_t, int64_t)> fn;
  int64_t total = 0, shard = 0, num_shards = 0;
  std::atomic<int64_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  int64_t done = 0;

  bool RunOne() {
    int64_t s = next.fetch_add(1);
    if (s >= num_shards) return false;
    int64_t begin = s * shard;
    int64_t end = std::min(total, begin + shard);
    fn(begin, end);
    std::lock_guard<std::mutex> lock(mu);
    if (++done == num_shards) cv.notify_all();
    return true;
  }
};
}  // namespace

void ThreadPool::ParallelFor(int64_t total, int64_t cost_per_unit,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (total <= 0) return;
  constexpr int64_t kMinCostPerShard = 10000;
  int64_t cost = std::max<int64_t>(1, cost_per_unit);
  int64_t max_shards = std::max<int64_t>(1, total * cost / kMinCostPerShard);
  int64_t num_shards = std::min<int64_t>({max_shards, total, 4 * (NumThreads() + 1)});
  if (num_shards <= 1 || NumThreads() <= 1) {
    fn(0, total);
    return;
  }
  auto state = std::make_shared<ForState>();
  state->fn = fn;
  state->total = total;
  state->shard = (total + num_shards - 1) / num_shards;
  state->num_shards = (total + state->shard - 1) / state->shard;
  int helpers = static_cast<int>(std::min<int64_t>(NumThreads() - 1, state->num_shards - 1));
  for (int i = 0; i < helpers; ++i) {
    Schedule([state] {
      while (state->RunOne()) {
      }
    });
  }
  while (state->RunOne()) {
  }
  std::unique_lock<std::mutex> lock(state->mu);
  state->cv.wait(lock, [&] { return state->done == state->num_shards; });
}

void ParallelFor(ThreadPool* pool, int64_t total, int64_t cost_per_unit,
                 const std::function<void(int64_t, int64_t)>& fn) {
  if (pool == nullptr) {
    if (total > 0) fn(0, total);
    return;
  }
  pool->ParallelFor(total, cost_per_unit, fn);
}

}  // namespace ember
