// SLICE, REVERSE_V2 and CONCATENATION of run-time shapes (kernels_slice.cc) on models written
// by hand: results against loops written here, and the refusals (at AllocateTensors for what
// the model fixes, at Invoke for run-time begin/size values), never a crash.
#include <cstring>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/writer.h"
#include "ember_test.h"
#include "lite/lite_test_util.h"

using namespace ember::lite;
using ember::lite::testing::Contains;
using ember::lite::testing::Load;
using ember::lite::testing::MakeOp;
using ember::lite::testing::MakeTensor;
using ember::lite::testing::Run;

namespace {

const int32_t kBegin[2] = {1, 1};
const int32_t kSize[2] = {2, -1};
const int32_t kAxes[2] = {0, -1};
const int64_t kAxis64[1] = {1};

}  // namespace

TEST(LiteSlice, ConstantBeginAndSize) {
  for (TensorType type : {TensorType::kFloat32, TensorType::kInt32}) {
    // x[3, 4] -> x[1:3, 1:]
    SubGraphDef g;
    g.tensors = {
        MakeTensor("x", type, {3, 4}), MakeTensor("begin", TensorType::kInt32, {2}, kBegin, 8),
        MakeTensor("size", TensorType::kInt32, {2}, kSize, 8), MakeTensor("y", type, {2, 3})};
    g.operators.push_back(MakeOp(BuiltinOp::kSlice, {0, 1, 2}, {3}));
    g.inputs = {0};
    g.outputs = {3};
    Run r = Load(g);
    ASSERT_OK(r.status);
    int32_t* x = r.interp->input(0).as<int32_t>();
    for (int i = 0; i < 12; ++i) x[i] = 100 + i;  // the same bytes serve float: compared as bits
    ASSERT_OK(r.interp->Invoke());
    const int32_t* y = r.interp->output(0).as<int32_t>();
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(y[i * 3 + j], 100 + (i + 1) * 4 + j + 1);
    }
  }
  // begin + size past the dimension, and a declared output shape the slice does not give.
  SubGraphDef bad;
  const int32_t begin[2] = {2, 0}, size[2] = {2, 4};
  bad.tensors = {MakeTensor("x", TensorType::kFloat32, {3, 4}),
                 MakeTensor("begin", TensorType::kInt32, {2}, begin, 8),
                 MakeTensor("size", TensorType::kInt32, {2}, size, 8),
                 MakeTensor("y", TensorType::kFloat32, {2, 4})};
  bad.operators.push_back(MakeOp(BuiltinOp::kSlice, {0, 1, 2}, {3}));
  bad.inputs = {0};
  bad.outputs = {3};
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 0 (SLICE): begin 2 and size 2 do not fit "
                       "dimension 0 of size 3"));
  bad.tensors[1] = MakeTensor("begin", TensorType::kInt32, {2}, kBegin, 8);
  bad.tensors[2] = MakeTensor("size", TensorType::kInt32, {2}, kSize, 8);
  EXPECT_TRUE(Contains(Load(bad).status,
                       "output 'y' has shape [2,4] but the operator produces "
                       "[2,3]"));
}

// x[4, 2]; i (INT32 [1]): y = CONCATENATION(x[:i], x[i+1:], x[i:i+1]) on axis 0, the item at
// i moved to the end, as a Keras LSTM body writes a step with SLICEs of run-time begin/size.
SubGraphDef MoveToEnd() {
  static const int32_t kZeros[2] = {0, 0};
  static const int32_t kRest[1] = {-1};
  static const int32_t kOne[1] = {1};
  static const int32_t kOneRow[2] = {1, -1};
  static const int32_t kAll[2] = {-1, -1};
  SubGraphDef g;
  g.tensors = {MakeTensor("x", TensorType::kFloat32, {4, 2}),
               MakeTensor("i", TensorType::kInt32, {1}),
               MakeTensor("zeros", TensorType::kInt32, {2}, kZeros, 8),
               MakeTensor("rest", TensorType::kInt32, {1}, kRest, 4),
               MakeTensor("head_size", TensorType::kInt32, {2}),  // (i, -1)
               MakeTensor("head", TensorType::kFloat32, {1, 1}),  // run-time [i, 2]
               MakeTensor("one", TensorType::kInt32, {1}, kOne, 4),
               MakeTensor("i1", TensorType::kInt32, {1}),
               MakeTensor("zero1", TensorType::kInt32, {1}, kZeros, 4),
               MakeTensor("tail_begin", TensorType::kInt32, {2}),  // (i + 1, 0)
               MakeTensor("tail", TensorType::kFloat32, {1, 2}),   // run-time [3 - i, 2]
               MakeTensor("item_begin", TensorType::kInt32, {2}),  // (i, 0)
               MakeTensor("one_row", TensorType::kInt32, {2}, kOneRow, 8),
               MakeTensor("item", TensorType::kFloat32, {1, 2}),  // run-time too: size -1
               MakeTensor("y", TensorType::kFloat32, {4, 2}),
               MakeTensor("all", TensorType::kInt32, {2}, kAll, 8)};
  OperatorDef concat_axis0 = MakeOp(BuiltinOp::kConcatenation, {1, 3}, {4});
  g.operators.push_back(concat_axis0);
  g.operators.push_back(MakeOp(BuiltinOp::kSlice, {0, 2, 4}, {5}));
  g.operators.push_back(MakeOp(BuiltinOp::kAdd, {1, 6}, {7}));
  g.operators.push_back(MakeOp(BuiltinOp::kConcatenation, {7, 8}, {9}));
  g.operators.push_back(MakeOp(BuiltinOp::kSlice, {0, 9, 15}, {10}));
  g.operators.push_back(MakeOp(BuiltinOp::kConcatenation, {1, 8}, {11}));
  g.operators.push_back(MakeOp(BuiltinOp::kSlice, {0, 11, 12}, {13}));
  g.operators.push_back(MakeOp(BuiltinOp::kConcatenation, {5, 10, 13}, {14}));
  g.inputs = {0, 1};
  g.outputs = {14};
  return g;
}

TEST(LiteSlice, RunTimeBeginAndSizeFeedConcatenation) {
  SubGraphDef g = MoveToEnd();
  Run r = Load(g);
  ASSERT_OK(r.status);
  float* x = r.interp->input(0).as<float>();
  for (int k = 0; k < 8; ++k) x[k] = static_cast<float>(k);
  for (int32_t i = 0; i < 4; ++i) {
    std::memcpy(r.interp->input(1).data, &i, 4);
    ASSERT_OK(r.interp->Invoke());
    const float* y = r.interp->output(0).as<float>();
    int row = 0;
    for (int src = 0; src < 4; ++src) {
      if (src == i) continue;
      EXPECT_EQ(y[row * 2], static_cast<float>(src * 2));
      EXPECT_EQ(y[row * 2 + 1], static_cast<float>(src * 2 + 1));
      ++row;
    }
    EXPECT_EQ(y[6], static_cast<float>(i * 2));
  }
  // A run-time size past the input fails Invoke, it does not read outside it.
  const int32_t far = 9;
  std::memcpy(r.interp->input(1).data, &far, 4);
  EXPECT_TRUE(Contains(r.interp->Invoke(),
                       "operator 1 (SLICE): begin 0 and size 9 do not fit dimension 0 of size 4"));
}

TEST(LiteSlice, RunTimeShapesAreRefusedWhereNotSupported) {
  SubGraphDef g = MoveToEnd();
  // RELU of the run-time-shaped head.
  SubGraphDef relu = g;
  relu.tensors.push_back(MakeTensor("r", TensorType::kFloat32, {1, 1}));
  relu.operators.push_back(
      MakeOp(BuiltinOp::kRelu, {5}, {static_cast<int32_t>(relu.tensors.size()) - 1}));
  relu.outputs.push_back(static_cast<int32_t>(relu.tensors.size()) - 1);
  EXPECT_TRUE(Contains(Load(relu).status,
                       "operator 8 (RELU): input 'head' has a shape known only "
                       "at run time"));
  // The head as a graph output.
  SubGraphDef out = g;
  out.outputs.push_back(5);
  EXPECT_TRUE(Contains(Load(out).status, "output 'head' has a shape known only at run time"));
  // Run-time shapes that do not add up to the output: x[:i] and x[i:] and the item.
  SubGraphDef sum = g;
  sum.operators[3] = MakeOp(BuiltinOp::kConcatenation, {1, 8}, {9});  // tail from i, not i + 1
  Run r = Load(sum);
  ASSERT_OK(r.status);
  const int32_t i = 1;
  std::memcpy(r.interp->input(1).data, &i, 4);
  EXPECT_TRUE(Contains(r.interp->Invoke(),
                       "(CONCATENATION): the inputs' run-time shapes add up "
                       "to 5 along axis 0, but output 'y' has shape [4,2]"));
}

TEST(LiteReverse, ReversesTheGivenAxes) {
  // x[2, 3, 4] reversed on axes 0 and -1 (two axes), and on axis 1 (an INT64 axis).
  for (int variant = 0; variant < 2; ++variant) {
    SubGraphDef g;
    g.tensors = {MakeTensor("x", TensorType::kFloat32, {2, 3, 4}),
                 variant == 0 ? MakeTensor("axes", TensorType::kInt32, {2}, kAxes, 8)
                              : MakeTensor("axes", TensorType::kInt64, {1}, kAxis64, 8),
                 MakeTensor("y", TensorType::kFloat32, {2, 3, 4})};
    g.operators.push_back(MakeOp(BuiltinOp::kReverseV2, {0, 1}, {2}));
    g.inputs = {0};
    g.outputs = {2};
    Run r = Load(g);
    ASSERT_OK(r.status);
    float* x = r.interp->input(0).as<float>();
    for (int k = 0; k < 24; ++k) x[k] = static_cast<float>(k);
    ASSERT_OK(r.interp->Invoke());
    const float* y = r.interp->output(0).as<float>();
    for (int a = 0; a < 2; ++a) {
      for (int b = 0; b < 3; ++b) {
        for (int c = 0; c < 4; ++c) {
          const int sa = variant == 0 ? 1 - a : a;
          const int sb = variant == 0 ? b : 2 - b;
          const int sc = variant == 0 ? 3 - c : c;
          EXPECT_EQ(y[(a * 3 + b) * 4 + c], static_cast<float>((sa * 3 + sb) * 4 + sc));
        }
      }
    }
  }
  // An axis outside the rank, and a STRING input, are refused at AllocateTensors.
  const int32_t bad_axis[1] = {3};
  SubGraphDef bad;
  bad.tensors = {MakeTensor("x", TensorType::kInt32, {2, 3, 4}),
                 MakeTensor("axes", TensorType::kInt32, {1}, bad_axis, 4),
                 MakeTensor("y", TensorType::kInt32, {2, 3, 4})};
  bad.operators.push_back(MakeOp(BuiltinOp::kReverseV2, {0, 1}, {2}));
  bad.inputs = {0};
  bad.outputs = {2};
  EXPECT_TRUE(Contains(Load(bad).status, "(REVERSE_V2): axis 3 is out of range for rank 3"));
  bad.tensors[1] = MakeTensor("axes", TensorType::kInt32, {1}, kAxes, 4);
  bad.tensors[2].type = TensorType::kFloat32;
  EXPECT_TRUE(Contains(Load(bad).status, "output 'y' is FLOAT32, expected INT32"));
}

// DYNAMIC_UPDATE_SLICE: an update that does not fit, or of another rank, and start indices
// of the wrong length are refused at AllocateTensors; a start past the end is clamped.
TEST(LiteSlice, DynamicUpdateSliceClampsAndRefuses) {
  static const int32_t kStart[2] = {5, -3};  // clamped to (1, 0)
  SubGraphDef g;
  g.tensors = {MakeTensor("x", TensorType::kInt32, {3, 4}),
               MakeTensor("u", TensorType::kInt32, {2, 2}),
               MakeTensor("start", TensorType::kInt32, {2}, kStart, 8),
               MakeTensor("y", TensorType::kInt32, {3, 4})};
  g.operators.push_back(MakeOp(BuiltinOp::kDynamicUpdateSlice, {0, 1, 2}, {3}));
  g.inputs = {0, 1};
  g.outputs = {3};
  Run r = Load(g);
  ASSERT_OK(r.status);
  int32_t* x = r.interp->input(0).as<int32_t>();
  for (int i = 0; i < 12; ++i) x[i] = i;
  int32_t* u = r.interp->input(1).as<int32_t>();
  for (int i = 0; i < 4; ++i) u[i] = -1 - i;
  ASSERT_OK(r.interp->Invoke());
  const int32_t want[12] = {0, 1, 2, 3, -1, -2, 6, 7, -3, -4, 10, 11};
  const int32_t* y = r.interp->output(0).as<int32_t>();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(y[i], want[i]);

  SubGraphDef bad = g;
  bad.tensors[1] = MakeTensor("u", TensorType::kInt32, {4, 1});
  EXPECT_TRUE(Contains(Load(bad).status, "update 'u' [4,1] does not fit in operand 'x' [3,4]"));
  bad.tensors[1] = MakeTensor("u", TensorType::kInt32, {2});
  EXPECT_TRUE(Contains(Load(bad).status, "update 'u' has shape [2], not the rank of operand"));
  bad = g;
  bad.tensors[2] = MakeTensor("start", TensorType::kInt32, {1}, kStart, 4);
  EXPECT_TRUE(Contains(Load(bad).status, "start_indices 'start' has shape [1], expected [2]"));
}

// CUMSUM: an axis outside the rank (constant: at AllocateTensors) and int8 are refused.
TEST(LiteSlice, CumsumRefusesBadAxisAndInt8) {
  static const int32_t kAxis[1] = {2};
  SubGraphDef g;
  g.tensors = {MakeTensor("x", TensorType::kFloat32, {3, 4}),
               MakeTensor("axis", TensorType::kInt32, {}, kAxis, 4),
               MakeTensor("y", TensorType::kFloat32, {3, 4})};
  g.operators.push_back(MakeOp(BuiltinOp::kCumsum, {0, 1}, {2}));
  g.inputs = {0};
  g.outputs = {2};
  EXPECT_TRUE(Contains(Load(g).status, "CUMSUM): axis 2 is out of range for a rank-2 input"));
  static const int32_t kLast[1] = {-1};
  g.tensors[1] = MakeTensor("axis", TensorType::kInt32, {}, kLast, 4);
  Run r = Load(g);
  ASSERT_OK(r.status);
  float* x = r.interp->input(0).as<float>();
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  ASSERT_OK(r.interp->Invoke());
  const float* y = r.interp->output(0).as<float>();
  EXPECT_EQ(y[3], 0.0f + 1 + 2 + 3);
  EXPECT_EQ(y[4], 4.0f);
  g.tensors[0] = MakeTensor("x", TensorType::kInt8, {3, 4});
  g.tensors[2] = MakeTensor("y", TensorType::kInt8, {3, 4});
  EXPECT_TRUE(Contains(Load(g).status, "INT8"));
}

EMBER_TEST_MAIN
