// tensorflow/cc/client/client_session_test.cc, against ember's installed C++ API.
#include "ember/cc/client_session.h"

#include <thread>

#include "ember/cc/ops.h"
#include "ember/core/thread_pool.h"
#include "ember/testing/ember_test.h"

using namespace ember;
using namespace ember::ops;

namespace {
PartialShape Shape(std::vector<int64_t> dims) {
  PartialShape s;
  s.dims = std::move(dims);
  return s;
}
template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}
}  // namespace

TEST(ClientSession, Basic) {
  Scope root = Scope::NewRootScope();
  auto c = Const(root, {{1, 1}});
  ClientSession session(root);
  std::vector<Tensor> outputs;
  ASSERT_OK(session.Run({c}, &outputs));
  EXPECT_TRUE(outputs[0].dtype() == DT_INT32);
  EXPECT_TRUE(outputs[0].shape() == TensorShape({1, 2}));
  EXPECT_TRUE(Values<int32_t>(outputs[0]) == std::vector<int32_t>({1, 1}));
}

TEST(ClientSession, Feed) {
  Scope root = Scope::NewRootScope();
  auto a = Placeholder(root, DT_INT32);
  auto b = Placeholder(root, DT_INT32);
  auto c = Add(root, a, b);
  ClientSession session(root);
  std::vector<Tensor> outputs;
  ASSERT_OK(session.Run({{a, 1}, {b, 41}}, {c}, &outputs));
  EXPECT_TRUE(outputs[0].shape() == TensorShape());
  EXPECT_EQ(outputs[0].data<int32_t>()[0], 42);
}

TEST(ClientSession, Extend) {
  Scope root = Scope::NewRootScope();
  auto a = Placeholder(root, DT_INT32, Shape({2}));
  auto c = Add(root, a, {2, 2});
  ClientSession session(root);
  std::vector<Tensor> outputs;
  ASSERT_OK(session.Run({{a, {1, 1}}}, {c}, &outputs));
  EXPECT_TRUE(Values<int32_t>(outputs[0]) == std::vector<int32_t>({3, 3}));
  auto d = Add(root, c, {39, 39});  // added after the session exists: extended lazily
  outputs.clear();
  ASSERT_OK(session.Run({{a, {-10, 1}}}, {d}, &outputs));
  EXPECT_TRUE(Values<int32_t>(outputs[0]) == std::vector<int32_t>({31, 42}));
}

TEST(ClientSession, MultiThreaded) {
  Scope root = Scope::NewRootScope();
  auto a = Add(root, {1, 2}, {3, 4});
  auto b = Mul(root, {1, 2}, {3, 4});
  ClientSession session(root);
  Status s1, s2;
  std::vector<Tensor> out1, out2;
  std::thread t1([&] { s1 = session.Run({a}, &out1); });
  std::thread t2([&] { s2 = session.Run({b}, &out2); });
  t1.join();
  t2.join();
  ASSERT_OK(s1);
  ASSERT_OK(s2);
  EXPECT_TRUE(Values<int32_t>(out1[0]) == std::vector<int32_t>({4, 6}));
  EXPECT_TRUE(Values<int32_t>(out2[0]) == std::vector<int32_t>({3, 8}));
  auto c = Sub(root, b, a);
  std::vector<Tensor> out3;
  ASSERT_OK(session.Run({c}, &out3));
  EXPECT_TRUE(Values<int32_t>(out3[0]) == std::vector<int32_t>({-1, 2}));
}

TEST(ClientSession, CallableWithDefaultThreadPool) {
  Scope root = Scope::NewRootScope();
  auto a = Placeholder(root, DT_INT32);
  auto b = Placeholder(root, DT_INT32);
  auto c = Add(root, a, b);
  ClientSession session(root);
  CallableOptions options;
  options.feed = {a.name(), b.name()};
  options.fetch = {c.name()};
  ClientSession::CallableHandle handle;
  ASSERT_OK(session.MakeCallable(options, &handle));
  std::vector<Tensor> outputs;
  ASSERT_OK(session.RunCallable(handle, {Tensor::Scalar<int32_t>(1), Tensor::Scalar<int32_t>(41)},
                                &outputs, nullptr));
  EXPECT_EQ(outputs[0].data<int32_t>()[0], 42);
  EXPECT_OK(session.ReleaseCallable(handle));
}

TEST(ClientSession, CallableWithCustomThreadPool) {
  Scope root = Scope::NewRootScope();
  auto a = Placeholder(root, DT_FLOAT);
  auto b = Placeholder(root, DT_FLOAT);
  auto c = BatchMatMul(root, a, b);
  ClientSession session(root);
  CallableOptions options;
  options.feed = {a.name(), b.name()};
  options.fetch = {c.name()};
  ClientSession::CallableHandle handle;
  ASSERT_OK(session.MakeCallable(options, &handle));
  ThreadPool inter("inter", 2), intra("intra", 2);
  ThreadPoolOptions pools;
  pools.inter_op_threadpool = &inter;
  pools.intra_op_threadpool = &intra;
  std::vector<Tensor> outputs;
  ASSERT_OK(session.RunCallable(
      handle, {Tensor::From<float>({1, 1}, {2}), Tensor::From<float>({1, 1}, {10})}, &outputs,
      nullptr, pools));
  EXPECT_TRUE(outputs[0].shape() == TensorShape({1, 1}));
  EXPECT_EQ(outputs[0].data<float>()[0], 20.0f);
  EXPECT_TRUE(inter.NumScheduled() > 0);
  EXPECT_OK(session.ReleaseCallable(handle));
}

EMBER_TEST_MAIN
