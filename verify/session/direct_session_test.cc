// tensorflow/core/common_runtime/direct_session_test.cc (the behaviours in
// shared/spec/ENGINE.md §1.6 that apply to ember), against the installed package.
#include <atomic>
#include <chrono>
#include <thread>

#include "ember/cc/ops.h"
#include "ember/session.h"
#include "ember/testing/ember_test.h"
#include "test_ops.h"

using namespace ember;
using namespace ember::ops;

namespace {

const bool kTestOpsRegistered = ember_verify::RegisterTestOps();

// MinusAX: A (2x2, cpu:0), x = [[1],[1]] (cpu:1), y = A*x, y_neg = -y, z = Identity(y_neg).
struct MinusAX {
  GraphDef def;
  std::string a, x, y, y_neg, z;
  explicit MinusAX(std::vector<float> a_values) {
    Scope root = Scope::NewRootScope();
    auto A =
        Const(root.WithOpName("A").WithDevice("/cpu:0"), Tensor::From<float>({2, 2}, a_values));
    auto X = Const(root.WithOpName("x").WithDevice("/cpu:1"), {{1.0f}, {1.0f}});
    auto Y = MatMul(root.WithOpName("y").WithDevice("/cpu:0"), A, X);
    auto Yneg = Neg(root.WithOpName("y_neg").WithDevice("/cpu:1"), Y);
    auto Z = Identity(root.WithOpName("z").WithDevice("/cpu:1"), Yneg);
    root.ToGraphDef(&def);
    a = A.node_name();
    x = X.node_name();
    y = Y.name();
    y_neg = Yneg.node_name();
    z = Z.name();
  }
};

SessionOptions TwoCpus() {
  SessionOptions o;
  o.num_cpu_devices = 2;
  return o;
}

std::unique_ptr<Session> Created(const GraphDef& g, SessionOptions o = TwoCpus()) {
  std::unique_ptr<Session> s = NewSession(o);
  Status st = s->Create(g);
  if (!st.ok()) std::fprintf(stderr, "Create failed: %s\n", st.ToString().c_str());
  return s;
}

bool Has(const Status& s, Code code, const std::string& fragment) {
  bool ok = s.code() == code && s.message().find(fragment) != std::string::npos;
  if (!ok)
    std::fprintf(stderr, "  got %s, want %s containing \"%s\"\n", s.ToString().c_str(),
                 CodeName(code), fragment.c_str());
  return ok;
}

// Two Const -> Identity chains, for the feed tests.
struct TwoChains {
  GraphDef def;
  TwoChains() {
    Scope root = Scope::NewRootScope();
    auto c1 = Const(root.WithOpName("first_const"), 1.0f);
    Identity(root.WithOpName("first_identity"), c1);
    auto c2 = Const(root.WithOpName("second_const"), 2.0f);
    Identity(root.WithOpName("second_identity"), c2);
    root.ToGraphDef(&def);
  }
};

GraphDef WithTestOp(const std::string& name, const std::string& op) {
  GraphDef g;
  NodeDef n;
  n.name = name;
  n.op = op;
  g.node.push_back(n);
  return g;
}

float F(const Tensor& t, int i = 0) { return t.data<float>()[i]; }

}  // namespace

TEST(DirectSession, RunSimpleNetwork) {
  MinusAX m({3, 2, -1, 0});
  auto session = Created(m.def);
  std::vector<Tensor> outputs;
  ASSERT_OK(session->Run({}, {m.y}, {m.y_neg}, &outputs));
  ASSERT_TRUE(outputs.size() == 1);
  EXPECT_EQ(F(outputs[0]), 5.0f);
}

TEST(DirectSession, OptimizeForStaticGraph) {
  MinusAX m({3, 2, -1, 0});
  SessionOptions o = TwoCpus();
  o.optimize_for_static_graph = true;
  auto session = Created(m.def, o);
  std::vector<Tensor> outputs;
  ASSERT_OK(session->Run({}, {m.y}, {}, &outputs));
  Status s = session->Extend(WithTestOp("n", "NoOp"));
  EXPECT_TRUE(s.code() == Code::kFailedPrecondition);
}

TEST(DirectSession, Callable) {
  MinusAX m({3, 2, -1, 0});
  auto session = Created(m.def);
  for (int i = 0; i < 2; ++i) {
    CallableOptions o;
    o.fetch = {m.y};
    o.target = {m.y_neg};
    Session::CallableHandle h;
    ASSERT_OK(session->MakeCallable(o, &h));
    std::vector<Tensor> outputs;
    ASSERT_OK(session->RunCallable(h, {}, &outputs, nullptr));
    EXPECT_EQ(F(outputs[0]), 5.0f);
    EXPECT_TRUE(Has(session->RunCallable(h, {}, nullptr, nullptr), Code::kInvalidArgument,
                    "`fetch_tensors` must be provided"));
    ASSERT_OK(session->ReleaseCallable(h));
    EXPECT_TRUE(Has(session->RunCallable(h, {}, &outputs, nullptr), Code::kInvalidArgument,
                    "Attempted to run callable after handle was released"));
    EXPECT_TRUE(Has(session->RunCallable(h + 1, {}, &outputs, nullptr), Code::kInvalidArgument,
                    "No such callable handle"));
  }
}

TEST(DirectSession, FinalizeWithCallablesAndRun) {
  MinusAX m({3, 2, -1, 0});
  auto session = Created(m.def);
  CallableOptions o;
  o.fetch = {m.y};
  Session::CallableHandle h;
  ASSERT_OK(session->MakeCallable(o, &h));
  std::vector<Tensor> outputs;
  ASSERT_OK(session->Run({}, {m.y}, {}, &outputs));
  ASSERT_OK(session->Finalize());
  ASSERT_OK(session->RunCallable(h, {}, &outputs, nullptr));
  EXPECT_EQ(F(outputs[0]), 5.0f);
  ASSERT_OK(session->Run({}, {m.y}, {}, &outputs));  // a signature seen before
  EXPECT_TRUE(Has(session->Run({}, {m.z}, {}, &outputs), Code::kFailedPrecondition,
                  "Session has been finalized."));
  EXPECT_TRUE(
      Has(session->MakeCallable(o, &h), Code::kFailedPrecondition, "Session has been finalized."));
}

TEST(DirectSession, TestFeed) {
  MinusAX m({1, 2, 3, 4});
  auto session = Created(m.def);
  std::vector<Tensor> outputs;
  ASSERT_OK(session->Run({{m.x, Tensor::From<float>({2, 1}, {5, 6})}}, {m.y}, {}, &outputs));
  EXPECT_EQ(F(outputs[0], 0), 17.0f);
  EXPECT_EQ(F(outputs[0], 1), 39.0f);
}

TEST(DirectSession, TestFeed_Callable) {
  MinusAX m({1, 2, 3, 4});
  auto session = Created(m.def);
  CallableOptions o;
  o.feed = {m.x};
  o.fetch = {m.y};
  Session::CallableHandle h;
  ASSERT_OK(session->MakeCallable(o, &h));
  std::vector<Tensor> outputs;
  ASSERT_OK(session->RunCallable(h, {Tensor::From<float>({2, 1}, {5, 6})}, &outputs, nullptr));
  EXPECT_EQ(F(outputs[0], 1), 39.0f);
}

TEST(DirectSession, TestConcurrency) {
  MinusAX m({1, 2, 3, 4});
  auto session = Created(m.def);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        std::vector<Tensor> outputs;
        Status s = session->Run({}, {m.y}, {}, &outputs);
        if (!s.ok() || F(outputs[0]) != 3.0f) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(DirectSession, TestConcurrency_Callable) {
  MinusAX m({1, 2, 3, 4});
  auto session = Created(m.def);
  CallableOptions o;
  o.fetch = {m.y};
  Session::CallableHandle h;
  ASSERT_OK(session->MakeCallable(o, &h));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        std::vector<Tensor> outputs;
        Status s = session->RunCallable(h, {}, &outputs, nullptr);
        if (!s.ok() || F(outputs[0]) != 3.0f) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(DirectSession, TestPerSessionThreads) {
  MinusAX m({1, 2, 3, 4});
  SessionOptions o = TwoCpus();
  o.session_inter_op_thread_pool = {2};
  auto session = Created(m.def, o);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) {
        std::vector<Tensor> outputs;
        if (!session->Run({}, {m.y}, {}, &outputs).ok() || F(outputs[0]) != 3.0f) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(DirectSession, TwoCreateCallsFails) {
  MinusAX m({1, 2, 3, 4});
  auto session = Created(m.def);
  EXPECT_TRUE(session->Create(m.def).code() == Code::kAlreadyExists);
}

TEST(DirectSession, ForgetToCreate) {
  MinusAX m({1, 2, 3, 4});
  auto session = NewSession(TwoCpus());
  std::vector<Tensor> outputs;
  EXPECT_TRUE(Has(session->Run({}, {m.y}, {}, &outputs), Code::kInvalidArgument,
                  "Session was not created with a graph before Run()!"));
  ASSERT_OK(session->Create(GraphDef()));  // empty Create: a no-op
  EXPECT_TRUE(session->Run({}, {m.y}, {}, &outputs).code() == Code::kInvalidArgument);
}

TEST(DirectSession, InvalidDevice) {
  Scope root = Scope::NewRootScope();
  auto a = Const(root.WithOpName("a").WithDevice("/cpu:0"), 1.0f);
  Neg(root.WithOpName("b").WithDevice("/cpu:2"), a);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = NewSession(TwoCpus());
  EXPECT_TRUE(
      Has(session->Create(g), Code::kInvalidArgument, "Cannot assign a device for operation b"));
}

TEST(DirectSession, PlacePrunedGraph) {
  Scope root = Scope::NewRootScope();
  auto x = Const(root.WithOpName("x"), 1.0f);
  Neg(root.WithOpName("on_gpu").WithDevice("/device:GPU:0"), x);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  EXPECT_TRUE(NewSession(SessionOptions())->Create(g).code() == Code::kInvalidArgument);
  SessionOptions o;
  o.place_pruned_graph = true;
  auto session = NewSession(o);
  ASSERT_OK(session->Create(g));
  std::vector<Tensor> outputs;
  ASSERT_OK(session->Run({}, {"x:0"}, {}, &outputs));
  EXPECT_EQ(F(outputs[0]), 1.0f);
  EXPECT_TRUE(Has(session->Run({}, {"on_gpu:0"}, {}, &outputs), Code::kInvalidArgument, "on_gpu"));
}

TEST(DirectSession, KeepsStateAcrossRunsOfSession) {
  Scope root = Scope::NewRootScope();
  PartialShape scalar;
  auto var = Variable(root.WithOpName("var"), scalar, DT_FLOAT);
  auto twenty = Const(root.WithOpName("twenty"), 20.0f);
  auto init = Assign(root.WithOpName("init"), var, twenty);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = Created(g);
  std::vector<Tensor> outputs;
  ASSERT_OK(session->Run({}, {}, {"init"}, nullptr));
  ASSERT_OK(session->Run({}, {var.name()}, {}, &outputs));  // another signature
  EXPECT_EQ(F(outputs[0]), 20.0f);
}

TEST(DirectSession, MultipleFeedTest) {
  for (int pool : {0, -1}) {  // SomeSyncRun: also inline on the calling thread
    TwoChains t;
    auto session = Created(t.def);
    RunOptions ro;
    ro.inter_op_thread_pool = pool;
    std::vector<Tensor> out;
    ASSERT_OK(session->Run(ro, {}, {"first_identity:0", "second_identity:0"}, {}, &out, nullptr));
    EXPECT_EQ(F(out[0]), 1.0f);
    EXPECT_EQ(F(out[1]), 2.0f);
    ASSERT_OK(session->Run(ro, {}, {"second_identity:0", "first_identity:0"}, {}, &out, nullptr));
    EXPECT_EQ(F(out[0]), 2.0f);
    EXPECT_EQ(F(out[1]), 1.0f);
    ASSERT_OK(session->Run(
        ro,
        {{"first_const", Tensor::Scalar<float>(11)}, {"second_const", Tensor::Scalar<float>(22)}},
        {"first_identity:0", "second_identity:0"}, {}, &out, nullptr));
    EXPECT_EQ(F(out[0]), 11.0f);
    EXPECT_EQ(F(out[1]), 22.0f);
    ASSERT_OK(session->Run(
        ro,
        {{"second_const", Tensor::Scalar<float>(22)}, {"first_const", Tensor::Scalar<float>(11)}},
        {"first_identity:0", "second_identity:0"}, {}, &out, nullptr));
    EXPECT_EQ(F(out[0]), 11.0f);
    EXPECT_EQ(F(out[1]), 22.0f);
    EXPECT_TRUE(Has(session->Run(ro,
                                 {{"first_const", Tensor::Scalar<float>(11)},
                                  {"first_const", Tensor::Scalar<float>(22)}},
                                 {"first_identity:0"}, {}, &out, nullptr),
                    Code::kInvalidArgument, "fed more than once"));
  }
}

TEST(DirectSession, MultipleFeedTest_Callable) {
  TwoChains t;
  auto session = Created(t.def);
  CallableOptions o;
  o.feed = {"second_const", "first_const"};
  o.fetch = {"first_identity:0", "second_identity:0"};
  Session::CallableHandle h;
  ASSERT_OK(session->MakeCallable(o, &h));
  std::vector<Tensor> out;
  ASSERT_OK(session->RunCallable(h, {Tensor::Scalar<float>(22), Tensor::Scalar<float>(11)}, &out,
                                 nullptr));
  EXPECT_EQ(F(out[0]), 11.0f);
  EXPECT_EQ(F(out[1]), 22.0f);
  o.feed = {"first_const", "first_const"};
  EXPECT_TRUE(Has(session->MakeCallable(o, &h), Code::kInvalidArgument, "fed more than once"));
}

TEST(DirectSession, FetchMultipleTimes) {
  Scope root = Scope::NewRootScope();
  auto seven = Const(root.WithOpName("seven"), 7);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = Created(g);
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {"seven:0", "seven:0"}, {}, &out));
  ASSERT_TRUE(out.size() == 2);
  EXPECT_EQ(out[0].data<int32_t>()[0], 7);
  EXPECT_EQ(out[1].data<int32_t>()[0], 7);
}

TEST(DirectSession, FeedingIntermediatesCutsUpstream) {
  // y is fed, so the MatMul (and A, x) never run: a Darth kernel upstream would fail.
  Scope root = Scope::NewRootScope();
  Output bad = OutputOf(root, BuildOp(root.WithOpName("darth"), "TestDarth", {}));
  auto y = Neg(root.WithOpName("y"), bad);
  auto z = Mul(root.WithOpName("z"), y, 2.0f);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = Created(g);
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{y.name(), Tensor::Scalar<float>(4)}}, {z.name()}, {}, &out));
  EXPECT_EQ(F(out[0]), 8.0f);
  EXPECT_TRUE(session->Run({}, {z.name()}, {}, &out).code() == Code::kInternal);
}

TEST(DirectSession, PruningSkipsUnusedPlaceholders) {
  Scope root = Scope::NewRootScope();
  auto p = Placeholder(root.WithOpName("p"), DT_FLOAT);
  Neg(root.WithOpName("uses_p"), p);
  auto c = Const(root.WithOpName("c"), 3.0f);
  auto d = Square(root.WithOpName("d"), c);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = Created(g);
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {d.name()}, {}, &out));
  EXPECT_EQ(F(out[0]), 9.0f);
}

TEST(DirectSession, ExecutorCacheIgnoresOrdering) {
  Scope root = Scope::NewRootScope();
  auto a = Placeholder(root.WithOpName("a"), DT_FLOAT);
  auto b = Placeholder(root.WithOpName("b"), DT_FLOAT);
  Output ia = OutputOf(root, BuildOp(root.WithOpName("ia"), "TestCountingIdentity", {a}));
  Output ib = OutputOf(root, BuildOp(root.WithOpName("ib"), "TestCountingIdentity", {b}));
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = Created(g);
  std::vector<Tensor> out;
  int before = ember_verify::CountingConstructions().load();
  ASSERT_OK(session->Run({{"a", Tensor::Scalar<float>(1)}, {"b", Tensor::Scalar<float>(2)}},
                         {ia.name(), ib.name()}, {}, &out));
  int built = ember_verify::CountingConstructions().load() - before;
  EXPECT_EQ(built, 2);
  ASSERT_OK(session->Run({{"b", Tensor::Scalar<float>(5)}, {"a", Tensor::Scalar<float>(4)}},
                         {ib.name(), ia.name()}, {}, &out));
  EXPECT_EQ(F(out[0]), 5.0f);
  EXPECT_EQ(F(out[1]), 4.0f);
  EXPECT_EQ(ember_verify::CountingConstructions().load() - before, 2);  // reused
}

TEST(DirectSession, PartialRunTest) {
  Scope root = Scope::NewRootScope();
  auto c1 = Const(root.WithOpName("c1"), 1.0f);
  auto c2 = Const(root.WithOpName("c2"), 2.0f);
  auto i1 = Identity(root.WithOpName("i1"), c1);
  auto i2 = Identity(root.WithOpName("i2"), c2);
  auto third = Add(root.WithOpName("third"), i1, i2);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = Created(g);
  std::string handle;
  ASSERT_OK(session->PRunSetup({"c1:0", "c2:0"}, {"i1:0", "i2:0", "third:0"}, {}, &handle));
  std::vector<Tensor> out;
  ASSERT_OK(session->PRun(handle, {{"c1:0", Tensor::Scalar<float>(11)}}, {"i1:0"}, &out));
  EXPECT_EQ(F(out[0]), 11.0f);
  ASSERT_OK(
      session->PRun(handle, {{"c2:0", Tensor::Scalar<float>(22)}}, {"i2:0", "third:0"}, &out));
  EXPECT_EQ(F(out[0]), 22.0f);
  EXPECT_EQ(F(out[1]), 33.0f);
  EXPECT_TRUE(Has(session->PRun(handle, {}, {"i1:0"}, &out), Code::kInvalidArgument,
                  "Must run 'setup' before performing partial runs!"));
}

TEST(DirectSession, PartialRunMissingFeed) {
  Scope root = Scope::NewRootScope();
  auto c1 = Const(root.WithOpName("c1"), 1.0f);
  auto c2 = Const(root.WithOpName("c2"), 2.0f);
  Add(root.WithOpName("third"), Identity(root.WithOpName("i1"), c1),
      Identity(root.WithOpName("i2"), c2));
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = Created(g);
  std::string handle;
  ASSERT_OK(session->PRunSetup({"c1:0", "c2:0"}, {"third:0"}, {}, &handle));
  std::vector<Tensor> out;
  EXPECT_TRUE(Has(session->PRun(handle, {{"c1:0", Tensor::Scalar<float>(11)}}, {"third:0"}, &out),
                  Code::kInvalidArgument,
                  "can't be computed from the feeds that have been fed so far"));
  EXPECT_TRUE(Has(session->PRun(handle, {{"c1:0", Tensor::Scalar<float>(1)}}, {}, &out),
                  Code::kInvalidArgument, "has already been fed"));
  EXPECT_TRUE(Has(session->PRun(handle, {{"zz:0", Tensor::Scalar<float>(1)}}, {}, &out),
                  Code::kInvalidArgument, "was not specified in partial_run_setup"));
}

TEST(DirectSession, DarthKernel) {
  auto session = Created(WithTestOp("darth", "TestDarth"));
  std::vector<Tensor> out;
  EXPECT_TRUE(Has(session->Run({}, {"darth:0"}, {}, &out), Code::kInternal, "darth"));
}

TEST(DirectSession, CreateGraphFailsWhenAssigningAFedVar) {
  auto session = NewSession(SessionOptions());
  std::vector<Tensor> out;
  EXPECT_TRUE(session->Run({{"var", Tensor::Scalar<float>(1)}}, {"x:0"}, {}, &out).code() ==
              Code::kInvalidArgument);
}

TEST(DirectSession, TimeoutSession) {
  SessionOptions o;
  o.operation_timeout_in_ms = 100;
  auto session = Created(WithTestOp("block", "TestBlockUntilCancelled"), o);
  int saw = ember_verify::BlockingSawCancel().load();
  int started = ember_verify::BlockingStarted().Count();
  std::vector<Tensor> out;
  EXPECT_TRUE(session->Run({}, {"block:0"}, {}, &out).code() == Code::kDeadlineExceeded);
  // Run returns only after the step ended: a kernel that started before the deadline saw the
  // cancellation. (Under a slow emulator the deadline may pass before it starts at all;
  // CloseCancelsInFlightSteps checks a kernel that is known to be running.)
  EXPECT_EQ(ember_verify::BlockingSawCancel().load() - saw,
            ember_verify::BlockingStarted().Count() - started);
  EXPECT_OK(session->Close());
}

TEST(DirectSession, TestTimeoutCleanShutdown) {
  for (int pool : {0, -1}) {
    auto session = Created(WithTestOp("block", "TestBlockUntilCancelled"), SessionOptions());
    RunOptions ro;
    ro.timeout_in_ms = 20;
    ro.inter_op_thread_pool = pool;
    std::vector<Tensor> out;
    EXPECT_TRUE(session->Run(ro, {}, {"block:0"}, {}, &out, nullptr).code() ==
                Code::kDeadlineExceeded);
    EXPECT_OK(session->Close());
  }
}

TEST(DirectSession, SessionSyncRun) {
  auto session = Created(WithTestOp("tid", "TestThreadId"));
  RunOptions ro;
  ro.inter_op_thread_pool = -1;
  std::vector<Tensor> out;
  ASSERT_OK(session->Run(ro, {}, {"tid:0"}, {}, &out, nullptr));
  std::lock_guard<std::mutex> lock(ember_verify::ThreadMu());
  EXPECT_TRUE(ember_verify::LastThread() == std::this_thread::get_id());
}

TEST(DirectSession, SyncSession) {
  SessionOptions o;
  o.inter_op_parallelism_threads = -1;
  auto session = Created(WithTestOp("tid", "TestThreadId"), o);
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {"tid:0"}, {}, &out));
  std::lock_guard<std::mutex> lock(ember_verify::ThreadMu());
  EXPECT_TRUE(ember_verify::LastThread() == std::this_thread::get_id());
}

TEST(DirectSession, TestSessionInterOpThreads) {
  MinusAX m({1, 2, 3, 4});
  SessionOptions o = TwoCpus();
  o.session_inter_op_thread_pool = {1, 2};
  auto session = Created(m.def, o);
  for (int pool : {-1, 0, 1}) {
    RunOptions ro;
    ro.inter_op_thread_pool = pool;
    std::vector<Tensor> out;
    ASSERT_OK(session->Run(ro, {}, {m.y}, {}, &out, nullptr));
    EXPECT_EQ(F(out[0]), 3.0f);
  }
  for (int pool : {-2, 2}) {
    RunOptions ro;
    ro.inter_op_thread_pool = pool;
    std::vector<Tensor> out;
    EXPECT_TRUE(Has(session->Run(ro, {}, {m.y}, {}, &out, nullptr), Code::kInvalidArgument,
                    "Invalid inter_op_thread_pool: " + std::to_string(pool)));
  }
}

TEST(DirectSession, TestSessionInterOpThreadsInvalidOptions) {
  MinusAX m({1, 2, 3, 4});
  auto session = Created(m.def);
  RunOptions ro;
  ro.inter_op_thread_pool = 1;
  std::vector<Tensor> out;
  EXPECT_TRUE(Has(session->Run(ro, {}, {m.y}, {}, &out, nullptr), Code::kInvalidArgument,
                  "Invalid inter_op_thread_pool: 1"));
}

TEST(DirectSession, TestDirectSessionRunClose) {
  MinusAX m({1, 2, 3, 4});
  auto session = Created(m.def);
  CallableOptions co;
  co.fetch = {m.y};
  Session::CallableHandle h;
  ASSERT_OK(session->MakeCallable(co, &h));
  std::string prun;
  ASSERT_OK(session->PRunSetup({}, {m.y}, {}, &prun));
  ASSERT_OK(session->Close());
  std::vector<Tensor> out;
  const std::string closed = "Session has been closed.";
  EXPECT_TRUE(Has(session->Run({}, {m.y}, {}, &out), Code::kCancelled, closed));
  EXPECT_TRUE(Has(session->RunCallable(h, {}, &out, nullptr), Code::kCancelled, closed));
  EXPECT_TRUE(Has(session->PRun(prun, {}, {m.y}, &out), Code::kCancelled, closed));
  EXPECT_TRUE(Has(session->Extend(WithTestOp("n", "NoOp")), Code::kCancelled, closed));
  EXPECT_TRUE(Has(session->MakeCallable(co, &h), Code::kCancelled, closed));
  EXPECT_OK(session->Close());  // a second Close is fine
}

TEST(DirectSession, CloseCancelsInFlightSteps) {
  auto session = Created(WithTestOp("block", "TestBlockUntilCancelled"), SessionOptions());
  int saw = ember_verify::BlockingSawCancel().load();
  int started = ember_verify::BlockingStarted().Count();
  Status in_flight;
  std::thread runner([&] {
    std::vector<Tensor> out;
    in_flight = session->Run({}, {"block:0"}, {}, &out);
  });
  // Close only once the step's kernel is running.
  EXPECT_TRUE(ember_verify::BlockingStarted().WaitFor(started + 1, std::chrono::seconds(300)));
  EXPECT_OK(session->Close());
  runner.join();
  EXPECT_TRUE(Has(in_flight, Code::kCancelled, "Run call was cancelled"));
  EXPECT_EQ(ember_verify::BlockingSawCancel().load(), saw + 1);
}

TEST(DirectSession, TestStatefulOutputRequiredOp) {
  // One stateful kernel is shared by every signature of the session.
  Scope root = Scope::NewRootScope();
  Output counter = OutputOf(root, BuildOp(root.WithOpName("counter"), "TestStatefulCounter", {}));
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  std::vector<Output> ids;
  for (int k = 0; k < 5; ++k)
    ids.push_back(Identity(root.WithOpName("id" + std::to_string(k)), counter));
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = Created(g);
  for (int k = 0; k < 5; ++k) {
    std::vector<Tensor> out;
    ASSERT_OK(session->Run({}, {ids[static_cast<size_t>(k)].name()}, {}, &out));
    EXPECT_EQ(F(out[0]), static_cast<float>(k + 1));
  }
}

// ---- one test per row of the error table (ENGINE.md §1.2) ----
TEST(Errors, FetchUnknownNode) {
  MinusAX m({1, 2, 3, 4});
  std::vector<Tensor> out;
  EXPECT_EQ(Created(m.def)->Run({}, {"foo:0"}, {}, &out),
            errors::NotFound("FetchOutputs node foo:0: not found"));
}

TEST(Errors, FetchIndexOutOfRange) {
  MinusAX m({1, 2, 3, 4});
  std::vector<Tensor> out;
  EXPECT_EQ(Created(m.def)->Run({}, {"y:5"}, {}, &out),
            errors::InvalidArgument("FetchOutputs y:5: output index too large, must be < 1"));
}

TEST(Errors, FetchNodeWithoutOutputs) {
  auto session = Created(WithTestOp("n", "NoOp"));
  std::vector<Tensor> out;
  EXPECT_TRUE(Has(session->Run({}, {"n"}, {}, &out), Code::kInvalidArgument,
                  "Tried to fetch data for 'n', which produces no output"));
  ASSERT_OK(session->Run({}, {}, {"n"}, &out));
}

TEST(Errors, UnknownTarget) {
  MinusAX m({1, 2, 3, 4});
  std::vector<Tensor> out;
  EXPECT_EQ(Created(m.def)->Run({}, {}, {"nope"}, &out),
            errors::NotFound("PruneForTargets: Some target nodes not found: nope"));
}

TEST(Errors, UnknownFeed) {
  MinusAX m({1, 2, 3, 4});
  std::vector<Tensor> out;
  EXPECT_EQ(Created(m.def)->Run({{"foo", Tensor::Scalar<float>(1)}}, {m.y}, {}, &out),
            errors::NotFound("FeedInputs: unable to find feed output foo:0"));
}

TEST(Errors, WrongFeedDtypeViaRun) {
  MinusAX m({1, 2, 3, 4});
  std::vector<Tensor> out;
  EXPECT_EQ(Created(m.def)->Run({{m.x, Tensor::From<int32_t>({2, 1}, {1, 1})}}, {m.y}, {}, &out),
            errors::InvalidArgument("Expects arg[0] to be float but int32 is provided"));
}

TEST(Errors, WrongFeedDtypeViaRunCallable) {
  MinusAX m({1, 2, 3, 4});
  auto session = Created(m.def);
  CallableOptions o;
  o.feed = {m.x};
  o.fetch = {m.y};
  Session::CallableHandle h;
  ASSERT_OK(session->MakeCallable(o, &h));
  std::vector<Tensor> out;
  EXPECT_EQ(session->RunCallable(h, {Tensor::From<int32_t>({2, 1}, {1, 1})}, &out, nullptr),
            errors::InvalidArgument("Type mismatch: actual int32 vs. expect float"));
}

TEST(Errors, WrongFeedShapeFailsDownstream) {
  // Not checked at the feed (the _Arg replaces the Placeholder): the consuming kernel fails.
  MinusAX m({1, 2, 3, 4});
  std::vector<Tensor> out;
  Status s = Created(m.def)->Run({{m.x, Tensor::From<float>({3, 1}, {1, 1, 1})}}, {m.y}, {}, &out);
  EXPECT_TRUE(s.code() == Code::kInvalidArgument);
  EXPECT_TRUE(s.message().find("y") != std::string::npos);
}

TEST(Errors, PlaceholderNotFed) {
  Scope root = Scope::NewRootScope();
  auto p = Placeholder(root.WithOpName("x"), DT_FLOAT, [] {
    PartialShape s;
    s.dims = {2};
    return s;
  }());
  auto q = Placeholder(root.WithOpName("s"), DT_FLOAT, PartialShape());
  Neg(root.WithOpName("np"), p);
  Neg(root.WithOpName("nq"), q);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  auto session = Created(g);
  std::vector<Tensor> out;
  Status s = session->Run({}, {"np:0"}, {}, &out);
  EXPECT_TRUE(
      Has(s, Code::kInvalidArgument,
          "You must feed a value for placeholder tensor 'x' with dtype float and shape [2]"));
  s = session->Run({}, {"nq:0"}, {}, &out);
  EXPECT_TRUE(Has(s, Code::kInvalidArgument,
                  "You must feed a value for placeholder tensor 's' with dtype float"));
  EXPECT_TRUE(s.message().find("shape") == std::string::npos);
}

TEST(Errors, FedMoreThanOnceAndBothFedAndFetched) {
  MinusAX m({1, 2, 3, 4});
  auto session = Created(m.def);
  std::vector<Tensor> out;
  Tensor x = Tensor::From<float>({2, 1}, {1, 1});
  EXPECT_EQ(session->Run({{m.x, x}, {m.x + ":0", x}}, {m.y}, {}, &out),
            errors::InvalidArgument("Endpoint \"x:0\" fed more than once."));
  EXPECT_EQ(session->Run({{m.x, x}}, {m.x + ":0"}, {}, &out),
            errors::InvalidArgument("x:0 is both fed and fetched."));
  EXPECT_EQ(session->Run({}, {}, {}, &out),
            errors::InvalidArgument("Must specify at least one target to fetch or execute."));
}

TEST(Errors, CycleInGraphDef) {
  GraphDef g;
  for (const char* name : {"a", "b"}) {
    NodeDef n;
    n.name = name;
    n.op = "Neg";
    n.input = {name[0] == 'a' ? "b" : "a"};
    n.attr["T"] = TypeAttr(DT_FLOAT);
    g.node.push_back(n);
  }
  EXPECT_TRUE(
      Has(NewSession(SessionOptions())->Create(g), Code::kInvalidArgument, "2 nodes in a cycle"));
}

TEST(Errors, EdgeDtypeMismatch) {
  Scope root = Scope::NewRootScope();
  Const(root.WithOpName("x"), 1.0f);
  GraphDef g;
  ASSERT_OK(root.ToGraphDef(&g));
  NodeDef y;
  y.name = "y";
  y.op = "Neg";
  y.input = {"x"};
  y.attr["T"] = TypeAttr(DT_INT32);
  g.node.push_back(y);
  EXPECT_EQ(NewSession(SessionOptions())->Create(g),
            errors::InvalidArgument(
                "Input 0 of node y was passed float from x:0 incompatible with expected int32."));
}

TEST(Errors, UnknownOpNamesNodeAndOp) {
  Status s = NewSession(SessionOptions())->Create(WithTestOp("mystery", "NoSuchOp"));
  EXPECT_TRUE(Has(s, Code::kNotFound, "NoSuchOp"));
  EXPECT_TRUE(s.message().find("mystery") != std::string::npos);
}

EMBER_TEST_MAIN
