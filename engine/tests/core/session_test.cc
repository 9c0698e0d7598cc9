// Engine-internal session/executor/graph tests (the spec-level suite is verify/session/).
#include "ember/session.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>

#include "core/graph.h"
#include "core/op_kernel.h"
#include "core/thread_pool.h"
#include "ember/cc/client_session.h"
#include "ember/cc/ops.h"
#include "ember_test.h"

using namespace ember;
using namespace ember::ops;

// Heap allocations through operator new, counted while `counting` is set (this test binary
// replaces the global operator new and delete with ones over malloc and free, not inlined: GCC
// would see malloc's memory reach operator delete, and warn).
namespace {
std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};
}  // namespace
__attribute__((noinline)) void* operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {
NodeDef MakeNode(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                 std::map<std::string, AttrValue> attrs = {}) {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.input = std::move(inputs);
  n.attr = std::move(attrs);
  return n;
}
NodeDef FloatConst(const std::string& name, std::vector<float> v) {
  AttrValue value;
  value.kind = AttrValue::Kind::kTensor;
  value.tensor = Tensor::From<float>(TensorShape({static_cast<int64_t>(v.size())}), v);
  return MakeNode(name, "Const", {}, {{"value", value}, {"dtype", TypeAttr(DT_FLOAT)}});
}
// A float argument of a test op's OpDef.
ArgDef FloatArg(const std::string& name) {
  ArgDef a;
  a.name = name;
  a.type = DataType::kFloat;
  return a;
}
// The OpDef of a test op from a float x to a float y.
OpDef FloatToFloatDef(const std::string& name) {
  OpDef d;
  d.name = name;
  d.inputs = {FloatArg("x")};
  d.outputs = {FloatArg("y")};
  return d;
}
}  // namespace

TEST(Graph, ValidationErrorsNameTheNode) {
  GraphDef g;
  g.node = {FloatConst("x", {1}), MakeNode("y", "Neg", {"x"}, {{"T", TypeAttr(DT_INT32)}})};
  Graph graph;
  Status s = Graph::Build(g.node, GraphOptions(), &graph);
  EXPECT_EQ(s.message(), std::string("Input 0 of node y was passed float from x:0 incompatible "
                                     "with expected int32."));
  g.node = {MakeNode("a", "Neg", {"b"}, {{"T", TypeAttr(DT_FLOAT)}}),
            MakeNode("b", "Neg", {"a"}, {{"T", TypeAttr(DT_FLOAT)}})};
  s = Graph::Build(g.node, GraphOptions(), &graph);
  EXPECT_TRUE(s.code() == Code::kInvalidArgument);
  EXPECT_TRUE(s.message().find("2 nodes in a cycle") != std::string::npos);
  g.node = {MakeNode("q", "NoSuchOp", {})};
  s = Graph::Build(g.node, GraphOptions(), &graph);
  EXPECT_TRUE(s.message().find("'q'") != std::string::npos);
  EXPECT_TRUE(s.message().find("NoSuchOp") != std::string::npos);
  g.node = {FloatConst("x", {1}), MakeNode("y", "Neg", {"x:3"}, {{"T", TypeAttr(DT_FLOAT)}})};
  s = Graph::Build(g.node, GraphOptions(), &graph);
  EXPECT_TRUE(s.message().find("invalid output 3") != std::string::npos);
  g.node = {FloatConst("x", {1}), FloatConst("x", {2})};
  EXPECT_FALSE(Graph::Build(g.node, GraphOptions(), &graph).ok());
}

TEST(Graph, ParseTensorName) {
  EXPECT_EQ(ParseTensorName("a:17").index, 17);
  EXPECT_EQ(ParseTensorName("a").ToString(), std::string("a:0"));
  EXPECT_EQ(ParseTensorName("a:b").node, std::string("a:b"));
}

TEST(Session, ClientSessionBasicAndFeed) {
  Scope root = Scope::NewRootScope();
  auto c = Const(root, {{1, 1}});
  auto a = Placeholder(root, DT_INT32);
  auto b = Placeholder(root, DT_INT32);
  auto sum = Add(root, a, b);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({c}, &out));
  EXPECT_TRUE(out[0].shape() == TensorShape({1, 2}));
  EXPECT_EQ(out[0].data<int32_t>()[1], 1);
  ASSERT_OK(session.Run({{a, 1}, {b, 41}}, {sum}, &out));
  EXPECT_EQ(out[0].data<int32_t>()[0], 42);
}

namespace {
// Waits (up to 10 s) until `kParties` instances are inside Compute at the same time: only an
// executor that runs independent nodes in parallel lets every instance finish.
constexpr int kParties = 2;
std::mutex barrier_mu;
std::condition_variable barrier_cv;
int barrier_arrived = 0;
class BarrierKernel : public OpKernel {
 public:
  explicit BarrierKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    std::unique_lock<std::mutex> lock(barrier_mu);
    int generation_target = (barrier_arrived / kParties + 1) * kParties;
    ++barrier_arrived;
    barrier_cv.notify_all();
    if (!barrier_cv.wait_for(lock, std::chrono::seconds(10),
                             [&] { return barrier_arrived >= generation_target; })) {
      ctx->SetStatus(errors::DeadlineExceeded("barrier: the other branch never ran concurrently"));
      return;
    }
    Tensor* out;
    ctx->SetStatus(ctx->allocate_output(0, TensorShape(), &out));
  }
};
OpDef BarrierDef() {
  OpDef d;
  d.name = "TestBarrier";
  d.outputs = {FloatArg("out")};
  return d;
}
EMBER_REGISTER_OP(BarrierDef());
EMBER_REGISTER_KERNEL("TestBarrier", "CPU",
                      [](OpKernelConstruction* c) { return std::make_unique<BarrierKernel>(c); });
}  // namespace

TEST(Executor, IndependentNodesRunInParallel) {
  GraphDef g;
  g.node = {MakeNode("b1", "TestBarrier", {}), MakeNode("b2", "TestBarrier", {})};
  SessionOptions opts;
  opts.inter_op_parallelism_threads = 2;
  auto session = NewSession(opts);
  ASSERT_OK(session->Create(g));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {"b1:0", "b2:0"}, {}, &out));
  EXPECT_EQ(out.size(), 2u);
}

TEST(Executor, AnErrorStopsTheStep) {
  // bad fails (unfed placeholder); its consumer never runs and the error names the node.
  Scope root = Scope::NewRootScope();
  auto p = Placeholder(root.WithOpName("bad"), DT_FLOAT);
  auto n = Neg(root.WithOpName("after"), p);
  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({n}, &out);
  EXPECT_TRUE(s.code() == Code::kInvalidArgument);
  EXPECT_TRUE(s.message().find("'bad'") != std::string::npos);
  EXPECT_TRUE(out.empty());
}

TEST(Session, ParallelExecutionUsesThePool) {
  // Two independent branches each wait for the other: only parallel scheduling finishes.
  Scope root = Scope::NewRootScope();
  auto x = Const(root, 1.0f);
  std::vector<Output> outs;
  for (int i = 0; i < 8; ++i) outs.push_back(Neg(root, x));
  SessionOptions opts;
  opts.inter_op_parallelism_threads = 4;
  ClientSession session(root, opts);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run(outs, &out));
  EXPECT_EQ(out.size(), 8u);
  EXPECT_EQ(out[7].data<float>()[0], -1.0f);
}

TEST(Session, DeepGraphInlineAndPooled) {
  for (int threads : {-1, 2}) {
    Scope root = Scope::NewRootScope();
    Output x = Const(root, 0.0f);
    for (int i = 0; i < 5000; ++i) x = Add(root, x, 1.0f);
    SessionOptions opts;
    opts.inter_op_parallelism_threads = threads;
    ClientSession session(root, opts);
    std::vector<Tensor> out;
    ASSERT_OK(session.Run({x}, &out));
    EXPECT_EQ(out[0].data<float>()[0], 5000.0f);
  }
}

namespace {
// Runs `fetch` of `g` `runs` times through one callable, with a 2-thread inter-op pool; each
// run's first float lands in `values`, and what the pool queued after run `mark` in `queued`.
void RunOnInterOpPool(const GraphDef& g, const std::string& fetch, int runs, int mark,
                      std::vector<float>* values, int64_t* queued) {
  auto session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(g));
  CallableOptions copts;
  copts.fetch = {fetch};
  Session::CallableHandle handle;
  ASSERT_OK(session->MakeCallable(copts, &handle));
  ThreadPool pool("test_inter_op", 2);
  ThreadPoolOptions pools;
  pools.inter_op_threadpool = &pool;
  int64_t at_mark = 0;
  for (int run = 0; run < runs; ++run) {
    if (run == mark) at_mark = pool.NumScheduled();
    std::vector<Tensor> out;
    ASSERT_OK(session->RunCallable(handle, {}, &out, nullptr, pools));
    ASSERT_TRUE(out.size() == 1u);
    values->push_back(out[0].data<float>()[0]);
  }
  *queued = pool.NumScheduled() - at_mark;
}
}  // namespace

TEST(Executor, ForwardOnlyNodesMadeReadyByConstsRunOnTheCaller) {
  // A frozen Keras graph reads each weight through an Identity (its ReadVariableOp), all of
  // them under one NoOp that the output waits for. On a pool the caller runs those Identities
  // and the NoOp as the Consts make them ready: only the first Add is queued, once per run
  // (each Identity was a closure too).
  Scope root = Scope::NewRootScope();
  Output x = Const(root, 0.0f);
  NodeDef deps;
  deps.name = "deps";
  deps.op = "NoOp";
  for (int i = 0; i < 100; ++i) {
    Output read = Identity(root, Const(root, 0.5f));
    deps.input.push_back("^" + read.node_name());
    x = Add(root, x, read);
  }
  Output y = Identity(root, x);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  for (NodeDef& n : g.node) {
    if (n.name == y.node_name()) n.input.push_back("^deps");
  }
  g.node.push_back(deps);
  std::vector<float> values;
  int64_t queued = 0;
  RunOnInterOpPool(g, y.name(), 3, 0, &values, &queued);
  EXPECT_EQ(values, std::vector<float>(3, 50.0f));
  EXPECT_EQ(queued, 3);
}

TEST(Executor, CheapBranchesRunOnTheirThreadExpensiveOnesOnThePool) {
  // A node whose value 40 cheap Negs (scalars; more than ProcessLoop keeps on its stack) or two
  // 256x256 MatMuls consume. Once the executor has timed them (its first runs), the Negs run on
  // the thread that made them ready, and only the MatMuls are queued on the pool.
  for (bool cheap : {true, false}) {
    Scope root = Scope::NewRootScope();
    Output fetch;
    if (cheap) {
      Output x = Neg(root, Const(root, 1.0f));
      Output sum = Neg(root, x);
      for (int i = 0; i < 40; ++i) sum = Add(root, sum, Neg(root, x));
      fetch = sum;
    } else {
      Tensor t(DT_FLOAT, TensorShape({256, 256}));
      std::fill(t.data<float>(), t.data<float>() + t.NumElements(), 0.5f);
      Output x = Neg(root, Const(root, t));
      fetch = Add(root, MatMul(root, x, x), MatMul(root, x, x));
    }
    GraphDef g;
    ASSERT_OK(root.ToGraphDef(&g));
    std::vector<float> values;
    int64_t queued = 0;
    RunOnInterOpPool(g, fetch.name(), 44, 4, &values, &queued);
    // 40 runs after the first four: one closure each for the step's root (a custom pool), and
    // for the MatMuls one more (two ready at once: one continues on the thread that made them
    // ready). Cheap: a Neg timed above 10 us in two sampled runs in a row (a loaded machine)
    // is queued until it is timed again.
    if (cheap) {
      EXPECT_EQ(values, std::vector<float>(44, 41.0f));
      EXPECT_TRUE(queued < 40 + 20);
    } else {
      EXPECT_EQ(queued, 80);
    }
  }
}

namespace {
// Forwards its input; its fourth run (the executor's last timed warm-up run) sleeps 1 ms, as a
// preempted node would take.
class SlowOnceKernel : public OpKernel {
 public:
  explicit SlowOnceKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    if (++runs_ == 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ctx->set_output(0, ctx->input(0));
  }

 private:
  int runs_ = 0;
};
EMBER_REGISTER_OP(FloatToFloatDef("TestSlowOnce"));
EMBER_REGISTER_KERNEL("TestSlowOnce", "CPU",
                      [](OpKernelConstruction* c) { return std::make_unique<SlowOnceKernel>(c); });
}  // namespace

TEST(Executor, OneSlowTimingDoesNotSendACheapNodeToThePool) {
  // The branches of CheapBranchesRunOnTheirThread..., one of them a node whose fourth run (the
  // last timed warm-up run) took 1 ms. The timing before it was cheap, so the node still runs
  // on its thread: timed on its last run alone, it was queued in each of the 28 runs until it
  // was timed again (40 + 28 closures).
  Scope root = Scope::NewRootScope();
  Output x = Neg(root, Const(root, 1.0f));
  Output sum = Neg(root, x);
  for (int i = 0; i < 39; ++i) sum = Add(root, sum, Neg(root, x));
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  g.node.push_back(MakeNode("slow_once", "TestSlowOnce", {x.name()}));
  g.node.push_back(
      MakeNode("with_slow", "Add", {sum.name(), "slow_once"}, {{"T", TypeAttr(DT_FLOAT)}}));
  std::vector<float> values;
  int64_t queued = 0;
  RunOnInterOpPool(g, "with_slow:0", 44, 4, &values, &queued);
  EXPECT_EQ(values, std::vector<float>(44, 39.0f));  // 40 Negs of -1, plus -1
  EXPECT_TRUE(queued < 40 + 20);
}

TEST(Executor, ConstRootsRunOnTheCallerNotThePool) {
  // A chain of 200 Adds, each with its own Const operand: 201 Const roots. On a pool the
  // caller runs them itself; only the one node they make ready is queued (each Const was a
  // closure on the pool, and perhaps a worker's wake-up, before).
  Scope root = Scope::NewRootScope();
  Output x = Const(root, 0.0f);
  for (int i = 0; i < 200; ++i) x = Add(root, x, Const(root, 0.5f));
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  std::vector<float> values;
  int64_t queued = 0;
  RunOnInterOpPool(g, x.name(), 3, 0, &values, &queued);
  EXPECT_EQ(values, std::vector<float>(3, 100.0f));
  EXPECT_EQ(queued, 3);
}

namespace {
// Forwards its input after sleeping 3 ms: a node whose time a trace must show.
constexpr int64_t kSleepMicros = 3000;
class SleepKernel : public OpKernel {
 public:
  explicit SleepKernel(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    std::this_thread::sleep_for(std::chrono::microseconds(kSleepMicros));
    ctx->set_output(0, ctx->input(0));
  }
};
EMBER_REGISTER_OP(FloatToFloatDef("TestSleep"));
EMBER_REGISTER_KERNEL("TestSleep", "CPU",
                      [](OpKernelConstruction* c) { return std::make_unique<SleepKernel>(c); });

int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
// The nodes of a step's stats, across devices, by name.
std::map<std::string, NodeExecStats> TracedNodes(const RunMetadata& md) {
  std::map<std::string, NodeExecStats> nodes;
  for (const DeviceStepStats& dev : md.step_stats.dev_stats) {
    EXPECT_FALSE(dev.device.empty());
    for (size_t i = 0; i < dev.node_stats.size(); ++i) {
      const NodeExecStats& ns = dev.node_stats[i];
      if (i > 0) EXPECT_TRUE(dev.node_stats[i - 1].all_start_nanos <= ns.all_start_nanos);
      EXPECT_TRUE(nodes.emplace(ns.node_name, ns).second);  // once per step
    }
  }
  return nodes;
}
// x (fed) -> slow (3 ms) -> after (fetched); c -> pruned, which nothing fetches.
GraphDef TraceGraph() {
  GraphDef g;
  g.node = {MakeNode("x", "Placeholder", {}, {{"dtype", TypeAttr(DT_FLOAT)}}),
            MakeNode("slow", "TestSleep", {"x"}),
            MakeNode("after", "Neg", {"slow"}, {{"T", TypeAttr(DT_FLOAT)}}),
            FloatConst("c", {1}),
            MakeNode("pruned", "Neg", {"c"}, {{"T", TypeAttr(DT_FLOAT)}}),
            MakeNode("bad", "Placeholder", {}, {{"dtype", TypeAttr(DT_FLOAT)}}),
            MakeNode("after_bad", "Neg", {"bad"}, {{"T", TypeAttr(DT_FLOAT)}})};
  return g;
}
}  // namespace

TEST(Session, TraceLevelTimesEachNodeTheStepRuns) {
  for (int threads : {-1, 2}) {
    SessionOptions opts;
    opts.inter_op_parallelism_threads = threads;
    auto session = NewSession(opts);
    ASSERT_OK(session->Create(TraceGraph()));
    RunOptions traced;
    traced.trace_level = RunOptions::FULL_TRACE;
    RunMetadata md;
    std::vector<Tensor> out;
    const int64_t before = WallMicros();
    ASSERT_OK(session->Run(traced, {{"x", Tensor::From<float>(TensorShape({1}), {2})}}, {"after:0"},
                           {}, &out, &md));
    const int64_t after = WallMicros();
    EXPECT_EQ(out[0].data<float>()[0], -2.0f);
    std::map<std::string, NodeExecStats> nodes = TracedNodes(md);
    EXPECT_EQ(nodes.size(), 2u);  // not the fed x, nor the pruned branch
    EXPECT_EQ(nodes.count("x"), 0u);
    EXPECT_EQ(nodes.count("pruned"), 0u);
    ASSERT_TRUE(nodes.count("slow") == 1 && nodes.count("after") == 1);
    const NodeExecStats& slow = nodes["slow"];
    const NodeExecStats& neg = nodes["after"];
    EXPECT_EQ(slow.op, std::string("TestSleep"));
    EXPECT_EQ(neg.op, std::string("Neg"));
    EXPECT_TRUE(slow.all_end_rel_micros >= kSleepMicros);
    EXPECT_EQ(slow.all_end_rel_micros, slow.all_end_rel_nanos / 1000);
    EXPECT_EQ(slow.all_start_micros, slow.all_start_nanos / 1000);
    EXPECT_TRUE(slow.all_start_micros >= before);
    EXPECT_TRUE(slow.all_start_micros + slow.all_end_rel_micros <= after);
    EXPECT_TRUE(neg.all_start_nanos >= slow.all_start_nanos + slow.all_end_rel_nanos);

    // The same metadata, untraced: its stats are cleared.
    ASSERT_OK(session->Run(RunOptions(), {{"x", Tensor::From<float>(TensorShape({1}), {2})}},
                           {"after:0"}, {}, &out, &md));
    EXPECT_TRUE(md.step_stats.dev_stats.empty());
    // Traced without metadata: it just runs.
    ASSERT_OK(session->Run(traced, {{"x", Tensor::From<float>(TensorShape({1}), {2})}}, {"after:0"},
                           {}, &out, nullptr));

    // A failing step lists the node that failed (an unfed placeholder), not its consumer.
    Status s = session->Run(traced, {}, {"after_bad:0"}, {}, &out, &md);
    EXPECT_FALSE(s.ok());
    nodes = TracedNodes(md);
    EXPECT_EQ(nodes.count("bad"), 1u);
    EXPECT_EQ(nodes.count("after_bad"), 0u);
  }
}

TEST(Session, RunCallableTracesWithItsRunOptions) {
  auto session = NewSession(SessionOptions());
  ASSERT_OK(session->Create(TraceGraph()));
  CallableOptions copts;
  copts.feed = {"x"};
  copts.fetch = {"after:0"};
  copts.run_options.trace_level = RunOptions::SOFTWARE_TRACE;
  Session::CallableHandle traced;
  ASSERT_OK(session->MakeCallable(copts, &traced));
  copts.run_options.trace_level = RunOptions::NO_TRACE;
  Session::CallableHandle untraced;
  ASSERT_OK(session->MakeCallable(copts, &untraced));
  const std::vector<Tensor> feed = {Tensor::From<float>(TensorShape({1}), {2})};
  RunMetadata md;
  std::vector<Tensor> out;
  ASSERT_OK(session->RunCallable(traced, feed, &out, &md));
  std::map<std::string, NodeExecStats> nodes = TracedNodes(md);
  EXPECT_EQ(nodes.size(), 2u);
  EXPECT_TRUE(nodes["slow"].all_end_rel_micros >= kSleepMicros);
  ThreadPool pool("test_inter_op", 2);
  ThreadPoolOptions pools;
  pools.inter_op_threadpool = &pool;
  md = RunMetadata();
  ASSERT_OK(session->RunCallable(traced, feed, &out, &md, pools));
  EXPECT_EQ(TracedNodes(md).size(), 2u);
  ASSERT_OK(session->RunCallable(untraced, feed, &out, &md));
  EXPECT_TRUE(md.step_stats.dev_stats.empty());
}

namespace {
// x [2,3] (fed) -> n Identity nodes in a chain (fetched), unoptimized, inline: heap
// allocations of one Run after a first one.
int64_t AllocationsOfARun(int n) {
  GraphDef g;
  g.node.push_back(MakeNode("x", "Placeholder", {}, {{"dtype", TypeAttr(DT_FLOAT)}}));
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string name = "id" + std::to_string(i);
    g.node.push_back(MakeNode(name, "Identity", {prev}, {{"T", TypeAttr(DT_FLOAT)}}));
    prev = name;
  }
  SessionOptions opts;
  opts.inter_op_parallelism_threads = -1;
  opts.intra_op_parallelism_threads = 1;
  opts.optimize_graph = false;
  auto session = NewSession(opts);
  EXPECT_OK(session->Create(g));
  const Tensor x = Tensor::From<float>(TensorShape({2, 3}), {1, 2, 3, 4, 5, 6});
  std::vector<Tensor> out;
  EXPECT_OK(session->Run({{"x", x}}, {prev}, {}, &out));
  out.clear();
  allocations.store(0);
  counting.store(true);
  const Status s = session->Run({{"x", x}}, {prev}, {}, &out);
  counting.store(false);
  EXPECT_OK(s);
  return allocations.load();
}
}  // namespace

// The executor adds no heap allocation per node: a node's context reuses the vectors of the
// one before (executor.cc, ContextStorage). What is left per node is the kernel's own: Identity
// copies its input's [2,3] shape (one vector). Before, the context's input, output-type and
// output vectors cost three more per node.
TEST(Executor, NoHeapAllocationPerNodeBeyondTheKernels) {
  const int64_t short_run = AllocationsOfARun(10), long_run = AllocationsOfARun(50);
  const double per_node = static_cast<double>(long_run - short_run) / 40.0;
  std::fprintf(stderr, "heap allocations: %lld (10 nodes), %lld (50 nodes): %.2f per node\n",
               static_cast<long long>(short_run), static_cast<long long>(long_run), per_node);
  EXPECT_TRUE(short_run > 0);  // the count works: a Run allocates its step
  EXPECT_TRUE(per_node <= 1.0);
}

EMBER_TEST_MAIN
