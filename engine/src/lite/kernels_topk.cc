// TOPK_V2 (tf.math.top_k; tf.sort and tf.argsort with DESCENDING convert to it): the k largest
// values of each row along the last axis, sorted in descending order, and their int32 indices.
// As LiteRT's kernel (lite/kernels/topk_v2.cc), which its reference resolver also runs: a
// min-heap of k + 1 indices per row, filled in index order, then sorted; an index a comes
// before b when x[b] < x[a], or when neither is less and a < b, so equal values keep their
// order. The same heap steps run here on the same comparator, so every row (NaN included, with
// the same standard library algorithms) gives LiteRT's result. The heap lives in the node's
// scratch, sized at Prepare: Invoke allocates nothing.
//
// float32, int32, int64, int8 and uint8 (quantized values keep the input's quantization); k an
// int32 scalar, constant (checked against the row length and the outputs' shape at Prepare) or
// computed at run time: the outputs' shape is static, so a run-time k that differs from their
// last dimension fails Invoke.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_index.h"

namespace ember {
namespace lite {
namespace {

// The node's geometry: outer = rows, inner = row length, depth = k (the outputs' last
// dimension); scratch32 holds k + 1 indices.

template <typename T>
void TopKRows(NodeState* node) {
  const int64_t rows = node->outer, len = node->inner;
  const int32_t k = static_cast<int32_t>(node->depth);
  const T* x = node->t.In<T>(0);
  T* values = node->t.Out<T>(0);
  int32_t* indices = node->t.Out<int32_t>(1);
  int32_t* heap = node->scratch32.data();
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * len;
    // true when index a ranks before index b: a larger value, or the same and a lower index.
    auto before = [row](int32_t a, int32_t b) {
      if (row[b] < row[a]) return true;
      if (row[b] > row[a]) return false;
      return a < b;
    };
    int32_t size = 0;
    for (int32_t c = 0; c < static_cast<int32_t>(len); ++c) {
      if (size <= k) {
        heap[size++] = c;
        if (size == k + 1) {
          std::make_heap(heap, heap + size, before);
          std::pop_heap(heap, heap + size, before);
        }
      } else if (before(c, heap[0])) {
        heap[size - 1] = c;
        std::pop_heap(heap, heap + size, before);
      }
    }
    if (size <= k) {
      std::sort(heap, heap + size, before);
    } else {
      std::sort_heap(heap, heap + size - 1, before);
      size = k;
    }
    for (int32_t i = 0; i < size; ++i) {
      indices[r * k + i] = heap[i];
      values[r * k + i] = row[heap[i]];
    }
  }
}

Status EvalTopK(NodeState* node) {
  const int32_t k = *node->t.In<int32_t>(1);
  if (k != node->depth) {
    return errors::InvalidArgument(node->what + ": k is " + std::to_string(k) + " at run time " +
                                   "but the outputs' last dimension is " +
                                   std::to_string(node->depth) +
                                   " (ember lite needs static output shapes)");
  }
  switch (node->t.in[0]->type) {
    case TensorType::kFloat32:
      TopKRows<float>(node);
      break;
    case TensorType::kInt32:
      TopKRows<int32_t>(node);
      break;
    case TensorType::kInt64:
      TopKRows<int64_t>(node);
      break;
    case TensorType::kInt8:
      TopKRows<int8_t>(node);
      break;
    default:
      TopKRows<uint8_t>(node);
      break;
  }
  return Status::OK();
}

}  // namespace

Status PrepareTopK(NodeState* node) {
  EMBER_RETURN_IF_ERROR(index_ops::CheckArity(*node, 2, 2, "input, k"));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& k_t = *node->t.in[1];
  const TensorDef& values = *node->t.out[0];
  const TensorDef& indices = *node->t.out[1];
  switch (in.type) {
    case TensorType::kFloat32:
    case TensorType::kInt32:
    case TensorType::kInt64:
    case TensorType::kInt8:
    case TensorType::kUInt8:
      break;
    default:
      return index_ops::UnsupportedType(*node, in, "input",
                                        "FLOAT32, INT32, INT64, INT8 and UINT8 are");
  }
  EMBER_RETURN_IF_ERROR(index_ops::SameTypeAndQuant(*node, in, "input", values, "values output"));
  if (indices.type != TensorType::kInt32) {
    return index_ops::UnsupportedType(*node, indices, "indices output", "INT32 is");
  }
  if (k_t.type != TensorType::kInt32) {
    return index_ops::UnsupportedType(*node, k_t, "k", "INT32 is");
  }
  if (k_t.num_elements != 1) {
    return errors::InvalidArgument(node->what + ": k '" + k_t.name + "' has shape " +
                                   ShapeString(k_t.shape) + "; it must hold one value");
  }
  if (in.shape.empty()) {
    return errors::InvalidArgument(node->what + ": input '" + in.name +
                                   "' is a scalar; TOPK_V2 needs rank >= 1");
  }
  const int32_t len = in.shape.back();
  // The outputs' shape: the input's with k as its last dimension (k from the model when
  // constant, else from the output).
  std::vector<int32_t> expected = in.shape;
  int32_t k = values.shape.empty() ? -1 : values.shape.back();
  if (k_t.data != nullptr) {
    k = *reinterpret_cast<const int32_t*>(k_t.data);
    if (k < 0 || k > len) {
      return errors::InvalidArgument(node->what + ": k is " + std::to_string(k) +
                                     "; it must lie in 0.." + std::to_string(len) +
                                     " (the last dimension of '" + in.name + "')");
    }
  } else if (k < 0 || k > len) {
    return errors::InvalidArgument(node->what + ": values output '" + values.name + "' has shape " +
                                   ShapeString(values.shape) + ", which no k in 0.." +
                                   std::to_string(len) + " gives");
  }
  expected.back() = k;
  EMBER_RETURN_IF_ERROR(CheckShape(*node, values, expected, "values output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, indices, expected, "indices output"));
  node->inner = len;
  node->outer = 1;
  for (size_t d = 0; d + 1 < in.shape.size(); ++d) node->outer *= in.shape[d];
  node->depth = k;
  node->scratch32.assign(static_cast<size_t>(k) + 1, 0);
  node->eval = EvalTopK;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
