// Shape and reduction builtins of decoder models (Llama/Gemma-style), float/int/bool, as
// TFLite's reference kernels: SQUEEZE and EXPAND_DIMS (copies), SPLIT, SPLIT_V, UNPACK, PACK,
// TILE, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_ANY, REDUCE_ALL over constant or run-time axes; and
// PAD/PADV2 (float, int, and int8/uint8 padded with the output zero point or constant_values).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "lite/kernels.h"
#include "lite/kernels_index.h"
#include "lite/kernels_misc.h"

namespace ember {
namespace lite {
namespace {

bool ReadIndex(const NodeState& node, size_t i, std::vector<int64_t>* out) {
  const TensorDef* t = node.t.in[i];
  const uint8_t* p = node.t.in_data[i];
  if (t == nullptr || p == nullptr) return false;
  out->clear();
  for (size_t k = 0; k < t->num_elements; ++k) {
    if (t->type == TensorType::kInt32) {
      out->push_back(reinterpret_cast<const int32_t*>(p)[k]);
    } else if (t->type == TensorType::kInt64) {
      out->push_back(reinterpret_cast<const int64_t*>(p)[k]);
    } else {
      return false;
    }
  }
  return true;
}

Status SameType(const NodeState& node, const TensorDef& a, const TensorDef& b) {
  if (TensorTypeSize(a.type) == 0) return misc::Unsupported(node, a.type);
  if (a.quant.scale != b.quant.scale || a.quant.zero_point != b.quant.zero_point) {
    return errors::Unimplemented(node.what + ": requantizing copies are not supported");
  }
  return CheckType(node, b, a.type, "output");
}

Status EvalCopy(NodeState* node) {
  std::memcpy(node->t.out_data[0], node->t.in_data[0],
              node->t.out[0]->num_elements * TensorTypeSize(node->t.out[0]->type));
  return Status::OK();
}

// ---- SPLIT / SPLIT_V / UNPACK: each output is a slab along `axis` ----
Status SplitAxis(const NodeState& node, int64_t* axis) {
  const BuiltinOp op = node.op->op;
  const TensorDef& in = *node.t.in[op == BuiltinOp::kSplit ? 1 : 0];
  const int64_t rank = static_cast<int64_t>(in.shape.size());
  if (op == BuiltinOp::kUnpack) {
    *axis = node.op->options.axis;
  } else {
    std::vector<int64_t> a;
    if (!ReadIndex(node, op == BuiltinOp::kSplit ? 0 : 2, &a) || a.size() != 1) {
      return errors::InvalidArgument(node.what + ": axis must be a constant int scalar");
    }
    *axis = a[0];
  }
  if (*axis < 0) *axis += rank;
  if (*axis < 0 || *axis >= rank) return errors::InvalidArgument(node.what + ": axis out of range");
  return Status::OK();
}

Status EvalSplit(NodeState* node) {
  const BuiltinOp op = node->op->op;
  const size_t in_index = op == BuiltinOp::kSplit ? 1 : 0;
  const TensorDef& in = *node->t.in[in_index];
  int64_t axis = 0;
  EMBER_RETURN_IF_ERROR(SplitAxis(*node, &axis));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in.shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < in.shape.size(); ++d) inner *= in.shape[d];
  const int64_t len = in.shape[static_cast<size_t>(axis)];
  const size_t elem = TensorTypeSize(in.type);
  int64_t offset = 0;
  for (size_t o = 0; o < node->t.out.size(); ++o) {
    const int64_t part =
        op == BuiltinOp::kUnpack ? 1 : node->t.out[o]->shape[static_cast<size_t>(axis)];
    const size_t chunk = static_cast<size_t>(part * inner) * elem;
    for (int64_t r = 0; r < outer; ++r) {
      std::memcpy(
          node->t.out_data[o] + static_cast<size_t>(r) * chunk,
          node->t.in_data[in_index] + static_cast<size_t>((r * len + offset) * inner) * elem,
          chunk);
    }
    offset += part;
  }
  return Status::OK();
}

// ---- PACK ----
Status EvalPack(NodeState* node) {
  const TensorDef& first = *node->t.in[0];
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  const int64_t axis =
      node->op->options.axis < 0 ? node->op->options.axis + rank + 1 : node->op->options.axis;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first.shape[static_cast<size_t>(d)];
  const size_t chunk =
      outer == 0 ? 0 : first.num_elements / static_cast<size_t>(outer) * TensorTypeSize(first.type);
  uint8_t* dst = node->t.out_data[0];
  for (int64_t r = 0; r < outer; ++r) {
    for (size_t i = 0; i < node->t.in.size(); ++i) {
      std::memcpy(dst, node->t.in_data[i] + static_cast<size_t>(r) * chunk, chunk);
      dst += chunk;
    }
  }
  return Status::OK();
}

// ---- TILE ----
Status EvalTile(NodeState* node) {
  const TensorDef& in = *node->t.in[0];
  const std::vector<int32_t>& out = node->t.out[0]->shape;
  const size_t elem = TensorTypeSize(in.type);
  const size_t r = out.size();
  std::vector<int64_t> st(r, 1), idx(r, 0);
  for (size_t d = r; d-- > 1;) st[d - 1] = st[d] * in.shape[d];
  for (size_t i = 0; i < node->t.out[0]->num_elements; ++i) {
    int64_t s = 0;
    for (size_t d = 0; d < r; ++d) s += (idx[d] % in.shape[d]) * st[d];
    std::memcpy(node->t.out_data[0] + i * elem, node->t.in_data[0] + static_cast<size_t>(s) * elem,
                elem);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return Status::OK();
}

// ---- reductions ----
Status ReduceGeometry(const NodeState& node, std::vector<bool>* reduced,
                      std::vector<int32_t>* out) {
  const std::vector<int32_t>& in = node.t.in[0]->shape;
  std::vector<int64_t> axes;
  if (!ReadIndex(node, 1, &axes)) return errors::InvalidArgument(node.what + ": bad axes");
  const int64_t rank = static_cast<int64_t>(in.size());
  reduced->assign(in.size(), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) return errors::InvalidArgument(node.what + ": axis out of range");
    (*reduced)[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  out->clear();
  for (size_t d = 0; d < in.size(); ++d) {
    if (!(*reduced)[d]) out->push_back(in[d]);
    if ((*reduced)[d] && node.op->options.keep_dims) out->push_back(1);
  }
  return Status::OK();
}

// Calls visit(i, o) for every input element i in order, o the output element it reduces into.
template <typename Visit>
void ForEachReduced(const std::vector<int32_t>& in, const std::vector<bool>& reduced, size_t n,
                    Visit visit) {
  std::vector<int64_t> ost(in.size(), 0), idx(in.size(), 0);
  int64_t s = 1;
  for (size_t d = in.size(); d-- > 0;) {
    if (!reduced[d]) {
      ost[d] = s;
      s *= in[d];
    }
  }
  int64_t o = 0;
  for (size_t i = 0; i < n; ++i) {
    visit(i, static_cast<size_t>(o));
    for (size_t d = in.size(); d-- > 0;) {
      o += ost[d];
      if (++idx[d] < in[d]) break;
      o -= ost[d] * in[d];
      idx[d] = 0;
    }
  }
}

template <typename T>
void Reduce(NodeState* node, const std::vector<bool>& reduced) {
  const BuiltinOp op = node->op->op;
  T init = T(0);
  if (op == BuiltinOp::kReduceMax) init = std::numeric_limits<T>::lowest();
  if (op == BuiltinOp::kReduceMin) init = std::numeric_limits<T>::max();
  if (op == BuiltinOp::kReduceAll) init = T(1);
  T* y = node->t.Out<T>(0);
  for (size_t i = 0; i < node->t.out[0]->num_elements; ++i) y[i] = init;
  const T* x = node->t.In<T>(0);
  ForEachReduced(node->t.in[0]->shape, reduced, node->t.in[0]->num_elements,
                 [&](size_t i, size_t o) {
                   T& acc = y[o];
                   const T v = x[i];
                   if (op == BuiltinOp::kSum) acc = static_cast<T>(acc + v);
                   if (op == BuiltinOp::kReduceMax) acc = v > acc ? v : acc;
                   if (op == BuiltinOp::kReduceMin) acc = v < acc ? v : acc;
                   if (op == BuiltinOp::kReduceAny) acc = static_cast<T>(acc || v);
                   if (op == BuiltinOp::kReduceAll) acc = static_cast<T>(acc && v);
                 });
}

// int8 SUM with an output scale or zero point other than the input's: LiteRT's
// QuantizedMeanOrSum(compute_sum): int32 sums of the stored values, then, in float,
// round(sum * (in_scale / out_scale) - in_zp * (in_scale / out_scale) * count) + out_zp, clamped
// to int8 as LiteRT's builtin kernel does (its reference kernel fails on these models).
void SumInt8Rescaled(NodeState* node, const std::vector<bool>& reduced) {
  const std::vector<int32_t>& in = node->t.in[0]->shape;
  const size_t n_out = node->t.out[0]->num_elements;
  std::vector<int32_t> sums(n_out, 0);
  size_t count = 1;
  for (size_t d = 0; d < in.size(); ++d) {
    if (reduced[d]) count *= static_cast<size_t>(in[d]);
  }
  const int8_t* x = node->t.In<int8_t>(0);
  ForEachReduced(in, reduced, node->t.in[0]->num_elements,
                 [&](size_t i, size_t o) { sums[o] += x[i]; });
  const float scale = node->t.in[0]->quant.scale[0] / node->t.out[0]->quant.scale[0];
  const float bias = static_cast<float>(-node->in_zp) * scale * static_cast<float>(count);
  int8_t* y = node->t.Out<int8_t>(0);
  for (size_t i = 0; i < n_out; ++i) {
    const double r = std::round(static_cast<float>(sums[i]) * scale + bias);
    const int32_t v =
        (r >= -2147483648.0 && r < 2147483648.0 ? static_cast<int32_t>(r) : INT32_MIN);
    const int64_t q = static_cast<int64_t>(v) + node->out_zp;
    y[i] = static_cast<int8_t>(std::min<int64_t>(127, std::max<int64_t>(-128, q)));
  }
}

Status EvalReduce(NodeState* node) {
  std::vector<bool> reduced;
  std::vector<int32_t> out;
  EMBER_RETURN_IF_ERROR(ReduceGeometry(*node, &reduced, &out));
  if (node->sum_rescale) {
    SumInt8Rescaled(node, reduced);
    return Status::OK();
  }
  switch (node->t.in[0]->type) {
    case TensorType::kFloat32:
      Reduce<float>(node, reduced);
      break;
    case TensorType::kInt32:
      Reduce<int32_t>(node, reduced);
      break;
    case TensorType::kInt64:
      Reduce<int64_t>(node, reduced);
      break;
    case TensorType::kInt8:
      Reduce<int8_t>(node, reduced);
      break;
    default:
      Reduce<bool>(node, reduced);
  }
  return Status::OK();
}

// ---- PAD / PADV2 ----
Status PadGeometry(const NodeState& node, std::vector<int64_t>* before) {
  const TensorDef& in = *node.t.in[0];
  std::vector<int64_t> p;
  if (!ReadIndex(node, 1, &p) || p.size() != 2 * in.shape.size()) {
    return errors::InvalidArgument(node.what + ": paddings must be a [rank, 2] int tensor");
  }
  std::vector<int32_t> want;
  before->clear();
  for (size_t d = 0; d < in.shape.size(); ++d) {
    if (p[2 * d] < 0 || p[2 * d + 1] < 0) {
      return errors::InvalidArgument(node.what + ": negative padding");
    }
    before->push_back(p[2 * d]);
    want.push_back(static_cast<int32_t>(in.shape[d] + p[2 * d] + p[2 * d + 1]));
  }
  return CheckShape(node, *node.t.out[0], want, "output");
}

Status EvalPad(NodeState* node) {
  std::vector<int64_t> before;
  EMBER_RETURN_IF_ERROR(PadGeometry(*node, &before));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  const size_t elem = TensorTypeSize(in.type);
  // The pad value: constant_values (PADV2), else 0, or the zero point for quantized tensors.
  uint8_t fill[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (node->t.in.size() > 2 && node->t.in[2] != nullptr) {
    std::memcpy(fill, node->t.in_data[2], elem);
  } else if (!out.quant.zero_point.empty()) {
    const int8_t zp = static_cast<int8_t>(out.quant.zero_point[0]);
    std::memcpy(fill, &zp, 1);
  }
  uint8_t* y = node->t.out_data[0];
  const size_t r = in.shape.size();
  if (r == 0) {
    std::memcpy(y, node->t.in_data[0], elem);
    return Status::OK();
  }
  std::vector<int64_t> ost(r, 1);
  for (size_t d = r; d-- > 1;) ost[d - 1] = ost[d] * out.shape[d];
  // The output is written once, in rows over its dims [k, r): the input's trailing dims that are
  // not padded lie contiguous in the output too, together with the last padded dim's extent (an
  // [H, W, C] image padded in H and W: rows of W * C), so a row inside the input is the fill
  // before, one copied run, the fill after; other rows are all fill. (Filling everything first,
  // then copying a run per pixel, took 70 us on 56x56x64 floats.)
  size_t k = r - 1;
  while (k > 0 && out.shape[k] == in.shape[k]) --k;
  int64_t inner = 1;
  for (size_t d = k; d < r; ++d) inner *= in.shape[d];
  const int64_t row_len = k == 0 ? static_cast<int64_t>(out.num_elements) : ost[k - 1];
  const int64_t lead = before[k] * ost[k];
  const int64_t rows = row_len == 0 ? 0 : static_cast<int64_t>(out.num_elements) / row_len;
  const uint8_t* src = node->t.in_data[0];
  std::vector<int64_t> idx(k, 0);  // the output row's index over dims [0, k)
  for (int64_t row = 0; row < rows; ++row) {
    uint8_t* dst = y + static_cast<size_t>(row * row_len) * elem;
    bool inside = in.num_elements > 0;
    for (size_t d = 0; d < k; ++d) {
      inside = inside && idx[d] >= before[d] && idx[d] < before[d] + in.shape[d];
    }
    if (inside) {
      index_ops::FillElements(dst, fill, elem, static_cast<size_t>(lead));
      std::memcpy(dst + static_cast<size_t>(lead) * elem, src, static_cast<size_t>(inner) * elem);
      src += static_cast<size_t>(inner) * elem;
      index_ops::FillElements(dst + static_cast<size_t>(lead + inner) * elem, fill, elem,
                              static_cast<size_t>(row_len - lead - inner));
    } else {
      index_ops::FillElements(dst, fill, elem, static_cast<size_t>(row_len));
    }
    for (size_t d = k; d-- > 0;) {
      if (++idx[d] < out.shape[d]) break;
      idx[d] = 0;
    }
  }
  return Status::OK();
}

bool ConstInput(const NodeState& node, size_t i) {
  return i < node.t.in.size() && node.t.in[i] != nullptr && node.t.in[i]->data != nullptr;
}

}  // namespace

// SHAPE: the input's dims (as they are when the operator runs: a run-time shape where the
// input has one) as INT32 or INT64 values.
Status EvalShape(NodeState* node) {
  const bool run_time = !node->t.in_dims.empty() && node->t.in_dims[0] != nullptr;
  const std::vector<int32_t>& dims = run_time ? *node->t.in_dims[0] : node->t.in[0]->shape;
  if (node->t.out[0]->type == TensorType::kInt64) {
    int64_t* y = node->t.Out<int64_t>(0);
    for (size_t d = 0; d < dims.size(); ++d) y[d] = dims[d];
  } else {
    int32_t* y = node->t.Out<int32_t>(0);
    for (size_t d = 0; d < dims.size(); ++d) y[d] = dims[d];
  }
  return Status::OK();
}

Status PrepareShape(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 1, 1));
  const TensorDef& x = *node->t.in[0];
  const TensorDef& y = *node->t.out[0];
  const TensorType want = static_cast<TensorType>(node->op->options.shape_out_type);
  if (want != TensorType::kInt32 && want != TensorType::kInt64) {
    return errors::InvalidArgument(node->what + ": out_type " + TensorTypeName(want) +
                                   " is not INT32 or INT64");
  }
  EMBER_RETURN_IF_ERROR(CheckType(*node, y, want, "output"));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, y, {static_cast<int32_t>(x.shape.size())}, "output"));
  node->eval = EvalShape;
  return Status::OK();
}

Status PrepareShapeCopy(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 1, 2));
  const TensorDef& x = *node->t.in[0];
  const TensorDef& y = *node->t.out[0];
  EMBER_RETURN_IF_ERROR(SameType(*node, x, y));
  if (x.num_elements != y.num_elements) {
    return errors::InvalidArgument(node->what + ": output '" + y.name + "' has " +
                                   std::to_string(y.num_elements) + " elements, input " +
                                   std::to_string(x.num_elements));
  }
  node->eval = EvalCopy;
  return Status::OK();
}

Status PrepareSplit(NodeState* node) {
  const BuiltinOp op = node->op->op;
  const size_t want_in = op == BuiltinOp::kSplit ? 2 : op == BuiltinOp::kSplitV ? 3 : 1;
  if (node->t.in.size() != want_in || node->t.out.empty()) {
    return errors::InvalidArgument(node->what + ": expects " + std::to_string(want_in) +
                                   " inputs and at least one output");
  }
  for (const TensorDef* t : node->t.in) {
    if (t == nullptr) return errors::InvalidArgument(node->what + ": missing input");
  }
  const TensorDef& in = *node->t.in[op == BuiltinOp::kSplit ? 1 : 0];
  if (op != BuiltinOp::kUnpack && !ConstInput(*node, op == BuiltinOp::kSplit ? 0 : 2)) {
    return errors::Unimplemented(node->what + ": a run-time split axis is not supported");
  }
  int64_t axis = 0;
  EMBER_RETURN_IF_ERROR(SplitAxis(*node, &axis));
  int64_t total = 0;
  for (const TensorDef* o : node->t.out) {
    EMBER_RETURN_IF_ERROR(SameType(*node, in, *o));
    std::vector<int32_t> want = in.shape;
    if (op == BuiltinOp::kUnpack) {
      want.erase(want.begin() + axis);
      total += 1;
    } else {
      if (o->shape.size() != in.shape.size()) return CheckShape(*node, *o, in.shape, "output");
      want[static_cast<size_t>(axis)] = o->shape[static_cast<size_t>(axis)];
      total += want[static_cast<size_t>(axis)];
    }
    EMBER_RETURN_IF_ERROR(CheckShape(*node, *o, want, "output"));
  }
  if (total != in.shape[static_cast<size_t>(axis)]) {
    return errors::InvalidArgument(node->what + ": outputs cover " + std::to_string(total) +
                                   " of " + std::to_string(in.shape[static_cast<size_t>(axis)]) +
                                   " entries along the axis");
  }
  node->eval = EvalSplit;
  return Status::OK();
}

Status PreparePack(NodeState* node) {
  if (node->t.in.empty() || node->t.out.size() != 1) {
    return errors::InvalidArgument(node->what + ": expects inputs and one output");
  }
  const TensorDef& first = *node->t.in[0];
  for (const TensorDef* t : node->t.in) {
    if (t == nullptr || t->shape != first.shape || t->type != first.type) {
      return errors::InvalidArgument(node->what + ": inputs must share shape and type");
    }
  }
  EMBER_RETURN_IF_ERROR(SameType(*node, first, *node->t.out[0]));
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  const int64_t axis =
      node->op->options.axis < 0 ? node->op->options.axis + rank + 1 : node->op->options.axis;
  if (axis < 0 || axis > rank) return errors::InvalidArgument(node->what + ": axis out of range");
  std::vector<int32_t> want = first.shape;
  want.insert(want.begin() + axis, static_cast<int32_t>(node->t.in.size()));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], want, "output"));
  node->eval = EvalPack;
  return Status::OK();
}

Status PrepareTile(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  const TensorDef& in = *node->t.in[0];
  EMBER_RETURN_IF_ERROR(SameType(*node, in, *node->t.out[0]));
  if (node->t.out[0]->shape.size() != in.shape.size()) {
    return CheckShape(*node, *node->t.out[0], in.shape, "output");
  }
  if (ConstInput(*node, 1)) {
    std::vector<int64_t> m;
    if (!ReadIndex(*node, 1, &m) || m.size() != in.shape.size()) {
      return errors::InvalidArgument(node->what + ": bad multiples");
    }
    std::vector<int32_t> want = in.shape;
    for (size_t d = 0; d < want.size(); ++d) want[d] = static_cast<int32_t>(want[d] * m[d]);
    EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], want, "output"));
  }
  node->eval = EvalTile;
  return Status::OK();
}

Status PreparePad(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 3));
  const TensorDef& in = *node->t.in[0];
  EMBER_RETURN_IF_ERROR(SameType(*node, in, *node->t.out[0]));
  if (TensorTypeSize(in.type) > 8 || in.shape.size() > 8) return misc::Unsupported(*node, in.type);
  if (node->t.in.size() > 2 &&
      (node->t.in[2]->type != in.type || node->t.in[2]->num_elements != 1)) {
    return errors::InvalidArgument(node->what + ": constant_values must be one " +
                                   TensorTypeName(in.type));
  }
  if (ConstInput(*node, 1)) {
    std::vector<int64_t> before;
    EMBER_RETURN_IF_ERROR(PadGeometry(*node, &before));
  }
  node->eval = EvalPad;
  return Status::OK();
}

namespace {
// One scale and zero point, the same on the input and the output.
Status CheckSameQuant(const NodeState& node) {
  const TensorDef& x = *node.t.in[0];
  const TensorDef& y = *node.t.out[0];
  EMBER_RETURN_IF_ERROR(NeedQuant(node, x, "input"));
  EMBER_RETURN_IF_ERROR(NeedQuant(node, y, "output"));
  if (x.quant.scale.size() != 1 || y.quant.scale.size() != 1 || x.quant.scale != y.quant.scale ||
      x.quant.zero_point != y.quant.zero_point) {
    return errors::InvalidArgument(node.what + ": int8 output '" + y.name +
                                   "' must have the input's single scale and zero point");
  }
  return Status::OK();
}
}  // namespace

Status PrepareReduce(NodeState* node) {
  EMBER_RETURN_IF_ERROR(misc::CheckIo(*node, 2, 2));
  const TensorType t = node->t.in[0]->type;
  const bool logical =
      node->op->op == BuiltinOp::kReduceAny || node->op->op == BuiltinOp::kReduceAll;
  const bool ok =
      logical ? t == TensorType::kBool
              : (t == TensorType::kFloat32 || t == TensorType::kInt32 || t == TensorType::kInt64);
  // int8 REDUCE_MAX / REDUCE_MIN compare the raw values: LiteRT's reduce.cc requires the
  // output's scale and zero point to equal the input's.
  const bool int8_extreme = t == TensorType::kInt8 && (node->op->op == BuiltinOp::kReduceMax ||
                                                       node->op->op == BuiltinOp::kReduceMin);
  // int8 SUM: with the input's quantization, the stored values summed in int8 (wrapping), as
  // LiteRT's generic kernel; else rescaled (SumInt8Rescaled).
  const bool int8_sum = t == TensorType::kInt8 && node->op->op == BuiltinOp::kSum;
  if (!ok && !int8_extreme && !int8_sum) return misc::Unsupported(*node, t);
  EMBER_RETURN_IF_ERROR(CheckType(*node, *node->t.out[0], t, "output"));
  if (int8_extreme) EMBER_RETURN_IF_ERROR(CheckSameQuant(*node));
  if (int8_sum) {
    const TensorDef& x = *node->t.in[0];
    const TensorDef& y = *node->t.out[0];
    EMBER_RETURN_IF_ERROR(NeedQuant(*node, x, "input"));
    EMBER_RETURN_IF_ERROR(NeedQuant(*node, y, "output"));
    if (x.quant.scale.size() != 1 || y.quant.scale.size() != 1 || !(y.quant.scale[0] > 0)) {
      return errors::InvalidArgument(node->what + ": int8 input and output need one scale each");
    }
    node->in_zp = static_cast<int32_t>(x.quant.zero_point[0]);
    node->out_zp = static_cast<int32_t>(y.quant.zero_point[0]);
    node->sum_rescale =
        x.quant.scale[0] != y.quant.scale[0] || x.quant.zero_point[0] != y.quant.zero_point[0];
  }
  if (ConstInput(*node, 1)) {
    std::vector<bool> reduced;
    std::vector<int32_t> out;
    EMBER_RETURN_IF_ERROR(ReduceGeometry(*node, &reduced, &out));
    EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], out, "output"));
  }
  node->eval = EvalReduce;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
