// ARG_MAX/ARG_MIN, FULLY_CONNECTED with run-time weights, LOG_SOFTMAX, L2_NORMALIZATION,
// MIRROR_PAD and REDUCE_PROD on models written by hand: edge cases against values worked out
// here (ties, the L2 epsilon, mirrored borders, repeated axes), and every refusal, which names
// the operator and the tensor. engine/testdata/lite/models' extra_builtins(_int8) compare them
// with LiteRT.
#include <cmath>
#include <cstdio>
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
using ember::lite::testing::Quantized;
using ember::lite::testing::Run;

namespace {

// One operator: inputs 0..n_in-1 of `tensors` (the non-constant ones are graph inputs), the last
// tensor its output.
SubGraphDef OneOp(BuiltinOp op, std::vector<TensorDef> tensors, size_t n_in) {
  SubGraphDef g;
  g.tensors = std::move(tensors);
  std::vector<int32_t> ins;
  for (size_t i = 0; i < n_in; ++i) {
    ins.push_back(static_cast<int32_t>(i));
    if (g.tensors[i].data == nullptr) g.inputs.push_back(static_cast<int32_t>(i));
  }
  const int32_t out = static_cast<int32_t>(g.tensors.size() - 1);
  g.operators.push_back(MakeOp(op, ins, {out}));
  g.outputs = {out};
  return g;
}

const int32_t kAxis1[1] = {1};
const int64_t kAxisNeg64[1] = {-1};
const int32_t kAxis5[1] = {5};

}  // namespace

// Ties give the lowest index; a negative int64 axis counts from the end.
TEST(LiteOpsExtra, ArgMaxArgMinTiesAndAxes) {
  SubGraphDef g = OneOp(BuiltinOp::kArgMax,
                        {MakeTensor("x", TensorType::kFloat32, {2, 4}),
                         MakeTensor("axis", TensorType::kInt64, {1}, kAxisNeg64, 8),
                         MakeTensor("y", TensorType::kInt64, {2})},
                        2);
  g.operators[0].options.arg_output_type = static_cast<int8_t>(TensorType::kInt64);
  Run r = Load(g);
  ASSERT_OK(r.status);
  const float x[8] = {1, 3, 3, 2, -1, -5, -5, -1};
  float* in = r.interp->input(0).as<float>();
  for (int i = 0; i < 8; ++i) in[i] = x[i];
  ASSERT_OK(r.interp->Invoke());
  EXPECT_EQ(r.interp->output(0).as<int64_t>()[0], 1);
  EXPECT_EQ(r.interp->output(0).as<int64_t>()[1], 0);

  SubGraphDef m = OneOp(BuiltinOp::kArgMin,
                        {MakeTensor("x", TensorType::kInt8, {3, 2}),
                         MakeTensor("axis", TensorType::kInt32, {}, kAxis1, 4),
                         MakeTensor("y", TensorType::kInt32, {3})},
                        2);
  m.operators[0].options.arg_output_type = static_cast<int8_t>(TensorType::kInt32);
  m.tensors[0].quant.scale = {0.5f};
  m.tensors[0].quant.zero_point = {3};
  Run rm = Load(m);
  ASSERT_OK(rm.status);
  const int8_t xm[6] = {4, -7, 9, 9, -128, 127};
  int8_t* im = rm.interp->input(0).as<int8_t>();
  for (int i = 0; i < 6; ++i) im[i] = xm[i];
  ASSERT_OK(rm.interp->Invoke());
  EXPECT_EQ(rm.interp->output(0).as<int32_t>()[0], 1);
  EXPECT_EQ(rm.interp->output(0).as<int32_t>()[1], 0);
  EXPECT_EQ(rm.interp->output(0).as<int32_t>()[2], 0);
}

TEST(LiteOpsExtra, ArgMaxRefusals) {
  const SubGraphDef base = OneOp(BuiltinOp::kArgMax,
                                 {MakeTensor("x", TensorType::kFloat32, {2, 4}),
                                  MakeTensor("axis", TensorType::kInt32, {1}, kAxis1, 4),
                                  MakeTensor("y", TensorType::kInt32, {2})},
                                 2);
  SubGraphDef g = base;  // output_type absent: FLOAT32
  EXPECT_TRUE(Contains(Load(g).status, "(ARG_MAX): output_type FLOAT32 is not an index type"));
  g.operators[0].options.arg_output_type = static_cast<int8_t>(TensorType::kInt64);
  EXPECT_TRUE(Contains(Load(g).status, "output 'y' is INT32, expected INT64"));
  g = base;
  g.operators[0].options.arg_output_type = static_cast<int8_t>(TensorType::kInt32);
  ASSERT_OK(Load(g).status);
  g.tensors[1] = MakeTensor("axis", TensorType::kInt32, {1}, kAxis5, 4);
  EXPECT_TRUE(Contains(Load(g).status, "axis 5 is out of range for the rank-2 input 'x'"));
  g.tensors[1] = MakeTensor("axis", TensorType::kInt32, {1});
  g.inputs = {0, 1};
  EXPECT_TRUE(Contains(Load(g).status, "axis 'axis' is computed at run time"));
  g = base;
  g.operators[0].op = BuiltinOp::kArgMin;
  g.operators[0].options.arg_output_type = static_cast<int8_t>(TensorType::kInt32);
  g.tensors[0] = MakeTensor("x", TensorType::kBool, {2, 4});
  EXPECT_TRUE(Contains(Load(g).status, "(ARG_MIN): input 'x' is BOOL"));
  g = base;
  g.operators[0].options.arg_output_type = static_cast<int8_t>(TensorType::kInt32);
  g.tensors[2] = MakeTensor("y", TensorType::kInt32, {4});
  EXPECT_TRUE(Contains(Load(g).status, "output 'y' has shape [4] but the operator produces [2]"));
  g = base;
  g.operators[0].version = 3;  // BOOL input
  EXPECT_TRUE(Contains(Load(g).status, "ARG_MAX version 3 is not supported"));
}

// Weights from another operator's output (here a graph input): float with a bias and RELU,
// keep_num_dims; refusals of the wrong weight type, bias size and per-channel int8 weights.
TEST(LiteOpsExtra, FullyConnectedRunTimeWeights) {
  static const float kBias[3] = {0.5f, -100.0f, 0.0f};
  SubGraphDef g = OneOp(BuiltinOp::kFullyConnected,
                        {MakeTensor("x", TensorType::kFloat32, {1, 2, 2}),
                         MakeTensor("w", TensorType::kFloat32, {3, 2}),
                         MakeTensor("b", TensorType::kFloat32, {3}, kBias, 12),
                         MakeTensor("y", TensorType::kFloat32, {1, 2, 3})},
                        3);
  g.operators[0].options.keep_num_dims = true;
  g.operators[0].options.activation = Activation::kRelu;
  Run r = Load(g);
  ASSERT_OK(r.status);
  const float x[4] = {1, 2, 3, -4};
  const float w[6] = {1, 1, 2, -1, 0.5f, 0.25f};
  for (int i = 0; i < 4; ++i) r.interp->input(0).as<float>()[i] = x[i];
  for (int i = 0; i < 6; ++i) r.interp->input(1).as<float>()[i] = w[i];
  ASSERT_OK(r.interp->Invoke());
  const float want[6] = {3.5f, 0.0f, 1.0f, 0.0f, 0.0f, 0.5f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.interp->output(0).as<float>()[i], want[i]);

  SubGraphDef bad = g;
  bad.tensors[1] = MakeTensor("w", TensorType::kInt32, {3, 2});
  EXPECT_TRUE(Contains(Load(bad).status, "run-time weights 'w' is INT32, expected FLOAT32"));
  bad = g;
  bad.tensors[2] = MakeTensor("b", TensorType::kFloat32, {2}, kBias, 8);
  EXPECT_TRUE(Contains(Load(bad).status, "bias 'b' has 2 elements, expected 3"));
  bad = g;
  bad.tensors[1] = MakeTensor("w", TensorType::kFloat32, {3, 4});
  EXPECT_TRUE(Contains(Load(bad).status, "keep_num_dims needs the input's last dimension"));
  bad =
      OneOp(BuiltinOp::kFullyConnected,
            {MakeTensor("x", TensorType::kInt8, {2, 2}), MakeTensor("w", TensorType::kInt8, {3, 2}),
             MakeTensor("y", TensorType::kInt8, {2, 3})},
            2);
  for (int i : {0, 2}) {
    bad.tensors[static_cast<size_t>(i)].quant.scale = {0.1f};
    bad.tensors[static_cast<size_t>(i)].quant.zero_point = {1};
  }
  bad.tensors[1].quant.scale = {0.1f, 0.2f, 0.3f};
  bad.tensors[1].quant.zero_point = {0, 0, 0};
  EXPECT_TRUE(Contains(Load(bad).status, "run-time weights 'w' is quantized per channel"));
  bad.tensors[1].quant.scale = {0.1f};
  bad.tensors[1].quant.zero_point = {-5};
  ASSERT_OK(Load(bad).status);
}

TEST(LiteOpsExtra, LogSoftmaxAndL2Normalization) {
  SubGraphDef g = OneOp(BuiltinOp::kLogSoftmax,
                        {MakeTensor("x", TensorType::kFloat32, {2, 3}),
                         MakeTensor("y", TensorType::kFloat32, {2, 3})},
                        1);
  Run r = Load(g);
  ASSERT_OK(r.status);
  const float x[6] = {0, 0, 0, 1000, 0, -1000};
  for (int i = 0; i < 6; ++i) r.interp->input(0).as<float>()[i] = x[i];
  ASSERT_OK(r.interp->Invoke());
  const float* y = r.interp->output(0).as<float>();
  EXPECT_NEAR(y[0], -std::log(3.0f), 1e-6);
  EXPECT_EQ(y[3], 0.0f);  // no overflow: the row's max is subtracted first
  EXPECT_EQ(y[4], -1000.0f);
  SubGraphDef bad = g;
  bad.tensors[0] = MakeTensor("x", TensorType::kInt16, {2, 3});
  bad.tensors[1] = MakeTensor("y", TensorType::kInt16, {2, 3});
  EXPECT_TRUE(Contains(Load(bad).status, "(LOG_SOFTMAX): input 'x' is INT16"));
  bad.operators[0].version = 3;
  EXPECT_TRUE(Contains(Load(bad).status, "LOG_SOFTMAX version 3 is not supported"));
  // int8 writes onto LiteRT's fixed output scale 16/256, zero point 127: the largest input
  // of a row is log(1) = 0 there (127), one far below it saturates at -128.
  bad = g;
  bad.operators[0].version = 2;
  bad.tensors[0] = MakeTensor("x", TensorType::kInt8, {2, 3});
  bad.tensors[1] = MakeTensor("y", TensorType::kInt8, {2, 3});
  bad.tensors[0].quant.scale = {0.1f};
  bad.tensors[0].quant.zero_point = {0};
  bad.tensors[1].quant.scale = {16.0f / 256.0f};
  bad.tensors[1].quant.zero_point = {127};
  Run ls = Load(bad);
  ASSERT_OK(ls.status);
  const int8_t xs[6] = {0, 0, 0, 100, -128, 90};
  for (int i = 0; i < 6; ++i) ls.interp->input(0).as<int8_t>()[i] = xs[i];
  ASSERT_OK(ls.interp->Invoke());
  const int8_t* ys = ls.interp->output(0).as<int8_t>();
  EXPECT_NEAR(ys[0], 127 - std::log(3.0) * 16, 1.0);  // -log(3) / (1/16) from 127
  EXPECT_EQ(static_cast<int>(ys[4]), -128);
  EXPECT_NEAR(ys[5], 127 - 16 * (1.0 + std::log1p(std::exp(-1.0))), 1.0);
  bad.tensors[1].quant.zero_point = {0};
  EXPECT_TRUE(Contains(Load(bad).status, "int8 output 'y' has scale 0.062500 and zero point 0"));

  g.operators[0].op = BuiltinOp::kL2Normalization;
  Run n = Load(g);
  ASSERT_OK(n.status);
  const float v[6] = {0, 0, 0, 3e-7f, -4e-7f, 0};  // a zero row; a norm below the epsilon
  for (int i = 0; i < 6; ++i) n.interp->input(0).as<float>()[i] = v[i];
  ASSERT_OK(n.interp->Invoke());
  const float* z = n.interp->output(0).as<float>();
  EXPECT_EQ(z[0], 0.0f);
  EXPECT_NEAR(z[3], 0.3f, 1e-6);  // x / max(5e-7, 1e-6)
  EXPECT_NEAR(z[4], -0.4f, 1e-6);
  bad = g;
  bad.operators[0].op = BuiltinOp::kL2Normalization;
  bad.operators[0].options.activation = Activation::kRelu;
  EXPECT_TRUE(Contains(Load(bad).status, "(L2_NORMALIZATION): a fused activation"));
  bad = OneOp(BuiltinOp::kL2Normalization,
              {MakeTensor("x", TensorType::kFloat32, {1, 1, 1, 2, 3}),
               MakeTensor("y", TensorType::kFloat32, {1, 1, 1, 2, 3})},
              1);
  EXPECT_TRUE(Contains(Load(bad).status, "input 'x' has rank 5; ranks 1-4 are supported"));

  // int8: onto the fixed output scale 1/128 (3/5 and 4/5 of 128, rounded), which is required.
  SubGraphDef q = OneOp(
      BuiltinOp::kL2Normalization,
      {MakeTensor("x", TensorType::kInt8, {2, 2}), MakeTensor("y", TensorType::kInt8, {2, 2})}, 1);
  q.operators[0].version = 2;
  q.tensors[0].quant.scale = {0.25f};
  q.tensors[0].quant.zero_point = {-1};
  q.tensors[1].quant.scale = {1.0f / 128.0f};
  q.tensors[1].quant.zero_point = {0};
  Run rq = Load(q);
  ASSERT_OK(rq.status);
  const int8_t xq[4] = {2, 3, -1, -1};  // differences (3, 4) and a zero row
  for (int i = 0; i < 4; ++i) rq.interp->input(0).as<int8_t>()[i] = xq[i];
  ASSERT_OK(rq.interp->Invoke());
  const int8_t* yq = rq.interp->output(0).as<int8_t>();
  EXPECT_EQ(static_cast<int>(yq[0]), 77);
  EXPECT_EQ(static_cast<int>(yq[1]), 102);
  EXPECT_EQ(static_cast<int>(yq[2]), 0);
  q.tensors[1].quant.scale = {1.0f / 127.0f};
  EXPECT_TRUE(Contains(Load(q).status, "int8 output 'y' has scale"));
}

TEST(LiteOpsExtra, MirrorPadModesAndRefusals) {
  static const int64_t kPads[4] = {1, 2, 3, 3};  // [2, 3] input -> [5, 9]
  SubGraphDef g = OneOp(BuiltinOp::kMirrorPad,
                        {MakeTensor("x", TensorType::kInt32, {2, 3}),
                         MakeTensor("pads", TensorType::kInt64, {2, 2}, kPads, 32),
                         MakeTensor("y", TensorType::kInt32, {5, 9})},
                        2);
  g.operators[0].options.mirror_mode = 1;  // SYMMETRIC
  Run r = Load(g);
  ASSERT_OK(r.status);
  for (int i = 0; i < 6; ++i) r.interp->input(0).as<int32_t>()[i] = i;  // rows 012, 345
  ASSERT_OK(r.interp->Invoke());
  // Rows: 0 (mirror of row 0), 0, 1, 1, 0; columns 2 1 0 | 0 1 2 | 2 1 0.
  const int rows[5] = {0, 0, 1, 1, 0};
  const int cols[9] = {2, 1, 0, 0, 1, 2, 2, 1, 0};
  const int32_t* y = r.interp->output(0).as<int32_t>();
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 9; ++j) EXPECT_EQ(y[i * 9 + j], rows[i] * 3 + cols[j]);
  }
  // REFLECT may pad at most dim - 1.
  g.operators[0].options.mirror_mode = 0;
  EXPECT_TRUE(Contains(Load(g).status,
                       "(MIRROR_PAD): paddings [1,2] of dimension 0 (size 2) must be between 0 and "
                       "1 in REFLECT mode"));
  static const int32_t kReflect[4] = {1, 1, 2, 0};  // [2, 3] -> [4, 5]
  g.tensors[1] = MakeTensor("pads", TensorType::kInt32, {2, 2}, kReflect, 16);
  g.tensors[2] = MakeTensor("y", TensorType::kInt32, {4, 5});
  Run f = Load(g);
  ASSERT_OK(f.status);
  for (int i = 0; i < 6; ++i) f.interp->input(0).as<int32_t>()[i] = i;
  ASSERT_OK(f.interp->Invoke());
  const int32_t want[20] = {5, 4, 3, 4, 5, 2, 1, 0, 1, 2, 5, 4, 3, 4, 5, 2, 1, 0, 1, 2};
  for (int i = 0; i < 20; ++i) EXPECT_EQ(f.interp->output(0).as<int32_t>()[i], want[i]);

  SubGraphDef bad = g;
  bad.tensors[1] = MakeTensor("pads", TensorType::kInt32, {2, 2});
  bad.inputs = {0, 1};
  EXPECT_TRUE(Contains(Load(bad).status, "paddings 'pads' are computed at run time"));
  bad = g;
  bad.tensors[1] = MakeTensor("pads", TensorType::kInt32, {1, 4}, kReflect, 16);
  EXPECT_TRUE(Contains(Load(bad).status, "paddings 'pads' have shape [1,4], expected [2,2]"));
  bad = g;
  bad.tensors[0] = MakeTensor("x", TensorType::kInt16, {2, 3});
  bad.tensors[2] = MakeTensor("y", TensorType::kInt16, {4, 5});
  EXPECT_TRUE(Contains(Load(bad).status, "input 'x' is INT16"));
  bad = g;
  bad.tensors[2] = MakeTensor("y", TensorType::kInt32, {4, 6});
  EXPECT_TRUE(Contains(Load(bad).status, "output 'y' has shape [4,6]"));
}

TEST(LiteOpsExtra, ReduceProdAxesAndRefusals) {
  static const int32_t kAxes[3] = {0, -1, 2};  // repeated: rank 3, -1 is 2
  SubGraphDef g = OneOp(BuiltinOp::kReduceProd,
                        {MakeTensor("x", TensorType::kInt32, {2, 3, 2}),
                         MakeTensor("axes", TensorType::kInt32, {3}, kAxes, 12),
                         MakeTensor("y", TensorType::kInt32, {1, 3, 1})},
                        2);
  g.operators[0].options.keep_dims = true;
  Run r = Load(g);
  ASSERT_OK(r.status);
  for (int i = 0; i < 12; ++i) r.interp->input(0).as<int32_t>()[i] = i + 1;
  ASSERT_OK(r.interp->Invoke());
  // Middle index m: elements 2m+1, 2m+2 (batch 0) and 2m+7, 2m+8 (batch 1).
  for (int m = 0; m < 3; ++m) {
    EXPECT_EQ(r.interp->output(0).as<int32_t>()[m],
              (2 * m + 1) * (2 * m + 2) * (2 * m + 7) * (2 * m + 8));
  }
  SubGraphDef bad = g;
  bad.operators[0].options.keep_dims = false;
  EXPECT_TRUE(Contains(Load(bad).status,
                       "(REDUCE_PROD): output 'y' has shape [1,3,1] but the "
                       "operator produces [3]"));
  bad = g;
  bad.tensors[1] = MakeTensor("axes", TensorType::kInt32, {3});
  bad.inputs = {0, 1};
  EXPECT_TRUE(Contains(Load(bad).status, "axes 'axes' are computed at run time"));
  bad = g;
  bad.tensors[0] = MakeTensor("x", TensorType::kInt8, {2, 3, 2});
  bad.tensors[2] = MakeTensor("y", TensorType::kInt8, {1, 3, 1});
  EXPECT_TRUE(Contains(Load(bad).status, "input 'x' is INT8"));
  bad.operators[0].version = 2;
  EXPECT_TRUE(Contains(Load(bad).status, "REDUCE_PROD version 2 is not supported"));
  static const int32_t kFar[1] = {3};
  bad = g;
  bad.tensors[1] = MakeTensor("axes", TensorType::kInt32, {1}, kFar, 4);
  EXPECT_TRUE(Contains(Load(bad).status, "axis 3 is out of range for the rank-3 input 'x'"));
}

// int8 DIV (LiteRT's DivElementwise; converted softsign models are compared with LiteRT in
// tests/lite/test_lite_fast_paths.py): a divisor at its zero point fails Invoke, naming the
// operator, where LiteRT's arithmetic is undefined.
TEST(LiteOpsExtra, Int8DivByZeroFailsInvoke) {
  SubGraphDef g = OneOp(BuiltinOp::kDiv,
                        {Quantized(MakeTensor("x", TensorType::kInt8, {3}), 0.1f, 2),
                         Quantized(MakeTensor("d", TensorType::kInt8, {3}), 0.05f, -4),
                         Quantized(MakeTensor("y", TensorType::kInt8, {3}), 0.2f, 0)},
                        2);
  Run r = Load(g);
  ASSERT_OK(r.status);
  const int8_t x[3] = {17, -8, 2};  // 1.5, -1.0, 0
  const int8_t d[3] = {36, 16, 6};  // 2.0, 1.0, 0.5
  std::memcpy(r.interp->input(0).data, x, 3);
  std::memcpy(r.interp->input(1).data, d, 3);
  ASSERT_OK(r.interp->Invoke());
  const int8_t* y = r.interp->output(0).as<int8_t>();
  EXPECT_EQ(static_cast<int>(y[0]), 4);   // 0.75 / 0.2 = 3.75
  EXPECT_EQ(static_cast<int>(y[1]), -5);  // -1.0 / 0.2
  EXPECT_EQ(static_cast<int>(y[2]), 0);
  const int8_t zero[3] = {36, -4, 6};
  std::memcpy(r.interp->input(1).data, zero, 3);
  EXPECT_TRUE(Contains(r.interp->Invoke(), "operator 0 (DIV): division by zero"));
}

// int8 SQRT (LiteRT's SqrtEvalQuantized: the root truncated, not rounded): a value below the zero
// point fails Invoke as in LiteRT.
TEST(LiteOpsExtra, Int8SqrtTruncatesAndRefusesNegatives) {
  SubGraphDef g = OneOp(BuiltinOp::kSqrt,
                        {Quantized(MakeTensor("x", TensorType::kInt8, {3}), 0.25f, -10),
                         Quantized(MakeTensor("y", TensorType::kInt8, {3}), 0.1f, 3)},
                        1);
  Run r = Load(g);
  ASSERT_OK(r.status);
  const int8_t x[3] = {-10, -6, -7};  // 0, 1, 0.75
  std::memcpy(r.interp->input(0).data, x, 3);
  ASSERT_OK(r.interp->Invoke());
  const int8_t* y = r.interp->output(0).as<int8_t>();
  EXPECT_EQ(static_cast<int>(y[0]), 3);      // 0
  EXPECT_EQ(static_cast<int>(y[1]), 13);     // 1 / 0.1
  EXPECT_EQ(static_cast<int>(y[2]), 8 + 3);  // 0.866 / 0.1 = 8.66: truncated, not rounded
  const int8_t negative[3] = {-10, -11, 0};
  std::memcpy(r.interp->input(0).data, negative, 3);
  EXPECT_TRUE(Contains(r.interp->Invoke(), "SQRT is only defined for non-negative values"));
}

EMBER_TEST_MAIN

// SHAPE: the input's dims as INT32 (the default out_type) or INT64, through the writer and the
// reader; an out_type that is neither, or an output of the wrong type or length, is refused.
TEST(LiteOpsExtra, ShapeGivesTheDimsAsInt32OrInt64) {
  SubGraphDef g = OneOp(BuiltinOp::kShape,
                        {MakeTensor("x", TensorType::kFloat32, {2, 3, 5}),
                         MakeTensor("dims", TensorType::kInt32, {3})},
                        1);
  Run r = Load(g);
  ASSERT_OK(r.status);
  ASSERT_OK(r.interp->Invoke());
  const int32_t* d = r.interp->output(0).as<int32_t>();
  EXPECT_TRUE(d[0] == 2 && d[1] == 3 && d[2] == 5);

  SubGraphDef g64 = OneOp(
      BuiltinOp::kShape,
      {MakeTensor("x", TensorType::kInt8, {7, 1}), MakeTensor("dims", TensorType::kInt64, {2})}, 1);
  g64.tensors[0].quant.scale = {0.5f};
  g64.tensors[0].quant.zero_point = {0};
  g64.operators[0].options.shape_out_type = static_cast<int8_t>(TensorType::kInt64);
  Run r64 = Load(g64);
  ASSERT_OK(r64.status);
  ASSERT_OK(r64.interp->Invoke());
  EXPECT_EQ(r64.interp->output(0).as<int64_t>()[0], 7);
  EXPECT_EQ(r64.interp->output(0).as<int64_t>()[1], 1);

  SubGraphDef bad_type = g;
  bad_type.operators[0].options.shape_out_type = static_cast<int8_t>(TensorType::kFloat32);
  EXPECT_TRUE(Contains(Load(bad_type).status, "out_type FLOAT32 is not INT32 or INT64"));
  SubGraphDef mismatch = g;
  mismatch.operators[0].options.shape_out_type = static_cast<int8_t>(TensorType::kInt64);
  EXPECT_TRUE(Contains(Load(mismatch).status, "operator 0 (SHAPE)"));
  SubGraphDef short_out = g;
  short_out.tensors[1].shape = {2};
  EXPECT_TRUE(Contains(Load(short_out).status, "'dims'"));
}
