// The quantization test vectors of ../shared/spec/ENGINE.md section 2.
#include "ember/lite/quant.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "ember_test.h"

using namespace ember::lite;

namespace {
void ExpectParams(double lo, double hi, int32_t qmin, int32_t qmax, double scale, int32_t zp) {
  const QuantParams p = ChooseQuantizationParams(lo, hi, qmin, qmax);
  EXPECT_NEAR(p.scale, scale, 1e-6 * scale);
  EXPECT_EQ(p.zero_point, zp);
}
}  // namespace

TEST(Quant, ChooseQuantizationParamsUint8) {
  ExpectParams(0, 255, 0, 255, 1.0, 0);
  ExpectParams(-1, 1, 0, 255, 2.0 / 255, 128);
  ExpectParams(-10, 30, 0, 255, 40.0 / 255, 64);
  ExpectParams(-2.5, 7.5, 0, 255, 10.0 / 255, 64);
  ExpectParams(0, 6, 0, 255, 6.0 / 255, 0);
  ExpectParams(-3, 0, 0, 255, 3.0 / 255, 255);
  ExpectParams(0.5, 2, 0, 255, 2.0 / 255, 0);
  ExpectParams(-3, -1, 0, 255, 3.0 / 255, 255);
}

TEST(Quant, ChooseQuantizationParamsInt8) {
  ExpectParams(0, 255, -128, 127, 1.0, -128);
  ExpectParams(-1, 1, -128, 127, 2.0 / 255, -1);
  ExpectParams(-10, 30, -128, 127, 40.0 / 255, -64);
  ExpectParams(-2.5, 7.5, -128, 127, 10.0 / 255, -64);
  ExpectParams(0, 6, -128, 127, 6.0 / 255, -128);
  ExpectParams(-3, 0, -128, 127, 3.0 / 255, 127);
  ExpectParams(0.5, 2, -128, 127, 2.0 / 255, -128);
  ExpectParams(-3, -1, -128, 127, 3.0 / 255, 127);
  const QuantParams zero = ChooseQuantizationParams(0, 0, -128, 127);
  EXPECT_EQ(zero.scale, 0.0);
  EXPECT_EQ(zero.zero_point, 0);
}

TEST(Quant, PerChannelWeights) {
  const float w[] = {0.5f, -1.27f, 0.3f, 0.02f, 0.01f, -0.04f};
  const PerChannelWeights q = QuantizeWeightsPerChannel(w, {2, 3}, 0);
  EXPECT_NEAR(q.scales[0], 0.01, 1e-7);
  EXPECT_NEAR(q.scales[1], 0.000314961, 1e-9);
  const int expect[] = {50, -127, 30, 64, 32, -127};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(static_cast<int>(q.values[static_cast<size_t>(i)]), expect[i]);
  const float zeros[] = {0.0f, 0.0f};
  const PerChannelWeights z = QuantizeWeightsPerChannel(zeros, {2, 1}, 0);
  EXPECT_EQ(z.scales[0], 0.0f);
  EXPECT_EQ(static_cast<int>(z.values[0]), 0);
}

TEST(Quant, QuantizeMultiplier) {
  struct Case {
    double m;
    int32_t q;
    int shift;
  } cases[] = {{0.5, 1073741824, 0},
               {1.0, 1073741824, 1},
               {0.25, 1073741824, -1},
               {0.75, 1610612736, 0},
               {1.5, 1610612736, 1},
               {0.1, 1717986918, -3},
               {1 - std::ldexp(1.0, -40), 1073741824, 1},
               {std::ldexp(1.0, -40), 0, 0},
               {0.0, 0, 0}};
  for (const Case& c : cases) {
    int32_t q;
    int shift;
    QuantizeMultiplier(c.m, &q, &shift);
    EXPECT_EQ(q, c.q);
    EXPECT_EQ(shift, c.shift);
  }
}

TEST(Quant, MultiplyByQuantizedMultiplier) {
  EXPECT_EQ(MultiplyByQuantizedMultiplier(101, 1 << 30, 0), 51);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(-101, 1 << 30, 0), -50);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(5, 1 << 30, -1), 2);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(1000, 1717986918, -3), 100);
}

TEST(Quant, RoundingHelpers) {
  EXPECT_EQ(RoundingDivideByPOT(3, 1), 2);
  EXPECT_EQ(RoundingDivideByPOT(-3, 1), -2);
  EXPECT_EQ(RoundingDivideByPOT(-5, 2), -1);
  const int32_t mn = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(mn, mn), std::numeric_limits<int32_t>::max());
}

TEST(Quant, EndToEndFullyConnected) {
  // Input s=0.5 zp=-1 q=[1,0,3,-3]; weights s=0.25 q=[4,-8,2,1]; bias 1.0 -> 8 at 0.125;
  // output s=0.25 zp=10.
  const int8_t x[] = {1, 0, 3, -3};
  const int8_t w[] = {4, -8, 2, 1};
  const std::vector<int32_t> bias = QuantizeBias(std::vector<float>{1.0f}.data(), 1, 0.5f, {0.25f});
  EXPECT_EQ(bias[0], 8);
  int32_t acc = bias[0];
  for (int i = 0; i < 4; ++i) acc += w[i] * (x[i] - (-1));
  EXPECT_EQ(acc, 14);
  int32_t m;
  int shift;
  QuantizeMultiplier(0.5 * 0.25 / 0.25, &m, &shift);
  const int32_t out = MultiplyByQuantizedMultiplier(acc, m, shift) + 10;
  EXPECT_EQ(out, 17);
  int32_t lo, hi;
  ActivationRangeInt8(3, 0.25f, 10, &lo, &hi);
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 34);
}

TEST(Quant, QuantizeValue) {
  EXPECT_EQ(static_cast<int>(QuantizeValueInt8(1.75f, 0.25f, 10)), 17);
  EXPECT_EQ(static_cast<int>(QuantizeValueInt8(100.0f, 0.25f, 10)), 127);
  EXPECT_EQ(static_cast<int>(QuantizeValueInt8(-0.125f, 0.25f, 0)), -1);  // half away from 0
}

EMBER_TEST_MAIN
