// What the lite tests share for models written by hand: builders of a tensor (with constant
// data or none) and an operator, loading a model through the writer, and matching an error.
#ifndef EMBER_TESTS_LITE_LITE_TEST_UTIL_H_
#define EMBER_TESTS_LITE_LITE_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/schema.h"
#include "ember/lite/writer.h"
#include "ember/status.h"

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

// `t` with one scale and zero point (per-tensor quantization).
inline TensorDef Quantized(TensorDef t, float scale, int64_t zero_point) {
  t.quant.scale = {scale};
  t.quant.zero_point = {zero_point};
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

// A model written with WriteModel, loaded, and its interpreter made and allocated; `status` is
// the first step that failed (OK when all did).
struct Run {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Interpreter> interp;
  ember::Status status;
};

// Loads the bytes WriteModel gave (or its error).
inline Run LoadWritten(const StatusOr<std::vector<uint8_t>>& bytes) {
  Run r;
  if (!bytes.ok()) {
    r.status = bytes.status();
    return r;
  }
  auto model = Model::FromBytes(*bytes);
  if (!model.ok()) {
    r.status = model.status();
    return r;
  }
  r.model = *model;
  auto interp = Interpreter::Create(r.model);
  if (!interp.ok()) {
    r.status = interp.status();
    return r;
  }
  r.interp = std::move(*interp);
  r.status = r.interp->AllocateTensors();
  return r;
}

// One subgraph, or several (the first is the model's main subgraph; WHILE and IF name others).
inline Run Load(const SubGraphDef& g) { return LoadWritten(WriteModel(g)); }
inline Run Load(const std::vector<SubGraphDef>& graphs) { return LoadWritten(WriteModel(graphs)); }

// True when `s` failed with `what` in its message; else says what it got, on stderr.
inline bool Contains(const ember::Status& s, const std::string& what) {
  if (s.ok() || s.message().find(what) == std::string::npos) {
    std::fprintf(stderr, "  expected an error with '%s', got: %s\n", what.c_str(),
                 s.ToString().c_str());
    return false;
  }
  return true;
}

}  // namespace testing
}  // namespace lite
}  // namespace ember

#endif  // EMBER_TESTS_LITE_LITE_TEST_UTIL_H_
