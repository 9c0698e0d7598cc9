// Float/int/bool elementwise builtins of transformer models, as TFLite's reference kernels
// (and integer ADD/MUL, which interpreter.cc routes here):
// TANH, LOGISTIC, EXP, NEG, LOG, SQRT, RSQRT, SQUARE, ABS, LOGICAL_NOT, GELU, HARD_SWISH,
// LEAKY_RELU, ELU; SUB, DIV, MAXIMUM, MINIMUM, POW, SQUARED_DIFFERENCE, LESS, LESS_EQUAL, GREATER,
// GREATER_EQUAL, EQUAL, NOT_EQUAL, LOGICAL_AND, LOGICAL_OR (NumPy broadcasting); SELECT,
// SELECT_V2; CAST. The int8 ops of kernels_int8_misc.cc are routed there, int8 SUB to ADD's
// kernel (kernels_elementwise.cc); other quantized variants are refused in Prepare with
// UNIMPLEMENTED.
#include "lite/kernels_misc.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's false "may be used uninitialized" inside avx512fintrin.h (see kernels_reduce.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "ember/lite/quant.h"
#include "lite/broadcast.h"
#include "lite/kernels.h"
#include "lite/loop_isa.h"
#include "lite/vec_math.h"
#include "lite/vec_math_avx512.h"

namespace ember {
namespace lite {
namespace misc {

Status CheckIo(const NodeState& node, size_t min_in, size_t max_in) {
  const size_t n = node.op->inputs.size();
  if (n < min_in || n > max_in || node.op->outputs.size() != 1) {
    return errors::InvalidArgument(node.what + ": expects " + std::to_string(min_in) +
                                   (max_in != min_in ? "-" + std::to_string(max_in) : "") +
                                   " inputs and 1 output, got " + std::to_string(n) + " and " +
                                   std::to_string(node.op->outputs.size()));
  }
  for (size_t i = 0; i < n; ++i) {
    if (node.t.in[i] == nullptr) {
      return errors::InvalidArgument(node.what + ": input " + std::to_string(i) + " is missing");
    }
  }
  return Status::OK();
}

Status Unsupported(const NodeState& node, TensorType t) {
  return errors::Unimplemented(node.what + ": type " + TensorTypeName(t) +
                               " is not supported by ember lite for this operator");
}

bool BroadcastShape(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                    std::vector<int32_t>* out) {
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int32_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int32_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int32_t>& in,
                                      const std::vector<int32_t>& out) {
  std::vector<int64_t> s(out.size(), 0);
  int64_t stride = 1;
  const size_t off = out.size() - in.size();
  for (size_t i = in.size(); i-- > 0;) {
    s[i + off] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return s;
}

namespace {

template <typename F>
bool DispatchType(TensorType t, F&& f) {
  switch (t) {
    case TensorType::kFloat32:
      f(float{});
      return true;
    case TensorType::kInt32:
      f(int32_t{});
      return true;
    case TensorType::kInt64:
      f(int64_t{});
      return true;
    case TensorType::kBool:
      f(bool{});
      return true;
    case TensorType::kInt8:
      f(int8_t{});
      return true;
    case TensorType::kUInt8:
      f(uint8_t{});
      return true;
    case TensorType::kInt16:
      f(int16_t{});
      return true;
    default:
      return false;
  }
}

// Float ops whose element loop vectorises, each its own loop (EvalUnary's switch per element
// kept every op scalar: MobileNetV3's HARD_SWISH ran 10x slower than LiteRT's). The same
// expression per element as EvalUnary's, but LOGISTIC's and TANH's exponential and tanh
// (vec_math.h's, within a few ulp of the C library's).
EMBER_LOOP_BODY bool VectorUnaryF32Body(BuiltinOp op, float alpha, bool approximate, const float* x,
                                        size_t n, float* y) {
  switch (op) {
    case BuiltinOp::kHardSwish:
      // The reference's x * relu6(x + 3) / 6 with the division as a multiplication by 1 / 6
      // (within an ulp of it; the division took half of the loop's time).
      for (size_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = v * std::min(6.0f, std::max(0.0f, v + 3.0f)) * (1.0f / 6.0f);
      }
      return true;
    case BuiltinOp::kLeakyRelu:
      for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : x[i] * alpha;
      return true;
    case BuiltinOp::kLogistic:
      for (size_t i = 0; i < n; ++i) y[i] = LogisticF(x[i]);  // LiteRT's reference cutoffs
      return true;
    case BuiltinOp::kTanh:
      for (size_t i = 0; i < n; ++i) y[i] = TanhF(x[i]);
      return true;
    case BuiltinOp::kGelu:
      if (approximate) {  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        for (size_t i = 0; i < n; ++i) {
          const float v = x[i];
          y[i] = 0.5f * v * (1.0f + TanhF(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        }
      } else {  // 0.5 x (1 + erf(x / sqrt 2))
        for (size_t i = 0; i < n; ++i) {
          y[i] = 0.5f * x[i] * OnePlusErfF(x[i] * 0.7071067811865476f);
        }
      }
      return true;
    case BuiltinOp::kNeg:
      for (size_t i = 0; i < n; ++i) y[i] = -x[i];
      return true;
    case BuiltinOp::kAbs:
      for (size_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? -x[i] : x[i];
      return true;
    case BuiltinOp::kSquare:
      for (size_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
      return true;
    default:
      return false;
  }
}
EMBER_LOOP_FUNCTION_WIDE(bool, VectorUnaryF32,
                         (BuiltinOp op, float alpha, bool approximate, const float* x, size_t n,
                          float* y),
                         (op, alpha, approximate, x, n, y), VectorUnaryF32Body)

// The ops VectorUnaryF32 takes.
bool HasVectorUnaryF32(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::kHardSwish:
    case BuiltinOp::kLeakyRelu:
    case BuiltinOp::kLogistic:
    case BuiltinOp::kTanh:
    case BuiltinOp::kGelu:
    case BuiltinOp::kNeg:
    case BuiltinOp::kAbs:
    case BuiltinOp::kSquare:
      return true;
    default:
      return false;
  }
}

Status EvalUnary(NodeState* node) {
  const BuiltinOp op = node->op->op;
  const TensorType type = node->t.in[0]->type;
  const size_t n = node->t.out[0]->num_elements;
  const bool approx = node->op->options.approximate;
  const float alpha = node->op->options.alpha;
  if (type == TensorType::kFloat32 && HasVectorUnaryF32(op)) {
    // Chunks of 64 values over the node's threads (each value computed alone: any split gives
    // the same values). LOGISTIC, TANH and GELU (exact form) on AVX-512: vec_math_avx512.h's.
    const float* x = node->t.In<float>(0);
    float* y = node->t.Out<float>(0);
    const int64_t count = static_cast<int64_t>(n);
    const bool transcendental =
        op == BuiltinOp::kLogistic || op == BuiltinOp::kTanh || op == BuiltinOp::kGelu;
    const int tasks = TaskCount(*node, (count + 63) / 64, int64_t{64} * (transcendental ? 32 : 2));
#ifdef EMBER_LOOP_X86
    const bool avx512 = ActiveLoopIsa() == LoopIsa::kAvx512 &&
                        (op == BuiltinOp::kLogistic || op == BuiltinOp::kTanh ||
                         (op == BuiltinOp::kGelu && !approx));
#endif
    RunTasks(*node, tasks, [&](int task, int) {
      int64_t e0, e1;
      ChunkRange(count, tasks, task, 64, &e0, &e1);
      if (e0 >= e1) return;
#ifdef EMBER_LOOP_X86
      if (avx512) {
        if (op == BuiltinOp::kLogistic) {
          avx512::MapRow16<avx512::Logistic16>(x + e0, e1 - e0, y + e0);
        } else if (op == BuiltinOp::kTanh) {
          avx512::MapRow16<avx512::Tanh16>(x + e0, e1 - e0, y + e0);
        } else {
          avx512::MapRow16<avx512::Gelu16>(x + e0, e1 - e0, y + e0);
        }
        return;
      }
#endif
      VectorUnaryF32(op, alpha, approx, x + e0, static_cast<size_t>(e1 - e0), y + e0);
    });
    return Status::OK();
  }
  DispatchType(type, [&](auto tag) {
    using T = decltype(tag);
    const T* x = node->t.In<T>(0);
    T* y = node->t.Out<T>(0);
    for (size_t i = 0; i < n; ++i) {
      const T v = x[i];
      if constexpr (std::is_same<T, float>::value) {
        switch (op) {
          case BuiltinOp::kExp:
            y[i] = std::exp(v);
            break;
          case BuiltinOp::kLog:
            y[i] = std::log(v);
            break;
          case BuiltinOp::kSqrt:
            y[i] = std::sqrt(v);
            break;
          case BuiltinOp::kRsqrt:
            y[i] = 1.0f / std::sqrt(v);
            break;
          case BuiltinOp::kElu:  // reference_ops::Elu
            y[i] = v < 0.0f ? std::expm1(v) : v;
            break;
          case BuiltinOp::kFloor:
            y[i] = std::floor(v);
            break;
          case BuiltinOp::kCeil:
            y[i] = std::ceil(v);
            break;
          case BuiltinOp::kRound:  // halves to even, as LiteRT's RoundToNearest (and tf.round)
            y[i] = std::nearbyint(v);
            break;
          case BuiltinOp::kSin:
            y[i] = std::sin(v);
            break;
          case BuiltinOp::kCos:
            y[i] = std::cos(v);
            break;
          default:  // GELU, HARD_SWISH, LEAKY_RELU, LOGISTIC, TANH: VectorUnaryF32 above
            break;
        }
      }
      if constexpr (std::is_same<T, bool>::value) {
        if (op == BuiltinOp::kLogicalNot) y[i] = !v;
      } else {
        if (op == BuiltinOp::kNeg) y[i] = static_cast<T>(-v);
        if (op == BuiltinOp::kSquare) y[i] = static_cast<T>(v * v);
        if (op == BuiltinOp::kAbs) y[i] = static_cast<T>(v < T(0) ? -v : v);
        if (op == BuiltinOp::kSign) y[i] = static_cast<T>((T(0) < v) - (v < T(0)));  // NaN: 0
      }
    }
  });
  return Status::OK();
}

// Fused RELU/RELU6/RELU_N1_TO_1 on integer arithmetic.
template <typename T>
T ClampInt(T r, Activation act) {
  if (act == Activation::kRelu || act == Activation::kRelu6) r = r < T(0) ? T(0) : r;
  if (act == Activation::kRelu6) r = r > T(6) ? T(6) : r;
  if (act == Activation::kReluN1To1) r = r < T(-1) ? T(-1) : (r > T(1) ? T(1) : r);
  return r;
}

bool IsComparison(BuiltinOp op) {
  return op == BuiltinOp::kLess || op == BuiltinOp::kLessEqual || op == BuiltinOp::kGreater ||
         op == BuiltinOp::kGreaterEqual || op == BuiltinOp::kEqual || op == BuiltinOp::kNotEqual;
}

// One broadcast run (BroadcastRuns) of a float SUB, DIV, SQUARED_DIFFERENCE, MAXIMUM or MINIMUM:
// z[k] = a[k * sa] op b[k * sb], sa and sb 0 or 1, SUB and DIV clamped to [lo, hi]; EvalBinary's
// expression per element, in vector loops.
EMBER_LOOP_BODY void BinaryRunF32Body(BuiltinOp op, const float* a, int64_t sa, const float* b,
                                      int64_t sb, int64_t n, float lo, float hi, float* z) {
  switch (op) {
    case BuiltinOp::kSub:
      RunLayouts(a, sa, b, sb, n, z,
                 [lo, hi](float u, float v) { return std::min(hi, std::max(lo, u - v)); });
      break;
    case BuiltinOp::kDiv:
      RunLayouts(a, sa, b, sb, n, z,
                 [lo, hi](float u, float v) { return std::min(hi, std::max(lo, u / v)); });
      break;
    case BuiltinOp::kSquaredDifference:
      RunLayouts(a, sa, b, sb, n, z, [](float u, float v) {
        const float d = u - v;
        return d * d;
      });
      break;
    case BuiltinOp::kMaximum:
      RunLayouts(a, sa, b, sb, n, z, [](float u, float v) { return u > v ? u : v; });
      break;
    default:  // kMinimum
      RunLayouts(a, sa, b, sb, n, z, [](float u, float v) { return u < v ? u : v; });
      break;
  }
}
EMBER_LOOP_FUNCTION(void, BinaryRunF32,
                    (BuiltinOp op, const float* a, int64_t sa, const float* b, int64_t sb,
                     int64_t n, float lo, float hi, float* z),
                    (op, a, sa, b, sb, n, lo, hi, z), BinaryRunF32Body)

// A comparison, LOGICAL_AND or LOGICAL_OR of two values.
template <typename T>
bool CompareOrLogical(BuiltinOp op, T u, T v) {
  switch (op) {
    case BuiltinOp::kLess:
      return u < v;
    case BuiltinOp::kLessEqual:
      return u <= v;
    case BuiltinOp::kGreater:
      return u > v;
    case BuiltinOp::kGreaterEqual:
      return u >= v;
    case BuiltinOp::kEqual:
      return u == v;
    case BuiltinOp::kNotEqual:
      return u != v;
    case BuiltinOp::kLogicalAnd:
      return u && v;
    default:
      return u || v;
  }
}

// int8/uint8 comparisons as LiteRT's reference ComparisonWithScaling: each input's offset value
// shifted left by 8 and scaled by its own multiplier (its scale, below 1), then compared.
template <typename T>
Status EvalComparisonQuantized(NodeState* node) {
  const std::vector<int32_t>& out = node->t.out[0]->shape;
  const std::vector<std::vector<int64_t>> st = {BroadcastStrides(node->t.in[0]->shape, out),
                                                BroadcastStrides(node->t.in[1]->shape, out)};
  const T* x = node->t.In<T>(0);
  const T* y = node->t.In<T>(1);
  bool* z = node->t.Out<bool>(0);
  const BuiltinOp op = node->op->op;
  const int32_t zx = node->in_zp, zy = node->in2_zp, mx = node->m1, my = node->m2;
  const int sx = node->s1, sy = node->s2, left = node->left_shift;
  ForEachBroadcast(out, st, [&](int64_t i, const int64_t* o) {
    const int32_t u = MultiplyByQuantizedMultiplier((x[o[0]] - zx) * (1 << left), mx, sx);
    const int32_t v = MultiplyByQuantizedMultiplier((y[o[1]] - zy) * (1 << left), my, sy);
    z[i] = CompareOrLogical(op, u, v);
  });
  return Status::OK();
}

// int8 DIV as LiteRT's reference DivElementwise: the divisor's offset value inverted in fixed point
// (GetReciprocal: gemmlowp's 1 / (1 + x) of its normalized mantissa), the dividend scaled up by
// its headroom, their product rescaled by the output multiplier. A zero divisor fails Invoke.
Status EvalDivQuantized(NodeState* node) {
  const std::vector<int32_t>& out = node->t.out[0]->shape;
  const std::vector<std::vector<int64_t>> st = {BroadcastStrides(node->t.in[0]->shape, out),
                                                BroadcastStrides(node->t.in[1]->shape, out)};
  const int8_t* x = node->t.In<int8_t>(0);
  const int8_t* y = node->t.In<int8_t>(1);
  int8_t* z = node->t.Out<int8_t>(0);
  bool by_zero = false;
  ForEachBroadcast(out, st, [&](int64_t i, const int64_t* o) {
    int32_t a = x[o[0]] - node->in_zp;
    int32_t b = y[o[1]] - node->in2_zp;
    if (b == 0) {
      by_zero = true;
      z[i] = 0;
      return;
    }
    if (b < 0) {
      a = -a;
      b = -b;
    }
    const int headroom_plus_one = CountLeadingZeros(static_cast<uint32_t>(b));
    const int recip_shift = 31 - headroom_plus_one;
    const int32_t shifted = static_cast<int32_t>((static_cast<uint32_t>(b) << headroom_plus_one) -
                                                 (static_cast<uint32_t>(1) << 31));
    const int32_t b_inv = OneOverOnePlusX(shifted);
    // CountLeadingSignBits of a (|a| <= 255 here).
    const int headroom = a >= 0 ? CountLeadingZeros(static_cast<uint32_t>(a)) - 1
                                : CountLeadingZeros(2 * static_cast<uint32_t>(-a) - 1);
    const int32_t quotient = SaturatingRoundingDoublingHighMul(
        static_cast<int32_t>(static_cast<uint32_t>(a) << headroom), b_inv);
    const int total_shift = node->shift - recip_shift - headroom;
    const int32_t r = node->out_zp + RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(
                                                             quotient, node->multiplier),
                                                         -total_shift);
    z[i] = static_cast<int8_t>(std::min(node->act_max, std::max(node->act_min, r)));
  });
  if (by_zero) return errors::InvalidArgument(node->what + ": division by zero");
  return Status::OK();
}

Status EvalBinary(NodeState* node) {
  const BuiltinOp op = node->op->op;
  const TensorDef& a = *node->t.in[0];
  const TensorDef& b = *node->t.in[1];
  const std::vector<int32_t>& out = node->t.out[0]->shape;
  if (a.type == TensorType::kFloat32 &&
      (op == BuiltinOp::kSub || op == BuiltinOp::kDiv || op == BuiltinOp::kSquaredDifference ||
       op == BuiltinOp::kMaximum || op == BuiltinOp::kMinimum) &&
      a.shape.size() <= kBroadcastRank && b.shape.size() <= kBroadcastRank &&
      out.size() <= kBroadcastRank) {
    const float* x = node->t.In<float>(0);
    const float* y = node->t.In<float>(1);
    float* z = node->t.Out<float>(0);
    const float lo = node->f_min, hi = node->f_max;
    ParallelBroadcastRuns(
        *node, Pad6(a.shape), Pad6(b.shape), Pad6(out), op == BuiltinOp::kDiv ? 8 : 4,
        [&](int64_t i, int64_t ia, int64_t ib, int64_t len, int64_t sa, int64_t sb) {
          BinaryRunF32(op, x + ia, sa, y + ib, sb, len, lo, hi, z + i);
        });
    return Status::OK();
  }
  const std::vector<std::vector<int64_t>> st = {BroadcastStrides(a.shape, out),
                                                BroadcastStrides(b.shape, out)};
  const float lo = node->f_min, hi = node->f_max;
  bool div_by_zero = false;
  DispatchType(a.type, [&](auto tag) {
    using T = decltype(tag);
    const T* x = node->t.In<T>(0);
    const T* y = node->t.In<T>(1);
    if (IsComparison(op) || op == BuiltinOp::kLogicalAnd || op == BuiltinOp::kLogicalOr) {
      bool* z = node->t.Out<bool>(0);
      ForEachBroadcast(out, st, [&](int64_t i, const int64_t* o) {
        z[i] = CompareOrLogical(op, x[o[0]], y[o[1]]);
      });
      return;
    }
    if constexpr (!std::is_same<T, bool>::value) {
      T* z = node->t.Out<T>(0);
      ForEachBroadcast(out, st, [&](int64_t i, const int64_t* o) {
        const T u = x[o[0]], v = y[o[1]];
        T r = 0;
        switch (op) {
          case BuiltinOp::kAdd:
            r = static_cast<T>(u + v);
            break;
          case BuiltinOp::kMul:
            r = static_cast<T>(u * v);
            break;
          case BuiltinOp::kSub:
            r = static_cast<T>(u - v);
            break;
          case BuiltinOp::kDiv:
            if constexpr (std::is_integral<T>::value) {
              if (v == 0) {
                div_by_zero = true;
                break;
              }
            }
            r = static_cast<T>(u / v);
            break;
          case BuiltinOp::kMaximum:
            r = u > v ? u : v;
            break;
          case BuiltinOp::kMinimum:
            r = u < v ? u : v;
            break;
          case BuiltinOp::kPow:
            r = static_cast<T>(std::pow(static_cast<double>(u), static_cast<double>(v)));
            if constexpr (std::is_same<T, float>::value) r = std::pow(u, v);
            break;
          case BuiltinOp::kSquaredDifference: {
            const T d = static_cast<T>(u - v);
            r = static_cast<T>(d * d);
            break;
          }
          default:
            break;
        }
        if constexpr (std::is_same<T, float>::value) {
          if (op == BuiltinOp::kSub || op == BuiltinOp::kDiv) r = std::min(hi, std::max(lo, r));
        } else if (op == BuiltinOp::kAdd || op == BuiltinOp::kMul || op == BuiltinOp::kSub) {
          r = ClampInt(r, node->op->options.activation);
        }
        z[i] = r;
      });
    }
  });
  if (div_by_zero) return errors::InvalidArgument(node->what + ": integer division by zero");
  return Status::OK();
}

Status EvalSelect(NodeState* node) {
  const std::vector<int32_t>& out = node->t.out[0]->shape;
  const TensorDef& c = *node->t.in[0];
  const size_t elem = TensorTypeSize(node->t.out[0]->type);
  const bool* cond = node->t.In<bool>(0);
  const uint8_t* t = node->t.in_data[1];
  const uint8_t* e = node->t.in_data[2];
  uint8_t* y = node->t.out_data[0];
  // SELECT with a rank-1 condition over a higher-rank value picks whole rows (TF's Select).
  if (node->op->op == BuiltinOp::kSelect && c.shape.size() == 1 && out.size() > 1 &&
      c.shape[0] == out[0]) {
    const size_t row = node->t.out[0]->num_elements / static_cast<size_t>(out[0]) * elem;
    for (int32_t r = 0; r < out[0]; ++r) {
      std::memcpy(y + r * row, (cond[r] ? t : e) + r * row, row);
    }
    return Status::OK();
  }
  const std::vector<std::vector<int64_t>> st = {BroadcastStrides(c.shape, out),
                                                BroadcastStrides(node->t.in[1]->shape, out),
                                                BroadcastStrides(node->t.in[2]->shape, out)};
  ForEachBroadcast(out, st, [&](int64_t i, const int64_t* o) {
    std::memcpy(y + i * elem, cond[o[0]] ? t + o[1] * elem : e + o[2] * elem, elem);
  });
  return Status::OK();
}

Status EvalCast(NodeState* node) {
  const size_t n = node->t.out[0]->num_elements;
  bool ok = DispatchType(node->t.in[0]->type, [&](auto in_tag) {
    using S = decltype(in_tag);
    DispatchType(node->t.out[0]->type, [&](auto out_tag) {
      using D = decltype(out_tag);
      const S* x = node->t.In<S>(0);
      D* y = node->t.Out<D>(0);
      for (size_t i = 0; i < n; ++i) {
        if constexpr (std::is_same<D, bool>::value) {
          y[i] = x[i] != S(0);
        } else {
          y[i] = static_cast<D>(x[i]);
        }
      }
    });
  });
  if (!ok) return Unsupported(*node, node->t.in[0]->type);
  return Status::OK();
}

bool Plain(TensorType t) {
  return DispatchType(t, [](auto) {}) && t != TensorType::kInt8 && t != TensorType::kUInt8 &&
         t != TensorType::kInt16;
}

// Ops with an int8 kernel in kernels_int8_misc.cc.
bool HasInt8Kernel(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::kLogistic:
    case BuiltinOp::kTanh:
    case BuiltinOp::kGelu:
    case BuiltinOp::kHardSwish:
    case BuiltinOp::kRsqrt:
    case BuiltinOp::kLeakyRelu:
    case BuiltinOp::kSquaredDifference:
    case BuiltinOp::kExp:
    case BuiltinOp::kLog:
    case BuiltinOp::kAbs:
    case BuiltinOp::kSqrt:
      return true;
    default:
      return false;
  }
}

}  // namespace
}  // namespace misc

Status PrepareMiscUnary(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 1, 1));
  const TensorDef& x = *node->t.in[0];
  const BuiltinOp op = node->op->op;
  if (x.type == TensorType::kInt8 && misc::HasInt8Kernel(op)) return PrepareUnaryInt8(node);
  const bool float_only = op != BuiltinOp::kNeg && op != BuiltinOp::kSquare &&
                          op != BuiltinOp::kAbs && op != BuiltinOp::kLogicalNot &&
                          op != BuiltinOp::kSign;
  const bool ok = op == BuiltinOp::kLogicalNot ? x.type == TensorType::kBool
                  : op == BuiltinOp::kSign
                      ? x.type == TensorType::kFloat32 || x.type == TensorType::kInt32
                  : float_only ? x.type == TensorType::kFloat32
                               : misc::Plain(x.type) && x.type != TensorType::kBool;
  if (!ok) return misc::Unsupported(*node, x.type);
  EMBER_RETURN_IF_ERROR(CheckType(*node, *node->t.out[0], x.type, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], x.shape, "output"));
  node->eval = misc::EvalUnary;
  return Status::OK();
}

namespace {
Status PrepareComparisonQuantized(NodeState* node) {
  const TensorDef& a = *node->t.in[0];
  const TensorDef& b = *node->t.in[1];
  int32_t* mult[2] = {&node->m1, &node->m2};
  int* shift[2] = {&node->s1, &node->s2};
  int32_t* zp[2] = {&node->in_zp, &node->in2_zp};
  for (int k = 0; k < 2; ++k) {
    const TensorDef& t = k == 0 ? a : b;
    if (t.quant.scale.size() != 1 || t.quant.zero_point.size() != 1) {
      return errors::InvalidArgument(node->what + ": " + TensorTypeName(t.type) + " input '" +
                                     t.name + "' needs one scale and one zero point");
    }
    const double scale = t.quant.scale[0];
    // LiteRT's QuantizeMultiplierSmallerThanOneExp: a scale in (0, 1) (LiteRT aborts otherwise).
    if (!(scale > 0.0 && scale < 1.0)) {
      return errors::InvalidArgument(node->what + ": input '" + t.name + "' has scale " +
                                     std::to_string(scale) +
                                     "; a quantized comparison needs scales in (0, 1)");
    }
    QuantizeMultiplier(scale, mult[k], shift[k]);
    *zp[k] = static_cast<int32_t>(t.quant.zero_point[0]);
  }
  std::vector<int32_t> shape;
  if (!misc::BroadcastShape(a.shape, b.shape, &shape)) {
    return errors::InvalidArgument(node->what + ": shapes " + ShapeString(a.shape) + " and " +
                                   ShapeString(b.shape) + " do not broadcast");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, *node->t.out[0], TensorType::kBool, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], shape, "output"));
  node->left_shift = 8;
  node->eval = a.type == TensorType::kInt8 ? misc::EvalComparisonQuantized<int8_t>
                                           : misc::EvalComparisonQuantized<uint8_t>;
  return Status::OK();
}
}  // namespace

namespace {
Status PrepareDivQuantized(NodeState* node) {
  const TensorDef& a = *node->t.in[0];
  const TensorDef& b = *node->t.in[1];
  const TensorDef& y = *node->t.out[0];
  for (const TensorDef* t : {&a, &b, &y}) {
    if (t->quant.scale.size() != 1 || t->quant.zero_point.size() != 1 || !(t->quant.scale[0] > 0)) {
      return errors::InvalidArgument(node->what + ": int8 '" + t->name +
                                     "' needs one positive scale and one zero point");
    }
  }
  std::vector<int32_t> shape;
  if (!misc::BroadcastShape(a.shape, b.shape, &shape)) {
    return errors::InvalidArgument(node->what + ": shapes " + ShapeString(a.shape) + " and " +
                                   ShapeString(b.shape) + " do not broadcast");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, y, TensorType::kInt8, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, y, shape, "output"));
  // LiteRT: input1 scale / (input2 scale * output scale), in float, then QuantizeMultiplier.
  const float real = a.quant.scale[0] / (b.quant.scale[0] * y.quant.scale[0]);
  QuantizeMultiplier(static_cast<double>(real), &node->multiplier, &node->shift);
  node->in_zp = static_cast<int32_t>(a.quant.zero_point[0]);
  node->in2_zp = static_cast<int32_t>(b.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(y.quant.zero_point[0]);
  ActivationRangeInt8(static_cast<int>(node->op->options.activation), y.quant.scale[0],
                      node->out_zp, &node->act_min, &node->act_max);
  node->eval = misc::EvalDivQuantized;
  return Status::OK();
}
}  // namespace

Status PrepareMiscBinary(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  const TensorDef& a = *node->t.in[0];
  const TensorDef& b = *node->t.in[1];
  const BuiltinOp op = node->op->op;
  const bool logical = op == BuiltinOp::kLogicalAnd || op == BuiltinOp::kLogicalOr;
  if (a.type != b.type) {
    return errors::InvalidArgument(node->what + ": inputs are " + TensorTypeName(a.type) + " and " +
                                   TensorTypeName(b.type));
  }
  if (a.type == TensorType::kInt8 && misc::HasInt8Kernel(op)) {
    return PrepareSquaredDifferenceInt8(node);
  }
  if (a.type == TensorType::kInt8 && op == BuiltinOp::kDiv) return PrepareDivQuantized(node);
  if ((a.type == TensorType::kInt8 || a.type == TensorType::kUInt8) && misc::IsComparison(op)) {
    return PrepareComparisonQuantized(node);
  }
  // int8 SUB shares int8 ADD's arithmetic and broadcasting (kernels_elementwise.cc).
  if (a.type == TensorType::kInt8 && op == BuiltinOp::kSub) return PrepareAddMul(node);
  // int8 MAXIMUM / MINIMUM compare the stored values, as LiteRT's kernels do: the inputs and the
  // output must share one quantization (the converter gives them one).
  const bool int8_extremum =
      a.type == TensorType::kInt8 && (op == BuiltinOp::kMaximum || op == BuiltinOp::kMinimum);
  if (int8_extremum) {
    const TensorDef& out = *node->t.out[0];
    for (const TensorDef* t : {&b, &out}) {
      if (a.quant.scale.size() != 1 || t->quant.scale.size() != 1 ||
          a.quant.zero_point.size() != 1 || t->quant.zero_point.size() != 1 ||
          a.quant.scale[0] != t->quant.scale[0] ||
          a.quant.zero_point[0] != t->quant.zero_point[0]) {
        return errors::InvalidArgument(node->what + ": int8 '" + t->name +
                                       "' must have the quantization of input '" + a.name +
                                       "' (one scale and zero point, the same)");
      }
    }
  }
  const bool ok = logical
                      ? a.type == TensorType::kBool
                      : int8_extremum || (misc::Plain(a.type) && a.type != TensorType::kBool &&
                                          (op != BuiltinOp::kPow || a.type != TensorType::kInt64));
  if (!ok) return misc::Unsupported(*node, a.type);
  std::vector<int32_t> shape;
  if (!misc::BroadcastShape(a.shape, b.shape, &shape)) {
    return errors::InvalidArgument(node->what + ": shapes " + ShapeString(a.shape) + " and " +
                                   ShapeString(b.shape) + " do not broadcast");
  }
  const TensorType out_type = (logical || misc::IsComparison(op)) ? TensorType::kBool : a.type;
  EMBER_RETURN_IF_ERROR(CheckType(*node, *node->t.out[0], out_type, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], shape, "output"));
  FloatActivationRange(node->op->options.activation, &node->f_min, &node->f_max);
  node->eval = misc::EvalBinary;
  return Status::OK();
}

Status PrepareSelect(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 3, 3));
  const TensorDef& c = *node->t.in[0];
  const TensorDef& t = *node->t.in[1];
  const TensorDef& e = *node->t.in[2];
  EMBER_RETURN_IF_ERROR(CheckType(*node, c, TensorType::kBool, "condition"));
  // Quantized values are picked as stored, as LiteRT's kernel does (the converter gives both
  // values and the output one quantization).
  const bool quantized =
      t.type == TensorType::kInt8 || t.type == TensorType::kUInt8 || t.type == TensorType::kInt16;
  if (t.type != e.type || !(misc::Plain(t.type) || quantized)) {
    return misc::Unsupported(*node, t.type);
  }
  std::vector<int32_t> te, shape;
  if (!misc::BroadcastShape(t.shape, e.shape, &te)) {
    return errors::InvalidArgument(node->what + ": values do not broadcast");
  }
  const bool rows = node->op->op == BuiltinOp::kSelect && c.shape.size() == 1 && te.size() > 1 &&
                    c.shape[0] == te[0];
  if (rows) {
    shape = te;
  } else if (!misc::BroadcastShape(c.shape, te, &shape)) {
    return errors::InvalidArgument(node->what + ": condition " + ShapeString(c.shape) +
                                   " does not broadcast with " + ShapeString(te));
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, *node->t.out[0], t.type, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], shape, "output"));
  node->eval = misc::EvalSelect;
  return Status::OK();
}

Status PrepareCast(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 1, 1));
  const TensorDef& x = *node->t.in[0];
  const TensorDef& y = *node->t.out[0];
  if (!misc::Plain(x.type) || !misc::Plain(y.type)) {
    return misc::Unsupported(*node, misc::Plain(x.type) ? y.type : x.type);
  }
  if (x.num_elements != y.num_elements) {
    return CheckShape(*node, y, x.shape, "output");
  }
  node->eval = misc::EvalCast;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
