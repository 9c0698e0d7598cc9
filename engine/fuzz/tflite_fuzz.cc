// libFuzzer target: load + validate + allocate + invoke an untrusted .tflite model.
// Build and run with engine/fuzz/tflite_fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ember/lite/interpreter.h"
#include "ember/lite/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = ember::lite::Model::FromBuffer(data, size);
  if (!model.ok()) return 0;
  // Keep each input fast: the work of an operator is bounded by its tensors' sizes.
  for (const auto& t : (*model)->graph().tensors) {
    if (t.num_elements > (1u << 14)) return 0;
  }
  ember::lite::InterpreterOptions options;
  options.max_arena_bytes = size_t{16} << 20;
  auto interp = ember::lite::Interpreter::Create(*model, options);
  if (!interp.ok()) return 0;
  if (!(*interp)->AllocateTensors().ok()) return 0;
  for (size_t i = 0; i < (*interp)->inputs_size(); ++i) {
    ember::lite::TensorView t = (*interp)->input(i);
    for (size_t b = 0; b < t.bytes; ++b) t.data[b] = static_cast<uint8_t>(b * 37 + i);
    if (t.type() == ember::lite::TensorType::kFloat32) {
      float* f = t.as<float>();
      for (size_t k = 0; k < t.bytes / 4; ++k)
        f[k] = static_cast<float>(static_cast<int>(k % 17) - 8) * 0.25f;
    }
  }
  (void)(*interp)->Invoke();
  for (size_t i = 0; i < (*interp)->outputs_size(); ++i) {
    ember::lite::TensorView t = (*interp)->output(i);
    volatile uint8_t sink = 0;
    for (size_t b = 0; b < t.bytes; ++b) sink = static_cast<uint8_t>(sink ^ t.data[b]);
  }
  return 0;
}
