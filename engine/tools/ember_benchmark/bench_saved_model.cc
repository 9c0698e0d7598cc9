#include "bench_saved_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "ember/saved_model.h"
#include "npy.h"

namespace ember {

namespace {

double Us(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "error: %s: %s\n", CodeName(s.code()), s.message().c_str());
  return 1;
}

// A deterministic input for a signature input without --feed.
Status PatternTensor(const std::string& key, const TensorInfo& info, Tensor* out) {
  std::vector<int64_t> dims;
  if (!info.shape.unknown_rank) {
    for (int64_t d : info.shape.dims) dims.push_back(d < 0 ? 1 : d);
  }
  StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) return shape.status();
  if (DataTypeSize(info.dtype) == 0) {
    return errors::InvalidArgument("input '" + key + "' has dtype " + DataTypeString(info.dtype) +
                                   "; pass it with --feed " + key + "=FILE.npy");
  }
  Tensor t(info.dtype, *shape);
  if (info.dtype == DataType::kFloat) {
    float* v = t.data<float>();
    for (int64_t i = 0; i < t.NumElements(); ++i) v[i] = static_cast<float>(i % 17) / 17.0f;
  }  // other dtypes: zeros (valid indices for embeddings)
  *out = std::move(t);
  return Status::OK();
}

}  // namespace

int BenchSavedModel(const SavedModelBenchOptions& o) {
  SessionOptions so;
  so.inter_op_parallelism_threads = o.threads == 1 ? -1 : o.threads;
  so.intra_op_parallelism_threads = o.threads;
  SavedModelBundle bundle;
  auto t0 = std::chrono::steady_clock::now();
  Status s = LoadSavedModel(so, o.dir, {kSavedModelTagServe}, &bundle);
  auto t1 = std::chrono::steady_clock::now();
  if (!s.ok()) return Fail(s);
  auto sig = bundle.signatures.find(o.signature);
  if (sig == bundle.signatures.end()) {
    std::vector<std::string> none;
    return Fail(bundle.Run(o.signature, {}, &none, nullptr));  // names the signatures
  }
  std::map<std::string, Tensor> given;
  for (const auto& f : o.feeds) {
    Tensor t;
    s = npy::Read(f.second, &t);
    if (!s.ok()) return Fail(s);
    given[f.first] = std::move(t);
  }
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (const auto& in : sig->second.inputs) {
    auto g = given.find(in.first);
    Tensor t;
    if (g != given.end()) {
      t = g->second;
      given.erase(g);
    } else if (!(s = PatternTensor(in.first, in.second, &t)).ok()) {
      return Fail(s);
    }
    inputs.emplace_back(in.first, std::move(t));
  }
  if (!given.empty()) {
    return Fail(errors::InvalidArgument("signature '" + o.signature + "' has no input '" +
                                        given.begin()->first + "'"));
  }
  std::vector<double> times;
  for (int i = 0; i < o.warmup + o.repeat; ++i) {
    std::vector<std::string> keys;
    std::vector<Tensor> outputs;
    auto a = std::chrono::steady_clock::now();
    s = bundle.Run(o.signature, inputs, &keys, &outputs);
    auto b = std::chrono::steady_clock::now();
    if (!s.ok()) return Fail(s);
    if (i >= o.warmup) times.push_back(Us(a, b));
  }
  std::sort(times.begin(), times.end());
  double mean = 0;
  for (double t : times) mean += t;
  mean /= static_cast<double>(times.size());
  double median = times[times.size() / 2];
  if (o.json) {
    std::printf(
        "{\"model\": \"%s\", \"signature\": \"%s\", \"threads\": %d, \"nodes\": %zu, "
        "\"load_us\": %.3f, \"warmup\": %d, \"repeat\": %d, \"run_median_us\": %.3f, "
        "\"run_mean_us\": %.3f, \"run_min_us\": %.3f, \"run_max_us\": %.3f}\n",
        o.dir.c_str(), o.signature.c_str(), o.threads, bundle.graph.node.size(), Us(t0, t1),
        o.warmup, o.repeat, median, mean, times.front(), times.back());
    return 0;
  }
  std::printf("SavedModel %s signature %s: %zu nodes after inlining (threads %d)\n", o.dir.c_str(),
              o.signature.c_str(), bundle.graph.node.size(), o.threads);
  std::printf("load_us %.3f\n", Us(t0, t1));
  std::printf(
      "run_median_us %.3f run_mean_us %.3f run_min_us %.3f run_max_us %.3f "
      "(warmup %d, repeat %d)\n",
      median, mean, times.front(), times.back(), o.warmup, o.repeat);
  return 0;
}

}  // namespace ember
