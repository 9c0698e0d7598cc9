// int8 activations and elementwise ops (src/lite/kernels_int8_misc.cc): what LiteRT refuses is
// refused with a clear error (LOGISTIC's output scale, int16 versions, RSQRT of a negative value,
// too small output scales, int16 SUB), and LEAKY_RELU's alpha survives the writer. Their values are
// checked against LiteRT by the `ops_int8` model of engine/testdata/lite/models (tests/lite,
// pytest).
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/writer.h"
#include "ember_test.h"

using namespace ember::lite;

namespace {

TensorDef Int8Tensor(const std::string& name, std::vector<int32_t> shape, float scale, int64_t zp) {
  TensorDef t;
  t.name = name;
  t.type = TensorType::kInt8;
  t.shape = std::move(shape);
  t.quant.scale = {scale};
  t.quant.zero_point = {zp};
  return t;
}

// x[1,4] -> OP -> y[1,4] (a second input x2[1,4] for binary ops), int8 unless `type` says.
SubGraphDef OneOp(BuiltinOp op, float out_scale, int64_t out_zp, bool binary = false) {
  SubGraphDef g;
  g.tensors.push_back(Int8Tensor("x", {1, 4}, 0.05f, -3));
  g.tensors.push_back(Int8Tensor("y", {1, 4}, out_scale, out_zp));
  OperatorDef o;
  o.op = op;
  o.inputs = {0};
  o.outputs = {1};
  g.inputs = {0};
  if (binary) {
    g.tensors.push_back(Int8Tensor("x2", {1, 4}, 0.05f, 2));
    o.inputs = {0, 2};
    g.inputs = {0, 2};
  }
  g.operators.push_back(o);
  g.outputs = {1};
  return g;
}

struct Run {
  ember::Status status;
  std::vector<int8_t> y;
};

// Writes, loads, allocates and runs g on `x` (every input gets it); the first error, or the output.
Run WriteAndRun(const SubGraphDef& g, const std::vector<int8_t>& x) {
  Run r;
  auto bytes = WriteModel(g);
  if (!bytes.ok()) return {bytes.status(), {}};
  auto model = Model::FromBuffer(bytes->data(), bytes->size());
  if (!model.ok()) return {model.status(), {}};
  auto interp = Interpreter::Create(*model);
  if (!interp.ok()) return {interp.status(), {}};
  r.status = (*interp)->AllocateTensors();
  if (!r.status.ok()) return r;
  for (size_t i = 0; i < (*interp)->inputs_size(); ++i) {
    TensorView t = (*interp)->input(i);
    std::memcpy(t.data, x.data(), t.bytes);
  }
  r.status = (*interp)->Invoke();
  if (r.status.ok()) {
    TensorView t = (*interp)->output(0);
    r.y.assign(t.as<int8_t>(), t.as<int8_t>() + t.bytes);
  }
  return r;
}

bool Contains(const ember::Status& s, const std::string& what) {
  if (s.ok() || s.message().find(what) == std::string::npos) {
    std::fprintf(stderr, "  status was: %s\n", s.ok() ? "OK" : s.message().c_str());
    return false;
  }
  return true;
}

const std::vector<int8_t> kX = {-128, -3, 40, 127};

// "[-128,0,101,127]": int8 outputs as the failure message shows them.
std::string Ints(const std::vector<int8_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

TEST(LiteInt8Ops, LogisticNeedsOutputScaleOneOver256) {
  Run ok = WriteAndRun(OneOp(BuiltinOp::kLogistic, 1.0f / 256, -128), kX);
  ASSERT_OK(ok.status);
  // sigmoid(0.05 * (x + 3)) * 256 - 128: -125 -> 0.0019 (-128), 0 -> 0.5 (0), 2.15 -> 0.896
  // (101), 6.5 -> 0.9985 (128, clamped to 127).
  EXPECT_EQ(Ints(ok.y), std::string("[-128,0,101,127]"));
  EXPECT_TRUE(Contains(WriteAndRun(OneOp(BuiltinOp::kLogistic, 0.01f, -128), kX).status,
                       "LOGISTIC needs 1/256"));
}

// The table ops, SQUARED_DIFFERENCE, BATCH_MATMUL and PRELU take one scale and zero point per
// tensor: a per-channel input is refused at AllocateTensors with what it has.
TEST(LiteInt8Ops, PerChannelQuantizationIsRefused) {
  SubGraphDef g = OneOp(BuiltinOp::kTanh, 1.0f / 128, 0);
  g.tensors[0].quant.scale = {0.05f, 0.05f, 0.1f, 0.1f};
  g.tensors[0].quant.zero_point = {0, 0, 0, 0};
  g.tensors[0].quant.quantized_dimension = 1;
  ember::Status s = WriteAndRun(g, kX).status;
  EXPECT_TRUE(Contains(s, "operator 0 (TANH): input 'x' is quantized per channel (4 scales)"));
  EXPECT_TRUE(s.code() == ember::Code::kUnimplemented);
  g = OneOp(BuiltinOp::kSquaredDifference, 0.01f, -128, true);
  g.tensors[2].quant = g.tensors[0].quant;
  g.tensors[2].quant.scale = {0.05f, 0.05f, 0.1f, 0.1f};
  g.tensors[2].quant.zero_point = {0, 0, 0, 0};
  g.tensors[2].quant.quantized_dimension = 1;
  EXPECT_TRUE(Contains(WriteAndRun(g, kX).status, "input 1 'x2' is quantized per channel"));
}

// Any finite positive scale is accepted, as LiteRT accepts it (TFLiteConverter gave a Keras
// pre-activation ResNet's first conv output a scale of 1.3e36); infinity and 0 are refused.
TEST(LiteInt8Ops, HugeFiniteScalesAreAcceptedInfiniteRefused) {
  SubGraphDef g = OneOp(BuiltinOp::kTanh, 1.0f / 128, 0);
  g.tensors[0].quant.scale = {1e36f};
  Run r = WriteAndRun(g, kX);
  ASSERT_OK(r.status);
  EXPECT_EQ(Ints(r.y), std::string("[-128,0,127,127]"));  // tanh(1e36 * (x + 3)) * 128
  g.tensors[0].quant.scale = {std::numeric_limits<float>::infinity()};
  EXPECT_TRUE(Contains(WriteAndRun(g, kX).status, "non-positive or non-finite scale"));
  g.tensors[0].quant.scale = {0.0f};
  EXPECT_TRUE(Contains(WriteAndRun(g, kX).status, "non-positive or non-finite scale"));
}

TEST(LiteInt8Ops, Int16VersionsAreRefused) {
  for (BuiltinOp op : {BuiltinOp::kLogistic, BuiltinOp::kTanh, BuiltinOp::kLeakyRelu}) {
    SubGraphDef g = OneOp(op, 1.0f / 256, -128);
    g.operators[0].version = 3;
    EXPECT_TRUE(Contains(WriteAndRun(g, kX).status, "version 3 is not supported"));
  }
  // HARD_SWISH has one version for every type: int16 tensors are refused by type.
  SubGraphDef g = OneOp(BuiltinOp::kHardSwish, 0.05f, 0);
  for (TensorDef& t : g.tensors) {
    t.type = TensorType::kInt16;
    t.quant.zero_point = {0};
  }
  EXPECT_TRUE(
      Contains(WriteAndRun(g, std::vector<int8_t>(8, 0)).status, "type INT16 is not supported"));
}

TEST(LiteInt8Ops, RsqrtOfANegativeValueFails) {
  Run ok = WriteAndRun(OneOp(BuiltinOp::kRsqrt, 0.05f, -128), {-3, -2, 17, 97});
  ASSERT_OK(ok.status);
  // 1 / sqrt(0.05 * (x + 3)) / 0.05 - 128: x = -3 is 0 (the largest output), 4.47 -> -39,
  // 1 -> -108, 0.447 -> -119.
  EXPECT_EQ(Ints(ok.y), std::string("[127,-39,-108,-119]"));
  EXPECT_TRUE(Contains(WriteAndRun(OneOp(BuiltinOp::kRsqrt, 0.05f, -128), kX).status,
                       "below the zero point -3 (RSQRT is only defined for positive values)"));
}

TEST(LiteInt8Ops, TooSmallOutputScalesAreRefused) {
  EXPECT_TRUE(Contains(WriteAndRun(OneOp(BuiltinOp::kHardSwish, 1e-4f, 0), kX).status,
                       "is too small for input scale"));
  EXPECT_TRUE(Contains(WriteAndRun(OneOp(BuiltinOp::kSquaredDifference, 1e-7f, 0, true), kX).status,
                       "is too small for the inputs'"));
  Run ok = WriteAndRun(OneOp(BuiltinOp::kSquaredDifference, 0.01f, -128, true), kX);
  ASSERT_OK(ok.status);
  // (0.05 * ((x + 3) - (x - 2)))^2 = 0.0625 -> 6 steps of 0.01 above -128.
  EXPECT_EQ(Ints(ok.y), std::string("[-122,-122,-122,-122]"));
}

TEST(LiteInt8Ops, SubIsInt8AddsArithmeticAndRefusesInt16) {
  // Values (ties, broadcasting, saturation) are checked against LiteRT by the `sub_int8` model.
  Run ok = WriteAndRun(OneOp(BuiltinOp::kSub, 0.05f, -100, true), kX);
  ASSERT_OK(ok.status);
  // 0.05 * ((x + 3) - (x - 2)) = 0.25: 5 steps of 0.05 above -100.
  EXPECT_EQ(Ints(ok.y), std::string("[-95,-95,-95,-95]"));
  // Fused RELU6: 0.05 * ((x + 3) - (x - 125)) = 6.4 is clamped to 6, 120 steps above -128.
  SubGraphDef relu6 = OneOp(BuiltinOp::kSub, 0.05f, -128, true);
  relu6.tensors[2].quant.zero_point = {125};
  relu6.operators[0].options.activation = Activation::kRelu6;
  Run r6 = WriteAndRun(relu6, kX);
  ASSERT_OK(r6.status);
  EXPECT_EQ(Ints(r6.y), std::string("[-8,-8,-8,-8]"));
  EXPECT_TRUE(Contains(WriteAndRun(OneOp(BuiltinOp::kSub, 1e-9f, 0, true), kX).status,
                       "output scale is too small for the inputs"));
  SubGraphDef mixed = OneOp(BuiltinOp::kSub, 0.05f, 0, true);
  mixed.tensors[2].type = TensorType::kInt16;
  mixed.tensors[2].quant.zero_point = {0};
  EXPECT_TRUE(
      Contains(WriteAndRun(mixed, std::vector<int8_t>(8, 0)).status, "inputs are INT8 and INT16"));
  SubGraphDef i16 = OneOp(BuiltinOp::kSub, 0.05f, 0, true);
  for (TensorDef& t : i16.tensors) {
    t.type = TensorType::kInt16;
    t.quant.zero_point = {0};
  }
  EXPECT_TRUE(
      Contains(WriteAndRun(i16, std::vector<int8_t>(8, 0)).status, "type INT16 is not supported"));
  // The converter marks int16 SUB with general scales version 5 (and int64 version 4).
  i16.operators[0].version = 5;
  EXPECT_TRUE(
      Contains(WriteAndRun(i16, std::vector<int8_t>(8, 0)).status, "version 5 is not supported"));
}

TEST(LiteInt8Ops, LeakyReluAlphaRoundTrips) {
  SubGraphDef g = OneOp(BuiltinOp::kLeakyRelu, 0.05f, -3);
  g.operators[0].options.alpha = 0.25f;
  Run r = WriteAndRun(g, kX);
  ASSERT_OK(r.status);
  // Same scales: x >= zp is copied, x - zp < 0 is scaled by 1/4 (-125 / 4 = -31.25 -> -31).
  EXPECT_EQ(Ints(r.y), std::string("[-34,-3,40,127]"));
  g.operators[0].options.alpha = -0.5f;
  EXPECT_TRUE(Contains(WriteAndRun(g, kX).status, "alpha -0.5"));
}

EMBER_TEST_MAIN
