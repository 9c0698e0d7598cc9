// AVX2 requantization in registers, shared by lite's int8 kernels on CPUs without AVX-512
// (RequantizeRowsAvx2 for CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED; int8 ADD): eight lanes
// of MultiplyByQuantizedMultiplier with TFLite's double rounding, the same integers as
// ember/lite/quant.h. x86-64 only; include it under EMBER_LITE_X86-style guards.
//
// The two roundings compose into one floor (requant_avx512.h, DoubleRounding): with p = x * m,
// the result is (p + 2^30 + 2^(30+e) [e >= 1] - 2^31 [p < -2^30 and e >= 1]) >> (31 + e) in 64
// bits, e = min(-shift, 31) where the shift is negative (0 otherwise, x shifted left instead).
// AVX2 has no 64-bit arithmetic shift, but the result fits in 32 bits: for 31 + e >= 32 it is the
// high half of the 64-bit sum shifted right arithmetically by e - 1, one 32-bit VPSRAD; for
// e = 0 the sum is doubled first (it stays below 2^62 in magnitude there) and the high half
// taken whole. p reaches 2^62 only for an INT32_MIN multiplier, which TFLite saturates:
// MakeRoundingAvx2 reports such blocks and the caller takes its general path for them.
#ifndef EMBER_SRC_LITE_REQUANT_AVX2_H_
#define EMBER_SRC_LITE_REQUANT_AVX2_H_

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <climits>
#include <cstdint>

namespace ember {
namespace lite {
namespace avx2 {

// One block of eight channels' constants, made once and applied to many rows.
struct Rounding {
  __m256i left;                     // left shift of x (32-bit lanes)
  __m256i m_even, m_odd;            // multipliers in the low halves of the 64-bit lanes
  __m256i add_even, add_odd;        // 2^30 + 2^(30+e) [e >= 1]
  __m256i neg_even, neg_odd;        // -2^30 where e >= 1, else INT64_MIN (no -2^31 step)
  __m256i double_even, double_odd;  // 1 where e = 0 (the sum doubled), else 0
  __m256i right;                    // max(e - 1, 0), 32-bit lanes
  bool any_left, any_double;
};

// false when a multiplier is INT32_MIN (the saturating case this form leaves out).
__attribute__((target("avx2"))) inline bool MakeRounding(__m256i m, __m256i shift, Rounding* k) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i one = _mm256_set1_epi32(1);
  if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(m, _mm256_set1_epi32(INT32_MIN))) != 0) return false;
  k->left = _mm256_max_epi32(shift, zero);
  k->any_left = _mm256_movemask_epi8(_mm256_cmpgt_epi32(k->left, zero)) != 0;
  const __m256i e = _mm256_min_epi32(_mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero),
                                     _mm256_set1_epi32(31));
  k->right = _mm256_max_epi32(_mm256_sub_epi32(e, one), zero);
  const __m256i e0 = _mm256_cmpeq_epi32(e, zero);  // all ones where e = 0
  k->any_double = _mm256_movemask_epi8(e0) != 0;
  const __m256i low = _mm256_set1_epi64x(0xffffffff);
  const __m256i e_even = _mm256_and_si256(e, low), e_odd = _mm256_srli_epi64(e, 32);
  const __m256i b30 = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i zero_even = _mm256_cmpeq_epi64(e_even, zero);
  const __m256i zero_odd = _mm256_cmpeq_epi64(e_odd, zero);
  k->m_even = m;
  k->m_odd = _mm256_srli_epi64(m, 32);
  k->add_even =
      _mm256_add_epi64(b30, _mm256_andnot_si256(zero_even, _mm256_sllv_epi64(b30, e_even)));
  k->add_odd = _mm256_add_epi64(b30, _mm256_andnot_si256(zero_odd, _mm256_sllv_epi64(b30, e_odd)));
  const __m256i neg = _mm256_set1_epi64x(-(int64_t{1} << 30));
  const __m256i never = _mm256_set1_epi64x(INT64_MIN);
  k->neg_even = _mm256_blendv_epi8(neg, never, zero_even);
  k->neg_odd = _mm256_blendv_epi8(neg, never, zero_odd);
  k->double_even = _mm256_and_si256(zero_even, _mm256_set1_epi64x(1));
  k->double_odd = _mm256_and_si256(zero_odd, _mm256_set1_epi64x(1));
  return true;
}

// One half's 64-bit sum (p + add - 2^31 [p < neg]), doubled where e = 0.
template <bool kDouble>
__attribute__((target("avx2"))) inline __m256i RoundingSum(__m256i x, __m256i m, __m256i add,
                                                           __m256i neg, __m256i dbl) {
  const __m256i p = _mm256_mul_epi32(x, m);
  const __m256i step =
      _mm256_and_si256(_mm256_cmpgt_epi64(neg, p), _mm256_set1_epi64x(-(int64_t{1} << 31)));
  __m256i s = _mm256_add_epi64(_mm256_add_epi64(p, add), step);
  if (kDouble) s = _mm256_sllv_epi64(s, dbl);
  return s;
}

// MultiplyByQuantizedMultiplier of eight lanes x (before any zero point).
template <bool kLeft, bool kDouble>
__attribute__((target("avx2"))) inline __m256i ApplyRounding(const Rounding& k, __m256i x) {
  if (kLeft) x = _mm256_sllv_epi32(x, k.left);  // 0 for a shift of 32 or more, as the scalar
  const __m256i even = RoundingSum<kDouble>(x, k.m_even, k.add_even, k.neg_even, k.double_even);
  const __m256i odd =
      RoundingSum<kDouble>(_mm256_srli_epi64(x, 32), k.m_odd, k.add_odd, k.neg_odd, k.double_odd);
  // The high halves: the even lanes' moved down, the odd lanes' already in place.
  const __m256i high = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  return _mm256_srav_epi32(high, k.right);
}

}  // namespace avx2
}  // namespace lite
}  // namespace ember

#endif
#endif  // EMBER_SRC_LITE_REQUANT_AVX2_H_
