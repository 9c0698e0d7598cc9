#include "ember/tensor.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "core/tensor_debug.h"

namespace ember {

namespace {
constexpr size_t kAlignment = 64;

// Poisoning of Tensor::Uninitialized buffers (see core/tensor_debug.h): set from
// EMBER_POISON_UNINITIALIZED=1 at start-up, or by tests.
std::atomic<bool>& PoisonFlag() {
  static std::atomic<bool> flag{[] {
    const char* v = std::getenv("EMBER_POISON_UNINITIALIZED");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }()};
  return flag;
}

// `zero`: zero-fill the buffer; otherwise its contents are left as they are (or poisoned).
std::shared_ptr<unsigned char> AllocateAligned(size_t bytes, bool zero = true) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) return nullptr;
  if (zero) {
    std::memset(p, 0, rounded);
  } else if (PoisonFlag().load(std::memory_order_relaxed)) {
    std::memset(p, 0xFF, rounded);  // NaN as float and double, -1 as an integer
  }
  return std::shared_ptr<unsigned char>(static_cast<unsigned char*>(p),
                                        [](unsigned char* q) { std::free(q); });
}

// The deleter of an external buffer; std::get_deleter finds it to tell such buffers apart.
struct ExternalRelease {
  Tensor::ReleaseFn fn;
  void* arg;
  void operator()(unsigned char* p) const {
    if (fn != nullptr) fn(p, arg);
  }
};

template <typename T>
void AppendValues(std::ostringstream& os, const void* data, int64_t n) {
  const T* v = static_cast<const T*>(data);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) os << ' ';
    if constexpr (sizeof(T) == 1 && !std::is_same<T, bool>::value) {
      os << static_cast<int>(v[i]);
    } else {
      os << v[i];
    }
  }
}
}  // namespace

int64_t TensorShape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::string TensorShape::DebugString() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

StatusOr<TensorShape> TensorShape::FromDims(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return errors::InvalidArgument("Dimension " + std::to_string(d) + " must be >= 0");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return errors::InvalidArgument("Shape has too many elements (overflows int64)");
    }
    n *= d;
  }
  return TensorShape(dims);
}

Tensor::Tensor(DataType dtype, const TensorShape& shape) : dtype_(dtype), shape_(shape) {
  buffer_ = AllocateAligned(TotalBytes());
}

Tensor Tensor::Uninitialized(DataType dtype, const TensorShape& shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  // Types with no fixed element size (string, resource) hold no elements in the buffer; the
  // rest are plain numbers, so leaving them unwritten constructs nothing.
  t.buffer_ = AllocateAligned(t.TotalBytes(), /*zero=*/DataTypeSize(dtype) == 0);
  return t;
}

void SetPoisonUninitializedTensors(bool poison) {
  PoisonFlag().store(poison, std::memory_order_relaxed);
}
bool PoisonUninitializedTensors() { return PoisonFlag().load(std::memory_order_relaxed); }

Tensor Tensor::FromExternal(DataType dtype, const TensorShape& shape, void* data, ReleaseFn release,
                            void* arg) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = std::shared_ptr<unsigned char>(static_cast<unsigned char*>(data),
                                             ExternalRelease{release, arg});
  return t;
}

Tensor Tensor::OnDevice(DataType dtype, const TensorShape& shape, std::shared_ptr<void> buffer) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  // Aliasing: shares ownership of `buffer` (its deleter frees the device memory).
  unsigned char* p = static_cast<unsigned char*>(buffer.get());
  t.buffer_ = std::shared_ptr<unsigned char>(std::move(buffer), p);
  t.on_device_ = true;
  return t;
}

bool Tensor::HasExternalBuffer() const {
  return buffer_ != nullptr && std::get_deleter<ExternalRelease>(buffer_) != nullptr;
}

size_t Tensor::TotalBytes() const {
  return static_cast<size_t>(shape_.num_elements()) * DataTypeSize(dtype_);
}

bool Tensor::CopyFrom(const Tensor& other, const TensorShape& shape) {
  if (other.NumElements() != shape.num_elements()) return false;
  dtype_ = other.dtype_;
  shape_ = shape;
  buffer_ = other.buffer_;
  on_device_ = other.on_device_;
  return true;
}

Tensor Tensor::Clone() const {
  Tensor t;
  if (on_device_) return t;
  t.dtype_ = dtype_;
  t.shape_ = shape_;
  if (buffer_) {
    t.buffer_ = AllocateAligned(TotalBytes());
    if (t.buffer_ && TotalBytes() > 0) std::memcpy(t.buffer_.get(), buffer_.get(), TotalBytes());
  }
  return t;
}

std::string Tensor::DebugString(int max_entries) const {
  std::ostringstream os;
  os << "Tensor<type: " << DataTypeString(dtype_) << " shape: " << shape_.DebugString()
     << " values: ";
  if (on_device_) return os.str() + "<device memory>>";
  int64_t n = NumElements();
  int64_t shown = n < max_entries ? n : max_entries;
  if (raw_data() != nullptr) {
    switch (dtype_) {
      case DataType::kFloat:
        AppendValues<float>(os, raw_data(), shown);
        break;
      case DataType::kDouble:
        AppendValues<double>(os, raw_data(), shown);
        break;
      case DataType::kInt32:
        AppendValues<int32_t>(os, raw_data(), shown);
        break;
      case DataType::kUInt8:
        AppendValues<uint8_t>(os, raw_data(), shown);
        break;
      case DataType::kInt16:
        AppendValues<int16_t>(os, raw_data(), shown);
        break;
      case DataType::kInt8:
        AppendValues<int8_t>(os, raw_data(), shown);
        break;
      case DataType::kInt64:
        AppendValues<int64_t>(os, raw_data(), shown);
        break;
      case DataType::kBool:
        AppendValues<bool>(os, raw_data(), shown);
        break;
      default:
        os << "?";
        break;
    }
  }
  if (shown < n) os << "...";
  os << ">";
  return os.str();
}

}  // namespace ember
