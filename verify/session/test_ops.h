// Test-only ops for the session suite, registered through the installed kernel API.
#ifndef EMBER_VERIFY_SESSION_TEST_OPS_H_
#define EMBER_VERIFY_SESSION_TEST_OPS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "ember/core/op_kernel.h"

namespace ember_verify {

using namespace ember;

inline ArgDef FloatArg(const char* name) {
  ArgDef a;
  a.name = name;
  a.type = DataType::kFloat;
  return a;
}

// "Darth": promises one float output and never produces it.
class DarthKernel : public OpKernel {
 public:
  explicit DarthKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext*) override {}
};

// A counter that threads can wait on: tests wait for what they need to have happened (a
// kernel running) instead of sleeping for a guess at how long it takes under qemu.
class Event {
 public:
  void Notify() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++count_;
    }
    cv_.notify_all();
  }
  int Count() {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }
  // False when `limit` passed first: a safety net against a hang, not a timing claim.
  bool WaitFor(int count, std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return count_ >= count; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

// Blocks until the step is cancelled; records that it started and that it saw the cancellation.
inline Event& BlockingStarted() {
  static Event e;
  return e;
}
inline std::atomic<int>& BlockingSawCancel() {
  static std::atomic<int> n{0};
  return n;
}
class BlockUntilCancelledKernel : public OpKernel {
 public:
  explicit BlockUntilCancelledKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    BlockingStarted().Notify();
    // is_cancelled() can only be polled (the kernel API has no cancellation callback).
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ctx->is_cancelled()) {
      if (std::chrono::steady_clock::now() > give_up) {
        ctx->SetStatus(errors::Internal("never cancelled"));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ++BlockingSawCancel();
    ctx->SetStatus(errors::Cancelled("blocking op saw the cancellation"));
  }
};

// Outputs 1.0 and records the id of the thread it ran on.
inline std::mutex& ThreadMu() {
  static std::mutex mu;
  return mu;
}
inline std::thread::id& LastThread() {
  static std::thread::id id;
  return id;
}
class ThreadIdKernel : public OpKernel {
 public:
  explicit ThreadIdKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    {
      std::lock_guard<std::mutex> lock(ThreadMu());
      LastThread() = std::this_thread::get_id();
    }
    Tensor* out;
    ctx->SetStatus(ctx->allocate_output(0, TensorShape(), &out));
    if (ctx->status().ok()) out->data<float>()[0] = 1.0f;
  }
};

// A stateless float pass-through that counts constructions (executor cache reuse).
inline std::atomic<int>& CountingConstructions() {
  static std::atomic<int> n{0};
  return n;
}
class CountingIdentityKernel : public OpKernel {
 public:
  explicit CountingIdentityKernel(OpKernelConstruction* c) : OpKernel(c) {
    ++CountingConstructions();
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

// A stateful counter: one kernel per session serves every signature; each run adds 1.
class StatefulCounterKernel : public OpKernel {
 public:
  explicit StatefulCounterKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    Tensor* out;
    ctx->SetStatus(ctx->allocate_output(0, TensorShape(), &out));
    if (ctx->status().ok()) out->data<float>()[0] = static_cast<float>(++count_);
  }

 private:
  std::atomic<int> count_{0};
};

inline OpDef TestOp(const char* name, std::vector<ArgDef> in, std::vector<ArgDef> out,
                    bool stateful = false) {
  OpDef d;
  d.name = name;
  d.inputs = std::move(in);
  d.outputs = std::move(out);
  d.is_stateful = stateful;
  return d;
}

template <typename K>
KernelFactory Factory() {
  return [](OpKernelConstruction* c) { return std::unique_ptr<OpKernel>(new K(c)); };
}

inline bool RegisterTestOps() {
  OpRegistry::Global()->Register(TestOp("TestDarth", {}, {FloatArg("out")}));
  KernelRegistry::Global()->Register("TestDarth", "CPU", Factory<DarthKernel>());
  OpRegistry::Global()->Register(TestOp("TestBlockUntilCancelled", {}, {FloatArg("out")}));
  KernelRegistry::Global()->Register("TestBlockUntilCancelled", "CPU",
                                     Factory<BlockUntilCancelledKernel>());
  OpRegistry::Global()->Register(TestOp("TestThreadId", {}, {FloatArg("out")}));
  KernelRegistry::Global()->Register("TestThreadId", "CPU", Factory<ThreadIdKernel>());
  OpRegistry::Global()->Register(
      TestOp("TestCountingIdentity", {FloatArg("in")}, {FloatArg("out")}));
  KernelRegistry::Global()->Register("TestCountingIdentity", "CPU",
                                     Factory<CountingIdentityKernel>());
  OpRegistry::Global()->Register(TestOp("TestStatefulCounter", {}, {FloatArg("out")}, true));
  KernelRegistry::Global()->Register("TestStatefulCounter", "CPU",
                                     Factory<StatefulCounterKernel>());
  return true;
}

}  // namespace ember_verify

#endif  // EMBER_VERIFY_SESSION_TEST_OPS_H_
