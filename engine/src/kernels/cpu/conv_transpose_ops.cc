// Conv2DBackpropInput (NHWC, float): the gradient of Conv2D with respect to its input, which is
// what tf.nn.conv2d_transpose and Keras's Conv2DTranspose emit. Each output-gradient pixel's
// contributions to the input window it was computed from are one GEMM row,
// dy[pixel, M] * filter[KH*KW*C, M]^T, scattered back into the image (col2im), as TensorFlow's
// custom CPU kernel does (conv_grad_input_ops.h). Validation follows TensorFlow's
// Conv2DBackpropComputeInputShape and ConvBackpropComputeDimensionsV2, in their order.
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

// TensorFlow's CPU kernel is Conv2DCustomBackpropInputOp; its messages carry this label, the
// input_sizes checks before it Conv2DBackpropInput's.
constexpr char kLabel[] = "Conv2DCustomBackpropInput: ";
constexpr char kSizesLabel[] = "Conv2DBackpropInput: ";

// The input image's shape from `input_sizes` (4 values, or 2: height and width, with the batch
// from out_backprop and the depth from the filter), as Conv2DBackpropComputeInputShape.
Status InputShapeFromSizes(const NodeDef& node, const Tensor& sizes, const TensorShape& filter,
                           const TensorShape& out_backprop, std::vector<int64_t>* dims) {
  if (sizes.dims() != 1) {
    return InvalidArg(node, std::string(kSizesLabel) + "input_sizes input must be 1-dim, not " +
                                std::to_string(sizes.dims()));
  }
  std::vector<int64_t> v;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(node, sizes, "input_sizes", &v));
  if (v.size() == 4) {
    for (int64_t d : v) {
      if (d < 0) return InvalidArg(node, "Dimension " + std::to_string(d) + " must be >= 0");
    }
    *dims = v;
    return Status::OK();
  }
  if (v.size() == 2) {
    if (v[0] < 0 || v[1] < 0) {
      return InvalidArg(node, std::string(kSizesLabel) +
                                  "elements of input_sizes must be >= 0, not " +
                                  std::to_string(v[0]) + "x" + std::to_string(v[1]));
    }
    if (out_backprop.dims() < 1 || filter.dims() < 3) {
      return InvalidArg(node, std::string(kSizesLabel) + "filter must be 4-dimensional");
    }
    *dims = {out_backprop.dim_size(0), v[0], v[1], filter.dim_size(2)};
    return Status::OK();
  }
  return InvalidArg(node,
                    "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, "
                    "but got: " +
                        std::to_string(v.size()));
}

struct BackpropGeometry {
  int64_t n, h, w, c;  // the input image (this op's output)
  int64_t kh, kw, m;   // filter window and output depth
  int64_t oh, ow;      // out_backprop's spatial size
  int64_t pt, pl;      // the forward convolution's padding before
  int64_t sh, sw;
};

class Conv2DBackpropInputOp : public OpKernel {
 public:
  explicit Conv2DBackpropInputOp(OpKernelConstruction* c) : OpKernel(c) {
    DataType dt = c->input_types().size() < 2 ? DataType::kInvalid : c->input_types()[1];
    CheckTypeAllowed(c, "T", dt, dt == DataType::kFloat, "float");
    int64_t dh = 1, dw = 1;
    Status s = RequireNHWC(c);
    if (s.ok()) s = ReadSpatialAttr(c, "strides", 1, &sh_, &sw_);
    if (s.ok()) s = ReadSpatialAttr(c, "dilations", 1, &dh, &dw);
    if (s.ok()) s = ParseConvPadding(c->node(), &padding_);
    if (s.ok() && (dh != 1 || dw != 1)) {
      // TensorFlow's CPU kernel refuses these too (conv_grad_input_ops.h).
      s = InvalidArg(c->node(),
                     "Current libxsmm and customized CPU implementations do not yet support "
                     "dilation rates larger than 1.");
    }
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    std::vector<int64_t> dims;
    Status s = InputShapeFromSizes(ctx->node(), sizes, filter.shape(), dy.shape(), &dims);
    BackpropGeometry g;
    if (s.ok()) s = Validate(ctx->node(), dims, filter, dy, &g);
    Tensor* out = nullptr;
    if (s.ok()) s = ctx->allocate_output(0, TensorShape(dims), &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    if (out->NumElements() == 0) return;
    float* dx = out->data<float>();
    std::memset(dx, 0, static_cast<size_t>(out->NumElements()) * sizeof(float));
    if (dy.NumElements() == 0 || filter.NumElements() == 0) return;
    ThreadPool* pool = ctx->intra_op_pool();
    const int64_t threads = pool == nullptr ? 1 : pool->NumThreads();
    const float* w = filter.data<float>();
    const float* src = dy.data<float>();
    if (threads > 1 && g.n >= threads) {
      // Enough images for every thread: one image per task, each GEMM on its own thread.
      ParallelFor(pool, g.n, g.oh * g.ow * g.kh * g.kw * g.c * g.m * 2,
                  [&](int64_t b0, int64_t b1) {
                    for (int64_t b = b0; b < b1; ++b) Image(g, src, w, b, nullptr, dx);
                  });
      return;
    }
    for (int64_t b = 0; b < g.n; ++b) Image(g, src, w, b, pool, dx);
  }

 private:
  // ConvBackpropComputeDimensionsV2's checks and messages, in its order.
  Status Validate(const NodeDef& node, const std::vector<int64_t>& in, const Tensor& filter,
                  const Tensor& dy, BackpropGeometry* g) const {
    if (in.size() != 4)
      return InvalidArg(node, std::string(kLabel) + "input must be 4-dimensional");
    if (filter.dims() != 4) {
      return InvalidArg(node, std::string(kLabel) + "filter must be 4-dimensional");
    }
    if (dy.dims() != 4) {
      return InvalidArg(node, std::string(kLabel) + "out_backprop must be 4-dimensional");
    }
    if (in[0] != dy.dim_size(0)) {
      return InvalidArg(node, std::string(kLabel) +
                                  "input and out_backprop must have the same batch size. Input "
                                  "batch: " +
                                  std::to_string(in[0]) + ", outbackprop batch: " +
                                  std::to_string(dy.dim_size(0)) + ", batch_dim: 0");
    }
    if (filter.dim_size(2) <= 0) {
      return InvalidArg(node,
                        std::string(kLabel) + "filter depth must be strictly greated than zero");
    }
    if (in[3] % filter.dim_size(2) != 0) {
      return InvalidArg(
          node, std::string(kLabel) + "input depth must be evenly divisible by filter depth");
    }
    if (filter.dim_size(3) != dy.dim_size(3)) {
      return InvalidArg(
          node, std::string(kLabel) + "filter and out_backprop must have the same out_depth");
    }
    const int64_t stride[2] = {sh_, sw_};
    const int64_t before[2] = {padding_.top, padding_.left};
    const int64_t after[2] = {padding_.bottom, padding_.right};
    int64_t pad[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      int64_t expect = 0;
      EMBER_RETURN_IF_ERROR(WindowedOutputSize(node, in[1 + i], filter.dim_size(i), 1, stride[i],
                                               padding_.kind, &expect, &pad[i], before[i],
                                               after[i]));
      if (dy.dim_size(1 + i) != expect) {
        return InvalidArg(
            node,
            std::string(kLabel) + "Size of out_backprop doesn't match computed: actual = " +
                std::to_string(dy.dim_size(1 + i)) + ", computed = " + std::to_string(expect) +
                " spatial_dim: " + std::to_string(1 + i) + " input: " + std::to_string(in[1 + i]) +
                " filter: " + std::to_string(filter.dim_size(i)) +
                " output: " + std::to_string(dy.dim_size(1 + i)) +
                " stride: " + std::to_string(stride[i]) + " dilation: 1");
      }
    }
    if (in[3] != filter.dim_size(2)) {
      // TensorFlow's CPU kernel has no grouped form either.
      return InvalidArg(node, "Computed input depth " + std::to_string(in[3]) +
                                  " doesn't match filter input depth " +
                                  std::to_string(filter.dim_size(2)));
    }
    *g = BackpropGeometry{in[0],
                          in[1],
                          in[2],
                          in[3],
                          filter.dim_size(0),
                          filter.dim_size(1),
                          filter.dim_size(3),
                          dy.dim_size(1),
                          dy.dim_size(2),
                          pad[0],
                          pad[1],
                          sh_,
                          sw_};
    return Status::OK();
  }

  // Image `b`: out_backprop rows in chunks whose patch gradients (KH*KW*C floats each) fit in
  // ~1 MiB, each chunk one GEMM then scattered into dx in row order.
  static void Image(const BackpropGeometry& g, const float* dy, const float* w, int64_t b,
                    ThreadPool* pool, float* dx) {
    const int64_t rows = g.oh * g.ow, cols = g.kh * g.kw * g.c;
    const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>(rows, (1 << 18) / cols));
    thread_local std::vector<float> patches;
    if (patches.size() < static_cast<size_t>(chunk * cols)) {
      patches.resize(static_cast<size_t>(chunk * cols));
    }
    float* img = dx + b * g.h * g.w * g.c;
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t r1 = std::min(rows, r0 + chunk);
      Sgemm(false, true, r1 - r0, cols, g.m, dy + (b * rows + r0) * g.m, g.m, w, g.m,
            patches.data(), cols, pool);
      Col2Im(g, patches.data(), r0, r1, img);
    }
  }

  // Adds patch rows [r0, r1) (each [KH, KW, C]) into the image at the windows they came from.
  static void Col2Im(const BackpropGeometry& g, const float* col, int64_t r0, int64_t r1,
                     float* img) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t y0 = (r / g.ow) * g.sh - g.pt, x0 = (r % g.ow) * g.sw - g.pl;
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = y0 + ky;
        if (iy < 0 || iy >= g.h) {
          col += g.kw * g.c;
          continue;
        }
        for (int64_t kx = 0; kx < g.kw; ++kx, col += g.c) {
          const int64_t ix = x0 + kx;
          if (ix < 0 || ix >= g.w) continue;
          float* __restrict dst = img + (iy * g.w + ix) * g.c;
          for (int64_t ch = 0; ch < g.c; ++ch) dst[ch] += col[ch];
        }
      }
    }
  }

  int64_t sh_ = 1, sw_ = 1;
  ConvPadding padding_;
};

// The output's shape is input_sizes' value when it is a known constant.
Status BackpropInputShape(ShapeContext* c) {
  c->output_shapes.assign(1, KnownShape({-1, -1, -1, -1}));
  if (c->input_values.empty() || c->input_values[0] == nullptr) return Status::OK();
  std::vector<int64_t> v;
  EMBER_RETURN_IF_ERROR(ReadIndexVector(*c->node, *c->input_values[0], "input_sizes", &v));
  if (v.size() == 4) {
    c->output_shapes[0] = KnownShape(v);
  } else if (v.size() == 2 && c->input_shapes.size() == 3) {
    const PartialShape& f = c->input_shapes[1];
    const PartialShape& dy = c->input_shapes[2];
    const int64_t n = !dy.unknown_rank && dy.dims.size() == 4 ? dy.dims[0] : -1;
    const int64_t d = !f.unknown_rank && f.dims.size() == 4 ? f.dims[2] : -1;
    c->output_shapes[0] = KnownShape({n, v[0], v[1], d});
  } else {
    return InvalidArg(*c->node,
                      "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, "
                      "but got: " +
                          std::to_string(v.size()));
  }
  return Status::OK();
}

ArgDef Arg(const char* name, const char* type_attr, DataType type = DataType::kInvalid) {
  ArgDef a;
  a.name = name;
  a.type = type;
  if (type == DataType::kInvalid) a.type_attr = type_attr;
  return a;
}

[[maybe_unused]] const bool kRegistered = [] {
  OpDef op;
  op.name = "Conv2DBackpropInput";
  op.inputs = {Arg("input_sizes", "", DataType::kInt32), Arg("filter", "T"),
               Arg("out_backprop", "T")};
  op.outputs = {Arg("output", "T")};
  op.shape_fn = BackpropInputShape;
  OpRegistry::Global()->Register(std::move(op));
  KernelRegistry::Global()->Register("Conv2DBackpropInput", "CPU", [](OpKernelConstruction* c) {
    return std::unique_ptr<OpKernel>(new Conv2DBackpropInputOp(c));
  });
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
