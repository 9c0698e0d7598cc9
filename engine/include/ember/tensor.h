// Tensor: a dtype, a shape and a reference-counted, 64-byte aligned buffer.
// Copies share the buffer (as TensorFlow's Tensor does); use Clone() for a deep copy.
#ifndef EMBER_TENSOR_H_
#define EMBER_TENSOR_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "ember/status.h"
#include "ember/types.h"

namespace ember {

class TensorShape {
 public:
  TensorShape() = default;  // a scalar
  TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit TensorShape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int i) const { return dims_[static_cast<size_t>(i)]; }
  const std::vector<int64_t>& dim_sizes() const { return dims_; }
  int64_t num_elements() const;
  void AddDim(int64_t size) { dims_.push_back(size); }
  void set_dim(int i, int64_t size) { dims_[static_cast<size_t>(i)] = size; }
  // "[2,3]" ("[]" for a scalar), as TensorFlow's TensorShape::DebugString.
  std::string DebugString() const;

  bool operator==(const TensorShape& o) const { return dims_ == o.dims_; }
  bool operator!=(const TensorShape& o) const { return dims_ != o.dims_; }

  // Validates sizes (non-negative, product fits in int64) before building a shape.
  static StatusOr<TensorShape> FromDims(const std::vector<int64_t>& dims);

 private:
  std::vector<int64_t> dims_;
};

class Tensor {
 public:
  Tensor() = default;  // uninitialized: dtype kInvalid, no buffer
  // Allocates zero-filled storage for shape.num_elements() elements.
  Tensor(DataType dtype, const TensorShape& shape);
  // Allocates storage as the constructor does but leaves its contents unspecified (no
  // zero-fill), for a caller that writes every element before anything reads it (a kernel's
  // output). raw_data() is null when the allocation fails. Every dtype ember stores in the
  // buffer is trivially constructible; any other (none today) is zero-filled as before.
  static Tensor Uninitialized(DataType dtype, const TensorShape& shape);

  // Called once with (data, arg) when the last tensor sharing an external buffer lets go of
  // it, on whichever thread that happens (an executor worker, say).
  using ReleaseFn = void (*)(void* data, void* arg);
  // Wraps `data`, which the caller owns and keeps valid and unchanged until `release` runs
  // (not copied; `release` may be null). It must hold shape.num_elements() row-major
  // elements and be aligned to at least kExternalAlignment bytes: kernels never assume more.
  // This is how NumPy arrays and other foreign buffers enter a Session without a copy.
  static Tensor FromExternal(DataType dtype, const TensorShape& shape, void* data,
                             ReleaseFn release, void* arg);
  static constexpr size_t kExternalAlignment = 16;
  // True when the buffer came from FromExternal (its memory belongs to someone else).
  bool HasExternalBuffer() const;
  // A tensor whose buffer lives in an accelerator's memory (allocated by a Device, see
  // src/core/device.h). Its memory is never reachable from host code: raw_data() and data<T>()
  // return null, DebugString prints no values, Clone() refuses; only device kernels and the
  // device's copies read it, through device_data(). `buffer` is released when the last tensor
  // sharing it goes away (the device's deleter frees it in stream order).
  static Tensor OnDevice(DataType dtype, const TensorShape& shape, std::shared_ptr<void> buffer);
  bool on_device() const { return on_device_; }
  void* device_data() { return on_device_ ? buffer_.get() : nullptr; }
  const void* device_data() const { return on_device_ ? buffer_.get() : nullptr; }

  // True when this tensor is the only one holding its buffer, as TensorFlow's RefCountIsOne:
  // only then may a caller hand the memory out as its own (e.g. to a NumPy array).
  bool RefCountIsOne() const {
    return !on_device_ && buffer_ != nullptr && buffer_.use_count() == 1;
  }

  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int i) const { return shape_.dim_size(i); }
  int64_t NumElements() const { return shape_.num_elements(); }
  size_t TotalBytes() const;
  bool IsInitialized() const { return dtype_ != DataType::kInvalid; }

  // Host memory only: null for a device tensor (on_device()).
  void* raw_data() { return on_device_ ? nullptr : buffer_.get(); }
  const void* raw_data() const { return on_device_ ? nullptr : buffer_.get(); }

  template <typename T>
  T* data() {
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }

  // A scalar or vector from values, e.g. Tensor::From<float>({2}, {1, 2}).
  template <typename T>
  static Tensor From(const TensorShape& shape, const std::vector<T>& values);
  template <typename T>
  static Tensor Scalar(T value) {
    return From<T>(TensorShape(), {value});
  }

  // Same buffer (host or device), new shape with the same number of elements.
  bool CopyFrom(const Tensor& other, const TensorShape& shape);
  // A deep copy of a host tensor; an uninitialized Tensor for a device tensor (copy device
  // memory through its Device instead).
  Tensor Clone() const;
  bool SharesBufferWith(const Tensor& other) const { return buffer_ && buffer_ == other.buffer_; }
  // "Tensor<type: float shape: [2] values: 1 2>" (first few values).
  std::string DebugString(int max_entries = 8) const;

 private:
  DataType dtype_ = DataType::kInvalid;
  TensorShape shape_;
  std::shared_ptr<unsigned char> buffer_;  // host memory, or device memory when on_device_
  bool on_device_ = false;
};

template <typename T>
Tensor Tensor::From(const TensorShape& shape, const std::vector<T>& values) {
  Tensor t(DataTypeOf<T>::value, shape);
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.NumElements(); ++i)
    out[i] = values[i];
  return t;
}

}  // namespace ember

#endif  // EMBER_TENSOR_H_
