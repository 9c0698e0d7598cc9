// TRANSPOSE_CONV, float32 and int8 (per-channel weights), as LiteRT's reference kernels
// (reference_ops::TransposeConv, reference_integer_ops::TransposeConv). Inputs: output_shape
// (constant int32 [4]), weights [OC, KH, KW, IC], input [N, H, W, IC], and from version 3 an
// optional bias [OC] (float, or int32 for int8). Version 4 adds a fused activation.
//
// The reference scatters each input pixel into the output window it touches. Here each output
// row gathers its sums instead (rows are then independent, so they split over threads), from
// weights transposed once to [KH, KW, IC, OC] so that the innermost loop runs along contiguous
// output channels. int8 sums are exact, so the order does not matter there; float sums differ
// from the reference only in rounding (within the float tolerance).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ember/lite/quant.h"
#include "lite/kernels.h"

namespace ember {
namespace lite {
namespace {

struct Rows {
  int64_t begin, end;
};

// Output rows (over all batches) [begin, end) of task `task` of `tasks`.
Rows TaskRows(int64_t rows, int tasks, int task) {
  return Rows{rows * task / tasks, rows * (task + 1) / tasks};
}

// The filter taps (ky, and the input row iy) that reach output row `oy`:
// oy = iy * stride - pad + ky with 0 <= iy < in.
template <typename Fn>
void ForEachTap(int o, int pad, int stride, int k, int in, Fn fn) {
  for (int t = 0; t < k; ++t) {
    const int num = o + pad - t;
    if (num < 0 || num % stride != 0) continue;
    const int i = num / stride;
    if (i < in) fn(t, i);
  }
}

// acc[oc] (OC values, zeroed by the caller) += the products reaching output pixel (oy, ox) of
// image b: x[iy, ix, ic] * wt[ky, kx, ic, oc] over the taps, with x offset by `x_offset`.
template <typename X, typename W, typename Acc>
void AccumulatePixel(const NodeState& node, const X* x, const W* wt, int b, int oy, int ox,
                     int32_t x_offset, Acc* acc) {
  const OpOptions& o = node.op->options;
  const int ic = node.ic, oc = node.oc;
  ForEachTap(oy, node.pad_h, o.stride_h, node.kh, node.ih, [&](int ky, int iy) {
    ForEachTap(ox, node.pad_w, o.stride_w, node.kw, node.iw, [&](int kx, int ix) {
      const X* px = x + ((static_cast<int64_t>(b) * node.ih + iy) * node.iw + ix) * ic;
      const W* pw = wt + (static_cast<int64_t>(ky) * node.kw + kx) * ic * oc;
      for (int c = 0; c < ic; ++c) {
        const Acc v = static_cast<Acc>(px[c]) + static_cast<Acc>(x_offset);
        const W* __restrict wrow = pw + static_cast<int64_t>(c) * oc;
        Acc* __restrict a = acc;
        for (int j = 0; j < oc; ++j) a[j] += v * static_cast<Acc>(wrow[j]);
      }
    });
  });
}

Status EvalTransposeConvF32(NodeState* node) {
  const float* x = node->t.In<float>(2);
  float* y = node->t.Out<float>(0);
  const size_t wsize = static_cast<size_t>(node->kh) * node->kw * node->ic * node->oc;
  const float* wt = node->scratchf.data();
  const float* bias = node->scratchf.size() > wsize ? wt + wsize : nullptr;
  const int64_t rows = static_cast<int64_t>(node->n) * node->oh;
  const int64_t per_row = static_cast<int64_t>(node->ow) * node->kh * node->kw * node->ic *
                          node->oc / std::max(1, node->op->options.stride_h);
  const int tasks = TaskCount(*node, rows, per_row);
  // Without a fused activation the reference clamps nothing (an infinity stays one).
  const bool clamp = node->op->options.activation != Activation::kNone;
  const float lo = node->f_min, hi = node->f_max;
  RunTasks(*node, tasks, [&](int task, int) {
    const Rows r = TaskRows(rows, tasks, task);
    for (int64_t row = r.begin; row < r.end; ++row) {
      const int b = static_cast<int>(row / node->oh), oy = static_cast<int>(row % node->oh);
      for (int ox = 0; ox < node->ow; ++ox) {
        float* acc = y + (row * node->ow + ox) * node->oc;
        std::fill(acc, acc + node->oc, 0.0f);
        AccumulatePixel(*node, x, wt, b, oy, ox, 0, acc);
        if (bias != nullptr) {
          for (int j = 0; j < node->oc; ++j) acc[j] += bias[j];
        }
        if (clamp) {
          for (int j = 0; j < node->oc; ++j) acc[j] = std::min(std::max(acc[j], lo), hi);
        }
      }
    }
  });
  return Status::OK();
}

Status EvalTransposeConvI8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(2);
  int8_t* y = node->t.Out<int8_t>(0);
  const int8_t* wt = node->scratch8.data();
  const int64_t rows = static_cast<int64_t>(node->n) * node->oh;
  const int64_t per_row = static_cast<int64_t>(node->ow) * node->kh * node->kw * node->ic *
                          node->oc / std::max(1, node->op->options.stride_h);
  const int tasks = TaskCount(*node, rows, per_row);
  RunTasks(*node, tasks, [&](int task, int thread) {
    const Rows r = TaskRows(rows, tasks, task);
    int32_t* acc = node->scratch32.data() + static_cast<size_t>(thread) * node->acc_slice;
    for (int64_t row = r.begin; row < r.end; ++row) {
      const int b = static_cast<int>(row / node->oh), oy = static_cast<int>(row % node->oh);
      for (int ox = 0; ox < node->ow; ++ox) {
        std::fill(acc, acc + node->oc, 0);
        AccumulatePixel(*node, x, wt, b, oy, ox, -node->in_zp, acc);
        int8_t* out = y + (row * node->ow + ox) * node->oc;
        for (int j = 0; j < node->oc; ++j) {
          const size_t c = static_cast<size_t>(j);
          int32_t v = MultiplyByQuantizedMultiplier(WrappingAdd(acc[j], node->bias[c]),
                                                    node->multipliers[c], node->shifts[c]);
          v = std::min(std::max(v + node->out_zp, node->act_min), node->act_max);
          out[j] = static_cast<int8_t>(v);
        }
      }
    }
  });
  return Status::OK();
}

// [OC, KH, KW, IC] -> [KH, KW, IC, OC].
template <typename T>
void TransposeWeights(const T* w, int oc, int kh, int kw, int ic, T* out) {
  for (int o = 0; o < oc; ++o) {
    for (int t = 0; t < kh * kw; ++t) {
      for (int c = 0; c < ic; ++c) {
        out[(static_cast<size_t>(t) * ic + c) * oc + o] =
            w[(static_cast<size_t>(o) * kh * kw + t) * ic + c];
      }
    }
  }
}

// int8: per-channel multipliers as PopulateConvolutionQuantizationParams, and the bias.
Status PrepareQuantized(NodeState* node, const TensorDef& in, const TensorDef& w,
                        const TensorDef* b, const TensorDef& out) {
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, in, "input"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, w, "weights"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, out, "output"));
  const size_t oc = static_cast<size_t>(node->oc);
  const size_t nscales = w.quant.scale.size();
  if (nscales != 1 && nscales != oc) {
    return errors::InvalidArgument(node->what + ": weights '" + w.name + "' have " +
                                   std::to_string(nscales) + " scales for " + std::to_string(oc) +
                                   " output channels");
  }
  if (nscales > 1 && w.quant.quantized_dimension != 0) {
    return errors::InvalidArgument(node->what + ": weights '" + w.name +
                                   "' must be quantized along dimension 0 (output channels)");
  }
  for (int64_t z : w.quant.zero_point) {
    if (z != 0) {
      return errors::InvalidArgument(node->what + ": int8 weights '" + w.name +
                                     "' must be symmetric (zero point 0)");
    }
  }
  if (b != nullptr && !b->quant.zero_point.empty() && b->quant.zero_point[0] != 0) {
    return errors::InvalidArgument(node->what + ": bias '" + b->name + "' has a zero point");
  }
  node->in_zp = static_cast<int32_t>(in.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(out.quant.zero_point[0]);
  ActivationRangeInt8(static_cast<int>(node->op->options.activation), out.quant.scale[0],
                      node->out_zp, &node->act_min, &node->act_max);
  node->multipliers.resize(oc);
  node->shifts.resize(oc);
  node->bias.assign(oc, 0);
  const int32_t* bd = b != nullptr ? reinterpret_cast<const int32_t*>(b->data) : nullptr;
  for (size_t c = 0; c < oc; ++c) {
    const double real = static_cast<double>(in.quant.scale[0]) *
                        static_cast<double>(w.quant.scale[nscales == 1 ? 0 : c]) /
                        static_cast<double>(out.quant.scale[0]);
    QuantizeMultiplier(real, &node->multipliers[c], &node->shifts[c]);
    if (bd != nullptr) node->bias[c] = bd[c];
  }
  node->scratch8.resize(w.num_elements);
  TransposeWeights(reinterpret_cast<const int8_t*>(w.data), node->oc, node->kh, node->kw, node->ic,
                   node->scratch8.data());
  node->acc_slice = (oc + 15) / 16 * 16;
  node->scratch32.assign(node->acc_slice * static_cast<size_t>(node->threads), 0);
  node->eval = EvalTransposeConvI8;
  return Status::OK();
}

Status RequireConstantInput(const NodeState& node, const TensorDef& t, const char* role) {
  if (t.data == nullptr) {
    return errors::Unimplemented(node.what + ": " + role + " '" + t.name +
                                 "' must be a constant tensor");
  }
  return Status::OK();
}

}  // namespace

Status PrepareTransposeConv(NodeState* node) {
  const OperatorDef& op = *node->op;
  const OpTensors& t = node->t;
  if (op.inputs.size() < 3 || op.inputs.size() > 4 || op.outputs.size() != 1 ||
      t.in[0] == nullptr || t.in[1] == nullptr || t.in[2] == nullptr) {
    return errors::InvalidArgument(
        node->what + ": expects inputs (output_shape, weights, input[, bias]) and one output");
  }
  const TensorDef& shape = *t.in[0];
  const TensorDef& w = *t.in[1];
  const TensorDef& in = *t.in[2];
  const TensorDef* b = t.in.size() > 3 ? t.in[3] : nullptr;
  const TensorDef& out = *t.out[0];
  const bool f32 = in.type == TensorType::kFloat32;
  if (!f32 && in.type != TensorType::kInt8) {
    return errors::Unimplemented(node->what + ": input type " + TensorTypeName(in.type) +
                                 " is not supported (FLOAT32 and INT8 are)");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, shape, TensorType::kInt32, "output_shape"));
  EMBER_RETURN_IF_ERROR(RequireConstantInput(*node, shape, "output_shape"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, w, in.type, "weights"));
  EMBER_RETURN_IF_ERROR(RequireConstantInput(*node, w, "weights"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  if (shape.shape.size() != 1 || shape.num_elements != 4) {
    return errors::InvalidArgument(node->what + ": output_shape '" + shape.name +
                                   "' must hold 4 values, got shape " + ShapeString(shape.shape));
  }
  if (in.shape.size() != 4) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' must be NHWC, got " +
                                   ShapeString(in.shape));
  }
  if (w.shape.size() != 4 || w.shape[3] != in.shape[3]) {
    return errors::InvalidArgument(node->what + ": weights '" + w.name + "' must be [OC, KH, KW, " +
                                   std::to_string(in.shape[3]) + "], got " + ShapeString(w.shape));
  }
  const int32_t* dims = reinterpret_cast<const int32_t*>(shape.data);
  const std::vector<int32_t> out_shape(dims, dims + 4);
  if (out_shape[0] != in.shape[0] || out_shape[3] != w.shape[0] || out_shape[1] < 0 ||
      out_shape[2] < 0) {
    return errors::InvalidArgument(node->what + ": output_shape " + ShapeString(out_shape) +
                                   " does not match input " + ShapeString(in.shape) +
                                   " and weights " + ShapeString(w.shape));
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, out_shape, "output"));
  const OpOptions& o = op.options;
  if (o.stride_h < 1 || o.stride_w < 1 || o.stride_h > 4096 || o.stride_w > 4096 ||
      w.shape[1] < 1 || w.shape[2] < 1) {
    return errors::InvalidArgument(node->what + ": strides and filter sizes must be >= 1");
  }
  if (b != nullptr) {
    EMBER_RETURN_IF_ERROR(RequireConstantInput(*node, *b, "bias"));
    EMBER_RETURN_IF_ERROR(
        CheckType(*node, *b, f32 ? TensorType::kFloat32 : TensorType::kInt32, "bias"));
    if (b->num_elements != static_cast<size_t>(w.shape[0])) {
      return errors::InvalidArgument(node->what + ": bias '" + b->name + "' has " +
                                     std::to_string(b->num_elements) + " elements, expected " +
                                     std::to_string(w.shape[0]));
    }
  }
  node->n = in.shape[0];
  node->ih = in.shape[1];
  node->iw = in.shape[2];
  node->ic = in.shape[3];
  node->oc = w.shape[0];
  node->kh = w.shape[1];
  node->kw = w.shape[2];
  node->oh = out_shape[1];
  node->ow = out_shape[2];
  // The padding of the convolution this one transposes: its input is this op's output
  // (ComputePaddingHeightWidth on the output size, as LiteRT; the reference ignores the offset).
  node->pad_h = ComputePadding(o.stride_h, 1, node->oh, node->kh,
                               ComputeOutSize(o.padding, node->oh, node->kh, o.stride_h, 1));
  node->pad_w = ComputePadding(o.stride_w, 1, node->ow, node->kw,
                               ComputeOutSize(o.padding, node->ow, node->kw, o.stride_w, 1));
  if (!f32) return PrepareQuantized(node, in, w, b, out);
  FloatActivationRange(o.activation, &node->f_min, &node->f_max);
  const size_t wsize = w.num_elements;
  node->scratchf.assign(wsize + (b != nullptr ? b->num_elements : 0), 0.0f);
  TransposeWeights(reinterpret_cast<const float*>(w.data), node->oc, node->kh, node->kw, node->ic,
                   node->scratchf.data());
  if (b != nullptr) {
    std::memcpy(node->scratchf.data() + wsize, b->data, b->num_elements * sizeof(float));
  }
  node->eval = EvalTransposeConvF32;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
