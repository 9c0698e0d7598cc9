// LRN (tf.nn.local_response_normalization) with TensorFlow's semantics and validation messages
// (core/kernels/lrn_op.cc): over the depth of a 4-D NHWC tensor,
//   out[..., d] = in[..., d] / (bias + alpha * sum(in[..., d - r .. d + r] ** 2)) ** beta
// AlexNet-era and GoogLeNet v1 graphs carry it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/op_kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/op_util.h"

namespace ember {
namespace kernels {
namespace {

using oputil::RegisterCpu;
using oputil::RegisterOp;
using oputil::TypedArg;

class LrnOp : public OpKernel {
 public:
  explicit LrnOp(OpKernelConstruction* c) : OpKernel(c) {
    const AttrReader& a = c->attrs();
    Status s = a.GetOr("depth_radius", &radius_, int64_t{5});
    if (s.ok()) s = a.GetOr("bias", &bias_, 1.0f);
    if (s.ok()) s = a.GetOr("alpha", &alpha_, 1.0f);
    if (s.ok()) s = a.GetOr("beta", &beta_, 0.5f);
    if (s.ok() && radius_ > std::numeric_limits<int32_t>::max()) {
      s = InvalidArg(c->node(),
                     "depth_radius = " + std::to_string(radius_) + " larger than int max");
    }
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    const DataType dt = c->input_types().empty() ? DataType::kInvalid : c->input_types()[0];
    CheckTypeAllowed(c, "T", dt, dt == DataType::kFloat, "float");
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dims() != 4) {
      ctx->SetStatus(InvalidArg(ctx->node(), "in must be 4-dimensional"));
      return;
    }
    Tensor* out = nullptr;
    EMBER_OP_REQUIRES_OK(ctx, ctx->allocate_output_uninitialized(0, in.shape(), &out));
    const int64_t depth = in.dim_size(3);
    if (out->NumElements() == 0) return;
    const float* src = in.data<float>();
    float* dst = out->data<float>();
    const int64_t rows = in.NumElements() / depth;
    for (int64_t r = 0; r < rows; ++r) {
      const float* x = src + r * depth;
      float* y = dst + r * depth;
      for (int64_t d = 0; d < depth; ++d) {
        const int64_t lo = std::max<int64_t>(0, d - radius_);
        const int64_t hi = std::min<int64_t>(depth, d + radius_ + 1);
        float sum = 0.0f;
        for (int64_t i = lo; i < hi; ++i) sum += x[i] * x[i];
        const float m = bias_ + alpha_ * sum;
        float scale;
        if (beta_ == 1.0f) {
          scale = 1.0f / m;
        } else if (beta_ == 0.5f) {
          scale = 1.0f / std::sqrt(m);
        } else {
          scale = std::exp(std::log(m) * -beta_);
        }
        y[d] = x[d] * scale;
      }
    }
  }

 private:
  int64_t radius_ = 5;
  float bias_ = 1.0f, alpha_ = 1.0f, beta_ = 0.5f;
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp("LRN", {TypedArg("input", "T")}, {TypedArg("output", "T")}, UnchangedShape());
  RegisterCpu<LrnOp>("LRN");
  return true;
}();

}  // namespace
}  // namespace kernels
}  // namespace ember
