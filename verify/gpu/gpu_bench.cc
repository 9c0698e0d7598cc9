// GPU throughput of ember's own kernels, through a Session as users run them: MatMul 4096^3
// (fp32 and TF32) and Softmax 8192x8192. Host<->device copies of the feeds and fetches are
// taken out by timing chains of R and 1 ops on the device and dividing the difference by R - 1.
// Prints "name value unit" lines for verify/gpu/device_check.sh; exits 77 without a GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "ember/cc/ops.h"
#include "ember/session.h"

using namespace ember;
using namespace ember::ops;

namespace {

Tensor Random(const TensorShape& shape, float scale) {
  Tensor t(DataType::kFloat, shape);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

// Seconds for one Run of a chain of `r` ops (best of 3, after a warm-up).
double TimeChain(const std::string& op, int r, const Tensor& x, const Tensor& w, bool tf32) {
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/device:GPU:0");
  Output cur = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output weights;
  if (op == "MatMul") weights = Const(root.WithOpName("w"), w);
  for (int i = 0; i < r; ++i) {
    Scope s = gpu.WithOpName("op" + std::to_string(i));
    cur = op == "MatMul" ? MatMul(s, cur, weights) : Softmax(s, cur);
  }
  GraphDef g;
  if (!root.ToGraphDef(&g).ok()) return -1;
  SessionOptions o;
  o.allow_tf32 = tf32;
  auto session = NewSession(o);
  if (!session->Create(g).ok()) return -1;
  std::vector<Tensor> out;
  double best = 1e30;
  for (int it = 0; it < 4; ++it) {
    auto t0 = std::chrono::steady_clock::now();
    Status s = session->Run({{"x", x}}, {cur.name()}, {}, &out);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return -1;
    }
    if (it > 0) best = std::min(best, dt);
  }
  return best;
}

double PerOp(const std::string& op, const Tensor& x, const Tensor& w, bool tf32) {
  const int r = 9;
  double one = TimeChain(op, 1, x, w, tf32), many = TimeChain(op, r, x, w, tf32);
  if (one < 0 || many < 0) return -1;
  return (many - one) / (r - 1);
}

}  // namespace

int main() {
  std::string why = DeviceUnavailableReason("GPU");
  if (!why.empty()) {
    std::printf("not run: no GPU (%s)\n", why.c_str());
    return 77;
  }
  const int64_t n = 4096;
  // Weights scaled so that a chain of products keeps its magnitude (no overflow to inf).
  Tensor x = Random({n, n}, 1.f), w = Random({n, n}, 1.7320508f / 64.f);
  const double flop = 2.0 * n * n * n;
  for (bool tf32 : {false, true}) {
    double t = PerOp("MatMul", x, w, tf32);
    if (t <= 0) return 1;
    std::printf("ember_matmul_4096_%s %.2f TFLOP/s\n", tf32 ? "tf32" : "fp32", flop / t / 1e12);
  }
  const int64_t m = 8192;
  Tensor logits = Random({m, m}, 4.f);
  double t = PerOp("Softmax", logits, Tensor(), false);
  if (t <= 0) return 1;
  std::printf("ember_softmax_8192 %.1f GB/s\n", 2.0 * m * m * sizeof(float) / t / 1e9);
  return 0;
}
