// What the resize kernels share (image_ops.cc: bilinear, nearest; image_resize_extra_ops.cc:
// bicubic, area): TensorFlow's ImageResizerState checks and scales, and the shape function.
#ifndef EMBER_KERNELS_CPU_RESIZE_UTIL_H_
#define EMBER_KERNELS_CPU_RESIZE_UTIL_H_

#include <cstdint>

#include "core/op_kernel.h"

namespace ember {
namespace kernels {

struct ResizeGeometry {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0, out_h = 0, out_w = 0;
  float scale_h = 0, scale_w = 0;
};

// CalculateResizeScale.
float ResizeScale(int64_t in, int64_t out, bool align_corners);

// ImageResizerState: the checks of ValidateAndCalculateOutputSize, in TensorFlow's order, on
// inputs (images, size).
Status ValidateResize(const OpKernelContext* ctx, bool align_corners, bool half_pixel,
                      ResizeGeometry* g);

// [batch, size[0], size[1], channels] as far as the input shape and a constant size tell.
Status ResizeShape(ShapeContext* c);

}  // namespace kernels
}  // namespace ember

#endif  // EMBER_KERNELS_CPU_RESIZE_UTIL_H_
