// AVX-512 int8 ADD (see add_int8.h): the same integers as the scalar kernel, lane by lane.
// The sum's requantization is the double-rounding one in 64-bit lanes (plain form: the caller
// checks that no multiplier is INT32_MIN and that the shifts are <= 0, so no left shift or cap).
// Each input's stage stays in 32-bit lanes (InputStage below): its value is d * 2^20 with d =
// x - zp in [-255, 255], so the 64-bit product splits into two 32-bit ones.
#include "lite/add_int8.h"

#include <algorithm>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports false "(may be) used uninitialized" inside its own avx512fintrin.h (the
// _mm512_undefined_epi32 operand of inlined intrinsics).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "lite/requant_avx2.h"
#include "lite/requant_avx512.h"
#define EMBER_ADD_X86 1
#endif

namespace ember {
namespace lite {

#ifdef EMBER_ADD_X86

// The first min(left, 16) lanes.
inline __mmask16 Lanes(size_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

// MultiplyByQuantizedMultiplierSmallerThanOne(d * 2^20, m, -e) for d in [-255, 255], in 32-bit
// lanes. With p = d * m * 2^20 the double rounding is floor((p + 2^30 + 2^(30+e) - 2^31 [p < 0])
// / 2^(31+e)) for e >= 1 (requant_avx512.h; [p < -2^30] is [p < 0] here, |p| >= 2^50 when d and
// m are nonzero, as QuantizeMultiplier's |m| >= 2^30), floor((p + 2^30) / 2^31) for e = 0. Split
// m = mh * 2^11 + ml (0 <= ml < 2^11): p = d * mh * 2^31 + d * ml * 2^20, and the floor by 2^31
// takes d * mh whole, so the numerator's integer part is h = d * mh + floor((d * ml + 2^10) / 2^11)
// + 2^(e-1) - [d * mh < 0] (e >= 1), and the result h >> e. |d * mh| < 2^28, |d * ml| < 2^19: no
// lane overflows.
struct InputStage {
  __m512i zp, mh, ml, round;  // round: 2^(e-1), or 0 when e = 0
  __m128i e;
  bool sign;  // e >= 1: subtract [d * mh < 0]
};

// The scalars InputStage and InputStage8 broadcast.
struct InputStageScalars {
  int32_t mh, ml, round;
  int e;
};

inline InputStageScalars InputStageConstants(int32_t m, int shift) {
  const int e = std::min(-shift, 31);
  // Arithmetic shift: m = mh * 2^11 + ml for either sign.
  return {m >> 11, m & 2047, e >= 1 ? 1 << (e - 1) : 0, e};
}

EMBER_VNNI_TARGET inline InputStage MakeInputStage(int32_t zp, int32_t m, int shift) {
  const InputStageScalars c = InputStageConstants(m, shift);
  InputStage k;
  k.zp = _mm512_set1_epi32(zp);
  k.mh = _mm512_set1_epi32(c.mh);
  k.ml = _mm512_set1_epi32(c.ml);
  k.round = _mm512_set1_epi32(c.round);
  k.e = _mm_cvtsi32_si128(c.e);
  k.sign = c.e >= 1;
  return k;
}

EMBER_VNNI_TARGET inline __m512i ApplyInputStage(const InputStage& k, __m512i x) {
  const __m512i d = _mm512_sub_epi32(x, k.zp);
  const __m512i high = _mm512_mullo_epi32(d, k.mh);
  const __m512i low = _mm512_srai_epi32(
      _mm512_add_epi32(_mm512_mullo_epi32(d, k.ml), _mm512_set1_epi32(1 << 10)), 11);
  __m512i h = _mm512_add_epi32(_mm512_add_epi32(high, low), k.round);
  if (k.sign) h = _mm512_add_epi32(h, _mm512_srai_epi32(high, 31));
  return _mm512_sra_epi32(h, k.e);
}

// ADD's and MUL's output stage: DR(x) + out_zp per lane (DR: the double-rounding
// MultiplyByQuantizedMultiplier), through MakeHighRounding's shorter form where the multiplier
// fits it.
struct OutputStage {
  avx512::DoubleRounding d;
  avx512::FusedBlock h;
  __m512i zp;
  bool high;
};

EMBER_VNNI_TARGET inline OutputStage MakeOutputStage(int32_t multiplier, int shift,
                                                     int32_t out_zp) {
  OutputStage o;
  const __m512i m = _mm512_set1_epi32(multiplier), s = _mm512_set1_epi32(shift);
  o.d = avx512::MakeDoubleRounding(m, s);
  o.high = avx512::HighRoundingFits(m, s, static_cast<__mmask16>(0xFFFF));
  o.h = avx512::MakeHighRounding(o.d, out_zp);
  o.zp = _mm512_set1_epi32(out_zp);
  return o;
}

// x requantized, out_zp added.
template <bool kHigh, bool kPlain>
EMBER_VNNI_TARGET inline __m512i ApplyOutputStage(const OutputStage& o, __m512i x) {
  if (kHigh) return avx512::ApplyFusedBlock<true, true>(o.h, x);
  return _mm512_add_epi32(avx512::ApplyDoubleRounding<kPlain>(o.d, x), o.zp);
}

// Quarter Q (bytes 16 Q to 16 Q + 15) of v, widened to 32-bit lanes.
template <int Q>
EMBER_VNNI_TARGET inline __m512i Quarter(__m512i v) {
  return _mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(v, Q));
}

// y[i] for i < n, 64 at a time: lanes.Get<Q>(va, vb, at) gives the int32 values to requantize
// for quarter Q (lanes 16 Q to 16 Q + 15) of the step's 64 bytes of a and b (b's read from b + at);
// the four vectors of a step are requantized (out_zp added), narrowed with saturation and clamped
// to [act_min, act_max] in bytes (the reference's clamp to the int8 range and then to the
// activation's), one store per step. The masked loads and store of the last step touch nothing
// past n. (A masked VPMOVDB store per 16 outputs held a sixth of ADD's time.) kPlain: no
// multiplier INT32_MIN and every shift <= 0.
template <bool kHigh, bool kPlain, typename Lanes>
EMBER_VNNI_TARGET inline void Steps64(const int8_t* a, const int8_t* b, CyclicB cb, size_t n,
                                      const OutputStage& o, int32_t act_min, int32_t act_max,
                                      int8_t* y, const Lanes& lanes) {
  const __m512i lo = _mm512_set1_epi8(static_cast<char>(act_min));
  const __m512i hi = _mm512_set1_epi8(static_cast<char>(act_max));
  const size_t step = cb.period != 0 ? 64 % cb.period : 0;  // start and step below the period
  for (size_t i = 0; i < n; i += 64) {
    const __mmask64 m =
        n - i >= 64 ? ~static_cast<__mmask64>(0) : (static_cast<__mmask64>(1) << (n - i)) - 1;
    const size_t at = cb.period != 0 ? cb.start : i;
    const __m512i va = _mm512_maskz_loadu_epi8(m, a + i);
    const __m512i vb = Lanes::kReadsB ? _mm512_maskz_loadu_epi8(m, b + at) : va;
    if (cb.period != 0) {
      cb.start += step;
      if (cb.start >= cb.period) cb.start -= cb.period;
    }
    const __m512i r0 = ApplyOutputStage<kHigh, kPlain>(o, lanes.template Get<0>(va, vb, at));
    const __m512i r1 = ApplyOutputStage<kHigh, kPlain>(o, lanes.template Get<1>(va, vb, at));
    const __m512i r2 = ApplyOutputStage<kHigh, kPlain>(o, lanes.template Get<2>(va, vb, at));
    const __m512i r3 = ApplyOutputStage<kHigh, kPlain>(o, lanes.template Get<3>(va, vb, at));
    const __m512i bytes = avx512::NarrowedBytes64(true, lo, hi, _mm512_packs_epi32(r0, r1),
                                                  _mm512_packs_epi32(r2, r3));
    _mm512_mask_storeu_epi8(y + i, m, bytes);
  }
}

// ADD's and MUL's lanes before the output stage (functors: GCC's lambdas do not take the target).
struct AddLanes {
  static constexpr bool kReadsB = true;
  InputStage k1, k2;
  template <int Q>
  EMBER_VNNI_TARGET __m512i Get(__m512i va, __m512i vb, size_t) const {
    return _mm512_add_epi32(ApplyInputStage(k1, Quarter<Q>(va)),
                            ApplyInputStage(k2, Quarter<Q>(vb)));
  }
};

// ADD with b's stage applied once per period value (a cyclic b: each value serves many steps).
struct AddStagedLanes {
  static constexpr bool kReadsB = false;
  InputStage k1;
  const int32_t* rb;  // b's stage, period + 64 values as CyclicB's buffer
  template <int Q>
  EMBER_VNNI_TARGET __m512i Get(__m512i va, __m512i, size_t at) const {
    return _mm512_add_epi32(ApplyInputStage(k1, Quarter<Q>(va)),
                            _mm512_loadu_si512(rb + at + 16 * Q));
  }
};

struct MulLanes {
  static constexpr bool kReadsB = true;
  __m512i za, zb;
  template <int Q>
  EMBER_VNNI_TARGET __m512i Get(__m512i va, __m512i vb, size_t) const {
    return _mm512_mullo_epi32(_mm512_sub_epi32(Quarter<Q>(va), za),
                              _mm512_sub_epi32(Quarter<Q>(vb), zb));
  }
};

// The longest period whose b stage AddI8Avx512 applies once (a buffer on the stack).
constexpr size_t kStagedMax = 4096;

EMBER_VNNI_TARGET void AddI8Avx512(const int8_t* a, const int8_t* b, size_t n, const AddI8Params& p,
                                   int8_t* y, CyclicB cb) {
  const InputStage k1 = MakeInputStage(p.in_zp, p.m1, p.s1);
  const InputStage k2 = MakeInputStage(p.in2_zp, p.m2, p.s2);
  const OutputStage o = MakeOutputStage(p.multiplier, p.shift, p.out_zp);
  if (cb.period != 0 && cb.period <= kStagedMax && n >= 2 * cb.period) {
    // b's period staged once: each of its values is met at least twice.
    alignas(64) int32_t rb[kStagedMax + 64];
    const size_t len = cb.period + 64;
    for (size_t j = 0; j < len; j += 16) {
      const __mmask16 m = Lanes(len - j);
      _mm512_mask_storeu_epi32(
          rb + j, m, ApplyInputStage(k2, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, b + j))));
    }
    const AddStagedLanes staged{k1, rb};
    if (o.high) {
      Steps64<true, true>(a, b, cb, n, o, p.act_min, p.act_max, y, staged);
    } else {
      Steps64<false, true>(a, b, cb, n, o, p.act_min, p.act_max, y, staged);
    }
    return;
  }
  const AddLanes sum{k1, k2};
  if (o.high) {
    Steps64<true, true>(a, b, cb, n, o, p.act_min, p.act_max, y, sum);
  } else {
    Steps64<false, true>(a, b, cb, n, o, p.act_min, p.act_max, y, sum);
  }
}

EMBER_VNNI_TARGET void MulI8Avx512(const int8_t* a, const int8_t* b, size_t n, const MulI8Params& p,
                                   int8_t* y, CyclicB cb) {
  const __m512i za = _mm512_set1_epi32(p.in_zp), zb = _mm512_set1_epi32(p.in2_zp);
  const OutputStage o = MakeOutputStage(p.multiplier, p.shift, p.out_zp);
  const MulLanes prod{za, zb};
  if (o.high) {
    Steps64<true, true>(a, b, cb, n, o, p.act_min, p.act_max, y, prod);
  } else {
    Steps64<false, false>(a, b, cb, n, o, p.act_min, p.act_max, y, prod);
  }
}

EMBER_VNNI_TARGET void AddI8InputStageForTesting(const int8_t* x, size_t n, int32_t zp, int32_t m,
                                                 int shift, int32_t* out) {
  const InputStage k = MakeInputStage(zp, m, shift);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 mask = Lanes(n - i);
    _mm512_mask_storeu_epi32(
        out + i, mask, ApplyInputStage(k, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, x + i))));
  }
}

// AVX2: InputStage's arithmetic in eight lanes, the sum through requant_avx2.h.
struct InputStage8 {
  __m256i zp, mh, ml, round;
  __m128i e;
  bool sign;
};

__attribute__((target("avx2"))) inline InputStage8 MakeInputStage8(int32_t zp, int32_t m,
                                                                   int shift) {
  const InputStageScalars c = InputStageConstants(m, shift);
  InputStage8 k;
  k.zp = _mm256_set1_epi32(zp);
  k.mh = _mm256_set1_epi32(c.mh);
  k.ml = _mm256_set1_epi32(c.ml);
  k.round = _mm256_set1_epi32(c.round);
  k.e = _mm_cvtsi32_si128(c.e);
  k.sign = c.e >= 1;
  return k;
}

__attribute__((target("avx2"))) inline __m256i ApplyInputStage8(const InputStage8& k,
                                                                const int8_t* x) {
  const __m256i d = _mm256_sub_epi32(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x))), k.zp);
  const __m256i high = _mm256_mullo_epi32(d, k.mh);
  const __m256i low = _mm256_srai_epi32(
      _mm256_add_epi32(_mm256_mullo_epi32(d, k.ml), _mm256_set1_epi32(1 << 10)), 11);
  __m256i h = _mm256_add_epi32(_mm256_add_epi32(high, low), k.round);
  if (k.sign) h = _mm256_add_epi32(h, _mm256_srai_epi32(high, 31));
  return _mm256_sra_epi32(h, k.e);
}

template <bool kDouble>
__attribute__((target("avx2"))) size_t AddI8Avx2Loop(const int8_t* a, const int8_t* b, size_t n,
                                                     const AddI8Params& p, const avx2::Rounding& ko,
                                                     int8_t* y) {
  const InputStage8 k1 = MakeInputStage8(p.in_zp, p.m1, p.s1);
  const InputStage8 k2 = MakeInputStage8(p.in2_zp, p.m2, p.s2);
  const __m256i zpo = _mm256_set1_epi32(p.out_zp);
  const __m256i lo = _mm256_set1_epi32(p.act_min), hi = _mm256_set1_epi32(p.act_max);
  // Byte 0 of each 32-bit lane to the front of its 128-bit half, then the halves' first words
  // together.
  const __m256i bytes =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i words = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i sum = _mm256_add_epi32(ApplyInputStage8(k1, a + i), ApplyInputStage8(k2, b + i));
    __m256i v = avx2::ApplyRounding<false, kDouble>(ko, sum);
    v = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v, zpo), lo), hi);
    v = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, bytes), words);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm256_castsi256_si128(v));
  }
  return i;
}

__attribute__((target("avx2"))) size_t AddI8Avx2(const int8_t* a, const int8_t* b, size_t n,
                                                 const AddI8Params& p, int8_t* y) {
  avx2::Rounding ko{};
  if (!avx2::MakeRounding(_mm256_set1_epi32(p.multiplier), _mm256_set1_epi32(p.shift), &ko) ||
      ko.any_left) {
    return 0;
  }
  return ko.any_double ? AddI8Avx2Loop<true>(a, b, n, p, ko, y)
                       : AddI8Avx2Loop<false>(a, b, n, p, ko, y);
}

#else

void AddI8Avx512(const int8_t*, const int8_t*, size_t, const AddI8Params&, int8_t*, CyclicB) {}
void MulI8Avx512(const int8_t*, const int8_t*, size_t, const MulI8Params&, int8_t*, CyclicB) {}
void AddI8InputStageForTesting(const int8_t*, size_t, int32_t, int32_t, int, int32_t*) {}
size_t AddI8Avx2(const int8_t*, const int8_t*, size_t, const AddI8Params&, int8_t*) { return 0; }

#endif

}  // namespace lite
}  // namespace ember
