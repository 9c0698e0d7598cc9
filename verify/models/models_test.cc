// Real architectures through the installed package, against the oracles' stored outputs:
//  - every engine/testdata/graphs/model_*/ GraphDef (TensorFlow-frozen MobileNetV2/V1, BERT
//    encoders, a Keras MultiHeadAttention encoder) through a Session, compared with what
//    TensorFlow computed (expected_<i>.npy) within the manifest's rtol/atol;
//  - every engine/testdata/lite/models/*.tflite through ember lite, compared with LiteRT's
//    outputs: float within rtol/atol, int8 ("exact") byte for byte.
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ember/graph_def.h"
#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/npy.h"
#include "ember/session.h"
#include "ember/testing/ember_test.h"

namespace {

const std::string kData = EMBER_MODELS_TESTDATA;

std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The manifests are flat JSON written by the generators; these read the few fields needed.
// Strings of the array under `key` ("fetches": ["a", "b"]) or, for objects, each `field`.
std::vector<std::string> JsonStrings(const std::string& json, const std::string& key,
                                     const std::string& field = "") {
  std::vector<std::string> out;
  size_t at = json.find("\"" + key + "\"");
  if (at == std::string::npos) return out;
  at = json.find('[', at);
  const size_t end = json.find(']', at);
  std::string body = json.substr(at + 1, end - at - 1);
  size_t pos = 0;
  while (true) {
    if (!field.empty()) {
      pos = body.find("\"" + field + "\"", pos);
      if (pos == std::string::npos) break;
      pos = body.find(':', pos) + 1;
    }
    const size_t q = body.find('"', pos);
    if (q == std::string::npos) break;
    const size_t q2 = body.find('"', q + 1);
    out.push_back(body.substr(q + 1, q2 - q - 1));
    pos = q2 + 1;
  }
  return out;
}

double JsonNumber(const std::string& json, const std::string& key, double fallback) {
  const size_t at = json.find("\"" + key + "\"");
  if (at == std::string::npos) return fallback;
  return std::atof(json.c_str() + json.find(':', at) + 1);
}

std::vector<std::string> Dirs(const std::string& path, const std::string& prefix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.compare(0, prefix.size(), prefix) == 0) out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

ember::DataType DtypeOf(const std::string& descr) {
  if (descr == "<f4") return ember::DataType::kFloat;
  if (descr == "<f8") return ember::DataType::kDouble;
  if (descr == "<i4") return ember::DataType::kInt32;
  if (descr == "<i8") return ember::DataType::kInt64;
  if (descr == "|b1") return ember::DataType::kBool;
  if (descr == "|i1") return ember::DataType::kInt8;
  if (descr == "|u1") return ember::DataType::kUInt8;
  return ember::DataType::kInvalid;
}

// "" when `got` matches the .npy at `path`, else what differs.
std::string Compare(const ember::Tensor& got, const std::string& path, double rtol, double atol) {
  auto want = ember::lite::ReadNpy(path);
  if (!want.ok()) return want.status().message();
  if (got.dtype() != DtypeOf(want->descr)) return path + ": dtype differs";
  if (got.shape().dim_sizes() != want->shape) return path + ": shape differs";
  if (got.TotalBytes() != want->data.size()) return path + ": size differs";
  if (got.dtype() != ember::DataType::kFloat) {
    return std::memcmp(got.raw_data(), want->data.data(), want->data.size()) == 0
               ? ""
               : path + ": values differ";
  }
  const float* a = got.data<float>();
  const float* b = reinterpret_cast<const float*>(want->data.data());
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    if (!(std::fabs(a[i] - b[i]) <= rtol * std::fabs(b[i]) + atol)) {
      return path + "[" + std::to_string(i) + "]: " + std::to_string(a[i]) + " vs TensorFlow's " +
             std::to_string(b[i]);
    }
  }
  return "";
}

std::string RunGraphFixture(const std::string& dir) {
  const std::string manifest = ReadText(dir + "/manifest.json");
  ember::GraphDef graph;
  ember::Status s = ember::ReadGraphDefFile(dir + "/model.pb", &graph);
  if (!s.ok()) return s.ToString();
  std::unique_ptr<ember::Session> session = ember::NewSession(ember::SessionOptions());
  s = session->Create(graph);
  if (!s.ok()) return s.ToString();
  const std::vector<std::string> names = JsonStrings(manifest, "feeds", "name");
  const std::vector<std::string> files = JsonStrings(manifest, "feeds", "file");
  std::vector<std::pair<std::string, ember::Tensor>> feeds;
  for (size_t i = 0; i < names.size() && i < files.size(); ++i) {
    auto arr = ember::lite::ReadNpy(dir + "/" + files[i]);
    if (!arr.ok()) return arr.status().message();
    ember::Tensor t(DtypeOf(arr->descr), ember::TensorShape(arr->shape));
    if (t.TotalBytes() != arr->data.size()) return files[i] + ": unsupported dtype " + arr->descr;
    std::memcpy(t.raw_data(), arr->data.data(), arr->data.size());
    feeds.emplace_back(names[i], t);
  }
  const std::vector<std::string> fetches = JsonStrings(manifest, "fetches");
  const std::vector<std::string> expected = JsonStrings(manifest, "expected");
  std::vector<ember::Tensor> outputs;
  s = session->Run(feeds, fetches, {}, &outputs);
  if (!s.ok()) return s.ToString();
  if (outputs.size() != expected.size()) return "wrong number of outputs";
  const double rtol = JsonNumber(manifest, "rtol", 1e-5), atol = JsonNumber(manifest, "atol", 1e-6);
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string err = Compare(outputs[i], dir + "/" + expected[i], rtol, atol);
    if (!err.empty()) return fetches[i] + ": " + err;
  }
  return "";
}

std::string RunLiteModel(const std::string& dir, const std::string& name, bool exact, double rtol,
                         double atol) {
  using namespace ember::lite;
  auto model = Model::FromFile(dir + "/" + name + ".tflite");
  if (!model.ok()) return model.status().message();
  auto interp = Interpreter::Create(std::move(*model));
  if (!interp.ok()) return interp.status().message();
  Interpreter& in = **interp;
  ember::Status s = in.AllocateTensors();
  if (!s.ok()) return s.message();
  for (size_t i = 0; i < in.inputs_size(); ++i) {
    auto arr = ReadNpy(dir + "/" + name + ".input_" + std::to_string(i) + ".npy");
    if (!arr.ok()) return arr.status().message();
    TensorView t = in.input(i);
    if (arr->data.size() != t.bytes) return "input " + std::to_string(i) + " size mismatch";
    std::memcpy(t.data, arr->data.data(), t.bytes);
  }
  s = in.Invoke();
  if (!s.ok()) return s.message();
  for (size_t o = 0; o < in.outputs_size(); ++o) {
    auto want = ReadNpy(dir + "/" + name + ".expected_" + std::to_string(o) + ".npy");
    if (!want.ok()) return want.status().message();
    TensorView t = in.output(o);
    if (want->data.size() != t.bytes) return "output " + std::to_string(o) + " size mismatch";
    if (!exact && t.type() == TensorType::kFloat32) {
      const float* a = t.as<float>();
      const float* b = reinterpret_cast<const float*>(want->data.data());
      for (size_t i = 0; i < t.bytes / 4; ++i) {
        if (!(std::fabs(a[i] - b[i]) <= rtol * std::fabs(b[i]) + atol)) {
          return "output " + std::to_string(o) + "[" + std::to_string(i) +
                 "] = " + std::to_string(a[i]) + ", LiteRT " + std::to_string(b[i]);
        }
      }
    } else if (std::memcmp(t.data, want->data.data(), t.bytes) != 0) {
      return "output " + std::to_string(o) + " is not bit-exact with LiteRT";
    }
  }
  return "";
}

TEST(Models, GraphDefsMatchTensorFlow) {
  const std::vector<std::string> dirs = Dirs(kData + "/graphs", "model_");
  EXPECT_TRUE(dirs.size() >= 4);
  for (const std::string& d : dirs) {
    const std::string err = RunGraphFixture(kData + "/graphs/" + d);
    if (!err.empty()) std::fprintf(stderr, "%s: %s\n", d.c_str(), err.c_str());
    EXPECT_TRUE(err.empty());
  }
}

TEST(Models, TfliteMatchLiteRT) {
  const std::string dir = kData + "/lite/models";
  const std::string manifest = ReadText(dir + "/manifest.json");
  int seen = 0;
  // Top-level keys of the manifest: lines `  "name": {`.
  std::vector<std::string> names;
  std::istringstream lines(manifest);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > 6 && line.compare(0, 3, "  \"") == 0 &&
        line.compare(line.size() - 4, 4, "\": {") == 0) {
      names.push_back(line.substr(3, line.size() - 7));
    }
  }
  for (const std::string& name : names) {
    const size_t at = manifest.find("\"" + name + "\"");
    if (at == std::string::npos) continue;
    ++seen;
    const std::string entry = manifest.substr(at, manifest.find('}', at) - at);
    const bool exact = entry.find("\"exact\": true") != std::string::npos;
    const std::string err = RunLiteModel(dir, name, exact, JsonNumber(entry, "rtol", 1e-4),
                                         JsonNumber(entry, "atol", 1e-5));
    if (!err.empty()) std::fprintf(stderr, "%s: %s\n", name.c_str(), err.c_str());
    EXPECT_TRUE(err.empty());
  }
  EXPECT_TRUE(seen >= 9);
}

}  // namespace

EMBER_TEST_MAIN
