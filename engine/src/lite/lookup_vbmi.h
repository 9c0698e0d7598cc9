// 256-entry byte tables looked up 64 bytes at a time with AVX-512 VBMI's byte permutes: the int8
// activations' tables (kernels_int8_misc.cc) and the int8 softmax's outputs per difference from
// the row's maximum (kernels_reduce.cc). x86-64 Linux only (lite/loop_isa.h's EMBER_LOOP_X86);
// callers check cpu::HasAvx512Vbmi() once.
#ifndef EMBER_SRC_LITE_LOOKUP_VBMI_H_
#define EMBER_SRC_LITE_LOOKUP_VBMI_H_

#include <cstddef>
#include <cstdint>

#include "lite/loop_isa.h"

#ifdef EMBER_LOOP_X86
#include <immintrin.h>

// "evex512": clang 18-21 only, as lite/requant_avx512.h's EMBER_VNNI_TARGET.
#if defined(__clang__) && __clang_major__ >= 18 && __clang_major__ < 22
#define EMBER_VBMI_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi,evex512")))
#else
#define EMBER_VBMI_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#endif

namespace ember {
namespace lite {

// A table's 256 bytes in four registers: entries [0, 64), [64, 128), [128, 192), [192, 256) of
// the unsigned index.
struct ByteTable {
  __m512i q0, q1, q2, q3;
};

// The table whose entry for unsigned index u is low[u] for u < 128 and high[u - 128] above.
EMBER_VBMI_TARGET inline ByteTable LoadByteTable(const int8_t* low, const int8_t* high) {
  return {_mm512_loadu_si512(low), _mm512_loadu_si512(low + 64), _mm512_loadu_si512(high),
          _mm512_loadu_si512(high + 64)};
}

// The entries for 64 unsigned indices: vpermi2b reads 128 table bytes by each index's low 7
// bits, once from each half; the index's top bit picks the half.
EMBER_VBMI_TARGET inline __m512i LookUpBytes(const ByteTable& t, __m512i u) {
  const __m512i low = _mm512_permutex2var_epi8(t.q0, u, t.q1);
  const __m512i high = _mm512_permutex2var_epi8(t.q2, u, t.q3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(u), low, high);
}

// The first min(left, 64) bytes.
EMBER_VBMI_TARGET inline __mmask64 ByteLanes(size_t left) {
  return left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
}

// y[i] = table[x[i]] (table indexed -128..127: x's byte read unsigned is the index, x >= 0 the
// low half, x < 0 the high one) for 64 values per step; only the last step masked.
EMBER_VBMI_TARGET inline void LookUpInt8Vbmi(const int8_t* table, const int8_t* x, size_t n,
                                             int8_t* y) {
  const ByteTable t = LoadByteTable(table, table - 128);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    _mm512_storeu_si512(y + i, LookUpBytes(t, _mm512_loadu_si512(x + i)));
  }
  if (i < n) {
    const __mmask64 live = ByteLanes(n - i);
    _mm512_mask_storeu_epi8(y + i, live, LookUpBytes(t, _mm512_maskz_loadu_epi8(live, x + i)));
  }
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_LOOP_X86

namespace ember {
namespace lite {

// y[i] = table[x[i]] for i < n (table indexed -128..127): LookUpInt8Vbmi on CPUs with AVX-512
// VBMI (checked once per process, capped by EMBER_CPU_ISA), else one byte at a time.
inline void LookUpInt8(const int8_t* table, const int8_t* x, size_t n, int8_t* y) {
#ifdef EMBER_LOOP_X86
  static const bool vbmi = cpu::HasAvx512Vbmi();
  if (vbmi) {
    LookUpInt8Vbmi(table, x, n, y);
    return;
  }
#endif
  for (size_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_LOOKUP_VBMI_H_
