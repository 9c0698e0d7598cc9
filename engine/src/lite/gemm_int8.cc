// int8 GEMM for FULLY_CONNECTED and CONV_2D on x86-64 CPUs with AVX-512 VNNI (selected at run
// time). VPDPBUSD multiplies unsigned by signed bytes, so activations are offset by 128
// (x ^ 0x80) and the caller folds -128 * sum(w) into the bias: the integer result is the
// same as the reference kernel's.
#include "lite/gemm_int8.h"

#include <algorithm>
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
#include "lite/requant_avx2.h"
#include "lite/requant_avx512.h"
#define EMBER_LITE_X86 1
// AMX tiles through inline assembly (the assembler must know the instructions: binutils 2.36,
// which comes with GCC 11 in the distributions forge builds on, and clang 12's own).
#if defined(__linux__) && \
    ((defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && __GNUC__ >= 11))
#include <sys/syscall.h>
#include <unistd.h>
#define EMBER_LITE_AMX 1
#endif
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

bool HasAmxInt8() {
#ifdef EMBER_LITE_AMX
  // Linux hands out the 8 KiB tile state only to a process that asked for it (once, for all
  // its threads): ARCH_REQ_XCOMP_PERM (0x1023) for XFEATURE_XTILEDATA (18).
  static const bool has = cpu::HasAmxInt8() && syscall(SYS_arch_prctl, 0x1023, 18) == 0;
  return has;
#else
  return false;
#endif
}

int AmxChunkBytes(int run_bytes) {
  for (int c = 64; c >= 32; c -= 4) {
    if (run_bytes % c == 0) return c;
  }
  return 0;
}

bool ConvGemmUsesAmx(int m, int run_k4) {
  return HasAmxInt8() && m >= 16 && AmxChunkBytes(4 * run_k4) > 0;
}

int GroupBlocks(int n, bool matrix_vector) {
  const int blocks = (n + 15) / 16;
  if (matrix_vector) return blocks > 4 ? 8 : blocks;
  if (blocks <= 4) return blocks;
  return (blocks + 2) / 3 * 3 < (blocks + 3) / 4 * 4 ? 3 : 4;
}

void PackWeightsVnni(const int8_t* w, int n, int k, int nr, PackedWeights* out) {
  out->n = n;
  out->k = k;
  out->k4 = (k + 3) / 4;
  out->nr = nr;
  out->padded_h = out->padded_w = out->padded_c = 0;
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

namespace {
// Vectors of a block's constants in PackedWeights::rq (int32 lanes; "64" ones hold 8 int64).
enum RequantVec {
  kRqBias = 0,   // folded bias: the accumulators start from it
  kRqMult,       // multipliers (the even lanes' in the low halves of the 64-bit lanes)
  kRqMultOdd,    // 64: the odd lanes' multipliers
  kRqLeft,       // left shift of x
  kRqAddEven,    // 64: 2^30 + 2^(30+e) [e >= 1] (+ out_zp * 2^(31+e) when folded)
  kRqAddOdd,     // 64
  kRqTotalEven,  // 64: 31 + e
  kRqTotalOdd,   // 64
  kRqNegEven,    // 64: -2^30 where e >= 1 (p below it takes the -2^31 step), else INT64_MIN
  kRqNegOdd,     // 64
};
}  // namespace

void PrepareFusedRequant(const int32_t* bias, const int32_t* mult, const int* shift, int32_t out_zp,
                         int32_t act_min, int32_t act_max, PackedWeights* p) {
  p->rq.assign(static_cast<size_t>(p->nb) * kRequantWords, 0);
  p->out_zp = out_zp;
  p->act_min = act_min;
  p->act_max = act_max;
  p->rq_clamp = act_min != -128 || act_max != 127;
  bool plain = true, fold = true, high = true;
  for (int c = 0; c < p->n; ++c) {
    plain = plain && shift[c] <= 0 && mult[c] != INT32_MIN;
    const int e = std::min(std::max(-shift[c], 0), 31);
    high = high && e >= 1;
    // out_zp * 2^(31+e) must stay far from int64 overflow next to the product and rounding.
    fold = fold && 31 + e <= 54;
  }
  p->rq_plain = plain;
  p->rq_zp_folded = fold;
  // Padding lanes (c >= n) have e = 0; their results are never stored.
  p->rq_high = plain && high;
  for (int c = 0; c < p->nb * 16; ++c) {
    int32_t* blk = p->rq.data() + static_cast<size_t>(c / 16) * kRequantWords;
    const int lane = c % 16, half = lane / 2;
    const bool odd = lane % 2 == 1;
    const bool real = c < p->n;
    const int s = real ? shift[c] : 0;
    const int e = std::min(std::max(-s, 0), 31);
    blk[kRqBias * 16 + lane] = real ? bias[c] : 0;
    blk[kRqMult * 16 + lane] = real ? mult[c] : 0;
    blk[kRqLeft * 16 + lane] = std::max(s, 0);
    int64_t add = (int64_t{1} << 30) + (e >= 1 ? int64_t{1} << (30 + e) : 0);
    if (fold) add += static_cast<int64_t>(out_zp) * (int64_t{1} << (31 + e));
    const int64_t neg = e >= 1 ? -(int64_t{1} << 30) : INT64_MIN;
    auto put64 = [&](int vec, int64_t v) { std::memcpy(blk + vec * 16 + 2 * half, &v, sizeof(v)); };
    if (odd) {
      int64_t m = real ? mult[c] : 0;
      put64(kRqMultOdd, m);
    }
    put64(odd ? kRqAddOdd : kRqAddEven, add);
    put64(odd ? kRqTotalOdd : kRqTotalEven, 31 + e - (odd && p->rq_high ? 32 : 0));
    put64(odd ? kRqNegOdd : kRqNegEven, neg);
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
      case 3:
        Micro<MR, 3>(x, x_stride, p, g, acc, acc_stride);
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

EMBER_VNNI_TARGET void OffsetPixels3To4(const int8_t* x, size_t pixels, uint8_t* out) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  // 16 pixels (48 bytes) a step: dwords 3 L .. 3 L + 2 into 128-bit lane L, then each lane's
  // 12 bytes spread to four 4-byte pixels.
  const __m512i lanes = _mm512_set_epi32(0, 11, 10, 9, 0, 8, 7, 6, 0, 5, 4, 3, 0, 2, 1, 0);
  const __m512i spread =
      _mm512_broadcast_i32x4(_mm_set_epi8(-1, 11, 10, 9, -1, 8, 7, 6, -1, 5, 4, 3, -1, 2, 1, 0));
  constexpr __mmask64 k48 = (__mmask64{1} << 48) - 1;
  size_t i = 0;
  for (; i + 16 <= pixels; i += 16) {
    __m512i v = _mm512_maskz_loadu_epi8(k48, x + 3 * i);
    v = _mm512_shuffle_epi8(_mm512_permutexvar_epi32(lanes, v), spread);
    _mm512_storeu_si512(out + 4 * i, _mm512_xor_si512(v, flip));
  }
  for (; i < pixels; ++i) {
    for (int c = 0; c < 3; ++c) out[4 * i + c] = static_cast<uint8_t>(x[3 * i + c]) ^ 0x80u;
  }
}

EMBER_VNNI_TARGET void OffsetPixels(const int8_t* x, size_t pixels, int c, int pc, uint8_t* out) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (size_t i = 0; i < pixels; ++i) {
    const int8_t* s = x + i * static_cast<size_t>(c);
    uint8_t* d = out + i * static_cast<size_t>(pc);
    for (int j = 0; j < c; j += 64) {
      const int n = std::min(64, c - j);
      const __mmask64 m = n == 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1u;
      _mm512_mask_storeu_epi8(d + j, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, s + j), flip));
    }
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

namespace {

EMBER_VNNI_TARGET inline __m512i RqVec(const int32_t* rq, int i) {
  return _mm512_loadu_si512(rq + i * 16);
}

using avx512::ApplyFusedBlock;
using avx512::FusedBlock;

// One 16-channel block's requantization constants (PackedWeights::rq), loaded once for the
// rows that share them.
template <bool kPlain>
EMBER_VNNI_TARGET inline __attribute__((always_inline)) FusedBlock LoadFusedBlock(
    const int32_t* rq) {
  FusedBlock k;
  k.left = kPlain ? _mm512_setzero_si512() : RqVec(rq, kRqLeft);
  k.mult = RqVec(rq, kRqMult);
  k.mult_odd = RqVec(rq, kRqMultOdd);
  k.add_even = RqVec(rq, kRqAddEven);
  k.add_odd = RqVec(rq, kRqAddOdd);
  k.total_even = RqVec(rq, kRqTotalEven);
  k.total_odd = RqVec(rq, kRqTotalOdd);
  k.neg_even = RqVec(rq, kRqNegEven);
  k.neg_odd = RqVec(rq, kRqNegOdd);
  return k;
}

// ApplyFusedBlock for one vector of block `rq`, out_zp included.
template <bool kPlain, bool kHigh>
EMBER_VNNI_TARGET inline __attribute__((always_inline)) __m512i FusedDwords(const PackedWeights& p,
                                                                            const int32_t* rq,
                                                                            __m512i a) {
  const __m512i r = ApplyFusedBlock<kPlain, kHigh>(LoadFusedBlock<kPlain>(rq), a);
  return p.rq_zp_folded ? r : _mm512_add_epi32(r, _mm512_set1_epi32(p.out_zp));
}

// The int8 bytes of FusedDwords.
template <bool kPlain, bool kHigh>
EMBER_VNNI_TARGET inline __m128i FusedBytes(const PackedWeights& p, const int32_t* rq, __m512i a) {
  __m512i r = FusedDwords<kPlain, kHigh>(p, rq, a);
  if (!p.rq_clamp) return _mm512_cvtsepi32_epi8(r);
  r = _mm512_min_epi32(_mm512_max_epi32(r, _mm512_set1_epi32(p.act_min)),
                       _mm512_set1_epi32(p.act_max));
  return _mm512_cvtepi32_epi8(r);
}

// MR rows x the NR blocks of group g, requantized into y.
// Where a GEMM row's k values lie: `n` runs of 4 * k4 bytes at x + off[s] (row r of x at
// x + r * x_stride), in the order of the packed weights' k.
struct Segments {
  const ptrdiff_t* off;
  int n, k4;
};

template <int MR, int NR, bool kPlain, bool kHigh, bool kSeg>
EMBER_VNNI_TARGET inline void FusedTile(const uint8_t* x, int x_stride, const Segments& sg,
                                        const PackedWeights& p, int g, int8_t* y, int y_stride) {
  const int b0 = g * NR;
  __m512i c[MR][NR];
#pragma GCC unroll 8
  for (int j = 0; j < NR; ++j) {
    const __m512i bias = _mm512_loadu_si512(p.rq.data() + (b0 + j) * kRequantWords);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) c[i][j] = bias;
  }
  const int8_t* wp = p.data.data() + static_cast<size_t>(g) * p.k4 * NR * 64;
  // !kSeg: one run of p.k4 groups (the loops over runs fold away).
  const int nseg = kSeg ? sg.n : 1, seg_k4 = kSeg ? sg.k4 : p.k4;
  for (int sgi = 0; sgi < nseg; ++sgi) {
    const uint8_t* xr[MR];
    const uint8_t* xs = kSeg ? x + sg.off[sgi] : x;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) xr[i] = xs + static_cast<ptrdiff_t>(i) * x_stride;
    for (int k4 = 0; k4 < seg_k4; ++k4, wp += NR * 64) {
      __m512i w[NR];
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) w[j] = _mm512_loadu_si512(wp + j * 64);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        int32_t xv;
        std::memcpy(&xv, xr[i] + 4 * k4, 4);
        const __m512i xb = _mm512_set1_epi32(xv);
#pragma GCC unroll 8
        for (int j = 0; j < NR; ++j) c[i][j] = _mm512_dpbusd_epi32(c[i][j], xb, w[j]);
      }
    }
  }
  if (NR >= 2 && NR <= 4) {
    // Up to 64 channels per row narrowed together, block by block: one block's constants
    // in registers for all MR rows, and the layer's flags read once (p is not re-read after
    // the int8 stores, which may alias anything). Blocks past n are not requantized (their
    // bytes, never stored, repeat block 0's).
    const int valid = std::min(p.n - b0 * 16, NR * 16);
    const int32_t* rq = p.rq.data() + b0 * kRequantWords;
    const bool add_zp = !p.rq_zp_folded, clamp = p.rq_clamp;
    const __m512i zp = _mm512_set1_epi32(p.out_zp);
    const __m512i lo = _mm512_set1_epi8(static_cast<char>(p.act_min));
    const __m512i hi = _mm512_set1_epi8(static_cast<char>(p.act_max));
    // Each pair of blocks is narrowed to int16 as soon as both are requantized (NarrowedBytes64's
    // first step): for a 4x4 tile, 4 registers fewer while blocks 2 and 3 are requantized.
    __m512i r[MR][2], half[MR][2];
    const avx512::FusedConstants fc = avx512::FusedConstants::Opaque<kPlain>();
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) {
      if (j > 0 && 16 * j >= valid) {
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) r[i][j % 2] = r[i][0];
      } else {
        const FusedBlock k = LoadFusedBlock<kPlain>(rq + j * kRequantWords);
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) {
          r[i][j % 2] = ApplyFusedBlock<kPlain, kHigh>(k, c[i][j], fc);
          if (add_zp) r[i][j % 2] = _mm512_add_epi32(r[i][j % 2], zp);
        }
      }
      if (j % 2 == 1 || j == NR - 1) {
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) {
          half[i][j / 2] = _mm512_packs_epi32(r[i][0], r[i][j % 2]);
        }
      }
    }
    const __mmask64 keep = valid >= 64 ? ~__mmask64{0} : (__mmask64{1} << valid) - 1;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512i bytes =
          avx512::NarrowedBytes64(clamp, lo, hi, half[i][0], half[i][NR > 2 ? 1 : 0]);
      int8_t* yo = y + static_cast<size_t>(i) * y_stride + b0 * 16;
      if (valid == NR * 16 && NR != 3) {
        if (NR == 4) {
          _mm512_storeu_si512(yo, bytes);
        } else {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(yo), _mm512_castsi512_si256(bytes));
        }
      } else {
        _mm512_mask_storeu_epi8(yo, keep, bytes);
      }
    }
    return;
  }
  const bool add_zp = !p.rq_zp_folded, clamp = p.rq_clamp;
  const __m512i zp = _mm512_set1_epi32(p.out_zp);
  const __m128i lo = _mm_set1_epi8(static_cast<char>(p.act_min));
  const __m128i hi = _mm_set1_epi8(static_cast<char>(p.act_max));
  const int n = p.n;
  const int32_t* rq0 = p.rq.data();
  const avx512::FusedConstants fc = avx512::FusedConstants::Opaque<kPlain>();
#pragma GCC unroll 8
  for (int j = 0; j < NR; ++j) {
    const int c0 = (b0 + j) * 16;
    if (c0 >= n) break;
    const FusedBlock k = LoadFusedBlock<kPlain>(rq0 + (b0 + j) * kRequantWords);
    const __mmask16 m = c0 + 16 <= n ? static_cast<__mmask16>(0xFFFF)
                                     : static_cast<__mmask16>((1u << (n - c0)) - 1u);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      __m512i v = ApplyFusedBlock<kPlain, kHigh>(k, c[i][j], fc);
      if (add_zp) v = _mm512_add_epi32(v, zp);
      __m128i bytes = _mm512_cvtsepi32_epi8(v);
      if (clamp) bytes = _mm_min_epi8(_mm_max_epi8(bytes, lo), hi);
      _mm_mask_storeu_epi8(y + static_cast<size_t>(i) * y_stride + c0, m, bytes);
    }
  }
}

// Groups [g0, g1) of NR blocks each.
template <int NR, bool kPlain, bool kHigh, bool kSeg>
EMBER_VNNI_TARGET void FusedRows(const uint8_t* x, int m, int x_stride, const Segments& sg,
                                 const PackedWeights& p, int g0, int g1, int8_t* y, int y_stride) {
  // Each tile requantizes its own sums. (Requantizing one tile during the next tile's k loop,
  // the sums waiting in memory, gained 3.5% on a 28x28x64->128 1x1 conv where it was written,
  // and cost 30% on a Zen 5: 27.9-29.8 against 21.2-21.5 us.) Narrow groups take taller tiles,
  // as many sums as registers allow: each weight vector and each block's requantization
  // constants then serve 8 or 6 rows, not 4 (on a Zen 5, one thread: 96x96x3->16 s2 conv 11.35
  // -> 8.93 us; 1x1 24x24x8->48 3.48 -> 3.01 us, 48x48x8->48 14.0 -> 11.8 us).
  int r = 0;
  constexpr int kMR = NR == 1 ? 8 : 6;
  if (NR <= 3) {
    for (; r + kMR <= m; r += kMR) {
      for (int g = g0; g < g1; ++g) {
        FusedTile<kMR, NR, kPlain, kHigh, kSeg>(x + static_cast<size_t>(r) * x_stride, x_stride, sg,
                                                p, g, y + static_cast<size_t>(r) * y_stride,
                                                y_stride);
      }
    }
  }
  for (; r + 4 <= m; r += 4) {
    for (int g = g0; g < g1; ++g) {
      FusedTile<4, NR, kPlain, kHigh, kSeg>(x + static_cast<size_t>(r) * x_stride, x_stride, sg, p,
                                            g, y + static_cast<size_t>(r) * y_stride, y_stride);
    }
  }
  // The last 1-3 rows in one tile: each tile streams all of the groups' weights (a 3x3 image,
  // 9 rows, reads them twice, not three or four times).
  const size_t xo = static_cast<size_t>(r) * x_stride, yo = static_cast<size_t>(r) * y_stride;
  for (int g = g0; g < g1 && r < m; ++g) {
    if (m - r == 3) {
      FusedTile<3, NR, kPlain, kHigh, kSeg>(x + xo, x_stride, sg, p, g, y + yo, y_stride);
    } else if (m - r == 2) {
      FusedTile<2, NR, kPlain, kHigh, kSeg>(x + xo, x_stride, sg, p, g, y + yo, y_stride);
    } else {
      FusedTile<1, NR, kPlain, kHigh, kSeg>(x + xo, x_stride, sg, p, g, y + yo, y_stride);
    }
  }
}

// Convolutions with at most 8 output channels (one block, nr 1): two rows per vector, lanes
// 0-7 row r's channels and lanes 8-15 row r + 1's (weights and constants of lanes 0-7 repeated in
// 8-15), so each multiply-add and each requantization serves 16 outputs, not 8 and 8 padding
// lanes. Every output is the same sum and the same rounding as FusedTile's: the same bytes.
EMBER_VNNI_TARGET inline __m512i LowHalfTwice(__m512i v) {
  return _mm512_shuffle_i64x2(v, v, 0x44);
}

template <int MP, bool kPlain, bool kHigh, bool kSeg>
EMBER_VNNI_TARGET inline void PairTile(const uint8_t* x, int x_stride, int rows, const Segments& sg,
                                       const PackedWeights& p, const FusedBlock& k, __m512i bias,
                                       int8_t* y, int y_stride) {
  // Rows 2i and 2i + 1 of the tile in pair i; a missing last row repeats the one before it.
  __m512i acc[MP];
#pragma GCC unroll 4
  for (int i = 0; i < MP; ++i) acc[i] = bias;
  const int8_t* wp = p.data.data();
  const int nseg = kSeg ? sg.n : 1, seg_k4 = kSeg ? sg.k4 : p.k4;
  for (int sgi = 0; sgi < nseg; ++sgi) {
    const uint8_t* xs = kSeg ? x + sg.off[sgi] : x;
    const uint8_t* xr[2 * MP];
#pragma GCC unroll 8
    for (int i = 0; i < 2 * MP; ++i) {
      xr[i] = xs + static_cast<ptrdiff_t>(i < rows ? i : rows - 1) * x_stride;
    }
    for (int k4 = 0; k4 < seg_k4; ++k4, wp += 64) {
      const __m512i w = LowHalfTwice(_mm512_loadu_si512(wp));
#pragma GCC unroll 4
      for (int i = 0; i < MP; ++i) {
        int32_t v0, v1;
        std::memcpy(&v0, xr[2 * i] + 4 * k4, 4);
        std::memcpy(&v1, xr[2 * i + 1] + 4 * k4, 4);
        const __m512i xb = _mm512_mask_set1_epi32(_mm512_set1_epi32(v0), 0xFF00, v1);
        acc[i] = _mm512_dpbusd_epi32(acc[i], xb, w);
      }
    }
  }
  const bool add_zp = !p.rq_zp_folded, clamp = p.rq_clamp;
  const __m512i zp = _mm512_set1_epi32(p.out_zp);
  const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
  const __mmask16 row_mask = static_cast<__mmask16>((1u << p.n) - 1u);
#pragma GCC unroll 4
  for (int i = 0; i < MP; ++i) {
    if (2 * i >= rows) break;
    __m512i v = ApplyFusedBlock<kPlain, kHigh>(k, acc[i]);
    if (add_zp) v = _mm512_add_epi32(v, zp);
    const __m128i bytes = clamp
                              ? _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi))
                              : _mm512_cvtsepi32_epi8(v);
    int8_t* y0 = y + static_cast<ptrdiff_t>(2 * i) * y_stride;
    _mm_mask_storeu_epi8(y0, row_mask, bytes);
    // Row 2i + 1's bytes are 8-15 of the vector.
    if (2 * i + 1 < rows) _mm_mask_storeu_epi8(y0 + y_stride, row_mask, _mm_bsrli_si128(bytes, 8));
  }
}

template <bool kPlain, bool kHigh, bool kSeg>
EMBER_VNNI_TARGET void PairedRows(const uint8_t* x, int m, int x_stride, const Segments& sg,
                                  const PackedWeights& p, int8_t* y, int y_stride) {
  FusedBlock k = LoadFusedBlock<kPlain>(p.rq.data());
  k.left = LowHalfTwice(k.left);
  k.mult = LowHalfTwice(k.mult);
  k.mult_odd = LowHalfTwice(k.mult_odd);
  k.add_even = LowHalfTwice(k.add_even);
  k.add_odd = LowHalfTwice(k.add_odd);
  k.total_even = LowHalfTwice(k.total_even);
  k.total_odd = LowHalfTwice(k.total_odd);
  k.neg_even = LowHalfTwice(k.neg_even);
  k.neg_odd = LowHalfTwice(k.neg_odd);
  const __m512i bias = LowHalfTwice(RqVec(p.rq.data(), kRqBias));
  int r = 0;
  for (; r + 8 <= m; r += 8) {
    PairTile<4, kPlain, kHigh, kSeg>(x + static_cast<size_t>(r) * x_stride, x_stride, 8, sg, p, k,
                                     bias, y + static_cast<size_t>(r) * y_stride, y_stride);
  }
  for (; r < m; r += 2) {
    PairTile<1, kPlain, kHigh, kSeg>(x + static_cast<size_t>(r) * x_stride, x_stride,
                                     std::min(2, m - r), sg, p, k, bias,
                                     y + static_cast<size_t>(r) * y_stride, y_stride);
  }
}

template <bool kPlain, bool kHigh, bool kSeg>
EMBER_VNNI_TARGET void FusedRowsAnyNr(const uint8_t* x, int m, int x_stride, const Segments& sg,
                                      const PackedWeights& p, int g0, int g1, int8_t* y,
                                      int y_stride) {
  if (p.nr == 1 && p.nb == 1 && p.n <= 8 && g0 == 0 && g1 == 1) {
    return PairedRows<kPlain, kHigh, kSeg>(x, m, x_stride, sg, p, y, y_stride);
  }
  switch (p.nr) {
    case 8:
      return FusedRows<8, kPlain, kHigh, kSeg>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    case 4:
      return FusedRows<4, kPlain, kHigh, kSeg>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    case 3:
      return FusedRows<3, kPlain, kHigh, kSeg>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    case 2:
      return FusedRows<2, kPlain, kHigh, kSeg>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    default:
      return FusedRows<1, kPlain, kHigh, kSeg>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
  }
}

#ifdef EMBER_LITE_AMX

// ldtilecfg's 64-byte operand (palette 1): bytes per row and rows of each tile register.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// The tile instructions, with "memory" clobbers: GCC's own macros name none, so the compiler
// could move plain loads and stores of the same buffers across them.
#define EMBER_TILE_LOAD(t, base, stride)                                                  \
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #t ::"r"(static_cast<const void*>(base)), \
                   "r"(static_cast<long>(stride))                                         \
                   : "memory")
#define EMBER_TILE_STORE(t, base, stride)                                               \
  __asm__ volatile("tilestored %%tmm" #t ", (%0,%1,1)" ::"r"(static_cast<void*>(base)), \
                   "r"(static_cast<long>(stride))                                       \
                   : "memory")
// C (tile c) += A (tile a, unsigned bytes) . B (tile b, signed bytes, 4 per int32 lane)
#define EMBER_TILE_DPBUSD(c, a, b) __asm__ volatile("tdpbusd %%tmm" #b ", %%tmm" #a ", %%tmm" #c ::)
#define EMBER_TILE_ZERO(t) __asm__ volatile("tilezero %%tmm" #t ::)

// Requantizes one 16 x 16 tile of sums (rows at `sums`, 16 int32 each) into y's rows [r0, r0 +
// 16), channels of block b.
template <bool kPlain, bool kHigh>
EMBER_VNNI_TARGET inline void AmxStoreTile(const PackedWeights& p, const int32_t* sums, int r0,
                                           int b, int8_t* y, int y_stride) {
  const int c0 = b * 16;
  const int32_t* rq = p.rq.data() + static_cast<size_t>(b) * kRequantWords;
  const __m512i bias = RqVec(rq, kRqBias);
  int8_t* yo = y + static_cast<size_t>(r0) * y_stride + c0;
  if (c0 + 16 <= p.n) {
    for (int i = 0; i < 16; ++i, yo += y_stride) {
      const __m512i a = _mm512_add_epi32(_mm512_load_si512(sums + 16 * i), bias);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(yo), FusedBytes<kPlain, kHigh>(p, rq, a));
    }
  } else {
    const __mmask16 keep = static_cast<__mmask16>((1u << (p.n - c0)) - 1u);
    for (int i = 0; i < 16; ++i, yo += y_stride) {
      const __m512i a = _mm512_add_epi32(_mm512_load_si512(sums + 16 * i), bias);
      _mm_mask_storeu_epi8(yo, keep, FusedBytes<kPlain, kHigh>(p, rq, a));
    }
  }
}

// MT (1 or 2) 16-row tiles of x, at rows r[0] (and r[1]), against NT (1 or 2) 16-channel blocks
// b[0] (and b[1]): C tiles 0-3 (row tile i, block j in tile 2 i + j), A tiles 4-5, B tiles 6-7.
// Each K step is one `chunk` of a run: A reads chunk bytes of 16 rows (stride x_stride), B
// chunk / 4 rows of the packed weights (4 bytes x 16 lanes each, stride nr * 64).
template <int MT, int NT, bool kPlain, bool kHigh>
EMBER_VNNI_TARGET void AmxTiles(const uint8_t* x, int x_stride, const Segments& sg, int chunk,
                                const PackedWeights& p, const int* r, const int* b, int8_t* y,
                                int y_stride, int32_t* sums) {
  EMBER_TILE_ZERO(0);
  if (NT == 2) EMBER_TILE_ZERO(1);
  if (MT == 2) EMBER_TILE_ZERO(2);
  if (MT == 2 && NT == 2) EMBER_TILE_ZERO(3);
  const size_t wstride = static_cast<size_t>(p.nr) * 64;
  const int8_t* w[2];
  for (int j = 0; j < NT; ++j) {
    w[j] = p.data.data() + static_cast<size_t>(b[j] / p.nr) * p.k4 * wstride +
           static_cast<size_t>(b[j] % p.nr) * 64;
  }
  const int per = chunk / 4;  // 4-byte groups of k per step
  const int8_t* w0 = w[0];
  const int8_t* w1 = w[NT - 1];
  for (int s = 0; s < sg.n; ++s) {
    const uint8_t* x0 = x + static_cast<size_t>(r[0]) * x_stride + sg.off[s];
    const uint8_t* x1 = x + static_cast<size_t>(r[MT - 1]) * x_stride + sg.off[s];
    for (int k4 = 0; k4 < sg.k4; k4 += per) {
      EMBER_TILE_LOAD(4, x0 + 4 * k4, x_stride);
      EMBER_TILE_LOAD(6, w0, wstride);
      EMBER_TILE_DPBUSD(0, 4, 6);
      if (NT == 2) {
        EMBER_TILE_LOAD(7, w1, wstride);
        EMBER_TILE_DPBUSD(1, 4, 7);
      }
      if (MT == 2) {
        EMBER_TILE_LOAD(5, x1 + 4 * k4, x_stride);
        EMBER_TILE_DPBUSD(2, 5, 6);
        if (NT == 2) EMBER_TILE_DPBUSD(3, 5, 7);
      }
      w0 += per * wstride;
      w1 += per * wstride;
    }
  }
  EMBER_TILE_STORE(0, sums, 64);
  if (NT == 2) EMBER_TILE_STORE(1, sums + 256, 64);
  if (MT == 2) EMBER_TILE_STORE(2, sums + 512, 64);
  if (MT == 2 && NT == 2) EMBER_TILE_STORE(3, sums + 768, 64);
  if (NT == 2 && b[1] * 16 + 16 <= p.n) {
    // Two full blocks side by side: each row's 32 channels narrowed together (NarrowedBytes64, as
    // FusedTile does), one 32-byte store instead of two conversions and 16-byte stores.
    const int32_t* rq0 = p.rq.data() + static_cast<size_t>(b[0]) * kRequantWords;
    const int32_t* rq1 = rq0 + kRequantWords;
    const __m512i bias0 = RqVec(rq0, kRqBias), bias1 = RqVec(rq1, kRqBias);
    for (int i = 0; i < MT; ++i) {
      const int32_t* s0 = sums + 2 * i * 256;
      int8_t* yo = y + static_cast<size_t>(r[i]) * y_stride + b[0] * 16;
      for (int row = 0; row < 16; ++row, yo += y_stride) {
        const __m512i d0 = FusedDwords<kPlain, kHigh>(
            p, rq0, _mm512_add_epi32(_mm512_load_si512(s0 + 16 * row), bias0));
        const __m512i d1 = FusedDwords<kPlain, kHigh>(
            p, rq1, _mm512_add_epi32(_mm512_load_si512(s0 + 256 + 16 * row), bias1));
        const __m512i h = _mm512_packs_epi32(d0, d1);
        const __m512i bytes =
            avx512::NarrowedBytes64(p.rq_clamp, _mm512_set1_epi8(static_cast<char>(p.act_min)),
                                    _mm512_set1_epi8(static_cast<char>(p.act_max)), h, h);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(yo), _mm512_castsi512_si256(bytes));
      }
    }
    return;
  }
  for (int i = 0; i < MT; ++i) {
    for (int j = 0; j < NT; ++j) {
      AmxStoreTile<kPlain, kHigh>(p, sums + (2 * i + j) * 256, r[i], b[j], y, y_stride);
    }
  }
}

// FusedRows with AMX's tiles, for m >= 16 rows and runs of k that split into chunks of 32 to 64
// bytes (ConvGemmUsesAmx). Row tiles start every 16 rows; the last one ends at row m, overlapping
// the one before it where m is not a multiple of 16 (its rows get the same bytes twice).
template <bool kPlain, bool kHigh>
EMBER_VNNI_TARGET void AmxRows(const uint8_t* x, int m, int x_stride, const Segments& sg,
                               const PackedWeights& p, int g0, int g1, int8_t* y, int y_stride) {
  const int chunk = AmxChunkBytes(4 * sg.k4);
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    const bool a = t == 4 || t == 5, bt = t >= 6;
    cfg.rows[t] = static_cast<uint8_t>(bt ? chunk / 4 : 16);
    cfg.colsb[t] = static_cast<uint16_t>(a ? chunk : 64);
  }
  // ldtilecfg (with the tilerelease that pairs with it) costs ~170 ns here, as much as a small
  // layer's whole GEMM: load the configuration only when the thread's current one (sttilecfg,
  // ~11 ns) differs, and leave the tiles configured afterwards. Anything else that configures
  // them in this thread (another library's AMX code) is seen by the comparison.
  TileConfig current;
  __asm__ volatile("sttilecfg %0" : "=m"(current)::"memory");
  if (std::memcmp(&current, &cfg, sizeof(cfg)) != 0) {
    __asm__ volatile("ldtilecfg %0" ::"m"(cfg) : "memory");
  }
  alignas(64) int32_t sums[4 * 256];
  const int b_begin = g0 * p.nr, b_end = std::min(g1 * p.nr, (p.n + 15) / 16);
  const int row_tiles = (m + 15) / 16;
  for (int t = 0; t < row_tiles; t += 2) {
    const int r[2] = {std::min(16 * t, m - 16), std::min(16 * (t + 1), m - 16)};
    const bool two_rows = t + 1 < row_tiles;
    for (int bb = b_begin; bb < b_end; bb += 2) {
      const int b[2] = {bb, bb + 1};
      const bool two_blocks = bb + 1 < b_end;
      if (two_rows && two_blocks) {
        AmxTiles<2, 2, kPlain, kHigh>(x, x_stride, sg, chunk, p, r, b, y, y_stride, sums);
      } else if (two_rows) {
        AmxTiles<2, 1, kPlain, kHigh>(x, x_stride, sg, chunk, p, r, b, y, y_stride, sums);
      } else if (two_blocks) {
        AmxTiles<1, 2, kPlain, kHigh>(x, x_stride, sg, chunk, p, r, b, y, y_stride, sums);
      } else {
        AmxTiles<1, 1, kPlain, kHigh>(x, x_stride, sg, chunk, p, r, b, y, y_stride, sums);
      }
    }
  }
}

#undef EMBER_TILE_LOAD
#undef EMBER_TILE_STORE
#undef EMBER_TILE_DPBUSD
#undef EMBER_TILE_ZERO

#endif  // EMBER_LITE_AMX

}  // namespace

void ConvGemmVnniSegments(const uint8_t* x, int m, int x_stride, const ptrdiff_t* seg_off, int nseg,
                          const PackedWeights& p, int8_t* y, int y_stride) {
  ConvGemmVnniSegmentsGroups(x, m, x_stride, seg_off, nseg, p, 0, p.nb / p.nr, y, y_stride);
}

void ConvGemmVnniSegmentsGroups(const uint8_t* x, int m, int x_stride, const ptrdiff_t* seg_off,
                                int nseg, const PackedWeights& p, int g0, int g1, int8_t* y,
                                int y_stride) {
  const Segments sg{seg_off, nseg, p.k4 / nseg};
#ifdef EMBER_LITE_AMX
  if (ConvGemmUsesAmx(m, sg.k4)) {
    if (p.rq_plain && p.rq_high) {
      AmxRows<true, true>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    } else if (p.rq_plain) {
      AmxRows<true, false>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    } else {
      AmxRows<false, false>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    }
    return;
  }
#endif
  if (nseg == 1 && seg_off[0] == 0) {
    if (p.rq_plain && p.rq_high) {
      FusedRowsAnyNr<true, true, false>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    } else if (p.rq_plain) {
      FusedRowsAnyNr<true, false, false>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    } else {
      FusedRowsAnyNr<false, false, false>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
    }
  } else if (p.rq_plain && p.rq_high) {
    FusedRowsAnyNr<true, true, true>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
  } else if (p.rq_plain) {
    FusedRowsAnyNr<true, false, true>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
  } else {
    FusedRowsAnyNr<false, false, true>(x, m, x_stride, sg, p, g0, g1, y, y_stride);
  }
}

void ConvGemmVnni(const uint8_t* x, int m, int x_stride, const PackedWeights& p, int8_t* y,
                  int y_stride) {
  ConvGemmVnniGroups(x, m, x_stride, p, 0, p.nb / p.nr, y, y_stride);
}

void ConvGemmVnniGroups(const uint8_t* x, int m, int x_stride, const PackedWeights& p, int g0,
                        int g1, int8_t* y, int y_stride) {
  const ptrdiff_t off = 0;
  ConvGemmVnniSegmentsGroups(x, m, x_stride, &off, 1, p, g0, g1, y, y_stride);
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
void OffsetPixels3To4(const int8_t* x, size_t pixels, uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i) {
    for (int c = 0; c < 3; ++c) out[4 * i + c] = static_cast<uint8_t>(x[3 * i + c]) ^ 0x80u;
  }
}
void OffsetPixels(const int8_t* x, size_t pixels, int c, int pc, uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i) {
    for (int j = 0; j < c; ++j) out[pc * i + j] = static_cast<uint8_t>(x[c * i + j]) ^ 0x80u;
  }
}
void GemmVnni(const uint8_t*, int, int, const PackedWeights&, int32_t*, int) {}
void ConvGemmVnni(const uint8_t*, int, int, const PackedWeights&, int8_t*, int) {}
void ConvGemmVnniGroups(const uint8_t*, int, int, const PackedWeights&, int, int, int8_t*, int) {}
void ConvGemmVnniSegmentsGroups(const uint8_t*, int, int, const ptrdiff_t*, int,
                                const PackedWeights&, int, int, int8_t*, int) {}
void ConvGemmVnniSegments(const uint8_t*, int, int, const ptrdiff_t*, int, const PackedWeights&,
                          int8_t*, int) {}
void GemmVnniGroups(const uint8_t*, int, int, const PackedWeights&, int, int, int32_t*, int) {}
void RequantizeVnni(const int32_t*, const int32_t*, const int32_t*, const int*, int, bool, int32_t,
                    int32_t, int32_t, int8_t*) {}
void RequantizeRowsVnni(const int32_t*, int, int, const int32_t*, const int32_t*, const int*, int,
                        bool, int32_t, int32_t, int32_t, int8_t*) {}

#endif

template <typename T>
void PackPairs(const int8_t* w, int n, int k, int k2, T* out) {
  for (int c = 0; c < n; ++c) {
    T* dst = out + static_cast<size_t>(c / 8) * k2 * 16 + (c % 8) * 2;
    for (int p = 0; p < k; ++p) {
      dst[static_cast<size_t>(p / 2) * 16 + p % 2] = w[static_cast<size_t>(c) * k + p];
    }
  }
}

void PackWeightsI16(const int8_t* w, int n, int k, PackedI16* out, bool narrow) {
  out->n = n;
  out->k = k;
  out->k2 = (k + 1) / 2;
  out->blocks = (n + 7) / 8;
  const size_t size = static_cast<size_t>(out->blocks) * out->k2 * 16;
  out->data.clear();
  out->data8.clear();
  if (narrow) {
    out->data8.assign(size, 0);
    PackPairs(w, n, k, out->k2, out->data8.data());
  } else {
    out->data.assign(size, 0);
    PackPairs(w, n, k, out->k2, out->data.data());
  }
}

#ifdef EMBER_LITE_X86
namespace {

// MR rows x NB blocks of 8 channels: MR * NB accumulators in registers over the whole depth.
template <int MR, int NB>
__attribute__((target("avx2"))) inline void GemmI16Tile(const int16_t* x16, const PackedI16& w,
                                                        int b, int32_t* acc, int acc_stride) {
  __m256i a[MR][NB];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) a[i][j] = _mm256_setzero_si256();
  const size_t bstride = static_cast<size_t>(w.k2) * 16;
  const int16_t* wb = w.data.data() + static_cast<size_t>(b) * bstride;
  const size_t xs = static_cast<size_t>(w.k2) * 2;
  for (int q = 0; q < w.k2; ++q) {
    __m256i wv[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      wv[j] = _mm256_load_si256(reinterpret_cast<const __m256i*>(wb + j * bstride + q * 16));
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t pair;
      std::memcpy(&pair, x16 + i * xs + 2 * q, sizeof(pair));
      const __m256i xv = _mm256_set1_epi32(pair);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j)
        a[i][j] = _mm256_add_epi32(a[i][j], _mm256_madd_epi16(xv, wv[j]));
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(acc + static_cast<size_t>(i) * acc_stride + (b + j) * 8),
          a[i][j]);
    }
}

// One row x NB blocks from the narrow (int8) packing: each pair's 16 weights widened as loaded.
template <int NB>
__attribute__((target("avx2"))) inline void GemmI8PairsTile(const int16_t* x16, const PackedI16& w,
                                                            int b, int32_t* acc) {
  __m256i a[NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) a[j] = _mm256_setzero_si256();
  const size_t bstride = static_cast<size_t>(w.k2) * 16;
  const int8_t* wb = w.data8.data() + static_cast<size_t>(b) * bstride;
  for (int q = 0; q < w.k2; ++q) {
    int32_t pair;
    std::memcpy(&pair, x16 + 2 * q, sizeof(pair));
    const __m256i xv = _mm256_set1_epi32(pair);
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      const __m256i wv = _mm256_cvtepi8_epi16(
          _mm_load_si128(reinterpret_cast<const __m128i*>(wb + j * bstride + q * 16)));
      a[j] = _mm256_add_epi32(a[j], _mm256_madd_epi16(xv, wv));
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + (b + j) * 8), a[j]);
  }
}

__attribute__((target("avx2"))) void GemmI8PairsRow(const int16_t* x16, const PackedI16& w, int b0,
                                                    int b1, int32_t* acc) {
  int b = b0;
  for (; b + 4 <= b1; b += 4) GemmI8PairsTile<4>(x16, w, b, acc);
  for (; b < b1; ++b) GemmI8PairsTile<1>(x16, w, b, acc);
}

template <int MR>
__attribute__((target("avx2"))) void GemmI16Rows(const int16_t* x16, const PackedI16& w, int b0,
                                                 int b1, int32_t* acc, int acc_stride) {
  int b = b0;
  for (; b + 2 <= b1; b += 2) GemmI16Tile<MR, 2>(x16, w, b, acc, acc_stride);
  if (b < b1) GemmI16Tile<MR, 1>(x16, w, b, acc, acc_stride);
}

// (p + nudge) / 2^31 toward zero, low 32 bits, for four signed 64-bit products p.
__attribute__((target("avx2"))) inline __m256i HighOf(__m256i p) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i pos_nudge = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i neg_nudge = _mm256_set1_epi64x(1 - (int64_t{1} << 30));
  const __m256i v =
      _mm256_add_epi64(p, _mm256_blendv_epi8(pos_nudge, neg_nudge, _mm256_cmpgt_epi64(zero, p)));
  const __m256i rem = _mm256_and_si256(v, _mm256_set1_epi64x(0x7FFFFFFF));
  // -1 where a negative quotient was rounded down: subtracting it rounds toward zero.
  const __m256i fix =
      _mm256_andnot_si256(_mm256_cmpeq_epi64(rem, zero), _mm256_cmpgt_epi64(zero, v));
  return _mm256_sub_epi64(_mm256_srli_epi64(v, 31), fix);
}

// Eight lanes of MultiplyByQuantizedMultiplier: the doubling high multiply of 64-bit products
// (even and odd lanes apart), truncated toward zero as the scalar division, then the rounding
// right shift. Only the low 32 bits of (product + nudge) >> 31 are kept, which a logical shift
// gives as the arithmetic one would.
__attribute__((target("avx2"))) inline __m256i RequantLanes(__m256i a, __m256i mult, __m256i sh) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i left = _mm256_max_epi32(sh, zero);
  const __m256i right =
      _mm256_min_epi32(_mm256_sub_epi32(zero, _mm256_min_epi32(sh, zero)), _mm256_set1_epi32(31));
  const __m256i x = _mm256_sllv_epi32(a, left);  // 0 for a shift of 32 or more, as the scalar
  const __m256i even = HighOf(_mm256_mul_epi32(x, mult));
  const __m256i odd =
      HighOf(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(mult, 32)));
  const __m256i hm = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
  const __m256i remainder = _mm256_and_si256(hm, mask);
  const __m256i threshold =
      _mm256_sub_epi32(_mm256_srai_epi32(mask, 1), _mm256_cmpgt_epi32(zero, hm));
  return _mm256_sub_epi32(_mm256_srav_epi32(hm, right), _mm256_cmpgt_epi32(remainder, threshold));
}

// Eight channels of `rows` rows: kMode 0 RequantLanes (any multiplier), 1 the composed
// rounding with left shifts or e = 0 lanes, 2 the composed rounding of right shifts only.
template <int kMode>
__attribute__((target("avx2"))) void RequantBlockRows(const int32_t* acc, int rows, int acc_stride,
                                                      __m256i b, __m256i m, __m256i sh,
                                                      const avx2::Rounding& k, __m256i vzp,
                                                      __m256i vlo, __m256i vhi, int n, int8_t* y) {
  // Byte 0 of each 32-bit lane to the front of its 128-bit half, then the halves' first words
  // together.
  const __m256i bytes =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i words = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
  for (int r = 0; r < rows; ++r) {
    const __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                           acc + static_cast<size_t>(r) * acc_stride)),
                                       b);
    __m256i v;
    if constexpr (kMode == 0) {
      v = RequantLanes(a, m, sh);
    } else {
      v = avx2::ApplyRounding<kMode == 1, kMode == 1>(k, a);
    }
    v = _mm256_max_epi32(vlo, _mm256_min_epi32(vhi, _mm256_add_epi32(v, vzp)));
    v = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, bytes), words);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + static_cast<size_t>(r) * n),
                     _mm256_castsi256_si128(v));
  }
}

__attribute__((target("avx2"))) int RequantizeRowsAvx2Impl(const int32_t* acc, int rows,
                                                           int acc_stride, const int32_t* bias,
                                                           const int32_t* mult, const int* shift,
                                                           int n, int32_t zp, int32_t lo,
                                                           int32_t hi, int8_t* y) {
  const __m256i vzp = _mm256_set1_epi32(zp), vlo = _mm256_set1_epi32(lo),
                vhi = _mm256_set1_epi32(hi);
  const int n8 = n / 8 * 8;
  for (int c = 0; c < n8; c += 8) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias + c));
    const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mult + c));
    const __m256i sh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(shift + c));
    // The composed rounding (requant_avx2.h), specialised for the block's shifts; a block with
    // an INT32_MIN multiplier takes RequantLanes, which saturates as TFLite does.
    avx2::Rounding k{};
    int8_t* yc = y + c;
    const int32_t* ac = acc + c;
    if (!avx2::MakeRounding(m, sh, &k)) {
      RequantBlockRows<0>(ac, rows, acc_stride, b, m, sh, k, vzp, vlo, vhi, n, yc);
    } else if (k.any_left || k.any_double) {
      RequantBlockRows<1>(ac, rows, acc_stride, b, m, sh, k, vzp, vlo, vhi, n, yc);
    } else {
      RequantBlockRows<2>(ac, rows, acc_stride, b, m, sh, k, vzp, vlo, vhi, n, yc);
    }
  }
  return n8;
}

}  // namespace
#endif

int RequantizeRowsAvx2(const int32_t* acc, int rows, int acc_stride, const int32_t* bias,
                       const int32_t* mult, const int* shift, int n, int32_t zp, int32_t lo,
                       int32_t hi, int8_t* y) {
#ifdef EMBER_LITE_X86
  if (GemmI16Available()) {
    return RequantizeRowsAvx2Impl(acc, rows, acc_stride, bias, mult, shift, n, zp, lo, hi, y);
  }
#endif
  (void)acc;
  (void)rows;
  (void)acc_stride;
  (void)bias;
  (void)mult;
  (void)shift;
  (void)n;
  (void)zp;
  (void)lo;
  (void)hi;
  (void)y;
  return 0;
}

bool GemmI16Available() {
#ifdef EMBER_LITE_X86
  static const bool has = cpu::BestIsaTier(cpu::Avx512Need::kSkx) != cpu::IsaTier::kGeneric;
  return has;
#else
  return false;
#endif
}

void GemmI16(const int16_t* x16, int m, const PackedI16& w, int32_t* acc, int acc_stride) {
  GemmI16Blocks(x16, m, w, 0, w.blocks, acc, acc_stride);
}

void GemmI16Blocks(const int16_t* x16, int m, const PackedI16& w, int b0, int b1, int32_t* acc,
                   int acc_stride) {
#ifdef EMBER_LITE_X86
  const size_t xs = static_cast<size_t>(w.k2) * 2;
  int r = 0;
  if (!w.data8.empty()) {
    for (; r < m; ++r) {
      GemmI8PairsRow(x16 + r * xs, w, b0, b1, acc + static_cast<size_t>(r) * acc_stride);
    }
    return;
  }
  for (; r + 4 <= m; r += 4) {
    GemmI16Rows<4>(x16 + r * xs, w, b0, b1, acc + static_cast<size_t>(r) * acc_stride, acc_stride);
  }
  for (; r < m; ++r) {
    GemmI16Rows<1>(x16 + r * xs, w, b0, b1, acc + static_cast<size_t>(r) * acc_stride, acc_stride);
  }
#else
  (void)x16;
  (void)m;
  (void)w;
  (void)b0;
  (void)b1;
  (void)acc;
  (void)acc_stride;
#endif
}

#ifdef EMBER_LITE_X86
namespace {

// y[i] = x[i] for i < n, sixteen at a time.
__attribute__((target("avx2"))) void WidenAvx2(const int8_t* x, size_t n, int16_t* y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(y + i),
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  }
  for (; i < n; ++i) y[i] = x[i];
}

}  // namespace
#endif

#ifdef EMBER_LITE_X86
namespace {

constexpr int kWidenMaxRows = 16;  // filter heights Im2ColRowWidenI8 takes

__attribute__((target("avx2"))) void Im2ColRowWidenAvx2(const WindowGeometry& g,
                                                        const int8_t* image, size_t image_bytes,
                                                        int oy, int8_t pad, int k2, int16_t* x16) {
  const size_t run = static_cast<size_t>(g.kw) * static_cast<size_t>(g.c);  // <= 16
  const size_t k = static_cast<size_t>(g.kh) * run, row = 2 * static_cast<size_t>(k2);
  const ptrdiff_t pixel_row = static_cast<ptrdiff_t>(g.iw) * g.c;
  const __m256i pad16 = _mm256_set1_epi16(pad);
  const int iy0 = oy * g.stride_h - g.pad_h;
  // Each filter row's input row (null: padding), and the last byte offset in a row at which a
  // 16-byte load stays inside the image for every one of them.
  const int8_t* src[kWidenMaxRows];
  ptrdiff_t last_at = pixel_row;  // every load of a row's pixels allowed by default
  for (int ky = 0; ky < g.kh; ++ky) {
    const int iy = iy0 + ky;
    src[ky] = iy >= 0 && iy < g.ih ? image + static_cast<ptrdiff_t>(iy) * pixel_row : nullptr;
    if (src[ky] != nullptr) {
      last_at = std::min(last_at, static_cast<ptrdiff_t>(image_bytes) - 16 -
                                      static_cast<ptrdiff_t>(iy) * pixel_row);
    }
  }
  // Pixels whose window lies inside the row, [lo, hi), and of those the ones that load freely.
  const int lo = std::min(g.ow, (g.pad_w + g.stride_w - 1) / g.stride_w);
  int hi = g.iw - g.kw + g.pad_w >= 0 ? (g.iw - g.kw + g.pad_w) / g.stride_w + 1 : 0;
  hi = std::max(lo, std::min(g.ow, hi));
  int fast = lo;
  if (last_at >= 0) {
    const ptrdiff_t last_ix = last_at / g.c;  // a window starting at or before it loads freely
    fast = static_cast<int>(
        std::max<ptrdiff_t>(lo, std::min<ptrdiff_t>(hi, (last_ix + g.pad_w) / g.stride_w + 1)));
  }
  for (int ox = 0; ox < g.ow; ++ox) {
    int16_t* dst = x16 + static_cast<size_t>(ox) * row;
    if (ox >= lo && ox < fast) {
      // Filter row ky's 16 values at dst + ky * run: the run..15 past it are the next filter
      // row's (or the next pixel's) and written over after, in order; room past the last pixel.
      const ptrdiff_t at = static_cast<ptrdiff_t>(ox * g.stride_w - g.pad_w) * g.c;
      for (int ky = 0; ky < g.kh; ++ky) {
        const __m256i v = src[ky] == nullptr ? pad16
                                             : _mm256_cvtepi8_epi16(_mm_loadu_si128(
                                                   reinterpret_cast<const __m128i*>(src[ky] + at)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + static_cast<size_t>(ky) * run), v);
      }
    } else {
      // Value by value: any window, no load past the image.
      WindowTaps(g, image, oy, ox, static_cast<int16_t>(pad), dst,
                 [](int16_t* d, const int8_t* s, size_t n) {
                   for (size_t i = 0; i < n; ++i) d[i] = s[i];
                 });
    }
    if (row > k) dst[k] = 0;  // row = 2 * ceil(k / 2): one value at most
  }
}

}  // namespace
#endif

bool Im2ColRowWidenI8Applies(const WindowGeometry& g, int k2) {
#ifdef EMBER_LITE_X86
  return GemmI16Available() && g.dil_h == 1 && g.dil_w == 1 && g.c > 0 && g.kw > 0 && g.kh > 0 &&
         g.kh <= kWidenMaxRows && g.stride_w > 0 && g.kw * g.c <= 16 && 2 * k2 >= g.kh * g.kw * g.c;
#else
  (void)g;
  (void)k2;
  return false;
#endif
}

void Im2ColRowWidenI8(const WindowGeometry& g, const int8_t* image, size_t image_bytes, int oy,
                      int8_t pad, int k2, int16_t* x16) {
#ifdef EMBER_LITE_X86
  Im2ColRowWidenAvx2(g, image, image_bytes, oy, pad, k2, x16);
#else
  (void)g;
  (void)image;
  (void)image_bytes;
  (void)oy;
  (void)pad;
  (void)k2;
  (void)x16;
#endif
}

// Rows of a 1x1 conv or FULLY_CONNECTED are often short (16 to 96 channels) and, with an even
// depth and no gap between them, one flat run: widened as one, 16 values a step (a compiled
// loop per row left short rows to its scalar tail).
void WidenRowsI8(const int8_t* x, int m, int x_stride, int k, int k2, int16_t* x16) {
#ifdef EMBER_LITE_X86
  if (GemmI16Available()) {
    if (x_stride == k && 2 * k2 == k) {
      WidenAvx2(x, static_cast<size_t>(m) * static_cast<size_t>(k), x16);
      return;
    }
    for (int r = 0; r < m; ++r) {
      int16_t* dst = x16 + static_cast<size_t>(r) * 2 * k2;
      WidenAvx2(x + static_cast<size_t>(r) * x_stride, static_cast<size_t>(k), dst);
      for (int p = k; p < 2 * k2; ++p) dst[p] = 0;
    }
    return;
  }
#endif
  for (int r = 0; r < m; ++r) {
    const int8_t* src = x + static_cast<size_t>(r) * x_stride;
    int16_t* dst = x16 + static_cast<size_t>(r) * 2 * k2;
    for (int p = 0; p < k; ++p) dst[p] = src[p];
    for (int p = k; p < 2 * k2; ++p) dst[p] = 0;
  }
}

}  // namespace lite
}  // namespace ember
