// REDUCE_PROD (tf.reduce_prod), float32 and int32, as LiteRT's reference ReduceGeneric: the
// output starts at 1 and the input is walked in row-major order, each element multiplied into its
// output, so every product is taken in the reference's order and float results match it.
// Constant axes (int32 or int64; negative count from the end, repeats allowed, none copies the
// input), keep_dims. int32 products wrap. int8 (version 2) is refused when the model loads.
#include <cstdint>
#include <string>

#include "lite/kernels.h"
#include "lite/kernels_misc.h"

namespace ember {
namespace lite {
namespace {

constexpr size_t kMaxRank = 8;

// node->in_shape6: the input shape; node->axes: the output stride of each input dimension (0 on
// reduced ones).
template <typename T, typename Mul>
Status EvalProd(NodeState* node) {
  const T* x = node->t.In<T>(0);
  T* y = node->t.Out<T>(0);
  const size_t n_out = node->t.out[0]->num_elements;
  for (size_t i = 0; i < n_out; ++i) y[i] = T(1);
  const size_t rank = node->in_shape6.size();
  const size_t n_in = node->t.in[0]->num_elements;
  if (n_in == 0) return Status::OK();
  if (rank == 0) {
    y[0] = x[0];
    return Status::OK();
  }
  const int32_t* shape = node->in_shape6.data();
  const int* stride = node->axes.data();
  const int32_t last = shape[rank - 1];
  const int64_t last_stride = stride[rank - 1];
  int32_t idx[kMaxRank] = {};
  int64_t base = 0;
  for (size_t i = 0; i < n_in; i += static_cast<size_t>(last)) {
    for (int32_t j = 0; j < last; ++j) {
      T& o = y[base + j * last_stride];
      o = static_cast<T>(static_cast<Mul>(o) * static_cast<Mul>(x[i + static_cast<size_t>(j)]));
    }
    for (size_t d = rank - 1; d-- > 0;) {
      base += stride[d];
      if (++idx[d] < shape[d]) break;
      base -= static_cast<int64_t>(stride[d]) * shape[d];
      idx[d] = 0;
    }
  }
  return Status::OK();
}

}  // namespace

Status PrepareReduceProd(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& axes = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  if (in.type != TensorType::kFloat32 && in.type != TensorType::kInt32) {
    return errors::Unimplemented(node->what + ": input '" + in.name + "' is " +
                                 TensorTypeName(in.type) + "; FLOAT32 and INT32 are supported");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, in.type, "output"));
  if (axes.type != TensorType::kInt32 && axes.type != TensorType::kInt64) {
    return errors::InvalidArgument(node->what + ": axes '" + axes.name + "' are " +
                                   TensorTypeName(axes.type) + ", expected INT32 or INT64");
  }
  if (axes.shape.size() > 1) {
    return errors::InvalidArgument(node->what + ": axes '" + axes.name + "' must be a scalar " +
                                   "or a list, got shape " + ShapeString(axes.shape));
  }
  if (axes.data == nullptr) {
    return errors::Unimplemented(node->what + ": axes '" + axes.name +
                                 "' are computed at run time; ember lite needs constant axes");
  }
  const size_t rank = in.shape.size();
  if (rank > kMaxRank) {
    return errors::Unimplemented(node->what + ": input '" + in.name + "' has rank " +
                                 std::to_string(rank) + "; ranks up to 8 are supported");
  }
  std::vector<char> reduced(rank, 0);
  for (size_t i = 0; i < axes.num_elements; ++i) {
    const int64_t a = axes.type == TensorType::kInt32
                          ? reinterpret_cast<const int32_t*>(axes.data)[i]
                          : reinterpret_cast<const int64_t*>(axes.data)[i];
    const int64_t r = static_cast<int64_t>(rank);
    if (a < -r || a >= r) {
      return errors::InvalidArgument(node->what + ": axis " + std::to_string(a) +
                                     " is out of range for the rank-" + std::to_string(rank) +
                                     " input '" + in.name + "'");
    }
    reduced[static_cast<size_t>(a < 0 ? a + r : a)] = 1;
  }
  std::vector<int32_t> expect;
  for (size_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      expect.push_back(in.shape[d]);
    } else if (node->op->options.keep_dims) {
      expect.push_back(1);
    }
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, expect, "output"));
  node->in_shape6 = in.shape;
  node->axes.assign(rank, 0);
  int stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d]) continue;
    node->axes[d] = stride;
    stride *= in.shape[d];
  }
  node->eval =
      in.type == TensorType::kFloat32 ? EvalProd<float, float> : EvalProd<int32_t, uint32_t>;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
