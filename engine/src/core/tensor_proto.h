// Decoded TensorProto fields, shared by the binary and JSON GraphDef readers.
#ifndef EMBER_CORE_TENSOR_PROTO_H_
#define EMBER_CORE_TENSOR_PROTO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ember/graph_def.h"
#include "ember/status.h"
#include "ember/tensor.h"

namespace ember {

struct TensorProtoFields {
  int dtype = 0;
  PartialShape shape;
  bool has_content = false;
  std::string content;  // tensor_content, little-endian packed
  std::vector<float> float_val;
  std::vector<double> double_val;
  std::vector<int64_t> int_val;  // int_val, int64_val, bool_val, half_val by dtype
  std::vector<int64_t> int64_val;
  std::vector<int64_t> bool_val;
};

// Largest tensor a GraphDef may materialize (a filled constant can claim any shape).
constexpr int64_t kMaxGraphTensorBytes = int64_t{1} << 30;

// Maps a wire DataType number (reference types are +100) to ember's DataType.
// `where` names the node and attr for the error.
Status DataTypeFromProto(int64_t value, const std::string& where, DataType* out);
// TensorFlow's DT_* name for a DataType number, or "" when unknown.
std::string DataTypeProtoName(int value);
// Builds a Tensor, filling with the last typed value when there are fewer values than elements.
Status TensorFromFields(const TensorProtoFields& f, const std::string& where, Tensor* out);

}  // namespace ember

#endif  // EMBER_CORE_TENSOR_PROTO_H_
