// Hybrid (dynamic-range) FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D on models written by
// hand: a result worked out by hand (the input's quantization shows in it), the same bytes for
// 1, 2 and 4 threads, and every refusal (missing or mismatched weight scales, weight zero points,
// bias and output types), each naming the operator and the tensor. The models TensorFlow's
// converter writes are checked against LiteRT in engine/testdata/lite/models (*_dynamic).
#include <cmath>
#include <cstring>
#include <random>
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

// Runs `g` on `x` with `threads` threads: the output's bytes, or the error.
ember::StatusOr<std::string> Run(const SubGraphDef& g, const std::vector<float>& x, int threads) {
  auto bytes = WriteModel(g);
  if (!bytes.ok()) return bytes.status();
  auto model = Model::FromBuffer(bytes->data(), bytes->size());
  if (!model.ok()) return model.status();
  InterpreterOptions options;
  options.num_threads = threads;
  auto interp = Interpreter::Create(*model, options);
  if (!interp.ok()) return interp.status();
  EMBER_RETURN_IF_ERROR((*interp)->AllocateTensors());
  TensorView in = (*interp)->input(0);
  if (in.bytes != x.size() * sizeof(float)) return ember::errors::InvalidArgument("input size");
  std::memcpy(in.data, x.data(), in.bytes);
  EMBER_RETURN_IF_ERROR((*interp)->Invoke());
  const TensorView y = (*interp)->output(0);
  return std::string(reinterpret_cast<const char*>(y.data), y.bytes);
}

std::vector<float> AsFloats(const std::string& bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

// FULLY_CONNECTED [rows, k] x int8 [n, k] (+ float bias) -> [rows, n].
struct FcModel {
  std::vector<int8_t> w;
  std::vector<float> b;
  SubGraphDef g;
  FcModel(int rows, int k, int n, std::vector<float> scales, bool asymmetric, bool bias = true) {
    std::mt19937 gen(3);
    std::uniform_int_distribution<int> dist(-127, 127);
    for (int i = 0; i < n * k; ++i) w.push_back(static_cast<int8_t>(dist(gen)));
    for (int i = 0; i < n; ++i) b.push_back(0.25f * static_cast<float>(i % 5) - 0.5f);
    g.tensors.push_back(MakeTensor("x", TensorType::kFloat32, {rows, k}));
    g.tensors.push_back(MakeTensor("w", TensorType::kInt8, {n, k}, w.data(), w.size()));
    g.tensors[1].quant.scale = std::move(scales);
    g.tensors[1].quant.zero_point.assign(g.tensors[1].quant.scale.size(), 0);
    g.tensors.push_back(
        MakeTensor("b", TensorType::kFloat32, {n}, b.data(), b.size() * sizeof(float)));
    g.tensors.push_back(MakeTensor("y", TensorType::kFloat32, {rows, n}));
    OperatorDef op = MakeOp(BuiltinOp::kFullyConnected, {0, 1, bias ? 2 : -1}, {3});
    op.version = 12;
    op.options.asymmetric_quantize_inputs = asymmetric;
    g.operators.push_back(op);
    g.inputs = {0};
    g.outputs = {3};
  }
};

// CONV_2D (or DEPTHWISE_CONV_2D) of a [2, 7, 6, c] image, 3x3 filter, SAME padding.
struct ConvModel {
  std::vector<int8_t> w;
  std::vector<float> b;
  SubGraphDef g;
  ConvModel(bool depthwise, int c, int oc, int stride, std::vector<float> scales) {
    const int depth = depthwise ? 1 : c;
    std::mt19937 gen(5);
    std::uniform_int_distribution<int> dist(-127, 127);
    for (int i = 0; i < oc * 9 * depth; ++i) w.push_back(static_cast<int8_t>(dist(gen)));
    for (int i = 0; i < oc; ++i) b.push_back(0.1f * static_cast<float>(i % 7));
    const int oh = (7 + stride - 1) / stride, ow = (6 + stride - 1) / stride;
    g.tensors.push_back(MakeTensor("x", TensorType::kFloat32, {2, 7, 6, c}));
    std::vector<int32_t> wshape =
        depthwise ? std::vector<int32_t>{1, 3, 3, oc} : std::vector<int32_t>{oc, 3, 3, c};
    g.tensors.push_back(MakeTensor("w", TensorType::kInt8, wshape, w.data(), w.size()));
    g.tensors[1].quant.scale = std::move(scales);
    g.tensors[1].quant.zero_point.assign(g.tensors[1].quant.scale.size(), 0);
    g.tensors[1].quant.quantized_dimension = depthwise ? 3 : 0;
    g.tensors.push_back(
        MakeTensor("b", TensorType::kFloat32, {oc}, b.data(), b.size() * sizeof(float)));
    g.tensors.push_back(MakeTensor("y", TensorType::kFloat32, {2, oh, ow, oc}));
    OperatorDef op =
        MakeOp(depthwise ? BuiltinOp::kDepthwiseConv2D : BuiltinOp::kConv2D, {0, 1, 2}, {3});
    op.version = depthwise ? 6 : 5;
    op.options.padding = Padding::kSame;
    op.options.stride_h = op.options.stride_w = stride;
    op.options.depth_multiplier = depthwise ? oc / c : 1;
    op.options.activation = Activation::kRelu6;
    g.operators.push_back(op);
    g.inputs = {0};
    g.outputs = {3};
  }
};

std::vector<float> RandomInput(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.5f, 2.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(gen);
  return x;
}

std::vector<float> Scales(int n, float base) {
  std::vector<float> s;
  for (int i = 0; i < n; ++i) s.push_back(base * (1.0f + 0.1f * static_cast<float>(i % 9)));
  return s;
}

// Expects `g` to fail AllocateTensors (or load) with an error that contains every `parts`.
void ExpectRefused(const SubGraphDef& g, const std::vector<std::string>& parts) {
  auto r = Run(g, std::vector<float>(g.tensors[0].shape.empty() ? 0 : 1, 0.0f), 1);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return;
  for (const std::string& p : parts) {
    const bool has = r.status().message().find(p) != std::string::npos;
    EXPECT_TRUE(has);
    if (!has) std::printf("  '%s' lacks '%s'\n", r.status().message().c_str(), p.c_str());
  }
}

}  // namespace

// x = [1, -0.5]: symmetric quantization gives scale 1/127 and q = [127, -64] (round half away
// from zero), so the second output shows the input's quantization: 8128 / 16129, not 0.5.
TEST(Hybrid, FullyConnectedSymmetricByHand) {
  SubGraphDef g;
  const int8_t w[] = {127, 0, 0, -127};
  g.tensors.push_back(MakeTensor("x", TensorType::kFloat32, {1, 2}));
  g.tensors.push_back(MakeTensor("w", TensorType::kInt8, {2, 2}, w, sizeof w));
  g.tensors[1].quant.scale = {1.0f / 127.0f};
  g.tensors[1].quant.zero_point = {0};
  g.tensors.push_back(MakeTensor("y", TensorType::kFloat32, {1, 2}));
  OperatorDef op = MakeOp(BuiltinOp::kFullyConnected, {0, 1}, {2});
  op.version = 12;
  g.operators.push_back(op);
  g.inputs = {0};
  g.outputs = {2};
  auto r = Run(g, {1.0f, -0.5f}, 1);
  ASSERT_OK(r.status());
  const std::vector<float> y = AsFloats(*r);
  const float scale = (1.0f / 127.0f) * (1.0f / 127.0f);
  EXPECT_EQ(y[0], 16129.0f * scale);
  EXPECT_EQ(y[1], 8128.0f * scale);
}

// Asymmetric: x = [0, 1] has range [0, 1], scale 1/255, zero point -128, q = [-128, 127]; the
// sum of w * (q - zp) is 255 * w[.][1].
TEST(Hybrid, FullyConnectedAsymmetricByHand) {
  FcModel m(1, 2, 2, {0.5f, 0.25f}, true, false);
  m.w = {3, -7, 2, 5};
  m.g.tensors[1].data = reinterpret_cast<const uint8_t*>(m.w.data());
  auto r = Run(m.g, {0.0f, 1.0f}, 1);
  ASSERT_OK(r.status());
  const std::vector<float> y = AsFloats(*r);
  const float s_in = static_cast<float>(1.0 / 255.0);
  EXPECT_EQ(y[0], static_cast<float>(255 * -7) * (s_in * 0.5f));
  EXPECT_EQ(y[1], static_cast<float>(255 * 5) * (s_in * 0.25f));
}

TEST(Hybrid, SameBytesForEveryThreadCount) {
  SetMinTaskCostForTesting(1);  // small: split anyway
  // The models own their weights: they live as long as the graphs run.
  FcModel f1(5, 40, 37, Scales(37, 0.01f), true), f2(3, 24, 20, {0.02f}, false);
  ConvModel c1(false, 5, 12, 1, Scales(12, 0.01f));  // per channel
  ConvModel c2(false, 4, 9, 2, {0.03f});             // per tensor
  ConvModel d1(true, 6, 12, 1, Scales(12, 0.01f));   // depth multiplier 2
  ConvModel d2(true, 8, 8, 2, Scales(8, 0.02f));
  const SubGraphDef* graphs[] = {&f1.g, &f2.g, &c1.g, &c2.g, &d1.g, &d2.g};
  unsigned seed = 1;
  for (const SubGraphDef* gp : graphs) {
    const SubGraphDef& g = *gp;
    const std::vector<float> x = RandomInput(
        g.tensors[0].shape.size() == 2
            ? static_cast<size_t>(g.tensors[0].shape[0]) *
                  static_cast<size_t>(g.tensors[0].shape[1])
            : static_cast<size_t>(2 * 7 * 6) * static_cast<size_t>(g.tensors[0].shape[3]),
        seed++);
    auto one = Run(g, x, 1);
    ASSERT_OK(one.status());
    for (float v : AsFloats(*one)) EXPECT_TRUE(std::isfinite(v));
    for (int threads : {2, 4}) {
      auto many = Run(g, x, threads);
      ASSERT_OK(many.status());
      EXPECT_TRUE(*many == *one);
    }
  }
  SetMinTaskCostForTesting(32768);
}

TEST(Hybrid, RefusesMissingWeightScale) {
  FcModel m(1, 8, 4, {}, true);
  ExpectRefused(m.g, {"operator 0 (FULLY_CONNECTED)", "'w'", "no quantization scale"});
  ConvModel c(false, 3, 4, 1, {});
  ExpectRefused(c.g, {"operator 0 (CONV_2D)", "'w'", "no quantization scale"});
  ConvModel d(true, 4, 4, 1, {});
  ExpectRefused(d.g, {"operator 0 (DEPTHWISE_CONV_2D)", "'w'", "no quantization scale"});
}

TEST(Hybrid, RefusesWeightZeroPoint) {
  FcModel m(1, 8, 4, {0.1f}, true);
  m.g.tensors[1].quant.zero_point = {3};
  ExpectRefused(m.g, {"operator 0 (FULLY_CONNECTED)", "'w'", "zero point 0", "got 3"});
  ConvModel c(false, 3, 4, 1, Scales(4, 0.1f));
  c.g.tensors[1].quant.zero_point[2] = -1;
  ExpectRefused(c.g, {"operator 0 (CONV_2D)", "'w'", "zero point 0"});
}

// Scale counts the loader accepts (one per element of the quantized dimension) but the hybrid
// kernels do not; counts that match no dimension are refused at load, naming the tensor.
TEST(Hybrid, RefusesScaleCounts) {
  FcModel m(1, 8, 4, Scales(8, 0.1f), true);
  m.g.tensors[1].quant.quantized_dimension = 1;
  ExpectRefused(m.g, {"operator 0 (FULLY_CONNECTED)", "'w'", "8 scales along dimension 1",
                      "expected 1 or 4 along dimension 0"});
  ConvModel c(false, 3, 4, 1, Scales(3, 0.1f));
  c.g.tensors[1].quant.quantized_dimension = 3;
  ExpectRefused(c.g, {"operator 0 (CONV_2D)", "'w'", "3 scales along dimension 3"});
  // LiteRT's hybrid depthwise kernel has one scale per output channel only.
  ConvModel d(true, 4, 8, 1, {0.1f});
  ExpectRefused(d.g, {"operator 0 (DEPTHWISE_CONV_2D)", "'w'", "1 scales", "expected 8"});
  FcModel z(1, 8, 4, {0.1f, 0.2f, 0.3f, 0.4f}, true);
  z.g.tensors[1].quant.zero_point = {0, 0};
  ExpectRefused(z.g, {"'w'", "4 scales but 2 zero points"});
}

TEST(Hybrid, RefusesGroupedConvWithOneScale) {
  ConvModel c(false, 4, 4, 1, {0.1f});
  c.g.tensors[1].shape[3] = 2;  // two groups of two channels
  c.w.resize(4 * 9 * 2);
  c.g.tensors[1].data_size = c.w.size();
  ExpectRefused(c.g, {"CONV_2D", "grouped", "'w'"});
}

TEST(Hybrid, RefusesBiasAndOutputTypes) {
  FcModel m(1, 8, 4, {0.1f}, true);
  std::vector<int32_t> ib(4, 0);
  m.g.tensors[2] = MakeTensor("b", TensorType::kInt32, {4}, ib.data(), ib.size() * 4);
  ExpectRefused(m.g, {"FULLY_CONNECTED", "'b'", "INT32", "FLOAT32"});
  FcModel o(1, 8, 4, {0.1f}, true);
  o.g.tensors[3].type = TensorType::kInt8;
  o.g.tensors[3].quant.scale = {0.1f};
  o.g.tensors[3].quant.zero_point = {0};
  ExpectRefused(o.g, {"FULLY_CONNECTED", "'y'", "INT8", "FLOAT32"});
  ConvModel c(false, 3, 4, 1, Scales(4, 0.1f));
  std::vector<float> fb(5, 0.0f);
  c.g.tensors[2] = MakeTensor("b", TensorType::kFloat32, {5}, fb.data(), fb.size() * 4);
  ExpectRefused(c.g, {"CONV_2D", "'b'", "5 elements, expected 4"});
}

TEST(Hybrid, RefusesRunTimeWeights) {
  FcModel m(1, 8, 4, {0.1f}, true);
  m.g.tensors[1].data = nullptr;
  m.g.tensors[1].data_size = 0;
  m.g.inputs = {0, 1};
  ExpectRefused(m.g, {"operator 0 (FULLY_CONNECTED)", "'w'", "INT8"});
}

EMBER_TEST_MAIN
