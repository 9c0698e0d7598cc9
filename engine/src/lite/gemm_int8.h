// Run-time selected int8 GEMM kernels (x86-64 AVX-512 VNNI); see gemm_int8.cc.
#ifndef EMBER_SRC_LITE_GEMM_INT8_H_
#define EMBER_SRC_LITE_GEMM_INT8_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/aligned_vector.h"
#include "lite/window.h"

namespace ember {
namespace lite {

// Weights [n, k] repacked for streaming: groups of `nr` 16-column blocks, each group laid out
// [ceil(k/4)][nr][16 lanes][4 bytes]; zero padded to nb = a multiple of nr blocks.
struct PackedWeights {
  int n = 0, k = 0, k4 = 0, nb = 0, nr = 1;
  LargeBuffer<int8_t>
      data;  // 64-byte aligned (AMX loads 64-byte rows of it); huge pages when large
  // Requantization fused into the GEMM (ConvGemmVnni), made once by PrepareFusedRequant: per
  // 16-channel block kRequantWords int32 words of per-lane constants, and layer-wide flags.
  std::vector<int32_t> rq;
  bool rq_plain = false, rq_high = false, rq_clamp = false, rq_zp_folded = false;
  int32_t out_zp = 0, act_min = 0, act_max = 0;
  // CONV_2D reading its filter rows in place (no im2col): the input offset by 128 into a
  // [padded_h, padded_w] image whose border holds the padding value; 0 when unused.
  // padded_c: bytes per pixel there (ic, or 4 for 3-channel inputs, whose 4th weight is 0).
  int padded_h = 0, padded_w = 0, padded_c = 0;
};

constexpr int kRequantWords = 10 * 16;  // 10 vectors of 16 int32 lanes per block

// Fills p->rq (double rounding, as RequantizeRowsVnni) from the folded bias (unsigned
// activations), the multipliers and shifts of the p->n channels.
void PrepareFusedRequant(const int32_t* bias, const int32_t* mult, const int* shift, int32_t out_zp,
                         int32_t act_min, int32_t act_max, PackedWeights* p);
// y[r * y_stride + c] = requantized (sum_k x[r * x_stride + k] * w[c][k] + bias[c]) for r < m,
// c < n: GemmVnni and RequantizeRowsVnni (double rounding) in one pass, int32 sums kept in
// registers. Needs PrepareFusedRequant.
void ConvGemmVnni(const uint8_t* x, int m, int x_stride, const PackedWeights& p, int8_t* y,
                  int y_stride);
// ConvGemmVnni where row r's k values are `nseg` runs of p.k4 / nseg 4-byte groups, run s at
// x + r * x_stride + seg_off[s] (a convolution's filter rows read in place from a padded input).
void ConvGemmVnniSegments(const uint8_t* x, int m, int x_stride, const ptrdiff_t* seg_off, int nseg,
                          const PackedWeights& p, int8_t* y, int y_stride);
// The two above for the column groups [g0, g1) only (group g: channels 16 * p.nr * g onwards),
// so that threads can split the output channels of a GEMM with few rows; y is indexed as above.
void ConvGemmVnniGroups(const uint8_t* x, int m, int x_stride, const PackedWeights& p, int g0,
                        int g1, int8_t* y, int y_stride);
void ConvGemmVnniSegmentsGroups(const uint8_t* x, int m, int x_stride, const ptrdiff_t* seg_off,
                                int nseg, const PackedWeights& p, int g0, int g1, int8_t* y,
                                int y_stride);

bool HasVnni();
// AMX-INT8 tiles (and AVX-512 VNNI beside them), granted by the OS to this process; not under
// EMBER_CPU_ISA=avx512 or below.
bool HasAmxInt8();
// The chunk of k that one AMX step multiplies for a run of `run_bytes` bytes: the largest multiple
// of 4 from 32 to 64 that divides it, or 0 where none does.
int AmxChunkBytes(int run_bytes);
// Whether the ConvGemmVnni* functions compute m rows whose runs hold run_k4 4-byte groups of k
// each with AMX's tiles (else with VNNI): the same bytes either way.
bool ConvGemmUsesAmx(int m, int run_k4);
// out[i] = x[i] ^ 0x80 for i < n: int8 activations as the unsigned bytes GemmVnni reads. Only
// for CPUs where HasVnni().
void OffsetToUnsigned(const int8_t* x, size_t n, uint8_t* out);
// out[4 i + c] = x[3 i + c] ^ 0x80 for c < 3, i < pixels (out[4 i + 3] is left undefined): a
// 3-channel image as 4-byte unsigned pixels.
void OffsetPixels3To4(const int8_t* x, size_t pixels, uint8_t* out);
// out[pc i + j] = x[c i + j] ^ 0x80 for j < c, i < pixels (out[pc i + j] for c <= j < pc left as
// they are): c-byte pixels as pc-byte unsigned ones (pc >= c).
void OffsetPixels(const int8_t* x, size_t pixels, int c, int pc, uint8_t* out);
void PackWeightsVnni(const int8_t* w, int n, int k, int nr, PackedWeights* out);
// The nr (16-column blocks per group) PackWeightsVnni takes for n output columns: up to 8 for a
// matrix-vector product (FULLY_CONNECTED; wide groups, one pass over the activations each), else
// up to 4, or 3 where 4 would pad more (48, 96, 144 columns; a padding block costs its
// multiply-adds).
int GroupBlocks(int n, bool matrix_vector);
// acc[r * acc_stride + c] = sum_k x[r * x_stride + k] * w[c][k] for r < m, c < 16 * nb.
// x rows are unsigned bytes (int8 ^ 0x80) padded to 4 * k4; acc_stride >= 16 * nb.
void GemmVnni(const uint8_t* x, int m, int x_stride, const PackedWeights& p, int32_t* acc,
              int acc_stride);
// GemmVnni for the column groups [g0, g1) only (group g: columns 16 * nr * g onwards), so that
// threads can split the columns; acc is indexed as in GemmVnni.
void GemmVnniGroups(const uint8_t* x, int m, int x_stride, const PackedWeights& p, int g0, int g1,
                    int32_t* acc, int acc_stride);

// out[c] = clamp(MBQM(acc[c] + bias[c], mult[c], shift[c]) + out_zp) for c < n, with
// TFLite's double rounding or, when `single_rounding`, the single-rounding variant.
void RequantizeVnni(const int32_t* acc, const int32_t* bias, const int32_t* mult, const int* shift,
                    int n, bool single_rounding, int32_t out_zp, int32_t act_min, int32_t act_max,
                    int8_t* out);

// RequantizeVnni over `rows` rows of acc (row r at acc + r * acc_stride) into rows of n
// contiguous outputs.
void RequantizeRowsVnni(const int32_t* acc, int rows, int acc_stride, const int32_t* bias,
                        const int32_t* mult, const int* shift, int n, bool single_rounding,
                        int32_t out_zp, int32_t act_min, int32_t act_max, int8_t* out);

// CPUs with AVX2 but no VNNI: weights [n, k] as sign-extended int16 pairs, in blocks of 8
// channels: block b holds, for each pair q < k2 = ceil(k / 2), the 16 values w[8b + c][2q],
// w[8b + c][2q + 1] for c < 8 (zero padded past n and k). One VPMADDWD per pair and block: exact
// int32 sums, the portable DotRowsInt8's.
// Narrow (a single input row, FULLY_CONNECTED at batch 1, where reading the weights is the
// cost): the same layout kept as int8 in data8, widened in the kernel; data stays empty.
struct PackedI16 {
  int n = 0, k = 0, k2 = 0, blocks = 0;
  AlignedVector<int16_t> data;
  AlignedVector<int8_t> data8;
};
void PackWeightsI16(const int8_t* w, int n, int k, PackedI16* out, bool narrow = false);
// True where GemmI16 runs its AVX2 kernel (x86-64 with AVX2, not forced lower by EMBER_CPU_ISA).
bool GemmI16Available();
// x16[r * 2 * k2 + p] = x[r * x_stride + p] for r < m (zero for p >= k): a GemmI16 input.
void WidenRowsI8(const int8_t* x, int m, int x_stride, int k, int k2, int16_t* x16);
// Whether Im2ColRowWidenI8 runs for this window (g.c: the input channels) and k2: AVX2, a
// filter row of at most 16 values (kw * c: a network's first layer over RGB), at most 16 filter
// rows, no dilation. Decided once, in Prepare.
bool Im2ColRowWidenI8Applies(const WindowGeometry& g, int k2);
// One output row's im2col, widened straight into WidenRowsI8's layout (output pixel ox at
// x16 + ox * 2 * k2: its kh * kw * c values in (ky, kx, channel) order, `pad` where a tap is
// outside the image, then zeros to 2 * k2), where Im2ColRowWidenI8Applies(g, k2). Each filter
// row of a pixel inside the image is one 16-byte load and widening. `image` is the batch's
// [ih, iw, c] image, `image_bytes` its size (no load reads past it), and x16 needs 16 values of
// room past the row's last pixel.
void Im2ColRowWidenI8(const WindowGeometry& g, const int8_t* image, size_t image_bytes, int oy,
                      int8_t pad, int k2, int16_t* x16);
// acc[r * acc_stride + c] = sum_p x16[r * 2 * w.k2 + p] * w[c][p] for r < m, c < 8 * w.blocks.
// Needs GemmI16Available().
void GemmI16(const int16_t* x16, int m, const PackedI16& w, int32_t* acc, int acc_stride);
// GemmI16 for the channel blocks [b0, b1) only (channels 8 * b0 to 8 * b1; acc indexed as there).
void GemmI16Blocks(const int16_t* x16, int m, const PackedI16& w, int b0, int b1, int32_t* acc,
                   int acc_stride);
// y[r * n + c] = clamp(MultiplyByQuantizedMultiplier(acc[r * acc_stride + c] + bias[c],
// mult[c], shift[c]) + zp, lo, hi) (double rounding, as ember/lite/quant.h) for r < rows and the
// first channels of n, eight at a time with AVX2; returns how many channels of each row it wrote
// (a multiple of 8, 0 without GemmI16Available()). Multipliers are QuantizeMultiplier's (never
// INT32_MIN).
int RequantizeRowsAvx2(const int32_t* acc, int rows, int acc_stride, const int32_t* bias,
                       const int32_t* mult, const int* shift, int n, int32_t zp, int32_t lo,
                       int32_t hi, int8_t* y);

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_GEMM_INT8_H_
