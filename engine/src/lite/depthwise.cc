// Depthwise rows (see depthwise.h): the channel loop is innermost and contiguous in input,
// weights and accumulators, so the compiler vectorises it: an AVX2 and a baseline build, chosen
// by lite/loop_isa.h (AVX-512 CPUs run the AVX2 build, see below).
#include "lite/depthwise.h"

#include <algorithm>
#include <cstddef>

#include "lite/loop_isa.h"

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
    // No AVX-512 float row: AVX-512F brings fused multiply-adds, which GCC contracts into and
    // which round differently. The target_clones ran their "avx2" clone (no FMA) on every CPU
    // but Skylake-SP (an "arch=" clone is chosen by CPU model), so one unfused rounding on every
    // path keeps the float outputs as they were.
    case LoopIsa::kAvx512:
    case LoopIsa::kAvx2:
      return RowF32Avx2(g, x, w, bias, lo, hi, oy, y);
#endif
    default:
      return RowF32Generic(g, x, w, bias, lo, hi, oy, y);
  }
}

}  // namespace lite
}  // namespace ember
