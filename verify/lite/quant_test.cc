// The quantization test vectors of ENGINE.md section 2, against the installed libember_lite.
#include "ember/lite/quant.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "ember/testing/ember_test.h"

using namespace ember::lite;

TEST(VerifyQuant, ChooseQuantizationParams) {
  struct Case {
    double lo, hi, scale;
    int32_t zp_u8, zp_i8;
  } cases[] = {{0, 255, 1.0, 0, -128},         {-1, 1, 2.0 / 255, 128, -1},
               {-10, 30, 40.0 / 255, 64, -64}, {-2.5, 7.5, 10.0 / 255, 64, -64},
               {0, 6, 6.0 / 255, 0, -128},     {-3, 0, 3.0 / 255, 255, 127},
               {0.5, 2, 2.0 / 255, 0, -128},   {-3, -1, 3.0 / 255, 255, 127}};
  for (const Case& c : cases) {
    const QuantParams u = ChooseQuantizationParams(c.lo, c.hi, 0, 255);
    const QuantParams s = ChooseQuantizationParams(c.lo, c.hi, -128, 127);
    EXPECT_NEAR(u.scale, c.scale, 1e-9);
    EXPECT_NEAR(s.scale, c.scale, 1e-9);
    EXPECT_EQ(u.zero_point, c.zp_u8);
    EXPECT_EQ(s.zero_point, c.zp_i8);
  }
}

TEST(VerifyQuant, PerChannelWeightsAndMultipliers) {
  const float w[] = {0.5f, -1.27f, 0.3f, 0.02f, 0.01f, -0.04f};
  const PerChannelWeights q = QuantizeWeightsPerChannel(w, {2, 3}, 0);
  const int expect[] = {50, -127, 30, 64, 32, -127};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(static_cast<int>(q.values[static_cast<size_t>(i)]), expect[i]);
  EXPECT_NEAR(q.scales[1], 0.000314961, 1e-9);
  struct M {
    double m;
    int32_t q;
    int shift;
  } ms[] = {{0.5, 1073741824, 0},
            {1.0, 1073741824, 1},
            {0.25, 1073741824, -1},
            {0.75, 1610612736, 0},
            {1.5, 1610612736, 1},
            {0.1, 1717986918, -3},
            {1 - std::ldexp(1.0, -40), 1073741824, 1},
            {std::ldexp(1.0, -40), 0, 0}};
  for (const M& m : ms) {
    int32_t q;
    int shift;
    QuantizeMultiplier(m.m, &q, &shift);
    EXPECT_EQ(q, m.q);
    EXPECT_EQ(shift, m.shift);
  }
  EXPECT_EQ(MultiplyByQuantizedMultiplier(101, 1 << 30, 0), 51);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(-101, 1 << 30, 0), -50);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(5, 1 << 30, -1), 2);
  EXPECT_EQ(MultiplyByQuantizedMultiplierSingleRounding(5, 1 << 30, -1), 1);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(1000, 1717986918, -3), 100);
  EXPECT_EQ(RoundingDivideByPOT(3, 1), 2);
  EXPECT_EQ(RoundingDivideByPOT(-3, 1), -2);
  EXPECT_EQ(RoundingDivideByPOT(-5, 2), -1);
}

TEST(VerifyQuant, EndToEndFullyConnected) {
  const int8_t x[] = {1, 0, 3, -3};
  const int8_t w[] = {4, -8, 2, 1};
  const float one = 1.0f;
  const std::vector<int32_t> bias = QuantizeBias(&one, 1, 0.5f, {0.25f});
  int32_t acc = bias[0];
  for (int i = 0; i < 4; ++i) acc += w[i] * (x[i] + 1);
  int32_t m;
  int shift;
  QuantizeMultiplier(0.5, &m, &shift);
  EXPECT_EQ(acc, 14);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(acc, m, shift) + 10, 17);
  int32_t lo, hi;
  ActivationRangeInt8(3, 0.25f, 10, &lo, &hi);
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 34);
}

EMBER_TEST_MAIN
