// Lite's run-time dispatched kernels against their portable definitions on odd shapes: the
// float conv GEMM on each ISA, the vectorised loops' path under EMBER_CPU_ISA, AVX-512
// requantization (lanes over the int32 range; rows in both rounding modes, 8-channel tails paired),
// the VNNI input offset, same-shape int8 ADD, and the fused AVX-512 depthwise rows against the
// portable rows.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/spin.h"
#include "ember/lite/quant.h"
#include "ember_test.h"
#include "lite/add_int8.h"
#include "lite/depthwise.h"
#include "lite/gemm_f32.h"
#include "lite/gemm_int8.h"
#include "lite/loop_isa.h"
#include "lite/thread_pool.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports false "used uninitialized" inside its own avx512fintrin.h when the inlined
// requantization below is compiled in a test TU.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "lite/requant_avx512.h"
#define EMBER_TEST_X86 1
#endif

using namespace ember::lite;

namespace {

// Why an AVX-512 kernel test checks nothing here (the kernel does not run on this machine).
constexpr const char* kNoVnni =
    "no AVX-512 VNNI here (CPU, OS or EMBER_CPU_ISA): the AVX-512 kernel it compares does not run";
constexpr const char* kNoAvx2 =
    "no AVX2 here (CPU, OS or EMBER_CPU_ISA): the AVX2 kernel it compares does not run";
// The depthwise rows' AVX2 build is compiled only for x86-64 Linux without sanitizers
// (lite/loop_isa.h), and runs only where the CPU and EMBER_CPU_ISA allow it.
constexpr const char* kNoLoopAvx2 =
    "the depthwise rows' AVX2 build does not run here (not x86-64 Linux, an ASan/TSan build, no "
    "AVX2, or EMBER_CPU_ISA): the kernel it checks is not the one that runs";
bool LoopAvx2Runs() { return GemmI16Available() && ActiveLoopIsa() != LoopIsa::kGeneric; }

std::vector<float> RandomFloats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

std::vector<int8_t> RandomInt8(size_t n, unsigned seed, int lo = -128) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(lo, 127);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(d(gen));
  return v;
}

void CheckGemmF32(int m, int n, int k) {
  const std::vector<float> x = RandomFloats(static_cast<size_t>(m) * (k + 3), 1);
  const std::vector<float> w = RandomFloats(static_cast<size_t>(n) * k, 2);
  const std::vector<float> b = RandomFloats(static_cast<size_t>(n), 3);
  PackedF32 p;
  PackWeightsF32(w.data(), b.data(), n, k, &p);
  std::vector<float> y(static_cast<size_t>(m) * n + 16, 7.f);
  GemmF32(x.data(), m, k + 3, p, -0.5f, 2.f, y.data());
  // Two panels at a time (threads splitting the columns): the same bytes.
  std::vector<float> y2(y.size(), 7.f);
  for (int j = 0; j < p.panels; j += 2) {
    GemmF32Panels(x.data(), m, k + 3, p, j, std::min(p.panels, j + 2), -0.5f, 2.f, y2.data());
  }
  EXPECT_EQ(std::memcmp(y.data(), y2.data(), sizeof(float) * y.size()), 0);
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < n; ++c) {
      double acc = b[static_cast<size_t>(c)];
      for (int q = 0; q < k; ++q)
        acc += static_cast<double>(x[static_cast<size_t>(r) * (k + 3) + q]) *
               w[static_cast<size_t>(c) * k + q];
      acc = std::fmin(2.0, std::fmax(-0.5, acc));
      EXPECT_NEAR(y[static_cast<size_t>(r) * n + c], acc, 1e-4);
    }
  }
  for (size_t i = static_cast<size_t>(m) * n; i < y.size(); ++i) EXPECT_EQ(y[i], 7.f);
}

// GemmF32Segments (rows read as `nseg` runs of `len` floats spread over a wider image) gives the
// same bytes as GemmF32 over those runs gathered into contiguous rows.
void CheckGemmF32Segments(int m, int n, int nseg, int len) {
  const int k = nseg * len, x_stride = 2 * len + 1, gap = m * x_stride + 5;
  const std::vector<float> img = RandomFloats(static_cast<size_t>(nseg) * gap + 16, 8);
  const std::vector<float> w = RandomFloats(static_cast<size_t>(n) * k, 9);
  const std::vector<float> b = RandomFloats(static_cast<size_t>(n), 10);
  PackedF32 p;
  PackWeightsF32(w.data(), b.data(), n, k, &p);
  std::vector<ptrdiff_t> off(static_cast<size_t>(nseg));
  std::vector<float> rows(static_cast<size_t>(m) * k);
  for (int s = 0; s < nseg; ++s) {
    off[static_cast<size_t>(s)] = static_cast<ptrdiff_t>(s) * gap;
    for (int r = 0; r < m; ++r)
      std::memcpy(&rows[static_cast<size_t>(r) * k + static_cast<size_t>(s) * len],
                  &img[static_cast<size_t>(s) * gap + static_cast<size_t>(r) * x_stride],
                  sizeof(float) * len);
  }
  std::vector<float> y(static_cast<size_t>(m) * n + 16, 7.f), y2(y.size(), 7.f);
  GemmF32(rows.data(), m, k, p, -0.5f, 2.f, y.data());
  GemmF32Segments(img.data(), m, x_stride, off.data(), nseg, p, -0.5f, 2.f, y2.data());
  EXPECT_EQ(std::memcmp(y.data(), y2.data(), sizeof(float) * y.size()), 0);
}

// MatVecF32 over panels [j0, j1) of an n x k matrix; outputs outside those panels untouched.
void CheckMatVecF32(int n, int k, int j0, int j1) {
  const std::vector<float> x = RandomFloats(static_cast<size_t>(k), 4);
  const std::vector<float> w = RandomFloats(static_cast<size_t>(n) * k, 5);
  const std::vector<float> b = RandomFloats(static_cast<size_t>(n), 6);
  PackedF32 p;
  PackWeightsF32(w.data(), b.data(), n, k, &p);
  std::vector<float> y(static_cast<size_t>(n), 7.f);
  MatVecF32(x.data(), p, j0, j1, -0.5f, 2.f, y.data());
  for (int c = 0; c < n; ++c) {
    if (c < 16 * j0 || c >= 16 * j1) {
      EXPECT_EQ(y[static_cast<size_t>(c)], 7.f);
      continue;
    }
    double acc = b[static_cast<size_t>(c)];
    for (int q = 0; q < k; ++q)
      acc += static_cast<double>(x[static_cast<size_t>(q)]) * w[static_cast<size_t>(c) * k + q];
    acc = std::fmin(2.0, std::fmax(-0.5, acc));
    EXPECT_NEAR(y[static_cast<size_t>(c)], acc, 1e-4);
  }
}

}  // namespace

TEST(MatVecF32, EachIsaMatchesDoubleReference) {
  for (F32Isa isa : {F32Isa::kAvx512, F32Isa::kAvx2, F32Isa::kGeneric}) {
    GemmF32ForceIsaForTesting(isa);
    CheckMatVecF32(1, 3, 0, 1);
    CheckMatVecF32(1000, 67, 0, 63);
    CheckMatVecF32(1000, 67, 9, 40);
    CheckMatVecF32(200, 130, 3, 13);
    CheckMatVecF32(200, 130, 9, 13);  // a partial last panel inside a group of four
    CheckMatVecF32(40, 1, 0, 3);
  }
  GemmF32ForceIsaForTesting(F32Isa::kAuto);
}

TEST(GemmF32, EachIsaMatchesDoubleReference) {
  for (F32Isa isa : {F32Isa::kAvx512, F32Isa::kAvx2, F32Isa::kGeneric}) {
    GemmF32ForceIsaForTesting(isa);
    const int shapes[][3] = {{1, 1, 1},
                             {7, 8, 16},
                             {9, 24, 3},
                             {17, 40, 27},
                             {8, 33, 64},
                             {3, 5, 9},
                             {13, 70, 20},
                             {36, 48, 24},
                             {9, 130, 16},
                             {12, 70, 10},
                             {10, 300, 7},
                             // 9 to 64 rows against panels past 256 KiB together: the panels
                             // in groups (the last one short, ending in a half panel).
                             {16, 300, 1100},
                             {49, 100, 2200},
                             {64, 40, 4200}};
    for (const auto& s : shapes) CheckGemmF32(s[0], s[1], s[2]);
  }
  GemmF32ForceIsaForTesting(F32Isa::kAuto);
}

// Weights packed from [k, n] (a TensorFlow filter) are the bytes PackWeightsF32 packs from their
// transpose, also when the packing reuses a larger one's buffers.
TEST(PackWeightsF32KN, MatchesPackingTheTranspose) {
  PackedF32 kn;
  for (const auto& s : {std::array<int, 2>{300, 70}, {40, 27}, {5, 3}, {16, 9}, {1, 1}}) {
    const int n = s[0], k = s[1];
    const std::vector<float> w = RandomFloats(static_cast<size_t>(n) * k, 31);  // [k, n]
    const std::vector<float> b = RandomFloats(static_cast<size_t>(n), 32);
    std::vector<float> t(w.size());  // [n, k]
    for (int p = 0; p < k; ++p) {
      for (int c = 0; c < n; ++c)
        t[static_cast<size_t>(c) * k + p] = w[static_cast<size_t>(p) * n + c];
    }
    PackedF32 nk;
    PackWeightsF32(t.data(), b.data(), n, k, &nk);
    PackWeightsF32KN(w.data(), b.data(), n, k, &kn);
    EXPECT_EQ(kn.n, n);
    EXPECT_EQ(kn.k, k);
    EXPECT_EQ(kn.panels, nk.panels);
    EXPECT_TRUE(kn.data.size() == nk.data.size() &&
                std::equal(kn.data.begin(), kn.data.end(), nk.data.begin()));
    EXPECT_TRUE(kn.bias == nk.bias);
  }
}

TEST(GemmF32Segments, EachIsaMatchesGatheredRows) {
  for (F32Isa isa : {F32Isa::kAvx512, F32Isa::kAvx2, F32Isa::kGeneric}) {
    GemmF32ForceIsaForTesting(isa);
    const int shapes[][4] = {{7, 16, 3, 9}, {13, 70, 2, 5},  {8, 8, 3, 12},
                             {1, 33, 4, 3}, {17, 24, 1, 27}, {48, 16, 3, 9}};
    for (const auto& s : shapes) CheckGemmF32Segments(s[0], s[1], s[2], s[3]);
  }
  GemmF32ForceIsaForTesting(F32Isa::kAuto);
}

TEST(RequantizeRowsVnni, MatchesScalarOnTails) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  std::mt19937 gen(5);
  std::uniform_int_distribution<int32_t> acc_d(-200000, 200000);
  // Multipliers below one only (every shift <= 0: the plain path) or up to 1.5; the whole int8
  // range (a saturating narrowing) or a clamped one.
  for (double max_scale : {0.9, 1.5}) {
    std::uniform_real_distribution<double> m_d(1e-4, max_scale);
    for (int lo : {-128, -20}) {
      const int hi = lo == -128 ? 127 : 100;
      for (int n : {8, 13, 16, 24, 40, 56}) {
        for (bool single : {false, true}) {
          const int rows = 5, stride = (n + 15) / 16 * 16 + 16;
          std::vector<int32_t> acc(static_cast<size_t>(rows) * stride), bias(n), mult(n);
          std::vector<int> shift(n);
          for (int32_t& a : acc) a = acc_d(gen);
          for (int c = 0; c < n; ++c) {
            bias[c] = acc_d(gen);
            QuantizeMultiplier(m_d(gen), &mult[c], &shift[c]);
          }
          std::vector<int8_t> out(static_cast<size_t>(rows) * n + 4, 99);
          RequantizeRowsVnni(acc.data(), rows, stride, bias.data(), mult.data(), shift.data(), n,
                             single, -3, lo, hi, out.data());
          for (int r = 0; r < rows; ++r) {
            for (int c = 0; c < n; ++c) {
              const int32_t a = WrappingAdd(acc[static_cast<size_t>(r) * stride + c], bias[c]);
              int32_t v = single ? MultiplyByQuantizedMultiplierSingleRounding(a, mult[c], shift[c])
                                 : MultiplyByQuantizedMultiplier(a, mult[c], shift[c]);
              v = std::min(hi, std::max(lo, v - 3));
              EXPECT_EQ(static_cast<int>(out[static_cast<size_t>(r) * n + c]), v);
            }
          }
          for (size_t i = static_cast<size_t>(rows) * n; i < out.size(); ++i) {
            EXPECT_EQ(out[i], 99);
          }
        }
      }
    }
  }
}

// CONV_2D's VNNI GEMM with requantization fused (ConvGemmVnni, ConvGemmVnniSegments) against
// the scalar sums and MultiplyByQuantizedMultiplier: channel counts with and without full
// 64-channel groups (the packed narrowing) and tails, multipliers that take each rounding variant
// (every e >= 1; some e = 0; left shifts; e > 23, where out_zp is not folded into the rounding),
// clamped and full int8 ranges, filter rows read in place (runs of k at offsets); up to 8
// channels, two rows per vector (PairedRows), odd row counts and rows shorter than 8 bytes; groups
// of four blocks whose last group is cut short by padding blocks (104: 7 blocks in 8, the 7th
// half used; 112: 7 whole blocks in 8; 152: 10 blocks in 12, the 10th half used), as Xception's
// 728-channel 1x1 convolutions (46 blocks in 48, the 46th half used).
TEST(ConvGemmVnni, MatchesScalar) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> byte_d(0, 255), w_d(-127, 127);
  std::uniform_int_distribution<int32_t> bias_d(-300000, 300000);
  const double scale_ranges[][2] = {{1e-4, 0.45}, {1e-4, 0.9}, {1e-4, 1.5}, {1e-10, 1e-8}};
  for (const auto& sr : scale_ranges) {
    std::uniform_real_distribution<double> m_d(sr[0], sr[1]);
    for (int lo : {-128, -20}) {
      const int hi = lo == -128 ? 127 : 100;
      for (int n : {3, 5, 8, 16, 24, 48, 56, 64, 96, 104, 112, 128, 152, 200}) {
        // (m, nseg, k): 9 rows take VNNI; 37 and 64 rows with runs of 128 (one 64-byte chunk
        // twice) and 32 bytes take AMX's tiles where the CPU has them (37: a last row tile
        // that overlaps the one before it), 66 and 72 bytes (no 32-64 byte chunk) VNNI again.
        // VNNI's tiles: 8 rows for one block per group, 6 for two or three, 4 for four, then
        // one tile of the last 1-3 rows (9, 14, 37 and 64 rows leave 1, 2, 3 or none).
        for (const auto& shape : {std::array<int, 3>{9, 1, 66}, std::array<int, 3>{9, 3, 72},
                                  std::array<int, 3>{37, 1, 128}, std::array<int, 3>{64, 3, 96},
                                  std::array<int, 3>{37, 3, 72}, std::array<int, 3>{14, 1, 40}}) {
          const int m = shape[0], nseg = shape[1], k = shape[2];
          const int nr = GroupBlocks(n, false);  // as a CONV_2D's weights are packed
          std::vector<int8_t> w(static_cast<size_t>(n) * k);
          for (int8_t& v : w) v = static_cast<int8_t>(w_d(gen));
          PackedWeights p;
          PackWeightsVnni(w.data(), n, k, nr, &p);
          std::vector<int32_t> bias(n), mult(n);
          std::vector<int> shift(n);
          for (int c = 0; c < n; ++c) {
            bias[c] = bias_d(gen);
            QuantizeMultiplier(m_d(gen), &mult[c], &shift[c]);
          }
          const int32_t zp = -7;
          PrepareFusedRequant(bias.data(), mult.data(), shift.data(), zp, lo, hi, &p);
          // Row r's run s (k / nseg bytes) at x + r * x_stride + off[s].
          const int run = k / nseg, x_stride = nseg == 1 ? k + 8 : 20;
          std::vector<ptrdiff_t> off(nseg);
          for (int s = 0; s < nseg; ++s) off[s] = static_cast<ptrdiff_t>(s) * (m * x_stride + 64);
          std::vector<uint8_t> x(static_cast<size_t>(off.back()) + m * x_stride + run + 64);
          for (uint8_t& v : x) v = static_cast<uint8_t>(byte_d(gen));
          std::vector<int8_t> out(static_cast<size_t>(m) * n + 16, 99);
          if (nseg == 1) {
            ConvGemmVnni(x.data(), m, x_stride, p, out.data(), n);
            // One column group at a time (threads splitting the channels): the same bytes.
            std::vector<int8_t> by_group(out.size(), 99);
            for (int g = 0; g < p.nb / p.nr; ++g) {
              ConvGemmVnniGroups(x.data(), m, x_stride, p, g, g + 1, by_group.data(), n);
            }
            EXPECT_TRUE(by_group == out);
          } else {
            ConvGemmVnniSegments(x.data(), m, x_stride, off.data(), nseg, p, out.data(), n);
          }
          for (int r = 0; r < m; ++r) {
            for (int c = 0; c < n; ++c) {
              int32_t a = bias[c];
              for (int i = 0; i < k; ++i) {
                const uint8_t xv = x[static_cast<size_t>(off[i / run]) +
                                     static_cast<size_t>(r) * x_stride + i % run];
                a = WrappingAdd(a, static_cast<int32_t>(xv) * w[static_cast<size_t>(c) * k + i]);
              }
              const int32_t v = std::min(
                  hi, std::max(lo, WrappingAdd(MultiplyByQuantizedMultiplier(a, mult[c], shift[c]),
                                               zp)));
              EXPECT_EQ(static_cast<int>(out[static_cast<size_t>(r) * n + c]), v);
            }
          }
          for (size_t i = static_cast<size_t>(m) * n; i < out.size(); ++i) EXPECT_EQ(out[i], 99);
        }
      }
    }
  }
}

// The AMX path of the tests above runs only where the CPU has AMX-INT8 (and EMBER_CPU_ISA does
// not cap it): say so when it did not.
TEST(ConvGemmAmx, TakesTheShapesItShould) {
  EXPECT_EQ(AmxChunkBytes(192), 64);  // a 3x3 filter row of 64 channels: 3 chunks of 64
  EXPECT_EQ(AmxChunkBytes(96), 48);
  EXPECT_EQ(AmxChunkBytes(32), 32);
  EXPECT_EQ(AmxChunkBytes(24), 0);  // too short to pay for a tile load: VNNI
  EXPECT_EQ(AmxChunkBytes(68), 0);
  if (!HasAmxInt8()) {
    EXPECT_FALSE(ConvGemmUsesAmx(64, 16));
    EMBER_NOT_RUN(
        "no AMX-INT8 here (CPU, OS or EMBER_CPU_ISA), so ConvGemmVnni's tests ran its VNNI path "
        "only");
  }
  EXPECT_TRUE(ConvGemmUsesAmx(37, 32));
  EXPECT_TRUE(ConvGemmUsesAmx(16, 8));
  EXPECT_FALSE(ConvGemmUsesAmx(15, 16));  // fewer rows than a tile
  EXPECT_FALSE(ConvGemmUsesAmx(64, 6));
}

TEST(OffsetPixels3To4, SpreadsAndFlipsEveryPixel) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  std::mt19937 gen(3);
  std::uniform_int_distribution<int> d(-128, 127);
  for (size_t pixels : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{96}}) {
    std::vector<int8_t> x(3 * pixels);
    for (int8_t& v : x) v = static_cast<int8_t>(d(gen));
    std::vector<uint8_t> out(4 * pixels + 8, 7);
    OffsetPixels3To4(x.data(), pixels, out.data());
    for (size_t i = 0; i < pixels; ++i) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(static_cast<int>(out[4 * i + c]), static_cast<uint8_t>(x[3 * i + c]) ^ 0x80);
      }
    }
    for (size_t i = 4 * pixels; i < out.size(); ++i) EXPECT_EQ(static_cast<int>(out[i]), 7);
  }
}

TEST(OffsetPixels, FlipsEachPixelsBytesAndLeavesThePaddingBytes) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  std::mt19937 gen(5);
  std::uniform_int_distribution<int> d(-128, 127);
  // Pixels of 1-130 bytes (several 64-byte chunks, masked tails) into wider ones.
  for (const auto& [c, pc] :
       {std::pair{1, 4}, std::pair{2, 4}, std::pair{5, 8}, std::pair{6, 8}, std::pair{63, 64},
        std::pair{64, 64}, std::pair{66, 68}, std::pair{130, 132}}) {
    for (size_t pixels : {size_t{0}, size_t{1}, size_t{7}, size_t{33}}) {
      std::vector<int8_t> x(static_cast<size_t>(c) * pixels);
      for (int8_t& v : x) v = static_cast<int8_t>(d(gen));
      std::vector<uint8_t> out(static_cast<size_t>(pc) * pixels + 8, 7);
      OffsetPixels(x.data(), pixels, c, pc, out.data());
      std::vector<uint8_t> want(out.size(), 7);
      for (size_t p = 0; p < pixels; ++p) {
        for (int b = 0; b < c; ++b) {
          want[p * static_cast<size_t>(pc) + static_cast<size_t>(b)] =
              static_cast<uint8_t>(x[p * static_cast<size_t>(c) + static_cast<size_t>(b)]) ^ 0x80u;
        }
      }
      EXPECT_TRUE(out == want);
    }
  }
}

#ifdef EMBER_TEST_X86
EMBER_VNNI_TARGET void RequantLanes16(const int32_t* x, const int32_t* m, const int32_t* shift,
                                      int32_t* out) {
  const __m512i v = avx512::RequantLanes(_mm512_loadu_si512(x), _mm512_loadu_si512(m),
                                         _mm512_loadu_si512(shift), false);
  _mm512_storeu_si512(out, v);
}
#endif

// 16 lanes of values and multipliers for the requantization tests: every int32 edge (INT32_MIN *
// INT32_MIN saturates; ties of both roundings), small values and any; `gen` then draws shifts.
struct RequantLanesInput {
  explicit RequantLanesInput(unsigned seed) : gen(seed) {}
  // with_int32_min: whether INT32_MIN may be a multiplier.
  void Fill(int round, bool with_int32_min, int32_t* x, int32_t* m) {
    static const int32_t edges[] = {INT32_MIN, INT32_MIN + 1, -(1 << 30), -3, -1, 0, 1,
                                    3,         1 << 30,       INT32_MAX};
    for (int i = 0; i < 16; ++i) {
      const int pick = (round + i) % 4;
      x[i] = pick == 0 ? edges[(round * 16 + i) % 10] : pick == 1 ? small(gen) : any(gen);
      const int e = with_int32_min ? (round + i) % 10 : 1 + (round + i) % 9;
      m[i] = (round + 3 * i) % 7 == 0 ? edges[e] : any(gen);
    }
  }
  std::mt19937 gen;
  std::uniform_int_distribution<int32_t> any{INT32_MIN, INT32_MAX}, small{-70000, 70000};
};

TEST(RequantLanes, DoubleRoundingMatchesScalarOverInt32) {
#ifdef EMBER_TEST_X86
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  // Values and multipliers as RequantLanesInput makes them, and shifts past either end of the
  // usual range too.
  RequantLanesInput in(21);
  std::uniform_int_distribution<int32_t> sh(-40, 40);
  for (int round = 0; round < 20000; ++round) {
    int32_t x[16], m[16], shift[16], out[16];
    in.Fill(round, true, x, m);
    for (int i = 0; i < 16; ++i)
      shift[i] = round % 3 == 0 ? sh(in.gen) : std::min(0, sh(in.gen) / 3);
    RequantLanes16(x, m, shift, out);
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(out[i], MultiplyByQuantizedMultiplier(x[i], m[i], shift[i]));
    }
  }
#endif
}

#ifdef EMBER_TEST_X86
EMBER_VNNI_TARGET bool HighLanes16(const int32_t* x, const int32_t* m, const int32_t* shift,
                                   int32_t zp, int32_t* out) {
  const __m512i mv = _mm512_loadu_si512(m), sv = _mm512_loadu_si512(shift);
  const avx512::FusedBlock h = avx512::MakeHighRounding(avx512::MakeDoubleRounding(mv, sv), zp);
  _mm512_storeu_si512(out, avx512::ApplyFusedBlock<true, true>(h, _mm512_loadu_si512(x)));
  return avx512::HighRoundingFits(mv, sv, 0xFFFF);
}
#endif

TEST(RequantLanes, HighRoundingMatchesScalarPlusZeroPoint) {
#ifdef EMBER_TEST_X86
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  // Shifts -1 to -23 (HighRoundingFits), values and multipliers as RequantLanesInput makes them
  // but no INT32_MIN multiplier: the reference's integer plus the zero point.
  RequantLanesInput in(22);
  std::uniform_int_distribution<int32_t> sh(-23, -1), zp(-128, 127);
  for (int round = 0; round < 20000; ++round) {
    int32_t x[16], m[16], shift[16], out[16];
    const int32_t z = round % 5 == 0 ? 0 : zp(in.gen);
    in.Fill(round, false, x, m);
    for (int i = 0; i < 16; ++i) shift[i] = (round + i) % 11 == 0 ? (i % 2 ? -1 : -23) : sh(in.gen);
    ASSERT_TRUE(HighLanes16(x, m, shift, z, out));
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(out[i], MultiplyByQuantizedMultiplier(x[i], m[i], shift[i]) + z);
    }
  }
  // What does not fit: a shift of 0 or above, below -23, or an INT32_MIN multiplier.
  int32_t x[16] = {}, m[16], shift[16], out[16];
  for (int bad = 0; bad < 3; ++bad) {
    for (int i = 0; i < 16; ++i) {
      m[i] = 1 << 30;
      shift[i] = -5;
    }
    if (bad == 0) shift[9] = 0;
    if (bad == 1) shift[9] = -24;
    if (bad == 2) m[9] = INT32_MIN;
    EXPECT_FALSE(HighLanes16(x, m, shift, 0, out));
  }
#endif
}

TEST(OffsetToUnsigned, FlipsTheSignBitOfEveryByte) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{200}}) {
    const std::vector<int8_t> x = RandomInt8(n, 17);
    std::vector<uint8_t> out(n + 3, 7);
    OffsetToUnsigned(x.data(), n, out.data());
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(out[i], static_cast<uint8_t>(x[i] + 128));
    for (size_t i = n; i < out.size(); ++i) EXPECT_EQ(out[i], 7);
  }
}

// Both lane kernels of int8 ADD: AddI8Avx512 covers every element, AddI8Avx2 a multiple of 8
// (the rest is the caller's); each returns how many it wrote.
using AddKernel = size_t (*)(const int8_t*, const int8_t*, size_t, const AddI8Params&, int8_t*);
size_t AddAvx512All(const int8_t* a, const int8_t* b, size_t n, const AddI8Params& p, int8_t* y) {
  AddI8Avx512(a, b, n, p, y);
  return n;
}

void CheckAddMatchesScalar(AddKernel add) {
  std::mt19937 gen(31);
  std::uniform_real_distribution<double> scale(0.002, 0.2);
  for (size_t n : {size_t{1}, size_t{15}, size_t{16}, size_t{47}, size_t{300}}) {
    for (int trial = 0; trial < 20; ++trial) {
      // The parameters PrepareAddMul derives from three scales (as TFLite's Prepare does).
      const double sa = scale(gen), sb = scale(gen), so = scale(gen) * 2;
      AddI8Params p;
      p.in_zp = trial * 13 % 256 - 128;
      p.in2_zp = trial * 29 % 256 - 128;
      p.out_zp = trial * 7 % 256 - 128;
      p.left_shift = 20;
      const double twice_max = 2 * std::max(sa, sb);
      QuantizeMultiplier(sa / twice_max, &p.m1, &p.s1);
      QuantizeMultiplier(sb / twice_max, &p.m2, &p.s2);
      QuantizeMultiplier(twice_max / ((1 << p.left_shift) * so), &p.multiplier, &p.shift);
      if (p.shift > 0) continue;  // rejected by PrepareAddMul
      p.act_min = trial % 3 == 0 ? p.out_zp : -128;
      const std::vector<int8_t> a = RandomInt8(n, 40 + trial), b = RandomInt8(n, 80 + trial);
      std::vector<int8_t> y(n + 2, 55);
      const size_t done = add(a.data(), b.data(), n, p, y.data());
      EXPECT_TRUE(done <= n && n - done < 8);
      for (size_t i = done; i < n; ++i) EXPECT_EQ(y[i], 55);
      for (size_t i = 0; i < done; ++i) {
        const int32_t x1 = (a[i] - p.in_zp) * (1 << p.left_shift);
        const int32_t x2 = (b[i] - p.in2_zp) * (1 << p.left_shift);
        const int32_t sum = MultiplyByQuantizedMultiplier(x1, p.m1, p.s1) +
                            MultiplyByQuantizedMultiplier(x2, p.m2, p.s2);
        int32_t v = MultiplyByQuantizedMultiplier(sum, p.multiplier, p.shift) + p.out_zp;
        v = std::min(p.act_max, std::max(p.act_min, v));
        EXPECT_EQ(static_cast<int>(y[i]), v);
      }
      EXPECT_EQ(y[n], 55);
    }
  }
}

TEST(AddI8Avx512, MatchesScalarAdd) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  CheckAddMatchesScalar(AddAvx512All);
}

TEST(AddI8Avx2, MatchesScalarAdd) {
  if (!GemmI16Available()) EMBER_NOT_RUN(kNoAvx2);
  CheckAddMatchesScalar(AddI8Avx2);
}

// Each input's stage alone, against TFLite's MultiplyByQuantizedMultiplier: every int8 input and
// zero point's difference, shifts 0 to -31 and beyond (the cap), multipliers of either sign
// (a negative scale) and their ends (2^30, 2^31 - 1, 0).
TEST(AddI8Avx512, InputStageMatchesReference) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  std::vector<int8_t> x(256);
  for (int i = 0; i < 256; ++i) x[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  std::mt19937 gen(77);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX);
  std::vector<int32_t> out(x.size());
  int wrong = 0;
  for (int trial = 0; trial < 400; ++trial) {
    int32_t m = trial == 0 ? (1 << 30) : trial == 1 ? INT32_MAX : trial == 2 ? 0 : mult(gen);
    if (trial % 5 == 4) m = -m;
    const int shift = trial == 2 ? 0 : -(trial % 36);
    for (int32_t zp : {-128, -1, 0, 37, 127}) {
      AddI8InputStageForTesting(x.data(), x.size(), zp, m, shift, out.data());
      for (size_t i = 0; i < x.size(); ++i) {
        const int32_t want = MultiplyByQuantizedMultiplier((x[i] - zp) * (1 << 20), m, shift);
        if (out[i] != want && ++wrong <= 5) {
          EXPECT_EQ("x " + std::to_string(x[i]) + " zp " + std::to_string(zp) + " m " +
                        std::to_string(m) + " shift " + std::to_string(shift) + ": " +
                        std::to_string(out[i]),
                    std::to_string(want));
        }
      }
    }
  }
  EXPECT_EQ(wrong, 0);
}

// Every pair of int8 inputs, at scale ratios that reach each input stage's edges: equal scales,
// one input 2^-10 to 2^-40 of the other (shifts down to -31 and below, where QuantizeMultiplier
// gives a zero multiplier), a negative scale (negative multipliers, as a hostile model could
// give; the split of the multiplier must hold for either sign) and zero points at both ends.
void CheckAddEveryInputPair(AddKernel add) {
  std::vector<int8_t> a(65536), b(65536);
  for (int i = 0; i < 65536; ++i) {
    a[static_cast<size_t>(i)] = static_cast<int8_t>(i & 255);
    b[static_cast<size_t>(i)] = static_cast<int8_t>(i >> 8);
  }
  struct Case {
    double sa, sb, so;
    int32_t za, zb, zo;
  };
  for (const Case& c : {Case{0.05, 0.05, 0.1, 0, 0, 0}, Case{0.02, 0.03, 0.04, -128, 127, 5},
                        Case{0.1, 0.1 / 1024, 0.1, 127, -128, -128}, Case{1e-9, 0.3, 0.5, 3, -7, 0},
                        Case{0.3, 0.3 / 1.1e12, 0.4, -1, 1, 9}, Case{-0.04, 0.05, 0.08, 10, -20, 0},
                        Case{0.07, -0.07, 0.2, -5, 5, 1}, Case{0.5, 0.25, 0.003, 0, 0, 0}}) {
    AddI8Params p;
    p.in_zp = c.za;
    p.in2_zp = c.zb;
    p.out_zp = c.zo;
    p.left_shift = 20;
    const double twice_max = 2 * std::max(std::fabs(c.sa), std::fabs(c.sb));
    QuantizeMultiplier(c.sa / twice_max, &p.m1, &p.s1);
    QuantizeMultiplier(c.sb / twice_max, &p.m2, &p.s2);
    QuantizeMultiplier(twice_max / ((1 << p.left_shift) * c.so), &p.multiplier, &p.shift);
    ASSERT_TRUE(p.s1 <= 0 && p.s2 <= 0 && p.shift <= 0);
    std::vector<int8_t> y(a.size());
    EXPECT_EQ(add(a.data(), b.data(), a.size(), p, y.data()), a.size());
    int wrong = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const int32_t x1 = (a[i] - p.in_zp) * (1 << p.left_shift);
      const int32_t x2 = (b[i] - p.in2_zp) * (1 << p.left_shift);
      const int32_t sum = MultiplyByQuantizedMultiplier(x1, p.m1, p.s1) +
                          MultiplyByQuantizedMultiplier(x2, p.m2, p.s2);
      const int32_t v = std::min(
          p.act_max, std::max(p.act_min, MultiplyByQuantizedMultiplier(sum, p.multiplier, p.shift) +
                                             p.out_zp));
      if (static_cast<int>(y[i]) != v && ++wrong <= 5) {
        EXPECT_EQ(std::to_string(a[i]) + " + " + std::to_string(b[i]) + " at m1 " +
                      std::to_string(p.m1) + " s1 " + std::to_string(p.s1) + " m2 " +
                      std::to_string(p.m2) + " s2 " + std::to_string(p.s2) + ": " +
                      std::to_string(y[i]),
                  std::to_string(v));
      }
    }
    EXPECT_EQ(wrong, 0);
  }
}

TEST(AddI8Avx512, EveryInputPair) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  CheckAddEveryInputPair(AddAvx512All);
}

TEST(AddI8Avx2, EveryInputPair) {
  if (!GemmI16Available()) EMBER_NOT_RUN(kNoAvx2);
  CheckAddEveryInputPair(AddI8Avx2);
}

// An input read cyclically (CyclicB: a bias or squeeze-and-excite scale repeating over the output)
// gives the bytes of the same input written out in full: periods below, at and above the 64-byte
// step, starts anywhere in the period, lengths ending mid-step.
TEST(AddI8Avx512, CyclicInputMatchesExpanded) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  AddI8Params p;
  p.in_zp = -7;
  p.in2_zp = 12;
  p.out_zp = 3;
  p.left_shift = 20;
  QuantizeMultiplier(0.5, &p.m1, &p.s1);
  QuantizeMultiplier(0.31, &p.m2, &p.s2);
  QuantizeMultiplier(0.8 / (1 << 20), &p.multiplier, &p.shift);
  MulI8Params q;
  q.in_zp = 5;
  q.in2_zp = -20;
  q.out_zp = -4;
  for (size_t period : {size_t{1}, size_t{3}, size_t{40}, size_t{64}, size_t{100}, size_t{130}}) {
    const std::vector<int8_t> v = RandomInt8(period, static_cast<uint32_t>(period));
    std::vector<int8_t> buffer(period + 64);
    for (size_t j = 0; j < buffer.size(); ++j) buffer[j] = v[j % period];
    for (size_t start : {size_t{0}, period / 2, period - 1}) {
      for (size_t n : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{300}}) {
        const std::vector<int8_t> x = RandomInt8(n, static_cast<uint32_t>(n + start));
        std::vector<int8_t> full(n);
        for (size_t i = 0; i < n; ++i) full[i] = v[(start + i) % period];
        CyclicB cb;
        cb.period = period;
        cb.start = start;
        std::vector<int8_t> want(n + 1, 9), got(n + 1, 9);
        AddI8Avx512(x.data(), full.data(), n, p, want.data());
        AddI8Avx512(x.data(), buffer.data(), n, p, got.data(), cb);
        const std::string where = " period " + std::to_string(period) + " start " +
                                  std::to_string(start) + " n " + std::to_string(n);
        if (got != want) ::ember_test::Fail(__FILE__, __LINE__, "ADD" + where);
        // MUL with an output multiplier above one (the general rounding) and below (the short
        // form).
        for (double real : {3.7, 0.004}) {
          QuantizeMultiplier(real, &q.multiplier, &q.shift);
          std::fill(want.begin(), want.end(), int8_t{9});
          std::fill(got.begin(), got.end(), int8_t{9});
          MulI8Avx512(x.data(), full.data(), n, q, want.data());
          MulI8Avx512(x.data(), buffer.data(), n, q, got.data(), cb);
          if (got != want) ::ember_test::Fail(__FILE__, __LINE__, "MUL" + where);
          for (size_t i = 0; i < n; ++i) {
            int32_t r = MultiplyByQuantizedMultiplier((x[i] - q.in_zp) * (full[i] - q.in2_zp),
                                                      q.multiplier, q.shift) +
                        q.out_zp;
            r = std::min(q.act_max, std::max(q.act_min, r));
            ASSERT_TRUE(static_cast<int>(want[i]) == r);
          }
          EXPECT_EQ(want[n], 9);
        }
        EXPECT_EQ(got[n], 9);
      }
    }
  }
}

// ctest runs the lite tests again under EMBER_CPU_ISA=generic and avx2: the loops must follow the
// cap, or those runs would test the AVX-512 path three times.
TEST(LoopIsa, FollowsEmberCpuIsa) {
  const char* cap = std::getenv("EMBER_CPU_ISA");
  const std::string name = LoopKernelName();
  if (cap != nullptr && std::string(cap) == "generic") EXPECT_EQ(name, std::string("generic"));
  if (cap != nullptr && std::string(cap) == "avx2") EXPECT_TRUE(name != "avx512");
#ifdef EMBER_LOOP_X86
  if (HasVnni()) EXPECT_EQ(name, std::string("avx512"));  // VNNI CPUs have F, BW, DQ and VL
#else
  // lite/loop_isa.h builds only the portable loops here (not x86-64 Linux, or an ASan/TSan
  // build), whatever the CPU.
  EXPECT_EQ(name, std::string("generic"));
#endif
}

TEST(DepthwiseAvx512, MatchesPortableRows) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  struct Case {
    int ih, iw, c, kh, kw, s, d;
  };
  for (const Case& cs :
       {Case{9, 11, 20, 3, 3, 1, 1}, Case{10, 9, 24, 3, 3, 2, 1}, Case{12, 12, 40, 3, 3, 1, 2},
        Case{8, 8, 16, 5, 5, 1, 1}, Case{5, 7, 7, 3, 3, 2, 1}, Case{6, 3, 33, 3, 3, 1, 2},
        Case{7, 30, 48, 3, 3, 1, 1}, Case{9, 20, 48, 3, 3, 2, 1}, Case{8, 21, 20, 3, 3, 2, 1}}) {
    WindowGeometry g;
    g.ih = cs.ih;
    g.iw = cs.iw;
    g.c = cs.c;
    g.kh = cs.kh;
    g.kw = cs.kw;
    g.stride_h = g.stride_w = cs.s;
    g.dil_h = g.dil_w = cs.d;
    g.oh = (g.ih + cs.s - 1) / cs.s;  // SAME
    g.ow = (g.iw + cs.s - 1) / cs.s;
    const int eff_h = (g.kh - 1) * cs.d + 1, eff_w = (g.kw - 1) * cs.d + 1;
    g.pad_h = std::max(0, ((g.oh - 1) * cs.s + eff_h - g.ih) / 2);
    g.pad_w = std::max(0, ((g.ow - 1) * cs.s + eff_w - g.iw) / 2);
    const int taps = g.kh * g.kw, cpad = (g.c + 15) / 16 * 16;
    const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(g.ih) * g.iw * g.c, 8);
    const std::vector<int8_t> w = RandomInt8(static_cast<size_t>(taps) * g.c, 9, -127);
    std::vector<int32_t> w32(static_cast<size_t>(taps) * cpad, 0);
    for (int t = 0; t < taps; ++t)
      for (int c = 0; c < g.c; ++c) w32[static_cast<size_t>(t) * cpad + c] = w[t * g.c + c];
    std::vector<int32_t> bias(g.c), mult(g.c);
    std::vector<int> shift(g.c);
    for (int c = 0; c < g.c; ++c) {
      bias[c] = (c * 7919) % 3000 - 1500;
      QuantizeMultiplier(0.0005 + 0.0003 * c, &mult[c], &shift[c]);
    }
    // The whole int8 range (a saturating narrowing) on even cases, a clamped one on odd ones.
    const int32_t lo = cs.c % 2 == 0 ? -128 : -20, hi = cs.c % 2 == 0 ? 127 : 100;
    DepthwiseRequant q{bias.data(), mult.data(), shift.data(), 5, lo, hi};
    std::vector<int32_t> acc(static_cast<size_t>(g.ow) * g.c);
    std::vector<int8_t> fast(static_cast<size_t>(g.ow) * g.c);
    const std::vector<float> xf = RandomFloats(x.size(), 10), wf = RandomFloats(w.size(), 11);
    const std::vector<float> bf = RandomFloats(static_cast<size_t>(g.c), 12);
    std::vector<float> yf(static_cast<size_t>(g.ow) * g.c), yf_fast(yf.size());
    for (int oy = 0; oy < g.oh; ++oy) {
      DepthwiseRowI8(g, x.data(), w.data(), -7, oy, acc.data());
      DepthwiseRowI8Avx512(g, x.data(), w32.data(), -7, q, oy, fast.data());
      for (int i = 0; i < g.ow * g.c; ++i) {
        const int c = i % g.c;
        int32_t v = MultiplyByQuantizedMultiplier(WrappingAdd(acc[i], bias[c]), mult[c], shift[c]);
        v = std::min(hi, std::max(lo, v + 5));
        EXPECT_EQ(static_cast<int>(fast[i]), v);
      }
      DepthwiseRowF32(g, xf.data(), wf.data(), bf.data(), -1.f, 1.f, oy, yf.data());
      DepthwiseRowF32Avx512(g, xf.data(), wf.data(), bf.data(), -1.f, 1.f, oy, yf_fast.data());
      for (size_t i = 0; i < yf.size(); ++i) EXPECT_NEAR(yf_fast[i], yf[i], 1e-5);
      // Split into 32-channel-aligned parts (threads splitting a few rows): the same bytes.
      std::vector<int8_t> parts(fast.size(), 0);
      std::vector<float> parts_f(yf.size(), 0.f);
      for (int c0 = 0; c0 < g.c; c0 += 32) {
        const int c1 = std::min(g.c, c0 + 32);
        DepthwiseRowI8Avx512Channels(g, x.data(), w32.data(), -7, q, oy, c0, c1, parts.data());
        DepthwiseRowF32Avx512Channels(g, xf.data(), wf.data(), bf.data(), -1.f, 1.f, oy, c0, c1,
                                      parts_f.data());
      }
      EXPECT_TRUE(parts == fast);
      EXPECT_EQ(std::memcmp(parts_f.data(), yf_fast.data(), sizeof(float) * yf.size()), 0);
    }
  }
}

// The VNNI 3x3 rows against the portable rows and the scalar requantization: blocks whose
// shifts all fit HighRoundingFits, blocks with one that does not (a scale of one half or more, a
// shift below -23), with and without an activation clamp, strides 1 and 2, partial blocks, one
// row at a time and two (two rows of one image whose rows above and below are padding too).
// A 3x3 depthwise geometry (explicit padding on every side).
WindowGeometry Geometry3x3(int ih, int iw, int c, int s, int d, int pad) {
  WindowGeometry g;
  g.ih = ih;
  g.iw = iw;
  g.c = c;
  g.kh = g.kw = 3;
  g.stride_h = g.stride_w = s;
  g.dil_h = g.dil_w = d;
  g.pad_h = g.pad_w = pad;
  g.oh = (ih + 2 * pad - (2 * d + 1)) / s + 1;
  g.ow = (iw + 2 * pad - (2 * d + 1)) / s + 1;
  return g;
}

// The float depthwise row as dispatched on this CPU (on AVX2 and AVX-512 CPUs a 3x3 filter
// with channels a multiple of 8 takes the AVX2 FMA row) against a double-precision loop: SAME
// and VALID, strides 1, 2 and 3, the clamp, images narrower than the filter, and shapes the fast
// row does not take (channels not a multiple of 8, dilation).
TEST(DepthwiseF32, DispatchedRowMatchesDoubleReference) {
  struct Case {
    int ih, iw, c, s, d, pad;
  };
  for (const Case& cs : {Case{9, 11, 8, 1, 1, 1}, Case{10, 9, 24, 2, 1, 1},
                         Case{7, 30, 48, 1, 1, 0}, Case{9, 20, 16, 2, 1, 0}, Case{4, 2, 8, 1, 1, 1},
                         Case{6, 7, 20, 1, 1, 1}, Case{8, 8, 16, 1, 2, 2},
                         // Interior quads: stride 2 padded (a scalar tail after them) and
                         // stride 3 (the quads' general loop).
                         Case{6, 21, 16, 2, 1, 1}, Case{5, 30, 8, 3, 1, 1}}) {
    const WindowGeometry g = Geometry3x3(cs.ih, cs.iw, cs.c, cs.s, cs.d, cs.pad);
    if (g.oh <= 0 || g.ow <= 0) continue;
    const size_t c = static_cast<size_t>(g.c);
    const std::vector<float> x = RandomFloats(static_cast<size_t>(g.ih) * g.iw * c, 21);
    const std::vector<float> w = RandomFloats(9 * c, 22), b = RandomFloats(c, 23);
    std::vector<float> y(static_cast<size_t>(g.ow) * c);
    for (int oy = 0; oy < g.oh; ++oy) {
      DepthwiseRowF32(g, x.data(), w.data(), b.data(), -1.5f, 1.5f, oy, y.data());
      for (int ox = 0; ox < g.ow; ++ox) {
        for (size_t ch = 0; ch < c; ++ch) {
          double sum = b[ch];
          for (int ky = 0; ky < 3; ++ky) {
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = oy * cs.s - cs.pad + ky * cs.d, ix = ox * cs.s - cs.pad + kx * cs.d;
              if (iy < 0 || iy >= g.ih || ix < 0 || ix >= g.iw) continue;
              sum += static_cast<double>(x[(static_cast<size_t>(iy) * g.iw + ix) * c + ch]) *
                     w[static_cast<size_t>(ky * 3 + kx) * c + ch];
            }
          }
          const double want = std::min(1.5, std::max(-1.5, sum));
          EXPECT_NEAR(y[static_cast<size_t>(ox) * c + ch], want, 1e-5);
        }
      }
    }
  }
}

// The AVX2 3x3 float row sums every output in one order, whichever path takes it (interior
// quads at strides 1, 2 and the wider one, single outputs after the quads, at the edges and in
// rows too narrow for a quad): the bias, then a fused multiply-add per tap inside the image in
// (ky, kx) order, the same bits as std::fma in that order (the AVX-512 row's order, which
// depthwise.cc promises; the test above allows 1e-5). Widths 1 to 7 s + 5 give every number of
// outputs after the quads at strides 1, 2 and 3, padded or not; channels 8 to 56.
TEST(DepthwiseF32, Avx2Row3x3SumsInOneOrderOnEveryPath) {
  if (!LoopAvx2Runs()) EMBER_NOT_RUN(kNoLoopAvx2);
  int outputs = 0;
  std::string first;  // the first output that differs
  for (int s = 1; s <= 3; ++s) {
    for (int iw = 1; iw <= 7 * s + 5; ++iw) {
      for (int pad : {0, 1}) {
        const int c = 8 * (1 + (iw + s + pad) % 7);  // 8 to 56 channels
        const WindowGeometry g = Geometry3x3(4, iw, c, s, 1, pad);
        if (g.oh <= 0 || g.ow <= 0) continue;
        const size_t cs = static_cast<size_t>(c);
        const std::vector<float> x = RandomFloats(static_cast<size_t>(g.ih) * iw * cs, 31);
        const std::vector<float> w = RandomFloats(9 * cs, 32), b = RandomFloats(cs, 33);
        std::vector<float> y(static_cast<size_t>(g.ow) * cs);
        for (int oy = 0; oy < g.oh; ++oy) {
          std::fill(y.begin(), y.end(), std::nanf(""));
          DepthwiseRowF32(g, x.data(), w.data(), b.data(), -1.5f, 1.5f, oy, y.data());
          for (int ox = 0; ox < g.ow; ++ox) {
            for (size_t ch = 0; ch < cs; ++ch) {
              float sum = b[ch];
              for (int ky = 0; ky < 3; ++ky) {
                for (int kx = 0; kx < 3; ++kx) {
                  const int iy = oy * s - pad + ky, ix = ox * s - pad + kx;
                  if (iy < 0 || iy >= g.ih || ix < 0 || ix >= iw) continue;
                  sum = std::fma(x[(static_cast<size_t>(iy) * iw + ix) * cs + ch],
                                 w[static_cast<size_t>(ky * 3 + kx) * cs + ch], sum);
                }
              }
              const float want = std::min(1.5f, std::max(-1.5f, sum));
              const float got = y[static_cast<size_t>(ox) * cs + ch];
              if (std::memcmp(&got, &want, sizeof got) != 0 && first.empty()) {
                first = "stride " + std::to_string(s) + " iw " + std::to_string(iw) + " pad " +
                        std::to_string(pad) + " c " + std::to_string(c) + " oy " +
                        std::to_string(oy) + " ox " + std::to_string(ox) + " ch " +
                        std::to_string(ch) + ": " + std::to_string(got) +
                        " != " + std::to_string(want);
              }
              ++outputs;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(first, std::string());
  EXPECT_TRUE(outputs > 10000);
}

// Why an AVX2 kernel test checks nothing here.

// The AVX2 int8 GEMM (int16 weight pairs) against plain int32 dot products: odd depths (a
// zero-padded last pair), channel counts off the 8-channel blocks, row counts off the 4-row tile,
// the int8 extremes.
TEST(GemmI16, MatchesScalarDots) {
  if (!GemmI16Available()) EMBER_NOT_RUN(kNoAvx2);
  for (const auto& [m, n, k] :
       {std::array<int, 3>{1, 8, 2}, std::array<int, 3>{5, 13, 27}, std::array<int, 3>{9, 64, 576},
        std::array<int, 3>{4, 24, 1}, std::array<int, 3>{7, 130, 33},
        std::array<int, 3>{1, 1000, 1280}, std::array<int, 3>{2, 40, 7}}) {
    for (bool narrow : {false, true}) {  // the int16 pairs, and the int8 ones widened as loaded
      std::vector<int8_t> x = RandomInt8(static_cast<size_t>(m) * k, 31);
      std::vector<int8_t> w = RandomInt8(static_cast<size_t>(n) * k, 32);
      x[0] = -128;
      w[0] = -128;
      PackedI16 p;
      PackWeightsI16(w.data(), n, k, &p, narrow);
      EXPECT_EQ(p.data8.empty(), !narrow);
      std::vector<int16_t> x16(static_cast<size_t>(m) * p.k2 * 2);
      WidenRowsI8(x.data(), m, k, k, p.k2, x16.data());
      const int stride = p.blocks * 8;
      std::vector<int32_t> acc(static_cast<size_t>(m) * stride, -1);
      GemmI16(x16.data(), m, p, acc.data(), stride);
      for (int r = 0; r < m; ++r) {
        for (int c = 0; c < n; ++c) {
          int32_t want = 0;
          for (int i = 0; i < k; ++i) {
            want += int32_t{x[static_cast<size_t>(r) * k + i]} * w[static_cast<size_t>(c) * k + i];
          }
          EXPECT_EQ(acc[static_cast<size_t>(r) * stride + c], want);
        }
      }
    }
  }
}

// The AVX2 requantization against MultiplyByQuantizedMultiplier over the int32 range, the
// shifts QuantizeMultiplier makes (left shifts up to 30, right shifts to -31 and past it),
// halves that round each way, and clamps.
TEST(RequantizeRowsAvx2, MatchesScalarDoubleRounding) {
  if (!GemmI16Available()) EMBER_NOT_RUN(kNoAvx2);
  std::mt19937 gen(77);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), small(-70000, 70000);
  std::uniform_real_distribution<double> log_scale(-14.0, 4.0);
  const int n = 8 * 64 + 5;
  std::vector<int32_t> acc(n), bias(n), mult(n);
  std::vector<int> shift(n);
  std::vector<int8_t> y(n);
  for (int round = 0; round < 200; ++round) {
    for (int c = 0; c < n; ++c) {
      acc[c] = round % 3 == 0 ? any(gen) : small(gen);
      bias[c] = round % 5 == 0 ? any(gen) : small(gen) / 8;
      QuantizeMultiplier(std::exp2(log_scale(gen)), &mult[c], &shift[c]);
      if (c % 37 == 0) shift[c] = -40 + c % 9;  // past the 31 RoundingDivideByPOT clamps to
      if (c % 41 == 0) acc[c] = (c % 2 ? 1 : -1) * (int32_t{1} << (c % 20)) - bias[c];
      // Blocks with an INT32_MIN multiplier (the saturating product), positive shifts, e = 0.
      if (round % 4 == 1 && c % 64 == 3) mult[c] = INT32_MIN;
      if (round % 4 == 2 && c % 16 == 5) shift[c] = c % 3;
      if (c % 53 == 0) acc[c] = round % 2 ? INT32_MIN : INT32_MAX;
    }
    const int32_t zp = round % 7 - 3, lo = round % 2 ? -128 : -20, hi = round % 2 ? 127 : 90;
    const int done = RequantizeRowsAvx2(acc.data(), 1, n, bias.data(), mult.data(), shift.data(), n,
                                        zp, lo, hi, y.data());
    EXPECT_EQ(done, n / 8 * 8);
    for (int c = 0; c < done; ++c) {
      const int32_t a = WrappingAdd(acc[c], bias[c]);
      const int32_t v = WrappingAdd(MultiplyByQuantizedMultiplier(a, mult[c], shift[c]), zp);
      EXPECT_EQ(int{y[c]}, std::max(lo, std::min(hi, v)));
    }
  }
}

// The int8 depthwise row as dispatched here (the vectorised loop's AVX2 or baseline build; the
// fused 3x3 rows are tested below) against the definition: padding taps add
// nothing, strides 1 and 2, the int8 extremes and zero points at both ends.
TEST(DepthwiseI8, DispatchedRowMatchesDefinition) {
  struct Case {
    int ih, iw, c, s, pad, zp;
  };
  for (const Case& cs :
       {Case{9, 11, 16, 1, 1, -128}, Case{10, 9, 48, 2, 1, 5}, Case{7, 30, 32, 1, 0, 127},
        Case{4, 2, 16, 1, 1, 0}, Case{6, 7, 24, 2, 1, -3}}) {
    const WindowGeometry g = Geometry3x3(cs.ih, cs.iw, cs.c, cs.s, 1, cs.pad);
    if (g.oh <= 0 || g.ow <= 0) continue;
    const size_t c = static_cast<size_t>(g.c);
    std::vector<int8_t> x = RandomInt8(static_cast<size_t>(g.ih) * g.iw * c, 41);
    std::vector<int8_t> w = RandomInt8(9 * c, 42);
    x[0] = -128;
    w[0] = -128;
    std::vector<int32_t> acc(static_cast<size_t>(g.ow) * c);
    for (int oy = 0; oy < g.oh; ++oy) {
      DepthwiseRowI8(g, x.data(), w.data(), cs.zp, oy, acc.data());
      for (int ox = 0; ox < g.ow; ++ox) {
        for (size_t ch = 0; ch < c; ++ch) {
          int32_t want = 0;
          for (int t = 0; t < 9; ++t) {
            const int iy = oy * cs.s - cs.pad + t / 3, ix = ox * cs.s - cs.pad + t % 3;
            if (iy < 0 || iy >= g.ih || ix < 0 || ix >= g.iw) continue;
            want += int32_t{w[t * c + ch]} *
                    (int32_t{x[(static_cast<size_t>(iy) * g.iw + ix) * c + ch]} - cs.zp);
          }
          EXPECT_EQ(acc[static_cast<size_t>(ox) * c + ch], want);
        }
      }
    }
  }
}

// The fused AVX2 3x3 rows (pairs ring, requantization in registers) against the definition and
// MultiplyByQuantizedMultiplier: strides 1 and 2, row ranges that start inside the image and
// end at its bottom (the ring's reuse and its padding rows), left shifts and e = 0 next to
// ordinary right shifts, clamps, and no result for an INT32_MIN multiplier.
TEST(DepthwiseI8, FusedRowsMatchDefinitionAndRequantization) {
  if (!LoopAvx2Runs()) EMBER_NOT_RUN(kNoLoopAvx2);
  struct Case {
    int ih, iw, c, s, pad, zp, oy0, oy1;
    bool odd_shifts;
  };
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> log_scale(-12.0, -1.0);
  for (const Case& cs :
       {Case{9, 11, 16, 1, 1, -128, 0, 9, false}, Case{10, 9, 48, 2, 1, 5, 1, 5, true},
        Case{7, 30, 32, 1, 0, 127, 2, 5, false}, Case{4, 2, 16, 1, 1, 0, 0, 4, true},
        Case{12, 7, 32, 2, 1, -3, 0, 6, false}, Case{6, 6, 16, 1, 1, 9, 3, 6, true},
        // Stride 2 unpadded and padded on an even width (the pairs' unchecked interior), and a
        // row narrower than the filter.
        Case{8, 21, 16, 2, 0, 4, 0, 3, false}, Case{9, 20, 32, 2, 1, -7, 0, 5, true},
        Case{5, 1, 16, 1, 1, 2, 0, 5, false}}) {
    const WindowGeometry g = Geometry3x3(cs.ih, cs.iw, cs.c, cs.s, 1, cs.pad);
    ASSERT_TRUE(cs.oy1 <= g.oh);
    const size_t c = static_cast<size_t>(g.c);
    std::vector<int8_t> x = RandomInt8(static_cast<size_t>(g.ih) * g.iw * c, 51);
    std::vector<int8_t> w = RandomInt8(9 * c, 52);
    x[0] = -128;
    w[0] = -128;
    std::vector<int32_t> bias(c), mult(c);
    std::vector<int> shift(c);
    for (size_t ch = 0; ch < c; ++ch) {
      bias[ch] = static_cast<int32_t>(ch * 977 % 20000) - 10000;
      QuantizeMultiplier(std::exp2(log_scale(gen)), &mult[ch], &shift[ch]);
      if (cs.odd_shifts && ch % 5 == 1) shift[ch] = 0;  // e = 0
      if (cs.odd_shifts && ch % 7 == 2) shift[ch] = 2;  // a left shift
    }
    DepthwiseRequant q;
    q.bias = bias.data();
    q.mult = mult.data();
    q.shift = shift.data();
    q.out_zp = cs.zp / 2;
    q.act_min = cs.odd_shifts ? -100 : -128;
    q.act_max = cs.odd_shifts ? 90 : 127;
    const size_t rows = static_cast<size_t>(cs.oy1 - cs.oy0);
    std::vector<int8_t> y(rows * g.ow * c + 3, 77);
    DepthwiseFusedI8 packed;
    ASSERT_TRUE(PackDepthwiseRowsI8Fused(g, w.data(), cs.zp, q, &packed));
    // The constants are packed: the kernel reads none of w, the bias, multipliers or shifts.
    const std::vector<int8_t> w_kept = w;
    const std::vector<int32_t> bias_kept = bias, mult_kept = mult;
    std::fill(w.begin(), w.end(), int8_t{0});
    std::fill(bias.begin(), bias.end(), 0);
    std::fill(mult.begin(), mult.end(), 0);
    // All channels, or (c > 16) two parts as threads split them: the same bytes.
    if (c > 16) {
      ASSERT_TRUE(DepthwiseRowsI8Fused(g, x.data(), packed, q, cs.oy0, cs.oy1, 16,
                                       static_cast<int>(c), y.data()));
      for (size_t i = 0; i < rows * g.ow; ++i) {
        for (size_t ch = 0; ch < 16; ++ch) EXPECT_EQ(y[i * c + ch], 77);  // not its part
      }
      ASSERT_TRUE(DepthwiseRowsI8Fused(g, x.data(), packed, q, cs.oy0, cs.oy1, 0, 16, y.data()));
    } else {
      ASSERT_TRUE(DepthwiseRowsI8Fused(g, x.data(), packed, q, cs.oy0, cs.oy1, 0,
                                       static_cast<int>(c), y.data()));
    }
    w = w_kept;
    bias = bias_kept;
    mult = mult_kept;
    for (size_t i = rows * g.ow * c; i < y.size(); ++i) EXPECT_EQ(y[i], 77);
    int wrong = 0;
    for (int oy = cs.oy0; oy < cs.oy1; ++oy) {
      for (int ox = 0; ox < g.ow; ++ox) {
        for (size_t ch = 0; ch < c; ++ch) {
          int32_t acc = 0;
          for (int t = 0; t < 9; ++t) {
            const int iy = oy * cs.s - cs.pad + t / 3, ix = ox * cs.s - cs.pad + t % 3;
            if (iy < 0 || iy >= g.ih || ix < 0 || ix >= g.iw) continue;
            acc += int32_t{w[t * c + ch]} *
                   (int32_t{x[(static_cast<size_t>(iy) * g.iw + ix) * c + ch]} - cs.zp);
          }
          const int32_t v = WrappingAdd(
              MultiplyByQuantizedMultiplier(WrappingAdd(acc, bias[ch]), mult[ch], shift[ch]),
              q.out_zp);
          const int want = std::max(q.act_min, std::min(q.act_max, v));
          const size_t at = (static_cast<size_t>(oy - cs.oy0) * g.ow + ox) * c + ch;
          if (int{y[at]} != want && ++wrong <= 5) EXPECT_EQ(int{y[at]}, want);
        }
      }
    }
    EXPECT_EQ(wrong, 0);
    mult[c - 1] = INT32_MIN;  // TFLite's saturating case: the caller's general path
    EXPECT_FALSE(PackDepthwiseRowsI8Fused(g, w.data(), cs.zp, q, &packed));
    EXPECT_FALSE(DepthwiseRowsI8Fused(g, x.data(), packed, q, cs.oy0, cs.oy1, 0,
                                      static_cast<int>(c), y.data()));
    // Constants packed for another geometry (fewer channels) do not fit this one.
    mult[c - 1] = mult_kept[c - 1];
    const WindowGeometry narrow = Geometry3x3(cs.ih, cs.iw, 16, cs.s, 1, cs.pad);
    ASSERT_TRUE(PackDepthwiseRowsI8Fused(narrow, w.data(), cs.zp, q, &packed));
    if (c > 16) {
      EXPECT_FALSE(DepthwiseRowsI8Fused(g, x.data(), packed, q, cs.oy0, cs.oy1, 0,
                                        static_cast<int>(c), y.data()));
    }
  }
}

// The im2col widened as it is gathered (a first layer over RGB) against the definition: every
// window of every output row, padding rows and columns, strides, filter rows of 1 to 16 values
// and images too small for a 16-byte load, each in a buffer of exactly its size (no load may pass
// its end). Nothing may be written past the 16 values of room after the row's last pixel.
TEST(Im2ColWidenI8, MatchesDefinitionOnEveryWindow) {
  if (!GemmI16Available()) EMBER_NOT_RUN(kNoAvx2);
  const int8_t pad = -7;
  const int16_t canary = 12345;
  int checked = 0;
  for (int ic : {1, 2, 3, 4, 5, 8, 16}) {
    for (int kw : {1, 2, 3, 5}) {
      if (kw * ic > 16) continue;
      for (int kh : {1, 3, 4}) {
        for (int s : {1, 2, 3}) {
          for (int p : {0, 1, 2}) {
            for (int ih : {1, 2, 5, 9}) {
              for (int iw : {1, 3, 6, 11}) {
                const int oh = (ih + 2 * p - kh) / s + 1, ow = (iw + 2 * p - kw) / s + 1;
                if (ih + 2 * p < kh || iw + 2 * p < kw || oh < 1 || ow < 1) continue;
                WindowGeometry g;
                g.ih = ih;
                g.iw = iw;
                g.c = ic;
                g.oh = oh;
                g.ow = ow;
                g.kh = kh;
                g.kw = kw;
                g.stride_h = g.stride_w = s;
                g.pad_h = g.pad_w = p;
                const int k = kh * kw * ic, k2 = (k + 1) / 2;
                const size_t row = 2 * static_cast<size_t>(k2);
                ASSERT_TRUE(Im2ColRowWidenI8Applies(g, k2));
                const std::vector<int8_t> image =
                    RandomInt8(static_cast<size_t>(ih) * iw * ic, static_cast<unsigned>(ic + iw));
                for (int oy = 0; oy < oh; ++oy) {
                  std::vector<int16_t> x16(static_cast<size_t>(ow) * row + 16 + 8, canary);
                  Im2ColRowWidenI8(g, image.data(), image.size(), oy, pad, k2, x16.data());
                  for (int ox = 0; ox < ow; ++ox) {
                    const int16_t* got = x16.data() + static_cast<size_t>(ox) * row;
                    for (int ky = 0; ky < kh; ++ky) {
                      for (int kx = 0; kx < kw; ++kx) {
                        const int iy = oy * s - p + ky, ix = ox * s - p + kx;
                        const bool inside = iy >= 0 && iy < ih && ix >= 0 && ix < iw;
                        for (int c = 0; c < ic; ++c) {
                          const int want =
                              inside ? image[(static_cast<size_t>(iy) * iw + ix) * ic + c] : pad;
                          EXPECT_EQ(got[(ky * kw + kx) * ic + c], want);
                        }
                      }
                    }
                    for (size_t q = static_cast<size_t>(k); q < row; ++q) EXPECT_EQ(got[q], 0);
                  }
                  for (size_t q = static_cast<size_t>(ow) * row + 16; q < x16.size(); ++q) {
                    EXPECT_EQ(x16[q], canary);
                  }
                  ++checked;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_TRUE(checked > 1000);
  // It does not apply to a filter row of 17 values, to dilation or to 17 filter rows.
  WindowGeometry wide;
  wide.ih = wide.iw = wide.ow = wide.oh = 4;
  wide.c = 17;
  EXPECT_FALSE(Im2ColRowWidenI8Applies(wide, 9));
  WindowGeometry dilated;
  dilated.ih = dilated.iw = 6;
  dilated.c = 3;
  dilated.kh = dilated.kw = 3;
  dilated.dil_h = dilated.dil_w = 2;
  dilated.oh = dilated.ow = 2;
  EXPECT_FALSE(Im2ColRowWidenI8Applies(dilated, 14));
  dilated.dil_h = dilated.dil_w = 1;
  EXPECT_TRUE(Im2ColRowWidenI8Applies(dilated, 14));
  WindowGeometry tall;
  tall.ih = 20;
  tall.iw = 4;
  tall.c = 1;
  tall.kh = 17;
  tall.oh = tall.ow = 4;
  EXPECT_FALSE(Im2ColRowWidenI8Applies(tall, 9));
  tall.kh = 16;
  EXPECT_TRUE(Im2ColRowWidenI8Applies(tall, 8));
}

TEST(DepthwiseVnni3x3, MatchesPortableRows) {
  if (!HasVnni()) EMBER_NOT_RUN(kNoVnni);
  struct Case {
    int ih, iw, c, s;
    bool clamp;
  };
  for (const Case& cs :
       {Case{9, 11, 48, 1, false}, Case{9, 11, 48, 1, true}, Case{10, 13, 40, 2, true},
        Case{7, 6, 20, 2, false}, Case{6, 30, 33, 1, true}}) {
    WindowGeometry g;
    g.ih = cs.ih;
    g.iw = cs.iw;
    g.c = cs.c;
    g.kh = g.kw = 3;
    g.stride_h = g.stride_w = cs.s;
    g.oh = (g.ih + cs.s - 1) / cs.s;  // SAME
    g.ow = (g.iw + cs.s - 1) / cs.s;
    g.pad_h = std::max(0, ((g.oh - 1) * cs.s + 3 - g.ih) / 2);
    g.pad_w = std::max(0, ((g.ow - 1) * cs.s + 3 - g.iw) / 2);
    const int32_t in_zp = -7, out_zp = -3;
    const std::vector<int8_t> x = RandomInt8(static_cast<size_t>(g.ih) * g.iw * g.c, 18);
    const std::vector<int8_t> w = RandomInt8(static_cast<size_t>(9) * g.c, 19, -127);
    std::vector<int32_t> bias(g.c), mult(g.c);
    std::vector<int> shift(g.c);
    for (int c = 0; c < g.c; ++c) {
      bias[c] = (c * 7919) % 3000 - 1500;
      QuantizeMultiplier(0.002 + 0.0007 * c, &mult[c], &shift[c]);
    }
    // Block 1 (channels 16-31) has a channel of scale 0.75 (shift 0), block 2 one of scale
    // 2^-30 (shift -29): both take the general form; blocks 0 and 3 take MakeHighRounding's.
    if (g.c > 17) QuantizeMultiplier(0.75, &mult[17], &shift[17]);
    if (g.c > 40) QuantizeMultiplier(std::ldexp(1.0, -30), &mult[40], &shift[40]);
    const int32_t lo = cs.clamp ? out_zp : -128, hi = cs.clamp ? 90 : 127;
    DepthwiseRequant q{nullptr, mult.data(), shift.data(), out_zp, lo, hi};
    Depthwise3x3Vnni packed;
    PackDepthwise3x3Vnni(w.data(), bias.data(), g.c, in_zp, &packed);
    ember::AlignedVector<uint8_t> scratch(Depthwise3x3VnniScratch(g));  // 64-byte aligned
    const size_t row = static_cast<size_t>(g.ow) * g.c;
    std::vector<int32_t> acc(row);
    std::vector<int8_t> want(row * g.oh), one(row * g.oh, 0), two(row * g.oh, 0);
    for (int oy = 0; oy < g.oh; ++oy) {
      DepthwiseRowI8(g, x.data(), w.data(), in_zp, oy, acc.data());
      for (size_t i = 0; i < row; ++i) {
        const int c = static_cast<int>(i % g.c);
        int32_t v = MultiplyByQuantizedMultiplier(WrappingAdd(acc[i], bias[c]), mult[c], shift[c]);
        want[oy * row + i] = static_cast<int8_t>(std::min(hi, std::max(lo, v + out_zp)));
      }
      DepthwiseRowsI8Vnni3x3(g, x.data(), packed, in_zp, q, oy, 1, 0, g.c, scratch.data(),
                             one.data() + oy * row);
    }
    // Pairs of rows (at stride 1 from one buffer of four-row groups; the last row alone when
    // the count is odd), channels split into 32-channel parts as threads split them.
    for (int oy = 0; oy < g.oh; oy += 2) {
      for (int c0 = 0; c0 < g.c; c0 += 32) {
        DepthwiseRowsI8Vnni3x3(g, x.data(), packed, in_zp, q, oy, std::min(2, g.oh - oy), c0,
                               std::min(g.c, c0 + 32), scratch.data(), two.data() + oy * row);
      }
    }
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(static_cast<int>(one[i]), static_cast<int>(want[i]));
      EXPECT_EQ(static_cast<int>(two[i]), static_cast<int>(want[i]));
    }
  }
}

// Every task of every job (some after the workers went to sleep) runs exactly once, on a thread
// index below num_threads, before Run returns; and each thread starts with its own share: the
// caller (thread 0) runs the first task.
TEST(LiteThreadPool, EachTaskOnceAndEachThreadItsOwnShareFirst) {
  for (int threads : {2, 3, 4}) {
    ThreadPool pool(threads);
    for (int tasks = 1; tasks <= 13; ++tasks) {
      for (int job = 0; job < 30; ++job) {
        std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
        std::atomic<int> bad_thread{0};
        auto body = [&](int task, int thread) {
          if (thread < 0 || thread >= threads) bad_thread.fetch_add(1);
          runs[static_cast<size_t>(task)].fetch_add(1);
        };
        // Now and then a pause longer than a worker spins: the job must wake a sleeping worker.
        if (job % 10 == 9) std::this_thread::sleep_for(std::chrono::microseconds(500));
        pool.Run(tasks, body);
        for (int t = 0; t < tasks; ++t) EXPECT_EQ(runs[static_cast<size_t>(t)].load(), 1);
        EXPECT_EQ(bad_thread.load(), 0);
      }
    }
  }
  // Two threads, 8 tasks: the caller's share is 0-3 and the worker's 4-7. Task 0 waits until the
  // worker has claimed a task, and every other task waits until task 0 has started, so neither
  // thread can run through the other's share first, whatever the machine's load: the caller
  // must take task 0 and the worker task 4. (Claimed by whichever thread is free, the worker's
  // first task was 0 or 1.)
  ThreadPool pool(2);
  const auto wait_for = [](const std::atomic<bool>& flag) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!flag.load() && std::chrono::steady_clock::now() < limit) std::this_thread::yield();
  };
  for (int job = 0; job < 20; ++job) {
    std::atomic<int> task0_thread{-1}, worker_first{-1};
    std::atomic<bool> task0_started{false}, worker_claimed{false};
    auto body = [&](int task, int thread) {
      if (thread == 1 && !worker_claimed.exchange(true)) worker_first.store(task);
      if (task == 0) {
        task0_thread.store(thread);
        task0_started.store(true);
        wait_for(worker_claimed);
      } else {
        wait_for(task0_started);
      }
    };
    pool.Run(8, body);
    EXPECT_EQ(task0_thread.load(), 0);
    EXPECT_EQ(worker_first.load(), 4);
  }
}

// LeaveCpu (what a lite worker does when it finds itself on the caller's CPU) moves the thread
// to another CPU it may use and gives it back every CPU it had: the pool must not pin its threads.
TEST(LiteThreadPool, LeaveCpuMovesTheThreadOffTheCpuAndKeepsItsAffinity) {
#if defined(__linux__)
  cpu_set_t before;
  ASSERT_TRUE(sched_getaffinity(0, sizeof(before), &before) == 0);
  if (CPU_COUNT(&before) < 2 || ember::spin::AllowedCpus() != CPU_COUNT(&before)) {
    std::printf("NOT CHECKED: this thread may run on %d CPU(s); moving needs two\n",
                CPU_COUNT(&before));
    return;
  }
  // The scheduler may move the thread back between LeaveCpu and the check (rarely, and not
  // three times in a row): one move seen is enough.
  bool moved = false;
  for (int attempt = 0; attempt < 3 && !moved; ++attempt) {
    const int cpu = ember::spin::CurrentCpu();
    ASSERT_TRUE(cpu >= 0);
    ember::spin::LeaveCpu(cpu);
    moved = ember::spin::CurrentCpu() != cpu;
  }
  EXPECT_TRUE(moved);
  cpu_set_t after;
  ASSERT_TRUE(sched_getaffinity(0, sizeof(after), &after) == 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  // A CPU the thread does not run on: nothing to do.
  const int elsewhere = ember::spin::CurrentCpu() == 0 ? 1 : 0;
  ember::spin::LeaveCpu(elsewhere);
  ASSERT_TRUE(sched_getaffinity(0, sizeof(after), &after) == 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
#else
  EXPECT_EQ(ember::spin::CurrentCpu(), -1);
  std::printf("NOT CHECKED: no CPU placement on this OS; LeaveCpu does nothing\n");
#endif
}

EMBER_TEST_MAIN
