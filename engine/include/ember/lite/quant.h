// Integer quantization math, bit-exact with TFLite's reference kernels (see
// ../shared/spec/ENGINE.md section 2). One place for the converter and the kernels.
#ifndef EMBER_LITE_QUANT_H_
#define EMBER_LITE_QUANT_H_

#include <climits>
#include <cstdint>
#include <vector>

#include "ember/status.h"

namespace ember {
namespace lite {

struct QuantParams {
  double scale = 0.0;
  int32_t zero_point = 0;
};

// ChooseQuantizationParams<T>(rmin, rmax, narrow) for a [qmin, qmax] integer range. The
// range is first widened to include 0 (as the converter does). Scale in double, zero point
// nudged: of z_min and z_max the one with the smaller error wins, clamped, rounded half away.
QuantParams ChooseQuantizationParams(double rmin, double rmax, int32_t qmin, int32_t qmax);

// Symmetric per-channel int8 weights along `dim` of `shape` (values in [-127, 127]).
struct PerChannelWeights {
  std::vector<float> scales;
  std::vector<int8_t> values;
};
PerChannelWeights QuantizeWeightsPerChannel(const float* data, const std::vector<int32_t>& shape,
                                            int dim);
// Symmetric int32 bias with scale s_in * s_w[c] (zero point 0).
std::vector<int32_t> QuantizeBias(const float* bias, int n, float input_scale,
                                  const std::vector<float>& weight_scales);

// (multiplier, shift) with M = multiplier * 2^(shift - 31), multiplier in [2^30, 2^31).
void QuantizeMultiplier(double real, int32_t* multiplier, int* shift);

// Inline: these run once per output element in the int8 kernels.
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

inline int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  if (exponent <= 0) return x;
  if (exponent > 31) exponent = 31;
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// Double-rounding MultiplyByQuantizedMultiplier (TFLite's default build).
inline int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  // Wrapping multiply, as the reference's int32 arithmetic behaves on every target.
  const int32_t shifted =
      left >= 32
          ? 0
          : static_cast<int32_t>(static_cast<uint32_t>(x) * (static_cast<uint32_t>(1) << left));
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(shifted, multiplier), right);
}

// gemmlowp's SaturatingRoundingMultiplyByPOT for a left shift: x * 2^exponent, saturated.
inline int32_t SatShiftLeft(int32_t x, int exponent) {
  const int32_t threshold = static_cast<int32_t>((int64_t{1} << (31 - exponent)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

inline int CountLeadingZeros(uint32_t x) {
  if (x == 0) return 32;
  int n = 0;
  while ((x & 0x80000000u) == 0) {
    x <<= 1;
    ++n;
  }
  return n;
}

// 1 / (1 + x) for x in [0, 1): Q0.31 in and out, by Newton-Raphson in Q2.29 (gemmlowp's
// one_over_one_plus_x_for_x_in_0_1, which LiteRT's int8 SOFTMAX and DIV use).
inline int32_t OneOverOnePlusX(int32_t a) {
  const int64_t sum = static_cast<int64_t>(a) + INT32_MAX;
  const int32_t half_denominator = static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
  const int32_t constant_48_over_17 = 1515870810;
  const int32_t constant_neg_32_over_17 = -1010580540;
  int32_t x = constant_48_over_17 +
              SaturatingRoundingDoublingHighMul(half_denominator, constant_neg_32_over_17);
  const int32_t one_q2 = 1 << 29;
  for (int i = 0; i < 3; ++i) {
    const int32_t half_denominator_times_x = SaturatingRoundingDoublingHighMul(half_denominator, x);
    const int32_t one_minus = one_q2 - half_denominator_times_x;
    x = x + SatShiftLeft(SaturatingRoundingDoublingHighMul(x, one_minus), 2);
  }
  return SatShiftLeft(x, 1);
}

// LiteRT's GetInvSqrtQuantizedMultiplierExp(input, reverse_shift -1): 1 / sqrt(input) as a
// multiplier and a left shift (int8 RSQRT, L2_NORMALIZATION). Inputs of 1 and below are taken as
// 1, as there.
void InvSqrtQuantizedMultiplier(int32_t input, int32_t* multiplier, int* shift);

// Single-rounding variant: (x * multiplier + 2^(30 - shift)) >> (31 - shift). LiteRT 2.3's
// reference FULLY_CONNECTED with per-channel weights rounds this way (measured).
int32_t MultiplyByQuantizedMultiplierSingleRounding(int32_t x, int32_t multiplier, int shift);

// round(v) as int32, saturated (a hostile scale must not make the cast undefined).
int32_t SaturatingRound(double v);

// a + b with two's-complement wrap-around (no undefined behaviour on hostile models).
inline int32_t WrappingAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

// Clamp range for a fused activation on an output with (scale, zero_point), int8.
void ActivationRangeInt8(int activation, float scale, int32_t zero_point, int32_t* act_min,
                         int32_t* act_max);

// q = clamp(round(x / scale) + zp) as TFLite's reference QUANTIZE does.
int8_t QuantizeValueInt8(float x, float scale, int32_t zero_point);

}  // namespace lite
}  // namespace ember

#endif  // EMBER_LITE_QUANT_H_
