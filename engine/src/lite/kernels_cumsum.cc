// CUMSUM (tf.math.cumsum; keras-hub's Falcon builds its ALiBi positions with it), as LiteRT's
// kernel: float32, int32 and int64, a scalar int32 axis (negative counts from the end),
// exclusive (each output leaves out its own input) and reverse (sums run from the end).
// Sums are taken in order along the axis, as the reference does, so float results match it
// exactly; integer sums wrap.
#include <cstdint>
#include <string>
#include <type_traits>

#include "lite/kernels.h"
#include "lite/kernels_misc.h"

namespace ember {
namespace lite {
namespace {

// The axis input normalised into [0, rank), or an error naming the operator.
Status CumsumAxis(const NodeState& node, int32_t* axis) {
  const int32_t rank = static_cast<int32_t>(node.t.in[0]->shape.size());
  const int32_t a = *node.t.In<int32_t>(1);
  if (a < -rank || a >= rank) {
    return errors::InvalidArgument(node.what + ": axis " + std::to_string(a) +
                                   " is out of range for a rank-" + std::to_string(rank) +
                                   " input");
  }
  *axis = a < 0 ? a + rank : a;
  return Status::OK();
}

// The type sums are taken in: unsigned for integers (so that they wrap, as two's complement),
// the element type for floats.
template <typename T, bool = std::is_integral_v<T>>
struct SumType {
  using type = T;
};
template <typename T>
struct SumType<T, true> {
  using type = std::make_unsigned_t<T>;
};

template <typename T>
void CumsumRows(const NodeState& node, int32_t axis) {
  const std::vector<int32_t>& shape = node.t.in[0]->shape;
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t len = shape[static_cast<size_t>(axis)];
  const bool exclusive = node.op->options.exclusive, reverse = node.op->options.reverse;
  using Acc = typename SumType<T>::type;
  const T* x = node.t.In<T>(0);
  T* y = node.t.Out<T>(0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      Acc sum = 0;
      for (int64_t k = 0; k < len; ++k) {
        const int64_t j = reverse ? len - 1 - k : k;
        const int64_t at = (o * len + j) * inner + i;
        if (exclusive) {
          y[at] = static_cast<T>(sum);
          sum = static_cast<Acc>(sum + static_cast<Acc>(x[at]));
        } else {
          sum = static_cast<Acc>(sum + static_cast<Acc>(x[at]));
          y[at] = static_cast<T>(sum);
        }
      }
    }
  }
}

Status EvalCumsum(NodeState* node) {
  int32_t axis = 0;
  EMBER_RETURN_IF_ERROR(CumsumAxis(*node, &axis));
  switch (node->t.in[0]->type) {
    case TensorType::kFloat32:
      CumsumRows<float>(*node, axis);
      break;
    case TensorType::kInt32:
      CumsumRows<int32_t>(*node, axis);
      break;
    default:
      CumsumRows<int64_t>(*node, axis);
      break;
  }
  return Status::OK();
}

}  // namespace

Status PrepareCumsum(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& axis = *node->t.in[1];
  if (in.type != TensorType::kFloat32 && in.type != TensorType::kInt32 &&
      in.type != TensorType::kInt64) {
    return misc::Unsupported(*node, in.type);
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, *node->t.out[0], in.type, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], in.shape, "output"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, axis, TensorType::kInt32, "axis"));
  if (axis.num_elements != 1 || in.shape.empty()) {
    return errors::InvalidArgument(node->what + ": axis '" + axis.name +
                                   "' must be one int32 and the input must have rank >= 1");
  }
  if (axis.data != nullptr) {
    int32_t a = 0;
    EMBER_RETURN_IF_ERROR(CumsumAxis(*node, &a));
  }
  node->eval = EvalCumsum;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
