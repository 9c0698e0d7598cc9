// Shape functions: output shapes inferred from partial input shapes and constant inputs.
#include <string>
#include <vector>

#include "ember_test.h"
#include "kernels/kernel_test_util.h"

using namespace ember_kernel_test;  // NOLINT
using ember::PartialShape;

namespace {

PartialShape P(std::vector<int64_t> dims) {
  PartialShape s;
  s.dims = std::move(dims);
  return s;
}

// Runs the op's shape function; `values` holds constant inputs (nullptr when unknown).
ember::Status Infer(const Node& node, std::vector<PartialShape> shapes,
                    std::vector<const Tensor*> values, PartialShape* out) {
  const ember::OpDef* op = ember::OpRegistry::Global()->Lookup(node.def().op);
  if (op == nullptr || !op->shape_fn)
    return ember::errors::NotFound("no shape fn for " + node.def().op);
  ember::ShapeContext c;
  c.node = &node.def();
  c.input_shapes = std::move(shapes);
  values.resize(c.input_shapes.size(), nullptr);
  c.input_values = std::move(values);
  EMBER_RETURN_IF_ERROR(op->shape_fn(&c));
  if (c.output_shapes.size() != 1) return ember::errors::Internal("expected one output shape");
  *out = c.output_shapes[0];
  return ember::Status::OK();
}

bool Is(const PartialShape& s, std::vector<int64_t> dims) {
  return !s.unknown_rank && s.dims == dims;
}

}  // namespace

TEST(ShapeFn, BroadcastAndErrors) {
  PartialShape out;
  ASSERT_OK(Infer(Node("AddV2", "add"), {P({-1, 3}), P({2, 1, 1})}, {}, &out));
  EXPECT_TRUE(Is(out, {2, -1, 3}));
  EXPECT_FALSE(Infer(Node("Mul", "mul"), {P({2, 3}), P({4})}, {}, &out).ok());
}

TEST(ShapeFn, MatMulConvPool) {
  PartialShape out;
  ASSERT_OK(Infer(Node("MatMul").Bool("transpose_a", true), {P({5, 3}), P({5, -1})}, {}, &out));
  EXPECT_TRUE(Is(out, {3, -1}));
  ASSERT_OK(
      Infer(Node("BatchMatMulV2").Bool("adj_y", true), {P({2, 1, 3, 4}), P({5, 6, 4})}, {}, &out));
  EXPECT_TRUE(Is(out, {2, 5, 3, 6}));
  Node conv = Node("Conv2D").Ints("strides", {1, 2, 2, 1}).Str("padding", "SAME");
  ASSERT_OK(Infer(conv, {P({1, 7, 6, 3}), P({3, 3, 3, 8})}, {}, &out));
  EXPECT_TRUE(Is(out, {1, 4, 3, 8}));
  Node pool = Node("MaxPool")
                  .Ints("ksize", {1, 3, 3, 1})
                  .Ints("strides", {1, 2, 2, 1})
                  .Str("padding", "VALID");
  ASSERT_OK(Infer(pool, {P({1, 7, 6, 3})}, {}, &out));
  EXPECT_TRUE(Is(out, {1, 3, 2, 3}));
}

TEST(ShapeFn, ShapeOpsWithConstantInputs) {
  PartialShape out;
  Tensor shape = Ints32({2}, {-1, 4});
  ASSERT_OK(Infer(Node("Reshape"), {P({2, 3, 4}), P({2})}, {nullptr, &shape}, &out));
  EXPECT_TRUE(Is(out, {6, 4}));
  Tensor perm = Ints32({3}, {2, 0, 1});
  ASSERT_OK(Infer(Node("Transpose"), {P({2, -1, 4}), P({3})}, {nullptr, &perm}, &out));
  EXPECT_TRUE(Is(out, {4, 2, -1}));
  Tensor dim = Ints32({}, {-1});
  ASSERT_OK(Infer(Node("ExpandDims"), {P({2, 3}), P({})}, {nullptr, &dim}, &out));
  EXPECT_TRUE(Is(out, {2, 3, 1}));
  ASSERT_OK(Infer(Node("Squeeze").Ints("squeeze_dims", {1}), {P({2, 1, 3})}, {}, &out));
  EXPECT_TRUE(Is(out, {2, 3}));
  Tensor axis = Ints32({}, {1});
  ASSERT_OK(Infer(Node("ConcatV2").Int("N", 2), {P({2, 3}), P({-1, 4}), P({})},
                  {nullptr, nullptr, &axis}, &out));
  EXPECT_TRUE(Is(out, {2, 7}));
  Tensor axes = Ints64({1}, {-1});
  ASSERT_OK(
      Infer(Node("Sum").Bool("keep_dims", true), {P({2, 3}), P({1})}, {nullptr, &axes}, &out));
  EXPECT_TRUE(Is(out, {2, 1}));
  ASSERT_OK(Infer(Node("Shape"), {P({2, -1, 3})}, {}, &out));
  EXPECT_TRUE(Is(out, {3}));
}

EMBER_TEST_MAIN
