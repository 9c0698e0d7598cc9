// Softmax over the last dimension: one block per row; the row's max is subtracted before
// exp (numerically stable), then each value is divided by the sum.
#include <cfloat>
#include <cstdint>

#include "kernels/cuda/cuda_util.h"

namespace ember {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <bool kMax>
__device__ float BlockReduce(float v, float* scratch) {
  for (int o = 16; o > 0; o /= 2) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, w) : v + w;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? scratch[lane] : (kMax ? -FLT_MAX : 0.f);
    for (int o = 16; o > 0; o /= 2) {
      float w = __shfl_xor_sync(0xffffffffu, v, o);
      v = kMax ? fmaxf(v, w) : v + w;
    }
    if (lane == 0) scratch[0] = v;
  }
  __syncthreads();
  v = scratch[0];
  __syncthreads();  // scratch is reused by the next reduction
  return v;
}

__global__ void __launch_bounds__(kThreads)
    SoftmaxKernel(const float* in, float* out, int64_t cols) {
  __shared__ float scratch[kThreads / 32];
  const float* x = in + int64_t{blockIdx.x} * cols;
  float* y = out + int64_t{blockIdx.x} * cols;
  float m = -FLT_MAX;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) m = fmaxf(m, x[i]);
  m = BlockReduce<true>(m, scratch);
  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) sum += expf(x[i] - m);
  sum = BlockReduce<false>(sum, scratch);
  const float inv = 1.f / sum;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) y[i] = expf(x[i] - m) * inv;
}

class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dims() < 1) {
      return ctx->SetStatus(errors::InvalidArgument("logits must have >= 1 dimension, got " +
                                                    x.shape().DebugString()));
    }
    Tensor* out;
    Status s = ctx->allocate_output(0, x.shape(), &out);
    if (!s.ok()) return ctx->SetStatus(s);
    int64_t cols = x.dim_size(x.dims() - 1);
    if (x.NumElements() == 0) return;
    int64_t rows = x.NumElements() / cols;
    if (rows > 0x7fffffff) {
      return ctx->SetStatus(errors::Unimplemented("GPU Softmax: more than 2^31 rows"));
    }
    SoftmaxKernel<<<static_cast<unsigned>(rows), kThreads, 0, Stream(ctx)>>>(
        static_cast<const float*>(x.device_data()), static_cast<float*>(out->device_data()), cols);
    LaunchOk(ctx, "SoftmaxKernel");
  }
};

EMBER_REGISTER_KERNEL("Softmax", "GPU",
                      [](OpKernelConstruction* c) { return std::make_unique<SoftmaxOp>(c); },
                      {{"T", DataType::kFloat}});

}  // namespace
}  // namespace cuda
}  // namespace ember
