// AVX-512 int8 ADD (see add_int8.h): the same integer steps as the scalar kernel, lane by lane,
// with the double-rounding requantization doing MultiplyByQuantizedMultiplierSmallerThanOne (a
// shift <= 0 leaves only the rounding right shift), its constants made once per call. Its
// plain form: QuantizeMultiplierSmallerThanOne's multipliers lie in [2^30, 2^31), never
// INT32_MIN, and the shifts are <= 0 (the caller checks both), so no left shift or cap.
#include "lite/add_int8.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports false "(may be) used uninitialized" inside its own avx512fintrin.h (the
// _mm512_undefined_epi32 operand of inlined intrinsics).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "lite/requant_avx512.h"
#define EMBER_ADD_X86 1
#endif

namespace ember {
namespace lite {

#ifdef EMBER_ADD_X86

EMBER_VNNI_TARGET void AddI8Avx512(const int8_t* a, const int8_t* b, size_t n, const AddI8Params& p,
                                   int8_t* y) {
  const __m512i zp1 = _mm512_set1_epi32(p.in_zp), zp2 = _mm512_set1_epi32(p.in2_zp);
  const __m128i left = _mm_cvtsi32_si128(p.left_shift);
  const avx512::DoubleRounding k1 =
      avx512::MakeDoubleRounding(_mm512_set1_epi32(p.m1), _mm512_set1_epi32(p.s1));
  const avx512::DoubleRounding k2 =
      avx512::MakeDoubleRounding(_mm512_set1_epi32(p.m2), _mm512_set1_epi32(p.s2));
  const avx512::DoubleRounding ko =
      avx512::MakeDoubleRounding(_mm512_set1_epi32(p.multiplier), _mm512_set1_epi32(p.shift));
  const __m512i zpo = _mm512_set1_epi32(p.out_zp);
  const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m =
        n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512i xa = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, a + i));
    const __m512i xb = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, b + i));
    const __m512i ra =
        avx512::ApplyDoubleRounding<true>(k1, _mm512_sll_epi32(_mm512_sub_epi32(xa, zp1), left));
    const __m512i rb =
        avx512::ApplyDoubleRounding<true>(k2, _mm512_sll_epi32(_mm512_sub_epi32(xb, zp2), left));
    __m512i v = avx512::ApplyDoubleRounding<true>(ko, _mm512_add_epi32(ra, rb));
    v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zpo), lo), hi);
    _mm512_mask_cvtepi32_storeu_epi8(y + i, m, v);
  }
}

#else

void AddI8Avx512(const int8_t*, const int8_t*, size_t, const AddI8Params&, int8_t*) {}

#endif

}  // namespace lite
}  // namespace ember
