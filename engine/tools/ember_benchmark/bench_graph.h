// ember-benchmark --model FILE.pb|FILE.json: times Session::Run on a GraphDef (bench_graph.cc).
#ifndef EMBER_TOOLS_EMBER_BENCHMARK_BENCH_GRAPH_H_
#define EMBER_TOOLS_EMBER_BENCHMARK_BENCH_GRAPH_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ember/status.h"

namespace ember {
namespace bench {

struct GraphBenchArgs {
  std::string path;
  std::vector<std::pair<std::string, std::string>> feeds;  // name, .npy path
  std::vector<std::string> fetches;
  int warmup = 3;
  int repeat = 50;
  int threads = 1;       // intra-op threads; 1 runs inline on the calling thread
  bool optimize = true;  // SessionOptions::optimize_graph (--no-optimize turns it off)
  bool profile = false;  // --profile: then `repeat` more runs, traced (RunOptions::trace_level)
};

// One node's time in the traced runs (--profile).
struct NodeProfile {
  std::string name, op;
  double total_us = 0;  // summed over the traced runs
};

struct GraphBenchResult {
  size_t nodes = 0, feeds = 0, fetches = 0;
  int synthesized_feeds = 0;  // Placeholders filled with a pattern (not fed)
  double load_us = 0;         // read + parse + Session::Create
  double first_run_us = 0;    // includes building the executor
  double median_us = 0, mean_us = 0, min_us = 0, max_us = 0;
  std::vector<NodeProfile> profile;  // every node the traced runs ran, in first-run order
  int profile_runs = 0;
  double profile_run_max_us = 0;  // the slowest traced run, wall clock
};

// True for the GraphDef suffixes ember-run reads (.pb, .json, .graphdef).
bool IsGraphDefPath(const std::string& path);
StatusOr<GraphBenchResult> BenchmarkGraph(const GraphBenchArgs& args);

}  // namespace bench
}  // namespace ember

#endif  // EMBER_TOOLS_EMBER_BENCHMARK_BENCH_GRAPH_H_
