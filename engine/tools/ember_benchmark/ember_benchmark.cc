// ember-benchmark: single-threaded fp32 MatMul (512^3, 1024^3) and Conv2D (1x56x56x64 -> 64,
// 3x3 SAME) through the registered CPU kernels, and Session::Run overhead on a 10-node
// elementwise graph of tiny tensors; or, with --model, one .tflite model through libember_lite
// or one GraphDef (.pb/.json) through a Session (bench_graph.cc), fed like ember-run.
//
//   ember-benchmark [--json] [--min-time SECONDS]
//   ember-benchmark --model FILE.tflite [--repeat N] [--warmup N] [--threads N] [--profile]
//                   [--json]
//   ember-benchmark --model FILE.pb|FILE.json [--feed NAME=FILE.npy]... --fetch NAME...
//                   [--repeat N] [--warmup N] [--threads N] [--no-optimize] [--profile] [--json]
//   ember-benchmark --model SAVEDMODEL_DIR [--signature KEY] [--feed KEY=FILE.npy]...
//                   [--repeat N] [--warmup N] [--threads N] [--json]
//
// Each kernel figure is the best of repeated runs lasting at least --min-time (default 1 s).
// A model is loaded once (load_us: Model::FromFile), its inputs filled with a fixed pattern,
// then run --warmup times untimed and --repeat times timed (median/mean/min us per Invoke).
// --profile (.tflite): then --repeat more invokes timing each operator, listed costliest first.
// --profile (GraphDef): then --repeat more runs traced (RunOptions::trace_level), each node's
// mean time and each op's (its nodes' sum), costliest first.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_graph.h"
#include "bench_saved_model.h"
#include "core/op_kernel.h"
#include "core/resource_mgr.h"
#include "core/thread_pool.h"
#include "ember/graph_def.h"
#include "ember/saved_model.h"
#include "ember/tensor.h"
#include "kernels/cpu/gemm.h"

#ifdef EMBER_BENCH_HAS_LITE
#include "lite/tools/bench_tflite.h"
#endif

#if __has_include("ember/session.h")
#include "ember/session.h"
#define EMBER_BENCH_SESSION 1
#endif

namespace {

using ember::AttrValue;
using ember::DataType;
using ember::NodeDef;
using ember::Status;
using ember::Tensor;
using ember::TensorShape;

struct Figure {
  std::string name;
  double seconds;     // best time of one call
  double gflops;      // 0 when not a FLOP-bound figure
  std::string extra;  // free-form note
};

// Best wall time of `fn` over repetitions lasting at least `min_time` seconds (after one warm-up).
double BestTime(const std::function<void()>& fn, double min_time) {
  fn();
  double best = 1e30, total = 0;
  int reps = 0;
  while (total < min_time || reps < 3) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
    ++reps;
  }
  return best;
}

Tensor Random(const TensorShape& shape, unsigned seed) {
  Tensor t(DataType::kFloat, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

AttrValue TypeAttr(DataType dt) {
  AttrValue v;
  v.kind = AttrValue::Kind::kType;
  v.type = dt;
  return v;
}

// Runs one kernel (no session; one thread unless Run gets an intra-op pool) and fails loudly on
// error.
class KernelRunner {
 public:
  explicit KernelRunner(NodeDef node) : node_(std::move(node)) {
    Status s = ember::KernelRegistry::Global()->CreateKernel(node_, "CPU", &kernel_);
    if (!s.ok()) Die(s);
  }
  void Run(const std::vector<const Tensor*>& inputs, ember::ThreadPool* pool = nullptr) {
    ember::OpKernelContext::Params p;
    p.node = &node_;
    p.intra_op_pool = pool;
    p.inputs = inputs;
    p.output_types = {DataType::kFloat};
    p.resources = &resources_;
    ember::OpKernelContext ctx(std::move(p));
    kernel_->Compute(&ctx);
    if (!ctx.status().ok()) Die(ctx.status());
  }

 private:
  static void Die(const Status& s) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  NodeDef node_;
  std::unique_ptr<ember::OpKernel> kernel_;
  ember::ResourceMgr resources_;
};

// `pool`: the intra-op pool (null: one thread); a non-null pool adds "_t<threads>" to the name.
std::string ThreadSuffix(ember::ThreadPool* pool) {
  return pool == nullptr ? "" : "_t" + std::to_string(pool->NumThreads());
}

Figure BenchMatMul(int64_t n, double min_time, ember::ThreadPool* pool = nullptr) {
  NodeDef node;
  node.name = "matmul";
  node.op = "MatMul";
  node.attr["T"] = TypeAttr(DataType::kFloat);
  KernelRunner runner(node);
  Tensor a = Random({n, n}, 1), b = Random({n, n}, 2);
  double s = BestTime([&] { runner.Run({&a, &b}, pool); }, min_time);
  double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  return {"matmul_" + std::to_string(n) + ThreadSuffix(pool), s, flops / s / 1e9, ""};
}

Figure BenchConv(double min_time, ember::ThreadPool* pool = nullptr) {
  NodeDef node;
  node.name = "conv";
  node.op = "Conv2D";
  node.attr["T"] = TypeAttr(DataType::kFloat);
  AttrValue strides;
  strides.kind = AttrValue::Kind::kList;
  strides.list.i = {1, 1, 1, 1};
  node.attr["strides"] = strides;
  AttrValue padding;
  padding.kind = AttrValue::Kind::kS;
  padding.s = "SAME";
  node.attr["padding"] = padding;
  KernelRunner runner(node);
  Tensor x = Random({1, 56, 56, 64}, 3), f = Random({3, 3, 64, 64}, 4);
  double s = BestTime([&] { runner.Run({&x, &f}, pool); }, min_time);
  double flops = 2.0 * 56 * 56 * 64 * 3 * 3 * 64;
  return {"conv2d_1x56x56x64_3x3x64" + ThreadSuffix(pool), s, flops / s / 1e9, ""};
}

#ifdef EMBER_BENCH_SESSION
// x -> 10 elementwise nodes (AddV2 / Mul with constants, Neg, Square, Relu) on a [4] tensor.
ember::GraphDef ElementwiseGraph() {
  ember::GraphDef g;
  auto add = [&](const std::string& name, const std::string& op, std::vector<std::string> in) {
    NodeDef n;
    n.name = name;
    n.op = op;
    n.input = std::move(in);
    n.attr[op == "Placeholder" || op == "Const" ? "dtype" : "T"] = TypeAttr(DataType::kFloat);
    g.node.push_back(n);
    return &g.node.back();
  };
  add("x", "Placeholder", {});
  NodeDef* c = add("c", "Const", {});
  AttrValue value;
  value.kind = AttrValue::Kind::kTensor;
  value.tensor = Tensor::From<float>({4}, {0.5f, 0.25f, 2.f, 1.f});
  c->attr["value"] = value;
  const char* ops[] = {"AddV2", "Mul", "Neg", "Square", "AddV2",
                       "Relu",  "Mul", "Sub", "Neg",    "AddV2"};
  std::string prev = "x";
  for (int i = 0; i < 10; ++i) {
    std::string op = ops[i];
    bool unary = op == "Neg" || op == "Square" || op == "Relu";
    std::string name = "n" + std::to_string(i);
    add(name, op, unary ? std::vector<std::string>{prev} : std::vector<std::string>{prev, "c"});
    prev = name;
  }
  return g;
}

Figure BenchSession(int inter_op_threads, double min_time) {
  ember::SessionOptions options;
  options.inter_op_parallelism_threads = inter_op_threads;
  options.intra_op_parallelism_threads = 1;
  std::unique_ptr<ember::Session> session = ember::NewSession(options);
  Status s = session ? session->Create(ElementwiseGraph()) : ember::errors::Internal("no session");
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", Tensor::From<float>({4}, {1, 2, 3, 4})}};
  std::vector<Tensor> out;
  const int kSteps = 1000;
  double t = BestTime(
      [&] {
        for (int i = 0; i < kSteps; ++i) {
          Status st = session->Run(feeds, {"n9"}, {}, &out);
          if (!st.ok()) {
            std::fprintf(stderr, "error: %s\n", st.ToString().c_str());
            std::exit(1);
          }
        }
      },
      min_time);
  std::string mode = inter_op_threads < 0 ? "inline" : "pool";
  return {"session_run_10_nodes_" + mode, t / kSteps, 0, "per step"};
}
#endif

// Strict decimal parse: "--repeat 1x" or "--repeat -3" is an error, not 1 or a wrap-around.
bool ParseCount(const char* text, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || v > 100000000) return false;
  *out = static_cast<int>(v);
  return true;
}

int Usage() {
  std::fprintf(stderr,
               "usage: ember-benchmark [--json] [--min-time SECONDS]\n"
               "       ember-benchmark --model FILE.tflite [--repeat N] [--warmup N] "
               "[--threads N] [--profile] [--json]\n"
               "       ember-benchmark --model SAVEDMODEL_DIR [--signature KEY] "
               "[--feed KEY=FILE.npy]... [--repeat N] [--warmup N] [--threads N] [--json]\n"
               "       ember-benchmark --model FILE.pb|FILE.json [--feed NAME=FILE.npy]... "
               "--fetch NAME... [--repeat N] [--warmup N] [--threads N] [--no-optimize] "
               "[--profile] [--json]\n");
  return 2;
}

int Error(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

// Peak resident set of this process in KiB (VmHWM, Linux); -1 where unknown. Unlike
// getrusage's ru_maxrss it does not carry over the parent's size across fork and exec.
long PeakRssKib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::strtol(line + 6, nullptr, 10);
  }
  std::fclose(f);
  return kib;
}

// A JSON string's contents: quotes and backslashes escaped, control characters as \uXXXX.
std::string JsonEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

#ifdef EMBER_BENCH_HAS_LITE
// --profile: each operator's mean time per invoke, the costliest first, and its share of the
// operators' sum.
void PrintProfile(const std::vector<ember::lite::Interpreter::OperatorTime>& ops, bool json) {
  std::vector<size_t> order(ops.size());
  double sum = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    order[i] = i;
    sum += ops[i].total_us;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ops[a].total_us > ops[b].total_us; });
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const auto& op = ops[order[rank]];
    const double mean = op.calls > 0 ? op.total_us / static_cast<double>(op.calls) : 0.0;
    const double share = sum > 0 ? 100.0 * op.total_us / sum : 0.0;
    if (json) {
      std::printf("%s{\"label\": \"%s\", \"calls\": %lld, \"mean_us\": %.3f, \"share\": %.4f}",
                  rank ? ", " : "", JsonEscape(op.label).c_str(), static_cast<long long>(op.calls),
                  mean, share / 100.0);
    } else {
      std::printf("%10.3f us %5.1f%%  %s\n", mean, share, op.label.c_str());
    }
  }
}

int BenchModel(const std::string& path, int warmup, int repeat, int threads, bool json,
               bool profile) {
  auto r = ember::lite::BenchmarkTflite(path, warmup, repeat, threads, profile);
  if (!r.ok()) {
    // lite's loader names the file itself; other failures (allocate, invoke) may not.
    const std::string& m = r.status().message();
    return Error(m.find(path) == std::string::npos ? path + ": " + m : m);
  }
  if (json) {
    std::printf(
        "{\"model\": \"%s\", \"threads\": %d, \"operators\": %zu, \"load_us\": %.3f, "
        "\"prepare_us\": %.3f, \"warmup\": %d, \"repeat\": %d, \"invoke_median_us\": %.3f, "
        "\"invoke_mean_us\": %.3f, \"invoke_min_us\": %.3f, \"invoke_max_us\": %.3f, "
        "\"peak_rss_kib\": %ld",
        JsonEscape(path).c_str(), r->threads, r->operators, r->load_us, r->prepare_us, r->warmup,
        r->repeat, r->median_us, r->mean_us, r->min_us, r->max_us, PeakRssKib());
    if (profile) {
      std::printf(", \"profile\": [");
      PrintProfile(r->profile, true);
      std::printf("]");
    }
    std::printf("}\n");
    return 0;
  }
  const std::string threads_text =
      r->threads == 1 ? "one thread" : std::to_string(r->threads) + " threads";
  std::printf("model %s: %zu operators, %zu inputs, %zu outputs (%s)\n", path.c_str(), r->operators,
              r->inputs, r->outputs, threads_text.c_str());
  std::printf("load_us %.3f prepare_us %.3f\n", r->load_us, r->prepare_us);
  std::printf(
      "invoke_median_us %.3f invoke_mean_us %.3f invoke_min_us %.3f invoke_max_us %.3f "
      "(warmup %d, repeat %d)\n",
      r->median_us, r->mean_us, r->min_us, r->max_us, r->warmup, r->repeat);
  if (profile) {
    std::printf("per operator, mean of %d more invokes (costliest first):\n", r->repeat);
    PrintProfile(r->profile, false);
  }
  return 0;
}
#endif

// --profile for a GraphDef: each op's nodes' time per run and each node's, the costliest
// first, with their shares of the nodes' sum (the same total in both tables).
void PrintGraphProfile(const ember::bench::GraphBenchResult& r, bool json) {
  const std::vector<ember::bench::NodeProfile>& nodes = r.profile;
  const double runs = r.profile_runs > 0 ? r.profile_runs : 1;
  double sum = 0;
  std::map<std::string, std::pair<double, int>> by_op;  // op -> (total us, nodes)
  for (const auto& n : nodes) {
    sum += n.total_us;
    auto& op = by_op[n.op];
    op.first += n.total_us;
    ++op.second;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::vector<size_t> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return nodes[a].total_us > nodes[b].total_us; });
  auto share = [&](double total) { return sum > 0 ? total / sum : 0.0; };
  if (json) {
    std::printf(", \"profile_runs\": %d, \"profile_run_max_us\": %.3f, \"profile_ops\": [",
                r.profile_runs, r.profile_run_max_us);
    for (size_t i = 0; i < ops.size(); ++i) {
      std::printf("%s{\"op\": \"%s\", \"nodes\": %d, \"mean_us\": %.3f, \"share\": %.6f}",
                  i ? ", " : "", JsonEscape(ops[i].first).c_str(), ops[i].second.second,
                  ops[i].second.first / runs, share(ops[i].second.first));
    }
    std::printf("], \"profile\": [");
    for (size_t i = 0; i < order.size(); ++i) {
      const auto& n = nodes[order[i]];
      std::printf(
          "%s{\"name\": \"%s\", \"op\": \"%s\", \"label\": \"%s\", \"mean_us\": %.3f, "
          "\"share\": %.6f}",
          i ? ", " : "", JsonEscape(n.name).c_str(), JsonEscape(n.op).c_str(),
          JsonEscape(n.name + " (" + n.op + ")").c_str(), n.total_us / runs, share(n.total_us));
    }
    std::printf("]");
    return;
  }
  std::printf("per op, its nodes' time per run, traced over %d more runs (costliest first):\n",
              r.profile_runs);
  for (const auto& op : ops) {
    std::printf("%10.3f us %5.1f%%  %s (%d nodes)\n", op.second.first / runs,
                100.0 * share(op.second.first), op.first.c_str(), op.second.second);
  }
  std::printf("per node, mean of those runs (costliest first):\n");
  for (size_t i : order) {
    std::printf("%10.3f us %5.1f%%  %s (%s)\n", nodes[i].total_us / runs,
                100.0 * share(nodes[i].total_us), nodes[i].name.c_str(), nodes[i].op.c_str());
  }
}

int BenchGraph(const ember::bench::GraphBenchArgs& args, bool json) {
  auto r = ember::bench::BenchmarkGraph(args);
  if (!r.ok()) {
    const std::string& m = r.status().message();
    return Error(m.find(args.path) == std::string::npos ? args.path + ": " + m : m);
  }
  if (json) {
    std::printf(
        "{\"model\": \"%s\", \"format\": \"graphdef\", \"threads\": %d, \"nodes\": %zu, "
        "\"feeds\": %zu, \"synthesized_feeds\": %d, \"load_us\": %.3f, \"first_run_us\": %.3f, "
        "\"warmup\": %d, \"repeat\": %d, \"run_median_us\": %.3f, \"run_mean_us\": %.3f, "
        "\"run_min_us\": %.3f, \"run_max_us\": %.3f, \"peak_rss_kib\": %ld, \"optimize\": %s",
        JsonEscape(args.path).c_str(), args.threads, r->nodes, r->feeds, r->synthesized_feeds,
        r->load_us, r->first_run_us, args.warmup, args.repeat, r->median_us, r->mean_us, r->min_us,
        r->max_us, PeakRssKib(), args.optimize ? "true" : "false");
    if (args.profile) PrintGraphProfile(*r, true);
    std::printf("}\n");
    return 0;
  }
  std::printf("graph %s: %zu nodes, %zu feeds (%d synthesized), %zu fetches, %d thread(s)\n",
              args.path.c_str(), r->nodes, r->feeds, r->synthesized_feeds, r->fetches,
              args.threads);
  std::printf("load_us %.3f first_run_us %.3f\n", r->load_us, r->first_run_us);
  std::printf(
      "run_median_us %.3f run_mean_us %.3f run_min_us %.3f run_max_us %.3f "
      "(warmup %d, repeat %d)\n",
      r->median_us, r->mean_us, r->min_us, r->max_us, args.warmup, args.repeat);
  if (args.profile) PrintGraphProfile(*r, false);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, profile = false;
  double min_time = 1.0;
  std::string model;
  int repeat = 50, warmup = 3, threads = 1;
  ember::SavedModelBenchOptions saved;
  ember::bench::GraphBenchArgs graph_args;  // --feed NAME=FILE.npy is read into it for both kinds
  bool signature_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--signature" && has_value) {  // SavedModel directories
      saved.signature = argv[++i];
      signature_given = true;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--profile") {  // .tflite: per-operator times; GraphDefs: per-node times
      profile = true;
    } else if (a == "--no-optimize") {  // GraphDefs: run the nodes as written
      graph_args.optimize = false;
    } else if (a == "--min-time" && has_value) {
      min_time = std::atof(argv[++i]);
    } else if (a == "--model" && has_value) {
      model = argv[++i];
    } else if ((a == "--repeat" || a == "--warmup" || a == "--threads") && has_value) {
      int* dst = a == "--repeat" ? &repeat : a == "--warmup" ? &warmup : &threads;
      if (!ParseCount(argv[++i], dst)) {
        return Error(a + " takes a non-negative integer, got '" + argv[i] + "'");
      }
    } else if (a == "--feed" && has_value) {
      const std::string v = argv[++i];
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
        return Error("--feed expects NAME=FILE.npy (KEY=FILE.npy for a SavedModel), got '" + v +
                     "'");
      }
      graph_args.feeds.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--fetch" && has_value) {
      graph_args.fetches.push_back(argv[++i]);
    } else if (a == "--feed" || a == "--fetch" || a == "--model" || a == "--repeat" ||
               a == "--warmup" || a == "--threads" || a == "--min-time" || a == "--signature") {
      return Error(a + " needs a value (see --help)");
    } else {
      return Usage();
    }
  }
  if (profile && model.empty()) {
    return Error(
        "--profile times a model's operators or nodes: give --model FILE.tflite or "
        "--model FILE.pb --fetch NAME");
  }
  if (profile && ember::IsSavedModelDirectory(model)) {
    return Error(
        "--profile does not time a SavedModel: profile its graph as a GraphDef "
        "(--model FILE.pb --fetch NAME)");
  }
  if (!model.empty() && ember::IsSavedModelDirectory(model)) {
    if (repeat < 1) return Error("--repeat must be at least 1");
    if (!graph_args.fetches.empty()) {
      return Error("--fetch applies to GraphDefs; a SavedModel signature fetches all its outputs");
    }
    saved.feeds = graph_args.feeds;
    saved.dir = model;
    saved.warmup = warmup;
    saved.repeat = repeat;
    saved.threads = threads;
    saved.json = json;
    return ember::BenchSavedModel(saved);
  }
  if (signature_given) return Error("--signature needs a SavedModel directory");
  if (!model.empty() && ember::bench::IsGraphDefPath(model)) {
    if (repeat < 1) return Error("--repeat must be at least 1");
    if (threads < 1) return Error("--threads must be at least 1");
    graph_args.path = model;
    graph_args.repeat = repeat;
    graph_args.warmup = warmup;
    graph_args.threads = threads;
    graph_args.profile = profile;
    return BenchGraph(graph_args, json);
  }
  if (!graph_args.feeds.empty() || !graph_args.fetches.empty()) {
    return Error("--feed and --fetch apply to GraphDef models (.pb, .json) only");
  }
  if (!model.empty()) {
#ifdef EMBER_BENCH_HAS_LITE
    if (repeat < 1) return Error("--repeat must be at least 1");
    return BenchModel(model, warmup, repeat, threads, json, profile);
#else
    return Error(
        "--model needs libember_lite, which this build of ember-benchmark lacks "
        "(configure engine/ with src/lite present)");
#endif
  }
  std::vector<Figure> figures;
  figures.push_back(BenchMatMul(512, min_time));
  figures.push_back(BenchMatMul(1024, min_time));
  figures.push_back(BenchConv(min_time));
  {
    ember::ThreadPool intra("intra", 2, /*spin_workers=*/true);  // as a session's: the "_t2" twins
    figures.push_back(BenchMatMul(512, min_time, &intra));
    figures.push_back(BenchMatMul(1024, min_time, &intra));
    figures.push_back(BenchConv(min_time, &intra));
  }
#ifdef EMBER_BENCH_SESSION
  figures.push_back(BenchSession(-1, min_time));
  figures.push_back(BenchSession(0, min_time));
#endif
  if (json) {
    std::printf("{\"gemm_kernel\": \"%s\", \"figures\": [", ember::kernels::SgemmKernelName());
    for (size_t i = 0; i < figures.size(); ++i) {
      const Figure& f = figures[i];
      std::printf("%s{\"name\": \"%s\", \"seconds\": %.9g, \"gflops\": %.6g}", i ? ", " : "",
                  f.name.c_str(), f.seconds, f.gflops);
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("gemm micro-kernel: %s (one thread; _t2: an intra-op pool of two)\n",
              ember::kernels::SgemmKernelName());
  for (const Figure& f : figures) {
    if (f.gflops > 0) {
      std::printf("%-32s %10.3f ms  %8.1f GFLOP/s\n", f.name.c_str(), f.seconds * 1e3, f.gflops);
    } else {
      std::printf("%-32s %10.2f us  %s\n", f.name.c_str(), f.seconds * 1e6, f.extra.c_str());
    }
  }
  return 0;
}
