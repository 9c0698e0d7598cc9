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
#include <functional>
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

  // Runs fn(task, thread) for every task in [0, tasks) and returns when all have run. `thread`
  // (< num_threads; 0 is the caller) names the thread running the task, so a task may use that
  // thread's scratch. Tasks are claimed in order by whichever thread is free: a kernel must not
  // let a result depend on which thread ran it. The caller waits only for tasks that a worker
  // has started: a worker that the OS has not scheduled yet holds nothing up (on a loaded
  // machine the caller may run every task). Not reentrant: one Run at a time.
  void Run(int tasks, const std::function<void(int, int)>& fn);

 private:
  // One Run's tasks. Shared with the workers, so one that wakes after Run returned still holds
  // a valid job: it finds no task left and never calls fn, which lived on Run's caller's stack.
  struct Job {
    const std::function<void(int, int)>* fn = nullptr;
    int tasks = 0;
    std::atomic<int> next{0};
    std::atomic<int> done{0};
  };
  void Work(Job* job, int thread);
  void WorkerLoop(int thread);

  const int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;  // a new job (or stop)
  std::condition_variable done_;  // the current job's last task finished
  bool stop_ = false;             // guarded by mu_
  std::shared_ptr<Job> job_;      // the current job, guarded by mu_
  std::atomic<uint64_t> generation_{0};
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
