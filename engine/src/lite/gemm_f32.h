// float32 GEMM for lite's CONV_2D: weights packed once in Prepare, bias and activation fused
// into the store. Run-time dispatch: AVX-512F, AVX2+FMA (x86-64) or portable C++.
#ifndef EMBER_SRC_LITE_GEMM_F32_H_
#define EMBER_SRC_LITE_GEMM_F32_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/aligned_vector.h"

namespace ember {
namespace lite {

// Weights [n, k] as panels of 16 output channels: panel j holds, for each depth index p, the
// 16 values w[16 j + 0..15][p] (zero padded past n).
struct PackedF32 {
  int n = 0, k = 0, panels = 0;
  LargeBuffer<float> data;  // huge pages when large (common/aligned_vector.h)
  std::vector<float> bias;  // n values padded to panels * 16 (zeros when the op has none)
  // CONV_2D reading its filter rows in place (no im2col): a [padded_h, padded_w] copy of the
  // input whose border holds zeros; 0 when unused.
  int padded_h = 0, padded_w = 0;
};

void PackWeightsF32(const float* w, const float* bias, int n, int k, PackedF32* out);
// The same packing from weights laid out [k, n] (a TensorFlow filter or MatMul operand): each
// panel row is 16 adjacent floats there. Reuses out's buffers when they are large enough.
void PackWeightsF32KN(const float* w, const float* bias, int n, int k, PackedF32* out);

enum class F32Isa { kAuto, kGeneric, kAvx2, kAvx512 };
// Tests only: force one implementation (kAuto: the best the CPU has). An ISA the CPU lacks
// falls back to the next one down.
void GemmF32ForceIsaForTesting(F32Isa isa);
const char* GemmF32KernelName();

// y[r * n + c] = clamp(bias[c] + sum_p x[r * x_stride + p] * w[c][p], lo, hi) for r < m.
void GemmF32(const float* x, int m, int x_stride, const PackedF32& w, float lo, float hi, float* y);
// GemmF32 for the columns of panels [j0, j1) only (y indexed as there): each output is the
// same sum in the same order, so threads can split the columns of a GEMM with few rows.
void GemmF32Panels(const float* x, int m, int x_stride, const PackedF32& w, int j0, int j1,
                   float lo, float hi, float* y);
// GemmF32 where row r's k values are `nseg` runs of w.k / nseg floats, run s at
// x + r * x_stride + seg_off[s] (a convolution's filter rows read in place from a padded input).
// The sum runs over the runs in order, so it equals GemmF32 over their concatenation.
void GemmF32Segments(const float* x, int m, int x_stride, const ptrdiff_t* seg_off, int nseg,
                     const PackedF32& w, float lo, float hi, float* y);

// One row: y[c] = clamp(bias[c] + sum_p x[p] * w[c][p], lo, hi) for the columns of panels
// [j0, j1) (c < n). Several panels share each pass over x, so the accumulators of 128 columns
// stay in registers over the whole depth while every panel streams in order.
void MatVecF32(const float* x, const PackedF32& w, int j0, int j1, float lo, float hi, float* y);

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_GEMM_F32_H_
