// MaxPool3D and AvgPool3D (NDHWC, float), what Keras's MaxPooling3D and AveragePooling3D emit.
// Padding cells never count: a SAME average divides by the window's voxels inside the volume,
// as TensorFlow's does. Checks and messages follow TensorFlow's Pooling3DOp
// (pooling_ops_3d.cc), in its order.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/op_kernel.h"
#include "core/thread_pool.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

class Pool3DOp : public OpKernel {
 public:
  Pool3DOp(OpKernelConstruction* c, bool is_max) : OpKernel(c), max_(is_max) {
    DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    if (!CheckTypeAllowed(c, "T", dt, dt == DataType::kFloat, "float")) return;
    Status s = Init(c);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() != 5) {
      ctx->SetStatus(InvalidArg(ctx->node(), "tensor_in must be 5-dimensional"));
      return;
    }
    const int64_t n = x.dim_size(0), ch = x.dim_size(4);
    int64_t in[3], out[3], pad[3];
    for (int i = 0; i < 3; ++i) {
      in[i] = x.dim_size(1 + i);
      EMBER_OP_REQUIRES_OK(
          ctx, WindowedOutputSize(ctx->node(), in[i], k_[i], 1, s_[i], padding_, &out[i], &pad[i]));
    }
    Tensor* y = nullptr;
    EMBER_OP_REQUIRES_OK(ctx,
                         ctx->allocate_output(0, TensorShape({n, out[0], out[1], out[2], ch}), &y));
    if (y->NumElements() == 0) return;
    const float* src = x.data<float>();
    float* dst = y->data<float>();
    const int64_t planes = n * out[0] * out[1];
    ParallelFor(
        ctx->intra_op_pool(), planes, out[2] * k_[0] * k_[1] * k_[2] * ch,
        [&](int64_t p0, int64_t p1) {
          std::vector<float> acc(static_cast<size_t>(ch));
          for (int64_t p = p0; p < p1; ++p) {
            const int64_t oy = p % out[1], oz = (p / out[1]) % out[0], b = p / (out[1] * out[0]);
            const int64_t z0 = std::max<int64_t>(oz * s_[0] - pad[0], 0),
                          z1 = std::min<int64_t>(oz * s_[0] - pad[0] + k_[0], in[0]);
            const int64_t y0 = std::max<int64_t>(oy * s_[1] - pad[1], 0),
                          y1 = std::min<int64_t>(oy * s_[1] - pad[1] + k_[1], in[1]);
            for (int64_t ox = 0; ox < out[2]; ++ox) {
              const int64_t x0 = std::max<int64_t>(ox * s_[2] - pad[2], 0),
                            x1 = std::min<int64_t>(ox * s_[2] - pad[2] + k_[2], in[2]);
              std::fill(acc.begin(), acc.end(), max_ ? std::numeric_limits<float>::lowest() : 0.0f);
              for (int64_t z = z0; z < z1; ++z) {
                for (int64_t yy = y0; yy < y1; ++yy) {
                  for (int64_t xx = x0; xx < x1; ++xx) {
                    const float* v = src + (((b * in[0] + z) * in[1] + yy) * in[2] + xx) * ch;
                    if (max_) {
                      for (int64_t c = 0; c < ch; ++c) acc[c] = std::max(acc[c], v[c]);
                    } else {
                      for (int64_t c = 0; c < ch; ++c) acc[c] += v[c];
                    }
                  }
                }
              }
              float* o = dst + ((p * out[2]) + ox) * ch;
              if (max_) {
                std::copy(acc.begin(), acc.end(), o);
              } else {
                const float count = static_cast<float>((z1 - z0) * (y1 - y0) * (x1 - x0));
                for (int64_t c = 0; c < ch; ++c) o[c] = acc[c] / count;
              }
            }
          }
        });
  }

 private:
  Status Init(OpKernelConstruction* c) {
    std::string fmt;
    EMBER_RETURN_IF_ERROR(c->attrs().GetOr<std::string>("data_format", &fmt, "NDHWC"));
    if (fmt != "NDHWC") {
      return NodeError(c->node(), Code::kUnimplemented,
                       "data_format " + fmt + " is not supported on CPU; use NDHWC");
    }
    std::vector<int64_t> ksize, strides;
    EMBER_RETURN_IF_ERROR(c->GetAttr("ksize", &ksize));
    if (ksize.size() != 5) {
      return InvalidArg(c->node(), "Sliding window ksize field must specify 5 dimensions");
    }
    for (int64_t k : ksize) {
      if (k <= 0) {
        return InvalidArg(c->node(),
                          "Sliding window ksize field must have non-negative dimensions");
      }
    }
    EMBER_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
    if (strides.size() != 5) {
      return InvalidArg(c->node(), "Sliding window stride field must specify 5 dimensions");
    }
    if (ksize[0] != 1 || strides[0] != 1) {
      return NodeError(c->node(), Code::kUnimplemented,
                       "Pooling is not yet supported on the batch dimension.");
    }
    if (ksize[4] != 1 || strides[4] != 1) {
      return NodeError(c->node(), Code::kUnimplemented,
                       "Pooling is not yet supported on the depth dimension.");
    }
    for (int i = 0; i < 3; ++i) {
      k_[i] = ksize[1 + i];
      s_[i] = strides[1 + i];
    }
    return ParsePadding(c, &padding_);
  }

  bool max_;
  int64_t k_[3] = {1, 1, 1}, s_[3] = {1, 1, 1};
  Padding padding_ = Padding::kValid;
};

class MaxPool3DOp : public Pool3DOp {
 public:
  explicit MaxPool3DOp(OpKernelConstruction* c) : Pool3DOp(c, true) {}
};
class AvgPool3DOp : public Pool3DOp {
 public:
  explicit AvgPool3DOp(OpKernelConstruction* c) : Pool3DOp(c, false) {}
};

// NDHWC pooling output shape from ksize / strides / padding.
Status Pool3DShape(ShapeContext* c) {
  c->output_shapes.assign(1, UnknownShape());
  if (!oputil::KnownRank(c, 0)) return Status::OK();
  const PartialShape& in = c->input_shapes[0];
  if (in.dims.size() != 5) {
    return InvalidArg(*c->node,
                      "Shape must be rank 5 but is rank " + std::to_string(in.dims.size()));
  }
  AttrReader r(*c->node);
  std::vector<int64_t> ksize, strides;
  std::string pad;
  std::vector<int64_t> out = in.dims;
  if (!r.Get("ksize", &ksize).ok() || !r.Get("strides", &strides).ok() ||
      !r.Get("padding", &pad).ok() || ksize.size() != 5 || strides.size() != 5) {
    c->output_shapes[0] = KnownShape({in.dims[0], -1, -1, -1, in.dims[4]});
    return Status::OK();
  }
  for (int d = 1; d <= 3; ++d) {
    if (in.dims[d] < 0 || ksize[d] <= 0 || strides[d] <= 0) {
      out[d] = -1;
      continue;
    }
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
  using oputil::TypedArg;
  oputil::RegisterOp("MaxPool3D", {TypedArg("input", "T")}, {TypedArg("output", "T")}, Pool3DShape);
  oputil::RegisterCpu<MaxPool3DOp>("MaxPool3D");
  oputil::RegisterOp("AvgPool3D", {TypedArg("input", "T")}, {TypedArg("output", "T")}, Pool3DShape);
  oputil::RegisterCpu<AvgPool3DOp>("AvgPool3D");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
