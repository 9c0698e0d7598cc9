// FULLY_CONNECTED whose weights are computed at run time: tf.einsum("ij,kj->ik", a, b) and
// tf.matmul of two activations convert to it. As LiteRT's reference kernel: float32 (each output
// one sum over the depth in order, then the bias, then the activation clamp) and int8 with
// per-tensor weights of any zero point (reference_integer_ops::FullyConnected: offsets added to
// input and weights, double-rounding requantization). The bias, optional, may be constant or
// computed too. Nothing is packed: the weights are read where they are at every Invoke.
#include <algorithm>
#include <string>

#include "ember/lite/quant.h"
#include "lite/kernels.h"

namespace ember {
namespace lite {
namespace {

constexpr int64_t kColumnAlign = 16;

const TensorDef* Bias(const NodeState& node) {
  return node.t.in.size() > 2 ? node.t.in[2] : nullptr;
}

// Four output columns at a time, each its own sum in depth order.
void RowF32(const float* x, const float* w, const float* bias, int k, int64_t c0, int64_t c1,
            float lo, float hi, float* y) {
  int64_t c = c0;
  for (; c + 4 <= c1; c += 4) {
    const float* w0 = w + c * k;
    const float* w1 = w0 + k;
    const float* w2 = w1 + k;
    const float* w3 = w2 + k;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (int d = 0; d < k; ++d) {
      const float xv = x[d];
      a0 += xv * w0[d];
      a1 += xv * w1[d];
      a2 += xv * w2[d];
      a3 += xv * w3[d];
    }
    const float acc[4] = {a0, a1, a2, a3};
    for (int j = 0; j < 4; ++j) {
      const float v = acc[j] + (bias != nullptr ? bias[c + j] : 0.0f);
      y[c + j] = std::min(hi, std::max(lo, v));
    }
  }
  for (; c < c1; ++c) {
    const float* wc = w + c * k;
    float a = 0.0f;
    for (int d = 0; d < k; ++d) a += x[d] * wc[d];
    const float v = a + (bias != nullptr ? bias[c] : 0.0f);
    y[c] = std::min(hi, std::max(lo, v));
  }
}

Status EvalRuntimeF32(NodeState* node) {
  const float* x = node->t.In<float>(0);
  const float* w = node->t.In<float>(1);
  const float* bias = Bias(*node) != nullptr ? node->t.In<float>(2) : nullptr;
  float* y = node->t.Out<float>(0);
  const int k = static_cast<int>(node->inner), n = node->oc;
  const int tasks =
      TaskCount(*node, (n + kColumnAlign - 1) / kColumnAlign, kColumnAlign * k * node->outer);
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t c0, c1;
    ChunkRange(n, tasks, task, kColumnAlign, &c0, &c1);
    for (int64_t r = 0; r < node->outer; ++r) {
      RowF32(x + r * k, w, bias, k, c0, c1, node->f_min, node->f_max, y + r * n);
    }
  });
  return Status::OK();
}

Status EvalRuntimeI8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  const int8_t* w = node->t.In<int8_t>(1);
  const int32_t* bias = Bias(*node) != nullptr ? node->t.In<int32_t>(2) : nullptr;
  int8_t* y = node->t.Out<int8_t>(0);
  const int k = static_cast<int>(node->inner), n = node->oc;
  const int32_t in_off = -node->in_zp, w_off = -node->in2_zp;
  const int tasks =
      TaskCount(*node, (n + kColumnAlign - 1) / kColumnAlign, kColumnAlign * k * node->outer);
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t c0, c1;
    ChunkRange(n, tasks, task, kColumnAlign, &c0, &c1);
    for (int64_t r = 0; r < node->outer; ++r) {
      const int8_t* xr = x + r * k;
      for (int64_t c = c0; c < c1; ++c) {
        const int8_t* wc = w + c * k;
        int32_t acc = 0;
        for (int d = 0; d < k; ++d) {
          acc += (static_cast<int32_t>(wc[d]) + w_off) * (static_cast<int32_t>(xr[d]) + in_off);
        }
        if (bias != nullptr) acc += bias[c];
        int32_t v = MultiplyByQuantizedMultiplier(acc, node->multiplier, node->shift);
        v = std::max(node->act_min, std::min(node->act_max, v + node->out_zp));
        y[r * n + c] = static_cast<int8_t>(v);
      }
    }
  });
  return Status::OK();
}

}  // namespace

Status PrepareFullyConnectedRuntimeWeights(NodeState* node) {
  const OperatorDef& op = *node->op;
  const TensorDef& in = *node->t.in[0];
  const TensorDef& w = *node->t.in[1];
  const TensorDef* b = Bias(*node);
  const TensorDef& out = *node->t.out[0];
  // FullyConnectedGeometry (kernels_conv.cc) has checked the shapes.
  const int n = w.shape[0];
  const bool f32 = in.type == TensorType::kFloat32;
  if (!f32 && in.type != TensorType::kInt8) {
    return errors::Unimplemented(node->what + ": input '" + in.name + "' is " +
                                 TensorTypeName(in.type) +
                                 "; run-time weights are supported for FLOAT32 and INT8");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, w, in.type, "run-time weights"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  if (b != nullptr) {
    EMBER_RETURN_IF_ERROR(
        CheckType(*node, *b, f32 ? TensorType::kFloat32 : TensorType::kInt32, "bias"));
    if (b->num_elements != static_cast<size_t>(n)) {
      return errors::InvalidArgument(node->what + ": bias '" + b->name + "' has " +
                                     std::to_string(b->num_elements) + " elements, expected " +
                                     std::to_string(n));
    }
  }
  const Activation act = op.options.activation;
  if (f32) {
    FloatActivationRange(act, &node->f_min, &node->f_max);
    node->eval = EvalRuntimeF32;
    return Status::OK();
  }
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, in, "input"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, w, "run-time weights"));
  EMBER_RETURN_IF_ERROR(NeedPerTensorQuant(*node, out, "output"));
  node->in_zp = static_cast<int32_t>(in.quant.zero_point[0]);
  node->in2_zp = static_cast<int32_t>(w.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(out.quant.zero_point[0]);
  const double real = static_cast<double>(in.quant.scale[0]) *
                      static_cast<double>(w.quant.scale[0]) /
                      static_cast<double>(out.quant.scale[0]);
  QuantizeMultiplier(real, &node->multiplier, &node->shift);
  ActivationRangeInt8(static_cast<int>(act), out.quant.scale[0], node->out_zp, &node->act_min,
                      &node->act_max);
  node->eval = EvalRuntimeI8;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
