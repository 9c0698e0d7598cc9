// Shape functions of the segment reductions and EnsureShape, which the TensorFlow fixtures
// (engine/testdata/graphs/ops_bucketize_segments, ops_checks) cannot reach: ember-run reports
// values, not the shapes inferred before running.
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

PartialShape Infer(const Node& node, std::vector<PartialShape> shapes,
                   std::vector<const Tensor*> values = {}) {
  const ember::OpDef* op = ember::OpRegistry::Global()->Lookup(node.def().op);
  EXPECT_TRUE(op != nullptr && op->shape_fn);
  ember::ShapeContext c;
  c.node = &node.def();
  c.input_shapes = std::move(shapes);
  values.resize(c.input_shapes.size(), nullptr);
  c.input_values = std::move(values);
  EXPECT_OK(op->shape_fn(&c));
  EXPECT_EQ(c.output_shapes.size(), 1u);
  return c.output_shapes.empty() ? PartialShape() : c.output_shapes[0];
}

bool Is(const PartialShape& s, std::vector<int64_t> dims) {
  return !s.unknown_rank && s.dims == dims;
}

}  // namespace

TEST(SegmentShape, SortedKeepsInnerDims) {
  for (const char* op : {"SegmentSum", "SegmentMean", "SegmentMax"}) {
    EXPECT_TRUE(Is(Infer(Node(op), {P({6, 3, 2}), P({6})}), {-1, 3, 2}));
    EXPECT_TRUE(Infer(Node(op), {PartialShape{{}, true}, P({6})}).unknown_rank);
  }
}

TEST(SegmentShape, UnsortedTakesConstantNumSegments) {
  Tensor seven = Ints32({}, {7});
  Tensor three = Ints64({}, {3});
  EXPECT_TRUE(Is(Infer(Node("UnsortedSegmentSum"), {P({2, 3, 4}), P({2, 3}), P({})},
                       {nullptr, nullptr, &seven}),
                 {7, 4}));
  EXPECT_TRUE(
      Is(Infer(Node("UnsortedSegmentMax"), {P({5, 2}), P({5}), P({})}, {nullptr, nullptr, &three}),
         {3, 2}));
  EXPECT_TRUE(Is(Infer(Node("UnsortedSegmentProd"), {P({5, 2}), P({5}), P({})}), {-1, 2}));
  EXPECT_TRUE(
      Infer(Node("UnsortedSegmentMin"), {P({5, 2}), PartialShape{{}, true}, P({})}).unknown_rank);
}

TEST(EnsureShapeShape, MergesAttrWithInput) {
  Node partial = Node("EnsureShape").Shape("shape", {-1, 3});
  EXPECT_TRUE(Is(Infer(partial, {P({2, -1})}), {2, 3}));
  EXPECT_TRUE(Is(Infer(partial, {PartialShape{{}, true}}), {-1, 3}));
  Node any = Node("EnsureShape").Shape("shape", {}, /*unknown_rank=*/true);
  EXPECT_TRUE(Is(Infer(any, {P({4, -1})}), {4, -1}));
}

EMBER_TEST_MAIN
