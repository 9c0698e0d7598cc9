// Builders the lite tests share for models written by hand: a tensor (with constant data or
// none) and an operator.
#ifndef EMBER_TESTS_LITE_LITE_TEST_UTIL_H_
#define EMBER_TESTS_LITE_LITE_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ember/lite/schema.h"

namespace ember {
namespace lite {
namespace testing {

inline TensorDef MakeTensor(const std::string& name, TensorType type, std::vector<int32_t> shape,
                            const void* data = nullptr, size_t bytes = 0) {
  TensorDef t;
  t.name = name;
  t.type = type;
  t.shape = std::move(shape);
  t.data = static_cast<const uint8_t*>(data);
  t.data_size = bytes;
  return t;
}

inline OperatorDef MakeOp(BuiltinOp code, std::vector<int32_t> inputs,
                          std::vector<int32_t> outputs) {
  OperatorDef op;
  op.op = code;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  return op;
}

}  // namespace testing
}  // namespace lite
}  // namespace ember

#endif  // EMBER_TESTS_LITE_LITE_TEST_UTIL_H_
