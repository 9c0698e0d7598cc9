// ARG_MAX and ARG_MIN (tf.argmax / tf.argmin, classification heads), as LiteRT's reference
// kernel: float32, int8, uint8 and int32 input (quantized values compare as their codes, which
// order as the real values do), an int32 or int64 output as the output_type option says, and a
// constant axis (int32 or int64, one element, negative counts from the end). Each output is the
// index of the first extreme value along the axis: a later value replaces it only when strictly
// greater (smaller), so ties give the lowest index, and NaN never replaces an earlier value.
#include <cstdint>
#include <string>

#include "lite/kernels.h"
#include "lite/kernels_misc.h"

namespace ember {
namespace lite {
namespace {

template <typename T, typename Index, bool kMax>
void ArgRows(const NodeState& node) {
  const T* x = node.t.In<T>(0);
  Index* y = node.t.Out<Index>(0);
  const int64_t len = node.depth, inner = node.inner;
  for (int64_t o = 0; o < node.outer; ++o) {
    const T* base = x + o * len * inner;
    for (int64_t i = 0; i < inner; ++i) {
      T best = base[i];
      int64_t at = 0;
      for (int64_t j = 1; j < len; ++j) {
        const T v = base[j * inner + i];
        if (kMax ? v > best : v < best) {
          best = v;
          at = j;
        }
      }
      y[o * inner + i] = static_cast<Index>(at);
    }
  }
}

template <typename T, bool kMax>
Status EvalArg(NodeState* node) {
  if (node->t.out[0]->type == TensorType::kInt32) {
    ArgRows<T, int32_t, kMax>(*node);
  } else {
    ArgRows<T, int64_t, kMax>(*node);
  }
  return Status::OK();
}

template <bool kMax>
Status (*EvalFor(TensorType t))(NodeState*) {
  switch (t) {
    case TensorType::kFloat32:
      return EvalArg<float, kMax>;
    case TensorType::kInt8:
      return EvalArg<int8_t, kMax>;
    case TensorType::kUInt8:
      return EvalArg<uint8_t, kMax>;
    default:
      return EvalArg<int32_t, kMax>;
  }
}

}  // namespace

Status PrepareArgMinMax(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& axis = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  if (in.type != TensorType::kFloat32 && in.type != TensorType::kInt8 &&
      in.type != TensorType::kUInt8 && in.type != TensorType::kInt32) {
    return errors::Unimplemented(node->what + ": input '" + in.name + "' is " +
                                 TensorTypeName(in.type) +
                                 "; FLOAT32, INT8, UINT8 and INT32 are supported");
  }
  const int8_t want = node->op->options.arg_output_type;
  if (want != static_cast<int8_t>(TensorType::kInt32) &&
      want != static_cast<int8_t>(TensorType::kInt64)) {
    return errors::InvalidArgument(node->what + ": output_type " +
                                   TensorTypeName(static_cast<TensorType>(want)) +
                                   " is not an index type (INT32 or INT64)");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, static_cast<TensorType>(want), "output"));
  if (axis.type != TensorType::kInt32 && axis.type != TensorType::kInt64) {
    return errors::InvalidArgument(node->what + ": axis '" + axis.name + "' is " +
                                   TensorTypeName(axis.type) + ", expected INT32 or INT64");
  }
  if (axis.num_elements != 1) {
    return errors::InvalidArgument(node->what + ": axis '" + axis.name + "' must hold one value, " +
                                   "it has shape " + ShapeString(axis.shape));
  }
  if (axis.data == nullptr) {
    return errors::Unimplemented(node->what + ": axis '" + axis.name +
                                 "' is computed at run time; ember lite needs a constant axis");
  }
  const int64_t rank = static_cast<int64_t>(in.shape.size());
  const int64_t a = axis.type == TensorType::kInt32 ? *reinterpret_cast<const int32_t*>(axis.data)
                                                    : *reinterpret_cast<const int64_t*>(axis.data);
  if (rank == 0 || a < -rank || a >= rank) {
    return errors::InvalidArgument(node->what + ": axis " + std::to_string(a) +
                                   " is out of range for the rank-" + std::to_string(rank) +
                                   " input '" + in.name + "'");
  }
  const size_t ax = static_cast<size_t>(a < 0 ? a + rank : a);
  if (in.shape[ax] == 0) {
    return errors::InvalidArgument(node->what + ": input '" + in.name + "' " +
                                   ShapeString(in.shape) + " is empty along axis " +
                                   std::to_string(ax));
  }
  std::vector<int32_t> expect;
  node->outer = node->inner = 1;
  for (size_t d = 0; d < in.shape.size(); ++d) {
    if (d == ax) continue;
    expect.push_back(in.shape[d]);
    (d < ax ? node->outer : node->inner) *= in.shape[d];
  }
  node->depth = in.shape[ax];
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, expect, "output"));
  node->eval =
      node->op->op == BuiltinOp::kArgMax ? EvalFor<true>(in.type) : EvalFor<false>(in.type);
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
