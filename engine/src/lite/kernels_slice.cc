// SLICE, REVERSE_V2, DYNAMIC_UPDATE_SLICE, and CONCATENATION of inputs whose shapes are set at
// run time: byte moves, so every type ember holds (float, integers, bool; int8/uint8 keep their
// input's quantization).
//
// SLICE follows LiteRT's kernel (lite/kernels/slice.cc): size -1 takes the rest of the
// dimension, other sizes must fit (begin + size <= dimension). With a constant size, or a
// constant begin and size, the output shape is static and checked at Prepare; otherwise (a
// Keras LSTM with return_sequences=True writes each step through SLICE + CONCATENATION) the
// shape is set at run time, in room for the whole input reserved by the arena plan, and only
// CONCATENATION may read it (subgraph.cc).
//
// DYNAMIC_UPDATE_SLICE (keras.ops.slice_update: Swin's attention mask) is a copy of the operand
// with the update written at start_indices, each start clamped into [0, dim - update dim] as
// LiteRT (and XLA) do.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "lite/kernels.h"

namespace ember {
namespace lite {
namespace {

constexpr int kMaxRank = 8;

bool IsConst(const TensorDef* t) { return t != nullptr && t->data != nullptr; }

Status CheckIndexVector(const NodeState& node, const TensorDef& t, size_t rank, const char* role) {
  if (t.type != TensorType::kInt32 && t.type != TensorType::kInt64) {
    return errors::Unimplemented(node.what + ": " + role + " '" + t.name + "' is " +
                                 TensorTypeName(t.type) + "; INT32 and INT64 are supported");
  }
  if (t.shape.size() != 1 || t.num_elements != rank) {
    return errors::InvalidArgument(node.what + ": " + role + " '" + t.name + "' has shape " +
                                   ShapeString(t.shape) + ", expected [" + std::to_string(rank) +
                                   "]");
  }
  return Status::OK();
}

// `inputs` present inputs (named in `names` for the message) and one output, and an input of
// rank at most kMaxRank.
Status CheckArity(const NodeState& node, size_t inputs, const char* names) {
  bool ok = node.t.in.size() == inputs && node.t.out.size() == 1;
  for (size_t i = 0; ok && i < inputs; ++i) ok = node.t.in[i] != nullptr;
  if (!ok) {
    return errors::InvalidArgument(node.what + ": expects " + std::to_string(inputs) + " inputs (" +
                                   names + ") and 1 output");
  }
  const size_t rank = node.t.in[0]->shape.size();
  if (rank > static_cast<size_t>(kMaxRank)) {
    return errors::Unimplemented(node.what + ": rank " + std::to_string(rank) + " exceeds " +
                                 std::to_string(kMaxRank));
  }
  return Status::OK();
}

int64_t IndexAt(const TensorDef& t, const uint8_t* data, size_t i) {
  if (t.type == TensorType::kInt64) {
    int64_t v;
    std::memcpy(&v, data + i * 8, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, data + i * 4, 4);
  return v;
}

Status SameTypeAndQuant(const NodeState& node, const TensorDef& in, const TensorDef& out) {
  EMBER_RETURN_IF_ERROR(CheckType(node, out, in.type, "output"));
  if (TensorTypeSize(in.type) == 0) {
    return errors::Unimplemented(node.what + ": type " + TensorTypeName(in.type) +
                                 " is not supported");
  }
  if (in.quant.scale != out.quant.scale || in.quant.zero_point != out.quant.zero_point) {
    return errors::Unimplemented(node.what + ": input '" + in.name + "' and output '" + out.name +
                                 "' are quantized differently (no rescaling here)");
  }
  return Status::OK();
}

// SLICE's begin and size for every dimension, resolved and checked as LiteRT's
// CalculateOutputShapeVector does (and a begin outside the dimension refused).
Status ResolveSlice(const NodeState& node, const uint8_t* begin_data, const uint8_t* size_data,
                    int64_t* begin, int64_t* size) {
  const TensorDef& in = *node.t.in[0];
  for (size_t d = 0; d < in.shape.size(); ++d) {
    const int64_t dim = in.shape[d];
    const int64_t b = IndexAt(*node.t.in[1], begin_data, d);
    int64_t s = IndexAt(*node.t.in[2], size_data, d);
    if (b < 0 || b > dim) {
      return errors::InvalidArgument(node.what + ": begin " + std::to_string(b) + " of dimension " +
                                     std::to_string(d) + " lies outside 0.." + std::to_string(dim));
    }
    if (s == -1) {
      s = dim - b;
    } else if (s < 0 || b + s > dim) {
      return errors::InvalidArgument(node.what + ": begin " + std::to_string(b) + " and size " +
                                     std::to_string(s) + " do not fit dimension " +
                                     std::to_string(d) + " of size " + std::to_string(dim));
    }
    begin[d] = b;
    size[d] = s;
  }
  return Status::OK();
}

Status EvalSlice(NodeState* node) {
  const TensorDef& in = *node->t.in[0];
  const size_t rank = in.shape.size();
  int64_t begin[kMaxRank], size[kMaxRank];
  EMBER_RETURN_IF_ERROR(ResolveSlice(*node, node->t.in_data[1], node->t.in_data[2], begin, size));
  if (node->dynamic_out) {
    std::vector<int32_t>& dims = *node->t.out_dims[0];  // sized at Prepare: no allocation
    for (size_t d = 0; d < rank; ++d) dims[d] = static_cast<int32_t>(size[d]);
  } else {
    for (size_t d = 0; d < rank; ++d) {
      if (size[d] != node->t.out[0]->shape[d]) {
        return errors::InvalidArgument(node->what + ": begin and size give dimension " +
                                       std::to_string(d) + " size " + std::to_string(size[d]) +
                                       " but output '" + node->t.out[0]->name + "' has shape " +
                                       ShapeString(node->t.out[0]->shape));
      }
    }
  }
  const size_t elem = TensorTypeSize(in.type);
  if (rank == 0) {
    std::memcpy(node->t.out_data[0], node->t.in_data[0], elem);
    return Status::OK();
  }
  for (size_t d = 0; d < rank; ++d) {
    if (size[d] == 0) return Status::OK();
  }
  // The trailing dimensions taken whole join the innermost run of contiguous bytes.
  int64_t stride[kMaxRank];
  stride[rank - 1] = static_cast<int64_t>(elem);
  for (size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * in.shape[d + 1];
  size_t last = rank - 1;
  while (last > 0 && begin[last] == 0 && size[last] == in.shape[last]) --last;
  const size_t run = static_cast<size_t>(size[last] * stride[last]);
  int64_t idx[kMaxRank] = {0};
  const uint8_t* src = node->t.in_data[0];
  uint8_t* dst = node->t.out_data[0];
  for (;;) {
    int64_t off = begin[last] * stride[last];
    for (size_t d = 0; d < last; ++d) off += (begin[d] + idx[d]) * stride[d];
    std::memcpy(dst, src + off, run);
    dst += run;
    size_t d = last;
    while (d > 0) {
      --d;
      if (++idx[d] < size[d]) break;
      idx[d] = 0;
      if (d == 0) return Status::OK();
    }
    if (last == 0) return Status::OK();
  }
}

Status EvalDynamicUpdateSlice(NodeState* node) {
  const TensorDef& in = *node->t.in[0];
  const TensorDef& update = *node->t.in[1];
  const size_t rank = in.shape.size();
  const size_t elem = TensorTypeSize(in.type);
  uint8_t* dst = node->t.out_data[0];
  if (dst != node->t.in_data[0]) std::memcpy(dst, node->t.in_data[0], in.num_elements * elem);
  if (update.num_elements == 0) return Status::OK();
  if (rank == 0) {
    std::memcpy(dst, node->t.in_data[1], elem);
    return Status::OK();
  }
  int64_t start[kMaxRank], stride[kMaxRank];
  for (size_t d = 0; d < rank; ++d) {
    start[d] = std::clamp<int64_t>(IndexAt(*node->t.in[2], node->t.in_data[2], d), 0,
                                   in.shape[d] - update.shape[d]);
  }
  stride[rank - 1] = static_cast<int64_t>(elem);
  for (size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * in.shape[d + 1];
  const size_t run = static_cast<size_t>(update.shape[rank - 1]) * elem;
  const uint8_t* src = node->t.in_data[1];
  int64_t idx[kMaxRank] = {0};
  for (size_t row = 0; row < update.num_elements / static_cast<size_t>(update.shape[rank - 1]);
       ++row) {
    int64_t off = start[rank - 1] * stride[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d) off += (start[d] + idx[d]) * stride[d];
    std::memcpy(dst + off, src + row * run, run);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < update.shape[d]) break;
      idx[d] = 0;
    }
  }
  return Status::OK();
}

Status EvalReverse(NodeState* node) {
  const TensorDef& in = *node->t.in[0];
  const TensorDef& axis = *node->t.in[1];
  const int rank = static_cast<int>(in.shape.size());
  bool flip[kMaxRank] = {false};
  for (size_t i = 0; i < axis.num_elements; ++i) {
    int64_t a = IndexAt(axis, node->t.in_data[1], i);
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) {
      return errors::InvalidArgument(node->what + ": axis " +
                                     std::to_string(IndexAt(axis, node->t.in_data[1], i)) +
                                     " is out of range for rank " + std::to_string(rank));
    }
    flip[a] = true;
  }
  const size_t elem = TensorTypeSize(in.type);
  if (in.num_elements == 0) return Status::OK();
  // Dimensions after the last reversed one are copied as one block.
  int last = rank - 1;
  while (last >= 0 && !flip[last]) --last;
  if (last < 0) {
    std::memcpy(node->t.out_data[0], node->t.in_data[0], in.num_elements * elem);
    return Status::OK();
  }
  size_t block = elem;
  for (int d = last + 1; d < rank; ++d) block *= static_cast<size_t>(in.shape[d]);
  int64_t stride[kMaxRank];
  stride[last] = static_cast<int64_t>(block);
  for (int d = last; d-- > 0;) stride[d] = stride[d + 1] * in.shape[d + 1];
  int64_t idx[kMaxRank] = {0};
  const uint8_t* src = node->t.in_data[0];
  uint8_t* dst = node->t.out_data[0];
  for (;;) {
    int64_t off = 0;
    for (int d = 0; d <= last; ++d) {
      off += (flip[d] ? in.shape[d] - 1 - idx[d] : idx[d]) * stride[d];
    }
    std::memcpy(dst, src + off, block);
    dst += block;
    int d = last;
    while (d >= 0 && ++idx[d] == in.shape[d]) idx[d--] = 0;
    if (d < 0) return Status::OK();
  }
}

Status EvalConcatDynamic(NodeState* node) {
  const TensorDef& out = *node->t.out[0];
  const size_t rank = out.shape.size();
  const size_t axis = static_cast<size_t>(node->op->options.axis < 0
                                              ? node->op->options.axis + static_cast<int>(rank)
                                              : node->op->options.axis);
  int64_t along = 0;
  for (size_t i = 0; i < node->t.in.size(); ++i) {
    const std::vector<int32_t>& dims =
        node->t.in_dims[i] != nullptr ? *node->t.in_dims[i] : node->t.in[i]->shape;
    bool fits = dims.size() == rank;
    for (size_t d = 0; fits && d < rank; ++d) fits = d == axis || dims[d] == out.shape[d];
    if (!fits) {
      return errors::InvalidArgument(node->what + ": input " + std::to_string(i) +
                                     " has run-time shape " + ShapeString(dims) +
                                     ", which does not concatenate into output shape " +
                                     ShapeString(out.shape) + " on axis " + std::to_string(axis));
    }
    along += dims[axis];
  }
  if (along != out.shape[axis]) {
    return errors::InvalidArgument(node->what + ": the inputs' run-time shapes add up to " +
                                   std::to_string(along) + " along axis " + std::to_string(axis) +
                                   ", but output '" + out.name + "' has shape " +
                                   ShapeString(out.shape));
  }
  size_t outer = 1, inner = TensorTypeSize(out.type);
  for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(out.shape[d]);
  for (size_t d = axis + 1; d < rank; ++d) inner *= static_cast<size_t>(out.shape[d]);
  uint8_t* dst = node->t.out_data[0];
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < node->t.in.size(); ++i) {
      const std::vector<int32_t>& dims =
          node->t.in_dims[i] != nullptr ? *node->t.in_dims[i] : node->t.in[i]->shape;
      const size_t chunk = static_cast<size_t>(dims[axis]) * inner;
      std::memcpy(dst, node->t.in_data[i] + o * chunk, chunk);
      dst += chunk;
    }
  }
  return Status::OK();
}

}  // namespace

Status PrepareSlice(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckArity(*node, 3, "input, begin, size"));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& out = *node->t.out[0];
  const size_t rank = in.shape.size();
  EMBER_RETURN_IF_ERROR(SameTypeAndQuant(*node, in, out));
  EMBER_RETURN_IF_ERROR(CheckIndexVector(*node, *node->t.in[1], rank, "begin"));
  EMBER_RETURN_IF_ERROR(CheckIndexVector(*node, *node->t.in[2], rank, "size"));
  bool static_shape = IsConst(node->t.in[1]) && IsConst(node->t.in[2]);
  std::vector<int32_t> want(rank, 0);
  if (static_shape) {
    int64_t begin[kMaxRank], size[kMaxRank];
    EMBER_RETURN_IF_ERROR(
        ResolveSlice(*node, node->t.in[1]->data, node->t.in[2]->data, begin, size));
    for (size_t d = 0; d < rank; ++d) want[d] = static_cast<int32_t>(size[d]);
  } else if (IsConst(node->t.in[2])) {
    // A constant size without -1 fixes the shape whatever the begin.
    static_shape = true;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t s = IndexAt(*node->t.in[2], node->t.in[2]->data, d);
      if (s < 0 || s > in.shape[d]) static_shape = false;
      want[d] = static_cast<int32_t>(s);
    }
  }
  if (static_shape) {
    EMBER_RETURN_IF_ERROR(CheckShape(*node, out, want, "output"));
  } else {
    node->dynamic_out = true;
    node->t.out_dims[0]->assign(rank, 0);
  }
  node->eval = EvalSlice;
  return Status::OK();
}

Status PrepareReverse(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckArity(*node, 2, "input, axis"));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& axis = *node->t.in[1];
  const size_t rank = in.shape.size();
  EMBER_RETURN_IF_ERROR(SameTypeAndQuant(*node, in, *node->t.out[0]));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], in.shape, "output"));
  if (axis.type != TensorType::kInt32 && axis.type != TensorType::kInt64) {
    return errors::Unimplemented(node->what + ": axis '" + axis.name + "' is " +
                                 TensorTypeName(axis.type) + "; INT32 and INT64 are supported");
  }
  if (axis.shape.size() != 1 || axis.num_elements > rank) {
    return errors::InvalidArgument(node->what + ": axis '" + axis.name + "' has shape " +
                                   ShapeString(axis.shape) + ", expected at most " +
                                   std::to_string(rank) + " axes in one dimension");
  }
  node->eval = EvalReverse;
  if (IsConst(&axis)) {
    for (size_t i = 0; i < axis.num_elements; ++i) {
      const int64_t a = IndexAt(axis, axis.data, i);
      if (a < -static_cast<int64_t>(rank) || a >= static_cast<int64_t>(rank)) {
        return errors::InvalidArgument(node->what + ": axis " + std::to_string(a) +
                                       " is out of range for rank " + std::to_string(rank));
      }
    }
  }
  return Status::OK();
}

Status PrepareDynamicUpdateSlice(NodeState* node) {
  EMBER_RETURN_IF_ERROR(CheckArity(*node, 3, "operand, update, start_indices"));
  const TensorDef& in = *node->t.in[0];
  const TensorDef& update = *node->t.in[1];
  const size_t rank = in.shape.size();
  EMBER_RETURN_IF_ERROR(SameTypeAndQuant(*node, in, *node->t.out[0]));
  EMBER_RETURN_IF_ERROR(CheckShape(*node, *node->t.out[0], in.shape, "output"));
  EMBER_RETURN_IF_ERROR(CheckType(*node, update, in.type, "update"));
  if (update.shape.size() != rank) {
    return errors::InvalidArgument(node->what + ": update '" + update.name + "' has shape " +
                                   ShapeString(update.shape) + ", not the rank of operand '" +
                                   in.name + "' " + ShapeString(in.shape));
  }
  for (size_t d = 0; d < rank; ++d) {
    if (update.shape[d] > in.shape[d]) {
      return errors::InvalidArgument(node->what + ": update '" + update.name + "' " +
                                     ShapeString(update.shape) + " does not fit in operand '" +
                                     in.name + "' " + ShapeString(in.shape));
    }
  }
  EMBER_RETURN_IF_ERROR(CheckIndexVector(*node, *node->t.in[2], rank, "start_indices"));
  node->eval = EvalDynamicUpdateSlice;
  return Status::OK();
}

Status PrepareConcatDynamic(NodeState* node) {
  if (node->t.out.size() != 1 || node->t.in.empty()) {
    return errors::InvalidArgument(node->what + ": expects inputs and 1 output");
  }
  const TensorDef& out = *node->t.out[0];
  const int rank = static_cast<int>(out.shape.size());
  const int axis = node->op->options.axis;
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument(node->what + ": axis " + std::to_string(axis) +
                                   " is out of range for rank " + std::to_string(rank));
  }
  if (node->op->options.activation != Activation::kNone) {
    return errors::Unimplemented(node->what +
                                 ": fused activations on CONCATENATION are not supported");
  }
  for (size_t i = 0; i < node->t.in.size(); ++i) {
    const TensorDef* t = node->t.in[i];
    if (t == nullptr) {
      return errors::InvalidArgument(node->what + ": input " + std::to_string(i) + " is missing");
    }
    EMBER_RETURN_IF_ERROR(SameTypeAndQuant(*node, *t, out));
    const size_t in_rank =
        node->t.in_dims[i] != nullptr ? node->t.in_dims[i]->size() : t->shape.size();
    if (in_rank != out.shape.size()) {
      return errors::InvalidArgument(node->what + ": input '" + t->name + "' has rank " +
                                     std::to_string(in_rank) + ", output '" + out.name + "' " +
                                     std::to_string(rank));
    }
  }
  node->eval = EvalConcatDynamic;
  return Status::OK();
}

}  // namespace lite
}  // namespace ember
