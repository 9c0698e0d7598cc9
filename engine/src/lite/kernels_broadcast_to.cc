// BROADCAST_TO (tf.broadcast_to): the input repeated along the dimensions where it has size 1
// (or is missing: the shapes are aligned on the right) to the shape given by the int32/int64
// shape input, as LiteRT's kernel (lite/kernels/broadcast_to.cc, reference BroadcastTo): byte
// moves, so every type ember holds, quantized ones keeping the input's quantization. The shape
// may be constant (checked against the input and the output at Prepare) or computed at run time:
// the output's shape is static, so a run-time shape that differs from it fails Invoke.
//
// Eval copies the longest run of trailing dimensions the input and output share in one memcpy,
// for every position of the leading dimensions (an odometer over at most 8 of them).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_index.h"

namespace ember {
namespace lite {
namespace {

constexpr size_t kMaxRank = 8;

// in_shape6: the input's dimensions, extended on the left with 1s to the output's rank.

Status EvalBroadcastTo(NodeState* node) {
  const TensorDef& shape = *node->t.in[1];
  if (shape.data == nullptr) {
    EMBER_RETURN_IF_ERROR(index_ops::CheckRunTimeShape(*node, shape, "shape", node->t.in_data[1]));
  }
  const std::vector<int32_t>& out = node->t.out[0]->shape;
  const std::vector<int32_t>& in = node->in_shape6;
  const size_t elem = TensorTypeSize(node->t.in[0]->type);
  const size_t rank = out.size();
  if (node->t.out[0]->num_elements == 0) return Status::OK();
  // The trailing dimensions where input and output agree make one contiguous run.
  size_t split = rank;
  size_t run = elem;
  while (split > 0 && in[split - 1] == out[split - 1]) {
    --split;
    run *= static_cast<size_t>(out[split]);
  }
  // Input strides (bytes) of the leading dimensions, 0 where the input is broadcast.
  size_t in_stride[kMaxRank] = {};
  size_t s = run;
  for (size_t d = split; d-- > 0;) {
    in_stride[d] = in[d] == 1 ? 0 : s;
    s *= static_cast<size_t>(in[d]);
  }
  size_t count = 1;
  for (size_t d = 0; d < split; ++d) count *= static_cast<size_t>(out[d]);
  int32_t idx[kMaxRank] = {};
  const uint8_t* src = node->t.in_data[0];
  uint8_t* dst = node->t.out_data[0];
  size_t offset = 0;
  for (size_t i = 0; i < count; ++i, dst += run) {
    std::memcpy(dst, src + offset, run);
    for (size_t d = split; d-- > 0;) {
      offset += in_stride[d];
      if (++idx[d] < out[d]) break;
      offset -= in_stride[d] * static_cast<size_t>(out[d]);
      idx[d] = 0;
    }
  }
  return Status::OK();
}

}  // namespace

Status PrepareBroadcastTo(NodeState* node) {
  EMBER_RETURN_IF_ERROR(index_ops::CheckArity(*node, 2, 1, "input, shape"));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& shape = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  if (TensorTypeSize(in.type) == 0) {
    return index_ops::UnsupportedType(*node, in, "input", "types of a fixed size are");
  }
  EMBER_RETURN_IF_ERROR(index_ops::SameTypeAndQuant(*node, in, "input", out, "output"));
  if (shape.type != TensorType::kInt32 && shape.type != TensorType::kInt64) {
    return index_ops::UnsupportedType(*node, shape, "shape", "INT32 and INT64 are");
  }
  if (shape.shape.size() != 1) {
    return errors::InvalidArgument(node->what + ": shape '" + shape.name + "' has shape " +
                                   ShapeString(shape.shape) + "; it must be a vector");
  }
  const size_t rank = shape.num_elements;
  if (rank > kMaxRank) {
    return errors::Unimplemented(node->what + ": shape '" + shape.name + "' has " +
                                 std::to_string(rank) + " dimensions; at most 8 are supported");
  }
  std::vector<int32_t> target = out.shape;
  if (shape.data != nullptr) {
    std::vector<int64_t> dims;
    for (size_t i = 0; i < rank; ++i) dims.push_back(index_ops::IndexAt(shape.type, shape.data, i));
    if (!index_ops::ToShape(dims, &target)) {
      return errors::InvalidArgument(node->what + ": shape '" + shape.name +
                                     "' holds a dimension that is negative or above 2^31 - 1");
    }
  } else if (out.shape.size() != rank) {
    return errors::InvalidArgument(node->what + ": output '" + out.name + "' has rank " +
                                   std::to_string(out.shape.size()) + " but shape '" + shape.name +
                                   "' holds " + std::to_string(rank) + " dimensions");
  }
  if (in.shape.size() > rank) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' of shape " +
                                   ShapeString(in.shape) + " cannot be broadcast to " +
                                   ShapeString(target) + " (a lower rank)");
  }
  const size_t lead = rank - in.shape.size();
  node->in_shape6.assign(lead, 1);
  for (size_t d = 0; d < in.shape.size(); ++d) {
    const int32_t di = in.shape[d];
    if (di != 1 && di != target[lead + d]) {
      return errors::InvalidArgument(node->what + ": input '" + in.name + "' of shape " +
                                     ShapeString(in.shape) + " cannot be broadcast to " +
                                     ShapeString(target));
    }
    node->in_shape6.push_back(di);
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, target, "output"));
  node->eval = EvalBroadcastTo;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
