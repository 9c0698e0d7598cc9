// ResizeBilinear and ResizeNearestNeighbor with TensorFlow's CPU semantics and validation
// messages (core/kernels/image/resize_bilinear_op.cc, resize_nearest_neighbor_op.cc,
// core/util/image_resizer_state.h): Keras's UpSampling2D and Resizing layers and the decoders of
// segmentation models. Bilinear reads any real input type and always outputs float, with TF's
// lerp order (top, bottom, then between them); nearest neighbour copies elements, so one
// routine serves every dtype.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"
#include "kernels/cpu/resize_util.h"

namespace ember {
namespace kernels {

// ---- resize_util.h: shared with image_resize_extra_ops.cc ----
float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

Status ValidateResize(const OpKernelContext* ctx, bool align_corners, bool half_pixel,
                      ResizeGeometry* g) {
  const NodeDef& node = ctx->node();
  if (half_pixel && align_corners) {
    return InvalidArg(node, "If half_pixel_centers is True, align_corners must be False.");
  }
  const Tensor& in = ctx->input(0);
  if (in.dims() != 4) {
    return InvalidArg(node, "input must be 4-dimensional" + in.shape().DebugString());
  }
  g->batch = in.dim_size(0);
  g->channels = in.dim_size(3);
  if (g->channels <= 0) return InvalidArg(node, "image must have at least one channel");
  if (in.dim_size(1) <= 0 || in.dim_size(2) <= 0) {
    return InvalidArg(node, "input image must be of non-zero size");
  }
  const int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
  if (in.dim_size(1) >= kMaxInt32 || in.dim_size(2) >= kMaxInt32) {
    return InvalidArg(node, "input sizes must be between 0 and max int32");
  }
  g->in_h = in.dim_size(1);
  g->in_w = in.dim_size(2);
  const Tensor& size = ctx->input(1);
  if (size.dims() != 1) {
    return InvalidArg(node, "shape_t must be 1-dimensional" + size.shape().DebugString());
  }
  if (size.NumElements() != 2) {
    return InvalidArg(node, "shape_t must have two elements" + size.shape().DebugString());
  }
  if (size.dtype() != DataType::kInt32) {
    return InvalidArg(node, "size must be int32, got " + DataTypeString(size.dtype()));
  }
  g->out_h = size.data<int32_t>()[0];
  g->out_w = size.data<int32_t>()[1];
  if (g->out_h <= 0 || g->out_w <= 0) {
    return InvalidArg(node, "output dimensions must be positive");
  }
  g->scale_h = ResizeScale(g->in_h, g->out_h, align_corners);
  g->scale_w = ResizeScale(g->in_w, g->out_w, align_corners);
  if (std::ceil(static_cast<float>(g->out_h - 1) * g->scale_h) >
      static_cast<float>(std::numeric_limits<int64_t>::max())) {
    return InvalidArg(node, "input image height scale would cause an overflow");
  }
  if (std::ceil(static_cast<float>(g->out_w - 1) * g->scale_w) >
      static_cast<float>(std::numeric_limits<int32_t>::max())) {
    return InvalidArg(node, "input image width scale would cause an overflow");
  }
  return Status::OK();
}

// [batch, size[0], size[1], channels] as far as the input shape and a constant size tell.
Status ResizeShape(ShapeContext* c) {
  std::vector<int64_t> d(4, -1);
  if (oputil::KnownRank(c, 0) && c->input_shapes[0].dims.size() == 4) {
    d[0] = c->input_shapes[0].dims[0];
    d[3] = c->input_shapes[0].dims[3];
  }
  std::vector<int64_t> size;
  if (oputil::ConstVector(c, 1, &size) && size.size() == 2 && size[0] > 0 && size[1] > 0) {
    d[1] = size[0];
    d[2] = size[1];
  }
  c->output_shapes.assign(1, KnownShape(d));
  return Status::OK();
}

namespace {

using oputil::FixedArg;
using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;

class ResizeOp : public OpKernel {
 public:
  explicit ResizeOp(OpKernelConstruction* c) : OpKernel(c) {
    bilinear_ = c->node().op == "ResizeBilinear";
    Status s = c->attrs().GetOr("align_corners", &align_corners_, false);
    if (s.ok()) s = c->attrs().GetOr("half_pixel_centers", &half_pixel_, false);
    const DataType t = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    if (s.ok() && !DispatchNumeric(t, [](auto) {})) {
      s = InvalidArg(c->node(), c->node().op + " does not support input type " + DataTypeString(t) +
                                    " (real number types are supported)");
    }
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    ResizeGeometry g;
    EMBER_OP_REQUIRES_OK(ctx, ValidateResize(ctx, align_corners_, half_pixel_, &g));
    if (!bilinear_ && (g.in_h >= (1 << 24) || g.in_w >= (1 << 24))) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "nearest neighbor requires max height & width of 2^24"));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(
                                  0, TensorShape({g.batch, g.out_h, g.out_w, g.channels}), &out));
    if (out->NumElements() == 0) return;
    const Tensor& in = ctx->input(0);
    if (!bilinear_) {
      Nearest(in, g, out);
      return;
    }
    DispatchNumeric(in.dtype(), [&](auto zero) {
      using T = decltype(zero);
      Bilinear<T>(in.data<T>(), g, out->data<float>());
    });
  }

 private:
  struct Lerp {
    int64_t lower, upper;
    float lerp;
  };

  // compute_interpolation_weights with HalfPixelScaler or LegacyScaler.
  std::vector<Lerp> Weights(int64_t out_size, int64_t in_size, float scale) const {
    std::vector<Lerp> w(static_cast<size_t>(out_size));
    for (int64_t i = 0; i < out_size; ++i) {
      const float x = static_cast<float>(i);
      const float src = half_pixel_ ? (x + 0.5f) * scale - 0.5f : x * scale;
      const float fl = std::floor(src);
      w[i].lower = std::max(static_cast<int64_t>(fl), int64_t{0});
      w[i].upper = std::min(static_cast<int64_t>(std::ceil(src)), in_size - 1);
      w[i].lerp = src - fl;
    }
    return w;
  }

  template <typename T>
  void Bilinear(const T* in, const ResizeGeometry& g, float* out) const {
    const int64_t c = g.channels, row = g.in_w * c;
    if (g.out_h == g.in_h && g.out_w == g.in_w) {  // TF's no-op resize: a cast
      const int64_t n = g.batch * g.in_h * row;
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
      return;
    }
    const std::vector<Lerp> ys = Weights(g.out_h, g.in_h, g.scale_h);
    const std::vector<Lerp> xs = Weights(g.out_w, g.in_w, g.scale_w);
    for (int64_t b = 0; b < g.batch; ++b) {
      const T* image = in + b * g.in_h * row;
      for (int64_t y = 0; y < g.out_h; ++y) {
        const T* top = image + ys[y].lower * row;
        const T* bottom = image + ys[y].upper * row;
        const float dy = ys[y].lerp;
        for (int64_t x = 0; x < g.out_w; ++x) {
          const int64_t l = xs[x].lower * c, u = xs[x].upper * c;
          const float dx = xs[x].lerp;
          for (int64_t k = 0; k < c; ++k) {
            const float tl = static_cast<float>(top[l + k]);
            const float tr = static_cast<float>(top[u + k]);
            const float bl = static_cast<float>(bottom[l + k]);
            const float br = static_cast<float>(bottom[u + k]);
            const float t = tl + (tr - tl) * dx;
            const float bo = bl + (br - bl) * dx;
            *out++ = t + (bo - t) * dy;
          }
        }
      }
    }
  }

  int64_t NearestIndex(int64_t i, float scale, int64_t in_size) const {
    const float src =
        half_pixel_ ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
    int64_t r = std::min(static_cast<int64_t>(align_corners_ ? std::round(src) : std::floor(src)),
                         in_size - 1);
    if (half_pixel_) r = std::max(int64_t{0}, r);
    return r;
  }

  void Nearest(const Tensor& in, const ResizeGeometry& g, Tensor* out) const {
    const size_t px = static_cast<size_t>(g.channels) * DataTypeSize(in.dtype());
    std::vector<size_t> xs(static_cast<size_t>(g.out_w));
    for (int64_t x = 0; x < g.out_w; ++x) {
      xs[x] = static_cast<size_t>(NearestIndex(x, g.scale_w, g.in_w)) * px;
    }
    const auto* src = static_cast<const unsigned char*>(in.raw_data());
    auto* dst = static_cast<unsigned char*>(out->raw_data());
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t y = 0; y < g.out_h; ++y) {
        const int64_t sy = NearestIndex(y, g.scale_h, g.in_h);
        const unsigned char* row = src + static_cast<size_t>((b * g.in_h + sy) * g.in_w) * px;
        for (int64_t x = 0; x < g.out_w; ++x, dst += px) std::memcpy(dst, row + xs[x], px);
      }
    }
  }

  bool bilinear_ = false;
  bool align_corners_ = false;
  bool half_pixel_ = false;
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("ResizeBilinear", {TypedArg("images", "T"), FixedArg("size", DataType::kInt32)},
             {FixedArg("resized_images", DataType::kFloat)}, ResizeShape);
  RegisterCpu<ResizeOp>("ResizeBilinear");
  RegisterOp("ResizeNearestNeighbor", {TypedArg("images", "T"), FixedArg("size", DataType::kInt32)},
             {TypedArg("resized_images", "T")}, ResizeShape);
  RegisterCpu<ResizeOp>("ResizeNearestNeighbor");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
