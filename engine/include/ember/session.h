// Session: runs a graph, as TensorFlow's DirectSession (Create/Extend/Run/Close, callables,
// partial runs). Thread-safe: Run may be called concurrently from many threads.
#ifndef EMBER_SESSION_H_
#define EMBER_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/graph_def.h"
#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {

class ThreadPool;

struct SessionOptions {
  // Inter-op pool size: 0 picks the number of hardware threads, -1 runs every step inline
  // on the calling thread.
  int inter_op_parallelism_threads = 0;
  // Intra-op pool (ParallelFor inside kernels): 0 picks the hardware threads, 1 none.
  int intra_op_parallelism_threads = 0;
  // Extra named inter-op pools selectable per Run (RunOptions::inter_op_thread_pool);
  // each entry is a thread count (0: hardware threads). Empty: one default pool.
  std::vector<int> session_inter_op_thread_pool;
  // Default deadline for every Run, in milliseconds (0: none).
  int64_t operation_timeout_in_ms = 0;
  // Number of CPU devices nodes may be placed on ("/cpu:0" ... ).
  int num_cpu_devices = 1;
  // Check device placement only for nodes a step needs.
  bool place_pruned_graph = false;
  // Extend() fails once the graph has been run (TensorFlow's optimize_for_static_graph).
  bool optimize_for_static_graph = false;
  // Rewrite each step's graph for inference, as TensorFlow's grappler does: batch norms and
  // constant per-channel scales folded into Conv2D / DepthwiseConv2dNative / MatMul weights,
  // bias and Relu/Relu6 fused into them. false runs the nodes as written.
  bool optimize_graph = true;
  // Device for nodes that name none, e.g. "/device:GPU:0": every such node whose op has a
  // kernel there runs there, the others on the CPU; the session copies tensors between
  // host and device memory. Empty: the CPU.
  std::string default_device;
  // A node pinned to a device that is absent, or that has no kernel there for its op, runs on
  // the CPU instead of failing (TensorFlow's ConfigProto.allow_soft_placement).
  bool allow_soft_placement = false;
  // GPU MatMul may round its inputs to TF32 and use tensor cores (fp32 accumulation; about
  // 1e-3 relative error), as TensorFlow's enable_tensor_float_32_execution.
  bool allow_tf32 = false;
};

struct RunOptions {
  // TensorFlow's levels. Every level above NO_TRACE times each node the step runs into
  // RunMetadata::step_stats; ember reads no hardware counters, so HARDWARE_TRACE and
  // FULL_TRACE record what SOFTWARE_TRACE does.
  enum TraceLevel { NO_TRACE = 0, SOFTWARE_TRACE = 1, HARDWARE_TRACE = 2, FULL_TRACE = 3 };
  TraceLevel trace_level = NO_TRACE;
  int64_t timeout_in_ms = 0;     // 0: the session's operation_timeout_in_ms
  int inter_op_thread_pool = 0;  // index into the session's pools; -1: inline
};

// One node's run in a traced step, as TensorFlow's NodeExecStats.
struct NodeExecStats {
  std::string node_name;
  std::string op;                  // what TensorFlow writes into its timeline label
  int64_t all_start_micros = 0;    // wall clock, since the epoch
  int64_t all_start_nanos = 0;     // the same instant, in nanoseconds
  int64_t all_end_rel_micros = 0;  // duration, relative to the start
  int64_t all_end_rel_nanos = 0;
  int64_t thread_id = 0;  // the thread that ran it (a hash of its id)
};

struct DeviceStepStats {
  std::string device;
  std::vector<NodeExecStats> node_stats;  // ordered by start
};

struct StepStats {
  std::vector<DeviceStepStats> dev_stats;
};

struct RunMetadata {
  int64_t step_id = 0;
  // A traced run's nodes (RunOptions::trace_level); empty after an untraced run.
  StepStats step_stats;
};

// Caller-owned pools for one RunCallable (TensorFlow's thread::ThreadPoolOptions).
struct ThreadPoolOptions {
  ThreadPool* inter_op_threadpool = nullptr;
  ThreadPool* intra_op_threadpool = nullptr;
};

struct CallableOptions {
  std::vector<std::string> feed;
  std::vector<std::string> fetch;
  std::vector<std::string> target;
  RunOptions run_options;
};

class Session {
 public:
  using CallableHandle = int64_t;
  virtual ~Session() = default;

  virtual Status Create(const GraphDef& graph) = 0;
  virtual Status Extend(const GraphDef& graph) = 0;
  virtual Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::vector<std::string>& output_tensor_names,
                     const std::vector<std::string>& target_node_names,
                     std::vector<Tensor>* outputs) = 0;
  virtual Status Run(const RunOptions& options,
                     const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::vector<std::string>& output_tensor_names,
                     const std::vector<std::string>& target_node_names,
                     std::vector<Tensor>* outputs, RunMetadata* metadata) = 0;

  virtual Status MakeCallable(const CallableOptions& options, CallableHandle* handle) = 0;
  virtual Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                             std::vector<Tensor>* fetch_tensors, RunMetadata* metadata) = 0;
  virtual Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                             std::vector<Tensor>* fetch_tensors, RunMetadata* metadata,
                             const ThreadPoolOptions& pools) = 0;
  virtual Status ReleaseCallable(CallableHandle handle) = 0;

  // Partial runs: feed and fetch incrementally. Each feed and fetch may be used once.
  virtual Status PRunSetup(const std::vector<std::string>& input_names,
                           const std::vector<std::string>& output_names,
                           const std::vector<std::string>& target_nodes, std::string* handle) = 0;
  virtual Status PRun(const std::string& handle,
                      const std::vector<std::pair<std::string, Tensor>>& inputs,
                      const std::vector<std::string>& output_names,
                      std::vector<Tensor>* outputs) = 0;

  // Afterwards only already-seen signatures and existing callables run.
  virtual Status Finalize() = 0;
  // Cancels in-flight steps; later calls fail with CANCELLED. A second Close is OK.
  virtual Status Close() = 0;
};

// The devices a session can place nodes on, named as TensorFlow names them
// ("/job:localhost/replica:0/task:0/device:CPU:0", "...device:GPU:0"). Probes every device
// type compiled in (initialising CUDA in a build with EMBER_CUDA).
std::vector<std::string> ListDevices();
// Why no device of `type` ("GPU") is usable ("this ember was built without CUDA", "no usable
// CUDA device: ..."), or "" when there is one.
std::string DeviceUnavailableReason(const std::string& type);

// A new DirectSession-style session, or null with *status set (never throws).
std::unique_ptr<Session> NewSession(const SessionOptions& options);
Status NewSession(const SessionOptions& options, Session** out);

}  // namespace ember

#endif  // EMBER_SESSION_H_
