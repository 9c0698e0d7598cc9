// ADD, MUL, int8 SUB (with broadcasting), RELU, RELU6, QUANTIZE, DEQUANTIZE, RESHAPE,
// CONCATENATION.
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's false "may be used uninitialized" inside avx512fintrin.h (see kernels_reduce.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "ember/lite/quant.h"
#include "lite/add_int8.h"
#include "lite/broadcast.h"
#include "lite/gemm_int8.h"
#include "lite/kernels.h"
#include "lite/lookup_vbmi.h"
#include "lite/loop_isa.h"
#include "lite/vec_math.h"
#include "lite/vec_math_avx512.h"

namespace ember {
namespace lite {
namespace {

// Same-shape element-wise ops split into chunks of whole vectors (64 bytes of int8). In
// TaskCount's unit (a GEMM's multiply-add), an int8 ADD element costs about 32 (MobileNetV2's
// 24x24x16 and 12x12x32 residuals gained 1.5-1.7x from two tasks), a float one about 4 (its
// 24x24x16 residual takes 0.6 us on one thread).
constexpr int64_t kElementChunk = 64;
constexpr int64_t kElementwiseCostI8 = 32;
constexpr int64_t kElementwiseCostF32 = 4;

// f(e0, len) over n output elements in chunks of kElementChunk split over the node's threads,
// `cost` per element in TaskCount's unit.
template <typename F>
void ElementChunks(const NodeState& node, int64_t n, int64_t cost, F f) {
  const int64_t chunks = (n + kElementChunk - 1) / kElementChunk;
  const int tasks = TaskCount(node, chunks, kElementChunk * cost);
  RunTasks(node, tasks, [&](int task, int) {
    int64_t e0, e1;
    ChunkRange(n, tasks, task, kElementChunk, &e0, &e1);
    if (e0 < e1) f(e0, e1 - e0);
  });
}

Status CheckArity(const NodeState& node, size_t min_in, size_t max_in, size_t outs) {
  const size_t n = node.op->inputs.size();
  if (n < min_in || n > max_in || node.op->outputs.size() != outs) {
    return errors::InvalidArgument(node.what + ": expects " + std::to_string(min_in) +
                                   (max_in != min_in ? "-" + std::to_string(max_in) : "") +
                                   " inputs and " + std::to_string(outs) + " output(s), got " +
                                   std::to_string(n) + " and " +
                                   std::to_string(node.op->outputs.size()));
  }
  for (size_t i = 0; i < min_in; ++i) {
    if (node.t.in[i] == nullptr) {
      return errors::InvalidArgument(node.what + ": input " + std::to_string(i) + " is missing");
    }
  }
  return Status::OK();
}

// One broadcast run of float ADD / MUL: y[k] = clamp(a[k * sa] op b[k * sb]), sa and sb 0 or 1
// (RunLayouts: each layout its own vector loop).
EMBER_LOOP_BODY void RunF32(bool add, const float* a, int64_t sa, const float* b, int64_t sb,
                            int64_t n, float lo, float hi, float* y) {
  if (add) {
    RunLayouts(a, sa, b, sb, n, y,
               [lo, hi](float u, float v) { return std::min(hi, std::max(lo, u + v)); });
  } else {
    RunLayouts(a, sa, b, sb, n, y,
               [lo, hi](float u, float v) { return std::min(hi, std::max(lo, u * v)); });
  }
}
EMBER_LOOP_FUNCTION(void, BroadcastRunF32,
                    (bool add, const float* a, int64_t sa, const float* b, int64_t sb, int64_t n,
                     float lo, float hi, float* y),
                    (add, a, sa, b, sb, n, lo, hi, y), RunF32)

// y[r * len + k] = clamp(x[r * len + k] op v[k]) for r < rows: an input repeating over the
// other's leading dims, all its rows in one call (RunF32 per row: ADD and MUL commute exactly).
EMBER_LOOP_BODY void RowsF32Body(bool add, const float* x, const float* v, int64_t rows,
                                 int64_t len, float lo, float hi, float* y) {
  for (int64_t r = 0; r < rows; ++r) RunF32(add, x + r * len, 1, v, 1, len, lo, hi, y + r * len);
}
EMBER_LOOP_FUNCTION(void, RowsF32,
                    (bool add, const float* x, const float* v, int64_t rows, int64_t len, float lo,
                     float hi, float* y),
                    (add, x, v, rows, len, lo, hi, y), RowsF32Body)

// Same-shape float ADD / MUL: one contiguous loop the compiler vectorises for each ISA of
// lite/loop_isa.h.
EMBER_LOOP_BODY void SameF32(bool add, const float* a, const float* b, size_t n, float lo, float hi,
                             float* y) {
  if (add) {
    for (size_t i = 0; i < n; ++i) y[i] = std::min(hi, std::max(lo, a[i] + b[i]));
  } else {
    for (size_t i = 0; i < n; ++i) y[i] = std::min(hi, std::max(lo, a[i] * b[i]));
  }
}

// y = clamp(a + b) (add) or clamp(a * b) over n elements of same-shape inputs.
EMBER_LOOP_FUNCTION(void, SameShapeF32,
                    (bool add, const float* a, const float* b, size_t n, float lo, float hi,
                     float* y),
                    (add, a, b, n, lo, hi, y), SameF32)

// Whether one input (index *small, of *len elements) is the output's trailing dims, the other
// the output's shape: a bias, a squeeze-and-excite scale [1, 1, C], a scalar.
bool TrailingInput(const NodeState& node, int* small, int64_t* len) {
  for (int s = 0; s < 2; ++s) {
    const std::vector<int32_t>& s6 = s == 0 ? node.in_shape6 : node.in2_shape6;
    const std::vector<int32_t>& l6 = s == 0 ? node.in2_shape6 : node.in_shape6;
    if (l6 != node.out_shape6) continue;
    size_t d = 0;
    while (d < s6.size() && s6[d] == 1) ++d;
    bool trailing = true;
    for (size_t e = d; e < s6.size(); ++e) trailing = trailing && s6[e] == node.out_shape6[e];
    if (!trailing) continue;
    *small = s;
    *len = static_cast<int64_t>(node.t.in[static_cast<size_t>(s)]->num_elements);
    return true;
  }
  return false;
}

Status EvalAddMulF32(NodeState* node) {
  const float* a = node->t.In<float>(0);
  const float* b = node->t.In<float>(1);
  float* y = node->t.Out<float>(0);
  const bool add = node->op->op == BuiltinOp::kAdd;
  const float lo = node->f_min, hi = node->f_max;
  const size_t n = node->t.out[0]->num_elements;
  if (node->t.in[0]->num_elements == n && node->t.in[1]->num_elements == n) {
    // Each input has the output's element count, so neither broadcasts: flat indices agree.
    // Every element is computed alone, so any split gives the same values.
    ElementChunks(*node, static_cast<int64_t>(n), kElementwiseCostF32,
                  [&](int64_t e0, int64_t len) {
                    SameShapeF32(add, a + e0, b + e0, static_cast<size_t>(len), lo, hi, y + e0);
                  });
    return Status::OK();
  }
  // One input is the output's trailing dims (a bias, a squeeze-and-excite scale [1, 1, C]): rows
  // of its size, a call per task (a call per run of 96 channels took a fifth of the time).
  int small = 0;
  int64_t len = 0;
  if (TrailingInput(*node, &small, &len) && len >= 16) {  // a scalar or a short row: the runs below
    const float* v = small == 0 ? a : b;
    const float* x = small == 0 ? b : a;
    const int64_t rows = static_cast<int64_t>(n) / len;
    const int tasks = TaskCount(*node, rows, len * kElementwiseCostF32);
    RunTasks(*node, tasks, [&](int task, int) {
      int64_t r0, r1;
      ChunkRange(rows, tasks, task, 1, &r0, &r1);
      if (r0 < r1) RowsF32(add, x + r0 * len, v, r1 - r0, len, lo, hi, y + r0 * len);
    });
    return Status::OK();
  }
  ParallelBroadcastRuns(
      *node, node->in_shape6, node->in2_shape6, node->out_shape6, kElementwiseCostF32,
      [&](int64_t i, int64_t ia, int64_t ib, int64_t len, int64_t sa, int64_t sb) {
        BroadcastRunF32(add, a + ia, sa, b + ib, sb, len, lo, hi, y + i);
      });
  return Status::OK();
}

// clamp(x * LogisticF(x)) over n values: the unfused LOGISTIC's and MUL's arithmetic (the
// loop built for each ISA; EvalSwishF32 takes vec_math_avx512.h's Logistic16 on AVX-512, as
// LOGISTIC does).
EMBER_LOOP_BODY void SwishF32Body(const float* x, int64_t n, float lo, float hi, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::min(hi, std::max(lo, x[i] * LogisticF(x[i])));
}
EMBER_LOOP_FUNCTION_WIDE(void, SwishF32, (const float* x, int64_t n, float lo, float hi, float* y),
                         (x, n, lo, hi, y), SwishF32Body)

#ifdef EMBER_LOOP_X86
EMBER_LOOP_AVX512 inline __m512 SwishLanes(__m512 v, __m512 lo, __m512 hi) {
  return _mm512_min_ps(hi, _mm512_max_ps(lo, _mm512_mul_ps(v, avx512::Logistic16(v))));
}

EMBER_LOOP_AVX512 void SwishRowAvx512(const float* x, int64_t n, float lo, float hi, float* y) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  int64_t c = 0;
  for (; c + 16 <= n; c += 16)
    _mm512_storeu_ps(y + c, SwishLanes(_mm512_loadu_ps(x + c), vlo, vhi));
  if (c < n) {
    const __mmask16 live = avx512::FloatLanes(n - c);
    _mm512_mask_storeu_ps(y + c, live, SwishLanes(_mm512_maskz_loadu_ps(live, x + c), vlo, vhi));
  }
}
#endif

// Float MUL of x and LOGISTIC(x) with the LOGISTIC not run (FindSwish, subgraph.cc): x * sigmoid(x)
// from x in 64-value chunks over the node's threads, the same values as the two operators.
Status EvalSwishF32(NodeState* node) {
  const float* x = node->t.In<float>(static_cast<size_t>(node->swish_input));
  float* y = node->t.Out<float>(0);
  const float lo = node->f_min, hi = node->f_max;
#ifdef EMBER_LOOP_X86
  const bool avx512 = ActiveLoopIsa() == LoopIsa::kAvx512;
#endif
  ElementChunks(*node, static_cast<int64_t>(node->t.out[0]->num_elements), 32,
                [&](int64_t e0, int64_t len) {
#ifdef EMBER_LOOP_X86
                  if (avx512) return SwishRowAvx512(x + e0, len, lo, hi, y + e0);
#endif
                  SwishF32(x + e0, len, lo, hi, y + e0);
                });
  return Status::OK();
}

int32_t MulSmallerThanOne(int32_t x, int32_t m, int shift) {
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m), -shift);
}

// One element of int8 ADD or SUB (reference_ops::SubElementwise, BroadcastQuantSubSlow: SUB
// rescales both inputs as ADD does and subtracts the rescaled values; it is not ADD with m2
// negated, which would round exact ties of the input stage the other way). Each rescaled value
// is below 2^28 in magnitude.
int8_t AddI8Scalar(const NodeState& p, int8_t a, int8_t b) {
  const int32_t x1 = (a - p.in_zp) * (1 << p.left_shift);
  const int32_t x2 = (b - p.in2_zp) * (1 << p.left_shift);
  const int32_t r1 = MulSmallerThanOne(x1, p.m1, p.s1);
  const int32_t r2 = MulSmallerThanOne(x2, p.m2, p.s2);
  const int32_t sum = p.op->op == BuiltinOp::kSub ? r1 - r2 : WrappingAdd(r1, r2);
  const int32_t out = WrappingAdd(MulSmallerThanOne(sum, p.multiplier, p.shift), p.out_zp);
  return static_cast<int8_t>(std::min(p.act_max, std::max(p.act_min, out)));
}

// One broadcast run of an int8 op with vector kernel vec(a, b, n, y): each input of step 0
// (broadcast over the run) is its value repeated in a buffer, 256 elements at a time.
template <typename Vec>
void ByteRun(const int8_t* a, int64_t sa, const int8_t* b, int64_t sb, int64_t len, int8_t* y,
             Vec vec) {
  if (sa == 1 && sb == 1) {
    vec(a, b, static_cast<size_t>(len), y);
    return;
  }
  constexpr int64_t kRepeat = 256;
  int8_t ra[kRepeat], rb[kRepeat];
  if (sa == 0) std::memset(ra, a[0], sizeof(ra));
  if (sb == 0) std::memset(rb, b[0], sizeof(rb));
  for (int64_t k = 0; k < len; k += kRepeat) {
    const int64_t n = std::min(kRepeat, len - k);
    vec(sa != 0 ? a + k : ra, sb != 0 ? b + k : rb, static_cast<size_t>(n), y + k);
  }
}

// The node's broadcast output through ByteRun runs of vec (int8 ADD's and MUL's vector kernels),
// split over the node's threads.
template <typename Vec>
void ByteRuns(const NodeState& p, const int8_t* a, const int8_t* b, int8_t* y, Vec vec) {
  ParallelBroadcastRuns(p, p.in_shape6, p.in2_shape6, p.out_shape6, kElementwiseCostI8,
                        [&](int64_t i, int64_t ia, int64_t ib, int64_t len, int64_t sa,
                            int64_t sb) { ByteRun(a + ia, sa, b + ib, sb, len, y + i, vec); });
}

// An int8 input repeating over the other's leading dims, up to this many elements, runs as one
// stream through the AVX-512 kernels (CyclicB); longer ones take the broadcast runs.
constexpr int64_t kCyclicMax = 4096;

// The output as one stream when one input is its trailing dims (TrailingInput, at most
// kCyclicMax elements): that input repeated into a buffer of len + 64 bytes, and
// vec(x, buffer, CyclicB, n, y, swapped) over 64-element chunks split over the node's threads
// (swapped: the repeating input is input 0, so the kernel gets the inputs the other way round).
// false when the output is not of that form.
template <typename Vec>
bool CyclicRuns(const NodeState& p, const int8_t* a, const int8_t* b, int8_t* y, Vec vec) {
  int small = 0;
  int64_t len = 0;
  if (!TrailingInput(p, &small, &len) || len > kCyclicMax || len < 1) return false;
  const int8_t* v = small == 0 ? a : b;
  const int8_t* x = small == 0 ? b : a;
  int8_t buffer[kCyclicMax + 64];
  for (int64_t j = 0; j < len + 64; ++j) buffer[j] = v[j % len];
  const int64_t n = static_cast<int64_t>(p.t.out[0]->num_elements);
  if (len == 1) {
    // A scalar: the output is a function of x's byte, so the kernel's 256 outputs for every
    // byte make a table, and the output is looked up (LookUpInt8: VBMI, 64 bytes per two byte
    // permutes): a 28x28x64 MUL by a scalar went from 13.6 to 1.1 us.
    int8_t bytes[256], table[256];
    for (int q = 0; q < 256; ++q) bytes[q] = static_cast<int8_t>(q - 128);
    CyclicB one;
    one.period = 1;
    vec(bytes, buffer, one, size_t{256}, table, small == 0);
    ElementChunks(p, n, 1, [&](int64_t e0, int64_t count) {
      LookUpInt8(table + 128, x + e0, static_cast<size_t>(count), y + e0);
    });
    return true;
  }
  ElementChunks(p, n, kElementwiseCostI8, [&](int64_t e0, int64_t count) {
    CyclicB cb;
    cb.period = static_cast<size_t>(len);
    cb.start = static_cast<size_t>(e0 % len);
    vec(x + e0, buffer, cb, static_cast<size_t>(count), y + e0, small == 0);
  });
  return true;
}

// The node's int8 ADD constants, as the vector kernels take them.
AddI8Params AddParams(const NodeState& p) {
  AddI8Params q;
  q.in_zp = p.in_zp;
  q.in2_zp = p.in2_zp;
  q.out_zp = p.out_zp;
  q.left_shift = p.left_shift;
  q.m1 = p.m1;
  q.m2 = p.m2;
  q.multiplier = p.multiplier;
  q.s1 = p.s1;
  q.s2 = p.s2;
  q.shift = p.shift;
  q.act_min = p.act_min;
  q.act_max = p.act_max;
  return q;
}

Status EvalAddI8(NodeState* node) {
  const int8_t* a = node->t.In<int8_t>(0);
  const int8_t* b = node->t.In<int8_t>(1);
  int8_t* y = node->t.Out<int8_t>(0);
  const NodeState& p = *node;
  const bool same = p.in_shape6 == p.in2_shape6;
  if (p.vnni && !same) {
    const AddI8Params q = AddParams(p);
    AddI8Params swapped = q;
    std::swap(swapped.in_zp, swapped.in2_zp);
    std::swap(swapped.m1, swapped.m2);
    std::swap(swapped.s1, swapped.s2);
    if (CyclicRuns(p, a, b, y,
                   [&](const int8_t* x, const int8_t* v, CyclicB cb, size_t n, int8_t* out,
                       bool swap) { AddI8Avx512(x, v, n, swap ? swapped : q, out, cb); })) {
      return Status::OK();
    }
  }
  if ((p.vnni || p.add_avx2) && !same) {
    // Broadcast runs through the same vector kernels (the scalar tail of AddI8Avx2 too).
    const AddI8Params q = AddParams(p);
    ByteRuns(p, a, b, y, [&](const int8_t* ra, const int8_t* rb, size_t n, int8_t* out) {
      if (p.vnni) return AddI8Avx512(ra, rb, n, q, out);
      for (size_t k = AddI8Avx2(ra, rb, n, q, out); k < n; ++k) {
        out[k] = AddI8Scalar(p, ra[k], rb[k]);
      }
    });
    return Status::OK();
  }
  if (p.vnni || p.add_avx2) {  // same shapes, AVX-512 or AVX2
    const AddI8Params q = AddParams(p);
    const int64_t n = static_cast<int64_t>(p.t.out[0]->num_elements);
    ElementChunks(p, n, kElementwiseCostI8, [&](int64_t e0, int64_t count) {
      const size_t len = static_cast<size_t>(count);
      if (p.vnni) return AddI8Avx512(a + e0, b + e0, len, q, y + e0);
      const size_t done = AddI8Avx2(a + e0, b + e0, len, q, y + e0);
      for (size_t i = done; i < len; ++i) {
        y[e0 + static_cast<int64_t>(i)] =
            AddI8Scalar(p, a[e0 + static_cast<int64_t>(i)], b[e0 + static_cast<int64_t>(i)]);
      }
    });
    return Status::OK();
  }
  ParallelBroadcastRuns(
      p, p.in_shape6, p.in2_shape6, p.out_shape6, kElementwiseCostI8,
      [&](int64_t i, int64_t ia, int64_t ib, int64_t len, int64_t sa, int64_t sb) {
        for (int64_t k = 0; k < len; ++k) y[i + k] = AddI8Scalar(p, a[ia + k * sa], b[ib + k * sb]);
      });
  return Status::OK();
}

// One element of int8 MUL (reference_integer_ops::MulElementwise).
int8_t MulI8Scalar(const NodeState& p, int32_t a, int32_t b) {
  const int32_t prod = (a - p.in_zp) * (b - p.in2_zp);
  int32_t out = WrappingAdd(MultiplyByQuantizedMultiplier(prod, p.multiplier, p.shift), p.out_zp);
  out = std::min(p.act_max, std::max(p.act_min, out));
  return static_cast<int8_t>(out);
}

// int8 MUL of x and a table activation of x (PrepareAddMul): its table over x, in 64-value
// chunks over the threads (VBMI: 64 values per two byte permutes). EfficientNet-B0 int8's 49
// swish MULs took 0.6 ms of its 2.7 ms through MulI8Avx512.
Status EvalMulI8Table(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(static_cast<size_t>(node->table_input));
  int8_t* y = node->t.Out<int8_t>(0);
  const int8_t* table = node->scratch8.data() + 128;
  const int64_t n = static_cast<int64_t>(node->t.out[0]->num_elements);
  ElementChunks(*node, n, 1, [&](int64_t e0, int64_t count) {
    LookUpInt8(table, x + e0, static_cast<size_t>(count), y + e0);
  });
  return Status::OK();
}

Status EvalMulI8(NodeState* node) {
  const int8_t* a = node->t.In<int8_t>(0);
  const int8_t* b = node->t.In<int8_t>(1);
  int8_t* y = node->t.Out<int8_t>(0);
  const NodeState& p = *node;
  if (p.vnni) {
    MulI8Params q;
    q.in_zp = p.in_zp;
    q.in2_zp = p.in2_zp;
    q.out_zp = p.out_zp;
    q.multiplier = p.multiplier;
    q.shift = p.shift;
    q.act_min = p.act_min;
    q.act_max = p.act_max;
    MulI8Params swapped = q;
    std::swap(swapped.in_zp, swapped.in2_zp);
    if (p.in_shape6 != p.in2_shape6 &&
        CyclicRuns(p, a, b, y,
                   [&](const int8_t* x, const int8_t* v, CyclicB cb, size_t n, int8_t* out,
                       bool swap) { MulI8Avx512(x, v, n, swap ? swapped : q, out, cb); })) {
      return Status::OK();
    }
    ByteRuns(p, a, b, y, [&](const int8_t* ra, const int8_t* rb, size_t n, int8_t* out) {
      MulI8Avx512(ra, rb, n, q, out);
    });
    return Status::OK();
  }
  ParallelBroadcastRuns(
      p, p.in_shape6, p.in2_shape6, p.out_shape6, kElementwiseCostI8,
      [&](int64_t i, int64_t ia, int64_t ib, int64_t len, int64_t sa, int64_t sb) {
        for (int64_t k = 0; k < len; ++k) y[i + k] = MulI8Scalar(p, a[ia + k * sa], b[ib + k * sb]);
      });
  return Status::OK();
}

}  // namespace

Status PrepareAddMul(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckArity(*node, 2, 2, 1));
  const TensorDef& a = *node->t.in[0];
  const TensorDef& b = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  if (a.shape.size() > kBroadcastRank || b.shape.size() > kBroadcastRank) {
    return errors::Unimplemented(node->what + ": broadcasting supports rank <= 6");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, b, a.type, "input 1"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, a.type, "output"));
  node->in_shape6 = Pad6(a.shape);
  node->in2_shape6 = Pad6(b.shape);
  node->out_shape6.assign(kBroadcastRank, 1);
  for (int d = 0; d < kBroadcastRank; ++d) {
    const int32_t x = node->in_shape6[static_cast<size_t>(d)];
    const int32_t z = node->in2_shape6[static_cast<size_t>(d)];
    if (x != z && x != 1 && z != 1) {
      return errors::InvalidArgument(node->what + ": shapes " + ShapeString(a.shape) + " and " +
                                     ShapeString(b.shape) + " do not broadcast");
    }
    node->out_shape6[static_cast<size_t>(d)] = x == 1 ? z : x;
  }
  const size_t rank = std::max(a.shape.size(), b.shape.size());
  std::vector<int32_t> expect(node->out_shape6.end() - static_cast<long>(rank),
                              node->out_shape6.end());
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, expect, "output"));
  const Activation act = node->op->options.activation;
  // int8 SUB (routed here by PrepareMiscBinary) takes ADD's multipliers: sub.cc's
  // PrepareGeneralSubOp computes them as add.cc's PrepareAddMul does.
  const bool sub = node->op->op == BuiltinOp::kSub;
  const bool add = node->op->op == BuiltinOp::kAdd || sub;
  if (a.type == TensorType::kFloat32 && !sub) {
    FloatActivationRange(act, &node->f_min, &node->f_max);
    node->eval = node->swish ? EvalSwishF32 : EvalAddMulF32;
    return Status::OK();
  }
  if (a.type != TensorType::kInt8) {
    return errors::Unimplemented(node->what + ": type " + TensorTypeName(a.type) +
                                 " is not supported (FLOAT32 and INT8 are)");
  }
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, a, "input 0"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, b, "input 1"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, out, "output"));
  const float sa = a.quant.scale[0], sb = b.quant.scale[0], so = out.quant.scale[0];
  node->in_zp = static_cast<int32_t>(a.quant.zero_point[0]);
  node->in2_zp = static_cast<int32_t>(b.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(out.quant.zero_point[0]);
  ActivationRangeInt8(static_cast<int>(act), so, node->out_zp, &node->act_min, &node->act_max);
  if (add) {
    node->left_shift = 20;
    const double twice_max = 2 * std::max(sa, sb);
    QuantizeMultiplier(sa / twice_max, &node->m1, &node->s1);
    QuantizeMultiplier(sb / twice_max, &node->m2, &node->s2);
    QuantizeMultiplier(twice_max / ((1 << node->left_shift) * so), &node->multiplier, &node->shift);
    if (node->s1 > 0 || node->s2 > 0 || node->shift > 0) {
      return errors::InvalidArgument(node->what + ": output scale is too small for the inputs");
    }
    node->eval = EvalAddI8;
    // AddI8Avx512's plain requantization: no INT32_MIN multiplier (only a negative scale,
    // which a hostile model could hold, gives one); the shifts are <= 0 (checked above).
    // AddI8Avx512 (AddI8Avx2 without AVX-512) adds; SUB takes the scalar loop.
    const bool lanes =
        !sub && node->m1 != INT32_MIN && node->m2 != INT32_MIN && node->multiplier != INT32_MIN;
    node->vnni = lanes && HasVnni();
    node->add_avx2 = lanes && !node->vnni && GemmI16Available();
  } else {
    const double real = static_cast<double>(sa) * static_cast<double>(sb) / static_cast<double>(so);
    QuantizeMultiplier(real, &node->multiplier, &node->shift);
    node->eval = EvalMulI8;
    node->vnni = HasVnni();  // MulI8Avx512: the general double rounding, any multiplier
    if (node->table_producer != nullptr && a.shape == b.shape) {
      // One input is a table activation of the other (FindTableProducer, subgraph.cc): the
      // output for that input's byte q is MUL(q, table[q]) (or MUL(table[q], q)) with the
      // producer's own table, so this table gives the kernel's bytes.
      const int8_t* act = node->table_producer->scratch8.data() + 128;
      node->scratch8.assign(256, 0);
      for (int32_t q = -128; q < 128; ++q) {
        const int32_t t = act[q];
        node->scratch8[static_cast<size_t>(q + 128)] =
            node->table_input == 0 ? MulI8Scalar(*node, q, t) : MulI8Scalar(*node, t, q);
      }
      node->eval = EvalMulI8Table;
    }
  }
  return Status::OK();
}

namespace {

Status EvalReluF32(NodeState* node) {
  const float* x = node->t.In<float>(0);
  float* y = node->t.Out<float>(0);
  const size_t n = node->t.in[0]->num_elements;
  const bool six = node->op->op == BuiltinOp::kRelu6;
  for (size_t i = 0; i < n; ++i) {
    const float v = std::max(0.0f, x[i]);
    y[i] = six ? std::min(6.0f, v) : v;
  }
  return Status::OK();
}

Status EvalReluI8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  int8_t* y = node->t.Out<int8_t>(0);
  const size_t n = node->t.in[0]->num_elements;
  for (size_t i = 0; i < n; ++i) {
    int32_t v = WrappingAdd(node->out_zp, MultiplyByQuantizedMultiplier(
                                              x[i] - node->in_zp, node->multiplier, node->shift));
    v = std::min(node->act_max, std::max(node->act_min, v));
    y[i] = static_cast<int8_t>(v);
  }
  return Status::OK();
}

Status SameShapeUnary(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckArity(*node, 1, 1, 1));
  return CheckShape(*node, *node->t.out[0], node->t.in[0]->shape, "output");
}

}  // namespace

Status PrepareActivation(NodeState* node) {
  EMBER_RETURN_IF_ERROR(SameShapeUnary(node));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  if (in.type == TensorType::kFloat32) {
    node->eval = EvalReluF32;
    return Status::OK();
  }
  if (in.type != TensorType::kInt8) {
    return errors::Unimplemented(node->what + ": type " + TensorTypeName(in.type) +
                                 " is not supported");
  }
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, in, "input"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, out, "output"));
  node->in_zp = static_cast<int32_t>(in.quant.zero_point[0]);
  node->out_zp = static_cast<int32_t>(out.quant.zero_point[0]);
  const float so = out.quant.scale[0];
  QuantizeMultiplier(static_cast<double>(in.quant.scale[0]) / static_cast<double>(so),
                     &node->multiplier, &node->shift);
  node->act_min = std::max(-128, WrappingAdd(node->out_zp, SaturatingRound(0.0f / so)));
  node->act_max = node->op->op == BuiltinOp::kRelu6
                      ? std::min(127, WrappingAdd(node->out_zp, SaturatingRound(6.0f / so)))
                      : 127;
  node->eval = EvalReluI8;
  return Status::OK();
}

namespace {

Status EvalQuantizeF32(NodeState* node) {
  const float* x = node->t.In<float>(0);
  int8_t* y = node->t.Out<int8_t>(0);
  const float s = node->t.out[0]->quant.scale[0];
  const size_t n = node->t.in[0]->num_elements;
  for (size_t i = 0; i < n; ++i) y[i] = QuantizeValueInt8(x[i], s, node->out_zp);
  return Status::OK();
}

Status EvalRequantizeI8(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  int8_t* y = node->t.Out<int8_t>(0);
  const size_t n = node->t.in[0]->num_elements;
  for (size_t i = 0; i < n; ++i) {
    int32_t v = WrappingAdd(
        MultiplyByQuantizedMultiplier(x[i] - node->in_zp, node->multiplier, node->shift),
        node->out_zp);
    y[i] = static_cast<int8_t>(std::min(127, std::max(-128, v)));
  }
  return Status::OK();
}

Status EvalDequantize(NodeState* node) {
  const int8_t* x = node->t.In<int8_t>(0);
  float* y = node->t.Out<float>(0);
  const double s = node->t.in[0]->quant.scale[0];
  const size_t n = node->t.in[0]->num_elements;
  for (size_t i = 0; i < n; ++i) y[i] = static_cast<float>(s * (x[i] - node->in_zp));
  return Status::OK();
}

// A run-time FLOAT16 input (a constant one is folded at AllocateTensors: fold_dequantize.cc).
Status EvalDequantizeF16(NodeState* node) {
  const uint16_t* x = node->t.In<uint16_t>(0);
  float* y = node->t.Out<float>(0);
  const size_t n = node->t.in[0]->num_elements;
  for (size_t i = 0; i < n; ++i) y[i] = HalfToFloat(x[i]);
  return Status::OK();
}

}  // namespace

Status PrepareQuantize(NodeState* node) {
  EMBER_RETURN_IF_ERROR(SameShapeUnary(node));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, TensorType::kInt8, "output"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, out, "output"));
  node->out_zp = static_cast<int32_t>(out.quant.zero_point[0]);
  if (in.type == TensorType::kFloat32) {
    node->eval = EvalQuantizeF32;
    return Status::OK();
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, in, TensorType::kInt8, "input"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, in, "input"));
  node->in_zp = static_cast<int32_t>(in.quant.zero_point[0]);
  QuantizeMultiplier(
      static_cast<double>(in.quant.scale[0]) / static_cast<double>(out.quant.scale[0]),
      &node->multiplier, &node->shift);
  node->eval = EvalRequantizeI8;
  return Status::OK();
}

Status PrepareDequantize(NodeState* node) {
  EMBER_RETURN_IF_ERROR(SameShapeUnary(node));
  const TensorDef& in = *node->t.in[0];
  EMBER_RETURN_IF_ERROR(CheckType(*node, *node->t.out[0], TensorType::kFloat32, "output"));
  if (in.type == TensorType::kFloat16) {
    node->eval = EvalDequantizeF16;
    return Status::OK();
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, in, TensorType::kInt8, "input"));
  EMBER_RETURN_IF_ERROR(NeedQuant(*node, in, "input"));
  node->in_zp = static_cast<int32_t>(in.quant.zero_point[0]);
  node->eval = EvalDequantize;
  return Status::OK();
}

namespace {
Status EvalCopy(NodeState* node) {
  const size_t bytes = node->t.in[0]->num_elements * TensorTypeSize(node->t.in[0]->type);
  if (node->t.out_data[0] != node->t.in_data[0]) {
    std::memmove(node->t.out_data[0], node->t.in_data[0], bytes);
  }
  return Status::OK();
}
}  // namespace

Status PrepareReshape(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckArity(*node, 1, 2, 1));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  if (TensorTypeSize(in.type) == 0) {
    return errors::Unimplemented(node->what + ": type " + TensorTypeName(in.type) +
                                 " is not supported");
  }
  if (out.num_elements != in.num_elements) {
    return errors::InvalidArgument(node->what + ": cannot reshape " + ShapeString(in.shape) + " (" +
                                   std::to_string(in.num_elements) + " elements) to " +
                                   ShapeString(out.shape));
  }
  node->eval = EvalCopy;
  return Status::OK();
}

namespace {
Status EvalConcat(NodeState* node) {
  const size_t elem = TensorTypeSize(node->t.out[0]->type);
  uint8_t* y = node->t.out_data[0];
  const size_t out_row = static_cast<size_t>(node->inner) * elem;
  for (int64_t o = 0; o < node->outer; ++o) {
    size_t at = static_cast<size_t>(o) * out_row;
    for (size_t i = 0; i < node->t.in.size(); ++i) {
      const TensorDef& t = *node->t.in[i];
      const size_t row = t.num_elements / static_cast<size_t>(node->outer) * elem;
      std::memcpy(y + at, node->t.in_data[i] + static_cast<size_t>(o) * row, row);
      at += row;
    }
  }
  return Status::OK();
}
}  // namespace

Status PrepareConcatenation(NodeState* node) {
  const size_t n = node->op->inputs.size();
  EMBER_RETURN_IF_ERROR(CheckArity(*node, 1, std::max<size_t>(1, n), 1));
  for (size_t i = 0; i < n; ++i) {
    if (node->t.in[i] == nullptr) {
      return errors::InvalidArgument(node->what + ": input " + std::to_string(i) + " is missing");
    }
  }
  const TensorDef& first = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  const int rank = static_cast<int>(first.shape.size());
  int axis = node->op->options.axis;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return errors::InvalidArgument(node->what + ": axis " + std::to_string(node->op->options.axis) +
                                   " is out of range for rank " + std::to_string(rank));
  }
  if (node->op->options.activation != Activation::kNone) {
    return errors::Unimplemented(node->what +
                                 ": fused activations on CONCATENATION are not supported");
  }
  if (TensorTypeSize(first.type) == 0) {
    return errors::Unimplemented(node->what + ": type " + TensorTypeName(first.type) +
                                 " is not supported");
  }
  std::vector<int32_t> expect = first.shape;
  expect[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < n; ++i) {
    const TensorDef& t = *node->t.in[i];
    EMBER_RETURN_IF_ERROR(CheckType(*node, t, first.type, "input"));
    if (t.shape.size() != first.shape.size()) {
      return errors::InvalidArgument(node->what + ": inputs have different ranks");
    }
    for (int d = 0; d < rank; ++d) {
      if (d != axis && t.shape[static_cast<size_t>(d)] != first.shape[static_cast<size_t>(d)]) {
        return errors::InvalidArgument(
            node->what + ": input '" + t.name + "' " + ShapeString(t.shape) + " does not match " +
            ShapeString(first.shape) + " outside the concatenation axis");
      }
    }
    const int64_t sum = static_cast<int64_t>(expect[static_cast<size_t>(axis)]) +
                        t.shape[static_cast<size_t>(axis)];
    if (sum > (int64_t{1} << 31) - 1)
      return errors::InvalidArgument(node->what + ": output too large");
    expect[static_cast<size_t>(axis)] = static_cast<int32_t>(sum);
    if (first.type == TensorType::kInt8) {
      EMBER_RETURN_IF_ERROR(NeedQuant(*node, t, "input"));
      EMBER_RETURN_IF_ERROR(NeedQuant(*node, out, "output"));
      if (t.quant.scale[0] != out.quant.scale[0] ||
          t.quant.zero_point[0] != out.quant.zero_point[0]) {
        return errors::InvalidArgument(node->what + ": int8 input '" + t.name +
                                       "' must have the output's scale and zero point");
      }
    }
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, first.type, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, expect, "output"));
  node->outer = 1;
  for (int d = 0; d < axis; ++d) node->outer *= first.shape[static_cast<size_t>(d)];
  node->inner = node->outer == 0 ? 0 : static_cast<int64_t>(out.num_elements) / node->outer;
  node->eval = EvalConcat;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
