// Shape computations evaluated before planning (src/lite/shape_refine.cc), on models written by
// hand as TensorFlow's converter writes a Keras Dense on a dynamic-batch sequence: the SHAPE ->
// GATHER -> REDUCE_PROD -> PACK chain folded into a constant, the placeholder [1, 1] of the
// RESHAPE after it (and the FULLY_CONNECTED's [1, units]) refined, a FILL of a SHAPE, and what is
// left alone: a shape the signature does not allow, and SHAPE of a run-time SLICE. The converted
// Keras models are compared with LiteRT in tests/lite/test_lite_fast_paths.py.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember_test.h"
#include "lite/lite_test_util.h"

using namespace ember::lite;
using ember::lite::testing::Contains;
using ember::lite::testing::Load;
using ember::lite::testing::MakeOp;
using ember::lite::testing::MakeTensor;
using ember::lite::testing::Run;

namespace {

const int32_t kFirstTwo[2] = {0, 1};
const int32_t kAxis0[1] = {0};
const int32_t kLast[1] = {2};
const int32_t kOutShape[3] = {1, 6, 3};
float g_weights[3 * 4];

TensorDef Open(TensorDef t, std::vector<int32_t> signature) {
  t.shape_signature = std::move(signature);
  return t;
}

// x [1, 6, 4] (batch open) -> Dense(3) as the converter writes it:
//   s = SHAPE(x); lead = GATHER(s, [0, 1]); rows = REDUCE_PROD(lead, [0]);
//   depth = GATHER(s, [2]) -> REDUCE_PROD -> PACK(rows, depth) -> RESHAPE(x) [1, 1] (open)
//   -> FULLY_CONNECTED [1, 3] (open) -> RESHAPE to [1, 6, 3].
// `flat_signature` is the signature of the RESHAPE's placeholder output.
SubGraphDef DenseOnSequence(std::vector<int32_t> flat_signature) {
  for (int i = 0; i < 12; ++i) g_weights[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  SubGraphDef g;
  g.tensors = {
      Open(MakeTensor("x", TensorType::kFloat32, {1, 6, 4}), {-1, 6, 4}),      // 0
      MakeTensor("s", TensorType::kInt32, {3}),                                // 1
      MakeTensor("first_two", TensorType::kInt32, {2}, kFirstTwo, 8),          // 2
      MakeTensor("lead", TensorType::kInt32, {2}),                             // 3
      MakeTensor("axis0", TensorType::kInt32, {1}, kAxis0, 4),                 // 4
      MakeTensor("rows", TensorType::kInt32, {}),                              // 5
      MakeTensor("last", TensorType::kInt32, {1}, kLast, 4),                   // 6
      MakeTensor("depth1", TensorType::kInt32, {1}),                           // 7
      MakeTensor("depth", TensorType::kInt32, {}),                             // 8
      MakeTensor("stack", TensorType::kInt32, {2}),                            // 9
      Open(MakeTensor("flat", TensorType::kFloat32, {1, 1}), flat_signature),  // 10
      MakeTensor("w", TensorType::kFloat32, {3, 4}, g_weights, 48),            // 11
      Open(MakeTensor("mm", TensorType::kFloat32, {1, 3}), {-1, 3}),           // 12
      MakeTensor("out_shape", TensorType::kInt32, {3}, kOutShape, 12),         // 13
      Open(MakeTensor("y", TensorType::kFloat32, {1, 6, 3}), {-1, 6, 3}),      // 14
  };
  OperatorDef pack = MakeOp(BuiltinOp::kPack, {5, 8}, {9});
  pack.options.num = 2;
  g.operators = {
      MakeOp(BuiltinOp::kShape, {0}, {1}),
      MakeOp(BuiltinOp::kGather, {1, 2}, {3}),
      MakeOp(BuiltinOp::kReduceProd, {3, 4}, {5}),
      MakeOp(BuiltinOp::kGather, {1, 6}, {7}),
      MakeOp(BuiltinOp::kReduceProd, {7, 4}, {8}),
      pack,
      MakeOp(BuiltinOp::kReshape, {0, 9}, {10}),
      MakeOp(BuiltinOp::kFullyConnected, {10, 11, -1}, {12}),
      MakeOp(BuiltinOp::kReshape, {12, 13}, {14}),
  };
  g.inputs = {0};
  g.outputs = {14};
  return g;
}

}  // namespace

TEST(LiteShapeRefine, DenseOnADynamicBatchSequence) {
  Run r = Load(DenseOnSequence({-1, -1}));
  ASSERT_OK(r.status);
  // The placeholders got the shapes their operators give them.
  EXPECT_TRUE(r.interp->tensor(10).def->shape == (std::vector<int32_t>{6, 4}));
  EXPECT_TRUE(r.interp->tensor(12).def->shape == (std::vector<int32_t>{6, 3}));
  // The shape computation is a constant now: [6, 4].
  const TensorView stack = r.interp->tensor(9);
  ASSERT_TRUE(stack.def->data != nullptr);
  EXPECT_EQ(stack.as<int32_t>()[0], 6);
  EXPECT_EQ(stack.as<int32_t>()[1], 4);
  float x[24];
  for (int i = 0; i < 24; ++i) x[i] = 0.125f * static_cast<float>(i) - 1.0f;
  std::memcpy(r.interp->input(0).data, x, sizeof(x));
  ASSERT_OK(r.interp->Invoke());
  const float* y = r.interp->output(0).as<float>();
  for (int row = 0; row < 6; ++row) {
    for (int u = 0; u < 3; ++u) {
      float want = 0;
      for (int k = 0; k < 4; ++k) want += x[row * 4 + k] * g_weights[u * 4 + k];
      EXPECT_NEAR(y[row * 3 + u], want, 1e-5);
    }
  }
}

TEST(LiteShapeRefine, ShapesTheSignatureForbidsAreLeftToPrepare) {
  // The signature says the second dimension is 5: [6, 4] is not given, and RESHAPE names it.
  Run r = Load(DenseOnSequence({-1, 5}));
  EXPECT_TRUE(Contains(r.status, "cannot reshape [1,6,4] (24 elements) to [1,1]"));
}

TEST(LiteShapeRefine, FillOfAShapeIsFoldedAndFilled) {
  // m = FILL(SHAPE(x), 2.5) with m's batch open; y = x * m.
  const float value = 2.5f;
  SubGraphDef g;
  g.tensors = {
      Open(MakeTensor("x", TensorType::kFloat32, {1, 3, 5}), {-1, 3, 5}),
      MakeTensor("s", TensorType::kInt32, {3}),
      MakeTensor("v", TensorType::kFloat32, {}, &value, 4),
      Open(MakeTensor("m", TensorType::kFloat32, {1, 3, 5}), {-1, 3, 5}),
      Open(MakeTensor("y", TensorType::kFloat32, {1, 3, 5}), {-1, 3, 5}),
  };
  g.operators = {MakeOp(BuiltinOp::kShape, {0}, {1}), MakeOp(BuiltinOp::kFill, {1, 2}, {3}),
                 MakeOp(BuiltinOp::kMul, {0, 3}, {4})};
  g.inputs = {0};
  g.outputs = {4};
  Run r = Load(g);
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.interp->tensor(1).def->data != nullptr);  // SHAPE folded
  float x[15];
  for (int i = 0; i < 15; ++i) x[i] = static_cast<float>(i) - 7.0f;
  std::memcpy(r.interp->input(0).data, x, sizeof(x));
  ASSERT_OK(r.interp->Invoke());
  for (int i = 0; i < 15; ++i) EXPECT_EQ(r.interp->output(0).as<float>()[i], x[i] * 2.5f);

  // Constant dims that disagree with the output are refused, naming both.
  const int32_t dims[3] = {1, 3, 4};
  SubGraphDef bad = g;
  bad.tensors[1] = MakeTensor("s", TensorType::kInt32, {3}, dims, 12);
  bad.operators.erase(bad.operators.begin());
  EXPECT_TRUE(Contains(Load(bad).status, "dims 's' is [1,3,4] but the output's shape is [1,3,5]"));
  // A value that is not a scalar.
  bad = g;
  bad.tensors[2] = MakeTensor("v", TensorType::kFloat32, {2}, dims, 8);
  EXPECT_TRUE(Contains(Load(bad).status, "value 'v' has shape [2]; it must be a scalar"));
}

TEST(LiteShapeRefine, ShapeOfARunTimeSliceIsNotFolded) {
  // SLICE with a begin fed at run time: its output's shape is only known then, so SHAPE of it
  // is not evaluated from the placeholder, and Prepare refuses it as before.
  const float data[6] = {1, 2, 3, 4, 5, 6};
  const int32_t size[1] = {-1};
  SubGraphDef g;
  g.tensors = {
      MakeTensor("data", TensorType::kFloat32, {6}, data, 24),
      MakeTensor("begin", TensorType::kInt32, {1}),
      MakeTensor("size", TensorType::kInt32, {1}, size, 4),
      Open(MakeTensor("part", TensorType::kFloat32, {1}), {-1}),
      MakeTensor("s", TensorType::kInt32, {1}),
  };
  g.operators = {MakeOp(BuiltinOp::kSlice, {0, 1, 2}, {3}), MakeOp(BuiltinOp::kShape, {3}, {4})};
  g.inputs = {1};
  g.outputs = {4};
  Run r = Load(g);
  EXPECT_TRUE(
      Contains(r.status, "operator 1 (SHAPE): input 'part' has a shape known only at run time"));
}

EMBER_TEST_MAIN
