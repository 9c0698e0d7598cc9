// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR as LiteRT's reference kernels compute them
// (tflite/kernels/resize_bilinear.cc, resize_nearest_neighbor.cc and internal/reference/
// resize_bilinear.h, resize_nearest_neighbor.h): float bilinear in float arithmetic, int8 bilinear
// in the 10-bit fixed point of ResizeBilinearInteger (weights in 1/1024 steps, the 20-bit sum
// rounded half away from zero), nearest neighbour as element copies (any 1-byte or 4-byte type).
// The output shape is the model's; a size input that is not constant is checked against it
// when the operator runs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_misc.h"
#include "lite/loop_isa.h"

namespace ember {
namespace lite {
namespace {

constexpr int32_t kOne10 = 1 << 10;

// The requested [height, width] when it matches the output tensor; an error naming the operator
// otherwise. Bilinear needs positive sizes (LiteRT: "size_data[0] > 0").
Status CheckSize(const NodeState& node, const int32_t* size, bool positive) {
  const int32_t lo = positive ? 1 : 0;
  if (size[0] < lo || size[1] < lo) {
    return errors::InvalidArgument(node.what + ": size [" + std::to_string(size[0]) + "," +
                                   std::to_string(size[1]) + "] must be " +
                                   (positive ? "positive" : "non-negative"));
  }
  const std::vector<int32_t>& out = node.t.out[0]->shape;
  if (out[1] != size[0] || out[2] != size[1]) {
    return errors::InvalidArgument(node.what + ": size [" + std::to_string(size[0]) + "," +
                                   std::to_string(size[1]) + "] does not match the output '" +
                                   node.t.out[0]->name + "' of shape " + ShapeString(out));
  }
  return Status::OK();
}

Status CheckRunTimeSize(const NodeState& node) {
  if (node.t.in[1]->data != nullptr) return Status::OK();  // checked in Prepare
  return CheckSize(node, node.t.In<int32_t>(1), node.op->op == BuiltinOp::kResizeBilinear);
}

float Scale(int in, int out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

// Where each output row and column of a bilinear resize reads: source indices lo and hi and
// the weight of hi, in float (the float kernel) and in 1/1024 steps (ResizeBilinearInteger, the
// int8 kernel). Made once at Prepare, ow entries for the columns then oh for the rows: lo, hi
// and w10 in NodeState::scratch32 (kLerpInts each), frac in scratchf.
struct Lerp {
  int32_t lo, hi;
  float frac;
  int32_t w10;
};
constexpr size_t kLerpInts = 3;

Lerp LoadLerp(const NodeState& node, size_t i) {
  const int32_t* v = node.scratch32.data() + i * kLerpInts;
  return {v[0], v[1], node.scratchf[i], v[2]};
}

Lerp MakeLerp(int i, int in_size, int out_size, bool align_corners, bool half_pixel, bool int8) {
  Lerp l{};
  const int32_t last = static_cast<int32_t>(in_size - 1);
  if (!int8) {
    const float v = static_cast<float>(i), scale = Scale(in_size, out_size, align_corners);
    const float pos = half_pixel ? (v + 0.5f) * scale - 0.5f : v * scale;
    l.lo = std::max(static_cast<int32_t>(std::floor(pos)), int32_t{0});
    l.hi = std::min(static_cast<int32_t>(std::ceil(pos)), last);
    l.frac = pos - static_cast<float>(l.lo);
    return l;
  }
  const int32_t scale10 = align_corners && out_size > 1
                              ? (kOne10 * (in_size - 1) + (out_size - 1) / 2) / (out_size - 1)
                              : (kOne10 * in_size + out_size / 2) / out_size;
  const int32_t pos = half_pixel ? i * scale10 + scale10 / 2 - (1 << 9) : i * scale10;
  // C++ division truncates toward zero, as the reference's does (pos can be just below 0).
  l.lo = std::max(pos / kOne10, int32_t{0});
  l.hi = std::min((pos + kOne10 - 1) / kOne10, last);
  l.w10 = pos - kOne10 * l.lo;
  return l;
}

// The int8 kernel, by rows: the reference's weighted sum w00 p00 + w01 p01 + w10 p10 + w11 p11
// (10-bit weights per axis, w_ij = wy_i * wx_j; it sums in int64) is wy0 h0 + wy1 h1, h_i the
// input row's horizontal blend p_i0 wx0 + p_i1 wx1: the same integers, exact in 32-bit lanes
// (a half-pixel weight lies in [-512, 1536], so |h| <= 128 * 2048 and the sum stays below 2^30),
// rounded half away from zero to 20 bits less. Each input row's h is made once per run of output
// rows that reads it (twice per input row when doubling) and each output takes two products, not
// four (a per-pixel blend of the four neighbours took 75.6 us on 28x28x64 doubled, 1.4x
// XNNPACK's time; by rows 35.9 us).

// h[x * c + k] for the ow output columns of one input row (the column lerps from scratch32).
EMBER_LOOP_BODY void HorizontalI8Body(const int8_t* row, const int32_t* lerps, int ow, int c,
                                      int32_t* h) {
  for (int x = 0; x < ow; ++x, h += c) {
    const int32_t* l = lerps + static_cast<size_t>(x) * 3;
    const int8_t* p0 = row + static_cast<size_t>(l[0]) * static_cast<size_t>(c);
    const int8_t* p1 = row + static_cast<size_t>(l[1]) * static_cast<size_t>(c);
    const int32_t w1 = l[2], w0 = kOne10 - w1;
    for (int k = 0; k < c; ++k) h[k] = p0[k] * w0 + p1[k] * w1;
  }
}
EMBER_LOOP_FUNCTION(void, HorizontalI8,
                    (const int8_t* row, const int32_t* lerps, int ow, int c, int32_t* h),
                    (row, lerps, ow, c, h), HorizontalI8Body)

// One output row from its two input rows' h: rounded half away from zero to 20 bits less.
EMBER_LOOP_BODY void VerticalI8Body(const int32_t* h0, const int32_t* h1, size_t n, int32_t wy0,
                                    int32_t wy1, int8_t* dst) {
  for (size_t i = 0; i < n; ++i) {
    const int32_t sum = h0[i] * wy0 + h1[i] * wy1;
    const int32_t round = sum > 0 ? (1 << 19) : -(1 << 19);
    dst[i] = static_cast<int8_t>((sum + round) / (1 << 20));
  }
}
EMBER_LOOP_FUNCTION(void, VerticalI8,
                    (const int32_t* h0, const int32_t* h1, size_t n, int32_t wy0, int32_t wy1,
                     int8_t* dst),
                    (h0, h1, n, wy0, wy1, dst), VerticalI8Body)

// Output rows [r0, r1) of the int8 kernel by rows: two buffers of h, each kept while the next
// output row reads the same input row.
void BilinearRowsI8(const NodeState& node, int64_t r0, int64_t r1, std::vector<int32_t>* buffers) {
  const int c = node.ic, iw = node.iw, ih = node.ih, ow = node.ow, oh = node.oh;
  const size_t n = static_cast<size_t>(ow) * static_cast<size_t>(c);
  buffers->resize(2 * n);
  int32_t* h[2] = {buffers->data(), buffers->data() + n};
  int64_t key[2] = {-1, -1};  // the input row (batch * ih + row) each buffer holds
  const int8_t* in = node.t.In<int8_t>(0);
  int8_t* out = node.t.Out<int8_t>(0);
  // The buffer holding input row `want`, made in the one not holding `keep` when neither has it.
  const auto get = [&](int64_t want, int64_t keep) -> const int32_t* {
    for (int i = 0; i < 2; ++i) {
      if (key[i] == want) return h[i];
    }
    const int i = key[0] == keep ? 1 : 0;
    HorizontalI8(in + static_cast<size_t>(want) * static_cast<size_t>(iw) * static_cast<size_t>(c),
                 node.scratch32.data(), ow, c, h[i]);
    key[i] = want;
    return h[i];
  };
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / oh;
    const Lerp ly = LoadLerp(node, static_cast<size_t>(ow + r % oh));
    const int64_t lo = b * ih + ly.lo, hi = b * ih + ly.hi;
    const int32_t* h0 = get(lo, hi);
    const int32_t* h1 = get(hi, lo);
    VerticalI8(h0, h1, n, kOne10 - ly.w10, ly.w10, out + static_cast<size_t>(r) * n);
  }
}

// One float output pixel's c channels from its four neighbours p00 (lo row, lo column) ... p11,
// as the reference computes each: v * (1 - dy) * (1 - dx) + ... in that order, in a loop built
// for each ISA (the baseline's four-float vectors took 1.3x
// XNNPACK's time on 28x28x64 doubled).
EMBER_LOOP_BODY void BlendPixelF32Body(const float* p00, const float* p01, const float* p10,
                                       const float* p11, int c, float dy, float dx, float* dst) {
  for (int k = 0; k < c; ++k) {
    dst[k] = p00[k] * (1 - dy) * (1 - dx) + p10[k] * dy * (1 - dx) + p01[k] * (1 - dy) * dx +
             p11[k] * dy * dx;
  }
}
EMBER_LOOP_FUNCTION(void, BlendPixelF32,
                    (const float* p00, const float* p01, const float* p10, const float* p11, int c,
                     float dy, float dx, float* dst),
                    (p00, p01, p10, p11, c, dy, dx, dst), BlendPixelF32Body)

// Output rows over the node's threads.
Status EvalBilinearI8(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckRunTimeSize(*node));
  const int rows = node->n * node->oh;
  const int tasks = TaskCount(*node, rows, static_cast<int64_t>(node->ow) * node->ic * 8);
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    // Each thread's buffers, kept from one Invoke to the next (no allocation once grown).
    thread_local std::vector<int32_t> buffers;
    if (r0 < r1) BilinearRowsI8(*node, r0, r1, &buffers);
  });
  return Status::OK();
}

Status EvalBilinearF32(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckRunTimeSize(*node));
  const int c = node->ic, iw = node->iw, ih = node->ih, ow = node->ow, oh = node->oh;
  const float* in = node->t.In<float>(0);
  float* out = node->t.Out<float>(0);
  const int rows = node->n * oh;
  const int tasks = TaskCount(*node, rows, static_cast<int64_t>(ow) * c * 8);
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const int b = static_cast<int>(r / oh);
      const Lerp ly = LoadLerp(*node, static_cast<size_t>(ow + r % oh));
      const float* row0 = in + (static_cast<size_t>(b) * ih + ly.lo) * iw * c;
      const float* row1 = in + (static_cast<size_t>(b) * ih + ly.hi) * iw * c;
      float* dst = out + static_cast<size_t>(r) * ow * c;
      for (int x = 0; x < ow; ++x, dst += c) {
        const Lerp lx = LoadLerp(*node, static_cast<size_t>(x));
        BlendPixelF32(row0 + static_cast<size_t>(lx.lo) * c, row0 + static_cast<size_t>(lx.hi) * c,
                      row1 + static_cast<size_t>(lx.lo) * c, row1 + static_cast<size_t>(lx.hi) * c,
                      c, ly.frac, lx.frac, dst);
      }
    }
  });
  return Status::OK();
}

// ---- RESIZE_NEAREST_NEIGHBOR ----
int32_t Nearest(int i, int in_size, int out_size, bool align_corners, bool half_pixel) {
  const float scale = Scale(in_size, out_size, align_corners);
  const float v = (static_cast<float>(i) + (half_pixel ? 0.5f : 0.0f)) * scale;
  int32_t r = std::min(static_cast<int32_t>(align_corners ? std::round(v) : std::floor(v)),
                       static_cast<int32_t>(in_size - 1));
  if (half_pixel) r = std::max(r, int32_t{0});
  return r;
}

// The source column of each output column, then the source row of each output row, made at
// Prepare in scratch32.
Status EvalNearest(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckRunTimeSize(*node));
  const int ih = node->ih, iw = node->iw, oh = node->oh, ow = node->ow;
  const size_t px = static_cast<size_t>(node->ic) * TensorTypeSize(node->t.in[0]->type);
  const int32_t* xs = node->scratch32.data();
  const int32_t* ys = xs + ow;
  const uint8_t* in = node->t.in_data[0];
  uint8_t* dst = node->t.out_data[0];
  for (int b = 0; b < node->n; ++b) {
    for (int y = 0; y < oh; ++y) {
      const uint8_t* row = in + (static_cast<size_t>(b) * ih + ys[y]) * iw * px;
      for (int x = 0; x < ow; ++x, dst += px) {
        std::memcpy(dst, row + static_cast<size_t>(xs[x]) * px, px);
      }
    }
  }
  return Status::OK();
}

}  // namespace

Status PrepareResize(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  const bool bilinear = node->op->op == BuiltinOp::kResizeBilinear;
  const TensorDef& in = *node->t.in[0];
  const TensorDef& size = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  if (in.shape.size() != 4) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' has shape " +
                                   ShapeString(in.shape) + ", expected 4 dimensions (NHWC)");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, size, TensorType::kInt32, "size"));
  if (size.shape != std::vector<int32_t>{2}) {
    return errors::InvalidArgument(node->what + ": size '" + size.name + "' has shape " +
                                   ShapeString(size.shape) + ", expected [2]");
  }
  const OpOptions& o = node->op->options;
  if (bilinear && o.align_corners && o.half_pixel_centers) {
    return errors::InvalidArgument(node->what +
                                   ": if half_pixel_centers is True, align_corners must be False");
  }
  const TensorType t = in.type;
  const bool ok = t == TensorType::kFloat32 || t == TensorType::kInt8 ||
                  (!bilinear && (t == TensorType::kUInt8 || t == TensorType::kInt32));
  if (!ok) return misc::Unsupported(*node, t);
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, t, "output"));
  if (t == TensorType::kInt8 || t == TensorType::kUInt8) {
    // Neither kernel requantizes: the converter gives both sides one scale and zero point.
    if (in.quant.scale != out.quant.scale || in.quant.zero_point != out.quant.zero_point) {
      return errors::Unimplemented(node->what +
                                   ": input and output quantization differ (requantizing "
                                   "resizes are not supported)");
    }
  }
  if (out.shape.size() != 4 || out.shape[0] != in.shape[0] || out.shape[3] != in.shape[3]) {
    return CheckShape(*node, out, {in.shape[0], -1, -1, in.shape[3]}, "output");
  }
  if (size.data != nullptr) {
    EMBER_RETURN_IF_ERROR(CheckSize(*node, reinterpret_cast<const int32_t*>(size.data), bilinear));
  }
  if ((in.shape[1] == 0 || in.shape[2] == 0) && out.num_elements != 0) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' of shape " +
                                   ShapeString(in.shape) + " is empty");
  }
  node->n = in.shape[0];
  node->ih = in.shape[1];
  node->iw = in.shape[2];
  node->ic = in.shape[3];
  node->oh = out.shape[1];
  node->ow = out.shape[2];
  const bool ac = o.align_corners, hp = o.half_pixel_centers;
  if (!bilinear) {
    node->scratch32.resize(static_cast<size_t>(node->ow) + node->oh);
    for (int x = 0; x < node->ow; ++x) node->scratch32[x] = Nearest(x, node->iw, node->ow, ac, hp);
    for (int y = 0; y < node->oh; ++y) {
      node->scratch32[static_cast<size_t>(node->ow) + y] = Nearest(y, node->ih, node->oh, ac, hp);
    }
    node->eval = EvalNearest;
    return Status::OK();
  }
  const bool int8 = t == TensorType::kInt8;
  const size_t n = static_cast<size_t>(node->ow) + node->oh;
  node->scratch32.resize(n * kLerpInts);
  node->scratchf.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const bool col = i < static_cast<size_t>(node->ow);
    const int at = static_cast<int>(col ? i : i - node->ow);
    const Lerp l = col ? MakeLerp(at, node->iw, node->ow, ac, hp, int8)
                       : MakeLerp(at, node->ih, node->oh, ac, hp, int8);
    int32_t* v = node->scratch32.data() + i * kLerpInts;
    v[0] = l.lo;
    v[1] = l.hi;
    v[2] = l.w10;
    node->scratchf[i] = l.frac;
  }
  node->eval = int8 ? EvalBilinearI8 : EvalBilinearF32;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
