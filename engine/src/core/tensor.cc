#include "ember/tensor.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>
#include <vector>

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

// Freed host buffers of up to 4 MiB, kept by the thread that frees them, by size class, for
// its next tensor of that class. An executor step allocates each node's outputs and frees them
// when consumed: with aligned_alloc and free for each (and glibc's malloc_consolidate on the
// larger requests) the allocator took a third of the BERT GraphDef's run time. A class is a
// quarter of a power of two (at most 25% more than asked); a thread keeps at most 64 buffers
// of a class (8 missed: a step frees more of one size than that) and 32 MiB in all, and frees
// the rest. Their shared_ptr control blocks are kept the same way.
class BufferCache {
 public:
  static constexpr size_t kMaxBytes = size_t{4} << 20;
  static constexpr int kClasses = 60;

  // The class of a request of `rounded` bytes (a multiple of kAlignment, at most kMaxBytes) and
  // the bytes a buffer of that class has.
  static int ClassOf(size_t rounded, size_t* class_bytes) {
    if (rounded <= 4 * kAlignment) {
      *class_bytes = rounded;
      return static_cast<int>(rounded / kAlignment) - 1;  // 0..3
    }
    int e = 0;  // 2^e < rounded <= 2^(e + 1), e >= 8
    while ((size_t{2} << e) < rounded) ++e;
    const size_t quarter = size_t{1} << (e - 2);         // a multiple of kAlignment
    const size_t k = (rounded + quarter - 1) / quarter;  // 5 to 8 quarters of 2^e
    *class_bytes = k * quarter;
    return 4 + (e - 8) * 4 + static_cast<int>(k - 5);  // 4..59 up to 4 MiB
  }

  // A buffer of class `cls` (`class_bytes` bytes): the thread's last freed one, or a new one.
  static void* TakeBuffer(int cls, size_t class_bytes) {
    BufferCache* mine = Mine();
    std::vector<void*>* list = mine != nullptr ? &mine->buffers_[cls] : nullptr;
    if (list == nullptr || list->empty()) return std::aligned_alloc(kAlignment, class_bytes);
    void* p = list->back();
    list->pop_back();
    mine->bytes_ -= class_bytes;
    return p;
  }
  // Keeps a freed buffer of class `cls` for the thread's next one, or frees it.
  static void PutBuffer(void* p, int cls, size_t class_bytes) {
    BufferCache* mine = Mine();
    if (mine == nullptr || mine->buffers_[cls].size() >= 64 ||
        mine->bytes_ + class_bytes > (size_t{32} << 20)) {
      std::free(p);
      return;
    }
    mine->buffers_[cls].push_back(p);
    mine->bytes_ += class_bytes;
  }

  // The shared_ptr control blocks of cached buffers (one size, at most kBlockBytes), recycled
  // the same way: at most 4096 a thread.
  static constexpr size_t kBlockBytes = 64;
  static void* TakeBlock() {
    BufferCache* mine = Mine();
    if (mine == nullptr || mine->blocks_.empty()) return std::malloc(kBlockBytes);
    void* p = mine->blocks_.back();
    mine->blocks_.pop_back();
    return p;
  }
  static void PutBlock(void* p) {
    BufferCache* mine = Mine();
    if (mine == nullptr || mine->blocks_.size() >= 4096) {
      std::free(p);
      return;
    }
    mine->blocks_.push_back(p);
  }

  ~BufferCache() {
    Dead() = true;
    for (std::vector<void*>& list : buffers_) {
      for (void* p : list) std::free(p);
    }
    for (void* p : blocks_) std::free(p);
  }

 private:
  // The calling thread's cache, or null once it has been destroyed (a tensor freed during the
  // thread's exit, after its thread_local objects).
  static BufferCache* Mine() {
    if (Dead()) return nullptr;
    thread_local BufferCache cache;
    return &cache;
  }
  static bool& Dead() {
    thread_local bool dead = false;  // trivially destructible: readable to the very end
    return dead;
  }
  std::vector<void*> buffers_[kClasses];
  std::vector<void*> blocks_;
  size_t bytes_ = 0;  // in buffers_
};

template <typename T>
struct ControlBlockAllocator {
  using value_type = T;
  ControlBlockAllocator() = default;
  template <typename U>
  ControlBlockAllocator(const ControlBlockAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    if (n * sizeof(T) > BufferCache::kBlockBytes) {
      return static_cast<T*>(::operator new(n * sizeof(T)));
    }
    void* p = BufferCache::TakeBlock();
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) > BufferCache::kBlockBytes) {
      ::operator delete(p);
    } else {
      BufferCache::PutBlock(p);
    }
  }
  template <typename U>
  bool operator==(const ControlBlockAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const ControlBlockAllocator<U>&) const {
    return false;
  }
};

// A cached buffer's deleter: back to the freeing thread's cache, or to the system.
struct CachedRelease {
  int cls;
  size_t class_bytes;
  void operator()(unsigned char* p) const { BufferCache::PutBuffer(p, cls, class_bytes); }
};

// `zero`: zero-fill the buffer; otherwise its contents are left as they are (or poisoned).
std::shared_ptr<unsigned char> AllocateAligned(size_t bytes, bool zero = true) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  int cls = -1;
  size_t class_bytes = rounded;
  if (rounded <= BufferCache::kMaxBytes) cls = BufferCache::ClassOf(rounded, &class_bytes);
  void* p = cls >= 0 ? BufferCache::TakeBuffer(cls, class_bytes)
                     : std::aligned_alloc(kAlignment, class_bytes);
  if (p == nullptr) return nullptr;
  if (zero) {
    std::memset(p, 0, rounded);
  } else if (PoisonFlag().load(std::memory_order_relaxed)) {
    std::memset(p, 0xFF, rounded);  // NaN as float and double, -1 as an integer
  }
  if (cls < 0) {
    return std::shared_ptr<unsigned char>(static_cast<unsigned char*>(p),
                                          [](unsigned char* q) { std::free(q); });
  }
  return std::shared_ptr<unsigned char>(static_cast<unsigned char*>(p),
                                        CachedRelease{cls, class_bytes},
                                        ControlBlockAllocator<unsigned char>());
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
