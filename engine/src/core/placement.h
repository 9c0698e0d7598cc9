// Placement: which device runs a node, and its kernel there (TensorFlow's placer, reduced).
//
// A node runs where its NodeDef.device asks ("/device:GPU:0"), else on the session's default
// device, else on the CPU. When the device is absent or has no kernel for the op, the node
// falls back to the CPU if soft placement allows it (always for the default device: it means
// "every op that can"); otherwise placement fails naming the node, as TensorFlow's does.
#ifndef EMBER_CORE_PLACEMENT_H_
#define EMBER_CORE_PLACEMENT_H_

#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/graph.h"
#include "core/op_kernel.h"

namespace ember {

struct PlacementOptions {
  int num_cpu_devices = 1;
  std::string default_device;  // for nodes that name none; empty: the CPU
  bool allow_soft_placement = false;
};

struct Placement {
  Device* device = nullptr;
  std::unique_ptr<OpKernel> kernel;
  std::vector<int> host_memory_inputs;  // inputs the kernel reads from host memory
};

Status PlaceNode(const Node& node, const PlacementOptions& options, Placement* out);

}  // namespace ember

#endif  // EMBER_CORE_PLACEMENT_H_
