// AVX-512 requantization in registers, shared by lite's int8 GEMM and depthwise kernels:
// per-lane MultiplyByQuantizedMultiplier with TFLite's double rounding (or the single-rounding
// variant), the same integers as ember/lite/quant.h. x86-64 only; include it under
// EMBER_LITE_X86-style guards.
#ifndef EMBER_SRC_LITE_REQUANT_AVX512_H_
#define EMBER_SRC_LITE_REQUANT_AVX512_H_

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <climits>
#include <cstdint>

// clang 18 to 21 split 512-bit vectors out of the avx512* features ("evex512"; zig 0.15's clang
// 20 for macOS needs it); gcc, older clangs and clang 22 (zig 0.17) reject the name.
#if defined(__clang__) && __clang_major__ >= 18 && __clang_major__ < 22
#define EMBER_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,evex512")))
#else
#define EMBER_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#endif

namespace ember {
namespace lite {
namespace avx512 {

EMBER_VNNI_TARGET inline __m512i SingleHalf(__m512i xs, __m512i ms, __m512i t) {
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i prod = _mm512_mul_epi32(xs, ms);
  const __m512i round = _mm512_sllv_epi64(one, _mm512_sub_epi64(t, one));
  return _mm512_srav_epi64(_mm512_add_epi64(prod, round), t);
}

// Per-lane MultiplyByQuantizedMultiplier (double rounding) or its single-rounding variant.
EMBER_VNNI_TARGET inline __m512i RequantLanes(__m512i x, __m512i m, __m512i shift, bool single) {
  const __m512i zero = _mm512_setzero_si512();
  if (single) {
    // (x * m + 2^(30 - s)) >> (31 - s) in 64-bit lanes.
    const __m512i total = _mm512_sub_epi32(_mm512_set1_epi32(31), shift);
    const __m512i tot_even = _mm512_and_si512(total, _mm512_set1_epi64(0xffffffff));
    const __m512i tot_odd = _mm512_srli_epi64(total, 32);
    const __m512i even = SingleHalf(x, m, tot_even);
    const __m512i odd = SingleHalf(_mm512_srli_epi64(x, 32), _mm512_srli_epi64(m, 32), tot_odd);
    return _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  }
  const __m512i left = _mm512_max_epi32(shift, zero);
  // RoundingDivideByPOT caps its exponent at 31.
  const __m512i right = _mm512_min_epi32(_mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero),
                                         _mm512_set1_epi32(31));
  x = _mm512_sllv_epi32(x, left);
  // SRDHM: TFLite's (p + nudge) / 2^31, truncating toward zero, with nudge 2^30 or 1 - 2^30 by
  // the sign of p = x * m, is floor((p + 2^30) / 2^31) for either sign: an arithmetic shift.
  // Even lanes keep that in their low halves (srli), odd lanes in their high halves (<< 1).
  const __m512i half = _mm512_set1_epi64(1LL << 30);
  const __m512i even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, m), half), 31);
  const __m512i odd = _mm512_slli_epi64(
      _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), _mm512_srli_epi64(m, 32)), half),
      1);
  __m512i r = _mm512_mask_blend_epi32(0xAAAA, even, odd);
  // Saturation case of SRDHM: x == m == INT32_MIN gives 2^31, which wraps to INT32_MIN; no
  // other product gets there (the least one is above -2^62 + 2^31), so INT32_MIN means it.
  const __m512i mn = _mm512_set1_epi32(INT32_MIN);
  r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(r, mn), _mm512_set1_epi32(INT32_MAX));
  // RoundingDivideByPOT with per-lane exponents.
  const __m512i mask =
      _mm512_sub_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), right), _mm512_set1_epi32(1));
  const __m512i rem = _mm512_and_si512(r, mask);
  const __mmask16 rneg = _mm512_cmplt_epi32_mask(r, zero);
  const __m512i thr = _mm512_mask_add_epi32(_mm512_srai_epi32(mask, 1), rneg,
                                            _mm512_srai_epi32(mask, 1), _mm512_set1_epi32(1));
  const __mmask16 up = _mm512_cmpgt_epi32_mask(rem, thr);
  r = _mm512_srav_epi32(r, right);
  return _mm512_mask_add_epi32(r, up, r, _mm512_set1_epi32(1));
}

}  // namespace avx512
}  // namespace lite
}  // namespace ember

#endif  // x86-64
#endif  // EMBER_SRC_LITE_REQUANT_AVX512_H_
