// MatMul on the GPU: a 64x64-tiled fp32 kernel (shared-memory tiles, 4x4 outputs per thread)
// and, when SessionOptions::allow_tf32 is set on an sm_80+ device, a TF32 tensor-core kernel
// (WMMA m16n16k8, fp32 accumulation). transpose_a / transpose_b are read in the tile loads.
#include <mma.h>

#include <atomic>
#include <cstdint>

#include "kernels/cuda/cuda_util.h"

namespace ember {
namespace cuda {
namespace {

constexpr int kTile = 64;   // output tile (both kernels)
constexpr int kDepth = 16;  // K per shared-memory stage

// A(m, k) of an [M, K] matrix stored row-major, or of its transpose.
__device__ __forceinline__ float LoadA(const float* a, bool ta, int64_t m, int64_t k, int64_t M,
                                       int64_t K) {
  if (m >= M || k >= K) return 0.f;
  return ta ? a[k * M + m] : a[m * K + k];
}
__device__ __forceinline__ float LoadB(const float* b, bool tb, int64_t k, int64_t n, int64_t K,
                                       int64_t N) {
  if (k >= K || n >= N) return 0.f;
  return tb ? b[n * K + k] : b[k * N + n];
}

// 256 threads (16x16); thread (ty, tx) computes rows ty + 16i and columns tx + 16j, i, j < 4.
__global__ void __launch_bounds__(256)
    SgemmKernel(const float* a, const float* b, float* c, int64_t M, int64_t N, int64_t K, bool ta,
                bool tb) {
  __shared__ float as[kDepth][kTile + 1];
  __shared__ float bs[kDepth][kTile + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t row0 = int64_t{blockIdx.y} * kTile, col0 = int64_t{blockIdx.x} * kTile;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
    // Neighbouring threads load neighbouring addresses: along k for a row-major A (and for a
    // transposed B), along m / n otherwise. The +1 padding keeps the stores conflict-free.
    for (int e = threadIdx.x; e < kTile * kDepth; e += 256) {
      int kk = ta ? e / kTile : e % kDepth, mm = ta ? e % kTile : e / kDepth;
      as[kk][mm] = LoadA(a, ta, row0 + mm, k0 + kk, M, K);
      int kb = tb ? e % kDepth : e / kTile, nb = tb ? e / kDepth : e % kTile;
      bs[kb][nb] = LoadB(b, tb, k0 + kb, col0 + nb, K, N);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kDepth; ++kk) {
      float av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = as[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) bv[j] = bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    int64_t r = row0 + ty + 16 * i;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int64_t cc = col0 + tx + 16 * j;
      if (cc < N) c[r * N + cc] = acc[i][j];
    }
  }
}

// TF32 tensor cores: 128 threads (4 warps, 2x2), each warp a 32x32 block of the 64x64 tile as
// 2x2 WMMA 16x16 fragments. Inputs are rounded to TF32 when staged in shared memory.
__global__ void __launch_bounds__(128)
    Tf32GemmKernel(const float* a, const float* b, float* c, int64_t M, int64_t N, int64_t K,
                   bool ta, bool tb) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  constexpr int kLd = kDepth + 4, kLdB = kTile + 4, kLdC = kTile + 4;
  // WMMA loads and stores need 256-bit aligned pointers.
  __shared__ __align__(32) float as[kTile * kLd];    // [m][k]
  __shared__ __align__(32) float bs[kDepth * kLdB];  // [k][n]
  __shared__ __align__(32) float cs[kTile * kLdC];
  const int warp = threadIdx.x / 32, wm = warp / 2, wn = warp % 2;
  const int64_t row0 = int64_t{blockIdx.y} * kTile, col0 = int64_t{blockIdx.x} * kTile;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);
  for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
    for (int e = threadIdx.x; e < kTile * kDepth; e += 128) {
      int mm = e / kDepth, kk = e % kDepth;
      as[mm * kLd + kk] = wmma::__float_to_tf32(LoadA(a, ta, row0 + mm, k0 + kk, M, K));
      int kb = e / kTile, nb = e % kTile;
      bs[kb * kLdB + nb] = wmma::__float_to_tf32(LoadB(b, tb, k0 + kb, col0 + nb, K, N));
    }
    __syncthreads();
    for (int kk = 0; kk < kDepth; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[2];
      for (int i = 0; i < 2; ++i)
        wmma::load_matrix_sync(fa[i], as + (wm * 32 + i * 16) * kLd + kk, kLd);
      for (int j = 0; j < 2; ++j)
        wmma::load_matrix_sync(fb[j], bs + kk * kLdB + wn * 32 + j * 16, kLdB);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(cs + (wm * 32 + i * 16) * kLdC + wn * 32 + j * 16, acc[i][j], kLdC,
                              wmma::mem_row_major);
  __syncthreads();
  for (int e = threadIdx.x; e < kTile * kTile; e += 128) {
    int64_t r = row0 + e / kTile, cc = col0 + e % kTile;
    if (r < M && cc < N) c[r * N + cc] = cs[(e / kTile) * kLdC + e % kTile];
  }
#else
  (void)a, (void)b, (void)c, (void)M, (void)N, (void)K, (void)ta, (void)tb;
  __trap();  // never launched: the host checks the device's compute capability first
#endif
}

class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->attrs().GetOr("transpose_a", &ta_, false);
    if (s.ok()) s = c->attrs().GetOr("transpose_b", &tb_, false);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() != 2 || b.dims() != 2) {
      return ctx->SetStatus(
          errors::InvalidArgument("In[0] and In[1] must be matrices: " + a.shape().DebugString() +
                                  ", " + b.shape().DebugString()));
    }
    int64_t M = a.dim_size(ta_ ? 1 : 0), K = a.dim_size(ta_ ? 0 : 1);
    int64_t K2 = b.dim_size(tb_ ? 1 : 0), N = b.dim_size(tb_ ? 0 : 1);
    if (K != K2) {
      return ctx->SetStatus(
          errors::InvalidArgument("Matrix size-incompatible: In[0]: " + a.shape().DebugString() +
                                  ", In[1]: " + b.shape().DebugString()));
    }
    Tensor* out;
    Status s = ctx->allocate_output(0, TensorShape({M, N}), &out);
    if (!s.ok()) return ctx->SetStatus(s);
    if (M == 0 || N == 0) return;
    const float* pa = static_cast<const float*>(a.device_data());
    const float* pb = static_cast<const float*>(b.device_data());
    float* pc = static_cast<float*>(out->device_data());
    if (K == 0) {  // an empty sum: zeros
      Status z = CudaStatus(
          cudaMemsetAsync(pc, 0, static_cast<size_t>(M * N) * sizeof(float), Stream(ctx)),
          "cudaMemsetAsync");
      if (!z.ok()) ctx->SetStatus(z);
      return;
    }
    dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile),
              static_cast<unsigned>((M + kTile - 1) / kTile));
    if (grid.y > 65535) {
      return ctx->SetStatus(
          errors::Unimplemented("GPU MatMul: M = " + std::to_string(M) + " is above 65535 tiles"));
    }
    bool tf32 = false;
    if (ctx->allow_tf32()) {
      Status t = UseTf32(ctx->device()->index(), &tf32);
      if (!t.ok()) return ctx->SetStatus(t);
    }
    if (tf32) {
      Tf32GemmKernel<<<grid, 128, 0, Stream(ctx)>>>(pa, pb, pc, M, N, K, ta_, tb_);
      LaunchOk(ctx, "Tf32GemmKernel");
    } else {
      SgemmKernel<<<grid, 256, 0, Stream(ctx)>>>(pa, pb, pc, M, N, K, ta_, tb_);
      LaunchOk(ctx, "SgemmKernel");
    }
  }

 private:
  // TF32 tensor cores need compute capability 8.0; asked once per kernel.
  Status UseTf32(int device, bool* out) {
    int major = major_.load();
    if (major < 0) {
      EMBER_RETURN_IF_ERROR(
          CudaStatus(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                     "cudaDeviceGetAttribute"));
      major_.store(major);
    }
    *out = major >= 8;
    return Status::OK();
  }

  bool ta_ = false, tb_ = false;
  std::atomic<int> major_{-1};
};

EMBER_REGISTER_KERNEL("MatMul", "GPU",
                      [](OpKernelConstruction* c) { return std::make_unique<MatMulOp>(c); },
                      {{"T", DataType::kFloat}});

}  // namespace
}  // namespace cuda
}  // namespace ember
