// GATHER_ND and SCATTER_ND (tf.gather_nd, tf.scatter_nd; tf.tensor_scatter_nd_update converts
// to SCATTER_ND arithmetic), as LiteRT's reference kernels (lite/kernels/gather_nd.cc,
// scatter_nd.cc, reference_ops GatherNd / ScatterNd).
//
// GATHER_ND: indices [I..., nd] pick nd-dimensional positions of params; the output
// [I..., params.shape[nd:]] holds the slice of params at each. Params of any type ember holds
// (byte moves; quantized ones keep their quantization), indices int16, int32 or int64. As
// LiteRT, Invoke first refuses any negative index, then any coordinate at or past its
// dimension, and params with no elements (unless the indices have none either): errors naming
// the operator and the index, never a read outside params.
//
// SCATTER_ND: a zeroed output of the int32 shape input, to which each slice of updates is added
// at the position its indices give, in the order of the indices: duplicates are summed (floats
// in that order, integers wrapping; bool ORed), as LiteRT's WrappingAdd. Updates float32, int32,
// int64, int8, uint8 or bool (int8 adds raw values and zero-fills with 0, whatever the zero
// point, as LiteRT); indices and shape int32, which is all LiteRT's kernel takes. The shape may
// be computed at run time (the output's shape is static: a different one fails Invoke). An
// index out of range fails Invoke (the output is then partly written, as in LiteRT).
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_index.h"

namespace ember {
namespace lite {
namespace {

constexpr size_t kMaxRank = 8;

// Strides (in elements) of the first `nd` dimensions of `shape`.
void Strides(const std::vector<int32_t>& shape, size_t nd, int64_t* strides) {
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (d < nd) strides[d] = s;
    s *= shape[d];
  }
}

std::string IndexString(const NodeState& node, size_t input, int64_t slice, size_t nd) {
  const TensorDef& t = *node.t.in[input];
  std::string s = "[";
  for (size_t j = 0; j < nd; ++j) {
    s += (j ? "," : "") + std::to_string(index_ops::IndexAt(t.type, node.t.in_data[input],
                                                            static_cast<size_t>(slice) * nd + j));
  }
  return s + "]";
}

Status OutOfRange(const NodeState& node, size_t input, int64_t slice, size_t nd, size_t dim,
                  const std::vector<int32_t>& shape, const char* what) {
  return errors::InvalidArgument(node.what + ": index " + IndexString(node, input, slice, nd) +
                                 " (entry " + std::to_string(slice) + " of '" +
                                 node.t.in[input]->name + "') is out of range for dimension " +
                                 std::to_string(dim) + " of " + what + " shape " +
                                 ShapeString(shape));
}

// ---- GATHER_ND ----

Status EvalGatherNd(NodeState* node) {
  const TensorDef& params = *node->t.in[0];
  const TensorDef& indices = *node->t.in[1];
  const uint8_t* idx = node->t.in_data[1];
  const size_t nd = static_cast<size_t>(indices.shape.back());
  for (size_t i = 0; i < indices.num_elements; ++i) {
    if (index_ops::IndexAt(indices.type, idx, i) < 0) {
      return errors::InvalidArgument(node->what + ": indices '" + indices.name + "' hold " +
                                     std::to_string(index_ops::IndexAt(indices.type, idx, i)) +
                                     " (element " + std::to_string(i) +
                                     "); indices must not be negative");
    }
  }
  if (params.num_elements == 0 && indices.num_elements != 0) {
    return errors::InvalidArgument(node->what + ": params '" + params.name +
                                   "' are empty but the indices are not");
  }
  const int64_t slices = node->outer;
  if (slices == 0) return Status::OK();
  const size_t elem = TensorTypeSize(params.type);
  const size_t slice_bytes = static_cast<size_t>(node->inner) * elem;
  int64_t strides[kMaxRank] = {};
  Strides(params.shape, nd, strides);
  const uint8_t* src = node->t.in_data[0];
  uint8_t* out = node->t.out_data[0];
  for (int64_t s = 0; s < slices; ++s) {
    int64_t from = 0;
    for (size_t j = 0; j < nd; ++j) {
      const int64_t c = index_ops::IndexAt(indices.type, idx, static_cast<size_t>(s) * nd + j);
      if (c >= params.shape[j]) return OutOfRange(*node, 1, s, nd, j, params.shape, "params");
      from += c * strides[j];
    }
    std::memcpy(out + static_cast<size_t>(s) * slice_bytes, src + static_cast<size_t>(from) * elem,
                slice_bytes);
  }
  return Status::OK();
}

// ---- SCATTER_ND ----

template <typename T>
T AddWrapping(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    using P = std::common_type_t<U, unsigned int>;
    return static_cast<T>(
        static_cast<U>(static_cast<P>(static_cast<U>(a)) + static_cast<P>(static_cast<U>(b))));
  } else {
    return a + b;
  }
}

// The run-time shape input against the output's static shape.
Status CheckScatterShape(const NodeState& node) {
  const std::vector<int32_t>& out = node.t.out[0]->shape;
  const int32_t* shape = node.t.In<int32_t>(2);
  for (size_t i = 0; i < out.size(); ++i) {
    if (shape[i] != out[i]) {
      std::string got = "[";
      for (size_t j = 0; j < out.size(); ++j) got += (j ? "," : "") + std::to_string(shape[j]);
      return errors::InvalidArgument(node.what + ": shape '" + node.t.in[2]->name + "' is " + got +
                                     "] at run time but the output's is " + ShapeString(out) +
                                     " (ember lite needs static output shapes)");
    }
  }
  return Status::OK();
}

template <typename T>
Status ScatterSlices(NodeState* node) {
  const std::vector<int32_t>& shape = node->t.out[0]->shape;
  const size_t nd = static_cast<size_t>(node->t.in[0]->shape.back());
  const int32_t* idx = node->t.In<int32_t>(0);
  const T* updates = node->t.In<T>(1);
  T* out = node->t.Out<T>(0);
  const int64_t slices = node->outer, slice = node->inner;
  int64_t strides[kMaxRank] = {};
  Strides(shape, nd, strides);
  std::memset(static_cast<void*>(out), 0, node->t.out[0]->num_elements * sizeof(T));
  for (int64_t s = 0; s < slices; ++s) {
    int64_t to = 0;
    for (size_t j = 0; j < nd; ++j) {
      const int32_t c = idx[static_cast<size_t>(s) * nd + j];
      if (c < 0 || c >= shape[j]) return OutOfRange(*node, 0, s, nd, j, shape, "the output");
      to += static_cast<int64_t>(c) * strides[j];
    }
    T* dst = out + to;
    const T* src = updates + s * slice;
    for (int64_t j = 0; j < slice; ++j) dst[j] = AddWrapping<T>(dst[j], src[j]);
  }
  return Status::OK();
}

Status EvalScatterNd(NodeState* node) {
  if (node->t.in[2]->data == nullptr) EMBER_RETURN_IF_ERROR(CheckScatterShape(*node));
  switch (node->t.in[1]->type) {
    case TensorType::kFloat32:
      return ScatterSlices<float>(node);
    case TensorType::kInt32:
      return ScatterSlices<int32_t>(node);
    case TensorType::kInt64:
      return ScatterSlices<int64_t>(node);
    case TensorType::kInt8:
      return ScatterSlices<int8_t>(node);
    case TensorType::kUInt8:
      return ScatterSlices<uint8_t>(node);
    default:
      return ScatterSlices<bool>(node);
  }
}

}  // namespace

Status PrepareGatherNd(NodeState* node) {
  EMBER_RETURN_IF_ERROR(index_ops::CheckArity(*node, 2, 1, "params, indices"));
  const TensorDef& params = *node->t.in[0];
  const TensorDef& indices = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  if (TensorTypeSize(params.type) == 0) {
    return index_ops::UnsupportedType(*node, params, "params", "types of a fixed size are");
  }
  EMBER_RETURN_IF_ERROR(index_ops::SameTypeAndQuant(*node, params, "params", out, "output"));
  if (indices.type != TensorType::kInt32 && indices.type != TensorType::kInt64 &&
      indices.type != TensorType::kInt16) {
    return index_ops::UnsupportedType(*node, indices, "indices", "INT16, INT32 and INT64 are");
  }
  if (params.shape.empty() || indices.shape.empty()) {
    return errors::InvalidArgument(node->what + ": params '" + params.name + "' " +
                                   ShapeString(params.shape) + " and indices '" + indices.name +
                                   "' " + ShapeString(indices.shape) + " must both have rank >= 1");
  }
  const int32_t nd = indices.shape.back();
  if (nd < 0 || static_cast<size_t>(nd) > params.shape.size()) {
    return errors::InvalidArgument(node->what + ": the last dimension of indices '" + indices.name +
                                   "' is " + std::to_string(nd) + "; it must lie in 0.." +
                                   std::to_string(params.shape.size()) + " (the rank of params '" +
                                   params.name + "')");
  }
  std::vector<int32_t> expected(indices.shape.begin(), indices.shape.end() - 1);
  int64_t slices = 1, slice = 1;
  for (int32_t d : expected) slices *= d;
  for (size_t d = static_cast<size_t>(nd); d < params.shape.size(); ++d) {
    expected.push_back(params.shape[d]);
    slice *= params.shape[d];
  }
  if (expected.size() > kMaxRank) {
    return errors::Unimplemented(node->what + ": output rank " + std::to_string(expected.size()) +
                                 " exceeds 8");
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, expected, "output"));
  node->outer = slices;
  node->inner = slice;
  node->eval = EvalGatherNd;
  return Status::OK();
}

Status PrepareScatterNd(NodeState* node) {
  EMBER_RETURN_IF_ERROR(index_ops::CheckArity(*node, 3, 1, "indices, updates, shape"));
  const TensorDef& indices = *node->t.in[0];
  const TensorDef& updates = *node->t.in[1];
  const TensorDef& shape = *node->t.in[2];
  const TensorDef& out = *node->t.out[0];
  switch (updates.type) {
    case TensorType::kFloat32:
    case TensorType::kInt32:
    case TensorType::kInt64:
    case TensorType::kInt8:
    case TensorType::kUInt8:
    case TensorType::kBool:
      break;
    default:
      return index_ops::UnsupportedType(*node, updates, "updates",
                                        "FLOAT32, INT32, INT64, INT8, UINT8 and BOOL are");
  }
  EMBER_RETURN_IF_ERROR(index_ops::SameTypeAndQuant(*node, updates, "updates", out, "output"));
  if (indices.type != TensorType::kInt32) {
    return index_ops::UnsupportedType(*node, indices, "indices", "INT32 is, as in LiteRT");
  }
  if (shape.type != TensorType::kInt32) {
    return index_ops::UnsupportedType(*node, shape, "shape", "INT32 is, as in LiteRT");
  }
  if (indices.shape.empty() || updates.shape.empty() || shape.shape.size() != 1) {
    return errors::InvalidArgument(
        node->what + ": indices '" + indices.name + "' " + ShapeString(indices.shape) +
        " and updates '" + updates.name + "' " + ShapeString(updates.shape) +
        " need rank >= 1 and shape '" + shape.name + "' " + ShapeString(shape.shape) + " rank 1");
  }
  const size_t rank = shape.num_elements;
  if (rank > kMaxRank) {
    return errors::Unimplemented(node->what + ": shape '" + shape.name + "' has " +
                                 std::to_string(rank) + " dimensions; at most 8 are supported");
  }
  std::vector<int32_t> target = out.shape;
  if (shape.data != nullptr) {
    target.assign(reinterpret_cast<const int32_t*>(shape.data),
                  reinterpret_cast<const int32_t*>(shape.data) + rank);
    for (int32_t d : target) {
      if (d < 0) {
        return errors::InvalidArgument(node->what + ": shape '" + shape.name + "' holds " +
                                       std::to_string(d) + "; dimensions must not be negative");
      }
    }
  } else if (out.shape.size() != rank) {
    return errors::InvalidArgument(node->what + ": output '" + out.name + "' has rank " +
                                   std::to_string(out.shape.size()) + " but shape '" + shape.name +
                                   "' holds " + std::to_string(rank) + " dimensions");
  }
  // LiteRT's CheckShapes: indices [O..., nd] and updates [O..., target[nd:]...].
  const size_t outer_dims = indices.shape.size() - 1;
  const int32_t nd = indices.shape.back();
  bool ok = nd >= 0 && static_cast<size_t>(nd) <= rank && updates.shape.size() >= outer_dims &&
            updates.shape.size() - outer_dims == rank - static_cast<size_t>(nd);
  for (size_t i = 0; ok && i < outer_dims; ++i) ok = indices.shape[i] == updates.shape[i];
  for (size_t i = 0; ok && i + outer_dims < updates.shape.size(); ++i) {
    ok = updates.shape[outer_dims + i] == target[static_cast<size_t>(nd) + i];
  }
  if (!ok) {
    return errors::InvalidArgument(node->what + ": indices '" + indices.name + "' " +
                                   ShapeString(indices.shape) + ", updates '" + updates.name +
                                   "' " + ShapeString(updates.shape) + " and shape " +
                                   ShapeString(target) + " do not agree (updates must be " +
                                   "indices.shape[:-1] + shape[indices.shape[-1]:])");
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, target, "output"));
  int64_t slices = 1, slice = 1;
  for (size_t i = 0; i < outer_dims; ++i) slices *= indices.shape[i];
  for (size_t i = outer_dims; i < updates.shape.size(); ++i) slice *= updates.shape[i];
  node->outer = slices;
  node->inner = slice;
  node->eval = EvalScatterNd;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
