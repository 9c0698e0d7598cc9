// Helpers shared by the index and layout kernels: DEPTH_TO_SPACE / SPACE_TO_DEPTH
// (kernels_depth_space.cc), TOPK_V2 (kernels_topk.cc), BROADCAST_TO and ONE_HOT
// (kernels_broadcast_to.cc, kernels_one_hot.cc), FLOOR_DIV / FLOOR_MOD (kernels_floor.cc),
// GATHER_ND / SCATTER_ND (kernels_gather_scatter_nd.cc), FILL and PAD (kernels_fill.cc,
// kernels_misc_shape.cc), SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND (kernels_space_batch.cc) and the
// shape computations evaluated before the first Invoke (shape_refine.cc).
#ifndef EMBER_SRC_LITE_KERNELS_INDEX_H_
#define EMBER_SRC_LITE_KERNELS_INDEX_H_

#include <algorithm>
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

// The first n elements of an INT16, INT32 or INT64 tensor, widened.
inline std::vector<int64_t> IndexValues(TensorType type, const uint8_t* data, size_t n) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = IndexAt(type, data, i);
  return v;
}

// A shape input read at run time (FILL's dims, BROADCAST_TO's shape: `data`, of the INT32/INT64
// tensor `shape`) must be the output's static shape; else an error naming both.
inline Status CheckRunTimeShape(const NodeState& node, const TensorDef& shape, const char* role,
                                const uint8_t* data) {
  const std::vector<int64_t> got = IndexValues(shape.type, data, shape.num_elements);
  const std::vector<int32_t>& out = node.t.out[0]->shape;
  if (std::equal(got.begin(), got.end(), out.begin(), out.end())) return Status::OK();
  std::string text = "[";
  for (size_t i = 0; i < got.size(); ++i) text += (i ? "," : "") + std::to_string(got[i]);
  return errors::InvalidArgument(node.what + ": " + role + " '" + shape.name + "' is " + text +
                                 "] but the output's shape is " + ShapeString(out) +
                                 " (ember lite needs static output shapes)");
}

// n elements of `elem` bytes each, every one the bytes at `value`, from `out` on: by the
// element's width (a memcpy call per element took 800 us on a 58x58x64 PAD).
template <typename T>
void FillAs(uint8_t* out, const uint8_t* value, size_t n) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  T* o = reinterpret_cast<T*>(out);
  std::fill(o, o + n, v);
}

inline void FillElements(uint8_t* out, const uint8_t* value, size_t elem, size_t n) {
  switch (elem) {
    case 1:
      std::memset(out, value[0], n);
      break;
    case 2:
      FillAs<uint16_t>(out, value, n);
      break;
    case 4:
      FillAs<uint32_t>(out, value, n);
      break;
    case 8:
      FillAs<uint64_t>(out, value, n);
      break;
    default:
      for (size_t i = 0; i < n; ++i) std::memcpy(out + i * elem, value, elem);
  }
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
