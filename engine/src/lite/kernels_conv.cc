// FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D, float32 and int8 (per-channel weights).
// int8 results equal TFLite's reference integer kernels: the sum of w * (x - zp_in) is
// computed as dot(w, x) - zp_in * sum(w), which is the same integer.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ember/lite/quant.h"
#include "lite/depthwise.h"
#include "lite/gemm_f32.h"
#include "lite/kernels.h"
#include "lite/loop_isa.h"
#include "lite/window.h"

namespace ember {
namespace lite {

namespace {

EMBER_LOOP_BODY int32_t DotInt8(const int8_t* a, const int8_t* b, int k) {
  int32_t acc = 0;
  for (int i = 0; i < k; ++i) acc += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return acc;
}

EMBER_LOOP_BODY void DotRows(const int8_t* rows, int nrows, const int8_t* x, int k, int32_t* out) {
  int r = 0;
  for (; r + 4 <= nrows; r += 4) {
    const int8_t* r0 = rows + static_cast<size_t>(r) * k;
    const int8_t* r1 = r0 + k;
    const int8_t* r2 = r1 + k;
    const int8_t* r3 = r2 + k;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int i = 0; i < k; ++i) {
      const int32_t xi = x[i];
      a0 += r0[i] * xi;
      a1 += r1[i] * xi;
      a2 += r2[i] * xi;
      a3 += r3[i] * xi;
    }
    out[r] = a0;
    out[r + 1] = a1;
    out[r + 2] = a2;
    out[r + 3] = a3;
  }
  for (; r < nrows; ++r) out[r] = DotInt8(rows + static_cast<size_t>(r) * k, x, k);
}

}  // namespace

EMBER_LOOP_FUNCTION(void, DotRowsInt8,
                    (const int8_t* rows, int nrows, const int8_t* x, int k, int32_t* out),
                    (rows, nrows, x, k, out), DotRows)

namespace {

Status RequireConstant(const NodeState& node, const TensorDef* t, const char* role) {
  if (t == nullptr || t->data == nullptr) {
    return errors::Unimplemented(node.what + ": " + role + " must be a constant tensor");
  }
  return Status::OK();
}

// Checks bias and quantization of a weighted op and fills multipliers / folded bias.
Status PrepareWeighted(NodeState* node, int out_channels, int k, bool rows_sum) {
  const TensorDef& in = *node->t.in[0];
  const TensorDef& w = *node->t.in[1];
  const TensorDef* b = node->t.in.size() > 2 ? node->t.in[2] : nullptr;
  const TensorDef& out = *node->t.out[0];
  const bool f32 = in.type == TensorType::kFloat32;
  if (!f32 && in.type != TensorType::kInt8) {
    return errors::Unimplemented(node->what + ": input type " + TensorTypeName(in.type) +
                                 " is not supported (FLOAT32 and INT8 are)");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, w, in.type, "weights"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  if (b != nullptr) {
    EMBER_RETURN_IF_ERROR(RequireConstant(*node, b, "bias"));
    EMBER_RETURN_IF_ERROR(
        CheckType(*node, *b, f32 ? TensorType::kFloat32 : TensorType::kInt32, "bias"));
    if (b->num_elements != static_cast<size_t>(out_channels)) {
      return errors::InvalidArgument(node->what + ": bias '" + b->name + "' has " +
                                     std::to_string(b->num_elements) + " elements, expected " +
                                     std::to_string(out_channels));
    }
  }
  const Activation act = node->op->options.activation;
  if (f32) {
    FloatActivationRange(act, &node->f_min, &node->f_max);
    return Status::OK();
  }
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, in, "input"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, w, "weights"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, out, "output"));
  const size_t nscales = w.quant.scale.size();
  if (nscales != 1 && nscales != static_cast<size_t>(out_channels)) {
    return errors::InvalidArgument(node->what + ": weights have " + std::to_string(nscales) +
                                   " scales for " + std::to_string(out_channels) + " channels");
  }
  for (int64_t z : w.quant.zero_point) {
    if (z != 0) {
      return errors::InvalidArgument(node->what + ": int8 weights '" + w.name +
                                     "' must be symmetric (zero point 0)");
    }
  }
  node->in_zp = static_cast<int32_t>(in.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(out.quant.zero_point[0]);
  ActivationRangeInt8(static_cast<int>(act), out.quant.scale[0], node->out_zp, &node->act_min,
                      &node->act_max);
  node->multipliers.resize(static_cast<size_t>(out_channels));
  node->shifts.resize(static_cast<size_t>(out_channels));
  node->bias.assign(static_cast<size_t>(out_channels), 0);
  const int8_t* wd = reinterpret_cast<const int8_t*>(w.data);
  const int32_t* bd = b != nullptr ? reinterpret_cast<const int32_t*>(b->data) : nullptr;
  for (int c = 0; c < out_channels; ++c) {
    const double ws = w.quant.scale[nscales == 1 ? 0 : static_cast<size_t>(c)];
    const double real =
        static_cast<double>(in.quant.scale[0]) * ws / static_cast<double>(out.quant.scale[0]);
    QuantizeMultiplier(real, &node->multipliers[static_cast<size_t>(c)],
                       &node->shifts[static_cast<size_t>(c)]);
    int32_t folded = bd != nullptr ? bd[c] : 0;
    if (rows_sum) {
      int32_t sum = 0;
      for (int i = 0; i < k; ++i) sum += wd[static_cast<size_t>(c) * k + i];
      folded =
          static_cast<int32_t>(static_cast<uint32_t>(folded) -
                               static_cast<uint32_t>(node->in_zp) * static_cast<uint32_t>(sum));
    }
    node->bias[static_cast<size_t>(c)] = folded;
  }
  if (rows_sum && HasVnni()) {
    node->vnni = true;
    // A FULLY_CONNECTED of row blocks of 1 (FcRowBlock) is matrix-vector products (wide groups).
    const int nr = GroupBlocks(
        out_channels, node->op->op == BuiltinOp::kFullyConnected && FcRowBlock(*node) == 1);
    PackWeightsVnni(wd, out_channels, k, nr, &node->packed);
    node->bias_u8.assign(node->bias.begin(), node->bias.end());
    for (int c = 0; c < out_channels; ++c) {
      uint32_t sum = 0;
      for (int i = 0; i < k; ++i)
        sum += static_cast<uint32_t>(static_cast<int32_t>(wd[static_cast<size_t>(c) * k + i]));
      node->bias_u8[static_cast<size_t>(c)] = static_cast<int32_t>(
          static_cast<uint32_t>(node->bias_u8[static_cast<size_t>(c)]) - 128u * sum);
    }
  }
  return Status::OK();
}

inline int8_t Requantize(const NodeState& node, int32_t acc, size_t c) {
  int32_t v = WrappingAdd(
      node.left_shift == 1
          ? MultiplyByQuantizedMultiplierSingleRounding(acc, node.multipliers[c], node.shifts[c])
          : MultiplyByQuantizedMultiplier(acc, node.multipliers[c], node.shifts[c]),
      node.out_zp);
  v = std::max(node.act_min, std::min(node.act_max, v));
  return static_cast<int8_t>(v);
}

// y[r * n + c] = Requantize(acc[r * acc_stride + c] + bias[c]) for r < rows, c < n (the
// node's folded bias). The constants are read once: an int8 store may alias them, so
// Requantize's reads of the node would be repeated for every output.
void RequantizeRows(const NodeState& node, const int32_t* acc, int rows, int acc_stride, int n,
                    int8_t* y) {
  const int32_t* bias = node.bias.data();
  const int32_t* mult = node.multipliers.data();
  const int* shift = node.shifts.data();
  const int32_t zp = node.out_zp, lo = node.act_min, hi = node.act_max;
  const bool single = node.left_shift == 1;
  const int done =
      single ? 0 : RequantizeRowsAvx2(acc, rows, acc_stride, bias, mult, shift, n, zp, lo, hi, y);
  for (int r = 0; r < rows; ++r) {
    const int32_t* ar = acc + static_cast<size_t>(r) * acc_stride;
    int8_t* yr = y + static_cast<size_t>(r) * n;
    for (int c = done; c < n; ++c) {
      const int32_t a = WrappingAdd(ar[c], bias[c]);
      const int32_t v =
          WrappingAdd(single ? MultiplyByQuantizedMultiplierSingleRounding(a, mult[c], shift[c])
                             : MultiplyByQuantizedMultiplier(a, mult[c], shift[c]),
                      zp);
      yr[c] = static_cast<int8_t>(std::max(lo, std::min(hi, v)));
    }
  }
}

// FULLY_CONNECTED splits its output columns over the threads: every output is still one sum
// over k in order, so the result does not depend on the thread count.
constexpr int64_t kColumnAlign = 16;

Status EvalFullyConnectedF32(NodeState* node) {
  const float* x = node->t.In<float>(0);
  float* y = node->t.Out<float>(0);
  const int k = static_cast<int>(node->inner), n = node->oc;
  if (node->outer >= 16) {
    // Many rows (a transformer's tokens): one GEMM, rows split in blocks of 8, so each weight
    // panel serves a block of rows instead of streaming once per row (MatVecF32 below). Each
    // output is still one sum over k in order.
    const int64_t blocks = (node->outer + 7) / 8;
    const int tasks = TaskCount(*node, blocks, int64_t{8} * k * n);
    RunTasks(*node, tasks, [&](int task, int) {
      int64_t r0, r1;
      ChunkRange(node->outer, tasks, task, 8, &r0, &r1);
      if (r0 < r1) {
        GemmF32(x + r0 * k, static_cast<int>(r1 - r0), k, node->packed_f32, node->f_min,
                node->f_max, y + r0 * n);
      }
    });
    return Status::OK();
  }
  const int tasks =
      TaskCount(*node, (n + kColumnAlign - 1) / kColumnAlign, kColumnAlign * k * node->outer);
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t c0, c1;
    ChunkRange(n, tasks, task, kColumnAlign, &c0, &c1);
    if (c0 >= c1) return;
    const int j0 = static_cast<int>(c0 / 16), j1 = static_cast<int>((c1 + 15) / 16);
    for (int64_t r = 0; r < node->outer; ++r) {
      MatVecF32(x + r * k, node->packed_f32, j0, j1, node->f_min, node->f_max, y + r * n);
    }
  });
  return Status::OK();
}

Status EvalFullyConnectedI8(NodeState* node) {
  int8_t* y = node->t.Out<int8_t>(0);
  const int n = node->oc;
  RunFullyConnectedInt8(
      node, node->t.In<int8_t>(0),
      [&](int64_t r, int64_t c0, int64_t c1, const int32_t* acc, bool vnni) {
        if (vnni) {
          // bias_u8 holds the bias less 128 times each weight sum.
          RequantizeVnni(acc + c0, node->bias_u8.data() + c0, node->multipliers.data() + c0,
                         node->shifts.data() + c0, static_cast<int>(c1 - c0), node->left_shift == 1,
                         node->out_zp, node->act_min, node->act_max, y + r * n + c0);
          return;
        }
        for (int64_t o = c0; o < c1; ++o) {
          const size_t c = static_cast<size_t>(o);
          const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc[c]) +
                                                 static_cast<uint32_t>(node->bias[c]));
          y[r * n + o] = Requantize(*node, a, c);
        }
      });
  return Status::OK();
}

}  // namespace

// FULLY_CONNECTED's geometry (constant or run-time weights): weights [units, depth], the input
// a whole number of depth-long rows, and the output [rows, units] (keep_num_dims: the input's
// shape with units last). Sets node->inner (depth), oc (units) and outer (rows).
Status FullyConnectedGeometry(NodeState* node) {
  const OperatorDef& op = *node->op;
  const TensorDef& in = *node->t.in[0];
  const TensorDef& w = *node->t.in[1];
  if (w.shape.size() != 2 || w.shape[1] == 0 || in.shape.empty()) {
    return errors::InvalidArgument(node->what + ": weights '" + w.name +
                                   "' must be [units, depth], got " + ShapeString(w.shape));
  }
  const int k = w.shape[1], n = w.shape[0];
  if (in.num_elements % static_cast<size_t>(k) != 0) {
    return errors::InvalidArgument(node->what + ": input " + ShapeString(in.shape) +
                                   " is not a multiple of the weights' depth " + std::to_string(k));
  }
  node->inner = k;
  node->oc = n;
  node->outer = static_cast<int64_t>(in.num_elements / static_cast<size_t>(k));
  std::vector<int32_t> expect;
  if (op.options.keep_num_dims) {
    if (in.shape.back() != k) {
      return errors::InvalidArgument(node->what +
                                     ": keep_num_dims needs the input's last dimension to be " +
                                     std::to_string(k));
    }
    expect = in.shape;
    expect.back() = n;
  } else {
    expect = {static_cast<int32_t>(node->outer), n};
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], expect, "output"));
  return Status::OK();
}

void PrepareFullyConnectedNoVnni(NodeState* node, const int8_t* w, int n, int k) {
  node->acc_slice = static_cast<size_t>(n);
  node->w16 = PackedI16();
  if (!GemmI16Available()) return;
  // One row of x (batch 1): the weights are read once per Invoke, int8 (half the bytes of the
  // int16 pairs; MobileNetV2's 1280x1000 classifier is 1.3 MB) widened in the kernel.
  PackWeightsI16(w, n, k, &node->w16, node->outer == 1);
  node->acc_slice = static_cast<size_t>(node->w16.blocks) * 8;  // GemmI16 writes whole blocks
  node->scratch16.assign(static_cast<size_t>(node->outer) * node->w16.k2 * 2, 0);
}

Status PrepareFullyConnected(NodeState* node) {
  const OperatorDef& op = *node->op;
  if (op.inputs.size() < 2 || op.inputs.size() > 3 || op.outputs.size() != 1 ||
      node->t.in[0] == nullptr || node->t.in[1] == nullptr) {
    return errors::InvalidArgument(node->what +
                                   ": expects inputs (input, weights[, bias]) and one output");
  }
  const TensorDef& in = *node->t.in[0];
  const TensorDef& w = *node->t.in[1];
  EMBER_RETURN_IF_ERROR(FullyConnectedGeometry(node));
  // Weights computed at run time (tf.einsum / tf.matmul of two activations): kernels_fc_runtime.cc.
  if (w.data == nullptr) return PrepareFullyConnectedRuntimeWeights(node);
  const int k = w.shape[1], n = w.shape[0];
  if (IsHybrid(*node)) return PrepareFullyConnectedHybrid(node);
  EMBER_RETURN_IF_ERROR(PrepareWeighted(node, n, k, true));
  // LiteRT's per-channel FULLY_CONNECTED requantizes with single rounding; `left_shift`
  // flags it (it is otherwise unused by weighted ops).
  node->left_shift = w.quant.scale.size() > 1 ? 1 : 0;
  if (in.type == TensorType::kFloat32) {
    const TensorDef* b = node->t.in.size() > 2 ? node->t.in[2] : nullptr;
    PackWeightsF32(reinterpret_cast<const float*>(w.data),
                   b != nullptr ? reinterpret_cast<const float*>(b->data) : nullptr, n, k,
                   &node->packed_f32);
    node->eval = EvalFullyConnectedF32;
    return Status::OK();
  }
  node->eval = EvalFullyConnectedI8;
  if (node->vnni) {
    const PackedWeights& p = node->packed;
    node->scratchu8.assign(static_cast<size_t>(node->outer) * p.k4 * 4, 0);
    node->acc_slice = static_cast<size_t>(p.nb) * 16 * static_cast<size_t>(FcRowBlock(*node));
  } else {
    PrepareFullyConnectedNoVnni(node, reinterpret_cast<const int8_t*>(w.data), n, k);
  }
  node->scratch32.assign(node->acc_slice * static_cast<size_t>(node->threads), 0);
  return Status::OK();
}

namespace {

// memcpy for the few bytes of a thin input's pixels (a first layer's 3 channels): fixed-size,
// possibly overlapping copies that the compiler inlines, where a libc call per tap dominated.
inline void CopyPixel(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (bytes > 16) {
    std::memcpy(d, s, bytes);
  } else if (bytes >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + bytes - 8, s + bytes - 8, 8);
  } else if (bytes >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + bytes - 4, s + bytes - 4, 4);
  } else if (bytes >= 2) {
    std::memcpy(d, s, 2);
    std::memcpy(d + bytes - 2, s + bytes - 2, 2);
  } else if (bytes == 1) {
    *d = *s;
  }
}

// A convolution node's window over one image (c: its input channels, which for a
// depth-multiplier-1 depthwise node are its output channels too).
WindowGeometry Window(const NodeState& node) {
  const OpOptions& o = node.op->options;
  WindowGeometry g;
  g.ih = node.ih;
  g.iw = node.iw;
  g.c = node.ic;
  g.oh = node.oh;
  g.ow = node.ow;
  g.kh = node.kh;
  g.kw = node.kw;
  g.stride_h = o.stride_h;
  g.stride_w = o.stride_w;
  g.dil_h = o.dilation_h;
  g.dil_w = o.dilation_w;
  g.pad_h = node.pad_h;
  g.pad_w = node.pad_w;
  return g;
}

// Fills the im2col rows of output row `oy` of `image` (one [ih][iw][c] image): for each output
// column, at cols + ox * stride (stride 0: kh * kw * c), its kh * kw * c values in (ky, kx,
// channel) order; padding gets `pad_value`.
template <typename T>
void Im2ColRow(const WindowGeometry& g, const T* image, int oy, T pad_value, T* cols,
               int stride = 0) {
  const size_t k = stride != 0 ? static_cast<size_t>(stride)
                               : static_cast<size_t>(g.kh) * static_cast<size_t>(g.kw) * g.c;
  const size_t run = static_cast<size_t>(g.kw) * static_cast<size_t>(g.c);
  const int iy0 = oy * g.stride_h - g.pad_h;
  const bool rows_inside = iy0 >= 0 && iy0 + (g.kh - 1) * g.dil_h < g.ih;
  for (int ox = 0; ox < g.ow; ++ox) {
    T* dst = cols + static_cast<size_t>(ox) * k;
    const int ix0 = ox * g.stride_w - g.pad_w;
    if (rows_inside && g.dil_w == 1 && ix0 >= 0 && ix0 + g.kw <= g.iw) {
      // An undilated window inside the image: each filter row is one run of kw pixels.
      for (int ky = 0; ky < g.kh; ++ky) {
        const size_t iy = static_cast<size_t>(iy0 + ky * g.dil_h);
        CopyPixel(dst + static_cast<size_t>(ky) * run, image + (iy * g.iw + ix0) * g.c,
                  sizeof(T) * run);
      }
      continue;
    }
    WindowTaps(g, image, oy, ox, pad_value, dst,
               [](T* d, const T* s, size_t n) { CopyPixel(d, s, sizeof(T) * n); });
  }
}

constexpr int64_t kPixelAlign = 8;  // a multiple of every float GEMM's row tile but AVX2's 6

int64_t InPlaceSegmentCount(const NodeState& node) {
  return InPlaceRunCount(node.kh, node.kw, node.op->options.dilation_w);
}

// The runs of lite/window.h's in-place walk for this node (InPlaceRuns).
int InPlaceSegments(const NodeState& node, size_t prow, size_t pixel, ptrdiff_t* seg) {
  const OpOptions& o = node.op->options;
  return InPlaceRuns(node.kh, node.kw, o.dilation_h, o.dilation_w, prow, pixel, seg);
}

// Rows and columns of the padded image (InPlaceExtent).
void InPlaceImageSize(const NodeState& node, int* h, int* w) {
  const OpOptions& o = node.op->options;
  *h = static_cast<int>(
      InPlaceExtent(node.ih, node.pad_h, node.oh, o.stride_h, node.kh, o.dilation_h));
  *w = static_cast<int>(
      InPlaceExtent(node.iw, node.pad_w, node.ow, o.stride_w, node.kw, o.dilation_w));
}

// Runs copy_row(b, iy) for every input row (batch b, row iy) that a convolution reading its
// filter rows in place copies into its padded image: split over the node's threads in row order,
// as the GEMM's output rows after it are, so that each thread mostly writes the rows it reads
// next (the caller alone wrote the whole image before, and at two threads the other core then
// read half of it from the caller's cache). Inline when the image is small or one thread runs.
template <typename CopyRow>
void FillPaddedImage(const NodeState& node, size_t row_bytes, CopyRow copy_row) {
  const int rows = node.n * node.ih;
  // A byte copied weighs as a multiply-add: tasks of at least 32 KiB.
  const int tasks = TaskCount(node, rows, static_cast<int64_t>(row_bytes));
  RunTasks(node, tasks, [&](int task, int) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      copy_row(static_cast<int>(r / node.ih), static_cast<int>(r % node.ih));
    }
  });
}

Status EvalConvF32(NodeState* node) {
  const float* x = node->t.In<float>(0);
  float* y = node->t.Out<float>(0);
  const PackedF32& w = node->packed_f32;
  const WindowGeometry win = Window(*node);
  const size_t image = static_cast<size_t>(node->ih) * node->iw * node->ic;
  if (node->direct_1x1) {
    // Blocks of pixels: rows of the GEMM are independent, so any split gives the same values.
    const int m = node->n * node->oh * node->ow;
    const int blocks = static_cast<int>((m + kPixelAlign - 1) / kPixelAlign);
    if (node->threads > 1 && blocks < 2 * node->threads && w.panels >= 4) {
      // Few pixels (a 3x3 image is 8 rows + 1): split the output channels, two 16-column
      // panels per unit, every task taking all the rows.
      const int units = (w.panels + 1) / 2;
      const int tasks = TaskCount(*node, units, int64_t{32} * node->ic * m);
      RunTasks(*node, tasks, [&](int task, int) {
        int64_t j0, j1;
        ChunkRange(w.panels, tasks, task, 2, &j0, &j1);
        GemmF32Panels(x, m, node->ic, w, static_cast<int>(j0), static_cast<int>(j1), node->f_min,
                      node->f_max, y);
      });
      return Status::OK();
    }
    const int tasks = TaskCount(*node, blocks, kPixelAlign * node->ic * node->oc);
    RunTasks(*node, tasks, [&](int task, int) {
      int64_t r0, r1;
      ChunkRange(m, tasks, task, kPixelAlign, &r0, &r1);
      if (r0 >= r1) return;
      GemmF32(x + r0 * node->ic, static_cast<int>(r1 - r0), node->ic, w, node->f_min, node->f_max,
              y + r0 * node->oc);
    });
    return Status::OK();
  }
  const int k = node->kh * node->kw * node->ic;
  const int rows = node->n * node->oh;
  const int tasks = TaskCount(*node, rows, static_cast<int64_t>(node->ow) * k * node->oc);
  if (w.padded_h > 0) {
    // Filter rows in place: the input is copied into the padded image, whose border of zeros
    // was written once in Prepare; each filter row is kw * ic contiguous floats there.
    const OpOptions& o = node->op->options;
    const size_t row = static_cast<size_t>(node->iw) * node->ic;
    const size_t prow = static_cast<size_t>(w.padded_w) * node->ic;
    float* img = node->scratchf.data();
    FillPaddedImage(*node, sizeof(float) * row, [&](int b, int iy) {
      std::memcpy(img + (static_cast<size_t>(b) * w.padded_h + iy + node->pad_h) * prow +
                      static_cast<size_t>(node->pad_w) * node->ic,
                  x + (static_cast<size_t>(b) * node->ih + iy) * row, sizeof(float) * row);
    });
    ptrdiff_t seg[kMaxInPlaceRuns];
    const int nseg = InPlaceSegments(*node, prow, node->ic, seg);
    RunTasks(*node, tasks, [&](int task, int) {
      int64_t r0, r1;
      ChunkRange(rows, tasks, task, 1, &r0, &r1);
      for (int64_t r = r0; r < r1; ++r) {
        const int bi = static_cast<int>(r / node->oh), oy = static_cast<int>(r % node->oh);
        const float* base =
            img +
            (static_cast<size_t>(bi) * w.padded_h + static_cast<size_t>(oy) * o.stride_h) * prow;
        GemmF32Segments(base, node->ow, o.stride_w * node->ic, seg, nseg, w, node->f_min,
                        node->f_max, y + static_cast<size_t>(r) * node->ow * node->oc);
      }
    });
    return Status::OK();
  }
  RunTasks(*node, tasks, [&](int task, int thread) {
    float* cols = node->scratchf.data() + static_cast<size_t>(thread) * node->scratch_slice;
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const int bi = static_cast<int>(r / node->oh), oy = static_cast<int>(r % node->oh);
      Im2ColRow<float>(win, x + bi * image, oy, 0.0f, cols);
      GemmF32(cols, node->ow, k, w, node->f_min, node->f_max,
              y + static_cast<size_t>(r) * node->ow * node->oc);
    }
  });
  return Status::OK();
}

constexpr int kConvRowBlock = 64;  // output pixels per GEMM call on the direct 1x1 path

Status EvalConvI8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  const int8_t* w = node->t.In<int8_t>(1);
  int8_t* y = node->t.Out<int8_t>(0);
  const int k = node->kh * node->kw * node->ic;
  const WindowGeometry win = Window(*node);
  const size_t image = static_cast<size_t>(node->ih) * node->iw * node->ic;
  // Padding holds zp_in, whose (x - zp_in) contribution is 0 as in the reference.
  const int8_t pad = static_cast<int8_t>(node->in_zp);
  if (node->vnni) {
    const PackedWeights& p = node->packed;
    const int stride = p.k4 * 4;
    const size_t in_bytes = node->t.in[0]->num_elements;
    uint8_t* xu = node->scratchu8.data();
    const int m = node->n * node->oh * node->ow;
    const int blocks = (m + kConvRowBlock - 1) / kConvRowBlock;
    const int groups = p.nb / p.nr;
    const bool few_rows = node->threads > 1 && blocks < 4 * node->threads && (groups > 1 || m > 4);
    if (p.padded_h == 0 && !(node->direct_1x1 && !few_rows)) {
      // Offset the whole input by 128 once; im2col then copies unsigned bytes.
      OffsetToUnsigned(x, in_bytes, xu);
    }
    if (node->direct_1x1) {
      if (few_rows) {
        // Few pixels (a 14x14, 6x6 or 3x3 image, where 64-pixel blocks split unevenly or not at
        // all): split the output channels by groups of the packed weights as well, and the
        // pixels only into as many 4-row-aligned chunks as needed for about two tasks per
        // thread. Each output is the same sum either way.
        const int rchunks =
            std::min((m + 3) / 4, std::max(1, (2 * node->threads + groups - 1) / groups));
        const int units = rchunks * groups;
        const int tasks =
            TaskCount(*node, units, int64_t{16} * p.nr * node->ic * ((m + rchunks - 1) / rchunks));
        RunTasks(*node, tasks, [&](int task, int) {
          int64_t u0, u1;
          ChunkRange(units, tasks, task, 1, &u0, &u1);
          while (u0 < u1) {
            const int rc = static_cast<int>(u0 / groups), g0 = static_cast<int>(u0 % groups);
            const int g1 = static_cast<int>(std::min<int64_t>(groups, g0 + (u1 - u0)));
            int64_t r0, r1;
            ChunkRange(m, rchunks, rc, 4, &r0, &r1);
            if (r0 < r1) {
              ConvGemmVnniGroups(xu + static_cast<size_t>(r0) * node->ic, static_cast<int>(r1 - r0),
                                 node->ic, p, g0, g1, y + static_cast<size_t>(r0) * node->oc,
                                 node->oc);
            }
            u0 += g1 - g0;
          }
        });
        return Status::OK();
      }
      const int tasks = TaskCount(*node, blocks, int64_t{kConvRowBlock} * node->ic * node->oc);
      RunTasks(*node, tasks, [&](int task, int) {
        int64_t b0, b1;
        ChunkRange(blocks, tasks, task, 1, &b0, &b1);
        for (int64_t b = b0; b < b1; ++b) {
          const int r = static_cast<int>(b) * kConvRowBlock;
          const int rows = std::min(kConvRowBlock, m - r);
          // Each block offsets its own rows by 128 (in the task, so threads share the pass,
          // and the GEMM reads them back from L1).
          const size_t at = static_cast<size_t>(r) * node->ic;
          OffsetToUnsigned(x + at, static_cast<size_t>(rows) * node->ic, xu + at);
          ConvGemmVnni(xu + at, rows, node->ic, p, y + static_cast<size_t>(r) * node->oc, node->oc);
        }
      });
      return Status::OK();
    }
    const int8_t pad_u = static_cast<int8_t>(static_cast<uint8_t>(pad) ^ 0x80u);
    const int out_rows = node->n * node->oh;
    if (p.padded_h > 0) {
      // Filter rows in place: the border of the padded image was filled once in Prepare.
      const OpOptions& o = node->op->options;
      const size_t row = static_cast<size_t>(node->iw) * node->ic;
      const size_t prow = static_cast<size_t>(p.padded_w) * p.padded_c;
      uint8_t* img = node->scratchu8.data();
      FillPaddedImage(*node, row, [&](int b, int iy) {
        const int8_t* src = x + (static_cast<size_t>(b) * node->ih + iy) * row;
        uint8_t* dst = img + (static_cast<size_t>(b) * p.padded_h + iy + node->pad_h) * prow +
                       static_cast<size_t>(node->pad_w) * p.padded_c;
        if (p.padded_c == node->ic) {
          OffsetToUnsigned(src, row, dst);
        } else if (node->ic == 3) {
          OffsetPixels3To4(src, static_cast<size_t>(node->iw), dst);
        } else {
          // The bytes after each pixel's ic, which meet zero weights, keep the padding value
          // written in Prepare.
          OffsetPixels(src, static_cast<size_t>(node->iw), node->ic, p.padded_c, dst);
        }
      });
      ptrdiff_t seg[kMaxInPlaceRuns];
      const int nseg = InPlaceSegments(*node, prow, p.padded_c, seg);
      const int tasks = TaskCount(*node, out_rows, static_cast<int64_t>(node->ow) * k * node->oc);
      RunTasks(*node, tasks, [&](int task, int) {
        int64_t r0, r1;
        ChunkRange(out_rows, tasks, task, 1, &r0, &r1);
        for (int64_t r = r0; r < r1; ++r) {
          const int bi = static_cast<int>(r / node->oh), oy = static_cast<int>(r % node->oh);
          const uint8_t* base =
              img +
              (static_cast<size_t>(bi) * p.padded_h + static_cast<size_t>(oy) * o.stride_h) * prow;
          ConvGemmVnniSegments(base, node->ow, o.stride_w * p.padded_c, seg, nseg, p,
                               y + static_cast<size_t>(r) * node->ow * node->oc, node->oc);
        }
      });
      return Status::OK();
    }
    const int tasks = TaskCount(*node, out_rows, static_cast<int64_t>(node->ow) * k * node->oc);
    RunTasks(*node, tasks, [&](int task, int thread) {
      int8_t* rows = reinterpret_cast<int8_t*>(xu + node->im2col_base +
                                               static_cast<size_t>(thread) * node->scratch_slice);
      int64_t r0, r1;
      ChunkRange(out_rows, tasks, task, 1, &r0, &r1);
      for (int64_t r = r0; r < r1; ++r) {
        const int bi = static_cast<int>(r / node->oh), oy = static_cast<int>(r % node->oh);
        Im2ColRow<int8_t>(win, reinterpret_cast<const int8_t*>(xu) + bi * image, oy, pad_u, rows,
                          stride);
        ConvGemmVnni(reinterpret_cast<const uint8_t*>(rows), node->ow, stride, p,
                     y + static_cast<size_t>(r) * node->ow * node->oc, node->oc);
      }
    });
    return Status::OK();
  }
  const int out_rows = node->n * node->oh;
  const int tasks = TaskCount(*node, out_rows, static_cast<int64_t>(node->ow) * k * node->oc);
  const OpOptions& opt = node->op->options;
  if (node->w16.blocks > 0 && node->kh == 1 && node->kw == 1 && opt.stride_h == 1 &&
      opt.stride_w == 1 && node->pad_h == 0 && node->pad_w == 0 && node->ow == node->iw) {
    // A 1x1 stride-1 unpadded conv's rows are the input's pixels, in order across rows and
    // images: one flat GEMM, no im2col, split over the tasks in whole 4-pixel tiles (row
    // chunks of narrow layers left single-row tiles to each thread).
    const int64_t total = static_cast<int64_t>(out_rows) * node->ow;
    const int64_t step = static_cast<int64_t>(node->gemm_rows) * node->ow;  // scratch capacity
    const PackedI16& w16 = node->w16;
    const int stride = w16.blocks * 8;
    RunTasks(*node, tasks, [&](int task, int thread) {
      int32_t* acc = node->scratch32.data() + static_cast<size_t>(thread) * node->acc_slice;
      int16_t* x16 = node->scratch16.data() + static_cast<size_t>(thread) * node->scratch16_slice;
      int64_t p0, p1;
      ChunkRange(total, tasks, task, 4, &p0, &p1);
      for (int64_t p = p0; p < p1; p += step) {
        const int pixels = static_cast<int>(std::min(step, p1 - p));
        WidenRowsI8(x + static_cast<size_t>(p) * node->ic, pixels, k, k, w16.k2, x16);
        GemmI16(x16, pixels, w16, acc, stride);
        RequantizeRows(*node, acc, pixels, stride, node->oc, y + static_cast<size_t>(p) * node->oc);
      }
    });
    return Status::OK();
  }
  RunTasks(*node, tasks, [&](int task, int thread) {
    int8_t* cols = reinterpret_cast<int8_t*>(node->scratchu8.data()) +
                   static_cast<size_t>(thread) * node->scratch_slice;
    int32_t* acc = node->scratch32.data() + static_cast<size_t>(thread) * node->acc_slice;
    int64_t r0, r1;
    ChunkRange(out_rows, tasks, task, 1, &r0, &r1);
    const PackedI16& w16 = node->w16;
    if (w16.blocks > 0) {
      // gemm_rows output rows a GEMM (narrow outputs: whole 4-row tiles, the weights read once
      // for several rows).
      for (int64_t r = r0; r < r1; r += node->gemm_rows) {
        const int rows = static_cast<int>(std::min<int64_t>(node->gemm_rows, r1 - r));
        const int pixels = rows * node->ow;
        int16_t* x16 = node->scratch16.data() + static_cast<size_t>(thread) * node->scratch16_slice;
        if (node->im2col_widen) {
          for (int j = 0; j < rows; ++j) {
            const int bi = static_cast<int>((r + j) / node->oh);
            const int oy = static_cast<int>((r + j) % node->oh);
            Im2ColRowWidenI8(win, x + bi * image, image, oy, pad, w16.k2,
                             x16 + static_cast<size_t>(j) * node->ow * 2 * w16.k2);
          }
        } else {
          for (int j = 0; j < rows; ++j) {
            const int bi = static_cast<int>((r + j) / node->oh);
            const int oy = static_cast<int>((r + j) % node->oh);
            Im2ColRow<int8_t>(win, x + bi * image, oy, pad,
                              cols + static_cast<size_t>(j) * node->ow * k);
          }
          WidenRowsI8(cols, pixels, k, k, w16.k2, x16);
        }
        const int stride = w16.blocks * 8;
        GemmI16(x16, pixels, w16, acc, stride);
        RequantizeRows(*node, acc, pixels, stride, node->oc,
                       y + static_cast<size_t>(r) * node->ow * node->oc);
      }
      return;
    }
    for (int64_t r = r0; r < r1; ++r) {
      const int bi = static_cast<int>(r / node->oh), oy = static_cast<int>(r % node->oh);
      Im2ColRow<int8_t>(win, x + bi * image, oy, pad, cols);
      for (int ox = 0; ox < node->ow; ++ox) {
        int8_t* yo = y + (static_cast<size_t>(r) * node->ow + ox) * node->oc;
        DotRowsInt8(w, node->oc, cols + static_cast<size_t>(ox) * k, k, acc);
        RequantizeRows(*node, acc, 1, node->oc, node->oc, yo);
      }
    }
  });
  return Status::OK();
}

Status PrepareSpatial(NodeState* node, int filter_h, int filter_w, int out_c) {
  const OpOptions& o = node->op->options;
  const TensorDef& in = *node->t.in[0];
  if (in.shape.size() != 4) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' must be NHWC, got " +
                                   ShapeString(in.shape));
  }
  if (o.stride_w < 1 || o.stride_h < 1 || o.dilation_w < 1 || o.dilation_h < 1 || filter_h < 1 ||
      filter_w < 1 || o.stride_w > 4096 || o.stride_h > 4096 || o.dilation_w > 4096 ||
      o.dilation_h > 4096) {
    return errors::InvalidArgument(node->what +
                                   ": strides, dilations and filter sizes must be >= 1");
  }
  node->n = in.shape[0];
  node->ih = in.shape[1];
  node->iw = in.shape[2];
  node->ic = in.shape[3];
  node->kh = filter_h;
  node->kw = filter_w;
  node->oc = out_c;
  node->oh = ComputeOutSize(o.padding, node->ih, filter_h, o.stride_h, o.dilation_h);
  node->ow = ComputeOutSize(o.padding, node->iw, filter_w, o.stride_w, o.dilation_w);
  if (node->oh < 0 || node->ow < 0) {
    return errors::InvalidArgument(node->what + ": the filter is larger than the input");
  }
  node->pad_h = ComputePadding(o.stride_h, o.dilation_h, node->ih, filter_h, node->oh);
  node->pad_w = ComputePadding(o.stride_w, o.dilation_w, node->iw, filter_w, node->ow);
  return CheckShape(*node, *node->t.out[0], {node->n, node->oh, node->ow, out_c}, "output");
}

// A grouped CONV_2D (filter depth a divisor of the input depth); defined below.
Status PrepareGroupedConv2D(NodeState* node, int filter_depth);
Status PrepareDepthwiseRows(NodeState* node, const int8_t* wd);

}  // namespace

Status PrepareConv2D(NodeState* node) {
  const OperatorDef& op = *node->op;
  if (op.inputs.size() < 2 || op.inputs.size() > 3 || op.outputs.size() != 1 ||
      node->t.in[0] == nullptr || node->t.in[1] == nullptr) {
    return errors::InvalidArgument(node->what +
                                   ": expects inputs (input, filter[, bias]) and one output");
  }
  const TensorDef& w = *node->t.in[1];
  EMBER_RETURN_IF_ERROR(RequireConstant(*node, &w, "filter"));
  if (w.shape.size() != 4) {
    return errors::InvalidArgument(node->what + ": filter '" + w.name +
                                   "' must be [O, KH, KW, I], got " + ShapeString(w.shape));
  }
  EMBER_RETURN_IF_ERROR(PrepareSpatial(node, w.shape[1], w.shape[2], w.shape[0]));
  if (IsHybrid(*node)) return PrepareConv2DHybrid(node);
  if (w.shape[3] != node->ic) return PrepareGroupedConv2D(node, w.shape[3]);
  const int k = node->kh * node->kw * node->ic;
  EMBER_RETURN_IF_ERROR(PrepareWeighted(node, node->oc, k, true));
  const OpOptions& o = op.options;
  node->direct_1x1 = node->kh == 1 && node->kw == 1 && o.stride_h == 1 && o.stride_w == 1 &&
                     node->pad_h == 0 && node->pad_w == 0 && node->oh == node->ih &&
                     node->ow == node->iw;
  if (node->t.in[0]->type == TensorType::kFloat32) {
    const TensorDef* b = node->t.in.size() > 2 ? node->t.in[2] : nullptr;
    PackWeightsF32(reinterpret_cast<const float*>(w.data),
                   b != nullptr ? reinterpret_cast<const float*>(b->data) : nullptr, node->oc, k,
                   &node->packed_f32);
    PackedF32& p = node->packed_f32;
    if (!node->direct_1x1 && InPlaceSegmentCount(*node) <= kMaxInPlaceRuns) {
      // The GEMM reads each filter row (kw * ic contiguous floats; with column dilation, each
      // tap's ic floats) from a zero-bordered copy of the input, no im2col (as the int8 path
      // below).
      InPlaceImageSize(*node, &p.padded_h, &p.padded_w);
      node->scratch_slice = 0;
      node->scratchf.assign(static_cast<size_t>(node->n) * p.padded_h * p.padded_w * node->ic + 16,
                            0.0f);
    } else if (!node->direct_1x1) {
      node->scratch_slice = (static_cast<size_t>(node->ow) * k + 15) / 16 * 16;
      node->scratchf.assign(node->scratch_slice * static_cast<size_t>(node->threads), 0.0f);
    }
    node->eval = EvalConvF32;
    return Status::OK();
  }
  node->eval = EvalConvI8;
  const size_t in_bytes = node->t.in[0]->num_elements;
  if (node->vnni) {
    const PackedWeights& p = node->packed;
    // The direct path reads rows of ic bytes as 4-byte groups: ic must fill them exactly.
    node->direct_1x1 = node->direct_1x1 && p.k4 * 4 == node->ic;
    const size_t cols = node->direct_1x1 ? 0 : static_cast<size_t>(node->ow) * p.k4 * 4;
    node->im2col_base = (in_bytes + 63) / 64 * 64;
    node->scratch_slice = (cols + 63) / 64 * 64;
    // Sums stay in registers: requantization is fused into the GEMM.
    node->acc_slice = 0;
    PrepareFusedRequant(node->bias_u8.data(), node->multipliers.data(), node->shifts.data(),
                        node->out_zp, node->act_min, node->act_max, &node->packed);
  } else {
    node->direct_1x1 = false;
    node->im2col_base = 0;
    node->scratch_slice = (static_cast<size_t>(node->ow) * k + 63) / 64 * 64;
    node->acc_slice = static_cast<size_t>(node->oc);
    node->w16 = PackedI16();
    node->gemm_rows = 1;
    node->im2col_widen = false;
    if (GemmI16Available()) {
      // Whole output rows' sums at once: GemmI16 against the int16 weight pairs, over enough
      // rows for 16 pixels in whole 4-pixel tiles where the rows are narrow (MobileNet's 6 and
      // 3 pixel rows went through single-row tiles).
      PackWeightsI16(reinterpret_cast<const int8_t*>(w.data), node->oc, k, &node->w16);
      const int total_rows = node->n * node->oh;
      int g = 1;
      while (g < total_rows && (g * node->ow < 16 || g * node->ow % 4 != 0) && g < 16) ++g;
      node->gemm_rows = g;
      const size_t pixels = static_cast<size_t>(g) * node->ow;
      node->scratch_slice = (pixels * k + 63) / 64 * 64;
      node->acc_slice = pixels * node->w16.blocks * 8;
      // Im2ColRowWidenI8 writes 16 values past a row's last pixel: room for them in each slice.
      node->scratch16_slice = (pixels * node->w16.k2 * 2 + 16 + 31) / 32 * 32;
      node->scratch16.assign(node->scratch16_slice * static_cast<size_t>(node->threads), 0);
      node->im2col_widen = Im2ColRowWidenI8Applies(Window(*node), node->w16.k2);
    }
  }
  const size_t threads = static_cast<size_t>(node->threads);
  // The runs the GEMM reads (InPlaceSegments) must be whole 4-byte groups: filter rows of kw * ic
  // bytes, or with column dilation single pixels of ic bytes. Where they are not, the padded
  // image's pixels take ic rounded up to a multiple of 4 bytes, and the filter a zero weight for
  // each byte added (a 3-channel first layer: 4-byte pixels).
  const int run_bytes = o.dilation_w == 1 ? node->kw * node->ic : node->ic;
  const int pixel_bytes = run_bytes % 4 == 0 ? node->ic : (node->ic + 3) / 4 * 4;
  if (node->vnni && !node->direct_1x1 && InPlaceSegmentCount(*node) <= kMaxInPlaceRuns) {
    // The GEMM reads the runs from a padded copy of the input, no im2col.
    PackedWeights& p = node->packed;
    if (pixel_bytes != node->ic) {
      const int8_t* wd = reinterpret_cast<const int8_t*>(w.data);
      const size_t taps = static_cast<size_t>(node->oc) * node->kh * node->kw;
      std::vector<int8_t> wp(taps * static_cast<size_t>(pixel_bytes), 0);
      for (size_t t = 0; t < taps; ++t) {
        std::memcpy(&wp[t * static_cast<size_t>(pixel_bytes)], wd + t * node->ic,
                    static_cast<size_t>(node->ic));
      }
      PackWeightsVnni(wp.data(), node->oc, node->kh * node->kw * pixel_bytes, p.nr, &p);
      PrepareFusedRequant(node->bias_u8.data(), node->multipliers.data(), node->shifts.data(),
                          node->out_zp, node->act_min, node->act_max, &p);
    }
    p.padded_c = pixel_bytes;
    InPlaceImageSize(*node, &p.padded_h, &p.padded_w);
    const uint8_t pad_u = static_cast<uint8_t>(node->in_zp) ^ 0x80u;
    node->im2col_base = 0;
    node->scratch_slice = 0;
    node->scratchu8.assign(static_cast<size_t>(node->n) * p.padded_h * p.padded_w * p.padded_c + 64,
                           pad_u);
    node->scratch32.clear();
    return Status::OK();
  }
  node->scratchu8.assign(node->im2col_base + node->scratch_slice * threads, 0);
  node->scratch32.assign(node->acc_slice * threads, 0);
  return Status::OK();
}

namespace {

// Output rows [r0, r1) of the n * oh rows.
template <typename T>
void DepthwiseLoop(const NodeState& node, const T* x, const T* w, T* y,
                   void (*emit)(const NodeState&, T*, size_t, int, int32_t, float), int64_t r0,
                   int64_t r1) {
  const OpOptions& o = node.op->options;
  const int dm = o.depth_multiplier;
  for (int64_t r = r0; r < r1; ++r) {
    const int b = static_cast<int>(r / node.oh), oy = static_cast<int>(r % node.oh);
    for (int ox = 0; ox < node.ow; ++ox) {
      const int iy0 = oy * o.stride_h - node.pad_h;
      const int ix0 = ox * o.stride_w - node.pad_w;
      const size_t obase = ((static_cast<size_t>(b) * node.oh + oy) * node.ow + ox) * node.oc;
      for (int ic = 0; ic < node.ic; ++ic) {
        for (int m = 0; m < dm; ++m) {
          const int oc = ic * dm + m;
          int32_t iacc = 0;
          float facc = 0.0f;
          for (int ky = 0; ky < node.kh; ++ky) {
            const int iy = iy0 + ky * o.dilation_h;
            if (iy < 0 || iy >= node.ih) continue;
            for (int kx = 0; kx < node.kw; ++kx) {
              const int ix = ix0 + kx * o.dilation_w;
              if (ix < 0 || ix >= node.iw) continue;
              const T xv =
                  x[((static_cast<size_t>(b) * node.ih + iy) * node.iw + ix) * node.ic + ic];
              const T wv = w[(static_cast<size_t>(ky) * node.kw + kx) * node.oc + oc];
              if constexpr (sizeof(T) == 1) {
                iacc += static_cast<int32_t>(wv) * (static_cast<int32_t>(xv) - node.in_zp);
              } else {
                facc += xv * wv;
              }
            }
          }
          emit(node, y, obase + static_cast<size_t>(oc), oc, iacc, facc);
        }
      }
    }
  }
}

void EmitF32(const NodeState& node, float* y, size_t at, int oc, int32_t, float acc) {
  const float* b = node.t.in.size() > 2 && node.t.in[2] ? node.t.In<float>(2) : nullptr;
  y[at] = std::min(node.f_max, std::max(node.f_min, acc + (b ? b[oc] : 0.0f)));
}

void EmitI8(const NodeState& node, int8_t* y, size_t at, int oc, int32_t acc, float) {
  const int32_t* b = node.t.in.size() > 2 && node.t.in[2] ? node.t.In<int32_t>(2) : nullptr;
  if (b) acc = WrappingAdd(acc, b[oc]);
  y[at] = Requantize(node, acc, static_cast<size_t>(oc));
}

// The requantization of an int8 depthwise node's outputs (its Prepare'd per-channel values).
DepthwiseRequant Requant(const NodeState& node) {
  DepthwiseRequant q;
  q.bias = node.bias.data();
  q.mult = node.multipliers.data();
  q.shift = node.shifts.data();
  q.out_zp = node.out_zp;
  q.act_min = node.act_min;
  q.act_max = node.act_max;
  return q;
}

// The AVX-512 depthwise rows and the fused AVX2 int8 rows split a few output rows' channels
// too (3 rows on 2 threads would split 2:1): `parts` 32-channel-aligned parts per row, 1 when
// the rows divide evenly.
int DepthwiseChannelParts(const NodeState& node, int rows, int channels) {
  if (!(node.vnni || node.dw_fused_avx2) || node.threads <= 1 || rows % node.threads == 0 ||
      rows >= 4 * node.threads) {
    return 1;
  }
  return std::max(1, std::min(node.threads, (channels + 31) / 32));
}

// Runs row(r, bi, oy, c0, c1[, thread]) for every output row r (image bi, row oy) and each of its
// `parts` channel ranges [c0, c1) (DepthwiseChannelParts), the (row, part) units spread over the
// tasks; `thread` (when row takes it) indexes per-thread scratch. per_image: the rows of an image
// (g.oh), or fewer when each r stands for several rows (the caller maps r to them).
template <typename RowFn>
void RunDepthwiseChannelParts(const NodeState& node, const WindowGeometry& g, int rows, int parts,
                              RowFn row, int per_image = 0, int rows_per_unit = 1) {
  if (per_image == 0) per_image = g.oh;
  const int units = rows * parts;
  const int tasks = TaskCount(
      node, units, static_cast<int64_t>(g.ow) * g.c / parts * g.kh * g.kw * rows_per_unit);
  RunTasks(node, tasks, [&](int task, int thread) {
    int64_t u0, u1;
    ChunkRange(units, tasks, task, 1, &u0, &u1);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t r = u / parts;
      int64_t c0, c1;
      ChunkRange(g.c, parts, static_cast<int>(u % parts), 32, &c0, &c1);
      const int bi = static_cast<int>(r / per_image), oy = static_cast<int>(r % per_image);
      if constexpr (std::is_invocable_v<RowFn, int64_t, int, int, int, int, int>) {
        row(r, bi, oy, static_cast<int>(c0), static_cast<int>(c1), thread);
      } else {
        row(r, bi, oy, static_cast<int>(c0), static_cast<int>(c1));
      }
    }
  });
}

// The input the multiplier-1 rows read: the node's, or with a depth multiplier M > 1
// (dw_expand) its channels each repeated M times into dw_input.
template <typename T>
const T* DepthwiseInput(NodeState* node) {
  const T* x = node->t.In<T>(0);
  const int m = node->dw_expand;
  if (m == 1) return x;
  T* out = reinterpret_cast<T*>(node->dw_input.data());
  const size_t pixels = static_cast<size_t>(node->n) * node->ih * node->iw;
  const size_t c = static_cast<size_t>(node->oc / m);
  for (size_t p = 0; p < pixels; ++p) {
    const T* src = x + p * c;
    T* dst = out + p * c * static_cast<size_t>(m);
    for (size_t k = 0; k < c; ++k) {
      for (int j = 0; j < m; ++j) dst[k * static_cast<size_t>(m) + static_cast<size_t>(j)] = src[k];
    }
  }
  return out;
}

// Depth multiplier 1 (or its input repeated: DepthwiseInput): whole output rows, vectorised
// across channels.
Status EvalDepthwiseRowsF32(NodeState* node) {
  const WindowGeometry g = Window(*node);
  const float* x = DepthwiseInput<float>(node);
  const float* w = node->t.In<float>(1);
  const float* b = node->t.in.size() > 2 && node->t.in[2] ? node->t.In<float>(2) : nullptr;
  float* y = node->t.Out<float>(0);
  const size_t in_image = static_cast<size_t>(g.ih) * g.iw * g.c;
  const size_t out_row = static_cast<size_t>(g.ow) * g.c;
  const int rows = node->n * g.oh;
  const int parts = DepthwiseChannelParts(*node, rows, g.c);
  if (parts > 1) {
    RunDepthwiseChannelParts(*node, g, rows, parts, [&](int64_t r, int bi, int oy, int c0, int c1) {
      DepthwiseRowF32Avx512Channels(g, x + bi * in_image, w, b, node->f_min, node->f_max, oy, c0,
                                    c1, y + static_cast<size_t>(r) * out_row);
    });
    return Status::OK();
  }
  const int tasks = TaskCount(*node, rows, static_cast<int64_t>(out_row) * g.kh * g.kw);
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const int bi = static_cast<int>(r / g.oh), oy = static_cast<int>(r % g.oh);
      float* yr = y + static_cast<size_t>(r) * out_row;
      if (node->vnni) {
        DepthwiseRowF32Avx512(g, x + bi * in_image, w, b, node->f_min, node->f_max, oy, yr);
      } else {
        DepthwiseRowF32(g, x + bi * in_image, w, b, node->f_min, node->f_max, oy, yr);
      }
    }
  });
  return Status::OK();
}

Status EvalDepthwiseRowsI8(NodeState* node) {
  const WindowGeometry g = Window(*node);
  const int8_t* x = DepthwiseInput<int8_t>(node);
  const int8_t* w = node->t.In<int8_t>(1);
  int8_t* y = node->t.Out<int8_t>(0);
  const size_t in_image = static_cast<size_t>(g.ih) * g.iw * g.c;
  const bool vnni = HasVnni();
  const int rows = node->n * g.oh;
  const int tasks = TaskCount(*node, rows, static_cast<int64_t>(g.ow) * g.c * g.kh * g.kw);
  const DepthwiseRequant q = Requant(*node);
  if (node->vnni) {
    const int32_t* w32 = node->scratch32.data();  // widened weights, read-only
    if (node->dw3_vnni) {
      // At stride 1 without row dilation, pairs of rows (one row buffer for both), unless the
      // threads would then get unequal shares (an odd row count, or few pairs that do not divide
      // among them).
      const int pairs = (g.oh + 1) / 2, units2 = node->n * pairs;
      const bool by_pairs = g.stride_h == 1 && g.dil_h == 1 &&
                            (node->threads <= 1 || units2 >= 4 * node->threads ||
                             (g.oh % 2 == 0 && units2 % node->threads == 0));
      const int per_unit = by_pairs ? 2 : 1, units = by_pairs ? units2 : rows;
      RunDepthwiseChannelParts(
          *node, g, units, DepthwiseChannelParts(*node, units, g.c),
          [&](int64_t, int bi, int i, int c0, int c1, int thread) {
            const int oy = i * per_unit;
            DepthwiseRowsI8Vnni3x3(
                g, x + bi * in_image, node->dw3, node->in_zp, q, oy, std::min(per_unit, g.oh - oy),
                c0, c1, node->scratchu8.data() + static_cast<size_t>(thread) * node->scratch_slice,
                y + (static_cast<size_t>(bi) * g.oh + oy) * g.ow * g.c);
          },
          by_pairs ? pairs : g.oh, per_unit);
      return Status::OK();
    }
    const int parts = DepthwiseChannelParts(*node, rows, g.c);
    if (node->dwk_vnni) {
      RunDepthwiseChannelParts(
          *node, g, rows, parts, [&](int64_t r, int bi, int oy, int c0, int c1, int thread) {
            DepthwiseRowI8VnniKxK(
                g, x + bi * in_image, node->dwk, node->in_zp, q, oy, c0, c1,
                node->scratchu8.data() + static_cast<size_t>(thread) * node->scratch_slice,
                y + static_cast<size_t>(r) * g.ow * g.c);
          });
      return Status::OK();
    }
    if (parts > 1) {
      RunDepthwiseChannelParts(
          *node, g, rows, parts, [&](int64_t r, int bi, int oy, int c0, int c1) {
            DepthwiseRowI8Avx512Channels(g, x + bi * in_image, w32, node->in_zp, q, oy, c0, c1,
                                         y + static_cast<size_t>(r) * g.ow * g.c);
          });
      return Status::OK();
    }
    RunTasks(*node, tasks, [&](int task, int) {
      int64_t r0, r1;
      ChunkRange(rows, tasks, task, 1, &r0, &r1);
      for (int64_t r = r0; r < r1; ++r) {
        const int bi = static_cast<int>(r / g.oh), oy = static_cast<int>(r % g.oh);
        DepthwiseRowI8Avx512(g, x + bi * in_image, w32, node->in_zp, q, oy,
                             y + static_cast<size_t>(r) * g.ow * g.c);
      }
    });
    return Status::OK();
  }
  if (node->dw_fused_avx2) {
    // AVX2 3x3: a call's rows of an image at once, requantized in registers (RequantizeRows'
    // double rounding). A call widens each input row it reads once (a ring of three), so one
    // that starts at row oy widens a row or two more than the rows before it would: split by
    // rows, MobileNetV2's 6x6 and 12x12 layers (1-2 rows per task) widened each row about
    // three times over, and ran at 1.1-1.45x on two threads. Where the 16-channel blocks divide
    // evenly among the threads, or the rows are few, each thread takes a channel part of every
    // row, all rows in one call: no row widened twice (two threads, MobileNetV2 int8: its
    // depthwise layers 87.7 -> 79.2 us; the 6x6 and 3x3 ones 14-28% faster).
    const int blocks = g.c / 16, parts = std::min(tasks, node->threads);
    if (parts > 1 && blocks >= parts && (blocks % parts == 0 || rows < 4 * parts)) {
      const size_t out_row = static_cast<size_t>(g.ow) * g.c;
      const size_t out_image = static_cast<size_t>(g.oh) * out_row;
      // Each part's rows in `chunks` runs of at least 4 rows (a run's first row widens two
      // more input rows), up to the tasks TaskCount gives: a thread done with its part takes
      // runs of the other's, where one CPU runs slower than the other (MobileNetV2 int8, two
      // threads, its depthwise layers, min of 6 profiles: one run per part 120.0 us, runs
      // 116.2; the 12x12x96 ones 12.2 and 11.0 -> 8.4 and 9.4).
      const int chunks = std::max(1, std::min(tasks / parts, g.oh / 4));
      RunTasks(*node, parts * chunks, [&](int task, int) {
        const int part = task / chunks;
        int64_t c0, c1;
        ChunkRange(g.c, parts, part, 16, &c0, &c1);
        // Part p starts at its run chunks * p / parts and wraps around (its runs are the tasks
        // its thread runs first, in order): the parts share the cache lines of each output
        // pixel, and in step they would write the same lines at once (56x56x96, two threads,
        // one run each: stride 1 97.2 -> 94.5 us, stride 2 29.7 -> 28.6 us).
        const int run = (task % chunks + chunks * part / parts) % chunks;
        int64_t oy0, oy1;
        ChunkRange(g.oh, chunks, run, 1, &oy0, &oy1);
        for (int bi = 0; bi < node->n; ++bi) {
          DepthwiseRowsI8Fused(g, x + bi * in_image, node->dw_fused, q, static_cast<int>(oy0),
                               static_cast<int>(oy1), static_cast<int>(c0), static_cast<int>(c1),
                               y + bi * out_image + static_cast<size_t>(oy0) * out_row);
        }
      });
      return Status::OK();
    }
    // Otherwise by rows; a few rows that the threads would share unequally split their
    // channels too, as the AVX-512 rows do.
    const int row_parts = DepthwiseChannelParts(*node, rows, g.c);
    if (row_parts > 1) {
      RunDepthwiseChannelParts(
          *node, g, rows, row_parts, [&](int64_t r, int bi, int oy, int c0, int c1) {
            DepthwiseRowsI8Fused(g, x + bi * in_image, node->dw_fused, q, oy, oy + 1, c0, c1,
                                 y + static_cast<size_t>(r) * g.ow * g.c);
          });
      return Status::OK();
    }
    RunTasks(*node, tasks, [&](int task, int) {
      int64_t r0, r1;
      ChunkRange(rows, tasks, task, 1, &r0, &r1);
      for (int64_t r = r0; r < r1;) {
        const int bi = static_cast<int>(r / g.oh), oy = static_cast<int>(r % g.oh);
        const int oy1 = static_cast<int>(std::min<int64_t>(g.oh, oy + (r1 - r)));
        DepthwiseRowsI8Fused(g, x + bi * in_image, node->dw_fused, q, oy, oy1, 0, g.c,
                             y + static_cast<size_t>(r) * g.ow * g.c);
        r += oy1 - oy;
      }
    });
    return Status::OK();
  }
  RunTasks(*node, tasks, [&](int task, int thread) {
    int32_t* acc = node->scratch32.data() + static_cast<size_t>(thread) * node->acc_slice;
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const int bi = static_cast<int>(r / g.oh), oy = static_cast<int>(r % g.oh);
      DepthwiseRowI8(g, x + bi * in_image, w, node->in_zp, oy, acc);
      int8_t* yr = y + static_cast<size_t>(r) * g.ow * g.c;
      if (!vnni) {
        RequantizeRows(*node, acc, g.ow, g.c, g.c, yr);
        continue;
      }
      for (int ox = 0; ox < g.ow; ++ox) {
        RequantizeVnni(acc + static_cast<size_t>(ox) * g.c, node->bias.data(),
                       node->multipliers.data(), node->shifts.data(), g.c, false, node->out_zp,
                       node->act_min, node->act_max, yr + static_cast<size_t>(ox) * g.c);
      }
    }
  });
  return Status::OK();
}

template <typename T>
Status EvalDepthwiseGeneric(NodeState* node,
                            void (*emit)(const NodeState&, T*, size_t, int, int32_t, float)) {
  const int rows = node->n * node->oh;
  const int tasks =
      TaskCount(*node, rows, static_cast<int64_t>(node->ow) * node->oc * node->kh * node->kw);
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    DepthwiseLoop<T>(*node, node->t.In<T>(0), node->t.In<T>(1), node->t.Out<T>(0), emit, r0, r1);
  });
  return Status::OK();
}

Status EvalDepthwiseF32(NodeState* node) { return EvalDepthwiseGeneric<float>(node, EmitF32); }

Status EvalDepthwiseI8(NodeState* node) { return EvalDepthwiseGeneric<int8_t>(node, EmitI8); }

}  // namespace

Status PrepareDepthwiseConv2D(NodeState* node) {
  const OperatorDef& op = *node->op;
  if (op.inputs.size() < 2 || op.inputs.size() > 3 || op.outputs.size() != 1 ||
      node->t.in[0] == nullptr || node->t.in[1] == nullptr) {
    return errors::InvalidArgument(node->what +
                                   ": expects inputs (input, filter[, bias]) and one output");
  }
  const TensorDef& w = *node->t.in[1];
  EMBER_RETURN_IF_ERROR(RequireConstant(*node, &w, "filter"));
  if (w.shape.size() != 4 || w.shape[0] != 1) {
    return errors::InvalidArgument(node->what + ": filter '" + w.name +
                                   "' must be [1, KH, KW, C*M], got " + ShapeString(w.shape));
  }
  EMBER_RETURN_IF_ERROR(PrepareSpatial(node, w.shape[1], w.shape[2], w.shape[3]));
  const int dm = op.options.depth_multiplier;
  if (dm < 1 || static_cast<int64_t>(node->ic) * dm != node->oc) {
    return errors::InvalidArgument(node->what + ": input depth " + std::to_string(node->ic) +
                                   " x depth_multiplier " + std::to_string(dm) +
                                   " must equal the filter's channels " + std::to_string(node->oc));
  }
  if (IsHybrid(*node)) return PrepareDepthwiseConv2DHybrid(node);
  EMBER_RETURN_IF_ERROR(PrepareWeighted(node, node->oc, node->kh * node->kw, false));
  const bool f32 = node->t.in[0]->type == TensorType::kFloat32;
  node->dw_expand = 1;
  if (dm != 1) {
    // Output channel c * M + m reads input channel c: with each input channel repeated M times,
    // the multiplier-1 rows apply (the reference's per-pixel loop ran 10x slower than LiteRT).
    const size_t values = static_cast<size_t>(node->n) * node->ih * node->iw * node->oc;
    if (values > (size_t{1} << 31)) {
      node->eval = f32 ? EvalDepthwiseF32 : EvalDepthwiseI8;
      return Status::OK();
    }
    node->dw_expand = dm;
    node->ic = node->oc;
    node->dw_input.assign(values * (f32 ? sizeof(float) : 1), 0);
  }
  return PrepareDepthwiseRows(node, reinterpret_cast<const int8_t*>(w.data));
}

namespace {

// The rest of a depth-multiplier-1 depthwise convolution's Prepare, once PrepareWeighted has
// run: `wd` is the int8 filter [KH*KW][C] (float ones are read from input 1 at Eval).
Status PrepareDepthwiseRows(NodeState* node, const int8_t* wd) {
  const bool f32 = node->t.in[0]->type == TensorType::kFloat32;
  node->eval = f32 ? EvalDepthwiseRowsF32 : EvalDepthwiseRowsI8;
  node->vnni = HasVnni() && DepthwiseAvx512Usable(Window(*node));
  node->dw_fused_avx2 = false;
  if (f32) return Status::OK();
  if (!node->vnni) {
    const DepthwiseRequant q = Requant(*node);
    node->dw_fused_avx2 =
        node->left_shift != 1 &&
        PackDepthwiseRowsI8Fused(Window(*node), wd, node->in_zp, q, &node->dw_fused);
    if (node->dw_fused_avx2) return Status::OK();  // no accumulators
    node->acc_slice = static_cast<size_t>(node->ow) * node->oc;
    node->scratch32.assign(node->acc_slice * static_cast<size_t>(node->threads), 0);
    return Status::OK();
  }
  const WindowGeometry g = Window(*node);
  if (Depthwise3x3VnniUsable(g) && node->in_zp >= -128 && node->in_zp <= 127) {
    // 3x3, dilated or not: VPDPBUSD over rows of 4-byte groups (depthwise.h).
    node->dw3_vnni = true;
    PackDepthwise3x3Vnni(wd, node->bias.data(), node->oc, node->in_zp, &node->dw3);
    node->scratch_slice = (Depthwise3x3VnniScratch(g) + 63) / 64 * 64;
    node->scratchu8.assign(node->scratch_slice * static_cast<size_t>(node->threads), 0);
    return Status::OK();
  }
  if (DepthwiseKxKVnniUsable(g) && node->in_zp >= -128 && node->in_zp <= 127) {
    // Other sizes up to 8x8 (5x5 above all): VPDPBUSD over rows of 4-byte groups of four rows.
    node->dwk_vnni = true;
    PackDepthwiseKxKVnni(wd, node->bias.data(), node->kh, node->kw, node->oc, node->in_zp,
                         &node->dwk);
    node->scratch_slice = (DepthwiseKxKVnniScratch(g) + 63) / 64 * 64;
    node->scratchu8.assign(node->scratch_slice * static_cast<size_t>(node->threads), 0);
    return Status::OK();
  }
  // The AVX-512 row reads int32 weights, [taps][channels rounded up to 16].
  const size_t taps = static_cast<size_t>(node->kh) * node->kw;
  const size_t cpad = static_cast<size_t>((node->oc + 15) / 16 * 16);
  node->scratch32.assign(taps * cpad, 0);
  for (size_t t = 0; t < taps; ++t) {
    for (int c = 0; c < node->oc; ++c) {
      node->scratch32[t * cpad + static_cast<size_t>(c)] =
          wd[t * node->oc + static_cast<size_t>(c)];
    }
  }
  return Status::OK();
}

// Output rows [r0, r1) (of n * oh) of a grouped convolution: output channel o reads the cg
// input channels of its group, o / (oc / groups). The sums run in TFLite's reference order
// (filter row, column, then input channel), so float results are its results; int8 sums are
// exact integers.
template <typename T>
void GroupedConvRows(const NodeState& node, int cg, const T* x, const T* w, T* y,
                     void (*emit)(const NodeState&, T*, size_t, int, int32_t, float), int64_t r0,
                     int64_t r1) {
  const OpOptions& o = node.op->options;
  const int og = node.oc / (node.ic / cg);
  const size_t filter_size = static_cast<size_t>(node.kh) * node.kw * cg;
  for (int64_t r = r0; r < r1; ++r) {
    const int b = static_cast<int>(r / node.oh), oy = static_cast<int>(r % node.oh);
    const int iy0 = oy * o.stride_h - node.pad_h;
    for (int ox = 0; ox < node.ow; ++ox) {
      const int ix0 = ox * o.stride_w - node.pad_w;
      const size_t obase = ((static_cast<size_t>(b) * node.oh + oy) * node.ow + ox) * node.oc;
      for (int oc = 0; oc < node.oc; ++oc) {
        const int c0 = oc / og * cg;
        const T* wo = w + static_cast<size_t>(oc) * filter_size;
        int32_t iacc = 0;
        float facc = 0.0f;
        for (int ky = 0; ky < node.kh; ++ky) {
          const int iy = iy0 + ky * o.dilation_h;
          if (iy < 0 || iy >= node.ih) continue;
          for (int kx = 0; kx < node.kw; ++kx) {
            const int ix = ix0 + kx * o.dilation_w;
            if (ix < 0 || ix >= node.iw) continue;
            const T* xp =
                x + ((static_cast<size_t>(b) * node.ih + iy) * node.iw + ix) * node.ic + c0;
            const T* wp = wo + (static_cast<size_t>(ky) * node.kw + kx) * cg;
            for (int i = 0; i < cg; ++i) {
              if constexpr (sizeof(T) == 1) {
                iacc += static_cast<int32_t>(wp[i]) * (static_cast<int32_t>(xp[i]) - node.in_zp);
              } else {
                facc += xp[i] * wp[i];
              }
            }
          }
        }
        emit(node, y, obase + static_cast<size_t>(oc), oc, iacc, facc);
      }
    }
  }
}

template <typename T>
Status EvalGroupedConv(NodeState* node,
                       void (*emit)(const NodeState&, T*, size_t, int, int32_t, float)) {
  const int cg = node->t.in[1]->shape[3];
  const int rows = node->n * node->oh;
  const int tasks =
      TaskCount(*node, rows, static_cast<int64_t>(node->ow) * node->oc * node->kh * node->kw * cg);
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    GroupedConvRows<T>(*node, cg, node->t.In<T>(0), node->t.In<T>(1), node->t.Out<T>(0), emit, r0,
                       r1);
  });
  return Status::OK();
}

Status EvalGroupedConvF32(NodeState* node) { return EvalGroupedConv<float>(node, EmitF32); }

Status EvalGroupedConvI8(NodeState* node) { return EvalGroupedConv<int8_t>(node, EmitI8); }

Status PrepareGroupedConv2D(NodeState* node, int filter_depth) {
  const TensorDef& w = *node->t.in[1];
  if (filter_depth < 1 || node->ic % filter_depth != 0) {
    return errors::InvalidArgument(
        node->what + ": filter '" + w.name + "' has depth " + std::to_string(filter_depth) +
        ", which does not divide the input depth " + std::to_string(node->ic) +
        " (a grouped convolution's input depth is its groups times the filter depth)");
  }
  const int groups = node->ic / filter_depth;
  if (node->oc % groups != 0) {
    return errors::InvalidArgument(
        node->what + ": " + std::to_string(node->oc) + " output channels do not split into the " +
        std::to_string(groups) + " groups of input depth " + std::to_string(node->ic) +
        " / filter depth " + std::to_string(filter_depth));
  }
  EMBER_RETURN_IF_ERROR(
      PrepareWeighted(node, node->oc, node->kh * node->kw * filter_depth, /*rows_sum=*/false));
  const bool f32 = node->t.in[0]->type == TensorType::kFloat32;
  if (filter_depth != 1 || node->oc != node->ic) {
    node->eval = f32 ? EvalGroupedConvF32 : EvalGroupedConvI8;
    return Status::OK();
  }
  // One filter per input channel (ConvNeXt's 7x7 "depthwise" Conv2D(groups=C)): a depthwise
  // convolution of multiplier 1, run by its row kernels. Its filter is [C, KH, KW, 1] where
  // DEPTHWISE_CONV_2D's is [1, KH, KW, C]: the transposed copy kept here stands in for input 1,
  // which those kernels read (padded: the vector kernels may read a full register's width).
  const size_t taps = static_cast<size_t>(node->kh) * node->kw;
  const size_t c = static_cast<size_t>(node->oc);
  if (f32) {
    const float* wf = reinterpret_cast<const float*>(w.data);
    node->scratchf.assign(taps * c + 16, 0.0f);
    for (size_t t = 0; t < taps; ++t) {
      for (size_t o = 0; o < c; ++o) node->scratchf[t * c + o] = wf[o * taps + t];
    }
    node->t.in_data[1] = reinterpret_cast<uint8_t*>(node->scratchf.data());
    return PrepareDepthwiseRows(node, nullptr);
  }
  const int8_t* wi = reinterpret_cast<const int8_t*>(w.data);
  node->scratch8.assign(taps * c + 64, 0);
  for (size_t t = 0; t < taps; ++t) {
    for (size_t o = 0; o < c; ++o) node->scratch8[t * c + o] = wi[o * taps + t];
  }
  node->t.in_data[1] = reinterpret_cast<uint8_t*>(node->scratch8.data());
  return PrepareDepthwiseRows(node, node->scratch8.data());
}

}  // namespace

}  // namespace lite
}  // namespace ember
