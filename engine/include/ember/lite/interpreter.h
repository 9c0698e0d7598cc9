// Runs the main subgraph of a validated .tflite model (and the subgraphs its WHILE and IF
// operators run).
//
//   auto model = ember::lite::Model::FromFile("m.tflite");
//   auto interp = ember::lite::Interpreter::Create(*model);
//   (*interp)->AllocateTensors();  fill (*interp)->input(0).data;  (*interp)->Invoke();
#ifndef EMBER_LITE_INTERPRETER_H_
#define EMBER_LITE_INTERPRETER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/lite/model.h"
#include "ember/lite/schema.h"
#include "ember/status.h"

namespace ember {
namespace lite {

// A view of one tensor of a running interpreter.
struct TensorView {
  const TensorDef* def = nullptr;
  uint8_t* data = nullptr;  // null until AllocateTensors (or for constants: read-only)
  size_t bytes = 0;
  const std::string& name() const { return def->name; }
  TensorType type() const { return def->type; }
  const std::vector<int32_t>& shape() const { return def->shape; }
  float scale() const { return def->quant.scale.empty() ? 0.0f : def->quant.scale[0]; }
  int32_t zero_point() const {
    return def->quant.zero_point.empty() ? 0 : static_cast<int32_t>(def->quant.zero_point[0]);
  }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
};

struct InterpreterOptions {
  // AllocateTensors fails (instead of allocating) when activations need more than this.
  size_t max_arena_bytes = size_t{1} << 31;
  // Threads that run the heavy kernels (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED), the
  // calling thread included, as LiteRT's Interpreter::SetNumThreads: -1 lets ember choose (one
  // thread, as LiteRT's CPU kernels and XNNPACK do), 0 and 1 run on the calling thread alone.
  // Values below -1 or above kMaxThreads make Create fail. Results do not depend on it: int8
  // outputs are identical for every count, float outputs too (each output is summed in the
  // same order whichever thread computes it).
  int num_threads = -1;
  static constexpr int kMaxThreads = 256;
  // Every tensor keeps memory of its own, so intermediate values can be read after Invoke
  // (calibration, debugging), as LiteRT's experimental_preserve_all_tensors. By default
  // tensors whose lives do not overlap share memory: after Invoke only the graph's inputs and
  // outputs (and constants) are sure to hold their values.
  bool preserve_all_tensors = false;
};

class ThreadPool;
struct SubgraphState;

class Interpreter {
 public:
  ~Interpreter();
  static StatusOr<std::unique_ptr<Interpreter>> Create(std::shared_ptr<const Model> model,
                                                       InterpreterOptions options = {});

  // Checks every operator's inputs and outputs (types, shapes, quantization) and allocates
  // the activation arena, for the main subgraph and every subgraph that its WHILE/IF operators
  // run. Must succeed before Invoke.
  Status AllocateTensors();
  Status Invoke();

  size_t inputs_size() const { return model_->graph().inputs.size(); }
  size_t outputs_size() const { return model_->graph().outputs.size(); }
  TensorView input(size_t i) const;
  TensorView output(size_t i) const;
  TensorView tensor(int32_t index) const;
  // Index into inputs()/outputs() of the tensor with that name, or NOT_FOUND.
  StatusOr<size_t> InputIndex(const std::string& name) const;
  StatusOr<size_t> OutputIndex(const std::string& name) const;
  const Model& model() const { return *model_; }
  // Threads that Invoke uses (num_threads resolved: -1 and 0 give 1).
  int num_threads() const;

  // Per-operator wall time of the Invoke calls made while profiling is on (ember-benchmark
  // --profile), one entry per operator of the main subgraph in execution order (a WHILE or IF
  // counts once, with the subgraphs it ran). EnableProfiling (either way) clears
  // the counts; with it off Invoke reads no clock.
  struct OperatorTime {
    std::string label;  // "operator 3 (CONV_2D) -> [1, 48, 48, 16] int8"
    int64_t calls = 0;
    double total_us = 0;
  };
  void EnableProfiling(bool on);
  const std::vector<OperatorTime>& operator_times() const { return op_times_; }

  struct NodeState;

 private:
  Interpreter() = default;

  std::shared_ptr<const Model> model_;
  InterpreterOptions options_;
  // By subgraph index; [0] the main one, null for subgraphs that never run. Empty until
  // AllocateTensors.
  std::vector<std::unique_ptr<SubgraphState>> graphs_;
  std::unique_ptr<ThreadPool> pool_;
  bool allocated_ = false;
  bool profiling_ = false;
  std::vector<OperatorTime> op_times_;
};

}  // namespace lite
}  // namespace ember

#endif  // EMBER_LITE_INTERPRETER_H_
