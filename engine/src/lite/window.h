// The geometry of a windowed NHWC op over one image (a convolution's im2col, a depthwise
// convolution's rows), shared by the kernels that walk windows, and the walk over one output
// pixel's taps that they share.
#ifndef EMBER_SRC_LITE_WINDOW_H_
#define EMBER_SRC_LITE_WINDOW_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ember {
namespace lite {

// One image of ih x iw pixels of c channels (a convolution's input channels; a depthwise
// convolution's, which are its output channels too), an output of oh x ow pixels, and a kh x kw
// window with its strides, dilations and leading padding.
struct WindowGeometry {
  int ih = 0, iw = 0, c = 0, oh = 0, ow = 0, kh = 1, kw = 1;
  int stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_h = 0, pad_w = 0;
};

// Output pixel (oy, ox)'s window at dst in (ky, kx, channel) order, c values a tap: the tap's
// pixel of `image` ([ih][iw][c]) through copy(dst, src, c) where it lies inside the image,
// `pad` where it does not.
template <typename D, typename S, typename Copy>
inline void WindowTaps(const WindowGeometry& g, const S* image, int oy, int ox, D pad, D* dst,
                       Copy copy) {
  const size_t c = static_cast<size_t>(g.c);
  const int iy0 = oy * g.stride_h - g.pad_h, ix0 = ox * g.stride_w - g.pad_w;
  for (int ky = 0; ky < g.kh; ++ky) {
    const int iy = iy0 + ky * g.dil_h;
    for (int kx = 0; kx < g.kw; ++kx) {
      const int ix = ix0 + kx * g.dil_w;
      D* d = dst + (static_cast<size_t>(ky) * g.kw + kx) * c;
      if (iy < 0 || iy >= g.ih || ix < 0 || ix >= g.iw) {
        for (size_t i = 0; i < c; ++i) d[i] = pad;
      } else {
        copy(d, image + (static_cast<size_t>(iy) * g.iw + ix) * c, c);
      }
    }
  }
}

// The in-place (no im2col) convolutions, lite's CONV_2D and the framework's Conv2D, read each
// output pixel's k values from a padded copy of the input as runs: one per filter row (kw pixels,
// contiguous) when the filter has no column dilation, else one per tap (one pixel each). They
// take that path for at most kMaxInPlaceRuns runs.
constexpr int kMaxInPlaceRuns = 64;

inline int64_t InPlaceRunCount(int64_t kh, int64_t kw, int64_t dil_w) {
  return dil_w == 1 ? kh : kh * kw;
}

// The runs' offsets from a window's top-left pixel in the padded image (`prow` elements per
// image row, `pixel` per pixel), in the (ky, kx, channel) order of the packed weights' k;
// returns how many (InPlaceRunCount).
inline int InPlaceRuns(int kh, int kw, int dil_h, int dil_w, size_t prow, size_t pixel,
                       ptrdiff_t* run) {
  const int n = static_cast<int>(InPlaceRunCount(kh, kw, dil_w));
  for (int s = 0; s < n; ++s) {
    const int ky = dil_w == 1 ? s : s / kw, kx = dil_w == 1 ? 0 : s % kw;
    run[s] = static_cast<ptrdiff_t>(static_cast<size_t>(ky) * static_cast<size_t>(dil_h) * prow +
                                    static_cast<size_t>(kx) * static_cast<size_t>(dil_w) * pixel);
  }
  return n;
}

// The padded image's extent along one axis (rows or columns): the input after its leading
// padding, or as far as the last window reaches (its dilated extent), whichever is further.
inline int64_t InPlaceExtent(int64_t in, int64_t pad, int64_t out, int64_t stride, int64_t k,
                             int64_t dil) {
  return std::max(in + pad, (out - 1) * stride + (k - 1) * dil + 1);
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_WINDOW_H_
