// ember._ember._convert: ember-convert's GraphDef -> .tflite conversion and int8 PTQ.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <vector>

#include "arrays.h"
#include "common.h"
#include "ember/lite/writer.h"
#include "tools/ember_convert/converter.h"

namespace ember {
namespace python {

namespace {

// The float32 values of one calibration array (any numeric dtype, cast as np.asarray does).
std::vector<float> FloatValues(nb::handle value) {
  PyArray_Descr* f32 = PyArray_DescrFromType(NPY_FLOAT32);
  nb::object arr = nb::steal(
      PyArray_FromAny(value.ptr(), f32, 0, 0, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST, nullptr));
  if (!arr.is_valid()) throw nb::python_error();
  auto* a = reinterpret_cast<PyArrayObject*>(arr.ptr());
  const float* p = static_cast<const float*>(PyArray_DATA(a));
  return std::vector<float>(p, p + PyArray_SIZE(a));
}

}  // namespace

nb::bytes Convert(const PyGraphDef& graph, const std::vector<std::string>& inputs,
                  const std::vector<std::string>& outputs, nb::handle samples) {
  auto float_graph = convert::ConvertFloat(*graph.graph, inputs, outputs);
  if (!float_graph.ok()) ThrowStatus(float_graph.status());
  std::unique_ptr<convert::LiteGraph> result = std::move(*float_graph);
  if (!samples.is_none()) {
    const lite::SubGraphDef& g = result->graph;
    std::vector<convert::Sample> calibration;
    for (nb::handle sample : samples) {
      // One sample: a sequence with an array per input, or (one input) just the array.
      std::vector<nb::handle> per_input;
      if (g.inputs.size() == 1 && PyArray_Check(sample.ptr())) {
        per_input.push_back(sample);
      } else {
        for (nb::handle v : sample) per_input.push_back(v);
      }
      if (per_input.size() != g.inputs.size()) {
        ThrowStatus(errors::InvalidArgument(
            "a representative sample has " + std::to_string(per_input.size()) +
            " arrays; the model has " + std::to_string(g.inputs.size()) + " inputs"));
      }
      // Each array holds one sample of its input, or k of them stacked (the same k for all).
      size_t k = 0;
      std::vector<std::vector<float>> values(per_input.size());
      for (size_t i = 0; i < per_input.size(); ++i) {
        values[i] = FloatValues(per_input[i]);
        const size_t numel = g.tensors[static_cast<size_t>(g.inputs[i])].num_elements;
        const size_t ki = numel == 0 ? 0 : values[i].size() / numel;
        if (numel == 0 || values[i].size() % numel != 0 || ki == 0 || (k != 0 && ki != k)) {
          ThrowStatus(errors::InvalidArgument(
              "a representative sample for input " + std::to_string(i) + " has " +
              std::to_string(values[i].size()) + " values; the input has " + std::to_string(numel) +
              " (or a stack of them, the same count for every input)"));
        }
        k = ki;
      }
      for (size_t j = 0; j < k; ++j) {
        convert::Sample sample_j;
        for (size_t i = 0; i < values.size(); ++i) {
          const size_t numel = values[i].size() / k;
          sample_j.emplace_back(values[i].begin() + static_cast<std::ptrdiff_t>(j * numel),
                                values[i].begin() + static_cast<std::ptrdiff_t>((j + 1) * numel));
        }
        calibration.push_back(std::move(sample_j));
      }
    }
    if (calibration.empty()) {
      ThrowStatus(
          errors::InvalidArgument("int8 quantization needs at least one representative sample"));
    }
    StatusOr<std::unique_ptr<convert::LiteGraph>> q = errors::Internal("unset");
    {
      nb::gil_scoped_release release;
      q = convert::QuantizeInt8(*result, calibration);
    }
    if (!q.ok()) ThrowStatus(q.status());
    result = std::move(*q);
  }
  auto bytes = lite::WriteModel(result->graph, "ember-convert");
  if (!bytes.ok()) ThrowStatus(bytes.status());
  return nb::bytes(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

void RegisterConvert(nb::module_& m) {
  using namespace nb::literals;
  m.def("_convert", &Convert, "graph"_a, "inputs"_a, "outputs"_a, "samples"_a = nb::none());
}

}  // namespace python
}  // namespace ember
