// int8 versions of kernels_misc.cc's activations and elementwise ops, bit-exact with LiteRT's
// reference kernels (OpResolverType.BUILTIN_REF):
//   LOGISTIC, TANH, GELU: LiteRT's LUTPopulate<int8_t> (activations.cc), float math on each
//     input value;
//   HARD_SWISH: reference_ops::HardSwish, 16-bit fixed point;
//   RSQRT: elementwise.cc's int8 path, gemmlowp's Newton-Raphson inverse square root;
//   LEAKY_RELU: reference_ops::QuantizeLeakyRelu;
//   SQUARED_DIFFERENCE: squared_difference.cc's rescaled difference, with NumPy broadcasting.
// A unary int8 op has only 256 inputs, so Prepare runs the reference arithmetic once on each and
// Eval looks the results up: the same bytes as computing them element by element.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ember/lite/quant.h"
#include "lite/broadcast.h"
#include "lite/kernels.h"
#include "lite/kernels_misc.h"
#include "lite/lookup_vbmi.h"
#include "lite/loop_isa.h"

// The float tables must round each step as LiteRT's build does: no fused multiply-adds (GCC
// contracts none in ISO C++ mode, which CMakeLists.txt sets; clang may under -march=native).
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace ember {
namespace lite {
namespace {

constexpr int kTableSize = 256;  // one output per int8 input, input q at q + 128

// static_cast<int32_t>(float) as LiteRT's x86-64 build computes it (cvttss2si): NaN and values
// out of range give INT32_MIN, where C++ leaves the cast undefined (hostile scales only).
int32_t TruncateToInt32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;
  return static_cast<int32_t>(v);
}

int8_t ClampInt8(int32_t v) { return static_cast<int8_t>(std::min(127, std::max(-128, v))); }

// LiteRT's LUTPopulate<int8_t>: the output for input q is
// clamp(round(f(s_in * (q - zp_in)) * (1 / s_out)) + zp_out), every step in float.
void FillFloatTable(const NodeState& node, float (*f)(float), int8_t* table) {
  const TensorDef& in = *node.t.in[0];
  const TensorDef& out = *node.t.out[0];
  const float in_scale = in.quant.scale[0];
  const float inverse_scale = 1 / out.quant.scale[0];
  for (int32_t q = -128; q <= 127; ++q) {
    const float x = in_scale * static_cast<float>(q - node.in_zp);
    const float rescaled = std::round(f(x) * inverse_scale);
    table[q + 128] = ClampInt8(TruncateToInt32(rescaled + static_cast<float>(node.out_zp)));
  }
}

// The float functions LiteRT's Prepare tabulates (activations.cc, reference/gelu.h), written as
// they are there so that the compiler rounds each step the same way.
constexpr double kSqrtHalf = 0.70710678118654752440;          // M_SQRT1_2
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;     // M_2_SQRTPI
constexpr float kSqrtTwoOverPi = kTwoOverSqrtPi * kSqrtHalf;  // as gelu.h's kSqrt2dPi

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float Tanh(float x) { return std::tanh(x); }
float Exp(float x) { return std::exp(x); }
float Log(float x) { return std::log(x); }
float Gelu(float x) { return 0.5f * x * std::erfc(x * static_cast<float>(-kSqrtHalf)); }
float GeluTanh(float x) {
  return 0.5f * x * (1.f + std::tanh(kSqrtTwoOverPi * (x + 0.044715f * x * x * x)));
}

// gemmlowp's 16-bit fixed point, as reference_ops::HardSwish uses it. Casts to int16_t wrap, as
// the reference's int16 arithmetic does on every target.
int16_t RoundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  const int32_t ab = static_cast<int32_t>(a) * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

// SQDMULH: the high half rounded toward zero.
int16_t DoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  return static_cast<int16_t>(static_cast<int32_t>(a) * b / (1 << 15));
}

int16_t RoundingDivideByPOT16(int16_t x, int exponent) {
  const int16_t mask = static_cast<int16_t>((int64_t{1} << exponent) - 1);
  const int16_t remainder = static_cast<int16_t>(x & mask);
  const int16_t threshold = static_cast<int16_t>((mask >> 1) + (x < 0 ? 1 : 0));
  return static_cast<int16_t>((x >> exponent) + (remainder > threshold ? 1 : 0));
}

int16_t SaturatingLeftShift16(int16_t v, int amount) {
  const int64_t r = static_cast<int64_t>(v) * (int64_t{1} << std::min(amount, 40));
  return static_cast<int16_t>(std::min<int64_t>(INT16_MAX, std::max<int64_t>(INT16_MIN, r)));
}

// TFLite's DownScaleInt32ToInt16Multiplier (the multiplier is >= 0).
int16_t DownScaleMultiplier(int32_t m) {
  if (m >= INT32_MAX - (1 << 15)) return INT16_MAX;
  return static_cast<int16_t>((m + (1 << 15)) >> 16);
}

struct HardSwishParams {
  int32_t in_zp, out_zp;
  int16_t out_multiplier, reluish_multiplier;
  int out_exponent, reluish_exponent;
};

// reference_ops::HardSwish for one input: x * relu6(x + 3) / 6 with x on a 2^7 finer scale, the
// "relu-ish" factor relu6(x + 3) / 6 in [0, 1] as a 16-bit fraction.
int8_t HardSwishValue(const HardSwishParams& p, int32_t q) {
  const int16_t x = static_cast<int16_t>(q - p.in_zp);
  const int16_t hires = static_cast<int16_t>(x * (1 << 7));
  const int16_t preshift_out = RoundingDoublingHighMul16(hires, p.out_multiplier);
  int16_t reluish = hires;
  if (p.reluish_exponent > 0) reluish = SaturatingLeftShift16(reluish, p.reluish_exponent - 1);
  reluish = RoundingDoublingHighMul16(reluish, p.reluish_multiplier);
  if (p.reluish_exponent > 0) reluish = SaturatingLeftShift16(reluish, 1);
  if (p.reluish_exponent < 0) reluish = RoundingDivideByPOT16(reluish, -p.reluish_exponent);
  reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);
  const int16_t preshift = DoublingHighMul16(reluish, preshift_out);
  int16_t y = RoundingDivideByPOT16(preshift, -p.out_exponent);
  y = static_cast<int16_t>(y + p.out_zp);
  return ClampInt8(y);
}

Status FillHardSwishTable(const NodeState& node, int8_t* table) {
  // HardSwishPrepare's multipliers, computed in float as there.
  const float in_scale = node.t.in[0]->quant.scale[0];
  const float out_scale = node.t.out[0]->quant.scale[0];
  const float hires_scale = (1.0f / 128.0f) * in_scale;
  const float reluish_scale = 3.0f / 32768.0f;
  const float out_multiplier = hires_scale / out_scale;
  const float reluish_multiplier = hires_scale / reluish_scale;
  HardSwishParams p;
  p.in_zp = node.in_zp;
  p.out_zp = node.out_zp;
  int32_t m = 0;
  QuantizeMultiplier(out_multiplier, &m, &p.out_exponent);
  p.out_multiplier = DownScaleMultiplier(m);
  if (p.out_exponent > 0) {
    return errors::InvalidArgument(node.what + ": output scale " + std::to_string(out_scale) +
                                   " is too small for input scale " + std::to_string(in_scale) +
                                   " (LiteRT requires input scale <= 128 x output scale)");
  }
  QuantizeMultiplier(reluish_multiplier, &m, &p.reluish_exponent);
  p.reluish_multiplier = DownScaleMultiplier(m);
  for (int32_t q = -128; q <= 127; ++q) table[q + 128] = HardSwishValue(p, q);
  return Status::OK();
}

// ABS's table (LiteRT's AbsEvalQuantized): |q - zp_in|, rescaled by in_scale / out_scale (a
// float quotient, then QuantizeMultiplier) when the scales differ, plus zp_out.
void FillAbsTable(const NodeState& node, int8_t* table) {
  const float in_scale = node.t.in[0]->quant.scale[0];
  const float out_scale = node.t.out[0]->quant.scale[0];
  int32_t multiplier = 0;
  int shift = 0;
  QuantizeMultiplier(static_cast<double>(in_scale / out_scale), &multiplier, &shift);
  for (int32_t q = -128; q <= 127; ++q) {
    const int32_t value = q > node.in_zp ? q - node.in_zp : node.in_zp - q;
    const int32_t scaled =
        in_scale == out_scale ? value : MultiplyByQuantizedMultiplier(value, multiplier, shift);
    table[q + 128] = ClampInt8(scaled + node.out_zp);
  }
}

// SQRT's table (LiteRT's SqrtEvalQuantized): sqrt(s_in * (q - zp_in)) / s_out truncated toward
// zero (not rounded), plus zp_out, clamped. Inputs below the zero point fail Invoke, as in LiteRT.
void FillSqrtTable(const NodeState& node, int8_t* table) {
  const float in_scale = node.t.in[0]->quant.scale[0];
  const float out_scale = node.t.out[0]->quant.scale[0];
  for (int32_t q = node.in_zp; q <= 127; ++q) {
    const float v = std::sqrt(in_scale * static_cast<float>(q - node.in_zp));
    table[q + 128] = ClampInt8(TruncateToInt32(v / out_scale) + node.out_zp);
  }
}

// RSQRT's table; inputs below the zero point (negative values) are an error at Eval, as in
// LiteRT, and their entries are unused.
void FillRsqrtTable(const NodeState& node, int8_t* table) {
  // SetRsqrtOutputMultiplier: the square root and product in float, the reciprocal in double.
  const float in_scale = node.t.in[0]->quant.scale[0];
  const float out_scale = node.t.out[0]->quant.scale[0];
  int32_t out_multiplier = 0;
  int out_shift = 0;
  QuantizeMultiplier(1. / (std::sqrt(in_scale) * out_scale), &out_multiplier, &out_shift);
  constexpr int kShift = 20;  // keeps the intermediate an integer
  for (int32_t q = -128; q <= 127; ++q) {
    const int32_t value = q - node.in_zp;
    if (value <= 0) {  // 0 reads as the largest output
      table[q + 128] = 127;
      continue;
    }
    int32_t m = 0;
    int s = 0;
    InvSqrtQuantizedMultiplier(value, &m, &s);
    const int32_t data = MultiplyByQuantizedMultiplier(1, m, s + kShift);
    const int32_t y = WrappingAdd(
        MultiplyByQuantizedMultiplier(data, out_multiplier, out_shift - kShift), node.out_zp);
    table[q + 128] = ClampInt8(y);
  }
}

// reference_ops::QuantizeLeakyRelu for one input (alpha >= 0, checked in Prepare).
int8_t LeakyReluValue(const NodeState& node, int32_t q) {
  const int32_t x = q - node.in_zp;
  const int32_t scaled = x >= 0 ? MultiplyByQuantizedMultiplier(x, node.m1, node.s1)
                                : MultiplyByQuantizedMultiplier(x, node.m2, node.s2);
  return ClampInt8(WrappingAdd(node.out_zp, scaled));
}

Status EvalTableInt8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  int8_t* y = node->t.Out<int8_t>(0);
  const int8_t* table = node->scratch8.data() + 128;
  const size_t n = node->t.out[0]->num_elements;
  if (node->op->op == BuiltinOp::kRsqrt || node->op->op == BuiltinOp::kSqrt) {
    for (size_t i = 0; i < n; ++i) {
      if (x[i] < node->in_zp) {
        return errors::InvalidArgument(
            node->what + ": input " + std::to_string(i) + " is " + std::to_string(x[i]) +
            ", below the zero point " + std::to_string(node->in_zp) +
            (node->op->op == BuiltinOp::kSqrt ? " (SQRT is only defined for non-negative values)"
                                              : " (RSQRT is only defined for positive values)"));
      }
    }
  }
  LookUpInt8(table, x, n, y);
  return Status::OK();
}

// int8 SQUARED_DIFFERENCE's output for its inputs' values qa, qb: a function of the two bytes
// alone. Each input's rescaled value (MultiplyByQuantizedMultiplier of (q - zp) * 2^7) comes
// from a table made in Prepare (scratch32: [0, 256) for input 0, [256, 512) for input 1, index
// q + 128).
int8_t SquaredDifferenceI8(const NodeState& p, int32_t qa, int32_t qb) {
  // |d| <= 255 * 2^7, so d * d fits in 32 bits.
  const int32_t d =
      p.scratch32[static_cast<size_t>(qa + 128)] - p.scratch32[static_cast<size_t>(256 + qb + 128)];
  return ClampInt8(
      WrappingAdd(MultiplyByQuantizedMultiplier(d * d, p.multiplier, p.shift), p.out_zp));
}

// The outputs for input 1's value qb and each value of input 0, as a row of the node's 64 KiB
// table of outputs (scratch8: row qb + 128, entry qa + 128), made the first time qb is met
// (scratchu8[qb + 128] set) and kept: they depend on nothing but the two bytes.
const int8_t* SquaredDifferenceRow(NodeState* node, int32_t qb) {
  const size_t row = static_cast<size_t>(qb + 128);
  int8_t* out = node->scratch8.data() + row * 256;
  if (node->scratchu8[row] == 0) {
    for (int32_t qa = -128; qa < 128; ++qa) out[qa + 128] = SquaredDifferenceI8(*node, qa, qb);
    node->scratchu8[row] = 1;
  }
  return out;
}

// Each output looked up in SquaredDifferenceRow's table, in broadcast runs; a run whose input 1
// stays one value (LayerNormalization's x - mean(x) over a row: a run of the row's width) reads
// one table row, 64 values per byte permute on AVX-512 VBMI. The reference's three
// MultiplyByQuantizedMultiplier calls per value took 10 ns a value here.
Status EvalSquaredDifferenceInt8(NodeState* node) {
  const int8_t* a = node->t.In<int8_t>(0);
  const int8_t* b = node->t.In<int8_t>(1);
  int8_t* z = node->t.Out<int8_t>(0);
  BroadcastRuns(node->in_shape6, node->in2_shape6, node->out_shape6,
                [&](int64_t i, int64_t ia, int64_t ib, int64_t len, int64_t sa, int64_t sb) {
                  if (sb == 0) {
                    const int8_t* row = SquaredDifferenceRow(node, b[ib]) + 128;
                    if (sa == 1) {
                      LookUpInt8(row, a + ia, static_cast<size_t>(len), z + i);
                    } else {  // both inputs one value over the run
                      const int8_t v = row[a[ia]];
                      for (int64_t k = 0; k < len; ++k) z[i + k] = v;
                    }
                    return;
                  }
                  for (int64_t k = 0; k < len; ++k) {
                    z[i + k] = SquaredDifferenceRow(node, b[ib + k])[a[ia + k * sa] + 128];
                  }
                });
  return Status::OK();
}

}  // namespace

Status PrepareUnaryInt8(NodeState* node) {
  const TensorDef& x = *node->t.in[0];
  const TensorDef& y = *node->t.out[0];
  EMBER_RETURN_IF_ERROR(CheckType(*node, y, TensorType::kInt8, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, y, x.shape, "output"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, x, "input"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, y, "output"));
  node->in_zp = static_cast<int32_t>(x.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(y.quant.zero_point[0]);
  node->scratch8.assign(kTableSize, 0);
  int8_t* table = node->scratch8.data();
  switch (node->op->op) {
    case BuiltinOp::kLogistic:
      // LiteRT refuses other output scales (activations.cc, SigmoidPrepare).
      EMBER_RETURN_IF_ERROR(NeedFixedOutputQuant(*node, y, 1.0f / 256.0f, std::nullopt, "1/256"));
      FillFloatTable(*node, Sigmoid, table);
      break;
    case BuiltinOp::kTanh:
      FillFloatTable(*node, Tanh, table);
      break;
    case BuiltinOp::kExp:
      FillFloatTable(*node, Exp, table);
      break;
    case BuiltinOp::kLog:
      FillFloatTable(*node, Log, table);
      break;
    case BuiltinOp::kAbs:
      FillAbsTable(*node, table);
      break;
    case BuiltinOp::kSqrt:
      FillSqrtTable(*node, table);
      break;
    case BuiltinOp::kGelu:
      FillFloatTable(*node, node->op->options.approximate ? GeluTanh : Gelu, table);
      break;
    case BuiltinOp::kHardSwish:
      EMBER_RETURN_IF_ERROR(FillHardSwishTable(*node, table));
      break;
    case BuiltinOp::kRsqrt:
      FillRsqrtTable(*node, table);
      break;
    case BuiltinOp::kLeakyRelu: {
      const float alpha = node->op->options.alpha;
      if (!(alpha >= 0.0f)) {
        return errors::Unimplemented(node->what + ": int8 LEAKY_RELU with alpha " +
                                     std::to_string(alpha) + " is not supported (alpha >= 0 is)");
      }
      // LeakyReluPrepare: both multipliers in double from the float scales.
      const double s_in = x.quant.scale[0], s_out = y.quant.scale[0];
      QuantizeMultiplier(s_in / s_out, &node->m1, &node->s1);
      QuantizeMultiplier(s_in * alpha / s_out, &node->m2, &node->s2);
      for (int32_t q = -128; q <= 127; ++q) table[q + 128] = LeakyReluValue(*node, q);
      break;
    }
    default:
      return misc::Unsupported(*node, x.type);
  }
  node->eval = EvalTableInt8;
  return Status::OK();
}

Status PrepareSquaredDifferenceInt8(NodeState* node) {
  const TensorDef& a = *node->t.in[0];
  const TensorDef& b = *node->t.in[1];
  const TensorDef& y = *node->t.out[0];
  std::vector<int32_t> shape;
  if (!misc::BroadcastShape(a.shape, b.shape, &shape)) {
    return errors::InvalidArgument(node->what + ": shapes " + ShapeString(a.shape) + " and " +
                                   ShapeString(b.shape) + " do not broadcast");
  }
  if (shape.size() > kBroadcastRank) {
    return errors::Unimplemented(node->what + ": broadcasting supports rank <= 6");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, y, TensorType::kInt8, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, y, shape, "output"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, a, "input 0"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, b, "input 1"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, y, "output"));
  node->in_zp = static_cast<int32_t>(a.quant.zero_point[0]);
  node->in2_zp = static_cast<int32_t>(b.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(y.quant.zero_point[0]);
  // squared_difference.cc's Prepare: both inputs on the scale 2 * max(s_a, s_b) / 2^7, the
  // square then on its square.
  node->left_shift = 7;
  const double twice_max = 2 * std::max(a.quant.scale[0], b.quant.scale[0]);
  const double out_real =
      twice_max * twice_max /
      static_cast<double>(static_cast<float>(1 << (2 * node->left_shift)) * y.quant.scale[0]);
  QuantizeMultiplier(a.quant.scale[0] / twice_max, &node->m1, &node->s1);
  QuantizeMultiplier(b.quant.scale[0] / twice_max, &node->m2, &node->s2);
  QuantizeMultiplier(out_real, &node->multiplier, &node->shift);
  if (!(out_real < 1.0) || node->shift > 0) {
    return errors::InvalidArgument(node->what + ": output scale " +
                                   std::to_string(y.quant.scale[0]) +
                                   " is too small for the inputs' (LiteRT requires the squared "
                                   "difference's multiplier below 1)");
  }
  node->in_shape6 = Pad6(a.shape);
  node->in2_shape6 = Pad6(b.shape);
  node->out_shape6 = Pad6(shape);
  node->scratch32.resize(512);
  for (int32_t q = -128; q < 128; ++q) {
    node->scratch32[static_cast<size_t>(q + 128)] = MultiplyByQuantizedMultiplier(
        (q - node->in_zp) * (1 << node->left_shift), node->m1, node->s1);
    node->scratch32[static_cast<size_t>(256 + q + 128)] = MultiplyByQuantizedMultiplier(
        (q - node->in2_zp) * (1 << node->left_shift), node->m2, node->s2);
  }
  node->scratch8.assign(256 * 256, 0);
  node->scratchu8.assign(256, 0);
  node->eval = EvalSquaredDifferenceInt8;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
