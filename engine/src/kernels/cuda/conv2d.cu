// Conv2D, NHWC input and HWIO filter, SAME/VALID padding, any strides (dilation 1): one thread
// per output element, output channels fastest so neighbouring threads read neighbouring
// filter weights.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_util.h"

namespace ember {
namespace cuda {
namespace {

constexpr int kThreads = 256;

struct ConvShape {
  int64_t n, h, w, c;  // input
  int64_t kh, kw, oc;  // filter (kh, kw, c, oc)
  int64_t oh, ow;      // output
  int64_t sh, sw;      // strides
  int64_t pad_top, pad_left;
};

__global__ void Conv2DKernel(const float* in, const float* filter, float* out, ConvShape s) {
  const int64_t total = s.n * s.oh * s.ow * s.oc;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t oc = i % s.oc, rest = i / s.oc;
    int64_t ox = rest % s.ow;
    rest /= s.ow;
    int64_t oy = rest % s.oh, b = rest / s.oh;
    float acc = 0.f;
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      int64_t iy = oy * s.sh + ky - s.pad_top;
      if (iy < 0 || iy >= s.h) continue;
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        int64_t ix = ox * s.sw + kx - s.pad_left;
        if (ix < 0 || ix >= s.w) continue;
        const float* x = in + ((b * s.h + iy) * s.w + ix) * s.c;
        const float* f = filter + (ky * s.kw + kx) * s.c * s.oc + oc;
        for (int64_t ci = 0; ci < s.c; ++ci) acc = fmaf(x[ci], f[ci * s.oc], acc);
      }
    }
    out[i] = acc;
  }
}

class Conv2DOp : public OpKernel {
 public:
  explicit Conv2DOp(OpKernelConstruction* c) : OpKernel(c) {
    std::vector<int64_t> strides, dilations;
    std::string format;
    Status s = c->GetAttr("strides", &strides);
    if (s.ok()) s = c->GetAttr("padding", &padding_);
    if (s.ok()) s = c->attrs().GetOr<std::string>("data_format", &format, "NHWC");
    if (s.ok()) s = c->attrs().GetOr<std::vector<int64_t>>("dilations", &dilations, {1, 1, 1, 1});
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    const std::string node = " (node '" + c->node().name + "')";
    if (strides.size() != 4 || strides[0] != 1 || strides[3] != 1 || strides[1] < 1 ||
        strides[2] < 1) {
      {
        c->SetStatus(
            errors::InvalidArgument("Conv2D strides must be [1, h, w, 1] with h, w >= 1" + node));
        return;
      }
    }
    sh_ = strides[1];
    sw_ = strides[2];
    // What the GPU kernel does not do is Unimplemented, so soft placement runs it on the CPU.
    if (format != "NHWC") {
      {
        c->SetStatus(errors::Unimplemented("GPU Conv2D supports NHWC only" + node));
        return;
      }
    }
    for (int64_t d : dilations) {
      if (d != 1) {
        c->SetStatus(errors::Unimplemented("GPU Conv2D: dilation > 1" + node));
        return;
      }
    }
    if (padding_ != "SAME" && padding_ != "VALID") {
      {
        c->SetStatus(errors::Unimplemented("GPU Conv2D supports SAME and VALID padding" + node));
        return;
      }
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& f = ctx->input(1);
    if (x.dims() != 4 || f.dims() != 4 || f.dim_size(2) != x.dim_size(3)) {
      return ctx->SetStatus(
          errors::InvalidArgument("Conv2D wants input [N,H,W,C] and filter [KH,KW,C,OC]; got " +
                                  x.shape().DebugString() + " and " + f.shape().DebugString()));
    }
    ConvShape s{x.dim_size(0),
                x.dim_size(1),
                x.dim_size(2),
                x.dim_size(3),
                f.dim_size(0),
                f.dim_size(1),
                f.dim_size(3),
                0,
                0,
                sh_,
                sw_,
                0,
                0};
    if (padding_ == "VALID") {
      s.oh = s.h >= s.kh ? (s.h - s.kh) / s.sh + 1 : 0;
      s.ow = s.w >= s.kw ? (s.w - s.kw) / s.sw + 1 : 0;
    } else {
      s.oh = (s.h + s.sh - 1) / s.sh;
      s.ow = (s.w + s.sw - 1) / s.sw;
      int64_t ph = (s.oh - 1) * s.sh + s.kh - s.h, pw = (s.ow - 1) * s.sw + s.kw - s.w;
      s.pad_top = ph > 0 ? ph / 2 : 0;
      s.pad_left = pw > 0 ? pw / 2 : 0;
    }
    Tensor* out;
    Status st = ctx->allocate_output(0, TensorShape({s.n, s.oh, s.ow, s.oc}), &out);
    if (!st.ok()) return ctx->SetStatus(st);
    int64_t total = s.n * s.oh * s.ow * s.oc;
    if (total == 0) return;
    Conv2DKernel<<<Blocks(total, kThreads), kThreads, 0, Stream(ctx)>>>(
        static_cast<const float*>(x.device_data()), static_cast<const float*>(f.device_data()),
        static_cast<float*>(out->device_data()), s);
    LaunchOk(ctx, "Conv2DKernel");
  }

 private:
  std::string padding_;
  int64_t sh_ = 1, sw_ = 1;
};

EMBER_REGISTER_KERNEL("Conv2D", "GPU",
                      [](OpKernelConstruction* c) { return std::make_unique<Conv2DOp>(c); },
                      {{"T", DataType::kFloat}});

}  // namespace
}  // namespace cuda
}  // namespace ember
