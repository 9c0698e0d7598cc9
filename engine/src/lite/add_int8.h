// int8 ADD of two same-shape tensors with AVX-512 (16 lanes of TFLite's integer arithmetic at a
// time), for CPUs where HasVnni(); the scalar kernel in kernels_elementwise.cc is the portable
// path and handles broadcasting. Both give the reference kernel's integers.
#ifndef EMBER_SRC_LITE_ADD_INT8_H_
#define EMBER_SRC_LITE_ADD_INT8_H_

#include <cstddef>
#include <cstdint>

namespace ember {
namespace lite {

// TFLite's quantized ADD: each input (x - zp) << left_shift is scaled by (m1, s1) or (m2, s2)
// (multipliers below one: s1, s2, shift <= 0), the sum by (multiplier, shift), then out_zp is
// added and the result clamped to [act_min, act_max].
struct AddI8Params {
  int32_t in_zp = 0, in2_zp = 0, out_zp = 0;
  int left_shift = 0;
  int32_t m1 = 0, m2 = 0, multiplier = 0;
  int s1 = 0, s2 = 0, shift = 0;
  int32_t act_min = -128, act_max = 127;
};

// Where the AVX-512 kernels read input b: b[i] (period 0), or b[(start + i) % period] from a
// buffer of period + 64 bytes, buffer[j] = value[j % period] (an input repeating over the other's
// leading dims, a bias or a squeeze-and-excite scale: the whole output one stream).
struct CyclicB {
  size_t period = 0, start = 0;
};

// y[i] = ADD(a[i], b[i]) for i < n. left_shift must be 20 (TFLite's for int8, as PrepareAddMul
// sets it), no multiplier INT32_MIN and every shift <= 0.
void AddI8Avx512(const int8_t* a, const int8_t* b, size_t n, const AddI8Params& p, int8_t* y,
                 CyclicB cb = {});

// The same with AVX2 (eight lanes; call only where GemmI16Available()): y[i] for i below the
// returned count, a multiple of 8 (0 where the output multiplier is INT32_MIN); the caller
// finishes the rest. Same preconditions as AddI8Avx512.
size_t AddI8Avx2(const int8_t* a, const int8_t* b, size_t n, const AddI8Params& p, int8_t* y);

// TFLite's quantized MUL: (a - in_zp) * (b - in2_zp) scaled by (multiplier, shift) with the
// double rounding (any shift, any multiplier), out_zp added, clamped to [act_min, act_max].
struct MulI8Params {
  int32_t in_zp = 0, in2_zp = 0, out_zp = 0;
  int32_t multiplier = 0;
  int shift = 0;
  int32_t act_min = -128, act_max = 127;
};

// y[i] = MUL(a[i], b[i]) for i < n, for CPUs where HasVnni().
void MulI8Avx512(const int8_t* a, const int8_t* b, size_t n, const MulI8Params& p, int8_t* y,
                 CyclicB cb = {});

// Tests: each input's stage alone, out[i] = MultiplyByQuantizedMultiplierSmallerThanOne(
// (x[i] - zp) * 2^20, m, shift) (an off-by-one there seldom reaches ADD's int8 output).
void AddI8InputStageForTesting(const int8_t* x, size_t n, int32_t zp, int32_t m, int shift,
                               int32_t* out);

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_ADD_INT8_H_
