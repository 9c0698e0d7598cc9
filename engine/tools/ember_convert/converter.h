// GraphDef -> TFLite conversion for ember-convert: the float graph (constant folding,
// BiasAdd and activation fusion, NHWC) and full-integer post-training quantization.
#ifndef EMBER_TOOLS_EMBER_CONVERT_CONVERTER_H_
#define EMBER_TOOLS_EMBER_CONVERT_CONVERTER_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "ember/graph_def.h"
#include "ember/lite/schema.h"
#include "ember/status.h"

namespace ember {
namespace convert {

// A lite graph plus the storage its constant tensors point into.
struct LiteGraph {
  lite::SubGraphDef graph;
  std::deque<std::vector<uint8_t>> storage;

  // Adds a tensor; `bytes` (if any) is copied into storage. Returns its index.
  int32_t AddTensor(const std::string& name, lite::TensorType type, std::vector<int32_t> shape,
                    const void* bytes = nullptr, size_t size = 0);
};

// Converts the part of `graph` that computes `outputs` from `inputs` into a float32 model.
StatusOr<std::unique_ptr<LiteGraph>> ConvertFloat(const GraphDef& graph,
                                                  const std::vector<std::string>& inputs,
                                                  const std::vector<std::string>& outputs);

// One calibration sample: a float tensor per graph input, in input order.
using Sample = std::vector<std::vector<float>>;

// Full-integer PTQ: runs `float_graph` on the samples to record activation ranges, then
// builds the int8 model (int8 inputs and outputs, per-channel conv weights, int32 biases).
StatusOr<std::unique_ptr<LiteGraph>> QuantizeInt8(const LiteGraph& float_graph,
                                                  const std::vector<Sample>& samples);

}  // namespace convert
}  // namespace ember

#endif  // EMBER_TOOLS_EMBER_CONVERT_CONVERTER_H_
