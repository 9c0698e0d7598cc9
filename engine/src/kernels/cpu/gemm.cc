#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "core/op_kernel.h"  // defines this file's kernel anchor (static linking)
#include "core/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "common/cpu_features.h"
#define EMBER_GEMM_X86 1
// "evex512": clang 18-21 only (see lite/requant_avx512.h).
#if defined(__clang__) && __clang_major__ >= 18 && __clang_major__ < 22
#define EMBER_AVX512_TARGET __attribute__((target("avx512f,evex512")))
#else
#define EMBER_AVX512_TARGET __attribute__((target("avx512f")))
#endif
#endif

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports false "may be used uninitialized" inside its own avx512fintrin.h.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ember {
namespace kernels {
namespace {

constexpr int64_t kMR = 6;     // rows of C per micro-tile (generic and AVX2)
constexpr int64_t kNR = 16;    // columns of C per micro-tile (generic and AVX2)
constexpr int64_t kNC = 2048;  // columns of a packed B block (in L3)

// Strided view of op(X): element (r, c) is at p[r * rs + c * cs].
struct View {
  const float* p;
  int64_t rs, cs;
  float at(int64_t r, int64_t c) const { return p[r * rs + c * cs]; }
};

// Packs rows [0, mc) x depth [0, kc) of `a` into MR-row panels: panel i holds, for each p,
// the MR values a(i*MR + 0..MR-1, p), zero-padded past mc.
template <int64_t MR>
void PackA(const View& a, int64_t mc, int64_t kc, float* out) {
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    int64_t rows = std::min(MR, mc - i0);
    if (rows == MR && a.cs == 1) {
      const float* r[MR];
      for (int64_t r_i = 0; r_i < MR; ++r_i) r[r_i] = a.p + (i0 + r_i) * a.rs;
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t r_i = 0; r_i < MR; ++r_i) out[r_i] = r[r_i][p];
        out += MR;
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t r_i = 0; r_i < MR; ++r_i) out[r_i] = r_i < rows ? a.at(i0 + r_i, p) : 0.f;
      out += MR;
    }
  }
}

// Packs depth [0, kc) x columns [0, nc) of `b` into NR-column panels, zero-padded past nc.
template <int64_t NR>
void PackB(const View& b, int64_t kc, int64_t nc, float* out) {
  for (int64_t j0 = 0; j0 < nc; j0 += NR) {
    int64_t cols = std::min(NR, nc - j0);
    if (cols == NR && b.cs == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        std::memcpy(out, b.p + p * b.rs + j0, NR * sizeof(float));
        out += NR;
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t j = 0; j < NR; ++j) out[j] = j < cols ? b.at(p, j0 + j) : 0.f;
      out += NR;
    }
  }
}

// Writes (or adds, when `accumulate`) the tile `acc` (rows of `acc_ld`) into the mr x nr corner
// of C.
void StoreTile(const float* acc, float* c, int64_t ldc, int64_t mr, int64_t nr, bool accumulate,
               int64_t acc_ld = kNR) {
  for (int64_t i = 0; i < mr; ++i) {
    float* row = c + i * ldc;
    const float* src = acc + i * acc_ld;
    if (accumulate) {
      for (int64_t j = 0; j < nr; ++j) row[j] += src[j];
    } else {
      for (int64_t j = 0; j < nr; ++j) row[j] = src[j];
    }
  }
}

// `b` advances by `ldb` floats per depth step: the panel width when B is packed, or B's row
// stride when the kernel reads a full-width panel of B where it lies.
// `lda`: A's row stride for a kernel that reads A unpacked (KernelSpec::direct*); the packed
// kernels ignore it.
using MicroKernel = void (*)(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb,
                             float* c, int64_t ldc, int64_t mr, int64_t nr, bool accumulate);

void MicroKernelGeneric(int64_t kc, const float* a, int64_t /*lda*/, const float* b, int64_t ldb,
                        float* c, int64_t ldc, int64_t mr, int64_t nr, bool accumulate) {
  float acc[kMR * kNR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int64_t i = 0; i < kMR; ++i) {
      const float av = a[i];
      for (int64_t j = 0; j < kNR; ++j) acc[i * kNR + j] += av * b[j];
    }
    a += kMR;
    b += ldb;
  }
  StoreTile(acc, c, ldc, mr, nr, accumulate);
}

#if defined(EMBER_GEMM_X86)
__attribute__((target("avx2,fma"))) void MicroKernelAvx2(int64_t kc, const float* a,
                                                         int64_t /*lda*/, const float* b,
                                                         int64_t ldb, float* c, int64_t ldc,
                                                         int64_t mr, int64_t nr, bool accumulate) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
    __m256 av = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
    a += kMR;
    b += ldb;
  }
  if (mr == kMR && nr == kNR) {
    __m256 rows[kMR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    for (int64_t i = 0; i < kMR; ++i) {
      float* row = c + i * ldc;
      if (accumulate) {
        rows[i][0] = _mm256_add_ps(rows[i][0], _mm256_loadu_ps(row));
        rows[i][1] = _mm256_add_ps(rows[i][1], _mm256_loadu_ps(row + 8));
      }
      _mm256_storeu_ps(row, rows[i][0]);
      _mm256_storeu_ps(row + 8, rows[i][1]);
    }
    return;
  }
  alignas(32) float acc[kMR * kNR];
  _mm256_store_ps(acc + 0, c00);
  _mm256_store_ps(acc + 8, c01);
  _mm256_store_ps(acc + 16, c10);
  _mm256_store_ps(acc + 24, c11);
  _mm256_store_ps(acc + 32, c20);
  _mm256_store_ps(acc + 40, c21);
  _mm256_store_ps(acc + 48, c30);
  _mm256_store_ps(acc + 56, c31);
  _mm256_store_ps(acc + 64, c40);
  _mm256_store_ps(acc + 72, c41);
  _mm256_store_ps(acc + 80, c50);
  _mm256_store_ps(acc + 88, c51);
  StoreTile(acc, c, ldc, mr, nr, accumulate);
}

#endif

#if defined(EMBER_GEMM_X86)
// AVX-512F: a 12 x 32 tile in 24 zmm accumulators; A values are broadcast from memory. `R`
// (4, 8 or 12) is how many rows of the 12-row packed A panel the kernel computes: the 4- and
// 8-row forms finish a block whose last panel holds at most 8 real rows, which the 12-row form
// would compute with padding (16 rows = 12 + 4 instead of 24). All three read the same panel.
// The rows past R are never touched (each `if` is a constant), so their accumulators vanish.
#define EMBER_ROW(i)                    \
  __m512 c##i##0 = _mm512_setzero_ps(); \
  __m512 c##i##1 = _mm512_setzero_ps();
#define EMBER_FMA(i)                                                            \
  if constexpr (R > (i)) {                                                      \
    const __m512 av = _mm512_set1_ps(AValue<(i), kDirect>(a, a3, a6, a9, lda)); \
    c##i##0 = _mm512_fmadd_ps(av, b0, c##i##0);                                 \
    c##i##1 = _mm512_fmadd_ps(av, b1, c##i##1);                                 \
  }
#define EMBER_STORE(i)                           \
  if constexpr (R > (i)) {                       \
    _mm512_storeu_ps(c + (i)*ldc, c##i##0);      \
    _mm512_storeu_ps(c + (i)*ldc + 16, c##i##1); \
  }
#define EMBER_ADD_STORE(i)                                                                         \
  if constexpr (R > (i)) {                                                                         \
    _mm512_storeu_ps(c + (i)*ldc, _mm512_add_ps(c##i##0, _mm512_loadu_ps(c + (i)*ldc)));           \
    _mm512_storeu_ps(c + (i)*ldc + 16, _mm512_add_ps(c##i##1, _mm512_loadu_ps(c + (i)*ldc + 16))); \
  }
#define EMBER_PUT(i)                             \
  if constexpr (R > (i)) {                       \
    _mm512_store_ps(acc + (i)*32, c##i##0);      \
    _mm512_store_ps(acc + (i)*32 + 16, c##i##1); \
  }

// Row I of A at the current depth: the packed panel's a[I], or (kDirect) row I of A where it
// lies, row stride `lda`, addressed from one of four row pointers (rows 0, 3, 6, 9) plus 0, 1
// or 2 row strides so the loop keeps few registers for A.
template <int I, bool kDirect>
inline __attribute__((always_inline)) float AValue(const float* a, const float* a3, const float* a6,
                                                   const float* a9, int64_t lda) {
  if constexpr (!kDirect) {
    (void)a3, (void)a6, (void)a9, (void)lda;
    return a[I];
  } else {
    const float* base = I < 3 ? a : I < 6 ? a3 : I < 9 ? a6 : a9;
    return base[(I % 3) * lda];
  }
}

// `kDirect`: A is read where it lies (rows `lda` floats apart, depth contiguous) instead of
// from a packed 12-row panel; only the first R rows are read.
template <int R, bool kDirect = false>
EMBER_AVX512_TARGET void MicroKernelAvx512(int64_t kc, const float* a, int64_t lda, const float* b,
                                           int64_t ldb, float* c, int64_t ldc, int64_t mr,
                                           int64_t nr, bool accumulate) {
  static_assert(R == 4 || R == 8 || R == 12, "the packed A panel is 12 rows");
  const float* a3 = kDirect && R > 3 ? a + 3 * lda : a;
  const float* a6 = kDirect && R > 6 ? a + 6 * lda : a;
  const float* a9 = kDirect && R > 9 ? a + 9 * lda : a;
  // clang-format off
  EMBER_ROW(0) EMBER_ROW(1) EMBER_ROW(2) EMBER_ROW(3) EMBER_ROW(4) EMBER_ROW(5)
  EMBER_ROW(6) EMBER_ROW(7) EMBER_ROW(8) EMBER_ROW(9) EMBER_ROW(10) EMBER_ROW(11)
  for (int64_t p = 0; p < kc; ++p) {
    if constexpr (R == 4) {
      // A few rows (a late layer's pixels) against streamed weights: memory-bound. Ask for B's
      // lines 16 steps (2 KiB of a packed panel) ahead: m = 4, k = 4608, n = 512 went from
      // 430-440 to 394-398 us (8 steps: 398-415, 32: 395-398). Past the end it is only a hint.
      _mm_prefetch(reinterpret_cast<const char*>(b + 16 * ldb), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(b + 16 * ldb + 16), _MM_HINT_T0);
    }
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
    EMBER_FMA(0) EMBER_FMA(1) EMBER_FMA(2) EMBER_FMA(3) EMBER_FMA(4) EMBER_FMA(5)
    EMBER_FMA(6) EMBER_FMA(7) EMBER_FMA(8) EMBER_FMA(9) EMBER_FMA(10) EMBER_FMA(11)
    if constexpr (kDirect) {
      ++a, ++a3, ++a6, ++a9;
    } else {
      a += 12;
    }
    b += ldb;
  }
  if (mr == R && nr == 32) {  // a full tile goes straight from the registers
    if (accumulate) {
      EMBER_ADD_STORE(0) EMBER_ADD_STORE(1) EMBER_ADD_STORE(2) EMBER_ADD_STORE(3)
      EMBER_ADD_STORE(4) EMBER_ADD_STORE(5) EMBER_ADD_STORE(6) EMBER_ADD_STORE(7)
      EMBER_ADD_STORE(8) EMBER_ADD_STORE(9) EMBER_ADD_STORE(10) EMBER_ADD_STORE(11)
    } else {
      EMBER_STORE(0) EMBER_STORE(1) EMBER_STORE(2) EMBER_STORE(3) EMBER_STORE(4) EMBER_STORE(5)
      EMBER_STORE(6) EMBER_STORE(7) EMBER_STORE(8) EMBER_STORE(9) EMBER_STORE(10) EMBER_STORE(11)
    }
    return;
  }
  alignas(64) float acc[12 * 32];
  EMBER_PUT(0) EMBER_PUT(1) EMBER_PUT(2) EMBER_PUT(3) EMBER_PUT(4) EMBER_PUT(5)
  EMBER_PUT(6) EMBER_PUT(7) EMBER_PUT(8) EMBER_PUT(9) EMBER_PUT(10) EMBER_PUT(11)
      // clang-format on
      StoreTile(acc, c, ldc, mr, nr, accumulate, 32);
}
#undef EMBER_ROW
#undef EMBER_FMA
#undef EMBER_PUT
#undef EMBER_STORE
#undef EMBER_ADD_STORE
#endif

// A micro-kernel with its tile shape and cache blocking.
struct KernelSpec {
  MicroKernel fn;
  // Optional forms of `fn` that compute only the first 4 or 8 rows of a panel (null: none).
  MicroKernel fn4, fn8;
  // Forms of fn, fn4, fn8 that read A unpacked (row stride lda; null: none).
  MicroKernel direct, direct4, direct8;
  const char* name;
  int64_t mr, nr;
  int64_t kc;  // depth of a packed block (the B micro-panel is kc x nr)
  int64_t mc;  // rows of a packed A block (mc x kc, in L2)
};

const KernelSpec kGeneric{MicroKernelGeneric, nullptr, nullptr, nullptr, nullptr, nullptr,
                          "generic",          kMR,     kNR,     256,     120};
#if defined(EMBER_GEMM_X86)
const KernelSpec kAvx2{MicroKernelAvx2, nullptr, nullptr, nullptr, nullptr, nullptr,
                       "avx2-fma",      kMR,     kNR,     256,     120};
// AVX-512, deep blocks: each depth block is one pass of the tiles over C, and a C larger than L2
// (1024 x 1024 floats: 4 MiB) comes back from L3 on every pass. kc = 128 made 8 passes at k = 1024,
// 512 makes 2; the 64 KiB B micro-panel streams from L2 well, the A block takes 288 KiB of it.
// MatMul 1024^3, one thread, best GF/s: kc 128: 87-88, 256: 91-94, 384: 95-97, 512: 100-102
// (NumPy/OpenBLAS: 96); 512^3, the 3x3 Conv2D and the ResNet50 GraphDef within noise. AVX2 keeps
// 256: its CPUs may have a 256 KiB L2, which a 120 x 512 A block would fill.
const KernelSpec kAvx512{MicroKernelAvx512<12>,
                         MicroKernelAvx512<4>,
                         MicroKernelAvx512<8>,
                         MicroKernelAvx512<12, true>,
                         MicroKernelAvx512<4, true>,
                         MicroKernelAvx512<8, true>,
                         "avx512f",
                         12,
                         32,
                         512,
                         144};
#endif

std::atomic<int> forced_isa{static_cast<int>(SgemmIsa::kAuto)};

const KernelSpec& ActiveSpec() {
#if defined(EMBER_GEMM_X86)
  static const SgemmIsa best = cpu::HasAvx512F()   ? SgemmIsa::kAvx512
                               : cpu::HasAvx2Fma() ? SgemmIsa::kAvx2
                                                   : SgemmIsa::kGeneric;
  SgemmIsa isa = static_cast<SgemmIsa>(forced_isa.load(std::memory_order_relaxed));
  if (isa == SgemmIsa::kAuto || static_cast<int>(isa) > static_cast<int>(best)) isa = best;
  if (isa == SgemmIsa::kAvx512) return kAvx512;
  if (isa == SgemmIsa::kAvx2) return kAvx2;
#endif
  return kGeneric;
}

// A few rows of C (m <= kSkinnyRows) against a row-major B: a layer's weights times a handful
// of pixels or one batch row. B is streamed once, four rows at a time, while the C rows stay in
// L1; the blocked kernel would pad the rows to its tile height and read B through a TLB-hostile
// stride or a copy. Written as plain loops that the compiler vectorises for each ISA target.
constexpr int64_t kSkinnyRows = 8;

inline __attribute__((always_inline)) void SkinnyGemmImpl(const View& a, const float* b,
                                                          int64_t ldb, int64_t m, int64_t n,
                                                          int64_t k, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.f);
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    const float* __restrict b0 = b + p * ldb;
    const float* __restrict b1 = b0 + ldb;
    const float* __restrict b2 = b1 + ldb;
    const float* __restrict b3 = b2 + ldb;
    for (int64_t i = 0; i < m; ++i) {
      const float a0 = a.at(i, p), a1 = a.at(i, p + 1), a2 = a.at(i, p + 2), a3 = a.at(i, p + 3);
      float* __restrict row = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) row[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
    }
  }
  for (; p < k; ++p) {
    const float* __restrict b0 = b + p * ldb;
    for (int64_t i = 0; i < m; ++i) {
      const float a0 = a.at(i, p);
      float* __restrict row = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) row[j] += a0 * b0[j];
    }
  }
}

void SkinnyGemmGeneric(const View& a, const float* b, int64_t ldb, int64_t m, int64_t n, int64_t k,
                       float* c, int64_t ldc) {
  SkinnyGemmImpl(a, b, ldb, m, n, k, c, ldc);
}
#if defined(EMBER_GEMM_X86)
__attribute__((target("avx2,fma"))) void SkinnyGemmAvx2(const View& a, const float* b, int64_t ldb,
                                                        int64_t m, int64_t n, int64_t k, float* c,
                                                        int64_t ldc) {
  SkinnyGemmImpl(a, b, ldb, m, n, k, c, ldc);
}
EMBER_AVX512_TARGET void SkinnyGemmAvx512(const View& a, const float* b, int64_t ldb, int64_t m,
                                          int64_t n, int64_t k, float* c, int64_t ldc) {
  SkinnyGemmImpl(a, b, ldb, m, n, k, c, ldc);
}
#endif

// Small products: packing would cost more than it saves.
void NaiveGemm(const View& a, const View& b, int64_t m, int64_t n, int64_t k, float* c,
               int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.f;
    for (int64_t p = 0; p < k; ++p) {
      const float av = a.at(i, p);
      if (b.cs == 1) {
        const float* brow = b.p + p * b.rs;
        for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] += av * b.at(p, j);
      }
    }
  }
}

// Widest product whose A the AVX-512 kernel reads unpacked (8 column panels).
constexpr int64_t kDirectAMaxColumns = 256;

// Equal depth blocks (k=576 -> 3 x 192, not 256+256+64): no short, overhead-heavy last block.
int64_t DepthBlock(const KernelSpec& spec, int64_t k) {
  const int64_t k_blocks = (k + spec.kc - 1) / spec.kc;
  return (k + k_blocks - 1) / k_blocks;
}

// `prepacked`: B already packed as SgemmPackB does (null: B is packed here, or read in place).
// `packed_n` > 0: the product is columns [packed_col0, packed_col0 + n) of a packed B that is
// packed_n (<= kNC) columns wide; packed_col0 is a multiple of NR.
template <int64_t MR, int64_t NR>
void BlockedGemm(const KernelSpec& spec, const View& a, const View& b, int64_t m, int64_t n,
                 int64_t k, float* c, int64_t ldc, const float* prepacked = nullptr,
                 int64_t packed_n = 0, int64_t packed_col0 = 0) {
  const int64_t kc_max = DepthBlock(spec, k);
  const int64_t mc_max = std::min(spec.mc, (m + MR - 1) / MR * MR);
  const int64_t nc_max = std::min(kNC, (n + NR - 1) / NR * NR);
  // With one block of rows, each B value is used by one micro-panel only: packing would copy
  // B (a layer's weights, megabytes when there are few rows) to read it once. Full-width
  // panels are then read where they lie; only the ragged last one is packed.
  const bool direct_b = prepacked == nullptr && b.cs == 1 && m <= spec.mc;
  // With few column panels (a convolution's 64-256 output channels), packing A costs about as
  // much as the products it feeds: the kernel then reads A's rows where they lie (row-major A
  // only; a row stride of a multiple of 512 floats would put the 12 rows in the same L1 sets).
  // A block's last panel of other than 4, 8 or 12 rows is still packed.
  const bool direct_a =
      spec.direct != nullptr && a.cs == 1 && n <= kDirectAMaxColumns && a.rs % 512 != 0;
  // Per-thread packing buffers, grown but never shrunk: no allocation, page faults or zeroing
  // per call.
  thread_local std::vector<float> a_pack, b_pack;
  const size_t a_size = static_cast<size_t>(mc_max * kc_max);
  const size_t b_size =
      prepacked != nullptr ? 0 : static_cast<size_t>((direct_b ? NR : nc_max) * kc_max);
  if (a_pack.size() < a_size) a_pack.resize(a_size);
  if (b_pack.size() < b_size) b_pack.resize(b_size);
  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = std::min(kNC, n - jc);
    const int64_t full = direct_b ? nc / NR * NR : 0;  // columns read in place
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = std::min(kc_max, k - pc);
      const float* b_block = direct_b ? b.p + pc * b.rs + jc : nullptr;
      const float* b_panels = b_pack.data();
      if (prepacked != nullptr) {  // blocks in this loop's order, each (nc rounded up to NR) x kc
        const int64_t block_n = packed_n > 0 ? packed_n : nc;
        b_panels = prepacked + packed_col0 * kc;
        prepacked += (block_n + NR - 1) / NR * NR * kc;
      } else if (nc > full) {
        PackB<NR>(View{b.p + pc * b.rs + (jc + full) * b.cs, b.rs, b.cs}, kc, nc - full,
                  b_pack.data());
      }
      for (int64_t ic = 0; ic < m; ic += spec.mc) {
        const int64_t mc = std::min(spec.mc, m - ic);
        const float* a_block = a.p + ic * a.rs + pc * a.cs;
        // Rows from `packed_from` on are read from a_pack (all of them without direct_a).
        int64_t packed_from = 0;
        if (direct_a) {
          const int64_t tail = mc % MR;
          packed_from = tail == 0 || tail == 4 || tail == 8 ? mc : mc - tail;
        }
        if (packed_from < mc) {
          PackA<MR>(View{a_block + packed_from * a.rs, a.rs, a.cs}, mc - packed_from, kc,
                    a_pack.data());
        }
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const bool in_place = jr < full;
          const float* bp = in_place ? b_block + jr : b_panels + (jr - full) * kc;
          const int64_t ldb = in_place ? b.rs : NR;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t mr = std::min(MR, mc - ir);
            const bool direct = ir < packed_from;
            MicroKernel fn = direct ? spec.direct : spec.fn;
            if (mr <= 4 && spec.fn4 != nullptr) {
              fn = direct ? spec.direct4 : spec.fn4;
            } else if (mr <= 8 && spec.fn8 != nullptr) {
              fn = direct ? spec.direct8 : spec.fn8;
            }
            const float* ap =
                direct ? a_block + ir * a.rs : a_pack.data() + (ir - packed_from) * kc;
            fn(kc, ap, a.rs, bp, ldb, c + (ic + ir) * ldc + jc + jr, ldc, mr, std::min(NR, nc - jr),
               pc > 0);
          }
        }
      }
    }
  }
}

void SerialGemm(const View& a, const View& b, int64_t m, int64_t n, int64_t k, float* c,
                int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.f);
    return;
  }
  if (m * n * k <= 16 * 16 * 16) {
    NaiveGemm(a, b, m, n, k, c, ldc);
    return;
  }
  const KernelSpec& spec = ActiveSpec();
  if (m <= kSkinnyRows && b.cs == 1) {
#if defined(EMBER_GEMM_X86)
    if (spec.fn == kAvx512.fn) {
      SkinnyGemmAvx512(a, b.p, b.rs, m, n, k, c, ldc);
      return;
    }
    if (spec.fn == kAvx2.fn) {
      SkinnyGemmAvx2(a, b.p, b.rs, m, n, k, c, ldc);
      return;
    }
#endif
    SkinnyGemmGeneric(a, b.p, b.rs, m, n, k, c, ldc);
    return;
  }
  if (spec.mr == 12) {
    BlockedGemm<12, 32>(spec, a, b, m, n, k, c, ldc);
  } else {
    BlockedGemm<kMR, kNR>(spec, a, b, m, n, k, c, ldc);
  }
}

}  // namespace

void SgemmForceIsaForTesting(SgemmIsa isa) { forced_isa.store(static_cast<int>(isa)); }

void SgemmForceGenericForTesting(bool force) {
  SgemmForceIsaForTesting(force ? SgemmIsa::kGeneric : SgemmIsa::kAuto);
}

const char* SgemmKernelName() { return ActiveSpec().name; }

void SgemmPackB(int64_t k, int64_t n, const float* b, int64_t ldb, SgemmPackedB* out) {
  const KernelSpec& spec = ActiveSpec();
  const int64_t nr = spec.nr, kc_max = DepthBlock(spec, std::max<int64_t>(k, 1));
  out->kernel = static_cast<const void*>(&spec);
  out->k = k;
  out->n = n;
  out->data.assign(static_cast<size_t>((n + nr - 1) / nr * nr * k), 0.f);
  float* dst = out->data.data();
  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = std::min(kNC, n - jc);
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = std::min(kc_max, k - pc);
      const View block{b + pc * ldb + jc, ldb, 1};
      if (nr == 32) {
        PackB<32>(block, kc, nc, dst);
      } else {
        PackB<kNR>(block, kc, nc, dst);
      }
      dst += (nc + nr - 1) / nr * nr * kc;
    }
  }
}

bool SgemmPrepacked(int64_t m, const float* a, int64_t lda, const SgemmPackedB& b, float* c,
                    int64_t ldc, ThreadPool* pool) {
  const KernelSpec& spec = ActiveSpec();
  const int64_t n = b.n, k = b.k;
  // Tiny products, and a few rows for a kernel without 4- and 8-row tiles, take SerialGemm's
  // paths that read B unpacked: declined. With the AVX-512 kernel a few rows (a late layer's
  // pixels, memory-bound on its weights) stream the packed panels in order, which reads
  // memory about twice as fast as the skinny path's row-major B.
  if (b.kernel != static_cast<const void*>(&spec) || (m <= kSkinnyRows && spec.fn4 == nullptr) ||
      n == 0 || k == 0 || m * n * k <= 16 * 16 * 16) {
    return false;
  }
  const View va{a, lda, 1}, vb{nullptr, n, 1};
  auto run = [&](int64_t col0, int64_t cols, int64_t packed_n) {
    if (spec.mr == 12) {
      BlockedGemm<12, 32>(spec, va, vb, m, cols, k, c + col0, ldc, b.data.data(), packed_n, col0);
    } else {
      BlockedGemm<kMR, kNR>(spec, va, vb, m, cols, k, c + col0, ldc, b.data.data(), packed_n, col0);
    }
  };
  const int threads = pool == nullptr ? 1 : pool->NumThreads();
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int64_t panels = (n + spec.nr - 1) / spec.nr;
  if (threads <= 1 || flops < 4e6 || n > kNC || panels < 2) {
    run(0, n, 0);
    return true;
  }
  // Columns split in whole panels over the pool (one block of columns: n <= kNC).
  const int64_t shards = std::min<int64_t>(threads, panels);
  const int64_t per = (panels + shards - 1) / shards * spec.nr;
  ParallelFor(pool, shards, static_cast<int64_t>(flops / static_cast<double>(shards)),
              [&](int64_t s0, int64_t s1) {
                for (int64_t s = s0; s < s1; ++s) {
                  const int64_t col0 = s * per;
                  if (col0 < n) run(col0, std::min(per, n - col0), n);
                }
              });
  return true;
}

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc, ThreadPool* pool) {
  const View va = trans_a ? View{a, 1, lda} : View{a, lda, 1};
  const View vb = trans_b ? View{b, 1, ldb} : View{b, ldb, 1};
  const int threads = pool == nullptr ? 1 : pool->NumThreads();
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (threads <= 1 || flops < 4e6) {
    SerialGemm(va, vb, m, n, k, c, ldc);
    return;
  }
  // Split the larger of m and n into per-thread slabs; each slab packs its own operands.
  const bool split_m = m >= n;
  const int64_t extent = split_m ? m : n;
  const int64_t align = split_m ? ActiveSpec().mr : ActiveSpec().nr;
  int64_t shards = std::min<int64_t>(threads, (extent + align - 1) / align);
  int64_t chunk = (extent + shards - 1) / shards;
  chunk = (chunk + align - 1) / align * align;
  shards = (extent + chunk - 1) / chunk;
  const int64_t cost = static_cast<int64_t>(flops / static_cast<double>(shards));
  ParallelFor(pool, shards, cost, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t begin = s * chunk;
      const int64_t len = std::min(chunk, extent - begin);
      if (split_m) {
        SerialGemm(View{va.p + begin * va.rs, va.rs, va.cs}, vb, len, n, k, c + begin * ldc, ldc);
      } else {
        SerialGemm(va, View{vb.p + begin * vb.cs, vb.rs, vb.cs}, m, len, k, c + begin, ldc);
      }
    }
  });
}

}  // namespace kernels
}  // namespace ember
