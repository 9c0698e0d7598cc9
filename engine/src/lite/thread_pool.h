// The lite interpreter's own thread pool: a fork-join pool of num_threads - 1 workers plus the
// calling thread. libember_lite links nothing but the C++ standard library, so it cannot use the
// framework's pool (src/core/thread_pool.h); and kernels need the index of the thread that runs
// a task, to use that thread's scratch buffer, which the framework's ParallelFor does not give.
#ifndef EMBER_SRC_LITE_THREAD_POOL_H_
#define EMBER_SRC_LITE_THREAD_POOL_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ember {
namespace lite {

class ThreadPool {
 public:
  // num_threads >= 1 threads in all, the caller of Run included (1: no worker is started).
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Runs fn(ctx, task, thread) for every task in [0, tasks) and returns when all have run.
  // `thread` (< num_threads; 0 is the caller) names the thread running the task, so a task may
  // use that thread's scratch. Each thread first runs its own contiguous share of the tasks
  // (thread t: the t-th of num_threads near-equal ranges), then claims what is left of the
  // others' shares: a kernel must not let a result depend on which thread ran it. The caller waits
  // only for tasks that a worker has started: a worker that the OS has not scheduled yet holds
  // nothing up (on a loaded machine the caller may run every task). A worker found on the
  // caller's CPU moves off it, and the caller yields once where a worker waits for its CPU
  // (common/spin.h says why). Allocates nothing. Not reentrant.
  using TaskFn = void (*)(void* ctx, int task, int thread);
  void Run(int tasks, TaskFn fn, void* ctx);
  // The same for a callable f(task, thread).
  template <typename F>
  void Run(int tasks, F& f) {
    Run(
        tasks, [](void* c, int task, int thread) { (*static_cast<F*>(c))(task, thread); }, &f);
  }

 private:
  // Runs the tasks of job `generation` that this thread claims; returns how many.
  int Work(uint32_t generation, TaskFn fn, void* ctx, int tasks, int thread);
  void WorkerLoop(int thread);
  // Worker `thread` moves off the CPU of the thread calling Run, if it runs there (common/spin.h:
  // Linux puts a new or woken thread there although another CPU is idle), and records its CPU.
  void Spread(int thread);
  // Whether a worker was last seen on CPU `cpu`.
  bool WorkerOn(int cpu) const;

  const int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;  // a new job (or stop), for workers that stopped spinning
  std::condition_variable done_;  // the current job's last task finished
  bool stop_ = false;             // guarded by mu_
  std::atomic<int> sleepers_{0};  // workers waiting on wake_ (Run notifies only if any)
  // Where the thread calling Run runs (written by each Run), and whether workers move off it:
  // only when the pool's threads fit on the CPUs this process may use (with more threads than
  // CPUs some share one anyway; moving and yielding there ran MobileNetV2 float at three threads
  // on two CPUs 7-10% slower, its slowest invokes 3-4x slower).
  std::atomic<int> caller_cpu_{-1};
  bool spread_ = false;
  // The current job: Run writes it, then its generation; a spinning worker that sees the new
  // generation reads the job without a lock.
  alignas(64) std::atomic<uint32_t> generation_{0};
  std::atomic<TaskFn> job_fn_{nullptr};
  std::atomic<void*> job_ctx_{nullptr};
  std::atomic<int> job_tasks_{0};
  // Thread t's own tasks are [RangeBegin(tasks, t), RangeBegin(tasks, t + 1)): the same part of
  // every operator's output (rows, pixels) each time, so an operator mostly reads what the same
  // core wrote, not lines another core holds. Each slot's `next` is generation << 32 | its next
  // task. A task is claimed by a compare-exchange that also checks the generation, so a worker
  // that copied an older job never claims (or runs) a newer job's task; a thread done with its
  // range claims from the others'.
  int RangeBegin(int tasks, int t) const {
    return static_cast<int>(static_cast<int64_t>(tasks) * t / num_threads_);
  }
  struct alignas(64) Slot {
    std::atomic<uint64_t> next{0};
    std::atomic<int> cpu{-1};  // the CPU its worker ran on when it last looked (-1: unknown)
  };
  std::unique_ptr<Slot[]> slots_;
  // Tasks of the current job that have run: each thread adds its count once it has claimed all
  // it can, so the caller waits only for tasks that a worker has started.
  alignas(64) std::atomic<int> finished_{0};
};

// [begin, end) of chunk `i` of `n` near-equal chunks of [0, total), each boundary a multiple
// of `align` (the last chunk takes the remainder).
inline void ChunkRange(int64_t total, int n, int i, int64_t align, int64_t* begin, int64_t* end) {
  const int64_t units = (total + align - 1) / align;
  *begin = std::min(total, units * i / n * align);
  *end = std::min(total, units * (i + 1) / n * align);
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_THREAD_POOL_H_
