// Helpers shared by ember's CUDA kernels: every CUDA call checked, errors as Statuses that name
// the node, launch geometry, and the broadcast shapes of binary ops.
#ifndef EMBER_KERNELS_CUDA_CUDA_UTIL_H_
#define EMBER_KERNELS_CUDA_CUDA_UTIL_H_

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/op_kernel.h"

namespace ember {
namespace cuda {

// "cudaMemcpyAsync: an illegal memory access was encountered (cudaErrorIllegalAddress)".
inline Status CudaStatus(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::OK();
  return errors::Internal(std::string(what) + ": " + cudaGetErrorString(e) + " (" +
                          cudaGetErrorName(e) + ")");
}

// The stream of the kernel's device (src/kernels/cuda/cuda_device.cc).
inline cudaStream_t Stream(OpKernelContext* ctx) {
  return static_cast<cudaStream_t>(ctx->device()->stream());
}

// After a launch: a launch error becomes the node's status. Errors raised while the kernel runs
// surface at the next synchronisation (a copy or the end of the step), naming that point.
inline bool LaunchOk(OpKernelContext* ctx, const char* kernel) {
  Status s = CudaStatus(cudaGetLastError(), kernel);
  if (s.ok()) return true;
  ctx->SetStatus(errors::Internal("CUDA kernel " + std::string(kernel) + " failed to launch for " +
                                  "node '" + ctx->node().name + "': " + s.message()));
  return false;
}

inline unsigned Blocks(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  if (b > 65535LL * 32) b = 65535LL * 32;  // grid-stride loops cover the rest
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

// A binary op's inputs broadcast to the output, as NumPy/TensorFlow: up to kMaxRank dims,
// each input's strides 0 along broadcast dims.
constexpr int kMaxRank = 6;
struct BroadcastShape {
  int rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
};
// False with *error set when the shapes are incompatible or of too high a rank.
bool MakeBroadcast(const TensorShape& a, const TensorShape& b, BroadcastShape* out,
                   TensorShape* out_shape, std::string* error);

}  // namespace cuda
}  // namespace ember

#endif  // EMBER_KERNELS_CUDA_CUDA_UTIL_H_
