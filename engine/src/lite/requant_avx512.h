// AVX-512 requantization in registers, shared by lite's int8 GEMM and depthwise kernels:
// per-lane MultiplyByQuantizedMultiplier with TFLite's double rounding (or the single-rounding
// variant), the same integers as ember/lite/quant.h. x86-64 only; include it under
// EMBER_LITE_X86-style guards.
#ifndef EMBER_SRC_LITE_REQUANT_AVX512_H_
#define EMBER_SRC_LITE_REQUANT_AVX512_H_

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <climits>
#include <cstdint>

// clang 18 to 21 split 512-bit vectors out of the avx512* features ("evex512"; zig 0.15's clang
// 20 for macOS needs it); gcc, older clangs and clang 22 (zig 0.17) reject the name.
#if defined(__clang__) && __clang_major__ >= 18 && __clang_major__ < 22
#define EMBER_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,evex512")))
#else
#define EMBER_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#endif

namespace ember {
namespace lite {
namespace avx512 {

EMBER_VNNI_TARGET inline __m512i SingleHalf(__m512i xs, __m512i ms, __m512i t) {
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i prod = _mm512_mul_epi32(xs, ms);
  const __m512i round = _mm512_sllv_epi64(one, _mm512_sub_epi64(t, one));
  return _mm512_srav_epi64(_mm512_add_epi64(prod, round), t);
}

// Double-rounding MultiplyByQuantizedMultiplier in one step per 64-bit half. With p = x * m
// (x already shifted left), TFLite computes s = SRDHM = floor((p + 2^30) / 2^31) (its nudge and
// truncation come to this for either sign; p = 2^62, from INT32_MIN * INT32_MIN, saturates to
// INT32_MAX, which p = 2^62 - 2^31, the largest other product, gives too: p is capped there) and
// then RoundingDivideByPOT(s, e) = floor((s + 2^(e-1) - [s < 0]) / 2^e) for e >= 1. Nested floor
// divisions by powers of two compose, so the result is (p + 2^30 + 2^(30+e) - 2^31 [p < -2^30]) >>
// (31 + e), exactly, in 64 bits. Everything but p depends on the channel only: Make once, apply to
// many rows.
struct DoubleRounding {
  __m512i left;      // left shift of x, 32-bit lanes
  __m512i m, m_odd;  // multipliers of the even lanes (low halves) and of the odd ones
  __m512i add_even, add_odd, total_even, total_odd;  // 64-bit lanes
  __mmask8 round_even, round_odd;                    // e >= 1
};

EMBER_VNNI_TARGET inline DoubleRounding MakeDoubleRounding(__m512i m, __m512i shift) {
  const __m512i zero = _mm512_setzero_si512();
  DoubleRounding k;
  k.left = _mm512_max_epi32(shift, zero);
  k.m = m;
  k.m_odd = _mm512_srli_epi64(m, 32);
  // RoundingDivideByPOT caps its exponent at 31.
  const __m512i e = _mm512_min_epi32(_mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero),
                                     _mm512_set1_epi32(31));
  const __m512i e_even = _mm512_and_si512(e, _mm512_set1_epi64(0xffffffff));
  const __m512i e_odd = _mm512_srli_epi64(e, 32);
  k.round_even = _mm512_test_epi64_mask(e_even, e_even);
  k.round_odd = _mm512_test_epi64_mask(e_odd, e_odd);
  const __m512i b30 = _mm512_set1_epi64(1LL << 30), b31 = _mm512_set1_epi64(31);
  k.add_even = _mm512_add_epi64(b30, _mm512_maskz_sllv_epi64(k.round_even, b30, e_even));
  k.add_odd = _mm512_add_epi64(b30, _mm512_maskz_sllv_epi64(k.round_odd, b30, e_odd));
  k.total_even = _mm512_add_epi64(e_even, b31);
  k.total_odd = _mm512_add_epi64(e_odd, b31);
  return k;
}

// One half: x and m in the low 32 bits of each 64-bit lane; the result in those bits too.
// kPlain: no multiplier is INT32_MIN, so no product needs the cap.
template <bool kPlain>
EMBER_VNNI_TARGET inline __m512i DoubleRoundingHalf(__m512i x, __m512i m, __m512i add,
                                                    __m512i total, __mmask8 round) {
  __m512i p = _mm512_mul_epi32(x, m);
  if (!kPlain) p = _mm512_min_epi64(p, _mm512_set1_epi64((1LL << 62) - (1LL << 31)));
  const __mmask8 neg = _mm512_mask_cmplt_epi64_mask(round, p, _mm512_set1_epi64(-(1LL << 30)));
  p = _mm512_add_epi64(p, add);
  p = _mm512_mask_sub_epi64(p, neg, p, _mm512_set1_epi64(1LL << 31));
  return _mm512_srav_epi64(p, total);
}

// kPlain: every shift is <= 0 and no multiplier is INT32_MIN (as QuantizeMultiplier gives for
// scales below one), so the left shift and the saturation cap are skipped.
template <bool kPlain = false>
EMBER_VNNI_TARGET inline __m512i ApplyDoubleRounding(const DoubleRounding& k, __m512i x) {
  if (!kPlain) x = _mm512_sllv_epi32(x, k.left);
  const __m512i even = DoubleRoundingHalf<kPlain>(x, k.m, k.add_even, k.total_even, k.round_even);
  const __m512i odd = DoubleRoundingHalf<kPlain>(_mm512_srli_epi64(x, 32), k.m_odd, k.add_odd,
                                                 k.total_odd, k.round_odd);
  return _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

// DoubleRounding's constants as 64-bit vectors ready to apply, for the int8 GEMM (loaded from
// PackedWeights::rq, made once per layer) and the depthwise rows (MakeHighRounding): the left
// shift, the multipliers of the even and odd lanes, the rounding addends (out_zp * 2^(31+e)
// folded in where the caller says so), the total shifts and the products below which the
// -2^31 step applies (-2^30 where e >= 1, else INT64_MIN).
struct FusedBlock {
  __m512i left, mult, mult_odd, add_even, add_odd, total_even, total_odd, neg_even, neg_odd;
};

// ApplyFusedBlock's layer-independent constants. Opaque() hides their values from the compiler,
// which then keeps them in registers (or reloads them from the stack) rather than rebuilding each
// from a general register for every vector (a broadcast and a mask move per 16 outputs, which GCC
// did in the GEMM's 4x4 tiles).
struct FusedConstants {
  __m512i b31, cap;  // cap: where products are capped, 2^62 - 2^31 (see DoubleRounding)
  __mmask16 odd;
  EMBER_VNNI_TARGET static FusedConstants Plain() {
    return {_mm512_set1_epi64(1LL << 31), _mm512_set1_epi64((1LL << 62) - (1LL << 31)),
            static_cast<__mmask16>(0xAAAA)};
  }
  // kPlain: the cap is not used (and not made opaque, which would hold a register).
  template <bool kPlain>
  EMBER_VNNI_TARGET static FusedConstants Opaque() {
    FusedConstants c = Plain();
    __asm__("" : "+v"(c.b31), "+k"(c.odd));
    if (!kPlain) __asm__("" : "+v"(c.cap));
    return c;
  }
};

// Requantized int32 values of one vector of sums x. kPlain: no left shift, no INT32_MIN
// multiplier (so no product cap). kHigh: every lane has e >= 1, so the odd lanes' shift is 32
// less (total_odd holds 31 + e - 32) and leaves their results in the high halves, where the
// blend takes them. Always inlined: GCC otherwise calls it from the GEMM's larger tiles
// (FusedTile<4, 4>), a call per 16 outputs with the vector passed through memory, ~30% of a 1x1
// conv with few input channels. fc: FusedConstants::Opaque() where the caller loops over many
// vectors with many registers live.
template <bool kPlain, bool kHigh>
EMBER_VNNI_TARGET inline __attribute__((always_inline)) __m512i ApplyFusedBlock(
    const FusedBlock& k, __m512i a, const FusedConstants& fc = FusedConstants::Plain()) {
  if (!kPlain) a = _mm512_sllv_epi32(a, k.left);
  const __m512i b31 = fc.b31;
  __m512i pe = _mm512_mul_epi32(a, k.mult);
  __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(a, 32), k.mult_odd);
  if (!kPlain) {
    pe = _mm512_min_epi64(pe, fc.cap);
    po = _mm512_min_epi64(po, fc.cap);
  }
  const __mmask8 ne = _mm512_cmplt_epi64_mask(pe, k.neg_even);
  const __mmask8 no = _mm512_cmplt_epi64_mask(po, k.neg_odd);
  pe = _mm512_add_epi64(pe, k.add_even);
  po = _mm512_add_epi64(po, k.add_odd);
  pe = _mm512_mask_sub_epi64(pe, ne, pe, b31);
  po = _mm512_mask_sub_epi64(po, no, po, b31);
  pe = _mm512_srav_epi64(pe, k.total_even);
  po = _mm512_srav_epi64(po, k.total_odd);
  if (!kHigh) po = _mm512_slli_epi64(po, 32);
  return _mm512_mask_blend_epi32(fc.odd, pe, po);
}

// Whether the lanes in `lanes` fit MakeHighRounding: exponent e 1 to 23 (shift -1 to -23; a
// scale below one half) and a multiplier other than INT32_MIN.
EMBER_VNNI_TARGET inline bool HighRoundingFits(__m512i m, __m512i shift, __mmask16 lanes) {
  const __mmask16 bad = _mm512_mask_cmpgt_epi32_mask(lanes, shift, _mm512_set1_epi32(-1)) |
                        _mm512_mask_cmplt_epi32_mask(lanes, shift, _mm512_set1_epi32(-23)) |
                        _mm512_mask_cmpeq_epi32_mask(lanes, m, _mm512_set1_epi32(INT32_MIN));
  return bad == 0;
}

// ApplyFusedBlock<true, true>'s constants from k, out_zp folded in: ApplyDoubleRounding<true>
// plus out_zp, two operations shorter, for lanes that fit HighRoundingFits (out_zp * 2^(31+e)
// stays far from int64 overflow next to a product below 2^62). Other lanes get wrong values.
EMBER_VNNI_TARGET inline FusedBlock MakeHighRounding(const DoubleRounding& k, int32_t out_zp) {
  const __m512i zp = _mm512_set1_epi64(out_zp);
  FusedBlock h;
  h.left = _mm512_setzero_si512();
  h.mult = k.m;
  h.mult_odd = k.m_odd;
  h.add_even = _mm512_add_epi64(k.add_even, _mm512_sllv_epi64(zp, k.total_even));
  h.add_odd = _mm512_add_epi64(k.add_odd, _mm512_sllv_epi64(zp, k.total_odd));
  h.total_even = k.total_even;
  h.total_odd = _mm512_sub_epi64(k.total_odd, _mm512_set1_epi64(32));
  h.neg_even = h.neg_odd = _mm512_set1_epi64(-(1LL << 30));
  return h;
}

// 64 int8 outputs from four vectors of int32 results r0-r3 (channels 0-15, ..., 48-63), given as
// h01 = _mm512_packs_epi32(r0, r1) and h23 the same of r2 and r3: saturating packs (to int8 as
// the reference's clamp to [-128, 127]), then, when `clamp`, the activation clamp to [lo, hi] in
// bytes.
EMBER_VNNI_TARGET inline __m512i NarrowedBytes64(bool clamp, __m512i lo, __m512i hi, __m512i h01,
                                                 __m512i h23) {
  // packs work within 128-bit lanes: dword 4 L + q of the result holds r_q[4 L .. 4 L + 3].
  const __m512i perm = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  __m512i b = _mm512_permutexvar_epi32(perm, _mm512_packs_epi16(h01, h23));
  if (clamp) b = _mm512_min_epi8(_mm512_max_epi8(b, lo), hi);
  return b;
}

// Per-lane MultiplyByQuantizedMultiplier (double rounding) or its single-rounding variant.
EMBER_VNNI_TARGET inline __m512i RequantLanes(__m512i x, __m512i m, __m512i shift, bool single) {
  if (single) {
    // (x * m + 2^(30 - s)) >> (31 - s) in 64-bit lanes.
    const __m512i total = _mm512_sub_epi32(_mm512_set1_epi32(31), shift);
    const __m512i tot_even = _mm512_and_si512(total, _mm512_set1_epi64(0xffffffff));
    const __m512i tot_odd = _mm512_srli_epi64(total, 32);
    const __m512i even = SingleHalf(x, m, tot_even);
    const __m512i odd = SingleHalf(_mm512_srli_epi64(x, 32), _mm512_srli_epi64(m, 32), tot_odd);
    return _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  }
  return ApplyDoubleRounding(MakeDoubleRounding(m, shift), x);
}

}  // namespace avx512
}  // namespace lite
}  // namespace ember

#endif  // x86-64
#endif  // EMBER_SRC_LITE_REQUANT_AVX512_H_
