// AVX-512 depthwise rows (depth multiplier 1): 16 channels per vector, held in a register over
// every tap, then (int8) requantized in registers and stored with a byte mask. The int8 sum is
// an exact integer and the float sum adds taps in the reference order (multiply, then add: no
// fused rounding), so both give the portable loop's results.
#include "lite/depthwise.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports false "(may be) used uninitialized" inside its own avx512fintrin.h (the
// _mm512_undefined_epi32 operand of inlined intrinsics).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstddef>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "lite/requant_avx512.h"
#define EMBER_DW_X86 1
#endif

namespace ember {
namespace lite {

#ifdef EMBER_DW_X86

namespace {

constexpr int kMaxTaps = 64;

// The taps of output column ox that fall inside the image: input offsets (in elements, from
// the image start) and tap indices. Returns their count.
int ValidTaps(const DepthwiseGeometry& g, int oy, int ox, size_t* x_off, int* tap) {
  int n = 0;
  const int iy0 = oy * g.stride_h - g.pad_h, ix0 = ox * g.stride_w - g.pad_w;
  for (int ky = 0; ky < g.kh; ++ky) {
    const int iy = iy0 + ky * g.dil_h;
    if (iy < 0 || iy >= g.ih) continue;
    for (int kx = 0; kx < g.kw; ++kx) {
      const int ix = ix0 + kx * g.dil_w;
      if (ix < 0 || ix >= g.iw) continue;
      x_off[n] = (static_cast<size_t>(iy) * g.iw + ix) * g.c;
      tap[n++] = ky * g.kw + kx;
    }
  }
  return n;
}

inline __mmask16 Mask(int left) {
  return static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1u);
}

}  // namespace

bool DepthwiseAvx512Usable(const DepthwiseGeometry& g) { return g.kh * g.kw <= kMaxTaps; }

EMBER_VNNI_TARGET void DepthwiseRowI8Avx512(const DepthwiseGeometry& g, const int8_t* x,
                                            const int32_t* w32, int32_t in_zp,
                                            const DepthwiseRequant& q, int oy, int8_t* y) {
  size_t x_off[kMaxTaps];
  int tap[kMaxTaps];
  const int cpad = (g.c + 15) / 16 * 16;
  const __m512i zp_in = _mm512_set1_epi32(in_zp);
  const __m512i zp_out = _mm512_set1_epi32(q.out_zp);
  const __m512i lo = _mm512_set1_epi32(q.act_min), hi = _mm512_set1_epi32(q.act_max);
  for (int ox = 0; ox < g.ow; ++ox) {
    const int n = ValidTaps(g, oy, ox, x_off, tap);
    int8_t* yo = y + static_cast<size_t>(ox) * g.c;
    for (int c = 0; c < g.c; c += 16) {
      const __mmask16 m = Mask(g.c - c);
      __m512i acc = _mm512_setzero_si512();
      for (int t = 0; t < n; ++t) {
        const __m128i xb = _mm_maskz_loadu_epi8(m, x + x_off[t] + c);
        const __m512i xv = _mm512_sub_epi32(_mm512_cvtepi8_epi32(xb), zp_in);
        const __m512i wv = _mm512_loadu_si512(w32 + static_cast<size_t>(tap[t]) * cpad + c);
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(xv, wv));
      }
      acc = _mm512_add_epi32(acc, _mm512_maskz_loadu_epi32(m, q.bias + c));
      __m512i v = avx512::RequantLanes(acc, _mm512_maskz_loadu_epi32(m, q.mult + c),
                                       _mm512_maskz_loadu_epi32(m, q.shift + c), false);
      v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zp_out), lo), hi);
      _mm512_mask_cvtepi32_storeu_epi8(yo + c, m, v);
    }
  }
}

EMBER_VNNI_TARGET void DepthwiseRowF32Avx512(const DepthwiseGeometry& g, const float* x,
                                             const float* w, const float* bias, float lo, float hi,
                                             int oy, float* y) {
  size_t x_off[kMaxTaps];
  int tap[kMaxTaps];
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (int ox = 0; ox < g.ow; ++ox) {
    const int n = ValidTaps(g, oy, ox, x_off, tap);
    float* yo = y + static_cast<size_t>(ox) * g.c;
    for (int c = 0; c < g.c; c += 16) {
      const __mmask16 m = Mask(g.c - c);
      __m512 acc = _mm512_setzero_ps();
      for (int t = 0; t < n; ++t) {
        const __m512 xv = _mm512_maskz_loadu_ps(m, x + x_off[t] + c);
        const __m512 wv = _mm512_maskz_loadu_ps(m, w + static_cast<size_t>(tap[t]) * g.c + c);
        acc = _mm512_add_ps(acc, _mm512_mul_ps(xv, wv));
      }
      if (bias != nullptr) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(m, bias + c));
      _mm512_mask_storeu_ps(yo + c, m, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc)));
    }
  }
}

#else

bool DepthwiseAvx512Usable(const DepthwiseGeometry&) { return false; }
void DepthwiseRowI8Avx512(const DepthwiseGeometry&, const int8_t*, const int32_t*, int32_t,
                          const DepthwiseRequant&, int, int8_t*) {}
void DepthwiseRowF32Avx512(const DepthwiseGeometry&, const float*, const float*, const float*,
                           float, float, int, float*) {}

#endif

}  // namespace lite
}  // namespace ember
