// ember-convert: TensorFlow GraphDef -> .tflite, optionally full-integer quantized.
//
//   ember-convert GRAPH.pb --input NAME [--input NAME ...] --output NAME [--output NAME ...]
//                 [-o OUT.tflite] [--quantize int8 --calibration DIR_OF_NPY]
//
// Calibration: with one input, every DIR/*.npy is a float sample of the input's shape (or a
// stack of them along a leading axis). With several inputs, DIR/<input name>/*.npy.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ember/graph_def.h"
#include "ember/lite/npy.h"
#include "ember/lite/writer.h"
#include "tools/ember_convert/converter.h"

namespace fs = std::filesystem;
using ember::Status;
using ember::StatusOr;

namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "ember-convert: %s\n", msg.c_str());
  return 1;
}

StatusOr<std::vector<std::vector<float>>> LoadSamples(const fs::path& dir, size_t numel) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".npy") files.push_back(e.path());
  }
  if (ec)
    return ember::errors::NotFound("cannot read calibration directory '" + dir.string() + "'");
  std::sort(files.begin(), files.end());
  if (files.empty()) return ember::errors::NotFound("no .npy files in '" + dir.string() + "'");
  std::vector<std::vector<float>> out;
  for (const fs::path& f : files) {
    auto arr = ember::lite::ReadNpy(f.string());
    if (!arr.ok()) return arr.status();
    std::vector<float> values(arr->num_elements());
    if (arr->descr == "<f4") {
      std::memcpy(values.data(), arr->data.data(), values.size() * 4);
    } else if (arr->descr == "<f8") {
      for (size_t i = 0; i < values.size(); ++i) {
        double d;
        std::memcpy(&d, arr->data.data() + 8 * i, 8);
        values[i] = static_cast<float>(d);
      }
    } else {
      return ember::errors::InvalidArgument("calibration file '" + f.string() + "' has dtype " +
                                            arr->descr + "; float32 or float64 expected");
    }
    if (numel == 0 || values.size() % numel != 0) {
      return ember::errors::InvalidArgument(
          "calibration file '" + f.string() + "' has " + std::to_string(values.size()) +
          " values, not a multiple of the input's " + std::to_string(numel));
    }
    for (size_t k = 0; k < values.size(); k += numel) {
      out.emplace_back(values.begin() + static_cast<long>(k),
                       values.begin() + static_cast<long>(k + numel));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string graph_path, out_path, quantize, calibration;
  std::vector<std::string> inputs, outputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= argc) return false;
      *v = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      std::fprintf(stderr,
                   "usage: ember-convert GRAPH.pb --input NAME --output NAME [-o OUT.tflite] "
                   "[--quantize int8 --calibration DIR_OF_NPY]\n");
      return 2;
    } else if (a == "--input" && value(&v)) {
      inputs.push_back(v);
    } else if (a == "--output" && value(&v)) {
      outputs.push_back(v);
    } else if ((a == "-o" || a == "--out") && value(&v)) {
      out_path = v;
    } else if (a == "--quantize" && value(&v)) {
      quantize = v;
    } else if (a == "--calibration" && value(&v)) {
      calibration = v;
    } else if (!a.empty() && a[0] != '-' && graph_path.empty()) {
      graph_path = a;
    } else {
      return Fail("unexpected argument '" + a + "' (see --help)");
    }
  }
  if (graph_path.empty()) return Fail("missing GRAPH.pb (see --help)");
  if (!quantize.empty() && quantize != "int8")
    return Fail("--quantize supports only 'int8', got '" + quantize + "'");
  if (!quantize.empty() && calibration.empty())
    return Fail("--quantize int8 needs --calibration DIR_OF_NPY");
  if (out_path.empty()) out_path = fs::path(graph_path).replace_extension(".tflite").string();

  ember::GraphDef graph;
  Status s = ember::ReadGraphDefFile(graph_path, &graph);
  if (!s.ok()) return Fail(graph_path + ": " + s.message());
  auto lite_graph = ember::convert::ConvertFloat(graph, inputs, outputs);
  if (!lite_graph.ok()) return Fail(lite_graph.status().message());
  std::unique_ptr<ember::convert::LiteGraph> result = std::move(*lite_graph);
  if (!quantize.empty()) {
    const auto& g = result->graph;
    std::vector<ember::convert::Sample> samples;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const ember::lite::TensorDef& t = g.tensors[static_cast<size_t>(g.inputs[i])];
      const fs::path dir =
          g.inputs.size() == 1 ? fs::path(calibration) : fs::path(calibration) / inputs[i];
      auto per_input = LoadSamples(dir, t.num_elements);
      if (!per_input.ok()) return Fail(per_input.status().message());
      if (i == 0) samples.resize(per_input->size());
      if (per_input->size() != samples.size())
        return Fail("inputs have different numbers of calibration samples");
      for (size_t k = 0; k < samples.size(); ++k) samples[k].push_back((*per_input)[k]);
    }
    auto q = ember::convert::QuantizeInt8(*result, samples);
    if (!q.ok()) return Fail(q.status().message());
    result = std::move(*q);
  }
  auto bytes = ember::lite::WriteModel(result->graph, "ember-convert");
  if (!bytes.ok()) return Fail(bytes.status().message());
  std::ofstream f(out_path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes->data()),
          static_cast<std::streamsize>(bytes->size()));
  if (!f) return Fail("cannot write '" + out_path + "'");
  std::printf("wrote %s (%zu bytes, %zu operators%s)\n", out_path.c_str(), bytes->size(),
              result->graph.operators.size(), quantize.empty() ? "" : ", int8");
  return 0;
}
