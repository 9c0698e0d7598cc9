// std::vector whose buffer starts on a 64-byte boundary (a cache line; AVX-512 vectors and AMX tile
// rows), for buffers that kernels read in whole lines: a row split across two lines costs a
// second load per row. Header-only, shared like cpu_features.h.
#ifndef EMBER_SRC_COMMON_ALIGNED_VECTOR_H_
#define EMBER_SRC_COMMON_ALIGNED_VECTOR_H_

#include <cstddef>
#include <new>
#include <vector>

namespace ember {

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::size_t kAlign = 64;

  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}  // NOLINT: rebinding converts

  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kAlign)));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(kAlign)); }

  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const noexcept {
    return false;
  }
};

template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace ember

#endif  // EMBER_SRC_COMMON_ALIGNED_VECTOR_H_
