// GEMM, MatMul, Conv2D, DepthwiseConv2dNative and pooling against plain reference loops
// (double accumulation), including SAME padding with odd sizes, strides and dilations.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "ember_test.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel_test_util.h"

using namespace ember_kernel_test;  // NOLINT
using ember::Code;

namespace {

std::vector<double> RefGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                            const float* b) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        s += static_cast<double>(ta ? a[p * m + i] : a[i * k + p]) *
             static_cast<double>(tb ? b[j * k + p] : b[p * n + j]);
      }
      c[static_cast<size_t>(i * n + j)] = s;
    }
  }
  return c;
}

// TensorFlow's SAME/VALID arithmetic, written out independently of the kernels' helper.
void OutSize(int64_t in, int64_t k, int64_t s, int64_t d, bool same, int64_t* out, int64_t* pad) {
  int64_t eff = (k - 1) * d + 1;
  *out = same ? (in + s - 1) / s : (in - eff) / s + 1;
  *pad = same ? std::max<int64_t>(0, (*out - 1) * s + eff - in) / 2 : 0;
}

std::vector<double> RefConv(const Tensor& x, const Tensor& f, int64_t sh, int64_t sw, int64_t dh,
                            int64_t dw, bool same, bool depthwise, std::vector<int64_t>* out_dims) {
  const int64_t n = x.dim_size(0), h = x.dim_size(1), w = x.dim_size(2), c = x.dim_size(3);
  const int64_t kh = f.dim_size(0), kw = f.dim_size(1), m = f.dim_size(3);
  int64_t oh, ow, ph, pw;
  OutSize(h, kh, sh, dh, same, &oh, &ph);
  OutSize(w, kw, sw, dw, same, &ow, &pw);
  const int64_t oc = depthwise ? c * m : m;
  *out_dims = {n, oh, ow, oc};
  std::vector<double> y(static_cast<size_t>(n * oh * ow * oc), 0.0);
  const float* xp = x.data<float>();
  const float* fp = f.data<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            int64_t iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            for (int64_t ci = 0; ci < c; ++ci)
              for (int64_t mi = 0; mi < m; ++mi) {
                int64_t o = depthwise ? ci * m + mi : mi;
                y[static_cast<size_t>(((b * oh + oy) * ow + ox) * oc + o)] +=
                    static_cast<double>(xp[((b * h + iy) * w + ix) * c + ci]) *
                    fp[((ky * kw + kx) * c + ci) * m + mi];
              }
          }
  return y;
}

}  // namespace

static void CheckGemmSizes();

TEST(Gemm, MatchesReferenceOnEdgeSizesAndTransposes) {
  for (bool generic : {false, true}) {
    ember::kernels::SgemmForceGenericForTesting(generic);
    if (generic) EXPECT_EQ(std::string(ember::kernels::SgemmKernelName()), std::string("generic"));
    CheckGemmSizes();
  }
  ember::kernels::SgemmForceGenericForTesting(false);
}

// Every micro-kernel the CPU has (AVX-512F 12x32, AVX2 6x16, generic), forced in turn.
TEST(Gemm, EachIsaMatchesReference) {
  using ember::kernels::SgemmIsa;
  for (SgemmIsa isa : {SgemmIsa::kAvx512, SgemmIsa::kAvx2, SgemmIsa::kGeneric}) {
    ember::kernels::SgemmForceIsaForTesting(isa);
    CheckGemmSizes();
  }
  ember::kernels::SgemmForceIsaForTesting(SgemmIsa::kAuto);
}

// {16, 64, 300} .. {148, 40, 50} end AVX-512's blocks on its 4- and 8-row edge tiles (12 + 4,
// 12 + 8, 144 + 4); the last five read A unpacked (n <= 256) with blocks ending in 4, 8, 11 or
// 1 rows, over several depth blocks, and once with the packed fallback (a row stride of 512).
static void CheckGemmSizes() {
  const int64_t sizes[][3] = {{1, 1, 1},      {1, 17, 5},      {7, 1, 9},      {6, 16, 256},
                              {13, 35, 300},  {64, 64, 64},    {121, 50, 513}, {5, 2049, 3},
                              {12, 32, 192},  {25, 67, 385},   {145, 33, 200}, {2, 31, 17},
                              {8, 40, 131},   {3, 100, 1000},  {9, 70, 66},    {16, 64, 300},
                              {20, 33, 100},  {148, 40, 50},   {28, 97, 129},  {155, 64, 576},
                              {296, 96, 300}, {152, 256, 140}, {157, 70, 260}, {40, 64, 512}};
  unsigned seed = 10;
  for (const auto& s : sizes) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      const int64_t m = s[0], n = s[1], k = s[2];
      Tensor a = RandomFloats({m * k}, seed++), b = RandomFloats({k * n}, seed++);
      Tensor c(DataType::kFloat, TensorShape({m * n}));
      ember::kernels::Sgemm(ta, tb, m, n, k, a.data<float>(), ta ? m : k, b.data<float>(),
                            tb ? k : n, c.data<float>(), n, nullptr);
      double err = MaxRelError(c, RefGemm(ta, tb, m, n, k, a.data<float>(), b.data<float>()));
      EXPECT_TRUE(err < 1e-4);
    }
  }
}

TEST(TestUtil, MaxRelErrorDoesNotHideNaN) {
  Tensor a = RandomFloats({4}, 1);
  std::vector<double> same(a.data<float>(), a.data<float>() + 4);
  EXPECT_TRUE(MaxRelError(a, same) == 0.0);
  a.data<float>()[2] = std::nanf("");
  EXPECT_FALSE(MaxRelError(a, same) < 1e-4);
  a.data<float>()[2] = static_cast<float>(same[2]);
  same[3] = std::nan("");
  EXPECT_FALSE(MaxRelError(a, same) < 1e-4);
}

// A constant B packed once (a fused layer's weights) gives the product Sgemm gives, under every
// micro-kernel; products that read B unpacked, or a B packed for another micro-kernel, decline.
TEST(Gemm, PrepackedBMatchesReference) {
  using ember::kernels::SgemmIsa;
  const int64_t sizes[][3] = {{9, 33, 100},  {16, 64, 300}, {150, 40, 513}, {40, 2100, 20},
                              {4, 64, 300},  {3, 3, 3},     {1, 70, 300},   {7, 100, 200},
                              {5, 2100, 40}, {8, 96, 1000}};
  unsigned seed = 300;
  for (SgemmIsa isa : {SgemmIsa::kAvx512, SgemmIsa::kAvx2, SgemmIsa::kGeneric}) {
    ember::kernels::SgemmForceIsaForTesting(isa);
    for (const auto& s : sizes) {
      const int64_t m = s[0], n = s[1], k = s[2];
      Tensor a = RandomFloats({m * k}, seed++), b = RandomFloats({k * n}, seed++);
      Tensor c(DataType::kFloat, TensorShape({m * n}));
      ember::kernels::SgemmPackedB packed;
      ember::kernels::SgemmPackB(k, n, b.data<float>(), n, &packed);
      const bool used =
          ember::kernels::SgemmPrepacked(m, a.data<float>(), k, packed, c.data<float>(), n);
      // A few rows take the packed panels only with the AVX-512 kernel's 4- and 8-row tiles.
      const bool avx512 = std::string(ember::kernels::SgemmKernelName()) == "avx512f";
      EXPECT_TRUE(used == ((m > 8 || avx512) && m * n * k > 4096));
      if (used) {
        EXPECT_TRUE(MaxRelError(c, RefGemm(false, false, m, n, k, a.data<float>(),
                                           b.data<float>())) < 1e-4);
      }
    }
  }
  ember::kernels::SgemmForceIsaForTesting(SgemmIsa::kGeneric);
  Tensor a = RandomFloats({16 * 300}, 1), b = RandomFloats({300 * 64}, 2);
  Tensor c(DataType::kFloat, TensorShape({16 * 64}));
  ember::kernels::SgemmPackedB packed;
  ember::kernels::SgemmPackB(300, 64, b.data<float>(), 64, &packed);
  ember::kernels::SgemmForceIsaForTesting(SgemmIsa::kAuto);
  const bool other = std::string(ember::kernels::SgemmKernelName()) != "generic";
  EXPECT_TRUE(ember::kernels::SgemmPrepacked(16, a.data<float>(), 300, packed, c.data<float>(),
                                             64) == !other);
}

#if defined(__linux__)
// 1 when the mapping of /proc/self/smaps that holds `address` carries MADV_HUGEPAGE ("hg" in its
// VmFlags), 0 when it does not, -1 when no mapping holds it.
static int HasHugePageAdvice(std::uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;  // a mapping's first line: "start-end perms offset dev ..."
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= address && address < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.find(" hg") != std::string::npos ? 1 : 0;
    }
  }
  return -1;
}
#endif

// Packed weights of 2 MiB or more (a late layer's, streamed from memory each run) start on a
// huge-page boundary and, on Linux, carry MADV_HUGEPAGE ("hg" in the mapping's VmFlags); the
// product a few rows take from them is still the reference's. Smaller ones are 64-byte aligned.
TEST(Gemm, LargePackedWeightsAskForHugePages) {
  const int64_t m = 4, k = 1152, n = 512;  // 2.25 MiB packed
  Tensor a = RandomFloats({m * k}, 11), b = RandomFloats({k * n}, 12);
  Tensor c(DataType::kFloat, TensorShape({m * n}));
  ember::kernels::SgemmPackedB packed;
  ember::kernels::SgemmPackB(k, n, b.data<float>(), n, &packed);
  const auto address = reinterpret_cast<std::uintptr_t>(packed.data.data());
  EXPECT_TRUE(packed.data.size() * sizeof(float) >= (size_t{2} << 20));
  EXPECT_TRUE(address % (std::uintptr_t{2} << 20) == 0);
  if (ember::kernels::SgemmPrepacked(m, a.data<float>(), k, packed, c.data<float>(), n)) {
    EXPECT_TRUE(MaxRelError(c, RefGemm(false, false, m, n, k, a.data<float>(), b.data<float>())) <
                1e-4);
  }
#if defined(__linux__)
  // A mapping of our own, advised directly, is the control: an emulator (qemu-user runs the ARM
  // cells' tests) may ignore the advice or not report it, and then nothing can be checked.
  const size_t control_bytes = size_t{4} << 20;
  void* control =
      mmap(nullptr, control_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_TRUE(control != MAP_FAILED);
  const bool reported = control != MAP_FAILED &&
                        madvise(control, control_bytes, MADV_HUGEPAGE) == 0 &&
                        HasHugePageAdvice(reinterpret_cast<std::uintptr_t>(control)) == 1;
  if (control != MAP_FAILED) munmap(control, control_bytes);
  if (reported) {
    EXPECT_TRUE(HasHugePageAdvice(address) == 1);
  } else {
    std::printf("NOT CHECKED: this system does not report MADV_HUGEPAGE in /proc/self/smaps\n");
  }
#endif
  ember::kernels::SgemmPackedB small;
  ember::kernels::SgemmPackB(300, 64, b.data<float>(), 64, &small);
  EXPECT_TRUE(reinterpret_cast<std::uintptr_t>(small.data.data()) % 64 == 0);
}

// With a pool, a prepacked product splits its columns in whole panels over the threads.
TEST(Gemm, PrepackedBThreadedMatchesReference) {
  ember::ThreadPool pool("intra", 2);
  const int64_t sizes[][3] = {
      {4, 300, 500}, {16, 100, 1000}, {1, 1000, 300}, {20, 2100, 30}, {9, 33, 2000}};
  unsigned seed = 700;
  for (const auto& s : sizes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    Tensor a = RandomFloats({m * k}, seed++), b = RandomFloats({k * n}, seed++);
    Tensor c(DataType::kFloat, TensorShape({m * n}));
    ember::kernels::SgemmPackedB packed;
    ember::kernels::SgemmPackB(k, n, b.data<float>(), n, &packed);
    if (ember::kernels::SgemmPrepacked(m, a.data<float>(), k, packed, c.data<float>(), n, &pool)) {
      EXPECT_TRUE(MaxRelError(c, RefGemm(false, false, m, n, k, a.data<float>(), b.data<float>())) <
                  1e-4);
    } else {
      EXPECT_TRUE(m <= 8);
    }
  }
}

TEST(Gemm, ThreadedMatchesSerial) {
  ember::ThreadPool pool("intra", 2);
  for (auto dims : {std::vector<int64_t>{300, 40, 200}, std::vector<int64_t>{40, 300, 200}}) {
    const int64_t m = dims[0], n = dims[1], k = dims[2];
    Tensor a = RandomFloats({m * k}, 1), b = RandomFloats({k * n}, 2);
    Tensor c1(DataType::kFloat, TensorShape({m * n})), c2(DataType::kFloat, TensorShape({m * n}));
    ember::kernels::Sgemm(false, false, m, n, k, a.data<float>(), k, b.data<float>(), n,
                          c1.data<float>(), n, nullptr);
    ember::kernels::Sgemm(false, false, m, n, k, a.data<float>(), k, b.data<float>(), n,
                          c2.data<float>(), n, &pool);
    EXPECT_TRUE(Values<float>(c1) == Values<float>(c2));
  }
}

TEST(MatMul, TransposeAttrsAndSizeErrors) {
  Tensor a = RandomFloats({5, 3}, 1), b = RandomFloats({4, 5}, 2);
  Result r = Run(Node("MatMul")
                     .Type("T", DataType::kFloat)
                     .Bool("transpose_a", true)
                     .Bool("transpose_b", true),
                 {a, b});
  ASSERT_OK(r.status);
  ASSERT_TRUE(r.outputs[0].shape() == TensorShape({3, 4}));
  EXPECT_TRUE(MaxRelError(r.outputs[0],
                          RefGemm(true, true, 3, 4, 5, a.data<float>(), b.data<float>())) < 1e-5);
  r = Run(Node("MatMul", "mm").Type("T", DataType::kFloat), {a, b});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status.message(), "Matrix size-incompatible: In[0]: [5,3], In[1]: [4,5]"));
  r = Run(Node("MatMul", "mm").Type("T", DataType::kFloat), {RandomFloats({2, 2, 2}, 3), b});
  EXPECT_TRUE(Contains(r.status.message(), "In[0] is not a matrix"));
}

TEST(MatMul, Int32) {
  Result r = Run(Node("MatMul").Type("T", DataType::kInt32),
                 {Ints32({2, 2}, {1, 2, 3, 4}), Ints32({2, 2}, {5, 6, 7, 8})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<int32_t>(r.outputs[0]) == (std::vector<int32_t>{19, 22, 43, 50}));
}

TEST(BatchMatMul, V2BroadcastsBatchDims) {
  Tensor x = RandomFloats({2, 1, 3, 4}, 1), y = RandomFloats({5, 4, 2}, 2);
  Result r = Run(Node("BatchMatMulV2").Type("T", DataType::kFloat), {x, y});
  ASSERT_OK(r.status);
  ASSERT_TRUE(r.outputs[0].shape() == TensorShape({2, 5, 3, 2}));
  for (int b0 = 0; b0 < 2; ++b0) {
    for (int b1 = 0; b1 < 5; ++b1) {
      std::vector<double> want =
          RefGemm(false, false, 3, 2, 4, x.data<float>() + b0 * 12, y.data<float>() + b1 * 8);
      for (int i = 0; i < 6; ++i) {
        EXPECT_NEAR(r.outputs[0].data<float>()[(b0 * 5 + b1) * 6 + i], want[i], 1e-5);
      }
    }
  }
  r = Run(Node("BatchMatMul", "bmm").Type("T", DataType::kFloat), {x, y});
  EXPECT_TRUE(Contains(r.status.message(), "must have compatible batch dimensions"));
}

TEST(Conv2D, SameValidStridesDilationsOddSizes) {
  struct Case {
    std::vector<int64_t> in, filter;
    int64_t sh, sw, dh, dw;
    const char* padding;
  };
  const Case cases[] = {
      {{1, 7, 5, 3}, {3, 3, 3, 4}, 1, 1, 1, 1, "SAME"},
      {{2, 7, 6, 2}, {3, 3, 2, 5}, 2, 2, 1, 1, "SAME"},
      {{1, 9, 9, 3}, {4, 2, 3, 2}, 3, 2, 1, 1, "SAME"},
      {{1, 8, 7, 2}, {3, 3, 2, 3}, 1, 1, 2, 2, "SAME"},
      {{1, 8, 7, 2}, {3, 2, 2, 3}, 2, 1, 1, 2, "VALID"},
      {{2, 4, 4, 8}, {1, 1, 8, 16}, 1, 1, 1, 1, "VALID"},
      {{1, 5, 5, 1}, {5, 5, 1, 1}, 1, 1, 1, 1, "VALID"},
      {{1, 30, 30, 16}, {3, 3, 16, 20}, 1, 1, 1, 1, "SAME"},
      // Large enough for the GEMM to pack patches straight from the image: strides,
      // dilations, two row chunks, and depth blocks that split a window's channels.
      {{1, 40, 40, 20}, {3, 3, 20, 24}, 1, 1, 1, 1, "SAME"},
      {{2, 23, 19, 7}, {3, 3, 7, 33}, 2, 2, 1, 1, "SAME"},
      {{1, 21, 22, 5}, {3, 3, 5, 17}, 1, 1, 2, 2, "SAME"},
      {{1, 20, 17, 6}, {4, 3, 6, 9}, 2, 3, 2, 1, "VALID"},
      // Dilated windows of 8 pixels or more read in place (lite's GEMM on AVX-512 and AVX2):
      // column dilation (a run per tap), rows dilated only (a run per filter row), a stride.
      {{1, 14, 19, 3}, {3, 2, 3, 7}, 1, 1, 1, 3, "SAME"},
      {{2, 15, 12, 4}, {2, 3, 4, 6}, 1, 1, 3, 1, "VALID"},
      {{1, 19, 40, 8}, {3, 3, 8, 20}, 1, 2, 2, 2, "SAME"},
  };
  unsigned seed = 100;
  for (const Case& c : cases) {
    Tensor x = RandomFloats(TensorShape(c.in), seed++),
           f = RandomFloats(TensorShape(c.filter), seed++);
    Result r = Run(Node("Conv2D")
                       .Type("T", DataType::kFloat)
                       .Ints("strides", {1, c.sh, c.sw, 1})
                       .Ints("dilations", {1, c.dh, c.dw, 1})
                       .Str("padding", c.padding),
                   {x, f});
    ASSERT_OK(r.status);
    std::vector<int64_t> dims;
    std::vector<double> want =
        RefConv(x, f, c.sh, c.sw, c.dh, c.dw, std::string(c.padding) == "SAME", false, &dims);
    EXPECT_TRUE(r.outputs[0].shape() == TensorShape(dims));
    EXPECT_TRUE(MaxRelError(r.outputs[0], want) < 1e-5);
  }
}

// The second case has 7 row chunks on one thread and 8 (an even share) on two.
TEST(Conv2D, IntraOpPoolGivesTheSameResult) {
  ember::ThreadPool pool("intra", 2);
  const std::vector<int64_t> shapes[][2] = {{{2, 40, 40, 8}, {3, 3, 8, 24}},
                                            {{1, 56, 56, 64}, {3, 3, 64, 40}}};
  unsigned seed = 7;
  for (const auto& s : shapes) {
    Tensor x = RandomFloats(TensorShape(s[0]), seed++), f = RandomFloats(TensorShape(s[1]), seed++);
    Node n = Node("Conv2D")
                 .Type("T", DataType::kFloat)
                 .Ints("strides", {1, 1, 1, 1})
                 .Str("padding", "SAME");
    Result serial = Run(n, {x, f});
    Result threaded = Run(n, {x, f}, nullptr, &pool);
    ASSERT_OK(serial.status);
    ASSERT_OK(threaded.status);
    EXPECT_TRUE(Values<float>(serial.outputs[0]) == Values<float>(threaded.outputs[0]));
  }
  EXPECT_TRUE(pool.NumScheduled() > 0);
}

TEST(Conv2D, BadAttrsAndShapes) {
  Result r = Run(Node("Conv2D", "conv")
                     .Type("T", DataType::kFloat)
                     .Ints("strides", {2, 1, 1, 1})
                     .Str("padding", "SAME"),
                 {RandomFloats({1, 4, 4, 1}, 1), RandomFloats({3, 3, 1, 1}, 2)});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status.message(), "conv"));
  r = Run(Node("Conv2D", "conv")
              .Type("T", DataType::kFloat)
              .Ints("strides", {1, 1, 1, 1})
              .Str("padding", "VALID"),
          {RandomFloats({1, 4, 4, 2}, 1), RandomFloats({3, 3, 3, 1}, 2)});
  EXPECT_TRUE(Contains(r.status.message(), "depth"));
  r = Run(Node("Conv2D", "conv")
              .Type("T", DataType::kFloat)
              .Ints("strides", {1, 1, 1, 1})
              .Str("padding", "VALID"),
          {RandomFloats({1, 2, 2, 1}, 1), RandomFloats({3, 3, 1, 1}, 2)});
  // A VALID window larger than the input gives an empty output in TensorFlow, not an error.
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({1, 0, 0, 1}));
  r = Run(Node("Conv2D", "conv")
              .Type("T", DataType::kFloat)
              .Ints("strides", {1, 1, 1, 1})
              .Str("padding", "BOGUS"),
          {RandomFloats({1, 2, 2, 1}, 1), RandomFloats({1, 1, 1, 1}, 2)});
  EXPECT_TRUE(!r.status.ok());
}

// EXPLICIT padding: the reference pads the image with zeros and runs VALID; bad amounts are
// errors naming the node.
TEST(Conv2D, ExplicitPadding) {
  struct Case {
    const char* op;
    std::vector<int64_t> in, filter, pads;  // pads: top, bottom, left, right
    int64_t s, d;
  };
  const Case cases[] = {{"Conv2D", {1, 7, 5, 3}, {3, 3, 3, 4}, {1, 2, 0, 3}, 2, 1},
                        {"Conv2D", {2, 6, 6, 2}, {1, 1, 2, 5}, {1, 0, 2, 1}, 1, 1},
                        {"Conv2D", {1, 8, 7, 2}, {3, 2, 2, 3}, {2, 2, 0, 1}, 1, 2},
                        {"DepthwiseConv2dNative", {1, 7, 6, 3}, {3, 3, 3, 2}, {0, 1, 2, 0}, 2, 1}};
  unsigned seed = 300;
  for (const Case& c : cases) {
    Tensor x = RandomFloats(TensorShape(c.in), seed++),
           f = RandomFloats(TensorShape(c.filter), seed++);
    Tensor padded(DataType::kFloat, TensorShape({c.in[0], c.in[1] + c.pads[0] + c.pads[1],
                                                 c.in[2] + c.pads[2] + c.pads[3], c.in[3]}));
    std::fill(padded.data<float>(), padded.data<float>() + padded.NumElements(), 0.f);
    for (int64_t b = 0; b < c.in[0]; ++b)
      for (int64_t y = 0; y < c.in[1]; ++y)
        for (int64_t i = 0; i < c.in[2] * c.in[3]; ++i)
          padded.data<float>()[((b * padded.dim_size(1) + y + c.pads[0]) * padded.dim_size(2) +
                                c.pads[2]) *
                                   c.in[3] +
                               i] = x.data<float>()[(b * c.in[1] + y) * c.in[2] * c.in[3] + i];
    Result r = Run(
        Node(c.op)
            .Type("T", DataType::kFloat)
            .Ints("strides", {1, c.s, c.s, 1})
            .Ints("dilations", {1, c.d, c.d, 1})
            .Str("padding", "EXPLICIT")
            .Ints("explicit_paddings", {0, 0, c.pads[0], c.pads[1], c.pads[2], c.pads[3], 0, 0}),
        {x, f});
    ASSERT_OK(r.status);
    std::vector<int64_t> dims;
    std::vector<double> want =
        RefConv(padded, f, c.s, c.s, c.d, c.d, false, std::string(c.op) != "Conv2D", &dims);
    EXPECT_TRUE(r.outputs[0].shape() == TensorShape(dims));
    EXPECT_TRUE(MaxRelError(r.outputs[0], want) < 1e-5);
  }
  struct Bad {
    const char* padding;
    std::vector<int64_t> amounts;
    Code code;
    const char* says;
  };
  const Bad bad[] = {
      {"EXPLICIT", {0, 0, 1, 1, 1, 1}, Code::kInvalidArgument, "must contain 8 values, but got: 6"},
      {"EXPLICIT", {0, 0, 1, -1, 1, 1, 0, 0}, Code::kInvalidArgument, "must be nonnegative"},
      {"EXPLICIT", {1, 0, 1, 1, 1, 1, 0, 0}, Code::kUnimplemented, "batch or depth"},
      {"SAME", {0, 0, 1, 1, 1, 1, 0, 0}, Code::kInvalidArgument, "must be empty"},
  };
  for (const Bad& b : bad) {
    Result r = Run(Node("Conv2D", "conv")
                       .Type("T", DataType::kFloat)
                       .Ints("strides", {1, 1, 1, 1})
                       .Str("padding", b.padding)
                       .Ints("explicit_paddings", b.amounts),
                   {RandomFloats({1, 4, 4, 1}, 1), RandomFloats({3, 3, 1, 1}, 2)});
    EXPECT_TRUE(r.status.code() == b.code);
    EXPECT_TRUE(Contains(r.status.message(), "conv"));
    EXPECT_TRUE(Contains(r.status.message(), b.says));
  }
}

// Grouped Conv2D (filter depth C / groups, Keras's Conv2D(groups=...)): each group of output
// channels against a reference that reads only its group's input channels; fused bias and
// activation; a filter depth of 1 (ConvNeXt's groups = C); threads; TensorFlow's shape errors.
static std::vector<double> RefGroupedConv(const Tensor& x, const Tensor& f, int64_t s, bool same,
                                          std::vector<int64_t>* out_dims) {
  const int64_t n = x.dim_size(0), h = x.dim_size(1), w = x.dim_size(2), c = x.dim_size(3);
  const int64_t kh = f.dim_size(0), kw = f.dim_size(1), cg = f.dim_size(2), oc = f.dim_size(3);
  const int64_t og = oc / (c / cg);
  int64_t oh, ow, ph, pw;
  OutSize(h, kh, s, 1, same, &oh, &ph);
  OutSize(w, kw, s, 1, same, &ow, &pw);
  *out_dims = {n, oh, ow, oc};
  std::vector<double> y(static_cast<size_t>(n * oh * ow * oc), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t o = 0; o < oc; ++o)
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t iy = oy * s - ph + ky, ix = ox * s - pw + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              for (int64_t i = 0; i < cg; ++i) {
                y[static_cast<size_t>(((b * oh + oy) * ow + ox) * oc + o)] +=
                    static_cast<double>(
                        x.data<float>()[((b * h + iy) * w + ix) * c + (o / og) * cg + i]) *
                    f.data<float>()[((ky * kw + kx) * cg + i) * oc + o];
              }
            }
  return y;
}

TEST(Conv2D, Grouped) {
  struct Case {
    std::vector<int64_t> in, filter;
    int64_t s;
    const char* padding;
  };
  const Case cases[] = {
      {{1, 7, 6, 8}, {3, 3, 2, 12}, 1, "SAME"},     // 4 groups of 2 -> 3
      {{2, 9, 8, 6}, {3, 3, 3, 4}, 2, "VALID"},     // 2 groups
      {{1, 5, 5, 8}, {1, 1, 4, 6}, 1, "VALID"},     // 1x1: not the pointwise GEMM
      {{1, 9, 11, 6}, {7, 7, 1, 6}, 1, "SAME"},     // groups = C: depthwise
      {{1, 8, 8, 4}, {3, 3, 1, 8}, 2, "SAME"},      // groups = C, two filters each
      {{1, 30, 30, 16}, {3, 3, 4, 32}, 1, "SAME"},  // several row chunks
  };
  ember::ThreadPool pool("intra", 3);
  unsigned seed = 500;
  for (const Case& c : cases) {
    Tensor x = RandomFloats(TensorShape(c.in), seed++),
           f = RandomFloats(TensorShape(c.filter), seed++);
    const int64_t oc = c.filter[3];
    std::vector<int64_t> dims;
    std::vector<double> want = RefGroupedConv(x, f, c.s, std::string(c.padding) == "SAME", &dims);
    Node plain = Node("Conv2D")
                     .Type("T", DataType::kFloat)
                     .Ints("strides", {1, c.s, c.s, 1})
                     .Str("padding", c.padding);
    Result r = Run(plain, {x, f});
    ASSERT_OK(r.status);
    EXPECT_TRUE(r.outputs[0].shape() == TensorShape(dims));
    EXPECT_TRUE(MaxRelError(r.outputs[0], want) < 1e-5);
    Result threaded = Run(plain, {x, f}, nullptr, &pool);
    ASSERT_OK(threaded.status);
    EXPECT_TRUE(Values<float>(r.outputs[0]) == Values<float>(threaded.outputs[0]));
    // The graph optimizer's form: bias and Relu6 applied to every group's channels.
    Tensor bias = RandomFloats(TensorShape({oc}), seed++);
    Result fused = Run(Node("_EmberFusedConv2D")
                           .Type("T", DataType::kFloat)
                           .Ints("strides", {1, c.s, c.s, 1})
                           .Str("padding", c.padding)
                           .Value("filter", f)
                           .Value("bias", bias)
                           .Str("activation", "Relu6"),
                       {x});
    ASSERT_OK(fused.status);
    for (size_t i = 0; i < want.size(); ++i) {
      want[i] = std::min(6.0, std::max(0.0, want[i] + bias.data<float>()[i % oc]));
    }
    EXPECT_TRUE(MaxRelError(fused.outputs[0], want) < 1e-5);
  }
  struct Bad {
    std::vector<int64_t> in, filter;
    const char* says;
  };
  const Bad bad[] = {
      {{1, 4, 4, 6}, {3, 3, 4, 4}, "input depth must be evenly divisible by filter depth: 6 vs 4"},
      {{1, 4, 4, 6},
       {3, 3, 12, 6},
       "input depth must be evenly divisible by filter depth: 6 vs 12"},
      {{1, 4, 4, 6},
       {3, 3, 1, 3},
       "output depth must be evenly divisible by number of groups: 3 vs 6"},
      {{1, 4, 4, 6}, {3, 3, 0, 6}, "filter must not have zero elements"},
      {{1, 4, 4, 6}, {3, 3, 6, 0}, "filter must not have zero elements"},
  };
  for (const Bad& b : bad) {
    Result r = Run(Node("Conv2D", "conv")
                       .Type("T", DataType::kFloat)
                       .Ints("strides", {1, 1, 1, 1})
                       .Str("padding", "SAME"),
                   {RandomFloats(TensorShape(b.in), 1), RandomFloats(TensorShape(b.filter), 2)});
    EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
    EXPECT_TRUE(Contains(r.status.message(), "conv"));
    EXPECT_TRUE(Contains(r.status.message(), b.says));
  }
}

TEST(DepthwiseConv, MultipliersStridesDilations) {
  struct Case {
    std::vector<int64_t> in, filter;
    int64_t s, d;
    const char* padding;
  };
  const Case cases[] = {{{1, 7, 6, 3}, {3, 3, 3, 1}, 2, 1, "SAME"},
                        {{2, 5, 5, 2}, {2, 3, 2, 3}, 1, 1, "VALID"},
                        {{1, 9, 8, 4}, {3, 3, 4, 2}, 1, 2, "SAME"}};
  unsigned seed = 200;
  for (const Case& c : cases) {
    Tensor x = RandomFloats(TensorShape(c.in), seed++),
           f = RandomFloats(TensorShape(c.filter), seed++);
    Result r = Run(Node("DepthwiseConv2dNative")
                       .Type("T", DataType::kFloat)
                       .Ints("strides", {1, c.s, c.s, 1})
                       .Ints("dilations", {1, c.d, c.d, 1})
                       .Str("padding", c.padding),
                   {x, f});
    ASSERT_OK(r.status);
    std::vector<int64_t> dims;
    std::vector<double> want =
        RefConv(x, f, c.s, c.s, c.d, c.d, std::string(c.padding) == "SAME", true, &dims);
    EXPECT_TRUE(r.outputs[0].shape() == TensorShape(dims));
    EXPECT_TRUE(MaxRelError(r.outputs[0], want) < 1e-5);
  }
}

TEST(Pool, SamePaddingIgnoresPaddedCells) {
  // 1x3x3x1 input 1..9, 2x2 window, stride 2, SAME: windows {1,2,4,5} {3,6} {7,8} {9}.
  Tensor x = Floats({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Result r = Run(Node("AvgPool")
                     .Type("T", DataType::kFloat)
                     .Ints("ksize", {1, 2, 2, 1})
                     .Ints("strides", {1, 2, 2, 1})
                     .Str("padding", "SAME"),
                 {x});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{3.f, 4.5f, 7.5f, 9.f}));
  Tensor neg = Floats({1, 3, 3, 1}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  r = Run(Node("MaxPool")
              .Type("T", DataType::kFloat)
              .Ints("ksize", {1, 2, 2, 1})
              .Ints("strides", {1, 2, 2, 1})
              .Str("padding", "SAME"),
          {neg});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{-1.f, -3.f, -7.f, -9.f}));
  r = Run(Node("MaxPool", "pool")
              .Type("T", DataType::kFloat)
              .Ints("ksize", {2, 2, 2, 1})
              .Ints("strides", {1, 1, 1, 1})
              .Str("padding", "SAME"),
          {neg});
  EXPECT_TRUE(Contains(r.status.message(), "batch and depth"));
}

TEST(Nn, BiasAddAndSoftmax) {
  Result r = Run(Node("BiasAdd").Type("T", DataType::kFloat),
                 {Floats({2, 2}, {1, 2, 3, 4}), Floats({2}, {10, 20})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{11, 22, 13, 24}));
  // NHWC (a row of channels at a time) and NCHW (a plane per channel) over 4-D inputs.
  std::vector<float> x(2 * 3 * 5 * 7), want_nhwc(x.size()), want_nchw(x.size());
  std::vector<float> bias(7), bias3(3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;
  for (size_t c = 0; c < 7; ++c) bias[c] = 100.0f * static_cast<float>(c + 1);
  for (size_t c = 0; c < 3; ++c) bias3[c] = -1000.0f * static_cast<float>(c + 1);
  for (size_t i = 0; i < x.size(); ++i) {
    want_nhwc[i] = x[i] + bias[i % 7];
    want_nchw[i] = x[i] + bias3[(i / 35) % 3];
  }
  r = Run(Node("BiasAdd").Type("T", DataType::kFloat),
          {Floats({2, 3, 5, 7}, x), Floats({7}, bias)});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == want_nhwc);
  r = Run(Node("BiasAdd").Type("T", DataType::kFloat).Str("data_format", "NCHW"),
          {Floats({2, 3, 5, 7}, x), Floats({3}, bias3)});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<float>(r.outputs[0]) == want_nchw);
  r = Run(Node("BiasAdd", "ba").Type("T", DataType::kFloat), {Floats({2, 2}, {}), Floats({3}, {})});
  EXPECT_TRUE(Contains(r.status.message(), "Must provide as many biases"));
  r = Run(Node("Softmax").Type("T", DataType::kFloat),
          {Floats({2, 3}, {1, 2, 3, 1000, 1000, 1000})});
  ASSERT_OK(r.status);
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(r.outputs[0].data<float>()[0], std::exp(1.0) / z, 1e-7);
  EXPECT_NEAR(r.outputs[0].data<float>()[2], std::exp(3.0) / z, 1e-7);
  EXPECT_NEAR(r.outputs[0].data<float>()[4], 1.0 / 3.0, 1e-7);  // no overflow at 1000
}

EMBER_TEST_MAIN
