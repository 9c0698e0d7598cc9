// Depthwise rows (see depthwise.h): the channel loop is innermost and contiguous in input,
// weights and accumulators, so the compiler vectorises it: an AVX2 and a baseline build, chosen
// by lite/loop_isa.h (AVX-512 CPUs run the AVX2 build, see below).
#include "lite/depthwise.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <vector>

#include "lite/loop_isa.h"
#include "lite/requant_avx2.h"

#ifdef EMBER_LOOP_X86
#include <immintrin.h>
#endif

namespace ember {
namespace lite {
namespace {

EMBER_LOOP_BODY void RowI8(const WindowGeometry& g, const int8_t* x, const int8_t* w, int32_t in_zp,
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

EMBER_LOOP_BODY void RowF32(const WindowGeometry& g, const float* x, const float* w,
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

void RowI8Generic(const WindowGeometry& g, const int8_t* x, const int8_t* w, int32_t in_zp, int oy,
                  int32_t* acc) {
  RowI8(g, x, w, in_zp, oy, acc);
}

void RowF32Generic(const WindowGeometry& g, const float* x, const float* w, const float* bias,
                   float lo, float hi, int oy, float* y) {
  RowF32(g, x, w, bias, lo, hi, oy, y);
}

#ifdef EMBER_LOOP_X86
EMBER_LOOP_AVX2 void RowI8Avx2(const WindowGeometry& g, const int8_t* x, const int8_t* w,
                               int32_t in_zp, int oy, int32_t* acc) {
  RowI8(g, x, w, in_zp, oy, acc);
}

EMBER_LOOP_AVX2 void RowF32Avx2(const WindowGeometry& g, const float* x, const float* w,
                                const float* bias, float lo, float hi, int oy, float* y) {
  RowF32(g, x, w, bias, lo, hi, oy, y);
}

// int8 3x3 rows without dilation, channels a multiple of 16 (DepthwiseRowsI8Fused).
bool Row3x3I8Fits(const WindowGeometry& g) {
  return g.kh == 3 && g.kw == 3 && g.dil_h == 1 && g.dil_w == 1 && g.c % 16 == 0 && g.c > 0;
}

// 16 int8 weights of one tap as int16.
__attribute__((target("avx2"))) inline __m256i WidenedWeights(const int8_t* w, int tap, size_t c,
                                                              size_t ch) {
  return _mm256_cvtepi8_epi16(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + static_cast<size_t>(tap) * c + ch)));
}

// Several output rows of a 3x3 int8 depthwise convolution, requantized in registers. Per block
// of 16 channels, each input row is widened to int16 once and each pixel stored interleaved with
// its right neighbour (VPUNPCKL/HWD): the pair (ix, ix + 1) is one madd operand. An output takes,
// per kernel row, one VPMADDWD of the pair (ix0, ix0 + 1) with the weights (w0, w1) and one of
// the pair (ix0 + 2, ix0 + 3) with (w2, 0): twelve madds from memory and no shuffles. The rows
// live in a ring of three (all channels) that the output rows share (stride 1 builds one new
// input row per output row, stride 2 two). The interleave leaves channels {0-3, 8-11} in one
// accumulator and {4-7, 12-15} in the other; both are requantized where they are
// (requant_avx2.h, the constants permuted once into that order) and packed to 16 int8 outputs.
// Exact int32 sums, then RequantizeRows' roundings, zero point and clamp.
struct FusedBlockConstants {
  avx2::Rounding lo, hi;
  __m256i bias_lo, bias_hi;
  __m256i w01lo[3], w01hi[3], w2lo[3], w2hi[3];
};

// Channels {0-3, 8-11} (the low accumulator's) and {4-7, 12-15} of 16 values.
__attribute__((target("avx2"))) inline void SplitAsAccumulators(const int32_t* v, __m256i* lo,
                                                                __m256i* hi) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + 8));
  *lo = _mm256_permute2x128_si256(a, b, 0x20);
  *hi = _mm256_permute2x128_si256(a, b, 0x31);
}

// 16 int8 values at p as int16.
__attribute__((target("avx2"))) inline __m256i Widen16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Pair j of a row: (left, right) interleaved, channels {0-3, 8-11} then {4-7, 12-15}.
__attribute__((target("avx2"))) inline void StorePair(__m256i* row, size_t j, __m256i left,
                                                      __m256i right) {
  _mm256_storeu_si256(row + 2 * j, _mm256_unpacklo_epi16(left, right));
  _mm256_storeu_si256(row + 2 * j + 1, _mm256_unpackhi_epi16(left, right));
}

// Pixel ix of a row (its 16 channels at px + ix * pc) as int16, zp past either edge.
__attribute__((target("avx2"))) inline __m256i EdgePixel(const int8_t* px, ptrdiff_t ix, int iw,
                                                         ptrdiff_t pc, __m256i zp) {
  return ix >= 0 && ix < iw ? Widen16(px + ix * pc) : zp;
}

// Positions of a row whose pairs the outputs read: all at stride 1 (and 3 or more), the even
// ones at stride 2 (2 ox and 2 ox + 2). A row stores only those: pair j at slot j / PairStep.
size_t PairStep(const WindowGeometry& g) { return g.stride_w == 2 ? 2 : 1; }
// Pair positions [0, span) of a row that the outputs' windows cover, and the slots they take.
size_t PairSpan(const WindowGeometry& g) {
  return static_cast<size_t>(g.ow - 1) * static_cast<size_t>(g.stride_w) + 3;
}
size_t PairSlots(const WindowGeometry& g) { return (PairSpan(g) + PairStep(g) - 1) / PairStep(g); }

// Input row iy's pairs for every channel block: [block][slot][32 int16]. The values are the
// raw inputs, and the input zero point where a tap is padding: every output then sums nine taps
// of w * x, and the bias less in_zp times the nine weights' sum (FusedRows3x3I8Avx2) makes it
// the sum of w * (x - in_zp) over the taps inside the image, exactly.
__attribute__((target("avx2"))) void BuildPairsRow(const WindowGeometry& g, const int8_t* x,
                                                   size_t cn, int iy, __m256i zp, int16_t* out) {
  const size_t c = static_cast<size_t>(g.c);
  const size_t span = PairSpan(g), slots = PairSlots(g), step = PairStep(g);
  const int iw = g.iw, pad_w = g.pad_w;
  const ptrdiff_t pc = static_cast<ptrdiff_t>(c);
  // Positions j whose pixels (ix, ix + 1), ix = j - pad_w, both lie inside the row: [j_in,
  // j_end). Outside them a pixel past an edge reads as zp; inside, no checks (with a check and
  // an index product per pixel, this function was 31% of a stride-2 layer; 27% without).
  const ptrdiff_t j_in = std::max(0, pad_w), j_end = static_cast<ptrdiff_t>(iw) - 1 + pad_w;
  for (size_t ch = 0; ch < cn; ch += 16) {
    __m256i* row = reinterpret_cast<__m256i*>(out + ch / 16 * slots * 32);
    if (iy < 0 || iy >= g.ih) {
      const __m256i pad = _mm256_unpacklo_epi16(zp, zp);  // (zp, zp) pairs, either half
      for (size_t j = 0; j < 2 * slots; ++j) _mm256_storeu_si256(row + j, pad);
      continue;
    }
    const int8_t* px = x + static_cast<size_t>(iy) * static_cast<size_t>(iw) * c + ch;
    size_t j = 0;
    for (; j < span && static_cast<ptrdiff_t>(j) < j_in; j += step) {
      const ptrdiff_t ix = static_cast<ptrdiff_t>(j) - pad_w;
      StorePair(row, j / step, EdgePixel(px, ix, iw, pc, zp), EdgePixel(px, ix + 1, iw, pc, zp));
    }
    const int8_t* p = px + (static_cast<ptrdiff_t>(j) - pad_w) * pc;
    if (step == 2) {
      for (; j < span && static_cast<ptrdiff_t>(j) < j_end; j += 2, p += 2 * pc) {
        StorePair(row, j / 2, Widen16(p), Widen16(p + pc));
      }
    } else if (j < span && static_cast<ptrdiff_t>(j) < j_end) {
      __m256i left = Widen16(p);
      for (; j < span && static_cast<ptrdiff_t>(j) < j_end; ++j, p += pc) {
        const __m256i right = Widen16(p + pc);
        StorePair(row, j, left, right);
        left = right;
      }
    }
    for (; j < span; j += step) {
      const ptrdiff_t ix = static_cast<ptrdiff_t>(j) - pad_w;
      StorePair(row, j / step, EdgePixel(px, ix, iw, pc, zp), EdgePixel(px, ix + 1, iw, pc, zp));
    }
  }
}

// Sixteen requantized sums (channels {0-3, 8-11} in lo, {4-7, 12-15} in hi) plus the output
// zero point, clamped and narrowed to int8 in channel order. In range after the clamp, the packs
// only narrow. Per 128-bit half, (lo, hi) is channels 0-7, then 8-15; the second pack leaves
// each half's 8 bytes in its low quadword.
__attribute__((target("avx2"))) inline __m128i FusedNarrow(__m256i lo, __m256i hi, __m256i out_zp,
                                                           __m256i lo_clamp, __m256i hi_clamp) {
  lo = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(lo, out_zp), lo_clamp), hi_clamp);
  hi = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(hi, out_zp), lo_clamp), hi_clamp);
  const __m256i w16 = _mm256_packs_epi32(lo, hi);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packs_epi16(w16, w16), 0x08));
}

// The output zero point and the activation clamp, as FusedNarrow takes them.
struct FusedOutput {
  __m256i zp, lo, hi;
};

// N (1 or 2) outputs of one block of 16 channels: output n's pairs start at r[ky] + j0 + n *
// pair_stride, and its 16 int8 values go to y + n * c. Two outputs share each weight, loaded once
// and held in registers: one at a time, an output loaded its 12 weights beside its 12 inputs and
// 16 requantization constants, and the loads bound the loop (56x56x96 stride 1 175 -> 152 us,
// stride 2 51 -> 45 us). The requantization constants stay memory operands: held in registers
// for both outputs, no faster.
template <bool kGeneral, int N>
__attribute__((target("avx2"), always_inline)) inline void FusedOutputs(
    const FusedBlockConstants& k, const __m256i* const* r, size_t j0, size_t pair_stride,
    size_t third, const FusedOutput& out, int8_t* y, size_t c) {
  static_assert(N == 1 || N == 2, "one or two outputs a step");
  __m256i lo[N], hi[N];
  for (int n = 0; n < N; ++n) {
    lo[n] = k.bias_lo;
    hi[n] = k.bias_hi;
  }
  for (int ky = 0; ky < 3; ++ky) {
    __m256i wa = k.w01lo[ky], wb = k.w01hi[ky], wc = k.w2lo[ky], wd = k.w2hi[ky];
    // In registers: without this GCC folds each weight into both madds as a memory operand, and
    // sums the 24 products as a tree that spills to the stack.
    asm("" : "+x"(wa), "+x"(wb), "+x"(wc), "+x"(wd));
    const __m256i* p[N];
    for (int n = 0; n < N; ++n) p[n] = r[ky] + j0 + static_cast<size_t>(n) * pair_stride;
    // Each weight for every output in turn.
    for (int n = 0; n < N; ++n) {
      lo[n] = _mm256_add_epi32(lo[n], _mm256_madd_epi16(_mm256_loadu_si256(p[n]), wa));
    }
    for (int n = 0; n < N; ++n) {
      hi[n] = _mm256_add_epi32(hi[n], _mm256_madd_epi16(_mm256_loadu_si256(p[n] + 1), wb));
    }
    for (int n = 0; n < N; ++n) {
      lo[n] = _mm256_add_epi32(lo[n], _mm256_madd_epi16(_mm256_loadu_si256(p[n] + third), wc));
    }
    for (int n = 0; n < N; ++n) {
      hi[n] = _mm256_add_epi32(hi[n], _mm256_madd_epi16(_mm256_loadu_si256(p[n] + third + 1), wd));
    }
    if constexpr (N == 2) {
      asm("" : "+x"(lo[0]), "+x"(hi[0]), "+x"(lo[1]), "+x"(hi[1]));
    } else {
      asm("" : "+x"(lo[0]), "+x"(hi[0]));
    }
  }
  for (int n = 0; n < N; ++n) lo[n] = avx2::ApplyRounding<kGeneral, kGeneral>(k.lo, lo[n]);
  for (int n = 0; n < N; ++n) hi[n] = avx2::ApplyRounding<kGeneral, kGeneral>(k.hi, hi[n]);
  for (int n = 0; n < N; ++n) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + static_cast<size_t>(n) * c),
                     FusedNarrow(lo[n], hi[n], out.zp, out.lo, out.hi));
  }
}

// Not inlined: inlined into FusedRows3x3I8Avx2, GCC 12 spilled a sum to the stack inside the
// pixel loop (one store and reload per output; the 56x56x96 layers 3-8% slower), compiled alone
// it keeps the loop in registers.
template <bool kGeneral>
__attribute__((target("avx2"), noinline)) void FusedRows3x3I8(
    const WindowGeometry& g, const int8_t* x, int32_t in_zp, const DepthwiseRequant& q,
    const FusedBlockConstants* consts, size_t cn, int16_t* ring, int oy0, int oy1, int8_t* y) {
  const size_t c = static_cast<size_t>(g.c);
  const size_t blocks = cn / 16;
  const size_t slots = PairSlots(g), slot_size = blocks * slots * 32;
  // An output's pairs, in __m256i from the first of its row: the (ix0, ix0 + 1) pair at 2 ox sw
  // / PairStep, the (ix0 + 2, ix0 + 3) one a pair or two further.
  const size_t pair_stride = 2 * static_cast<size_t>(g.stride_w) / PairStep(g);
  const size_t third = 4 / PairStep(g);
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(in_zp));
  const FusedOutput out{_mm256_set1_epi32(q.out_zp), _mm256_set1_epi32(q.act_min),
                        _mm256_set1_epi32(q.act_max)};
  int tag[3] = {INT32_MIN, INT32_MIN, INT32_MIN};
  for (int oy = oy0; oy < oy1; ++oy) {
    const int iy0 = oy * g.stride_h - g.pad_h;
    const int16_t* rows[3];
    for (int ky = 0; ky < 3; ++ky) {
      const int iy = iy0 + ky;
      const int slot = ((iy % 3) + 3) % 3;
      int16_t* dst = ring + static_cast<size_t>(slot) * slot_size;
      if (tag[slot] != iy) {
        BuildPairsRow(g, x, cn, iy, zp, dst);
        tag[slot] = iy;
      }
      rows[ky] = dst;
    }
    int8_t* yr = y + static_cast<size_t>(oy - oy0) * static_cast<size_t>(g.ow) * c;
    for (size_t b = 0; b < blocks; ++b) {
      const FusedBlockConstants& k = consts[b];
      const __m256i* r[3] = {reinterpret_cast<const __m256i*>(rows[0] + b * slots * 32),
                             reinterpret_cast<const __m256i*>(rows[1] + b * slots * 32),
                             reinterpret_cast<const __m256i*>(rows[2] + b * slots * 32)};
      int8_t* yb = yr + b * 16;
      // Two outputs at a time, each weight loaded once for both (FusedOutputs).
      int ox = 0;
      for (; ox + 2 <= g.ow; ox += 2) {
        FusedOutputs<kGeneral, 2>(k, r, static_cast<size_t>(ox) * pair_stride, pair_stride, third,
                                  out, yb + static_cast<size_t>(ox) * c, c);
      }
      if (ox < g.ow) {
        FusedOutputs<kGeneral, 1>(k, r, static_cast<size_t>(ox) * pair_stride, pair_stride, third,
                                  out, yb + static_cast<size_t>(ox) * c, c);
      }
    }
  }
}

__attribute__((target("avx2"))) bool PackFused3x3I8Avx2(const WindowGeometry& g, const int8_t* w,
                                                        int32_t in_zp, const DepthwiseRequant& q,
                                                        DepthwiseFusedI8* out) {
  const size_t c = static_cast<size_t>(g.c);
  const size_t blocks = c / 16;
  out->blocks.assign(blocks * sizeof(FusedBlockConstants), 0);
  auto* consts = reinterpret_cast<FusedBlockConstants*>(out->blocks.data());
  bool general = false;
  for (size_t b = 0; b < blocks; ++b) {
    FusedBlockConstants& k = consts[b];
    const size_t ch = b * 16;
    __m256i m_lo, m_hi, s_lo, s_hi;
    SplitAsAccumulators(q.mult + ch, &m_lo, &m_hi);
    SplitAsAccumulators(q.shift + ch, &s_lo, &s_hi);
    // The bias less in_zp times each channel's nine weights (BuildPairsRow's raw inputs);
    // wrapping as the reference's int32 sums.
    alignas(32) int32_t folded[16];
    for (size_t i = 0; i < 16; ++i) {
      int32_t sum = 0;
      for (size_t t = 0; t < 9; ++t) sum += w[t * c + ch + i];
      folded[i] = static_cast<int32_t>(static_cast<uint32_t>(q.bias[ch + i]) -
                                       static_cast<uint32_t>(in_zp * sum));
    }
    SplitAsAccumulators(folded, &k.bias_lo, &k.bias_hi);
    if (!avx2::MakeRounding(m_lo, s_lo, &k.lo) || !avx2::MakeRounding(m_hi, s_hi, &k.hi)) {
      out->blocks.clear();
      return false;
    }
    general = general || k.lo.any_left || k.lo.any_double || k.hi.any_left || k.hi.any_double;
    for (int ky = 0; ky < 3; ++ky) {
      const __m256i a = WidenedWeights(w, 3 * ky, c, ch), bw = WidenedWeights(w, 3 * ky + 1, c, ch),
                    d = WidenedWeights(w, 3 * ky + 2, c, ch);
      k.w01lo[ky] = _mm256_unpacklo_epi16(a, bw);
      k.w01hi[ky] = _mm256_unpackhi_epi16(a, bw);
      k.w2lo[ky] = _mm256_unpacklo_epi16(d, _mm256_setzero_si256());
      k.w2hi[ky] = _mm256_unpackhi_epi16(d, _mm256_setzero_si256());
    }
  }
  out->general = general;
  out->in_zp = in_zp;
  return true;
}

// Rows [oy0, oy1) of the channels [c0, c0 + cn): x and y moved to c0, consts to its block.
__attribute__((target("avx2"))) void FusedRows3x3I8Avx2(const WindowGeometry& g, const int8_t* x,
                                                        const DepthwiseFusedI8& p,
                                                        const FusedBlockConstants* consts,
                                                        const DepthwiseRequant& q, int oy0, int oy1,
                                                        size_t cn, int8_t* y) {
  const size_t ring_size = 3 * (cn / 16) * PairSlots(g) * 32;
  thread_local std::vector<int16_t> ring;
  if (ring.size() < ring_size) ring.resize(ring_size);
  if (p.general) {
    FusedRows3x3I8<true>(g, x, p.in_zp, q, consts, cn, ring.data(), oy0, oy1, y);
  } else {
    FusedRows3x3I8<false>(g, x, p.in_zp, q, consts, cn, ring.data(), oy0, oy1, y);
  }
}

// 3x3 rows without dilation, channels a multiple of 8 (MobileNet's): for each block of 8
// channels the nine weights, the bias and the clamp stay in registers over the whole row, and
// each output is one accumulator, bias first and then the taps inside the image in (ky, kx)
// order, fused multiply-adds: the AVX-512 row's order and rounding (DepthwiseRowF32Avx512).
// The loop above reads and writes every output once per tap.
bool Row3x3F32Fits(const WindowGeometry& g) {
  return g.kh == 3 && g.kw == 3 && g.dil_h == 1 && g.dil_w == 1 && g.c % 8 == 0 && g.c > 0;
}

// Four interior outputs [ox, ox + 4) of a 3x3 row, channels [ch, ch + 8), stride SW: the four
// share each input column of a kernel row (3 + 3 SW columns, where the general loop below
// addresses twelve; GCC folds some back into the FMAs as memory operands), and each output's
// taps are summed in (ky, kx) order. 48x48x16 at stride 1: 25.8 -> 17.8 us, 48x48x48 at
// stride 2: 23.9 -> 18.0 us (min of 4 x 300 invokes). SW = 0: any stride, `sw` (3 or more,
// where outputs share no column): each output reads its own three columns of a kernel row.
template <int SW, int N = 4>
__attribute__((target("avx2,fma"))) inline void Quad3x3F32(const float* const* rows, const float* w,
                                                           size_t c, size_t ch, ptrdiff_t ix0,
                                                           __m256 b, __m256 vlo, __m256 vhi,
                                                           float* yo, int sw = SW) {
  __m256 a[N];
#pragma GCC unroll 4
  for (int i = 0; i < N; ++i) a[i] = b;
  for (int ky = 0; ky < 3; ++ky) {
    if (rows[ky] == nullptr) continue;
    const float* p = rows[ky] + ix0 * static_cast<ptrdiff_t>(c) + static_cast<ptrdiff_t>(ch);
    if constexpr (SW == 0) {
      const size_t step = static_cast<size_t>(sw) * c;
#pragma GCC unroll 4
      for (int kx = 0; kx < 3; ++kx) {
        const __m256 wt = _mm256_loadu_ps(w + static_cast<size_t>(3 * ky + kx) * c + ch);
        const float* q = p + static_cast<size_t>(kx) * c;
#pragma GCC unroll 4
        for (int i = 0; i < N; ++i) {
          a[i] = _mm256_fmadd_ps(_mm256_loadu_ps(q + static_cast<size_t>(i) * step), wt, a[i]);
        }
      }
    } else {
      constexpr int kCols = 3 + (N - 1) * SW;
      __m256 col[kCols];
#pragma GCC unroll 16
      for (int i = 0; i < kCols; ++i) col[i] = _mm256_loadu_ps(p + static_cast<size_t>(i) * c);
#pragma GCC unroll 4
      for (int kx = 0; kx < 3; ++kx) {
        const __m256 wt = _mm256_loadu_ps(w + static_cast<size_t>(3 * ky + kx) * c + ch);
#pragma GCC unroll 4
        for (int i = 0; i < N; ++i) a[i] = _mm256_fmadd_ps(col[kx + i * SW], wt, a[i]);
      }
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < N; ++i) {
    _mm256_storeu_ps(yo + static_cast<size_t>(i) * c, _mm256_min_ps(vhi, _mm256_max_ps(vlo, a[i])));
  }
}

// N interior outputs from ix0 on, all channels of them before the next ones.
template <int SW, int N>
__attribute__((target("avx2,fma"), always_inline)) inline void Outputs3x3F32(
    const float* const* rows, const float* w, const float* bias, size_t c, ptrdiff_t ix0, int sw,
    __m256 vlo, __m256 vhi, float* yo) {
  for (size_t ch = 0; ch < c; ch += 8) {
    const __m256 b = bias != nullptr ? _mm256_loadu_ps(bias + ch) : _mm256_setzero_ps();
    Quad3x3F32<SW, N>(rows, w, c, ch, ix0, b, vlo, vhi, yo + ch, sw);
  }
}

// Outputs3x3F32 at the row's stride: input columns shared at strides 1 and 2.
template <int N>
__attribute__((target("avx2,fma"), always_inline)) inline void Strided3x3F32(
    const float* const* rows, const float* w, const float* bias, size_t c, ptrdiff_t ix0, int sw,
    __m256 vlo, __m256 vhi, float* yo) {
  if (sw == 1) {
    Outputs3x3F32<1, N>(rows, w, bias, c, ix0, sw, vlo, vhi, yo);
  } else if (sw == 2) {
    Outputs3x3F32<2, N>(rows, w, bias, c, ix0, sw, vlo, vhi, yo);
  } else {
    Outputs3x3F32<0, N>(rows, w, bias, c, ix0, sw, vlo, vhi, yo);
  }
}

// The 1-3 interior outputs after the quads: the quads' loop with fewer outputs.
__attribute__((target("avx2,fma"))) void Tail3x3F32(const float* const* rows, const float* w,
                                                    const float* bias, size_t c, ptrdiff_t ix0,
                                                    int n, int sw, __m256 vlo, __m256 vhi,
                                                    float* yo) {
  if (n == 1) {
    Strided3x3F32<1>(rows, w, bias, c, ix0, sw, vlo, vhi, yo);
  } else if (n == 2) {
    Strided3x3F32<2>(rows, w, bias, c, ix0, sw, vlo, vhi, yo);
  } else {
    Strided3x3F32<3>(rows, w, bias, c, ix0, sw, vlo, vhi, yo);
  }
}

__attribute__((target("avx2,fma"))) void Row3x3F32Avx2(const WindowGeometry& g, const float* x,
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
  // Interior outputs four at a time, all channels of the four before the next ones (whole
  // output pixels written in turn): four independent chains of fused multiply-adds (one
  // output's nine in a row left the FMA latency the limit), each in the same order as alone.
  const int sw = g.stride_w;
  const int ox_in = (g.pad_w + sw - 1) / sw;
  const int ox_end = g.iw - 3 + g.pad_w >= 0 ? (g.iw - 3 + g.pad_w) / sw + 1 : 0;
  const int interior_end = std::min(ox_end, g.ow);
  int ox = ox_in;
  for (; ox + 4 <= interior_end; ox += 4) {
    Strided3x3F32<4>(rows, w, bias, c, static_cast<ptrdiff_t>(ox) * sw - g.pad_w, sw, vlo, vhi,
                     y + static_cast<size_t>(ox) * c);
  }
  // The 1-3 interior outputs after the quads (all of them where there are fewer than four) the
  // same way: three chains of FMAs at most, where the loop below runs one output's per channel
  // block. 32x32x192 and 48x48x48 at stride 2: 5-6% faster.
  if (ox < interior_end) {
    Tail3x3F32(rows, w, bias, c, static_cast<ptrdiff_t>(ox) * sw - g.pad_w, interior_end - ox, sw,
               vlo, vhi, y + static_cast<size_t>(ox) * c);
  }
  // The edge outputs, one at a time per channel block.
  const int singles_from = std::max(ox_in, interior_end);  // [ox_in, singles_from) done above
  for (size_t ch = 0; ch < c; ch += 8) {
    __m256 wv[9];
    for (int t = 0; t < 9; ++t) wv[t] = _mm256_loadu_ps(w + static_cast<size_t>(t) * c + ch);
    const __m256 b = bias != nullptr ? _mm256_loadu_ps(bias + ch) : _mm256_setzero_ps();
    for (int ox = 0; ox < g.ow; ++ox) {
      if (ox == ox_in && singles_from > ox_in) ox = singles_from;  // done above
      if (ox >= g.ow) break;
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

#ifdef EMBER_LOOP_X86
// The geometry and CPU DepthwiseRowsI8Fused runs on.
bool FusedFits(const WindowGeometry& g) {
  return ActiveLoopIsa() != LoopIsa::kGeneric && Row3x3I8Fits(g) && g.ow > 0;
}
#endif

}  // namespace

void DepthwiseRowI8(const WindowGeometry& g, const int8_t* x, const int8_t* w, int32_t in_zp,
                    int oy, int32_t* acc) {
  switch (ActiveLoopIsa()) {
#ifdef EMBER_LOOP_X86
    // The AVX-512 build of this row measured 5% slower than the AVX2 one on the AMD EPYC build
    // machine (AVX-512 VNNI CPUs run DepthwiseRowI8Avx512 where it applies; 3x3 filters over
    // channels a multiple of 16 run DepthwiseRowsI8Fused, this row only where that refuses).
    case LoopIsa::kAvx512:
    case LoopIsa::kAvx2:
      return RowI8Avx2(g, x, w, in_zp, oy, acc);
#endif
    default:
      return RowI8Generic(g, x, w, in_zp, oy, acc);
  }
}

bool PackDepthwiseRowsI8Fused(const WindowGeometry& g, const int8_t* w, int32_t in_zp,
                              const DepthwiseRequant& q, DepthwiseFusedI8* out) {
  out->blocks.clear();
#ifdef EMBER_LOOP_X86
  // An INT32_MIN multiplier: avx2::MakeRounding refuses its block, the pack returns false.
  return FusedFits(g) && PackFused3x3I8Avx2(g, w, in_zp, q, out);
#else
  (void)g;
  (void)w;
  (void)in_zp;
  (void)q;
  return false;
#endif
}

bool DepthwiseRowsI8Fused(const WindowGeometry& g, const int8_t* x, const DepthwiseFusedI8& p,
                          const DepthwiseRequant& q, int oy0, int oy1, int c0, int c1, int8_t* y) {
#ifdef EMBER_LOOP_X86
  if (FusedFits(g) &&
      p.blocks.size() == static_cast<size_t>(g.c / 16) * sizeof(FusedBlockConstants) && oy0 < oy1 &&
      c0 >= 0 && c0 < c1 && c1 <= g.c && c0 % 16 == 0 && c1 % 16 == 0) {
    // The channels [c0, c1): x and y moved to c0 (the pixel stride still g.c), the constants to
    // its block.
    const auto* consts = reinterpret_cast<const FusedBlockConstants*>(p.blocks.data()) + c0 / 16;
    FusedRows3x3I8Avx2(g, x + c0, p, consts, q, oy0, oy1, static_cast<size_t>(c1 - c0), y + c0);
    return true;
  }
  return false;
#else
  (void)g;
  (void)x;
  (void)p;
  (void)q;
  (void)oy0;
  (void)oy1;
  (void)c0;
  (void)c1;
  (void)y;
  return false;
#endif
}

void DepthwiseRowF32(const WindowGeometry& g, const float* x, const float* w, const float* bias,
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
