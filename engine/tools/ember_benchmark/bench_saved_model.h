// ember-benchmark --model DIR: a SavedModel directory's signature through a Session.
#ifndef EMBER_TOOLS_EMBER_BENCHMARK_BENCH_SAVED_MODEL_H_
#define EMBER_TOOLS_EMBER_BENCHMARK_BENCH_SAVED_MODEL_H_

#include <string>
#include <utility>
#include <vector>

namespace ember {

struct SavedModelBenchOptions {
  std::string dir;
  std::string signature = "serving_default";
  // input key -> .npy path; inputs not given are filled with a fixed pattern, unknown dims 1.
  std::vector<std::pair<std::string, std::string>> feeds;
  int warmup = 3;
  int repeat = 50;
  int threads = 1;  // 1: run inline on the calling thread; 0: hardware threads
  bool json = false;
};

// Prints load_us and run median/mean/min/max us; returns the process exit code.
int BenchSavedModel(const SavedModelBenchOptions& options);

}  // namespace ember

#endif  // EMBER_TOOLS_EMBER_BENCHMARK_BENCH_SAVED_MODEL_H_
