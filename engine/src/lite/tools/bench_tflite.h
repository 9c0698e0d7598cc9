// Loading and timing a .tflite model with libember_lite only: what ember-benchmark --model
// reports. Header-only so that any tool linking libember_lite can time a model the same way.
//
//   auto timing = ember::lite::BenchmarkTflite("m.tflite", /*warmup=*/3, /*repeat=*/50);
//   timing->load_us, timing->median_us, ...
#ifndef EMBER_SRC_LITE_TOOLS_BENCH_TFLITE_H_
#define EMBER_SRC_LITE_TOOLS_BENCH_TFLITE_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/status.h"

namespace ember {
namespace lite {

struct TfliteTiming {
  double load_us = 0;     // Model::FromFile: read + validate (weights are not copied)
  double prepare_us = 0;  // Interpreter::Create + AllocateTensors
  double median_us = 0;   // per Invoke, over `repeat` timed invokes
  double mean_us = 0;
  double min_us = 0;
  double max_us = 0;
  int warmup = 0;
  int repeat = 0;
  int threads = 1;  // the interpreter's num_threads(), resolved
  size_t inputs = 0;
  size_t outputs = 0;
  size_t operators = 0;
  // With `profile`: each operator's time over `repeat` more invokes, made after the timed ones
  // (so that the clock reads around each operator do not count in the figures above).
  std::vector<Interpreter::OperatorTime> profile;
};

// Fills every input with a fixed pattern (the same on every run and host), so that timings
// do not depend on uninitialised memory and int8 inputs span their whole range.
inline Status FillInputsWithPattern(Interpreter* in) {
  uint32_t state = 0x9e3779b9u;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;  // LCG: deterministic, host-independent
    return state >> 8;                       // 24 usable bits
  };
  for (size_t i = 0; i < in->inputs_size(); ++i) {
    TensorView t = in->input(i);
    if (t.data == nullptr) {
      return errors::FailedPrecondition("input " + std::to_string(i) + " ('" + t.name() +
                                        "') has no buffer; call AllocateTensors first");
    }
    switch (t.type()) {
      case TensorType::kFloat32:
        for (size_t k = 0; k < t.bytes / sizeof(float); ++k) {
          t.as<float>()[k] = static_cast<float>(next()) / float(1 << 23) - 1.0f;  // [-1, 1)
        }
        break;
      case TensorType::kInt8:
      case TensorType::kUInt8:
      case TensorType::kBool:
        for (size_t k = 0; k < t.bytes; ++k) {
          uint8_t v = static_cast<uint8_t>(next());
          t.data[k] = t.type() == TensorType::kBool ? (v & 1) : v;
        }
        break;
      default:
        // Integer inputs (int16/int32/int64) may be indices or shapes: zeros are always valid.
        std::memset(t.data, 0, t.bytes);
        break;
    }
  }
  return Status::OK();
}

// Loads `path`, allocates, fills the inputs, runs `warmup` untimed and `repeat` timed invokes
// with InterpreterOptions::num_threads = `num_threads`.
inline StatusOr<TfliteTiming> BenchmarkTflite(const std::string& path, int warmup, int repeat,
                                              int num_threads = 1, bool profile = false) {
  if (repeat < 1) return errors::InvalidArgument("--repeat must be at least 1");
  if (warmup < 0) return errors::InvalidArgument("--warmup must not be negative");
  using Clock = std::chrono::steady_clock;
  using us = std::chrono::duration<double, std::micro>;
  TfliteTiming r;
  r.warmup = warmup;
  r.repeat = repeat;
  auto t0 = Clock::now();
  auto model = Model::FromFile(path);
  if (!model.ok()) return model.status();
  auto t1 = Clock::now();
  InterpreterOptions options;
  options.num_threads = num_threads;
  auto interp = Interpreter::Create(*model, options);
  if (!interp.ok()) return interp.status();
  Interpreter& in = **interp;
  EMBER_RETURN_IF_ERROR(in.AllocateTensors());
  auto t2 = Clock::now();
  r.load_us = us(t1 - t0).count();
  r.prepare_us = us(t2 - t1).count();
  r.threads = in.num_threads();
  r.inputs = in.inputs_size();
  r.outputs = in.outputs_size();
  r.operators = in.model().graph().operators.size();
  EMBER_RETURN_IF_ERROR(FillInputsWithPattern(&in));
  for (int i = 0; i < warmup; ++i) EMBER_RETURN_IF_ERROR(in.Invoke());
  std::vector<double> each;
  each.reserve(static_cast<size_t>(repeat));
  for (int i = 0; i < repeat; ++i) {
    auto a = Clock::now();
    EMBER_RETURN_IF_ERROR(in.Invoke());
    each.push_back(us(Clock::now() - a).count());
  }
  double total = 0;
  for (double v : each) total += v;
  std::sort(each.begin(), each.end());
  const size_t n = each.size();
  r.median_us = n % 2 ? each[n / 2] : 0.5 * (each[n / 2 - 1] + each[n / 2]);
  r.mean_us = total / static_cast<double>(n);
  r.min_us = each.front();
  r.max_us = each.back();
  if (profile) {
    in.EnableProfiling(true);
    for (int i = 0; i < repeat; ++i) EMBER_RETURN_IF_ERROR(in.Invoke());
    r.profile = in.operator_times();
    in.EnableProfiling(false);
  }
  return r;
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_TOOLS_BENCH_TFLITE_H_
