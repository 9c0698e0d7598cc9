// int8 GEMM for FULLY_CONNECTED and CONV_2D on x86-64 CPUs with AVX-512 VNNI (selected at run
// time). VPDPBUSD multiplies unsigned by signed bytes, so activations are offset by 128
// (x ^ 0x80) and the caller folds -128 * sum(w) into the bias: the integer result is the
// same as the reference kernel's.
#include "lite/gemm_int8.h"

#include <climits>
#include <cstring>

#include "ember/lite/quant.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports false "(may be) used uninitialized" inside its own avx512fintrin.h (the
// _mm512_undefined_epi32 operand of inlined intrinsics).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include "common/cpu_features.h"
#include "lite/requant_avx512.h"
#define EMBER_LITE_X86 1
#endif

namespace ember {
namespace lite {

bool HasVnni() {
#ifdef EMBER_LITE_X86
  static const bool has = cpu::HasAvx512Vnni();
  return has;
#else
  return false;
#endif
}

void PackWeightsVnni(const int8_t* w, int n, int k, int nr, PackedWeights* out) {
  out->n = n;
  out->k = k;
  out->k4 = (k + 3) / 4;
  out->nr = nr;
  out->nb = ((n + 15) / 16 + nr - 1) / nr * nr;
  out->data.assign(static_cast<size_t>(out->k4) * out->nb * 64, 0);
  for (int r = 0; r < n; ++r) {
    const int b = r / 16, lane = r % 16, g = b / nr, j = b % nr;
    for (int c = 0; c < k; ++c) {
      const size_t at =
          ((static_cast<size_t>(g) * out->k4 + c / 4) * nr + j) * 64 + lane * 4 + c % 4;
      out->data[at] = w[static_cast<size_t>(r) * k + c];
    }
  }
}

#ifdef EMBER_LITE_X86

namespace {

// MR rows of x against the NR 16-column blocks of group `g`.
template <int MR, int NR>
EMBER_VNNI_TARGET inline void Micro(const uint8_t* x, int x_stride, const PackedWeights& p, int g,
                                    int32_t* acc, int acc_stride) {
  const int b0 = g * NR;
  __m512i c[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) c[i][j] = _mm512_setzero_si512();
  const int8_t* wp = p.data.data() + static_cast<size_t>(g) * p.k4 * NR * 64;
  constexpr size_t wstep = static_cast<size_t>(NR) * 64;
  for (int k4 = 0; k4 < p.k4; ++k4) {
    __m512i w[NR];
    for (int j = 0; j < NR; ++j) w[j] = _mm512_loadu_si512(wp + j * 64);
    for (int i = 0; i < MR; ++i) {
      int32_t xv;
      std::memcpy(&xv, x + static_cast<size_t>(i) * x_stride + 4 * k4, 4);
      const __m512i xb = _mm512_set1_epi32(xv);
      for (int j = 0; j < NR; ++j) c[i][j] = _mm512_dpbusd_epi32(c[i][j], xb, w[j]);
    }
    wp += wstep;
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j)
      _mm512_storeu_si512(acc + static_cast<size_t>(i) * acc_stride + (b0 + j) * 16, c[i][j]);
}

EMBER_VNNI_TARGET inline void Micro4x4(const uint8_t* x, int x_stride, const PackedWeights& p,
                                       int g, int32_t* acc, int acc_stride) {
  // Named accumulators: GCC keeps them in registers (an array costs a copy per update).
  __m512i c00 = _mm512_setzero_si512(), c01 = c00, c02 = c00, c03 = c00;
  __m512i c10 = c00, c11 = c00, c12 = c00, c13 = c00;
  __m512i c20 = c00, c21 = c00, c22 = c00, c23 = c00;
  __m512i c30 = c00, c31 = c00, c32 = c00, c33 = c00;
  const int8_t* wp = p.data.data() + static_cast<size_t>(g) * p.k4 * 4 * 64;
  const uint8_t* x0 = x;
  const uint8_t* x1 = x + x_stride;
  const uint8_t* x2 = x1 + x_stride;
  const uint8_t* x3 = x2 + x_stride;
  for (int k4 = 0; k4 < p.k4; ++k4, wp += 256) {
    const __m512i w0 = _mm512_loadu_si512(wp);
    const __m512i w1 = _mm512_loadu_si512(wp + 64);
    const __m512i w2 = _mm512_loadu_si512(wp + 128);
    const __m512i w3 = _mm512_loadu_si512(wp + 192);
    int32_t v;
    std::memcpy(&v, x0 + 4 * k4, 4);
    __m512i b = _mm512_set1_epi32(v);
    c00 = _mm512_dpbusd_epi32(c00, b, w0);
    c01 = _mm512_dpbusd_epi32(c01, b, w1);
    c02 = _mm512_dpbusd_epi32(c02, b, w2);
    c03 = _mm512_dpbusd_epi32(c03, b, w3);
    std::memcpy(&v, x1 + 4 * k4, 4);
    b = _mm512_set1_epi32(v);
    c10 = _mm512_dpbusd_epi32(c10, b, w0);
    c11 = _mm512_dpbusd_epi32(c11, b, w1);
    c12 = _mm512_dpbusd_epi32(c12, b, w2);
    c13 = _mm512_dpbusd_epi32(c13, b, w3);
    std::memcpy(&v, x2 + 4 * k4, 4);
    b = _mm512_set1_epi32(v);
    c20 = _mm512_dpbusd_epi32(c20, b, w0);
    c21 = _mm512_dpbusd_epi32(c21, b, w1);
    c22 = _mm512_dpbusd_epi32(c22, b, w2);
    c23 = _mm512_dpbusd_epi32(c23, b, w3);
    std::memcpy(&v, x3 + 4 * k4, 4);
    b = _mm512_set1_epi32(v);
    c30 = _mm512_dpbusd_epi32(c30, b, w0);
    c31 = _mm512_dpbusd_epi32(c31, b, w1);
    c32 = _mm512_dpbusd_epi32(c32, b, w2);
    c33 = _mm512_dpbusd_epi32(c33, b, w3);
  }
  int32_t* a = acc + g * 64;
  const size_t s = static_cast<size_t>(acc_stride);
  _mm512_storeu_si512(a, c00);
  _mm512_storeu_si512(a + 16, c01);
  _mm512_storeu_si512(a + 32, c02);
  _mm512_storeu_si512(a + 48, c03);
  _mm512_storeu_si512(a + s, c10);
  _mm512_storeu_si512(a + s + 16, c11);
  _mm512_storeu_si512(a + s + 32, c12);
  _mm512_storeu_si512(a + s + 48, c13);
  _mm512_storeu_si512(a + 2 * s, c20);
  _mm512_storeu_si512(a + 2 * s + 16, c21);
  _mm512_storeu_si512(a + 2 * s + 32, c22);
  _mm512_storeu_si512(a + 2 * s + 48, c23);
  _mm512_storeu_si512(a + 3 * s, c30);
  _mm512_storeu_si512(a + 3 * s + 16, c31);
  _mm512_storeu_si512(a + 3 * s + 32, c32);
  _mm512_storeu_si512(a + 3 * s + 48, c33);
}

template <int MR>
EMBER_VNNI_TARGET void RowBlock(const uint8_t* x, int x_stride, const PackedWeights& p, int g0,
                                int g1, int32_t* acc, int acc_stride) {
  for (int g = g0; g < g1; ++g) {
    switch (p.nr) {
      case 8:
        Micro<MR, 8>(x, x_stride, p, g, acc, acc_stride);
        break;
      case 4:
        if (MR == 4) {
          Micro4x4(x, x_stride, p, g, acc, acc_stride);
        } else {
          Micro<MR, 4>(x, x_stride, p, g, acc, acc_stride);
        }
        break;
      case 2:
        Micro<MR, 2>(x, x_stride, p, g, acc, acc_stride);
        break;
      default:
        Micro<MR, 1>(x, x_stride, p, g, acc, acc_stride);
        break;
    }
  }
}

}  // namespace

EMBER_VNNI_TARGET void OffsetToUnsigned(const int8_t* x, size_t n, uint8_t* out) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    _mm512_storeu_si512(out + i, _mm512_xor_si512(_mm512_loadu_si512(x + i), flip));
  }
  if (i < n) {
    const __mmask64 m = (uint64_t{1} << (n - i)) - 1u;
    _mm512_mask_storeu_epi8(out + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), flip));
  }
}

EMBER_VNNI_TARGET void RequantizeVnni(const int32_t* acc, const int32_t* bias, const int32_t* mult,
                                      const int* shift, int n, bool single_rounding, int32_t out_zp,
                                      int32_t act_min, int32_t act_max, int8_t* out) {
  const __m512i zp = _mm512_set1_epi32(out_zp);
  const __m512i lo = _mm512_set1_epi32(act_min), hi = _mm512_set1_epi32(act_max);
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    const __m512i a = _mm512_add_epi32(_mm512_loadu_si512(acc + c), _mm512_loadu_si512(bias + c));
    __m512i v = avx512::RequantLanes(a, _mm512_loadu_si512(mult + c), _mm512_loadu_si512(shift + c),
                                     single_rounding);
    v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zp), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), _mm512_cvtepi32_epi8(v));
  }
  if (c < n) {
    // The last 1..15 channels: masked loads and stores (lanes past n are never touched).
    const __mmask16 m = static_cast<__mmask16>((1u << (n - c)) - 1u);
    const __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, acc + c),
                                       _mm512_maskz_loadu_epi32(m, bias + c));
    __m512i v = avx512::RequantLanes(a, _mm512_maskz_loadu_epi32(m, mult + c),
                                     _mm512_maskz_loadu_epi32(m, shift + c), single_rounding);
    v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zp), lo), hi);
    _mm512_mask_cvtepi32_storeu_epi8(out + c, m, v);
  }
}

namespace {
// 8 int32 values in both halves of a vector.
EMBER_VNNI_TARGET inline __m512i Twice(const int32_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_inserti64x4(_mm512_castsi256_si512(h), h, 1);
}

// Single rounding (per-channel FULLY_CONNECTED): row by row.
EMBER_VNNI_TARGET void RequantizeRowsSingle(const int32_t* acc, int rows, int acc_stride,
                                            const int32_t* bias, const int32_t* mult,
                                            const int* shift, int n, bool single_rounding,
                                            int32_t out_zp, int32_t act_min, int32_t act_max,
                                            int8_t* out) {
  const int full = n / 16 * 16;
  if (n - full != 8) {
    for (int r = 0; r < rows; ++r) {
      RequantizeVnni(acc + static_cast<size_t>(r) * acc_stride, bias, mult, shift, n,
                     single_rounding, out_zp, act_min, act_max, out + static_cast<size_t>(r) * n);
    }
    return;
  }
  // n = 16 k + 8 (8, 24, 56, ...: common in slim networks): the 8-channel tails of two rows
  // share one vector instead of each filling half of one.
  const __m512i zp = _mm512_set1_epi32(out_zp);
  const __m512i lo = _mm512_set1_epi32(act_min), hi = _mm512_set1_epi32(act_max);
  const __m512i tb = Twice(bias + full), tm = Twice(mult + full), ts = Twice(shift + full);
  int r = 0;
  for (; r + 2 <= rows; r += 2) {
    const int32_t* a0 = acc + static_cast<size_t>(r) * acc_stride;
    const int32_t* a1 = a0 + acc_stride;
    int8_t* o0 = out + static_cast<size_t>(r) * n;
    int8_t* o1 = o0 + n;
    for (int c = 0; c < full; c += 16) {
      for (int k = 0; k < 2; ++k) {
        const int32_t* a = k == 0 ? a0 : a1;
        const __m512i s = _mm512_add_epi32(_mm512_loadu_si512(a + c), _mm512_loadu_si512(bias + c));
        __m512i v = avx512::RequantLanes(s, _mm512_loadu_si512(mult + c),
                                         _mm512_loadu_si512(shift + c), single_rounding);
        v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zp), lo), hi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>((k == 0 ? o0 : o1) + c),
                         _mm512_cvtepi32_epi8(v));
      }
    }
    const __m256i t0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a0 + full));
    const __m256i t1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a1 + full));
    const __m512i s = _mm512_add_epi32(_mm512_inserti64x4(_mm512_castsi256_si512(t0), t1, 1), tb);
    __m512i v = avx512::RequantLanes(s, tm, ts, single_rounding);
    v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zp), lo), hi);
    const __m128i bytes = _mm512_cvtepi32_epi8(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o0 + full), bytes);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o1 + full), _mm_unpackhi_epi64(bytes, bytes));
  }
  for (; r < rows; ++r) {
    RequantizeVnni(acc + static_cast<size_t>(r) * acc_stride, bias, mult, shift, n, single_rounding,
                   out_zp, act_min, act_max, out + static_cast<size_t>(r) * n);
  }
}

// One block of 16 channels: what depends on the channel only, made once for all the rows.
struct ChannelBlock {
  __m512i bias, zp, lo, hi;
  avx512::DoubleRounding k;
};

// Requantized int8 values of one block. kClamp: clamp to [lo, hi] and truncate, as the
// reference does; without it (the activation range is all of int8) a saturating narrowing
// gives the same bytes.
template <bool kPlain, bool kClamp>
EMBER_VNNI_TARGET inline __m128i BlockBytes(const ChannelBlock& b, __m512i acc) {
  const __m512i v = _mm512_add_epi32(
      avx512::ApplyDoubleRounding<kPlain>(b.k, _mm512_add_epi32(acc, b.bias)), b.zp);
  if (!kClamp) return _mm512_cvtsepi32_epi8(v);
  return _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(v, b.lo), b.hi));
}

// Double rounding (CONV_2D, per-tensor FULLY_CONNECTED): channel blocks outside, rows inside.
template <bool kPlain, bool kClamp>
EMBER_VNNI_TARGET void RequantizeRowsDouble(const int32_t* acc, int rows, int acc_stride,
                                            const int32_t* bias, const int32_t* mult,
                                            const int* shift, int n, int32_t out_zp,
                                            int32_t act_min, int32_t act_max, int8_t* out) {
  ChannelBlock b;
  b.zp = _mm512_set1_epi32(out_zp);
  b.lo = _mm512_set1_epi32(act_min);
  b.hi = _mm512_set1_epi32(act_max);
  const size_t s = static_cast<size_t>(acc_stride), on = static_cast<size_t>(n);
  const int full = n / 16 * 16;
  for (int c = 0; c < full; c += 16) {
    b.bias = _mm512_loadu_si512(bias + c);
    b.k = avx512::MakeDoubleRounding(_mm512_loadu_si512(mult + c), _mm512_loadu_si512(shift + c));
    for (int r = 0; r < rows; ++r) {
      const __m128i v = BlockBytes<kPlain, kClamp>(b, _mm512_loadu_si512(acc + r * s + c));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + r * on + c), v);
    }
  }
  const int tail = n - full;
  if (tail == 8) {
    // n = 16 k + 8 (8, 24, 56, ...: common in slim networks): the 8-channel tails of two rows
    // share one vector instead of each filling half of one.
    b.bias = Twice(bias + full);
    b.k = avx512::MakeDoubleRounding(Twice(mult + full), Twice(shift + full));
    int r = 0;
    for (; r + 2 <= rows; r += 2) {
      const int32_t* a0 = acc + r * s + full;
      const __m256i t0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a0));
      const __m256i t1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a0 + s));
      const __m128i bytes =
          BlockBytes<kPlain, kClamp>(b, _mm512_inserti64x4(_mm512_castsi256_si512(t0), t1, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + r * on + full), bytes);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + (r + 1) * on + full),
                       _mm_unpackhi_epi64(bytes, bytes));
    }
    if (r < rows) {
      const __m256i t0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + r * s + full));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + r * on + full),
                       BlockBytes<kPlain, kClamp>(b, _mm512_zextsi256_si512(t0)));
    }
  } else if (tail > 0) {
    // The last 1..15 channels: masked loads and stores (lanes past n are never touched).
    const __mmask16 m = static_cast<__mmask16>((1u << tail) - 1u);
    b.bias = _mm512_maskz_loadu_epi32(m, bias + full);
    b.k = avx512::MakeDoubleRounding(_mm512_maskz_loadu_epi32(m, mult + full),
                                     _mm512_maskz_loadu_epi32(m, shift + full));
    for (int r = 0; r < rows; ++r) {
      const __m128i v =
          BlockBytes<kPlain, kClamp>(b, _mm512_maskz_loadu_epi32(m, acc + r * s + full));
      _mm_mask_storeu_epi8(out + r * on + full, m, v);
    }
  }
}

using RowsFn = void (*)(const int32_t*, int, int, const int32_t*, const int32_t*, const int*, int,
                        int32_t, int32_t, int32_t, int8_t*);

}  // namespace

EMBER_VNNI_TARGET void RequantizeRowsVnni(const int32_t* acc, int rows, int acc_stride,
                                          const int32_t* bias, const int32_t* mult,
                                          const int* shift, int n, bool single_rounding,
                                          int32_t out_zp, int32_t act_min, int32_t act_max,
                                          int8_t* out) {
  if (single_rounding) {
    RequantizeRowsSingle(acc, rows, acc_stride, bias, mult, shift, n, true, out_zp, act_min,
                         act_max, out);
    return;
  }
  bool plain = true;
  for (int c = 0; c < n; ++c) plain = plain && shift[c] <= 0 && mult[c] != INT32_MIN;
  const bool clamp = act_min != -128 || act_max != 127;
  const RowsFn run =
      plain ? (clamp ? RequantizeRowsDouble<true, true> : RequantizeRowsDouble<true, false>)
            : (clamp ? RequantizeRowsDouble<false, true> : RequantizeRowsDouble<false, false>);
  run(acc, rows, acc_stride, bias, mult, shift, n, out_zp, act_min, act_max, out);
}

void GemmVnniGroups(const uint8_t* x, int m, int x_stride, const PackedWeights& p, int g0, int g1,
                    int32_t* acc, int acc_stride) {
  int r = 0;
  for (; r + 4 <= m; r += 4) {
    RowBlock<4>(x + static_cast<size_t>(r) * x_stride, x_stride, p, g0, g1,
                acc + static_cast<size_t>(r) * acc_stride, acc_stride);
  }
  for (; r < m; ++r) {
    RowBlock<1>(x + static_cast<size_t>(r) * x_stride, x_stride, p, g0, g1,
                acc + static_cast<size_t>(r) * acc_stride, acc_stride);
  }
}

void GemmVnni(const uint8_t* x, int m, int x_stride, const PackedWeights& p, int32_t* acc,
              int acc_stride) {
  GemmVnniGroups(x, m, x_stride, p, 0, p.nb / p.nr, acc, acc_stride);
}

#else

void OffsetToUnsigned(const int8_t* x, size_t n, uint8_t* out) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(x[i]) ^ 0x80u;
}
void GemmVnni(const uint8_t*, int, int, const PackedWeights&, int32_t*, int) {}
void GemmVnniGroups(const uint8_t*, int, int, const PackedWeights&, int, int, int32_t*, int) {}
void RequantizeVnni(const int32_t*, const int32_t*, const int32_t*, const int*, int, bool, int32_t,
                    int32_t, int32_t, int8_t*) {}
void RequantizeRowsVnni(const int32_t*, int, int, const int32_t*, const int32_t*, const int*, int,
                        bool, int32_t, int32_t, int32_t, int8_t*) {}

#endif

}  // namespace lite
}  // namespace ember
