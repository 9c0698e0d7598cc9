// PRELU, float and int8, as LiteRT's reference kernels compute it (tflite/kernels/activations.cc,
// PreluPrepare/PreluEval; reference_ops::Prelu and BroadcastPrelu4DSlow): alpha broadcasts
// against the input NumPy-style and the output has the input's shape. int8 uses two output
// multipliers, s_in / s_out where the input is >= its zero point and s_in * s_alpha / s_out
// (applied to the product of the offset input and the offset alpha) elsewhere.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/lite/quant.h"
#include "lite/kernels.h"
#include "lite/kernels_misc.h"

namespace ember {
namespace lite {
namespace {

// Calls f(i, a) for each output element i with a the offset of its alpha element; the node
// holds alpha's broadcast strides (in elements) in in2_shape6.
template <typename F>
void ForEachAlpha(const NodeState& node, F f) {
  const std::vector<int32_t>& out = node.t.out[0]->shape;
  const std::vector<int32_t>& st = node.in2_shape6;
  const size_t r = out.size();
  const int64_t total = static_cast<int64_t>(node.t.out[0]->num_elements);
  if (total == 0) return;
  if (r == 0) {
    f(0, 0);
    return;
  }
  // Alpha spans the last dims whole most of the time: walk the innermost dim directly.
  const int32_t inner = out[r - 1];
  const int64_t inner_st = st[r - 1];
  std::vector<int32_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; i += inner) {
    for (int32_t j = 0; j < inner; ++j) f(i + j, off + j * inner_st);
    for (size_t d = r - 1; d-- > 0;) {
      off += st[d];
      if (++idx[d] < out[d]) break;
      off -= static_cast<int64_t>(st[d]) * out[d];
      idx[d] = 0;
    }
  }
}

Status EvalPreluFloat(NodeState* node) {
  const float* x = node->t.In<float>(0);
  const float* alpha = node->t.In<float>(1);
  float* y = node->t.Out<float>(0);
  // ApplyPrelu<float>: input >= 0.0 ? input : input * alpha.
  ForEachAlpha(*node, [&](int64_t i, int64_t a) { y[i] = x[i] >= 0.0f ? x[i] : x[i] * alpha[a]; });
  return Status::OK();
}

Status EvalPreluInt8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  const int8_t* alpha = node->t.In<int8_t>(1);
  int8_t* y = node->t.Out<int8_t>(0);
  const NodeState& n = *node;
  ForEachAlpha(n, [&](int64_t i, int64_t a) {
    const int32_t v = x[i] - n.in_zp;
    int32_t out;
    if (v >= 0) {
      out = MultiplyByQuantizedMultiplier(v, n.m1, n.s1);
    } else {
      out = MultiplyByQuantizedMultiplier(v * (alpha[a] - n.in2_zp), n.m2, n.s2);
    }
    out += n.out_zp;
    y[i] = static_cast<int8_t>(std::min(127, std::max(-128, out)));
  });
  return Status::OK();
}

}  // namespace

Status PreparePrelu(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  const TensorDef& x = *node->t.in[0];
  const TensorDef& alpha = *node->t.in[1];
  const TensorDef& y = *node->t.out[0];
  std::vector<int32_t> shape;
  if (!misc::BroadcastShape(x.shape, alpha.shape, &shape)) {
    return errors::InvalidArgument(
        node->what + ": alpha '" + alpha.name + "' of shape " + ShapeString(alpha.shape) +
        " does not broadcast against the input's " + ShapeString(x.shape));
  }
  if (shape != x.shape) {
    return errors::InvalidArgument(node->what + ": alpha '" + alpha.name + "' of shape " +
                                   ShapeString(alpha.shape) + " broadcasts the input " +
                                   ShapeString(x.shape) + " to " + ShapeString(shape) +
                                   "; the output must have the input's shape");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, alpha, x.type, "alpha"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, y, x.type, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, y, x.shape, "output"));
  const std::vector<int64_t> st = misc::BroadcastStrides(alpha.shape, x.shape);
  node->in2_shape6.assign(st.begin(), st.end());
  if (x.type == TensorType::kFloat32) {
    node->eval = EvalPreluFloat;
    return Status::OK();
  }
  if (x.type != TensorType::kInt8) return misc::Unsupported(*node, x.type);
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, x, "input"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, alpha, "alpha"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, y, "output"));
  node->in_zp = static_cast<int32_t>(x.quant.zero_point[0]);
  node->in2_zp = static_cast<int32_t>(alpha.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(y.quant.zero_point[0]);
  // PreluPrepare: both real multipliers in double from the float scales.
  const double s_in = x.quant.scale[0], s_alpha = alpha.quant.scale[0], s_out = y.quant.scale[0];
  QuantizeMultiplier(s_in / s_out, &node->m1, &node->s1);
  QuantizeMultiplier(s_in * s_alpha / s_out, &node->m2, &node->s2);
  node->eval = EvalPreluInt8;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
