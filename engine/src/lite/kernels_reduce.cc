// SOFTMAX, AVERAGE_POOL_2D, MAX_POOL_2D and MEAN, float32 and int8. The int8 softmax uses
// gemmlowp-style fixed point (Q5.26 exponent input, Q12.19 accumulator) as TFLite's
// reference kernel does, so results are bit-exact.
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports false "may be used uninitialized" inside its own avx512fintrin.h (the
// _mm512_undefined_ps operand of inlined intrinsics: vec_math_avx512.h's), as in add_int8.cc.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ember/lite/quant.h"
#include "lite/kernels.h"
#include "lite/lookup_vbmi.h"
#include "lite/loop_isa.h"
#include "lite/vec_math.h"
#include "lite/vec_math_avx512.h"

namespace ember {
namespace lite {
namespace {

// ---- fixed point helpers (raw int32 values; the Q format is in each name) ----
int32_t Mul(int32_t a, int32_t b) { return SaturatingRoundingDoublingHighMul(a, b); }

int32_t ShiftLeftWrap(int32_t x, int s) {
  return static_cast<int32_t>(static_cast<uint32_t>(x) << s);
}

// exp(a) for a in [-1/4, 0), Q0.31 in and out.
int32_t ExpOnIntervalQuarter(int32_t a) {
  const int32_t constant_term = 1895147668;     // exp(-1/8)
  const int32_t constant_1_over_3 = 715827883;  // 1/3
  const int32_t x = a + (1 << 28);              // a + 1/8
  const int32_t x2 = Mul(x, x);
  const int32_t x3 = Mul(x2, x);
  const int32_t x4 = Mul(x2, x2);
  const int32_t x4_over_4 = RoundingDivideByPOT(x4, 2);
  const int32_t poly = RoundingDivideByPOT(Mul(x4_over_4 + x3, constant_1_over_3) + x2, 1);
  return constant_term + Mul(constant_term, x + poly);
}

// exp(a) for a <= 0: input Q5.26, output Q0.31.
int32_t ExpOnNegativeValues(int32_t a) {
  constexpr int kIntegerBits = 5;
  constexpr int kFractionalBits = 31 - kIntegerBits;
  const int32_t one_quarter = 1 << (kFractionalBits - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter;
  int32_t result =
      ExpOnIntervalQuarter(SatShiftLeft(a_mod_quarter_minus_one_quarter, kIntegerBits));
  const int32_t remainder = a_mod_quarter_minus_one_quarter - a;
  // exp(-2^k) in Q0.31 for k = -2 .. 4.
  static const int32_t kMultipliers[] = {1672461947, 1302514674, 790015084, 290630308,
                                         39332535,   720401,     242};
  for (int e = -2; e <= 4; ++e) {
    if (remainder & (1 << (kFractionalBits + e))) result = Mul(result, kMultipliers[e + 2]);
  }
  if (a == 0) result = std::numeric_limits<int32_t>::max();
  return result;
}

int CountLeadingZeros64(uint64_t x) {
  int n = 0;
  while (n < 64 && (x & (uint64_t{1} << 63)) == 0) {
    x <<= 1;
    ++n;
  }
  return n;
}

// The int8 softmax's sum of exponentials is Q12.19.
constexpr int kAccumulationIntegerBits = 12;

// A float softmax row's exponentials and divisions split into chunks of this many values; each
// value costs about 64 of a GEMM's multiply-adds (TaskCount's unit).
constexpr int64_t kSoftmaxChunk = 64;
constexpr int64_t kSoftmaxValueCost = 64;

// max over x[0, n) in eight independent lanes (vectorised). A NaN never wins a comparison, as
// in one serial std::max pass; only the sign of a zero maximum may differ from that pass, which
// no x - max changes.
EMBER_LOOP_BODY float RowMaxBody(const float* x, int64_t n) {
  float m[8];
  for (float& v : m) v = std::numeric_limits<float>::lowest();
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    for (int j = 0; j < 8; ++j) m[j] = x[c + j] > m[j] ? x[c + j] : m[j];
  }
  for (; c < n; ++c) m[0] = x[c] > m[0] ? x[c] : m[0];
  float mx = m[0];
  for (int j = 1; j < 8; ++j) mx = m[j] > mx ? m[j] : mx;
  return mx;
}

// y[c] = e^((x[c] - mx) * beta) for c < n, in one loop the compiler vectorizes (GCC only with
// -fno-trapping-math, which the lite library is built with: see src/lite/CMakeLists.txt). With
// beta >= 0 every exponent is at most 0 (or NaN): ExpNonPositiveF, half ExpF's work.
EMBER_LOOP_BODY void ExpRowBody(const float* x, float mx, float beta, int64_t n, float* y) {
  if (beta >= 0.0f) {
    for (int64_t c = 0; c < n; ++c) y[c] = ExpNonPositiveF((x[c] - mx) * beta);
  } else {
    for (int64_t c = 0; c < n; ++c) y[c] = ExpF((x[c] - mx) * beta);
  }
}

// sum of x[0, n) in eight interleaved partial sums added up at the end: a fixed order (every
// thread count gives the same value) that vectorizes, where one serial chain waited on each add.
EMBER_LOOP_BODY float RowSumBody(const float* x, int64_t n) {
  float s[8] = {};
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    for (int j = 0; j < 8; ++j) s[j] += x[c + j];
  }
  for (; c < n; ++c) s[0] += x[c];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

EMBER_LOOP_BODY void DivideRowBody(float* y, int64_t n, float sum) {
  for (int64_t c = 0; c < n; ++c) y[c] = y[c] / sum;
}

// Rows [r0, r1) of `depth` values each, whole: max, exponentials, sum, divisions, each
// vectorised for the wrapper's ISA (a row of a transformer's attention, 128 values, spent more
// time in the baseline build's max, sum and division loops than in its exponentials).
EMBER_LOOP_BODY void SoftmaxRowsBody(const float* x, int64_t r0, int64_t r1, int64_t depth,
                                     float beta, float* y) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* xr = x + r * depth;
    float* yr = y + r * depth;
    ExpRowBody(xr, RowMaxBody(xr, depth), beta, depth, yr);
    DivideRowBody(yr, depth, RowSumBody(yr, depth));
  }
}

EMBER_LOOP_FUNCTION(void, SoftmaxRows,
                    (const float* x, int64_t r0, int64_t r1, int64_t depth, float beta, float* y),
                    (x, r0, r1, depth, beta, y), SoftmaxRowsBody)
EMBER_LOOP_FUNCTION(float, RowMax, (const float* x, int64_t n), (x, n), RowMaxBody)
EMBER_LOOP_FUNCTION_WIDE(void, ExpRow, (const float* x, float mx, float beta, int64_t n, float* y),
                         (x, mx, beta, n, y), ExpRowBody)
EMBER_LOOP_FUNCTION(float, RowSum, (const float* x, int64_t n), (x, n), RowSumBody)
EMBER_LOOP_FUNCTION(void, DivideRow, (float* y, int64_t n, float sum), (y, n, sum), DivideRowBody)

Status EvalSoftmaxF32(NodeState* node) {
  const float* x = node->t.In<float>(0);
  float* y = node->t.Out<float>(0);
  const float beta = node->op->options.beta;
  const int64_t depth = node->depth;
#ifdef EMBER_LOOP_X86
  // vec_math_avx512.h's row passes (ExpNonPositive16 needs beta >= 0).
  const bool avx512 = ActiveLoopIsa() == LoopIsa::kAvx512 && beta >= 0.0f;
#endif
  const int64_t chunks = (depth + kSoftmaxChunk - 1) / kSoftmaxChunk;
  const int row_tasks = TaskCount(*node, chunks, kSoftmaxChunk * kSoftmaxValueCost);
  if (row_tasks <= 1) {
    // Short rows: whole rows to each task (every value as one thread computes it).
    const int tasks = TaskCount(*node, node->outer, depth * kSoftmaxValueCost);
    RunTasks(*node, tasks, [&](int task, int) {
      int64_t r0, r1;
      ChunkRange(node->outer, tasks, task, 1, &r0, &r1);
#ifdef EMBER_LOOP_X86
      if (avx512) {
        // One pass for the maximum, one for the exponentials and their sum, one scaling by
        // 1 / sum (a multiplication: within an ulp of the division).
        for (int64_t r = r0; r < r1; ++r) {
          const float* xr = x + r * depth;
          float* yr = y + r * depth;
          const float sum =
              avx512::SoftmaxRowExp<true>(xr, avx512::SoftmaxRowMax(xr, depth), beta, depth, yr);
          avx512::ScaleRow(yr, depth, 1.0f / sum);
        }
        return;
      }
#endif
      SoftmaxRows(x, r0, r1, depth, beta, y);
    });
    return Status::OK();
  }
  for (int64_t r = 0; r < node->outer; ++r) {
    const float* xr = x + r * depth;
    float* yr = y + r * depth;
    // A long row (a classifier's): the exponentials and the scaling are split; the sum is taken
    // on one thread in the one-task order, so every value is the one-thread loop's.
#ifdef EMBER_LOOP_X86
    if (avx512) {
      const float mx = avx512::SoftmaxRowMax(xr, depth);
      RunTasks(*node, row_tasks, [&](int task, int) {
        int64_t c0, c1;
        ChunkRange(depth, row_tasks, task, kSoftmaxChunk, &c0, &c1);
        avx512::SoftmaxRowExp<false>(xr + c0, mx, beta, c1 - c0, yr + c0);
      });
      const float inv = 1.0f / avx512::SoftmaxRowSum(yr, depth);
      RunTasks(*node, row_tasks, [&](int task, int) {
        int64_t c0, c1;
        ChunkRange(depth, row_tasks, task, kSoftmaxChunk, &c0, &c1);
        avx512::ScaleRow(yr + c0, c1 - c0, inv);
      });
      continue;
    }
#endif
    const float mx = RowMax(xr, depth);
    RunTasks(*node, row_tasks, [&](int task, int) {
      int64_t c0, c1;
      ChunkRange(depth, row_tasks, task, kSoftmaxChunk, &c0, &c1);
      ExpRow(xr + c0, mx, beta, c1 - c0, yr + c0);
    });
    const float sum = RowSum(yr, depth);
    RunTasks(*node, row_tasks, [&](int task, int) {
      int64_t c0, c1;
      ChunkRange(depth, row_tasks, task, kSoftmaxChunk, &c0, &c1);
      DivideRow(yr + c0, c1 - c0, sum);
    });
  }
  return Status::OK();
}

// One int8 softmax row's fixed-point scale of the outputs: 1 / (sum of exponentials) in Q0.31
// and the shift that the outputs take after multiplying by it (as the reference's steps).
struct SoftmaxI8Scale {
  int32_t scale;
  int exponent;
};

SoftmaxI8Scale SoftmaxI8RowScale(uint32_t sum_of_exps) {  // Q12.19
  const int headroom_plus_one = CountLeadingZeros(sum_of_exps);
  const int num_bits_over_unit = kAccumulationIntegerBits - headroom_plus_one;
  const int32_t shifted_sum_minus_one =
      static_cast<int32_t>((sum_of_exps << headroom_plus_one) - (static_cast<uint32_t>(1) << 31));
  return {OneOverOnePlusX(shifted_sum_minus_one), num_bits_over_unit + 31 - 8};
}

// The output for the difference d = max - x.
int8_t SoftmaxOutputI8(const int32_t* exps, SoftmaxI8Scale k, int diff_min, int32_t d) {
  if (-d < diff_min) return -128;
  const int32_t unsat = RoundingDivideByPOT(Mul(k.scale, exps[d]), k.exponent);
  return static_cast<int8_t>(std::max(-128, std::min(127, unsat - 128)));
}

#ifdef EMBER_LOOP_X86
// The outputs for the differences d = max - x in [0, range) into table[d], 16 at a time:
// SoftmaxOutputI8's values. With scale > 0 (the caller checks) and every exps[d] >= 0
// (PrepareSoftmax checks: softmax_vbmi), Mul's product p is >= 0, so Mul is
// h = floor((p + 2^30) / 2^31) < 2^31 (p in 64-bit lanes, even and odd apart), and the division
// by 2^E (E capped at 31, as RoundingDivideByPOT caps it) floor((h + 2^(E-1)) / 2^E), unsigned
// in 32-bit lanes (h + 2^(E-1) < 2^32).
EMBER_VBMI_TARGET void SoftmaxOutputsI8(const int32_t* exps, SoftmaxI8Scale k, int diff_min,
                                        int32_t range, int8_t* table) {
  const int e = std::min(k.exponent, 31);
  const __m512i scale = _mm512_set1_epi64(k.scale);
  const __m512i nudge = _mm512_set1_epi64(int64_t{1} << 30);
  const __m512i round = _mm512_set1_epi32(static_cast<int32_t>(uint32_t{1} << (e - 1)));
  const __m128i shift = _mm_cvtsi32_si128(e);
  const __m512i lo = _mm512_set1_epi32(-128), hi = _mm512_set1_epi32(127);
  const __m512i offset = _mm512_set1_epi32(128), limit = _mm512_set1_epi32(-diff_min);
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // Bytes 0, 4, ..., 60 (each lane's low byte) as a vpermb index for output bytes 0-15.
  const __m512i low_bytes =
      _mm512_castsi128_si512(_mm512_cvtepi32_epi8(_mm512_slli_epi32(lanes, 2)));
  for (int32_t d = 0; d < range; d += 16) {  // exps has 512 entries: d + 15 stays inside
    const __m512i ex = _mm512_loadu_si512(exps + d);
    const __m512i even =
        _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epu32(ex, scale), nudge), 31);
    const __m512i odd = _mm512_srli_epi64(
        _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(ex, 32), scale), nudge), 31);
    const __m512i h = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
    __m512i v = _mm512_sub_epi32(_mm512_srl_epi32(_mm512_add_epi32(h, round), shift), offset);
    v = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
    const __m512i dd = _mm512_add_epi32(_mm512_set1_epi32(d), lanes);
    v = _mm512_mask_mov_epi32(v, _mm512_cmpgt_epi32_mask(dd, limit), lo);
    // Each lane's low byte to the first 16 (vpermb: vpmovdb's store form is microcoded on Zen 4).
    _mm_storeu_si128(reinterpret_cast<__m128i*>(table + d),
                     _mm512_castsi512_si128(_mm512_permutexvar_epi8(low_bytes, v)));
  }
}

// The largest and smallest of 64 bytes: halves folded onto each other down to one byte.
EMBER_VBMI_TARGET inline void FoldMaxMinI8(__m512i vmax, __m512i vmin, int32_t* mx, int32_t* mn) {
  vmax = _mm512_max_epi8(vmax, _mm512_shuffle_i64x2(vmax, vmax, 0x4E));
  vmin = _mm512_min_epi8(vmin, _mm512_shuffle_i64x2(vmin, vmin, 0x4E));
  vmax = _mm512_max_epi8(vmax, _mm512_shuffle_i64x2(vmax, vmax, 0xB1));
  vmin = _mm512_min_epi8(vmin, _mm512_shuffle_i64x2(vmin, vmin, 0xB1));
  __m128i a = _mm512_castsi512_si128(vmax), b = _mm512_castsi512_si128(vmin);
  a = _mm_max_epi8(a, _mm_srli_si128(a, 8));
  b = _mm_min_epi8(b, _mm_srli_si128(b, 8));
  a = _mm_max_epi8(a, _mm_srli_si128(a, 4));
  b = _mm_min_epi8(b, _mm_srli_si128(b, 4));
  a = _mm_max_epi8(a, _mm_srli_si128(a, 2));
  b = _mm_min_epi8(b, _mm_srli_si128(b, 2));
  a = _mm_max_epi8(a, _mm_srli_si128(a, 1));
  b = _mm_min_epi8(b, _mm_srli_si128(b, 1));
  *mx = static_cast<int8_t>(_mm_cvtsi128_si32(a) & 0xFF);
  *mn = static_cast<int8_t>(_mm_cvtsi128_si32(b) & 0xFF);
}

// An int8 softmax row on AVX-512 VBMI: the maximum and minimum 64 values at a time, the sum of
// the exponentials' summands (terms), the outputs of the differences that occur
// (SoftmaxOutputsI8), then each value's output by its difference (lookup_vbmi.h). table: 256
// bytes, entries at and above the row's range left as they were.
EMBER_VBMI_TARGET void SoftmaxRowI8Vbmi(const NodeState& node, const int8_t* x, int8_t* y,
                                        int8_t* table) {
  const int64_t depth = node.depth;
  const int32_t* exps = node.scratch32.data();
  const int32_t* terms = exps + 256;
  __m512i vmax = _mm512_set1_epi8(-128), vmin = _mm512_set1_epi8(127);
  int64_t c = 0;
  for (; c + 64 <= depth; c += 64) {
    const __m512i v = _mm512_loadu_si512(x + c);
    vmax = _mm512_max_epi8(vmax, v);
    vmin = _mm512_min_epi8(vmin, v);
  }
  if (c < depth) {
    const __mmask64 live = ByteLanes(static_cast<size_t>(depth - c));
    const __m512i v = _mm512_maskz_loadu_epi8(live, x + c);
    vmax = _mm512_mask_max_epi8(vmax, live, vmax, v);
    vmin = _mm512_mask_min_epi8(vmin, live, vmin, v);
  }
  int32_t mx, mn;
  FoldMaxMinI8(vmax, vmin, &mx, &mn);
  // The summands by gathers of 16 (wrapping adds, as the reference's int32 sum).
  const __m512i vmx32 = _mm512_set1_epi32(mx);
  __m512i acc = _mm512_setzero_si512();
  for (c = 0; c + 16 <= depth; c += 16) {
    const __m512i d = _mm512_sub_epi32(
        vmx32, _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + c))));
    acc = _mm512_add_epi32(acc, _mm512_i32gather_epi32(d, terms, 4));
  }
  uint32_t sum_of_exps = static_cast<uint32_t>(_mm512_reduce_add_epi32(acc));  // Q12.19
  for (; c < depth; ++c) sum_of_exps += static_cast<uint32_t>(terms[mx - x[c]]);
  const SoftmaxI8Scale k = SoftmaxI8RowScale(sum_of_exps);
  const int32_t range = mx - mn + 1;
  if (k.scale > 0) {
    SoftmaxOutputsI8(exps, k, node.diff_min, range, table);
  } else {  // a sum past int32 (as the reference's, it wraps): the scalar steps
    for (int32_t d = 0; d < range; ++d) table[d] = SoftmaxOutputI8(exps, k, node.diff_min, d);
  }
  const ByteTable t = LoadByteTable(table, table + 128);
  const __m512i vmx = _mm512_set1_epi8(static_cast<char>(mx));
  for (c = 0; c + 64 <= depth; c += 64) {
    _mm512_storeu_si512(y + c, LookUpBytes(t, _mm512_sub_epi8(vmx, _mm512_loadu_si512(x + c))));
  }
  if (c < depth) {
    const __mmask64 live = ByteLanes(static_cast<size_t>(depth - c));
    const __m512i u = _mm512_sub_epi8(vmx, _mm512_maskz_loadu_epi8(live, x + c));
    _mm512_mask_storeu_epi8(y + c, live, LookUpBytes(t, u));
  }
}
#endif

Status EvalSoftmaxI8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  int8_t* y = node->t.Out<int8_t>(0);
  const int64_t depth = node->depth;
#ifdef EMBER_LOOP_X86
  if (node->softmax_vbmi) {
    // Rows split over the threads (each row whole on one: the same bytes at any thread count).
    const int tasks = TaskCount(*node, node->outer, depth * 16);
    RunTasks(*node, tasks, [&](int task, int) {
      int64_t r0, r1;
      ChunkRange(node->outer, tasks, task, 1, &r0, &r1);
      alignas(64) int8_t table[256] = {};
      for (int64_t r = r0; r < r1; ++r) {
        SoftmaxRowI8Vbmi(*node, x + r * depth, y + r * depth, table);
      }
    });
    return Status::OK();
  }
#endif
  const int32_t* exps = node->scratch32.data();
  const int32_t* terms = exps + 256;  // each difference's summand (0 below diff_min)
  for (int64_t r = 0; r < node->outer; ++r) {
    const int8_t* xr = x + r * depth;
    int8_t* yr = y + r * depth;
    int32_t mx = -128, mn = 127;
    for (int64_t c = 0; c < depth; ++c) {
      mx = std::max<int32_t>(mx, xr[c]);
      mn = std::min<int32_t>(mn, xr[c]);
    }
    uint32_t sum_of_exps = 0;  // Q12.19, wrapping past 2^31 as the reference's int32 sum does
    for (int64_t c = 0; c < depth; ++c) sum_of_exps += static_cast<uint32_t>(terms[mx - xr[c]]);
    const SoftmaxI8Scale k = SoftmaxI8RowScale(sum_of_exps);
    auto out = [&](int32_t d) { return SoftmaxOutputI8(exps, k, node->diff_min, d); };
    const int32_t range = mx - mn + 1;  // differences that occur: [0, range)
    if (range < depth) {
      // Fewer distinct differences than values (a classifier's 1000 logits): one output each.
      int8_t table[256];
      for (int32_t d = 0; d < range; ++d) table[d] = out(d);
      for (int64_t c = 0; c < depth; ++c) yr[c] = table[mx - xr[c]];
    } else {
      for (int64_t c = 0; c < depth; ++c) yr[c] = out(mx - xr[c]);
    }
  }
  return Status::OK();
}

}  // namespace

Status PrepareSoftmax(NodeState* node) {
  if (node->op->inputs.size() != 1 || node->op->outputs.size() != 1 || node->t.in[0] == nullptr) {
    return errors::InvalidArgument(node->what + ": expects one input and one output");
  }
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, in.shape, "output"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  if (in.shape.empty()) return errors::InvalidArgument(node->what + ": input must have rank >= 1");
  node->depth = in.shape.back();
  node->outer = node->depth == 0 ? 0 : static_cast<int64_t>(in.num_elements) / node->depth;
  if (in.type == TensorType::kFloat32) {
    node->eval = EvalSoftmaxF32;
    return Status::OK();
  }
  if (in.type != TensorType::kInt8) {
    return errors::Unimplemented(node->what + ": type " + TensorTypeName(in.type) +
                                 " is not supported");
  }
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, in, "input"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, out, "output"));
  if (out.quant.zero_point[0] != -128 || std::abs(out.quant.scale[0] - 1.0f / 256) > 0.001f / 256) {
    return errors::InvalidArgument(node->what + ": int8 softmax output '" + out.name +
                                   "' must have scale 1/256 and zero point -128");
  }
  constexpr int kScaledDiffIntegerBits = 5;
  const double real = std::min<double>(static_cast<double>(node->op->options.beta) *
                                           static_cast<double>(in.quant.scale[0]) *
                                           static_cast<double>(1 << (31 - kScaledDiffIntegerBits)),
                                       static_cast<double>((1LL << 31) - 1));
  if (!(real > 0.0) || !std::isfinite(real)) {
    return errors::InvalidArgument(node->what + ": beta * input scale must be positive and finite");
  }
  QuantizeMultiplier(real, &node->multiplier, &node->left_shift);
  if (node->left_shift < 0 || node->left_shift > 31) {
    return errors::InvalidArgument(node->what + ": beta * input scale is out of range");
  }
  const double max_input_rescaled = 1.0 * ((1 << kScaledDiffIntegerBits) - 1) *
                                    static_cast<double>(1LL << (31 - kScaledDiffIntegerBits)) /
                                    static_cast<double>(1LL << node->left_shift);
  node->diff_min = static_cast<int>(-1.0 * std::floor(max_input_rescaled));
  // x - max(x) of int8 values is one of 256 differences: their exponentials, computed here with
  // the reference's fixed-point steps, are looked up at Invoke (scratch32[-diff]).
  // scratch32[256 + d]: that exponential's summand in the Q12.19 sum of exponentials, 0 for a
  // difference below diff_min (which the reference leaves out).
  node->scratch32.resize(512);
  for (int32_t d = 0; d < 256; ++d) {
    const int32_t rescaled = Mul(ShiftLeftWrap(-d, node->left_shift), node->multiplier);
    const int32_t e = ExpOnNegativeValues(rescaled);
    node->scratch32[static_cast<size_t>(d)] = e;
    node->scratch32[static_cast<size_t>(256 + d)] =
        -d >= node->diff_min ? RoundingDivideByPOT(e, kAccumulationIntegerBits) : 0;
  }
  node->eval = EvalSoftmaxI8;
#ifdef EMBER_LOOP_X86
  // SoftmaxOutputsI8's assumption: every exponential >= 0 (and every row's scale > 0, which
  // OneOverOnePlusX gives for any sum).
  node->softmax_vbmi =
      cpu::HasAvx512Vbmi() && std::all_of(node->scratch32.begin(), node->scratch32.begin() + 256,
                                          [](int32_t e) { return e >= 0; });
#endif
  return Status::OK();
}

namespace {

// Channels [c0, c0 + n) of one pool output at `out`, its window the taps (fy0..fy1) x
// (fx0..fx1) from `p0` (tap fy, fx at p0 + (fy * iw + fx) * c): the max, or the sum over the taps
// in (fy, fx) order, then the float average sum / count, or the int8 one rounded half away from
// zero, as the reference computes each. kN > 0: n is kN, a constant, so that the accumulators
// stay in vector registers across the taps.
template <typename T, bool kMax, int kN>
EMBER_LOOP_BODY void PoolChunk(const NodeState& node, const T* p0, int fy0, int fy1, int fx0,
                               int fx1, int count, int n, T* out) {
  using Acc = std::conditional_t<sizeof(T) == 1, std::conditional_t<kMax, int8_t, int32_t>, float>;
  constexpr int kCap = kN > 0 ? kN : 64;
  if (kN > 0) n = kN;
  // int8 maxima: the activation range lies within int8; clamped as bytes, not widened.
  const int8_t lo8 = static_cast<int8_t>(std::max(node.act_min, -128));
  const int8_t hi8 = static_cast<int8_t>(std::min(node.act_max, 127));
  const size_t c_all = static_cast<size_t>(node.ic);
  Acc acc[kCap];
  for (int c = 0; c < n; ++c) {
    if constexpr (!kMax) {
      acc[c] = Acc(0);
    } else if constexpr (sizeof(T) == 1) {
      acc[c] = lo8;  // the clamp from below, folded in
    } else {
      acc[c] = std::numeric_limits<float>::lowest();
    }
  }
  for (int fy = fy0; fy < fy1; ++fy) {
    for (int fx = fx0; fx < fx1; ++fx) {
      const T* p = p0 + (static_cast<size_t>(fy) * node.iw + fx) * c_all;
      for (int c = 0; c < n; ++c) {
        if constexpr (kMax) {
          acc[c] = std::max(acc[c], static_cast<Acc>(p[c]));
        } else {
          acc[c] += static_cast<Acc>(p[c]);
        }
      }
    }
  }
  if constexpr (sizeof(T) == 1) {
    const int32_t lo = node.act_min, hi = node.act_max;
    if constexpr (kMax) {
      for (int c = 0; c < n; ++c) out[c] = acc[c] < hi8 ? acc[c] : hi8;
    } else {
      // (acc +- count / 2) / count, truncated: a double's quotient truncates to the same
      // integer (|acc| < 2^31 and count < 2^22 keep its error under the 1 / count gap to the next
      // integer), and it vectorizes where an integer division does not.
      const int32_t half = count / 2;
      const double div = count > 0 ? static_cast<double>(count) : 1.0;
      for (int c = 0; c < n; ++c) {
        const int32_t v = acc[c];
        const int32_t num = count > 0 ? (v > 0 ? v + half : v - half) : v;
        const int32_t q = static_cast<int32_t>(static_cast<double>(num) / div);
        out[c] = static_cast<T>(std::max(lo, std::min(hi, q)));
      }
    }
  } else {
    const float lo = node.f_min, hi = node.f_max;
    const float fc = static_cast<float>(count);
    for (int c = 0; c < n; ++c) {
      float v = acc[c];
      if (!kMax && count > 0) v = v / fc;
      out[c] = std::max(lo, std::min(hi, v));
    }
  }
}

// One output row (image b, row oy) of a pool, channels innermost (PoolChunk): chunks of a
// constant width, then the rest.
template <typename T, bool kMax>
EMBER_LOOP_BODY void PoolRowBody(const NodeState& node, const T* x, int b, int oy, T* y) {
  const OpOptions& o = node.op->options;
  // 64 int8 maxima, 32 int8 sums or floats: two to four 256-bit registers.
  constexpr int kN = sizeof(T) == 1 && kMax ? 64 : 32;
  const size_t c_all = static_cast<size_t>(node.ic);
  const int y0 = oy * o.stride_h - node.pad_h;
  const int fy0 = std::max(0, -y0), fy1 = std::min(node.kh, node.ih - y0);
  const T* image = x + static_cast<size_t>(b) * node.ih * node.iw * c_all;
  T* out_row = y + (static_cast<size_t>(b) * node.oh + oy) * node.ow * c_all;
  for (int ox = 0; ox < node.ow; ++ox) {
    const int x0 = ox * o.stride_w - node.pad_w;
    const int fx0 = std::max(0, -x0), fx1 = std::min(node.kw, node.iw - x0);
    const int count = std::max(0, fy1 - fy0) * std::max(0, fx1 - fx0);
    // The window's top-left tap (which may lie outside the image: only taps inside are read).
    const T* p0 =
        image + (static_cast<ptrdiff_t>(y0) * node.iw + x0) * static_cast<ptrdiff_t>(c_all);
    T* out = out_row + static_cast<size_t>(ox) * c_all;
    size_t c0 = 0;
    for (; c0 + kN <= c_all; c0 += kN) {
      PoolChunk<T, kMax, kN>(node, p0 + c0, fy0, fy1, fx0, fx1, count, kN, out + c0);
    }
    for (; c0 < c_all; c0 += 64) {
      const int n = static_cast<int>(std::min<size_t>(64, c_all - c0));
      PoolChunk<T, kMax, 0>(node, p0 + c0, fy0, fy1, fx0, fx1, count, n, out + c0);
    }
  }
}

// One output row of an int8 max pool in two passes: the window's input rows folded into `vrow`
// (their maximum at each input column and channel: long contiguous vector loops), then each output
// pixel the maximum of its window's columns of vrow (PoolChunk over one row). The maximum of the
// same values, NaN never taken (vrow starts at PoolChunk's initial value and folds with
// std::max(acc, value) as PoolChunk does): the same outputs. A 3x3 window read each input value
// three times over at 9 taps per pixel, each tap a separate strided loop (56x56x64, 3x3 / 2:
// 13.2 -> 9.1 us). Not for floats: the folded row (4 bytes a value) costs more than it saves
// there (20.6 -> 27.8 us).
template <typename T>
EMBER_LOOP_BODY void MaxPoolRowSeparable(const NodeState& node, const T* x, int b, int oy, T* y,
                                         T* vrow) {
  const OpOptions& o = node.op->options;
  constexpr int kN = sizeof(T) == 1 ? 64 : 32;
  const size_t c_all = static_cast<size_t>(node.ic);
  const size_t row_len = static_cast<size_t>(node.iw) * c_all;
  const int y0 = oy * o.stride_h - node.pad_h;
  const int fy0 = std::max(0, -y0), fy1 = std::min(node.kh, node.ih - y0);
  const T* image = x + static_cast<size_t>(b) * node.ih * row_len;
  T init;
  if constexpr (sizeof(T) == 1) {
    init = static_cast<T>(std::max(node.act_min, -128));
  } else {
    init = std::numeric_limits<float>::lowest();
  }
  // Two input rows a pass (the first from `init`), each a loop over restrict pointers.
  T* __restrict v = vrow;
  if (fy0 >= fy1) {  // no row in the image: the initial value
    for (size_t i = 0; i < row_len; ++i) v[i] = init;
  }
  for (int fy = fy0; fy < fy1; fy += 2) {
    const T* __restrict r0 = image + static_cast<size_t>(y0 + fy) * row_len;
    const T* __restrict r1 = image + static_cast<size_t>(y0 + std::min(fy + 1, fy1 - 1)) * row_len;
    if (fy == fy0) {
      for (size_t i = 0; i < row_len; ++i) v[i] = std::max(std::max(init, r0[i]), r1[i]);
    } else {
      for (size_t i = 0; i < row_len; ++i) v[i] = std::max(std::max(v[i], r0[i]), r1[i]);
    }
  }
  T* out_row = y + (static_cast<size_t>(b) * node.oh + oy) * node.ow * c_all;
  for (int ox = 0; ox < node.ow; ++ox) {
    const int x0 = ox * o.stride_w - node.pad_w;
    const int fx0 = std::max(0, -x0), fx1 = std::min(node.kw, node.iw - x0);
    const T* p0 = vrow + static_cast<ptrdiff_t>(x0) * static_cast<ptrdiff_t>(c_all);
    T* out = out_row + static_cast<size_t>(ox) * c_all;
    size_t c0 = 0;
    for (; c0 + kN <= c_all; c0 += kN) {
      PoolChunk<T, true, kN>(node, p0 + c0, 0, 1, fx0, fx1, 0, kN, out + c0);
    }
    for (; c0 < c_all; c0 += 64) {
      const int n = static_cast<int>(std::min<size_t>(64, c_all - c0));
      PoolChunk<T, true, 0>(node, p0 + c0, 0, 1, fx0, fx1, 0, n, out + c0);
    }
  }
}

EMBER_LOOP_BODY void PoolRowMaxF32Body(const NodeState& node, const float* x, int b, int oy,
                                       float* y) {
  PoolRowBody<float, true>(node, x, b, oy, y);
}
EMBER_LOOP_BODY void PoolRowAvgF32Body(const NodeState& node, const float* x, int b, int oy,
                                       float* y) {
  PoolRowBody<float, false>(node, x, b, oy, y);
}
EMBER_LOOP_BODY void PoolRowMaxI8Body(const NodeState& node, const int8_t* x, int b, int oy,
                                      int8_t* y, int8_t* vrow) {
  MaxPoolRowSeparable<int8_t>(node, x, b, oy, y, vrow);
}
EMBER_LOOP_BODY void PoolRowAvgI8Body(const NodeState& node, const int8_t* x, int b, int oy,
                                      int8_t* y) {
  PoolRowBody<int8_t, false>(node, x, b, oy, y);
}
EMBER_LOOP_FUNCTION(void, PoolRowMaxF32,
                    (const NodeState& node, const float* x, int b, int oy, float* y),
                    (node, x, b, oy, y), PoolRowMaxF32Body)
EMBER_LOOP_FUNCTION(void, PoolRowAvgF32,
                    (const NodeState& node, const float* x, int b, int oy, float* y),
                    (node, x, b, oy, y), PoolRowAvgF32Body)
EMBER_LOOP_FUNCTION(void, PoolRowMaxI8,
                    (const NodeState& node, const int8_t* x, int b, int oy, int8_t* y,
                     int8_t* vrow),
                    (node, x, b, oy, y, vrow), PoolRowMaxI8Body)
EMBER_LOOP_FUNCTION(void, PoolRowAvgI8,
                    (const NodeState& node, const int8_t* x, int b, int oy, int8_t* y),
                    (node, x, b, oy, y), PoolRowAvgI8Body)

Status EvalPool(NodeState* node) {
  const bool mx = node->op->op == BuiltinOp::kMaxPool2D;
  const bool f32 = node->t.in[0]->type == TensorType::kFloat32;
  const int rows = node->n * node->oh;
  const int64_t taps = static_cast<int64_t>(node->kh) * node->kw;
  const int tasks = TaskCount(*node, rows, static_cast<int64_t>(node->ow) * node->ic * taps);
  const void* x = f32 ? static_cast<const void*>(node->t.In<float>(0))
                      : static_cast<const void*>(node->t.In<int8_t>(0));
  void* y =
      f32 ? static_cast<void*>(node->t.Out<float>(0)) : static_cast<void*>(node->t.Out<int8_t>(0));
  RunTasks(*node, tasks, [&](int task, int thread) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 1, &r0, &r1);
    const size_t slice = static_cast<size_t>(thread) * node->scratch_slice;
    for (int64_t r = r0; r < r1; ++r) {
      const int b = static_cast<int>(r / node->oh), oy = static_cast<int>(r % node->oh);
      if (f32) {
        const float* xf = static_cast<const float*>(x);
        float* yf = static_cast<float*>(y);
        mx ? PoolRowMaxF32(*node, xf, b, oy, yf) : PoolRowAvgF32(*node, xf, b, oy, yf);
      } else {
        const int8_t* xi = static_cast<const int8_t*>(x);
        int8_t* yi = static_cast<int8_t*>(y);
        if (mx) {
          PoolRowMaxI8(*node, xi, b, oy, yi, node->scratch8.data() + slice);
        } else {
          PoolRowAvgI8(*node, xi, b, oy, yi);
        }
      }
    }
  });
  return Status::OK();
}

}  // namespace

Status PreparePool(NodeState* node) {
  if (node->op->inputs.size() != 1 || node->op->outputs.size() != 1 || node->t.in[0] == nullptr) {
    return errors::InvalidArgument(node->what + ": expects one input and one output");
  }
  const OpOptions& o = node->op->options;
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  if (in.shape.size() != 4) {
    return errors::InvalidArgument(node->what + ": input must be NHWC, got " +
                                   ShapeString(in.shape));
  }
  if (o.stride_w < 1 || o.stride_h < 1 || o.filter_w < 1 || o.filter_h < 1) {
    return errors::InvalidArgument(node->what + ": strides and filter sizes must be >= 1");
  }
  node->n = in.shape[0];
  node->ih = in.shape[1];
  node->iw = in.shape[2];
  node->ic = in.shape[3];
  node->kh = o.filter_h;
  node->kw = o.filter_w;
  node->oh = ComputeOutSize(o.padding, node->ih, o.filter_h, o.stride_h, 1);
  node->ow = ComputeOutSize(o.padding, node->iw, o.filter_w, o.stride_w, 1);
  if (node->oh < 0 || node->ow < 0) {
    return errors::InvalidArgument(node->what + ": the filter is larger than the input");
  }
  node->pad_h = ComputePadding(o.stride_h, 1, node->ih, o.filter_h, node->oh);
  node->pad_w = ComputePadding(o.stride_w, 1, node->iw, o.filter_w, node->ow);
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, {node->n, node->oh, node->ow, node->ic}, "output"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  if (in.type == TensorType::kFloat32) {
    FloatActivationRange(o.activation, &node->f_min, &node->f_max);
  } else if (in.type == TensorType::kInt8) {
    EMBER_RETURN_IF_ERROR(NeedQuant(*node, in, "input"));
    EMBER_RETURN_IF_ERROR(NeedQuant(*node, out, "output"));
    if (in.quant.scale[0] != out.quant.scale[0] ||
        in.quant.zero_point[0] != out.quant.zero_point[0]) {
      return errors::InvalidArgument(node->what +
                                     ": int8 pooling needs equal input and output quantization");
    }
    ActivationRangeInt8(static_cast<int>(o.activation), out.quant.scale[0],
                        static_cast<int32_t>(out.quant.zero_point[0]), &node->act_min,
                        &node->act_max);
  } else {
    return errors::Unimplemented(node->what + ": type " + TensorTypeName(in.type) +
                                 " is not supported");
  }
  if (node->op->op == BuiltinOp::kMaxPool2D && in.type == TensorType::kInt8) {
    // MaxPoolRowSeparable's row of window maxima, one per thread.
    node->scratch_slice = static_cast<size_t>(node->iw) * static_cast<size_t>(node->ic);
    node->scratch8.assign(node->scratch_slice * static_cast<size_t>(std::max(1, node->threads)), 0);
  }
  node->eval = EvalPool;
  return Status::OK();
}

namespace {

// Sums `x` over the reduced axes into one accumulator per output element.
template <typename T, typename Acc>
void ReduceSum(const NodeState& node, const T* x, std::vector<Acc>* acc) {
  const auto& shape = node.t.in[0]->shape;
  const size_t rank = shape.size();
  std::vector<bool> reduced(rank, false);
  for (int a : node.axes) reduced[static_cast<size_t>(a)] = true;
  std::vector<int64_t> out_stride(rank, 0);
  int64_t s = 1;
  for (size_t d = rank; d-- > 0;) {
    if (!reduced[d]) {
      out_stride[d] = s;
      s *= shape[d];
    }
  }
  acc->assign(static_cast<size_t>(s), Acc(0));
  std::vector<int64_t> idx(rank, 0);
  int64_t oi = 0;
  const size_t n = node.t.in[0]->num_elements;
  // The last axis kept (a global average pool's channels): whole rows of it are contiguous in x
  // and in acc, and each output still adds its elements in the same order.
  const size_t run = rank > 0 && !reduced[rank - 1] ? static_cast<size_t>(shape[rank - 1]) : 1;
  const size_t walked = run > 1 ? rank - 1 : rank;  // axes the index walk below steps through
  for (size_t i = 0; i < n; i += run) {
    Acc* a = acc->data() + oi;
    for (size_t j = 0; j < run; ++j) a[j] += static_cast<Acc>(x[i + j]);
    for (size_t d = walked; d-- > 0;) {
      ++idx[d];
      oi += out_stride[d];
      if (idx[d] < shape[d]) break;
      oi -= out_stride[d] * idx[d];
      idx[d] = 0;
    }
  }
}

// Whether the node's reduced axes are the input's last ones (each output's values contiguous).
bool ReducesTail(const NodeState& node) {
  const size_t rank = node.t.in[0]->shape.size();
  std::vector<bool> reduced(rank, false);
  for (int a : node.axes) reduced[static_cast<size_t>(a)] = true;
  size_t d = rank;
  while (d > 0 && reduced[d - 1]) --d;
  for (size_t e = 0; e < d; ++e) {
    if (reduced[e]) return false;
  }
  return true;
}

// acc[r] = the sum of x[r * count, (r + 1) * count) in order (ReduceSum's order for a tail
// reduction), for rows [r0, r1): four rows' chains of adds interleaved (one chain waited on
// each add's latency).
template <typename T, typename Acc>
void SumTailRows(const T* x, int64_t r0, int64_t r1, int64_t count, Acc* acc) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) {
    const T* x0 = x + r * count;
    const T* x1 = x0 + count;
    const T* x2 = x1 + count;
    const T* x3 = x2 + count;
    Acc s0 = Acc(0), s1 = Acc(0), s2 = Acc(0), s3 = Acc(0);
    for (int64_t i = 0; i < count; ++i) {
      s0 += static_cast<Acc>(x0[i]);
      s1 += static_cast<Acc>(x1[i]);
      s2 += static_cast<Acc>(x2[i]);
      s3 += static_cast<Acc>(x3[i]);
    }
    acc[r] = s0;
    acc[r + 1] = s1;
    acc[r + 2] = s2;
    acc[r + 3] = s3;
  }
  for (; r < r1; ++r) {
    Acc s = Acc(0);
    for (int64_t i = 0; i < count; ++i) s += static_cast<Acc>(x[r * count + i]);
    acc[r] = s;
  }
}

#ifdef EMBER_LOOP_X86
// The 8 x 8 floats of rows[0..7] (8 consecutive values each) transposed: out[j] holds value j of
// each row, row r in lane r.
__attribute__((target("avx2"))) inline void Transpose8x8(const __m256 in[8], __m256 out[8]) {
  __m256 t[8], u[8];
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = _mm256_unpacklo_ps(in[2 * k], in[2 * k + 1]);
    t[2 * k + 1] = _mm256_unpackhi_ps(in[2 * k], in[2 * k + 1]);
  }
  for (int k = 0; k < 2; ++k) {
    const int b = 4 * k;
    u[b] = _mm256_shuffle_ps(t[b], t[b + 2], 0x44);
    u[b + 1] = _mm256_shuffle_ps(t[b], t[b + 2], 0xEE);
    u[b + 2] = _mm256_shuffle_ps(t[b + 1], t[b + 3], 0x44);
    u[b + 3] = _mm256_shuffle_ps(t[b + 1], t[b + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    out[j] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x20);
    out[j + 4] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x31);
  }
}

// SumTailRows for 16 float rows from x (`count` apart) into acc[0..15], each row's sum in order:
// eight values of each row at a time, transposed so that one vector add takes the next value of
// eight rows (two groups of eight: two chains). The same sums as SumTailRows, several times as
// fast: its four scalar chains waited on each add's latency (LayerNormalization's MEAN over rows
// of 768 took 0.75 cycles a value).
__attribute__((target("avx2"))) void SumTailRows16F32(const float* x, int64_t count, float* acc) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m256 in[8], col[8];
    for (int r = 0; r < 8; ++r) in[r] = _mm256_loadu_ps(x + r * count + i);
    Transpose8x8(in, col);
    for (int j = 0; j < 8; ++j) s0 = _mm256_add_ps(s0, col[j]);
    for (int r = 0; r < 8; ++r) in[r] = _mm256_loadu_ps(x + (8 + r) * count + i);
    Transpose8x8(in, col);
    for (int j = 0; j < 8; ++j) s1 = _mm256_add_ps(s1, col[j]);
  }
  _mm256_storeu_ps(acc, s0);
  _mm256_storeu_ps(acc + 8, s1);
  for (; i < count; ++i) {
    for (int r = 0; r < 16; ++r) acc[r] += x[r * count + i];
  }
}
#endif

// The sums of a MEAN: ReduceSum's, split over the node's threads by rows when the reduced axes
// are the last ones.
template <typename T, typename Acc>
void MeanSums(NodeState* node, const T* x, std::vector<Acc>* acc) {
  const size_t nout = node->t.out[0]->num_elements;
  if (!ReducesTail(*node) || nout == 0) {
    ReduceSum<T, Acc>(*node, x, acc);
    return;
  }
  acc->assign(nout, Acc(0));
  const int64_t rows = static_cast<int64_t>(nout), count = node->inner;
  const int tasks = TaskCount(*node, (rows + 3) / 4, int64_t{4} * count);
  Acc* a = acc->data();
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t r0, r1;
    ChunkRange(rows, tasks, task, 4, &r0, &r1);
#ifdef EMBER_LOOP_X86
    if constexpr (std::is_same<T, float>::value) {
      if (ActiveLoopIsa() != LoopIsa::kGeneric) {
        for (; r0 + 16 <= r1; r0 += 16) SumTailRows16F32(x + r0 * count, count, a + r0);
      }
    }
#endif
    SumTailRows(x, r0, r1, count, a);
  });
}

Status EvalMean(NodeState* node) {
  const size_t nout = node->t.out[0]->num_elements;
  const int64_t count = node->inner;  // elements per output
  if (node->t.in[0]->type == TensorType::kFloat32) {
    std::vector<float> acc;
    MeanSums<float, float>(node, node->t.In<float>(0), &acc);
    float* y = node->t.Out<float>(0);
    for (size_t i = 0; i < nout; ++i) y[i] = acc[i] / static_cast<float>(count);
    return Status::OK();
  }
  std::vector<int32_t> acc;
  MeanSums<int8_t, int32_t>(node, node->t.In<int8_t>(0), &acc);
  int8_t* y = node->t.Out<int8_t>(0);
  for (size_t i = 0; i < nout; ++i) {
    const int32_t shifted =
        static_cast<int32_t>(static_cast<uint32_t>(acc[i]) -
                             static_cast<uint32_t>(node->in_zp) * static_cast<uint32_t>(count));
    const int32_t v = WrappingAdd(
        MultiplyByQuantizedMultiplier(shifted, node->multiplier, node->shift), node->out_zp);
    y[i] = static_cast<int8_t>(std::max(-128, std::min(127, v)));
  }
  return Status::OK();
}

// MEAN whose reduced axes are consecutive and exclude the last (a global average pool): the
// input is [outer, inner, depth] and out[o, c] sums x[o, r, c] over r < inner in order, as
// ReduceSum does. Channels are split over the threads; each output is one thread's sum.
constexpr int64_t kMeanChunk = 64;

// kN > 0: n is kN, a constant, so that the sums stay in vector registers over the rows (a
// variable count kept them in memory).
template <typename T, typename Acc, int kN>
EMBER_LOOP_BODY void SumRowsBody(const T* x, int64_t rows, int64_t depth, int64_t n, Acc* out) {
  if (kN > 0) n = kN;
  Acc acc[kMeanChunk];
  for (int64_t j = 0; j < n; ++j) acc[j] = Acc(0);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * depth;
    for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<Acc>(xr[j]);
  }
  for (int64_t j = 0; j < n; ++j) out[j] = acc[j];
}

EMBER_LOOP_BODY void SumRowsF32Body(const float* x, int64_t rows, int64_t depth, int64_t n,
                                    float* acc) {
  if (n == kMeanChunk) {
    SumRowsBody<float, float, kMeanChunk>(x, rows, depth, n, acc);
  } else {
    SumRowsBody<float, float, 0>(x, rows, depth, n, acc);
  }
}
EMBER_LOOP_BODY void SumRowsI8Body(const int8_t* x, int64_t rows, int64_t depth, int64_t n,
                                   int32_t* acc) {
  if (n == kMeanChunk) {
    SumRowsBody<int8_t, int32_t, kMeanChunk>(x, rows, depth, n, acc);
  } else {
    SumRowsBody<int8_t, int32_t, 0>(x, rows, depth, n, acc);
  }
}
EMBER_LOOP_FUNCTION(void, SumRowsF32,
                    (const float* x, int64_t rows, int64_t depth, int64_t n, float* acc),
                    (x, rows, depth, n, acc), SumRowsF32Body)
EMBER_LOOP_FUNCTION(void, SumRowsI8,
                    (const int8_t* x, int64_t rows, int64_t depth, int64_t n, int32_t* acc),
                    (x, rows, depth, n, acc), SumRowsI8Body)

Status EvalMeanRows(NodeState* node) {
  const int64_t outer = node->outer, rows = node->inner, depth = node->depth;
  const bool f32 = node->t.in[0]->type == TensorType::kFloat32;
  const int64_t chunks = (depth + kMeanChunk - 1) / kMeanChunk;
  // In a GEMM's multiply-adds (TaskCount's unit): about 8 per input value summed, and the
  // requantization of an output as much as 16 of them.
  const int tasks = TaskCount(*node, chunks, kMeanChunk * (rows + 16) * outer * 8);
  RunTasks(*node, tasks, [&](int task, int) {
    int64_t c0, c1;
    ChunkRange(depth, tasks, task, kMeanChunk, &c0, &c1);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = c0; c < c1; c += kMeanChunk) {
        const int64_t n = std::min(kMeanChunk, c1 - c);
        const size_t in_at = static_cast<size_t>(o * rows * depth + c);
        const size_t out_at = static_cast<size_t>(o * depth + c);
        if (f32) {
          float acc[kMeanChunk];
          SumRowsF32(node->t.In<float>(0) + in_at, rows, depth, n, acc);
          float* y = node->t.Out<float>(0) + out_at;
          for (int64_t j = 0; j < n; ++j) y[j] = acc[j] / static_cast<float>(rows);
          continue;
        }
        int32_t acc[kMeanChunk];
        SumRowsI8(node->t.In<int8_t>(0) + in_at, rows, depth, n, acc);
        int8_t* y = node->t.Out<int8_t>(0) + out_at;
        if (node->vnni) {
          RequantizeVnni(acc, node->bias.data() + c, node->multipliers.data() + c,
                         node->shifts.data() + c, static_cast<int>(n), false, node->out_zp, -128,
                         127, y);
          continue;
        }
        for (int64_t j = 0; j < n; ++j) {
          const int32_t shifted = WrappingAdd(acc[j], node->bias[0]);
          const int32_t v = WrappingAdd(
              MultiplyByQuantizedMultiplier(shifted, node->multiplier, node->shift), node->out_zp);
          y[j] = static_cast<int8_t>(std::max(-128, std::min(127, v)));
        }
      }
    }
  });
  return Status::OK();
}

// Sets up EvalMeanRows when the reduced axes are consecutive and the last axis is kept.
void PrepareMeanRows(NodeState* node, const std::vector<bool>& reduced) {
  const auto& shape = node->t.in[0]->shape;
  const int rank = static_cast<int>(shape.size());
  int first = -1, last = -1;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[static_cast<size_t>(d)]) continue;
    if (first < 0) first = d;
    if (last >= 0 && last != d - 1) return;  // not consecutive
    last = d;
  }
  if (first < 0 || last == rank - 1) return;
  int64_t outer = 1, depth = 1;
  for (int d = 0; d < first; ++d) outer *= shape[static_cast<size_t>(d)];
  for (int d = last + 1; d < rank; ++d) depth *= shape[static_cast<size_t>(d)];
  node->mean_rows = true;
  node->outer = outer;
  node->depth = depth;
  if (node->t.in[0]->type != TensorType::kInt8) return;
  // (acc - in_zp * count) as a wrapping add of one bias value.
  const int32_t bias = static_cast<int32_t>(0u - static_cast<uint32_t>(node->in_zp) *
                                                     static_cast<uint32_t>(node->inner));
  node->vnni = HasVnni();
  const size_t n = node->vnni ? static_cast<size_t>(depth) : 1;
  node->bias.assign(n, bias);
  node->multipliers.assign(n, node->multiplier);
  node->shifts.assign(n, node->shift);
}

}  // namespace

Status PrepareMean(NodeState* node) {
  if (node->op->inputs.size() != 2 || node->op->outputs.size() != 1 || node->t.in[0] == nullptr ||
      node->t.in[1] == nullptr) {
    return errors::InvalidArgument(node->what + ": expects inputs (input, axis) and one output");
  }
  const TensorDef& in = *node->t.in[0];
  const TensorDef& ax = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  if (ax.type != TensorType::kInt32 || ax.data == nullptr) {
    return errors::Unimplemented(node->what + ": axis '" + ax.name +
                                 "' must be a constant INT32 tensor");
  }
  const int rank = static_cast<int>(in.shape.size());
  const int32_t* axes = reinterpret_cast<const int32_t*>(ax.data);
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  std::vector<int32_t> raw(axes, axes + ax.num_elements);
  for (int32_t a : raw) {
    const int r = a < 0 ? a + rank : a;
    if (r < 0 || r >= rank) {
      return errors::InvalidArgument(node->what + ": axis " + std::to_string(a) +
                                     " is out of range for rank " + std::to_string(rank));
    }
    if (!reduced[static_cast<size_t>(r)]) node->axes.push_back(r);
    reduced[static_cast<size_t>(r)] = true;
  }
  std::vector<int32_t> expect;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    if (reduced[static_cast<size_t>(d)]) {
      count *= in.shape[static_cast<size_t>(d)];
      if (node->op->options.keep_dims) expect.push_back(1);
    } else {
      expect.push_back(in.shape[static_cast<size_t>(d)]);
    }
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, expect, "output"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  if (count == 0 || in.num_elements == 0) {
    return errors::Unimplemented(node->what + ": MEAN over an empty tensor");
  }
  node->inner = count;
  if (in.type == TensorType::kFloat32) {
    PrepareMeanRows(node, reduced);
    node->eval = node->mean_rows ? EvalMeanRows : EvalMean;
    return Status::OK();
  }
  if (in.type != TensorType::kInt8) {
    return errors::Unimplemented(node->what + ": type " + TensorTypeName(in.type) +
                                 " is not supported");
  }
  if (count > (1 << 23)) return errors::Unimplemented(node->what + ": too many elements per mean");
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, in, "input"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, out, "output"));
  node->in_zp = static_cast<int32_t>(in.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(out.quant.zero_point[0]);
  // TFLite's QuantizedMeanOrSum: 1/count is folded into the output multiplier.
  int32_t m;
  int sh;
  QuantizeMultiplier(
      static_cast<double>(in.quant.scale[0]) / static_cast<double>(out.quant.scale[0]), &m, &sh);
  int fold = 63 - CountLeadingZeros64(static_cast<uint64_t>(count));
  fold = std::min(fold, 32);
  fold = std::min(fold, 31 + sh);
  node->multiplier = static_cast<int32_t>((static_cast<int64_t>(m) << fold) / count);
  node->shift = sh - fold;
  PrepareMeanRows(node, reduced);
  node->eval = node->mean_rows ? EvalMeanRows : EvalMean;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
