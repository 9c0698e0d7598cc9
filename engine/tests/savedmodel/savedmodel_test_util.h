// What the functional While and If tests share: builders of the nodes and attrs of hand-written
// GraphDefs and FunctionDefs (the lowerings' own TypeValue/TypeList are in function_inline.h).
#ifndef EMBER_TESTS_SAVEDMODEL_SAVEDMODEL_TEST_UTIL_H_
#define EMBER_TESTS_SAVEDMODEL_SAVEDMODEL_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "ember/graph_def.h"
#include "savedmodel/function_inline.h"

namespace ember {
namespace testing {

inline AttrValue Func(const std::string& name) {
  AttrValue v;
  v.kind = AttrValue::Kind::kFunc;
  v.s = name;
  return v;
}

// A node with attr T.
inline NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                    DataType t) {
  NodeDef n;
  n.name = name;
  n.op = op;
  n.input = std::move(inputs);
  n.attr["T"] = TypeValue(t);
  return n;
}

inline NodeDef Const(const std::string& name, Tensor value) {
  NodeDef n;
  n.name = name;
  n.op = "Const";
  n.attr["dtype"] = TypeValue(value.dtype());
  n.attr["value"].kind = AttrValue::Kind::kTensor;
  n.attr["value"].tensor = std::move(value);
  return n;
}

}  // namespace testing
}  // namespace ember

#endif  // EMBER_TESTS_SAVEDMODEL_SAVEDMODEL_TEST_UTIL_H_
