// Graph: a validated GraphDef (name -> node, data edges, control edges, dtypes, devices).
#ifndef EMBER_CORE_GRAPH_H_
#define EMBER_CORE_GRAPH_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "core/op_kernel.h"
#include "ember/graph_def.h"
#include "ember/status.h"

namespace ember {

// "x:1" -> {"x", 1}; "x" -> {"x", 0}.
struct TensorId {
  std::string node;
  int index = 0;
  std::string ToString() const { return node + ":" + std::to_string(index); }
};
TensorId ParseTensorName(const std::string& name);

struct GraphOptions {
  int num_cpu_devices = 1;
  // When set, device placement is checked only for nodes a step actually runs.
  bool place_pruned_graph = false;
  // A node pinned to a device that is absent is accepted (it will run on the CPU).
  bool allow_soft_placement = false;
};

struct Node {
  NodeDef def;
  const OpDef* op = nullptr;
  std::vector<DataType> input_types;
  std::vector<DataType> output_types;
  struct Input {
    int node;
    int output;
  };
  std::vector<Input> inputs;  // data inputs, by input slot
  std::vector<int> control_inputs;
  const std::string& name() const { return def.name; }
};

class Graph {
 public:
  // Validates and builds; errors name the node (unknown op, bad input, dtype mismatch, cycle).
  static Status Build(const std::vector<NodeDef>& nodes, const GraphOptions& options, Graph* out);

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int i) const { return nodes_[static_cast<size_t>(i)]; }
  int FindNode(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }
  const GraphOptions& options() const { return options_; }

 private:
  std::vector<Node> nodes_;
  std::unordered_map<std::string, int> index_;
  GraphOptions options_;
};

// The flat output indices [*start, *start + *count) of output arg `arg` of `node` (an op with
// OpDef `op`): function bodies name tensors "node:arg:index", counting within the arg. An op
// with a single output arg also answers to any arg name (registries may name it differently).
Status OutputArgRange(const NodeDef& node, const OpDef& op, const std::string& arg, int* start,
                      int* count);

// Checks that `node`'s requested device exists (CPU 0..num_cpu_devices-1, or a registered
// device such as GPU:0), or that soft placement may move it to the CPU.
Status CheckDevice(const NodeDef& node, const GraphOptions& options);

// A dtype with reference-ness stripped (ember has no reference types at runtime).
inline bool TypesCompatible(DataType a, DataType b) { return a == b; }

}  // namespace ember

#endif  // EMBER_CORE_GRAPH_H_
