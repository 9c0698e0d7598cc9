// Elementwise CUDA kernels: Relu, Relu6, broadcasting Add/AddV2/Sub/Mul, BiasAdd (with an
// optional fused Relu/Relu6 epilogue), Cast. Grid-stride loops, so any size launches.
#include <cstdint>

#include "kernels/cuda/cuda_util.h"

namespace ember {
namespace cuda {
namespace {

constexpr int kThreads = 256;

enum class Act { kNone, kRelu, kRelu6 };

template <Act A>
__device__ __forceinline__ float Activate(float x) {
  if (A == Act::kRelu) return x > 0.f ? x : 0.f;
  if (A == Act::kRelu6) return x > 0.f ? (x < 6.f ? x : 6.f) : 0.f;
  return x;
}

template <Act A>
__global__ void ActivationKernel(const float* in, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    // NaN propagates, as TensorFlow's Relu: (NaN > 0) is false, so compare the other way.
    float x = in[i];
    out[i] = x != x ? x : Activate<A>(x);
  }
}

enum class BinOp { kAdd, kSub, kMul };

template <BinOp Op>
__global__ void BinaryKernel(const float* a, const float* b, float* out, int64_t n,
                             BroadcastShape bs) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rem = i, ia = 0, ib = 0;
    for (int d = bs.rank - 1; d >= 0; --d) {
      int64_t c = rem % bs.out_dims[d];
      rem /= bs.out_dims[d];
      ia += c * bs.a_strides[d];
      ib += c * bs.b_strides[d];
    }
    float x = a[ia], y = b[ib];
    out[i] = Op == BinOp::kAdd ? x + y : (Op == BinOp::kSub ? x - y : x * y);
  }
}

template <Act A>
__global__ void BiasAddKernel(const float* in, const float* bias, float* out, int64_t n,
                              int64_t channels) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = Activate<A>(in[i] + bias[i % channels]);
  }
}

template <typename From, typename To>
__global__ void CastKernel(const From* in, To* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = static_cast<To>(in[i]);
  }
}

template <Act A>
class ActivationOp : public OpKernel {
 public:
  explicit ActivationOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out;
    Status s = ctx->allocate_output(0, x.shape(), &out);
    if (!s.ok()) return ctx->SetStatus(s);
    int64_t n = x.NumElements();
    if (n == 0) return;
    ActivationKernel<A><<<Blocks(n, kThreads), kThreads, 0, Stream(ctx)>>>(
        static_cast<const float*>(x.device_data()), static_cast<float*>(out->device_data()), n);
    LaunchOk(ctx, A == Act::kRelu ? "Relu" : "Relu6");
  }
};

template <BinOp Op>
class BinaryOp : public OpKernel {
 public:
  explicit BinaryOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    BroadcastShape bs;
    TensorShape shape;
    std::string error;
    if (!MakeBroadcast(a.shape(), b.shape(), &bs, &shape, &error)) {
      return ctx->SetStatus(errors::InvalidArgument(error));
    }
    Tensor* out;
    Status s = ctx->allocate_output(0, shape, &out);
    if (!s.ok()) return ctx->SetStatus(s);
    int64_t n = shape.num_elements();
    if (n == 0) return;
    BinaryKernel<Op><<<Blocks(n, kThreads), kThreads, 0, Stream(ctx)>>>(
        static_cast<const float*>(a.device_data()), static_cast<const float*>(b.device_data()),
        static_cast<float*>(out->device_data()), n, bs);
    LaunchOk(ctx, "Binary");
  }
};

// BiasAdd (NHWC / channels last). The fused variants are for a graph pass that folds a
// following Relu/Relu6 into it; the plain op is what graphs name today.
template <Act A>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string format;
    Status s = c->attrs().GetOr<std::string>("data_format", &format, "NHWC");
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    if (format != "NHWC") {
      c->SetStatus(errors::Unimplemented("GPU BiasAdd supports data_format NHWC only, got " +
                                         format + " in node '" + c->node().name + "'"));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    if (x.dims() < 1 || bias.dims() != 1 || bias.dim_size(0) != x.dim_size(x.dims() - 1)) {
      return ctx->SetStatus(errors::InvalidArgument(
          "Must provide as many biases as the last dimension of the input tensor: " +
          bias.shape().DebugString() + " vs. " + x.shape().DebugString()));
    }
    Tensor* out;
    Status s = ctx->allocate_output(0, x.shape(), &out);
    if (!s.ok()) return ctx->SetStatus(s);
    int64_t n = x.NumElements();
    if (n == 0) return;
    BiasAddKernel<A><<<Blocks(n, kThreads), kThreads, 0, Stream(ctx)>>>(
        static_cast<const float*>(x.device_data()), static_cast<const float*>(bias.device_data()),
        static_cast<float*>(out->device_data()), n, bias.dim_size(0));
    LaunchOk(ctx, "BiasAdd");
  }
};

template <typename From, typename To>
void LaunchCast(OpKernelContext* ctx, const Tensor& x, Tensor* out) {
  int64_t n = x.NumElements();
  CastKernel<From, To><<<Blocks(n, kThreads), kThreads, 0, Stream(ctx)>>>(
      static_cast<const From*>(x.device_data()), static_cast<To*>(out->device_data()), n);
  LaunchOk(ctx, "Cast");
}

template <typename From>
bool CastFrom(OpKernelContext* ctx, DataType dst, const Tensor& x, Tensor* out) {
  switch (dst) {
    case DataType::kFloat:
      LaunchCast<From, float>(ctx, x, out);
      return true;
    case DataType::kInt32:
      LaunchCast<From, int32_t>(ctx, x, out);
      return true;
    case DataType::kInt64:
      LaunchCast<From, int64_t>(ctx, x, out);
      return true;
    default:
      return false;
  }
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("SrcT", &src_);
    if (s.ok()) s = c->GetAttr("DstT", &dst_);
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    auto ok = [](DataType t) {
      return t == DataType::kFloat || t == DataType::kInt32 || t == DataType::kInt64;
    };
    if (!ok(src_) || !ok(dst_)) {
      c->SetStatus(errors::Unimplemented("GPU Cast supports float, int32 and int64; node '" +
                                         c->node().name + "' casts " + DataTypeString(src_) +
                                         " to " + DataTypeString(dst_)));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out;
    Status s = ctx->allocate_output(0, x.shape(), &out);
    if (!s.ok()) return ctx->SetStatus(s);
    if (x.NumElements() == 0) return;
    bool done = src_ == DataType::kFloat   ? CastFrom<float>(ctx, dst_, x, out)
                : src_ == DataType::kInt32 ? CastFrom<int32_t>(ctx, dst_, x, out)
                                           : CastFrom<int64_t>(ctx, dst_, x, out);
    if (!done) ctx->SetStatus(errors::Internal("GPU Cast: unexpected types"));
  }

 private:
  DataType src_ = DataType::kInvalid, dst_ = DataType::kInvalid;
};

const std::vector<std::pair<std::string, DataType>> kFloat = {{"T", DataType::kFloat}};

EMBER_REGISTER_KERNEL(
    "Relu", "GPU",
    [](OpKernelConstruction* c) { return std::make_unique<ActivationOp<Act::kRelu>>(c); }, kFloat);
EMBER_REGISTER_KERNEL(
    "Relu6", "GPU",
    [](OpKernelConstruction* c) { return std::make_unique<ActivationOp<Act::kRelu6>>(c); }, kFloat);
EMBER_REGISTER_KERNEL(
    "Add", "GPU",
    [](OpKernelConstruction* c) { return std::make_unique<BinaryOp<BinOp::kAdd>>(c); }, kFloat);
EMBER_REGISTER_KERNEL(
    "AddV2", "GPU",
    [](OpKernelConstruction* c) { return std::make_unique<BinaryOp<BinOp::kAdd>>(c); }, kFloat);
EMBER_REGISTER_KERNEL(
    "Sub", "GPU",
    [](OpKernelConstruction* c) { return std::make_unique<BinaryOp<BinOp::kSub>>(c); }, kFloat);
EMBER_REGISTER_KERNEL(
    "Mul", "GPU",
    [](OpKernelConstruction* c) { return std::make_unique<BinaryOp<BinOp::kMul>>(c); }, kFloat);
EMBER_REGISTER_KERNEL(
    "BiasAdd", "GPU",
    [](OpKernelConstruction* c) { return std::make_unique<BiasAddOp<Act::kNone>>(c); }, kFloat);
EMBER_REGISTER_KERNEL("Cast", "GPU",
                      [](OpKernelConstruction* c) { return std::make_unique<CastOp>(c); });

}  // namespace
}  // namespace cuda
}  // namespace ember
