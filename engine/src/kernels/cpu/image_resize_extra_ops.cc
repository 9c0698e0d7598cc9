// ResizeBicubic and ResizeArea with TensorFlow's CPU semantics (resize_bicubic_op.cc,
// resize_area_op.cc): Keras's Resizing(interpolation="bicubic"/"area") through tf.image.resize.
// Both read any real input type and output float.
//
// Bicubic: the cubic convolution kernel with a = -0.75 and clamped taps, or with
// half_pixel_centers Keys' a = -0.5 with taps outside the image weighted 0 and the rest
// renormalized. Like TensorFlow, the kernel is sampled at 1/1024 of a pixel and each output
// interpolates down the columns first, then across. Area: each output pixel averages the input
// area it covers, partial pixels weighted by the part covered.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"
#include "kernels/cpu/resize_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::FixedArg;
using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;

constexpr int64_t kTableSize = 1024;

// The kernel at distances i / kTableSize (even entries) and 1 + i / kTableSize (odd entries).
std::vector<float> CubicTable(double a) {
  std::vector<float> t(static_cast<size_t>(2 * (kTableSize + 1)));
  for (int64_t i = 0; i <= kTableSize; ++i) {
    const double x = static_cast<double>(i) / kTableSize;
    t[2 * i] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
    const double x1 = x + 1;
    t[2 * i + 1] = static_cast<float>(((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a);
  }
  return t;
}

int64_t Clamp(int64_t v, int64_t limit) { return std::min(limit - 1, std::max<int64_t>(0, v)); }

struct Taps {
  int64_t index[4];
  float weight[4];
};

Taps CubicTaps(int64_t out, float scale, int64_t limit, bool keys) {
  static const std::vector<float> legacy = CubicTable(-0.75);
  static const std::vector<float> keys_table = CubicTable(-0.5);
  const std::vector<float>& t = keys ? keys_table : legacy;
  const float pos =
      keys ? (static_cast<float>(out) + 0.5f) * scale - 0.5f : static_cast<float>(out) * scale;
  const int64_t base = static_cast<int64_t>(std::floor(pos));
  const int64_t off = std::lrint((pos - static_cast<float>(base)) * kTableSize);
  const float w[4] = {t[2 * off + 1], t[2 * off], t[2 * (kTableSize - off)],
                      t[2 * (kTableSize - off) + 1]};
  Taps taps;
  float sum = 0;
  for (int k = 0; k < 4; ++k) {
    const int64_t want = base - 1 + k;
    taps.index[k] = Clamp(want, limit);
    taps.weight[k] = !keys || taps.index[k] == want ? w[k] : 0.0f;
    sum += taps.weight[k];
  }
  if (keys && std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
    const float inv = 1.0f / sum;
    for (float& wk : taps.weight) wk *= inv;
  }
  return taps;
}

float Dot4(const float v[4], const float w[4]) {
  return v[0] * w[0] + v[1] * w[1] + v[2] * w[2] + v[3] * w[3];
}

template <typename T>
void Bicubic(const T* in, const ResizeGeometry& g, bool keys, float* out) {
  const int64_t c = g.channels, row = g.in_w * c;
  std::vector<Taps> xs(static_cast<size_t>(g.out_w));
  for (int64_t x = 0; x < g.out_w; ++x) xs[x] = CubicTaps(x, g.scale_w, g.in_w, keys);
  for (int64_t b = 0; b < g.batch; ++b) {
    const T* image = in + b * g.in_h * row;
    for (int64_t y = 0; y < g.out_h; ++y) {
      const Taps ty = CubicTaps(y, g.scale_h, g.in_h, keys);
      for (int64_t x = 0; x < g.out_w; ++x) {
        const Taps& tx = xs[x];
        for (int64_t k = 0; k < c; ++k) {
          float cols[4];
          for (int i = 0; i < 4; ++i) {
            const int64_t at = tx.index[i] * c + k;
            const float v[4] = {static_cast<float>(image[ty.index[0] * row + at]),
                                static_cast<float>(image[ty.index[1] * row + at]),
                                static_cast<float>(image[ty.index[2] * row + at]),
                                static_cast<float>(image[ty.index[3] * row + at])};
            cols[i] = Dot4(v, ty.weight);
          }
          *out++ = Dot4(cols, tx.weight);
        }
      }
    }
  }
}

// The input cells [start, end) an output cell covers, and the parts of the first and last
// covered; cells past the image are clamped to its edge.
struct Span {
  int64_t start, end;
  float first, last;
};

float Covered(int64_t i, float lo, float hi, float scale) {
  const float fi = static_cast<float>(i);
  if (fi < lo) return fi + 1 > hi ? scale : fi + 1 - lo;
  return fi + 1 > hi ? hi - fi : 1.0f;
}

Span AreaSpan(int64_t out, float scale) {
  const float lo = static_cast<float>(out) * scale;
  const float hi = static_cast<float>(out + 1) * scale;
  Span s;
  s.start = static_cast<int64_t>(std::floor(lo));
  s.end = static_cast<int64_t>(std::ceil(hi));
  s.first = Covered(s.start, lo, hi, scale);
  s.last = Covered(s.end - 1, lo, hi, scale);
  return s;
}

template <typename T>
void Area(const T* in, const ResizeGeometry& g, float* out) {
  const int64_t c = g.channels, row = g.in_w * c;
  const float norm = static_cast<float>(1.0 / static_cast<double>(g.scale_h * g.scale_w));
  std::vector<Span> xs(static_cast<size_t>(g.out_w));
  for (int64_t x = 0; x < g.out_w; ++x) xs[x] = AreaSpan(x, g.scale_w);
  for (int64_t b = 0; b < g.batch; ++b) {
    const T* image = in + b * g.in_h * row;
    for (int64_t y = 0; y < g.out_h; ++y) {
      const float lo = static_cast<float>(y) * g.scale_h;
      const float hi = static_cast<float>(y + 1) * g.scale_h;
      const Span sy = AreaSpan(y, g.scale_h);
      for (int64_t x = 0; x < g.out_w; ++x) {
        const Span& sx = xs[x];
        for (int64_t k = 0; k < c; ++k) {
          float sum = 0;
          for (int64_t i = sy.start; i < sy.end; ++i) {
            const T* r = image + Clamp(i, g.in_h) * row + k;
            float across = static_cast<float>(r[Clamp(sx.start, g.in_w) * c]) * sx.first;
            if (sx.start + 1 != sx.end) {
              for (int64_t j = sx.start + 1; j < sx.end - 1; ++j) {
                across += static_cast<float>(r[Clamp(j, g.in_w) * c]);
              }
              across += static_cast<float>(r[Clamp(sx.end - 1, g.in_w) * c]) * sx.last;
            }
            sum += across * Covered(i, lo, hi, g.scale_h);
          }
          *out++ = sum * norm;
        }
      }
    }
  }
}

class ResizeExtraOp : public OpKernel {
 public:
  explicit ResizeExtraOp(OpKernelConstruction* c) : OpKernel(c) {
    bicubic_ = c->node().op == "ResizeBicubic";
    Status s = c->attrs().GetOr("align_corners", &align_corners_, false);
    if (s.ok() && bicubic_) s = c->attrs().GetOr("half_pixel_centers", &half_pixel_, false);
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
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(
                                  0, TensorShape({g.batch, g.out_h, g.out_w, g.channels}), &out));
    if (out->NumElements() == 0) return;
    const Tensor& in = ctx->input(0);
    DispatchNumeric(in.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (bicubic_) {
        Bicubic<T>(in.data<T>(), g, half_pixel_, out->data<float>());
      } else {
        Area<T>(in.data<T>(), g, out->data<float>());
      }
    });
  }

 private:
  bool bicubic_ = false;
  bool align_corners_ = false;
  bool half_pixel_ = false;
};

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* op : {"ResizeBicubic", "ResizeArea"}) {
    RegisterOp(op, {TypedArg("images", "T"), FixedArg("size", DataType::kInt32)},
               {FixedArg("resized_images", DataType::kFloat)}, ResizeShape);
    RegisterCpu<ResizeExtraOp>(op);
  }
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
