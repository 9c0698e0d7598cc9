// DEQUANTIZE of constants (float16 models' weights, int8 weights of dynamic-range models),
// computed once at AllocateTensors (src/lite/fold_dequantize.cc): binary16 conversion of every
// class of value, per-channel int8, a folded tensor that is the graph's output, the operator
// not run at Invoke, and the refusals.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/writer.h"
#include "ember_test.h"
#include "lite/kernels.h"
#include "lite/lite_test_util.h"

using namespace ember::lite;
using ember::lite::testing::MakeOp;
using ember::lite::testing::MakeTensor;

namespace {

ember::StatusOr<std::unique_ptr<Interpreter>> Load(const SubGraphDef& g) {
  auto bytes = WriteModel(g);
  if (!bytes.ok()) return bytes.status();
  auto model = Model::FromBytes(*bytes);
  if (!model.ok()) return model.status();
  auto interp = Interpreter::Create(*model);
  if (!interp.ok()) return interp.status();
  ember::Status s = (*interp)->AllocateTensors();
  if (!s.ok()) return s;
  return interp;
}

}  // namespace

TEST(LiteFold, HalfToFloatCoversEveryClass) {
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);                   // largest normal
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));      // smallest normal
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));      // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x83ff), -std::ldexp(1023.0f, -24));  // largest subnormal, negative
  EXPECT_EQ(HalfToFloat(0x3555), 0.25f + 0x155 * std::ldexp(1.0f, -12));  // 0.333251953125
  EXPECT_EQ(HalfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(HalfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)) && HalfToFloat(0x8000) == 0.0f);
}

// x[1, 3] -> FULLY_CONNECTED with DEQUANTIZE(float16 weights [2, 3]); the folded operator is not
// among the operators Invoke runs.
TEST(LiteFold, Float16WeightsFeedFullyConnected) {
  static const uint16_t kW[6] = {0x3c00, 0x4000, 0xbc00, 0x3800, 0x0000, 0x4400};  // 1 2 -1 .5 0 4
  SubGraphDef g;
  g.tensors = {MakeTensor("x", TensorType::kFloat32, {1, 3}),
               MakeTensor("w16", TensorType::kFloat16, {2, 3}, kW, sizeof kW),
               MakeTensor("w", TensorType::kFloat32, {2, 3}),
               MakeTensor("y", TensorType::kFloat32, {1, 2})};
  g.operators.push_back(MakeOp(BuiltinOp::kDequantize, {1}, {2}));
  g.operators.push_back(MakeOp(BuiltinOp::kFullyConnected, {0, 2, -1}, {3}));
  g.inputs = {0};
  g.outputs = {3};
  auto interp = Load(g);
  ASSERT_OK(interp.status());
  float* x = (*interp)->input(0).as<float>();
  x[0] = 1;
  x[1] = 10;
  x[2] = 100;
  (*interp)->EnableProfiling(true);
  ASSERT_OK((*interp)->Invoke());
  const float* y = (*interp)->output(0).as<float>();
  EXPECT_EQ(y[0], 1 + 20 - 100.0f);
  EXPECT_EQ(y[1], 0.5f + 0 + 400);
  ASSERT_TRUE((*interp)->operator_times().size() == 1);
  EXPECT_TRUE((*interp)->operator_times()[0].label.find("FULLY_CONNECTED") != std::string::npos);
}

// Per-channel int8 along dimension 1, folded into the graph's output itself.
TEST(LiteFold, PerChannelInt8IsTheGraphOutput) {
  static const int8_t kQ[6] = {-128, 0, 127, 5, -5, 1};  // [2, 3], channels along dim 1
  SubGraphDef g;
  TensorDef q = MakeTensor("q", TensorType::kInt8, {2, 3}, kQ, sizeof kQ);
  q.quant.scale = {0.5f, 0.25f, 2.0f};
  q.quant.zero_point = {0, 1, -1};
  q.quant.quantized_dimension = 1;
  g.tensors = {MakeTensor("x", TensorType::kFloat32, {1}), q,
               MakeTensor("y", TensorType::kFloat32, {2, 3})};
  g.operators.push_back(MakeOp(BuiltinOp::kDequantize, {1}, {2}));
  g.inputs = {0};
  g.outputs = {2};
  auto interp = Load(g);
  ASSERT_OK(interp.status());
  ASSERT_OK((*interp)->Invoke());
  const float want[6] = {-64, -0.25f, 256, 2.5f, -1.5f, 4};
  const float* y = (*interp)->output(0).as<float>();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], want[i]);

  g.tensors[1].quant.quantized_dimension = 0;  // 3 scales along a dimension of 2: refused at load
  auto bad = Load(g);
  EXPECT_TRUE(!bad.ok() && bad.status().message().find(
                               "tensor 1 ('q'): 3 per-channel scales for dimension 0 of size 2") !=
                               std::string::npos);
  g.tensors[1].quant.quantized_dimension = 1;
  g.tensors[2].shape = {3, 2};
  bad = Load(g);
  EXPECT_TRUE(!bad.ok() && bad.status().message().find("must be FLOAT32 of input 'q''s shape") !=
                               std::string::npos);
}

EMBER_TEST_MAIN
