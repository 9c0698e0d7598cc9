// The geometry of a windowed NHWC op over one image (a convolution's im2col, a depthwise
// convolution's rows), shared by the kernels that walk windows, and the walk over one output
// pixel's taps that they share.
#ifndef EMBER_SRC_LITE_WINDOW_H_
#define EMBER_SRC_LITE_WINDOW_H_

#include <cstddef>

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

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_WINDOW_H_
