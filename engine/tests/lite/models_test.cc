// Runs every model of engine/testdata/lite (made by TensorFlow's converter) and compares
// with the outputs LiteRT's reference kernels produced: int8 exactly, float within rtol 1e-5;
// with num_threads 1, 2 and 4 (every splittable kernel split, however small), whose outputs
// must be identical byte for byte, int8 and float alike.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/npy.h"
#include "ember_test.h"
#include "lite/kernels.h"

namespace fs = std::filesystem;
using namespace ember::lite;

namespace {

const char* kDir = "../testdata/lite";

// Returns "" when ember matches the stored LiteRT outputs, else what differs. `outputs` gets
// the raw bytes of every output.
std::string RunCase(const std::string& stem, int num_threads, std::vector<std::string>* outputs) {
  auto model = Model::FromFile(std::string(kDir) + "/" + stem + ".tflite");
  if (!model.ok()) return "load: " + model.status().message();
  InterpreterOptions options;
  options.num_threads = num_threads;
  auto interp = Interpreter::Create(*model, options);
  if (!interp.ok()) return "create: " + interp.status().message();
  Interpreter& in = **interp;
  ember::Status s = in.AllocateTensors();
  if (!s.ok()) return "allocate: " + s.message();
  for (size_t i = 0; i < in.inputs_size(); ++i) {
    auto arr = ReadNpy(std::string(kDir) + "/" + stem + ".input_" + std::to_string(i) + ".npy");
    if (!arr.ok()) return arr.status().message();
    TensorView t = in.input(i);
    if (arr->data.size() != t.bytes) return "input size mismatch";
    std::memcpy(t.data, arr->data.data(), t.bytes);
  }
  s = in.Invoke();
  if (!s.ok()) return "invoke: " + s.message();
  for (size_t o = 0; o < in.outputs_size(); ++o) {
    auto exp = ReadNpy(std::string(kDir) + "/" + stem + ".expected_" + std::to_string(o) + ".npy");
    if (!exp.ok()) return exp.status().message();
    TensorView t = in.output(o);
    if (exp->data.size() != t.bytes) return "output size mismatch";
    outputs->emplace_back(reinterpret_cast<const char*>(t.data), t.bytes);
    if (t.type() == TensorType::kFloat32) {
      const float* a = t.as<float>();
      const float* b = reinterpret_cast<const float*>(exp->data.data());
      for (size_t i = 0; i < t.bytes / 4; ++i) {
        // Written so that a NaN on either side fails (every comparison with NaN is false).
        if (!(std::fabs(a[i] - b[i]) <= 1e-5 * std::fabs(b[i]) + 1e-6)) {
          return "output " + std::to_string(o) + "[" + std::to_string(i) +
                 "] = " + std::to_string(a[i]) + ", LiteRT " + std::to_string(b[i]);
        }
      }
    } else {
      const uint8_t* a = t.data;
      const uint8_t* b = exp->data.data();
      int diffs = 0;
      std::string first;
      for (size_t i = 0; i < t.bytes; ++i) {
        if (a[i] != b[i]) {
          if (diffs++ == 0) {
            first = "[" + std::to_string(i) + "] = " + std::to_string(static_cast<int8_t>(a[i])) +
                    ", LiteRT " + std::to_string(static_cast<int8_t>(b[i]));
          }
        }
      }
      if (diffs) return std::to_string(diffs) + " int8 elements differ, first " + first;
    }
  }
  return "";
}

}  // namespace

TEST(LiteModels, AllMatchLiteRtReference) {
  std::vector<std::string> stems;
  for (const auto& e : fs::directory_iterator(kDir)) {
    if (e.path().extension() == ".tflite") stems.push_back(e.path().stem().string());
  }
  std::sort(stems.begin(), stems.end());
  EXPECT_TRUE(stems.size() >= 30);
  SetMinTaskCostForTesting(1);  // the fixtures are small: split them anyway
  for (const std::string& stem : stems) {
    std::vector<std::string> one;
    std::string r = RunCase(stem, 1, &one);
    for (int threads : {2, 4}) {
      std::vector<std::string> many;
      const std::string rt = RunCase(stem, threads, &many);
      if (r.empty() && !rt.empty()) r = std::to_string(threads) + " threads: " + rt;
      if (r.empty() && many != one) {
        r = std::to_string(threads) + " threads give other bytes than one thread";
      }
    }
    if (!r.empty()) ::ember_test::Fail(__FILE__, __LINE__, stem + ": " + r);
    std::printf("  %-28s %s\n", stem.c_str(), r.empty() ? "ok (threads 1, 2, 4)" : "MISMATCH");
  }
  SetMinTaskCostForTesting(32768);
}

TEST(LiteModels, NumThreadsIsCheckedAndResolved) {
  auto model = Model::FromFile(std::string(kDir) + "/relu.tflite");
  ASSERT_OK(model.status());
  for (int bad : {-2, -100, InterpreterOptions::kMaxThreads + 1}) {
    InterpreterOptions options;
    options.num_threads = bad;
    auto interp = Interpreter::Create(*model, options);
    EXPECT_FALSE(interp.ok());
    EXPECT_TRUE(interp.status().message().find("num_threads is " + std::to_string(bad)) !=
                std::string::npos);
  }
  for (int n : {-1, 0, 1, 3}) {
    InterpreterOptions options;
    options.num_threads = n;
    auto interp = Interpreter::Create(*model, options);
    ASSERT_OK(interp.status());
    EXPECT_EQ((*interp)->num_threads(), n == 3 ? 3 : 1);
  }
  EXPECT_EQ(InterpreterOptions().num_threads, -1);  // LiteRT's default
}

EMBER_TEST_MAIN
