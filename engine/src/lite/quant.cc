// Quantization math; formulas from TFLite's quantization_util.cc, common.h and
// gemmlowp's fixedpoint.h as described in ../shared/spec/ENGINE.md section 2.
#include "ember/lite/quant.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

namespace ember {
namespace lite {

QuantParams ChooseQuantizationParams(double rmin, double rmax, int32_t qmin, int32_t qmax) {
  rmin = std::min(rmin, 0.0);
  rmax = std::max(rmax, 0.0);
  QuantParams p;
  if (rmin == rmax) return p;
  const double scale = (rmax - rmin) / (static_cast<double>(qmax) - static_cast<double>(qmin));
  const double zmin = qmin - rmin / scale;
  const double zmax = qmax - rmax / scale;
  const double err_min = std::abs(static_cast<double>(qmin)) + std::abs(rmin / scale);
  const double err_max = std::abs(static_cast<double>(qmax)) + std::abs(rmax / scale);
  const double z = err_min < err_max ? zmin : zmax;
  int32_t zp;
  if (z < qmin) {
    zp = qmin;
  } else if (z > qmax) {
    zp = qmax;
  } else {
    zp = static_cast<int32_t>(std::round(z));
  }
  p.scale = scale;
  p.zero_point = zp;
  return p;
}

PerChannelWeights QuantizeWeightsPerChannel(const float* data, const std::vector<int32_t>& shape,
                                            int dim) {
  PerChannelWeights out;
  size_t outer = 1, inner = 1;
  for (int i = 0; i < dim; ++i) outer *= static_cast<size_t>(shape[static_cast<size_t>(i)]);
  for (size_t i = static_cast<size_t>(dim) + 1; i < shape.size(); ++i) {
    inner *= static_cast<size_t>(shape[i]);
  }
  const size_t channels = static_cast<size_t>(shape[static_cast<size_t>(dim)]);
  std::vector<float> absmax(channels, 0.0f);
  for (size_t o = 0; o < outer; ++o) {
    for (size_t c = 0; c < channels; ++c) {
      for (size_t i = 0; i < inner; ++i) {
        absmax[c] = std::max(absmax[c], std::abs(data[(o * channels + c) * inner + i]));
      }
    }
  }
  out.scales.resize(channels);
  for (size_t c = 0; c < channels; ++c) out.scales[c] = absmax[c] / 127.0f;
  out.values.resize(outer * channels * inner);
  for (size_t o = 0; o < outer; ++o) {
    for (size_t c = 0; c < channels; ++c) {
      const float inv = absmax[c] == 0.0f ? 0.0f : 127.0f / absmax[c];
      for (size_t i = 0; i < inner; ++i) {
        const size_t k = (o * channels + c) * inner + i;
        const float q = std::round(data[k] * inv);
        out.values[k] = static_cast<int8_t>(std::min(127.0f, std::max(-127.0f, q)));
      }
    }
  }
  return out;
}

std::vector<int32_t> QuantizeBias(const float* bias, int n, float input_scale,
                                  const std::vector<float>& weight_scales) {
  std::vector<int32_t> out(static_cast<size_t>(n));
  const double lim = std::numeric_limits<int32_t>::max();
  for (int c = 0; c < n; ++c) {
    const float ws =
        weight_scales.size() == 1 ? weight_scales[0] : weight_scales[static_cast<size_t>(c)];
    const float s = input_scale * ws;
    double q = s == 0.0f ? 0.0 : std::round(static_cast<double>(bias[c]) / s);
    q = std::min(lim, std::max(-lim, q));
    out[static_cast<size_t>(c)] = static_cast<int32_t>(q);
  }
  return out;
}

void QuantizeMultiplier(double real, int32_t* multiplier, int* shift) {
  if (real == 0.0 || !std::isfinite(real)) {  // non-finite only from hostile models: callers reject
    *multiplier = 0;
    *shift = 0;
    return;
  }
  const double q = std::frexp(real, shift);
  int64_t q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(1LL << 31)));
  if (q_fixed == (1LL << 31)) {
    q_fixed /= 2;
    ++*shift;
  }
  if (*shift < -31) {
    *shift = 0;
    q_fixed = 0;
  }
  *multiplier = static_cast<int32_t>(q_fixed);
}

int32_t MultiplyByQuantizedMultiplierSingleRounding(int32_t x, int32_t multiplier, int shift) {
  if (shift > 30) shift = 30;
  const int total = 31 - shift;
  if (total > 62) return 0;
  const int64_t r = (static_cast<int64_t>(x) * multiplier + (int64_t{1} << (total - 1))) >> total;
  return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(r, INT32_MIN), INT32_MAX));
}

int32_t SaturatingRound(double v) {
  if (std::isnan(v)) return 0;
  const double r = std::round(v);
  if (r >= 2147483647.0) return INT32_MAX;
  if (r <= -2147483648.0) return INT32_MIN;
  return static_cast<int32_t>(r);
}

void ActivationRangeInt8(int activation, float scale, int32_t zero_point, int32_t* act_min,
                         int32_t* act_max) {
  const int32_t qmin = -128, qmax = 127;
  auto quantize = [&](float f) { return WrappingAdd(zero_point, SaturatingRound(f / scale)); };
  switch (activation) {
    case 1:  // RELU
      *act_min = std::max(qmin, quantize(0.0f));
      *act_max = qmax;
      break;
    case 2:  // RELU_N1_TO_1
      *act_min = std::max(qmin, quantize(-1.0f));
      *act_max = std::min(qmax, quantize(1.0f));
      break;
    case 3:  // RELU6
      *act_min = std::max(qmin, quantize(0.0f));
      *act_max = std::min(qmax, quantize(6.0f));
      break;
    default:
      *act_min = qmin;
      *act_max = qmax;
  }
}

void InvSqrtQuantizedMultiplier(int32_t input, int32_t* multiplier, int* shift) {
  if (input <= 1) {  // 0 and 1 as 1, as there
    *multiplier = INT32_MAX;
    *shift = 0;
    return;
  }
  // input scaled into [2^27, 2^29) by pairs of bits; x = 1 / sqrt(input / 2) refined from 1 by
  // five Newton-Raphson steps in Q3.28, then times sqrt(2) / 2.
  int right = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++right;
  }
  const int pairs = (CountLeadingZeros(static_cast<uint32_t>(input)) - 1) / 2 - 1;
  right -= pairs;
  input <<= 2 * pairs;
  const int32_t half_input = RoundingDivideByPOT(input >> 1, 1);
  const int32_t one_and_half = (1 << 28) + (1 << 27);
  int32_t x = 1 << 28;  // 1.0 with 3 integer bits
  for (int i = 0; i < 5; ++i) {
    const int32_t x3 = SatShiftLeft(
        SaturatingRoundingDoublingHighMul(SaturatingRoundingDoublingHighMul(x, x), x), 6);
    const uint32_t diff =
        static_cast<uint32_t>(SaturatingRoundingDoublingHighMul(one_and_half, x)) -
        static_cast<uint32_t>(SaturatingRoundingDoublingHighMul(half_input, x3));
    x = SatShiftLeft(static_cast<int32_t>(diff), 3);
  }
  x = SaturatingRoundingDoublingHighMul(x, 1518500250);  // sqrt(2) / 2 with 0 integer bits
  if (right < 0) {
    x = static_cast<int32_t>(static_cast<uint32_t>(x) << -right);
    right = 0;
  }
  *multiplier = x;
  *shift = -right;
}

int8_t QuantizeValueInt8(float x, float scale, int32_t zero_point) {
  const double v = std::round(static_cast<double>(x) / static_cast<double>(scale));
  const double clamped = std::min(127.0, std::max(-128.0, v + zero_point));
  return static_cast<int8_t>(clamped);
}

}  // namespace lite
}  // namespace ember
