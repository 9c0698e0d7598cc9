// Single-precision GEMM used by MatMul, BatchMatMul and Conv2D.
//
// A packed, cache-blocked GEMM (BLIS-style loop order) with a 6x16 register-blocked
// micro-kernel (12x32 with AVX-512F). On x86-64 the AVX-512F and AVX2+FMA micro-kernels are
// compiled with `target` attributes and chosen at run time (EMBER_CPU_ISA caps the choice), so
// the baseline (SSE2) build still runs everywhere.
#ifndef EMBER_KERNELS_CPU_GEMM_H_
#define EMBER_KERNELS_CPU_GEMM_H_

#include <cstdint>
#include <vector>

#include "common/aligned_vector.h"

namespace ember {

class ThreadPool;

namespace kernels {

// C[m,n] = op(A)[m,k] * op(B)[k,n], all row-major. `lda`, `ldb`, `ldc` are the row strides of
// the matrices as stored (A is [k,m] when trans_a). `pool` may be null (one thread).
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc, ThreadPool* pool);

// A constant B[k,n] packed once into the panels the blocked kernel reads (a fused layer's
// weights), for the micro-kernel in use when it was packed.
struct SgemmPackedB {
  const void* kernel = nullptr;  // the micro-kernel it was packed for
  int64_t k = 0, n = 0;
  LargeBuffer<float> data;  // streamed once per run by a late layer: huge pages when large
};
void SgemmPackB(int64_t k, int64_t n, const float* b, int64_t ldb, SgemmPackedB* out);

// C[m,n] = A[m,k] * B, B as packed by SgemmPackB (A and C row-major); with a `pool`, large
// products split their columns over it (null: one thread). Returns false, touching nothing,
// when the product takes a path that reads B unpacked (tiny sizes; a few rows without the
// AVX-512 kernel) or B was packed for another micro-kernel: the caller then calls Sgemm.
bool SgemmPrepacked(int64_t m, const float* a, int64_t lda, const SgemmPackedB& b, float* c,
                    int64_t ldc, ThreadPool* pool = nullptr);

// The micro-kernel in use: "avx512f", "avx2-fma" or "generic".
const char* SgemmKernelName();

// Tests only: force the portable micro-kernel (true) or go back to run-time selection.
void SgemmForceGenericForTesting(bool force);

// Tests only: force one micro-kernel (kAuto: run-time selection). An ISA the CPU lacks falls
// back to the best one it has.
enum class SgemmIsa { kAuto = -1, kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };
void SgemmForceIsaForTesting(SgemmIsa isa);

}  // namespace kernels
}  // namespace ember

#endif  // EMBER_KERNELS_CPU_GEMM_H_
