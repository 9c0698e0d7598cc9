// Hybrid FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D: what TFLiteConverter's dynamic-range
// quantization (Optimize.DEFAULT without a representative dataset) makes of these ops. The
// weights are int8 (symmetric, per channel or per tensor), activations float32; at every Invoke
// the float input is quantized to int8 (per batch, or per row for FULLY_CONNECTED), the int8
// products are summed in int32 (exact), and each sum is scaled back to float by the input scale
// times the weight scale, then the float bias and activation are applied. The quantization and
// the float steps follow LiteRT's reference kernels operation by operation:
//
// - FULLY_CONNECTED (EvalHybridDense): rows quantized asymmetrically when the options'
//   asymmetric_quantize_inputs is set, else symmetrically; y = bias + float(sum) * (s_in * s_w).
// - CONV_2D with distinct channel scales, or grouped (EvalHybridPerChannel): the batch quantized
//   asymmetrically; y = float(sum) * s_w * s_in + bias.
// - CONV_2D with one scale (or all equal, EvalHybrid): the batch quantized symmetrically;
//   y = float(sum) * (s_in * s_w) + bias.
// - DEPTHWISE_CONV_2D (EvalHybridPerChannel): asymmetric; y = float(sum) * (s_w * s_in) + bias.
//
// Padding contributes nothing in LiteRT; here a padded tap reads the input zero point, whose
// product with (x - zero point) is the same zero. The quantization runs on the calling thread;
// the sums split over the threads as the float kernels do, each still one exact integer.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "lite/kernels.h"
#include "lite/loop_isa.h"

namespace ember {
namespace lite {

bool IsHybrid(const NodeState& node) {
  return node.t.in.size() >= 2 && node.t.in[0] != nullptr && node.t.in[1] != nullptr &&
         node.t.in[0]->type == TensorType::kFloat32 && node.t.in[1]->type == TensorType::kInt8;
}

namespace {

// acc[c] += w[c] * (x[c] - offset) for c < n: one depthwise tap over a pixel's channels.
EMBER_LOOP_BODY void DepthwiseTapBody(const int8_t* w, const int8_t* x, int n, int32_t offset,
                                      int32_t* acc) {
  for (int c = 0; c < n; ++c) acc[c] += static_cast<int32_t>(w[c]) * (x[c] - offset);
}

}  // namespace

EMBER_LOOP_FUNCTION(void, DepthwiseTapHybrid,
                    (const int8_t* w, const int8_t* x, int n, int32_t offset, int32_t* acc),
                    (w, x, n, offset, acc), DepthwiseTapBody)

namespace {

// std::round (half away from zero) of v clamped to [lo, hi], for |v| far below 2^23: v minus its
// truncation is exact, so this is the same integer, and unlike a call of roundf the loops that
// use it vectorize. NaN becomes lo.
inline int32_t RoundClamp(float v, float lo, float hi) {
  v = v > lo - 1.0f ? v : lo - 1.0f;
  v = v < hi + 1.0f ? v : hi + 1.0f;
  int32_t t = static_cast<int32_t>(v);
  const float frac = v - static_cast<float>(t);
  t += frac >= 0.5f ? 1 : 0;
  t -= frac <= -0.5f ? 1 : 0;
  const int32_t ilo = static_cast<int32_t>(lo), ihi = static_cast<int32_t>(hi);
  return t < ilo ? ilo : (t > ihi ? ihi : t);
}

// The least and greatest of x[0, n), n > 0 (std::minmax_element's values).
void MinMax(const float* x, size_t n, float* lo, float* hi) {
  float a = x[0], b = x[0];
  for (size_t i = 1; i < n; ++i) {
    a = x[i] < a ? x[i] : a;
    b = x[i] > b ? x[i] : b;
  }
  *lo = a;
  *hi = b;
}

// LiteRT's AsymmetricQuantizeFloats: [min(0, min x), max(0, max x)] onto [-128, 127], the zero
// point nudged to an integer. As LiteRT 2.3 measures (4000 rows of its scaling factors), the
// range is one float subtraction, then scale and zero point are computed in double precision;
// the scale is used as a float.
void QuantizeAsymmetric(const float* x, size_t n, int8_t* q, float* scale, int32_t* offset) {
  float lo = 0.0f, hi = 0.0f;
  if (n > 0) {
    MinMax(x, n, &lo, &hi);
    lo = std::min(0.0f, lo);
    hi = std::max(0.0f, hi);
  }
  if (lo == hi) {
    std::memset(q, 0, n);
    *scale = 1.0f;
    *offset = 0;
    return;
  }
  const double rmin = lo, rmax = hi;
  const double qmin = -128.0, qmax = 127.0;
  const double s = static_cast<double>(hi - lo) / (qmax - qmin);
  const double from_min = qmin - rmin / s;
  const double from_max = qmax - rmax / s;
  const double err_min = std::abs(qmin) + std::abs(rmin / s);
  const double err_max = std::abs(qmax) + std::abs(rmax / s);
  const double zp = err_min < err_max ? from_min : from_max;
  int32_t nudged;
  if (!(zp > qmin)) {  // also NaN (an infinite input)
    nudged = -128;
  } else if (zp >= qmax) {
    nudged = 127;
  } else {
    nudged = static_cast<int32_t>(std::round(zp));
  }
  *scale = static_cast<float>(s);
  *offset = nudged;
  const float inv = 1.0f / *scale;
  const float off = static_cast<float>(nudged);
  for (size_t i = 0; i < n; ++i)
    q[i] = static_cast<int8_t>(RoundClamp(off + x[i] * inv, -128, 127));
}

// LiteRT's SymmetricQuantizeFloats: [-max |x|, max |x|] onto [-127, 127], zero point 0.
void QuantizeSymmetric(const float* x, size_t n, int8_t* q, float* scale) {
  float lo = 0.0f, hi = 0.0f;
  if (n > 0) MinMax(x, n, &lo, &hi);
  const float range = std::max(std::abs(lo), std::abs(hi));
  if (range == 0.0f) {
    std::memset(q, 0, n);
    *scale = 1.0f;
    return;
  }
  *scale = range / 127.0f;
  const float inv = 127.0f / range;
  for (size_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(RoundClamp(x[i] * inv, -127, 127));
}

// Quantizes `batches` runs of `size` floats into node->hybrid (q, in_scale, in_offset).
void QuantizeInput(NodeState* node, const float* x, int64_t batches, size_t size) {
  HybridParams& h = node->hybrid;
  for (int64_t b = 0; b < batches; ++b) {
    const size_t at = static_cast<size_t>(b) * size;
    if (h.asymmetric) {
      QuantizeAsymmetric(x + at, size, h.q.data() + at, &h.in_scale[static_cast<size_t>(b)],
                         &h.in_offset[static_cast<size_t>(b)]);
    } else {
      QuantizeSymmetric(x + at, size, h.q.data() + at, &h.in_scale[static_cast<size_t>(b)]);
      h.in_offset[static_cast<size_t>(b)] = 0;
    }
  }
}

// sum - row_sum * offset, wrapping as LiteRT's int32 arithmetic would.
inline int32_t Centered(int32_t sum, int32_t row_sum, int32_t offset) {
  return static_cast<int32_t>(static_cast<uint32_t>(sum) -
                              static_cast<uint32_t>(row_sum) * static_cast<uint32_t>(offset));
}

inline float Clamp(const NodeState& node, float v) {
  return std::max(node.f_min, std::min(node.f_max, v));
}

// Checks the weights' quantization and the bias, and fills weight_scale and row_sums. Scales:
// one, or one per output channel along `channel_dim`; `per_tensor_ok` allows a single scale.
Status PrepareHybridWeights(NodeState* node, int out_channels, int channel_dim,
                            bool per_tensor_ok) {
  const TensorDef& w = *node->t.in[1];
  const TensorDef* b = node->t.in.size() > 2 ? node->t.in[2] : nullptr;
  const TensorDef& out = *node->t.out[0];
  if (w.data == nullptr) {
    return errors::Unimplemented(node->what + ": weights '" + w.name + "' must be a constant");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, TensorType::kFloat32, "output"));
  const QuantizationDef& q = w.quant;
  if (q.scale.empty()) {
    return errors::InvalidArgument(node->what + ": int8 weights '" + w.name +
                                   "' of a float input have no quantization scale");
  }
  if (q.zero_point.size() != q.scale.size()) {
    return errors::InvalidArgument(node->what + ": int8 weights '" + w.name + "' have " +
                                   std::to_string(q.scale.size()) + " scales but " +
                                   std::to_string(q.zero_point.size()) + " zero points");
  }
  for (int64_t z : q.zero_point) {
    if (z != 0) {
      return errors::InvalidArgument(node->what + ": int8 weights '" + w.name +
                                     "' must be symmetric (zero point 0), got " +
                                     std::to_string(z));
    }
  }
  const size_t n = static_cast<size_t>(out_channels);
  const bool per_channel = q.scale.size() > 1 || !per_tensor_ok;
  if (per_channel && (q.scale.size() != n || q.quantized_dimension != channel_dim)) {
    return errors::InvalidArgument(node->what + ": int8 weights '" + w.name + "' have " +
                                   std::to_string(q.scale.size()) + " scales along dimension " +
                                   std::to_string(q.quantized_dimension) + "; expected " +
                                   (per_tensor_ok ? "1 or " : "") + std::to_string(out_channels) +
                                   " along dimension " + std::to_string(channel_dim));
  }
  HybridParams& h = node->hybrid;
  h.weight_scale.assign(n, q.scale[0]);
  if (q.scale.size() > 1) h.weight_scale.assign(q.scale.begin(), q.scale.end());
  if (b != nullptr) {
    EMBER_RETURN_IF_ERROR(CheckType(*node, *b, TensorType::kFloat32, "bias"));
    if (b->num_elements != n) {
      return errors::InvalidArgument(node->what + ": bias '" + b->name + "' has " +
                                     std::to_string(b->num_elements) + " elements, expected " +
                                     std::to_string(out_channels));
    }
  }
  FloatActivationRange(node->op->options.activation, &node->f_min, &node->f_max);
  return Status::OK();
}

// Sums of each output channel's weights, `k` consecutive int8 values per channel.
void RowSums(const int8_t* w, int channels, int64_t k, std::vector<int32_t>* sums) {
  sums->assign(static_cast<size_t>(channels), 0);
  for (int c = 0; c < channels; ++c) {
    uint32_t s = 0;
    for (int64_t i = 0; i < k; ++i) s += static_cast<uint32_t>(static_cast<int32_t>(w[c * k + i]));
    (*sums)[static_cast<size_t>(c)] = static_cast<int32_t>(s);
  }
}

const float* BiasData(const NodeState& node) {
  return node.t.in.size() > 2 && node.t.in[2] != nullptr ? node.t.In<float>(2) : nullptr;
}

// y = bias + float(sum) * (input scale * weight scale) for the columns [c0, c1) of row r, from
// acc[c] = the row's int8 sum for column c plus `shift` times the column's weight sum.
void EmitFullyConnectedHybrid(const NodeState& node, int64_t r, int64_t c0, int64_t c1,
                              const int32_t* acc, uint32_t shift, float* y) {
  const HybridParams& h = node.hybrid;
  const float* bias = BiasData(node);
  const float s_in = h.in_scale[static_cast<size_t>(r)];
  for (int64_t o = c0; o < c1; ++o) {
    const size_t c = static_cast<size_t>(o);
    const int32_t sum = static_cast<int32_t>(static_cast<uint32_t>(acc[c]) -
                                             shift * static_cast<uint32_t>(h.row_sums[c]));
    const float scale = s_in * h.weight_scale[c];
    const float v = (bias != nullptr ? bias[c] : 0.0f) + static_cast<float>(sum) * scale;
    y[r * node.oc + o] = Clamp(node, v);
  }
}

Status EvalFullyConnectedHybrid(NodeState* node) {
  QuantizeInput(node, node->t.In<float>(0), node->outer, static_cast<size_t>(node->inner));
  const HybridParams& h = node->hybrid;
  float* y = node->t.Out<float>(0);
  RunFullyConnectedInt8(
      node, h.q.data(), [&](int64_t r, int64_t c0, int64_t c1, const int32_t* acc, bool vnni) {
        // The VNNI rows went in as unsigned bytes: 128 more per weight.
        const uint32_t off = static_cast<uint32_t>(h.in_offset[static_cast<size_t>(r)]);
        EmitFullyConnectedHybrid(*node, r, c0, c1, acc, vnni ? 128u + off : off, y);
      });
  return Status::OK();
}

// One output row (batch b, row oy) of a CONV_2D, any groups: each pixel's patch of kh x kw x
// filter depth quantized values per group (the zero point where a tap is padding), then the
// group's filters dotted with it.
void ConvHybridRow(const NodeState& node, int b, int oy, int8_t* patch, int32_t* acc, float* y) {
  const HybridParams& h = node.hybrid;
  const OpOptions& o = node.op->options;
  const TensorDef& w = *node.t.in[1];
  const int fd = w.shape[3];
  const int groups = node.ic / fd;
  const int per_group = node.oc / groups;
  const int k = node.kh * node.kw * fd;
  const int8_t* wd = node.t.In<int8_t>(1);
  const int8_t* q = h.q.data() + static_cast<size_t>(b) * node.ih * node.iw * node.ic;
  const int32_t off = h.in_offset[static_cast<size_t>(b)];
  const float s_in = h.in_scale[static_cast<size_t>(b)];
  const float* bias = BiasData(node);
  const int8_t pad = static_cast<int8_t>(off);
  for (int ox = 0; ox < node.ow; ++ox) {
    for (int g = 0; g < groups; ++g) {
      int8_t* p = patch;
      for (int ky = 0; ky < node.kh; ++ky) {
        const int iy = oy * o.stride_h - node.pad_h + ky * o.dilation_h;
        for (int kx = 0; kx < node.kw; ++kx, p += fd) {
          const int ix = ox * o.stride_w - node.pad_w + kx * o.dilation_w;
          if (iy < 0 || iy >= node.ih || ix < 0 || ix >= node.iw) {
            std::memset(p, pad, static_cast<size_t>(fd));
          } else {
            std::memcpy(p, q + (static_cast<size_t>(iy) * node.iw + ix) * node.ic + g * fd,
                        static_cast<size_t>(fd));
          }
        }
      }
      DotRowsInt8(wd + static_cast<size_t>(g) * per_group * k, per_group, patch, k,
                  acc + g * per_group);
    }
    float* out = y + (static_cast<size_t>(oy) * node.ow + ox) * node.oc;
    for (int c = 0; c < node.oc; ++c) {
      const size_t cc = static_cast<size_t>(c);
      const float sum = static_cast<float>(Centered(acc[c], h.row_sums[cc], off));
      // The reference's order of float operations (see the top of the file).
      float v = h.per_channel ? sum * h.weight_scale[cc] * s_in : sum * (s_in * h.weight_scale[0]);
      if (bias != nullptr) v += bias[c];
      out[c] = Clamp(node, v);
    }
  }
}

// ConvHybridRow on CPUs with AVX-512 VNNI (groups of 1): the row's patches as unsigned bytes
// (q + 128) in `rows`, multiplied by the packed weights in one GEMM; 128 + the zero point times
// the channel's weight sum comes off each sum, which leaves the same integer.
void ConvHybridRowVnni(const NodeState& node, int b, int oy, uint8_t* rows, int32_t* acc,
                       float* y) {
  const HybridParams& h = node.hybrid;
  const OpOptions& o = node.op->options;
  const PackedWeights& p = node.packed;
  const int stride = p.k4 * 4, ld = p.nb * 16, ic = node.ic;
  const int8_t* q = h.q.data() + static_cast<size_t>(b) * node.ih * node.iw * ic;
  const int32_t off = h.in_offset[static_cast<size_t>(b)];
  const float s_in = h.in_scale[static_cast<size_t>(b)];
  const float* bias = BiasData(node);
  const uint8_t pad = static_cast<uint8_t>(static_cast<uint8_t>(static_cast<int8_t>(off)) ^ 0x80u);
  for (int ox = 0; ox < node.ow; ++ox) {
    uint8_t* r = rows + static_cast<size_t>(ox) * stride;
    for (int ky = 0; ky < node.kh; ++ky) {
      const int iy = oy * o.stride_h - node.pad_h + ky * o.dilation_h;
      for (int kx = 0; kx < node.kw; ++kx, r += ic) {
        const int ix = ox * o.stride_w - node.pad_w + kx * o.dilation_w;
        if (iy < 0 || iy >= node.ih || ix < 0 || ix >= node.iw) {
          std::memset(r, pad, static_cast<size_t>(ic));
        } else {
          const int8_t* src = q + (static_cast<size_t>(iy) * node.iw + ix) * ic;
          for (int c = 0; c < ic; ++c) r[c] = static_cast<uint8_t>(src[c]) ^ 0x80u;
        }
      }
    }
  }
  GemmVnni(rows, node.ow, stride, p, acc, ld);
  const uint32_t shift = 128u + static_cast<uint32_t>(off);
  for (int ox = 0; ox < node.ow; ++ox) {
    const int32_t* a = acc + static_cast<size_t>(ox) * ld;
    float* out = y + (static_cast<size_t>(oy) * node.ow + ox) * node.oc;
    for (int c = 0; c < node.oc; ++c) {
      const size_t cc = static_cast<size_t>(c);
      const float sum = static_cast<float>(static_cast<int32_t>(
          static_cast<uint32_t>(a[c]) - shift * static_cast<uint32_t>(h.row_sums[cc])));
      float v = h.per_channel ? sum * h.weight_scale[cc] * s_in : sum * (s_in * h.weight_scale[0]);
      if (bias != nullptr) v += bias[c];
      out[c] = Clamp(node, v);
    }
  }
}

Status EvalConvHybrid(NodeState* node) {
  const size_t image = static_cast<size_t>(node->ih) * node->iw * node->ic;
  QuantizeInput(node, node->t.In<float>(0), node->n, image);
  float* y = node->t.Out<float>(0);
  const int rows = node->n * node->oh;
  const int64_t k = static_cast<int64_t>(node->kh) * node->kw * node->t.in[1]->shape[3];
  const int tasks = TaskCount(*node, rows, int64_t{node->ow} * node->oc * k);
  RunTasks(*node, tasks, [&](int task, int thread) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    int32_t* acc = node->scratch32.data() + static_cast<size_t>(thread) * node->acc_slice;
    for (int64_t r = r0; r < r1; ++r) {
      const int b = static_cast<int>(r / node->oh), oy = static_cast<int>(r % node->oh);
      float* yb = y + static_cast<size_t>(b) * node->oh * node->ow * node->oc;
      if (node->vnni) {
        ConvHybridRowVnni(
            *node, b, oy,
            node->scratchu8.data() + static_cast<size_t>(thread) * node->scratch_slice, acc, yb);
      } else {
        ConvHybridRow(*node, b, oy,
                      node->scratch8.data() + static_cast<size_t>(thread) * node->scratch_slice,
                      acc, yb);
      }
    }
  });
  return Status::OK();
}

Status EvalDepthwiseHybrid(NodeState* node) {
  const size_t image = static_cast<size_t>(node->ih) * node->iw * node->ic;
  QuantizeInput(node, node->t.In<float>(0), node->n, image);
  const HybridParams& h = node->hybrid;
  const OpOptions& o = node->op->options;
  const int dm = o.depth_multiplier, oc = node->oc;
  const int8_t* wd = node->t.In<int8_t>(1);
  const float* bias = BiasData(*node);
  float* y = node->t.Out<float>(0);
  const int rows = node->n * node->oh;
  const int tasks = TaskCount(*node, rows, int64_t{node->ow} * oc * node->kh * node->kw);
  RunTasks(*node, tasks, [&](int task, int thread) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    int32_t* acc = node->scratch32.data() + static_cast<size_t>(thread) * node->acc_slice;
    for (int64_t r = r0; r < r1; ++r) {
      const int b = static_cast<int>(r / node->oh), oy = static_cast<int>(r % node->oh);
      const int8_t* q = h.q.data() + static_cast<size_t>(b) * image;
      const int32_t off = h.in_offset[static_cast<size_t>(b)];
      const float s_in = h.in_scale[static_cast<size_t>(b)];
      for (int ox = 0; ox < node->ow; ++ox) {
        std::fill(acc, acc + oc, 0);
        for (int ky = 0; ky < node->kh; ++ky) {
          const int iy = oy * o.stride_h - node->pad_h + ky * o.dilation_h;
          if (iy < 0 || iy >= node->ih) continue;
          for (int kx = 0; kx < node->kw; ++kx) {
            const int ix = ox * o.stride_w - node->pad_w + kx * o.dilation_w;
            if (ix < 0 || ix >= node->iw) continue;
            const int8_t* x = q + (static_cast<size_t>(iy) * node->iw + ix) * node->ic;
            const int8_t* wt = wd + (static_cast<size_t>(ky) * node->kw + kx) * oc;
            if (dm == 1) {
              DepthwiseTapHybrid(wt, x, oc, off, acc);
            } else {
              for (int c = 0; c < oc; ++c) acc[c] += wt[c] * (x[c / dm] - off);
            }
          }
        }
        float* out = y + ((static_cast<size_t>(b) * node->oh + oy) * node->ow + ox) * oc;
        for (int c = 0; c < oc; ++c) {
          const size_t cc = static_cast<size_t>(c);
          float v = static_cast<float>(acc[c]) * (h.weight_scale[cc] * s_in);
          if (bias != nullptr) v += bias[c];
          out[c] = Clamp(*node, v);
        }
      }
    }
  });
  return Status::OK();
}

// Scratch shared by the conv kernels: the quantized input and its per-batch parameters.
void SizeInputScratch(NodeState* node, size_t elements, int64_t batches) {
  HybridParams& h = node->hybrid;
  h.q.assign(elements, 0);
  h.in_scale.assign(static_cast<size_t>(batches), 0.0f);
  h.in_offset.assign(static_cast<size_t>(batches), 0);
}

}  // namespace

Status PrepareFullyConnectedHybrid(NodeState* node) {
  const int n = node->oc;
  EMBER_RETURN_IF_ERROR(PrepareHybridWeights(node, n, 0, true));
  HybridParams& h = node->hybrid;
  h.asymmetric = node->op->options.asymmetric_quantize_inputs;
  RowSums(reinterpret_cast<const int8_t*>(node->t.in[1]->data), n, node->inner, &h.row_sums);
  SizeInputScratch(node, node->t.in[0]->num_elements, node->outer);
  node->vnni = HasVnni();
  if (node->vnni) {
    PackedWeights& p = node->packed;
    PackWeightsVnni(reinterpret_cast<const int8_t*>(node->t.in[1]->data), n,
                    static_cast<int>(node->inner), GroupBlocks(n, FcRowBlock(*node) == 1), &p);
    node->scratchu8.assign(static_cast<size_t>(node->outer) * p.k4 * 4, 0);
    // RunFullyConnectedInt8's sums: FcRowBlock rows of them.
    node->acc_slice = static_cast<size_t>(p.nb) * 16 * static_cast<size_t>(FcRowBlock(*node));
  } else {
    PrepareFullyConnectedNoVnni(node, reinterpret_cast<const int8_t*>(node->t.in[1]->data), n,
                                static_cast<int>(node->inner));
  }
  node->scratch32.assign(node->acc_slice * static_cast<size_t>(node->threads), 0);
  node->eval = EvalFullyConnectedHybrid;
  return Status::OK();
}

Status PrepareConv2DHybrid(NodeState* node) {
  const TensorDef& w = *node->t.in[1];
  const int fd = w.shape[3];
  if (fd < 1 || node->ic % fd != 0 || node->oc % (node->ic / fd) != 0) {
    return errors::InvalidArgument(node->what + ": filter depth " + std::to_string(fd) +
                                   " must divide the input depth " + std::to_string(node->ic) +
                                   " into groups that divide the " + std::to_string(node->oc) +
                                   " output channels");
  }
  EMBER_RETURN_IF_ERROR(PrepareHybridWeights(node, node->oc, 0, true));
  HybridParams& h = node->hybrid;
  // LiteRT takes the per-channel kernel (asymmetric inputs) when the channel scales differ or
  // the conv is grouped, else the per-tensor one (symmetric inputs, scales folded first).
  h.per_channel = node->ic != fd;
  if (h.per_channel && w.quant.scale.size() == 1 && node->oc > 1) {
    // LiteRT's grouped hybrid conv reads one scale per output channel.
    return errors::Unimplemented(node->what +
                                 ": grouped hybrid CONV_2D needs one weight scale "
                                 "per output channel; weights '" +
                                 w.name + "' have one");
  }
  for (float s : h.weight_scale) h.per_channel = h.per_channel || s != h.weight_scale[0];
  h.asymmetric = h.per_channel;
  const int64_t k = static_cast<int64_t>(node->kh) * node->kw * fd;
  RowSums(reinterpret_cast<const int8_t*>(w.data), node->oc, k, &h.row_sums);
  SizeInputScratch(node, node->t.in[0]->num_elements, node->n);
  const size_t threads = static_cast<size_t>(node->threads);
  node->vnni = HasVnni() && node->ic == fd;
  if (node->vnni) {
    // One output row's patches (rows of k4 4-byte groups; the bytes past k stay 0) per thread.
    PackedWeights& p = node->packed;
    PackWeightsVnni(reinterpret_cast<const int8_t*>(w.data), node->oc, static_cast<int>(k),
                    GroupBlocks(node->oc, false), &p);
    node->scratch_slice = (static_cast<size_t>(node->ow) * p.k4 * 4 + 63) / 64 * 64;
    node->scratchu8.assign(node->scratch_slice * threads, 0);
    node->acc_slice = static_cast<size_t>(node->ow) * p.nb * 16;
  } else {
    node->scratch_slice = static_cast<size_t>((k + 63) / 64 * 64);
    node->scratch8.assign(node->scratch_slice * threads, 0);
    node->acc_slice = static_cast<size_t>(node->oc);
  }
  node->scratch32.assign(node->acc_slice * threads, 0);
  node->eval = EvalConvHybrid;
  return Status::OK();
}

Status PrepareDepthwiseConv2DHybrid(NodeState* node) {
  // LiteRT's hybrid depthwise kernel is per channel only: one scale per output channel.
  EMBER_RETURN_IF_ERROR(PrepareHybridWeights(node, node->oc, 3, node->oc == 1));
  HybridParams& h = node->hybrid;
  h.asymmetric = true;
  h.per_channel = true;
  SizeInputScratch(node, node->t.in[0]->num_elements, node->n);
  node->acc_slice = static_cast<size_t>(node->oc);
  node->scratch32.assign(node->acc_slice * static_cast<size_t>(node->threads), 0);
  node->eval = EvalDepthwiseHybrid;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
