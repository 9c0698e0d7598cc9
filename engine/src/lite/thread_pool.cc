// Workers poll for a while after a job before they sleep (common/spin.h says why and how long).
#include "lite/thread_pool.h"

#include <algorithm>

#include "common/spin.h"

namespace ember {
namespace lite {

using spin::SpinUntil;

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(std::max(1, num_threads)),
      slots_(std::make_unique<Slot[]>(static_cast<size_t>(num_threads_))) {
  caller_cpu_.store(spin::CurrentCpu());
  spread_ = num_threads_ > 1 && num_threads_ <= spin::AllowedCpus();
  // Until a worker runs, it waits where Linux put it: most often this thread's CPU.
  for (int t = 1; t < num_threads_; ++t) slots_[t].cpu.store(caller_cpu_.load());
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

int ThreadPool::Work(uint32_t generation, TaskFn fn, void* ctx, int tasks, int thread) {
  // The thread's own range first, then whatever the others have not claimed yet.
  int ran = 0;
  for (int k = 0; k < num_threads_; ++k) {
    const int owner = (thread + k) % num_threads_;
    std::atomic<uint64_t>& next = slots_[owner].next;
    const int end = RangeBegin(tasks, owner + 1);
    uint64_t v = next.load(std::memory_order_acquire);
    for (;;) {
      if (static_cast<uint32_t>(v >> 32) != generation)
        return ran;  // a newer job: this one is done
      const int task = static_cast<int>(static_cast<uint32_t>(v));
      if (task >= end) break;
      // On failure v holds the slot's current value: look at it again.
      if (!next.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        continue;
      }
      fn(ctx, task, thread);
      ++ran;
      v = next.load(std::memory_order_acquire);
    }
  }
  return ran;
}

void ThreadPool::Spread(int thread) {
  if (!spread_) return;
  const int caller = caller_cpu_.load(std::memory_order_relaxed);
  if (spin::CurrentCpu() == caller) spin::LeaveCpu(caller);
  slots_[thread].cpu.store(spin::CurrentCpu(), std::memory_order_relaxed);
}

bool ThreadPool::WorkerOn(int cpu) const {
  for (int t = 1; t < num_threads_; ++t) {
    if (slots_[t].cpu.load(std::memory_order_relaxed) == cpu) return true;
  }
  return false;
}

void ThreadPool::WorkerLoop(int thread) {
  uint32_t seen = 0;
  Spread(thread);
  for (;;) {
    uint32_t generation = seen;
    if (!SpinUntil(
            [&] { return (generation = generation_.load(std::memory_order_acquire)) != seen; })) {
      std::unique_lock<std::mutex> lock(mu_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
      sleepers_.fetch_sub(1);
      if (stop_) return;
      generation = generation_.load(std::memory_order_acquire);
    }
    seen = generation;
    Spread(thread);
    // Read after the generation: at least that job's values. Values of a newer job come with
    // that job's slots (written before them), where this generation claims nothing.
    const TaskFn fn = job_fn_.load(std::memory_order_acquire);
    void* const ctx = job_ctx_.load(std::memory_order_acquire);
    const int tasks = job_tasks_.load(std::memory_order_acquire);
    const int ran = Work(generation, fn, ctx, tasks, thread);
    if (ran > 0 && finished_.fetch_add(ran, std::memory_order_acq_rel) + ran == tasks) {
      std::lock_guard<std::mutex> lock(mu_);
      done_.notify_one();
    }
  }
}

void ThreadPool::Run(int tasks, TaskFn fn, void* ctx) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1) {
    for (int t = 0; t < tasks; ++t) fn(ctx, t, 0);
    return;
  }
  // One caller at a time (not reentrant): only Run writes the job.
  const uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
  for (int t = 0; t < num_threads_; ++t) {
    slots_[t].next.store(
        static_cast<uint64_t>(generation) << 32 | static_cast<uint32_t>(RangeBegin(tasks, t)),
        std::memory_order_relaxed);
  }
  finished_.store(0, std::memory_order_relaxed);
  const int cpu = spread_ ? spin::CurrentCpu() : -1;
  caller_cpu_.store(cpu, std::memory_order_relaxed);
  job_fn_.store(fn, std::memory_order_release);
  job_ctx_.store(ctx, std::memory_order_release);
  job_tasks_.store(tasks, std::memory_order_release);
  generation_.store(generation);  // seq_cst, as the sleepers_ load after it: no lost wake-up
  if (sleepers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    wake_.notify_all();
    // A worker woken onto this CPU runs now and moves off it (Spread).
    if (spread_) std::this_thread::yield();
  }
  const int ran = Work(generation, fn, ctx, tasks, 0);
  if (finished_.fetch_add(ran, std::memory_order_acq_rel) + ran == tasks) {
    // No worker took a task: one that waits for this CPU gets it now, and moves (Spread).
    if (spread_ && ran == tasks && WorkerOn(cpu)) std::this_thread::yield();
    return;
  }
  if (SpinUntil([&] { return finished_.load(std::memory_order_acquire) == tasks; })) return;
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return finished_.load(std::memory_order_acquire) == tasks; });
}

}  // namespace lite
}  // namespace ember
