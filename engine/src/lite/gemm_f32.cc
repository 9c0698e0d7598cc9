// float32 GEMM for lite's convolutions (see gemm_f32.h). Rows of x are read in place (a 1x1
// convolution passes its input directly); weights are packed in 16-channel panels. Each
// micro-kernel keeps an MR x (16 * NP) block of outputs in registers over the whole depth, so
// every output is one sum over p in order, then bias, then the activation clamp. The last rows
// of a GEMM get a block of their own height; a single row (FULLY_CONNECTED) takes 8 panels per
// pass, 128 accumulators' columns each streaming its panel in order.
#include "lite/gemm_f32.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports false "(may be) used uninitialized" inside its own avx512fintrin.h (the
// _mm512_undefined_ps operand of inlined intrinsics).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include "common/cpu_features.h"
#define EMBER_F32_X86 1
// "evex512": clang 18-21 only (see lite/requant_avx512.h). Every AVX-512F CPU has FMA3, which
// the 8-lane half panel uses.
#if defined(__clang__) && __clang_major__ >= 18 && __clang_major__ < 22
#define EMBER_AVX512_TARGET __attribute__((target("avx512f,fma,evex512")))
#else
#define EMBER_AVX512_TARGET __attribute__((target("avx512f,fma")))
#endif
#define EMBER_AVX2_TARGET __attribute__((target("avx2,fma")))
#endif

namespace ember {
namespace lite {

namespace {

// Sizes `out` for n x k weights (zeros past n) with the bias, if any; returns its panel data.
float* StartPacking(const float* bias, int n, int k, PackedF32* out) {
  out->n = n;
  out->k = k;
  out->panels = (n + 15) / 16;
  out->padded_h = out->padded_w = 0;
  out->data.assign(static_cast<size_t>(out->panels) * 16 * k, 0.0f);
  out->bias.assign(static_cast<size_t>(out->panels) * 16, 0.0f);
  if (bias != nullptr) std::memcpy(out->bias.data(), bias, sizeof(float) * n);
  return out->data.data();
}

}  // namespace

void PackWeightsF32(const float* w, const float* bias, int n, int k, PackedF32* out) {
  float* data = StartPacking(bias, n, k, out);
  for (int c = 0; c < n; ++c) {
    const int j = c / 16, lane = c % 16;
    for (int p = 0; p < k; ++p) {
      data[(static_cast<size_t>(j) * k + p) * 16 + lane] = w[static_cast<size_t>(c) * k + p];
    }
  }
}

void PackWeightsF32KN(const float* w, const float* bias, int n, int k, PackedF32* out) {
  float* data = StartPacking(bias, n, k, out);
  for (int j = 0; j < out->panels; ++j) {
    const int cols = std::min(16, n - 16 * j);
    for (int p = 0; p < k; ++p) {
      std::memcpy(data + (static_cast<size_t>(j) * k + p) * 16,
                  w + static_cast<size_t>(p) * n + 16 * j, sizeof(float) * cols);
    }
  }
}

namespace {

std::atomic<int> forced_isa{static_cast<int>(F32Isa::kAuto)};

// Where a row's k values lie: `n` runs of `len` floats, run s at the row's start + off[s]. A
// plain row is one run at 0 of length k.
struct Segs {
  const ptrdiff_t* off;
  int n, len;
};
constexpr ptrdiff_t kNoOffset[1] = {0};
inline Segs Plain(const PackedF32& w) { return Segs{kNoOffset, 1, w.k}; }

// Portable: one row x one panel at a time.
void PanelGeneric(const float* x, int m, int x_stride, const Segs& sg, const PackedF32& w, int j,
                  float lo, float hi, float* y) {
  const int cols = std::min(16, w.n - 16 * j);
  const float* wp = w.data.data() + static_cast<size_t>(j) * w.k * 16;
  for (int r = 0; r < m; ++r) {
    float acc[16] = {};
    const float* wv = wp;
    for (int s = 0; s < sg.n; ++s) {
      const float* xr = x + static_cast<size_t>(r) * x_stride + sg.off[s];
      for (int t = 0; t < sg.len; ++t, wv += 16) {
        const float xv = xr[t];
        for (int l = 0; l < 16; ++l) acc[l] += xv * wv[l];
      }
    }
    float* yr = y + static_cast<size_t>(r) * w.n + 16 * j;
    for (int l = 0; l < cols; ++l) yr[l] = std::min(hi, std::max(lo, acc[l] + w.bias[16 * j + l]));
  }
}

void GemmGeneric(const float* x, int m, int x_stride, const Segs& sg, const PackedF32& w, int j0,
                 int j1, float lo, float hi, float* y) {
  for (int j = j0; j < j1; ++j) PanelGeneric(x, m, x_stride, sg, w, j, lo, hi, y);
}

#ifdef EMBER_F32_X86

// MR rows x NP panels with AVX-512: MR * NP accumulators.
template <int MR, int NP>
EMBER_AVX512_TARGET inline void Avx512Block(const float* x, int x_stride, const Segs& sg,
                                            const PackedF32& w, int j, float lo, float hi, float* y,
                                            int rows) {
  // Every loop over the tile unrolled: GCC then keeps acc in registers (else it zeroes the array
  // in memory with rep stos and reads it back there at the end, a third of a small conv's time).
  __m512 acc[MR][NP];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int q = 0; q < NP; ++q) acc[i][q] = _mm512_setzero_ps();
  const size_t panel = static_cast<size_t>(w.k) * 16;
  const float* wv = w.data.data() + static_cast<size_t>(j) * panel;
  for (int s = 0; s < sg.n; ++s) {
    const float* xr[MR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
      xr[i] = x + static_cast<size_t>(i < rows ? i : 0) * x_stride + sg.off[s];
    for (int p = 0; p < sg.len; ++p, wv += 16) {
      __m512 b[NP];
#pragma GCC unroll 16
      for (int q = 0; q < NP; ++q) b[q] = _mm512_loadu_ps(wv + q * panel);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const __m512 a = _mm512_set1_ps(xr[i][p]);
#pragma GCC unroll 16
        for (int q = 0; q < NP; ++q) acc[i][q] = _mm512_fmadd_ps(a, b[q], acc[i][q]);
      }
    }
  }
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
#pragma GCC unroll 16
  for (int q = 0; q < NP; ++q) {
    const int c0 = 16 * (j + q);
    const int cols = std::min(16, w.n - c0);
    const __mmask16 mask = static_cast<__mmask16>(cols >= 16 ? 0xFFFF : (1u << cols) - 1u);
    const __m512 bias = _mm512_loadu_ps(w.bias.data() + c0);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      if (i >= rows) break;
      __m512 v = _mm512_add_ps(acc[i][q], bias);
      v = _mm512_min_ps(vhi, _mm512_max_ps(vlo, v));
      _mm512_mask_storeu_ps(y + static_cast<size_t>(i) * w.n + c0, mask, v);
    }
  }
}

// MR rows (all present) x the first 8 columns of the last panel (the only ones it has).
template <int MR>
EMBER_AVX512_TARGET inline void Avx512HalfPanel(const float* x, int x_stride, const Segs& sg,
                                                const PackedF32& w, float lo, float hi, float* y) {
  const int j = w.panels - 1, c0 = 16 * j, cols = w.n - c0;
  const float* wv = w.data.data() + static_cast<size_t>(j) * w.k * 16;
  __m256 acc[MR];
  for (int i = 0; i < MR; ++i) acc[i] = _mm256_setzero_ps();
  for (int s = 0; s < sg.n; ++s) {
    const float* xs = x + sg.off[s];
    for (int p = 0; p < sg.len; ++p, wv += 16) {
      const __m256 b = _mm256_loadu_ps(wv);
      for (int i = 0; i < MR; ++i) {
        acc[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(xs + static_cast<size_t>(i) * x_stride + p), b,
                                 acc[i]);
      }
    }
  }
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256 bias = _mm256_loadu_ps(w.bias.data() + c0);
  const __mmask8 mask = static_cast<__mmask8>((1u << cols) - 1u);
  for (int i = 0; i < MR; ++i) {
    const __m256 v = _mm256_min_ps(vhi, _mm256_max_ps(vlo, _mm256_add_ps(acc[i], bias)));
    _mm512_mask_storeu_ps(y + static_cast<size_t>(i) * w.n + c0, mask, _mm512_castps256_ps512(v));
  }
}

// MR rows (all present) across panels [j0, j1), two panels at a time (more when MR is small).
template <int MR>
EMBER_AVX512_TARGET inline void Avx512Rows(const float* x, int x_stride, const Segs& sg,
                                           const PackedF32& w, int j0, int j1, float lo, float hi,
                                           float* y) {
  int j = j0;
  // A last panel of at most 8 columns runs on 8-lane vectors (twice the FMAs per cycle where a
  // 16-lane FMA takes two 8-lane halves' slots).
  const bool half = j1 == w.panels && w.n - 16 * (w.panels - 1) <= 8;
  const int panels = half ? j1 - 1 : j1;
  // Few rows: more panels per pass, so enough independent sums hide the FMA latency.
  if (MR <= 2) {
    for (; j + 8 <= panels; j += 8) Avx512Block<MR, 8>(x, x_stride, sg, w, j, lo, hi, y, MR);
  } else if (MR <= 4) {
    for (; j + 4 <= panels; j += 4) Avx512Block<MR, 4>(x, x_stride, sg, w, j, lo, hi, y, MR);
  }
  for (; j + 2 <= panels; j += 2) Avx512Block<MR, 2>(x, x_stride, sg, w, j, lo, hi, y, MR);
  if (j < panels) Avx512Block<MR, 1>(x, x_stride, sg, w, j, lo, hi, y, MR);
  if (half) Avx512HalfPanel<MR>(x, x_stride, sg, w, lo, hi, y);
}

EMBER_AVX512_TARGET void GemmAvx512(const float* x, int m, int x_stride, const Segs& sg,
                                    const PackedF32& w, int j0, int j1, float lo, float hi,
                                    float* y) {
  constexpr int kMR = 8;
  // A few blocks of rows against large weights (a late layer's 16 or 49 pixels against 1-9 MiB):
  // each block of rows would stream all the weights again, from L3 or memory. Groups of panels
  // of at most 256 KiB (L2) instead, every block of rows over a group before the next: the
  // weights come from memory once. The same sums. ResNet50 GraphDef (64x64), one thread:
  // 6150 -> 5620 us (medians of 4-5 interleaved runs); 49 x 4608 -> 512, weights from memory:
  // 1421 -> 1221 us (128 KiB groups: the same; 512 KiB and 1 MiB slower).
  if (m > kMR && m <= 8 * kMR) {
    const int64_t panel_bytes = static_cast<int64_t>(w.k) * 16 * 4;
    const int group =
        static_cast<int>(std::max<int64_t>(2, (int64_t{1} << 18) / panel_bytes / 2 * 2));
    if (group < j1 - j0) {
      for (int g0 = j0; g0 < j1; g0 += group) {
        GemmAvx512(x, m, x_stride, sg, w, g0, std::min(j1, g0 + group), lo, hi, y);
      }
      return;
    }
  }
  int r = 0;
  for (; r + kMR <= m; r += kMR) {
    Avx512Rows<kMR>(x + static_cast<size_t>(r) * x_stride, x_stride, sg, w, j0, j1, lo, hi,
                    y + static_cast<size_t>(r) * w.n);
  }
  // The last rows with a block of their own height, not a full one's redundant sums.
  const float* xb = x + static_cast<size_t>(r) * x_stride;
  float* yb = y + static_cast<size_t>(r) * w.n;
  switch (m - r) {
    case 7:
      Avx512Rows<7>(xb, x_stride, sg, w, j0, j1, lo, hi, yb);
      break;
    case 6:
      Avx512Rows<6>(xb, x_stride, sg, w, j0, j1, lo, hi, yb);
      break;
    case 5:
      Avx512Rows<5>(xb, x_stride, sg, w, j0, j1, lo, hi, yb);
      break;
    case 4:
      Avx512Rows<4>(xb, x_stride, sg, w, j0, j1, lo, hi, yb);
      break;
    case 3:
      Avx512Rows<3>(xb, x_stride, sg, w, j0, j1, lo, hi, yb);
      break;
    case 2:
      Avx512Rows<2>(xb, x_stride, sg, w, j0, j1, lo, hi, yb);
      break;
    case 1:
      Avx512Rows<1>(xb, x_stride, sg, w, j0, j1, lo, hi, yb);
      break;
    default:
      break;
  }
}

// MR rows x NH halves (8 columns each) of panel j: MR * NH accumulators over the whole depth.
// NH = 2 is a whole panel; NH = 1 serves a last panel of at most 8 columns (the only ones it
// has): twice the rows then share each weight load and no FMA computes a padding column (a
// 16 -> 8 channel 1x1 conv ran at half the FMA rate). Each output is the same sum either way.
// Always inlined: called per tile, its setup cost a call with spilled arguments per 8-16 FMAs
// of a small-depth 1x1 conv (MobileNetV2's 8 -> 48 expansions 9-13% slower).
template <int MR, int NH>
EMBER_AVX2_TARGET inline __attribute__((always_inline)) void Avx2Block(const float* x, int x_stride,
                                                                       const Segs& sg,
                                                                       const PackedF32& w, int j,
                                                                       float lo, float hi, float* y,
                                                                       int rows) {
  // Every loop over the tile unrolled, as in Avx512Block: else GCC keeps acc in memory and
  // stores each accumulator back every step (the AVX2 conv ran at half the FMA rate).
  __m256 acc[MR][NH];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < NH; ++h) acc[i][h] = _mm256_setzero_ps();
  const float* wv = w.data.data() + static_cast<size_t>(j) * w.k * 16;
  for (int s = 0; s < sg.n; ++s) {
    const float* xr[MR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
      xr[i] = x + static_cast<size_t>(i < rows ? i : 0) * x_stride + sg.off[s];
    for (int p = 0; p < sg.len; ++p, wv += 16) {
      __m256 b[NH];
#pragma GCC unroll 2
      for (int h = 0; h < NH; ++h) b[h] = _mm256_loadu_ps(wv + 8 * h);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const __m256 a = _mm256_broadcast_ss(xr[i] + p);
#pragma GCC unroll 2
        for (int h = 0; h < NH; ++h) acc[i][h] = _mm256_fmadd_ps(a, b[h], acc[i][h]);
      }
    }
  }
  const int c0 = 16 * j;
  const int cols = std::min(8 * NH, w.n - c0);
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  __m256 bias[NH];
  __m256i mask[NH];
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#pragma GCC unroll 2
  for (int h = 0; h < NH; ++h) {
    bias[h] = _mm256_loadu_ps(w.bias.data() + c0 + 8 * h);
    mask[h] = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - 8 * h), lanes);
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    if (i >= rows) break;
    float* out = y + static_cast<size_t>(i) * w.n + c0;
#pragma GCC unroll 2
    for (int h = 0; h < NH; ++h) {
      const __m256 v = _mm256_min_ps(vhi, _mm256_max_ps(vlo, _mm256_add_ps(acc[i][h], bias[h])));
      // Whole blocks: direct stores (a memcpy call per row was 8% of MobileNetV2).
      if (cols == 8 * NH) {
        _mm256_storeu_ps(out + 8 * h, v);
      } else {
        _mm256_maskstore_ps(out + 8 * h, mask[h], v);
      }
    }
  }
}

EMBER_AVX2_TARGET void GemmAvx2(const float* x, int m, int x_stride, const Segs& sg,
                                const PackedF32& w, int j0, int j1, float lo, float hi, float* y) {
  constexpr int kMR = 6;
  // A last panel of at most 8 columns: its own pass, kHalfMR rows a block.
  if (j1 == w.panels && w.n - 16 * (w.panels - 1) <= 8) {
    constexpr int kHalfMR = 8;
    --j1;
    int r = 0;
    for (; r + kHalfMR <= m; r += kHalfMR) {
      Avx2Block<kHalfMR, 1>(x + static_cast<size_t>(r) * x_stride, x_stride, sg, w, j1, lo, hi,
                            y + static_cast<size_t>(r) * w.n, kHalfMR);
    }
    if (r < m) {
      const float* xb = x + static_cast<size_t>(r) * x_stride;
      float* yb = y + static_cast<size_t>(r) * w.n;
      if (m - r <= 4) {
        Avx2Block<4, 1>(xb, x_stride, sg, w, j1, lo, hi, yb, m - r);
      } else {
        Avx2Block<kHalfMR, 1>(xb, x_stride, sg, w, j1, lo, hi, yb, m - r);
      }
    }
  }
  for (int r = 0; r < m && j0 < j1; r += kMR) {
    const int rows = std::min(kMR, m - r);
    const float* xb = x + static_cast<size_t>(r) * x_stride;
    float* yb = y + static_cast<size_t>(r) * w.n;
    for (int j = j0; j < j1; ++j) {
      // The last rows with a block of their own height, not a full one's redundant sums.
      switch (rows) {
        case 1:
          Avx2Block<1, 2>(xb, x_stride, sg, w, j, lo, hi, yb, rows);
          break;
        case 2:
          Avx2Block<2, 2>(xb, x_stride, sg, w, j, lo, hi, yb, rows);
          break;
        case 3:
          Avx2Block<3, 2>(xb, x_stride, sg, w, j, lo, hi, yb, rows);
          break;
        case 4:
          Avx2Block<4, 2>(xb, x_stride, sg, w, j, lo, hi, yb, rows);
          break;
        case 5:
          Avx2Block<5, 2>(xb, x_stride, sg, w, j, lo, hi, yb, rows);
          break;
        default:
          Avx2Block<kMR, 2>(xb, x_stride, sg, w, j, lo, hi, yb, rows);
      }
    }
  }
}

// One row x NP panels with AVX-512.
template <int NP>
EMBER_AVX512_TARGET inline void Avx512MatVecPanels(const float* x, const PackedF32& w, int j,
                                                   float lo, float hi, float* y) {
  Avx512Block<1, NP>(x, 0, Plain(w), w, j, lo, hi, y, 1);
}

EMBER_AVX512_TARGET void MatVecAvx512(const float* x, const PackedF32& w, int j0, int j1, float lo,
                                      float hi, float* y) {
  int j = j0;
  for (; j + 8 <= j1; j += 8) Avx512MatVecPanels<8>(x, w, j, lo, hi, y);
  for (; j + 2 <= j1; j += 2) Avx512MatVecPanels<2>(x, w, j, lo, hi, y);
  if (j < j1) Avx512MatVecPanels<1>(x, w, j, lo, hi, y);
}

// One row x NP panels: 2 NP independent accumulators, where one panel's two chains of fused
// multiply-adds kept the FMA latency, not the weights' bandwidth, the limit (a 1280 x 1000
// classifier ran at 40 GB/s). Each output's sum is in the same order as Avx2Block's.
template <int NP>
EMBER_AVX2_TARGET inline void Avx2MatVecPanels(const float* x, const PackedF32& w, int j, float lo,
                                               float hi, float* y) {
  __m256 acc[NP][2];
#pragma GCC unroll 8
  for (int q = 0; q < NP; ++q) acc[q][0] = acc[q][1] = _mm256_setzero_ps();
  const size_t pstride = static_cast<size_t>(w.k) * 16;
  const float* wv = w.data.data() + static_cast<size_t>(j) * pstride;
  for (int p = 0; p < w.k; ++p) {
    const __m256 a = _mm256_broadcast_ss(x + p);
#pragma GCC unroll 8
    for (int q = 0; q < NP; ++q) {
      const float* wq = wv + q * pstride + static_cast<size_t>(p) * 16;
      acc[q][0] = _mm256_fmadd_ps(a, _mm256_loadu_ps(wq), acc[q][0]);
      acc[q][1] = _mm256_fmadd_ps(a, _mm256_loadu_ps(wq + 8), acc[q][1]);
    }
  }
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
#pragma GCC unroll 8
  for (int q = 0; q < NP; ++q) {
    const int c0 = 16 * (j + q);
    const int cols = std::min(16, w.n - c0);
    const __m256 v0 = _mm256_min_ps(
        vhi, _mm256_max_ps(vlo, _mm256_add_ps(acc[q][0], _mm256_loadu_ps(w.bias.data() + c0))));
    const __m256 v1 = _mm256_min_ps(
        vhi, _mm256_max_ps(vlo, _mm256_add_ps(acc[q][1], _mm256_loadu_ps(w.bias.data() + c0 + 8))));
    if (cols == 16) {
      _mm256_storeu_ps(y + c0, v0);
      _mm256_storeu_ps(y + c0 + 8, v1);
      continue;
    }
    alignas(32) float tmp[16];
    _mm256_store_ps(tmp, v0);
    _mm256_store_ps(tmp + 8, v1);
    std::memcpy(y + c0, tmp, sizeof(float) * cols);
  }
}

EMBER_AVX2_TARGET void MatVecAvx2(const float* x, const PackedF32& w, int j0, int j1, float lo,
                                  float hi, float* y) {
  int j = j0;
  for (; j + 4 <= j1; j += 4) Avx2MatVecPanels<4>(x, w, j, lo, hi, y);
  for (; j < j1; ++j) Avx2MatVecPanels<1>(x, w, j, lo, hi, y);
}

#endif  // EMBER_F32_X86

using GemmFn = void (*)(const float*, int, int, const PackedF32&, float, float, float*);

F32Isa BestIsa() {
#ifdef EMBER_F32_X86
  static const F32Isa best = [] {
    switch (cpu::BestIsaTier(cpu::Avx512Need::kF)) {
      case cpu::IsaTier::kAvx512:
        return F32Isa::kAvx512;
      case cpu::IsaTier::kAvx2:
        return F32Isa::kAvx2;
      default:
        return F32Isa::kGeneric;
    }
  }();
  return best;
#else
  return F32Isa::kGeneric;
#endif
}

F32Isa ActiveIsa() {
  const F32Isa best = BestIsa();
  const F32Isa want = static_cast<F32Isa>(forced_isa.load(std::memory_order_relaxed));
  if (want == F32Isa::kAuto) return best;
  return static_cast<int>(want) < static_cast<int>(best) ? want : best;
}

}  // namespace

void GemmF32ForceIsaForTesting(F32Isa isa) { forced_isa.store(static_cast<int>(isa)); }

const char* GemmF32KernelName() {
  switch (ActiveIsa()) {
    case F32Isa::kAvx512:
      return "avx512f";
    case F32Isa::kAvx2:
      return "avx2-fma";
    default:
      return "generic";
  }
}

void GemmF32(const float* x, int m, int x_stride, const PackedF32& w, float lo, float hi,
             float* y) {
  GemmF32Panels(x, m, x_stride, w, 0, w.panels, lo, hi, y);
}

namespace {

void Gemm(const float* x, int m, int x_stride, const Segs& sg, const PackedF32& w, int j0, int j1,
          float lo, float hi, float* y) {
  if (m <= 0 || w.n <= 0 || j0 >= j1) return;
  switch (ActiveIsa()) {
#ifdef EMBER_F32_X86
    case F32Isa::kAvx512:
      GemmAvx512(x, m, x_stride, sg, w, j0, j1, lo, hi, y);
      return;
    case F32Isa::kAvx2:
      GemmAvx2(x, m, x_stride, sg, w, j0, j1, lo, hi, y);
      return;
#endif
    default:
      GemmGeneric(x, m, x_stride, sg, w, j0, j1, lo, hi, y);
  }
}

}  // namespace

void GemmF32Panels(const float* x, int m, int x_stride, const PackedF32& w, int j0, int j1,
                   float lo, float hi, float* y) {
  Gemm(x, m, x_stride, Plain(w), w, j0, j1, lo, hi, y);
}

void GemmF32Segments(const float* x, int m, int x_stride, const ptrdiff_t* seg_off, int nseg,
                     const PackedF32& w, float lo, float hi, float* y) {
  Gemm(x, m, x_stride, Segs{seg_off, nseg, w.k / nseg}, w, 0, w.panels, lo, hi, y);
}

void MatVecF32(const float* x, const PackedF32& w, int j0, int j1, float lo, float hi, float* y) {
  if (j0 >= j1) return;
  switch (ActiveIsa()) {
#ifdef EMBER_F32_X86
    case F32Isa::kAvx512:
      MatVecAvx512(x, w, j0, j1, lo, hi, y);
      return;
    case F32Isa::kAvx2:
      MatVecAvx2(x, w, j0, j1, lo, hi, y);
      return;
#endif
    default:
      for (int j = j0; j < j1; ++j) PanelGeneric(x, 1, 0, Plain(w), w, j, lo, hi, y);
  }
}

}  // namespace lite
}  // namespace ember
