// ember-lite-run: runs a .tflite model on .npy inputs with libember_lite only.
//
//   ember-lite-run MODEL.tflite [--input NAME_OR_INDEX=FILE.npy ...] [FILE.npy ...]
//                  [--outdir DIR] [--repeat N] [--num_threads N]
// Positional .npy files feed inputs in order. --num_threads (or --threads) is
// InterpreterOptions::num_threads: -1 (default) or 1 run on one thread. Every output is written to
// DIR/output_<i>.npy (default: the current directory) and summarised on stdout.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/npy.h"

namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "ember-lite-run: %s\n", msg.c_str());
  return 1;
}

// A whole decimal integer (optionally negative) that fits an int.
bool ParseInt(const char* text, int* out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < INT_MIN || v > INT_MAX) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ember::lite;
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::fprintf(stderr,
                 "usage: ember-lite-run MODEL.tflite [--input NAME_OR_INDEX=FILE.npy ...] "
                 "[FILE.npy ...] [--outdir DIR] [--repeat N] [--num_threads N]\n");
    return 2;
  }
  std::string model_path = argv[1], outdir = ".";
  std::vector<std::pair<std::string, std::string>> feeds;
  int repeat = 1;
  InterpreterOptions options;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc) {
      std::string v = argv[++i];
      const size_t eq = v.find('=');
      if (eq == std::string::npos)
        return Fail("--input takes NAME_OR_INDEX=FILE.npy, got '" + v + "'");
      feeds.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--outdir" && i + 1 < argc) {
      outdir = argv[++i];
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if ((a == "--num_threads" || a == "--threads") && i + 1 < argc) {
      if (!ParseInt(argv[++i], &options.num_threads)) {
        return Fail(a + " takes an integer (-1 for the default), got '" + argv[i] + "'");
      }
    } else if (!a.empty() && a[0] == '-') {
      return Fail("unknown option '" + a + "' (see --help)");
    } else {
      feeds.emplace_back(std::to_string(feeds.size()), a);
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  auto model = Model::FromFile(model_path);
  if (!model.ok()) return Fail(model.status().message());
  auto t1 = std::chrono::steady_clock::now();
  auto interp = Interpreter::Create(*model, options);
  if (!interp.ok()) return Fail(interp.status().message());
  Interpreter& in = **interp;
  ember::Status s = in.AllocateTensors();
  if (!s.ok()) return Fail(s.message());
  for (const auto& feed : feeds) {
    size_t idx;
    bool numeric =
        !feed.first.empty() && feed.first.find_first_not_of("0123456789") == std::string::npos;
    if (numeric) {
      idx = static_cast<size_t>(std::stoul(feed.first));
      if (idx >= in.inputs_size()) {
        return Fail("input index " + feed.first + " is out of range (the model has " +
                    std::to_string(in.inputs_size()) + " inputs)");
      }
    } else {
      auto found = in.InputIndex(feed.first);
      if (!found.ok()) return Fail(found.status().message());
      idx = *found;
    }
    TensorView t = in.input(idx);
    auto arr = ReadNpy(feed.second);
    if (!arr.ok()) return Fail(arr.status().message());
    if (arr->descr != NpyDescr(t.type())) {
      return Fail("input '" + t.name() + "' is " + TensorTypeName(t.type()) + " but '" +
                  feed.second + "' holds dtype " + arr->descr);
    }
    if (arr->data.size() != t.bytes) {
      return Fail("input '" + t.name() + "' needs " + std::to_string(t.bytes) + " bytes but '" +
                  feed.second + "' has " + std::to_string(arr->data.size()));
    }
    std::memcpy(t.data, arr->data.data(), t.bytes);
  }
  using us = std::chrono::duration<double, std::micro>;
  std::vector<double> each;
  auto t2 = std::chrono::steady_clock::now();
  for (int r = 0; r < repeat; ++r) {
    auto a = std::chrono::steady_clock::now();
    s = in.Invoke();
    if (!s.ok()) return Fail(s.message());
    each.push_back(us(std::chrono::steady_clock::now() - a).count());
  }
  auto t3 = std::chrono::steady_clock::now();
  std::sort(each.begin(), each.end());
  for (size_t o = 0; o < in.outputs_size(); ++o) {
    TensorView t = in.output(o);
    std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
    const std::string path = outdir + "/output_" + std::to_string(o) + ".npy";
    s = WriteNpy(path, NpyDescr(t.type()), shape, t.data, t.bytes);
    if (!s.ok()) return Fail(s.message());
    std::printf("output %zu '%s' %s %s -> %s\n", o, t.name().c_str(),
                TensorTypeName(t.type()).c_str(), ShapeString(t.shape()).c_str(), path.c_str());
  }
  std::printf("load_us %.1f invoke_us %.1f invoke_median_us %.1f\n", us(t1 - t0).count(),
              us(t3 - t2).count() / repeat, each[each.size() / 2]);
  return 0;
}
