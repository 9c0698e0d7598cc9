// ember-benchmark --model for GraphDefs (.pb or .json): loads the graph (load_us: read and parse,
// then Session::Create), runs --warmup untimed and --repeat timed Session::Run calls with the
// given feeds and fetches, and reports median/mean/min/max microseconds per Run. --profile then
// runs --repeat more times traced (RunOptions::trace_level) and sums each node's time.
//
// Feeds are given like ember-run's (--feed NAME=FILE.npy). A Placeholder that is not fed but
// has a fully known shape is filled with a fixed pattern (floats in [-1, 1), integers 0, bools
// false), so any frozen model can be timed without preparing inputs.
#include "bench_graph.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/graph_def.h"
#include "ember/session.h"
#include "npy.h"

namespace ember {
namespace bench {
namespace {

double Micros(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

std::string Bare(const std::string& name) {
  return name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0
             ? name.substr(0, name.size() - 2)
             : name;
}

// A pattern tensor for a Placeholder with a fully known shape; false otherwise.
bool PatternFor(const NodeDef& node, Tensor* out) {
  auto dt = node.attr.find("dtype");
  auto sh = node.attr.find("shape");
  if (dt == node.attr.end() || sh == node.attr.end() || sh->second.shape.unknown_rank) {
    return false;
  }
  for (int64_t d : sh->second.shape.dims) {
    if (d < 0) return false;
  }
  const DataType type = dt->second.type;
  if (DataTypeSize(type) == 0) return false;
  Tensor t(type, TensorShape(sh->second.shape.dims));
  if (type == DataType::kFloat) {
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      t.data<float>()[i] = static_cast<float>((i * 7919) % 2000) / 1000.0f - 1.0f;
    }
  }  // other dtypes stay zero-filled
  *out = t;
  return true;
}

// `runs` traced runs: each node's time summed into `out`, in the order the first run ran them;
// the slowest run's wall time in *max_us.
Status ProfileRuns(Session* session, const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches, int runs, std::vector<NodeProfile>* out,
                   double* max_us) {
  RunOptions traced;
  traced.trace_level = RunOptions::SOFTWARE_TRACE;
  std::map<std::string, size_t> index;
  std::vector<Tensor> outputs;
  for (int i = 0; i < runs; ++i) {
    RunMetadata metadata;
    const auto start = std::chrono::steady_clock::now();
    EMBER_RETURN_IF_ERROR(session->Run(traced, feeds, fetches, {}, &outputs, &metadata));
    *max_us = std::max(*max_us, Micros(start));
    for (const DeviceStepStats& dev : metadata.step_stats.dev_stats) {
      for (const NodeExecStats& ns : dev.node_stats) {
        auto it = index.emplace(ns.node_name, out->size()).first;
        if (it->second == out->size()) out->push_back({ns.node_name, ns.op, 0});
        (*out)[it->second].total_us += static_cast<double>(ns.all_end_rel_nanos) / 1000.0;
      }
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<GraphBenchResult> BenchmarkGraph(const GraphBenchArgs& args) {
  GraphBenchResult r;
  auto t0 = std::chrono::steady_clock::now();
  GraphDef graph;
  EMBER_RETURN_IF_ERROR(ReadGraphDefFile(args.path, &graph));
  SessionOptions options;
  options.intra_op_parallelism_threads = args.threads;
  options.inter_op_parallelism_threads = args.threads == 1 ? -1 : args.threads;
  options.optimize_graph = args.optimize;
  std::unique_ptr<Session> session = NewSession(options);
  EMBER_RETURN_IF_ERROR(session->Create(graph));
  r.load_us = Micros(t0);
  r.nodes = graph.node.size();

  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fed;
  for (const auto& f : args.feeds) {
    Tensor t;
    EMBER_RETURN_IF_ERROR(npy::Read(f.second, &t));
    feeds.emplace_back(f.first, t);
    fed.push_back(Bare(f.first));
  }
  for (const NodeDef& node : graph.node) {
    if (node.op != "Placeholder" || std::find(fed.begin(), fed.end(), node.name) != fed.end()) {
      continue;
    }
    Tensor t;
    if (PatternFor(node, &t)) {
      feeds.emplace_back(node.name, t);
      ++r.synthesized_feeds;
    }
  }
  if (args.fetches.empty()) {
    return errors::InvalidArgument("--model " + args.path +
                                   ": a GraphDef needs at least one --fetch NAME");
  }
  std::vector<Tensor> outputs;
  auto run = [&]() { return session->Run(feeds, args.fetches, {}, &outputs); };
  t0 = std::chrono::steady_clock::now();
  EMBER_RETURN_IF_ERROR(run());  // the first run builds the executor
  r.first_run_us = Micros(t0);
  for (int i = 0; i < args.warmup; ++i) EMBER_RETURN_IF_ERROR(run());
  std::vector<double> times;
  for (int i = 0; i < args.repeat; ++i) {
    t0 = std::chrono::steady_clock::now();
    EMBER_RETURN_IF_ERROR(run());
    times.push_back(Micros(t0));
  }
  std::sort(times.begin(), times.end());
  double sum = 0;
  for (double t : times) sum += t;
  r.median_us = times[times.size() / 2];
  r.mean_us = sum / static_cast<double>(times.size());
  r.min_us = times.front();
  r.max_us = times.back();
  if (args.profile) {
    EMBER_RETURN_IF_ERROR(ProfileRuns(session.get(), feeds, args.fetches, args.repeat, &r.profile,
                                      &r.profile_run_max_us));
    r.profile_runs = args.repeat;
  }
  r.feeds = feeds.size();
  r.fetches = args.fetches.size();
  return r;
}

bool IsGraphDefPath(const std::string& path) {
  auto ends = [&](const char* suffix) {
    const std::string s(suffix);
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".pb") || ends(".json") || ends(".graphdef");
}

}  // namespace bench
}  // namespace ember
