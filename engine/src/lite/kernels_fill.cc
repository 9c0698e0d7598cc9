// FILL (tf.fill, and what a causal attention mask's ones_like / full becomes): an output of the
// shape given by the int32/int64 dims input, every element the scalar value input, as LiteRT's
// kernel (lite/kernels/fill.cc): any type of a fixed size (FLOAT32, INT32, INT64, BOOL, and
// INT8/INT16 with the value quantized as the output). The dims are constant (often folded from
// SHAPE by shape_refine.cc; checked against the output at Prepare) or computed at run time: the
// output's shape is static, so run-time dims that differ from it fail Invoke.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_index.h"

namespace ember {
namespace lite {
namespace {

Status CheckDims(const NodeState& node, const uint8_t* data) {
  const TensorDef& dims = *node.t.in[0];
  const std::vector<int32_t>& out = node.t.out[0]->shape;
  std::vector<int64_t> got;
  for (size_t i = 0; i < dims.num_elements; ++i)
    got.push_back(index_ops::IndexAt(dims.type, data, i));
  bool same = got.size() == out.size();
  for (size_t i = 0; same && i < out.size(); ++i) same = got[i] == out[i];
  if (same) return Status::OK();
  std::string text = "[";
  for (size_t i = 0; i < got.size(); ++i) text += (i ? "," : "") + std::to_string(got[i]);
  return errors::InvalidArgument(node.what + ": dims '" + dims.name + "' are " + text +
                                 "] but the output's shape is " + ShapeString(out) +
                                 " (ember lite needs static output shapes)");
}

template <typename T>
void FillWith(uint8_t* out, size_t n, const uint8_t* value) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  T* y = reinterpret_cast<T*>(out);
  for (size_t i = 0; i < n; ++i) y[i] = v;
}

Status EvalFill(NodeState* node) {
  if (node->t.in[0]->data == nullptr) EMBER_RETURN_IF_ERROR(CheckDims(*node, node->t.in_data[0]));
  const size_t n = node->t.out[0]->num_elements;
  uint8_t* out = node->t.out_data[0];
  const uint8_t* value = node->t.in_data[1];
  switch (TensorTypeSize(node->t.out[0]->type)) {
    case 1:
      std::memset(out, value[0], n);
      break;
    case 2:
      FillWith<uint16_t>(out, n, value);
      break;
    case 4:
      FillWith<uint32_t>(out, n, value);
      break;
    default:
      FillWith<uint64_t>(out, n, value);
      break;
  }
  return Status::OK();
}

}  // namespace

Status PrepareFill(NodeState* node) {
  EMBER_RETURN_IF_ERROR(index_ops::CheckArity(*node, 2, 1, "dims, value"));
  const TensorDef& dims = *node->t.in[0];
  const TensorDef& value = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  if (dims.type != TensorType::kInt32 && dims.type != TensorType::kInt64) {
    return index_ops::UnsupportedType(*node, dims, "dims", "INT32 and INT64 are");
  }
  if (dims.shape.size() != 1) {
    return errors::InvalidArgument(node->what + ": dims '" + dims.name + "' has shape " +
                                   ShapeString(dims.shape) + "; it must be a vector");
  }
  if (value.num_elements != 1 || value.shape.size() > 1) {
    return errors::InvalidArgument(node->what + ": value '" + value.name + "' has shape " +
                                   ShapeString(value.shape) + "; it must be a scalar");
  }
  const size_t elem = TensorTypeSize(value.type);
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8) {
    return index_ops::UnsupportedType(*node, value, "value", "types of 1, 2, 4 or 8 bytes are");
  }
  EMBER_RETURN_IF_ERROR(index_ops::SameTypeAndQuant(*node, value, "value", out, "output"));
  if (dims.data != nullptr) {
    EMBER_RETURN_IF_ERROR(CheckDims(*node, dims.data));
  } else if (dims.num_elements != out.shape.size()) {
    return errors::InvalidArgument(node->what + ": output '" + out.name + "' has rank " +
                                   std::to_string(out.shape.size()) + " but dims '" + dims.name +
                                   "' hold " + std::to_string(dims.num_elements) + " values");
  }
  node->eval = EvalFill;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
