// BiasAdd, Softmax, MaxPool and AvgPool (NHWC).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/op_kernel.h"
#include "core/thread_pool.h"
#include "kernels/cpu/kernel_util.h"

namespace ember {
namespace kernels {
namespace {

ArgDef TArg(const char* name) {
  ArgDef a;
  a.name = name;
  a.type_attr = "T";
  return a;
}

template <typename K>
void RegisterKernel(const char* op) {
  KernelRegistry::Global()->Register(
      op, "CPU", [](OpKernelConstruction* c) { return std::unique_ptr<OpKernel>(new K(c)); });
}

// Output 0, not zero-filled: BiasAdd, Softmax and the pools each write every element of it.
bool AllocOrFail(OpKernelContext* ctx, const TensorShape& shape, Tensor** out) {
  Status s = ctx->allocate_output_uninitialized(0, shape, out);
  if (!s.ok()) ctx->SetStatus(s);
  return s.ok();
}

class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* c) : OpKernel(c) {
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dtype_, DispatchNumeric(dtype_, [](auto) {}),
                     "float, double, int32, int64, int8, uint8, int16");
    std::string fmt;
    Status s = c->attrs().GetOr<std::string>("data_format", &fmt, "NHWC");
    if (!s.ok()) {
      c->SetStatus(s);
    } else if (fmt != "NHWC" && fmt != "NCHW") {
      c->SetStatus(InvalidArg(c->node(), "Invalid data format: " + fmt));
    }
    nchw_ = fmt == "NCHW";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& v = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (v.dims() < 2) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "Input tensor must be at least 2D: " + v.shape().DebugString()));
      return;
    }
    if (b.dims() != 1) {
      ctx->SetStatus(InvalidArg(ctx->node(), "Biases must be 1D: " + b.shape().DebugString()));
      return;
    }
    const int channel_dim = nchw_ && v.dims() >= 3 ? 1 : v.dims() - 1;
    const int64_t channels = v.dim_size(channel_dim);
    if (b.dim_size(0) != channels) {
      ctx->SetStatus(
          InvalidArg(ctx->node(),
                     "Must provide as many biases as the channel dimension of the input tensor: " +
                         b.shape().DebugString() + " vs. " + v.shape().DebugString()));
      return;
    }
    if (v.dtype() != dtype_ || b.dtype() != dtype_) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "value and bias must both be " + DataTypeString(dtype_)));
      return;
    }
    Tensor* out = nullptr;
    if (!AllocOrFail(ctx, v.shape(), &out)) return;
    int64_t inner = 1;
    for (int d = channel_dim + 1; d < v.dims(); ++d) inner *= v.dim_size(d);
    const int64_t outer = channels == 0 || inner == 0 ? 0 : v.NumElements() / (channels * inner);
    DispatchNumeric(dtype_, [&](auto tag) {
      using T = decltype(tag);
      const T* in = v.data<T>();
      const T* bias = b.data<T>();
      T* o = out->data<T>();
      if (inner == 1) {
        // Channels last (NHWC): a row of channels at a time, the loop the compiler vectorizes
        // (an inner loop of one value per channel ran a value per ns).
        for (int64_t r = 0; r < outer; ++r) {
          const T* row = in + r * channels;
          T* dst = o + r * channels;
          for (int64_t c = 0; c < channels; ++c) dst[c] = static_cast<T>(row[c] + bias[c]);
        }
        return;
      }
      for (int64_t r = 0; r < outer; ++r) {
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t base = (r * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) o[base + i] = static_cast<T>(in[base + i] + bias[c]);
        }
      }
    });
  }

 private:
  DataType dtype_;
  bool nchw_ = false;
};

class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction* c) : OpKernel(c) {
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dtype_, DispatchFloat(dtype_, [](auto) {}), "float, double");
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dtype() != dtype_) {
      ctx->SetStatus(InvalidArg(ctx->node(), "input is " + DataTypeString(x.dtype()) +
                                                 ", but T is " + DataTypeString(dtype_)));
      return;
    }
    if (x.dims() < 1) {
      ctx->SetStatus(InvalidArg(ctx->node(),
                                "logits must have >= 1 dimension, got " + x.shape().DebugString()));
      return;
    }
    Tensor* out = nullptr;
    if (!AllocOrFail(ctx, x.shape(), &out)) return;
    const int64_t n = x.dim_size(x.dims() - 1);
    if (n == 0) return;
    const int64_t rows = x.NumElements() / n;
    DispatchFloat(dtype_, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* o = out->data<T>();
      ParallelFor(ctx->intra_op_pool(), rows, n * 20, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const T* row = in + r * n;
          T* orow = o + r * n;
          T mx = row[0];
          for (int64_t i = 1; i < n; ++i) mx = std::max(mx, row[i]);
          T sum = 0;
          for (int64_t i = 0; i < n; ++i) {
            orow[i] = std::exp(row[i] - mx);
            sum += orow[i];
          }
          for (int64_t i = 0; i < n; ++i) orow[i] /= sum;
        }
      });
    });
  }

 private:
  DataType dtype_;
};

// MaxPool and AvgPool over NHWC windows; padding cells never count.
class PoolOp : public OpKernel {
 public:
  PoolOp(OpKernelConstruction* c, bool is_max) : OpKernel(c), max_(is_max) {
    dtype_ = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    if (max_) {
      CheckTypeAllowed(c, "T", dtype_, DispatchNumeric(dtype_, [](auto) {}),
                       "float, double, int32, int64, int8, uint8, int16");
    } else {
      CheckTypeAllowed(c, "T", dtype_, DispatchFloat(dtype_, [](auto) {}), "float, double");
    }
    Status s = RequireNHWC(c);
    if (s.ok()) s = ReadSpatialAttr(c, "ksize", 1, &kh_, &kw_);
    if (s.ok()) s = ReadSpatialAttr(c, "strides", 1, &sh_, &sw_);
    if (s.ok()) s = ParsePadding(c, &padding_);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dtype() != dtype_) {
      ctx->SetStatus(InvalidArg(ctx->node(), "input is " + DataTypeString(x.dtype()) +
                                                 ", but T is " + DataTypeString(dtype_)));
      return;
    }
    if (x.dims() != 4) {
      ctx->SetStatus(
          InvalidArg(ctx->node(), "input must be 4-dimensional, got " + x.shape().DebugString()));
      return;
    }
    const int64_t n = x.dim_size(0), h = x.dim_size(1), w = x.dim_size(2), ch = x.dim_size(3);
    int64_t oh = 0, ow = 0, ph = 0, pw = 0;
    Status s = WindowedOutputSize(ctx->node(), h, kh_, 1, sh_, padding_, &oh, &ph);
    if (s.ok()) s = WindowedOutputSize(ctx->node(), w, kw_, 1, sw_, padding_, &ow, &pw);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    Tensor* out = nullptr;
    if (!AllocOrFail(ctx, TensorShape({n, oh, ow, ch}), &out)) return;
    DispatchNumeric(dtype_, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* o = out->data<T>();
      ParallelFor(ctx->intra_op_pool(), n * oh, ow * kh_ * kw_ * ch, [&](int64_t r0, int64_t r1) {
        std::vector<double> acc(static_cast<size_t>(ch));
        std::vector<T> mx(static_cast<size_t>(ch));
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t b = r / oh, y = r % oh;
          const int64_t y0 = std::max<int64_t>(y * sh_ - ph, 0);
          const int64_t y1 = std::min<int64_t>(y * sh_ - ph + kh_, h);
          for (int64_t xo = 0; xo < ow; ++xo) {
            const int64_t x0 = std::max<int64_t>(xo * sw_ - pw, 0);
            const int64_t x1 = std::min<int64_t>(xo * sw_ - pw + kw_, w);
            T* dst = o + ((b * oh + y) * ow + xo) * ch;
            if (max_) {
              std::fill(mx.begin(), mx.end(), std::numeric_limits<T>::lowest());
            } else {
              std::fill(acc.begin(), acc.end(), 0.0);
            }
            for (int64_t yy = y0; yy < y1; ++yy) {
              for (int64_t xx = x0; xx < x1; ++xx) {
                const T* src = in + ((b * h + yy) * w + xx) * ch;
                if (max_) {
                  for (int64_t c = 0; c < ch; ++c) mx[c] = src[c] > mx[c] ? src[c] : mx[c];
                } else {
                  for (int64_t c = 0; c < ch; ++c) acc[c] += static_cast<double>(src[c]);
                }
              }
            }
            const double count = static_cast<double>((y1 - y0) * (x1 - x0));
            for (int64_t c = 0; c < ch; ++c) {
              dst[c] = max_ ? mx[c] : static_cast<T>(acc[c] / count);
            }
          }
        }
      });
    });
  }

 private:
  bool max_;
  DataType dtype_;
  int64_t kh_ = 1, kw_ = 1, sh_ = 1, sw_ = 1;
  Padding padding_ = Padding::kValid;
};

class MaxPoolOp : public PoolOp {
 public:
  explicit MaxPoolOp(OpKernelConstruction* c) : PoolOp(c, true) {}
};
class AvgPoolOp : public PoolOp {
 public:
  explicit AvgPoolOp(OpKernelConstruction* c) : PoolOp(c, false) {}
};

// NHWC pooling output shape from ksize / strides / padding.
Status PoolShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (c->input_shapes.empty() || c->input_shapes[0].unknown_rank) return Status::OK();
  const PartialShape& in = c->input_shapes[0];
  if (in.dims.size() != 4) {
    return InvalidArg(*c->node,
                      "Shape must be rank 4 but is rank " + std::to_string(in.dims.size()));
  }
  AttrReader r(*c->node);
  std::vector<int64_t> ksize, strides;
  std::string pad;
  EMBER_RETURN_IF_ERROR(r.Get("ksize", &ksize));
  EMBER_RETURN_IF_ERROR(r.Get("strides", &strides));
  EMBER_RETURN_IF_ERROR(r.Get("padding", &pad));
  if (ksize.size() != 4 || strides.size() != 4) return Status::OK();
  std::vector<int64_t> out = in.dims;
  for (int d = 1; d <= 2; ++d) {
    if (in.dims[d] < 0) continue;
    int64_t o = 0, p = 0;
    EMBER_RETURN_IF_ERROR(WindowedOutputSize(*c->node, in.dims[d], ksize[d], 1, strides[d],
                                             pad == "SAME" ? Padding::kSame : Padding::kValid, &o,
                                             &p));
    out[d] = o;
  }
  c->output_shapes[0] = KnownShape(out);
  return Status::OK();
}

[[maybe_unused]] const bool kRegistered = [] {
  OpDef bias;
  bias.name = "BiasAdd";
  bias.inputs = {TArg("value"), TArg("bias")};
  bias.outputs = {TArg("output")};
  bias.shape_fn = UnchangedShape();
  OpRegistry::Global()->Register(std::move(bias));
  RegisterKernel<BiasAddOp>("BiasAdd");

  OpDef sm;
  sm.name = "Softmax";
  sm.inputs = {TArg("logits")};
  sm.outputs = {TArg("softmax")};
  sm.shape_fn = UnchangedShape();
  OpRegistry::Global()->Register(std::move(sm));
  RegisterKernel<SoftmaxOp>("Softmax");

  for (const char* op : {"MaxPool", "AvgPool"}) {
    OpDef def;
    def.name = op;
    def.inputs = {TArg(std::string(op) == "MaxPool" ? "input" : "value")};
    def.outputs = {TArg("output")};
    def.shape_fn = PoolShape;
    OpRegistry::Global()->Register(std::move(def));
  }
  RegisterKernel<MaxPoolOp>("MaxPool");
  RegisterKernel<AvgPoolOp>("AvgPool");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
