// Helpers shared by the index and layout kernels: DEPTH_TO_SPACE / SPACE_TO_DEPTH
// (kernels_depth_space.cc), TOPK_V2 (kernels_topk.cc), BROADCAST_TO and ONE_HOT
// (kernels_broadcast_to.cc, kernels_one_hot.cc), FLOOR_DIV / FLOOR_MOD (kernels_floor.cc),
// GATHER_ND / SCATTER_ND (kernels_gather_scatter_nd.cc).
#ifndef EMBER_SRC_LITE_KERNELS_INDEX_H_
#define EMBER_SRC_LITE_KERNELS_INDEX_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "lite/kernels.h"

namespace ember {
namespace lite {
namespace index_ops {

// Exactly `inputs` inputs, all present, and `outputs` outputs; `names` lists the inputs for the
// message ("input, block_size").
inline Status CheckArity(const NodeState& node, size_t inputs, size_t outputs, const char* names) {
  bool ok = node.t.in.size() == inputs && node.t.out.size() == outputs;
  for (size_t i = 0; ok && i < inputs; ++i) ok = node.t.in[i] != nullptr;
  if (!ok) {
    return errors::InvalidArgument(
        node.what + ": expects " + std::to_string(inputs) + " inputs (" + names + ") and " +
        std::to_string(outputs) + (outputs == 1 ? " output" : " outputs") + ", got " +
        std::to_string(node.t.in.size()) + " and " + std::to_string(node.t.out.size()));
  }
  return Status::OK();
}

// UNIMPLEMENTED naming the operator, the tensor's role and name, its type and what is supported.
inline Status UnsupportedType(const NodeState& node, const TensorDef& t, const char* role,
                              const char* supported) {
  return errors::Unimplemented(node.what + ": " + role + " '" + t.name + "' is " +
                               TensorTypeName(t.type) + ", which ember lite does not support " +
                               "here (" + supported + ")");
}

// `out` has `in`'s type and quantization: byte moves never rescale.
inline Status SameTypeAndQuant(const NodeState& node, const TensorDef& in, const char* in_role,
                               const TensorDef& out, const char* out_role) {
  EMBER_RETURN_IF_ERROR(CheckType(node, out, in.type, out_role));
  if (in.quant.scale != out.quant.scale || in.quant.zero_point != out.quant.zero_point) {
    return errors::Unimplemented(node.what + ": " + in_role + " '" + in.name + "' and " + out_role +
                                 " '" + out.name +
                                 "' are quantized differently (this operator does not rescale)");
  }
  return Status::OK();
}

// Element i of an INT16, INT32 or INT64 tensor.
inline int64_t IndexAt(TensorType type, const uint8_t* data, size_t i) {
  if (type == TensorType::kInt64) {
    int64_t v;
    std::memcpy(&v, data + i * 8, 8);
    return v;
  }
  if (type == TensorType::kInt16) {
    int16_t v;
    std::memcpy(&v, data + i * 2, 2);
    return v;
  }
  int32_t v;
  std::memcpy(&v, data + i * 4, 4);
  return v;
}

// A shape computed in 64 bits as a tensor shape; false when a dimension exceeds int32.
inline bool ToShape(const std::vector<int64_t>& dims, std::vector<int32_t>* shape) {
  shape->clear();
  for (int64_t d : dims) {
    if (d < 0 || d > std::numeric_limits<int32_t>::max()) return false;
    shape->push_back(static_cast<int32_t>(d));
  }
  return true;
}

}  // namespace index_ops
}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_KERNELS_INDEX_H_
