// DirectSession: TensorFlow's in-process session (core/common_runtime/direct_session.cc),
// reduced to the host plus optional accelerators (src/core/device.h) and the behaviour
// documented in shared/spec/ENGINE.md §1.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/control_flow.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/graph_optimizer.h"
#include "core/placement.h"
#include "core/resource_mgr.h"
#include "core/thread_pool.h"
#include "ember/session.h"
#include "savedmodel/function_inline.h"

namespace ember {

namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}

int HardwareThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 2 : static_cast<int>(n);
}

Status Closed() { return errors::Cancelled("Session has been closed."); }

// Executors for one signature plus the name -> position maps Run uses to bind any ordering.
struct ExecutorsAndKeys {
  std::unique_ptr<Executor> executor;
  std::unordered_map<std::string, int> feed_index;   // canonical name -> executor feed
  std::unordered_map<std::string, int> fetch_index;  // canonical name -> executor fetch
};

struct Callable {
  std::unique_ptr<Executor> executor;
  RunOptions run_options;
};

struct PartialRun {
  std::shared_ptr<ExecutorsAndKeys> entry;
  std::vector<std::string> targets;
  std::map<std::string, bool> fed;      // canonical feed name -> fed yet
  std::map<std::string, bool> fetched;  // canonical fetch name -> fetched yet
  std::vector<std::pair<std::string, Tensor>> values;
  bool targets_done = false;
  std::mutex mu;
};

class DirectSession : public Session {
 public:
  explicit DirectSession(const SessionOptions& options) : options_(options) {
    if (options.session_inter_op_thread_pool.empty()) {
      int n = options.inter_op_parallelism_threads;
      if (n >= 0) {
        pools_.push_back(
            std::make_unique<ThreadPool>("ember_inter_op", n == 0 ? HardwareThreads() : n));
      } else {
        pools_.push_back(nullptr);  // -1: every step inline on the calling thread
      }
    } else {
      for (int n : options.session_inter_op_thread_pool) {
        pools_.push_back(
            std::make_unique<ThreadPool>("ember_inter_op", n <= 0 ? HardwareThreads() : n));
      }
    }
    int intra = options.intra_op_parallelism_threads == 0 ? HardwareThreads()
                                                          : options.intra_op_parallelism_threads;
    if (intra > 1) {
      intra_pool_ = std::make_unique<ThreadPool>("ember_intra_op", intra, /*spin_workers=*/true);
    }
  }

  ~DirectSession() override { Close(); }

  Status Create(const GraphDef& graph) override {
    if (closed_.load()) return Closed();
    std::lock_guard<std::mutex> lock(graph_mu_);
    if (created_)
      return errors::AlreadyExists("A Graph has already been created for this session.");
    if (graph.node.empty()) return Status::OK();
    return ExtendLocked(graph);
  }

  Status Extend(const GraphDef& graph) override {
    if (closed_.load()) return Closed();
    std::lock_guard<std::mutex> lock(graph_mu_);
    if (finalized_.load()) return errors::FailedPrecondition("Session has been finalized.");
    if (options_.optimize_for_static_graph && has_run_.load()) {
      return errors::FailedPrecondition(
          "Extend() is not supported for this session (optimize_for_static_graph is set).");
    }
    if (graph.node.empty()) return Status::OK();
    return ExtendLocked(graph);
  }

  Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs) override {
    return Run(RunOptions(), inputs, output_names, targets, outputs, nullptr);
  }

  Status Run(const RunOptions& run_options,
             const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs, RunMetadata* metadata) override {
    if (closed_.load()) return Closed();
    EMBER_RETURN_IF_ERROR(CheckGraphCreated("Run()"));
    if (outputs == nullptr && !output_names.empty()) {
      return errors::InvalidArgument("Run: `outputs` must not be null when fetching tensors");
    }
    ThreadPool* pool;
    EMBER_RETURN_IF_ERROR(SelectPool(run_options.inter_op_thread_pool, &pool));
    std::vector<std::string> feed_names;
    feed_names.reserve(inputs.size());
    for (const auto& in : inputs) feed_names.push_back(in.first);
    std::shared_ptr<ExecutorsAndKeys> entry;
    EMBER_RETURN_IF_ERROR(GetOrCreateExecutors(feed_names, output_names, targets, &entry));
    const Executor& ex = *entry->executor;
    std::vector<Tensor> feeds(ex.feed_types().size());
    for (const auto& in : inputs) {
      int i = entry->feed_index.at(ParseTensorName(in.first).ToString());
      DataType want = ex.feed_types()[static_cast<size_t>(i)];
      if (in.second.dtype() != want) {
        return errors::InvalidArgument("Expects arg[" + std::to_string(i) + "] to be " +
                                       DataTypeString(want) + " but " +
                                       DataTypeString(in.second.dtype()) + " is provided");
      }
      feeds[static_cast<size_t>(i)] = in.second;
    }
    std::vector<Tensor> results;
    EMBER_RETURN_IF_ERROR(
        RunStep(ex, run_options, pool, intra_pool_.get(), feeds, &results, metadata, true));
    if (outputs != nullptr) {
      outputs->clear();
      for (const std::string& name : output_names) {
        outputs->push_back(
            results[static_cast<size_t>(entry->fetch_index.at(ParseTensorName(name).ToString()))]);
      }
    }
    return Status::OK();
  }

  Status MakeCallable(const CallableOptions& options, CallableHandle* handle) override {
    if (closed_.load()) return Closed();
    EMBER_RETURN_IF_ERROR(CheckGraphCreated("MakeCallable()"));
    if (finalized_.load()) return errors::FailedPrecondition("Session has been finalized.");
    auto callable = std::make_shared<Callable>();
    Signature sig{options.feed, options.fetch, options.target};
    std::shared_ptr<const Graph> graph;
    EMBER_RETURN_IF_ERROR(GraphFor(sig, &graph));
    EMBER_RETURN_IF_ERROR(Executor::Create(graph, sig, Kernels(), &callable->executor));
    callable->run_options = options.run_options;
    std::lock_guard<std::mutex> lock(callables_mu_);
    *handle = next_callable_++;
    callables_[*handle] = std::move(callable);
    return Status::OK();
  }

  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                     std::vector<Tensor>* fetch_tensors, RunMetadata* metadata) override {
    return RunCallable(handle, feed_tensors, fetch_tensors, metadata, ThreadPoolOptions());
  }

  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                     std::vector<Tensor>* fetch_tensors, RunMetadata* metadata,
                     const ThreadPoolOptions& pools) override {
    if (closed_.load()) return Closed();
    if (fetch_tensors == nullptr)
      return errors::InvalidArgument("`fetch_tensors` must be provided.");
    std::shared_ptr<Callable> callable;
    {
      std::lock_guard<std::mutex> lock(callables_mu_);
      if (handle < 0 || handle >= next_callable_) {
        return errors::InvalidArgument("No such callable handle: " + std::to_string(handle));
      }
      auto it = callables_.find(handle);
      if (it == callables_.end()) {
        return errors::InvalidArgument("Attempted to run callable after handle was released: " +
                                       std::to_string(handle));
      }
      callable = it->second;
    }
    const Executor& ex = *callable->executor;
    if (feed_tensors.size() != ex.feed_types().size()) {
      return errors::InvalidArgument("Invalid number of feed tensors specified: got " +
                                     std::to_string(feed_tensors.size()) + ", expected " +
                                     std::to_string(ex.feed_types().size()));
    }
    for (size_t i = 0; i < feed_tensors.size(); ++i) {
      if (feed_tensors[i].dtype() != ex.feed_types()[i]) {
        return errors::InvalidArgument("Type mismatch: actual " +
                                       DataTypeString(feed_tensors[i].dtype()) + " vs. expect " +
                                       DataTypeString(ex.feed_types()[i]));
      }
    }
    ThreadPool* inter = pools.inter_op_threadpool;
    if (inter == nullptr) {
      EMBER_RETURN_IF_ERROR(SelectPool(callable->run_options.inter_op_thread_pool, &inter));
    }
    ThreadPool* intra = pools.intra_op_threadpool ? pools.intra_op_threadpool : intra_pool_.get();
    const bool own_pool = pools.inter_op_threadpool == nullptr;
    return RunStep(ex, callable->run_options, inter, intra, feed_tensors, fetch_tensors, metadata,
                   own_pool);
  }

  Status ReleaseCallable(CallableHandle handle) override {
    std::lock_guard<std::mutex> lock(callables_mu_);
    if (handle < 0 || handle >= next_callable_) {
      return errors::InvalidArgument("No such callable handle: " + std::to_string(handle));
    }
    callables_.erase(handle);
    return Status::OK();
  }

  Status PRunSetup(const std::vector<std::string>& input_names,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_nodes, std::string* handle) override {
    if (closed_.load()) return Closed();
    EMBER_RETURN_IF_ERROR(CheckGraphCreated("PRunSetup()"));
    std::shared_ptr<ExecutorsAndKeys> entry;
    EMBER_RETURN_IF_ERROR(GetOrCreateExecutors(input_names, output_names, target_nodes, &entry));
    auto run = std::make_shared<PartialRun>();
    run->entry = entry;
    run->targets = target_nodes;
    for (const std::string& n : input_names) run->fed[ParseTensorName(n).ToString()] = false;
    for (const std::string& n : output_names) run->fetched[ParseTensorName(n).ToString()] = false;
    std::lock_guard<std::mutex> lock(prun_mu_);
    *handle = Join(input_names) + "->" + Join(output_names) + "/" + Join(target_nodes) + "/1/;" +
              std::to_string(next_prun_++);
    partial_runs_[*handle] = std::move(run);
    return Status::OK();
  }

  // Each PRun runs what the requested fetches need from the feeds given so far (a node may run
  // again in a later PRun of the same handle; TensorFlow keeps one live step instead).
  Status PRun(const std::string& handle, const std::vector<std::pair<std::string, Tensor>>& inputs,
              const std::vector<std::string>& output_names, std::vector<Tensor>* outputs) override {
    if (closed_.load()) return Closed();
    std::shared_ptr<PartialRun> run;
    {
      std::lock_guard<std::mutex> lock(prun_mu_);
      auto it = partial_runs_.find(handle);
      if (it == partial_runs_.end()) {
        return errors::InvalidArgument("Must run 'setup' before performing partial runs!");
      }
      run = it->second;
    }
    std::lock_guard<std::mutex> run_lock(run->mu);
    for (const auto& in : inputs) {
      auto it = run->fed.find(ParseTensorName(in.first).ToString());
      if (it == run->fed.end()) {
        return errors::InvalidArgument("The feed " + in.first +
                                       " was not specified in partial_run_setup.");
      }
      if (it->second)
        return errors::InvalidArgument("The feed " + in.first + " has already been fed.");
    }
    for (const std::string& name : output_names) {
      auto it = run->fetched.find(ParseTensorName(name).ToString());
      if (it == run->fetched.end()) {
        return errors::InvalidArgument("The fetch " + name +
                                       " was not specified in partial_run_setup.");
      }
      if (it->second)
        return errors::InvalidArgument("The fetch " + name + " has already been fetched.");
    }
    for (const auto& in : inputs) {
      run->fed[ParseTensorName(in.first).ToString()] = true;
      run->values.push_back(in);
    }
    const Executor& ex = *run->entry->executor;
    std::vector<bool> fed_flags(ex.feed_names().size(), false);
    for (size_t i = 0; i < ex.feed_names().size(); ++i) fed_flags[i] = run->fed[ex.feed_names()[i]];
    for (const std::string& name : output_names) {
      if (!ex.CanComputeFrom(name, fed_flags)) {
        return errors::InvalidArgument(
            "Fetch " + ParseTensorName(name).ToString() +
            " can't be computed from the feeds that have been fed so far.");
      }
    }
    bool all_fed =
        std::all_of(run->fed.begin(), run->fed.end(), [](const auto& kv) { return kv.second; });
    std::vector<std::string> targets;
    if (all_fed && !run->targets_done) targets = run->targets;
    if (!output_names.empty() || !targets.empty()) {
      EMBER_RETURN_IF_ERROR(
          Run(RunOptions(), run->values, output_names, targets, outputs, nullptr));
      if (!targets.empty()) run->targets_done = true;
    } else if (outputs != nullptr) {
      outputs->clear();
    }
    for (const std::string& name : output_names)
      run->fetched[ParseTensorName(name).ToString()] = true;
    bool all_fetched = std::all_of(run->fetched.begin(), run->fetched.end(),
                                   [](const auto& kv) { return kv.second; });
    if (all_fed && all_fetched) {
      std::lock_guard<std::mutex> lock(prun_mu_);
      partial_runs_.erase(handle);
    }
    return Status::OK();
  }

  Status Finalize() override {
    if (closed_.load()) return Closed();
    finalized_.store(true);
    return Status::OK();
  }

  Status Close() override {
    std::unique_lock<std::mutex> lock(steps_mu_);
    if (closed_.exchange(true)) return Status::OK();
    for (StepCancellation* c : active_steps_)
      c->Cancel(errors::Cancelled("Run call was cancelled"));
    steps_cv_.wait(lock, [&] { return active_steps_.empty(); });
    return Status::OK();
  }

 private:
  Status CheckGraphCreated(const char* method) {
    std::lock_guard<std::mutex> lock(graph_mu_);
    if (!created_) {
      return errors::InvalidArgument(std::string("Session was not created with a graph before ") +
                                     method + "!");
    }
    return Status::OK();
  }

  Status ExtendLocked(const GraphDef& graph) {
    std::vector<NodeDef> defs = defs_;
    defs.insert(defs.end(), graph.node.begin(), graph.node.end());
    GraphOptions go;
    go.num_cpu_devices = options_.num_cpu_devices;
    go.place_pruned_graph = options_.place_pruned_graph;
    go.allow_soft_placement = options_.allow_soft_placement;
    FunctionDefLibrary library = library_;
    for (const FunctionDef& fn : graph.library.function) {
      const FunctionDef* had = library.Find(fn.name);
      if (had == nullptr) {
        library.function.push_back(fn);
      } else if (had->node_def.size() != fn.node_def.size() || had->ret != fn.ret) {
        return errors::InvalidArgument("Extend: the graph's function library redefines '" +
                                       fn.name + "' differently from the session's");
      }
    }
    // Calls into the function library (PartitionedCall, StatelessIf, StatelessWhile, a
    // function's own op name) are inlined first, every top-level node kept: a call stays
    // fetchable as an IdentityN of its name (savedmodel/function_inline.h). Then while loops
    // become _EmberWhile nodes (src/core/control_flow.h). defs_ keeps the graph as given, so
    // that a later Extend lowers the whole graph again.
    std::vector<NodeDef> lowered = defs;
    if (!library.function.empty()) {
      GraphDef whole;
      whole.node = defs;
      whole.library = library;
      std::vector<std::string> roots, flat;
      roots.reserve(defs.size());
      for (const NodeDef& n : defs) roots.push_back("^" + n.name);
      InlineOptions inline_options;
      inline_options.keep_top_level_calls = true;
      // Unregistered ops are reported by Graph::Build, in TensorFlow's words, as without a
      // library (an inlined node is named "call/node").
      inline_options.check_ops = false;
      GraphDef inlined;
      EMBER_RETURN_IF_ERROR(InlineFunctionCalls(whole, roots, inline_options, &inlined, &flat));
      lowered = std::move(inlined.node);
    }
    EMBER_RETURN_IF_ERROR(LowerWhileLoops(&lowered));
    auto g = std::make_shared<Graph>();
    EMBER_RETURN_IF_ERROR(Graph::Build(lowered, go, g.get()));
    defs_ = std::move(defs);
    library_ = std::move(library);
    graph_ = std::move(g);
    created_ = true;
    return Status::OK();
  }

  std::shared_ptr<const Graph> CurrentGraph() {
    std::lock_guard<std::mutex> lock(graph_mu_);
    return graph_;
  }

  // The graph a signature's executor runs: rewritten for inference (batch norms folded into
  // convolution weights, bias and activation fused) unless the options turn that off.
  Status GraphFor(const Signature& sig, std::shared_ptr<const Graph>* out) {
    std::shared_ptr<const Graph> graph = CurrentGraph();
    // The fused kernels are CPU kernels: a session placing nodes on a GPU by default runs the
    // graph as written.
    if (!options_.optimize_graph || !options_.default_device.empty()) {
      *out = std::move(graph);
      return Status::OK();
    }
    return OptimizeGraphForInference(graph, sig.feeds, sig.fetches, sig.targets, out);
  }

  Status SelectPool(int index, ThreadPool** pool) {
    if (index < -1 || index >= static_cast<int>(pools_.size())) {
      return errors::InvalidArgument("Invalid inter_op_thread_pool: " + std::to_string(index));
    }
    *pool = index == -1 ? nullptr : pools_[static_cast<size_t>(index)].get();
    return Status::OK();
  }

  // Places each node (src/core/placement.h) and builds its kernel there. Stateful kernels
  // (variables) are shared by every executor of the session, with the device they run on.
  KernelProvider Kernels() {
    return [this](const Node& node, PlacedKernel* out) -> Status {
      if (node.op->is_stateful) {
        std::lock_guard<std::mutex> lock(kernels_mu_);
        auto it = stateful_kernels_.find(node.name());
        if (it != stateful_kernels_.end()) {
          *out = it->second;
          return Status::OK();
        }
      }
      PlacementOptions po;
      po.num_cpu_devices = options_.num_cpu_devices;
      po.default_device = options_.default_device;
      po.allow_soft_placement = options_.allow_soft_placement;
      Placement placement;
      EMBER_RETURN_IF_ERROR(PlaceNode(node, po, &placement));
      PlacedKernel placed;
      placed.kernel = std::move(placement.kernel);
      placed.device = placement.device;
      placed.host_memory_inputs = std::move(placement.host_memory_inputs);
      if (node.op->is_stateful) {
        std::lock_guard<std::mutex> lock(kernels_mu_);
        placed = stateful_kernels_.emplace(node.name(), placed).first->second;  // first wins
      }
      *out = std::move(placed);
      return Status::OK();
    };
  }

  Status GetOrCreateExecutors(const std::vector<std::string>& feeds,
                              const std::vector<std::string>& fetches,
                              const std::vector<std::string>& targets,
                              std::shared_ptr<ExecutorsAndKeys>* out) {
    std::string key = Join(feeds) + "->" + Join(fetches) + "/" + Join(targets) + "/0/";
    std::vector<std::string> sf = feeds, so = fetches, st = targets;
    std::sort(sf.begin(), sf.end());
    std::sort(so.begin(), so.end());
    std::sort(st.begin(), st.end());
    std::string sorted_key = Join(sf) + "->" + Join(so) + "/" + Join(st) + "/0/";
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) {
        *out = it->second;
        return Status::OK();
      }
      it = cache_.find(sorted_key);
      if (it != cache_.end()) {
        *out = it->second;
        cache_.emplace(key, it->second);
        return Status::OK();
      }
    }
    if (finalized_.load()) return errors::FailedPrecondition("Session has been finalized.");
    // Build for the sorted signature with the lock released.
    auto entry = std::make_shared<ExecutorsAndKeys>();
    Signature sig{sf, so, st};
    std::shared_ptr<const Graph> graph;
    EMBER_RETURN_IF_ERROR(GraphFor(sig, &graph));
    EMBER_RETURN_IF_ERROR(Executor::Create(graph, sig, Kernels(), &entry->executor));
    for (size_t i = 0; i < entry->executor->feed_names().size(); ++i) {
      entry->feed_index[entry->executor->feed_names()[i]] = static_cast<int>(i);
    }
    for (size_t i = 0; i < entry->executor->fetch_names().size(); ++i) {
      entry->fetch_index.emplace(entry->executor->fetch_names()[i], static_cast<int>(i));
    }
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto inserted = cache_.emplace(sorted_key, entry);  // the first inserter wins a race
    cache_.emplace(key, inserted.first->second);
    *out = inserted.first->second;
    return Status::OK();
  }

  Status RunStep(const Executor& ex, const RunOptions& run_options, ThreadPool* inter,
                 ThreadPool* intra, const std::vector<Tensor>& feeds, std::vector<Tensor>* fetches,
                 RunMetadata* metadata, bool own_pool) {
    has_run_.store(true);
    StepCancellation cancellation;
    {
      std::lock_guard<std::mutex> lock(steps_mu_);
      if (closed_.load()) return Closed();
      active_steps_.insert(&cancellation);
    }
    Executor::RunArgs args;
    args.resources = &resources_;
    args.inter_op_pool = inter;
    args.intra_op_pool = intra;
    args.cancellation = &cancellation;
    args.allow_tf32 = options_.allow_tf32;
    args.caller_runs_first_root = own_pool;
    int64_t timeout = run_options.timeout_in_ms > 0 ? run_options.timeout_in_ms
                                                    : options_.operation_timeout_in_ms;
    if (timeout > 0)
      args.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
    int64_t step_id = next_step_id_.fetch_add(1);
    if (metadata != nullptr) {
      metadata->step_id = step_id;
      metadata->step_stats.dev_stats.clear();
      // A traced run without a RunMetadata has nowhere to put its stats: it just runs.
      if (run_options.trace_level > RunOptions::NO_TRACE) args.trace = &metadata->step_stats;
    }
    Status s = ex.Run(args, feeds, fetches);
    {
      std::lock_guard<std::mutex> lock(steps_mu_);
      active_steps_.erase(&cancellation);
      if (active_steps_.empty()) steps_cv_.notify_all();
    }
    return s;
  }

  const SessionOptions options_;
  std::vector<std::unique_ptr<ThreadPool>> pools_;
  std::unique_ptr<ThreadPool> intra_pool_;
  ResourceMgr resources_;

  std::mutex graph_mu_;
  bool created_ = false;
  std::vector<NodeDef> defs_;
  FunctionDefLibrary library_;
  std::shared_ptr<const Graph> graph_;

  std::atomic<bool> closed_{false};
  std::atomic<bool> finalized_{false};
  std::atomic<bool> has_run_{false};
  std::atomic<int64_t> next_step_id_{1};

  std::mutex kernels_mu_;
  std::map<std::string, PlacedKernel> stateful_kernels_;

  std::mutex cache_mu_;
  std::unordered_map<std::string, std::shared_ptr<ExecutorsAndKeys>> cache_;

  std::mutex callables_mu_;
  CallableHandle next_callable_ = 0;
  std::map<CallableHandle, std::shared_ptr<Callable>> callables_;

  std::mutex prun_mu_;
  int64_t next_prun_ = 0;
  std::map<std::string, std::shared_ptr<PartialRun>> partial_runs_;

  std::mutex steps_mu_;
  std::condition_variable steps_cv_;
  std::set<StepCancellation*> active_steps_;
};

}  // namespace

std::unique_ptr<Session> NewSession(const SessionOptions& options) {
  return std::make_unique<DirectSession>(options);
}

Status NewSession(const SessionOptions& options, Session** out) {
  if (out == nullptr) return errors::InvalidArgument("NewSession: `out` must not be null");
  if (options.num_cpu_devices < 1) {
    return errors::InvalidArgument("SessionOptions.num_cpu_devices must be >= 1");
  }
  DeviceSpec spec;
  if (!options.default_device.empty() && !ParseDeviceSpec(options.default_device, &spec)) {
    return errors::InvalidArgument("SessionOptions.default_device '" + options.default_device +
                                   "' is not a device name (write e.g. /device:GPU:0)");
  }
  *out = new DirectSession(options);
  return Status::OK();
}

}  // namespace ember
