// Depthwise rows (see depthwise.h): the channel loop is innermost and contiguous in input,
// weights and accumulators, so the compiler vectorises it: an AVX2 and a baseline build, chosen
// by lite/loop_isa.h (AVX-512 CPUs run the AVX2 build, see below).
#include "lite/depthwise.h"

#include <algorithm>
#include <cstddef>

#include "lite/loop_isa.h"

#ifdef EMBER_LOOP_X86
#include <immintrin.h>
#endif

namespace ember {
namespace lite {
namespace {

EMBER_LOOP_BODY void RowI8(const DepthwiseGeometry& g, const int8_t* x, const int8_t* w,
                           int32_t in_zp, int oy, int32_t* acc) {
  const int c = g.c;
  const int iy0 = oy * g.stride_h - g.pad_h;
  for (int ox = 0; ox < g.ow; ++ox) {
    int32_t* a = acc + static_cast<size_t>(ox) * c;
    for (int ch = 0; ch < c; ++ch) a[ch] = 0;
    const int ix0 = ox * g.stride_w - g.pad_w;
    for (int ky = 0; ky < g.kh; ++ky) {
      const int iy = iy0 + ky * g.dil_h;
      if (iy < 0 || iy >= g.ih) continue;
      for (int kx = 0; kx < g.kw; ++kx) {
        const int ix = ix0 + kx * g.dil_w;
        if (ix < 0 || ix >= g.iw) continue;
        const int8_t* xs = x + (static_cast<size_t>(iy) * g.iw + ix) * c;
        const int8_t* ws = w + (static_cast<size_t>(ky) * g.kw + kx) * c;
        for (int ch = 0; ch < c; ++ch) {
          a[ch] += static_cast<int32_t>(ws[ch]) * (static_cast<int32_t>(xs[ch]) - in_zp);
        }
      }
    }
  }
}

EMBER_LOOP_BODY void RowF32(const DepthwiseGeometry& g, const float* x, const float* w,
                            const float* bias, float lo, float hi, int oy, float* y) {
  const int c = g.c;
  const int iy0 = oy * g.stride_h - g.pad_h;
  for (int ox = 0; ox < g.ow; ++ox) {
    float* a = y + static_cast<size_t>(ox) * c;
    for (int ch = 0; ch < c; ++ch) a[ch] = 0.0f;
    const int ix0 = ox * g.stride_w - g.pad_w;
    for (int ky = 0; ky < g.kh; ++ky) {
      const int iy = iy0 + ky * g.dil_h;
      if (iy < 0 || iy >= g.ih) continue;
      for (int kx = 0; kx < g.kw; ++kx) {
        const int ix = ix0 + kx * g.dil_w;
        if (ix < 0 || ix >= g.iw) continue;
        const float* xs = x + (static_cast<size_t>(iy) * g.iw + ix) * c;
        const float* ws = w + (static_cast<size_t>(ky) * g.kw + kx) * c;
        for (int ch = 0; ch < c; ++ch) a[ch] += xs[ch] * ws[ch];
      }
    }
    for (int ch = 0; ch < c; ++ch) {
      a[ch] = std::min(hi, std::max(lo, a[ch] + (bias != nullptr ? bias[ch] : 0.0f)));
    }
  }
}

void RowI8Generic(const DepthwiseGeometry& g, const int8_t* x, const int8_t* w, int32_t in_zp,
                  int oy, int32_t* acc) {
  RowI8(g, x, w, in_zp, oy, acc);
}

void RowF32Generic(const DepthwiseGeometry& g, const float* x, const float* w, const float* bias,
                   float lo, float hi, int oy, float* y) {
  RowF32(g, x, w, bias, lo, hi, oy, y);
}

#ifdef EMBER_LOOP_X86
EMBER_LOOP_AVX2 void RowI8Avx2(const DepthwiseGeometry& g, const int8_t* x, const int8_t* w,
                               int32_t in_zp, int oy, int32_t* acc) {
  RowI8(g, x, w, in_zp, oy, acc);
}

EMBER_LOOP_AVX2 void RowF32Avx2(const DepthwiseGeometry& g, const float* x, const float* w,
                                const float* bias, float lo, float hi, int oy, float* y) {
  RowF32(g, x, w, bias, lo, hi, oy, y);
}

// int8 3x3 rows without dilation, channels a multiple of 16: exact int32 sums, the loop's.
// Per block of 16 channels, two taps at a time: their (x - zero point) as int16, interleaved
// (VPUNPCKL/HWD) with the two taps' weights likewise, one VPMADDWD adds both products per
// channel. The interleave leaves channels {0-3, 8-11} in one accumulator and {4-7, 12-15} in the
// other, put back in order at the store. Taps in the padding are skipped (they add nothing).
bool Row3x3I8Fits(const DepthwiseGeometry& g) {
  return g.kh == 3 && g.kw == 3 && g.dil_h == 1 && g.dil_w == 1 && g.c % 16 == 0 && g.c > 0;
}

// 16 int8 values as int16, less the zero point.
__attribute__((target("avx2"))) inline __m256i WidenLessZp(const int8_t* p, __m256i zp) {
  return _mm256_sub_epi16(
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), zp);
}

__attribute__((target("avx2"))) void Row3x3I8Avx2(const DepthwiseGeometry& g, const int8_t* x,
                                                  const int8_t* w, int32_t in_zp, int oy,
                                                  int32_t* acc) {
  const size_t c = static_cast<size_t>(g.c);
  const int iy0 = oy * g.stride_h - g.pad_h;
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(in_zp));
  for (size_t ch = 0; ch < c; ch += 16) {
    // Weight pairs (taps 2q, 2q + 1; tap 9 is zero), interleaved as the inputs will be.
    __m256i wlo[5], whi[5];
    for (int q = 0; q < 5; ++q) {
      const __m256i a = _mm256_cvtepi8_epi16(_mm_loadu_si128(
          reinterpret_cast<const __m128i*>(w + static_cast<size_t>(2 * q) * c + ch)));
      const __m256i b = q < 4
                            ? _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
                                  w + static_cast<size_t>(2 * q + 1) * c + ch)))
                            : _mm256_setzero_si256();
      wlo[q] = _mm256_unpacklo_epi16(a, b);
      whi[q] = _mm256_unpackhi_epi16(a, b);
    }
    for (int ox = 0; ox < g.ow; ++ox) {
      const int ix0 = ox * g.stride_w - g.pad_w;
      // The nine taps' inputs (zero where in the padding: x - zp = 0 adds nothing).
      __m256i xv[10];
      for (int t = 0; t < 9; ++t) {
        const int iy = iy0 + t / 3, ix = ix0 + t % 3;
        xv[t] = iy >= 0 && iy < g.ih && ix >= 0 && ix < g.iw
                    ? WidenLessZp(x + (static_cast<size_t>(iy) * g.iw + ix) * c + ch, zp)
                    : _mm256_setzero_si256();
      }
      xv[9] = _mm256_setzero_si256();
      __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
      for (int q = 0; q < 5; ++q) {
        lo = _mm256_add_epi32(
            lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(xv[2 * q], xv[2 * q + 1]), wlo[q]));
        hi = _mm256_add_epi32(
            hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(xv[2 * q], xv[2 * q + 1]), whi[q]));
      }
      int32_t* a = acc + static_cast<size_t>(ox) * c + ch;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(a), _mm256_permute2x128_si256(lo, hi, 0x20));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(a + 8),
                          _mm256_permute2x128_si256(lo, hi, 0x31));
    }
  }
}

// 3x3 rows without dilation, channels a multiple of 8 (MobileNet's): for each block of 8
// channels the nine weights, the bias and the clamp stay in registers over the whole row, and
// each output is one accumulator, bias first and then the taps inside the image in (ky, kx)
// order, fused multiply-adds: the AVX-512 row's order and rounding (DepthwiseRowF32Avx512).
// The loop above reads and writes every output once per tap.
bool Row3x3F32Fits(const DepthwiseGeometry& g) {
  return g.kh == 3 && g.kw == 3 && g.dil_h == 1 && g.dil_w == 1 && g.c % 8 == 0 && g.c > 0;
}

__attribute__((target("avx2,fma"))) void Row3x3F32Avx2(const DepthwiseGeometry& g, const float* x,
                                                       const float* w, const float* bias, float lo,
                                                       float hi, int oy, float* y) {
  const size_t c = static_cast<size_t>(g.c);
  const float* rows[3];
  const int iy0 = oy * g.stride_h - g.pad_h;
  for (int ky = 0; ky < 3; ++ky) {
    const int iy = iy0 + ky;
    rows[ky] = iy >= 0 && iy < g.ih ? x + static_cast<size_t>(iy) * g.iw * c : nullptr;
  }
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (size_t ch = 0; ch < c; ch += 8) {
    __m256 wv[9];
    for (int t = 0; t < 9; ++t) wv[t] = _mm256_loadu_ps(w + static_cast<size_t>(t) * c + ch);
    const __m256 b = bias != nullptr ? _mm256_loadu_ps(bias + ch) : _mm256_setzero_ps();
    for (int ox = 0; ox < g.ow; ++ox) {
      const int ix0 = ox * g.stride_w - g.pad_w;
      __m256 acc = b;
      if (ix0 >= 0 && ix0 + 2 < g.iw) {
        for (int ky = 0; ky < 3; ++ky) {
          if (rows[ky] == nullptr) continue;
          const float* p = rows[ky] + static_cast<size_t>(ix0) * c + ch;
          acc = _mm256_fmadd_ps(_mm256_loadu_ps(p), wv[3 * ky], acc);
          acc = _mm256_fmadd_ps(_mm256_loadu_ps(p + c), wv[3 * ky + 1], acc);
          acc = _mm256_fmadd_ps(_mm256_loadu_ps(p + 2 * c), wv[3 * ky + 2], acc);
        }
      } else {
        for (int ky = 0; ky < 3; ++ky) {
          if (rows[ky] == nullptr) continue;
          for (int kx = 0; kx < 3; ++kx) {
            const int ix = ix0 + kx;
            if (ix < 0 || ix >= g.iw) continue;
            const float* p = rows[ky] + static_cast<size_t>(ix) * c + ch;
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(p), wv[3 * ky + kx], acc);
          }
        }
      }
      _mm256_storeu_ps(y + static_cast<size_t>(ox) * c + ch,
                       _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc)));
    }
  }
}
#endif

}  // namespace

void DepthwiseRowI8(const DepthwiseGeometry& g, const int8_t* x, const int8_t* w, int32_t in_zp,
                    int oy, int32_t* acc) {
  switch (ActiveLoopIsa()) {
#ifdef EMBER_LOOP_X86
    // The AVX-512 build of this row measured 5% slower than the AVX2 one on the AMD EPYC build
    // machine (AVX-512 VNNI CPUs run DepthwiseRowI8Avx512 where it applies).
    case LoopIsa::kAvx512:
    case LoopIsa::kAvx2:
      if (Row3x3I8Fits(g)) return Row3x3I8Avx2(g, x, w, in_zp, oy, acc);
      return RowI8Avx2(g, x, w, in_zp, oy, acc);
#endif
    default:
      return RowI8Generic(g, x, w, in_zp, oy, acc);
  }
}

void DepthwiseRowF32(const DepthwiseGeometry& g, const float* x, const float* w, const float* bias,
                     float lo, float hi, int oy, float* y) {
  switch (ActiveLoopIsa()) {
#ifdef EMBER_LOOP_X86
    // 3x3 rows (MobileNet's) run Row3x3F32Avx2: fused multiply-adds in the AVX-512 row's order.
    // Other shapes: no AVX-512 build of the loop, whose fused multiply-adds GCC would contract
    // into and round differently; the AVX2 build (no FMA) keeps them as they were.
    case LoopIsa::kAvx512:
    case LoopIsa::kAvx2:
      if (Row3x3F32Fits(g)) return Row3x3F32Avx2(g, x, w, bias, lo, hi, oy, y);
      return RowF32Avx2(g, x, w, bias, lo, hi, oy, y);
#endif
    default:
      return RowF32Generic(g, x, w, bias, lo, hi, oy, y);
  }
}

}  // namespace lite
}  // namespace ember
