// FLOOR_DIV and FLOOR_MOD (tf.math.floordiv / floormod, Python's // and %), broadcasting, as
// LiteRT's reference kernels (lite/kernels/floor_div.cc, floor_mod.cc and
// internal/reference/floor_div.h, floor_mod.h):
//
//   FLOOR_DIV: floor(double(a) / double(b)), converted to the element type: float32, int32.
//   FLOOR_MOD: r = fmod(a, b) in float (a % b for integers), plus b when r is not 0 and its
//              sign differs from b's, so the result takes the divisor's sign: float32, int32,
//              int64.
//
// A divisor of zero anywhere in the second input fails Invoke with an error, as in LiteRT: every
// FLOOR_DIV type (0.0 and -0.0 included), FLOOR_MOD's integers only (float FLOOR_MOD by zero
// gives NaN). Where LiteRT's C++ is undefined, ember gives the x86 result without the undefined
// operation: int32 FLOOR_DIV of INT32_MIN by -1 is INT32_MIN (the conversion of 2^31), integer
// FLOOR_MOD by -1 is 0. int8/int16 versions (FLOOR_DIV 3, FLOOR_MOD 2) are refused at load; the
// int8 and int16 types at Prepare.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_index.h"
#include "lite/kernels_misc.h"

namespace ember {
namespace lite {
namespace {

constexpr size_t kMaxRank = 8;

template <typename T>
T FloorDiv(T a, T b) {
  const double q = std::floor(static_cast<double>(a) / static_cast<double>(b));
  if constexpr (std::is_same_v<T, int32_t>) {
    // Only INT32_MIN / -1 leaves int32's range: x86's conversion gives INT32_MIN.
    if (!(q >= -2147483648.0 && q < 2147483648.0)) return INT32_MIN;
    return static_cast<int32_t>(q);
  } else {
    return static_cast<T>(q);
  }
}

template <typename T>
T FloorMod(T a, T b) {
  T r;
  if constexpr (std::is_integral_v<T>) {
    if (b == -1) return 0;  // a % -1 is 0; INT_MIN % -1 would trap
    r = static_cast<T>(a % b);
  } else {
    r = std::fmod(a, b);
  }
  return (r != 0) && ((b < 0) != (r < 0)) ? static_cast<T>(r + b) : r;
}

// Visits every output element with its two input offsets; the shapes (extended to the output's
// rank) are the node's in_shape6, in2_shape6 and out_shape6.
template <typename T, T (*Fn)(T, T)>
void Apply(const NodeState& node) {
  const T* a = node.t.In<T>(0);
  const T* b = node.t.In<T>(1);
  T* y = node.t.Out<T>(0);
  const int64_t total = static_cast<int64_t>(node.t.out[0]->num_elements);
  if (node.t.in[0]->shape == node.t.in[1]->shape) {
    for (int64_t i = 0; i < total; ++i) y[i] = Fn(a[i], b[i]);
    return;
  }
  const std::vector<int32_t>& out = node.out_shape6;
  const size_t rank = out.size();
  int64_t sa[kMaxRank] = {}, sb[kMaxRank] = {};
  int64_t ka = 1, kb = 1;
  for (size_t d = rank; d-- > 0;) {
    sa[d] = node.in_shape6[d] == 1 ? 0 : ka;
    sb[d] = node.in2_shape6[d] == 1 ? 0 : kb;
    ka *= node.in_shape6[d];
    kb *= node.in2_shape6[d];
  }
  int32_t idx[kMaxRank] = {};
  int64_t oa = 0, ob = 0;
  for (int64_t i = 0; i < total; ++i) {
    y[i] = Fn(a[oa], b[ob]);
    for (size_t d = rank; d-- > 0;) {
      oa += sa[d];
      ob += sb[d];
      if (++idx[d] < out[d]) break;
      oa -= sa[d] * out[d];
      ob -= sb[d] * out[d];
      idx[d] = 0;
    }
  }
}

template <typename T>
bool HasZero(const NodeState& node) {
  const T* b = node.t.In<T>(1);
  for (size_t i = 0; i < node.t.in[1]->num_elements; ++i) {
    if (b[i] == 0) return true;
  }
  return false;
}

Status DivisionByZero(const NodeState& node) {
  return errors::InvalidArgument(node.what + ": division by zero (a zero in divisor '" +
                                 node.t.in[1]->name + "')");
}

Status EvalFloorDiv(NodeState* node) {
  if (node->t.in[0]->type == TensorType::kFloat32) {
    if (HasZero<float>(*node)) return DivisionByZero(*node);
    Apply<float, FloorDiv<float>>(*node);
  } else {
    if (HasZero<int32_t>(*node)) return DivisionByZero(*node);
    Apply<int32_t, FloorDiv<int32_t>>(*node);
  }
  return Status::OK();
}

Status EvalFloorMod(NodeState* node) {
  switch (node->t.in[0]->type) {
    case TensorType::kFloat32:
      Apply<float, FloorMod<float>>(*node);
      break;
    case TensorType::kInt32:
      if (HasZero<int32_t>(*node)) return DivisionByZero(*node);
      Apply<int32_t, FloorMod<int32_t>>(*node);
      break;
    default:
      if (HasZero<int64_t>(*node)) return DivisionByZero(*node);
      Apply<int64_t, FloorMod<int64_t>>(*node);
      break;
  }
  return Status::OK();
}

std::vector<int32_t> Extend(const std::vector<int32_t>& shape, size_t rank) {
  std::vector<int32_t> out(rank - shape.size(), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

Status PrepareFloor(NodeState* node, bool div) {
  EMBER_RETURN_IF_ERROR(index_ops::CheckArity(*node, 2, 1, "x, y"));
  const TensorDef& a = *node->t.in[0];
  const TensorDef& b = *node->t.in[1];
  const TensorDef& out = *node->t.out[0];
  const bool ok = a.type == TensorType::kFloat32 || a.type == TensorType::kInt32 ||
                  (!div && a.type == TensorType::kInt64);
  if (!ok) {
    return index_ops::UnsupportedType(
        *node, a, "input",
        div ? "FLOAT32 and INT32 are, as LiteRT" : "FLOAT32, INT32 and INT64 are");
  }
  if (!a.quant.empty() || !b.quant.empty() || !out.quant.empty()) {
    return errors::Unimplemented(node->what + ": quantized tensors are not supported");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, b, a.type, "input 1"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, out, a.type, "output"));
  std::vector<int32_t> shape;
  if (!misc::BroadcastShape(a.shape, b.shape, &shape)) {
    return errors::InvalidArgument(node->what + ": inputs '" + a.name + "' " +
                                   ShapeString(a.shape) + " and '" + b.name + "' " +
                                   ShapeString(b.shape) + " do not broadcast");
  }
  if (shape.size() > kMaxRank) {
    return errors::Unimplemented(node->what + ": rank " + std::to_string(shape.size()) +
                                 " exceeds 8");
  }
  EMBER_RETURN_IF_ERROR(CheckShape(*node, out, shape, "output"));
  node->in_shape6 = Extend(a.shape, shape.size());
  node->in2_shape6 = Extend(b.shape, shape.size());
  node->out_shape6 = shape;
  node->eval = div ? EvalFloorDiv : EvalFloorMod;
  return Status::OK();
}

}  // namespace

Status PrepareFloorDiv(NodeState* node) { return PrepareFloor(node, true); }

Status PrepareFloorMod(NodeState* node) { return PrepareFloor(node, false); }

}  // namespace lite
}  // namespace ember
