// AVX-512 depthwise rows (depth multiplier 1): 16 channels per vector, held in a register over
// every tap, then (int8) requantized in registers and stored with a byte mask. The int8 sum is
// an exact integer, so it gives the portable loop's results. Float rows add the taps in the
// reference order; a 3x3 row starts from the bias and fuses each multiply-add (as XNNPACK
// does), others multiply, then add, then add the bias: within rounding of the portable loop.
// Rows walk 16-channel blocks outside and columns inside, so a block's requantization constants
// (int8), 3x3 float weights and its interior columns' tap list are made once per row; a 3x3
// int8 row's border columns use that list too, reading zero point bytes for the taps outside
// the image.
#include "lite/depthwise.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports false "(may be) used uninitialized" inside its own avx512fintrin.h (the
// _mm512_undefined_epi32 operand of inlined intrinsics).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <type_traits>

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
int ValidTaps(const WindowGeometry& g, int oy, int ox, size_t* x_off, int* tap) {
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

// One output's 16 channels (those in m) requantized and stored at yo: out_zp added, clamped to
// [lo, hi]. kFast: no left shifts or INT32_MIN multipliers, and the whole int8 range as
// activation range, where a saturating narrowing gives the clamp's bytes.
template <bool Full, bool kFast>
EMBER_VNNI_TARGET inline void StoreRequantized(const avx512::DoubleRounding& k, __m512i acc,
                                               __m512i zp_out, __m512i lo, __m512i hi, __mmask16 m,
                                               int8_t* yo) {
  const __m512i v = _mm512_add_epi32(avx512::ApplyDoubleRounding<kFast>(k, acc), zp_out);
  const __m128i bytes = kFast ? _mm512_cvtsepi32_epi8(v)
                              : _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi));
  if (Full) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(yo), bytes);
  } else {
    _mm_mask_storeu_epi8(yo, m, bytes);
  }
}

// Whether channels [c0, c1) take StoreRequantized's kFast form. Branch-free, so that it
// vectorises: it runs for every row.
inline bool FastRequant(const DepthwiseRequant& q, int c0, int c1) {
  int slow = 0;
  for (int c = c0; c < c1; ++c) slow |= (q.shift[c] > 0) | (q.mult[c] == INT32_MIN);
  return q.act_min == -128 && q.act_max == 127 && slow == 0;
}

// Sum over the taps of w * x for 16 channels; x at x + x_off[t], weights of tap tap[t].
// `Full`: all 16 channels exist (plain loads); else the lanes in `m`.
template <bool Full>
EMBER_VNNI_TARGET inline __m512i TapSum(const int8_t* x, const size_t* x_off, const int* tap, int n,
                                        const int32_t* w, size_t cpad, __mmask16 m, __m512i zp) {
  __m512i acc = _mm512_setzero_si512();
  for (int t = 0; t < n; ++t) {
    const __m128i xb = Full ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + x_off[t]))
                            : _mm_maskz_loadu_epi8(m, x + x_off[t]);
    const __m512i xv = _mm512_sub_epi32(_mm512_cvtepi8_epi32(xb), zp);
    const __m512i wv = _mm512_loadu_si512(w + static_cast<size_t>(tap[t]) * cpad);
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(xv, wv));
  }
  return acc;
}

// TapSum over exactly N taps with their weights already in registers (the interior columns of a
// 3x3 filter's rows: N = 9, or 6 on a border row).
template <bool Full, int N>
EMBER_VNNI_TARGET inline __m512i TapSumN(const int8_t* x, const size_t* x_off, const __m512i* wv,
                                         __mmask16 m) {
  __m512i acc = _mm512_setzero_si512();
  for (int t = 0; t < N; ++t) {
    const __m128i xb = Full ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + x_off[t]))
                            : _mm_maskz_loadu_epi8(m, x + x_off[t]);
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(_mm512_cvtepi8_epi32(xb), wv[t]));
  }
  return acc;
}

// TapSumN with each tap's input at px[t].
template <bool Full, int N>
EMBER_VNNI_TARGET inline __m512i TapSumAt(const int8_t* const* px, const __m512i* wv, __mmask16 m) {
  __m512i acc = _mm512_setzero_si512();
  for (int t = 0; t < N; ++t) {
    const __m128i xb = Full ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(px[t]))
                            : _mm_maskz_loadu_epi8(m, px[t]);
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(_mm512_cvtepi8_epi32(xb), wv[t]));
  }
  return acc;
}

// One output row for the channels [c, c + 16) (those in `m`). Columns whose taps all fall inside
// the image share the row's tap list, and their input zero point is folded into the bias:
// sum w * (x - zp) = sum w * x - zp * sum w, the same int32 value (both wrap alike).
template <bool Full, int N, bool kFast>
EMBER_VNNI_TARGET inline void RowBlock(const WindowGeometry& g, const int8_t* x, const int32_t* w32,
                                       int32_t in_zp, const DepthwiseRequant& q, int oy, int c,
                                       __mmask16 m, const size_t* row_off, const int* row_tap,
                                       int row_n, const int8_t* zp_bytes, int8_t* y) {
  const size_t cpad = static_cast<size_t>((g.c + 15) / 16 * 16);
  const int32_t* w = w32 + c;
  const __m512i zp_in = _mm512_set1_epi32(in_zp), zero = _mm512_setzero_si512();
  const __m512i zp_out = _mm512_set1_epi32(q.out_zp);
  const __m512i lo = _mm512_set1_epi32(q.act_min), hi = _mm512_set1_epi32(q.act_max);
  const __m512i bias = _mm512_maskz_loadu_epi32(m, q.bias + c);
  const avx512::DoubleRounding k = avx512::MakeDoubleRounding(
      _mm512_maskz_loadu_epi32(m, q.mult + c), _mm512_maskz_loadu_epi32(m, q.shift + c));
  __m512i wsum = zero;
  for (int t = 0; t < row_n; ++t) {
    wsum = _mm512_add_epi32(wsum, _mm512_loadu_si512(w + static_cast<size_t>(row_tap[t]) * cpad));
  }
  const __m512i inner_bias = _mm512_sub_epi32(bias, _mm512_mullo_epi32(wsum, zp_in));
  __m512i wv[N > 0 ? N : 1];
  for (int t = 0; t < N; ++t)
    wv[t] = _mm512_loadu_si512(w + static_cast<size_t>(row_tap[t]) * cpad);
  const int span = (g.kw - 1) * g.dil_w;
  size_t x_off[kMaxTaps];
  int tap[kMaxTaps];
  for (int ox = 0; ox < g.ow; ++ox) {
    const int ix0 = ox * g.stride_w - g.pad_w;
    __m512i acc;
    if (ix0 >= 0 && ix0 + span < g.iw) {
      const int8_t* xs = x + static_cast<size_t>(ix0) * g.c + c;
      acc = N > 0 ? TapSumN<Full, N>(xs, row_off, wv, m)
                  : TapSum<Full>(xs, row_off, row_tap, row_n, w, cpad, m, zero);
      acc = _mm512_add_epi32(acc, inner_bias);
    } else if (N > 0 && zp_bytes != nullptr) {
      // A border column: its taps outside the image read zp bytes, whose w * zp the folded bias
      // cancels.
      const int8_t* px[N > 0 ? N : 1];
      for (int t = 0; t < N; ++t) {
        const int ix = ix0 + row_tap[t] % g.kw * g.dil_w;
        px[t] =
            ix >= 0 && ix < g.iw
                ? x + (static_cast<ptrdiff_t>(row_off[t]) + static_cast<ptrdiff_t>(ix0) * g.c + c)
                : zp_bytes;
      }
      acc = _mm512_add_epi32(TapSumAt<Full, N>(px, wv, m), inner_bias);
    } else {
      const int n = ValidTaps(g, oy, ox, x_off, tap);
      acc = _mm512_add_epi32(TapSum<Full>(x + c, x_off, tap, n, w, cpad, m, zp_in), bias);
    }
    StoreRequantized<Full, kFast>(k, acc, zp_out, lo, hi, m, y + static_cast<size_t>(ox) * g.c + c);
  }
}

}  // namespace

bool DepthwiseAvx512Usable(const WindowGeometry& g) { return g.kh * g.kw <= kMaxTaps; }

void DepthwiseRowI8Avx512(const WindowGeometry& g, const int8_t* x, const int32_t* w32,
                          int32_t in_zp, const DepthwiseRequant& q, int oy, int8_t* y) {
  DepthwiseRowI8Avx512Channels(g, x, w32, in_zp, q, oy, 0, g.c, y);
}

EMBER_VNNI_TARGET void DepthwiseRowI8Avx512Channels(const WindowGeometry& g, const int8_t* x,
                                                    const int32_t* w32, int32_t in_zp,
                                                    const DepthwiseRequant& q, int oy, int c0,
                                                    int c1, int8_t* y) {
  // The taps of this row's rows inside the image, as offsets from column ix0 = 0.
  size_t row_off[kMaxTaps];
  int row_tap[kMaxTaps];
  int row_n = 0;
  const int iy0 = oy * g.stride_h - g.pad_h;
  for (int ky = 0; ky < g.kh; ++ky) {
    const int iy = iy0 + ky * g.dil_h;
    if (iy < 0 || iy >= g.ih) continue;
    for (int kx = 0; kx < g.kw; ++kx) {
      row_off[row_n] = (static_cast<size_t>(iy) * g.iw + static_cast<size_t>(kx) * g.dil_w) * g.c;
      row_tap[row_n++] = ky * g.kw + kx;
    }
  }
  // Border columns of fixed-count rows read these in place of taps outside the image, when the
  // zero point is an int8 value.
  int8_t zp_row[16];
  for (int8_t& b : zp_row) b = static_cast<int8_t>(in_zp);
  const int8_t* zp_bytes = in_zp >= -128 && in_zp <= 127 ? zp_row : nullptr;
  const bool fast = FastRequant(q, 0, g.c);
  // Fixed tap counts for 3x3 filters (N, with the weights in registers); 0: any count.
  auto blocks = [&](auto n, auto f) {
    constexpr int N = decltype(n)::value;
    constexpr bool kFast = decltype(f)::value;
    int c = c0;
    for (; c + 16 <= c1; c += 16) {
      RowBlock<true, N, kFast>(g, x, w32, in_zp, q, oy, c, 0xFFFF, row_off, row_tap, row_n,
                               zp_bytes, y);
    }
    if (c < c1) {
      RowBlock<false, N, kFast>(g, x, w32, in_zp, q, oy, c, Mask(c1 - c), row_off, row_tap, row_n,
                                zp_bytes, y);
    }
  };
  auto counts = [&](auto f) {
    if (g.kw == 3 && row_n == 9) {
      blocks(std::integral_constant<int, 9>(), f);
    } else if (g.kw == 3 && row_n == 6) {
      blocks(std::integral_constant<int, 6>(), f);
    } else {
      blocks(std::integral_constant<int, 0>(), f);
    }
  };
  if (fast) {
    counts(std::true_type());
  } else {
    counts(std::false_type());
  }
}

bool Depthwise3x3VnniUsable(const WindowGeometry& g) {
  // The row buffer's columns (Depthwise3x3VnniScratch) stay far from int overflow.
  return g.kh == 3 && g.kw == 3 && g.dil_w <= 4096 && g.ow <= (1 << 20) && g.stride_w <= 4096;
}

void PackDepthwise3x3Vnni(const int8_t* w, const int32_t* bias, int c, int32_t in_zp,
                          Depthwise3x3Vnni* out) {
  const int blocks = (c + 15) / 16;
  out->w.assign(static_cast<size_t>(blocks) * 3 * 64, 0);
  out->bias.assign(static_cast<size_t>(blocks) * 16, 0);
  for (int ch = 0; ch < c; ++ch) {
    const int b = ch / 16, lane = ch % 16;
    uint32_t sum = 0;
    for (int ky = 0; ky < 3; ++ky) {
      for (int kx = 0; kx < 3; ++kx) {
        const int8_t v = w[static_cast<size_t>(ky * 3 + kx) * c + ch];
        out->w[(static_cast<size_t>(b) * 3 + kx) * 64 + lane * 4 + ky] = v;
        sum += static_cast<uint32_t>(static_cast<int32_t>(v));
      }
    }
    // Wrapping int32 arithmetic, as the reference's sums.
    const uint32_t b0 = bias != nullptr ? static_cast<uint32_t>(bias[ch]) : 0u;
    out->bias[static_cast<size_t>(ch)] =
        static_cast<int32_t>(b0 - static_cast<uint32_t>(in_zp + 128) * sum);
  }
}

size_t Depthwise3x3VnniScratch(const WindowGeometry& g) {
  const size_t blocks = static_cast<size_t>((g.c + 15) / 16);
  const size_t cols =
      static_cast<size_t>(g.ow - 1) * g.stride_w + 2 * static_cast<size_t>(g.dil_w) + 1;
  return blocks * 16 + 64 + cols * 64;  // the zero point bytes, then one block's row buffer
}

namespace {

// 16 channels' 4-byte groups: the bytes at a[0], a[1], a[2] and, when kFour, a[3] (else 0);
// lanes outside m take zv's bytes; each byte offset by 128 (flip: 0x80 in the bytes that hold a
// row).
template <bool kFour>
EMBER_VNNI_TARGET inline __m512i Group(const int8_t* const* a, bool full, __mmask16 m, __m128i zv,
                                       __m512i flip) {
  __m512i r[4];
  for (int i = 0; i < (kFour ? 4 : 3); ++i) {
    const __m128i b = full ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i]))
                           : _mm_mask_loadu_epi8(zv, m, a[i]);
    r[i] = _mm512_slli_epi32(_mm512_cvtepu8_epi32(b), 8 * i);
  }
  const __m512i v = _mm512_ternarylogic_epi32(r[0], r[1], r[2], 0xFE);
  // (v | a[3]'s bytes) ^ flip, or v ^ flip
  return kFour ? _mm512_ternarylogic_epi32(v, r[3], flip, 0x56) : _mm512_xor_si512(v, flip);
}

// `n` consecutive columns' groups (Group), from input column ix of each row (src[r] + ix *
// step[r]; a step of 0 repeats a padding row's zero point bytes), into 64-byte slots at o.
template <bool kFour>
EMBER_VNNI_TARGET inline void GroupColumns(const int8_t* const* src, const size_t* step, size_t ix,
                                           int n, bool full, __mmask16 m, __m128i zv, __m512i flip,
                                           uint8_t* o) {
  const int8_t* a[4] = {src[0] + ix * step[0], src[1] + ix * step[1], src[2] + ix * step[2],
                        kFour ? src[3] + ix * step[3] : nullptr};
  const size_t s0 = step[0], s1 = step[1], s2 = step[2], s3 = kFour ? step[3] : 0;
  for (int j = 0; j < n; ++j, o += 64) {
    _mm512_store_si512(o, Group<kFour>(a, full, m, zv, flip));
    a[0] += s0;
    a[1] += s1;
    a[2] += s2;
    if (kFour) a[3] += s3;
  }
}

// The requantized int8 bytes of one vector of sums. kHigh: h (MakeHighRounding, out_zp folded
// in), else ApplyDoubleRounding<kPlain> and out_zp added. kClamp: clamped to [lo, hi] (an
// activation), else the saturating narrowing gives the reference's clamp to int8.
template <bool kHigh, bool kPlain, bool kClamp>
EMBER_VNNI_TARGET inline __m128i Vnni3x3Bytes(const avx512::DoubleRounding& k,
                                              const avx512::FusedBlock& h, __m512i acc,
                                              __m512i zp_out, __m512i lo, __m512i hi) {
  const __m512i v = kHigh ? avx512::ApplyFusedBlock<true, true>(h, acc)
                          : _mm512_add_epi32(avx512::ApplyDoubleRounding<kPlain>(k, acc), zp_out);
  return kClamp ? _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi))
                : _mm512_cvtsepi32_epi8(v);
}

template <bool Full>
EMBER_VNNI_TARGET inline void StoreBytes(int8_t* out, __mmask16 m, __m128i bytes) {
  if (Full) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
  } else {
    _mm_mask_storeu_epi8(out, m, bytes);
  }
}

// A block's requantization and weights, made once per row (or pair of rows).
struct Vnni3x3Consts {
  __m512i w0, w1, w2, bias;
  avx512::DoubleRounding k;
  avx512::FusedBlock h;  // MakeHighRounding's
  __m512i zp_out, lo, hi;
};

// A block's folded bias (from `bias`, the packed filter's) and requantization constants into t
// (its weights are the caller's); returns whether MakeHighRounding's form fits the block.
EMBER_VNNI_TARGET inline bool SetBlockRequant(const int32_t* bias, const DepthwiseRequant& q, int c,
                                              __mmask16 m, Vnni3x3Consts* t) {
  t->bias = _mm512_loadu_si512(bias + c);
  const __m512i mult = _mm512_maskz_loadu_epi32(m, q.mult + c);
  const __m512i shift = _mm512_maskz_loadu_epi32(m, q.shift + c);
  t->k = avx512::MakeDoubleRounding(mult, shift);
  const bool high = avx512::HighRoundingFits(mult, shift, m);
  if (high) t->h = avx512::MakeHighRounding(t->k, q.out_zp);
  t->zp_out = _mm512_set1_epi32(q.out_zp);
  t->lo = _mm512_set1_epi32(q.act_min);
  t->hi = _mm512_set1_epi32(q.act_max);
  return high;
}

// One 16-channel block's outputs along the row, from its row buffer `buf` (the filter's columns
// dil_w buffer columns apart). kTwo: the buffer's groups hold four input rows, and the next output
// row (at out + row_step) is made too from the same loads: its weights are the first row's one byte
// up in each group (rows 1-3, not 0-2).
template <bool Full, bool kHigh, bool kPlain, bool kClamp, bool kTwo, bool kDilated>
EMBER_VNNI_TARGET inline void Vnni3x3Cols(const WindowGeometry& g, const Vnni3x3Consts& t,
                                          __mmask16 m, const uint8_t* buf, size_t col_stride,
                                          int8_t* out, size_t row_step) {
  // Locals, not g's fields: the int8 stores may alias g, which the loop would then reload.
  const size_t step = static_cast<size_t>(g.stride_w) * col_stride;
  // kDilated: dil_w > 1 (else the taps' offsets are constants).
  const size_t tap = kDilated ? static_cast<size_t>(g.dil_w) * col_stride : col_stride;
  const size_t out_step = static_cast<size_t>(g.c);
  const __m512i w0 = t.w0, w1 = t.w1, w2 = t.w2, bias = t.bias;
  const __m512i v0 = _mm512_slli_epi32(w0, 8), v1 = _mm512_slli_epi32(w1, 8);
  const __m512i v2 = _mm512_slli_epi32(w2, 8);
  const uint8_t* s = buf;
  for (int ox = g.ow; ox > 0; --ox, s += step, out += out_step) {
    const __m512i x0 = _mm512_load_si512(s), x1 = _mm512_load_si512(s + tap);
    const __m512i x2 = _mm512_load_si512(s + 2 * tap);
    __m512i acc = _mm512_dpbusd_epi32(bias, x0, w0);
    acc = _mm512_dpbusd_epi32(acc, x1, w1);
    acc = _mm512_dpbusd_epi32(acc, x2, w2);
    StoreBytes<Full>(out, m,
                     Vnni3x3Bytes<kHigh, kPlain, kClamp>(t.k, t.h, acc, t.zp_out, t.lo, t.hi));
    if (kTwo) {
      __m512i acc2 = _mm512_dpbusd_epi32(bias, x0, v0);
      acc2 = _mm512_dpbusd_epi32(acc2, x1, v1);
      acc2 = _mm512_dpbusd_epi32(acc2, x2, v2);
      StoreBytes<Full>(out + row_step, m,
                       Vnni3x3Bytes<kHigh, kPlain, kClamp>(t.k, t.h, acc2, t.zp_out, t.lo, t.hi));
    }
  }
}

// Vnni3x3Cols in the form the block's requantization takes (Vnni3x3Block says which).
template <bool Full, bool kTwo, bool kDilated>
EMBER_VNNI_TARGET inline void Vnni3x3Run(const WindowGeometry& g, const Vnni3x3Consts& t,
                                         __mmask16 m, const uint8_t* buf, int8_t* out,
                                         size_t row_step, bool high, bool clamp, bool fast) {
  if (high && clamp) {
    Vnni3x3Cols<Full, true, true, true, kTwo, kDilated>(g, t, m, buf, 64, out, row_step);
  } else if (high) {
    Vnni3x3Cols<Full, true, true, false, kTwo, kDilated>(g, t, m, buf, 64, out, row_step);
  } else if (fast) {
    Vnni3x3Cols<Full, false, true, false, kTwo, kDilated>(g, t, m, buf, 64, out, row_step);
  } else {
    Vnni3x3Cols<Full, false, false, true, kTwo, kDilated>(g, t, m, buf, 64, out, row_step);
  }
}

// Block `block` (channels [c, c + 16), those in m) of a row (kTwo: two rows, row_step apart).
// `fast`: the rows' channels take ApplyDoubleRounding's plain form and the activation range is
// all of int8. A block whose lanes fit HighRoundingFits takes MakeHighRounding's form (MobileNet's
// relu6 layers among them).
template <bool Full, bool kTwo>
EMBER_VNNI_TARGET inline void Vnni3x3Block(const Depthwise3x3Vnni& p, const WindowGeometry& g,
                                           const DepthwiseRequant& q, bool fast, int block, int c,
                                           __mmask16 m, const uint8_t* buf, int8_t* y,
                                           size_t row_step) {
  Vnni3x3Consts t;
  const int8_t* wb = p.w.data() + static_cast<size_t>(block) * 192;
  t.w0 = _mm512_loadu_si512(wb);
  t.w1 = _mm512_loadu_si512(wb + 64);
  t.w2 = _mm512_loadu_si512(wb + 128);
  const bool high = SetBlockRequant(p.bias.data(), q, c, m, &t);
  const bool clamp = q.act_min != -128 || q.act_max != 127;
  int8_t* out = y + c;
  if (g.dil_w == 1) {
    Vnni3x3Run<Full, kTwo, false>(g, t, m, buf, out, row_step, high, clamp, fast);
  } else {
    Vnni3x3Run<Full, kTwo, true>(g, t, m, buf, out, row_step, high, clamp, fast);
  }
}

}  // namespace

EMBER_VNNI_TARGET void DepthwiseRowsI8Vnni3x3(const WindowGeometry& g, const int8_t* x,
                                              const Depthwise3x3Vnni& p, int32_t in_zp,
                                              const DepthwiseRequant& q, int oy, int rows, int c0,
                                              int c1, uint8_t* scratch, int8_t* y) {
  const size_t row_step = static_cast<size_t>(g.ow) * g.c;
  if (rows == 2 && (g.stride_h != 1 || g.dil_h != 1)) {  // the rows' inputs fit no one group
    DepthwiseRowsI8Vnni3x3(g, x, p, in_zp, q, oy, 1, c0, c1, scratch, y);
    DepthwiseRowsI8Vnni3x3(g, x, p, in_zp, q, oy + 1, 1, c0, c1, scratch, y + row_step);
    return;
  }
  const bool two = rows == 2;
  const int cb0 = c0 / 16, cb1 = (c1 + 15) / 16;
  const size_t zp_bytes = static_cast<size_t>((g.c + 15) / 16 * 16 + 64) / 64 * 64;
  int8_t* zp = reinterpret_cast<int8_t*>(scratch);
  std::memset(zp, static_cast<uint8_t>(static_cast<int8_t>(in_zp)), zp_bytes);
  uint8_t* buf = scratch + zp_bytes;
  // One 16-channel block at a time: its row buffer (column j is input column j - pad_w; each
  // a vector of 4-byte groups: rows oy * stride - pad_h + 0, dil_h, 2 dil_h, then 0, or a fourth
  // row for two output rows; offset by 128) is built and then read while in L1 (a whole row's
  // buffer, all blocks, is 22 KiB for 56x56x96 at stride 1, and was written out of L1 before its
  // first read).
  const int8_t* in_rows[4];
  for (int ky = 0; ky < 4; ++ky) {
    const int iy = oy * g.stride_h - g.pad_h + ky * g.dil_h;  // row 3: two rows, dil_h 1
    in_rows[ky] = iy >= 0 && iy < g.ih ? x + static_cast<size_t>(iy) * g.iw * g.c : nullptr;
  }
  const __m512i flip = _mm512_set1_epi32(two ? static_cast<int>(0x80808080u) : 0x00808080);
  const __m128i zv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(zp));
  const int cols = (g.ow - 1) * g.stride_w + 2 * g.dil_w + 1;
  // Columns [j0, j1) lie inside the image.
  const int j0 = std::min(cols, std::max(0, g.pad_w));
  const int j1 = std::max(j0, std::min(cols, g.iw + g.pad_w));
  const bool fast = FastRequant(q, c0, c1);
  // A padding column: Group of zero point bytes in every row, the same in every lane.
  const uint32_t zb = static_cast<uint8_t>(static_cast<int8_t>(in_zp)) ^ 0x80u;
  const __m512i pad = _mm512_set1_epi32(static_cast<int>(zb * (two ? 0x01010101u : 0x00010101u)));
  for (int b = cb0; b < cb1; ++b) {
    const int c = b * 16;
    const bool full = c + 16 <= c1;
    const __mmask16 m = Mask(c1 - c);
    // Rows in the padding read the zero point bytes, at the same channel offset.
    const int8_t* src[4];
    size_t step[4];
    for (int ky = 0; ky < 4; ++ky) {
      src[ky] = in_rows[ky] != nullptr ? in_rows[ky] + c : zp + c;
      step[ky] = in_rows[ky] != nullptr ? static_cast<size_t>(g.c) : 0;
    }
    for (int j = 0; j < j0; ++j) _mm512_store_si512(buf + static_cast<size_t>(j) * 64, pad);
    const size_t ix = static_cast<size_t>(j0 - g.pad_w);
    uint8_t* o = buf + static_cast<size_t>(j0) * 64;
    if (two) {
      GroupColumns<true>(src, step, ix, j1 - j0, full, m, zv, flip, o);
    } else {
      GroupColumns<false>(src, step, ix, j1 - j0, full, m, zv, flip, o);
    }
    for (int j = j1; j < cols; ++j) _mm512_store_si512(buf + static_cast<size_t>(j) * 64, pad);
    if (full && two) {
      Vnni3x3Block<true, true>(p, g, q, fast, b, c, m, buf, y, row_step);
    } else if (full) {
      Vnni3x3Block<true, false>(p, g, q, fast, b, c, m, buf, y, row_step);
    } else if (two) {
      Vnni3x3Block<false, true>(p, g, q, fast, b, c, m, buf, y, row_step);
    } else {
      Vnni3x3Block<false, false>(p, g, q, fast, b, c, m, buf, y, row_step);
    }
  }
}

bool DepthwiseKxKVnniUsable(const WindowGeometry& g) {
  return g.kh >= 1 && g.kh <= 8 && g.kw >= 1 && g.kw <= 8 && !(g.kh == 3 && g.kw == 3) &&
         g.dil_w <= 4096 && g.ow <= (1 << 20) && g.stride_w <= 4096;
}

void PackDepthwiseKxKVnni(const int8_t* w, const int32_t* bias, int kh, int kw, int c,
                          int32_t in_zp, DepthwiseKxKVnni* out) {
  const int blocks = (c + 15) / 16, groups = (kh + 3) / 4;
  out->kh = kh;
  out->kw = kw;
  out->groups = groups;
  const size_t per_block = static_cast<size_t>(groups) * kw * 64;
  out->w.assign(static_cast<size_t>(blocks) * per_block, 0);
  out->bias.assign(static_cast<size_t>(blocks) * 16, 0);
  for (int ch = 0; ch < c; ++ch) {
    const int b = ch / 16, lane = ch % 16;
    uint32_t sum = 0;
    for (int ky = 0; ky < kh; ++ky) {
      for (int kx = 0; kx < kw; ++kx) {
        const int8_t v = w[static_cast<size_t>(ky * kw + kx) * c + ch];
        const size_t slot = static_cast<size_t>(b) * per_block +
                            (static_cast<size_t>(ky / 4) * kw + kx) * 64 + lane * 4 + ky % 4;
        out->w[slot] = v;
        sum += static_cast<uint32_t>(static_cast<int32_t>(v));
      }
    }
    // Wrapping int32 arithmetic, as the reference's sums.
    const uint32_t b0 = bias != nullptr ? static_cast<uint32_t>(bias[ch]) : 0u;
    out->bias[static_cast<size_t>(ch)] =
        static_cast<int32_t>(b0 - static_cast<uint32_t>(in_zp + 128) * sum);
  }
}

size_t DepthwiseKxKVnniScratch(const WindowGeometry& g) {
  const size_t cols =
      static_cast<size_t>(g.ow - 1) * g.stride_w + static_cast<size_t>(g.kw - 1) * g.dil_w + 1;
  const size_t groups = static_cast<size_t>((g.kh + 3) / 4);
  // the zero point bytes, then one block's row buffer per group of rows
  return static_cast<size_t>((g.c + 15) / 16 * 16 + 64) / 64 * 64 + groups * cols * 64;
}

namespace {

// One 16-channel block's outputs along the row from its groups' row buffers (group r's at
// buf + r * group_stride; the filter's columns dil_w buffer columns apart): each output the bias
// plus one VPDPBUSD per group and filter column, then requantized (Vnni3x3Bytes).
template <bool Full, bool kHigh, bool kPlain, bool kClamp>
EMBER_VNNI_TARGET inline void VnniKxKCols(const WindowGeometry& g, const Vnni3x3Consts& t,
                                          const __m512i* w, int groups, __mmask16 m,
                                          const uint8_t* buf, size_t group_stride, int8_t* out) {
  const size_t step = static_cast<size_t>(g.stride_w) * 64;
  const size_t tap = static_cast<size_t>(g.dil_w) * 64;
  const size_t out_step = static_cast<size_t>(g.c);
  const int kw = g.kw;
  const uint8_t* s = buf;
  for (int ox = g.ow; ox > 0; --ox, s += step, out += out_step) {
    __m512i acc = t.bias;
    for (int r = 0; r < groups; ++r) {
      const uint8_t* sr = s + static_cast<size_t>(r) * group_stride;
      for (int kx = 0; kx < kw; ++kx) {
        acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(sr + static_cast<size_t>(kx) * tap),
                                  w[r * kw + kx]);
      }
    }
    StoreBytes<Full>(out, m,
                     Vnni3x3Bytes<kHigh, kPlain, kClamp>(t.k, t.h, acc, t.zp_out, t.lo, t.hi));
  }
}

}  // namespace

EMBER_VNNI_TARGET void DepthwiseRowI8VnniKxK(const WindowGeometry& g, const int8_t* x,
                                             const DepthwiseKxKVnni& p, int32_t in_zp,
                                             const DepthwiseRequant& q, int oy, int c0, int c1,
                                             uint8_t* scratch, int8_t* y) {
  const int cb0 = c0 / 16, cb1 = (c1 + 15) / 16, groups = p.groups, kw = g.kw;
  const size_t zp_bytes = static_cast<size_t>((g.c + 15) / 16 * 16 + 64) / 64 * 64;
  int8_t* zp = reinterpret_cast<int8_t*>(scratch);
  std::memset(zp, static_cast<uint8_t>(static_cast<int8_t>(in_zp)), zp_bytes);
  uint8_t* buf = scratch + zp_bytes;
  const int cols = (g.ow - 1) * g.stride_w + (g.kw - 1) * g.dil_w + 1;
  const size_t group_stride = static_cast<size_t>(cols) * 64;
  // Input row ky of the window (ky < 4 * groups; rows past kh, weighted 0, read zero points).
  const int8_t* in_rows[32];
  for (int ky = 0; ky < 4 * groups; ++ky) {
    const int iy = oy * g.stride_h - g.pad_h + ky * g.dil_h;
    in_rows[ky] =
        ky < g.kh && iy >= 0 && iy < g.ih ? x + static_cast<size_t>(iy) * g.iw * g.c : nullptr;
  }
  const __m512i flip = _mm512_set1_epi32(static_cast<int>(0x80808080u));
  const __m128i zv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(zp));
  const int j0 = std::min(cols, std::max(0, g.pad_w));
  const int j1 = std::max(j0, std::min(cols, g.iw + g.pad_w));
  const bool fast = FastRequant(q, c0, c1);
  const bool clamp = q.act_min != -128 || q.act_max != 127;
  const uint32_t zb = static_cast<uint8_t>(static_cast<int8_t>(in_zp)) ^ 0x80u;
  const __m512i pad = _mm512_set1_epi32(static_cast<int>(zb * 0x01010101u));
  const size_t per_block = static_cast<size_t>(groups) * kw * 64;
  for (int b = cb0; b < cb1; ++b) {
    const int c = b * 16;
    const bool full = c + 16 <= c1;
    const __mmask16 m = Mask(c1 - c);
    for (int r = 0; r < groups; ++r) {
      const int8_t* src[4];
      size_t step[4];
      for (int i = 0; i < 4; ++i) {
        const int8_t* row = in_rows[4 * r + i];
        src[i] = row != nullptr ? row + c : zp + c;
        step[i] = row != nullptr ? static_cast<size_t>(g.c) : 0;
      }
      uint8_t* gb = buf + static_cast<size_t>(r) * group_stride;
      for (int j = 0; j < j0; ++j) _mm512_store_si512(gb + static_cast<size_t>(j) * 64, pad);
      GroupColumns<true>(src, step, static_cast<size_t>(j0 - g.pad_w), j1 - j0, full, m, zv, flip,
                         gb + static_cast<size_t>(j0) * 64);
      for (int j = j1; j < cols; ++j) _mm512_store_si512(gb + static_cast<size_t>(j) * 64, pad);
    }
    Vnni3x3Consts t;
    __m512i w[32];
    const int8_t* wb = p.w.data() + static_cast<size_t>(b) * per_block;
    for (int i = 0; i < groups * kw; ++i)
      w[i] = _mm512_loadu_si512(wb + static_cast<size_t>(i) * 64);
    const bool high = SetBlockRequant(p.bias.data(), q, c, m, &t);
    int8_t* out = y + c;
    auto run = [&](auto full_tag) {
      constexpr bool kFull = decltype(full_tag)::value;
      if (high && clamp) {
        VnniKxKCols<kFull, true, true, true>(g, t, w, groups, m, buf, group_stride, out);
      } else if (high) {
        VnniKxKCols<kFull, true, true, false>(g, t, w, groups, m, buf, group_stride, out);
      } else if (fast) {
        VnniKxKCols<kFull, false, true, false>(g, t, w, groups, m, buf, group_stride, out);
      } else {
        VnniKxKCols<kFull, false, false, true>(g, t, w, groups, m, buf, group_stride, out);
      }
    };
    if (full) {
      run(std::true_type());
    } else {
      run(std::false_type());
    }
  }
}

namespace {

// One 3x3 float output row for the channels [c, c + 16) (those in `m`): the block's nine weights
// and bias stay in registers over the whole row. Each output is bias plus the taps inside the
// image in (ky, kx) order, fused multiply-adds. `rows[ky]` is input row ky's start, or null when
// it lies in the padding; `Check`: test each column's taps against the image's width.
template <bool Full, bool Check>
EMBER_VNNI_TARGET inline __m512 Col3x3F32(const WindowGeometry& g, const float* const* rows,
                                          const __m512* wv, __m512 acc, int ix0, __mmask16 m) {
  for (int ky = 0; ky < 3; ++ky) {
    if (rows[ky] == nullptr) continue;
    for (int kx = 0; kx < 3; ++kx) {
      const int ix = ix0 + kx * g.dil_w;
      if (Check && (ix < 0 || ix >= g.iw)) continue;
      const float* p = rows[ky] + static_cast<size_t>(ix) * g.c;
      const __m512 xv = Full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
      acc = _mm512_fmadd_ps(xv, wv[ky * 3 + kx], acc);
    }
  }
  return acc;
}

template <bool Full>
EMBER_VNNI_TARGET inline void StoreF32(float* p, __mmask16 m, __m512 v) {
  if (Full) {
    _mm512_storeu_ps(p, v);
  } else {
    _mm512_mask_storeu_ps(p, m, v);
  }
}

// Four interior columns [ox, ox + 4) of a 3x3 row with column stride S (dilation 1), their
// shared inputs loaded once; each output adds its taps in (ky, kx) order.
template <bool Full, int S>
EMBER_VNNI_TARGET inline void Quad3x3F32(const WindowGeometry& g, const float* const* rows,
                                         const __m512* wv, __m512 b, __m512 vlo, __m512 vhi,
                                         __mmask16 m, int ox, float* yc) {
  constexpr int kLoads = 3 + 3 * S;
  const size_t off = static_cast<size_t>(ox * S - g.pad_w) * g.c;
  __m512 a[4] = {b, b, b, b};
  for (int ky = 0; ky < 3; ++ky) {
    if (rows[ky] == nullptr) continue;
    const float* p = rows[ky] + off;
    __m512 xv[kLoads];
    for (int i = 0; i < kLoads; ++i) {
      xv[i] = Full ? _mm512_loadu_ps(p + static_cast<size_t>(i) * g.c)
                   : _mm512_maskz_loadu_ps(m, p + static_cast<size_t>(i) * g.c);
    }
    for (int j = 0; j < 4; ++j) {
      for (int kx = 0; kx < 3; ++kx) a[j] = _mm512_fmadd_ps(xv[S * j + kx], wv[3 * ky + kx], a[j]);
    }
  }
  for (int j = 0; j < 4; ++j) {
    StoreF32<Full>(yc + static_cast<size_t>(ox + j) * g.c, m,
                   _mm512_min_ps(vhi, _mm512_max_ps(vlo, a[j])));
  }
}

template <bool Full>
EMBER_VNNI_TARGET inline void Row3x3F32(const WindowGeometry& g, const float* x, const float* w,
                                        const float* bias, float lo, float hi, int oy, int c,
                                        __mmask16 m, float* y) {
  const float* rows[3];
  const int iy0 = oy * g.stride_h - g.pad_h;
  for (int ky = 0; ky < 3; ++ky) {
    const int iy = iy0 + ky * g.dil_h;
    rows[ky] = iy >= 0 && iy < g.ih ? x + static_cast<size_t>(iy) * g.iw * g.c + c : nullptr;
  }
  __m512 wv[9];
  for (int t = 0; t < 9; ++t)
    wv[t] = _mm512_maskz_loadu_ps(m, w + static_cast<size_t>(t) * g.c + c);
  const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(m, bias + c) : _mm512_setzero_ps();
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const int span = 2 * g.dil_w;
  // Interior columns: ix0 >= 0 and ix0 + span < iw.
  int first = 0;
  while (first < g.ow && first * g.stride_w - g.pad_w < 0) ++first;
  int last = first;
  while (last < g.ow && last * g.stride_w - g.pad_w + span < g.iw) ++last;
  float* yc = y + c;
  for (int ox = 0; ox < first; ++ox) {
    const __m512 acc = Col3x3F32<Full, true>(g, rows, wv, b, ox * g.stride_w - g.pad_w, m);
    StoreF32<Full>(yc + static_cast<size_t>(ox) * g.c, m,
                   _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc)));
  }
  int ox = first;
  // Four interior columns share their inputs: 6 (stride 1) or 9 (stride 2) loads per filter
  // row, not 12.
  if (g.stride_w == 1 && g.dil_w == 1) {
    for (; ox + 4 <= last; ox += 4) Quad3x3F32<Full, 1>(g, rows, wv, b, vlo, vhi, m, ox, yc);
  } else if (g.stride_w == 2 && g.dil_w == 1) {
    for (; ox + 4 <= last; ox += 4) Quad3x3F32<Full, 2>(g, rows, wv, b, vlo, vhi, m, ox, yc);
  }
  for (; ox < last; ++ox) {
    const __m512 acc = Col3x3F32<Full, false>(g, rows, wv, b, ox * g.stride_w - g.pad_w, m);
    StoreF32<Full>(yc + static_cast<size_t>(ox) * g.c, m,
                   _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc)));
  }
  for (int ox = last; ox < g.ow; ++ox) {
    const __m512 acc = Col3x3F32<Full, true>(g, rows, wv, b, ox * g.stride_w - g.pad_w, m);
    StoreF32<Full>(yc + static_cast<size_t>(ox) * g.c, m,
                   _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc)));
  }
}

// Two interior columns [ox, ox + 2) of two full blocks with column stride S (dilation 1): the
// columns share their middle inputs, 3 + S loads per filter row and block, not six. Each output
// adds its taps in (ky, kx) order.
template <int S>
EMBER_VNNI_TARGET inline void Duo3x3F32Pair(const WindowGeometry& g, const float* const* rows,
                                            const __m512* wv0, const __m512* wv1, __m512 b0,
                                            __m512 b1, __m512 vlo, __m512 vhi, int ox, float* y) {
  constexpr int kLoads = 3 + S;
  const size_t off = static_cast<size_t>(ox * S - g.pad_w) * g.c;
  __m512 a[2][2] = {{b0, b0}, {b1, b1}};  // [block][column]
  for (int ky = 0; ky < 3; ++ky) {
    if (rows[ky] == nullptr) continue;
    for (int blk = 0; blk < 2; ++blk) {
      const float* p = rows[ky] + off + 16 * blk;
      const __m512* u = (blk == 0 ? wv0 : wv1) + 3 * ky;
      __m512 xv[kLoads];
      for (int i = 0; i < kLoads; ++i) xv[i] = _mm512_loadu_ps(p + static_cast<size_t>(i) * g.c);
      for (int j = 0; j < 2; ++j) {
        for (int kx = 0; kx < 3; ++kx)
          a[blk][j] = _mm512_fmadd_ps(xv[S * j + kx], u[kx], a[blk][j]);
      }
    }
  }
  float* yo = y + static_cast<size_t>(ox) * g.c;
  for (int j = 0; j < 2; ++j) {
    for (int blk = 0; blk < 2; ++blk) {
      _mm512_storeu_ps(yo + static_cast<size_t>(j) * g.c + 16 * blk,
                       _mm512_min_ps(vhi, _mm512_max_ps(vlo, a[blk][j])));
    }
  }
}

// Row3x3F32 for two full blocks [c, c + 32) at once: each pass over the three input rows
// fills two 64-byte lines per column.
template <bool Check>
EMBER_VNNI_TARGET inline void Cols3x3F32Pair(const WindowGeometry& g, const float* const* rows,
                                             const __m512* wv0, const __m512* wv1, __m512 b0,
                                             __m512 b1, __m512 vlo, __m512 vhi, int ox0, int ox1,
                                             float* y) {
  const float* rows1[3];
  for (int ky = 0; ky < 3; ++ky) rows1[ky] = rows[ky] != nullptr ? rows[ky] + 16 : nullptr;
  int ox = ox0;
  if (!Check && g.stride_w == 1 && g.dil_w == 1) {
    // Two interior columns share their middle inputs: four loads per row and block, not six.
    for (; ox + 2 <= ox1; ox += 2) {
      const size_t off = static_cast<size_t>(ox - g.pad_w) * g.c;
      __m512 a00 = b0, a01 = b0, a10 = b1, a11 = b1;
      for (int ky = 0; ky < 3; ++ky) {
        if (rows[ky] == nullptr) continue;
        const float* p = rows[ky] + off;
        const __m512* u = wv0 + 3 * ky;
        __m512 x0 = _mm512_loadu_ps(p), x1 = _mm512_loadu_ps(p + g.c);
        __m512 x2 = _mm512_loadu_ps(p + 2 * g.c), x3 = _mm512_loadu_ps(p + 3 * g.c);
        a00 = _mm512_fmadd_ps(x2, u[2], _mm512_fmadd_ps(x1, u[1], _mm512_fmadd_ps(x0, u[0], a00)));
        a01 = _mm512_fmadd_ps(x3, u[2], _mm512_fmadd_ps(x2, u[1], _mm512_fmadd_ps(x1, u[0], a01)));
        u = wv1 + 3 * ky;
        x0 = _mm512_loadu_ps(p + 16);
        x1 = _mm512_loadu_ps(p + g.c + 16);
        x2 = _mm512_loadu_ps(p + 2 * g.c + 16);
        x3 = _mm512_loadu_ps(p + 3 * g.c + 16);
        a10 = _mm512_fmadd_ps(x2, u[2], _mm512_fmadd_ps(x1, u[1], _mm512_fmadd_ps(x0, u[0], a10)));
        a11 = _mm512_fmadd_ps(x3, u[2], _mm512_fmadd_ps(x2, u[1], _mm512_fmadd_ps(x1, u[0], a11)));
      }
      float* yo = y + static_cast<size_t>(ox) * g.c;
      _mm512_storeu_ps(yo, _mm512_min_ps(vhi, _mm512_max_ps(vlo, a00)));
      _mm512_storeu_ps(yo + 16, _mm512_min_ps(vhi, _mm512_max_ps(vlo, a10)));
      _mm512_storeu_ps(yo + g.c, _mm512_min_ps(vhi, _mm512_max_ps(vlo, a01)));
      _mm512_storeu_ps(yo + g.c + 16, _mm512_min_ps(vhi, _mm512_max_ps(vlo, a11)));
    }
  } else if (!Check && g.stride_w == 2 && g.dil_w == 1) {
    for (; ox + 2 <= ox1; ox += 2) Duo3x3F32Pair<2>(g, rows, wv0, wv1, b0, b1, vlo, vhi, ox, y);
  }
  for (; ox < ox1; ++ox) {
    const int ix0 = ox * g.stride_w - g.pad_w;
    const __m512 a0 = Col3x3F32<true, Check>(g, rows, wv0, b0, ix0, 0xFFFF);
    const __m512 a1 = Col3x3F32<true, Check>(g, rows1, wv1, b1, ix0, 0xFFFF);
    float* yo = y + static_cast<size_t>(ox) * g.c;
    _mm512_storeu_ps(yo, _mm512_min_ps(vhi, _mm512_max_ps(vlo, a0)));
    _mm512_storeu_ps(yo + 16, _mm512_min_ps(vhi, _mm512_max_ps(vlo, a1)));
  }
}

EMBER_VNNI_TARGET inline void Row3x3F32Pair(const WindowGeometry& g, const float* x, const float* w,
                                            const float* bias, float lo, float hi, int oy, int c,
                                            float* y) {
  const float* rows[3];
  const int iy0 = oy * g.stride_h - g.pad_h;
  for (int ky = 0; ky < 3; ++ky) {
    const int iy = iy0 + ky * g.dil_h;
    rows[ky] = iy >= 0 && iy < g.ih ? x + static_cast<size_t>(iy) * g.iw * g.c + c : nullptr;
  }
  __m512 wv0[9], wv1[9];
  for (int t = 0; t < 9; ++t) {
    wv0[t] = _mm512_loadu_ps(w + static_cast<size_t>(t) * g.c + c);
    wv1[t] = _mm512_loadu_ps(w + static_cast<size_t>(t) * g.c + c + 16);
  }
  const __m512 b0 = bias != nullptr ? _mm512_loadu_ps(bias + c) : _mm512_setzero_ps();
  const __m512 b1 = bias != nullptr ? _mm512_loadu_ps(bias + c + 16) : _mm512_setzero_ps();
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const int span = 2 * g.dil_w;
  int first = 0;
  while (first < g.ow && first * g.stride_w - g.pad_w < 0) ++first;
  int last = first;
  while (last < g.ow && last * g.stride_w - g.pad_w + span < g.iw) ++last;
  float* yc = y + c;
  Cols3x3F32Pair<true>(g, rows, wv0, wv1, b0, b1, vlo, vhi, 0, first, yc);
  Cols3x3F32Pair<false>(g, rows, wv0, wv1, b0, b1, vlo, vhi, first, last, yc);
  Cols3x3F32Pair<true>(g, rows, wv0, wv1, b0, b1, vlo, vhi, last, g.ow, yc);
}

// One output's channels [c, c + 16 NB) of any filter (taps x_off / tap, n of them): each block
// the sum over the taps in order of x * w (a multiply, then an add: the reference's rounding),
// then the bias, then the clamp. m: the lanes of the last block (NB 1).
template <int NB>
EMBER_VNNI_TARGET inline void ColBlocksF32(const float* x, const float* w, const float* bias,
                                           int channels, const size_t* x_off, const int* tap, int n,
                                           int c, __mmask16 m, __m512 vlo, __m512 vhi, float* yo) {
  __m512 acc[NB];
  for (int b = 0; b < NB; ++b) acc[b] = _mm512_setzero_ps();
  for (int t = 0; t < n; ++t) {
    const float* xt = x + x_off[t] + c;
    const float* wt = w + static_cast<size_t>(tap[t]) * channels + c;
    for (int b = 0; b < NB; ++b) {
      const __m512 xv = NB > 1 ? _mm512_loadu_ps(xt + 16 * b) : _mm512_maskz_loadu_ps(m, xt);
      const __m512 wv = NB > 1 ? _mm512_loadu_ps(wt + 16 * b) : _mm512_maskz_loadu_ps(m, wt);
      acc[b] = _mm512_add_ps(acc[b], _mm512_mul_ps(xv, wv));
    }
  }
  for (int b = 0; b < NB; ++b) {
    const __mmask16 mb = NB > 1 ? static_cast<__mmask16>(0xFFFF) : m;
    if (bias != nullptr)
      acc[b] = _mm512_add_ps(acc[b], _mm512_maskz_loadu_ps(mb, bias + c + 16 * b));
    _mm512_mask_storeu_ps(yo + c + 16 * b, mb, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[b])));
  }
}

// Output row oy, columns [first, last) (whose taps all lie inside the image), channels [c, c +
// 16) (those in m), of a kh x kw = N filter whose kh input rows lie inside the image: the block's
// N weights in registers, each output the sum of its taps in (ky, kx) order (ColBlocksF32's).
template <int N>
EMBER_VNNI_TARGET inline void RowTapsF32(const WindowGeometry& g, const float* x, const float* w,
                                         const float* bias, int oy, int c, __mmask16 m, __m512 vlo,
                                         __m512 vhi, int first, int last, float* y) {
  __m512 wv[N];
  size_t off[N];
  const int iy0 = oy * g.stride_h - g.pad_h;
#pragma GCC unroll 32
  for (int t = 0; t < N; ++t) {
    const int ky = t / g.kw, kx = t % g.kw;
    wv[t] = _mm512_maskz_loadu_ps(m, w + static_cast<size_t>(t) * g.c + c);
    off[t] =
        (static_cast<size_t>(iy0 + ky * g.dil_h) * g.iw + static_cast<size_t>(kx) * g.dil_w) * g.c;
  }
  const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(m, bias + c) : _mm512_setzero_ps();
  const size_t col_step = static_cast<size_t>(g.stride_w) * g.c;
  for (int ox = first; ox < last;) {
    const int ix0 = ox * g.stride_w - g.pad_w;
    float* yo = y + static_cast<size_t>(ox) * g.c;
    // Four columns at once where there are: four independent sums (one sum's chain of adds, each
    // waiting on the last, bounded the row).
    const bool four = ox + 4 <= last;
    const int cols = four ? 4 : 1;
    const float* xs = x + static_cast<size_t>(ix0) * g.c + c;
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                     _mm512_setzero_ps()};
    if (four) {
#pragma GCC unroll 32
      for (int t = 0; t < N; ++t) {
        const float* p = xs + off[t];
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          acc[j] = _mm512_add_ps(acc[j],
                                 _mm512_mul_ps(_mm512_maskz_loadu_ps(m, p + j * col_step), wv[t]));
        }
      }
    } else {
#pragma GCC unroll 32
      for (int t = 0; t < N; ++t) {
        acc[0] = _mm512_add_ps(acc[0], _mm512_mul_ps(_mm512_maskz_loadu_ps(m, xs + off[t]), wv[t]));
      }
    }
#pragma GCC unroll 4
    for (int j = 0; j < cols; ++j) {
      __m512 v = acc[j];
      if (bias != nullptr) v = _mm512_add_ps(v, b);
      _mm512_mask_storeu_ps(yo + static_cast<size_t>(j) * g.c + c, m,
                            _mm512_min_ps(vhi, _mm512_max_ps(vlo, v)));
    }
    ox += cols;
  }
}

}  // namespace

void DepthwiseRowF32Avx512(const WindowGeometry& g, const float* x, const float* w,
                           const float* bias, float lo, float hi, int oy, float* y) {
  DepthwiseRowF32Avx512Channels(g, x, w, bias, lo, hi, oy, 0, g.c, y);
}

EMBER_VNNI_TARGET void DepthwiseRowF32Avx512Channels(const WindowGeometry& g, const float* x,
                                                     const float* w, const float* bias, float lo,
                                                     float hi, int oy, int c0, int c1, float* y) {
  if (g.kh == 3 && g.kw == 3) {
    int c = c0;
    for (; c + 32 <= c1; c += 32) Row3x3F32Pair(g, x, w, bias, lo, hi, oy, c, y);
    for (; c + 16 <= c1; c += 16) Row3x3F32<true>(g, x, w, bias, lo, hi, oy, c, 0xFFFF, y);
    if (c < c1) Row3x3F32<false>(g, x, w, bias, lo, hi, oy, c, Mask(c1 - c), y);
    return;
  }
  size_t x_off[kMaxTaps];
  int tap[kMaxTaps];
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const int iy0 = oy * g.stride_h - g.pad_h;
  if (g.kh == 5 && g.kw == 5 && iy0 >= 0 && iy0 + 4 * g.dil_h < g.ih) {
    // A 5x5 filter's row whose five input rows lie inside the image: a block's 25 weights stay in
    // registers along the row.
    // Columns [first, last) read no padding: RowTapsF32; the others their taps inside, as below.
    const int span = 4 * g.dil_w;
    int first = 0;
    while (first < g.ow && first * g.stride_w - g.pad_w < 0) ++first;
    int last = first;
    while (last < g.ow && last * g.stride_w - g.pad_w + span < g.iw) ++last;
    for (int c = c0; c < c1; c += 16) {
      RowTapsF32<25>(g, x, w, bias, oy, c, Mask(c1 - c), vlo, vhi, first, last, y);
    }
    for (int ox = 0; ox < g.ow; ++ox) {
      if (ox == first) ox = std::max(ox, last);
      if (ox >= g.ow) break;
      const int n = ValidTaps(g, oy, ox, x_off, tap);
      float* yo = y + static_cast<size_t>(ox) * g.c;
      int c = c0;
      for (; c + 64 <= c1; c += 64) {
        ColBlocksF32<4>(x, w, bias, g.c, x_off, tap, n, c, 0xFFFF, vlo, vhi, yo);
      }
      for (; c < c1; c += 16) {
        ColBlocksF32<1>(x, w, bias, g.c, x_off, tap, n, c, Mask(c1 - c), vlo, vhi, yo);
      }
    }
    return;
  }
  for (int ox = 0; ox < g.ow; ++ox) {
    const int n = ValidTaps(g, oy, ox, x_off, tap);
    float* yo = y + static_cast<size_t>(ox) * g.c;
    int c = c0;
    // Four blocks of 16 channels a step: four independent sums (one add chain per block left
    // each tap waiting on the last add's latency).
    for (; c + 64 <= c1; c += 64)
      ColBlocksF32<4>(x, w, bias, g.c, x_off, tap, n, c, 0xFFFF, vlo, vhi, yo);
    for (; c < c1; c += 16)
      ColBlocksF32<1>(x, w, bias, g.c, x_off, tap, n, c, Mask(c1 - c), vlo, vhi, yo);
  }
}

#else

bool DepthwiseKxKVnniUsable(const WindowGeometry&) { return false; }
void PackDepthwiseKxKVnni(const int8_t*, const int32_t*, int, int, int, int32_t,
                          DepthwiseKxKVnni*) {}
size_t DepthwiseKxKVnniScratch(const WindowGeometry&) { return 0; }
void DepthwiseRowI8VnniKxK(const WindowGeometry&, const int8_t*, const DepthwiseKxKVnni&, int32_t,
                           const DepthwiseRequant&, int, int, int, uint8_t*, int8_t*) {}
bool Depthwise3x3VnniUsable(const WindowGeometry&) { return false; }
void PackDepthwise3x3Vnni(const int8_t*, const int32_t*, int, int32_t, Depthwise3x3Vnni*) {}
size_t Depthwise3x3VnniScratch(const WindowGeometry&) { return 0; }
void DepthwiseRowsI8Vnni3x3(const WindowGeometry&, const int8_t*, const Depthwise3x3Vnni&, int32_t,
                            const DepthwiseRequant&, int, int, int, int, uint8_t*, int8_t*) {}
bool DepthwiseAvx512Usable(const WindowGeometry&) { return false; }
void DepthwiseRowI8Avx512(const WindowGeometry&, const int8_t*, const int32_t*, int32_t,
                          const DepthwiseRequant&, int, int8_t*) {}
void DepthwiseRowF32Avx512(const WindowGeometry&, const float*, const float*, const float*, float,
                           float, int, float*) {}
void DepthwiseRowI8Avx512Channels(const WindowGeometry&, const int8_t*, const int32_t*, int32_t,
                                  const DepthwiseRequant&, int, int, int, int8_t*) {}
void DepthwiseRowF32Avx512Channels(const WindowGeometry&, const float*, const float*, const float*,
                                   float, float, int, int, int, float*) {}

#endif

}  // namespace lite
}  // namespace ember
