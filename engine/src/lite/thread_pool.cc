// Workers spin briefly after a job before they sleep: a network's operators follow each other
// within microseconds, and a sleeping worker costs a futex wake-up per operator.
#include "lite/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ember {
namespace lite {

namespace {

// About 20-50 us of polling on current x86 cores before a worker blocks.
constexpr int kSpinIterations = 2000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  workers_.reserve(static_cast<size_t>(num_threads_ - 1));
  for (int t = 1; t < num_threads_; ++t) workers_.emplace_back([this, t] { WorkerLoop(t); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::Work(Job* job, int thread) {
  for (;;) {
    const int task = job->next.fetch_add(1, std::memory_order_relaxed);
    if (task >= job->tasks) return;
    (*job->fn)(task, thread);
    if (job->done.fetch_add(1, std::memory_order_acq_rel) + 1 == job->tasks && thread != 0) {
      std::lock_guard<std::mutex> lock(mu_);
      done_.notify_one();
    }
  }
}

void ThreadPool::WorkerLoop(int thread) {
  uint64_t seen = 0;
  for (;;) {
    bool ready = false;
    for (int i = 0; i < kSpinIterations && !ready; ++i) {
      ready = generation_.load(std::memory_order_acquire) != seen;
      if (!ready) CpuRelax();
    }
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!ready) {
        wake_.wait(lock,
                   [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
      }
      if (stop_) return;
      seen = generation_.load(std::memory_order_relaxed);
      job = job_;
    }
    if (job != nullptr) Work(job.get(), thread);
  }
}

void ThreadPool::Run(int tasks, const std::function<void(int, int)>& fn) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1) {
    for (int t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->tasks = tasks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = job;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  Work(job.get(), 0);
  for (int i = 0; i < kSpinIterations; ++i) {
    if (job->done.load(std::memory_order_acquire) == tasks) break;
    CpuRelax();
  }
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return job->done.load(std::memory_order_acquire) == tasks; });
  job_.reset();
}

}  // namespace lite
}  // namespace ember
