// AVX-512 forms of vec_math.h's functions where the compiler's vectorised loops fall short, and
// the float softmax's row passes built on them. Each agrees with its portable form to within
// an ulp or two (the same reductions and polynomials; FMA contraction may differ). x86-64 Linux
// only (lite/loop_isa.h's EMBER_LOOP_X86); callers choose them when ActiveLoopIsa() is kAvx512.
//
// ExpNonPositive16 is ExpNonPositiveF's reduction and polynomial, with 2^n applied by vscalefps
// (n from vrndscaleps): 16 values a vector in about 16 instructions. Measured on Zen 4, one
// thread, 75264 values: LOGISTIC 1.30 cycles a value (GCC's loop over LogisticF: 2.00 in 256-bit
// vectors, 1.51 in 512-bit ones), TANH 1.68 (2.33, 1.81). A division costs no more than
// vrcp14ps and a Newton step there (both measured), so the divisions stay.
#ifndef EMBER_SRC_LITE_VEC_MATH_AVX512_H_
#define EMBER_SRC_LITE_VEC_MATH_AVX512_H_

#include <cstdint>

#include "lite/loop_isa.h"
#include "lite/vec_math.h"

#ifdef EMBER_LOOP_X86
#include <immintrin.h>

namespace ember {
namespace lite {
namespace avx512 {

// The first min(left, 16) lanes.
EMBER_LOOP_AVX512 inline __mmask16 FloatLanes(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

// vec_math.h's Horner, lane by lane (one fused multiply-add a step).
template <int N>
EMBER_LOOP_AVX512 inline __m512 Horner16(__m512 x, const float (&c)[N]) {
  __m512 p = _mm512_set1_ps(c[0]);
  for (int i = 1; i < N; ++i) p = _mm512_fmadd_ps(p, x, _mm512_set1_ps(c[i]));
  return p;
}

// e^x for x <= 0, lane by lane as ExpNonPositiveF: 0 below -87.3, NaN kept.
EMBER_LOOP_AVX512 inline __m512 ExpNonPositive16(__m512 x) {
  const __m512 floor = _mm512_set1_ps(-87.3f);
  const __m512 c = _mm512_max_ps(floor, x);  // x where x is NaN (the second operand)
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(c, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), c);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  const __m512 q = Horner16(r, kExpPoly);
  const __m512 er = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(q, r), r, r), _mm512_set1_ps(1.0f));
  const __m512 e = _mm512_scalef_ps(er, n);
  // 0 where x < -87.3 (ordered: NaN lanes keep e, which is NaN).
  return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, floor, _CMP_LT_OQ), _mm512_setzero_ps());
}

// LogisticF lane by lane: one exponential of -|x|, 1 / (1 + e) or e / (1 + e); 1 above
// 16.619047, e^x below -9 (LiteRT's reference cutoffs); NaN kept.
EMBER_LOOP_AVX512 inline __m512 Logistic16(__m512 x) {
  const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 e = ExpNonPositive16(_mm512_or_ps(x, _mm512_set1_ps(-0.0f)));  // e^-|x|
  const __m512 r = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(e, _mm512_set1_ps(1.0f)));
  __m512 y = _mm512_mask_mul_ps(r, neg, e, r);
  y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, _mm512_set1_ps(-9.0f), _CMP_LT_OQ), e);
  return _mm512_mask_mov_ps(
      y, _mm512_cmp_ps_mask(x, _mm512_set1_ps(16.619047164916992188f), _CMP_GT_OQ),
      _mm512_set1_ps(1.0f));
}

// TanhF lane by lane: x + x^3 P(x^2) for |x| <= 0.625, else (1 - e) / (1 + e) with
// e = e^(-2|x|) and x's sign; NaN kept.
EMBER_LOOP_AVX512 inline __m512 Tanh16(__m512 x) {
  const __m512 sign = _mm512_set1_ps(-0.0f);
  const __m512 ax = _mm512_andnot_ps(sign, x);
  const __m512 z = _mm512_mul_ps(x, x);
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(Horner16(z, kTanhPoly), z), x, x);
  const __m512 e = ExpNonPositive16(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 big = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  const __m512 signed_big = _mm512_or_ps(big, _mm512_and_ps(x, sign));
  return _mm512_mask_mov_ps(signed_big, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.625f), _CMP_LE_OQ),
                            small);
}

// OnePlusErfF lane by lane (the same polynomials), its parts computed only where a lane needs
// them: the erfc form (an exponential and a division) when a lane has |t| >= 1, its second
// polynomial when one has |t| >= 2. GELU's inputs mostly lie within |t| < 2. Measured on Zen 4,
// one thread, GELU over 98304 values: 91 us with GCC's loop over OnePlusErfF for any input;
// here 70 us for x ~ N(0, 1), 84 us for N(0, 4), 25 us for N(0, 0.5) (most vectors then need
// only the polynomial).
EMBER_LOOP_AVX512 inline __m512 OnePlusErf16(__m512 t) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 a = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), t);
  const __m512 z = _mm512_mul_ps(t, t);
  const __m512 small = _mm512_fmadd_ps(t, Horner16(z, kErfPoly), one);
  // Lanes past the polynomial (|t| >= 1 or NaN: not ordered below 1).
  const __mmask16 far = _mm512_cmp_ps_mask(a, one, _CMP_NLT_UQ);
  if (far == 0) return small;
  const __m512 q = _mm512_div_ps(one, _mm512_max_ps(a, one));
  const __m512 y = _mm512_mul_ps(q, q);
  __m512 p = Horner16(y, kErfcNearPoly);
  const __mmask16 beyond2 = _mm512_cmp_ps_mask(a, _mm512_set1_ps(2.0f), _CMP_GE_OQ);
  if (beyond2 != 0) {
    const __m512 r = Horner16(y, kErfcFarPoly);
    p = _mm512_mask_mov_ps(p, beyond2, r);
  }
  const __m512 c =
      _mm512_mul_ps(_mm512_mul_ps(ExpNonPositive16(_mm512_sub_ps(_mm512_setzero_ps(), z)), q), p);
  const __mmask16 positive = _mm512_cmp_ps_mask(t, _mm512_setzero_ps(), _CMP_GT_OQ);
  __m512 big = _mm512_mask_sub_ps(c, positive, _mm512_set1_ps(2.0f), c);
  big = _mm512_mask_mov_ps(big, _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q), t);  // NaN kept
  return _mm512_mask_mov_ps(small, far, big);
}

// GELU's exact form lane by lane: 0.5 x (1 + erf(x / sqrt 2)).
EMBER_LOOP_AVX512 inline __m512 Gelu16(__m512 v) {
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v),
                       OnePlusErf16(_mm512_mul_ps(v, _mm512_set1_ps(0.7071067811865476f))));
}

// y = F(x) over n values, 16 at a time; only the last vector masked (a masked store costs
// several plain ones on Zen 4: masking every vector took LOGISTIC from 1.24 to 1.51 cycles a
// value).
template <__m512 (*F)(__m512)>
EMBER_LOOP_AVX512 inline void MapRow16(const float* x, int64_t n, float* y) {
  int64_t c = 0;
  for (; c + 16 <= n; c += 16) _mm512_storeu_ps(y + c, F(_mm512_loadu_ps(x + c)));
  if (c < n) {
    const __mmask16 live = FloatLanes(n - c);
    _mm512_mask_storeu_ps(y + c, live, F(_mm512_maskz_loadu_ps(live, x + c)));
  }
}

// max over x[0, n): a NaN never wins (vmaxps returns its second operand, the running maximum,
// when the value is NaN), as the portable RowMax.
EMBER_LOOP_AVX512 inline float SoftmaxRowMax(const float* x, int64_t n) {
  const __m512 lowest = _mm512_set1_ps(-3.40282347e+38f);
  __m512 m0 = lowest, m1 = lowest;
  int64_t c = 0;
  for (; c + 32 <= n; c += 32) {
    m0 = _mm512_max_ps(_mm512_loadu_ps(x + c), m0);
    m1 = _mm512_max_ps(_mm512_loadu_ps(x + c + 16), m1);
  }
  for (; c < n; c += 16) {
    const __mmask16 live = FloatLanes(n - c);
    m0 = _mm512_mask_max_ps(m0, live, _mm512_maskz_loadu_ps(live, x + c), m0);
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(m1, m0));
}

// y[c] = e^((x[c] - mx) * beta) for c < n, beta >= 0; returns their sum when `sum` is set. The
// sum's order depends only on n (two accumulators over 32-value blocks from c = 0, the rest
// into the first, then one reduction), so a row split into chunks whose exponentials are made
// apart and summed by SoftmaxRowSum gets the same sum.
template <bool kSum>
EMBER_LOOP_AVX512 inline float SoftmaxRowExp(const float* x, float mx, float beta, int64_t n,
                                             float* y) {
  const __m512 vm = _mm512_set1_ps(mx), vb = _mm512_set1_ps(beta);
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  int64_t c = 0;
  for (; c + 32 <= n; c += 32) {
    const __m512 e0 =
        ExpNonPositive16(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + c), vm), vb));
    const __m512 e1 =
        ExpNonPositive16(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + c + 16), vm), vb));
    _mm512_storeu_ps(y + c, e0);
    _mm512_storeu_ps(y + c + 16, e1);
    if (kSum) {
      s0 = _mm512_add_ps(s0, e0);
      s1 = _mm512_add_ps(s1, e1);
    }
  }
  for (; c < n; c += 16) {
    const __mmask16 live = FloatLanes(n - c);
    const __m512 e =
        ExpNonPositive16(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(live, x + c), vm), vb));
    _mm512_mask_storeu_ps(y + c, live, e);
    if (kSum) s0 = _mm512_mask_add_ps(s0, live, s0, e);
  }
  return kSum ? _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) : 0.0f;
}

// The sum of y[0, n) in SoftmaxRowExp's order.
EMBER_LOOP_AVX512 inline float SoftmaxRowSum(const float* y, int64_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  int64_t c = 0;
  for (; c + 32 <= n; c += 32) {
    s0 = _mm512_add_ps(s0, _mm512_loadu_ps(y + c));
    s1 = _mm512_add_ps(s1, _mm512_loadu_ps(y + c + 16));
  }
  for (; c < n; c += 16) {
    const __mmask16 live = FloatLanes(n - c);
    s0 = _mm512_mask_add_ps(s0, live, s0, _mm512_maskz_loadu_ps(live, y + c));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

// y[c] *= scale for c < n.
EMBER_LOOP_AVX512 inline void ScaleRow(float* y, int64_t n, float scale) {
  const __m512 s = _mm512_set1_ps(scale);
  int64_t c = 0;
  for (; c + 16 <= n; c += 16) _mm512_storeu_ps(y + c, _mm512_mul_ps(_mm512_loadu_ps(y + c), s));
  if (c < n) {
    const __mmask16 live = FloatLanes(n - c);
    _mm512_mask_storeu_ps(y + c, live, _mm512_mul_ps(_mm512_maskz_loadu_ps(live, y + c), s));
  }
}

}  // namespace avx512
}  // namespace lite
}  // namespace ember

#endif  // EMBER_LOOP_X86
#endif  // EMBER_SRC_LITE_VEC_MATH_AVX512_H_
