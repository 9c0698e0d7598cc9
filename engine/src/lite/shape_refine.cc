// Shapes the converter wrote as placeholders. With a dynamic batch (shape_signature -1), a Keras
// Dense on a sequence ([batch, 16, 32] -> 64 units) becomes SHAPE -> GATHER -> REDUCE_PROD ->
// PACK -> RESHAPE -> FULLY_CONNECTED -> RESHAPE, and the converter, not knowing batch * 16,
// writes [1, 1] for the first RESHAPE's output (signature [-1, -1]) and [1, 64] for the
// FULLY_CONNECTED's. LiteRT resizes such tensors at run time; ember's shapes are fixed before
// the arena is planned, so here, once per subgraph, the small integer tensors a shape
// computation passes along are evaluated from the static shapes, and every tensor whose
// signature leaves a dimension open gets the shape its operator gives it: a RESHAPE's from the
// shape it is handed, and the operators after it from their inputs' refined shapes. A tensor is
// only ever given a shape its signature allows; operators this pass does not know keep the
// model's shapes, and their own Prepare then names any mismatch.
//
// The integer operators whose outputs are all known this way are folded: their outputs become
// constants, so the operators that need a constant (TRANSPOSE_CONV's output_shape, which a
// Conv2DTranspose on a dynamic batch computes from SHAPE and PACK) get one, and they do not run
// at each Invoke. SHAPE reads the static shapes, as it did at run time; it is not folded for a
// tensor whose shape is only known at run time (after a SLICE with a run-time begin or size, or
// a loop body's input with an open dimension), where Prepare still refuses it.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "lite/kernels.h"
#include "lite/kernels_index.h"

namespace ember {
namespace lite {

namespace {

using Dims = std::vector<int32_t>;
using Values = std::vector<int64_t>;

// Integer tensors longer than this are not shape computations.
constexpr size_t kMaxValues = 64;

bool IsIndexType(TensorType t) { return t == TensorType::kInt32 || t == TensorType::kInt64; }

std::optional<int64_t> Product(const Dims& d) {
  int64_t n = 1;
  for (int32_t x : d) {
    if (x < 0 || (x > 0 && n > (int64_t{1} << 40) / x)) return std::nullopt;
    n *= x;
  }
  return n;
}

std::optional<Dims> ToDims(const Values& v) {
  Dims d;
  for (int64_t x : v) {
    if (x < -1 || x > INT32_MAX) return std::nullopt;
    d.push_back(static_cast<int32_t>(x));
  }
  return d;
}

// numpy broadcasting of two shapes.
std::optional<Dims> Broadcast(const Dims& a, const Dims& b) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int32_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int32_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

bool IsUnaryShaped(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::kRelu:
    case BuiltinOp::kRelu6:
    case BuiltinOp::kLogistic:
    case BuiltinOp::kTanh:
    case BuiltinOp::kGelu:
    case BuiltinOp::kHardSwish:
    case BuiltinOp::kLeakyRelu:
    case BuiltinOp::kElu:
    case BuiltinOp::kExp:
    case BuiltinOp::kLog:
    case BuiltinOp::kSqrt:
    case BuiltinOp::kRsqrt:
    case BuiltinOp::kNeg:
    case BuiltinOp::kAbs:
    case BuiltinOp::kSquare:
    case BuiltinOp::kCast:
    case BuiltinOp::kQuantize:
    case BuiltinOp::kDequantize:
    case BuiltinOp::kSoftmax:
    case BuiltinOp::kLogSoftmax:
    case BuiltinOp::kL2Normalization:
    case BuiltinOp::kFloor:
    case BuiltinOp::kCeil:
    case BuiltinOp::kRound:
    case BuiltinOp::kSin:
    case BuiltinOp::kCos:
    case BuiltinOp::kSign:
    case BuiltinOp::kLogicalNot:
    case BuiltinOp::kCumsum:
      return true;
    default:
      return false;
  }
}

bool IsBroadcastBinary(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::kAdd:
    case BuiltinOp::kSub:
    case BuiltinOp::kMul:
    case BuiltinOp::kDiv:
    case BuiltinOp::kMaximum:
    case BuiltinOp::kMinimum:
    case BuiltinOp::kPow:
    case BuiltinOp::kSquaredDifference:
    case BuiltinOp::kFloorDiv:
    case BuiltinOp::kFloorMod:
    case BuiltinOp::kLess:
    case BuiltinOp::kLessEqual:
    case BuiltinOp::kGreater:
    case BuiltinOp::kGreaterEqual:
    case BuiltinOp::kEqual:
    case BuiltinOp::kNotEqual:
    case BuiltinOp::kLogicalAnd:
    case BuiltinOp::kLogicalOr:
    case BuiltinOp::kPrelu:
      return true;
    default:
      return false;
  }
}

bool IsReduce(BuiltinOp op) {
  return op == BuiltinOp::kMean || op == BuiltinOp::kSum || op == BuiltinOp::kReduceMax ||
         op == BuiltinOp::kReduceMin || op == BuiltinOp::kReduceProd ||
         op == BuiltinOp::kReduceAny || op == BuiltinOp::kReduceAll;
}

class Refiner {
 public:
  Refiner(const SubGraphDef& g, SubgraphState* state)
      : g_(g),
        state_(state),
        values_(g.tensors.size()),
        refined_(g.tensors.size(), 0),
        run_time_(g.tensors.size(), 0) {}

  void Run() {
    if (state_->index != 0) {
      for (int32_t in : g_.inputs) run_time_[Index(in)] = Open(in) ? 1 : 0;
    }
    for (size_t oi = 0; oi < g_.operators.size(); ++oi) {
      if (state_->folded_op[oi]) continue;
      const OperatorDef& op = g_.operators[oi];
      bool any_refined = false, any_run_time = false;
      for (int32_t in : op.inputs) {
        any_refined |= in >= 0 && refined_[Index(in)] != 0;
        any_run_time |= in >= 0 && run_time_[Index(in)] != 0;
      }
      if (any_run_time || RunTimeSlice(op)) {
        for (int32_t out : op.outputs) run_time_[Index(out)] = 1;
        continue;
      }
      const bool shape_from_values =
          (op.op == BuiltinOp::kReshape || op.op == BuiltinOp::kFill ||
           op.op == BuiltinOp::kBroadcastTo || op.op == BuiltinOp::kSpaceToBatchNd ||
           op.op == BuiltinOp::kBatchToSpaceNd) &&
          !op.outputs.empty() && Open(op.outputs[0]);
      if ((any_refined || shape_from_values) && op.outputs.size() == 1) {
        std::optional<Dims> dims = InferShape(op);
        if (dims) Refine(op.outputs[0], *dims);
      }
      EvaluateValues(op);
      Fold(oi);
    }
  }

 private:
  static size_t Index(int32_t t) { return static_cast<size_t>(t); }
  const TensorDef& Def(int32_t t) const { return *state_->defs[Index(t)]; }
  const Dims& Shape(int32_t t) const { return Def(t).shape; }

  // Whether the converter left any of the tensor's dimensions open.
  bool Open(int32_t t) const {
    const Dims& sig = Def(t).shape_signature;
    return std::find(sig.begin(), sig.end(), -1) != sig.end();
  }

  // The value of a small integer tensor known before any Invoke (a constant, or computed here
  // from static shapes), or null.
  const Values* Value(int32_t t) {
    if (t < 0) return nullptr;
    std::optional<Values>& v = values_[Index(t)];
    if (v) return &*v;
    const TensorDef& d = Def(t);
    if (d.data == nullptr || !IsIndexType(d.type) || d.num_elements > kMaxValues ||
        d.data_size < d.num_elements * TensorTypeSize(d.type)) {
      return nullptr;
    }
    v = index_ops::IndexValues(d.type, d.data, d.num_elements);
    return &*v;
  }

  // A SLICE whose begin or size is not known here: its output's shape is set at run time.
  bool RunTimeSlice(const OperatorDef& op) {
    if (op.op != BuiltinOp::kSlice) return false;
    for (size_t i = 1; i < op.inputs.size(); ++i) {
      if (Value(op.inputs[i]) == nullptr) return true;
    }
    return false;
  }

  // Makes the outputs of operator `oi` constants when every one of them is known, and the
  // operator's types are what its Prepare accepts (else it is left to say why): SHAPE's output
  // of its out_type, other operators' outputs of their first input's type (CAST aside).
  void Fold(size_t oi) {
    const OperatorDef& op = g_.operators[oi];
    if (op.inputs.empty() || op.inputs[0] < 0) return;
    const TensorType in_type = Def(op.inputs[0]).type;
    for (int32_t out : op.outputs) {
      if (out < 0) return;
      const TensorType t = Def(out).type;
      if (op.op == BuiltinOp::kShape) {
        if (static_cast<int8_t>(t) != op.options.shape_out_type || Def(out).shape.size() != 1) {
          return;
        }
      } else if (op.op != BuiltinOp::kCast && t != in_type) {
        return;
      }
    }
    for (int32_t out : op.outputs) {
      if (out < 0 || !values_[Index(out)] || Def(out).data != nullptr) return;
    }
    for (int32_t out : op.outputs) {
      const Values& v = *values_[Index(out)];
      auto bytes = std::make_unique<std::vector<int64_t>>(std::max<size_t>(1, v.size()));
      const bool wide = Def(out).type == TensorType::kInt64;
      for (size_t i = 0; i < v.size(); ++i) {
        if (wide) {
          (*bytes)[i] = v[i];
        } else {
          const int32_t x = static_cast<int32_t>(v[i]);
          std::memcpy(reinterpret_cast<uint8_t*>(bytes->data()) + 4 * i, &x, 4);
        }
      }
      auto def = std::make_unique<TensorDef>(Def(out));
      def->data = reinterpret_cast<const uint8_t*>(bytes->data());
      def->data_size = v.size() * (wide ? 8 : 4);
      state_->defs[Index(out)] = def.get();
      state_->folded_defs.push_back(std::move(def));
      state_->folded_ints.push_back(std::move(bytes));
    }
    state_->folded_op[oi] = 1;
  }

  // Gives tensor `t` the shape `dims` where its signature allows it.
  void Refine(int32_t t, const Dims& dims) {
    const TensorDef& d = Def(t);
    if (dims == d.shape || !Open(t) || d.data != nullptr) return;
    const Dims& sig = d.shape_signature;
    if (sig.size() != dims.size()) return;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0 || (sig[i] != -1 && sig[i] != dims[i])) return;
    }
    const std::optional<int64_t> n = Product(dims);
    if (!n) return;
    auto def = std::make_unique<TensorDef>(d);
    def->shape = dims;
    def->num_elements = static_cast<size_t>(*n);
    state_->defs[Index(t)] = def.get();
    state_->folded_defs.push_back(std::move(def));
    refined_[Index(t)] = 1;
  }

  // Axes of a reduction or an ALL-style list, made non-negative; nullopt if out of range.
  static std::optional<std::vector<bool>> AxesMask(const Values& axes, size_t rank) {
    std::vector<bool> mask(rank, false);
    for (int64_t a : axes) {
      const int64_t r = static_cast<int64_t>(rank);
      if (a < -r || a >= r) return std::nullopt;
      mask[static_cast<size_t>(a < 0 ? a + r : a)] = true;
    }
    return mask;
  }

  std::optional<Dims> InferShape(const OperatorDef& op) {
    const std::vector<int32_t>& in = op.inputs;
    if (in.empty() || in[0] < 0) return std::nullopt;
    const Dims& a = Shape(in[0]);
    if (IsUnaryShaped(op.op)) return a;
    if (IsBroadcastBinary(op.op) && in.size() == 2 && in[1] >= 0) return Broadcast(a, Shape(in[1]));
    switch (op.op) {
      case BuiltinOp::kSpaceToBatchNd:
      case BuiltinOp::kBatchToSpaceNd: {
        const Values* block = in.size() == 3 ? Value(in[1]) : nullptr;
        const Values* pads = in.size() == 3 ? Value(in[2]) : nullptr;
        if (block == nullptr || pads == nullptr) return std::nullopt;
        StatusOr<Dims> dims =
            SpaceBatchNdShape(op.op == BuiltinOp::kSpaceToBatchNd, a, *block, *pads);
        if (!dims.ok()) return std::nullopt;
        return std::move(dims).value();
      }
      case BuiltinOp::kConv2D:
      case BuiltinOp::kDepthwiseConv2D:
      case BuiltinOp::kAveragePool2D:
      case BuiltinOp::kMaxPool2D:
      case BuiltinOp::kResizeBilinear:
      case BuiltinOp::kResizeNearestNeighbor: {
        // NHWC: the batch follows the input's, the rest does not depend on it.
        Dims out = Def(op.outputs[0]).shape;
        if (out.size() != 4 || a.size() != 4) return std::nullopt;
        out[0] = a[0];
        return out;
      }
      case BuiltinOp::kPad:
      case BuiltinOp::kPadV2:
      case BuiltinOp::kMirrorPad: {
        const Values* pads = in.size() >= 2 ? Value(in[1]) : nullptr;
        if (pads == nullptr || pads->size() != 2 * a.size()) return std::nullopt;
        Dims out = a;
        for (size_t i = 0; i < a.size(); ++i) {
          const int64_t d = a[i] + (*pads)[2 * i] + (*pads)[2 * i + 1];
          if (d < 0 || d > INT32_MAX) return std::nullopt;
          out[i] = static_cast<int32_t>(d);
        }
        return out;
      }
      case BuiltinOp::kSelectV2:
        if (in.size() != 3 || in[1] < 0 || in[2] < 0) return std::nullopt;
        if (auto ab = Broadcast(a, Shape(in[1]))) return Broadcast(*ab, Shape(in[2]));
        return std::nullopt;
      case BuiltinOp::kReshape:
        return ReshapeTo(op);
      case BuiltinOp::kFill:  // the shape is input 0's value, input 1's for BROADCAST_TO
      case BuiltinOp::kBroadcastTo: {
        const size_t at = op.op == BuiltinOp::kFill ? 0 : 1;
        const Values* v = at < in.size() ? Value(in[at]) : nullptr;
        std::optional<Dims> dims = v != nullptr ? ToDims(*v) : std::nullopt;
        if (!dims || std::find(dims->begin(), dims->end(), -1) != dims->end()) return std::nullopt;
        return dims;
      }
      case BuiltinOp::kFullyConnected: {
        if (in.size() < 2 || in[1] < 0 || Shape(in[1]).size() != 2 || a.empty()) {
          return std::nullopt;
        }
        const int32_t units = Shape(in[1])[0], depth = Shape(in[1])[1];
        const std::optional<int64_t> n = Product(a);
        if (!n || depth <= 0 || *n % depth != 0) return std::nullopt;
        if (op.options.keep_num_dims) {
          if (a.back() != depth) return std::nullopt;
          Dims out = a;
          out.back() = units;
          return out;
        }
        return Dims{static_cast<int32_t>(*n / depth), units};
      }
      case BuiltinOp::kBatchMatMul: {
        if (in.size() != 2 || in[1] < 0) return std::nullopt;
        const Dims& b = Shape(in[1]);
        if (a.size() < 2 || b.size() < 2) return std::nullopt;
        const int32_t rows = op.options.adj_x ? a[a.size() - 1] : a[a.size() - 2];
        const int32_t cols = op.options.adj_y ? b[b.size() - 2] : b[b.size() - 1];
        std::optional<Dims> batch =
            Broadcast(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
        if (!batch) return std::nullopt;
        batch->push_back(rows);
        batch->push_back(cols);
        return batch;
      }
      case BuiltinOp::kTranspose: {
        const Values* perm = in.size() == 2 ? Value(in[1]) : nullptr;
        if (perm == nullptr || perm->size() != a.size()) return std::nullopt;
        Dims out;
        for (int64_t p : *perm) {
          if (p < 0 || p >= static_cast<int64_t>(a.size())) return std::nullopt;
          out.push_back(a[static_cast<size_t>(p)]);
        }
        return out;
      }
      case BuiltinOp::kConcatenation: {
        const int32_t rank = static_cast<int32_t>(a.size());
        int32_t axis = op.options.axis;
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank) return std::nullopt;
        Dims out = a;
        out[static_cast<size_t>(axis)] = 0;
        for (int32_t t : in) {
          if (t < 0 || Shape(t).size() != a.size()) return std::nullopt;
          out[static_cast<size_t>(axis)] += Shape(t)[static_cast<size_t>(axis)];
        }
        return out;
      }
      case BuiltinOp::kSqueeze: {
        Values dims(op.options.squeeze_dims.begin(), op.options.squeeze_dims.end());
        std::optional<std::vector<bool>> mask = AxesMask(dims, a.size());
        if (!mask) return std::nullopt;
        Dims out;
        for (size_t i = 0; i < a.size(); ++i) {
          const bool drop = dims.empty() ? a[i] == 1 : (*mask)[i];
          if (drop && a[i] != 1) return std::nullopt;
          if (!drop) out.push_back(a[i]);
        }
        return out;
      }
      case BuiltinOp::kExpandDims: {
        const Values* axis = in.size() == 2 ? Value(in[1]) : nullptr;
        if (axis == nullptr || axis->size() != 1) return std::nullopt;
        const int64_t r = static_cast<int64_t>(a.size()) + 1;
        int64_t at = (*axis)[0];
        if (at < -r || at >= r) return std::nullopt;
        if (at < 0) at += r;
        Dims out = a;
        out.insert(out.begin() + at, 1);
        return out;
      }
      default:
        break;
    }
    if (IsReduce(op.op)) {
      const Values* axes = in.size() == 2 ? Value(in[1]) : nullptr;
      if (axes == nullptr) return std::nullopt;
      std::optional<std::vector<bool>> mask = AxesMask(*axes, a.size());
      if (!mask) return std::nullopt;
      Dims out;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!(*mask)[i]) {
          out.push_back(a[i]);
        } else if (op.options.keep_dims) {
          out.push_back(1);
        }
      }
      return out;
    }
    return std::nullopt;
  }

  // A RESHAPE's output: the shape input when its value is known, else the options' new_shape;
  // one -1 takes what is left of the input's elements.
  std::optional<Dims> ReshapeTo(const OperatorDef& op) {
    std::optional<Dims> to;
    if (op.inputs.size() >= 2 && op.inputs[1] >= 0) {
      if (const Values* v = Value(op.inputs[1])) to = ToDims(*v);
    } else if (!op.options.new_shape.empty()) {
      to = op.options.new_shape;
    }
    if (!to) return std::nullopt;
    const std::optional<int64_t> total = Product(Shape(op.inputs[0]));
    if (!total) return std::nullopt;
    int64_t known = 1;
    int open = -1;
    for (size_t i = 0; i < to->size(); ++i) {
      if ((*to)[i] == -1) {
        if (open >= 0) return std::nullopt;
        open = static_cast<int>(i);
      } else {
        known *= (*to)[i];
      }
    }
    if (open >= 0) {
      if (known <= 0 || *total % known != 0 || *total / known > INT32_MAX) return std::nullopt;
      (*to)[static_cast<size_t>(open)] = static_cast<int32_t>(*total / known);
    } else if (known != *total) {
      return std::nullopt;
    }
    return to;
  }

  void SetValue(int32_t t, Values v) {
    if (t < 0 || !IsIndexType(Def(t).type) || v.size() != Def(t).num_elements) return;
    if (Def(t).type == TensorType::kInt32) {
      for (int64_t x : v) {
        if (x < INT32_MIN || x > INT32_MAX) return;
      }
    }
    values_[Index(t)] = std::move(v);
  }

  // Computes the outputs of the integer operators of a shape computation whose inputs are known.
  void EvaluateValues(const OperatorDef& op) {
    const std::vector<int32_t>& in = op.inputs;
    if (op.outputs.empty() || in.empty() || in[0] < 0) return;
    const int32_t out = op.outputs[0];
    if (op.op == BuiltinOp::kShape) {
      const Dims& s = Shape(in[0]);
      SetValue(out, Values(s.begin(), s.end()));
      return;
    }
    const Values* x = Value(in[0]);
    if (x == nullptr) return;
    switch (op.op) {
      case BuiltinOp::kCast:
      case BuiltinOp::kReshape:
      case BuiltinOp::kSqueeze:
      case BuiltinOp::kExpandDims:
        SetValue(out, *x);
        return;
      case BuiltinOp::kGather: {
        const Values* idx = in.size() == 2 ? Value(in[1]) : nullptr;
        if (idx == nullptr || Shape(in[0]).size() != 1 || op.options.batch_dims != 0 ||
            (op.options.axis != 0 && op.options.axis != -1)) {
          return;
        }
        Values v;
        for (int64_t i : *idx) {
          if (i < 0 || i >= static_cast<int64_t>(x->size())) return;
          v.push_back((*x)[static_cast<size_t>(i)]);
        }
        SetValue(out, std::move(v));
        return;
      }
      case BuiltinOp::kReduceProd:
      case BuiltinOp::kSum: {
        if (Shape(in[0]).size() != 1) return;
        int64_t r = op.op == BuiltinOp::kSum ? 0 : 1;
        for (int64_t e : *x) {
          if (op.op == BuiltinOp::kSum) {
            r += e;
          } else {
            if (e != 0 && (r > INT32_MAX / std::max<int64_t>(1, e < 0 ? -e : e))) return;
            r *= e;
          }
        }
        SetValue(out, {r});
        return;
      }
      case BuiltinOp::kConcatenation:
      case BuiltinOp::kPack: {
        // Along axis 0 both lay their inputs' values one after another.
        if (op.options.axis != 0 && !(op.op == BuiltinOp::kConcatenation && op.options.axis == -1 &&
                                      Shape(in[0]).size() == 1)) {
          return;
        }
        Values v;
        for (int32_t t : in) {
          const Values* y = Value(t);
          if (y == nullptr) return;
          v.insert(v.end(), y->begin(), y->end());
        }
        SetValue(out, std::move(v));
        return;
      }
      case BuiltinOp::kUnpack: {
        if (Shape(in[0]).size() != 1 || op.options.axis != 0 || op.outputs.size() != x->size()) {
          return;
        }
        for (size_t i = 0; i < x->size(); ++i) SetValue(op.outputs[i], {(*x)[i]});
        return;
      }
      case BuiltinOp::kStridedSlice:
        StridedSlice1D(op, *x);
        return;
      case BuiltinOp::kSlice: {
        const Values* begin = in.size() == 3 ? Value(in[1]) : nullptr;
        const Values* size = in.size() == 3 ? Value(in[2]) : nullptr;
        if (begin == nullptr || size == nullptr || begin->size() != 1 || size->size() != 1) return;
        const int64_t n = static_cast<int64_t>(x->size()), b = (*begin)[0];
        const int64_t e = (*size)[0] == -1 ? n : b + (*size)[0];
        if (b < 0 || e < b || e > n) return;
        SetValue(out, Values(x->begin() + b, x->begin() + e));
        return;
      }
      default:
        break;
    }
    if (in.size() != 2 || Shape(in[0]).size() > 1 || (in[1] >= 0 && Shape(in[1]).size() > 1))
      return;
    const Values* y = Value(in[1]);
    if (y == nullptr || op.options.activation != Activation::kNone ||
        (x->size() != y->size() && x->size() != 1 && y->size() != 1))
      return;
    const size_t n = std::max(x->size(), y->size());
    Values v(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t p = (*x)[x->size() == 1 ? 0 : i], q = (*y)[y->size() == 1 ? 0 : i];
      switch (op.op) {
        case BuiltinOp::kAdd:
          v[i] = p + q;
          break;
        case BuiltinOp::kSub:
          v[i] = p - q;
          break;
        case BuiltinOp::kMul:
          v[i] = p * q;
          break;
        case BuiltinOp::kMaximum:
          v[i] = std::max(p, q);
          break;
        case BuiltinOp::kMinimum:
          v[i] = std::min(p, q);
          break;
        case BuiltinOp::kFloorDiv:
          if (q == 0) return;
          v[i] = p / q - ((p % q != 0) && ((p < 0) != (q < 0)) ? 1 : 0);
          break;
        default:
          return;
      }
      if (v[i] > INT32_MAX || v[i] < INT32_MIN) return;
    }
    SetValue(out, std::move(v));
  }

  // STRIDED_SLICE of a 1-D value (a shape): begin, end and stride of one element each.
  void StridedSlice1D(const OperatorDef& op, const Values& x) {
    const std::vector<int32_t>& in = op.inputs;
    const Values* begin = in.size() == 4 ? Value(in[1]) : nullptr;
    const Values* end = in.size() == 4 ? Value(in[2]) : nullptr;
    const Values* stride = in.size() == 4 ? Value(in[3]) : nullptr;
    const OpOptions& o = op.options;
    if (begin == nullptr || end == nullptr || stride == nullptr || begin->size() != 1 ||
        end->size() != 1 || stride->size() != 1 || (*stride)[0] == 0 || o.ellipsis_mask != 0 ||
        o.new_axis_mask != 0 || o.offset || Shape(in[0]).size() != 1) {
      return;
    }
    const int64_t n = static_cast<int64_t>(x.size()), s = (*stride)[0];
    auto clamp = [&](int64_t i, bool masked, bool is_begin) {
      if (masked) return (s > 0) == is_begin ? (s > 0 ? int64_t{0} : n - 1) : (s > 0 ? n : -1);
      if (i < 0) i += n;
      return s > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
    };
    int64_t b = clamp((*begin)[0], (o.begin_mask & 1) != 0, true);
    if ((o.shrink_axis_mask & 1) != 0) {
      int64_t i = (*begin)[0] < 0 ? (*begin)[0] + n : (*begin)[0];
      if (i < 0 || i >= n) return;
      SetValue(op.outputs[0], {x[static_cast<size_t>(i)]});
      return;
    }
    const int64_t e = clamp((*end)[0], (o.end_mask & 1) != 0, false);
    Values v;
    for (; s > 0 ? b < e : b > e; b += s) v.push_back(x[static_cast<size_t>(b)]);
    SetValue(op.outputs[0], std::move(v));
  }

  const SubGraphDef& g_;
  SubgraphState* state_;
  std::vector<std::optional<Values>> values_;
  std::vector<char> refined_;
  std::vector<char> run_time_;  // per tensor: its shape is only known at run time
};

}  // namespace

void RefineShapes(const SubGraphDef& g, SubgraphState* state) { Refiner(g, state).Run(); }

}  // namespace lite
}  // namespace ember
