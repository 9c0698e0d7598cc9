// LOG_SOFTMAX (tf.nn.log_softmax) and L2_NORMALIZATION (tf.math.l2_normalize over the last
// axis), float32, over the last axis, in the order of LiteRT's reference kernels so that results
// match them: log_softmax(x) = x - max - log(sum(exp(x - max))), the sum taken in order;
// l2_normalize(x) = x / max(sqrt(sum(x * x)), 1e-6), the reference's epsilon (TensorFlow's own
// 1e-12 on the squared sum is not in the converted model). int8 L2_NORMALIZATION (version 2) is
// reference_integer_ops::L2Normalization: the sum of squared differences from the zero point, its
// inverse square root as a multiplier (gemmlowp fixed point, five Newton-Raphson steps), and each
// difference rescaled onto the fixed output scale 1/128, zero point 0. int8 LOG_SOFTMAX
// (version 2) is reference_integer_ops::LogSoftmax, below (uint8 is refused).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "ember/lite/quant.h"
#include "lite/kernels.h"
#include "lite/kernels_misc.h"

namespace ember {
namespace lite {
namespace {

// One input and one output of the same float32 shape, rank 1 or more; sets outer/depth.
Status PrepareRows(NodeState* node, size_t max_rank, TensorType type = TensorType::kFloat32) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 1, 1));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  if (in.type != type) {
    return errors::Unimplemented(node->what + ": input '" + in.name + "' is " +
                                 TensorTypeName(in.type) + "; only " + TensorTypeName(type) +
                                 " is supported here");
  }
  if (in.shape.empty() || in.shape.size() > max_rank) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' has rank " +
                                   std::to_string(in.shape.size()) + "; ranks 1-" +
                                   std::to_string(max_rank) + " are supported");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, type, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, in.shape, "output"));
  node->depth = in.shape.back();
  node->outer = node->depth == 0 ? 0 : static_cast<int64_t>(in.num_elements) / node->depth;
  return Status::OK();
}

Status EvalLogSoftmax(NodeState* node) {
  const float* x = node->t.In<float>(0);
  float* y = node->t.Out<float>(0);
  const int64_t depth = node->depth;
  for (int64_t r = 0; r < node->outer; ++r) {
    const float* xr = x + r * depth;
    float* yr = y + r * depth;
    float max = std::numeric_limits<float>::lowest();
    for (int64_t c = 0; c < depth; ++c) max = std::max(max, xr[c]);
    float sum = 0.0f;
    for (int64_t c = 0; c < depth; ++c) sum += std::exp(xr[c] - max);
    const float log_sum = std::log(sum);
    for (int64_t c = 0; c < depth; ++c) yr[c] = xr[c] - max - log_sum;
  }
  return Status::OK();
}

constexpr float kL2Epsilon = 1e-6f;

Status EvalL2Normalization(NodeState* node) {
  const float* x = node->t.In<float>(0);
  float* y = node->t.Out<float>(0);
  const int64_t depth = node->depth;
  for (int64_t r = 0; r < node->outer; ++r) {
    const float* xr = x + r * depth;
    float* yr = y + r * depth;
    float sq = 0.0f;
    for (int64_t c = 0; c < depth; ++c) sq += xr[c] * xr[c];
    const float norm = std::max(std::sqrt(sq), kL2Epsilon);
    for (int64_t c = 0; c < depth; ++c) yr[c] = xr[c] / norm;
  }
  return Status::OK();
}

Status EvalL2NormalizationI8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  int8_t* y = node->t.Out<int8_t>(0);
  const int64_t depth = node->depth;
  const int32_t zp = node->in_zp;
  for (int64_t r = 0; r < node->outer; ++r) {
    const int8_t* xr = x + r * depth;
    int8_t* yr = y + r * depth;
    int32_t sum = 0;
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t d = xr[c] - zp;
      sum += d * d;
    }
    int32_t m = 0;
    int s = 0;
    InvSqrtQuantizedMultiplier(sum, &m, &s);
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t v = MultiplyByQuantizedMultiplier(xr[c] - zp, m, s + 7);  // output 1/128
      yr[c] = static_cast<int8_t>(std::min<int32_t>(127, std::max<int32_t>(-128, v)));
    }
  }
  return Status::OK();
}

// ---- int8 LOG_SOFTMAX: gemmlowp fixed point on raw int32 values, Qm.n in each comment ----

int32_t FxMul(int32_t a, int32_t b) { return SaturatingRoundingDoublingHighMul(a, b); }
int32_t FxAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
int32_t FxSub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
int32_t FxClamp(int64_t v) {
  return static_cast<int32_t>(
      std::min<int64_t>(std::numeric_limits<int32_t>::max(), std::max<int64_t>(INT32_MIN, v)));
}
// SaturatingRoundingMultiplyByPOT(Param) for an exponent >= 0.
int32_t FxShiftLeft(int32_t x, int exponent) {
  return exponent == 0 ? x : SatShiftLeft(x, exponent);
}
int32_t FxHalfSum(int32_t a, int32_t b) {
  const int64_t sum = static_cast<int64_t>(a) + b;
  return static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

// exp(a) for a in [-1/4, 0): Q0.31 in and out, a Taylor series around -1/8.
int32_t FxExpQuarter(int32_t a) {
  const int32_t exp_minus_eighth = 1895147668, third = 715827883;
  const int32_t x = FxAdd(a, int32_t{1} << 28);
  const int32_t x2 = FxMul(x, x), x3 = FxMul(x2, x), x4 = FxMul(x2, x2);
  const int32_t tail =
      RoundingDivideByPOT(FxAdd(FxMul(FxAdd(RoundingDivideByPOT(x4, 2), x3), third), x2), 1);
  return FxAdd(exp_minus_eighth, FxMul(exp_minus_eighth, FxAdd(x, tail)));
}

// exp(a) for a <= 0: Q5.26 in, Q0.31 out (gemmlowp's exp_on_negative_values).
int32_t FxExpNegative(int32_t a) {
  const int32_t quarter = int32_t{1} << 24;
  const int32_t low = FxSub(a & (quarter - 1), quarter);
  int32_t result = FxExpQuarter(SatShiftLeft(low, 5));
  const int32_t rest = FxSub(low, a);
  static const int32_t kExpMinusPow2[7] = {1672461947, 1302514674, 790015084, 290630308,
                                           39332535,   720401,     242};  // exp(-2^k), k=-2..4
  for (int k = 0; k < 7; ++k) {
    if (rest & (int32_t{1} << (24 + k))) result = FxMul(result, kExpMinusPow2[k]);
  }
  return a == 0 ? std::numeric_limits<int32_t>::max() : result;
}

// log(z) for z >= 1: Q12.19 in, Q5.26 out (TFLite's log_x_for_x_greater_than_or_equal_to_1<5>,
// accumulated in Q6.25).
int32_t FxLogQ12(int32_t z) {
  constexpr int kIn = 12, kAccum = 6;
  const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
  const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
  const int32_t quarter = RoundingDivideByPOT(536870912, kAccum);
  const int za_lz = CountLeadingZeros(static_cast<uint32_t>(z));
  const int32_t r_a = FxShiftLeft(FxMul(FxShiftLeft(z, za_lz - 1), sqrt_half), 1);
  const int32_t za_pow =
      FxClamp(static_cast<int64_t>(FxShiftLeft(kIn - za_lz, 31 - kAccum)) + quarter);
  const int zb_headroom = CountLeadingZeros(static_cast<uint32_t>(FxMul(z, sqrt_half))) - 1;
  const int32_t r_b = FxShiftLeft(z, zb_headroom);
  const int32_t zb_pow =
      FxClamp(static_cast<int64_t>(FxShiftLeft(kIn - zb_headroom, 31 - kAccum)) - quarter);
  const int32_t r = std::min(r_a, r_b);
  const int32_t pow2 = std::max(za_pow, zb_pow);
  const int32_t p = FxHalfSum(r, sqrt_sqrt_half);
  int32_t q = FxSub(r, sqrt_sqrt_half);
  q = FxAdd(q, q);
  const int32_t sq = FxMul(q, q);
  const int32_t num = FxAdd(FxMul(q, r), FxMul(FxMul(q, sq), alpha_n));
  const int32_t denom =
      FxAdd(FxMul(p, FxAdd(FxAdd(alpha_i, q), FxMul(alpha_d, sq))), FxMul(alpha_f, q));
  const int32_t sum =
      FxAdd(FxMul(pow2, log_2), FxMul(RoundingDivideByPOT(num, kAccum), OneOverOnePlusX(denom)));
  return SatShiftLeft(sum, 1);
}

// reference_integer_ops::LogSoftmax: differences from the row's max in Q5.26, their exps summed
// in Q12.19, the log of the sum subtracted, and the result on the output scale 16/256 with zero
// point 127. node->multiplier/shift scale a difference into Q5.26, m1/s1 back (the range test).
Status EvalLogSoftmaxI8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  int8_t* y = node->t.Out<int8_t>(0);
  const int64_t depth = node->depth;
  const int32_t diff_min = node->diff_min;
  for (int64_t r = 0; r < node->outer; ++r) {
    const int8_t* xr = x + r * depth;
    int8_t* yr = y + r * depth;
    int32_t max = -128;
    for (int64_t c = 0; c < depth; ++c) max = std::max<int32_t>(max, xr[c]);
    int32_t sum = 0;
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = xr[c] - max;
      if (diff < diff_min) continue;
      const int32_t d = MultiplyByQuantizedMultiplier(diff, node->multiplier, node->shift);
      sum = FxAdd(sum, RoundingDivideByPOT(FxExpNegative(d), 12));
    }
    const int32_t log_sum = FxLogQ12(sum);
    const int32_t adjusted = std::max(
        diff_min - 1, MultiplyByQuantizedMultiplier(FxAdd(log_sum, INT32_MIN), node->m1, node->s1));
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = xr[c] - max;
      if (diff > adjusted) {
        const int32_t d = MultiplyByQuantizedMultiplier(diff, node->multiplier, node->shift);
        const int32_t v = RoundingDivideByPOT(FxSub(d, log_sum), 31 - 5 - 4) + 127;
        yr[c] = static_cast<int8_t>(std::min(127, std::max(-128, v)));
      } else {
        yr[c] = -128;
      }
    }
  }
  return Status::OK();
}

// LiteRT's LogSoftmaxPrepare for its reference kernel (PreprocessLogSoftmaxScalingExp, beta 1,
// 5 integer bits; CalculateInputRadius).
Status PrepareLogSoftmaxI8(NodeState* node) {
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, in, "input"));
  EMBER_RETURN_IF_ERROR(NeedFixedOutputQuant(*node, out, 16.0f / 256.0f, 127, "16/256 and 127"));
  constexpr int kIntegerBits = 5;
  const double real = std::min(static_cast<double>(in.quant.scale[0]) *
                                   static_cast<double>(int64_t{1} << (31 - kIntegerBits)),
                               2147483647.0);
  if (!(real > 1.0)) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' scale " +
                                   std::to_string(in.quant.scale[0]) +
                                   " is too small for LiteRT's int8 LOG_SOFTMAX");
  }
  QuantizeMultiplier(real, &node->multiplier, &node->shift);
  if (node->shift < 1 || node->shift > 30) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' scale " +
                                   std::to_string(in.quant.scale[0]) + " is out of range");
  }
  const double reverse =
      static_cast<double>(int64_t{1} << (31 - node->shift)) / static_cast<double>(node->multiplier);
  QuantizeMultiplier(reverse, &node->m1, &node->s1);
  if (node->s1 > 0) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' scale " +
                                   std::to_string(in.quant.scale[0]) + " is out of range");
  }
  const double radius = static_cast<double>((int64_t{1} << kIntegerBits) - 1) *
                        static_cast<double>(int64_t{1} << (31 - kIntegerBits)) /
                        static_cast<double>(int64_t{1} << node->shift);
  node->diff_min = -static_cast<int>(std::floor(radius));
  node->eval = EvalLogSoftmaxI8;
  return Status::OK();
}

}  // namespace

Status PrepareLogSoftmax(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 1, 1));
  const bool i8 = node->t.in[0]->type == TensorType::kInt8;
  EMBER_RETURN_IF_ERROR(PrepareRows(node, 8, i8 ? TensorType::kInt8 : TensorType::kFloat32));
  if (i8) return PrepareLogSoftmaxI8(node);
  node->eval = EvalLogSoftmax;
  return Status::OK();
}

Status PrepareL2Normalization(NodeState* node) {
  // LiteRT's kernel takes ranks up to 4 and no fused activation; int8 writes onto the fixed
  // output scale 1/128, zero point 0, which LiteRT requires.
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 1, 1));
  const bool i8 = node->t.in[0]->type == TensorType::kInt8;
  EMBER_RETURN_IF_ERROR(PrepareRows(node, 4, i8 ? TensorType::kInt8 : TensorType::kFloat32));
  if (node->op->options.activation != Activation::kNone) {
    return errors::Unimplemented(node->what + ": a fused activation is not supported (LiteRT " +
                                 "requires NONE)");
  }
  if (!i8) {
    node->eval = EvalL2Normalization;
    return Status::OK();
  }
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, in, "input"));
  EMBER_RETURN_IF_ERROR(NeedFixedOutputQuant(*node, out, 1.0f / 128.0f, 0, "1/128 and 0"));
  node->in_zp = static_cast<int32_t>(in.quant.zero_point[0]);
  node->eval = EvalL2NormalizationI8;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
