// Depthwise rows (see depthwise.h): the channel loop is innermost and contiguous in input,
// weights and accumulators, so the compiler vectorises it for each target clone.
#include "lite/depthwise.h"

#include <algorithm>
#include <cstddef>

namespace ember {
namespace lite {

#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__) && (defined(__GNUC__) || defined(__clang__))
#define EMBER_DW_CLONES __attribute__((target_clones("arch=skylake-avx512", "avx2", "default")))
#else
#define EMBER_DW_CLONES
#endif

EMBER_DW_CLONES
void DepthwiseRowI8(const DepthwiseGeometry& g, const int8_t* x, const int8_t* w, int32_t in_zp,
                    int oy, int32_t* acc) {
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

EMBER_DW_CLONES
void DepthwiseRowF32(const DepthwiseGeometry& g, const float* x, const float* w, const float* bias,
                     float lo, float hi, int oy, float* y) {
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

}  // namespace lite
}  // namespace ember
