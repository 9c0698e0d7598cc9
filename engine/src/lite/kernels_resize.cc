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

// ---- RESIZE_BILINEAR, float ----
struct Lerp {
  float pos;  // source coordinate
  int32_t lo, hi;
};

Lerp FloatLerp(int i, float scale, bool half_pixel, int in_size) {
  Lerp l;
  const float v = static_cast<float>(i);
  l.pos = half_pixel ? (v + 0.5f) * scale - 0.5f : v * scale;
  l.lo = std::max(static_cast<int32_t>(std::floor(l.pos)), int32_t{0});
  l.hi = std::min(static_cast<int32_t>(std::ceil(l.pos)), static_cast<int32_t>(in_size - 1));
  return l;
}

Status EvalBilinearFloat(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckRunTimeSize(*node));
  const OpOptions& o = node->op->options;
  const int c = node->ic, iw = node->iw, ih = node->ih, ow = node->ow, oh = node->oh;
  const float sy = Scale(ih, oh, o.align_corners), sx = Scale(iw, ow, o.align_corners);
  std::vector<Lerp> xs(static_cast<size_t>(ow));
  for (int x = 0; x < ow; ++x) xs[x] = FloatLerp(x, sx, o.half_pixel_centers, iw);
  const float* in = node->t.In<float>(0);
  float* out = node->t.Out<float>(0);
  const int rows = node->n * oh;
  const int tasks = TaskCount(*node, rows, static_cast<int64_t>(ow) * c * 8);
  RunTasks(*node, tasks, [&](int task, int) {
    for (int r = rows * task / tasks; r < rows * (task + 1) / tasks; ++r) {
      const int b = r / oh, y = r % oh;
      const Lerp ly = FloatLerp(y, sy, o.half_pixel_centers, ih);
      const float dy = ly.pos - static_cast<float>(ly.lo);
      const float* row0 = in + (static_cast<size_t>(b) * ih + ly.lo) * iw * c;
      const float* row1 = in + (static_cast<size_t>(b) * ih + ly.hi) * iw * c;
      float* dst = out + static_cast<size_t>(r) * ow * c;
      for (int x = 0; x < ow; ++x) {
        const Lerp& lx = xs[x];
        const float dx = lx.pos - static_cast<float>(lx.lo);
        const float* p00 = row0 + static_cast<size_t>(lx.lo) * c;
        const float* p01 = row0 + static_cast<size_t>(lx.hi) * c;
        const float* p10 = row1 + static_cast<size_t>(lx.lo) * c;
        const float* p11 = row1 + static_cast<size_t>(lx.hi) * c;
        // The reference's expression and order: v * (1 - dy) * (1 - dx) + ...
        for (int k = 0; k < c; ++k) {
          dst[k] = p00[k] * (1 - dy) * (1 - dx) + p10[k] * dy * (1 - dx) + p01[k] * (1 - dy) * dx +
                   p11[k] * dy * dx;
        }
        dst += c;
      }
    }
  });
  return Status::OK();
}

// ---- RESIZE_BILINEAR, int8 (ResizeBilinearInteger) ----
struct Lerp10 {
  int32_t pos;  // source coordinate in 1/1024 steps
  int32_t lo, hi;
};

int32_t Scale10(int in, int out, bool align_corners) {
  if (align_corners && out > 1) return (kOne10 * (in - 1) + (out - 1) / 2) / (out - 1);
  return (kOne10 * in + out / 2) / out;
}

Lerp10 IntLerp(int i, int32_t scale10, bool half_pixel, int in_size) {
  Lerp10 l;
  l.pos = half_pixel ? i * scale10 + scale10 / 2 - (1 << 9) : i * scale10;
  // C++ division truncates toward zero, as the reference's does (pos can be just below 0).
  l.lo = std::max(l.pos / kOne10, int32_t{0});
  l.hi = std::min((l.pos + kOne10 - 1) / kOne10, static_cast<int32_t>(in_size - 1));
  return l;
}

Status EvalBilinearInt8(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckRunTimeSize(*node));
  const OpOptions& o = node->op->options;
  const int c = node->ic, iw = node->iw, ih = node->ih, ow = node->ow, oh = node->oh;
  const int32_t sy = Scale10(ih, oh, o.align_corners), sx = Scale10(iw, ow, o.align_corners);
  std::vector<Lerp10> xs(static_cast<size_t>(ow));
  for (int x = 0; x < ow; ++x) xs[x] = IntLerp(x, sx, o.half_pixel_centers, iw);
  const int8_t* in = node->t.In<int8_t>(0);
  int8_t* out = node->t.Out<int8_t>(0);
  const int rows = node->n * oh;
  const int tasks = TaskCount(*node, rows, static_cast<int64_t>(ow) * c * 8);
  RunTasks(*node, tasks, [&](int task, int) {
    for (int r = rows * task / tasks; r < rows * (task + 1) / tasks; ++r) {
      const int b = r / oh, y = r % oh;
      const Lerp10 ly = IntLerp(y, sy, o.half_pixel_centers, ih);
      const int64_t wy1 = ly.pos - kOne10 * ly.lo, wy0 = kOne10 - wy1;
      const int8_t* row0 = in + (static_cast<size_t>(b) * ih + ly.lo) * iw * c;
      const int8_t* row1 = in + (static_cast<size_t>(b) * ih + ly.hi) * iw * c;
      int8_t* dst = out + static_cast<size_t>(r) * ow * c;
      for (int x = 0; x < ow; ++x) {
        const Lerp10& lx = xs[x];
        const int64_t wx1 = lx.pos - kOne10 * lx.lo, wx0 = kOne10 - wx1;
        const int8_t* p00 = row0 + static_cast<size_t>(lx.lo) * c;
        const int8_t* p01 = row0 + static_cast<size_t>(lx.hi) * c;
        const int8_t* p10 = row1 + static_cast<size_t>(lx.lo) * c;
        const int8_t* p11 = row1 + static_cast<size_t>(lx.hi) * c;
        for (int k = 0; k < c; ++k) {
          const int64_t sum =
              p00[k] * wy0 * wx0 + p10[k] * wy1 * wx0 + p01[k] * wy0 * wx1 + p11[k] * wy1 * wx1;
          const int64_t round = sum > 0 ? (1 << 19) : -(1 << 19);
          dst[k] = static_cast<int8_t>((sum + round) / (1 << 20));
        }
        dst += c;
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

Status EvalNearest(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckRunTimeSize(*node));
  const OpOptions& o = node->op->options;
  const int ih = node->ih, iw = node->iw, oh = node->oh, ow = node->ow;
  const size_t px = static_cast<size_t>(node->ic) * TensorTypeSize(node->t.in[0]->type);
  std::vector<size_t> xs(static_cast<size_t>(ow));
  for (int x = 0; x < ow; ++x) {
    xs[x] = static_cast<size_t>(Nearest(x, iw, ow, o.align_corners, o.half_pixel_centers)) * px;
  }
  const uint8_t* in = node->t.in_data[0];
  uint8_t* dst = node->t.out_data[0];
  for (int b = 0; b < node->n; ++b) {
    for (int y = 0; y < oh; ++y) {
      const int32_t sy = Nearest(y, ih, oh, o.align_corners, o.half_pixel_centers);
      const uint8_t* row = in + (static_cast<size_t>(b) * ih + sy) * iw * px;
      for (int x = 0; x < ow; ++x, dst += px) std::memcpy(dst, row + xs[x], px);
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
  if (!bilinear) {
    node->eval = EvalNearest;
  } else {
    node->eval = t == TensorType::kInt8 ? EvalBilinearInt8 : EvalBilinearFloat;
  }
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
