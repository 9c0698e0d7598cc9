// CONV_3D and CONV_3D_TRANSPOSE (kernels_conv3d.cc) on models written by hand: results against
// loops written here (bias, fused activation, strides, dilations, padding: what the converter's
// models in tests/lite do not all reach), the options surviving the writer and parser, and the
// refusals at AllocateTensors, each naming the operator and the tensor.
#include <algorithm>
#include <cmath>
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

std::vector<float> Ramp(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale) + offset;
  return v;
}

int64_t Count(const std::vector<int32_t>& s) {
  int64_t n = 1;
  for (int32_t d : s) n *= d;
  return n;
}

struct Spec {
  std::vector<int32_t> in, filter, out;  // NDHWC; filter [KD,KH,KW,IC,OC] (transpose: OC,IC)
  int stride[3], dil[3];
  Padding padding;
  Activation act;
  bool bias;
};

// The forward conv's padding before, for an input of `in` and an output of `out`.
int PadBefore(int in, int k, int stride, int dil, int out) {
  const int eff = (k - 1) * dil + 1;
  return std::max(0, ((out - 1) * stride + eff - in) / 2);
}

float Clamp(float v, Activation act) {
  if (act == Activation::kRelu) return std::max(v, 0.0f);
  if (act == Activation::kRelu6) return std::min(std::max(v, 0.0f), 6.0f);
  if (act == Activation::kReluN1To1) return std::min(std::max(v, -1.0f), 1.0f);
  return v;
}

SubGraphDef Conv3DModel(const Spec& s, const std::vector<float>& w, const std::vector<float>& b,
                        const std::vector<int32_t>& out_shape, bool transpose) {
  SubGraphDef g;
  g.tensors = {MakeTensor("x", TensorType::kFloat32, s.in),
               MakeTensor("w", TensorType::kFloat32, s.filter, w.data(), w.size() * 4),
               MakeTensor("b", TensorType::kFloat32, {static_cast<int32_t>(b.size())}, b.data(),
                          b.size() * 4),
               MakeTensor("y", TensorType::kFloat32, s.out),
               MakeTensor("shape", TensorType::kInt32, {5}, out_shape.data(), 20)};
  OperatorDef op = transpose ? MakeOp(BuiltinOp::kConv3DTranspose, {4, 1, 0}, {3})
                             : MakeOp(BuiltinOp::kConv3D, {0, 1}, {3});
  if (s.bias) op.inputs.push_back(2);
  op.options.padding = s.padding;
  op.options.stride_d = s.stride[0];
  op.options.stride_h = s.stride[1];
  op.options.stride_w = s.stride[2];
  op.options.dilation_d = s.dil[0];
  op.options.dilation_h = s.dil[1];
  op.options.dilation_w = s.dil[2];
  op.options.activation = s.act;
  g.operators.push_back(op);
  g.inputs = {0};
  g.outputs = {3};
  return g;
}

// The reference: the forward conv from `vol` (its input) to `grid` (its output) scattered, as
// LiteRT's Conv3DTranspose does, or gathered.
std::vector<float> Reference(const Spec& s, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& b,
                             bool transpose) {
  const std::vector<int32_t>& vol = transpose ? s.out : s.in;
  const std::vector<int32_t>& grid = transpose ? s.in : s.out;
  const int ic = s.in[4], oc = s.out[4];
  const int k[3] = {s.filter[0], s.filter[1], s.filter[2]};
  int pad[3];
  for (int d = 0; d < 3; ++d)
    pad[d] = PadBefore(vol[1 + d], k[d], s.stride[d], s.dil[d], grid[1 + d]);
  std::vector<float> y(static_cast<size_t>(Count(s.out)), 0.0f);
  for (int n = 0; n < s.in[0]; ++n) {
    for (int gz = 0; gz < grid[1]; ++gz) {
      for (int gy = 0; gy < grid[2]; ++gy) {
        for (int gx = 0; gx < grid[3]; ++gx) {
          for (int kz = 0; kz < k[0]; ++kz) {
            for (int ky = 0; ky < k[1]; ++ky) {
              for (int kx = 0; kx < k[2]; ++kx) {
                const int vz = gz * s.stride[0] - pad[0] + kz * s.dil[0];
                const int vy = gy * s.stride[1] - pad[1] + ky * s.dil[1];
                const int vx = gx * s.stride[2] - pad[2] + kx * s.dil[2];
                if (vz < 0 || vz >= vol[1] || vy < 0 || vy >= vol[2] || vx < 0 || vx >= vol[3]) {
                  continue;
                }
                const size_t vi =
                    (((static_cast<size_t>(n) * vol[1] + vz) * vol[2] + vy) * vol[3] + vx);
                const size_t gi =
                    (((static_cast<size_t>(n) * grid[1] + gz) * grid[2] + gy) * grid[3] + gx);
                const size_t tap = (static_cast<size_t>(kz) * k[1] + ky) * k[2] + kx;
                for (int o = 0; o < oc; ++o) {
                  for (int c = 0; c < ic; ++c) {
                    if (transpose) {
                      y[vi * oc + o] += x[gi * ic + c] * w[(tap * oc + o) * ic + c];
                    } else {
                      y[gi * oc + o] += x[vi * ic + c] * w[(tap * ic + c) * oc + o];
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] = Clamp(y[i] + (s.bias ? b[i % oc] : 0.0f), s.act);
  }
  return y;
}

void CheckAgainstReference(const Spec& s, bool transpose) {
  const std::vector<float> w = Ramp(static_cast<size_t>(Count(s.filter)), 0.37f, -0.1f);
  const std::vector<float> b = Ramp(static_cast<size_t>(s.out[4]), 1.3f, 0.2f);
  const std::vector<float> x = Ramp(static_cast<size_t>(Count(s.in)), 0.11f, 0.0f);
  Run r = Load(Conv3DModel(s, w, b, s.out, transpose));
  ASSERT_OK(r.status);
  float* in = r.interp->input(0).as<float>();
  std::copy(x.begin(), x.end(), in);
  ASSERT_OK(r.interp->Invoke());
  const float* y = r.interp->output(0).as<float>();
  const std::vector<float> want = Reference(s, x, w, b, transpose);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-4f);
}

Spec BaseConv() {
  return Spec{{1, 4, 5, 6, 3}, {3, 3, 3, 3, 4}, {1, 4, 5, 6, 4},   {1, 1, 1},
              {1, 1, 1},       Padding::kSame,  Activation::kNone, false};
}

}  // namespace

TEST(LiteConv3D, MatchesLoops) {
  CheckAgainstReference(BaseConv(), false);
  // Strides 2,1,2 VALID with bias and RELU6; dilations 2,1,2 SAME with RELU.
  CheckAgainstReference(Spec{{2, 5, 5, 6, 2},
                             {2, 3, 2, 2, 5},
                             {2, 2, 3, 3, 5},
                             {2, 1, 2},
                             {1, 1, 1},
                             Padding::kValid,
                             Activation::kRelu6,
                             true},
                        false);
  CheckAgainstReference(Spec{{1, 5, 4, 6, 3},
                             {2, 2, 3, 3, 2},
                             {1, 5, 4, 6, 2},
                             {1, 1, 1},
                             {2, 1, 2},
                             Padding::kSame,
                             Activation::kRelu,
                             true},
                        false);
}

TEST(LiteConv3DTranspose, MatchesLoops) {
  // Stride 2 SAME with bias and RELU_N1_TO_1; stride (2,1,2) VALID, an output size one past
  // what the stride reaches.
  CheckAgainstReference(Spec{{1, 2, 3, 3, 4},
                             {3, 3, 3, 2, 4},
                             {1, 4, 6, 6, 2},
                             {2, 2, 2},
                             {1, 1, 1},
                             Padding::kSame,
                             Activation::kReluN1To1,
                             true},
                        true);
  CheckAgainstReference(Spec{{2, 3, 2, 3, 3},
                             {2, 3, 2, 3, 3},
                             {2, 7, 4, 8, 3},
                             {2, 1, 2},
                             {1, 1, 1},
                             Padding::kValid,
                             Activation::kNone,
                             false},
                        true);
}

TEST(LiteConv3D, Refusals) {
  const Spec s = BaseConv();
  const std::vector<float> w = Ramp(static_cast<size_t>(Count(s.filter)), 0.37f, 0.0f);
  const std::vector<float> b(4, 0.5f);
  SubGraphDef g = Conv3DModel(s, w, b, s.out, false);
  ASSERT_OK(Load(g).status);

  SubGraphDef bad = g;
  bad.tensors[0] = MakeTensor("x", TensorType::kFloat32, {1, 4, 5, 3});
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 0 (CONV_3D): input 'x' must have rank 5 (NDHWC), got [1,4,5,3]"));

  bad = g;
  bad.tensors[1] = MakeTensor("w", TensorType::kFloat32, {3, 3, 4, 4}, w.data(), 36 * 16);
  EXPECT_TRUE(Contains(Load(bad).status, "operator 0 (CONV_3D): filter 'w' must have rank 5"));

  bad = g;
  bad.tensors[0] = MakeTensor("x", TensorType::kFloat32, {1, 4, 5, 6, 2});
  EXPECT_TRUE(Contains(Load(bad).status,
                       "filter 'w' [3,3,3,3,4] has 3 input channels but "
                       "input 'x' has 2"));

  bad = g;
  bad.tensors[0] = MakeTensor("x", TensorType::kInt8, {1, 4, 5, 6, 3});
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 0 (CONV_3D): input 'x' has type INT8; only FLOAT32 is supported"));

  bad = g;
  bad.operators[0].options.stride_h = 0;
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 0 (CONV_3D): strides and dilation factors "
                       "must be in [1, 4096], got strides (1, 0, 1)"));

  bad = g;
  bad.operators[0].options.dilation_d = -3;
  EXPECT_TRUE(Contains(Load(bad).status, "dilations (-3, 1, 1)"));

  bad = g;
  bad.operators[0].inputs.push_back(2);
  bad.tensors[2] = MakeTensor("b", TensorType::kFloat32, {3}, b.data(), 12);
  EXPECT_TRUE(Contains(Load(bad).status, "bias 'b' has 3 elements, expected 4"));

  bad = g;
  bad.tensors[3] = MakeTensor("y", TensorType::kFloat32, {1, 4, 5, 6, 5});
  EXPECT_TRUE(Contains(Load(bad).status, "output 'y'"));

  bad = g;
  bad.tensors[1] = MakeTensor("w", TensorType::kFloat32, {3, 3, 3, 3, 4});
  bad.inputs = {0, 1};  // a filter fed at run time
  EXPECT_TRUE(Contains(Load(bad).status, "filter 'w' must be a constant tensor"));

  bad = g;
  bad.operators[0].inputs = {0};
  EXPECT_TRUE(Contains(Load(bad).status, "CONV_3D): expects inputs (input, filter[, bias])"));
}

TEST(LiteConv3DTranspose, Refusals) {
  const Spec s{{1, 2, 3, 3, 4}, {3, 3, 3, 2, 4}, {1, 4, 6, 6, 2},   {2, 2, 2},
               {1, 1, 1},       Padding::kSame,  Activation::kNone, false};
  const std::vector<float> w = Ramp(static_cast<size_t>(Count(s.filter)), 0.37f, 0.0f);
  const std::vector<float> b(2, 0.5f);
  SubGraphDef g = Conv3DModel(s, w, b, s.out, true);
  ASSERT_OK(Load(g).status);

  const std::vector<int32_t> four = {1, 4, 6, 6};
  SubGraphDef bad = g;
  bad.tensors[4] = MakeTensor("shape", TensorType::kInt32, {4}, four.data(), 16);
  EXPECT_TRUE(Contains(Load(bad).status,
                       "operator 0 (CONV_3D_TRANSPOSE): output_shape 'shape' "
                       "must hold 5 values, got shape [4]"));

  const std::vector<int32_t> wrong = {1, 4, 6, 6, 3};
  bad = Conv3DModel(s, w, b, wrong, true);
  EXPECT_TRUE(Contains(Load(bad).status, "output_shape [1,4,6,6,3] does not match input 'x'"));

  bad = g;
  bad.tensors[0] = MakeTensor("x", TensorType::kFloat32, {1, 2, 3, 3, 5});
  EXPECT_TRUE(Contains(Load(bad).status,
                       "filter 'w' [3,3,3,2,4] has 4 input channels but "
                       "input 'x' has 5"));

  bad = g;
  bad.tensors[0] = MakeTensor("x", TensorType::kFloat32, {2, 3, 3, 4});
  EXPECT_TRUE(Contains(Load(bad).status, "input 'x' must have rank 5"));

  bad = g;
  bad.tensors[4] = MakeTensor("shape", TensorType::kInt32, {5});
  bad.inputs = {0, 4};
  EXPECT_TRUE(Contains(Load(bad).status, "output_shape 'shape' must be a constant tensor"));

  bad = g;
  bad.operators[0].inputs = {4, 1};
  EXPECT_TRUE(Contains(Load(bad).status, "expects inputs (output_shape, filter, input[, bias])"));
}

TEST(LiteConv3D, OptionsRoundTrip) {
  // The writer and parser keep every Conv3DOptions field (ids 0-7).
  const Spec s{{1, 5, 4, 6, 3}, {2, 2, 3, 3, 2}, {1, 3, 2, 2, 2},    {1, 2, 3},
               {2, 1, 1},       Padding::kValid, Activation::kRelu6, false};
  const std::vector<float> w = Ramp(static_cast<size_t>(Count(s.filter)), 0.37f, 0.0f);
  Run r = Load(Conv3DModel(s, w, {0.0f, 0.0f}, s.out, false));
  ASSERT_OK(r.status);
  const OpOptions& o = r.model->graph().operators[0].options;
  EXPECT_EQ(o.stride_d, 1);
  EXPECT_EQ(o.stride_h, 2);
  EXPECT_EQ(o.stride_w, 3);
  EXPECT_EQ(o.dilation_d, 2);
  EXPECT_EQ(o.dilation_h, 1);
  EXPECT_EQ(o.dilation_w, 1);
  EXPECT_TRUE(o.padding == Padding::kValid);
  EXPECT_TRUE(o.activation == Activation::kRelu6);
}

EMBER_TEST_MAIN
