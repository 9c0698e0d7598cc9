// Broadcasting of element-wise binary ops over shapes of up to kBroadcastRank dims: the shapes
// padded with leading 1s, and the output walked in runs (kernels_elementwise.cc's ADD / MUL,
// kernels_misc.cc's other binary ops).
#ifndef EMBER_SRC_LITE_BROADCAST_H_
#define EMBER_SRC_LITE_BROADCAST_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "lite/kernels.h"
#include "lite/loop_isa.h"

namespace ember {
namespace lite {

constexpr int kBroadcastRank = 6;

// `s` (at most kBroadcastRank dims) with leading 1s up to kBroadcastRank dims.
inline std::vector<int32_t> Pad6(const std::vector<int32_t>& s) {
  std::vector<int32_t> r(kBroadcastRank, 1);
  std::copy(s.begin(), s.end(), r.begin() + (kBroadcastRank - static_cast<int>(s.size())));
  return r;
}

// Visits the output (in order) in runs, with the flat offsets of both (broadcast) inputs: the
// innermost output dims over which each input either advances by one element per output element
// or stays (step 1 or 0) make one run, and f(out_start, ia, ib, len, step_a, step_b) is called
// per run (an [H, W, C] * [1, 1, C] product: runs of C, step_b 1; a tensor times a scalar: one
// run, step_b 0). An element-by-element walk made every output an indexed call.
template <typename F>
void BroadcastRuns(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                   const std::vector<int32_t>& o, F f) {
  constexpr int kLast = kBroadcastRank - 1;
  // Dims of output size 1 take no part; the run starts at the last dim of size > 1.
  int last = kLast;
  while (last > 0 && o[static_cast<size_t>(last)] == 1) --last;
  const bool full_a = a[static_cast<size_t>(last)] != 1, full_b = b[static_cast<size_t>(last)] != 1;
  int first = last;
  int64_t len = o[static_cast<size_t>(last)];
  for (int d = last - 1; d >= 0; --d) {
    const size_t u = static_cast<size_t>(d);
    if (o[u] == 1) continue;
    if ((a[u] != 1) != full_a || (b[u] != 1) != full_b) break;
    len *= o[u];
    first = d;
  }
  // The outer dims [0, first), walked as an odometer over the output index (the inputs' offsets
  // step by their strides, 0 along their size-1 dims).
  int64_t sa[kBroadcastRank], sb[kBroadcastRank];
  int64_t ra = 1, rb = 1;
  for (int d = kLast; d >= 0; --d) {
    sa[d] = a[static_cast<size_t>(d)] == 1 ? 0 : ra;
    sb[d] = b[static_cast<size_t>(d)] == 1 ? 0 : rb;
    ra *= a[static_cast<size_t>(d)];
    rb *= b[static_cast<size_t>(d)];
  }
  int64_t outer = 1;
  for (int d = 0; d < first; ++d) outer *= o[static_cast<size_t>(d)];
  int64_t idx[kBroadcastRank] = {0, 0, 0, 0, 0, 0};
  int64_t ia = 0, ib = 0;
  for (int64_t r = 0; r < outer; ++r) {
    f(r * len, ia, ib, len, full_a ? 1 : 0, full_b ? 1 : 0);
    for (int d = first - 1; d >= 0; --d) {
      ++idx[d];
      ia += sa[d];
      ib += sb[d];
      if (idx[d] < o[static_cast<size_t>(d)]) break;
      ia -= sa[d] * idx[d];
      ib -= sb[d] * idx[d];
      idx[d] = 0;
    }
  }
}

// The output dim that BroadcastRunsSlice cuts: the first of size > 1 (the last when none is).
inline int BroadcastSplitDim(const std::vector<int32_t>& o) {
  int d = 0;
  while (d < kBroadcastRank - 1 && o[static_cast<size_t>(d)] == 1) ++d;
  return d;
}

// BroadcastRuns over the output indices [s0, s1) of dim BroadcastSplitDim(o), with the whole
// walk's offsets: the slice walked as the shapes with that dim cut to s1 - s0. An element's
// value does not depend on the runs it falls in, so slices give the whole walk's values.
template <typename F>
void BroadcastRunsSlice(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                        const std::vector<int32_t>& o, int64_t s0, int64_t s1, F f) {
  if (s0 >= s1) return;
  const int d = BroadcastSplitDim(o);
  const size_t u = static_cast<size_t>(d);
  int64_t inner_a = 1, inner_b = 1, inner_o = 1;
  for (int e = d + 1; e < kBroadcastRank; ++e) {
    inner_a *= a[static_cast<size_t>(e)];
    inner_b *= b[static_cast<size_t>(e)];
    inner_o *= o[static_cast<size_t>(e)];
  }
  std::vector<int32_t> a2 = a, b2 = b, o2 = o;
  const int32_t cut = static_cast<int32_t>(s1 - s0);
  o2[u] = cut;
  const int64_t ia0 = a[u] != 1 ? s0 * inner_a : 0, ib0 = b[u] != 1 ? s0 * inner_b : 0;
  if (a[u] != 1) a2[u] = cut;
  if (b[u] != 1) b2[u] = cut;
  const int64_t io0 = s0 * inner_o;
  BroadcastRuns(a2, b2, o2,
                [&](int64_t i, int64_t ia, int64_t ib, int64_t len, int64_t sa, int64_t sb) {
                  f(io0 + i, ia0 + ia, ib0 + ib, len, sa, sb);
                });
}

// BroadcastRuns split over the node's threads (slices of BroadcastSplitDim), at about
// `cost_per_element` of a GEMM's multiply-adds (TaskCount's unit) per output element.
template <typename F>
void ParallelBroadcastRuns(const NodeState& node, const std::vector<int32_t>& a,
                           const std::vector<int32_t>& b, const std::vector<int32_t>& o,
                           int64_t cost_per_element, F f) {
  const int64_t extent = o[static_cast<size_t>(BroadcastSplitDim(o))];
  int64_t total = 1;
  for (int32_t v : o) total *= v;
  const int64_t per_slice = extent > 0 ? total / extent : 0;
  const int tasks = TaskCount(node, extent, per_slice * cost_per_element);
  RunTasks(node, tasks, [&](int task, int) {
    int64_t s0, s1;
    ChunkRange(extent, tasks, task, 1, &s0, &s1);
    BroadcastRunsSlice(a, b, o, s0, s1, f);
  });
}

// z[k] = f(a[k * sa], b[k * sb]) for k < n, sa and sb 0 or 1: each layout its own loop, so that
// the compiler vectorises the ones with a broadcast (step-0) input.
template <typename F>
EMBER_LOOP_BODY void RunLayouts(const float* a, int64_t sa, const float* b, int64_t sb, int64_t n,
                                float* z, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) z[i] = f(a[i], b[i]);
  } else if (sa == 1) {
    const float v = b[0];
    for (int64_t i = 0; i < n; ++i) z[i] = f(a[i], v);
  } else if (sb == 1) {
    const float u = a[0];
    for (int64_t i = 0; i < n; ++i) z[i] = f(u, b[i]);
  } else {
    const float r = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) z[i] = r;
  }
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_BROADCAST_H_
