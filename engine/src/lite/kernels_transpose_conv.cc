// TRANSPOSE_CONV, float32 and int8 (per-channel weights), as LiteRT's reference kernels
// (reference_ops::TransposeConv, reference_integer_ops::TransposeConv). Inputs: output_shape
// (constant int32 [4]), weights [OC, KH, KW, IC], input [N, H, W, IC], and from version 3 an
// optional bias [OC] (float, or int32 for int8). Version 4 adds a fused activation.
//
// The reference scatters each input pixel into the output window it touches. Here one GEMM
// first multiplies every input pixel by every tap's weights (pixels x IC against IC x KH*KW*OC,
// lite's float GEMM, or the VNNI int8 GEMM), and then each output pixel gathers the products of
// the taps that reach it, in (ky, kx) order (rows are independent, so both steps split over
// threads). Where the products would not fit kMaxColsBytes (or int8 without VNNI), each output
// row gathers its sums straight from weights transposed once to [KH, KW, IC, OC]. int8 sums are
// exact, so the order does not matter there; float sums differ from the reference only in
// rounding (within the float tolerance).
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ember/lite/quant.h"
#include "lite/gemm_f32.h"
#include "lite/gemm_int8.h"
#include "lite/kernels.h"
#include "lite/loop_isa.h"

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

// The filter taps (ky, and the input row iy) that reach output row `oy`, in ascending ky:
// oy = iy * stride - pad + ky with 0 <= iy < in. One division: they are ky = (oy + pad) mod
// stride, then every stride-th (none when oy + pad < 0, as every input index is then below 0).
template <typename Fn>
void ForEachTap(int o, int pad, int stride, int k, int in, Fn fn) {
  const int num = o + pad;
  if (num < 0) return;
  const int t0 = num % stride;
  for (int t = t0, i = (num - t0) / stride; t < k && i >= 0; t += stride, --i) {
    if (i < in) fn(t, i);
  }
}

// ForEachTap's taps as lists (t[], i[], in its order); returns how many.
inline int Taps(int o, int pad, int stride, int k, int in, int* t, int* i) {
  int n = 0;
  ForEachTap(o, pad, stride, k, in, [&](int tt, int ii) {
    t[n] = tt;
    i[n++] = ii;
  });
  return n;
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

constexpr size_t kMaxColsBytes = size_t{256} << 20;
// The GEMM path's filters: at most this many taps along each axis (Taps' lists).
constexpr int kMaxTapsPerAxis = 64;

// The GEMM path's products: cols[p * stride + t * OC + o] for input pixel p (over all batches),
// tap t = ky * KW + kx, output channel o.
int64_t InputPixels(const NodeState& node) {
  return static_cast<int64_t>(node.n) * node.ih * node.iw;
}

// Output row (b, oy) of the GEMM path: each pixel the sum of its taps' products in (ky, kx)
// order, then the bias, then (clamp) the activation range. Float adds only: each loop_isa build
// gives the same values.
EMBER_LOOP_BODY void GatherRowF32Body(const NodeState& node, const float* cols, size_t stride,
                                      const float* bias, bool clamp, int b, int oy, float* y) {
  const OpOptions& o = node.op->options;
  const int oc = node.oc;
  int ky[kMaxTapsPerAxis], iy[kMaxTapsPerAxis], kx[kMaxTapsPerAxis], ix[kMaxTapsPerAxis];
  const int ny = Taps(oy, node.pad_h, o.stride_h, node.kh, node.ih, ky, iy);
  for (int ox = 0; ox < node.ow; ++ox) {
    float* acc = y + static_cast<size_t>(ox) * oc;
    for (int j = 0; j < oc; ++j) acc[j] = 0.0f;
    const int nx = Taps(ox, node.pad_w, o.stride_w, node.kw, node.iw, kx, ix);
    for (int u = 0; u < ny; ++u) {
      for (int v = 0; v < nx; ++v) {
        const float* src = cols +
                           (static_cast<size_t>(b * node.ih + iy[u]) * node.iw + ix[v]) * stride +
                           static_cast<size_t>(ky[u] * node.kw + kx[v]) * oc;
        for (int j = 0; j < oc; ++j) acc[j] += src[j];
      }
    }
    if (bias != nullptr) {
      for (int j = 0; j < oc; ++j) acc[j] += bias[j];
    }
    if (clamp) {
      for (int j = 0; j < oc; ++j) acc[j] = std::min(std::max(acc[j], node.f_min), node.f_max);
    }
  }
}
EMBER_LOOP_FUNCTION(void, GatherRowF32,
                    (const NodeState& node, const float* cols, size_t stride, const float* bias,
                     bool clamp, int b, int oy, float* y),
                    (node, cols, stride, bias, clamp, b, oy, y), GatherRowF32Body)

// The int8 GEMM path's sums of output row (b, oy) into acc (ow rows of OC): each tap's products
// less that tap's offset correction corr[t * OC + o] ((128 + in_zp) * the sum of its weights:
// the GEMM read x + 128, the sum wants x - in_zp), wrapping as int32 does.
EMBER_LOOP_BODY void GatherRowI8Body(const NodeState& node, const int32_t* cols, size_t stride,
                                     const int32_t* corr, int b, int oy, int32_t* acc) {
  const OpOptions& o = node.op->options;
  const int oc = node.oc;
  int ky[kMaxTapsPerAxis], iy[kMaxTapsPerAxis], kx[kMaxTapsPerAxis], ix[kMaxTapsPerAxis];
  const int ny = Taps(oy, node.pad_h, o.stride_h, node.kh, node.ih, ky, iy);
  for (int ox = 0; ox < node.ow; ++ox) {
    uint32_t* a = reinterpret_cast<uint32_t*>(acc) + static_cast<size_t>(ox) * oc;
    for (int j = 0; j < oc; ++j) a[j] = 0;
    const int nx = Taps(ox, node.pad_w, o.stride_w, node.kw, node.iw, kx, ix);
    for (int u = 0; u < ny; ++u) {
      for (int v = 0; v < nx; ++v) {
        const size_t t = static_cast<size_t>(ky[u] * node.kw + kx[v]) * oc;
        const int32_t* src =
            cols + (static_cast<size_t>(b * node.ih + iy[u]) * node.iw + ix[v]) * stride + t;
        const int32_t* c = corr + t;
        for (int j = 0; j < oc; ++j) {
          a[j] += static_cast<uint32_t>(src[j]) - static_cast<uint32_t>(c[j]);
        }
      }
    }
  }
}
EMBER_LOOP_FUNCTION(void, GatherRowI8,
                    (const NodeState& node, const int32_t* cols, size_t stride, const int32_t* corr,
                     int b, int oy, int32_t* acc),
                    (node, cols, stride, corr, b, oy, acc), GatherRowI8Body)

Status EvalTransposeConvF32Gemm(NodeState* node) {
  const float* x = node->t.In<float>(2);
  float* y = node->t.Out<float>(0);
  const PackedF32& w = node->packed_f32;
  const int64_t pixels = InputPixels(*node);
  const size_t stride = static_cast<size_t>(w.n);
  float* cols = node->scratchf.data();
  const bool has_bias = node->t.in.size() > 3 && node->t.in[3] != nullptr;
  const float* bias = has_bias ? node->t.In<float>(3) : nullptr;
  const float inf = std::numeric_limits<float>::infinity();
  const int gemm_tasks = TaskCount(*node, (pixels + 7) / 8, int64_t{8} * node->ic * w.n);
  RunTasks(*node, gemm_tasks, [&](int task, int) {
    int64_t p0, p1;
    ChunkRange(pixels, gemm_tasks, task, 8, &p0, &p1);
    if (p0 < p1) {
      GemmF32(x + p0 * node->ic, static_cast<int>(p1 - p0), node->ic, w, -inf, inf,
              cols + static_cast<size_t>(p0) * stride);
    }
  });
  const int64_t rows = static_cast<int64_t>(node->n) * node->oh;
  const bool clamp = node->op->options.activation != Activation::kNone;
  const int tasks = TaskCount(*node, rows, int64_t{2} * node->ow * node->oc);
  RunTasks(*node, tasks, [&](int task, int) {
    const Rows r = TaskRows(rows, tasks, task);
    for (int64_t row = r.begin; row < r.end; ++row) {
      GatherRowF32(*node, cols, stride, bias, clamp, static_cast<int>(row / node->oh),
                   static_cast<int>(row % node->oh), y + row * node->ow * node->oc);
    }
  });
  return Status::OK();
}

Status EvalTransposeConvI8Gemm(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(2);
  int8_t* y = node->t.Out<int8_t>(0);
  const PackedWeights& w = node->packed;
  const int64_t pixels = InputPixels(*node);
  const size_t stride = static_cast<size_t>(w.nb) * 16;
  uint8_t* xu = node->scratchu8.data();
  int32_t* cols = node->scratch32.data() + node->acc_slice * static_cast<size_t>(node->threads);
  const int gemm_tasks = TaskCount(*node, (pixels + 3) / 4, int64_t{4} * node->ic * w.n);
  RunTasks(*node, gemm_tasks, [&](int task, int) {
    int64_t p0, p1;
    ChunkRange(pixels, gemm_tasks, task, 4, &p0, &p1);
    if (p0 >= p1) return;
    const size_t at = static_cast<size_t>(p0) * node->ic;
    OffsetToUnsigned(x + at, static_cast<size_t>(p1 - p0) * node->ic, xu + at);
    GemmVnni(xu + at, static_cast<int>(p1 - p0), node->ic, w,
             cols + static_cast<size_t>(p0) * stride, static_cast<int>(stride));
  });
  const int64_t rows = static_cast<int64_t>(node->n) * node->oh;
  const int tasks = TaskCount(*node, rows, int64_t{4} * node->ow * node->oc);
  RunTasks(*node, tasks, [&](int task, int thread) {
    const Rows r = TaskRows(rows, tasks, task);
    int32_t* acc = node->scratch32.data() + static_cast<size_t>(thread) * node->acc_slice;
    for (int64_t row = r.begin; row < r.end; ++row) {
      GatherRowI8(*node, cols, stride, node->bias_u8.data(), static_cast<int>(row / node->oh),
                  static_cast<int>(row % node->oh), acc);
      RequantizeRowsVnni(acc, node->ow, node->oc, node->bias.data(), node->multipliers.data(),
                         node->shifts.data(), node->oc, false, node->out_zp, node->act_min,
                         node->act_max, y + row * node->ow * node->oc);
    }
  });
  return Status::OK();
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
  node->acc_slice = (oc + 15) / 16 * 16;
  const int taps = node->kh * node->kw;
  const int64_t n_cols = static_cast<int64_t>(taps) * node->oc;
  const size_t stride = static_cast<size_t>((n_cols + 15) / 16 * 16);
  const size_t pixels = static_cast<size_t>(InputPixels(*node));
  if (HasVnni() && node->kh <= kMaxTapsPerAxis && node->kw <= kMaxTapsPerAxis &&
      n_cols <= (int64_t{1} << 24) && pixels * stride * sizeof(int32_t) <= kMaxColsBytes) {
    // The GEMM path: weights as [tap, OC] rows of IC, each tap's offset correction.
    const int8_t* wd = reinterpret_cast<const int8_t*>(w.data);
    std::vector<int8_t> rows(static_cast<size_t>(n_cols) * node->ic);
    node->bias_u8.assign(static_cast<size_t>(n_cols), 0);
    for (int o = 0; o < node->oc; ++o) {
      for (int t = 0; t < taps; ++t) {
        const int8_t* src = wd + (static_cast<size_t>(o) * taps + t) * node->ic;
        std::memcpy(&rows[(static_cast<size_t>(t) * node->oc + o) * node->ic], src,
                    static_cast<size_t>(node->ic));
        uint32_t sum = 0;
        for (int c = 0; c < node->ic; ++c)
          sum += static_cast<uint32_t>(static_cast<int32_t>(src[c]));
        node->bias_u8[static_cast<size_t>(t) * node->oc + o] =
            static_cast<int32_t>(static_cast<uint32_t>(128 + node->in_zp) * sum);
      }
    }
    PackWeightsVnni(rows.data(), static_cast<int>(n_cols), node->ic,
                    GroupBlocks(static_cast<int>(n_cols), false), &node->packed);
    node->acc_slice = (static_cast<size_t>(node->ow) * oc + 15) / 16 * 16;  // a row's sums
    node->scratchu8.assign(pixels * static_cast<size_t>(node->ic) + 64, 0);
    node->scratch32.assign(node->acc_slice * static_cast<size_t>(node->threads) +
                               pixels * static_cast<size_t>(node->packed.nb) * 16,
                           0);
    node->eval = EvalTransposeConvI8Gemm;
    return Status::OK();
  }
  node->scratch8.resize(w.num_elements);
  TransposeWeights(reinterpret_cast<const int8_t*>(w.data), node->oc, node->kh, node->kw, node->ic,
                   node->scratch8.data());
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
  const int taps = node->kh * node->kw;
  const int64_t n_cols = static_cast<int64_t>(taps) * node->oc;
  const size_t pixels = static_cast<size_t>(InputPixels(*node));
  if (node->kh <= kMaxTapsPerAxis && node->kw <= kMaxTapsPerAxis && n_cols <= (int64_t{1} << 24) &&
      pixels * static_cast<size_t>(n_cols) * sizeof(float) <= kMaxColsBytes) {
    // The GEMM path: weights as [tap, OC] rows of IC (no bias: the gather adds it).
    const float* wd = reinterpret_cast<const float*>(w.data);
    std::vector<float> rows(static_cast<size_t>(n_cols) * node->ic);
    for (int oc = 0; oc < node->oc; ++oc) {
      for (int t = 0; t < taps; ++t) {
        std::memcpy(&rows[(static_cast<size_t>(t) * node->oc + oc) * node->ic],
                    wd + (static_cast<size_t>(oc) * taps + t) * node->ic,
                    sizeof(float) * static_cast<size_t>(node->ic));
      }
    }
    PackWeightsF32(rows.data(), nullptr, static_cast<int>(n_cols), node->ic, &node->packed_f32);
    node->scratchf.assign(pixels * static_cast<size_t>(n_cols), 0.0f);
    node->eval = EvalTransposeConvF32Gemm;
    return Status::OK();
  }
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
