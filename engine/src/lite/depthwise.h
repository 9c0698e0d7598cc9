// Depthwise convolution rows with depth multiplier 1, vectorised across channels (x86-64:
// AVX-512 / AVX2 / baseline builds of one loop, chosen at run time by lite/loop_isa.h;
// elsewhere the portable loop). An int8 row is an exact integer sum, so every path gives the
// reference kernel's integers; a float row rounds the same on every path.
#ifndef EMBER_SRC_LITE_DEPTHWISE_H_
#define EMBER_SRC_LITE_DEPTHWISE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/aligned_vector.h"
#include "lite/window.h"

namespace ember {
namespace lite {

// A depthwise convolution's geometry is a WindowGeometry (lite/window.h) whose c channels are
// its input and output channels alike.

// acc[ox * c + ch] = sum over taps inside the image of w[tap * c + ch] * (x - in_zp), for
// output row oy of the image at `x`. Taps in the padding contribute nothing.
void DepthwiseRowI8(const WindowGeometry& g, const int8_t* x, const int8_t* w, int32_t in_zp,
                    int oy, int32_t* acc);

// y[ox * c + ch] = clamp(sum over taps (in order) of x * w, plus bias[ch], lo, hi).
void DepthwiseRowF32(const WindowGeometry& g, const float* x, const float* w, const float* bias,
                     float lo, float hi, int oy, float* y);

// Per-channel requantization of an int8 depthwise row (see ember/lite/quant.h).
struct DepthwiseRequant {
  const int32_t* bias = nullptr;  // c values
  const int32_t* mult = nullptr;
  const int* shift = nullptr;
  int32_t out_zp = 0, act_min = -128, act_max = 127;
};

// The int8 3x3 rows' constants per block of 16 channels (the weights as int16 pairs, the bias
// less in_zp times the nine weights, the requantization's multipliers and shifts in the order
// the accumulators hold them), made once by PackDepthwiseRowsI8Fused: made per call, they cost
// each task as much as a few output rows of MobileNet's small layers.
struct DepthwiseFusedI8 {
  AlignedVector<uint8_t> blocks;  // g.c / 16 of depthwise.cc's FusedBlockConstants
  bool general = false;           // a block needs the general rounding (left shift, e = 0)
  int32_t in_zp = 0;              // the input zero point (the value of a padding tap)
};

// Whether DepthwiseRowsI8Fused runs for this geometry and requantization (AVX2 and AVX-512
// CPUs, 3x3 filters without dilation over channels a multiple of 16, no INT32_MIN multiplier);
// if so fills `out`. w: [3, 3, c] int8 (TFLite's [1, 3, 3, c] filter), q.bias c values.
bool PackDepthwiseRowsI8Fused(const WindowGeometry& g, const int8_t* w, int32_t in_zp,
                              const DepthwiseRequant& q, DepthwiseFusedI8* out);
// Output rows [oy0, oy1) of the image at x, channels [c0, c1) (multiples of 16; all: 0, g.c),
// requantized with TFLite's double rounding (as RequantizeRows): output (oy, ox, ch) at
// y[((oy - oy0) * ow + ox) * c + ch]. `p` from PackDepthwiseRowsI8Fused for g; q gives the
// output zero point and clamp. False, nothing written, where p does not fit the call.
bool DepthwiseRowsI8Fused(const WindowGeometry& g, const int8_t* x, const DepthwiseFusedI8& p,
                          const DepthwiseRequant& q, int oy0, int oy1, int c0, int c1, int8_t* y);

// AVX-512 (F, BW, VL, VNNI) rows, for CPUs where HasVnni(); usable when the filter has at
// most 64 taps. The int8 row is fused: y = requantized int8 outputs. `w32` holds the weights
// widened to int32, [taps][c rounded up to 16], zero padded.
// The float row equals DepthwiseRowF32's within rounding (3x3 filters: bias first, fused
// multiply-adds).
bool DepthwiseAvx512Usable(const WindowGeometry& g);
void DepthwiseRowI8Avx512(const WindowGeometry& g, const int8_t* x, const int32_t* w32,
                          int32_t in_zp, const DepthwiseRequant& q, int oy, int8_t* y);
void DepthwiseRowF32Avx512(const WindowGeometry& g, const float* x, const float* w,
                           const float* bias, float lo, float hi, int oy, float* y);
// The two rows above for the channels [c0, c1) only (y indexed as there), so that threads can
// split a few rows' channels: c0 a multiple of 32, c1 one too or g.c. Each channel's outputs are
// the same as the whole row's.
void DepthwiseRowI8Avx512Channels(const WindowGeometry& g, const int8_t* x, const int32_t* w32,
                                  int32_t in_zp, const DepthwiseRequant& q, int oy, int c0, int c1,
                                  int8_t* y);
void DepthwiseRowF32Avx512Channels(const WindowGeometry& g, const float* x, const float* w,
                                   const float* bias, float lo, float hi, int oy, int c0, int c1,
                                   float* y);

// 3x3 filters, dilated or not (depth multiplier 1), on CPUs where HasVnni(): each filter
// column's three taps are one VPDPBUSD (unsigned by signed bytes, 4 per 32-bit lane) over a row
// buffer whose 4-byte groups hold the three input rows' bytes of one pixel and channel, offset
// by 128; taps in the padding read the input zero point there, which the bias cancels. Exact
// integers, so the reference kernel's outputs. Made once by PackDepthwise3x3Vnni.
struct Depthwise3x3Vnni {
  AlignedVector<int8_t> w;    // [c / 16 blocks][kx 0..2][16 lanes][ky 0..2, then 0]
  std::vector<int32_t> bias;  // [c rounded up to 16]: bias - (in_zp + 128) * sum of the 9 weights
};

bool Depthwise3x3VnniUsable(const WindowGeometry& g);
// w: [3, 3, c] int8 (TFLite's [1, 3, 3, c] filter); bias: c values (null: none).
void PackDepthwise3x3Vnni(const int8_t* w, const int32_t* bias, int c, int32_t in_zp,
                          Depthwise3x3Vnni* out);
// Bytes of 64-byte aligned scratch that one DepthwiseRowsI8Vnni3x3 call needs.
size_t Depthwise3x3VnniScratch(const WindowGeometry& g);
// DepthwiseRowI8Avx512Channels's outputs (channels [c0, c1), c0 a multiple of 16) for a
// filter packed by PackDepthwise3x3Vnni, for output rows oy to oy + rows - 1 (rows 1 or 2; the
// second at y + ow * c); q.bias is not read (p.bias holds it). At stride 1 (rows undilated) two
// rows share one row buffer, whose groups then hold four input rows: half the buffer building and
// loads.
void DepthwiseRowsI8Vnni3x3(const WindowGeometry& g, const int8_t* x, const Depthwise3x3Vnni& p,
                            int32_t in_zp, const DepthwiseRequant& q, int oy, int rows, int c0,
                            int c1, uint8_t* scratch, int8_t* y);

// int8 depthwise filters of other sizes up to 8x8 (EfficientNet's and MobileNetV3's 5x5) on
// AVX-512 VNNI: the filter's rows in groups of four, one row buffer of 4-byte groups per group of
// rows (the 3x3 form's buffer, four rows deep), and one VPDPBUSD per group and filter column for
// 16 channels: a 5x5 output ten instead of 25 widening multiplies and adds.
struct DepthwiseKxKVnni {
  int kh = 0, kw = 0, groups = 0;  // groups: (kh + 3) / 4
  // [c / 16 blocks][group][kx][16 lanes][rows 4 group .. 4 group + 3, 0 beyond kh]
  AlignedVector<int8_t> w;
  std::vector<int32_t> bias;  // [c rounded up to 16]: bias - (in_zp + 128) * sum of the weights
};

// Filters of 1 to 8 rows and columns but 3x3 (Depthwise3x3Vnni's), in the 3x3 form's size limits.
bool DepthwiseKxKVnniUsable(const WindowGeometry& g);
// w: [kh, kw, c] int8; bias: c values (null: none).
void PackDepthwiseKxKVnni(const int8_t* w, const int32_t* bias, int kh, int kw, int c,
                          int32_t in_zp, DepthwiseKxKVnni* out);
// Bytes of 64-byte aligned scratch that one DepthwiseRowI8VnniKxK call needs.
size_t DepthwiseKxKVnniScratch(const WindowGeometry& g);
// Output row oy's channels [c0, c1) (c0 a multiple of 16) for a filter packed by
// PackDepthwiseKxKVnni; q.bias is not read (p.bias holds it).
void DepthwiseRowI8VnniKxK(const WindowGeometry& g, const int8_t* x, const DepthwiseKxKVnni& p,
                           int32_t in_zp, const DepthwiseRequant& q, int oy, int c0, int c1,
                           uint8_t* scratch, int8_t* y);

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_DEPTHWISE_H_
