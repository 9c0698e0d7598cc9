// The ops real models need (cwise_extra_ops, slice_ops, array_extra_ops, nn_extra_ops,
// einsum_op), each on its own: values worked out from TensorFlow's documented semantics,
// errors that name the node, and shape functions. engine/testdata/graphs/ops_* check the same
// kernels against TensorFlow itself.
#include <cmath>
#include <string>
#include <vector>

#include "ember_test.h"
#include "kernels/kernel_test_util.h"

using namespace ember_kernel_test;  // NOLINT
using ember::Code;
using ember::PartialShape;

namespace {

Node StridedSlice(int64_t begin_mask, int64_t end_mask, int64_t ellipsis, int64_t new_axis,
                  int64_t shrink) {
  return Node("StridedSlice", "ss")
      .Type("T", DataType::kFloat)
      .Type("Index", DataType::kInt32)
      .Int("begin_mask", begin_mask)
      .Int("end_mask", end_mask)
      .Int("ellipsis_mask", ellipsis)
      .Int("new_axis_mask", new_axis)
      .Int("shrink_axis_mask", shrink);
}

Tensor Iota(const TensorShape& shape) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

}  // namespace

TEST(ModelOps, StridedSliceShrinkNewAxisAndNegativeStride) {
  // x[1, tf.newaxis, ::-1] on a [2,3] iota: row 1 reversed, with a new leading axis of 1.
  Result r =
      Run(StridedSlice(/*begin*/ 4, /*end*/ 4, 0, /*new_axis*/ 2, /*shrink*/ 1),
          {Iota({2, 3}), Ints32({3}, {1, 0, 0}), Ints32({3}, {2, 0, 0}), Ints32({3}, {1, 1, -1})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({1, 3}));
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{5, 4, 3}));
}

TEST(ModelOps, StridedSliceEllipsisAndClampedBounds) {
  // x[..., 1:100:2] on [2,2,4] keeps dims 0-1 and takes columns 1 and 3.
  Result r =
      Run(StridedSlice(0, 0, /*ellipsis*/ 1, 0, 0),
          {Iota({2, 2, 4}), Ints32({2}, {0, 1}), Ints32({2}, {0, 100}), Ints32({2}, {1, 2})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({2, 2, 2}));
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{1, 3, 5, 7, 9, 11, 13, 15}));
}

TEST(ModelOps, StridedSliceZeroStrideNamesNode) {
  Result r = Run(StridedSlice(0, 0, 0, 0, 0),
                 {Iota({4}), Ints32({1}, {0}), Ints32({1}, {2}), Ints32({1}, {0})});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status.message(), "strides[0] must be non-zero"));
  EXPECT_TRUE(Contains(r.status.message(), "{{node ss}}"));
}

TEST(ModelOps, GatherV2AxisAndBatchDims) {
  Node g = Node("GatherV2")
               .Type("Tparams", DataType::kFloat)
               .Type("Tindices", DataType::kInt32)
               .Type("Taxis", DataType::kInt32);
  // axis 1 of a [2,3] iota with indices [2,0] -> columns 2 and 0.
  Result r = Run(g, {Iota({2, 3}), Ints32({2}, {2, 0}), Tensor::Scalar<int32_t>(-1)});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{2, 0, 5, 3}));
  // batch_dims 1: row b picks its own indices.
  r = Run(Node(g).Int("batch_dims", 1),
          {Iota({2, 3}), Ints32({2, 2}, {0, 2, 1, 1}), Tensor::Scalar<int32_t>(1)});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({2, 2}));
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{0, 2, 4, 4}));
  r = Run(g, {Iota({2, 3}), Ints32({1}, {3}), Tensor::Scalar<int32_t>(1)});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status.message(), "indices[0] = 3 is not in [0, 3)"));
}

TEST(ModelOps, SplitVInfersOneSize) {
  Node s =
      Node("SplitV").Type("T", DataType::kFloat).Type("Tlen", DataType::kInt32).Int("num_split", 2);
  Result r = Run(s, {Iota({2, 5}), Ints32({2}, {-1, 2}), Tensor::Scalar<int32_t>(-1)});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({2, 3}));
  EXPECT_TRUE(Values<float>(r.outputs[1]) == (std::vector<float>{3, 4, 8, 9}));
}

TEST(ModelOps, PackUnpackRoundTrip) {
  Result p = Run(Node("Pack").Type("T", DataType::kFloat).Int("N", 2).Int("axis", -1),
                 {Floats({2}, {1, 2}), Floats({2}, {3, 4})});
  ASSERT_OK(p.status);
  EXPECT_TRUE(p.outputs[0].shape() == TensorShape({2, 2}));
  EXPECT_TRUE(Values<float>(p.outputs[0]) == (std::vector<float>{1, 3, 2, 4}));
  Result u =
      Run(Node("Unpack").Type("T", DataType::kFloat).Int("num", 2).Int("axis", 1), {p.outputs[0]});
  ASSERT_OK(u.status);
  EXPECT_TRUE(Values<float>(u.outputs[1]) == (std::vector<float>{3, 4}));
}

TEST(ModelOps, FloorDivAndFloorModFollowTheDivisorSign) {
  Node div = Node("FloorDiv").Type("T", DataType::kInt32);
  Result r = Run(div, {Ints32({4}, {7, -7, 7, -7}), Ints32({4}, {2, 2, -2, -2})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<int32_t>(r.outputs[0]) == (std::vector<int32_t>{3, -4, -4, 3}));
  r = Run(Node("FloorMod").Type("T", DataType::kInt32),
          {Ints32({4}, {7, -7, 7, -7}), Ints32({4}, {2, 2, -2, -2})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<int32_t>(r.outputs[0]) == (std::vector<int32_t>{1, 1, -1, -1}));
  r = Run(div, {Ints32({1}, {1}), Ints32({1}, {0})});
  EXPECT_TRUE(Contains(r.status.message(), "Integer division by zero"));
}

TEST(ModelOps, ComparisonsAndSelectV2Broadcast) {
  Result less = Run(Node("Less").Type("T", DataType::kFloat),
                    {Floats({2, 1}, {0, 5}), Floats({3}, {1, 5, 9})});
  ASSERT_OK(less.status);
  EXPECT_TRUE(less.outputs[0].dtype() == DataType::kBool);
  EXPECT_TRUE(Values<bool>(less.outputs[0]) ==
              (std::vector<bool>{true, true, true, false, false, true}));
  Result sel = Run(Node("SelectV2").Type("T", DataType::kFloat),
                   {less.outputs[0], Floats({3}, {10, 20, 30}), Tensor::Scalar<float>(-1)});
  ASSERT_OK(sel.status);
  EXPECT_TRUE(Values<float>(sel.outputs[0]) == (std::vector<float>{10, 20, 30, -1, -1, 30}));
}

TEST(ModelOps, UnaryMathMatchesDefinitions) {
  Tensor x = Floats({4}, {-2.f, -0.5f, 0.5f, 3.f});
  struct Case {
    const char* op;
    double (*ref)(double);
  };
  const Case cases[] = {
      {"Erf", [](double v) { return std::erf(v); }},
      {"Elu", [](double v) { return v < 0 ? std::expm1(v) : v; }},
      {"Softplus", [](double v) { return std::log1p(std::exp(v)); }},
      {"LeakyRelu", [](double v) { return v < 0 ? 0.2 * v : v; }},
      {"Selu", [](double v) { return v < 0 ? 1.7580993408473766 * std::expm1(v) : 1.0507 * v; }},
  };
  for (const Case& c : cases) {
    Result r = Run(Node(c.op).Type("T", DataType::kFloat), {x});
    ASSERT_OK(r.status);
    for (int i = 0; i < 4; ++i) {
      const double want = c.ref(x.data<float>()[i]);
      EXPECT_NEAR(r.outputs[0].data<float>()[i], want, 1e-4 * std::fabs(want) + 1e-6);
    }
  }
  Result r = Run(Node("Rsqrt").Type("T", DataType::kFloat), {Floats({2}, {4, 0.25f})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{0.5f, 2.f}));
}

TEST(ModelOps, FusedBatchNormInference) {
  // y = (x - mean) * scale / sqrt(var + eps) + offset, per channel (last dim).
  Node bn = Node("FusedBatchNormV3")
                .Type("T", DataType::kFloat)
                .Type("U", DataType::kFloat)
                .Bool("is_training", false);
  Result r = Run(bn, {Floats({1, 1, 2, 2}, {1, 2, 3, 4}), Floats({2}, {2, 1}), Floats({2}, {0, 10}),
                      Floats({2}, {1, 2}), Floats({2}, {4, 1})});
  ASSERT_OK(r.status);
  const float s0 = 2.f / std::sqrt(4.f + 1e-4f), s1 = 1.f / std::sqrt(1.f + 1e-4f);
  EXPECT_NEAR(r.outputs[0].data<float>()[0], 0.f, 1e-6);
  EXPECT_NEAR(r.outputs[0].data<float>()[1], 10.f, 1e-5);
  EXPECT_NEAR(r.outputs[0].data<float>()[2], 2.f * s0, 1e-5);
  EXPECT_NEAR(r.outputs[0].data<float>()[3], 2.f * s1 + 10.f, 1e-5);
  EXPECT_EQ(static_cast<int>(r.outputs.size()), 6);
}

TEST(ModelOps, EinsumAttentionFormsMatchLoops) {
  // "aecd,abcd->acbe": scores[a,c,b,e] = sum_d k[a,e,c,d] * q[a,b,c,d].
  Tensor k = RandomFloats({2, 3, 2, 4}, 1), q = RandomFloats({2, 5, 2, 4}, 2);
  Node e =
      Node("Einsum").Type("T", DataType::kFloat).Int("N", 2).Str("equation", "aecd,abcd->acbe");
  Result r = Run(e, {k, q});
  ASSERT_OK(r.status);
  ASSERT_TRUE(r.outputs[0].shape() == TensorShape({2, 2, 5, 3}));
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 5; ++b)
        for (int x = 0; x < 3; ++x) {
          double want = 0;
          for (int d = 0; d < 4; ++d) {
            want += static_cast<double>(k.data<float>()[((a * 3 + x) * 2 + c) * 4 + d]) *
                    q.data<float>()[((a * 5 + b) * 2 + c) * 4 + d];
          }
          EXPECT_NEAR(r.outputs[0].data<float>()[((a * 2 + c) * 5 + b) * 3 + x], want, 1e-5);
        }
  r = Run(Node("Einsum").Type("T", DataType::kFloat).Int("N", 1).Str("equation", "ij->j"),
          {Iota({2, 3})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{3, 5, 7}));
}

TEST(ModelOps, PadModes) {
  Node pad = Node("MirrorPad")
                 .Type("T", DataType::kFloat)
                 .Type("Tpaddings", DataType::kInt32)
                 .Str("mode", "REFLECT");
  Result r = Run(pad, {Floats({3}, {1, 2, 3}), Ints32({1, 2}, {2, 1})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{3, 2, 1, 2, 3, 2}));
  r = Run(Node(pad).Str("mode", "SYMMETRIC"), {Floats({3}, {1, 2, 3}), Ints32({1, 2}, {2, 1})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{2, 1, 1, 2, 3, 3}));
}

TEST(ModelOps, RangeOneHotAndCumsum) {
  Result r =
      Run(Node("Range").Type("Tidx", DataType::kInt32),
          {Tensor::Scalar<int32_t>(3), Tensor::Scalar<int32_t>(12), Tensor::Scalar<int32_t>(4)});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<int32_t>(r.outputs[0]) == (std::vector<int32_t>{3, 7, 11}));
  r = Run(Node("OneHot").Type("TI", DataType::kInt32).Type("T", DataType::kFloat).Int("axis", -1),
          {Ints32({2}, {1, 5}), Tensor::Scalar<int32_t>(3), Tensor::Scalar<float>(1.f),
           Tensor::Scalar<float>(0.f)});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{0, 1, 0, 0, 0, 0}));
  r = Run(Node("Cumsum")
              .Type("T", DataType::kFloat)
              .Type("Tidx", DataType::kInt32)
              .Bool("exclusive", true)
              .Bool("reverse", true),
          {Floats({3}, {1, 2, 3}), Tensor::Scalar<int32_t>(0)});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{5, 3, 0}));
}

TEST(ModelOps, ShapeFunctions) {
  const ember::OpDef* op = ember::OpRegistry::Global()->Lookup("StridedSlice");
  ASSERT_TRUE(op != nullptr && op->shape_fn);
  Node n = StridedSlice(0, 0, 1, 0, 0);
  Tensor b = Ints32({2}, {0, 1}), e = Ints32({2}, {0, 100}), s = Ints32({2}, {1, 2});
  ember::ShapeContext c;
  c.node = &n.def();
  PartialShape in;
  in.dims = {2, 2, 4};
  c.input_shapes = {in, PartialShape(), PartialShape(), PartialShape()};
  c.input_values = {nullptr, &b, &e, &s};
  ASSERT_OK(op->shape_fn(&c));
  EXPECT_TRUE(c.output_shapes[0].dims == (std::vector<int64_t>{2, 2, 2}));
  const ember::OpDef* gather = ember::OpRegistry::Global()->Lookup("GatherV2");
  Node g = Node("GatherV2").Int("batch_dims", 0);
  Tensor axis = Tensor::Scalar<int32_t>(1);
  ember::ShapeContext gc;
  gc.node = &g.def();
  PartialShape params, idx;
  params.dims = {5, 7, 3};
  idx.dims = {2, 4};
  gc.input_shapes = {params, idx, PartialShape()};
  gc.input_values = {nullptr, nullptr, &axis};
  ASSERT_OK(gather->shape_fn(&gc));
  EXPECT_TRUE(gc.output_shapes[0].dims == (std::vector<int64_t>{5, 2, 4, 3}));
}

EMBER_TEST_MAIN
