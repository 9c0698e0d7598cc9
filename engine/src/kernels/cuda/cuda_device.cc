// The CUDA device: one stream per GPU, stream-ordered allocation (cudaMallocAsync), copies to
// and from the host on that stream. Registered as device type "GPU"; the CUDA runtime is only
// initialised when a session first asks for a GPU.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/cuda_util.h"

namespace ember {
namespace cuda {

bool MakeBroadcast(const TensorShape& a, const TensorShape& b, BroadcastShape* out,
                   TensorShape* out_shape, std::string* error) {
  int rank = a.dims() > b.dims() ? a.dims() : b.dims();
  if (rank > kMaxRank) {
    *error =
        "rank " + std::to_string(rank) + " is above the GPU kernels' " + std::to_string(kMaxRank);
    return false;
  }
  out->rank = rank;
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  int64_t sa = 1, sb = 1;
  for (int i = rank - 1; i >= 0; --i) {
    int ia = i - (rank - a.dims()), ib = i - (rank - b.dims());
    int64_t da = ia >= 0 ? a.dim_size(ia) : 1, db = ib >= 0 ? b.dim_size(ib) : 1;
    if (da != db && da != 1 && db != 1) {
      *error = "Incompatible shapes: " + a.DebugString() + " vs. " + b.DebugString();
      return false;
    }
    int64_t d = da == 1 ? db : da;
    dims[static_cast<size_t>(i)] = d;
    out->out_dims[i] = d;
    out->a_strides[i] = da == 1 ? 0 : sa;
    out->b_strides[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  *out_shape = TensorShape(dims);
  return true;
}

namespace {

class CudaDevice : public Device {
 public:
  CudaDevice(int ordinal, cudaStream_t stream, bool poison)
      : Device("GPU", ordinal), stream_(stream), poison_(poison) {}
  void* stream() override { return stream_; }

  Status Allocate(DataType dtype, const TensorShape& shape, Tensor* out) override {
    EMBER_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(index()), "cudaSetDevice"));
    size_t bytes = static_cast<size_t>(shape.num_elements()) * DataTypeSize(dtype);
    void* p = nullptr;
    // Empty tensors still get a (one-byte) buffer so that device_data() is never null.
    EMBER_RETURN_IF_ERROR(
        CudaStatus(cudaMallocAsync(&p, bytes == 0 ? 1 : bytes, stream_), "cudaMallocAsync"));
    if (poison_ && bytes > 0) {
      // 0xFF bytes: NaN in floats, -1 in integers, so an element a kernel skips shows.
      EMBER_RETURN_IF_ERROR(
          CudaStatus(cudaMemsetAsync(p, 0xFF, bytes, stream_), "cudaMemsetAsync"));
    }
    cudaStream_t s = stream_;
    // Freed in stream order: after every kernel already queued that may still read it.
    // A failure here cannot be reported to anyone; the next synchronisation reports it.
    *out = Tensor::OnDevice(dtype, shape,
                            std::shared_ptr<void>(p, [s](void* q) { (void)cudaFreeAsync(q, s); }));
    return Status::OK();
  }

  Status CopyToDevice(const Tensor& host, Tensor* out) override {
    if (host.on_device()) return errors::Internal("CopyToDevice: the source is device memory");
    EMBER_RETURN_IF_ERROR(Allocate(host.dtype(), host.shape(), out));
    if (host.TotalBytes() == 0) return Status::OK();
    EMBER_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(out->device_data(), host.raw_data(), host.TotalBytes(),
                                   cudaMemcpyHostToDevice, stream_),
                   "cudaMemcpyAsync (host to device)"));
    // The host tensor may be freed as soon as this returns: wait for the copy.
    return CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after a copy");
  }

  Status CopyToHost(const Tensor& t, Tensor* out) override {
    if (!t.on_device()) return errors::Internal("CopyToHost: the source is host memory");
    EMBER_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(index()), "cudaSetDevice"));
    Tensor host(t.dtype(), t.shape());
    if (t.TotalBytes() > 0) {
      if (host.raw_data() == nullptr) {
        return errors::ResourceExhausted("OOM allocating a host tensor of shape " +
                                         t.shape().DebugString());
      }
      EMBER_RETURN_IF_ERROR(
          CudaStatus(cudaMemcpyAsync(host.raw_data(), t.device_data(), t.TotalBytes(),
                                     cudaMemcpyDeviceToHost, stream_),
                     "cudaMemcpyAsync (device to host)"));
    }
    EMBER_RETURN_IF_ERROR(
        CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after a copy"));
    *out = std::move(host);
    return Status::OK();
  }

  Status Sync() override {
    EMBER_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(index()), "cudaSetDevice"));
    EMBER_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"));
    return CudaStatus(cudaGetLastError(), "a GPU kernel");
  }

 private:
  cudaStream_t stream_;
  bool poison_;
};

Status EnumerateGpus(std::vector<std::unique_ptr<Device>>* out) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky error so later calls are not confused
    return Status(Code::kUnavailable, std::string("no usable CUDA device: cudaGetDeviceCount: ") +
                                          cudaGetErrorString(e));
  }
  // Output buffers filled with NaN before every kernel, for the GPU kernel checks.
  const char* poison_env = std::getenv("EMBER_CUDA_POISON");
  bool poison = poison_env != nullptr && std::strcmp(poison_env, "1") == 0;
  for (int i = 0; i < count; ++i) {
    EMBER_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(i), "cudaSetDevice"));
    // Keep freed memory in the pool between steps instead of returning it to the driver at
    // every synchronisation (the default release threshold is 0).
    cudaMemPool_t pool = nullptr;
    EMBER_RETURN_IF_ERROR(
        CudaStatus(cudaDeviceGetDefaultMemPool(&pool, i), "cudaDeviceGetDefaultMemPool"));
    uint64_t keep = UINT64_MAX;
    EMBER_RETURN_IF_ERROR(
        CudaStatus(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
                   "cudaMemPoolSetAttribute"));
    cudaStream_t stream = nullptr;
    EMBER_RETURN_IF_ERROR(
        CudaStatus(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"));
    out->push_back(std::make_unique<CudaDevice>(i, stream, poison));
  }
  return Status::OK();
}

struct GpuRegistration {
  GpuRegistration() { RegisterDeviceType("GPU", EnumerateGpus); }
} g_gpu_registration;

}  // namespace
}  // namespace cuda
}  // namespace ember
