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

// The index-driven model ops (top-k, gather/scatter by index rows, depth/space moves, sequence
// reversal, segment sums, diagonals) on random shapes and index values in and out of range.
TEST(Robustness, IndexedModelOpsNeverCrash) {
  std::mt19937 gen(4321);
  const char* float_index[] = {"TopKV2",     "GatherNd",   "SegmentSum",  "SegmentMean",
                               "SegmentMax", "SegmentMin", "SegmentProd", "ReverseSequence"};
  for (int iter = 0; iter < 300; ++iter) {
    for (const char* op : float_index) {
      Node n = Node(op, std::string("bad_") + op)
                   .Type("T", DataType::kFloat)
                   .Type("Tparams", DataType::kFloat)
                   .Type("Tk", DataType::kInt32)
                   .Type("index_type", DataType::kInt32)
                   .Type("Tindices", DataType::kInt32)
                   .Type("Tlen", DataType::kInt32)
                   .Int("seq_dim", iter % 3)
                   .Int("batch_dim", (iter / 3) % 3);
      Tensor index = RandomIndex(&gen, std::string(op) == "TopKV2" && iter % 4 != 0);
      if (std::string(op) == "GatherNd" && iter % 2 == 0) {
        index.CopyFrom(index, TensorShape({1, index.NumElements()}));
      }
      Check(n, {RandomFloats(TensorShape(RandomDims(&gen, 4)), 7), index});
    }
    Tensor rows = RandomIndex(&gen, false);
    Tensor deep;
    deep.CopyFrom(rows, TensorShape({rows.NumElements(), 1}));
    Node scatter = Node("ScatterNd", "bad_scatter")
                       .Type("T", DataType::kFloat)
                       .Type("Tindices", DataType::kInt32);
    Check(scatter, {iter % 2 ? deep : rows, RandomFloats(TensorShape(RandomDims(&gen, 3)), 8),
                    RandomIndex(&gen, iter % 5 == 0)});
    for (const char* op : {"TensorScatterUpdate", "TensorScatterAdd"}) {
      Node n = Node(op, std::string("bad_") + op)
                   .Type("T", DataType::kFloat)
                   .Type("Tindices", DataType::kInt32);
      Check(n, {RandomFloats(TensorShape(RandomDims(&gen, 3)), 9), iter % 2 ? deep : rows,
                RandomFloats(TensorShape(RandomDims(&gen, 3)), 10)});
    }
    for (const char* op : {"DepthToSpace", "SpaceToDepth", "LRN", "Unique"}) {
      Node n = Node(op, std::string("bad_") + op)
                   .Type("T", DataType::kFloat)
                   .Type("out_idx", DataType::kInt32)
                   .Int("block_size", 2 + iter % 2)
                   .Int("depth_radius", iter % 4);
      Check(n, {RandomFloats(TensorShape(RandomDims(&gen, 5)), 11)});
    }
    Node diag = Node("MatrixDiagV3", "bad_diag").Type("T", DataType::kFloat);
    Check(diag, {RandomFloats(TensorShape(RandomDims(&gen, 3)), 12),
                 RandomIndex(&gen, iter % 3 != 0), RandomIndex(&gen, true), RandomIndex(&gen, true),
                 RandomFloats(TensorShape(RandomDims(&gen, 1)), 13)});
    Node set_diag = Node("MatrixSetDiagV3", "bad_set_diag").Type("T", DataType::kFloat);
    Check(set_diag, {RandomFloats(TensorShape(RandomDims(&gen, 4)), 14),
                     RandomFloats(TensorShape(RandomDims(&gen, 3)), 15), RandomIndex(&gen, true)});
  }
}

// 3D convolution and pooling, unsorted segments, Bucketize and the extra resizes on random
// shapes, windows, strides, ids and sizes.
TEST(Robustness, VolumeSegmentAndResizeOpsNeverCrash) {
  std::mt19937 gen(8765);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t k = 1 + iter % 3, s = 1 + (iter / 3) % 2;
    const char* padding = iter % 2 ? "SAME" : "VALID";
    Node conv = Node("Conv3D", "bad_conv3d")
                    .Type("T", DataType::kFloat)
                    .Ints("strides", {1, s, 1, s, 1})
                    .Str("padding", padding);
    Check(conv, {RandomFloats(TensorShape(RandomDims(&gen, 6)), 16),
                 RandomFloats(TensorShape(RandomDims(&gen, 6)), 17)});
    Node back = Node("Conv3DBackpropInputV2", "bad_conv3d_back")
                    .Type("T", DataType::kFloat)
                    .Type("Tshape", DataType::kInt32)
                    .Ints("strides", {1, s, s, 1, 1})
                    .Str("padding", padding);
    Check(back, {RandomIndex(&gen, false), RandomFloats(TensorShape(RandomDims(&gen, 6)), 18),
                 RandomFloats(TensorShape(RandomDims(&gen, 6)), 19)});
    for (const char* op : {"MaxPool3D", "AvgPool3D"}) {
      Node n = Node(op, std::string("bad_") + op)
                   .Type("T", DataType::kFloat)
                   .Ints("ksize", {1, k, 2, 1, 1})
                   .Ints("strides", {1, s, 1, 2, 1})
                   .Str("padding", padding);
      Check(n, {RandomFloats(TensorShape(RandomDims(&gen, 6)), 20)});
    }
    for (const char* op : {"UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
                           "UnsortedSegmentProd"}) {
      Node n = Node(op, std::string("bad_") + op)
                   .Type("T", DataType::kFloat)
                   .Type("Tindices", DataType::kInt32)
                   .Type("Tnumsegments", DataType::kInt32);
      Check(n, {RandomFloats(TensorShape(RandomDims(&gen, 3)), 21), RandomIndex(&gen, false),
                RandomIndex(&gen, iter % 4 != 0)});
    }
    Node bucket = Node("Bucketize", "bad_bucketize")
                      .Type("T", DataType::kFloat)
                      .Floats("boundaries", iter % 5 ? std::vector<float>{-1.0f, 0.0f, 2.5f}
                                                     : std::vector<float>{1.0f, -1.0f});
    Check(bucket, {RandomFloats(TensorShape(RandomDims(&gen, 4)), 22)});
    for (const char* op : {"ResizeBicubic", "ResizeArea"}) {
      Node n = Node(op, std::string("bad_") + op)
                   .Type("T", DataType::kFloat)
                   .Bool("align_corners", iter % 3 == 0)
                   .Bool("half_pixel_centers", iter % 3 == 1 && std::string(op) != "ResizeArea");
      Check(n, {RandomFloats(TensorShape(RandomDims(&gen, 5)), 23), RandomIndex(&gen, false)});
    }
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
