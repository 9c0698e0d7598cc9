// The .tflite runner behind ember-run (tools/ember_run dispatches here by file extension).
// Feeds are matched to model inputs by tensor name or by index ("0", "1", ...); with no
// fetches, every model output is returned in order. Header-only: only ember-run, which links
// both libember_framework (Tensor) and libember_lite, includes it.
#ifndef EMBER_SRC_LITE_TOOLS_RUN_TFLITE_H_
#define EMBER_SRC_LITE_TOOLS_RUN_TFLITE_H_

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {
namespace lite {

inline DataType ToDataType(TensorType t) {
  switch (t) {
    case TensorType::kFloat32:
      return DataType::kFloat;
    case TensorType::kInt32:
      return DataType::kInt32;
    case TensorType::kInt8:
      return DataType::kInt8;
    case TensorType::kUInt8:
      return DataType::kUInt8;
    case TensorType::kInt64:
      return DataType::kInt64;
    case TensorType::kInt16:
      return DataType::kInt16;
    case TensorType::kBool:
      return DataType::kBool;
    default:
      return DataType::kInvalid;
  }
}

// Index into `list` for NAME or a decimal index, else NOT_FOUND naming the choices.
inline StatusOr<size_t> ResolveTensor(const Interpreter& in, const std::string& key, bool input) {
  const size_t n = input ? in.inputs_size() : in.outputs_size();
  if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos) {
    const size_t i = static_cast<size_t>(std::stoull(key));
    if (i < n) return i;
  }
  return input ? in.InputIndex(key) : in.OutputIndex(key);
}

inline Status RunTflite(const std::string& path,
                        const std::vector<std::pair<std::string, Tensor>>& feeds,
                        const std::vector<std::string>& fetches, std::vector<Tensor>* outputs) {
  auto model = Model::FromFile(path);
  if (!model.ok()) return model.status();
  auto interp = Interpreter::Create(*model);
  if (!interp.ok()) return interp.status();
  Interpreter& in = **interp;
  EMBER_RETURN_IF_ERROR(in.AllocateTensors());
  std::vector<bool> fed(in.inputs_size(), false);
  for (const auto& feed : feeds) {
    auto idx = ResolveTensor(in, feed.first, true);
    if (!idx.ok()) return idx.status();
    fed[*idx] = true;
    TensorView t = in.input(*idx);
    const Tensor& v = feed.second;
    if (v.dtype() != ToDataType(t.type())) {
      return errors::InvalidArgument("feed '" + feed.first + "': input '" + t.name() + "' is " +
                                     TensorTypeName(t.type()) + " but the value is " +
                                     DataTypeString(v.dtype()));
    }
    std::vector<int32_t> shape;
    for (int64_t d : v.shape().dim_sizes()) shape.push_back(static_cast<int32_t>(d));
    if (shape != t.shape()) {
      return errors::InvalidArgument("feed '" + feed.first + "': input '" + t.name() +
                                     "' has shape " + ShapeString(t.shape()) +
                                     " but the value is " + v.shape().DebugString());
    }
    std::memcpy(t.data, v.raw_data(), t.bytes);
  }
  for (size_t i = 0; i < fed.size(); ++i) {
    if (!fed[i]) {
      return errors::InvalidArgument("You must feed a value for input " + std::to_string(i) +
                                     " ('" + in.input(i).name() + "') of " + path);
    }
  }
  EMBER_RETURN_IF_ERROR(in.Invoke());
  std::vector<size_t> which;
  if (fetches.empty()) {
    for (size_t i = 0; i < in.outputs_size(); ++i) which.push_back(i);
  }
  for (const std::string& f : fetches) {
    auto idx = ResolveTensor(in, f, false);
    if (!idx.ok()) return idx.status();
    which.push_back(*idx);
  }
  outputs->clear();
  for (size_t i : which) {
    TensorView t = in.output(i);
    std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
    Tensor out(ToDataType(t.type()), TensorShape(dims));
    std::memcpy(out.raw_data(), t.data, t.bytes);
    outputs->push_back(out);
  }
  return Status::OK();
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_TOOLS_RUN_TFLITE_H_
