// Elementwise loops (unary, and binary with NumPy broadcasting) shared by cwise and nn kernels.
#ifndef EMBER_KERNELS_CPU_CWISE_UTIL_H_
#define EMBER_KERNELS_CPU_CWISE_UTIL_H_

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "ember/tensor.h"
#include "kernels/cpu/kernel_util.h"

namespace ember {
namespace kernels {

// Elements per shard below which splitting work across threads does not pay.
constexpr int64_t kParallelGrain = 1 << 15;

template <typename T, typename U, typename Op>
void UnaryLoop(const T* in, U* out, int64_t n, ThreadPool* pool, Op op) {
  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = op(in[i]);
  };
  if (pool == nullptr || n < kParallelGrain) {
    body(0, n);
  } else {
    ParallelFor(pool, n, 8, body);
  }
}

// out = op(a, b) over `out_dims`, the broadcast of a's and b's shapes.
template <typename T, typename U, typename Op>
void BinaryLoop(const Tensor& ta, const Tensor& tb, const std::vector<int64_t>& out_dims, U* out,
                ThreadPool* pool, Op op) {
  const T* a = ta.data<T>();
  const T* b = tb.data<T>();
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  if (total == 0) return;
  const int64_t na = ta.NumElements(), nb = tb.NumElements();
  if (na == total && nb == total) {
    auto body = [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) out[i] = op(a[i], b[i]);
    };
    if (pool == nullptr || total < kParallelGrain)
      body(0, total);
    else
      ParallelFor(pool, total, 8, body);
    return;
  }
  if (nb == 1 && na == total) {
    const T bv = b[0];
    auto body = [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) out[i] = op(a[i], bv);
    };
    if (pool == nullptr || total < kParallelGrain)
      body(0, total);
    else
      ParallelFor(pool, total, 8, body);
    return;
  }
  if (na == 1 && nb == total) {
    const T av = a[0];
    auto body = [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) out[i] = op(av, b[i]);
    };
    if (pool == nullptr || total < kParallelGrain)
      body(0, total);
    else
      ParallelFor(pool, total, 8, body);
    return;
  }
  const size_t rank = out_dims.size();
  const std::vector<int64_t> sa = BroadcastStrides(ta.shape().dim_sizes(), out_dims);
  const std::vector<int64_t> sb = BroadcastStrides(tb.shape().dim_sizes(), out_dims);
  const int64_t inner = out_dims[rank - 1];
  const int64_t ia_step = sa[rank - 1], ib_step = sb[rank - 1];
  const int64_t rows = total / inner;
  auto body = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t ia = 0, ib = 0, rem = r;
      for (size_t d = rank - 1; d-- > 0;) {
        int64_t idx = rem % out_dims[d];
        rem /= out_dims[d];
        ia += idx * sa[d];
        ib += idx * sb[d];
      }
      U* o = out + r * inner;
      if (ia_step == 1 && ib_step == 1) {
        for (int64_t j = 0; j < inner; ++j) o[j] = op(a[ia + j], b[ib + j]);
      } else if (ia_step == 1) {
        const T bv = b[ib];
        for (int64_t j = 0; j < inner; ++j) o[j] = op(a[ia + j], bv);
      } else if (ib_step == 1) {
        const T av = a[ia];
        for (int64_t j = 0; j < inner; ++j) o[j] = op(av, b[ib + j]);
      } else {
        for (int64_t j = 0; j < inner; ++j) o[j] = op(a[ia + j * ia_step], b[ib + j * ib_step]);
      }
    }
  };
  if (pool == nullptr || total < kParallelGrain) {
    body(0, rows);
  } else {
    ParallelFor(pool, rows, inner * 8, body);
  }
}

}  // namespace kernels
}  // namespace ember

#endif  // EMBER_KERNELS_CPU_CWISE_UTIL_H_
