// Bad shapes never crash a kernel: every op runs on many random (mostly incompatible) input
// shapes and index values, and must either succeed with outputs of its promised dtype or
// return an error status that names the node. Run under ASan/UBSan to catch memory errors.
#include <random>
#include <string>
#include <vector>

#include "ember_test.h"
#include "kernels/kernel_test_util.h"

using namespace ember_kernel_test;  // NOLINT

namespace {

std::vector<int64_t> RandomDims(std::mt19937* gen, int max_rank) {
  std::uniform_int_distribution<int> rank(0, max_rank), size(0, 4);
  std::vector<int64_t> dims(static_cast<size_t>(rank(*gen)));
  for (int64_t& d : dims) d = size(*gen);
  return dims;
}

Tensor RandomIndex(std::mt19937* gen, bool scalar) {
  std::uniform_int_distribution<int> len(0, 4), val(-5, 5);
  std::vector<int32_t> v(scalar ? 1 : static_cast<size_t>(len(*gen)));
  for (int32_t& x : v) x = val(*gen);
  return Tensor::From<int32_t>(
      scalar ? TensorShape() : TensorShape({static_cast<int64_t>(v.size())}), v);
}

// Runs `node` on `inputs`; an error must name the node, a success must fill every output.
void Check(const Node& node, const std::vector<Tensor>& inputs) {
  Result r = Run(node, inputs);
  if (!r.status.ok()) {
    if (!Contains(r.status.message(), node.def().name)) {
      ember_test::Fail(__FILE__, __LINE__,
                       node.def().op + ": error does not name the node: " + r.status.message());
    }
    return;
  }
  for (const Tensor& t : r.outputs) {
    if (!t.IsInitialized())
      ember_test::Fail(__FILE__, __LINE__, node.def().op + ": output not set");
  }
}

}  // namespace

TEST(Robustness, RandomShapesNeverCrash) {
  std::mt19937 gen(1234);
  const char* binary[] = {"Add",           "AddV2",   "Sub",     "Mul",
                          "RealDiv",       "Maximum", "Minimum", "MatMul",
                          "BatchMatMulV2", "BiasAdd", "Conv2D",  "DepthwiseConv2dNative"};
  const char* unary[] = {"Neg", "Exp", "Softmax", "Relu", "MaxPool", "AvgPool", "Squeeze"};
  const char* indexed[] = {"Reshape", "Transpose", "ExpandDims", "Sum", "Mean"};
  for (int iter = 0; iter < 300; ++iter) {
    for (const char* op : binary) {
      Node n = Node(op, std::string("bad_") + op)
                   .Type("T", DataType::kFloat)
                   .Ints("strides", {1, 1 + iter % 2, 1, 1})
                   .Str("padding", iter % 3 ? "SAME" : "VALID");
      Check(n, {RandomFloats(TensorShape(RandomDims(&gen, 4)), 1),
                RandomFloats(TensorShape(RandomDims(&gen, 4)), 2)});
    }
    for (const char* op : unary) {
      Node n = Node(op, std::string("bad_") + op)
                   .Type("T", DataType::kFloat)
                   .Ints("ksize", {1, 2, 1 + iter % 3, 1})
                   .Ints("strides", {1, 1, 2, 1})
                   .Str("padding", iter % 2 ? "SAME" : "VALID")
                   .Ints("squeeze_dims", {iter % 5 - 2});
      Check(n, {RandomFloats(TensorShape(RandomDims(&gen, 5)), 3)});
    }
    for (const char* op : indexed) {
      Node n = Node(op, std::string("bad_") + op)
                   .Type("T", DataType::kFloat)
                   .Type("Tshape", DataType::kInt32)
                   .Type("Tperm", DataType::kInt32)
                   .Type("Tdim", DataType::kInt32)
                   .Type("Tidx", DataType::kInt32);
      Check(n,
            {RandomFloats(TensorShape(RandomDims(&gen, 4)), 4), RandomIndex(&gen, iter % 4 == 0)});
    }
    Node concat = Node("ConcatV2", "bad_concat")
                      .Type("T", DataType::kFloat)
                      .Type("Tidx", DataType::kInt32)
                      .Int("N", 2);
    Check(concat,
          {RandomFloats(TensorShape(RandomDims(&gen, 3)), 5),
           RandomFloats(TensorShape(RandomDims(&gen, 3)), 6), RandomIndex(&gen, iter % 3 != 0)});
  }
}

TEST(Robustness, WrongInputDtypesAreErrors) {
  Tensor i32 = Ints32({2, 2}, {1, 2, 3, 4});
  Tensor f = RandomFloats({2, 2}, 1);
  const char* ops[] = {"AddV2", "MatMul", "BiasAdd", "Softmax", "Sum"};
  for (const char* op : ops) {
    Node n = Node(op, std::string("typed_") + op)
                 .Type("T", DataType::kFloat)
                 .Type("Tidx", DataType::kInt32);
    Result r = Run(n, {i32, std::string(op) == "Sum" ? Ints32({}, {0}) : f});
    EXPECT_FALSE(r.status.ok());
  }
}

EMBER_TEST_MAIN
