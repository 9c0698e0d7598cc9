// The kernels that allocate their outputs uninitialized (allocate_output_uninitialized) must
// write every element. Each case runs a kernel twice: with Tensor::Uninitialized buffers
// poisoned (0xFF bytes: NaN, -1) and without (today's allocator may hand back zeroed pages), and
// expects byte-identical outputs, so an element a kernel leaves unwritten shows up as a mismatch.
#include <cstring>
#include <string>
#include <vector>

#include "core/tensor_debug.h"
#include "core/thread_pool.h"
#include "ember_test.h"
#include "kernels/kernel_test_util.h"

using namespace ember_kernel_test;  // NOLINT

namespace {

// A buffer filled with `byte`, standing for memory that was never written.
Tensor Poisoned(DataType dt, const TensorShape& shape, unsigned char byte) {
  Tensor t = Tensor::Uninitialized(dt, shape);
  std::memset(t.raw_data(), byte, t.TotalBytes());
  return t;
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

// Runs `node` with and without poisoning (serially and on a pool) and compares every output.
void ExpectFullyWritten(const Node& node, const std::vector<Tensor>& inputs,
                        const std::string& what) {
  static ember::ThreadPool pool("intra", 2);
  for (ember::ThreadPool* p : {static_cast<ember::ThreadPool*>(nullptr), &pool}) {
    ember::SetPoisonUninitializedTensors(false);
    Result clean = Run(node, inputs, nullptr, p);
    ember::SetPoisonUninitializedTensors(true);
    Result poisoned = Run(node, inputs, nullptr, p);
    ember::SetPoisonUninitializedTensors(false);
    if (!clean.status.ok() || !poisoned.status.ok()) {
      ember_test::Fail(__FILE__, __LINE__, what + ": " + clean.status.ToString());
      return;
    }
    if (clean.outputs.size() != poisoned.outputs.size()) {
      ember_test::Fail(__FILE__, __LINE__, what + ": output counts differ");
      return;
    }
    for (size_t i = 0; i < clean.outputs.size(); ++i) {
      if (!SameBytes(clean.outputs[i], poisoned.outputs[i])) {
        ember_test::Fail(__FILE__, __LINE__,
                         what + ": output " + std::to_string(i) + " has unwritten elements");
      }
    }
  }
}

Node Conv(const char* op, std::vector<int64_t> strides, const char* padding) {
  return Node(op).Type("T", DataType::kFloat).Ints("strides", strides).Str("padding", padding);
}

}  // namespace

TEST(UninitializedTensor, PoisonFillsTheBufferAndDefaultStaysZero) {
  ember::SetPoisonUninitializedTensors(true);
  Tensor u = Tensor::Uninitialized(DataType::kFloat, TensorShape({3, 5}));
  ember::SetPoisonUninitializedTensors(false);
  ASSERT_TRUE(u.raw_data() != nullptr);
  EXPECT_TRUE(u.dtype() == DataType::kFloat);
  EXPECT_TRUE(u.shape() == TensorShape({3, 5}));
  for (int64_t i = 0; i < u.NumElements(); ++i) EXPECT_TRUE(std::isnan(u.data<float>()[i]));
  Tensor z(DataType::kFloat, TensorShape({3, 5}));
  for (int64_t i = 0; i < z.NumElements(); ++i) EXPECT_TRUE(z.data<float>()[i] == 0.f);
  // No element storage for strings: nothing is left unconstructed.
  Tensor s = Tensor::Uninitialized(DataType::kString, TensorShape({2}));
  EXPECT_TRUE(s.raw_data() != nullptr);
  EXPECT_TRUE(s.TotalBytes() == 0);
}

// The check itself: a kernel whose output was poisoned but only partly written is caught.
TEST(UninitializedTensor, CheckCatchesAPartialWrite) {
  Tensor full = Poisoned(DataType::kFloat, TensorShape({4}), 0);
  Tensor partial = Poisoned(DataType::kFloat, TensorShape({4}), 0xFF);
  for (int i = 0; i < 3; ++i) full.data<float>()[i] = partial.data<float>()[i] = 1.f;
  EXPECT_FALSE(SameBytes(full, partial));
}

TEST(UninitializedOutput, ConvolutionsAndMatMuls) {
  unsigned seed = 1;
  const std::vector<int64_t> in_shapes[] = {{1, 7, 5, 3}, {2, 9, 9, 8}, {1, 30, 30, 16}};
  for (const auto& in_shape : in_shapes) {
    const int64_t c = in_shape[3];
    Tensor x = RandomFloats(TensorShape(in_shape), seed++);
    for (const char* padding : {"SAME", "VALID"}) {
      for (int64_t s : {1, 2}) {
        for (int64_t k : {1, 3}) {
          const std::string what = std::string(padding) + " s" + std::to_string(s) + " k" +
                                   std::to_string(k) + " c" + std::to_string(c);
          Tensor f = RandomFloats(TensorShape({k, k, c, 24}), seed++);
          Tensor bias = RandomFloats(TensorShape({24}), seed++);
          ExpectFullyWritten(Conv("Conv2D", {1, s, s, 1}, padding), {x, f}, "Conv2D " + what);
          ExpectFullyWritten(Conv("_EmberFusedConv2D", {1, s, s, 1}, padding)
                                 .Value("filter", f)
                                 .Value("bias", bias)
                                 .Str("activation", "Relu6"),
                             {x}, "_EmberFusedConv2D " + what);
          Tensor dwf = RandomFloats(TensorShape({k, k, c, 2}), seed++);
          Tensor dwb = RandomFloats(TensorShape({c * 2}), seed++);
          ExpectFullyWritten(Conv("DepthwiseConv2dNative", {1, s, s, 1}, padding), {x, dwf},
                             "DepthwiseConv2dNative " + what);
          ExpectFullyWritten(Conv("_EmberFusedDepthwiseConv2dNative", {1, s, s, 1}, padding)
                                 .Value("filter", dwf)
                                 .Value("bias", dwb)
                                 .Str("activation", "Relu"),
                             {x}, "_EmberFusedDepthwiseConv2dNative " + what);
          for (const char* pool_op : {"MaxPool", "AvgPool"}) {
            ExpectFullyWritten(Node(pool_op)
                                   .Type("T", DataType::kFloat)
                                   .Ints("ksize", {1, k + 1, k + 1, 1})
                                   .Ints("strides", {1, s, s, 1})
                                   .Str("padding", padding),
                               {x}, std::string(pool_op) + " " + what);
          }
        }
      }
    }
  }
  // m, k, n: skinny, blocked, k = 0 (the product is all zeros) and empty.
  const int64_t mkn[][3] = {{1, 64, 10}, {3, 7, 5}, {40, 70, 50}, {5, 0, 4}, {0, 3, 4}};
  for (const auto& d : mkn) {
    const std::string what =
        std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    Tensor a = RandomFloats(TensorShape({d[0], d[1]}), seed++);
    Tensor b = RandomFloats(TensorShape({d[1], d[2]}), seed++);
    ExpectFullyWritten(Node("MatMul").Type("T", DataType::kFloat), {a, b}, "MatMul " + what);
    ExpectFullyWritten(Node("_EmberFusedMatMul")
                           .Type("T", DataType::kFloat)
                           .Value("filter", b)
                           .Value("bias", RandomFloats(TensorShape({d[2]}), seed++))
                           .Str("activation", "Relu"),
                       {a}, "_EmberFusedMatMul " + what);
    Tensor ai = Ints32(TensorShape({d[0], d[1]}), std::vector<int32_t>(d[0] * d[1], 3));
    Tensor bi = Ints32(TensorShape({d[1], d[2]}), std::vector<int32_t>(d[1] * d[2], -2));
    ExpectFullyWritten(Node("MatMul").Type("T", DataType::kInt32), {ai, bi},
                       "int32 MatMul " + what);
  }
  ExpectFullyWritten(
      Node("BatchMatMulV2").Type("T", DataType::kFloat),
      {RandomFloats(TensorShape({2, 1, 3, 4}), 5), RandomFloats(TensorShape({3, 4, 6}), 6)},
      "BatchMatMulV2 broadcast");
}

TEST(UninitializedOutput, ElementWiseAndLayout) {
  Tensor x = RandomFloats(TensorShape({2, 3, 4, 5}), 11);
  for (const char* op : {"Relu", "Relu6", "Neg", "Erf", "Softmax"}) {
    ExpectFullyWritten(Node(op).Type("T", DataType::kFloat), {x}, op);
  }
  const std::vector<int64_t> other_shapes[] = {{2, 3, 4, 5}, {5}, {}, {3, 1, 5}, {2, 1, 4, 1}};
  unsigned seed = 20;
  for (const auto& shape : other_shapes) {
    Tensor y = RandomFloats(TensorShape(shape), seed++);
    for (const char* op : {"AddV2", "Mul", "SquaredDifference"}) {
      ExpectFullyWritten(Node(op).Type("T", DataType::kFloat), {x, y}, op);
      ExpectFullyWritten(Node(op).Type("T", DataType::kFloat), {y, x}, op);
    }
  }
  ExpectFullyWritten(Node("BiasAdd").Type("T", DataType::kFloat),
                     {x, RandomFloats(TensorShape({5}), 30)}, "BiasAdd NHWC");
  ExpectFullyWritten(Node("BiasAdd").Type("T", DataType::kFloat).Str("data_format", "NCHW"),
                     {x, RandomFloats(TensorShape({3}), 31)}, "BiasAdd NCHW");
  ExpectFullyWritten(Node("Transpose").Type("T", DataType::kFloat).Type("Tperm", DataType::kInt32),
                     {x, Ints32(TensorShape({4}), {0, 3, 1, 2})}, "Transpose");
  for (const char* op : {"Mean", "Sum"}) {
    for (bool keep : {false, true}) {
      ExpectFullyWritten(Node(op)
                             .Type("T", DataType::kFloat)
                             .Type("Tidx", DataType::kInt32)
                             .Bool("keep_dims", keep),
                         {x, Ints32(TensorShape({2}), {1, 2})}, op);
    }
  }
  const Tensor pads = Ints32(TensorShape({4, 2}), {0, 1, 1, 2, 2, 0, 1, 1});
  ExpectFullyWritten(Node("Pad").Type("T", DataType::kFloat).Type("Tpaddings", DataType::kInt32),
                     {x, pads}, "Pad");
  ExpectFullyWritten(Node("PadV2").Type("T", DataType::kFloat).Type("Tpaddings", DataType::kInt32),
                     {x, pads, Tensor::Scalar<float>(2.5f)}, "PadV2");
  ExpectFullyWritten(Node("MirrorPad")
                         .Type("T", DataType::kFloat)
                         .Type("Tpaddings", DataType::kInt32)
                         .Str("mode", "REFLECT"),
                     {x, pads}, "MirrorPad");
  ExpectFullyWritten(Node("FusedBatchNormV3")
                         .Type("T", DataType::kFloat)
                         .Type("U", DataType::kFloat)
                         .Bool("is_training", false),
                     {x, RandomFloats(TensorShape({5}), 40), RandomFloats(TensorShape({5}), 41),
                      RandomFloats(TensorShape({5}), 42), Floats({5}, {1, 2, 3, 4, 5})},
                     "FusedBatchNormV3");
}

EMBER_TEST_MAIN
