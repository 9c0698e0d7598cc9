// Grouped CONV_2D (filter [O, KH, KW, C / groups], Keras's Conv2D(groups=...)), float and int8
// with per-channel weights, against a port of TFLite's reference kernels (reference_ops::Conv,
// reference_integer_ops::ConvPerChannel): every path (groups of several channels, one filter per
// channel run as a depthwise convolution, two filters per channel), with 1 to 4 threads;
// and the errors for depths that do not split into groups.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/quant.h"
#include "ember/lite/writer.h"
#include "ember_test.h"
#include "lite/kernels.h"
#include "lite/lite_test_util.h"

using namespace ember::lite;
using ember::lite::testing::MakeTensor;

namespace {

struct Case {
  int h, w, c;     // input [1, h, w, c]
  int kh, kw, cg;  // filter [oc, kh, kw, cg]
  int oc, stride, dilation;
  Padding padding;
};

const Case kCases[] = {
    {9, 8, 8, 3, 3, 2, 12, 1, 1, Padding::kSame},     // 4 groups of 2 -> 3
    {11, 10, 6, 3, 2, 3, 4, 2, 1, Padding::kValid},   // 2 groups, strided
    {7, 9, 8, 3, 3, 4, 4, 1, 2, Padding::kSame},      // 2 groups, dilated
    {5, 5, 8, 1, 1, 2, 8, 1, 1, Padding::kValid},     // grouped 1x1
    {10, 12, 16, 3, 3, 1, 16, 1, 1, Padding::kSame},  // one filter per channel: depthwise 3x3
    {9, 9, 24, 7, 7, 1, 24, 1, 1, Padding::kSame},    // ConvNeXt's 7x7
    {9, 10, 16, 3, 3, 1, 16, 2, 1, Padding::kValid},  // depthwise, strided
    {8, 8, 4, 3, 3, 1, 8, 2, 1, Padding::kSame},      // two filters per channel
    // Depthwise over several 16-channel blocks (int8 on AVX2: threads split the channels,
    // each part starting at its own row, or the rows): 6 blocks; 9 blocks on 3 rows; 3 blocks.
    {12, 12, 96, 3, 3, 1, 96, 1, 1, Padding::kSame},
    {6, 6, 144, 3, 3, 1, 144, 2, 1, Padding::kSame},
    {8, 9, 48, 3, 3, 1, 48, 1, 1, Padding::kValid},
};

void OutSize(const Case& c, int in, int k, int* out, int* pad) {
  const int eff = (k - 1) * c.dilation + 1;
  *out = c.padding == Padding::kSame ? (in + c.stride - 1) / c.stride : (in - eff) / c.stride + 1;
  *pad = c.padding == Padding::kSame ? std::max(0, ((*out - 1) * c.stride + eff - in) / 2) : 0;
}

// The sums of TFLite's reference kernels: out channel o reads input channels
// [o / (oc / groups) * cg, + cg). int8: sum w * (x - in_zp); float: sum x * w in that order.
template <typename T, typename Acc>
std::vector<Acc> RefSums(const Case& c, const std::vector<T>& x, const std::vector<T>& w,
                         int32_t in_zp, int* oh, int* ow) {
  int ph, pw;
  OutSize(c, c.h, c.kh, oh, &ph);
  OutSize(c, c.w, c.kw, ow, &pw);
  const int og = c.oc / (c.c / c.cg);
  std::vector<Acc> y(static_cast<size_t>(*oh) * *ow * c.oc, Acc(0));
  for (int oy = 0; oy < *oh; ++oy)
    for (int ox = 0; ox < *ow; ++ox)
      for (int o = 0; o < c.oc; ++o) {
        Acc acc = 0;
        for (int ky = 0; ky < c.kh; ++ky)
          for (int kx = 0; kx < c.kw; ++kx) {
            const int iy = oy * c.stride - ph + ky * c.dilation;
            const int ix = ox * c.stride - pw + kx * c.dilation;
            if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
            for (int i = 0; i < c.cg; ++i) {
              const Acc xv =
                  static_cast<Acc>(
                      x[(static_cast<size_t>(iy) * c.w + ix) * c.c + o / og * c.cg + i]) -
                  static_cast<Acc>(in_zp);
              acc += xv * static_cast<Acc>(
                              w[((static_cast<size_t>(o) * c.kh + ky) * c.kw + kx) * c.cg + i]);
            }
          }
        y[(static_cast<size_t>(oy) * *ow + ox) * c.oc + o] = acc;
      }
  return y;
}

SubGraphDef ConvGraph(const Case& c, TensorType type, const void* w, size_t w_bytes, const void* b,
                      size_t b_bytes, int oh, int ow) {
  SubGraphDef g;
  g.tensors.push_back(MakeTensor("x", type, {1, c.h, c.w, c.c}));
  g.tensors.push_back(MakeTensor("w", type, {c.oc, c.kh, c.kw, c.cg}, w, w_bytes));
  g.tensors.push_back(
      MakeTensor("b", type == TensorType::kInt8 ? TensorType::kInt32 : type, {c.oc}, b, b_bytes));
  g.tensors.push_back(MakeTensor("y", type, {1, oh, ow, c.oc}));
  OperatorDef op;
  op.op = BuiltinOp::kConv2D;
  op.version = 6;  // what TensorFlow's converter writes for a grouped convolution
  op.inputs = {0, 1, 2};
  op.outputs = {3};
  op.options.padding = c.padding;
  op.options.stride_h = op.options.stride_w = c.stride;
  op.options.dilation_h = op.options.dilation_w = c.dilation;
  g.operators.push_back(op);
  g.inputs = {0};
  g.outputs = {3};
  return g;
}

// Runs the graph on `x` with `threads` threads; the output bytes, or the error.
ember::StatusOr<std::string> Run(const SubGraphDef& g, const void* x, size_t x_bytes, int threads) {
  auto bytes = WriteModel(g);
  if (!bytes.ok()) return bytes.status();
  auto model = Model::FromBuffer(bytes->data(), bytes->size());
  if (!model.ok()) return model.status();
  InterpreterOptions options;
  options.num_threads = threads;
  auto interp = Interpreter::Create(*model, options);
  if (!interp.ok()) return interp.status();
  EMBER_RETURN_IF_ERROR((*interp)->AllocateTensors());
  std::memcpy((*interp)->input(0).data, x, x_bytes);
  EMBER_RETURN_IF_ERROR((*interp)->Invoke());
  const TensorView y = (*interp)->output(0);
  return std::string(reinterpret_cast<const char*>(y.data), y.bytes);
}

}  // namespace

TEST(GroupedConv, FloatMatchesReference) {
  SetMinTaskCostForTesting(1);  // small: split anyway
  std::mt19937 gen(7);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (const Case& c : kCases) {
    const std::string what = "c" + std::to_string(c.c) + " cg" + std::to_string(c.cg) + " k" +
                             std::to_string(c.kh) + " oc" + std::to_string(c.oc);
    std::vector<float> x(static_cast<size_t>(c.h) * c.w * c.c), b(static_cast<size_t>(c.oc));
    std::vector<float> w(static_cast<size_t>(c.oc) * c.kh * c.kw * c.cg);
    for (float& v : x) v = dist(gen);
    for (float& v : w) v = dist(gen);
    for (float& v : b) v = dist(gen);
    int oh, ow;
    const std::vector<float> sums = RefSums<float, float>(c, x, w, 0, &oh, &ow);
    SubGraphDef g =
        ConvGraph(c, TensorType::kFloat32, w.data(), w.size() * 4, b.data(), b.size() * 4, oh, ow);
    g.operators[0].options.activation = Activation::kRelu;
    std::string one;
    for (int threads : {1, 2, 3, 4}) {
      auto y = Run(g, x.data(), x.size() * 4, threads);
      ASSERT_OK(y.status());
      ASSERT_TRUE(y->size() == sums.size() * 4);
      if (threads == 1) one = *y;
      EXPECT_TRUE(*y == one);  // the same bytes on every thread count
      const float* got = reinterpret_cast<const float*>(y->data());
      float worst = 0.f;
      bool clamped = false;
      for (size_t i = 0; i < sums.size(); ++i) {
        const float want = std::max(0.f, sums[i] + b[i % static_cast<size_t>(c.oc)]);
        worst = std::max(worst, std::fabs(got[i] - want) / (1e-5f + 1e-5f * std::fabs(want)));
        clamped |= want == 0.f;
      }
      if (worst > 1.f) std::fprintf(stderr, "%s: worst %.3g of tolerance\n", what.c_str(), worst);
      EXPECT_TRUE(worst <= 1.f);
      EXPECT_TRUE(clamped);
    }
  }
  SetMinTaskCostForTesting(32768);
}

TEST(GroupedConv, Int8PerChannelMatchesReferenceExactly) {
  SetMinTaskCostForTesting(1);
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> byte(-128, 127), weight(-127, 127), bias(-2000, 2000);
  std::uniform_real_distribution<float> scale(0.002f, 0.02f);
  for (const Case& c : kCases) {
    const std::string what = "c" + std::to_string(c.c) + " cg" + std::to_string(c.cg) + " k" +
                             std::to_string(c.kh) + " oc" + std::to_string(c.oc);
    std::vector<int8_t> x(static_cast<size_t>(c.h) * c.w * c.c);
    std::vector<int8_t> w(static_cast<size_t>(c.oc) * c.kh * c.kw * c.cg);
    std::vector<int32_t> b(static_cast<size_t>(c.oc));
    for (int8_t& v : x) v = static_cast<int8_t>(byte(gen));
    for (int8_t& v : w) v = static_cast<int8_t>(weight(gen));
    for (int32_t& v : b) v = bias(gen);
    const float in_scale = 0.05f, out_scale = 0.4f;
    const int32_t in_zp = 7, out_zp = -3;
    std::vector<float> w_scales(static_cast<size_t>(c.oc));
    for (float& s : w_scales) s = scale(gen);
    int oh, ow;
    const std::vector<int32_t> sums = RefSums<int8_t, int32_t>(c, x, w, in_zp, &oh, &ow);
    SubGraphDef g =
        ConvGraph(c, TensorType::kInt8, w.data(), w.size(), b.data(), b.size() * 4, oh, ow);
    g.tensors[0].quant.scale = {in_scale};
    g.tensors[0].quant.zero_point = {in_zp};
    g.tensors[1].quant.scale = w_scales;
    g.tensors[1].quant.zero_point.assign(w_scales.size(), 0);
    g.tensors[2].quant.scale.resize(w_scales.size());
    for (size_t o = 0; o < w_scales.size(); ++o)
      g.tensors[2].quant.scale[o] = in_scale * w_scales[o];
    g.tensors[2].quant.zero_point.assign(w_scales.size(), 0);
    g.tensors[3].quant.scale = {out_scale};
    g.tensors[3].quant.zero_point = {out_zp};
    std::vector<int8_t> want(sums.size());
    int clamped = 0;
    for (size_t i = 0; i < sums.size(); ++i) {
      const size_t o = i % static_cast<size_t>(c.oc);
      int32_t m;
      int shift;
      QuantizeMultiplier(static_cast<double>(in_scale) * w_scales[o] / out_scale, &m, &shift);
      int32_t v = MultiplyByQuantizedMultiplier(sums[i] + b[o], m, shift) + out_zp;
      clamped += v < -128 || v > 127;
      want[i] = static_cast<int8_t>(std::min(127, std::max(-128, v)));
    }
    EXPECT_TRUE(clamped < static_cast<int>(want.size()) / 4);  // the outputs carry information
    for (int threads : {1, 2, 3, 4}) {
      auto y = Run(g, x.data(), x.size(), threads);
      ASSERT_OK(y.status());
      ASSERT_TRUE(y->size() == want.size());
      int diffs = 0;
      for (size_t i = 0; i < want.size(); ++i) diffs += static_cast<int8_t>((*y)[i]) != want[i];
      if (diffs) std::fprintf(stderr, "%s, %d threads: %d differ\n", what.c_str(), threads, diffs);
      EXPECT_EQ(diffs, 0);
    }
  }
  SetMinTaskCostForTesting(32768);
}

TEST(GroupedConv, DepthsThatDoNotSplitAreErrors) {
  struct Bad {
    Case c;
    const char* says;
  };
  const Bad bad[] = {
      {{6, 6, 8, 3, 3, 3, 8, 1, 1, Padding::kSame},
       "depth 3, which does not divide the input depth 8"},
      {{6, 6, 8, 3, 3, 2, 6, 1, 1, Padding::kSame},
       "6 output channels do not split into the 4 groups"},
  };
  for (const Bad& e : bad) {
    const Case& c = e.c;
    std::vector<float> w(static_cast<size_t>(c.oc) * c.kh * c.kw * c.cg, 0.5f);
    std::vector<float> b(static_cast<size_t>(c.oc), 0.f), x(static_cast<size_t>(c.h) * c.w * c.c);
    const SubGraphDef g =
        ConvGraph(c, TensorType::kFloat32, w.data(), w.size() * 4, b.data(), b.size() * 4, 6, 6);
    auto y = Run(g, x.data(), x.size() * 4, 1);
    ASSERT_TRUE(!y.ok());
    const std::string& m = y.status().message();
    if (m.find(e.says) == std::string::npos) std::fprintf(stderr, "  message was: %s\n", m.c_str());
    EXPECT_TRUE(m.find("operator 0 (CONV_2D): filter 'w'") != std::string::npos ||
                m.find("operator 0 (CONV_2D): 6 output") != std::string::npos);
    EXPECT_TRUE(m.find(e.says) != std::string::npos);
  }
}

EMBER_TEST_MAIN
