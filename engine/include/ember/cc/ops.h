// Op wrappers for ember's C++ client API; each just emits a NodeDef into the Scope.
// Names and attrs follow TensorFlow's generated ops (tensorflow/cc/ops/*_ops.h).
#ifndef EMBER_CC_OPS_H_
#define EMBER_CC_OPS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ember/cc/scope.h"

namespace ember {

// TensorFlow-style names so client code reads like TensorFlow's.
constexpr DataType DT_FLOAT = DataType::kFloat;
constexpr DataType DT_DOUBLE = DataType::kDouble;
constexpr DataType DT_INT32 = DataType::kInt32;
constexpr DataType DT_INT64 = DataType::kInt64;
constexpr DataType DT_INT8 = DataType::kInt8;
constexpr DataType DT_UINT8 = DataType::kUInt8;
constexpr DataType DT_BOOL = DataType::kBool;

namespace ops {

// A generic node: op type, inputs, attrs. Returns the node (outputs via Output(op, i, type)).
Operation BuildOp(const Scope& scope, const std::string& op, const std::vector<Input>& inputs,
                  std::map<std::string, AttrValue> attrs = {});
// Output `index` of a node built with BuildOp.
Output OutputOf(const Scope& scope, const Operation& op, int index = 0);

AttrValue TypeAttr(DataType t);
AttrValue BoolAttr(bool b);
AttrValue IntAttr(int64_t i);
AttrValue StringAttr(const std::string& s);
AttrValue IntListAttr(const std::vector<int64_t>& v);
AttrValue ShapeAttr(const PartialShape& s);

Output Const(const Scope& scope, const Input::Initializer& value);
// Shape unknown (any) when `shape` is omitted.
Output Placeholder(const Scope& scope, DataType dtype);
Output Placeholder(const Scope& scope, DataType dtype, const PartialShape& shape);
Output PlaceholderWithDefault(const Scope& scope, const Input& value, const PartialShape& shape);
Output Identity(const Scope& scope, const Input& x);
Operation NoOp(const Scope& scope);

Output Add(const Scope& scope, const Input& x, const Input& y);
Output AddV2(const Scope& scope, const Input& x, const Input& y);
Output Sub(const Scope& scope, const Input& x, const Input& y);
Output Mul(const Scope& scope, const Input& x, const Input& y);
Output RealDiv(const Scope& scope, const Input& x, const Input& y);
Output Maximum(const Scope& scope, const Input& x, const Input& y);
Output Minimum(const Scope& scope, const Input& x, const Input& y);
Output Neg(const Scope& scope, const Input& x);
Output Square(const Scope& scope, const Input& x);
Output Sqrt(const Scope& scope, const Input& x);
Output Exp(const Scope& scope, const Input& x);
Output Tanh(const Scope& scope, const Input& x);
Output Sigmoid(const Scope& scope, const Input& x);
Output Relu(const Scope& scope, const Input& x);
Output Relu6(const Scope& scope, const Input& x);
Output Softmax(const Scope& scope, const Input& x);

struct MatMulAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
};
Output MatMul(const Scope& scope, const Input& a, const Input& b, const MatMulAttrs& attrs = {});
// BatchMatMulV2 (broadcasting batch dims), as TensorFlow's ops::BatchMatMulV2.
Output BatchMatMul(const Scope& scope, const Input& x, const Input& y);
Output BiasAdd(const Scope& scope, const Input& value, const Input& bias);
Output Reshape(const Scope& scope, const Input& tensor, const Input& shape);
Output Cast(const Scope& scope, const Input& x, DataType dst);

// VariableV2 and Assign (reference variables, state kept per session).
Output Variable(const Scope& scope, const PartialShape& shape, DataType dtype);
Output Assign(const Scope& scope, const Input& ref, const Input& value);

}  // namespace ops
}  // namespace ember

#endif  // EMBER_CC_OPS_H_
