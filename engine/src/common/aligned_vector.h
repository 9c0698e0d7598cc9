// std::vector whose buffer starts on a 64-byte boundary (a cache line; AVX-512 vectors and AMX tile
// rows), for buffers that kernels read in whole lines: a row split across two lines costs a
// second load per row; and LargeBuffer, whose large buffers ask for huge pages. Header-only,
// shared like cpu_features.h.
#ifndef EMBER_SRC_COMMON_ALIGNED_VECTOR_H_
#define EMBER_SRC_COMMON_ALIGNED_VECTOR_H_

#include <cstddef>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

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

// For a layer's packed weights, which a late layer of a few pixels streams from memory once per
// run: a buffer that can hold a whole huge page (2 MiB or more) starts on a 2 MiB boundary and,
// on Linux, is marked MADV_HUGEPAGE, so that it is backed by transparent huge pages where the
// machine's THP mode is "madvise" (Debian's default). Only the buffer itself is advised: its
// last partial 2 MiB keeps small pages, so no memory is added. With 4 KiB pages the ResNet50
// GraphDef at 64x64 (about 100 MB of weights, read by 4- and 16-pixel products) paid a TLB miss
// and a hardware-prefetch restart every 4 KiB. Smaller buffers are 64-byte aligned.
template <typename T>
struct LargeBufferAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kLargeBytes = kHugePage;

  LargeBufferAllocator() = default;
  template <typename U>
  LargeBufferAllocator(const LargeBufferAllocator<U>&) noexcept {}  // NOLINT: rebinding converts

  static std::size_t Align(std::size_t bytes) { return bytes >= kLargeBytes ? kHugePage : 64; }

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    void* p = ::operator new(bytes, std::align_val_t(Align(bytes)));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Advice only: where THP is off or the kernel refuses, the buffer keeps its small pages.
    if (bytes >= kLargeBytes) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    ::operator delete(p, std::align_val_t(Align(n * sizeof(T))));
  }

  template <typename U>
  bool operator==(const LargeBufferAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const LargeBufferAllocator<U>&) const noexcept {
    return false;
  }
};

template <typename T>
using LargeBuffer = std::vector<T, LargeBufferAllocator<T>>;

}  // namespace ember

#endif  // EMBER_SRC_COMMON_ALIGNED_VECTOR_H_
