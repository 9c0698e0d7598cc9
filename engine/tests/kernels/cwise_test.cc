// Elementwise kernels: NumPy broadcasting, TensorFlow's error messages, dtype checks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "ember_test.h"
#include "kernels/kernel_test_util.h"

using namespace ember_kernel_test;  // NOLINT
using ember::Code;

TEST(Cwise, AddBroadcastsRowAgainstMatrix) {
  Result r = Run(Node("AddV2").Type("T", DataType::kFloat),
                 {Floats({2, 3}, {1, 2, 3, 4, 5, 6}), Floats({3}, {10, 20, 30})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({2, 3}));
  EXPECT_TRUE(Values<float>(r.outputs[0]) == (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(Cwise, BroadcastsBothSides) {
  // [3,1] - [1,4] -> [3,4], like NumPy.
  Result r = Run(Node("Sub").Type("T", DataType::kFloat),
                 {Floats({3, 1}, {1, 2, 3}), Floats({1, 4}, {0, 1, 2, 3})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(r.outputs[0].shape() == TensorShape({3, 4}));
  std::vector<float> want;
  for (float a : {1.f, 2.f, 3.f}) {
    for (float b : {0.f, 1.f, 2.f, 3.f}) want.push_back(a - b);
  }
  EXPECT_TRUE(Values<float>(r.outputs[0]) == want);
}

TEST(Cwise, ScalarAndRank3Broadcast) {
  Tensor a = RandomFloats({2, 3, 4}, 1);
  Result r = Run(Node("Mul").Type("T", DataType::kFloat), {Tensor::Scalar<float>(2.f), a});
  ASSERT_OK(r.status);
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    EXPECT_EQ(r.outputs[0].data<float>()[i], 2.f * a.data<float>()[i]);
  }
  // [2,1,4] with [3,1]: middle and last dims broadcast from different sides.
  Tensor x = RandomFloats({2, 1, 4}, 2), y = RandomFloats({3, 1}, 3);
  r = Run(Node("Maximum").Type("T", DataType::kFloat), {x, y});
  ASSERT_OK(r.status);
  ASSERT_TRUE(r.outputs[0].shape() == TensorShape({2, 3, 4}));
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) {
        float want = std::max(x.data<float>()[b * 4 + j], y.data<float>()[i]);
        EXPECT_EQ(r.outputs[0].data<float>()[(b * 3 + i) * 4 + j], want);
      }
    }
  }
}

TEST(Cwise, IncompatibleShapesNameTheNode) {
  Result r =
      Run(Node("Add", "my_add").Type("T", DataType::kFloat), {Floats({2, 3}, {}), Floats({2}, {})});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status.message(), "Incompatible shapes: [2,3] vs. [2]"));
  EXPECT_TRUE(Contains(r.status.message(), "my_add"));
}

TEST(Cwise, FloatOnlyOpsRejectIntegersAtConstruction) {
  Result r = Run(Node("Sqrt", "root").Type("T", DataType::kInt32), {Ints32({2}, {4, 9})});
  EXPECT_TRUE(r.status.code() == Code::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status.message(), "'T' of int32"));
  EXPECT_TRUE(Contains(r.status.message(), "root"));
}

TEST(Cwise, IntegerArithmeticWraps) {
  Result r = Run(Node("AddV2").Type("T", DataType::kUInt8),
                 {Tensor::From<uint8_t>({2}, {200, 3}), Tensor::From<uint8_t>({2}, {100, 4})});
  ASSERT_OK(r.status);
  EXPECT_EQ(static_cast<int>(r.outputs[0].data<uint8_t>()[0]), 44);  // 300 mod 256
  EXPECT_EQ(static_cast<int>(r.outputs[0].data<uint8_t>()[1]), 7);
  r = Run(Node("Neg").Type("T", DataType::kInt64), {Ints64({2}, {5, -7})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(Values<int64_t>(r.outputs[0]) == (std::vector<int64_t>{-5, 7}));
}

TEST(Cwise, UnaryMathMatchesLibm) {
  Tensor x = Floats({6}, {-20.f, -1.5f, -0.1f, 0.f, 0.7f, 30.f});
  struct Case {
    const char* op;
    double (*ref)(double);
  };
  const Case cases[] = {
      {"Exp", [](double v) { return std::exp(v); }},
      {"Tanh", [](double v) { return std::tanh(v); }},
      {"Sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {"Square", [](double v) { return v * v; }},
      {"Relu", [](double v) { return v > 0 ? v : 0.0; }},
      {"Relu6", [](double v) { return std::min(std::max(v, 0.0), 6.0); }},
  };
  for (const Case& c : cases) {
    Result r = Run(Node(c.op).Type("T", DataType::kFloat), {x});
    ASSERT_OK(r.status);
    for (int i = 0; i < 6; ++i) {
      double want = c.ref(x.data<float>()[i]);
      double got = r.outputs[0].data<float>()[i];
      EXPECT_TRUE(std::fabs(got - want) <= 1e-6 * std::max(1.0, std::fabs(want)));
    }
  }
}

// i * step for i in [-count, count], then tiny, moderate and huge magnitudes of both signs, the
// infinities and NaN.
std::vector<float> SweepWithSpecials(int count, float step) {
  std::vector<float> v;
  for (int i = -count; i <= count; ++i) v.push_back(static_cast<float>(i) * step);
  for (float e : {1e-30f, 1e-8f, 3e-4f, 9.5f, 20.f, 1e30f}) {
    v.push_back(e);
    v.push_back(-e);
  }
  const float inf = std::numeric_limits<float>::infinity();
  v.push_back(inf);
  v.push_back(-inf);
  v.push_back(std::numeric_limits<float>::quiet_NaN());
  return v;
}

// Sigmoid and Exp (Eigen's vectorized forms, TensorFlow's kernels') over a dense range, the
// infinities and NaN, against libm in double: Exp within 2 float ulp of the value, or below the
// least normal float where the value is one; Sigmoid within 1.5e-7 absolute (Eigen's rational
// approximation bounds the absolute error, and it takes e^x below -9 as TensorFlow does) or 2
// ulp; +inf kept, NaN kept.
TEST(Cwise, SigmoidAndExpAreWithinTwoUlp) {
  const std::vector<float> v = SweepWithSpecials(40000, 2.2e-3f);
  const int n = static_cast<int>(v.size());
  struct Case {
    const char* op;
    double (*ref)(double);
    double abs_floor;
  };
  const Case cases[] = {
      {"Exp", [](double x) { return std::exp(x); }, 1.1754944e-38},
      {"Sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 1.5e-7},
  };
  for (const Case& c : cases) {
    Result r = Run(Node(c.op).Type("T", DataType::kFloat), {Floats({n}, v)});
    ASSERT_OK(r.status);
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      const double want = c.ref(static_cast<double>(v[static_cast<size_t>(i)]));
      const double got = r.outputs[0].data<float>()[i];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got));
        continue;
      }
      if (std::isinf(want) || want > 3.4e38) {
        EXPECT_TRUE(std::isinf(got) && got > 0);
        continue;
      }
      const double err = std::fabs(got - want);
      if (err <= c.abs_floor) continue;
      const double ulp = std::max(std::fabs(want), 1e-37) * 1.1920929e-7;
      worst = std::max(worst, err / ulp);
    }
    std::printf("%s: worst error %.2f float ulp over %d values\n", c.op, worst, n);
    EXPECT_TRUE(worst <= 2.0);
  }
}

// Tanh over a dense range, the infinities and NaN, against libm in double: within 4 float ulp
// of the value (the vectorized rational approximation TensorFlow's kernel also uses), exactly
// +-1 far out, NaN kept.
TEST(Cwise, TanhIsWithinFourUlpEverywhere) {
  const std::vector<float> v = SweepWithSpecials(20000, 5e-4f);
  const int n = static_cast<int>(v.size());
  Result r = Run(Node("Tanh").Type("T", DataType::kFloat), {Floats({n}, v)});
  ASSERT_OK(r.status);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const double want = std::tanh(static_cast<double>(v[static_cast<size_t>(i)]));
    const double got = r.outputs[0].data<float>()[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got));
      continue;
    }
    const double ulp = std::max(std::fabs(want), 1e-30) * 1.1920929e-7;
    worst = std::max(worst, std::fabs(got - want) / ulp);
  }
  std::printf("Tanh: worst error %.2f float ulp over %d values\n", worst, n);
  EXPECT_TRUE(worst <= 4.0);
}

// Pow by the scalars 2 and 3 (computed as products) and by 2.5 (std::pow): within 2 float ulp of
// the exact value, with pow's infinities, NaN and signed zeros.
TEST(Cwise, PowByScalarIsWithinTwoUlp) {
  std::vector<float> v;
  for (int i = -3000; i <= 3000; ++i) v.push_back(static_cast<float>(i) * 0.0137f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float e : {0.f, -0.f, inf, -inf, 1e-20f, -1e-20f, 3e12f, -3e12f}) v.push_back(e);
  v.push_back(std::numeric_limits<float>::quiet_NaN());
  const int n = static_cast<int>(v.size());
  for (float e : {2.f, 3.f, 2.5f}) {
    Result r = Run(Node("Pow").Type("T", DataType::kFloat), {Floats({n}, v), Floats({}, {e})});
    ASSERT_OK(r.status);
    for (int i = 0; i < n; ++i) {
      const float x = v[static_cast<size_t>(i)];
      const double want = std::pow(static_cast<double>(x), static_cast<double>(e));
      const float got = r.outputs[0].data<float>()[i];
      const float libm = std::pow(x, e);
      if (std::isnan(libm) || std::isinf(libm) || libm == 0.f) {
        // NaN, the infinities and zeros (their signs too) as std::pow gives them.
        EXPECT_TRUE(std::isnan(libm) ? std::isnan(got)
                                     : got == libm && std::signbit(got) == std::signbit(libm));
        continue;
      }
      // A float ulp at want, or a subnormal's where the value is one.
      const double ulp = std::max(1.1920929e-7 * std::fabs(want), 1.4e-45);
      EXPECT_TRUE(std::fabs(got - want) <= 2 * ulp);
    }
  }
}

TEST(Cwise, MaximumPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Result r = Run(Node("Maximum").Type("T", DataType::kFloat),
                 {Floats({2}, {nan, 1.f}), Floats({2}, {0.f, nan})});
  ASSERT_OK(r.status);
  EXPECT_TRUE(std::isnan(r.outputs[0].data<float>()[0]));
  EXPECT_TRUE(std::isnan(r.outputs[0].data<float>()[1]));
}

TEST(Cwise, LargeTensorsUseTheIntraOpPool) {
  ember::ThreadPool pool("intra", 2);
  Tensor a = RandomFloats({300, 400}, 4), b = RandomFloats({400}, 5);
  Result r = Run(Node("AddV2").Type("T", DataType::kFloat), {a, b}, nullptr, &pool);
  ASSERT_OK(r.status);
  for (int i = 0; i < 300; i += 37) {
    for (int j = 0; j < 400; j += 11) {
      EXPECT_EQ(r.outputs[0].data<float>()[i * 400 + j],
                a.data<float>()[i * 400 + j] + b.data<float>()[j]);
    }
  }
}

TEST(Cwise, ConcurrentComputeOnOneKernel) {
  Node node = Node("Mul").Type("T", DataType::kFloat);
  std::unique_ptr<ember::OpKernel> kernel;
  ASSERT_OK(ember::KernelRegistry::Global()->CreateKernel(node.def(), "CPU", &kernel));
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int it = 0; it < 200; ++it) {
        Tensor a = Floats({3}, {1.f * t, 2.f, 3.f}),
               b = Tensor::Scalar<float>(static_cast<float>(it));
        ember::ResourceMgr rm;
        ember::OpKernelContext::Params p;
        p.node = &node.def();
        p.inputs = {&a, &b};
        p.output_types = {DataType::kFloat};
        p.resources = &rm;
        ember::OpKernelContext ctx(std::move(p));
        kernel->Compute(&ctx);
        if (!ctx.status().ok() || ctx.outputs()[0].data<float>()[0] != 1.f * t * it) ++bad[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0);
}

EMBER_TEST_MAIN
