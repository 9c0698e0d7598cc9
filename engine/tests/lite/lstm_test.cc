// UNIDIRECTIONAL_SEQUENCE_LSTM on a model written by hand: the variable state tensors through the
// writer and the reader (zero at AllocateTensors, carried to the next Invoke), one step against
// the LSTM equations, and the refusals naming the operator and tensor. Converted Keras 2 LSTMs
// (and the op's peephole / projection / layer-norm / CIFG forms) are compared with LiteRT in
// tests/lite/test_lite_models.py.
#include <cmath>
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

// One cell, one input, one time step unless `time` says otherwise; weights wx for x, wh for h.
const float kWx[4] = {0.5f, -0.25f, 1.0f, 0.75f};  // input, forget, cell, output gates
const float kWh[4] = {0.1f, 0.2f, -0.3f, 0.4f};
const float kBias[4] = {0.05f, 1.0f, 0.0f, -0.1f};

SubGraphDef OneCell(int time) {
  SubGraphDef g;
  g.tensors.push_back(MakeTensor("x", TensorType::kFloat32, {1, time, 1}));  // 0
  for (int k = 0; k < 4; ++k) {
    g.tensors.push_back(
        MakeTensor("wx" + std::to_string(k), TensorType::kFloat32, {1, 1}, &kWx[k], 4));
  }  // 1-4
  for (int k = 0; k < 4; ++k) {
    g.tensors.push_back(
        MakeTensor("wh" + std::to_string(k), TensorType::kFloat32, {1, 1}, &kWh[k], 4));
  }  // 5-8
  for (int k = 0; k < 4; ++k) {
    g.tensors.push_back(
        MakeTensor("b" + std::to_string(k), TensorType::kFloat32, {1}, &kBias[k], 4));
  }  // 9-12
  TensorDef h = MakeTensor("h", TensorType::kFloat32, {1, 1});
  h.is_variable = true;
  TensorDef c = MakeTensor("c", TensorType::kFloat32, {1, 1});
  c.is_variable = true;
  g.tensors.push_back(h);                                                    // 13
  g.tensors.push_back(c);                                                    // 14
  g.tensors.push_back(MakeTensor("y", TensorType::kFloat32, {1, time, 1}));  // 15
  OperatorDef op =
      MakeOp(BuiltinOp::kUnidirectionalSequenceLstm,
             {0, 1, 2, 3, 4, 5, 6, 7, 8, -1, -1, -1, 9, 10, 11, 12, -1, -1, 13, 14}, {15});
  op.options.lstm_activation = 4;  // TANH
  g.operators = {op};
  g.inputs = {0};
  g.outputs = {15};
  return g;
}

float Sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// One step of the LSTM equations from (h, c); returns the new h and updates both.
float Step(float x, float* h, float* c) {
  const float i = Sigmoid(kBias[0] + kWx[0] * x + kWh[0] * *h);
  const float f = Sigmoid(kBias[1] + kWx[1] * x + kWh[1] * *h);
  const float g = std::tanh(kBias[2] + kWx[2] * x + kWh[2] * *h);
  const float o = Sigmoid(kBias[3] + kWx[3] * x + kWh[3] * *h);
  *c = f * *c + i * g;
  *h = o * std::tanh(*c);
  return *h;
}

}  // namespace

TEST(LiteLstm, StateStartsAtZeroAndCarriesOver) {
  Run r = Load(OneCell(3));
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.interp->tensor(13).def->is_variable);  // through the writer and the reader
  const float x[3] = {0.5f, -1.0f, 2.0f};
  float h = 0, c = 0;
  for (int invoke = 0; invoke < 2; ++invoke) {
    std::memcpy(r.interp->input(0).data, x, sizeof(x));
    ASSERT_OK(r.interp->Invoke());
    for (int t = 0; t < 3; ++t) {
      const float want = Step(x[t], &h, &c);
      EXPECT_NEAR(r.interp->output(0).as<float>()[t], want, 1e-6);
    }
  }
  EXPECT_NEAR(r.interp->tensor(14).as<float>()[0], c, 1e-6);  // the cell state is kept
}

TEST(LiteLstm, Refusals) {
  SubGraphDef g = OneCell(2);
  SubGraphDef bad = g;
  bad.tensors[13].is_variable = false;
  EXPECT_TRUE(Contains(Load(bad).status, "no data and no earlier operator writes"));
  bad = g;
  bad.tensors[0].type = TensorType::kInt8;
  bad.tensors[0].quant.scale = {0.1f};
  bad.tensors[0].quant.zero_point = {0};
  bad.tensors[15] = bad.tensors[0];
  bad.tensors[15].name = "y";
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 'x' is INT8; only the "
                       "float32 LSTM is supported"));
  bad = g;
  bad.operators[0].options.lstm_activation = 5;
  EXPECT_TRUE(Contains(Load(bad).status, "activation 5 is not supported"));
  bad = g;
  bad.operators[0].inputs[2] = -1;
  EXPECT_TRUE(Contains(Load(bad).status, "the forget gate's weights must be 2-D matrices"));
  bad = g;
  bad.tensors[15].shape = {1, 3, 1};
  EXPECT_TRUE(Contains(Load(bad).status, "output 'y'"));
  bad = g;
  bad.operators[0].inputs[9] = 5;  // one peephole of three
  EXPECT_TRUE(Contains(Load(bad).status, "peephole weights must be all present or all absent"));
}

EMBER_TEST_MAIN
