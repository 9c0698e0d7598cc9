#include "ember/cc/ops.h"

namespace ember {
namespace ops {

AttrValue TypeAttr(DataType t) {
  AttrValue v;
  v.kind = AttrValue::Kind::kType;
  v.type = t;
  return v;
}
AttrValue BoolAttr(bool b) {
  AttrValue v;
  v.kind = AttrValue::Kind::kB;
  v.b = b;
  return v;
}
AttrValue IntAttr(int64_t i) {
  AttrValue v;
  v.kind = AttrValue::Kind::kI;
  v.i = i;
  return v;
}
AttrValue StringAttr(const std::string& s) {
  AttrValue v;
  v.kind = AttrValue::Kind::kS;
  v.s = s;
  return v;
}
AttrValue IntListAttr(const std::vector<int64_t>& l) {
  AttrValue v;
  v.kind = AttrValue::Kind::kList;
  v.list.i = l;
  return v;
}
AttrValue ShapeAttr(const PartialShape& s) {
  AttrValue v;
  v.kind = AttrValue::Kind::kShape;
  v.shape = s;
  return v;
}

Operation BuildOp(const Scope& scope, const std::string& op, const std::vector<Input>& inputs,
                  std::map<std::string, AttrValue> attrs) {
  NodeDef n;
  n.op = op;
  n.attr = std::move(attrs);
  for (const Input& in : inputs) {
    Output o = scope.AsOutput(in);
    n.input.push_back(o.name());
  }
  return scope.AddNode(std::move(n), op);
}

Output OutputOf(const Scope& scope, const Operation& op, int index) {
  std::vector<DataType> types = scope.OutputTypes(op.name());
  DataType t = index < static_cast<int>(types.size()) ? types[static_cast<size_t>(index)]
                                                      : DataType::kInvalid;
  return Output(op, index, t);
}

namespace {
// Ops whose inputs share the type attr T, taken from the first input.
Output TypedOp(const Scope& scope, const std::string& op, const std::vector<Input>& inputs,
               std::map<std::string, AttrValue> attrs = {}) {
  std::vector<Input> resolved;
  DataType t = DataType::kInvalid;
  for (const Input& in : inputs) {
    Output o = scope.AsOutput(in);
    if (t == DataType::kInvalid) t = o.type();
    resolved.push_back(o);
  }
  attrs["T"] = TypeAttr(t);
  return OutputOf(scope, BuildOp(scope, op, resolved, std::move(attrs)));
}
}  // namespace

Output Const(const Scope& scope, const Input::Initializer& value) {
  Scope s = scope;
  NodeDef n;
  if (!value.status.ok()) {
    scope.UpdateStatus(value.status);
    return Output();
  }
  n.op = "Const";
  AttrValue v;
  v.kind = AttrValue::Kind::kTensor;
  v.tensor = value.tensor;
  n.attr["value"] = v;
  n.attr["dtype"] = TypeAttr(value.tensor.dtype());
  return Output(scope.AddNode(std::move(n), "Const"), 0, value.tensor.dtype());
}

Output Placeholder(const Scope& scope, DataType dtype) {
  PartialShape unknown;
  unknown.unknown_rank = true;
  return Placeholder(scope, dtype, unknown);
}

Output Placeholder(const Scope& scope, DataType dtype, const PartialShape& shape) {
  return OutputOf(scope, BuildOp(scope, "Placeholder", {},
                                 {{"dtype", TypeAttr(dtype)}, {"shape", ShapeAttr(shape)}}));
}

Output PlaceholderWithDefault(const Scope& scope, const Input& value, const PartialShape& shape) {
  Output v = scope.AsOutput(value);
  return OutputOf(scope, BuildOp(scope, "PlaceholderWithDefault", {v},
                                 {{"dtype", TypeAttr(v.type())}, {"shape", ShapeAttr(shape)}}));
}

Output Identity(const Scope& scope, const Input& x) { return TypedOp(scope, "Identity", {x}); }
Operation NoOp(const Scope& scope) { return BuildOp(scope, "NoOp", {}); }

Output Add(const Scope& s, const Input& x, const Input& y) { return TypedOp(s, "Add", {x, y}); }
Output AddV2(const Scope& s, const Input& x, const Input& y) { return TypedOp(s, "AddV2", {x, y}); }
Output Sub(const Scope& s, const Input& x, const Input& y) { return TypedOp(s, "Sub", {x, y}); }
Output Mul(const Scope& s, const Input& x, const Input& y) { return TypedOp(s, "Mul", {x, y}); }
Output RealDiv(const Scope& s, const Input& x, const Input& y) {
  return TypedOp(s, "RealDiv", {x, y});
}
Output Maximum(const Scope& s, const Input& x, const Input& y) {
  return TypedOp(s, "Maximum", {x, y});
}
Output Minimum(const Scope& s, const Input& x, const Input& y) {
  return TypedOp(s, "Minimum", {x, y});
}
Output Neg(const Scope& s, const Input& x) { return TypedOp(s, "Neg", {x}); }
Output Square(const Scope& s, const Input& x) { return TypedOp(s, "Square", {x}); }
Output Sqrt(const Scope& s, const Input& x) { return TypedOp(s, "Sqrt", {x}); }
Output Exp(const Scope& s, const Input& x) { return TypedOp(s, "Exp", {x}); }
Output Tanh(const Scope& s, const Input& x) { return TypedOp(s, "Tanh", {x}); }
Output Sigmoid(const Scope& s, const Input& x) { return TypedOp(s, "Sigmoid", {x}); }
Output Relu(const Scope& s, const Input& x) { return TypedOp(s, "Relu", {x}); }
Output Relu6(const Scope& s, const Input& x) { return TypedOp(s, "Relu6", {x}); }
Output Softmax(const Scope& s, const Input& x) { return TypedOp(s, "Softmax", {x}); }

Output MatMul(const Scope& s, const Input& a, const Input& b, const MatMulAttrs& attrs) {
  return TypedOp(
      s, "MatMul", {a, b},
      {{"transpose_a", BoolAttr(attrs.transpose_a)}, {"transpose_b", BoolAttr(attrs.transpose_b)}});
}

Output BatchMatMul(const Scope& s, const Input& x, const Input& y) {
  return TypedOp(s, "BatchMatMulV2", {x, y},
                 {{"adj_x", BoolAttr(false)}, {"adj_y", BoolAttr(false)}});
}

Output BiasAdd(const Scope& s, const Input& value, const Input& bias) {
  return TypedOp(s, "BiasAdd", {value, bias}, {{"data_format", StringAttr("NHWC")}});
}

Output Reshape(const Scope& s, const Input& tensor, const Input& shape) {
  Output t = s.AsOutput(tensor);
  Output sh = s.AsOutput(shape);
  return OutputOf(s, BuildOp(s, "Reshape", {t, sh},
                             {{"T", TypeAttr(t.type())}, {"Tshape", TypeAttr(sh.type())}}));
}

Output Cast(const Scope& s, const Input& x, DataType dst) {
  Output v = s.AsOutput(x);
  return OutputOf(s, BuildOp(s, "Cast", {v},
                             {{"SrcT", TypeAttr(v.type())},
                              {"DstT", TypeAttr(dst)},
                              {"Truncate", BoolAttr(false)}}));
}

Output Variable(const Scope& s, const PartialShape& shape, DataType dtype) {
  return OutputOf(s, BuildOp(s, "VariableV2", {},
                             {{"shape", ShapeAttr(shape)},
                              {"dtype", TypeAttr(dtype)},
                              {"container", StringAttr("")},
                              {"shared_name", StringAttr("")}}));
}

Output Assign(const Scope& s, const Input& ref, const Input& value) {
  return TypedOp(s, "Assign", {ref, value},
                 {{"validate_shape", BoolAttr(true)}, {"use_locking", BoolAttr(true)}});
}

}  // namespace ops
}  // namespace ember
