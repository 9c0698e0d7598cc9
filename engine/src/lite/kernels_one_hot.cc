// ONE_HOT (tf.one_hot): for indices of shape [P..., S...] split at `axis` (-1: after the last
// dimension), the output [P..., depth, S...] holds on_value where the index equals the position
// along the new axis, off_value elsewhere, as LiteRT's kernel (lite/kernels/one_hot.cc): an
// index outside 0..depth-1 gives a row of off_value, and int64 indices are compared after their
// conversion to int32, as LiteRT does. Indices int32 or int64; depth an int32 scalar, constant
// (checked against the output at Prepare) or computed at run time (the output's shape is
// static, so a different depth fails Invoke); on_value and off_value scalars of the output's
// type: float32, int32, int64, bool, int8 or uint8 (quantized ones with the output's
// quantization). Values are copied as bytes.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_index.h"

namespace ember {
namespace lite {
namespace {

// The node's geometry: outer = the product of the index dimensions before the axis, inner =
// those after it, depth = the new axis's size.

template <typename V, typename I>
void OneHotRows(NodeState* node) {
  V on, off;
  std::memcpy(&on, node->t.in_data[2], sizeof(V));
  std::memcpy(&off, node->t.in_data[3], sizeof(V));
  const I* indices = node->t.In<I>(0);
  V* out = node->t.Out<V>(0);
  const int64_t outer = node->outer, inner = node->inner;
  const int32_t depth = static_cast<int32_t>(node->depth);
  for (int64_t i = 0; i < outer; ++i) {
    for (int32_t j = 0; j < depth; ++j) {
      for (int64_t k = 0; k < inner; ++k) {
        *out++ = static_cast<int32_t>(indices[i * inner + k]) == j ? on : off;
      }
    }
  }
}

template <typename V>
void OneHotValues(NodeState* node) {
  if (node->t.in[0]->type == TensorType::kInt64) {
    OneHotRows<V, int64_t>(node);
  } else {
    OneHotRows<V, int32_t>(node);
  }
}

Status EvalOneHot(NodeState* node) {
  const int32_t depth = *node->t.In<int32_t>(1);
  if (depth != node->depth) {
    return errors::InvalidArgument(
        node->what + ": depth is " + std::to_string(depth) + " at run time but the output has " +
        std::to_string(node->depth) + " (ember lite needs static output shapes)");
  }
  switch (TensorTypeSize(node->t.out[0]->type)) {
    case 1:
      OneHotValues<uint8_t>(node);
      break;
    case 4:
      OneHotValues<uint32_t>(node);
      break;
    default:
      OneHotValues<uint64_t>(node);
      break;
  }
  return Status::OK();
}

}  // namespace

Status PrepareOneHot(NodeState* node) {
  EMBER_RETURN_IF_ERROR(index_ops::CheckArity(*node, 4, 1, "indices, depth, on_value, off_value"));
  const TensorDef& indices = *node->t.in[0];
  const TensorDef& depth = *node->t.in[1];
  const TensorDef& on = *node->t.in[2];
  const TensorDef& off = *node->t.in[3];
  const TensorDef& out = *node->t.out[0];
  if (indices.type != TensorType::kInt32 && indices.type != TensorType::kInt64) {
    return index_ops::UnsupportedType(*node, indices, "indices", "INT32 and INT64 are");
  }
  if (depth.type != TensorType::kInt32) {
    return index_ops::UnsupportedType(*node, depth, "depth", "INT32 is");
  }
  switch (on.type) {
    case TensorType::kFloat32:
    case TensorType::kInt32:
    case TensorType::kInt64:
    case TensorType::kBool:
    case TensorType::kInt8:
    case TensorType::kUInt8:
      break;
    default:
      return index_ops::UnsupportedType(*node, on, "on_value",
                                        "FLOAT32, INT32, INT64, BOOL, INT8 and UINT8 are");
  }
  EMBER_RETURN_IF_ERROR(index_ops::SameTypeAndQuant(*node, on, "on_value", off, "off_value"));
  EMBER_RETURN_IF_ERROR(index_ops::SameTypeAndQuant(*node, on, "on_value", out, "output"));
  for (const TensorDef* t : {&depth, &on, &off}) {
    if (t->num_elements != 1) {
      return errors::InvalidArgument(node->what + ": '" + t->name + "' has shape " +
                                     ShapeString(t->shape) + "; depth, on_value and " +
                                     "off_value must each hold one value");
    }
  }
  const int32_t rank = static_cast<int32_t>(indices.shape.size());
  const int32_t axis_opt = node->op->options.axis;
  const int32_t axis = axis_opt == -1 ? rank : axis_opt;
  if (axis < 0 || axis > rank) {
    return errors::InvalidArgument(node->what + ": axis " + std::to_string(axis_opt) +
                                   " is out of range for rank-" + std::to_string(rank) +
                                   " indices (-1 or 0.." + std::to_string(rank) + ")");
  }
  int32_t d = 0;
  if (depth.data != nullptr) {
    std::memcpy(&d, depth.data, 4);
    if (d < 0) {
      return errors::InvalidArgument(node->what + ": depth is " + std::to_string(d) +
                                     "; it must not be negative");
    }
  } else if (out.shape.size() == static_cast<size_t>(rank) + 1) {
    d = out.shape[static_cast<size_t>(axis)];
  }
  std::vector<int32_t> expected = indices.shape;
  expected.insert(expected.begin() + axis, d);
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, expected, "output"));
  node->outer = 1;
  node->inner = 1;
  for (int32_t i = 0; i < rank; ++i) {
    (i < axis ? node->outer : node->inner) *= indices.shape[static_cast<size_t>(i)];
  }
  node->depth = d;
  node->eval = EvalOneHot;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
