// Shape ops, Transpose, ConcatV2, Cast, reductions, Const/Placeholder and variables.
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "ember_test.h"
#include "kernels/kernel_test_util.h"

using namespace ember_kernel_test;  // NOLINT
using ember::Code;

TEST(Placeholder, UnfedMessageMatchesTensorFlow) {
  Result r = Run(Node("Placeholder", "x").Type("dtype", DataType::kFloat).Shape("shape", {2}), {});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
  EXPECT_EQ(r.status.message(),
            std::string(
                "You must feed a value for placeholder tensor 'x' with dtype float and shape [2]"));
  r = Run(Node("Placeholder", "s").Type("dtype", DataType::kInt32).Shape("shape", {}), {});
  EXPECT_EQ(r.status.message(),
            std::string("You must feed a value for placeholder tensor 's' with dtype int32"));
  r = Run(Node("Placeholder", "u").Type("dtype", DataType::kFloat).Shape("shape", {-1, 3}), {});
  EXPECT_EQ(
      r.status.message(),
      std::string(
          "You must feed a value for placeholder tensor 'u' with dtype float and shape [?,3]"));
}

TEST(Const, OutputsItsValueAndChecksDtype) {
  Tensor v = Floats({2}, {1.5f, -2.f});
  Result r = Run(Node("Const").Type("dtype", DataType::kFloat).Value("value", v), {});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == Values<float>(v));
  r = Run(Node("Const", "c").Type("dtype", DataType::kInt32).Value("value", v), {});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
}

TEST(Reshape, InfersMinusOneAndRejectsBadSizes) {
  Tensor x = RandomFloats({2, 3, 4}, 1);
  Result r = Run(Node("Reshape").Type("T", DataType::kFloat).Type("Tshape", DataType::kInt64),
                 {x, Ints64({2}, {-1, 6})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({4, 6}));
  EXPECT_TRUE(r.outputs[0].SharesBufferWith(x));
  r = Run(Node("Reshape", "rs").Type("T", DataType::kFloat).Type("Tshape", DataType::kInt32),
          {x, Ints32({2}, {5, 5})});
  EXPECT_TRUE(
      Contains(r.status.message(),
               "Input to reshape is a tensor with 24 values, but the requested shape has 25"));
  r = Run(Node("Reshape", "rs").Type("T", DataType::kFloat).Type("Tshape", DataType::kInt32),
          {x, Ints32({2}, {-1, -1})});
  EXPECT_TRUE(Contains(r.status.message(), "Only one input size may be -1, not both 0 and 1"));
  r = Run(Node("Reshape", "rs").Type("T", DataType::kFloat).Type("Tshape", DataType::kInt32),
          {x, Ints32({2}, {-1, 5})});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
}

TEST(ExpandSqueeze, AxesAndErrors) {
  Tensor x = RandomFloats({2, 1, 3}, 1);
  Result r = Run(Node("ExpandDims").Type("T", DataType::kFloat).Type("Tdim", DataType::kInt32),
                 {x, Ints32({}, {-1})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({2, 1, 3, 1}));
  r = Run(Node("ExpandDims", "e").Type("T", DataType::kFloat).Type("Tdim", DataType::kInt32),
          {x, Ints32({}, {5})});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
  r = Run(Node("Squeeze").Type("T", DataType::kFloat), {x});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({2, 3}));
  r = Run(Node("Squeeze", "sq").Type("T", DataType::kFloat).Ints("squeeze_dims", {0}), {x});
  EXPECT_TRUE(
      Contains(r.status.message(), "Can not squeeze dim[0], expected a dimension of 1, got 2"));
  r = Run(Node("Squeeze").Type("T", DataType::kFloat).Ints("squeeze_dims", {-2}), {x});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({2, 3}));
}

TEST(Transpose, PermutesAnyDtype) {
  Tensor x = Ints32({2, 3}, {1, 2, 3, 4, 5, 6});
  Result r = Run(Node("Transpose").Type("T", DataType::kInt32).Type("Tperm", DataType::kInt32),
                 {x, Ints32({2}, {1, 0})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<int32_t>(r.outputs[0]) == (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  Tensor b = Tensor::From<bool>({2, 1, 2}, {true, false, false, true});
  r = Run(Node("Transpose").Type("T", DataType::kBool).Type("Tperm", DataType::kInt64),
          {b, Ints64({3}, {2, 0, 1})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({2, 2, 1}));
  EXPECT_TRUE(Values<bool>(r.outputs[0]) == (std::vector<bool>{true, false, false, true}));
  r = Run(Node("Transpose", "t").Type("T", DataType::kInt32).Type("Tperm", DataType::kInt32),
          {x, Ints32({2}, {0, 0})});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
}

TEST(ConcatV2, NegativeAxisAndMismatch) {
  Tensor a = Ints32({2, 1}, {1, 2}), b = Ints32({2, 2}, {3, 4, 5, 6});
  Result r =
      Run(Node("ConcatV2").Type("T", DataType::kInt32).Type("Tidx", DataType::kInt32).Int("N", 2),
          {a, b, Ints32({}, {-1})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<int32_t>(r.outputs[0]) == (std::vector<int32_t>{1, 3, 4, 2, 5, 6}));
  r = Run(
      Node("ConcatV2", "cc").Type("T", DataType::kInt32).Type("Tidx", DataType::kInt32).Int("N", 2),
      {a, b, Ints32({}, {0})});
  EXPECT_TRUE(Contains(r.status.message(), "Dimension 1 in both shapes must be equal"));
}

TEST(Cast, TruncatesAndHandlesBool) {
  Tensor x = Floats({5}, {-1.7f, 0.f, 2.9f, 0.25f, std::numeric_limits<float>::quiet_NaN()});
  Result r = Run(Node("Cast").Type("SrcT", DataType::kFloat).Type("DstT", DataType::kInt32), {x});
  ASSERT_OK(r.status);
  std::vector<int32_t> got = Values<int32_t>(r.outputs[0]);
  EXPECT_EQ(got[0], -1);
  EXPECT_EQ(got[2], 2);
  EXPECT_EQ(got[4], std::numeric_limits<int32_t>::min());
  r = Run(Node("Cast").Type("SrcT", DataType::kFloat).Type("DstT", DataType::kBool), {x});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<bool>(r.outputs[0]) == (std::vector<bool>{true, false, true, true, true}));
}

TEST(Reduction, AxesKeepDimsAndIndexTypes) {
  Tensor x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Result r = Run(Node("Sum")
                     .Type("T", DataType::kFloat)
                     .Type("Tidx", DataType::kInt64)
                     .Bool("keep_dims", true),
                 {x, Ints64({1}, {-1})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({2, 1}));
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{6, 15}));
  r = Run(Node("Mean").Type("T", DataType::kFloat).Type("Tidx", DataType::kInt32),
          {x, Ints32({2}, {0, 1})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({}));
  EXPECT_EQ(r.outputs[0].data<float>()[0], 3.5f);
  r = Run(Node("Mean").Type("T", DataType::kInt32).Type("Tidx", DataType::kInt32),
          {Ints32({3}, {1, 2, 4}), Ints32({}, {0})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].data<int32_t>()[0], 2);  // integer mean truncates, as in TensorFlow
  r = Run(Node("Sum", "s").Type("T", DataType::kFloat).Type("Tidx", DataType::kInt32),
          {x, Ints32({}, {2})});
  EXPECT_TRUE(Contains(r.status.message(), "Invalid reduction dimension"));
  r = Run(Node("Sum").Type("T", DataType::kFloat).Type("Tidx", DataType::kInt32),
          {x, Ints32({0}, {})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == Values<float>(x));
}

TEST(Shape, OutType) {
  Tensor x = RandomFloats({4, 0, 2}, 1);
  Result r = Run(Node("Shape").Type("T", DataType::kFloat).Type("out_type", DataType::kInt64), {x});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<int64_t>(r.outputs[0]) == (std::vector<int64_t>{4, 0, 2}));
}

TEST(Variables, RefVariableKeepsStateAndReportsUninitialized) {
  ember::ResourceMgr rm;
  Node var = Node("VariableV2", "v").Type("dtype", DataType::kFloat).Shape("shape", {2});
  Node read = Node("Identity", "v/read").Input("v").Type("T", DataType::kFloat);
  Result before = Run(var, {}, &rm);
  ASSERT_OK(before.status);
  Result bad = Run(read, {before.outputs[0]}, &rm);
  EXPECT_TRUE(bad.status.code() == Code::kFailedPrecondition);
  EXPECT_TRUE(Contains(bad.status.message(), "Attempting to use uninitialized value v"));
  Node assign = Node("Assign", "v/assign").Input("v").Input("init").Type("T", DataType::kFloat);
  ASSERT_OK(Run(assign, {before.outputs[0], Floats({2}, {20, 20})}, &rm).status);
  Result after = Run(var, {}, &rm);
  ASSERT_OK(after.status);
  Result value = Run(read, {after.outputs[0]}, &rm);
  ASSERT_OK(value.status);
  EXPECT_TRUE(Values<float>(value.outputs[0]) == (std::vector<float>{20, 20}));
  Result wrong = Run(assign, {after.outputs[0], Floats({3}, {1, 2, 3})}, &rm);
  EXPECT_TRUE(Contains(wrong.status.message(), "Assign requires shapes of both tensors to match"));
}

TEST(Variables, ResourceVariable) {
  ember::ResourceMgr rm;
  Node handle = Node("VarHandleOp", "h").Type("dtype", DataType::kInt32).Shape("shape", {});
  Node read = Node("ReadVariableOp", "r").Input("h").Type("dtype", DataType::kInt32);
  Result h = Run(handle, {}, &rm);
  ASSERT_OK(h.status);
  EXPECT_TRUE(Run(read, {h.outputs[0]}, &rm).status.code() == Code::kFailedPrecondition);
  Node assign = Node("AssignVariableOp", "a").Input("h").Input("x").Type("dtype", DataType::kInt32);
  ASSERT_OK(Run(assign, {h.outputs[0], Ints32({}, {7})}, &rm).status);
  Result r = Run(read, {h.outputs[0]}, &rm);
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0].data<int32_t>()[0], 7);
  EXPECT_TRUE(Run(assign, {h.outputs[0], Floats({}, {1})}, &rm).status.code() ==
              Code::kInvalidArgument);
}

TEST(Variables, ConcurrentAssignAndRead) {
  ember::ResourceMgr rm;
  Node var = Node("VariableV2", "v").Type("dtype", DataType::kFloat).Shape("shape", {3});
  Node assign = Node("Assign", "v/assign").Input("v").Input("x").Type("T", DataType::kFloat);
  Node read = Node("Identity", "v/read").Input("v").Type("T", DataType::kFloat);
  ASSERT_OK(Run(assign, {Run(var, {}, &rm).outputs[0], Floats({3}, {0, 0, 0})}, &rm).status);
  std::vector<std::thread> threads;
  std::vector<int> torn(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        if (t % 2 == 0) {
          float v = static_cast<float>(i);
          Run(assign, {Run(var, {}, &rm).outputs[0], Floats({3}, {v, v, v})}, &rm);
        } else {
          Result r = Run(read, {Run(var, {}, &rm).outputs[0]}, &rm);
          const float* p = r.outputs[0].data<float>();
          if (!r.status.ok() || p[0] != p[1] || p[1] != p[2])
            ++torn[t];  // a value is never half-written
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(torn[t], 0);
}

EMBER_TEST_MAIN
