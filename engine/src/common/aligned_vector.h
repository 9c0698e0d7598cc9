// std::vectors for the buffers kernels read: AlignedVector (cache-line aligned) and LargeBuffer
// (the same, and huge pages when large). Header-only, shared like cpu_features.h.
#ifndef EMBER_SRC_COMMON_ALIGNED_VECTOR_H_
#define EMBER_SRC_COMMON_ALIGNED_VECTOR_H_

#include <cstddef>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ember {

// The allocator of both vectors below. Every buffer starts on a 64-byte boundary (a cache line;
// AVX-512 vectors and AMX tile rows): kernels read them in whole lines, and a row split across
// two lines costs a second load per row.
//
// kHugePages, for a layer's packed weights, which a late layer of a few pixels streams from
// memory once per run: a buffer that can hold a whole huge page (2 MiB or more) starts on a
// 2 MiB boundary instead and, on Linux, is marked MADV_HUGEPAGE, so that it is backed by
// transparent huge pages where the machine's THP mode is "madvise" (Debian's default). Only the
// buffer itself is advised: its last partial 2 MiB keeps small pages, so no memory is added.
// With 4 KiB pages the ResNet50 GraphDef at 64x64 (about 100 MB of weights, read by 4- and
// 16-pixel products) paid a TLB miss and a hardware-prefetch restart every 4 KiB.
template <typename T, bool kHugePages>
struct BufferAllocator {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = BufferAllocator<U, kHugePages>;
  };
  static constexpr std::size_t kCacheLine = 64;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  BufferAllocator() = default;
  template <typename U>
  BufferAllocator(const BufferAllocator<U, kHugePages>&) noexcept {}  // NOLINT: rebinding

  static bool Huge(std::size_t bytes) { return kHugePages && bytes >= kHugePage; }
  static std::size_t Align(std::size_t bytes) { return Huge(bytes) ? kHugePage : kCacheLine; }

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    void* p = ::operator new(bytes, std::align_val_t(Align(bytes)));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Advice only: where THP is off or the kernel refuses, the buffer keeps its small pages.
    if (Huge(bytes)) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    ::operator delete(p, std::align_val_t(Align(n * sizeof(T))));
  }

  template <typename U>
  bool operator==(const BufferAllocator<U, kHugePages>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const BufferAllocator<U, kHugePages>&) const noexcept {
    return false;
  }
};

// Cache-line aligned.
template <typename T>
using AlignedVector = std::vector<T, BufferAllocator<T, false>>;

// Cache-line aligned, and huge pages when 2 MiB or more.
template <typename T>
using LargeBuffer = std::vector<T, BufferAllocator<T, true>>;

}  // namespace ember

#endif  // EMBER_SRC_COMMON_ALIGNED_VECTOR_H_
