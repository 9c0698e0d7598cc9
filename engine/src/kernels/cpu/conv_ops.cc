// Conv2D (NHWC, SAME/VALID, strides, dilations) via im2col + the packed GEMM, and
// DepthwiseConv2dNative as a direct NHWC loop.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "core/thread_pool.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kernel_util.h"

namespace ember {
namespace kernels {
namespace {

// Geometry shared by both convolutions, checked once per Compute.
struct ConvGeometry {
  int64_t n, h, w, c;      // input
  int64_t kh, kw;          // filter window
  int64_t oh, ow;          // output spatial size
  int64_t ph, pw;          // padding before
  int64_t sh, sw, dh, dw;  // strides, dilations
};

class ConvBase : public OpKernel {
 public:
  explicit ConvBase(OpKernelConstruction* c) : OpKernel(c) {
    DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dt, dt == DataType::kFloat, "float");
    Status s = RequireNHWC(c);
    if (s.ok()) s = ReadSpatialAttr(c, "strides", 1, &sh_, &sw_);
    if (s.ok()) s = ReadSpatialAttr(c, "dilations", 1, &dh_, &dw_);
    if (s.ok()) s = ParsePadding(c, &padding_);
    if (!s.ok()) c->SetStatus(s);
  }

 protected:
  // Validates input [N,H,W,C] and filter [KH,KW,C',M]; fills `g`.
  bool Geometry(OpKernelContext* ctx, ConvGeometry* g) {
    const Tensor& in = ctx->input(0);
    const Tensor& f = ctx->input(1);
    if (in.dims() != 4) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "input must be 4-dimensional" + in.shape().DebugString()));
      return false;
    }
    if (f.dims() != 4) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "filter must be 4-dimensional: " + f.shape().DebugString()));
      return false;
    }
    if (in.dtype() != DataType::kFloat || f.dtype() != DataType::kFloat) {
      ctx->SetStatus(InvalidArg(ctx->node(), "input and filter must be float"));
      return false;
    }
    if (in.dim_size(3) != f.dim_size(2)) {
      ctx->SetStatus(InvalidArg(
          ctx->node(), "input depth must equal filter depth: " + std::to_string(in.dim_size(3)) +
                           " vs " + std::to_string(f.dim_size(2))));
      return false;
    }
    *g = ConvGeometry{in.dim_size(0),
                      in.dim_size(1),
                      in.dim_size(2),
                      in.dim_size(3),
                      f.dim_size(0),
                      f.dim_size(1),
                      0,
                      0,
                      0,
                      0,
                      sh_,
                      sw_,
                      dh_,
                      dw_};
    Status s = WindowedOutputSize(ctx->node(), g->h, g->kh, dh_, sh_, padding_, &g->oh, &g->ph);
    if (s.ok())
      s = WindowedOutputSize(ctx->node(), g->w, g->kw, dw_, sw_, padding_, &g->ow, &g->pw);
    if (!s.ok()) ctx->SetStatus(s);
    return s.ok();
  }

  int64_t sh_ = 1, sw_ = 1, dh_ = 1, dw_ = 1;
  Padding padding_ = Padding::kValid;
};

// Writes the patch rows [r0, r1) of image `b` (each KH*KW*C floats, zeros for padding).
void Im2Col(const float* in, const ConvGeometry& g, int64_t b, int64_t r0, int64_t r1, float* out) {
  const int64_t cols = g.kh * g.kw * g.c;
  const size_t pixel = static_cast<size_t>(g.c) * sizeof(float);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t y = r / g.ow, x = r % g.ow;
    float* dst = out + (r - r0) * cols;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = y * g.sh - g.ph + ky * g.dh;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int64_t ix = x * g.sw - g.pw + kx * g.dw;
        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) {
          std::memset(dst, 0, pixel);
        } else {
          std::memcpy(dst, in + ((b * g.h + iy) * g.w + ix) * g.c, pixel);
        }
        dst += g.c;
      }
    }
  }
}

class Conv2DOp : public ConvBase {
 public:
  explicit Conv2DOp(OpKernelConstruction* c) : ConvBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    ConvGeometry g;
    if (!Geometry(ctx, &g)) return;
    const Tensor& in = ctx->input(0);
    const Tensor& f = ctx->input(1);
    const int64_t oc = f.dim_size(3);
    Tensor* out = nullptr;
    Status s = ctx->allocate_output(0, TensorShape({g.n, g.oh, g.ow, oc}), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    if (out->NumElements() == 0) return;
    const float* x = in.data<float>();
    const float* w = f.data<float>();
    float* y = out->data<float>();
    const int64_t cols = g.kh * g.kw * g.c;
    const bool pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1;
    if (pointwise) {  // the input already is the patch matrix
      Sgemm(false, false, g.n * g.h * g.w, oc, g.c, x, g.c, w, oc, y, oc, ctx->intra_op_pool());
      return;
    }
    // Patch rows in chunks of ~4 MiB so the buffer stays cache-friendly and chunks run in parallel.
    const int64_t rows = g.oh * g.ow;
    const int64_t chunk =
        std::max<int64_t>(16, std::min<int64_t>(rows, (1 << 18) / std::max<int64_t>(cols, 1)));
    const int64_t chunks_per_image = (rows + chunk - 1) / chunk;
    const int64_t tasks = g.n * chunks_per_image;
    ParallelFor(ctx->intra_op_pool(), tasks, chunk * cols * oc * 2, [&](int64_t t0, int64_t t1) {
      std::vector<float> patches(static_cast<size_t>(chunk * cols));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t b = t / chunks_per_image;
        const int64_t r0 = (t % chunks_per_image) * chunk;
        const int64_t r1 = std::min(rows, r0 + chunk);
        Im2Col(x, g, b, r0, r1, patches.data());
        Sgemm(false, false, r1 - r0, oc, cols, patches.data(), cols, w, oc,
              y + (b * rows + r0) * oc, oc, nullptr);
      }
    });
  }
};

class DepthwiseConvOp : public ConvBase {
 public:
  explicit DepthwiseConvOp(OpKernelConstruction* c) : ConvBase(c) {}

  void Compute(OpKernelContext* ctx) override {
    ConvGeometry g;
    if (!Geometry(ctx, &g)) return;
    const Tensor& f = ctx->input(1);
    const int64_t mult = f.dim_size(3);
    const int64_t oc = g.c * mult;
    Tensor* out = nullptr;
    Status s = ctx->allocate_output(0, TensorShape({g.n, g.oh, g.ow, oc}), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    const float* x = ctx->input(0).data<float>();
    const float* w = f.data<float>();
    float* y = out->data<float>();
    ParallelFor(ctx->intra_op_pool(), g.n * g.oh, g.ow * g.kh * g.kw * oc * 2,
                [&](int64_t r0, int64_t r1) {
                  for (int64_t r = r0; r < r1; ++r) {
                    const int64_t b = r / g.oh, oy = r % g.oh;
                    for (int64_t ox = 0; ox < g.ow; ++ox) {
                      float* dst = y + ((b * g.oh + oy) * g.ow + ox) * oc;
                      std::fill(dst, dst + oc, 0.f);
                      for (int64_t ky = 0; ky < g.kh; ++ky) {
                        const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
                        if (iy < 0 || iy >= g.h) continue;
                        for (int64_t kx = 0; kx < g.kw; ++kx) {
                          const int64_t ix = ox * g.sw - g.pw + kx * g.dw;
                          if (ix < 0 || ix >= g.w) continue;
                          const float* src = x + ((b * g.h + iy) * g.w + ix) * g.c;
                          const float* wk = w + (ky * g.kw + kx) * oc;
                          if (mult == 1) {
                            for (int64_t c = 0; c < g.c; ++c) dst[c] += src[c] * wk[c];
                          } else {
                            for (int64_t c = 0; c < g.c; ++c) {
                              for (int64_t m = 0; m < mult; ++m)
                                dst[c * mult + m] += src[c] * wk[c * mult + m];
                            }
                          }
                        }
                      }
                    }
                  }
                });
  }
};

// Output shape [N, OH, OW, OC] where known; OC = filter[3] (Conv2D) or filter[2]*filter[3].
ShapeFn ConvShape(bool depthwise) {
  return [depthwise](ShapeContext* c) {
    c->output_shapes.assign(1, UnknownShape());
    if (c->input_shapes.size() < 2) return Status::OK();
    const PartialShape& in = c->input_shapes[0];
    const PartialShape& f = c->input_shapes[1];
    if (in.unknown_rank || f.unknown_rank) return Status::OK();
    if (in.dims.size() != 4 || f.dims.size() != 4) {
      return InvalidArg(*c->node, "input and filter must be rank 4, got " + DimsString(in.dims) +
                                      " and " + DimsString(f.dims));
    }
    AttrReader r(*c->node);
    std::vector<int64_t> strides, dil;
    std::string pad;
    EMBER_RETURN_IF_ERROR(r.Get("strides", &strides));
    EMBER_RETURN_IF_ERROR(r.Get("padding", &pad));
    EMBER_RETURN_IF_ERROR(r.GetOr("dilations", &dil, std::vector<int64_t>{1, 1, 1, 1}));
    if (strides.size() != 4 || dil.size() != 4) return Status::OK();
    std::vector<int64_t> out = {in.dims[0], -1, -1, -1};
    for (int d = 1; d <= 2; ++d) {
      if (in.dims[d] < 0 || f.dims[d - 1] < 0) continue;
      int64_t o = 0, p = 0;
      EMBER_RETURN_IF_ERROR(
          WindowedOutputSize(*c->node, in.dims[d], f.dims[d - 1], dil[d], strides[d],
                             pad == "SAME" ? Padding::kSame : Padding::kValid, &o, &p));
      out[d] = o;
    }
    if (!depthwise) {
      out[3] = f.dims[3];
    } else if (f.dims[2] >= 0 && f.dims[3] >= 0) {
      out[3] = f.dims[2] * f.dims[3];
    }
    c->output_shapes[0] = KnownShape(out);
    return Status::OK();
  };
}

ArgDef TArg(const char* name) {
  ArgDef a;
  a.name = name;
  a.type_attr = "T";
  return a;
}

[[maybe_unused]] const bool kRegistered = [] {
  OpDef conv;
  conv.name = "Conv2D";
  conv.inputs = {TArg("input"), TArg("filter")};
  conv.outputs = {TArg("output")};
  conv.shape_fn = ConvShape(false);
  OpRegistry::Global()->Register(std::move(conv));
  KernelRegistry::Global()->Register("Conv2D", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new Conv2DOp(c));
  });
  OpDef dw;
  dw.name = "DepthwiseConv2dNative";
  dw.inputs = {TArg("input"), TArg("filter")};
  dw.outputs = {TArg("output")};
  dw.shape_fn = ConvShape(true);
  OpRegistry::Global()->Register(std::move(dw));
  KernelRegistry::Global()->Register("DepthwiseConv2dNative", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new DepthwiseConvOp(c));
  });
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
