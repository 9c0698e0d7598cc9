#include "core/executor.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <new>
#include <thread>
#include <unordered_map>

#include "ember/session.h"

namespace ember {

namespace {
bool HasDeadline(const std::chrono::steady_clock::time_point& t) {
  return t.time_since_epoch().count() != 0;
}
// Moves a tensor between host memory and a device's memory; inserted by Executor::Create on
// edges that cross memory spaces, and before fetches of device tensors.
class CopyKernel : public OpKernel {
 public:
  CopyKernel(OpKernelConstruction* c, Device* device, bool to_device)
      : OpKernel(c), device_(device), to_device_(to_device) {}
  void Compute(OpKernelContext* ctx) override {
    Tensor out;
    Status s = to_device_ ? device_->CopyToDevice(ctx->input(0), &out)
                          : device_->CopyToHost(ctx->input(0), &out);
    if (!s.ok()) {
      ctx->SetStatus(Status(s.code(), "Copy " + std::string(to_device_ ? "to " : "from ") +
                                          device_->name() + " failed in {{node " + name() +
                                          "}}: " + s.message()));
      return;
    }
    ctx->set_output(0, out);
  }

 private:
  Device* device_;
  bool to_device_;
};

Status DeadlineStatus() {
  return errors::DeadlineExceeded(
      "Timed out: the Run call exceeded its deadline (operation_timeout_in_ms or "
      "RunOptions.timeout_in_ms) and the step was cancelled");
}
}  // namespace

Status Executor::Create(std::shared_ptr<const Graph> graph, const Signature& sig,
                        const KernelProvider& kernels, std::unique_ptr<Executor>* out) {
  if (sig.fetches.empty() && sig.targets.empty()) {
    return errors::InvalidArgument("Must specify at least one target to fetch or execute.");
  }
  std::unique_ptr<Executor> ex(new Executor());
  const Graph& g = *graph;
  // Feeds: (node, output) -> feed index.
  std::map<std::pair<int, int>, int> fed;
  for (const std::string& name : sig.feeds) {
    TensorId id = ParseTensorName(name);
    std::string canonical = id.ToString();
    for (const std::string& seen : ex->feed_names_) {
      if (seen == canonical) {
        return errors::InvalidArgument("Endpoint \"" + canonical + "\" fed more than once.");
      }
    }
    int n = g.FindNode(id.node);
    if (n < 0) return errors::NotFound("FeedInputs: unable to find feed output " + canonical);
    const Node& node = g.node(n);
    if (id.index >= static_cast<int>(node.output_types.size())) {
      return errors::InvalidArgument("FeedInputs: " + canonical +
                                     ": output index too large, must be < " +
                                     std::to_string(node.output_types.size()));
    }
    fed[{n, id.index}] = static_cast<int>(ex->feed_names_.size());
    ex->feed_names_.push_back(canonical);
    ex->feed_ids_.push_back(id);
    ex->feed_types_.push_back(node.output_types[static_cast<size_t>(id.index)]);
  }
  std::vector<int> stack;
  std::vector<std::pair<int, int>> fetch_endpoints;
  for (const std::string& name : sig.fetches) {
    TensorId id = ParseTensorName(name);
    std::string canonical = id.ToString();
    int n = g.FindNode(id.node);
    if (n < 0) return errors::NotFound("FetchOutputs node " + canonical + ": not found");
    const Node& node = g.node(n);
    if (node.output_types.empty()) {
      return errors::InvalidArgument(
          "Tried to fetch data for '" + id.node +
          "', which produces no output.  To run to a node but not fetch any data, pass '" +
          id.node +
          "' as an argument to the 'target_node_names' argument of the Session::Run API.");
    }
    if (id.index >= static_cast<int>(node.output_types.size())) {
      return errors::InvalidArgument("FetchOutputs " + canonical +
                                     ": output index too large, must be < " +
                                     std::to_string(node.output_types.size()));
    }
    if (fed.count({n, id.index}) != 0) {
      return errors::InvalidArgument(canonical + " is both fed and fetched.");
    }
    ex->fetch_names_.push_back(canonical);
    fetch_endpoints.push_back({n, id.index});
    stack.push_back(n);
  }
  std::string missing_targets;
  for (const std::string& name : sig.targets) {
    int n = g.FindNode(name);
    if (n < 0) {
      missing_targets += (missing_targets.empty() ? "" : ", ") + name;
      continue;
    }
    stack.push_back(n);
  }
  if (!missing_targets.empty()) {
    return errors::NotFound("PruneForTargets: Some target nodes not found: " + missing_targets);
  }
  // Prune: walk backwards from fetches and targets, stopping at fed tensors.
  std::vector<bool> needed(g.nodes().size(), false);
  while (!stack.empty()) {
    int u = stack.back();
    stack.pop_back();
    if (needed[static_cast<size_t>(u)]) continue;
    needed[static_cast<size_t>(u)] = true;
    const Node& node = g.node(u);
    for (const Node::Input& in : node.inputs) {
      if (fed.count({in.node, in.output}) == 0) stack.push_back(in.node);
    }
    for (int c : node.control_inputs) stack.push_back(c);
  }
  std::vector<int> exec_id(g.nodes().size(), -1);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (!needed[i]) continue;
    const Node& node = g.node(static_cast<int>(i));
    if (g.options().place_pruned_graph) {
      EMBER_RETURN_IF_ERROR(CheckDevice(node.def, g.options()));
    }
    exec_id[i] = static_cast<int>(ex->nodes_.size());
    ExecNode en;
    en.node = &node;
    en.first_slot = ex->num_slots_;
    ex->num_slots_ += static_cast<int>(node.output_types.size());
    ex->slot_owner_.resize(static_cast<size_t>(ex->num_slots_), exec_id[i]);
    PlacedKernel placed;
    EMBER_RETURN_IF_ERROR(kernels(node, &placed));
    en.kernel = std::move(placed.kernel);
    en.device = placed.device;
    en.output_space = MemorySpace(placed.device);
    en.host_input.assign(node.inputs.size(), en.output_space == nullptr ? 1 : 0);
    for (int k : placed.host_memory_inputs) {
      if (k >= 0 && static_cast<size_t>(k) < en.host_input.size())
        en.host_input[static_cast<size_t>(k)] = 1;
    }
    if (en.output_space != nullptr &&
        std::find(ex->devices_.begin(), ex->devices_.end(), en.output_space) == ex->devices_.end())
      ex->devices_.push_back(en.output_space);
    ex->nodes_.push_back(std::move(en));
  }
  // Data edges, with copy nodes where producer and consumer memory differ (feeds are host
  // tensors). Copy nodes are appended to nodes_, so index rather than iterate.
  std::map<CopyKey, int> copies;
  const size_t num_graph_nodes = ex->nodes_.size();
  for (size_t self = 0; self < num_graph_nodes; ++self) {
    const Node* node = ex->nodes_[self].node;
    for (size_t k = 0; k < node->inputs.size(); ++k) {
      const Node::Input& in = node->inputs[k];
      Source src;
      Device* from = nullptr;
      auto f = fed.find({in.node, in.output});
      if (f != fed.end()) {
        src.feed = f->second;
      } else {
        const ExecNode& producer =
            ex->nodes_[static_cast<size_t>(exec_id[static_cast<size_t>(in.node)])];
        src.slot = producer.first_slot + in.output;
        from = producer.output_space;
      }
      const ExecNode& me = ex->nodes_[self];
      Device* to = me.host_input[k] ? nullptr : me.output_space;
      src = ex->Route(src, node->input_types[k],
                      g.node(in.node).name() + ":" + std::to_string(in.output), from, to, &copies);
      ex->Wire(src, static_cast<int>(self));
      ex->nodes_[self].inputs.push_back(src);
    }
    for (int c : node->control_inputs) {
      const int from = exec_id[static_cast<size_t>(c)];
      ex->nodes_[static_cast<size_t>(from)].consumers.push_back(static_cast<int>(self));
      ex->nodes_[self].control_in.push_back(from);
      ++ex->nodes_[self].num_pending;
    }
  }
  // Fetches are host tensors: a device output is copied back first.
  for (const auto& ep : fetch_endpoints) {
    const ExecNode& producer =
        ex->nodes_[static_cast<size_t>(exec_id[static_cast<size_t>(ep.first)])];
    Source s;
    s.slot = producer.first_slot + ep.second;
    ex->fetch_slots_.push_back(
        ex->Route(s, g.node(ep.first).output_types[static_cast<size_t>(ep.second)],
                  g.node(ep.first).name() + ":" + std::to_string(ep.second), producer.output_space,
                  nullptr, &copies));
  }
  for (ExecNode& en : ex->nodes_) {
    if (en.node == nullptr || en.output_space != nullptr) continue;
    const std::string& op = en.node->def.op;
    en.forward_only = op == "Identity" || op == "NoOp" || op == "StopGradient" || op == "Snapshot";
    if (op == "Switch") en.flow = ExecNode::Flow::kSwitch;
    if (op == "Merge") en.flow = ExecNode::Flow::kMerge;
    if (en.flow != ExecNode::Flow::kNone) ex->has_cond_ = true;
  }
  ex->cost_ns_ = std::make_unique<std::atomic<int32_t>[]>(2 * ex->nodes_.size());
  for (size_t i = 0; i < 2 * ex->nodes_.size(); ++i) ex->cost_ns_[i].store(-1);
  for (size_t i = 0; i < ex->nodes_.size(); ++i) {
    if (ex->nodes_[i].num_pending != 0) continue;
    ex->roots_.push_back(static_cast<int>(i));
    const ExecNode& en = ex->nodes_[i];
    const bool host_const =
        en.node != nullptr && en.node->def.op == "Const" && en.output_space == nullptr;
    (host_const ? ex->const_roots_ : ex->other_roots_).push_back(static_cast<int>(i));
  }
  ex->slot_owner_.clear();
  ex->graph_ = std::move(graph);
  *out = std::move(ex);
  return Status::OK();
}

void Executor::Wire(const Source& src, int consumer) {
  if (src.slot < 0) return;
  nodes_[static_cast<size_t>(slot_owner_[static_cast<size_t>(src.slot)])].consumers.push_back(
      consumer);
  ++nodes_[static_cast<size_t>(consumer)].num_pending;
}

int Executor::CopyNode(const Source& src, DataType dtype, const std::string& tensor, Device* from,
                       Device* to, std::map<CopyKey, int>* made) {
  CopyKey key{src.feed >= 0 ? -1 - src.feed : src.slot, to};
  auto it = made->find(key);
  if (it != made->end()) return it->second;
  Device* device = to != nullptr ? to : from;
  Node& n = copy_nodes_.emplace_back();
  n.def.op = to != nullptr ? "_HostToDevice" : "_DeviceToHost";
  n.def.name =
      n.def.op + "/" + tensor + "/" + device->type() + ":" + std::to_string(device->index());
  n.input_types = {dtype};
  n.output_types = {dtype};
  OpKernelConstruction construction(n.def, n.input_types, n.output_types);
  ExecNode en;
  en.node = &n;
  en.kernel = std::make_shared<CopyKernel>(&construction, device, to != nullptr);
  en.device = device;
  en.output_space = to;
  en.host_input = {static_cast<uint8_t>(to != nullptr ? 1 : 0)};
  en.inputs = {src};
  en.first_slot = num_slots_++;
  int id = static_cast<int>(nodes_.size());
  slot_owner_.push_back(id);
  nodes_.push_back(std::move(en));
  Wire(src, id);
  made->emplace(key, id);
  return id;
}

Executor::Source Executor::Route(const Source& src, DataType dtype, const std::string& tensor,
                                 Device* from, Device* to, std::map<CopyKey, int>* made) {
  if (from == to) return src;
  Source s = src;
  if (from != nullptr) {  // device -> host, then on to another device if asked
    s.feed = -1;
    s.slot =
        nodes_[static_cast<size_t>(CopyNode(s, dtype, tensor, from, nullptr, made))].first_slot;
    if (to == nullptr) return s;
  }
  Source out;
  out.slot = nodes_[static_cast<size_t>(CopyNode(s, dtype, tensor, nullptr, to, made))].first_slot;
  return out;
}

bool Executor::CanComputeFrom(const std::string& fetch, const std::vector<bool>& fed) const {
  const Graph& g = *graph_;
  TensorId id = ParseTensorName(fetch);
  int start = g.FindNode(id.node);
  if (start < 0) return false;
  std::map<std::pair<int, int>, int> feed_index;
  for (size_t i = 0; i < feed_ids_.size(); ++i) {
    feed_index[{g.FindNode(feed_ids_[i].node), feed_ids_[i].index}] = static_cast<int>(i);
  }
  std::vector<bool> seen(g.nodes().size(), false);
  std::vector<int> stack{start};
  while (!stack.empty()) {
    int u = stack.back();
    stack.pop_back();
    if (seen[static_cast<size_t>(u)]) continue;
    seen[static_cast<size_t>(u)] = true;
    const Node& node = g.node(u);
    for (const Node::Input& in : node.inputs) {
      auto f = feed_index.find({in.node, in.output});
      if (f == feed_index.end()) {
        stack.push_back(in.node);
      } else if (!fed[static_cast<size_t>(f->second)]) {
        return false;
      }
    }
    for (int c : node.control_inputs) stack.push_back(c);
  }
  return true;
}

// One exec node's run in a traced step. Each node runs once per step, so the thread that
// runs it writes its slot without a lock; the step's end (a happens-before edge through
// `outstanding` / `done`) publishes the slots to the caller.
struct NodeTime {
  int64_t start_ns = 0;  // wall clock since the epoch; 0: the node did not run
  int64_t duration_ns = 0;
  int64_t thread_id = 0;
};

struct Executor::Step {
  const std::vector<Tensor>* feeds = nullptr;
  std::vector<NodeTime> times;  // per exec node, when traced; else empty
  bool sample = false;          // time each node into Executor::cost_ns_
  RunArgs args;
  StepCancellation own_cancellation;
  StepCancellation* cancellation = nullptr;
  std::vector<Tensor> slots;
  // Per exec node, in a graph with Switch or Merge: 1 when it was dead (Executor::RunCondNode).
  // Written by the node's thread before it counts down its consumers, read by them after.
  std::unique_ptr<uint8_t[]> dead;
  std::unique_ptr<std::atomic<int>[]> pending;
  std::atomic<int64_t> outstanding{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::atomic<bool> done_flag{false};  // `done`, for the caller's brief poll before it sleeps
  Status status;

  void Fail(const Status& s) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (status.ok()) status = s;
    }
    failed.store(true);
  }
  bool CheckCancelled() {
    if (cancellation->cancelled()) return true;
    if (HasDeadline(args.deadline) && std::chrono::steady_clock::now() >= args.deadline) {
      cancellation->Cancel(DeadlineStatus());
      return true;
    }
    return false;
  }
  void Finish() {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    done_flag.store(true, std::memory_order_release);
    cv.notify_all();
  }
  // Short steps finish within microseconds: poll before paying for a sleep and a wake-up.
  void PollDone() const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    for (int i = 0; !done_flag.load(std::memory_order_acquire); ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return;
    }
  }
};

Status Executor::RunNode(Step* step, int id) const {
  if (step->CheckCancelled()) return step->cancellation->reason();
  if (step->args.trace != nullptr) return TraceNode(step, id);
  if (!step->sample) return ComputeNode(step, id);
  const auto start = std::chrono::steady_clock::now();
  Status s = ComputeNode(step, id);
  const int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  const size_t i = 2 * static_cast<size_t>(id);  // the last timing becomes the one before
  cost_ns_[i + 1].store(cost_ns_[i].load(std::memory_order_relaxed), std::memory_order_relaxed);
  cost_ns_[i].store(
      static_cast<int32_t>(std::min<int64_t>(ns, std::numeric_limits<int32_t>::max())),
      std::memory_order_relaxed);
  return s;
}

Status Executor::TraceNode(Step* step, int id) const {
  // The wall clock for both ends, as TensorFlow's: a consumer's start then never precedes
  // its producer's end.
  const auto start = std::chrono::system_clock::now();
  Status s = ComputeNode(step, id);
  const auto end = std::chrono::system_clock::now();
  NodeTime& t = step->times[static_cast<size_t>(id)];
  t.start_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count();
  t.duration_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
  t.thread_id = static_cast<int64_t>(std::hash<std::thread::id>()(std::this_thread::get_id()));
  return s;
}

void Executor::CollectTrace(const Step& step, StepStats* out) const {
  std::vector<int> ran;
  for (size_t i = 0; i < step.times.size(); ++i) {
    if (step.times[i].start_ns != 0) ran.push_back(static_cast<int>(i));
  }
  std::stable_sort(ran.begin(), ran.end(), [&](int a, int b) {
    return step.times[static_cast<size_t>(a)].start_ns <
           step.times[static_cast<size_t>(b)].start_ns;
  });
  out->dev_stats.clear();
  std::map<const Device*, size_t> dev_index;  // devices in the order their first node started
  for (int id : ran) {
    const ExecNode& en = nodes_[static_cast<size_t>(id)];
    const NodeTime& t = step.times[static_cast<size_t>(id)];
    auto it = dev_index.find(en.device);
    if (it == dev_index.end()) {
      it = dev_index.emplace(en.device, out->dev_stats.size()).first;
      out->dev_stats.emplace_back();
      out->dev_stats.back().device =
          en.device != nullptr ? en.device->name() : "/job:localhost/replica:0/task:0/device:CPU:0";
    }
    NodeExecStats ns;
    ns.node_name = en.node->name();
    ns.op = en.node->def.op;
    ns.all_start_nanos = t.start_ns;
    ns.all_start_micros = t.start_ns / 1000;
    ns.all_end_rel_nanos = t.duration_ns;
    ns.all_end_rel_micros = t.duration_ns / 1000;
    ns.thread_id = t.thread_id;
    out->dev_stats[it->second].node_stats.push_back(std::move(ns));
  }
}

namespace {
// This thread's spare context vectors (OpKernelContext::Storage), one per context it runs at
// once: a kernel may run an executor of its own (a function call) on the same thread.
thread_local std::vector<OpKernelContext::Storage> spare_storage;

// Takes a spare Storage for a context on this thread, and gives it back when it ends.
class ContextStorage {
 public:
  ContextStorage() {
    if (!spare_storage.empty()) {
      s_ = std::move(spare_storage.back());
      spare_storage.pop_back();
    }
  }
  ~ContextStorage() { spare_storage.push_back(std::move(s_)); }
  ContextStorage(const ContextStorage&) = delete;
  ContextStorage& operator=(const ContextStorage&) = delete;
  OpKernelContext::Storage& get() { return s_; }

 private:
  OpKernelContext::Storage s_;
};

// Declared after the context: hands its vectors back to `s` before the context ends.
struct ReleaseContext {
  OpKernelContext& ctx;
  OpKernelContext::Storage& s;
  ~ReleaseContext() { ctx.Release(&s); }
};
}  // namespace

Status Executor::RunCondNode(Step* step, int id, bool* done) const {
  const ExecNode& en = nodes_[static_cast<size_t>(id)];
  auto input = [&](size_t k) -> const Tensor& {
    const Source& s = en.inputs[k];
    return s.feed >= 0 ? (*step->feeds)[static_cast<size_t>(s.feed)]
                       : step->slots[static_cast<size_t>(s.slot)];
  };
  const size_t first = static_cast<size_t>(en.first_slot);
  *done = true;
  if (en.flow == ExecNode::Flow::kMerge) {
    for (size_t k = 0; k < en.inputs.size(); ++k) {
      if (!input(k).IsInitialized()) continue;
      step->slots[first] = input(k);
      Tensor index(DataType::kInt32, TensorShape({}));
      index.data<int32_t>()[0] = static_cast<int32_t>(k);
      step->slots[first + 1] = std::move(index);
      return Status::OK();
    }
    step->dead[static_cast<size_t>(id)] = 1;
    return Status::OK();
  }
  bool dead = false;
  for (size_t k = 0; k < en.inputs.size() && !dead; ++k) dead = !input(k).IsInitialized();
  for (size_t k = 0; k < en.control_in.size() && !dead; ++k) {
    dead = step->dead[static_cast<size_t>(en.control_in[k])] != 0;
  }
  if (dead) {
    step->dead[static_cast<size_t>(id)] = 1;
    return Status::OK();
  }
  if (en.flow != ExecNode::Flow::kSwitch) {
    *done = false;
    return Status::OK();
  }
  const Tensor& pred = input(1);
  if (pred.dims() != 0) {
    return errors::InvalidArgument("The second input must be a scalar, but it has shape " +
                                   pred.shape().DebugString() + "\n\t [[{{node " + en.node->name() +
                                   "}}]]");
  }
  step->slots[first + (pred.data<bool>()[0] ? 1 : 0)] = input(0);
  return Status::OK();
}

Status Executor::ComputeNode(Step* step, int id) const {
  if (has_cond_) {
    bool done = false;
    Status s = RunCondNode(step, id, &done);
    if (done || !s.ok()) return s;
  }
  const ExecNode& en = nodes_[static_cast<size_t>(id)];
  ContextStorage storage;
  OpKernelContext::Params p;
  p.node = &en.node->def;
  p.inputs = std::move(storage.get().inputs);
  p.inputs.reserve(en.inputs.size());
  for (size_t k = 0; k < en.inputs.size(); ++k) {
    const Source& s = en.inputs[k];
    const Tensor* t = s.feed >= 0 ? &(*step->feeds)[static_cast<size_t>(s.feed)]
                                  : &step->slots[static_cast<size_t>(s.slot)];
    // Placement guarantees this; a kernel must never be handed memory it cannot read.
    if (t->on_device() == (en.host_input[k] != 0)) {
      return errors::Internal("Input " + std::to_string(k) + " of node '" + en.node->name() +
                              "' is in " + (t->on_device() ? "device" : "host") +
                              " memory but its kernel reads " +
                              (en.host_input[k] ? "host" : "device") + " memory");
    }
    p.inputs.push_back(t);
  }
  p.device = en.device;
  p.allow_tf32 = step->args.allow_tf32;
  p.output_types = std::move(storage.get().output_types);
  p.output_types.assign(en.node->output_types.begin(), en.node->output_types.end());
  p.resources = step->args.resources;
  p.intra_op_pool = step->args.intra_op_pool;
  p.is_cancelled = [step] { return step->CheckCancelled(); };
  OpKernelContext ctx(std::move(p), std::move(storage.get().outputs));
  const ReleaseContext release{ctx, storage.get()};
  try {
    en.kernel->Compute(&ctx);
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted("OOM when running node '" + en.node->name() + "'");
  } catch (const std::exception& e) {
    return errors::Internal("Kernel for node '" + en.node->name() + "' threw: " + e.what());
  }
  if (!ctx.status().ok()) {
    const Status& s = ctx.status();
    if (s.message().find(en.node->name()) != std::string::npos) return s;
    return Status(s.code(), s.message() + "\n\t [[{{node " + en.node->name() + "}}]]");
  }
  std::vector<Tensor>& outs = ctx.outputs();
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].IsInitialized()) {
      return errors::Internal("Missing " + std::to_string(i) + "-th output from {{node " +
                              en.node->name() + "}}");
    }
    if (outs[i].dtype() != en.node->output_types[i]) {
      return errors::Internal("Output " + std::to_string(i) + " of node '" + en.node->name() +
                              "' is " + DataTypeString(outs[i].dtype()) + " but op " +
                              en.node->def.op + " promises " +
                              DataTypeString(en.node->output_types[i]));
    }
    step->slots[static_cast<size_t>(en.first_slot) + i] = std::move(outs[i]);
  }
  return Status::OK();
}

void Executor::ProcessLoop(const std::shared_ptr<Step>& step, int id) const {
  // Ready nodes this thread runs once its chain ends (forward-only and cheap ones), each
  // counted in `outstanding` as a chain of its own: on the stack up to kHere, beyond in `more`
  // (no heap allocation per fan-out in a step).
  constexpr int kHere = 32;
  int here[kHere];
  int num_here = 0;
  std::vector<int> more;
  int cur = id;
  while (cur >= 0) {
    int next = -1;
    if (!step->failed.load()) {
      Status s = RunNode(step.get(), cur);
      if (!s.ok()) {
        step->Fail(s);
      } else {
        for (int c : nodes_[static_cast<size_t>(cur)].consumers) {
          if (step->pending[static_cast<size_t>(c)].fetch_sub(1, std::memory_order_acq_rel) == 1) {
            if (next < 0) {
              next = c;  // continue on this thread
            } else if (step->args.inter_op_pool != nullptr &&
                       !nodes_[static_cast<size_t>(c)].forward_only && !Cheap(c)) {
              step->outstanding.fetch_add(1);
              step->args.inter_op_pool->Schedule([this, step, c] { ProcessLoop(step, c); });
            } else {
              step->outstanding.fetch_add(1);
              if (num_here < kHere) {
                here[num_here++] = c;
              } else {
                more.push_back(c);
              }
            }
          }
        }
      }
    }
    if (next < 0) {
      // This chain ends; one of `here` (already counted) starts the next.
      if (step->outstanding.fetch_sub(1) == 1) step->Finish();
      if (!more.empty()) {
        next = more.back();
        more.pop_back();
      } else if (num_here > 0) {
        next = here[--num_here];
      }
    }
    cur = next;
  }
}

Status Executor::Run(const RunArgs& args, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches) const {
  if (feeds.size() != feed_types_.size()) {
    return errors::Internal("Executor got " + std::to_string(feeds.size()) + " feeds, expected " +
                            std::to_string(feed_types_.size()));
  }
  auto step = std::make_shared<Step>();
  step->feeds = &feeds;
  step->args = args;
  step->cancellation = args.cancellation != nullptr ? args.cancellation : &step->own_cancellation;
  step->slots.resize(static_cast<size_t>(num_slots_));
  if (args.trace != nullptr) step->times.resize(nodes_.size());
  // Nodes are timed in the first runs and then one run in 32 (two clock reads per node).
  const uint32_t run = runs_.fetch_add(1, std::memory_order_relaxed);
  step->sample = run < 4 || run % 32 == 0;
  if (has_cond_) step->dead.reset(new uint8_t[nodes_.size()]());
  step->pending.reset(new std::atomic<int>[nodes_.size()]);
  for (size_t i = 0; i < nodes_.size(); ++i) step->pending[i].store(nodes_[i].num_pending);
  if (args.inter_op_pool == nullptr) {
    step->outstanding.store(static_cast<int64_t>(roots_.size()));
    if (roots_.empty()) step->done = true;
    // Inline: an explicit ready queue keeps the stack flat on deep graphs.
    std::deque<int> ready(roots_.begin(), roots_.end());
    while (!ready.empty() && !step->failed.load()) {
      int u = ready.front();
      ready.pop_front();
      Status s = RunNode(step.get(), u);
      if (!s.ok()) {
        step->Fail(s);
        break;
      }
      for (int c : nodes_[static_cast<size_t>(u)].consumers) {
        if (step->pending[static_cast<size_t>(c)].fetch_sub(1) == 1) ready.push_back(c);
      }
    }
  } else {
    // The Const roots first, here, and the forward-only nodes they make ready: a frozen Keras
    // graph reads each weight through an Identity (its ReadVariableOp) under one NoOp, 262 in
    // MobileNetV2, which as one closure each kept the inter-op workers waking and taking the
    // caller's CPU (two threads ran the model at half the speed of one). The other nodes they
    // make ready join the other roots.
    std::vector<int> start(other_roots_);
    std::vector<int> here(const_roots_.rbegin(), const_roots_.rend());
    while (!here.empty()) {
      const int r = here.back();
      here.pop_back();
      Status s = RunNode(step.get(), r);
      if (!s.ok()) {
        step->Fail(s);
        start.clear();
        break;
      }
      for (int c : nodes_[static_cast<size_t>(r)].consumers) {
        if (step->pending[static_cast<size_t>(c)].fetch_sub(1) == 1) {
          (nodes_[static_cast<size_t>(c)].forward_only ? here : start).push_back(c);
        }
      }
    }
    step->outstanding.store(static_cast<int64_t>(start.size()));
    if (start.empty()) step->Finish();
    // Without a deadline, on the session's own pool, the caller runs the first of them (and
    // the chain it starts) itself:
    // a step of one chain then neither queues a closure nor wakes a worker, whose wake-up
    // latency made its time vary several-fold from run to run.
    const bool inline_first =
        args.caller_runs_first_root && !HasDeadline(args.deadline) && !start.empty();
    // The caller also runs the cheap ones (Cheap) after it, as ProcessLoop runs a chain's.
    std::vector<int> mine;
    for (size_t i = inline_first ? 1 : 0; i < start.size(); ++i) {
      const int r = start[i];
      if (inline_first && Cheap(r)) {
        mine.push_back(r);
      } else {
        args.inter_op_pool->Schedule([this, step, r] { ProcessLoop(step, r); });
      }
    }
    if (inline_first) {
      ProcessLoop(step, start[0]);
      for (int r : mine) ProcessLoop(step, r);
    }
    // Help rather than sleep: while the step is not done, run queued closures (its roots,
    // and the branches they fan out to) here. A chain of cheap nodes then costs what it
    // costs inline, plus the scheduling; only the step's last leg is waited for.
    // With a deadline the caller stays free to cancel the step when it passes, as before.
    while (!HasDeadline(args.deadline) && !step->done_flag.load(std::memory_order_acquire) &&
           args.inter_op_pool->TryRunOne()) {
    }
    step->PollDone();
    std::unique_lock<std::mutex> lock(step->mu);
    if (HasDeadline(args.deadline)) {
      if (!step->cv.wait_until(lock, args.deadline, [&] { return step->done; })) {
        lock.unlock();
        step->cancellation->Cancel(DeadlineStatus());
        lock.lock();
      }
    }
    step->cv.wait(lock, [&] { return step->done; });
  }
  // Work queued on devices (a step whose results stay there, errors raised asynchronously)
  // finishes before the step does.
  for (Device* d : devices_) {
    Status s = d->Sync();
    if (!s.ok()) {
      step->Fail(Status(s.code(),
                        "Error on " + d->name() + " after the step's kernels ran: " + s.message()));
    }
  }
  // Every node of the step has returned (`done`, or the inline loop ended): the slots are final.
  if (args.trace != nullptr) CollectTrace(*step, args.trace);
  // A cancelled step reports why it was cancelled (deadline, Close), not a kernel's reaction.
  if (step->cancellation->cancelled()) return step->cancellation->reason();
  {
    std::lock_guard<std::mutex> lock(step->mu);
    if (!step->status.ok()) return step->status;
  }
  fetches->clear();
  fetches->reserve(fetch_slots_.size());
  for (size_t i = 0; i < fetch_slots_.size(); ++i) {
    const Tensor& t = step->slots[static_cast<size_t>(fetch_slots_[i].slot)];
    if (!t.IsInitialized()) {
      if (has_cond_) {  // an untaken branch's tensor: TensorFlow's message for a dead fetch
        return errors::InvalidArgument("Retval[" + std::to_string(i) + "] does not have value");
      }
      return errors::Internal("Fetch was not computed by the step");
    }
    fetches->push_back(t);
  }
  return Status::OK();
}

}  // namespace ember
