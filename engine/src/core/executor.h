// Executor: runs the part of a Graph that a signature (feeds, fetches, targets) needs.
//
// Built once per signature: the graph is pruned backwards from fetches and targets, stopping
// at fed tensors (so any tensor can be fed and everything upstream of it is cut). A Run binds
// feed values by position, then schedules nodes as their inputs become ready, on an inter-op
// ThreadPool (independent nodes run in parallel) or inline on the calling thread.
#ifndef EMBER_CORE_EXECUTOR_H_
#define EMBER_CORE_EXECUTOR_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/graph.h"
#include "core/op_kernel.h"
#include "core/resource_mgr.h"
#include "core/thread_pool.h"

namespace ember {

struct StepStats;  // ember/session.h: the trace a step fills when RunOptions asks for one

// Cancellation shared by a step and whoever may cancel it (timeouts, Session::Close).
class StepCancellation {
 public:
  void Cancel(const Status& reason) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_.load()) return;
    reason_ = reason;
    cancelled_.store(true);
  }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  Status reason() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reason_;
  }

 private:
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  Status reason_;
};

// A node's kernel and the device it runs on (null: the host).
struct PlacedKernel {
  std::shared_ptr<OpKernel> kernel;
  Device* device = nullptr;
  std::vector<int> host_memory_inputs;  // inputs the kernel reads from host memory
};

// Supplies the kernel for a node: stateless kernels are made per executor, stateful ones are
// shared by every executor of a session (keyed by node name).
using KernelProvider = std::function<Status(const Node& node, PlacedKernel* out)>;

struct Signature {
  std::vector<std::string> feeds;    // unique tensor names
  std::vector<std::string> fetches;  // may repeat
  std::vector<std::string> targets;  // node names
};

class Executor {
 public:
  // Validates the signature against the graph (TensorFlow's error messages) and prunes.
  static Status Create(std::shared_ptr<const Graph> graph, const Signature& sig,
                       const KernelProvider& kernels, std::unique_ptr<Executor>* out);

  struct RunArgs {
    ResourceMgr* resources = nullptr;
    ThreadPool* inter_op_pool = nullptr;  // null: run inline on the calling thread
    ThreadPool* intra_op_pool = nullptr;
    StepCancellation* cancellation = nullptr;
    // Zero: no deadline. On expiry the step is cancelled with DEADLINE_EXCEEDED.
    std::chrono::steady_clock::time_point deadline{};
    bool allow_tf32 = false;  // SessionOptions::allow_tf32, for device kernels
    // The session's own inter-op pool: the caller may run the first root's chain itself. A pool
    // the caller passed (RunCallable's ThreadPoolOptions) gets every root, as TensorFlow
    // schedules them on it.
    bool caller_runs_first_root = false;
    // Non-null: the step times each node it runs and fills this when it ends, failed or not
    // (RunOptions::trace_level). Null: the step reads no clock.
    StepStats* trace = nullptr;
  };
  // `feeds` in the executor's feed order; fills `fetches` in fetch order.
  Status Run(const RunArgs& args, const std::vector<Tensor>& feeds,
             std::vector<Tensor>* fetches) const;

  const std::vector<DataType>& feed_types() const { return feed_types_; }
  size_t num_fetches() const { return fetch_slots_.size(); }
  // Tensor names (canonical "node:i") of the signature, in executor order.
  const std::vector<std::string>& feed_names() const { return feed_names_; }
  const std::vector<std::string>& fetch_names() const { return fetch_names_; }
  // Whether fetch `name` depends only on feeds in `fed` (partial runs).
  bool CanComputeFrom(const std::string& fetch, const std::vector<bool>& fed) const;

 private:
  struct Source {
    int feed = -1;  // >= 0: the feed with this index
    int slot = -1;  // otherwise: index into the step's value slots
  };
  struct ExecNode {
    const Node* node = nullptr;
    std::shared_ptr<OpKernel> kernel;
    Device* device = nullptr;         // null: the host
    Device* output_space = nullptr;   // where its outputs live; null: host memory
    std::vector<uint8_t> host_input;  // per input: read from host memory (else device memory)
    std::vector<Source> inputs;
    int first_slot = 0;  // outputs live in slots [first_slot, first_slot + num outputs)
    int num_pending = 0;
    std::vector<int> consumers;  // exec node indices (once per edge, data or control)
    // Identity, NoOp, StopGradient or Snapshot in host memory: it only passes a tensor on, so it
    // runs on the thread that makes it ready, never as a closure of its own on the pool.
    bool forward_only = false;
    // Switch or Merge (a lowered tf.cond), which the executor runs itself: see RunCondNode.
    enum class Flow : uint8_t { kNone, kSwitch, kMerge } flow = Flow::kNone;
    std::vector<int> control_in;  // exec nodes it waits on by control edges
  };
  struct Step;

  void Process(const std::shared_ptr<Step>& step, int id) const;
  void ProcessLoop(const std::shared_ptr<Step>& step, int id) const;
  // Runs exec node `id`, timing it when the step is traced.
  Status RunNode(Step* step, int id) const;
  // The kernel call itself, with its inputs and outputs.
  Status ComputeNode(Step* step, int id) const;
  // In a graph with Switch or Merge nodes, TensorFlow's dead tensors: an untaken Switch output
  // is a slot left uninitialized; a node that reads one, or waits by a control edge on a dead
  // node, is dead itself (it does not run; its outputs stay uninitialized); Merge passes on its
  // first live input, and is dead only when all its inputs are. Sets *done when it ran the node
  // (a Switch or Merge) or found it dead; else ComputeNode runs its kernel.
  Status RunCondNode(Step* step, int id, bool* done) const;
  // Writes exec node `id`'s time slot around ComputeNode.
  Status TraceNode(Step* step, int id) const;
  // The traced step's slots as step stats: the nodes that ran, by start, grouped by device.
  void CollectTrace(const Step& step, StepStats* out) const;
  // The memory space of a device: null for host memory.
  static Device* MemorySpace(Device* d) { return d == nullptr || d->host_memory() ? nullptr : d; }
  // An exec node that copies `src` (in memory space `from`) to memory space `to`; one per
  // (source, destination), shared by every consumer.
  using CopyKey = std::pair<int, const Device*>;  // (source, destination space)
  int CopyNode(const Source& src, DataType dtype, const std::string& tensor, Device* from,
               Device* to, std::map<CopyKey, int>* made);
  // `src` as seen from memory space `to`: itself, or the output of copy nodes.
  Source Route(const Source& src, DataType dtype, const std::string& tensor, Device* from,
               Device* to, std::map<CopyKey, int>* made);
  // Makes exec node `consumer` wait for the producer of `src` (when it is a slot).
  void Wire(const Source& src, int consumer);

  std::shared_ptr<const Graph> graph_;
  std::vector<ExecNode> nodes_;
  std::vector<int> roots_;
  // The roots that are host Const nodes (hundreds in a model's GraphDef): on a pool, the
  // caller runs them itself before it starts the step's chains, instead of queueing a
  // closure, and perhaps waking a worker, for each.
  std::vector<int> const_roots_;
  std::vector<int> other_roots_;
  // What each exec node took (ns) when last timed, -1 before: a node that became ready beside
  // the one its thread goes on with runs on that thread after it when it took less than
  // kInlineNs, instead of as a closure on the inter-op pool (waking a worker cost more than such
  // a node: BERT's 365 small nodes queued 37 closures per run and ran slower at two threads than
  // at one). Timed in a few runs only (Executor::Run's `sample`). The last two timings are kept
  // ([2 id] the last, [2 id + 1] the one before) and either under kInlineNs makes the node
  // cheap: one timing stretched by a preemption no longer sends a cheap node to the pool until
  // it is timed again (up to 28 runs; a session test saw it under a loaded ctest).
  static constexpr int32_t kInlineNs = 10000;
  std::unique_ptr<std::atomic<int32_t>[]> cost_ns_;
  mutable std::atomic<uint32_t> runs_{0};
  bool Cheap(int id) const {
    const size_t i = 2 * static_cast<size_t>(id);
    const int32_t last = cost_ns_[i].load(std::memory_order_relaxed);
    const int32_t before = cost_ns_[i + 1].load(std::memory_order_relaxed);
    return (last >= 0 && last < kInlineNs) || (before >= 0 && before < kInlineNs);
  }
  int num_slots_ = 0;
  bool has_cond_ = false;  // some exec node is a Switch or Merge: steps track dead nodes
  std::vector<DataType> feed_types_;
  std::vector<std::string> feed_names_;
  std::vector<std::string> fetch_names_;
  std::vector<Source> fetch_slots_;
  std::vector<TensorId> feed_ids_;
  std::deque<Node> copy_nodes_;   // the synthetic nodes of copy exec nodes (stable addresses)
  std::vector<int> slot_owner_;   // slot -> the exec node that produces it
  std::vector<Device*> devices_;  // non-host devices this executor runs on, synced per step
};

}  // namespace ember

#endif  // EMBER_CORE_EXECUTOR_H_
