// FILL (tf.fill, and what a causal attention mask's ones_like / full becomes): an output of the
// shape given by the int32/int64 dims input, every element the scalar value input, as LiteRT's
// kernel (lite/kernels/fill.cc): any type of a fixed size (FLOAT32, INT32, INT64, BOOL, and
// INT8/INT16 with the value quantized as the output). The dims are constant (often folded from
// SHAPE by shape_refine.cc; checked against the output at Prepare) or computed at run time: the
// output's shape is static, so run-time dims that differ from it fail Invoke.
#include <cstdint>

#include "lite/kernels.h"
#include "lite/kernels_index.h"

namespace ember {
namespace lite {
namespace {

Status EvalFill(NodeState* node) {
  const TensorDef& dims = *node->t.in[0];
  if (dims.data == nullptr) {
    EMBER_RETURN_IF_ERROR(index_ops::CheckRunTimeShape(*node, dims, "dims", node->t.in_data[0]));
  }
  const size_t n = node->t.out[0]->num_elements;
  uint8_t* out = node->t.out_data[0];
  const uint8_t* value = node->t.in_data[1];
  index_ops::FillElements(out, value, TensorTypeSize(node->t.out[0]->type), n);
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
    EMBER_RETURN_IF_ERROR(index_ops::CheckRunTimeShape(*node, dims, "dims", dims.data));
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
