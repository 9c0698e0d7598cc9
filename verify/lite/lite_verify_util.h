// Shared by the verify/lite tests: run a model on stored inputs and compare its outputs with
// stored references (int8/int32 exactly, float within rtol).
#ifndef EMBER_VERIFY_LITE_LITE_VERIFY_UTIL_H_
#define EMBER_VERIFY_LITE_LITE_VERIFY_UTIL_H_

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"
#include "ember/lite/npy.h"

namespace verify_lite {

// "" on success, else what went wrong.
inline std::string RunAndCompare(std::shared_ptr<const ember::lite::Model> model,
                                 const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& expected, double rtol,
                                 double atol) {
  using namespace ember::lite;
  auto interp = Interpreter::Create(std::move(model));
  if (!interp.ok()) return interp.status().message();
  Interpreter& in = **interp;
  ember::Status s = in.AllocateTensors();
  if (!s.ok()) return s.message();
  if (inputs.size() != in.inputs_size()) return "wrong number of inputs";
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto arr = ReadNpy(inputs[i]);
    if (!arr.ok()) return arr.status().message();
    TensorView t = in.input(i);
    if (arr->data.size() != t.bytes) return "input " + std::to_string(i) + " size mismatch";
    std::memcpy(t.data, arr->data.data(), t.bytes);
  }
  s = in.Invoke();
  if (!s.ok()) return s.message();
  if (expected.size() != in.outputs_size()) return "wrong number of outputs";
  for (size_t o = 0; o < expected.size(); ++o) {
    auto exp = ReadNpy(expected[o]);
    if (!exp.ok()) return exp.status().message();
    TensorView t = in.output(o);
    if (exp->data.size() != t.bytes) return "output " + std::to_string(o) + " size mismatch";
    if (t.type() == TensorType::kFloat32) {
      const float* a = t.as<float>();
      const float* b = reinterpret_cast<const float*>(exp->data.data());
      for (size_t i = 0; i < t.bytes / 4; ++i) {
        if (!(std::fabs(a[i] - b[i]) <= rtol * std::fabs(b[i]) + atol)) {
          return "output " + std::to_string(o) + "[" + std::to_string(i) +
                 "] = " + std::to_string(a[i]) + ", reference " + std::to_string(b[i]);
        }
      }
    } else if (std::memcmp(t.data, exp->data.data(), t.bytes) != 0) {
      size_t i = 0;
      while (t.data[i] == exp->data[i]) ++i;
      return "output " + std::to_string(o) + " differs at byte " + std::to_string(i);
    }
  }
  return "";
}

}  // namespace verify_lite

#endif  // EMBER_VERIFY_LITE_LITE_VERIFY_UTIL_H_
